#!/usr/bin/env python3
"""Notes whose content once made the link parser quadratic (issue 47, F2), written through
`quire serve --http` (one session) while a second session, in a process of its own, keeps writing
unrelated notes: prints how long each pathological write takes (the file, then the index taking it
in) and the slowest of the unrelated writes made meanwhile. Shapes: the red team's repeated units, and
`ids` (distinct hex words) and `prose`. A figure, not an assertion; not part of tests/run.

    QUIRE_BIN=target/release/quire target/py/bin/python benches/pathological_writes.py [--small] [--shapes=[a](,[[,ids]
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import shutil
import tempfile
import time
from pathlib import Path

import anyio
from mcp import ClientSession
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests/python"))
from conftest import HttpServer, server_env  # noqa: E402
SHAPES = {"[a](": "[a](", "[[": "[[", "![": "![", "[": "[", "(": "(", "`": "`", "#": "#a ",
          # Not a repeated unit: a log of distinct ids (every word new to the index), and prose.
          "ids": None, "prose": None}
PROSE = "the quick brown fox jumps over a lazy dog while seven wizards quietly judge its form".split()
SIZES = {"400 KB": 400_000, "10 MB": 10 * 1024 * 1024 - 4096}
# `--small` leaves out the 10 MB notes, which a quadratic parser would take hours over.
if "--small" in sys.argv:
    SIZES.pop("10 MB")
# `--shapes '[a](,[['` picks shapes.
for arg in sys.argv:
    if arg.startswith("--shapes="):
        SHAPES = {shape: SHAPES[shape] for shape in arg.removeprefix("--shapes=").split(",")}


def build(shape: str, unit: str | None, size: int) -> str:
    """A body of about `size` bytes of the shape."""
    if unit is not None:
        return unit * (size // len(unit))
    words: list[str] = []
    length = 0
    n = 0
    while length < size:
        word = f"{n * 2654435761 % 2**32:08x}" if shape == "ids" else PROSE[n * 7 % len(PROSE)]
        words.append(word + ("\n" if n % 12 == 11 else " "))
        length += len(word) + 1
        n += 1
    return "".join(words)[:size]


async def timed(session: ClientSession, path: str, body: str) -> float:
    started = time.perf_counter()
    result = await session.call_tool("vault_write_note", {"path": path, "body": body})
    elapsed = (time.perf_counter() - started) * 1000
    if result.is_error:
        raise SystemExit(f"{path}: {result.content[0].text[:300]}")
    return elapsed


def unrelated(url: str, token: str, first: int, ready, stop, times) -> None:
    """Writes small unrelated notes until `stop` is set, in a process of its own so the client's
    encoding of the large body cannot delay these writes, and reports each write's time."""

    async def loop() -> None:
        headers = {"Authorization": f"Bearer {token}"}
        async with create_mcp_http_client(headers=headers) as http, \
                streamable_http_client(url, http_client=http) as (read, write), \
                ClientSession(read, write, read_timeout_seconds=600) as session:
            await session.initialize()
            n = first
            while not stop.is_set():
                n += 1
                times.put(await timed(session, f"Unrelated/n{n}.md", f"note {n}\n"))
                ready.set()
            times.put(None)

    anyio.run(loop)


async def main() -> None:
    binary = os.environ.get("QUIRE_BIN", str(REPO / "target/release/quire"))
    processes = multiprocessing.get_context("spawn")
    with tempfile.TemporaryDirectory(prefix="quire-patho-") as tmp:
        work = Path(tmp)
        shutil.copytree(REPO / "examples/vault", work / "vault")
        server = HttpServer(Path(binary), work / "vault", server_env(work / "xdg"), work / "err.log")
        headers = {"Authorization": f"Bearer {server.token}"}
        try:
            async with create_mcp_http_client(headers=headers) as http, \
                    streamable_http_client(server.url, http_client=http) as (read, write), \
                    ClientSession(read, write, read_timeout_seconds=600) as big:
                await big.initialize()
                print(f"{'shape':>6} {'size':>7} {'write+index (ms)':>17} {'unrelated writes':>17} {'slowest (ms)':>13}")
                n = 0
                for shape, unit in SHAPES.items():
                    for label, size in SIZES.items():
                        body = build(shape, unit, size)
                        ready, stop, times = processes.Event(), processes.Event(), processes.Queue()
                        child = processes.Process(
                            target=unrelated, args=(server.url, server.token, n * 100_000, ready, stop, times)
                        )
                        child.start()
                        await anyio.to_thread.run_sync(ready.wait)
                        n += 1
                        took = await timed(big, f"Patho/p{n}.md", body)
                        stop.set()
                        small_times: list[float] = []
                        while (value := await anyio.to_thread.run_sync(times.get)) is not None:
                            small_times.append(value)
                        child.join()
                        # The first write only showed the child was running, before the large one.
                        small_times = small_times[1:] or [0.0]
                        print(f"{shape:>6} {label:>7} {took:>17.0f} {len(small_times):>17} {max(small_times):>13.1f}")
        finally:
            server.stop()


if __name__ == "__main__":
    anyio.run(main)
