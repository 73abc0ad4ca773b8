//! `vault_list_tasks`: the request read into a plan, answered in SQL over the index's reading of
//! each line, or in memory where the settings make SQL differ from the plugin; filtered, sorted
//! and paged.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use jiff::civil::Date;

use super::dates::{DateBounds, compare_dates};
use super::parse::{normal_tag, priority_filter, status_type_filter};
use super::reading::{NoteTasks, cached_parse};
use super::types::{ListTasks, SortBy, TaskItem, TaskList};
use crate::index::{TaskDateRange, TaskOrder, TaskQuery, TaskRow, TaskScope};
use crate::markdown::tasks::{
    ParsedLine, Priority, StatusType, Task, TaskFormat, TaskSettings, format_date,
};
use crate::ops::access::Maintenance;
use crate::ops::error::OpsError;
use crate::ops::inputs::parse_path;
use crate::ops::paging::{Cursor, check_limit};
use crate::ops::shared::{Context, Ops};

impl Ops {
    /// The Tasks plugin's settings for this vault, read now.
    pub(super) fn task_settings(&self) -> TaskSettings {
        TaskSettings::from_plugin_settings(
            &self
                .walls
                .vault(&Maintenance::new())
                .tasks_plugin_settings(),
        )
    }

    /// A listing request read and checked once, for either way of answering it.
    pub(super) fn list_plan(
        &self,
        ctx: &Context,
        request: &ListTasks,
    ) -> Result<ListPlan, OpsError> {
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
    pub(super) fn list_tasks_with_plan(
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
    pub(super) fn visible_notes<'a>(
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
}

/// A listing request, read and checked.
pub(super) struct ListPlan {
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
    pub(super) fn sql_query(&self, settings: &TaskSettings) -> Option<TaskQuery> {
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

/// A task that passed the listing's filters: its sort keys and where it is.
pub(super) struct Match {
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
    pub(super) fn matching_tasks(
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
    pub(super) fn admits(
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
pub(super) fn sort_matches(sort: SortBy, found: &mut [Match]) {
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
pub(super) fn page_items(
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
