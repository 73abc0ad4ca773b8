"""The editing tools over stdio: vault_patch_note, vault_replace_in_note, vault_insert_at_anchor,
vault_replace_span, vault_delete_span and vault_update_properties. Each changes only its target, keeps
the properties block byte-identical unless it is the target, honours expected_revision, and fails with
a stable code that says what to do next. 50 concurrent appends to one note are each applied exactly once.
"""

from __future__ import annotations

import asyncio
import hashlib

import pytest

pytestmark = pytest.mark.anyio

NOTE = "Edit/Plan.md"
PLAN = """\
---
# planning note
title: "Plan: v2"
tags: [project, active]
status: draft   # set by hand
aliases:
  - The Plan
---
# Plan

Intro line.

## Tasks

- [ ] first task
- [ ] second task

### Later

- [ ] someday

## Notes

Status: unknown
Closing line.
"""
BLOCK = PLAN[: PLAN.index("# Plan\n")]
EDIT_TOOLS = (
    "vault_patch_note",
    "vault_replace_in_note",
    "vault_insert_at_anchor",
    "vault_replace_span",
    "vault_delete_span",
    "vault_update_properties",
)


async def check(session, tool: str, args: dict):
    """Call a tool; return (is_error, structured_content, first text content)."""
    res = await session.call_tool(tool, args)
    text = res.content[0].text if res.content and res.content[0].type == "text" else ""
    return res.is_error, res.structured_content, text


