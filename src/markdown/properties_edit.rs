//! Changing a note's properties without disturbing the ones left alone: a merge rewrites only the lines
//! of the top-level keys it changes (new keys go at the end of the block), so comments, quoting, flow or
//! block style and key order of every other key keep their exact bytes; a replace rewrites the block.
//! It refuses, rather than guesses, whenever the existing block is not a valid mapping or the result
//! would not read back as exactly the intended properties. No I/O, and no panic on any input.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::frontmatter::{self, PropertiesError};

/// The note after a properties update.
#[derive(Debug, Clone, PartialEq)]
pub struct PropertiesUpdate {
    pub text: String,
    /// Keys whose value was added, changed or removed, in key order.
    pub changed_keys: Vec<String>,
    /// All properties after the update.
    pub properties: Map<String, Value>,
}

/// Why the properties cannot be updated.
#[derive(Debug, Clone, PartialEq)]
pub enum PropertiesEditError {
    /// The existing block is not valid YAML, or not a mapping; rewriting it would lose it.
    Invalid(PropertiesError),
    /// The block is valid, but written in a way a line-level merge cannot change safely.
    NotEditable(String),
}

/// Merges `updates` into the note's properties (JSON `null` deletes a key), or with `replace` makes them
/// the whole set. A note without a block gets one at the top.
pub fn update_properties(
    text: &str,
    updates: &Map<String, Value>,
    replace: bool,
) -> Result<PropertiesUpdate, PropertiesEditError> {
    let split = frontmatter::split(text);
    let old = match split.yaml {
        Some(yaml) => frontmatter::parse_properties(yaml).map_err(PropertiesEditError::Invalid)?,
        None => Map::new(),
    };
    let mut expected = if replace { Map::new() } else { old.clone() };
    for (key, value) in updates {
        if value.is_null() {
            expected.remove(key);
        } else {
            expected.insert(key.clone(), value.clone());
        }
    }
    let changed_keys: Vec<String> = old
        .keys()
        .chain(expected.keys())
        .filter(|key| old.get(*key) != expected.get(*key))
        .cloned()
        .collect::<std::collections::BTreeSet<String>>()
        .into_iter()
        .collect();
    if changed_keys.is_empty() {
        return Ok(PropertiesUpdate {
            text: text.to_owned(),
            changed_keys,
            properties: old,
        });
    }
    let bom = if text.starts_with('\u{feff}') {
        '\u{feff}'.len_utf8()
    } else {
        0
    };
    let newline = super::edit::newline_of(text);
    let (block_start, yaml_range, block_end) = match split.yaml {
        Some(yaml) => {
            let yaml_start = offset_in(text, yaml);
            (
                bom,
                Some((yaml_start, yaml_start + yaml.len())),
                split.block_len,
            )
        }
        None => (bom, None, bom),
    };
    let new_block = match (replace, yaml_range) {
        (false, Some((yaml_start, yaml_end))) => {
            let yaml = text.get(yaml_start..yaml_end).unwrap_or("");
            let merged = merge_yaml(yaml, &old, &expected, newline)?;
            let rest = text.get(block_end..).unwrap_or("");
            // Removing the last property leaves no block rather than an empty one, unless the
            // body would then open a block of its own (it starts with `---` lines): an empty
            // block keeps the body the body.
            if merged.is_empty() && frontmatter::split(rest).yaml.is_none() {
                String::new()
            } else {
                format!(
                    "{}{merged}{}",
                    text.get(block_start..yaml_start).unwrap_or("---\n"),
                    text.get(yaml_end..block_end).unwrap_or("---\n")
                )
            }
        }
        _ => with_newline(&frontmatter::render_properties(&expected), newline),
    };
    let new_text = format!(
        "{}{new_block}{}",
        text.get(..block_start).unwrap_or(""),
        text.get(block_end..).unwrap_or("")
    );
    // Whatever was computed, the note must read back as exactly the intended properties.
    let reread = match frontmatter::split(&new_text).yaml {
        Some(yaml) => frontmatter::parse_properties(yaml).ok(),
        None => Some(Map::new()),
    };
    if reread.as_ref() != Some(&expected) {
        return Err(PropertiesEditError::NotEditable(
            "the updated block would not read back as the intended properties".to_owned(),
        ));
    }
    Ok(PropertiesUpdate {
        text: new_text,
        changed_keys,
        properties: expected,
    })
}

