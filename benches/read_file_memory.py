"""Resident memory of `quire serve` around reading a 50 MiB file with vault_read_file, through the
official MCP SDK over stdio: VmRSS before, after each read, and the peak (VmHWM). Issue 20 asks that
resident memory stays within the existing targets after such a read. Prints figures; never part of
the test run.

    target/py/bin/python benches/read_file_memory.py target/release/quire
"""
from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

MIB = 1024 * 1024


def status(pid: int) -> dict[str, int]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0]) // 1024
    return fields


async def main() -> None:
    binary = sys.argv[1]
    tmp = Path(tempfile.mkdtemp())
    vault = tmp / "vault"
    (vault / "Logs").mkdir(parents=True)
    (vault / "Welcome.md").write_text("# Welcome\n")
    line = "2026-12-01T04:00:00Z INFO a line of a long log file, eighty bytes or so.....\n"
    with open(vault / "Logs" / "big.log", "w") as out:
        out.write(line * (50 * MIB // len(line)))
    size = (vault / "Logs" / "big.log").stat().st_size
    env = {"PATH": os.environ["PATH"], "XDG_STATE_HOME": str(tmp / "s"), "XDG_DATA_HOME": str(tmp / "d")}
    params = StdioServerParameters(command=binary, args=["serve", "--vault", str(vault)], env=env)
    async with stdio_client(params, errlog=open(tmp / "err.log", "w")) as (r, w):
        async with ClientSession(r, w) as session:
            await session.initialize()
            await session.call_tool("vault_list_notes", {})
            pid = int(subprocess.check_output(["pgrep", "-f", f"serve --vault {vault}"]).split()[0])
            print(f"file: {size / MIB:.1f} MiB; server pid {pid}")
            print("before any read:", status(pid))
            for n in range(1, 9):
                res = await session.call_tool(
                    "vault_read_file", {"path": "Logs/big.log", "start_line": 1000 * n, "limit": 50}
                )
                assert not res.is_error, res.content[0].text
                print(f"after read {n} (a 50-line window):", status(pid))
            await asyncio.sleep(2)
            print("2 s later:", status(pid))


asyncio.run(main())
