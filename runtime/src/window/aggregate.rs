//! A record's aggregates over its window: one pass over its key's records
//! in the order they entered, folding each aggregate with the semantics
//! module's additions and orders (`ops::int_add`, `ops::duration_add`,
//! `ops::dec_add`, `ops::float_add`, `decimal::cmp`, `ops::float_cmp`).
//!
//! - `count`: the records in the window;
//! - `sum`: the first value, then each next one added in entry order; an
//!   overflow anywhere fails the sum (of this record's window only);
//! - `max`, `min`: the first entered of the greatest (least) values, so
//!   `1.0` and then `1.00` keep `1.0`;
//! - `distinct`: the number of different values, by their bytes (strings
//!   byte for byte, ints, bools).

use std::cmp::Ordering;
use std::ops::Range;

use ir::AggregateKind;

use super::key_records::{KeyRecords, Stored};
use super::shape::{Aggregated, ArgKind};
use crate::semantics::ops;
use crate::value::decimal;

/// A value a `distinct` aggregate met: the aggregate's index and where
/// the value's bytes lie in the key's buffer.
#[derive(Clone, Debug)]
pub(super) struct Met {
    aggregate: usize,
    place: Range<usize>,
}

/// Writes to `out` each of `aggregates` over the records of `records`
/// whose time is `in_window`, one per aggregate in order. `met` is scratch
/// space, kept by the caller so a warm store does not allocate.
pub(super) fn aggregate(
    aggregates: &[(AggregateKind, ArgKind)],
    records: &KeyRecords,
    in_window: impl Fn(i64) -> bool,
    out: &mut Vec<Aggregated>,
    met: &mut Vec<Met>,
) {
    out.clear();
    out.resize(aggregates.len(), Aggregated::Int(0));
    met.clear();
    let mut first = true;
    for record in records.iter().filter(|record| in_window(record.time)) {
        let mut fields = record.fields;
        for (index, (&(kind, arg), acc)) in aggregates.iter().zip(out.iter_mut()).enumerate() {
            if kind == AggregateKind::Count {
                count(acc);
                continue;
            }
            let Some(field) = fields.next(arg) else { break };
            match kind {
                AggregateKind::Distinct => met.push(Met { aggregate: index, place: field.place }),
                _ if first => *acc = number(field.value),
                AggregateKind::Sum => add(acc, number(field.value), arg),
                AggregateKind::Max => keep_better(acc, number(field.value), Ordering::Greater),
                AggregateKind::Min => keep_better(acc, number(field.value), Ordering::Less),
                AggregateKind::Count => {}
            }
        }
        first = false;
    }
    count_distinct(met, records.bytes(), out);
}

fn count(acc: &mut Aggregated) {
    if let Aggregated::Int(n) = acc {
        *n = n.saturating_add(1);
    }
}

/// A numeric field as an aggregate's value (a shape's `sum`, `max` and
/// `min` take numbers only).
fn number(value: Stored<'_>) -> Aggregated {
    match value {
        Stored::Int(int) => Aggregated::Int(int),
        Stored::Decimal(decimal) => Aggregated::Decimal(decimal),
        Stored::Float(float) => Aggregated::Float(float),
        Stored::Bool(_) | Stored::Str(_) => Aggregated::Int(0),
    }
}

/// `acc + value` for a sum of `arg`s; a failed sum stays failed.
fn add(acc: &mut Aggregated, value: Aggregated, arg: ArgKind) {
    let sum = match (&*acc, value) {
        (Aggregated::Int(a), Aggregated::Int(b)) if arg == ArgKind::Duration => {
            ops::duration_add(*a, b).map(Aggregated::Int)
        }
        (Aggregated::Int(a), Aggregated::Int(b)) => ops::int_add(*a, b).map(Aggregated::Int),
        (Aggregated::Decimal(a), Aggregated::Decimal(b)) => ops::dec_add(*a, b).map(Aggregated::Decimal),
        (Aggregated::Float(a), Aggregated::Float(b)) => ops::float_add(*a, b).map(Aggregated::Float),
        _ => return,
    };
    *acc = sum.unwrap_or_else(Aggregated::Failed);
}

/// Replaces `acc` by `value` when `value` orders `wanted` against it: an
/// equal value never replaces, so the first entered is kept.
fn keep_better(acc: &mut Aggregated, value: Aggregated, wanted: Ordering) {
    let order = match (&value, &*acc) {
        (Aggregated::Int(a), Aggregated::Int(b)) => a.cmp(b),
        (Aggregated::Decimal(a), Aggregated::Decimal(b)) => decimal::cmp(*a, *b),
        (Aggregated::Float(a), Aggregated::Float(b)) => ops::float_cmp(*a, *b),
        _ => Ordering::Equal,
    };
    if order == wanted {
        *acc = value;
    }
}

/// Each `distinct` aggregate's number of different values among those met:
/// sorted by aggregate and bytes, one for each run of equal bytes.
fn count_distinct(met: &mut [Met], bytes: &[u8], out: &mut [Aggregated]) {
    let value = |m: &Met| bytes.get(m.place.clone()).unwrap_or_default();
    met.sort_unstable_by(|a, b| a.aggregate.cmp(&b.aggregate).then_with(|| value(a).cmp(value(b))));
    let mut previous: Option<&Met> = None;
    for m in met.iter() {
        if previous.is_none_or(|p| p.aggregate != m.aggregate || value(p) != value(m))
            && let Some(acc) = out.get_mut(m.aggregate)
        {
            count(acc);
        }
        previous = Some(m);
    }
}
