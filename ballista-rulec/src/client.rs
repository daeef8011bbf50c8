//! The client: a session whose queries are planned here, with the
//! contracts' functions pinned to their revisions, and run on the cluster
//! of a scheduler. Files are tables by their path, as in `rulec sql`;
//! the scheduler and every executor must be able to read them at that
//! path.

use std::sync::Arc;
use std::time::Duration;

use ballista::prelude::SessionContextExt;
use ballista_core::extension::SessionConfigExt;
use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};
use runtime::ContractSet;

/// How long the client waits for the scheduler to accept a connection.
const CONNECT: Duration = Duration::from_secs(5);

/// A session on the cluster of the scheduler at `url` (`df://HOST:PORT`).
pub async fn client(contracts: &Arc<ContractSet>, url: &str) -> Result<SessionContext, String> {
    client_with_config(contracts, url, SessionConfig::new()).await
}

/// [`client`], on `config` (target partitions and the like).
pub async fn client_with_config(
    contracts: &Arc<ContractSet>,
    url: &str,
    config: SessionConfig,
) -> Result<SessionContext, String> {
    let (host, port) = crate::scheduler_address(url)?;
    crate::processes::wait_for(&format!("{host}:{port}"), CONNECT).await?;
    let (logical, physical) = crate::codecs(contracts, "the client");
    let config = config
        .upgrade_for_ballista()
        .with_ballista_logical_extension_codec(logical)
        .with_ballista_physical_extension_codec(physical);
    let state = SessionStateBuilder::new().with_config(config).with_default_features().build();
    let ctx = SessionContext::remote_with_state(url, state).await.map_err(|e| e.to_string())?;
    // Ballista's upgrade resets the scalar functions: rulec's go after.
    let state = datafusion_rulec::sql::extend(ctx.state(), contracts).map_err(|e| e.to_string())?;
    Ok(datafusion_rulec::sql::context(state))
}
