//! `rulec cluster scheduler` and `rulec cluster executor`: the processes
//! of a Ballista cluster with the contracts' functions (the
//! `ballista-rulec` crate); `rulec sql --cluster df://HOST:PORT` runs a
//! query on it. Every process loads its contracts as `rulec sql` does;
//! a query's plan carries the revisions it was planned with, and a
//! process holding another revision refuses it.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::commands::eval::{EngineChoice, engine};
use crate::commands::targets;
use crate::{Failure, Outcome};

/// Run a process of a Ballista cluster that evaluates contracts in SQL.
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples (one machine):\n  \
    rulec cluster scheduler --contracts rules/ --bind 127.0.0.1:50050\n  \
    rulec cluster executor --contracts rules/ --scheduler 127.0.0.1:50050 --port 50051 --grpc-port 50052\n  \
    rulec sql --cluster df://127.0.0.1:50050 --contracts rules/ \"SELECT ... FROM '/data/transfers/'\"\n\n\
    Every process loads the same contracts (a process holding another revision of a contract a query\n\
    calls refuses it); the scheduler and every executor must read the files a query names.")]
pub struct Args {
    #[command(subcommand)]
    role: Role,
}

#[derive(clap::Subcommand, Debug)]
enum Role {
    /// The scheduler: plans queries and hands their tasks to executors.
    Scheduler(SchedulerArgs),
    /// An executor: runs tasks, the contracts' functions among them.
    Executor(ExecutorArgs),
}

#[derive(clap::Args, Debug)]
struct SchedulerArgs {
    #[command(flatten)]
    contracts: Contracts,
    /// Where the scheduler listens for executors and clients.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:50050")]
    bind: SocketAddr,
    /// The host executors reach the scheduler at (default: the bind address's; required when it binds
    /// every address, 0.0.0.0 or ::).
    #[arg(long, value_name = "HOST")]
    external_host: Option<String>,
    /// Seconds without a heartbeat after which an executor is taken as dead and its tasks are run again
    /// elsewhere (executors beat every --heartbeat seconds: keep this at three beats or more).
    #[arg(long, value_name = "SECONDS", default_value_t = 15, value_parser = clap::value_parser!(u64).range(2..))]
    executor_timeout: u64,
}

#[derive(clap::Args, Debug)]
struct ExecutorArgs {
    #[command(flatten)]
    contracts: Contracts,
    /// The scheduler, HOST:PORT.
    #[arg(long, value_name = "HOST:PORT")]
    scheduler: String,
    /// The address the executor listens on.
    #[arg(long, value_name = "HOST", default_value = "127.0.0.1")]
    bind_host: String,
    /// The host the scheduler and other executors reach this one at (default: the bind host).
    #[arg(long, value_name = "HOST")]
    external_host: Option<String>,
    /// The Arrow Flight port (results and shuffle data).
    #[arg(long, default_value_t = 50051)]
    port: u16,
    /// The gRPC port (tasks from the scheduler).
    #[arg(long, default_value_t = 50052)]
    grpc_port: u16,
    /// Tasks run at once (default: the number of cores).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..1025))]
    concurrency: Option<u64>,
    /// Where shuffle files go (default: a temporary folder).
    #[arg(long, value_name = "DIR")]
    work_dir: Option<PathBuf>,
    /// Seconds to wait for the scheduler to accept connections.
    #[arg(long, value_name = "SECONDS", default_value_t = 30)]
    wait: u64,
    /// Seconds between the executor's heartbeats to the scheduler.
    #[arg(long, value_name = "SECONDS", default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..))]
    heartbeat: u64,
}

/// The contracts a process serves.
#[derive(clap::Args, Debug)]
struct Contracts {
    /// Contracts (`.yaml`), bundles (`.bundle.json`) or folders of either (repeat the flag for several).
    #[arg(long = "contracts", value_name = "PATH", required = true)]
    paths: Vec<PathBuf>,
    /// How the contracts run, as for `rulec eval`.
    #[arg(long, value_enum, default_value_t)]
    engine: EngineChoice,
}

impl Contracts {
    fn load(&self) -> Result<Arc<runtime::ContractSet>, Failure> {
        let engine = engine(self.engine);
        let sources = targets::read(&self.paths)?;
        let set = targets::load(&engine, &sources)?;
        targets::report_native_failures(&set);
        Ok(Arc::new(set))
    }
}

pub fn run(args: Args) -> Outcome {
    ballista_rulec::init_logging();
    match args.role {
        Role::Scheduler(args) => {
            let contracts = args.contracts.load()?;
            let options = ballista_rulec::SchedulerOptions {
                bind: args.bind,
                external_host: args.external_host,
                executor_timeout: Duration::from_secs(args.executor_timeout),
            };
            block_on(ballista_rulec::scheduler(contracts, options))
        }
        Role::Executor(args) => {
            let (scheduler_host, scheduler_port) =
                ballista_rulec::scheduler_address(&format!("df://{}", args.scheduler)).map_err(|_| {
                    Failure::Usage(format!("--scheduler {}: expected HOST:PORT", args.scheduler))
                })?;
            let contracts = args.contracts.load()?;
            let options = ballista_rulec::ExecutorOptions {
                bind_host: args.bind_host,
                external_host: args.external_host,
                port: args.port,
                grpc_port: args.grpc_port,
                scheduler_host,
                scheduler_port,
                concurrency: args.concurrency.map(|n| n as usize),
                work_dir: args.work_dir.map(|dir| dir.display().to_string()),
                wait_for_scheduler: Duration::from_secs(args.wait),
                heartbeat: Duration::from_secs(args.heartbeat),
            };
            block_on(ballista_rulec::executor(contracts, options))
        }
    }
}

/// Runs a process's future on a runtime of its own.
fn block_on(process: impl Future<Output = Result<(), String>>) -> Outcome {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .thread_stack_size(datafusion_rulec::depth::THREAD_STACK)
        .enable_all()
        .build()
        .map_err(|e| Failure::Usage(format!("cannot start the process's threads: {e}")))?;
    runtime.block_on(process).map_err(Failure::Usage)
}
