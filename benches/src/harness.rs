//! Timing and statistics: warm-up, measured runs, percentiles and drift.

use std::time::{Duration, Instant};

use serde::Serialize;

/// Something to measure: one evaluation per call, on request `i` of the
/// workload (taken round-robin).
pub trait Target {
    fn name(&self) -> &str;
    /// Evaluates request `i`; the returned number keeps the work alive.
    fn run(&mut self, i: usize) -> usize;
}

/// How long and how often to measure.
#[derive(Clone, Debug)]
pub struct Settings {
    pub warmup: Duration,
    pub seconds: Duration,
    pub runs: usize,
    /// The number of distinct requests (round-robin).
    pub requests: usize,
}

/// One measured run.
#[derive(Clone, Debug, Serialize)]
pub struct RunStats {
    pub evals: u64,
    pub evals_per_s: f64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    /// p50 of the last tenth over p50 of the first tenth.
    pub drift: f64,
}

/// A target's figures: the median run, and every run.
#[derive(Clone, Debug, Serialize)]
pub struct TargetReport {
    pub name: String,
    pub evals_per_s: f64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    /// The lowest and highest evals/s over the runs.
    pub range: (f64, f64),
    pub runs: Vec<RunStats>,
    /// Why the target was not measured, when it was not.
    pub skipped: Option<String>,
    /// How the target differs from rulec's semantics (peers).
    pub notes: Option<String>,
}

impl TargetReport {
    pub fn skipped(name: &str, why: impl Into<String>) -> TargetReport {
        TargetReport {
            name: name.to_string(),
            evals_per_s: 0.0,
            p50_ns: 0,
            p99_ns: 0,
            range: (0.0, 0.0),
            runs: Vec::new(),
            skipped: Some(why.into()),
            notes: None,
        }
    }
}

/// Everything one `rulec bench` printed.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub machine: crate::machine::Machine,
    /// The cost of reading the clock twice: the floor of every latency.
    pub timer_floor_ns: u64,
    pub targets: Vec<TargetReport>,
    /// The compile-time bench (target `compile`), when it ran.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub compile: Vec<crate::compile::CompileRow>,
}

/// Measures one target.
pub fn run(target: &mut dyn Target, settings: &Settings) -> TargetReport {
    let mut i = 0usize;
    let mut sink = 0usize;
    let warm_until = Instant::now() + settings.warmup;
    while Instant::now() < warm_until {
        for _ in 0..64 {
            sink = sink.wrapping_add(target.run(i % settings.requests));
            i += 1;
        }
    }
    let mut runs = Vec::with_capacity(settings.runs);
    let mut latencies: Vec<u32> = Vec::new();
    for _ in 0..settings.runs.max(1) {
        latencies.clear();
        let start = Instant::now();
        let until = start + settings.seconds;
        loop {
            let t0 = Instant::now();
            sink = sink.wrapping_add(target.run(i % settings.requests));
            let t1 = Instant::now();
            latencies.push(u32::try_from((t1 - t0).as_nanos()).unwrap_or(u32::MAX));
            i += 1;
            if t1 >= until {
                break;
            }
        }
        let elapsed = start.elapsed().as_secs_f64();
        runs.push(stats(&latencies, elapsed));
    }
    std::hint::black_box(sink);
    summarize(target.name(), runs)
}

fn percentile(sorted: &[u32], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    // Nearest rank.
    let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    u64::from(sorted[rank.min(sorted.len()) - 1])
}

fn stats(latencies: &[u32], elapsed: f64) -> RunStats {
    let tenth = (latencies.len() / 10).max(1);
    let median_of = |part: &[u32]| {
        let mut part = part.to_vec();
        part.sort_unstable();
        percentile(&part, 50.0)
    };
    let first = median_of(&latencies[..tenth.min(latencies.len())]);
    let last = median_of(&latencies[latencies.len().saturating_sub(tenth)..]);
    let mut sorted = latencies.to_vec();
    sorted.sort_unstable();
    RunStats {
        evals: latencies.len() as u64,
        evals_per_s: latencies.len() as f64 / elapsed,
        p50_ns: percentile(&sorted, 50.0),
        p99_ns: percentile(&sorted, 99.0),
        drift: if first == 0 { 1.0 } else { last as f64 / first as f64 },
    }
}

