//! `rulec bench --batch`: the batch matrix ([`benches::matrix`]), its
//! flags, the table on stdout and the rows as JSON.

use std::path::PathBuf;

use benches::matrix::{self, ContractChoice, Mode, Plan, Shape};

use crate::{Failure, Outcome};

/// The flags of `rulec bench --batch`.
#[derive(clap::Args, Debug)]
pub struct BatchArgs {
    /// Batch: comma-separated input formats (default: every format the batch crate reads).
    #[arg(long, value_delimiter = ',', requires = "batch")]
    formats: Vec<String>,
    /// Batch: comma-separated contracts: `reference`, a number of generated rules, or a signals contract (`windowless`, `windows`, `model`, `vectors`) (default: all of reference,6,24,96,504 and the four signals ones).
    #[arg(long, value_delimiter = ',', requires = "batch")]
    contracts: Vec<String>,
    /// Batch: comma-separated record shapes (default: flat,nested,array-heavy,wide).
    #[arg(long, value_delimiter = ',', requires = "batch")]
    shapes: Vec<String>,
    /// Batch: comma-separated modes: `in-process` (`rulec eval --input`), `decision` (the same with `--fields
    /// decision`), `http` (`rulec serve`, one POST over loopback; Arrow and NDJSON only), `sql` (`rulec sql` calling
    /// `rulec(...)` over the file), `sql-decision` (`rulec_decision(...)`) and `cluster-1`, `cluster-2` (`sql`'s
    /// query with `rulec sql --cluster` on a local cluster of one or two executors; Parquet only, and a `rulec` built
    /// with `--features cluster`); decision and the SQL modes run over Parquet and Arrow (default: all).
    #[arg(long, value_delimiter = ',', requires = "batch")]
    modes: Vec<String>,
    /// Batch: records per cell.
    #[arg(long, value_name = "N", default_value_t = 1_000_000, requires = "batch",
          value_parser = clap::value_parser!(u64).range(1..))]
    records: u64,
    /// Batch: also 10M records for the 6-rule contract.
    #[arg(long, requires = "batch")]
    full: bool,
    /// Batch: worker threads of each cell (default: the number of cores).
    #[arg(long, value_name = "N", requires = "batch", value_parser = clap::value_parser!(u64).range(1..))]
    threads: Option<u64>,
    /// Batch: keep the generated input files in DIR and reuse them next time (default: a temporary folder, deleted).
    #[arg(long, value_name = "DIR", requires = "batch")]
    data: Option<PathBuf>,
    /// Batch: also write the rows as JSON to FILE.
    #[arg(long, value_name = "FILE", requires = "batch")]
    json: Option<PathBuf>,
    /// Batch: leave out the DuckDB peer.
    #[arg(long, requires = "batch")]
    no_duckdb: bool,
}

pub fn run(args: &BatchArgs) -> Outcome {
    let plan = plan(args)?;
    let matrix = matrix::run(&plan, &mut |line| anstream::eprintln!("{line}")).map_err(Failure::Usage)?;
    print!("{}", matrix.markdown());
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&matrix).unwrap_or_default() + "\n";
        std::fs::write(path, text)
            .map_err(|e| Failure::Usage(format!("cannot write {}: {e}", path.display())))?;
    }
    if matrix.passed() {
        Ok(())
    } else {
        anstream::eprintln!(
            "rulec bench --batch: a cell failed or the formats' results differ (see the table)"
        );
        Err(Failure::Reported)
    }
}

/// The flags as a plan, each list checked against what exists.
fn plan(args: &BatchArgs) -> Result<Plan, Failure> {
    let formats = if args.formats.is_empty() {
        batch::InputFormat::ALL.to_vec()
    } else {
        let names: Vec<&str> = batch::InputFormat::ALL.iter().map(|f| f.name()).collect();
        args.formats
            .iter()
            .map(|name| {
                batch::InputFormat::ALL.into_iter().find(|f| f.name() == name).ok_or_else(|| {
                    Failure::Usage(format!(
                        "--formats: unknown format `{name}` (formats: {})",
                        names.join(", ")
                    ))
                })
            })
            .collect::<Result<_, _>>()?
    };
    let contracts = if args.contracts.is_empty() {
        matrix::shapes::CONTRACTS.to_vec()
    } else {
        args.contracts
            .iter()
            .map(|c| ContractChoice::parse(c).map_err(|e| Failure::Usage(format!("--contracts: {e}"))))
            .collect::<Result<_, _>>()?
    };
    let shapes = if args.shapes.is_empty() {
        Shape::ALL.to_vec()
    } else {
        args.shapes
            .iter()
            .map(|s| Shape::parse(s).map_err(|e| Failure::Usage(format!("--shapes: {e}"))))
            .collect::<Result<_, _>>()?
    };
    let modes = if args.modes.is_empty() {
        Mode::ALL.to_vec()
    } else {
        let mut modes = Vec::new();
        for name in &args.modes {
            let mode = Mode::parse(name).map_err(|e| Failure::Usage(format!("--modes: {e}")))?;
            if !modes.contains(&mode) {
                modes.push(mode);
            }
        }
        modes
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let rulec = std::env::current_exe()
        .map_err(|e| Failure::Usage(format!("cannot find the rulec binary to run the cells: {e}")))?;
    Ok(Plan {
        modes,
        formats,
        contracts,
        shapes,
        records: usize::try_from(args.records).unwrap_or(usize::MAX),
        full: args.full,
        threads: args.threads.map_or(cores, |t| usize::try_from(t).unwrap_or(cores)),
        data: args.data.clone(),
        rulec,
        duckdb: !args.no_duckdb,
    })
}
