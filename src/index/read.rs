//! Read queries over the index: ranked full-text search, filtered note lists, and the tag and
//! property aggregates. Each runs on one read connection, off the async executor.
//!
//! Filters become SQL with bound parameters only; client text never becomes SQL or FTS syntax.
//! Paths a caller wants hidden (Obsidian's excluded files) are dropped here while paging, so a
//! page is never short because of them and cursors stay exact.

use std::collections::HashMap;

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, Row, params_from_iter};

use super::query_text::MatchQuery;
use super::schema::subtree_range;

/// One note as lists show it.
#[derive(Debug, Clone, PartialEq)]
pub struct NoteRow {
    pub path: String,
    /// File name without `.md`.
    pub name: String,
    pub size: u64,
    /// Modification time, nanoseconds since the Unix epoch.
    pub mtime_ns: i64,
    /// Creation time in Unix seconds: the `created` property, else the file's birth time.
    pub created: i64,
    pub tags: Vec<String>,
}

/// A half-open time range in Unix seconds: `from <= t < until`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TimeRange {
    pub from: Option<i64>,
    pub until: Option<i64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TagFilter {
    /// Without `#`; compared ignoring case.
    pub tag: String,
    /// Only this tag, not its nested tags (`project` without `project/a`).
    pub exact: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PropertyFilter {
    /// Compared ignoring case.
    pub key: String,
    /// `None` matches any note that has the key. Text is compared ignoring case; a number also
    /// matches numeric values equal to it.
    pub value: Option<PropertyValue>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PropertyValue {
    pub text: String,
    pub number: Option<f64>,
}

/// Conditions every listed note must meet.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NoteFilter {
    /// Vault-relative folder; `None` or `""` is the whole vault.
    pub folder: Option<String>,
    /// With `folder`: only notes directly inside it, not in subfolders.
    pub direct_only: bool,
    pub tags: Vec<TagFilter>,
    pub properties: Vec<PropertyFilter>,
    /// Compared ignoring case with the `type` property.
    pub note_type: Option<String>,
    pub created: TimeRange,
    pub modified: TimeRange,
    /// When set, only these notes count (the caller's access policy chose them); tag and
    /// property counts use it so a note the caller may not read never adds to a count.
    pub only_paths: Option<Vec<String>>,
}

/// A page of rows, and where the next page starts.
#[derive(Debug, Clone)]
pub struct Page<R, C> {
    pub rows: Vec<R>,
    pub next: Option<C>,
}

/// Where a search page starts: a row offset, and whether the query fell back to matching any word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SearchPosition {
    pub offset: usize,
    pub any_word: bool,
}

/// A page of search hits.
#[derive(Debug, Clone)]
pub struct SearchPage {
    pub hits: Vec<SearchHit>,
    pub next: Option<SearchPosition>,
    /// True when no note had every word, so the hits match any of them.
    pub any_word: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SearchHit {
    pub note: NoteRow,
    /// Higher is better (the negated BM25 rank); 0 when there was no query text.
    pub score: f64,
    /// The hit's own offset in its ranked list: where a page that stops before it resumes.
    pub at: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecentOrder {
    Modified,
    Created,
}

/// A tag, property key or property value with the number of notes that have it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Count {
    /// The most common spelling among case variants.
    pub value: String,
    pub notes: u64,
}

/// BM25 weights of the FTS columns: title (with aliases), headings, property values, body.
const BM25_WEIGHTS: &str = "10.0, 5.0, 2.0, 1.0";
/// BM25 weights of the files' FTS columns: file name, text. Whole numbers, like the notes', so a
/// scoped ranking recovers frequencies exactly.
const FILE_BM25_WEIGHTS: &str = "5.0, 1.0";

pub(super) const NOTE_COLUMNS: &str = "n.path, n.name, n.size, n.mtime, n.created, n.tags";

pub(super) fn note_row(row: &Row<'_>) -> rusqlite::Result<NoteRow> {
    let tags: String = row.get(5)?;
    Ok(NoteRow {
        path: row.get(0)?,
        name: row.get(1)?,
        size: row.get::<_, i64>(2)?.max(0) as u64,
        mtime_ns: row.get(3)?,
        created: row.get(4)?,
        tags: serde_json::from_str(&tags).unwrap_or_default(),
    })
}

/// SQL conditions and their parameters, in order.
#[derive(Default)]
pub(super) struct Conditions {
    pub(super) sql: Vec<String>,
    pub(super) params: Vec<SqlValue>,
}

impl Conditions {
    fn push(&mut self, sql: &str, params: impl IntoIterator<Item = SqlValue>) {
        self.sql.push(sql.to_string());
        self.params.extend(params);
    }

