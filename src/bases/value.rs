//! The values expressions compute: what each kind holds, its type name, its truthiness, whether it
//! is empty, and its text (`toString()` and string concatenation). Equality and ordering need link
//! resolution and live in `eval/compare.rs`.
//!
//! Recursive walks over lists and objects stop at `MAX_VALUE_DEPTH`: a value built by `reduce` can
//! nest as deep as a list is long, and no walk may follow it down the stack.

use std::sync::Arc;

use jiff::civil::DateTime;

use super::syntax::RegexLiteral;

/// How deep walks over nested lists and objects go before giving up.
pub const MAX_VALUE_DEPTH: usize = 64;
/// The longest text a value may hold, so `repeat`, `+` and `join` stay bounded.
pub const MAX_TEXT_BYTES: usize = 1 << 20;
/// The most elements a list may hold.
pub const MAX_LIST_LEN: usize = 1 << 20;

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Date(DateValue),
    Duration(Duration),
    List(Vec<Value>),
    /// Keys in the order they were written.
    Object(Vec<(String, Value)>),
    Link(Link),
    /// A file of the vault, by its path.
    File(String),
    Regex(Arc<RegexLiteral>),
    /// `html(...)`: text a view renders as HTML.
    Html(String),
    /// `image(...)`: a path or URL a view renders as an image.
    Image(String),
    /// `icon(...)`: a Lucide icon name.
    Icon(String),
}

/// The slot one value takes in a list, an object or a cell, its own text aside.
const SLOT_BYTES: u64 = std::mem::size_of::<Value>() as u64;

impl Value {
    /// The bytes holding this value takes: a slot per value, nested ones included, and the bytes
    /// of their text. Budgets charge by this, since cloning a value copies all of it.
    pub fn held_bytes(&self) -> u64 {
        let (values, text) = self.footprint();
        values.saturating_mul(SLOT_BYTES).saturating_add(text)
    }

    /// How many values this one is made of (itself and every nested value, down to
    /// `MAX_VALUE_DEPTH`, deeper ones cannot be built) and how many bytes of text they hold.
    /// Walked without recursion.
    pub fn footprint(&self) -> (u64, u64) {
        let (mut values, mut text) = (0u64, 0u64);
        let mut pending = vec![(self, 1usize)];
        while let Some((value, depth)) = pending.pop() {
            values += 1;
            let bytes = match value {
                Value::String(inner)
                | Value::File(inner)
                | Value::Html(inner)
                | Value::Image(inner)
                | Value::Icon(inner) => inner.len(),
                Value::Link(link) => {
                    link.target.len()
                        + link.from.len()
                        + link.display.as_ref().map_or(0, String::len)
                }
                Value::List(items) if depth < MAX_VALUE_DEPTH => {
                    pending.extend(items.iter().map(|item| (item, depth + 1)));
                    0
                }
                Value::Object(entries) if depth < MAX_VALUE_DEPTH => {
                    pending.extend(entries.iter().map(|(_, item)| (item, depth + 1)));
                    entries.iter().map(|(key, _)| key.len()).sum()
                }
                _ => 0,
            };
            text = text.saturating_add(bytes as u64);
        }
        (values, text)
    }
}

/// A date, with or without a time of day, in the vault's wall-clock time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DateValue {
    pub at: DateTime,
    pub has_time: bool,
}

impl DateValue {
    pub fn day(at: jiff::civil::Date) -> DateValue {
        DateValue {
            at: at.to_datetime(jiff::civil::Time::midnight()),
            has_time: false,
        }
    }

    pub fn timed(at: DateTime) -> DateValue {
        DateValue { at, has_time: true }
    }
}

/// A length of time: whole calendar months (years are 12) and a fixed number of milliseconds
/// (weeks, days, hours, minutes, seconds). Months stay months so `+ "1M"` lands on the same day
/// of the next month.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Duration {
    pub months: f64,
    pub millis: f64,
}

/// Milliseconds a month stands for when a duration must become one number.
pub const MONTH_MILLIS: f64 = 30.0 * 86_400_000.0;

impl Duration {
    pub fn total_millis(&self) -> f64 {
        self.months * MONTH_MILLIS + self.millis
    }
}

/// A link as written (`[[target|display]]`, `link("target")`), with the file it was written in,
/// which link resolution starts from.
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    /// The target as written, without brackets; a `#heading` or `^block` subpath is kept.
    pub target: String,
    pub display: Option<String>,
    /// The path of the file the link is written in (empty for the vault root).
    pub from: String,
}

impl Link {
    /// Reads `[[target|display]]`, `![[target]]` or plain text as a link written in `from`.
    pub fn parse(text: &str, from: &str) -> Link {
        let trimmed = text.trim();
        let inner = trimmed
            .strip_prefix('!')
            .unwrap_or(trimmed)
            .strip_prefix("[[")
            .and_then(|rest| rest.strip_suffix("]]"));
        match inner {
            Some(inner) => {
                let (target, display) = match inner.split_once('|') {
                    Some((target, display)) => (target, Some(display.to_owned())),
                    None => (inner, None),
                };
                Link {
                    target: target.trim().to_owned(),
                    display,
                    from: from.to_owned(),
                }
            }
            None => Link {
                target: markdown_link_target(trimmed).unwrap_or(trimmed).to_owned(),
                display: None,
                from: from.to_owned(),
            },
        }
    }

