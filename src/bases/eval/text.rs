//! The methods of text: searching (`contains`, `startsWith`, ...), changing case, `replace` with
//! text or a regular expression (JavaScript's `$1` references), `split`, `slice`, `repeat`.
//! Indexes count UTF-16 code units, as JavaScript (and so Obsidian) counts them: an emoji is two.
//! A slice that cuts a surrogate pair gives U+FFFD for the half, where JavaScript would keep a
//! lone surrogate that no Rust text (nor valid JSON text) can hold.

use super::super::value::{MAX_LIST_LEN, MAX_TEXT_BYTES, Value};
use super::EvalError;
use super::methods::{first_text, number_argument};

pub(super) fn call(
    s: &str,
    name: &str,
    values: &[Value],
    at: usize,
) -> Option<Result<Value, EvalError>> {
    let texts = || values.iter().map(Value::to_text);
    let answer = match name {
        "contains" => Value::Bool(s.contains(&first_text(values))),
        "containsAll" => Value::Bool(texts().all(|t| s.contains(&t))),
        "containsAny" => Value::Bool(texts().any(|t| s.contains(&t))),
        "startsWith" => Value::Bool(s.starts_with(&first_text(values))),
        "endsWith" => Value::Bool(s.ends_with(&first_text(values))),
        "lower" => Value::String(s.to_lowercase()),
        "title" => Value::String(title(s)),
        "trim" => Value::String(s.trim().to_owned()),
        "reverse" => Value::String(s.chars().rev().collect()),
        "slice" => {
            let units: Vec<u16> = s.encode_utf16().collect();
            let (start, end) = slice_bounds(units.len(), values);
            Value::String(String::from_utf16_lossy(&units[start..end]))
        }
        "repeat" => {
            let count = number_argument(values, 0).unwrap_or(0.0).max(0.0).trunc();
            if count * s.len() as f64 > MAX_TEXT_BYTES as f64 {
                return Some(Err(EvalError::TooLarge { at, what: "text" }));
            }
            Value::String(s.repeat(count as usize))
        }
        "replace" => return Some(replace(s, values, at)),
        "split" => return Some(split(s, values, at)),
        _ => return None,
    };
    Some(Ok(answer))
}

/// JavaScript's `slice(start, end)` bounds: negative counts from the end, all clamped.
pub(super) fn slice_bounds(len: usize, values: &[Value]) -> (usize, usize) {
    let clamp = |n: f64| -> usize {
        let n = n.trunc();
        let from_end = if n < 0.0 { len as f64 + n } else { n };
        from_end.clamp(0.0, len as f64) as usize
    };
    let start = number_argument(values, 0).map_or(0, clamp);
    let end = number_argument(values, 1).map_or(len, clamp);
    (start, end.max(start))
}

/// The first letter of each word upper-cased, the rest left as written.
fn title(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut at_word_start = true;
    for c in s.chars() {
        if at_word_start && c.is_alphabetic() {
            out.extend(c.to_uppercase());
        } else {
            out.push(c);
        }
        at_word_start = c.is_whitespace() || c == '-' || c == '_';
    }
    out
}

fn replace(s: &str, values: &[Value], at: usize) -> Result<Value, EvalError> {
    let replacement = values.get(1).map(Value::to_text).unwrap_or_default();
    let too_large = || EvalError::TooLarge { at, what: "text" };
    // The result's size is bounded before it is built: a million matches of a long replacement
    // would otherwise allocate terabytes. Each `$` reference adds at most the whole text once,
    // since matches do not overlap.
    let fits = |matches: usize, references: usize| {
        let projected = (s.len() as u128)
            + (matches as u128) * (replacement.len() as u128)
            + (references as u128) * (s.len() as u128);
        projected <= MAX_TEXT_BYTES as u128
    };
    let out = match values.first() {
        Some(Value::Regex(regex)) => {
            let matches = if regex.global {
                regex.regex.find_iter(s).count()
            } else {
                1
            };
            if !fits(matches, replacement.matches('$').count()) {
                return Err(too_large());
            }
            let rust = js_replacement(&replacement);
            if regex.global {
                regex.regex.replace_all(s, rust.as_str()).into_owned()
            } else {
                regex.regex.replace(s, rust.as_str()).into_owned()
            }
        }
        Some(pattern) => {
            let pattern = pattern.to_text();
            let matches = if pattern.is_empty() {
                1
            } else {
                s.matches(pattern.as_str()).count()
            };
            if !fits(matches, 0) {
                return Err(too_large());
            }
            if pattern.is_empty() {
                format!("{replacement}{s}")
            } else {
                s.replace(&pattern, &replacement)
            }
        }
        None => s.to_owned(),
    };
    Ok(Value::String(out))
}

