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
    /// The largest request body, in bytes (`--max-body`).
    pub max_body: usize,
    /// How long a client may take to send a request's headers.
    pub header_timeout: Duration,
    pub engine: EngineChoice,
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
            header_timeout: Duration::from_secs(10),
            engine: EngineChoice::Auto,
            watch: true,
        }
    }
}
