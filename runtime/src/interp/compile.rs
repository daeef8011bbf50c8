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
//! Typed code returns its value in registers and leaves a fault in
//! [`Frame`]'s side channel instead of returning a `Result` (a `Result`
//! of a `bool` or a `Decimal` goes through memory, and reading it back
//! right after the call stalls): a closure checks the channel after each
//! child, before it evaluates the next, so the order of evaluation and
//! the first fault are those of the `?` chain it replaces; the
//! boundaries (`Frame::eval_bool` and the others, a typed node's value
//! code) take the fault back into a `Result`.
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
use crate::program::{CmpKind, Node, NodeId, ReadKind};
use crate::semantics::error::Fault;
use crate::semantics::{ops, truthy};
use crate::value::Value;
use crate::value::data::{RecordRef, Tag};
use crate::value::decimal::{Midpoint, cmp as dec_cmp};

type BoolCode = Arc<dyn for<'p, 'a> Fn(&mut Frame<'p, 'a>) -> bool + Send + Sync>;
type IntCode = Arc<dyn for<'p, 'a> Fn(&mut Frame<'p, 'a>) -> i64 + Send + Sync>;
type DecCode = Arc<dyn for<'p, 'a> Fn(&mut Frame<'p, 'a>) -> Dec + Send + Sync>;
type ValueCode = Arc<dyn for<'p, 'a> Fn(&mut Frame<'p, 'a>) -> Result<Value<'a>, Fault> + Send + Sync>;
/// `None` for a value that is not a record (an absent optional), and for
/// a fault (left in the side channel).
type RecordCode = Arc<dyn for<'p, 'a> Fn(&mut Frame<'p, 'a>) -> Option<RecordRef<'a>> + Send + Sync>;

fn bool_code(f: impl for<'p, 'a> Fn(&mut Frame<'p, 'a>) -> bool + Send + Sync + 'static) -> BoolCode {
    Arc::new(f)
}

fn int_code(f: impl for<'p, 'a> Fn(&mut Frame<'p, 'a>) -> i64 + Send + Sync + 'static) -> IntCode {
    Arc::new(f)
}

fn dec_code(f: impl for<'p, 'a> Fn(&mut Frame<'p, 'a>) -> Dec + Send + Sync + 'static) -> DecCode {
    Arc::new(f)
}

fn value_code(
    f: impl for<'p, 'a> Fn(&mut Frame<'p, 'a>) -> Result<Value<'a>, Fault> + Send + Sync + 'static,
) -> ValueCode {
    Arc::new(f)
}

fn record_code(
    f: impl for<'p, 'a> Fn(&mut Frame<'p, 'a>) -> Option<RecordRef<'a>> + Send + Sync + 'static,
) -> RecordCode {
    Arc::new(f)
}

/// A decimal as typed code returns it: one `u128`, which comes back in two
/// registers (a `Decimal` comes back through memory).
#[derive(Clone, Copy)]
#[repr(transparent)]
pub(super) struct Dec(u128);

impl Dec {
    const ZERO: Dec = Dec(0);

    #[inline(always)]
    fn new(value: Decimal) -> Dec {
        // SAFETY: a `Decimal` is four `u32`s, sixteen bytes without padding
        // (`transmute` checks the size), so every byte is initialised.
        Dec(unsafe { std::mem::transmute::<Decimal, u128>(value) })
    }

    #[inline(always)]
    fn get(self) -> Decimal {
        // SAFETY: every `Dec` was made by `Dec::new` from a `Decimal` (or
        // is zero, the bits of `Decimal::ZERO`): these are its bytes.
        unsafe { std::mem::transmute::<u128, Decimal>(self.0) }
    }
}

