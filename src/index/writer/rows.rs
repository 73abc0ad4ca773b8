//! A note's rows written or removed on the writer's transaction: the note, its full text,
//! links, tags, tasks, properties, chunks and memory entries. Nothing here reads the disk.
//! A first build hands the full text to a thread of its own instead (`beside.rs`) and counts in
//! memory (`tally.rs`).

use std::cell::RefCell;

use rusqlite::{OptionalExtension, Statement, Transaction, params};

use super::beside::Beside;
use super::load::memory_entry_text;
use super::tally::{self, Tally};
use super::turns::{self, Split};
use super::{Loaded, NoteRecord};
use crate::index::IndexError;
use crate::index::document::ParsedNote;
use crate::index::parts;
use crate::index::phases::{Lap, Writing};
use crate::index::schema::subtree_range;
use crate::markdown::links::{Link, LinkForm};

pub(super) fn delete_links(transaction: &Transaction<'_>, source: &str) -> Result<(), IndexError> {
    transaction
        .prepare_cached("DELETE FROM links WHERE source = ?1")?
        .execute([source])?;
    Ok(())
}

pub(super) fn insert_links(
    transaction: &Transaction<'_>,
    source: &str,
    found: &[Link],
    names: &[String],
) -> Result<(), IndexError> {
    let mut insert = transaction.prepare_cached(
        "INSERT INTO links(source, seq, form, embed, link, target_name, display, original, line, col, start, end)
         VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
    )?;
    for (seq, (link, name)) in found.iter().zip(names).enumerate() {
        insert.execute(params![
            source,
            seq as i64,
            form_name(link.form),
            link.embed,
            link.link,
            name,
            link.display,
            link.original,
            link.line as i64,
            link.column as i64,
            link.start as i64,
            link.end as i64,
        ])?;
    }
    Ok(())
}

/// How a link's form is stored (read back by `read::form_of`).
fn form_name(form: LinkForm) -> &'static str {
    match form {
        LinkForm::Wiki => "wiki",
        LinkForm::Markdown => "markdown",
        LinkForm::Property => "property",
        LinkForm::CanvasFile => "canvas",
    }
}

/// How a note's rows are written.
#[derive(Clone, Copy)]
pub(super) enum Mode<'a> {
    /// Every row on the writer's transaction; the count tables kept by their triggers.
    Live,
    /// A first build, whose count triggers are dropped: the full text goes to a thread of its own
    /// (`beside.rs`), whole record and all, and the counts are kept in memory (`tally.rs`).
    FirstBuild(&'a Beside, &'a RefCell<Tally>),
}

/// Writes what was read of a note; the later parts of a very large one are left in `later`.
pub(super) fn apply(
    transaction: &Transaction<'_>,
    loaded: Loaded,
    phases: &mut Writing,
    later: &mut Vec<Split>,
) -> Result<(), IndexError> {
    apply_with(transaction, loaded, phases, later, Mode::Live)
}

/// `apply`, as `mode` says.
pub(super) fn apply_with(
    transaction: &Transaction<'_>,
    loaded: Loaded,
    phases: &mut Writing,
    later: &mut Vec<Split>,
    mode: Mode<'_>,
) -> Result<(), IndexError> {
    match loaded {
        Loaded::Same { path, size, mtime } => {
            transaction
                .prepare_cached("UPDATE notes SET size = ?2, mtime = ?3 WHERE path = ?1")?
                .execute(params![path, size, mtime])?;
            Ok(())
        }
        Loaded::Note(record) => {
            let id = upsert(transaction, &record, phases, later, mode)?;
            if let Mode::FirstBuild(beside, _) = mode {
                let lap = std::time::Instant::now();
                beside.hand_over(id, record)?;
                phases.fts += lap.elapsed();
            }
            Ok(())
        }
        Loaded::Gone { path } => remove_exact(transaction, &path),
    }
}

