//! Search over notes stored as several full-text rows (`index::parts`). Row by row, a query
//! whose words sit in different parts of such a note would never find it; so these notes are
//! judged as a whole here: each group of the query matches one of their rows and the exclusion
//! none. They rank by their best row. Only their rows are read (FTS5 seeks to the rowids of
//! parts), so a vault without such notes pays one lookup per search.

use std::collections::{HashMap, HashSet};

use rusqlite::Connection;

use super::search::BM25_WEIGHTS;
use crate::index::parts::{FIRST_PART_ROWID, NOTE_MASK};
use crate::index::query_text::MatchQuery;

/// Whether any note is stored as parts.
pub(super) fn any(connection: &Connection) -> rusqlite::Result<bool> {
    connection
        .prepare_cached("SELECT EXISTS(SELECT 1 FROM note_parts)")?
        .query_row([], |row| row.get(0))
}

/// The notes stored as parts that match `query` (every group, or any positive word with
/// `any_word`) and not its exclusion, each with its best row's `bm25()` (lower is better),
/// best first.
pub(super) fn matching(
    connection: &Connection,
    query: &MatchQuery,
    any_word: bool,
) -> rusqlite::Result<Vec<(i64, f64)>> {
    if query.phrases.is_empty() {
        return Ok(Vec::new());
    }
    let mut best: HashMap<i64, f64> = HashMap::new();
    for (rowid, rank) in rows(connection, &query.phrases.join(" OR "))? {
        let note = best.entry(rowid & NOTE_MASK).or_insert(rank);
        *note = note.min(rank);
    }
    if !any_word {
        for group in &query.groups {
            let holding = notes(connection, group)?;
            best.retain(|note, _| holding.contains(note));
        }
    }
    if let Some(excluded) = &query.excluded {
        let holding = notes(connection, excluded)?;
        best.retain(|note, _| !holding.contains(note));
    }
    let mut best: Vec<(i64, f64)> = best.into_iter().collect();
    best.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    Ok(best)
}

/// The rows of parts matching `expression`, with their `bm25()`.
fn rows(connection: &Connection, expression: &str) -> rusqlite::Result<Vec<(i64, f64)>> {
    let mut statement = connection.prepare_cached(&format!(
        "SELECT rowid, bm25(notes_fts, {BM25_WEIGHTS}) FROM notes_fts
         WHERE notes_fts MATCH ?1 AND rowid >= ?2"
    ))?;
    let rows = statement.query_map(rusqlite::params![expression, FIRST_PART_ROWID], |row| {
        Ok((row.get(0)?, row.get(1)?))
    })?;
    rows.collect()
}

/// The notes stored as parts one of whose rows matches `expression`.
fn notes(connection: &Connection, expression: &str) -> rusqlite::Result<HashSet<i64>> {
    Ok(rows(connection, expression)?
        .into_iter()
        .map(|(rowid, _)| rowid & NOTE_MASK)
        .collect())
}
