"""`vault_query_base` through the official MCP SDK over stdio: issue 50's view (three filters: a
tag, a folder and a property comparison; two formulas; a groupBy) and a base over every file,
11 calls each, printing the first call and the p50 of the next 10.

    python benches/gen_vault.py /tmp/v10k --notes 10000 --vocab-from ../shared/vaults/tasks-docs
    QUIRE_BIN=target/release/quire target/py/bin/python benches/query_base_sdk.py /tmp/v10k

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

ISSUE_VIEW = """\
filters:
  and:
    - file.hasTag("project")
    - '!file.inFolder("Archive")'
    - 'status != "done"'
formulas:
  age_days: '((now() - file.ctime) / 86400000).round()'
  label: 'file.basename.lower() + " (" + status + ")"'
views:
  - type: table
    name: Open projects
    order: [file.name, status, formula.age_days, formula.label]
    groupBy:
      property: status
      direction: ASC
    summaries:
      formula.age_days: Average
"""

EVERY_FILE = """\
views:
  - type: table
    name: Everything
    order: [file.path, file.size, file.tags]
"""

WITH_BACKLINKS = """\
filters: 'file.hasTag("project")'
formulas:
  cited: 'file.backlinks.length'
views:
  - type: table
    name: Most cited
    order: [file.name, formula.cited, file.links]
    sort:
      - property: formula.cited
        direction: DESC
    limit: 20
"""

QUERIES = [
    ("tag, folder and property filters, two formulas, groupBy", {"base": ISSUE_VIEW}),
    ("every file, three file columns (first page of 50)", {"base": EVERY_FILE}),
    ("tag filter, backlinks and links (reads every link)", {"base": WITH_BACKLINKS}),
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
        async with stdio_client(params, errlog=open(os.devnull, "w")) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                for label, args in QUERIES:
                    times = []
                    for _ in range(11):
                        started = time.perf_counter()
                        result = await session.call_tool("vault_query_base", args)
                        times.append((time.perf_counter() - started) * 1000)
                        if result.is_error:
                            sys.exit(f"{label}: {result.content[0].text}")
                    total = result.structured_content["total"]
                    print(
                        f"{label}: {total} rows; first {times[0]:.1f} ms, "
                        f"p50 of the next 10 {statistics.median(times[1:]):.1f} ms"
                    )


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
