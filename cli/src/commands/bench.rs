//! `rulec bench`: measure targets side by side on one workload.

use std::path::PathBuf;
use std::time::Duration;

use benches::harness::{self, Report, Settings, Target, TargetReport};
use benches::machine::Machine;
use benches::targets::{self, EndToEnd, Evaluate, Workload};
use benches::workload;

use crate::{Failure, Outcome};

/// Output formats of the report.
#[derive(clap::ValueEnum, Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum ReportFormat {
    #[default]
    Markdown,
    Json,
}

/// Every target, in report order; `zen` to `rhai` are the peer engines
/// ([`benches::PEERS`], feature `peers`); `compile` is the compile-time
/// bench.
const ALL_TARGETS: [&str; 10] =
    ["interp", "jit", "native", "zen", "cel", "datalogic", "rhai", "e2e-interp", "e2e-jit", "compile"];

/// Measure evaluation speed: every target on the same requests, round-robin on one thread.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  rulec bench --seconds 2 --runs 3\n  rulec bench --targets interp --format json --output bench.json\n  rulec bench --batch --records 100000 --contracts reference,6 --shapes flat,nested --json matrix.json"
)]
pub struct Args {
    /// Measured seconds per run.
    #[arg(long, default_value_t = 2.0)]
    seconds: f64,
    /// Warm-up seconds before measuring.
    #[arg(long, default_value_t = 1.0)]
    warmup: f64,
    /// Measured runs per target (the report shows the median and range).
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Comma-separated targets (default: all).
    #[arg(long, value_delimiter = ',')]
    targets: Vec<String>,
    #[arg(long, value_enum, default_value_t)]
    format: ReportFormat,
    /// Write the report here instead of stdout.
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// The contract (default: the built-in reference workload).
    #[arg(long, requires = "requests")]
    contract: Option<PathBuf>,
    /// The requests, NDJSON (default: the reference workload's).
    #[arg(long, requires = "contract")]
    requests: Option<PathBuf>,
    /// Load-test `rulec serve` instead: this binary serves the reference
    /// contract on loopback, once interpreted and once with the JIT, and a
    /// load generator measures req/s and latency below and far above
    /// saturation (`--warmup` and `--seconds` per run).
    #[arg(long, conflicts_with_all = ["targets", "contract", "requests"])]
    server: bool,
    /// The batch matrix instead: every input format × contract × record
    /// shape, each cell a `rulec eval --input` process (wall time, records/s,
    /// MiB/s, peak RSS), results compared across formats; DuckDB beside the
    /// reference contract when `python3 -c 'import duckdb'` works.
    #[arg(long, conflicts_with_all = ["targets", "contract", "requests", "server", "output", "format"])]
    batch: bool,
    #[command(flatten)]
    matrix: super::bench_batch::BatchArgs,
}

/// Sets up and measures peer `name`, or reports why it cannot run; a
/// peer that panics while measured is reported skipped, and the rest
/// still runs.
fn measure_peer(
    name: &str,
    workload: &Workload,
    reference_workload: bool,
    settings: &Settings,
) -> TargetReport {
    if !reference_workload {
        return TargetReport::skipped(name, "the peers implement the reference workload only");
    }
    let (mut target, notes) = match benches::peer(name, workload) {
        Ok(peer) => peer,
        Err(why) => return TargetReport::skipped(name, why),
    };
    anstream::eprintln!("measuring {name} ...");
    let measured =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| harness::run(target.as_mut(), settings)));
    match measured {
        Ok(report) => TargetReport { notes: Some(notes.to_string()), ..report },
        Err(panic) => {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            TargetReport::skipped(name, format!("it panicked while measured: {message}"))
        }
    }
}

