//! Refreshes: each reported path (a note, a folder, or something that vanished) brought in line
//! with the disk. A note the asking thread already parsed (`preload`) is written as it is when
//! the file is still the one parsed; many notes at once are read and parsed on every core.

use std::collections::HashSet;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Instant, SystemTime};

use rusqlite::Transaction;

use super::alone;
use super::compare::{Compared, compare, indexed_notes, known_of};
use super::load::{is_note, known_note, load, nanos};
use super::other_files::{reconcile_files, upsert_file};
use super::rows::{apply, remove_exact, remove_subtree};
use super::turns::Split;
use super::{Known, Loaded, NoteRecord, Writer};
use crate::index::IndexError;
use crate::index::phases::{Parsing, Writing};
use crate::index::schema::{self, subtree_range};
use crate::vault::{Vault, VaultPath};

impl Writer {
    /// Brings each path (a note, a folder, or something that vanished) in line with the disk.
    /// Many notes at once (a move rewrites every linking note) are read and parsed on every core.
    /// The later parts of very large notes are returned, for turns of their own.
    pub(super) fn refresh(
        &mut self,
        paths: &[String],
        preloaded: Vec<Preloaded>,
    ) -> Result<Vec<Split>, IndexError> {
        let started = Instant::now();
        let transaction = self.connection.transaction()?;
        let mut later = Vec::new();
        let mut done = HashSet::new();
        for note in preloaded {
            let path = note.path().to_string();
            if paths.contains(&path)
                && apply_preloaded(&transaction, &self.vault, note, &mut later)?
            {
                done.insert(path);
            }
        }
        let done_preloaded = done;
        let mut done: HashSet<&str> = HashSet::new();
        let mut notes: Vec<(VaultPath, std::path::PathBuf, Option<Known>)> = Vec::new();
        for raw in paths {
            if done_preloaded.contains(raw) || !done.insert(raw.as_str()) {
                continue;
            }
            match plain_note(&self.vault, raw) {
                Some((path, fs_path)) if paths.len() >= PARALLEL_REFRESH => {
                    let known = known_note(&transaction, path.as_str())?;
                    notes.push((path, fs_path, known));
                }
                _ => refresh_path(&transaction, &self.vault, raw, &mut later)?,
            }
        }
        if !notes.is_empty() {
            let vault = &self.vault;
            let chunks = schema::keeps_chunks(&transaction)?;
            let loaded = load_in_parallel(vault, &notes, chunks);
            tracing::debug!(
                elapsed_ms = started.elapsed().as_millis() as u64,
                notes = notes.len(),
                "refresh: notes read and parsed"
            );
            if loaded.len() != notes.len() {
                // A loader thread died: fall back to refreshing every note here.
                for (path, ..) in &notes {
                    refresh_path(&transaction, &self.vault, path.as_str(), &mut later)?;
                }
            } else {
                let phases = &mut Writing::default();
                for (_, loaded) in loaded {
                    apply(&transaction, loaded, phases, &mut later)?;
                }
            }
            tracing::debug!(
                elapsed_ms = started.elapsed().as_millis() as u64,
                "refresh: rows written"
            );
        }
        for raw in paths {
            alone::mark_resolved(&transaction, &self.vault, raw)?;
        }
        transaction.commit()?;
        if paths.len() >= PARALLEL_REFRESH {
            tracing::debug!(
                elapsed_ms = started.elapsed().as_millis() as u64,
                "refresh: committed"
            );
        }
        Ok(later)
    }
}

/// Reads and parses `notes` on up to eight threads; each with its place in `notes`, in order.
/// A thread that died leaves its notes out (the caller then refreshes them one by one).
fn load_in_parallel(
    vault: &Vault,
    notes: &[(VaultPath, std::path::PathBuf, Option<Known>)],
    chunks: bool,
) -> Vec<(usize, Loaded)> {
    let next = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .clamp(1, 8)
        .min(notes.len());
    let mut loaded: Vec<(usize, Loaded)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                let (notes, next) = (&notes, &next);
                scope.spawn(move || {
                    let mut loaded = Vec::new();
                    let phases = Parsing::default();
                    loop {
                        let at = next.fetch_add(1, Ordering::Relaxed);
                        let Some((path, fs_path, known)) = notes.get(at) else {
                            return loaded;
                        };
                        let note =
                            load(vault, path, fs_path, known.as_ref(), false, chunks, &phases);
                        loaded.push((at, note));
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|handle| handle.join().unwrap_or_default())
            .collect()
    });
    loaded.sort_by_key(|(at, _)| *at);
    loaded
}

