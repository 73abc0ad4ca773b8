//! The OAuth 2.1 authorization server for `/mcp`, so claude.ai and other remote MCP clients can
//! connect: RFC 8414 metadata, dynamic client registration (RFC 7591), authorization code with
//! PKCE S256 only, a consent page where the owner pastes an identity's token (binding the grant to
//! that identity and so to its ACL), JWT access tokens bound to `public_url` as issuer and `/mcp`
//! as audience (RFC 8707 `resource` checked), `iss` in the authorization response (RFC 9207),
//! refresh tokens rotated on use with reuse revoking the grant, revocation (RFC 7009), rate
//! limits per caller on every endpoint (`limits.rs`), and Client ID Metadata Documents
//! (`cimd.rs`) when enabled.
//!
//! Only the answer to the consent form redirects, and only to a URI registered for the client,
//! byte for byte (ports of loopback URIs excepted, RFC 8252). Anyone can register any https URI,
//! so Quire has no reason to trust one before the owner has seen it on the consent page: every
//! failure before the owner's answer is an HTML page, never a redirect (RFC 9700 §4.11.2), and an
//! authorization link alone cannot send a browser anywhere.

mod cimd;
mod consent;
mod limits;
mod store;
mod tokens;

use std::path::Path;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::extract::rejection::{FormRejection, JsonRejection};
use axum::extract::{DefaultBodyLimit, Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Form, Json, Router};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use url::Url;

use super::identities::IdentityTokens;
use super::token::{TokenError, load_or_create_secret};
pub use cimd::CimdSettings;
use cimd::{CimdError, MetadataFetcher, is_url_client_id};
pub use store::StoreError;
use store::{Client, CodeGrant, GrantInfo, Redeemed, Refreshed, Registered, Store};
pub use tokens::AccessClaims;

const CODE_SECONDS: i64 = 60;
const ACCESS_SECONDS: i64 = 3600;
const REFRESH_SECONDS: i64 = 30 * 24 * 3600;
/// Registrations unused this long, with no live grant, are swept.
const STALE_CLIENT_SECONDS: i64 = 30 * 24 * 3600;
/// Registrations that never produced a grant are swept after this long: a real client goes from
/// registration to consent within minutes, so only abandoned (or hostile) ones are that old.
const NEVER_USED_CLIENT_SECONDS: i64 = 2 * 3600;
/// At most this many registrations are kept, whatever the per-address rate limit let through.
const MAX_CLIENTS: usize = 1000;
/// A never-used registration younger than this is never displaced by a new one: its owner may be
/// on the consent page.
const IN_FLIGHT_CLIENT_SECONDS: i64 = 10 * 60;
/// OAuth requests are small; anything bigger is refused before it is parsed.
const MAX_BODY_BYTES: usize = 16 * 1024;
const MAX_REDIRECT_URIS: usize = 10;
const MAX_FIELD_CHARS: usize = 2048;

