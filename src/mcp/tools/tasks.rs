//! The task tools: list, create and update tasks the way the Obsidian Tasks plugin reads and writes
//! them, with their wire types. Each converts its parameters into one `ops` request (see
//! `ops::tasks`).

use rmcp::handler::server::wrapper::{Json, Parameters};
use std::borrow::Cow;

use rmcp::schemars::{self, JsonSchema, Schema, SchemaGenerator, json_schema};
use rmcp::{tool, tool_router};
use serde::de::value::StringDeserializer;
use serde::de::{Error as _, IntoDeserializer};
use serde::{Deserialize, Deserializer, Serialize};

use super::Page;
use crate::mcp::error::ToolError;
use crate::mcp::{Caller, QuireServer};
use crate::ops::{self, Ops};

// One value or a list of values. A plain comment: a doc comment would reach every client as the
// description of the schema, where each field already says what it holds.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    pub fn into_vec(value: Option<OneOrMany>) -> Vec<String> {
        match value {
            None => Vec::new(),
            Some(OneOrMany::One(one)) => vec![one],
            Some(OneOrMany::Many(many)) => many,
        }
    }
}

/// Every bound given must hold.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DateConditionParams {
    /// Strictly before this day.
    #[serde(default)]
    pub before: Option<String>,
    /// On this day.
    #[serde(default)]
    pub on: Option<String>,
    /// Strictly after this day.
    #[serde(default)]
    pub after: Option<String>,
}

impl From<DateConditionParams> for ops::TaskDateFilter {
    fn from(params: DateConditionParams) -> Self {
        ops::TaskDateFilter {
            before: params.before,
            on: params.on,
            after: params.after,
        }
    }
}

/// The order of `vault_list_tasks`.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
pub enum TaskSortParam {
    Position,
    Due,
    Scheduled,
    Start,
    Created,
    Done,
    Cancelled,
    Priority,
    Modified,
}

impl From<TaskSortParam> for ops::TaskSort {
    fn from(sort: TaskSortParam) -> Self {
        match sort {
            TaskSortParam::Position => ops::TaskSort::Position,
            TaskSortParam::Due => ops::TaskSort::Due,
            TaskSortParam::Scheduled => ops::TaskSort::Scheduled,
            TaskSortParam::Start => ops::TaskSort::Start,
            TaskSortParam::Created => ops::TaskSort::Created,
            TaskSortParam::Done => ops::TaskSort::Done,
            TaskSortParam::Cancelled => ops::TaskSort::Cancelled,
            TaskSortParam::Priority => ops::TaskSort::Priority,
            TaskSortParam::Modified => ops::TaskSort::Modified,
        }
    }
}

/// The format a created task is written in.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
pub enum TaskFormatParam {
    Emoji,
    Dataview,
}

impl From<TaskFormatParam> for ops::TaskWriteFormat {
    fn from(format: TaskFormatParam) -> Self {
        match format {
            TaskFormatParam::Emoji => ops::TaskWriteFormat::Emoji,
            TaskFormatParam::Dataview => ops::TaskWriteFormat::Dataview,
        }
    }
}

/// A fixed value read as the tool read it before its schema listed the values: surrounding
/// spaces and case do not matter.
fn lenient<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    match Option::<String>::deserialize(deserializer)? {
        None => Ok(None),
        Some(raw) => {
            let value: StringDeserializer<D::Error> =
                raw.trim().to_ascii_lowercase().into_deserializer();
            T::deserialize(value).map(Some)
        }
    }
}

/// Where under a heading (or Kanban lane) a task goes: its top, its bottom, or before the item
/// with a 0-based index among the section's items. An index written as text ("2") is read too.
#[derive(Debug, Clone, Copy)]
pub enum TaskPositionParam {
    Edge(TaskEdge),
    Index(u32),
}

#[derive(Debug, Clone, Copy)]
pub enum TaskEdge {
    Top,
    Bottom,
}

impl JsonSchema for TaskPositionParam {
    fn schema_name() -> Cow<'static, str> {
        "TaskPositionParam".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_generator: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "anyOf": [
                { "type": "string", "enum": ["top", "bottom"] },
                { "type": "integer", "minimum": 0 }
            ]
        })
    }
}

impl<'de> Deserialize<'de> for TaskPositionParam {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Written {
            Index(u32),
            Text(String),
        }
        const USE: &str = "use top, bottom or a 0-based index among the heading's (lane's) items";
        let unknown =
            |text: &str| D::Error::custom(format!("position {text:?} is not known; {USE}"));
        let written = Written::deserialize(deserializer).map_err(|_| {
            D::Error::custom(format!("position is neither text nor a number; {USE}"))
        })?;
        match written {
            Written::Index(index) => Ok(TaskPositionParam::Index(index)),
            Written::Text(text) => match text.trim().to_ascii_lowercase().as_str() {
                "top" => Ok(TaskPositionParam::Edge(TaskEdge::Top)),
                "bottom" => Ok(TaskPositionParam::Edge(TaskEdge::Bottom)),
                other => other
                    .parse()
                    .map(TaskPositionParam::Index)
                    .map_err(|_| unknown(&text)),
            },
        }
    }
}

