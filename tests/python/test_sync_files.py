"""Quire's side of sync safety (docs/SYNC.md), against the real binary over HTTP: it serves only
after the first sync has completed, every write waits while the sync holds the shared lock,
sync conflict copies are not notes, and the sync status reaches `quire doctor` (with paths) and
`/healthz` (counts only, since it needs no token)."""

from __future__ import annotations

import fcntl
import json
import subprocess
import threading
import time
from pathlib import Path

import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

from conftest import REQUEST_TIMEOUT_S, HttpServer, server_env

pytestmark = pytest.mark.anyio


@pytest.fixture
def sync_dir(tmp_path: Path) -> Path:
    d = tmp_path / "sync-state"
    d.mkdir()
    return d


def write_config(tmp_path: Path, vault: Path, sync_dir: Path) -> Path:
    config = tmp_path / "quire.toml"
    config.write_text(
        f'[vault]\npath = "{vault}"\n\n[sync]\nlock_file = "{sync_dir / "write.lock"}"\n'
        f'first_sync_marker = "{sync_dir / "first-sync-done"}"\nstatus_file = "{sync_dir / "status.json"}"\n'
    )
    return config


async def call(server: HttpServer, tool: str, arguments: dict):
    async with create_mcp_http_client(headers={"Authorization": f"Bearer {server.token}"}) as http:
        async with streamable_http_client(server.url, http_client=http) as streams:
            async with ClientSession(streams[0], streams[1], read_timeout_seconds=REQUEST_TIMEOUT_S) as session:
                await session.initialize()
                return await session.call_tool(tool, arguments)


def test_quire_serves_only_after_the_first_sync(quire_bin, vault, xdg_home, tmp_path, sync_dir):
    config = write_config(tmp_path, vault, sync_dir)
    marker = sync_dir / "first-sync-done"
    marked_at: list[float] = []

    def finish_first_sync():
        time.sleep(2.0)
        marked_at.append(time.monotonic())
        marker.write_text("2026-11-30T10:00:00Z\n")

    threading.Thread(target=finish_first_sync, daemon=True).start()
    server = HttpServer(quire_bin, vault, server_env(xdg_home), tmp_path / "http.log", ["--config", str(config)])
    try:
        served_at = time.monotonic()
        assert marked_at and served_at >= marked_at[0], "Quire listened before the first sync completed"
        assert "waiting for the vault's first sync" in (tmp_path / "http.log").read_text()
    finally:
        server.stop()


async def test_writes_wait_while_the_sync_holds_the_lock(quire_bin, vault, xdg_home, tmp_path, sync_dir):
    config = write_config(tmp_path, vault, sync_dir)
    (sync_dir / "first-sync-done").write_text("done\n")
    server = HttpServer(quire_bin, vault, server_env(xdg_home), tmp_path / "http.log", ["--config", str(config)])
    try:
        lock = open(sync_dir / "write.lock", "a+")
        fcntl.flock(lock, fcntl.LOCK_EX)  # the sync is snapshotting the tree
        released: list[bool] = []

        def release_later():
            time.sleep(1.5)
            assert not (vault / "Inbox" / "During sync.md").exists(), "a write went ahead during the sync"
            released.append(True)
            fcntl.flock(lock, fcntl.LOCK_UN)

        threading.Thread(target=release_later, daemon=True).start()
        result = await call(server, "vault_write_note", {"path": "Inbox/During sync.md", "body": "hello\n"})
        assert not result.is_error, result.content
        assert released == [True], "the write returned before the sync let go of the lock"
        assert (vault / "Inbox" / "During sync.md").read_text() == "hello\n"
        # The write is over, so the sync may take the lock again at once.
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(lock, fcntl.LOCK_UN)
        lock.close()
    finally:
        server.stop()


async def test_conflict_copies_are_not_notes_and_the_status_is_reported(
    quire_bin, vault, xdg_home, tmp_path, sync_dir
):
    config = write_config(tmp_path, vault, sync_dir)
    (sync_dir / "first-sync-done").write_text("done\n")
    (vault / "Plan.md").write_text("# Plan\n\nzebrafinch remote version\n")
    (vault / "Plan (conflict laptop 2026-11-30 1000).md").write_text("# Plan\n\nzebrafinch local version\n")
    (vault / "Plan.sync-conflict-20261130-100000-ABCDEFG.md").write_text("zebrafinch syncthing copy\n")
    (vault / "Plan (Conflicted copy 2026-11-30 100000).md").write_text("zebrafinch obsidian copy\n")
    status = {
        "ok": True,
        "message": "",
        "last_attempt": "2026-11-30T10:00:00Z",
        "last_success": "2026-11-30T10:00:00Z",
        "conflicts": [
            {"path": "Plan.md", "saved_as": "Plan (conflict laptop 2026-11-30 1000).md", "at": "2026-11-30T10:00:00Z"}
        ],
    }
    (sync_dir / "status.json").write_text(json.dumps(status))
    server = HttpServer(quire_bin, vault, server_env(xdg_home), tmp_path / "http.log", ["--config", str(config)])
    try:
        found = await call(server, "vault_search", {"query": "zebrafinch", "mode": "keyword"})
        assert [hit["path"] for hit in found.structured_content["results"]] == ["Plan.md"], found.structured_content
        listed = await call(server, "vault_list_notes", {})
        paths = [note["path"] for note in listed.structured_content["notes"]]
        assert "Plan.md" in paths and not [p for p in paths if "onflict" in p], paths
        async with httpx2.AsyncClient() as http:
            health = (await http.get(server.url.replace("/mcp", "/healthz"))).json()
        assert health["sync"] == {"ok": True, "last_success": "2026-11-30T10:00:00Z", "conflicts": 1}, health
        assert "Plan" not in json.dumps(health), "the unauthenticated health check named a note"
    finally:
        server.stop()
    doctor = subprocess.run(
        [str(quire_bin), "doctor", "--config", str(config)],
        capture_output=True, text=True, env=server_env(xdg_home), timeout=60,
    )
    assert "conflict:      Plan.md (your version was kept as Plan (conflict laptop" in doctor.stdout, doctor.stdout
    assert "first sync:" in doctor.stdout and "(done)" in doctor.stdout, doctor.stdout
