//! The MCP adapter on top of `ops`, through rmcp: the server, its `ServerHandler` and `run`, the one
//! way a tool reaches an operation.
//!
//! Tools live by area in `tools/`, each area with its own router and wire types. A tool takes its
//! typed parameters and its `Caller`, converts the parameters into one `ops` request and hands
//! both to `run`, which runs the operation on a blocking thread and maps the outcome (`error.rs`).
//! This is the only module that knows rmcp.

mod completions;
mod error;
mod instructions;
mod logging;
mod prompts;
mod resources;
mod tools;

use std::collections::HashSet;
use std::sync::Arc;

use rmcp::handler::server::common::FromContextPart;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::Json;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult,
    GetPromptRequestParams, GetPromptResponse, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate, ServerCapabilities, ServerConfig, SubscribeRequestParams,
    SubscriptionFilter, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt, tool_handler};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use crate::acl::Principal;
use crate::index::VaultChange;
use crate::ops::{self, Context, Ops, OpsError};
use error::{ToolError, resource_error};
use instructions::Instructions;
use resources::Subscriptions;
pub use tools::ToolGroup;

/// Page size of `resources/list`.
const RESOURCE_PAGE: u32 = 200;

/// Which tools a deployment offers.
#[derive(Debug, Clone)]
pub struct Features {
    pub read_only: bool,
    pub disabled_tools: Vec<String>,
    /// The tool groups served (`[tools] groups`).
    pub groups: Vec<ToolGroup>,
}

impl Default for Features {
    fn default() -> Self {
        Features {
            read_only: false,
            disabled_tools: Vec::new(),
            groups: ToolGroup::ALL.to_vec(),
        }
    }
}

/// The tool names a configuration may mention, for validating `disabled_tools` at startup.
pub fn tool_names() -> Vec<String> {
    tools::router(&ToolGroup::ALL)
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
    /// What `tools/list` shows a caller who may write, and one who may only read: descriptions
    /// never mention a tool the list leaves out.
    listed: tools::Listings,
}

impl Shared {
    /// Computes the shared parts once; call [`Shared::follow_changes`] to keep them current.
    pub fn new(
        ops: Arc<Ops>,
        changes: broadcast::Sender<VaultChange>,
        features: Features,
        policy_changes: broadcast::Sender<()>,
    ) -> Shared {
        let tools = QuireServer::offered_tools(&features);
        let listed = tools::Listings::new(&tools);
        let instructions = Arc::new(Instructions::new(&ops, listed.offered_names()));
        Shared {
            ops,
            changes,
            features,
            policy_changes,
            instructions,
            closing: CancellationToken::new(),
            tools,
            listed,
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
    /// Cancelled once the last clone of this server is dropped, which rmcp does when the session
    /// ends (closed, timed out, evicted): the tasks `on_initialized` starts wait on the vault's
    /// broadcasts, which may stay quiet for days, so without it each ended session left them
    /// behind, holding about 12 KiB apiece (issue 47, F3).
    ended: CancellationToken,
    _end_when_dropped: Arc<tokio_util::sync::DropGuard>,
}

/// Who makes a tool call. `call_tool` derives it from the request context and puts it into the
/// request's extensions; a tool takes it as an argument.
#[derive(Debug, Clone)]
pub(crate) struct Caller {
    principal: Principal,
    tool: Arc<str>,
}

impl Caller {
    fn context(&self) -> Context {
        Context::new(self.principal.clone(), self.tool.as_ref())
    }
}

impl FromContextPart<ToolCallContext<'_, QuireServer>> for Caller {
    fn from_context_part(
        context: &mut ToolCallContext<'_, QuireServer>,
    ) -> Result<Self, ErrorData> {
        context
            .request_context
            .extensions
            .get::<Caller>()
            .cloned()
            .ok_or_else(|| {
                tracing::error!(tool = %context.name, "a tool ran without a caller");
                ErrorData::internal_error("the tool call has no caller", None)
            })
    }
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

    /// The served groups' tools minus those the deployment turns off (read-only, `disabled_tools`).
    fn offered_tools(features: &Features) -> ToolRouter<QuireServer> {
        let mut tool_router = tools::router(&features.groups);
        let removed: HashSet<String> = tool_router
            .list_all()
            .into_iter()
            .filter(|tool| {
                (features.read_only && tools::writes(tool))
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

    /// Runs one blocking `ops` call for the caller and maps its outcome onto a tool result.
    async fn run<Q, T, R>(
        &self,
        caller: Caller,
        request: Q,
        call: impl FnOnce(&Ops, &Context, Q) -> Result<T, OpsError> + Send + 'static,
    ) -> Result<Json<R>, ToolError>
    where
        Q: Send + 'static,
        T: Send + 'static,
        R: From<T>,
    {
        let ops = Arc::clone(&self.shared.ops);
        let ctx = caller.context();
        let outcome = tokio::task::spawn_blocking(move || call(&ops, &ctx, request)).await;
        let error = match outcome {
            Ok(Ok(value)) => return Ok(Json(R::from(value))),
            Ok(Err(error)) => error,
            Err(join_error) => OpsError::Internal(Box::new(join_error)),
        };
        Err(ToolError::from_ops(&caller.tool, &error))
    }

    /// Runs `tool`'s route; returns its response and, when the call failed, the failure's code.
    /// The route is called rather than the router, whose `call` would turn an argument error into
    /// text before it could be told apart (`error::argument_error`).
    async fn call_route(
        &self,
        tool: &str,
        context: ToolCallContext<'_, QuireServer>,
    ) -> Result<(CallToolResponse, Option<String>), ErrorData> {
        let route = self
            .tool_router
            .map
            .get(tool)
            .ok_or_else(|| ErrorData::invalid_params("tool not found", None))?;
        match (route.call)(context).await {
            Ok(mut response) => {
                let failure = error::take_failure(&mut response);
                Ok((response, failure))
            }
            Err(protocol_error) => {
                let error = error::argument_error(tool, protocol_error)?;
                Ok((error.client_result().into(), Some(error.code().to_string())))
            }
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
        mut context: RequestContext<RoleServer>,
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
            let error = ToolError::invalid_argument(format!(
                "there is no tool named {tool:?} on this server. The tools are: {}.",
                known.join(", ")
            ));
            return Ok(error.client_result().into());
        }
        context.extensions.insert(Caller {
            principal,
            tool: tool.as_str().into(),
        });
        let peer = context.peer.clone();
        let tool_context = ToolCallContext::new(self, request, context);
        let (response, failure) = self.call_route(&tool, tool_context).await?;
        let outcome = match (&response, failure.as_deref()) {
            (_, Some(code)) => code,
            // A failure rmcp reported in its own words (none is known today).
            (CallToolResponse::Complete(result), None) if result.is_error == Some(true) => "error",
            _ => "ok",
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
                .map(|text| text.text.as_str())
                .unwrap_or_default();
            self.log_level
                .tool_failed(&peer, &tool, outcome, text)
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