fn summarize(name: &str, runs: Vec<RunStats>) -> TargetReport {
    let mut by_rate: Vec<&RunStats> = runs.iter().collect();
    by_rate.sort_by(|a, b| a.evals_per_s.total_cmp(&b.evals_per_s));
    let median = by_rate[by_rate.len() / 2];
    TargetReport {
        name: name.to_string(),
        evals_per_s: median.evals_per_s,
        p50_ns: median.p50_ns,
        p99_ns: median.p99_ns,
        range: (by_rate[0].evals_per_s, by_rate[by_rate.len() - 1].evals_per_s),
        runs: runs.clone(),
        skipped: None,
        notes: None,
    }
}

/// The cost of two clock reads, the floor under every latency.
pub fn timer_floor() -> u64 {
    let mut samples: Vec<u32> = (0..10_000)
        .map(|_| {
            let t0 = Instant::now();
            let t1 = Instant::now();
            u32::try_from((t1 - t0).as_nanos()).unwrap_or(u32::MAX)
        })
        .collect();
    samples.sort_unstable();
    percentile(&samples, 50.0)
}

impl Report {
    /// The report as a markdown table with ratios to the fastest target,
    /// to `native` and to the fastest peer ([`crate::PEERS`]).
    pub fn markdown(&self) -> String {
        let m = &self.machine;
        let mut out = format!(
            "machine: {} ({} cores), {}, commit {}\ntimer floor (two clock reads): {} ns\n\n",
            m.cpu, m.cores, m.rustc, m.commit, self.timer_floor_ns
        );
        let measured: Vec<&TargetReport> = self.targets.iter().filter(|t| t.skipped.is_none()).collect();
        let best = measured.iter().map(|t| t.evals_per_s).fold(0.0, f64::max);
        let native = measured.iter().find(|t| t.name == "native").map(|t| t.evals_per_s);
        let best_peer = measured
            .iter()
            .filter(|t| crate::PEERS.contains(&t.name.as_str()))
            .map(|t| t.evals_per_s)
            .reduce(f64::max);
        out.push_str(
            "| target | evals/s | range over runs | p50 | p99 | drift | vs fastest | vs native | vs best peer |\n",
        );
        out.push_str("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
        for t in &self.targets {
            if let Some(why) = &t.skipped {
                out.push_str(&format!("| {} | skipped: {why} | | | | | | | |\n", t.name));
                continue;
            }
            let drift = t.runs.iter().map(|r| r.drift).sum::<f64>() / t.runs.len().max(1) as f64;
            let vs =
                |other: f64| if other > 0.0 { format!("{:.2}x", t.evals_per_s / other) } else { "-".into() };
            out.push_str(&format!(
                "| {} | {} | {}-{} | {} ns | {} ns | {:.2} | {} | {} | {} |\n",
                t.name,
                human(t.evals_per_s),
                human(t.range.0),
                human(t.range.1),
                t.p50_ns,
                t.p99_ns,
                drift,
                vs(best),
                native.map_or("-".into(), vs),
                best_peer.map_or("-".into(), vs),
            ));
        }
        let notes: Vec<String> = self
            .targets
            .iter()
            .filter_map(|t| t.notes.as_ref().map(|n| format!("- {}: {n}", t.name)))
            .collect();
        if !notes.is_empty() {
            out.push_str("\nSemantic differences:\n");
            out.push_str(&notes.join("\n"));
            out.push('\n');
        }
        if !self.compile.is_empty() {
            out.push_str(
                "\nCompile time, median per stage (total: YAML to native code, without `load bundle`):\n\n",
            );
            out.push_str(&crate::compile::markdown(&self.compile));
        }
        out
    }
}

/// `1.23M`, `456K`.
pub fn human(rate: f64) -> String {
    if rate >= 1e6 {
        format!("{:.2}M", rate / 1e6)
    } else if rate >= 1e3 {
        format!("{:.0}K", rate / 1e3)
    } else {
        format!("{rate:.0}")
    }
}
