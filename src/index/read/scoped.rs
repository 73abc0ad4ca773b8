//! BM25 recomputed over the rows (notes or files) a restricted caller may see, so its scores and
//! order never depend on a row it cannot read.

use std::collections::HashMap;

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, params_from_iter};

use super::conditions::Conditions;
use super::files::FILE_BM25_WEIGHTS;
use super::parts;
use super::search::{BM25_WEIGHTS, every_word_then_any, search};
use super::{NOTE_COLUMNS, NoteFilter, NoteRow, SearchHit, SearchPage, SearchPosition, note_row};
use crate::index::parts::NOTE_MASK;
use crate::index::query_text::MatchQuery;

/// BM25's parameters as FTS5's `bm25()` has them.
const BM25_K1: f64 = 1.2;
const BM25_B: f64 = 0.75;

/// Ranked full-text search whose ranking depends only on the notes `keep` admits: the same BM25
/// as `search`, with FTS5's column weights, but with the note count, the document frequencies and
/// the average length taken over those notes alone.
///
/// FTS5's `bm25()` takes them over the whole table, so a restricted caller's scores (and with them
/// the order) would move when a note it cannot read gains or loses a word. Here each phrase's
/// weighted frequency in a note is recovered from a one-phrase `bm25()` (the inverse of BM25's
/// saturation, rounded to a whole number: the weights are whole numbers, so the recovered value is
/// exact and carries no trace of the table's statistics), and the score is recomputed. Costs a
/// pass over every note and one query per phrase, so only callers some rule restricts use it.
pub fn search_scoped(
    connection: &Connection,
    query: &MatchQuery,
    filter: &NoteFilter,
    start: Option<SearchPosition>,
    limit: usize,
    keep: &dyn Fn(&NoteRow) -> bool,
) -> rusqlite::Result<SearchPage> {
    let Some(all) = &query.all else {
        return search(connection, query, filter, start, limit, keep);
    };
    let corpus = ScopedCorpus::notes(connection, query, keep)?;
    let run = |expression: &str, offset: usize, any_word: bool| {
        let mut hits = corpus.ranked(connection, query, (expression, any_word), filter)?;
        let more = hits.len() > offset.saturating_add(limit);
        let hits: Vec<SearchHit> = hits
            .drain(offset.min(hits.len())..)
            .take(limit)
            .enumerate()
            .map(|(index, hit)| SearchHit {
                at: offset + index,
                ..hit
            })
            .collect();
        Ok::<_, rusqlite::Error>(SearchPage {
            hits,
            next: more.then_some(SearchPosition {
                offset: offset + limit,
                any_word,
            }),
            any_word,
        })
    };
    every_word_then_any(query, all, start, run)
}

/// An FTS5 table a scoped ranking recomputes BM25 over.
pub(super) struct FtsTable {
    /// The table's `_docsize` shadow table (token counts per row).
    docsize: &'static str,
    /// `SELECT rowid, bm25(...)` over the table for one MATCH expression, with its weights.
    scored: String,
}

impl FtsTable {
    fn notes() -> FtsTable {
        FtsTable {
            docsize: "notes_fts_docsize",
            scored: format!(
                "SELECT rowid, bm25(notes_fts, {BM25_WEIGHTS}) FROM notes_fts WHERE notes_fts MATCH ?"
            ),
        }
    }

    pub(super) fn files() -> FtsTable {
        FtsTable {
            docsize: "files_fts_docsize",
            scored: format!(
                "SELECT rowid, bm25(files_fts, {FILE_BM25_WEIGHTS}) FROM files_fts WHERE files_fts MATCH ?"
            ),
        }
    }
}

/// The statistics of the rows (notes or files) one caller may see, and each phrase's frequency
/// in them.
pub(super) struct ScopedCorpus<R> {
    /// Visible rows: id to (row, length in tokens over all columns).
    visible: HashMap<i64, (R, f64)>,
    average_length: f64,
    /// Per phrase: inverse document frequency over the visible rows, and the weighted frequency
    /// in each visible row that holds it.
    phrases: Vec<(f64, HashMap<i64, f64>)>,
}

impl<R> ScopedCorpus<R> {
    /// The corpus of `rows` (id and row, already the visible ones) of `table`.
    pub(super) fn load(
        connection: &Connection,
        table: &FtsTable,
        query: &MatchQuery,
        rows: Vec<(i64, R)>,
    ) -> rusqlite::Result<ScopedCorpus<R>> {
        // Per full-text row, as FTS5 counts; a note stored as several rows (`index::parts`) is
        // as long as all of them.
        let mut row_lengths: HashMap<i64, f64> = HashMap::new();
        let mut statement =
            connection.prepare_cached(&format!("SELECT id, sz FROM {}", table.docsize))?;
        let sizes = statement.query_map([], |row| {
            Ok((row.get::<_, i64>(0)?, row.get::<_, Vec<u8>>(1)?))
        })?;
        for size in sizes {
            let (id, sizes) = size?;
            row_lengths.insert(id, column_sizes_total(&sizes));
        }
        let table_rows = row_lengths.len() as f64;
        let table_average = if row_lengths.is_empty() {
            0.0
        } else {
            row_lengths.values().sum::<f64>() / table_rows
        };
        let mut lengths: HashMap<i64, f64> = HashMap::new();
        for (rowid, length) in &row_lengths {
            *lengths.entry(rowid & NOTE_MASK).or_default() += length;
        }
        let visible: HashMap<i64, (R, f64)> = rows
            .into_iter()
            .filter_map(|(id, row)| Some((id, (row, *lengths.get(&id)?))))
            .collect();
        let count = visible.len() as f64;
        let average_length = if visible.is_empty() {
            0.0
        } else {
            visible.values().map(|(_, length)| length).sum::<f64>() / count
        };
        let mut phrases = Vec::new();
        let mut statement = connection.prepare_cached(&table.scored)?;
        for phrase in &query.phrases {
            let scored: Vec<(i64, f64)> = statement
                .query_map([phrase], |row| Ok((row.get(0)?, -row.get::<_, f64>(1)?)))?
                .collect::<rusqlite::Result<_>>()?;
            // The table-wide figures FTS5 used, only to undo its arithmetic.
            let table_idf = idf(table_rows, scored.len() as f64);
            let mut frequencies: HashMap<i64, f64> = HashMap::new();
            for (rowid, score) in scored {
                let id = rowid & NOTE_MASK;
                let Some(length) = row_lengths
                    .get(&rowid)
                    .filter(|_| visible.contains_key(&id))
                else {
                    continue;
                };
                let saturation = BM25_K1
                    * (1.0 - BM25_B + BM25_B * length / table_average.max(f64::MIN_POSITIVE));
                let denominator = table_idf * (BM25_K1 + 1.0) - score;
                let frequency = if denominator > 0.0 {
                    (score * saturation / denominator).round()
                } else {
                    0.0
                };
                *frequencies.entry(id).or_default() += frequency.max(0.0);
            }
            phrases.push((idf(count, frequencies.len() as f64), frequencies));
        }
        Ok(ScopedCorpus {
            visible,
            average_length,
            phrases,
        })
    }