    pub(super) fn from_filter(filter: &NoteFilter) -> Conditions {
        let mut conditions = Conditions::default();
        if let Some(paths) = &filter.only_paths {
            conditions.push(
                "n.path IN (SELECT value FROM json_each(?))",
                [SqlValue::Text(paths_json(paths))],
            );
        }
        let folder = filter.folder.as_deref().unwrap_or("");
        if !folder.is_empty() {
            let (low, high) = subtree_range(folder);
            conditions.push(
                "n.path > ? AND n.path < ?",
                [SqlValue::Text(low), SqlValue::Text(high)],
            );
        }
        if filter.direct_only {
            let skip = if folder.is_empty() {
                1
            } else {
                folder.chars().count() as i64 + 2
            };
            conditions.push(
                "instr(substr(n.path, ?), '/') = 0",
                [SqlValue::Integer(skip)],
            );
        }
        for tag in &filter.tags {
            let lower = tag.tag.to_lowercase();
            if tag.exact {
                conditions.push(
                    "n.id IN (SELECT note_id FROM tags WHERE lower = ?)",
                    [SqlValue::Text(lower)],
                );
            } else {
                let (low, high) = subtree_range(&lower);
                conditions.push(
                    "n.id IN (SELECT note_id FROM tags WHERE lower = ? OR (lower > ? AND lower < ?))",
                    [
                        SqlValue::Text(lower),
                        SqlValue::Text(low),
                        SqlValue::Text(high),
                    ],
                );
            }
        }
        for property in &filter.properties {
            let key = SqlValue::Text(property.key.to_lowercase());
            match &property.value {
                None => conditions.push(
                    "n.id IN (SELECT note_id FROM properties WHERE key_lower = ?)",
                    [key],
                ),
                Some(PropertyValue {
                    text,
                    number: Some(number),
                }) => conditions.push(
                    "n.id IN (SELECT note_id FROM properties WHERE key_lower = ? AND (value_lower = ? OR number = ?))",
                    [key, SqlValue::Text(text.to_lowercase()), SqlValue::Real(*number)],
                ),
                Some(PropertyValue { text, number: None }) => conditions.push(
                    "n.id IN (SELECT note_id FROM properties WHERE key_lower = ? AND value_lower = ?)",
                    [key, SqlValue::Text(text.to_lowercase())],
                ),
            }
        }
        if let Some(note_type) = &filter.note_type {
            conditions.push(
                "lower(n.type) = ?",
                [SqlValue::Text(note_type.to_lowercase())],
            );
        }
        if let Some(from) = filter.created.from {
            conditions.push("n.created >= ?", [SqlValue::Integer(from)]);
        }
        if let Some(until) = filter.created.until {
            conditions.push("n.created < ?", [SqlValue::Integer(until)]);
        }
        if let Some(from) = filter.modified.from {
            conditions.push(
                "n.mtime >= ?",
                [SqlValue::Integer(from.saturating_mul(1_000_000_000))],
            );
        }
        if let Some(until) = filter.modified.until {
            conditions.push(
                "n.mtime < ?",
                [SqlValue::Integer(until.saturating_mul(1_000_000_000))],
            );
        }
        conditions
    }

    /// ` AND a AND b`, or nothing.
    pub(super) fn and_clause(&self) -> String {
        self.sql.iter().map(|c| format!(" AND {c}")).collect()
    }

    /// ` WHERE a AND b`, or nothing.
    fn where_clause(&self) -> String {
        if self.sql.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", self.sql.join(" AND "))
        }
    }
}

/// Collects up to `limit` kept rows starting at row `offset` of an ordered query, fetching in
/// batches; returns the offset of the first kept row that did not fit.
pub(super) fn page_by_offset<R>(
    offset: usize,
    limit: usize,
    fetch: impl FnMut(usize, usize) -> rusqlite::Result<Vec<R>>,
    keep: &dyn Fn(&R) -> bool,
) -> rusqlite::Result<Page<R, usize>> {
    let page = page_by_offset_at(offset, limit, fetch, keep)?;
    Ok(Page {
        rows: page.rows.into_iter().map(|(_, row)| row).collect(),
        next: page.next,
    })
}

