//! Compares the task grammar with the Obsidian Tasks plugin's own parser (8.3.0), run over 734 lines
//! in both formats (`shared/oracles/tasks-plugin-parse/`), field by field, including the plugin's
//! re-serialisation and the lines a toggle leaves (today fixed to 2025-06-15); and compares list
//! items and their parents with Obsidian's `listItems` (`shared/oracles/obsidian-metadata-cache/`).
//! Agreement per field is printed; any disagreement fails with every mismatch listed. When the oracle
//! folder is absent the tests say so on stderr and pass.

use quire::markdown::tasks::{
    InvalidDates, TaskDate, TaskFormat, TaskSettings, note_list_items, parse_task_line,
};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::support::shared_dir;

fn date_value(date: &Option<TaskDate>) -> Value {
    match date {
        None => Value::Null,
        Some(TaskDate::Valid(date)) => json!(quire::markdown::tasks::format_date(*date)),
        Some(TaskDate::Invalid(_)) => json!("INVALID"),
    }
}

/// Our answer for one line, in the oracle's field names.
fn our_fields(
    line: &str,
    settings: &TaskSettings,
    today: jiff::civil::Date,
) -> Option<BTreeMap<&'static str, Value>> {
    let task = parse_task_line(line, settings)?;
    let toggled: Vec<String> = task
        .toggle(settings, today)
        .iter()
        .map(|task| task.to_line(InvalidDates::AsPlugin))
        .collect();
    Some(BTreeMap::from([
        ("status_symbol", json!(task.status.symbol)),
        ("status_type", json!(task.status.kind.as_str())),
        ("description", json!(task.description)),
        ("tags", json!(task.tags)),
        ("priority", json!(task.priority.number().to_string())),
        ("priority_name", json!(task.priority.name())),
        ("created", date_value(&task.created)),
        ("start", date_value(&task.start)),
        ("scheduled", date_value(&task.scheduled)),
        ("due", date_value(&task.due)),
        ("done", date_value(&task.done)),
        ("cancelled", date_value(&task.cancelled)),
        (
            "recurrence_rule",
            task.recurrence
                .as_ref()
                .map_or(Value::Null, |r| json!(r.text())),
        ),
        ("id", json!(task.id)),
        ("depends_on", json!(task.depends_on)),
        ("on_completion", json!(task.on_completion.as_str())),
        ("block_link", json!(task.block_link)),
        ("indentation", json!(task.indentation)),
        ("list_marker", json!(task.list_marker)),
        ("serialized", json!(task.to_line(InvalidDates::AsPlugin))),
        ("toggled", json!(toggled)),
    ]))
}

fn check_format(file: &str, format: TaskFormat) -> Option<Vec<String>> {
    let path = shared_dir().join("oracles/tasks-plugin-parse").join(file);
    let Ok(text) = std::fs::read_to_string(&path) else {
        crate::support::skip_without_oracle("the Tasks plugin oracle", &path);
        return None;
    };
    let settings = TaskSettings {
        format,
        ..TaskSettings::default()
    };
    let today: jiff::civil::Date = "2025-06-15".parse().expect("fixed date");
    let mut agree: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut failures = Vec::new();
    for (index, row) in text.lines().enumerate() {
        let expected: Value = serde_json::from_str(row).expect("oracle rows are JSON");
        let line = expected["line"].as_str().unwrap_or_default();
        let ours = our_fields(line, &settings, today);
        let is_task = expected.get("status_symbol").is_some();
        let counts = agree.entry("is_task".to_owned()).or_default();
        counts.1 += 1;
        if ours.is_some() == is_task {
            counts.0 += 1;
        } else {
            failures.push(format!(
                "{file}:{} {line:?}: task? ours {} plugin {is_task}",
                index + 1,
                ours.is_some()
            ));
            continue;
        }
        let Some(ours) = ours else { continue };
        for (field, value) in &ours {
            let counts = agree.entry((*field).to_owned()).or_default();
            counts.1 += 1;
            if expected[*field] == *value {
                counts.0 += 1;
            } else {
                failures.push(format!(
                    "{file}:{} {line:?}: {field}: ours {value} plugin {}",
                    index + 1,
                    expected[*field]
                ));
            }
        }
    }
    eprintln!("Tasks oracle agreement, {file}:");
    for (field, (same, total)) in &agree {
        eprintln!("  {field:16} {same}/{total}");
    }
    Some(failures)
}

#[test]
fn emoji_format_matches_the_plugin() {
    if let Some(failures) = check_format("expected-emoji-format.jsonl", TaskFormat::Emoji) {
        assert!(
            failures.is_empty(),
            "{} disagreements:\n{}",
            failures.len(),
            failures.join("\n")
        );
    }
}

#[test]
fn dataview_format_matches_the_plugin() {
    if let Some(failures) = check_format("expected-dataview-format.jsonl", TaskFormat::Dataview) {
        assert!(
            failures.is_empty(),
            "{} disagreements:\n{}",
            failures.len(),
            failures.join("\n")
        );
    }
}

