#!/usr/bin/env python3
"""Notes whose content once made the link parser quadratic (issue 47, F2), written through
`quire serve --http` (one session) while a second session keeps writing an unrelated note: prints how long
each pathological write takes (the file, then the index taking it in) and the slowest of the
unrelated writes made meanwhile. A figure, not an assertion; not part of tests/run.

    QUIRE_BIN=target/release/quire target/py/bin/python benches/pathological_writes.py [--small] [--shapes=[a](,[[]
"""

from __future__ import annotations

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
SHAPES = {"[a](": "[a](", "[[": "[[", "![": "![", "[": "[", "(": "(", "`": "`", "#": "#a "}
SIZES = {"400 KB": 400_000, "10 MB": 10 * 1024 * 1024 - 4096}
# `--small` leaves out the 10 MB notes, which a quadratic parser would take hours over.
if "--small" in sys.argv:
    SIZES.pop("10 MB")
# `--shapes '[a](,[['` picks shapes.
for arg in sys.argv:
    if arg.startswith("--shapes="):
        SHAPES = {shape: SHAPES[shape] for shape in arg.removeprefix("--shapes=").split(",")}


async def timed(session: ClientSession, path: str, body: str) -> float:
    started = time.perf_counter()
    result = await session.call_tool("vault_write_note", {"path": path, "body": body})
    elapsed = (time.perf_counter() - started) * 1000
    if result.is_error:
        raise SystemExit(f"{path}: {result.content[0].text[:300]}")
    return elapsed


async def main() -> None:
    binary = os.environ.get("QUIRE_BIN", str(REPO / "target/release/quire"))
    with tempfile.TemporaryDirectory(prefix="quire-patho-") as tmp:
        work = Path(tmp)
        shutil.copytree(REPO / "examples/vault", work / "vault")
        server = HttpServer(Path(binary), work / "vault", server_env(work / "xdg"), work / "err.log")
        headers = {"Authorization": f"Bearer {server.token}"}
        try:
            async with create_mcp_http_client(headers=headers) as h1, create_mcp_http_client(headers=headers) as h2, \
                    streamable_http_client(server.url, http_client=h1) as one, \
                    streamable_http_client(server.url, http_client=h2) as two:
                async with ClientSession(one[0], one[1], read_timeout_seconds=600) as big, \
                        ClientSession(two[0], two[1], read_timeout_seconds=600) as small:
                    await big.initialize()
                    await small.initialize()
                    print(f"{'shape':>6} {'size':>7} {'write+index (ms)':>17} {'unrelated writes':>17} {'slowest (ms)':>13}")
                    n = 0
                    for shape, unit in SHAPES.items():
                        for label, size in SIZES.items():
                            body = unit * (size // len(unit))
                            done = anyio.Event()
                            small_times: list[float] = []

                            async def unrelated() -> None:
                                nonlocal n
                                while not done.is_set():
                                    n += 1
                                    small_times.append(await timed(small, f"Unrelated/n{n}.md", f"note {n}\n"))

                            async with anyio.create_task_group() as group:
                                group.start_soon(unrelated)
                                await anyio.sleep(0.05)
                                n += 1
                                took = await timed(big, f"Patho/p{n}.md", body)
                                done.set()
                            print(f"{shape:>6} {label:>7} {took:>17.0f} {len(small_times):>17} {max(small_times):>13.1f}")
        finally:
            server.stop()


if __name__ == "__main__":
    anyio.run(main)
