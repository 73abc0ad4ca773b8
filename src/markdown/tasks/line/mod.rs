//! One task line, read and written exactly as the Tasks plugin does: the checkbox line grammar, the
//! fields peeled off the END of the line (emoji signifiers and Dataview `[key:: value]`/`(key:: value)`
//! inline fields, in one pass when both are enabled), the plugin's field order on write, and the
//! toggle that stamps or strips done and cancelled dates and spawns the next occurrence of a
//! recurring task. Never panics; today is passed in.

use super::recurrence::Recurrence;
use super::status::{Status, StatusRegistry, StatusType};
use jiff::ToSpan;
use jiff::civil::Date;

mod read;

pub use read::{ParsedLine, description_tags, parse_line_fields, parse_task_line};
#[cfg(test)]
mod tests;

/// Which field syntaxes are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskFormat {
    /// The plugin's emoji signifiers only (`📅 2025-06-15`).
    Emoji,
    /// Dataview inline fields only (`[due:: 2025-06-15]`).
    Dataview,
    /// Both in one pass; each task is written back in the style it was read in.
    Both,
}

/// The plugin settings that change how lines are read and toggled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskSettings {
    pub format: TaskFormat,
    /// Style for tasks Quire writes from scratch: `true` for Dataview fields.
    pub write_dataview: bool,
    /// A line is a task only if its body contains this text (empty: every checkbox line).
    pub global_filter: String,
    /// Whether the plugin hides the global filter when it shows a description.
    pub remove_global_filter: bool,
    pub statuses: StatusRegistry,
    pub set_done_date: bool,
    pub set_cancelled_date: bool,
    pub set_created_date: bool,
    /// Whether a new occurrence goes below the completed task instead of above it.
    pub recurrence_on_next_line: bool,
}

impl Default for TaskSettings {
    /// The plugin's defaults.
    fn default() -> Self {
        TaskSettings {
            format: TaskFormat::Emoji,
            write_dataview: false,
            global_filter: String::new(),
            remove_global_filter: false,
            statuses: StatusRegistry::default(),
            set_done_date: true,
            set_cancelled_date: true,
            set_created_date: false,
            recurrence_on_next_line: false,
        }
    }
}

impl TaskSettings {
    /// Settings from the plugin's `data.json`, reading both formats in one pass; keys that are
    /// missing or of the wrong type keep the plugin's defaults.
    pub fn from_plugin_settings(settings: &serde_json::Value) -> TaskSettings {
        let defaults = TaskSettings::default();
        let flag = |key: &str, default: bool| {
            settings
                .get(key)
                .and_then(serde_json::Value::as_bool)
                .unwrap_or(default)
        };
        TaskSettings {
            format: TaskFormat::Both,
            write_dataview: settings
                .get("taskFormat")
                .and_then(serde_json::Value::as_str)
                == Some("dataview"),
            global_filter: settings
                .get("globalFilter")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("")
                .to_owned(),
            remove_global_filter: flag("removeGlobalFilter", defaults.remove_global_filter),
            statuses: StatusRegistry::from_plugin_settings(settings),
            set_done_date: flag("setDoneDate", defaults.set_done_date),
            set_cancelled_date: flag("setCancelledDate", defaults.set_cancelled_date),
            set_created_date: flag("setCreatedDate", defaults.set_created_date),
            recurrence_on_next_line: flag("recurrenceOnNextLine", defaults.recurrence_on_next_line),
        }
    }
}

/// A date field: a real day, or text that looks like a date but is not one (`2025-02-30`), which
/// stays visible as invalid rather than being dropped or coerced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskDate {
    Valid(Date),
    Invalid(String),
}

