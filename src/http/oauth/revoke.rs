//! Token revocation (RFC 7009): an access token or a refresh token ends its whole grant, and an
//! unknown token is answered like a known one, so the endpoint tells nobody which tokens exist.

use std::sync::Arc;

use axum::Form;
use axum::extract::State;
use axum::extract::rejection::FormRejection;
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;

use super::OAuthState;
use super::reply::{blocking, no_store, oauth_error};

#[derive(Debug, Deserialize)]
pub(super) struct RevokeRequest {
    token: Option<String>,
}

pub(super) async fn revoke(
    State(state): State<Arc<OAuthState>>,
    form: Result<Form<RevokeRequest>, FormRejection>,
) -> Response {
    let Some(token) = form.ok().and_then(|Form(request)| request.token) else {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "token is required",
        );
    };
    let claims = state
        .keys
        .verify(&token, &state.issuer, &state.resource)
        .ok();
    let store = Arc::clone(&state.store);
    let revoked = blocking(move || match claims {
        Some(claims) => store.revoke_grant(&claims.gid),
        None => store.revoke_by_refresh(&token),
    })
    .await;
    match revoked {
        // Unknown tokens are answered like known ones (RFC 7009 section 2.2).
        Ok(()) => no_store(StatusCode::OK),
        Err(response) => response,
    }
}
