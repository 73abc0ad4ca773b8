//! A scan of the vault (or of one folder) compared with the notes the index holds: both in path
//! order, so one merge pass finds the new, changed and vanished notes. Only sizes and times are
//! read for it; what the index knew of a changed note is read once the note is found.

use rusqlite::Connection;

use super::Known;
use super::load::{KNOWN_SIZE, known_note, nanos};
use crate::index::IndexError;
use crate::vault::ScannedFile;

/// Maps keyed by note path, hashed with foldhash (SipHash cost a tenth of a million-note restart
/// while every note went through one).
pub(super) type FastMap<V> = foldhash::HashMap<String, V>;

/// The notes the index holds, in path order (the order of a scan): all of them, or those between
/// the exclusive bounds of `within` (`schema::subtree_range`). Only what the comparison needs: the
/// hashes of a million notes were 100 MB of a restart's peak.
pub(super) fn indexed_notes(
    connection: &Connection,
    within: Option<(&str, &str)>,
) -> Result<IndexedNotes, IndexError> {
    let row = |row: &rusqlite::Row<'_>| {
        Ok(Indexed {
            path: row.get(0)?,
            size: row.get(1)?,
            mtime: row.get(2)?,
        })
    };
    // Two statements: one with an optional range would not seek the path index for a folder.
    let select = format!("SELECT path, {KNOWN_SIZE}, mtime FROM notes");
    let rows = match within {
        None => connection
            .prepare_cached(&format!("{select} ORDER BY path"))?
            .query_map([], row)?
            .collect::<Result<_, _>>(),
        Some((low, high)) => connection
            .prepare_cached(&format!(
                "{select} WHERE path > ?1 AND path < ?2 ORDER BY path"
            ))?
            .query_map([low, high], row)?
            .collect::<Result<_, _>>(),
    };
    Ok(rows?)
}

/// What the index knows of each changed note, read once the comparison found them: the caller
/// is the writer, so nothing writes between the two reads.
pub(super) fn known_of(
    connection: &Connection,
    changed: Vec<String>,
) -> Result<FastMap<Known>, IndexError> {
    let mut known = FastMap::default();
    for path in changed {
        if let Some(note) = known_note(connection, &path)? {
            known.insert(path, note);
        }
    }
    Ok(known)
}

/// A note the index holds, as a scan is compared with it.
pub(super) struct Indexed {
    path: String,
    /// -1 while the note's later parts wait (`load::KNOWN_SIZE`).
    size: i64,
    mtime: i64,
}

/// The notes the index holds, in path order.
pub(super) type IndexedNotes = Vec<Indexed>;

/// What a scan holds that the index lacks or holds otherwise.
pub(super) struct Compared {
    /// The notes the index holds that changed (every one with `force`).
    pub changed: Vec<String>,
    /// The notes to read: new or changed (every note with `force`), in path order.
    pub todo: Vec<ScannedFile>,
    /// The notes the index holds and the scan did not find.
    pub gone: Vec<String>,
}

/// Compares a scan's notes with the index's, both in path order (`VaultPath` orders by its bytes,
/// as SQLite's `BINARY` collation does).
pub(super) fn compare(scanned: Vec<ScannedFile>, indexed: IndexedNotes, force: bool) -> Compared {
    let mut compared = Compared {
        changed: Vec::new(),
        todo: Vec::new(),
        gone: Vec::new(),
    };
    let mut indexed = indexed.into_iter().peekable();
    for file in scanned {
        let path = file.path.as_str();
        while let Some(note) = indexed.next_if(|note| note.path.as_str() < path) {
            compared.gone.push(note.path);
        }
        match indexed.next_if(|note| note.path == path) {
            Some(note)
                if !force
                    && note.size == file.bytes as i64
                    && note.mtime == nanos(file.modified) => {}
            Some(note) => {
                compared.changed.push(note.path);
                compared.todo.push(file);
            }
            None => compared.todo.push(file),
        }
    }
    compared.gone.extend(indexed.map(|note| note.path));
    compared
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::*;
    use crate::vault::VaultPath;

    fn file(path: &str, bytes: u64, nanos: u64) -> ScannedFile {
        ScannedFile {
            path: VaultPath::parse(path).expect("a valid path"),
            fs_path: path.into(),
            bytes,
            modified: SystemTime::UNIX_EPOCH + Duration::from_nanos(nanos),
            linked: false,
        }
    }

    fn indexed(path: &str, size: i64, mtime: i64) -> Indexed {
        Indexed {
            path: path.to_string(),
            size,
            mtime,
        }
    }

    fn sorted_scan(mut files: Vec<ScannedFile>) -> Vec<ScannedFile> {
        files.sort_unstable_by(|a, b| a.path.cmp(&b.path));
        files
    }

    #[test]
    fn one_pass_finds_new_changed_and_vanished_notes_between_unchanged_ones() {
        // "a b/x.md" orders before "a/x.md" by bytes (a space before a slash), not as a tree walk
        // would list them; both sides are in byte order, as the scan and the SQL give them.
        let scanned = sorted_scan(vec![
            file("a/x.md", 10, 100),
            file("a b/x.md", 11, 200),
            file("new.md", 1, 1),
            file("z/changed.md", 5, 999),
            file("z/same.md", 7, 700),
        ]);
        let mut held = vec![
            indexed("a/x.md", 10, 100),
            indexed("a b/x.md", 11, 200),
            indexed("gone first.md", 3, 3),
            indexed("z/changed.md", 5, 500),
            indexed("z/same.md", 7, 700),
            indexed("zz/gone last.md", 1, 1),
        ];
        held.sort_by(|a, b| a.path.cmp(&b.path));
        let compared = compare(scanned, held, false);
        let todo: Vec<&str> = compared.todo.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(todo, ["new.md", "z/changed.md"]);
        assert_eq!(compared.gone, ["gone first.md", "zz/gone last.md"]);
        assert_eq!(compared.changed, ["z/changed.md"]);
    }

    #[test]
    fn force_reads_every_note_and_keeps_what_the_index_knew_of_each() {
        let scanned = sorted_scan(vec![file("a.md", 1, 1), file("b.md", 2, 2)]);
        let held = vec![indexed("a.md", 1, 1), indexed("b.md", 2, 2)];
        let compared = compare(scanned, held, true);
        assert_eq!(compared.todo.len(), 2);
        assert_eq!(compared.changed, ["a.md", "b.md"]);
        assert!(compared.gone.is_empty());
    }

    #[test]
    fn an_empty_index_reads_everything_and_an_empty_vault_loses_everything() {
        let compared = compare(sorted_scan(vec![file("a.md", 1, 1)]), Vec::new(), false);
        assert_eq!(compared.todo.len(), 1);
        let compared = compare(Vec::new(), vec![indexed("a.md", 1, 1)], false);
        assert_eq!(compared.gone, ["a.md"]);
        assert!(compared.todo.is_empty());
    }
}
