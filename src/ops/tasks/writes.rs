//! Creating a task line in the plugin's field order and updating one: status changes that stamp
//! or strip done and cancelled dates and spawn the next occurrence as the plugin's toggle does,
//! field edits, moves and new sub-tasks. Each is one read-modify-write under the note's lock.

use jiff::civil::Date;

use super::dates::parse_client_date;
use super::parse::{check_block_id, check_id, parse_priority};
use super::reading::NoteTasks;
use super::types::{CreateTask, TaskFields, TaskItem, TaskWrite, TaskWriteFormat, UpdateTask};
use crate::markdown::tasks::edit::{self as task_edit, LanePosition, Placement, TaskEditError};
use crate::markdown::tasks::{
    InvalidDates, NoteTask, OnCompletion, Priority, Recurrence, Status, StatusType, Task, TaskDate,
    TaskSettings, note_tasks, parse_task_line,
};
use crate::ops::edit::EditedNote;
use crate::ops::edit::Outcome;
use crate::ops::error::OpsError;
use crate::ops::inputs::{find_heading, parse_path};
use crate::ops::shared::{Context, Ops};
use crate::vault::VaultPath;

impl Ops {
    pub fn create_task(&self, ctx: &Context, request: CreateTask) -> Result<TaskWrite, OpsError> {
        let settings = self.task_settings();
        let today = self.today();
        let status = match &request.status {
            Some(raw) => resolve_status(&settings, raw, None)?,
            None => settings.statuses.by_symbol(" "),
        };
        let dataview = match request.format {
            None => settings.write_dataview,
            Some(TaskWriteFormat::Emoji) => false,
            Some(TaskWriteFormat::Dataview) => true,
        };
        let position = request.position.unwrap_or(LanePosition::Bottom);
        if request.parent_line.is_some() && request.heading.is_some() {
            return Err(OpsError::invalid_argument(
                "give either heading or parent_line, not both: a sub-task goes under its parent wherever that is",
            ));
        }
        let description = with_global_filter(&settings, &request.description)?;
        let mut task = Task {
            description: description.clone(),
            ..Task::blank("", "-", status, dataview)
        };
        apply_fields(&mut task, &request.fields, today)?;
        if request.fields.created.is_none() && settings.set_created_date {
            task.created = Some(TaskDate::Valid(today));
        }
        if task.status.kind == StatusType::Done && task.done.is_none() && settings.set_done_date {
            task.done = Some(TaskDate::Valid(today));
        }
        if task.status.kind == StatusType::Cancelled
            && task.cancelled.is_none()
            && settings.set_cancelled_date
        {
            task.cancelled = Some(TaskDate::Valid(today));
        }
        if let Some(block_id) = &request.block_id {
            task.block_link = format!(" ^{}", check_block_id(block_id)?);
        }
        let line = checked_line(&task, &settings)?;
        let mut landed = 0;
        let note = self.edit_body(
            ctx,
            &request.path,
            request.expected_revision.as_deref(),
            |path, text| {
                let placement = match (&request.heading, request.parent_line) {
                    (Some(heading), _) => {
                        let found = find_heading(path, text, heading, request.heading_level)?;
                        Placement::Heading {
                            line: found.line,
                            position,
                        }
                    }
                    (None, Some(parent)) => Placement::Parent { line: parent },
                    (None, None) => Placement::End,
                };
                let (edited, at) =
                    task_edit::insert_lines(text, std::slice::from_ref(&line), placement)
                        .map_err(|error| placement_error(path, error))?;
                landed = at;
                Ok(outcome(edited, at, at))
            },
        )?;
        let tasks = self.tasks_at(ctx, &note, &[landed], &settings)?;
        Ok(TaskWrite {
            note,
            tasks,
            next_occurrence: false,
            deleted: false,
        })
    }

