//! Property links: a property value (or list item) that is exactly a wikilink, placed where it
//! is written in the properties block.

use super::{Link, LinkForm, NoteText, Positions, first_unused_occurrences, parse_wikilink_inner};
use serde_json::Value;

pub(super) fn property_links(note: &NoteText, line_starts: &[usize]) -> Vec<Link> {
    let mut values = Vec::new();
    for (key, value) in &note.properties {
        collect_property_links(key, value, &mut values);
    }
    let read: Vec<(String, String, String, String)> = values
        .into_iter()
        .filter_map(|(key, original)| {
            let inner = original.strip_prefix("[[")?.strip_suffix("]]")?;
            let (link, display) = parse_wikilink_inner(inner)?;
            Some((key, original, link, display))
        })
        .collect();
    if read.is_empty() {
        return Vec::new();
    }
    // Place each property link on the first unused occurrence of its wikilink in the block.
    let block = note.text.get(..note.split.block_len).unwrap_or("");
    let originals: Vec<&str> = read
        .iter()
        .map(|(_, original, _, _)| original.as_str())
        .collect();
    let starts = first_unused_occurrences(block, &originals);
    let mut links: Vec<Link> = read
        .into_iter()
        .zip(starts)
        .map(|((key, original, link, display), start)| {
            // A value YAML unfolded or unescaped (`"[[A\nB]]"` over two lines) is not in the block
            // as written: its span is left empty at the block's start, so nothing rewrites it there.
            let (start, end) = start.map_or((0, 0), |at| (at, at + original.len()));
            Link {
                form: LinkForm::Property,
                embed: false,
                link,
                display,
                end,
                original,
                start,
                line: 0,
                column: 0,
                key: Some(key),
            }
        })
        .collect();
    // Properties come back sorted by key; report them in the order they are written.
    links.sort_by_key(|link| link.start);
    let mut positions = Positions::new(note.text, line_starts);
    for link in &mut links {
        (link.line, link.column) = positions.at(link.start);
    }
    links
}

pub(super) fn collect_property_links(key: &str, value: &Value, found: &mut Vec<(String, String)>) {
    match value {
        Value::String(text) => {
            let trimmed = text.trim();
            if trimmed.starts_with("[[")
                && trimmed.ends_with("]]")
                && trimmed.len() > 4
                && !trimmed[2..trimmed.len() - 2].contains("]]")
            {
                found.push((key.to_owned(), trimmed.to_owned()));
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                collect_property_links(&format!("{key}.{index}"), item, found);
            }
        }
        Value::Object(map) => {
            for (name, item) in map {
                collect_property_links(&format!("{key}.{name}"), item, found);
            }
        }
        _ => {}
    }
}