    /// The target without its `#heading` or `^block` subpath: what resolution looks up.
    pub fn file_part(&self) -> &str {
        let end = self.target.find('#').unwrap_or(self.target.len());
        &self.target[..end]
    }

    /// What a reader sees: the display text, else the target.
    pub fn shown(&self) -> &str {
        self.display.as_deref().unwrap_or(&self.target)
    }
}

/// `[text](target)` written as a property value.
fn markdown_link_target(text: &str) -> Option<&str> {
    let rest = text.strip_prefix('[')?;
    let (_, after) = rest.split_once("](")?;
    after.strip_suffix(')')
}

impl Value {
    /// The name `isType` answers to.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Date(_) => "date",
            Value::Duration(_) => "duration",
            Value::List(_) => "list",
            Value::Object(_) => "object",
            Value::Link(_) => "link",
            Value::File(_) => "file",
            Value::Regex(_) => "regexp",
            Value::Html(_) => "html",
            Value::Image(_) => "image",
            Value::Icon(_) => "icon",
        }
    }

    /// JavaScript truthiness, except that an empty list or object is false (see the decisions in
    /// `bases/mod.rs`).
    pub fn is_truthy(&self) -> bool {
        match self {
            Value::Null => false,
            Value::Bool(b) => *b,
            Value::Number(n) => *n != 0.0 && !n.is_nan(),
            Value::String(s) => !s.is_empty(),
            Value::List(items) => !items.is_empty(),
            Value::Object(entries) => !entries.is_empty(),
            Value::Duration(d) => d.total_millis() != 0.0,
            _ => true,
        }
    }

    /// Empty as `isEmpty()` and the Empty/Filled summaries count it: null, "", [] and {}.
    pub fn is_empty(&self) -> bool {
        match self {
            Value::Null => true,
            Value::String(s) => s.is_empty(),
            Value::List(items) => items.is_empty(),
            Value::Object(entries) => entries.is_empty(),
            _ => false,
        }
    }

    /// The text of the value, as `toString()` and concatenation give it.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        write_text(self, &mut out, 0);
        out
    }
}

fn write_text(value: &Value, out: &mut String, depth: usize) {
    if out.len() > MAX_TEXT_BYTES {
        return;
    }
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&number_text(*n)),
        Value::String(s) | Value::Html(s) | Value::Image(s) | Value::Icon(s) | Value::File(s) => {
            out.push_str(s)
        }
        Value::Date(date) => out.push_str(&date_text(date)),
        Value::Duration(duration) => out.push_str(&duration_text(duration)),
        Value::Link(link) => out.push_str(link.shown()),
        Value::Regex(regex) => {
            out.push('/');
            out.push_str(&regex.source);
            out.push('/');
            out.push_str(&regex.flags);
        }
        Value::List(items) => {
            if depth >= MAX_VALUE_DEPTH {
                out.push_str("[…]");
                return;
            }
            for (position, item) in items.iter().enumerate() {
                if position > 0 {
                    out.push_str(", ");
                }
                write_text(item, out, depth + 1);
            }
        }
        Value::Object(entries) => {
            if depth >= MAX_VALUE_DEPTH {
                out.push_str("{…}");
                return;
            }
            out.push('{');
            for (position, (key, item)) in entries.iter().enumerate() {
                if position > 0 {
                    out.push_str(", ");
                }
                out.push_str(key);
                out.push_str(": ");
                write_text(item, out, depth + 1);
            }
            out.push('}');
        }
    }
}

/// `YYYY-MM-DD`, or `YYYY-MM-DD HH:mm:ss` for a date with a time.
pub fn date_text(date: &DateValue) -> String {
    if date.has_time {
        date.at.strftime("%Y-%m-%d %H:%M:%S").to_string()
    } else {
        date.at.date().strftime("%Y-%m-%d").to_string()
    }
}

/// A duration in the units it is made of, largest first: `1 month 2 days 3 hours`.
pub fn duration_text(duration: &Duration) -> String {
    let mut parts = Vec::new();
    if duration.months != 0.0 {
        parts.push(plural(duration.months, "month"));
    }
    let mut rest = duration.millis;
    for (unit, size) in [
        ("day", 86_400_000.0),
        ("hour", 3_600_000.0),
        ("minute", 60_000.0),
        ("second", 1_000.0),
    ] {
        let whole = (rest / size).trunc();
        if whole != 0.0 {
            parts.push(plural(whole, unit));
            rest -= whole * size;
        }
    }
    if rest != 0.0 || parts.is_empty() {
        parts.push(plural(rest, "millisecond"));
    }
    parts.join(" ")
}

fn plural(count: f64, unit: &str) -> String {
    let s = if count.abs() == 1.0 { "" } else { "s" };
    format!("{} {unit}{s}", number_text(count))
}

/// A number as JavaScript's `String(n)` writes it: `3`, `0.5`, `1e+21`, `NaN`, `Infinity`.
pub fn number_text(n: f64) -> String {
    if n.is_nan() {
        return "NaN".to_owned();
    }
    if n.is_infinite() {
        return if n > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    if n == 0.0 {
        return "0".to_owned();
    }
    let magnitude = n.abs();
    if (1e-6..1e21).contains(&magnitude) {
        return format!("{n}");
    }
    // JavaScript switches to exponent form outside [1e-6, 1e21) and always signs the exponent.
    let written = format!("{n:e}");
    match written.split_once('e') {
        Some((mantissa, exponent)) if !exponent.starts_with('-') => {
            format!("{mantissa}e+{exponent}")
        }
        _ => written,
    }
}
