//! What the index stores about one note, derived from its text by the pure `markdown` model.
//!
//! Parsing never fails: a note whose properties block is not valid YAML is indexed with no
//! properties (its body is still searchable), and text that is not UTF-8 is read lossily.

use serde_json::{Map, Value};

use super::tasks::TaskFacts;
use crate::markdown::links::{self, Link};
use crate::markdown::note::NoteText;
use crate::markdown::tasks::{TaskSite, task_sites_of};
use sha2::{Digest, Sha256};

use crate::markdown::{chunks, tags};

/// Words per semantic-search chunk: within a 256-token model limit for ordinary prose (about 1.3
/// tokens a word), and the same for every model so chunk hashes do not depend on the model.
pub const CHUNK_WORDS: usize = 160;

/// One row of the properties table: a key with one value (lists are unpacked into one row each).
#[derive(Debug, Clone, PartialEq)]
pub struct PropertyRow {
    pub key: String,
    /// The value as text (`None` for null or an empty list); nested objects as JSON.
    pub text: Option<String>,
    /// The value as a number, when it is one or is text that reads as one.
    pub number: Option<f64>,
}

/// Everything the index keeps about a note's content.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedNote {
    /// File name, `title` property and aliases: the most heavily weighted search column.
    pub title_text: String,
    pub headings_text: String,
    /// Property values as text, searchable with a middle weight.
    pub properties_text: String,
    pub body: String,
    pub tags: Vec<String>,
    pub properties: Map<String, Value>,
    pub property_rows: Vec<PropertyRow>,
    pub note_type: Option<String>,
    /// Unix seconds from the `created` property, when it holds a date.
    pub created: Option<i64>,
    /// Every link, embed and property link, in document order.
    pub links: Vec<Link>,
    /// Each link's lookup name (`links::link_lookup_name`), in the same order: computed while
    /// parsing, on the parser threads, not by the one writer.
    pub link_names: Vec<String>,
    /// Every checkbox list item with its place; which of them are tasks is decided when they are
    /// read, under the plugin settings of that moment.
    pub task_sites: Vec<TaskSite>,
    /// The settings-independent reading of each of `task_sites` (same order), stored in indexed
    /// columns so listings filter, sort and page in SQL.
    pub task_facts: Vec<TaskFacts>,
    /// The content hash of each semantic-search chunk, in order (`note_chunks`); empty when the
    /// index keeps no chunks (semantic search not set up).
    pub chunk_hashes: Vec<String>,
}

/// A note's semantic-search chunks with their content hashes (the embedded text's sha256,
/// shortened): a chunk whose hash already has a vector is never embedded again.
pub fn note_chunks(stem: &str, text: &str) -> Vec<(String, chunks::Chunk)> {
    chunks::chunks(stem, text, CHUNK_WORDS)
        .into_iter()
        .map(|chunk| (chunk_hash(&chunk.text), chunk))
        .collect()
}

fn chunk_hash(text: &str) -> String {
    hex::encode(&Sha256::digest(text.as_bytes())[..16])
}

/// Everything the index stores about a note. `with_chunks`: also cut its semantic-search
/// chunks and hash them, a fifth of the parse, needed only where semantic search is set up.
pub fn parse(stem: &str, text: &str, with_chunks: bool) -> ParsedNote {
    // One block scan and one YAML parse for every extractor below.
    let note = NoteText::read(text);
    let properties = &note.properties;
    let mut title_text = stem.to_string();
    for key in ["title", "aliases", "alias"] {
        if let Some(value) = property(properties, key) {
            for text in texts(value) {
                title_text.push('\n');
                title_text.push_str(&text);
            }
        }
    }
    let headings_text = note
        .headings
        .iter()
        .map(|heading| heading.text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let mut property_rows = Vec::new();
    let mut properties_text = String::new();
    for (key, value) in properties {
        unpack(key, value, &mut property_rows);
        for text in texts(value) {
            properties_text.push_str(&text);
            properties_text.push('\n');
        }
    }
    let note_type = property(properties, "type")
        .and_then(|value| texts(value).into_iter().next())
        .filter(|text| !text.is_empty());
    let created = property(properties, "created")
        .and_then(Value::as_str)
        .and_then(parse_date_time);
    let task_sites = task_sites_of(&note);
    let task_facts = task_sites.iter().map(TaskFacts::read).collect();
    let tags = tags::tags_of(&note);
    let links = links::links_of(&note);
    let link_names = link_names(&links);
    let chunk_hashes = if with_chunks {
        chunks::chunks_of(stem, &note, CHUNK_WORDS)
            .iter()
            .map(|chunk| chunk_hash(&chunk.text))
            .collect()
    } else {
        Vec::new()
    };
    ParsedNote {
        title_text,
        headings_text,
        properties_text,
        body: note.split.body.to_string(),
        tags,
        properties: note.properties,
        property_rows,
        note_type,
        created,
        links,
        link_names,
        task_facts,
        task_sites,
        chunk_hashes,
    }
}

/// Each link's lookup name (`links.target_name`).
pub fn link_names(found: &[Link]) -> Vec<String> {
    found
        .iter()
        .map(|link| links::link_lookup_name(link.path()))
        .collect()
}

/// The first property whose key equals `key` ignoring ASCII case, as Obsidian reads its own keys.
fn property<'a>(properties: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    properties
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(key))
        .map(|(_, value)| value)
}

