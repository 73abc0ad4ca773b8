"""Every tool that takes a path rejects bad paths, leaves the disk alone and keeps serving.

The vault here also holds `Escape.md -> <tmp>/outside_dir/secret.md` and
`EscapeDir -> <tmp>/outside_dir`. Absolute paths that a buggy server could
write to or trash point into the test's own temp dir (never /etc/passwd, since
these tests may run as root); /etc/passwd is only ever used for reads/listing.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from vaultlib import SECRET, WELCOME, diff_snapshots, error_code, sha256_hex, snapshot

pytestmark = pytest.mark.anyio

ABS_SECRET = "<abs outside_dir/secret.md>"
ABS_OUTSIDE = "<abs outside_dir>"

ALL = ("read", "write", "write_overwrite", "delete", "delete_rev", "list")
NOT_LIST = ALL[:-1]
SAFE = ("read", "list")  # real system paths: only tools that cannot change them
CREATE = ("write", "move")  # tools that make a new file at the path

# (id, path, expected code, tools)
CASES = [
    ("parent", "../x.md", "invalid_path", ALL),
    ("parent-nested", "Projects/../../x.md", "invalid_path", ALL),
    ("parent-to-outside", "../outside_dir/secret.md", "invalid_path", ALL),
    ("parent-inside", "Projects/../Welcome.md", "invalid_path", NOT_LIST),
    ("absolute-etc", "/etc/passwd", "invalid_path", SAFE),
    ("absolute-tmp", ABS_SECRET, "invalid_path", NOT_LIST),
    ("absolute-tmp-dir", ABS_OUTSIDE, "invalid_path", ("list",)),
    ("drive-backslash", "C:\\x.md", "invalid_path", ALL),
    ("drive-slash", "C:/x.md", "invalid_path", ALL),
    ("backslash", "a\\b.md", "invalid_path", ALL),
    ("backslash-parent", "..\\x.md", "invalid_path", ALL),
    ("nul", "a\u0000b.md", "invalid_path", ALL),
    ("double-slash", "a//b.md", "invalid_path", ALL),
    ("trailing-slash", "a/", "invalid_path", NOT_LIST),  # "Projects/" is a valid folder
    ("empty", "", "invalid_path", NOT_LIST),  # folder "" is the vault root (see test_list_notes)
    ("obsidian-config", ".obsidian/app.json", "path_forbidden", ALL),
    ("obsidian-md", ".obsidian/workspace.md", "path_forbidden", ALL),
    ("obsidian-dir", ".obsidian", "path_forbidden", ("list",)),
    ("trash-new", ".trash/x.md", "path_forbidden", ALL),
    ("trash-existing", ".trash/Gone.md", "path_forbidden", ALL),
    ("trash-dir", ".trash", "path_forbidden", ("list",)),
    ("dotfile", ".hidden.md", "path_forbidden", NOT_LIST),
    ("nested-dotfile", "Projects/.draft.md", "path_forbidden", NOT_LIST),
    ("symlink-file", "Escape.md", "path_forbidden", ALL),
    ("symlink-dir-file", "EscapeDir/secret.md", "path_forbidden", ALL),
    ("symlink-dir-new", "EscapeDir/new.md", "path_forbidden", ALL),
    ("symlink-dir", "EscapeDir", "path_forbidden", ("list",)),
    # Issue 18: a name longer than file systems allow is the caller's mistake, not `internal`.
    ("long-name", "Projects/" + "n" * 300 + ".md", "invalid_path", ALL),
    ("long-folder", "f" * 256 + "/x.md", "invalid_path", ALL),
    # Issue 47, F9: a path whose folder is a file is named as such, not `internal`.
    ("parent-is-file", "Welcome.md/x.md", "invalid_argument", CREATE),
    ("grandparent-is-file", "Welcome.md/deeper/x.md", "invalid_argument", CREATE),
    # Issue 47, F10: names Obsidian itself refuses are refused on create and move.
    ("newline", "Inbox/a\nb.md", "invalid_path", CREATE),
    ("carriage-return", "a\rb.md", "invalid_path", CREATE),
    ("tab", "a\tb.md", "invalid_path", CREATE),
    ("bidi-override", "gpj.\u202eevil.md", "invalid_path", CREATE),
    ("bidi-isolate", "Folder\u2066/x.md", "invalid_path", CREATE),
    ("colon", "Meeting: notes.md", "invalid_path", CREATE),
    ("star", "a*b.md", "invalid_path", CREATE),
    ("question", "What?.md", "invalid_path", CREATE),
    ("less-than", "a<b.md", "invalid_path", CREATE),
    ("greater-than", "a>b.md", "invalid_path", CREATE),
    ("pipe", "a|b.md", "invalid_path", CREATE),
    ("quote", 'say "hi".md', "invalid_path", CREATE),
    ("device-name", "CON.md", "invalid_path", CREATE),
    ("device-folder", "Projects/lpt1/x.md", "invalid_path", CREATE),
]

PARAMS = [
    pytest.param(tool, path, code, id=f"{tool}-{cid}")
    for cid, path, code, tools in CASES
    for tool in tools
]


@pytest.fixture
def vault(vault: Path, add_escape_links) -> Path:
    add_escape_links(vault)
    return vault


def resolve(path: str, outside: Path) -> str:
    if path == ABS_SECRET:
        return str(outside / "secret.md")
    if path == ABS_OUTSIDE:
        return str(outside)
    return path


def call_for(tool: str, path: str) -> tuple[str, dict]:
    secret_rev = sha256_hex(SECRET.encode())
    if tool == "read":
        return "vault_read_note", {"path": path}
    if tool == "write":
        return "vault_write_note", {"path": path, "body": "pwned\n"}
    if tool == "write_overwrite":
        # The attacker even knows the revision of the outside file.
        return "vault_write_note", {
            "path": path,
            "body": "pwned\n",
            "overwrite": True,
            "expected_revision": secret_rev,
        }
    if tool == "delete":
        return "vault_delete_note", {"path": path}
    if tool == "delete_rev":
        return "vault_delete_note", {"path": path, "expected_revision": secret_rev, "prune_empty_folders": True}
    if tool == "list":
        return "vault_list_notes", {"folder": path}
    if tool == "move":
        return "vault_move_note", {"old_path": "Welcome.md", "new_path": path}
    raise AssertionError(tool)


async def check(session, tool: str, args: dict):
    """Call a tool; return (is_error, structured_content, first text content)."""
    res = await session.call_tool(tool, args)
    text = res.content[0].text if res.content and res.content[0].type == "text" else ""
    return res.is_error, res.structured_content, text


def world(tmp_path: Path, vault: Path, outside: Path) -> dict:
    snap = snapshot(vault, outside)
    # Anything new next to the vault (e.g. tmp/x.md from "../x.md"), but not server state/logs.
    snap["<tmp entries>"] = tuple(
        sorted(p.name for p in tmp_path.iterdir() if p.name not in ("xdg", "quire-stderr.log"))
    )
    snap["<tmp parent x.md>"] = ((tmp_path.parent / "x.md").exists(),)
    snap["<etc passwd>"] = (hashlib.sha256(Path("/etc/passwd").read_bytes()).hexdigest(),)
    return snap


@pytest.mark.parametrize("tool,path,code", PARAMS)
async def test_bad_path_is_rejected_and_changes_nothing(session, vault, outside, tmp_path, tool, path, code):
    before = world(tmp_path, vault, outside)
    name, args = call_for(tool, resolve(path, outside))

    is_error, sc, text = await check(session, name, args)

    assert is_error, f"{name}({args!r}) succeeded: {sc}"
    assert error_code(text) == code, f"{name}({args!r}): expected {code}, got {text!r}"
    assert "This lives outside the vault" not in text, "secret content leaked"
    changes = diff_snapshots(before, world(tmp_path, vault, outside))
    assert not changes, "disk changed:\n" + "\n".join(changes)

    # The server survived and still answers a normal read in the same session.
    is_error, sc, text = await check(session, "vault_read_note", {"path": "Welcome.md"})
    assert not is_error, text
    assert sc["content"] == WELCOME


async def test_all_bad_paths_in_one_session(session, vault, outside, tmp_path):
    before = world(tmp_path, vault, outside)
    failures = []
    for cid, path, code, tools in CASES:
        for tool in tools:
            name, args = call_for(tool, resolve(path, outside))
            is_error, _, text = await check(session, name, args)
            if not is_error or error_code(text) != code:
                failures.append(f"{tool}-{cid}: expected {code}, got is_error={is_error} {text[:120]!r}")
    changes = diff_snapshots(before, world(tmp_path, vault, outside))
    assert not failures and not changes, "\n".join(
        failures + (["disk changed:"] + changes if changes else [])
    )

    is_error, sc, text = await check(session, "vault_read_note", {"path": "Welcome.md"})
    assert not is_error, text
    assert sc["content"] == WELCOME


async def test_listing_never_shows_escapes_or_hidden(session, vault):
    notes = []
    cursor = None
    while True:
        args = {"limit": 1000}
        if cursor:
            args["cursor"] = cursor
        is_error, sc, text = await check(session, "vault_list_notes", args)
        assert not is_error, text
        notes.extend(n["path"] for n in sc["notes"])
        cursor = sc.get("next_cursor")
        if not cursor:
            break
    assert "Welcome.md" in notes
    for p in notes:
        assert p != "Escape.md", p
        assert not p.startswith("EscapeDir/"), p
        assert not p.startswith(".obsidian/"), p
        assert not p.startswith(".trash/"), p
        assert not any(seg.startswith(".") for seg in p.split("/")), p


async def test_symlinked_note_content_never_returned(session, vault):
    for path in ("Escape.md", "EscapeDir/secret.md"):
        res = await session.call_tool("vault_read_note", {"path": path})
        assert res.is_error
        dumped = repr(res.model_dump())
        assert "This lives outside the vault" not in dumped


async def test_r18_client_strings_cannot_forge_log_lines(session, tmp_path):
    # Issue 18, item 8: a path is client text and is logged with each tool call; a newline or an
    # escape sequence in it must come out escaped, never as a line of its own on stderr.
    forged = "2026-01-01T00:00:00.000000Z  INFO quire::mcp: FORGED tool call identity=owner"
    for path in (f"Nope.md\n{forged}", f"Nope.md\r{forged}", f"Nope\u001b[2K.md\u0085{forged}"):
        result = await session.call_tool("vault_read_note", {"path": path})
        assert result.is_error
    text = (tmp_path / "quire-stderr.log").read_text(errors="replace")
    assert "FORGED" in text, "the tool calls were logged"
    for line in text.split("\n"):
        assert not line.startswith("2026-01-01"), line
        assert "\r" not in line and "\u001b[2K" not in line and "\u0085" not in line, repr(line)
    assert "Nope.md\\n2026-01-01" in text


async def test_r47_existing_files_with_names_obsidian_refuses_stay_readable(open_session, vault):
    # Only new names are refused: what a user already has keeps working.
    (vault / "Meeting: notes.md").write_text("# Minutes\n")
    async with open_session(vault) as session:
        is_error, sc, text = await check(session, "vault_read_note", {"path": "Meeting: notes.md"})
        assert not is_error, text
        assert sc["content"] == "# Minutes\n"
        is_error, sc, text = await check(
            session, "vault_patch_note", {"path": "Meeting: notes.md", "operation": "append", "content": "more"}
        )
        assert not is_error, text
        is_error, _, text = await check(session, "vault_write_note", {"path": "Meeting: two.md", "body": "x\n"})
        assert is_error and error_code(text) == "invalid_path", text
        assert "':'" in text and "Obsidian refuses" in text, text
