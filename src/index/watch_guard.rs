//! Keeps the vault watch on the vault folder. A folder renamed away and back is the same folder
//! (the same inode), and the inotify watch follows it. A folder deleted and made again (a restore
//! from backup, `rm -r` and a fresh clone) is a new one: the watch, and under a sandbox the
//! landlock rules fixed at start (or a systemd bind mount), still hold the old one.
//!
//! Once a second the guard compares the folder at the vault path with the one it watches. Free of
//! confinement, it watches the new folder and reconciles the index with it. Confined and run by
//! systemd, it asks Quire to exit so systemd starts it again on the new folder; confined and run by
//! hand, it says so in the log, and tools keep answering errors that ask for a restart.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::{Index, VaultChange, VaultWatcher, WatchState};
use crate::health::Heartbeat;

/// A folder's identity: the same path may name another folder later.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FolderId {
    dev: u64,
    ino: u64,
}

impl FolderId {
    /// The folder at `path` now, or `None` when nothing (or no folder) is there.
    fn of(path: &Path) -> Option<FolderId> {
        let metadata = std::fs::metadata(path).ok()?;
        metadata.is_dir().then(|| FolderId {
            dev: metadata.dev(),
            ino: metadata.ino(),
        })
    }
}

/// How far this process can follow a new folder at the vault path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reach {
    /// Landlock rules (fixed at start, bound to the old folder) confine the process.
    pub confined: bool,
    /// systemd runs Quire and starts it again when it exits with an error (the NixOS module's
    /// `Restart=on-failure`); its mount namespace may also hold the old folder.
    pub supervised: bool,
}

#[derive(Debug, PartialEq, Eq)]
enum Action {
    Nothing,
    /// The vault path names no folder: wait for it to come back.
    Wait,
    /// Watch the folder at the vault path again and reconcile the index with it.
    Rewatch,
    /// Exit so the service manager starts Quire on the new folder.
    Restart,
    /// A new folder this process cannot reach: only a restart by hand helps.
    Stuck,
}

fn next_action(
    watched: FolderId,
    now: Option<FolderId>,
    watch: WatchState,
    reach: Reach,
) -> Action {
    let Some(now) = now else {
        return Action::Wait;
    };
    // A deleted folder never comes back: a folder at its path is new even with its inode number.
    let new = now != watched || watch == WatchState::RootDeleted;
    match (new, watch) {
        (false, WatchState::Live) => Action::Nothing,
        (false, _) => Action::Rewatch,
        (true, _) if reach.supervised => Action::Restart,
        (true, _) if reach.confined => Action::Stuck,
        (true, _) => Action::Rewatch,
    }
}

/// The vault watcher and what keeps it pointed at the vault folder.
pub struct WatchGuard {
    root: PathBuf,
    watched: FolderId,
    watcher: Option<VaultWatcher>,
    changes: broadcast::Sender<VaultChange>,
    index: Index,
    reach: Reach,
    /// What was last reported, so a lasting state is logged once.
    reported: Option<&'static str>,
}

impl WatchGuard {
    /// Starts watching `root` (canonical). Without a watcher (inotify refused) Quire still serves;
    /// the guard tries again each check.
    pub fn start(
        root: &Path,
        changes: broadcast::Sender<VaultChange>,
        index: Index,
        reach: Reach,
    ) -> WatchGuard {
        let watched = FolderId::of(root).unwrap_or(FolderId { dev: 0, ino: 0 });
        let watcher = match VaultWatcher::start(root, changes.clone()) {
            Ok(watcher) => Some(watcher),
            Err(error) => {
                tracing::warn!(%error, "vault changes will not be reported to clients");
                None
            }
        };
        WatchGuard {
            root: root.to_path_buf(),
            watched,
            watcher,
            changes,
            index,
            reach,
            reported: None,
        }
    }

