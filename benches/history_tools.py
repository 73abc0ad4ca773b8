#!/usr/bin/env python3
"""What the history costs and how fast its tools answer (issue 49), on a synthetic 10k-note vault
(benches/gen_vault.py) through `quire serve` over stdio, sandbox on, as users run it:

1. write latency p50/p99 of random appends (`vault_patch_note`), `[history]` on vs off;
2. history storage per edit after `--edits` random edits (default 10,000);
3. `vault_note_history` p50 on a note with 1,000 versions;
4. `vault_undo` of a 200-note batch (`vault_set_property` on 200 notes).

A figure, not an assertion; not part of tests/run.

    QUIRE_BIN=target/release/quire target/py/bin/python benches/history_tools.py [--notes 10000] [--edits 10000]
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import statistics
import subprocess
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


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def timed(session, tool: str, args: dict) -> tuple[float, dict]:
    started = time.perf_counter()
    result = await session.call_tool(tool, args)
    elapsed = (time.perf_counter() - started) * 1000
    if result.is_error:
        raise SystemExit(f"{tool} {args}: {result.content[0].text}")
    return elapsed, result.structured_content


def session_params(binary: str, vault: Path, work: Path, history: bool) -> StdioServerParameters:
    config = work / f"quire-{history}.toml"
    config.write_text(f"[history]\nenabled = {'true' if history else 'false'}\n\n[safety]\nconfirm = \"off\"\n")
    env = server_env(work / f"xdg-{history}")
    return StdioServerParameters(
        command=binary, args=["serve", "--vault", str(vault), "--config", str(config)], env=env, cwd=str(work)
    )


def stored_bytes(work: Path, history: bool) -> int:
    for candidate in (work / f"xdg-{history}" / "state" / "quire").rglob("history.db"):
        with sqlite3.connect(candidate) as connection:
            return connection.execute("SELECT COALESCE(SUM(stored), 0) FROM contents").fetchone()[0]
    return 0


async def edits(binary: str, vault: Path, work: Path, history: bool, count: int, notes: list[str]) -> list[float]:
    rng = random.Random(49)
    times: list[float] = []
    with open(work / "err.log", "a") as errlog:
        async with stdio_client(session_params(binary, vault, work, history), errlog=errlog) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=600) as session:
                await session.initialize()
                for k in range(count):
                    path = rng.choice(notes)
                    elapsed, _ = await timed(session, "vault_patch_note", {
                        "path": path, "operation": "append", "content": f"edit {k} {rng.random():.6f}",
                    })
                    times.append(elapsed)
    return times


async def tools(binary: str, vault: Path, work: Path, notes: list[str]) -> None:
    with open(work / "err.log", "a") as errlog:
        async with stdio_client(session_params(binary, vault, work, True), errlog=errlog) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=600) as session:
                await session.initialize()
                target = "History bench/thousand.md"
                await timed(session, "vault_write_note", {"path": target, "body": "v0\n"})
                for k in range(999):
                    await timed(session, "vault_patch_note", {"path": target, "operation": "append", "content": f"v{k + 1}"})
                history_ms = []
                for _ in range(200):
                    elapsed, found = await timed(session, "vault_note_history", {"path": target, "limit": 50})
                    history_ms.append(elapsed)
                assert len(found["versions"]) == 50
                print(f"vault_note_history at 1,000 versions (limit 50): p50 {statistics.median(history_ms):.2f} ms, p99 {pct(history_ms, 0.99):.2f} ms")
                batch = sorted(notes)[:200]
                elapsed, done = await timed(session, "vault_set_property", {"name": "bench", "value": 1, "paths": batch})
                assert done["total_notes"] == 200
                print(f"vault_set_property on 200 notes: {elapsed:.0f} ms")
                undo_ms, undone = await timed(session, "vault_undo", {"change_id": done["change_id"]})
                assert len(undone["notes"]) == 200
                print(f"vault_undo of that 200-note batch: {undo_ms:.0f} ms")


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--notes", type=int, default=10000)
    parser.add_argument("--edits", type=int, default=10000)
    parser.add_argument("--compare", type=int, default=2000, help="edits per side for on vs off")
    args = parser.parse_args()
    binary = os.environ.get("QUIRE_BIN", str(REPO / "target/release/quire"))
    with tempfile.TemporaryDirectory(prefix="quire-history-tools-") as tmp:
        work = Path(tmp)
        vocab = REPO.parent / "shared" / "vaults"
        subprocess.run([sys.executable, str(REPO / "benches/gen_vault.py"), str(work / "vault"),
                        "--notes", str(args.notes), "--vocab-from", str(vocab if vocab.is_dir() else REPO / "examples/vault")],
                       check=True, capture_output=True)
        vault = work / "vault"
        notes = sorted(str(p.relative_to(vault)) for p in vault.rglob("*.md") if not p.name.startswith("."))
        print(f"vault: {len(notes)} notes ({args.notes} generated)")
        for history in (False, True):
            times = await edits(binary, vault, work, history, args.compare, notes)
            print(f"appends, history {'on ' if history else 'off'}: p50 {statistics.median(times):.2f} ms, p99 {pct(times, 0.99):.2f} ms ({len(times)} edits)")
        more = max(0, args.edits - args.compare)
        if more:
            await edits(binary, vault, work, True, more, notes)
        total = args.compare + more
        stored = stored_bytes(work, True)
        print(f"history after {total} random edits: {stored / 1e6:.1f} MB compressed, {stored / total:.0f} B per edit")
        await tools(binary, vault, work, notes)


if __name__ == "__main__":
    anyio.run(main)
