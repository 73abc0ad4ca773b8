//! The properties block: split, parse, render and the line-level merge of `properties_edit`.
//! A merge that changes one key leaves every byte outside the block, and every line of the other
//! keys, as it was; the result reads back as exactly the intended properties; rendering is stable.

use quire::markdown::frontmatter::{parse_properties, render_properties, split};
use quire::markdown::properties_edit::update_properties;
use serde_json::{Map, Value, json};

// The input's first byte picks the edit; the rest is the note.
/// The check itself: panics on any violation.
pub fn run(data: &[u8]) {
    let Some((&choice, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let parts = split(text);
    assert_eq!(parts.block_len + parts.body.len(), text.len());
    assert!(text.ends_with(parts.body));
    let Some(yaml) = parts.yaml else {
        check_edit(text, &Map::new(), None, choice);
        return;
    };
    let Ok(old) = parse_properties(yaml) else {
        // An invalid block is never rewritten.
        let edit = Map::from_iter([("k".to_owned(), json!("v"))]);
        assert!(update_properties(text, &edit, false).is_err());
        return;
    };
    check_render(&old);
    check_edit(text, &old, Some(yaml), choice);
}

/// A rendered block reads back as the same map, and rendering that again gives the same bytes.
fn check_render(map: &Map<String, Value>) {
    let rendered = render_properties(map);
    if map.is_empty() {
        assert_eq!(rendered, "");
        return;
    }
    let parts = split(&rendered);
    assert_eq!(parts.block_len, rendered.len(), "{rendered:?}");
    let back = parts.yaml.map(parse_properties);
    assert_eq!(back, Some(Ok(map.clone())), "{rendered:?}");
    assert_eq!(render_properties(map), rendered);
}

fn check_edit(text: &str, old: &Map<String, Value>, yaml: Option<&str>, choice: u8) {
    let keys: Vec<&String> = old.keys().collect();
    let key = match keys.len() {
        0 => "fuzz key".to_owned(),
        n if choice & 0x80 == 0 => keys[usize::from(choice) % n].clone(),
        _ => "fuzz key".to_owned(),
    };
    let values = [
        json!("plain"),
        json!(42),
        json!(["a", "[[Note]]"]),
        Value::Null,
        json!(true),
        json!("a: b #c\n- d"),
        json!({"nested": [1, 2]}),
        json!(""),
    ];
    let value = values[usize::from(choice >> 4 & 0x7)].clone();
    let mut updates = Map::new();
    updates.insert(key.clone(), value.clone());
    let Ok(update) = update_properties(text, &updates, false) else {
        return;
    };
    let mut expected = old.clone();
    if value.is_null() {
        expected.remove(&key);
    } else {
        expected.insert(key.clone(), value);
    }
    assert_eq!(update.properties, expected);
    let new_parts = split(&update.text);
    let reread = match new_parts.yaml {
        Some(new_yaml) => parse_properties(new_yaml).ok(),
        None => Some(Map::new()),
    };
    assert_eq!(reread.as_ref(), Some(&expected), "{:?}", update.text);
    if update.changed_keys.is_empty() {
        assert_eq!(update.text, text);
        return;
    }
    assert_eq!(update.changed_keys, vec![key.clone()]);
    // Bytes after the block are untouched.
    let old_parts = split(text);
    // A byte-order mark stays first: it moves into the body when the block goes, out of it
    // when a block is added. Only the original file's first character can be the mark; a body
    // that starts with one after a block keeps it as its own (and starts the file once the
    // block is gone).
    let mark = text.starts_with('\u{feff}');
    let old_body = body_after_mark(mark, old_parts.block_len, old_parts.body);
    let new_body = body_after_mark(mark, new_parts.block_len, new_parts.body);
    assert_eq!(new_body, old_body, "the body changed");
    if let (Some(old_yaml), Some(new_yaml)) = (yaml, new_parts.yaml) {
        assert_eq!(
            text.starts_with('\u{feff}'),
            update.text.starts_with('\u{feff}')
        );
        check_lines(old_yaml, new_yaml, &key, old);
    }
    // The same merge again changes nothing.
    let again = update_properties(&update.text, &updates, false);
    if let Ok(again) = again {
        assert!(again.changed_keys.is_empty());
        assert_eq!(again.text, update.text);
    }
}

/// The body without the file's byte-order mark, which the body holds only when there is no block.
fn body_after_mark(mark: bool, block_len: usize, body: &str) -> &str {
    if block_len == 0 && mark {
        body.strip_prefix('\u{feff}').unwrap_or(body)
    } else {
        body
    }
}

/// Only one run of lines differs between the old and new blocks, and every top-level key line in
/// it belongs to the edited key: the other keys' lines are byte for byte the same.
fn check_lines(old_yaml: &str, new_yaml: &str, key: &str, old_map: &Map<String, Value>) {
    let old: Vec<&str> = old_yaml.split_inclusive('\n').collect();
    let new: Vec<&str> = new_yaml.split_inclusive('\n').collect();
    let prefix = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let suffix = old[prefix..]
        .iter()
        .rev()
        .zip(new[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    for line in &old[prefix..old.len() - suffix] {
        // A line that only looks like `key: value` alone may continue a quoted or flow value
        // (found by fuzzing); only the block's real keys count.
        if let Some(other) = top_level_key(line).filter(|other| old_map.contains_key(other)) {
            assert_eq!(
                other, key,
                "the line {line:?} of another key changed\n{old_yaml:?}\n{new_yaml:?}"
            );
        }
    }
}

/// The key a line starts, when the line alone reads as a one-key mapping at column 0.
fn top_level_key(line: &str) -> Option<String> {
    let first = line.chars().next()?;
    if first.is_whitespace() || matches!(first, '#' | '-' | '[' | '{' | '?' | '|' | '>') {
        return None;
    }
    let map = parse_properties(line).ok()?;
    if map.len() != 1 {
        return None;
    }
    map.keys().next().cloned()
}
