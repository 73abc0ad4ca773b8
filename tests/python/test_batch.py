"""The batch tools (issue 49) through the official SDK: one call edits many notes as one change,
all or nothing; `dry_run` changes nothing; a note the edit cannot apply to refuses the whole
batch; the batch undoes as one change; a kill in the middle of a batch is completed at the next
start from the history, and its undo then restores every note."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from conftest import REQUEST_TIMEOUT_S, server_env
from vaultlib import error_code, write_files

pytestmark = pytest.mark.anyio

FILES = {
    "Books/a.md": "---\nstatus: reading # keep this comment\nrating: 4\n---\n# A\n",
    "Books/b.md": "---\nrating: 5\n---\n# B\n",
    "Books/c.md": "# C without properties\n",
    "Other/d.md": "---\nstatus: done\n---\n# D\n",
}


async def call(session, tool: str, args: dict):
    res = await session.call_tool(tool, args)
    text = res.content[0].text if res.content else ""
    return bool(res.is_error), res.structured_content, text


async def ok(session, tool: str, args: dict) -> dict:
    is_error, sc, text = await call(session, tool, args)
    assert not is_error, f"{tool} {args}: {text}"
    return sc


def files(root: Path) -> dict[str, str]:
    return {name: (root / name).read_text() for name in FILES}


@pytest.fixture
def books(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    write_files(root, FILES)
    return root


async def test_set_property_on_a_folder_is_one_change_that_undoes_whole(open_session, books):
    async with open_session(books) as session:
        start = files(books)
        args = {"name": "shelf", "value": "fiction", "filter": {"folder": "Books"}}
        plan = await ok(session, "vault_set_property", {**args, "dry_run": True})
        assert plan["dry_run"] and plan["total_notes"] == 3 and files(books) == start
        assert [n["path"] for n in plan["notes"]] == ["Books/a.md", "Books/b.md", "Books/c.md"]
        done = await ok(session, "vault_set_property", args)
        assert done["total_notes"] == 3 and done["change_id"].startswith("ch_")
        assert (books / "Books/a.md").read_text() == (
            "---\nstatus: reading # keep this comment\nrating: 4\nshelf: fiction\n---\n# A\n"
        )
        assert (books / "Books/c.md").read_text().startswith("---\nshelf: fiction\n---\n")
        assert (books / "Other/d.md").read_text() == start["Other/d.md"]
        changes = (await ok(session, "vault_list_changes", {"limit": 1}))["changes"]
        assert changes[0]["kind"] == "batch" and len(changes[0]["paths"]) == 3
        await ok(session, "vault_undo", {"change_id": done["change_id"]})
        assert files(books) == start
        # Removing by null, on a list of paths.
        removed = await ok(session, "vault_set_property", {
            "name": "rating", "value": None, "paths": ["Books/a.md", "Books/b.md", "Books/c.md"],
        })
        assert removed["total_notes"] == 2
        assert "rating" not in (books / "Books/b.md").read_text()


async def test_a_note_the_edit_cannot_apply_to_refuses_the_whole_batch(open_session, books):
    (books / "Books/broken.md").write_text("---\nstatus: [unclosed\n---\n# Broken\n")
    async with open_session(books) as session:
        start = files(books)
        plan = await ok(session, "vault_set_property", {
            "name": "shelf", "value": 1, "filter": {"folder": "Books"}, "dry_run": True,
        })
        assert [r["path"] for r in plan["refused"]] == ["Books/broken.md"], plan
        is_error, _, text = await call(session, "vault_set_property", {
            "name": "shelf", "value": 1, "filter": {"folder": "Books"},
        })
        assert is_error and error_code(text) == "invalid_argument" and "Books/broken.md" in text, text
        assert "nothing was changed" in text and files(books) == start
        is_error, _, text = await call(session, "vault_set_property", {"name": "shelf", "value": 1})
        assert is_error and error_code(text) == "invalid_argument" and "paths" in text, text


async def run_session(binary: Path, vault: Path, env: dict, log: Path, calls):
    params = StdioServerParameters(command=str(binary), args=["serve", "--vault", str(vault)], env=env)
    with open(log, "a") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=REQUEST_TIMEOUT_S) as session:
                await session.initialize()
                return await calls(session)


async def test_a_batch_killed_midway_is_completed_at_the_next_start(faults_bin, quire_bin, books, tmp_path, xdg_home):
    log = tmp_path / "quire-stderr.log"
    start = files(books)
    env = {**server_env(xdg_home), "QUIRE_TEST_FAULT": "abort-mid-change"}

    async def batch(session):
        try:
            await session.call_tool("vault_set_property", {"name": "shelf", "value": "x", "filter": {"folder": "Books"}})
        except Exception as error:  # the server died mid-call
            return error
        return None

    await run_session(faults_bin, books, env, log, batch)
    if "test fault: aborting in the middle of a change" not in log.read_text(errors="replace"):
        pytest.skip(f"{faults_bin} predates the abort-mid-change fault; rebuild it with --features test-faults")
    written = [name for name in ("Books/a.md", "Books/b.md", "Books/c.md") if "shelf: x" in (books / name).read_text()]
    assert written == ["Books/a.md"], "killed after the first note"

    async def after_restart(session):
        changes = (await ok(session, "vault_list_changes", {"limit": 5}))["changes"]
        [batch_change] = [c for c in changes if c["kind"] == "batch"]
        for name in ("Books/a.md", "Books/b.md", "Books/c.md"):
            assert "shelf: x" in (books / name).read_text(), f"{name} completed at start"
        await ok(session, "vault_undo", {"change_id": batch_change["change_id"]})

    await run_session(quire_bin, books, server_env(xdg_home), log, after_restart)
    assert files(books) == start
    assert "completed a change a stop cut short" in log.read_text(errors="replace")


TAGGED = {
    "T/a.md": "---\ntags: [project/alpha, other]\n---\nWork on #project/alpha today. `#project/alpha` in code.\n",
    "T/b.md": "---\ntags:\n  - '#Project/Alpha/sub'\n---\nSee [[T/a]] #projectx #project\n",
    "T/c.md": "```\n#project/alpha\n```\nNothing else.\n",
    "T/d.md": "---\nstatus: active\nowner: ana\n---\nstatus: active in the body, `status: active` in code.\n",
    "T/e.md": "---\nState: x\nowner: ben\n---\n# E\n",
}


@pytest.fixture
def tagged(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    write_files(root, TAGGED)
    return root


async def test_rename_tag_renames_nested_tags_where_obsidian_reads_them(open_session, tagged):
    async with open_session(tagged) as session:
        plan = await ok(session, "vault_rename_tag", {"old_tag": "#project/alpha", "new_tag": "work/alpha", "dry_run": True})
        assert [n["path"] for n in plan["notes"]] == ["T/a.md", "T/b.md"], plan
        done = await ok(session, "vault_rename_tag", {"old_tag": "project/alpha", "new_tag": "work/alpha"})
        assert done["total_notes"] == 2
        assert (tagged / "T/a.md").read_text() == (
            "---\ntags: [work/alpha, other]\n---\nWork on #work/alpha today. `#project/alpha` in code.\n"
        )
        assert (tagged / "T/b.md").read_text().startswith("---\ntags:\n  - '#work/alpha/sub'\n---\n")
        assert "#projectx #project\n" in (tagged / "T/b.md").read_text()
        assert (tagged / "T/c.md").read_text() == TAGGED["T/c.md"], "code is not a tag"
        found = await ok(session, "vault_search_by_tag", {"tag": "work/alpha"})
        assert {n["path"] for n in found["notes"]} == {"T/a.md", "T/b.md"}, found
        await ok(session, "vault_undo", {"change_id": done["change_id"]})
        assert {name: (tagged / name).read_text() for name in TAGGED} == TAGGED


async def test_rename_property_keeps_values_and_refuses_a_taken_key(open_session, tagged):
    async with open_session(tagged) as session:
        done = await ok(session, "vault_rename_property", {"old_name": "owner", "new_name": "lead"})
        assert done["total_notes"] == 2
        assert (tagged / "T/d.md").read_text().startswith("---\nstatus: active\nlead: ana\n---\n")
        is_error, _, text = await call(session, "vault_rename_property", {"old_name": "status", "new_name": "State", "paths": ["T/d.md", "T/e.md"]})
        # T/e.md has no `status`, so only T/d.md changes, and nothing is taken there.
        assert not is_error, text
        assert (tagged / "T/d.md").read_text().startswith("---\nState: active\nlead: ana\n---\n")
        # Both notes now have `State`, which Obsidian takes for the same property as `state`.
        before = {name: (tagged / name).read_text() for name in TAGGED}
        is_error, _, text = await call(session, "vault_rename_property", {"old_name": "lead", "new_name": "state"})
        assert is_error and error_code(text) == "invalid_argument", text
        assert "'T/d.md'" in text and "'T/e.md'" in text and "nothing was changed" in text, text
        assert {name: (tagged / name).read_text() for name in TAGGED} == before


async def test_replace_across_leaves_code_and_properties_unless_asked(open_session, tagged):
    async with open_session(tagged) as session:
        done = await ok(session, "vault_replace_across", {"old_text": "status: active", "new_text": "status: paused", "paths": ["T/d.md"]})
        assert done["total_changes"] == 1
        assert (tagged / "T/d.md").read_text() == (
            "---\nstatus: active\nowner: ana\n---\nstatus: paused in the body, `status: active` in code.\n"
        )
        done = await ok(session, "vault_replace_across", {
            "old_text": r"status: (\w+)", "new_text": "status: was-$1", "regex": True,
            "in_code": True, "in_properties": True, "paths": ["T/d.md"],
        })
        assert done["total_changes"] == 3
        assert "status: was-active\nowner" in (tagged / "T/d.md").read_text()
        is_error, _, text = await call(session, "vault_replace_across", {"old_text": "(", "new_text": "x", "regex": True})
        assert is_error and error_code(text) == "invalid_argument" and "regular expression" in text, text


async def test_an_undo_killed_midway_is_completed_at_the_next_start(faults_bin, quire_bin, books, tmp_path, xdg_home):
    log = tmp_path / "quire-stderr.log"
    start = files(books)

    async def batch(session):
        done = await ok(session, "vault_set_property", {"name": "shelf", "value": "x", "filter": {"folder": "Books"}})
        return done["change_id"]

    change = await run_session(quire_bin, books, server_env(xdg_home), log, batch)
    env = {**server_env(xdg_home), "QUIRE_TEST_FAULT": "abort-mid-change"}

    async def undo(session):
        try:
            await session.call_tool("vault_undo", {"change_id": change})
        except Exception as error:  # the server died mid-call
            return error
        return None

    await run_session(faults_bin, books, env, log, undo)
    if "test fault: aborting in the middle of a change" not in log.read_text(errors="replace"):
        pytest.skip(f"{faults_bin} predates the abort-mid-change fault; rebuild it with --features test-faults")
    assert files(books) != start, "killed after the first note of the undo"

    async def after_restart(session):
        changes = (await ok(session, "vault_list_changes", {"limit": 5}))["changes"]
        assert changes[0]["kind"] == "undo" and changes[0]["undoes"] == change, changes
        listed = {c["change_id"]: c for c in changes}
        assert listed[change]["undone_by"] == changes[0]["change_id"]

    await run_session(quire_bin, books, server_env(xdg_home), log, after_restart)
    assert files(books) == start


async def test_r63_a_replacement_past_the_note_limit_is_refused_and_the_server_lives(open_session, tmp_path):
    """Issue 63 (F2): `e` -> 1,000 x `E` on a 4 KB note would be 4 MB, over a 64 KiB
    `max_note_bytes`; the dry run (and so the confirmation) stops at the limit instead of
    building it, answers `too_large` naming the note and the limit, and the server goes on."""
    root = tmp_path / "vault"
    root.mkdir()
    note = "e" * 4000 + "\n"
    write_files(root, {"Inbox/a.md": note, "Inbox/b.md": "# B\n"})
    config = tmp_path / "quire.toml"
    config.write_text("[limits]\nmax_note_bytes = 65536\n")
    async with open_session(root, ("--config", str(config))) as session:
        for args in (
            {"old_text": "e", "new_text": "E" * 1000},
            {"old_text": "x*", "new_text": "E" * 1000, "regex": True},
        ):
            for dry_run in (True, False):
                is_error, _, text = await call(session, "vault_replace_across", {
                    **args, "paths": ["Inbox/a.md"], "dry_run": dry_run,
                })
                assert is_error and error_code(text) == "too_large", text
                assert "'Inbox/a.md'" in text and "65536" in text and "limits.max_note_bytes" in text, text
        # A plan over 16 x the note limit (1 MiB here) is refused as a whole.
        write_files(root, {f"Many/n{n:02}.md": f"# {n}\n" for n in range(40)})
        is_error, _, text = await call(session, "vault_set_property", {
            "name": "blob", "value": "v" * 40_000, "dry_run": True,
            "paths": [f"Many/n{n:02}.md" for n in range(40)],
        })
        assert is_error and error_code(text) == "too_large" and "1048576" in text, text
        # Alive, and an edit under the limit goes ahead.
        done = await ok(session, "vault_replace_across", {"old_text": "B", "new_text": "Bee", "paths": ["Inbox/b.md"]})
        assert done["total_notes"] == 1
    assert (root / "Inbox/a.md").read_text() == note