/// `page_by_offset` with each row's own offset in the query, so a caller that uses only the head
/// of a page knows where the rest starts.
fn page_by_offset_at<R>(
    offset: usize,
    limit: usize,
    mut fetch: impl FnMut(usize, usize) -> rusqlite::Result<Vec<R>>,
    keep: &dyn Fn(&R) -> bool,
) -> rusqlite::Result<Page<(usize, R), usize>> {
    // One more row than the page, to know whether another page follows; excluded rows are rare,
    // so a second batch is rarely needed.
    let batch = limit + 1;
    let mut rows = Vec::new();
    let mut at = offset;
    loop {
        let fetched = fetch(at, batch)?;
        let count = fetched.len();
        for row in fetched {
            at += 1;
            if keep(&row) {
                if rows.len() == limit {
                    return Ok(Page {
                        rows,
                        next: Some(at - 1),
                    });
                }
                rows.push((at - 1, row));
            }
        }
        if count < batch {
            return Ok(Page { rows, next: None });
        }
    }
}

/// Like `page_by_offset` for queries ordered by path, resuming after a path (a keyset cursor, so
/// notes created or deleted between pages never cause a skip or a repeat).
fn page_by_path(
    after: Option<&str>,
    limit: usize,
    mut fetch: impl FnMut(Option<&str>, usize) -> rusqlite::Result<Vec<NoteRow>>,
    keep: &dyn Fn(&NoteRow) -> bool,
) -> rusqlite::Result<Page<NoteRow, String>> {
    let batch = limit + 1;
    let mut rows: Vec<NoteRow> = Vec::new();
    let mut cursor = after.map(str::to_string);
    loop {
        let fetched = fetch(cursor.as_deref(), batch)?;
        let count = fetched.len();
        for row in fetched {
            cursor = Some(row.path.clone());
            if keep(&row) {
                if rows.len() == limit {
                    let next = rows.last().map(|last| last.path.clone());
                    return Ok(Page { rows, next });
                }
                rows.push(row);
            }
        }
        if count < batch {
            return Ok(Page { rows, next: None });
        }
    }
}

/// Notes matching `filter`, ordered by path, after `after`.
pub fn list_by_path(
    connection: &Connection,
    filter: &NoteFilter,
    after: Option<&str>,
    limit: usize,
    keep: &dyn Fn(&NoteRow) -> bool,
) -> rusqlite::Result<Page<NoteRow, String>> {
    let conditions = Conditions::from_filter(filter);
    let sql_first = format!(
        "SELECT {NOTE_COLUMNS} FROM notes n WHERE 1{} ORDER BY n.path LIMIT ?",
        conditions.and_clause()
    );
    let sql_after = format!(
        "SELECT {NOTE_COLUMNS} FROM notes n WHERE n.path > ?{} ORDER BY n.path LIMIT ?",
        conditions.and_clause()
    );
    page_by_path(
        after,
        limit,
        |after, batch| {
            let mut params = Vec::new();
            let sql = match after {
                Some(after) => {
                    params.push(SqlValue::Text(after.to_string()));
                    &sql_after
                }
                None => &sql_first,
            };
            params.extend(conditions.params.iter().cloned());
            params.push(SqlValue::Integer(batch as i64));
            let mut statement = connection.prepare_cached(sql)?;
            let rows = statement.query_map(params_from_iter(params), note_row)?;
            rows.collect()
        },
        keep,
    )
}

/// Notes matching `filter`, newest first by modification or creation time.
pub fn list_recent(
    connection: &Connection,
    filter: &NoteFilter,
    order: RecentOrder,
    offset: usize,
    limit: usize,
    keep: &dyn Fn(&NoteRow) -> bool,
) -> rusqlite::Result<Page<NoteRow, usize>> {
    let page = recent_page(connection, filter, order, offset, limit, keep)?;
    Ok(Page {
        rows: page.rows.into_iter().map(|(_, row)| row).collect(),
        next: page.next,
    })
}

