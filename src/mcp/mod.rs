//! The MCP adapter: tools, server instructions and error mapping on top of `ops`, through rmcp.
//!
//! Each tool extracts its typed parameters, runs exactly one `ops` function on a blocking thread,
//! and converts the result. A failed operation becomes an `isError` tool result whose text starts
//! with the stable error code; internal errors are logged with a reference number and never echoed.
//! This is the only module that knows rmcp.

mod daily;
mod instructions;
mod links;
mod logging;
mod prompts;
mod resources;
mod tasks;
mod tasks_wire;
mod wire;

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, Implementation, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Resource, ResourceContents, ResourceTemplate, ServerCapabilities,
    ServerConfig, SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use crate::acl::Principal;
use crate::index::VaultChange;
use crate::ops::{self, Context, Ops, OpsError};
use instructions::Instructions;
use resources::Subscriptions;
use wire::*;

/// What rmcp prefixes to argument-deserialisation failures; rewritten to our `invalid_argument`.
const RMCP_ARGUMENT_ERROR: &str = "failed to deserialize parameters:";
/// Page size of `resources/list`.
const RESOURCE_PAGE: u32 = 200;

static NEXT_ERROR_REFERENCE: AtomicU64 = AtomicU64::new(1);

tokio::task_local! {
    /// The identity of the tool call being served; set by `call_tool` for the `run` helper.
    static PRINCIPAL: Principal;
}

/// Which tools a deployment offers.
#[derive(Debug, Clone, Default)]
pub struct Features {
    pub read_only: bool,
    pub disabled_tools: Vec<String>,
}

/// The tool names a configuration may mention, for validating `disabled_tools` at startup.
pub fn tool_names() -> Vec<String> {
    QuireServer::all_tools()
        .list_all()
        .into_iter()
        .map(|tool| tool.name.to_string())
        .collect()
}

/// Everything sessions share: the operations, vault change events and the feature set, and what
/// is derived from them once rather than per session (a stateless client makes every request a
/// session of its own).
pub struct Shared {
    pub ops: Arc<Ops>,
    pub changes: broadcast::Sender<VaultChange>,
    pub features: Features,
    /// Ticks whenever the access policy is replaced, so sessions whose tool set changed can say so.
    pub policy_changes: broadcast::Sender<()>,
    instructions: Arc<Instructions>,
    /// Fires when the server begins to shut down: `subscriptions/listen` streams end with their
    /// final result before the transport closes.
    pub closing: CancellationToken,
    /// The tools this deployment offers (the feature set applied), before per-caller filtering.
    tools: ToolRouter<QuireServer>,
}

impl Shared {
    /// Computes the shared parts once; call [`Shared::follow_changes`] to keep them current.
    pub fn new(
        ops: Arc<Ops>,
        changes: broadcast::Sender<VaultChange>,
        features: Features,
        policy_changes: broadcast::Sender<()>,
    ) -> Shared {
        let instructions = Arc::new(Instructions::new(&ops));
        let tools = QuireServer::offered_tools(&features);
        Shared {
            ops,
            changes,
            features,
            policy_changes,
            instructions,
            closing: CancellationToken::new(),
            tools,
        }
    }

    /// Keeps the server instructions current as the vault and the policy change; runs until the
    /// change channels close.
    pub async fn follow_changes(self: Arc<Self>) {
        Arc::clone(&self.instructions)
            .follow(
                Arc::clone(&self.ops),
                self.changes.subscribe(),
                self.policy_changes.subscribe(),
            )
            .await;
    }
}

/// Why a stdio session ended abnormally.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("the MCP client did not complete initialisation: {0}")]
    Initialize(String),
    #[error("the MCP session failed: {0}")]
    Session(#[from] tokio::task::JoinError),
}

/// Serves MCP over stdin/stdout until the client closes the stream.
pub async fn serve_stdio(shared: Arc<Shared>) -> Result<(), ServeError> {
    let running = QuireServer::new(shared)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|error| ServeError::Initialize(error.to_string()))?;
    running.waiting().await?;
    Ok(())
}

