//! Composition root: builds the components from a validated `Config` in startup order and runs
//! them until the client goes away.
//!
//! This is the only place (with `main`) that uses `anyhow`: below here errors are typed.

use std::sync::Arc;

use anyhow::Context as _;

use crate::config::Config;
use crate::ops::Ops;
use crate::vault::Vault;

/// Serves MCP over stdin/stdout until the client closes the stream.
pub async fn serve_stdio(config: Config) -> anyhow::Result<()> {
    create_state_dir(&config)?;
    let vault = Vault::open(&config.vault, config.max_note_bytes)
        .with_context(|| format!("cannot open the vault at {}", config.vault.display()))?;
    let ops = Arc::new(Ops::new(vault));
    tracing::info!(vault = %config.vault.display(), "serving MCP over stdio");
    crate::mcp::serve_stdio(ops).await?;
    tracing::info!("stdio client disconnected; exiting");
    Ok(())
}

/// The state directory holds derived data only; it is private to the service user.
fn create_state_dir(config: &Config) -> anyhow::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&config.state_dir)
        .with_context(|| {
            format!(
                "cannot create the state directory {}",
                config.state_dir.display()
            )
        })
}

/// The human-readable summary `quire check-config` prints.
pub fn describe(config: &Config) -> String {
    format!(
        "configuration is valid\n  config file:    {}\n  vault:          {}\n  state dir:      {}\n  index:          {}\n  max note bytes: {}\n",
        config
            .config_file
            .as_ref()
            .map_or_else(|| "(none)".to_string(), |p| p.display().to_string()),
        config.vault.display(),
        config.state_dir.display(),
        config.index.display(),
        config.max_note_bytes,
    )
}
