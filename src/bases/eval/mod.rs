//! Evaluates an expression tree for one row: names, members, indexes and calls, with the
//! operators in `operators.rs` and the functions in the rooms beside it. Bounded: the tree's
//! height is capped by the parser, and every evaluation counts its steps against `MAX_STEPS` and
//! against its query's `Budget`, so `map` over a huge list or a reduce that doubles a string ends
//! with an error, not a hang. A value's copy is charged by its size (`Value::held_bytes`), and no
//! node may yield text over `MAX_TEXT_BYTES`, whichever function made it.

mod budget;
mod compare;
mod error;
mod files;
mod globals;
mod lists;
mod methods;
mod operators;
mod text;

use std::collections::BTreeMap;

pub use budget::{Budget, MAX_QUERY_BYTES, MAX_QUERY_STEPS, Overrun};
pub use compare::{compare, equals, sort_order};
pub use error::EvalError;

use super::env::{Environment, Row};
use super::syntax::{BinaryOp, Expr, ExprKind};
use super::value::{MAX_TEXT_BYTES, MAX_VALUE_DEPTH, Value};

/// The most nodes one evaluation may visit.
pub const MAX_STEPS: u64 = 5_000_000;

/// A row's formula results so far, by formula name.
pub type FormulaCells = BTreeMap<String, Result<Value, EvalError>>;

/// What an expression is evaluated against.
#[derive(Clone, Copy)]
pub struct Context<'a> {
    pub env: &'a dyn Environment,
    /// The file being filtered or computed; `None` in a summary.
    pub row: Option<&'a dyn Row>,
    /// The formulas already computed for this row.
    pub formulas: Option<&'a FormulaCells>,
    /// `values` of a summary formula.
    pub values: Option<&'a [Value]>,
}

/// Evaluates `expr` in `context`, alone: bounded by `MAX_STEPS` and the value caps only.
pub fn evaluate(expr: &Expr, context: &Context<'_>) -> Result<Value, EvalError> {
    evaluate_within(expr, context, &Budget::unbounded())
}

/// Evaluates `expr` in `context` as part of a query whose evaluations all spend `budget`.
pub fn evaluate_within(
    expr: &Expr,
    context: &Context<'_>,
    budget: &Budget,
) -> Result<Value, EvalError> {
    let mut evaluator = Evaluator {
        context: *context,
        scopes: Vec::new(),
        steps: 0,
        budget,
    };
    evaluator.eval(expr)
}

/// The names `filter`, `map` and `reduce` bind for each element.
#[derive(Clone)]
struct Scope {
    value: Value,
    index: Value,
    acc: Option<Value>,
}

struct Evaluator<'a> {
    context: Context<'a>,
    scopes: Vec<Scope>,
    steps: u64,
    budget: &'a Budget,
}

