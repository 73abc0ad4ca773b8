"""Identities and folder ACLs through the official SDK over HTTP: a matrix of identities x
paths x every tool, listings and search that never show a denied folder, Unicode and case
spellings of a denied folder, write tools withheld from read-only identities, and reloads.

Identities need bearer tokens, so these tests run over HTTP only (stdio is always the owner)."""

from __future__ import annotations

import asyncio
import json
import time
import unicodedata
from contextlib import asynccontextmanager
from pathlib import Path

import httpx2 as httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

from conftest import REQUEST_TIMEOUT_S, HttpServer, server_env, write_secret
from vaultlib import error_code, write_files

pytestmark = pytest.mark.anyio

AGENT_TOKEN = "agent-token-0123456789abcdefghijklmnopqrstuvwxyz"
VIEWER_TOKEN = "viewer-token-0123456789abcdefghijklmnopqrstuvwxyz"

# Words that exist only inside denied notes: no answer to an identity may contain them.
LEAKS = ("zebracorn", "falconry", "secretproject", "Privé", "Keys/")

FILES = {
    "Inbox/todo.md": "# Todo\n\n- [ ] call Bob #shared-tag\n",
    "Projects/plan.md": "---\nstatus: active\n---\n# Plan\n\nThe plan. #project #shared-tag\n",
    "Privé/secret.md": "---\ncodename: falconry\n---\n# Secret\n\nzebracorn lives here. #secretproject #shared-tag\n",
    "Privé/Deep/more.md": "# More\n\nzebracorn again.\n",
    "Keys/api.md": "# Keys\n\nzebracorn keys.\n",
    "Shared/Public/ok.md": "# Ok\n\nPublic words. #shared-tag\n",
    "Shared/Other/no.md": "# No\n\nOther words.\n",
}

CONFIG = """
[acl]
always_deny = ["Keys/"]

[[identity]]
name = "agent"
token_file = "agent.token"
read = ["/"]
write = ["Inbox/"]
deny = ["Privé/"]

[[identity]]
name = "viewer"
token_file = "viewer.token"
read = ["Shared/Public/"]
"""

# Spellings of the denied folder a model, a keyboard or a file system might produce.
SPELLINGS = ["Privé", "PRIVÉ", "privé", "Prive\u0301", "prive", "PRIVE", "Ｐｒｉｖé", "PRİVÉ", "prıve"]

WRITE_TOOLS = {
    "vault_write_note", "vault_delete_note", "vault_patch_note", "vault_replace_in_note",
    "vault_insert_at_anchor", "vault_replace_span", "vault_delete_span", "vault_update_properties",
    "vault_move_note", "vault_write_base",
}


def path_tools(path: str, folder: str) -> list[tuple[str, dict]]:
    """Every tool, aimed at `path` (a note) or `folder`."""
    return [
        ("vault_read_note", {"path": path}),
        ("vault_read_note", {"path": path, "outline": True}),
        ("vault_read_note", {"path": path, "properties_only": True}),
        ("vault_get_backlinks", {"path": path}),
        ("vault_get_outgoing_links", {"path": path}),
        ("vault_find_broken_links", {"folder": folder}),
        ("vault_move_note", {"old_path": path, "new_path": "Inbox/moved.md"}),
        ("vault_list_notes", {"folder": folder}),
        ("vault_search", {"query": "zebracorn", "filters": {"folder": folder}}),
        ("vault_grep", {"pattern": "zebracorn", "folder": folder}),
        ("vault_search_by_tag", {"tag": "secretproject", "folder": folder}),
        ("vault_search_by_folder", {"folder": folder}),
        ("vault_recent_notes", {"folder": folder}),
        ("vault_list_tags", {"folder": folder}),
        ("vault_list_property_keys", {"folder": folder}),
        ("vault_list_property_values", {"key": "codename", "folder": folder}),
        ("vault_search_by_property", {"key": "codename", "value": "falconry", "folder": folder}),
        ("vault_write_note", {"path": path, "body": "x\n"}),
        ("vault_write_note", {"path": f"{folder}/new.md", "body": "x\n"}),
        ("vault_delete_note", {"path": path}),
        ("vault_patch_note", {"path": path, "operation": "append", "content": "x"}),
        ("vault_replace_in_note", {"path": path, "old_text": "zebracorn", "new_text": "x"}),
        ("vault_insert_at_anchor", {"path": path, "anchor": "zebracorn", "position": "after", "content": "x"}),
        ("vault_replace_span", {"path": path, "start_anchor": "zebracorn", "content": "x"}),
        ("vault_delete_span", {"path": path, "start_anchor": "zebracorn"}),
        ("vault_update_properties", {"path": path, "properties": {"codename": None}}),
        ("vault_query_base", {"path": path}),
        ("vault_query_base", {"base": "views:\n  - type: table\n", "this": path}),
        ("vault_list_bases", {"folder": folder}),
        ("vault_write_base", {"path": f"{folder}/new.base", "base": "views: []\n"}),
    ]


