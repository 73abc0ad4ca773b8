"""OAuth Client ID Metadata Documents end to end: a client whose client_id is an https URL served
by a local HTTPS server (a throwaway CA handed to Quire through SSL_CERT_FILE) goes through the
consent form, the token endpoint and a tools call as the identity it was bound to; and every way a
document can be refused: a client_id that does not match its URL, a redirect_uri it does not list,
oversized, non-JSON, slow, redirected, private addresses, and the switch turned off.

Quire refuses loopback addresses for documents; `QUIRE_TEST_CIMD_LOOPBACK_PORT` opens exactly the
local server's port, and the private-address test runs a Quire without it."""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx2 as httpx
import jwt
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

from conftest import REQUEST_TIMEOUT_S, HttpServer, server_env, write_secret
from docserver import DocumentServer, Route
from test_acl import AGENT_TOKEN, CONFIG, VIEWER_TOKEN, acl_vault  # noqa: F401
from test_oauth import REDIRECT, OAuthClient, pkce
from vaultlib import error_code

pytestmark = pytest.mark.anyio


class CimdServer:
    """Quire with identities, trusting the test CA; `extra_config` is appended to the ACL config."""

    def __init__(self, quire_bin, vault, root: Path, xdg_home: Path, docs: DocumentServer | None,
                 extra_config: str = "", hatch: bool = True):
        root.mkdir(parents=True, exist_ok=True)
        for sub in ("state", "data", "config", "cache"):
            (xdg_home / sub).mkdir(parents=True, exist_ok=True)
        write_secret(root / "agent.token", AGENT_TOKEN + "\n")
        write_secret(root / "viewer.token", VIEWER_TOKEN + "\n")
        config = root / "quire.toml"
        config.write_text(CONFIG + extra_config)
        env = server_env(xdg_home)
        if docs is not None:
            env["SSL_CERT_FILE"] = str(docs.ca)
            if hatch:
                env["QUIRE_TEST_CIMD_LOOPBACK_PORT"] = str(docs.port)
        self.log = root / "quire-stderr.log"
        self.server = HttpServer(quire_bin, vault, env, self.log, ["--config", str(config)])
        self.url = self.server.url


@pytest.fixture
def docs(tmp_path):
    server = DocumentServer(tmp_path)
    yield server
    server.stop()


@pytest.fixture
async def http():
    limits = httpx.Limits(max_keepalive_connections=0)
    async with httpx.AsyncClient(follow_redirects=False, timeout=30, limits=limits) as client:
        yield client


def start(quire_bin, acl_vault, tmp_path, xdg_home, docs, name="quire", **kwargs):  # noqa: F811
    return CimdServer(quire_bin, acl_vault, tmp_path / name, xdg_home / name, docs, **kwargs)


def document(client_id: str, **changes) -> bytes:
    body = {
        "client_id": client_id,
        "client_name": "Document client",
        "redirect_uris": [REDIRECT],
        "token_endpoint_auth_method": "none",
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
    } | changes
    return json.dumps(body).encode()


@pytest.fixture
def quire(quire_bin, acl_vault, tmp_path, xdg_home, docs):  # noqa: F811
    server = start(quire_bin, acl_vault, tmp_path, xdg_home, docs)
    yield server
    server.server.stop()


async def refused_page(client: OAuthClient, client_id: str, **extra) -> str:
    """The authorize request is answered with an error page, never a redirect."""
    params = client.authorize_params(client_id, pkce()[1], **extra)
    res = await client.http.get(f"{client.base}/oauth/authorize", params=params)
    assert res.status_code == 400 and "location" not in res.headers, (res.status_code, res.text)
    return res.text


async def test_a_document_client_authorizes_exchanges_and_calls_tools(quire, docs, http):
    client_id = docs.url("/client.json")
    docs.routes["/client.json"] = Route(
        document(client_id), headers={"Content-Type": "application/json", "Cache-Control": "max-age=300"}
    )
    client = OAuthClient(quire, http)
    meta = (await http.get(f"{client.base}/.well-known/oauth-authorization-server")).json()
    assert meta["client_id_metadata_document_supported"] is True

    page = await http.get(f"{client.base}/oauth/authorize", params=client.authorize_params(client_id, pkce()[1]))
    assert page.status_code == 200, page.text
    assert "Document client" in page.text and "<strong>localhost</strong>" in page.text
    code, verifier = await client.authorize(client_id)
    # The page and the form each needed the client; the cache (max-age=300) answered the rest.
    assert docs.hits["/client.json"] == 1
    res = await client.exchange(client_id, code, verifier)
    assert res.status_code == 200, res.text
    tokens = res.json()
    claims = jwt.decode(tokens["access_token"], options={"verify_signature": False})
    assert claims["client_id"] == client_id and claims["sub"] == "agent"

    async with create_mcp_http_client(headers={"Authorization": f"Bearer {tokens['access_token']}"}) as mcp_http:
        async with streamable_http_client(quire.url, http_client=mcp_http) as streams:
            async with ClientSession(streams[0], streams[1], read_timeout_seconds=REQUEST_TIMEOUT_S) as session:
                await session.initialize()
                res = await session.call_tool("vault_write_note", {"path": "Inbox/cimd.md", "body": "hi\n"})
                assert not res.is_error, res.content
                res = await session.call_tool("vault_read_note", {"path": "Privé/secret.md"})
                assert res.is_error and error_code(res.content[0].text) == "not_found"

    res = await client.refresh(client_id, tokens["refresh_token"])
    assert res.status_code == 200, res.text
    assert await client.mcp_status(res.json()["access_token"]) == 200


