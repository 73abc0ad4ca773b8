#!/usr/bin/env python3
"""Load and soak over Streamable HTTP with bearer auth (issue 24, item 6).

Stateless MCP 2026-07-28 requests come from wrk (tests/reliability/mcp.lua), 2025-11-25 sessions
from the official Python SDK (one ClientSession per simulated agent). For each concurrency it
prints calls/s and p50/p99 per tool, then soaks at 32 connections mixing reads, searches, greps
and writes while sampling the server's resident memory, open descriptors and threads.

    tests/reliability/load.py            the long run: 10k-note vault, 1/8/32/128, a grep flood, 30 min soak
    tests/reliability/load.py --quick    the CI variant: example vault, 1/8/32, 3 s each, 45 s soak

Exits non-zero on any error answer, a p99 above 3x p50 is reported (not fatal: a shared CI
machine cannot promise tails), and a soak whose memory, descriptors or threads keep growing fails.
Needs wrk (apt-get install wrk). QUIRE_BIN picks the binary (default: release if built, else debug).
"""
import argparse
import asyncio
import json
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
LUA = Path(__file__).resolve().parent / "mcp.lua"
MODERN = "2026-07-28"


def log(*parts):
    print(*parts, flush=True)


def quire_bin() -> Path:
    if os.environ.get("QUIRE_BIN"):
        return Path(os.environ["QUIRE_BIN"])
    release = REPO / "target/release/quire"
    return release if release.exists() else REPO / "target/debug/quire"


def vault_source(size: int | None) -> Path:
    if size is None:
        return REPO / "examples/vault"
    generated = REPO / f"target/bench-revisions/vault-{size}"
    if not generated.is_dir():
        vocab = SHARED / "vaults/tasks-docs"
        if not vocab.is_dir():
            if os.environ.get("QUIRE_REQUIRE_SHARED") == "1":
                sys.exit(f"FAIL: {vocab} is missing and QUIRE_REQUIRE_SHARED=1")
            log(f"SKIP: {vocab} is absent (needed to generate the {size}-note vault)")
            sys.exit(0)
        generated.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [sys.executable, str(REPO / "benches/gen_vault.py"), "--notes", str(size),
             "--vocab-from", str(vocab), "--seed", "42", str(generated)],
            check=True, stdout=subprocess.DEVNULL)
    return generated


class Server:
    def __init__(self, binary: Path, vault: Path, work: Path, token_wait: float = 60):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.out = work / "server.out"
        env = dict(os.environ, XDG_STATE_HOME=str(work / "state"), RUST_LOG="warn")
        # Every simulated agent uses the owner token, and the levels' sessions stay open for five
        # idle minutes: room for all of them, above the default caps (64 per identity).
        config = work / "quire.toml"
        config.write_text("[http]\nmax_sessions = 4096\nmax_sessions_per_identity = 4096\n")
        self.process = subprocess.Popen(
            [str(binary), "serve", "--vault", str(vault), "--http", f"127.0.0.1:{self.port}",
             "--config", str(config)],
            stdout=open(self.out, "w"), stderr=open(work / "server.err", "w"), env=env)
        # It listens once the vault is open: seconds at a million notes (benches/million.py).
        deadline = time.time() + token_wait
        self.token = None
        while time.time() < deadline and self.token is None:
            match = re.search(r"^  Token: (\S+)", self.out.read_text(), re.M)
            self.token = match.group(1) if match else None
            time.sleep(0.1)
        if self.token is None:
            self.stop()
            sys.exit(f"FAIL: the server printed no token: {(work / 'server.err').read_text()[-2000:]}")

    def headers(self) -> dict:
        return {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream"}

    def sample(self) -> dict:
        pid = self.process.pid
        status = Path(f"/proc/{pid}/status").read_text()
        rss = int(re.search(r"VmRSS:\s+(\d+)", status).group(1))
        threads = int(re.search(r"Threads:\s+(\d+)", status).group(1))
        # Sockets come and go with the load generator's connections; files, pipes and the
        # like are what a leak would grow.
        fds = sockets = 0
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:"):
                sockets += 1
            else:
                fds += 1
        return {"rss_kb": rss, "threads": threads, "fds": fds, "sockets": sockets}

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()


def stateless_body(tool: str, arguments: dict) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": tool, "arguments": arguments,
        "_meta": {"io.modelcontextprotocol/protocolVersion": MODERN,
                  "io.modelcontextprotocol/clientCapabilities": {}}}}, separators=(",", ":"))


