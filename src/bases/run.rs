//! Evaluates one view of a base over rows: formulas per row (in dependency order), the global and
//! view filters, sort, limit, groups, the cells of the view's columns, and the summaries. The
//! answer is plain data for whoever shows it; a formula or summary that fails leaves an error in
//! its cell and the rest stands.

use std::cmp::Ordering;
use std::collections::BTreeSet;

use super::env::{Environment, Row};
use super::eval::{Context, EvalError, FormulaCells, equals, evaluate, sort_order, unique_values};
use super::model::{Base, Filter, PropertyId, View};
use super::summaries::built_in;
use super::syntax::{Expr, ExprKind};
use super::value::Value;

/// A computed value, or why it could not be computed for this row.
pub type Cell = Result<Value, EvalError>;

#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// The id as the view's `order` writes it.
    pub id: String,
    pub property: PropertyId,
    /// The configured display name, else the id.
    pub display_name: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ResultRow {
    pub path: String,
    /// One cell per column, keyed by the column id as written, in column order.
    pub cells: Vec<(String, Cell)>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// The column as the view's `summaries` writes it.
    pub column: String,
    pub name: String,
    pub value: Cell,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// The group-by property's value shared by the group's rows (null for rows without it).
    pub key: Value,
    /// Indexes into `ViewResult::rows`, which holds each group's rows together.
    pub rows: Vec<usize>,
    pub summaries: Vec<Summary>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ViewResult {
    pub view: String,
    pub columns: Vec<Column>,
    /// In display order: sorted, grouped when the view groups, cut to the limit.
    pub rows: Vec<ResultRow>,
    /// Empty unless the view has `groupBy`.
    pub groups: Vec<Group>,
    pub summaries: Vec<Summary>,
    /// How many rows passed the filters, before the limit.
    pub matched: usize,
}

/// A row that passed the filters, with its formulas.
struct Kept<'a> {
    row: &'a dyn Row,
    formulas: FormulaCells,
}

/// Evaluates `view` of `base` over `rows`.
pub fn run_view(base: &Base, view: &View, rows: &[&dyn Row], env: &dyn Environment) -> ViewResult {
    let mut kept = matching_rows(base, view, rows, env);
    let matched = kept.len();
    sort_rows(&mut kept, view, env);
    if let Some(limit) = view.limit {
        kept.truncate(limit);
    }
    let group_keys = group_rows(&mut kept, view, env);
    let columns = columns(base, view);
    let result_rows: Vec<ResultRow> = kept
        .iter()
        .map(|row| ResultRow {
            path: row.row.facts().path.clone(),
            cells: columns
                .iter()
                .map(|column| {
                    (
                        column.id.clone(),
                        property_value(&column.property, row, env),
                    )
                })
                .collect(),
        })
        .collect();
    let groups = group_keys
        .into_iter()
        .map(|(key, members)| {
            let slice: Vec<&Kept<'_>> = members.iter().map(|at| &kept[*at]).collect();
            Group {
                key,
                summaries: summaries(base, view, &slice, env),
                rows: members,
            }
        })
        .collect();
    let all: Vec<&Kept<'_>> = kept.iter().collect();
    ViewResult {
        view: view.name.clone(),
        summaries: summaries(base, view, &all, env),
        columns,
        rows: result_rows,
        groups,
        matched,
    }
}

/// The rows both the base's and the view's filters keep, with all their formulas. Only the
/// formulas the filters read are computed before filtering; the rest only for the rows kept,
/// since a base's filters usually drop most of a vault.
fn matching_rows<'a>(
    base: &Base,
    view: &View,
    rows: &[&'a dyn Row],
    env: &dyn Environment,
) -> Vec<Kept<'a>> {
    let for_filters = base.formulas_for_filters(view);
    let mut kept: Vec<Kept<'a>> = rows
        .iter()
        .map(|row| {
            let mut formulas = FormulaCells::new();
            compute_formulas(base, *row, env, &mut formulas, Some(&for_filters));
            Kept {
                row: *row,
                formulas,
            }
        })
        .filter(|kept| {
            let context = context(env, kept);
            [&base.filters, &view.filters]
                .into_iter()
                .flatten()
                .all(|filter| passes(filter, &context))
        })
        .collect();
    for row in &mut kept {
        compute_formulas(base, row.row, env, &mut row.formulas, None);
    }
    kept
}

