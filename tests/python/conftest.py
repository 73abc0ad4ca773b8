"""Fixtures for Quire's end-to-end tests over stdio.

Every test gets a fresh temporary vault (a copy of <repo>/examples/vault when
that exists, with the notes of vaultlib.BASE_FILES written on top) and, through
the `session` fixture, a `quire serve --vault <tmp vault>` process driven by the
official MCP Python SDK. XDG_STATE_HOME / XDG_DATA_HOME (and config/cache) point
into the test's temp dir so a run never touches the developer's real state.

Run:
    QUIRE_BIN=target/debug/quire target/py/bin/python -m pytest -q tests/python
"""

from __future__ import annotations

import os
import shutil
import subprocess
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

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


@pytest.fixture
def open_session(quire_bin: Path, xdg_home: Path, tmp_path: Path):
    """Factory: `async with open_session(vault) as session:` runs a server on `vault`."""

    @asynccontextmanager
    async def open_(vault_root: Path):
        params = StdioServerParameters(
            command=str(quire_bin),
            args=["serve", "--vault", str(vault_root)],
            env={
                "XDG_STATE_HOME": str(xdg_home / "state"),
                "XDG_DATA_HOME": str(xdg_home / "data"),
                "XDG_CONFIG_HOME": str(xdg_home / "config"),
                "XDG_CACHE_HOME": str(xdg_home / "cache"),
                "RUST_BACKTRACE": "1",
            },
            cwd=str(tmp_path),
        )
        log_path = tmp_path / "quire-stderr.log"
        with open(log_path, "a") as errlog:
            try:
                async with stdio_client(params, errlog=errlog) as (read, write):
                    async with ClientSession(
                        read, write, read_timeout_seconds=REQUEST_TIMEOUT_S
                    ) as session:
                        await session.initialize()
                        yield session
            finally:
                errlog.flush()
                log = log_path.read_text(errors="replace")
                if log.strip():
                    # Shown by pytest for failing tests only.
                    print(f"--- quire stderr ---\n{log[-8000:]}")

    return open_


@pytest.fixture
async def session(open_session, vault: Path):
    """An initialized ClientSession talking to `quire serve --vault <vault>`."""
    async with open_session(vault) as s:
        yield s