impl TaskDate {
    /// Reads `YYYY-MM-DD` (already matched as digits).
    pub fn parse(text: &str) -> TaskDate {
        let part = |range: std::ops::Range<usize>| text.get(range);
        let year = part(0..4).and_then(|year| year.parse::<i16>().ok());
        let month = part(5..7).and_then(|month| month.parse::<i8>().ok());
        let day = part(8..10).and_then(|day| day.parse::<i8>().ok());
        match (year, month, day) {
            (Some(year), Some(month), Some(day)) => Date::new(year, month, day)
                .map(TaskDate::Valid)
                .unwrap_or_else(|_| TaskDate::Invalid(text.to_owned())),
            _ => TaskDate::Invalid(text.to_owned()),
        }
    }

    pub fn valid(&self) -> Option<Date> {
        match self {
            TaskDate::Valid(date) => Some(*date),
            TaskDate::Invalid(_) => None,
        }
    }

    /// `YYYY-MM-DD`, or the text as written for an invalid date.
    pub fn as_written(&self) -> String {
        match self {
            TaskDate::Valid(date) => format_date(*date),
            TaskDate::Invalid(text) => text.clone(),
        }
    }
}

/// `YYYY-MM-DD` with a four-digit year, as the plugin writes dates.
pub fn format_date(date: Date) -> String {
    format!("{:04}-{:02}-{:02}", date.year(), date.month(), date.day())
}

/// The plugin's priorities; the number is its sort key ("0" highest .. "5" lowest, "3" none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Priority {
    Highest,
    High,
    Medium,
    None,
    Low,
    Lowest,
}

impl Priority {
    pub fn number(self) -> u8 {
        match self {
            Priority::Highest => 0,
            Priority::High => 1,
            Priority::Medium => 2,
            Priority::None => 3,
            Priority::Low => 4,
            Priority::Lowest => 5,
        }
    }

    /// The plugin's name (`Normal` for none).
    pub fn name(self) -> &'static str {
        match self {
            Priority::Highest => "Highest",
            Priority::High => "High",
            Priority::Medium => "Medium",
            Priority::None => "Normal",
            Priority::Low => "Low",
            Priority::Lowest => "Lowest",
        }
    }

    /// Reads a name as a client writes it (`high`, `Normal`, `none`, or the number).
    pub fn parse(text: &str) -> Option<Priority> {
        match text.trim().to_ascii_lowercase().as_str() {
            "highest" | "0" => Some(Priority::Highest),
            "high" | "1" => Some(Priority::High),
            "medium" | "2" => Some(Priority::Medium),
            "normal" | "none" | "3" => Some(Priority::None),
            "low" | "4" => Some(Priority::Low),
            "lowest" | "5" => Some(Priority::Lowest),
            _ => None,
        }
    }

    fn emoji(self) -> &'static str {
        match self {
            Priority::Highest => "🔺",
            Priority::High => "⏫",
            Priority::Medium => "🔼",
            Priority::None => "",
            Priority::Low => "🔽",
            Priority::Lowest => "⏬",
        }
    }

    fn dataview(self) -> &'static str {
        match self {
            Priority::Highest => "highest",
            Priority::High => "high",
            Priority::Medium => "medium",
            Priority::None => "",
            Priority::Low => "low",
            Priority::Lowest => "lowest",
        }
    }
}

/// What happens to a task line when it is completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnCompletion {
    Ignore,
    Keep,
    Delete,
}

impl OnCompletion {
    fn parse(text: &str) -> OnCompletion {
        match text.trim().to_lowercase().as_str() {
            "keep" => OnCompletion::Keep,
            "delete" => OnCompletion::Delete,
            _ => OnCompletion::Ignore,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            OnCompletion::Ignore => "",
            OnCompletion::Keep => "keep",
            OnCompletion::Delete => "delete",
        }
    }
}

/// One task as the plugin models it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    /// Everything before the list marker: spaces, tabs and block-quote `>`s.
    pub indentation: String,
    /// `-`, `*`, `+`, `1.` or `1)`.
    pub list_marker: String,
    pub status: Status,
    /// The text left after the trailing fields are peeled off (trailing tags put back).
    pub description: String,
    pub tags: Vec<String>,
    pub priority: Priority,
    pub created: Option<TaskDate>,
    pub start: Option<TaskDate>,
    pub scheduled: Option<TaskDate>,
    pub due: Option<TaskDate>,
    pub done: Option<TaskDate>,
    pub cancelled: Option<TaskDate>,
    pub recurrence: Option<Recurrence>,
    pub on_completion: OnCompletion,
    pub id: String,
    pub depends_on: Vec<String>,
    /// ` ^block-id` with its leading space, or empty.
    pub block_link: String,
    /// Whether the task is written with Dataview fields.
    pub dataview: bool,
}