/// One MCP session over a vault.
#[derive(Clone)]
pub struct QuireServer {
    shared: Arc<Shared>,
    instructions: Arc<str>,
    subscriptions: Arc<Subscriptions>,
    log_level: Arc<logging::ClientLogLevel>,
    tool_router: ToolRouter<QuireServer>,
}

impl QuireServer {
    /// A handler for one session (or, for a stateless client, one request): nothing here may
    /// cost more than a few allocations.
    pub fn new(shared: Arc<Shared>) -> QuireServer {
        QuireServer {
            instructions: shared.instructions.current(),
            tool_router: shared.tools.clone(),
            shared,
            subscriptions: Arc::new(Subscriptions::default()),
            log_level: Arc::new(logging::ClientLogLevel::default()),
        }
    }

    /// Every tool minus those the deployment turns off (read-only, `disabled_tools`).
    fn offered_tools(features: &Features) -> ToolRouter<QuireServer> {
        let mut tool_router = Self::all_tools();
        let removed: HashSet<String> = tool_router
            .list_all()
            .into_iter()
            .filter(|tool| {
                let writes = tool.annotations.as_ref().and_then(|a| a.read_only_hint) != Some(true);
                (features.read_only && writes)
                    || features
                        .disabled_tools
                        .iter()
                        .any(|name| name == tool.name.as_ref())
            })
            .map(|tool| tool.name.to_string())
            .collect();
        for name in &removed {
            tool_router.remove_route(name);
        }
        tool_router
    }

    /// Every tool Quire has. Each area keeps its tools in its own `#[tool_router(router = ...)]`
    /// block (its own file), so adding an area touches only this sum.
    fn all_tools() -> ToolRouter<QuireServer> {
        Self::tool_router() + Self::daily_tools() + Self::links_tools() + Self::tasks_tools()
    }

    /// Whether `principal` is offered `tool`: tools that change the vault need a write rule.
    fn offers(&self, principal: &Principal, tool: &rmcp::model::Tool) -> bool {
        let writes = tool.annotations.as_ref().and_then(|a| a.read_only_hint) != Some(true);
        !writes || self.shared.ops.policy().may_write_somewhere(principal)
    }

    fn tools_for(&self, principal: &Principal) -> Vec<rmcp::model::Tool> {
        self.tool_router
            .list_all()
            .into_iter()
            .filter(|tool| self.offers(principal, tool))
            .collect()
    }

    /// Runs one blocking `ops` call for the current caller and maps its outcome onto a tool result.
    async fn run<T, R>(
        &self,
        tool: &'static str,
        call: impl FnOnce(&Ops, &Context) -> Result<T, OpsError> + Send + 'static,
    ) -> Result<Json<R>, String>
    where
        T: Send + 'static,
        R: From<T>,
    {
        let Ok(principal) = PRINCIPAL.try_with(Clone::clone) else {
            return Err(tool_error(
                tool,
                &OpsError::Internal("a tool ran without a caller identity".into()),
            ));
        };
        let ops = Arc::clone(&self.shared.ops);
        let outcome =
            tokio::task::spawn_blocking(move || call(&ops, &Context::new(principal, tool))).await;
        match outcome {
            Ok(Ok(value)) => Ok(Json(R::from(value))),
            Ok(Err(error)) => Err(tool_error(tool, &error)),
            Err(join_error) => Err(tool_error(tool, &OpsError::Internal(Box::new(join_error)))),
        }
    }
}

/// The caller of a request: HTTP requests carry the principal the auth layer proved; a request
/// without HTTP parts came over stdio from the local user who started Quire.
fn principal_of(context: &RequestContext<RoleServer>) -> Result<Principal, ErrorData> {
    match context.extensions.get::<http::request::Parts>() {
        None => Ok(Principal::Owner),
        Some(parts) => parts.extensions.get::<Principal>().cloned().ok_or_else(|| {
            tracing::error!("an HTTP request reached MCP without an authenticated principal");
            ErrorData::internal_error("request is not authenticated", None)
        }),
    }
}

fn tool_error(tool: &str, error: &OpsError) -> String {
    if let OpsError::Internal(cause) = error {
        let reference = NEXT_ERROR_REFERENCE.fetch_add(1, Ordering::Relaxed);
        tracing::error!(tool, reference, error = %cause, "internal error in a tool call");
        return format!("internal: {error} (reference {reference})");
    }
    tracing::debug!(tool, code = error.code(), "tool call failed");
    format!("{}: {error}", error.code())
}