WHOLE_VAULT_TOOLS = [
    ("vault_list_notes", {"limit": 1000}),
    ("vault_search", {"query": "zebracorn"}),
    ("vault_search", {"query": ""}),
    ("vault_grep", {"pattern": "zebracorn|falconry|secretproject"}),
    ("vault_search_by_tag", {"tag": "secretproject"}),
    ("vault_search_by_tag", {"tag": "shared-tag"}),
    ("vault_recent_notes", {"limit": 1000}),
    ("vault_list_tags", {"limit": 1000}),
    ("vault_list_property_keys", {"limit": 1000}),
    ("vault_list_property_values", {"key": "codename"}),
    ("vault_search_by_property", {"key": "codename", "value": "falconry"}),
    ("vault_list_bases", {}),
    ("vault_query_base", {
        "base": "views:\n  - type: table\n    order: [file.path, codename, file.tags, file.links, file.backlinks]\n",
        "limit": 1000,
    }),
]


class AclServer:
    def __init__(self, quire_bin, vault, root: Path, xdg_home: Path):
        self.config = root / "quire.toml"
        write_secret(root / "agent.token", AGENT_TOKEN + "\n")
        write_secret(root / "viewer.token", VIEWER_TOKEN + "\n")
        self.config.write_text(CONFIG)
        self.server = HttpServer(
            quire_bin, vault, server_env(xdg_home), root / "quire-stderr.log",
            ["--config", str(self.config)],
        )
        self.url = self.server.url

    @asynccontextmanager
    async def session(self, token: str, **kwargs):
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http:
            async with streamable_http_client(self.url, http_client=http) as streams:
                async with ClientSession(
                    streams[0], streams[1], read_timeout_seconds=REQUEST_TIMEOUT_S, **kwargs
                ) as session:
                    await session.initialize()
                    yield session


@pytest.fixture
def acl_vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    write_files(root, FILES)
    # Links in readable folders that lead into denied ones must not open a way in.
    (root / "Inbox" / "link.md").symlink_to("../Privé/secret.md")
    (root / "Shared" / "Public" / "door").symlink_to("../../Privé", target_is_directory=True)
    return root


@pytest.fixture
def acl_server(quire_bin, acl_vault, tmp_path, xdg_home):
    server = AclServer(quire_bin, acl_vault, tmp_path, xdg_home)
    yield server
    server.server.stop()


def strings(value) -> list[str]:
    """Every string inside `value`, longest first (so a path is removed before its folder)."""
    if isinstance(value, str):
        # Quire echoes paths in NFC, the form it stores them in.
        return [value, unicodedata.normalize("NFC", value)]
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    return sorted((s for item in items for s in strings(item)), key=len, reverse=True)


async def call(session, tool: str, args: dict) -> tuple[bool, str]:
    res = await session.call_tool(tool, args)
    text = res.content[0].text if res.content else ""
    if res.structured_content is not None:
        text += json.dumps(res.structured_content, ensure_ascii=False)
    return bool(res.is_error), text


def assert_no_leak(tool: str, args: dict, text: str, echoed: str = "") -> None:
    # Error messages may echo the caller's own input; that reveals nothing.
    scrubbed = text.replace(echoed, "") if echoed else text
    for word in LEAKS:
        assert word not in scrubbed, f"{tool} {args} leaked {word!r}: {text[:400]}"


@pytest.mark.parametrize("token", [AGENT_TOKEN, VIEWER_TOKEN], ids=["agent", "viewer"])
async def test_every_tool_on_every_spelling_of_a_denied_folder(acl_server, token):
    async with acl_server.session(token) as session:
        offered = {tool.name for tool in (await session.list_tools()).tools}
        for spelling in SPELLINGS + ["Keys"]:
            note = "api.md" if spelling == "Keys" else "secret.md"
            for tool, args in path_tools(f"{spelling}/{note}", spelling):
                is_error, text = await call(session, tool, args)
                if tool not in offered:
                    assert is_error and error_code(text) == "invalid_argument", text
                    assert "there is no tool named" in text
                    continue
                if tool in WRITE_TOOLS:
                    assert is_error and error_code(text) == "path_forbidden", (tool, args, text)
                else:
                    assert is_error and error_code(text) == "not_found", (tool, args, text)
                for value in strings(args):
                    text = text.replace(value, "")
                assert_no_leak(tool, args, text)


async def test_a_denied_note_answers_exactly_like_a_missing_one(acl_server):
    async with acl_server.session(AGENT_TOKEN) as session:
        for tool in ("vault_read_note",):
            _, denied = await call(session, tool, {"path": "Privé/secret.md"})
            _, missing = await call(session, tool, {"path": "Privé/nothing.md"})
            assert denied.replace("secret.md", "X") == missing.replace("nothing.md", "X")
        _, denied = await call(session, "vault_list_notes", {"folder": "Privé"})
        _, missing = await call(session, "vault_list_notes", {"folder": "Nowhere"})
        assert denied.replace("Privé", "X") == missing.replace("Nowhere", "X")
        # A refused write reads the same whether or not the note exists.
        _, existing = await call(session, "vault_delete_note", {"path": "Projects/plan.md"})
        _, absent = await call(session, "vault_delete_note", {"path": "Projects/none.md"})
        assert existing.replace("plan.md", "X") == absent.replace("none.md", "X")


