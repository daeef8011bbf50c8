//! A measurement, not a test: scores 1M rows of a 4-feature logistic
//! regression in chunks of 1,024 (as the batch engine does) and then
//! records one at a time (as the server does), and prints nanoseconds per
//! row. Run it optimised:
//!
//! ```text
//! cargo run --release -p models --example score_bench [rows] [chunk]
//! ```

use std::hint::black_box;
use std::time::Instant;

use ir::ModelOutput;
use models::{Tract, testing};
use runtime::model::LoadedModel;

const FEATURES: usize = 4;

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<usize>().map_err(|e| format!("{a}: {e}")));
    let rows = args.next().transpose()?.unwrap_or(1_000_000);
    let chunk = args.next().transpose()?.unwrap_or(1_024);
    let bytes = testing::logistic(&[0.8, -1.5, 0.25, 2.0], -0.3);
    let model = Tract::new().load_model(&testing::declaration(
        "bench",
        bytes,
        FEATURES as u32,
        ModelOutput::Probability,
    ))?;
    let features = testing::rows(rows, FEATURES);

    measure("batch", &model, &features, chunk, 3)?;
    measure("one record at a time", &model, &features[..FEATURES * (rows / 10)], 1, 1)?;
    Ok(())
}

/// Scores `features` in chunks of `chunk` rows, `runs` times after a
/// warm-up run, and prints the best run's ns per row.
fn measure(
    what: &str,
    model: &dyn LoadedModel,
    features: &[f64],
    chunk: usize,
    runs: usize,
) -> Result<(), String> {
    let rows = features.len() / FEATURES;
    let run = || -> Result<f64, String> {
        let start = Instant::now();
        let mut total = 0.0;
        for part in features.chunks(chunk * FEATURES) {
            total += model.score(black_box(part), part.len() / FEATURES)?.iter().sum::<f64>();
        }
        black_box(total);
        Ok(start.elapsed().as_nanos() as f64 / rows as f64)
    };
    run()?;
    let best = (0..runs.max(1))
        .map(|_| run())
        .collect::<Result<Vec<f64>, String>>()?
        .into_iter()
        .fold(f64::MAX, f64::min);
    println!("{what}: {rows} rows in chunks of {chunk}: {best:.1} ns per row");
    Ok(())
}
