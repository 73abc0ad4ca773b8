#!/usr/bin/env python3
"""Prints how long a 2026-07-28 client waits for `notifications/resources/updated` on a
`subscriptions/listen` stream after a note changes on disk (another program's write), through the
official Python SDK over Streamable HTTP against a release build serving a copy of examples/vault.
A figure, not an assertion; not part of tests/run.

    target/py/bin/python benches/listen_latency.py [EDITS]     (default 50)
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

REPO = Path(__file__).resolve().parents[1]


async def measure(url: str, token: str, vault: Path, edits: int) -> list[float]:
    note = vault / "Welcome.md"
    waits: list[float] = []
    async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            assert client.session.protocol_version == "2026-07-28", client.session.protocol_version
            async with client.listen(resource_subscriptions=["note://Welcome.md"]) as subscription:
                for n in range(edits):
                    started = time.monotonic()
                    note.write_text(f"# Welcome\n\nEdit {n}.\n")
                    with anyio.fail_after(10):
                        await subscription.__anext__()
                    waits.append((time.monotonic() - started) * 1000)
                    await anyio.sleep(0.2)  # let the debounce window close between edits
    return waits


def main() -> None:
    edits = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    subprocess.run(["cargo", "build", "--release", "--locked", "--quiet"], cwd=REPO, check=True)
    with tempfile.TemporaryDirectory() as work:
        vault = Path(work) / "vault"
        shutil.copytree(REPO / "examples" / "vault", vault)
        env = {**os.environ, "XDG_STATE_HOME": str(Path(work) / "state")}
        server = subprocess.Popen(
            [str(REPO / "target/release/quire"), "serve", "--vault", str(vault), "--http", "127.0.0.1:0"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
        )
        try:
            url = token = None
            assert server.stdout is not None
            for line in server.stdout:
                if line.strip().startswith("URL:"):
                    url = line.split()[-1]
                elif line.strip().startswith("Token:"):
                    token = line.split()[-1]
                if url and token:
                    break
            waits = anyio.run(measure, url, token, vault, edits)
        finally:
            server.terminate()
            server.wait(timeout=10)
    waits.sort()
    print(
        f"resources/updated on subscriptions/listen after an edit on disk, {len(waits)} edits: "
        f"p50 {statistics.median(waits):.1f} ms, p95 {waits[int(len(waits) * 0.95) - 1]:.1f} ms, "
        f"max {waits[-1]:.1f} ms"
    )


if __name__ == "__main__":
    main()