def workload(vault: Path, rng: random.Random) -> dict:
    """Per tool, the arguments to rotate through, drawn from the vault's own notes."""
    notes = sorted(str(p.relative_to(vault)) for p in vault.rglob("*.md")
                   if not any(part.startswith(".") for part in p.relative_to(vault).parts))
    words = sorted({w.lower() for n in notes for w in re.findall(r"[A-Za-z]{5,}", Path(n).stem)})
    if len(words) < 4:
        words += ["garden", "notes", "project", "meeting"]
    reads = [{"path": p} for p in rng.sample(notes, min(200, len(notes)))]
    UPDATE_PATHS[:] = [read["path"] for read in reads[:64]]
    searches = [{"query": " ".join(rng.sample(words, 2)), "limit": 10} for _ in range(100)]
    greps = [{"pattern": rng.choice(words), "limit": 20} for _ in range(100)]
    return {"vault_read_note": reads, "vault_search": searches, "vault_grep": greps}


RUNS = iter(range(1, 1 << 30))
# The notes the soak's property updates rewrite in place (set from the vault by `workload`).
UPDATE_PATHS: list[str] = []


def write_template() -> str:
    """A write to a note no earlier wrk run used: run number, then wrk thread and counter."""
    return stateless_body("vault_write_note", {"path": f"Load/r{next(RUNS)}-t%d-%d.md", "body": "load test note\n"})


def session_body(stateless: str) -> str:
    """The same call in a 2025-11-25 session: the 2026-07-28 request metadata left out."""
    body = json.loads(stateless)
    body["params"].pop("_meta", None)
    return json.dumps(body, separators=(",", ":"))


# `--same-client`: stateless requests from one wrk thread per connection too, the shape sessions
# need, so the two revisions' rows differ only in the server (32 threads cost the client more).
SAME_CLIENT = False


def wrk(server: Server, work: Path, bodies: list[str], connections: int, seconds: int,
        sessions: bool = False) -> dict:
    """`sessions`: one 2025-11-25 session per connection (a wrk thread each), for calls only."""
    script = work / "run.lua"
    update = stateless_body("vault_update_properties", {"path": "PATH", "properties": {"soak": 0}})
    update = update.replace("%", "%%").replace('"PATH"', '"%s"').replace('"soak":0', '"soak":%d')
    script.write_text("bodies = " + lua_list(bodies) + "\nwrite_template = " + lua_string(write_template())
                      + "\nupdate_template = " + lua_string(update)
                      + "\nupdate_paths = " + lua_list(UPDATE_PATHS)
                      + "\nsession_mode = " + ("true" if sessions else "false")
                      + "\nsession_bodies = " + lua_list([session_body(b) for b in bodies if b not in ("WRITE", "UPDATE")] or ["{}"])
                      + "\n" + LUA.read_text())
    headers = []
    for name, value in {**server.headers(), "MCP-Protocol-Version": MODERN,
                        "Mcp-Method": "tools/call"}.items():
        headers += ["-H", f"{name}: {value}"]
    threads = connections if (sessions or SAME_CLIENT) else max(1, min(2, connections))
    done = subprocess.run(
        ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--timeout", "10s", "--latency",
         "-s", str(script), *headers, server.url], capture_output=True, text=True)
    match = re.search(r"RESULT requests=(\d+) rps=([\d.]+) p50_ms=([\d.]+) p99_ms=([\d.]+) errors=(\d+) timed_out=(\d+)",
                      done.stdout)
    if not match:
        sys.exit(f"FAIL: wrk printed no result:\n{done.stdout}\n{done.stderr}")
    if done.stderr.strip():
        log(done.stderr.strip()[:600])
    return {"requests": int(match.group(1)), "rps": float(match.group(2)), "p50": float(match.group(3)),
            "p99": float(match.group(4)), "errors": int(match.group(5)),
            "timed_out": int(match.group(6))}