def revision(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def plan(vault):
    path = vault / NOTE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(PLAN)
    return path


def assert_ok(is_error, sc, text, path):
    assert not is_error, text
    data = path.read_bytes()
    assert sc["path"] == NOTE
    assert sc["revision"] == revision(data)
    assert sc["bytes"] == len(data)
    assert sc["modified"]


async def test_tools_are_listed_with_schemas(session):
    tools = {t.name: t for t in (await session.list_tools()).tools}
    for name in EDIT_TOOLS:
        tool = tools[name]
        assert tool.annotations and tool.annotations.read_only_hint is not True, name
        assert tool.output_schema and tool.output_schema.get("type") == "object", name
        assert "path" in tool.input_schema["required"], name
        assert "expected_revision" in tool.input_schema["properties"], name
    patch = tools["vault_patch_note"].input_schema["properties"]
    for prop in ("operation", "content", "heading", "heading_level", "include_children"):
        assert prop in patch, prop


# --- vault_patch_note ---------------------------------------------------------------------------


async def test_append_under_heading_lands_after_last_subsection(session, plan):
    is_error, sc, text = await check(
        session,
        "vault_patch_note",
        {"path": NOTE, "operation": "append", "heading": "Tasks", "content": "- [ ] third task"},
    )
    assert_ok(is_error, sc, text, plan)
    after = plan.read_text()
    assert after == PLAN.replace("- [ ] someday\n", "- [ ] someday\n- [ ] third task\n")
    assert sc["changed"] is True
    assert after.splitlines()[sc["start_line"] - 1] == "- [ ] third task"


async def test_append_without_children_and_prepend(session, plan):
    await check(
        session,
        "vault_patch_note",
        {"path": NOTE, "operation": "append", "heading": "Tasks", "include_children": False, "content": "- [ ] x"},
    )
    await check(
        session,
        "vault_patch_note",
        {"path": NOTE, "operation": "prepend", "heading": "Notes", "content": "First!"},
    )
    assert plan.read_text() == PLAN.replace("- [ ] second task\n", "- [ ] second task\n- [ ] x\n").replace(
        "## Notes\n", "## Notes\nFirst!\n"
    )


async def test_replace_and_insert_before_nested_heading(session, plan):
    is_error, sc, text = await check(
        session,
        "vault_patch_note",
        {"path": NOTE, "operation": "replace", "heading": "Later", "heading_level": 3, "content": "nothing\n"},
    )
    assert_ok(is_error, sc, text, plan)
    is_error, _, text = await check(
        session,
        "vault_patch_note",
        {"path": NOTE, "operation": "insert_before", "heading": "Later", "content": "before later"},
    )
    assert not is_error, text
    assert plan.read_text() == PLAN.replace("### Later\n\n- [ ] someday\n", "before later\n### Later\nnothing\n")


async def test_body_patches_keep_the_properties_block(session, plan):
    for operation, content in (("prepend", "top line"), ("append", "bottom line"), ("replace", "all new\n")):
        is_error, _, text = await check(
            session, "vault_patch_note", {"path": NOTE, "operation": operation, "content": content}
        )
        assert not is_error, text
        assert plan.read_text().startswith(BLOCK)
    assert plan.read_text() == BLOCK + "all new\n"


async def test_patch_errors(session, plan):
    cases = [
        ({"heading": "Nope", "operation": "append", "content": "x"}, "heading_not_found"),
        ({"operation": "insert_before", "content": "x"}, "invalid_argument"),
        ({"operation": "append", "content": ""}, "invalid_argument"),
        ({"operation": "sideways", "content": "x"}, "invalid_argument"),
        ({"operation": "append", "content": "x", "heading": "Tasks", "heading_level": 9}, "invalid_argument"),
    ]
    for extra, code in cases:
        is_error, _, text = await check(session, "vault_patch_note", {"path": NOTE, **extra})
        assert is_error and text.startswith(f"{code}:"), (extra, text)
    assert plan.read_text() == PLAN


async def test_duplicate_heading_is_ambiguous_with_candidates(session, vault):
    (vault / "Dup.md").write_text("# Review\n## Review\ntext\n")
    is_error, _, text = await check(
        session, "vault_patch_note", {"path": "Dup.md", "operation": "append", "heading": "Review", "content": "x"}
    )
    assert is_error and text.startswith("ambiguous_heading:"), text
    assert "level 1, line 1" in text and "level 2, line 2" in text


async def test_missing_note_and_bad_path(session, vault):
    for path, code in (("Missing.md", "not_found"), ("../x.md", "invalid_path"), (".obsidian/a.md", "path_forbidden")):
        is_error, _, text = await check(
            session, "vault_patch_note", {"path": path, "operation": "append", "content": "x"}
        )
        assert is_error and text.startswith(f"{code}:"), (path, text)


# --- revisions ------------------------------------------------------------------------------------


async def test_every_tool_honours_expected_revision(session, plan):
    stale = "0" * 64
    calls = {
        "vault_patch_note": {"operation": "append", "content": "x"},
        "vault_replace_in_note": {"old_text": "Closing line.", "new_text": "Closing words."},
        "vault_insert_at_anchor": {"anchor": "Intro", "position": "after", "content": "x"},
        "vault_replace_span": {"start_anchor": "Status:", "content": "Status: fine"},
        "vault_delete_span": {"start_anchor": "Intro"},
        "vault_update_properties": {"properties": {"status": "done"}},
    }
    for tool, args in calls.items():
        is_error, _, text = await check(session, tool, {"path": NOTE, "expected_revision": stale, **args})
        assert is_error and text.startswith("conflict:"), (tool, text)
        assert revision(PLAN.encode()) in text, text
    assert plan.read_text() == PLAN
    current = revision(plan.read_bytes())
    for tool, args in calls.items():
        is_error, sc, text = await check(session, tool, {"path": NOTE, "expected_revision": current, **args})
        assert not is_error, (tool, text)
        current = sc["revision"]
        assert current == revision(plan.read_bytes())


# --- vault_replace_in_note ------------------------------------------------------------------------


async def test_replace_in_note(session, plan):
    is_error, sc, text = await check(
        session, "vault_replace_in_note", {"path": NOTE, "old_text": "Status: unknown", "new_text": "Status: known"}
    )
    assert_ok(is_error, sc, text, plan)
    assert sc["replacements"] == 1
    assert plan.read_text() == PLAN.replace("Status: unknown", "Status: known")


async def test_replace_in_note_ambiguity_and_replace_all(session, plan):
    is_error, _, text = await check(
        session, "vault_replace_in_note", {"path": NOTE, "old_text": "task", "new_text": "job"}
    )
    assert is_error and text.startswith("ambiguous_match:"), text
    assert "2 places" in text and "lines 15, 16" in text, text
    is_error, sc, text = await check(
        session,
        "vault_replace_in_note",
        {"path": NOTE, "old_text": "task", "new_text": "job", "replace_all_occurrences": True},
    )
    assert not is_error, text
    assert sc["replacements"] == 2
    assert plan.read_text() == PLAN.replace("task", "job")


async def test_replace_in_note_never_touches_properties(session, plan):
    is_error, _, text = await check(
        session, "vault_replace_in_note", {"path": NOTE, "old_text": "draft", "new_text": "done"}
    )
    assert is_error and text.startswith("no_match:"), text
    assert "vault_update_properties" in text
    # "Plan" occurs in the properties and the body; only the body changes.
    is_error, sc, text = await check(
        session,
        "vault_replace_in_note",
        {"path": NOTE, "old_text": "Plan", "new_text": "Scheme", "replace_all_occurrences": True},
    )
    assert not is_error, text
    assert plan.read_text() == BLOCK + PLAN[len(BLOCK) :].replace("Plan", "Scheme")
    is_error, _, text = await check(session, "vault_replace_in_note", {"path": NOTE, "old_text": "", "new_text": "x"})
    assert is_error and text.startswith("invalid_argument:"), text


# --- anchors and spans ----------------------------------------------------------------------------


async def test_insert_at_anchor(session, plan):
    is_error, sc, text = await check(
        session,
        "vault_insert_at_anchor",
        {"path": NOTE, "anchor": "second task", "position": "after", "content": "- [ ] between"},
    )
    assert_ok(is_error, sc, text, plan)
    is_error, _, text = await check(
        session,
        "vault_insert_at_anchor",
        {"path": NOTE, "anchor": "Closing", "position": "before", "content": "Penultimate."},
    )
    assert not is_error, text
    assert plan.read_text() == PLAN.replace("- [ ] second task\n", "- [ ] second task\n- [ ] between\n").replace(
        "Closing line.", "Penultimate.\nClosing line."
    )


async def test_anchor_errors(session, plan):
    is_error, _, text = await check(
        session, "vault_insert_at_anchor", {"path": NOTE, "anchor": "- [ ]", "position": "after", "content": "x"}
    )
    assert is_error and text.startswith("ambiguous_match:") and "first_match" in text, text
    is_error, _, text = await check(
        session, "vault_insert_at_anchor", {"path": NOTE, "anchor": "closing LINE", "position": "after", "content": "x"}
    )
    assert is_error and text.startswith("no_match:") and "case" in text, text
    is_error, _, text = await check(
        session, "vault_insert_at_anchor", {"path": NOTE, "anchor": "title", "position": "after", "content": "x"}
    )
    assert is_error and text.startswith("no_match:"), text  # the properties block is never an anchor
    is_error, _, text = await check(
        session, "vault_insert_at_anchor", {"path": NOTE, "anchor": "a\nb", "position": "after", "content": "x"}
    )
    assert is_error and text.startswith("invalid_argument:"), text
    is_error, _, text = await check(
        session, "vault_insert_at_anchor", {"path": NOTE, "anchor": "Intro", "content": "x"}
    )
    assert is_error and text.startswith("invalid_argument:"), text  # position is required
    assert plan.read_text() == PLAN
    is_error, _, text = await check(
        session,
        "vault_insert_at_anchor",
        {"path": NOTE, "anchor": "- [ ]", "position": "before", "content": "Tasks:", "first_match": True},
    )
    assert not is_error, text
    assert plan.read_text() == PLAN.replace("- [ ] first task", "Tasks:\n- [ ] first task")


async def test_replace_span_and_delete_span(session, plan):
    is_error, sc, text = await check(
        session,
        "vault_replace_span",
        {"path": NOTE, "start_anchor": "first task", "end_anchor": "second task", "content": "- [x] merged"},
    )
    assert_ok(is_error, sc, text, plan)
    assert (sc["start_line"], sc["end_line"]) == (15, 15)
    is_error, sc, text = await check(
        session, "vault_delete_span", {"path": NOTE, "start_anchor": "## Notes", "end_anchor": "Closing"}
    )
    assert not is_error, text
    assert "start_line" not in sc
    expected = PLAN.replace("- [ ] first task\n- [ ] second task\n", "- [x] merged\n")
    expected = expected.replace("## Notes\n\nStatus: unknown\nClosing line.\n", "")
    assert plan.read_text() == expected


async def test_span_end_anchor_is_searched_after_start(session, plan):
    # "- [ ]" is on lines 15, 16 and 20, but the end anchor only counts lines from the start (20) on.
    is_error, _, text = await check(
        session, "vault_delete_span", {"path": NOTE, "start_anchor": "someday", "end_anchor": "- [ ]"}
    )
    assert not is_error, text
    assert plan.read_text() == PLAN.replace("- [ ] someday\n", "")
    is_error, _, text = await check(
        session, "vault_delete_span", {"path": NOTE, "start_anchor": "Intro", "end_anchor": "task"}
    )
    assert is_error and text.startswith("ambiguous_match:"), text


# --- vault_update_properties ----------------------------------------------------------------------


async def test_update_properties_changes_only_named_keys(session, plan):
    is_error, sc, text = await check(
        session,
        "vault_update_properties",
        {"path": NOTE, "properties": {"status": "done", "reviewed": "2026-11-30", "aliases": None}},
    )
    assert not is_error, text
    assert sorted(sc["changed_keys"]) == ["aliases", "reviewed", "status"]
    assert sc["properties"] == {
        "title": "Plan: v2",
        "tags": ["project", "active"],
        "status": "done",
        "reviewed": "2026-11-30",
    }
    # The user's comment on the changed line stays with the new value.
    assert plan.read_text() == PLAN.replace(
        "status: draft   # set by hand\naliases:\n  - The Plan\n", "status: done   # set by hand\nreviewed: 2026-11-30\n"
    )


async def test_update_properties_same_value_writes_nothing(session, plan):
    is_error, sc, text = await check(
        session, "vault_update_properties", {"path": NOTE, "properties": {"tags": ["project", "active"]}}
    )
    assert not is_error, text
    assert sc["changed"] is False and sc["changed_keys"] == []
    assert plan.read_text() == PLAN


async def test_update_properties_creates_and_replaces_blocks(session, vault):
    (vault / "Bare.md").write_text("# Bare\n")
    is_error, sc, text = await check(
        session, "vault_update_properties", {"path": "Bare.md", "properties": {"tags": ["a"], "count": 1}}
    )
    assert not is_error, text
    assert (vault / "Bare.md").read_text() == "---\ncount: 1\ntags:\n  - a\n---\n# Bare\n"
    is_error, sc, text = await check(
        session, "vault_update_properties", {"path": "Bare.md", "properties": {"only": True}, "replace": True}
    )
    assert not is_error, text
    assert (vault / "Bare.md").read_text() == "---\nonly: true\n---\n# Bare\n"


@pytest.mark.parametrize(
    "block",
    ["---\ntitle: [unclosed\n---\nbody\n", "---\n- a list\n- not a mapping\n---\nbody\n", "---\njust a scalar\n---\nbody\n"],
)
async def test_broken_properties_are_refused(session, vault, block):
    (vault / "Broken.md").write_text(block)
    for replace in (False, True):
        is_error, _, text = await check(
            session, "vault_update_properties", {"path": "Broken.md", "properties": {"a": 1}, "replace": replace}
        )
        assert is_error and text.startswith("invalid_properties:"), text
        assert "line " in text and "column " in text, text
    assert (vault / "Broken.md").read_text() == block


async def test_update_properties_bad_input(session, plan):
    is_error, _, text = await check(session, "vault_update_properties", {"path": NOTE, "properties": ["a"]})
    assert is_error and text.startswith("invalid_argument:"), text
    is_error, _, text = await check(
        session, "vault_update_properties", {"path": NOTE, "properties": {}, "expected_revision": "abc"}
    )
    assert is_error and text.startswith("invalid_argument:"), text
    is_error, _, text = await check(
        session, "vault_update_properties", {"path": "Edit/data.json", "properties": {"a": 1}}
    )
    assert is_error and text.startswith(("unsupported_extension:", "not_found:")), text
    assert plan.read_text() == PLAN


# --- concurrency ----------------------------------------------------------------------------------


async def test_fifty_concurrent_appends_are_each_applied_once(session, plan):
    lines = [f"- entry {n:02d}" for n in range(50)]
    results = await asyncio.gather(
        *(
            check(session, "vault_patch_note", {"path": NOTE, "operation": "append", "heading": "Notes", "content": line})
            for line in lines
        )
    )
    errors = [text for is_error, _, text in results if is_error]
    assert not errors, errors  # without expected_revision the per-file lock serialises them
    after = plan.read_text()
    for line in lines:
        assert after.count(line + "\n") == 1, line
    assert after.startswith(PLAN)
    assert revision(after.encode()) in {sc["revision"] for _, sc, _ in results}


async def test_concurrent_appends_with_one_revision_apply_once_or_conflict(session, plan):
    base = revision(plan.read_bytes())
    lines = [f"- racing {n:02d}" for n in range(50)]
    results = await asyncio.gather(
        *(
            check(
                session,
                "vault_patch_note",
                {"path": NOTE, "operation": "append", "content": line, "expected_revision": base},
            )
            for line in lines
        )
    )
    applied = [line for line, (is_error, _, _) in zip(lines, results) if not is_error]
    refused = [text for is_error, _, text in results if is_error]
    assert len(applied) == 1, applied
    assert all(text.startswith("conflict:") for text in refused), refused
    assert plan.read_text() == PLAN + applied[0] + "\n"
