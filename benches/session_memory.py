#!/usr/bin/env python3
"""What one 2025-11-25 MCP session costs in memory, and what the session caps bound it to
(issue 47, F3).

Starts `quire serve --http` on a copy of examples/vault, opens sessions one after another
(`initialize`, then `notifications/initialized`, as a client does) with the owner token and keeps
them open, and reads the server's resident memory (VmRSS) every `--step` sessions. Each sample says
how much memory grew since the first (taken after a warm-up, so one-off allocations are not
counted), per session opened since.

    benches/session_memory.py --sessions 4000               the cost of a session (caps raised to fit them all)
    benches/session_memory.py --sessions 3000 --total-cap 1024 --identity-cap 1024
                                                            the cap in force: growth stops at 1,024 sessions

With `--baseline`, no configuration is written (a Quire without the `[http]` session keys).
QUIRE_BIN picks the binary (default: target/release/quire if built, else target/debug/quire).
"""
import argparse
import http.client
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
INITIALIZE = json.dumps({
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
})
INITIALIZED = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})


def quire_bin() -> Path:
    if os.environ.get("QUIRE_BIN"):
        return Path(os.environ["QUIRE_BIN"])
    release = REPO / "target" / "release" / "quire"
    return release if release.exists() else REPO / "target" / "debug" / "quire"


def rss_kib(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+)", status).group(1))


def start(work: Path, args) -> tuple[subprocess.Popen, str, int, str]:
    vault = work / "vault"
    shutil.copytree(REPO / "examples" / "vault", vault, symlinks=True)
    command = [str(quire_bin()), "serve", "--vault", str(vault), "--http", "127.0.0.1:0"]
    if not args.baseline:
        config = work / "quire.toml"
        config.write_text(
            f"[http]\nmax_sessions = {args.total_cap}\nmax_sessions_per_identity = {args.identity_cap}\n")
        command += ["--config", str(config)]
    env = dict(os.environ, XDG_STATE_HOME=str(work / "state"), XDG_DATA_HOME=str(work / "data"))
    out = open(work / "server.out", "w+")
    process = subprocess.Popen(command, stdout=out, stderr=open(work / "server.err", "w"), env=env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        text = (work / "server.out").read_text()
        url = re.search(r"URL:\s+http://([^/\s]+)/mcp", text)
        token = re.search(r"Token:\s+(\S+)", text)
        if url and token:
            host, port = url.group(1).rsplit(":", 1)
            return process, host, int(port), token.group(1)
        time.sleep(0.1)
    process.kill()
    raise SystemExit(f"the server printed no URL: {(work / 'server.err').read_text()[-2000:]}")


def open_session(connection: http.client.HTTPConnection, token: str) -> tuple[int, str | None]:
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json",
               "Accept": "application/json, text/event-stream"}
    connection.request("POST", "/mcp", INITIALIZE, headers)
    answer = connection.getresponse()
    answer.read()
    session = answer.getheader("mcp-session-id")
    if answer.status != 200 or session is None:
        return answer.status, None
    connection.request("POST", "/mcp", INITIALIZED, {
        **headers, "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"})
    connection.getresponse().read()
    return answer.status, session


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--step", type=int, default=500)
    parser.add_argument("--total-cap", type=int, default=None, help="[http] max_sessions (default: room for all)")
    parser.add_argument("--identity-cap", type=int, default=None, help="[http] max_sessions_per_identity (default: the total)")
    parser.add_argument("--baseline", action="store_true", help="write no configuration")
    args = parser.parse_args()
    args.total_cap = args.total_cap or args.sessions + args.warmup
    args.identity_cap = args.identity_cap or args.total_cap
    work = Path(tempfile.mkdtemp(prefix="quire-sessions-"))
    process, host, port, token = start(work, args)
    try:
        connection = http.client.HTTPConnection(host, port, timeout=60)
        for _ in range(args.warmup):
            open_session(connection, token)
        time.sleep(1)
        first = rss_kib(process.pid)
        print(f"binary {quire_bin()}; after {args.warmup} warm-up sessions: {first / 1024:.1f} MiB resident")
        refused = 0
        began = time.monotonic()
        for opened in range(1, args.sessions + 1):
            status, _ = open_session(connection, token)
            refused += status != 200
            if opened % args.step == 0 or opened == args.sessions:
                now = rss_kib(process.pid)
                print(f"  {opened:>6} more sessions ({refused} refused): {now / 1024:.1f} MiB, "
                      f"{(now - first) / opened:.1f} KiB per session opened")
        elapsed = time.monotonic() - began
        print(f"opened {args.sessions} more in {elapsed:.1f} s; resident memory grew "
              f"{(rss_kib(process.pid) - first) / 1024:.1f} MiB")
    finally:
        process.terminate()
        process.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
