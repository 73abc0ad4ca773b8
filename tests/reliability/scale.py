#!/usr/bin/env python3
"""Scale through the real server (issue 24, item 7): the same figures for two vault sizes in one run.

For each size: cold start to ready (no index yet), resident memory once ready, vault_search p50/p95
over 200 queries (stateless 2026-07-28 over HTTP with bearer auth), the watcher's lag for one edit
made on disk (until a search finds the new word), then a restart on the existing index: time to
ready and memory again.

    tests/reliability/scale.py             10,000 and 100,000 notes (release build)
    tests/reliability/scale.py --quick     1,000 and 5,000 notes (the CI variant)

Needs ../shared/vaults/tasks-docs for the vocabulary (skips with a notice without it, fails when
QUIRE_REQUIRE_SHARED=1). Fails if a size never becomes ready, a search errs, or an edit is not seen
within 30 s.
"""
import argparse
import json
import random
import shutil
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from load import MODERN, Server, log, quire_bin, stateless_body, vault_source, workload  # noqa: E402


def call(server: Server, tool: str, arguments: dict) -> dict:
    request = urllib.request.Request(server.url, data=stateless_body(tool, arguments).encode(), headers={
        **server.headers(), "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": tool})
    with urllib.request.urlopen(request, timeout=120) as answer:
        text = answer.read().decode()
    # Either plain JSON or one SSE event carrying it.
    for line in text.splitlines():
        if line.startswith("data:") and '"result"' in line:
            return json.loads(line[5:])["result"]
    return json.loads(text)["result"]


def time_to_ready(server: Server, began: float) -> float:
    deadline = time.monotonic() + 1800
    while time.monotonic() < deadline:
        try:
            if not call(server, "vault_search", {"query": "note", "limit": 1}).get("isError"):
                return time.monotonic() - began
        except OSError:
            pass
        time.sleep(0.05)
    sys.exit("FAIL: the server never became ready")


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def measure(binary: Path, size: int, rng: random.Random) -> dict:
    figures = {}
    with tempfile.TemporaryDirectory(prefix=f"quire-scale-{size}-") as tmp:
        work = Path(tmp)
        vault = work / "vault"
        shutil.copytree(vault_source(size), vault, symlinks=True)
        began = time.monotonic()
        server = Server(binary, vault, work)
        try:
            figures["cold start to ready (s)"] = time_to_ready(server, began)
            figures["RSS ready (MB)"] = server.sample()["rss_kb"] / 1024
            load = workload(vault, rng)
            latencies = []
            for arguments in load["vault_search"] * 2:
                started = time.perf_counter()
                result = call(server, "vault_search", arguments)
                latencies.append((time.perf_counter() - started) * 1000)
                if result.get("isError"):
                    sys.exit(f"FAIL: search {arguments} erred: {result}")
            figures["search p50 (ms)"] = percentile(latencies, 0.5)
            figures["search p95 (ms)"] = percentile(latencies, 0.95)
            word = f"zyxscale{rng.randrange(10**9)}"
            target = vault / "Scale probe.md"
            edited = time.monotonic()
            target.write_text(f"A note about {word}.\n")
            while True:
                result = call(server, "vault_search", {"query": word, "limit": 1, "mode": "keyword"})
                if '"Scale probe.md"' in json.dumps(result.get("structuredContent", result)):
                    break
                if time.monotonic() - edited > 30:
                    sys.exit(f"FAIL: an edit on disk was not searchable after 30 s at {size} notes")
                time.sleep(0.005)
            figures["watcher lag, one edit (ms)"] = (time.monotonic() - edited) * 1000
            figures["RSS after searches (MB)"] = server.sample()["rss_kb"] / 1024
        finally:
            server.stop()
        began = time.monotonic()
        server = Server(binary, vault, work)
        try:
            figures["restart to ready (s)"] = time_to_ready(server, began)
            figures["RSS after restart (MB)"] = server.sample()["rss_kb"] / 1024
        finally:
            server.stop()
    return figures


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--sizes", help="comma list of note counts")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    sizes = [int(s) for s in (args.sizes or ("1000,5000" if args.quick else "10000,100000")).split(",")]
    binary = quire_bin()
    log(f"scale: {binary}, sizes {sizes}, seed {args.seed}")
    results = {size: measure(binary, size, random.Random(args.seed)) for size in sizes}
    keys = list(next(iter(results.values())))
    log(f"\n  {'':<30}" + "".join(f"{size:>12,}" for size in sizes))
    for key in keys:
        log(f"  {key:<30}" + "".join(f"{results[size][key]:>12.2f}" for size in sizes))


if __name__ == "__main__":
    main()
