"""vault_write_note over stdio: create, overwrite, revisions, properties, limits."""

from __future__ import annotations

import os
import stat

import pytest

from vaultlib import HEX64, WELCOME, assert_modified_matches, error_code, file_revision, sha256_hex

pytestmark = pytest.mark.anyio

TEN_MIB = 10 * 1024 * 1024


async def check(session, tool: str, args: dict):
    """Call a tool; return (is_error, structured_content, first text content)."""
    res = await session.call_tool(tool, args)
    text = res.content[0].text if res.content and res.content[0].type == "text" else ""
    return res.is_error, res.structured_content, text


async def write(session, **args):
    return await check(session, "vault_write_note", args)


async def test_create_new_note(session, vault):
    is_error, sc, text = await write(session, path="Inbox.md", body="hello\nworld\n")
    assert not is_error, text
    on_disk = (vault / "Inbox.md").read_bytes()
    assert on_disk == b"hello\nworld\n", "a write without properties stores the body verbatim"
    assert sc["path"] == "Inbox.md"
    assert sc["created"] is True
    assert sc["revision"] == sha256_hex(on_disk)
    assert HEX64.match(sc["revision"])
    assert sc["bytes"] == len(on_disk)
    assert_modified_matches(sc["modified"], vault / "Inbox.md")


async def test_create_in_new_nested_folders(session, vault):
    is_error, sc, text = await write(session, path="New/Deeper/Deepest/Note.md", body="nested\n")
    assert not is_error, text
    assert (vault / "New").is_dir()
    assert (vault / "New/Deeper/Deepest").is_dir()
    assert (vault / "New/Deeper/Deepest/Note.md").read_text() == "nested\n"
    assert sc["created"] is True
    assert sc["path"] == "New/Deeper/Deepest/Note.md"


async def test_written_note_reads_back(session, vault):
    is_error, w, text = await write(session, path="Round.md", body="# Round\n\ntrip\n")
    assert not is_error, text
    is_error, r, text = await check(session, "vault_read_note", {"path": "Round.md"})
    assert not is_error, text
    assert r["content"] == "# Round\n\ntrip\n"
    assert r["revision"] == w["revision"]
    assert r["bytes"] == w["bytes"]


async def test_existing_without_overwrite_is_already_exists(session, vault):
    before = (vault / "Welcome.md").read_bytes()
    is_error, _, text = await write(session, path="Welcome.md", body="clobbered\n")
    assert is_error
    assert text.startswith("already_exists:"), text
    assert (vault / "Welcome.md").read_bytes() == before


async def test_overwrite_false_explicit_is_already_exists(session, vault):
    is_error, _, text = await write(session, path="Welcome.md", body="x\n", overwrite=False)
    assert is_error
    assert text.startswith("already_exists:"), text
    assert (vault / "Welcome.md").read_text() == WELCOME


async def test_overwrite_without_revision_is_revision_required(session, vault):
    is_error, _, text = await write(session, path="Welcome.md", body="clobbered\n", overwrite=True)
    assert is_error
    assert text.startswith("revision_required:"), text
    assert (vault / "Welcome.md").read_text() == WELCOME


async def test_overwrite_with_current_revision(session, vault):
    rev = file_revision(vault / "Welcome.md")
    is_error, sc, text = await write(
        session, path="Welcome.md", body="# New welcome\n", overwrite=True, expected_revision=rev
    )
    assert not is_error, text
    assert (vault / "Welcome.md").read_text() == "# New welcome\n"
    assert sc["created"] is False
    assert sc["revision"] == sha256_hex(b"# New welcome\n")
    assert sc["revision"] != rev
    assert sc["bytes"] == len(b"# New welcome\n")


async def test_overwrite_chain_with_returned_revisions(session, vault):
    rev = file_revision(vault / "Projects/Beta.md")
    for i in range(3):
        is_error, sc, text = await write(
            session, path="Projects/Beta.md", body=f"version {i}\n", overwrite=True, expected_revision=rev
        )
        assert not is_error, text
        rev = sc["revision"]
    assert (vault / "Projects/Beta.md").read_text() == "version 2\n"


async def test_stale_revision_is_conflict_with_current_revision(session, vault):
    current = file_revision(vault / "Welcome.md")
    stale = sha256_hex(b"some older content")
    is_error, _, text = await write(
        session, path="Welcome.md", body="x\n", overwrite=True, expected_revision=stale
    )
    assert is_error
    assert text.startswith("conflict:"), text
    assert current in text, f"conflict message must name the current revision {current}: {text}"
    assert (vault / "Welcome.md").read_text() == WELCOME


