//! Task queries: the checkbox list items the index holds, with their note's path and modification
//! time, for `ops` to read under the plugin settings of the moment and to filter, sort and page.
//! Which items are tasks (global filter) and what their statuses mean are decided by the caller,
//! so a change to the Tasks plugin settings never needs a re-index.

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, params_from_iter};

use super::writer::subtree_range;

/// One checkbox list item of a note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskRow {
    pub path: String,
    /// The note's modification time, nanoseconds since the Unix epoch.
    pub mtime_ns: i64,
    /// 1-based.
    pub line: usize,
    /// The whole line as written.
    pub text: String,
    pub heading: Option<String>,
    pub heading_line: Option<usize>,
    pub depth: usize,
    pub parent_line: Option<usize>,
    pub lane: Option<String>,
    pub lane_complete: bool,
}

/// Which notes' items to read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskScope {
    /// Only notes in this folder and below (`None` or empty: the whole vault).
    pub folder: Option<String>,
    /// Only this note.
    pub path: Option<String>,
}

fn to_usize(value: Option<i64>) -> Option<usize> {
    value.and_then(|value| usize::try_from(value).ok())
}

/// The items of the notes in `scope`, by path then line.
pub fn task_rows(connection: &Connection, scope: &TaskScope) -> rusqlite::Result<Vec<TaskRow>> {
    let mut conditions = Vec::new();
    let mut params: Vec<SqlValue> = Vec::new();
    if let Some(folder) = scope.folder.as_deref().filter(|folder| !folder.is_empty()) {
        let (low, high) = subtree_range(folder);
        conditions.push("n.path > ? AND n.path < ?");
        params.push(SqlValue::Text(low));
        params.push(SqlValue::Text(high));
    }
    if let Some(path) = &scope.path {
        conditions.push("n.path = ?");
        params.push(SqlValue::Text(path.clone()));
    }
    let where_clause = if conditions.is_empty() {
        String::new()
    } else {
        format!(" WHERE {}", conditions.join(" AND "))
    };
    let sql = format!(
        "SELECT n.path, n.mtime, t.line, t.text, t.heading, t.heading_line, t.depth, t.parent_line,
                t.lane, t.lane_complete
         FROM tasks t JOIN notes n ON n.id = t.note_id{where_clause}
         ORDER BY n.path, t.line"
    );
    let mut statement = connection.prepare(&sql)?;
    let rows = statement.query_map(params_from_iter(params), |row| {
        Ok(TaskRow {
            path: row.get(0)?,
            mtime_ns: row.get(1)?,
            line: to_usize(row.get(2)?).unwrap_or(0),
            text: row.get(3)?,
            heading: row.get(4)?,
            heading_line: to_usize(row.get(5)?),
            depth: to_usize(row.get(6)?).unwrap_or(0),
            parent_line: to_usize(row.get(7)?),
            lane: row.get(8)?,
            lane_complete: row.get(9)?,
        })
    })?;
    rows.collect()
}
