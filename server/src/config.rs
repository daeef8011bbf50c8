//! The server's settings, as `rulec serve` fills them from its flags and
//! the environment.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// Which engine evaluates (`--engine`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum EngineChoice {
    Interp,
    Jit,
    Auto,
}

/// Everything `rulec serve` was told.
#[derive(Clone, Debug)]
pub struct Config {
    /// The folder of contracts (`.yaml`) and bundles (`.bundle.json`).
    pub rules: PathBuf,
    pub addr: SocketAddr,
    /// The bearer token; `None` only with `--no-auth`.
    pub token: Option<String>,
    /// Evaluation threads.
    pub workers: usize,
    /// Evaluations that may wait for a worker; more are answered 503.
    pub queue: usize,
    /// How long an evaluation may take, waiting included, before it is
    /// answered 503 (`RULEC_EVALUATION_TIMEOUT_MS`).
    pub evaluation_timeout: Duration,
    /// The largest request body, in bytes (`--max-body`), JSON or NDJSON.
    pub max_body: usize,
    /// The largest batch body, in bytes (`--max-batch-body`): bare
    /// records, Arrow or NDJSON, streamed (never held whole).
    pub max_batch_body: usize,
    /// Batch requests served at once (`--max-batches`); one more is
    /// answered 503.
    pub max_batches: usize,
    /// The longest NDJSON line, in bytes (`--max-line`): a longer line is
    /// answered with an error line and skipped, never buffered whole.
    pub max_line: usize,
    /// How long a client may take to send a request's headers.
    pub header_timeout: Duration,
    /// The body's pace (`--body-timeout`, `--min-body-rate`): how long the
    /// server waits for more of a body, and how much must arrive in that
    /// time. A body that falls behind is answered 408.
    pub body_pace: BodyPace,
    pub engine: EngineChoice,
    /// The bounds on each window's state of a served contract
    /// (`--max-window-keys`, `--max-window-bytes`, `--max-key-records`,
    /// `--max-key-bytes`).
    pub window_limits: runtime::window::WindowLimits,
    /// Reload when the folder changes (SIGHUP always reloads).
    pub watch: bool,
}

impl Config {
    /// Defaults for serving `rules` on `addr` without a token (tests).
    pub fn new(rules: PathBuf, addr: SocketAddr) -> Config {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        Config {
            rules,
            addr,
            token: None,
            workers: cores,
            queue: cores * 256,
            evaluation_timeout: Duration::from_millis(1000),
            max_body: 1 << 20,
            max_batch_body: 1 << 30,
            max_batches: cores,
            max_line: 1 << 20,
            header_timeout: Duration::from_secs(10),
            body_pace: BodyPace::default(),
            engine: EngineChoice::Auto,
            window_limits: runtime::window::WindowLimits::DEFAULT,
            watch: true,
        }
    }
}

/// How fast a request body must arrive, counted only while the server is
/// waiting for it (time spent evaluating or sending results is the
/// server's, not the client's). Like nginx's `client_body_timeout` with a
/// floor on the rate, so a client that sends a byte now and then (a slow
/// loris) cannot hold a connection open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BodyPace {
    /// The window: every stretch of this much waiting must bring at least
    /// `min_rate * window` bytes, and at least one.
    pub window: Duration,
    /// Bytes per second; 0 leaves only "at least one byte per window".
    pub min_rate: u64,
}

impl Default for BodyPace {
    /// Ten seconds, at least 1 KiB a second.
    fn default() -> BodyPace {
        BodyPace { window: Duration::from_secs(10), min_rate: 1024 }
    }
}

impl BodyPace {
    /// The bytes a full window must bring.
    pub fn bytes_per_window(&self) -> u64 {
        let bytes = u128::from(self.min_rate) * self.window.as_millis() / 1000;
        u64::try_from(bytes).unwrap_or(u64::MAX).max(1)
    }
}
