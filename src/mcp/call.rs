//! One tool call, from the request to the call log: who calls (`Caller`), whether the tool is
//! offered to them, the tool's route, the one `ops` call a tool makes (`run`), and the outcome
//! that comes back with the result and is logged (paths and codes only).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use rmcp::handler::server::common::FromContextPart;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::Json;
use rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use tokio_util::sync::CancellationToken;

use super::error::{self, ToolError};
use super::{QuireServer, principal_of};
use crate::acl::Principal;
use crate::ops::{Context, Ops, OpsError};

/// Who makes a tool call. `call_tool` derives it from the request context and puts it into the
/// request's extensions; a tool takes it as an argument.
#[derive(Debug, Clone)]
pub(super) struct Caller {
    principal: Principal,
    tool: Arc<str>,
    /// Where the call's `ops` context records the change it made, for the answer.
    change: Arc<OnceLock<String>>,
    /// Cancelled by rmcp when the client sends `notifications/cancelled` for this request.
    cancel: CancellationToken,
}

impl Caller {
    fn context(&self) -> Context {
        Context::new(self.principal.clone(), self.tool.as_ref()).sharing_change(self.change.clone())
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
    /// Answers `tools/call`: a tool this caller is not offered is an unknown tool; an offered one
    /// runs with the caller in the request's extensions, and the call is logged with its outcome.
    pub(super) async fn call(
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
        if let super::confirm::Gate::Stop(answer) =
            self.gate(&request, &context, &principal).await?
        {
            tracing::info!(tool = %tool, identity = %identity, path = %logged_path, "tool call stopped for confirmation");
            return Ok(answer);
        }
        let change: Arc<OnceLock<String>> = Arc::default();
        context.extensions.insert(Caller {
            principal,
            tool: tool.as_str().into(),
            change: change.clone(),
            cancel: context.ct.clone(),
        });
        let peer = context.peer.clone();
        let tool_context = ToolCallContext::new(self, request, context);
        let (mut response, failure) = self.call_route(&tool, tool_context).await?;
        if let (Some(change), CallToolResponse::Complete(result)) = (change.get(), &mut response) {
            with_change_id(result, change);
        }
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

    /// Runs one blocking `ops` call for the caller and maps its outcome onto a tool result.
    pub(super) async fn run<Q, T, R>(
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
        let cancelled = Arc::new(AtomicBool::new(false));
        let ctx = caller
            .context()
            .sharing_cancellation(Arc::clone(&cancelled));
        let mut task = tokio::task::spawn_blocking(move || call(&ops, &ctx, request));
        // A blocking thread cannot be stopped from outside: the call sees the flag and stops
        // itself (the ones long enough to matter check it), and its answer goes nowhere.
        let outcome = tokio::select! {
            outcome = &mut task => outcome,
            () = caller.cancel.cancelled() => {
                cancelled.store(true, Ordering::Relaxed);
                task.await
            }
        };
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

/// Adds `change_id` to a call's answer (every tool that writes answers an object), in its
/// structured content and in the text that mirrors it.
fn with_change_id(result: &mut CallToolResult, change: &str) {
    let Some(serde_json::Value::Object(fields)) = &mut result.structured_content else {
        return;
    };
    fields.insert("change_id".into(), change.into());
    let text = serde_json::Value::Object(fields.clone()).to_string();
    result.content = vec![ContentBlock::text(text)];
}
