//! The note tools: read, write, list, delete, the five ways to edit part of a note, properties, and
//! moving a note with every link to it; with their wire types. Each converts its parameters into
//! one `ops` request (see `ops::notes`, `ops::edit`, `ops::move_note`).

use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{ListNotesResult, Page, default_true};
use crate::mcp::error::ToolError;
use crate::mcp::{Caller, QuireServer};
use crate::ops::{self, Ops, OpsError};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadNoteParams {
    /// Vault-relative path of the note, e.g. "Projects/Plan.md".
    pub path: String,
    /// Return only the note's YAML properties (frontmatter) as JSON.
    #[serde(default)]
    pub properties_only: bool,
    /// Return only the heading outline: each heading with its level, 1-based line and section size.
    #[serde(default)]
    pub outline: bool,
    /// Return only this heading's section (heading line, body and subsections). Matched exactly, then case-insensitively.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub heading: Option<String>,
    /// With `heading`: pick the heading at this level (1-6) when the name occurs more than once.
    #[schemars(range(min = 1, max = 6))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u8")]
    pub heading_level: Option<u8>,
    /// First line to return, 1-based. Use with `limit` to page through long notes.
    #[schemars(range(min = 1))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64")]
    pub start_line: Option<u64>,
    /// Number of lines to return from `start_line`.
    #[schemars(range(min = 1))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64")]
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
    #[schemars(with = "String")]
    pub content: Option<String>,
    /// The properties as JSON (empty object when the note has none).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Map<String, Value>")]
    pub properties: Option<Map<String, Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Vec<OutlineEntry>")]
    pub outline: Option<Vec<OutlineEntry>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "usize")]
    pub start_line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "usize")]
    pub end_line: Option<usize>,
    /// Present when more lines follow: pass it as `start_line` to continue.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "usize")]
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
    /// Vault-relative path, e.g. "Inbox/Idea.md". Missing folders are created.
    pub path: String,
    /// The note's markdown text (after the properties block, if `properties` is given).
    pub body: String,
    /// Properties to write as the YAML frontmatter block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Map<String, Value>")]
    pub properties: Option<Map<String, Value>>,
    /// Replace an existing note. Requires `expected_revision`.
    #[serde(default)]
    pub overwrite: bool,
    /// The revision you last read; the write fails with `conflict` if the note changed since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
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
}

