//! Composition root of `quire serve`: builds the components from a validated `Config` in startup
//! order, runs the chosen transport, and shuts down cleanly on SIGTERM or SIGINT. `build_ops` is
//! the one place `Ops` is assembled; the one-shot commands in `cli` use it too.
//!
//! Rooms: `prepare.rs` (before the runtime: folders, socket, sandbox) with `sandbox.rs` (the
//! plan), `assemble.rs` (`Ops` and semantic search), `reload.rs` (identities and ACL followed
//! live), `over_http.rs` and `over_stdio.rs` (the transports). This file is the startup order.
//!
//! With `main` and `cli`, the only code that uses `anyhow`: below here errors are typed.

mod assemble;
mod over_http;
mod over_stdio;
mod prepare;
mod relay;
mod reload;
mod sandbox;
mod state_owner;

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

pub use assemble::{build_ops, semantic_set_up};
pub use prepare::{Prepared, create_state_dir, prepare};
pub use reload::Reload;
pub use sandbox::sandbox_plan;
pub use state_owner::{StateOwnership, owner_named as state_owner_named, try_own_state};

use crate::config::{Config, HttpConfig};
use crate::health::Health;
use crate::http::IdentityTokens;
use crate::index::{IndexOptions, Reach, VaultChange, WatchGuard};
use crate::mcp::{Features, Shared};
use crate::ops::Ops;
use crate::systemd::ServiceNotifier;

/// Buffered vault changes per listener before a slow client is told to re-list.
const CHANGE_BUFFER: usize = 1024;

/// How often components that the watchdog guards must show progress.
const HEARTBEAT: Duration = Duration::from_secs(1);

/// Serves MCP over HTTP when configured or when systemd passed a socket, else over stdio, until
/// the client goes away or SIGTERM; or fails when the vault folder is replaced by one this process
/// cannot reach (the watch guard), so systemd starts Quire again.
///
/// One process owns a vault's state (`state_owner`): an HTTP server waits to be it; a stdio
/// server becomes it when no one is, else relays its client to the owner and takes over when the
/// owner exits.
pub async fn serve(config: Config, prepared: Prepared, reload: Reload) -> anyhow::Result<()> {
    let Prepared {
        inherited,
        confined,
    } = prepared;
    let notifier = ServiceNotifier;
    crate::embed::return_large_buffers();
    let health = Arc::new(Health::default());
    wait_for_first_sync(&config, &notifier).await;
    let mut owner = Owner {
        config: &config,
        confined,
        notifier,
        health: Arc::clone(&health),
        reload: Some(reload),
    };
    let replaced = match transport(&config, inherited.as_ref())? {
        Some(http) => {
            let ownership = state_owner::wait_to_own(&config.state_dir).await?;
            let owned = owner.take(ownership)?;
            let stop = over_http::Stop {
                replaced: owned.replaced.clone(),
                notifier,
            };
            let shared = Arc::clone(&owned.shared);
            over_http::serve(
                &config,
                &http,
                shared,
                owned.tokens.clone(),
                inherited,
                stop,
                health,
            )
            .await?;
            Some(owned.replaced)
        }
        None => over_stdio::serve(&config, owner, notifier, health)
            .await?
            .map(|owned| owned.replaced),
    };
    if replaced.is_some_and(|replaced| replaced.is_cancelled()) {
        anyhow::bail!(
            "the vault folder {} was replaced by a new folder while Quire ran; exiting so the \
             service manager starts Quire on it",
            config.vault.display()
        );
    }
    Ok(())
}

/// What it takes to become the owner of the vault's state, which a stdio server may do only
/// later, once an owner it was attached to exits.
struct Owner<'a> {
    config: &'a Config,
    confined: bool,
    notifier: ServiceNotifier,
    health: Arc<Health>,
    /// Taken by the one `take` a process makes.
    reload: Option<Reload>,
}

/// The vault's state as its owner holds it, with what the transports need.
struct Owned {
    shared: Arc<Shared>,
    tokens: IdentityTokens,
    replaced: CancellationToken,
    attached: state_owner::Attached,
    _ownership: state_owner::StateOwnership,
}