    /// The visible row `id` and its score over the visible rows; `None` when it is not visible.
    pub(super) fn scored(&self, id: i64) -> Option<(&R, f64)> {
        let (row, length) = self.visible.get(&id)?;
        let saturation =
            BM25_K1 * (1.0 - BM25_B + BM25_B * length / self.average_length.max(f64::MIN_POSITIVE));
        let score = self
            .phrases
            .iter()
            .map(|(idf, frequencies)| {
                let frequency = frequencies.get(&id).copied().unwrap_or(0.0);
                idf * (frequency * (BM25_K1 + 1.0)) / (frequency + saturation)
            })
            .sum();
        Some((row, score))
    }
}

impl ScopedCorpus<NoteRow> {
    /// The corpus of the notes `keep` admits.
    fn notes(
        connection: &Connection,
        query: &MatchQuery,
        keep: &dyn Fn(&NoteRow) -> bool,
    ) -> rusqlite::Result<ScopedCorpus<NoteRow>> {
        let mut statement =
            connection.prepare_cached(&format!("SELECT {NOTE_COLUMNS}, n.id FROM notes n"))?;
        let rows = statement
            .query_map([], |row| Ok((row.get::<_, i64>(6)?, note_row(row)?)))?
            .filter(|row| row.as_ref().map_or(true, |(_, note)| keep(note)))
            .collect::<rusqlite::Result<Vec<_>>>()?;
        ScopedCorpus::load(connection, &FtsTable::notes(), query, rows)
    }

    /// Every visible note matching `expression` and the filters, best first (ties by path).
    fn ranked(
        &self,
        connection: &Connection,
        query: &MatchQuery,
        (expression, any_word): (&str, bool),
        filter: &NoteFilter,
    ) -> rusqlite::Result<Vec<SearchHit>> {
        let conditions = Conditions::from_filter(filter);
        // Notes stored as several rows are judged whole (`parts`); their rows' ids are no notes'.
        let in_parts: Vec<i64> = if parts::any(connection)? {
            parts::matching(connection, query, any_word)?
                .into_iter()
                .map(|(id, _)| id)
                .collect()
        } else {
            Vec::new()
        };
        let sql = format!(
            "SELECT n.id FROM notes n WHERE (n.id IN (SELECT rowid FROM notes_fts WHERE notes_fts MATCH ?)
             OR n.id IN (SELECT value FROM json_each(?))){}",
            conditions.and_clause()
        );
        let mut params = vec![
            SqlValue::Text(expression.to_string()),
            SqlValue::Text(serde_json::json!(in_parts).to_string()),
        ];
        params.extend(conditions.params.iter().cloned());
        let mut statement = connection.prepare_cached(&sql)?;
        let ids: Vec<i64> = statement
            .query_map(params_from_iter(params), |row| row.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        let mut hits: Vec<SearchHit> = ids
            .into_iter()
            .filter_map(|id| {
                let (note, score) = self.scored(id)?;
                Some(SearchHit {
                    note: note.clone(),
                    score,
                    at: 0,
                })
            })
            .collect();
        hits.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| a.note.path.cmp(&b.note.path))
        });
        Ok(hits)
    }
}

/// FTS5's inverse document frequency: never below a tiny positive value, so a word in most
/// notes still counts a little.
fn idf(rows: f64, holding: f64) -> f64 {
    let value = ((rows - holding + 0.5) / (holding + 0.5)).ln();
    if value <= 0.0 { 1e-6 } else { value }
}

/// The total of an FTS5 `docsize` record: one SQLite varint per column.
fn column_sizes_total(record: &[u8]) -> f64 {
    let mut total = 0u64;
    let mut value = 0u64;
    let mut bytes = 0;
    for &byte in record {
        bytes += 1;
        if bytes == 9 {
            // The ninth byte of a varint carries eight bits.
            value = (value << 8) | u64::from(byte);
            total += value;
            (value, bytes) = (0, 0);
            continue;
        }
        value = (value << 7) | u64::from(byte & 0x7f);
        if byte & 0x80 == 0 {
            total += value;
            (value, bytes) = (0, 0);
        }
    }
    total as f64
}
