//! Typed fast paths of the interpreter: conditions, decimals and ints are
//! evaluated without wrapping each intermediate in a [`Value`]. Every node
//! kind a fast path does not handle falls back to the generic evaluator,
//! so the semantics stay in one place ([`crate::semantics::ops`]).

use ir::{BinaryOp, Builtin, TypeTable, UnaryOp};
use rust_decimal::Decimal;

use super::{Frame, Memo};
use crate::data::RecordRef;
use crate::error::Fault;
use crate::program::{CmpKind, Node, NodeId, ReadKind};
use crate::semantics::decimal::Midpoint;
use crate::semantics::ops;
use crate::semantics::truthy;
use crate::value::Value;

impl<'p: 'a, 'a> Frame<'p, 'a> {
    /// Evaluates a `bool` node.
    pub(super) fn eval_bool(&mut self, id: NodeId) -> Result<bool, Fault> {
        self.nested(|frame| frame.bool_node(id))
    }

    pub(super) fn bool_node(&mut self, id: NodeId) -> Result<bool, Fault> {
        let p = self.p;
        match &p.nodes[id as usize] {
            Node::Compare { op, kind, lhs, rhs } => {
                let ordering = match kind {
                    CmpKind::Int | CmpKind::Timestamp | CmpKind::Duration => {
                        let l = self.eval_int(*lhs)?;
                        l.cmp(&self.eval_int(*rhs)?)
                    }
                    CmpKind::Decimal => {
                        let l = self.eval_dec(*lhs)?;
                        crate::semantics::decimal::cmp(l, self.eval_dec(*rhs)?)
                    }
                    _ => {
                        let (l, r) = (self.eval(*lhs)?, self.eval(*rhs)?);
                        self.charge(super::walk::work(&l) + super::walk::work(&r));
                        self.compare(*kind, &l, &r)
                    }
                };
                Ok(op.holds(ordering))
            }
            Node::And(lhs, rhs) => Ok(self.eval_bool(*lhs)? && self.eval_bool(*rhs)?),
            Node::Or(lhs, rhs) => Ok(self.eval_bool(*lhs)? || self.eval_bool(*rhs)?),
            Node::Unary(UnaryOp::Not, arg) => Ok(!self.eval_bool(*arg)?),
            Node::Input { offset, read: ReadKind::Bool } => Ok(self.input.slot(*offset as usize).as_bool()),
            Node::Let(l) if let Some(Value::Bool(b)) = self.computed_let(*l) => Ok(*b),
            Node::Rule(r) => Ok(self.rule(ir::RuleId(*r)).unwrap_or(false)),
            Node::Field { base, offset, read: ReadKind::Bool } => match self.record_node(*base)? {
                Some(record) => Ok(record.slot(*offset as usize).as_bool()),
                None => Ok(false),
            },
            Node::Const { slot, .. } if slot.tag() == crate::data::Tag::Bool => Ok(slot.as_bool()),
            _ => self.eval_node(id).map(|v| truthy(&v)),
        }
    }

    /// Evaluates a `decimal` node.
    pub(super) fn eval_dec(&mut self, id: NodeId) -> Result<Decimal, Fault> {
        self.nested(|frame| frame.dec_node(id))
    }

    fn dec_node(&mut self, id: NodeId) -> Result<Decimal, Fault> {
        let p = self.p;
        let result = match &p.nodes[id as usize] {
            Node::Input { offset, read: ReadKind::Decimal } => {
                return Ok(self.input.slot(*offset as usize).as_decimal());
            }
            Node::Const { slot, .. } if slot.tag() == crate::data::Tag::Decimal => {
                return Ok(slot.as_decimal());
            }
            Node::Let(l) if let Some(Value::Decimal(d)) = self.computed_let(*l) => return Ok(*d),
            Node::Field { base, offset, read: ReadKind::Decimal } => {
                return Ok(match self.record_node(*base)? {
                    Some(record) => record.slot(*offset as usize).as_decimal(),
                    None => Decimal::ZERO,
                });
            }
            Node::Binary(
                op @ (BinaryOp::AddDecimal | BinaryOp::SubDecimal | BinaryOp::MulDecimal),
                lhs,
                rhs,
            ) => {
                let (l, r) = (self.eval_dec(*lhs)?, self.eval_dec(*rhs)?);
                match op {
                    BinaryOp::AddDecimal => ops::dec_add(l, r),
                    BinaryOp::SubDecimal => ops::dec_sub(l, r),
                    _ => ops::dec_mul(l, r),
                }
            }
            Node::Unary(UnaryOp::IntToDecimal, arg) => Ok(ops::decimal_from_int(self.eval_int(*arg)?)),
            Node::Call { func, args, extremum_of: Some(TypeTable::DECIMAL) } => {
                let mut best = self.eval_dec(args[0])?;
                for arg in &args[1..] {
                    let candidate = self.eval_dec(*arg)?;
                    if crate::semantics::decimal::cmp(candidate, best) == extreme(*func) {
                        best = candidate;
                    }
                }
                return Ok(best);
            }
            Node::Call { func, args, .. }
                if args.len() == 2
                    && let Some(midpoint) = Midpoint::of(*func) =>
            {
                let (x, places) = (self.eval_dec(args[0])?, self.eval_int(args[1])?);
                ops::dec_round(x, places, midpoint)
            }
            _ => {
                return match self.eval_node(id)? {
                    Value::Decimal(d) => Ok(d),
                    _ => Ok(Decimal::ZERO),
                };
            }
        };
        result.map_err(Fault::from)
    }

    /// Evaluates an `int`, `timestamp` or `duration` node.
    pub(super) fn eval_int(&mut self, id: NodeId) -> Result<i64, Fault> {
        self.nested(|frame| frame.int_node(id))
    }

    fn int_node(&mut self, id: NodeId) -> Result<i64, Fault> {
        let p = self.p;
        match &p.nodes[id as usize] {
            Node::Input { offset, read: ReadKind::Int | ReadKind::Timestamp | ReadKind::Duration } => {
                Ok(self.input.slot(*offset as usize).as_int())
            }
            Node::Const { slot, .. }
                if matches!(
                    slot.tag(),
                    crate::data::Tag::Int | crate::data::Tag::Timestamp | crate::data::Tag::Duration
                ) =>
            {
                Ok(slot.as_int())
            }
            Node::Let(l)
                if let Some(Value::Int(i) | Value::Timestamp(i) | Value::Duration(i)) =
                    self.computed_let(*l) =>
            {
                Ok(*i)
            }
            Node::Field { base, offset, read: ReadKind::Int | ReadKind::Timestamp | ReadKind::Duration } => {
                match self.record_node(*base)? {
                    Some(record) => Ok(record.slot(*offset as usize).as_int()),
                    None => Ok(0),
                }
            }
            Node::Call { func, args, extremum_of: Some(TypeTable::INT) } => {
                let mut best = self.eval_int(args[0])?;
                for arg in &args[1..] {
                    let candidate = self.eval_int(*arg)?;
                    if candidate.cmp(&best) == extreme(*func) {
                        best = candidate;
                    }
                }
                Ok(best)
            }
            _ => match self.eval_node(id)? {
                Value::Int(i) | Value::Timestamp(i) | Value::Duration(i) => Ok(i),
                _ => Ok(0),
            },
        }
    }

    /// A let's value when it is already computed (every use after the
    /// first), without a trip through the generic evaluator.
    fn computed_let(&self, l: u32) -> Option<&Value<'a>> {
        match &self.scratch.lets[l as usize] {
            Memo::Done(v) => Some(v),
            _ => None,
        }
    }

    /// The slots of a record-valued node (a field's base): the input, a
    /// computed let, or anything else through the evaluator. `None` when
    /// it is not a record (an absent optional).
    fn record_node(&mut self, id: NodeId) -> Result<Option<RecordRef<'a>>, Fault> {
        let p = self.p;
        if let Node::InputRecord = &p.nodes[id as usize] {
            return Ok(Some(self.input));
        }
        if let Node::Let(l) = &p.nodes[id as usize]
            && let Some(Value::Record(record)) = self.computed_let(*l)
        {
            return Ok(Some(*record));
        }
        if let Node::Local(l) = &p.nodes[id as usize]
            && let Value::Record(record) = &self.scratch.locals[*l as usize]
        {
            return Ok(Some(*record));
        }
        match self.eval(id)? {
            Value::Record(record) => Ok(Some(record)),
            _ => Ok(None),
        }
    }
}

/// The ordering that makes a candidate replace the best so far: `min`
/// keeps the first of equal values, and so does `max`.
fn extreme(func: Builtin) -> std::cmp::Ordering {
    if func == Builtin::Min { std::cmp::Ordering::Less } else { std::cmp::Ordering::Greater }
}
