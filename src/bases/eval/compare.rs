//! Equality and ordering of values. Links are equal when they lead to the same file (or, when
//! neither leads anywhere, when their text is the same); a link equals the file it leads to; a
//! date compares with text that reads as a date. Walks stop at `MAX_VALUE_DEPTH`.

use std::cmp::Ordering;

use super::super::dates::parse_date;
use super::super::env::Environment;
use super::super::value::{MAX_VALUE_DEPTH, Value};

/// The path `value` stands for, if it is a file or a link that resolves.
fn target_path(env: &dyn Environment, value: &Value) -> Option<String> {
    match value {
        Value::File(path) => Some(path.clone()),
        Value::Link(link) => env.resolve(link.file_part(), &link.from),
        _ => None,
    }
}

/// `==` as Bases reads it.
pub fn equals(env: &dyn Environment, left: &Value, right: &Value) -> bool {
    equals_at(env, left, right, 0)
}

fn equals_at(env: &dyn Environment, left: &Value, right: &Value, depth: usize) -> bool {
    if depth > MAX_VALUE_DEPTH {
        return false;
    }
    match (left, right) {
        (Value::Link(a), Value::Link(b)) => {
            match (target_path(env, left), target_path(env, right)) {
                (Some(x), Some(y)) => x == y,
                (None, None) => a.file_part() == b.file_part(),
                _ => false,
            }
        }
        (Value::Link(_) | Value::File(_), Value::Link(_) | Value::File(_)) => {
            target_path(env, left).is_some() && target_path(env, left) == target_path(env, right)
        }
        (Value::Link(link), Value::String(text)) | (Value::String(text), Value::Link(link)) => {
            let written = super::super::value::Link::parse(text, &link.from);
            let resolved = env.resolve(link.file_part(), &link.from);
            let named = env.resolve(written.file_part(), &link.from);
            link.file_part() == written.file_part()
                || link.target == *text
                || (resolved.is_some() && resolved == named)
        }
        (Value::File(path), Value::String(text)) | (Value::String(text), Value::File(path)) => {
            path == text || env.resolve(text, "").as_deref() == Some(path.as_str())
        }
        (Value::Date(_), Value::String(_)) | (Value::String(_), Value::Date(_)) => {
            compare(env, left, right) == Some(Ordering::Equal)
        }
        (Value::Date(a), Value::Date(b)) => a.at == b.at,
        (Value::Number(a), Value::Number(b)) => a == b,
        // Text holding a number equals that number, as it compares with it.
        (Value::Number(n), Value::String(text)) | (Value::String(text), Value::Number(n)) => {
            text.trim().parse::<f64>().is_ok_and(|parsed| parsed == *n)
        }
        (Value::List(a), Value::List(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|(x, y)| equals_at(env, x, y, depth + 1))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter().all(|(key, x)| {
                    b.iter()
                        .find(|(other, _)| other == key)
                        .is_some_and(|(_, y)| equals_at(env, x, y, depth + 1))
                })
        }
        (Value::Duration(a), Value::Duration(b)) => a.total_millis() == b.total_millis(),
        _ => left == right,
    }
}

/// `<`, `>`, `<=`, `>=`: numbers, text, dates (also against text that reads as a date),
/// durations and booleans; `None` when the two cannot be ordered, which makes every
/// comparison false.
pub fn compare(env: &dyn Environment, left: &Value, right: &Value) -> Option<Ordering> {
    let zone = env.time_zone();
    match (left, right) {
        (Value::Number(a), Value::Number(b)) => a.partial_cmp(b),
        (Value::String(a), Value::String(b)) => Some(a.cmp(b)),
        (Value::Date(a), Value::Date(b)) => Some(a.at.cmp(&b.at)),
        (Value::Date(a), Value::String(text)) => Some(a.at.cmp(&parse_date(text, &zone)?.at)),
        (Value::String(text), Value::Date(b)) => Some(parse_date(text, &zone)?.at.cmp(&b.at)),
        (Value::Duration(a), Value::Duration(b)) => a.total_millis().partial_cmp(&b.total_millis()),
        (Value::Bool(a), Value::Bool(b)) => Some(a.cmp(b)),
        // Text holding a number compares as that number (a property typed as text).
        (Value::Number(a), Value::String(text)) => a.partial_cmp(&text.trim().parse::<f64>().ok()?),
        (Value::String(text), Value::Number(b)) => text.trim().parse::<f64>().ok()?.partial_cmp(b),
        (Value::Link(a), Value::Link(b)) => Some(a.shown().cmp(b.shown())),
        _ => None,
    }
}

/// A total order for sorting: values of one kind in their natural order (text case-insensitive
/// first, numbers written as text by their value), kinds in a fixed order, empty values last.
pub fn sort_order(env: &dyn Environment, left: &Value, right: &Value) -> Ordering {
    sort_order_at(env, left, right, 0)
}

fn kind_rank(value: &Value) -> u8 {
    match value {
        Value::Bool(_) => 0,
        Value::Number(_) => 1,
        Value::Date(_) => 2,
        Value::Duration(_) => 3,
        Value::String(_) | Value::Html(_) | Value::Icon(_) | Value::Image(_) => 4,
        Value::Link(_) | Value::File(_) => 5,
        Value::List(_) => 6,
        Value::Object(_) => 7,
        Value::Regex(_) => 8,
        Value::Null => 9,
    }
}

fn sort_order_at(env: &dyn Environment, left: &Value, right: &Value, depth: usize) -> Ordering {
    if left.is_empty() || right.is_empty() {
        return left.is_empty().cmp(&right.is_empty());
    }
    let by_kind = kind_rank(left).cmp(&kind_rank(right));
    if by_kind != Ordering::Equal {
        return by_kind;
    }
    match (left, right) {
        (Value::Number(a), Value::Number(b)) => a.total_cmp(b),
        (Value::Duration(a), Value::Duration(b)) => a.total_millis().total_cmp(&b.total_millis()),
        (Value::List(a), Value::List(b)) if depth < MAX_VALUE_DEPTH => a
            .iter()
            .zip(b)
            .map(|(x, y)| sort_order_at(env, x, y, depth + 1))
            .find(|order| *order != Ordering::Equal)
            .unwrap_or(a.len().cmp(&b.len())),
        (Value::String(_) | Value::Link(_) | Value::File(_), _)
        | (Value::Html(_), _)
        | (Value::Icon(_), _)
        | (Value::Image(_), _) => {
            let (a, b) = (left.to_text(), right.to_text());
            // Text that holds a number ("2.50", "10.00", as toFixed writes them) sorts by the
            // number and before other text, so the order stays total (Rust's sort may panic on
            // one that is not).
            match (a.trim().parse::<f64>(), b.trim().parse::<f64>()) {
                (Ok(x), Ok(y)) => x.total_cmp(&y),
                (Ok(_), Err(_)) => Ordering::Less,
                (Err(_), Ok(_)) => Ordering::Greater,
                (Err(_), Err(_)) => a
                    .to_lowercase()
                    .cmp(&b.to_lowercase())
                    .then_with(|| a.cmp(&b)),
            }
        }
        _ => compare(env, left, right).unwrap_or(Ordering::Equal),
    }
}
