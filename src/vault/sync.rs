//! What the vault shares with its sync service (git, Syncthing, Obsidian Sync; see docs/SYNC.md).
//!
//! The lock: while any Quire write is in progress, Quire holds a shared `flock` on the file named
//! by `[sync] lock_file`; the sync service takes it exclusively while it snapshots the tree or
//! updates files in it. So a sync never commits half of a multi-file operation (a move that
//! rewrites links in many notes) and never replaces a file under a write Quire has acknowledged.
//! Conflict copies: the files each backend writes beside a note when both sides changed it. They
//! are not notes (the same tasks and links twice, and an agent must not edit them as if they
//! were), so scans skip them; `quire doctor` and the sync status name them for the owner.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

/// How often a writer waiting for the sync retries, and how often it says that it is waiting.
const RETRY: Duration = Duration::from_millis(25);
const REPORT_EVERY: Duration = Duration::from_secs(10);

/// The shared write lock; see the module comment.
#[derive(Debug)]
pub struct SyncLock {
    path: PathBuf,
    held: Mutex<Held>,
    /// Signalled when the last writer leaves.
    drained: Condvar,
}

#[derive(Debug, Default)]
struct Held {
    /// Writer slots per thread: a thread that already holds one (a move locking its next file)
    /// never waits for the others to drain, which would wait for itself.
    writers: HashMap<ThreadId, usize>,
    /// Open (and shared-locked) while any writer holds a slot; closing it releases the lock.
    file: Option<File>,
    /// When the current shared hold began.
    since: Option<Instant>,
}

/// How long overlapping writes may keep the shared lock without a gap. `flock` gives a waiting
/// exclusive request no priority over new shared ones, so without a gap a busy agent whose
/// operations overlap would keep the sync out for good.
const MAX_HOLD: Duration = Duration::from_secs(1);
/// The gap: time for a waiting sync to take the lock before writers take it again.
const GAP: Duration = Duration::from_millis(20);

impl SyncLock {
    pub fn new(path: PathBuf) -> SyncLock {
        SyncLock {
            path,
            held: Mutex::new(Held::default()),
            drained: Condvar::new(),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Joins the writers, taking the shared lock first when this is the only one. Blocks while
    /// the sync holds it; the sync's own unit timeout bounds that (a killed holder releases it).
    /// A new operation arriving after the lock has been held for `MAX_HOLD` waits for the
    /// running ones to finish and leaves a gap, so the sync gets its turn.
    pub(super) fn enter(&self) {
        let me = std::thread::current().id();
        let mut held = self.guard();
        let mine = held.writers.get(&me).copied().unwrap_or(0);
        let overdue = held.since.is_some_and(|since| since.elapsed() >= MAX_HOLD);
        if mine == 0 && overdue && !held.writers.is_empty() {
            while !held.writers.is_empty() {
                held = self
                    .drained
                    .wait(held)
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
            }
            drop(held);
            std::thread::sleep(GAP);
            held = self.guard();
        }
        if held.writers.is_empty() && held.file.is_none() {
            held.file = self.take_shared();
            held.since = Some(Instant::now());
        }
        *held.writers.entry(me).or_insert(0) += 1;
    }

    pub(super) fn leave(&self) {
        let me = std::thread::current().id();
        let mut held = self.guard();
        // A lock dropped on another thread than it was taken on still gives back one slot.
        let slot = if held.writers.contains_key(&me) {
            Some(me)
        } else {
            held.writers.keys().next().copied()
        };
        if let Some(slot) = slot
            && let Some(count) = held.writers.get_mut(&slot)
        {
            *count -= 1;
            if *count == 0 {
                held.writers.remove(&slot);
            }
        }
        if held.writers.is_empty() {
            held.file = None;
            held.since = None;
            self.drained.notify_all();
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
/// `Note (conflict host 2025-01-01 1200).md` (with ` 2`, ` 3` … when one is already there).
/// The git form needs its date and time, so a note named "Team (conflict resolution).md" stays
/// a note.
pub fn is_conflict_copy(name: &str) -> bool {
    static GIT: std::sync::LazyLock<Option<regex::Regex>> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"^.* \(conflict [^()]* \d{4}-\d{2}-\d{2} \d{4}( \d+)?\)(\.[^./]*)?$")
            .ok()
    });
    if name.contains(".sync-conflict-") || name.contains(" (Conflicted copy") {
        return true;
    }
    GIT.as_ref().is_some_and(|git| git.is_match(name))
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
            "Plan (conflict my laptop 2025-01-01 1200 2).md",
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
            "Team (conflict resolution).md",
        ] {
            assert!(!is_conflict_copy(name), "{name}");
        }
    }

    #[test]
    fn a_constant_stream_of_overlapping_writes_still_lets_the_sync_in() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("write.lock");
        let lock = std::sync::Arc::new(SyncLock::new(path.clone()));
        let order = std::sync::Arc::new(Mutex::new(Vec::new()));
        // A long operation holds the shared lock past MAX_HOLD.
        lock.enter();
        let sync = {
            let (path, order) = (path.clone(), std::sync::Arc::clone(&order));
            std::thread::spawn(move || {
                let file = File::open(&path).expect("open");
                file.lock().expect("the sync waits, then locks");
                order.lock().expect("order").push("sync");
                std::thread::sleep(Duration::from_millis(100));
                file.unlock().expect("unlock");
            })
        };
        std::thread::sleep(MAX_HOLD + Duration::from_millis(100));
        // A new operation arrives while the old one still runs: without a gap it would join the
        // shared hold and the sync would never get in.
        let writer = {
            let (lock, order) = (std::sync::Arc::clone(&lock), std::sync::Arc::clone(&order));
            std::thread::spawn(move || {
                lock.enter();
                order.lock().expect("order").push("writer");
                lock.leave();
            })
        };
        std::thread::sleep(Duration::from_millis(100));
        assert!(
            order.lock().expect("order").is_empty(),
            "someone went ahead"
        );
        lock.leave();
        sync.join().expect("sync");
        writer.join().expect("writer");
        assert_eq!(*order.lock().expect("order"), vec!["sync", "writer"]);
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
