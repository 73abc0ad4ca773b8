//! The MCP boundary's one error mapping: an `OpsError` becomes a tool error (an `isError` result
//! whose text starts with the stable code) or, for resource requests, a protocol error.
//!
//! The code travels typed (`ToolError::code`) to whoever logs the call; it is never written into
//! text and read back. Internal errors are logged with their cause and a reference number, and the
//! client sees the reference only.

use std::sync::atomic::{AtomicU64, Ordering};

use rmcp::ErrorData;
use rmcp::model::{CallToolResponse, ContentBlock, IntoContents};

use crate::ops::OpsError;

/// What rmcp prefixes to argument-deserialisation failures; rewritten to our `invalid_argument`.
const RMCP_ARGUMENT_ERROR: &str = "failed to deserialize parameters:";

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
}

impl IntoContents for ToolError {
    fn into_contents(self) -> Vec<ContentBlock> {
        vec![ContentBlock::text(self.text())]
    }
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

/// rmcp reports arguments that do not fit the schema as an `isError` result with its own wording
/// (the only text this module reads, since rmcp hands over nothing else); gives it our stable code
/// and a hint, so a model can correct the call. Returns the code when it rewrote the response.
pub fn rewrite_argument_error(tool: &str, response: &mut CallToolResponse) -> Option<&'static str> {
    let CallToolResponse::Complete(result) = response else {
        return None;
    };
    if result.is_error != Some(true) {
        return None;
    }
    let mut rewritten = None;
    for block in result.content.iter_mut() {
        if let Some(text) = block.as_text()
            && let Some(detail) = text.text.strip_prefix(RMCP_ARGUMENT_ERROR)
        {
            let error = ToolError::invalid_argument(format!(
                "the arguments do not match {tool}'s input schema:{detail}. Check parameter names and types against tools/list and retry."
            ));
            rewritten = Some(error.code());
            *block = ContentBlock::text(error.text());
        }
    }
    rewritten
}