@pytest.mark.parametrize("token", [AGENT_TOKEN, VIEWER_TOKEN], ids=["agent", "viewer"])
async def test_whole_vault_listings_and_search_never_show_denied_notes(acl_server, token):
    async with acl_server.session(token) as session:
        for tool, args in WHOLE_VAULT_TOOLS:
            is_error, text = await call(session, tool, args)
            assert not is_error, (tool, text)
            assert_no_leak(tool, args, text)
        resources = await session.list_resources()
        uris = [str(r.uri) for r in resources.resources]
        assert not any("Priv" in uri or "Keys" in uri for uri in uris), uris
        with pytest.raises(Exception) as raised:
            await session.read_resource("note://Priv%C3%A9/secret.md")
        assert "zebracorn" not in str(raised.value)
        prompt = await session.get_prompt("vault-orientation")
        text = json.dumps(prompt.model_dump(), ensure_ascii=False)
        assert_no_leak("vault-orientation", {}, text)


async def test_counts_include_only_visible_notes(acl_server):
    async with acl_server.session(AGENT_TOKEN) as session:
        _, text = await call(session, "vault_list_tags", {"limit": 1000})
        res = await session.call_tool("vault_list_tags", {"limit": 1000})
        counts = {row["tag"]: row["count"] for row in res.structured_content["tags"]}
        # Inbox/todo, Projects/plan and Shared/Public/ok; not the denied Privé/secret.
        assert counts["shared-tag"] == 3, counts
    async with acl_server.session(VIEWER_TOKEN) as session:
        res = await session.call_tool("vault_list_tags", {"limit": 1000})
        counts = {row["tag"]: row["count"] for row in res.structured_content["tags"]}
        assert counts == {"shared-tag": 1}, counts


async def test_a_folder_leading_to_a_readable_one_shows_nothing_else(acl_server):
    async with acl_server.session(VIEWER_TOKEN) as session:
        for folder in (None, "Shared", "Shared/Public"):
            args = {"limit": 1000} | ({"folder": folder} if folder else {})
            res = await session.call_tool("vault_list_notes", args)
            assert not res.is_error, res.content
            assert [n["path"] for n in res.structured_content["notes"]] == ["Shared/Public/ok.md"]
        for folder in ("Shared/Other", "Projects", "Inbox"):
            is_error, text = await call(session, "vault_list_notes", {"folder": folder})
            assert is_error and error_code(text) == "not_found", text
        is_error, text = await call(session, "vault_read_note", {"path": "Shared/Public/ok.md"})
        assert not is_error, text
        is_error, text = await call(session, "vault_read_note", {"path": "Shared/Other/no.md"})
        assert is_error and error_code(text) == "not_found"


async def test_write_tools_follow_write_rules(acl_server, acl_vault):
    async with acl_server.session(VIEWER_TOKEN) as session:
        names = {tool.name for tool in (await session.list_tools()).tools}
        assert names and not (names & WRITE_TOOLS), names
    async with acl_server.session(AGENT_TOKEN) as session:
        names = {tool.name for tool in (await session.list_tools()).tools}
        assert WRITE_TOOLS <= names
        is_error, text = await call(session, "vault_write_note", {"path": "Inbox/new.md", "body": "hi\n"})
        assert not is_error, text
        is_error, text = await call(
            session, "vault_patch_note", {"path": "Inbox/todo.md", "operation": "append", "content": "- [ ] more"}
        )
        assert not is_error, text
        before = (acl_vault / "Projects/plan.md").read_bytes()
        for tool, args in path_tools("Projects/plan.md", "Projects"):
            if tool in WRITE_TOOLS:
                is_error, text = await call(session, tool, args)
                assert is_error and error_code(text) == "path_forbidden", (tool, text)
        assert (acl_vault / "Projects/plan.md").read_bytes() == before
        assert not (acl_vault / "Projects/new.md").exists()
        is_error, text = await call(session, "vault_read_note", {"path": "Projects/plan.md"})
        assert not is_error, text


async def test_unknown_tokens_and_the_owner_token_get_401(acl_server):
    async with httpx.AsyncClient(timeout=30) as http:
        for headers in ({}, {"Authorization": "Bearer not-a-token-at-all-0123456789abcdef"}):
            response = await http.post(
                acl_server.url,
                headers={"Accept": "application/json, text/event-stream", **headers},
                json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
            )
            assert response.status_code == 401
            assert "resource_metadata=" in response.headers["www-authenticate"]


async def test_reload_changes_rules_and_announces_tool_changes(acl_server):
    announced = asyncio.Event()

    async def on_message(message):
        # mcp 2.x hands over the notification itself; 1.x wrapped it in `.root`.
        method = getattr(message, "method", None) or getattr(getattr(message, "root", None), "method", "")
        if method == "notifications/tools/list_changed":
            announced.set()

    async with acl_server.session(VIEWER_TOKEN, message_handler=on_message) as session:
        assert not ({t.name for t in (await session.list_tools()).tools} & WRITE_TOOLS)
        # An invalid file is refused and the last good rules stay.
        acl_server.config.write_text(CONFIG + '\n[[identity]]\nname = "bad"\nread = ["../x/"]\n')
        await asyncio.sleep(3)
        is_error, text = await call(session, "vault_read_note", {"path": "Shared/Public/ok.md"})
        assert not is_error, text
        acl_server.config.write_text(CONFIG.replace(
            'read = ["Shared/Public/"]', 'read = ["Shared/Public/"]\nwrite = ["Shared/Public/"]'
        ))
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            names = {t.name for t in (await session.list_tools()).tools}
            if WRITE_TOOLS <= names:
                break
            await asyncio.sleep(0.3)
        assert WRITE_TOOLS <= names
        await asyncio.wait_for(announced.wait(), 10)
        is_error, text = await call(session, "vault_write_note", {"path": "Shared/Public/new.md", "body": "x\n"})
        assert not is_error, text


