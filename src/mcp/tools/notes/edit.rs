//! The wire types of the tools that change part of a note (`vault_patch_note`,
//! `vault_replace_in_note`, the anchor and span tools, `vault_update_properties`), and their
//! conversions into `ops::edit` requests. The tools themselves are in `notes.rs`, with the other
//! note tools.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::mcp::tools::default_true;
use crate::ops;

/// Where `vault_patch_note` puts its content (the field's description says what each does).
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(inline)]
pub enum PatchOperation {
    Append,
    Prepend,
    Replace,
    InsertBefore,
}

impl From<PatchOperation> for ops::PatchOperation {
    fn from(operation: PatchOperation) -> Self {
        match operation {
            PatchOperation::Append => ops::PatchOperation::Append,
            PatchOperation::Prepend => ops::PatchOperation::Prepend,
            PatchOperation::Replace => ops::PatchOperation::Replace,
            PatchOperation::InsertBefore => ops::PatchOperation::InsertBefore,
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PatchNoteParams {
    /// Vault-relative path, e.g. "Projects/Plan.md".
    pub path: String,
    /// append: after the target's last line (and subsections); prepend: at its top, under the heading line; replace: its content, keeping the heading line; insert_before: before the heading line.
    pub operation: PatchOperation,
    /// Markdown to add (empty only with replace, which clears the target).
    pub content: String,
    /// Target this heading's section (exact match first, then ignoring case).
    #[serde(default)]
    pub heading: Option<String>,
    /// With `heading`: its level, when several headings share the name.
    #[schemars(range(min = 1, max = 6))]
    #[serde(default)]
    pub heading_level: Option<u8>,
    /// With `heading`: include its subsections (default true).
    #[serde(default = "default_true")]
    pub include_children: bool,
    /// The revision you last read; `conflict` if the note changed since.
    #[serde(default)]
    pub expected_revision: Option<String>,
}

/// The note after an edit.
#[derive(Debug, Serialize, JsonSchema)]
pub struct EditNoteResult {
    pub path: String,
    /// The new revision; pass it as `expected_revision` to the next edit.
    pub revision: String,
    pub bytes: u64,
    pub modified: String,
    /// False when the note already had this content and nothing was written.
    pub changed: bool,
    /// 1-based first line of the new content in the edited note (absent when the edit only removed text).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_line: Option<usize>,
    /// 1-based last line of the new content.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_line: Option<usize>,
    /// How many occurrences were replaced (vault_replace_in_note only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replacements: Option<usize>,
    /// Another writer changed the note while this write replaced it: your content is in place, and their version is kept under this name. Read it and merge what it adds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conflict_copy: Option<String>,
}

impl From<ops::EditedNote> for EditNoteResult {
    fn from(edited: ops::EditedNote) -> Self {
        EditNoteResult {
            path: edited.path,
            revision: edited.revision,
            bytes: edited.bytes,
            modified: edited.modified,
            changed: edited.changed,
            start_line: edited.lines.map(|(first, _)| first),
            end_line: edited.lines.map(|(_, last)| last),
            replacements: edited.replacements,
            conflict_copy: edited.conflict_copy,
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplaceInNoteParams {
    /// Vault-relative path of the note.
    pub path: String,
    /// Exact text of the body (case-sensitive; may span lines; the properties block is not searched).
    pub old_text: String,
    /// Replacement text (empty deletes).
    pub new_text: String,
    /// Replace every occurrence.
    #[serde(default)]
    pub replace_all_occurrences: bool,
    /// The revision you last read; `conflict` if the note changed since.
    #[serde(default)]
    pub expected_revision: Option<String>,
}

/// Before or after the anchor line.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(inline)]
pub enum AnchorPosition {
    Before,
    After,
}

impl From<AnchorPosition> for ops::AnchorPosition {
    fn from(position: AnchorPosition) -> Self {
        match position {
            AnchorPosition::Before => ops::AnchorPosition::Before,
            AnchorPosition::After => ops::AnchorPosition::After,
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InsertAtAnchorParams {
    /// Vault-relative path of the note.
    pub path: String,
    /// A short, case-sensitive part of one body line, e.g. "## Tasks".
    pub anchor: String,
    pub position: AnchorPosition,
    /// Markdown lines to insert.
    pub content: String,
    /// Use the first of several matching lines instead of failing.
    #[serde(default)]
    pub first_match: bool,
    /// The revision you last read; `conflict` if the note changed since.
    #[serde(default)]
    pub expected_revision: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplaceSpanParams {
    /// Vault-relative path of the note.
    pub path: String,
    /// A short, case-sensitive part of the first line.
    pub start_anchor: String,
    /// Part of the last line, searched from the first on (default: the first line).
    #[serde(default)]
    pub end_anchor: Option<String>,
    /// Markdown replacing the lines (empty deletes them).
    pub content: String,
    /// Use the first of several matching lines instead of failing.
    #[serde(default)]
    pub first_match: bool,
    /// The revision you last read; `conflict` if the note changed since.
    #[serde(default)]
    pub expected_revision: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteSpanParams {
    /// Vault-relative path of the note.
    pub path: String,
    /// A short, case-sensitive part of the first line.
    pub start_anchor: String,
    /// Part of the last line, searched from the first on (default: the first line).
    #[serde(default)]
    pub end_anchor: Option<String>,
    /// Use the first of several matching lines instead of failing.
    #[serde(default)]
    pub first_match: bool,
    /// The revision you last read; `conflict` if the note changed since.
    #[serde(default)]
    pub expected_revision: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdatePropertiesParams {
    /// Vault-relative path of the note.
    pub path: String,
    /// Keys to set; null deletes a key.
    pub properties: Map<String, Value>,
    /// Make `properties` the whole set (keys not named are removed).
    #[serde(default)]
    pub replace: bool,
    /// Refuse values that do not fit the vault's declared property types (default: write, warn).
    #[serde(default)]
    pub strict: bool,
    /// The revision you last read; `conflict` if the note changed since.
    #[serde(default)]
    pub expected_revision: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct UpdatePropertiesResult {
    pub path: String,
    /// The new revision; pass it as `expected_revision` to the next edit.
    pub revision: String,
    pub bytes: u64,
    pub modified: String,
    /// False when every property already had the requested value and nothing was written.
    pub changed: bool,
    /// Keys that were added, changed or removed.
    pub changed_keys: Vec<String>,
    /// All properties after the update.
    pub properties: Map<String, Value>,
    /// Values that do not fit the vault's declared property types (.obsidian/types.json).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Another writer changed the note while this write replaced it: your content is in place, and their version is kept under this name. Read it and merge what it adds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conflict_copy: Option<String>,
}

impl From<ops::EditedNote> for UpdatePropertiesResult {
    fn from(edited: ops::EditedNote) -> Self {
        UpdatePropertiesResult {
            path: edited.path,
            revision: edited.revision,
            bytes: edited.bytes,
            modified: edited.modified,
            changed: edited.changed,
            changed_keys: edited.changed_keys,
            properties: edited.properties.unwrap_or_default(),
            warnings: edited.warnings,
            conflict_copy: edited.conflict_copy,
        }
    }
}

// Parameters into `ops` requests.

impl From<PatchNoteParams> for ops::PatchNote {
    fn from(params: PatchNoteParams) -> Self {
        ops::PatchNote {
            path: params.path,
            operation: params.operation.into(),
            content: params.content,
            heading: params.heading,
            heading_level: params.heading_level,
            include_children: params.include_children,
            expected_revision: params.expected_revision,
        }
    }
}

impl From<ReplaceInNoteParams> for ops::ReplaceInNote {
    fn from(params: ReplaceInNoteParams) -> Self {
        ops::ReplaceInNote {
            path: params.path,
            old_text: params.old_text,
            new_text: params.new_text,
            replace_all_occurrences: params.replace_all_occurrences,
            expected_revision: params.expected_revision,
        }
    }
}

impl From<InsertAtAnchorParams> for ops::InsertAtAnchor {
    fn from(params: InsertAtAnchorParams) -> Self {
        ops::InsertAtAnchor {
            path: params.path,
            anchor: params.anchor,
            position: params.position.into(),
            content: params.content,
            first_match: params.first_match,
            expected_revision: params.expected_revision,
        }
    }
}

impl From<ReplaceSpanParams> for ops::EditSpan {
    fn from(params: ReplaceSpanParams) -> Self {
        ops::EditSpan {
            path: params.path,
            start_anchor: params.start_anchor,
            end_anchor: params.end_anchor,
            content: Some(params.content),
            first_match: params.first_match,
            expected_revision: params.expected_revision,
        }
    }
}

impl From<DeleteSpanParams> for ops::EditSpan {
    fn from(params: DeleteSpanParams) -> Self {
        ops::EditSpan {
            path: params.path,
            start_anchor: params.start_anchor,
            end_anchor: params.end_anchor,
            content: None,
            first_match: params.first_match,
            expected_revision: params.expected_revision,
        }
    }
}

impl From<UpdatePropertiesParams> for ops::UpdateProperties {
    fn from(params: UpdatePropertiesParams) -> Self {
        ops::UpdateProperties {
            path: params.path,
            properties: params.properties,
            replace: params.replace,
            expected_revision: params.expected_revision,
            strict: params.strict,
        }
    }
}
