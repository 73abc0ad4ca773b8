//! The rows of the vault's files that are not notes (attachments, canvases): size and time,
//! searchable text for text formats, chunks for semantic search, and a canvas's links.

use std::collections::HashMap;
use std::path::Path;
use std::time::SystemTime;

use rusqlite::{OptionalExtension, Transaction, params};

use super::load::nanos;
use super::rows::{delete_links, insert_links, remove_exact};
use crate::index::schema::subtree_range;
use crate::index::{IndexError, document, file_text};
use crate::markdown::links;
use crate::vault::{self, ScannedFile, Vault, VaultPath};

/// Brings the rows of the vault's other files (attachments, canvases) in line with `scanned`, the
/// files found in `folder` (or the whole vault): new or changed ones are recorded (a canvas with its
/// links), vanished ones dropped.
pub(super) fn reconcile_files(
    transaction: &Transaction<'_>,
    vault: &Vault,
    scanned: &[ScannedFile],
    folder: Option<&str>,
    force: bool,
) -> Result<(), IndexError> {
    let mut known: HashMap<String, (i64, i64)> = HashMap::new();
    {
        let (low, high) = match folder {
            Some(folder) => subtree_range(folder),
            None => (String::new(), "\u{10ffff}".to_owned()),
        };
        let mut statement = transaction
            .prepare_cached("SELECT path, size, mtime FROM files WHERE path > ?1 AND path < ?2")?;
        let rows = statement.query_map(params![low, high], |row| {
            Ok((row.get::<_, String>(0)?, (row.get(1)?, row.get(2)?)))
        })?;
        for row in rows {
            let (path, stat) = row?;
            known.insert(path, stat);
        }
    }
    for file in scanned {
        let stat = known.remove(file.path.as_str());
        if !force && stat == Some((file.bytes as i64, nanos(file.modified))) {
            continue;
        }
        upsert_file(
            transaction,
            vault,
            &file.path,
            &file.fs_path,
            file.bytes,
            file.modified,
        )?;
    }
    for path in known.keys() {
        remove_exact(transaction, path)?;
    }
    Ok(())
}

/// Records a file that is not a note: its size and time, its searchable text (text formats), and
/// a canvas's links.
pub(super) fn upsert_file(
    transaction: &Transaction<'_>,
    vault: &Vault,
    path: &VaultPath,
    fs_path: &Path,
    size: u64,
    modified: SystemTime,
) -> Result<(), IndexError> {
    let existing: Option<i64> = transaction
        .prepare_cached("SELECT id FROM files WHERE path = ?1")?
        .query_row([path.as_str()], |row| row.get(0))
        .optional()?;
    let id = match existing {
        Some(id) => {
            transaction
                .prepare_cached("DELETE FROM files_fts WHERE rowid = ?1")?
                .execute([id])?;
            transaction
                .prepare_cached("DELETE FROM file_chunks WHERE file_id = ?1")?
                .execute([id])?;
            transaction
                .prepare_cached("UPDATE files SET size = ?2, mtime = ?3 WHERE id = ?1")?
                .execute(params![id, size as i64, nanos(modified)])?;
            id
        }
        None => {
            transaction
                .prepare_cached("INSERT INTO files(path, size, mtime) VALUES(?1, ?2, ?3)")?
                .execute(params![path.as_str(), size as i64, nanos(modified)])?;
            transaction.last_insert_rowid()
        }
    };
    delete_links(transaction, path.as_str())?;
    let extension = path.extension().unwrap_or_default().to_ascii_lowercase();
    let canvas = extension == "canvas";
    if !(canvas || file_text::is_indexed(&extension)) || size > file_text::MAX_SOURCE_BYTES {
        return Ok(());
    }
    // A file that vanished or cannot be read between the scan and here is recorded without
    // text; the watcher's next event for it brings the row up to date.
    let Some(bytes) = read_for_text(fs_path, file_text::bytes_needed(&extension)) else {
        return Ok(());
    };
    if canvas && size <= vault.max_file_bytes() {
        let text = String::from_utf8_lossy(&bytes);
        let found = links::canvas_links(&text);
        let names = document::link_names(&found);
        insert_links(transaction, path.as_str(), &found, &names)?;
    }
    if let Some(body) = file_text::extract(&extension, &bytes) {
        transaction
            .prepare_cached("INSERT INTO files_fts(rowid, name, body) VALUES(?1, ?2, ?3)")?
            .execute(params![id, path.stem(), body])?;
        // Chunked as a note is, titled with the file's full name, and kept with their text:
        // the embedding pass must not parse a PDF again, and a reranker reads the chunk itself.
        let mut insert_chunk = transaction.prepare_cached(
            "INSERT INTO file_chunks(file_id, seq, hash, text) VALUES(?1, ?2, ?3, ?4)",
        )?;
        for (seq, (hash, chunk)) in document::note_chunks(path.file_name(), &body)
            .into_iter()
            .enumerate()
        {
            insert_chunk.execute(params![id, seq as i64, hash, chunk.text])?;
        }
    }
    Ok(())
}

/// The file's first `limit` bytes (all of it for `None`); `None` when it cannot be read.
fn read_for_text(fs_path: &Path, limit: Option<u64>) -> Option<Vec<u8>> {
    let Some(limit) = limit else {
        return vault::read_regular(fs_path).ok().flatten();
    };
    let (file, _) = vault::open_regular(fs_path).ok().flatten()?;
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(file, limit), &mut bytes).ok()?;
    Some(bytes)
}
