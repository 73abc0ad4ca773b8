//! Composition root of `quire serve`: builds the components from a validated `Config` in startup
//! order, runs the chosen transport, and shuts down cleanly on SIGTERM or SIGINT. `build_ops` is
//! the one place `Ops` is assembled; the one-shot commands in `cli` use it too.
//!
//! With `main` and `cli`, the only code that uses `anyhow`: below here errors are typed.

use std::sync::Arc;

use anyhow::Context as _;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use std::path::PathBuf;
use std::time::Duration;

use crate::config::{Config, HttpConfig, Sandbox};
use crate::health::Health;
use crate::http::{Auth, HttpSettings, IdentityTokens};
use crate::index::{Index, IndexOptions, Reach, WatchGuard};
use crate::mcp::{Features, Shared};
use crate::ops::Ops;
use crate::systemd::{SandboxMode, SandboxPlan, SandboxReport, ServiceNotifier};
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
pub fn prepare(config: &Config) -> anyhow::Result<Prepared> {
    create_state_dir(config)?;
    if let Some(index_dir) = config.index.parent() {
        std::fs::create_dir_all(index_dir)
            .with_context(|| format!("cannot create the index folder {}", index_dir.display()))?;
        // The sandbox grants the index folder; SQLite's own default places it does not.
        crate::index::use_temp_folder(index_dir).with_context(|| {
            format!(
                "cannot give SQLite the index folder {} for its temporary files",
                index_dir.display()
            )
        })?;
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
    Ok(Prepared {
        inherited,
        confined: matches!(
            report,
            SandboxReport::FullyEnforced | SandboxReport::PartiallyEnforced
        ),
    })
}

/// What `prepare` leaves for `serve`.
#[derive(Debug)]
pub struct Prepared {
    /// The socket systemd passed, if any.
    pub inherited: Option<std::net::TcpListener>,
    /// Landlock confines the process to the paths (inodes) that existed at start.
    pub confined: bool,
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
    // `vault_read_file` loads pdfium on the first page it renders, after the sandbox applies.
    read_only.extend(pdfium_paths(&config.files.pdfium));
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

/// The folders pdfium may be loaded from: `pdfium::sandbox_paths`, plus the folder of the
/// library's real file when it is reached through a symbolic link (as in a Nix profile).
fn pdfium_paths(sources: &crate::files::pdf::pdfium::Sources) -> Vec<PathBuf> {
    let mut paths = crate::files::pdf::pdfium::sandbox_paths(sources);
    if let Ok(found) = crate::files::pdf::pdfium::locate(sources)
        && let Ok(real) = found.value.canonicalize()
        && let Some(folder) = real.parent()
        && !paths.iter().any(|path| path == folder)
    {
        paths.push(folder.to_path_buf());
    }
    paths
}

/// How often the background embedder looks for chunks without a vector.
const EMBED_POLL: Duration = Duration::from_secs(2);

/// Whether semantic search is set up (enabled, a library and a model found; resolving reads
/// manifests only): the index keeps embedding chunks only then (`IndexOptions::without_chunks`).
pub fn semantic_set_up(config: &Config) -> bool {
    let resolution = crate::embed::resolve(&config.search.models);
    config.search.models.enabled && resolution.library.is_ok() && resolution.model.is_ok()
}

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
/// the client goes away or SIGTERM; or fails when the vault folder is replaced by one this process
/// cannot reach (the watch guard), so systemd starts Quire again.
pub async fn serve(config: Config, prepared: Prepared, reload: Reload) -> anyhow::Result<()> {
    let Prepared {
        inherited,
        confined,
    } = prepared;
    let notifier = ServiceNotifier;
    crate::embed::return_large_buffers();
    let health = Arc::new(Health::default());
    wait_for_first_sync(&config, &notifier).await;
    // The reconcile runs in the background; tools wait for it, the MCP handshake does not.
    notifier.status("opening the vault and its index");
    let ops = build_ops(
        &config,
        IndexOptions {
            rebuild: false,
            without_chunks: !semantic_set_up(&config),
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
    if !config.read_only {
        let removed = ops.vault().remove_orphaned_temp_files();
        if removed > 0 {
            tracing::info!(
                removed,
                "removed temp files left by a Quire killed mid-write"
            );
        }
        let finished = ops.recover_moves();
        if finished > 0 {
            tracing::info!(finished, "finished moves that a killed Quire had cut short");
        }
    }
    // After the first sync (awaited above), so templates never land on a vault still arriving.
    match ops.bootstrap_memory(config.read_only, config.sync.first_sync_marker.as_deref()) {
        Ok(crate::ops::Bootstrap::Created(files)) => {
            tracing::info!(
                files = files.len(),
                "created the memory layer's starter files"
            );
        }
        Ok(_) => {}
        Err(error) => tracing::warn!(%error, "cannot create the memory layer's starter files"),
    }
    let (changes, _) = broadcast::channel(CHANGE_BUFFER);
    // The index listens before the watcher starts, so it misses no change.
    ops.index()
        .follow(changes.subscribe())
        .context("cannot start following vault changes")?;
    // Without a watcher Quire still serves; clients only miss change notifications.
    let guard = WatchGuard::start(
        ops.vault().root(),
        changes.clone(),
        ops.index().clone(),
        Reach {
            confined,
            supervised: crate::systemd::under_systemd(),
        },
    );
    // Set when the vault folder was replaced by one this process cannot reach: serving stops and
    // `serve` fails, so systemd starts Quire again on the new folder.
    let replaced = CancellationToken::new();
    tokio::spawn(guard.run(
        HEARTBEAT,
        health.register("vault watcher"),
        replaced.clone(),
    ));
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
            groups: config.tool_groups.clone(),
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
        Some(http) => {
            let stop = Stop {
                replaced: replaced.clone(),
                notifier,
            };
            serve_http(&config, &http, shared, tokens, inherited, stop, health).await?;
        }
        None => {
            tracing::info!(vault = %config.vault.display(), "serving MCP over stdio");
            notifier.ready();
            notifier.status("serving MCP over stdio");
            crate::systemd::spawn_watchdog(Arc::clone(&health));
            tokio::select! {
                served = crate::mcp::serve_stdio(shared) => {
                    served?;
                    tracing::info!("stdio client disconnected; exiting");
                }
                () = replaced.cancelled() => {}
            }
            crate::embed::process_exiting();
            notifier.stopping();
        }
    }
    if replaced.is_cancelled() {
        anyhow::bail!(
            "the vault folder {} was replaced by a new folder while Quire ran; exiting so the \
             service manager starts Quire on it",
            config.vault.display()
        );
    }
    Ok(())
}

/// What ends serving besides a client going away: SIGTERM, or the vault folder replaced.
struct Stop {
    replaced: CancellationToken,
    notifier: ServiceNotifier,
}

async fn serve_http(
    config: &Config,
    http: &HttpConfig,
    shared: Arc<Shared>,
    tokens: IdentityTokens,
    inherited: Option<std::net::TcpListener>,
    stop: Stop,
    health: Arc<Health>,
) -> anyhow::Result<()> {
    let Stop { replaced, notifier } = stop;
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
        sessions: crate::http::SessionLimits {
            total: config.http_limits.max_sessions,
            per_identity: config.http_limits.max_sessions_per_identity,
        },
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
        .context("cannot open the OAuth state (oauth.db and its key)")?
        .with_trusted_proxies(config.http_limits.trusted_proxies.clone());
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
    // Listening for the stop signal starts before READY=1: a stop right after it drains cleanly.
    let signalled = termination();
    notifier.ready();
    notifier.status(&format!("serving MCP on {}", settings.base_url()));
    crate::systemd::spawn_watchdog(health);
    let shutdown = cancel.clone();
    tokio::spawn(async move {
        tokio::select! {
            () = signalled => {}
            () = replaced.cancelled() => {}
        }
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

/// SIGTERM or SIGINT. The handlers are installed when this is called, not when the future is
/// first polled: a server that has said READY=1 and is stopped at once (a test, a quick
/// `systemctl restart`) would otherwise die of the signal instead of draining.
fn termination() -> impl std::future::Future<Output = ()> + Send + 'static {
    use tokio::signal::unix::{SignalKind, signal};
    let terminate = signal(SignalKind::terminate());
    let interrupt = signal(SignalKind::interrupt());
    async move {
        match (terminate, interrupt) {
            (Ok(mut terminate), Ok(mut interrupt)) => {
                tokio::select! {
                    _ = terminate.recv() => {}
                    _ = interrupt.recv() => {}
                }
            }
            (Ok(mut only), Err(_)) | (Err(_), Ok(mut only)) => {
                only.recv().await;
            }
            (Err(_), Err(_)) => std::future::pending().await,
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

/// Opens the vault and its index and builds `Ops` over them, as every command that serves or reads
/// the vault does (and the integration tests' `TestVault`): the state directory (created private
/// when missing) holds the audit log; the vault takes the sync lock; the configured time zone and
/// daily-notes overrides apply. The index reconciles in the background with `index_options`;
/// callers that must see the whole vault first wait on `ops.index().wait_ready()`.
///
/// Callers that serve or read the vault as `serve` does pass `without_chunks` from
/// `semantic_set_up`, so no command rebuilds an index another one made.
///
/// The access policy is left to the caller: `serve` applies it and follows its reloads, one-shot
/// commands act as the owner.
pub fn build_ops(config: &Config, index_options: IndexOptions) -> anyhow::Result<Ops> {
    create_state_dir(config)?;
    let vault = Vault::open(&config.vault, config.max_note_bytes)
        .with_context(|| format!("cannot open the vault at {}", config.vault.display()))?
        .with_sync_lock(config.sync.lock_file.clone())
        .with_memory_folder(config.memory_folder.clone());
    let vault = Arc::new(vault);
    if let Some(parent) = config.index.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create the index folder {}", parent.display()))?;
    }
    let index = Index::open(&config.index, Arc::clone(&vault), index_options)
        .with_context(|| format!("cannot open the index at {}", config.index.display()))?;
    let audit_path = config.state_dir.join("audit.jsonl");
    let audit = crate::ops::AuditLog::open(&audit_path, config.audit)
        .with_context(|| format!("cannot open the audit log {}", audit_path.display()))?;
    Ok(Ops::new(vault, index)
        .with_audit(audit)
        .with_time_zone(config.time_zone.clone())
        .with_daily_notes(config.daily_notes.clone())
        .with_file_settings(config.files.clone())
        .with_protected_folders(config.protected_folders.clone())
        .with_move_journal(config.state_dir.join("moves")))
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
