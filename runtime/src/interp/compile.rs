//! The interpreter's code: every node of a [`Program`] compiled once, at
//! load, to closures typed by what the node computes (a `bool`; an `int`,
//! `timestamp` or `duration` as an `i64`; a `decimal`; any [`Value`]),
//! chosen from the node's type and kind the way the JIT's translator
//! chooses Cranelift code. A closure calls its children's closures
//! directly, so on the paths rules spend their time on (input reads at
//! fixed offsets, constants, typed compares, `&&` and `||`, decimal
//! arithmetic, let memos, table membership by a string) an evaluation
//! neither matches on node kinds nor wraps intermediates in a `Value`.
//!
//! Nothing of the meaning lives here: every operator is the one in
//! [`crate::semantics`], and a node kind this file does not specialise
//! runs the generic walk (`walk.rs`), whose children are compiled code
//! again. A closure with children checks the stack first
//! ([`Frame::nested`]), so no expression can overflow it.

use std::cmp::Ordering;
use std::sync::Arc;

use ir::{BinaryOp, Builtin, CmpOp, RuleId, TypeId, TypeTable, UnaryOp};
use rust_decimal::Decimal;

use super::{Frame, Memo};
use crate::data::{RecordRef, Tag};
use crate::error::Fault;
use crate::program::{CmpKind, Node, NodeId, ReadKind};
use crate::semantics::decimal::{Midpoint, cmp as dec_cmp};
use crate::semantics::{ops, truthy};
use crate::value::Value;

type BoolCode = Arc<dyn for<'p, 'a> Fn(&mut Frame<'p, 'a>) -> Result<bool, Fault> + Send + Sync>;
type IntCode = Arc<dyn for<'p, 'a> Fn(&mut Frame<'p, 'a>) -> Result<i64, Fault> + Send + Sync>;
type DecCode = Arc<dyn for<'p, 'a> Fn(&mut Frame<'p, 'a>) -> Result<Decimal, Fault> + Send + Sync>;
type ValueCode = Arc<dyn for<'p, 'a> Fn(&mut Frame<'p, 'a>) -> Result<Value<'a>, Fault> + Send + Sync>;
type RecordCode =
    Arc<dyn for<'p, 'a> Fn(&mut Frame<'p, 'a>) -> Result<Option<RecordRef<'a>>, Fault> + Send + Sync>;

fn bool_code(
    f: impl for<'p, 'a> Fn(&mut Frame<'p, 'a>) -> Result<bool, Fault> + Send + Sync + 'static,
) -> BoolCode {
    Arc::new(f)
}

fn int_code(
    f: impl for<'p, 'a> Fn(&mut Frame<'p, 'a>) -> Result<i64, Fault> + Send + Sync + 'static,
) -> IntCode {
    Arc::new(f)
}

fn dec_code(
    f: impl for<'p, 'a> Fn(&mut Frame<'p, 'a>) -> Result<Decimal, Fault> + Send + Sync + 'static,
) -> DecCode {
    Arc::new(f)
}

fn value_code(
    f: impl for<'p, 'a> Fn(&mut Frame<'p, 'a>) -> Result<Value<'a>, Fault> + Send + Sync + 'static,
) -> ValueCode {
    Arc::new(f)
}

fn record_code(
    f: impl for<'p, 'a> Fn(&mut Frame<'p, 'a>) -> Result<Option<RecordRef<'a>>, Fault> + Send + Sync + 'static,
) -> RecordCode {
    Arc::new(f)
}

/// A program's compiled code: per node, its closure of each kind. A
/// node's closure of another type than its own converts its value the
/// way the generic walk did (`truthy` for a bool; zero for a number).
pub struct Code {
    values: Vec<ValueCode>,
    bools: Vec<BoolCode>,
    ints: Vec<IntCode>,
    decimals: Vec<DecCode>,
}

impl std::fmt::Debug for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Code({} nodes)", self.values.len())
    }
}

