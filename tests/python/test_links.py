"""The link-graph tools and vault_move_note through the official SDK, over stdio and HTTP:
backlinks, outgoing links, orphans and broken links as Obsidian resolves them, read-your-writes,
access control (a denied note is never a source, target or orphan, and a link to it looks exactly
like a link to nothing), and moves that rewrite every link."""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from pathlib import Path

import pytest

from test_acl import AGENT_TOKEN, FILES as ACL_FILES, AclServer, call
from vaultlib import error_code, write_files

pytestmark = pytest.mark.anyio

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 24

GRAPH_FILES = {
    "Graph/Hub.md": "# Hub\n\nSee [[Leaf]] and [[Leaf#Part|the part]] and ![[chart.png]].\n"
    "[deep](Sub/Deep.md)\n[[Missing note]]\n",
    "Graph/Leaf.md": '---\nup: "[[Hub]]"\n---\n# Leaf\n\n## Part\nText.\n',
    "Graph/Sub/Deep.md": "Deep links back to [[Graph/Hub]].\n",
    "Graph/Alone.md": "Only a canvas shows me.\n",
    "Graph/Lonely.md": "Nobody links here.\n",
    "Graph/Board.canvas": json.dumps(
        {"nodes": [{"id": "a", "type": "file", "file": "Graph/Alone.md", "x": 0, "y": 0,
                    "width": 100, "height": 100}], "edges": []},
        indent="\t",
    ),
    "Journal/2025-01-01.md": "A day nobody links to.\n",
    ".obsidian/daily-notes.json": '{"folder": "Journal"}',
    # Obsidian's excluded files stay out of orphans and broken links (as from its graph view).
    ".obsidian/app.json": '{"userIgnoreFilters": ["Archive/", "Graph/Ignored/"]}',
    "Graph/Ignored/Old.md": "An excluded note with [[Nowhere]].\n",
}


@pytest.fixture
def vault(vault: Path) -> Path:
    write_files(vault, GRAPH_FILES)
    (vault / "Graph" / "chart.png").write_bytes(PNG)
    return vault


async def ok(session, tool: str, args: dict) -> dict:
    res = await session.call_tool(tool, args)
    text = res.content[0].text if res.content else ""
    assert not res.is_error, f"{tool} {args}: {text}"
    return res.structured_content


async def test_backlinks_of_notes_and_attachments(session):
    found = await ok(session, "vault_get_backlinks", {"path": "Graph/Leaf.md"})
    assert [(b["source"], b["line"], b["link"]) for b in found["backlinks"]] == [
        ("Graph/Hub.md", 3, "[[Leaf]]"),
        ("Graph/Hub.md", 3, "[[Leaf#Part|the part]]"),
    ]
    assert found["backlinks"][0]["context"].startswith("See [[Leaf]] and")

    found = await ok(session, "vault_get_backlinks", {"path": "Graph/Hub.md"})
    assert sorted((b["source"], b["line"]) for b in found["backlinks"]) == [
        ("Graph/Leaf.md", 2),  # the property link `up: "[[Hub]]"`
        ("Graph/Sub/Deep.md", 1),
    ]

    found = await ok(session, "vault_get_backlinks", {"path": "Graph/chart.png"})
    assert [(b["source"], b["embed"]) for b in found["backlinks"]] == [("Graph/Hub.md", True)]

    found = await ok(session, "vault_get_backlinks", {"path": "Graph/Alone.md"})
    assert [b["source"] for b in found["backlinks"]] == ["Graph/Board.canvas"]

    page = await ok(session, "vault_get_backlinks", {"path": "Graph/Leaf.md", "limit": 1})
    assert len(page["backlinks"]) == 1 and page["next_cursor"]
    rest = await ok(
        session, "vault_get_backlinks",
        {"path": "Graph/Leaf.md", "limit": 1, "cursor": page["next_cursor"]},
    )
    assert rest["backlinks"][0]["link"] == "[[Leaf#Part|the part]]" and "next_cursor" not in rest

    res = await session.call_tool("vault_get_backlinks", {"path": "Graph/Nope.md"})
    assert res.is_error and error_code(res.content[0].text) == "not_found"