/// Writes every row of a parsed note, replacing the old ones of a note the index knew: its id.
fn upsert(
    transaction: &Transaction<'_>,
    record: &NoteRecord,
    phases: &mut Writing,
    later: &mut Vec<Split>,
    mode: Mode<'_>,
) -> Result<i64, IndexError> {
    let mut lap = Lap::start();
    let parsed = &record.parsed;
    let id = write_note_row(transaction, record)?;
    phases.notes += lap.split();
    let mut tally = match mode {
        Mode::Live => {
            insert_full_text(transaction, id, record, later)?;
            None
        }
        Mode::FirstBuild(_, tally) => {
            record_parts(transaction, id, &record.parsed)?;
            Some(tally.borrow_mut())
        }
    };
    let folder = tally::folder_of(&record.path);
    phases.fts += lap.split();
    // A note the index did not know has no links to delete.
    if record.known {
        delete_links(transaction, &record.path)?;
    }
    insert_links(transaction, &record.path, &parsed.links, &parsed.link_names)?;
    phases.links += lap.split();
    if let Some(tally) = tally.as_deref_mut() {
        tally.note(folder);
    }
    insert_tags(transaction, id, record, tally.as_deref_mut(), folder)?;
    phases.tags += lap.split();
    insert_tasks(transaction, id, parsed)?;
    phases.tasks += lap.split();
    insert_properties(transaction, id, record)?;
    if let Some(tally) = tally.as_deref_mut() {
        tally.properties(folder, &record.properties);
    }
    phases.properties += lap.split();
    insert_chunks(transaction, id, parsed)?;
    insert_memory_entries(transaction, id, record)?;
    phases.chunks += lap.split();
    Ok(id)
}

/// The note's own row, updated in place (its old content rows removed) or inserted: its id.
fn write_note_row(transaction: &Transaction<'_>, record: &NoteRecord) -> Result<i64, IndexError> {
    let parsed = &record.parsed;
    // This thread is the only writer and `known` was read by it, so a new note needs no lookup.
    let existing: Option<i64> = if record.known {
        transaction
            .prepare_cached("SELECT id FROM notes WHERE path = ?1")?
            .query_row([&record.path], |row| row.get(0))
            .optional()?
    } else {
        None
    };
    Ok(match existing {
        Some(id) => {
            remove_content(transaction, id)?;
            transaction
                .prepare_cached(
                    "UPDATE notes SET name = ?2, size = ?3, mtime = ?4, hash = ?5, properties = ?6,
                     tags = ?7, type = ?8, created = ?9 WHERE id = ?1",
                )?
                .execute(params![
                    id,
                    record.name,
                    record.size,
                    record.mtime,
                    record.hash,
                    record.properties_json,
                    record.tags_json,
                    parsed.note_type,
                    record.created
                ])?;
            id
        }
        None => {
            transaction
                .prepare_cached(
                    "INSERT INTO notes(path, name, size, mtime, hash, properties, tags, type, created)
                     VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                )?
                .execute(params![
                    record.path,
                    record.name,
                    record.size,
                    record.mtime,
                    record.hash,
                    record.properties_json,
                    record.tags_json,
                    parsed.note_type,
                    record.created
                ])?;
            transaction.last_insert_rowid()
        }
    })
}

/// The note's full-text row; or, when it is too large for one row (`index::parts`), its first
/// part, with the others left in `later` and the note marked until they are written.
fn insert_full_text(
    transaction: &Transaction<'_>,
    id: i64,
    record: &NoteRecord,
    later: &mut Vec<Split>,
) -> Result<(), IndexError> {
    let columns = full_text_columns(&record.parsed);
    let Some(rows) = parts::split(id, columns) else {
        return insert_fts_row(transaction, id, columns);
    };
    let mut rows = rows.into_iter();
    if let Some(first) = rows.next() {
        insert_part(transaction, id, 1, first)?;
    }
    let rest: Vec<(String, String, String)> = rows
        .map(|row| {
            (
                row.headings.to_string(),
                row.properties.to_string(),
                row.body.to_string(),
            )
        })
        .collect();
    if rest.is_empty() {
        return Ok(());
    }
    let marker = turns::marker();
    transaction
        .prepare_cached("UPDATE notes SET hash = ?2 WHERE id = ?1")?
        .execute(params![id, marker])?;
    later.push(Split {
        note: id,
        marker,
        hash: record.hash.clone(),
        rest,
    });
    Ok(())
}

/// Part `part` of note `id` written to the full-text table, and recorded so that the note's
/// rows can be found and removed.
pub(super) fn insert_part(
    transaction: &Transaction<'_>,
    id: i64,
    part: usize,
    columns: parts::Columns<'_>,
) -> Result<(), IndexError> {
    insert_fts_row(transaction, parts::rowid(id, part), columns)?;
    insert_part_row(transaction, id, part)
}

/// The `note_parts` rows of a note whose full text another thread stores: one per part, so
/// searches and removals find its rows.
fn record_parts(
    transaction: &Transaction<'_>,
    id: i64,
    parsed: &ParsedNote,
) -> Result<(), IndexError> {
    let count = parts::split(id, full_text_columns(parsed)).map_or(0, |rows| rows.len());
    for part in 1..=count {
        insert_part_row(transaction, id, part)?;
    }
    Ok(())
}

