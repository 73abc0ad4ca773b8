"""A cold `quire index --rebuild` beside its floor, measured in one run: a program that prints
figures, not a test.

    python3 benches/index_floor.py VAULT --quire NAME=BINARY [--quire NAME=BINARY ...] [--rounds 3]

The floor is a bare FTS5 table (path, title, body) filled from the vault's notes in one
transaction by Python's sqlite3 on one thread, as `benches/index.rs` does in process. Each round
runs the floor and then every binary (release builds of Quire: two of them compare a change),
each on a fresh index file; the best wall time of each is reported with its CPU time and, from
the binary's debug log (`QUIRE_LOG=quire=debug`), where the time went: reading and parsing on the
parser threads, each table's inserts, commits, secondary indexes and the full-text merge on the
writer thread (`index::phases`).
"""

import argparse
import os
import re
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def floor(vault: Path, db: Path) -> tuple[float, float]:
    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    cpu = time.process_time()
    started = time.perf_counter()
    connection = sqlite3.connect(db)
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA synchronous = NORMAL")
    connection.execute("CREATE VIRTUAL TABLE notes USING fts5(path UNINDEXED, title, body)")
    with connection:
        for root, dirs, files in os.walk(vault):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            for name in files:
                if name.endswith(".md") and not name.startswith("."):
                    path = Path(root, name)
                    body = path.read_text(encoding="utf-8", errors="replace")
                    connection.execute(
                        "INSERT INTO notes(path, title, body) VALUES(?, ?, ?)",
                        (str(path.relative_to(vault)), path.stem, body),
                    )
    connection.close()
    return time.perf_counter() - started, time.process_time() - cpu


PHASE = re.compile(r"(\w+)_ms=(\d+)")


def quire(binary: str, vault: Path, db: Path) -> tuple[float, float, dict[str, int]]:
    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    out = subprocess.run(
        [binary, "index", "--rebuild", "--vault", str(vault), "--index", str(db)],
        env={**os.environ, "QUIRE_LOG": "quire=debug", "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        check=True,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    phases: dict[str, int] = {}
    for line in (out.stdout + out.stderr).splitlines():
        if "where the reconcile's time went" in line:
            clean = re.sub(r"\x1b\[[0-9;]*m", "", line)
            phases = {key: int(value) for key, value in PHASE.findall(clean)}
    return wall, cpu, phases


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("vault", type=Path)
    parser.add_argument("--quire", action="append", required=True, metavar="NAME=BINARY")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    binaries = [entry.split("=", 1) for entry in args.quire]
    best: dict[str, tuple[float, float, dict[str, int]]] = {}
    with tempfile.TemporaryDirectory(prefix="quire-index-floor-") as work:
        db = Path(work, "index.db")
        for round_ in range(1, args.rounds + 1):
            wall, cpu = floor(args.vault, db)
            print(f"round {round_}: floor {wall:.2f} s wall, {cpu:.2f} s CPU", flush=True)
            if "floor" not in best or wall < best["floor"][0]:
                best["floor"] = (wall, cpu, {})
            for name, binary in binaries:
                wall, cpu, phases = quire(binary, args.vault, db)
                print(f"round {round_}: {name} {wall:.2f} s wall, {cpu:.2f} s CPU", flush=True)
                if name not in best or wall < best[name][0]:
                    best[name] = (wall, cpu, phases)
    base = best["floor"][0]
    print(f"\nbest of {args.rounds} rounds ({args.vault}):")
    for name, (wall, cpu, phases) in best.items():
        print(f"  {name}: {wall:.2f} s wall ({wall / base:.2f}x the floor), {cpu:.2f} s CPU")
        if phases:
            print("    " + ", ".join(f"{key} {value} ms" for key, value in phases.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
