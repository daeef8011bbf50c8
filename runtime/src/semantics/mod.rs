//! The meaning of every operator, built-in, ordering, equality, effect
//! combine policy and owned-value conversion, on [`Value`]s: the one
//! module both engines call. The interpreter calls it node by node; native
//! code calls it through its helpers (`crate::native::helpers`) for what
//! it does not inline, and inlines only what [`ops`] and [`decimal`] spell
//! out, so the two engines cannot drift.
//!
//! - [`ops`]: the scalar operations (checked int and decimal arithmetic,
//!   finite floats, rounding, conversions, strings, time, vectors);
//! - [`decimal`]: the decimal fast paths, proven equal to rust_decimal;
//! - here: those operations dispatched on values ([`unary`], [`binary`],
//!   [`call`], [`extremum`]), the order and equality of values ([`order`],
//!   [`structural_eq`]), effect combining ([`combine`]) and the owned
//!   forms a value takes outside an evaluation ([`owned`], [`from_host`]).
//!
//! Adding a built-in: its typing in `ir::Builtin`, its checker entry in
//! the frontend, its meaning in [`call`] (and [`ops`] when it is a scalar
//! operation native code may inline).

pub mod budget;
pub mod error;
pub mod host;

pub mod ops;

use std::cmp::Ordering;
use std::rc::Rc;

use ir::{BinaryOp, Builtin, Combine, TypeId, TypeKind, TypeTable, UnaryOp};
use rust_decimal::Decimal;

use crate::semantics::error::EvalError;
use crate::semantics::host::HostFn;
use crate::value::Owned;
use crate::value::decimal::{self, Midpoint};
use crate::value::{Schema, Value, list_element, read, render};

/// Whether a value is `true` (absent and every non-bool are not).
pub fn truthy(value: &Value<'_>) -> bool {
    matches!(value, Value::Bool(true))
}

/// Orders two scalar values of one type; absent first.
pub fn order(l: &Value<'_>, r: &Value<'_>) -> Ordering {
    match (l, r) {
        (Value::Int(a), Value::Int(b))
        | (Value::Timestamp(a), Value::Timestamp(b))
        | (Value::Duration(a), Value::Duration(b)) => a.cmp(b),
        (Value::Decimal(a), Value::Decimal(b)) => decimal::cmp(*a, *b),
        (Value::Float(a), Value::Float(b)) => ops::float_cmp(*a, *b),
        (Value::Bool(a), Value::Bool(b)) => a.cmp(b),
        (Value::Str(_) | Value::Text(_), Value::Str(_) | Value::Text(_)) => {
            ops::compare_str(l.as_str(), r.as_str())
        }
        (Value::Absent, Value::Absent) => Ordering::Equal,
        (Value::Absent, _) => Ordering::Less,
        (_, Value::Absent) => Ordering::Greater,
        _ => Ordering::Equal,
    }
}

/// Equality of lists, records and optionals of type `ty`, part by part;
/// of scalars, by [`order`].
pub fn structural_eq(schema: &Schema<'_>, ty: TypeId, l: &Value<'_>, r: &Value<'_>) -> bool {
    match (schema.types.kind(ty), l, r) {
        (TypeKind::Optional(_), Value::Absent, Value::Absent) => true,
        (TypeKind::Optional(_), Value::Absent, _) | (TypeKind::Optional(_), _, Value::Absent) => false,
        (TypeKind::Optional(inner), _, _) => structural_eq(schema, *inner, l, r),
        (TypeKind::List(element), _, _) => {
            l.list_len() == r.list_len()
                && (0..l.list_len()).all(|i| {
                    let (a, b) =
                        (l.list_get(schema.layouts, *element, i), r.list_get(schema.layouts, *element, i));
                    structural_eq(schema, *element, &a, &b)
                })
        }
        (TypeKind::Record(fields), Value::Record(a), Value::Record(b)) => {
            fields.iter().enumerate().all(|(i, f)| {
                let offset = schema.layouts.field_offset(ty, i as u32);
                structural_eq(
                    schema,
                    f.ty,
                    &read(schema.layouts, *a, offset, f.ty),
                    &read(schema.layouts, *b, offset, f.ty),
                )
            })
        }
        _ => order(l, r) == Ordering::Equal,
    }
}

