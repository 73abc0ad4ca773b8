"""A bare MCP client over `quire serve`'s stdio (newline-delimited JSON-RPC) for the reliability
scripts: start the server on a vault, call tools, sample its memory, stop it.

Stdlib only, so the scripts run with any Python 3.10+; the official SDK is not needed to speak the
2025-11-25 stdio transport, and skipping it keeps the probe cheap enough to poll.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import subprocess
import threading
import time
from pathlib import Path

PROTOCOL = "2025-11-25"


def quire_bin() -> Path:
    path = Path(os.environ.get("QUIRE_BIN") or "target/debug/quire").resolve()
    if not path.is_file():
        raise SystemExit(f"quire binary not found at {path}: run `cargo build` or set QUIRE_BIN")
    return path


def server_env(home: Path) -> dict[str, str]:
    """XDG folders inside the script's temp dir, so nothing leaks into the user's."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "RUST_BACKTRACE": "1",
        "QUIRE_LOG": os.environ.get("QUIRE_LOG", "info"),
    }


class ToolResult:
    def __init__(self, raw: dict):
        self.raw = raw
        self.is_error = bool(raw.get("isError"))
        self.text = "\n".join(
            c.get("text", "") for c in raw.get("content", []) if c.get("type") == "text"
        )
        self.data = raw.get("structuredContent")

    @property
    def code(self) -> str | None:
        """The stable error code a failed tool result starts with (`conflict: ...`)."""
        if not self.is_error:
            return None
        head = self.text.split(":", 1)[0].strip()
        return head if head.replace("_", "").isalpha() else None

    def __repr__(self) -> str:
        return f"ToolResult(is_error={self.is_error}, text={self.text[:300]!r})"


class Server:
    """`quire serve --vault V --index DB` over stdio, initialized and ready for tools/call."""

    def __init__(
        self,
        vault: Path,
        index: Path,
        home: Path,
        log: Path,
        extra=(),
        wrapper=(),
        env: dict | None = None,
    ):
        self.log_path = log
        self.log = open(log, "ab")
        cmd = [*wrapper, str(quire_bin()), "serve", "--vault", str(vault), "--index", str(index), *extra]
        self.proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            env=env or server_env(home),
        )
        self.ids = itertools.count(1)
        self.replies: dict[int, queue.Queue] = {}
        self.lock = threading.Lock()
        self.notifications = 0
        threading.Thread(target=self._read, daemon=True).start()
        self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "quire-reliability", "version": "0"},
            },
            timeout=60,
        )
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _read(self):
        assert self.proc.stdout
        for line in self.proc.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if "id" in message and ("result" in message or "error" in message):
                with self.lock:
                    box = self.replies.get(message["id"])
                if box is not None:
                    box.put(message)
            else:
                self.notifications += 1

    def _send(self, message: dict):
        assert self.proc.stdin
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict, timeout: float = 120) -> dict:
        request_id = next(self.ids)
        box: queue.Queue = queue.Queue()
        with self.lock:
            self.replies[request_id] = box
        self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        try:
            message = box.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(
                f"{method} got no answer within {timeout} s (server alive: {self.alive()}; log {self.log_path})"
            ) from None
        finally:
            with self.lock:
                self.replies.pop(request_id, None)
        if "error" in message:
            raise RuntimeError(f"{method} failed: {message['error']}")
        return message["result"]

    def call(self, tool: str, arguments: dict, timeout: float = 120) -> ToolResult:
        return ToolResult(
            self.request("tools/call", {"name": tool, "arguments": arguments}, timeout=timeout)
        )

    def alive(self) -> bool:
        return self.proc.poll() is None

    def rss_kib(self) -> int | None:
        return rss_kib(self.proc.pid)

    def stop(self, timeout: float = 30) -> int:
        """Closes stdin (the client leaving), which ends `quire serve` over stdio."""
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        return self.proc.returncode


def rss_kib(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


class RssSampler:
    """Samples a process's VmRSS every `period` seconds in a thread; `peak` is the highest seen."""

    def __init__(self, pid: int, period: float = 0.05):
        self.pid, self.period = pid, period
        self.peak = rss_kib(pid) or 0
        self.stop_flag = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop_flag.wait(self.period):
            value = rss_kib(self.pid)
            if value is None:
                return
            self.peak = max(self.peak, value)

    def stop(self) -> int:
        self.stop_flag.set()
        self.thread.join()
        return self.peak


def run(cmd: list[str], home: Path, check: bool = False, timeout: float = 1800) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, env=server_env(home), capture_output=True, text=True, timeout=timeout)
    if check and done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return done


def wait_until(predicate, timeout: float, period: float = 0.1):
    """Polls `predicate` until it returns a truthy value; returns (value, seconds) or (None, timeout)."""
    start = time.monotonic()
    while True:
        value = predicate()
        elapsed = time.monotonic() - start
        if value:
            return value, elapsed
        if elapsed > timeout:
            return None, elapsed
        time.sleep(period)
