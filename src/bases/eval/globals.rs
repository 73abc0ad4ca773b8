//! The global functions: `if`, `date`, `duration`, `now`, `today`, `number`, `list`, `link`,
//! `file`, `max`, `min`, `html`, `escapeHTML`, `image`, `icon`, `random`. `if` evaluates only
//! the branch it returns.

use super::super::dates::{epoch_millis, from_epoch_millis, parse_date, parse_duration};
use super::super::syntax::Expr;
use super::super::value::{DateValue, Link, Value};
use super::{EvalError, Evaluator};

pub(super) fn call(
    evaluator: &mut Evaluator<'_>,
    name: &str,
    args: &[Expr],
    at: usize,
) -> Result<Value, EvalError> {
    if name == "if" {
        return conditional(evaluator, args, at);
    }
    let mut values = Vec::with_capacity(args.len());
    for arg in args {
        values.push(evaluator.eval(arg)?);
    }
    let wrong = |expected: &'static str| EvalError::Arguments {
        at,
        name: format!("{name}()"),
        expected,
    };
    let first = values.first().cloned().unwrap_or(Value::Null);
    let zone = evaluator.env().time_zone();
    match name {
        "now" => Ok(Value::Date(DateValue::timed(evaluator.env().now()))),
        "today" => Ok(Value::Date(DateValue::day(evaluator.env().now().date()))),
        "random" => Ok(Value::Number(evaluator.env().random())),
        "date" => match &first {
            Value::Date(date) => Ok(Value::Date(*date)),
            Value::String(text) => {
                parse_date(text, &zone)
                    .map(Value::Date)
                    .ok_or_else(|| EvalError::BadDate {
                        at,
                        text: text.clone(),
                    })
            }
            Value::Number(millis) => from_epoch_millis(*millis, &zone)
                .map(Value::Date)
                .ok_or_else(|| EvalError::BadDate {
                    at,
                    text: first.to_text(),
                }),
            Value::Null => Ok(Value::Null),
            _ => Err(wrong(
                "a text such as \"2025-01-01\" or \"2025-01-01 12:00:00\"",
            )),
        },
        "duration" => {
            match &first {
                Value::Duration(d) => Ok(Value::Duration(*d)),
                Value::String(text) => parse_duration(text).map(Value::Duration).ok_or_else(|| {
                    EvalError::BadDuration {
                        at,
                        text: text.clone(),
                    }
                }),
                Value::Number(millis) => Ok(Value::Duration(super::super::value::Duration {
                    months: 0.0,
                    millis: *millis,
                })),
                Value::Null => Ok(Value::Null),
                _ => Err(wrong("a text such as \"1d\" or \"2 weeks\"")),
            }
        }
        "number" => to_number(&first, &zone, at),
        // A missing property is no element: `list(tags).length` is 0 for a note without tags.
        "list" => Ok(match first {
            Value::List(items) => Value::List(items),
            Value::Null => Value::List(Vec::new()),
            other => Value::List(vec![other]),
        }),
        "link" => link(evaluator, &values)
            .ok_or_else(|| wrong("a path, a file or a link, and an optional display text")),
        "file" => Ok(file(evaluator, &first)),
        "max" | "min" => Ok(extreme(&values, name == "max")),
        "html" => Ok(Value::Html(first.to_text())),
        "escapeHTML" => Ok(Value::String(escape_html(&first.to_text()))),
        "image" => Ok(match &first {
            Value::File(path) => Value::Image(path.clone()),
            Value::Link(link) => Value::Image(
                super::files::resolve_link(evaluator, link).unwrap_or_else(|| link.target.clone()),
            ),
            Value::Null => Value::Null,
            other => Value::Image(other.to_text()),
        }),
        "icon" => Ok(Value::Icon(first.to_text())),
        _ => Err(EvalError::UnknownFunction {
            at,
            name: name.to_owned(),
        }),
    }
}

