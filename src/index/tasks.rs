//! Task queries: the checkbox list items the index holds, with their note's path and modification
//! time, and a listing that filters, sorts and pages them in SQL over each line's stored,
//! plugin-independent reading (`TaskFacts`). Which items are tasks (global filter) and what their
//! statuses mean are decided by the caller and passed into the query, so a change to the Tasks
//! plugin settings never needs a re-index.

use std::collections::HashMap;

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, params_from_iter};

use super::schema::subtree_range;
use crate::markdown::tasks::{TaskDate, TaskFormat, TaskSite, parse_line_fields};

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

/// The plugin-independent reading of one checkbox line, stored beside it so that a listing filters,
/// sorts and pages in SQL. Everything the plugin settings change (which status type a symbol has,
/// whether the global filter admits the line) is left to the query, which receives the settings of
/// the moment; `symbol` is `None` when the line is no task under any settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskFacts {
    pub heading_lower: Option<String>,
    pub symbol: Option<String>,
    /// The text after the checkbox, where the global filter is looked for.
    pub body: Option<String>,
    /// Due, scheduled, start, created, done and cancelled as `YYYY-MM-DD` (which sorts as text);
    /// `None` when missing or not a real date, which never matches a date condition.
    pub dates: [Option<String>; 6],
    /// The plugin's sort key, 0 (highest) to 5 (lowest), 3 for none.
    pub priority: Option<i64>,
    pub recurring: bool,
    /// Every tag of the line, normalised (no `#`, lower case), each between two `TAG_SEPARATOR`s.
    pub tags: Option<String>,
}

/// Tags never hold a line break, so it can delimit them in the `tags` column.
pub const TAG_SEPARATOR: char = '\n';

impl TaskFacts {
    /// Reads a site in both field formats, as the task tools always do (`TaskFormat::Both`).
    pub fn read(site: &TaskSite) -> TaskFacts {
        let heading_lower = site.heading.as_ref().map(|heading| heading.to_lowercase());
        let Some(parsed) = parse_line_fields(&site.text, TaskFormat::Both) else {
            return TaskFacts {
                heading_lower,
                ..TaskFacts::default()
            };
        };
        let task = parsed.task();
        let valid = |date: &Option<TaskDate>| {
            date.as_ref()
                .and_then(TaskDate::valid)
                .map(crate::markdown::tasks::format_date)
        };
        let mut tags = String::from(TAG_SEPARATOR);
        for tag in &task.tags {
            tags.push_str(&normal_tag(tag));
            tags.push(TAG_SEPARATOR);
        }
        TaskFacts {
            heading_lower,
            symbol: Some(task.status.symbol.clone()),
            body: Some(parsed.body().to_owned()),
            dates: [
                valid(&task.due),
                valid(&task.scheduled),
                valid(&task.start),
                valid(&task.created),
                valid(&task.done),
                valid(&task.cancelled),
            ],
            priority: Some(i64::from(task.priority.number())),
            recurring: task.recurrence.is_some(),
            tags: Some(tags),
        }
    }
}

/// A tag as listings compare it: without `#`, in lower case.
pub fn normal_tag(tag: &str) -> String {
    tag.trim().trim_start_matches('#').to_lowercase()
}

/// The dates of `TaskFacts::dates` as columns, in that order.
const DATE_COLUMNS: [&str; 6] = [
    "t.due",
    "t.scheduled",
    "t.start",
    "t.created",
    "t.done",
    "t.cancelled",
];

/// Bounds on one date column (`YYYY-MM-DD`); every bound given must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskDateRange {
    pub before: Option<String>,
    pub on: Option<String>,
    pub after: Option<String>,
}

/// How a task listing is ordered; ties always fall back to path, then line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskOrder {
    Position,
    /// Newest note first.
    Modified,
    /// The first valid date of these columns (indexes into `TaskFacts::dates`), tasks without any
    /// last, then priority.
    Dates(Vec<usize>),
    /// Priority, then the first valid date of these columns.
    Priority(Vec<usize>),
}

/// A task listing's filters, already resolved against the plugin settings of the moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskQuery {
    pub scope: TaskScope,
    /// Lines whose body lacks this text are no tasks (empty: no global filter).
    pub global_filter: String,
    /// `Some((true, symbols))`: only these status symbols; `Some((false, symbols))`: any symbol but
    /// these (the settings' statuses of unwanted types, when unknown symbols count as wanted).
    pub symbols: Option<(bool, Vec<String>)>,
    pub dates: [Option<TaskDateRange>; 6],
    /// Priority sort keys; empty means all.
    pub priorities: Vec<u8>,
    /// Normalised tags, any of which must be on the line (nested tags match unless `exact_tags`).
    pub tags: Vec<String>,
    pub exact_tags: bool,
    /// Lower-case headings, any of which must be the task's.
    pub headings: Vec<String>,
    /// Only tasks whose parent list item is not a task under the same global filter.
    pub top_level_only: bool,
    pub order: TaskOrder,
}

