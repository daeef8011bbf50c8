//! `rulec serve`: the rule server (the `server` crate) with its settings
//! from flags and the environment.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::commands::eval::EngineChoice;
use crate::{Failure, Outcome};

/// Serve a folder of contracts over HTTP.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "The bearer token comes from RULEC_TOKEN or --token-file; without one the server refuses to start unless --no-auth is given.\nRULEC_EVALUATION_TIMEOUT_MS sets the per-evaluation timeout (default 1000).\nA request body must keep arriving: each --body-timeout seconds of waiting for it must bring at least --min-body-rate bytes a second, or the request is answered 408 and the connection closed (RULEC_BODY_TIMEOUT and RULEC_MIN_BODY_RATE set them too; the flags win).\nNDJSON bodies are streamed: lines are evaluated as they arrive and results sent as they are ready, so a client must read the answer while it sends.\nBatches of bare records: POST /evaluations?contract=NAME[&channel=C][&fields=..][&keep=..] with an Arrow IPC stream (Content-Type: application/vnd.apache.arrow.stream) or NDJSON records; results in input order as an Arrow IPC stream or NDJSON (Accept: application/x-ndjson), streamed both ways.\n\nExamples:\n  RULEC_TOKEN=s3cret rulec serve --rules examples/contracts/\n  rulec serve --rules rules/ --addr 0.0.0.0:8080 --token-file /run/secrets/rulec --workers 4"
)]
pub struct Args {
    /// The folder of contracts (`.yaml`) and bundles (`.bundle.json`);
    /// watched, and reloaded when it changes (and on SIGHUP).
    #[arg(long, value_name = "DIR")]
    rules: PathBuf,
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
    /// A file holding the bearer token (instead of RULEC_TOKEN).
    #[arg(long, value_name = "FILE", conflicts_with = "no_auth")]
    token_file: Option<PathBuf>,
    /// Serve without a token (anyone who can connect may evaluate).
    #[arg(long)]
    no_auth: bool,
    /// Evaluation threads (default: the number of cores).
    #[arg(long)]
    workers: Option<usize>,
    /// Evaluations that may wait for a worker; more are answered 503
    /// (default: 256 per worker).
    #[arg(long)]
    queue: Option<usize>,
    /// The largest request body in bytes, JSON or NDJSON.
    #[arg(long, default_value_t = 1 << 20)]
    max_body: usize,
    /// The largest batch body in bytes: bare records (an Arrow IPC stream,
    /// or NDJSON with `?contract=`), streamed, never held whole; past it
    /// the request is answered 413, or its results end with an error.
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 30)]
    max_batch_body: usize,
    /// Batches of bare records served at once; one more is answered 503
    /// (default: one per worker).
    #[arg(long, value_name = "N")]
    max_batches: Option<usize>,
    /// The longest NDJSON request line in bytes; a longer line is answered
    /// with an error line and skipped, and the rest go on.
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 20)]
    max_line: usize,
    /// Seconds a client may take to send a request's headers.
    #[arg(long, default_value_t = 10)]
    header_timeout: u64,
    /// Seconds the server waits for more of a request body, and the window
    /// --min-body-rate is counted over (default 10, or RULEC_BODY_TIMEOUT).
    #[arg(long, value_name = "SECS")]
    body_timeout: Option<u64>,
    /// Bytes a second a request body must arrive at, over each
    /// --body-timeout window; 0 leaves only the timeout (default 1024, or
    /// RULEC_MIN_BODY_RATE).
    #[arg(long, value_name = "BYTES")]
    min_body_rate: Option<u64>,
    #[arg(long, value_enum, default_value_t = EngineChoice::Auto)]
    engine: EngineChoice,
    #[command(flatten)]
    windows: super::window_limits::WindowArgs,
    /// Reload on SIGHUP only, not when the folder changes.
    #[arg(long)]
    no_watch: bool,
    /// The log filter: a level (`error`, `warn`, `info`, `debug`,
    /// `trace`) for rulec's own logs, dependencies staying at `warn` or
    /// quieter; or a tracing directive, taken as it is, such as
    /// `rulec::request=off,info`. Default: RUST_LOG if set, else `info`.
    #[arg(long, value_name = "FILTER")]
    log_level: Option<String>,
}

pub fn run(args: Args) -> Outcome {
    let mut config = server::Config::new(args.rules.clone(), args.addr);
    config.token = token(&args)?;
    if let Some(workers) = args.workers {
        config.workers = workers.max(1);
        config.queue = config.workers * 256;
    }
    if let Some(queue) = args.queue {
        config.queue = queue.max(1);
    }
    config.max_body = args.max_body;
    config.max_batch_body = args.max_batch_body;
    config.window_limits = args.windows.limits();
    config.max_batches = args.max_batches.unwrap_or(config.workers).max(1);
    config.max_line = args.max_line.max(1);
    config.header_timeout = Duration::from_secs(args.header_timeout.max(1));
    config.body_pace = server::BodyPace {
        window: Duration::from_secs(setting(args.body_timeout, "RULEC_BODY_TIMEOUT", 10, "seconds")?.max(1)),
        min_rate: setting(args.min_body_rate, "RULEC_MIN_BODY_RATE", 1024, "bytes a second")?,
    };
    config.evaluation_timeout =
        Duration::from_millis(setting(None, "RULEC_EVALUATION_TIMEOUT_MS", 1000, "milliseconds")?);
    config.engine = match args.engine {
        EngineChoice::Interp => server::EngineChoice::Interp,
        EngineChoice::Jit => server::EngineChoice::Jit,
        EngineChoice::Auto => server::EngineChoice::Auto,
    };
    config.watch = !args.no_watch;
    server::run(config, args.log_level.as_deref()).map_err(Failure::Usage)
}

/// The token from `--token-file` or `RULEC_TOKEN`; none only with
/// `--no-auth`.
fn token(args: &Args) -> Result<Option<String>, Failure> {
    if args.no_auth {
        return Ok(None);
    }
    let token = match &args.token_file {
        Some(path) => std::fs::read_to_string(path)
            .map_err(|e| Failure::Usage(format!("cannot read the token file {}: {e}", path.display())))?
            .trim()
            .to_string(),
        None => std::env::var("RULEC_TOKEN").unwrap_or_default().trim().to_string(),
    };
    if token.is_empty() {
        return Err(Failure::Usage(
            "no token: set RULEC_TOKEN or --token-file, or pass --no-auth to serve without one".into(),
        ));
    }
    Ok(Some(token))
}

/// A number from its flag, else from the environment variable `variable`,
/// else `default`.
fn setting(flag: Option<u64>, variable: &str, default: u64, unit: &str) -> Result<u64, Failure> {
    if let Some(value) = flag {
        return Ok(value);
    }
    match std::env::var(variable) {
        Err(_) => Ok(default),
        Ok(text) => text
            .trim()
            .parse::<u64>()
            .map_err(|_| Failure::Usage(format!("{variable} must be a number of {unit}, not `{text}`"))),
    }
}
