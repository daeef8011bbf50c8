//! The window store's tests: a table of cases (each step an observation
//! and its aggregates), the store against a model that keeps every record
//! (random sequences with random bounds and withdrawals), memory per key,
//! and many threads on one shared store.

use std::str::FromStr;
use std::sync::Arc;
use std::thread;

use ir::AggregateKind::{self, Count, Distinct, Max, Min, Sum};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};
use rust_decimal::Decimal;

use super::*;
use crate::semantics::error::EvalError;
use crate::semantics::ops;
use crate::value::decimal;
use crate::window::ArgKind::{self, Bool, Duration, Float, Int, Str, Timestamp};
use crate::window::SharedWindowStore;

const COUNT: (AggregateKind, ArgKind) = (Count, ArgKind::None);
const NONE: Arg<'static> = Arg::None;

fn d(text: &str) -> Decimal {
    Decimal::from_str(text).unwrap()
}

fn dec(text: &str) -> Arg<'static> {
    Arg::Decimal(d(text))
}

fn shape(span: i64, grace: i64, aggregates: &[(AggregateKind, ArgKind)]) -> WindowShape {
    WindowShape { span, grace, aggregates: aggregates.to_vec() }
}

/// An aggregate as the cases write it: `3`, `1.50d`, `0.5f`, `error: ...`.
fn render(aggregated: &Aggregated) -> String {
    match aggregated {
        Aggregated::Int(int) => int.to_string(),
        Aggregated::Decimal(decimal) => format!("{decimal}d"),
        Aggregated::Float(float) => format!("{float:?}f"),
        Aggregated::Failed(error) => format!("error: {error}"),
    }
}

/// Limits of `keys` keys and no other bound.
fn keys(keys: Option<usize>) -> WindowLimits {
    WindowLimits { keys, ..WindowLimits::NONE }
}

/// An observation as the cases write it: `late`, `refused`, `full: ...`,
/// `incomplete: ...`, or the aggregates joined by ` | `.
fn shown(observation: Observation, out: &[Aggregated]) -> String {
    match observation {
        Observation::Full(bound) | Observation::Incomplete(_, bound) => {
            assert!(out.is_empty(), "a full record's out is empty: {out:?}");
            let what = if matches!(observation, Observation::Full(_)) { "full" } else { "incomplete" };
            format!("{what}: {bound}")
        }
        Observation::Late => {
            assert!(out.is_empty(), "a late record's out is empty: {out:?}");
            "late".to_string()
        }
        Observation::Refused => {
            let internal = |a: &Aggregated| matches!(a, Aggregated::Failed(EvalError::Argument(m)) if m.starts_with("internal: "));
            assert!(out.iter().all(internal), "a refused record's out: {out:?}");
            "refused".to_string()
        }
        Observation::Entered(_) => out.iter().map(render).collect::<Vec<_>>().join(" | "),
    }
}

struct Step {
    key: Key<'static>,
    time: i64,
    args: Vec<Arg<'static>>,
    expect: &'static str,
}

fn at(key: impl Into<Key<'static>>, time: i64, args: &[Arg<'static>], expect: &'static str) -> Step {
    Step { key: key.into(), time, args: args.to_vec(), expect }
}

struct Case {
    name: &'static str,
    shape: WindowShape,
    limits: WindowLimits,
    steps: Vec<Step>,
    /// Keys held, evicted and read as full after the last step.
    end: (usize, u64, u64),
}

fn case(name: &'static str, shape: WindowShape, steps: Vec<Step>, end: (usize, u64, u64)) -> Case {
    Case { name, shape, limits: WindowLimits::NONE, steps, end }
}

fn bounded(max_keys: usize, case: Case) -> Case {
    Case { limits: keys(Some(max_keys)), ..case }
}

fn limited(limits: WindowLimits, case: Case) -> Case {
    Case { limits, ..case }
}

