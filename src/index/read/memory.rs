//! Full-text search over memory entries, each with its file and section.

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, params_from_iter};

use super::paging::page_by_offset;

/// A memory entry whose text (with its file and section) matched a search.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryHit {
    pub path: String,
    pub section: String,
    pub date: String,
    pub text: String,
    pub line: usize,
    /// The identity of its vector: the hash of the text it is embedded as.
    pub hash: String,
    /// Higher is better (the negated BM25 rank).
    pub score: f64,
}

/// A memory entry from a row of (path, section, date, text, line, hash), scored `score`.
pub(in crate::index) fn memory_hit(
    row: &rusqlite::Row<'_>,
    score: f64,
) -> rusqlite::Result<MemoryHit> {
    Ok(MemoryHit {
        path: row.get(0)?,
        section: row.get(1)?,
        date: row.get(2)?,
        text: row.get(3)?,
        line: row.get::<_, i64>(4)?.max(0) as usize,
        hash: row.get(5)?,
        score,
    })
}

/// The best `limit` memory entries for `expression` (one of a `MatchQuery`'s FTS5 expressions),
/// among the files `keep` admits and, when `file` is given, in that file only.
pub fn search_memory(
    connection: &Connection,
    expression: &str,
    file: Option<&str>,
    limit: usize,
    keep: &dyn Fn(&str) -> bool,
) -> rusqlite::Result<Vec<MemoryHit>> {
    let page = page_by_offset(
        0,
        limit,
        |at, batch| {
            let mut statement = connection.prepare_cached(
                "SELECT n.path, m.section, m.date, m.text, m.line, m.hash, r.rank FROM (
                     SELECT rowid AS id, bm25(memory_fts, 4.0, 1.0) AS rank FROM memory_fts
                     WHERE memory_fts MATCH ?1 ORDER BY 2
                 ) r JOIN memory_entries m ON m.id = r.id JOIN notes n ON n.id = m.note_id
                 WHERE ?2 IS NULL OR n.path = ?2
                 ORDER BY r.rank LIMIT ?3 OFFSET ?4",
            )?;
            let rows = statement.query_map(
                params_from_iter([
                    SqlValue::Text(expression.to_owned()),
                    file.map_or(SqlValue::Null, |file| SqlValue::Text(file.to_owned())),
                    SqlValue::Integer(batch as i64),
                    SqlValue::Integer(at as i64),
                ]),
                |row| memory_hit(row, -row.get::<_, f64>(6)?),
            )?;
            rows.collect()
        },
        &|hit: &MemoryHit| keep(&hit.path),
    )?;
    Ok(page.rows)
}
