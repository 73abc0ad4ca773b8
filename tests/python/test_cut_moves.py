"""A move killed between its steps is finished at the next start (the move journal).

A build with `--features test-faults` aborts in the middle of `vault_move_note` when
`QUIRE_TEST_FAULT=abort-in-move:STEP` is set: right after the destination is created, or after the
linking files are rewritten and before the source is removed. Restarting the normal binary on the
same vault and state directory must end with exactly one copy of the note, at its new path, and
every link naming it there.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from conftest import REQUEST_TIMEOUT_S, server_env
from vaultlib import write_files

pytestmark = pytest.mark.anyio

FILES = {
    "People/Ana.md": "# Ana\n\nWorks with [[Ben]].\n",
    "People/Ben.md": "# Ben\n",
    "Projects/Plan.md": "Owner: [[Ana]], see [Ana's page](../People/Ana.md).\n",
    "Daily/2026-01-02.md": "Met [[Ana|A.]] today.\n",
}


async def run_session(binary: Path, vault: Path, env: dict, log: Path, calls):
    params = StdioServerParameters(command=str(binary), args=["serve", "--vault", str(vault)], env=env)
    with open(log, "a") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=REQUEST_TIMEOUT_S) as session:
                await session.initialize()
                return await calls(session)


@pytest.mark.parametrize("step", ["destination", "links"])
async def test_a_move_cut_short_is_finished_at_the_next_start(faults_bin, quire_bin, tmp_path, xdg_home, step):
    vault = tmp_path / "vault"
    vault.mkdir()
    write_files(vault, FILES)
    log = tmp_path / "quire-stderr.log"
    env = {**server_env(xdg_home), "QUIRE_TEST_FAULT": f"abort-in-move:{step}"}

    async def move(session):
        try:
            await session.call_tool("vault_move_note", {"old_path": "People/Ana.md", "new_path": "Team/Ana Lima.md"})
        except Exception as error:  # the server died mid-call: the connection closes
            return error
        return None

    await run_session(faults_bin, vault, env, log, move)
    if "test fault: aborting in the middle of a move" not in log.read_text(errors="replace"):
        pytest.skip(f"{faults_bin} predates the abort-in-move fault; rebuild it with --features test-faults")
    # Killed mid-move: both copies are on disk.
    assert (vault / "People/Ana.md").exists() and (vault / "Team/Ana Lima.md").exists()
    journals = list((xdg_home / "state").rglob("moves/move-*.json"))
    assert len(journals) == 1, journals

    async def read_back(session):
        result = await session.call_tool("vault_list_notes", {})
        return result.structured_content

    listed = await run_session(quire_bin, vault, server_env(xdg_home), log, read_back)
    paths = [note["path"] for note in listed["notes"]]
    assert "People/Ana.md" not in paths and "Team/Ana Lima.md" in paths, paths
    assert not (vault / "People/Ana.md").exists()
    assert (vault / "Team/Ana Lima.md").read_text() == FILES["People/Ana.md"]
    plan = (vault / "Projects/Plan.md").read_text()
    assert "[[Ana Lima]]" in plan and "(../Team/Ana%20Lima.md)" in plan, plan
    assert "[[Ana Lima|A.]]" in (vault / "Daily/2026-01-02.md").read_text()
    assert not list((xdg_home / "state").rglob("moves/move-*.json"))
    assert "finished a move cut short" in log.read_text(errors="replace")


async def test_a_cut_move_whose_source_was_edited_meanwhile_keeps_both(faults_bin, quire_bin, tmp_path, xdg_home):
    vault = tmp_path / "vault"
    vault.mkdir()
    write_files(vault, FILES)
    log = tmp_path / "quire-stderr.log"
    env = {**server_env(xdg_home), "QUIRE_TEST_FAULT": "abort-in-move:links"}

    async def move(session):
        try:
            await session.call_tool("vault_move_note", {"old_path": "People/Ana.md", "new_path": "Team/Ana.md"})
        except Exception:
            pass

    await run_session(faults_bin, vault, env, log, move)
    if "test fault: aborting in the middle of a move" not in log.read_text(errors="replace"):
        pytest.skip(f"{faults_bin} predates the abort-in-move fault; rebuild it with --features test-faults")
    # The user edits the old copy before Quire comes back: that edit must not be removed.
    (vault / "People/Ana.md").write_text("# Ana\n\nEdited while Quire was down.\n")

    async def nothing(session):
        return None

    await run_session(quire_bin, vault, server_env(xdg_home), log, nothing)
    assert (vault / "People/Ana.md").read_text() == "# Ana\n\nEdited while Quire was down.\n"
    assert (vault / "Team/Ana.md").exists()
    assert "both copies are kept" in log.read_text(errors="replace")
    assert not list((xdg_home / "state").rglob("moves/move-*.json"))