fn cases() -> Vec<Case> {
    let big = Arg::Int(i64::MAX);
    vec![
        case(
            "the window is (t - span, t]: t - span is out, t - span + 1 in",
            shape(10, 0, &[COUNT, (Min, Timestamp)]),
            vec![
                at("a", 0, &[NONE, Arg::Int(0)], "1 | 0"),
                at("a", 9, &[NONE, Arg::Int(9)], "2 | 0"),
                at("a", 10, &[NONE, Arg::Int(10)], "2 | 9"),
                at("a", 19, &[NONE, Arg::Int(19)], "2 | 10"),
                at("a", 19, &[NONE, Arg::Int(19)], "3 | 10"),
            ],
            (1, 0, 0),
        ),
        case(
            "a record out of order within grace sees its own span only, not later records",
            shape(10, 5, &[COUNT, (Sum, Int), (Max, Timestamp)]),
            vec![
                at("a", 20, &[NONE, Arg::Int(1), Arg::Int(20)], "1 | 1 | 20"),
                at("a", 16, &[NONE, Arg::Int(2), Arg::Int(16)], "1 | 2 | 16"),
                at("a", 15, &[NONE, Arg::Int(4), Arg::Int(15)], "1 | 4 | 15"),
                at("a", 14, &[NONE, Arg::Int(8), Arg::Int(14)], "late"),
                at("a", 25, &[NONE, Arg::Int(16), Arg::Int(25)], "3 | 19 | 25"),
                at("a", 21, &[NONE, Arg::Int(32), Arg::Int(21)], "4 | 39 | 21"),
            ],
            (1, 0, 0),
        ),
        case(
            "a late record does not enter and changes nothing",
            shape(10, 2, &[COUNT, (Sum, Int)]),
            vec![
                at("a", 100, &[NONE, Arg::Int(1)], "1 | 1"),
                at("a", 97, &[NONE, Arg::Int(1000)], "late"),
                at("a", 98, &[NONE, Arg::Int(2)], "1 | 2"),
                at("a", 101, &[NONE, Arg::Int(4)], "3 | 7"),
                at("b", 100, &[NONE, Arg::Int(8)], "1 | 8"),
            ],
            (2, 0, 0),
        ),
        case(
            "grace 0: behind latest is late, at latest is not",
            shape(5, 0, &[COUNT]),
            vec![
                at("a", 10, &[NONE], "1"),
                at("a", 9, &[NONE], "late"),
                at("a", 10, &[NONE], "2"),
                at("a", 11, &[NONE], "3"),
            ],
            (1, 0, 0),
        ),
        case(
            "an int sum that overflows anywhere in entry order fails for its record only",
            shape(10, 0, &[COUNT, (Sum, Int)]),
            vec![
                at("a", 1, &[NONE, big], "1 | 9223372036854775807"),
                at("a", 2, &[NONE, Arg::Int(1)], "2 | error: int overflow"),
                at("a", 3, &[NONE, Arg::Int(-1)], "3 | error: int overflow"),
                at("a", 11, &[NONE, Arg::Int(5)], "3 | 5"),
                at("a", 12, &[NONE, Arg::Int(i64::MIN)], "3 | -9223372036854775804"),
            ],
            (1, 0, 0),
        ),
        case(
            "a decimal sum that overflows fails, and recovers once the big one leaves the span",
            shape(10, 0, &[COUNT, (Sum, ArgKind::Decimal)]),
            vec![
                at("a", 1, &[NONE, Arg::Decimal(Decimal::MAX)], "1 | 79228162514264337593543950335d"),
                at("a", 2, &[NONE, dec("1")], "2 | error: decimal overflow"),
                at("a", 11, &[NONE, dec("0.50")], "2 | 1.50d"),
            ],
            (1, 0, 0),
        ),
        case(
            "a float sum adds in entry order and fails when not finite",
            shape(10, 0, &[(Sum, Float)]),
            vec![
                at("a", 1, &[Arg::Float(1e308)], "1e308f"),
                at("a", 2, &[Arg::Float(1e308)], "error: float sum is not a finite number"),
                at("a", 11, &[Arg::Float(0.1)], "1e308f"),
                at("a", 12, &[Arg::Float(0.2)], "0.30000000000000004f"),
            ],
            (1, 0, 0),
        ),
        case(
            "a sum of durations overflows as a duration",
            shape(10, 0, &[(Sum, Duration)]),
            vec![
                at("a", 0, &[big], "9223372036854775807"),
                at("a", 1, &[Arg::Int(1)], "error: duration overflow"),
            ],
            (1, 0, 0),
        ),
        case(
            "max and min keep the first entered of equal values",
            shape(10, 0, &[(Max, ArgKind::Decimal), (Min, ArgKind::Decimal), (Max, Float), (Min, Float)]),
            vec![
                at(
                    "a",
                    0,
                    &[dec("1.0"), dec("1.00"), Arg::Float(0.0), Arg::Float(-0.0)],
                    "1.0d | 1.00d | 0.0f | -0.0f",
                ),
                at(
                    "a",
                    1,
                    &[dec("1.00"), dec("1.0"), Arg::Float(-0.0), Arg::Float(0.0)],
                    "1.0d | 1.00d | 0.0f | -0.0f",
                ),
                at(
                    "a",
                    2,
                    &[dec("2"), dec("0.5"), Arg::Float(1.5), Arg::Float(-1.5)],
                    "2d | 0.5d | 1.5f | -1.5f",
                ),
                at(
                    "a",
                    3,
                    &[dec("2.00"), dec("0.50"), Arg::Float(1.5), Arg::Float(-1.5)],
                    "2d | 0.5d | 1.5f | -1.5f",
                ),
                at(
                    "a",
                    11,
                    &[dec("-1"), dec("-1"), Arg::Float(-1.0), Arg::Float(-1.0)],
                    "2d | -1d | 1.5f | -1.5f",
                ),
            ],
            (1, 0, 0),
        ),
        case(
            "distinct counts strings byte for byte, ints and bools",
            shape(100, 0, &[(Distinct, Str), (Distinct, Int), (Distinct, Bool)]),
            vec![
                at("a", 0, &[Arg::Str("DE"), Arg::Int(1), Arg::Bool(true)], "1 | 1 | 1"),
                at("a", 1, &[Arg::Str("FR"), Arg::Int(1), Arg::Bool(true)], "2 | 1 | 1"),
                at("a", 2, &[Arg::Str("DE"), Arg::Int(-1), Arg::Bool(false)], "2 | 2 | 2"),
                at("a", 3, &[Arg::Str(""), Arg::Int(2), Arg::Bool(true)], "3 | 3 | 2"),
                at("a", 4, &[Arg::Str("de"), Arg::Int(1), Arg::Bool(false)], "4 | 3 | 2"),
                at("a", 5, &[Arg::Str("é"), Arg::Int(2), Arg::Bool(true)], "5 | 3 | 2"),
                at("a", 6, &[Arg::Str("e\u{301}"), Arg::Int(3), Arg::Bool(true)], "6 | 4 | 2"),
                at("a", 7, &[Arg::Str("D"), Arg::Int(i64::MIN), Arg::Bool(true)], "7 | 5 | 2"),
            ],
            (1, 0, 0),
        ),
        case(
            "distinct counts the window only",
            shape(2, 0, &[(Distinct, Str)]),
            vec![
                at("a", 0, &[Arg::Str("x")], "1"),
                at("a", 1, &[Arg::Str("x")], "1"),
                at("a", 2, &[Arg::Str("y")], "2"),
                at("a", 3, &[Arg::Str("x")], "2"),
                at("a", 4, &[Arg::Str("x")], "1"),
            ],
            (1, 0, 0),
        ),
        case(
            "every aggregate at once; the int key 1 and the string key \"1\" are two keys",
            shape(10, 0, &[COUNT, (Sum, ArgKind::Decimal), (Distinct, Str), (Max, Int), (Min, Duration)]),
            vec![
                at(
                    1,
                    0,
                    &[NONE, dec("10.00"), Arg::Str("DE"), Arg::Int(5), Arg::Int(7)],
                    "1 | 10.00d | 1 | 5 | 7",
                ),
                at("1", 0, &[NONE, dec("1"), Arg::Str("FR"), Arg::Int(3), Arg::Int(3)], "1 | 1d | 1 | 3 | 3"),
                at(
                    1,
                    5,
                    &[NONE, dec("0.5"), Arg::Str("FR"), Arg::Int(4), Arg::Int(9)],
                    "2 | 10.50d | 2 | 5 | 7",
                ),
            ],
            (2, 0, 0),
        ),
        case(
            "a record far in the future of one key changes nothing of another",
            shape(10, 5, &[COUNT]),
            vec![
                at("a", 0, &[NONE], "1"),
                at("a", 4, &[NONE], "2"),
                at("b", i64::MAX, &[NONE], "1"),
                at("a", 8, &[NONE], "3"),
                // a's own time moves its window: 0 leaves at 10.
                at("a", 10, &[NONE], "3"),
                at("b", 0, &[NONE], "late"),
            ],
            (2, 0, 0),
        ),
        limited(
            WindowLimits { key_records: Some(2), ..WindowLimits::NONE },
            case(
                "past a key's records bound a record is turned away, and windows that reach it read as the bound",
                shape(10, 0, &[COUNT]),
                vec![
                    at("a", 0, &[NONE], "1"),
                    at("a", 1, &[NONE], "2"),
                    at("a", 2, &[NONE], "full: one key holds at most 2 records"),
                    at("b", 2, &[NONE], "1"),
                    at("a", 3, &[NONE], "full: one key holds at most 2 records"),
                    // At 10, 0 is out of reach: room for one. It enters, but
                    // (0, 10] reaches the turned-away 2 and 3.
                    at("a", 10, &[NONE], "incomplete: one key holds at most 2 records"),
                    at("a", 11, &[NONE], "incomplete: one key holds at most 2 records"),
                    // 10 and 11 are in reach of 13: turned away.
                    at("a", 13, &[NONE], "full: one key holds at most 2 records"),
                    at("a", 21, &[NONE], "incomplete: one key holds at most 2 records"),
                    at("a", 22, &[NONE], "incomplete: one key holds at most 2 records"),
                    // (90, 100] reaches no turned-away record: whole again.
                    at("a", 100, &[NONE], "1"),
                ],
                (2, 0, 7),
            ),
        ),
        limited(
            WindowLimits { key_bytes: Some(40), ..WindowLimits::NONE },
            case(
                "past a key's bytes bound a record is turned away; a key longer than the bound is never held",
                shape(10, 0, &[(Distinct, Str)]),
                vec![
                    at("a", 0, &[Arg::Str("x")], "1"),
                    at(
                        "a",
                        1,
                        &[Arg::Str("a string of thirty bytes......")],
                        "full: one key holds at most 40 bytes",
                    ),
                    at("a", 1, &[Arg::Str("y")], "incomplete: one key holds at most 40 bytes"),
                    at(
                        "a key of forty-one bytes, over the bound",
                        0,
                        &[Arg::Str("x")],
                        "full: one key holds at most 40 bytes",
                    ),
                ],
                (1, 0, 3),
            ),
        ),
        bounded(
            2,
            case(
                "past max_keys the least recently entered key is evicted",
                shape(100, 100, &[COUNT]),
                vec![
                    at("a", 0, &[NONE], "1"),
                    at("b", 0, &[NONE], "1"),
                    at("a", 1, &[NONE], "2"),
                    at("c", 1, &[NONE], "1"),
                    at("a", 2, &[NONE], "3"),
                    at("b", 2, &[NONE], "1"),
                    at("a", 3, &[NONE], "4"),
                ],
                (2, 2, 0),
            ),
        ),
        bounded(
            2,
            case(
                "a late record does not make its key recent",
                shape(100, 0, &[COUNT]),
                vec![
                    at("a", 10, &[NONE], "1"),
                    at("b", 10, &[NONE], "1"),
                    at("a", 5, &[NONE], "late"),
                    at("c", 10, &[NONE], "1"),
                    at("b", 10, &[NONE], "2"),
                    at("a", 10, &[NONE], "1"),
                ],
                (2, 2, 0),
            ),
        ),
        bounded(
            0,
            case(
                "max_keys 0 holds one key",
                shape(100, 0, &[COUNT]),
                vec![
                    at("a", 0, &[NONE], "1"),
                    at("a", 1, &[NONE], "2"),
                    at("b", 1, &[NONE], "1"),
                    at("a", 2, &[NONE], "1"),
                ],
                (1, 2, 0),
            ),
        ),
        case(
            "times, span and grace at i64's extremes",
            shape(i64::MAX, i64::MAX, &[COUNT, (Min, Timestamp), (Max, Timestamp)]),
            vec![
                at(
                    "a",
                    i64::MIN,
                    &[NONE, Arg::Int(i64::MIN), Arg::Int(i64::MIN)],
                    "1 | -9223372036854775808 | -9223372036854775808",
                ),
                at(
                    "a",
                    i64::MAX,
                    &[NONE, Arg::Int(i64::MAX), Arg::Int(i64::MAX)],
                    "1 | 9223372036854775807 | 9223372036854775807",
                ),
                at("a", 0, &[NONE, Arg::Int(0), Arg::Int(0)], "1 | 0 | 0"),
                at("a", 1, &[NONE, Arg::Int(1), Arg::Int(1)], "2 | 0 | 1"),
                at("a", -1, &[NONE, Arg::Int(-1), Arg::Int(-1)], "late"),
                at(
                    "b",
                    i64::MIN,
                    &[NONE, Arg::Int(i64::MIN), Arg::Int(i64::MIN)],
                    "1 | -9223372036854775808 | -9223372036854775808",
                ),
            ],
            (2, 0, 0),
        ),
        case(
            "the narrowest window at i64's extremes",
            shape(1, 0, &[COUNT]),
            vec![
                at("a", i64::MIN, &[NONE], "1"),
                at("a", i64::MIN, &[NONE], "2"),
                at("a", i64::MIN + 1, &[NONE], "1"),
                at("b", i64::MAX, &[NONE], "1"),
                at("b", i64::MAX, &[NONE], "2"),
                at("a", i64::MIN + 1, &[NONE], "2"),
            ],
            (2, 0, 0),
        ),
        case(
            "arguments that do not fit the shape are refused and change nothing",
            shape(10, 0, &[COUNT, (Sum, Int)]),
            vec![
                at("a", 0, &[NONE], "refused"),
                at("a", 0, &[NONE, dec("1")], "refused"),
                at("a", 0, &[Arg::Int(1), Arg::Int(1)], "refused"),
                at("a", 0, &[NONE, Arg::Int(1), NONE], "refused"),
                at("a", 0, &[NONE, Arg::Int(1)], "1 | 1"),
            ],
            (1, 0, 0),
        ),
    ]
}

