//! Composition root: builds the components from a validated `Config` in startup order, runs the
//! chosen transport, and shuts down cleanly on SIGTERM or SIGINT.
//!
//! This is the only place (with `main`) that uses `anyhow`: below here errors are typed.

use std::sync::Arc;

use anyhow::Context as _;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use std::path::PathBuf;
use std::time::Duration;

use crate::config::{Config, HttpConfig, Sandbox};
use crate::health::Health;
use crate::http::{Auth, HttpSettings, IdentityTokens};
use crate::index::{Index, IndexOptions, VaultWatcher};
use crate::mcp::{Features, Shared};
use crate::ops::{Context, Ops, SearchNotes};
use crate::systemd::{SandboxMode, SandboxPlan, ServiceNotifier};
use crate::vault::Vault;

/// Buffered vault changes per listener before a slow client is told to re-list.
const CHANGE_BUFFER: usize = 1024;

/// How long in-flight HTTP requests get to finish after SIGTERM.
const DRAIN_BOUND: Duration = Duration::from_secs(10);

/// How often components that the watchdog guards must show progress.
const HEARTBEAT: Duration = Duration::from_secs(1);

/// What must happen before the async runtime exists: the state directory (landlock can only allow
/// paths that exist), the socket systemd passed, and the sandbox itself, so every thread the
/// runtime starts inherits it.
pub fn prepare(config: &Config) -> anyhow::Result<Option<std::net::TcpListener>> {
    create_state_dir(config)?;
    if let Some(index_dir) = config.index.parent() {
        std::fs::create_dir_all(index_dir)
            .with_context(|| format!("cannot create the index folder {}", index_dir.display()))?;
    }
    if let Some(lock_file) = config.sync.lock_file.as_ref().filter(|file| !file.exists()) {
        // It must exist before landlock, which allows only existing paths; the sync service
        // usually creates it, and either side creating it first is fine.
        std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(lock_file)
            .with_context(|| format!("cannot create the sync lock file {}", lock_file.display()))?;
    }
    let inherited = crate::systemd::inherited_listener()?;
    let plan = sandbox_plan(config, inherited.is_none());
    let report = crate::systemd::apply_sandbox(&plan)?;
    tracing::info!(sandbox = %report, "sandbox");
    Ok(inherited)
}

/// Everything Quire may touch, derived from the configuration.
pub fn sandbox_plan(config: &Config, binds_itself: bool) -> SandboxPlan {
    let mut read_write = vec![config.state_dir.clone()];
    let mut read_only: Vec<PathBuf> = Vec::new();
    if config.read_only {
        read_only.push(config.vault.clone());
    } else {
        read_write.push(config.vault.clone());
    }
    if let Some(index_dir) = config.index.parent() {
        read_write.push(index_dir.to_path_buf());
    }
    read_only.extend(config.config_file.iter().cloned());
    // Its folder too, so a config saved the usual way (a new file renamed over the old one, as
    // editors and configuration tools do) is still readable when it is reloaded; never a home
    // folder or the root, which would open far more than configuration.
    let home = std::env::var_os("HOME").and_then(|home| std::fs::canonicalize(home).ok());
    read_only.extend(
        config
            .config_file
            .iter()
            .filter_map(|file| std::fs::canonicalize(file).ok())
            .filter_map(|file| file.parent().map(PathBuf::from))
            .filter(|folder| folder.parent().is_some() && Some(folder) != home.as_ref()),
    );
    // The folders of token files, not just the files: rotating a token by renaming a new file
    // into place must still be readable on reload.
    read_only.extend(
        config
            .access
            .token_files
            .iter()
            .filter_map(|file| file.parent().map(PathBuf::from))
            .filter(|folder| folder.exists()),
    );
    if let Some(credentials) = std::env::var_os("CREDENTIALS_DIRECTORY") {
        read_only.push(PathBuf::from(credentials));
    }
    let mut connect_ports = Vec::new();
    if config.fetches_client_metadata(!binds_itself) {
        // Client ID Metadata Documents: https on its default port (the fetcher refuses others),
        // and DNS over TCP for answers too long for UDP. Name resolution and the CA store need
        // their files (on NixOS these are links into /nix/store, which is readable anyway).
        connect_ports.extend([443, 53]);
        connect_ports.extend(config.oauth.test_loopback_port);
        read_only.extend(
            OUTBOUND_HTTPS_FILES
                .iter()
                .map(PathBuf::from)
                .filter(|path| path.exists()),
        );
        for variable in ["SSL_CERT_FILE", "SSL_CERT_DIR"] {
            read_only.extend(std::env::var_os(variable).map(PathBuf::from));
        }
    }
    // A time zone database named by `$TZDIR` (NixOS sets it for services) stays readable, so
    // zones resolve on a config reload as they did at start.
    if let Some(tzdir) = std::env::var_os("TZDIR").filter(|dir| !dir.is_empty()) {
        read_only.push(PathBuf::from(tzdir));
    }
    // The model worker loads the library and models after the sandbox applies.
    read_only.extend(semantic_paths(&crate::embed::resolve(
        &config.search.models,
    )));
    // The sync's files: the lock is opened for reading (enough for flock); the marker and status
    // are replaced by rename, so their folders, which must exist (the sync service makes them).
    read_only.extend(config.sync.lock_file.iter().cloned());
    read_only.extend(
        [&config.sync.first_sync_marker, &config.sync.status_file]
            .into_iter()
            .flatten()
            .filter_map(|file| file.parent().map(PathBuf::from))
            .filter(|folder| folder.is_dir()),
    );
    SandboxPlan {
        mode: match config.sandbox {
            Sandbox::Required => SandboxMode::Required,
            Sandbox::BestEffort => SandboxMode::BestEffort,
            Sandbox::Off => SandboxMode::Off,
        },
        read_write,
        read_only,
        bind_port: config
            .http
            .as_ref()
            .filter(|_| binds_itself)
            .map(|http| http.listen.port()),
        connect_ports,
    }
}

