//! Binds each MCP session to the principal that opened it, and bounds how many sessions are open.
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
//!
//! A session holds about 70 KiB until it ends (rmcp closes it after five idle minutes), so without
//! a bound any valid token could exhaust memory by opening sessions. Two caps hold (`[http]
//! max_sessions_per_identity` and `max_sessions`): an identity over its own cap loses its least
//! recently used session, never another identity's, and once the total is reached a new session is
//! refused with 503 and a JSON-RPC error that says what to do. Both are judged on what rmcp did
//! (a new session id in its answer), so a stateless 2026-07-28 request, which opens no session, is
//! never refused; the session a refusal or eviction ends is closed in rmcp and forgotten here at
//! once, so any request naming it gets rmcp's unknown-session 404.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{SessionId, SessionManager};

use super::jsonrpc;
use crate::acl::Principal;

const SESSION_HEADER: &str = "mcp-session-id";

/// How many sessions may be open (`[http] max_sessions`, `max_sessions_per_identity`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionLimits {
    pub total: usize,
    pub per_identity: usize,
}

struct Session {
    principal: Principal,
    /// When a request last named the session, on the table's own clock.
    last_used: u64,
}

/// The recorded sessions. Pure bookkeeping, so the caps can be tested without rmcp.
#[derive(Default)]
struct Table {
    sessions: HashMap<String, Session>,
    clock: u64,
}

/// What recording a new session did.
#[derive(Debug, PartialEq, Eq)]
enum Admission {
    Admitted,
    /// Admitted, and this session of the same identity was dropped to make room.
    Evicted(String),
    /// The total is reached; the new session was not recorded.
    Refused,
}

/// Sessions count toward the cap of their identity, whichever OAuth client opened them.
fn same_identity(a: &Principal, b: &Principal) -> bool {
    match (a, b) {
        (Principal::Owner, Principal::Owner) => true,
        (Principal::Identity { name: a, .. }, Principal::Identity { name: b, .. }) => a == b,
        _ => false,
    }
}

impl Table {
    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    /// Whether `principal` owns `session`; if so, the session counts as used now.
    fn claim(&mut self, session: &str, principal: Option<&Principal>) -> Claim {
        let now = self.tick();
        match self.sessions.get_mut(session) {
            None => Claim::Unknown,
            Some(entry) if Some(&entry.principal) == principal => {
                entry.last_used = now;
                Claim::Owned
            }
            Some(_) => Claim::Foreign,
        }
    }

    fn count_of(&self, principal: &Principal) -> usize {
        self.sessions
            .values()
            .filter(|entry| same_identity(&entry.principal, principal))
            .count()
    }

    /// Whether admitting a session for `principal` would meet a cap, so dead sessions should be
    /// pruned first.
    fn at_a_cap(&self, principal: &Principal, limits: SessionLimits) -> bool {
        self.sessions.len() >= limits.total || self.count_of(principal) >= limits.per_identity
    }

    fn admit(&mut self, session: String, principal: Principal, limits: SessionLimits) -> Admission {
        let now = self.tick();
        let admission = if self.count_of(&principal) >= limits.per_identity {
            let oldest = self
                .sessions
                .iter()
                .filter(|(_, entry)| same_identity(&entry.principal, &principal))
                .min_by_key(|(_, entry)| entry.last_used)
                .map(|(id, _)| id.clone());
            match oldest {
                Some(oldest) => {
                    self.sessions.remove(&oldest);
                    Admission::Evicted(oldest)
                }
                None => Admission::Admitted,
            }
        } else if self.sessions.len() >= limits.total {
            return Admission::Refused;
        } else {
            Admission::Admitted
        };
        self.sessions.insert(
            session,
            Session {
                principal,
                last_used: now,
            },
        );
        admission
    }

    fn forget(&mut self, session: &str) {
        self.sessions.remove(session);
    }

    fn retain_live(&mut self, live: &HashSet<String>) {
        self.sessions.retain(|id, _| live.contains(id));
    }
}

enum Claim {
    Owned,
    Foreign,
    Unknown,
}

pub struct SessionOwners {
    table: Mutex<Table>,
    limits: SessionLimits,
    manager: Arc<LocalSessionManager>,
}

impl SessionOwners {
    pub fn new(manager: Arc<LocalSessionManager>, limits: SessionLimits) -> SessionOwners {
        SessionOwners {
            table: Mutex::new(Table::default()),
            limits,
            manager,
        }
    }

