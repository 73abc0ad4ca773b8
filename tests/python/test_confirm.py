"""Confirmation of destructive calls (issue 49, `[safety]`) through the official SDK: a client
with an elicitation callback is asked before a delete, a whole overwrite or a batch over
`confirm_over` notes, under 2025-11-25 (elicitation/create mid-call) and 2026-07-28 (the
input-required result the SDK's Client answers and retries); a declined question changes
nothing and says so; a client without elicitation gets the call done, unless
`confirm = "required"`, which refuses it."""

from __future__ import annotations

from contextlib import asynccontextmanager
from pathlib import Path

import mcp.types as types
import pytest
from mcp import Client, StdioServerParameters

from conftest import REQUEST_TIMEOUT_S, server_env
from vaultlib import error_code, write_files

pytestmark = pytest.mark.anyio

KEEP_BASE = "views:\n  - type: table\n"
FILES = {f"Books/b{n}.md": f"# Book {n}\n" for n in range(12)} | {"Keep.md": "# Keep\n", "Keep.base": KEEP_BASE}


class Asker:
    """An elicitation callback that answers as told and remembers what it was asked."""

    def __init__(self, answer: str = "accept", confirm: bool = True):
        self.answer, self.confirm, self.asked = answer, confirm, []

    async def __call__(self, context, params):
        self.asked.append(params.message)
        if self.answer == "accept":
            return types.ElicitResult(action="accept", content={"confirm": self.confirm})
        return types.ElicitResult(action=self.answer)