/// The value `sum` starts from for values of type `ty`.
pub fn zero_of(ty: TypeId) -> Value<'static> {
    match ty {
        TypeTable::DECIMAL => Value::Decimal(Decimal::ZERO),
        TypeTable::FLOAT => Value::Float(0.0),
        TypeTable::DURATION => Value::Duration(0),
        _ => Value::Int(0),
    }
}

/// Combines an effect's previous value with a newly set one under its
/// policy; `add` is the effect's addition (`BinaryOp::add_for` its type,
/// read from `Program::effect_adds`), which only `sum` uses.
pub fn combine<'a>(
    policy: Combine,
    add: BinaryOp,
    old: &Value<'a>,
    new: &Value<'a>,
) -> Result<Value<'a>, EvalError> {
    let pick = |better: bool| if better { new.clone() } else { old.clone() };
    Ok(match policy {
        Combine::Last => new.clone(),
        Combine::Max => pick(order(new, old) == Ordering::Greater),
        Combine::Min => pick(order(new, old) == Ordering::Less),
        Combine::Any => Value::Bool(truthy(old) || truthy(new)),
        Combine::All => Value::Bool(truthy(old) && truthy(new)),
        Combine::Sum => binary(add, old.clone(), new.clone())?,
    })
}

fn int(v: &Value<'_>) -> i64 {
    match v {
        Value::Int(i) | Value::Timestamp(i) | Value::Duration(i) => *i,
        _ => 0,
    }
}

fn dec(v: &Value<'_>) -> Decimal {
    match v {
        Value::Decimal(d) => *d,
        _ => Decimal::ZERO,
    }
}

fn float(v: &Value<'_>) -> f64 {
    match v {
        Value::Float(f) => *f,
        _ => 0.0,
    }
}

/// A unary operator on its operand.
pub fn unary<'a>(op: UnaryOp, v: Value<'a>) -> Result<Value<'a>, EvalError> {
    Ok(match op {
        UnaryOp::Not => Value::Bool(!truthy(&v)),
        UnaryOp::NegInt => Value::Int(ops::int_neg(int(&v))?),
        UnaryOp::NegDecimal => Value::Decimal(ops::dec_neg(dec(&v))),
        UnaryOp::NegFloat => Value::Float(-float(&v)),
        UnaryOp::NegDuration => Value::Duration(ops::duration_neg(int(&v))?),
        UnaryOp::IntToDecimal => Value::Decimal(ops::decimal_from_int(int(&v))),
    })
}

/// A binary operator on its operands.
pub fn binary<'a>(op: BinaryOp, l: Value<'a>, r: Value<'a>) -> Result<Value<'a>, EvalError> {
    use BinaryOp::*;
    Ok(match op {
        AddInt => Value::Int(ops::int_add(int(&l), int(&r))?),
        SubInt => Value::Int(ops::int_sub(int(&l), int(&r))?),
        MulInt => Value::Int(ops::int_mul(int(&l), int(&r))?),
        DivInt => Value::Int(ops::int_div(int(&l), int(&r))?),
        RemInt => Value::Int(ops::int_rem(int(&l), int(&r))?),
        AddDecimal => Value::Decimal(ops::dec_add(dec(&l), dec(&r))?),
        SubDecimal => Value::Decimal(ops::dec_sub(dec(&l), dec(&r))?),
        MulDecimal => Value::Decimal(ops::dec_mul(dec(&l), dec(&r))?),
        DivDecimal => Value::Decimal(ops::dec_div(dec(&l), dec(&r))?),
        RemDecimal => Value::Decimal(ops::dec_rem(dec(&l), dec(&r))?),
        AddFloat => Value::Float(ops::float_add(float(&l), float(&r))?),
        SubFloat => Value::Float(ops::float_sub(float(&l), float(&r))?),
        MulFloat => Value::Float(ops::float_mul(float(&l), float(&r))?),
        DivFloat => Value::Float(ops::float_div(float(&l), float(&r))?),
        RemFloat => Value::Float(ops::float_rem(float(&l), float(&r))?),
        Concat => Value::Text(Rc::from(format!("{}{}", l.as_str(), r.as_str()))),
        AddDuration => Value::Duration(ops::duration_add(int(&l), int(&r))?),
        SubDuration => Value::Duration(ops::duration_sub(int(&l), int(&r))?),
        AddTimestamp => Value::Timestamp(ops::timestamp_add(int(&l), int(&r))?),
        SubTimestamp => Value::Timestamp(ops::timestamp_sub(int(&l), int(&r))?),
        DiffTimestamps => Value::Duration(ops::timestamp_diff(int(&l), int(&r))?),
    })
}