    /// `vault_update_task` in three phases: check the request before the note is read
    /// (`check_update`), then under the note's lock find the task (`find_task`), rewrite its line
    /// (`rewrite_task`: fields, status, next occurrence) and place it (`place_task`: move under a
    /// heading, add sub-tasks).
    pub fn update_task(&self, ctx: &Context, request: UpdateTask) -> Result<TaskWrite, OpsError> {
        let settings = self.task_settings();
        let today = self.today();
        let plan = check_update(&request, &settings)?;
        let mut touched: Vec<usize> = Vec::new();
        let mut next_occurrence = false;
        let mut deleted = false;
        let note = self.edit_body(
            ctx,
            &request.path,
            request.expected_revision.as_deref(),
            |path, text| {
                let tasks = note_tasks(text, &settings);
                let found = find_task(path, &tasks, &request)?;
                let rewritten = rewrite_task(text, found, &request, &plan, &settings, today)?;
                next_occurrence = rewritten.next_occurrence;
                deleted = rewritten.deleted;
                let (text, lines) = place_task(path, rewritten, &request, &plan)?;
                touched = lines;
                let first = touched.iter().copied().min().unwrap_or(found.line);
                let last = touched.iter().copied().max().unwrap_or(found.line);
                Ok(outcome(text, first, last))
            },
        )?;
        let tasks = self.tasks_at(ctx, &note, &touched, &settings)?;
        Ok(TaskWrite {
            note,
            tasks,
            next_occurrence,
            deleted,
        })
    }

    /// The tasks now on `lines` of the note just written, read back from the file.
    pub(super) fn tasks_at(
        &self,
        ctx: &Context,
        note: &EditedNote,
        lines: &[usize],
        settings: &TaskSettings,
    ) -> Result<Vec<TaskItem>, OpsError> {
        let path = parse_path(&note.path)?;
        // The caller just wrote these lines; its write access shows them back.
        let written = self.require_write(ctx, &path)?;
        let text = self.read_note_text(&written, &path)?;
        let all = NoteTasks::new(note_tasks(&text, settings));
        Ok(lines
            .iter()
            .filter_map(|line| all.tasks.iter().find(|task| task.line == *line))
            .map(|task| all.item(&note.path, task, settings))
            .collect())
    }
}

pub(super) fn outcome(text: String, first: usize, last: usize) -> Outcome {
    Outcome {
        text,
        lines: Some((first, last.max(first))),
        replacements: None,
        changed_keys: Vec::new(),
        properties: None,
    }
}

pub(super) fn placement_error(path: &VaultPath, error: TaskEditError) -> OpsError {
    match error {
        TaskEditError::NotAListItem(line) => OpsError::NoMatch {
            path: path.to_string(),
            what: format!("a list item on line {line}"),
            hint: "parent_line must be the 1-based line of a task or list item; call vault_list_tasks to see lines."
                .to_owned(),
        },
        TaskEditError::IntoItself => {
            OpsError::invalid_argument("a task cannot be moved into its own sub-items")
        }
    }
}

/// A status named by symbol (`x`), by type (`DONE`: the first status of that type), or `toggle`.
pub(super) fn resolve_status(
    settings: &TaskSettings,
    raw: &str,
    current: Option<&Status>,
) -> Result<Status, OpsError> {
    if raw == "toggle" {
        return current
            .map(|status| settings.statuses.next(status))
            .ok_or_else(|| {
                OpsError::invalid_argument("status toggle applies to an existing task")
            });
    }
    if raw.chars().count() == 1 {
        return Ok(settings.statuses.by_symbol(raw));
    }
    let kind = StatusType::parse(&raw.trim().to_ascii_uppercase()).ok_or_else(|| {
        OpsError::invalid_argument(format!(
            "status {raw:?} is neither a status symbol (one character, like x), a status type (TODO, IN_PROGRESS, DONE, CANCELLED, NON_TASK) nor toggle"
        ))
    })?;
    settings
        .statuses
        .statuses()
        .iter()
        .find(|status| status.kind == kind)
        .cloned()
        .ok_or_else(|| {
            OpsError::invalid_argument(format!(
                "the vault's Tasks plugin settings define no status of type {}; pass a status symbol instead",
                kind.as_str()
            ))
        })
}

