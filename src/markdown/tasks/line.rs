//! One task line, read and written exactly as the Tasks plugin does: the checkbox line grammar, the
//! fields peeled off the END of the line (emoji signifiers and Dataview `[key:: value]`/`(key:: value)`
//! inline fields, in one pass when both are enabled), the plugin's field order on write, and the
//! toggle that stamps or strips done and cancelled dates and spawns the next occurrence of a
//! recurring task. Never panics; today is passed in.

use super::recurrence::Recurrence;
use super::status::{Status, StatusRegistry, StatusType};
use jiff::ToSpan;
use jiff::civil::Date;
use regex::Regex;
use std::sync::LazyLock;

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

/// Built once: every checkbox line of an indexing pass is read with it.
static DEFAULT_STATUSES: LazyLock<StatusRegistry> = LazyLock::new(StatusRegistry::default);
static BLOCK_LINK: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r" \^[a-zA-Z0-9-]+$").ok());
static HASHTAGS: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r#"(^|\s)#[^ !@#$%^&*(),.?":{}|<>]+"#).ok());
/// The characters a tag at the end of a task line cannot hold (the plugin's class).
const NOT_IN_TRAILING_TAG: [char; 21] = [
    ' ', '!', '@', '#', '$', '%', '^', '&', '*', '(', ')', ',', '.', '?', '"', ':', '{', '}', '|',
    '<', '>',
];

/// Where the plugin's trailing-tag regex `(^|\s)#[^ !@#$%^&*(),.?":{}|<>]+$` matches `line`
/// (the start of the whole match), found without running it: the class leaves out `#`, so only
/// the last `#` can start the tag, and the match begins at the one blank in front of it or at
/// the line's start. As a regex it was a twentieth of a cold index build.
fn hashtag_at_end(line: &str) -> Option<usize> {
    let hash = line.rfind('#')?;
    let tag = &line[hash + 1..];
    if tag.is_empty() || tag.contains(NOT_IN_TRAILING_TAG) {
        return None;
    }
    if hash == 0 {
        return Some(0);
    }
    let before = line[..hash].chars().next_back()?;
    // Rust's `char::is_whitespace` is Unicode White_Space, the regex crate's `\s`.
    before.is_whitespace().then(|| hash - before.len_utf8())
}

/// The fields, in the order the plugin tries them on each pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Priority,
    Done,
    Cancelled,
    Due,
    Scheduled,
    Start,
    Created,
    Recurrence,
    OnCompletion,
    Tag,
    Id,
    DependsOn,
}

const FIELDS: [Field; 12] = [
    Field::Priority,
    Field::Done,
    Field::Cancelled,
    Field::Due,
    Field::Scheduled,
    Field::Start,
    Field::Created,
    Field::Recurrence,
    Field::OnCompletion,
    Field::Tag,
    Field::Id,
    Field::DependsOn,
];

const DATE: &str = "([0-9]{4}-[0-9]{2}-[0-9]{2})";
const ID: &str = "[a-zA-Z0-9_-]+";

/// The characters one of which a field's emoji form must contain; a line without any of them
/// cannot hold the field, which spares the regex (most lines have few fields).
fn emoji_signifiers(field: Field) -> &'static [char] {
    match field {
        Field::Priority => &['🔺', '⏫', '🔼', '🔽', '⏬'],
        Field::Done => &['✅'],
        Field::Cancelled => &['❌'],
        Field::Due => &['📅', '📆', '🗓'],
        Field::Scheduled => &['⏳', '⌛'],
        Field::Start => &['🛫'],
        Field::Created => &['➕'],
        Field::Recurrence => &['🔁'],
        Field::OnCompletion => &['🏁'],
        Field::Tag => &['#'],
        Field::Id => &['🆔'],
        Field::DependsOn => &['⛔'],
    }
}

/// Which of `FIELDS` (as bits of their positions) have a signifier in `line`: one pass over the
/// line instead of one per field and pass (a third of the time spent reading task lines).
fn signified_fields(line: &str) -> u16 {
    let mut present = 0;
    for c in line.chars() {
        // Every signifier is '#' or outside ASCII.
        if c.is_ascii() && c != '#' {
            continue;
        }
        for (bit, field) in FIELDS.iter().enumerate() {
            if emoji_signifiers(*field).contains(&c) {
                present |= 1 << bit;
            }
        }
    }
    present
}