/// Reading both formats in one pass (what Quire does in a vault) agrees with the plugin's emoji
/// parse on lines without Dataview fields and with its Dataview parse on lines without emoji
/// signifiers; lines mixing both are counted and left out.
#[test]
fn one_pass_reading_agrees_with_each_format() {
    let dir = shared_dir().join("oracles/tasks-plugin-parse");
    let (Ok(emoji), Ok(dataview)) = (
        std::fs::read_to_string(dir.join("expected-emoji-format.jsonl")),
        std::fs::read_to_string(dir.join("expected-dataview-format.jsonl")),
    ) else {
        crate::support::skip_without_oracle("the Tasks plugin oracle", &dir);
        return;
    };
    const SIGNIFIERS: &[char] = &[
        '🔺', '⏫', '🔼', '🔽', '⏬', '🛫', '➕', '⏳', '⌛', '📅', '📆', '🗓', '✅', '❌', '🔁',
        '🏁', '⛔', '🆔',
    ];
    let settings = TaskSettings {
        format: TaskFormat::Both,
        ..TaskSettings::default()
    };
    let today: jiff::civil::Date = "2025-06-15".parse().expect("fixed date");
    // A Dataview inline field opens with a bracket; `due:: x` on its own is plain text.
    let inline_field = regex::Regex::new(r"[\[(] *[a-zA-Z]+::").expect("regex");
    let (mut compared, mut mixed) = (0, 0);
    let mut failures = Vec::new();
    for (emoji_row, dataview_row) in emoji.lines().zip(dataview.lines()) {
        let emoji_row: Value = serde_json::from_str(emoji_row).expect("oracle JSON");
        let dataview_row: Value = serde_json::from_str(dataview_row).expect("oracle JSON");
        let line = emoji_row["line"].as_str().unwrap_or_default();
        let has_dataview = inline_field.is_match(line);
        let has_emoji = line.contains(SIGNIFIERS);
        let expected = match (has_emoji, has_dataview) {
            (true, true) => {
                mixed += 1;
                continue;
            }
            (_, false) => &emoji_row,
            (false, true) => &dataview_row,
        };
        compared += 1;
        let ours = our_fields(line, &settings, today);
        let Some(ours) = ours else {
            if expected.get("status_symbol").is_some() {
                failures.push(format!("{line:?}: not read as a task"));
            }
            continue;
        };
        for (field, value) in &ours {
            if expected[*field] != *value {
                failures.push(format!(
                    "{line:?}: {field}: ours {value} plugin {}",
                    expected[*field]
                ));
            }
        }
    }
    eprintln!("one-pass reading: {compared} lines compared, {mixed} mixing both formats left out");
    assert!(
        failures.is_empty(),
        "{} disagreements:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Notes whose `listItems` we do not reproduce, and why.
const KNOWN_LIST_DIFFERENCES: &[(&str, &str)] = &[(
    "numbered_tasks_issue_3481.json",
    "Obsidian also lists an ordered list opened INSIDE a task's text on the same line \
     (`- [ ] 1. #task ...` gives a second item at column 6 whose parent is its own line); \
     Quire lists one item per line, and the Tasks plugin reads that line as one task too",
)];

/// Obsidian's `listItems`: each item's 0-based line and parent (the parent's 0-based line, or minus
/// the list's first line for a top-level item), and its checkbox symbol.
#[test]
fn list_items_and_parents_match_obsidian() {
    let dir = shared_dir().join("oracles/obsidian-metadata-cache");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        crate::support::skip_without_oracle("the Obsidian metadata-cache oracle", &dir);
        return;
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| {
            path.extension()
                .is_some_and(|extension| extension == "json")
        })
        .collect();
    paths.sort();
    let mut failures = Vec::new();
    let (mut same, mut total) = (0, 0);
    for path in paths {
        let json: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("oracle file"))
                .expect("oracle JSON");
        let Some(contents) = json["fileContents"].as_str() else {
            continue;
        };
        let expected: Vec<(i64, i64, Value)> = json["cachedMetadata"]["listItems"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|item| {
                (
                    item["position"]["start"]["line"].as_i64().unwrap_or(-1),
                    item["parent"].as_i64().unwrap_or(0),
                    item.get("task").cloned().unwrap_or(Value::Null),
                )
            })
            .collect();
        let ours: Vec<(i64, i64, Value)> = note_list_items(contents)
            .iter()
            .map(|item| {
                let line = item.line as i64 - 1;
                let parent = match item.parent {
                    Some(parent) => parent as i64 - 1,
                    // Obsidian writes minus the list's first 0-based line, and -1 for a list on line 0.
                    None => -(item.list_start as i64 - 1).max(1),
                };
                (
                    line,
                    parent,
                    item.checkbox
                        .as_ref()
                        .map_or(Value::Null, |symbol| json!(symbol)),
                )
            })
            .collect();
        total += 1;
        let name = path
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        if let Some((_, why)) = KNOWN_LIST_DIFFERENCES
            .iter()
            .find(|(known, _)| *known == name)
        {
            eprintln!("known difference in {name}: {why}");
            continue;
        }
        if ours == expected {
            same += 1;
        } else {
            failures.push(format!(
                "{}:\n  ours     {ours:?}\n  obsidian {expected:?}",
                path.file_name()
                    .map(|name| name.to_string_lossy().into_owned())
                    .unwrap_or_default()
            ));
        }
    }
    eprintln!("listItems agreement: {same}/{total} notes");
    assert!(
        failures.is_empty(),
        "{} notes differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
