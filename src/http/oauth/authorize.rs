//! The authorization endpoint: the consent page (GET) and the owner's answer to it (POST). The
//! client and its redirect URI are checked before anything else, every failure before the owner's
//! answer is a page, and only that answer redirects, with `iss` (RFC 9207).

use std::sync::Arc;

use axum::Form;
use axum::extract::rejection::FormRejection;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{Redirect, Response};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Deserialize;
use url::Url;

use super::cimd::{CimdError, is_url_client_id};
use super::register::is_loopback;
use super::reply::{blocking, no_store, too_large};
use super::state::{now, random_token};
use super::store::{Client, CodeGrant};
use super::{CODE_SECONDS, MAX_FIELD_CHARS, OAuthState, consent};

#[derive(Debug, Clone, Default, Deserialize)]
pub(super) struct AuthorizeParams {
    pub(super) response_type: Option<String>,
    pub(super) client_id: Option<String>,
    pub(super) redirect_uri: Option<String>,
    pub(super) state: Option<String>,
    pub(super) code_challenge: Option<String>,
    pub(super) code_challenge_method: Option<String>,
    pub(super) resource: Option<String>,
    pub(super) scope: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(super) struct ConsentForm {
    #[serde(flatten)]
    params: AuthorizeParams,
    token: Option<String>,
    decision: Option<String>,
}

/// A request whose client and redirect URI are known good.
struct Checked {
    client: Client,
    redirect_uri: String,
}

enum AuthorizeError {
    /// Shown to the person in the browser; never redirected.
    Page(StatusCode, String),
    /// Sent back to the client's (verified) redirect URI: only the owner's denial on the consent
    /// page, where the URI was shown.
    Redirect(String, &'static str, String),
}

/// Whether `given` names the registered `uri`: exactly, or for loopback http with any port.
fn redirect_matches(registered: &str, given: &str) -> bool {
    if registered == given {
        return true;
    }
    match (Url::parse(registered), Url::parse(given)) {
        (Ok(mut registered), Ok(mut given))
            if registered.scheme() == "http" && is_loopback(&registered) =>
        {
            let _ = registered.set_port(None);
            let _ = given.set_port(None);
            registered == given
        }
        _ => false,
    }
}

async fn check_client(
    state: &Arc<OAuthState>,
    params: &AuthorizeParams,
) -> Result<Checked, AuthorizeError> {
    let page = |message: &str| AuthorizeError::Page(StatusCode::BAD_REQUEST, message.to_string());
    let client_id = params
        .client_id
        .clone()
        .filter(|id| !id.is_empty() && id.len() <= MAX_FIELD_CHARS)
        .ok_or_else(|| page("The request has no client_id. Start again from your MCP client."))?;
    let store = Arc::clone(&state.store);
    let client = if is_url_client_id(&client_id) {
        let fetched = match &state.documents {
            Some(documents) => documents.client(&client_id).await,
            None => Err(CimdError::Disabled),
        };
        match fetched {
            Ok(client) => client,
            Err(error) => {
                tracing::warn!(%client_id, %error, "a Client ID Metadata Document was refused");
                return Err(page(&error.to_string()));
            }
        }
    } else {
        match tokio::task::spawn_blocking(move || store.client(&client_id)).await {
            Ok(Ok(Some(client))) => client,
            Ok(Ok(None)) => {
                return Err(page(
                    "This client is not registered with Quire (or its registration expired). Start again from your MCP client.",
                ));
            }
            _ => {
                return Err(AuthorizeError::Page(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "Quire could not read its OAuth database; see the server log.".into(),
                ));
            }
        }
    };
    let redirect_uri = params.redirect_uri.clone().ok_or_else(|| {
        page("The request has no redirect_uri. Start again from your MCP client.")
    })?;
    if !client
        .redirect_uris
        .iter()
        .any(|registered| redirect_matches(registered, &redirect_uri))
    {
        return Err(page(
            "The redirect_uri is not one this client registered, so Quire will not send anything there.",
        ));
    }
    Ok(Checked {
        client,
        redirect_uri,
    })
}

/// Checks everything after the client: PKCE, response type, resource. A failure is a page, not
/// an error redirect: it comes before the owner has seen the redirect URI (the request is
/// malformed or was made by hand), and redirecting it would make Quire an open redirector for
/// any URI someone registered.
fn check_request(
    state: &OAuthState,
    params: &AuthorizeParams,
) -> Result<(String, String), AuthorizeError> {
    let page = |error: &str, description: &str| {
        AuthorizeError::Page(
            StatusCode::BAD_REQUEST,
            format!(
                "The client's request cannot be served ({error}: {description}), so nothing was sent back to it. Start again from your MCP client; if this repeats, tell its developer."
            ),
        )
    };
    if params.response_type.as_deref() != Some("code") {
        return Err(page(
            "unsupported_response_type",
            "only response_type=code is supported",
        ));
    }
    if params.code_challenge_method.as_deref() != Some("S256") {
        return Err(page(
            "invalid_request",
            "PKCE is required, with code_challenge_method=S256",
        ));
    }
    let challenge = params
        .code_challenge
        .clone()
        .filter(|c| c.len() == 43 && URL_SAFE_NO_PAD.decode(c).is_ok())
        .ok_or_else(|| {
            page(
                "invalid_request",
                "code_challenge must be a base64url SHA-256",
            )
        })?;
    let resource = match params.resource.as_deref() {
        None => state.resource.clone(),
        Some(resource) if resource_matches(state, resource) => state.resource.clone(),
        Some(_) => {
            return Err(page(
                "invalid_target",
                "resource must be this server's /mcp URL",
            ));
        }
    };
    Ok((challenge, resource))
}

pub(super) fn resource_matches(state: &OAuthState, resource: &str) -> bool {
    let resource = resource.trim_end_matches('/');
    resource == state.resource || resource == state.issuer
}

fn error_response(
    state: &OAuthState,
    error: AuthorizeError,
    client_state: Option<&str>,
) -> Response {
    match error {
        AuthorizeError::Page(status, message) => consent::error_page(status, &message),
        AuthorizeError::Redirect(uri, description, code) => {
            let mut pairs: Vec<(&str, &str)> = vec![
                ("error", &code),
                ("error_description", description),
                ("iss", &state.issuer),
            ];
            if let Some(client_state) = client_state {
                pairs.push(("state", client_state));
            }
            redirect_with(&uri, &pairs)
        }
    }
}

fn redirect_with(uri: &str, pairs: &[(&str, &str)]) -> Response {
    match Url::parse(uri) {
        Ok(mut url) => {
            url.query_pairs_mut().extend_pairs(pairs);
            no_store(Redirect::to(url.as_str()))
        }
        Err(_) => consent::error_page(StatusCode::BAD_REQUEST, "The redirect_uri is not a URL."),
    }
}

pub(super) async fn authorize_page(
    State(state): State<Arc<OAuthState>>,
    query: Result<Query<AuthorizeParams>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let Ok(Query(params)) = query else {
        return consent::error_page(
            StatusCode::BAD_REQUEST,
            "The authorization request is malformed.",
        );
    };
    let checked = match check_client(&state, &params).await {
        Ok(checked) => checked,
        Err(error) => return error_response(&state, error, params.state.as_deref()),
    };
    if let Err(error) = check_request(&state, &params) {
        return error_response(&state, error, params.state.as_deref());
    }
    consent::form(StatusCode::OK, &checked.client, &params, None)
}

pub(super) async fn authorize_submit(
    State(state): State<Arc<OAuthState>>,
    form: Result<Form<ConsentForm>, FormRejection>,
) -> Response {
    let form = match form {
        Ok(Form(form)) => form,
        Err(rejection) if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            return too_large();
        }
        Err(_) => {
            return consent::error_page(StatusCode::BAD_REQUEST, "The consent form is malformed.");
        }
    };
    let params = form.params;
    let client_state = params.state.clone();
    let checked = match check_client(&state, &params).await {
        Ok(checked) => checked,
        Err(error) => return error_response(&state, error, client_state.as_deref()),
    };
    let (challenge, resource) = match check_request(&state, &params) {
        Ok(ok) => ok,
        Err(error) => return error_response(&state, error, client_state.as_deref()),
    };
    if form.decision.as_deref() != Some("allow") {
        let error = AuthorizeError::Redirect(
            checked.redirect_uri,
            "the owner declined",
            "access_denied".into(),
        );
        return error_response(&state, error, client_state.as_deref());
    }
    let identity = form
        .token
        .as_deref()
        .map(str::trim)
        .and_then(|token| state.identities.identify(token));
    let Some(identity) = identity else {
        tracing::warn!(client_id = %checked.client.client_id, "OAuth consent with a wrong identity token");
        return consent::form(
            StatusCode::UNAUTHORIZED,
            &checked.client,
            &params,
            Some(
                "That token does not belong to any identity. Paste the token of the identity this client should act as.",
            ),
        );
    };
    let code = random_token();
    let token_fingerprint =
        state.token_fingerprint(&identity, form.token.as_deref().unwrap_or_default().trim());
    let grant = CodeGrant {
        client_id: checked.client.client_id.clone(),
        identity: identity.clone(),
        token_fingerprint,
        redirect_uri: checked.redirect_uri.clone(),
        code_challenge: challenge,
        resource,
        expires: now() + CODE_SECONDS,
    };
    let store = Arc::clone(&state.store);
    let saved_code = code.clone();
    if let Err(response) = blocking(move || store.save_code(&saved_code, &grant)).await {
        return response;
    }
    tracing::info!(client_id = %checked.client.client_id, identity = %identity, "OAuth grant approved");
    let mut pairs: Vec<(&str, &str)> = vec![("code", &code), ("iss", &state.issuer)];
    if let Some(client_state) = client_state.as_deref() {
        pairs.push(("state", client_state));
    }
    redirect_with(&checked.redirect_uri, &pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirect_matching_is_exact_except_for_loopback_ports() {
        assert!(redirect_matches(
            "https://a.example/cb",
            "https://a.example/cb"
        ));
        assert!(!redirect_matches(
            "https://a.example/cb",
            "https://a.example/cb/"
        ));
        assert!(!redirect_matches(
            "https://a.example/cb",
            "https://a.example:8443/cb"
        ));
        assert!(!redirect_matches(
            "https://a.example/cb",
            "https://a.example/cb?x=1"
        ));
        assert!(redirect_matches(
            "http://127.0.0.1/cb",
            "http://127.0.0.1:5555/cb"
        ));
        assert!(!redirect_matches(
            "http://127.0.0.1/cb",
            "http://127.0.0.1:5555/other"
        ));
        assert!(!redirect_matches(
            "http://127.0.0.1/cb",
            "http://localhost:5555/cb"
        ));
    }
}
