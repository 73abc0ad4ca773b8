//! Full-text search over the files that are not notes (their extracted text), ranked by FTS5 or,
//! for a restricted caller, over the files it may see.

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, params_from_iter};

use super::conditions::Conditions;
use super::paging::page_by_offset_at;
use super::scoped::{FtsTable, ScopedCorpus};
use super::{Page, TimeRange};
use crate::index::query_text::MatchQuery;
use crate::index::schema::subtree_range;

/// BM25 weights of the files' FTS columns: file name, text. Whole numbers, like the notes', so a
/// scoped ranking recovers frequencies exactly.
pub(super) const FILE_BM25_WEIGHTS: &str = "5.0, 1.0";

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
    pub(in crate::index) fn conditions(&self) -> Conditions {
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
