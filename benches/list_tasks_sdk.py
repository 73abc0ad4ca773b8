"""`vault_list_tasks` through the official MCP SDK over stdio: the three filters of issue 23 (none,
`status: TODO` sorted by due, `due before today`), 11 calls each, printing the first call and the
p50 of the next 10, as the table of `docs/PERFORMANCE.md` reports them.

    QUIRE_BIN=target/release/quire target/py/bin/python benches/list_tasks_sdk.py VAULT

The server keeps its index under a temporary XDG state folder, so the first call waits for the
initial index build. Embeddings stay off (no model is installed there).
"""
from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

FILTERS = [
    ("none (first page of 50)", {}),
    ("status: TODO, sort_by: due", {"status": ["TODO"], "sort_by": "due"}),
    ("due: {before: today}", {"due": {"before": "today"}}),
]


async def main(vault: str) -> None:
    with tempfile.TemporaryDirectory() as home:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "XDG_STATE_HOME": f"{home}/state",
            "XDG_DATA_HOME": f"{home}/data",
            "XDG_CONFIG_HOME": f"{home}/config",
            "XDG_CACHE_HOME": f"{home}/cache",
        }
        params = StdioServerParameters(
            command=os.environ["QUIRE_BIN"], args=["serve", "--vault", vault], env=env
        )
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                print("| filter | first call | p50 of the next 10 |")
                print("|---|---|---|")
                for name, args in FILTERS:
                    times = []
                    for _ in range(11):
                        started = time.perf_counter()
                        result = await session.call_tool("vault_list_tasks", args)
                        times.append(time.perf_counter() - started)
                        assert not result.is_error, result.content
                    print(
                        f"| {name} | {times[0] * 1e3:.1f} ms | {statistics.median(times[1:]) * 1e3:.1f} ms |"
                    )


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