/// Runs a case on a [`WindowStore`], and on a [`SharedWindowStore`]
/// when it has no key bound (a bound is split over shards).
fn check(case: &Case) {
    let name = case.name;
    let mut store =
        WindowStore::new(case.shape.clone(), case.limits).unwrap_or_else(|e| panic!("{name}: {e}"));
    let shared = SharedWindowStore::new(case.shape.clone(), case.limits).unwrap();
    let mut out = vec![Aggregated::Int(-1)];
    for (i, step) in case.steps.iter().enumerate() {
        let observation = store.observe(step.key, step.time, &step.args, &mut out);
        let what = format!("{name}: step {i} ({:?} at {})", step.key, step.time);
        assert_eq!(shown(observation, &out), step.expect, "{what}");
        if case.limits.keys.is_none() {
            let observation = shared.observe(step.key, step.time, &step.args, &mut out);
            assert_eq!(shown(observation, &out), step.expect, "{what}, shared");
        }
    }
    assert_eq!((store.keys(), store.evicted(), store.full()), case.end, "{name}: keys, evicted, full");
}

#[test]
fn window_cases() {
    for case in cases() {
        check(&case);
    }
}

#[test]
fn shapes_the_store_cannot_keep_are_refused() {
    let refused = [
        (shape(0, 0, &[COUNT]), "a window's span must be positive, not 0ns"),
        (shape(i64::MIN, 0, &[COUNT]), "a window's span must be positive, not -9223372036854775808ns"),
        (shape(1, -1, &[COUNT]), "a window's grace must be zero or more, not -1ns"),
        (shape(1, 0, &[(Count, Int)]), "aggregate 0 (count) cannot take an int"),
        (shape(1, 0, &[COUNT, (Sum, Str)]), "aggregate 1 (sum) cannot take a string"),
        (shape(1, 0, &[(Sum, Timestamp)]), "aggregate 0 (sum) cannot take a timestamp"),
        (shape(1, 0, &[(Sum, Bool)]), "aggregate 0 (sum) cannot take a bool"),
        (shape(1, 0, &[(Max, Str)]), "aggregate 0 (max) cannot take a string"),
        (shape(1, 0, &[(Min, Bool)]), "aggregate 0 (min) cannot take a bool"),
        (shape(1, 0, &[(Min, ArgKind::None)]), "aggregate 0 (min) cannot take no argument"),
        (shape(1, 0, &[(Distinct, ArgKind::Decimal)]), "aggregate 0 (distinct) cannot take a decimal"),
        (shape(1, 0, &[(Distinct, Float)]), "aggregate 0 (distinct) cannot take a float"),
        (shape(1, 0, &[(Distinct, Timestamp)]), "aggregate 0 (distinct) cannot take a timestamp"),
    ];
    for (shape, message) in refused {
        assert_eq!(WindowStore::new(shape.clone(), WindowLimits::NONE).unwrap_err().to_string(), message);
        assert_eq!(SharedWindowStore::new(shape, keys(Some(3))).unwrap_err().to_string(), message);
    }
    assert!(
        WindowStore::new(shape(1, 0, &[]), WindowLimits::NONE).is_ok(),
        "a window of no aggregates is kept"
    );
}