def test_acl_explain_names_the_deciding_rule(quire_bin, acl_vault, tmp_path, xdg_home):
    import subprocess

    write_secret(tmp_path / "agent.token", AGENT_TOKEN)
    write_secret(tmp_path / "viewer.token", VIEWER_TOKEN)
    config = tmp_path / "quire.toml"
    config.write_text(CONFIG)
    cases = [
        ("agent", "PRIVE/secret.md", ["read  denied by deny rule \"Privé/\""]),
        ("agent", "Inbox/a.md", ["write allowed by write rule \"Inbox/\""]),
        ("agent", "Projects/a.md", ["read  allowed by read rule \"/\"", "write denied: read rule \"/\" covers it"]),
        ("viewer", "Shared", ["list  allowed: the folder leads to \"Shared/Public/\""]),
        ("viewer", "Keys/api.md", ["always_deny rule \"Keys/\""]),
    ]
    for identity, path, needles in cases:
        run = subprocess.run(
            [str(quire_bin), "--config", str(config), "--vault", str(acl_vault), "acl", "explain", identity, path],
            capture_output=True, text=True, env=server_env(xdg_home), timeout=30,
        )
        assert run.returncode == 0, run.stderr
        for needle in needles:
            assert needle in run.stdout, run.stdout
    run = subprocess.run(
        [str(quire_bin), "--config", str(config), "--vault", str(acl_vault), "acl", "explain", "nobody", "a.md"],
        capture_output=True, text=True, env=server_env(xdg_home), timeout=30,
    )
    assert run.returncode != 0 and "nobody" in run.stderr


async def test_the_audit_log_records_changes_and_refusals(acl_server, xdg_home):
    async with acl_server.session(AGENT_TOKEN) as session:
        res = await session.call_tool("vault_write_note", {"path": "Inbox/a.md", "body": "one\n"})
        first = res.structured_content["revision"]
        res = await session.call_tool(
            "vault_replace_in_note", {"path": "Inbox/a.md", "old_text": "one", "new_text": "two"}
        )
        second = res.structured_content["revision"]
        await session.call_tool("vault_read_note", {"path": "Inbox/a.md"})
        await session.call_tool("vault_write_note", {"path": "Projects/x.md", "body": "x\n"})
        await session.call_tool("vault_read_note", {"path": "Privé/secret.md"})
        await session.call_tool("vault_list_notes", {"folder": "PRIVE"})
        res = await session.call_tool("vault_delete_note", {"path": "Inbox/a.md", "expected_revision": second})
        assert not res.is_error, res.content
    async with acl_server.session(VIEWER_TOKEN) as session:
        await session.call_tool("vault_write_note", {"path": "Shared/Public/x.md", "body": "x\n"})
    logs = list((xdg_home / "state" / "quire").glob("*/audit.jsonl"))
    assert len(logs) == 1, logs
    assert oct(logs[0].stat().st_mode & 0o777) == "0o600"
    entries = [json.loads(line) for line in logs[0].read_text().splitlines()]
    for entry in entries:
        assert entry["time"].endswith("Z") and entry["client_id"] is None
    # The memory layer's starter files, written by the server itself at start, come first.
    bootstrap = [e for e in entries if e["tool"] == "memory-bootstrap"]
    assert [(e["identity"], e["path"]) for e in bootstrap] == [
        ("owner", f"About Me/{name}.md") for name in ["Me", "Opinions", "Principles", "Routines", "Agents"]
    ]
    assert entries[: len(bootstrap)] == bootstrap
    picked = [
        (e["identity"], e["tool"], e["path"], e.get("destination"), e["revision_before"], e["revision_after"], e["outcome"])
        for e in entries[len(bootstrap):]
    ]
    assert picked == [
        ("agent", "vault_write_note", "Inbox/a.md", None, None, first, "ok"),
        ("agent", "vault_replace_in_note", "Inbox/a.md", None, first, second, "ok"),
        ("agent", "vault_write_note", "Projects/x.md", None, None, None, "denied"),
        ("agent", "vault_read_note", "Privé/secret.md", None, None, None, "denied"),
        ("agent", "vault_list_notes", "PRIVE", None, None, None, "denied"),
        ("agent", "vault_delete_note", "Inbox/a.md", ".trash/a.md", second, None, "ok"),
        ("viewer", "vault_write_note", "Shared/Public/x.md", None, None, None, "denied"),
    ], picked
    text = logs[0].read_text()
    assert AGENT_TOKEN not in text and VIEWER_TOKEN not in text