pub fn run(args: Args) -> Outcome {
    if args.server {
        return server_load(&args);
    }
    if args.batch {
        return super::bench_batch::run(&args.matrix);
    }
    let read = |path: &PathBuf| {
        std::fs::read_to_string(path)
            .map_err(|e| Failure::Usage(format!("cannot read {}: {e}", path.display())))
    };
    let (source, requests) = match (&args.contract, &args.requests) {
        (Some(c), Some(r)) => (read(c)?, read(r)?),
        _ => (workload::TRANSFER_CONTRACT.to_string(), workload::TRANSFER_REQUESTS.to_string()),
    };
    let reference_workload = args.contract.is_none();
    let engine = runtime::Engine::builder().jit(runtime::Jit::Off).build();
    let workload = Workload::new(&source, &requests, &engine).map_err(Failure::Usage)?;
    let jit_engine = crate::commands::eval::engine(crate::commands::eval::EngineChoice::Jit);
    let jit_workload = Workload::new(&source, &requests, &jit_engine).map_err(Failure::Usage)?;
    let native_failure = match jit_workload.contract.native_status() {
        runtime::engine::NativeStatus::Native => None,
        other => Some(format!("the contract could not be compiled: {other:?}")),
    };
    let wanted: Vec<&str> = if args.targets.is_empty() {
        ALL_TARGETS.to_vec()
    } else {
        args.targets.iter().map(String::as_str).collect()
    };
    if let Some(unknown) = wanted.iter().find(|t| !ALL_TARGETS.contains(t)) {
        return Err(Failure::Usage(format!(
            "unknown target `{unknown}` (targets: {})",
            ALL_TARGETS.join(", ")
        )));
    }
    let settings = Settings {
        warmup: Duration::from_secs_f64(args.warmup.max(0.0)),
        seconds: Duration::from_secs_f64(args.seconds.max(0.001)),
        runs: args.runs.max(1),
        requests: workload.lines.len(),
    };
    let mut reports: Vec<TargetReport> = Vec::new();
    let mut compile = Vec::new();
    for name in wanted {
        if name == "compile" {
            anstream::eprintln!("measuring compile time ...");
            let jit = backend::Jit::new();
            compile = benches::compile::measure_all(&source, Duration::from_millis(200), &jit)
                .map_err(Failure::Usage)?;
            continue;
        }
        if name.ends_with("jit")
            && let Some(why) = &native_failure
        {
            reports.push(TargetReport::skipped(name, why.clone()));
            continue;
        }
        if name == "native" && !reference_workload {
            let why = "the hand-written target implements the reference workload only";
            reports.push(TargetReport::skipped(name, why.to_string()));
            continue;
        }
        if benches::PEERS.contains(&name) {
            reports.push(measure_peer(name, &workload, reference_workload, &settings));
            continue;
        }
        let mut target: Box<dyn Target + '_> = match name {
            "interp" => Box::new(Evaluate::new(name, &workload)),
            "native" => Box::new(targets::Native::new(&workload).map_err(Failure::Usage)?),
            "jit" => Box::new(Evaluate::new(name, &jit_workload)),
            "e2e-interp" => Box::new(EndToEnd::new(name, &workload)),
            _ => Box::new(EndToEnd::new(name, &jit_workload)),
        };
        anstream::eprintln!("measuring {name} ...");
        reports.push(harness::run(target.as_mut(), &settings));
    }
    let report = Report {
        machine: Machine::detect(),
        timer_floor_ns: harness::timer_floor(),
        targets: reports,
        compile,
    };
    let text = match args.format {
        ReportFormat::Markdown => report.markdown(),
        ReportFormat::Json => serde_json::to_string_pretty(&report).unwrap_or_default() + "\n",
    };
    write_report(&text, args.output.as_deref())
}

/// `rulec bench --server`: the load test of the rule server.
fn server_load(args: &Args) -> Outcome {
    let warmup = Duration::from_secs_f64(args.warmup.max(0.0));
    let seconds = Duration::from_secs_f64(args.seconds.max(0.1));
    let (table, reports) = super::bench_server::run(warmup, seconds)?;
    let machine = Machine::detect();
    let text = match args.format {
        ReportFormat::Markdown => format!(
            "machine: {} ({} cores), {}, commit {}\nserver and load generator share the machine; {} s measured per run after {} s of warm-up\n\n{table}",
            machine.cpu,
            machine.cores,
            machine.rustc,
            machine.commit,
            seconds.as_secs_f64(),
            warmup.as_secs_f64()
        ),
        ReportFormat::Json => {
            serde_json::to_string_pretty(&serde_json::json!({ "machine": machine, "server": reports }))
                .unwrap_or_default()
                + "\n"
        }
    };
    write_report(&text, args.output.as_deref())
}

/// Writes a report to `--output`, or to stdout without it.
fn write_report(text: &str, output: Option<&std::path::Path>) -> Outcome {
    match output {
        Some(path) => std::fs::write(path, text)
            .map_err(|e| Failure::Usage(format!("cannot write {}: {e}", path.display()))),
        None => {
            print!("{text}");
            Ok(())
        }
    }
}
