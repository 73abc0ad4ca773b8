//! The arithmetic and comparison operators. Numbers follow JavaScript (`/ 0` is Infinity); text
//! joins with `+`; dates move by durations (`date + "1M"`), and two dates subtract to
//! milliseconds; durations add, subtract, and scale by numbers. Null in arithmetic gives null,
//! so a note without the property shows an empty cell rather than an error.

use std::cmp::Ordering;

use super::super::dates::{add, difference_millis, parse_date, parse_duration};
use super::super::syntax::{BinaryOp, UnaryOp};
use super::super::value::{Duration, MAX_LIST_LEN, MAX_TEXT_BYTES, Value};
use super::{EvalError, Evaluator, compare, equals};

pub(super) fn unary(op: UnaryOp, value: Value, at: usize) -> Result<Value, EvalError> {
    match (op, value) {
        (UnaryOp::Not, value) => Ok(Value::Bool(!value.is_truthy())),
        (_, Value::Null) => Ok(Value::Null),
        (UnaryOp::Negate, Value::Duration(d)) => Ok(Value::Duration(Duration {
            months: -d.months,
            millis: -d.millis,
        })),
        (UnaryOp::Plus, Value::Duration(d)) => Ok(Value::Duration(d)),
        (op, value) => match numeric(&value) {
            Some(n) if op == UnaryOp::Negate => Ok(Value::Number(-n)),
            Some(n) => Ok(Value::Number(n)),
            None => Err(EvalError::Operand {
                at,
                op: if op == UnaryOp::Negate { "-" } else { "+" },
                operand: value.type_name(),
            }),
        },
    }
}

