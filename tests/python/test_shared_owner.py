"""Several `quire serve` on one vault (issue 63, F3): one process owns the vault's state, the
others relay their client to it, and the next takes over when the owner exits. An HTTP server runs
a 1,500-note batch and a move of a note 1,500 notes link to while a dozen stdio servers start one
after another, as desktop clients start them; every batch stays all or nothing, the move's versions
stay complete and undoable, every acknowledged write stays in history, and the stdio processes
open no index or history of their own."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import time
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

from conftest import REQUEST_TIMEOUT_S, HttpServer, server_env
from vaultlib import error_code

pytestmark = pytest.mark.anyio

NOTES = 1500


class RawStdio:
    """`quire serve` over stdio driven by hand, so the test knows its process id."""

    def __init__(self, quire_bin: Path, vault: Path, env: dict, log_path: Path):
        self.log = open(log_path, "a")
        self.proc = subprocess.Popen(
            [str(quire_bin), "serve", "--vault", str(vault)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            env=env,
        )
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(
            target=lambda: [self.lines.put(line) for line in self.proc.stdout], daemon=True
        ).start()
        self.next_id = 0

    def request(self, method: str, params: dict, timeout: float = REQUEST_TIMEOUT_S) -> dict:
        self.next_id += 1
        wanted = self.next_id
        self.send({"jsonrpc": "2.0", "id": wanted, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                message = json.loads(self.lines.get(timeout=0.5))
            except queue.Empty:
                assert self.proc.poll() is None, f"quire exited ({self.proc.returncode})"
                continue
            if message.get("id") == wanted and "method" not in message:
                return message
        raise AssertionError(f"no answer to {method} within {timeout} s")

    def send(self, message: dict) -> None:
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def initialize(self) -> dict:
        answer = self.request(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        )
        assert "result" in answer, answer
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer["result"]

    def call(self, tool: str, args: dict) -> tuple[bool, dict | None, str]:
        answer = self.request("tools/call", {"name": tool, "arguments": args})
        assert "result" in answer, answer
        result = answer["result"]
        text = result["content"][0]["text"] if result.get("content") else ""
        return bool(result.get("isError")), result.get("structuredContent"), text

    def open_state_files(self) -> list[str]:
        names = []
        for fd in Path(f"/proc/{self.proc.pid}/fd").iterdir():
            try:
                names.append(os.readlink(fd))
            except OSError:
                pass
        return [n for n in names if n.endswith((".db", ".db-wal"))]

    def close(self) -> int:
        self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=30)
        finally:
            self.log.close()


@pytest.fixture
def hub_vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / "Notes").mkdir(parents=True)
    (root / "Hub.md").write_text("# Hub\n")
    for i in range(NOTES):
        (root / "Notes" / f"n{i:04}.md").write_text(f"# Note {i}\n\nalpha text, see [[Hub]].\n")
    return root


def note_texts(root: Path) -> list[str]:
    return [(root / "Notes" / f"n{i:04}.md").read_text() for i in range(NOTES)]


async def test_stdio_servers_started_beside_an_http_owner_change_nothing_it_does(
    quire_bin, hub_vault, xdg_home, tmp_path
):
    env = server_env(xdg_home)
    owner_log = tmp_path / "owner.log"
    server = HttpServer(quire_bin, hub_vault, env, owner_log)
    attached: list[RawStdio] = []
    try:
        headers = {"Authorization": f"Bearer {server.token}"}
        async with create_mcp_http_client(headers=headers) as http:
            async with streamable_http_client(server.url, http_client=http) as streams:
                async with ClientSession(
                    streams[0], streams[1], read_timeout_seconds=REQUEST_TIMEOUT_S
                ) as session:
                    await session.initialize()

                    def start_stdio_servers(count: int) -> None:
                        for _ in range(count):
                            time.sleep(0.2)
                            stdio = RawStdio(quire_bin, hub_vault, env, tmp_path / "stdio.log")
                            stdio.initialize()
                            is_error, listed, text = stdio.call(
                                "vault_list_notes", {"folder": "Notes", "limit": 5}
                            )
                            assert not is_error, text
                            assert len(listed["notes"]) == 5, listed
                            # The owner's index answers: this process opened none of its own.
                            assert stdio.open_state_files() == [], stdio.open_state_files()
                            attached.append(stdio)

                    async def call(tool: str, args: dict):
                        res = await session.call_tool(tool, args)
                        text = res.content[0].text if res.content else ""
                        return bool(res.is_error), res.structured_content, text

                    # Phase 1: a batch over every note, and single writes, while six stdio
                    # servers start.
                    acknowledged = []
                    async with anyio.create_task_group() as group:
                        group.start_soon(anyio.to_thread.run_sync, start_stdio_servers, 6)
                        batch = await call(
                            "vault_replace_across",
                            {"old_text": "alpha", "new_text": "omega", "filter": {"folder": "Notes"}},
                        )
                        for i in range(5):
                            is_error, written, text = await call(
                                "vault_write_note",
                                {"path": f"Inbox/w{i}.md", "body": f"write {i}\n"},
                            )
                            assert not is_error, text
                            acknowledged.append(written["change_id"])
                    texts = note_texts(hub_vault)
                    changed = sum("omega" in t for t in texts)
                    is_error, answer, text = batch
                    if is_error:
                        assert changed == 0, f"the batch answered {text} but {changed} notes changed"
                    else:
                        assert changed == NOTES and answer["total_notes"] == NOTES, answer
                        acknowledged.append(answer["change_id"])

                    # Every acknowledged change is in the history, whole, and undoes.
                    for change_id in acknowledged:
                        is_error, plan, text = await call(
                            "vault_undo", {"change_id": change_id, "dry_run": True}
                        )
                        assert not is_error, f"{change_id}: {text[:600]}"

                    # Phase 2: a move of the note every other note links to, while six more start.
                    async with anyio.create_task_group() as group:
                        group.start_soon(anyio.to_thread.run_sync, start_stdio_servers, 6)
                        is_error, moved, text = await call(
                            "vault_move_note", {"old_path": "Hub.md", "new_path": "Moved/Centre.md"}
                        )
                        assert not is_error, text
                    assert all("[[Centre]]" in t or "[[Moved/Centre]]" in t for t in note_texts(hub_vault))

                    # The move's versions are complete: its undo puts every link back.
                    is_error, undone, text = await call("vault_undo", {"change_id": moved["change_id"]})
                    assert not is_error, text
                    assert (hub_vault / "Hub.md").exists()
                    assert all("[[Hub]]" in t for t in note_texts(hub_vault)), "a link stayed broken"
        assert len(attached) == 12
    finally:
        for stdio in attached:
            assert stdio.close() == 0
        server.stop()
    log = owner_log.read_text()
    assert log.count("a quire serve attached to this one") == 12, log[-4000:]
    assert "settled" not in (tmp_path / "stdio.log").read_text()


async def test_an_attached_client_keeps_its_session_when_the_owner_dies(
    quire_bin, hub_vault, xdg_home, tmp_path
):
    env = server_env(xdg_home)
    first = RawStdio(quire_bin, hub_vault, env, tmp_path / "first.log")
    first.initialize()
    second = RawStdio(quire_bin, hub_vault, env, tmp_path / "second.log")
    second.initialize()
    third = None
    try:
        is_error, written, text = second.call(
            "vault_write_note", {"path": "Inbox/by-second.md", "body": "one\n"}
        )
        assert not is_error, text
        assert second.open_state_files() == []
        # The owner's own client leaves: it keeps serving the attached one.
        first.proc.stdin.close()
        time.sleep(0.5)
        assert first.proc.poll() is None, "the owner left an attached client without a server"
        is_error, _, text = second.call("vault_read_note", {"path": "Inbox/by-second.md"})
        assert not is_error, text
        # The owner dies: the attached one takes over in the same session, history intact.
        first.proc.kill()
        first.proc.wait(timeout=10)
        is_error, plan, text = second.call(
            "vault_undo", {"change_id": written["change_id"], "dry_run": True}
        )
        assert not is_error, text
        assert any(name.endswith("index.db") for name in second.open_state_files())
        # A new one attaches to the new owner.
        third = RawStdio(quire_bin, hub_vault, env, tmp_path / "third.log")
        third.initialize()
        is_error, _, text = third.call("vault_read_note", {"path": "Inbox/by-second.md"})
        assert not is_error, text
        assert third.open_state_files() == []
    finally:
        for process in (third, second):
            if process is not None:
                process.close()
        if first.proc.poll() is None:
            first.proc.kill()
        first.log.close()
    assert "owns the vault's state now" in (tmp_path / "second.log").read_text()


async def test_the_history_cli_refuses_to_write_beside_a_running_owner(
    quire_bin, hub_vault, xdg_home, tmp_path
):
    env = server_env(xdg_home)
    owner = RawStdio(quire_bin, hub_vault, env, tmp_path / "owner.log")
    owner.initialize()
    try:
        is_error, written, text = owner.call(
            "vault_write_note", {"path": "Inbox/x.md", "body": "x\n"}
        )
        assert not is_error, text
        undo = subprocess.run(
            [str(quire_bin), "undo", written["change_id"], "--vault", str(hub_vault)],
            capture_output=True, text=True, env=env, timeout=60,
        )
        assert undo.returncode != 0 and "owns" in undo.stderr, undo
        assert (hub_vault / "Inbox/x.md").exists()
        # Reading beside it works as before.
        changes = subprocess.run(
            [str(quire_bin), "changes", "--vault", str(hub_vault)],
            capture_output=True, text=True, env=env, timeout=60,
        )
        assert changes.returncode == 0 and written["change_id"] in changes.stdout, changes
    finally:
        owner.close()