/// How invalid dates are written back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InvalidDates {
    /// As the plugin writes them: `Invalid date`.
    AsPlugin,
    /// As they were read, so the user's text is not lost.
    AsWritten,
}

impl Task {
    /// A task with `status` and no description or fields, in the line's place (`indentation`,
    /// `list_marker`), written in Dataview style when `dataview`.
    pub fn blank(indentation: &str, list_marker: &str, status: Status, dataview: bool) -> Task {
        Task {
            indentation: indentation.to_owned(),
            list_marker: list_marker.to_owned(),
            status,
            description: String::new(),
            tags: Vec::new(),
            priority: Priority::None,
            created: None,
            start: None,
            scheduled: None,
            due: None,
            done: None,
            cancelled: None,
            recurrence: None,
            on_completion: OnCompletion::Ignore,
            id: String::new(),
            depends_on: Vec::new(),
            block_link: String::new(),
            dataview,
        }
    }

    /// The description as the plugin shows it: without the global filter when it is set to hide it.
    pub fn shown_description(&self, settings: &TaskSettings) -> String {
        if settings.remove_global_filter && !settings.global_filter.is_empty() {
            let removed = self.description.replacen(&settings.global_filter, "", 1);
            return removed.split_whitespace().collect::<Vec<_>>().join(" ");
        }
        self.description.clone()
    }

    /// The whole line in the plugin's field order.
    pub fn to_line(&self, invalid: InvalidDates) -> String {
        format!(
            "{}{} [{}] {}",
            self.indentation,
            self.list_marker,
            self.status.symbol,
            self.body(invalid)
        )
    }

    /// Everything after the checkbox, in the plugin's field order: description, id, depends on,
    /// priority, recurrence, on completion, created, start, scheduled, due, cancelled, done, block link.
    pub fn body(&self, invalid: InvalidDates) -> String {
        let date = |value: &Option<TaskDate>| {
            value.as_ref().map(|value| match (value, invalid) {
                (TaskDate::Valid(date), _) => format_date(*date),
                (TaskDate::Invalid(_), InvalidDates::AsPlugin) => "Invalid date".to_owned(),
                (TaskDate::Invalid(text), InvalidDates::AsWritten) => text.clone(),
            })
        };
        let components: [(&str, &str, Option<String>); 11] = [
            (
                "🆔",
                "id::",
                Some(self.id.clone()).filter(|id| !id.is_empty()),
            ),
            (
                "⛔",
                "dependsOn::",
                Some(self.depends_on.join(",")).filter(|ids| !ids.is_empty()),
            ),
            (
                if self.dataview {
                    "priority::"
                } else {
                    self.priority.emoji()
                },
                "",
                (self.priority != Priority::None).then(|| {
                    if self.dataview {
                        self.priority.dataview().to_owned()
                    } else {
                        String::new()
                    }
                }),
            ),
            (
                "🔁",
                "repeat::",
                self.recurrence.as_ref().map(Recurrence::text),
            ),
            (
                "🏁",
                "onCompletion::",
                Some(self.on_completion.as_str().to_owned()).filter(|value| !value.is_empty()),
            ),
            ("➕", "created::", date(&self.created)),
            ("🛫", "start::", date(&self.start)),
            ("⏳", "scheduled::", date(&self.scheduled)),
            ("📅", "due::", date(&self.due)),
            ("❌", "cancelled::", date(&self.cancelled)),
            ("✅", "completion::", date(&self.done)),
        ];
        let mut text = self.description.clone();
        for (emoji, key, value) in components {
            let Some(value) = value else { continue };
            if self.dataview {
                // The priority row carries its key in the first slot in Dataview style.
                let key = if key.is_empty() { emoji } else { key };
                text.push_str(&format!("  [{key} {value}]"));
            } else if value.is_empty() {
                text.push(' ');
                text.push_str(emoji);
            } else {
                text.push_str(&format!(" {emoji} {value}"));
            }
        }
        text.push_str(&self.block_link);
        text
    }