/// A number, a boolean (1 or 0), or text that reads as a number.
fn numeric(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => Some(*n),
        Value::Bool(b) => Some(f64::from(u8::from(*b))),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

pub(super) fn binary(
    evaluator: &Evaluator<'_>,
    op: BinaryOp,
    left: Value,
    right: Value,
    at: usize,
) -> Result<Value, EvalError> {
    let env = evaluator.env();
    let ordered = |wanted: fn(Ordering) -> bool| {
        Ok(Value::Bool(compare(env, &left, &right).is_some_and(wanted)))
    };
    match op {
        BinaryOp::Equal => Ok(Value::Bool(equals(env, &left, &right))),
        BinaryOp::NotEqual => Ok(Value::Bool(!equals(env, &left, &right))),
        BinaryOp::Greater => ordered(Ordering::is_gt),
        BinaryOp::Less => ordered(Ordering::is_lt),
        BinaryOp::GreaterOrEqual => ordered(Ordering::is_ge),
        BinaryOp::LessOrEqual => ordered(Ordering::is_le),
        BinaryOp::Add => plus(left, right, at),
        BinaryOp::Subtract => minus(evaluator, left, right, at),
        BinaryOp::Multiply | BinaryOp::Divide | BinaryOp::Remainder => scale(op, left, right, at),
        // Short-circuited by the evaluator; kept total for safety.
        BinaryOp::And => Ok(if left.is_truthy() { right } else { left }),
        BinaryOp::Or => Ok(if left.is_truthy() { left } else { right }),
    }
}

fn mismatch(op: BinaryOp, left: &Value, right: &Value, at: usize) -> EvalError {
    EvalError::Operands {
        at,
        op: op.symbol(),
        left: left.type_name(),
        right: right.type_name(),
    }
}

/// A duration operand: a duration, or text that reads as one.
fn as_duration(value: &Value) -> Option<Duration> {
    match value {
        Value::Duration(d) => Some(*d),
        Value::String(s) => parse_duration(s),
        _ => None,
    }
}

fn moved(
    date: &super::super::value::DateValue,
    by: &Duration,
    sign: f64,
    at: usize,
) -> Result<Value, EvalError> {
    add(date, by, sign)
        .map(Value::Date)
        .ok_or(EvalError::TooLarge { at, what: "date" })
}

fn plus(left: Value, right: Value, at: usize) -> Result<Value, EvalError> {
    match (&left, &right) {
        (Value::Number(a), Value::Number(b)) => Ok(Value::Number(a + b)),
        (Value::Date(date), other) | (other, Value::Date(date)) if as_duration(other).is_some() => {
            let by = as_duration(other).unwrap_or_default();
            moved(date, &by, 1.0, at)
        }
        (Value::Duration(a), other) if as_duration(other).is_some() => {
            let b = as_duration(other).unwrap_or_default();
            Ok(Value::Duration(Duration {
                months: a.months + b.months,
                millis: a.millis + b.millis,
            }))
        }
        (Value::List(a), Value::List(b)) => {
            if a.len() + b.len() > MAX_LIST_LEN {
                return Err(EvalError::TooLarge { at, what: "list" });
            }
            Ok(Value::List(a.iter().chain(b).cloned().collect()))
        }
        (Value::String(_), _) | (_, Value::String(_)) => {
            let text = |v: &Value| match v {
                Value::Null => String::new(),
                other => other.to_text(),
            };
            let (a, b) = (text(&left), text(&right));
            if a.len() + b.len() > MAX_TEXT_BYTES {
                return Err(EvalError::TooLarge { at, what: "text" });
            }
            Ok(Value::String(a + &b))
        }
        (Value::Null, _) | (_, Value::Null) => Ok(Value::Null),
        _ => match (numeric(&left), numeric(&right)) {
            (Some(a), Some(b)) => Ok(Value::Number(a + b)),
            _ => Err(mismatch(BinaryOp::Add, &left, &right, at)),
        },
    }
}

fn minus(
    evaluator: &Evaluator<'_>,
    left: Value,
    right: Value,
    at: usize,
) -> Result<Value, EvalError> {
    let zone = evaluator.env().time_zone();
    match (&left, &right) {
        (Value::Date(a), Value::Date(b)) => Ok(Value::Number(difference_millis(a, b))),
        (Value::Date(date), other) if as_duration(other).is_some() => {
            let by = as_duration(other).unwrap_or_default();
            moved(date, &by, -1.0, at)
        }
        (Value::Date(a), Value::String(text)) => match parse_date(text, &zone) {
            Some(b) => Ok(Value::Number(difference_millis(a, &b))),
            None => Err(EvalError::BadDuration {
                at,
                text: text.clone(),
            }),
        },
        (Value::Duration(a), other) if as_duration(other).is_some() => {
            let b = as_duration(other).unwrap_or_default();
            Ok(Value::Duration(Duration {
                months: a.months - b.months,
                millis: a.millis - b.millis,
            }))
        }
        (Value::Null, _) | (_, Value::Null) => Ok(Value::Null),
        _ => match (numeric(&left), numeric(&right)) {
            (Some(a), Some(b)) => Ok(Value::Number(a - b)),
            _ => Err(mismatch(BinaryOp::Subtract, &left, &right, at)),
        },
    }
}

/// `*`, `/` and `%`: numbers, and durations scaled by a number.
fn scale(op: BinaryOp, left: Value, right: Value, at: usize) -> Result<Value, EvalError> {
    let apply = |a: f64, b: f64| match op {
        BinaryOp::Multiply => a * b,
        BinaryOp::Divide => a / b,
        _ => a % b,
    };
    match (&left, &right) {
        (Value::Null, _) | (_, Value::Null) => Ok(Value::Null),
        (Value::Duration(d), factor) | (factor, Value::Duration(d))
            if op == BinaryOp::Multiply && numeric(factor).is_some() =>
        {
            let n = numeric(factor).unwrap_or(1.0);
            Ok(Value::Duration(Duration {
                months: d.months * n,
                millis: d.millis * n,
            }))
        }
        (Value::Duration(d), divisor) if op == BinaryOp::Divide && numeric(divisor).is_some() => {
            let n = numeric(divisor).unwrap_or(1.0);
            Ok(Value::Duration(Duration {
                months: d.months / n,
                millis: d.millis / n,
            }))
        }
        (Value::Duration(a), Value::Duration(b)) if op == BinaryOp::Divide => {
            Ok(Value::Number(a.total_millis() / b.total_millis()))
        }
        _ => match (numeric(&left), numeric(&right)) {
            (Some(a), Some(b)) => Ok(Value::Number(apply(a, b))),
            _ => Err(mismatch(op, &left, &right, at)),
        },
    }
}