#[test]
fn keys_and_strings_of_any_length() {
    let long = "k".repeat(1 << 20);
    let longer = format!("{long}!");
    let mut store = WindowStore::new(shape(10, 0, &[COUNT, (Distinct, Str)]), WindowLimits::NONE).unwrap();
    let mut out = Vec::new();
    for (key, text, expect) in [
        (&long, &longer, "1 | 1"),
        (&longer, &long, "1 | 1"),
        (&long, &long, "2 | 2"),
        (&long, &longer, "3 | 2"),
    ] {
        let observation = store.observe(Key::Str(key), 0, &[NONE, Arg::Str(text)], &mut out);
        assert_eq!(shown(observation, &out), expect);
    }
    assert_eq!(store.keys(), 2);
    assert!(store.heap_bytes() > 5 << 20, "four 1 MiB strings and two 1 MiB keys are held");
}

#[test]
fn past_the_bytes_bound_the_least_recently_entered_keys_give_their_memory_back() {
    let limits = WindowLimits { bytes: Some(100_000), ..WindowLimits::NONE };
    let mut store = WindowStore::new(shape(10, 0, &[COUNT, (Distinct, Str)]), limits).unwrap();
    let mut out = Vec::new();
    let text = "t".repeat(1000);
    for i in 0..1000 {
        let observation = store.observe(Key::Int(i), 0, &[NONE, Arg::Str(&text)], &mut out);
        assert_eq!(shown(observation, &out), "1 | 1");
        let (counted, added) = store.counted_bytes();
        assert!(counted == added && counted <= 100_000, "{counted} bytes counted, {added} held");
    }
    assert_eq!(store.keys() as u64 + store.evicted(), 1000);
    assert!(store.keys() >= 90, "{} keys of about 1 KB in 100 KB", store.keys());
    assert!(store.held_times(Key::Int(999)).is_some() && store.held_times(Key::Int(0)).is_none());
}

