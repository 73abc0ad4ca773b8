//! The search tools: ranked search (keyword, semantic, hybrid), grep, tags, folders, recent notes,
//! properties, and bringing the index up to date; with their wire types (those of the property
//! tools in `search/properties.rs`). Each converts its parameters into one `ops` request (see
//! `ops::search`).

mod properties;

use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{ListNotesResult, Page, default_true};
use crate::mcp::error::ToolError;
use crate::mcp::{Caller, QuireServer};
use crate::ops::{self, Ops};
use properties::{
    ListPropertyKeysResult, ListPropertyValuesParams, ListPropertyValuesResult,
    SearchByPropertyParams,
};

/// How `vault_search` searches: `Auto` is the best mode available (hybrid once semantic vectors
/// are ready, else keyword).
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
pub enum SearchModeParam {
    #[default]
    Auto,
    Keyword,
    Semantic,
    Hybrid,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DateFilterParams {
    /// Before this date (YYYY-MM-DD) or date-time (YYYY-MM-DDTHH:MM).
    #[serde(default)]
    pub before: Option<String>,
    /// On this day.
    #[serde(default)]
    pub on: Option<String>,
    /// After this date (the whole day) or date-time.
    #[serde(default)]
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
#[schemars(inline)]
pub struct SearchFiltersParams {
    /// Only this folder and below.
    #[serde(default)]
    pub folder: Option<String>,
    /// Every one of these tags (nested tags match too).
    #[serde(default)]
    pub tags: Option<Vec<String>>,
    /// Key -> value: text ignores case, a list needs every item, null needs only the key.
    #[serde(default)]
    pub properties: Option<Map<String, Value>>,
    /// The `type` property.
    #[serde(rename = "type")]
    #[serde(default)]
    pub note_type: Option<String>,
    /// The `created` property (else the file's creation time), as written.
    #[serde(default)]
    pub created: Option<DateFilterParams>,
    /// The modification time, in the server's time zone.
    #[serde(default)]
    pub modified: Option<DateFilterParams>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchParams {
    /// Words (all must occur; when no note has all, any may), "exact phrases", prefix*, -excluded words, a OR b.
    #[serde(default)]
    pub query: String,
    #[serde(default)]
    pub filters: Option<SearchFiltersParams>,
    #[serde(flatten)]
    pub page: Page,
    /// auto (default: hybrid once vectors are ready, else keyword), keyword, semantic or hybrid.
    #[serde(default)]
    pub mode: SearchModeParam,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchHit {
    /// "note", or "file" (a canvas, PDF or text file).
    pub kind: String,
    pub path: String,
    /// The note's name (without .md), or the file's name.
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
    pub next_cursor: Option<String>,
    /// Present when the requested mode could not be honoured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

impl From<ops::SearchResults> for SearchResult {
    fn from(found: ops::SearchResults) -> Self {
        SearchResult {
            results: found
                .results
                .into_iter()
                .map(|hit| SearchHit {
                    kind: hit.kind.to_string(),
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
    /// Text to find (or a regular expression with `regex`).
    pub pattern: String,
    /// `pattern` is a Rust regular expression.
    #[serde(default)]
    pub regex: bool,
    /// Match case exactly.
    #[serde(default)]
    pub case_sensitive: bool,
    /// Only notes in this folder and below.
    #[serde(default)]
    pub folder: Option<String>,
    /// Most hits to return (default 50).
    #[schemars(range(min = 1, max = 1000))]
    #[serde(default)]
    pub limit: Option<u32>,
    /// Time budget in milliseconds (default 3000).
    #[schemars(range(min = 1, max = 30000))]
    #[serde(default)]
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
    /// The tag, any case, '#' optional.
    pub tag: String,
    /// Only this tag, not its nested tags.
    #[serde(default)]
    pub exact: bool,
    /// Only notes in this folder and below.
    #[serde(default)]
    pub folder: Option<String>,
    #[serde(flatten)]
    pub page: Page,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
/// The parameters of a count listing (tags, property keys).
pub struct CountListParams {
    /// Only notes in this folder and below.
    #[serde(default)]
    pub folder: Option<String>,
    #[serde(flatten)]
    pub page: Page,
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
    /// The folder, e.g. "Projects".
    pub folder: String,
    /// Include subfolders (default true).
    #[serde(default = "default_true")]
    pub recursive: bool,
    #[serde(flatten)]
    pub page: Page,
}

/// The time `vault_recent_notes` sorts by.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
pub enum RecentSortParam {
    #[default]
    Modified,
    Created,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecentNotesParams {
    /// Only notes in this folder and below.
    #[serde(default)]
    pub folder: Option<String>,
    /// created: by the `created` property (else the file's creation time).
    #[serde(default)]
    pub sort_by: RecentSortParam,
    #[serde(flatten)]
    pub page: Page,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RebuildIndexParams {
    /// Parse every note again, not only changed ones.
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

// Parameters into `ops` requests.

impl From<SearchModeParam> for ops::SearchMode {
    fn from(mode: SearchModeParam) -> Self {
        match mode {
            SearchModeParam::Auto => ops::SearchMode::Auto,
            SearchModeParam::Keyword => ops::SearchMode::Keyword,
            SearchModeParam::Semantic => ops::SearchMode::Semantic,
            SearchModeParam::Hybrid => ops::SearchMode::Hybrid,
        }
    }
}

impl From<SearchFiltersParams> for ops::SearchFilters {
    fn from(filters: SearchFiltersParams) -> Self {
        ops::SearchFilters {
            folder: filters.folder,
            tags: filters.tags.unwrap_or_default(),
            properties: filters.properties.unwrap_or_default(),
            note_type: filters.note_type,
            created: filters.created.map(Into::into),
            modified: filters.modified.map(Into::into),
        }
    }
}

impl From<SearchParams> for ops::SearchNotes {
    fn from(params: SearchParams) -> Self {
        ops::SearchNotes {
            query: params.query,
            filters: params.filters.unwrap_or_default().into(),
            limit: params.page.limit,
            cursor: params.page.cursor,
            mode: params.mode.into(),
        }
    }
}

impl From<GrepParams> for ops::Grep {
    fn from(params: GrepParams) -> Self {
        ops::Grep {
            pattern: params.pattern,
            regex: params.regex,
            case_sensitive: params.case_sensitive,
            folder: params.folder,
            limit: params.limit,
            timeout_ms: params.timeout_ms,
        }
    }
}

impl From<SearchByTagParams> for ops::SearchByTag {
    fn from(params: SearchByTagParams) -> Self {
        ops::SearchByTag {
            tag: params.tag,
            exact: params.exact,
            folder: params.folder,
            limit: params.page.limit,
            cursor: params.page.cursor,
        }
    }
}

/// One request shape for every count listing (tags, property keys).
impl From<CountListParams> for ops::CountList {
    fn from(params: CountListParams) -> Self {
        ops::CountList {
            folder: params.folder,
            limit: params.page.limit,
            cursor: params.page.cursor,
        }
    }
}

impl From<SearchByFolderParams> for ops::SearchByFolder {
    fn from(params: SearchByFolderParams) -> Self {
        ops::SearchByFolder {
            folder: params.folder,
            recursive: params.recursive,
            limit: params.page.limit,
            cursor: params.page.cursor,
        }
    }
}

impl From<RecentSortParam> for ops::RecentSort {
    fn from(sort: RecentSortParam) -> Self {
        match sort {
            RecentSortParam::Modified => ops::RecentSort::Modified,
            RecentSortParam::Created => ops::RecentSort::Created,
        }
    }
}

impl From<RecentNotesParams> for ops::RecentNotes {
    fn from(params: RecentNotesParams) -> Self {
        ops::RecentNotes {
            folder: params.folder,
            sort_by: params.sort_by.into(),
            limit: params.page.limit,
            cursor: params.page.cursor,
        }
    }
}

#[tool_router(router = search_tools, vis = "pub(super)")]
impl QuireServer {
    #[tool(
        description = "Search notes by words and by meaning, to find notes about a topic when you do not know their paths. Keyword ranking is BM25 over title, aliases, headings, properties and body, and every mode also finds canvases, PDFs and text files (`kind` \"file\"; not with note-only filters); with an embedding model, `mode` auto adds semantic (vector) search, and `search_mode` says what answered (with a `notice` when the asked mode could not be honoured). An empty `query` lists the notes matching `filters`, newest first. Obsidian's excluded files are left out.",
        annotations(
            title = "Search notes",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn vault_search(
        &self,
        caller: Caller,
        Parameters(params): Parameters<SearchParams>,
    ) -> Result<Json<SearchResult>, ToolError> {
        self.run(caller, params.into(), Ops::search).await
    }

    #[tool(
        description = "Find the lines of notes that contain a text or match a regular expression: for exact strings (names, IDs, code, URLs) where ranked search is too fuzzy. Obsidian's excluded files are skipped. When `timeout_ms` runs out, the hits found so far come back with `timed_out`. Greps take turns; one that waits over 30 s for its turn answers `busy`.",
        annotations(
            title = "Grep notes",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn vault_grep(
        &self,
        caller: Caller,
        Parameters(params): Parameters<GrepParams>,
    ) -> Result<Json<GrepResult>, ToolError> {
        self.run(caller, params.into(), Ops::grep).await
    }

    #[tool(
        description = "List the notes that carry a tag, in properties or inline, in path order: when the user names a tag. Nested tags match too (\"project\" finds \"project/active\") unless `exact`. Obsidian's excluded files are left out.",
        annotations(
            title = "Search by tag",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn vault_search_by_tag(
        &self,
        caller: Caller,
        Parameters(params): Parameters<SearchByTagParams>,
    ) -> Result<Json<ListNotesResult>, ToolError> {
        self.run(caller, params.into(), Ops::search_by_tag).await
    }

    #[tool(
        description = "List the tags used in the vault with how many notes carry each, most used first: to learn the vault's vocabulary before searching by tag. Case variants are merged; nested tags are listed as written.",
        annotations(
            title = "List tags",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn vault_list_tags(
        &self,
        caller: Caller,
        Parameters(params): Parameters<CountListParams>,
    ) -> Result<Json<ListTagsResult>, ToolError> {
        self.run(caller, params.into(), Ops::list_tags).await
    }

    #[tool(
        description = "List the notes in a folder and its subfolders, in path order: to browse one area of the vault.",
        annotations(
            title = "Search by folder",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn vault_search_by_folder(
        &self,
        caller: Caller,
        Parameters(params): Parameters<SearchByFolderParams>,
    ) -> Result<Json<ListNotesResult>, ToolError> {
        self.run(caller, params.into(), Ops::search_by_folder).await
    }

    #[tool(
        description = "List the most recently modified (or created) notes, newest first: to see what the user worked on lately. Obsidian's excluded files are left out.",
        annotations(
            title = "Recent notes",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn vault_recent_notes(
        &self,
        caller: Caller,
        Parameters(params): Parameters<RecentNotesParams>,
    ) -> Result<Json<ListNotesResult>, ToolError> {
        self.run(caller, params.into(), Ops::recent_notes).await
    }

    #[tool(
        description = "List the property (frontmatter) keys used in the vault with how many notes have each, most used first: to learn how notes are structured before filtering by property. Case variants are merged.",
        annotations(
            title = "List property keys",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn vault_list_property_keys(
        &self,
        caller: Caller,
        Parameters(params): Parameters<CountListParams>,
    ) -> Result<Json<ListPropertyKeysResult>, ToolError> {
        self.run(caller, params.into(), Ops::list_property_keys)
            .await
    }

    #[tool(
        description = "List the values one property takes with how many notes have each, most used first. Use it to see which values exist before vault_search_by_property. List items count one by one; case variants are merged.",
        annotations(
            title = "List property values",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn vault_list_property_values(
        &self,
        caller: Caller,
        Parameters(params): Parameters<ListPropertyValuesParams>,
    ) -> Result<Json<ListPropertyValuesResult>, ToolError> {
        self.run(caller, params.into(), Ops::list_property_values)
            .await
    }

    #[tool(
        description = "List the notes whose property `key` has `value`, in path order: for structured questions (status: done, type: meeting). Keys and text ignore case; a number also matches the same number written as text; a list property matches when any item equals the value. Obsidian's excluded files are left out.",
        annotations(
            title = "Search by property",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn vault_search_by_property(
        &self,
        caller: Caller,
        Parameters(params): Parameters<SearchByPropertyParams>,
    ) -> Result<Json<ListNotesResult>, ToolError> {
        self.run(caller, params.into(), Ops::search_by_property)
            .await
    }

    #[tool(
        description = "Bring the search index in line with the vault now (the owner only). Rarely needed, as the index follows every change: use it after restoring a backup or when results look stale. Send a progress token to hear how far it got.",
        annotations(
            title = "Rebuild search index",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn vault_rebuild_index(
        &self,
        caller: Caller,
        context: RequestContext<RoleServer>,
        Parameters(params): Parameters<RebuildIndexParams>,
    ) -> Result<Json<RebuildIndexResult>, ToolError> {
        // Progress goes to a client that sent a token; a cancelled request stops the rebuild at
        // its next report either way.
        let reports = context.meta.get_progress_token().map(|token| {
            // The writer thread reports synchronously; a task forwards to the client in order.
            let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel::<(usize, usize)>();
            let peer = context.peer.clone();
            tokio::spawn(async move {
                while let Some((done, total)) = receiver.recv().await {
                    let mut param =
                        rmcp::model::ProgressNotificationParam::new(token.clone(), done as f64);
                    param.total = Some(total as f64);
                    param.message = Some(format!("indexed {done} of {total} notes"));
                    if peer.notify_progress(param).await.is_err() {
                        break;
                    }
                }
            });
            sender
        });
        let cancelled = context.ct.clone();
        let progress = Some(Box::new(move |done: usize, total: usize| {
            if let Some(reports) = &reports {
                let _ = reports.send((done, total));
            }
            !cancelled.is_cancelled()
        }) as crate::index::ProgressFn);
        self.run(caller, params.force, move |ops, ctx, force| {
            ops.rebuild_index(ctx, force, progress)
        })
        .await
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