impl From<ops::WrittenNote> for WriteNoteResult {
    fn from(written: ops::WrittenNote) -> Self {
        WriteNoteResult {
            path: written.path,
            revision: written.revision,
            bytes: written.bytes,
            modified: written.modified,
            created: written.created,
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListNotesParams {
    /// Only notes in this folder and below, e.g. "Projects". Omit for the whole vault.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub folder: Option<String>,
    /// Glob on the vault-relative path ("Daily/*.md", "**/Meeting*.md"); without '/' it matches file names at any depth.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub glob: Option<String>,
    #[serde(flatten)]
    pub page: Page,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteNoteParams {
    /// Vault-relative path of the note to move to the trash.
    pub path: String,
    /// The revision you last read; the delete fails with `conflict` if the note changed since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub expected_revision: Option<String>,
    /// Also remove folders left empty by the delete.
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

/// Where `vault_patch_note` puts its content.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PatchOperation {
    /// After the target's last non-blank line (with a heading: after its last subsection).
    Append,
    /// At the top of the target (with a heading: right under the heading line).
    Prepend,
    /// Instead of the target's content (a heading line itself is kept).
    Replace,
    /// Just before the heading line (needs `heading`).
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
    /// Vault-relative path of the note, e.g. "Projects/Plan.md".
    pub path: String,
    /// append, prepend, replace or insert_before.
    pub operation: PatchOperation,
    /// Markdown to add, inserted as whole lines. May be empty only for replace (which then clears the target).
    pub content: String,
    /// Target this heading's section instead of the whole body. Matched exactly, then case-insensitively; nested headings work too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub heading: Option<String>,
    /// With `heading`: pick the heading at this level (1-6) when the name occurs more than once.
    #[schemars(range(min = 1, max = 6))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u8")]
    pub heading_level: Option<u8>,
    /// With `heading`: whether the section includes its subsections (default true).
    #[serde(default = "default_true")]
    pub include_children: bool,
    /// The revision you last read; the edit fails with `conflict` if the note changed since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
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
    #[schemars(with = "usize")]
    pub start_line: Option<usize>,
    /// 1-based last line of the new content.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "usize")]
    pub end_line: Option<usize>,
    /// How many occurrences were replaced (vault_replace_in_note only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "usize")]
    pub replacements: Option<usize>,
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
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplaceInNoteParams {
    /// Vault-relative path of the note.
    pub path: String,
    /// Exact text to find in the body (case-sensitive; may span lines). The properties block is never searched.
    pub old_text: String,
    /// Replacement text (may be empty to delete).
    pub new_text: String,
    /// Replace every occurrence; otherwise more than one occurrence is `ambiguous_match`.
    #[serde(default)]
    pub replace_all_occurrences: bool,
    /// The revision you last read; the edit fails with `conflict` if the note changed since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub expected_revision: Option<String>,
}

/// Before or after the anchor line.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
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
    /// A short, case-sensitive part of exactly one body line, e.g. "## Tasks" or "Status:".
    pub anchor: String,
    /// Insert before or after the anchor line.
    pub position: AnchorPosition,
    /// Markdown to insert, as whole lines.
    pub content: String,
    /// When several lines contain the anchor, use the first instead of failing with `ambiguous_match`.
    #[serde(default)]
    pub first_match: bool,
    /// The revision you last read; the edit fails with `conflict` if the note changed since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub expected_revision: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplaceSpanParams {
    /// Vault-relative path of the note.
    pub path: String,
    /// A short, case-sensitive part of the span's first line.
    pub start_anchor: String,
    /// A short, case-sensitive part of the span's last line, searched from the first line on. Omit to replace only the first line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub end_anchor: Option<String>,
    /// Markdown that replaces the whole lines of the span (empty deletes them).
    pub content: String,
    /// When an anchor matches several lines, use the first instead of failing with `ambiguous_match`.
    #[serde(default)]
    pub first_match: bool,
    /// The revision you last read; the edit fails with `conflict` if the note changed since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub expected_revision: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteSpanParams {
    /// Vault-relative path of the note.
    pub path: String,
    /// A short, case-sensitive part of the span's first line.
    pub start_anchor: String,
    /// A short, case-sensitive part of the span's last line, searched from the first line on. Omit to delete only the first line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub end_anchor: Option<String>,
    /// When an anchor matches several lines, use the first instead of failing with `ambiguous_match`.
    #[serde(default)]
    pub first_match: bool,
    /// The revision you last read; the edit fails with `conflict` if the note changed since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub expected_revision: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdatePropertiesParams {
    /// Vault-relative path of the note.
    pub path: String,
    /// Properties to set; a JSON null deletes that key. Keys not named keep their exact text.
    pub properties: Map<String, Value>,
    /// Make `properties` the whole set, rewriting the block (keys not named are removed).
    #[serde(default)]
    pub replace: bool,
    /// The revision you last read; the edit fails with `conflict` if the note changed since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
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
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MoveNoteParams {
    /// Vault-relative path of the note or attachment to move (e.g. "Inbox/Idea.md").
    pub old_path: String,
    /// Its new vault-relative path, with the same extension (e.g. "Projects/Idea.md"); must not exist.
    pub new_path: String,
    /// true: return the plan (every link that would be rewritten) and change nothing.
    #[serde(default)]
    pub dry_run: bool,
    /// Remove the folders the move leaves empty (only folders you may write).
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
        if paging && modes.iter().any(|on| *on) {
            return Err(OpsError::invalid_argument(
                "start_line and limit page the whole note; they cannot be combined with properties_only, outline or heading",
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
            ops::ReadMode::Outline
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
        description = "Read a markdown note. Use to see a note's text before answering about it or editing it. \
Modes: whole note (default); `start_line`+`limit` to page long notes; `properties_only` for the YAML properties as JSON; \
`outline` for the heading tree; `heading` (+ `heading_level`) for one section. \
Returns `revision` (pass it as `expected_revision` to edits), `bytes`, `modified`, `total_lines`. \
Errors: not_found, invalid_path, path_forbidden, unsupported_extension, too_large, heading_not_found, ambiguous_heading, invalid_properties, invalid_argument.",
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
        description = "Create a note, or replace an existing one wholesale. Use for new notes; to change part of a note prefer an editing tool. \
Creating needs only `path` and `body` (missing folders are created; `properties` become the YAML frontmatter). \
Replacing an existing note needs `overwrite: true` and `expected_revision` from your last read. \
Returns the new `revision`. Errors: already_exists, revision_required, conflict (the note changed since your read: re-read and retry), \
unsupported_extension (only .md .canvas .base .txt .json), too_large, invalid_path, path_forbidden, invalid_argument.",
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
        description = "List markdown notes, sorted by path. Use to discover what exists in the vault or a folder. \
Filter with `folder` and/or `glob`; page with `limit` (default 50, max 1000) and `cursor` (the previous page's `next_cursor`). \
Returns `notes` [{path, title, bytes, modified, tags}] and `next_cursor` when more follow. \
Errors: not_found (folder), invalid_path, path_forbidden, invalid_argument (bad glob or cursor).",
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
        description = "Move a note to the vault's trash (.trash/, restorable in Obsidian). Use only when the user asked to delete. \
Pass `expected_revision` from your last read so a note that changed since is not deleted; `prune_empty_folders` removes folders left empty. \
Returns `trashed_to` and the deleted `revision`. Errors: not_found, conflict, invalid_path, path_forbidden, unsupported_extension.",
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
        description = "Add or replace content relative to a heading, or at the top or bottom of a note, without touching anything else. \
Use for structured additions (a log entry under \"## Log\", a new task under a section). \
`operation`: append (after the section's last line, after its subsections), prepend (right under the heading line), replace (the section's content; the heading line stays), insert_before (just before the heading line). \
Without `heading` the target is the whole body; the properties block is never touched. Content is inserted as whole lines. \
Returns the new `revision` and the `start_line`/`end_line` of the new content. \
Errors: heading_not_found, ambiguous_heading (pass heading_level), conflict (re-read and retry), not_found, invalid_argument, invalid_path, path_forbidden, unsupported_extension, too_large.",
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
        description = "Replace exact text in a note's body. Use for small corrections when you can quote the text to change. \
`old_text` is case-sensitive, may span lines, and must occur exactly once unless `replace_all_occurrences` is true; the properties block is never searched. \
Returns the new `revision`, `replacements` and the lines of the first and last replacement. \
Errors: no_match, ambiguous_match (with the count and line numbers: quote more context), conflict, not_found, invalid_argument, invalid_path, path_forbidden, unsupported_extension, too_large.",
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
        description = "Insert lines before or after the one body line that contains `anchor` (a short, case-sensitive substring). \
Use to add next to a specific line (after a list item, before a closing line) when there is no heading to target. \
More than one matching line is ambiguous_match unless `first_match` is true. \
Returns the new `revision` and the `start_line`/`end_line` of the inserted lines. \
Errors: no_match, ambiguous_match, conflict, not_found, invalid_argument, invalid_path, path_forbidden, unsupported_extension, too_large.",
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
        description = "Replace whole body lines, from the line containing `start_anchor` through the line containing `end_anchor` (inclusive; searched from the start line on), with `content`. \
Without `end_anchor` only the start line is replaced. Use to rewrite a paragraph, list or block you can delimit by its first and last lines. \
Anchors are short, case-sensitive substrings of one line; several matches are ambiguous_match unless `first_match` is true. \
Returns the new `revision` and the lines of the new content. \
Errors: no_match, ambiguous_match, conflict, not_found, invalid_argument, invalid_path, path_forbidden, unsupported_extension, too_large.",
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
        description = "Delete whole body lines, from the line containing `start_anchor` through the line containing `end_anchor` (inclusive; searched from the start line on); without `end_anchor` only that line. \
Use to remove a paragraph, list item or block. Anchors are short, case-sensitive substrings of one line; several matches are ambiguous_match unless `first_match` is true. \
Returns the new `revision`. Errors: no_match, ambiguous_match, conflict, not_found, invalid_argument, invalid_path, path_forbidden, unsupported_extension.",
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
        description = "Set, change or delete a note's properties (YAML frontmatter). Use instead of text edits for anything in the properties block. \
`properties` is merged: each named key is set, a JSON null deletes it, and every other key keeps its exact text (comments, quoting, order); new keys go at the end; a note without properties gets a block. \
`replace: true` makes `properties` the whole set and rewrites the block. \
Returns the new `revision`, `changed_keys` and all `properties` afterwards. \
Errors: invalid_properties (the existing block is not valid YAML or not a mapping, with line and column: repair it first), conflict, not_found, invalid_argument, invalid_path, path_forbidden, unsupported_extension.",
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
        description = "Move or rename a note or attachment and rewrite every link that would otherwise break (wikilinks, embeds, markdown links, property links, canvas cards), keeping each link's alias, heading or block part and style, as Obsidian does. \
Use instead of writing a copy and deleting the original. Run with `dry_run: true` first to see every change. A path that must be written follows the vault's new-link format. Nothing is replaced: the destination must not exist. \
Returns `moved` {from, to, revision}, `rewritten` [{path, revision, changes: [{line, before, after}]}], `dry_run`, `pruned_folders`. \
Errors: not_found, already_exists (destination), path_forbidden (outside your write rules, or linked from files you can read but may not change, which it names), conflict (a file changed during the move; nothing was lost), invalid_path, invalid_argument (other extension, a folder, a link that cannot be rewritten), too_large.",
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
