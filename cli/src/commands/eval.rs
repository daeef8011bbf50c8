//! `rulec eval`: evaluate requests (or, in batch mode, bare input records)
//! against contracts and print one result line each, in order.

use std::io::{BufWriter, Write};
use std::path::PathBuf;

use ::batch::{InputFormat, OutputFormat};
use runtime::{ContractSet, Engine, Jit};

use crate::commands::targets;
use crate::inputs::{Lines, is_blank, request_lines};
use crate::{Failure, Outcome, batch, explain};

/// Which engine evaluates.
#[derive(clap::ValueEnum, Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum EngineChoice {
    /// The interpreter.
    Interp,
    /// Native code from the JIT, compiled at load.
    Jit,
    /// Interpret until a contract is hot, then switch to native code.
    #[default]
    Auto,
}

/// Evaluate requests against contracts: one JSON result line per request.
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:\n  \
    rulec eval examples/contracts/ --request examples/requests/acme.payments.transfer.ndjson\n  \
    cat requests.ndjson | rulec eval transfer.bundle.json --engine interp\n  \
    rulec eval transfer.yaml --request req.json --explain\n  \
    rulec eval transfer.yaml --request req.json --explain --format json\n  \
    rulec eval transfer.yaml --input records.ndjson --channel batch --output results.ndjson\n  \
    rulec eval transfer.yaml --input records.arrow --channel batch --fields decision --keep id --output decisions.arrow\n  \
    rulec eval transfer.yaml --input records.pb --proto transfer.proto --message acme.Transfer --channel batch")]
pub struct Args {
    /// A contract (`.yaml`), a bundle (`.bundle.json`) or a folder of either.
    target: PathBuf,
    /// Requests: one JSON request, or NDJSON (one per line). Default: NDJSON on stdin.
    #[arg(long, value_name = "FILE", conflicts_with = "input")]
    request: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t)]
    engine: EngineChoice,
    /// Explain each decision: rules applied and fired, their conditions as written with their values, lets.
    #[arg(long, conflicts_with = "input")]
    explain: bool,
    /// How `--explain` prints: `text` for people, `json` (one object per request).
    #[arg(long, value_enum, default_value_t, requires = "explain")]
    format: explain::Format,
    /// Batch mode: bare input records: NDJSON, a JSON array (`.json`), Arrow IPC (`.arrow`, `.arrows`),
    /// Avro (`.avro`), Protobuf (`.pb`) or Parquet (`.parquet`).
    #[arg(long, value_name = "FILE")]
    input: Option<PathBuf>,
    /// Batch mode: the output format (by extension when not given: `.arrow` and `.arrows` are Arrow IPC).
    #[arg(long, value_enum, requires = "input", conflicts_with = "request")]
    output_format: Option<OutputFormat>,
    /// Batch mode: only these parts of each result (decision,reasons,findings,effects,errors).
    #[arg(long, value_name = "PARTS", requires = "input", conflicts_with = "request")]
    fields: Option<String>,
    /// Batch mode: input fields copied into each result, to join results with their records.
    #[arg(long, value_name = "COL,...", requires = "input", conflicts_with = "request")]
    keep: Option<String>,
    /// Batch mode: the channel every record comes from (needed when the contract declares channels).
    #[arg(long, requires = "input", conflicts_with = "request")]
    channel: Option<String>,
    /// Batch mode: where results go (default stdout).
    #[arg(long, value_name = "FILE", requires = "input", conflicts_with = "request")]
    output: Option<PathBuf>,
    /// Batch mode: worker threads (default: the number of cores).
    #[arg(long, requires = "input", conflicts_with = "request")]
    threads: Option<usize>,
    /// Batch mode: the input format (by extension when not given: `.json`, `.arrow`/`.arrows`, `.avro`,
    /// `.pb`, `.parquet`; anything else is NDJSON).
    #[arg(long, value_enum, requires = "input", conflicts_with = "request")]
    input_format: Option<InputFormat>,
    /// Protobuf input: the schema, a `.proto` file (its folder is the include path) or a descriptor set (`.desc`, `.binpb`).
    #[arg(long, value_name = "FILE", requires = "input", conflicts_with = "request")]
    proto: Option<PathBuf>,
    /// Protobuf input: the fully qualified message name (default: the schema's one top-level message).
    #[arg(long, value_name = "NAME", requires = "input", conflicts_with = "request")]
    message: Option<String>,
    /// Stop an evaluation that runs longer than this (its line says
    /// `{"error":{"kind":"timeout",...}}`); default: no limit.
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
    timeout_ms: Option<u64>,
    #[command(flatten)]
    windows: super::window_limits::WindowArgs,
}

pub fn run(args: Args) -> Outcome {
    let timeout = args.timeout_ms.map(std::time::Duration::from_millis);
    let engine = engine_with(args.engine, timeout, args.windows.limits());
    let sources = targets::read(std::slice::from_ref(&args.target))?;
    let set = targets::load(&engine, &sources)?;
    targets::report_native_failures(&set);
    if let Some(input) = &args.input {
        let settings = batch::Settings {
            input: input.clone(),
            input_format: args.input_format,
            proto: args.proto.clone(),
            message: args.message.clone(),
            output: args.output.clone(),
            output_format: args.output_format,
            channel: args.channel.clone(),
            fields: args.fields.clone(),
            keep: args.keep.clone(),
            threads: args.threads,
        };
        return batch::run(&set, &settings);
    }
    let lines = request_lines(args.request.as_ref())?;
    if args.explain {
        let paths: Vec<(String, PathBuf)> =
            sources.iter().map(|s| (s.bundle.contract().name.clone(), s.path.clone())).collect();
        return explain::run(&set, &paths, lines, args.format);
    }
    evaluate_stream(&set, lines)
}

/// The engine for a choice: the interpreter, or the JIT at load (`jit`) or
/// once a contract is hot (`auto`); models are scored with tract.
pub fn engine(choice: EngineChoice) -> Engine {
    engine_with(choice, None, runtime::window::WindowLimits::DEFAULT)
}

/// [`engine`], with a time limit on each evaluation and bounds on window
/// state.
pub fn engine_with(
    choice: EngineChoice,
    timeout: Option<std::time::Duration>,
    limits: runtime::window::WindowLimits,
) -> Engine {
    let jit = match choice {
        EngineChoice::Interp => Jit::Off,
        EngineChoice::Jit => Jit::On,
        EngineChoice::Auto => Jit::Auto,
    };
    Engine::builder()
        .jit(jit)
        .native(std::sync::Arc::new(backend::Jit::new()))
        .models(std::sync::Arc::new(models::Tract::new()))
        .timeout(timeout)
        .window_limits(limits)
        .build()
}

fn evaluate_stream(set: &ContractSet, lines: Lines) -> Outcome {
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut buffer = Vec::with_capacity(1024);
    let mut all_valid = true;
    for line in lines {
        let line = line.map_err(|e| Failure::Usage(format!("cannot read requests: {e}")))?;
        if is_blank(&line) {
            continue;
        }
        buffer.clear();
        all_valid &= set.evaluate_line(&line, None, &mut buffer).evaluated();
        buffer.push(b'\n');
        out.write_all(&buffer).map_err(|e| Failure::Usage(format!("cannot write results: {e}")))?;
    }
    out.flush().map_err(|e| Failure::Usage(format!("cannot write results: {e}")))?;
    if all_valid { Ok(()) } else { Err(Failure::Reported) }
}
