//! Serving MCP over Streamable HTTP: who may call, the listener, the OAuth server when identities
//! exist, the connection help printed at start, and a shutdown that drains in-flight requests.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use tokio_util::sync::CancellationToken;

use crate::config::{Config, HttpConfig};
use crate::health::Health;
use crate::http::{Auth, HttpSettings, IdentityTokens};
use crate::mcp::Shared;
use crate::systemd::ServiceNotifier;

/// How long in-flight HTTP requests get to finish after SIGTERM.
const DRAIN_BOUND: Duration = Duration::from_secs(10);

/// What ends serving besides a client going away: SIGTERM, or the vault folder replaced.
pub(super) struct Stop {
    pub(super) replaced: CancellationToken,
    pub(super) notifier: ServiceNotifier,
}

/// Serves MCP over Streamable HTTP until SIGTERM or the vault folder is replaced, then drains
/// in-flight requests for at most `DRAIN_BOUND`.
pub(super) async fn serve(
    config: &Config,
    http: &HttpConfig,
    shared: Arc<Shared>,
    tokens: IdentityTokens,
    inherited: Option<std::net::TcpListener>,
    stop: Stop,
    health: Arc<Health>,
) -> anyhow::Result<()> {
    let Stop { replaced, notifier } = stop;
    let auth = auth(config, http, tokens)?;
    let listener = bind(http, inherited).await?;
    // The bound address, not the configured one: port 0 means "any", and the OAuth issuer and
    // resource URLs must name the real port when there is no public URL.
    let listen = listener.local_addr().unwrap_or(http.listen);
    let mut settings = settings(config, http, auth, listen);
    if let Auth::Identities(tokens) = &settings.auth {
        settings.oauth = Some(start_oauth(config, &settings.base_url(), tokens.clone())?);
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

/// Who may call: the identities when any are configured, else the owner token (made once and
/// kept in the state directory), else, with `--no-auth`, anyone on this machine.
fn auth(config: &Config, http: &HttpConfig, tokens: IdentityTokens) -> anyhow::Result<Auth> {
    Ok(if http.auth && config.access.has_identities {
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
    })
}

/// The socket systemd passed, else one bound to the configured address.
async fn bind(
    http: &HttpConfig,
    inherited: Option<std::net::TcpListener>,
) -> anyhow::Result<tokio::net::TcpListener> {
    Ok(match inherited {
        Some(listener) => {
            tracing::info!(address = %http.listen, "using the socket systemd passed");
            tokio::net::TcpListener::from_std(listener)?
        }
        None => tokio::net::TcpListener::bind(http.listen)
            .await
            .with_context(|| format!("cannot listen on {}", http.listen))?,
    })
}

/// The HTTP adapter's settings: the configured ones, with the address actually bound.
fn settings(
    config: &Config,
    http: &HttpConfig,
    auth: Auth,
    listen: std::net::SocketAddr,
) -> HttpSettings {
    HttpSettings {
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
    }
}

/// Opens the OAuth server's state for `base_url` and starts its hourly sweep.
fn start_oauth(
    config: &Config,
    base_url: &str,
    tokens: IdentityTokens,
) -> anyhow::Result<Arc<crate::http::oauth::OAuthState>> {
    let oauth = crate::http::oauth::OAuthState::open(
        &config.state_dir,
        base_url,
        tokens,
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
    Ok(oauth)
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
