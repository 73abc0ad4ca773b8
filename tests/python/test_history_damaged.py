"""A damaged history.db (issue 63, F14): `quire serve` still starts and serves reads, every
change answers `history_unavailable` naming the way out, and nothing is written; moving the file
aside, as the answer says, gives a new history at the next start."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import server_env
from test_shared_owner import RawStdio
from vaultlib import error_code

pytestmark = pytest.mark.anyio


async def test_a_damaged_history_serves_reads_and_refuses_changes_naming_the_recovery(
    quire_bin, vault, xdg_home, tmp_path
):
    env = server_env(xdg_home)
    first = RawStdio(quire_bin, vault, env, tmp_path / "first.log")
    first.initialize()
    is_error, _, text = first.call("vault_write_note", {"path": "Inbox/kept.md", "body": "kept\n"})
    assert not is_error, text
    assert first.close() == 0
    [history] = list((xdg_home / "state" / "quire").glob("*/history.db"))
    for leftover in history.parent.glob("history.db-*"):
        leftover.unlink()
    history.write_bytes(b"this is not a SQLite database" * 100)

    damaged = RawStdio(quire_bin, vault, env, tmp_path / "damaged.log")
    damaged.initialize()
    try:
        is_error, note, text = damaged.call("vault_read_note", {"path": "Inbox/kept.md"})
        assert not is_error, text
        before = sorted(p.relative_to(vault) for p in vault.rglob("*"))
        is_error, _, text = damaged.call("vault_write_note", {"path": "Inbox/new.md", "body": "x\n"})
        assert is_error and error_code(text) == "history_unavailable", text
        assert "move the file aside" in text, text
        assert sorted(p.relative_to(vault) for p in vault.rglob("*")) == before
    finally:
        assert damaged.close() == 0
    assert "move the file aside" in (tmp_path / "damaged.log").read_text()

    history.rename(history.with_name("history.db.damaged"))
    fresh = RawStdio(quire_bin, vault, env, tmp_path / "fresh.log")
    fresh.initialize()
    try:
        is_error, _, text = fresh.call("vault_write_note", {"path": "Inbox/new.md", "body": "x\n"})
        assert not is_error, text
    finally:
        fresh.close()