/// What resolving a host name and checking a server certificate read, on Debian-like systems
/// (glibc's resolver and NSS configuration, the CA store) and with systemd-resolved.
const OUTBOUND_HTTPS_FILES: &[&str] = &[
    "/etc/resolv.conf",
    "/etc/hosts",
    "/etc/nsswitch.conf",
    "/etc/host.conf",
    "/etc/gai.conf",
    "/etc/ssl",
    "/etc/pki",
    "/etc/ca-certificates",
    "/run/systemd/resolve",
];

/// The folders semantic search reads: the library's (and, through a symlink, its target's) and
/// the model folders.
fn semantic_paths(resolution: &crate::embed::Resolution) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    if let Ok(library) = &resolution.library {
        for path in [
            Some(library.value.clone()),
            library.value.canonicalize().ok(),
        ]
        .into_iter()
        .flatten()
        {
            if let Some(parent) = path.parent() {
                paths.push(parent.to_path_buf());
            }
        }
    }
    if let Ok(model) = &resolution.model {
        paths.push(model.value.dir.clone());
    }
    if let Some(Ok(reranker)) = &resolution.reranker {
        paths.push(reranker.value.dir.clone());
    }
    if resolution.library.is_ok() && resolution.model.is_ok() {
        // ONNX Runtime reads the CPU's features to pick its kernels.
        paths.push(PathBuf::from("/proc/cpuinfo"));
        paths.push(PathBuf::from("/sys/devices/system/cpu"));
    }
    paths.dedup();
    paths
}

/// How often the background embedder looks for chunks without a vector.
const EMBED_POLL: Duration = Duration::from_secs(2);