/// The description with the global filter in front when it lacks it, so the plugin sees the task.
pub(super) fn with_global_filter(
    settings: &TaskSettings,
    description: &str,
) -> Result<String, OpsError> {
    let description = description.trim();
    if description.contains('\n') || description.contains('\r') {
        return Err(OpsError::invalid_argument(
            "a task description is one line; put more text in sub-tasks (add_subtasks) or in the note",
        ));
    }
    if description.is_empty() {
        return Err(OpsError::invalid_argument("a task needs a description"));
    }
    if settings.global_filter.is_empty() || description.contains(&settings.global_filter) {
        Ok(description.to_owned())
    } else {
        Ok(format!("{} {description}", settings.global_filter))
    }
}

/// Sets the given fields; an empty string removes one.
pub(super) fn apply_fields(
    task: &mut Task,
    fields: &TaskFields,
    today: Date,
) -> Result<(), OpsError> {
    if let Some(raw) = &fields.priority {
        task.priority = if raw.trim().is_empty() {
            Priority::None
        } else {
            parse_priority(raw)?
        };
    }
    let dates: [(&str, &Option<String>, &mut Option<TaskDate>); 6] = [
        ("due", &fields.due, &mut task.due),
        ("scheduled", &fields.scheduled, &mut task.scheduled),
        ("start", &fields.start, &mut task.start),
        ("created", &fields.created, &mut task.created),
        ("done", &fields.done, &mut task.done),
        ("cancelled", &fields.cancelled, &mut task.cancelled),
    ];
    for (name, value, slot) in dates {
        if let Some(raw) = value {
            *slot = if raw.trim().is_empty() {
                None
            } else {
                Some(TaskDate::Valid(parse_client_date(name, raw, today)?))
            };
        }
    }
    if let Some(raw) = &fields.recurrence {
        task.recurrence = if raw.trim().is_empty() {
            None
        } else {
            let text = raw.trim();
            let text = text.strip_prefix("🔁").map_or(text, str::trim);
            Some(Recurrence::parse(text).ok_or_else(|| {
                OpsError::invalid_argument(format!(
                    "recurrence {raw:?} is not a rule the Tasks plugin reads; write it like 'every day', 'every 2 weeks', 'every month on the last', 'every Monday, Friday' or add ' when done'"
                ))
            })?)
        };
    }
    if let Some(raw) = &fields.on_completion {
        task.on_completion = match raw.trim().to_ascii_lowercase().as_str() {
            "" | "ignore" => OnCompletion::Ignore,
            "keep" => OnCompletion::Keep,
            "delete" => OnCompletion::Delete,
            other => {
                return Err(OpsError::invalid_argument(format!(
                    "on_completion {other:?} is not known; use keep or delete (or an empty string to remove it)"
                )));
            }
        };
    }
    if let Some(raw) = &fields.id {
        task.id = if raw.trim().is_empty() {
            String::new()
        } else {
            check_id("id", raw)?
        };
    }
    if let Some(ids) = &fields.depends_on {
        task.depends_on = ids
            .iter()
            .map(|id| check_id("depends_on", id))
            .collect::<Result<_, _>>()?;
    }
    Ok(())
}

/// The line for a new task, refused when the plugin would read it back differently (a description
/// ending in text the plugin takes for a field).
pub(super) fn checked_line(task: &Task, settings: &TaskSettings) -> Result<String, OpsError> {
    let line = task.to_line(InvalidDates::AsWritten);
    ensure_round_trip(task, &line, settings)?;
    Ok(line)
}