    /// The tasks a change to `new_status` leaves, in file order, as the plugin's toggle makes
    /// them: done/cancelled dates stamped or stripped, the next occurrence of a recurring task
    /// above (or, by setting, below) the completed one, and the completed one dropped for
    /// `onCompletion: delete`.
    pub fn with_status(
        &self,
        new_status: &Status,
        settings: &TaskSettings,
        today: Date,
    ) -> Vec<Task> {
        if *new_status == self.status {
            return vec![self.clone()];
        }
        let was_done = self.status.kind == StatusType::Done;
        let was_cancelled = self.status.kind == StatusType::Cancelled;
        let becomes_done = new_status.kind == StatusType::Done;
        let done = if becomes_done {
            if was_done {
                self.done.clone()
            } else {
                settings.set_done_date.then_some(TaskDate::Valid(today))
            }
        } else {
            None
        };
        let cancelled = if new_status.kind == StatusType::Cancelled {
            if was_cancelled {
                self.cancelled.clone()
            } else {
                settings
                    .set_cancelled_date
                    .then_some(TaskDate::Valid(today))
            }
        } else {
            None
        };
        let mut next = None;
        if becomes_done
            && !was_done
            && let Some(recurrence) = &self.recurrence
        {
            next = self.next_occurrence(recurrence, new_status, settings, today);
        }
        let toggled = Task {
            status: new_status.clone(),
            done,
            cancelled,
            ..self.clone()
        };
        let delete_completed =
            self.on_completion == OnCompletion::Delete && becomes_done && !was_done;
        let mut tasks = Vec::new();
        if let Some(next) = next {
            tasks.push(next);
        }
        if !delete_completed {
            tasks.push(toggled);
        }
        if settings.recurrence_on_next_line {
            tasks.reverse();
        }
        tasks
    }

    /// The plugin's toggle: to the next status in the registry's chain.
    pub fn toggle(&self, settings: &TaskSettings, today: Date) -> Vec<Task> {
        let next = settings.statuses.next(&self.status);
        self.with_status(&next, settings, today)
    }

    fn next_occurrence(
        &self,
        recurrence: &Recurrence,
        completed: &Status,
        settings: &TaskSettings,
        today: Date,
    ) -> Option<Task> {
        let reference = self
            .due
            .as_ref()
            .or(self.scheduled.as_ref())
            .or(self.start.as_ref());
        let next_reference =
            recurrence.next_reference(reference.and_then(TaskDate::valid), today)?;
        let shift = |date: &Option<TaskDate>| -> Option<TaskDate> {
            let date = date.as_ref()?;
            let (Some(reference), Some(value)) =
                (reference.and_then(TaskDate::valid), date.valid())
            else {
                return Some(TaskDate::Invalid(date.as_written()));
            };
            let days = (value - reference).get_days();
            Some(
                next_reference
                    .checked_add(i64::from(days).days())
                    .map(TaskDate::Valid)
                    .unwrap_or_else(|_| TaskDate::Invalid(date.as_written())),
            )
        };
        let (start, scheduled, due) = if reference.is_some() {
            (shift(&self.start), shift(&self.scheduled), shift(&self.due))
        } else {
            (None, None, None)
        };
        Some(Task {
            status: settings.statuses.next_recurrence_status(completed),
            start,
            scheduled,
            due,
            created: settings.set_created_date.then_some(TaskDate::Valid(today)),
            done: None,
            cancelled: None,
            block_link: String::new(),
            id: String::new(),
            depends_on: Vec::new(),
            ..self.clone()
        })
    }
}
