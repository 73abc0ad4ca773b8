//! OAuth Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, as the MCP
//! 2025-11-25 authorization spec uses them): a client whose `client_id` is an https URL is
//! described by the JSON document at that URL, which Quire fetches and treats as a registration.
//!
//! The fetch is the one request Quire makes on behalf of an unauthenticated party, so it is held
//! tight against server-side request forgery: https on the default port only, every address the
//! host resolves to must be public (checked in the resolver, so the connection goes only to
//! checked addresses and DNS rebinding cannot slip a private one in), no redirects, a size cap, a
//! timeout, and the system's CA store. Documents are cached as their `Cache-Control` says, within
//! bounds. Nothing here writes the OAuth database: these clients are never stored.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, StatusCode, header};
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use serde::Deserialize;
use url::Url;

use super::register::acceptable_redirect;
use super::store::Client;
use super::{MAX_FIELD_CHARS, MAX_REDIRECT_URIS};

/// The draft suggests 5 KB; real documents (claude.ai's included) are a few hundred bytes.
pub const MAX_DOCUMENT_BYTES: usize = 5 * 1024;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
const TOTAL_TIMEOUT: Duration = Duration::from_secs(5);
/// Without caching headers a document is reused this long.
const DEFAULT_CACHE: Duration = Duration::from_secs(300);
/// `max-age` is honoured within these bounds: a tiny one would refetch on every step of one
/// authorization, a huge one would keep a withdrawn document alive.
const MIN_CACHE: Duration = Duration::from_secs(60);
const MAX_CACHE: Duration = Duration::from_secs(24 * 3600);
const MAX_CACHED_DOCUMENTS: usize = 256;

/// Why a URL client ID was not accepted; the text is shown on the consent page.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CimdError {
    #[error(
        "This client identifies itself by a URL (a Client ID Metadata Document), and this Quire does not accept those: `[oauth] client_id_metadata_documents` is off. Turn it on, or use a client that registers itself (dynamic client registration)."
    )]
    Disabled,
    #[error("The client ID {0:?} is not an acceptable Client ID Metadata Document URL: {1}.")]
    BadUrl(String, &'static str),
    #[error(
        "The client's metadata document at {0} is not reachable from here: its host resolves to a private, loopback or link-local address, which Quire never fetches from."
    )]
    PrivateAddress(String),
    #[error("The client's metadata document at {0} could not be fetched: {1}.")]
    Fetch(String, String),
    #[error("The client's metadata document at {0} is not valid: {1}.")]
    Invalid(String, String),
}

#[derive(Debug, Clone)]
pub struct CimdSettings {
    /// Tests only: loopback addresses on this port are allowed.
    pub test_loopback_port: Option<u16>,
}

/// Fetches, validates and caches Client ID Metadata Documents.
pub struct MetadataFetcher {
    http: reqwest::Client,
    settings: CimdSettings,
    cache: Mutex<HashMap<String, (Client, Instant)>>,
}

impl std::fmt::Debug for MetadataFetcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MetadataFetcher")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// Whether a `client_id` claims to be a URL (registered client IDs are base64url, never with `:`).
pub fn is_url_client_id(client_id: &str) -> bool {
    client_id.contains(':')
}