/// The emoji signifier regex of a field (the tag regex for `Tag`).
fn emoji_pattern(field: Field) -> String {
    let value = |symbols: &str, value: &str| format!("{symbols}\u{FE0F}? *{value}$");
    match field {
        Field::Priority => "(🔺|⏫|🔼|🔽|⏬)\u{FE0F}?$".to_owned(),
        Field::Done => value("✅", DATE),
        Field::Cancelled => value("❌", DATE),
        Field::Due => value("(?:📅|📆|🗓)", DATE),
        Field::Scheduled => value("(?:⏳|⌛)", DATE),
        Field::Start => value("🛫", DATE),
        Field::Created => value("➕", DATE),
        Field::Recurrence => value("🔁", "([a-zA-Z0-9, !]+)"),
        Field::OnCompletion => value("🏁", "([a-zA-Z]+)"),
        Field::Tag => String::new(), // `hashtag_at_end`
        Field::Id => value("🆔", &format!("({ID})")),
        Field::DependsOn => value("⛔", &format!("({ID}( *, *{ID} *)*)")),
    }
}

/// The inner `key:: value` regex of a field's Dataview form.
fn dataview_inner(field: Field) -> Option<String> {
    let inner = |key: &str, value: &str| Some(format!("{key}:: *{value}"));
    match field {
        Field::Priority => inner("priority", "(highest|high|medium|low|lowest)"),
        Field::Done => inner("completion", DATE),
        Field::Cancelled => inner("cancelled", DATE),
        Field::Due => inner("due", DATE),
        Field::Scheduled => inner("scheduled", DATE),
        Field::Start => inner("start", DATE),
        Field::Created => inner("created", DATE),
        Field::Recurrence => inner("repeat", "([a-zA-Z0-9, !]+)"),
        Field::OnCompletion => inner("onCompletion", "([a-zA-Z]+)"),
        Field::Tag => None,
        Field::Id => inner("id", &format!("({ID})")),
        Field::DependsOn => inner("dependsOn", &format!("({ID}( *, *{ID} *)*)")),
    }
}

struct FieldRegexes {
    emoji: Option<Regex>,
    /// `[key:: value]` and `(key:: value)`, each at the end of the line (a trailing comma allowed).
    dataview: Vec<Regex>,
}

static FIELD_REGEXES: LazyLock<Vec<FieldRegexes>> = LazyLock::new(|| {
    FIELDS
        .iter()
        .map(|field| {
            let emoji = match field {
                Field::Tag => None, // `hashtag_at_end`
                _ => Regex::new(&emoji_pattern(*field)).ok(),
            };
            let dataview = dataview_inner(*field)
                .map(|inner| {
                    [(r"\[", r"\]"), (r"\(", r"\)")]
                        .iter()
                        .filter_map(|(open, close)| {
                            Regex::new(&format!("{open} *{inner} *{close}(?: *,)?$")).ok()
                        })
                        .collect()
                })
                .unwrap_or_default();
            FieldRegexes { emoji, dataview }
        })
        .collect()
});

/// JavaScript's `String.prototype.trim`: Unicode white space plus the byte-order mark.
fn js_trim(text: &str) -> &str {
    text.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}')
}

/// The parts of a checkbox line before its fields are read.
struct Components<'a> {
    indentation: &'a str,
    list_marker: &'a str,
    symbol: &'a str,
    body: String,
    block_link: String,
}

fn components(line: &str) -> Option<Components<'_>> {
    let [indentation, list_marker, symbol, body] = task_line_parts(line)?;
    let mut body = js_trim(body).to_owned();
    let mut block_link = String::new();
    if let Some(link) = BLOCK_LINK.as_ref().and_then(|regex| regex.find(&body)) {
        block_link = link.as_str().to_owned();
        body = js_trim(&body[..link.start()]).to_owned();
    }
    Some(Components {
        indentation,
        list_marker,
        symbol,
        body,
        block_link,
    })
}

