//! `cargo xtask differential --executions N [--seed S]`: a long
//! differential run (interpreter vs native code, and the paths of window
//! state for contracts with windows) across every core, with a summary
//! line to quote. Each thread takes its own range of seeds, so a
//! run is reproducible from its first seed.

use std::process::ExitCode;
use std::time::Instant;

use conformance::differential::{self, Tally};

/// Requests evaluated per generated contract (the length of the stream of
/// a contract with windows).
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
                    mismatched: 1,
                    mismatches: vec!["a differential thread panicked".to_string()],
                    ..Tally::default()
                })
            })
            .collect()
    });
    let total = tallies.iter().fold(Tally::default(), |mut sum, t| {
        sum.add(t);
        sum
    });
    for mismatch in &total.mismatches {
        eprintln!("MISMATCH {mismatch}");
    }
    println!(
        "differential: {} executions over {} contracts (seeds {first_seed}..{}), {} refused, {} finished in native code; {} executions over {} contracts with windows ({:.1}% of executions; {} late, {} in native code; {} contracts under tight bounds, {} reads of a full key); {} executions over {} contracts with models; {} mismatches, {:.1}s",
        total.executions,
        total.contracts,
        first_seed + threads * per_thread,
        total.refused,
        total.native,
        total.windowed_executions,
        total.windowed,
        100.0 * total.windowed_executions as f64 / total.executions.max(1) as f64,
        total.late,
        total.windowed_native,
        total.bounded,
        total.full,
        total.modelled_executions,
        total.modelled,
        total.mismatched,
        started.elapsed().as_secs_f64()
    );
    if total.mismatched == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}
