//! rulec's rule server (`rulec serve`): a stateless HTTP server that
//! evaluates requests against a folder of contracts.
//!
//! - [`config`]: the settings; [`rules`]: the served rule set, compiled
//!   whole and swapped atomically on reload; [`watch`]: reload triggers;
//! - [`pool`]: the bounded evaluation pool (evaluations never run on the
//!   async threads); [`evaluate`]: what a worker does with a body;
//! - [`api`]: routing, auth, endpoints; [`body`]: reading a body within
//!   its size limit and its pace; [`ndjson`]: NDJSON streamed both ways;
//!   [`http`]: connections, header timeout, graceful shutdown;
//!   [`metrics`]: `/metrics`;
//! - [`start`] runs a server on a tokio runtime and returns a handle (the
//!   tests use it over loopback); [`run`] is `rulec serve`: logging,
//!   signals, exit on drain.

pub mod api;
pub mod body;
pub mod config;
pub mod evaluate;
pub mod http;
pub mod metrics;
pub mod ndjson;
pub mod pool;
pub mod rules;
pub mod watch;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::net::TcpListener;
use tokio::sync::watch as signal_watch;

pub use config::{BodyPace, Config, EngineChoice};

use crate::api::App;
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

/// The engine `config` asks for, with the Cranelift backend.
fn engine(config: &Config) -> runtime::Engine {
    let jit = match config.engine {
        EngineChoice::Interp => runtime::Jit::Off,
        EngineChoice::Jit => runtime::Jit::On,
        EngineChoice::Auto => runtime::Jit::Auto,
    };
    runtime::Engine::builder().jit(jit).native(Arc::new(backend::Jit::new())).build()
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
    });
    let (stop, stopped) = signal_watch::channel(false);
    let served = tokio::spawn(http::serve(listener, app.clone(), stopped));
    Ok(Running { addr, app, stop, served, _reloader: reloader })
}

/// `rulec serve`: logs as JSON lines on stderr at `log_level`, serves
/// until SIGTERM or SIGINT, drains, and returns.
pub fn run(config: Config, log_level: &str) -> Result<(), String> {
    let filter = tracing_subscriber::EnvFilter::try_new(log_level)
        .map_err(|e| format!("--log-level {log_level}: {e}"))?;
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
