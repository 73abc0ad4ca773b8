//! The history tools (issue 49): a note's versions, one version or a diff, restoring a version,
//! the list of changes, and undoing a change; with their wire types. Each runs one `ops` call
//! (see `ops::history`).

use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Page;
use super::notes::WriteNoteResult;
use crate::mcp::error::ToolError;
use crate::mcp::{Caller, QuireServer};
use crate::ops::{self, Ops};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoteHistoryParams {
    /// Vault-relative path of the note (now, or where it was: a moved note's history follows it).
    pub path: String,
    #[serde(flatten)]
    pub page: Page,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct VersionResult {
    pub version_id: i64,
    pub change_id: String,
    pub time: String,
    pub identity: String,
    pub tool: String,
    /// create, write, move, delete, restore, undo or external (an edit outside Quire).
    pub kind: String,
    /// The note's path in this version.
    pub path: String,
    /// The content's revision after this version; absent for a deletion.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct NoteHistoryResult {
    pub path: String,
    /// Newest first.
    pub versions: Vec<VersionResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadVersionParams {
    pub path: String,
    /// From vault_note_history.
    pub version_id: i64,
    /// "current" or another version_id: answer a unified diff from it to this version instead of the content.
    #[serde(default)]
    pub diff_against: Option<DiffAgainst>,
}

/// "current", or a version id.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum DiffAgainst {
    Version(i64),
    Named(String),
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ReadVersionResult {
    pub path: String,
    pub version_id: i64,
    pub revision: String,
    pub bytes: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RestoreVersionParams {
    pub path: String,
    pub version_id: i64,
    /// The note's revision you last read; `conflict` if it changed since.
    #[serde(default)]
    pub expected_revision: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListChangesParams {
    /// Only changes made by this identity.
    #[serde(default)]
    pub identity: Option<String>,
    /// Only changes at or after this time: RFC 3339, or YYYY-MM-DD (UTC).
    #[serde(default)]
    pub since: Option<String>,
    /// Only changes touching a path starting with this.
    #[serde(default)]
    pub path_prefix: Option<String>,
    #[serde(flatten)]
    pub page: Page,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ChangeResult {
    pub change_id: String,
    pub time: String,
    pub identity: String,
    pub tool: String,
    pub kind: String,
    pub paths: Vec<String>,
    /// The change this undo took back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undoes: Option<String>,
    /// The undo that took this change back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undone_by: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ListChangesResult {
    /// Newest first.
    pub changes: Vec<ChangeResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UndoParams {
    pub change_id: String,
    /// Only say what would be done.
    #[serde(default)]
    pub dry_run: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct UndoStepResult {
    pub path: String,
    /// restore, remove (to .trash/), recreate or move_back.
    pub action: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct UndoResult {
    /// The change taken back.
    pub undone: String,
    pub dry_run: bool,
    pub notes: Vec<UndoStepResult>,
}

impl From<ops::HistoryVersion> for VersionResult {
    fn from(version: ops::HistoryVersion) -> Self {
        VersionResult {
            version_id: version.version_id,
            change_id: version.change_id,
            time: version.time,
            identity: version.identity,
            tool: version.tool,
            kind: version.kind,
            path: version.path,
            revision: version.revision,
            bytes: version.bytes,
        }
    }
}

impl From<ops::NoteVersions> for NoteHistoryResult {
    fn from(found: ops::NoteVersions) -> Self {
        NoteHistoryResult {
            path: found.path,
            versions: found.versions.into_iter().map(Into::into).collect(),
            next_cursor: found.next_cursor,
        }
    }
}

impl From<ops::VersionRead> for ReadVersionResult {
    fn from(read: ops::VersionRead) -> Self {
        ReadVersionResult {
            path: read.path,
            version_id: read.version_id,
            revision: read.revision,
            bytes: read.bytes,
            content: read.content,
            diff: read.diff,
        }
    }
}

impl From<ops::ChangeList> for ListChangesResult {
    fn from(list: ops::ChangeList) -> Self {
        ListChangesResult {
            changes: list
                .changes
                .into_iter()
                .map(|change| ChangeResult {
                    change_id: change.change_id,
                    time: change.time,
                    identity: change.identity,
                    tool: change.tool,
                    kind: change.kind,
                    paths: change.paths,
                    undoes: change.undoes,
                    undone_by: change.undone_by,
                })
                .collect(),
            next_cursor: list.next_cursor,
        }
    }
}

impl From<ops::Undone> for UndoResult {
    fn from(undone: ops::Undone) -> Self {
        UndoResult {
            undone: undone.undone,
            dry_run: undone.dry_run,
            notes: undone
                .notes
                .into_iter()
                .map(|step| UndoStepResult {
                    path: step.path,
                    action: step.action.to_owned(),
                    to: step.to,
                })
                .collect(),
        }
    }
}

// Parameters into `ops` requests.

impl From<NoteHistoryParams> for ops::NoteHistory {
    fn from(params: NoteHistoryParams) -> Self {
        ops::NoteHistory {
            path: params.path,
            limit: params.page.limit,
            cursor: params.page.cursor,
        }
    }
}

impl From<ReadVersionParams> for ops::ReadVersion {
    fn from(params: ReadVersionParams) -> Self {
        ops::ReadVersion {
            path: params.path,
            version_id: params.version_id,
            diff_against: params.diff_against.map(|against| match against {
                DiffAgainst::Version(id) => id.to_string(),
                DiffAgainst::Named(name) => name,
            }),
        }
    }
}

impl From<RestoreVersionParams> for ops::RestoreVersion {
    fn from(params: RestoreVersionParams) -> Self {
        ops::RestoreVersion {
            path: params.path,
            version_id: params.version_id,
            expected_revision: params.expected_revision,
        }
    }
}

impl From<ListChangesParams> for ops::ListChanges {
    fn from(params: ListChangesParams) -> Self {
        ops::ListChanges {
            identity: params.identity,
            since: params.since,
            path_prefix: params.path_prefix,
            limit: params.page.limit,
            cursor: params.page.cursor,
        }
    }
}

impl From<UndoParams> for ops::UndoChange {
    fn from(params: UndoParams) -> Self {
        ops::UndoChange {
            change_id: params.change_id,
            dry_run: params.dry_run,
        }
    }
}

#[tool_router(router = history_tools, vis = "pub(super)")]
impl QuireServer {
    #[tool(
        description = "List a note's versions, newest first, across its moves: every change Quire made to it and every outside edit it saw. To see what changed and when, before reading or restoring a version.",
        annotations(title = "Note history", read_only_hint = true, open_world_hint = false)
    )]
    async fn vault_note_history(
        &self,
        caller: Caller,
        Parameters(params): Parameters<NoteHistoryParams>,
    ) -> Result<Json<NoteHistoryResult>, ToolError> {
        self.run(caller, params.into(), Ops::note_history).await
    }

    #[tool(
        description = "Read one version of a note, or with `diff_against` a unified diff to it from \"current\" (the note now) or another version.",
        annotations(title = "Read version", read_only_hint = true, open_world_hint = false)
    )]
    async fn vault_read_version(
        &self,
        caller: Caller,
        Parameters(params): Parameters<ReadVersionParams>,
    ) -> Result<Json<ReadVersionResult>, ToolError> {
        self.run(caller, params.into(), Ops::read_version).await
    }

    #[tool(
        description = "Write a version's content back to the note (recreating it if deleted), as a new change that can itself be undone.",
        annotations(
            title = "Restore version",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn vault_restore_version(
        &self,
        caller: Caller,
        Parameters(params): Parameters<RestoreVersionParams>,
    ) -> Result<Json<WriteNoteResult>, ToolError> {
        self.run(caller, params.into(), Ops::restore_version).await
    }

    #[tool(
        description = "List changes, newest first: each tool call that wrote (one change_id for all the notes it touched) and each outside edit.",
        annotations(title = "List changes", read_only_hint = true, open_world_hint = false)
    )]
    async fn vault_list_changes(
        &self,
        caller: Caller,
        Parameters(params): Parameters<ListChangesParams>,
    ) -> Result<Json<ListChangesResult>, ToolError> {
        self.run(caller, params.into(), Ops::list_changes).await
    }

    #[tool(
        description = "Undo a change: every note it touched goes back to its state before it (a created note to .trash/, a deleted one restored, a move moved back with its rewritten links). Refused with `conflict`, naming the notes, if any changed since. Undoing an undo redoes. `dry_run` shows the plan.",
        annotations(
            title = "Undo change",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn vault_undo(
        &self,
        caller: Caller,
        Parameters(params): Parameters<UndoParams>,
    ) -> Result<Json<UndoResult>, ToolError> {
        self.run(caller, params.into(), Ops::undo).await
    }
}