#[derive(Debug, thiserror::Error)]
pub enum OAuthError {
    #[error(transparent)]
    Key(#[from] TokenError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the OAuth key is not usable: {0}")]
    Jwt(#[from] jsonwebtoken::errors::Error),
    #[error("cannot set up the HTTPS client for Client ID Metadata Documents: {0}")]
    Fetcher(#[from] reqwest::Error),
}

/// Whether a grant still lets its client in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrantStatus {
    Live,
    Revoked,
    /// The identity's token changed or was removed since the consent (or the grant predates
    /// token binding): the grant no longer works.
    TokenChanged,
}

/// One grant for `quire oauth list`.
#[derive(Debug, Clone)]
pub struct GrantListing {
    pub grant_id: String,
    pub client_id: String,
    pub client_name: Option<String>,
    pub identity: String,
    /// Unix seconds.
    pub created: i64,
    pub status: GrantStatus,
}

/// Everything the OAuth endpoints and the bearer check share.
pub struct OAuthState {
    issuer: String,
    resource: String,
    store: Arc<Store>,
    keys: tokens::Keys,
    identities: IdentityTokens,
    /// Keys the fingerprints of identity tokens that grants are bound to.
    fingerprint_key: Vec<u8>,
    limits: limits::Limits,
    /// Set when Client ID Metadata Documents are accepted (`[oauth] client_id_metadata_documents`).
    documents: Option<MetadataFetcher>,
}

impl std::fmt::Debug for OAuthState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthState")
            .field("issuer", &self.issuer)
            .finish_non_exhaustive()
    }
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

fn random_token() -> String {
    URL_SAFE_NO_PAD.encode(rand::random::<[u8; 32]>())
}

impl OAuthState {
    /// Opens `oauth.db` and the key in `state_dir`. `base_url` is the issuer; `/mcp` under it is
    /// the one resource (audience) tokens are issued for. With `documents`, https URLs are
    /// accepted as client IDs (Client ID Metadata Documents).
    pub fn open(
        state_dir: &Path,
        base_url: &str,
        identities: IdentityTokens,
        documents: Option<CimdSettings>,
    ) -> Result<OAuthState, OAuthError> {
        let (secret, _) = load_or_create_secret(state_dir, "oauth-key")?;
        // One secret, two purposes, separated by hashing with distinct labels.
        let derive = |label: &str| Sha256::digest(format!("{label}:{secret}")).to_vec();
        let store = Store::open(&state_dir.join("oauth.db"), derive("refresh-hash"))?;
        Ok(OAuthState {
            issuer: base_url.to_string(),
            resource: format!("{base_url}/mcp"),
            store: Arc::new(store),
            keys: tokens::Keys::new(&derive("jwt-signing"))?,
            identities,
            fingerprint_key: derive("token-fingerprint"),
            limits: limits::Limits::new(Vec::new()),
            documents: documents.map(MetadataFetcher::new).transpose()?,
        })
    }

    /// Believes `X-Forwarded-For` from these peers (`[http] trusted_proxies`) when rate limits
    /// decide who is calling.
    pub fn with_trusted_proxies(mut self, trusted_proxies: Vec<ipnet::IpNet>) -> OAuthState {
        self.limits = limits::Limits::new(trusted_proxies);
        self
    }

    pub fn metadata(&self) -> serde_json::Value {
        let issuer = &self.issuer;
        serde_json::json!({
            "issuer": issuer,
            "authorization_endpoint": format!("{issuer}/oauth/authorize"),
            "token_endpoint": format!("{issuer}/oauth/token"),
            "registration_endpoint": format!("{issuer}/oauth/register"),
            "revocation_endpoint": format!("{issuer}/oauth/revoke"),
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
            "revocation_endpoint_auth_methods_supported": ["none"],
            "authorization_response_iss_parameter_supported": true,
            "client_id_metadata_document_supported": self.documents.is_some(),
            "scopes_supported": ["vault"],
        })
    }

    /// Checks an access token: signature (HS256 only), issuer, audience, expiry, a live grant,
    /// and that the identity still has the very token the grant was consented with (a changed or
    /// removed token ends every grant made with it, on the next request). Returns (identity,
    /// client id).
    pub async fn verify(self: &Arc<Self>, token: &str) -> Option<(String, String)> {
        let claims = self.keys.verify(token, &self.issuer, &self.resource).ok()?;
        let store = Arc::clone(&self.store);
        let grant = claims.gid.clone();
        let fingerprint = tokio::task::spawn_blocking(move || store.live_grant_fingerprint(&grant))
            .await
            .ok()?
            .ok()??;
        self.holds_token(&claims.sub, &fingerprint)
            .then_some((claims.sub, claims.client_id))
    }

    /// A keyed fingerprint of `identity`'s `token`: what a grant remembers of the token it was
    /// consented with. Keyed (HMAC under the OAuth key), so `oauth.db` alone says nothing about
    /// any token.
    fn token_fingerprint(&self, identity: &str, token: &str) -> Vec<u8> {
        use hmac::{Hmac, Mac};
        let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(&self.fingerprint_key) else {
            return Vec::new();
        };
        mac.update(identity.as_bytes());
        mac.update(&[0]);
        mac.update(token.as_bytes());
        mac.finalize().into_bytes().to_vec()
    }