fn insert_part_row(transaction: &Transaction<'_>, id: i64, part: usize) -> Result<(), IndexError> {
    transaction
        .prepare_cached("INSERT INTO note_parts(note_id, part) VALUES(?1, ?2)")?
        .execute(params![id, part as i64])?;
    Ok(())
}

/// A parsed note's full-text columns.
pub(super) fn full_text_columns(parsed: &ParsedNote) -> parts::Columns<'_> {
    parts::Columns {
        title: &parsed.title_text,
        headings: &parsed.headings_text,
        properties: &parsed.properties_text,
        body: &parsed.body,
    }
}

fn insert_fts_row(
    transaction: &Transaction<'_>,
    rowid: i64,
    columns: parts::Columns<'_>,
) -> Result<(), IndexError> {
    let mut insert = transaction.prepare_cached(INSERT_FULL_TEXT)?;
    execute_full_text(&mut insert, rowid, columns)?;
    Ok(())
}

/// A full-text row's statement, on the index and on a first build's scratch database alike.
pub(super) const INSERT_FULL_TEXT: &str =
    "INSERT INTO notes_fts(rowid, title, headings, properties, body) VALUES(?1, ?2, ?3, ?4, ?5)";

/// Runs `INSERT_FULL_TEXT` for one row.
pub(super) fn execute_full_text(
    insert: &mut Statement<'_>,
    rowid: i64,
    columns: parts::Columns<'_>,
) -> Result<(), rusqlite::Error> {
    insert.execute(params![
        rowid,
        columns.title,
        columns.headings,
        columns.properties,
        columns.body
    ])?;
    Ok(())
}

/// The note's tag rows, each one inserted counted in `tally` when there is one.
fn insert_tags(
    transaction: &Transaction<'_>,
    id: i64,
    record: &NoteRecord,
    mut tally: Option<&mut Tally>,
    folder: &str,
) -> Result<(), IndexError> {
    let mut insert_tag = transaction
        .prepare_cached("INSERT OR IGNORE INTO tags(lower, note_id, tag) VALUES(?1, ?2, ?3)")?;
    for (lower, tag) in &record.tags {
        let inserted = insert_tag.execute(params![lower, id, tag])?;
        if let Some(tally) = tally.as_deref_mut()
            && inserted == 1
        {
            tally.tag(folder, lower, tag);
        }
    }
    Ok(())
}

fn insert_tasks(
    transaction: &Transaction<'_>,
    id: i64,
    parsed: &ParsedNote,
) -> Result<(), IndexError> {
    let mut insert_task = transaction.prepare_cached(
        "INSERT OR IGNORE INTO tasks(note_id, line, text, heading, heading_line, depth, parent_line, lane, lane_complete,
                                     heading_lower, symbol, body, due, scheduled, start, created, done, cancelled,
                                     priority, recurring, tags)
         VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)",
    )?;
    for (site, facts) in parsed.task_sites.iter().zip(&parsed.task_facts) {
        let [due, scheduled, start, created, done, cancelled] = &facts.dates;
        insert_task.execute(params![
            id,
            site.line as i64,
            site.text,
            site.heading,
            site.heading_line.map(|line| line as i64),
            site.depth as i64,
            site.parent_line.map(|line| line as i64),
            site.lane,
            site.lane_complete,
            facts.heading_lower,
            facts.symbol,
            facts.body,
            due,
            scheduled,
            start,
            created,
            done,
            cancelled,
            facts.priority,
            facts.recurring,
            facts.tags
        ])?;
    }
    Ok(())
}

