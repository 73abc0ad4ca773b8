//! Rate limits of the OAuth endpoints, keyed on who is calling.
//!
//! One bucket per peer address made every client behind a reverse proxy share the proxy's bucket:
//! one client looping on `/oauth/token` got every other client's requests refused with 429. Each
//! request now draws on the bucket of its caller: the `client_id` it carries (the authorization
//! request's query, or the form posted to the consent page, the token or the revocation endpoint),
//! or, without one (registration), its address. Every caller from one address together also draws
//! on that address's bucket, ten times larger, so inventing client ids buys no more than ten
//! clients' worth of requests. A client id is kept as a keyed hash (a fixed 8 bytes, whatever its
//! length), an IPv6 address as its /64 (one host's usual share), and buckets that have filled up
//! again are dropped every few thousand requests, so the tables stay small.
//!
//! The address is the peer's, unless the peer is one of `[http] trusted_proxies`: then it is the
//! rightmost `X-Forwarded-For` hop that is not a trusted proxy (each trusted proxy appends the
//! address that connected to it, so hops to the left of the first untrusted one are whatever that
//! caller claimed). With no trusted proxies, `X-Forwarded-For` is ignored.

use std::hash::{BuildHasher, RandomState};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::body::Body;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use ipnet::IpNet;

use super::reply::{oauth_error, too_large};
use super::{MAX_BODY_BYTES, OAuthState};

/// Requests a second each caller may make, after a burst of `CALLER_BURST`.
const CALLER_PER_SECOND: u32 = 5;
const CALLER_BURST: u32 = 60;
/// How many callers' worth one address may make in all.
const ADDRESS_SHARE: u32 = 10;
/// Drop buckets that have filled up again after this many checks.
const TIDY_EVERY: u64 = 4096;

/// Who a request's bucket belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Caller {
    /// A keyed hash of the `client_id`.
    Client(u64),
    Address(IpAddr),
}

pub struct Limits {
    callers: DefaultKeyedRateLimiter<Caller>,
    addresses: DefaultKeyedRateLimiter<IpAddr>,
    trusted_proxies: Vec<IpNet>,
    /// Keys the client id hashes, so no one can choose ids that share a bucket.
    hasher: RandomState,
    checks: AtomicU64,
}

fn quota(per_second: u32, burst: u32) -> Quota {
    let per_second = NonZeroU32::new(per_second).unwrap_or(NonZeroU32::MIN);
    Quota::per_second(per_second).allow_burst(NonZeroU32::new(burst).unwrap_or(NonZeroU32::MIN))
}

impl Limits {
    pub fn new(trusted_proxies: Vec<IpNet>) -> Limits {
        Limits {
            callers: RateLimiter::keyed(quota(CALLER_PER_SECOND, CALLER_BURST)),
            addresses: RateLimiter::keyed(quota(
                CALLER_PER_SECOND * ADDRESS_SHARE,
                CALLER_BURST * ADDRESS_SHARE,
            )),
            trusted_proxies,
            hasher: RandomState::new(),
            checks: AtomicU64::new(0),
        }
    }

    /// Whether a request of `client_id` (if it carries one) from `address` may go on. A request
    /// its caller's bucket refuses takes nothing from the address's.
    fn admit(&self, client_id: Option<&str>, address: IpAddr) -> bool {
        if self.checks.fetch_add(1, Ordering::Relaxed) % TIDY_EVERY == TIDY_EVERY - 1 {
            self.forget_idle();
        }
        let address = address_key(address);
        let caller = match client_id {
            Some(client_id) => Caller::Client(self.hasher.hash_one(client_id)),
            None => Caller::Address(address),
        };
        self.callers.check_key(&caller).is_ok() && self.addresses.check_key(&address).is_ok()
    }

    /// Drops the buckets of callers who have been quiet long enough to have a full bucket again.
    pub fn forget_idle(&self) {
        self.callers.retain_recent();
        self.callers.shrink_to_fit();
        self.addresses.retain_recent();
        self.addresses.shrink_to_fit();
    }

    /// The address a request comes from: the peer, or behind trusted proxies the client they
    /// forwarded for.
    fn address(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        forwarded_for(peer, headers, &self.trusted_proxies)
    }
}

/// The rightmost address that is not a trusted proxy, walking from `peer` leftwards through the
/// `X-Forwarded-For` hops (all its headers, in order, as one list).
fn forwarded_for(peer: IpAddr, headers: &HeaderMap, trusted: &[IpNet]) -> IpAddr {
    let is_trusted = |address: &IpAddr| trusted.iter().any(|net| net.contains(address));
    let mut current = peer.to_canonical();
    if !is_trusted(&current) {
        return current;
    }
    let hops: Vec<&str> = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .collect();
    for hop in hops.iter().rev() {
        // A trusted proxy wrote this hop; one it cannot have meant stops the walk at the proxy.
        let Some(address) = parse_hop(hop) else {
            break;
        };
        current = address.to_canonical();
        if !is_trusted(&current) {
            break;
        }
    }
    current
}

/// One `X-Forwarded-For` entry: an address, perhaps with a port (`192.0.2.1:4711`, `[2001:db8::1]:4711`).
fn parse_hop(hop: &str) -> Option<IpAddr> {
    let hop = hop.trim();
    hop.parse::<IpAddr>()
        .ok()
        .or_else(|| hop.parse::<SocketAddr>().ok().map(|socket| socket.ip()))
}

/// The bucket of an address: IPv4 as it is, IPv6 by its /64, since one host usually has a whole
/// /64 to pick addresses from.
fn address_key(address: IpAddr) -> IpAddr {
    match address.to_canonical() {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => {
            let bits = u128::from(v6) & !((1u128 << 64) - 1);
            IpAddr::V6(Ipv6Addr::from(bits))
        }
    }
}

