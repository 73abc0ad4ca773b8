//! What the vault shares with its sync service (git, Syncthing, Obsidian Sync; see docs/SYNC.md).
//!
//! The lock: while any Quire write is in progress, Quire holds a shared `flock` on the file named
//! by `[sync] lock_file`; the sync service takes it exclusively while it snapshots the tree or
//! updates files in it. So a sync never commits half of a multi-file operation (a move that
//! rewrites links in many notes) and never replaces a file under a write Quire has acknowledged.
//! Conflict copies: the files each backend writes beside a note when both sides changed it. They
//! are not notes (the same tasks and links twice, and an agent must not edit them as if they
//! were), so scans skip them; `quire doctor` and the sync status name them for the owner.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How often a writer waiting for the sync retries, and how often it says that it is waiting.
const RETRY: Duration = Duration::from_millis(25);
const REPORT_EVERY: Duration = Duration::from_secs(10);

/// The shared write lock; see the module comment.
#[derive(Debug)]
pub struct SyncLock {
    path: PathBuf,
    held: Mutex<Held>,
}

#[derive(Debug, Default)]
struct Held {
    writers: usize,
    /// Open (and shared-locked) while `writers > 0`; closing it releases the lock.
    file: Option<File>,
}

impl SyncLock {
    pub fn new(path: PathBuf) -> SyncLock {
        SyncLock {
            path,
            held: Mutex::new(Held::default()),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Joins the writers, taking the shared lock first when this is the only one. Blocks while
    /// the sync holds it; the sync's own unit timeout bounds that (a killed holder releases it).
    pub(super) fn enter(&self) {
        let mut held = self.guard();
        if held.writers == 0 {
            held.file = self.take_shared();
        }
        held.writers += 1;
    }

    pub(super) fn leave(&self) {
        let mut held = self.guard();
        held.writers = held.writers.saturating_sub(1);
        if held.writers == 0 {
            held.file = None;
        }
    }

    fn take_shared(&self) -> Option<File> {
        // Reading is enough for flock; create it only when the sync service has not (it may be
        // in a folder Quire can write only that one file of).
        let file = match File::open(&self.path).or_else(|_| {
            OpenOptions::new()
                .append(true)
                .create(true)
                .open(&self.path)
        }) {
            Ok(file) => file,
            Err(error) => {
                // Failing closed would stop every write for good; the revision check still
                // protects edits, and `quire doctor` shows the problem.
                tracing::error!(%error, path = %self.path.display(), "cannot open the sync lock; writing without it");
                return None;
            }
        };
        let started = Instant::now();
        let mut reported = started;
        loop {
            match file.try_lock_shared() {
                Ok(()) => return Some(file),
                Err(std::fs::TryLockError::WouldBlock) => {
                    if reported.elapsed() >= REPORT_EVERY {
                        reported = Instant::now();
                        tracing::warn!(
                            waited_s = started.elapsed().as_secs(),
                            "a write is waiting for the vault's sync to finish"
                        );
                    }
                    std::thread::sleep(RETRY);
                }
                Err(std::fs::TryLockError::Error(error)) => {
                    tracing::error!(%error, path = %self.path.display(), "cannot lock the sync lock; writing without it");
                    return None;
                }
            }
        }
    }

    // Writer counting stays consistent even if a holder panicked, so poisoning is ignored.
    fn guard(&self) -> MutexGuard<'_, Held> {
        self.held
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Whether a file name is a sync backend's conflict copy:
/// Syncthing's `Note.sync-conflict-20250101-120000-ABCDEFG.md`, Obsidian Sync's
/// `Note (Conflicted copy 2025-01-01 120000).md`, and Quire's git sync's
/// `Note (conflict host 2025-01-01 1200).md`.
pub fn is_conflict_copy(name: &str) -> bool {
    let stem = name.rsplit_once('.').map_or(name, |(stem, _)| stem);
    if name.contains(".sync-conflict-") {
        return true;
    }
    let Some(open) = stem.rfind(" (") else {
        return false;
    };
    let inside = &stem[open + 2..];
    inside.ends_with(')')
        && (inside.starts_with("conflict ") || inside.starts_with("Conflicted copy"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conflict_copies_of_every_backend_are_recognised() {
        for name in [
            "Plan.sync-conflict-20250101-120000-ABCDEFG.md",
            "Plan (Conflicted copy 2025-01-01 120000).md",
            "Plan (conflict phone 2025-01-01 1200).md",
            "Photo.sync-conflict-20250101-120000-ABCDEFG.png",
        ] {
            assert!(is_conflict_copy(name), "{name}");
        }
        for name in [
            "Plan.md",
            "Plan (draft).md",
            "conflict resolution.md",
            "Notes (conflict.md",
            "The conflict (1914).md",
        ] {
            assert!(!is_conflict_copy(name), "{name}");
        }
    }

    #[test]
    fn writers_share_the_lock_and_the_sync_waits_for_them() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("write.lock");
        let lock = SyncLock::new(path.clone());
        lock.enter();
        lock.enter();
        let sync = File::open(&path).expect("the lock file exists once a writer entered");
        assert!(
            matches!(sync.try_lock(), Err(std::fs::TryLockError::WouldBlock)),
            "the sync got the lock while writes were in progress"
        );
        lock.leave();
        assert!(
            matches!(sync.try_lock(), Err(std::fs::TryLockError::WouldBlock)),
            "one writer left, the other still writes"
        );
        lock.leave();
        sync.try_lock().expect("no writer left: the sync may go");
        // While the sync holds it, a writer waits until it lets go.
        let (entered_tx, entered_rx) = std::sync::mpsc::channel();
        let writer = std::thread::spawn(move || {
            lock.enter();
            entered_tx.send(()).expect("send");
            lock.leave();
        });
        assert!(
            entered_rx.recv_timeout(Duration::from_millis(300)).is_err(),
            "a write went ahead while the sync held the lock"
        );
        sync.unlock().expect("unlock");
        entered_rx
            .recv_timeout(Duration::from_secs(10))
            .expect("the write proceeds once the sync is done");
        writer.join().expect("writer");
    }
}
