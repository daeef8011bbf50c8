//! `cargo xtask differential --executions N [--seed S]`: a long
//! differential run (interpreter vs native code) across every core, with a
//! summary line to quote. Each thread takes its own range of seeds, so a
//! run is reproducible from its first seed.

use std::process::ExitCode;
use std::time::Instant;

use conformance::differential::{self, Tally};

/// Requests evaluated per generated contract.
const REQUESTS_PER_CONTRACT: usize = 50;

pub fn run(executions: u64, first_seed: u64) -> ExitCode {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    let contracts = executions.div_ceil(REQUESTS_PER_CONTRACT as u64);
    let per_thread = contracts.div_ceil(threads);
    let started = Instant::now();
    let tallies: Vec<Tally> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|k| {
                let seed = first_seed + k * per_thread;
                scope.spawn(move || differential::run(seed, per_thread, REQUESTS_PER_CONTRACT))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| Tally {
                    mismatches: vec!["a differential thread panicked".to_string()],
                    ..Tally::default()
                })
            })
            .collect()
    });
    let total = tallies.iter().fold(Tally::default(), |mut sum, t| {
        sum.contracts += t.contracts;
        sum.refused += t.refused;
        sum.executions += t.executions;
        sum.native += t.native;
        sum.mismatches.extend(t.mismatches.iter().cloned());
        sum
    });
    for mismatch in &total.mismatches {
        eprintln!("MISMATCH {mismatch}");
    }
    println!(
        "differential: {} executions over {} contracts (seeds {first_seed}..{}), {} refused, {} finished in native code, {} mismatches, {:.1}s",
        total.executions,
        total.contracts,
        first_seed + threads * per_thread,
        total.refused,
        total.native,
        total.mismatches.len(),
        started.elapsed().as_secs_f64()
    );
    if total.mismatches.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}
