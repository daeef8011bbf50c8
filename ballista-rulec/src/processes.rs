//! A scheduler and an executor with rulec's functions, each run until it
//! stops (an error, or the process's end).
//!
//! The scheduler plans each job in a session of Ballista's defaults with
//! the contracts' functions and rulec's file extensions, refusing a plan
//! that writes or defines anything ([`crate::read_only`]); an executor's
//! function registry is Ballista's default session's (nested functions
//! such as `named_struct` included) with the contracts' functions added.
//! Both decode rulec's calls pinned to the client's revisions.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ballista_core::extension::SessionConfigExt;
use ballista_core::registry::BallistaFunctionRegistry;
use ballista_executor::executor_process::{ExecutorProcessConfig, start_executor_process};
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::SchedulerConfig;
use datafusion::prelude::SessionConfig;
use runtime::ContractSet;

/// Where a scheduler listens, and when it takes an executor as dead.
#[derive(Clone, Debug)]
pub struct SchedulerOptions {
    pub bind: SocketAddr,
    /// The host executors reach it at (default: the bound address's;
    /// required when it binds every address).
    pub external_host: Option<String>,
    /// How long an executor may go without a heartbeat.
    pub executor_timeout: Duration,
}

/// Runs a scheduler until it stops.
pub async fn scheduler(contracts: Arc<ContractSet>, options: SchedulerOptions) -> Result<(), String> {
    let external_host = match options.external_host {
        Some(host) => host,
        None if options.bind.ip().is_unspecified() => {
            return Err(format!(
                "--bind {} listens on every address, and executors must be told one to reach the scheduler \
                 at: give --external-host HOST",
                options.bind
            ));
        }
        None => options.bind.ip().to_string(),
    };
    let timeout = options.executor_timeout.as_secs().max(2);
    let place = format!("scheduler {external_host}:{}", options.bind.port());
    crate::log_contracts(&place, &contracts);
    let (logical, physical) = crate::codecs(&contracts, &place);
    let mut config = SchedulerConfig {
        bind_host: options.bind.ip().to_string(),
        bind_port: options.bind.port(),
        external_host,
        executor_timeout_seconds: timeout,
        expire_dead_executor_interval_seconds: (timeout / 3).max(1),
        no_executors_grace_period_seconds: timeout,
        ..SchedulerConfig::default()
    };
    config.override_session_builder = Some(Arc::new(move |session_config| {
        let state = ballista_core::utils::default_session_builder(session_config)?;
        crate::read_only(datafusion_rulec::sql::extend(state, &contracts)?)
    }));
    config.override_logical_codec = Some(logical);
    config.override_physical_codec = Some(physical);
    let cluster = BallistaCluster::new_from_config(&config).await.map_err(|e| e.to_string())?;
    ballista_scheduler::scheduler_process::start_server(cluster, options.bind, Arc::new(config))
        .await
        .map_err(|e| e.to_string())
}

/// Where an executor listens, and the scheduler it serves.
#[derive(Clone, Debug)]
pub struct ExecutorOptions {
    pub bind_host: String,
    /// The host the scheduler and other executors reach it at (default:
    /// `bind_host`).
    pub external_host: Option<String>,
    /// Arrow Flight (results and shuffle data).
    pub port: u16,
    /// gRPC (tasks from the scheduler).
    pub grpc_port: u16,
    pub scheduler_host: String,
    pub scheduler_port: u16,
    /// Tasks run at once (default: the number of cores).
    pub concurrency: Option<usize>,
    /// Where shuffle files go (default: a temporary folder).
    pub work_dir: Option<String>,
    /// How long to wait for the scheduler to accept connections.
    pub wait_for_scheduler: Duration,
    /// How often the executor tells the scheduler it is alive.
    pub heartbeat: Duration,
}

/// Runs an executor until it stops; it waits up to
/// `wait_for_scheduler` for the scheduler first.
pub async fn executor(contracts: Arc<ContractSet>, options: ExecutorOptions) -> Result<(), String> {
    let every_address = options.bind_host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_unspecified());
    if every_address && options.external_host.is_none() {
        return Err(format!(
            "--bind-host {} listens on every address, and the scheduler must be told one to reach this \
             executor at: give --external-host HOST",
            options.bind_host
        ));
    }
    let host = options.external_host.clone().unwrap_or_else(|| options.bind_host.clone());
    let place = format!("executor {host}:{}", options.port);
    crate::log_contracts(&place, &contracts);
    let (logical, physical) = crate::codecs(&contracts, &place);
    let state = ballista_core::utils::default_session_builder(SessionConfig::new_with_ballista())
        .and_then(|state| datafusion_rulec::sql::extend(state, &contracts))
        .map_err(|e| e.to_string())?;
    let registry = BallistaFunctionRegistry::from(&state);
    let scheduler = format!("{}:{}", options.scheduler_host, options.scheduler_port);
    wait_for(&scheduler, options.wait_for_scheduler).await?;
    let config = ExecutorProcessConfig {
        bind_host: options.bind_host,
        external_host: options.external_host,
        port: options.port,
        grpc_port: options.grpc_port,
        scheduler_host: options.scheduler_host,
        scheduler_port: options.scheduler_port,
        // One attempt: we waited above (Ballista's retry loop never ends).
        scheduler_connect_timeout_seconds: 0,
        vcores: options
            .concurrency
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
        work_dir: options.work_dir,
        executor_heartbeat_interval_seconds: options.heartbeat.as_secs().max(1),
        override_function_registry: Some(Arc::new(registry)),
        override_logical_codec: Some(logical),
        override_physical_codec: Some(physical),
        ..ExecutorProcessConfig::default()
    };
    start_executor_process(Arc::new(config)).await.map_err(|e| e.to_string())
}

/// Waits until `address` accepts a TCP connection, up to `patience`.
pub(crate) async fn wait_for(address: &str, patience: Duration) -> Result<(), String> {
    let start = Instant::now();
    loop {
        let attempt =
            tokio::time::timeout(Duration::from_secs(2), tokio::net::TcpStream::connect(address)).await;
        let error = match attempt {
            Ok(Ok(_)) => return Ok(()),
            Ok(Err(e)) => e.to_string(),
            Err(_) => "timed out".to_string(),
        };
        if start.elapsed() >= patience {
            return Err(format!("cannot reach the scheduler at {address}: {error}"));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
