"""The memory layer through the official SDK, over stdio and HTTP: an agent saves a preference and
recalls it, reads entries by file, section and date, deletes exactly one, and every guard holds
(retries, ambiguous deletes, line breaks, names leaving the folder, identities and ACLs). Also the
bootstrap of a fresh vault, the read-only and `[memory] enabled = false` surfaces, and the
protected folders that keep vault_delete_note and vault_move_note away from memory and daily
notes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import HttpServer, server_env, write_secret
from test_acl import AclServer
from vaultlib import error_code, write_files

pytestmark = pytest.mark.anyio

MEMORY_TOOLS = {
    "vault_list_memory_files",
    "vault_get_memory",
    "vault_update_memory",
    "vault_delete_memory",
    "vault_memory_recall",
}
MEMORY_WRITE_TOOLS = {"vault_update_memory", "vault_delete_memory"}
STARTERS = ["Agents.md", "Me.md", "Opinions.md", "Principles.md", "Routines.md"]


async def call(session, tool: str, args: dict) -> tuple[bool, dict | None, str]:
    result = await session.call_tool(tool, args)
    text = result.content[0].text if result.content else ""
    return bool(result.is_error), result.structured_content, text


async def ok(session, tool: str, args: dict) -> dict:
    failed, data, text = await call(session, tool, args)
    assert not failed, f"{tool} {args}: {text}"
    assert data is not None, f"{tool} has structured output"
    return data


async def refused(session, tool: str, args: dict) -> str:
    failed, _, text = await call(session, tool, args)
    assert failed, f"{tool} {args} should fail: {text}"
    return text


def fresh_vault(tmp_path: Path) -> Path:
    """A vault without a memory folder (the example vault has one)."""
    root = tmp_path / "fresh"
    write_files(root, {"Welcome.md": "# Welcome\n", ".obsidian/daily-notes.json": '{"folder": "Daily"}'})
    return root


async def test_an_agent_saves_a_preference_and_recalls_it(session, vault: Path):
    files = await ok(session, "vault_list_memory_files", {})
    opinions = next(f for f in files["files"] if f["file"] == "Opinions")
    assert opinions["path"] == "About Me/Opinions.md"
    assert opinions["scope"].startswith("What the user thinks")
    assert opinions["entry_policy"] == "timeline"
    assert {"name": "Food", "entries": 1} in opinions["sections"]

    saved = await ok(
        session,
        "vault_update_memory",
        {"file": "Opinions", "section": "Drinks", "entry": "Prefers green tea to coffee.", "date": "2026-03-01"},
    )
    assert saved["changed"] and not saved["created"] and saved["date"] == "2026-03-01"
    second = await ok(
        session,
        "vault_update_memory",
        {"file": "Opinions", "section": "Drinks", "entry": "Drinks coffee only on Sundays.", "date": "2026-02-01"},
    )
    # A retry after a timeout writes nothing.
    again = await ok(
        session,
        "vault_update_memory",
        {"file": "Opinions", "section": "Drinks", "entry": "Prefers green tea to coffee.", "date": "2026-03-01"},
    )
    assert not again["changed"] and again["revision"] == second["revision"]
    text = (vault / "About Me/Opinions.md").read_text()
    assert text.count("Prefers green tea to coffee.") == 1
    # Each entry goes on top of its section: the file reads newest-written first.
    assert "## Drinks\n- 2026-02-01 — Drinks coffee only on Sundays.\n- 2026-03-01 — Prefers green tea to coffee.\n" in text

    # A later conversation recalls it by topic, oldest first.
    recalled = await ok(session, "vault_memory_recall", {"query": "coffee"})
    assert not recalled["any_word"]
    assert [(e["file"], e["section"], e["date"], e["text"]) for e in recalled["entries"]] == [
        ("Opinions", "Drinks", "2026-02-01", "Drinks coffee only on Sundays."),
        ("Opinions", "Drinks", "2026-03-01", "Prefers green tea to coffee."),
    ]
    # No entry has every word: any word will do, and the answer says so.
    fallback = await ok(session, "vault_memory_recall", {"query": "tea zeppelin", "limit": 5})
    assert fallback["any_word"] and [e["text"] for e in fallback["entries"]] == ["Prefers green tea to coffee."]
    scoped = await ok(session, "vault_memory_recall", {"query": "coffee", "file": "Routines"})
    assert scoped["entries"] == []

    by_file = await ok(session, "vault_get_memory", {"file": "Opinions"})
    assert {e["section"] for e in by_file["entries"]} == {"Food", "Tools", "Drinks"}
    by_section = await ok(session, "vault_get_memory", {"file": "Opinions", "section": "Drinks"})
    assert [e["date"] for e in by_section["entries"]] == ["2026-02-01", "2026-03-01"]
    recent = await ok(session, "vault_get_memory", {"on_or_after": "2026-02-15"})
    assert ("Opinions", "Prefers green tea to coffee.") in [(e["file"], e["text"]) for e in recent["entries"]]
    assert all(e["date"] >= "2026-02-15" for e in recent["entries"])
    missing = await refused(session, "vault_get_memory", {"section": "Nope"})
    assert error_code(missing) == "invalid_argument"

    # Delete exactly one entry; the other stays.
    deleted = await ok(
        session,
        "vault_delete_memory",
        {"file": "Opinions", "section": "Drinks", "date": "2026-02-01", "entry": "Drinks coffee only on Sundays."},
    )
    assert deleted["changed"]
    after = (vault / "About Me/Opinions.md").read_text()
    assert "Drinks coffee only on Sundays." not in after and "Prefers green tea to coffee." in after
    gone = await ok(session, "vault_memory_recall", {"query": "Sundays"})
    assert gone["entries"] == [] or all("Sundays" not in e["text"] for e in gone["entries"])


async def test_guards(session, vault: Path):
    write_files(vault, {"About Me/Twice.md": "## A\n- 2026-01-01 — same\n- 2026-01-01: same\n"})
    before = (vault / "About Me/Twice.md").read_text()
    ambiguous = await refused(
        session, "vault_delete_memory", {"file": "Twice", "section": "A", "date": "2026-01-01", "entry": "same"}
    )
    assert "ambiguous" in ambiguous
    assert (vault / "About Me/Twice.md").read_text() == before

    for args in [
        {"file": "Opinions", "section": "Food\n## Evil", "entry": "x"},
        {"file": "Opinions", "section": "Food", "entry": "x\n- 2026-01-01 — injected"},
        {"file": "Opinions", "section": "Food", "entry": "x", "date": "2026-01-01\r"},
    ]:
        assert error_code(await refused(session, "vault_update_memory", args)) == "invalid_argument", args
    assert "injected" not in (vault / "About Me/Opinions.md").read_text()

    for name in ["../Escape", "../../outside", "Sub/File", ".hidden", "a\\b"]:
        text = await refused(session, "vault_update_memory", {"file": name, "section": "S", "entry": "x"})
        assert error_code(text) == "path_forbidden", (name, text)
        assert error_code(await refused(session, "vault_get_memory", {"file": name})) == "path_forbidden", name
    assert not (vault / "Escape.md").exists() and not (vault.parent / "outside.md").exists()
    assert not list((vault / "About Me").glob(".*"))


async def test_protected_folders_refuse_deletes_and_moves(session, vault: Path):
    for path in ["About Me/Me.md", "about me/Me.md", "Daily/2024-01-01.md"]:
        text = await refused(session, "vault_delete_note", {"path": path})
        assert error_code(text) == "path_forbidden", text
        assert "[vault] protected_folders" in text, text
    for old, new in [
        ("About Me/Me.md", "Inbox/Me.md"),
        ("Welcome.md", "About Me/Welcome.md"),
        ("Daily/2024-01-01.md", "Archive/2024-01-01.md"),
        ("Welcome.md", "Daily/Welcome.md"),
    ]:
        text = await refused(session, "vault_move_note", {"old_path": old, "new_path": new})
        assert error_code(text) == "path_forbidden", (old, new, text)
    assert (vault / "About Me/Me.md").exists() and (vault / "Daily/2024-01-01.md").exists()
    assert (vault / "Welcome.md").exists()
    # The memory and daily-note tools keep working inside them, and other notes move freely.
    await ok(session, "vault_update_memory", {"file": "Me", "section": "Work", "entry": "Is a nurse."})
    await ok(session, "vault_append_daily_note", {"text": "lunch", "date": "2024-01-01"})
    await ok(session, "vault_move_note", {"old_path": "Projects/Beta.md", "new_path": "Archive/Beta.md"})
    # Memory files are never orphans.
    orphans = await ok(session, "vault_find_orphans", {"limit": 1000})
    assert not [n for n in orphans["notes"] if n["path"].startswith("About Me/")]


async def test_protected_folders_can_be_configured(open_session, vault: Path, tmp_path: Path):
    config = tmp_path / "quire.toml"
    config.write_text('[vault]\nprotected_folders = ["Projects"]\n')
    async with open_session(vault, extra_args=("--config", str(config))) as session:
        text = await refused(session, "vault_delete_note", {"path": "Projects/Beta.md"})
        assert error_code(text) == "path_forbidden" and "listed in [vault] protected_folders" in text
        # The list replaces the default set.
        await ok(session, "vault_delete_note", {"path": "Daily/2024-01-02.md"})
    assert (vault / "Projects/Beta.md").exists() and not (vault / "Daily/2024-01-02.md").exists()


async def test_a_fresh_vault_gets_five_starter_files(open_session, tmp_path: Path):
    root = fresh_vault(tmp_path)
    async with open_session(root) as session:
        files = await ok(session, "vault_list_memory_files", {})
        assert sorted(f["path"] for f in files["files"]) == [f"About Me/{name}" for name in STARTERS]
        assert all(len(f["scope"]) > 40 for f in files["files"])
        routines = next(f for f in files["files"] if f["file"] == "Routines")
        assert routines["entry_policy"] == "living"
        # A new file is created on demand, with a scope callout to fill in.
        created = await ok(session, "vault_update_memory", {"file": "Pets", "section": "Cats", "entry": "Has a cat, Miso."})
        assert created["created"] and created["path"] == "About Me/Pets.md"
    assert sorted(p.name for p in (root / "About Me").iterdir()) == sorted(STARTERS + ["Pets.md"])
    assert (root / "About Me/Pets.md").read_text().startswith("> [!info] Scope of this file\n")


async def test_read_only_keeps_the_read_tools_and_skips_the_bootstrap(open_session, tmp_path: Path):
    root = fresh_vault(tmp_path)
    config = tmp_path / "quire.toml"
    config.write_text("[features]\nread_only = true\n")
    async with open_session(root, extra_args=("--config", str(config))) as session:
        names = {t.name for t in (await session.list_tools()).tools}
        assert MEMORY_TOOLS - MEMORY_WRITE_TOOLS <= names
        assert not (names & MEMORY_WRITE_TOOLS)
        assert "vault_update_memory" not in (session_instructions(session) or "")
        files = await ok(session, "vault_list_memory_files", {})
        assert files["files"] == []
        text = await refused(session, "vault_update_memory", {"file": "Me", "section": "S", "entry": "x"})
        assert error_code(text) == "invalid_argument"
    assert not (root / "About Me").exists()


def session_instructions(session) -> str | None:
    # The SDK keeps the initialize result on the session from 1.x on.
    result = getattr(session, "_initialize_result", None) or getattr(session, "initialize_result", None)
    return getattr(result, "instructions", None)


async def test_disabling_the_layer_removes_its_tools_and_mentions(open_session, tmp_path: Path):
    root = fresh_vault(tmp_path)
    config = tmp_path / "quire.toml"
    config.write_text("[memory]\nenabled = false\n")
    async with open_session(root, extra_args=("--config", str(config))) as session:
        tools = (await session.list_tools()).tools
        names = {t.name for t in tools}
        assert "vault_read_note" in names and not (names & MEMORY_TOOLS)
        described = json.dumps([t.description for t in tools])
        assert not any(name in described for name in MEMORY_TOOLS)
        instructions = session_instructions(session)
        if instructions is not None:
            assert not any(name in instructions for name in MEMORY_TOOLS)
        text = await refused(session, "vault_memory_recall", {"query": "coffee"})
        assert "no tool named" in text
        # Its folder is an ordinary folder again.
        await ok(session, "vault_write_note", {"path": "About Me/Me.md", "body": "mine\n"})
        await ok(session, "vault_delete_note", {"path": "About Me/Me.md"})
    assert not (root / "About Me/Me.md").exists()


async def test_instructions_point_at_recall_when_the_layer_is_on(open_session, tmp_path: Path):
    async with open_session(fresh_vault(tmp_path)) as session:
        instructions = session_instructions(session)
        if instructions is None:
            pytest.skip("this SDK does not keep the server instructions")
        assert "vault_memory_recall" in instructions


AGENT_TOKEN = "agent-token-0123456789abcdefghijklmnopqrstuvwxyz"
VIEWER_TOKEN = "viewer-token-0123456789abcdefghijklmnopqrstuvwxyz"

ACL_CONFIG = """
[[identity]]
name = "agent"
token_file = "agent.token"
read = ["/"]
write = ["About Me/Agents.md", "Inbox/"]
deny = ["About Me/Me.md"]

