//! rulec's rule server (`rulec serve`): a stateless HTTP server that
//! evaluates requests against a folder of contracts.
//!
//! - [`config`]: the settings; [`rules`]: the served rule set, compiled
//!   whole and swapped atomically on reload; [`watch`]: reload triggers;
//! - [`pool`]: the bounded evaluation pool (evaluations never run on the
//!   async threads); [`evaluate`]: what a worker does with a body;
//! - [`api`]: routing, auth, endpoints; [`body`]: reading a body within
//!   its size limit and its pace; [`ndjson`]: NDJSON requests streamed
//!   both ways; [`records`]: batches of bare records over HTTP (the
//!   `batch` crate on the pool), through [`pipe`]'s bounded channels;
//!   [`http`]: connections, header timeout, graceful shutdown;
//!   [`metrics`]: `/metrics`;
//! - [`start`] runs a server on a tokio runtime and returns a handle (the
//!   tests use it over loopback); [`run`] is `rulec serve`: logging,
//!   signals, exit on drain.

#![forbid(unsafe_code)]

pub mod api;
pub mod app;
pub mod body;
pub mod config;
pub mod evaluate;
pub mod evaluations;
pub mod http;
pub mod metrics;
pub mod ndjson;
pub mod pipe;
pub mod pool;
pub mod respond;
pub mod rules;
pub mod watch;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use tokio::net::TcpListener;
use tokio::sync::watch as signal_watch;

pub use config::{BodyPace, Config, EngineChoice};

use crate::app::App;
use crate::pool::Pool;
use crate::rules::Rules;

/// A running server.
#[derive(Debug)]
pub struct Running {
    pub addr: SocketAddr,
    pub app: Arc<App>,
    stop: signal_watch::Sender<bool>,
    served: tokio::task::JoinHandle<()>,
    _reloader: watch::Reloader,
}

impl Running {
    /// Stops accepting, lets in-flight requests finish, and returns.
    pub async fn shutdown(self) {
        self.app.draining.store(true, Ordering::Relaxed);
        let _ = self.stop.send(true);
        let _ = self.served.await;
    }
}

/// The engine `config` asks for, with the Cranelift backend and tract's
/// model runtime.
fn engine(config: &Config) -> runtime::Engine {
    let jit = match config.engine {
        EngineChoice::Interp => runtime::Jit::Off,
        EngineChoice::Jit => runtime::Jit::On,
        EngineChoice::Auto => runtime::Jit::Auto,
    };
    runtime::Engine::builder()
        .jit(jit)
        .native(Arc::new(backend::Jit::new()))
        .models(Arc::new(models::Tract::new()))
        .window_limits(config.window_limits)
        .build()
}

/// Compiles the rules and starts serving on the current tokio runtime. An
/// error (the rules do not compile, the address is taken) says why.
pub async fn start(config: Config) -> Result<Running, String> {
    let dir = config.rules.clone();
    let engine = engine(&config);
    let rules = tokio::task::spawn_blocking(move || Rules::load(&dir, engine))
        .await
        .map_err(|e| format!("loading the rules panicked: {e}"))??;
    let rules = Arc::new(rules);
    let listener =
        TcpListener::bind(config.addr).await.map_err(|e| format!("cannot listen on {}: {e}", config.addr))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let pool =
        Pool::new(config.workers, config.queue).map_err(|e| format!("cannot start the workers: {e}"))?;
    let reloader = watch::start(rules.clone(), &config.rules, config.watch)?;
    let app = Arc::new(App {
        config,
        rules,
        pool,
        metrics: metrics::Metrics::default(),
        draining: AtomicBool::new(false),
        batches: AtomicUsize::new(0),
    });
    let (stop, stopped) = signal_watch::channel(false);
    let served = tokio::spawn(http::serve(listener, app.clone(), stopped));
    Ok(Running { addr, app, stop, served, _reloader: reloader })
}

/// The log filter without `--log-level` or `RUST_LOG`: rulec's own
/// events (every one has a target under `rulec::`) at `info`, and
/// dependencies at `warn` (at `info`, Cranelift logs every function it
/// compiles, IR and all).
pub const DEFAULT_LOG_FILTER: &str = "warn,rulec=info";

/// The tracing filter for `rulec serve`: `--log-level` if given, else
/// `RUST_LOG` if set, else [`DEFAULT_LOG_FILTER`]. A bare level given to
/// `--log-level` is rulec's level, dependencies staying at `warn` or
/// quieter; a directive (`rulec::request=off,info`) and `RUST_LOG` are
/// taken as they are.
pub fn log_filter(log_level: Option<&str>) -> Result<tracing_subscriber::EnvFilter, String> {
    use tracing_subscriber::filter::LevelFilter;
    let directives = match log_level {
        Some(level) => match level.trim().parse::<LevelFilter>() {
            Ok(level) if level > LevelFilter::WARN => format!("warn,rulec={level}"),
            Ok(level) => level.to_string(),
            Err(_) => level.to_string(),
        },
        None => std::env::var("RUST_LOG")
            .ok()
            .filter(|filter| !filter.trim().is_empty())
            .unwrap_or_else(|| DEFAULT_LOG_FILTER.to_string()),
    };
    let given = if log_level.is_some() { "--log-level" } else { "RUST_LOG" };
    tracing_subscriber::EnvFilter::try_new(&directives).map_err(|e| format!("{given} {directives}: {e}"))
}

/// `rulec serve`: logs as JSON lines on stderr (see [`log_filter`]),
/// serves until SIGTERM or SIGINT, drains, and returns.
pub fn run(config: Config, log_level: Option<&str>) -> Result<(), String> {
    let filter = log_filter(log_level)?;
    let _ = tracing_subscriber::fmt()
        .json()
        .flatten_event(true)
        .with_current_span(false)
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("rulec-io")
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    runtime.block_on(async move {
        let running = start(config).await?;
        let contracts = running.app.rules.current().contracts.len();
        tracing::info!(target: "rulec::serve", addr = %running.addr, contracts, "serving");
        wait_for_termination().await;
        tracing::info!(target: "rulec::serve", "draining");
        running.shutdown().await;
        tracing::info!(target: "rulec::serve", "stopped");
        Ok(())
    })
}

/// Resolves on SIGTERM or SIGINT (Ctrl-C).
async fn wait_for_termination() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) {
            (Ok(mut term), Ok(mut int)) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
            }
            _ => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

#[cfg(test)]
mod tests {
    use super::log_filter;

    #[test]
    fn a_bare_level_is_rulecs_and_dependencies_stay_at_warn_or_quieter() {
        let cases = [
            ("debug", "rulec=debug,warn"),
            ("info", "rulec=info,warn"),
            ("warn", "warn"),
            ("error", "error"),
            ("rulec::request=off,info", "rulec::request=off,info"),
        ];
        for (given, want) in cases {
            let filter = log_filter(Some(given)).expect("a valid filter");
            assert_eq!(filter.to_string(), want, "--log-level {given}");
        }
        assert!(log_filter(Some("rulec=loud")).is_err());
    }
}