    /// Checks every `period` until `restart` is requested (by this guard) or the task is dropped.
    /// `heartbeat` beats on each check: the guard itself handles a lost watch.
    pub async fn run(mut self, period: Duration, heartbeat: Heartbeat, restart: CancellationToken) {
        let mut ticker = tokio::time::interval(period);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticker.tick().await;
            heartbeat.beat();
            if self.check().await == Action::Restart {
                restart.cancel();
                return;
            }
        }
    }

    async fn check(&mut self) -> Action {
        let now = FolderId::of(&self.root);
        let watch = self
            .watcher
            .as_ref()
            .map_or(WatchState::Lost, VaultWatcher::state);
        let action = next_action(self.watched, now, watch, self.reach);
        match action {
            Action::Nothing => self.reported = None,
            Action::Wait => {
                if self.first_report("missing") {
                    tracing::warn!(
                        vault = %self.root.display(),
                        "the vault folder is gone; tools answer errors until it is back"
                    );
                }
            }
            Action::Rewatch => self.rewatch(now).await,
            Action::Restart => tracing::error!(
                vault = %self.root.display(),
                "the vault folder was replaced by a new one, which this process cannot reach \
                 (sandbox or service mount); exiting so systemd starts Quire on it"
            ),
            Action::Stuck => {
                if self.first_report("stuck") {
                    tracing::error!(
                        vault = %self.root.display(),
                        "the vault folder was replaced by a new one, which the landlock sandbox \
                         fixed at start does not cover; restart Quire to serve it"
                    );
                }
            }
        }
        action
    }

    async fn rewatch(&mut self, now: Option<FolderId>) {
        // The old watcher first: two watches would report every change twice.
        self.watcher = None;
        match VaultWatcher::start(&self.root, self.changes.clone()) {
            Ok(watcher) => {
                self.watcher = Some(watcher);
                if let Some(now) = now {
                    self.watched = now;
                }
                self.reported = None;
                // Whatever changed while unwatched: the same walk as at startup.
                let index = self.index.clone();
                let reconciled = tokio::task::spawn_blocking(move || index.reconcile()).await;
                match reconciled {
                    Ok(Ok(stats)) => tracing::info!(
                        vault = %self.root.display(),
                        ?stats,
                        "watching the vault folder again; the index caught up with it"
                    ),
                    Ok(Err(error)) => {
                        tracing::warn!(%error, "watching the vault folder again, but the index could not catch up");
                    }
                    Err(error) => tracing::warn!(%error, "the index catch-up task failed"),
                }
            }
            Err(error) => {
                if self.first_report("unwatched") {
                    tracing::warn!(%error, "cannot watch the vault folder again; retrying every second");
                }
            }
        }
    }

    /// True the first time `state` is seen in a row, so a lasting state is logged once.
    fn first_report(&mut self, state: &'static str) -> bool {
        let first = self.reported != Some(state);
        self.reported = Some(state);
        first
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: FolderId = FolderId { dev: 1, ino: 10 };
    const B: FolderId = FolderId { dev: 1, ino: 11 };

    fn reach(confined: bool, supervised: bool) -> Reach {
        Reach {
            confined,
            supervised,
        }
    }

    #[test]
    fn the_same_folder_is_rewatched_only_when_its_watch_is_lost() {
        for r in [reach(false, false), reach(true, true)] {
            assert_eq!(
                next_action(A, Some(A), WatchState::Live, r),
                Action::Nothing
            );
            // Renamed away and back: the same folder, but the watch saw it move.
            assert_eq!(
                next_action(A, Some(A), WatchState::Lost, r),
                Action::Rewatch
            );
            assert_eq!(next_action(A, None, WatchState::Lost, r), Action::Wait);
            assert_eq!(
                next_action(A, None, WatchState::RootDeleted, r),
                Action::Wait
            );
        }
    }

    #[test]
    fn a_new_folder_is_followed_in_process_restarted_or_reported_by_reach() {
        // Another inode, whatever the watch says (a live watch follows the old folder elsewhere);
        // or the same inode number after the watched folder was deleted.
        let cases = [
            (B, WatchState::Live),
            (B, WatchState::Lost),
            (B, WatchState::RootDeleted),
            (A, WatchState::RootDeleted),
        ];
        for (now, watch) in cases {
            let next = |r| next_action(A, Some(now), watch, r);
            assert_eq!(next(reach(false, false)), Action::Rewatch);
            assert_eq!(next(reach(true, true)), Action::Restart);
            assert_eq!(next(reach(false, true)), Action::Restart);
            assert_eq!(next(reach(true, false)), Action::Stuck);
        }
    }
}
