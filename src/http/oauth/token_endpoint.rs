//! The token endpoint: an authorization code (with its PKCE verifier) or a refresh token in, a
//! signed access token and a fresh refresh token out. Codes and refresh tokens are single-use, a
//! replay revokes the grant, and a grant outlives no change of its identity's token.

use std::sync::Arc;

use axum::extract::State;
use axum::extract::rejection::FormRejection;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::{Form, Json};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::authorize::resource_matches;
use super::cimd::is_url_client_id;
use super::reply::{Refusal, blocking, no_store, oauth_error, too_large};
use super::state::{now, random_token};
use super::store::{CodeGrant, GrantInfo, Redeemed, Refreshed};
use super::{ACCESS_SECONDS, AccessClaims, OAuthState, REFRESH_SECONDS};

#[derive(Debug, Deserialize)]
pub(super) struct TokenRequest {
    grant_type: Option<String>,
    code: Option<String>,
    redirect_uri: Option<String>,
    client_id: Option<String>,
    code_verifier: Option<String>,
    refresh_token: Option<String>,
    resource: Option<String>,
}

fn pkce_matches(verifier: &str, challenge: &str) -> bool {
    let valid = (43..=128).contains(&verifier.len())
        && verifier
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'));
    valid && URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes())) == challenge
}

fn bad_grant(description: &str) -> Response {
    oauth_error(StatusCode::BAD_REQUEST, "invalid_grant", description)
}

pub(super) async fn token(
    State(state): State<Arc<OAuthState>>,
    form: Result<Form<TokenRequest>, FormRejection>,
) -> Response {
    let request = match form {
        Ok(Form(request)) => request,
        Err(rejection) if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            return too_large();
        }
        Err(_) => {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "the body must be application/x-www-form-urlencoded token request parameters",
            );
        }
    };
    let client_id = match check_client(&state, &request) {
        Ok(client_id) => client_id,
        Err(refusal) => return refusal.into_response(),
    };
    match request.grant_type.as_deref() {
        Some("authorization_code") => exchange_code(&state, &request, client_id).await,
        Some("refresh_token") => refresh(&state, &request, client_id).await,
        _ => oauth_error(
            StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
            "grant_type must be authorization_code or refresh_token",
        ),
    }
}

/// What every grant type needs: a client id this server accepts, and no resource but ours.
fn check_client(state: &OAuthState, request: &TokenRequest) -> Result<String, Refusal> {
    let Some(client_id) = request.client_id.clone() else {
        return Err(Refusal::new(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "client_id is required",
        ));
    };
    if is_url_client_id(&client_id) && state.documents.is_none() {
        return Err(Refusal::new(
            StatusCode::UNAUTHORIZED,
            "invalid_client",
            "Client ID Metadata Documents are turned off on this server ([oauth] client_id_metadata_documents)",
        ));
    }
    if let Some(resource) = request.resource.as_deref()
        && !resource_matches(state, resource)
    {
        return Err(Refusal::new(
            StatusCode::BAD_REQUEST,
            "invalid_target",
            "resource must be this server's /mcp URL",
        ));
    }
    Ok(client_id)
}

/// `authorization_code`: redeems the code once, then starts the grant it was issued for.
async fn exchange_code(state: &OAuthState, request: &TokenRequest, client_id: String) -> Response {
    let (Some(code), Some(verifier), Some(redirect_uri)) = (
        request.code.clone(),
        request.code_verifier.clone(),
        request.redirect_uri.clone(),
    ) else {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "code, code_verifier and redirect_uri are required",
        );
    };
    let grant = match redeem(state, &code, &client_id).await {
        Ok(grant) => grant,
        Err(response) => return response,
    };
    if let Err(description) = check_code_grant(state, &grant, &client_id, &redirect_uri, &verifier)
    {
        return bad_grant(description);
    }
    let info = GrantInfo {
        grant_id: random_token(),
        client_id,
        identity: grant.identity,
        resource: grant.resource,
        token_fingerprint: grant.token_fingerprint,
    };
    let refresh = random_token();
    let store = Arc::clone(&state.store);
    let (saved_info, saved_refresh) = (info.clone(), refresh.clone());
    let created = blocking(move || {
        let now = now();
        store.create_grant(
            &code,
            &saved_info,
            &saved_refresh,
            now + REFRESH_SECONDS,
            now,
        )
    })
    .await;
    if let Err(response) = created {
        return response;
    }
    issue(state, &info, refresh)
}