/// What a node computes, by its type.
#[derive(Clone, Copy)]
enum Class {
    Bool,
    /// `int`, `timestamp` or `duration`: an `i64` wrapped by this.
    Int(fn(i64) -> Value<'static>),
    Decimal,
    Other,
}

impl Class {
    fn of(ty: TypeId) -> Class {
        match ty {
            TypeTable::BOOL => Class::Bool,
            TypeTable::INT => Class::Int(Value::Int),
            TypeTable::TIMESTAMP => Class::Int(Value::Timestamp),
            TypeTable::DURATION => Class::Int(Value::Duration),
            TypeTable::DECIMAL => Class::Decimal,
            _ => Class::Other,
        }
    }
}

impl Code {
    /// Compiles every node; children come before their parents (the IR's
    /// order), so a node's closure takes its children's ready closures.
    pub fn new(contract: &ir::Contract, nodes: &[Node]) -> Code {
        let code = Code {
            values: Vec::with_capacity(nodes.len()),
            bools: Vec::with_capacity(nodes.len()),
            ints: Vec::with_capacity(nodes.len()),
            decimals: Vec::with_capacity(nodes.len()),
        };
        let mut builder = Builder { nodes, code };
        for (i, node) in nodes.iter().enumerate() {
            builder.add(i as NodeId, node, contract.exprs[i].ty);
        }
        builder.code
    }
}

/// Compiles nodes in order, each from its children's closures.
struct Builder<'n> {
    nodes: &'n [Node],
    code: Code,
}