fn placeholders(count: usize) -> String {
    vec!["?"; count].join(", ")
}

/// A page of a task listing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskPage {
    /// `(path, line)` of each task, in the listing's order.
    pub tasks: Vec<(String, usize)>,
    /// Whether more tasks follow the page.
    pub more: bool,
    /// Every checkbox row of each note on the page, by path then line.
    pub rows: HashMap<String, Vec<TaskRow>>,
}

/// The `(path, line)` of the tasks matching `query` in its order: the first `limit` after skipping
/// `offset` of those `shows` accepts (the caller's access check, made once per note), and whether
/// any further one exists. Rows are read lazily, so a first page stops early.
pub fn task_page(
    connection: &Connection,
    query: &TaskQuery,
    offset: usize,
    limit: usize,
    shows: &mut dyn FnMut(&str) -> bool,
) -> rusqlite::Result<(Vec<(String, usize)>, bool)> {
    let mut filter = TaskFilter {
        conditions: vec!["t.symbol IS NOT NULL".to_owned()],
        params: Vec::new(),
    };
    filter.where_scope_and_text(query);
    filter.where_status_dates_and_priority(query);
    filter.where_tags(query);
    filter.where_headings_and_nesting(query);
    let (from, order) = source_and_order(query);
    let sql = format!(
        "SELECT n.path, t.line FROM {from} WHERE {} ORDER BY {order} LIMIT ?",
        filter.conditions.join(" AND ")
    );
    let mut statement = connection.prepare_cached(&sql)?;
    visible_page(&mut statement, &filter.params, offset, limit, shows)
}

/// A listing's SQL conditions and their parameters, in the order of the placeholders.
struct TaskFilter {
    conditions: Vec<String>,
    params: Vec<SqlValue>,
}

impl TaskFilter {
    /// The folder or note the listing is limited to, and the global filter's text.
    fn where_scope_and_text(&mut self, query: &TaskQuery) {
        let TaskFilter { conditions, params } = self;
        if let Some(folder) = query
            .scope
            .folder
            .as_deref()
            .filter(|folder| !folder.is_empty())
        {
            let (low, high) = subtree_range(folder);
            conditions.push("n.path > ? AND n.path < ?".to_owned());
            params.push(SqlValue::Text(low));
            params.push(SqlValue::Text(high));
        }
        if let Some(path) = &query.scope.path {
            conditions.push("n.path = ?".to_owned());
            params.push(SqlValue::Text(path.clone()));
        }
        if !query.global_filter.is_empty() {
            // `instr` is a plain substring test, as `str::contains` is.
            conditions.push("instr(t.body, ?) > 0".to_owned());
            params.push(SqlValue::Text(query.global_filter.clone()));
        }
    }

    /// Wanted or unwanted status symbols, date ranges and priorities.
    fn where_status_dates_and_priority(&mut self, query: &TaskQuery) {
        let TaskFilter { conditions, params } = self;
        if let Some((wanted, symbols)) = &query.symbols {
            let list = if symbols.is_empty() {
                // An empty list is never matched, and "any symbol but none" is every symbol.
                if *wanted { "0" } else { "1" }.to_owned()
            } else {
                format!(
                    "t.symbol {} ({})",
                    if *wanted { "IN" } else { "NOT IN" },
                    placeholders(symbols.len())
                )
            };
            conditions.push(list);
            params.extend(symbols.iter().cloned().map(SqlValue::Text));
        }
        for (range, column) in query.dates.iter().zip(DATE_COLUMNS) {
            let Some(range) = range else { continue };
            conditions.push(format!("{column} IS NOT NULL"));
            for (bound, operator) in [(&range.before, "<"), (&range.on, "="), (&range.after, ">")] {
                if let Some(bound) = bound {
                    conditions.push(format!("{column} {operator} ?"));
                    params.push(SqlValue::Text(bound.clone()));
                }
            }
        }
        if !query.priorities.is_empty() {
            conditions.push(format!(
                "t.priority IN ({})",
                placeholders(query.priorities.len())
            ));
            params.extend(
                query
                    .priorities
                    .iter()
                    .map(|priority| SqlValue::Integer(i64::from(*priority))),
            );
        }
    }

    /// Any of the wanted tags, nested ones too unless `exact_tags`.
    fn where_tags(&mut self, query: &TaskQuery) {
        let TaskFilter { conditions, params } = self;
        if !query.tags.is_empty() {
            let mut any = Vec::new();
            for tag in &query.tags {
                // A wanted tag holding the separator matches no real tag.
                if tag.contains(TAG_SEPARATOR) {
                    continue;
                }
                any.push("instr(t.tags, ?) > 0".to_owned());
                params.push(SqlValue::Text(format!(
                    "{TAG_SEPARATOR}{tag}{TAG_SEPARATOR}"
                )));
                if !query.exact_tags {
                    any.push("instr(t.tags, ?) > 0".to_owned());
                    params.push(SqlValue::Text(format!("{TAG_SEPARATOR}{tag}/")));
                }
            }
            if any.is_empty() {
                any.push("0".to_owned());
            }
            conditions.push(format!("({})", any.join(" OR ")));
        }
    }

