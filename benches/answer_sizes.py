#!/usr/bin/env python3
"""Prints the size of each answer in a typical agent session (what a model pays for in tokens):
read a note, search, list open tasks, get a daily note, list notes. Runs the binary named by
QUIRE_BIN (default target/release/quire) over stdio with the official Python SDK against a copy of
examples/vault, and counts the bytes of each result's structured content as JSON.
A figure, not an assertion; not part of tests/run.

    QUIRE_BIN=target/release/quire target/py/bin/python benches/answer_sizes.py
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

REPO = Path(__file__).resolve().parents[1]

SESSION = [
    ("vault_read_note", {"path": "Welcome.md"}),
    ("vault_search", {"query": "garden plan", "limit": 10}),
    ("vault_list_tasks", {"status": "TODO"}),
    ("vault_get_daily_note", {"date": "2026-11-28"}),
    ("vault_list_notes", {"limit": 50}),
]


async def measure(binary: str, vault: Path, state: Path) -> list[tuple[str, int, int]]:
    params = StdioServerParameters(
        command=binary,
        args=["serve", "--vault", str(vault)],
        env={**os.environ, "XDG_STATE_HOME": str(state), "XDG_DATA_HOME": str(state)},
    )
    sizes = []
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                for tool, arguments in SESSION:
                    result = await session.call_tool(tool, arguments)
                    body = json.dumps(result.structured_content, ensure_ascii=False, separators=(",", ":"))
                    items = next(
                        (len(v) for v in (result.structured_content or {}).values() if isinstance(v, list)), 1
                    )
                    sizes.append((tool, len(body.encode()), items))
    return sizes


def main() -> None:
    binary = os.environ.get("QUIRE_BIN", str(REPO / "target/release/quire"))
    with tempfile.TemporaryDirectory() as work:
        vault = Path(work) / "vault"
        shutil.copytree(REPO / "examples" / "vault", vault)
        sizes = anyio.run(measure, binary, vault, Path(work) / "state")
    total = 0
    print(f"answer sizes, {binary}, examples/vault:")
    for tool, size, items in sizes:
        total += size
        print(f"  {tool:<22} {size:>6} bytes  ({items} items)")
    print(f"  {'session total':<22} {total:>6} bytes")


if __name__ == "__main__":
    main()
