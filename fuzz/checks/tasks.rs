//! The Tasks line grammar: a task Quire writes reads back as the same task, and writing that again
//! gives the same line (parse → write → parse is stable), in each of the plugin's formats.

use quire::markdown::tasks::{
    InvalidDates, Task, TaskFormat, TaskSettings, note_tasks, parse_task_line,
};

/// Lines tried per input; a task line is one line, so more only repeats the work.
const MAX_LINES: usize = 16;

/// The emoji signifiers of the plugin's fields.
const FIELDS: [&str; 18] = [
    "🔺", "⏫", "🔼", "🔽", "⏬", "🔁", "🏁", "➕", "🛫", "⏳", "⌛", "📅", "📆", "🗓", "❌", "✅",
    "🆔", "⛔",
];

/// The passes the plugin's reader makes over a line, each taking at most one field of each kind.
const PLUGIN_PASSES: usize = 21;

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
            for invalid in [InvalidDates::AsWritten, InvalidDates::AsPlugin] {
                let written = task.to_line(invalid);
                let Some(again) = parse_task_line(&written, &settings) else {
                    panic!("{line:?} was written as {written:?}, which is not a task ({format:?})");
                };
                if invalid == InvalidDates::AsWritten {
                    // The style flag says which fields were read; an unreadable recurrence is
                    // dropped as the plugin drops it, and a line left without fields has no style.
                    let mut same_style = again.clone();
                    same_style.dataview = task.dataview;
                    // The plugin's own grammar again: its rule text can say less than the rule
                    // it read. rrule writes `every 7 April` as `every 7 years April`, which its
                    // parser reads as `every 7 years`, and of month days and weekdays together it
                    // writes only the days (see `the_plugin_reads_its_own_…` in recurrence.rs).
                    // When only the rule changed, the next round trip must be exact.
                    let mut reread = task.clone();
                    reread.recurrence = again.recurrence.clone();
                    if same_style != task && reread == same_style {
                        assert_settles(&again, 1, &settings, line, format);
                        continue;
                    }
                    // The plugin reads at most 21 fields off a line's end (its pass limit), so
                    // fields in front of more than that stay in the description until the line
                    // has fewer of them: the written one does, and its next read takes them off
                    // (see `fields_beyond_the_plugins_21_passes_…` in line.rs). With enough of
                    // them that takes several reads, each taking off what the limit allows: the
                    // writes must settle within one read per field signifier.
                    if same_style != task && field_signifiers(line) >= PLUGIN_PASSES {
                        assert_settles(&again, field_signifiers(line), &settings, line, format);
                        continue;
                    }
                    // The plugin's own grammar once more: the block link is read off the end
                    // of the line before the fields, so a ` ^id` that an unreadable field hid
                    // (dropped as the plugin drops it) ends the written line and becomes the
                    // block link (see `a_block_link_uncovered_by_a_dropped_field_…` in line.rs).
                    // The plugin trims the line once the link is off, and then reads what is
                    // left as any line, so fields that stood in front of the link are read too:
                    // the read must be that of the written line without its link.
                    if task.block_link.is_empty() && !again.block_link.is_empty() {
                        let link = again.block_link.trim_start();
                        let behind = written
                            .strip_suffix(link)
                            .and_then(|rest| parse_task_line(rest.trim_end(), &settings));
                        // Only one link is read per line: when what is left ends in another,
                        // that one is text, and nothing else may have changed.
                        if let Some(mut behind) =
                            behind.filter(|behind| behind.block_link.is_empty())
                        {
                            behind.block_link = again.block_link.clone();
                            if behind == again {
                                assert_settles(&again, 1, &settings, line, format);
                                continue;
                            }
                        }
                        let mut unlinked = same_style.clone();
                        unlinked.description = task.description.clone();
                        unlinked.block_link.clear();
                        let uncovered = task.description.strip_suffix(link).map(str::trim_end);
                        if uncovered == Some(same_style.description.as_str()) && unlinked == task {
                            assert_settles(&again, 1, &settings, line, format);
                            continue;
                        }
                    }
                    if same_style != task {
                        // The plugin's own grammar: a priority glyph glued to a tag that ends the
                        // description is read as the priority once the fields after it are gone
                        // (see `a_priority_glued_to_a_tag_…` and the tests after it in line.rs).
                        // Which of the trailing tags lose their glyphs depends on the order the
                        // plugin's passes take fields and tags off the end, so any of them may;
                        // any other difference is a bug, and the next round trip must be exact.
                        // A description of tags alone carries the plugin's leading space, which
                        // comes and goes with what is left of it once the glyph is peeled off:
                        // the descriptions are compared without it.
                        let mut reread = same_style.clone();
                        reread.description = reread.description.trim_start_matches(' ').to_owned();
                        let mut unglued = task.clone();
                        unglued.description = reread.description.clone();
                        unglued.tags = again.tags.clone();
                        unglued.priority = again.priority;
                        // The rule may say less at the same time, as in the first case above.
                        unglued.recurrence = again.recurrence.clone();
                        assert!(
                            glyphs_peeled(
                                task.description.trim_start_matches(' '),
                                &reread.description
                            ) && unglued == reread,
                            "{line:?} was written as {written:?} ({format:?})\n{task:?}\n{again:?}"
                        );
                        // A tag can hold fields and glyphs glued one behind the other, each read
                        // taking off what its passes reach: the writes must settle.
                        assert_settles(&again, field_signifiers(line) + 2, &settings, line, format);
                        continue;
                    }
                }
                // Stability is asked of what Quire writes to disk (dates as written). The plugin's
                // own `Invalid date` is read back as a date field, so a description made only of
                // tags gains the plugin's leading space on the next write (the plugin does the
                // same); Quire never writes that form, so it only has to stay a task.
                if invalid == InvalidDates::AsWritten {
                    assert_eq!(
                        again.to_line(invalid),
                        written,
                        "{line:?}: writing is not stable ({format:?}, {invalid:?})"
                    );
                }
            }
        }
        let _ = note_tasks(text, &settings);
    }
}