impl From<TaskPositionParam> for ops::TaskPosition {
    fn from(position: TaskPositionParam) -> Self {
        match position {
            TaskPositionParam::Edge(TaskEdge::Top) => ops::TaskPosition::Top,
            TaskPositionParam::Edge(TaskEdge::Bottom) => ops::TaskPosition::Bottom,
            TaskPositionParam::Index(index) => ops::TaskPosition::Index(index as usize),
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListTasksParams {
    /// TODO, IN_PROGRESS, DONE, CANCELLED or NON_TASK, or a list (default: every task).
    #[serde(default)]
    pub status: Option<OneOrMany>,
    #[serde(default)]
    pub due: Option<DateConditionParams>,
    #[serde(default)]
    pub scheduled: Option<DateConditionParams>,
    #[serde(default)]
    pub start: Option<DateConditionParams>,
    #[serde(default)]
    pub created: Option<DateConditionParams>,
    #[serde(default)]
    pub done: Option<DateConditionParams>,
    #[serde(default)]
    pub cancelled: Option<DateConditionParams>,
    /// highest, high, medium, normal, low or lowest, or a list.
    #[serde(default)]
    pub priority: Option<OneOrMany>,
    /// Only notes in this folder and below.
    #[serde(default)]
    pub folder: Option<String>,
    /// A tag or a list (any of them; nested tags match).
    #[serde(default)]
    pub tag: Option<OneOrMany>,
    /// With `tag`: not its nested tags.
    #[serde(default)]
    pub exact: bool,
    /// The heading the task is under, or a list (any of them).
    #[serde(default)]
    pub heading: Option<OneOrMany>,
    /// Only this note's tasks.
    #[serde(default)]
    pub path: Option<String>,
    /// Leave out sub-tasks.
    #[serde(default)]
    pub top_level_only: bool,
    /// Default position (path, then line); modified: newest note first.
    #[serde(default, deserialize_with = "lenient")]
    pub sort_by: Option<TaskSortParam>,
    #[serde(flatten)]
    pub page: Page,
}

impl From<ListTasksParams> for ops::ListTasks {
    fn from(params: ListTasksParams) -> Self {
        ops::ListTasks {
            status: OneOrMany::into_vec(params.status),
            due: params.due.map(Into::into),
            scheduled: params.scheduled.map(Into::into),
            start: params.start.map(Into::into),
            created: params.created.map(Into::into),
            done: params.done.map(Into::into),
            cancelled: params.cancelled.map(Into::into),
            priority: OneOrMany::into_vec(params.priority),
            folder: params.folder,
            tags: OneOrMany::into_vec(params.tag),
            exact_tags: params.exact,
            headings: OneOrMany::into_vec(params.heading),
            path: params.path,
            top_level_only: params.top_level_only,
            sort_by: params.sort_by.map(Into::into).unwrap_or_default(),
            limit: params.page.limit,
            cursor: params.page.cursor,
        }
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SubtaskProgressResult {
    pub done: usize,
    pub total: usize,
}

/// One task. Fields that are absent on the line (dates, recurrence, heading) are left out rather
/// than sent as null: a task list is mostly such fields, and an agent pays for every byte.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TaskResult {
    pub path: String,
    /// 1-based line of the task.
    pub line: usize,
    pub status_symbol: String,
    /// TODO, IN_PROGRESS, DONE, CANCELLED or NON_TASK.
    pub status_type: String,
    pub status_name: String,
    pub description: String,
    pub tags: Vec<String>,
    /// highest, high, medium, normal, low or lowest.
    pub priority: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub due: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheduled: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub done: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cancelled: Option<String>,
    /// Date fields whose text is not a real date (shown as written, e.g. 2025-02-30).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub invalid_dates: Vec<String>,
    /// The recurrence rule as the Tasks plugin writes it (e.g. "every week on Monday when done").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recurrence: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_completion: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub depends_on: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block_id: Option<String>,
    /// The heading the task sits under.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub heading: Option<String>,
    /// 0 for a top-level list item, 1 for its children, ...
    pub depth: usize,
    /// 1-based line of the enclosing list item.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_line: Option<usize>,
    /// For a Kanban board: the lane.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lane: Option<String>,
    /// For a Kanban board: whether the lane is its Complete lane.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub lane_complete: bool,
    /// For a task with sub-tasks: how many are done, out of how many (cancelled ones not counted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subtask_progress: Option<SubtaskProgressResult>,
    /// The line as written.
    pub text: String,
}

impl From<ops::TaskItem> for TaskResult {
    fn from(item: ops::TaskItem) -> Self {
        TaskResult {
            path: item.path,
            line: item.line,
            status_symbol: item.status_symbol,
            status_type: item.status_type,
            status_name: item.status_name,
            description: item.description,
            tags: item.tags,
            priority: item.priority,
            due: item.due,
            scheduled: item.scheduled,
            start: item.start,
            created: item.created,
            done: item.done,
            cancelled: item.cancelled,
            invalid_dates: item.invalid_dates,
            recurrence: item.recurrence,
            on_completion: item.on_completion,
            id: item.id,
            depends_on: item.depends_on,
            block_id: item.block_id,
            heading: item.heading,
            depth: item.depth,
            parent_line: item.parent_line,
            lane: item.lane,
            lane_complete: item.lane_complete,
            subtask_progress: item.subtask_progress.map(|progress| SubtaskProgressResult {
                done: progress.done,
                total: progress.total,
            }),
            text: item.text,
        }
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ListTasksResult {
    pub tasks: Vec<TaskResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

impl From<ops::TaskList> for ListTasksResult {
    fn from(list: ops::TaskList) -> Self {
        ListTasksResult {
            tasks: list.tasks.into_iter().map(Into::into).collect(),
            next_cursor: list.next_cursor,
        }
    }
}

// The task fields a create and an update both set (on update an empty string removes one),
// flattened into both so their schemas stay flat objects. A plain comment: flattening would hand
// a doc comment to the parameters' schema.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct TaskFieldsParams {
    /// highest, high, medium, normal, low or lowest.
    #[serde(default)]
    pub priority: Option<String>,
    #[serde(default)]
    pub due: Option<String>,
    #[serde(default)]
    pub scheduled: Option<String>,
    #[serde(default)]
    pub start: Option<String>,
    #[serde(default)]
    pub created: Option<String>,
    #[serde(default)]
    pub done: Option<String>,
    #[serde(default)]
    pub cancelled: Option<String>,
    /// A Tasks plugin rule, e.g. "every 2 weeks", "every Monday when done".
    #[serde(default)]
    pub recurrence: Option<String>,
    /// keep or delete the line when the task is done.
    #[serde(default)]
    pub on_completion: Option<String>,
    /// The task's id (letters, digits, - and _), for depends_on.
    #[serde(default)]
    pub id: Option<String>,
    /// Ids of the tasks this one waits for.
    #[serde(default)]
    pub depends_on: Option<Vec<String>>,
}

impl From<TaskFieldsParams> for ops::TaskFields {
    fn from(fields: TaskFieldsParams) -> Self {
        ops::TaskFields {
            priority: fields.priority,
            due: fields.due,
            scheduled: fields.scheduled,
            start: fields.start,
            created: fields.created,
            done: fields.done,
            cancelled: fields.cancelled,
            recurrence: fields.recurrence,
            on_completion: fields.on_completion,
            id: fields.id,
            depends_on: fields.depends_on,
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateTaskParams {
    /// Vault-relative path of an existing note.
    pub path: String,
    /// The task text (one line); the global filter is added when missing.
    pub description: String,
    /// A status symbol (x, /, -, custom) or type (DONE, ...); default todo.
    #[serde(default)]
    pub status: Option<String>,
    #[serde(flatten)]
    pub fields: TaskFieldsParams,
    /// A block id to end the line with ([[Note#^id]] links to it).
    #[serde(default)]
    pub block_id: Option<String>,
    /// Put the task in this heading's section.
    #[serde(default)]
    pub heading: Option<String>,
    /// With `heading`: its level, when several headings share the name.
    #[serde(default)]
    pub heading_level: Option<u8>,
    /// Line of a task or list item to add the task under, as its last sub-task.
    #[serde(default)]
    pub parent_line: Option<usize>,
    /// With `heading`: top, bottom (default) or an index among its items (0 is the first).
    #[serde(default)]
    pub position: Option<TaskPositionParam>,
    /// Default: the plugin's task format.
    #[serde(default, deserialize_with = "lenient")]
    pub format: Option<TaskFormatParam>,
    /// The revision you last read; `conflict` if the note changed since.
    #[serde(default)]
    pub expected_revision: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateTaskParams {
    /// Vault-relative path of the note.
    pub path: String,
    /// 1-based line of the task.
    #[serde(default)]
    pub line: Option<usize>,
    /// Or the task's block id.
    #[serde(default)]
    pub block_id: Option<String>,
    /// A status symbol (x, " ", /, -, custom), a type (DONE, ...) or toggle.
    #[serde(default)]
    pub status: Option<String>,
    /// New task text (one line).
    #[serde(default)]
    pub description: Option<String>,
    #[serde(flatten)]
    pub fields: TaskFieldsParams,
    /// Move the task and its sub-tasks under this heading.
    #[serde(default)]
    pub heading: Option<String>,
    #[serde(default)]
    pub heading_level: Option<u8>,
    /// With `heading`: top, bottom (default) or an index among its items (0 is the first).
    #[serde(default)]
    pub position: Option<TaskPositionParam>,
    /// Sub-tasks to add.
    #[serde(default)]
    pub add_subtasks: Vec<String>,
    /// The revision you last read; `conflict` if the note changed since.
    #[serde(default)]
    pub expected_revision: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct TaskWriteResult {
    pub path: String,
    /// The new revision; pass it as `expected_revision` to the next edit.
    pub revision: String,
    pub bytes: u64,
    pub modified: String,
    pub changed: bool,
    /// The tasks now at the lines the call wrote (the edited task first, then a new occurrence or
    /// added sub-tasks), with their 1-based lines.
    pub tasks: Vec<TaskResult>,
    /// A recurring task was completed and its next occurrence added.
    pub next_occurrence: bool,
    /// The completed task was removed (onCompletion: delete).
    pub deleted: bool,
    /// Another writer changed the note while this write replaced it: your change is in place, and their version is kept under this name. Read it and merge what it adds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conflict_copy: Option<String>,
}

impl From<ops::TaskWrite> for TaskWriteResult {
    fn from(write: ops::TaskWrite) -> Self {
        TaskWriteResult {
            path: write.note.path,
            revision: write.note.revision,
            bytes: write.note.bytes,
            modified: write.note.modified,
            changed: write.note.changed,
            tasks: write.tasks.into_iter().map(Into::into).collect(),
            next_occurrence: write.next_occurrence,
            deleted: write.deleted,
            conflict_copy: write.note.conflict_copy,
        }
    }
}

impl From<CreateTaskParams> for ops::CreateTask {
    fn from(params: CreateTaskParams) -> Self {
        ops::CreateTask {
            fields: params.fields.into(),
            path: params.path,
            description: params.description,
            status: params.status,
            block_id: params.block_id,
            heading: params.heading,
            heading_level: params.heading_level,
            parent_line: params.parent_line,
            position: params.position.map(Into::into),
            format: params.format.map(Into::into),
            expected_revision: params.expected_revision,
        }
    }
}

impl From<UpdateTaskParams> for ops::UpdateTask {
    fn from(params: UpdateTaskParams) -> Self {
        ops::UpdateTask {
            fields: params.fields.into(),
            path: params.path,
            line: params.line,
            block_id: params.block_id,
            status: params.status,
            description: params.description,
            heading: params.heading,
            heading_level: params.heading_level,
            position: params.position.map(Into::into),
            add_subtasks: params.add_subtasks,
            expected_revision: params.expected_revision,
        }
    }
}

#[tool_router(router = tasks_tools, vis = "pub(super)")]
impl QuireServer {
    #[tool(
        description = "List tasks (checkbox items) as the Obsidian Tasks plugin reads them, with its global filter and custom statuses: to find open, overdue or upcoming to-dos, a project's tasks, or a task's line before updating it. Filters combine with AND; dates are YYYY-MM-DD, today, tomorrow or yesterday. Sorting by a date places a task without it by the next of due, scheduled, start.",
        annotations(
            title = "List tasks",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn vault_list_tasks(
        &self,
        caller: Caller,
        Parameters(params): Parameters<ListTasksParams>,
    ) -> Result<Json<ListTasksResult>, ToolError> {
        self.run(caller, params.into(), Ops::list_tasks).await
    }

    #[tool(
        description = "Add a task line to an existing note in the Tasks plugin's field order and format: to record a to-do with dates, priority and recurrence that Obsidian shows. It goes under `heading` (a Kanban lane is a heading), under `parent_line` as a sub-task, or at the end of the note. Dates are YYYY-MM-DD, today, tomorrow or yesterday.",
        annotations(
            title = "Create task",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn vault_create_task(
        &self,
        caller: Caller,
        Parameters(params): Parameters<CreateTaskParams>,
    ) -> Result<Json<TaskWriteResult>, ToolError> {
        self.run(caller, params.into(), Ops::create_task).await
    }

    #[tool(
        description = "Change one task, named by `line` or `block_id`, in one write: status (completing stamps the done date and adds a recurring task's next occurrence, as the plugin's toggle does), description, priority, dates and other fields (an empty string removes one), a move under another `heading`, new `add_subtasks`. Pass `expected_revision` so a concurrent change is a conflict, not a lost edit.",
        annotations(
            title = "Update task",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn vault_update_task(
        &self,
        caller: Caller,
        Parameters(params): Parameters<UpdateTaskParams>,
    ) -> Result<Json<TaskWriteResult>, ToolError> {
        self.run(caller, params.into(), Ops::update_task).await
    }
}
