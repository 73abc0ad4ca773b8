//! The requests and answers of the Bases tools, as plain data for the transports.

use serde_json::{Map, Value};

/// Evaluate one view of a base.
#[derive(Debug, Clone, Default)]
pub struct QueryBase {
    /// A `.base` file, or a note holding ```` ```base ```` blocks.
    pub path: Option<String>,
    /// A view's name, or its 0-based index written as text; the first view when absent.
    pub view: Option<String>,
    /// Which ```` ```base ```` block of the note, 0-based; the first when absent.
    pub block: Option<usize>,
    /// The base's YAML, run without a file.
    pub base: Option<String>,
    /// The file `this` stands for; the base file or the embedding note when absent.
    pub this: Option<String>,
    pub limit: Option<u32>,
    pub cursor: Option<String>,
}

/// One page of a view's rows.
#[derive(Debug, Clone, PartialEq)]
pub struct BaseAnswer {
    pub view: String,
    /// The layout (`table`, `cards`, `list`, `map`, or a plugin's): it changes no rows.
    pub kind: String,
    /// Column ids as the view's `order` writes them.
    pub columns: Vec<String>,
    pub rows: Vec<BaseRow>,
    /// Present when the view groups: the groups with a row on this page.
    pub groups: Option<Vec<BaseGroup>>,
    /// The view's summaries over all its rows, when it has any.
    pub summaries: Option<Vec<BaseSummary>>,
    /// Rows of the view across every page (after its own `limit`).
    pub total: usize,
    pub next_cursor: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct BaseRow {
    pub path: String,
    /// Each column's value as JSON, keyed by the column id; `{"error": ...}` where it failed.
    pub values: Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct BaseGroup {
    pub key: Value,
    /// The paths of the group's rows on this page.
    pub rows: Vec<String>,
    /// Over every row of the group, not only this page's.
    pub summaries: Vec<BaseSummary>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct BaseSummary {
    pub column: String,
    pub name: String,
    /// The value, or `{"error": ...}`.
    pub value: Value,
}

/// List the bases under a folder.
#[derive(Debug, Clone, Default)]
pub struct ListBases {
    pub folder: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct BaseList {
    pub bases: Vec<BaseListed>,
    /// The time budget ran out before every note was read: the bases found so far.
    pub timed_out: bool,
}

/// A `.base` file, or one ```` ```base ```` block of a note.
#[derive(Debug, Clone, PartialEq)]
pub struct BaseListed {
    pub path: String,
    /// The block's 0-based index in the note; `None` for a `.base` file.
    pub block: Option<usize>,
    pub views: Vec<ViewListed>,
    /// Why the base could not be read, when it could not; its views are then empty.
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ViewListed {
    pub name: String,
    pub kind: String,
}

/// Write a `.base` file after checking it reads as a base.
#[derive(Debug, Clone, Default)]
pub struct WriteBase {
    pub path: String,
    pub base: String,
    /// Needed to replace an existing file, as for notes.
    pub expected_revision: Option<String>,
}