async def test_links_into_a_denied_folder_lead_nowhere(acl_server, acl_vault):
    async with acl_server.session(AGENT_TOKEN) as session:
        for tool, args in (
            ("vault_read_note", {"path": "Inbox/link.md"}),
            ("vault_read_note", {"path": "Shared/Public/door/secret.md"}),
            ("vault_list_notes", {"folder": "Shared/Public/door"}),
        ):
            is_error, text = await call(session, tool, args)
            assert is_error and error_code(text) == "not_found", (tool, text)
        for tool, args in (
            ("vault_write_note", {"path": "Shared/Public/door/new.md", "body": "x\n"}),
            ("vault_replace_in_note", {"path": "Inbox/link.md", "old_text": "zebracorn", "new_text": "x"}),
            ("vault_delete_note", {"path": "Inbox/link.md"}),
        ):
            is_error, text = await call(session, tool, args)
            assert is_error and error_code(text) == "path_forbidden", (tool, text)
        assert "zebracorn" in (acl_vault / "Privé" / "secret.md").read_text()
        assert not (acl_vault / "Privé" / "new.md").exists()


def test_token_new_creates_usable_tokens(quire_bin, tmp_path):
    import subprocess

    printed = subprocess.run([str(quire_bin), "token", "new", "--identity", "claude"], capture_output=True, text=True, timeout=30)
    assert printed.returncode == 0 and re_hex64(printed.stdout.strip())
    target = tmp_path / "claude.token"
    written = subprocess.run(
        [str(quire_bin), "token", "new", "--identity", "claude", "--file", str(target)], capture_output=True, text=True, timeout=30
    )
    assert written.returncode == 0, written.stderr
    assert oct(target.stat().st_mode & 0o777) == "0o600" and re_hex64(target.read_text().strip())
    assert target.read_text().strip() not in written.stdout
    again = subprocess.run(
        [str(quire_bin), "token", "new", "--identity", "claude", "--file", str(target)], capture_output=True, text=True, timeout=30
    )
    assert again.returncode == 1


def re_hex64(text: str) -> bool:
    import re

    return re.fullmatch(r"[0-9a-f]{64}", text) is not None


async def test_a_config_renamed_into_place_is_reloaded_under_the_sandbox(quire_bin, acl_vault, tmp_path, xdg_home):
    # Editors and configuration tools save by renaming a new file over the old one; landlock
    # must still let the reload read it (the config's folder, not just the first file's inode).
    tokens = tmp_path / "tokens"
    tokens.mkdir()
    write_secret(tokens / "agent.token", AGENT_TOKEN + "\n")
    write_secret(tokens / "viewer.token", VIEWER_TOKEN + "\n")
    etc = tmp_path / "etc"
    etc.mkdir()
    config = etc / "quire.toml"
    body = 'sandbox = "required"\n' + CONFIG.replace('token_file = "', f'token_file = "{tokens}/')
    config.write_text(body)
    server = HttpServer(
        quire_bin, acl_vault, server_env(xdg_home), tmp_path / "quire-stderr.log", ["--config", str(config)]
    )
    try:
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {VIEWER_TOKEN}"}) as http:
            async with streamable_http_client(server.url, http_client=http) as streams:
                async with ClientSession(streams[0], streams[1], read_timeout_seconds=REQUEST_TIMEOUT_S) as session:
                    await session.initialize()
                    assert not ({t.name for t in (await session.list_tools()).tools} & WRITE_TOOLS)
                    replacement = etc / "quire.toml.new"
                    replacement.write_text(body.replace(
                        'read = ["Shared/Public/"]', 'read = ["Shared/Public/"]\nwrite = ["Shared/Public/"]'
                    ))
                    replacement.replace(config)
                    deadline = time.monotonic() + 10
                    names: set[str] = set()
                    while time.monotonic() < deadline:
                        names = {t.name for t in (await session.list_tools()).tools}
                        if WRITE_TOOLS <= names:
                            break
                        await asyncio.sleep(0.3)
                    log = (tmp_path / "quire-stderr.log").read_text(errors="replace")
                    assert WRITE_TOOLS <= names, log[-2000:]
    finally:
        server.stop()


async def test_r18_always_deny_binds_the_owner_through_symlinks(quire_bin, acl_vault, tmp_path, xdg_home):
    # Issue 18, item 4: a symbolic link in an allowed folder that leads into an always_deny folder
    # must not open it to the owner (stdio), who is bound by always_deny like everyone else.
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    write_files(acl_vault, {"Keys/owner-secret.md": "# Vault key\n\nplatypusvault lives here.\n"})
    (acl_vault / "Inbox" / "keylink.md").symlink_to("../Keys/owner-secret.md")
    (acl_vault / "Projects" / "keydir").symlink_to("../Keys", target_is_directory=True)
    write_secret(tmp_path / "agent.token", AGENT_TOKEN)
    write_secret(tmp_path / "viewer.token", VIEWER_TOKEN)
    config = tmp_path / "quire.toml"
    config.write_text(CONFIG)
    params = StdioServerParameters(
        command=str(quire_bin),
        args=["serve", "--vault", str(acl_vault), "--config", str(config)],
        env=server_env(xdg_home),
        cwd=str(tmp_path),
    )
    leaks = ("platypusvault", "owner-secret", "keylink", "keydir")
    with open(tmp_path / "quire-stderr.log", "a") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=REQUEST_TIMEOUT_S) as session:
                await session.initialize()
                for path in ("Inbox/keylink.md", "Projects/keydir/owner-secret.md"):
                    for tool, args in path_tools(path, "Projects/keydir"):
                        is_error, text = await call(session, tool, args)
                        expected = "path_forbidden" if tool in WRITE_TOOLS else "not_found"
                        assert is_error and error_code(text) == expected, (tool, args, text)
                        assert "platypusvault" not in text, (tool, args, text)
                for tool, args in WHOLE_VAULT_TOOLS + [("vault_grep", {"pattern": "platypusvault"}),
                                                       ("vault_search", {"query": "platypusvault"})]:
                    is_error, text = await call(session, tool, args)
                    assert not is_error, (tool, text)
                    for word in leaks:
                        assert word not in text, (tool, args, word, text[:400])
                is_error, text = await call(
                    session, "vault_write_note", {"path": "Projects/keydir/planted.md", "body": "x\n"}
                )
                assert is_error and error_code(text) == "path_forbidden", text
    assert not (acl_vault / "Keys" / "planted.md").exists()
    assert (acl_vault / "Keys" / "owner-secret.md").read_text().endswith("platypusvault lives here.\n")