/// The four groups of the plugin's task-line regex `^([\s>]*)([-*+]|[0-9]+[.)]) +\[(.)\] *(.*)`,
/// read by hand: none of its repetitions can give anything back to the next part (each is
/// followed by a character it cannot match), so one greedy pass finds what the regex finds. The
/// regex's capture pass over the whole line was the dearest step of reading a task.
fn task_line_parts(line: &str) -> Option<[&str; 4]> {
    // `\s` is Unicode White_Space, as `char::is_whitespace`; `.` is anything but a newline.
    let indentation_end = line
        .find(|c: char| !(c.is_whitespace() || c == '>'))
        .unwrap_or(line.len());
    let rest = &line[indentation_end..];
    let marker_len = match rest.as_bytes().first()? {
        b'-' | b'*' | b'+' => 1,
        b'0'..=b'9' => {
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            match rest.as_bytes().get(digits)? {
                b'.' | b')' => digits + 1,
                _ => return None,
            }
        }
        _ => return None,
    };
    let after_marker = &rest[marker_len..];
    let box_start = after_marker.trim_start_matches(' ');
    if box_start.len() == after_marker.len() {
        return None;
    }
    let inside = box_start.strip_prefix('[')?;
    let symbol = inside.chars().next().filter(|c| *c != '\n')?;
    let after_box = inside[symbol.len_utf8()..].strip_prefix(']')?;
    let body = after_box.trim_start_matches(' ');
    let body = &body[..body.find('\n').unwrap_or(body.len())];
    Some([
        &line[..indentation_end],
        &rest[..marker_len],
        &inside[..symbol.len_utf8()],
        body,
    ])
}