impl MetadataFetcher {
    pub fn new(settings: CimdSettings) -> Result<MetadataFetcher, reqwest::Error> {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(TOTAL_TIMEOUT)
            .https_only(true)
            .no_proxy()
            .user_agent(concat!("quire/", env!("CARGO_PKG_VERSION")))
            .dns_resolver(Arc::new(PublicOnlyResolver {
                allow_loopback: settings.test_loopback_port.is_some(),
            }))
            .build()?;
        Ok(MetadataFetcher {
            http,
            settings,
            cache: Mutex::new(HashMap::new()),
        })
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, HashMap<String, (Client, Instant)>> {
        self.cache.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The client a URL client ID describes, from the cache or fetched now.
    pub async fn client(&self, client_id: &str) -> Result<Client, CimdError> {
        let url = self.check_url(client_id)?;
        if let Some((client, expires)) = self.cache().get(client_id)
            && *expires > Instant::now()
        {
            return Ok(client.clone());
        }
        let (client, lifetime) = self.fetch(client_id, url).await?;
        if let Some(lifetime) = lifetime {
            let now = Instant::now();
            let mut cache = self.cache();
            cache.retain(|_, (_, expires)| *expires > now);
            if cache.len() >= MAX_CACHED_DOCUMENTS
                && let Some(soonest) = cache
                    .iter()
                    .min_by_key(|(_, (_, expires))| *expires)
                    .map(|(key, _)| key.clone())
            {
                cache.remove(&soonest);
            }
            cache.insert(client_id.to_string(), (client.clone(), now + lifetime));
        }
        Ok(client)
    }

    /// The URL rules of the draft (https, a path, no dot segments, no fragment or credentials),
    /// plus Quire's own: the default port, and no IP literal that is not public.
    fn check_url(&self, client_id: &str) -> Result<Url, CimdError> {
        let bad = |why: &'static str| CimdError::BadUrl(client_id.to_string(), why);
        if client_id.len() > MAX_FIELD_CHARS {
            return Err(bad("it is too long"));
        }
        let url = Url::parse(client_id).map_err(|_| bad("it is not a URL"))?;
        if url.scheme() != "https" {
            return Err(bad("it must be an https URL"));
        }
        // The parsed URL is normalised (dot segments removed, host lower-cased, default port
        // dropped): a difference from the raw text means it had dot segments or was not in the
        // one form the document must repeat byte for byte.
        if url.as_str() != client_id {
            return Err(bad(
                "it is not in normal form (dot segments, an upper-case host, an empty port or such)",
            ));
        }
        if url.fragment().is_some() {
            return Err(bad("it must not have a fragment"));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(bad("it must not carry a user name or password"));
        }
        if url.path() == "/" || url.path().is_empty() {
            return Err(bad("it must have a path"));
        }
        let port = url.port();
        let test_port = self.settings.test_loopback_port;
        if port.is_some() && port != test_port {
            return Err(bad(
                "it must use the default https port (443); Quire fetches nothing else",
            ));
        }
        match url.host() {
            Some(url::Host::Ipv4(ip)) if !self.allowed(IpAddr::V4(ip)) => {
                Err(CimdError::PrivateAddress(client_id.to_string()))
            }
            Some(url::Host::Ipv6(ip)) if !self.allowed(IpAddr::V6(ip)) => {
                Err(CimdError::PrivateAddress(client_id.to_string()))
            }
            Some(_) => Ok(url),
            None => Err(bad("it has no host")),
        }
    }

    fn allowed(&self, ip: IpAddr) -> bool {
        is_public(ip) || (self.settings.test_loopback_port.is_some() && ip.is_loopback())
    }

    async fn fetch(
        &self,
        client_id: &str,
        url: Url,
    ) -> Result<(Client, Option<Duration>), CimdError> {
        let failed = |why: String| CimdError::Fetch(client_id.to_string(), why);
        let mut response = self
            .http
            .get(url)
            .header(header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|error| {
                if caused_by_private_address(&error) {
                    CimdError::PrivateAddress(client_id.to_string())
                } else if error.is_timeout() {
                    failed(format!(
                        "no answer within {} seconds",
                        TOTAL_TIMEOUT.as_secs()
                    ))
                } else {
                    failed(describe(&error))
                }
            })?;
        let status = response.status();
        if status != StatusCode::OK {
            // Redirects included: the draft forbids following them.
            return Err(failed(format!("the server answered {status}, not 200 OK")));
        }
        let invalid = |why: String| CimdError::Invalid(client_id.to_string(), why);
        if !is_json(response.headers()) {
            return Err(invalid(
                "its content type is not application/json (or application/…+json)".into(),
            ));
        }
        if response
            .content_length()
            .is_some_and(|length| length > MAX_DOCUMENT_BYTES as u64)
        {
            return Err(too_big(client_id));
        }
        let lifetime = cache_lifetime(response.headers());
        let mut body = Vec::new();
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    body.extend_from_slice(&chunk);
                    if body.len() > MAX_DOCUMENT_BYTES {
                        return Err(too_big(client_id));
                    }
                }
                Ok(None) => break,
                Err(error) if error.is_timeout() => {
                    return Err(failed(format!(
                        "no complete answer within {} seconds",
                        TOTAL_TIMEOUT.as_secs()
                    )));
                }
                Err(error) => return Err(failed(describe(&error))),
            }
        }
        let client = parse_document(client_id, &body).map_err(invalid)?;
        Ok((client, lifetime))
    }
}

fn too_big(client_id: &str) -> CimdError {
    CimdError::Invalid(
        client_id.to_string(),
        format!("it is larger than {MAX_DOCUMENT_BYTES} bytes"),
    )
}

