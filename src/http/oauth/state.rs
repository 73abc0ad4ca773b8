//! The state every OAuth endpoint and the bearer check share: the store, the signing keys, the
//! identities grants are bound to, the rate limits and the metadata fetcher. It also answers the
//! questions asked outside the endpoints: is this access token good (`verify`), which grants
//! exist (`quire oauth list`), revoke them, sweep what expired.

use std::path::Path;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

use super::cimd::{CimdSettings, MetadataFetcher};
use super::store::{Store, StoreError};
use super::{
    GrantListing, GrantStatus, NEVER_USED_CLIENT_SECONDS, OAuthError, STALE_CLIENT_SECONDS, limits,
    tokens,
};
use crate::http::identities::IdentityTokens;
use crate::http::token::load_or_create_secret;

/// Everything the OAuth endpoints and the bearer check share.
pub struct OAuthState {
    pub(super) issuer: String,
    pub(super) resource: String,
    pub(super) store: Arc<Store>,
    pub(super) keys: tokens::Keys,
    pub(super) identities: IdentityTokens,
    /// Keys the fingerprints of identity tokens that grants are bound to.
    fingerprint_key: Vec<u8>,
    pub(super) limits: limits::Limits,
    /// Set when Client ID Metadata Documents are accepted (`[oauth] client_id_metadata_documents`).
    pub(super) documents: Option<MetadataFetcher>,
}

impl std::fmt::Debug for OAuthState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthState")
            .field("issuer", &self.issuer)
            .finish_non_exhaustive()
    }
}

pub(super) fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

pub(super) fn random_token() -> String {
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
    pub(super) fn token_fingerprint(&self, identity: &str, token: &str) -> Vec<u8> {
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
    pub(super) fn holds_token(&self, identity: &str, fingerprint: &[u8]) -> bool {
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
}