async def test_r18_a_session_belongs_to_the_identity_that_opened_it(acl_server):
    # Issue 18, item 7: another identity holding a session id must not use the session (calls,
    # the GET notification stream, DELETE): it gets exactly the answer an unknown session gets.
    accept = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
    agent = {**accept, "Authorization": f"Bearer {AGENT_TOKEN}"}
    viewer = {**accept, "Authorization": f"Bearer {VIEWER_TOKEN}"}
    initialize = {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
    }
    tools_list = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
    async with httpx.AsyncClient(timeout=REQUEST_TIMEOUT_S) as http:
        opened = await http.post(acl_server.url, json=initialize, headers=agent)
        assert opened.status_code == 200, opened.text
        session = opened.headers["mcp-session-id"]
        done = await http.post(
            acl_server.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
            headers={**agent, "Mcp-Session-Id": session},
        )
        assert done.status_code in (200, 202), done.text

        async def answer(method: str, headers: dict, session_id: str) -> tuple[int, str]:
            body = tools_list if method == "POST" else None
            async with http.stream(method, acl_server.url, json=body, headers={**headers, "Mcp-Session-Id": session_id}) as response:
                if response.status_code == 200 and method == "GET":
                    return 200, "a notification stream"
                return response.status_code, (await response.aread()).decode()

        for method in ("POST", "GET", "DELETE"):
            foreign = await answer(method, viewer, session)
            unknown = await answer(method, viewer, "f" * 32)
            assert foreign == unknown, (method, foreign, unknown)
            assert foreign[0] in (404, 204), (method, foreign)
        # The viewer's DELETE closed nothing: the agent's session still answers.
        status, text = await answer("POST", agent, session)
        assert status == 200 and "vault_read_note" in text, (status, text)


async def test_r18_a_move_depends_on_nothing_the_caller_cannot_read(quire_bin, acl_vault, tmp_path, xdg_home):
    # Issue 18, item 2: vault_move_note must not be an oracle for links in denied notes, nor name
    # a denied file. Dry runs before and after changing only denied files must answer identically.
    write_files(acl_vault, {
        "Inbox/Guess.md": "guess\n",
        "Inbox/Other.md": "other\n",
        "Inbox/Control.md": "control\n",
        "Inbox/Visible.md": "see [[Other]] and [[Control]]\n",
        "Privé/links.md": "see [[Guess]]\n",
        "Privé/real.md": "see [[Other]]\n",
    })
    (acl_vault / "Privé" / "AAA.md").symlink_to("real.md")
    server = AclServer(quire_bin, acl_vault, tmp_path, xdg_home)
    moves = [("Inbox/Guess.md", "Inbox/Guess2.md"), ("Inbox/Other.md", "Inbox/Other2.md"),
             ("Inbox/Control.md", "Inbox/Control2.md")]
    try:
        async with server.session(AGENT_TOKEN) as session:
            async def dry_runs():
                answers = []
                for old, new in moves:
                    answers.append(await call(session, "vault_move_note", {"old_path": old, "new_path": new, "dry_run": True}))
                return answers

            first = await dry_runs()
            for (old, _), (is_error, text) in zip(moves, first):
                assert not is_error, (old, text)
                assert_no_leak("vault_move_note", {}, text)
                assert "AAA" not in text and "links.md" not in text and "real.md" not in text, text
            # Only denied files change: new links to every moved note, same-named files, a symlink.
            write_files(acl_vault, {
                "Privé/more.md": "[[Guess]] [[Other]] [[Control]] ![[Other]]\n",
                "Privé/Other2.md": "a same-named hidden note\n",
                "Privé/Deep/Control2.md": "another\n",
                "Privé/big.md": "[[Control]]\n" + "x" * 50_000,
            })
            (acl_vault / "Privé" / "BBB.md").symlink_to("more.md")
            (acl_vault / "Privé" / "links.md").write_text("see [[Guess|renamed]] and [[Control]]\n")
            await asyncio.sleep(2)
            assert await dry_runs() == first

            is_error, text = await call(session, "vault_move_note", {"old_path": "Inbox/Other.md", "new_path": "Inbox/Other2.md"})
            assert not is_error, text
            assert "Inbox/Other2" in (acl_vault / "Inbox" / "Visible.md").read_text()
            # Links in notes the agent cannot read are left for the owner.
            assert (acl_vault / "Privé" / "real.md").read_text() == "see [[Other]]\n"
    finally:
        server.server.stop()