/// The error and its causes in one line, for the consent page (no secrets are involved).
fn describe(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

fn caused_by_private_address(error: &reqwest::Error) -> bool {
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        if cause.is::<PrivateAddressError>() {
            return true;
        }
        source = cause.source();
    }
    false
}

fn is_json(headers: &HeaderMap) -> bool {
    let Some(value) = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let essence = value
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    essence == "application/json"
        || (essence.starts_with("application/") && essence.ends_with("+json"))
}

/// How long a document may be reused: `None` for `no-store`/`no-cache`/`max-age=0`, else
/// `max-age` clamped to the bounds, else the default.
fn cache_lifetime(headers: &HeaderMap) -> Option<Duration> {
    let mut max_age = None;
    for value in headers.get_all(header::CACHE_CONTROL) {
        let Ok(value) = value.to_str() else {
            return None;
        };
        for directive in value.split(',') {
            let directive = directive.trim().to_ascii_lowercase();
            if directive == "no-store" || directive == "no-cache" {
                return None;
            }
            if let Some(seconds) = directive.strip_prefix("max-age=") {
                max_age = Some(seconds.trim_matches('"').parse::<u64>().unwrap_or(0));
            }
        }
    }
    match max_age {
        Some(0) => None,
        Some(seconds) => Some(Duration::from_secs(seconds).clamp(MIN_CACHE, MAX_CACHE)),
        None => Some(DEFAULT_CACHE),
    }
}

#[derive(Debug, Deserialize)]
struct Document {
    client_id: Option<String>,
    client_name: Option<String>,
    redirect_uris: Option<Vec<String>>,
    token_endpoint_auth_method: Option<String>,
    grant_types: Option<Vec<String>>,
    response_types: Option<Vec<String>>,
    client_secret: Option<serde_json::Value>,
    client_secret_expires_at: Option<serde_json::Value>,
}

/// Validates a document's bytes against its URL; the error says what is wrong.
pub fn parse_document(client_id: &str, body: &[u8]) -> Result<Client, String> {
    let value: serde_json::Value =
        serde_json::from_slice(body).map_err(|_| "it is not JSON".to_string())?;
    if !value.is_object() {
        return Err("it is not a JSON object".into());
    }
    let document: Document = serde_json::from_value(value)
        .map_err(|error| format!("a field has the wrong type ({error})"))?;
    match document.client_id.as_deref() {
        Some(id) if id == client_id => {}
        Some(id) => {
            return Err(format!(
                "its client_id {id:?} is not the URL it was fetched from"
            ));
        }
        None => return Err("it has no client_id".into()),
    }
    if document.client_secret.is_some() || document.client_secret_expires_at.is_some() {
        return Err("it contains a client secret, which a public document must never hold".into());
    }
    if let Some(method) = document.token_endpoint_auth_method.as_deref()
        && method != "none"
    {
        return Err(format!(
            "token_endpoint_auth_method is {method:?}; Quire accepts public clients only (\"none\", PKCE protects the code)"
        ));
    }
    if document
        .grant_types
        .as_ref()
        .is_some_and(|types| !types.iter().any(|t| t == "authorization_code"))
    {
        return Err("grant_types does not include authorization_code".into());
    }
    if document
        .response_types
        .as_ref()
        .is_some_and(|types| !types.iter().any(|t| t == "code"))
    {
        return Err("response_types does not include code".into());
    }
    let redirect_uris = document.redirect_uris.unwrap_or_default();
    if redirect_uris.is_empty() || redirect_uris.len() > MAX_REDIRECT_URIS {
        return Err(format!(
            "it must list between 1 and {MAX_REDIRECT_URIS} redirect_uris"
        ));
    }
    if let Some(bad) = redirect_uris
        .iter()
        .find(|uri| uri.len() > MAX_FIELD_CHARS || !acceptable_redirect(uri))
    {
        return Err(format!(
            "redirect URI {bad:?} is not accepted (https, or http on a loopback address, without a fragment)"
        ));
    }
    Ok(Client {
        client_id: client_id.to_string(),
        client_name: document
            .client_name
            .map(|name| name.chars().take(200).collect()),
        redirect_uris,
        document_host: Url::parse(client_id)
            .ok()
            .and_then(|url| url.host_str().map(str::to_string)),
    })
}

