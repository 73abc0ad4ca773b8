//! A base as its YAML describes it (`.base` files and ```` ```base ```` blocks): global filters,
//! formulas, property display names, custom summaries and views. Every expression is parsed once
//! here and formulas are put in dependency order, so evaluation never parses and never recurses
//! from formula to formula. Keys of a view that Bases does not define (plugin layouts, card sizes)
//! are kept as they are in `View::extra`.

mod filters;
mod formulas;
mod read;

use super::syntax::{Expr, SyntaxError};

pub use read::MAX_BASE_BYTES;

/// A parsed base.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Base {
    /// Filters every view applies (combined with the view's own by AND).
    pub filters: Option<Filter>,
    /// Formulas in evaluation order: each after the formulas it uses.
    pub formulas: Vec<Formula>,
    /// Per-property configuration, by property id as written (`status`, `formula.price`).
    pub properties: Vec<(String, PropertyConfig)>,
    /// Custom summary formulas by name, over `values`.
    pub summaries: Vec<(String, Expression)>,
    pub views: Vec<View>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct PropertyConfig {
    pub display_name: Option<String>,
}

/// An expression with the text it was read from.
#[derive(Debug, Clone, PartialEq)]
pub struct Expression {
    pub source: String,
    pub expr: Expr,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Formula {
    pub name: String,
    pub expression: Expression,
    /// The formulas this one reads, by name.
    pub uses: Vec<String>,
}

/// A filter: one statement, or `and`/`or`/`not` over a list of filters. `Not` holds when none
/// of its filters hold.
#[derive(Debug, Clone, PartialEq)]
pub enum Filter {
    Statement(Expression),
    And(Vec<Filter>),
    Or(Vec<Filter>),
    Not(Vec<Filter>),
}

/// A property as a view names it: `file.name`, `note.age` or bare `age`, `formula.ppu`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PropertyId {
    Note(String),
    File(String),
    Formula(String),
}

impl PropertyId {
    pub fn parse(text: &str) -> PropertyId {
        let text = text.trim();
        if let Some(name) = text.strip_prefix("file.") {
            PropertyId::File(name.to_owned())
        } else if let Some(name) = text.strip_prefix("formula.") {
            PropertyId::Formula(name.to_owned())
        } else {
            PropertyId::Note(text.strip_prefix("note.").unwrap_or(text).to_owned())
        }
    }

    /// The id as a column is keyed: `note.age`, `file.name`, `formula.ppu`.
    pub fn key(&self) -> String {
        match self {
            PropertyId::Note(name) => format!("note.{name}"),
            PropertyId::File(name) => format!("file.{name}"),
            PropertyId::Formula(name) => format!("formula.{name}"),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct SortKey {
    pub property: PropertyId,
    pub descending: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct GroupBy {
    pub property: PropertyId,
    pub descending: bool,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct View {
    /// `table`, `cards`, `list`, `map`, or a plugin's layout.
    pub kind: String,
    pub name: String,
    pub limit: Option<usize>,
    pub filters: Option<Filter>,
    /// The columns as written, in order.
    pub order: Vec<String>,
    pub sort: Vec<SortKey>,
    pub group_by: Option<GroupBy>,
    /// Column (as written) and the summary's name, built-in or custom.
    pub summaries: Vec<(String, String)>,
    /// Keys Bases does not define, kept for the layouts that use them.
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// Why a base could not be read. `place` says where, as a path of keys: `views[0].filters.and[1]`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BaseError {
    #[error("the base is {length} bytes; at most {MAX_BASE_BYTES} are read")]
    TooLarge { length: usize },
    #[error("line {line}, column {column}: the base is not valid YAML: {message}")]
    Yaml {
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{place}: {message}")]
    Shape { place: String, message: String },
    #[error("{place}: {source} (in `{text}`)")]
    Expression {
        place: String,
        text: String,
        source: SyntaxError,
    },
    #[error("{place}: `formula.{name}` is not defined; add it under `formulas` or fix the name")]
    UnknownFormula { place: String, name: String },
    #[error("formulas {} use each other in a circle; one of them must stop using the next", .names.join(", "))]
    FormulaCycle { names: Vec<String> },
}

impl Base {
    /// Reads a base from its YAML text.
    pub fn parse(yaml: &str) -> Result<Base, BaseError> {
        read::base(yaml)
    }

    /// The display name configured for a property id as written, if any.
    pub fn display_name(&self, id: &str) -> Option<&str> {
        let wanted = PropertyId::parse(id);
        self.properties
            .iter()
            .find(|(key, _)| PropertyId::parse(key) == wanted)
            .and_then(|(_, config)| config.display_name.as_deref())
    }

    /// The view an embed names (`![[File.base#View]]`), or the first view when none is named.
    pub fn view(&self, name: Option<&str>) -> Option<&View> {
        match name {
            Some(name) => self.views.iter().find(|view| view.name == name),
            None => self.views.first(),
        }
    }

    pub fn formula(&self, name: &str) -> Option<&Formula> {
        self.formulas.iter().find(|formula| formula.name == name)
    }
}

impl Base {
    /// The formulas the filters of `view` (its own and the base's) need, with the formulas those
    /// use in turn: what must be computed for a row before it can be filtered.
    pub fn formulas_for_filters(&self, view: &View) -> std::collections::BTreeSet<String> {
        let pending: Vec<String> = [&self.filters, &view.filters]
            .into_iter()
            .flatten()
            .flat_map(filters::statements)
            .flat_map(|statement| formulas::formulas_used(&statement.expr))
            .collect();
        self.with_their_uses(pending)
    }

    /// The formulas the `properties` read (`formula.x` ids), with the formulas those use in turn:
    /// what must be computed for a row before those properties can be read.
    pub fn formulas_for_properties<'a>(
        &self,
        properties: impl IntoIterator<Item = &'a PropertyId>,
    ) -> std::collections::BTreeSet<String> {
        let pending: Vec<String> = properties
            .into_iter()
            .filter_map(|property| match property {
                PropertyId::Formula(name) => Some(name.clone()),
                PropertyId::Note(_) | PropertyId::File(_) => None,
            })
            .collect();
        self.with_their_uses(pending)
    }

    /// `pending` and every formula they use, directly or through others. A formula reading the
    /// bare `formula` object uses every formula computed before it, as when all were computed.
    fn with_their_uses(&self, mut pending: Vec<String>) -> std::collections::BTreeSet<String> {
        let mut needed = std::collections::BTreeSet::new();
        while let Some(name) = pending.pop() {
            if !needed.insert(name.clone()) {
                continue;
            }
            let Some(at) = self.formulas.iter().position(|f| f.name == name) else {
                continue;
            };
            let formula = &self.formulas[at];
            pending.extend(formula.uses.iter().cloned());
            if formulas::reads_every_formula(&formula.expression.expr) {
                pending.extend(self.formulas[..at].iter().map(|f| f.name.clone()));
            }
        }
        needed
    }
}
