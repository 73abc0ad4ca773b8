//! Tasks as the Obsidian Tasks plugin sees them: listing with filters, sorting and paging, creating a
//! task line in the plugin's field order, and updating one (status changes that stamp or strip done
//! and cancelled dates and spawn the next occurrence exactly as the plugin's toggle does, field edits,
//! moves and new sub-tasks).
//!
//! The plugin's settings (`data.json`: global filter, statuses, formats) are read on every call, so a
//! change in Obsidian applies at once; the index holds settings-independent checkbox lines and their
//! reading, which a listing filters, sorts and pages in SQL under the settings of the call. Every
//! write is one read-modify-write under the note's lock (`Ops::edit_body`), checked against
//! `expected_revision` and against the revision read, so a concurrent writer yields `conflict`.

use crate::ops::access::Maintenance;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, LazyLock, Mutex};

use jiff::ToSpan;
use jiff::civil::Date;

use super::edit::Outcome;
use super::notes::{find_heading, parse_path};
use super::paging::{Cursor, check_limit};
use super::{Context, EditedNote, Ops, OpsError};
use crate::index::{TaskDateRange, TaskOrder, TaskQuery, TaskRow, TaskScope};
use crate::markdown::tasks::edit::{self as task_edit, LanePosition, Placement, TaskEditError};
use crate::markdown::tasks::{
    InvalidDates, NoteTask, OnCompletion, ParsedLine, Priority, Recurrence, Status, StatusType,
    Task, TaskDate, TaskFormat, TaskSettings, format_date, note_tasks, parse_line_fields,
    parse_task_line,
};
use crate::vault::VaultPath;

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

/// A date given by a client: `YYYY-MM-DD` or a word relative to today.
fn parse_client_date(name: &str, raw: &str, today: Date) -> Result<Date, OpsError> {
    let text = raw.trim().to_ascii_lowercase();
    let parsed = match text.as_str() {
        "today" => Some(today),
        "tomorrow" => today.checked_add(1.day()).ok(),
        "yesterday" => today.checked_sub(1.day()).ok(),
        _ if text.len() == 10 => match TaskDate::parse(&text) {
            TaskDate::Valid(date) => Some(date),
            TaskDate::Invalid(_) => None,
        },
        _ => None,
    };
    parsed.ok_or_else(|| {
        OpsError::invalid_argument(format!(
            "{name} {raw:?} is not a date; use YYYY-MM-DD (a real calendar day), today, tomorrow or yesterday"
        ))
    })
}

struct DateBounds {
    before: Option<Date>,
    on: Option<Date>,
    after: Option<Date>,
}

impl DateBounds {
    fn parse(
        name: &str,
        filter: &Option<TaskDateFilter>,
        today: Date,
    ) -> Result<Option<DateBounds>, OpsError> {
        let Some(filter) = filter else {
            return Ok(None);
        };
        let bound = |which: &str, value: &Option<String>| {
            value
                .as_deref()
                .map(|raw| parse_client_date(&format!("{name}.{which}"), raw, today))
                .transpose()
        };
        let bounds = DateBounds {
            before: bound("before", &filter.before)?,
            on: bound("on", &filter.on)?,
            after: bound("after", &filter.after)?,
        };
        if bounds.before.is_none() && bounds.on.is_none() && bounds.after.is_none() {
            return Err(OpsError::invalid_argument(format!(
                "the {name} filter needs at least one of before, on or after"
            )));
        }
        Ok(Some(bounds))
    }

