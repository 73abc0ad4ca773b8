//! The Bases expression language and base files: any text parses or fails with an error that
//! points inside the text; what parses evaluates (to a value or an error, never a panic, within
//! the step budget) against a small in-memory vault; text read as a base YAML runs every view.

use std::sync::Arc;

use jiff::civil::{DateTime, date};
use quire::bases::{
    Base, Budget, Context, Environment, FileFacts, FormulaCells, Row, Value, evaluate, parse,
    run_view, to_json,
};

struct Vault {
    files: Vec<Arc<FileFacts>>,
}

impl Environment for Vault {
    fn now(&self) -> DateTime {
        date(2025, 6, 1).at(12, 0, 0, 0)
    }

    fn this_path(&self) -> Option<&str> {
        Some("Notes/B.md")
    }

    fn resolve(&self, link: &str, _from: &str) -> Option<String> {
        self.files
            .iter()
            .find(|f| f.path == link || f.basename() == link)
            .map(|f| f.path.clone())
    }

    fn file(&self, path: &str) -> Option<Arc<FileFacts>> {
        self.files.iter().find(|f| f.path == path).cloned()
    }

    fn backlinks(&self, path: &str) -> Vec<String> {
        self.files
            .iter()
            .filter(|f| {
                f.links
                    .iter()
                    .any(|l| self.resolve(l, "").as_deref() == Some(path))
            })
            .map(|f| f.path.clone())
            .collect()
    }
}

fn vault() -> Vault {
    let a = FileFacts {
        path: "A.md".into(),
        size: 10,
        ctime: Some(date(2025, 1, 1).at(0, 0, 0, 0)),
        mtime: Some(date(2025, 5, 1).at(8, 0, 0, 0)),
        tags: vec!["book".into(), "x/y".into()],
        links: vec!["B".into()],
        embeds: vec!["img.png".into()],
        properties: vec![
            ("price".into(), Value::Number(3.5)),
            ("status".into(), Value::String("done".into())),
            (
                "list".into(),
                Value::List(vec![Value::Number(1.0), Value::String("a".into())]),
            ),
            ("done".into(), Value::Bool(true)),
        ],
    };
    let b = FileFacts {
        path: "Notes/B.md".into(),
        links: vec!["A".into()],
        ..FileFacts::default()
    };
    Vault {
        files: vec![Arc::new(a), Arc::new(b)],
    }
}

/// The check itself: panics on any violation.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let vault = vault();
    match parse(text) {
        Ok(expr) => {
            let row: &dyn Row = vault.files[0].as_ref();
            let formulas = FormulaCells::new();
            let values = [Value::Number(1.0), Value::Null];
            let context = Context {
                env: &vault,
                row: Some(row),
                formulas: Some(&formulas),
                values: Some(&values),
            };
            if let Ok(value) = evaluate(&expr, &context) {
                let _ = value.to_text();
                let _ = to_json(&value);
            }
        }
        Err(error) => {
            assert!(error.at() <= text.len(), "{error:?} points past the text");
            let _ = error.column(text);
            let _ = error.to_string();
        }
    }
    if let Ok(base) = Base::parse(text) {
        let rows: Vec<&dyn Row> = vault.files.iter().map(|f| f.as_ref() as &dyn Row).collect();
        for view in &base.views {
            // A query's budget may run out on a costly base: that is an answer, not a failure.
            let budget = Budget::for_query();
            let Ok(result) = run_view(&base, view, &rows, &vault, 0..usize::MAX, &budget) else {
                continue;
            };
            assert!(result.rows.len() <= result.matched);
            assert_eq!(result.rows.len(), result.total);
            if let Some(limit) = view.limit {
                assert!(result.rows.len() <= limit);
            }
        }
    }
}
