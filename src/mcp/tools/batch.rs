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
    /// Any JSON value; null removes the property.
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
}