@pytest.fixture
def books(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    write_files(root, FILES)
    return root


@pytest.fixture(params=["2025-11-25", "2026-07-28"])
def revision(request) -> str:
    return request.param


@pytest.fixture
def connect(quire_bin, xdg_home, tmp_path, revision, open_session):
    """`async with connect(vault, asker)` over stdio in the revision under test."""

    @asynccontextmanager
    async def open_(vault: Path, asker=None, extra_args=()):
        if revision == "2025-11-25":
            kwargs = {"elicitation_callback": asker} if asker else {}
            async with open_session(vault, extra_args, **kwargs) as session:
                yield session
            return
        params = StdioServerParameters(
            command=str(quire_bin), args=["serve", "--vault", str(vault), *extra_args],
            env=server_env(xdg_home), cwd=str(tmp_path),
        )
        kwargs = {"elicitation_callback": asker} if asker else {}
        async with Client(params, read_timeout_seconds=REQUEST_TIMEOUT_S, **kwargs) as client:
            assert client.session.protocol_version == "2026-07-28"
            yield client

    return open_


@pytest.fixture
def transport() -> str:
    # These tests pick the revision themselves, over stdio.
    return "stdio"


async def call(session, tool: str, args: dict):
    res = await session.call_tool(tool, args)
    text = res.content[0].text if res.content else ""
    return bool(res.is_error), res.structured_content, text


async def test_a_delete_asks_and_a_yes_goes_ahead(connect, books):
    asker = Asker()
    async with connect(books, asker) as session:
        is_error, sc, text = await call(session, "vault_delete_note", {"path": "Keep.md"})
        assert not is_error, text
    assert asker.asked and "Keep.md" in asker.asked[0]
    assert not (books / "Keep.md").exists()


@pytest.mark.parametrize("answer,confirm", [("decline", False), ("cancel", False), ("accept", False)])
async def test_a_declined_question_changes_nothing_and_says_so(connect, books, answer, confirm):
    asker = Asker(answer, confirm)
    async with connect(books, asker) as session:
        is_error, _, text = await call(session, "vault_delete_note", {"path": "Keep.md"})
        assert is_error and error_code(text) == "declined" and "nothing was changed" in text, text
        is_error, _, text = await call(session, "vault_write_note", {
            "path": "Keep.md", "body": "gone\n", "overwrite": True,
            "expected_revision": __import__("hashlib").sha256(b"# Keep\n").hexdigest(),
        })
        assert is_error and error_code(text) == "declined", text
        is_error, _, text = await call(session, "vault_write_base", {
            "path": "Keep.base", "base": "views:\n  - type: cards\n",
            "expected_revision": __import__("hashlib").sha256(KEEP_BASE.encode()).hexdigest(),
        })
        assert is_error and error_code(text) == "declined", text
    assert (books / "Keep.md").read_text() == "# Keep\n"
    assert (books / "Keep.base").read_text() == KEEP_BASE


async def test_a_batch_asks_only_over_confirm_over_notes(connect, books):
    asker = Asker()
    async with connect(books, asker) as session:
        few = ["Books/b0.md", "Books/b1.md"]
        is_error, sc, text = await call(session, "vault_set_property", {"name": "a", "value": 1, "paths": few})
        assert not is_error and sc["total_notes"] == 2, text
        assert asker.asked == [], "two notes are under the default confirm_over of 10"
        is_error, sc, text = await call(session, "vault_set_property", {
            "name": "b", "value": 1, "filter": {"folder": "Books"},
        })
        assert not is_error and sc["total_notes"] == 12, text
        assert len(asker.asked) == 1 and "in 12 notes" in asker.asked[0], asker.asked
        # A dry run never asks.
        await call(session, "vault_set_property", {"name": "c", "value": 1, "filter": {"folder": "Books"}, "dry_run": True})
        assert len(asker.asked) == 1


async def test_a_client_that_cannot_ask_is_refused_only_when_required(connect, books, tmp_path):
    async with connect(books) as session:
        is_error, _, text = await call(session, "vault_delete_note", {"path": "Books/b0.md"})
        assert not is_error, text
    config = tmp_path / "quire.toml"
    config.write_text('[safety]\nconfirm = "required"\n')
    async with connect(books, None, ("--config", str(config))) as session:
        is_error, _, text = await call(session, "vault_delete_note", {"path": "Books/b1.md"})
        assert is_error and error_code(text) == "confirmation_required" and "dry_run" in text, text
    assert (books / "Books/b1.md").exists()


async def test_r63_a_2026_confirmation_is_good_for_one_answer(connect, books, revision):
    """Issue 63, F10: the sealed state of a 2026-07-28 question answers once; a replay of the
    same answered call (as a log, a proxy or another client of the identity could send) is
    refused and changes nothing."""
    if revision != "2026-07-28":
        pytest.skip("request states exist only under 2026-07-28")
    async with connect(books, Asker()) as client:
        args = {"name": "shelf", "value": "fiction", "filter": {"folder": "Books"}}
        asked = await client.session.call_tool("vault_set_property", args, allow_input_required=True)
        assert isinstance(asked, types.InputRequiredResult) and asked.request_state, asked
        yes = {"confirm": types.ElicitResult(action="accept", content={"confirm": True})}
        done = await client.session.call_tool(
            "vault_set_property", args, input_responses=yes,
            request_state=asked.request_state, allow_input_required=True,
        )
        assert isinstance(done, types.CallToolResult) and not done.is_error, done
        # Back as they were, so the replayed call would need the question again.
        write_files(books, {k: v for k, v in FILES.items() if k.startswith("Books/")})
        again = await client.session.call_tool(
            "vault_set_property", args, input_responses=yes,
            request_state=asked.request_state, allow_input_required=True,
        )
        assert isinstance(again, types.CallToolResult) and again.is_error, again
        text = again.content[0].text
        assert error_code(text) == "invalid_argument" and "used already" in text, text
    assert all((books / f"Books/b{n}.md").read_text() == f"# Book {n}\n" for n in range(12))


async def write(session, path: str, body: str) -> str:
    is_error, sc, text = await call(session, "vault_write_note", {"path": path, "body": body})
    assert not is_error, text
    return sc["change_id"]


async def test_r63_a_restore_and_an_undo_that_removes_ask_like_a_delete(connect, books):
    """Issue 63 (F8): restoring a version over a note replaces it whole, and undoing a create
    deletes a note; both ask as an overwrite and a delete do, and a no changes nothing."""
    asker = Asker("decline")
    async with connect(books, asker) as session:
        created = await write(session, "Fresh.md", "fresh\n")
        await write(session, "Twice.md", "one\n")
        is_error, _, text = await call(session, "vault_replace_in_note", {
            "path": "Twice.md", "old_text": "one", "new_text": "two",
        })
        assert not is_error, text
        assert asker.asked == [], "creating and editing ask nothing"
        is_error, sc, text = await call(session, "vault_note_history", {"path": "Twice.md"})
        assert not is_error, text
        first = sc["versions"][-1]["version_id"]
        is_error, _, text = await call(session, "vault_restore_version", {"path": "Twice.md", "version_id": first})
        assert is_error and error_code(text) == "declined", text
        assert "Twice.md" in asker.asked[-1] and f"version {first}" in asker.asked[-1], asker.asked
        is_error, _, text = await call(session, "vault_undo", {"change_id": created})
        assert is_error and error_code(text) == "declined", text
        assert "deleting 1 note" in asker.asked[-1] and "'Fresh.md'" in asker.asked[-1], asker.asked
        # A dry run of the undo still only shows the plan.
        is_error, _, text = await call(session, "vault_undo", {"change_id": created, "dry_run": True})
        assert not is_error and len(asker.asked) == 2, text
    assert (books / "Fresh.md").read_text() == "fresh\n"
    assert (books / "Twice.md").read_text() == "two\n"


async def test_r63_required_confirmation_refuses_a_restore_and_an_undo_that_removes(connect, books, tmp_path):
    """Issue 63 (F8): with `confirm = "required"` a client that cannot ask is refused them."""
    config = tmp_path / "quire.toml"
    config.write_text('[safety]\nconfirm = "required"\n')
    async with connect(books, None, ("--config", str(config))) as session:
        created = await write(session, "Fresh.md", "fresh\n")
        is_error, _, text = await call(session, "vault_undo", {"change_id": created})
        assert is_error and error_code(text) == "confirmation_required", text
        is_error, sc, text = await call(session, "vault_note_history", {"path": "Fresh.md"})
        assert not is_error, text
        version = sc["versions"][0]["version_id"]
        is_error, _, text = await call(session, "vault_restore_version", {"path": "Fresh.md", "version_id": version})
        assert is_error and error_code(text) == "confirmation_required", text
    assert (books / "Fresh.md").read_text() == "fresh\n"


async def test_r63_the_set_property_question_names_the_value_and_a_removal(connect, books):
    """Issue 63 (F16): the question says which value is set (cut when long), or that `null`
    removes the property."""
    write_files(books, {f"Books/b{n}.md": f"---\nshelf: old\n---\n# Book {n}\n" for n in range(12)})
    asker = Asker("decline")
    async with connect(books, asker) as session:
        folder = {"filter": {"folder": "Books"}}
        for value in ("fiction", None, "x" * 5000):
            is_error, _, text = await call(session, "vault_set_property", {"name": "shelf", "value": value, **folder})
            assert is_error and error_code(text) == "declined", text
    set_to, removal, long = asker.asked
    assert 'Set the property "shelf" to "fiction" in 12 notes' in set_to, set_to
    assert 'Remove the property "shelf" from 12 notes' in removal, removal
    assert "(4802 more characters)" in long and len(long) < 400, long