    fn table(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records a session rmcp just opened, within the caps; closes in rmcp whatever the caps
    /// leave out.
    async fn record(&self, session: String, principal: Principal) -> Admission {
        // Sessions also end by idle timeout or when their client goes away, without passing
        // here: before a cap decides anything, forget those, so only live sessions count.
        if self.table().at_a_cap(&principal, self.limits) {
            let live: HashSet<String> = self
                .manager
                .sessions
                .read()
                .await
                .keys()
                .map(|id| id.to_string())
                .collect();
            self.table().retain_live(&live);
        }
        let identity = principal.name().to_string();
        let admission = self.table().admit(session.clone(), principal, self.limits);
        match &admission {
            Admission::Admitted => {}
            Admission::Evicted(oldest) => {
                tracing::info!(
                    %identity,
                    cap = self.limits.per_identity,
                    "an identity opened more MCP sessions than http.max_sessions_per_identity; its least recently used one was closed"
                );
                self.close(oldest.clone());
            }
            Admission::Refused => {
                tracing::warn!(
                    %identity,
                    cap = self.limits.total,
                    "a new MCP session was refused: as many are open as http.max_sessions allows"
                );
                self.close(session);
            }
        }
        admission
    }

    /// Closes a session in rmcp without holding up the answer: it is already gone from the table,
    /// so every request naming it gets the unknown-session answer from now on.
    fn close(&self, session: String) {
        let manager = Arc::clone(&self.manager);
        let session: SessionId = session.into();
        tokio::spawn(async move {
            if let Err(error) = manager.close_session(&session).await {
                tracing::debug!(%error, "closing an MCP session beyond the caps failed");
            }
        });
    }

    fn refusal(&self) -> Response {
        let mut response = jsonrpc::error_response(
            StatusCode::SERVICE_UNAVAILABLE,
            jsonrpc::SERVER_BUSY,
            &format!(
                "this server keeps at most {} MCP sessions open and has that many; no session was opened. Retry in a minute, close sessions you no longer use (HTTP DELETE with their Mcp-Session-Id), or send stateless 2026-07-28 requests, which need no session",
                self.limits.total
            ),
        );
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("60"));
        response
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
        let claim = owners.table().claim(session, principal.as_ref());
        if !matches!(claim, Claim::Owned) {
            if matches!(claim, Claim::Foreign) {
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
            let created = response
                .headers()
                .get(SESSION_HEADER)
                .and_then(|value| value.to_str().ok())
                .map(str::to_string);
            if let Some(created) = created
                && owners.record(created, principal).await == Admission::Refused
            {
                return owners.refusal();
            }
        }
        (Some(session), _) if is_delete && response.status().is_success() => {
            owners.table().forget(session);
        }
        _ => {}
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity(name: &str, client: Option<&str>) -> Principal {
        Principal::Identity {
            name: name.into(),
            client_id: client.map(str::to_string),
        }
    }

    const LIMITS: SessionLimits = SessionLimits {
        total: 4,
        per_identity: 2,
    };

    #[test]
    fn an_identity_over_its_cap_loses_its_least_recently_used_session_only() {
        let mut table = Table::default();
        let agent = identity("agent", None);
        let viewer = identity("viewer", None);
        assert_eq!(
            table.admit("v1".into(), viewer.clone(), LIMITS),
            Admission::Admitted
        );
        assert_eq!(
            table.admit("a1".into(), agent.clone(), LIMITS),
            Admission::Admitted
        );
        assert_eq!(
            table.admit("a2".into(), agent.clone(), LIMITS),
            Admission::Admitted
        );
        // a1 is used again, so a2 is now the least recently used.
        assert!(matches!(table.claim("a1", Some(&agent)), Claim::Owned));
        assert_eq!(
            table.admit("a3".into(), agent.clone(), LIMITS),
            Admission::Evicted("a2".into())
        );
        // The same identity through an OAuth client shares the cap.
        assert_eq!(
            table.admit("a4".into(), identity("agent", Some("client")), LIMITS),
            Admission::Evicted("a1".into())
        );
        assert!(table.sessions.contains_key("v1"));
        assert!(matches!(table.claim("a2", Some(&agent)), Claim::Unknown));
        assert!(matches!(table.claim("v1", Some(&agent)), Claim::Foreign));
    }

    #[test]
    fn a_full_table_refuses_a_new_identity_and_records_nothing() {
        let mut table = Table::default();
        for (at, name) in ["a", "a", "b", "b"].iter().enumerate() {
            let admitted = table.admit(format!("s{at}"), identity(name, None), LIMITS);
            assert_eq!(admitted, Admission::Admitted);
        }
        assert!(table.at_a_cap(&identity("c", None), LIMITS));
        assert_eq!(
            table.admit("c1".into(), identity("c", None), LIMITS),
            Admission::Refused
        );
        assert!(!table.sessions.contains_key("c1"));
        // An identity at its own cap still gets a session: its oldest makes room.
        assert_eq!(
            table.admit("a9".into(), identity("a", None), LIMITS),
            Admission::Evicted("s0".into())
        );
        table.retain_live(&["s2".to_string()].into_iter().collect());
        assert_eq!(table.sessions.len(), 1);
        assert!(!table.at_a_cap(&identity("c", None), LIMITS));
    }
}
