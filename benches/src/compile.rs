//! The compile-time bench: how long each stage takes, from YAML text to
//! native code, for the reference contract and for generated contracts of
//! 6, 24, 96 and 504 rules ([`crate::generate`]).
//!
//! Stages, each timed alone on the previous stage's output:
//! `parse` (YAML to syntax tree), `check` (type check and lowering to IR),
//! `seal` (verification, canonical JSON and hash of the bundle), `load`
//! (a bundle file's bytes back to a verified bundle), `prepare` (the
//! runtime's program: slots, tables, regexes) and `jit` (Cranelift, every
//! function of the contract). Each figure is the median of several
//! repetitions.

use std::sync::Arc;
use std::time::{Duration, Instant};

use runtime::native::NativeCompiler;
use runtime::program::Program;
use serde::Serialize;

/// The generated contract sizes measured beside the reference contract.
pub const GENERATED_RULES: [usize; 4] = [6, 24, 96, 504];

/// Median nanoseconds per stage for one contract.
#[derive(Clone, Debug, Serialize)]
pub struct CompileRow {
    pub contract: String,
    pub rules: usize,
    pub bytes: usize,
    pub parse_ns: u64,
    pub check_ns: u64,
    pub seal_ns: u64,
    pub load_ns: u64,
    pub prepare_ns: u64,
    pub jit_ns: u64,
}

/// Repeats `stage` until `budget` is spent (at least 3, at most 200
/// times) and returns its median time and its last output.
fn median<T>(budget: Duration, mut stage: impl FnMut() -> Result<T, String>) -> Result<(u64, T), String> {
    let started = Instant::now();
    let mut times = Vec::new();
    loop {
        let t0 = Instant::now();
        let out = stage()?;
        times.push(t0.elapsed().as_nanos() as u64);
        if times.len() >= 200 || (times.len() >= 3 && started.elapsed() >= budget) {
            times.sort_unstable();
            return Ok((times[times.len() / 2], out));
        }
    }
}

/// Times every stage of compiling `source`, spending about `budget` on
/// each.
pub fn measure(
    name: &str,
    source: &str,
    budget: Duration,
    native: &dyn NativeCompiler,
) -> Result<CompileRow, String> {
    let file = frontend::SourceFile::new(name, source);
    let (parse_ns, ast) = median(budget, || {
        let mut diagnostics = Vec::new();
        frontend::parse(&file, &mut diagnostics).ok_or_else(|| format!("{name}: does not parse"))
    })?;
    let (check_ns, contract) = median(budget, || {
        let mut diagnostics = Vec::new();
        frontend::check::check(&file, &ast, &mut diagnostics).ok_or_else(|| format!("{name}: does not check"))
    })?;
    let (seal_ns, bundle) =
        median(budget, || ir::Bundle::new(contract.clone()).map_err(|e| format!("{name}: {}", e.message)))?;
    let bytes = bundle.to_json();
    let (load_ns, loaded) =
        median(budget, || ir::Bundle::from_json(&bytes).map_err(|e| format!("{name}: {e}")))?;
    let shared = Arc::new(loaded.contract().clone());
    let (prepare_ns, program) = median(budget, || Program::new(shared.clone()))?;
    let (jit_ns, _) = median(budget, || native.compile(&program))?;
    Ok(CompileRow {
        contract: name.to_string(),
        rules: contract.rules.len(),
        bytes: source.len(),
        parse_ns,
        check_ns,
        seal_ns,
        load_ns,
        prepare_ns,
        jit_ns,
    })
}

/// The contracts the micro-benches use: the reference contract and a
/// generated one of 96 rules, as `(name, YAML text)`.
pub fn bench_contracts() -> Vec<(String, String)> {
    vec![
        ("transfer".to_string(), crate::workload::TRANSFER_CONTRACT.to_string()),
        ("generated_96".to_string(), crate::generate::contract(96)),
    ]
}

/// The reference contract and the generated ones, measured.
pub fn measure_all(
    reference: &str,
    budget: Duration,
    native: &dyn NativeCompiler,
) -> Result<Vec<CompileRow>, String> {
    let mut rows = vec![measure("acme.payments.transfer", reference, budget, native)?];
    for rules in GENERATED_RULES {
        let source = crate::generate::contract(rules);
        rows.push(measure(&format!("generated {rules}"), &source, budget, native)?);
    }
    Ok(rows)
}

/// The rows as a markdown table, in microseconds.
pub fn markdown(rows: &[CompileRow]) -> String {
    let mut out = String::from(
        "| contract | rules | YAML bytes | parse | check+lower | seal bundle | load bundle | prepare | jit | total |\n\
         | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
    );
    let us = |ns: u64| format!("{:.0} µs", ns as f64 / 1000.0);
    for r in rows {
        let total = r.parse_ns + r.check_ns + r.seal_ns + r.prepare_ns + r.jit_ns;
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.contract,
            r.rules,
            r.bytes,
            us(r.parse_ns),
            us(r.check_ns),
            us(r.seal_ns),
            us(r.load_ns),
            us(r.prepare_ns),
            us(r.jit_ns),
            us(total),
        ));
    }
    out
}
