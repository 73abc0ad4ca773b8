//! The methods of text: searching (`contains`, `startsWith`, ...), changing case, `replace` with
//! text or a regular expression (JavaScript's `$1` references), `split`, `slice`, `repeat`.
//! Indexes count characters, not bytes, so no slice can fall inside a character.

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
            let chars: Vec<char> = s.chars().collect();
            let (start, end) = slice_bounds(chars.len(), values);
            Value::String(chars[start..end].iter().collect())
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
        Some(Value::Regex(regex)) => regex
            .regex
            .split(s)
            .take(limit)
            .map(|part| Value::String(part.to_owned()))
            .collect(),
        Some(separator) => {
            let separator = separator.to_text();
            if separator.is_empty() {
                s.chars()
                    .take(limit)
                    .map(|c| Value::String(c.to_string()))
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
