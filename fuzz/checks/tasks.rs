//! The Tasks line grammar: what Quire writes of a task reads back as the same task, and writing
//! that again gives the same line (parse → write → parse is stable), in each of the plugin's
//! formats. Where the plugin's own grammar reads the line it would write differently (a field
//! glued to a tag, a block link an unreadable field hid, more fields than its 21 passes take, a
//! rule whose text says less), each later read may only take more off the description's end, or
//! off its trailing tags, as the plugin's passes do: never lose a field it had read for nothing,
//! never change a field while the description stays, and the writes settle.
//!
//! This is the plugin's rules read as one property, not a list of the ways it was seen to
//! differ: that list kept meeting new mixes of the same ways (RELIABILITY.md, the long run).

use quire::markdown::tasks::{
    InvalidDates, Priority, Task, TaskFormat, TaskSettings, note_tasks, parse_task_line,
};

/// Lines tried per input; a task line is one line, so more only repeats the work.
const MAX_LINES: usize = 16;

/// The emoji signifiers of the plugin's fields.
const FIELDS: [&str; 18] = [
    "🔺", "⏫", "🔼", "🔽", "⏬", "🔁", "🏁", "➕", "🛫", "⏳", "⌛", "📅", "📆", "🗓", "❌", "✅",
    "🆔", "⛔",
];

/// The priority glyphs, each a whole field.
const PRIORITIES: [&str; 5] = ["🔺", "⏫", "🔼", "🔽", "⏬"];

/// The check itself: panics on any violation.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for format in [TaskFormat::Emoji, TaskFormat::Dataview, TaskFormat::Both] {
        let settings = TaskSettings {
            format,
            ..TaskSettings::default()
        };
        for line in text.lines().take(MAX_LINES) {
            let Some(task) = parse_task_line(line, &settings) else {
                continue;
            };
            // The plugin's own `Invalid date` is read back as a date field: the line only has
            // to stay a task. Quire writes dates as written, and that must settle.
            let plugin = task.to_line(InvalidDates::AsPlugin);
            assert!(
                parse_task_line(&plugin, &settings).is_some(),
                "{line:?} was written as {plugin:?}, which is not a task ({format:?})"
            );
            assert_settles(&task, field_signifiers(line) + 2, &settings, line, format);
        }
        let _ = note_tasks(text, &settings);
    }
}

/// Writing `task` and reading it back, again and again, reaches a line that reads back as itself
/// within `reads` rounds, each read one the plugin's grammar allows of the write before it.
fn assert_settles(
    task: &Task,
    reads: usize,
    settings: &TaskSettings,
    line: &str,
    format: TaskFormat,
) {
    let mut task = task.clone();
    for _ in 0..reads {
        let written = task.to_line(InvalidDates::AsWritten);
        let Some(next) = parse_task_line(&written, settings) else {
            panic!("{line:?} was written as {written:?}, which is not a task ({format:?})");
        };
        if let Err(why) = later_read(&task, &next, format) {
            panic!(
                "{line:?} was written as {written:?}, whose read {why} ({format:?})\n{task:?}\n{next:?}"
            );
        }
        if next.to_line(InvalidDates::AsWritten) == written {
            return;
        }
        task = next;
    }
    panic!("{line:?}: the writes did not settle within {reads} reads ({format:?})");
}

/// Whether `next`, the read of what Quire wrote of `task`, is one the plugin's grammar allows.
fn later_read(task: &Task, next: &Task, format: TaskFormat) -> Result<(), String> {
    let same = |a: &Task, b: &Task| {
        a.indentation == b.indentation && a.list_marker == b.list_marker && a.status == b.status
    };
    if !same(task, next) {
        return Err("changed what stands before the description".into());
    }
    // The plugin reads a line's text from behind the spaces after its checkbox, and a block link
    // needs a space in front: behind an empty description the written link is read as the
    // description (the plugin writes and reads its own line so too).
    if task.description.trim().is_empty() && next.block_link.is_empty() {
        let mut linked = next.clone();
        linked.description = task.description.clone();
        linked.block_link = task.block_link.clone();
        linked.tags = task.tags.clone();
        linked.dataview = task.dataview;
        if next.description == task.block_link.trim_start() && linked == *task {
            return Ok(());
        }
    }
    let (before, after) = (
        task.description.trim_start_matches(' '),
        next.description.trim_start_matches(' '),
    );
    let taken = if before == after {
        String::new()
    } else {
        taken_off(before, after)
            .ok_or("changed more than the description's end and its trailing tags")?
    };
    // Nothing more was taken off, or only the white space in front of a trailing tag that the
    // tag pass reaches now (the read before ran out of passes first) and puts back behind one
    // space: every field reads back as written, but for the rule, whose text can say less than
    // the rule rrule read (it stays a rule).
    if taken.chars().all(char::is_whitespace) {
        let mut reread = next.clone();
        reread.recurrence = task.recurrence.clone();
        reread.dataview = task.dataview;
        reread.description = task.description.clone();
        if before != after {
            // The tags are read from the description, whose white space changed: a tag's text
            // runs over a tab, not over the space the tag is put back behind.
            reread.tags = task.tags.clone();
        }
        if reread != *task {
            return Err(
                "changed a field while nothing but white space left the description".into(),
            );
        }
        return match (&task.recurrence, &next.recurrence) {
            (Some(rule), Some(again)) if !says_less(&rule.text(), &again.text()) => {
                Err("read a rule that is not what the written one says".into())
            }
            (Some(_), None) => Err("lost the rule".into()),
            _ => Ok(()),
        };
    }
    // What left the description is a field the format reads, or a block link.
    if !holds_field(&taken, format) {
        return Err(format!(
            "took {taken:?} off the description, which holds no field"
        ));
    }
    // Fields read before are still read: a later read only adds to them, or replaces a value
    // with that of a field of the same kind it took further left, as the plugin's passes do
    // (an unreadable one leaves none).
    let took = |signifiers: &[&str], key: &str| {
        signifiers.iter().any(|s| taken.contains(s)) || taken.contains(&format!("{key}::"))
    };
    let kept = [
        (
            task.created.is_some(),
            next.created.is_some(),
            took(&["➕"], "created"),
        ),
        (
            task.start.is_some(),
            next.start.is_some(),
            took(&["🛫"], "start"),
        ),
        (
            task.scheduled.is_some(),
            next.scheduled.is_some(),
            took(&["⏳", "⌛"], "scheduled"),
        ),
        (
            task.due.is_some(),
            next.due.is_some(),
            took(&["📅", "📆", "🗓"], "due"),
        ),
        (
            task.done.is_some(),
            next.done.is_some(),
            took(&["✅"], "completion"),
        ),
        (
            task.cancelled.is_some(),
            next.cancelled.is_some(),
            took(&["❌"], "cancelled"),
        ),
        (
            task.recurrence.is_some(),
            next.recurrence.is_some(),
            took(&["🔁"], "repeat"),
        ),
        (
            task.priority != Priority::None,
            next.priority != Priority::None,
            took(&PRIORITIES, "priority"),
        ),
        (
            !task.id.is_empty(),
            !next.id.is_empty(),
            took(&["🆔"], "id"),
        ),
        (
            !task.depends_on.is_empty(),
            !next.depends_on.is_empty(),
            took(&["⛔"], "dependsOn"),
        ),
        (
            !task.block_link.is_empty(),
            !next.block_link.is_empty(),
            false,
        ),
    ];
    if kept.iter().any(|(was, is, took)| *was && !is && !took) {
        return Err("lost a field".into());
    }
    Ok(())
}

