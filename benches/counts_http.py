#!/usr/bin/env python3
"""The counted vocabularies at scale (issue 52, item 1): `vault_list_tags`,
`vault_list_property_keys`, `vault_list_property_values` and the `vault-orientation` prompt
(note and folder counts) through `quire serve --http`
(sandbox on), stateless 2026-07-28 requests, for the owner and for an identity that reads three
of the vault's top folders. Prints p50 and p95 over the measured calls. A figure, not an assertion.

    python benches/gen_vault.py /tmp/v100k --notes 100000 --vocab-from ../shared/vaults/tasks-docs
    QUIRE_BIN=target/release/quire target/py/bin/python benches/counts_http.py /tmp/v100k [--calls 40]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
READER = "counts-reader-0123456789abcdefghijklmnopqrstuvwxyz"
CALLS = [
    ("vault_list_tags", {"limit": 50}),
    ("vault_list_property_keys", {"limit": 50}),
    ("vault_list_property_values", {"key": "status", "limit": 50}),
    # The orientation an agent asks for first: note and folder counts, recent notes, vocabulary.
    ("prompt:vault-orientation", {}),
]


def call(url: str, token: str, tool: str, arguments: dict) -> float:
    method, name = ("prompts/get", tool[len("prompt:"):]) if tool.startswith("prompt:") else ("tools/call", tool)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": {
        "name": name, "arguments": arguments,
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}}).encode()
    request = urllib.request.Request(url, data=body, headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": method, "Mcp-Name": name})
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=120) as answer:
        text = answer.read().decode()
    elapsed = (time.perf_counter() - started) * 1000
    if '"isError":true' in text or '"items":[]' in text or '"error":{' in text:
        raise SystemExit(f"{tool} answered {text[:400]}")
    return elapsed


def serve(binary: str, vault: Path, work: Path, config: Path | None) -> tuple[subprocess.Popen, str, str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = dict(os.environ, XDG_STATE_HOME=str(work / "state"), RUST_LOG="warn")
    args = [binary, "serve", "--vault", str(vault), "--http", f"127.0.0.1:{port}"]
    if config:
        args += ["--config", str(config)]
    server = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=open(work / "err.log", "a"),
                              env=env, text=True)
    token = READER
    if config is None:
        for line in server.stdout:
            if line.strip().startswith("Token:"):
                token = line.split()[-1]
                break
    return server, f"http://127.0.0.1:{port}/mcp", token


def measure(binary: str, vault: Path, work: Path, config: Path | None, calls: int) -> dict:
    server, url, token = serve(binary, vault, work, config)
    try:
        deadline = time.monotonic() + 600
        while True:
            try:
                call(url, token, *CALLS[0])
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit((work / "err.log").read_text()[-2000:])
                time.sleep(0.2)
        figures = {}
        for tool, arguments in CALLS:
            for _ in range(5):
                call(url, token, tool, arguments)
            times = [call(url, token, tool, arguments) for _ in range(calls)]
            figures[tool] = (statistics.median(times), statistics.quantiles(times, n=20)[-1])
        return figures
    finally:
        server.terminate()
        server.wait(20)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("vault", type=Path)
    parser.add_argument("--calls", type=int, default=40)
    args = parser.parse_args()
    binary = os.environ.get("QUIRE_BIN", str(REPO / "target/release/quire"))
    with tempfile.TemporaryDirectory(prefix="quire-counts-") as tmp:
        work = Path(tmp)
        (work / "reader.token").write_text(READER + "\n")
        (work / "reader.token").chmod(0o600)
        config = work / "quire.toml"
        config.write_text('[[identity]]\nname = "reader"\ntoken_file = "reader.token"\n'
                          'read = ["Projects/", "Areas/", "Resources/"]\n')
        owner = measure(binary, args.vault, work, None, args.calls)
        reader = measure(binary, args.vault, work, config, args.calls)
    notes = sum(1 for _ in args.vault.rglob("*.md"))
    print(f"{notes} notes, {args.calls} calls each after 5 warm-up calls (p50 / p95):")
    for tool, _ in CALLS:
        print(f"  {tool}: owner {owner[tool][0]:.1f} / {owner[tool][1]:.1f} ms, "
              f"reader of 3 folders {reader[tool][0]:.1f} / {reader[tool][1]:.1f} ms")


if __name__ == "__main__":
    main()
