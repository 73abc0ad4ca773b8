//! Dynamic client registration (RFC 7591): which redirect URIs Quire will ever send a code to,
//! the metadata a public client may ask for, and the cap on how many registrations are kept.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::extract::rejection::JsonRejection;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use url::Url;

use super::reply::{Refusal, blocking, no_store, oauth_error, too_large};
use super::state::{now, random_token};
use super::store::{Client, Registered};
use super::{
    IN_FLIGHT_CLIENT_SECONDS, MAX_CLIENTS, MAX_FIELD_CHARS, MAX_REDIRECT_URIS, OAuthState,
};

#[derive(Debug, Deserialize)]
pub(super) struct RegistrationRequest {
    redirect_uris: Vec<String>,
    client_name: Option<String>,
    token_endpoint_auth_method: Option<String>,
    grant_types: Option<Vec<String>>,
    response_types: Option<Vec<String>>,
}

/// A redirect URI Quire will send codes to: https anywhere, or http on a loopback address
/// (native apps, RFC 8252). No fragments, no userinfo.
pub(super) fn acceptable_redirect(raw: &str) -> bool {
    let Ok(url) = Url::parse(raw) else {
        return false;
    };
    if url.fragment().is_some() || !url.username().is_empty() || url.password().is_some() {
        return false;
    }
    match url.scheme() {
        "https" => url.host().is_some(),
        "http" => is_loopback(&url),
        _ => false,
    }
}

pub(super) fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(domain)) => domain == "localhost",
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

pub(super) async fn register(
    State(state): State<Arc<OAuthState>>,
    body: Result<Json<RegistrationRequest>, JsonRejection>,
) -> Response {
    let request = match body {
        Ok(Json(request)) => request,
        Err(rejection) if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            return too_large();
        }
        Err(_) => {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_client_metadata",
                "the body must be a JSON client registration with redirect_uris",
            );
        }
    };
    if let Err(refusal) =
        check_redirect_uris(&request.redirect_uris).and_then(|()| check_metadata(&request))
    {
        return refusal.into_response();
    }
    let client = Client {
        client_id: random_token(),
        client_name: request
            .client_name
            .map(|name| name.chars().take(200).collect::<String>()),
        redirect_uris: request.redirect_uris,
        document_host: None,
    };
    let issued_at = now();
    if let Err(response) = save(&state, &client, issued_at).await {
        return response;
    }
    tracing::info!(client_id = %client.client_id, name = ?client.client_name, "OAuth client registered");
    no_store((
        StatusCode::CREATED,
        Json(serde_json::json!({
            "client_id": client.client_id,
            "client_id_issued_at": issued_at,
            "client_name": client.client_name,
            "redirect_uris": client.redirect_uris,
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
        })),
    ))
}

/// Between one and `MAX_REDIRECT_URIS`, each one a code cannot leak through.
fn check_redirect_uris(redirect_uris: &[String]) -> Result<(), Refusal> {
    let invalid = |description: &str| {
        Refusal::new(StatusCode::BAD_REQUEST, "invalid_redirect_uri", description)
    };
    if redirect_uris.is_empty() || redirect_uris.len() > MAX_REDIRECT_URIS {
        return Err(invalid("give between 1 and 10 redirect_uris"));
    }
    if let Some(bad) = redirect_uris
        .iter()
        .find(|uri| uri.len() > MAX_FIELD_CHARS || !acceptable_redirect(uri))
    {
        return Err(invalid(&format!(
            "{bad:?} is not accepted; redirect URIs must be https, or http on localhost/127.0.0.1/[::1], without a fragment"
        )));
    }
    Ok(())
}

/// A public client using the code flow, nothing else.
fn check_metadata(request: &RegistrationRequest) -> Result<(), Refusal> {
    let metadata_error = |description: &str| {
        Refusal::new(
            StatusCode::BAD_REQUEST,
            "invalid_client_metadata",
            description,
        )
    };
    if request
        .token_endpoint_auth_method
        .as_deref()
        .is_some_and(|method| method != "none")
    {
        return Err(metadata_error(
            "only public clients are supported: token_endpoint_auth_method must be \"none\" (PKCE protects the code)",
        ));
    }
    if request.grant_types.as_ref().is_some_and(|types| {
        types
            .iter()
            .any(|t| t != "authorization_code" && t != "refresh_token")
    }) {
        return Err(metadata_error(
            "grant_types may be authorization_code and refresh_token only",
        ));
    }
    if request
        .response_types
        .as_ref()
        .is_some_and(|types| types.iter().any(|t| t != "code"))
    {
        return Err(metadata_error("response_types may be code only"));
    }
    Ok(())
}

/// Stores the registration, unless the table is full of registrations that are in use or may
/// still be: then 503, since only time frees a place.
async fn save(state: &OAuthState, client: &Client, issued_at: i64) -> Result<(), Response> {
    let store = Arc::clone(&state.store);
    let saved = client.clone();
    let registered = blocking(move || {
        store.register(
            &saved,
            issued_at,
            MAX_CLIENTS,
            issued_at - IN_FLIGHT_CLIENT_SECONDS,
        )
    })
    .await?;
    match registered {
        Registered::Saved => Ok(()),
        Registered::Full => {
            tracing::warn!("a client registration was refused: the registration table is full");
            Err(oauth_error(
                StatusCode::SERVICE_UNAVAILABLE,
                "temporarily_unavailable",
                "this server holds as many client registrations as it keeps; registrations nobody completes expire within two hours, so try again later",
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirect_uris_are_accepted_only_when_they_cannot_leak_a_code() {
        for good in [
            "https://claude.ai/api/mcp/auth_callback",
            "http://127.0.0.1:33418/callback",
            "http://localhost/cb",
            "http://[::1]:8080/cb",
        ] {
            assert!(acceptable_redirect(good), "{good}");
        }
        for bad in [
            "http://evil.example/cb",
            "https://a.example/cb#x",
            "https://u:p@a.example/cb",
            "javascript:alert(1)",
            "file:///etc/passwd",
            "//evil.example",
            "",
        ] {
            assert!(!acceptable_redirect(bad), "{bad}");
        }
    }
}