/// JavaScript's replacement syntax in the regex crate's: `$1` → `${1}`, `$&` → `${0}`,
/// `$$` → a dollar, any other `$` kept as a dollar.
fn js_replacement(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '$' {
            out.push(c);
            continue;
        }
        match chars.peek().copied() {
            Some(d) if d.is_ascii_digit() => {
                let mut number = String::new();
                while let Some(d) = chars.peek().copied().filter(char::is_ascii_digit) {
                    number.push(d);
                    chars.next();
                    if number.len() == 2 {
                        break;
                    }
                }
                out.push_str(&format!("${{{number}}}"));
            }
            Some('&') => {
                chars.next();
                out.push_str("${0}");
            }
            Some('$') => {
                chars.next();
                out.push_str("$$");
            }
            _ => out.push_str("$$"),
        }
    }
    out
}

fn split(s: &str, values: &[Value], at: usize) -> Result<Value, EvalError> {
    let limit = number_argument(values, 1)
        .map_or(usize::MAX, |n| n.max(0.0).min(MAX_LIST_LEN as f64) as usize);
    let parts: Vec<Value> = match values.first() {
        Some(Value::Regex(regex)) => split_by_regex(s, &regex.regex, limit),
        Some(separator) => {
            let separator = separator.to_text();
            if separator.is_empty() {
                // JavaScript splits into UTF-16 code units.
                s.encode_utf16()
                    .take(limit)
                    .map(|unit| Value::String(String::from_utf16_lossy(&[unit])))
                    .collect()
            } else {
                s.split(separator.as_str())
                    .take(limit)
                    .map(|part| Value::String(part.to_owned()))
                    .collect()
            }
        }
        None => vec![Value::String(s.to_owned())],
    };
    if parts.len() > MAX_LIST_LEN {
        return Err(EvalError::TooLarge { at, what: "list" });
    }
    Ok(Value::List(parts))
}

/// JavaScript's `split` by a regular expression: the text between matches, each match's capture
/// groups in between (null for a group that took no part), an empty match where the last piece
/// ended skipped, and at most `limit` items.
fn split_by_regex(s: &str, regex: &regex::Regex, limit: usize) -> Vec<Value> {
    if limit == 0 {
        return Vec::new();
    }
    if s.is_empty() {
        return if regex.is_match(s) {
            Vec::new()
        } else {
            vec![Value::String(String::new())]
        };
    }
    let mut parts = Vec::new();
    let (mut piece_start, mut from) = (0, 0);
    while from < s.len() {
        let Some(captures) = regex.captures_at(s, from) else {
            break;
        };
        let Some(whole) = captures.get(0) else {
            break;
        };
        if whole.end() == piece_start || whole.start() >= s.len() {
            // An empty match where the last piece ended: try one character further on.
            from = next_boundary(s, whole.start().max(from));
            continue;
        }
        parts.push(Value::String(s[piece_start..whole.start()].to_owned()));
        if parts.len() == limit {
            return parts;
        }
        for group in captures.iter().skip(1) {
            parts.push(group.map_or(Value::Null, |m| Value::String(m.as_str().to_owned())));
            if parts.len() == limit {
                return parts;
            }
        }
        piece_start = whole.end();
        from = if whole.is_empty() {
            next_boundary(s, whole.end())
        } else {
            whole.end()
        };
    }
    parts.push(Value::String(s[piece_start..].to_owned()));
    parts
}

/// The byte index of the character after the one at `at` (or the end).
fn next_boundary(s: &str, at: usize) -> usize {
    s[at..]
        .chars()
        .next()
        .map_or(s.len(), |c| at + c.len_utf8())
}