pub(super) fn ensure_round_trip(
    task: &Task,
    line: &str,
    settings: &TaskSettings,
) -> Result<(), OpsError> {
    let read = parse_task_line(line, settings);
    let same = read.as_ref().is_some_and(|read| {
        read.description == task.description
            && read.due == task.due
            && read.scheduled == task.scheduled
            && read.start == task.start
            && read.priority == task.priority
    });
    if same {
        Ok(())
    } else {
        Err(OpsError::invalid_argument(format!(
            "the Tasks plugin would not read {line:?} back as written (the description must not end with a date, priority or other field signifier, and must contain the global filter {:?} when one is set); change the description and pass fields as parameters",
            settings.global_filter
        )))
    }
}

/// An update request, checked before the note is read.
pub(super) struct UpdatePlan {
    /// The new description, with the global filter added where the plugin needs it.
    description: Option<String>,
    /// The lines of the new sub-tasks, already checked to read back as written.
    subtask_lines: Vec<String>,
    position: LanePosition,
}

/// Update phase 1: the checks that need no note text.
pub(super) fn check_update(
    request: &UpdateTask,
    settings: &TaskSettings,
) -> Result<UpdatePlan, OpsError> {
    if request.line.is_none() == request.block_id.is_none() {
        return Err(OpsError::invalid_argument(
            "give exactly one of line (1-based) or block_id to name the task",
        ));
    }
    let position = request.position.unwrap_or(LanePosition::Bottom);
    if request.position.is_some() && request.heading.is_none() {
        return Err(OpsError::invalid_argument(
            "position applies together with heading (the heading or Kanban lane to move the task to)",
        ));
    }
    let description = request
        .description
        .as_deref()
        .map(|description| with_global_filter(settings, description))
        .transpose()?;
    let subtask_lines: Vec<String> = request
        .add_subtasks
        .iter()
        .map(|description| {
            let description = with_global_filter(settings, description)?;
            let task = Task {
                description,
                ..Task::blank(
                    "",
                    "-",
                    settings.statuses.by_symbol(" "),
                    settings.write_dataview,
                )
            };
            checked_line(&task, settings)
        })
        .collect::<Result<_, _>>()?;
    Ok(UpdatePlan {
        description,
        subtask_lines,
        position,
    })
}

/// Update phase 2: the task the request names, by line or by block id.
pub(super) fn find_task<'a>(
    path: &VaultPath,
    tasks: &'a [NoteTask],
    request: &UpdateTask,
) -> Result<&'a NoteTask, OpsError> {
    match (request.line, &request.block_id) {
        (Some(line), _) => tasks.iter().find(|task| task.line == line).ok_or_else(|| {
            OpsError::NoMatch {
                path: path.to_string(),
                what: format!("a task on line {line}"),
                hint: "Call vault_list_tasks with this path to see its tasks and their lines, then retry."
                    .to_owned(),
            }
        }),
        (None, Some(block_id)) => {
            let wanted = format!(" ^{}", block_id.trim().trim_start_matches('^'));
            tasks
                .iter()
                .find(|task| task.task.block_link == wanted)
                .ok_or_else(|| OpsError::NoMatch {
                    path: path.to_string(),
                    what: format!("a task with block id {block_id:?}"),
                    hint: "Call vault_list_tasks with this path to see its tasks and their block ids."
                        .to_owned(),
                })
        }
        (None, None) => Err(OpsError::invalid_argument("give line or block_id")),
    }
}

/// The note after the task's line was rewritten, and where its lines now are.
pub(super) struct Rewritten {
    text: String,
    /// Where the edited task now is; `None` once deleted on completion.
    primary: Option<usize>,
    /// Where the new occurrence of a recurring task is, if one was added.
    spawned_line: Option<usize>,
    next_occurrence: bool,
    deleted: bool,
}