#[tool_router]
impl QuireServer {
    #[tool(
        name = "vault_read_note",
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
        Parameters(params): Parameters<ReadNoteParams>,
    ) -> Result<Json<ReadNoteResult>, String> {
        let mode = read_mode(&params).map_err(|e| tool_error("vault_read_note", &e))?;
        let request = ops::ReadNote {
            path: params.path,
            mode,
        };
        self.run("vault_read_note", move |ops, ctx| {
            ops.read_note(ctx, request)
        })
        .await
    }

    #[tool(
        name = "vault_write_note",
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
        Parameters(params): Parameters<WriteNoteParams>,
    ) -> Result<Json<WriteNoteResult>, String> {
        let request = ops::WriteNote {
            path: params.path,
            body: params.body,
            properties: params.properties,
            overwrite: params.overwrite,
            expected_revision: params.expected_revision,
        };
        self.run("vault_write_note", move |ops, ctx| {
            ops.write_note(ctx, request)
        })
        .await
    }

    #[tool(
        name = "vault_list_notes",
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
        Parameters(params): Parameters<ListNotesParams>,
    ) -> Result<Json<ListNotesResult>, String> {
        let request = ops::ListNotes {
            folder: params.folder,
            glob: params.glob,
            limit: params.limit,
            cursor: params.cursor,
        };
        self.run("vault_list_notes", move |ops, ctx| {
            ops.list_notes(ctx, request)
        })
        .await
    }

    #[tool(
        name = "vault_delete_note",
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
        Parameters(params): Parameters<DeleteNoteParams>,
    ) -> Result<Json<DeleteNoteResult>, String> {
        let request = ops::DeleteNote {
            path: params.path,
            expected_revision: params.expected_revision,
            prune_empty_folders: params.prune_empty_folders,
        };
        self.run("vault_delete_note", move |ops, ctx| {
            ops.delete_note(ctx, request)
        })
        .await
    }

    #[tool(
        name = "vault_patch_note",
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
        Parameters(params): Parameters<PatchNoteParams>,
    ) -> Result<Json<EditNoteResult>, String> {
        let request = ops::PatchNote {
            path: params.path,
            operation: params.operation.into(),
            content: params.content,
            heading: params.heading,
            heading_level: params.heading_level,
            include_children: params.include_children,
            expected_revision: params.expected_revision,
        };
        self.run("vault_patch_note", move |ops, ctx| {
            ops.patch_note(ctx, request)
        })
        .await
    }

    #[tool(
        name = "vault_replace_in_note",
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
        Parameters(params): Parameters<ReplaceInNoteParams>,
    ) -> Result<Json<EditNoteResult>, String> {
        let request = ops::ReplaceInNote {
            path: params.path,
            old_text: params.old_text,
            new_text: params.new_text,
            replace_all_occurrences: params.replace_all_occurrences,
            expected_revision: params.expected_revision,
        };
        self.run("vault_replace_in_note", move |ops, ctx| {
            ops.replace_in_note(ctx, request)
        })
        .await
    }

    #[tool(
        name = "vault_insert_at_anchor",
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
        Parameters(params): Parameters<InsertAtAnchorParams>,
    ) -> Result<Json<EditNoteResult>, String> {
        let request = ops::InsertAtAnchor {
            path: params.path,
            anchor: params.anchor,
            position: params.position.into(),
            content: params.content,
            first_match: params.first_match,
            expected_revision: params.expected_revision,
        };
        self.run("vault_insert_at_anchor", move |ops, ctx| {
            ops.insert_at_anchor(ctx, request)
        })
        .await
    }

    #[tool(
        name = "vault_replace_span",
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
        Parameters(params): Parameters<ReplaceSpanParams>,
    ) -> Result<Json<EditNoteResult>, String> {
        let request = ops::EditSpan {
            path: params.path,
            start_anchor: params.start_anchor,
            end_anchor: params.end_anchor,
            content: Some(params.content),
            first_match: params.first_match,
            expected_revision: params.expected_revision,
        };
        self.run("vault_replace_span", move |ops, ctx| {
            ops.edit_span(ctx, request)
        })
        .await
    }

    #[tool(
        name = "vault_delete_span",
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
        Parameters(params): Parameters<DeleteSpanParams>,
    ) -> Result<Json<EditNoteResult>, String> {
        let request = ops::EditSpan {
            path: params.path,
            start_anchor: params.start_anchor,
            end_anchor: params.end_anchor,
            content: None,
            first_match: params.first_match,
            expected_revision: params.expected_revision,
        };
        self.run("vault_delete_span", move |ops, ctx| {
            ops.edit_span(ctx, request)
        })
        .await
    }

    #[tool(
        name = "vault_update_properties",
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
        Parameters(params): Parameters<UpdatePropertiesParams>,
    ) -> Result<Json<UpdatePropertiesResult>, String> {
        let request = ops::UpdateProperties {
            path: params.path,
            properties: params.properties,
            replace: params.replace,
            expected_revision: params.expected_revision,
        };
        self.run("vault_update_properties", move |ops, ctx| {
            ops.update_properties(ctx, request)
        })
        .await
    }
    #[tool(
        name = "vault_search",
        description = "Search the vault's notes by words and by meaning. Use to find notes about a topic when you do not know their paths, even when they use other words than the query. \
Keyword ranking is BM25 over title, aliases, headings, properties and body; `query` takes words (every word must occur; when no note has them all, notes with any of them are returned and `matched_any_word` is true), \"exact phrases\", prefix*, -excluded words and `a OR b`; any text is safe. \
With an embedding model installed, `mode` \"auto\" (default) fuses keyword and semantic (vector) results (\"hybrid\"), optionally reranked; \"keyword\", \"semantic\" and \"hybrid\" force one. While the model loads or vectors are computed, `auto` answers keyword-only with a `notice` saying so; without a model search is keyword-only (`search_mode` says so), and a forced `semantic` or `hybrid` gets a `notice` naming why. \
Narrow with `filters` {folder, tags, properties, type, created, modified (each date filter: before/on/after, YYYY-MM-DD)}; they apply to every mode. An empty query lists the notes matching the filters, newest first. Obsidian's excluded files are left out. \
Returns `results` [{path, title, score, snippet, bytes, modified, tags}], `search_mode` (\"keyword\", \"semantic\" or \"hybrid\": what actually answered), `reranked`, `notice`, and `next_cursor` when more follow. \
Errors: invalid_argument (bad date, limit or cursor), not_found (folder), invalid_path.",
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
        Parameters(params): Parameters<SearchParams>,
    ) -> Result<Json<SearchResult>, String> {
        let filters = params.filters.unwrap_or_default();
        let request = ops::SearchNotes {
            query: params.query,
            filters: ops::SearchFilters {
                folder: filters.folder,
                tags: filters.tags.unwrap_or_default(),
                properties: filters.properties.unwrap_or_default(),
                note_type: filters.note_type,
                created: filters.created.map(Into::into),
                modified: filters.modified.map(Into::into),
            },
            limit: params.limit,
            cursor: params.cursor,
            mode: match params.mode {
                SearchModeParam::Auto => ops::SearchMode::Auto,
                SearchModeParam::Keyword => ops::SearchMode::Keyword,
                SearchModeParam::Semantic => ops::SearchMode::Semantic,
                SearchModeParam::Hybrid => ops::SearchMode::Hybrid,
            },
        };
        self.run("vault_search", move |ops, ctx| ops.search(ctx, request))
            .await
    }

    #[tool(
        name = "vault_grep",
        description = "Find the lines of notes that contain a text or match a regular expression. Use for exact strings (names, IDs, code, URLs) where ranked search is too fuzzy. \
Case is ignored unless `case_sensitive`; `regex: true` reads `pattern` as a Rust regular expression; `folder` limits the scope. Obsidian's excluded files are skipped. \
Returns `hits` [{path, line (1-based), column, text}] in path order, `truncated` when more than `limit` lines matched, and `timed_out` with the hits found so far when the time budget (`timeout_ms`, default 3000) ran out. \
Errors: invalid_argument (empty or invalid pattern), not_found (folder), invalid_path.",
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
        Parameters(params): Parameters<GrepParams>,
    ) -> Result<Json<GrepResult>, String> {
        let request = ops::Grep {
            pattern: params.pattern,
            regex: params.regex,
            case_sensitive: params.case_sensitive,
            folder: params.folder,
            limit: params.limit,
            timeout_ms: params.timeout_ms,
        };
        self.run("vault_grep", move |ops, ctx| ops.grep(ctx, request))
            .await
    }

    #[tool(
        name = "vault_search_by_tag",
        description = "List the notes that carry a tag (in properties or inline), sorted by path. Use when the user names a tag. \
The tag ignores case and a leading '#'; nested tags match too (\"project\" finds \"project/active\") unless `exact`. Obsidian's excluded files are left out. \
Returns `notes` [{path, title, bytes, modified, tags}] and `next_cursor` when more follow. Errors: invalid_argument (empty tag, bad cursor), not_found (folder).",
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
        Parameters(params): Parameters<SearchByTagParams>,
    ) -> Result<Json<ListNotesResult>, String> {
        let request = ops::SearchByTag {
            tag: params.tag,
            exact: params.exact,
            folder: params.folder,
            limit: params.limit,
            cursor: params.cursor,
        };
        self.run("vault_search_by_tag", move |ops, ctx| {
            ops.search_by_tag(ctx, request)
        })
        .await
    }

    #[tool(
        name = "vault_list_tags",
        description = "List the tags used in the vault with the number of notes carrying each, most used first. Use to learn the vault's vocabulary before searching by tag. \
Spellings differing only in case are merged (shown in their most common spelling); nested tags are listed as written (\"project/active\"). \
Returns `tags` [{tag, count}] and `next_cursor` when more follow. Errors: not_found (folder), invalid_argument (bad cursor).",
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
        Parameters(params): Parameters<ListTagsParams>,
    ) -> Result<Json<ListTagsResult>, String> {
        let request = ops::CountList {
            folder: params.folder,
            limit: params.limit,
            cursor: params.cursor,
        };
        self.run("vault_list_tags", move |ops, ctx| {
            ops.list_tags(ctx, request)
        })
        .await
    }

    #[tool(
        name = "vault_search_by_folder",
        description = "List the notes in a folder (and its subfolders unless `recursive: false`), sorted by path. Use to browse one area of the vault. \
Returns `notes` [{path, title, bytes, modified, tags}] and `next_cursor` when more follow. Errors: not_found (folder), invalid_path, invalid_argument (bad cursor).",
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
        Parameters(params): Parameters<SearchByFolderParams>,
    ) -> Result<Json<ListNotesResult>, String> {
        let request = ops::SearchByFolder {
            folder: params.folder,
            recursive: params.recursive,
            limit: params.limit,
            cursor: params.cursor,
        };
        self.run("vault_search_by_folder", move |ops, ctx| {
            ops.search_by_folder(ctx, request)
        })
        .await
    }

    #[tool(
        name = "vault_recent_notes",
        description = "List the most recently modified (or, with `sort_by: \"created\"`, created) notes, newest first. Use to see what the user worked on lately. \
Creation time is the `created` property when it holds a date, else the file's creation time. Obsidian's excluded files are left out. \
Returns `notes` [{path, title, bytes, modified, tags}] and `next_cursor` when more follow. Errors: not_found (folder), invalid_argument (bad cursor).",
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
        Parameters(params): Parameters<RecentNotesParams>,
    ) -> Result<Json<ListNotesResult>, String> {
        let request = ops::RecentNotes {
            folder: params.folder,
            sort_by: match params.sort_by {
                RecentSortParam::Modified => ops::RecentSort::Modified,
                RecentSortParam::Created => ops::RecentSort::Created,
            },
            limit: params.limit,
            cursor: params.cursor,
        };
        self.run("vault_recent_notes", move |ops, ctx| {
            ops.recent_notes(ctx, request)
        })
        .await
    }

    #[tool(
        name = "vault_list_property_keys",
        description = "List the property (frontmatter) keys used in the vault with the number of notes having each, most used first. Use to discover how notes are structured before filtering by property. \
Keys differing only in case are merged. Returns `keys` [{key, count}] and `next_cursor` when more follow. Errors: not_found (folder), invalid_argument (bad cursor).",
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
        Parameters(params): Parameters<ListPropertyKeysParams>,
    ) -> Result<Json<ListPropertyKeysResult>, String> {
        let request = ops::CountList {
            folder: params.folder,
            limit: params.limit,
            cursor: params.cursor,
        };
        self.run("vault_list_property_keys", move |ops, ctx| {
            ops.list_property_keys(ctx, request)
        })
        .await
    }

    #[tool(
        name = "vault_list_property_values",
        description = "List the values one property takes across the vault with the number of notes having each, most used first. Use before vault_search_by_property to see which values exist. \
List values are counted one by one; values differing only in case are merged. Returns `values` [{value, count}] and `next_cursor` when more follow. \
Errors: invalid_argument (empty key, bad cursor), not_found (folder).",
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
        Parameters(params): Parameters<ListPropertyValuesParams>,
    ) -> Result<Json<ListPropertyValuesResult>, String> {
        let request = ops::ListPropertyValues {
            key: params.key,
            folder: params.folder,
            limit: params.limit,
            cursor: params.cursor,
        };
        self.run("vault_list_property_values", move |ops, ctx| {
            ops.list_property_values(ctx, request)
        })
        .await
    }

    #[tool(
        name = "vault_search_by_property",
        description = "List the notes whose property `key` has `value`, sorted by path. Use for structured questions (status: done, type: meeting, rating: 5). \
The key ignores case; text values ignore case; a number also matches the same number written as text; a list property matches when any item equals the value; \
a list `value` requires every item; a null or omitted `value` finds notes that have the key at all. Obsidian's excluded files are left out. \
Returns `notes` [{path, title, bytes, modified, tags}] and `next_cursor` when more follow. Errors: invalid_argument (empty key, object value, bad cursor), not_found (folder).",
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
        Parameters(params): Parameters<SearchByPropertyParams>,
    ) -> Result<Json<ListNotesResult>, String> {
        let request = ops::SearchByProperty {
            key: params.key,
            value: params.value,
            folder: params.folder,
            limit: params.limit,
            cursor: params.cursor,
        };
        self.run("vault_search_by_property", move |ops, ctx| {
            ops.search_by_property(ctx, request)
        })
        .await
    }
    #[tool(
        name = "vault_rebuild_index",
        description = "Bring the search index in line with the vault now (the owner only). Rarely needed: the index follows every change by itself; use it after restoring a backup or when search results look stale. \
`force: true` parses every note again. Send a progress token to receive progress notifications while it runs. \
Returns counts of notes parsed, removed and unchanged. Errors: path_forbidden (not the owner), internal.",
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
        Parameters(params): Parameters<RebuildIndexParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<RebuildIndexResult>, String> {
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
        let force = params.force;
        self.run("vault_rebuild_index", move |ops, ctx| {
            ops.rebuild_index(ctx, force, progress)
        })
        .await
    }
}

