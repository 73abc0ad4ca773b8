#!/usr/bin/env python3
"""What keeping history costs a write (issue 49): `quire serve` over stdio (sandbox on, as users run
it) on a copy of a vault, the same edits with `[history]` on and off, in alternating rounds. Each
round creates notes, then edits them with vault_replace_in_note; prints p50/p99 per round and the
history's size per edit. A figure, not an assertion; not part of tests/run.

    QUIRE_BIN=target/release/quire target/py/bin/python benches/history_writes.py [--vault DIR] [--edits N] [--rounds N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests/python"))
from conftest import server_env  # noqa: E402

NOTES = 50


async def round_(binary: str, vault: Path, work: Path, history: bool, edits: int) -> tuple[list[float], int]:
    config = work / f"quire-{history}.toml"
    config.write_text(f"[history]\nenabled = {'true' if history else 'false'}\n")
    env = server_env(work / f"xdg-{history}")
    params = StdioServerParameters(
        command=binary, args=["serve", "--vault", str(vault), "--config", str(config)], env=env, cwd=str(work)
    )
    times: list[float] = []
    with open(work / "err.log", "a") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                revisions: dict[str, str] = {}
                for n in range(NOTES):
                    path = f"History bench/{history}-{n}.md"
                    result = await session.call_tool(
                        "vault_write_note", {"path": path, "body": f"# Note {n}\n\ncounter 0\n" + "words " * 300}
                    )
                    revisions[path] = result.structured_content["revision"]
                for k in range(edits):
                    path = f"History bench/{history}-{k % NOTES}.md"
                    step = k // NOTES
                    started = time.perf_counter()
                    result = await session.call_tool(
                        "vault_replace_in_note",
                        {
                            "path": path,
                            "old_text": f"counter {step}\n",
                            "new_text": f"counter {step + 1}\n",
                            "expected_revision": revisions[path],
                        },
                    )
                    times.append((time.perf_counter() - started) * 1000)
                    if result.is_error:
                        raise SystemExit(result.content[0].text)
                    revisions[path] = result.structured_content["revision"]
    stored = 0
    db = work / f"xdg-{history}" / "state" / "quire"
    for candidate in db.rglob("history.db"):
        with sqlite3.connect(candidate) as connection:
            stored = connection.execute("SELECT COALESCE(SUM(stored), 0) FROM contents").fetchone()[0]
    return times, stored


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--vault", default=str(REPO / "examples/vault"))
    parser.add_argument("--edits", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    binary = os.environ.get("QUIRE_BIN", str(REPO / "target/release/quire"))
    print(f"{'round':>5} {'history':>8} {'p50 ms':>8} {'p99 ms':>8} {'stored B/edit':>14}")
    medians: dict[bool, list[float]] = {True: [], False: []}
    for n in range(args.rounds):
        for history in (n % 2 == 0, n % 2 != 0):
            with tempfile.TemporaryDirectory(prefix="quire-history-") as tmp:
                work = Path(tmp)
                shutil.copytree(args.vault, work / "vault")
                times, stored = await round_(binary, work / "vault", work, history, args.edits)
                medians[history].append(statistics.median(times))
                per_edit = stored / (args.edits + NOTES) if history else 0
                print(f"{n:>5} {'on' if history else 'off':>8} {statistics.median(times):>8.2f} {pct(times, 0.99):>8.2f} {per_edit:>14.0f}")
    on, off = min(medians[True]), min(medians[False])
    print(f"best p50: on {on:.2f} ms, off {off:.2f} ms: {100 * (on / off - 1):+.1f} %")


if __name__ == "__main__":
    anyio.run(main)
