//! The note tools: read, write, list, delete, the five ways to edit part of a note, properties, and
//! moving a note with every link to it; with their wire types (those of the edit tools in
//! `notes/edit.rs`). Each converts its parameters into one `ops` request (see `ops::notes`,
//! `ops::edit`, `ops::move_note`).

mod edit;

use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{ListNotesResult, Page};
use crate::mcp::error::ToolError;
use crate::mcp::{Caller, QuireServer};
use crate::ops::{self, Ops, OpsError};
use edit::{
    DeleteSpanParams, EditNoteResult, InsertAtAnchorParams, PatchNoteParams, ReplaceInNoteParams,
    ReplaceSpanParams, UpdatePropertiesParams, UpdatePropertiesResult,
};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadNoteParams {
    /// Vault-relative path, e.g. "Projects/Plan.md".
    pub path: String,
    /// Only the properties (frontmatter), as JSON.
    #[serde(default)]
    pub properties_only: bool,
    /// Only the heading outline, at most 1,000 headings at a time (pass `next_start_line` back as
    /// `start_line` for the rest).
    #[serde(default)]
    pub outline: bool,
    /// Only this heading's section, with its subsections (exact match first, then ignoring case).
    #[serde(default)]
    pub heading: Option<String>,
    /// With `heading`: its level, when several headings share the name.
    #[schemars(range(min = 1, max = 6))]
    #[serde(default)]
    pub heading_level: Option<u8>,
    /// First line to return (1-based), to page through a long note (or, with `outline`, the line
    /// the outline continues from).
    #[schemars(range(min = 1))]
    #[serde(default)]
    pub start_line: Option<u64>,
    /// How many lines to return.
    #[schemars(range(min = 1))]
    #[serde(default)]
    pub limit: Option<u64>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct OutlineEntry {
    pub heading: String,
    pub level: u8,
    /// 1-based line of the heading.
    pub line: usize,
    /// Byte length of the section, including its subsections.
    pub bytes: usize,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ReadNoteResult {
    pub path: String,
    /// sha256 of the file's bytes; pass it as `expected_revision` when changing the note.
    pub revision: String,
    pub bytes: u64,
    /// Last modification time, RFC 3339.
    pub modified: String,
    pub total_lines: usize,
    /// The note text (whole, the requested lines, or the heading's section).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// The properties as JSON (empty object when the note has none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub properties: Option<Map<String, Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outline: Option<Vec<OutlineEntry>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_line: Option<usize>,
    /// Present when more lines (with `outline`, more headings) follow: pass it as `start_line` to
    /// continue.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_start_line: Option<usize>,
}

impl From<ops::NoteRead> for ReadNoteResult {
    fn from(read: ops::NoteRead) -> Self {
        ReadNoteResult {
            path: read.path,
            revision: read.revision,
            bytes: read.bytes,
            modified: read.modified,
            total_lines: read.total_lines,
            content: read.content,
            properties: read.properties,
            outline: read.outline.map(|outline| {
                outline
                    .into_iter()
                    .map(|entry| OutlineEntry {
                        heading: entry.heading,
                        level: entry.level,
                        line: entry.line,
                        bytes: entry.bytes,
                    })
                    .collect()
            }),
            start_line: read.start_line,
            end_line: read.end_line,
            next_start_line: read.next_start_line,
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteNoteParams {
    /// Vault-relative path, e.g. "Inbox/Idea.md".
    pub path: String,
    /// The markdown text after the properties block.
    pub body: String,
    /// Properties, written as the YAML frontmatter block.
    #[serde(default)]
    pub properties: Option<Map<String, Value>>,
    /// Replace an existing note (needs `expected_revision`).
    #[serde(default)]
    pub overwrite: bool,
    /// The revision you last read; `conflict` if the note changed since.
    #[serde(default)]
    pub expected_revision: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct WriteNoteResult {
    pub path: String,
    /// The new revision.
    pub revision: String,
    pub bytes: u64,
    pub modified: String,
    /// True when the note did not exist before.
    pub created: bool,
    /// Another writer changed the note while this write replaced it: your content is in place, and their version is kept under this name. Read it and merge what it adds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conflict_copy: Option<String>,
}

impl From<ops::WrittenNote> for WriteNoteResult {
    fn from(written: ops::WrittenNote) -> Self {
        WriteNoteResult {
            path: written.path,
            revision: written.revision,
            bytes: written.bytes,
            modified: written.modified,
            created: written.created,
            conflict_copy: written.conflict_copy,
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListNotesParams {
    /// Only notes in this folder and below.
    #[serde(default)]
    pub folder: Option<String>,
    /// Glob on the path ("Daily/*.md", "**/Meeting*"); without '/' it matches file names at any depth.
    #[serde(default)]
    pub glob: Option<String>,
    #[serde(flatten)]
    pub page: Page,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteNoteParams {
    /// Vault-relative path of the note.
    pub path: String,
    /// The revision you last read; `conflict` if the note changed since.
    #[serde(default)]
    pub expected_revision: Option<String>,
    /// Also remove the folders left empty.
    #[serde(default)]
    pub prune_empty_folders: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct DeleteNoteResult {
    pub path: String,
    /// Where the note now is, e.g. ".trash/Idea.md" (restorable from Obsidian's trash).
    pub trashed_to: String,
    /// Revision of the content that was deleted.
    pub revision: String,
    pub pruned_folders: Vec<String>,
}

impl From<ops::DeletedNote> for DeleteNoteResult {
    fn from(deleted: ops::DeletedNote) -> Self {
        DeleteNoteResult {
            path: deleted.path,
            trashed_to: deleted.trashed_to,
            revision: deleted.revision,
            pruned_folders: deleted.pruned_folders,
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MoveNoteParams {
    /// Vault-relative path of the note or attachment.
    pub old_path: String,
    /// Its new path, with the same extension; must not exist.
    pub new_path: String,
    /// Return the plan and change nothing.
    #[serde(default)]
    pub dry_run: bool,
    /// Remove the folders the move leaves empty.
    #[serde(default)]
    pub prune_empty_folders: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct MovedWire {
    pub from: String,
    pub to: String,
    /// The moved file's revision at its new path.
    pub revision: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct LinkChangeWire {
    /// 1-based line of the link before the rewrite.
    pub line: u64,
    pub before: String,
    pub after: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct RewrittenWire {
    pub path: String,
    /// The file's new revision (with dry_run: its current one).
    pub revision: String,
    pub changes: Vec<LinkChangeWire>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct MoveNoteResult {
    pub moved: MovedWire,
    pub rewritten: Vec<RewrittenWire>,
    pub dry_run: bool,
    /// Folders removed because the move left them empty.
    pub pruned_folders: Vec<String>,
}

impl From<ops::MovedNote> for MoveNoteResult {
    fn from(moved: ops::MovedNote) -> Self {
        MoveNoteResult {
            moved: MovedWire {
                from: moved.from,
                to: moved.to,
                revision: moved.revision,
            },
            rewritten: moved
                .rewritten
                .into_iter()
                .map(|file| RewrittenWire {
                    path: file.path,
                    revision: file.revision,
                    changes: file
                        .changes
                        .into_iter()
                        .map(|change| LinkChangeWire {
                            line: change.line,
                            before: change.before,
                            after: change.after,
                        })
                        .collect(),
                })
                .collect(),
            dry_run: moved.dry_run,
            pruned_folders: moved.pruned_folders,
        }
    }
}

// Parameters into `ops` requests.

impl TryFrom<ReadNoteParams> for ops::ReadNote {
    type Error = OpsError;

    /// The read modes exclude each other; the schema cannot say so, so the combination is checked here.
    fn try_from(params: ReadNoteParams) -> Result<Self, OpsError> {
        let modes = [
            params.properties_only,
            params.outline,
            params.heading.is_some(),
        ];
        if modes.iter().filter(|on| **on).count() > 1 {
            return Err(OpsError::invalid_argument(
                "properties_only, outline and heading are separate modes; pass at most one of them",
            ));
        }
        let paging = params.start_line.is_some() || params.limit.is_some();
        // An outline pages by `start_line` alone (from `next_start_line`), a fixed number of
        // headings at a time.
        let outline_paging = params.outline && params.limit.is_none();
        if paging && modes.iter().any(|on| *on) && !outline_paging {
            return Err(OpsError::invalid_argument(
                "start_line and limit page the whole note; they cannot be combined with properties_only or heading, and an outline takes only start_line (its next_start_line)",
            ));
        }
        if params.heading_level.is_some() && params.heading.is_none() {
            return Err(OpsError::invalid_argument(
                "heading_level only applies together with heading",
            ));
        }
        if let Some(level) = params.heading_level
            && !(1..=6).contains(&level)
        {
            return Err(OpsError::invalid_argument(format!(
                "heading_level {level} is out of range; use 1 to 6"
            )));
        }
        let mode = if params.properties_only {
            ops::ReadMode::PropertiesOnly
        } else if params.outline {
            ops::ReadMode::Outline {
                start_line: params.start_line,
            }
        } else if let Some(heading) = params.heading {
            ops::ReadMode::Heading {
                heading,
                level: params.heading_level,
            }
        } else {
            ops::ReadMode::Full {
                start_line: params.start_line,
                limit: params.limit,
            }
        };
        Ok(ops::ReadNote {
            path: params.path,
            mode,
        })
    }
}

impl From<WriteNoteParams> for ops::WriteNote {
    fn from(params: WriteNoteParams) -> Self {
        ops::WriteNote {
            path: params.path,
            body: params.body,
            properties: params.properties,
            overwrite: params.overwrite,
            expected_revision: params.expected_revision,
        }
    }
}

impl From<ListNotesParams> for ops::ListNotes {
    fn from(params: ListNotesParams) -> Self {
        ops::ListNotes {
            folder: params.folder,
            glob: params.glob,
            limit: params.page.limit,
            cursor: params.page.cursor,
        }
    }
}

impl From<DeleteNoteParams> for ops::DeleteNote {
    fn from(params: DeleteNoteParams) -> Self {
        ops::DeleteNote {
            path: params.path,
            expected_revision: params.expected_revision,
            prune_empty_folders: params.prune_empty_folders,
        }
    }
}

impl From<MoveNoteParams> for ops::MoveNote {
    fn from(params: MoveNoteParams) -> Self {
        ops::MoveNote {
            old_path: params.old_path,
            new_path: params.new_path,
            dry_run: params.dry_run,
            prune_empty_folders: params.prune_empty_folders,
        }
    }
}

#[tool_router(router = notes_tools, vis = "pub(super)")]
impl QuireServer {
    #[tool(
        description = "Read a note's text, to answer about it or before editing it. One mode at a time: the whole note (page long notes with `start_line` and `limit`), `properties_only`, `outline` (the heading tree), or one `heading`'s section. Pass the returned `revision` as `expected_revision` when you edit.",
        annotations(
            title = "Read note",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn vault_read_note(
        &self,
        caller: Caller,
        Parameters(params): Parameters<ReadNoteParams>,
    ) -> Result<Json<ReadNoteResult>, ToolError> {
        self.run(caller, params, |ops, ctx, params| {
            ops.read_note(ctx, params.try_into()?)
        })
        .await
    }

    #[tool(
        description = "Create a note, or replace a whole note; to change part of a note, use an editing tool instead. Missing folders are created. Replacing an existing note needs `overwrite: true` and `expected_revision` from your last read. Writes .md, .canvas, .base, .txt and .json files.",
        annotations(
            title = "Write note",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn vault_write_note(
        &self,
        caller: Caller,
        Parameters(params): Parameters<WriteNoteParams>,
    ) -> Result<Json<WriteNoteResult>, ToolError> {
        self.run(caller, params.into(), Ops::write_note).await
    }

    #[tool(
        description = "List the vault's markdown notes in path order, in a `folder` or matching a `glob`. Use it to discover what exists.",
        annotations(
            title = "List notes",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn vault_list_notes(
        &self,
        caller: Caller,
        Parameters(params): Parameters<ListNotesParams>,
    ) -> Result<Json<ListNotesResult>, ToolError> {
        self.run(caller, params.into(), Ops::list_notes).await
    }

    #[tool(
        description = "Move a note to the vault's trash (.trash/, restorable in Obsidian). Use only when the user asked to delete. Pass `expected_revision` from your last read, so a note that changed since is not deleted. Refused in protected folders ([vault] protected_folders).",
        annotations(
            title = "Delete note",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn vault_delete_note(
        &self,
        caller: Caller,
        Parameters(params): Parameters<DeleteNoteParams>,
    ) -> Result<Json<DeleteNoteResult>, ToolError> {
        self.run(caller, params.into(), Ops::delete_note).await
    }

    #[tool(
        description = "Add or replace content at a heading's section, or at the top or bottom of the body, touching nothing else: for structured additions such as a log entry under \"## Log\". Without `heading` the target is the whole body. Content goes in as whole lines; the properties block is never touched.",
        annotations(
            title = "Patch note",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn vault_patch_note(
        &self,
        caller: Caller,
        Parameters(params): Parameters<PatchNoteParams>,
    ) -> Result<Json<EditNoteResult>, ToolError> {
        self.run(caller, params.into(), Ops::patch_note).await
    }

    #[tool(
        description = "Replace exact text in a note's body, for small corrections you can quote. `old_text` must occur once unless `replace_all_occurrences`; when it occurs more often the error names the lines, so quote more context.",
        annotations(
            title = "Replace text in note",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn vault_replace_in_note(
        &self,
        caller: Caller,
        Parameters(params): Parameters<ReplaceInNoteParams>,
    ) -> Result<Json<EditNoteResult>, ToolError> {
        self.run(caller, params.into(), Ops::replace_in_note).await
    }

    #[tool(
        description = "Insert lines before or after the one body line that contains `anchor`: to add next to a specific line when no heading marks the place.",
        annotations(
            title = "Insert at anchor",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn vault_insert_at_anchor(
        &self,
        caller: Caller,
        Parameters(params): Parameters<InsertAtAnchorParams>,
    ) -> Result<Json<EditNoteResult>, ToolError> {
        self.run(caller, params.into(), Ops::insert_at_anchor).await
    }

    #[tool(
        description = "Replace whole body lines, from the line containing `start_anchor` through the line containing `end_anchor`, with `content`: to rewrite a paragraph, list or block you can delimit by its first and last lines.",
        annotations(
            title = "Replace line span",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn vault_replace_span(
        &self,
        caller: Caller,
        Parameters(params): Parameters<ReplaceSpanParams>,
    ) -> Result<Json<EditNoteResult>, ToolError> {
        self.run(caller, params.into(), Ops::edit_span).await
    }

    #[tool(
        description = "Delete whole body lines, from the line containing `start_anchor` through the line containing `end_anchor`: to remove a paragraph, list item or block.",
        annotations(
            title = "Delete line span",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn vault_delete_span(
        &self,
        caller: Caller,
        Parameters(params): Parameters<DeleteSpanParams>,
    ) -> Result<Json<EditNoteResult>, ToolError> {
        self.run(caller, params.into(), Ops::edit_span).await
    }

    #[tool(
        description = "Set, change or delete a note's properties (YAML frontmatter); use it instead of text edits for anything in the properties block. Merges by default: keys not named keep their exact text (comments, quoting, order) and new keys go at the end; `replace: true` rewrites the whole block.",
        annotations(
            title = "Update properties",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn vault_update_properties(
        &self,
        caller: Caller,
        Parameters(params): Parameters<UpdatePropertiesParams>,
    ) -> Result<Json<UpdatePropertiesResult>, ToolError> {
        self.run(caller, params.into(), Ops::update_properties)
            .await
    }

    #[tool(
        description = "Move or rename a note or attachment and rewrite every link that would break (wikilinks, embeds, markdown, property and canvas links), keeping each link's alias, heading and style as Obsidian does. Use it instead of copying and deleting; try `dry_run: true` first to see every change. Nothing changes when files you may read but not write link to it, or to move out of or into protected folders.",
        annotations(
            title = "Move or rename a note",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn vault_move_note(
        &self,
        caller: Caller,
        Parameters(params): Parameters<MoveNoteParams>,
    ) -> Result<Json<MoveNoteResult>, ToolError> {
        self.run(caller, params.into(), Ops::move_note).await
    }
}