/// The middleware in front of every limited OAuth endpoint.
pub async fn rate_limit(
    State(state): State<std::sync::Arc<OAuthState>>,
    request: Request,
    next: Next,
) -> Response {
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |info| info.0.ip());
    let address = state.limits.address(peer, request.headers());
    let (request, client_id) = match client_id_of(request).await {
        Ok(read) => read,
        Err(()) => {
            // The body was larger than any OAuth request, or could not be read: judged by the
            // address alone, and answered here, since it is gone.
            if !state.limits.admit(None, address) {
                return slow_down();
            }
            return too_large();
        }
    };
    if !state.limits.admit(client_id.as_deref(), address) {
        return slow_down();
    }
    next.run(request).await
}

/// The request's `client_id`: from the query of a GET, or from a form body (read here, at most
/// `MAX_BODY_BYTES`, and handed on).
async fn client_id_of(request: Request) -> Result<(Request, Option<String>), ()> {
    if request.method() == Method::GET {
        let client_id = request.uri().query().and_then(client_id_in);
        return Ok((request, client_id));
    }
    let is_form = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            value.split(';').next().is_some_and(|essence| {
                essence
                    .trim()
                    .eq_ignore_ascii_case("application/x-www-form-urlencoded")
            })
        });
    if !is_form {
        return Ok((request, None));
    }
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, MAX_BODY_BYTES)
        .await
        .map_err(|_| ())?;
    let client_id = std::str::from_utf8(&bytes).ok().and_then(client_id_in);
    Ok((Request::from_parts(parts, Body::from(bytes)), client_id))
}

/// The first non-empty `client_id` of a urlencoded string.
fn client_id_in(encoded: &str) -> Option<String> {
    url::form_urlencoded::parse(encoded.as_bytes())
        .find(|(key, _)| key == "client_id")
        .map(|(_, value)| value.into_owned())
        .filter(|value| !value.is_empty())
}

fn slow_down() -> Response {
    let mut response = oauth_error(
        StatusCode::TOO_MANY_REQUESTS,
        "slow_down",
        "too many requests; wait a few seconds and retry",
    );
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(
                "x-forwarded-for",
                HeaderValue::from_str(value).expect("header"),
            );
        }
        headers
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().expect("address")
    }

    #[test]
    fn forwarded_for_is_believed_only_from_trusted_proxies() {
        let trusted: Vec<IpNet> = vec![
            "127.0.0.1/32".parse().expect("net"),
            "10.0.0.0/8".parse().expect("net"),
        ];
        let spoofed = headers(&["198.51.100.9"]);
        // Not from a proxy: the header is whatever the caller wrote.
        assert_eq!(
            forwarded_for(ip("203.0.113.5"), &spoofed, &trusted),
            ip("203.0.113.5")
        );
        assert_eq!(
            forwarded_for(ip("127.0.0.1"), &spoofed, &[]),
            ip("127.0.0.1")
        );
        // Through two trusted proxies: the rightmost untrusted hop, not the caller's own claim.
        let chain = headers(&["1.2.3.4, 198.51.100.9", "10.1.2.3"]);
        assert_eq!(
            forwarded_for(ip("127.0.0.1"), &chain, &trusted),
            ip("198.51.100.9")
        );
        // A dual-stack listener sees IPv4 proxies as mapped addresses; ports are dropped.
        assert_eq!(
            forwarded_for(
                ip("::ffff:127.0.0.1"),
                &headers(&["198.51.100.9:4711"]),
                &trusted
            ),
            ip("198.51.100.9")
        );
        // Every hop trusted, or none given: the last trusted address.
        assert_eq!(
            forwarded_for(ip("127.0.0.1"), &headers(&["10.0.0.7"]), &trusted),
            ip("10.0.0.7")
        );
        assert_eq!(
            forwarded_for(ip("127.0.0.1"), &HeaderMap::new(), &trusted),
            ip("127.0.0.1")
        );
        // Nonsense from a trusted proxy stops the walk there.
        assert_eq!(
            forwarded_for(
                ip("127.0.0.1"),
                &headers(&["198.51.100.9, unknown"]),
                &trusted
            ),
            ip("127.0.0.1")
        );
    }

    #[test]
    fn one_client_cannot_empty_another_clients_bucket() {
        let limits = Limits::new(Vec::new());
        let proxy = ip("127.0.0.1");
        let refused_a = (0..200)
            .filter(|_| !limits.admit(Some("client-a"), proxy))
            .count();
        assert!(refused_a >= 200 - CALLER_BURST as usize - 5, "{refused_a}");
        assert!((0..30).all(|_| limits.admit(Some("client-b"), proxy)));
        // Invented client ids still meet the address's share.
        let admitted = (0..2000)
            .filter(|at| limits.admit(Some(&format!("invented-{at}")), proxy))
            .count();
        assert!(
            admitted <= (CALLER_BURST * ADDRESS_SHARE) as usize,
            "{admitted}"
        );
    }

    #[test]
    fn ipv6_addresses_share_their_64() {
        assert_eq!(
            address_key(ip("2001:db8:1:2:aaaa::1")),
            address_key(ip("2001:db8:1:2:bbbb::2"))
        );
        assert_ne!(
            address_key(ip("2001:db8:1:2::1")),
            address_key(ip("2001:db8:1:3::1"))
        );
        assert_eq!(address_key(ip("::ffff:192.0.2.1")), ip("192.0.2.1"));
    }
}
