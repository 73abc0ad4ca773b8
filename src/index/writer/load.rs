//! Reading one note into the record the writer stores: the file opened only when regular,
//! hashed, and parsed only when its bytes (or its creation time) changed. Runs on any thread.

use std::path::Path;
use std::time::SystemTime;

use rusqlite::OptionalExtension;

use super::{Known, Loaded, MemoryRecord, NoteRecord, PropertyRecord};
use crate::index::IndexError;
use crate::index::document;
use crate::index::phases::{Lap, Parsing};
use crate::markdown::memory;
use crate::vault::{self, Revision, Vault, VaultPath};

/// What `known_row` reads: what a changed note's new record keeps of the old.
const KNOWN_COLUMNS: &str = "hash, created";

/// A note's size as a scan is compared with it (`compare.rs`): a note whose later parts are still
/// waiting (`turns.rs`) shows no size, so it is read again even when its file did not change.
pub(super) const KNOWN_SIZE: &str = "CASE WHEN hash LIKE 'parts %' THEN -1 ELSE size END";

pub(super) fn known_note(
    connection: &rusqlite::Connection,
    path: &str,
) -> Result<Option<Known>, IndexError> {
    let mut statement = connection.prepare_cached(&format!(
        "SELECT {KNOWN_COLUMNS} FROM notes WHERE path = ?1"
    ))?;
    Ok(statement.query_row([path], known_row).optional()?)
}

/// One row of `SELECT {KNOWN_COLUMNS} FROM notes ...`.
fn known_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Known> {
    Ok(Known {
        hash: row.get(0)?,
        created: row.get(1)?,
    })
}

/// Reads, hashes and (when the hash changed) parses one note. Runs on any thread.
/// `force` parses the note even when its hash says it is unchanged (a requested rebuild).
pub(super) fn load(
    vault: &Vault,
    path: &VaultPath,
    fs_path: &Path,
    known: Option<&Known>,
    force: bool,
    chunks: bool,
    phases: &Parsing,
) -> Loaded {
    let mut lap = Lap::start();
    let gone = || Loaded::Gone {
        path: path.to_string(),
    };
    // Only a regular file is opened: a FIFO named like a note would block the writer thread
    // until something wrote to it, and with it every later write's refresh.
    let (mut file, metadata) = match vault::open_regular(fs_path) {
        Ok(Some(opened)) => opened,
        Ok(None) => return gone(),
        Err(error) => {
            // A vanished note is routine; one that exists but cannot be read (its mode, owner)
            // would otherwise drop out of search and listings with no word to the operator.
            if error.kind() != std::io::ErrorKind::NotFound {
                tracing::warn!(path = %path, %error, "a note cannot be read, so the index leaves it out until it can");
            }
            return gone();
        }
    };
    let modified = metadata.modified().unwrap_or(SystemTime::UNIX_EPOCH);
    let size = metadata.len() as i64;
    let mtime = nanos(modified);
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    if vault::read_sized(&mut file, &mut bytes).is_err() {
        return gone();
    }
    phases.read.add(lap.split());
    let hash = Revision::of(&bytes).to_string();
    // Without a `created` property a note's creation time is the file's birth time (else its
    // mtime). The same bytes in a new file (an atomic save) can carry a new one, so the note is
    // parsed again, as a rebuild would read it, unless the time it has still holds. A note whose
    // `created` property sets another time parses again too; that is rare, as only its file's
    // times changed.
    let born = metadata
        .created()
        .ok()
        .map(seconds)
        .unwrap_or_else(|| seconds(modified));
    if !force && known.is_some_and(|known| known.hash == hash && known.created == born) {
        return Loaded::Same {
            path: path.to_string(),
            size: bytes.len() as i64,
            mtime,
        };
    }
    // Notes over the size cap are listed but their text is not indexed, as tools cannot read them.
    let text = if bytes.len() as u64 > vault.max_file_bytes() {
        String::new()
    } else {
        String::from_utf8(bytes)
            .unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned())
    };
    let parsed = document::parse(path.stem(), &text, chunks);
    let memory = if vault.is_memory_file(path) {
        memory_records(path.stem(), &text)
    } else {
        Vec::new()
    };
    let created = parsed.created.unwrap_or(born);
    let record = Box::new(NoteRecord {
        path: path.to_string(),
        name: path.stem().to_string(),
        size,
        mtime,
        hash,
        created,
        known: known.is_some(),
        properties_json: serde_json::to_string(&parsed.properties).unwrap_or_else(|_| "{}".into()),
        tags_json: serde_json::to_string(&parsed.tags).unwrap_or_else(|_| "[]".into()),
        tags: parsed
            .tags
            .iter()
            .map(|tag| (tag.to_lowercase(), tag.clone()))
            .collect(),
        properties: parsed
            .property_rows
            .iter()
            .map(|row| PropertyRecord {
                key: row.key.clone(),
                key_lower: row.key.to_lowercase(),
                value: row.text.clone(),
                value_lower: row.text.as_ref().map(|text| text.to_lowercase()),
                number: row.number,
            })
            .collect(),
        parsed,
        memory,
    });
    phases.parse.add(lap.split());
    Loaded::Note(record)
}

fn memory_records(file: &str, text: &str) -> Vec<MemoryRecord> {
    let mut records = Vec::new();
    for section in memory::parse(text).sections {
        for entry in section.entries {
            let embedded = memory_entry_text(file, &section.name, &entry.text);
            records.push(MemoryRecord {
                section: section.name.clone(),
                hash: Revision::of(embedded.as_bytes()).to_string(),
                date: entry.date,
                text: entry.text,
                line: entry.line,
            });
        }
    }
    records
}

/// What a memory entry is searched and embedded as: its file and section in front, so a query
/// about "how agents should communicate" meets the entries filed under that heading.
pub fn memory_entry_text(file: &str, section: &str, text: &str) -> String {
    format!("{file} > {section}\n{text}")
}

pub(super) fn is_note(path: &VaultPath) -> bool {
    // As `extension() == "md"`, without lower-casing into a new string: a reconcile asks this of
    // every file (no other character lower-cases to an ASCII letter of `md`).
    let name = path.file_name();
    name.rfind('.')
        .is_some_and(|dot| dot > 0 && name[dot + 1..].eq_ignore_ascii_case("md"))
}

pub(super) fn nanos(time: SystemTime) -> i64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |elapsed| {
            i64::try_from(elapsed.as_nanos()).unwrap_or(i64::MAX)
        })
}

fn seconds(time: SystemTime) -> i64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |elapsed| {
            i64::try_from(elapsed.as_secs()).unwrap_or(i64::MAX)
        })
}
