#!/usr/bin/env python3
"""How much a restricted identity's search time says about words in notes it cannot read (issue 47,
F7). A vault of 1,000 readable notes and 5,000 denied ones, where one word occurs only in the
denied notes; the identity reads `Public/` only. Prints the latency of `vault_search` for that word
and for a word found nowhere (medians and percentiles over alternating rounds), through
`quire serve --http` (sandbox on) with stateless 2026-07-28 requests. A figure, not an assertion.

    QUIRE_BIN=target/release/quire target/py/bin/python benches/acl_search_timing.py [--rounds 400]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TOKEN = "timing-token-0123456789abcdefghijklmnopqrstuvwxyz"


def write_vault(root: Path, readable: int, denied: int) -> None:
    for folder in ("Public", "Private"):
        (root / folder).mkdir(parents=True)
    for n in range(readable):
        (root / "Public" / f"p{n:05}.md").write_text(f"# Public {n}\n\nordinary words garden plan {n}\n")
    for n in range(denied):
        (root / "Private" / f"s{n:05}.md").write_text(f"# Secret {n}\n\nzebracorn garden plan {n}\n")


def call(url: str, query: str) -> float:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "vault_search", "arguments": {"query": query, "limit": 10},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}}).encode()
    request = urllib.request.Request(url, data=body, headers={
        "Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call", "Mcp-Name": "vault_search"})
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=60) as answer:
        text = answer.read().decode()
    elapsed = (time.perf_counter() - started) * 1000
    if '"isError":true' in text or "zebracorn garden" in text:
        raise SystemExit(f"unexpected answer for {query!r}: {text[:400]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=400)
    args = parser.parse_args()
    binary = os.environ.get("QUIRE_BIN", str(REPO / "target/release/quire"))
    with tempfile.TemporaryDirectory(prefix="quire-acl-timing-") as tmp:
        work = Path(tmp)
        write_vault(work / "vault", 1_000, 5_000)
        (work / "reader.token").write_text(TOKEN + "\n")
        (work / "reader.token").chmod(0o600)
        (work / "quire.toml").write_text(
            '[[identity]]\nname = "reader"\ntoken_file = "reader.token"\nread = ["Public/"]\n')
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        env = dict(os.environ, XDG_STATE_HOME=str(work / "state"), RUST_LOG="warn")
        server = subprocess.Popen(
            [binary, "serve", "--vault", str(work / "vault"), "--config", str(work / "quire.toml"),
             "--http", f"127.0.0.1:{port}"],
            stdout=subprocess.DEVNULL, stderr=open(work / "err.log", "w"), env=env)
        url = f"http://127.0.0.1:{port}/mcp"
        try:
            deadline = time.monotonic() + 120
            while True:
                try:
                    call(url, "garden")
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise SystemExit((work / "err.log").read_text()[-2000:])
                    time.sleep(0.1)
            for _ in range(50):
                call(url, "zebracorn")
                call(url, "qwxnowhere")
            found, nowhere = [], []
            for _ in range(args.rounds):
                found.append(call(url, "zebracorn"))
                nowhere.append(call(url, "qwxnowhere"))
        finally:
            server.terminate()
            server.wait(10)

    def describe(values: list[float]) -> str:
        q = statistics.quantiles(values, n=10)
        return f"p10 {q[0]:.2f} ms, median {statistics.median(values):.2f} ms, p90 {q[-1]:.2f} ms"

    print(f"word only in 5,000 denied notes: {describe(found)}")
    print(f"word found nowhere:              {describe(nowhere)}")
    print(f"difference of medians: {statistics.median(found) - statistics.median(nowhere):.2f} ms "
          f"over {args.rounds} alternating rounds")


if __name__ == "__main__":
    main()
