"""MCP 2026-07-28 (stateless) through the official Python SDK's `Client`, which negotiates it
first: calls without a handshake or session, and `subscriptions/listen` streams for live notes,
filtered to what the client asked for and to what its identity may read. Over HTTP and stdio.
"""

from __future__ import annotations

import json
import subprocess
import time
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client
from mcp.shared.subscriptions import ResourcesListChanged, ResourceUpdated

from conftest import REQUEST_TIMEOUT_S, HttpServer, server_env

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"


def uri(path: str) -> str:
    return "note://" + path.replace(" ", "%20")


@pytest.fixture
def open_client(quire_bin: Path, xdg_home: Path, tmp_path: Path, transport: str):
    """Factory: `async with open_client(vault, token=...) as client:` a 2026-07-28 `Client`."""

    @asynccontextmanager
    async def open_(vault_root: Path, extra_args=(), token_of=None):
        env = server_env(xdg_home)
        log_path = tmp_path / "quire-stderr.log"
        if transport == "stdio":
            params = StdioServerParameters(
                command=str(quire_bin),
                args=["serve", "--vault", str(vault_root), *extra_args],
                env=env,
                cwd=str(tmp_path),
            )
            async with Client(params, read_timeout_seconds=REQUEST_TIMEOUT_S) as client:
                yield client
            return
        server = HttpServer(quire_bin, vault_root, env, log_path, extra_args)
        try:
            token = token_of(server) if token_of else server.token
            headers = {"Authorization": f"Bearer {token}"} if token else None
            async with create_mcp_http_client(headers=headers) as http:
                transport_ = streamable_http_client(server.url, http_client=http)
                async with Client(transport_, read_timeout_seconds=REQUEST_TIMEOUT_S) as client:
                    client.server_url = server.url
                    client.token = token
                    client.server_proc = server.proc
                    yield client
        finally:
            server.stop()

    return open_


async def next_event(subscription, seconds: float = 10.0):
    with anyio.fail_after(seconds):
        return await subscription.__anext__()


async def test_the_sdk_negotiates_the_stateless_revision(open_client, vault: Path):
    async with open_client(vault) as client:
        assert client.session.protocol_version == MODERN
        read = await client.call_tool("vault_read_note", {"path": "Welcome.md"})
        assert not read.is_error, read.content
        assert read.structured_content["content"] == (vault / "Welcome.md").read_text()
        tools = {tool.name for tool in (await client.list_tools()).tools}
        assert {"vault_read_note", "vault_write_note", "vault_search"} <= tools


async def test_listen_delivers_updates_for_the_notes_asked_for(open_client, vault: Path):
    async with open_client(vault) as client:
        async with client.listen(resource_subscriptions=[uri("Welcome.md")]) as subscription:
            assert subscription.honored.resource_subscriptions == [uri("Welcome.md")]
            assert not subscription.honored.resources_list_changed
            # A note nobody asked about and a new note change nothing on this stream.
            (vault / "Inbox" / "Other.md").write_text("other\n")
            (vault / "Welcome.md").write_text("# Welcome\n\nEdited by another program.\n")
            event = await next_event(subscription)
            assert isinstance(event, ResourceUpdated), event
            assert event.uri == uri("Welcome.md")


async def test_listen_sends_list_changes_only_when_asked(open_client, vault: Path):
    async with open_client(vault) as client:
        async with client.listen(resources_list_changed=True) as subscription:
            assert subscription.honored.resources_list_changed
            (vault / "Welcome.md").write_text("# Welcome\n\nAn edit is not a list change.\n")
            (vault / "Inbox" / "Brand new.md").write_text("new\n")
            event = await next_event(subscription)
            assert isinstance(event, ResourcesListChanged), event


