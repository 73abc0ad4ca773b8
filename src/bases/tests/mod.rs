//! Tests of the Bases language and views over an in-memory vault: every example of Obsidian's
//! Bases pages with results worked out from the definitions, plus limits and a property test.
//! `vault()` is the fixture: a few books, an author, a restaurant and an attachment.

mod base_file;
mod dates;
mod examples_functions;
mod examples_syntax;
mod filters_equivalence;
mod limits;
mod properties;
mod sort_order;
mod token_soup;
mod views;

use std::sync::Arc;

use jiff::civil::{DateTime, date};
use serde_json::json;

use super::env::{Environment, FileFacts, Row};
use super::eval::{Context, FormulaCells, evaluate};
use super::property::from_property;
use super::syntax::parse;
use super::value::Value;

/// An in-memory vault: files by path, a fixed clock, and `this`.
pub(super) struct Vault {
    pub files: Vec<Arc<FileFacts>>,
    pub now: DateTime,
    pub this: Option<String>,
    pub zone: jiff::tz::TimeZone,
}

impl Environment for Vault {
    fn now(&self) -> DateTime {
        self.now
    }

    fn time_zone(&self) -> jiff::tz::TimeZone {
        self.zone.clone()
    }

    fn this_path(&self) -> Option<&str> {
        self.this.as_deref()
    }

    /// Obsidian's shortest-path resolution, simplified: an exact path, the path plus `.md`, or
    /// the file whose name (without `.md`) is the link text, ignoring case.
    fn resolve(&self, link: &str, _from: &str) -> Option<String> {
        let link = link.trim();
        if link.is_empty() {
            return None;
        }
        let with_md = format!("{link}.md");
        self.files
            .iter()
            .find(|f| f.path == link || f.path == with_md)
            .or_else(|| {
                self.files.iter().find(|f| {
                    f.basename().eq_ignore_ascii_case(link) && f.ext() == "md"
                        || f.name().eq_ignore_ascii_case(link)
                })
            })
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
                    .any(|l| self.resolve(l, &f.path).as_deref() == Some(path))
            })
            .map(|f| f.path.clone())
            .collect()
    }
}

fn note(path: &str, tags: &[&str], links: &[&str], properties: serde_json::Value) -> FileFacts {
    let zone = jiff::tz::TimeZone::UTC;
    let properties = match properties {
        serde_json::Value::Object(map) => map
            .iter()
            .map(|(key, value)| (key.clone(), from_property(value, path, &zone)))
            .collect(),
        _ => Vec::new(),
    };
    FileFacts {
        path: path.to_owned(),
        size: 1000,
        ctime: Some(date(2025, 5, 1).at(9, 0, 0, 0)),
        mtime: Some(date(2025, 5, 29).at(12, 0, 0, 0)),
        tags: tags.iter().map(|t| (*t).to_owned()).collect(),
        links: links.iter().map(|l| (*l).to_owned()).collect(),
        embeds: Vec::new(),
        properties,
    }
}

/// The fixture vault. "Now" is 2025-06-01 12:00; `this` is the author's page.
pub(super) fn vault() -> Vault {
    let dune = note(
        "Books/Dune.md",
        &["book", "scifi/classic"],
        &["Textbook", "Frank Herbert"],
        json!({
            "price": 12.5, "age": 5, "quantity": 2, "tax": 1.5, "discount": 2.5,
            "part": 1, "whole": 4, "status": "reading", "author": "[[Frank Herbert]]",
            "authors": ["[[Frank Herbert]]", "[[Textbook]]"], "started": "2025-05-27",
            "due_date": "2025-05-30", "start_date": "2025-05-01", "completed": false,
            "urgent": false, "important": true, "tags": ["book", "urgent"],
            "tasks": ["a", "b", "c"], "impact": 3, "urgency": 4, "effort": 2,
            "first_name": "Frank", "last_name": "Herbert", "monthlyUses": 10,
            "description": "desert planet", "isModified": true, "latitude": 48.85837,
            "longitude": 2.294481, "type": "[[Restaurants]]", "property": [10, 20],
            "obj": {"subprop": "inner"}, "radius": 2, "datetime": "2025-05-27T08:30:00",
            "rating": 4
        }),
    );
    let mut cover = note("attachments/cover.png", &[], &[], json!({}));
    cover.embeds = vec!["Textbook".to_owned()];
    cover.size = 2048;
    Vault {
        files: vec![
            Arc::new(dune),
            Arc::new(note(
                "Textbook.md",
                &["book"],
                &[],
                json!({"price": 40, "age": 8, "status": "done", "quantity": 4, "rating": 5}),
            )),
            Arc::new(note(
                "Authors/Frank Herbert.md",
                &["person"],
                &["Dune"],
                json!({"icon": "feather"}),
            )),
            Arc::new(note(
                "Restaurants.md",
                &[],
                &[],
                json!({"icon": "utensils"}),
            )),
            Arc::new(note(
                "Required Reading/Essay.md",
                &["book"],
                &[],
                json!({"price": 2, "age": 1, "status": "todo", "rating": 2}),
            )),
            Arc::new(note(
                "Notes/Tagged.md",
                &["Tag"],
                &[],
                json!({"price": 3, "age": 1, "status": "done", "completed": true}),
            )),
            Arc::new(cover),
        ],
        now: date(2025, 6, 1).at(12, 0, 0, 0),
        this: Some("Authors/Frank Herbert.md".to_owned()),
        zone: jiff::tz::TimeZone::UTC,
    }
}

/// Evaluates `source` for the file at `path` of `vault`.
pub(super) fn eval_in(vault: &Vault, path: &str, source: &str) -> Result<Value, String> {
    let expr = parse(source).map_err(|e| e.to_string())?;
    let row = vault.file(path).ok_or("no such file")?;
    let formulas = FormulaCells::new();
    let context = Context {
        env: vault,
        row: Some(row.as_ref() as &dyn Row),
        formulas: Some(&formulas),
        values: None,
    };
    evaluate(&expr, &context).map_err(|e| e.to_string())
}

/// Evaluates `source` for `Books/Dune.md`; panics on an error.
pub(super) fn eval(source: &str) -> Value {
    match eval_in(&vault(), "Books/Dune.md", source) {
        Ok(value) => value,
        Err(error) => panic!("{source}: {error}"),
    }
}

pub(super) fn text(s: &str) -> Value {
    Value::String(s.to_owned())
}

pub(super) fn num(n: f64) -> Value {
    Value::Number(n)
}

pub(super) fn list(items: Vec<Value>) -> Value {
    Value::List(items)
}

pub(super) fn yes(source: &str) {
    assert_eq!(eval(source), Value::Bool(true), "{source}");
}

pub(super) fn no(source: &str) {
    assert_eq!(eval(source), Value::Bool(false), "{source}");
}
