//! `quire oauth list` and `quire oauth revoke`: the OAuth grants remote clients hold, read from
//! and revoked in the state directory's `oauth.db` without a running server.

use anyhow::Context as _;

use crate::config::Config;
use crate::http::IdentityTokens;
use crate::http::oauth::{GrantStatus, OAuthState};
use crate::telemetry::escape_control_characters as clean;

/// The OAuth state for the `quire oauth` commands; `None` when no OAuth grant was ever made
/// here (no `oauth.db`), so listing creates nothing.
fn oauth_state(config: &Config) -> anyhow::Result<Option<OAuthState>> {
    if !config.state_dir.join("oauth.db").exists() {
        return Ok(None);
    }
    let tokens = IdentityTokens::new(config.access.tokens.clone());
    // The issuer only matters for tokens this process would sign or check, and it does neither.
    let state = OAuthState::open(&config.state_dir, "http://localhost", tokens, None)
        .context("cannot open the OAuth state (oauth.db and its key)")?;
    Ok(Some(state))
}

/// `quire oauth list`: every OAuth grant, its identity and client, and whether it still works.
pub fn list(config: &Config) -> anyhow::Result<String> {
    let Some(state) = oauth_state(config)? else {
        return Ok("no OAuth grants (no client has been authorized yet)\n".into());
    };
    let grants = state.grants().context("cannot read the OAuth grants")?;
    if grants.is_empty() {
        return Ok("no OAuth grants\n".into());
    }
    let mut text = String::new();
    for grant in grants {
        let status = match grant.status {
            GrantStatus::Live => "live",
            GrantStatus::Revoked => "revoked",
            GrantStatus::TokenChanged => "ended (token changed)",
        };
        let created = jiff::Timestamp::from_second(grant.created)
            .map(|t| t.to_string())
            .unwrap_or_else(|_| grant.created.to_string());
        // Client names and ids come from clients (registration), so control characters are
        // escaped before they reach a terminal.
        let name = grant
            .client_name
            .as_deref()
            .map(|name| format!(" ({})", clean(name)))
            .unwrap_or_default();
        text.push_str(&format!(
            "{status:<22} identity {:<12} since {created}  client {}{name}  grant {}\n",
            grant.identity,
            clean(&grant.client_id),
            grant.grant_id,
        ));
    }
    Ok(text)
}

/// `quire oauth revoke --identity NAME` and/or `--client ID`: ends those grants at once.
pub fn revoke(
    config: &Config,
    identity: Option<&str>,
    client_id: Option<&str>,
) -> anyhow::Result<String> {
    if identity.is_none() && client_id.is_none() {
        anyhow::bail!("say whose grants to revoke: --identity NAME, --client CLIENT_ID, or both");
    }
    let Some(state) = oauth_state(config)? else {
        return Ok("no OAuth grants to revoke\n".into());
    };
    let revoked = state
        .revoke_grants(identity, client_id)
        .context("cannot revoke the OAuth grants")?;
    Ok(format!(
        "revoked {revoked} grant{}; their clients must be authorized again\n",
        if revoked == 1 { "" } else { "s" }
    ))
}
