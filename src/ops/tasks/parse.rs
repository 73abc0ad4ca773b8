//! Listing and write arguments read into the plugin's terms: status types, priorities, tags,
//! ids, and a task's dates as written.

use crate::markdown::tasks::{Priority, StatusType, TaskDate};
use crate::ops::error::OpsError;

pub(super) fn status_type_filter(raw: &[String]) -> Result<Vec<StatusType>, OpsError> {
    raw.iter()
        .map(|value| {
            StatusType::parse(&value.trim().to_ascii_uppercase()).ok_or_else(|| {
                OpsError::invalid_argument(format!(
                    "status {value:?} is not a status type; use TODO, IN_PROGRESS, DONE, CANCELLED or NON_TASK"
                ))
            })
        })
        .collect()
}

pub(super) fn priority_filter(raw: &[String]) -> Result<Vec<Priority>, OpsError> {
    raw.iter().map(|value| parse_priority(value)).collect()
}

pub(super) fn parse_priority(value: &str) -> Result<Priority, OpsError> {
    Priority::parse(value).ok_or_else(|| {
        OpsError::invalid_argument(format!(
            "priority {value:?} is not known; use highest, high, medium, normal, low or lowest"
        ))
    })
}

/// A tag as listings compare it; the index stores line tags in this form.
pub(super) fn normal_tag(tag: &str) -> String {
    crate::index::normal_task_tag(tag)
}

pub(super) fn priority_word(priority: Priority) -> String {
    priority.name().to_ascii_lowercase()
}

pub(super) fn date_text(date: &Option<TaskDate>) -> Option<String> {
    date.as_ref().map(TaskDate::as_written)
}

pub(super) fn check_id(name: &str, raw: &str) -> Result<String, OpsError> {
    let id = raw.trim();
    if !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        Ok(id.to_owned())
    } else {
        Err(OpsError::invalid_argument(format!(
            "{name} {raw:?} is not a task id; use letters, digits, '-' and '_' only"
        )))
    }
}

pub(super) fn check_block_id(raw: &str) -> Result<String, OpsError> {
    let id = raw.trim().trim_start_matches('^');
    if !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        Ok(id.to_owned())
    } else {
        Err(OpsError::invalid_argument(format!(
            "block_id {raw:?} is not a block id; use letters, digits and '-' only"
        )))
    }
}
