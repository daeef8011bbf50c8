//! Rule guards: the comparisons the batch entry evaluates for two records
//! at once, with 128-bit vectors, before the entry point runs them.
//!
//! A rule's guard is the first thing its condition evaluates (the
//! condition itself, or the left-most operand of its `&&` chain, looking
//! through lets) when that is a comparison of a required input field of a
//! primitive type with a constant (`amount <= 0`, `age_days < 30`,
//! `flagged`, `!flagged`). When the guard is false the condition is false
//! and nothing else of it is evaluated, so the rule cannot fire, fail or
//! cost anything: the batch entry's vector pass ([`crate::batch`]) sets
//! the rule's bit in the record's guard word for every record whose guard
//! is *definitely* false, and the entry point skips the rules whose bit is
//! set. A single evaluation leaves the word zero and evaluates every rule,
//! so both paths give the same bytes by construction.
//!
//! Only rules the entry point computes inline are guarded (a rule that
//! `rules.<id>` refers to has its own function and memo), at most
//! [`MAX_GUARDS`] of them, one bit each.
//!
//! Decimals compare as scaled integers: a record's decimal is definitely
//! on the false side when its mantissa fits 63 bits and its scale is at
//! most [`MAX_GUARD_SCALE`], against the constant rescaled exactly to that scale
//! at compile time (rounded toward the side that keeps the comparison
//! exact). Any other decimal leaves the rule to the entry point.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use ir::{CmpOp, Const, ExprId, ExprKind, TypeTable as T, UnaryOp};
use runtime::program::Program;
use rust_decimal::Decimal;

use crate::conditions::{float_cc, int_cc};

/// The most rules one contract guards: one bit each of the guard word.
pub const MAX_GUARDS: usize = 64;

/// The largest decimal scale a guard decides; records with more places
/// leave the rule to the entry point.
pub const MAX_GUARD_SCALE: u32 = 8;

/// One rule's guard.
#[derive(Clone, Debug, PartialEq)]
pub struct Guard {
    /// The rule's index.
    pub rule: usize,
    /// The input slot the guard reads.
    pub slot: u32,
    pub test: Test,
}

/// What a guard computes from the slot's words; the guard holds when
/// the comparison does.
#[derive(Clone, Debug, PartialEq)]
pub enum Test {
    /// Ints, timestamps, durations and bools: the first word against
    /// `value`.
    Int { cc: IntCC, value: i64 },
    /// The first word as an `f64` against `value` (the comparison the
    /// entry point makes, so NaN compares alike).
    Float { cc: FloatCC, value: f64 },
    /// The signed mantissa against the constant at the record's scale,
    /// `thresholds[scale]`; `None` where it does not fit an `i64`.
    Decimal { cc: IntCC, thresholds: Vec<Option<i64>> },
}

/// The guards of `program`'s rules, in rule order.
pub fn guards(program: &Program) -> Vec<Guard> {
    let c = &program.contract;
    (0..c.rules.len())
        .filter(|&i| !program.rules[i].referenced())
        .filter_map(|i| {
            let leaf = first_operand(c, c.rules[i].when);
            test(program, leaf).map(|(slot, test)| Guard { rule: i, slot, test })
        })
        .take(MAX_GUARDS)
        .collect()
}

/// The sub-expression a condition evaluates first, and whose falseness
/// makes the whole condition false: down `&&`'s left operands and into
/// lets' values.
fn first_operand(c: &ir::Contract, mut id: ExprId) -> ExprId {
    loop {
        match &c.expr(id).kind {
            ExprKind::And { lhs, .. } => id = *lhs,
            ExprKind::Let(l) => id = c.lets[l.index()].value,
            _ => return id,
        }
    }
}

/// The slot and test of `leaf` when it is a guard.
fn test(program: &Program, leaf: ExprId) -> Option<(u32, Test)> {
    let c = &program.contract;
    match &c.expr(leaf).kind {
        ExprKind::Compare { op, lhs, rhs } => {
            if let (Some(slot), Some(value)) = (input_slot(program, *lhs), constant(c, *rhs)) {
                compare(*op, c.expr(*lhs).ty, value).map(|t| (slot, t))
            } else if let (Some(value), Some(slot)) = (constant(c, *lhs), input_slot(program, *rhs)) {
                compare(mirrored(*op), c.expr(*rhs).ty, value).map(|t| (slot, t))
            } else {
                None
            }
        }
        ExprKind::Unary { op: UnaryOp::Not, arg } if c.expr(*arg).ty == T::BOOL => {
            input_slot(program, *arg).map(|slot| (slot, Test::Int { cc: IntCC::Equal, value: 0 }))
        }
        _ if c.expr(leaf).ty == T::BOOL => {
            input_slot(program, leaf).map(|slot| (slot, Test::Int { cc: IntCC::NotEqual, value: 0 }))
        }
        _ => None,
    }
}

/// The slot of a required input field (the type of an optional one is
/// not a primitive id, so it never gets here as one).
fn input_slot(program: &Program, id: ExprId) -> Option<u32> {
    program.input_offset(id)
}

