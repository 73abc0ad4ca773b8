#!/usr/bin/env python3
"""The million-note run (issue 52, item 4): a figure-printing program, not part of tests/run.

    python3 benches/gen_vault.py /tmp/v1m --notes 1000000 --vocab-from ../shared/vaults/tasks-docs
    QUIRE_BIN=target/release/quire target/py/bin/python benches/million.py /tmp/v1m [--floor]

Runs `quire serve --http` as users run it (default sandbox, landlock on) over the vault in place,
with its index and state in a temporary folder, and prints: the cold index until a search answers,
peak and resting memory, the size of `index.db`, keyword search p50/p95 over 200 two-word queries,
`vault_list_tasks` and `vault_list_tags` p50, a restart until a search answers, and a burst of
10,000 edits made on disk (a new word appended to each): how long until the last one is
searchable, and when 100 of them chosen at random are (or how many are not, 120 s later). `--floor` first times the bare FTS5
floor of `benches/index_floor.py` on the same notes. The burst leaves its words in the vault.
"""

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests/reliability"))
sys.path.insert(0, str(REPO / "benches"))
from load import Server, quire_bin, workload  # noqa: E402
from scale import call, percentile, time_to_ready  # noqa: E402


def status_kb(server: Server, field: str) -> int:
    for line in Path(f"/proc/{server.process.pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def timed(server: Server, tool: str, arguments: list[dict]) -> list[float]:
    latencies = []
    for argument in arguments:
        started = time.perf_counter()
        result = call(server, tool, argument)
        latencies.append((time.perf_counter() - started) * 1000)
        if result.get("isError"):
            sys.exit(f"FAIL: {tool} {argument} erred: {str(result)[:500]}")
    return latencies


def burst(server: Server, vault: Path, rng: random.Random, notes: list[str]) -> dict:
    edited = rng.sample(notes, 10_000)
    tag = f"zqburst{rng.randrange(10**9)}"
    began = time.monotonic()
    for at, path in enumerate(edited):
        with open(vault / path, "a", encoding="utf-8") as file:
            file.write(f"\n{tag}n{at}\n")
    written = time.monotonic() - began
    last = f"{tag}n{len(edited) - 1}"
    while True:
        found = call(server, "vault_search", {"query": last, "limit": 1, "mode": "keyword"})
        if last in str(found) or edited[-1] in str(found):
            break
        if time.monotonic() - began > 600:
            sys.exit("FAIL: the burst's last edit was not searchable after 600 s")
        time.sleep(0.05)
    settled = time.monotonic() - began
    checked = rng.sample(range(len(edited)), 100)
    missing = checked
    while missing and time.monotonic() - began < settled + 120:
        missing = [
            at for at in missing
            if edited[at] not in str(call(server, "vault_search", {"query": f"{tag}n{at}", "limit": 1, "mode": "keyword"}))
        ]
        if missing:
            time.sleep(1)
    return {
        "burst: 10,000 edits written (s)": written,
        "burst: last edit searchable (s)": settled,
        "burst: 100 sampled searchable (s)": time.monotonic() - began,
        "burst: of 100 sampled, never found": float(len(missing)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("vault", type=Path)
    parser.add_argument("--floor", action="store_true")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="quire-million-") as tmp:
        work = Path(tmp)
        if args.floor:
            from index_floor import floor  # noqa: E402
            wall, cpu = floor(args.vault, work / "floor.db")
            figures["floor: bare FTS5 (s)"] = wall
            (work / "floor.db").unlink()
        began = time.monotonic()
        server = Server(quire_bin(), args.vault, work, token_wait=900)
        try:
            figures["cold index to ready (s)"] = time_to_ready(server, began)
            figures["peak RSS while indexing (MB)"] = status_kb(server, "VmHWM") / 1024
            time.sleep(5)
            figures["RSS at rest (MB)"] = status_kb(server, "VmRSS") / 1024
            index = next(work.rglob("index.db"))
            figures["index.db (MB)"] = index.stat().st_size / 1e6
            load = workload(args.vault, rng)
            searches = timed(server, "vault_search", [{**a, "mode": "keyword"} for a in load["vault_search"] * 2])
            figures["keyword search p50 (ms)"] = percentile(searches, 0.5)
            figures["keyword search p95 (ms)"] = percentile(searches, 0.95)
            tasks = timed(server, "vault_list_tasks", [{"limit": 50}] * 20)
            figures["vault_list_tasks p50 (ms)"] = percentile(tasks, 0.5)
            tags = timed(server, "vault_list_tags", [{"limit": 50}] * 10)
            figures["vault_list_tags p50 (ms)"] = percentile(tags, 0.5)
            figures["RSS after queries (MB)"] = status_kb(server, "VmRSS") / 1024
        finally:
            server.stop()
        began = time.monotonic()
        server = Server(quire_bin(), args.vault, work, token_wait=900)
        try:
            figures["restart to ready (s)"] = time_to_ready(server, began)
            figures["RSS after restart (MB)"] = status_kb(server, "VmRSS") / 1024
            notes = [read["path"] for read in load["vault_read_note"]]
            all_notes = sorted(str(p.relative_to(args.vault)) for p in args.vault.rglob("*.md")
                               if not any(part.startswith(".") for part in p.relative_to(args.vault).parts))
            figures.update(burst(server, args.vault, rng, all_notes or notes))
            figures["peak RSS after the burst (MB)"] = status_kb(server, "VmHWM") / 1024
        finally:
            server.stop()
    for key, value in figures.items():
        print(f"  {key:<40}{value:>12.2f}")


if __name__ == "__main__":
    main()
