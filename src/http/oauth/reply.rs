//! How every OAuth endpoint answers: the RFC 6749 JSON error with `Cache-Control: no-store`,
//! the 413 for an oversized body, and store work run off the executor with its failure logged
//! and answered as `server_error`, never echoed.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::store::StoreError;

pub(super) fn oauth_error(status: StatusCode, error: &str, description: &str) -> Response {
    no_store((
        status,
        Json(serde_json::json!({"error": error, "error_description": description})),
    ))
}

pub(super) fn too_large() -> Response {
    oauth_error(
        StatusCode::PAYLOAD_TOO_LARGE,
        "invalid_request",
        "the request body is larger than OAuth requests ever need (16 KiB)",
    )
}

pub(super) fn no_store(response: impl IntoResponse) -> Response {
    let mut response = response.into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn internal(error: impl std::fmt::Display) -> Response {
    tracing::error!(%error, "the OAuth store failed");
    oauth_error(
        StatusCode::INTERNAL_SERVER_ERROR,
        "server_error",
        "the server could not complete the request; try again later",
    )
}

pub(super) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, Response> {
    match tokio::task::spawn_blocking(work).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(internal(error)),
        Err(error) => Err(internal(error)),
    }
}

/// A refusal checked before any store work, answered in the same shape as `oauth_error`; a value
/// so that checks can return it without carrying a whole response.
pub(super) struct Refusal {
    status: StatusCode,
    error: &'static str,
    description: String,
}

impl Refusal {
    pub(super) fn new(status: StatusCode, error: &'static str, description: &str) -> Refusal {
        Refusal {
            status,
            error,
            description: description.to_string(),
        }
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        oauth_error(self.status, self.error, &self.description)
    }
}
