//! Which files can pass a view's filters, judged before their properties and links are read: the
//! statements joined by AND (in `and` lists or with `&&`) that read nothing but the file's path
//! and tags (`file.hasTag(..)`, `file.inFolder(..)`, `file.ext == "md"`) are evaluated over a file
//! that holds only its path and tags. The evaluator itself decides them, so the answer is the one
//! the full row would give; the other statements are left to the full run.
//!
//! Before that, the index narrows in SQL (`filter`): the folders of `file.inFolder`, the tags of
//! `file.hasTag`, and the property keys of comparisons `note.x <op> <text, number or boolean>`
//! that null fails (a note without the key reads null; the evaluator itself is asked whether
//! null passes, so `==`, `>` and `<` narrow while `!=` does not). What SQL lets through is a
//! superset; the evaluator still judges every row.

use jiff::civil::DateTime;

use crate::bases::syntax::{BinaryOp, ExprKind, UnaryOp};
use crate::bases::{Base, Context, Environment, Expr, FileFacts, Filter, View, evaluate};
use crate::index::RecordFilter;

/// File fields derived from the path and the tags alone.
const PATH_FIELDS: &[&str] = &["name", "basename", "path", "folder", "ext", "tags"];

/// Methods of text and lists that read only their target and arguments.
const PURE_METHODS: &[&str] = &[
    "contains",
    "containsAll",
    "containsAny",
    "startsWith",
    "endsWith",
    "lower",
    "isEmpty",
];

/// The statements of a view that a file's path and tags decide.
pub(super) struct Narrowing<'a> {
    statements: Vec<&'a Expr>,
    /// What the index can check of every statement that must hold.
    filter: RecordFilter,
    env: Bare,
}

impl<'a> Narrowing<'a> {
    pub(super) fn new(base: &'a Base, view: &'a View, now: DateTime) -> Narrowing<'a> {
        let mut statements = Vec::new();
        for filter in [&base.filters, &view.filters].into_iter().flatten() {
            conjuncts_of_filter(filter, &mut statements);
        }
        let env = Bare { now };
        let mut filter = RecordFilter::default();
        for expr in &statements {
            narrow_in_sql(expr, &mut filter, &env);
        }
        statements.retain(|expr| reads_only_path_and_tags(expr));
        Narrowing {
            statements,
            filter,
            env,
        }
    }

    /// What the index can check before any row is made.
    pub(super) fn filter(&self) -> &RecordFilter {
        &self.filter
    }

    /// Whether a file with this path and these tags can pass the filters; false only when the
    /// filters as written exclude it.
    pub(super) fn admits(&self, path: &str, tags: &[String]) -> bool {
        if self.statements.is_empty() {
            return true;
        }
        let facts = FileFacts {
            path: path.to_owned(),
            tags: tags.to_vec(),
            ..FileFacts::default()
        };
        self.statements
            .iter()
            .all(|expr| holds(expr, &self.env, &facts))
    }
}

/// Adds what `expr`, a statement every row must pass, says in the index's terms.
fn narrow_in_sql(expr: &Expr, filter: &mut RecordFilter, env: &Bare) {
    match &expr.kind {
        ExprKind::Call {
            target: Some(target),
            name,
            args,
        } if is_file(target) => {
            let Some(texts) = args.iter().map(literal_text).collect::<Option<Vec<_>>>() else {
                return;
            };
            match name.as_str() {
                "inFolder" => {
                    let folder = texts.first().map_or("", |t| t.trim().trim_matches('/'));
                    if !folder.is_empty() {
                        filter.folders.push(folder.to_owned());
                    }
                }
                "hasTag" => {
                    // As the evaluator compares tags; an empty one matches nothing.
                    let set: Vec<String> = texts
                        .iter()
                        .map(|t| t.trim().trim_start_matches('#').to_lowercase())
                        .filter(|t| !t.is_empty())
                        .collect();
                    filter.tag_sets.push(set);
                }
                _ => {}
            }
        }
        ExprKind::Binary(op, left, right) if is_comparison(*op) => {
            let (key, read_first, read, literal) = match (property_key(left), property_key(right)) {
                (Some(key), None) if is_scalar(right) => (key, true, left, right),
                (None, Some(key)) if is_scalar(left) => (key, false, right, left),
                _ => return,
            };
            // A note without the key reads null: when the evaluator says null fails the
            // comparison, only notes with the key can pass.
            let absent = Expr::new(ExprKind::Null, read.at).and_then(|null| {
                let (left, right) = if read_first {
                    (null, (**literal).clone())
                } else {
                    ((**literal).clone(), null)
                };
                Expr::new(ExprKind::Binary(*op, Box::new(left), Box::new(right)), 0)
            });
            if absent.is_ok_and(|expr| !holds(&expr, env, &FileFacts::default())) {
                filter.property_keys.push(key.to_lowercase());
            }
        }
        _ => {}
    }
}

