//! The vault watcher: inotify (through `notify`), debounced, mapped to vault-relative changes.
//!
//! Editors save in bursts (temp file, rename, chmod) and sync clients touch many files at once, so
//! raw events are debounced and renames are split into a removal and a creation. Hidden paths
//! (`.obsidian/`, `.trash/`, Quire's own temp files) are never reported.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use notify::EventKind;
use notify::event::{ModifyKind, RenameMode};
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer_opt};
use tokio::sync::broadcast;
use unicode_normalization::UnicodeNormalization;

/// How long to wait for a burst of events on one file to settle.
const DEBOUNCE: Duration = Duration::from_millis(75);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    Created,
    Modified,
    Removed,
    /// Changes were lost (the kernel's event queue overflowed in a burst): anything may have
    /// changed. `path` is empty; the index reconciles the whole vault.
    Rescan,
}

/// One visible file that appeared, changed or vanished.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VaultChange {
    /// Vault-relative, `/`-separated, NFC.
    pub path: String,
    pub kind: ChangeKind,
}

#[derive(Debug, thiserror::Error)]
#[error("cannot watch the vault for changes: {0}")]
pub struct WatchError(#[from] notify::Error);

/// Keeps the watch alive; dropping it stops the events.
pub struct VaultWatcher {
    _debouncer: Debouncer<notify::RecommendedWatcher, RecommendedCache>,
    state: Arc<AtomicU8>,
}

/// Whether the watch still reports the vault folder's changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchState {
    Live,
    /// The watched folder moved (it may come back) or inotify dropped the watch.
    Lost,
    /// The watched folder itself was deleted: whatever appears at its path later is another one,
    /// even when the file system gives it the same inode number.
    RootDeleted,
}

const LIVE: u8 = 0;
const LOST: u8 = 1;
const ROOT_DELETED: u8 = 2;

impl VaultWatcher {
    /// Watches `root` (canonical) recursively and sends every change to `sender`.
    pub fn start(
        root: &Path,
        sender: broadcast::Sender<VaultChange>,
    ) -> Result<VaultWatcher, WatchError> {
        let root_for_events = root.to_path_buf();
        let state = Arc::new(AtomicU8::new(LIVE));
        let state_in_handler = Arc::clone(&state);
        // Links are not followed while registering watches: following them made the walk `stat`
        // every file (6 s of a million-note vault's restart), and scans never descend a linked
        // folder, so the index has nothing there to keep current.
        // Nor are opens asked for (`CORE` leaves out access events): every read of a note, ours
        // included, was an event to carry through the debouncer, 10,000 a second under load.
        let config = notify::Config::default()
            .with_follow_symlinks(false)
            .with_event_kinds(notify::EventKindMask::CORE);
        let handler = move |result: DebounceEventResult| {
            let events = match result {
                Ok(events) => events,
                Err(errors) => {
                    for error in errors {
                        // A lost watch (inotify torn down) means changes are no longer seen; the
                        // watch guard starts a new one.
                        if matches!(error.kind, notify::ErrorKind::WatchNotFound) {
                            // Never downgrades RootDeleted: the guard must still see a new folder.
                            let _ = state_in_handler.compare_exchange(
                                LIVE,
                                LOST,
                                Ordering::Relaxed,
                                Ordering::Relaxed,
                            );
                        }
                        tracing::warn!(%error, "the vault watcher reported an error");
                    }
                    return;
                }
            };
            for event in events {
                if let Some(lost) = root_event(&root_for_events, &event.event) {
                    state_in_handler.fetch_max(lost, Ordering::Relaxed);
                }
                for change in changes_of(&root_for_events, &event.event) {
                    // No receiver just means no client is listening right now.
                    let _ = sender.send(change);
                }
            }
        };
        let config = notify_debouncer_full::Config::default()
            .with_timeout(DEBOUNCE)
            .with_notify_config(config);
        let mut debouncer = new_debouncer_opt::<_, notify::RecommendedWatcher, _>(
            config,
            handler,
            RecommendedCache::new(),
        )?;
        debouncer.watch(root, notify::RecursiveMode::Recursive)?;
        Ok(VaultWatcher {
            _debouncer: debouncer,
            state,
        })
    }

    pub fn state(&self) -> WatchState {
        match self.state.load(Ordering::Relaxed) {
            LIVE => WatchState::Live,
            LOST => WatchState::Lost,
            _ => WatchState::RootDeleted,
        }
    }
}