def wrk_table(server: Server, work: Path, chosen: dict, levels: list[int], seconds: int,
              sessions: bool = False) -> list[str]:
    """A row per tool and level through `wrk`; returns the failures (rows with errors)."""
    failures = []
    log(f"  {'tool':<18} {'conc':>4} {'calls/s':>9} {'p50 ms':>8} {'p99 ms':>8} errors")
    for connections in levels:
        for tool, tool_bodies in chosen.items():
            # Each row from a settled server: a write row leaves the index taking in its notes.
            wait_idle(server)
            figure = wrk(server, work, tool_bodies, connections, seconds, sessions=sessions)
            tail = "  p99>3xp50" if figure["p99"] > 3 * figure["p50"] else ""
            if figure["timed_out"]:
                tail += f"  ({figure['timed_out']} answers cut short by their time budget)"
            log(f"  {tool:<18} {connections:>4} {figure['rps']:>9.0f} {figure['p50']:>8.2f} "
                f"{figure['p99']:>8.2f} {figure['errors']}{tail}")
            if figure["errors"]:
                where = f"in {connections} sessions" if sessions else f"at {connections}"
                failures.append(f"wrk {tool} {where}: {figure['errors']} errors")
    return failures


def lua_string(text: str) -> str:
    # A JSON string literal with the text's own UTF-8 is a valid Lua string literal (Lua has no
    # \u escapes, so none may appear).
    return json.dumps(text, ensure_ascii=False)


def lua_list(items: list[str]) -> str:
    return "{" + ",".join(lua_string(item) for item in items) + "}"


