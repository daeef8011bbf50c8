//! The peer engines (feature `peers`) must decide as the hand-written
//! `native` target does on the benchmark requests: the decision, the deny
//! rules and findings that fired, and the effects (the fee within a
//! micro-unit for peers that compute in doubles). One `check(peer,
//! request)` per pair; a few more requests reach the rules the benchmark
//! requests leave alone (mobile, components, bad amounts, high-risk
//! countries).

#![cfg(feature = "peers")]

use benches::native::{Native, Transfer};
use benches::peers::{Kind, Number, Peer};
use benches::targets::Workload;
use benches::workload::{TRANSFER_CONTRACT, TRANSFER_REQUESTS};
use ir::Verdict;
use runtime::value::Owned;
use rust_decimal::prelude::ToPrimitive;

fn workload() -> Workload {
    let engine = runtime::Engine::builder().jit(runtime::Jit::Off).build();
    Workload::new(TRANSFER_CONTRACT, TRANSFER_REQUESTS, &engine).expect("the reference workload loads")
}

/// Peer's outcome on request `i` against the native result.
fn check(peer: &mut dyn Peer, workload: &Workload, i: usize) {
    let name = peer.name().to_string();
    let line = &workload.lines[i];
    let expected = Native::new().evaluate(&Transfer::from_json(line).expect("a transfer"));
    // Twice: an evaluation must leave the prepared input as it found it.
    let got = peer.evaluate(i).unwrap_or_else(|e| panic!("{name} fails on request {i}: {e}"));
    assert_eq!(peer.evaluate(i).as_ref(), Ok(&got), "{name}: a second evaluation differs, request {i}");
    let at = format!("{name}, request {i}: {line}");
    let reasons: Vec<&str> = expected.reasons.iter().map(|r| r.rule).collect();
    assert_eq!(got.ids(Kind::Deny), reasons, "deny rules: {at}");
    assert_eq!(got.deny, expected.decision == Verdict::Deny, "decision: {at}");
    let findings: Vec<&str> = expected.findings.iter().map(|f| f.rule).collect();
    assert_eq!(got.ids(Kind::Finding), findings, "findings: {at}");
    let effect = |name: &str| expected.effects.iter().find(|e| e.name == name).map(|e| &e.value);
    match (got.fee, effect("fee")) {
        (None, None) => {}
        (Some(Number::Decimal(fee)), Some(Owned::Decimal(want))) => assert_eq!(fee, *want, "fee: {at}"),
        (Some(Number::Float(fee)), Some(Owned::Decimal(want))) => {
            let want = want.to_f64().expect("a double");
            assert!((fee - want).abs() < 1e-6, "fee {fee} instead of {want}: {at}");
        }
        (fee, want) => panic!("fee {fee:?} instead of {want:?}: {at}"),
    }
    let hold = effect("hold_hours").map(|v| match v {
        Owned::Int(h) => *h,
        other => panic!("hold_hours {other:?}"),
    });
    assert_eq!(got.hold_hours, hold, "hold_hours: {at}");
    let step_up = effect("step_up").map(|v| matches!(v, Owned::Bool(true)));
    assert_eq!(got.step_up, step_up, "step_up: {at}");
}

#[test]
fn every_peer_decides_as_native_on_the_benchmark_requests() {
    let workload = workload();
    assert_eq!(workload.lines.len(), 4);
    for name in benches::PEERS {
        let mut peer = benches::peers::build(name, &workload).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(peer.name(), name);
        assert!(!peer.notes().is_empty(), "{name} lists its differences");
        for i in 0..workload.lines.len() {
            check(peer.as_mut(), &workload, i);
        }
    }
}

/// Requests beyond the benchmark's, with amounts whose double arithmetic
/// rounds as the decimal one does.
const MORE: &str = r#"{"channel":"mobile","input":{"amount":"300.00","currency":"USD","daily_total":"0","source":{"account":"A","country":"DE","account_age_days":400,"kyc_level":1},"destination":{"country":"DE","iban":"DE89370400440532013000","name":"X"},"tags":[]}}
{"channel":"mobile","input":{"amount":"700.00","currency":"CHF","daily_total":"0","source":{"account":"A","country":"DE","account_age_days":3,"kyc_level":2},"destination":{"country":"AF","iban":"XX","name":"X"},"tags":[]}}
{"channel":"batch","component":"limits","input":{"amount":"12.345","currency":"GBP","daily_total":"2490","source":{"account":"A","country":"IR","account_age_days":5,"kyc_level":7},"destination":{"country":"VE","iban":"de8937","name":"X"},"tags":[]}}
{"channel":"server","component":"fees","input":{"amount":"-5.00","currency":"EUR","daily_total":"0","source":{"account":"A","country":"FR","account_age_days":5,"kyc_level":-1},"destination":{"country":"DE","iban":"DE89370400440532013000","name":"X"},"tags":[]}}
{"channel":"server","component":"kyc","input":{"amount":"999.99","currency":"EUR","daily_total":"0","source":{"account":"A","country":"FR","account_age_days":5,"kyc_level":0},"destination":{"country":"US","iban":"US12345678901234567","name":"X"},"tags":[]}}
{"channel":"mobile","input":{"amount":"100000.01","currency":"USD","daily_total":"249999.99","source":{"account":"A","country":"KP","account_age_days":30,"kyc_level":3},"destination":{"country":"VE","iban":"FR1420041010050500013M02606","name":"X"},"tags":[]}}"#;

#[test]
fn every_peer_decides_as_native_on_more_requests() {
    let engine = runtime::Engine::builder().jit(runtime::Jit::Off).build();
    let workload = Workload::new(TRANSFER_CONTRACT, MORE, &engine).expect("the requests are valid");
    for name in benches::PEERS {
        let mut peer = benches::peers::build(name, &workload).unwrap_or_else(|e| panic!("{name}: {e}"));
        for i in 0..workload.lines.len() {
            check(peer.as_mut(), &workload, i);
        }
    }
}

#[test]
fn the_benchmark_requests_reach_every_outcome_kind() {
    // The comparison above means something only if the requests deny,
    // find and set effects.
    let workload = workload();
    let native = Native::new();
    let results: Vec<_> = workload
        .lines
        .iter()
        .map(|l| native.evaluate(&Transfer::from_json(l).expect("a transfer")))
        .collect();
    assert!(results.iter().any(|r| r.decision == Verdict::Deny));
    assert!(results.iter().any(|r| r.decision == Verdict::Allow));
    assert!(results.iter().any(|r| !r.findings.is_empty()));
    assert!(results.iter().any(|r| r.effects.iter().any(|e| e.name == "fee")));
}

#[test]
fn an_unknown_peer_is_an_error() {
    let error = benches::peers::build("nope", &workload()).err().expect("no such peer");
    assert!(error.contains("nope"), "{error}");
}