/// Writing `task` and reading it back, again and again, reaches a line that reads back as itself
/// within `reads` rounds, and each round leaves the description a prefix of the one before, or
/// the same words with glyphs or fields peeled off its trailing tags: fields only ever leave its
/// end, or the end of a tag once the tags behind it are off (the plugin takes trailing tags off
/// one per pass and puts them back). (The leading space of a description of tags alone comes and
/// goes.)
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
            panic!("{line:?}: {written:?} is not a task ({format:?})");
        };
        if next.to_line(InvalidDates::AsWritten) == written {
            return;
        }
        let (before, after) = (
            task.description.trim_start_matches(' '),
            next.description.trim_start_matches(' '),
        );
        assert!(
            before.starts_with(after.trim_end()) || glyphs_peeled(before, after),
            "{line:?}: a later read changed more than the description's end ({format:?})\n{task:?}\n{next:?}"
        );
        task = next;
    }
    panic!("{line:?}: the writes did not settle within {reads} reads ({format:?})");
}

/// Whether `after` is `before` with priority glyphs (and a variation selector after them) peeled
/// off the ends of some of its trailing tags, as a later read takes them as the priority: every
/// word is the same but for trailing tags, each of which may have lost one or more glyphs.
fn glyphs_peeled(before: &str, after: &str) -> bool {
    let (before, after): (Vec<&str>, Vec<&str>) =
        (before.split(' ').collect(), after.split(' ').collect());
    if before.len() != after.len() || before == after {
        return false;
    }
    let trailing = before
        .iter()
        .rev()
        .take_while(|word| word.starts_with('#'))
        .count();
    let keep = before.len() - trailing;
    before[..keep] == after[..keep]
        && before[keep..]
            .iter()
            .zip(&after[keep..])
            .all(|(tag, left)| peelings(tag).any(|peeled| peeled == *left))
}

/// `tag` and what is left of it as each glyph at its end is peeled off in turn.
fn peelings(tag: &str) -> impl Iterator<Item = String> {
    const GLYPHS: [char; 5] = ['🔺', '⏫', '🔼', '🔽', '⏬'];
    std::iter::successors(Some(tag.to_owned()), |tag| {
        let mut tag = tag.trim_end_matches('\u{fe0f}').to_owned();
        if tag.len() <= 1 {
            return None;
        }
        if tag.ends_with(GLYPHS) {
            tag.pop();
        } else {
            // A field glued to the tag's end (`#t🔁t`) is taken off as a field once the tag
            // ends the line, and dropped when it cannot be read.
            let cut = FIELDS.iter().filter_map(|f| tag[1..].rfind(f)).max()?;
            tag.truncate(cut + 1);
        }
        // The plugin trims the line after taking a field: white space a tag held before the
        // glyph (a tag ends only at a space, so `\r` or a tab can sit inside one) goes too.
        Some(
            tag.trim_end_matches(|c: char| c == '\u{fe0f}' || c.is_whitespace() || c == '\u{feff}')
                .to_owned(),
        )
    })
}

/// How many field signifiers `line` holds (each emoji the plugin reads, and Dataview's `::`): a
/// line with fewer cannot reach the plugin's pass limit.
fn field_signifiers(line: &str) -> usize {
    FIELDS
        .iter()
        .map(|s| line.matches(s).count())
        .sum::<usize>()
        + line.matches("::").count()
}