fn literal_text(expr: &Expr) -> Option<&str> {
    match &expr.kind {
        ExprKind::String(text) => Some(text),
        _ => None,
    }
}

fn is_comparison(op: BinaryOp) -> bool {
    matches!(
        op,
        BinaryOp::Equal
            | BinaryOp::NotEqual
            | BinaryOp::Greater
            | BinaryOp::Less
            | BinaryOp::GreaterOrEqual
            | BinaryOp::LessOrEqual
    )
}

fn is_scalar(expr: &Expr) -> bool {
    matches!(
        &expr.kind,
        ExprKind::String(_) | ExprKind::Number(_) | ExprKind::Bool(_)
    )
}

/// Whether `expr` holds for `row`; a statement that fails for a row does not hold, in the full
/// run as here.
fn holds(expr: &Expr, env: &Bare, row: &FileFacts) -> bool {
    let context = Context {
        env,
        row: Some(row),
        formulas: None,
        values: None,
    };
    evaluate(expr, &context).is_ok_and(|value| value.is_truthy())
}

/// The note property `expr` reads: `note.x`, `note["x"]`, or a bare `x` that is no root name.
fn property_key(expr: &Expr) -> Option<&str> {
    let is_note = |target: &Expr| matches!(&target.kind, ExprKind::Name(name) if name == "note");
    match &expr.kind {
        ExprKind::Member(target, key) if is_note(target) => Some(key),
        ExprKind::Index(target, key) if is_note(target) => literal_text(key),
        ExprKind::Name(name)
            if ![
                "file", "note", "formula", "this", "value", "index", "acc", "values",
            ]
            .contains(&name.as_str()) =>
        {
            Some(name)
        }
        _ => None,
    }
}

fn conjuncts_of_filter<'a>(filter: &'a Filter, into: &mut Vec<&'a Expr>) {
    match filter {
        Filter::Statement(statement) => conjuncts(&statement.expr, into),
        Filter::And(children) => {
            for child in children {
                conjuncts_of_filter(child, into);
            }
        }
        // Alternatives and negations say nothing a single statement must hold.
        Filter::Or(_) | Filter::Not(_) => {}
    }
}

fn conjuncts<'a>(expr: &'a Expr, into: &mut Vec<&'a Expr>) {
    match &expr.kind {
        ExprKind::Binary(BinaryOp::And, left, right) => {
            conjuncts(left, into);
            conjuncts(right, into);
        }
        _ => into.push(expr),
    }
}

/// Whether `expr` reads only literals and the file's path-derived fields and tags, through
/// operations that ask nothing of the environment.
fn reads_only_path_and_tags(expr: &Expr) -> bool {
    match &expr.kind {
        ExprKind::Null | ExprKind::Bool(_) | ExprKind::Number(_) | ExprKind::String(_) => true,
        ExprKind::List(items) => items.iter().all(reads_only_path_and_tags),
        ExprKind::Member(target, field) => is_file(target) && PATH_FIELDS.contains(&field.as_str()),
        ExprKind::Call {
            target: Some(target),
            name,
            args,
        } => {
            let pure = if is_file(target) {
                name == "hasTag" || name == "inFolder"
            } else {
                PURE_METHODS.contains(&name.as_str()) && reads_only_path_and_tags(target)
            };
            pure && args.iter().all(reads_only_path_and_tags)
        }
        ExprKind::Unary(UnaryOp::Not, operand) => reads_only_path_and_tags(operand),
        ExprKind::Binary(
            BinaryOp::And | BinaryOp::Or | BinaryOp::Equal | BinaryOp::NotEqual,
            left,
            right,
        ) => reads_only_path_and_tags(left) && reads_only_path_and_tags(right),
        _ => false,
    }
}

fn is_file(expr: &Expr) -> bool {
    matches!(&expr.kind, ExprKind::Name(name) if name == "file")
}

/// An environment with no other files and no links: the statements kept never ask it anything
/// but the clock.
struct Bare {
    now: DateTime,
}

impl Environment for Bare {
    fn now(&self) -> DateTime {
        self.now
    }

    fn resolve(&self, _link: &str, _from: &str) -> Option<String> {
        None
    }

    fn file(&self, _path: &str) -> Option<std::sync::Arc<FileFacts>> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::{Bare, Narrowing};
    use crate::bases::{Base, Budget, FileFacts, Row, Value, run_view};

