"""History, restore and undo (issue 49) through the official SDK: every write answers a
change_id that the audit log shares; a note's versions follow it across moves; a version reads
back whole or as a diff and restores as a new change; an undo puts every note of a change back,
refuses a note changed since, and is itself undone by undoing it. The acceptance test: a random
script of writes by two identities, then every change undone newest first, leaves the vault
as it began, over both MCP revisions."""

from __future__ import annotations

import json
import random
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import Client, ClientSession
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

from conftest import REQUEST_TIMEOUT_S, HttpServer, server_env, write_secret
from vaultlib import error_code, sha256_hex, write_files

pytestmark = pytest.mark.anyio


async def call(session, tool: str, args: dict):
    res = await session.call_tool(tool, args)
    text = res.content[0].text if res.content else ""
    return bool(res.is_error), res.structured_content, text


async def ok(session, tool: str, args: dict) -> dict:
    is_error, sc, text = await call(session, tool, args)
    assert not is_error, f"{tool} {args}: {text}"
    return sc


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file of the vault but Obsidian's trash (where undone creations go) and its settings."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.relative_to(root).parts[0] not in (".trash", ".obsidian")
    }


async def test_every_write_answers_a_change_id_the_audit_log_shares(session, vault, xdg_home):
    written = await ok(session, "vault_write_note", {"path": "Inbox/new.md", "body": "one\n"})
    patched = await ok(session, "vault_patch_note", {
        "path": "Inbox/new.md", "operation": "append", "content": "two",
    })
    assert written["change_id"].startswith("ch_") and patched["change_id"].startswith("ch_")
    assert written["change_id"] != patched["change_id"]
    # A read changes nothing and answers no change id.
    read = await ok(session, "vault_read_note", {"path": "Inbox/new.md"})
    assert "change_id" not in read
    [audit] = (xdg_home / "state" / "quire").glob("*/audit.jsonl")
    lines = [json.loads(line) for line in audit.read_text().splitlines()]
    by_change = {line.get("change_id"): line for line in lines}
    assert by_change[written["change_id"]]["path"] == "Inbox/new.md"
    assert by_change[patched["change_id"]]["revision_after"] == patched["revision"]


async def test_versions_follow_a_move_and_read_back_whole_or_as_a_diff(session, vault):
    await ok(session, "vault_write_note", {"path": "Drafts/a.md", "body": "alpha\nbeta\n"})
    await ok(session, "vault_replace_in_note", {
        "path": "Drafts/a.md", "old_text": "beta", "new_text": "gamma",
    })
    moved = await ok(session, "vault_move_note", {"old_path": "Drafts/a.md", "new_path": "Kept/a.md"})
    history = await ok(session, "vault_note_history", {"path": "Kept/a.md"})
    kinds = [(v["kind"], v["path"]) for v in history["versions"]]
    assert kinds == [("move", "Kept/a.md"), ("write", "Drafts/a.md"), ("create", "Drafts/a.md")]
    assert history["versions"][0]["change_id"] == moved["change_id"]
    first = history["versions"][-1]
    old = await ok(session, "vault_read_version", {"path": "Kept/a.md", "version_id": first["version_id"]})
    assert old["content"] == "alpha\nbeta\n" and old["revision"] == sha256_hex(b"alpha\nbeta\n")
    diff = await ok(session, "vault_read_version", {
        "path": "Kept/a.md", "version_id": first["version_id"], "diff_against": "current",
    })
    assert "-gamma" in diff["diff"] and "+beta" in diff["diff"], diff["diff"]
    # Restoring writes the old content back as a change of its own.
    current = (vault / "Kept/a.md").read_bytes()
    restored = await ok(session, "vault_restore_version", {
        "path": "Kept/a.md", "version_id": first["version_id"], "expected_revision": sha256_hex(current),
    })
    assert (vault / "Kept/a.md").read_text() == "alpha\nbeta\n"
    newest = (await ok(session, "vault_note_history", {"path": "Kept/a.md", "limit": 1}))["versions"][0]
    assert newest["kind"] == "restore" and newest["change_id"] == restored["change_id"]
    # Bad input: an unknown version, a version of another note.
    is_error, _, text = await call(session, "vault_read_version", {"path": "Kept/a.md", "version_id": 999999})
    assert is_error and error_code(text) == "not_found", text
    is_error, _, text = await call(session, "vault_read_version", {
        "path": "Welcome.md", "version_id": first["version_id"],
    })
    assert is_error and error_code(text) == "not_found", text