async def test_external_writer_causes_conflict(session, vault):
    """Read, another writer changes the file, then write with the old revision."""
    is_error, sc, text = await check(session, "vault_read_note", {"path": "Projects/Beta.md"})
    assert not is_error, text
    old_rev = sc["revision"]
    other = b"# Beta\n\nEdited by someone else.\n"
    (vault / "Projects/Beta.md").write_bytes(other)

    is_error, _, text = await write(
        session, path="Projects/Beta.md", body="mine\n", overwrite=True, expected_revision=old_rev
    )
    assert is_error
    assert text.startswith("conflict:"), text
    assert sha256_hex(other) in text, text
    assert (vault / "Projects/Beta.md").read_bytes() == other

    # Re-read and retry with the fresh revision: now it succeeds.
    _, sc, _ = await check(session, "vault_read_note", {"path": "Projects/Beta.md"})
    is_error, _, text = await write(
        session, path="Projects/Beta.md", body="mine\n", overwrite=True, expected_revision=sc["revision"]
    )
    assert not is_error, text
    assert (vault / "Projects/Beta.md").read_text() == "mine\n"


async def test_properties_round_trip(session, vault):
    props = {"title": "X", "tags": ["a", "b"]}
    is_error, sc, text = await write(session, path="Props.md", body="Body text.\n", properties=props)
    assert not is_error, text
    raw = (vault / "Props.md").read_text()
    assert raw.startswith("---\n"), raw
    assert raw.endswith("Body text.\n"), raw
    assert sc["revision"] == file_revision(vault / "Props.md")

    is_error, r, text = await check(session, "vault_read_note", {"path": "Props.md", "properties_only": True})
    assert not is_error, text
    assert r["properties"] == props

    is_error, r, text = await check(session, "vault_read_note", {"path": "Props.md"})
    assert not is_error, text
    assert r["content"] == raw


async def test_properties_with_awkward_values_round_trip(session, vault):
    props = {
        "title": "Colon: and #hash",
        "aliases": ["yes", "no", "null", "1.0", "---"],
        "count": 7,
        "ratio": 0.5,
        "draft": True,
        "nested": {"k": "v", "list": [1, 2]},
        "empty": "",
        "multi": "line one\nline two",
        "unicode": "café 🚀",
    }
    is_error, _, text = await write(session, path="Awkward.md", body="b\n", properties=props)
    assert not is_error, text
    is_error, r, text = await check(session, "vault_read_note", {"path": "Awkward.md", "properties_only": True})
    assert not is_error, text
    assert r["properties"] == props


async def test_overwrite_with_properties_replaces_frontmatter(session, vault):
    rev = file_revision(vault / "Projects/Alpha.md")
    is_error, _, text = await write(
        session,
        path="Projects/Alpha.md",
        body="# Alpha v2\n",
        properties={"status": "done"},
        overwrite=True,
        expected_revision=rev,
    )
    assert not is_error, text
    is_error, r, text = await check(session, "vault_read_note", {"path": "Projects/Alpha.md", "properties_only": True})
    assert not is_error, text
    assert r["properties"] == {"status": "done"}
    raw = (vault / "Projects/Alpha.md").read_text()
    assert raw.count("---\n") == 2 and raw.endswith("# Alpha v2\n"), raw


async def test_properties_plus_frontmatter_body_is_invalid_argument(session, vault):
    body = "---\ntitle: Other\n---\nBody\n"
    is_error, _, text = await write(session, path="Double.md", body=body, properties={"title": "X"})
    assert is_error
    assert text.startswith("invalid_argument:"), text
    assert not (vault / "Double.md").exists()


async def test_body_with_own_frontmatter_is_stored_verbatim(session, vault):
    body = "---\ntitle: Own\n---\nBody\n"
    is_error, _, text = await write(session, path="Own.md", body=body)
    assert not is_error, text
    assert (vault / "Own.md").read_text() == body
    _, r, _ = await check(session, "vault_read_note", {"path": "Own.md", "properties_only": True})
    assert r["properties"] == {"title": "Own"}


@pytest.mark.parametrize(
    "path,body",
    [
        ("Allowed/note.md", "# md\n"),
        ("Allowed/board.canvas", '{"nodes":[],"edges":[]}\n'),
        ("Allowed/table.base", "views:\n  - type: table\n    name: Table\n"),
        ("Allowed/plain.txt", "plain\n"),
        ("Allowed/data.json", '{"a": 1}\n'),
    ],
)
async def test_allowed_extensions(session, vault, path, body):
    is_error, sc, text = await write(session, path=path, body=body)
    assert not is_error, text
    assert (vault / path).read_text() == body
    assert sc["created"] is True