/// `min(...)` or `max(...)` of `first` and `rest`: the first of equal
/// values wins.
pub fn extremum<'a>(func: Builtin, first: Value<'a>, rest: impl IntoIterator<Item = Value<'a>>) -> Value<'a> {
    let wanted = if func == Builtin::Min { Ordering::Less } else { Ordering::Greater };
    rest.into_iter()
        .fold(first, |best, candidate| if order(&candidate, &best) == wanted { candidate } else { best })
}

/// A built-in of at most two arguments (`a`, then `b` or absent), the
/// first of type `arg_ty`; `min`, `max` ([`extremum`]) and `now()` (the
/// evaluation's clock) are the caller's.
pub fn call<'a>(
    schema: &Schema<'_>,
    func: Builtin,
    arg_ty: TypeId,
    a: Value<'a>,
    b: Value<'a>,
) -> Result<Value<'a>, EvalError> {
    let text = |s: String| Value::Text(Rc::from(s));
    Ok(match (func, &a) {
        (Builtin::ToString, _) => {
            let mut out = String::new();
            render(schema, arg_ty, &a, &mut out);
            text(out)
        }
        (Builtin::Dot | Builtin::Cosine | Builtin::L2, _) => {
            let (x, y) = (floats(schema, &a), floats(schema, &b));
            Value::Float(match func {
                Builtin::Dot => ops::dot(&x, &y),
                Builtin::Cosine => ops::cosine(&x, &y),
                _ => ops::l2(&x, &y),
            }?)
        }
        (Builtin::Abs, Value::Int(i)) => Value::Int(ops::int_abs(*i)?),
        (Builtin::Abs, Value::Decimal(d)) => Value::Decimal(d.abs()),
        (Builtin::Abs, Value::Float(f)) => Value::Float(f.abs()),
        (Builtin::Abs, Value::Duration(d)) => Value::Duration(ops::duration_abs(*d)?),
        (Builtin::Round | Builtin::RoundHalfEven | Builtin::RoundHalfDown, Value::Decimal(d)) => {
            Value::Decimal(ops::dec_round(*d, int(&b), rounding(func))?)
        }
        (Builtin::Round | Builtin::RoundHalfEven | Builtin::RoundHalfDown, Value::Float(f)) => {
            Value::Float(ops::float_round(*f, int(&b), rounding(func))?)
        }
        (Builtin::Floor, Value::Decimal(d)) => Value::Decimal(d.floor()),
        (Builtin::Ceil, Value::Decimal(d)) => Value::Decimal(d.ceil()),
        (Builtin::Floor, Value::Float(f)) => Value::Float(f.floor()),
        (Builtin::Ceil, Value::Float(f)) => Value::Float(f.ceil()),
        (Builtin::ToInt, Value::Int(i)) => Value::Int(*i),
        (Builtin::ToInt, Value::Decimal(d)) => Value::Int(ops::int_from_decimal(*d)?),
        (Builtin::ToInt, Value::Float(f)) => Value::Int(ops::int_from_float(*f)?),
        (Builtin::ToInt, _) => Value::Int(ops::int_from_str(a.as_str())?),
        (Builtin::ToDecimal, Value::Int(i)) => Value::Decimal(ops::decimal_from_int(*i)),
        (Builtin::ToDecimal, Value::Decimal(d)) => Value::Decimal(*d),
        (Builtin::ToDecimal, Value::Float(f)) => Value::Decimal(ops::decimal_from_float(*f)?),
        (Builtin::ToDecimal, _) => Value::Decimal(ops::decimal_from_str(a.as_str())?),
        (Builtin::ToFloat, Value::Int(i)) => Value::Float(*i as f64),
        (Builtin::ToFloat, Value::Decimal(d)) => Value::Float(ops::float_from_decimal(*d)),
        (Builtin::ToFloat, Value::Float(f)) => Value::Float(*f),
        (Builtin::ToFloat, _) => Value::Float(ops::float_from_str(a.as_str())?),
        (Builtin::Len, Value::Str(_) | Value::Text(_)) => Value::Int(ops::str_len(a.as_str())),
        (Builtin::Len, _) => Value::Int(a.list_len() as i64),
        (Builtin::Lower, _) => text(a.as_str().to_lowercase()),
        (Builtin::Upper, _) => text(a.as_str().to_uppercase()),
        (Builtin::Trim, Value::Str(s)) => Value::Str(s.trim()),
        (Builtin::Trim, _) => text(a.as_str().trim().to_string()),
        (Builtin::StartsWith, _) => Value::Bool(a.as_str().starts_with(b.as_str())),
        (Builtin::EndsWith, _) => Value::Bool(a.as_str().ends_with(b.as_str())),
        (Builtin::Contains, _) => Value::Bool(a.as_str().contains(b.as_str())),
        (Builtin::Days, _) => Value::Int(ops::days(int(&a))),
        (Builtin::Hours, _) => Value::Int(ops::hours(int(&a))),
        (Builtin::ToTimestamp, _) => Value::Timestamp(ops::timestamp_from_str(a.as_str())?),
        (Builtin::ToDuration, _) => Value::Duration(ops::duration_from_str(a.as_str())?),
        _ => {
            return Err(EvalError::Argument(format!(
                "internal: `{}` on a value of type #{} it does not take",
                func.name(),
                arg_ty.0
            )));
        }
    })
}