async def test_listen_never_reports_a_note_the_identity_cannot_read(
    open_client, vault: Path, tmp_path: Path, transport: str
):
    if transport == "stdio":
        pytest.skip("identities are an HTTP feature; stdio is the owner")
    token = "r" * 40
    token_file = tmp_path / "reader.token"
    token_file.write_text(token + "\n")
    token_file.chmod(0o600)
    (vault / "Private").mkdir(exist_ok=True)
    (vault / "Private" / "Diary.md").write_text("secret\n")
    config = tmp_path / "quire.toml"
    config.write_text(
        f'[[identity]]\nname = "reader"\ntoken_file = "{token_file}"\n'
        'read = ["/"]\ndeny = ["Private/"]\n'
    )
    async with open_client(vault, ["--config", str(config)], token_of=lambda _: token) as client:
        watched = [uri("Private/Diary.md"), uri("Welcome.md")]
        async with client.listen(resource_subscriptions=watched, resources_list_changed=True) as subscription:
            # The acknowledgement does not tell which of the two exists or is readable.
            assert sorted(subscription.honored.resource_subscriptions) == sorted(watched)
            (vault / "Private" / "Diary.md").write_text("secret, edited\n")
            (vault / "Private" / "New secret.md").write_text("hidden\n")
            time.sleep(0.5)  # the watcher has seen both by now
            (vault / "Welcome.md").write_text("# Welcome\n\nVisible edit.\n")
            event = await next_event(subscription)
            # The first event is the visible edit: nothing about Private/ came before it.
            assert isinstance(event, ResourceUpdated) and event.uri == uri("Welcome.md"), event


async def test_a_stateless_request_needs_no_session(open_client, vault: Path, transport: str):
    if transport == "stdio":
        pytest.skip("sessions are an HTTP notion")
    async with open_client(vault) as client:
        body = {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {
                "name": "vault_read_note",
                "arguments": {"path": "Welcome.md"},
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": MODERN,
                    "io.modelcontextprotocol/clientCapabilities": {},
                },
            },
        }
        headers = {
            "Authorization": f"Bearer {client.token}",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": MODERN,
            "Mcp-Method": "tools/call",
            "Mcp-Name": "vault_read_note",
        }
        async with httpx2.AsyncClient() as http:
            response = await http.post(client.server_url, json=body, headers=headers)
        assert response.status_code == 200, response.text
        assert "mcp-session-id" not in response.headers
        assert "Welcome" in response.text


def test_the_printed_curl_example_works_as_pasted(quire_bin: Path, vault: Path, xdg_home: Path, tmp_path: Path):
    proc = subprocess.Popen(
        [str(quire_bin), "serve", "--vault", str(vault), "--http", "127.0.0.1:0"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=server_env(xdg_home),
    )
    try:
        lines: list[str] = []
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if line.startswith("Claude Code:"):
                break
        start = next(i for i, line in enumerate(lines) if line.startswith("Try it"))
        command = []
        for line in lines[start + 1:]:
            if not line.strip():
                break
            command.append(line)
        pasted = "\n".join(command)
        assert "curl" in pasted and "2026-07-28" in pasted, pasted
        run = subprocess.run(["bash", "-c", pasted], capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, run.stderr
        answer = json.loads(run.stdout)
        notes = answer["result"]["structuredContent"]["notes"]
        assert len(notes) == 5 and all(note["path"].endswith(".md") for note in notes), answer
    finally:
        proc.terminate()
        proc.wait(timeout=10)


async def test_a_rebuild_reports_progress_on_the_stateless_revision(open_client, vault: Path):
    seen: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total))

    notes = sum(1 for p in vault.rglob("*.md") if not any(part.startswith(".") for part in p.relative_to(vault).parts))
    async with open_client(vault) as client:
        assert client.session.protocol_version == MODERN
        result = await client.call_tool("vault_rebuild_index", {"force": True}, progress_callback=on_progress)
        assert not result.is_error, result.content
        assert result.structured_content["parsed"] == notes
    assert (notes, notes) in [(int(p), int(t or 0)) for p, t in seen], seen


async def test_a_listen_stream_ends_cleanly_when_the_server_stops(open_client, vault: Path, transport: str):
    if transport == "stdio":
        pytest.skip("a stdio server stops when its client does")
    async with open_client(vault) as client:
        async with client.listen(resource_subscriptions=[uri("Welcome.md")]) as subscription:
            client.server_proc.terminate()  # SIGTERM, as systemd stops the service
            ended_gracefully = False
            with anyio.fail_after(10):
                try:
                    await subscription.__anext__()
                except StopAsyncIteration:
                    ended_gracefully = True
            assert ended_gracefully, "the stream was cut instead of ending with its final result"