[[identity]]
name = "viewer"
token_file = "viewer.token"
read = ["About Me/Opinions.md"]
"""


class MemoryAclServer(AclServer):
    """test_acl's server with this file's identities."""

    def __init__(self, quire_bin, vault: Path, root: Path, xdg_home: Path):
        self.config = root / "quire.toml"
        write_secret(root / "agent.token", AGENT_TOKEN + "\n")
        write_secret(root / "viewer.token", VIEWER_TOKEN + "\n")
        self.config.write_text(ACL_CONFIG)
        self.server = HttpServer(
            quire_bin, vault, server_env(xdg_home), root / "quire-stderr.log", ["--config", str(self.config)]
        )
        self.url = self.server.url


@pytest.mark.parametrize("transport", ["http"])
async def test_identities_and_acls(quire_bin, tmp_path: Path, xdg_home: Path, transport):
    root = tmp_path / "vault"
    write_files(
        root,
        {
            "Inbox/todo.md": "x\n",
            "About Me/Me.md": "## Secret\n- 2026-01-01 — zebracorn is my middle name.\n",
            "About Me/Opinions.md": "## Food\n- 2026-01-01 — Likes quince.\n",
            "About Me/Agents.md": "## Style\n- 2026-01-01 — Short answers.\n",
        },
    )
    server = MemoryAclServer(quire_bin, root, tmp_path, xdg_home)
    try:
        async with server.session(AGENT_TOKEN) as agent:
            files = await ok(agent, "vault_list_memory_files", {})
            assert sorted(f["file"] for f in files["files"]) == ["Agents", "Opinions"]
            recalled = await ok(agent, "vault_memory_recall", {"query": "zebracorn"})
            assert recalled["entries"] == []
            everything = await ok(agent, "vault_get_memory", {})
            assert "zebracorn" not in json.dumps(everything)
            hidden = await refused(agent, "vault_get_memory", {"file": "Me"})
            assert error_code(hidden) == "not_found" and "zebracorn" not in hidden
            denied = await refused(agent, "vault_update_memory", {"file": "Opinions", "section": "Food", "entry": "x"})
            assert error_code(denied) == "path_forbidden"
            await ok(agent, "vault_update_memory", {"file": "Agents", "section": "Style", "entry": "No emoji."})
        async with server.session(VIEWER_TOKEN) as viewer:
            names = {t.name for t in (await viewer.list_tools()).tools}
            assert MEMORY_TOOLS - MEMORY_WRITE_TOOLS <= names and not (names & MEMORY_WRITE_TOOLS)
            files = await ok(viewer, "vault_list_memory_files", {})
            assert [f["file"] for f in files["files"]] == ["Opinions"]
            recalled = await ok(viewer, "vault_memory_recall", {"query": "short answers quince"})
            assert [e["file"] for e in recalled["entries"]] == ["Opinions"]
    finally:
        server.server.stop()
    assert "No emoji." in (root / "About Me/Agents.md").read_text()
    assert "- 2026-01-01 — Likes quince.\n" == (root / "About Me/Opinions.md").read_text().split("## Food\n")[1]
    # The folder existed: no starter file was added over the user's own.
    assert sorted(p.name for p in (root / "About Me").iterdir()) == ["Agents.md", "Me.md", "Opinions.md"]