#[test]
fn a_shared_store_bounds_its_bytes_and_each_key() {
    let limits =
        WindowLimits { keys: None, bytes: Some(1 << 20), key_records: Some(50), key_bytes: Some(4096) };
    let store = SharedWindowStore::new(shape(1000, 0, &[COUNT, (Distinct, Str)]), limits).unwrap();
    let mut out = Vec::new();
    let text = "v".repeat(500);
    for i in 0..10_000 {
        store.observe(Key::Int(i % 3000), i, &[NONE, Arg::Str(&text[..i as usize % 500])], &mut out);
    }
    assert!(store.records_bytes() <= 1 << 20, "{} bytes", store.records_bytes());
    let hot = (0..60).map(|i| store.observe(Key::Str("hot"), i, &[NONE, Arg::Str("x")], &mut out));
    let full = hot.filter(|o| matches!(o, Observation::Full(Bound::KeyRecords(50)))).count();
    assert_eq!(full, 10, "the 51st to 60th records of one key are turned away");
}

#[test]
fn a_withdrawn_record_leaves_no_trace() {
    let mut store = WindowStore::new(shape(10, 0, &[COUNT, (Sum, Int)]), WindowLimits::NONE).unwrap();
    let mut out = Vec::new();
    store.observe(Key::Str("a"), 0, &[NONE, Arg::Int(1)], &mut out);
    let Observation::Entered(ticket) = store.observe(Key::Str("a"), 5, &[NONE, Arg::Int(2)], &mut out) else {
        panic!("entered")
    };
    let Observation::Entered(new_key) = store.observe(Key::Str("b"), 5, &[NONE, Arg::Int(2)], &mut out)
    else {
        panic!("entered")
    };
    assert!(store.withdraw(ticket) && store.withdraw(new_key));
    assert!(!store.withdraw(ticket), "a record is withdrawn once");
    assert_eq!(store.keys(), 1, "a key that held nothing else is dropped");
    // Without the record at 5, 4 is not late (grace 0) and the sum is 1 + 3.
    let observation = store.observe(Key::Str("a"), 4, &[NONE, Arg::Int(3)], &mut out);
    assert_eq!(shown(observation, &out), "2 | 4");
}

/// The keys of the random sequences: `Int(2)` and `Str("2")` differ.
const KEYS: [Key<'static>; 4] = [Key::Str("k0"), Key::Str("k1"), Key::Int(2), Key::Str("2")];

/// Every aggregate with every kind of argument it takes.
fn every_aggregate() -> Vec<(AggregateKind, ArgKind)> {
    let kinds = [ArgKind::None, Int, ArgKind::Decimal, Float, Timestamp, Duration, Str, Bool];
    AggregateKind::ALL
        .into_iter()
        .flat_map(|aggregate| {
            kinds.into_iter().filter(move |kind| kind.suits(aggregate)).map(move |kind| (aggregate, kind))
        })
        .collect()
}

/// One record of a random sequence: which key, how far the stream's
/// clock moves before it, and values its arguments are made of.
#[derive(Clone, Debug)]
struct Event {
    key: usize,
    step: i64,
    int: i64,
    decimal: Decimal,
    float: f64,
    text: &'static str,
    flag: bool,
    /// Whether the record is withdrawn once it entered.
    withdraw: bool,
}

impl Event {
    fn args(&self, time: i64, aggregates: &[(AggregateKind, ArgKind)]) -> Vec<Arg<'static>> {
        let arg = |kind| match kind {
            ArgKind::None => Arg::None,
            Int | Duration => Arg::Int(self.int),
            Timestamp => Arg::Int(time),
            ArgKind::Decimal => Arg::Decimal(self.decimal),
            Float => Arg::Float(self.float),
            Str => Arg::Str(self.text),
            Bool => Arg::Bool(self.flag),
        };
        aggregates.iter().map(|&(_, kind)| arg(kind)).collect()
    }
}