/// An address the fetcher may connect to: globally routable unicast, by the IANA special-purpose
/// registries (private, shared, loopback, link-local, documentation, benchmarking, multicast,
/// reserved, and IPv6 forms that embed such an IPv4 address are all refused).
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(ip) => is_public_v4(ip),
        IpAddr::V6(ip) => is_public_v6(ip),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(a == 0
        || a == 10
        || a == 127
        || (a == 100 && (64..128).contains(&b))
        || (a == 169 && b == 254)
        || (a == 172 && (16..32).contains(&b))
        || (a == 192 && b == 0 && c == 0)
        || (a == 192 && b == 0 && c == 2)
        || (a == 192 && b == 88 && c == 99)
        || (a == 192 && b == 168)
        || (a == 198 && (18..20).contains(&b))
        || (a == 198 && b == 51 && c == 100)
        || (a == 203 && b == 0 && c == 113)
        || a >= 224)
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let segments = ip.segments();
    if let Some(v4) = ip.to_ipv4_mapped() {
        return is_public_v4(v4);
    }
    let embedded = |high: u16, low: u16| {
        Ipv4Addr::new((high >> 8) as u8, high as u8, (low >> 8) as u8, low as u8)
    };
    match segments[0] {
        // NAT64 (64:ff9b::/96) and 6to4 (2002::/16) carry an IPv4 address that decides.
        0x0064 if segments[1] == 0xff9b => is_public_v4(embedded(segments[6], segments[7])),
        0x2002 => is_public_v4(embedded(segments[1], segments[2])),
        // Teredo, ORCHID and documentation, and the rest of 2001::/23's special purposes.
        0x2001 if segments[1] < 0x0200 || segments[1] == 0x0db8 => false,
        // Global unicast is 2000::/3; everything else (::/8 with loopback and unspecified,
        // fc00::/7 unique local, fe80::/10 link-local, ff00::/8 multicast) is not public.
        first => (0x2000..0x4000).contains(&first),
    }
}

#[derive(Debug, thiserror::Error)]
#[error("the host resolves to a private, loopback or link-local address")]
struct PrivateAddressError;

/// Resolves with the system resolver and refuses the name when any address is not public, so a
/// name cannot point Quire at the inside of its own network.
struct PublicOnlyResolver {
    allow_loopback: bool,
}

