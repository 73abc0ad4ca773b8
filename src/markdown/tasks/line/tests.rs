//! Task lines read, written and toggled, against cases checked with the Tasks plugin.

use super::read::{hashtag_at_end, task_line_parts};
use super::*;
use proptest::prelude::*;
use regex::Regex;

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