/// `list_recent` with each note's offset in the list.
fn recent_page(
    connection: &Connection,
    filter: &NoteFilter,
    order: RecentOrder,
    offset: usize,
    limit: usize,
    keep: &dyn Fn(&NoteRow) -> bool,
) -> rusqlite::Result<Page<(usize, NoteRow), usize>> {
    let conditions = Conditions::from_filter(filter);
    let column = match order {
        RecentOrder::Modified => "n.mtime",
        RecentOrder::Created => "n.created",
    };
    let sql = format!(
        "SELECT {NOTE_COLUMNS} FROM notes n{} ORDER BY {column} DESC, n.path LIMIT ? OFFSET ?",
        conditions.where_clause()
    );
    page_by_offset_at(
        offset,
        limit,
        |at, batch| {
            let mut params = conditions.params.clone();
            params.push(SqlValue::Integer(batch as i64));
            params.push(SqlValue::Integer(at as i64));
            let mut statement = connection.prepare_cached(&sql)?;
            let rows = statement.query_map(params_from_iter(params), note_row)?;
            rows.collect()
        },
        keep,
    )
}

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
    // Rank first, on the FTS table alone, and fetch the note rows of the page only: joining before
    // the LIMIT would read a notes row for every match. An explicit bm25() order is about twice as
    // fast as FTS5's `ORDER BY rank` mode here (measured with benches/index.rs at 100k notes).
    let filtered = if conditions.sql.is_empty() {
        String::new()
    } else {
        format!(
            " AND rowid IN (SELECT n.id FROM notes n{})",
            conditions.where_clause()
        )
    };
    let sql = format!(
        "SELECT {NOTE_COLUMNS}, r.rank FROM (
             SELECT rowid AS id, bm25(notes_fts, {BM25_WEIGHTS}) AS rank FROM notes_fts
             WHERE notes_fts MATCH ?{filtered} ORDER BY 2 LIMIT ? OFFSET ?
         ) r JOIN notes n ON n.id = r.id ORDER BY r.rank"
    );
    let run = |expression: &str, offset: usize, any_word: bool| {
        let page = page_by_offset_at(
            offset,
            limit,
            |at, batch| {
                let mut params = vec![SqlValue::Text(expression.to_string())];
                params.extend(conditions.params.iter().cloned());
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

/// The paging both rankings share: every word first; only when that finds nothing does the
/// first page fall back to any word, and a cursor remembers which of the two it continues.
fn every_word_then_any(
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
        let mut hits = corpus.ranked(connection, expression, filter)?;
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
struct FtsTable {
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

    fn files() -> FtsTable {
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
struct ScopedCorpus<R> {
    /// Visible rows: id to (row, length in tokens over all columns).
    visible: HashMap<i64, (R, f64)>,
    average_length: f64,
    /// Per phrase: inverse document frequency over the visible rows, and the weighted frequency
    /// in each visible row that holds it.
    phrases: Vec<(f64, HashMap<i64, f64>)>,
}

impl<R> ScopedCorpus<R> {
    /// The corpus of `rows` (id and row, already the visible ones) of `table`.
    fn load(
        connection: &Connection,
        table: &FtsTable,
        query: &MatchQuery,
        rows: Vec<(i64, R)>,
    ) -> rusqlite::Result<ScopedCorpus<R>> {
        let mut lengths: HashMap<i64, f64> = HashMap::new();
        let mut statement =
            connection.prepare_cached(&format!("SELECT id, sz FROM {}", table.docsize))?;
        let sizes = statement.query_map([], |row| {
            Ok((row.get::<_, i64>(0)?, row.get::<_, Vec<u8>>(1)?))
        })?;
        for size in sizes {
            let (id, sizes) = size?;
            lengths.insert(id, column_sizes_total(&sizes));
        }
        let table_rows = lengths.len() as f64;
        let table_average = if lengths.is_empty() {
            0.0
        } else {
            lengths.values().sum::<f64>() / table_rows
        };
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
            let frequencies: HashMap<i64, f64> = scored
                .into_iter()
                .filter_map(|(id, score)| {
                    let (_, length) = visible.get(&id)?;
                    let saturation = BM25_K1
                        * (1.0 - BM25_B + BM25_B * length / table_average.max(f64::MIN_POSITIVE));
                    let denominator = table_idf * (BM25_K1 + 1.0) - score;
                    let frequency = if denominator > 0.0 {
                        (score * saturation / denominator).round()
                    } else {
                        0.0
                    };
                    Some((id, frequency.max(0.0)))
                })
                .collect();
            phrases.push((idf(count, frequencies.len() as f64), frequencies));
        }
        Ok(ScopedCorpus {
            visible,
            average_length,
            phrases,
        })
    }

    /// The visible row `id` and its score over the visible rows; `None` when it is not visible.
    fn scored(&self, id: i64) -> Option<(&R, f64)> {
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
        expression: &str,
        filter: &NoteFilter,
    ) -> rusqlite::Result<Vec<SearchHit>> {
        let conditions = Conditions::from_filter(filter);
        let sql = format!(
            "SELECT n.id FROM notes n WHERE n.id IN (SELECT rowid FROM notes_fts WHERE notes_fts MATCH ?){}",
            conditions.and_clause()
        );
        let mut params = vec![SqlValue::Text(expression.to_string())];
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

/// Counts of notes per tag (case variants merged), most used first.
pub fn tag_counts(
    connection: &Connection,
    filter: &NoteFilter,
    offset: usize,
    limit: usize,
) -> rusqlite::Result<Page<Count, usize>> {
    let conditions = Conditions::from_filter(filter);
    let (visible, only, conditions) = spelling_scope(filter, conditions);
    let sql = format!(
        "{visible}SELECT (SELECT tag FROM tags s WHERE s.lower = c.lower{only} GROUP BY tag ORDER BY count(*) DESC, tag LIMIT 1), c.n
         FROM (SELECT t.lower AS lower, count(*) AS n FROM tags t JOIN notes n ON n.id = t.note_id{}
               GROUP BY t.lower ORDER BY n DESC, t.lower LIMIT ? OFFSET ?) c",
        conditions.where_clause()
    );
    counts(connection, &sql, conditions.params, offset, limit)
}

/// Counts of notes per property key (case variants merged), most used first.
pub fn property_key_counts(
    connection: &Connection,
    filter: &NoteFilter,
    offset: usize,
    limit: usize,
) -> rusqlite::Result<Page<Count, usize>> {
    let conditions = Conditions::from_filter(filter);
    let (visible, only, conditions) = spelling_scope(filter, conditions);
    let sql = format!(
        "{visible}SELECT (SELECT key FROM properties s WHERE s.key_lower = c.k{only} GROUP BY key ORDER BY count(*) DESC, key LIMIT 1), c.n
         FROM (SELECT p.key_lower AS k, count(DISTINCT p.note_id) AS n FROM properties p JOIN notes n ON n.id = p.note_id{}
               GROUP BY p.key_lower ORDER BY n DESC, p.key_lower LIMIT ? OFFSET ?) c",
        conditions.where_clause()
    );
    counts(connection, &sql, conditions.params, offset, limit)
}

/// Counts of notes per value of one property (list values unpacked, case variants merged).
pub fn property_value_counts(
    connection: &Connection,
    key: &str,
    filter: &NoteFilter,
    offset: usize,
    limit: usize,
) -> rusqlite::Result<Page<Count, usize>> {
    let mut conditions = Conditions::default();
    conditions.push("p.key_lower = ?", [SqlValue::Text(key.to_lowercase())]);
    conditions.push("p.value IS NOT NULL", []);
    let filtered = Conditions::from_filter(filter);
    conditions.sql.extend(filtered.sql);
    conditions.params.extend(filtered.params);
    let (visible, only, conditions) = spelling_scope(filter, conditions);
    let sql = format!(
        "{visible}SELECT (SELECT value FROM properties s WHERE s.key_lower = c.k AND s.value_lower = c.v{only} GROUP BY value ORDER BY count(*) DESC, value LIMIT 1), c.n
         FROM (SELECT p.key_lower AS k, p.value_lower AS v, count(DISTINCT p.note_id) AS n FROM properties p JOIN notes n ON n.id = p.note_id{}
               GROUP BY p.value_lower ORDER BY n DESC, p.value_lower LIMIT ? OFFSET ?) c",
        conditions.where_clause()
    );
    counts(connection, &sql, conditions.params, offset, limit)
}

fn paths_json(paths: &[String]) -> String {
    serde_json::Value::from(paths.to_vec()).to_string()
}

/// With `only_paths`, the spelling shown for a group of case variants is chosen among the
/// visible notes too, so a hidden note's spelling never shows. Returns the CTE to put in front,
/// the clause for the spelling subquery, and the conditions with the CTE's parameter first.
fn spelling_scope(
    filter: &NoteFilter,
    conditions: Conditions,
) -> (&'static str, &'static str, Conditions) {
    match &filter.only_paths {
        None => ("", "", conditions),
        Some(paths) => {
            let mut scoped = Conditions::default();
            scoped.params.push(SqlValue::Text(paths_json(paths)));
            scoped.sql = conditions.sql;
            scoped.params.extend(conditions.params);
            (
                "WITH visible(path) AS (SELECT value FROM json_each(?)) ",
                " AND s.note_id IN (SELECT id FROM notes WHERE path IN (SELECT path FROM visible))",
                scoped,
            )
        }
    }
}

fn counts(
    connection: &Connection,
    sql: &str,
    params: Vec<SqlValue>,
    offset: usize,
    limit: usize,
) -> rusqlite::Result<Page<Count, usize>> {
    page_by_offset(
        offset,
        limit,
        |at, batch| {
            let mut params = params.clone();
            params.push(SqlValue::Integer(batch as i64));
            params.push(SqlValue::Integer(at as i64));
            let mut statement = connection.prepare_cached(sql)?;
            let rows = statement.query_map(params_from_iter(params), |row| {
                Ok(Count {
                    value: row.get::<_, Option<String>>(0)?.unwrap_or_default(),
                    notes: row.get::<_, i64>(1)?.max(0) as u64,
                })
            })?;
            rows.collect()
        },
        &|_| true,
    )
}

pub fn note_count(connection: &Connection) -> rusqlite::Result<u64> {
    connection.query_row("SELECT count(*) FROM notes", [], |row| {
        Ok(row.get::<_, i64>(0)?.max(0) as u64)
    })
}

/// Every indexed note path matching `filter`, in path order.
pub fn note_paths(connection: &Connection, filter: &NoteFilter) -> rusqlite::Result<Vec<String>> {
    let conditions = Conditions::from_filter(filter);
    let sql = format!(
        "SELECT n.path FROM notes n{} ORDER BY n.path",
        conditions.where_clause()
    );
    let mut statement = connection.prepare(&sql)?;
    let rows = statement.query_map(params_from_iter(conditions.params), |row| row.get(0))?;
    rows.collect()
}

/// Every fact the index holds, one sorted line each, with row ids replaced by paths: two indexes
/// of the same vault dump the same lines however they were built.
pub fn dump(connection: &Connection) -> rusqlite::Result<Vec<String>> {
    connection.execute_batch(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.notes_terms USING fts5vocab(main, notes_fts, instance)",
    )?;
    let mut lines = Vec::new();
    let queries = [
        "SELECT 'note ' || path || ' size=' || size || ' mtime=' || mtime || ' hash=' || hash
            || ' type=' || ifnull(type, '-') || ' created=' || created || ' tags=' || tags
            || ' properties=' || properties FROM notes",
        "SELECT 'tag ' || n.path || ' ' || t.lower || ' ' || t.tag FROM tags t JOIN notes n ON n.id = t.note_id",
        "SELECT 'property ' || n.path || ' ' || p.key || ' ' || p.key_lower || ' = ' || ifnull(p.value, 'NULL')
            || ' / ' || ifnull(p.value_lower, 'NULL') || ' / ' || ifnull(p.number, 'NULL')
            FROM properties p JOIN notes n ON n.id = p.note_id",
        "SELECT 'term ' || n.path || ' ' || v.col || ' ' || v.offset || ' ' || v.term
            FROM temp.notes_terms v JOIN notes n ON n.id = v.doc",
        "SELECT 'task ' || n.path || ':' || t.line || ' depth=' || t.depth || ' parent=' || ifnull(t.parent_line, '-')
            || ' heading=' || ifnull(t.heading_line, '-') || ':' || ifnull(t.heading, '-')
            || ' lane=' || ifnull(t.lane, '-') || '/' || t.lane_complete || ' ' || t.text
            FROM tasks t JOIN notes n ON n.id = t.note_id",
        "SELECT 'task-reading ' || n.path || ':' || t.line || ' symbol=' || quote(t.symbol)
            || ' dates=' || quote(t.due) || ',' || quote(t.scheduled) || ',' || quote(t.start) || ','
            || quote(t.created) || ',' || quote(t.done) || ',' || quote(t.cancelled)
            || ' priority=' || quote(t.priority) || ' recurring=' || quote(t.recurring)
            || ' heading=' || quote(t.heading_lower) || ' tags=' || quote(replace(t.tags, char(10), ' '))
            || ' body=' || quote(t.body)
            FROM tasks t JOIN notes n ON n.id = t.note_id",
        "SELECT 'orphan-task ' || t.note_id || ':' || t.line FROM tasks t
            WHERE t.note_id NOT IN (SELECT id FROM notes)",
        "SELECT 'orphan-term ' || v.doc || ' ' || v.term FROM temp.notes_terms v
            WHERE v.doc NOT IN (SELECT id FROM notes)",
        "SELECT 'file ' || path || ' size=' || size || ' mtime=' || mtime FROM files",
        "SELECT 'file-text ' || f.path || ' ' || length(t.body) || ' ' || substr(t.body, 1, 40)
            FROM files_fts t JOIN files f ON f.id = t.rowid",
        "SELECT 'memory ' || n.path || ':' || m.line || ' ' || m.section || ' ' || m.date || ' ' || m.text
            || ' ' || m.hash FROM memory_entries m JOIN notes n ON n.id = m.note_id",
        "SELECT 'orphan-memory ' || m.note_id || ':' || m.line FROM memory_entries m
            WHERE m.note_id NOT IN (SELECT id FROM notes)",
        "SELECT 'orphan-file-text ' || t.rowid FROM files_fts t
            WHERE t.rowid NOT IN (SELECT id FROM files)",
        "SELECT 'link ' || source || ' #' || seq || ' ' || form || ' embed=' || embed || ' ' || link
            || ' -> ' || target_name || ' | ' || display || ' | ' || original || ' @' || line || ':' || col
            || ' [' || start || ',' || end || ')' FROM links",
        "SELECT 'chunk ' || n.path || ' ' || c.seq || ' ' || c.hash FROM chunks c JOIN notes n ON n.id = c.note_id",
        "SELECT 'orphan-chunk ' || c.note_id || ' ' || c.seq FROM chunks c
            WHERE c.note_id NOT IN (SELECT id FROM notes)",
        "SELECT 'file-chunk ' || f.path || ' ' || c.seq || ' ' || c.hash FROM file_chunks c
            JOIN files f ON f.id = c.file_id",
        "SELECT 'orphan-file-chunk ' || c.file_id || ' ' || c.seq FROM file_chunks c
            WHERE c.file_id NOT IN (SELECT id FROM files)",
    ];
    for sql in queries {
        let mut statement = connection.prepare(sql)?;
        let rows = statement.query_map([], |row| row.get::<_, String>(0))?;
        for row in rows {
            lines.push(row?);
        }
    }
    lines.sort();
    Ok(lines)
}

/// A file (not a note) whose indexed text matched a search.
#[derive(Debug, Clone, PartialEq)]
pub struct FileHit {
    pub path: String,
    pub size: i64,
    pub mtime: i64,
    /// Higher is better (the negated BM25 rank).
    pub score: f64,
    /// The indexed text (at most `file_text::MAX_INDEXED_BYTES`), for the snippet.
    pub body: String,
    /// The hit's own offset in its ranked list: where a page that stops before it resumes.
    pub at: usize,
}

/// The conditions a file search can honour: the note-only ones (tags, properties, type, created)
/// have no meaning for a file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileFilter {
    /// Vault-relative folder; `None` or `""` is the whole vault.
    pub folder: Option<String>,
    pub modified: TimeRange,
}

impl FileFilter {
    /// ` AND rowid IN (...)` restricting a `files_fts` query, with its parameters; nothing when
    /// the filter is empty.
    fn clause(&self) -> (String, Vec<SqlValue>) {
        let conditions = self.conditions();
        if conditions.sql.is_empty() {
            return (String::new(), Vec::new());
        }
        (
            format!(
                " AND rowid IN (SELECT f.id FROM files f{})",
                conditions.where_clause()
            ),
            conditions.params,
        )
    }

    /// The filter as conditions on `files f`.
    pub(super) fn conditions(&self) -> Conditions {
        let mut conditions = Conditions::default();
        let folder = self.folder.as_deref().unwrap_or("");
        if !folder.is_empty() {
            let (low, high) = subtree_range(folder);
            conditions.push(
                "f.path > ? AND f.path < ?",
                [SqlValue::Text(low), SqlValue::Text(high)],
            );
        }
        if let Some(from) = self.modified.from {
            conditions.push(
                "f.mtime >= ?",
                [SqlValue::Integer(from.saturating_mul(1_000_000_000))],
            );
        }
        if let Some(until) = self.modified.until {
            conditions.push(
                "f.mtime < ?",
                [SqlValue::Integer(until.saturating_mul(1_000_000_000))],
            );
        }
        conditions
    }
}

/// Ranked full-text search over the files' indexed text, with `expression` (one of a
/// `MatchQuery`'s two FTS5 expressions) and offset paging like `search`. `keep` sees vault paths.
pub fn search_files(
    connection: &Connection,
    expression: &str,
    filter: &FileFilter,
    offset: usize,
    limit: usize,
    keep: &dyn Fn(&str) -> bool,
) -> rusqlite::Result<Page<FileHit, usize>> {
    let (filtered, filter_params) = filter.clause();
    let sql = format!(
        "SELECT f.path, f.size, f.mtime, r.rank, r.body FROM (
             SELECT rowid AS id, bm25(files_fts, {FILE_BM25_WEIGHTS}) AS rank, body FROM files_fts
             WHERE files_fts MATCH ?{filtered} ORDER BY 2 LIMIT ? OFFSET ?
         ) r JOIN files f ON f.id = r.id ORDER BY r.rank"
    );
    let page = page_by_offset_at(
        offset,
        limit,
        |at, batch| {
            let mut params = vec![SqlValue::Text(expression.to_owned())];
            params.extend(filter_params.iter().cloned());
            params.push(SqlValue::Integer(batch as i64));
            params.push(SqlValue::Integer(at as i64));
            let mut statement = connection.prepare_cached(&sql)?;
            let rows = statement.query_map(params_from_iter(params), |row| {
                Ok(FileHit {
                    path: row.get(0)?,
                    size: row.get(1)?,
                    mtime: row.get(2)?,
                    score: -row.get::<_, f64>(3)?,
                    body: row.get(4)?,
                    at: 0,
                })
            })?;
            rows.collect()
        },
        &|hit: &FileHit| keep(&hit.path),
    )?;
    Ok(Page {
        rows: page
            .rows
            .into_iter()
            .map(|(at, hit)| FileHit { at, ..hit })
            .collect(),
        next: page.next,
    })
}

/// `search_files` ranked with statistics over the files `keep` admits only, like `search_scoped`
/// for notes: a restricted caller's scores, order and offsets never depend on a file it cannot
/// see. `expression` is `query.all` or `query.any`.
pub fn search_files_scoped(
    connection: &Connection,
    query: &MatchQuery,
    expression: &str,
    filter: &FileFilter,
    offset: usize,
    limit: usize,
    keep: &dyn Fn(&str) -> bool,
) -> rusqlite::Result<Page<FileHit, usize>> {
    let mut statement = connection.prepare_cached("SELECT id, path, size, mtime FROM files")?;
    let rows = statement
        .query_map([], |row| {
            Ok((
                row.get::<_, i64>(0)?,
                (
                    row.get::<_, String>(1)?,
                    row.get::<_, i64>(2)?,
                    row.get::<_, i64>(3)?,
                ),
            ))
        })?
        .filter(|row| row.as_ref().map_or(true, |(_, (path, _, _))| keep(path)))
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let corpus = ScopedCorpus::load(connection, &FtsTable::files(), query, rows)?;
    let (filtered, filter_params) = filter.clause();
    let mut params = vec![SqlValue::Text(expression.to_owned())];
    params.extend(filter_params);
    let mut statement = connection.prepare_cached(&format!(
        "SELECT rowid FROM files_fts WHERE files_fts MATCH ?{filtered}"
    ))?;
    let ids: Vec<i64> = statement
        .query_map(params_from_iter(params), |row| row.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let mut ranked: Vec<(i64, &(String, i64, i64), f64)> = ids
        .into_iter()
        .filter_map(|id| {
            let (row, score) = corpus.scored(id)?;
            Some((id, row, score))
        })
        .collect();
    ranked.sort_by(|a, b| b.2.total_cmp(&a.2).then_with(|| a.1.0.cmp(&b.1.0)));
    let more = ranked.len() > offset.saturating_add(limit);
    let mut body = connection.prepare_cached("SELECT body FROM files_fts WHERE rowid = ?")?;
    let rows = ranked
        .into_iter()
        .enumerate()
        .skip(offset)
        .take(limit)
        .map(|(at, (id, (path, size, mtime), score))| {
            Ok(FileHit {
                path: path.clone(),
                size: *size,
                mtime: *mtime,
                score,
                body: body.query_row([id], |row| row.get(0))?,
                at,
            })
        })
        .collect::<rusqlite::Result<_>>()?;
    Ok(Page {
        rows,
        next: more.then_some(offset + limit),
    })
}

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
                |row| {
                    Ok(MemoryHit {
                        path: row.get(0)?,
                        section: row.get(1)?,
                        date: row.get(2)?,
                        text: row.get(3)?,
                        line: row.get::<_, i64>(4)? as usize,
                        hash: row.get(5)?,
                        score: -row.get::<_, f64>(6)?,
                    })
                },
            )?;
            rows.collect()
        },
        &|hit: &MemoryHit| keep(&hit.path),
    )?;
    Ok(page.rows)
}
