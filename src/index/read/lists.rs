//! Note lists: by path after a keyset cursor, newest first by offset, the count and every path
//! matching a filter.

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, params_from_iter};

use super::conditions::Conditions;
use super::paging::{page_by_offset_at, page_by_path};
use super::{NOTE_COLUMNS, NoteFilter, NoteRow, Page, RecentOrder, note_row};

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
pub(super) fn recent_page(
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