async def test_undo_refuses_a_later_change_and_undoing_an_undo_redoes(session, vault):
    original = (vault / "Welcome.md").read_bytes()
    edit = await ok(session, "vault_patch_note", {"path": "Welcome.md", "operation": "append", "content": "agent line"})
    edited = (vault / "Welcome.md").read_bytes()
    later = await ok(session, "vault_patch_note", {"path": "Welcome.md", "operation": "append", "content": "user line"})
    is_error, _, text = await call(session, "vault_undo", {"change_id": edit["change_id"]})
    assert is_error and error_code(text) == "conflict" and "Welcome.md" in text, text
    assert b"user line" in (vault / "Welcome.md").read_bytes(), "a refused undo changes nothing"
    plan = await ok(session, "vault_undo", {"change_id": later["change_id"], "dry_run": True})
    assert plan["notes"] == [{"path": "Welcome.md", "action": "restore"}]
    undo_later = await ok(session, "vault_undo", {"change_id": later["change_id"]})
    assert (vault / "Welcome.md").read_bytes() == edited
    undo_edit = await ok(session, "vault_undo", {"change_id": edit["change_id"]})
    assert (vault / "Welcome.md").read_bytes() == original
    is_error, _, text = await call(session, "vault_undo", {"change_id": edit["change_id"]})
    assert is_error and error_code(text) == "already_undone" and undo_edit["change_id"] in text, text
    # Undoing the undo redoes the edit.
    await ok(session, "vault_undo", {"change_id": undo_edit["change_id"]})
    assert (vault / "Welcome.md").read_bytes() == edited
    changes = (await ok(session, "vault_list_changes", {"limit": 10}))["changes"]
    assert changes[0]["kind"] == "undo" and changes[0]["undoes"] == undo_edit["change_id"]
    listed = {c["change_id"]: c for c in changes}
    assert listed[later["change_id"]]["undone_by"] == undo_later["change_id"]
    is_error, _, text = await call(session, "vault_undo", {"change_id": "ch_nope"})
    assert is_error and error_code(text) == "not_found", text


async def test_a_deleted_note_and_a_created_note_come_and_go_back(session, vault):
    beta = (vault / "Projects/Beta.md").read_bytes()
    deleted = await ok(session, "vault_delete_note", {"path": "Projects/Beta.md"})
    await ok(session, "vault_undo", {"change_id": deleted["change_id"]})
    assert (vault / "Projects/Beta.md").read_bytes() == beta
    created = await ok(session, "vault_write_note", {"path": "Fresh.md", "body": "new\n"})
    await ok(session, "vault_undo", {"change_id": created["change_id"]})
    assert not (vault / "Fresh.md").exists()
    assert (vault / ".trash/Fresh.md").read_text() == "new\n", "an undone creation goes to the trash"


