//! The MCP boundary's one error mapping: an `OpsError` becomes a tool error (an `isError` result
//! whose text starts with the stable code) or, for resource requests, a protocol error.
//!
//! A failed call's code travels back to `call_tool`, which logs the call, inside the call's result;
//! `call_tool` takes it off ([`take_failure`]) before the client sees the result. Internal errors
//! are logged with their cause and a reference number, and the client sees the reference only.

use std::sync::atomic::{AtomicU64, Ordering};

use rmcp::ErrorData;
use rmcp::handler::server::tool::IntoCallToolResult;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock, ErrorCode, MetaObject};
use serde_json::Value;

use crate::ops::OpsError;

/// The wording rmcp puts before serde's when arguments do not fit a tool's parameters; only cut
/// off, never used to recognise the failure (see [`argument_error`]).
const RMCP_ARGUMENT_ERROR: &str = "failed to deserialize parameters:";

/// The `_meta` key a failed call's code rides under from the tool back to `call_tool`: rmcp turns
/// what a tool returns into a `CallToolResponse`, and `_meta` is the part of it that is not the
/// answer. `call_tool` takes it off before the result leaves the server.
const FAILURE_KEY: &str = "quire/failure";

static NEXT_ERROR_REFERENCE: AtomicU64 = AtomicU64::new(1);

/// A failed tool call as the model reads it: a stable code and a message that says what to do next.
#[derive(Debug)]
pub struct ToolError {
    code: &'static str,
    message: String,
}

impl ToolError {
    /// Maps an operation's failure; an internal one is logged here, once, under `tool`.
    pub fn from_ops(tool: &str, error: &OpsError) -> ToolError {
        if let OpsError::Internal(cause) = error {
            let reference = NEXT_ERROR_REFERENCE.fetch_add(1, Ordering::Relaxed);
            tracing::error!(tool, reference, error = %cause, "internal error in a tool call");
            return ToolError {
                code: error.code(),
                message: format!("{error} (reference {reference})"),
            };
        }
        tracing::debug!(tool, code = error.code(), "tool call failed");
        ToolError {
            code: error.code(),
            message: error.to_string(),
        }
    }

    /// A call this server cannot serve as asked (an unknown tool, arguments off the schema).
    /// An error of the adapter's own (confirmation), with its stable code.
    pub fn new(code: &'static str, message: impl Into<String>) -> ToolError {
        ToolError {
            code,
            message: message.into(),
        }
    }

    pub fn invalid_argument(message: impl Into<String>) -> ToolError {
        ToolError {
            code: OpsError::invalid_argument("").code(),
            message: message.into(),
        }
    }

    pub fn code(&self) -> &'static str {
        self.code
    }

    /// The text the client sees: `code: message`.
    pub fn text(&self) -> String {
        format!("{}: {}", self.code, self.message)
    }

    /// The `isError` result as the client reads it.
    pub fn client_result(&self) -> CallToolResult {
        CallToolResult::error(vec![ContentBlock::text(self.text())])
    }
}

impl IntoCallToolResult for ToolError {
    /// The result a tool returns: what the client reads, with the code for [`take_failure`].
    fn into_call_tool_result(self) -> Result<CallToolResponse, ErrorData> {
        let mut result = self.client_result();
        let mut meta = MetaObject::new();
        meta.insert(FAILURE_KEY.into(), Value::from(self.code));
        result.meta = Some(meta);
        Ok(result.into())
    }
}

/// Takes the code of a failed call off its result, leaving the result as the client must see it.
pub fn take_failure(response: &mut CallToolResponse) -> Option<String> {
    let CallToolResponse::Complete(result) = response else {
        return None;
    };
    let meta = result.meta.as_mut()?;
    let code = match meta.remove(FAILURE_KEY)? {
        Value::String(code) => code,
        _ => return None,
    };
    if meta.is_empty() {
        result.meta = None;
    }
    Some(code)
}

/// Resource reads are protocol requests, so failures are protocol errors: "not found" has its own
/// code in the spec; everything else is invalid params with our stable code in the message.
/// A missing note's error carries its URI in `data`, as the 2026-07-28 revision asks.
pub fn resource_error(error: OpsError, uri: Option<&str>) -> ErrorData {
    let text = ToolError::from_ops("resources", &error).text();
    match &error {
        OpsError::NotFound { .. } => {
            ErrorData::resource_not_found(text, uri.map(|uri| serde_json::json!({ "uri": uri })))
        }
        OpsError::Internal(_) | OpsError::IndexUnavailable(_) => {
            ErrorData::internal_error(text, None)
        }
        _ => ErrorData::invalid_params(text, None),
    }
}

/// The tool error for a route's protocol error when it says the arguments do not fit the tool's
/// parameters; any other protocol error stays one.
///
/// rmcp has no type for that failure: its `Parameters` extractor answers an `ErrorData` with
/// `INVALID_PARAMS` and its own wording, which `ToolRouter::call` would then turn into an
/// `isError` text. `call_tool` runs the route itself, so the code tells the failure apart: no tool
/// of ours answers `INVALID_PARAMS` (tools fail with a `ToolError` result), and the wording is only
/// trimmed. The result says what to fix, with our stable code, so a model can correct the call.
pub fn argument_error(tool: &str, error: ErrorData) -> Result<ToolError, ErrorData> {
    if error.code != ErrorCode::INVALID_PARAMS {
        return Err(error);
    }
    let detail = error
        .message
        .strip_prefix(RMCP_ARGUMENT_ERROR)
        .unwrap_or(&error.message)
        .trim_start();
    Ok(ToolError::invalid_argument(format!(
        "the arguments do not match {tool}'s input schema: {detail}. Check parameter names and types against tools/list and retry."
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_code_comes_back_with_the_result_and_goes_no_further() {
        let mut response = ToolError::invalid_argument("no such folder")
            .into_call_tool_result()
            .expect("a tool result");
        assert_eq!(
            take_failure(&mut response).as_deref(),
            Some("invalid_argument")
        );
        let CallToolResponse::Complete(result) = response else {
            panic!("a complete result: {response:?}");
        };
        assert_eq!(result.meta, None);
        assert_eq!(result.is_error, Some(true));
        assert_eq!(
            result,
            ToolError::invalid_argument("no such folder").client_result()
        );
    }

    #[test]
    fn only_an_invalid_params_answer_is_an_argument_error() {
        let argument =
            ErrorData::invalid_params(format!("{RMCP_ARGUMENT_ERROR} missing field `path`"), None);
        let error = argument_error("vault_read_note", argument).expect("a tool error");
        assert_eq!(
            error.text(),
            "invalid_argument: the arguments do not match vault_read_note's input schema: missing field `path`. Check parameter names and types against tools/list and retry."
        );
        let internal = ErrorData::internal_error("the tool call has no caller", None);
        assert!(argument_error("vault_read_note", internal).is_err());
    }
}