    /// Whether `identity` is configured and its current token has `fingerprint` (compared in
    /// constant time). An empty fingerprint (a grant from before they were kept) matches nothing.
    fn holds_token(&self, identity: &str, fingerprint: &[u8]) -> bool {
        use subtle::ConstantTimeEq;
        let Some(current) = self.identities.token_of(identity) else {
            return false;
        };
        !fingerprint.is_empty()
            && bool::from(
                self.token_fingerprint(identity, &current)
                    .ct_eq(fingerprint),
            )
    }

    /// Every grant and whether it still works: `quire oauth list`.
    pub fn grants(&self) -> Result<Vec<GrantListing>, StoreError> {
        Ok(self
            .store
            .grants()?
            .into_iter()
            .map(|row| {
                let status = if row.revoked {
                    GrantStatus::Revoked
                } else if self.holds_token(&row.identity, &row.token_fingerprint) {
                    GrantStatus::Live
                } else {
                    GrantStatus::TokenChanged
                };
                GrantListing {
                    grant_id: row.grant_id,
                    client_id: row.client_id,
                    client_name: row.client_name,
                    identity: row.identity,
                    created: row.created,
                    status,
                }
            })
            .collect())
    }

    /// Revokes the live grants of an identity and/or a client: `quire oauth revoke`. A running
    /// server sees it on the next request, as every bearer check reads the grant.
    pub fn revoke_grants(
        &self,
        identity: Option<&str>,
        client_id: Option<&str>,
    ) -> Result<usize, StoreError> {
        self.store.revoke_matching(identity, client_id)
    }

    /// Removes expired codes and tokens, stale registrations, and the rate-limit buckets of
    /// callers gone quiet.
    pub fn sweep(&self) -> Result<usize, StoreError> {
        self.limits.forget_idle();
        let now = now();
        self.store.sweep(
            now,
            now - STALE_CLIENT_SECONDS,
            now - NEVER_USED_CLIENT_SECONDS,
        )
    }

    fn issue(&self, grant: &GrantInfo, refresh_token: String) -> Response {
        let now = now();
        let claims = AccessClaims {
            iss: self.issuer.clone(),
            aud: self.resource.clone(),
            sub: grant.identity.clone(),
            client_id: grant.client_id.clone(),
            gid: grant.grant_id.clone(),
            iat: now,
            exp: now + ACCESS_SECONDS,
            jti: random_token(),
        };
        match self.keys.sign(&claims) {
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
}

/// The OAuth routes; mount next to `/mcp`.
pub fn router(state: Arc<OAuthState>) -> Router {
    let limited = Router::new()
        .route("/oauth/register", post(register))
        .route(
            "/oauth/authorize",
            get(authorize_page).post(authorize_submit),
        )
        .route("/oauth/token", post(token))
        .route("/oauth/revoke", post(revoke))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&state),
            limits::rate_limit,
        ));
    let metadata = state.metadata();
    let metadata_too = metadata.clone();
    limited
        .route(
            "/.well-known/oauth-authorization-server",
            get(move || async move { Json(metadata) }),
        )
        .route(
            "/.well-known/oauth-authorization-server/mcp",
            get(move || async move { Json(metadata_too) }),
        )
        .with_state(state)
}

fn oauth_error(status: StatusCode, error: &str, description: &str) -> Response {
    no_store((
        status,
        Json(serde_json::json!({"error": error, "error_description": description})),
    ))
}

fn too_large() -> Response {
    oauth_error(
        StatusCode::PAYLOAD_TOO_LARGE,
        "invalid_request",
        "the request body is larger than OAuth requests ever need (16 KiB)",
    )
}

fn no_store(response: impl IntoResponse) -> Response {
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

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, Response> {
    match tokio::task::spawn_blocking(work).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(internal(error)),
        Err(error) => Err(internal(error)),
    }
}

// ---- Registration (RFC 7591) ----

#[derive(Debug, Deserialize)]
struct RegistrationRequest {
    redirect_uris: Vec<String>,
    client_name: Option<String>,
    token_endpoint_auth_method: Option<String>,
    grant_types: Option<Vec<String>>,
    response_types: Option<Vec<String>>,
}

