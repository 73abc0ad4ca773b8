//! `quire acl explain IDENTITY PATH`: what an identity may do with a path, and which rule decides
//! it, straight from the configured policy (no vault is opened).

use crate::acl::{Action, Principal};
use crate::config::Config;

/// `quire acl explain IDENTITY PATH`: what the identity may do with the path, and which rule
/// decides it.
pub fn explain(config: &Config, identity: &str, path: &str) -> anyhow::Result<String> {
    let policy = &config.access.policy;
    let principal = if identity == "owner" {
        Principal::Owner
    } else {
        if policy.identity(identity).is_none() {
            anyhow::bail!("no identity named {identity:?} is configured");
        }
        Principal::Identity {
            name: identity.to_string(),
            client_id: None,
        }
    };
    let path = path.trim_matches('/');
    let mut text = format!("identity {identity:?}, path {path:?}\n");
    for (label, action) in [
        ("read", Action::Read),
        ("write", Action::Write),
        ("list", Action::List),
    ] {
        text.push_str(&format!(
            "  {label:<6}{}\n",
            policy.check(&principal, action, path)
        ));
    }
    if let Some((_, why)) = config
        .access
        .disabled
        .iter()
        .find(|(name, _)| name == identity)
    {
        text.push_str(&format!("  (this identity is disabled: {why})\n"));
    }
    Ok(text)
}