    /// The task's heading, and whether its parent list item may be a task.
    fn where_headings_and_nesting(&mut self, query: &TaskQuery) {
        let TaskFilter { conditions, params } = self;
        if !query.headings.is_empty() {
            conditions.push(format!(
                "t.heading_lower IN ({})",
                placeholders(query.headings.len())
            ));
            params.extend(query.headings.iter().cloned().map(SqlValue::Text));
        }
        if query.top_level_only {
            let included = if query.global_filter.is_empty() {
                ""
            } else {
                params.push(SqlValue::Text(query.global_filter.clone()));
                " AND instr(p.body, ?) > 0"
            };
            conditions.push(format!(
                "NOT EXISTS (SELECT 1 FROM tasks p WHERE p.note_id = t.note_id AND p.line = t.parent_line
                         AND p.symbol IS NOT NULL{included})"
            ));
        }
    }
}

/// The first of `columns`' dates a task has, as SQL.
fn date_cascade(columns: &[usize]) -> String {
    let names: Vec<&str> = columns
        .iter()
        .filter_map(|index| DATE_COLUMNS.get(*index).copied())
        .collect();
    match names.len() {
        0 => "NULL".to_owned(),
        1 => names.join(""),
        _ => format!("coalesce({})", names.join(", ")),
    }
}

/// The tables to read (with the index to walk, when one serves the order) and the `ORDER BY`.
fn source_and_order(query: &TaskQuery) -> (&'static str, String) {
    let order = match &query.order {
        TaskOrder::Position => "n.path, t.line".to_owned(),
        TaskOrder::Modified => "n.mtime DESC, n.path, t.line".to_owned(),
        TaskOrder::Dates(columns) => {
            let date = date_cascade(columns);
            format!("({date}) IS NULL, {date}, t.priority, n.path, t.line")
        }
        TaskOrder::Priority(columns) => {
            let date = date_cascade(columns);
            format!("t.priority, ({date}) IS NULL, {date}, n.path, t.line")
        }
    };
    // The due order's first page can be read from `tasks_by_due` in order, stopping after the
    // page, instead of sorting every matching row: its sort key is one text (dates are ten
    // characters, the priority one digit, and 'z' sorts after every date) and the index also holds
    // the status and dates, so status, date and priority conditions need no table lookups. Other
    // conditions would look up each row the walk passes, which for a rare match costs more than
    // the sort, so they keep SQLite's own plan.
    let walk_due_index = query.order == TaskOrder::Dates(vec![0, 1, 2])
        && query.scope.folder.as_deref().is_none_or(str::is_empty)
        && query.scope.path.is_none()
        && query.global_filter.is_empty()
        && query.tags.is_empty()
        && query.headings.is_empty()
        && !query.top_level_only;
    if walk_due_index {
        (
            "tasks t INDEXED BY tasks_by_due CROSS JOIN notes n ON n.id = t.note_id",
            "coalesce(t.due, t.scheduled, t.start, 'z') || t.priority, n.path, t.line".to_owned(),
        )
    } else {
        ("tasks t JOIN notes n ON n.id = t.note_id", order)
    }
}

/// Runs the listing and keeps the rows `shows` accepts: the page after `offset` of them, and
/// whether more follow.
fn visible_page(
    statement: &mut rusqlite::CachedStatement<'_>,
    params: &[SqlValue],
    offset: usize,
    limit: usize,
    shows: &mut dyn FnMut(&str) -> bool,
) -> rusqlite::Result<(Vec<(String, usize)>, bool)> {
    // A LIMIT lets SQLite keep only the top rows while it sorts. It is exact when every note is
    // visible; when the access check hid some, the query runs again with a larger LIMIT.
    let wanted = offset.saturating_add(limit).saturating_add(1);
    let mut sql_limit = wanted;
    let mut visibility: HashMap<String, bool> = HashMap::new();
    loop {
        let mut rows_params = params.to_vec();
        rows_params.push(SqlValue::Integer(
            i64::try_from(sql_limit).unwrap_or(i64::MAX),
        ));
        let mut rows = statement.query(params_from_iter(rows_params))?;
        let mut page = Vec::new();
        let (mut read, mut skipped) = (0usize, 0usize);
        while let Some(row) = rows.next()? {
            read += 1;
            let path: String = row.get(0)?;
            let visible = match visibility.get(&path) {
                Some(visible) => *visible,
                None => {
                    let visible = shows(&path);
                    visibility.insert(path.clone(), visible);
                    visible
                }
            };
            if !visible {
                continue;
            }
            if skipped < offset {
                skipped += 1;
                continue;
            }
            if page.len() == limit {
                return Ok((page, true));
            }
            let line = to_usize(row.get(1)?).unwrap_or(0);
            page.push((path, line));
        }
        if read < sql_limit {
            // Every matching row was read.
            return Ok((page, false));
        }
        sql_limit = sql_limit.saturating_mul(4);
    }
}
