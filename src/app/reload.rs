//! Live reloads of who may connect: on SIGHUP or when the config file changes, identities and the
//! ACL are read again; an invalid file is logged and the last good configuration stays.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::config::Config;
use crate::http::IdentityTokens;
use crate::mcp::Shared;

/// Loads the configuration again (the same file, flags and environment as at start).
pub type Reload = Arc<dyn Fn() -> Result<Config, crate::config::ConfigError> + Send + Sync>;

/// How often the config file is checked for changes; cheap (one `stat`), and quick enough that
/// an edit applies before anyone would retry.
const CONFIG_POLL: Duration = Duration::from_secs(2);

pub(super) fn log_access(access: &crate::config::Access) {
    for (name, why) in &access.disabled {
        tracing::warn!(identity = %name, reason = %why, "identity disabled: its token is missing");
    }
    if access.has_identities {
        let names: Vec<&str> = access
            .tokens
            .iter()
            .map(|(name, _)| name.as_str())
            .collect();
        tracing::info!(identities = %names.join(", "), "identities enabled");
    }
}

/// Reloads identities and the ACL on SIGHUP and when the config file changes. An invalid new
/// configuration is logged and the last good one stays in force.
pub(super) async fn follow_access_changes(
    reload: Reload,
    config_file: Option<PathBuf>,
    shared: Arc<Shared>,
    tokens: IdentityTokens,
) {
    use tokio::signal::unix::{SignalKind, signal};
    let mut hangup = match signal(SignalKind::hangup()) {
        Ok(hangup) => Some(hangup),
        Err(error) => {
            tracing::warn!(%error, "SIGHUP will not reload the ACL");
            None
        }
    };
    let stamp = |file: &Option<PathBuf>| {
        file.as_ref()
            .and_then(|path| std::fs::metadata(path).ok())
            .map(|meta| (meta.modified().ok(), meta.len()))
    };
    let mut last = stamp(&config_file);
    let mut ticker = tokio::time::interval(CONFIG_POLL);
    loop {
        let signalled = async {
            match hangup.as_mut() {
                Some(hangup) => hangup.recv().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = signalled => {}
            _ = ticker.tick() => {
                let now = stamp(&config_file);
                if now == last {
                    continue;
                }
                last = now;
            }
        }
        let reload = Arc::clone(&reload);
        match tokio::task::spawn_blocking(move || reload()).await {
            Ok(Ok(config)) => {
                log_access(&config.access);
                shared.ops.set_policy(config.access.policy.clone());
                tokens.replace(config.access.tokens.clone());
                let _ = shared.policy_changes.send(());
                tracing::info!("reloaded identities and the ACL");
            }
            Ok(Err(error)) => {
                tracing::error!(%error, "the new configuration is invalid; keeping the last good ACL");
            }
            Err(error) => tracing::error!(%error, "reloading the configuration failed"),
        }
    }
}
