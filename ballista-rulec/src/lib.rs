//! rulec's contracts on a Ballista cluster (`rulec cluster`, `rulec sql
//! --cluster`). Ballista sends scalar functions by name in its plans, so
//! every process of a cluster has `rulec` and `rulec_decision` over its
//! own copy of the contracts: the [`scheduler`], each [`executor`], and
//! the [`client`] session that plans queries.
//!
//! One revision everywhere: each process loads its contracts itself, and
//! a query's plan carries the bundle hash of every contract the client
//! planned it with ([`codec`]); a scheduler or executor whose contract
//! differs refuses to run the call, naming the contract, both hashes and
//! itself. Which processes serve which contracts is the deployment's
//! concern (docs/DEPLOYMENT.md).
//!
//! - [`codec`]: Ballista's plan codecs, with the pins sent along with
//!   rulec's functions;
//! - [`processes`]: the scheduler and the executor, each run until it
//!   stops; [`read_only`]: the scheduler refuses plans that write or
//!   define anything;
//! - [`client`]: the session whose queries run on a cluster, and
//!   [`failure`]: its errors in a sentence.

#![forbid(unsafe_code)]

pub mod client;
pub mod codec;
pub mod failure;
pub mod processes;
pub mod read_only;

use std::sync::Arc;

use ballista_core::serde::{BallistaLogicalExtensionCodec, BallistaPhysicalExtensionCodec};
use runtime::ContractSet;

pub use client::{client, client_with_config};
pub use processes::{ExecutorOptions, SchedulerOptions, executor, scheduler};
pub use read_only::read_only;

/// The logical and physical codecs of a process (`place` names it in
/// messages): Ballista's, with rulec's functions pinned.
pub fn codecs(
    contracts: &Arc<ContractSet>,
    place: &str,
) -> (Arc<codec::LogicalCodec>, Arc<codec::PhysicalCodec>) {
    let pinning = codec::Pinning::new(contracts.clone(), place.to_string());
    let logical = codec::LogicalCodec {
        pinning: pinning.clone(),
        inner: Arc::new(BallistaLogicalExtensionCodec::default()),
    };
    let physical =
        codec::PhysicalCodec { pinning, inner: Arc::new(BallistaPhysicalExtensionCodec::default()) };
    (Arc::new(logical), Arc::new(physical))
}

/// Logs of Ballista (which logs through the `log` crate) and rulec on
/// stderr, as text: `RUST_LOG` if set, else Ballista's and rulec's
/// `info` lines and every other crate's warnings.
pub fn init_logging() {
    // `ballista_rulec=info`: each process's contracts and revision, said
    // once at start, so an operator compares them across the cluster.
    let filter =
        std::env::var("RUST_LOG").ok().filter(|filter| !filter.trim().is_empty()).unwrap_or_else(|| {
            "warn,ballista_scheduler=info,ballista_executor=info,ballista_rulec=info,rulec=info".to_string()
        });
    let filter = tracing_subscriber::EnvFilter::try_new(filter)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    // Colour only on a terminal: a log redirected to a file is text.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(ansi)
        .try_init();
}

/// `df://HOST:PORT` as its host and port.
pub fn scheduler_address(url: &str) -> Result<(String, u16), String> {
    let expected = || format!("`{url}` is not a scheduler's address: expected df://HOST:PORT");
    let address = url.strip_prefix("df://").ok_or_else(expected)?;
    let (host, port) = address.rsplit_once(':').ok_or_else(expected)?;
    let port: u16 = port.parse().map_err(|_| expected())?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.is_empty() || host.contains('/') || port == 0 {
        return Err(expected());
    }
    Ok((host.to_string(), port))
}

/// Logs, once at start, what `place` serves: its contracts' revision and
/// each contract's name and bundle hash. A process started with another
/// revision is seen here before a query reaches it (a query's call is
/// refused by it then, naming both hashes).
pub fn log_contracts(place: &str, contracts: &ContractSet) {
    let names: Vec<String> =
        contracts.contracts().iter().map(|c| format!("{} {}", c.name(), c.hash())).collect();
    tracing::info!("{place} serves revision {} ({})", contracts.revision(), names.join(", "));
}
