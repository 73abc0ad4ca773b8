//! Ranked full-text search over notes with FTS5's own BM25: every word first, any word when
//! that finds nothing, and notes without words to rank by listed newest first.

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, params_from_iter};

use super::conditions::Conditions;
use super::lists::recent_page;
use super::paging::page_by_offset_at;
use super::parts;
use super::{
    NOTE_COLUMNS, NoteFilter, NoteRow, RecentOrder, SearchHit, SearchPage, SearchPosition, note_row,
};
use crate::index::parts::FIRST_PART_ROWID;
use crate::index::query_text::MatchQuery;

/// BM25 weights of the FTS columns: title (with aliases), headings, property values, body.
pub(super) const BM25_WEIGHTS: &str = "10.0, 5.0, 2.0, 1.0";

/// Ranked full-text search. `start` is `None` for the first page, which decides whether the query
/// needs every word (the default) or, when that finds nothing, any word.
pub fn search(
    connection: &Connection,
    query: &MatchQuery,
    filter: &NoteFilter,
    start: Option<SearchPosition>,
    limit: usize,
    keep: &dyn Fn(&NoteRow) -> bool,
) -> rusqlite::Result<SearchPage> {
    let Some(all) = &query.all else {
        // No words to rank by: the notes that pass the filters, most recently modified first.
        let offset = start.map_or(0, |start| start.offset);
        let page = recent_page(
            connection,
            filter,
            RecentOrder::Modified,
            offset,
            limit,
            keep,
        )?;
        return Ok(SearchPage {
            hits: page
                .rows
                .into_iter()
                .map(|(at, note)| SearchHit {
                    note,
                    score: 0.0,
                    at,
                })
                .collect(),
            next: page.next.map(|offset| SearchPosition {
                offset,
                any_word: false,
            }),
            any_word: false,
        });
    };
    let conditions = Conditions::from_filter(filter);
    // Notes stored as several rows are judged whole (`parts`) and ranked among the others.
    let parted = parts::any(connection)?;
    let sql = ranked_sql(&conditions, parted);
    let run = |expression: &str, offset: usize, any_word: bool| {
        let in_parts = if parted {
            let found = parts::matching(connection, query, any_word)?;
            Some(serde_json::json!(found).to_string())
        } else {
            None
        };
        let page = page_by_offset_at(
            offset,
            limit,
            |at, batch| {
                let mut params = vec![SqlValue::Text(expression.to_string())];
                params.extend(conditions.params.iter().cloned());
                if let Some(in_parts) = &in_parts {
                    params.push(SqlValue::Text(in_parts.clone()));
                    params.extend(conditions.params.iter().cloned());
                }
                params.push(SqlValue::Integer(batch as i64));
                params.push(SqlValue::Integer(at as i64));
                let mut statement = connection.prepare_cached(&sql)?;
                let rows = statement.query_map(params_from_iter(params), |row| {
                    Ok(SearchHit {
                        note: note_row(row)?,
                        score: -row.get::<_, f64>(6)?,
                        at: 0,
                    })
                })?;
                rows.collect()
            },
            &|hit: &SearchHit| keep(&hit.note),
        )?;
        Ok::<_, rusqlite::Error>(SearchPage {
            hits: page
                .rows
                .into_iter()
                .map(|(at, hit)| SearchHit { at, ..hit })
                .collect(),
            next: page.next.map(|offset| SearchPosition { offset, any_word }),
            any_word,
        })
    };
    every_word_then_any(query, all, start, run)
}

/// The page of one MATCH expression: rank first, on the FTS table alone, and fetch the note rows
/// of the page only. With `parted`, notes stored as parts come as a JSON list of (id, rank)
/// after the expression and the filters' parameters, and are ranked among the others.
fn ranked_sql(conditions: &Conditions, parted: bool) -> String {
    // Joining before the LIMIT would read a notes row for every match. An explicit bm25() order is
    // about twice as fast as FTS5's `ORDER BY rank` mode here (benches/index.rs at 100k notes).
    let kept_notes = (!conditions.sql.is_empty())
        .then(|| format!("IN (SELECT n.id FROM notes n{})", conditions.where_clause()));
    let filtered = kept_notes
        .as_ref()
        .map_or(String::new(), |kept| format!(" AND rowid {kept}"));
    let matching = |rows: &str| {
        format!(
            "SELECT rowid AS id, bm25(notes_fts, {BM25_WEIGHTS}) AS rank FROM notes_fts
             WHERE notes_fts MATCH ?{rows}{filtered}"
        )
    };
    let ranked = if parted {
        let whole = matching(&format!(" AND rowid < {FIRST_PART_ROWID}"));
        let in_parts = kept_notes.as_ref().map_or(String::new(), |kept| {
            format!(" WHERE (j.value ->> 0) {kept}")
        });
        format!(
            "SELECT id, rank FROM ({whole}
             UNION ALL
             SELECT j.value ->> 0, j.value ->> 1 FROM json_each(?) j{in_parts})"
        )
    } else {
        matching("")
    };
    format!(
        "SELECT {NOTE_COLUMNS}, r.rank FROM ({ranked} ORDER BY 2 LIMIT ? OFFSET ?) r
         JOIN notes n ON n.id = r.id ORDER BY r.rank"
    )
}

/// The paging both rankings share: every word first; only when that finds nothing does the
/// first page fall back to any word, and a cursor remembers which of the two it continues.
pub(super) fn every_word_then_any(
    query: &MatchQuery,
    all: &str,
    start: Option<SearchPosition>,
    run: impl Fn(&str, usize, bool) -> rusqlite::Result<SearchPage>,
) -> rusqlite::Result<SearchPage> {
    match (start, &query.any) {
        (Some(start), Some(any)) if start.any_word => run(any, start.offset, true),
        (Some(start), _) => run(all, start.offset, false),
        (None, any) => {
            let page = run(all, 0, false)?;
            match any {
                Some(any) if page.hits.is_empty() => run(any, 0, true),
                _ => Ok(page),
            }
        }
    }
}
