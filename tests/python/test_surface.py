"""The MCP surface beyond tools, over both transports: notes as note:// resources (paged list,
read, subscriptions fed by real file changes), the vault-orientation prompt, logging/setLevel,
and the feature switches (read_only, disabled_tools) that trim tools/list."""

from __future__ import annotations

import asyncio
from pathlib import Path
from urllib.parse import quote

import httpx2
import pytest
from mcp import types
from mcp.shared.exceptions import MCPError

from conftest import HttpServer, server_env

pytestmark = pytest.mark.anyio

WRITE_TOOLS = {"vault_write_note", "vault_delete_note"}


def uri(path: str) -> str:
    return "note://" + quote(path, safe="/")


async def wait_for(predicate, seconds: float = 10.0):
    deadline = asyncio.get_running_loop().time() + seconds
    while asyncio.get_running_loop().time() < deadline:
        if predicate():
            return True
        await asyncio.sleep(0.05)
    return predicate()


async def test_resources_list_every_note_with_paging(open_session, vault: Path):
    for i in range(250):
        (vault / "Bulk" / f"n{i:03d}.md").parent.mkdir(exist_ok=True)
        (vault / "Bulk" / f"n{i:03d}.md").write_text(f"note {i}\n")
    expected = sorted(
        str(p.relative_to(vault)) for p in vault.rglob("*.md") if not any(part.startswith(".") for part in p.relative_to(vault).parts)
    )
    async with open_session(vault) as session:
        seen, cursor, pages = [], None, 0
        while True:
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await session.list_resources(params=params)
            pages += 1
            seen.extend(page.resources)
            cursor = page.next_cursor
            if not cursor:
                break
    assert pages >= 2, "250+ notes need more than one page"
    assert [r.name for r in seen] == expected
    assert all(str(r.uri) == uri(r.name) and r.mime_type == "text/markdown" for r in seen)


async def test_read_resource_and_template(session, vault: Path):
    path = "Reading/Café Notes.md"
    result = await session.read_resource(uri(path))
    (content,) = result.contents
    assert content.text == (vault / path).read_text()
    assert content.mime_type == "text/markdown"
    templates = await session.list_resource_templates()
    assert [t.uri_template for t in templates.resource_templates] == ["note://{+path}"]
    with pytest.raises(MCPError):
        await session.read_resource("note://Does/Not/Exist.md")
    with pytest.raises(MCPError):
        await session.read_resource("note://../outside.md")


async def test_subscriptions_report_external_changes(open_session, vault: Path):
    updated: list[str] = []
    list_changes: list[bool] = []

    async def on_message(message):
        if isinstance(message, types.ResourceUpdatedNotification):
            updated.append(str(message.params.uri))
        elif isinstance(message, types.ResourceListChangedNotification):
            list_changes.append(True)

    async with open_session(vault, message_handler=on_message) as session:
        target = uri("Welcome.md")
        await session.subscribe_resource(target)
        (vault / "Welcome.md").write_text("# Welcome\n\nEdited by another program.\n")
        assert await wait_for(lambda: target in updated), "no resources/updated for an edited note"
        (vault / "Inbox" / "Brand new.md").write_text("new\n")
        assert await wait_for(lambda: list_changes), "no list_changed for a new note"
        await session.unsubscribe_resource(target)
        updated.clear()
        (vault / "Welcome.md").write_text("# Welcome\n\nEdited again.\n")
        (vault / "Inbox" / "Marker.md").write_text("marker\n")
        list_changes.clear()
        assert await wait_for(lambda: list_changes), "the watcher stopped"
        assert target not in updated, "updates continued after unsubscribe"


async def test_orientation_prompt(session):
    prompts = await session.list_prompts()
    assert "vault-orientation" in [p.name for p in prompts.prompts]
    result = await session.get_prompt("vault-orientation")
    text = result.messages[0].content.text
    assert "Projects/" in text and "Daily/" in text
    assert "untrusted" in text
    with pytest.raises(MCPError):
        await session.get_prompt("no-such-prompt")


async def test_logging_level_is_honoured(open_session, vault: Path):
    logged: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params):
        logged.append(params)

    async with open_session(vault, logging_callback=on_log) as session:
        await session.call_tool("vault_read_note", {"path": "Missing.md"})
        assert await wait_for(lambda: logged, 5), "a failed call is logged at warning by default"
        assert logged[0].level == "warning" and "not_found" in str(logged[0].data)
        await session.set_logging_level("error")
        logged.clear()
        await session.call_tool("vault_read_note", {"path": "Missing.md"})
        await asyncio.sleep(0.3)
        assert logged == [], "warnings are suppressed at level error"


