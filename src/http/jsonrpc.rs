//! JSON-RPC error answers the HTTP layer gives itself, and the one place where a `/mcp` body that
//! is not a JSON-RPC message gets one.
//!
//! rmcp answers a POST whose body does not deserialize as a JSON-RPC message with HTTP 415 and a
//! text body, the status meant for a wrong `Content-Type`. The Streamable HTTP transport wants an
//! HTTP error (400) whose body may be a JSON-RPC error without an id, and JSON-RPC 2.0 names the
//! codes: -32700 (parse error) when the body is not JSON at all (malformed, or nested deeper than
//! serde_json's 128 levels, which is also what keeps a 10,000-deep body from exhausting the
//! stack), -32600 (invalid request) when it is JSON but not one message. `malformed_bodies` keeps
//! the body's frames as rmcp reads them (clones of the same buffers, not copies) and only when rmcp
//! answers 415 to a request that did say `application/json` parses them again, to tell the two
//! apart; every other answer passes untouched. A wrong `Content-Type` keeps rmcp's 415, which is
//! what HTTP prescribes for it (RFC 9110 §15.5.16) and the MCP transport leaves alone.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// JSON-RPC 2.0: the body is not JSON.
const PARSE_ERROR: i64 = -32700;
/// JSON-RPC 2.0: the body is JSON, but not a request, notification or response.
const INVALID_REQUEST: i64 = -32600;
/// The first of JSON-RPC's implementation-defined server errors; ours means "not now, retry".
pub const SERVER_BUSY: i64 = -32000;

/// An HTTP answer whose body is a JSON-RPC error with a null id: the error belongs to no request
/// the server could read, or (a refused session) to none it will answer.
pub fn error_response(status: StatusCode, code: i64, message: &str) -> Response {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": code, "message": message},
    });
    (status, axum::Json(body)).into_response()
}

/// The middleware, innermost around rmcp's service.
pub async fn malformed_bodies(request: Request, next: Next) -> Response {
    if request.method() != Method::POST || !says_json(&request) {
        return next.run(request).await;
    }
    let frames = Arc::new(Mutex::new(Vec::new()));
    let (parts, body) = request.into_parts();
    let recorded = Recorded {
        inner: body,
        frames: Arc::clone(&frames),
    };
    let response = next
        .run(Request::from_parts(parts, Body::new(recorded)))
        .await;
    if response.status() != StatusCode::UNSUPPORTED_MEDIA_TYPE {
        return response;
    }
    let frames = std::mem::take(&mut *frames.lock().unwrap_or_else(|p| p.into_inner()));
    not_a_message(&frames.concat())
}

/// Whether the request's `Content-Type` is `application/json`, judged as rmcp judges it, so a 415
/// for such a request can only be about its body.
fn says_json(request: &Request) -> bool {
    request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            let essence = value.split_once(';').map_or(value, |(essence, _)| essence);
            essence.trim().eq_ignore_ascii_case("application/json")
        })
}

/// The answer for a body rmcp could not read as a JSON-RPC message. Parsed into a `Value`, not
/// skipped with `IgnoredAny`: skipping has no depth limit, and a body too deep for rmcp's parser
/// is a parse error.
fn not_a_message(body: &[u8]) -> Response {
    match serde_json::from_slice::<serde_json::Value>(body) {
        Err(error) => error_response(
            StatusCode::BAD_REQUEST,
            PARSE_ERROR,
            &format!(
                "Parse error: the request body is not JSON ({error}); send one JSON-RPC message, nested at most 128 levels deep"
            ),
        ),
        Ok(_) => error_response(
            StatusCode::BAD_REQUEST,
            INVALID_REQUEST,
            "Invalid Request: the body is JSON but not one JSON-RPC request, notification or response (batches are not supported)",
        ),
    }
}

/// A request body that keeps a clone of each data frame as it is read.
struct Recorded {
    inner: Body,
    frames: Arc<Mutex<Vec<Bytes>>>,
}

impl http_body::Body for Recorded {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(Some(Ok(frame))) = &polled
            && let Some(data) = frame.data_ref()
        {
            self.frames
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(data.clone());
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        http_body::Body::is_end_stream(&self.inner)
    }

    fn size_hint(&self) -> http_body::SizeHint {
        http_body::Body::size_hint(&self.inner)
    }
}
