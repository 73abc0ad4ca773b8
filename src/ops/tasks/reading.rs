//! The tasks of one note under the settings of the call: each checkbox line read once (a bounded
//! memo shared by every vault) and the sub-task relations between them.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, LazyLock, Mutex};

use super::parse::{date_text, priority_word};
use super::types::{SubtaskProgress, TaskItem};
use crate::index::TaskRow;
use crate::markdown::tasks::{
    InvalidDates, NoteTask, ParsedLine, Recurrence, StatusType, TaskDate, TaskFormat, TaskSettings,
    parse_line_fields,
};

/// Lines already read, by format and text: reading a line is what a listing spends its time on, and
/// the same lines are listed again and again. A pure memo (a line's reading never changes; settings
/// are applied after it), shared by every vault and bounded.
pub(super) type LineCache = HashMap<(bool, bool, String), Option<Arc<ParsedLine>>>;
pub(super) static LINE_CACHE: LazyLock<Mutex<LineCache>> = LazyLock::new(Default::default);
pub(super) const LINE_CACHE_LIMIT: usize = 250_000;

pub(super) fn cached_parse(line: &str, format: TaskFormat) -> Option<Arc<ParsedLine>> {
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
pub(super) struct NoteTasks {
    pub(super) tasks: Vec<NoteTask>,
    children: HashMap<usize, Vec<usize>>,
}

impl NoteTasks {
    pub(super) fn from_sites(rows: &[&TaskRow], settings: &TaskSettings) -> NoteTasks {
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

    pub(super) fn new(tasks: Vec<NoteTask>) -> NoteTasks {
        let task_lines: HashSet<usize> = tasks.iter().map(|task| task.line).collect();
        let mut children: HashMap<usize, Vec<usize>> = HashMap::new();
        for task in &tasks {
            if let Some(parent) = task.parent_line.filter(|line| task_lines.contains(line)) {
                children.entry(parent).or_default().push(task.line);
            }
        }
        NoteTasks { tasks, children }
    }

    pub(super) fn progress(&self, line: usize) -> Option<SubtaskProgress> {
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

    pub(super) fn item(&self, path: &str, task: &NoteTask, settings: &TaskSettings) -> TaskItem {
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
