//! The requests and the answer of the batch edits.

use serde_json::Value;

use crate::ops::search::SearchFilters;

/// Which notes a batch may change: a list of paths, the notes matching search filters, or
/// (neither given) every note the edit applies to.
#[derive(Debug, Clone, Default)]
pub struct Target {
    pub paths: Option<Vec<String>>,
    pub filter: Option<SearchFilters>,
}

#[derive(Debug, Clone, Default)]
pub struct RenameProperty {
    pub old_name: String,
    pub new_name: String,
    pub target: Target,
    pub dry_run: bool,
}

#[derive(Debug, Clone, Default)]
pub struct SetProperty {
    pub name: String,
    /// `Null` removes the property.
    pub value: Value,
    pub target: Target,
    pub dry_run: bool,
}

#[derive(Debug, Clone, Default)]
pub struct RenameTag {
    pub old_tag: String,
    pub new_tag: String,
    pub dry_run: bool,
}

#[derive(Debug, Clone, Default)]
pub struct ReplaceAcross {
    pub old_text: String,
    pub new_text: String,
    pub regex: bool,
    /// Also replace inside code (spans and blocks).
    pub in_code: bool,
    /// Also replace inside the properties block.
    pub in_properties: bool,
    pub target: Target,
    pub dry_run: bool,
}

/// One note a batch changes (or would).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchNote {
    pub path: String,
    pub revision_before: String,
    /// After the batch (absent in a dry run).
    pub revision_after: Option<String>,
    /// How many places changed in it.
    pub changes: usize,
}

#[derive(Debug, Clone)]
pub struct BatchResult {
    pub dry_run: bool,
    /// The notes changed, in path order, at most `MAX_LISTED`.
    pub notes: Vec<BatchNote>,
    pub total_notes: usize,
    pub total_changes: usize,
    /// Notes the edit could not apply to, with why (the batch then changed nothing).
    pub refused: Vec<(String, String)>,
}
