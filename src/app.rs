//! Composition root: builds the components from a validated `Config` in startup order, runs the
//! chosen transport, and shuts down cleanly on SIGTERM or SIGINT.
//!
//! This is the only place (with `main`) that uses `anyhow`: below here errors are typed.

use std::sync::Arc;

use anyhow::Context as _;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use crate::config::{Config, HttpConfig};
use crate::http::{Auth, HttpSettings};
use crate::index::{Index, IndexOptions, VaultWatcher};
use crate::mcp::{Features, Shared};
use crate::ops::{Context, Ops, SearchNotes};
use crate::vault::Vault;

/// Buffered vault changes per listener before a slow client is told to re-list.
const CHANGE_BUFFER: usize = 1024;

/// Serves MCP over HTTP when configured, else over stdio, until shutdown.
pub async fn serve(config: Config) -> anyhow::Result<()> {
    create_state_dir(&config)?;
    let vault = open_vault(&config)?;
    // The reconcile runs in the background; tools wait for it, the MCP handshake does not.
    let index = open_index(&config, &vault, IndexOptions::default())?;
    let (changes, _) = broadcast::channel(CHANGE_BUFFER);
    // The index listens before the watcher starts, so it misses no change.
    index
        .follow(changes.subscribe())
        .context("cannot start following vault changes")?;
    // Without a watcher Quire still serves; clients only miss change notifications.
    let _watcher = match VaultWatcher::start(vault.root(), changes.clone()) {
        Ok(watcher) => Some(watcher),
        Err(error) => {
            tracing::warn!(%error, "vault changes will not be reported to clients");
            None
        }
    };
    let shared = Arc::new(Shared {
        ops: Arc::new(Ops::new(vault, index)),
        changes,
        features: Features {
            read_only: config.read_only,
            disabled_tools: config.disabled_tools.clone(),
        },
    });
    match &config.http {
        Some(http) => serve_http(&config, http, shared).await,
        None => {
            tracing::info!(vault = %config.vault.display(), "serving MCP over stdio");
            crate::mcp::serve_stdio(shared).await?;
            tracing::info!("stdio client disconnected; exiting");
            Ok(())
        }
    }
}

async fn serve_http(config: &Config, http: &HttpConfig, shared: Arc<Shared>) -> anyhow::Result<()> {
    let auth = if http.auth {
        let (token, created) = crate::http::load_or_create_owner_token(&config.state_dir)?;
        if created {
            tracing::info!(state_dir = %config.state_dir.display(), "created the owner token");
        }
        Auth::OwnerToken(token)
    } else {
        tracing::warn!("authentication is off (--no-auth); only this machine can connect");
        Auth::Disabled
    };
    let settings = HttpSettings {
        listen: http.listen,
        public_url: http.public_url.clone(),
        allowed_hosts: http.allowed_hosts.clone(),
        auth,
        max_note_bytes: config.max_note_bytes,
    };
    let listener = tokio::net::TcpListener::bind(settings.listen)
        .await
        .with_context(|| format!("cannot listen on {}", settings.listen))?;
    let cancel = CancellationToken::new();
    let router = crate::http::router(shared, &settings, cancel.clone());
    print_connection_help(config, &settings, listener.local_addr().ok());
    let shutdown = cancel.clone();
    tokio::spawn(async move {
        wait_for_signal().await;
        tracing::info!("shutting down");
        shutdown.cancel();
    });
    crate::http::serve(listener, router, cancel.cancelled_owned())
        .await
        .context("the HTTP server failed")?;
    Ok(())
}