@pytest.mark.parametrize(
    "config,hidden",
    [
        ("[features]\nread_only = true\n", WRITE_TOOLS),
        ('[features]\ndisabled_tools = ["vault_delete_note"]\n', {"vault_delete_note"}),
    ],
)
async def test_feature_switches_trim_tools(open_session, vault: Path, tmp_path: Path, config, hidden):
    config_file = tmp_path / "quire.toml"
    config_file.write_text(config)
    async with open_session(vault, extra_args=("--config", str(config_file))) as session:
        names = {t.name for t in (await session.list_tools()).tools}
        assert "vault_read_note" in names
        assert not (names & hidden), names
        for tool in hidden:
            result = await session.call_tool(tool, {"path": "Welcome.md", "body": "x"})
            assert result.is_error
            assert "invalid_argument" in result.content[0].text
    assert (vault / "Welcome.md").exists()


@pytest.mark.parametrize("transport", ["http"])
async def test_http_needs_the_token(quire_bin: Path, vault: Path, xdg_home: Path, tmp_path: Path, transport):
    server = HttpServer(quire_bin, vault, server_env(xdg_home), tmp_path / "http.log")
    try:
        assert server.token and len(server.token) >= 32
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
        }
        headers = {"Accept": "application/json, text/event-stream"}
        async with httpx2.AsyncClient() as http:
            missing = await http.post(server.url, json=body, headers=headers)
            wrong = await http.post(server.url, json=body, headers={**headers, "Authorization": "Bearer " + "x" * 64})
            right = await http.post(server.url, json=body, headers={**headers, "Authorization": f"Bearer {server.token}"})
            health = await http.get(server.url.replace("/mcp", "/healthz"))
        assert missing.status_code == 401 and "resource_metadata=" in missing.headers["www-authenticate"]
        assert wrong.status_code == 401 and 'error="invalid_token"' in wrong.headers["www-authenticate"]
        assert right.status_code == 200
        assert health.status_code == 200
    finally:
        server.stop()
    # The token survives a restart, so client configurations keep working.
    again = HttpServer(quire_bin, vault, server_env(xdg_home), tmp_path / "http2.log")
    try:
        assert again.token == server.token
    finally:
        again.stop()


async def test_a_rebuild_the_client_triggers_reports_progress(session, vault: Path):
    seen: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total))

    notes = sum(1 for p in vault.rglob("*.md") if not any(part.startswith(".") for part in p.relative_to(vault).parts))
    result = await session.call_tool("vault_rebuild_index", {"force": True}, progress_callback=on_progress)
    assert not result.is_error, result.content
    stats = result.structured_content
    assert stats["notes"] == notes and stats["parsed"] == notes, stats
    assert await wait_for(lambda: (notes, notes) in [(int(p), int(t or 0)) for p, t in seen], 5), seen
    progresses = [p for p, _ in seen]
    assert progresses == sorted(progresses), "progress only grows"
    # Without force only what changed is parsed.
    (vault / "Inbox" / "Fresh.md").write_text("fresh\n")
    again = await session.call_tool("vault_rebuild_index", {})
    assert again.structured_content["parsed"] <= 1, again.structured_content


async def test_a_cancelled_rebuild_stops_early(open_session, vault: Path, tmp_path: Path):
    bulk = vault / "Bulk"
    bulk.mkdir()
    for n in range(3000):
        (bulk / f"Note {n}.md").write_text(f"# Note {n}\n\nSome words about item {n}. #bulk\n")
    notes = sum(1 for p in vault.rglob("*.md") if not any(part.startswith(".") for part in p.relative_to(vault).parts))
    seen: list[float] = []
    started = asyncio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)
        if progress > 0:
            started.set()

    async with open_session(vault) as session:
        # The startup index is done once a search sees the bulk notes.
        assert await wait_for(lambda: True)
        ready = await session.call_tool("vault_search_by_tag", {"tag": "bulk", "limit": 1})
        assert not ready.is_error, ready.content
        call = asyncio.create_task(
            session.call_tool("vault_rebuild_index", {"force": True}, progress_callback=on_progress)
        )
        await asyncio.wait_for(started.wait(), 30)
        call.cancel()  # the SDK sends notifications/cancelled for the request
        with pytest.raises(asyncio.CancelledError):
            await call
        log = tmp_path / "quire-stderr.log"
        assert await wait_for(lambda: "stopped early" in log.read_text(errors="replace"), 30), (
            "the rebuild ran on after its request was cancelled"
        )
        # The server stays usable, and a later rebuild completes.
        again = await session.call_tool("vault_rebuild_index", {})
        assert not again.is_error, again.content
        assert again.structured_content["notes"] == notes