async def test_no_store_documents_are_fetched_every_time(quire, docs, http):
    client_id = docs.url("/fresh.json")
    docs.routes["/fresh.json"] = Route(
        document(client_id), headers={"Content-Type": "application/json", "Cache-Control": "no-store"}
    )
    client = OAuthClient(quire, http)
    await client.authorize(client_id)
    assert docs.hits["/fresh.json"] == 2


async def test_documents_that_do_not_describe_the_client_are_refused(quire, docs, http):
    client = OAuthClient(quire, http)
    good = docs.url("/client.json")
    docs.routes["/client.json"] = Route(document(good))
    cases = {
        "/mismatch.json": (Route(document("https://other.example/client.json")), "is not the URL it was fetched from"),
        "/html.json": (Route(b"<html></html>", headers={"Content-Type": "text/html"}), "content type"),
        "/garbage.json": (Route(b"{not json"), "it is not JSON"),
        "/big.json": (Route(document(docs.url("/big.json"), client_name="x" * 6000)), "larger than 5120 bytes"),
        "/big-unannounced.json": (
            Route(document(docs.url("/big-unannounced.json"), client_name="x" * 6000), send_length=False),
            "larger than 5120 bytes",
        ),
        "/secret.json": (Route(document(docs.url("/secret.json"), client_secret="s3cret")), "client secret"),
        "/basic.json": (
            Route(document(docs.url("/basic.json"), token_endpoint_auth_method="client_secret_basic")),
            "public clients only",
        ),
        "/evil-redirect.json": (
            Route(document(docs.url("/evil-redirect.json"), redirect_uris=["http://evil.example/cb"])),
            "is not accepted",
        ),
        "/moved.json": (Route(b"", status=302, headers={"Location": "/client.json"}), "302 Found, not 200 OK"),
        "/missing.json": (Route(b"no", status=404, headers={"Content-Type": "application/json"}), "404 Not Found"),
    }
    for path, (route, message) in cases.items():
        docs.routes[path] = route
        text = await refused_page(client, docs.url(path))
        assert message in text.replace("&quot;", '"'), (path, text)
    # The redirect was not followed.
    assert docs.hits["/client.json"] == 0
    # A redirect_uri the document does not list.
    text = await refused_page(client, good, redirect_uri="http://127.0.0.1:9999/other")
    assert "not one this client registered" in text
    # URLs that are not acceptable client IDs at all; none of them is fetched.
    for bad, message in (
        (f"http://localhost:{docs.port}/client.json", "must be an https URL"),
        (f"https://localhost:{docs.port}/a/../client.json", "not in normal form"),
        (f"https://localhost:{docs.port}/client.json#x", "fragment"),
        ("https://localhost:8443/client.json", "default https port"),
    ):
        assert message in await refused_page(client, bad), bad
    assert docs.hits["/client.json"] == 1


async def test_a_slow_document_times_out(quire, docs, http):
    client = OAuthClient(quire, http)
    docs.routes["/slow.json"] = Route(document(docs.url("/slow.json")), delay=8)
    started = time.monotonic()
    text = await refused_page(client, docs.url("/slow.json"))
    assert "no answer within 5 seconds" in text
    assert time.monotonic() - started < 7.5


async def test_private_addresses_are_never_fetched(quire_bin, acl_vault, tmp_path, xdg_home, docs, http):  # noqa: F811
    # No escape hatch: the same local document server is now out of bounds.
    server = start(quire_bin, acl_vault, tmp_path, xdg_home, docs, name="nohatch", hatch=False)
    try:
        client = OAuthClient(server, http)
        docs.routes["/client.json"] = Route(document(docs.url("/client.json")))
        for client_id in (
            "https://localhost/client.json",  # a name that resolves to loopback
            "https://127.0.0.1/client.json",
            "https://[::1]/client.json",
            "https://10.0.0.1/client.json",
            "https://192.168.1.1/client.json",
            "https://169.254.169.254/latest/meta-data",
            "https://[fd00::1]/client.json",
        ):
            text = await refused_page(client, client_id)
            assert "private, loopback or link-local" in text, (client_id, text)
        # And the hatch's port is no way in without the hatch.
        assert "default https port" in await refused_page(client, docs.url("/client.json"))
        assert docs.hits["/client.json"] == 0
    finally:
        server.server.stop()


async def test_switched_off_url_client_ids_are_refused(quire_bin, acl_vault, tmp_path, xdg_home, docs, http):  # noqa: F811
    server = start(
        quire_bin, acl_vault, tmp_path, xdg_home, docs, name="off",
        extra_config="\n[oauth]\nclient_id_metadata_documents = false\n",
    )
    try:
        client = OAuthClient(server, http)
        client_id = docs.url("/client.json")
        docs.routes["/client.json"] = Route(document(client_id))
        meta = (await http.get(f"{client.base}/.well-known/oauth-authorization-server")).json()
        assert meta["client_id_metadata_document_supported"] is False
        assert "client_id_metadata_documents` is off" in await refused_page(client, client_id)
        res = await client.http.post(f"{client.base}/oauth/token", data={
            "grant_type": "authorization_code", "code": "x", "redirect_uri": REDIRECT,
            "client_id": client_id, "code_verifier": pkce()[0],
        })
        assert res.status_code == 401 and res.json()["error"] == "invalid_client"
        assert docs.hits["/client.json"] == 0
        # Registered clients still work.
        registered = await client.register()
        code, verifier = await client.authorize(registered)
        assert (await client.exchange(registered, code, verifier)).status_code == 200
    finally:
        server.server.stop()
