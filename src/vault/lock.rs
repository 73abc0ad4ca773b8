//! Per-file locks for read-modify-write sequences inside one Quire process.
//!
//! Two tool calls on the same note serialise here; calls on different notes never wait for each
//! other. Other processes (Obsidian, a sync client without the shared lock) are not stopped by
//! this lock: the revision re-check just before the rename is what protects their edits. A sync
//! service that shares `[sync] lock_file` is: while any path lock is held, so is the shared sync
//! lock (see `sync.rs`).

use std::collections::HashSet;
use std::sync::{Condvar, Mutex, MutexGuard};

use super::sync::SyncLock;

#[derive(Debug, Default)]
pub struct LockTable {
    held: Mutex<HashSet<String>>,
    released: Condvar,
    sync: Option<SyncLock>,
}

/// Holds one path's lock until dropped.
#[derive(Debug)]
pub struct FileLock<'a> {
    table: &'a LockTable,
    key: String,
}

impl LockTable {
    pub fn with_sync(sync: Option<SyncLock>) -> LockTable {
        LockTable {
            sync,
            ..LockTable::default()
        }
    }

    pub fn sync(&self) -> Option<&SyncLock> {
        self.sync.as_ref()
    }

    /// Blocks until no one else holds `key` (and, with a sync lock, until the sync lets writers
    /// in). Keys are NFC vault paths, so the two spellings of one name share a lock.
    pub fn lock(&self, key: &str) -> FileLock<'_> {
        // The sync lock first, so a writer waiting for the sync holds no path lock meanwhile.
        if let Some(sync) = &self.sync {
            sync.enter();
        }
        let mut held = self.guard();
        while held.contains(key) {
            held = self
                .released
                .wait(held)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
        held.insert(key.to_string());
        FileLock {
            table: self,
            key: key.to_string(),
        }
    }

    // A panic while holding the set cannot leave it inconsistent (insert/remove are atomic), so
    // a poisoned mutex is safe to keep using.
    fn guard(&self) -> MutexGuard<'_, HashSet<String>> {
        self.held
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Drop for FileLock<'_> {
    fn drop(&mut self) {
        self.table.guard().remove(&self.key);
        self.table.released.notify_all();
        if let Some(sync) = &self.table.sync {
            sync.leave();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn same_key_is_exclusive_other_keys_are_not() {
        let table = Arc::new(LockTable::default());
        let inside = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let table = Arc::clone(&table);
                let inside = Arc::clone(&inside);
                std::thread::spawn(move || {
                    for _ in 0..200 {
                        let _lock = table.lock("a.md");
                        assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0);
                        let _other = table.lock("b.md");
                        inside.fetch_sub(1, Ordering::SeqCst);
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().expect("no thread panicked");
        }
    }
}
