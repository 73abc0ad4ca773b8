//! A move's journal: what a move is about to write, kept in the state directory while it runs.
//!
//! A move creates the destination, rewrites every linking file and removes the source: several
//! files, so a kill or a power cut can stop it between two of them. The journal is written and
//! fsynced before the first of those writes and removed when the move ends (done or undone). At
//! the next start, a journal left behind is finished forward: linking files still holding what the
//! move read get the text it planned, and the source is removed if it still holds what was moved.
//! A file someone changed meanwhile is left as it is. So a cut move ends as a whole move, never as
//! two copies of the note with links split between them.

use std::fs::{self, File};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// One move, as planned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Entry {
    /// The vault the move belongs to: a state directory shared by mistake never moves files of
    /// another vault.
    pub vault: PathBuf,
    /// The process that ran the move; a journal of a live process is its own business.
    pub pid: u32,
    pub old: String,
    pub new: String,
    /// The moved file's revision at the old path, before the move.
    pub moved_before: String,
    /// Every linking file the move rewrites, with the text it writes there.
    pub files: Vec<FileEntry>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct FileEntry {
    pub path: String,
    /// The revision the move read; only a file still holding it is rewritten.
    pub before: String,
    pub text: String,
}

/// The journal folder (`<state>/moves`), or none: then moves run without a journal.
#[derive(Debug, Clone, Default)]
pub(super) struct MoveJournal {
    dir: Option<PathBuf>,
}

/// A journal on disk for a move under way; removed when dropped, which is when the move ends.
#[derive(Debug)]
pub(super) struct Pending {
    path: PathBuf,
}

impl Drop for Pending {
    fn drop(&mut self) {
        if let Err(error) = fs::remove_file(&self.path)
            && error.kind() != io::ErrorKind::NotFound
        {
            tracing::warn!(%error, journal = %self.path.display(), "a finished move's journal could not be removed; the next start will find every step done");
        }
    }
}

impl MoveJournal {
    pub(super) fn new(dir: PathBuf) -> MoveJournal {
        MoveJournal { dir: Some(dir) }
    }

    /// Writes `entry` durably. Without a journal folder, or when it cannot be written, the move
    /// still runs (as every move did before journals), and the reason is logged.
    pub(super) fn begin(&self, entry: &Entry) -> Option<Pending> {
        let dir = self.dir.as_ref()?;
        match write_entry(dir, entry) {
            Ok(path) => Some(Pending { path }),
            Err(error) => {
                tracing::warn!(%error, dir = %dir.display(), "the move journal could not be written; a move cut short now would leave both copies");
                None
            }
        }
    }

    /// The journals left by processes that are gone, oldest first, each with its file. A file
    /// that cannot be read or parsed is reported as an error and left for the owner.
    pub(super) fn left_behind(&self) -> Vec<(PathBuf, Result<Entry, String>)> {
        let Some(dir) = &self.dir else {
            return Vec::new();
        };
        let Ok(listing) = fs::read_dir(dir) else {
            return Vec::new();
        };
        let mut found: Vec<(std::time::SystemTime, PathBuf)> = listing
            .flatten()
            .filter(|entry| {
                entry
                    .file_name()
                    .to_str()
                    .is_some_and(|name| name.starts_with("move-") && name.ends_with(".json"))
            })
            .map(|entry| {
                let modified = entry
                    .metadata()
                    .and_then(|m| m.modified())
                    .unwrap_or(std::time::UNIX_EPOCH);
                (modified, entry.path())
            })
            .collect();
        found.sort();
        found
            .into_iter()
            .filter_map(|(_, path)| {
                let entry = fs::read(&path)
                    .map_err(|e| e.to_string())
                    .and_then(|bytes| {
                        serde_json::from_slice::<Entry>(&bytes).map_err(|e| e.to_string())
                    });
                // Another Quire on this state directory may be mid-move: its journal is not ours.
                if let Ok(entry) = &entry
                    && entry.pid != std::process::id()
                    && crate::vault::process_alive(entry.pid)
                {
                    return None;
                }
                Some((path, entry))
            })
            .collect()
    }
}

/// Writes the journal under a temp name, fsyncs it, renames it into place and fsyncs the folder:
/// once this returns, the journal survives a power cut.
fn write_entry(dir: &Path, entry: &Entry) -> io::Result<PathBuf> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let name = format!(
        "move-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    let temp = dir.join(format!(".{name}.tmp"));
    let path = dir.join(format!("{name}.json"));
    let bytes = serde_json::to_vec(entry).map_err(io::Error::other)?;
    let written = (|| {
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&temp)?;
        file.write_all(&bytes)?;
        file.sync_all()?;
        fs::rename(&temp, &path)?;
        File::open(dir)?.sync_all()
    })();
    if written.is_err() {
        let _ = fs::remove_file(&temp);
        let _ = fs::remove_file(&path);
    }
    written.map(|()| path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(pid: u32) -> Entry {
        Entry {
            vault: PathBuf::from("/v"),
            pid,
            old: "a.md".into(),
            new: "b.md".into(),
            moved_before: "r".into(),
            files: vec![FileEntry {
                path: "c.md".into(),
                before: "r2".into(),
                text: "[[b]]".into(),
            }],
        }
    }

    #[test]
    fn a_journal_lives_as_long_as_its_move_and_a_dead_ones_is_found() {
        let dir = tempfile::tempdir().expect("tempdir");
        let journal = MoveJournal::new(dir.path().join("moves"));
        let pending = journal.begin(&entry(std::process::id())).expect("written");
        // Our own journals count as left behind: recovery runs before this process moves anything.
        let found = journal.left_behind();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].1, Ok(entry(std::process::id())));
        drop(pending);
        assert!(journal.left_behind().is_empty());

        // A live process's journal is not touched; an unreadable one is reported.
        let live = journal.begin(&entry(1)).expect("written");
        assert!(journal.left_behind().is_empty());
        std::mem::forget(live);
        fs::write(dir.path().join("moves/move-9-9.json"), b"{").expect("write");
        let found = journal.left_behind();
        assert_eq!(found.len(), 1);
        assert!(found[0].1.is_err());
        // Nothing but journals is left in the folder.
        let names: Vec<_> = fs::read_dir(dir.path().join("moves"))
            .expect("read_dir")
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
    }

    #[test]
    fn without_a_folder_moves_run_unjournaled() {
        assert!(MoveJournal::default().begin(&entry(1)).is_none());
        assert!(MoveJournal::default().left_behind().is_empty());
    }
}