impl Resolve for PublicOnlyResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let allow_loopback = self.allow_loopback;
        Box::pin(async move {
            let host = name.as_str().to_string();
            let addresses: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if addresses.is_empty() {
                return Err(format!("{host} has no address").into());
            }
            if addresses
                .iter()
                .any(|a| !(is_public(a.ip()) || (allow_loopback && a.ip().is_loopback())))
            {
                return Err(Box::new(PrivateAddressError) as Box<_>);
            }
            let addresses: Addrs = Box::new(addresses.into_iter());
            Ok(addresses)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "https://client.example/oauth/metadata.json";

    fn new_fetcher(test_port: Option<u16>) -> MetadataFetcher {
        MetadataFetcher::new(CimdSettings {
            test_loopback_port: test_port,
        })
        .expect("client")
    }

    #[test]
    fn url_client_ids_must_be_plain_https_urls_on_the_default_port() {
        let fetcher = new_fetcher(None);
        assert!(fetcher.check_url(ID).is_ok());
        assert!(
            fetcher
                .check_url("https://client.example/m.json?v=1")
                .is_ok()
        );
        for (bad, why) in [
            ("http://client.example/m.json", "https"),
            ("https://client.example/", "path"),
            ("https://client.example", "normal form"),
            ("https://client.example/a/../m.json", "normal form"),
            ("https://client.example/m.json#x", "fragment"),
            ("https://u:p@client.example/m.json", "password"),
            ("https://client.example:8443/m.json", "443"),
            ("https://CLIENT.example/m.json", "normal form"),
            ("not a url", "not a URL"),
        ] {
            let error = fetcher.check_url(bad).expect_err(bad).to_string();
            assert!(error.contains(why), "{bad}: {error}");
        }
        for private in [
            "https://127.0.0.1/m.json",
            "https://10.0.0.1/m.json",
            "https://169.254.169.254/latest/meta-data",
            "https://[::1]/m.json",
            "https://[::ffff:c0a8:1]/m.json",
            "https://[fe80::1]/m.json",
        ] {
            assert!(
                matches!(
                    fetcher.check_url(private),
                    Err(CimdError::PrivateAddress(_))
                ),
                "{private}"
            );
        }
        // The test escape hatch opens loopback on its one port, and nothing else.
        let hatch = new_fetcher(Some(8443));
        assert!(hatch.check_url("https://127.0.0.1:8443/m.json").is_ok());
        assert!(hatch.check_url("https://127.0.0.1:8444/m.json").is_err());
        assert!(hatch.check_url("https://10.0.0.1:8443/m.json").is_err());
    }

    #[test]
    fn only_globally_routable_addresses_are_public() {
        for public in ["1.1.1.1", "8.8.8.8", "2606:4700::1111", "2a00:1450::1"] {
            assert!(is_public(public.parse().expect("ip")), "{public}");
        }
        for private in [
            "0.0.0.0",
            "10.1.2.3",
            "100.64.0.1",
            "127.0.0.1",
            "169.254.169.254",
            "172.16.0.1",
            "172.31.255.255",
            "192.0.0.8",
            "192.0.2.1",
            "192.168.1.1",
            "198.18.0.1",
            "224.0.0.1",
            "255.255.255.255",
            "::",
            "::1",
            "::ffff:127.0.0.1",
            "64:ff9b::a00:1",
            "2002:c0a8:101::1",
            "2001::1",
            "2001:db8::1",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "ff02::1",
        ] {
            assert!(!is_public(private.parse().expect("ip")), "{private}");
        }
    }

    #[test]
    fn documents_must_name_their_own_url_and_stay_public() {
        let good = br#"{"client_id":"https://client.example/oauth/metadata.json","client_name":"Example","redirect_uris":["https://client.example/cb"],"token_endpoint_auth_method":"none","grant_types":["authorization_code","refresh_token"],"response_types":["code"]}"#;
        let client = parse_document(ID, good).expect("valid");
        assert_eq!(client.redirect_uris, ["https://client.example/cb"]);
        assert_eq!(client.document_host.as_deref(), Some("client.example"));
        for (body, why) in [
            (&b"not json"[..], "not JSON"),
            (b"[1]", "not a JSON object"),
            (
                br#"{"client_id":"https://evil.example/m.json","redirect_uris":["https://a.example/cb"]}"#,
                "not the URL",
            ),
            (br#"{"redirect_uris":["https://a.example/cb"]}"#, "no client_id"),
            (
                br#"{"client_id":"https://client.example/oauth/metadata.json"}"#,
                "redirect_uris",
            ),
            (
                br#"{"client_id":"https://client.example/oauth/metadata.json","redirect_uris":["http://evil.example/cb"]}"#,
                "not accepted",
            ),
            (
                br#"{"client_id":"https://client.example/oauth/metadata.json","redirect_uris":["https://a.example/cb"],"token_endpoint_auth_method":"client_secret_basic"}"#,
                "public clients",
            ),
            (
                br#"{"client_id":"https://client.example/oauth/metadata.json","redirect_uris":["https://a.example/cb"],"client_secret":"s"}"#,
                "secret",
            ),
            (
                br#"{"client_id":"https://client.example/oauth/metadata.json","redirect_uris":"https://a.example/cb"}"#,
                "wrong type",
            ),
        ] {
            let error = parse_document(ID, body).expect_err(why);
            assert!(error.contains(why), "{why}: {error}");
        }
    }

    #[test]
    fn caching_follows_cache_control_within_bounds() {
        let lifetime = |value: Option<&str>| {
            let mut headers = HeaderMap::new();
            if let Some(value) = value {
                headers.insert(header::CACHE_CONTROL, value.parse().expect("header"));
            }
            cache_lifetime(&headers)
        };
        assert_eq!(lifetime(None), Some(DEFAULT_CACHE));
        assert_eq!(lifetime(Some("no-store")), None);
        assert_eq!(lifetime(Some("public, no-cache")), None);
        assert_eq!(lifetime(Some("max-age=0")), None);
        assert_eq!(lifetime(Some("max-age=5")), Some(MIN_CACHE));
        assert_eq!(
            lifetime(Some("public, max-age=600")),
            Some(Duration::from_secs(600))
        );
        assert_eq!(lifetime(Some("max-age=99999999")), Some(MAX_CACHE));
    }

    #[test]
    fn only_json_content_types_are_documents() {
        for (value, json) in [
            ("application/json", true),
            ("application/json; charset=utf-8", true),
            ("Application/JSON", true),
            ("application/oauth-client+json", true),
            ("text/html", false),
            ("text/json", false),
        ] {
            let mut headers = HeaderMap::new();
            headers.insert(header::CONTENT_TYPE, value.parse().expect("header"));
            assert_eq!(is_json(&headers), json, "{value}");
        }
        assert!(!is_json(&HeaderMap::new()));
    }
}
