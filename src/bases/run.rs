//! Evaluates one view of a base over rows: the global and view filters, sort, limit, groups,
//! summaries, and the cells of the view's columns for the rows of one page. The answer is plain
//! data for whoever shows it; a formula or summary that fails leaves an error in its cell and the
//! rest stands.
//!
//! A formula is computed for a row only when something reads it: the filters (for every row), the
//! sort and group keys and the summaries (for the rows kept), the columns (for the page's rows
//! only), so a page of 50 rows of a view over thousands computes its other cells 50 times. Every
//! evaluation spends the query's one `Budget`, and every value kept between evaluations (cells,
//! keys, summary inputs) is held against its byte bound and given back once no longer needed, so
//! a query ends with an `Overrun` instead of exhausting memory or time.

use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::ops::Range;

use super::env::{Environment, Row};
use super::eval::{
    Budget, Context, EvalError, FormulaCells, Overrun, equals, evaluate_within, sort_order,
    unique_values,
};
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
    /// Indexes into `ViewResult::rows` of the group's rows in the window.
    pub rows: Vec<usize>,
    /// Over every row of the group, not only those in the window.
    pub summaries: Vec<Summary>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ViewResult {
    pub view: String,
    pub columns: Vec<Column>,
    /// The rows in the window, in display order: sorted, grouped when the view groups.
    pub rows: Vec<ResultRow>,
    /// The groups with a row in the window; empty unless the view has `groupBy`.
    pub groups: Vec<Group>,
    /// Over every row of the view, not only those in the window.
    pub summaries: Vec<Summary>,
    /// How many rows passed the filters, before the limit.
    pub matched: usize,
    /// How many rows the view has after its limit, in and out of the window.
    pub total: usize,
}

/// A row that passed the filters, with the formulas computed for it so far and the bytes they
/// hold in the budget.
struct Kept<'a> {
    row: &'a dyn Row,
    formulas: FormulaCells,
    held: u64,
}

impl Kept<'_> {
    fn path(&self) -> &str {
        &self.row.facts().path
    }
}

/// What every step of one run reads: the base, its view, the environment and the budget.
#[derive(Clone, Copy)]
struct Run<'a> {
    base: &'a Base,
    view: &'a View,
    env: &'a dyn Environment,
    budget: &'a Budget,
}

/// Evaluates `view` of `base` over `rows`, with cells for the rows at `window` of the result
/// (`0..usize::MAX` for all), spending `budget`.
pub fn run_view(
    base: &Base,
    view: &View,
    rows: &[&dyn Row],
    env: &dyn Environment,
    window: Range<usize>,
    budget: &Budget,
) -> Result<ViewResult, Overrun> {
    let run = Run {
        base,
        view,
        env,
        budget,
    };
    let mut kept = run.matching_rows(rows)?;
    let matched = kept.len();
    run.sort_rows(&mut kept)?;
    if let Some(limit) = view.limit
        && limit < kept.len()
    {
        for dropped in kept.drain(limit..) {
            budget.release(dropped.held);
        }
    }
    let group_keys = run.group_rows(&mut kept)?;
    let total = kept.len();
    let window = window.start.min(total)..window.end.min(total);
    let summary_properties: Vec<PropertyId> = view
        .summaries
        .iter()
        .map(|(column, _)| PropertyId::parse(column))
        .collect();
    run.compute(
        &mut kept,
        &base.formulas_for_properties(&summary_properties),
    )?;
    let all: Vec<&Kept<'_>> = kept.iter().collect();
    let summaries = run.summaries(&all)?;
    let mut groups = Vec::new();
    for (key, members) in group_keys {
        let shown: Vec<usize> = members
            .iter()
            .filter(|at| window.contains(*at))
            .map(|at| at - window.start)
            .collect();
        if shown.is_empty() {
            continue;
        }
        let slice: Vec<&Kept<'_>> = members.iter().filter_map(|at| kept.get(*at)).collect();
        groups.push(Group {
            key,
            summaries: run.summaries(&slice)?,
            rows: shown,
        });
    }
    // Only the window's rows get their other cells; the rest give back what they hold.
    let mut page: Vec<Kept<'_>> = Vec::with_capacity(window.len());
    for (at, row) in kept.into_iter().enumerate() {
        if window.contains(&at) {
            page.push(row);
        } else {
            budget.release(row.held);
        }
    }
    let columns = columns(base, view);
    let column_properties: Vec<&PropertyId> = columns.iter().map(|c| &c.property).collect();
    run.compute(&mut page, &base.formulas_for_properties(column_properties))?;
    let mut result_rows = Vec::with_capacity(page.len());
    for row in &page {
        let mut cells = Vec::with_capacity(columns.len());
        for column in &columns {
            let cell = run.property_value(&column.property, row);
            budget.hold(cell_bytes(&cell), &column.id, row.path())?;
            cells.push((column.id.clone(), cell));
        }
        result_rows.push(ResultRow {
            path: row.path().to_owned(),
            cells,
        });
    }
    budget.check(env)?;
    Ok(ViewResult {
        view: view.name.clone(),
        summaries,
        columns,
        rows: result_rows,
        groups,
        matched,
        total,
    })
}

