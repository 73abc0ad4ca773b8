"""The Streamable HTTP transport at its edges, through the real binary on loopback: bodies that
are not a JSON-RPC message get 400 with a JSON-RPC error (issue 47, F11); an ended session leaves
nothing behind, and 2025-11-25 sessions are capped per identity and in all (F3). HTTP only."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx2 as httpx
import pytest

from conftest import HttpServer, server_env, write_secret

pytestmark = pytest.mark.anyio

ACCEPT = "application/json, text/event-stream"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}


@pytest.fixture
def http_server(quire_bin: Path, vault: Path, xdg_home: Path, tmp_path: Path):
    server = HttpServer(quire_bin, vault, server_env(xdg_home), tmp_path / "quire-stderr.log")
    yield server
    server.stop()


async def post(server: HttpServer, body: bytes, content_type: str = "application/json") -> httpx.Response:
    headers = {"Authorization": f"Bearer {server.token}", "Accept": ACCEPT, "Content-Type": content_type}
    async with httpx.AsyncClient(timeout=30) as http:
        return await http.post(server.url, content=body, headers=headers)


def json_rpc_error(res: httpx.Response) -> dict:
    assert res.headers["content-type"].startswith("application/json"), res.text
    body = res.json()
    assert body["jsonrpc"] == "2.0" and body["id"] is None, body
    assert isinstance(body["error"]["code"], int) and body["error"]["message"], body
    return body["error"]


async def test_r47_a_body_that_is_not_a_json_rpc_message_is_a_json_rpc_error(http_server):
    # Issue 47, F11: these answered HTTP 415 with a text body. Not JSON at all is a parse error
    # (-32700), including JSON nested deeper than the parser follows; JSON that is not one
    # message is an invalid request (-32600). Both are 400, with a JSON-RPC error whose id is null.
    deep = b"[" * 10_000 + b"]" * 10_000
    deep_object = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":' + b'{"a":' * 10_000 + b"1" + b"}" * 10_001
    for body in (b"{not json", b'{"jsonrpc": "2.0", "id": 1, "method": "ping"', b"\xff\xfe", b"", deep, deep_object):
        res = await post(http_server, body)
        assert res.status_code == 400, (body[:40], res.status_code, res.text[:200])
        error = json_rpc_error(res)
        assert error["code"] == -32700, (body[:40], error)
        assert "Parse error" in error["message"], error
    for body in (b"[]", b"42", b'{"jsonrpc": "2.0"}', b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]'):
        res = await post(http_server, body)
        assert res.status_code == 400, (body, res.status_code, res.text[:200])
        assert json_rpc_error(res)["code"] == -32600, body
    # A body sent as something other than JSON is still 415 Unsupported Media Type (RFC 9110):
    # the content type, not the body, is what is wrong.
    res = await post(http_server, b"{not json", content_type="text/plain")
    assert res.status_code == 415
    # And the server still answers well-formed requests after all that.
    res = await post(http_server, json.dumps(INITIALIZE).encode(), content_type="application/json; charset=utf-8")
    assert res.status_code == 200, res.text



def rss_kib(server: HttpServer) -> int:
    status = Path(f"/proc/{server.proc.pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+)", status).group(1))


async def test_r47_an_ended_session_leaves_nothing_behind(http_server):
    # Issue 47, F3: after `notifications/initialized` each session started two tasks waiting on
    # the vault's broadcasts, which outlived the session until a vault change happened to reach
    # them: about 12 KiB per session, never freed (1,000 sessions opened and closed kept 12 MiB).
    headers = {"Authorization": f"Bearer {http_server.token}", "Accept": ACCEPT, "Content-Type": "application/json"}
    initialized = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
    async with httpx.AsyncClient(timeout=30) as http:

        async def open_and_close() -> None:
            res = await http.post(http_server.url, content=json.dumps(INITIALIZE), headers=headers)
            assert res.status_code == 200, res.text
            session = {"Mcp-Session-Id": res.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
            res = await http.post(http_server.url, content=initialized, headers=headers | session)
            assert res.status_code == 202, res.text
            assert (await http.delete(http_server.url, headers=headers | session)).status_code in (200, 204)

        for _ in range(100):
            await open_and_close()
        before = rss_kib(http_server)
        for _ in range(1000):
            await open_and_close()
    grown = rss_kib(http_server) - before
    print(f"resident memory grew {grown} KiB over 1,000 sessions opened and closed")
    assert grown < 4 * 1024, f"{grown} KiB left behind by 1,000 ended sessions"


TOKENS = {name: f"{name}-token-0123456789abcdefghijklmnopqrstuvwxyz" for name in ("agent", "viewer", "third")}
CAPPED = """
[http]
max_sessions = 16
max_sessions_per_identity = 8
""" + "".join(f"""
[[identity]]
name = "{name}"
token_file = "{name}.token"
read = ["/"]
""" for name in TOKENS)


@pytest.fixture
def capped_server(quire_bin: Path, vault: Path, xdg_home: Path, tmp_path: Path):
    for name, token in TOKENS.items():
        write_secret(tmp_path / f"{name}.token", token + "\n")
    (tmp_path / "quire.toml").write_text(CAPPED)
    server = HttpServer(quire_bin, vault, server_env(xdg_home), tmp_path / "quire-stderr.log",
                        ["--config", str(tmp_path / "quire.toml")])
    yield server
    server.stop()


class Caller:
    """One identity speaking raw Streamable HTTP, one request per connection."""

    def __init__(self, server: HttpServer, name: str):
        self.url = server.url
        self.headers = {"Authorization": f"Bearer {TOKENS[name]}", "Accept": ACCEPT, "Content-Type": "application/json"}

    async def post(self, body: dict, **headers) -> httpx.Response:
        async with httpx.AsyncClient(timeout=30) as http:
            return await http.post(self.url, json=body, headers=self.headers | headers)

    async def open(self) -> httpx.Response:
        return await self.post(INITIALIZE)

    async def opened(self) -> str:
        res = await self.open()
        assert res.status_code == 200, res.text
        session = res.headers["mcp-session-id"]
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await self.post(initialized, **self.in_session(session))).status_code == 202
        return session

    @staticmethod
    def in_session(session: str) -> dict:
        return {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}

    async def ping(self, session: str) -> int:
        return (await self.post({"jsonrpc": "2.0", "id": 2, "method": "ping"}, **self.in_session(session))).status_code


async def test_r47_sessions_are_capped_per_identity_and_in_all(capped_server):
    # Issue 47, F3: every initialize kept ~70 KiB for five idle minutes, with no cap: any token
    # could exhaust memory. With 8 per identity and 16 in all: an identity over its cap loses its
    # own least recently used session (which then answers rmcp's unknown-session 404), never
    # another identity's; a full server refuses a new session with 503 and a JSON-RPC error.
    agent, viewer, third = (Caller(capped_server, name) for name in TOKENS)
    viewers = [await viewer.opened() for _ in range(4)]
    agents = [await agent.opened() for _ in range(8)]
    assert await agent.ping(agents[0]) == 200  # agents[1] is now the least recently used
    agents.append(await agent.opened())
    assert await agent.ping(agents[1]) == 404
    assert await agent.ping(agents[0]) == 200

    # A bounded loop: however many sessions the agent opens, it holds its newest 8, and memory
    # stays flat (without the cap, 300 sessions held about 21 MiB).
    before = rss_kib(capped_server)
    for _ in range(300):
        res = await agent.open()
        assert res.status_code == 200, res.text
        agents.append(res.headers["mcp-session-id"])
    grown = rss_kib(capped_server) - before
    print(f"resident memory grew {grown} KiB over 300 sessions")
    assert grown < 8 * 1024, f"{grown} KiB for 300 sessions under a cap of 8"
    statuses = [await agent.ping(session) for session in agents[-12:]]
    assert statuses == [404] * 4 + [200] * 8, statuses
    assert all([await viewer.ping(session) == 200 for session in viewers])

    # 8 + 4 are open; the third identity fills the total and is then refused.
    thirds = [await third.opened() for _ in range(4)]
    refused = await third.open()
    assert refused.status_code == 503, refused.text
    assert "mcp-session-id" not in refused.headers and refused.headers["retry-after"]
    error = json_rpc_error(refused)
    assert error["code"] == -32000
    for advice in ("Retry", "2026-07-28", "DELETE"):
        assert advice in error["message"], error
    assert (await viewer.open()).status_code == 503
    # An identity at its own cap still gets one, at the cost of its own oldest.
    agents.append(await agent.opened())
    assert await agent.ping(agents[-9]) == 404
    assert all([await viewer.ping(session) == 200 for session in viewers])
    assert all([await third.ping(session) == 200 for session in thirds])

    # A stateless 2026-07-28 request opens no session, so a full server still serves it.
    modern = "2026-07-28"
    body = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "vault_read_note", "arguments": {"path": "Welcome.md"},
        "_meta": {"io.modelcontextprotocol/protocolVersion": modern, "io.modelcontextprotocol/clientCapabilities": {}}}}
    res = await third.post(body, **{"MCP-Protocol-Version": modern, "Mcp-Method": "tools/call", "Mcp-Name": "vault_read_note"})
    assert res.status_code == 200 and "Welcome" in res.text, res.text

    # Closing a session makes room.
    async with httpx.AsyncClient(timeout=30) as http:
        closed = await http.delete(capped_server.url, headers=viewer.headers | Caller.in_session(viewers[0]))
    assert closed.status_code in (200, 204)
    await third.opened()
