//! The HTTP surface in-process (axum `oneshot`): health, bearer auth and its 401 challenge, and
//! DNS-rebinding protection with auth on and off.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use quire::http::{Auth, HttpSettings, SessionLimits, router};
use quire::mcp::{Features, Shared};
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

use crate::support::TestVault;

const TOKEN: &str = "0123456789abcdef0123456789abcdef-test-token";
const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;

fn app(auth: Auth) -> (tempfile::TempDir, axum::Router) {
    let TestVault { dir, ops, .. } = TestVault::with_notes(&[("a.md", "# A\n")]);
    let (changes, _) = tokio::sync::broadcast::channel(16);
    let shared = Arc::new(Shared::new(
        Arc::new(ops),
        changes,
        Features::default(),
        tokio::sync::broadcast::channel(1).0,
    ));
    let settings = HttpSettings {
        listen: "127.0.0.1:8787".parse().expect("addr"),
        public_url: None,
        allowed_hosts: Vec::new(),
        auth,
        max_note_bytes: 1 << 20,
        oauth: None,
        sync_status: None,
        sessions: SessionLimits {
            total: 1024,
            per_identity: 64,
        },
    };
    let router = router(shared, &settings, CancellationToken::new());
    (dir, router)
}

fn mcp_post(host: &str, token: Option<&str>, origin: Option<&str>) -> Request<Body> {
    let mut builder = Request::post("/mcp")
        .header(header::HOST, host)
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json, text/event-stream");
    if let Some(token) = token {
        builder = builder.header(header::AUTHORIZATION, format!("Bearer {token}"));
    }
    if let Some(origin) = origin {
        builder = builder.header(header::ORIGIN, origin);
    }
    builder.body(Body::from(INITIALIZE)).expect("request")
}

async fn send(router: &axum::Router, request: Request<Body>) -> (StatusCode, String, String) {
    let response = router.clone().oneshot(request).await.expect("response");
    let status = response.status();
    let challenge = response
        .headers()
        .get(header::WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let body = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes();
    (
        status,
        challenge,
        String::from_utf8_lossy(&body).into_owned(),
    )
}

#[tokio::test]
async fn health_needs_no_token() {
    let (_dir, router) = app(Auth::OwnerToken(TOKEN.into()));
    let request = Request::get("/healthz")
        .header(header::HOST, "127.0.0.1:8787")
        .body(Body::empty())
        .expect("request");
    let (status, _, body) = send(&router, request).await;
    assert_eq!(status, StatusCode::OK);
    assert!(body.contains("ok"));
}

#[tokio::test]
async fn missing_or_wrong_token_is_401_with_a_challenge() {
    let (_dir, router) = app(Auth::OwnerToken(TOKEN.into()));
    let (status, challenge, _) = send(&router, mcp_post("127.0.0.1:8787", None, None)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(
        challenge.contains(
            "resource_metadata=\"http://127.0.0.1:8787/.well-known/oauth-protected-resource\""
        ),
        "{challenge}"
    );
    let (status, challenge, body) = send(
        &router,
        mcp_post("127.0.0.1:8787", Some("not-the-token"), None),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(challenge.contains("error=\"invalid_token\""), "{challenge}");
    assert!(!body.contains(TOKEN), "the expected token is never echoed");
    let prefix = &TOKEN[..TOKEN.len() - 1];
    let (status, _, _) = send(&router, mcp_post("127.0.0.1:8787", Some(prefix), None)).await;
    assert_eq!(
        status,
        StatusCode::UNAUTHORIZED,
        "a prefix of the token is not the token"
    );
}

#[tokio::test]
async fn the_right_token_initializes() {
    let (_dir, router) = app(Auth::OwnerToken(TOKEN.into()));
    let (status, _, body) = send(&router, mcp_post("127.0.0.1:8787", Some(TOKEN), None)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body.contains("\"serverInfo\""), "{body}");
    assert!(body.contains("\"quire\""), "{body}");
}

#[tokio::test]
async fn foreign_host_or_origin_is_refused_with_or_without_auth() {
    for auth in [Auth::OwnerToken(TOKEN.into()), Auth::Disabled] {
        let (_dir, router) = app(auth);
        let (status, _, _) = send(&router, mcp_post("evil.example", Some(TOKEN), None)).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "foreign Host");
        let (status, _, _) = send(
            &router,
            mcp_post("127.0.0.1:8787", Some(TOKEN), Some("http://evil.example")),
        )
        .await;
        assert_eq!(status, StatusCode::FORBIDDEN, "foreign Origin");
        let (status, _, _) = send(
            &router,
            mcp_post("localhost:8787", Some(TOKEN), Some("http://localhost:3000")),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "loopback Host and Origin");
    }
}

#[tokio::test]
async fn protected_resource_metadata_names_the_endpoint() {
    let (_dir, router) = app(Auth::OwnerToken(TOKEN.into()));
    let request = Request::get("/.well-known/oauth-protected-resource")
        .header(header::HOST, "127.0.0.1:8787")
        .body(Body::empty())
        .expect("request");
    let (status, _, body) = send(&router, request).await;
    assert_eq!(status, StatusCode::OK);
    let json: serde_json::Value = serde_json::from_str(&body).expect("json");
    assert_eq!(json["resource"], "http://127.0.0.1:8787/mcp");
}

#[test]
fn authorization_server_metadata_says_whether_client_id_metadata_documents_are_accepted() {
    use quire::http::IdentityTokens;
    use quire::http::oauth::{CimdSettings, OAuthState};
    for (documents, supported) in [
        (
            Some(CimdSettings {
                test_loopback_port: None,
            }),
            true,
        ),
        (None, false),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let state = OAuthState::open(
            dir.path(),
            "https://notes.example",
            IdentityTokens::new(Vec::new()),
            documents,
        )
        .expect("open");
        let metadata = state.metadata();
        assert_eq!(
            metadata["client_id_metadata_document_supported"],
            serde_json::Value::Bool(supported)
        );
        assert_eq!(metadata["issuer"], "https://notes.example");
    }
}