impl Owner<'_> {
    /// Opens the vault, its index, watcher and history as their one owner, and serves processes
    /// that attach over the owner's socket. The socket is bound first, so those that start
    /// meanwhile queue on it rather than give up.
    fn take(&mut self, ownership: state_owner::StateOwnership) -> anyhow::Result<Owned> {
        let config = self.config;
        let reload = self
            .reload
            .take()
            .context("this process already took the vault's state once")?;
        let listener = state_owner::listen(&config.state_dir)?;
        let ops = open_vault(config, self.notifier, &self.health)?;
        let (changes, _) = broadcast::channel(CHANGE_BUFFER);
        // Subscribed before the watcher starts, so no outside edit is missed.
        let outside_edits = changes.subscribe();
        let replaced = watch_vault(&ops, &changes, self.confined, &self.health)?;
        let (shared, tokens) = share(config, ops, changes, reload);
        record_outside_edits(Arc::clone(&shared.ops), outside_edits)?;
        let attached = state_owner::Attached::new();
        if let Some(listener) = listener {
            let uid = state_owner::state_uid(&config.state_dir)?;
            tokio::spawn(state_owner::serve_attached(
                listener,
                Arc::clone(&shared),
                attached.clone(),
                uid,
            ));
        }
        Ok(Owned {
            shared,
            tokens,
            replaced,
            attached,
            _ownership: ownership,
        })
    }
}

/// Opens the vault and its index (the reconcile runs in the background; tools wait for it, the
/// MCP handshake does not), finishes what a killed Quire left, and creates the memory layer's
/// starter files.
fn open_vault(config: &Config, notifier: ServiceNotifier, health: &Health) -> anyhow::Result<Ops> {
    notifier.status("opening the vault and its index");
    let ops = build_ops(
        config,
        IndexOptions {
            rebuild: false,
            without_chunks: !semantic_set_up(config),
            // STATUS=indexing 4000/10000 while the first reconcile runs (systemctl status shows it).
            progress: Some(Box::new(move |done, total| {
                if done == total {
                    notifier.status(&format!("serving MCP; {total} notes indexed"));
                } else if done % 1024 == 0 {
                    notifier.status(&format!("indexing {done}/{total}"));
                }
                true
            })),
            heartbeat: Some(health.register("index writer")),
        },
    )?;
    if !config.read_only {
        sweep_temp_files(ops.vault().root().to_path_buf(), ops.index().clone());
        let finished = ops.recover_moves();
        if finished > 0 {
            tracing::info!(finished, "finished moves that a killed Quire had cut short");
        }
    }
    // After the moves: a finished move's files then hold what its change staged. A history
    // that cannot be used is logged where it is opened; reads are served without it.
    if let Err(error) = ops.settle_history() {
        tracing::warn!(%error, "pending changes in the history could not be settled");
    }
    // After the first sync (awaited before), so templates never land on a vault still arriving.
    match ops.bootstrap_memory(config.read_only, config.sync.first_sync_marker.as_deref()) {
        Ok(crate::ops::Bootstrap::Created(files)) => {
            tracing::info!(
                files = files.len(),
                "created the memory layer's starter files"
            );
        }
        Ok(_) => {}
        Err(error) => tracing::warn!(%error, "cannot create the memory layer's starter files"),
    }
    Ok(ops)
}

/// Removes the temp files of writers killed mid-write, on a thread of its own once the startup
/// reconcile is done: the sweep walks the whole vault (3 s of a million notes), and beside the
/// reconcile's own walk it delayed the index's readiness. A temp file is hidden, so no client
/// waits for it. Quire's own writes name temp files of this process, which the sweep leaves.
fn sweep_temp_files(root: std::path::PathBuf, index: crate::index::Index) {
    let spawned = std::thread::Builder::new()
        .name("quire-temp-sweep".into())
        .spawn(move || {
            // Ready or failed, the reconcile is over; the handle must not keep the writer alive.
            let _ = index.wait_ready();
            drop(index);
            let removed = crate::vault::remove_orphaned_temp_files(&root);
            if removed > 0 {
                tracing::info!(
                    removed,
                    "removed temp files left by a Quire killed mid-write"
                );
            }
        });
    if let Err(error) = spawned {
        tracing::warn!(%error, "cannot start the sweep of temp files left by a killed Quire");
    }
}

