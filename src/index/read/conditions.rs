//! A note filter as SQL conditions with bound parameters, in order: client text is only ever a
//! parameter.

use rusqlite::types::Value as SqlValue;

use super::{NoteFilter, PropertyValue};
use crate::index::schema::subtree_range;

/// SQL conditions and their parameters, in order.
#[derive(Default)]
pub(in crate::index) struct Conditions {
    pub(in crate::index) sql: Vec<String>,
    pub(in crate::index) params: Vec<SqlValue>,
}

impl Conditions {
    pub(super) fn push(&mut self, sql: &str, params: impl IntoIterator<Item = SqlValue>) {
        self.sql.push(sql.to_string());
        self.params.extend(params);
    }

    pub(in crate::index) fn from_filter(filter: &NoteFilter) -> Conditions {
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
    pub(in crate::index) fn and_clause(&self) -> String {
        self.sql.iter().map(|c| format!(" AND {c}")).collect()
    }

    /// ` WHERE a AND b`, or nothing.
    pub(in crate::index) fn where_clause(&self) -> String {
        if self.sql.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", self.sql.join(" AND "))
        }
    }
}

pub(super) fn paths_json(paths: &[String]) -> String {
    serde_json::Value::from(paths.to_vec()).to_string()
}
