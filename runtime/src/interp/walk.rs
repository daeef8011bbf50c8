//! The generic expression walk: the value of a node kind the compiled
//! code (`compile.rs`) does not specialise, and the lists, lambdas, calls
//! and lookups it makes, each operator and built-in decided by
//! [`crate::semantics`]. Children are evaluated through their compiled
//! code.

use std::cmp::Ordering;
use std::rc::Rc;

use ir::{BinaryOp, Builtin, LambdaKind, RuleId, TypeId, TypeTable};

use super::Frame;
use crate::program::{CmpKind, Node, NodeId, Program};
use crate::score;
use crate::semantics::budget::string_cost;
use crate::semantics::call_host;
use crate::semantics::error::Fault;
use crate::semantics::{self, ops};
use crate::value::data::RecordRef;
use crate::value::{Value, read, render};

impl<'p: 'a, 'a> Frame<'p, 'a> {
    /// Runs one level of nested evaluation, growing the stack first when
    /// little is left, so no expression can overflow it.
    #[inline(always)]
    pub(super) fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> T {
        if ir::stack::here() < self.stack_floor { self.grown(f) } else { f(self) }
    }

    /// Runs `f` on a fresh stack segment, with that segment's floor.
    #[cold]
    #[inline(never)]
    pub(super) fn grown<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> T {
        ir::stack::guard(|| {
            let outer = std::mem::replace(&mut self.stack_floor, ir::stack::floor());
            let result = f(self);
            self.stack_floor = outer;
            result
        })
    }

    pub(super) fn eval_node(&mut self, id: NodeId) -> Result<Value<'a>, Fault> {
        let p: &'p Program = self.p;
        match &p.nodes[id as usize] {
            Node::Const { slot, ty } => {
                // SAFETY: constant slots point into the program's store,
                // which lives as long as the program.
                let record = unsafe { RecordRef::new(std::slice::from_ref(slot)) };
                Ok(read(&p.layouts, record, 0, *ty))
            }
            Node::Input { offset, read } => Ok(read.read(&p.layouts, self.input, *offset as usize)),
            Node::InputRecord => Ok(Value::Record(self.input)),
            Node::Field { base, offset, read } => match self.eval(*base)? {
                Value::Record(record) => Ok(read.read(&p.layouts, record, *offset as usize)),
                _ => Ok(Value::Absent),
            },
            Node::Let(l) => self.let_value(*l),
            Node::Rule(r) => Ok(Value::Bool(self.rule(RuleId(*r)).unwrap_or(false))),
            Node::Local(l) => Ok(self.scratch.locals[*l as usize].clone()),
            Node::List { items } => self.list(items),
            Node::Unary(op, arg) => {
                let value = self.eval(*arg)?;
                semantics::unary(*op, value).map_err(Fault::from)
            }
            Node::Binary(op, lhs, rhs) => {
                let (l, r) = (self.eval(*lhs)?, self.eval(*rhs)?);
                if *op == BinaryOp::Concat {
                    self.charge(work(&l) + work(&r));
                }
                semantics::binary(*op, l, r).map_err(Fault::from)
            }
            // Compiled in `compile.rs`, never by this walk.
            Node::Compare { .. }
            | Node::And(..)
            | Node::Or(..)
            | Node::Matches { .. }
            | Node::TableHas { .. }
            | Node::Present(_) => self.eval_bool(id).map(Value::Bool),
            Node::Cond(cond, then, otherwise) => {
                let branch = if semantics::truthy(&self.eval(*cond)?) { *then } else { *otherwise };
                self.eval(branch)
            }
            Node::Coalesce(value, default) => match self.eval(*value) {
                Ok(Value::Absent) => self.eval(*default),
                Err(fault) if fault.is_missing() => self.eval(*default),
                other => other,
            },
            Node::TableGet { table, key: key_node, int_key: true } => {
                let key = self.eval_int(*key_node)?;
                let table = &p.tables[*table as usize];
                match (table.row_int(key), table.value) {
                    (Some(row), Some(ty)) => Ok(table.value(&p.layouts, row, ty)),
                    _ => Err(self.missing_key(*key_node, &Value::Int(key), &table.name)),
                }
            }
            Node::TableGet { table, key: key_node, int_key: false } => {
                let key = self.eval(*key_node)?;
                let table = &p.tables[*table as usize];
                match (table.row(&key), table.value) {
                    (Some(row), Some(ty)) => Ok(table.value(&p.layouts, row, ty)),
                    _ => Err(self.missing_key(*key_node, &key, &table.name)),
                }
            }
            Node::Index { list, index, element } => {
                let list = self.eval(*list)?;
                let Value::Int(i) = self.eval(*index)? else { return Ok(Value::Absent) };
                match usize::try_from(i) {
                    Ok(at) if at < list.list_len() => Ok(list.list_get(&p.layouts, *element, at)),
                    _ => Err(index_out_of_range(i, list.list_len())),
                }
            }
            Node::InList { item, list, kind, element } => {
                let (item, list) = (self.eval(*item)?, self.eval(*list)?);
                self.tick(list.list_len() as i64)?;
                let found = (0..list.list_len()).any(|i| {
                    self.compare(*kind, &item, &list.list_get(&p.layouts, *element, i)) == Ordering::Equal
                });
                Ok(Value::Bool(found))
            }
            Node::Call { func, args, .. } => self.call(id, *func, args),
            Node::Lambda { kind, list, param, body, add } => {
                self.lambda(id, *kind, *list, *param, *body, *add)
            }
            Node::Extern { func, args } => self.host(*func, args),
            Node::Window { window, aggregate } => {
                self.signals.aggregate(p.aggregate_slot(*window, *aggregate)).map_err(Fault::from)
            }
            Node::Score { model, features, site } => self.score(*model, *features, *site),
        }
    }

    /// `score(model, features)`: the score computed ahead, or else the
    /// features scored here as a batch of one row (`crate::signals`).
    #[inline(never)]
    fn score(&mut self, model: u32, features: NodeId, site: Option<u32>) -> Result<Value<'a>, Fault> {
        if let Some(score) = site.and_then(|site| self.signals.score(site as usize)) {
            return Ok(Value::Float(score?));
        }
        let features = self.eval(features)?;
        let row = score::feature_row(self.p, model, &features)?;
        let scores = score::run_model(self.p, model, &row, 1)?;
        Ok(Value::Float(score::score_value(self.p, model, scores.first().copied())?))
    }

    /// A value of type `ty` for an error message: strings quoted.
    #[cold]
    pub(super) fn show(&self, ty: TypeId, value: &Value<'_>) -> String {
        let mut text = String::new();
        render(&self.schema, ty, value, &mut text);
        match value {
            Value::Str(_) | Value::Text(_) => format!("{text:?}"),
            _ => text,
        }
    }

    #[inline(never)]
    pub(super) fn list(&mut self, items: &[NodeId]) -> Result<Value<'a>, Fault> {
        let mut values = Vec::with_capacity(items.len());
        for item in items {
            values.push(self.eval(*item)?);
        }
        Ok(Value::Items(Rc::from(values)))
    }

    /// The fault of a table lookup whose key is not in the table.
    #[cold]
    pub(super) fn missing_key(&self, key_node: NodeId, key: &Value<'_>, table: &str) -> Fault {
        // The key may be a request's string: show a short prefix of it.
        let shown = match key {
            Value::Str(_) | Value::Text(_) => ir::quote::quote(key.as_str()),
            _ => self.show(self.p.contract.exprs[key_node as usize].ty, key),
        };
        Fault::missing(format!("key {shown} is not in table `{table}`"))
    }

    pub(super) fn compare(&self, kind: CmpKind, l: &Value<'_>, r: &Value<'_>) -> Ordering {
        match kind {
            CmpKind::Structural(ty) => {
                if semantics::structural_eq(&self.schema, ty, l, r) {
                    Ordering::Equal
                } else {
                    Ordering::Less
                }
            }
            _ => semantics::order(l, r),
        }
    }

    #[inline(never)]
    pub(super) fn lambda(
        &mut self,
        id: NodeId,
        kind: LambdaKind,
        list: NodeId,
        param: u32,
        body: NodeId,
        add: BinaryOp,
    ) -> Result<Value<'a>, Fault> {
        let list = self.eval(list)?;
        let element = self.p.contract.locals[param as usize];
        let ty = self.p.contract.exprs[id as usize].ty;
        let body_ty = self.p.contract.exprs[body as usize].ty;
        let mut count = 0i64;
        let mut sum = semantics::zero_of(ty);
        for i in 0..list.list_len() {
            self.tick(1)?;
            self.scratch.locals[param as usize] = list.list_get(&self.p.layouts, element, i);
            match kind {
                LambdaKind::Any if self.eval_bool(body)? => return Ok(Value::Bool(true)),
                LambdaKind::All if !self.eval_bool(body)? => return Ok(Value::Bool(false)),
                LambdaKind::Count if self.eval_bool(body)? => count += 1,
                LambdaKind::Sum => sum = self.add_to_sum(ty, body_ty, sum, body, add)?,
                _ => {}
            }
        }
        Ok(match kind {
            LambdaKind::Any => Value::Bool(false),
            LambdaKind::All => Value::Bool(true),
            LambdaKind::Count => Value::Int(count),
            LambdaKind::Sum => sum,
        })
    }

    /// One step of `sum`: the body's value for the current element added
    /// to the sum so far, on the typed paths when the body is a plain
    /// decimal or int.
    pub(super) fn add_to_sum(
        &mut self,
        ty: TypeId,
        body_ty: TypeId,
        sum: Value<'a>,
        body: NodeId,
        add: BinaryOp,
    ) -> Result<Value<'a>, Fault> {
        Ok(match (&sum, ty == body_ty) {
            (Value::Decimal(s), true) if ty == TypeTable::DECIMAL => {
                Value::Decimal(ops::dec_add(*s, self.eval_dec(body)?)?)
            }
            (Value::Int(s), true) if ty == TypeTable::INT => {
                Value::Int(ops::int_add(*s, self.eval_int(body)?)?)
            }
            _ => semantics::binary(add, sum, self.eval(body)?)?,
        })
    }

    /// A call of a host function: the arguments in order, then the call.
    #[inline(never)]
    pub(super) fn host(&mut self, func: u32, args: &[NodeId]) -> Result<Value<'a>, Fault> {
        let mut values = Vec::with_capacity(args.len());
        for arg in args {
            let value = self.eval(*arg)?;
            values.push(semantics::owned(&self.schema, self.p.contract.exprs[*arg as usize].ty, &value));
        }
        Ok(call_host(&self.hosts[func as usize], &values)?)
    }

    #[inline(never)]
    pub(super) fn call(&mut self, id: NodeId, func: Builtin, args: &[NodeId]) -> Result<Value<'a>, Fault> {
        let mut values: [Value<'a>; 2] = [Value::Absent, Value::Absent];
        let mut extra = Vec::new();
        for (i, arg) in args.iter().enumerate() {
            let value = self.eval(*arg)?;
            if i < 2 { values[i] = value } else { extra.push(value) }
        }
        let [a, b] = values;
        self.charge(work(&a) + work(&b));
        let result = match func {
            Builtin::Min | Builtin::Max => Ok(semantics::extremum(func, a, std::iter::once(b).chain(extra))),
            Builtin::Now => Ok(Value::Timestamp(self.now())),
            _ => {
                let arg_ty = args.first().map_or(self.p.contract.exprs[id as usize].ty, |arg| {
                    self.p.contract.exprs[*arg as usize].ty
                });
                semantics::call(&self.schema, func, arg_ty, a, b)
            }
        };
        result.map_err(Fault::from)
    }
}

/// The fault of a list index past the end.
#[cold]
fn index_out_of_range(i: i64, len: usize) -> Fault {
    Fault::missing(format!("index {i} is out of range for a list of {len}"))
}

/// The fuel of work over a value: its bytes for a string, its elements
/// for a list (rendered, compared, copied), nothing for a scalar.
pub(super) fn work(value: &Value<'_>) -> i64 {
    match value {
        Value::Str(_) | Value::Text(_) => string_cost(value.as_str().len()),
        Value::List(..) | Value::Items(_) => value.list_len() as i64,
        _ => 0,
    }
}
