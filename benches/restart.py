"""A restart of `quire serve` over an up-to-date index, timed until a keyword search answers, for
one or more builds in alternating rounds: a program that prints figures, not a test.

    python3 benches/restart.py VAULT INDEX --quire NAME=BINARY [--quire NAME=BINARY ...] [--rounds 3]

INDEX is an index of VAULT that one of the builds made (`quire index --vault VAULT --index INDEX`,
or kept from `million.py`); each start reconciles it with the vault, so the first round of each
build may also catch the index up. Each start runs as users run it: `--http` on loopback with
`--no-auth` and the default sandbox (landlock enforced). Printed per start: when the port
accepted a connection, when a search first answered, the writer's own reconcile time from the
debug log, and the peak memory of the process until then.
"""

import argparse
import json
import os
import re
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

SEARCH = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
    "name": "vault_search", "arguments": {"query": "project plan", "mode": "keyword", "limit": 1},
    "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
              "io.modelcontextprotocol/clientCapabilities": {}}}}).encode()
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
           "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "vault_search"}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def peak_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def start_once(binary: str, vault: Path, index: Path, state: Path) -> dict:
    port = free_port()
    log = state / "serve.log"
    env = dict(os.environ, QUIRE_LOG="quire=debug", RUST_LOG="quire=debug", XDG_STATE_HOME=str(state))
    began = time.monotonic()
    with open(log, "w") as stderr:
        server = subprocess.Popen(
            [binary, "serve", "--vault", str(vault), "--index", str(index),
             "--http", f"127.0.0.1:{port}", "--no-auth"],
            stdout=subprocess.DEVNULL, stderr=stderr, env=env)
    try:
        listening = None
        while True:
            if server.poll() is not None:
                raise SystemExit(f"FAIL: {binary} exited with {server.returncode}; see {log}")
            try:
                if listening is None:
                    with socket.create_connection(("127.0.0.1", port), timeout=1):
                        listening = time.monotonic() - began
                request = urllib.request.Request(f"http://127.0.0.1:{port}/mcp", data=SEARCH, headers=HEADERS)
                with urllib.request.urlopen(request, timeout=600) as answer:
                    answer.read()
                break
            except OSError:
                time.sleep(0.02)
        answered = time.monotonic() - began
        peak = peak_kb(server.pid) / 1024
    finally:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
    reconcile = re.findall(r"the index is up to date .*?elapsed_ms=(\d+)", log.read_text())
    return {"listening": listening, "answered": answered, "peak": peak,
            "reconcile": int(reconcile[-1]) / 1000 if reconcile else float("nan")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("vault", type=Path)
    parser.add_argument("index", type=Path)
    parser.add_argument("--quire", action="append", required=True, metavar="NAME=BINARY")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    builds = [entry.split("=", 1) for entry in args.quire]
    results: dict[str, list[dict]] = {name: [] for name, _ in builds}
    with tempfile.TemporaryDirectory(prefix="quire-restart-") as tmp:
        for round_no in range(args.rounds):
            # Alternate the order, so neither build always follows the other.
            for name, binary in (builds if round_no % 2 == 0 else builds[::-1]):
                figures = start_once(binary, args.vault, args.index, Path(tmp))
                results[name].append(figures)
                print(f"round {round_no + 1} {name:>10}: listening {figures['listening']:.2f} s, "
                      f"search answered {figures['answered']:.2f} s, reconcile {figures['reconcile']:.2f} s, "
                      f"peak {figures['peak']:.0f} MB", flush=True)
    for name, runs in results.items():
        answered = sorted(run["answered"] for run in runs)
        print(f"{name:>10}: search answered best {answered[0]:.2f} s, median {answered[len(answered) // 2]:.2f} s")


if __name__ == "__main__":
    main()