fn insert_properties(
    transaction: &Transaction<'_>,
    id: i64,
    record: &NoteRecord,
) -> Result<(), IndexError> {
    let mut insert_property = transaction.prepare_cached(
        "INSERT INTO properties(note_id, key, key_lower, value, value_lower, number)
         VALUES(?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    for row in &record.properties {
        insert_property.execute(params![
            id,
            row.key,
            row.key_lower,
            row.value,
            row.value_lower,
            row.number
        ])?;
    }
    Ok(())
}

fn insert_chunks(
    transaction: &Transaction<'_>,
    id: i64,
    parsed: &ParsedNote,
) -> Result<(), IndexError> {
    let mut insert_chunk =
        transaction.prepare_cached("INSERT INTO chunks(note_id, seq, hash) VALUES(?1, ?2, ?3)")?;
    for (seq, hash) in parsed.chunk_hashes.iter().enumerate() {
        insert_chunk.execute(params![id, seq as i64, hash])?;
    }
    Ok(())
}

/// A memory file's dated entries, each with its full-text row.
fn insert_memory_entries(
    transaction: &Transaction<'_>,
    id: i64,
    record: &NoteRecord,
) -> Result<(), IndexError> {
    for entry in &record.memory {
        transaction
            .prepare_cached(
                "INSERT INTO memory_entries(note_id, section, date, text, line, hash)
                 VALUES(?1, ?2, ?3, ?4, ?5, ?6)",
            )?
            .execute(params![
                id,
                entry.section,
                entry.date,
                entry.text,
                entry.line as i64,
                entry.hash
            ])?;
        let entry_id = transaction.last_insert_rowid();
        transaction
            .prepare_cached("INSERT INTO memory_fts(rowid, text, section) VALUES(?1, ?2, ?3)")?
            .execute(params![
                entry_id,
                memory_entry_text(&record.name, &entry.section, &entry.text),
                entry.section
            ])?;
    }
    Ok(())
}

fn remove_content(transaction: &Transaction<'_>, id: i64) -> Result<(), IndexError> {
    remove_full_text(transaction, id)?;
    transaction
        .prepare_cached(
            "DELETE FROM memory_fts WHERE rowid IN (SELECT id FROM memory_entries WHERE note_id = ?1)",
        )?
        .execute([id])?;
    transaction
        .prepare_cached("DELETE FROM memory_entries WHERE note_id = ?1")?
        .execute([id])?;
    transaction
        .prepare_cached("DELETE FROM tags WHERE note_id = ?1")?
        .execute([id])?;
    transaction
        .prepare_cached("DELETE FROM properties WHERE note_id = ?1")?
        .execute([id])?;
    transaction
        .prepare_cached("DELETE FROM tasks WHERE note_id = ?1")?
        .execute([id])?;
    // Vectors are kept by content hash, so an unchanged chunk keeps its vector; the embedding
    // pass prunes vectors no chunk uses any more.
    transaction
        .prepare_cached("DELETE FROM chunks WHERE note_id = ?1")?
        .execute([id])?;
    Ok(())
}

/// The note's full-text row, or every part of it written so far.
fn remove_full_text(transaction: &Transaction<'_>, id: i64) -> Result<(), IndexError> {
    let written: Vec<i64> = transaction
        .prepare_cached("SELECT part FROM note_parts WHERE note_id = ?1")?
        .query_map([id], |row| row.get(0))?
        .collect::<Result<_, _>>()?;
    let mut delete = transaction.prepare_cached("DELETE FROM notes_fts WHERE rowid = ?1")?;
    if written.is_empty() {
        delete.execute([id])?;
        return Ok(());
    }
    for part in written {
        delete.execute([parts::rowid(id, part as usize)])?;
    }
    transaction
        .prepare_cached("DELETE FROM note_parts WHERE note_id = ?1")?
        .execute([id])?;
    Ok(())
}

pub(super) fn remove_exact(transaction: &Transaction<'_>, path: &str) -> Result<(), IndexError> {
    delete_links(transaction, path)?;
    transaction
        .prepare_cached(
            "DELETE FROM files_fts WHERE rowid = (SELECT id FROM files WHERE path = ?1)",
        )?
        .execute([path])?;
    transaction
        .prepare_cached(
            "DELETE FROM file_chunks WHERE file_id = (SELECT id FROM files WHERE path = ?1)",
        )?
        .execute([path])?;
    transaction
        .prepare_cached("DELETE FROM files WHERE path = ?1")?
        .execute([path])?;
    transaction
        .prepare_cached("DELETE FROM alone_notes WHERE path = ?1")?
        .execute([path])?;
    let id: Option<i64> = transaction
        .prepare_cached("SELECT id FROM notes WHERE path = ?1")?
        .query_row([path], |row| row.get(0))
        .optional()?;
    if let Some(id) = id {
        remove_content(transaction, id)?;
        transaction
            .prepare_cached("DELETE FROM notes WHERE id = ?1")?
            .execute([id])?;
    }
    Ok(())
}

/// Removes `path` and every note below it (a deleted or renamed folder).
pub(super) fn remove_subtree(transaction: &Transaction<'_>, path: &str) -> Result<(), IndexError> {
    remove_exact(transaction, path)?;
    super::alone::forget(transaction, path)?;
    let (low, high) = subtree_range(path);
    let paths: Vec<String> = transaction
        .prepare_cached(
            "SELECT path FROM notes WHERE path > ?1 AND path < ?2
             UNION SELECT path FROM files WHERE path > ?1 AND path < ?2",
        )?
        .query_map(params![low, high], |row| row.get(0))?
        .collect::<Result<_, _>>()?;
    for path in paths {
        remove_exact(transaction, &path)?;
    }
    Ok(())
}
