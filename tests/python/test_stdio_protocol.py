"""Handshake, tool metadata, schema errors and protocol errors over stdio."""

from __future__ import annotations

import pytest
from mcp.shared.exceptions import MCPError

from vaultlib import ERROR_CODES, TOOL_NAMES, WELCOME, diff_snapshots, error_code, snapshot

pytestmark = pytest.mark.anyio


async def check(session, tool: str, args: dict):
    """Call a tool; return (is_error, structured_content, first text content)."""
    res = await session.call_tool(tool, args)
    text = res.content[0].text if res.content and res.content[0].type == "text" else ""
    return res.is_error, res.structured_content, text


async def test_initialize_instructions_mention_vault_and_untrusted(session):
    init = session.initialize_result
    assert init is not None
    assert init.capabilities.tools is not None, "server must advertise the tools capability"
    instructions = (init.instructions or "").lower()
    assert "vault" in instructions, init.instructions
    assert "untrusted" in instructions, init.instructions


async def test_tools_list_metadata(session):
    listed = await session.list_tools()
    tools = {t.name: t for t in listed.tools}
    missing = set(TOOL_NAMES) - set(tools)
    assert not missing, f"tools missing from tools/list: {missing}"

    for name in TOOL_NAMES:
        tool = tools[name]
        title = tool.title or (tool.annotations.title if tool.annotations else None)
        assert title and title.strip(), f"{name}: no title"
        assert tool.description and len(tool.description.strip()) > 10, f"{name}: no description"
        assert tool.annotations is not None, f"{name}: no annotations"
        assert tool.output_schema is not None, f"{name}: no outputSchema"
        assert tool.output_schema.get("type") == "object", f"{name}: {tool.output_schema}"
        assert tool.input_schema.get("type") == "object", f"{name}: {tool.input_schema}"

    assert tools["vault_read_note"].annotations.read_only_hint is True
    assert tools["vault_list_notes"].annotations.read_only_hint is True
    assert tools["vault_delete_note"].annotations.destructive_hint is True
    # Tools that change the vault must not claim to be read-only.
    assert tools["vault_write_note"].annotations.read_only_hint is not True
    assert tools["vault_delete_note"].annotations.read_only_hint is not True


async def test_input_schemas_declare_required_arguments(session):
    tools = {t.name: t for t in (await session.list_tools()).tools}
    for name in ("vault_read_note", "vault_write_note", "vault_delete_note"):
        schema = tools[name].input_schema
        assert "path" in schema.get("properties", {}), name
        assert "path" in schema.get("required", []), name
    write = tools["vault_write_note"].input_schema
    assert "body" in write.get("required", [])
    for prop in ("properties", "overwrite", "expected_revision"):
        assert prop in write["properties"], prop
    read = tools["vault_read_note"].input_schema["properties"]
    for prop in ("properties_only", "outline", "heading", "heading_level", "start_line", "limit"):
        assert prop in read, prop
    listing = tools["vault_list_notes"].input_schema
    assert not listing.get("required"), "vault_list_notes takes no required argument"
    for prop in ("folder", "glob", "limit", "cursor"):
        assert prop in listing["properties"], prop
    delete = tools["vault_delete_note"].input_schema["properties"]
    for prop in ("expected_revision", "prune_empty_folders"):
        assert prop in delete, prop


async def test_unknown_tool_is_a_tool_error_listing_the_tools(session):
    # A tool result, not a protocol error, so a model reads the list and corrects itself.
    is_error, _, text = await check(session, "vault_no_such_tool", {"path": "Welcome.md"})
    assert is_error
    assert text.startswith("invalid_argument:"), text
    assert "vault_no_such_tool" in text and "vault_read_note" in text, text
    # The session is still usable.
    is_error, sc, _ = await check(session, "vault_read_note", {"path": "Welcome.md"})
    assert not is_error and sc["content"] == WELCOME


