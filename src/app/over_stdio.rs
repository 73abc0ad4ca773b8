//! Serving MCP over stdio, for a client that launched Quire itself: one session, as the owner,
//! until the client goes away or the vault folder is replaced.
//!
//! Several clients start one `quire serve` each on the same vault (Claude Desktop, Claude Code
//! and Cursor side by side): the first owns the vault's state, the others relay their client to
//! it over its socket, and when it exits one of them takes over while the rest attach to that
//! one (`relay.rs` keeps each client's session across the change). An owner whose own client
//! left keeps serving the attached ones until they leave too.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite};

use super::relay::{self, Ended, Memory};
use super::state_owner;
use super::{Owned, Owner};
use crate::config::Config;
use crate::health::Health;
use crate::systemd::ServiceNotifier;

/// How long a process waits for an owner that holds the lock but does not answer on its socket
/// (one starting up answers within moments; its socket is bound before the vault opens).
const ATTACH_BOUND: Duration = Duration::from_secs(30);
const ATTACH_RETRY: Duration = Duration::from_millis(100);

/// The in-process pipe between the relay and this process's own MCP server.
const PIPE_BYTES: usize = 1 << 16;

/// Serves the stdio client until it goes away; returns what this process owned, if it came to.
pub(super) async fn serve(
    config: &Config,
    mut owner: Owner<'_>,
    notifier: ServiceNotifier,
    health: Arc<Health>,
) -> anyhow::Result<Option<Owned>> {
    notifier.ready();
    notifier.status("serving MCP over stdio");
    crate::systemd::spawn_watchdog(health);
    let mut client_lines = relay::lines_of(tokio::io::stdin());
    let mut client_out = tokio::io::stdout();
    let mut memory = Memory::default();
    let mut owned: Option<Owned> = None;
    let mut waiting_since: Option<Instant> = None;
    loop {
        let (read, write) = if let Some(owned) = &owned {
            in_process(Arc::clone(&owned.shared))
        } else if let Some(ownership) = state_owner::try_own_state(&config.state_dir)? {
            if memory.initialised() {
                tracing::info!(
                    "the Quire this one was attached to exited; this one owns the vault's state now"
                );
            } else {
                tracing::info!(vault = %config.vault.display(), "serving MCP over stdio");
            }
            owned = Some(owner.take(ownership)?);
            continue;
        } else if let Some(stream) = state_owner::connect(&config.state_dir).await {
            waiting_since = None;
            tracing::info!(
                owner_pid = state_owner::state_owner_pid(&config.state_dir),
                vault = %config.vault.display(),
                "another quire serve owns this vault's state; relaying this client to it"
            );
            let (read, write) = stream.into_split();
            (
                Box::new(read) as BackendRead,
                Box::new(write) as BackendWrite,
            )
        } else {
            let since = *waiting_since.get_or_insert_with(Instant::now);
            if since.elapsed() > ATTACH_BOUND {
                anyhow::bail!(
                    "another quire serve ({}) owns the state directory {} but does not answer \
                     on its socket; stop it, or give this server its own state directory",
                    state_owner::owner_named(&config.state_dir),
                    config.state_dir.display()
                );
            }
            tokio::time::sleep(ATTACH_RETRY).await;
            continue;
        };
        // Only an owner's vault folder can be replaced under it; an attached relay never is.
        let replaced = owned
            .as_ref()
            .map(|owned| owned.replaced.clone())
            .unwrap_or_default();
        let relayed = relay::relay(
            &mut memory,
            &mut client_lines,
            &mut client_out,
            relay::lines_of(read),
            write,
        );
        let ended = tokio::select! {
            ended = relayed => Some(ended),
            // The vault folder was replaced: `app::serve` fails so Quire is started again.
            () = replaced.cancelled() => None,
        };
        match ended {
            None => return Ok(owned),
            Some(Ended::Client) => break,
            // This process's own server ended the session (a protocol error): nothing to retry.
            Some(Ended::Backend) if owned.is_some() => break,
            Some(Ended::Backend) => tracing::info!("the Quire this one was attached to went away"),
        }
    }
    tracing::info!("stdio client disconnected");
    if let Some(owned) = &owned {
        linger(owned).await;
    }
    crate::embed::process_exiting();
    notifier.stopping();
    Ok(owned)
}

/// The halves of the stream to whichever server serves the client.
type BackendRead = Box<dyn AsyncRead + Send + Unpin>;
type BackendWrite = Box<dyn AsyncWrite + Send + Unpin>;

/// This process's own MCP server on an in-process pipe: the halves the relay reads and writes.
fn in_process(shared: Arc<crate::mcp::Shared>) -> (BackendRead, BackendWrite) {
    let (ours, theirs) = tokio::io::duplex(PIPE_BYTES);
    let (server_read, server_write) = tokio::io::split(theirs);
    tokio::spawn(async move {
        if let Err(error) = crate::mcp::serve_stream(shared, server_read, server_write).await {
            tracing::warn!(%error, "the stdio session failed");
        }
    });
    let (read, write) = tokio::io::split(ours);
    (Box::new(read), Box::new(write))
}

/// Keeps serving the sessions attached to this owner after its own client left, so they need
/// not take over; SIGTERM or SIGINT ends it at once (they then do).
async fn linger(owned: &Owned) {
    if owned.attached.now() == 0 {
        return;
    }
    tracing::info!(
        sessions = owned.attached.now(),
        "serving the sessions attached to this Quire until they end"
    );
    let terminated = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    };
    tokio::select! {
        () = owned.attached.none_left() => {}
        () = terminated => {}
        () = owned.replaced.cancelled() => {}
    }
}
