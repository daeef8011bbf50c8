//! Running the differential generator: each generated contract is loaded
//! on every engine and evaluated over its requests, or, when it declares
//! windows, over its stream of records in order, and every result line
//! must be the same bytes on every path ([`Tally`] counts what ran).
//!
//! A contract without windows is evaluated by the interpreter, by native
//! code alone and by native code's batch entry over all its requests
//! (which scores each model once for all of them). A contract with
//! windows is evaluated four times over its stream, each time with window
//! state of its own: the interpreter, the interpreter given a state,
//! native code one record at a time, and native code's batch entry.

use std::fmt::Write as _;

use std::path::Path;

use runtime::window::WindowLimits;

use super::{ModelFolder, Rng, contract, modelled, request, stream, windowed};

/// The outcome of a differential run.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    pub contracts: u64,
    /// Generated contracts the compiler refused (generator gaps, reported).
    pub refused: u64,
    pub executions: u64,
    /// Executions native code finished (the rest fell back).
    pub native: u64,
    /// Contracts with windows.
    pub windowed: u64,
    /// Executions of the streams of contracts with windows.
    pub windowed_executions: u64,
    /// Of those, the evaluations native code finished.
    pub windowed_native: u64,
    /// Contracts with models.
    pub modelled: u64,
    /// Executions of contracts with models.
    pub modelled_executions: u64,
    /// Stream records that read a window they were late for.
    pub late: u64,
    /// Contracts with windows run under tight bounds.
    pub bounded: u64,
    /// Stream records that read a window as its key's bound.
    pub full: u64,
    /// Executions whose results differed, all of them counted.
    pub mismatched: u64,
    /// The first few of them: seed, request and each engine's result.
    pub mismatches: Vec<String>,
}

/// Mismatches kept per tally.
const MAX_MISMATCHES: usize = 20;

impl Tally {
    /// Adds `other`'s counts and mismatches to these.
    pub fn add(&mut self, other: &Tally) {
        self.contracts += other.contracts;
        self.refused += other.refused;
        self.executions += other.executions;
        self.native += other.native;
        self.windowed += other.windowed;
        self.windowed_executions += other.windowed_executions;
        self.windowed_native += other.windowed_native;
        self.modelled += other.modelled;
        self.modelled_executions += other.modelled_executions;
        self.late += other.late;
        self.bounded += other.bounded;
        self.full += other.full;
        self.mismatched += other.mismatched;
        self.mismatches.extend(other.mismatches.iter().cloned());
    }

    /// Counts one execution, whose result lines from each engine (named)
    /// must be the same bytes.
    fn compare(&mut self, seed: u64, record: usize, line: &str, results: &[(&str, Vec<u8>)]) {
        self.executions += 1;
        if results.iter().all(|(_, r)| *r == results[0].1) {
            return;
        }
        self.mismatched += 1;
        if self.mismatches.len() < MAX_MISMATCHES {
            let mut text = format!("seed {seed}, request {record}: {line}");
            for (engine, result) in results {
                let _ = write!(text, "\n  {engine:<7} {}", String::from_utf8_lossy(result));
            }
            self.mismatches.push(text);
        }
    }
}

/// Runs `contracts` generated contracts from `first_seed`, each on
/// `requests` random requests (a stream of that many records for a
/// contract with windows), on every engine.
pub fn run(first_seed: u64, contracts: u64, requests: usize) -> Tally {
    let engines = Engines::new(WindowLimits::DEFAULT);
    let bounded = Engines::new(TIGHT);
    let folder = ModelFolder::new(first_seed).expect("the model files are written to the temporary folder");
    let mut tally = Tally::default();
    for seed in first_seed..first_seed + contracts {
        let Some(bundle) = compile(seed, folder.path(), &mut tally) else { continue };
        tally.contracts += 1;
        if modelled(seed) {
            tally.modelled += 1;
            tally.modelled_executions += requests as u64;
        }
        let mut rng = Rng::new(seed.wrapping_mul(31));
        if windowed(seed) {
            let lines = stream(&mut rng, requests);
            let tight = seed % 3 == 0;
            tally.bounded += u64::from(tight);
            let engines = if tight { &bounded } else { &engines };
            engines.compare_stream(seed, bundle, &lines, &mut tally);
        } else {
            let lines: Vec<String> = (0..requests).map(|_| request(&mut rng)).collect();
            engines.compare_requests(seed, bundle, &lines, &mut tally);
        }
    }
    tally
}