/// The hashtags of a description, as the plugin finds them.
pub fn description_tags(description: &str) -> Vec<String> {
    HASHTAGS
        .as_ref()
        .map(|regex| {
            regex
                .find_iter(description)
                .map(|tag| js_trim(tag.as_str()).to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Reads one line. `None` when it is not a task: no checkbox list item, or the global filter is
/// missing from its body.
pub fn parse_task_line(line: &str, settings: &TaskSettings) -> Option<Task> {
    parse_line_fields(line, settings.format)?.under(settings)
}

/// A checkbox line read without the settings that only decide what it means: which statuses exist,
/// the global filter and the style for lines without fields. Reading is the expensive part, so a
/// caller may keep these and apply the settings of the moment with [`ParsedLine::under`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedLine {
    /// The task with the default statuses, all its tags, and Emoji style unless its fields are
    /// Dataview ones.
    task: Task,
    /// The text after the checkbox, which must contain the global filter.
    body: String,
    /// The style its fields show (`Some(true)`: Dataview), `None` when it has no fields.
    dataview: Option<bool>,
}

impl ParsedLine {
    /// The task as read, with the default statuses and every tag (the global filter included).
    pub fn task(&self) -> &Task {
        &self.task
    }

    /// The text after the checkbox, where the global filter is looked for.
    pub fn body(&self) -> &str {
        &self.body
    }

    /// Whether the global filter lets the plugin see this task.
    pub fn included(&self, settings: &TaskSettings) -> bool {
        settings.global_filter.is_empty() || self.body.contains(&settings.global_filter)
    }

    /// The task under `settings`, or `None` when the global filter excludes it.
    pub fn under(&self, settings: &TaskSettings) -> Option<Task> {
        if !self.included(settings) {
            return None;
        }
        let mut task = self.task.clone();
        task.status = settings.statuses.by_symbol(&task.status.symbol);
        if !settings.global_filter.is_empty() {
            task.tags.retain(|tag| *tag != settings.global_filter);
        }
        task.dataview = match settings.format {
            TaskFormat::Emoji => false,
            TaskFormat::Dataview => true,
            TaskFormat::Both => self.dataview.unwrap_or(settings.write_dataview),
        };
        Some(task)
    }
}

/// Reads a checkbox line's fields in `format`; `None` when it is no checkbox list item.
pub fn parse_line_fields(line: &str, format: TaskFormat) -> Option<ParsedLine> {
    let parts = components(line)?;
    let body = parts.body.clone();
    let status = DEFAULT_STATUSES.by_symbol(parts.symbol);
    let mut task = Task {
        block_link: parts.block_link,
        ..Task::blank(parts.indentation, parts.list_marker, status, false)
    };
    let read_emoji = format != TaskFormat::Dataview;
    let read_dataview = format != TaskFormat::Emoji;
    let mut line = parts.body;
    let mut recurrence_text = String::new();
    let mut trailing_tags = String::new();
    let (mut emoji_fields, mut dataview_fields) = (0usize, 0usize);
    // Peeling fields off only shortens the line, so a signifier absent now stays absent; one
    // present now may be gone later, and the regex (which needs it) then finds nothing.
    let signified = signified_fields(&line);
    // Fields come off the end in any order; each pass tries every field once, and the plugin stops
    // after 21 passes.
    for _ in 0..21 {
        let mut matched = false;
        for (bit, (field, regexes)) in FIELDS.iter().zip(FIELD_REGEXES.iter()).enumerate() {
            let signified = signified & (1 << bit) != 0;
            if *field == Field::Tag {
                // Tags are read in either format, and have no Dataview form.
                if signified && let Some(start) = hashtag_at_end(&line) {
                    let tag = js_trim(&line[start..]).to_owned();
                    trailing_tags = if trailing_tags.is_empty() {
                        tag
                    } else {
                        format!("{tag} {trailing_tags}")
                    };
                    line = js_trim(&line[..start]).to_owned();
                    matched = true;
                }
                continue;
            }
            let emoji = regexes.emoji.iter().filter(|_| read_emoji && signified);
            // A Dataview field closes the line with `]` or `)` (a trailing comma allowed).
            let dataview_closes = read_dataview
                && line.contains("::")
                && line.trim_end_matches([' ', ',']).ends_with([']', ')']);
            let dataview = regexes.dataview.iter().filter(|_| dataview_closes);
            let candidates = emoji
                .map(|regex| (regex, false))
                .chain(dataview.map(|regex| (regex, true)));
            for (regex, is_dataview) in candidates {
                let Some(found) = regex.captures(&line) else {
                    continue;
                };
                let (Some(whole), value) =
                    (found.get(0), found.get(1).map(|v| v.as_str().to_owned()))
                else {
                    continue;
                };
                let value = value.unwrap_or_default();
                let start = whole.start();
                match field {
                    Field::Priority => {
                        task.priority = if is_dataview {
                            match value.as_str() {
                                "highest" => Priority::Highest,
                                "high" => Priority::High,
                                "medium" => Priority::Medium,
                                "low" => Priority::Low,
                                "lowest" => Priority::Lowest,
                                _ => Priority::None,
                            }
                        } else {
                            match value.as_str() {
                                "🔺" => Priority::Highest,
                                "⏫" => Priority::High,
                                "🔼" => Priority::Medium,
                                "🔽" => Priority::Low,
                                "⏬" => Priority::Lowest,
                                _ => Priority::None,
                            }
                        }
                    }
                    Field::Done => task.done = Some(TaskDate::parse(&value)),
                    Field::Cancelled => task.cancelled = Some(TaskDate::parse(&value)),
                    Field::Due => task.due = Some(TaskDate::parse(&value)),
                    Field::Scheduled => task.scheduled = Some(TaskDate::parse(&value)),
                    Field::Start => task.start = Some(TaskDate::parse(&value)),
                    Field::Created => task.created = Some(TaskDate::parse(&value)),
                    Field::Recurrence => recurrence_text = js_trim(&value).to_owned(),
                    Field::OnCompletion => task.on_completion = OnCompletion::parse(&value),
                    Field::Tag => {} // read above
                    Field::Id => task.id = js_trim(&value).to_owned(),
                    Field::DependsOn => {
                        task.depends_on = value
                            .replace(' ', "")
                            .split(',')
                            .filter(|item| !item.is_empty())
                            .map(str::to_owned)
                            .collect();
                    }
                }
                if is_dataview {
                    dataview_fields += 1;
                } else {
                    emoji_fields += 1;
                }
                line = js_trim(&line[..start]).to_owned();
                matched = true;
            }
        }
        if !matched {
            break;
        }
    }
    if !recurrence_text.is_empty() {
        // The plugin cannot build a rule on a reference date that is not a date.
        let reference = task
            .due
            .as_ref()
            .or(task.scheduled.as_ref())
            .or(task.start.as_ref());
        let reference_invalid = matches!(reference, Some(TaskDate::Invalid(_)));
        task.recurrence = Recurrence::parse(&recurrence_text)
            .filter(|recurrence| recurrence.when_done() || !reference_invalid);
    }
    if !trailing_tags.is_empty() {
        line.push(' ');
        line.push_str(&trailing_tags);
    }
    task.tags = description_tags(&line);
    task.description = line;
    let dataview = if dataview_fields > 0 && emoji_fields == 0 {
        Some(true)
    } else if emoji_fields > 0 {
        Some(false)
    } else {
        None
    };
    Some(ParsedLine {
        task,
        body,
        dataview,
    })
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn every_1_weeks_is_every_week() {
        // Found by fuzzing: written back as the plugin writes it (`every week`), the rule read
        // again differed from the first reading by an interval of 1.
        let settings = TaskSettings::default();
        let task =
            parse_task_line("- [ ] Mow 🔁 every 1 weeks 📅 2021-10-30", &settings).expect("a task");
        let written = task.to_line(InvalidDates::AsWritten);
        assert_eq!(written, "- [ ] Mow 🔁 every week 📅 2021-10-30");
        assert_eq!(parse_task_line(&written, &settings), Some(task));
    }

    /// Found by fuzzing: a priority glyph glued to a tag (`#tag⏫`) is part of the tag or the
    /// priority depending on which field the plugin peels first. Read in the middle of the line's
    /// fields it stays in the tag; written back (as the plugin writes it, tags in the description,
    /// fields after), the tag ends the description and the next read takes the glyph as the
    /// priority. Quire follows the plugin both ways, and the second write is then stable.
    #[test]
    fn a_priority_glued_to_a_tag_reads_as_the_plugin_reads_it() {
        let settings = TaskSettings::default();
        let line = "- [ ] Do it ⏫ 🔁 every week #tag⏫ 🔁 every week #t";
        let task = parse_task_line(line, &settings).expect("a task");
        assert_eq!(task.description, "Do it #tag⏫ #t");
        assert_eq!(task.priority, Priority::High);
        let written = task.to_line(InvalidDates::AsWritten);
        assert_eq!(written, "- [ ] Do it #tag⏫ #t ⏫ 🔁 every week");
        let again = parse_task_line(&written, &settings).expect("a task");
        assert_eq!(again.description, "Do it #tag #t");
        assert_eq!(again.priority, Priority::High);
        let rewritten = again.to_line(InvalidDates::AsWritten);
        assert_eq!(rewritten, "- [ ] Do it #tag #t ⏫ 🔁 every week");
        assert_eq!(parse_task_line(&rewritten, &settings), Some(again));
    }

    #[test]
    fn a_tag_peeled_down_to_a_bare_hash_keeps_the_glyph_of_the_tag_in_front() {
        // Found by fuzzing. Read with fields behind them, `#🔺 #🔺` are two tags; written back,
        // they end the line and the next read takes the last glyph as the priority. What is left
        // of that tag, `#`, is no tag, so it stays on the line's end and the tag in front keeps
        // its glyph, as the plugin reads it.
        let settings = TaskSettings::default();
        let line = "- [ ] #🔺 🔁  2ypqea #🔺 🔁  2ypqea";
        let task = parse_task_line(line, &settings).expect("a task");
        assert_eq!(task.tags, ["#🔺", "#🔺"]);
        assert_eq!(task.priority, Priority::None);
        let written = task.to_line(InvalidDates::AsWritten);
        assert_eq!(written, "- [ ]  #🔺 #🔺");
        let again = parse_task_line(&written, &settings).expect("a task");
        assert_eq!(again.description, "#🔺 #");
        assert_eq!(again.priority, Priority::Highest);
        let rewritten = again.to_line(InvalidDates::AsWritten);
        assert_eq!(parse_task_line(&rewritten, &settings), Some(again));
    }

    #[test]
    fn a_tag_behind_a_priority_field_is_taken_whole_and_the_one_in_front_loses_its_glyph() {
        // Found by fuzzing. A pass takes the priority field off the end, then the tag now ending
        // the line, glyph and all; the next pass finds the tag in front ending in a glyph and
        // takes that as the priority (the same one again), leaving a bare `#`, which is no tag.
        // The tag taken whole goes back after the description, as the plugin puts it back.
        let settings = TaskSettings::default();
        let again = parse_task_line("- [ ] a #🔺 #🔺 🔺", &settings).expect("a task");
        assert_eq!(again.description, "a # #🔺");
        assert_eq!(again.tags, ["#🔺"]);
        assert_eq!(again.priority, Priority::Highest);
        let rewritten = again.to_line(InvalidDates::AsWritten);
        assert_eq!(parse_task_line(&rewritten, &settings), Some(again));
    }

    #[test]
    fn a_priority_behind_white_space_inside_a_tag_reads_as_the_plugin_reads_it() {
        // A tag ends only at a space, so `#YY\r⏫` is one tag while a field follows it; once the
        // unreadable recurrence is dropped, the written line ends in the glyph, which the next
        // read takes as the priority, trimming the `\r` with the line as the plugin does.
        let settings = TaskSettings::default();
        let task = parse_task_line("- [ ] a #YY\r⏫ 🔁 es Format", &settings).expect("a task");
        assert_eq!(task.description, "a #YY\r⏫");
        assert_eq!(task.priority, Priority::None);
        let written = task.to_line(InvalidDates::AsWritten);
        assert_eq!(written, "- [ ] a #YY\r⏫");
        let again = parse_task_line(&written, &settings).expect("a task");
        assert_eq!(again.description, "a #YY");
        assert_eq!(again.priority, Priority::High);
        let rewritten = again.to_line(InvalidDates::AsWritten);
        assert_eq!(parse_task_line(&rewritten, &settings), Some(again));
    }

    #[test]
    fn fields_beyond_the_plugins_21_passes_stay_in_the_description_until_a_later_read() {
        // Each pass takes at most one field of each kind off the end; after 21 passes the plugin
        // stops, so an id in front of 21 dependencies stays text. Written back with one
        // dependency (the plugin keeps the leftmost), the next read takes the id as well.
        let settings = TaskSettings::default();
        let line = format!("- [ ] d 🆔 abc{}", " ⛔ x".repeat(21));
        let task = parse_task_line(&line, &settings).expect("a task");
        assert_eq!(task.description, "d 🆔 abc");
        assert_eq!(
            (task.id.as_str(), task.depends_on.clone()),
            ("", vec!["x".to_owned()])
        );
        let written = task.to_line(InvalidDates::AsWritten);
        assert_eq!(written, "- [ ] d 🆔 abc ⛔ x");
        let again = parse_task_line(&written, &settings).expect("a task");
        assert_eq!(
            (again.description.as_str(), again.id.as_str()),
            ("d", "abc")
        );
        let line = format!("- [ ] d 🆔 abc{}", " ⛔ x".repeat(20));
        let task = parse_task_line(&line, &settings).expect("a task");
        assert_eq!((task.description.as_str(), task.id.as_str()), ("d", "abc"));
    }

    #[test]
    fn fields_far_beyond_the_pass_limit_come_off_over_several_reads() {
        // Each read takes off what its 21 passes allow, so two runs of 21 dependencies take three
        // reads to settle, as they would in the plugin; each read keeps the leftmost field of a
        // kind, so the line settles on the first id and dependency it held.
        let settings = TaskSettings::default();
        let line = format!(
            "- [ ] d 🆔 a{} 🆔 b{}",
            " ⛔ x".repeat(21),
            " ⛔ y".repeat(21)
        );
        let first = parse_task_line(&line, &settings).expect("a task");
        assert_eq!(
            first.description,
            format!("d 🆔 a{} 🆔 b", " ⛔ x".repeat(21))
        );
        assert_eq!(first.depends_on, vec!["y".to_owned()]);
        let written = first.to_line(InvalidDates::AsWritten);
        let second = parse_task_line(&written, &settings).expect("a task");
        assert_eq!(
            (second.description.as_str(), second.id.as_str()),
            ("d 🆔 a ⛔ x", "b")
        );
        let written = second.to_line(InvalidDates::AsWritten);
        assert_eq!(written, "- [ ] d 🆔 a ⛔ x 🆔 b ⛔ x");
        let third = parse_task_line(&written, &settings).expect("a task");
        let settled = third.to_line(InvalidDates::AsWritten);
        assert_eq!(settled, "- [ ] d 🆔 a ⛔ x");
        let again = parse_task_line(&settled, &settings).expect("a task");
        assert_eq!(again.to_line(InvalidDates::AsWritten), settled);
    }

    #[test]
    fn a_field_glued_to_a_trailing_tag_is_taken_off_once_the_tag_ends_the_line() {
        // Behind a field the tag `#t🔁t` is taken whole; once it ends the written line, the
        // plugin's pass takes `🔁t` off as a recurrence (before it looks for tags) and drops it,
        // since `t` is no rule.
        let settings = TaskSettings::default();
        let task = parse_task_line("- [ ] #t🔁t🔁 e evy", &settings).expect("a task");
        assert_eq!(task.tags, vec!["#t🔁t".to_owned()]);
        let written = task.to_line(InvalidDates::AsWritten);
        let again = parse_task_line(&written, &settings).expect("a task");
        assert_eq!(again.tags, vec!["#t".to_owned()]);
        assert_eq!(again.recurrence, None);
        assert_eq!(
            parse_task_line(&again.to_line(InvalidDates::AsWritten), &settings),
            Some(again)
        );
    }

    #[test]
    fn a_block_link_uncovered_by_a_dropped_field_reads_as_the_plugin_reads_it() {
        // The plugin takes the block link off the end of the line before the fields, and drops a
        // recurrence it cannot read; what was in front of that field then ends the line it writes.
        let settings = TaskSettings::default();
        let task = parse_task_line("- [ ]we ^res 🔁 6", &settings).expect("a task");
        assert_eq!(
            (task.description.as_str(), task.block_link.as_str()),
            ("we ^res", "")
        );
        assert_eq!(task.recurrence, None);
        let written = task.to_line(InvalidDates::AsWritten);
        assert_eq!(written, "- [ ] we ^res");
        let again = parse_task_line(&written, &settings).expect("a task");
        assert_eq!(
            (again.description.as_str(), again.block_link.as_str()),
            ("we", " ^res")
        );
        assert_eq!(again.to_line(InvalidDates::AsWritten), written);
        // The line is trimmed once the link is off, so spaces in front of it go as well.
        let task = parse_task_line("- [ ] we  ^res 🔁 6", &settings).expect("a task");
        assert_eq!(task.description, "we  ^res");
        let written = task.to_line(InvalidDates::AsWritten);
        let again = parse_task_line(&written, &settings).expect("a task");
        assert_eq!(
            (again.description.as_str(), again.block_link.as_str()),
            ("we", " ^res")
        );
        assert_eq!(again.to_line(InvalidDates::AsWritten), "- [ ] we ^res");
    }

    proptest! {
        /// The hand-written matcher finds exactly what the plugin's regex finds.
        #[test]
        fn the_trailing_tag_is_where_the_plugins_regex_finds_it(
            line in "[#a-z \t\n!.:é\u{a0}\u{2003}\u{3000}_/-]{0,14}",
        ) {
            let regex = Regex::new(r#"(^|\s)#[^ !@#$%^&*(),.?":{}|<>]+$"#).expect("regex");
            let expected = regex.find(&line).map(|found| found.start());
            prop_assert_eq!(hashtag_at_end(&line), expected);
        }
    }

    proptest! {
        /// The hand-written reading of a task line finds the plugin regex's four groups.
        #[test]
        fn task_line_parts_are_the_plugins_regex_groups(
            line in prop_oneof![
                "[ \t\n>\u{a0}\u{3000}*+0-9.)\\[\\]x/é#a-]{0,16}",
                "[ \t\n>\u{a0}]{0,3}([-*+]|[0-9]{1,3}[.)]|x|1)[ ]{0,2}\\[[x \n\\]é]{0,2}\\]?[ ]{0,2}[a \n#-]{0,5}",
            ],
        ) {
            let regex = Regex::new(r"^([\s>]*)([-*+]|[0-9]+[.)]) +\[(.)\] *(.*)").expect("regex");
            let expected = regex.captures(&line).map(|found| {
                [1, 2, 3, 4].map(|group| found.get(group).map_or("", |part| part.as_str()))
            });
            prop_assert_eq!(task_line_parts(&line), expected);
        }
    }
}