impl Builder<'_> {
    /// Compiles node `id` of type `ty`.
    fn add(&mut self, id: NodeId, node: &Node, ty: TypeId) {
        let fallback = value_code(move |f| f.nested(|f| f.eval_node(id)));
        let value = match Class::of(ty) {
            Class::Bool => {
                let code = self.bool_of(id, node);
                let wrapped = code.clone();
                self.code.bools.push(code);
                value_code(move |f| wrapped(f).map(Value::Bool))
            }
            Class::Int(wrap) => match self.int_of(node) {
                Some(code) => {
                    let wrapped = code.clone();
                    self.code.ints.push(code);
                    value_code(move |f| wrapped(f).map(wrap))
                }
                None => fallback,
            },
            Class::Decimal => match self.dec_of(node) {
                Some(code) => {
                    let wrapped = code.clone();
                    self.code.decimals.push(code);
                    value_code(move |f| wrapped(f).map(Value::Decimal))
                }
                None => fallback,
            },
            Class::Other => self.value_of(node).unwrap_or(fallback),
        };
        let convert = value.clone();
        if self.code.bools.len() == id as usize {
            self.code.bools.push(bool_code(move |f| convert(f).map(|v| truthy(&v))));
        }
        let convert = value.clone();
        if self.code.ints.len() == id as usize {
            self.code.ints.push(int_code(move |f| match convert(f)? {
                Value::Int(i) | Value::Timestamp(i) | Value::Duration(i) => Ok(i),
                _ => Ok(0),
            }));
        }
        let convert = value.clone();
        if self.code.decimals.len() == id as usize {
            self.code.decimals.push(dec_code(move |f| match convert(f)? {
                Value::Decimal(d) => Ok(d),
                _ => Ok(Decimal::ZERO),
            }));
        }
        self.code.values.push(value);
    }

    /// A bool node. Every compare, `&&`, `||`, `matches`, membership and
    /// presence test is compiled here (the generic walk hands them back).
    fn bool_of(&self, id: NodeId, node: &Node) -> BoolCode {
        match *node {
            Node::Compare { op, kind, lhs, rhs } => self.compare(op, kind, lhs, rhs),
            Node::And(lhs, rhs) => {
                let (l, r) = (self.bool(lhs), self.bool(rhs));
                bool_code(move |f| f.nested(|f| Ok(l(f)? && r(f)?)))
            }
            Node::Or(lhs, rhs) => {
                let (l, r) = (self.bool(lhs), self.bool(rhs));
                bool_code(move |f| f.nested(|f| Ok(l(f)? || r(f)?)))
            }
            Node::Unary(UnaryOp::Not, arg) => {
                let arg = self.bool(arg);
                bool_code(move |f| f.nested(|f| Ok(!arg(f)?)))
            }
            Node::Input { offset, read: ReadKind::Bool } => {
                bool_code(move |f| Ok(f.input.slot(offset as usize).as_bool()))
            }
            Node::Const { slot, .. } if slot.tag() == Tag::Bool => {
                let b = slot.as_bool();
                bool_code(move |_| Ok(b))
            }
            Node::Let(l) => bool_code(move |f| match &f.scratch.lets[l as usize] {
                Memo::Done(Value::Bool(b)) => Ok(*b),
                _ => f.let_value(l).map(|v| truthy(&v)),
            }),
            Node::Rule(r) => bool_code(move |f| Ok(f.rule(RuleId(r)).unwrap_or(false))),
            Node::Field { base, offset, read: ReadKind::Bool } => {
                let base = self.record(base);
                bool_code(move |f| Ok(base(f)?.is_some_and(|r| r.slot(offset as usize).as_bool())))
            }
            Node::Matches { subject, regex } => {
                let subject = self.value(subject);
                bool_code(move |f| {
                    f.nested(|f| {
                        let subject = subject(f)?;
                        f.tick(crate::budget::regex_cost(subject.as_str().len()))?;
                        Ok(f.p.regexes[regex as usize].is_match(subject.as_str()))
                    })
                })
            }
            Node::TableHas { table, key } => match self.input_str(key) {
                Some(offset) => {
                    bool_code(move |f| Ok(f.p.tables[table as usize].row_str(f.input.str(offset)).is_some()))
                }
                None => {
                    let key = self.value(key);
                    bool_code(move |f| f.nested(|f| Ok(f.p.tables[table as usize].row(&key(f)?).is_some())))
                }
            },
            Node::Present(arg) => {
                let arg = self.value(arg);
                bool_code(move |f| f.nested(|f| Ok(!arg(f)?.is_absent())))
            }
            _ => bool_code(move |f| f.nested(|f| f.eval_node(id)).map(|v| truthy(&v))),
        }
    }

    /// A compare, by how its operands compare.
    fn compare(&self, op: CmpOp, kind: CmpKind, lhs: NodeId, rhs: NodeId) -> BoolCode {
        match kind {
            CmpKind::Int | CmpKind::Timestamp | CmpKind::Duration => {
                let (l, r) = (self.int(lhs), self.int(rhs));
                bool_code(move |f| f.nested(|f| Ok(op.holds(l(f)?.cmp(&r(f)?)))))
            }
            CmpKind::Decimal => {
                let (l, r) = (self.dec(lhs), self.dec(rhs));
                bool_code(move |f| f.nested(|f| Ok(op.holds(dec_cmp(l(f)?, r(f)?)))))
            }
            _ => {
                let (l, r) = (self.value(lhs), self.value(rhs));
                bool_code(move |f| {
                    f.nested(|f| {
                        let (l, r) = (l(f)?, r(f)?);
                        f.charge(super::walk::work(&l) + super::walk::work(&r));
                        Ok(op.holds(f.compare(kind, &l, &r)))
                    })
                })
            }
        }
    }

    /// An `int`, `timestamp` or `duration` node, when its kind has a typed
    /// path.
    fn int_of(&self, node: &Node) -> Option<IntCode> {
        Some(match *node {
            Node::Input { offset, read: ReadKind::Int | ReadKind::Timestamp | ReadKind::Duration } => {
                int_code(move |f| Ok(f.input.slot(offset as usize).as_int()))
            }
            Node::Const { slot, .. } if matches!(slot.tag(), Tag::Int | Tag::Timestamp | Tag::Duration) => {
                let i = slot.as_int();
                int_code(move |_| Ok(i))
            }
            Node::Let(l) => int_code(move |f| match &f.scratch.lets[l as usize] {
                Memo::Done(Value::Int(i) | Value::Timestamp(i) | Value::Duration(i)) => Ok(*i),
                _ => match f.let_value(l)? {
                    Value::Int(i) | Value::Timestamp(i) | Value::Duration(i) => Ok(i),
                    _ => Ok(0),
                },
            }),
            Node::Field { base, offset, read: ReadKind::Int | ReadKind::Timestamp | ReadKind::Duration } => {
                let base = self.record(base);
                int_code(move |f| Ok(base(f)?.map_or(0, |r| r.slot(offset as usize).as_int())))
            }
            Node::Call { func, ref args, extremum_of: Some(TypeTable::INT) } => {
                let args: Vec<IntCode> = args.iter().map(|a| self.int(*a)).collect();
                let wins = extreme(func);
                int_code(move |f| {
                    f.nested(|f| {
                        let mut best = args[0](f)?;
                        for arg in &args[1..] {
                            let candidate = arg(f)?;
                            if candidate.cmp(&best) == wins {
                                best = candidate;
                            }
                        }
                        Ok(best)
                    })
                })
            }
            _ => return None,
        })
    }

    /// A `decimal` node, when its kind has a typed path.
    fn dec_of(&self, node: &Node) -> Option<DecCode> {
        Some(match *node {
            Node::Input { offset, read: ReadKind::Decimal } => {
                dec_code(move |f| Ok(f.input.slot(offset as usize).as_decimal()))
            }
            Node::Const { slot, .. } if slot.tag() == Tag::Decimal => {
                let d = slot.as_decimal();
                dec_code(move |_| Ok(d))
            }
            Node::Let(l) => dec_code(move |f| match &f.scratch.lets[l as usize] {
                Memo::Done(Value::Decimal(d)) => Ok(*d),
                _ => match f.let_value(l)? {
                    Value::Decimal(d) => Ok(d),
                    _ => Ok(Decimal::ZERO),
                },
            }),
            Node::Field { base, offset, read: ReadKind::Decimal } => {
                let base = self.record(base);
                dec_code(
                    move |f| Ok(base(f)?.map_or(Decimal::ZERO, |r| r.slot(offset as usize).as_decimal())),
                )
            }
            Node::Binary(
                op @ (BinaryOp::AddDecimal | BinaryOp::SubDecimal | BinaryOp::MulDecimal),
                lhs,
                rhs,
            ) => {
                let (l, r) = (self.dec(lhs), self.dec(rhs));
                let apply = match op {
                    BinaryOp::AddDecimal => ops::dec_add,
                    BinaryOp::SubDecimal => ops::dec_sub,
                    _ => ops::dec_mul,
                };
                dec_code(move |f| f.nested(|f| Ok(apply(l(f)?, r(f)?)?)))
            }
            Node::Unary(UnaryOp::IntToDecimal, arg) => {
                let arg = self.int(arg);
                dec_code(move |f| f.nested(|f| Ok(ops::decimal_from_int(arg(f)?))))
            }
            Node::Call { func, ref args, extremum_of: Some(TypeTable::DECIMAL) } => {
                let args: Vec<DecCode> = args.iter().map(|a| self.dec(*a)).collect();
                let wins = extreme(func);
                dec_code(move |f| {
                    f.nested(|f| {
                        let mut best = args[0](f)?;
                        for arg in &args[1..] {
                            let candidate = arg(f)?;
                            if dec_cmp(candidate, best) == wins {
                                best = candidate;
                            }
                        }
                        Ok(best)
                    })
                })
            }
            Node::Call { func, ref args, .. } if args.len() == 2 && Midpoint::of(func).is_some() => {
                let midpoint = Midpoint::of(func)?;
                let (x, places) = (self.dec(args[0]), self.int(args[1]));
                dec_code(move |f| f.nested(|f| Ok(ops::dec_round(x(f)?, places(f)?, midpoint)?)))
            }
            _ => return None,
        })
    }

    /// A node of another type (a string, record, list, optional, float),
    /// when its kind has a direct path.
    fn value_of(&self, node: &Node) -> Option<ValueCode> {
        Some(match *node {
            Node::Input { offset, read: ReadKind::Str } => {
                value_code(move |f| Ok(Value::Str(f.input.str(offset as usize))))
            }
            Node::Input { offset, read } => {
                value_code(move |f| Ok(read.read(&f.p.layouts, f.input, offset as usize)))
            }
            Node::InputRecord => value_code(|f| Ok(Value::Record(f.input))),
            Node::Let(l) => value_code(move |f| match &f.scratch.lets[l as usize] {
                Memo::Done(v) => Ok(v.clone()),
                _ => f.let_value(l),
            }),
            Node::Local(l) => value_code(move |f| Ok(f.scratch.locals[l as usize].clone())),
            Node::Field { base, offset, read } => {
                let base = self.record(base);
                value_code(move |f| {
                    Ok(match base(f)? {
                        Some(record) => read.read(&f.p.layouts, record, offset as usize),
                        None => Value::Absent,
                    })
                })
            }
            _ => return None,
        })
    }

    /// The slots of a record-valued node (a field's base); `None` when it
    /// is not a record (an absent optional).
    fn record(&self, id: NodeId) -> RecordCode {
        match self.nodes[id as usize] {
            Node::InputRecord => record_code(|f| Ok(Some(f.input))),
            Node::Let(l) => record_code(move |f| match &f.scratch.lets[l as usize] {
                Memo::Done(Value::Record(record)) => Ok(Some(*record)),
                _ => match f.let_value(l)? {
                    Value::Record(record) => Ok(Some(record)),
                    _ => Ok(None),
                },
            }),
            _ => {
                let value = self.value(id);
                record_code(move |f| match value(f)? {
                    Value::Record(record) => Ok(Some(record)),
                    _ => Ok(None),
                })
            }
        }
    }

    /// The input offset of a node that reads a string of the input.
    fn input_str(&self, id: NodeId) -> Option<usize> {
        match self.nodes[id as usize] {
            Node::Input { offset, read: ReadKind::Str } => Some(offset as usize),
            _ => None,
        }
    }

    fn value(&self, id: NodeId) -> ValueCode {
        self.code.values[id as usize].clone()
    }

    fn bool(&self, id: NodeId) -> BoolCode {
        self.code.bools[id as usize].clone()
    }

    fn int(&self, id: NodeId) -> IntCode {
        self.code.ints[id as usize].clone()
    }

    fn dec(&self, id: NodeId) -> DecCode {
        self.code.decimals[id as usize].clone()
    }
}

impl<'p: 'a, 'a> Frame<'p, 'a> {
    /// Evaluates a node to a value.
    pub(super) fn eval(&mut self, id: NodeId) -> Result<Value<'a>, Fault> {
        let p = self.p;
        (p.code.values[id as usize])(self)
    }

    /// Evaluates a `bool` node.
    pub(super) fn eval_bool(&mut self, id: NodeId) -> Result<bool, Fault> {
        let p = self.p;
        (p.code.bools[id as usize])(self)
    }

    /// Evaluates a `decimal` node.
    pub(super) fn eval_dec(&mut self, id: NodeId) -> Result<Decimal, Fault> {
        let p = self.p;
        (p.code.decimals[id as usize])(self)
    }

    /// Evaluates an `int`, `timestamp` or `duration` node.
    pub(super) fn eval_int(&mut self, id: NodeId) -> Result<i64, Fault> {
        let p = self.p;
        (p.code.ints[id as usize])(self)
    }
}

/// The ordering that makes a candidate replace the best so far: `min`
/// keeps the first of equal values, and so does `max`.
fn extreme(func: Builtin) -> Ordering {
    if func == Builtin::Min { Ordering::Less } else { Ordering::Greater }
}
