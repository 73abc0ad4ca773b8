//! Building `Ops` from a `Config`, for `serve`, the one-shot commands in `cli` and the tests'
//! `TestVault` alike, and starting semantic search beside it on a thread of its own.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;

use super::prepare::create_state_dir;
use crate::config::Config;
use crate::index::{Index, IndexOptions};
use crate::ops::Ops;
use crate::vault::Vault;

/// Opens the vault and its index and builds `Ops` over them, as every command that serves or reads
/// the vault does (and the integration tests' `TestVault`): the state directory (created private
/// when missing) holds the audit log; the vault takes the sync lock; the configured time zone and
/// daily-notes overrides apply. The index reconciles in the background with `index_options`;
/// callers that must see the whole vault first wait on `ops.index().wait_ready()`.
///
/// Callers that serve or read the vault as `serve` does pass `without_chunks` from
/// `semantic_set_up`, so no command rebuilds an index another one made.
///
/// The access policy is left to the caller: `serve` applies it and follows its reloads, one-shot
/// commands act as the owner.
pub fn build_ops(config: &Config, index_options: IndexOptions) -> anyhow::Result<Ops> {
    create_state_dir(config)?;
    let vault = Vault::open(&config.vault, config.max_note_bytes)
        .with_context(|| format!("cannot open the vault at {}", config.vault.display()))?
        .with_sync_lock(config.sync.lock_file.clone())
        .with_memory_folder(config.memory_folder.clone());
    let vault = Arc::new(vault);
    if let Some(parent) = config.index.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create the index folder {}", parent.display()))?;
    }
    let index = Index::open(&config.index, Arc::clone(&vault), index_options)
        .with_context(|| format!("cannot open the index at {}", config.index.display()))?;
    let audit_path = config.state_dir.join("audit.jsonl");
    let audit = crate::ops::AuditLog::open(&audit_path, config.audit)
        .with_context(|| format!("cannot open the audit log {}", audit_path.display()))?;
    let ops = Ops::new(Arc::clone(&vault), index);
    let ops = match config.history {
        Some(retention) => ops.with_history(open_history(config, retention)?),
        None => ops,
    };
    Ok(ops
        .with_audit(audit)
        .with_time_zone(config.time_zone.clone())
        .with_daily_notes(config.daily_notes.clone())
        .with_file_settings(config.files.clone())
        .with_protected_folders(config.protected_folders.clone())
        .with_move_journal(config.state_dir.join("moves")))
}

/// Opens the vault's history in the state directory (what a killed process left pending is
/// settled later, once cut moves are finished: `Ops::settle_history`).
fn open_history(
    config: &Config,
    retention: crate::history::Retention,
) -> anyhow::Result<crate::history::History> {
    let path = config.state_dir.join("history.db");
    match crate::history::History::open(&path, retention) {
        Ok(history) => Ok(history),
        // A damaged file must not keep the vault from being read (issue 63, F14): Quire serves
        // reads, refuses changes, and every refusal names the way out, as this log line does.
        Err(error) => {
            let unavailable = crate::history::History::unavailable(&path, error.to_string())
                .with_context(|| format!("cannot open the history {}", path.display()))?;
            tracing::error!(
                history = %path.display(),
                %error,
                "the history cannot be opened; serving reads only, every change answers \
                 history_unavailable. Stop Quire, move the file aside (for example to \
                 history.db.damaged) and start it again to begin a new history"
            );
            Ok(unavailable)
        }
    }
}

/// How often the background embedder looks for chunks without a vector.
const EMBED_POLL: Duration = Duration::from_secs(2);

/// Whether semantic search is set up (enabled, a library and a model found; resolving reads
/// manifests only): the index keeps embedding chunks only then (`IndexOptions::without_chunks`).
pub fn semantic_set_up(config: &Config) -> bool {
    let resolution = crate::embed::resolve(&config.search.models);
    config.search.models.enabled && resolution.library.is_ok() && resolution.model.is_ok()
}

/// Loads the model once the keyword index is ready, then keeps the vectors current on a thread of
/// its own. Any failure leaves search keyword-only, with the reason logged and reported.
pub(super) fn start_semantic(config: &Config, ops: Arc<Ops>) {
    let search = config.search.clone();
    let resolution = crate::embed::resolve(&search.models);
    if resolution.library.is_err() || resolution.model.is_err() {
        // Nothing to load (resolving reads manifests only): keyword-only from the first call,
        // never "the model is still loading" for a model that is not there.
        let error = match resolution.start() {
            Err(error) => error.to_string(),
            Ok(_) => "semantic search could not be set up".to_string(),
        };
        if search.models.enabled {
            tracing::warn!(%error, "semantic search is off; search is keyword-only (`quire doctor` says more)");
        }
        ops.disable_semantic(error);
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("quire-semantic".into())
        .spawn(move || {
            if ops.index().wait_ready().is_err() {
                return;
            }
            let service = match resolution.start() {
                Ok(service) => service,
                Err(error) => {
                    if search.models.enabled {
                        tracing::warn!(%error, "semantic search is off; search is keyword-only (`quire doctor` says more)");
                    }
                    ops.disable_semantic(error.to_string());
                    return;
                }
            };
            let rerank = search.rerank == crate::config::RerankMode::Blended;
            if let Err(error) = ops.enable_semantic(crate::ops::SemanticSearch::new(service, rerank)) {
                tracing::warn!(%error, "semantic search is off: the vector store cannot be prepared");
                ops.disable_semantic(error.to_string());
                return;
            }
            tracing::info!(status = %ops.semantic_status(), "semantic search enabled; embedding in the background");
            loop {
                match ops.embed_pending(&|_| {}) {
                    Ok(pass) if pass.embedded > 0 || pass.pruned > 0 => {
                        tracing::info!(embedded = pass.embedded, pruned = pass.pruned, chunks = pass.counts.chunks, "semantic vectors updated");
                    }
                    Ok(_) => {}
                    // The process is exiting under a load or a pass: nothing failed.
                    Err(_) if crate::embed::is_exiting() => return,
                    Err(error) => {
                        tracing::warn!(%error, "embedding failed; retrying later");
                    }
                }
                if Arc::strong_count(&ops) == 1 {
                    return;
                }
                std::thread::sleep(EMBED_POLL);
            }
        });
    if let Err(error) = spawned {
        tracing::warn!(%error, "cannot start the semantic search thread; search is keyword-only");
    }
}
