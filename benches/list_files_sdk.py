"""Times vault_list_files and vault_stat over a synthetic vault of 10,000 files (350 folders),
through the official MCP SDK over stdio: best and median of 7 calls each. Prints figures; never
part of the test run.

    target/py/bin/python benches/list_files_sdk.py target/release/quire
"""
from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
async def main():
    tmp = Path(tempfile.mkdtemp())
    vault = tmp / "vault"
    for i in range(10000):
        d = vault / f"F{i % 50:02}" / f"S{i % 7}"
        d.mkdir(parents=True, exist_ok=True)
        ext = ["png", "pdf", "csv", "md", "jpg"][i % 5]
        (d / f"file{i:05}.{ext}").write_bytes(b"x" * (i % 300))
    env = {"PATH": os.environ["PATH"], "XDG_STATE_HOME": str(tmp / "s"), "XDG_DATA_HOME": str(tmp / "d")}
    params = StdioServerParameters(command=sys.argv[1], args=["serve", "--vault", str(vault)], env=env)
    async with stdio_client(params, errlog=open(tmp / "err.log", "w")) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            for args in [{}, {"extensions": ["PDF"]}, {"folder": "F07", "recursive": False}]:
                times = []
                for _ in range(7):
                    t = time.perf_counter()
                    res = await s.call_tool("vault_list_files", args)
                    times.append((time.perf_counter() - t) * 1000)
                    assert not res.is_error, res.content[0].text
                sc = res.structured_content
                print(args, "total", sc["total"], "best %.1f ms median %.1f ms" % (min(times), statistics.median(times)))
            t = time.perf_counter()
            await s.call_tool("vault_stat", {"path": "F07/S0/file00007.jpg"})
            print("stat %.1f ms" % ((time.perf_counter() - t) * 1000))
    shutil.rmtree(tmp, ignore_errors=True)


asyncio.run(main())