/// The contract of `seed` compiled, or `None` (counted, and the first
/// few diagnostics printed) when the compiler refused it; its model files
/// are read from `models`.
fn compile(seed: u64, models: &Path, tally: &mut Tally) -> Option<ir::Bundle> {
    let text = contract(seed);
    let compiled = frontend::compile_in(models, &format!("gen{seed}.yaml"), &text);
    if compiled.bundle.is_none() {
        tally.refused += 1;
        if tally.refused <= 3 {
            eprintln!(
                "seed {seed}: the generated contract was refused:\n{}",
                compiled.diagnostics.render(false)
            );
        }
    }
    compiled.bundle
}

/// Bounds a stream's few keys pass: about one windowed contract in three
/// runs under them. One key's records and bytes are turned away past them;
/// the bytes in all are less than four keys' bound, so the store has one
/// shard and evicts its least recently seen key the same way on every
/// path (with several shards, which key goes depends on each store's
/// hasher).
const TIGHT: WindowLimits =
    WindowLimits { keys: None, bytes: Some(1200), key_records: Some(5), key_bytes: Some(400) };

/// The engines a run compares.
struct Engines {
    interp: runtime::Engine,
    jit: runtime::Engine,
}

impl Engines {
    fn new(limits: WindowLimits) -> Engines {
        Engines { interp: crate::engine_within("interp", limits), jit: crate::engine_within("jit", limits) }
    }

    /// Requests to a contract without windows: the interpreter, native
    /// code alone, and native code's batch entry over all of them.
    fn compare_requests(&self, seed: u64, bundle: ir::Bundle, lines: &[String], tally: &mut Tally) {
        let (Ok(a), Ok(b)) = (self.interp.load(bundle.clone()), self.jit.load(bundle)) else { return };
        let together = crate::evaluate_together(&b, lines);
        for (k, (line, z)) in lines.iter().zip(together).enumerate() {
            tally.compare(
                seed,
                k,
                line,
                &[("interp", json(&a, line)), ("jit", json(&b, line)), ("batch", z)],
            );
        }
        tally.native += b.native_counts().0;
    }

    /// A stream to a contract with windows, in order, four times over,
    /// each with window state of its own, fresh for the stream: the
    /// interpreter's contract's (`rulec eval` over a stream); a state the
    /// interpreter's contract is given (`Contract::evaluate_in`, as
    /// `rulec test` runs a case's history); the contract's loaded on the
    /// native engine; and a second one's on the native engine, through
    /// `Contract::evaluate_records` (which evaluates the records of a
    /// contract with windows one at a time, in order, as batch mode does).
    fn compare_stream(&self, seed: u64, bundle: ir::Bundle, lines: &[String], tally: &mut Tally) {
        let loaded = (self.interp.load(bundle.clone()), self.jit.load(bundle.clone()), self.jit.load(bundle));
        let (Ok(a), Ok(b), Ok(c)) = loaded else { return };
        let Some(state) = a.new_window_state() else { return };
        tally.windowed += 1;
        let together = crate::evaluate_together(&c, lines);
        for (k, (line, z)) in lines.iter().zip(together).enumerate() {
            let x = json(&a, line);
            tally.late += u64::from(contains(&x, b"is late for window"));
            tally.full += u64::from(contains(&x, b"is full for this key"));
            let given = in_state(&a, line, &state);
            tally.compare(
                seed,
                k,
                line,
                &[("interp", x), ("state", given), ("jit", json(&b, line)), ("batch", z)],
            );
        }
        tally.windowed_executions += lines.len() as u64;
        let native = b.native_counts().0 + c.native_counts().0;
        tally.windowed_native += native;
        tally.native += native;
    }
}

/// `line`'s result line from `contract`, its record entered into the
/// contract's own window state.
fn json(contract: &runtime::Contract, line: &str) -> Vec<u8> {
    let mut out = Vec::new();
    contract.evaluate_json(line, &mut out);
    out
}

/// `line`'s result line from the interpreter, its record entered into
/// `state` (the lines `Contract::evaluate_json` writes).
fn in_state(contract: &runtime::Contract, line: &str, state: &runtime::signals::WindowState) -> Vec<u8> {
    match contract.request(line) {
        Err(invalid) => invalid.to_json(),
        Ok(request) => match contract.evaluate_in(&request, state) {
            Ok(evaluation) => evaluation.to_json(),
            Err(e) => e.to_json(),
        },
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}