async def sessions(server: Server, load: dict, count: int, seconds: int) -> dict:
    """`count` concurrent 2025-11-25 sessions of the official SDK, each calling the tools in turn."""
    from mcp import ClientSession
    from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

    latencies: dict[str, list[float]] = {tool: [] for tool in load}
    errors: list[str] = []
    stop_at = time.monotonic() + seconds + 5  # handshakes first

    async def agent(number: int):
        rng = random.Random(number)
        headers = {"Authorization": f"Bearer {server.token}"}
        async with create_mcp_http_client(headers=headers) as http:
            async with streamable_http_client(server.url, http_client=http) as streams:
                async with ClientSession(streams[0], streams[1]) as session:
                    await session.initialize()
                    if session.protocol_version != "2025-11-25":
                        errors.append(f"negotiated {session.protocol_version}")
                    tools = list(load)
                    turn = number
                    while time.monotonic() < stop_at:
                        tool = tools[turn % len(tools)]
                        turn += 1
                        started = time.perf_counter()
                        result = await session.call_tool(tool, rng.choice(load[tool]))
                        latencies[tool].append((time.perf_counter() - started) * 1000)
                        if result.is_error:
                            errors.append(f"{tool}: {result.content[0].text[:200]}")

    started = time.monotonic()
    outcomes = await asyncio.gather(*(agent(n) for n in range(count)), return_exceptions=True)
    elapsed = time.monotonic() - started
    errors += [f"session failed: {o!r}"[:300] for o in outcomes if isinstance(o, BaseException)]
    figures = {}
    for tool, values in latencies.items():
        values.sort()
        if values:
            figures[tool] = {"calls": len(values), "rps": len(values) / elapsed,
                             "p50": values[len(values) // 2], "p99": values[int(len(values) * 0.99)]}
    return {"tools": figures, "errors": errors}


def wait_idle(server: Server, seconds: int = 120) -> float:
    """Until the server has used under 5 % of a core for a whole second (the index has taken in
    what was written before), so each row starts from the same settled state. Returns the seconds
    waited."""
    def cpu() -> float:
        fields = Path(f"/proc/{server.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    began = time.monotonic()
    while time.monotonic() - began < seconds:
        before = cpu()
        time.sleep(1)
        if cpu() - before < 0.05:
            break
    return time.monotonic() - began


def wait_ready(server: Server, seconds: int = 600):
    """Until a search answers with results (the startup index build is done)."""
    import urllib.request
    body = stateless_body("vault_search", {"query": "note", "limit": 1}).encode()
    deadline = time.time() + seconds
    while time.time() < deadline:
        request = urllib.request.Request(server.url, data=body, headers={
            **server.headers(), "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call",
            "Mcp-Name": "vault_search"})
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                if b'"isError":true' not in answer.read():
                    return
        except OSError:
            pass
        time.sleep(0.5)
    sys.exit("FAIL: the server never became ready")


def trend(samples: list[dict], key: str) -> tuple[float, float]:
    """Mean of the second quarter against the last quarter (the first is warm-up)."""
    values = [s[key] for s in samples]
    q = max(1, len(values) // 4)
    return statistics.mean(values[q:2 * q]), statistics.mean(values[-q:])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--size", type=int, help="synthetic vault notes (default 10000; --quick: example vault)")
    parser.add_argument("--concurrency", default=None, help="comma list (default 1,8,32,128; --quick 1,8,32)")
    parser.add_argument("--seconds", type=int, default=None, help="per tool and concurrency (default 20; --quick 3)")
    parser.add_argument("--soak-minutes", type=float, default=None, help="default 30; --quick 1")
    parser.add_argument("--seed", type=int, default=24)
    parser.add_argument("--tools", default=None,
                        help="comma list of the stateless tools to load (default: read, search, grep, write)")
    parser.add_argument("--no-sessions", action="store_true", help="skip the 2025-11-25 SDK sessions")
    parser.add_argument("--same-client", action="store_true",
                        help="stateless wrk with one thread per connection too, as sessions need")
    parser.add_argument("--flood", action=argparse.BooleanOptionalAction, default=None,
                        help="reads alone and beside 128 grepping connections (default: on, off with --quick)")
    args = parser.parse_args()
    global SAME_CLIENT
    SAME_CLIENT = args.same_client
    quick = args.quick
    size = args.size if args.size else (None if quick else 10000)
    levels = [int(c) for c in (args.concurrency or ("1,8,32" if quick else "1,8,32,128")).split(",")]
    seconds = args.seconds or (3 if quick else 20)
    flood = args.flood if args.flood is not None else not quick
    soak_minutes = args.soak_minutes if args.soak_minutes is not None else (0.75 if quick else 30)
    if shutil.which("wrk") is None:
        sys.exit("FAIL: wrk is needed (apt-get install wrk)")
    binary = quire_bin()
    rng = random.Random(args.seed)
    log(f"load: {binary}, vault {'example' if size is None else f'{size} notes'}, seed {args.seed}, "
        f"concurrency {levels}, {seconds} s each, soak {soak_minutes} min")
    failures = []
    with tempfile.TemporaryDirectory(prefix="quire-load-") as tmp:
        work = Path(tmp)
        vault = work / "vault"
        shutil.copytree(vault_source(size), vault, symlinks=True)
        server = Server(binary, vault, work)
        try:
            began = time.monotonic()
            wait_ready(server)
            # A search answers while the startup build is still running; the tables start after it.
            wait_idle(server)
            log(f"ready and idle in {time.monotonic() - began:.1f} s")
            load = workload(vault, rng)
            bodies = {tool: [stateless_body(tool, a) for a in argsets] for tool, argsets in load.items()}
            bodies["vault_write_note"] = ["WRITE"]
            if args.tools:
                unknown = set(args.tools.split(",")) - set(bodies)
                if unknown:
                    sys.exit(f"unknown tool(s) {sorted(unknown)}; choose from {sorted(bodies)}")
                chosen = {tool: bodies[tool] for tool in args.tools.split(",")}
            else:
                chosen = bodies
            log("\nstateless 2026-07-28 (wrk):")
            failures += wrk_table(server, work, chosen, levels, seconds)
            if flood:
                # Reads while 128 clients grep: a grep flood must not starve the cheap tools.
                reads, greps = bodies["vault_read_note"], bodies["vault_grep"]
                (work / "flood").mkdir(exist_ok=True)
                alone = wrk(server, work, reads, 4, seconds)
                flooding: dict = {}
                flooder = threading.Thread(target=lambda: flooding.update(
                    wrk(server, work / "flood", greps, 128, seconds + 6)))
                flooder.start()
                time.sleep(3)
                beside = wrk(server, work, reads, 4, seconds)
                flooder.join()
                log(f"\ngrep flood: reads at 4 connections alone {alone['rps']:.0f}/s, p50 {alone['p50']:.2f} / "
                    f"p99 {alone['p99']:.2f} ms; beside 128 grepping connections {beside['rps']:.0f}/s, "
                    f"p50 {beside['p50']:.2f} / p99 {beside['p99']:.2f} ms; the greps {flooding.get('rps', 0):.0f}/s, "
                    f"p50 {flooding.get('p50', 0):.0f} / p99 {flooding.get('p99', 0):.0f} ms")
                for name, figure in (("reads alone", alone), ("reads in the flood", beside), ("the flood", flooding)):
                    if figure.get("errors"):
                        failures.append(f"grep flood, {name}: {figure['errors']} errors")
            if not args.no_sessions:
                log("\n2025-11-25 sessions (wrk: one session per connection, opened with initialize):")
                # Fresh-note writes are the stateless table's.
                calls = {tool: b for tool, b in chosen.items() if b != ["WRITE"]}
                failures += wrk_table(server, work, calls, levels, seconds, sessions=True)
            log("\n2025-11-25 sessions (official Python SDK, one client process; its own cost included):")
            log(f"  {'tool':<18} {'conc':>4} {'calls/s':>9} {'p50 ms':>8} {'p99 ms':>8}")
            for count in [] if args.no_sessions else levels:
                outcome = asyncio.run(sessions(server, load, count, seconds))
                for tool, figure in outcome["tools"].items():
                    log(f"  {tool:<18} {count:>4} {figure['rps']:>9.0f} {figure['p50']:>8.2f} {figure['p99']:>8.2f}")
                if outcome["errors"]:
                    failures.append(f"{count} sessions: {len(outcome['errors'])} errors, first: {outcome['errors'][0]}")
            # Writes in the soak edit 64 notes in place, so the data set stays the same size and
            # a growing memory figure means a leak, not a larger vault.
            mix = bodies["vault_read_note"][:50] + bodies["vault_search"][:20] + bodies["vault_grep"][:10] + ["UPDATE"] * 5
            log(f"\nsoak: wrk, 32 connections, {soak_minutes} min, mix of reads/searches/greps/property updates 50:20:10:5")
            samples = [server.sample()]
            soak_end = time.monotonic() + soak_minutes * 60
            totals = {"requests": 0, "errors": 0}
            slice_seconds = 30 if soak_minutes >= 5 else 10
            while time.monotonic() < soak_end:
                span = max(1, min(slice_seconds, int(soak_end - time.monotonic())))
                figure = wrk(server, work, mix, 32, span)
                totals["requests"] += figure["requests"]
                totals["errors"] += figure["errors"]
                samples.append(server.sample())
                log(f"  t={int(time.monotonic() - (soak_end - soak_minutes * 60)):>5}s {figure['rps']:>7.0f}/s "
                    f"p99 {figure['p99']:>7.2f} ms  rss {samples[-1]['rss_kb'] / 1024:.1f} MB  "
                    f"fds {samples[-1]['fds']} (+{samples[-1]['sockets']} sockets)  threads {samples[-1]['threads']}")
            if totals["errors"]:
                failures.append(f"soak: {totals['errors']} errors in {totals['requests']} calls")
            if len(samples) >= 5:
                # Slack for what a sample can catch in flight: a file open per connection, the
                # blocking pool's threads coming and going, allocator noise. A leak over a long
                # soak outgrows it.
                for key, ratio, extra in (("rss_kb", 1.15, 8192), ("fds", 1.0, 34), ("threads", 1.1, 8)):
                    early, late = trend(samples, key)
                    grows = late > early * ratio + extra
                    log(f"  {key}: {early:.0f} -> {late:.0f}{'  GROWING' if grows else '  flat'}")
                    # A soak shorter than a few minutes is still the blocking pool's warm-up
                    # (threads and memory climb to the load's level, then stay): reported only.
                    if grows and soak_minutes >= 5:
                        failures.append(f"soak: {key} grows from {early:.0f} to {late:.0f}")
            log(f"\nsoak: {totals['requests']} calls, {totals['errors']} errors")
        finally:
            server.stop()
    if failures:
        log("\nFAILED:\n  " + "\n  ".join(failures))
        sys.exit(1)
    log("\nload: no errors")


if __name__ == "__main__":
    main()
