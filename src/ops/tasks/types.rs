//! What the task tools ask for and answer: listing filters and pages, the fields a create or
//! an update sets, a write's outcome, and the orders and formats they name.

use jiff::civil::Date;

use crate::markdown::tasks::edit::LanePosition;
use crate::markdown::tasks::{Task, TaskDate};
use crate::ops::edit::EditedNote;

/// A date condition: every bound given must hold. Values are `YYYY-MM-DD`, `today`, `tomorrow` or
/// `yesterday`.
#[derive(Debug, Clone, Default)]
pub struct TaskDateFilter {
    pub before: Option<String>,
    pub on: Option<String>,
    pub after: Option<String>,
}

/// What `vault_list_tasks` asks for.
#[derive(Debug, Clone, Default)]
pub struct ListTasks {
    /// Status types (`TODO`, `IN_PROGRESS`, `DONE`, `CANCELLED`, `NON_TASK`); empty means all.
    pub status: Vec<String>,
    pub due: Option<TaskDateFilter>,
    pub scheduled: Option<TaskDateFilter>,
    pub start: Option<TaskDateFilter>,
    pub created: Option<TaskDateFilter>,
    pub done: Option<TaskDateFilter>,
    pub cancelled: Option<TaskDateFilter>,
    /// Priority names; empty means all.
    pub priority: Vec<String>,
    pub folder: Option<String>,
    /// Any of these tags (case ignored, `#` optional; nested tags match unless `exact_tags`).
    pub tags: Vec<String>,
    pub exact_tags: bool,
    /// Any of these headings (case ignored).
    pub headings: Vec<String>,
    pub path: Option<String>,
    /// Only tasks not nested under another task.
    pub top_level_only: bool,
    pub sort_by: SortBy,
    pub limit: Option<u32>,
    pub cursor: Option<String>,
}

/// Done and total direct sub-tasks (cancelled ones are left out of both).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubtaskProgress {
    pub done: usize,
    pub total: usize,
}

/// One task as the tools show it.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskItem {
    pub path: String,
    pub line: usize,
    pub status_symbol: String,
    pub status_type: String,
    pub status_name: String,
    /// As the plugin shows it (without the global filter when the plugin hides it).
    pub description: String,
    pub tags: Vec<String>,
    /// `highest`, `high`, `medium`, `normal`, `low` or `lowest`.
    pub priority: String,
    pub due: Option<String>,
    pub scheduled: Option<String>,
    pub start: Option<String>,
    pub created: Option<String>,
    pub done: Option<String>,
    pub cancelled: Option<String>,
    /// Date fields whose text is not a real date (kept as written, e.g. `2025-02-30`).
    pub invalid_dates: Vec<String>,
    pub recurrence: Option<String>,
    pub on_completion: Option<String>,
    pub id: Option<String>,
    pub depends_on: Vec<String>,
    pub block_id: Option<String>,
    pub heading: Option<String>,
    pub depth: usize,
    pub parent_line: Option<usize>,
    pub lane: Option<String>,
    pub lane_complete: bool,
    pub subtask_progress: Option<SubtaskProgress>,
    /// The line as written.
    pub text: String,
}

#[derive(Debug, Clone)]
pub struct TaskList {
    pub tasks: Vec<TaskItem>,
    pub next_cursor: Option<String>,
}

/// The fields a create or an update sets. For updates an empty string removes a field.
#[derive(Debug, Clone, Default)]
pub struct TaskFields {
    pub priority: Option<String>,
    pub due: Option<String>,
    pub scheduled: Option<String>,
    pub start: Option<String>,
    pub created: Option<String>,
    pub done: Option<String>,
    pub cancelled: Option<String>,
    pub recurrence: Option<String>,
    pub on_completion: Option<String>,
    pub id: Option<String>,
    pub depends_on: Option<Vec<String>>,
}

#[derive(Debug, Clone, Default)]
pub struct CreateTask {
    pub path: String,
    pub description: String,
    /// A status symbol (`x`) or type (`DONE`); default the todo status.
    pub status: Option<String>,
    pub fields: TaskFields,
    /// Block id to end the line with (`^id`).
    pub block_id: Option<String>,
    pub heading: Option<String>,
    pub heading_level: Option<u8>,
    /// 1-based line of the list item the task goes under, as its last child.
    pub parent_line: Option<usize>,
    /// Where under `heading` (default: at the bottom).
    pub position: Option<LanePosition>,
    /// Default: the plugin's `taskFormat`.
    pub format: Option<TaskWriteFormat>,
    pub expected_revision: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct UpdateTask {
    pub path: String,
    pub line: Option<usize>,
    pub block_id: Option<String>,
    /// A status symbol, a status type, or `toggle` (the plugin's toggle).
    pub status: Option<String>,
    pub description: Option<String>,
    pub fields: TaskFields,
    /// Move the task (with its sub-items) under this heading.
    pub heading: Option<String>,
    pub heading_level: Option<u8>,
    /// Where under `heading` (default: at the bottom).
    pub position: Option<LanePosition>,
    /// Descriptions of new sub-tasks added as the task's last children.
    pub add_subtasks: Vec<String>,
    pub expected_revision: Option<String>,
}

/// A task write's outcome: the note and the tasks it now holds at the touched lines.
#[derive(Debug, Clone)]
pub struct TaskWrite {
    pub note: EditedNote,
    pub tasks: Vec<TaskItem>,
    /// For a status change: whether a next occurrence was added, and whether the completed task was
    /// deleted (`onCompletion: delete`).
    pub next_occurrence: bool,
    pub deleted: bool,
}

/// The order of a task listing. A task without the sort date is placed by the next date of its
/// cascade (due, scheduled, start).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SortBy {
    /// By path, then line.
    #[default]
    Position,
    Due,
    Scheduled,
    Start,
    Created,
    Done,
    Cancelled,
    Priority,
    /// Newest note first.
    Modified,
}

/// The task format a created task is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskWriteFormat {
    /// Emoji signifiers (`📅 2025-01-31`).
    Emoji,
    /// Dataview inline fields (`[due:: 2025-01-31]`).
    Dataview,
}

impl SortBy {
    /// `cascade`'s dates as indexes into (due, scheduled, start, created, done, cancelled).
    pub(super) fn cascade_columns(self) -> &'static [usize] {
        match self {
            SortBy::Due | SortBy::Priority => &[0, 1, 2],
            SortBy::Scheduled => &[1, 0, 2],
            SortBy::Start => &[2, 1, 0],
            SortBy::Created => &[3, 2, 1, 0],
            SortBy::Done => &[4, 5],
            SortBy::Cancelled => &[5, 4],
            SortBy::Position | SortBy::Modified => &[],
        }
    }

    /// The dates tried in order when the sort date is missing.
    pub(super) fn cascade(self, task: &Task) -> Option<Date> {
        let order: &[&Option<TaskDate>] = match self {
            SortBy::Due | SortBy::Priority => &[&task.due, &task.scheduled, &task.start],
            SortBy::Scheduled => &[&task.scheduled, &task.due, &task.start],
            SortBy::Start => &[&task.start, &task.scheduled, &task.due],
            SortBy::Created => &[&task.created, &task.start, &task.scheduled, &task.due],
            SortBy::Done => &[&task.done, &task.cancelled],
            SortBy::Cancelled => &[&task.cancelled, &task.done],
            SortBy::Position | SortBy::Modified => &[],
        };
        order
            .iter()
            .find_map(|date| date.as_ref().and_then(TaskDate::valid))
    }
}