fn context<'a>(env: &'a dyn Environment, kept: &'a Kept<'a>) -> Context<'a> {
    Context {
        env,
        row: Some(kept.row),
        formulas: Some(&kept.formulas),
        values: None,
    }
}

/// Every formula of the base for `row`, each after the ones it uses.
pub fn formulas_for(base: &Base, row: &dyn Row, env: &dyn Environment) -> FormulaCells {
    let mut cells = FormulaCells::new();
    compute_formulas(base, row, env, &mut cells, None);
    cells
}

/// Adds to `cells` the formulas not yet in it (only those in `only`, when given), in dependency
/// order; `only` must hold the formulas its members use.
fn compute_formulas(
    base: &Base,
    row: &dyn Row,
    env: &dyn Environment,
    cells: &mut FormulaCells,
    only: Option<&BTreeSet<String>>,
) {
    for formula in &base.formulas {
        let skipped = only.is_some_and(|only| !only.contains(&formula.name));
        if skipped || cells.contains_key(&formula.name) {
            continue;
        }
        let context = Context {
            env,
            row: Some(row),
            formulas: Some(cells),
            values: None,
        };
        let value = evaluate(&formula.expression.expr, &context);
        cells.insert(formula.name.clone(), value);
    }
}

/// Whether `filter` holds; a statement that fails to evaluate does not hold. Iterative over the
/// tree's groups is not needed: the model bounds their nesting.
pub fn passes(filter: &Filter, context: &Context<'_>) -> bool {
    match filter {
        Filter::Statement(expression) => {
            evaluate(&expression.expr, context).is_ok_and(|value| value.is_truthy())
        }
        Filter::And(items) => items.iter().all(|item| passes(item, context)),
        Filter::Or(items) => items.iter().any(|item| passes(item, context)),
        Filter::Not(items) => !items.iter().any(|item| passes(item, context)),
    }
}

/// The expression a property id stands for: `note.x`, `file.x` or `formula.x`.
fn property_expr(property: &PropertyId) -> Option<Expr> {
    let (root, name) = match property {
        PropertyId::Note(name) => ("note", name),
        PropertyId::File(name) => ("file", name),
        PropertyId::Formula(name) => ("formula", name),
    };
    let base = Expr::new(ExprKind::Name(root.to_owned()), 0).ok()?;
    Expr::new(ExprKind::Member(Box::new(base), name.clone()), 0).ok()
}

fn property_value(property: &PropertyId, kept: &Kept<'_>, env: &dyn Environment) -> Cell {
    // A formula's own column shows its own error, not the wrapped one `formula.x` would give.
    if let PropertyId::Formula(name) = property {
        return kept.formulas.get(name).cloned().unwrap_or(Ok(Value::Null));
    }
    match property_expr(property) {
        Some(expr) => evaluate(&expr, &context(env, kept)),
        None => Ok(Value::Null),
    }
}