/// Rewrites only the entries of `yaml` whose values differ between `old` and `expected`.
fn merge_yaml(
    yaml: &str,
    old: &Map<String, Value>,
    expected: &Map<String, Value>,
    newline: &str,
) -> Result<String, PropertiesEditError> {
    let (indent, entries) = top_level_entries(yaml);
    // The first entry of each key, looked up rather than searched for each changed key (quadratic
    // in an update of many properties, issue 47).
    let mut entry_of: HashMap<&str, &Entry> = HashMap::new();
    for entry in &entries {
        if let Some(key) = entry.key.as_deref() {
            entry_of.entry(key).or_insert(entry);
        }
    }
    let mut splices: Vec<(usize, usize, String)> = Vec::new();
    let mut appended = String::new();
    for key in old
        .keys()
        .chain(expected.keys().filter(|key| !old.contains_key(*key)))
    {
        let (before, after) = (old.get(key), expected.get(key));
        if before == after {
            continue;
        }
        let rendered = after
            .map(|value| render_entry(key, value, indent, newline))
            .unwrap_or_default();
        if before.is_none() {
            appended.push_str(&rendered);
            continue;
        }
        let entry = entry_of.get(key.as_str()).ok_or_else(|| {
                PropertiesEditError::NotEditable(format!(
                    "the property {key:?} is written in a form Quire cannot change line by line (an alias, a merge key, a complex key or an unindented multi-line value)"
                ))
            })?;
        let old_text = yaml.get(entry.start..entry.end).unwrap_or("");
        let rendered = keep_trailing_comment(old_text, rendered, key, after);
        splices.push((entry.start, entry.end, rendered));
    }
    splices.sort_by_key(|(start, _, _)| *start);
    let mut out = String::with_capacity(yaml.len() + appended.len());
    let mut at = 0;
    for (start, end, text) in splices {
        out.push_str(yaml.get(at..start).unwrap_or(""));
        out.push_str(&text);
        at = end;
    }
    out.push_str(yaml.get(at..).unwrap_or(""));
    if !appended.is_empty() && !out.is_empty() && !out.ends_with('\n') {
        out.push_str(newline);
    }
    out.push_str(&appended);
    Ok(out)
}

/// `rendered` with the trailing `# comment` of the entry it replaces, when both are one line: the
/// comment is the user's note about the property and outlives a new value. The comment is the text
/// from the first ` #` whose removal leaves the same property, so a `#` inside a quoted value is
/// never mistaken for one; and the new line must still read as exactly the new value.
fn keep_trailing_comment(old: &str, rendered: String, key: &str, value: Option<&Value>) -> String {
    let old_line = old.trim_end_matches(['\r', '\n']);
    let line = rendered.trim_end_matches(['\r', '\n']);
    let (Some(value), Ok(old_value)) = (value, frontmatter::parse_properties(old_line)) else {
        return rendered;
    };
    if old_line.contains('\n') || line.contains('\n') {
        return rendered;
    }
    let comment_at = old_line
        .char_indices()
        .filter(|&(_, c)| c == '#')
        .map(|(at, _)| at)
        .find(|&at| {
            let before = &old_line[..at];
            before.ends_with([' ', '\t'])
                && frontmatter::parse_properties(before).ok().as_ref() == Some(&old_value)
        });
    let Some(comment_at) = comment_at else {
        return rendered;
    };
    // The spacing before the comment and the comment itself, as the user wrote them.
    let tail = &old_line[old_line[..comment_at].trim_end().len()..];
    let with_comment = format!("{line}{tail}");
    let mut expected = Map::new();
    expected.insert(key.to_owned(), value.clone());
    if frontmatter::parse_properties(&with_comment).ok() == Some(expected) {
        format!("{with_comment}{}", &rendered[line.len()..])
    } else {
        rendered
    }
}

