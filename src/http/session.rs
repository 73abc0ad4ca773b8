//! Binds each MCP session to the principal that opened it.
//!
//! rmcp keeps 2025-11-25 sessions by their `Mcp-Session-Id` alone, so without this layer anyone
//! holding another caller's session id (and any valid token of their own) could call tools in that
//! session and receive its notifications and log messages, including ones about notes only the
//! session's owner may read. The layer runs after authentication: it records the principal when
//! rmcp answers an `initialize` with a new session id, and every later request (POST, the GET
//! notification stream, DELETE) naming that session must come from the same principal (identity
//! and OAuth client). Any other request is handed to rmcp with the session id replaced by one that
//! exists nowhere, so it gets exactly rmcp's answer for an unknown session: the session's
//! existence is never revealed, and it cannot be closed by someone else.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::extract::{Request, State};
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::Response;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

use crate::acl::Principal;

const SESSION_HEADER: &str = "mcp-session-id";

/// Check the recorded sessions against rmcp's live ones after this many new sessions.
const PRUNE_EVERY: usize = 256;

pub struct SessionOwners {
    owners: Mutex<HashMap<String, Principal>>,
    created: Mutex<usize>,
    manager: Arc<LocalSessionManager>,
}

impl SessionOwners {
    pub fn new(manager: Arc<LocalSessionManager>) -> SessionOwners {
        SessionOwners {
            owners: Mutex::new(HashMap::new()),
            created: Mutex::new(0),
            manager,
        }
    }

    fn owner_of(&self, session: &str) -> Option<Principal> {
        self.owners
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(session)
            .cloned()
    }

    async fn record(&self, session: String, principal: Principal) {
        self.owners
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(session, principal);
        let prune = {
            let mut created = self.created.lock().unwrap_or_else(|p| p.into_inner());
            *created += 1;
            created.is_multiple_of(PRUNE_EVERY)
        };
        // Sessions also end by timeout or when their client goes away; forget those now and then,
        // so the table stays as small as the set of live sessions.
        if prune {
            let live: Vec<String> = self
                .manager
                .sessions
                .read()
                .await
                .keys()
                .map(|id| id.to_string())
                .collect();
            self.owners
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .retain(|id, _| live.contains(id));
        }
    }

    fn forget(&self, session: &str) {
        self.owners
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(session);
    }
}

/// The middleware; `principal` was put into the request's extensions by the bearer check.
pub async fn bind_sessions(
    State(owners): State<Arc<SessionOwners>>,
    mut request: Request,
    next: Next,
) -> Response {
    let principal = request.extensions().get::<Principal>().cloned();
    let session = request
        .headers()
        .get(SESSION_HEADER)
        .and_then(|value| value.to_str().ok())
        .map(str::to_string);
    let is_delete = request.method() == axum::http::Method::DELETE;
    if let Some(session) = &session {
        let owner = owners.owner_of(session);
        if owner.is_none() || owner != principal {
            if owner.is_some() {
                tracing::warn!(
                    identity = principal.as_ref().map_or("none", Principal::name),
                    "a request named an MCP session opened by another identity; answered as an unknown session"
                );
            }
            // A fresh random id names no session, so rmcp answers as for any unknown one.
            let nowhere = format!("unknown-{}", hex::encode(rand::random::<[u8; 16]>()));
            if let Ok(value) = HeaderValue::from_str(&nowhere) {
                request.headers_mut().insert(SESSION_HEADER, value);
            }
            return next.run(request).await;
        }
    }
    let response = next.run(request).await;
    match (&session, principal) {
        (None, Some(principal)) => {
            if let Some(created) = response
                .headers()
                .get(SESSION_HEADER)
                .and_then(|value| value.to_str().ok())
            {
                owners.record(created.to_string(), principal).await;
            }
        }
        (Some(session), _) if is_delete && response.status().is_success() => {
            owners.forget(session);
        }
        _ => {}
    }
    response
}
