//! Counts of notes per tag, property key and property value, case variants merged under the
//! spelling most notes use (among the visible notes when the caller is restricted).

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, params_from_iter};

use super::conditions::{Conditions, paths_json};
use super::paging::page_by_offset;
use super::{Count, NoteFilter, Page};

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
