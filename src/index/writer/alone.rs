//! Which notes the ACL must judge one by one: symbolic links (judged by where they lead too) and
//! notes whose names fold unlike their folder (`vault::unusual_name`). Every other note is judged
//! with its folder, so a restricted caller's counts are sums of the count tables over the folders
//! it may see, corrected by these notes alone (`read/counts.rs`).
//!
//! Kept by path, apart from the notes' rows: a reconcile writes the whole set from its scan, and a
//! refresh marks each path from its resolution, so a file that became a link without a change of
//! bytes is marked all the same. A path left here without a note costs one look-up, never a wrong
//! count.

use rusqlite::Transaction;

use crate::index::IndexError;
use crate::index::schema::subtree_range;
use crate::vault::{ScannedFile, Vault, VaultPath, unusual_name};

use super::load::is_note;

/// Whether a note found at `path`, a symbolic link or not, must be judged alone.
fn alone(path: &VaultPath, linked: bool) -> bool {
    linked || unusual_name(path.file_name())
}

/// The notes of a scan that must be judged alone.
pub(super) fn of_scan(scanned: &[ScannedFile]) -> Vec<String> {
    scanned
        .iter()
        .filter(|file| is_note(&file.path) && alone(&file.path, file.linked))
        .map(|file| file.path.to_string())
        .collect()
}

/// Replaces the whole set (with `of_scan` of the whole vault).
pub(super) fn replace_all(
    transaction: &Transaction<'_>,
    paths: &[String],
) -> Result<(), IndexError> {
    transaction.execute("DELETE FROM alone_notes", [])?;
    for path in paths {
        mark(transaction, path, true)?;
    }
    Ok(())
}

/// Marks the notes of a scan (of the vault or of one folder) that must be judged alone, and
/// unmarks the others.
pub(super) fn mark_scanned(
    transaction: &Transaction<'_>,
    scanned: &[ScannedFile],
) -> Result<(), IndexError> {
    for file in scanned.iter().filter(|file| is_note(&file.path)) {
        mark(
            transaction,
            file.path.as_str(),
            alone(&file.path, file.linked),
        )?;
    }
    Ok(())
}

/// Marks or unmarks the note `raw` as its resolution on disk finds it now.
pub(super) fn mark_resolved(
    transaction: &Transaction<'_>,
    vault: &Vault,
    raw: &str,
) -> Result<(), IndexError> {
    let Ok(path) = VaultPath::parse(raw) else {
        return Ok(());
    };
    if !is_note(&path) {
        return Ok(());
    }
    let linked = vault
        .resolve(&path)
        .is_ok_and(|resolved| resolved.exists && resolved.is_symlink);
    mark(transaction, raw, alone(&path, linked))
}

fn mark(transaction: &Transaction<'_>, path: &str, alone: bool) -> Result<(), IndexError> {
    let sql = if alone {
        "INSERT OR IGNORE INTO alone_notes(path) VALUES (?1)"
    } else {
        "DELETE FROM alone_notes WHERE path = ?1"
    };
    transaction.prepare_cached(sql)?.execute([path])?;
    Ok(())
}

/// Forgets `path` and everything below it.
pub(super) fn forget(transaction: &Transaction<'_>, path: &str) -> Result<(), IndexError> {
    let (low, high) = subtree_range(path);
    transaction
        .prepare_cached("DELETE FROM alone_notes WHERE path = ?1 OR (path > ?2 AND path < ?3)")?
        .execute(rusqlite::params![path, low, high])?;
    Ok(())
}
