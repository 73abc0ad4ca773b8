//! Method calls, `value.name(args)`: the methods every value has (`isTruthy`, `isType`,
//! `toString`, `isEmpty`), then the ones of its type, here for numbers, dates, objects and
//! regular expressions, in `text.rs`, `lists.rs` and `files.rs` for the rest. A method on null
//! answers null, so a note without the property reads as an empty cell.

use super::super::syntax::Expr;
use super::super::value::{DateValue, MAX_TEXT_BYTES, Value};
use super::{EvalError, Evaluator, files, lists, text};
use crate::markdown::moment as markdown_moment;

pub(super) fn call(
    evaluator: &mut Evaluator<'_>,
    target: &Expr,
    name: &str,
    args: &[Expr],
    at: usize,
) -> Result<Value, EvalError> {
    let value = evaluator.eval(target)?;
    if let Value::List(items) = &value
        && let Some(result) = lists::call_with_expressions(evaluator, items, name, args, at)
    {
        return result;
    }
    let mut values = Vec::with_capacity(args.len());
    for arg in args {
        values.push(evaluator.eval(arg)?);
    }
    if let Some(result) = any_type(&value, name, &values) {
        return Ok(result);
    }
    let found = match &value {
        Value::Null => Some(Ok(Value::Null)),
        Value::String(s) => text::call(s, name, &values, at),
        Value::Number(n) => number(*n, name, &values),
        Value::List(items) => lists::call(evaluator, items, name, &values, at),
        Value::Date(date) => date_method(evaluator, date, name, &values, at),
        Value::File(path) => files::file_method(evaluator, path, name, &values, at),
        Value::Link(link) => files::link_method(evaluator, link, name, &values),
        Value::Object(entries) => object(entries, name),
        Value::Regex(regex) => {
            (name == "matches").then(|| Ok(Value::Bool(regex.regex.is_match(&first_text(&values)))))
        }
        _ => None,
    };
    found.unwrap_or_else(|| {
        Err(EvalError::UnknownMethod {
            at,
            name: name.to_owned(),
            type_name: value.type_name(),
        })
    })
}

/// The text of the first argument ("" without one).
pub(super) fn first_text(values: &[Value]) -> String {
    match values.first() {
        None | Some(Value::Null) => String::new(),
        Some(value) => value.to_text(),
    }
}

/// The first argument as a number, if it is one.
pub(super) fn number_argument(values: &[Value], position: usize) -> Option<f64> {
    match values.get(position) {
        Some(Value::Number(n)) => Some(*n),
        Some(Value::String(s)) => s.trim().parse().ok(),
        _ => None,
    }
}

fn any_type(value: &Value, name: &str, values: &[Value]) -> Option<Value> {
    let answer = match name {
        "isTruthy" => Value::Bool(value.is_truthy()),
        "isType" => {
            let wanted = first_text(values).to_lowercase();
            let actual = value.type_name();
            Value::Bool(
                wanted == actual
                    || (wanted == "regex" && actual == "regexp")
                    || (wanted == "array" && actual == "list"),
            )
        }
        "toString" => Value::String(match value {
            Value::Null => String::new(),
            other => other.to_text(),
        }),
        "isEmpty" => Value::Bool(value.is_empty()),
        _ => return None,
    };
    Some(answer)
}

fn number(n: f64, name: &str, values: &[Value]) -> Option<Result<Value, EvalError>> {
    let answer = match name {
        "abs" => n.abs(),
        "ceil" => n.ceil(),
        "floor" => n.floor(),
        "round" => {
            let digits = number_argument(values, 0)
                .unwrap_or(0.0)
                .clamp(0.0, 100.0)
                .trunc();
            let factor = 10f64.powi(digits as i32);
            js_round(n * factor) / factor
        }
        "toFixed" => {
            let digits = number_argument(values, 0).unwrap_or(0.0).clamp(0.0, 100.0) as usize;
            return Some(Ok(Value::String(to_fixed(n, digits))));
        }
        _ => return None,
    };
    Some(Ok(Value::Number(answer)))
}

