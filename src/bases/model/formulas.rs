//! Formula dependencies: which formulas an expression reads, the evaluation order (each formula
//! after those it uses), and the error naming the formulas of a circle.

use std::collections::{BTreeMap, BTreeSet};

use super::super::syntax::{Expr, ExprKind};
use super::{BaseError, Formula};

/// The names of the formulas `expr` reads (`formula.x`, `formula["x"]`), sorted.
pub(super) fn formulas_used(expr: &Expr) -> Vec<String> {
    let mut found = BTreeSet::new();
    let mut pending = vec![expr];
    while let Some(next) = pending.pop() {
        match &next.kind {
            ExprKind::Member(base, name) if is_formula_root(base) => {
                found.insert(name.clone());
            }
            ExprKind::Index(base, key) if is_formula_root(base) => {
                if let ExprKind::String(name) = &key.kind {
                    found.insert(name.clone());
                }
                pending.push(key);
            }
            _ => push_operands(next, &mut pending),
        }
    }
    found.into_iter().collect()
}

/// Whether `expr` reads the bare `formula` root, the object of every formula computed before it
/// (not `formula.x` or `formula["x"]`, which name the one they read).
pub(super) fn reads_every_formula(expr: &Expr) -> bool {
    let mut pending = vec![expr];
    while let Some(next) = pending.pop() {
        match &next.kind {
            ExprKind::Name(name) if name == "formula" => return true,
            ExprKind::Member(base, _) if is_formula_root(base) => {}
            ExprKind::Index(base, key) if is_formula_root(base) => pending.push(key),
            _ => push_operands(next, &mut pending),
        }
    }
    false
}

/// Queues the expressions `expr` is made of, for a walk over the whole tree.
fn push_operands<'a>(expr: &'a Expr, pending: &mut Vec<&'a Expr>) {
    match &expr.kind {
        ExprKind::List(items) => pending.extend(items),
        ExprKind::Object(entries) => pending.extend(entries.iter().map(|(_, e)| e)),
        ExprKind::Member(inner, _) | ExprKind::Unary(_, inner) => pending.push(inner),
        ExprKind::Index(left, right) | ExprKind::Binary(_, left, right) => {
            pending.push(left);
            pending.push(right);
        }
        ExprKind::Call { target, args, .. } => {
            pending.extend(target.as_deref());
            pending.extend(args);
        }
        ExprKind::Null
        | ExprKind::Bool(_)
        | ExprKind::Number(_)
        | ExprKind::String(_)
        | ExprKind::Regex(_)
        | ExprKind::Name(_) => {}
    }
}

fn is_formula_root(expr: &Expr) -> bool {
    matches!(&expr.kind, ExprKind::Name(name) if name == "formula")
}

/// The formulas in an order where each comes after the ones it uses (written order otherwise).
pub(super) fn in_dependency_order(formulas: Vec<Formula>) -> Result<Vec<Formula>, BaseError> {
    let position: BTreeMap<String, usize> = formulas
        .iter()
        .enumerate()
        .map(|(at, formula)| (formula.name.clone(), at))
        .collect();
    for formula in &formulas {
        if let Some(name) = formula
            .uses
            .iter()
            .find(|used| !position.contains_key(*used))
        {
            return Err(BaseError::UnknownFormula {
                place: format!("formulas.{}", formula.name),
                name: name.clone(),
            });
        }
    }
    let mut waiting: Vec<usize> = formulas.iter().map(|f| f.uses.len()).collect();
    let mut done = vec![false; formulas.len()];
    let mut order = Vec::with_capacity(formulas.len());
    // Repeatedly take the first formula whose uses are all done: quadratic, but bases hold tens.
    while order.len() < formulas.len() {
        let Some(next) = (0..formulas.len()).find(|&at| !done[at] && waiting[at] == 0) else {
            return Err(BaseError::FormulaCycle {
                names: in_circles(&formulas, &done),
            });
        };
        done[next] = true;
        order.push(next);
        for (at, formula) in formulas.iter().enumerate() {
            if !done[at] {
                let uses_next = formula
                    .uses
                    .iter()
                    .filter(|u| **u == formulas[next].name)
                    .count();
                waiting[at] -= uses_next;
            }
        }
    }
    let mut slots: Vec<Option<Formula>> = formulas.into_iter().map(Some).collect();
    Ok(order
        .into_iter()
        .filter_map(|at| slots[at].take())
        .collect())
}

/// The undone formulas that lie on a circle: what is left after repeatedly dropping those no
/// other undone formula uses (a formula that merely uses a circle is dropped that way).
fn in_circles(formulas: &[Formula], done: &[bool]) -> Vec<String> {
    let mut left: BTreeSet<&str> = formulas
        .iter()
        .zip(done)
        .filter(|(_, done)| !**done)
        .map(|(formula, _)| formula.name.as_str())
        .collect();
    loop {
        let used: BTreeSet<&str> = formulas
            .iter()
            .filter(|formula| left.contains(formula.name.as_str()))
            .flat_map(|formula| formula.uses.iter().map(String::as_str))
            .collect();
        let before = left.len();
        left.retain(|name| used.contains(name));
        if left.len() == before {
            return left.into_iter().map(str::to_owned).collect();
        }
    }
}