/// Loads the model once the keyword index is ready, then keeps the vectors current on a thread of
/// its own. Any failure leaves search keyword-only, with the reason logged and reported.
fn start_semantic(config: &Config, ops: Arc<Ops>) {
    let search = config.search.clone();
    let resolution = crate::embed::resolve(&search.models);
    if resolution.library.is_err() || resolution.model.is_err() {
        // Nothing to load (resolving reads manifests only): keyword-only from the first call,
        // never "the model is still loading" for a model that is not there.
        let error = match resolution.start() {
            Err(error) => error.to_string(),
            Ok(_) => "semantic search could not be set up".to_string(),
        };
        if search.models.enabled {
            tracing::warn!(%error, "semantic search is off; search is keyword-only (`quire doctor` says more)");
        }
        ops.disable_semantic(error);
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("quire-semantic".into())
        .spawn(move || {
            if ops.index().wait_ready().is_err() {
                return;
            }
            let service = match resolution.start() {
                Ok(service) => service,
                Err(error) => {
                    if search.models.enabled {
                        tracing::warn!(%error, "semantic search is off; search is keyword-only (`quire doctor` says more)");
                    }
                    ops.disable_semantic(error.to_string());
                    return;
                }
            };
            let rerank = search.rerank == crate::config::RerankMode::Blended;
            if let Err(error) = ops.enable_semantic(crate::ops::SemanticSearch::new(service, rerank)) {
                tracing::warn!(%error, "semantic search is off: the vector store cannot be prepared");
                ops.disable_semantic(error.to_string());
                return;
            }
            tracing::info!(status = %ops.semantic_status(), "semantic search enabled; embedding in the background");
            loop {
                match ops.embed_pending(&|_| {}) {
                    Ok(pass) if pass.embedded > 0 || pass.pruned > 0 => {
                        tracing::info!(embedded = pass.embedded, pruned = pass.pruned, chunks = pass.counts.chunks, "semantic vectors updated");
                    }
                    Ok(_) => {}
                    // The process is exiting under a load or a pass: nothing failed.
                    Err(_) if crate::embed::is_exiting() => return,
                    Err(error) => {
                        tracing::warn!(%error, "embedding failed; retrying later");
                    }
                }
                if Arc::strong_count(&ops) == 1 {
                    return;
                }
                std::thread::sleep(EMBED_POLL);
            }
        });
    if let Err(error) = spawned {
        tracing::warn!(%error, "cannot start the semantic search thread; search is keyword-only");
    }
}

/// Serves MCP over HTTP when configured or when systemd passed a socket, else over stdio, until
/// the client goes away or SIGTERM.
pub async fn serve(
    config: Config,
    inherited: Option<std::net::TcpListener>,
    reload: Reload,
) -> anyhow::Result<()> {
    let notifier = ServiceNotifier;
    let health = Arc::new(Health::default());
    wait_for_first_sync(&config, &notifier).await;
    notifier.status("opening the vault");
    let vault = open_vault(&config)?;
    // The reconcile runs in the background; tools wait for it, the MCP handshake does not.
    notifier.status("opening the index");
    let index = open_index(
        &config,
        &vault,
        IndexOptions {
            rebuild: false,
            // STATUS=indexing 4000/10000 while the first reconcile runs (systemctl status shows it).
            progress: Some(Box::new(move |done, total| {
                if done == total {
                    notifier.status(&format!("serving MCP; {total} notes indexed"));
                } else if done % 1024 == 0 {
                    notifier.status(&format!("indexing {done}/{total}"));
                }
                true
            })),
            heartbeat: Some(health.register("index writer")),
        },
    )?;
    let (changes, _) = broadcast::channel(CHANGE_BUFFER);
    // The index listens before the watcher starts, so it misses no change.
    index
        .follow(changes.subscribe())
        .context("cannot start following vault changes")?;
    // Without a watcher Quire still serves; clients only miss change notifications.
    let watcher = match VaultWatcher::start(vault.root(), changes.clone()) {
        Ok(watcher) => Some(watcher),
        Err(error) => {
            tracing::warn!(%error, "vault changes will not be reported to clients");
            None
        }
    };
    if let Some(watcher) = &watcher {
        let heartbeat = health.register("vault watcher");
        let alive = watcher.liveness();
        tokio::spawn(async move {
            let mut ticker = tokio::time::interval(HEARTBEAT);
            loop {
                ticker.tick().await;
                if alive.load(std::sync::atomic::Ordering::Relaxed) {
                    heartbeat.beat();
                }
            }
        });
    }
    let audit_path = config.state_dir.join("audit.jsonl");
    let audit = crate::ops::AuditLog::open(&audit_path)
        .with_context(|| format!("cannot open the audit log {}", audit_path.display()))?;
    let ops = Ops::new(vault, index)
        .with_audit(audit)
        .with_time_zone(config.time_zone.clone())
        .with_daily_notes(config.daily_notes.clone());
    log_access(&config.access);
    ops.set_policy(config.access.policy.clone());
    let ops = Arc::new(ops);
    start_semantic(&config, Arc::clone(&ops));
    let (policy_changes, _) = broadcast::channel(4);
    let shared = Arc::new(Shared::new(
        ops,
        changes,
        Features {
            read_only: config.read_only,
            disabled_tools: config.disabled_tools.clone(),
        },
        policy_changes,
    ));
    tokio::spawn(Arc::clone(&shared).follow_changes());
    let tokens = IdentityTokens::new(config.access.tokens.clone());
    tokio::spawn(follow_access_changes(
        reload,
        config.config_file.clone(),
        Arc::clone(&shared),
        tokens.clone(),
    ));
    let http = match (&config.http, &inherited) {
        (Some(http), _) => Some(http.clone()),
        // A socket from systemd means HTTP even without http.listen; auth stays on.
        (None, Some(listener)) => Some(HttpConfig {
            listen: listener.local_addr()?,
            public_url: None,
            allowed_hosts: Vec::new(),
            auth: true,
        }),
        (None, None) => None,
    };
    match http {
        Some(http) => serve_http(&config, &http, shared, tokens, inherited, notifier, health).await,
        None => {
            tracing::info!(vault = %config.vault.display(), "serving MCP over stdio");
            notifier.ready();
            notifier.status("serving MCP over stdio");
            crate::systemd::spawn_watchdog(Arc::clone(&health));
            crate::mcp::serve_stdio(shared).await?;
            tracing::info!("stdio client disconnected; exiting");
            crate::embed::process_exiting();
            notifier.stopping();
            Ok(())
        }
    }
}

async fn serve_http(
    config: &Config,
    http: &HttpConfig,
    shared: Arc<Shared>,
    tokens: IdentityTokens,
    inherited: Option<std::net::TcpListener>,
    notifier: ServiceNotifier,
    health: Arc<Health>,
) -> anyhow::Result<()> {
    let auth = if http.auth && config.access.has_identities {
        Auth::Identities(tokens)
    } else if http.auth {
        let (token, created) = crate::http::load_or_create_owner_token(&config.state_dir)?;
        if created {
            tracing::info!(state_dir = %config.state_dir.display(), "created the owner token");
        }
        Auth::OwnerToken(token)
    } else {
        tracing::warn!("authentication is off (--no-auth); only this machine can connect");
        Auth::Disabled
    };
    let listener = match inherited {
        Some(listener) => {
            tracing::info!(address = %http.listen, "using the socket systemd passed");
            tokio::net::TcpListener::from_std(listener)?
        }
        None => tokio::net::TcpListener::bind(http.listen)
            .await
            .with_context(|| format!("cannot listen on {}", http.listen))?,
    };
    // The bound address, not the configured one: port 0 means "any", and the OAuth issuer and
    // resource URLs must name the real port when there is no public URL.
    let listen = listener.local_addr().unwrap_or(http.listen);
    let mut settings = HttpSettings {
        listen,
        public_url: http.public_url.clone(),
        allowed_hosts: http.allowed_hosts.clone(),
        auth,
        max_note_bytes: config.max_note_bytes,
        oauth: None,
        sync_status: config.sync.status_file.clone(),
    };
    if let Auth::Identities(tokens) = &settings.auth {
        let oauth = crate::http::oauth::OAuthState::open(
            &config.state_dir,
            &settings.base_url(),
            tokens.clone(),
            config
                .oauth
                .client_id_metadata_documents
                .then_some(crate::http::oauth::CimdSettings {
                    test_loopback_port: config.oauth.test_loopback_port,
                }),
        )
        .context("cannot open the OAuth state (oauth.db and its key)")?;
        if let Some(port) = config.oauth.test_loopback_port {
            tracing::warn!(
                port,
                "{} is set: Client ID Metadata Documents may come from loopback addresses (tests only)",
                crate::config::CIMD_TEST_PORT_VARIABLE
            );
        }
        let oauth = Arc::new(oauth);
        tokio::spawn(sweep_oauth(Arc::clone(&oauth)));
        settings.oauth = Some(oauth);
    }
    let cancel = CancellationToken::new();
    let closing = shared.closing.clone();
    let router = crate::http::router(shared, &settings, cancel.clone());
    print_connection_help(config, &settings, listener.local_addr().ok());
    notifier.ready();
    notifier.status(&format!("serving MCP on {}", settings.base_url()));
    crate::systemd::spawn_watchdog(health);
    let shutdown = cancel.clone();
    tokio::spawn(async move {
        wait_for_signal().await;
        tracing::info!("shutting down");
        crate::embed::process_exiting();
        notifier.stopping();
        // Subscription streams first, so each ends with its final result rather than a cut.
        closing.cancel();
        tokio::time::sleep(SUBSCRIPTIONS_CLOSE).await;
        shutdown.cancel();
    });
    let drain_deadline = {
        let cancel = cancel.clone();
        async move {
            cancel.cancelled().await;
            tokio::time::sleep(DRAIN_BOUND).await;
        }
    };
    tokio::select! {
        served = crate::http::serve(listener, router, cancel.cancelled_owned()) => {
            served.context("the HTTP server failed")?;
        }
        () = drain_deadline => {
            tracing::warn!(bound_s = DRAIN_BOUND.as_secs(), "in-flight requests did not finish in time; stopping anyway");
        }
    }
    Ok(())
}

/// How long subscription streams get to send their final result before the transport closes.
const SUBSCRIPTIONS_CLOSE: Duration = Duration::from_millis(200);

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
        // Under systemd stdout is the journal, which must never hold a token.
        Auth::OwnerToken(_) if crate::systemd::under_systemd() => {
            text.push_str(&format!(
                "  Token: in {}/owner-token\n",
                config.state_dir.display()
            ));
            " --header \"Authorization: Bearer <token>\"".to_string()
        }
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
        Auth::Identities(_) => {
            text.push_str(
                "  Auth:  each identity's own token (see [[identity]] in the config file)\n",
            );
            " --header \"Authorization: Bearer <the identity's token>\"".to_string()
        }
    };
    let curl_auth = header.replace("--header", "-H");
    // One stateless MCP 2026-07-28 request: it needs no session, so the line works on its own.
    // The reply comes as a server-sent event; `sed` keeps its JSON for jq and friends.
    text.push_str(&format!(
        "\nTry it (one request, no session needed: MCP 2026-07-28):\n  curl -s {url}{curl_auth} -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \\\n    -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: vault_list_notes' \\\n    -d '{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{{\"name\":\"vault_list_notes\",\"arguments\":{{\"limit\":5}},\"_meta\":{{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{{}}}}}}}}' \\\n    | sed -n 's/^data: //p'\n\nClaude Code:\n  claude mcp add --transport http quire {url}{header}\n\n"
    ));
    print!("{text}");
}