fn event() -> impl Strategy<Value = Event> {
    let decimals: Vec<Decimal> = ["1.0", "1.00", "-2.5", "0", "0.000", "0.1"]
        .map(d)
        .into_iter()
        .chain([Decimal::MAX, Decimal::MIN])
        .collect();
    let step = prop_oneof![6 => -6i64..=8, 1 => -30i64..-10, 1 => 15i64..60];
    let int =
        prop_oneof![4 => -3i64..=3, 1 => Just(i64::MAX), 1 => Just(i64::MIN), 1 => Just(i64::MAX / 2 + 1)];
    let float = prop::sample::select(vec![0.0, -0.0, 0.5, 1.5, 0.1, 1e308, -1e308]);
    let text = prop::sample::select(vec!["", "a", "b", "ab", "é", "e\u{301}"]);
    let withdraw = prop::bool::weighted(0.15);
    (0..KEYS.len(), step, int, prop::sample::select(decimals), float, text, any::<bool>(), withdraw).prop_map(
        |(key, step, int, decimal, float, text, flag, withdraw)| Event {
            key,
            step,
            int,
            decimal,
            float,
            text,
            flag,
            withdraw,
        },
    )
}

/// A key of the [`Model`], every record it entered kept.
#[derive(Clone)]
struct ModelKey {
    key: Key<'static>,
    /// The greatest time entered (`None` before any).
    latest: Option<i64>,
    /// The latest time when the key last entered a record: the store has
    /// pruned what that time put out of reach.
    pruned_by: Option<i64>,
    /// When it last entered a record, on the model's clock.
    entered: u64,
    records: Vec<(i64, Vec<Arg<'static>>)>,
    /// The first and last times the records bound turned away.
    turned_away: Option<(i64, i64)>,
}

/// The store's semantics without its cleverness: every record of a held
/// key kept forever, every question answered by a full scan, bounds in
/// plain `i128`; keys evicted past `max_keys`, records turned away past
/// `key_records` by the rules of the module's doc.
#[derive(Clone)]
struct Model {
    shape: WindowShape,
    max_keys: Option<usize>,
    key_records: Option<usize>,
    keys: Vec<ModelKey>,
    clock: u64,
    evicted: u64,
    full: u64,
}

impl Model {
    fn new(shape: WindowShape, limits: WindowLimits) -> Model {
        Model {
            shape,
            max_keys: limits.keys,
            key_records: limits.key_records,
            keys: Vec::new(),
            clock: 0,
            evicted: 0,
            full: 0,
        }
    }

    fn reach(&self) -> i128 {
        i128::from(self.shape.span) + i128::from(self.shape.grace)
    }

    /// Whether a record at `time` is out of reach of a key whose latest
    /// time is `latest`.
    fn out_of_reach(&self, time: i64, latest: Option<i64>) -> bool {
        latest.is_some_and(|latest| i128::from(time) + self.reach() <= i128::from(latest))
    }

    fn oldest(&self) -> Option<usize> {
        (0..self.keys.len()).min_by_key(|&i| self.keys[i].entered)
    }

    fn observe(&mut self, key: Key<'static>, time: i64, args: &[Arg<'static>]) -> String {
        let found = self.keys.iter().position(|k| k.key == key);
        if let Some(i) = found
            && let Some(latest) = self.keys[i].latest
            && i128::from(time) < i128::from(latest) - i128::from(self.shape.grace)
        {
            return "late".to_string();
        }
        let i = found.unwrap_or_else(|| {
            if self.keys.len() >= self.max_keys.unwrap_or(usize::MAX).max(1) {
                let oldest = self.oldest().unwrap();
                self.keys.remove(oldest);
                self.evicted += 1;
            }
            let held = ModelKey {
                key,
                latest: None,
                pruned_by: None,
                entered: 0,
                records: Vec::new(),
                turned_away: None,
            };
            self.keys.push(held);
            self.keys.len() - 1
        });
        self.clock += 1;
        self.keys[i].entered = self.clock;
        let latest = self.keys[i].latest;
        if self.keys[i].turned_away.is_some_and(|(_, last)| self.out_of_reach(last, latest)) {
            self.keys[i].turned_away = None;
        }
        let now = Some(latest.map_or(time, |latest| latest.max(time)));
        let held = self.keys[i].records.iter().filter(|(t, _)| !self.out_of_reach(*t, now)).count();
        let key = &mut self.keys[i];
        key.pruned_by = key.latest;
        key.latest = now;
        if let Some(most) = self.key_records
            && held >= most
        {
            key.turned_away = Some(key.turned_away.map_or((time, time), |(a, b)| (a.min(time), b.max(time))));
            self.full += 1;
            return format!("full: {}", Bound::KeyRecords(most));
        }
        let held = &mut self.keys[i];
        held.records.push((time, args.to_vec()));
        let span = i128::from(self.shape.span);
        if let Some((first, last)) = held.turned_away
            && first <= time
            && i128::from(last.min(time)) > i128::from(time) - span
        {
            self.full += 1;
            return format!("incomplete: {}", Bound::KeyRecords(self.key_records.unwrap()));
        }
        let out = self.aggregates(&self.keys[i].records, time);
        out.iter().map(render).collect::<Vec<_>>().join(" | ")
    }

    /// Withdraws the last record of `key`, which entered, back to the key
    /// as it was in `before` (or no key); the key stays the most recent.
    fn withdraw(&mut self, key: Key<'static>, before: &Model) {
        let i = self.keys.iter().position(|k| k.key == key).unwrap();
        match before.keys.iter().find(|k| k.key == key) {
            Some(old) => {
                let entered = self.keys[i].entered;
                self.keys[i] = ModelKey { entered, pruned_by: old.latest, ..old.clone() };
            }
            None => {
                self.keys.remove(i);
            }
        }
    }

