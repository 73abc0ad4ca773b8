//! Counts of notes per tag, property key and property value, case variants merged under the
//! spelling most notes use (among the visible notes when the caller is restricted).
//!
//! A caller who sees every note, asking for the whole vault or a folder, is answered from the
//! count tables the writer keeps per folder (`schema::COUNT_TRIGGERS`): a sum over folders, not a
//! count over notes. A restricted caller is answered from them too, folder by folder as the ACL
//! judges it (`judged.rs`). Any other filter is counted over the notes themselves.

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, params_from_iter};

use super::conditions::{Conditions, paths_json};
use super::judged::{self, Judge};
use super::paging::page_by_offset;
use super::{Count, NoteFilter, Page, TimeRange};
use crate::index::schema::subtree_range;

/// The notes counted: those a filter keeps, or those a restricted caller's ACL shows by folder.
pub enum CountScope<'a> {
    Notes(&'a NoteFilter),
    Judged {
        /// Below this folder (`None`: the whole vault).
        folder: Option<&'a str>,
        judge: Judge<'a>,
    },
}

/// Counts of notes per tag (case variants merged), most used first.
pub fn tag_counts(
    connection: &Connection,
    scope: &CountScope<'_>,
    offset: usize,
    limit: usize,
) -> rusqlite::Result<Page<Count, usize>> {
    by_scope(
        connection,
        scope,
        |filter| filtered_tag_counts(connection, filter, offset, limit),
        |shown| judged::tag_counts(connection, shown, offset, limit),
    )
}

/// Counts of notes per property key (case variants merged), most used first.
pub fn property_key_counts(
    connection: &Connection,
    scope: &CountScope<'_>,
    offset: usize,
    limit: usize,
) -> rusqlite::Result<Page<Count, usize>> {
    by_scope(
        connection,
        scope,
        |filter| filtered_key_counts(connection, filter, offset, limit),
        |shown| judged::property_key_counts(connection, shown, offset, limit),
    )
}

/// Counts of notes per value of one property (list values unpacked, case variants merged).
pub fn property_value_counts(
    connection: &Connection,
    key: &str,
    scope: &CountScope<'_>,
    offset: usize,
    limit: usize,
) -> rusqlite::Result<Page<Count, usize>> {
    by_scope(
        connection,
        scope,
        |filter| filtered_value_counts(connection, key, filter, offset, limit),
        |shown| judged::property_value_counts(connection, key, shown, offset, limit),
    )
}

/// Counts `scope` with `filtered` (a filter's notes) or `shown` (what the ACL's judgement shows).
fn by_scope<T>(
    connection: &Connection,
    scope: &CountScope<'_>,
    filtered: impl FnOnce(&NoteFilter) -> rusqlite::Result<T>,
    shown: impl FnOnce(&judged::Judged) -> rusqlite::Result<T>,
) -> rusqlite::Result<T> {
    match scope {
        CountScope::Notes(filter) => filtered(filter),
        CountScope::Judged { folder, judge } => shown(&judged::judge(connection, *folder, judge)?),
    }
}

/// Notes per folder (with its trailing `/`, `""` the root), in folder order.
pub fn folder_counts(
    connection: &Connection,
    scope: &CountScope<'_>,
) -> rusqlite::Result<Vec<(String, u64)>> {
    let (folder, judge) = match scope {
        CountScope::Judged { folder, judge } => (*folder, judge),
        CountScope::Notes(filter) => {
            // Every note below the folder: the count table as it is.
            let everything = Judge {
                folder: &|_| Some(true),
                note: &|_| true,
            };
            let shown = judged::judge(connection, filter.folder.as_deref(), &everything)?;
            return judged::folder_counts(connection, &shown);
        }
    };
    let shown = judged::judge(connection, folder, judge)?;
    judged::folder_counts(connection, &shown)
}

fn filtered_tag_counts(
    connection: &Connection,
    filter: &NoteFilter,
    offset: usize,
    limit: usize,
) -> rusqlite::Result<Page<Count, usize>> {
    if let Some(scope) = kept_counts(filter) {
        let sql = format!(
            "SELECT (SELECT tag FROM tag_counts s WHERE s.lower = c.lower GROUP BY tag ORDER BY sum(notes) DESC, tag LIMIT 1), c.n
             FROM (SELECT lower, sum(notes) AS n FROM tag_counts{} GROUP BY lower ORDER BY n DESC, lower LIMIT ? OFFSET ?) c",
            scope.where_clause()
        );
        return counts(connection, &sql, scope.params, offset, limit);
    }
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

fn filtered_key_counts(
    connection: &Connection,
    filter: &NoteFilter,
    offset: usize,
    limit: usize,
) -> rusqlite::Result<Page<Count, usize>> {
    if let Some(scope) = kept_counts(filter) {
        let sql = format!(
            "SELECT (SELECT key FROM key_spellings s WHERE s.key_lower = c.k GROUP BY key ORDER BY sum(rows) DESC, key LIMIT 1), c.n
             FROM (SELECT key_lower AS k, sum(notes) AS n FROM key_notes{} GROUP BY key_lower ORDER BY n DESC, key_lower LIMIT ? OFFSET ?) c",
            scope.where_clause()
        );
        return counts(connection, &sql, scope.params, offset, limit);
    }
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

fn filtered_value_counts(
    connection: &Connection,
    key: &str,
    filter: &NoteFilter,
    offset: usize,
    limit: usize,
) -> rusqlite::Result<Page<Count, usize>> {
    if let Some(folders) = kept_counts(filter) {
        let mut scope = Conditions::default();
        scope.push("key_lower = ?", [SqlValue::Text(key.to_lowercase())]);
        scope.sql.extend(folders.sql);
        scope.params.extend(folders.params);
        let sql = format!(
            "SELECT (SELECT value FROM value_spellings s WHERE s.key_lower = c.k AND s.value_lower = c.v GROUP BY value ORDER BY sum(rows) DESC, value LIMIT 1), c.n
             FROM (SELECT key_lower AS k, value_lower AS v, sum(notes) AS n FROM value_notes{} GROUP BY value_lower ORDER BY n DESC, value_lower LIMIT ? OFFSET ?) c",
            scope.where_clause()
        );
        return counts(connection, &sql, scope.params, offset, limit);
    }
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

/// The folder condition over the count tables when `filter` asks for nothing they do not keep:
/// every note (no `only_paths`), in the whole vault or below one folder.
fn kept_counts(filter: &NoteFilter) -> Option<Conditions> {
    let NoteFilter {
        folder,
        direct_only: false,
        tags,
        properties,
        note_type: None,
        created,
        modified,
        only_paths: None,
    } = filter
    else {
        return None;
    };
    if !tags.is_empty() || !properties.is_empty() || *created != TimeRange::default() {
        return None;
    }
    if *modified != TimeRange::default() {
        return None;
    }
    let mut scope = Conditions::default();
    let folder = folder.as_deref().unwrap_or("");
    if !folder.is_empty() {
        // The tables keep each note's folder with its trailing slash: `F/` and everything below.
        let (low, high) = subtree_range(folder);
        scope.push(
            "folder >= ? AND folder < ?",
            [SqlValue::Text(low), SqlValue::Text(high)],
        );
    }
    Some(scope)
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

pub(super) fn counts(
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
