//! The HTTP adapter: Streamable HTTP MCP at `/mcp`, `GET /healthz`, protected-resource metadata,
//! bearer authentication and DNS-rebinding protection, on axum.
//!
//! `router` is a plain constructor so tests can drive it in-process. Every `/mcp` request passes
//! the auth layer, which proves a `Principal` and hands it to the MCP layer in the request
//! extensions; `Host` and `Origin` are checked against the allowlist whether or not auth is on.
//! Inside it, `session` binds each MCP session to the principal that opened it and caps how many
//! are open, and `jsonrpc` answers a body that is not a JSON-RPC message with a JSON-RPC error.

mod auth;
mod identities;
mod jsonrpc;
pub mod oauth;
mod session;
mod token;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::routing::get;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;
use url::Url;

use crate::mcp::{QuireServer, Shared};
pub use auth::Auth;
pub use identities::IdentityTokens;
pub use session::SessionLimits;
pub use token::{TokenError, load_or_create_owner_token};

/// What the HTTP layer needs from the configuration.
#[derive(Debug, Clone)]
pub struct HttpSettings {
    pub listen: SocketAddr,
    pub public_url: Option<Url>,
    pub allowed_hosts: Vec<String>,
    pub auth: Auth,
    /// The note size cap; request bodies may be a little over twice it (JSON escaping), so a
    /// note just over the cap reaches `ops` and gets a `too_large` tool error, not a bare 413.
    pub max_note_bytes: u64,
    /// The OAuth authorization server, when identities are configured.
    pub oauth: Option<Arc<oauth::OAuthState>>,
    /// The sync service's status file (`[sync] status_file`), summarised on `/healthz`.
    pub sync_status: Option<std::path::PathBuf>,
    /// How many 2025-11-25 sessions may be open, in all and per identity.
    pub sessions: SessionLimits,
}

impl HttpSettings {
    /// The base URL clients use: the public URL behind a proxy, else the bound address.
    pub fn base_url(&self) -> String {
        match &self.public_url {
            Some(url) => url.as_str().trim_end_matches('/').to_string(),
            None => format!("http://{}", self.listen),
        }
    }

    fn hosts(&self) -> Vec<String> {
        let mut hosts: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
        hosts.push(self.listen.ip().to_string());
        if let Some(host) = self.public_url.as_ref().and_then(Url::host_str) {
            hosts.push(
                host.trim_start_matches('[')
                    .trim_end_matches(']')
                    .to_string(),
            );
        }
        hosts.extend(self.allowed_hosts.iter().cloned());
        hosts.sort();
        hosts.dedup();
        hosts
    }

    fn origins(&self) -> Vec<String> {
        let mut origins: Vec<String> = self
            .hosts()
            .iter()
            .flat_map(|host| {
                let host = if host.contains(':') {
                    format!("[{host}]")
                } else {
                    host.clone()
                };
                [format!("http://{host}:*"), format!("https://{host}:*")]
            })
            .collect();
        if let Some(url) = &self.public_url {
            origins.push(url.origin().ascii_serialization());
        }
        origins
    }
}

/// Serves `router` until `shutdown` completes, then lets in-flight requests finish.
pub async fn serve(
    listener: tokio::net::TcpListener,
    router: Router,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    use axum::serve::ListenerExt;
    // Responses go out in several writes (SSE frames, chunked bodies); with Nagle's algorithm on,
    // each exchange waited for the client's delayed ACK: a flat 40 ms per call on loopback.
    let listener = listener.tap_io(|tcp| {
        if let Err(error) = tcp.set_nodelay(true) {
            tracing::debug!(%error, "cannot turn off Nagle's algorithm on a connection");
        }
    });
    // The peer address feeds the OAuth rate limits.
    axum::serve(
        listener,
        router.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(shutdown)
    .await
}

/// rmcp answers a session `DELETE` with 202; the Python and TypeScript SDKs expect 200 or 204
/// and log a failure otherwise. The session is gone either way, so say so with 204.
async fn session_delete_is_no_content(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let is_delete = request.method() == axum::http::Method::DELETE;
    let mut response = next.run(request).await;
    if is_delete && response.status() == axum::http::StatusCode::ACCEPTED {
        *response.status_mut() = axum::http::StatusCode::NO_CONTENT;
    }
    response
}

/// `/healthz` answers without auth, so the sync part carries counts and times only, no paths.
fn health(sync_status: Option<&std::path::Path>) -> serde_json::Value {
    let mut body = serde_json::json!({"status": "ok"});
    if let Some(path) = sync_status {
        body["sync"] = match crate::sync_status::read(path) {
            Ok(status) => serde_json::json!(status.summary()),
            Err(crate::sync_status::StatusError::Missing(_)) => serde_json::json!({"ok": null}),
            Err(_) => serde_json::json!({"ok": false}),
        };
    }
    body
}

fn request_body_limit(max_note_bytes: u64) -> usize {
    const ENVELOPE: u64 = 1024 * 1024;
    usize::try_from(max_note_bytes.saturating_mul(2).saturating_add(ENVELOPE)).unwrap_or(usize::MAX)
}

/// The whole HTTP surface. `cancel` ends every MCP session (for shutdown).
pub fn router(shared: Arc<Shared>, settings: &HttpSettings, cancel: CancellationToken) -> Router {
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(settings.hosts())
        .with_allowed_origins(settings.origins())
        .enforce_origin_validation()
        .with_max_request_body_bytes(request_body_limit(settings.max_note_bytes))
        .with_cancellation_token(cancel);
    let sessions = Arc::new(LocalSessionManager::default());
    let session_owners = Arc::new(session::SessionOwners::new(
        Arc::clone(&sessions),
        settings.sessions,
    ));
    let mcp_service = StreamableHttpService::new(
        move || Ok(QuireServer::new(Arc::clone(&shared))),
        sessions,
        config,
    );
    let auth_state = Arc::new(auth::AuthState::new(settings));
    let oauth = settings.oauth.is_some();
    let metadata = auth::protected_resource_metadata(&settings.base_url(), oauth);
    let metadata_mcp = metadata.clone();
    let sync_status = settings.sync_status.clone();
    let router = Router::new()
        .nest_service("/mcp", mcp_service)
        .layer(axum::middleware::from_fn(jsonrpc::malformed_bodies))
        .layer(axum::middleware::from_fn(session_delete_is_no_content))
        // Inside the bearer check, which supplies the principal a session is bound to.
        .layer(axum::middleware::from_fn_with_state(
            session_owners,
            session::bind_sessions,
        ))
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&auth_state),
            auth::require_bearer,
        ))
        .route(
            "/healthz",
            get(move || {
                let sync_status = sync_status.clone();
                async move { axum::Json(health(sync_status.as_deref())) }
            }),
        )
        .route(
            "/.well-known/oauth-protected-resource",
            get(move || {
                let metadata = metadata.clone();
                async move { axum::Json(metadata) }
            }),
        )
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            get(move || {
                let metadata = metadata_mcp.clone();
                async move { axum::Json(metadata) }
            }),
        );
    match &settings.oauth {
        Some(state) => router.merge(oauth::router(Arc::clone(state))),
        None => router,
    }
}