async fn wait_for_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    match signal(SignalKind::terminate()) {
        Ok(mut terminate) => {
            tokio::select! {
                _ = terminate.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
        }
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

/// What a newcomer needs to connect, printed once on stdout (logs go to stderr).
fn print_connection_help(
    config: &Config,
    settings: &HttpSettings,
    bound: Option<std::net::SocketAddr>,
) {
    let base = match (&settings.public_url, bound) {
        (None, Some(addr)) => format!("http://{addr}"),
        _ => settings.base_url(),
    };
    let url = format!("{base}/mcp");
    let mut text = format!(
        "Quire is serving the vault {} over MCP (Streamable HTTP)\n  URL:   {url}\n",
        config.vault.display()
    );
    let header = match &settings.auth {
        Auth::OwnerToken(token) => {
            text.push_str(&format!(
                "  Token: {token}\n         (kept in {}/owner-token)\n",
                config.state_dir.display()
            ));
            format!(" --header \"Authorization: Bearer {token}\"")
        }
        Auth::Disabled => {
            text.push_str("  Auth:  off (--no-auth, loopback only)\n");
            String::new()
        }
    };
    let curl_auth = header.replace("--header", "-H");
    text.push_str(&format!(
        "\nTry it:\n  curl -s {url}{curl_auth} -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \\\n    -d '{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{{}},\"clientInfo\":{{\"name\":\"curl\",\"version\":\"0\"}}}}}}'\n\nClaude Code:\n  claude mcp add --transport http quire {url}{header}\n\n"
    ));
    print!("{text}");
}

fn open_vault(config: &Config) -> anyhow::Result<Arc<Vault>> {
    let vault = Vault::open(&config.vault, config.max_note_bytes)
        .with_context(|| format!("cannot open the vault at {}", config.vault.display()))?;
    Ok(Arc::new(vault))
}

fn open_index(config: &Config, vault: &Arc<Vault>, options: IndexOptions) -> anyhow::Result<Index> {
    if let Some(parent) = config.index.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create the index folder {}", parent.display()))?;
    }
    Index::open(&config.index, Arc::clone(vault), options)
        .with_context(|| format!("cannot open the index at {}", config.index.display()))
}

/// `quire index [--rebuild]`: brings the index up to date with a progress bar on stderr and
/// returns the summary to print.
pub fn index(config: &Config, rebuild: bool) -> anyhow::Result<String> {
    use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
    create_state_dir(config)?;
    let vault = open_vault(config)?;
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} notes ({elapsed}, eta {eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.set_message("indexing");
    let progress_bar = bar.clone();
    let options = IndexOptions {
        rebuild,
        progress: Some(Box::new(move |done, total| {
            progress_bar.set_length(total as u64);
            progress_bar.set_position(done as u64);
        })),
    };
    let index = open_index(config, &vault, options)?;
    let stats = index.wait_ready().context("the index could not be built")?;
    bar.finish_and_clear();
    Ok(format!(
        "indexed {} notes in {:.2} s: {} read and parsed, {} unchanged, {} removed\n  index: {}\n",
        stats.notes,
        stats.elapsed.as_secs_f64(),
        stats.parsed,
        stats.unchanged,
        stats.removed,
        config.index.display()
    ))
}

/// `quire search QUERY [--json]`: brings the index up to date, then runs one keyword search.
pub fn search(config: &Config, query: &str, json: bool, limit: u32) -> anyhow::Result<String> {
    create_state_dir(config)?;
    let vault = open_vault(config)?;
    let index = open_index(config, &vault, IndexOptions::default())?;
    let ops = Ops::new(vault, index);
    let found = ops.search(
        &Context::owner(),
        SearchNotes {
            query: query.to_string(),
            limit: Some(limit),
            ..SearchNotes::default()
        },
    )?;
    if json {
        let results: Vec<serde_json::Value> = found
            .results
            .iter()
            .map(|hit| {
                serde_json::json!({
                    "path": hit.path,
                    "title": hit.title,
                    "score": hit.score,
                    "snippet": hit.snippet,
                    "bytes": hit.bytes,
                    "modified": hit.modified,
                    "tags": hit.tags,
                })
            })
            .collect();
        let document = serde_json::json!({
            "results": results,
            "search_mode": found.search_mode,
            "reranked": found.reranked,
        });
        return Ok(format!("{}\n", serde_json::to_string_pretty(&document)?));
    }
    if found.results.is_empty() {
        return Ok(format!("no notes match {query:?}\n"));
    }
    let mut out = String::new();
    for hit in &found.results {
        out.push_str(&format!("{}  ({:.2})\n", hit.path, hit.score));
        if !hit.snippet.is_empty() {
            out.push_str(&format!("    {}\n", hit.snippet));
        }
    }
    Ok(out)
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
    let transport = match &config.http {
        Some(http) => format!(
            "Streamable HTTP on {} ({})",
            http.listen,
            if http.auth { "bearer auth" } else { "no auth" }
        ),
        None => "stdio".to_string(),
    };
    format!(
        "configuration is valid\n  config file:    {}\n  vault:          {}\n  state dir:      {}\n  index:          {}\n  max note bytes: {}\n  transport:      {transport}\n  read only:      {}\n  disabled tools: {}\n",
        config
            .config_file
            .as_ref()
            .map_or_else(|| "(none)".to_string(), |p| p.display().to_string()),
        config.vault.display(),
        config.state_dir.display(),
        config.index.display(),
        config.max_note_bytes,
        config.read_only,
        if config.disabled_tools.is_empty() {
            "(none)".to_string()
        } else {
            config.disabled_tools.join(", ")
        },
    )
}