SCHEMA_MISMATCHES = [
    ("vault_read_note", {}),
    ("vault_read_note", {"path": 5}),
    ("vault_read_note", {"path": None}),
    ("vault_read_note", {"path": ["Welcome.md"]}),
    ("vault_read_note", {"path": "Long.md", "start_line": "x"}),
    ("vault_read_note", {"path": "Long.md", "start_line": 0}),
    ("vault_read_note", {"path": "Long.md", "start_line": -3}),
    ("vault_read_note", {"path": "Long.md", "limit": 0}),
    ("vault_read_note", {"path": "Long.md", "limit": 1.5}),
    ("vault_read_note", {"path": "Projects/Alpha.md", "outline": "yes"}),
    ("vault_read_note", {"path": "Projects/Alpha.md", "heading": "Review", "heading_level": 0}),
    ("vault_read_note", {"path": "Projects/Alpha.md", "heading": "Review", "heading_level": 7}),
    ("vault_write_note", {"path": "New.md"}),
    ("vault_write_note", {"body": "x"}),
    ("vault_write_note", {"path": "New.md", "body": 5}),
    ("vault_write_note", {"path": "New.md", "body": "x", "properties": "title: X"}),
    ("vault_write_note", {"path": "New.md", "body": "x", "properties": ["a"]}),
    ("vault_write_note", {"path": "New.md", "body": "x", "overwrite": "yes"}),
    ("vault_list_notes", {"limit": "ten"}),
    ("vault_list_notes", {"limit": 0}),
    ("vault_list_notes", {"limit": 1001}),
    ("vault_list_notes", {"limit": -1}),
    ("vault_list_notes", {"folder": 7}),
    ("vault_list_notes", {"cursor": 12}),
    ("vault_delete_note", {}),
    ("vault_delete_note", {"path": 5}),
    ("vault_delete_note", {"path": "Projects/Beta.md", "prune_empty_folders": "yes"}),
]


@pytest.mark.parametrize(
    "tool,args", SCHEMA_MISMATCHES, ids=[f"{t}-{a}" for t, a in SCHEMA_MISMATCHES]
)
async def test_schema_mismatch_is_invalid_argument(session, vault, tool, args):
    before = {p: p.read_bytes() for p in vault.rglob("*") if p.is_file()}
    is_error, _, text = await check(session, tool, args)
    assert is_error, f"{tool}({args}) should fail"
    assert text.startswith("invalid_argument:"), text
    after = {p: p.read_bytes() for p in vault.rglob("*") if p.is_file()}
    assert after == before
    # The server survives and still serves a normal read.
    is_error, sc, text = await check(session, "vault_read_note", {"path": "Welcome.md"})
    assert not is_error, text
    assert sc["content"] == WELCOME


async def test_error_texts_use_known_codes(session):
    """Every failure seen here starts with one of the documented codes."""
    cases = [
        ("vault_read_note", {"path": "Missing.md"}, "not_found"),
        ("vault_read_note", {"path": "../x.md"}, "invalid_path"),
        ("vault_read_note", {"path": ".obsidian/app.json"}, "path_forbidden"),
        ("vault_write_note", {"path": "Welcome.md", "body": "x"}, "already_exists"),
        ("vault_write_note", {"path": "Welcome.md", "body": "x", "overwrite": True}, "revision_required"),
        ("vault_write_note", {"path": "x.exe", "body": "x"}, "unsupported_extension"),
        ("vault_list_notes", {"cursor": "definitely-not-a-cursor"}, "invalid_argument"),
    ]
    for tool, args, code in cases:
        is_error, _, text = await check(session, tool, args)
        assert is_error, (tool, args)
        assert error_code(text) in ERROR_CODES, text
        assert error_code(text) == code, (tool, args, text)
        assert len(text) > len(code) + 2, f"no message after the code: {text!r}"


async def test_many_requests_in_one_session(session):
    """A burst of mixed good and bad calls; the server answers every one of them."""
    for i in range(20):
        is_error, sc, _ = await check(session, "vault_read_note", {"path": "Welcome.md"})
        assert not is_error and sc["content"] == WELCOME
        is_error, _, text = await check(session, "vault_read_note", {"path": f"../bad{i}.md"})
        assert is_error and text.startswith("invalid_path:")
        is_error, _, text = await check(session, "vault_list_notes", {"limit": "x"})
        assert is_error and text.startswith("invalid_argument:")


async def test_read_only_tools_leave_the_vault_untouched(open_session, vault):
    """Reads and listings (and the server's own startup/shutdown) write nothing into the vault."""
    before = snapshot(vault)
    async with open_session(vault) as session:
        for args in ({"path": "Welcome.md"}, {"path": "Projects/Alpha.md", "outline": True},
                     {"path": "Projects/Alpha.md", "properties_only": True}):
            is_error, _, text = await check(session, "vault_read_note", args)
            assert not is_error, text
        is_error, _, text = await check(session, "vault_list_notes", {"limit": 1000})
        assert not is_error, text
        assert diff_snapshots(before, snapshot(vault)) == []
    assert diff_snapshots(before, snapshot(vault)) == []