async def test_outgoing_links_are_resolved_as_obsidian_does(session):
    found = await ok(session, "vault_get_outgoing_links", {"path": "Graph/Hub.md"})
    links = [
        (l["target"], l["kind"], l.get("resolved_path"), l["broken"], l["line"], l["embed"])
        for l in found["links"]
    ]
    assert links == [
        ("Leaf", "note", "Graph/Leaf.md", False, 3, False),
        ("Leaf#Part", "note", "Graph/Leaf.md", False, 3, False),
        ("chart.png", "file", "Graph/chart.png", False, 3, True),
        ("Sub/Deep.md", "note", "Graph/Sub/Deep.md", False, 4, False),
        ("Missing note", "note", None, True, 5, False),
    ]
    assert found["links"][2]["bytes"] == len(PNG)
    assert found["links"][1]["display"] == "the part"


async def test_orphans_skip_daily_notes_canvas_cards_and_excluded_folders(session):
    found = await ok(session, "vault_find_orphans", {"limit": 1000})
    paths = {n["path"] for n in found["notes"]}
    assert "Graph/Lonely.md" in paths
    for linked in ("Graph/Alone.md", "Graph/Leaf.md", "Graph/Hub.md", "Graph/Sub/Deep.md"):
        assert linked not in paths, linked
    assert not any(p.startswith(("Journal/", "Graph/Ignored/")) for p in paths)
    found = await ok(session, "vault_find_orphans", {"limit": 1000, "exclude_folders": ["Graph"]})
    assert not any(n["path"].startswith("Graph/") for n in found["notes"])


async def test_broken_links_and_read_your_writes(session):
    found = await ok(session, "vault_find_broken_links", {"folder": "Graph"})
    assert [(b["source"], b["line"], b["link"]) for b in found["broken"]] == [
        ("Graph/Hub.md", 5, "[[Missing note]]")
    ]
    # Creating the missing note resolves the link at once; a new link ends an orphan's solitude.
    await ok(session, "vault_write_note", {"path": "Graph/Missing note.md", "body": "[[Lonely]]\n"})
    found = await ok(session, "vault_find_broken_links", {"folder": "Graph"})
    assert found["broken"] == []
    found = await ok(session, "vault_find_orphans", {"limit": 1000})
    assert "Graph/Lonely.md" not in {n["path"] for n in found["notes"]}
    found = await ok(session, "vault_get_backlinks", {"path": "Graph/Lonely.md"})
    assert [b["source"] for b in found["backlinks"]] == ["Graph/Missing note.md"]


async def test_the_watcher_keeps_the_graph_current(session, vault: Path):
    # Files written by someone else (Obsidian, a sync client) reach the graph through the watcher:
    # a new note linking an existing one, and an attachment that resolves a broken embed.
    (vault / "Graph" / "External.md").write_text("Found [[Lonely]] and ![[late.png]].\n")
    deadline = time.monotonic() + 20
    while True:
        found = await ok(session, "vault_get_backlinks", {"path": "Graph/Lonely.md"})
        if [b["source"] for b in found["backlinks"]] == ["Graph/External.md"]:
            break
        assert time.monotonic() < deadline, "the watcher never reported the new note"
        await asyncio.sleep(0.05)
    broken = await ok(session, "vault_find_broken_links", {"folder": "Graph"})
    assert "![[late.png]]" in [b["link"] for b in broken["broken"]]
    (vault / "Graph" / "late.png").write_bytes(PNG)
    while True:
        broken = await ok(session, "vault_find_broken_links", {"folder": "Graph"})
        if "![[late.png]]" not in [b["link"] for b in broken["broken"]]:
            break
        assert time.monotonic() < deadline, "the watcher never reported the attachment"
        await asyncio.sleep(0.05)
    (vault / "Graph" / "External.md").unlink()
    while True:
        found = await ok(session, "vault_get_backlinks", {"path": "Graph/Lonely.md"})
        if found["backlinks"] == []:
            break
        assert time.monotonic() < deadline, "the watcher never reported the deletion"
        await asyncio.sleep(0.05)