# Read tools whose answers to the agent must not move when only denied files change.
GRAPH_AND_LISTING_TOOLS = [
    ("vault_get_outgoing_links", {"path": "Inbox/links.md"}),
    ("vault_get_backlinks", {"path": "Projects/Deep/Plans.md"}),
    ("vault_get_backlinks", {"path": "Inbox/links.md"}),
    ("vault_find_broken_links", {}),
    ("vault_find_orphans", {}),
    ("vault_list_notes", {"limit": 1000}),
    ("vault_list_tags", {"limit": 1000}),
    ("vault_list_property_keys", {"limit": 1000}),
    ("vault_grep", {"pattern": "Plans|zebracorn"}),
    ("vault_search_by_tag", {"tag": "shared-tag"}),
    ("vault_recent_notes", {"limit": 1000}),
    ("vault_list_tasks", {"limit": 1000}),
    ("vault_list_tasks", {"status": "TODO", "sort_by": "due", "limit": 1000}),
    ("vault_list_tasks", {"due": {"before": "2030-01-01"}, "limit": 1000}),
    ("vault_list_property_values", {"key": "status", "limit": 1000}),
    ("vault_search_by_property", {"key": "status", "value": "active", "limit": 1000}),
]


async def test_r18_link_resolution_depends_on_nothing_the_caller_cannot_read(quire_bin, acl_vault, tmp_path, xdg_home):
    # Issue 18, item 5: `[[Plans]]` must resolve for the agent as in a vault holding only what it
    # can read. Here a hidden `Privé/Plans.md` (fewer folders) would win Obsidian's tie-break over
    # the visible `Projects/Deep/Plans.md`, turning the link "broken" and so revealing the name.
    write_files(acl_vault, {
        "Inbox/links.md": "see [[Plans]] and [[Missing]] and [[secret]]\n",
        "Projects/Deep/Plans.md": "# Plans (the visible one)\n",
    })
    server = AclServer(quire_bin, acl_vault, tmp_path, xdg_home)
    try:
        async with server.session(AGENT_TOKEN) as session:
            async def answers():
                return [await call(session, tool, args) for tool, args in GRAPH_AND_LISTING_TOOLS]

            before = await answers()
            for (tool, args), (is_error, text) in zip(GRAPH_AND_LISTING_TOOLS, before):
                assert not is_error, (tool, text)
            write_files(acl_vault, {
                "Privé/Plans.md": "# Plans (hidden)\n[[links]] [[Projects/Deep/Plans]]\n",
                "Privé/Missing.md": "now it exists, hidden\n",
                "Privé/links.md": "a hidden same-named note\n",
            })
            await asyncio.sleep(2)
            after = await answers()
            for (tool, args), first, second in zip(GRAPH_AND_LISTING_TOOLS, before, after):
                assert first == second, (tool, args, first, second)
            res = await session.call_tool("vault_get_outgoing_links", {"path": "Inbox/links.md"})
            resolved = {link["target"]: link.get("resolved_path") for link in res.structured_content["links"]}
            assert resolved == {"Plans": "Projects/Deep/Plans.md", "Missing": None, "secret": None}, resolved
    finally:
        server.server.stop()


# Reads of denied paths that do not exist at first and exist afterwards: the answers must not move.
DENIED_PATH_READS = [
    ("vault_read_note", {"path": "Privé/x.md"}),
    ("vault_read_note", {"path": "Privé/Deep/z.md", "outline": True}),
    ("vault_list_notes", {"folder": "Privé/Deep"}),
    ("vault_get_backlinks", {"path": "Keys/k.md"}),
    ("vault_get_outgoing_links", {"path": "Privé/y.md"}),
    ("vault_search", {"query": "alpha", "filters": {"folder": "Privé/Deep"}}),
    ("vault_grep", {"pattern": "alpha", "folder": "Keys"}),
]

SEARCH_QUERIES = ["alpha", "zebraquux", "qwxplonk", "alpha OR qwxplonk", "alpha zebraquux", '"common words"',
                  "alph*", "alpha -beta", "zebraquux qwxplonk", ""]


