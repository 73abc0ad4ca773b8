//! Reading a task line as the Tasks plugin does: the checkbox grammar, then the fields peeled
//! off the END of the line (emoji signifiers and Dataview inline fields, in one pass when both
//! are enabled), the description's tags, and the rule that judges whether a line is a task.

use std::sync::LazyLock;

use regex::Regex;

use super::super::recurrence::Recurrence;
use super::super::status::StatusRegistry;
use super::{OnCompletion, Priority, Task, TaskDate, TaskFormat, TaskSettings};

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
pub(super) fn hashtag_at_end(line: &str) -> Option<usize> {
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
pub(super) fn task_line_parts(line: &str) -> Option<[&str; 4]> {
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
    let mut peeled = Peeled {
        line: parts.body,
        recurrence_text: String::new(),
        trailing_tags: String::new(),
        emoji_fields: 0,
        dataview_fields: 0,
    };
    peeled.peel_all(&mut task, format);
    if !peeled.recurrence_text.is_empty() {
        attach_recurrence(&mut task, &peeled.recurrence_text);
    }
    let mut line = peeled.line;
    if !peeled.trailing_tags.is_empty() {
        line.push(' ');
        line.push_str(&peeled.trailing_tags);
    }
    task.tags = description_tags(&line);
    task.description = line;
    let dataview = if peeled.dataview_fields > 0 && peeled.emoji_fields == 0 {
        Some(true)
    } else if peeled.emoji_fields > 0 {
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

/// A line while fields are peeled off its end: what is left of it, the recurrence rule's text
/// and the trailing tags taken off so far, and how many fields of each style were read.
struct Peeled {
    line: String,
    recurrence_text: String,
    trailing_tags: String,
    emoji_fields: usize,
    dataview_fields: usize,
}

impl Peeled {
    /// Takes every field off the end of the line into `task`, as the plugin does.
    fn peel_all(&mut self, task: &mut Task, format: TaskFormat) {
        let read_emoji = format != TaskFormat::Dataview;
        let read_dataview = format != TaskFormat::Emoji;
        // Peeling fields off only shortens the line, so a signifier absent now stays absent; one
        // present now may be gone later, and the regex (which needs it) then finds nothing.
        let signified = signified_fields(&self.line);
        // Fields come off the end in any order; each pass tries every field once, and the plugin
        // stops after 21 passes.
        for _ in 0..21 {
            let mut matched = false;
            for (bit, (field, regexes)) in FIELDS.iter().zip(FIELD_REGEXES.iter()).enumerate() {
                let signified = signified & (1 << bit) != 0;
                if *field == Field::Tag {
                    // Tags are read in either format, and have no Dataview form.
                    if signified && self.peel_trailing_tag() {
                        matched = true;
                    }
                    continue;
                }
                if self.peel_field(
                    task,
                    *field,
                    regexes,
                    read_emoji && signified,
                    read_dataview,
                ) {
                    matched = true;
                }
            }
            if !matched {
                break;
            }
        }
    }

    /// Takes a hashtag off the end of the line, keeping it for the description's end.
    fn peel_trailing_tag(&mut self) -> bool {
        let Some(start) = hashtag_at_end(&self.line) else {
            return false;
        };
        let tag = js_trim(&self.line[start..]).to_owned();
        self.trailing_tags = if self.trailing_tags.is_empty() {
            tag
        } else {
            format!("{tag} {}", self.trailing_tags)
        };
        self.line = js_trim(&self.line[..start]).to_owned();
        true
    }

    /// Tries `field`'s emoji and Dataview forms on the end of the line, each once, storing what
    /// matches in `task`; whether any did.
    fn peel_field(
        &mut self,
        task: &mut Task,
        field: Field,
        regexes: &FieldRegexes,
        read_emoji: bool,
        read_dataview: bool,
    ) -> bool {
        let mut matched = false;
        let emoji = regexes.emoji.iter().filter(|_| read_emoji);
        // A Dataview field closes the line with `]` or `)` (a trailing comma allowed).
        let dataview_closes = read_dataview
            && self.line.contains("::")
            && self.line.trim_end_matches([' ', ',']).ends_with([']', ')']);
        let dataview = regexes.dataview.iter().filter(|_| dataview_closes);
        let candidates = emoji
            .map(|regex| (regex, false))
            .chain(dataview.map(|regex| (regex, true)));
        for (regex, is_dataview) in candidates {
            let Some(found) = regex.captures(&self.line) else {
                continue;
            };
            let (Some(whole), value) = (found.get(0), found.get(1).map(|v| v.as_str().to_owned()))
            else {
                continue;
            };
            let value = value.unwrap_or_default();
            let start = whole.start();
            set_field(task, field, &value, is_dataview, &mut self.recurrence_text);
            if is_dataview {
                self.dataview_fields += 1;
            } else {
                self.emoji_fields += 1;
            }
            self.line = js_trim(&self.line[..start]).to_owned();
            matched = true;
        }
        matched
    }
}

/// Stores one field read off the line in `task`; a recurrence rule is kept as text until every
/// field is off, as it needs the dates.
fn set_field(
    task: &mut Task,
    field: Field,
    value: &str,
    is_dataview: bool,
    recurrence_text: &mut String,
) {
    match field {
        Field::Priority => task.priority = read_priority(value, is_dataview),
        Field::Done => task.done = Some(TaskDate::parse(value)),
        Field::Cancelled => task.cancelled = Some(TaskDate::parse(value)),
        Field::Due => task.due = Some(TaskDate::parse(value)),
        Field::Scheduled => task.scheduled = Some(TaskDate::parse(value)),
        Field::Start => task.start = Some(TaskDate::parse(value)),
        Field::Created => task.created = Some(TaskDate::parse(value)),
        Field::Recurrence => *recurrence_text = js_trim(value).to_owned(),
        Field::OnCompletion => task.on_completion = OnCompletion::parse(value),
        Field::Tag => {} // read by `peel_trailing_tag`
        Field::Id => task.id = js_trim(value).to_owned(),
        Field::DependsOn => {
            task.depends_on = value
                .replace(' ', "")
                .split(',')
                .filter(|item| !item.is_empty())
                .map(str::to_owned)
                .collect();
        }
    }
}

/// A priority as written in Dataview style (a word) or emoji style.
fn read_priority(value: &str, is_dataview: bool) -> Priority {
    if is_dataview {
        match value {
            "highest" => Priority::Highest,
            "high" => Priority::High,
            "medium" => Priority::Medium,
            "low" => Priority::Low,
            "lowest" => Priority::Lowest,
            _ => Priority::None,
        }
    } else {
        match value {
            "🔺" => Priority::Highest,
            "⏫" => Priority::High,
            "🔼" => Priority::Medium,
            "🔽" => Priority::Low,
            "⏬" => Priority::Lowest,
            _ => Priority::None,
        }
    }
}

/// The task's recurrence from the rule's text. The plugin cannot build a rule on a reference
/// date that is not a date.
fn attach_recurrence(task: &mut Task, recurrence_text: &str) {
    let reference = task
        .due
        .as_ref()
        .or(task.scheduled.as_ref())
        .or(task.start.as_ref());
    let reference_invalid = matches!(reference, Some(TaskDate::Invalid(_)));
    task.recurrence = Recurrence::parse(recurrence_text)
        .filter(|recurrence| recurrence.when_done() || !reference_invalid);
}