/// One top-level entry of the block: its key (when the entry reads as exactly one key on its own) and
/// the byte range of its lines, without the blank and comment lines that follow it.
#[derive(Debug)]
pub(crate) struct Entry {
    pub(crate) key: Option<String>,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// The indentation of the top-level mapping and its entries.
pub(crate) fn top_level_entries(yaml: &str) -> (usize, Vec<Entry>) {
    let mut lines = Vec::new();
    let mut at = 0;
    for line in yaml.split_inclusive('\n') {
        lines.push((at, line));
        at += line.len();
    }
    let is_filler = |line: &str| {
        let trimmed = line.trim();
        trimmed.is_empty() || trimmed.starts_with('#')
    };
    let indent = lines
        .iter()
        .find(|(_, line)| !is_filler(line))
        .map_or(0, |(_, line)| {
            line.len() - line.trim_start_matches(' ').len()
        });
    let starts_entry = |line: &str| {
        let Some(rest) = line.get(indent..) else {
            return false;
        };
        let head_is_spaces = line
            .get(..indent)
            .is_some_and(|head| head.bytes().all(|b| b == b' '));
        let is_sequence_item = rest == "-"
            || rest.starts_with("- ")
            || rest.starts_with("-\t")
            || rest.trim_end() == "-";
        head_is_spaces
            && !rest.starts_with([' ', '\t', '#', '\r', '\n'])
            && !rest.is_empty()
            && !is_sequence_item
            && rest.trim_end() != "..."
    };
    let mut entries: Vec<Entry> = Vec::new();
    let mut last_content_end = 0;
    for (start, line) in &lines {
        if starts_entry(line) {
            if let Some(previous) = entries.last_mut() {
                previous.end = last_content_end;
            }
            entries.push(Entry {
                key: None,
                start: *start,
                end: start + line.len(),
            });
        }
        if !is_filler(line) {
            last_content_end = start + line.len();
        }
    }
    if let Some(previous) = entries.last_mut() {
        previous.end = last_content_end.max(previous.start);
    }
    for entry in &mut entries {
        let text = yaml.get(entry.start..entry.end).unwrap_or("");
        if let Ok(map) = frontmatter::parse_properties(text)
            && map.len() == 1
        {
            entry.key = map.keys().next().cloned();
        }
    }
    (indent, entries)
}

/// One `key: value` entry as `render_properties` writes it, indented like the block it joins.
fn render_entry(key: &str, value: &Value, indent: usize, newline: &str) -> String {
    let mut single = Map::new();
    single.insert(key.to_owned(), value.clone());
    let rendered = frontmatter::render_properties(&single);
    let inner = rendered
        .strip_prefix("---\n")
        .and_then(|rest| rest.strip_suffix("---\n"))
        .unwrap_or("");
    let pad = " ".repeat(indent);
    let indented: String = inner
        .split_inclusive('\n')
        .map(|line| format!("{pad}{line}"))
        .collect();
    with_newline(&indented, newline)
}

fn with_newline(text: &str, newline: &str) -> String {
    if newline == "\n" {
        text.to_owned()
    } else {
        text.replace('\n', newline)
    }
}

/// Byte offset of `part` (a slice of `whole`) within `whole`.
fn offset_in(whole: &str, part: &str) -> usize {
    (part.as_ptr() as usize).saturating_sub(whole.as_ptr() as usize)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn update(text: &str, updates: Value, replace: bool) -> Result<String, PropertiesEditError> {
        let Value::Object(updates) = updates else {
            return Ok("<not an object>".to_owned());
        };
        update_properties(text, &updates, replace).map(|update| update.text)
    }

    #[test]
    fn removing_the_last_property_keeps_an_empty_block_when_the_body_would_open_one() {
        // Found by fuzzing: the body's own `---` lines would have become the new block.
        let text = "---\nstatus: draft\n---\n---\n---\nbody\n";
        let updated = update(text, json!({"status": null}), false).expect("update");
        assert_eq!(updated, "---\n---\n---\n---\nbody\n");
        assert_eq!(frontmatter::split(&updated).body, "---\n---\nbody\n");
        // Without such a body the block goes.
        let plain = update(
            "---\nstatus: draft\n---\nbody\n",
            json!({"status": null}),
            false,
        );
        assert_eq!(plain.expect("update"), "body\n");
    }

    #[test]
    fn merge_changes_only_the_lines_of_changed_keys() {
        let text = "---\n# keep me\ntitle: 'Quoted'   # note\ntags: [a, b]\nstatus: draft\naliases:\n- x\n- y\n---\nbody\n";
        assert_eq!(
            update(text, json!({"status": "done"}), false),
            Ok("---\n# keep me\ntitle: 'Quoted'   # note\ntags: [a, b]\nstatus: done\naliases:\n- x\n- y\n---\nbody\n".to_owned())
        );
        assert_eq!(
            update(text, json!({"tags": null, "new": [1, 2]}), false),
            Ok("---\n# keep me\ntitle: 'Quoted'   # note\nstatus: draft\naliases:\n- x\n- y\nnew:\n  - 1\n  - 2\n---\nbody\n".to_owned())
        );
        assert_eq!(
            update(text, json!({"aliases": ["z"]}), false),
            Ok("---\n# keep me\ntitle: 'Quoted'   # note\ntags: [a, b]\nstatus: draft\naliases:\n  - z\n---\nbody\n".to_owned())
        );
    }

    #[test]
    fn a_changed_value_keeps_its_trailing_comment() {
        let text = "---\nstatus: draft   # set by the weekly review\nurl: 'a#b' # not this one\ncount: 1 #x\n---\n";
        assert_eq!(
            update(text, json!({"status": "done", "url": "c#d", "count": 2}), false),
            Ok("---\nstatus: done   # set by the weekly review\nurl: c#d # not this one\ncount: 2 #x\n---\n".to_owned())
        );
        // A value that becomes a list has no single line to carry the comment.
        assert_eq!(
            update(text, json!({"status": ["a", "b"]}), false),
            Ok(
                "---\nstatus:\n  - a\n  - b\nurl: 'a#b' # not this one\ncount: 1 #x\n---\n"
                    .to_owned()
            )
        );
    }

    #[test]
    fn creates_and_removes_a_block() {
        assert_eq!(
            update("body\n", json!({"a": 1}), false),
            Ok("---\na: 1\n---\nbody\n".to_owned())
        );
        assert_eq!(
            update("---\na: 1\n---\nbody\n", json!({"a": null}), false),
            Ok("body\n".to_owned())
        );
        assert_eq!(
            update(
                "\u{feff}---\r\na: 1\r\n---\r\nbody\r\n",
                json!({"b": "x y"}),
                false
            ),
            Ok("\u{feff}---\r\na: 1\r\nb: x y\r\n---\r\nbody\r\n".to_owned())
        );
    }

    #[test]
    fn only_the_first_byte_order_mark_is_the_files() {
        // Found by fuzzing: a second mark is the body's first character (it hides the fence
        // behind it, so there is no block), and a new block goes between the two.
        assert_eq!(
            update(
                "\u{feff}\u{feff}---\r\na: 1\r\n---\r\n",
                json!({"b": 2}),
                false
            ),
            Ok("\u{feff}---\r\nb: 2\r\n---\r\n\u{feff}---\r\na: 1\r\n---\r\n".to_owned())
        );
    }

    #[test]
    fn replace_rewrites_the_block() {
        assert_eq!(
            update("---\na: 1 # c\nb: 2\n---\nbody\n", json!({"c": true}), true),
            Ok("---\nc: true\n---\nbody\n".to_owned())
        );
    }

    #[test]
    fn invalid_or_non_mapping_blocks_are_refused() {
        for text in ["---\na: [1\n---\nbody", "---\n- a\n- b\n---\nbody"] {
            let error = update(text, json!({"a": 1}), true);
            assert!(
                matches!(error, Err(PropertiesEditError::Invalid(_))),
                "{error:?}"
            );
        }
    }

    #[test]
    fn aliases_are_refused_rather_than_broken() {
        let text = "---\nbase: &b 1\nother: *b\n---\n";
        assert!(matches!(
            update(text, json!({"other": 2}), false),
            Err(PropertiesEditError::NotEditable(_))
        ));
        assert!(matches!(
            update(text, json!({"base": 2}), false),
            Err(PropertiesEditError::NotEditable(_))
        ));
        // An untouched alias survives an unrelated change.
        assert_eq!(
            update(text, json!({"new": 1}), false),
            Ok("---\nbase: &b 1\nother: *b\nnew: 1\n---\n".to_owned())
        );
    }

    #[test]
    fn r47_an_update_of_many_properties_changes_each_line() {
        // Each changed key searched the block's entries from the first: quadratic in the keys.
        const KEYS: usize = 20_000;
        let block: String = (0..KEYS).map(|index| format!("k{index}: a\n")).collect();
        let text = format!("---\n{block}---\nbody\n");
        let mut updates = Map::new();
        for index in 0..KEYS {
            updates.insert(format!("k{index}"), json!("b"));
        }
        let updated = update_properties(&text, &updates, false).expect("update");
        let expected: String = (0..KEYS).map(|index| format!("k{index}: b\n")).collect();
        assert_eq!(updated.text, format!("---\n{expected}---\nbody\n"));
        assert_eq!(updated.changed_keys.len(), KEYS);
    }
}
