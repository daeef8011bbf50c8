//! Memory safety of loaded native code, checked on the running process:
//!
//! - no page is writable and executable at once (W^X), while a contract's
//!   code is live;
//! - loading and dropping a contract 1,000 times leaves the resident set
//!   flat: every JIT module's memory is freed with its contract.
//!
//! Both read `/proc/self` (Linux); elsewhere they say so and pass.

use std::sync::Arc;

use runtime::Engine;

const CONTRACT: &str = include_str!("../../benches/data/transfer/acme.payments.transfer.yaml");
const REQUEST: &str = r#"{"channel":"mobile","input":{"amount":"2500.00","currency":"USD","daily_total":"100.00","source":{"account":"A-1","country":"DE","account_age_days":12,"kyc_level":1},"destination":{"country":"FR","iban":"FR7630006000011234567890189","name":"Zoé"},"tags":[]}}"#;

fn engine() -> Engine {
    Engine::builder().jit(runtime::Jit::On).native(Arc::new(backend::Jit::with_verifier(false))).build()
}

fn bundle() -> ir::Bundle {
    let compiled = frontend::compile_file("acme.payments.transfer.yaml", CONTRACT);
    compiled.bundle.unwrap_or_else(|| panic!("{}", compiled.diagnostics.render(false)))
}

/// Loads the reference contract with native code and evaluates one
/// request on it, checking it ran natively.
fn load_and_run(engine: &Engine, bundle: &ir::Bundle) {
    let contract = engine.load(bundle.clone()).expect("the reference contract loads");
    assert_eq!(contract.native_status(), runtime::engine::NativeStatus::Native);
    let mut out = Vec::new();
    contract.evaluate_json(REQUEST, &mut out);
    assert!(out.starts_with(br#"{"contract":"acme.payments.transfer""#), "{}", String::from_utf8_lossy(&out));
    assert_eq!(contract.native_counts().0, 1, "the request ran natively");
}

/// The resident set, in bytes.
fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

#[test]
fn no_mapping_is_writable_and_executable() {
    let engine = engine();
    let contract = engine.load(bundle()).expect("the reference contract loads");
    assert_eq!(contract.native_status(), runtime::engine::NativeStatus::Native);
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
        eprintln!("skipped: /proc/self/maps is not readable here");
        return;
    };
    let both: Vec<&str> = maps
        .lines()
        .filter(|line| line.split_whitespace().nth(1).is_some_and(|p| p.contains('w') && p.contains('x')))
        .collect();
    assert!(both.is_empty(), "writable and executable mappings:\n{}", both.join("\n"));
    drop(contract);
}

#[test]
fn a_thousand_loads_and_drops_leave_the_resident_set_flat() {
    let (engine, bundle) = (engine(), bundle());
    // Warm up: allocator arenas, thread-locals, Cranelift's first-use
    // tables all settle in the first loads.
    for _ in 0..100 {
        load_and_run(&engine, &bundle);
    }
    let Some(before) = resident_bytes() else {
        eprintln!("skipped: /proc/self/statm is not readable here");
        return;
    };
    for _ in 0..1000 {
        load_and_run(&engine, &bundle);
    }
    let after = resident_bytes().unwrap_or(before);
    let growth = after.saturating_sub(before);
    // One contract's code and data take tens of KiB: a leak of each would
    // grow the set by tens of MiB over 1,000 loads.
    assert!(growth < 4 << 20, "the resident set grew by {} KiB over 1,000 loads", growth >> 10);
}
