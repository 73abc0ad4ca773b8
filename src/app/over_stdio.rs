//! Serving MCP over stdio, for a client that launched Quire itself: one session, as the owner,
//! until the client goes away or the vault folder is replaced.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::config::Config;
use crate::health::Health;
use crate::mcp::Shared;
use crate::systemd::ServiceNotifier;

pub(super) async fn serve(
    config: &Config,
    shared: Arc<Shared>,
    replaced: &CancellationToken,
    notifier: ServiceNotifier,
    health: Arc<Health>,
) -> anyhow::Result<()> {
    tracing::info!(vault = %config.vault.display(), "serving MCP over stdio");
    notifier.ready();
    notifier.status("serving MCP over stdio");
    crate::systemd::spawn_watchdog(health);
    tokio::select! {
        served = crate::mcp::serve_stdio(shared) => {
            served?;
            tracing::info!("stdio client disconnected; exiting");
        }
        () = replaced.cancelled() => {}
    }
    crate::embed::process_exiting();
    notifier.stopping();
    Ok(())
}