/// A redirect URI Quire will send codes to: https anywhere, or http on a loopback address
/// (native apps, RFC 8252). No fragments, no userinfo.
fn acceptable_redirect(raw: &str) -> bool {
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

fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(domain)) => domain == "localhost",
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

async fn register(
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
    let invalid = |description: &str| {
        oauth_error(StatusCode::BAD_REQUEST, "invalid_redirect_uri", description)
    };
    if request.redirect_uris.is_empty() || request.redirect_uris.len() > MAX_REDIRECT_URIS {
        return invalid("give between 1 and 10 redirect_uris");
    }
    if let Some(bad) = request
        .redirect_uris
        .iter()
        .find(|uri| uri.len() > MAX_FIELD_CHARS || !acceptable_redirect(uri))
    {
        return invalid(&format!(
            "{bad:?} is not accepted; redirect URIs must be https, or http on localhost/127.0.0.1/[::1], without a fragment"
        ));
    }
    let metadata_error = |description: &str| {
        oauth_error(
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
        return metadata_error(
            "only public clients are supported: token_endpoint_auth_method must be \"none\" (PKCE protects the code)",
        );
    }
    if request.grant_types.as_ref().is_some_and(|types| {
        types
            .iter()
            .any(|t| t != "authorization_code" && t != "refresh_token")
    }) {
        return metadata_error("grant_types may be authorization_code and refresh_token only");
    }
    if request
        .response_types
        .as_ref()
        .is_some_and(|types| types.iter().any(|t| t != "code"))
    {
        return metadata_error("response_types may be code only");
    }
    let client_name = request
        .client_name
        .map(|name| name.chars().take(200).collect::<String>());
    let client = Client {
        client_id: random_token(),
        client_name,
        redirect_uris: request.redirect_uris,
        document_host: None,
    };
    let issued_at = now();
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
    .await;
    match registered {
        Ok(Registered::Saved) => {}
        Ok(Registered::Full) => {
            tracing::warn!("a client registration was refused: the registration table is full");
            return oauth_error(
                StatusCode::SERVICE_UNAVAILABLE,
                "temporarily_unavailable",
                "this server holds as many client registrations as it keeps; registrations nobody completes expire within two hours, so try again later",
            );
        }
        Err(response) => return response,
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

// ---- Authorization ----

#[derive(Debug, Clone, Default, Deserialize)]
struct AuthorizeParams {
    response_type: Option<String>,
    client_id: Option<String>,
    redirect_uri: Option<String>,
    state: Option<String>,
    code_challenge: Option<String>,
    code_challenge_method: Option<String>,
    resource: Option<String>,
    scope: Option<String>,
}

#[derive(Debug, Deserialize)]
struct ConsentForm {
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

fn resource_matches(state: &OAuthState, resource: &str) -> bool {
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

async fn authorize_page(
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

async fn authorize_submit(
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

// ---- Token endpoint ----

#[derive(Debug, Deserialize)]
struct TokenRequest {
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

async fn token(
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
    let bad_grant =
        |description: &str| oauth_error(StatusCode::BAD_REQUEST, "invalid_grant", description);
    let Some(client_id) = request.client_id.clone() else {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "client_id is required",
        );
    };
    if is_url_client_id(&client_id) && state.documents.is_none() {
        return oauth_error(
            StatusCode::UNAUTHORIZED,
            "invalid_client",
            "Client ID Metadata Documents are turned off on this server ([oauth] client_id_metadata_documents)",
        );
    }
    if let Some(resource) = request.resource.as_deref()
        && !resource_matches(&state, resource)
    {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_target",
            "resource must be this server's /mcp URL",
        );
    }
    match request.grant_type.as_deref() {
        Some("authorization_code") => {
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
            let store = Arc::clone(&state.store);
            let taken = code.clone();
            let redeemed = match blocking(move || store.redeem_code(&taken)).await {
                Ok(redeemed) => redeemed,
                Err(response) => return response,
            };
            let grant = match redeemed {
                Redeemed::Fresh(grant) => grant,
                Redeemed::Replayed => {
                    tracing::warn!(%client_id, "an authorization code was replayed; its grant is revoked");
                    return bad_grant("the code was already used");
                }
                Redeemed::Unknown => return bad_grant("the code is not valid"),
            };
            if grant.expires < now() {
                return bad_grant("the code expired; authorize again");
            }
            if grant.client_id != client_id || grant.redirect_uri != redirect_uri {
                return bad_grant("the code was issued to another client or redirect_uri");
            }
            if !pkce_matches(&verifier, &grant.code_challenge) {
                return bad_grant("code_verifier does not match the code_challenge");
            }
            if !state.holds_token(&grant.identity, &grant.token_fingerprint) {
                return bad_grant(
                    "the identity's token changed since the consent; authorize again with its current token",
                );
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
            state.issue(&info, refresh)
        }
        Some("refresh_token") => {
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
                    state.issue(&grant, next)
                }
                Ok(Refreshed::Valid(grant)) => {
                    // The identity's token changed (or the identity is gone) since the consent:
                    // the grant ends for good, even if the old token came back.
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
                Ok(Refreshed::Reused) => {
                    tracing::warn!(
                        "a spent refresh token was presented again; the grant is revoked"
                    );
                    bad_grant(
                        "the refresh token was already used; the grant is revoked, authorize again",
                    )
                }
                Ok(Refreshed::Unknown) => bad_grant("the refresh token is not valid"),
                Err(response) => response,
            }
        }
        _ => oauth_error(
            StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
            "grant_type must be authorization_code or refresh_token",
        ),
    }
}

// ---- Revocation (RFC 7009) ----

#[derive(Debug, Deserialize)]
struct RevokeRequest {
    token: Option<String>,
}

async fn revoke(
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

    #[test]
    fn codes_and_refresh_tokens_are_single_use_and_reuse_revokes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("oauth.db");
        let store = Store::open(&path, b"key".to_vec()).expect("open");
        // Opening again runs no migration twice.
        drop(store);
        let store = Store::open(&path, b"key".to_vec()).expect("reopen");
        let client = Client {
            client_id: "c".into(),
            client_name: None,
            redirect_uris: vec!["https://a.example/cb".into()],
            document_host: None,
        };
        assert_eq!(
            store.register(&client, 0, 10, 0).expect("register"),
            Registered::Saved
        );
        let grant = CodeGrant {
            client_id: "c".into(),
            identity: "agent".into(),
            redirect_uri: "https://a.example/cb".into(),
            code_challenge: "x".into(),
            resource: "r".into(),
            expires: 100,
            token_fingerprint: b"fp".to_vec(),
        };
        store
            .save_code("the-code-0123456789", &grant)
            .expect("save");
        assert!(matches!(
            store.redeem_code("the-code-0123456789"),
            Ok(Redeemed::Fresh(_))
        ));
        let info = GrantInfo {
            grant_id: "g".into(),
            client_id: "c".into(),
            identity: "agent".into(),
            resource: "r".into(),
            token_fingerprint: b"fp".to_vec(),
        };
        store
            .create_grant("code", &info, "refresh-one-0123456789", 1000, 1)
            .expect("grant");
        assert!(matches!(
            store.rotate_refresh(
                "refresh-one-0123456789",
                "c",
                "refresh-two-0123456789",
                1000,
                2
            ),
            Ok(Refreshed::Valid(_))
        ));
        assert_eq!(
            store.live_grant_fingerprint("g").expect("live"),
            Some(b"fp".to_vec())
        );
        assert!(matches!(
            store.rotate_refresh(
                "refresh-one-0123456789",
                "c",
                "refresh-three-0123456789",
                1000,
                3
            ),
            Ok(Refreshed::Reused)
        ));
        assert_eq!(store.live_grant_fingerprint("g").expect("revoked"), None);
        assert!(matches!(
            store.rotate_refresh(
                "refresh-two-0123456789",
                "c",
                "refresh-four-0123456789",
                1000,
                4
            ),
            Ok(Refreshed::Unknown)
        ));
        assert!(matches!(
            store.redeem_code("the-code-0123456789"),
            Ok(Redeemed::Replayed)
        ));
        // Nothing secret is stored in the clear.
        let mut bytes = std::fs::read(&path).expect("read db");
        bytes.extend(std::fs::read(dir.path().join("oauth.db-wal")).unwrap_or_default());
        let text = String::from_utf8_lossy(&bytes);
        for secret in ["refresh-one", "refresh-two", "the-code"] {
            assert!(!text.contains(secret), "{secret} is stored in the clear");
        }
        assert_eq!(store.sweep(10_000, 10_000, 0).expect("sweep"), 1);
    }

    /// Issue 18, item 10: registrations are capped whatever the rate limit let through, a full
    /// table makes room only from abandoned registrations, and registrations that never produced
    /// a grant are swept within hours while used ones stay.
    #[test]
    fn r18_registrations_are_capped_and_never_used_ones_expire() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(&dir.path().join("oauth.db"), b"key".to_vec()).expect("open");
        let client = |id: &str| Client {
            client_id: id.into(),
            client_name: None,
            redirect_uris: vec!["https://a.example/cb".into()],
            document_host: None,
        };
        let count = |store: &Store| store.client_count().expect("count");
        let hour = 3600;
        // One client completes a grant; the others only register.
        store
            .register(&client("used"), 0, MAX_CLIENTS, -1)
            .expect("register");
        store
            .save_code(
                "code-0123456789",
                &CodeGrant {
                    client_id: "used".into(),
                    identity: "agent".into(),
                    redirect_uri: "https://a.example/cb".into(),
                    code_challenge: "x".into(),
                    resource: "r".into(),
                    expires: 100,
                    token_fingerprint: b"fp".to_vec(),
                },
            )
            .expect("code");
        let info = GrantInfo {
            grant_id: "g".into(),
            client_id: "used".into(),
            identity: "agent".into(),
            resource: "r".into(),
            token_fingerprint: b"fp".to_vec(),
        };
        store
            .create_grant(
                "code-0123456789",
                &info,
                "refresh-0123456789",
                90 * 24 * hour,
                1,
            )
            .expect("grant");
        for at in 1..MAX_CLIENTS as i64 {
            assert_eq!(
                store
                    .register(&client(&format!("flood-{at}")), hour, MAX_CLIENTS, -1)
                    .expect("register"),
                Registered::Saved
            );
        }
        assert_eq!(count(&store), MAX_CLIENTS);
        // Full, and every never-used registration is still in flight: refused.
        let now = hour + 60;
        assert_eq!(
            store
                .register(
                    &client("late"),
                    now,
                    MAX_CLIENTS,
                    now - IN_FLIGHT_CLIENT_SECONDS
                )
                .expect("register"),
            Registered::Full
        );
        // Later, the oldest abandoned registration makes room; the used client is never displaced.
        let later = now + IN_FLIGHT_CLIENT_SECONDS + 1;
        assert_eq!(
            store
                .register(
                    &client("late"),
                    later,
                    MAX_CLIENTS,
                    later - IN_FLIGHT_CLIENT_SECONDS
                )
                .expect("register"),
            Registered::Saved
        );
        assert_eq!(count(&store), MAX_CLIENTS);
        assert!(store.client("used").expect("read").is_some());
        let floods_left = (1..MAX_CLIENTS)
            .filter(|at| {
                store
                    .client(&format!("flood-{at}"))
                    .expect("read")
                    .is_some()
            })
            .count();
        assert_eq!(floods_left, MAX_CLIENTS - 2);
        assert!(store.client("late").expect("read").is_some());
        // Within hours, every registration that never produced a grant is gone; the used one
        // (with a live grant, used an hour ago) stays.
        let sweep_at = later + NEVER_USED_CLIENT_SECONDS + 1;
        store
            .sweep(
                sweep_at,
                sweep_at - STALE_CLIENT_SECONDS,
                sweep_at - NEVER_USED_CLIENT_SECONDS,
            )
            .expect("sweep");
        assert_eq!(count(&store), 1);
        assert!(store.client("used").expect("read").is_some());
    }
}