/// The midpoint rule of a rounding built-in.
fn rounding(func: Builtin) -> Midpoint {
    Midpoint::of(func).unwrap_or(Midpoint::AwayFromZero)
}

/// The elements of a `list<float>`.
fn floats(schema: &Schema<'_>, list: &Value<'_>) -> Vec<f64> {
    (0..list.list_len())
        .map(|i| match list.list_get(schema.layouts, TypeTable::FLOAT, i) {
            Value::Float(f) => f,
            _ => 0.0,
        })
        .collect()
}

/// A value of type `ty` that outlives the evaluation (an effect's, a
/// host function's argument).
pub fn owned(schema: &Schema<'_>, ty: TypeId, value: &Value<'_>) -> Owned {
    match value {
        Value::Bool(b) => Owned::Bool(*b),
        Value::Int(i) => Owned::Int(*i),
        Value::Decimal(d) => Owned::Decimal(*d),
        Value::Float(f) => Owned::Float(*f),
        Value::Timestamp(t) => Owned::Timestamp(*t),
        Value::Duration(d) => Owned::Duration(*d),
        Value::Str(_) | Value::Text(_) => Owned::String(value.as_str().to_string()),
        Value::List(..) | Value::Items(_) => {
            let element = list_element(schema, ty);
            Owned::List(
                (0..value.list_len())
                    .map(|i| owned(schema, element, &value.list_get(schema.layouts, element, i)))
                    .collect(),
            )
        }
        Value::Record(record) => {
            let fields = schema.types.record_fields(ty).unwrap_or(&[]);
            let field = |(i, f): (usize, &ir::FieldDef)| {
                let offset = schema.layouts.field_offset(ty, i as u32);
                (f.name.clone(), owned(schema, f.ty, &read(schema.layouts, *record, offset, f.ty)))
            };
            Owned::Record(fields.iter().enumerate().map(field).collect())
        }
        Value::Absent => Owned::List(Vec::new()),
    }
}

/// Calls `host` with `args`: both engines go through here, so a host
/// function's result, and its failure as an evaluation error, are the same
/// from the interpreter and from native code.
pub(crate) fn call_host(host: &HostFn, args: &[Owned]) -> Result<Value<'static>, EvalError> {
    match host.call(args) {
        Ok(result) => Ok(from_host(result)),
        Err(message) => Err(EvalError::Host { name: host.name.clone(), message }),
    }
}

/// A host function's result as a value.
pub fn from_host(value: Owned) -> Value<'static> {
    match value {
        Owned::Bool(b) => Value::Bool(b),
        Owned::Int(i) => Value::Int(i),
        Owned::Decimal(d) => Value::Decimal(d),
        Owned::Float(f) => Value::Float(f),
        Owned::String(s) => Value::Text(Rc::from(s)),
        Owned::Timestamp(t) => Value::Timestamp(t),
        Owned::Duration(d) => Value::Duration(d),
        Owned::List(items) => Value::Items(items.into_iter().map(from_host).collect()),
        // Never: `HostFn::call` checks the result against the function's
        // signature, which has no records.
        Owned::Record(_) => Value::Absent,
    }
}