fn conditional(
    evaluator: &mut Evaluator<'_>,
    args: &[Expr],
    at: usize,
) -> Result<Value, EvalError> {
    let [condition, rest @ ..] = args else {
        return Err(EvalError::Arguments {
            at,
            name: "if()".to_owned(),
            expected: "a condition, a result, and an optional result for false",
        });
    };
    if rest.is_empty() || rest.len() > 2 {
        return Err(EvalError::Arguments {
            at,
            name: "if()".to_owned(),
            expected: "a condition, a result, and an optional result for false",
        });
    }
    if evaluator.eval(condition)?.is_truthy() {
        evaluator.eval(&rest[0])
    } else {
        match rest.get(1) {
            Some(otherwise) => evaluator.eval(otherwise),
            None => Ok(Value::Null),
        }
    }
}

/// `number(x)`: numbers as they are, dates as epoch milliseconds, booleans as 1 or 0, text parsed.
pub(super) fn to_number(
    value: &Value,
    zone: &jiff::tz::TimeZone,
    at: usize,
) -> Result<Value, EvalError> {
    match value {
        Value::Number(n) => Ok(Value::Number(*n)),
        Value::Bool(b) => Ok(Value::Number(f64::from(u8::from(*b)))),
        Value::Date(date) => Ok(Value::Number(epoch_millis(date, zone))),
        Value::Duration(d) => Ok(Value::Number(d.total_millis())),
        Value::Null => Ok(Value::Null),
        Value::String(text) if text.trim().is_empty() => Ok(Value::Number(0.0)),
        Value::String(text) => {
            text.trim()
                .parse::<f64>()
                .map(Value::Number)
                .map_err(|_| EvalError::BadNumber {
                    at,
                    text: text.clone(),
                })
        }
        other => Err(EvalError::BadNumber {
            at,
            text: other.to_text(),
        }),
    }
}

/// `link(path, display?)`; a link from a note is written in the row's file.
fn link(evaluator: &Evaluator<'_>, values: &[Value]) -> Option<Value> {
    let from = evaluator.row_path().to_owned();
    let mut made = match values.first()? {
        Value::String(text) => Link::parse(text, &from),
        Value::File(path) => Link {
            target: path.clone(),
            display: None,
            from: String::new(),
        },
        Value::Link(link) => link.clone(),
        Value::Null => return Some(Value::Null),
        other => Link::parse(&other.to_text(), &from),
    };
    match values.get(1) {
        None | Some(Value::Null) => {}
        Some(display) => made.display = Some(display.to_text()),
    }
    Some(Value::Link(made))
}

/// `file(x)`: the file a path, link or file stands for, or null when there is none.
fn file(evaluator: &Evaluator<'_>, value: &Value) -> Value {
    let env = evaluator.env();
    let path = match value {
        Value::File(path) => Some(path.clone()),
        Value::Link(link) => super::files::resolve_link(evaluator, link),
        Value::String(text) => {
            let link = Link::parse(text, evaluator.row_path());
            env.file(text)
                .map(|_| text.clone())
                .or_else(|| super::files::resolve_link(evaluator, &link))
        }
        _ => None,
    };
    match path {
        Some(path) if env.file(&path).is_some() => Value::File(path),
        _ => Value::Null,
    }
}

/// `max(...)`/`min(...)` over the numbers given (lists are looked into); null when none.
fn extreme(values: &[Value], largest: bool) -> Value {
    let mut numbers = Vec::new();
    for value in values {
        match value {
            Value::Number(n) => numbers.push(*n),
            Value::List(items) => numbers.extend(items.iter().filter_map(|item| match item {
                Value::Number(n) => Some(*n),
                _ => None,
            })),
            _ => {}
        }
    }
    let pick = |a: f64, b: f64| if largest { a.max(b) } else { a.min(b) };
    numbers
        .into_iter()
        .reduce(pick)
        .map_or(Value::Null, Value::Number)
}

pub(super) fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            other => out.push(other),
        }
    }
    out
}
