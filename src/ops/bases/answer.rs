//! A view's result as the tools answer it: one page of rows, each column's value as JSON (dates
//! as ISO 8601 text, links as `{"display", "path"}` with the path they resolve to for this caller),
//! the groups with a row on the page, and the summaries. A cell that failed answers
//! `{"error": ...}` and the rest stands.

use serde_json::{Map, Value as Json, json};

use crate::bases::{Cell, Environment, Summary, Value, ViewResult, to_json};
use crate::ops::paging::Cursor;

use super::types::{BaseAnswer, BaseGroup, BaseRow, BaseSummary};

/// How deep lists and objects inside a cell are written; deeper parts answer null.
const MAX_DEPTH: usize = 32;

/// The page of `result`, whose rows are those from `offset`, at most `limit` of them.
pub(super) fn answer(
    result: ViewResult,
    kind: String,
    offset: usize,
    limit: usize,
    env: &dyn Environment,
) -> BaseAnswer {
    let summaries = (!result.summaries.is_empty())
        .then(|| result.summaries.iter().map(|s| summary(s, env)).collect());
    let groups = (!result.groups.is_empty()).then(|| {
        result
            .groups
            .iter()
            .map(|group| BaseGroup {
                key: wire(&group.key, env, 0),
                rows: group
                    .rows
                    .iter()
                    .filter_map(|at| result.rows.get(*at).map(|row| row.path.clone()))
                    .collect(),
                summaries: group.summaries.iter().map(|s| summary(s, env)).collect(),
            })
            .collect()
    });
    let columns = result.columns.iter().map(|c| c.id.clone()).collect();
    let next_cursor = (offset.saturating_add(limit) < result.total)
        .then(|| Cursor::Offset(offset.saturating_add(limit)).encode());
    let rows = result
        .rows
        .into_iter()
        .map(|row| BaseRow {
            path: row.path,
            values: row
                .cells
                .iter()
                .map(|(id, value)| (id.clone(), cell(value, env)))
                .collect::<Map<String, Json>>(),
        })
        .collect();
    BaseAnswer {
        view: result.view,
        kind,
        columns,
        rows,
        groups,
        summaries,
        total: result.total,
        next_cursor,
    }
}

fn summary(summary: &Summary, env: &dyn Environment) -> BaseSummary {
    BaseSummary {
        column: summary.column.clone(),
        name: summary.name.clone(),
        value: cell(&summary.value, env),
    }
}

fn cell(value: &Cell, env: &dyn Environment) -> Json {
    match value {
        Ok(value) => wire(value, env, 0),
        Err(error) => json!({ "error": error.to_string() }),
    }
}

/// A value as the tools answer it.
pub(super) fn wire(value: &Value, env: &dyn Environment, depth: usize) -> Json {
    match value {
        Value::Date(date) if date.has_time => {
            Json::String(date.at.strftime("%Y-%m-%dT%H:%M:%S").to_string())
        }
        Value::Date(date) => Json::String(date.at.date().strftime("%Y-%m-%d").to_string()),
        Value::Link(link) => json!({
            "display": link.shown(),
            "path": env.resolve(link.file_part(), &link.from),
        }),
        Value::File(path) => json!({
            // As Obsidian shows a file: its name, without `.md` for a note.
            "display": path.rsplit('/').next().unwrap_or(path).trim_end_matches(".md"),
            "path": env.file(path).map(|facts| facts.path.clone()),
        }),
        Value::List(_) | Value::Object(_) if depth >= MAX_DEPTH => Json::Null,
        Value::List(items) => Json::Array(items.iter().map(|v| wire(v, env, depth + 1)).collect()),
        Value::Object(entries) => Json::Object(
            entries
                .iter()
                .map(|(key, v)| (key.clone(), wire(v, env, depth + 1)))
                .collect(),
        ),
        other => to_json(other),
    }
}