fn constant(c: &ir::Contract, id: ExprId) -> Option<&Const> {
    match &c.expr(id).kind {
        ExprKind::Const(value) => Some(value),
        _ => None,
    }
}

/// `a op b` as `b op' a`.
fn mirrored(op: CmpOp) -> CmpOp {
    match op {
        CmpOp::Lt => CmpOp::Gt,
        CmpOp::Le => CmpOp::Ge,
        CmpOp::Gt => CmpOp::Lt,
        CmpOp::Ge => CmpOp::Le,
        same => same,
    }
}

/// The test `field op value` for a field of type `ty`.
fn compare(op: CmpOp, ty: ir::TypeId, value: &Const) -> Option<Test> {
    let int = |value: i64| Some(Test::Int { cc: int_cc(op), value });
    match (ty, value) {
        (T::INT, Const::Int(v)) | (T::TIMESTAMP, Const::Timestamp(v)) | (T::DURATION, Const::Duration(v)) => {
            int(*v)
        }
        (T::BOOL, Const::Bool(v)) => int(i64::from(*v)),
        (T::FLOAT, Const::Float(v)) => Some(Test::Float { cc: float_cc(op), value: *v }),
        (T::DECIMAL, Const::Decimal(v)) => Some(decimal(op, *v)),
        _ => None,
    }
}

/// `mantissa / 10^scale op value` as `mantissa op' threshold` for every
/// scale up to [`MAX_GUARD_SCALE`]. Mantissas a guard decides lie strictly
/// above `i64::MIN`, which stands for "never equal".
fn decimal(op: CmpOp, value: Decimal) -> Test {
    let (mantissa, scale) = (value.mantissa(), value.scale());
    let thresholds = (0..=MAX_GUARD_SCALE)
        .map(|s| {
            // value * 10^s, as the quotient and remainder of whole units.
            let (q, r) = if s >= scale {
                (mantissa.checked_mul(10i128.checked_pow(s - scale)?)?, 0)
            } else {
                let d = 10i128.checked_pow(scale - s)?;
                (mantissa.div_euclid(d), mantissa.rem_euclid(d))
            };
            let (floor, ceil) = (q, q + i128::from(r != 0));
            let threshold = match op {
                CmpOp::Lt | CmpOp::Ge => ceil,
                CmpOp::Le | CmpOp::Gt => floor,
                CmpOp::Eq | CmpOp::Ne if r != 0 => i128::from(i64::MIN),
                CmpOp::Eq | CmpOp::Ne => q,
            };
            i64::try_from(threshold).ok().filter(|t| *t != i64::MIN || r != 0)
        })
        .collect();
    Test::Decimal { cc: int_cc(op), thresholds }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `mantissa / 10^scale op value`, as the guard decides it
    /// (`None`: left to the entry point).
    fn decide(test: &Test, op: CmpOp, mantissa: i64, scale: u32) -> Option<bool> {
        let Test::Decimal { cc, thresholds } = test else { panic!("a decimal test") };
        assert_eq!(*cc, int_cc(op), "the vector pass compares with the operator's condition code");
        let threshold = (*thresholds.get(scale as usize)?)?;
        Some(op.holds(mantissa.cmp(&threshold)))
    }

    #[test]
    fn decimal_thresholds_decide_as_exact_comparison_does() {
        let constants =
            ["0", "2.5", "-2.5", "1000", "0.015", "-0.001", "99999999.999999999", "7.12345678901"];
        let values: Vec<(i64, u32)> = (-30i64..=30)
            .flat_map(|m| (0..=MAX_GUARD_SCALE).map(move |s| (m, s)))
            .chain([(25, 1), (-25, 1), (250, 2), (2500, 3), (15, 3), (-1, 3), (i64::MAX, 0), (-i64::MAX, 4)])
            .collect();
        for text in constants {
            let constant: Decimal = text.parse().expect("a decimal");
            for op in CmpOp::ALL {
                let test = decimal(op, constant);
                for &(mantissa, scale) in &values {
                    let value = Decimal::from_i128_with_scale(i128::from(mantissa), scale);
                    let exact = op.holds(value.cmp(&constant));
                    if let Some(decided) = decide(&test, op, mantissa, scale) {
                        assert_eq!(decided, exact, "{mantissa}e-{scale} {} {text}", op.symbol());
                    }
                }
            }
        }
    }

    #[test]
    fn thresholds_that_do_not_fit_leave_the_rule_to_the_entry_point() {
        let huge: Decimal = "79228162514264337593543950335".parse().expect("the largest decimal");
        let Test::Decimal { thresholds, .. } = decimal(CmpOp::Lt, huge) else { panic!() };
        assert!(thresholds.iter().all(Option::is_none), "{thresholds:?}");
        let Test::Decimal { thresholds, .. } = decimal(CmpOp::Gt, Decimal::new(125, 2)) else { panic!() };
        assert_eq!(thresholds[0], Some(1));
        assert_eq!(thresholds[2], Some(125));
        assert_eq!(thresholds[4], Some(12500));
    }
}