/// Update phase 3: the task's new line (fields, description, status) in place of the old one;
/// a status change may add the next occurrence or delete the task, as the plugin's toggle does.
pub(super) fn rewrite_task(
    text: &str,
    found: &NoteTask,
    request: &UpdateTask,
    plan: &UpdatePlan,
    settings: &TaskSettings,
    today: Date,
) -> Result<Rewritten, OpsError> {
    let line = found.line;
    let mut task = found.task.clone();
    if let Some(description) = &plan.description {
        task.description = description.clone();
    }
    apply_fields(&mut task, &request.fields, today)?;
    let mut deleted = false;
    let result: Vec<Task> = match &request.status {
        Some(raw) => {
            let new_status = resolve_status(settings, raw, Some(&task.status))?;
            deleted = task.on_completion == OnCompletion::Delete
                && new_status.kind == StatusType::Done
                && task.status.kind != StatusType::Done;
            task.with_status(&new_status, settings, today)
        }
        None => vec![task.clone()],
    };
    let new_lines: Vec<String> = result
        .iter()
        .map(|task| task.to_line(InvalidDates::AsWritten))
        .collect();
    for (new, written) in result.iter().zip(new_lines.iter()) {
        ensure_round_trip(new, written, settings)?;
    }
    let spawned = result.len() + usize::from(deleted) > 1;
    // Where the edited task and the new occurrence now are.
    let below = settings.recurrence_on_next_line;
    let primary = match (deleted, spawned) {
        (true, _) => None,
        (false, true) if !below => Some(line + 1),
        _ => Some(line),
    };
    let spawned_line = match (spawned, deleted, below) {
        (false, _, _) => None,
        (true, true, _) | (true, false, false) => Some(line),
        (true, false, true) => Some(line + 1),
    };
    let text = task_edit::replace_line(text, line, &new_lines)
        .ok_or_else(|| OpsError::Internal("a task line fell outside the note".into()))?;
    Ok(Rewritten {
        text,
        primary,
        spawned_line,
        next_occurrence: spawned,
        deleted,
    })
}

/// Update phase 4: the rewritten task moved under `heading` and given its new sub-tasks; the note's
/// text and the lines the answer reports (the task first, then its new sub-tasks, then the new
/// occurrence unless the task moved away from it).
pub(super) fn place_task(
    path: &VaultPath,
    rewritten: Rewritten,
    request: &UpdateTask,
    plan: &UpdatePlan,
) -> Result<(String, Vec<usize>), OpsError> {
    let Rewritten {
        mut text,
        mut primary,
        spawned_line,
        ..
    } = rewritten;
    let mut touched = Vec::new();
    if let Some(heading) = &request.heading {
        let Some(at) = primary else {
            return Err(OpsError::invalid_argument(
                "the task was deleted on completion (onCompletion: delete), so it cannot also be moved",
            ));
        };
        let (block, rest, _) =
            task_edit::cut_block(&text, at).map_err(|error| placement_error(path, error))?;
        let target = find_heading(path, &rest, heading, request.heading_level)?;
        let (moved, landed) = task_edit::insert_lines(
            &rest,
            &block,
            Placement::Heading {
                line: target.line,
                position: plan.position,
            },
        )
        .map_err(|error| placement_error(path, error))?;
        text = moved;
        primary = Some(landed);
    }
    if !plan.subtask_lines.is_empty() {
        let Some(at) = primary else {
            return Err(OpsError::invalid_argument(
                "the task was deleted on completion (onCompletion: delete), so sub-tasks cannot be added to it",
            ));
        };
        let (with_children, first) =
            task_edit::insert_lines(&text, &plan.subtask_lines, Placement::Parent { line: at })
                .map_err(|error| placement_error(path, error))?;
        text = with_children;
        touched.extend(first..first + plan.subtask_lines.len());
    }
    if let Some(at) = primary {
        touched.insert(0, at);
    }
    if let Some(at) = spawned_line
        && request.heading.is_none()
    {
        touched.push(at);
    }
    Ok((text, touched))
}