/// Scalar values of a property (list items included) as text.
fn texts(value: &Value) -> Vec<String> {
    match value {
        Value::Array(items) => items.iter().filter_map(scalar_text).collect(),
        other => scalar_text(other).into_iter().collect(),
    }
}

fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        Value::Bool(flag) => Some(flag.to_string()),
        _ => None,
    }
}

fn unpack(key: &str, value: &Value, rows: &mut Vec<PropertyRow>) {
    let row = |text: Option<String>, number: Option<f64>| PropertyRow {
        key: key.to_string(),
        text,
        number,
    };
    match value {
        Value::Array(items) if items.is_empty() => rows.push(row(None, None)),
        Value::Array(items) => {
            for item in items {
                match item {
                    Value::Array(_) => rows.push(row(Some(item.to_string()), None)),
                    other => unpack(key, other, rows),
                }
            }
        }
        Value::Null => rows.push(row(None, None)),
        Value::String(text) => rows.push(row(Some(text.clone()), number_in(text))),
        Value::Number(number) => rows.push(row(Some(number.to_string()), number.as_f64())),
        Value::Bool(flag) => rows.push(row(Some(flag.to_string()), None)),
        Value::Object(_) => rows.push(row(Some(value.to_string()), None)),
    }
}

/// The number a text holds, when all of it is one (so "3" and "3.0" match 3).
pub fn number_in(text: &str) -> Option<f64> {
    let trimmed = text.trim();
    if trimmed.is_empty() || trimmed.starts_with('+') {
        return None;
    }
    trimmed
        .parse::<f64>()
        .ok()
        .filter(|number| number.is_finite())
}

/// Unix seconds of `YYYY-MM-DD`, optionally followed by `T` or a space and `HH:MM[:SS]` (the forms
/// Obsidian's date and date-time properties write), read as UTC. Anything after the seconds (a
/// fraction or an offset) is ignored.
pub fn parse_date_time(text: &str) -> Option<i64> {
    let text = text.trim();
    let number = |range: std::ops::Range<usize>| -> Option<i64> {
        let part = text.get(range)?;
        part.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| part.parse().ok())
            .flatten()
    };
    if text.get(4..5)? != "-" || text.get(7..8)? != "-" {
        return None;
    }
    let year = i32::try_from(number(0..4)?).ok()?;
    let month = u8::try_from(number(5..7)?).ok()?;
    let day = u8::try_from(number(8..10)?).ok()?;
    let date =
        time::Date::from_calendar_date(year, time::Month::try_from(month).ok()?, day).ok()?;
    let mut seconds = date.midnight().assume_utc().unix_timestamp();
    if text.len() > 10 {
        let separator = text.get(10..11)?;
        if separator != "T" && separator != " " {
            return None;
        }
        let hours = number(11..13)?;
        let minutes = if text.get(13..14)? == ":" {
            number(14..16)?
        } else {
            return None;
        };
        let secs = if text.get(16..17) == Some(":") {
            number(17..19)?
        } else {
            0
        };
        if hours > 23 || minutes > 59 || secs > 60 {
            return None;
        }
        seconds += hours * 3600 + minutes * 60 + secs;
    }
    Some(seconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn promotes_title_aliases_type_created_and_unpacks_lists() {
        let text = "---\ntitle: The Plan\naliases: [Plan A, Plan B]\ntype: project\ncreated: 2025-03-04\nrating: 3\nitems:\n  - '7'\n  - x\nempty: []\n---\n# Goals\nBody #tag here.\n";
        let note = parse("plan", text, true);
        assert_eq!(note.title_text, "plan\nThe Plan\nPlan A\nPlan B");
        assert_eq!(note.headings_text, "Goals");
        assert_eq!(note.note_type.as_deref(), Some("project"));
        assert_eq!(note.created, Some(1_741_046_400));
        assert_eq!(note.tags, vec!["tag".to_string()]);
        assert_eq!(note.body, "# Goals\nBody #tag here.\n");
        let items: Vec<_> = note
            .property_rows
            .iter()
            .filter(|row| row.key == "items")
            .map(|row| (row.text.clone(), row.number))
            .collect();
        assert_eq!(
            items,
            vec![(Some("7".into()), Some(7.0)), (Some("x".into()), None)]
        );
        assert!(
            note.property_rows
                .iter()
                .any(|row| row.key == "empty" && row.text.is_none())
        );
    }

    #[test]
    fn broken_yaml_still_indexes_the_body() {
        let note = parse("n", "---\nkey: [unclosed\n---\nhello\n", true);
        assert!(note.properties.is_empty());
        assert_eq!(note.body, "hello\n");
    }

    #[test]
    fn dates() {
        assert_eq!(parse_date_time("1970-01-02"), Some(86_400));
        assert_eq!(parse_date_time("1970-01-01T01:02"), Some(3_720));
        assert_eq!(parse_date_time("1970-01-01 00:00:05"), Some(5));
        assert_eq!(parse_date_time("2025-02-30"), None);
        assert_eq!(parse_date_time("yesterday"), None);
        assert_eq!(parse_date_time("2025-1-1"), None);
        assert_eq!(parse_date_time("é"), None);
    }
}
