//! `rulec sql`: one SQL query in DataFusion, in process, with the
//! contracts given callable as `rulec(contract, channel, record)` and
//! `rulec_decision(...)` (the `datafusion-rulec` crate); files are tables
//! by their quoted path. With `--cluster df://HOST:PORT`, the query runs
//! on a Ballista cluster (`rulec cluster`) and is written the same way.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use datafusion_rulec::sql::{self, Format, QueryFailure};

use crate::commands::eval::{EngineChoice, engine};
use crate::commands::targets;
use crate::{Failure, Outcome};

/// Run one SQL query over files, with contracts callable from it.
#[derive(clap::Args, Debug)]
#[command(after_help = "Example (over the example contract and its example records):\n  \
    rulec sql --contracts examples/contracts/acme.payments.transfer.yaml \"\n    \
    SELECT currency, rulec_decision('acme.payments.transfer', 'batch', named_struct(\n        \
    'amount', amount, 'currency', currency, 'daily_total', daily_total,\n        \
    'source', source, 'destination', destination, 'purpose', purpose, 'tags', tags)) AS decision\n    \
    FROM 'cli/tests/data/records.ndjson'\"\n\n\
    The whole result is rulec(...), a struct of decision, reasons, findings, effects, errors and\n\
    error: `rulec(...)['reasons']`. Tables are files named by their quoted path, or a folder of\n\
    them: Parquet (.parquet), Arrow IPC (.arrow, .arrows), CSV (.csv) or NDJSON (.json, .ndjson,\n\
    .jsonl). A contract with windows cannot be called (SQL gives its rows in no order).")]
pub struct Args {
    /// The query; without it (or with `-`), the query is read from stdin.
    query: Option<String>,
    /// Read the query from this file.
    #[arg(long, value_name = "FILE", conflicts_with = "query")]
    file: Option<PathBuf>,
    /// Contracts (`.yaml`), bundles (`.bundle.json`) or folders of either, callable from the query
    /// (repeat the flag for several).
    #[arg(long, value_name = "PATH")]
    contracts: Vec<PathBuf>,
    /// How results are written (default: by the extension of --output, else a table).
    #[arg(long, value_enum)]
    format: Option<SqlFormat>,
    /// Where results go (default stdout).
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// How the contracts run, as for `rulec eval`.
    #[arg(long, value_enum, default_value_t)]
    engine: EngineChoice,
    /// Threads, and the partitions DataFusion plans (default: the number of cores).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..1025))]
    threads: Option<u64>,
    /// Run the query on the Ballista cluster of this scheduler (`df://HOST:PORT`, see `rulec cluster`)
    /// instead of in process; its files must be readable at their paths by the scheduler and every executor.
    #[cfg(feature = "cluster")]
    #[arg(long, value_name = "URL")]
    cluster: Option<String>,
    /// Give up on a query that has not finished after this many seconds (exit 1); a cluster query waits
    /// for executors as long as it takes without it.
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    timeout: Option<u64>,
}

/// The formats of `--format`.
#[derive(clap::ValueEnum, Clone, Copy, PartialEq, Eq, Debug)]
enum SqlFormat {
    /// An aligned text table (for a terminal: every row is read first).
    Table,
    Ndjson,
    Csv,
    /// Arrow IPC (the file format for a `.arrow` file, else the stream format).
    Arrow,
}