async def test_r18_search_scores_depend_on_nothing_the_caller_cannot_read(quire_bin, acl_vault, tmp_path, xdg_home):
    # Issue 18, item 1: BM25 over the whole index moved a visible hit's score when a denied note
    # gained a word. The agent's results, order and scores must not move when only denied notes
    # change, and with them every read tool the "denied files change" test above covers.
    write_files(acl_vault, {
        "Inbox/a.md": "alpha zebraquux common words\n",
        "Inbox/b.md": "alpha qwxplonk common words and a few more words\n",
        "Projects/c.md": "# Alpha\n\nalpha alpha beta\n",
    })
    server = AclServer(quire_bin, acl_vault, tmp_path, xdg_home)
    try:
        async with server.session(AGENT_TOKEN) as session:
            async def answers():
                found = []
                for query in SEARCH_QUERIES:
                    res = await session.call_tool("vault_search", {"query": query, "limit": 50})
                    assert not res.is_error, res.content
                    found.append([(hit["path"], hit["score"]) for hit in res.structured_content["results"]])
                for tool, args in GRAPH_AND_LISTING_TOOLS + WHOLE_VAULT_TOOLS + DENIED_PATH_READS:
                    found.append(await call(session, tool, args))
                # Resources and the prompt are answers too.
                listed = await session.list_resources()
                found.append(sorted((str(r.uri), r.size) for r in listed.resources))
                prompt = await session.get_prompt("vault-orientation")
                found.append([m.content.text for m in prompt.messages if hasattr(m.content, "text")])
                return found

            before = await answers()
            assert before[0][0][0] == "Projects/c.md", before[0]
            assert [path for path, _ in before[1]] == ["Inbox/a.md"]
            write_files(acl_vault, {
                "Privé/x.md": "qwxplonk qwxplonk alpha\n",
                "Privé/y.md": "common words " * 200 + "zebraquux\n",
                "Privé/Deep/z.md": "# Alpha\n\nalpha beta gamma\n",
                "Keys/k.md": "alpha qwxplonk zebraquux common words\n- [ ] hidden key task 📅 2026-01-01 #shared-tag\n",
                "Privé/tasks.md": "---\nstatus: active\n---\n- [ ] a secret task 📅 2025-01-01 #shared-tag\n- [x] done secretly ✅ 2025-01-02\n",
            })
            (acl_vault / "Privé" / "secret.md").write_text("zebraquux " * 50)
            await asyncio.sleep(2)
            after = await answers()
            labels = SEARCH_QUERIES + [f"{t} {a}" for t, a in GRAPH_AND_LISTING_TOOLS + WHOLE_VAULT_TOOLS + DENIED_PATH_READS] + ["resources/list", "prompts/get vault-orientation"]
            for query, first, second in zip(labels, before, after):
                assert first == second, (query, first, second)
    finally:
        server.server.stop()


def nfd(name: str) -> str:
    return unicodedata.normalize("NFD", name)


async def test_r47_links_with_nfd_names_lead_nowhere_denied(quire_bin, acl_vault, tmp_path, xdg_home):
    # Issue 47, F1: a link whose own name, or whose folder's name, is stored decomposed (NFD, as
    # macOS and sync clients write accented names) was judged by the visible folder while
    # resolution followed it, so `deny` and `always_deny` could be read and written through it.
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    (acl_vault / "Inbox" / nfd("Dossié")).symlink_to("../Privé", target_is_directory=True)
    (acl_vault / "Inbox" / nfd("Réunions")).mkdir()
    (acl_vault / "Inbox" / nfd("Réunions") / "door").symlink_to("../../Privé", target_is_directory=True)
    (acl_vault / "Inbox" / nfd("Réunions") / "minutes.md").write_text("# Minutes\n")
    (acl_vault / "Shared" / "Public" / nfd("Porté")).symlink_to("../../Privé", target_is_directory=True)
    (acl_vault / "Projects" / nfd("Clés")).symlink_to("../Keys", target_is_directory=True)
    before = {p: p.read_bytes() for p in (acl_vault / "Privé").rglob("*.md")}
    ways_in = ["Inbox/Dossié", "Inbox/Réunions/door", "Shared/Public/Porté"]

    async def probe(session, folders: list[str], note: str, leaks: tuple[str, ...], names: tuple[str, ...]) -> None:
        for spelling in (unicodedata.normalize("NFC", f) for f in folders):
            for folder in (spelling, nfd(spelling)):
                for tool, args in path_tools(f"{folder}/{note}", folder) + [
                    ("vault_move_note", {"old_path": "Inbox/todo.md", "new_path": f"{folder}/moved.md"}),
                ]:
                    is_error, text = await call(session, tool, args)
                    if not is_error:
                        raise AssertionError(f"{tool} {args} succeeded: {text[:400]}")
                    # Error messages may echo the caller's own input; that reveals nothing.
                    scrubbed = text
                    for value in strings(args):
                        scrubbed = scrubbed.replace(value, "")
                    for word in leaks:
                        assert word not in scrubbed, (tool, args, text[:400])
        for tool, args in WHOLE_VAULT_TOOLS:
            is_error, text = await call(session, tool, args)
            for word in leaks + names:
                assert word not in text, (tool, args, word, text[:400])

    server = AclServer(quire_bin, acl_vault, tmp_path, xdg_home)
    try:
        for token in (AGENT_TOKEN, VIEWER_TOKEN):
            async with server.session(token) as session:
                await probe(session, ways_in, "secret.md", LEAKS, ("Dossi", "door/", "Port"))
    finally:
        server.server.stop()

    # The owner is bound by always_deny through such a link too.
    config = tmp_path / "quire.toml"
    params = StdioServerParameters(
        command=str(quire_bin),
        args=["serve", "--vault", str(acl_vault), "--config", str(config)],
        env=server_env(xdg_home),
        cwd=str(tmp_path),
    )
    with open(tmp_path / "quire-stderr.log", "a") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=REQUEST_TIMEOUT_S) as session:
                await session.initialize()
                await probe(session, ["Projects/Clés"], "api.md", ("zebracorn keys", "api.md"), ("Clé", nfd("Clé")))
    assert {p: p.read_bytes() for p in (acl_vault / "Privé").rglob("*.md")} == before
    assert sorted(p.name for p in (acl_vault / "Keys").iterdir()) == ["api.md"]
    assert (acl_vault / "Inbox" / "todo.md").exists()
