"""The Streamable HTTP transport at its edges, through the real binary on loopback: bodies that
are not a JSON-RPC message get 400 with a JSON-RPC error (issue 47, F11), and an ended session
leaves nothing behind (F3). HTTP only."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx2 as httpx
import pytest

from conftest import HttpServer, server_env

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