@pytest.mark.parametrize(
    "path",
    ["evil.exe", "image.png", "noextension", "Folder/script.sh", "note.md.exe", "archive.tar.gz", "Note.MDX"],
)
async def test_unsupported_extensions(session, vault, path):
    is_error, _, text = await write(session, path=path, body="data\n")
    assert is_error
    assert text.startswith("unsupported_extension:"), text
    assert not (vault / path).exists()
    assert not (vault / "Folder").exists(), "no folder may be created for a rejected write"


async def test_over_size_cap_is_too_large(session, vault):
    body = "a" * (TEN_MIB + 1)
    is_error, _, text = await write(session, path="Huge.md", body=body)
    assert is_error
    assert text.startswith("too_large:"), text
    assert not (vault / "Huge.md").exists()
    # A too-large overwrite leaves the existing note alone.
    rev = file_revision(vault / "Welcome.md")
    is_error, _, text = await write(
        session, path="Welcome.md", body=body, overwrite=True, expected_revision=rev
    )
    assert is_error
    assert text.startswith("too_large:"), text
    assert (vault / "Welcome.md").read_text() == WELCOME
    # Still alive afterwards.
    is_error, _, text = await check(session, "vault_read_note", {"path": "Welcome.md"})
    assert not is_error, text


async def test_large_but_allowed_note(session, vault):
    body = ("0123456789abcde\n" * (1024 * 64))  # 1 MiB
    is_error, sc, text = await write(session, path="Big.md", body=body)
    assert not is_error, text
    assert sc["bytes"] == len(body)
    assert (vault / "Big.md").read_text() == body


async def test_overwrite_preserves_file_mode(session, vault):
    note = vault / "Projects/Beta.md"
    os.chmod(note, 0o600)
    rev = file_revision(note)
    is_error, _, text = await write(
        session, path="Projects/Beta.md", body="private\n", overwrite=True, expected_revision=rev
    )
    assert not is_error, text
    assert note.read_text() == "private\n"
    assert stat.S_IMODE(note.stat().st_mode) == 0o600


async def test_overwrite_leaves_no_temp_files(session, vault):
    folder = vault / "Projects"
    before = sorted(p.name for p in folder.iterdir())
    top_before = sorted(p.name for p in vault.iterdir())
    for i in range(3):
        rev = file_revision(folder / "Beta.md")
        is_error, _, text = await write(
            session, path="Projects/Beta.md", body=f"v{i}\n", overwrite=True, expected_revision=rev
        )
        assert not is_error, text
    is_error, _, text = await write(session, path="Projects/Fresh.md", body="fresh\n")
    assert not is_error, text
    after = sorted(p.name for p in folder.iterdir())
    assert after == sorted(before + ["Fresh.md"]), f"stray files: {set(after) - set(before)}"
    assert sorted(p.name for p in vault.iterdir()) == top_before
    # No leftovers anywhere in the vault either (temp files are often dot-files).
    leftovers = [
        str(p.relative_to(vault))
        for p in vault.rglob("*")
        if p.is_file() and (".tmp" in p.name or p.name.startswith(".quire") or p.name.endswith("~"))
    ]
    assert leftovers == []


async def test_overwrite_replaces_symlink_free_file_in_place(session, vault):
    """The overwritten note is still a regular file with the new content and the same path."""
    note = vault / "Daily/2024-01-01.md"
    rev = file_revision(note)
    is_error, sc, text = await write(
        session, path="Daily/2024-01-01.md", body="rewritten\n", overwrite=True, expected_revision=rev
    )
    assert not is_error, text
    assert note.is_file() and not note.is_symlink()
    assert note.read_text() == "rewritten\n"
    assert sc["path"] == "Daily/2024-01-01.md"


async def test_write_onto_a_folder_fails(session, vault):
    (vault / "Dir.md").mkdir()
    is_error, _, text = await write(session, path="Dir.md", body="x\n")
    assert is_error
    assert error_code(text) in ("already_exists", "invalid_path", "invalid_argument"), text
    assert (vault / "Dir.md").is_dir()


async def test_unicode_path_and_body(session, vault):
    path = "Ideen/Überlegungen 日本.md"
    body = "crème brûlée 🚀\n"
    is_error, sc, text = await write(session, path=path, body=body)
    assert not is_error, text
    assert (vault / path).read_text(encoding="utf-8") == body
    assert sc["bytes"] == len(body.encode())
