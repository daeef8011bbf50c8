//! The evaluation budget on both engines: work that would run for
//! seconds or minutes (nested lambdas over long lists, string and regex
//! work inside lambdas, `in` over long lists) stops at its time limit
//! with `EvaluateError::OutOfTime`, on the interpreter and in native code
//! (which reports it itself rather than falling back); the same contracts
//! on short inputs, under the same limit, give the results they give
//! without one.
//!
//! The bound checked on the stop (two seconds for a 50 ms limit) is far
//! from both the limit and the minutes these evaluations take unbounded:
//! it tells a stop from a run to the end, not how fast the stop is.

use std::sync::Arc;
use std::time::{Duration, Instant};

use runtime::{Engine, EvaluateError, Jit};

/// A contract over `xs: list<int>` and `s: string` whose one rule does
/// `when`.
fn contract(when: &str) -> String {
    format!(
        "contract: test.budget\nversion: 1.0.0\ninput:\n  xs: list<int>\n  s: string\n\
         rules:\n  - id: heavy\n    when: '{when}'\n    deny: \"heavy\"\n"
    )
}

/// Conditions whose work is quadratic (or worse) in the input's size.
const HEAVY: &[&str] = &[
    "count(xs, a => count(xs, b => a < b) > 0) > 0",
    "all(xs, a => any(xs, b => b >= a))",
    "sum(xs, a => len(s) + a) < 0",
    "count(xs, a => contains(s, \"zz\")) > 0",
    "count(xs, a => matches(s, \"^(a|b)*c$\")) > 0",
    "count(xs, a => a in xs) < 0",
    "count(xs, a => starts_with(s + \"q\", \"zz\")) > 0",
];

fn engines() -> Vec<(&'static str, Engine)> {
    let native = || Arc::new(backend::Jit::new());
    vec![
        ("interp", Engine::builder().jit(Jit::Off).timeout(Some(Duration::from_millis(50))).build()),
        (
            "jit",
            Engine::builder().jit(Jit::On).native(native()).timeout(Some(Duration::from_millis(50))).build(),
        ),
    ]
}

fn load(engine: &Engine, when: &str) -> Arc<runtime::Contract> {
    let bundle = frontend::compile(&contract(when)).unwrap_or_else(|e| panic!("{when}: {e:?}"));
    engine.load(bundle).expect("loads")
}

fn request(n: usize, s_len: usize) -> String {
    let xs: Vec<String> = (0..n).map(|i| i.to_string()).collect();
    format!(r#"{{"input":{{"xs":[{}],"s":"{}"}}}}"#, xs.join(","), "a".repeat(s_len))
}

#[test]
fn heavy_work_stops_at_the_limit_on_both_engines() {
    let big = request(60_000, 100_000);
    for (name, engine) in engines() {
        for when in HEAVY {
            let contract = load(&engine, when);
            let parsed = contract.request(&big).expect("valid");
            let started = Instant::now();
            let outcome = contract.evaluate(&parsed);
            let took = started.elapsed();
            assert!(
                matches!(outcome, Err(EvaluateError::OutOfTime { millis: 50 })),
                "{name}: {when}: {:?}",
                outcome.map(|r| String::from_utf8_lossy(&r.to_json()).into_owned())
            );
            assert!(took < Duration::from_secs(2), "{name}: {when}: stopped after {took:?}");
            if name == "jit" {
                assert_eq!(contract.native_counts(), (0, 0), "{when}: native code must stop, not fall back");
            }
        }
    }
}

#[test]
fn light_work_under_a_limit_gives_the_unlimited_result() {
    let small = request(50, 200);
    let unlimited = Engine::builder().jit(Jit::Off).build();
    for when in HEAVY {
        let mut expected = Vec::new();
        load(&unlimited, when).evaluate_json(&small, &mut expected);
        for (name, engine) in engines() {
            let mut got = Vec::new();
            let contract = load(&engine, when);
            contract.evaluate_json(&small, &mut got);
            assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&expected), "{name}: {when}");
            if name == "jit" {
                assert_eq!(contract.native_counts(), (1, 0), "{when}: native code should finish");
            }
        }
    }
}

#[test]
fn the_timeout_line_names_the_limit() {
    let (_, engine) = engines().remove(0);
    let contract = load(&engine, HEAVY[0]);
    let mut out = Vec::new();
    contract.evaluate_json(&request(60_000, 0), &mut out);
    assert_eq!(
        String::from_utf8_lossy(&out),
        r#"{"error":{"kind":"timeout","message":"the evaluation was stopped: it passed its time limit of 50 ms"}}"#
    );
}