/// Refreshes of at least this many paths read and parse their notes in parallel.
pub(in crate::index) const PARALLEL_REFRESH: usize = 32;

/// A note read and parsed by the thread that asked for its refresh, so that parsing a large note
/// (10 MB takes the parser hundreds of milliseconds) does not hold the single writer, and with it
/// every other write's refresh. The writer applies it only if the file is still the one parsed.
pub(in crate::index) struct Preloaded {
    record: Box<NoteRecord>,
    /// Whether it was parsed with semantic chunks, which the index may have stopped keeping.
    chunks: bool,
}

impl Preloaded {
    fn path(&self) -> &str {
        &self.record.path
    }
}

/// Reads and parses `raw` when it is a plain note, on the calling thread.
pub(in crate::index) fn preload(vault: &Vault, raw: &str, chunks: bool) -> Option<Preloaded> {
    let (path, fs_path) = plain_note(vault, raw)?;
    match load(
        vault,
        &path,
        &fs_path,
        None,
        false,
        chunks,
        &Parsing::default(),
    ) {
        Loaded::Note(record) => Some(Preloaded { record, chunks }),
        Loaded::Same { .. } | Loaded::Gone { .. } => None,
    }
}

/// Writes a preloaded note's rows when the file still has the size and time it was read with
/// and the index keeps what it was parsed for; `false` leaves the path to a fresh read.
fn apply_preloaded(
    transaction: &Transaction<'_>,
    vault: &Vault,
    note: Preloaded,
    later: &mut Vec<Split>,
) -> Result<bool, IndexError> {
    let Preloaded { mut record, chunks } = note;
    if chunks != schema::keeps_chunks(transaction)? {
        return Ok(false);
    }
    let current = plain_note(vault, &record.path)
        .and_then(|(_, fs_path)| std::fs::metadata(fs_path).ok())
        .map(|metadata| {
            let modified = metadata.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            (metadata.len() as i64, nanos(modified))
        });
    if current != Some((record.size, record.mtime)) {
        return Ok(false);
    }
    let known = known_note(transaction, &record.path)?;
    let loaded = match known {
        Some(known) if known.hash == record.hash && known.created == record.created => {
            Loaded::Same {
                path: record.path.clone(),
                size: record.size,
                mtime: record.mtime,
            }
        }
        known => {
            record.known = known.is_some();
            Loaded::Note(record)
        }
    };
    apply(transaction, loaded, &mut Writing::default(), later)?;
    Ok(true)
}

/// The path and file of `raw` when it is an existing note reached without a symbolic link: the
/// case `refresh_path` handles by reading the note, which may then run on another thread.
fn plain_note(vault: &Vault, raw: &str) -> Option<(VaultPath, std::path::PathBuf)> {
    let path = VaultPath::parse(raw).ok()?;
    if !is_note(&path) {
        return None;
    }
    let resolved = vault
        .resolve(&path)
        .ok()
        .filter(|resolved| resolved.exists)?;
    let metadata = std::fs::metadata(&resolved.fs_path).ok()?;
    metadata.is_file().then_some((path, resolved.fs_path))
}

fn refresh_path(
    transaction: &Transaction<'_>,
    vault: &Vault,
    raw: &str,
    later: &mut Vec<Split>,
) -> Result<(), IndexError> {
    // Hidden or unaddressable names are never indexed, so there is nothing to refresh.
    let Ok(path) = VaultPath::parse(raw) else {
        return Ok(());
    };
    let resolved = match vault.resolve(&path) {
        Ok(resolved) if resolved.exists => resolved,
        _ => return remove_subtree(transaction, path.as_str()),
    };
    let Ok(metadata) = std::fs::metadata(&resolved.fs_path) else {
        return remove_subtree(transaction, path.as_str());
    };
    if metadata.is_dir() {
        remove_exact(transaction, path.as_str())?;
        if resolved.is_symlink {
            // Scans never descend a symlinked folder, so neither does the index.
            return remove_subtree(transaction, path.as_str());
        }
        return refresh_folder(transaction, vault, &path, later);
    }
    if !is_note(&path) {
        return upsert_file(
            transaction,
            vault,
            &path,
            &resolved.fs_path,
            metadata.len(),
            metadata.modified().unwrap_or(SystemTime::UNIX_EPOCH),
        );
    }
    let known = known_note(transaction, path.as_str())?;
    reload(
        transaction,
        vault,
        &path,
        &resolved.fs_path,
        known.as_ref(),
        later,
    )
}

