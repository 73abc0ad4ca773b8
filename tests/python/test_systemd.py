"""systemd integration without systemd: socket activation (through `systemd-socket-activate` and
through a harness that hands the server fd 3), and the sd-notify protocol read from a datagram
socket on NOTIFY_SOCKET: READY, STATUS, WATCHDOG pings, STOPPING on SIGTERM."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import server_env


class NotifyListener:
    """The service manager's end of sd_notify: a datagram socket collecting messages."""

    def __init__(self, path: Path):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(str(path))
        self.sock.settimeout(0.1)
        self.messages: list[str] = []

    def collect(self, seconds: float, until=None) -> list[str]:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                data = self.sock.recv(4096).decode()
            except TimeoutError:
                continue
            except socket.timeout:
                continue
            self.messages.extend(line for line in data.split("\n") if line)
            if until and until(self.messages):
                break
        return self.messages

    def close(self):
        self.sock.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def healthz(port: int) -> int:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10) as response:
        return response.status


@pytest.fixture
def notify(tmp_path: Path):
    listener = NotifyListener(tmp_path / "notify.sock")
    yield listener
    listener.close()


def stop(proc: subprocess.Popen) -> int:
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise


@pytest.mark.skipif(shutil.which("systemd-socket-activate") is None, reason="systemd-socket-activate is not installed")
def test_socket_activation_by_name_and_the_notify_protocol(quire_bin, vault, xdg_home, tmp_path, notify):
    port = free_port()
    env = server_env(xdg_home)
    command = [
        "systemd-socket-activate",
        f"--listen=127.0.0.1:{port}",
        "--fdname=http",
        f"-ENOTIFY_SOCKET={notify.path}",
        "-EWATCHDOG_USEC=400000",
        *[f"-E{key}={value}" for key, value in env.items()],
        str(quire_bin),
        "serve",
        "--vault",
        str(vault),
    ]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=open(tmp_path / "err.log", "w"))
    try:
        time.sleep(0.5)
        assert notify.collect(0.3) == [], "nothing runs until the first connection"
        assert healthz(port) == 200, "the first request is answered on the inherited socket"
        messages = notify.collect(5, until=lambda m: m.count("WATCHDOG=1") >= 3)
        assert "READY=1" in messages
        assert any(m.startswith("STATUS=serving MCP") for m in messages), messages
        assert messages.index("READY=1") < messages.index("WATCHDOG=1")
        assert messages.count("WATCHDOG=1") >= 3, "pings every half watchdog interval"
        assert stop(proc) == 0
        assert "STOPPING=1" in notify.collect(1, until=lambda m: "STOPPING=1" in m)
    finally:
        if proc.poll() is None:
            proc.kill()
    log = (tmp_path / "err.log").read_text()
    assert "using the socket systemd passed" in log, log


def test_an_unnamed_socket_on_fd_3_is_used(quire_bin, vault, xdg_home, tmp_path, notify):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    port = listener.getsockname()[1]
    env = {**server_env(xdg_home), "LISTEN_FDS": "1", "NOTIFY_SOCKET": str(notify.path)}

    def hand_over_fd_3():
        os.dup2(listener.fileno(), 3)
        os.set_inheritable(3, True)

    # LISTEN_PID must name the server process itself, which only a shell exec can arrange.
    proc = subprocess.Popen(
        ["sh", "-c", 'LISTEN_PID=$$ exec "$0" "$@"', str(quire_bin), "serve", "--vault", str(vault)],
        env=env,
        preexec_fn=hand_over_fd_3,
        close_fds=False,  # close_fds would run after preexec_fn and close fd 3 again
        stdout=subprocess.DEVNULL,
        stderr=open(tmp_path / "err.log", "w"),
    )
    listener.close()
    try:
        assert "READY=1" in notify.collect(15, until=lambda m: "READY=1" in m)
        assert healthz(port) == 200
        assert stop(proc) == 0
    finally:
        if proc.poll() is None:
            proc.kill()


def test_a_stop_right_after_ready_is_a_clean_shutdown(quire_bin, vault, xdg_home, tmp_path):
    """SIGTERM the moment READY=1 arrives (a quick `systemctl restart`): the handler must already
    be in place, so the server drains and exits 0 instead of dying of the signal."""
    for attempt in range(8):
        listener = NotifyListener(tmp_path / f"notify-{attempt}.sock")
        env = {**server_env(xdg_home), "NOTIFY_SOCKET": str(listener.path)}
        proc = subprocess.Popen(
            [str(quire_bin), "serve", "--vault", str(vault), "--http", "127.0.0.1:0"],
            env=env, stdout=subprocess.DEVNULL, stderr=open(tmp_path / "err.log", "w"),
        )
        try:
            assert "READY=1" in listener.collect(15, until=lambda m: "READY=1" in m)
            assert stop(proc) == 0, f"attempt {attempt}: the server died of the signal"
        finally:
            if proc.poll() is None:
                proc.kill()
            listener.close()


@pytest.fixture
def faults_bin() -> Path:
    path = os.environ.get("QUIRE_FAULTS_BIN")
    if not path or not Path(path).is_file():
        pytest.skip("QUIRE_FAULTS_BIN (a build with --features test-faults) is not set; tests/run builds it")
    return Path(path)


@pytest.mark.anyio
async def test_a_hung_index_writer_stops_the_watchdog(faults_bin, vault, xdg_home, tmp_path, notify):
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = {
        **server_env(xdg_home),
        "NOTIFY_SOCKET": str(notify.path),
        "WATCHDOG_USEC": "400000",
        "QUIRE_TEST_FAULT": "hang-writer",
    }
    params = StdioServerParameters(command=str(faults_bin), args=["serve", "--vault", str(vault)], env=env)
    with open(tmp_path / "err.log", "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                await anyio.to_thread.run_sync(lambda: notify.collect(3, until=lambda m: m.count("WATCHDOG=1") >= 3))
                assert notify.messages.count("WATCHDOG=1") >= 3, notify.messages
                # The write reaches the index writer, which the fault switch freezes. The call
                # itself never returns; wait (under any load) until the writer reports the hang,
                # then one watchdog interval more, before listening for pings that must not come.
                err_log = tmp_path / "err.log"
                with anyio.move_on_after(15):
                    async with anyio.create_task_group() as group:
                        group.start_soon(session.call_tool, "vault_write_note", {"path": "Inbox/hang.md", "body": "x\n"})
                        while "the index writer hangs now" not in err_log.read_text():
                            await anyio.sleep(0.1)
                        group.cancel_scope.cancel()
                assert "the index writer hangs now" in err_log.read_text()
                await anyio.sleep(1.0)
                # Drain pings the socket buffered while we waited, then listen afresh.
                await anyio.to_thread.run_sync(lambda: notify.collect(0.3))
                notify.messages.clear()
                await anyio.to_thread.run_sync(lambda: notify.collect(2))
                assert "WATCHDOG=1" not in notify.messages, "pings continued with a hung writer"
    assert "withholding the watchdog ping" in (tmp_path / "err.log").read_text()
