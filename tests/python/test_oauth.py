"""The OAuth 2.1 authorization server end to end with a scripted client (register, authorize
through the consent page's HTML form, exchange, call tools through the MCP SDK, refresh), and the
negative cases: PKCE mismatch, code replay, refresh-token reuse revoking the grant, wrong audience,
wrong issuer, expired token, `alg` confusion, redirect URI mismatch, open-redirect attempts (no
redirect before the owner answers the consent page), oversized and malformed requests, rate
limits. HTTP only, with identities configured."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import secrets
import time
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlparse

import httpx2 as httpx
import jwt
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

from conftest import REQUEST_TIMEOUT_S
from test_acl import AGENT_TOKEN, VIEWER_TOKEN, AclServer, acl_vault  # noqa: F401
from vaultlib import error_code

pytestmark = pytest.mark.anyio

REDIRECT = "http://127.0.0.1:9999/callback"


class Inputs(HTMLParser):
    """The hidden inputs of the consent form."""

    def __init__(self):
        super().__init__()
        self.fields: dict[str, str] = {}

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "input" and attrs.get("type") == "hidden":
            self.fields[attrs["name"]] = attrs.get("value", "")


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


class OAuthClient:
    """A scripted public client, as claude.ai would behave."""

    def __init__(self, server: AclServer, http: httpx.AsyncClient):
        self.base = server.url.removesuffix("/mcp")
        self.http = http

    async def register(self, redirect_uris=(REDIRECT,), name="Scripted client") -> str:
        res = await self.http.post(f"{self.base}/oauth/register", json={"redirect_uris": list(redirect_uris), "client_name": name})
        assert res.status_code == 201, res.text
        return res.json()["client_id"]

    def authorize_params(self, client_id: str, challenge: str, **extra) -> dict:
        return {
            "response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT,
            "code_challenge": challenge, "code_challenge_method": "S256", "state": "xyz-state",
            "resource": f"{self.base}/mcp", "scope": "vault", **extra,
        }

    async def consent(self, params: dict, token: str, decision: str = "allow") -> httpx.Response:
        page = await self.http.get(f"{self.base}/oauth/authorize", params=params)
        assert page.status_code == 200, page.text
        assert page.headers["x-frame-options"] == "DENY"
        # The form posts to Quire, whose answer redirects to the client: browsers that apply
        # form-action to that redirect (Chromium) must be allowed to follow it, and nothing else.
        redirect = urlparse(params["redirect_uri"])
        assert f"form-action 'self' {redirect.scheme}://{redirect.netloc};" in page.headers["content-security-policy"]
        form = Inputs()
        form.feed(page.text)
        fields = form.fields | {"token": token, "decision": decision}
        return await self.http.post(f"{self.base}/oauth/authorize", data=fields)

    async def authorize(self, client_id: str, token: str = AGENT_TOKEN) -> tuple[str, str]:
        verifier, challenge = pkce()
        res = await self.consent(self.authorize_params(client_id, challenge), token)
        assert res.status_code in (302, 303), res.text
        location = urlparse(res.headers["location"])
        assert f"{location.scheme}://{location.netloc}{location.path}" == REDIRECT
        query = parse_qs(location.query)
        assert query["state"] == ["xyz-state"] and query["iss"] == [self.base]
        return query["code"][0], verifier

    async def exchange(self, client_id: str, code: str, verifier: str, **extra) -> httpx.Response:
        return await self.http.post(f"{self.base}/oauth/token", data={
            "grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT,
            "client_id": client_id, "code_verifier": verifier, **extra,
        })

    async def refresh(self, client_id: str, refresh_token: str) -> httpx.Response:
        return await self.http.post(f"{self.base}/oauth/token", data={
            "grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": client_id,
        })

    async def mcp_status(self, access_token: str) -> int:
        res = await self.http.post(
            f"{self.base}/mcp",
            headers={"Authorization": f"Bearer {access_token}", "Accept": "application/json, text/event-stream"},
            json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}},
        )
        return res.status_code


@pytest.fixture
async def oauth(quire_bin, acl_vault, tmp_path, xdg_home):  # noqa: F811
    server = AclServer(quire_bin, acl_vault, tmp_path, xdg_home)
    try:
        # A fresh connection per request: the server may close one after an early answer (401,
        # 413, 429) without reading the body, and a reused connection would then race that close.
        limits = httpx.Limits(max_keepalive_connections=0)
        async with httpx.AsyncClient(follow_redirects=False, timeout=30, limits=limits) as http:
            yield server, OAuthClient(server, http)
    finally:
        server.server.stop()


def signing_key(xdg_home: Path) -> bytes:
    [key_file] = (xdg_home / "state" / "quire").glob("*/oauth-key")
    assert oct(key_file.stat().st_mode & 0o777) == "0o600"
    return hashlib.sha256(f"jwt-signing:{key_file.read_text().strip()}".encode()).digest()


async def test_metadata_is_served_at_root_and_mcp_suffixed_paths(oauth):
    server, client = oauth
    for path in ("/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"):
        meta = (await client.http.get(client.base + path)).json()
        assert meta["resource"] == f"{client.base}/mcp"
        assert meta["authorization_servers"] == [client.base]
    for path in ("/.well-known/oauth-authorization-server", "/.well-known/oauth-authorization-server/mcp"):
        meta = (await client.http.get(client.base + path)).json()
        assert meta["issuer"] == client.base
        assert meta["code_challenge_methods_supported"] == ["S256"]
        assert meta["authorization_response_iss_parameter_supported"] is True
        assert meta["registration_endpoint"] == f"{client.base}/oauth/register"
    res = await client.http.post(f"{client.base}/mcp", json={})
    assert res.status_code == 401
    assert f'resource_metadata="{client.base}/.well-known/oauth-protected-resource"' in res.headers["www-authenticate"]


async def test_register_authorize_exchange_call_tools_and_refresh(oauth, xdg_home):
    server, client = oauth
    client_id = await client.register(name="Scripted <b>client</b>")
    page = await client.http.get(f"{client.base}/oauth/authorize", params=client.authorize_params(client_id, pkce()[1]))
    assert "Scripted &lt;b&gt;client&lt;/b&gt;" in page.text and "<b>client" not in page.text
    code, verifier = await client.authorize(client_id)
    res = await client.exchange(client_id, code, verifier)
    assert res.status_code == 200, res.text
    tokens = res.json()
    assert tokens["token_type"] == "Bearer" and tokens["expires_in"] > 0
    claims = jwt.decode(tokens["access_token"], options={"verify_signature": False})
    assert claims["iss"] == client.base and claims["aud"] == f"{client.base}/mcp"
    assert claims["sub"] == "agent" and claims["client_id"] == client_id

    # The client acts as the identity it was bound to, with that identity's ACL.
    async with create_mcp_http_client(headers={"Authorization": f"Bearer {tokens['access_token']}"}) as http:
        async with streamable_http_client(server.url, http_client=http) as streams:
            async with ClientSession(streams[0], streams[1], read_timeout_seconds=REQUEST_TIMEOUT_S) as session:
                await session.initialize()
                names = {tool.name for tool in (await session.list_tools()).tools}
                assert "vault_write_note" in names
                res = await session.call_tool("vault_read_note", {"path": "Privé/secret.md"})
                assert res.is_error and error_code(res.content[0].text) == "not_found"
                res = await session.call_tool("vault_write_note", {"path": "Inbox/oauth.md", "body": "hi\n"})
                assert not res.is_error, res.content
    [audit] = (xdg_home / "state" / "quire").glob("*/audit.jsonl")
    entries = [json.loads(line) for line in audit.read_text().splitlines()]
    assert {"identity": "agent", "client_id": client_id, "path": "Inbox/oauth.md", "outcome": "ok"}.items() <= entries[-1].items()

    res = await client.refresh(client_id, tokens["refresh_token"])
    assert res.status_code == 200, res.text
    rotated = res.json()
    assert rotated["refresh_token"] != tokens["refresh_token"]
    assert await client.mcp_status(rotated["access_token"]) == 200

    # Revocation ends the grant: its refresh token and its access tokens stop working.
    res = await client.http.post(f"{client.base}/oauth/revoke", data={"token": rotated["refresh_token"]})
    assert res.status_code == 200
    assert (await client.refresh(client_id, rotated["refresh_token"])).status_code == 400
    assert await client.mcp_status(rotated["access_token"]) == 401
    # Unknown tokens are accepted silently (RFC 7009).
    assert (await client.http.post(f"{client.base}/oauth/revoke", data={"token": "nope"})).status_code == 200


async def test_pkce_mismatch_and_code_replay(oauth):
    server, client = oauth
    client_id = await client.register()
    code, verifier = await client.authorize(client_id)
    res = await client.exchange(client_id, code, pkce()[0])
    assert res.status_code == 400 and res.json()["error"] == "invalid_grant"
    # The failed attempt spent the code.
    assert (await client.exchange(client_id, code, verifier)).status_code == 400

    code, verifier = await client.authorize(client_id)
    first = await client.exchange(client_id, code, verifier)
    assert first.status_code == 200
    assert await client.mcp_status(first.json()["access_token"]) == 200
    replay = await client.exchange(client_id, code, verifier)
    assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"
    # A replayed code revokes what the first exchange produced.
    assert await client.mcp_status(first.json()["access_token"]) == 401
    assert (await client.refresh(client_id, first.json()["refresh_token"])).status_code == 400

    # A code is bound to its client and redirect URI.
    other = await client.register()
    code, verifier = await client.authorize(client_id)
    assert (await client.exchange(other, code, verifier)).status_code == 400


async def test_refresh_token_reuse_revokes_the_grant(oauth):
    server, client = oauth
    client_id = await client.register()
    code, verifier = await client.authorize(client_id)
    tokens = (await client.exchange(client_id, code, verifier)).json()
    rotated = (await client.refresh(client_id, tokens["refresh_token"])).json()
    reuse = await client.refresh(client_id, tokens["refresh_token"])
    assert reuse.status_code == 400 and reuse.json()["error"] == "invalid_grant"
    assert (await client.refresh(client_id, rotated["refresh_token"])).status_code == 400
    assert await client.mcp_status(rotated["access_token"]) == 401


async def test_forged_tokens_are_refused(oauth, xdg_home):
    server, client = oauth
    client_id = await client.register()
    code, verifier = await client.authorize(client_id)
    tokens = (await client.exchange(client_id, code, verifier)).json()
    claims = jwt.decode(tokens["access_token"], options={"verify_signature": False})
    key = signing_key(xdg_home)
    now = int(time.time())

    def forge(alg="HS256", signing=key, **changes):
        return jwt.encode(claims | changes, signing, algorithm=alg, headers={"typ": "at+jwt"})

    # The control: a token forged exactly like the server's works, so the failures below are
    # caused by the one thing each changes.
    assert await client.mcp_status(forge(jti="control")) == 200
    cases = {
        "wrong audience": forge(aud="https://other.example/mcp"),
        "audience without /mcp": forge(aud=client.base),
        "wrong issuer": forge(iss="https://evil.example"),
        "expired": forge(iat=now - 7200, exp=now - 3600),
        "unknown identity": forge(sub="nobody"),
        "HS512 with the same key": forge(alg="HS512"),
        "wrong key": forge(signing=b"k" * 32),
        "alg none": jwt.encode(claims, None, algorithm="none"),
        "garbage": "a.b.c",
    }
    for name, token in cases.items():
        assert await client.mcp_status(token) == 401, name


async def test_redirect_uri_mismatch_and_open_redirects_are_never_followed(oauth):
    server, client = oauth
    client_id = await client.register()
    verifier, challenge = pkce()
    for redirect in ("http://127.0.0.1:9999/other", "https://evil.example/callback", "http://127.0.0.1:9999/callback/../x", "//evil.example/callback"):
        res = await client.http.get(f"{client.base}/oauth/authorize", params=client.authorize_params(client_id, challenge, redirect_uri=redirect))
        assert res.status_code == 400 and "location" not in res.headers, redirect
    # An unknown client with an attacker's redirect URI gets a page, not a redirect.
    res = await client.http.get(f"{client.base}/oauth/authorize", params=client.authorize_params("unknown", challenge, redirect_uri="https://evil.example/cb"))
    assert res.status_code == 400 and "location" not in res.headers
    # The form re-checks everything: a tampered POST cannot redirect elsewhere either.
    fields = client.authorize_params(client_id, challenge, redirect_uri="https://evil.example/cb") | {"token": AGENT_TOKEN, "decision": "allow"}
    res = await client.http.post(f"{client.base}/oauth/authorize", data=fields)
    assert res.status_code == 400 and "location" not in res.headers
    # Registration refuses redirect URIs that could leak a code.
    for bad in ("http://evil.example/cb", "javascript:alert(1)", "https://a.example/cb#frag", "https://user:pw@a.example/cb", "not a url"):
        res = await client.http.post(f"{client.base}/oauth/register", json={"redirect_uris": [bad]})
        assert res.status_code == 400, bad
    # A wrong identity token shows the form again, redirecting nowhere.
    res = await client.consent(client.authorize_params(client_id, challenge), "wrong-token-0123456789abcdefghijklmnop")
    assert res.status_code == 401 and "location" not in res.headers
    # Denying redirects with access_denied, iss and state.
    res = await client.consent(client.authorize_params(client_id, challenge), "", decision="deny")
    query = parse_qs(urlparse(res.headers["location"]).query)
    assert query["error"] == ["access_denied"] and query["iss"] == [client.base] and query["state"] == ["xyz-state"]
    # Errors after the client checks out are pages too, not redirects (issue 47, F6; see below).
    for extra, error in (
        ({"code_challenge_method": "plain"}, "invalid_request"),
        ({"code_challenge": ""}, "invalid_request"),
        ({"resource": "https://other.example/mcp"}, "invalid_target"),
        ({"response_type": "token"}, "unsupported_response_type"),
    ):
        res = await client.http.get(f"{client.base}/oauth/authorize", params=client.authorize_params(client_id, challenge, **extra))
        assert res.status_code == 400 and "location" not in res.headers, (extra, res.status_code)
        assert error in res.text, extra
    # A loopback redirect URI may use any port (RFC 8252).
    loopback = await client.register(redirect_uris=["http://127.0.0.1/callback"])
    res = await client.http.get(f"{client.base}/oauth/authorize", params=client.authorize_params(loopback, challenge, redirect_uri="http://127.0.0.1:5555/callback"))
    assert res.status_code == 200


async def test_r47_an_authorization_request_alone_never_redirects(oauth):
    # Issue 47, F6: anyone can register https://evil.example/land through open registration, and
    # GET /oauth/authorize with it and an unsupported response_type answered 303 to it with no
    # one involved: a link on Quire's host that lands on the attacker's page. Before the owner has
    # answered the consent page (which shows where the client will be sent), every failure is a
    # page; the owner's own answer still redirects.
    server, client = oauth
    land = "https://evil.example/land"
    client_id = await client.register(redirect_uris=[land])
    verifier, challenge = pkce()
    for extra in ({"response_type": "token"}, {"response_type": "code id_token"}, {"code_challenge_method": "plain"},
                  {"code_challenge": "short"}, {"resource": "https://other.example/mcp"}):
        params = client.authorize_params(client_id, challenge, redirect_uri=land, **extra)
        res = await client.http.get(f"{client.base}/oauth/authorize", params=params)
        assert res.status_code == 400 and "location" not in res.headers, (extra, res.status_code, res.headers)
        assert "evil.example" not in res.text, extra
        # A forged consent form with the same defect redirects nowhere either, even with "allow".
        fields = params | {"token": AGENT_TOKEN, "decision": "allow"}
        res = await client.http.post(f"{client.base}/oauth/authorize", data=fields)
        assert res.status_code == 400 and "location" not in res.headers, (extra, res.status_code)
    # The owner's answer on a real consent page still goes back to the client, denial included.
    params = client.authorize_params(client_id, challenge, redirect_uri=land)
    res = await client.consent(params, "", decision="deny")
    assert res.status_code in (302, 303) and res.headers["location"].startswith(land + "?"), res.headers
    assert parse_qs(urlparse(res.headers["location"]).query)["error"] == ["access_denied"]
    res = await client.consent(params, AGENT_TOKEN)
    assert res.status_code in (302, 303) and res.headers["location"].startswith(land + "?"), res.headers
    assert "code" in parse_qs(urlparse(res.headers["location"]).query)


async def test_wrong_resource_at_the_token_endpoint(oauth):
    server, client = oauth
    client_id = await client.register()
    code, verifier = await client.authorize(client_id)
    res = await client.exchange(client_id, code, verifier, resource="https://other.example/mcp")
    assert res.status_code == 400 and res.json()["error"] == "invalid_target"


async def test_oversized_and_malformed_requests(oauth):
    server, client = oauth
    res = await client.http.post(f"{client.base}/oauth/register", json={"redirect_uris": [REDIRECT], "client_name": "x" * 100_000})
    assert res.status_code == 413
    res = await client.http.post(f"{client.base}/oauth/token", content=b"grant_type=" + b"a" * 100_000, headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert res.status_code == 413
    for body, content_type in ((b"{not json", "application/json"), (b"[]", "application/json"), (b"\xff\xfe", "application/json")):
        res = await client.http.post(f"{client.base}/oauth/register", content=body, headers={"Content-Type": content_type})
        assert res.status_code == 400 and res.json()["error"] == "invalid_client_metadata"
    res = await client.http.post(f"{client.base}/oauth/token", json={"grant_type": "authorization_code"})
    assert res.status_code == 400 and res.json()["error"] == "invalid_request"
    res = await client.http.post(f"{client.base}/oauth/token", data={"grant_type": "password", "client_id": "x"})
    assert res.status_code == 400 and res.json()["error"] == "unsupported_grant_type"
    res = await client.http.post(f"{client.base}/oauth/token", data={"grant_type": "authorization_code", "client_id": "x"})
    assert res.status_code == 400 and res.json()["error"] == "invalid_request"
    res = await client.http.get(f"{client.base}/oauth/authorize")
    assert res.status_code == 400 and "location" not in res.headers


async def test_oauth_endpoints_are_rate_limited(oauth):
    server, client = oauth
    statuses = []
    for _ in range(120):
        res = await client.http.post(f"{client.base}/oauth/token", data={"grant_type": "refresh_token", "refresh_token": "x", "client_id": "x"})
        statuses.append(res.status_code)
    assert 429 in statuses
    limited = next(s for s in statuses if s == 429)
    assert limited == 429 and statuses[0] == 400


async def test_r47_one_client_flooding_the_token_endpoint_does_not_starve_another(oauth):
    # Issue 47, F5: the limit was one bucket per peer address, so behind a reverse proxy (here:
    # every request comes from 127.0.0.1) one unauthenticated client looping on /oauth/token made
    # 15 of 15 legitimate token requests fail with 429. Each client now has its own bucket.
    server, client = oauth
    legitimate = await client.register()
    flood = [
        (await client.http.post(f"{client.base}/oauth/token", data={
            "grant_type": "refresh_token", "refresh_token": "guess", "client_id": "flooding-client"})).status_code
        for _ in range(150)
    ]
    assert flood.count(429) >= 50, flood
    statuses = [(await client.refresh(legitimate, f"not-a-token-{at}")).status_code for at in range(15)]
    assert statuses == [400] * 15, statuses
    code, verifier = await client.authorize(legitimate)
    res = await client.exchange(legitimate, code, verifier)
    assert res.status_code == 200, res.text
    # The flooding client is still held back: its bucket refills at its own rate while the others
    # were served (slowly, on a loaded machine), so a few more tries meet the limit again.
    held = []
    for _ in range(40):
        res = await client.http.post(f"{client.base}/oauth/token", data={
            "grant_type": "refresh_token", "refresh_token": "guess", "client_id": "flooding-client"})
        held.append(res.status_code)
        if res.status_code == 429:
            assert res.headers["retry-after"]
            break
    assert held[-1] == 429, held


async def flood_without_client_id(http: httpx.AsyncClient, base: str, forwarded_for: str, times: int) -> list[int]:
    """Token requests without a client_id (so keyed on the address), claiming `forwarded_for`."""
    return [
        (await http.post(f"{base}/oauth/token", data={"grant_type": "refresh_token"},
                         headers={"X-Forwarded-For": forwarded_for})).status_code
        for _ in range(times)
    ]


async def test_r47_forwarded_for_names_the_caller_only_behind_a_trusted_proxy(oauth, quire_bin, acl_vault, tmp_path, xdg_home):  # noqa: F811
    # Issue 47, F5: requests without a client_id are keyed on the address; behind a proxy listed
    # in [http] trusted_proxies that is the X-Forwarded-For hop the proxy appended, so one caller
    # does not starve the others; from anyone else the header is ignored, so claiming a fresh
    # address buys nothing.
    from conftest import HttpServer, server_env
    from test_acl import CONFIG

    # A flooded bucket gains a request every 200 ms (`CALLER_PER_SECOND`), so on a slow machine
    # one of a few requests made just after a flood may pass; a caller the header fooled would
    # pass them all.
    server, client = oauth
    statuses = await flood_without_client_id(client.http, client.base, "198.51.100.1", 100)
    assert 429 in statuses and statuses[0] == 400, statuses
    assert 429 in await flood_without_client_id(client.http, client.base, "198.51.100.2", 3)

    config = tmp_path / "proxied.toml"
    config.write_text(CONFIG + '\n[http]\ntrusted_proxies = ["127.0.0.1"]\n')
    # A state directory of its own: a second server on one vault's state waits to own it (issue 63).
    proxied_home = tmp_path / "proxied-xdg"
    for sub in ("state", "data", "config", "cache"):
        (proxied_home / sub).mkdir(parents=True)
    proxied = HttpServer(quire_bin, acl_vault, server_env(proxied_home), tmp_path / "proxied.log", ["--config", str(config)])
    try:
        base = proxied.url.removesuffix("/mcp")
        statuses = await flood_without_client_id(client.http, base, "198.51.100.1", 100)
        assert 429 in statuses and statuses[0] == 400, statuses
        # The proxy appends the address that connected to it; what the caller wrote to its left
        # is not believed. Asked at once after the flood, before a request trickles back in.
        assert 429 in await flood_without_client_id(client.http, base, "198.51.100.2, 198.51.100.1", 3)
        assert await flood_without_client_id(client.http, base, "198.51.100.2", 5) == [400] * 5
    finally:
        proxied.stop()


async def test_r18_rotating_an_identity_token_ends_the_grants_made_with_it(oauth, tmp_path):
    # Issue 18, item 3: each grant is bound to the token pasted on the consent page; once that
    # identity's token changes, its access tokens and refresh tokens stop working at once, while
    # other identities' grants go on, and a consent with the new token works.
    import signal

    from conftest import write_secret

    server, client = oauth
    client_id = await client.register()
    code, verifier = await client.authorize(client_id)
    agent = (await client.exchange(client_id, code, verifier)).json()
    code, verifier = await client.authorize(client_id, VIEWER_TOKEN)
    viewer = (await client.exchange(client_id, code, verifier)).json()
    assert await client.mcp_status(agent["access_token"]) == 200

    rotated = "agent-rotated-token-0123456789abcdefghijklmnop"
    write_secret(tmp_path / "agent.token", rotated + "\n")
    server.server.proc.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and await client.mcp_status(rotated) != 200:
        time.sleep(0.2)
    assert await client.mcp_status(rotated) == 200, "the new token is in force"
    assert await client.mcp_status(AGENT_TOKEN) == 401

    assert await client.mcp_status(agent["access_token"]) == 401
    res = await client.refresh(client_id, agent["refresh_token"])
    assert res.status_code == 400 and res.json()["error"] == "invalid_grant", res.text
    assert await client.mcp_status(viewer["access_token"]) == 200
    res = await client.refresh(client_id, viewer["refresh_token"])
    assert res.status_code == 200, res.text

    code, verifier = await client.authorize(client_id, rotated)
    fresh = await client.exchange(client_id, code, verifier)
    assert fresh.status_code == 200, fresh.text
    assert await client.mcp_status(fresh.json()["access_token"]) == 200


async def test_r18_quire_oauth_lists_and_revokes_grants(oauth, acl_vault, tmp_path, xdg_home):  # noqa: F811
    # Issue 18, item 3: the owner sees every grant and can end an identity's or a client's grants
    # from the command line, with effect on the running server at once.
    import subprocess

    from conftest import server_env

    server, client = oauth
    first = await client.register(name="First\nforged line")
    second = await client.register(name="Second")
    grants = {}
    for name, client_id, token in (("agent1", first, AGENT_TOKEN), ("viewer", first, VIEWER_TOKEN),
                                   ("agent2", second, AGENT_TOKEN)):
        code, verifier = await client.authorize(client_id, token)
        grants[name] = (await client.exchange(client_id, code, verifier)).json()

    def quire(*args: str) -> str:
        done = subprocess.run(
            [str(server.server.proc.args[0]), "oauth", *args, "--config", str(server.config), "--vault", str(acl_vault)],
            env=server_env(xdg_home), capture_output=True, text=True, timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    listed = quire("list").splitlines()
    assert len(listed) == 3 and all(line.startswith("live") for line in listed), listed
    assert any("First\\nforged line" in line for line in listed), listed
    assert sum("identity agent " in line for line in listed) == 2

    assert "revoked 1 grant" in quire("revoke", "--identity", "agent", "--client", second)
    assert await client.mcp_status(grants["agent2"]["access_token"]) == 401
    assert await client.mcp_status(grants["agent1"]["access_token"]) == 200
    assert "revoked 1 grant" in quire("revoke", "--identity", "agent")
    assert await client.mcp_status(grants["agent1"]["access_token"]) == 401
    assert (await client.refresh(first, grants["agent1"]["refresh_token"])).status_code == 400
    assert await client.mcp_status(grants["viewer"]["access_token"]) == 200
    # Registered client ids are base64url and may begin with '-'.
    assert "revoked 0 grants" in quire("revoke", "--client", "-starts-with-a-dash")
    assert "revoked 1 grant" in quire("revoke", "--client", first)
    assert await client.mcp_status(grants["viewer"]["access_token"]) == 401
    assert [line.split()[0] for line in quire("list").splitlines()] == ["revoked"] * 3
