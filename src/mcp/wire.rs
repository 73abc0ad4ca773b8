//! MCP wire types: tool parameters and structured results, with their JSON schemas.
//!
//! Optional parameters are schema-typed as their plain type (not `["string", "null"]`) so clients
//! that map tool schemas onto single-type dialects accept them; absent means "use the default".
//!
//! These are the only serialisable shapes of the tool surface; they convert to and from the plain
//! data of `ops`. Field names follow DESIGN's contract and must not change without a reason.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::ops;

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
    /// Page size, 1-1000 (default 50).
    #[schemars(range(min = 1, max = 1000))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u32")]
    pub limit: Option<u32>,
    /// `next_cursor` from the previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub cursor: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct NoteSummary {
    pub path: String,
    /// The note's name as Obsidian shows it (file name without .md).
    pub title: String,
    pub bytes: u64,
    pub modified: String,
    /// Tags from properties and inline #tags, without '#'.
    pub tags: Vec<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ListNotesResult {
    pub notes: Vec<NoteSummary>,
    /// Present when more notes follow: pass it back as `cursor`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub next_cursor: Option<String>,
}

impl From<ops::NoteList> for ListNotesResult {
    fn from(list: ops::NoteList) -> Self {
        ListNotesResult {
            notes: list
                .notes
                .into_iter()
                .map(|note| NoteSummary {
                    path: note.path,
                    title: note.title,
                    bytes: note.bytes,
                    modified: note.modified,
                    tags: note.tags,
                })
                .collect(),
            next_cursor: list.next_cursor,
        }
    }
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

fn default_true() -> bool {
    true
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

// Search tools (issue 5): keyword search, grep, tags, folders, recency and properties.

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SearchModeParam {
    /// The best mode available: hybrid once semantic vectors are ready, else keyword.
    #[default]
    Auto,
    Keyword,
    Semantic,
    Hybrid,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DateFilterParams {
    /// Strictly before this date (YYYY-MM-DD) or date-time (YYYY-MM-DDTHH:MM), UTC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub before: Option<String>,
    /// On this day (YYYY-MM-DD), UTC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub on: Option<String>,
    /// Strictly after this date (the whole day excluded) or date-time, UTC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub after: Option<String>,
}

impl From<DateFilterParams> for ops::DateFilter {
    fn from(params: DateFilterParams) -> Self {
        ops::DateFilter {
            before: params.before,
            on: params.on,
            after: params.after,
        }
    }
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchFiltersParams {
    /// Only notes in this folder and below, e.g. "Projects".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub folder: Option<String>,
    /// Notes must have every one of these tags (any case, '#' optional; nested tags match too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Vec<String>")]
    pub tags: Option<Vec<String>>,
    /// Property key -> value the note must have (text ignores case; a number also matches equal numbers; a list needs every value; null needs only the key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Map<String, Value>")]
    pub properties: Option<Map<String, Value>>,
    /// The note's `type` property, ignoring case.
    #[serde(rename = "type")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub note_type: Option<String>,
    /// Bounds on the `created` property (else the file's creation time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "DateFilterParams")]
    pub created: Option<DateFilterParams>,
    /// Bounds on the file's modification time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "DateFilterParams")]
    pub modified: Option<DateFilterParams>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchParams {
    /// What to look for: words (all must occur; if no note has all, any may), "exact phrases", prefix*, -excluded words, a OR b. Any text is accepted. Empty text lists the notes matching the filters, newest first.
    #[serde(default)]
    pub query: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "SearchFiltersParams")]
    pub filters: Option<SearchFiltersParams>,
    /// Page size, 1-1000 (default 50).
    #[schemars(range(min = 1, max = 1000))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u32")]
    pub limit: Option<u32>,
    /// `next_cursor` from the previous page (with the same query and filters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub cursor: Option<String>,
    /// Search mode; without an embedding model every mode runs keyword search, as `search_mode` reports.
    #[serde(default)]
    pub mode: SearchModeParam,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchHit {
    pub path: String,
    /// The note's name (file name without .md).
    pub title: String,
    /// Relevance (BM25; higher is better; 0 when there was no query text).
    pub score: f64,
    /// A short excerpt of the body with the matched words in **bold**.
    pub snippet: String,
    pub bytes: u64,
    pub modified: String,
    pub tags: Vec<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchResult {
    pub results: Vec<SearchHit>,
    /// How the results were found: "keyword" (BM25), "semantic" (vectors) or "hybrid" (both, fused).
    pub search_mode: String,
    /// Whether a reranker reordered the results.
    pub reranked: bool,
    /// True when no note contained every word, so the results contain any of them.
    pub matched_any_word: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub next_cursor: Option<String>,
    /// Present when the requested mode could not be honoured.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub notice: Option<String>,
}

impl From<ops::SearchResults> for SearchResult {
    fn from(found: ops::SearchResults) -> Self {
        SearchResult {
            results: found
                .results
                .into_iter()
                .map(|hit| SearchHit {
                    path: hit.path,
                    title: hit.title,
                    score: significant(hit.score),
                    snippet: hit.snippet,
                    bytes: hit.bytes,
                    modified: hit.modified,
                    tags: hit.tags,
                })
                .collect(),
            search_mode: found.search_mode.to_string(),
            reranked: found.reranked,
            matched_any_word: found.matched_any_word,
            next_cursor: found.next_cursor,
            notice: found.notice,
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrepParams {
    /// The text to find in note lines (or a regular expression with `regex: true`).
    pub pattern: String,
    /// Treat `pattern` as a regular expression (Rust regex syntax, linear time).
    #[serde(default)]
    pub regex: bool,
    /// Match case exactly (default: ignore case).
    #[serde(default)]
    pub case_sensitive: bool,
    /// Only notes in this folder and below.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub folder: Option<String>,
    /// Most hits to return, 1-1000 (default 50).
    #[schemars(range(min = 1, max = 1000))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u32")]
    pub limit: Option<u32>,
    /// Time budget in milliseconds (default 3000, at most 30000); when it runs out the hits so far are returned with `timed_out: true`.
    #[schemars(range(min = 1, max = 30000))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64")]
    pub timeout_ms: Option<u64>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct GrepHit {
    pub path: String,
    /// 1-based line number.
    pub line: usize,
    /// 0-based character offset of the match within the line.
    pub column: usize,
    /// The line's text (long lines are cut around the match, marked with …).
    pub text: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct GrepResult {
    pub hits: Vec<GrepHit>,
    /// More lines matched than `limit`.
    pub truncated: bool,
    /// The time budget ran out before every note was searched.
    pub timed_out: bool,
}

impl From<ops::GrepResult> for GrepResult {
    fn from(result: ops::GrepResult) -> Self {
        GrepResult {
            hits: result
                .hits
                .into_iter()
                .map(|hit| GrepHit {
                    path: hit.path,
                    line: hit.line,
                    column: hit.column,
                    text: hit.text,
                })
                .collect(),
            truncated: result.truncated,
            timed_out: result.timed_out,
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchByTagParams {
    /// The tag, any case, '#' optional, e.g. "project" or "#project/active".
    pub tag: String,
    /// Only this exact tag; by default nested tags match too ("project" finds "project/active").
    #[serde(default)]
    pub exact: bool,
    /// Only notes in this folder and below.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub folder: Option<String>,
    /// Page size, 1-1000 (default 50).
    #[schemars(range(min = 1, max = 1000))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u32")]
    pub limit: Option<u32>,
    /// `next_cursor` from the previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub cursor: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListTagsParams {
    /// Only count notes in this folder and below.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub folder: Option<String>,
    /// Page size, 1-1000 (default 50).
    #[schemars(range(min = 1, max = 1000))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u32")]
    pub limit: Option<u32>,
    /// `next_cursor` from the previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub cursor: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct TagCount {
    /// The tag without '#', in its most common spelling (case variants are merged).
    pub tag: String,
    /// Number of notes with the tag.
    pub count: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ListTagsResult {
    pub tags: Vec<TagCount>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub next_cursor: Option<String>,
}

impl From<ops::CountedList> for ListTagsResult {
    fn from(list: ops::CountedList) -> Self {
        ListTagsResult {
            tags: list
                .items
                .into_iter()
                .map(|item| TagCount {
                    tag: item.value,
                    count: item.count,
                })
                .collect(),
            next_cursor: list.next_cursor,
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchByFolderParams {
    /// The folder, e.g. "Projects/Quire Launch".
    pub folder: String,
    /// Include notes in subfolders (default true).
    #[serde(default = "default_true")]
    pub recursive: bool,
    /// Page size, 1-1000 (default 50).
    #[schemars(range(min = 1, max = 1000))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u32")]
    pub limit: Option<u32>,
    /// `next_cursor` from the previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub cursor: Option<String>,
}

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RecentSortParam {
    /// By the file's modification time.
    #[default]
    Modified,
    /// By the `created` property (else the file's creation time).
    Created,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecentNotesParams {
    /// Only notes in this folder and below.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub folder: Option<String>,
    /// "modified" (default) or "created"; newest first.
    #[serde(default)]
    pub sort_by: RecentSortParam,
    /// Page size, 1-1000 (default 50).
    #[schemars(range(min = 1, max = 1000))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u32")]
    pub limit: Option<u32>,
    /// `next_cursor` from the previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub cursor: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListPropertyKeysParams {
    /// Only count notes in this folder and below.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub folder: Option<String>,
    /// Page size, 1-1000 (default 50).
    #[schemars(range(min = 1, max = 1000))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u32")]
    pub limit: Option<u32>,
    /// `next_cursor` from the previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub cursor: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct PropertyKeyCount {
    /// The key in its most common spelling (case variants are merged).
    pub key: String,
    /// Number of notes with the key.
    pub count: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ListPropertyKeysResult {
    pub keys: Vec<PropertyKeyCount>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub next_cursor: Option<String>,
}

impl From<ops::CountedList> for ListPropertyKeysResult {
    fn from(list: ops::CountedList) -> Self {
        ListPropertyKeysResult {
            keys: list
                .items
                .into_iter()
                .map(|item| PropertyKeyCount {
                    key: item.value,
                    count: item.count,
                })
                .collect(),
            next_cursor: list.next_cursor,
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListPropertyValuesParams {
    /// The property key, ignoring case, e.g. "status".
    pub key: String,
    /// Only count notes in this folder and below.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub folder: Option<String>,
    /// Page size, 1-1000 (default 50).
    #[schemars(range(min = 1, max = 1000))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u32")]
    pub limit: Option<u32>,
    /// `next_cursor` from the previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub cursor: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct PropertyValueCount {
    /// The value as text (list values are counted one by one; case variants are merged).
    pub value: String,
    /// Number of notes with the value.
    pub count: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ListPropertyValuesResult {
    pub values: Vec<PropertyValueCount>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub next_cursor: Option<String>,
}

impl From<ops::CountedList> for ListPropertyValuesResult {
    fn from(list: ops::CountedList) -> Self {
        ListPropertyValuesResult {
            values: list
                .items
                .into_iter()
                .map(|item| PropertyValueCount {
                    value: item.value,
                    count: item.count,
                })
                .collect(),
            next_cursor: list.next_cursor,
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchByPropertyParams {
    /// The property key, ignoring case, e.g. "status".
    pub key: String,
    /// The value to find: text (ignoring case), a number (also matches equal numbers written as text), true/false, a list (every value must be present), or null/omitted for any value.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    #[schemars(with = "PropertyValueSchema")]
    pub value: Value,
    /// Only notes in this folder and below.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub folder: Option<String>,
    /// Page size, 1-1000 (default 50).
    #[schemars(range(min = 1, max = 1000))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u32")]
    pub limit: Option<u32>,
    /// `next_cursor` from the previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub cursor: Option<String>,
}

/// The schema of a property value a client may search for (the field itself stays a JSON value).
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)] // Only its schema is used.
enum PropertyValueSchema {
    Text(String),
    Number(f64),
    Flag(bool),
    List(Vec<PropertyScalarSchema>),
}

#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)] // Only its schema is used.
enum PropertyScalarSchema {
    Text(String),
    Number(f64),
    Flag(bool),
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RebuildIndexParams {
    /// Parse every note again instead of only those whose size, time or content changed.
    #[serde(default)]
    pub force: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct RebuildIndexResult {
    /// Notes in the vault.
    pub notes: usize,
    /// Notes read and parsed again.
    pub parsed: usize,
    /// Notes dropped from the index because they left the vault.
    pub removed: usize,
    /// Notes skipped because they had not changed.
    pub unchanged: usize,
    pub elapsed_ms: u64,
}

impl From<ops::RebuiltIndex> for RebuildIndexResult {
    fn from(rebuilt: ops::RebuiltIndex) -> Self {
        RebuildIndexResult {
            notes: rebuilt.notes,
            parsed: rebuilt.parsed,
            removed: rebuilt.removed,
            unchanged: rebuilt.unchanged,
            elapsed_ms: rebuilt.elapsed_ms,
        }
    }
}

/// A score to four significant digits: enough to tell neighbouring hits apart (BM25 and fused
/// scores differ in the second to fourth digit), without the sixteen of an `f64`.
fn significant(score: f64) -> f64 {
    if score == 0.0 || !score.is_finite() {
        return score;
    }
    let scale = 10f64.powi(3 - score.abs().log10().floor() as i32);
    (score * scale).round() / scale
}

#[cfg(test)]
mod tests {
    use super::significant;

    #[test]
    fn scores_keep_four_significant_digits() {
        assert_eq!(significant(0.8651987214700891), 0.8652);
        assert_eq!(significant(0.032786885245901), 0.03279);
        assert_eq!(significant(12.345678), 12.35);
        assert_eq!(significant(0.0), 0.0);
        assert!(significant(0.03279) > significant(0.03226));
    }
}
