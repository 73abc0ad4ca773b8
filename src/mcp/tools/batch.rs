//! The batch tools (issue 49): one call edits many notes as one change, all or nothing, with
//! `dry_run` to see the per-note plan first; with their wire types. Each runs one `ops` call
//! (see `ops::batch`).

use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::search::SearchFiltersParams;
use crate::mcp::error::ToolError;
use crate::mcp::{Caller, QuireServer};
use crate::ops::{self, Ops};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetPropertyParams {
    pub name: String,
    /// The value: text, number, boolean, list or object; null removes the property.
    #[schemars(schema_with = "super::schema::any_value")]
    pub value: Value,
    /// The notes to change (or give `filter`).
    #[serde(default)]
    pub paths: Option<Vec<String>>,
    /// The notes matching these search filters.
    #[serde(default)]
    pub filter: Option<SearchFiltersParams>,
    /// Only return the per-note plan.
    #[serde(default)]
    pub dry_run: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RenamePropertyParams {
    pub old_name: String,
    pub new_name: String,
    /// Only these notes (default: every note with the property).
    #[serde(default)]
    pub paths: Option<Vec<String>>,
    /// Only the notes matching these search filters.
    #[serde(default)]
    pub filter: Option<SearchFiltersParams>,
    #[serde(default)]
    pub dry_run: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RenameTagParams {
    /// With or without '#'.
    pub old_tag: String,
    pub new_tag: String,
    #[serde(default)]
    pub dry_run: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplaceAcrossParams {
    pub old_text: String,
    /// With `regex`, `$1` inserts a group.
    pub new_text: String,
    /// `old_text` is a regular expression (Rust syntax).
    #[serde(default)]
    pub regex: bool,
    /// Also inside code spans and blocks.
    #[serde(default)]
    pub in_code: bool,
    /// Also inside the properties block.
    #[serde(default)]
    pub in_properties: bool,
    /// Only these notes (default: every note).
    #[serde(default)]
    pub paths: Option<Vec<String>>,
    /// Only the notes matching these search filters.
    #[serde(default)]
    pub filter: Option<SearchFiltersParams>,
    #[serde(default)]
    pub dry_run: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct BatchNoteResult {
    pub path: String,
    pub revision_before: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revision_after: Option<String>,
    /// Places changed in the note.
    pub changes: usize,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct RefusedNote {
    pub path: String,
    pub reason: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct BatchToolResult {
    pub dry_run: bool,
    /// The notes changed (or to change), in path order, at most 100.
    pub notes: Vec<BatchNoteResult>,
    pub total_notes: usize,
    pub total_changes: usize,
    /// In a dry run: notes the edit cannot apply to (a real run then changes nothing).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<RefusedNote>,
}

impl From<ops::BatchResult> for BatchToolResult {
    fn from(result: ops::BatchResult) -> Self {
        BatchToolResult {
            dry_run: result.dry_run,
            notes: result
                .notes
                .into_iter()
                .map(|note| BatchNoteResult {
                    path: note.path,
                    revision_before: note.revision_before,
                    revision_after: note.revision_after,
                    changes: note.changes,
                })
                .collect(),
            total_notes: result.total_notes,
            total_changes: result.total_changes,
            refused: result
                .refused
                .into_iter()
                .map(|(path, reason)| RefusedNote { path, reason })
                .collect(),
        }
    }
}

fn target(paths: Option<Vec<String>>, filter: Option<SearchFiltersParams>) -> ops::Target {
    ops::Target {
        paths,
        filter: filter.map(Into::into),
    }
}

impl From<SetPropertyParams> for ops::SetProperty {
    fn from(params: SetPropertyParams) -> Self {
        ops::SetProperty {
            name: params.name,
            value: params.value,
            target: target(params.paths, params.filter),
            dry_run: params.dry_run,
        }
    }
}

impl From<RenamePropertyParams> for ops::RenameProperty {
    fn from(params: RenamePropertyParams) -> Self {
        ops::RenameProperty {
            old_name: params.old_name,
            new_name: params.new_name,
            target: target(params.paths, params.filter),
            dry_run: params.dry_run,
        }
    }
}

impl From<RenameTagParams> for ops::RenameTag {
    fn from(params: RenameTagParams) -> Self {
        ops::RenameTag {
            old_tag: params.old_tag,
            new_tag: params.new_tag,
            dry_run: params.dry_run,
        }
    }
}

impl From<ReplaceAcrossParams> for ops::ReplaceAcross {
    fn from(params: ReplaceAcrossParams) -> Self {
        ops::ReplaceAcross {
            old_text: params.old_text,
            new_text: params.new_text,
            regex: params.regex,
            in_code: params.in_code,
            in_properties: params.in_properties,
            target: target(params.paths, params.filter),
            dry_run: params.dry_run,
        }
    }
}

#[tool_router(router = batch_tools, vis = "pub(super)")]
impl QuireServer {
    #[tool(
        description = "Set one property on many notes (`paths`, or the notes matching `filter`) as one change, all or nothing; `value: null` removes it. Other properties keep their bytes. `dry_run` lists the notes first.",
        annotations(
            title = "Set property on notes",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn vault_set_property(
        &self,
        caller: Caller,
        Parameters(params): Parameters<SetPropertyParams>,
    ) -> Result<Json<BatchToolResult>, ToolError> {
        self.run(caller, params.into(), Ops::set_property).await
    }

    #[tool(
        description = "Rename a property key across notes (default: every note that has it) as one change, all or nothing; values keep their exact bytes and type. Refused, changing nothing, if a note already has the new key. `dry_run` lists the notes first.",
        annotations(
            title = "Rename property",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn vault_rename_property(
        &self,
        caller: Caller,
        Parameters(params): Parameters<RenamePropertyParams>,
    ) -> Result<Json<BatchToolResult>, ToolError> {
        self.run(caller, params.into(), Ops::rename_property).await
    }

    #[tool(
        description = "Rename a tag in every note as one change: inline #tags and the tags property, nested tags too (#a/b renames #a/b/c), never inside code or links. `dry_run` lists the notes first.",
        annotations(
            title = "Rename tag",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn vault_rename_tag(
        &self,
        caller: Caller,
        Parameters(params): Parameters<RenameTagParams>,
    ) -> Result<Json<BatchToolResult>, ToolError> {
        self.run(caller, params.into(), Ops::rename_tag).await
    }

    #[tool(
        description = "Replace text (or a regex) across notes (`paths`, `filter`, or all) as one change, all or nothing; code and properties are left alone unless `in_code`/`in_properties`. `dry_run` shows the count per note first.",
        annotations(
            title = "Replace across notes",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn vault_replace_across(
        &self,
        caller: Caller,
        Parameters(params): Parameters<ReplaceAcrossParams>,
    ) -> Result<Json<BatchToolResult>, ToolError> {
        self.run(caller, params.into(), Ops::replace_across).await
    }
}