/// Keeps the versions other programs make in the history, on a thread of its own, batching
/// bursts into one change. A listener that fell behind misses those versions only (the next
/// write of each file still records what it replaced).
fn record_outside_edits(
    ops: Arc<Ops>,
    mut changes: broadcast::Receiver<VaultChange>,
) -> anyhow::Result<()> {
    std::thread::Builder::new()
        .name("quire-history-outside".into())
        .spawn(move || {
            loop {
                let mut paths = Vec::new();
                match changes.blocking_recv() {
                    Ok(change) => paths.push(change.path),
                    Err(broadcast::error::RecvError::Lagged(missed)) => {
                        tracing::warn!(missed, "outside edits came faster than the history could keep them; some versions were not recorded");
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                }
                while let Ok(change) = changes.try_recv() {
                    paths.push(change.path);
                }
                ops.record_outside_edits(&paths);
            }
        })
        .context("cannot start recording outside edits")?;
    Ok(())
}

/// Sends the vault's changes to the index and, through `changes`, to the sessions. Returns the
/// token cancelled when the vault folder was replaced by one this process cannot reach: serving
/// stops and `serve` fails, so systemd starts Quire again on the new folder.
fn watch_vault(
    ops: &Ops,
    changes: &broadcast::Sender<VaultChange>,
    confined: bool,
    health: &Health,
) -> anyhow::Result<CancellationToken> {
    // The index listens before the watcher starts, so it misses no change.
    ops.index()
        .follow(changes.subscribe())
        .context("cannot start following vault changes")?;
    // Without a watcher Quire still serves; clients only miss change notifications.
    let guard = WatchGuard::start(
        ops.vault().root(),
        changes.clone(),
        ops.index().clone(),
        Reach {
            confined,
            supervised: crate::systemd::under_systemd(),
        },
    );
    let replaced = CancellationToken::new();
    tokio::spawn(guard.run(
        HEARTBEAT,
        health.register("vault watcher"),
        replaced.clone(),
    ));
    Ok(replaced)
}

/// Hands `ops` to the sessions (with the policy in force and semantic search starting), and
/// follows configuration reloads for them.
fn share(
    config: &Config,
    ops: Ops,
    changes: broadcast::Sender<VaultChange>,
    reload: Reload,
) -> (Arc<Shared>, IdentityTokens) {
    reload::log_access(&config.access);
    ops.set_policy(config.access.policy.clone());
    let ops = Arc::new(ops);
    assemble::start_semantic(config, Arc::clone(&ops));
    let (policy_changes, _) = broadcast::channel(4);
    let shared = Arc::new(Shared::new(
        ops,
        changes,
        Features {
            read_only: config.read_only,
            disabled_tools: config.disabled_tools.clone(),
            groups: config.tool_groups.clone(),
            safety: config.safety,
        },
        policy_changes,
    ));
    tokio::spawn(Arc::clone(&shared).follow_changes());
    let tokens = IdentityTokens::new(config.access.tokens.clone());
    tokio::spawn(reload::follow_access_changes(
        reload,
        config.config_file.clone(),
        Arc::clone(&shared),
        tokens.clone(),
    ));
    (shared, tokens)
}

/// HTTP when configured or when systemd passed a socket (auth stays on), else `None`: stdio.
fn transport(
    config: &Config,
    inherited: Option<&std::net::TcpListener>,
) -> anyhow::Result<Option<HttpConfig>> {
    Ok(match (&config.http, inherited) {
        (Some(http), _) => Some(http.clone()),
        // A socket from systemd means HTTP even without http.listen; auth stays on.
        (None, Some(listener)) => Some(HttpConfig {
            listen: listener.local_addr()?,
            public_url: None,
            allowed_hosts: Vec::new(),
            auth: true,
        }),
        (None, None) => None,
    })
}

/// How often Quire looks for the first-sync marker while it waits.
const FIRST_SYNC_POLL: Duration = Duration::from_secs(1);

/// Waits until the vault's first sync has completed (`[sync] first_sync_marker` exists): a vault
/// that is still arriving is never indexed, served or written. systemd orders Quire after the
/// first-sync unit already; this holds for any other way Quire is started.
async fn wait_for_first_sync(config: &Config, notifier: &ServiceNotifier) {
    let Some(marker) = &config.sync.first_sync_marker else {
        return;
    };
    let mut announced = false;
    while !marker.exists() {
        if !announced {
            announced = true;
            tracing::warn!(marker = %marker.display(), "waiting for the vault's first sync to complete before serving");
            notifier.status("waiting for the vault's first sync");
        }
        notifier.alive();
        tokio::time::sleep(FIRST_SYNC_POLL).await;
    }
    if announced {
        tracing::info!("the first sync has completed");
    }
}