ACL_LINK_FILES = {
    **ACL_FILES,
    "Projects/plan.md": "# Plan\n\nSee [[secret]], [[Privé/secret]] and [[nonexistent]].\n",
    "Privé/secret.md": "# Secret\n\nzebracorn links [[plan]] and [[Inbox/todo]].\n",
}


@pytest.fixture
def links_acl_server(quire_bin, tmp_path, xdg_home):
    root = tmp_path / "vault"
    root.mkdir()
    write_files(root, ACL_LINK_FILES)
    server = AclServer(quire_bin, root, tmp_path, xdg_home)
    yield server
    server.server.stop()


async def test_denied_notes_are_never_sources_targets_or_orphans(links_acl_server):
    async with links_acl_server.session(AGENT_TOKEN) as session:
        found = await ok(session, "vault_get_outgoing_links", {"path": "Projects/plan.md"})
        shapes = [{k: v for k, v in l.items() if k not in ("target", "display", "column")}
                  for l in found["links"]]
        # A link to a denied note looks exactly like a link to nothing.
        assert shapes[0] == shapes[2] and shapes[1] == shapes[2], shapes
        assert all(l["broken"] and "resolved_path" not in l for l in found["links"])

        for path in ("Projects/plan.md", "Inbox/todo.md"):
            found = await ok(session, "vault_get_backlinks", {"path": path})
            assert found["backlinks"] == [], found
        is_error, text = await call(session, "vault_get_backlinks", {"path": "Privé/secret.md"})
        assert is_error and error_code(text) == "not_found"
        is_error, text = await call(session, "vault_get_outgoing_links", {"path": "Privé/secret.md"})
        assert is_error and error_code(text) == "not_found"

        found = await ok(session, "vault_find_orphans", {"limit": 1000})
        paths = {n["path"] for n in found["notes"]}
        assert not any(p.startswith(("Privé/", "Keys/")) for p in paths)
        # Linked only from a denied note: an orphan as far as this caller can tell.
        assert "Projects/plan.md" in paths

        found = await ok(session, "vault_find_broken_links", {"limit": 1000})
        assert {b["source"] for b in found["broken"]} == {"Projects/plan.md"}
        text = json.dumps(found, ensure_ascii=False)
        for word in ("zebracorn", "Keys/"):
            assert word not in text


MOVE_FILES = {
    "Move/Target.md": "---\naliases: [T]\n---\n# Target\n\n## Part\n\nSee [up](../Elsewhere/Deep.md) and [[Sibling]].\n",
    "Move/Sibling.md": "Back to [[Target]].\n",
    "Move/Refs.md": '---\nup: "[[Target]]"\n---\n[[Target|alias]] ![[Target#Part]] [[Move/Target#^b]]\n'
    "[md](Target.md#Part) [enc](<Target.md>) `[[Target]]`\n",
    "Elsewhere/Deep.md": "[rel](../Move/Target.md) and [[Target]]\n",
    "Move/Board.canvas": json.dumps(
        {"nodes": [
            {"id": "a", "type": "file", "file": "Move/Target.md", "x": 0, "y": 0, "width": 1, "height": 1},
            {"id": "b", "type": "text", "text": "card [[Target]]", "x": 0, "y": 0, "width": 1, "height": 1},
        ], "edges": []},
        indent="\t",
    ),
}


@pytest.fixture
def move_vault(vault: Path) -> Path:
    write_files(vault, MOVE_FILES)
    return vault


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)
    }


