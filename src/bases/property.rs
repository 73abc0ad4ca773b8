//! Between note properties (JSON, as the frontmatter reader gives them) and values: a property
//! that reads as `[[link]]` becomes a link written in the note, one that reads as a date or a
//! date and time becomes a date, and lists and objects convert element by element. The other way,
//! `to_json` writes a value for an answer. Both walks stop at `MAX_VALUE_DEPTH`.

use jiff::tz::TimeZone;
use serde_json::Value as Json;

use super::dates::parse_date;
use super::value::{Link, MAX_VALUE_DEPTH, Value, date_text, duration_text, number_text};

/// `from_property` under the type the vault declares for the key (`.obsidian/types.json`), as
/// Obsidian coerces: a `text` property stays text even when it reads as a date, a `checkbox`
/// takes `"true"`/`"false"` text as a boolean, a `number` takes numeric text as a number, and a
/// list type (`multitext`, `tags`, `aliases`) takes a single value as a one-item list. Any other
/// or no declared type reads as `from_property` does.
pub fn from_typed_property(
    json: &Json,
    declared: Option<&str>,
    path: &str,
    zone: &TimeZone,
) -> Value {
    match (declared, json) {
        (Some("text"), Json::String(text)) if !text.trim().starts_with("[[") => {
            Value::String(text.clone())
        }
        (Some("checkbox"), Json::String(text)) => match text.trim() {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => from_property(json, path, zone),
        },
        (Some("number"), Json::String(text)) => text
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|n| n.is_finite())
            .map_or_else(|| from_property(json, path, zone), Value::Number),
        (
            Some("multitext" | "tags" | "aliases"),
            Json::String(_) | Json::Number(_) | Json::Bool(_),
        ) => Value::List(vec![from_property(json, path, zone)]),
        _ => from_property(json, path, zone),
    }
}

/// The value of a note property written in the note at `path`.
pub fn from_property(json: &Json, path: &str, zone: &TimeZone) -> Value {
    convert(json, path, zone, 0)
}

fn convert(json: &Json, path: &str, zone: &TimeZone, depth: usize) -> Value {
    match json {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => n.as_f64().map_or(Value::Null, Value::Number),
        Json::String(text) => text_value(text, path, zone),
        Json::Array(_) | Json::Object(_) if depth >= MAX_VALUE_DEPTH => Value::Null,
        Json::Array(items) => Value::List(
            items
                .iter()
                .map(|item| convert(item, path, zone, depth + 1))
                .collect(),
        ),
        Json::Object(map) => Value::Object(
            map.iter()
                .map(|(key, item)| (key.clone(), convert(item, path, zone, depth + 1)))
                .collect(),
        ),
    }
}

fn text_value(text: &str, path: &str, zone: &TimeZone) -> Value {
    let trimmed = text.trim();
    if trimmed.starts_with("[[") && trimmed.ends_with("]]") && !trimmed[2..].contains("[[") {
        return Value::Link(Link::parse(trimmed, path));
    }
    let looks_like_date = trimmed.len() >= 10
        && trimmed.as_bytes()[..10].iter().enumerate().all(|(at, b)| {
            if at == 4 || at == 7 {
                *b == b'-'
            } else {
                b.is_ascii_digit()
            }
        });
    if looks_like_date && let Some(date) = parse_date(trimmed, zone) {
        return Value::Date(date);
    }
    Value::String(text.to_owned())
}

/// A value as JSON for an answer: dates as `YYYY-MM-DD[ HH:mm:ss]`, links as `[[target|display]]`,
/// files as their path, durations in words, regular expressions as `/source/flags`.
pub fn to_json(value: &Value) -> Json {
    to_json_at(value, 0)
}

fn to_json_at(value: &Value, depth: usize) -> Json {
    match value {
        Value::Null => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Number(n) => serde_json::Number::from_f64(*n)
            .map_or_else(|| Json::String(number_text(*n)), Json::Number),
        Value::String(s) | Value::Html(s) | Value::Image(s) | Value::Icon(s) | Value::File(s) => {
            Json::String(s.clone())
        }
        Value::Date(date) => Json::String(date_text(date)),
        Value::Duration(duration) => Json::String(duration_text(duration)),
        Value::Link(link) => Json::String(match &link.display {
            Some(display) => format!("[[{}|{display}]]", link.target),
            None => format!("[[{}]]", link.target),
        }),
        Value::Regex(_) => Json::String(value.to_text()),
        Value::List(_) | Value::Object(_) if depth >= MAX_VALUE_DEPTH => Json::Null,
        Value::List(items) => Json::Array(items.iter().map(|v| to_json_at(v, depth + 1)).collect()),
        Value::Object(entries) => Json::Object(
            entries
                .iter()
                .map(|(key, v)| (key.clone(), to_json_at(v, depth + 1)))
                .collect(),
        ),
    }
}

#[cfg(test)]
mod typed_tests {
    use jiff::tz::TimeZone;
    use serde_json::json;

    use super::{Value, from_typed_property};

    fn typed(declared: Option<&str>, json: serde_json::Value) -> Value {
        from_typed_property(&json, declared, "Notes/a.md", &TimeZone::UTC)
    }

    #[test]
    fn declared_types_decide_how_a_value_reads() {
        // A date-looking text stays text when the vault says text, and is a date otherwise.
        assert_eq!(
            typed(Some("text"), json!("2026-01-02")),
            Value::String("2026-01-02".into())
        );
        assert!(matches!(typed(None, json!("2026-01-02")), Value::Date(_)));
        assert!(matches!(
            typed(Some("date"), json!("2026-01-02")),
            Value::Date(_)
        ));
        assert_eq!(typed(Some("checkbox"), json!("true")), Value::Bool(true));
        assert_eq!(typed(Some("number"), json!(" 4.5 ")), Value::Number(4.5));
        assert_eq!(
            typed(Some("number"), json!("four")),
            Value::String("four".into())
        );
        assert_eq!(
            typed(Some("multitext"), json!("solo")),
            Value::List(vec![Value::String("solo".into())])
        );
        assert!(matches!(
            typed(Some("text"), json!("[[Other]]")),
            Value::Link(_)
        ));
    }
}