fn read_mode(params: &ReadNoteParams) -> Result<ops::ReadMode, OpsError> {
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
    Ok(if params.properties_only {
        ops::ReadMode::PropertiesOnly
    } else if params.outline {
        ops::ReadMode::Outline
    } else if let Some(heading) = &params.heading {
        ops::ReadMode::Heading {
            heading: heading.clone(),
            level: params.heading_level,
        }
    } else {
        ops::ReadMode::Full {
            start_line: params.start_line,
            limit: params.limit,
        }
    })
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for QuireServer {
    #[allow(deprecated)] // enable_logging: see logging.rs for why logging stays.
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_resources()
                .enable_resources_subscribe()
                .enable_resources_list_changed()
                .enable_prompts()
                .enable_logging()
                .build(),
        )
        .with_server_info(Implementation::new("quire", env!("CARGO_PKG_VERSION")))
        .with_instructions(self.instructions.to_string())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let tool = request.name.to_string();
        let principal = principal_of(&context)?;
        let logged_path = request
            .arguments
            .as_ref()
            .and_then(|args| args.get("path").or_else(|| args.get("folder")))
            .and_then(|value| value.as_str())
            .unwrap_or_default()
            .to_string();
        let identity = principal.name().to_string();
        let offered = self
            .tool_router
            .get(&tool)
            .is_some_and(|t| self.offers(&principal, t));
        if !offered {
            if self.tool_router.has_route(&tool) {
                // Withheld from this caller by the ACL: a refused attempt to change the vault.
                let ctx = Context::new(principal.clone(), tool.clone());
                self.shared.ops.audit_denied(&ctx, &logged_path);
            }
            // A tool result rather than a protocol error, so a model reads the list and corrects
            // itself; tools removed by configuration or withheld from this identity are unknown
            // in exactly the same way.
            let known: Vec<String> = self
                .tools_for(&principal)
                .into_iter()
                .map(|t| t.name.to_string())
                .collect();
            let text = format!(
                "invalid_argument: there is no tool named {tool:?} on this server. The tools are: {}.",
                known.join(", ")
            );
            return Ok(rmcp::model::CallToolResult::error(vec![ContentBlock::text(text)]).into());
        }
        let log_context = context.clone();
        let tool_context = ToolCallContext::new(self, request, context);
        let response = PRINCIPAL
            .scope(principal, self.tool_router.call(tool_context))
            .await?;
        let response = rewrite_argument_error(&tool, response);
        let outcome = match &response {
            CallToolResponse::Complete(result) if result.is_error == Some(true) => result
                .content
                .first()
                .and_then(|block| block.as_text())
                .and_then(|text| text.text.split(':').next().map(str::to_string))
                .unwrap_or_else(|| "error".into()),
            _ => "ok".into(),
        };
        // Paths and codes only: never note bodies or tokens.
        tracing::info!(tool = %tool, identity = %identity, path = %logged_path, outcome = %outcome, "tool call");
        if let CallToolResponse::Complete(result) = &response
            && result.is_error == Some(true)
        {
            let text = result
                .content
                .first()
                .and_then(|block| block.as_text())
                .map(|text| text.text.clone())
                .unwrap_or_default();
            self.log_level
                .tool_failed(&log_context.peer, &tool, &text)
                .await;
        }
        Ok(response)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListToolsResult, ErrorData> {
        let principal = principal_of(&context)?;
        let mut result = rmcp::model::ListToolsResult::with_all_items(self.tools_for(&principal));
        let supports_cache_hints = context
            .protocol_version()
            .is_some_and(|version| version >= rmcp::model::ProtocolVersion::V_2026_07_28);
        if supports_cache_hints {
            // The list depends on who asks and on a policy that can reload.
            result.ttl_ms = Some(0);
            result.cache_scope = Some(rmcp::model::CacheScope::Private);
        }
        Ok(result)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let principal = match context.extensions.get::<http::request::Parts>() {
            None => Principal::Owner,
            Some(parts) => match parts.extensions.get::<Principal>() {
                Some(principal) => principal.clone(),
                None => return,
            },
        };
        let ops = Arc::clone(&self.shared.ops);
        let watched = principal.clone();
        let visible = move |path: &str| {
            ops.visibility(&Context::new(watched.clone(), "resources/updated"))
                .shows(path)
        };
        tokio::spawn(resources::forward_changes(
            self.shared.changes.subscribe(),
            Arc::clone(&self.subscriptions),
            context.peer.clone(),
            visible,
        ));
        tokio::spawn(resources::announce_tool_changes(
            self.shared.policy_changes.subscribe(),
            Arc::clone(&self.shared.ops),
            principal,
            context.peer,
        ));
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let principal = principal_of(&context)?;
        let cursor = request.and_then(|r| r.cursor);
        let ops = Arc::clone(&self.shared.ops);
        let listed = tokio::task::spawn_blocking(move || {
            ops.list_notes(
                &Context::new(principal, "resources/list"),
                ops::ListNotes {
                    limit: Some(RESOURCE_PAGE),
                    cursor,
                    ..ops::ListNotes::default()
                },
            )
        })
        .await
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?
        .map_err(|error| resource_error(error, None))?;
        let resources = listed
            .notes
            .into_iter()
            .map(|note| {
                let mut resource = Resource::new(resources::uri_of(&note.path), note.path);
                resource.title = Some(note.title);
                resource.mime_type = Some("text/markdown".into());
                resource.size = Some(note.bytes);
                resource
            })
            .collect();
        let mut result = ListResourcesResult::with_all_items(resources);
        result.next_cursor = listed.next_cursor;
        Ok(result)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let mut template = ResourceTemplate::new(resources::TEMPLATE, "note");
        template.title = Some("Vault note".into());
        template.description =
            Some("A markdown note of the vault, by its vault-relative path.".into());
        template.mime_type = Some("text/markdown".into());
        Ok(ListResourceTemplatesResult::with_all_items(vec![template]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let principal = principal_of(&context)?;
        let uri = request.uri;
        let path = resources::path_of(&uri)?;
        let ops = Arc::clone(&self.shared.ops);
        let read = tokio::task::spawn_blocking(move || {
            ops.read_note(
                &Context::new(principal, "resources/read"),
                ops::ReadNote {
                    path,
                    mode: ops::ReadMode::Full {
                        start_line: None,
                        limit: None,
                    },
                },
            )
        })
        .await
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?
        .map_err(|error| resource_error(error, Some(&uri)))?;
        let contents = ResourceContents::text(read.content.unwrap_or_default(), uri)
            .with_mime_type("text/markdown");
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        principal_of(&context)?;
        // Any URI may be subscribed (the spec lets clients subscribe before a resource exists);
        // only note:// URIs ever produce updates.
        self.subscriptions.add(request.uri);
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscriptions.remove(&request.uri);
        Ok(())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        // Every note URI is accepted, readable or not, existing or not: the acknowledgement must
        // not tell a caller which notes exist where it cannot look. Only note:// URIs ever change.
        let mut accepted = requested.clone();
        if let Some(uris) = accepted.resource_subscriptions.as_mut() {
            uris.retain(|uri| uri.starts_with(resources::SCHEME));
        }
        Some(accepted)
    }

    async fn listen(&self, subscription: SubscriptionContext) -> Result<(), ErrorData> {
        let principal = principal_of(subscription.request_context())?;
        let streams = resources::Listen {
            ops: Arc::clone(&self.shared.ops),
            principal,
            changes: self.shared.changes.subscribe(),
            reloads: self.shared.policy_changes.subscribe(),
            closing: self.shared.closing.clone(),
        };
        resources::listen(&subscription, streams).await;
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(prompts::list()))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let principal = principal_of(&context)?;
        let ops = Arc::clone(&self.shared.ops);
        let name = request.name;
        tokio::task::spawn_blocking(move || {
            prompts::get(&ops, &Context::new(principal, "prompts/get"), &name)
        })
        .await
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?
        .map(Into::into)
    }

    #[allow(deprecated)] // Logging is deprecated after 2025-11-25, which we still serve.
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.log_level.set(request.level);
        Ok(())
    }
}