/// Evaluates typed code and returns `$dummy` from the closure when it left
/// a fault: the fault waits for the boundary, and nothing after it runs.
macro_rules! checked {
    ($f:ident, $code:expr, $dummy:expr) => {{
        let value = $code;
        if $f.failed() {
            return $dummy;
        }
        value
    }};
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
                value_code(move |f| {
                    let b = wrapped(f);
                    f.settle(b).map(Value::Bool)
                })
            }
            Class::Int(wrap) => match self.int_of(node, wrap) {
                Some(code) => {
                    let wrapped = code.clone();
                    self.code.ints.push(code);
                    value_code(move |f| {
                        let i = wrapped(f);
                        f.settle(i).map(wrap)
                    })
                }
                None => fallback,
            },
            Class::Decimal => match self.dec_of(node) {
                Some(code) => {
                    let wrapped = code.clone();
                    self.code.decimals.push(code);
                    value_code(move |f| {
                        let d = wrapped(f);
                        f.settle(d.get()).map(Value::Decimal)
                    })
                }
                None => fallback,
            },
            Class::Other => self.value_of(node).unwrap_or(fallback),
        };
        self.add_conversions(id, &value);
        self.code.values.push(value);
    }

    /// The typed code of node `id` whose kind has no typed path of that
    /// type: its value converted the way the generic walk did (`truthy`
    /// for a bool; zero for a number).
    fn add_conversions(&mut self, id: NodeId, value: &ValueCode) {
        if self.code.bools.len() == id as usize {
            let convert = value.clone();
            self.code.bools.push(bool_code(move |f| match convert(f) {
                Ok(v) => truthy(&v),
                Err(fault) => f.fail(fault, false),
            }));
        }
        if self.code.ints.len() == id as usize {
            let convert = value.clone();
            self.code.ints.push(int_code(move |f| match convert(f) {
                Ok(Value::Int(i) | Value::Timestamp(i) | Value::Duration(i)) => i,
                Ok(_) => 0,
                Err(fault) => f.fail(fault, 0),
            }));
        }
        if self.code.decimals.len() == id as usize {
            let convert = value.clone();
            self.code.decimals.push(dec_code(move |f| match convert(f) {
                Ok(Value::Decimal(d)) => Dec::new(d),
                Ok(_) => Dec::ZERO,
                Err(fault) => f.fail(fault, Dec::ZERO),
            }));
        }
    }

    /// A bool node. Every compare, `&&`, `||`, `matches`, membership and
    /// presence test is compiled here (the generic walk hands them back).
    fn bool_of(&self, id: NodeId, node: &Node) -> BoolCode {
        match *node {
            Node::Compare { op, kind, lhs, rhs } => self.compare(op, kind, lhs, rhs),
            Node::And(lhs, rhs) => {
                let (l, r) = (self.bool(lhs), self.bool(rhs));
                bool_code(move |f| f.nested(|f| l(f) && !f.failed() && r(f)))
            }
            Node::Or(lhs, rhs) => {
                let (l, r) = (self.bool(lhs), self.bool(rhs));
                bool_code(move |f| f.nested(|f| checked!(f, l(f), false) || r(f)))
            }
            Node::Unary(UnaryOp::Not, arg) => {
                let arg = self.bool(arg);
                bool_code(move |f| f.nested(|f| !arg(f)))
            }
            Node::Input { offset, read: ReadKind::Bool } => {
                bool_code(move |f| f.input.slot(offset as usize).as_bool())
            }
            Node::Const { slot, .. } if slot.tag() == Tag::Bool => {
                let b = slot.as_bool();
                bool_code(move |_| b)
            }
            Node::Let(l) => bool_code(move |f| match &f.scratch.lets[l as usize] {
                Memo::Done(Value::Bool(b)) => *b,
                Memo::Todo => f.typed_let(l, |f, value| (f.code.bools[value])(f), Value::Bool, false),
                _ => match f.let_value(l) {
                    Ok(v) => truthy(&v),
                    Err(fault) => f.fail(fault, false),
                },
            }),
            Node::Rule(r) => bool_code(move |f| f.rule(RuleId(r)).unwrap_or(false)),
            Node::Field { base, offset, read: ReadKind::Bool } => {
                let base = self.record(base);
                bool_code(move |f| base(f).is_some_and(|r| r.slot(offset as usize).as_bool()))
            }
            Node::Matches { subject, regex } => {
                let subject = self.value(subject);
                bool_code(move |f| {
                    f.nested(|f| {
                        let subject = match subject(f) {
                            Ok(subject) => subject,
                            Err(fault) => return f.fail(fault, false),
                        };
                        match f.tick(crate::semantics::budget::regex_cost(subject.as_str().len())) {
                            Ok(()) => f.p.regexes[regex as usize].is_match(subject.as_str()),
                            Err(fault) => f.fail(fault, false),
                        }
                    })
                })
            }
            Node::TableHas { table, key } => match self.input_str(key) {
                Some(offset) => {
                    bool_code(move |f| f.p.tables[table as usize].row_str(f.input.str(offset)).is_some())
                }
                None => {
                    let key = self.value(key);
                    bool_code(move |f| {
                        f.nested(|f| match key(f) {
                            Ok(key) => f.p.tables[table as usize].row(&key).is_some(),
                            Err(fault) => f.fail(fault, false),
                        })
                    })
                }
            },
            Node::Present(arg) => {
                let arg = self.value(arg);
                bool_code(move |f| {
                    f.nested(|f| match arg(f) {
                        Ok(v) => !v.is_absent(),
                        Err(fault) => f.fail(fault, false),
                    })
                })
            }
            _ => bool_code(move |f| match f.nested(|f| f.eval_node(id)) {
                Ok(v) => truthy(&v),
                Err(fault) => f.fail(fault, false),
            }),
        }
    }

    /// A compare, by how its operands compare.
    fn compare(&self, op: CmpOp, kind: CmpKind, lhs: NodeId, rhs: NodeId) -> BoolCode {
        match kind {
            CmpKind::Int | CmpKind::Timestamp | CmpKind::Duration => {
                let (l, r) = (self.int(lhs), self.int(rhs));
                bool_code(move |f| {
                    f.nested(|f| {
                        let a = checked!(f, l(f), false);
                        op.holds(a.cmp(&r(f)))
                    })
                })
            }
            CmpKind::Decimal => {
                let (l, r) = (self.dec(lhs), self.dec(rhs));
                bool_code(move |f| {
                    f.nested(|f| {
                        let a = checked!(f, l(f), false);
                        op.holds(dec_cmp(a.get(), r(f).get()))
                    })
                })
            }
            _ => {
                let (l, r) = (self.value(lhs), self.value(rhs));
                bool_code(move |f| {
                    f.nested(|f| {
                        let operands = l(f).and_then(|l| Ok((l, r(f)?)));
                        match operands {
                            Ok((l, r)) => {
                                f.charge(super::walk::work(&l) + super::walk::work(&r));
                                op.holds(f.compare(kind, &l, &r))
                            }
                            Err(fault) => f.fail(fault, false),
                        }
                    })
                })
            }
        }
    }

    /// An `int`, `timestamp` or `duration` node, when its kind has a typed
    /// path.
    ///
    /// `wrap` makes the node's `Value` (`Value::Int`, `Value::Timestamp`
    /// or `Value::Duration`), which a let's memo keeps.
    fn int_of(&self, node: &Node, wrap: fn(i64) -> Value<'static>) -> Option<IntCode> {
        Some(match *node {
            Node::Input { offset, read: ReadKind::Int | ReadKind::Timestamp | ReadKind::Duration } => {
                int_code(move |f| f.input.slot(offset as usize).as_int())
            }
            Node::Const { slot, .. } if matches!(slot.tag(), Tag::Int | Tag::Timestamp | Tag::Duration) => {
                let i = slot.as_int();
                int_code(move |_| i)
            }
            Node::Let(l) => int_code(move |f| match &f.scratch.lets[l as usize] {
                Memo::Done(Value::Int(i) | Value::Timestamp(i) | Value::Duration(i)) => *i,
                Memo::Todo => f.typed_let(l, |f, value| (f.code.ints[value])(f), wrap, 0),
                _ => match f.let_value(l) {
                    Ok(Value::Int(i) | Value::Timestamp(i) | Value::Duration(i)) => i,
                    Ok(_) => 0,
                    Err(fault) => f.fail(fault, 0),
                },
            }),
            Node::Field { base, offset, read: ReadKind::Int | ReadKind::Timestamp | ReadKind::Duration } => {
                let base = self.record(base);
                int_code(move |f| base(f).map_or(0, |r| r.slot(offset as usize).as_int()))
            }
            Node::Call { func, ref args, extremum_of: Some(TypeTable::INT) } => {
                let args: Vec<IntCode> = args.iter().map(|a| self.int(*a)).collect();
                let wins = extreme(func);
                int_code(move |f| {
                    f.nested(|f| {
                        let mut best = checked!(f, args[0](f), 0);
                        for arg in &args[1..] {
                            let candidate = checked!(f, arg(f), 0);
                            if candidate.cmp(&best) == wins {
                                best = candidate;
                            }
                        }
                        best
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
                dec_code(move |f| Dec::new(f.input.slot(offset as usize).as_decimal()))
            }
            Node::Const { slot, .. } if slot.tag() == Tag::Decimal => {
                let d = Dec::new(slot.as_decimal());
                dec_code(move |_| d)
            }
            Node::Let(l) => dec_code(move |f| match &f.scratch.lets[l as usize] {
                Memo::Done(Value::Decimal(d)) => Dec::new(*d),
                Memo::Todo => f.typed_let(
                    l,
                    |f, value| (f.code.decimals[value])(f),
                    |d| Value::Decimal(d.get()),
                    Dec::ZERO,
                ),
                _ => match f.let_value(l) {
                    Ok(Value::Decimal(d)) => Dec::new(d),
                    Ok(_) => Dec::ZERO,
                    Err(fault) => f.fail(fault, Dec::ZERO),
                },
            }),
            Node::Field { base, offset, read: ReadKind::Decimal } => {
                let base = self.record(base);
                dec_code(move |f| {
                    base(f).map_or(Dec::ZERO, |r| Dec::new(r.slot(offset as usize).as_decimal()))
                })
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
                dec_code(move |f| {
                    f.nested(|f| {
                        let a = checked!(f, l(f), Dec::ZERO);
                        let b = checked!(f, r(f), Dec::ZERO);
                        f.decimal(apply(a.get(), b.get()))
                    })
                })
            }
            Node::TableGet { table, key, int_key: false } => match self.input_str(key) {
                Some(offset) => dec_code(move |f| {
                    let key_text = f.input.str(offset);
                    let table_ref = &f.p.tables[table as usize];
                    match table_ref.row_str(key_text) {
                        Some(row) => table_decimal(f, table as usize, row),
                        None => {
                            let fault = f.missing_key(key, &Value::Str(key_text), &table_ref.name);
                            f.fail(fault, Dec::ZERO)
                        }
                    }
                }),
                None => return None,
            },
            Node::TableGet { table, key, int_key: true } => {
                let key_code = self.int(key);
                dec_code(move |f| {
                    let i = checked!(f, key_code(f), Dec::ZERO);
                    match f.p.tables[table as usize].row_int(i) {
                        Some(row) => table_decimal(f, table as usize, row),
                        None => {
                            let fault = f.missing_key(key, &Value::Int(i), &f.p.tables[table as usize].name);
                            f.fail(fault, Dec::ZERO)
                        }
                    }
                })
            }
            Node::Unary(UnaryOp::IntToDecimal, arg) => {
                let arg = self.int(arg);
                dec_code(move |f| f.nested(|f| Dec::new(ops::decimal_from_int(arg(f)))))
            }
            Node::Call { func, ref args, extremum_of: Some(TypeTable::DECIMAL) } => {
                let args: Vec<DecCode> = args.iter().map(|a| self.dec(*a)).collect();
                let wins = extreme(func);
                dec_code(move |f| {
                    f.nested(|f| {
                        let mut best = checked!(f, args[0](f), Dec::ZERO);
                        for arg in &args[1..] {
                            let candidate = checked!(f, arg(f), Dec::ZERO);
                            if dec_cmp(candidate.get(), best.get()) == wins {
                                best = candidate;
                            }
                        }
                        best
                    })
                })
            }
            Node::Call { func, ref args, .. } if args.len() == 2 && Midpoint::of(func).is_some() => {
                let midpoint = Midpoint::of(func)?;
                let (x, places) = (self.dec(args[0]), self.int(args[1]));
                dec_code(move |f| {
                    f.nested(|f| {
                        let x = checked!(f, x(f), Dec::ZERO);
                        let places = checked!(f, places(f), Dec::ZERO);
                        f.decimal(ops::dec_round(x.get(), places, midpoint))
                    })
                })
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
                    let record = base(f);
                    f.settle(match record {
                        Some(record) => read.read(&f.p.layouts, record, offset as usize),
                        None => Value::Absent,
                    })
                })
            }
            _ => return None,
        })
    }

    /// The slots of a record-valued node (a field's base).
    fn record(&self, id: NodeId) -> RecordCode {
        match self.nodes[id as usize] {
            Node::InputRecord => record_code(|f| Some(f.input)),
            Node::Let(l) => record_code(move |f| match &f.scratch.lets[l as usize] {
                Memo::Done(Value::Record(record)) => Some(*record),
                _ => match f.let_value(l) {
                    Ok(Value::Record(record)) => Some(record),
                    Ok(_) => None,
                    Err(fault) => f.fail(fault, None),
                },
            }),
            _ => {
                let value = self.value(id);
                record_code(move |f| match value(f) {
                    Ok(Value::Record(record)) => Some(record),
                    Ok(_) => None,
                    Err(fault) => f.fail(fault, None),
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
        let code = self.code;
        (code.values[id as usize])(self)
    }

    /// Evaluates a `bool` node.
    pub(super) fn eval_bool(&mut self, id: NodeId) -> Result<bool, Fault> {
        let code = self.code;
        let b = (code.bools[id as usize])(self);
        self.settle(b)
    }

    /// Evaluates a `decimal` node.
    pub(super) fn eval_dec(&mut self, id: NodeId) -> Result<Decimal, Fault> {
        let code = self.code;
        let d = (code.decimals[id as usize])(self);
        self.settle(d.get())
    }

    /// Evaluates an `int`, `timestamp` or `duration` node.
    pub(super) fn eval_int(&mut self, id: NodeId) -> Result<i64, Fault> {
        let code = self.code;
        let i = (code.ints[id as usize])(self);
        self.settle(i)
    }

    /// A let's first use from typed code: its value computed by the typed
    /// code of its value node (`code`) and memoised as a `Value` (`wrap`),
    /// as `Frame::memoise_let` does for every other first use.
    #[inline(never)]
    fn typed_let<T: Copy>(
        &mut self,
        id: u32,
        code: impl FnOnce(&mut Self, usize) -> T,
        wrap: impl FnOnce(T) -> Value<'a>,
        dummy: T,
    ) -> T {
        let value = self.start_let(id);
        let computed = code(self, value as usize);
        // The memo is written here rather than by `Frame::memoise_let`,
        // whose `Result` of a `Value` cost 2.5% of an evaluation's
        // instructions on the reference workload.
        match self.fault.take() {
            None => {
                self.scratch.lets[id as usize].set(Memo::Done(wrap(computed)));
                computed
            }
            Some(fault) => {
                let fault = self.let_fault(id, fault);
                self.scratch.lets[id as usize].set(Memo::Failed(fault.clone()));
                self.fail(fault, dummy)
            }
        }
    }

    /// Whether typed code left a fault.
    #[inline(always)]
    fn failed(&self) -> bool {
        self.fault.is_some()
    }

    /// Leaves `fault` for the boundary and returns `dummy`, which no one
    /// reads.
    #[cold]
    #[inline(never)]
    fn fail<T>(&mut self, fault: Fault, dummy: T) -> T {
        self.fault = Some(fault);
        dummy
    }

    /// A typed code's result at a boundary: its value, or the fault it
    /// left.
    #[inline(always)]
    fn settle<T>(&mut self, value: T) -> Result<T, Fault> {
        match self.fault.take() {
            None => Ok(value),
            Some(fault) => Err(fault),
        }
    }

    /// A decimal operation's result as typed code returns it.
    #[inline(always)]
    fn decimal(&mut self, result: crate::semantics::error::EvalResult<Decimal>) -> Dec {
        match result {
            Ok(d) => Dec::new(d),
            Err(error) => self.fail(Fault::from(error), Dec::ZERO),
        }
    }
}

/// The decimal value of row `row` of a decimal-valued table.
#[inline]
fn table_decimal(f: &Frame<'_, '_>, table: usize, row: u32) -> Dec {
    match f.p.tables[table].value(&f.p.layouts, row, TypeTable::DECIMAL) {
        Value::Decimal(d) => Dec::new(d),
        _ => Dec::ZERO,
    }
}

/// The ordering that makes a candidate replace the best so far: `min`
/// keeps the first of equal values, and so does `max`.
fn extreme(func: Builtin) -> Ordering {
    if func == Builtin::Min { Ordering::Less } else { Ordering::Greater }
}