    fn aggregates(&self, records: &[(i64, Vec<Arg<'static>>)], of: i64) -> Vec<Aggregated> {
        let span = i128::from(self.shape.span);
        let window: Vec<&[Arg<'static>]> = records
            .iter()
            .filter(|&&(time, _)| time <= of && i128::from(time) > i128::from(of) - span)
            .map(|(_, args)| &args[..])
            .collect();
        let aggregate = |(i, &(kind, arg)): (usize, &(AggregateKind, ArgKind))| {
            let values: Vec<Arg<'static>> = window.iter().map(|args| args[i]).collect();
            match kind {
                Count => Aggregated::Int(values.len() as i64),
                Distinct => {
                    let mut seen: Vec<Arg<'static>> = Vec::new();
                    values.iter().for_each(|v| {
                        if !seen.contains(v) {
                            seen.push(*v)
                        }
                    });
                    Aggregated::Int(seen.len() as i64)
                }
                Sum => values[1..].iter().fold(number(values[0]), |sum, &v| model_add(sum, v, arg)),
                Max | Min => {
                    let wanted =
                        if kind == Max { std::cmp::Ordering::Greater } else { std::cmp::Ordering::Less };
                    let better = |best, &v| if model_order(v, best) == wanted { v } else { best };
                    number(values[1..].iter().fold(values[0], better))
                }
            }
        };
        self.shape.aggregates.iter().enumerate().map(aggregate).collect()
    }
}

fn number(arg: Arg<'static>) -> Aggregated {
    match arg {
        Arg::Int(int) => Aggregated::Int(int),
        Arg::Decimal(decimal) => Aggregated::Decimal(decimal),
        Arg::Float(float) => Aggregated::Float(float),
        other => panic!("not a number: {other:?}"),
    }
}

fn model_add(sum: Aggregated, value: Arg<'static>, kind: ArgKind) -> Aggregated {
    let result = match (sum, value) {
        (Aggregated::Int(a), Arg::Int(b)) if kind == Duration => ops::duration_add(a, b).map(Aggregated::Int),
        (Aggregated::Int(a), Arg::Int(b)) => ops::int_add(a, b).map(Aggregated::Int),
        (Aggregated::Decimal(a), Arg::Decimal(b)) => ops::dec_add(a, b).map(Aggregated::Decimal),
        (Aggregated::Float(a), Arg::Float(b)) => ops::float_add(a, b).map(Aggregated::Float),
        (failed, _) => Ok(failed),
    };
    result.unwrap_or_else(Aggregated::Failed)
}

fn model_order(a: Arg<'static>, b: Arg<'static>) -> std::cmp::Ordering {
    match (a, b) {
        (Arg::Int(a), Arg::Int(b)) => a.cmp(&b),
        (Arg::Decimal(a), Arg::Decimal(b)) => decimal::cmp(a, b),
        (Arg::Float(a), Arg::Float(b)) => ops::float_cmp(a, b),
        other => panic!("not ordered: {other:?}"),
    }
}

/// Checks `store` against the model after each event: the observation,
/// the counts, and for each key exactly the records a later record may
/// need (those of the model not out of reach of the time the key last
/// pruned by). An event marked `withdraw` whose record entered is
/// withdrawn at once, unless entering it evicted a key (which a withdrawal
/// does not bring back).
fn agrees_with_model(
    mut store: WindowStore,
    mut model: Model,
    events: &[Event],
) -> Result<(), TestCaseError> {
    let aggregates = model.shape.aggregates.clone();
    let mut out = Vec::new();
    let mut time = 0i64;
    for (i, event) in events.iter().enumerate() {
        time += event.step;
        let (key, args) = (KEYS[event.key], event.args(time, &aggregates));
        let (before, evicted) = (model.clone(), store.evicted());
        let observation = store.observe(key, time, &args, &mut out);
        let observed = shown(observation, &out);
        prop_assert_eq!(observed, model.observe(key, time, &args), "event {} ({:?} at {})", i, key, time);
        if let Observation::Entered(ticket) | Observation::Incomplete(ticket, _) = observation
            && event.withdraw
            && store.evicted() == evicted
        {
            prop_assert!(store.withdraw(ticket), "event {}: withdrawn", i);
            model.withdraw(key, &before);
        }
        let counts = (store.keys(), store.evicted(), store.full());
        prop_assert_eq!(counts, (model.keys.len(), model.evicted, model.full), "event {}: counts", i);
        for key in KEYS {
            let needed = model.keys.iter().find(|k| k.key == key).map(|k| {
                let kept = |&&(time, _): &&(i64, _)| !model.out_of_reach(time, k.pruned_by);
                k.records.iter().filter(kept).map(|&(time, _)| time).collect::<Vec<_>>()
            });
            prop_assert_eq!(store.held_times(key), needed, "event {}: the records held for {:?}", i, key);
        }
        let (counted, added) = store.counted_bytes();
        prop_assert_eq!(counted, added, "event {}: the records' bytes as counted", i);
    }
    Ok(())
}

fn seeded(cases: u32) -> Config {
    Config { cases, rng_seed: RngSeed::Fixed(0x57_1D_0A_5E), failure_persistence: None, ..Config::default() }
}

proptest! {
    #![proptest_config(seeded(400))]

    #[test]
    fn the_store_is_the_model(
        span in 1i64..=20,
        grace in 0i64..=8,
        max_keys in prop_oneof![Just(None), (1usize..=4).prop_map(Some)],
        key_records in prop_oneof![Just(None), (1usize..=6).prop_map(Some)],
        events in prop::collection::vec(event(), 1..150),
    ) {
        let shape = shape(span, grace, &every_aggregate());
        let limits = WindowLimits { keys: max_keys, key_records, ..WindowLimits::NONE };
        let store = WindowStore::new(shape.clone(), limits).unwrap();
        agrees_with_model(store, Model::new(shape.clone(), limits), &events)?;
        // Two hash values for four keys: the index's chains.
        let mut colliding = WindowStore::new(shape.clone(), limits).unwrap();
        colliding.hash_mask = 1;
        agrees_with_model(colliding, Model::new(shape, limits), &events)?;
    }
}

/// 100,000 keys of one record each (count, sum of a decimal, distinct
/// strings): the layout a million keys must fit in 300 MB.
fn bytes_per_key(keys: usize) -> usize {
    let shape = shape(600_000_000_000, 0, &[COUNT, (Sum, ArgKind::Decimal), (Distinct, Str)]);
    let mut store = WindowStore::new(shape, WindowLimits::NONE).unwrap();
    let (mut out, mut key) = (Vec::new(), String::new());
    let amount = d("1234.56");
    for i in 0..keys {
        key.clear();
        key.push_str(&format!("account-{i:07}"));
        let observation =
            store.observe(Key::Str(&key), i as i64, &[NONE, Arg::Decimal(amount), Arg::Str("DE")], &mut out);
        assert!(matches!(observation, Observation::Entered(_)), "{observation:?}");
    }
    assert_eq!(store.keys(), keys);
    store.heap_bytes() / keys
}

#[test]
fn a_key_of_one_record_takes_under_300_bytes() {
    let per_key = bytes_per_key(100_000);
    assert!(per_key < 300, "{per_key} bytes a key");
}

#[test]
#[ignore = "a million keys: slow unoptimised; run with --ignored"]
fn a_million_keys_take_under_300_mb() {
    let per_key = bytes_per_key(1_000_000);
    assert!(per_key * 1_000_000 < 300_000_000, "{per_key} bytes a key");
}

/// Runs `threads` threads of `each(thread, store, out)` on one store.
fn hammer<T: Send + 'static>(
    store: &Arc<SharedWindowStore>,
    threads: usize,
    each: impl Fn(usize, &SharedWindowStore, &mut Vec<Aggregated>) -> T + Send + Sync + 'static,
) -> Vec<T> {
    let each = Arc::new(each);
    let handles: Vec<_> = (0..threads)
        .map(|thread| {
            let (store, each) = (Arc::clone(store), Arc::clone(&each));
            thread::spawn(move || each(thread, &store, &mut Vec::new()))
        })
        .collect();
    handles.into_iter().map(|handle| handle.join().unwrap()).collect()
}

fn int(aggregated: &Aggregated) -> i64 {
    match aggregated {
        Aggregated::Int(int) => *int,
        other => panic!("not an int: {other:?}"),
    }
}

#[test]
fn eight_threads_on_one_key_count_every_record_once() {
    const EACH: usize = 250;
    let store =
        Arc::new(SharedWindowStore::new(shape(10, 0, &[COUNT, (Sum, Int)]), WindowLimits::NONE).unwrap());
    let counts = hammer(&store, 8, |_, store, out| {
        (0..EACH)
            .map(|_| {
                let observation = store.observe(Key::Str("hot"), 0, &[NONE, Arg::Int(1)], out);
                assert!(matches!(observation, Observation::Entered(_)));
                assert_eq!(int(&out[0]), int(&out[1]), "count and sum of ones agree");
                int(&out[0])
            })
            .collect::<Vec<_>>()
    });
    let mut counts: Vec<i64> = counts.into_iter().flatten().collect();
    counts.sort_unstable();
    assert_eq!(counts, (1..=8 * EACH as i64).collect::<Vec<_>>(), "each record saw each before it once");
    let mut out = Vec::new();
    store.observe(Key::Str("hot"), 0, &[NONE, Arg::Int(1)], &mut out);
    assert_eq!(int(&out[0]), 8 * EACH as i64 + 1);
}

#[test]
fn eight_threads_on_one_key_over_time_keep_the_span() {
    // Times 0..400 from each thread, grace enough that none is late,
    // a span of 200: a record at 399 sees the 8 * 200 at 200 or more.
    let store = Arc::new(SharedWindowStore::new(shape(200, 1000, &[COUNT]), WindowLimits::NONE).unwrap());
    hammer(&store, 8, |_, store, out| {
        for time in 0..400 {
            assert!(matches!(store.observe(Key::Int(7), time, &[NONE], out), Observation::Entered(_)));
        }
    });
    let mut out = Vec::new();
    store.observe(Key::Int(7), 399, &[NONE], &mut out);
    assert_eq!(int(&out[0]), 8 * 200 + 1);
}

#[test]
fn eight_threads_on_many_keys() {
    const KEYS: i64 = 500;
    const ROUNDS: i64 = 20;
    let store = Arc::new(SharedWindowStore::new(shape(1000, 1000, &[COUNT]), WindowLimits::NONE).unwrap());
    hammer(&store, 8, |thread, store, out| {
        for round in 0..ROUNDS {
            for key in 0..KEYS {
                let key = (key + thread as i64 * 61) % KEYS;
                assert!(matches!(store.observe(Key::Int(key), round, &[NONE], out), Observation::Entered(_)));
            }
        }
    });
    assert_eq!((store.keys(), store.evicted(), store.full()), (KEYS as usize, 0, 0));
    let mut out = Vec::new();
    for key in 0..KEYS {
        store.observe(Key::Int(key), ROUNDS, &[NONE], &mut out);
        assert_eq!(int(&out[0]), 8 * ROUNDS + 1, "key {key}");
    }
}

#[test]
fn a_shared_store_splits_max_keys_over_its_shards() {
    for max_keys in [1, 5, 100] {
        let store = SharedWindowStore::new(shape(10, 0, &[COUNT]), keys(Some(max_keys))).unwrap();
        let mut out = Vec::new();
        for key in 0..1000 {
            store.observe(Key::Int(key), 0, &[NONE], &mut out);
        }
        assert!(store.keys() <= max_keys, "{} keys held of {max_keys}", store.keys());
        assert_eq!(store.keys() as u64 + store.evicted(), 1000);
    }
}