pub fn run(args: Args) -> Outcome {
    let query = query(&args)?;
    let engine = engine(args.engine);
    let set = if args.contracts.is_empty() {
        runtime::ContractSet::default()
    } else {
        let sources = targets::read(&args.contracts)?;
        targets::load(&engine, &sources)?
    };
    targets::report_native_failures(&set);
    let set = Arc::new(set);
    let threads = match args.threads {
        Some(n) => n as usize,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let format = args.format.map(format).unwrap_or_else(|| by_extension(args.output.as_deref()));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .thread_stack_size(datafusion_rulec::depth::THREAD_STACK)
        .enable_all()
        .build()
        .map_err(|e| Failure::Usage(format!("cannot start the query's threads: {e}")))?;
    let ctx = runtime.block_on(session(&args, &set, threads))?;
    // Planned and run on a worker (whose stack is THREAD_STACK), not on
    // the main thread.
    let (timeout, output) = (args.timeout, args.output.clone());
    let query = runtime
        .spawn(async move { within(timeout, sql::run(&ctx, &query, format, output.as_deref())).await });
    let ran = runtime.block_on(query).unwrap_or_else(|e| {
        Err(QueryFailure::Query(format!("internal error in rulec: the query's task failed: {e}")))
    });
    match ran {
        Ok(_rows) => Ok(()),
        // The query is wrong (it does not plan, a file does not read):
        // DataFusion's message, exit 1.
        Err(QueryFailure::Query(message)) => {
            let message = readable(&args, message);
            anstream::eprintln!("error: {message}");
            Err(Failure::Reported)
        }
        Err(QueryFailure::Output(message)) => Err(Failure::Usage(message)),
    }
}

/// A query's failure as said to the user: on a cluster, Ballista's
/// nested error values unwrapped ([`ballista_rulec::failure`]).
fn readable(args: &Args, message: String) -> String {
    #[cfg(feature = "cluster")]
    if let Some(url) = &args.cluster {
        return ballista_rulec::failure::readable(&message, url);
    }
    let _ = args;
    message
}

/// `query`'s outcome, or a query failure once `timeout` seconds passed.
async fn within<T>(
    timeout: Option<u64>,
    query: impl Future<Output = Result<T, QueryFailure>>,
) -> Result<T, QueryFailure> {
    let Some(seconds) = timeout else { return query.await };
    tokio::time::timeout(std::time::Duration::from_secs(seconds), query).await.unwrap_or_else(|_| {
        Err(QueryFailure::Query(format!("the query did not finish within {seconds} s (--timeout)")))
    })
}

/// The session the query runs in: in process, or the cluster's client
/// (a bad address or an unreachable scheduler is exit 2).
async fn session(
    args: &Args,
    set: &Arc<runtime::ContractSet>,
    threads: usize,
) -> Result<datafusion_rulec::datafusion::prelude::SessionContext, Failure> {
    #[cfg(feature = "cluster")]
    if let Some(url) = &args.cluster {
        let config =
            datafusion_rulec::datafusion::prelude::SessionConfig::new().with_target_partitions(threads);
        return ballista_rulec::client_with_config(set, url, config).await.map_err(Failure::Usage);
    }
    let _ = args;
    sql::session(set, threads).map_err(|e| {
        anstream::eprintln!("error: {e}");
        Failure::Reported
    })
}

/// The query: the argument, the file's text, or stdin's.
fn query(args: &Args) -> Result<String, Failure> {
    if let Some(path) = &args.file {
        return crate::inputs::read_text(path);
    }
    match args.query.as_deref() {
        Some(query) if query != "-" => Ok(query.to_string()),
        _ => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| Failure::Usage(format!("cannot read the query from stdin: {e}")))?;
            Ok(text)
        }
    }
}

fn format(choice: SqlFormat) -> Format {
    match choice {
        SqlFormat::Table => Format::Table,
        SqlFormat::Ndjson => Format::Ndjson,
        SqlFormat::Csv => Format::Csv,
        SqlFormat::Arrow => Format::Arrow,
    }
}

/// The format an output file's extension names; a table otherwise.
fn by_extension(output: Option<&Path>) -> Format {
    let extension = output.and_then(|p| p.extension()).and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    match extension.as_deref() {
        Some("arrow" | "arrows") => Format::Arrow,
        Some("csv") => Format::Csv,
        Some("ndjson" | "jsonl" | "json") => Format::Ndjson,
        _ => Format::Table,
    }
}