    #[test]
    fn only_statements_of_path_and_tags_narrow() {
        let base = Base::parse(
            "filters:\n  and:\n    - file.hasTag(\"book\")\n    - 'status != \"done\"'\n    - 'file.ext == \"md\" && !file.inFolder(\"Archive\")'\nviews:\n  - type: table\n    filters:\n      or:\n        - file.hasTag(\"never\")\n",
        )
        .unwrap_or_default();
        let Some(view) = base.views.first() else {
            panic!("the base has a view");
        };
        let now = jiff::civil::date(2026, 1, 1).at(0, 0, 0, 0);
        let narrowing = Narrowing::new(&base, view, now);
        assert_eq!(narrowing.statements.len(), 3);
        let tags = |list: &[&str]| list.iter().map(|t| (*t).to_owned()).collect::<Vec<_>>();
        assert!(narrowing.admits("Books/Dune.md", &tags(&["book/scifi"])));
        assert!(!narrowing.admits("Books/Dune.md", &tags(&["bookish"])));
        assert!(!narrowing.admits("Archive/Dune.md", &tags(&["book"])));
        assert!(!narrowing.admits("Books/cover.png", &tags(&["book"])));
    }

    /// Only comparisons a missing property (null) fails ask the index for the key.
    #[test]
    fn comparisons_null_fails_require_the_key() {
        let now = jiff::civil::date(2026, 1, 1).at(0, 0, 0, 0);
        let keys = |statement: &str| {
            let yaml = format!("filters: '{statement}'\nviews:\n  - type: table\n");
            let base = Base::parse(&yaml).unwrap_or_else(|error| panic!("{yaml}: {error}"));
            let Some(view) = base.views.first() else {
                panic!("{yaml} has a view");
            };
            Narrowing::new(&base, view, now)
                .filter
                .property_keys
                .clone()
        };
        assert_eq!(keys("note.Price > 5"), ["price"]);
        assert_eq!(
            keys("5 <= price && note[\"x y\"] == \"a\""),
            ["price", "x y"]
        );
        assert_eq!(keys("done == true"), ["done"]);
        assert!(keys("price != 5").is_empty());
        assert!(keys("price == null").is_empty());
        assert!(keys("price > file.size").is_empty());
    }

    /// The narrowing never leaves out a file the full run keeps, whatever the filters say.
    #[test]
    fn narrowing_keeps_every_row_the_full_run_keeps() {
        let files: Vec<FileFacts> = [
            ("Books/Dune.md", vec!["book/scifi"], Some("done")),
            ("Books/Emma.md", vec!["Book"], None),
            ("Archive/Old.md", vec!["book", "#old"], Some("todo")),
            ("cover.png", vec![], None),
            ("Notes/bookish.md", vec!["bookish"], Some("todo")),
        ]
        .into_iter()
        .map(|(path, tags, status)| FileFacts {
            path: path.to_owned(),
            tags: tags.into_iter().map(str::to_owned).collect(),
            properties: status
                .map(|s| vec![("status".to_owned(), Value::String(s.to_owned()))])
                .unwrap_or_default(),
            ..FileFacts::default()
        })
        .collect();
        let statements = [
            "file.hasTag(\"book\")",
            "'file.hasTag(\"BOOK\", \"old\") && status != \"done\"'",
            "'!file.inFolder(\"Archive\") && file.ext == \"md\"'",
            "'file.name.startsWith(\"b\") || file.tags.contains(\"#old\")'",
            "'file.basename.lower().contains(\"o\") && file.folder != \"Books\"'",
            "'status == \"todo\" && file.inFolder(\"/\")'",
        ];
        let now = jiff::civil::date(2026, 1, 1).at(0, 0, 0, 0);
        for statement in statements {
            let yaml = format!("filters: {statement}\nviews:\n  - type: table\n");
            let base = Base::parse(&yaml).unwrap_or_else(|error| panic!("{yaml}: {error}"));
            let Some(view) = base.views.first() else {
                panic!("{yaml} has a view");
            };
            let rows: Vec<&dyn Row> = files.iter().map(|f| f as &dyn Row).collect();
            let budget = Budget::unbounded();
            let Ok(kept) = run_view(&base, view, &rows, &Bare { now }, 0..usize::MAX, &budget)
            else {
                panic!("{yaml} ran out of its budget");
            };
            let narrowing = Narrowing::new(&base, view, now);
            for row in &kept.rows {
                let Some(file) = files.iter().find(|f| f.path == row.path) else {
                    panic!("{} is no file", row.path);
                };
                assert!(
                    narrowing.admits(&file.path, &file.tags),
                    "{statement} left out {}",
                    file.path
                );
            }
        }
    }
}
