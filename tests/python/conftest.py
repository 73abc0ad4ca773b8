"""Fixtures for Quire's end-to-end tests over stdio and Streamable HTTP.

Every test gets a fresh temporary vault (a copy of <repo>/examples/vault when
that exists, with the notes of vaultlib.BASE_FILES written on top) and, through
the `session` fixture, a `quire serve --vault <tmp vault>` process driven by the
official MCP Python SDK. Every session-based test runs twice: over stdio, and over
Streamable HTTP on loopback with the owner bearer token Quire prints at start.
XDG_STATE_HOME / XDG_DATA_HOME (and config/cache) point
into the test's temp dir so a run never touches the developer's real state.

Run:
    QUIRE_BIN=target/debug/quire target/py/bin/python -m pytest -q tests/python
"""

from __future__ import annotations

import os
import queue
import shutil
import subprocess
import threading
import time
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

from vaultlib import BASE_FILES, SECRET, write_files

REPO = Path(__file__).resolve().parents[2]
EXAMPLE_VAULT = REPO / "examples" / "vault"

# Per-request timeout so a hung server fails a test instead of hanging the run.
REQUEST_TIMEOUT_S = 60.0


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="session")
def quire_bin() -> Path:
    path = Path(os.environ.get("QUIRE_BIN") or REPO / "target" / "debug" / "quire")
    if not path.is_file() or not os.access(path, os.X_OK):
        pytest.fail(f"quire binary not found at {path}: run `cargo build` or set QUIRE_BIN")
    probe = subprocess.run(
        [str(path), "serve", "--help"], capture_output=True, text=True, timeout=30
    )
    if probe.returncode != 0 or "--vault" not in probe.stdout + probe.stderr:
        pytest.fail(
            f"`{path} serve --help` did not work (rc={probe.returncode}):\n"
            f"{probe.stdout}\n{probe.stderr}"
        )
    return path


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """A fresh vault for this test, populated before the server starts."""
    root = tmp_path / "vault"
    if EXAMPLE_VAULT.is_dir():
        shutil.copytree(EXAMPLE_VAULT, root, symlinks=True)
    else:
        root.mkdir()
    write_files(root, BASE_FILES)
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder next to the vault (never inside it) holding secret.md."""
    d = tmp_path / "outside_dir"
    d.mkdir()
    (d / "secret.md").write_text(SECRET)
    return d


@pytest.fixture
def add_escape_links(outside: Path):
    """Returns a function that adds `Escape.md -> outside_dir/secret.md` and
    `EscapeDir -> outside_dir` symlinks to a vault."""

    def add(vault_root: Path) -> None:
        (vault_root / "Escape.md").symlink_to(outside / "secret.md")
        (vault_root / "EscapeDir").symlink_to(outside, target_is_directory=True)

    return add


@pytest.fixture
def xdg_home(tmp_path: Path) -> Path:
    d = tmp_path / "xdg"
    for sub in ("state", "data", "config", "cache"):
        (d / sub).mkdir(parents=True)
    return d


def write_secret(path: Path, text: str) -> None:
    """Writes a token file as `quire token new` does: mode 0600, since Quire refuses secrets others may read."""
    path.write_text(text)
    path.chmod(0o600)


def server_env(xdg_home: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "XDG_STATE_HOME": str(xdg_home / "state"),
        "XDG_DATA_HOME": str(xdg_home / "data"),
        "XDG_CONFIG_HOME": str(xdg_home / "config"),
        "XDG_CACHE_HOME": str(xdg_home / "cache"),
        "RUST_BACKTRACE": "1",
    }


class HttpServer:
    """`quire serve --http 127.0.0.1:0` as a child process; knows its URL and token."""

    def __init__(self, quire_bin: Path, vault_root: Path, env: dict, log_path: Path, extra=()):
        self.log = open(log_path, "a")
        self.proc = subprocess.Popen(
            [str(quire_bin), "serve", "--vault", str(vault_root), "--http", "127.0.0.1:0", *extra],
            stdout=subprocess.PIPE,
            stderr=self.log,
            env=env,
            text=True,
        )
        self.url = None
        self.token = None
        # A reader thread, because select() cannot see lines already in Python's buffer.
        lines: queue.Queue = queue.Queue()
        threading.Thread(
            target=lambda: [lines.put(line) for line in self.proc.stdout], daemon=True
        ).start()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                line = lines.get(timeout=0.2).strip()
            except queue.Empty:
                if self.proc.poll() is not None:
                    break
                continue
            if line.startswith("URL:"):
                self.url = line.split()[-1]
            elif line.startswith("Token:"):
                self.token = line.split()[-1]
            elif line.startswith("Auth:"):
                break
            if self.url and self.token:
                break
        if self.url is None:
            self.stop()
            raise RuntimeError(f"quire did not print its URL; stderr is in {log_path}")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


@pytest.fixture(params=["stdio", "http"])
def transport(request) -> str:
    return request.param


@pytest.fixture
def open_session(quire_bin: Path, xdg_home: Path, tmp_path: Path, transport: str):
    """Factory: `async with open_session(vault) as session:` runs a server on `vault`, over the
    test's transport."""

    @asynccontextmanager
    async def open_(vault_root: Path, extra_args=(), **session_kwargs):
        env = server_env(xdg_home)
        log_path = tmp_path / "quire-stderr.log"
        try:
            if transport == "stdio":
                params = StdioServerParameters(
                    command=str(quire_bin),
                    args=["serve", "--vault", str(vault_root), *extra_args],
                    env=env,
                    cwd=str(tmp_path),
                )
                with open(log_path, "a") as errlog:
                    async with stdio_client(params, errlog=errlog) as (read, write):
                        async with ClientSession(
                            read, write, read_timeout_seconds=REQUEST_TIMEOUT_S, **session_kwargs
                        ) as session:
                            await session.initialize()
                            yield session
            else:
                server = HttpServer(quire_bin, vault_root, env, log_path, extra_args)
                try:
                    headers = {"Authorization": f"Bearer {server.token}"} if server.token else None
                    async with create_mcp_http_client(headers=headers) as http:
                        async with streamable_http_client(server.url, http_client=http) as streams:
                            async with ClientSession(
                                streams[0],
                                streams[1],
                                read_timeout_seconds=REQUEST_TIMEOUT_S,
                                **session_kwargs,
                            ) as session:
                                await session.initialize()
                                yield session
                finally:
                    server.stop()
        finally:
            log = log_path.read_text(errors="replace") if log_path.exists() else ""
            if log.strip():
                # Shown by pytest for failing tests only.
                print(f"--- quire stderr ({transport}) ---\n{log[-8000:]}")

    return open_


@pytest.fixture
async def session(open_session, vault: Path):
    """An initialized ClientSession talking to `quire serve --vault <vault>`."""
    async with open_session(vault) as s:
        yield s


@pytest.fixture
def faults_bin() -> Path:
    path = os.environ.get("QUIRE_FAULTS_BIN")
    if not path or not Path(path).is_file():
        if os.environ.get("QUIRE_REQUIRE_FAULTS") == "1":
            pytest.fail("QUIRE_FAULTS_BIN is not set but QUIRE_REQUIRE_FAULTS=1")
        pytest.skip("QUIRE_FAULTS_BIN (a build with --features test-faults) is not set; tests/run builds it")
    return Path(path)
