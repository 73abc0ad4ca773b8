//! JSON-RPC bodies into the HTTP handler, built as `quire serve --http` builds it, over a small
//! vault. The first input byte picks how the body arrives: without a session (the handshake path),
//! inside an initialised session, or as a stateless 2026-07-28 request with its standard headers.
//! Every answer must be a well-formed response: never a 5xx, a JSON body when it says JSON, JSON
//! events when it is an event stream, and a 2xx never carries anything else.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use quire::config::{Config, Environment, Overrides};
use quire::http::{Auth, HttpSettings, SessionLimits, router};
use quire::index::IndexOptions;
use quire::mcp::{Features, Shared};
use serde_json::Value;
use tokio::runtime::Runtime;
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

const HOST: &str = "127.0.0.1:8787";
const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
/// A stream that stays open (a `subscriptions/listen`, a GET-style stream) is read this long.
const BODY_WAIT: Duration = Duration::from_millis(500);

struct App {
    runtime: Runtime,
    router: axum::Router,
    /// The session the in-session inputs use; opened again when an input ends it.
    session: Mutex<Option<String>>,
    _dir: tempfile::TempDir,
}

fn app() -> &'static App {
    static APP: OnceLock<App> = OnceLock::new();
    APP.get_or_init(|| {
        let dir = tempfile::tempdir().expect("tempdir");
        let vault = dir.path().join("vault");
        for (path, text) in [
            ("Welcome.md", "---\ntags: [start]\n---\n# Welcome\n\nSee [[Projects/Plan]].\n- [ ] a task 📅 2025-06-15\n"),
            ("Projects/Plan.md", "# Plan\n\n## Steps\n\nOne ^step-1\n"),
            ("Board.canvas", r#"{"nodes":[{"id":"a","type":"text","text":"hi","x":0,"y":0,"width":10,"height":10}],"edges":[]}"#),
        ] {
            let file = vault.join(path);
            std::fs::create_dir_all(file.parent().expect("a folder")).expect("mkdir");
            std::fs::write(file, text).expect("write");
        }
        let overrides = Overrides {
            config: None,
            vault: Some(vault),
            index: Some(dir.path().join("index.db")),
            http_listen: None,
            no_auth: false,
        };
        let environment = Environment {
            current_dir: dir.path().to_path_buf(),
            home: Some(dir.path().join("home")),
            xdg_state_home: None,
            state_directory: Some(dir.path().join("state")),
            variables: HashMap::new(),
            system_time_zone: None,
        };
        let config: Config =
            Config::load(&overrides, &environment, &quire::mcp::tool_names()).expect("config");
        let ops = quire::app::build_ops(&config, IndexOptions::default()).expect("ops");
        ops.index().wait_ready().expect("reconcile");
        let shared = Arc::new(Shared::new(
            Arc::new(ops),
            tokio::sync::broadcast::channel(16).0,
            Features::default(),
            tokio::sync::broadcast::channel(1).0,
        ));
        let settings = HttpSettings {
            listen: HOST.parse().expect("addr"),
            public_url: None,
            allowed_hosts: Vec::new(),
            auth: Auth::Disabled,
            max_note_bytes: 1 << 20,
            oauth: None,
            sync_status: None,
            sessions: SessionLimits {
                total: 1024,
                per_identity: 64,
            },
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let router = {
            let _guard = runtime.enter();
            router(shared, &settings, CancellationToken::new())
        };
        App {
            runtime,
            router,
            session: Mutex::new(None),
            _dir: dir,
        }
    })
}

fn post() -> axum::http::request::Builder {
    Request::post("/mcp")
        .header(header::HOST, HOST)
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json, text/event-stream")
}

/// Sends one request and checks the answer's shape; gives its status and any new session's id.
async fn send(router: &axum::Router, request: Request<Body>) -> (StatusCode, Option<String>) {
    let response = router
        .clone()
        .oneshot(request)
        .await
        .expect("the router is infallible");
    let status = response.status();
    let content_type = response
        .headers()
        .get(header::CONTENT_TYPE)
        .map(|value| value.to_str().expect("an ASCII content type").to_owned());
    let session = response
        .headers()
        .get("mcp-session-id")
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    let mut body = response.into_body();
    let mut bytes = Vec::new();
    // Frames until the body ends or goes quiet: an open event stream is fine, a hang is not ours.
    while let Ok(Some(frame)) = tokio::time::timeout(BODY_WAIT, body.frame()).await {
        let frame = frame.expect("a body that reads");
        if let Some(data) = frame.data_ref() {
            bytes.extend_from_slice(data);
        }
    }
    assert!(
        !status.is_server_error(),
        "{status}: {}",
        String::from_utf8_lossy(&bytes)
    );
    let is_json = content_type
        .as_deref()
        .is_some_and(|kind| kind.starts_with("application/json"));
    let is_events = content_type
        .as_deref()
        .is_some_and(|kind| kind.starts_with("text/event-stream"));
    if is_json {
        let value: Value = serde_json::from_slice(&bytes).unwrap_or_else(|error| {
            panic!(
                "{status} JSON body does not parse ({error}): {:?}",
                String::from_utf8_lossy(&bytes)
            )
        });
        check_message(&value);
    } else if is_events {
        let text = std::str::from_utf8(&bytes).expect("an event stream is UTF-8");
        for line in text.lines() {
            if let Some(data) = line.strip_prefix("data:") {
                let data = data.trim();
                if data.is_empty() {
                    continue;
                }
                let value: Value = serde_json::from_str(data).unwrap_or_else(|error| {
                    panic!("event data does not parse ({error}): {data:?}")
                });
                check_message(&value);
            }
        }
    } else if status.is_success() {
        assert!(
            bytes.is_empty(),
            "{status} with a {content_type:?} body: {:?}",
            String::from_utf8_lossy(&bytes)
        );
    }
    (status, session)
}

/// A JSON-RPC message the server sends: version 2.0, and an error has an integer code and a message.
fn check_message(value: &Value) {
    let Some(object) = value.as_object() else {
        return;
    };
    if !object.contains_key("jsonrpc") {
        return;
    }
    assert_eq!(object.get("jsonrpc"), Some(&Value::from("2.0")), "{value}");
    if let Some(error) = object.get("error") {
        assert!(error.get("code").is_some_and(Value::is_i64), "{value}");
        assert!(
            error.get("message").is_some_and(Value::is_string),
            "{value}"
        );
    }
}

async fn open_session(router: &axum::Router) -> Option<String> {
    let request = post().body(Body::from(INITIALIZE)).expect("request");
    let response = router.clone().oneshot(request).await.expect("infallible");
    let id = response
        .headers()
        .get("mcp-session-id")?
        .to_str()
        .ok()?
        .to_owned();
    drop(response);
    let request = post()
        .header("mcp-session-id", &id)
        .header("mcp-protocol-version", "2025-11-25")
        .body(Body::from(INITIALIZED))
        .expect("request");
    let _ = send(router, request).await;
    Some(id)
}

/// The method and tool name of a body, for the 2026-07-28 standard headers.
fn routing(body: &[u8]) -> (Option<String>, Option<String>) {
    let Ok(value) = serde_json::from_slice::<Value>(body) else {
        return (None, None);
    };
    let method = value
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let name = value
        .pointer("/params/name")
        .or_else(|| value.pointer("/params/uri"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    (method, name)
}

/// The check itself: panics on any violation.
pub fn run(data: &[u8]) {
    let Some((&mode, body)) = data.split_first() else {
        return;
    };
    let app = app();
    app.runtime.block_on(async {
        let mut builder = post();
        match mode % 3 {
            0 => {}
            1 => {
                let mut session = app.session.lock().await;
                if session.is_none() {
                    *session = open_session(&app.router).await;
                }
                if let Some(id) = session.as_deref() {
                    builder = builder
                        .header("mcp-session-id", id)
                        .header("mcp-protocol-version", "2025-11-25");
                }
            }
            _ => {
                builder = builder.header("mcp-protocol-version", "2026-07-28");
                let (method, name) = routing(body);
                if let Some(method) = method.filter(|m| m.is_ascii() && !m.contains(['\r', '\n']))
                    && let Ok(value) = axum::http::HeaderValue::from_str(&method)
                {
                    builder = builder.header("mcp-method", value);
                }
                if let Some(name) = name.filter(|n| n.is_ascii())
                    && let Ok(value) = axum::http::HeaderValue::from_str(&name)
                {
                    builder = builder.header("mcp-name", value);
                }
            }
        }
        let request = builder.body(Body::from(body.to_vec())).expect("request");
        let (status, session) = send(&app.router, request).await;
        if mode % 3 != 1
            && let Some(id) = session
        {
            // An input that opened a session closes it, so sessions do not pile up.
            let request = Request::delete("/mcp")
                .header(header::HOST, HOST)
                .header("mcp-session-id", id)
                .body(Body::empty())
                .expect("request");
            let _ = send(&app.router, request).await;
        }
        if mode % 3 == 1 && status == StatusCode::NOT_FOUND {
            // The input ended the session (or it expired): the next one opens another.
            *app.session.lock().await = None;
        }
    });
}