/// The bytes a cell holds; an error is its message.
fn cell_bytes(cell: &Cell) -> u64 {
    match cell {
        Ok(value) => value.held_bytes(),
        Err(_) => 64,
    }
}

impl<'a> Run<'a> {
    /// The rows both the base's and the view's filters keep, each with the formulas the filters
    /// read (the others wait until something reads them: a base's filters usually drop most of
    /// a vault).
    fn matching_rows<'r>(&self, rows: &[&'r dyn Row]) -> Result<Vec<Kept<'r>>, Overrun> {
        let for_filters = self.base.formulas_for_filters(self.view);
        let mut kept = Vec::new();
        for row in rows {
            self.budget.check(self.env)?;
            let mut candidate = Kept {
                row: *row,
                formulas: FormulaCells::new(),
                held: 0,
            };
            self.compute_formulas(&mut candidate, &for_filters)?;
            let context = context(self.env, &candidate);
            let holds = [&self.base.filters, &self.view.filters]
                .into_iter()
                .flatten()
                .all(|filter| passes_within(filter, &context, self.budget));
            if holds {
                kept.push(candidate);
            } else {
                self.budget.release(candidate.held);
            }
        }
        self.budget.check(self.env)?;
        Ok(kept)
    }

    /// Computes `names` (closed under the formulas they use) for every row of `rows`.
    fn compute(&self, rows: &mut [Kept<'_>], names: &BTreeSet<String>) -> Result<(), Overrun> {
        if names.is_empty() {
            return Ok(());
        }
        for row in rows {
            self.budget.check(self.env)?;
            self.compute_formulas(row, names)?;
        }
        Ok(())
    }

    /// Adds to `kept` the formulas of `only` not yet computed, in dependency order, holding each
    /// cell's bytes; `only` must hold the formulas its members use.
    fn compute_formulas(
        &self,
        kept: &mut Kept<'_>,
        only: &BTreeSet<String>,
    ) -> Result<(), Overrun> {
        for formula in &self.base.formulas {
            if !only.contains(&formula.name) || kept.formulas.contains_key(&formula.name) {
                continue;
            }
            let context = Context {
                env: self.env,
                row: Some(kept.row),
                formulas: Some(&kept.formulas),
                values: None,
            };
            let value = evaluate_within(&formula.expression.expr, &context, self.budget);
            let bytes = cell_bytes(&value);
            kept.held = kept.held.saturating_add(bytes);
            kept.formulas.insert(formula.name.clone(), value);
            self.budget.hold(
                bytes,
                &format!("formula.{}", formula.name),
                &kept.row.facts().path,
            )?;
        }
        Ok(())
    }

    fn property_value(&self, property: &PropertyId, kept: &Kept<'_>) -> Cell {
        // A formula's own column shows its own error, not the wrapped one `formula.x` would give.
        if let PropertyId::Formula(name) = property {
            return kept.formulas.get(name).cloned().unwrap_or(Ok(Value::Null));
        }
        match property_expr(property) {
            Some(expr) => evaluate_within(&expr, &context(self.env, kept), self.budget),
            None => Ok(Value::Null),
        }
    }

    /// The value of `property` for every row of `rows`, held in the budget until the caller
    /// releases the bytes returned.
    fn values_of(
        &self,
        property: &PropertyId,
        column: &str,
        rows: &[&Kept<'_>],
    ) -> Result<(Vec<Value>, u64), Overrun> {
        let mut values = Vec::with_capacity(rows.len());
        let mut held = 0u64;
        for row in rows {
            let value = self.property_value(property, row).unwrap_or(Value::Null);
            let bytes = value.held_bytes();
            held = held.saturating_add(bytes);
            if let Err(overrun) = self.budget.hold(bytes, column, row.path()) {
                self.budget.release(held);
                return Err(overrun);
            }
            values.push(value);
        }
        Ok((values, held))
    }

    /// Sorts by the view's keys in turn; empty values go last in either direction; ties keep the
    /// order rows came in.
    fn sort_rows(&self, kept: &mut [Kept<'_>]) -> Result<(), Overrun> {
        let view = self.view;
        if view.sort.is_empty() {
            return Ok(());
        }
        let properties: Vec<&PropertyId> = view.sort.iter().map(|key| &key.property).collect();
        self.compute(kept, &self.base.formulas_for_properties(properties))?;
        let mut keyed: Vec<(Vec<Value>, usize)> = Vec::with_capacity(kept.len());
        let mut held = 0u64;
        for (at, row) in kept.iter().enumerate() {
            let mut keys = Vec::with_capacity(view.sort.len());
            for key in &view.sort {
                let value = self
                    .property_value(&key.property, row)
                    .unwrap_or(Value::Null);
                let bytes = value.held_bytes();
                held = held.saturating_add(bytes);
                if let Err(overrun) = self.budget.hold(bytes, "a sort key", row.path()) {
                    self.budget.release(held);
                    return Err(overrun);
                }
                keys.push(value);
            }
            keyed.push((keys, at));
        }
        let env = self.env;
        keyed.sort_by(|(a, _), (b, _)| {
            view.sort
                .iter()
                .zip(a.iter().zip(b))
                .map(|(key, (x, y))| directed(env, x, y, key.descending))
                .find(|order| *order != Ordering::Equal)
                .unwrap_or(Ordering::Equal)
        });
        reorder(kept, keyed.into_iter().map(|(_, at)| at).collect());
        self.budget.release(held);
        Ok(())
    }

    /// Orders the rows by the group-by value (stable, so the sort stands inside each group) and
    /// returns each group's key and row indexes; no groups without `groupBy`.
    fn group_rows(&self, kept: &mut [Kept<'_>]) -> Result<Vec<(Value, Vec<usize>)>, Overrun> {
        let Some(group_by) = &self.view.group_by else {
            return Ok(Vec::new());
        };
        self.compute(
            kept,
            &self.base.formulas_for_properties([&group_by.property]),
        )?;
        let rows: Vec<&Kept<'_>> = kept.iter().collect();
        // The keys stay held: the groups keep them until the answer is made.
        let (values, _) = self.values_of(&group_by.property, "the groupBy key", &rows)?;
        let env = self.env;
        let mut keyed: Vec<(Value, usize)> = values.into_iter().zip(0..).collect();
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
        Ok(groups)
    }

    /// The view's summaries over `rows`: built-in by name, else the base's custom summary formula.
    fn summaries(&self, rows: &[&Kept<'_>]) -> Result<Vec<Summary>, Overrun> {
        let mut summaries = Vec::with_capacity(self.view.summaries.len());
        for (column, name) in &self.view.summaries {
            let property = PropertyId::parse(column);
            let (values, held) = self.values_of(&property, column, rows)?;
            let value = summarize_within(self.base, name, &values, self.env, self.budget);
            self.budget.release(held);
            self.budget
                .hold(cell_bytes(&value), &format!("the summary of {column}"), "")?;
            summaries.push(Summary {
                column: column.clone(),
                name: name.clone(),
                value,
            });
        }
        self.budget.check(self.env)?;
        Ok(summaries)
    }
}

fn context<'a>(env: &'a dyn Environment, kept: &'a Kept<'a>) -> Context<'a> {
    Context {
        env,
        row: Some(kept.row),
        formulas: Some(&kept.formulas),
        values: None,
    }
}

/// Whether `filter` holds; a statement that fails to evaluate does not hold. Iterative over the
/// tree's groups is not needed: the model bounds their nesting.
pub fn passes(filter: &Filter, context: &Context<'_>) -> bool {
    passes_within(filter, context, &Budget::unbounded())
}

/// `passes` as part of a query spending `budget`.
fn passes_within(filter: &Filter, context: &Context<'_>, budget: &Budget) -> bool {
    match filter {
        Filter::Statement(expression) => {
            evaluate_within(&expression.expr, context, budget).is_ok_and(|value| value.is_truthy())
        }
        Filter::And(items) => items
            .iter()
            .all(|item| passes_within(item, context, budget)),
        Filter::Or(items) => items
            .iter()
            .any(|item| passes_within(item, context, budget)),
        Filter::Not(items) => !items
            .iter()
            .any(|item| passes_within(item, context, budget)),
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

/// One summary over `values`, spending `budget`.
fn summarize_within(
    base: &Base,
    name: &str,
    values: &[Value],
    env: &dyn Environment,
    budget: &Budget,
) -> Cell {
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
            evaluate_within(&expression.expr, &context, budget)
        }
        None => Err(EvalError::UnknownSummary {
            name: name.to_owned(),
        }),
    }
}
