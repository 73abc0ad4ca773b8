//! The task tools: list, create and update tasks the way the Obsidian Tasks plugin reads and writes
//! them. Thin adapters: each converts its parameters and runs one `ops` call.

use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::{tool, tool_router};

use super::QuireServer;
use super::tasks_wire::{
    CreateTaskParams, ListTasksParams, ListTasksResult, TaskWriteResult, UpdateTaskParams,
};
use crate::ops;

#[tool_router(router = tasks_tools, vis = "pub(super)")]
impl QuireServer {
    #[tool(
        name = "vault_list_tasks",
        description = "List tasks (checkbox items) as the Obsidian Tasks plugin reads them, honouring its global filter and custom statuses. \
Use to find open, overdue or upcoming to-dos, a project's tasks, or a task's line before updating it. \
Filters (all optional, combined with AND): status (type or list: TODO, IN_PROGRESS, DONE, CANCELLED, NON_TASK; omitted = every task), \
due/scheduled/start/created/done/cancelled ({before, on, after} with YYYY-MM-DD, today, tomorrow, yesterday), priority, folder, tag (one or a list), heading (one or a list), path, top_level_only. \
sort_by: position (default), due, scheduled, start, created, done, cancelled (a missing date falls back to the next: due, scheduled, start), priority, modified. \
Returns tasks with path, 1-based line, status, description, tags, priority, the dates it has (due, scheduled, start, created, done, cancelled; absent ones are left out), recurrence and heading when present, depth, parent_line, subtask_progress for parents, and next_cursor when there is more. \
Errors: invalid_argument (bad status, priority, date or cursor), not_found (path), invalid_path.",
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
        Parameters(params): Parameters<ListTasksParams>,
    ) -> Result<Json<ListTasksResult>, String> {
        let request: ops::ListTasks = params.into();
        self.run("vault_list_tasks", move |ops, ctx| {
            ops.list_tasks(ctx, request)
        })
        .await
    }

    #[tool(
        name = "vault_create_task",
        description = "Add a task line to an existing note, written in the Tasks plugin's field order (emoji or Dataview format, as the plugin is set). \
Use to record a to-do with its dates, priority and recurrence so Obsidian shows it. \
Placement: under `heading` (top, bottom or an index `position` within the section; a Kanban lane is a heading), under `parent_line` as a sub-task, or at the end of the note. \
The plugin's global filter is put in front of the description when missing. Returns the note's new revision and the task as read back. \
Errors: invalid_argument (unknown status or priority, bad date or recurrence, a description the plugin would read differently), heading_not_found, ambiguous_heading, no_match (parent_line is not a list item), conflict, not_found, invalid_path, path_forbidden.",
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
        Parameters(params): Parameters<CreateTaskParams>,
    ) -> Result<Json<TaskWriteResult>, String> {
        let request = params.into_request();
        self.run("vault_create_task", move |ops, ctx| {
            ops.create_task(ctx, request)
        })
        .await
    }

    #[tool(
        name = "vault_update_task",
        description = "Change one task (named by 1-based `line` or `block_id`) in a single atomic write: status (symbol, type or toggle; completing stamps the done date, \
a recurring task gets its next occurrence exactly as the Tasks plugin's toggle makes it, onCompletion: delete removes the completed line), description, priority, dates (empty string removes), recurrence, \
a move under another heading or Kanban lane (`heading`, `position`), and new sub-tasks (`add_subtasks`). \
Pass the note's `expected_revision` so a concurrent change yields conflict instead of a lost edit. Returns the new revision and the tasks now on the touched lines. \
Errors: no_match (no task on that line or with that block id), conflict, invalid_argument, heading_not_found, ambiguous_heading, not_found, invalid_path, path_forbidden.",
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
        Parameters(params): Parameters<UpdateTaskParams>,
    ) -> Result<Json<TaskWriteResult>, String> {
        let request = params.into_request();
        self.run("vault_update_task", move |ops, ctx| {
            ops.update_task(ctx, request)
        })
        .await
    }
}
