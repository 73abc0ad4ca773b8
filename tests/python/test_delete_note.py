"""vault_delete_note over stdio: trash, name collisions, revisions, pruning."""

from __future__ import annotations

import shutil

import pytest

from vaultlib import file_revision, sha256_hex

pytestmark = pytest.mark.anyio


async def check(session, tool: str, args: dict):
    """Call a tool; return (is_error, structured_content, first text content)."""
    res = await session.call_tool(tool, args)
    text = res.content[0].text if res.content and res.content[0].type == "text" else ""
    return res.is_error, res.structured_content, text


async def delete(session, **args):
    return await check(session, "vault_delete_note", args)


async def test_delete_moves_note_to_trash(session, vault):
    original = (vault / "Projects/Beta.md").read_bytes()
    is_error, sc, text = await delete(session, path="Projects/Beta.md")
    assert not is_error, text
    assert not (vault / "Projects/Beta.md").exists()
    assert (vault / ".trash/Beta.md").read_bytes() == original
    assert sc["path"] == "Projects/Beta.md"
    assert sc["trashed_to"] == ".trash/Beta.md"
    assert sc["revision"] == sha256_hex(original)
    assert sc["pruned_folders"] == []
    assert (vault / "Projects").is_dir(), "folder still holds other notes"
    # Reading it now fails.
    is_error, _, text = await check(session, "vault_read_note", {"path": "Projects/Beta.md"})
    assert is_error and text.startswith("not_found:"), text


async def test_delete_creates_trash_folder(session, vault):
    shutil.rmtree(vault / ".trash")
    is_error, sc, text = await delete(session, path="Welcome.md")
    assert not is_error, text
    assert sc["trashed_to"] == ".trash/Welcome.md"
    assert (vault / ".trash/Welcome.md").is_file()


async def test_trash_name_collisions_never_overwrite(session, vault):
    (vault / ".trash/Beta.md").write_text("older trashed Beta\n")
    (vault / "Other").mkdir()
    (vault / "Other/Beta.md").write_text("second Beta\n")
    (vault / "Third").mkdir()
    (vault / "Third/Beta.md").write_text("third Beta\n")

    is_error, sc, text = await delete(session, path="Projects/Beta.md")
    assert not is_error, text
    assert sc["trashed_to"] == ".trash/Beta 1.md"

    is_error, sc, text = await delete(session, path="Other/Beta.md")
    assert not is_error, text
    assert sc["trashed_to"] == ".trash/Beta 2.md"

    is_error, sc, text = await delete(session, path="Third/Beta.md")
    assert not is_error, text
    assert sc["trashed_to"] == ".trash/Beta 3.md"

    assert (vault / ".trash/Beta.md").read_text() == "older trashed Beta\n"
    assert (vault / ".trash/Beta 1.md").read_text() == "# Beta\n\nBeta body.\n"
    assert (vault / ".trash/Beta 2.md").read_text() == "second Beta\n"
    assert (vault / ".trash/Beta 3.md").read_text() == "third Beta\n"


async def test_trash_collision_skips_taken_numbers(session, vault):
    (vault / ".trash/Beta.md").write_text("t0\n")
    (vault / ".trash/Beta 1.md").write_text("t1\n")
    is_error, sc, text = await delete(session, path="Projects/Beta.md")
    assert not is_error, text
    assert sc["trashed_to"] == ".trash/Beta 2.md"
    assert (vault / ".trash/Beta.md").read_text() == "t0\n"
    assert (vault / ".trash/Beta 1.md").read_text() == "t1\n"


async def test_delete_with_matching_revision(session, vault):
    rev = file_revision(vault / "Projects/Alpha.md")
    is_error, sc, text = await delete(session, path="Projects/Alpha.md", expected_revision=rev)
    assert not is_error, text
    assert sc["revision"] == rev
    assert not (vault / "Projects/Alpha.md").exists()


async def test_delete_with_stale_revision_is_conflict(session, vault):
    before = (vault / "Projects/Alpha.md").read_bytes()
    stale = sha256_hex(b"not the content")
    is_error, _, text = await delete(session, path="Projects/Alpha.md", expected_revision=stale)
    assert is_error
    assert text.startswith("conflict:"), text
    assert sha256_hex(before) in text, text
    assert (vault / "Projects/Alpha.md").read_bytes() == before
    assert not (vault / ".trash/Alpha.md").exists()