async def test_an_outside_edit_is_a_version_an_agent_overwrite_can_go_back_to(session, vault):
    import anyio

    await ok(session, "vault_write_note", {"path": "Shared.md", "body": "agent draft\n"})
    (vault / "Shared.md").write_text("the user's edit in Obsidian\n")
    edited = sha256_hex(b"the user's edit in Obsidian\n")
    history = {}
    for _ in range(100):
        history = await ok(session, "vault_note_history", {"path": "Shared.md"})
        if history["versions"][0]["revision"] == edited:
            break
        await anyio.sleep(0.1)
    newest = history["versions"][0]
    assert newest["kind"] == "external" and newest["identity"] == "outside Quire", history
    assert newest["revision"] == edited, history
    # Quire's own writes are not taken for outside edits. write_text truncates, then writes: a
    # loaded machine can hold the writer past the read's settle window, and the watcher then
    # records the empty moment too, as another outside version.
    kinds = [v["kind"] for v in history["versions"]]
    assert kinds[-1] == "create" and set(kinds[:-1]) == {"external"} and len(kinds) <= 3, history
    overwrite = await ok(session, "vault_write_note", {
        "path": "Shared.md", "body": "agent overwrite\n", "overwrite": True,
        "expected_revision": newest["revision"],
    })
    await ok(session, "vault_undo", {"change_id": overwrite["change_id"]})
    assert (vault / "Shared.md").read_text() == "the user's edit in Obsidian\n"
    is_error, _, text = await call(session, "vault_undo", {"change_id": newest["change_id"]})
    assert is_error and error_code(text) == "invalid_argument" and "vault_restore_version" in text, text


