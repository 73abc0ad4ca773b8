//! The methods of lists: `filter`, `map` and `reduce` evaluate their argument once per element
//! with `value`, `index` (and `acc`) bound; the rest (`contains`, `join`, `sort`, `unique`,
//! `flat`, `slice`, `reverse`) take values. `mean`, `median`, `sum`, `min`, `max` and `stddev`
//! are here too, because summary formulas (`values.mean()`) need them.

use super::super::syntax::Expr;
use super::super::value::{MAX_TEXT_BYTES, Value};
use super::{EvalError, Evaluator, Scope, equals, sort_order};

/// `filter`, `map` and `reduce`, or `None` for any other method.
pub(super) fn call_with_expressions(
    evaluator: &mut Evaluator<'_>,
    items: &[Value],
    name: &str,
    args: &[Expr],
    at: usize,
) -> Option<Result<Value, EvalError>> {
    if !matches!(name, "filter" | "map" | "reduce") {
        return None;
    }
    let Some(body) = args.first() else {
        return Some(Err(EvalError::Arguments {
            at,
            name: format!("{name}()"),
            expected: "an expression using `value` (and `index`)",
        }));
    };
    Some(match name {
        "filter" => each(evaluator, items, body, |value, result, out| {
            if result.is_truthy() {
                out.push(value.clone());
            }
        }),
        "map" => each(evaluator, items, body, |_, result, out| out.push(result)),
        _ => reduce(evaluator, items, body, args.get(1)),
    })
}

fn each(
    evaluator: &mut Evaluator<'_>,
    items: &[Value],
    body: &Expr,
    mut keep: impl FnMut(&Value, Value, &mut Vec<Value>),
) -> Result<Value, EvalError> {
    let mut out = Vec::new();
    for (position, item) in items.iter().enumerate() {
        let scope = Scope {
            value: item.clone(),
            index: Value::Number(position as f64),
            acc: None,
        };
        let result = evaluator.with_scope(scope, |ev| ev.eval(body))?;
        keep(item, result, &mut out);
    }
    Ok(Value::List(out))
}

fn reduce(
    evaluator: &mut Evaluator<'_>,
    items: &[Value],
    body: &Expr,
    initial: Option<&Expr>,
) -> Result<Value, EvalError> {
    let mut acc = match initial {
        Some(initial) => evaluator.eval(initial)?,
        None => Value::Null,
    };
    for (position, item) in items.iter().enumerate() {
        let scope = Scope {
            value: item.clone(),
            index: Value::Number(position as f64),
            acc: Some(acc),
        };
        acc = evaluator.with_scope(scope, |ev| ev.eval(body))?;
        if let Value::String(text) = &acc
            && text.len() > MAX_TEXT_BYTES
        {
            return Err(EvalError::TooLarge {
                at: body.at,
                what: "text",
            });
        }
    }
    Ok(acc)
}

pub(super) fn call(
    evaluator: &Evaluator<'_>,
    items: &[Value],
    name: &str,
    values: &[Value],
    at: usize,
) -> Option<Result<Value, EvalError>> {
    let env = evaluator.env();
    let has = |wanted: &Value| items.iter().any(|item| equals(env, item, wanted));
    let answer = match name {
        "contains" => Value::Bool(values.first().is_some_and(has)),
        "containsAll" => Value::Bool(values.iter().all(has)),
        "containsAny" => Value::Bool(values.iter().any(has)),
        "join" => {
            let separator = values
                .first()
                .map_or_else(|| ",".to_owned(), Value::to_text);
            let mut out = String::new();
            for (position, item) in items.iter().enumerate() {
                if position > 0 {
                    out.push_str(&separator);
                }
                if !matches!(item, Value::Null) {
                    out.push_str(&item.to_text());
                }
                if out.len() > MAX_TEXT_BYTES {
                    return Some(Err(EvalError::TooLarge { at, what: "text" }));
                }
            }
            Value::String(out)
        }
        "flat" => Value::List(
            items
                .iter()
                .flat_map(|item| match item {
                    Value::List(inner) => inner.clone(),
                    other => vec![other.clone()],
                })
                .collect(),
        ),
        "reverse" => Value::List(items.iter().rev().cloned().collect()),
        "slice" => {
            let (start, end) = super::text::slice_bounds(items.len(), values);
            Value::List(items[start..end].to_vec())
        }
        "sort" => {
            let mut sorted = items.to_vec();
            sorted.sort_by(|a, b| sort_order(env, a, b));
            Value::List(sorted)
        }
        "unique" => Value::List(unique(evaluator, items)),
        "mean" | "average" | "median" | "sum" | "min" | "max" | "stddev" => {
            super::super::summaries::numeric(name, items).unwrap_or(Value::Null)
        }
        _ => return None,
    };
    Some(Ok(answer))
}

/// The items without repeats, first occurrences kept. Keyed by an identity text so a long list
/// costs one pass: a link or file by the path it leads to, anything else by its type and text.
pub(super) fn unique(evaluator: &Evaluator<'_>, items: &[Value]) -> Vec<Value> {
    let mut seen = std::collections::HashSet::new();
    items
        .iter()
        .filter(|item| seen.insert(identity(evaluator, item)))
        .cloned()
        .collect()
}

fn identity(evaluator: &Evaluator<'_>, value: &Value) -> String {
    match value {
        Value::File(path) => format!("file:{path}"),
        Value::Link(link) => match super::files::resolve_link(evaluator, link) {
            Some(path) => format!("file:{path}"),
            None => format!("link:{}", link.file_part()),
        },
        Value::Date(date) => format!("date:{}", date.at),
        other => format!("{}:{}", other.type_name(), other.to_text()),
    }
}