fn open_vault(config: &Config) -> anyhow::Result<Arc<Vault>> {
    let vault = Vault::open(&config.vault, config.max_note_bytes)
        .with_context(|| format!("cannot open the vault at {}", config.vault.display()))?
        .with_sync_lock(config.sync.lock_file.clone());
    Ok(Arc::new(vault))
}

/// How often Quire looks for the first-sync marker while it waits.
const FIRST_SYNC_POLL: Duration = Duration::from_secs(1);

/// Waits until the vault's first sync has completed (`[sync] first_sync_marker` exists): a vault
/// that is still arriving is never indexed, served or written. systemd orders Quire after the
/// first-sync unit already; this holds for any other way Quire is started.
async fn wait_for_first_sync(config: &Config, notifier: &ServiceNotifier) {
    let Some(marker) = &config.sync.first_sync_marker else {
        return;
    };
    let mut announced = false;
    while !marker.exists() {
        if !announced {
            announced = true;
            tracing::warn!(marker = %marker.display(), "waiting for the vault's first sync to complete before serving");
            notifier.status("waiting for the vault's first sync");
        }
        notifier.alive();
        tokio::time::sleep(FIRST_SYNC_POLL).await;
    }
    if announced {
        tracing::info!("the first sync has completed");
    }
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
pub fn index(config: &Config, rebuild: bool, embed: bool) -> anyhow::Result<String> {
    use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
    create_state_dir(config)?;
    let vault = open_vault(config)?;
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    // A spinner until the scan knows how many notes there are: never a "0/0 notes" bar.
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    bar.set_message("scanning the vault");
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    let counting =
        ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} notes ({elapsed}, eta {eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
    let progress_bar = bar.clone();
    let options = IndexOptions {
        rebuild,
        progress: Some(Box::new(move |done, total| {
            if total > 0 && progress_bar.length() != Some(total as u64) {
                progress_bar.set_style(counting.clone());
                progress_bar.set_message("indexing");
                progress_bar.set_length(total as u64);
            }
            progress_bar.set_position(done as u64);
            true
        })),
        heartbeat: None,
    };
    let index = open_index(config, &vault, options)?;
    let stats = index.wait_ready().context("the index could not be built")?;
    bar.finish_and_clear();
    let mut summary = format!(
        "indexed {} notes in {:.2} s: {} read and parsed, {} unchanged, {} removed\n  index: {}\n",
        stats.notes,
        stats.elapsed.as_secs_f64(),
        stats.parsed,
        stats.unchanged,
        stats.removed,
        config.index.display()
    );
    if embed {
        summary.push_str(&embed_now(config, Ops::new(vault, index))?);
    }
    Ok(summary)
}

/// `quire index --embed`: computes the missing vectors in the foreground with a progress bar.
fn embed_now(config: &Config, ops: Ops) -> anyhow::Result<String> {
    use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
    let service = crate::embed::resolve(&config.search.models)
        .start()
        .context("semantic search is not available (`quire doctor` says why)")?;
    let model = service.info().name.clone();
    ops.enable_semantic(crate::ops::SemanticSearch::new(service, false))?;
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} chunks ({rate}, eta {eta})")
            .map(|style| {
                // Whole chunks per second: indicatif's own {per_sec} prints four decimals.
                style.with_key(
                    "rate",
                    |state: &indicatif::ProgressState, out: &mut dyn std::fmt::Write| {
                        let _ = write!(out, "{:.0} chunks/s", state.per_sec());
                    },
                )
            })
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.set_message(format!("embedding with {model}"));
    let started = std::time::Instant::now();
    let progress_bar = bar.clone();
    let pass = ops.embed_pending(&move |counts| {
        progress_bar.set_length(counts.chunks);
        progress_bar.set_position(counts.embedded);
    })?;
    bar.finish_and_clear();
    let seconds = started.elapsed().as_secs_f64();
    Ok(format!(
        "embedded {} chunks with {model} in {seconds:.1} s ({:.0} chunks/s); {} of {} chunks have vectors, {} stale vectors removed\n",
        pass.embedded,
        pass.embedded as f64 / seconds.max(1e-9),
        pass.counts.embedded,
        pass.counts.chunks,
        pass.pruned
    ))
}

/// `quire search QUERY [--json]`: brings the index up to date, then runs one keyword search.
pub fn search(
    config: &Config,
    query: &str,
    json: bool,
    limit: u32,
    mode: crate::ops::SearchMode,
) -> anyhow::Result<String> {
    create_state_dir(config)?;
    let vault = open_vault(config)?;
    let index = open_index(config, &vault, IndexOptions::default())?;
    let audit_path = config.state_dir.join("audit.jsonl");
    let audit = crate::ops::AuditLog::open(&audit_path)
        .with_context(|| format!("cannot open the audit log {}", audit_path.display()))?;
    let ops = Ops::new(vault, index)
        .with_audit(audit)
        .with_time_zone(config.time_zone.clone())
        .with_daily_notes(config.daily_notes.clone());
    if mode != crate::ops::SearchMode::Keyword {
        // Like `serve`: a usable model means vectors (computed now when missing); otherwise the
        // answer is keyword search with a notice.
        match crate::embed::resolve(&config.search.models).start() {
            Ok(service) => {
                let rerank = config.search.rerank == crate::config::RerankMode::Blended;
                ops.enable_semantic(crate::ops::SemanticSearch::new(service, rerank))?;
                ops.embed_pending(&|_| {})?;
            }
            Err(error) => ops.disable_semantic(error.to_string()),
        }
    }
    let found = ops.search(
        &Context::owner(),
        SearchNotes {
            query: query.to_string(),
            limit: Some(limit),
            mode,
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
        let mut document = serde_json::json!({
            "results": results,
            "search_mode": found.search_mode,
            "reranked": found.reranked,
        });
        if let Some(notice) = &found.notice {
            document["notice"] = serde_json::Value::String(notice.clone());
        }
        return Ok(format!("{}\n", serde_json::to_string_pretty(&document)?));
    }
    let mut out = format!(
        "search mode: {}{}\n",
        found.search_mode,
        if found.reranked { " (reranked)" } else { "" }
    );
    if let Some(notice) = &found.notice {
        out.push_str(&format!("note: {notice}\n"));
    }
    if found.results.is_empty() {
        out.push_str(&format!("no notes match {query:?}\n"));
        return Ok(out);
    }
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
    ) + &format!("  time zone:      {}\n", config.time_zone_description())
        + &describe_search(&config.search)
        + &describe_access(&config.access)
        + &format!("  oauth:          {}\n", describe_oauth(config, false))
}

/// Whether the OAuth server runs and whether it accepts Client ID Metadata Documents (and so
/// makes outbound HTTPS requests). `socket_activated`: as for `Config::fetches_client_metadata`.
fn describe_oauth(config: &Config, socket_activated: bool) -> String {
    let serves_http_with_auth = config
        .http
        .as_ref()
        .map_or(socket_activated, |http| http.auth);
    if !config.access.has_identities || !serves_http_with_auth {
        "off (it needs HTTP with auth and at least one identity to bind grants to)".into()
    } else if config.fetches_client_metadata(socket_activated) {
        "on; Client ID Metadata Documents accepted (outbound HTTPS to port 443 of public addresses)"
            .into()
    } else {
        "on; Client ID Metadata Documents refused ([oauth] client_id_metadata_documents = false), only registered clients"
            .into()
    }
}

fn describe_search(search: &crate::config::SearchConfig) -> String {
    if !search.models.enabled {
        return "  semantic search: off (search.embeddings = false)\n".into();
    }
    // What is on disk now, not what the configuration hopes for: a model or library that is
    // not there is said to be missing.
    let resolution = crate::embed::resolve(&search.models);
    let model = match &resolution.model {
        Ok(found) => format!("{} (from {})", found.value.dir.display(), found.why),
        Err(why) => why.clone(),
    };
    let library = match &resolution.library {
        Ok(found) => format!("{} (from {})", found.value.display(), found.why),
        Err(why) => why.clone(),
    };
    format!(
        "  semantic search: rerank {}\n    model:        {model}\n    onnxruntime:  {library}\n",
        match search.rerank {
            crate::config::RerankMode::Blended => "blended",
            crate::config::RerankMode::Off => "off",
        }
    )
}

fn describe_access(access: &crate::config::Access) -> String {
    if !access.has_identities {
        return "  identities:     (none; HTTP uses the owner token)\n".to_string();
    }
    let mut text = String::from("  identities:\n");
    for (name, _) in &access.tokens {
        text.push_str(&format!(
            "    {name}: enabled (OAuth clients can bind to it)\n"
        ));
    }
    for (name, why) in &access.disabled {
        text.push_str(&format!("    {name}: disabled ({why})\n"));
    }
    text
}

/// What `quire doctor` prints: which features are on and why. It applies the configured sandbox to
/// its own process (last), so the sandbox line reports what the kernel really enforces.
pub fn doctor(config: &Config) -> String {
    let mut lines = vec![format!("quire {}", env!("CARGO_PKG_VERSION"))];
    let notes = Vault::open(&config.vault, config.max_note_bytes).map(|vault| {
        vault.scan(None).map(|files| {
            files
                .iter()
                .filter(|file| file.path.extension().as_deref() == Some("md"))
                .count()
        })
    });
    lines.push(match notes {
        Ok(Ok(count)) => format!(
            "vault:           {} ({count} notes)",
            config.vault.display()
        ),
        Ok(Err(error)) => format!(
            "vault:           {} (cannot scan: {error})",
            config.vault.display()
        ),
        Err(error) => format!(
            "vault:           {} (cannot open: {error})",
            config.vault.display()
        ),
    });
    lines.push(format!(
        "index:           {} ({})",
        config.index.display(),
        std::fs::metadata(&config.index).map_or_else(
            |_| "not built yet; `quire index` or `quire serve` builds it".to_string(),
            |meta| format!("{} KiB", meta.len() / 1024)
        )
    ));
    lines.push(format!("state directory: {}", config.state_dir.display()));
    lines.extend(doctor_sync(config));
    lines.push(format!(
        "transport:       {}",
        match &config.http {
            Some(http) if http.auth =>
                format!("Streamable HTTP on {} with bearer auth", http.listen),
            Some(http) => format!("Streamable HTTP on {} without auth (loopback)", http.listen),
            None => "stdio (HTTP when systemd passes a socket)".into(),
        }
    ));
    let env_flag = |name: &str| std::env::var_os(name).is_some();
    lines.push(format!(
        "systemd:         {}; socket activation {}; watchdog {}; journald {}",
        if crate::systemd::under_systemd() {
            "running under systemd"
        } else {
            "not under systemd"
        },
        if env_flag("LISTEN_FDS") {
            "offered"
        } else {
            "not offered"
        },
        std::env::var("WATCHDOG_USEC")
            .map_or_else(|_| "off".to_string(), |usec| format!("every {usec} us")),
        if env_flag("JOURNAL_STREAM") {
            "in use"
        } else {
            "not in use (stderr)"
        },
    ));
    // jiff describes its database only through Debug: `TimeZoneDatabase(ZoneInfo(/dir))` or
    // `TimeZoneDatabase(Bundled(available))`.
    let database = format!("{:?}", jiff::tz::db());
    lines.push(format!(
        "time zone:       {}; {}",
        config.time_zone_description(),
        match database
            .split_once("ZoneInfo(")
            .and_then(|(_, rest)| rest.split(')').next())
        {
            Some(dir) =>
                format!("tz database {dir} (the copy built into Quire covers zones it lacks)"),
            None => "no system tz database found; using the copy built into Quire".to_string(),
        }
    ));
    lines.push(format!(
        "oauth:           {}",
        describe_oauth(config, config.http.is_none())
    ));
    lines.extend(doctor_semantic(config));
    let plan = sandbox_plan(config, config.http.is_some());
    let sandbox = match crate::systemd::apply_sandbox(&plan) {
        Ok(report) => report.to_string(),
        Err(error) => error.to_string(),
    };
    lines.push(format!(
        "sandbox:         {sandbox} (sandbox = \"{}\")",
        match config.sandbox {
            Sandbox::Required => "required",
            Sandbox::BestEffort => "best-effort",
            Sandbox::Off => "off",
        }
    ));
    lines.join("\n") + "\n"
}

/// The semantic search lines of `quire doctor`: which library and model, why, and whether they
/// load (they are loaded here, so a broken model shows up now rather than as a log line later).
/// The sync service as Quire sees it: the shared files and the last run's status.
fn doctor_sync(config: &Config) -> Vec<String> {
    let sync = &config.sync;
    if sync == &crate::config::SyncConfig::default() {
        return vec!["sync:            not configured ([sync] in the config file)".into()];
    }
    let mut lines = Vec::new();
    if let Some(marker) = &sync.first_sync_marker {
        lines.push(format!(
            "first sync:      {} ({})",
            marker.display(),
            if marker.exists() {
                "done"
            } else {
                "WAITING: Quire serves only once the first sync has completed"
            }
        ));
    }
    if let Some(lock) = &sync.lock_file {
        lines.push(format!(
            "sync lock:       {} (held shared during every write; the sync takes it exclusively)",
            lock.display()
        ));
    }
    if let Some(path) = &sync.status_file {
        match crate::sync_status::read(path) {
            Ok(status) => lines.extend(status.describe()),
            Err(error) => lines.push(format!("sync:            {error}")),
        }
    }
    lines
}

fn doctor_semantic(config: &Config) -> Vec<String> {
    let resolution = crate::embed::resolve(&config.search.models);
    let mut lines = Vec::new();
    lines.push(match &resolution.library {
        Ok(found) => match crate::embed::load_runtime(&found.value) {
            Ok(version) => format!(
                "onnxruntime:     {} ({version}; from {})",
                found.value.display(),
                found.why
            ),
            Err(error) => format!(
                "onnxruntime:     WARNING {} (from {}) does not load: {error}",
                found.value.display(),
                found.why
            ),
        },
        Err(why) => format!("onnxruntime:     {why}"),
    });
    lines.push(match &resolution.model {
        Ok(found) => format!(
            "model:           {} at {} ({} dimensions; from {})",
            found.value.manifest.name,
            found.value.dir.display(),
            found.value.manifest.dimensions,
            found.why
        ),
        Err(why) => format!("model:           {why}"),
    });
    if let Some(reranker) = &resolution.reranker {
        lines.push(match reranker {
            Ok(found) => format!(
                "reranker:        {} at {} (rerank = {})",
                found.value.manifest.name,
                found.value.dir.display(),
                match config.search.rerank {
                    crate::config::RerankMode::Blended => "blended",
                    crate::config::RerankMode::Off => "off: configured but unused",
                }
            ),
            Err(why) => format!("reranker:        WARNING {why}"),
        });
    }
    let absent = config.search.models.never_set_up(&resolution);
    lines.push(match resolution.start() {
        Ok(service) => format!(
            "semantic search: on ({}{}); `vault_search` answers in hybrid mode once vectors are computed",
            service.info().name,
            service
                .info()
                .reranker
                .as_ref()
                .map(|name| format!(", reranking with {name}"))
                .unwrap_or_default()
        ),
        // Nothing installed is the default state, not a fault: say how to add a model.
        Err(_) if absent => {
            "semantic search: off, search is keyword-only (no model installed: `quire model install minilm` adds one)".to_string()
        }
        Err(error) if config.search.models.enabled => {
            format!("semantic search: WARNING off, search is keyword-only: {error}")
        }
        Err(_) => "semantic search: off (search.embeddings = false); search is keyword-only".into(),
    });
    lines
}

/// Loads the configuration again (the same file, flags and environment as at start).
pub type Reload = Arc<dyn Fn() -> Result<Config, crate::config::ConfigError> + Send + Sync>;

/// How often the config file is checked for changes; cheap (one `stat`), and quick enough that
/// an edit applies before anyone would retry.
const CONFIG_POLL: Duration = Duration::from_secs(2);

fn log_access(access: &crate::config::Access) {
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
async fn follow_access_changes(
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

/// `quire acl explain IDENTITY PATH`: what the identity may do with the path, and which rule
/// decides it.
pub fn acl_explain(config: &Config, identity: &str, path: &str) -> anyhow::Result<String> {
    use crate::acl::{Action, Principal};
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

/// The OAuth state for the `quire oauth` commands; `None` when no OAuth grant was ever made
/// here (no `oauth.db`), so listing creates nothing.
fn oauth_state(config: &Config) -> anyhow::Result<Option<crate::http::oauth::OAuthState>> {
    if !config.state_dir.join("oauth.db").exists() {
        return Ok(None);
    }
    let tokens = crate::http::IdentityTokens::new(config.access.tokens.clone());
    // The issuer only matters for tokens this process would sign or check, and it does neither.
    let state =
        crate::http::oauth::OAuthState::open(&config.state_dir, "http://localhost", tokens, None)
            .context("cannot open the OAuth state (oauth.db and its key)")?;
    Ok(Some(state))
}

/// `quire oauth list`: every OAuth grant, its identity and client, and whether it still works.
pub fn oauth_list(config: &Config) -> anyhow::Result<String> {
    use crate::http::oauth::GrantStatus;
    use crate::telemetry::escape_control_characters as clean;
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
pub fn oauth_revoke(
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

/// How often expired OAuth codes and tokens and stale registrations are removed.
const OAUTH_SWEEP: Duration = Duration::from_secs(3600);

async fn sweep_oauth(oauth: Arc<crate::http::oauth::OAuthState>) {
    let mut ticker = tokio::time::interval(OAUTH_SWEEP);
    loop {
        ticker.tick().await;
        let oauth = Arc::clone(&oauth);
        match tokio::task::spawn_blocking(move || oauth.sweep()).await {
            Ok(Ok(swept)) if swept > 0 => {
                tracing::info!(swept, "removed stale OAuth registrations")
            }
            Ok(Ok(_)) => {}
            Ok(Err(error)) => tracing::warn!(%error, "the OAuth sweep failed"),
            Err(error) => tracing::warn!(%error, "the OAuth sweep failed"),
        }
    }
}

/// `quire model install NAME` (with `install`) or `quire model list`, in `data_dir` or Quire's
/// data directory.
pub fn model(install: Option<&str>, data_dir: Option<&std::path::Path>) -> anyhow::Result<String> {
    let non_empty = |name: &str| {
        std::env::var_os(name)
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
    };
    let data_dir = match data_dir {
        Some(dir) => dir.to_path_buf(),
        None => crate::embed::data_dir(
            non_empty("XDG_DATA_HOME").as_deref(),
            non_empty("HOME").as_deref(),
        )
        .context("no data directory: set XDG_DATA_HOME or HOME, or pass --data-dir")?,
    };
    match install {
        None => Ok(crate::embed::install::list(&data_dir)),
        Some(name) => {
            let progress = std::io::IsTerminal::is_terminal(&std::io::stderr());
            let report = crate::embed::install::install(&data_dir, name, progress)?;
            Ok(report.lines.join("\n")
                + "\n`quire serve` now uses it; `quire doctor` shows what semantic search uses.\n")
        }
    }
}

/// `quire token new --identity NAME [--file FILE]`: a new random identity token (64 hex digits),
/// printed, or written to `file` with mode 0600 and never printed.
pub fn new_identity_token(
    identity: &str,
    file: Option<&std::path::Path>,
) -> anyhow::Result<String> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let token = hex::encode(rand::random::<[u8; 32]>());
    match file {
        Some(path) => {
            let mut out = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(path)
                .with_context(|| {
                    format!("cannot create {} (it must not exist yet)", path.display())
                })?;
            out.write_all(format!("{token}\n").as_bytes())
                .and_then(|()| out.sync_all())
                .with_context(|| format!("cannot write {}", path.display()))?;
            Ok(format!(
                "wrote a new token for {identity:?} to {}\nin the config file: token_file = \"{}\"\n",
                path.display(),
                path.display()
            ))
        }
        None => Ok(format!("{token}\n")),
    }
}
