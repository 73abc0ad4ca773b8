//! The MCP adapter on top of `ops`, through rmcp: the session (`QuireServer`) and its
//! `ServerHandler`, which hands each request to the room that owns it: `call.rs` for tool calls,
//! `resources.rs`, `prompts.rs`, `completions.rs`, `logging.rs`; what sessions share is in
//! `shared.rs`.
//!
//! Tools live by area in `tools/`, each area with its own router and wire types. A tool takes its
//! typed parameters and its `Caller`, converts the parameters into one `ops` request and hands
//! both to `run` (`call.rs`), the one way a tool reaches an operation: it runs the operation on a
//! blocking thread and maps the outcome (`error.rs`). This is the only module that knows rmcp.

mod call;
mod completions;
mod confirm;
mod error;
mod instructions;
mod logging;
mod prompts;
mod resources;
mod shared;
mod tools;

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult,
    GetPromptRequestParams, GetPromptResponse, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig,
    SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt, tool_handler};
use tokio_util::sync::CancellationToken;

use crate::acl::Principal;
use crate::ops::Context;
use call::Caller;
use resources::Subscriptions;
pub use tools::ToolGroup;

pub use shared::{Features, Shared};

/// The tool names a configuration may mention, for validating `disabled_tools` at startup.
pub fn tool_names() -> Vec<String> {
    tools::router(&ToolGroup::ALL)
        .list_all()
        .into_iter()
        .map(|tool| tool.name.to_string())
        .collect()
}

/// Why a stdio session ended abnormally.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("the MCP client did not complete initialisation: {0}")]
    Initialize(String),
    #[error("the MCP session failed: {0}")]
    Session(#[from] tokio::task::JoinError),
}

/// Serves one MCP session, as the local user who started Quire, over a byte stream of
/// newline-delimited JSON-RPC until the client closes it: a stdio client's, relayed in-process or
/// from another `quire serve` attached to this one over the owner's socket.
pub async fn serve_stream<R, W>(shared: Arc<Shared>, read: R, write: W) -> Result<(), ServeError>
where
    R: tokio::io::AsyncRead + Send + Unpin + 'static,
    W: tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    let running = QuireServer::new(shared)
        .serve((read, write))
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
    tool_router: Arc<ToolRouter<QuireServer>>,
    /// Cancelled once the last clone of this server is dropped, which rmcp does when the session
    /// ends (closed, timed out, evicted): the tasks `on_initialized` starts wait on the vault's
    /// broadcasts, which may stay quiet for days, so without it each ended session left them
    /// behind, holding about 12 KiB apiece (issue 47, F3).
    ended: CancellationToken,
    _end_when_dropped: Arc<tokio_util::sync::DropGuard>,
}

impl QuireServer {
    /// A handler for one session (or, for a stateless client, one request): nothing here may
    /// cost more than a few allocations.
    pub fn new(shared: Arc<Shared>) -> QuireServer {
        let ended = CancellationToken::new();
        QuireServer {
            instructions: shared.instructions.current(),
            tool_router: shared.tools.clone(),
            shared,
            subscriptions: Arc::new(Subscriptions::default()),
            log_level: Arc::new(logging::ClientLogLevel::default()),
            _end_when_dropped: Arc::new(ended.clone().drop_guard()),
            ended,
        }
    }

    /// What the prompts and completions depend on. The memory layer is served when it is on
    /// (`[memory] enabled`).
    fn prompts_served(&self) -> prompts::Served {
        prompts::Served {
            // The memory prompt goes with the memory tools: the layer on and its group served.
            memory: self.shared.ops.memory_enabled()
                && self.shared.features.groups.contains(&ToolGroup::Memory),
            read_only: self.shared.features.read_only,
        }
    }

    /// Whether `principal` is offered `tool`: tools that change the vault need a write rule.
    fn offers(&self, principal: &Principal, tool: &rmcp::model::Tool) -> bool {
        !tools::writes(tool) || self.shared.ops.policy().may_write_somewhere(principal)
    }

    fn tools_for(&self, principal: &Principal) -> Vec<rmcp::model::Tool> {
        let writer = self.shared.ops.policy().may_write_somewhere(principal);
        self.shared.listed.for_caller(writer)
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
                .enable_completions()
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
        self.call(request, context).await
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
        // Neither task may hold a clone of `self`, or the session's end would never be seen.
        tokio::spawn(resources::forward_changes(
            self.shared.changes.subscribe(),
            Arc::clone(&self.subscriptions),
            context.peer.clone(),
            visible,
            self.ended.clone(),
        ));
        tokio::spawn(resources::announce_tool_changes(
            self.shared.policy_changes.subscribe(),
            Arc::clone(&self.shared.ops),
            principal,
            context.peer,
            self.ended.clone(),
        ));
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let principal = principal_of(&context)?;
        let cursor = request.and_then(|r| r.cursor);
        resources::list(Arc::clone(&self.shared.ops), principal, cursor).await
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(resources::templates())
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let principal = principal_of(&context)?;
        resources::read(Arc::clone(&self.shared.ops), principal, request.uri).await
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
        Ok(ListPromptsResult::with_all_items(prompts::list(
            self.prompts_served(),
        )))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let principal = principal_of(&context)?;
        let ops = Arc::clone(&self.shared.ops);
        // The advice names only the tools this caller is offered.
        let offered: Vec<String> = self
            .tools_for(&principal)
            .into_iter()
            .map(|tool| tool.name.to_string())
            .collect();
        let served = self.prompts_served();
        tokio::task::spawn_blocking(move || {
            prompts::get(
                &ops,
                &Context::new(principal, "prompts/get"),
                &request.name,
                request.arguments.as_ref(),
                &offered,
                served,
            )
        })
        .await
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?
        .map(Into::into)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let principal = principal_of(&context)?;
        let ops = Arc::clone(&self.shared.ops);
        let served = self.prompts_served();
        tokio::task::spawn_blocking(move || {
            completions::complete(
                &ops,
                &Context::new(principal, "completion/complete"),
                &request,
                served,
            )
        })
        .await
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?
        .map_err(|error| ErrorData::internal_error(error.to_string(), None))
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
