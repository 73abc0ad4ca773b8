"""Where a keyword search's time goes in SQLite itself, on an index Quire built: a program that
prints figures, not a test.

    python3 -m pip install apsw   # the SQLite Quire bundles; else Python's own sqlite3 is used
    python3 benches/search_floor.py VAULT INDEX

The queries are `million.py`'s: 100 pairs of words drawn from the vault's note names (seed 7),
each run twice. Queries interleave over read-only connections, so a slower minute of the
machine falls on every variant alike:
- `ranked`: Quire's ranking SQL (`index::read::search`): BM25 over the full-text table, the best 11,
  then their note rows;
- `ranked, mmap`: the same on a connection that maps the whole file (`PRAGMA mmap_size`), which
  Quire's bundled SQLite cannot do past 2 GB (`SQLITE_MAX_MMAP_SIZE`);
- `ranked, 64 MB cache`: the same with a 64 MB page cache instead of Quire's 2 MB per reader;
- `matching only`: the count of the notes that have every word, without ranking them.
"""

import argparse
import json
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests/reliability"))
from load import workload  # noqa: E402

BM25 = "10.0, 5.0, 2.0, 1.0"
RANKED = (f"SELECT n.path, r.rank FROM (SELECT rowid AS id, bm25(notes_fts, {BM25}) AS rank FROM notes_fts "
          "WHERE notes_fts MATCH ? ORDER BY 2 LIMIT 11 OFFSET 0) r JOIN notes n ON n.id = r.id ORDER BY r.rank")
MATCHING = "SELECT count(*) FROM notes_fts WHERE notes_fts MATCH ?"


def connect(index: Path, pragmas: list[str]):
    try:
        import apsw
        connection = apsw.Connection(str(index), flags=apsw.SQLITE_OPEN_READONLY)
        version = apsw.sqlite_lib_version()
    except ImportError:
        import sqlite3
        connection = sqlite3.connect(f"file:{index}?mode=ro", uri=True)
        version = sqlite3.sqlite_version + " (Python's sqlite3; install apsw for Quire's)"
    for pragma in pragmas:
        connection.execute(f"PRAGMA {pragma}")
    return connection, version


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("vault", type=Path)
    parser.add_argument("index", type=Path)
    parser.add_argument("--rounds", type=int, default=2, help="rounds timed after one warm-up round")
    args = parser.parse_args()
    queries = [search["query"].split() for search in workload(args.vault, random.Random(7))["vault_search"]]
    variants = {
        "ranked": (RANKED, []),
        "ranked, mmap": (RANKED, ["mmap_size = 1099511627776"]),
        "ranked, 64 MB cache": (RANKED, ["cache_size = -65536"]),
        "matching only": (MATCHING, []),
    }
    connections = {}
    for name, (_, pragmas) in variants.items():
        connections[name], version = connect(args.index, pragmas)
    print(f"SQLite {version}; {len(queries)} queries x 2 per round, {args.rounds} rounds after a warm-up")
    times: dict[str, list[float]] = {name: [] for name in variants}
    for round_no in range(args.rounds + 1):
        for first, second in queries * 2:
            expression = f'"{first}" "{second}"'
            names = list(variants) if round_no % 2 == 0 else list(variants)[::-1]
            for name in names:
                started = time.perf_counter()
                connections[name].execute(variants[name][0], (expression,)).fetchall()
                if round_no > 0:
                    times[name].append((time.perf_counter() - started) * 1000)
    for name, values in times.items():
        values.sort()
        print(f"{name:>20}: p50 {values[len(values) // 2]:6.2f} ms, p95 {values[int(len(values) * 0.95)]:6.2f} ms, "
              f"mean {sum(values) / len(values):6.2f} ms")


if __name__ == "__main__":
    main()