/// What an event on the watched folder itself (not something inside it) means for the watch.
fn root_event(root: &Path, event: &notify::Event) -> Option<u8> {
    if !event.paths.iter().any(|path| path == root) {
        return None;
    }
    match event.kind {
        EventKind::Remove(_) => Some(ROOT_DELETED),
        // inotify's IN_MOVE_SELF: the watch follows the folder, not the vault path.
        EventKind::Modify(ModifyKind::Name(_)) => Some(LOST),
        _ => None,
    }
}

fn changes_of(root: &Path, event: &notify::Event) -> Vec<VaultChange> {
    if event.need_rescan() {
        return vec![VaultChange {
            path: String::new(),
            kind: ChangeKind::Rescan,
        }];
    }
    let kinds: Vec<(ChangeKind, &PathBuf)> = match event.kind {
        EventKind::Create(_) => event
            .paths
            .iter()
            .map(|p| (ChangeKind::Created, p))
            .collect(),
        EventKind::Remove(_) => event
            .paths
            .iter()
            .map(|p| (ChangeKind::Removed, p))
            .collect(),
        EventKind::Modify(ModifyKind::Name(RenameMode::From)) => event
            .paths
            .iter()
            .map(|p| (ChangeKind::Removed, p))
            .collect(),
        EventKind::Modify(ModifyKind::Name(RenameMode::To)) => event
            .paths
            .iter()
            .map(|p| (ChangeKind::Created, p))
            .collect(),
        EventKind::Modify(ModifyKind::Name(RenameMode::Both)) => {
            let mut out = Vec::new();
            if let Some(from) = event.paths.first() {
                out.push((ChangeKind::Removed, from));
            }
            if let Some(to) = event.paths.get(1) {
                out.push((ChangeKind::Created, to));
            }
            out
        }
        EventKind::Modify(ModifyKind::Name(_)) => event
            .paths
            .iter()
            .map(|p| {
                if p.exists() {
                    (ChangeKind::Created, p)
                } else {
                    (ChangeKind::Removed, p)
                }
            })
            .collect(),
        EventKind::Access(_) => Vec::new(),
        // Attribute changes (inotify's IN_ATTRIB: chmod, chown, touch) count too: a note made
        // readable again or given back its old time changes nothing else, so without this the
        // index would keep it missing or stale until the next restart.
        EventKind::Modify(_) | EventKind::Any | EventKind::Other => event
            .paths
            .iter()
            .map(|p| (ChangeKind::Modified, p))
            .collect(),
    };
    kinds
        .into_iter()
        .filter_map(|(kind, path)| {
            vault_relative(root, path).map(|path| VaultChange { path, kind })
        })
        .collect()
}

/// The vault-relative NFC form of `path`, or `None` when it is outside the vault or hidden.
fn vault_relative(root: &Path, path: &Path) -> Option<String> {
    let inside = path.strip_prefix(root).ok()?;
    let mut segments = Vec::new();
    for component in inside.components() {
        let Component::Normal(name) = component else {
            return None;
        };
        let name = name.to_str()?;
        if name.starts_with('.') {
            return None;
        }
        segments.push(name.nfc().collect::<String>());
    }
    (!segments.is_empty()).then(|| segments.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// inotify drops events when its queue overflows (a burst of thousands of edits on a large
    /// vault) and says so once: that must reach the index as a rescan, not vanish.
    #[test]
    fn a_lost_burst_of_events_is_a_rescan() {
        let overflow = notify::Event::new(EventKind::Other).set_flag(notify::event::Flag::Rescan);
        assert_eq!(
            changes_of(Path::new("/v"), &overflow),
            [VaultChange {
                path: String::new(),
                kind: ChangeKind::Rescan
            }]
        );
        let plain = notify::Event::new(EventKind::Other).add_path(PathBuf::from("/v/a.md"));
        assert_eq!(
            changes_of(Path::new("/v"), &plain)[0].kind,
            ChangeKind::Modified
        );
    }

    #[test]
    fn hidden_and_outside_paths_are_not_changes() {
        let root = Path::new("/v");
        assert_eq!(
            vault_relative(root, Path::new("/v/a/b.md")).as_deref(),
            Some("a/b.md")
        );
        assert_eq!(
            vault_relative(root, Path::new("/v/.obsidian/app.json")),
            None
        );
        assert_eq!(vault_relative(root, Path::new("/v/a/.quire-1-2.tmp")), None);
        assert_eq!(vault_relative(root, Path::new("/elsewhere/x.md")), None);
        assert_eq!(
            vault_relative(root, Path::new("/v/Cafe\u{301}.md")).as_deref(),
            Some("Caf\u{e9}.md")
        );
    }
}