async def test_external_writer_then_delete_is_conflict(session, vault):
    is_error, sc, text = await check(session, "vault_read_note", {"path": "Projects/Beta.md"})
    assert not is_error, text
    old_rev = sc["revision"]
    other = b"changed by another writer\n"
    (vault / "Projects/Beta.md").write_bytes(other)
    trash_before = sorted(p.name for p in (vault / ".trash").iterdir())

    is_error, _, text = await delete(session, path="Projects/Beta.md", expected_revision=old_rev)
    assert is_error
    assert text.startswith("conflict:"), text
    assert (vault / "Projects/Beta.md").read_bytes() == other
    assert sorted(p.name for p in (vault / ".trash").iterdir()) == trash_before


async def test_delete_missing_is_not_found(session, vault):
    trash_before = sorted(p.name for p in (vault / ".trash").iterdir())
    is_error, _, text = await delete(session, path="Projects/Nope.md")
    assert is_error
    assert text.startswith("not_found:"), text
    is_error, _, text = await delete(session, path="Nowhere/Nope.md", prune_empty_folders=True)
    assert is_error
    assert text.startswith("not_found:"), text
    assert sorted(p.name for p in (vault / ".trash").iterdir()) == trash_before


async def test_delete_twice(session, vault):
    # Not a daily note: the daily-notes folder is protected (test_memory.py).
    is_error, _, text = await delete(session, path="Projects/Beta.md")
    assert not is_error, text
    is_error, _, text = await delete(session, path="Projects/Beta.md")
    assert is_error
    assert text.startswith("not_found:"), text


async def test_prune_empty_folders(session, vault):
    is_error, sc, text = await delete(session, path="Attic/Old/Ancient.md", prune_empty_folders=True)
    assert not is_error, text
    assert {p.rstrip("/") for p in sc["pruned_folders"]} == {"Attic/Old", "Attic"}
    assert not (vault / "Attic").exists()
    assert (vault / ".trash/Ancient.md").read_text() == "Ancient history.\n"


async def test_prune_stops_at_non_empty_folder(session, vault):
    is_error, sc, text = await delete(session, path="Projects/Sub/Gamma.md", prune_empty_folders=True)
    assert not is_error, text
    assert [p.rstrip("/") for p in sc["pruned_folders"]] == ["Projects/Sub"]
    assert not (vault / "Projects/Sub").exists()
    assert (vault / "Projects/Alpha.md").is_file()


async def test_prune_keeps_folder_with_non_note_files(session, vault):
    (vault / "Attic/Old/attachment.png").write_bytes(b"\x89PNG\r\n")
    is_error, sc, text = await delete(session, path="Attic/Old/Ancient.md", prune_empty_folders=True)
    assert not is_error, text
    assert sc["pruned_folders"] == []
    assert (vault / "Attic/Old/attachment.png").is_file()


async def test_no_prune_by_default(session, vault):
    is_error, sc, text = await delete(session, path="Attic/Old/Ancient.md")
    assert not is_error, text
    assert sc["pruned_folders"] == []
    assert (vault / "Attic/Old").is_dir()


async def test_delete_top_level_note_never_prunes_vault_root(session, vault):
    # Leave the vault root with nothing visible but this note.
    for child in vault.iterdir():
        if child.name not in ("Long.md", ".trash", ".obsidian"):
            if child.is_dir():
                shutil.rmtree(child)
            else:
                child.unlink()
    is_error, sc, text = await delete(session, path="Long.md", prune_empty_folders=True)
    assert not is_error, text
    assert sc["pruned_folders"] == []
    assert vault.is_dir()
    assert (vault / ".trash/Long.md").is_file()


async def test_deleted_note_leaves_listing(session, vault):
    is_error, _, text = await delete(session, path="Projects/Beta.md")
    assert not is_error, text
    is_error, sc, text = await check(session, "vault_list_notes", {"folder": "Projects", "limit": 1000})
    assert not is_error, text
    paths = [n["path"] for n in sc["notes"]]
    assert "Projects/Beta.md" not in paths
    assert "Projects/Alpha.md" in paths
    is_error, sc, text = await check(session, "vault_list_notes", {"limit": 1000})
    assert not is_error, text
    assert not any(n["path"].startswith(".trash") for n in sc["notes"])