/// Sorts by the view's keys in turn; empty values go last in either direction; ties keep the
/// order rows came in.
fn sort_rows(kept: &mut [Kept<'_>], view: &View, env: &dyn Environment) {
    if view.sort.is_empty() {
        return;
    }
    let mut keyed: Vec<(Vec<Value>, usize)> = kept
        .iter()
        .enumerate()
        .map(|(at, row)| {
            let keys = view
                .sort
                .iter()
                .map(|key| property_value(&key.property, row, env).unwrap_or(Value::Null))
                .collect();
            (keys, at)
        })
        .collect();
    keyed.sort_by(|(a, _), (b, _)| {
        view.sort
            .iter()
            .zip(a.iter().zip(b))
            .map(|(key, (x, y))| directed(env, x, y, key.descending))
            .find(|order| *order != Ordering::Equal)
            .unwrap_or(Ordering::Equal)
    });
    reorder(kept, keyed.into_iter().map(|(_, at)| at).collect());
}

/// `sort_order`, reversed when descending, except that empty values stay last.
fn directed(env: &dyn Environment, x: &Value, y: &Value, descending: bool) -> Ordering {
    if x.is_empty() || y.is_empty() {
        return x.is_empty().cmp(&y.is_empty());
    }
    let order = sort_order(env, x, y);
    if descending { order.reverse() } else { order }
}

/// Puts `items` in the order `positions` lists (a permutation of their indexes).
fn reorder<T>(items: &mut [T], positions: Vec<usize>) {
    let mut slots: Vec<Option<usize>> = positions.into_iter().map(Some).collect();
    // Apply the permutation by following cycles with swaps.
    for start in 0..slots.len() {
        let mut current = start;
        while let Some(source) = slots[current].take() {
            if source == start {
                break;
            }
            items.swap(current, source);
            current = source;
        }
    }
}

/// Orders the rows by the group-by value (stable, so the sort stands inside each group) and
/// returns each group's key and row indexes; no groups without `groupBy`.
fn group_rows(
    kept: &mut [Kept<'_>],
    view: &View,
    env: &dyn Environment,
) -> Vec<(Value, Vec<usize>)> {
    let Some(group_by) = &view.group_by else {
        return Vec::new();
    };
    let mut keyed: Vec<(Value, usize)> = kept
        .iter()
        .enumerate()
        .map(|(at, row)| {
            (
                property_value(&group_by.property, row, env).unwrap_or(Value::Null),
                at,
            )
        })
        .collect();
    keyed.sort_by(|(a, _), (b, _)| directed(env, a, b, group_by.descending));
    let keys: Vec<Value> = keyed.iter().map(|(key, _)| key.clone()).collect();
    reorder(kept, keyed.into_iter().map(|(_, at)| at).collect());
    let mut groups: Vec<(Value, Vec<usize>)> = Vec::new();
    for (at, key) in keys.into_iter().enumerate() {
        match groups.last_mut() {
            Some((last, members)) if same_group(env, last, &key) => members.push(at),
            _ => groups.push((key, vec![at])),
        }
    }
    groups
}

fn same_group(env: &dyn Environment, a: &Value, b: &Value) -> bool {
    (a.is_empty() && b.is_empty()) || equals(env, a, b)
}

fn columns(base: &Base, view: &View) -> Vec<Column> {
    view.order
        .iter()
        .map(|id| Column {
            id: id.clone(),
            property: PropertyId::parse(id),
            display_name: base.display_name(id).unwrap_or(id).to_owned(),
        })
        .collect()
}

/// The view's summaries over `rows`: built-in by name, else the base's custom summary formula.
fn summaries(base: &Base, view: &View, rows: &[&Kept<'_>], env: &dyn Environment) -> Vec<Summary> {
    view.summaries
        .iter()
        .map(|(column, name)| {
            let property = PropertyId::parse(column);
            let values: Vec<Value> = rows
                .iter()
                .map(|row| property_value(&property, row, env).unwrap_or(Value::Null))
                .collect();
            Summary {
                column: column.clone(),
                name: name.clone(),
                value: summarize(base, name, &values, env),
            }
        })
        .collect()
}

/// One summary over `values`.
pub fn summarize(base: &Base, name: &str, values: &[Value], env: &dyn Environment) -> Cell {
    if let Some(value) = built_in(name, values, |filled| unique_values(env, filled).len()) {
        return Ok(value);
    }
    match base.summaries.iter().find(|(custom, _)| custom == name) {
        Some((_, expression)) => {
            let context = Context {
                env,
                row: None,
                formulas: None,
                values: Some(values),
            };
            evaluate(&expression.expr, &context)
        }
        None => Err(EvalError::UnknownSummary {
            name: name.to_owned(),
        }),
    }
}
