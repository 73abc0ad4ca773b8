//! The consent page: a plain HTML form (no JavaScript) where the vault's owner pastes the token of
//! the identity an OAuth client should act as, and allows or denies. Every value is escaped, and
//! the page may not be framed (clickjacking).

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};

use super::authorize::AuthorizeParams;
use super::store::Client;

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// `redirect_origin`: the origin of the client's (verified) redirect URI. Browsers that enforce
/// `form-action` on the redirect after a form POST (Chromium does) would otherwise block Quire's
/// answer to the consent form, which is a redirect to the client.
fn page(status: StatusCode, body: String, redirect_origin: Option<&str>) -> Response {
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><title>Quire: connect a client</title>\
<style>body{{font-family:system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;line-height:1.5}}input[type=password]{{width:100%;padding:.4rem}}button{{padding:.4rem 1rem;margin:.8rem .5rem 0 0}}.error{{color:#a00}}</style></head><body>{body}</body></html>"
    );
    let mut response = (status, Html(html)).into_response();
    let headers = response.headers_mut();
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    let form_action = match redirect_origin {
        Some(origin) => format!("'self' {origin}"),
        None => "'self'".to_string(),
    };
    let policy = format!(
        "default-src 'none'; style-src 'unsafe-inline'; form-action {form_action}; frame-ancestors 'none'"
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_str(&policy).unwrap_or_else(|_| {
            HeaderValue::from_static("default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
        }),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}

pub fn error_page(status: StatusCode, message: &str) -> Response {
    page(
        status,
        format!(
            "<h1>Cannot connect this client</h1><p class=\"error\">{}</p>",
            escape(message)
        ),
        None,
    )
}

pub fn form(
    status: StatusCode,
    client: &Client,
    params: &AuthorizeParams,
    error: Option<&str>,
) -> Response {
    let name = client
        .client_name
        .as_deref()
        .unwrap_or("An unnamed MCP client");
    let hidden: String = [
        ("response_type", &params.response_type),
        ("client_id", &params.client_id),
        ("redirect_uri", &params.redirect_uri),
        ("state", &params.state),
        ("code_challenge", &params.code_challenge),
        ("code_challenge_method", &params.code_challenge_method),
        ("resource", &params.resource),
        ("scope", &params.scope),
    ]
    .iter()
    .filter_map(|(key, value)| {
        value.as_ref().map(|value| {
            format!(
                "<input type=\"hidden\" name=\"{key}\" value=\"{}\">",
                escape(value)
            )
        })
    })
    .collect();
    let error = error
        .map(|message| format!("<p class=\"error\">{}</p>", escape(message)))
        .unwrap_or_default();
    let redirect = params.redirect_uri.as_deref().unwrap_or_default();
    // Only an http(s) origin (scheme, host and port, nothing a header or policy could be split
    // on); the redirect URI was checked against the client's registration before this page.
    let redirect_origin = url::Url::parse(redirect)
        .ok()
        .map(|url| url.origin())
        .filter(url::Origin::is_tuple)
        .map(|origin| origin.ascii_serialization());
    // A Client ID Metadata Document client names itself; the host serving the document is what
    // actually vouches for it, so the owner sees that too.
    let vouched = client
        .document_host
        .as_deref()
        .map(|host| {
            format!(
                "<p>Its description comes from <strong>{}</strong>; connect it only if you trust that site.</p>",
                escape(host)
            )
        })
        .unwrap_or_default();
    page(
        status,
        format!(
            "<h1>Connect {name} to your vault?</h1>\
<p><strong>{name}</strong> wants to use this Quire server. It will be sent back to <code>{redirect}</code>.</p>{vouched}\
<p>Paste the token of the identity it should act as; it gets exactly that identity's folders.</p>{error}\
<form method=\"post\" action=\"authorize\">{hidden}\
<label for=\"token\">Identity token</label><input type=\"password\" id=\"token\" name=\"token\" autocomplete=\"off\" required>\
<button type=\"submit\" name=\"decision\" value=\"allow\">Allow</button>\
<button type=\"submit\" name=\"decision\" value=\"deny\" formnovalidate>Deny</button></form>",
            name = escape(name),
            redirect = escape(redirect),
        ),
        redirect_origin.as_deref(),
    )
}
