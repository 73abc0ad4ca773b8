//! Bearer authentication for `/mcp`: turns a token into a `Principal`, or answers 401.
//!
//! Tokens are compared in constant time. A missing or wrong token is always 401 with a
//! `WWW-Authenticate` header that points at the protected-resource metadata (RFC 9728), never 403.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;

use super::HttpSettings;
use super::identities::IdentityTokens;
use super::oauth::OAuthState;
use crate::acl::Principal;

/// How `/mcp` requests prove who they are.
#[derive(Clone)]
pub enum Auth {
    /// `--no-auth` on loopback: every request acts as the owner.
    Disabled,
    /// The owner's bearer token (no identities configured).
    OwnerToken(String),
    /// Each configured identity's token; the owner token is not accepted.
    Identities(IdentityTokens),
}

impl std::fmt::Debug for Auth {
    // Never print the token itself.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Auth::Disabled => f.write_str("Auth::Disabled"),
            Auth::OwnerToken(_) => f.write_str("Auth::OwnerToken(..)"),
            Auth::Identities(_) => f.write_str("Auth::Identities(..)"),
        }
    }
}

pub struct AuthState {
    auth: Auth,
    pub base_url: String,
    oauth: Option<Arc<OAuthState>>,
}

impl AuthState {
    pub fn new(settings: &HttpSettings) -> AuthState {
        AuthState {
            auth: settings.auth.clone(),
            base_url: settings.base_url(),
            oauth: settings.oauth.clone(),
        }
    }
}

pub fn protected_resource_metadata(base_url: &str, oauth: bool) -> serde_json::Value {
    let mut metadata = serde_json::json!({
        "resource": format!("{base_url}/mcp"),
        "bearer_methods_supported": ["header"],
        "resource_name": "Quire",
    });
    if oauth {
        metadata["authorization_servers"] = serde_json::json!([base_url]);
        metadata["scopes_supported"] = serde_json::json!(["vault"]);
    }
    metadata
}

pub async fn require_bearer(
    State(state): State<Arc<AuthState>>,
    mut request: Request,
    next: Next,
) -> Response {
    let principal = match &state.auth {
        Auth::Disabled => Some(Principal::Owner),
        Auth::OwnerToken(expected) => presented_token(&request)
            .filter(|token| bool::from(token.as_bytes().ct_eq(expected.as_bytes())))
            .map(|_| Principal::Owner),
        Auth::Identities(tokens) => match presented_token(&request) {
            None => None,
            Some(token) => match tokens.identify(token) {
                Some(name) => Some(Principal::Identity {
                    name,
                    client_id: None,
                }),
                None => match &state.oauth {
                    Some(oauth) => {
                        let token = token.to_string();
                        oauth
                            .verify(&token)
                            .await
                            .map(|(name, client_id)| Principal::Identity {
                                name,
                                client_id: Some(client_id),
                            })
                    }
                    None => None,
                },
            },
        },
    };
    match principal {
        Some(principal) => {
            request.extensions_mut().insert(principal);
            next.run(request).await
        }
        None => unauthorized(&state.base_url, presented_token(&request).is_some()),
    }
}

fn presented_token(request: &Request) -> Option<&str> {
    let value = request
        .headers()
        .get(header::AUTHORIZATION)?
        .to_str()
        .ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|token| !token.is_empty())
}

fn unauthorized(base_url: &str, token_was_sent: bool) -> Response {
    let metadata = format!("{base_url}/.well-known/oauth-protected-resource");
    let (challenge, description) = if token_was_sent {
        (
            format!(
                "Bearer resource_metadata=\"{metadata}\", error=\"invalid_token\", error_description=\"the bearer token is not valid\""
            ),
            "the bearer token is not valid; use the token Quire printed at start (kept in its state directory)",
        )
    } else {
        (
            format!("Bearer resource_metadata=\"{metadata}\""),
            "this endpoint needs an Authorization: Bearer <token> header; Quire printed the token at start",
        )
    };
    let mut response = (
        StatusCode::UNAUTHORIZED,
        axum::Json(serde_json::json!({
            "error": if token_was_sent { "invalid_token" } else { "unauthorized" },
            "error_description": description,
        })),
    )
        .into_response();
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}
