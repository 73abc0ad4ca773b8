//! The built-in summaries a view can put under a column (Average, Min, Max, Sum, Range, Median,
//! Stddev, Earliest, Latest, Checked, Unchecked, Empty, Filled, Unique), over the values of that
//! column. Numeric summaries read the numbers (and text holding one), date summaries the dates; a
//! summary with nothing to read is null.

use super::dates::difference_millis;
use super::value::{DateValue, Duration, Value};

/// The names of the built-in summaries, as a view's `summaries` writes them.
pub const BUILT_IN: &[&str] = &[
    "Average",
    "Min",
    "Max",
    "Sum",
    "Range",
    "Median",
    "Stddev",
    "Earliest",
    "Latest",
    "Checked",
    "Unchecked",
    "Empty",
    "Filled",
    "Unique",
];

/// The numbers among `values`, text that reads as a number included: the syntax page's own
/// example averages `formula.ppu`, which `toFixed` makes text.
fn numbers(values: &[Value]) -> Vec<f64> {
    values
        .iter()
        .filter_map(|value| match value {
            Value::Number(n) => Some(*n),
            Value::String(text) => text.trim().parse::<f64>().ok(),
            _ => None,
        })
        .filter(|n| !n.is_nan())
        .collect()
}

fn dates(values: &[Value]) -> Vec<DateValue> {
    values
        .iter()
        .filter_map(|value| match value {
            Value::Date(date) => Some(*date),
            _ => None,
        })
        .collect()
}

/// A numeric aggregate by its list-method name (`mean`, `median`, `sum`, `min`, `max`,
/// `stddev`, `range`); `None` for another name, null when there are no numbers.
pub fn numeric(name: &str, values: &[Value]) -> Option<Value> {
    let mut found = numbers(values);
    if found.is_empty() {
        return match name {
            "sum" => Some(Value::Number(0.0)),
            "mean" | "average" | "median" | "min" | "max" | "stddev" | "range" => Some(Value::Null),
            _ => None,
        };
    }
    let count = found.len() as f64;
    let sum: f64 = found.iter().sum();
    let mean = sum / count;
    let answer = match name {
        "sum" => sum,
        "mean" | "average" => mean,
        "min" => found.iter().copied().fold(f64::INFINITY, f64::min),
        "max" => found.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        "range" => {
            found.iter().copied().fold(f64::NEG_INFINITY, f64::max)
                - found.iter().copied().fold(f64::INFINITY, f64::min)
        }
        "median" => {
            found.sort_by(f64::total_cmp);
            let middle = found.len() / 2;
            if found.len() % 2 == 1 {
                found[middle]
            } else {
                (found[middle - 1] + found[middle]) / 2.0
            }
        }
        // The population standard deviation: the column is the whole result set, not a sample.
        "stddev" => (found.iter().map(|n| (n - mean).powi(2)).sum::<f64>() / count).sqrt(),
        _ => return None,
    };
    Some(Value::Number(answer))
}

/// A built-in summary by name; `None` when `name` is not one (it may be a custom summary).
/// `unique_count` counts distinct values, as the caller's equality sees them.
pub fn built_in(
    name: &str,
    values: &[Value],
    unique_count: impl FnOnce(&[Value]) -> usize,
) -> Option<Value> {
    let count = |keep: &dyn Fn(&Value) -> bool| {
        Value::Number(values.iter().filter(|v| keep(v)).count() as f64)
    };
    let answer = match name {
        "Average" => numeric("mean", values)?,
        "Min" => numeric("min", values)?,
        "Max" => numeric("max", values)?,
        "Sum" => numeric("sum", values)?,
        "Median" => numeric("median", values)?,
        "Stddev" => numeric("stddev", values)?,
        "Range" => range(values),
        "Earliest" => dates(values)
            .into_iter()
            .min_by_key(|d| d.at)
            .map_or(Value::Null, Value::Date),
        "Latest" => dates(values)
            .into_iter()
            .max_by_key(|d| d.at)
            .map_or(Value::Null, Value::Date),
        "Checked" => count(&|v| matches!(v, Value::Bool(true))),
        "Unchecked" => count(&|v| matches!(v, Value::Bool(false))),
        "Empty" => count(&Value::is_empty),
        "Filled" => count(&|v| !v.is_empty()),
        "Unique" => {
            let filled: Vec<Value> = values.iter().filter(|v| !v.is_empty()).cloned().collect();
            Value::Number(unique_count(&filled) as f64)
        }
        _ => return None,
    };
    Some(answer)
}

/// Max − Min over numbers; over dates (when the column has no numbers), Latest − Earliest as a
/// duration.
fn range(values: &[Value]) -> Value {
    if !numbers(values).is_empty() {
        return numeric("range", values).unwrap_or(Value::Null);
    }
    let found = dates(values);
    match (
        found.iter().min_by_key(|d| d.at),
        found.iter().max_by_key(|d| d.at),
    ) {
        (Some(earliest), Some(latest)) => Value::Duration(Duration {
            months: 0.0,
            millis: difference_millis(latest, earliest),
        }),
        _ => Value::Null,
    }
}