/// Reads, parses and writes one note on the writer thread, outside a timed reconcile.
fn reload(
    transaction: &Transaction<'_>,
    vault: &Vault,
    path: &VaultPath,
    fs_path: &Path,
    known: Option<&Known>,
    later: &mut Vec<Split>,
) -> Result<(), IndexError> {
    let chunks = schema::keeps_chunks(transaction)?;
    let loaded = load(
        vault,
        path,
        fs_path,
        known,
        false,
        chunks,
        &Parsing::default(),
    );
    apply(transaction, loaded, &mut Writing::default(), later)
}

/// Re-indexes every note below `folder` that is new or changed, and drops the ones that vanished.
fn refresh_folder(
    transaction: &Transaction<'_>,
    vault: &Vault,
    folder: &VaultPath,
    later: &mut Vec<Split>,
) -> Result<(), IndexError> {
    let files = match vault.scan(Some(folder)) {
        Ok(files) => files,
        Err(_) => return remove_subtree(transaction, folder.as_str()),
    };
    let (low, high) = subtree_range(folder.as_str());
    let indexed = indexed_notes(transaction, Some((&low, &high)))?;
    let (notes, others): (Vec<_>, Vec<_>) = files.into_iter().partition(|file| is_note(&file.path));
    alone::mark_scanned(transaction, &notes)?;
    let Compared {
        changed,
        todo,
        gone,
    } = compare(notes, indexed, false);
    let known = known_of(transaction, changed)?;
    for file in &todo {
        reload(
            transaction,
            vault,
            &file.path,
            &file.fs_path,
            known.get(file.path.as_str()),
            later,
        )?;
    }
    for path in &gone {
        remove_exact(transaction, path)?;
    }
    reconcile_files(transaction, vault, &others, Some(folder.as_str()), false)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::AtomicU64;

    use super::*;

    fn writer_on(root: &Path, db_path: &Path) -> Writer {
        let vault = Arc::new(Vault::open(root, 1 << 30).expect("vault"));
        let (connection, _) = schema::open_writer(db_path, root, false, true).expect("index");
        Writer {
            connection,
            vault,
            db_path: db_path.to_path_buf(),
            generation: Arc::new(AtomicU64::new(0)),
            chunks: true,
        }
    }

    fn indexed_tags(writer: &Writer, path: &str) -> String {
        writer
            .connection
            .query_row("SELECT tags FROM notes WHERE path = ?1", [path], |row| {
                row.get(0)
            })
            .expect("the note is indexed")
    }

    #[test]
    fn a_note_rewritten_after_it_was_parsed_elsewhere_is_indexed_as_it_is_now() {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().join("vault");
        std::fs::create_dir(&root).expect("vault folder");
        std::fs::write(root.join("note.md"), "first #old\n").expect("write");
        let mut writer = writer_on(&root, &dir.path().join("index.db"));
        writer.reconcile(None).expect("reconcile");

        std::fs::write(root.join("note.md"), "second #middle\n").expect("write");
        let stale = preload(&writer.vault, "note.md", true).expect("a plain note");
        std::fs::write(root.join("note.md"), "third, longer #newest\n").expect("write");
        writer
            .refresh(&["note.md".to_string()], vec![stale])
            .expect("refresh");
        assert_eq!(indexed_tags(&writer, "note.md"), r#"["newest"]"#);

        let fresh = preload(&writer.vault, "note.md", true).expect("a plain note");
        std::fs::write(root.join("other.md"), "#elsewhere\n").expect("write");
        writer
            .refresh(&["other.md".to_string()], vec![fresh])
            .expect("refresh");
        assert_eq!(indexed_tags(&writer, "other.md"), r#"["elsewhere"]"#);

        std::fs::write(root.join("note.md"), "fourth #current\n").expect("write");
        let current = preload(&writer.vault, "note.md", true).expect("a plain note");
        writer
            .refresh(&["note.md".to_string()], vec![current])
            .expect("refresh");
        assert_eq!(indexed_tags(&writer, "note.md"), r#"["current"]"#);
    }
}