impl Evaluator<'_> {
    fn env(&self) -> &dyn Environment {
        self.context.env
    }

    /// The path of the row's file, where its links are written ("" without a row).
    fn row_path(&self) -> &str {
        self.context.row.map_or("", |row| row.facts().path.as_str())
    }

    /// Counts `units` of work against `MAX_STEPS` and the query's budget.
    fn charge(&mut self, units: u64) -> Result<(), EvalError> {
        self.steps = self.steps.saturating_add(units);
        if self.steps > MAX_STEPS {
            return Err(EvalError::TooManySteps);
        }
        self.budget.spend(units, self.context.env)
    }

    /// Evaluates one node. Besides the node itself, the size of what it yields is charged, a step
    /// per nested value and per 8 bytes of text (`Value::footprint`), since making it
    /// cost a copy: a `reduce` that grows its accumulator pays for every copy, and a bare
    /// `formula` or `note` pays for every cell it copies, not one step per entry. Text over
    /// `MAX_TEXT_BYTES` is refused here for every function alike (`date.format` of a long pattern
    /// made more than the cap once).
    fn eval(&mut self, expr: &Expr) -> Result<Value, EvalError> {
        self.charge(1)?;
        let value = self.eval_node(expr)?;
        if let Value::String(text) = &value
            && text.len() > MAX_TEXT_BYTES
        {
            return Err(EvalError::TooLarge {
                at: expr.at,
                what: "text",
            });
        }
        let size = match &value {
            Value::List(_) | Value::Object(_) | Value::String(_) => {
                let (values, text) = value.footprint();
                values.saturating_sub(1).saturating_add(text / 8)
            }
            _ => 0,
        };
        self.charge(size)?;
        if matches!(expr.kind, ExprKind::List(_) | ExprKind::Object(_)) {
            self.check_nesting(&value, expr.at)?;
        }
        Ok(value)
    }

    /// Refuses a list or object nested deeper than `MAX_VALUE_DEPTH`: only literals nest values
    /// (`reduce([acc], null)` would nest as deep as a list is long), and cloning or dropping a
    /// value recurses through its depth. The walk is charged too.
    fn check_nesting(&mut self, value: &Value, at: usize) -> Result<(), EvalError> {
        let mut pending = vec![(value, 1usize)];
        let mut visited = 0u64;
        while let Some((next, depth)) = pending.pop() {
            visited += 1;
            let children: Vec<&Value> = match next {
                Value::List(items) => items.iter().collect(),
                Value::Object(entries) => entries.iter().map(|(_, v)| v).collect(),
                _ => continue,
            };
            if depth >= MAX_VALUE_DEPTH {
                return Err(EvalError::TooLarge {
                    at,
                    what: "nesting of lists and objects",
                });
            }
            pending.extend(children.into_iter().map(|child| (child, depth + 1)));
        }
        self.charge(visited)
    }

    fn eval_node(&mut self, expr: &Expr) -> Result<Value, EvalError> {
        match &expr.kind {
            ExprKind::Null => Ok(Value::Null),
            ExprKind::Bool(b) => Ok(Value::Bool(*b)),
            ExprKind::Number(n) => Ok(Value::Number(*n)),
            ExprKind::String(s) => Ok(Value::String(s.clone())),
            ExprKind::Regex(regex) => Ok(Value::Regex(regex.clone())),
            ExprKind::List(items) => {
                let mut values = Vec::with_capacity(items.len());
                for item in items {
                    values.push(self.eval(item)?);
                }
                Ok(Value::List(values))
            }
            ExprKind::Object(entries) => {
                let mut values = Vec::with_capacity(entries.len());
                for (key, item) in entries {
                    let value = self.eval(item)?;
                    values.retain(|(existing, _): &(String, Value)| existing != key);
                    values.push((key.clone(), value));
                }
                Ok(Value::Object(values))
            }
            ExprKind::Name(name) => Ok(self.name(name)),
            ExprKind::Member(base, name) => self.member(base, name),
            ExprKind::Index(base, index) => self.index(base, index),
            ExprKind::Call { target, name, args } => match target {
                None => globals::call(self, name, args, expr.at),
                Some(target) => methods::call(self, target, name, args, expr.at),
            },
            ExprKind::Unary(op, operand) => {
                let value = self.eval(operand)?;
                operators::unary(*op, value, expr.at)
            }
            ExprKind::Binary(BinaryOp::And, left, right) => {
                let left = self.eval(left)?;
                if !left.is_truthy() {
                    return Ok(left);
                }
                self.eval(right)
            }
            ExprKind::Binary(BinaryOp::Or, left, right) => {
                let left = self.eval(left)?;
                if left.is_truthy() {
                    return Ok(left);
                }
                self.eval(right)
            }
            ExprKind::Binary(op, left, right) => {
                let left = self.eval(left)?;
                let right = self.eval(right)?;
                operators::binary(self, *op, left, right, expr.at)
            }
        }
    }

    /// A bare name: a list function's variable, `values`, one of the roots, or a note property.
    fn name(&self, name: &str) -> Value {
        if let Some(scope) = self.scopes.last() {
            match name {
                "value" => return scope.value.clone(),
                "index" => return scope.index.clone(),
                "acc" => {
                    if let Some(acc) = &scope.acc {
                        return acc.clone();
                    }
                }
                _ => {}
            }
        }
        match name {
            "values" if self.context.values.is_some() => {
                Value::List(self.context.values.unwrap_or_default().to_vec())
            }
            "file" => match self.context.row {
                Some(row) => Value::File(row.facts().path.clone()),
                None => Value::Null,
            },
            "this" => match self.env().this_path() {
                Some(path) => Value::File(path.to_owned()),
                None => Value::Null,
            },
            "note" => match self.context.row {
                Some(row) => Value::Object(row.facts().properties.clone()),
                None => Value::Null,
            },
            "formula" => Value::Object(
                self.context
                    .formulas
                    .into_iter()
                    .flatten()
                    .filter_map(|(name, cell)| Some((name.clone(), cell.clone().ok()?)))
                    .collect(),
            ),
            // The syntax page writes `now.time()`: a bare `now` or `today` that is no property of
            // the note reads as the function.
            "now" | "today" if self.note_property(name) == Value::Null => {
                let today = self.env().now();
                if name == "now" {
                    Value::Date(super::value::DateValue::timed(today))
                } else {
                    Value::Date(super::value::DateValue::day(today.date()))
                }
            }
            _ => self.note_property(name),
        }
    }

    fn note_property(&self, name: &str) -> Value {
        self.context
            .row
            .and_then(|row| row.property(name))
            .unwrap_or(Value::Null)
    }

    fn formula(&self, name: &str) -> Result<Value, EvalError> {
        match self.context.formulas.and_then(|cells| cells.get(name)) {
            Some(Ok(value)) => Ok(value.clone()),
            Some(Err(error)) => Err(EvalError::FormulaFailed {
                name: name.to_owned(),
                message: error.to_string(),
            }),
            None => Ok(Value::Null),
        }
    }

    /// Whether `expr` is the bare root `root` (not shadowed by a list function's variable).
    fn is_root(&self, expr: &Expr, root: &str) -> bool {
        matches!(&expr.kind, ExprKind::Name(name) if name == root)
    }

    fn member(&mut self, base: &Expr, name: &str) -> Result<Value, EvalError> {
        if self.is_root(base, "note") {
            return Ok(self.note_property(name));
        }
        if self.is_root(base, "formula") {
            return self.formula(name);
        }
        let value = self.eval(base)?;
        Ok(self.field(&value, name))
    }

    fn index(&mut self, base: &Expr, index: &Expr) -> Result<Value, EvalError> {
        let key = self.eval(index)?;
        if let Value::String(key) = &key {
            if self.is_root(base, "note") {
                return Ok(self.note_property(key));
            }
            if self.is_root(base, "formula") {
                return self.formula(key);
            }
        }
        let value = self.eval(base)?;
        Ok(match (&value, &key) {
            (Value::List(items), Value::Number(n)) => element(items, *n),
            (Value::String(s), Value::Number(n)) => {
                let chars: Vec<char> = s.chars().collect();
                match position(chars.len(), *n) {
                    Some(at) => Value::String(chars[at].to_string()),
                    None => Value::Null,
                }
            }
            (_, Value::String(key)) => self.field(&value, key),
            (_, Value::Number(n)) => self.field(&value, &super::value::number_text(*n)),
            _ => Value::Null,
        })
    }

    /// `value.name`: a field of a string, list, date, file or link, or an object's key.
    fn field(&self, value: &Value, name: &str) -> Value {
        match value {
            // UTF-16 code units, as JavaScript counts.
            Value::String(s) if name == "length" => Value::Number(s.encode_utf16().count() as f64),
            Value::List(items) if name == "length" => Value::Number(items.len() as f64),
            Value::Date(date) => methods::date_field(date, name),
            Value::Object(entries) => entries
                .iter()
                .find(|(key, _)| key == name)
                .map_or(Value::Null, |(_, v)| v.clone()),
            Value::File(path) => files::file_field(self, path, name),
            Value::Link(link) => match files::resolve_link(self, link) {
                Some(path) => files::file_field(self, &path, name),
                None => Value::Null,
            },
            _ => Value::Null,
        }
    }

    /// Runs `body` for `scope`, the variables a list function binds.
    fn with_scope<T>(&mut self, scope: Scope, body: impl FnOnce(&mut Self) -> T) -> T {
        self.scopes.push(scope);
        let out = body(self);
        self.scopes.pop();
        out
    }
}

/// A whole, in-range index into `len` elements; JavaScript answers `undefined` (here null) else.
fn position(len: usize, n: f64) -> Option<usize> {
    if n.fract() != 0.0 || n < 0.0 || n >= len as f64 {
        return None;
    }
    Some(n as usize)
}

fn element(items: &[Value], n: f64) -> Value {
    position(items.len(), n).map_or(Value::Null, |at| items[at].clone())
}

/// The values without repeats (links and files by the file they lead to), first kept.
pub fn unique_values(env: &dyn Environment, items: &[Value]) -> Vec<Value> {
    let evaluator = Evaluator {
        context: Context {
            env,
            row: None,
            formulas: None,
            values: None,
        },
        scopes: Vec::new(),
        steps: 0,
        budget: &Budget::unbounded(),
    };
    lists::unique(&evaluator, items)
}