/// `Math.round`: halves go up (towards positive infinity).
fn js_round(n: f64) -> f64 {
    let floor = n.floor();
    if n - floor >= 0.5 { floor + 1.0 } else { floor }
}

/// `Number.prototype.toFixed`: an exact tie rounds away from zero, where Rust's formatting
/// rounds to even.
pub(super) fn to_fixed(n: f64, digits: usize) -> String {
    if !n.is_finite() {
        return super::super::value::number_text(n);
    }
    if n.abs() >= 1e21 {
        return super::super::value::number_text(n);
    }
    let exact = format!("{:.*}", digits + 40, n.abs());
    let (head, tail) = exact.split_at(exact.len() - 40);
    let is_tie = tail.starts_with('5') && tail[1..].bytes().all(|b| b == b'0');
    let magnitude = if is_tie {
        increment(head).trim_end_matches('.').to_owned()
    } else {
        format!("{:.*}", digits, n.abs())
    };
    let negative = n < 0.0 && magnitude.bytes().any(|b| b.is_ascii_digit() && b != b'0');
    if negative {
        format!("-{magnitude}")
    } else {
        magnitude
    }
}

/// Adds one in the last place of a decimal text (`1.25` → `1.26`, `9.99` → `10.00`).
fn increment(text: &str) -> String {
    let mut digits: Vec<u8> = text.bytes().collect();
    for at in (0..digits.len()).rev() {
        match digits[at] {
            b'.' => continue,
            b'9' => digits[at] = b'0',
            d => {
                digits[at] = d + 1;
                return String::from_utf8(digits).unwrap_or_default();
            }
        }
    }
    let mut out = String::from("1");
    out.push_str(&String::from_utf8(digits).unwrap_or_default());
    out
}

pub(super) fn date_field(date: &DateValue, name: &str) -> Value {
    let at = date.at;
    let n = match name {
        "year" => f64::from(at.year()),
        "month" => f64::from(at.month()),
        "day" => f64::from(at.day()),
        "hour" => f64::from(at.hour()),
        "minute" => f64::from(at.minute()),
        "second" => f64::from(at.second()),
        "millisecond" => f64::from(at.millisecond()),
        _ => return Value::Null,
    };
    Value::Number(n)
}

fn date_method(
    evaluator: &Evaluator<'_>,
    date: &DateValue,
    name: &str,
    values: &[Value],
    at: usize,
) -> Option<Result<Value, EvalError>> {
    let answer = match name {
        "date" => Value::Date(DateValue::day(date.at.date())),
        "time" => Value::String(date.at.strftime("%H:%M:%S").to_string()),
        "format" => {
            let pattern = first_text(values);
            // A moment token writes at most 13 bytes per byte of pattern (`x`, epoch
            // milliseconds), so this bound keeps the text within `MAX_TEXT_BYTES` before it is
            // built rather than after.
            if pattern.len() > MAX_TEXT_BYTES / 16 {
                return Some(Err(EvalError::TooLarge {
                    at,
                    what: "date format pattern",
                }));
            }
            let offset = evaluator
                .env()
                .time_zone()
                .to_ambiguous_zoned_datetime(date.at)
                .compatible()
                .ok()
                .map(|zoned| zoned.offset().seconds());
            Value::String(markdown_moment::format(&pattern, date.at, offset))
        }
        "relative" => Value::String(super::super::dates::relative(date, evaluator.env().now())),
        _ => return None,
    };
    Some(Ok(answer))
}

fn object(entries: &[(String, Value)], name: &str) -> Option<Result<Value, EvalError>> {
    let answer = match name {
        "keys" => Value::List(
            entries
                .iter()
                .map(|(k, _)| Value::String(k.clone()))
                .collect(),
        ),
        "values" => Value::List(entries.iter().map(|(_, v)| v.clone()).collect()),
        _ => return None,
    };
    Some(Ok(answer))
}
