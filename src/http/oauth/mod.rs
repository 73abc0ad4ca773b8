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
//!
//! Rooms: `state.rs` (what the endpoints and the bearer check share), `register.rs`,
//! `authorize.rs` (with `consent.rs`, the page), `token_endpoint.rs`, `revoke.rs`, `reply.rs`
//! (how every endpoint answers), `limits.rs`, `store.rs` (`oauth.db`), `tokens.rs` (JWTs) and
//! `cimd.rs`. This file holds the public types, the lifetimes and caps, and the router.

mod authorize;
mod cimd;
mod consent;
mod limits;
mod register;
mod reply;
mod revoke;
mod state;
mod store;
mod token_endpoint;
mod tokens;

use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use axum::{Json, Router};

use super::token::TokenError;
pub use cimd::CimdSettings;
pub use state::OAuthState;
pub use store::StoreError;
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

/// The OAuth routes; mount next to `/mcp`.
pub fn router(state: Arc<OAuthState>) -> Router {
    let limited = Router::new()
        .route("/oauth/register", post(register::register))
        .route(
            "/oauth/authorize",
            get(authorize::authorize_page).post(authorize::authorize_submit),
        )
        .route("/oauth/token", post(token_endpoint::token))
        .route("/oauth/revoke", post(revoke::revoke))
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

#[cfg(test)]
mod tests {
    use super::*;
    use store::{Client, CodeGrant, GrantInfo, Redeemed, Refreshed, Registered, Store};

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

    fn client(id: &str) -> Client {
        Client {
            client_id: id.into(),
            client_name: None,
            redirect_uris: vec!["https://a.example/cb".into()],
            document_host: None,
        }
    }

    /// Registers `id` at `now`, keeping registrations younger than `in_flight_since`.
    fn register(store: &Store, id: &str, now: i64, in_flight_since: i64) -> Registered {
        store
            .register(&client(id), now, MAX_CLIENTS, in_flight_since)
            .expect("register")
    }

    /// Takes `client_id` through a code to a live grant whose refresh token expires at
    /// `refresh_expires`.
    fn complete_grant(store: &Store, client_id: &str, refresh_expires: i64) {
        let grant = CodeGrant {
            client_id: client_id.into(),
            identity: "agent".into(),
            redirect_uri: "https://a.example/cb".into(),
            code_challenge: "x".into(),
            resource: "r".into(),
            expires: 100,
            token_fingerprint: b"fp".to_vec(),
        };
        store.save_code("code-0123456789", &grant).expect("code");
        let info = GrantInfo {
            grant_id: "g".into(),
            client_id: client_id.into(),
            identity: "agent".into(),
            resource: "r".into(),
            token_fingerprint: b"fp".to_vec(),
        };
        store
            .create_grant(
                "code-0123456789",
                &info,
                "refresh-0123456789",
                refresh_expires,
                1,
            )
            .expect("grant");
    }

    fn is_registered(store: &Store, id: &str) -> bool {
        store.client(id).expect("read").is_some()
    }

    /// Issue 18, item 10: registrations are capped whatever the rate limit let through, a full
    /// table makes room only from abandoned registrations, and registrations that never produced
    /// a grant are swept within hours while used ones stay.
    #[test]
    fn r18_registrations_are_capped_and_never_used_ones_expire() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(&dir.path().join("oauth.db"), b"key".to_vec()).expect("open");
        let count = |store: &Store| store.client_count().expect("count");
        let hour = 3600;
        // One client completes a grant; the others only register.
        register(&store, "used", 0, -1);
        complete_grant(&store, "used", 90 * 24 * hour);
        for at in 1..MAX_CLIENTS as i64 {
            assert_eq!(
                register(&store, &format!("flood-{at}"), hour, -1),
                Registered::Saved
            );
        }
        assert_eq!(count(&store), MAX_CLIENTS);
        // Full, and every never-used registration is still in flight: refused.
        let now = hour + 60;
        assert_eq!(
            register(&store, "late", now, now - IN_FLIGHT_CLIENT_SECONDS),
            Registered::Full
        );
        // Later, the oldest abandoned registration makes room; the used client is never displaced.
        let later = now + IN_FLIGHT_CLIENT_SECONDS + 1;
        assert_eq!(
            register(&store, "late", later, later - IN_FLIGHT_CLIENT_SECONDS),
            Registered::Saved
        );
        assert_eq!(count(&store), MAX_CLIENTS);
        assert!(is_registered(&store, "used"));
        let floods_left = (1..MAX_CLIENTS)
            .filter(|at| is_registered(&store, &format!("flood-{at}")))
            .count();
        assert_eq!(floods_left, MAX_CLIENTS - 2);
        assert!(is_registered(&store, "late"));
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
        assert!(is_registered(&store, "used"));
    }
}