/// Takes the code out of the store: it works once, and a second use revokes what the first made.
async fn redeem(state: &OAuthState, code: &str, client_id: &str) -> Result<CodeGrant, Response> {
    let store = Arc::clone(&state.store);
    let taken = code.to_string();
    match blocking(move || store.redeem_code(&taken)).await? {
        Redeemed::Fresh(grant) => Ok(grant),
        Redeemed::Replayed => {
            tracing::warn!(%client_id, "an authorization code was replayed; its grant is revoked");
            Err(bad_grant("the code was already used"))
        }
        Redeemed::Unknown => Err(bad_grant("the code is not valid")),
    }
}

/// Whether a redeemed code may start a grant: not expired, this client and redirect URI, the
/// verifier behind its challenge, and the identity still holding the token it consented with.
fn check_code_grant(
    state: &OAuthState,
    grant: &CodeGrant,
    client_id: &str,
    redirect_uri: &str,
    verifier: &str,
) -> Result<(), &'static str> {
    if grant.expires < now() {
        return Err("the code expired; authorize again");
    }
    if grant.client_id != client_id || grant.redirect_uri != redirect_uri {
        return Err("the code was issued to another client or redirect_uri");
    }
    if !pkce_matches(verifier, &grant.code_challenge) {
        return Err("code_verifier does not match the code_challenge");
    }
    if !state.holds_token(&grant.identity, &grant.token_fingerprint) {
        return Err(
            "the identity's token changed since the consent; authorize again with its current token",
        );
    }
    Ok(())
}

/// `refresh_token`: rotates the refresh token, ending the grant if the old one was spent already
/// or the identity's token changed.
async fn refresh(state: &OAuthState, request: &TokenRequest, client_id: String) -> Response {
    let Some(old) = request.refresh_token.clone() else {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "refresh_token is required",
        );
    };
    let next = random_token();
    let store = Arc::clone(&state.store);
    let saved_next = next.clone();
    let refreshed = blocking(move || {
        let now = now();
        store.rotate_refresh(&old, &client_id, &saved_next, now + REFRESH_SECONDS, now)
    })
    .await;
    match refreshed {
        Ok(Refreshed::Valid(grant))
            if state.holds_token(&grant.identity, &grant.token_fingerprint) =>
        {
            issue(state, &grant, next)
        }
        Ok(Refreshed::Valid(grant)) => end_grant(state, grant).await,
        Ok(Refreshed::Reused) => {
            tracing::warn!("a spent refresh token was presented again; the grant is revoked");
            bad_grant("the refresh token was already used; the grant is revoked, authorize again")
        }
        Ok(Refreshed::Unknown) => bad_grant("the refresh token is not valid"),
        Err(response) => response,
    }
}

/// The identity's token changed (or the identity is gone) since the consent: the grant ends for
/// good, even if the old token came back.
async fn end_grant(state: &OAuthState, grant: GrantInfo) -> Response {
    let store = Arc::clone(&state.store);
    let grant_id = grant.grant_id.clone();
    if let Err(response) = blocking(move || store.revoke_grant(&grant_id)).await {
        return response;
    }
    tracing::info!(client_id = %grant.client_id, identity = %grant.identity, "an OAuth grant ended: its identity's token changed");
    bad_grant(
        "the identity's token changed since this client was authorized; the grant is revoked, authorize again",
    )
}

/// Signs an access token for `grant` and answers it with `refresh_token`.
fn issue(state: &OAuthState, grant: &GrantInfo, refresh_token: String) -> Response {
    let now = now();
    let claims = AccessClaims {
        iss: state.issuer.clone(),
        aud: state.resource.clone(),
        sub: grant.identity.clone(),
        client_id: grant.client_id.clone(),
        gid: grant.grant_id.clone(),
        iat: now,
        exp: now + ACCESS_SECONDS,
        jti: random_token(),
    };
    match state.keys.sign(&claims) {
        Ok(access_token) => no_store(Json(serde_json::json!({
            "access_token": access_token,
            "token_type": "Bearer",
            "expires_in": ACCESS_SECONDS,
            "refresh_token": refresh_token,
            "scope": "vault",
        }))),
        Err(error) => {
            tracing::error!(%error, "an access token could not be signed");
            oauth_error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "server_error",
                "try again later",
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pkce_needs_the_verifier_behind_the_challenge() {
        // The challenge computed independently (Python's hashlib and base64).
        let verifier = "dBjftJeZ4CVP-mJ92K1TpA_qSXOh3HgoYnxWvakgdqg";
        let challenge = "bMZHb7nPzl-RBDZZ0nKKvBLaYsUFuXxImsGYy3MvBXI";
        assert!(pkce_matches(verifier, challenge));
        assert!(!pkce_matches(
            "dBjftJeZ4CVP-mJ92K1TpA_qSXOh3HgoYnxWvakgdqh",
            challenge
        ));
        assert!(!pkce_matches("short", challenge));
    }
}