/// Whether `taken` holds what a read in `format` takes off a line's end: a block link, a
/// Dataview field, or an emoji field: a priority glyph alone, any other signifier with something
/// behind it (the value it reads, or an unreadable one it drops). A bare `📅` is no field.
fn holds_field(taken: &str, format: TaskFormat) -> bool {
    let emoji = |signifier: &str| {
        taken.match_indices(signifier).any(|(at, _)| {
            PRIORITIES.contains(&signifier)
                || !taken[at + signifier.len()..].trim_start().is_empty()
        })
    };
    taken.contains('^')
        || (format != TaskFormat::Emoji && taken.contains("::"))
        || (format != TaskFormat::Dataview && FIELDS.iter().any(|field| emoji(field)))
}

/// Whether the rule text `again` says what `written` says, or less: rrule writes some rules with
/// words its own parser stops before (`every 7 years April and December` reads as `every 7
/// years`), so a rule read back may keep only some of the written words, in their order.
fn says_less(written: &str, again: &str) -> bool {
    let mut words = written.split(' ');
    again.split(' ').all(|word| words.any(|w| w == word))
}

/// What a later read took off the description `before` to leave `after`, or `None` when that is
/// not how it changed. The plugin takes fields off the line's end one pass at a time, a trailing
/// tag among them, and puts the tags back: so `after` is a start of `before` followed by tags
/// that stood, in order, in the rest of `before`, each whole or cut at a glyph or field glued to
/// it; what is taken is the rest.
fn taken_off(before: &str, after: &str) -> Option<String> {
    let words: Vec<&str> = after.split(' ').collect();
    let tags = words
        .iter()
        .rev()
        .take_while(|word| word.starts_with('#'))
        .count();
    let core = words[..words.len() - tags].join(" ");
    let mut rest = before.strip_prefix(core.trim_end())?;
    let mut taken = String::new();
    for tag in &words[words.len() - tags..] {
        let tag = tag.trim_end();
        // A tag starts at a `#` behind white space (any, as the plugin's `\s`) and ends at a
        // space, or where the next tag starts (a tag's text holds other white space, never a
        // `#`); the white space in front of it goes with the trim after a field.
        let at = rest.char_indices().map(|(at, _)| at).find(|&at| {
            let whole = before.len() - rest.len() + at;
            rest[at..].starts_with(tag)
                && before[..whole]
                    .chars()
                    .next_back()
                    .is_none_or(char::is_whitespace)
        })?;
        // The word read back is matched whole (when nothing was taken from it, it may hold a
        // `#` behind a tab); what was glued to it runs on to a space or to the next tag.
        let from = at + tag.len();
        let end = rest
            .get(from..)?
            .char_indices()
            .find(|&(end, c)| {
                c == ' ' || (c == '#' && rest[..from + end].ends_with(char::is_whitespace))
            })
            .map_or(rest.len(), |(end, _)| from + end);
        taken.push_str(&rest[..at]);
        taken.push_str(&rest[from..end]);
        rest = &rest[end..];
    }
    taken.push_str(rest);
    Some(taken)
}

/// How many field signifiers `line` holds (each emoji the plugin reads, and Dataview's `::`): each
/// later read takes at least one off, so the writes settle within that many reads (and two more:
/// a trailing tag's glyph, a block link).
fn field_signifiers(line: &str) -> usize {
    FIELDS
        .iter()
        .map(|s| line.matches(s).count())
        .sum::<usize>()
        + line.matches("::").count()
}