/// Resource reads are protocol requests, so failures are protocol errors: "not found" has its own
/// code in the spec; everything else is invalid params with our stable code in the message.
/// A missing note's error carries its URI in `data`, as the 2026-07-28 revision asks.
fn resource_error(error: OpsError, uri: Option<&str>) -> ErrorData {
    match &error {
        OpsError::NotFound { .. } => ErrorData::resource_not_found(
            format!("{}: {error}", error.code()),
            uri.map(|uri| serde_json::json!({ "uri": uri })),
        ),
        OpsError::Internal(_) => ErrorData::internal_error(tool_error("resources", &error), None),
        _ => ErrorData::invalid_params(format!("{}: {error}", error.code()), None),
    }
}

/// rmcp reports arguments that do not fit the schema as an `isError` result with its own wording;
/// give it our stable code and a hint, so a model can correct the call.
fn rewrite_argument_error(tool: &str, mut response: CallToolResponse) -> CallToolResponse {
    if let CallToolResponse::Complete(result) = &mut response
        && result.is_error == Some(true)
    {
        for block in result.content.iter_mut() {
            if let Some(text) = block.as_text()
                && let Some(detail) = text.text.strip_prefix(RMCP_ARGUMENT_ERROR)
            {
                *block = ContentBlock::text(format!(
                    "invalid_argument: the arguments do not match {tool}'s input schema:{detail}. Check parameter names and types against tools/list and retry."
                ));
            }
        }
    }
    response
}