    /// Tasks without the date, or with an invalid one, never match a date condition.
    fn matches(&self, date: &Option<TaskDate>) -> bool {
        let Some(date) = date.as_ref().and_then(TaskDate::valid) else {
            return false;
        };
        self.before.is_none_or(|before| date < before)
            && self.on.is_none_or(|on| date == on)
            && self.after.is_none_or(|after| date > after)
    }
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
    fn cascade_columns(self) -> &'static [usize] {
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
    fn cascade(self, task: &Task) -> Option<Date> {
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

fn status_type_filter(raw: &[String]) -> Result<Vec<StatusType>, OpsError> {
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

fn priority_filter(raw: &[String]) -> Result<Vec<Priority>, OpsError> {
    raw.iter().map(|value| parse_priority(value)).collect()
}

fn parse_priority(value: &str) -> Result<Priority, OpsError> {
    Priority::parse(value).ok_or_else(|| {
        OpsError::invalid_argument(format!(
            "priority {value:?} is not known; use highest, high, medium, normal, low or lowest"
        ))
    })
}

/// A tag as listings compare it; the index stores line tags in this form.
fn normal_tag(tag: &str) -> String {
    crate::index::normal_task_tag(tag)
}

fn priority_word(priority: Priority) -> String {
    priority.name().to_ascii_lowercase()
}

fn date_text(date: &Option<TaskDate>) -> Option<String> {
    date.as_ref().map(TaskDate::as_written)
}

/// Lines already read, by format and text: reading a line is what a listing spends its time on, and
/// the same lines are listed again and again. A pure memo (a line's reading never changes; settings
/// are applied after it), shared by every vault and bounded.
type LineCache = HashMap<(bool, bool, String), Option<Arc<ParsedLine>>>;
static LINE_CACHE: LazyLock<Mutex<LineCache>> = LazyLock::new(Default::default);
const LINE_CACHE_LIMIT: usize = 250_000;

fn cached_parse(line: &str, format: TaskFormat) -> Option<Arc<ParsedLine>> {
    let key = (
        format != TaskFormat::Dataview,
        format != TaskFormat::Emoji,
        line.to_owned(),
    );
    if let Ok(cache) = LINE_CACHE.lock()
        && let Some(parsed) = cache.get(&key)
    {
        return parsed.clone();
    }
    let parsed = parse_line_fields(line, format).map(Arc::new);
    if let Ok(mut cache) = LINE_CACHE.lock() {
        if cache.len() >= LINE_CACHE_LIMIT {
            cache.clear();
        }
        cache.insert(key, parsed.clone());
    }
    parsed
}

/// The tasks of one note under the current settings, with their sub-task relations.
struct NoteTasks {
    tasks: Vec<NoteTask>,
    children: HashMap<usize, Vec<usize>>,
}

impl NoteTasks {
    fn from_sites(rows: &[&TaskRow], settings: &TaskSettings) -> NoteTasks {
        let tasks: Vec<NoteTask> = rows
            .iter()
            .filter_map(|row| {
                let task = cached_parse(&row.text, settings.format)?.under(settings)?;
                Some(NoteTask {
                    line: row.line,
                    task,
                    heading: row.heading.clone(),
                    heading_line: row.heading_line,
                    depth: row.depth,
                    parent_line: row.parent_line,
                    lane: row.lane.clone(),
                    lane_complete: row.lane_complete,
                })
            })
            .collect();
        NoteTasks::new(tasks)
    }

    fn new(tasks: Vec<NoteTask>) -> NoteTasks {
        let task_lines: HashSet<usize> = tasks.iter().map(|task| task.line).collect();
        let mut children: HashMap<usize, Vec<usize>> = HashMap::new();
        for task in &tasks {
            if let Some(parent) = task.parent_line.filter(|line| task_lines.contains(line)) {
                children.entry(parent).or_default().push(task.line);
            }
        }
        NoteTasks { tasks, children }
    }

    fn progress(&self, line: usize) -> Option<SubtaskProgress> {
        let children = self.children.get(&line)?;
        let mut progress = SubtaskProgress { done: 0, total: 0 };
        for child in children {
            let Some(task) = self.tasks.iter().find(|task| task.line == *child) else {
                continue;
            };
            match task.task.status.kind {
                StatusType::Cancelled | StatusType::NonTask => {}
                StatusType::Done => {
                    progress.done += 1;
                    progress.total += 1;
                }
                StatusType::Todo | StatusType::InProgress => progress.total += 1,
            }
        }
        Some(progress)
    }

    fn item(&self, path: &str, task: &NoteTask, settings: &TaskSettings) -> TaskItem {
        let inner = &task.task;
        let invalid_dates = [
            ("due", &inner.due),
            ("scheduled", &inner.scheduled),
            ("start", &inner.start),
            ("created", &inner.created),
            ("done", &inner.done),
            ("cancelled", &inner.cancelled),
        ]
        .iter()
        .filter(|(_, date)| matches!(date, Some(TaskDate::Invalid(_))))
        .map(|(name, _)| (*name).to_owned())
        .collect();
        TaskItem {
            path: path.to_owned(),
            line: task.line,
            status_symbol: inner.status.symbol.clone(),
            status_type: inner.status.kind.as_str().to_owned(),
            status_name: inner.status.name.clone(),
            description: inner.shown_description(settings),
            tags: inner.tags.clone(),
            priority: priority_word(inner.priority),
            due: date_text(&inner.due),
            scheduled: date_text(&inner.scheduled),
            start: date_text(&inner.start),
            created: date_text(&inner.created),
            done: date_text(&inner.done),
            cancelled: date_text(&inner.cancelled),
            invalid_dates,
            recurrence: inner.recurrence.as_ref().map(Recurrence::text),
            on_completion: Some(inner.on_completion.as_str().to_owned())
                .filter(|value| !value.is_empty()),
            id: Some(inner.id.clone()).filter(|id| !id.is_empty()),
            depends_on: inner.depends_on.clone(),
            block_id: inner.block_link.trim().strip_prefix('^').map(str::to_owned),
            heading: task.heading.clone(),
            depth: task.depth,
            parent_line: task.parent_line,
            lane: task.lane.clone(),
            lane_complete: task.lane_complete,
            subtask_progress: self.progress(task.line),
            text: inner.to_line(InvalidDates::AsWritten),
        }
    }
}

impl Ops {
    /// The Tasks plugin's settings for this vault, read now.
    fn task_settings(&self) -> TaskSettings {
        TaskSettings::from_plugin_settings(
            &self
                .walls
                .vault(&Maintenance::new())
                .tasks_plugin_settings(),
        )
    }

    /// A listing request read and checked once, for either way of answering it.
    fn list_plan(&self, ctx: &Context, request: &ListTasks) -> Result<ListPlan, OpsError> {
        let limit = check_limit(request.limit)?;
        let offset = Cursor::offset(request.cursor.as_deref())?;
        let today = self.today();
        let statuses = status_type_filter(&request.status)?;
        let priorities = priority_filter(&request.priority)?;
        let sort = request.sort_by;
        let date_filters = [
            (DateBounds::parse("due", &request.due, today)?, 0),
            (
                DateBounds::parse("scheduled", &request.scheduled, today)?,
                1,
            ),
            (DateBounds::parse("start", &request.start, today)?, 2),
            (DateBounds::parse("created", &request.created, today)?, 3),
            (DateBounds::parse("done", &request.done, today)?, 4),
            (
                DateBounds::parse("cancelled", &request.cancelled, today)?,
                5,
            ),
        ];
        let folder = match request.folder.as_deref().map(|f| f.trim_matches('/')) {
            None | Some("") => None,
            Some(folder) => Some(parse_path(folder)?.to_string()),
        };
        let path = match &request.path {
            Some(raw) => {
                let path = parse_path(raw)?;
                self.require_read(ctx, &path)?;
                Some(path.to_string())
            }
            None => None,
        };
        let tags: Vec<String> = request.tags.iter().map(|tag| normal_tag(tag)).collect();
        let headings: Vec<String> = request
            .headings
            .iter()
            .map(|heading| heading.trim().trim_start_matches('#').trim().to_lowercase())
            .collect();
        Ok(ListPlan {
            limit,
            offset,
            statuses,
            priorities,
            sort,
            date_filters,
            folder,
            path,
            tags,
            headings,
            exact_tags: request.exact_tags,
            top_level_only: request.top_level_only,
        })
    }

    /// `vault_list_tasks`: filtered, sorted and paged in SQL over the index's stored reading of
    /// each line, with the plugin settings of the moment turned into the query (status symbols by
    /// type, the global filter as a substring test); only the returned page is read under those
    /// settings. Falls back to `list_tasks_in_memory` where the settings make the SQL answer
    /// differ from the plugin's.
    pub fn list_tasks(&self, ctx: &Context, request: ListTasks) -> Result<TaskList, OpsError> {
        let plan = self.list_plan(ctx, &request)?;
        let settings = self.task_settings();
        let Some(query) = plan.sql_query(&settings) else {
            return self.list_tasks_with_plan(ctx, plan, settings);
        };
        let visibility = self.visibility(ctx);
        let excluded = self.walls.vault(&visibility).excluded_files();
        let mut shows = |path: &str| !excluded.excludes(path) && visibility.shows(path);
        let page =
            self.walls
                .index(&visibility)
                .task_page(&query, plan.offset, plan.limit, &mut shows)?;
        let mut built: HashMap<&str, NoteTasks> = HashMap::new();
        let mut tasks = Vec::with_capacity(page.tasks.len());
        for (path, line) in &page.tasks {
            let Some(rows) = page.rows.get(path) else {
                continue;
            };
            let note = built.entry(path).or_insert_with(|| {
                let group: Vec<&TaskRow> = rows.iter().collect();
                NoteTasks::from_sites(&group, &settings)
            });
            if let Some(task) = note.tasks.iter().find(|task| task.line == *line) {
                tasks.push(note.item(path, task, &settings));
            }
        }
        let next_cursor = (page.more || tasks.len() < page.tasks.len())
            .then(|| Cursor::Offset(plan.offset + tasks.len()).encode());
        Ok(TaskList { tasks, next_cursor })
    }

    /// The listing computed in memory from every checkbox row of the scope: the reference the SQL
    /// listing is tested against (`tests/it/task_listing_sql.rs`), and its fallback.
    #[doc(hidden)]
    pub fn list_tasks_in_memory(
        &self,
        ctx: &Context,
        request: ListTasks,
    ) -> Result<TaskList, OpsError> {
        let plan = self.list_plan(ctx, &request)?;
        let settings = self.task_settings();
        self.list_tasks_with_plan(ctx, plan, settings)
    }

    /// The in-memory listing in four phases: the rows the caller may see, grouped by note
    /// (`visible_notes`); the tasks that pass the filters, with their sort keys
    /// (`ListPlan::matching_tasks`); those sorted (`sort_matches`); and the requested page built
    /// into items (`page_items`).
    fn list_tasks_with_plan(
        &self,
        ctx: &Context,
        mut plan: ListPlan,
        settings: TaskSettings,
    ) -> Result<TaskList, OpsError> {
        let scope = TaskScope {
            folder: plan.folder.take(),
            path: plan.path.take(),
        };
        let visibility = self.visibility(ctx);
        let rows = self.walls.index(&visibility).task_rows(&scope)?;
        let by_note = self.visible_notes(ctx, &rows);
        let mut found = plan.matching_tasks(&by_note, &settings);
        sort_matches(plan.sort, &mut found);
        let total = found.len();
        let (offset, limit) = (plan.offset, plan.limit);
        let page: Vec<(usize, usize)> = found
            .into_iter()
            .skip(offset)
            .take(limit)
            .map(|found| (found.note, found.line))
            .collect();
        let tasks = page_items(&by_note, page, &settings);
        let next_cursor =
            (offset + tasks.len() < total).then(|| Cursor::Offset(offset + tasks.len()).encode());
        Ok(TaskList { tasks, next_cursor })
    }

    /// Listing phase 1: the rows the caller may see, grouped by note in the order they came.
    fn visible_notes<'a>(
        &self,
        ctx: &Context,
        rows: &'a [TaskRow],
    ) -> Vec<(&'a str, Vec<&'a TaskRow>)> {
        let visibility = self.visibility(ctx);
        let excluded = self.walls.vault(&visibility).excluded_files();
        let mut by_note: Vec<(&str, Vec<&TaskRow>)> = Vec::new();
        // Rows come grouped by note: the access check runs once per note, not once per line.
        let mut shown: Option<(&str, bool)> = None;
        for row in rows {
            let visible = match shown {
                Some((path, visible)) if path == row.path => visible,
                _ => {
                    let visible = !excluded.excludes(&row.path) && visibility.shows(&row.path);
                    shown = Some((&row.path, visible));
                    visible
                }
            };
            if !visible {
                continue;
            }
            match by_note.last_mut() {
                Some((path, group)) if *path == row.path => group.push(row),
                _ => by_note.push((&row.path, vec![row])),
            }
        }
        by_note
    }

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
    fn tasks_at(
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

/// A listing request, read and checked.
struct ListPlan {
    limit: usize,
    offset: usize,
    statuses: Vec<StatusType>,
    priorities: Vec<Priority>,
    sort: SortBy,
    /// Each date condition with its index into the six dates (due, scheduled, start, created,
    /// done, cancelled).
    date_filters: [(Option<DateBounds>, usize); 6],
    folder: Option<String>,
    path: Option<String>,
    tags: Vec<String>,
    headings: Vec<String>,
    exact_tags: bool,
    top_level_only: bool,
}

impl ListPlan {
    /// The request as an index query under `settings`, or `None` where SQL would answer
    /// differently from the in-memory listing.
    fn sql_query(&self, settings: &TaskSettings) -> Option<TaskQuery> {
        // The index read every line in both formats, which is what plugin settings always give.
        if settings.format != TaskFormat::Both {
            return None;
        }
        // A tag equal to the global filter never matches a tag filter, but the index keeps every
        // tag: only when no wanted tag could match the global filter's own tag is that moot.
        if !settings.global_filter.is_empty() && !self.tags.is_empty() {
            let filter_tag = normal_tag(&settings.global_filter);
            let reaches_filter = self.tags.iter().any(|wanted| {
                filter_tag == *wanted
                    || (!self.exact_tags
                        && filter_tag.starts_with(wanted.as_str())
                        && filter_tag[wanted.len()..].starts_with('/'))
            });
            if reaches_filter {
                return None;
            }
        }
        // Status types come from the settings: a symbol the settings do not define is TODO.
        let symbols = (!self.statuses.is_empty()).then(|| {
            let mut known: Vec<&str> = Vec::new();
            for status in settings.statuses.statuses() {
                if !known.contains(&status.symbol.as_str()) {
                    known.push(&status.symbol);
                }
            }
            let unknown_wanted = self.statuses.contains(&StatusType::Todo);
            let listed = known
                .into_iter()
                .filter(|symbol| {
                    self.statuses.contains(&settings.statuses.kind_of(symbol)) != unknown_wanted
                })
                .map(str::to_owned)
                .collect();
            (!unknown_wanted, listed)
        });
        let mut dates: [Option<TaskDateRange>; 6] = Default::default();
        for (bounds, index) in &self.date_filters {
            if let (Some(bounds), Some(slot)) = (bounds, dates.get_mut(*index)) {
                *slot = Some(TaskDateRange {
                    before: bounds.before.map(format_date),
                    on: bounds.on.map(format_date),
                    after: bounds.after.map(format_date),
                });
            }
        }
        let order = match self.sort {
            SortBy::Position => TaskOrder::Position,
            SortBy::Modified => TaskOrder::Modified,
            SortBy::Priority => TaskOrder::Priority(self.sort.cascade_columns().to_vec()),
            _ => TaskOrder::Dates(self.sort.cascade_columns().to_vec()),
        };
        Some(TaskQuery {
            scope: TaskScope {
                folder: self.folder.clone(),
                path: self.path.clone(),
            },
            global_filter: settings.global_filter.clone(),
            symbols,
            dates,
            priorities: self
                .priorities
                .iter()
                .map(|priority| priority.number())
                .collect(),
            tags: self.tags.clone(),
            exact_tags: self.exact_tags,
            headings: self.headings.clone(),
            top_level_only: self.top_level_only,
            order,
        })
    }
}

fn compare_dates(a: Option<Date>, b: Option<Date>) -> std::cmp::Ordering {
    // Tasks without any date of the cascade go last.
    match (a, b) {
        (Some(a), Some(b)) => a.cmp(&b),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    }
}

fn outcome(text: String, first: usize, last: usize) -> Outcome {
    Outcome {
        text,
        lines: Some((first, last.max(first))),
        replacements: None,
        changed_keys: Vec::new(),
        properties: None,
    }
}

fn placement_error(path: &VaultPath, error: TaskEditError) -> OpsError {
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
fn resolve_status(
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
fn with_global_filter(settings: &TaskSettings, description: &str) -> Result<String, OpsError> {
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

fn check_id(name: &str, raw: &str) -> Result<String, OpsError> {
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

fn check_block_id(raw: &str) -> Result<String, OpsError> {
    let id = raw.trim().trim_start_matches('^');
    if !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        Ok(id.to_owned())
    } else {
        Err(OpsError::invalid_argument(format!(
            "block_id {raw:?} is not a block id; use letters, digits and '-' only"
        )))
    }
}

/// Sets the given fields; an empty string removes one.
fn apply_fields(task: &mut Task, fields: &TaskFields, today: Date) -> Result<(), OpsError> {
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
fn checked_line(task: &Task, settings: &TaskSettings) -> Result<String, OpsError> {
    let line = task.to_line(InvalidDates::AsWritten);
    ensure_round_trip(task, &line, settings)?;
    Ok(line)
}

fn ensure_round_trip(task: &Task, line: &str, settings: &TaskSettings) -> Result<(), OpsError> {
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

/// A task that passed the listing's filters: its sort keys and where it is.
struct Match {
    /// The note's modification time.
    modified: i64,
    /// The date the sort order cascades to.
    date: Option<Date>,
    priority: u8,
    /// Index into the listing's notes.
    note: usize,
    line: usize,
}

impl ListPlan {
    /// Listing phase 2: the tasks of `by_note` that pass every filter. Lines are read once (and
    /// remembered); full tasks and items are built later, only for the notes of the returned page.
    fn matching_tasks(
        &self,
        by_note: &[(&str, Vec<&TaskRow>)],
        settings: &TaskSettings,
    ) -> Vec<Match> {
        let mut found = Vec::new();
        for (note_index, (_, group)) in by_note.iter().enumerate() {
            let parsed: Vec<(usize, Arc<ParsedLine>)> = group
                .iter()
                .enumerate()
                .filter_map(|(row_index, row)| {
                    let parsed = cached_parse(&row.text, settings.format)?;
                    parsed.included(settings).then_some((row_index, parsed))
                })
                .collect();
            let task_lines: HashSet<usize> = parsed
                .iter()
                .filter_map(|(row_index, _)| group.get(*row_index).map(|row| row.line))
                .collect();
            for (row_index, line) in &parsed {
                let Some(row) = group.get(*row_index) else {
                    continue;
                };
                let inner = line.task();
                if self.admits(row, inner, &task_lines, settings) {
                    found.push(Match {
                        modified: row.mtime_ns,
                        date: self.sort.cascade(inner),
                        priority: inner.priority.number(),
                        note: note_index,
                        line: row.line,
                    });
                }
            }
        }
        found
    }

    /// Whether the task `inner` read from `row` passes every filter; `task_lines` are the lines of
    /// the note that hold tasks, for `top_level_only`.
    fn admits(
        &self,
        row: &TaskRow,
        inner: &Task,
        task_lines: &HashSet<usize>,
        settings: &TaskSettings,
    ) -> bool {
        if !self.statuses.is_empty()
            && !self
                .statuses
                .contains(&settings.statuses.kind_of(&inner.status.symbol))
        {
            return false;
        }
        if !self.priorities.is_empty() && !self.priorities.contains(&inner.priority) {
            return false;
        }
        let dates = [
            &inner.due,
            &inner.scheduled,
            &inner.start,
            &inner.created,
            &inner.done,
            &inner.cancelled,
        ];
        if self.date_filters.iter().any(|(bounds, index)| {
            bounds
                .as_ref()
                .is_some_and(|bounds| !bounds.matches(dates[*index]))
        }) {
            return false;
        }
        if !self.tags.is_empty()
            && !inner.tags.iter().any(|tag| {
                if *tag == settings.global_filter {
                    return false;
                }
                let tag = normal_tag(tag);
                self.tags.iter().any(|wanted| {
                    tag == *wanted
                        || (!self.exact_tags
                            && tag.starts_with(wanted.as_str())
                            && tag[wanted.len()..].starts_with('/'))
                })
            })
        {
            return false;
        }
        if !self.headings.is_empty()
            && !row
                .heading
                .as_ref()
                .is_some_and(|heading| self.headings.contains(&heading.to_lowercase()))
        {
            return false;
        }
        !(self.top_level_only
            && row
                .parent_line
                .is_some_and(|parent| task_lines.contains(&parent)))
    }
}

/// Listing phase 3: the matches in the requested order. Rows come by path then line, so a stable
/// sort keeps that order among equal keys.
fn sort_matches(sort: SortBy, found: &mut [Match]) {
    match sort {
        SortBy::Position => {}
        SortBy::Modified => found.sort_by_key(|entry| std::cmp::Reverse(entry.modified)),
        SortBy::Priority => found.sort_by(|a, b| {
            a.priority
                .cmp(&b.priority)
                .then_with(|| compare_dates(a.date, b.date))
        }),
        _ => found.sort_by(|a, b| {
            compare_dates(a.date, b.date).then_with(|| a.priority.cmp(&b.priority))
        }),
    }
}

/// Listing phase 4: the page's tasks as items, each note's tasks built once.
fn page_items(
    by_note: &[(&str, Vec<&TaskRow>)],
    page: Vec<(usize, usize)>,
    settings: &TaskSettings,
) -> Vec<TaskItem> {
    let mut built: HashMap<usize, NoteTasks> = HashMap::new();
    let mut tasks = Vec::with_capacity(page.len());
    for (note_index, line) in page {
        let Some((path, group)) = by_note.get(note_index) else {
            continue;
        };
        let note = built
            .entry(note_index)
            .or_insert_with(|| NoteTasks::from_sites(group, settings));
        if let Some(task) = note.tasks.iter().find(|task| task.line == line) {
            tasks.push(note.item(path, task, settings));
        }
    }
    tasks
}

/// An update request, checked before the note is read.
struct UpdatePlan {
    /// The new description, with the global filter added where the plugin needs it.
    description: Option<String>,
    /// The lines of the new sub-tasks, already checked to read back as written.
    subtask_lines: Vec<String>,
    position: LanePosition,
}

/// Update phase 1: the checks that need no note text.
fn check_update(request: &UpdateTask, settings: &TaskSettings) -> Result<UpdatePlan, OpsError> {
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
fn find_task<'a>(
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
struct Rewritten {
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
fn rewrite_task(
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
fn place_task(
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
