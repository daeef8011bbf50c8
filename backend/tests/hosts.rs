//! Host functions called from native code: the arguments of every type a
//! host function takes reach it as the interpreter passes them, the
//! result comes back the same, and a host function that fails or panics
//! makes native code fall back, so the interpreter reports the error.
//! Each request is evaluated on both engines and the bytes compared.

use std::sync::Arc;

use runtime::{Engine, Jit, Owned};

const CONTRACT: &str = r#"
contract: test.hosts
version: 1.0.0
decision: deny-overrides
default: allow
on_error: skip

extern:
  credit_score: "(string) -> decimal"
  total: "(list<int>) -> int"
  label: "(int, string) -> string"
  risky: "(decimal) -> bool"
  fail: "(int) -> int"
  boom: "(int) -> int"

input:
  name: string
  counts: list<int>
  amount: decimal
  n: int

effects:
  points: int

let:
  s: credit_score(name)

rules:
  - id: scored
    when: s > 0.5
    finding: { code: SCORED, severity: info, message: "{label(n, name)} scores {round(s, 1)}." }
    effects: { points: total(counts) }
  - id: risky
    when: risky(amount)
    deny: "Amount {amount} is risky."
  - id: failing
    when: n > 100 && fail(n) > 0
    deny: "never"
  - id: panicking
    when: n == 666 && boom(n) > 0
    deny: "never"
"#;

/// Each request, and whether native code finishes it (no host function
/// fails on it).
const REQUESTS: &[(&str, bool)] = &[
    (r#"{"input":{"name":"Bäckerei Schulz","counts":[1,2,3],"amount":"10.00","n":1}}"#, true),
    (r#"{"input":{"name":"abc","counts":[],"amount":"5000.5","n":7}}"#, true),
    (r#"{"input":{"name":"abcdefgh","counts":[40,2],"amount":"1.00","n":200}}"#, false),
    (r#"{"input":{"name":"abcdefgh","counts":[1],"amount":"1.00","n":666}}"#, false),
];

/// Argument `i` when it is an int, else 0.
fn as_int(args: &[Owned], i: usize) -> i64 {
    match args.get(i) {
        Some(Owned::Int(n)) => *n,
        _ => 0,
    }
}

fn engine(jit: Jit) -> Engine {
    Engine::builder()
        .jit(jit)
        .native(Arc::new(backend::Jit::new()))
        .host_function("credit_score", "(string) -> decimal", |args| match args {
            [Owned::String(s)] => Ok(Owned::Decimal(rust_decimal::Decimal::new(s.chars().count() as i64, 1))),
            _ => Err("bad arguments".into()),
        })
        .and_then(|b| {
            b.host_function("total", "(list<int>) -> int", |args| match args {
                [Owned::List(items)] => Ok(Owned::Int(items.len() as i64 * 1000 + as_int(items, 0))),
                _ => Err("bad arguments".into()),
            })
        })
        .and_then(|b| {
            b.host_function("label", "(int, string) -> string", |args| match args {
                [Owned::Int(n), Owned::String(s)] => Ok(Owned::String(format!("#{n} {s}"))),
                _ => Err("bad arguments".into()),
            })
        })
        .and_then(|b| {
            b.host_function("risky", "(decimal) -> bool", |args| match args {
                [Owned::Decimal(d)] => Ok(Owned::Bool(d.scale() == 1)),
                _ => Err("bad arguments".into()),
            })
        })
        .and_then(|b| b.host_function("fail", "(int) -> int", |_| Err("the ledger is down".into())))
        .and_then(|b| b.host_function("boom", "(int) -> int", |_| panic!("host function bug")))
        .expect("the host functions register")
        .build()
}

#[test]
fn host_functions_run_in_native_code_with_the_interpreters_answers() {
    let compiled = frontend::compile_file("hosts.yaml", CONTRACT);
    let bundle = compiled.bundle.unwrap_or_else(|| panic!("{}", compiled.diagnostics.render(false)));
    let interp = engine(Jit::Off).load(bundle.clone()).expect("loads");
    let native = engine(Jit::On).load(bundle).expect("loads");
    assert_eq!(native.native_status(), runtime::engine::NativeStatus::Native);
    let mut finished = 0;
    for (request, natively) in REQUESTS {
        let (mut expected, mut got) = (Vec::new(), Vec::new());
        interp.evaluate_json(request, &mut expected);
        native.evaluate_json(request, &mut got);
        assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&expected), "{request}");
        finished += usize::from(*natively);
        assert_eq!(native.native_counts().0, finished as u64, "native code finished {request}: {natively}");
    }
    let mut out = Vec::new();
    interp.evaluate_json(REQUESTS[0].0, &mut out);
    let text = String::from_utf8_lossy(&out);
    assert!(text.contains(r##""message":"#1 Bäckerei Schulz scores 1.5.""##), "{text}");
    assert!(text.contains(r#""points":3001"#), "{text}");
}