async def test_move_rewrites_every_link_and_a_dry_run_changes_nothing(open_session, move_vault):
    async with open_session(move_vault) as session:
        before = snapshot(move_vault)
        plan = await ok(session, "vault_move_note", {
            "old_path": "Move/Target.md", "new_path": "Shelf/2025/Renamed Target.md", "dry_run": True,
        })
        assert plan["dry_run"] is True and snapshot(move_vault) == before
        assert plan["moved"] == {"from": "Move/Target.md", "to": "Shelf/2025/Renamed Target.md",
                                 "revision": plan["moved"]["revision"]}
        changes = {f["path"]: [(c["before"], c["after"]) for c in f["changes"]] for f in plan["rewritten"]}
        assert changes["Move/Refs.md"] == [
            ("[[Target]]", "[[Renamed Target]]"),
            ("[[Target|alias]]", "[[Renamed Target|alias]]"),
            ("![[Target#Part]]", "![[Renamed Target#Part]]"),
            ("[[Move/Target#^b]]", "[[Shelf/2025/Renamed Target#^b]]"),
            ("[md](Target.md#Part)", "[md](Renamed%20Target.md#Part)"),
            ("[enc](<Target.md>)", "[enc](<Renamed Target.md>)"),
        ]
        assert changes["Elsewhere/Deep.md"] == [
            ("[rel](../Move/Target.md)", "[rel](../Shelf/2025/Renamed%20Target.md)"),
            ("[[Target]]", "[[Renamed Target]]"),
        ]
        # The moved note's own relative links follow it.
        assert changes["Shelf/2025/Renamed Target.md"] == [
            ("[up](../Elsewhere/Deep.md)", "[up](../../Elsewhere/Deep.md)"),
        ]
        assert changes["Move/Board.canvas"] == [
            ("Move/Target.md", "Shelf/2025/Renamed Target.md"),
            ("[[Target]]", "[[Renamed Target]]"),
        ]

        done = await ok(session, "vault_move_note", {
            "old_path": "Move/Target.md", "new_path": "Shelf/2025/Renamed Target.md",
        })
        assert done["dry_run"] is False
        assert not (move_vault / "Move/Target.md").exists()
        moved = (move_vault / "Shelf/2025/Renamed Target.md").read_bytes()
        assert done["moved"]["revision"] == hashlib.sha256(moved).hexdigest()
        for file in done["rewritten"]:
            assert hashlib.sha256((move_vault / file["path"]).read_bytes()).hexdigest() == file["revision"]
        refs = (move_vault / "Move/Refs.md").read_text()
        assert 'up: "[[Renamed Target]]"' in refs and "`[[Target]]`" in refs
        # Nothing is broken, and the backlinks followed the note.
        broken = await ok(session, "vault_find_broken_links", {"folder": "Move"})
        assert broken["broken"] == []
        backlinks = await ok(session, "vault_get_backlinks", {"path": "Shelf/2025/Renamed Target.md"})
        assert {b["source"] for b in backlinks["backlinks"]} == {
            "Move/Refs.md", "Move/Sibling.md", "Elsewhere/Deep.md", "Move/Board.canvas",
        }

        # And back: every file is byte-identical to the start.
        await ok(session, "vault_move_note", {
            "old_path": "Shelf/2025/Renamed Target.md", "new_path": "Move/Target.md",
            "prune_empty_folders": True,
        })
        assert snapshot(move_vault) == before
        assert not (move_vault / "Shelf").exists()


async def test_move_refuses_existing_destinations_and_bad_paths(open_session, move_vault):
    async with open_session(move_vault) as session:
        before = snapshot(move_vault)
        for args, code in (
            ({"old_path": "Move/Target.md", "new_path": "Move/Sibling.md"}, "already_exists"),
            ({"old_path": "Move/Nope.md", "new_path": "Move/Other.md"}, "not_found"),
            ({"old_path": "Move/Target.md", "new_path": ".obsidian/x.md"}, "path_forbidden"),
            ({"old_path": "Move/Target.md", "new_path": "../x.md"}, "invalid_path"),
            ({"old_path": "Move/Target.md", "new_path": "Move/Target.txt"}, "invalid_argument"),
            ({"old_path": "Move", "new_path": "Moved"}, "invalid_argument"),
        ):
            res = await session.call_tool("vault_move_note", args)
            assert res.is_error and error_code(res.content[0].text) == code, (args, res.content)
        assert snapshot(move_vault) == before