async def test_the_console_lists_restores_and_undoes(open_session, vault, quire_bin, xdg_home):
    import subprocess

    async with open_session(vault) as session:
        first = await ok(session, "vault_write_note", {"path": "Console.md", "body": "one\n"})
        second = await ok(session, "vault_patch_note", {"path": "Console.md", "operation": "append", "content": "two"})

    def quire(*args: str) -> str:
        done = subprocess.run(
            [str(quire_bin), *args, "--vault", str(vault)], env=server_env(xdg_home),
            capture_output=True, text=True, timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    listed = quire("changes", "--limit", "5")
    assert listed.index(second["change_id"]) < listed.index(first["change_id"]), listed
    history = quire("history", "Console.md").splitlines()
    assert len(history) == 2 and first["change_id"] in history[1], history
    plan = quire("undo", second["change_id"], "--dry-run")
    assert "would undo" in plan and "restore  Console.md" in plan, plan
    assert "two" in (vault / "Console.md").read_text(), "a dry run changes nothing"
    undone = quire("undo", second["change_id"])
    assert (vault / "Console.md").read_text() == "one\n", undone
    version = history[1].split()[0]
    quire("restore", "Console.md", version)
    assert (vault / "Console.md").read_text() == "one\n"
    assert "undone by" in quire("changes", "--limit", "5")


# --- Two identities, both revisions: undo everything ------------------------------------------

ALICE = "alice-token-0123456789abcdefghijklmnopqrstuvwxyz"
BOB = "bob-token-0123456789abcdefghijklmnopqrstuvwxyzab"
RESTRICTED = "carol-token-0123456789abcdefghijklmnopqrstuvwxy"

CONFIG = """
[[identity]]
name = "alice"
token_file = "alice.token"
read = ["/"]
write = ["/"]

[[identity]]
name = "bob"
token_file = "bob.token"
read = ["/"]
write = ["/"]

[[identity]]
name = "carol"
token_file = "carol.token"
read = ["/"]
write = ["Inbox/"]
deny = ["Secret/"]
"""

SCRIPT_FILES = {
    "Inbox/todo.md": "# Todo\n\n- [ ] call Bob 📅 2030-01-01\n- [ ] write the plan\n",
    "Projects/plan.md": "---\nstatus: active\ntags: [work]\n---\n# Plan\n\nSee [[idea]] and [[todo]].\n",
    "Projects/idea.md": "# Idea\n\nA thought. #idea\n",
    "Notes/links.md": "Links to [[plan]], [[idea|the idea]] and [md](../Projects/idea.md).\n",
    "Secret/codes.md": "# Codes\n\nzebracorn\n",
}


@pytest.fixture
def identities(quire_bin, tmp_path, xdg_home):
    root = tmp_path / "vault"
    root.mkdir()
    write_files(root, SCRIPT_FILES)
    config = tmp_path / "quire.toml"
    config.write_text(CONFIG)
    for name, token in (("alice", ALICE), ("bob", BOB), ("carol", RESTRICTED)):
        write_secret(tmp_path / f"{name}.token", token + "\n")
    server = HttpServer(
        quire_bin, root, server_env(xdg_home), tmp_path / "quire-stderr.log", ["--config", str(config)],
    )
    yield root, server
    server.stop()


@asynccontextmanager
async def connect(server, token: str, revision: str):
    async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http:
        if revision == "2026-07-28":
            async with Client(
                streamable_http_client(server.url, http_client=http), read_timeout_seconds=REQUEST_TIMEOUT_S,
            ) as client:
                assert client.session.protocol_version == "2026-07-28"
                yield client
            return
        async with streamable_http_client(server.url, http_client=http) as streams:
            async with ClientSession(streams[0], streams[1], read_timeout_seconds=REQUEST_TIMEOUT_S) as session:
                await session.initialize()
                yield session


def random_step(rng: random.Random, root: Path, at: int) -> tuple[str, dict]:
    notes = sorted(
        str(p.relative_to(root)) for p in root.rglob("*.md")
        if p.relative_to(root).parts[0] not in (".trash", "Secret", "About Me")
    )
    note = rng.choice(notes)
    current = sha256_hex((root / note).read_bytes())
    kind = rng.choice(["write", "create", "patch", "replace", "properties", "task", "move", "delete", "batch"])
    if kind == "create" or len(notes) < 3:
        return "vault_write_note", {"path": f"Made/n{at}.md", "body": f"made {at} [[plan]]\n"}
    if kind == "write":
        return "vault_write_note", {
            "path": note, "body": f"rewritten {at}\n", "overwrite": True, "expected_revision": current,
        }
    if kind == "patch":
        return "vault_patch_note", {"path": note, "operation": "append", "content": f"line {at}"}
    if kind == "replace":
        return "vault_patch_note", {"path": note, "operation": "prepend", "content": f"top {at}"}
    if kind == "properties":
        return "vault_update_properties", {"path": note, "properties": {"step": at, "status": None}}
    if kind == "task":
        return "vault_create_task", {"path": note, "description": f"task {at}"}
    if kind == "batch":
        return "vault_set_property", {"paths": rng.sample(notes, 3), "name": "batch", "value": at}
    if kind == "move":
        return "vault_move_note", {"old_path": note, "new_path": f"Moved/{at}-{Path(note).name}"}
    return "vault_delete_note", {"path": note}


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
async def test_undoing_every_change_newest_first_restores_the_vault(identities, revision):
    root, server = identities
    start = snapshot(root)
    rng = random.Random(49)
    async with connect(server, ALICE, revision) as alice, connect(server, BOB, revision) as bob:
        made, used = [], set()
        for at in range(40):
            who = alice if at % 2 == 0 else bob
            tool, args = random_step(rng, root, at)
            is_error, sc, text = await call(who, tool, args)
            assert not is_error, f"step {at} {tool} {args}: {text}"
            assert sc["change_id"].startswith("ch_"), (tool, sc)
            made.append(sc["change_id"])
            used.add(tool)
        assert {"vault_move_note", "vault_delete_note", "vault_set_property"} <= used, used
        assert snapshot(root) != start
        listed = (await ok(alice, "vault_list_changes", {"limit": 100}))["changes"]
        # Newest first; older ones are the memory layer's starter files.
        assert [c["change_id"] for c in listed][: len(made)] == made[::-1], [
            c for c in listed if c["change_id"] not in made
        ][:3]
        assert {c["identity"] for c in listed[: len(made)]} == {"alice", "bob"}
        for change in reversed(made):
            who = bob if rng.random() < 0.5 else alice
            await ok(who, "vault_undo", {"change_id": change})
    assert snapshot(root) == start


async def test_a_restricted_identity_learns_nothing_from_history(identities):
    root, server = identities
    async with connect(server, ALICE, "2025-11-25") as alice:
        secret = await ok(alice, "vault_patch_note", {"path": "Secret/codes.md", "operation": "append", "content": "falconry"})
        moved_in = await ok(alice, "vault_move_note", {"old_path": "Projects/idea.md", "new_path": "Secret/idea.md"})
        await ok(alice, "vault_patch_note", {"path": "Inbox/todo.md", "operation": "append", "content": "shared"})
        readable_only = await ok(alice, "vault_write_note", {"path": "Projects/draft.md", "body": "draft\n"})
        secret_versions = (await ok(alice, "vault_note_history", {"path": "Secret/codes.md"}))["versions"]
    async with connect(server, RESTRICTED, "2025-11-25") as carol:
        listed = await ok(carol, "vault_list_changes", {"limit": 100})
        text = json.dumps(listed)
        assert "Secret/" not in text and "alice" not in text, text
        assert {c["identity"] for c in listed["changes"]} == {"another identity"}
        # The moved note's old path is readable, so the move shows, but never its new path.
        [move] = [c for c in listed["changes"] if c["tool"] == "vault_move_note"]
        assert "Projects/idea.md" in move["paths"], move
        by_name = await ok(carol, "vault_list_changes", {"identity": "alice"})
        assert by_name["changes"] == []
        for tool, args in [
            ("vault_note_history", {"path": "Secret/codes.md"}),
            ("vault_note_history", {"path": "Secret/idea.md"}),
            ("vault_read_version", {"path": "Secret/codes.md", "version_id": secret_versions[0]["version_id"]}),
            ("vault_read_version", {"path": "Inbox/todo.md", "version_id": secret_versions[0]["version_id"]}),
            ("vault_undo", {"change_id": secret["change_id"]}),
            # Issue 63, F11: a change that also touched a note carol may not read is unknown to her.
            ("vault_undo", {"change_id": moved_in["change_id"]}),
        ]:
            is_error, _, text = await call(carol, tool, args)
            assert is_error and error_code(text) == "not_found", (tool, text)
            assert "zebracorn" not in text and "falconry" not in text
        # A change touching a note carol may read but not write is refused as a whole.
        is_error, _, text = await call(carol, "vault_undo", {"change_id": readable_only["change_id"]})
        assert is_error and error_code(text) == "path_forbidden", text
        assert "Secret" not in text, text


# History answers a restricted identity gets must not move when only notes it cannot read change.
CAROL_HISTORY_READS = [
    ("vault_list_changes", {"limit": 1000}),
    ("vault_list_changes", {"path_prefix": "Secret", "limit": 1000}),
    ("vault_list_changes", {"identity": "alice", "limit": 1000}),
    ("vault_note_history", {"path": "Inbox/todo.md"}),
    ("vault_note_history", {"path": "Secret/codes.md"}),
    ("vault_note_history", {"path": "Secret/new.md"}),
    ("vault_undo", {"change_id": "ch_00000000000000000000", "dry_run": True}),
]


async def test_r49_history_answers_depend_on_nothing_the_caller_cannot_read(identities):
    root, server = identities
    async with connect(server, ALICE, "2025-11-25") as alice:
        await ok(alice, "vault_patch_note", {"path": "Inbox/todo.md", "operation": "append", "content": "seen"})
    async with connect(server, RESTRICTED, "2025-11-25") as carol:
        async def answers():
            found = []
            for tool, args in CAROL_HISTORY_READS:
                is_error, sc, text = await call(carol, tool, args)
                found.append((is_error, json.dumps(sc, sort_keys=True) if sc else text))
            return found

        before = await answers()
        async with connect(server, ALICE, "2025-11-25") as alice:
            await ok(alice, "vault_patch_note", {"path": "Secret/codes.md", "operation": "append", "content": "falconry"})
            await ok(alice, "vault_write_note", {"path": "Secret/new.md", "body": "zebracorn\n"})
            await ok(alice, "vault_move_note", {"old_path": "Secret/new.md", "new_path": "Secret/moved.md"})
            undo = await ok(alice, "vault_delete_note", {"path": "Secret/codes.md"})
            await ok(alice, "vault_undo", {"change_id": undo["change_id"]})
        (root / "Secret" / "outside.md").write_text("an outside edit, hidden\n")
        import anyio

        await anyio.sleep(2)
        after = await answers()
        for (tool, args), first, second in zip(CAROL_HISTORY_READS, before, after):
            assert first == second, (tool, args, first, second)
