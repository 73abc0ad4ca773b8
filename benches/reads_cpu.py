#!/usr/bin/env python3
"""Stateless `vault_read_note` (or `vault_search`) at 32 connections on the 10k synthetic vault,
with the server's CPU time per call (from /proc): a figure that moves less than calls/s when the
machine's speed does.

    QUIRE_BIN=target/release/quire target/py/bin/python benches/reads_cpu.py [--seconds 6] [--rounds 2]
    target/py/bin/python benches/reads_cpu.py --quire before=BIN --quire after=BIN --rounds 8

Runs `quire serve --http` (sandbox on) on a copy of the vault `tests/reliability/load.py`
generates, one server per build, waits until each has built its index and is idle, then runs wrk
(2 threads, 32 connections) over 200 calls per round. With several builds the rounds alternate
build by build, so each pair of rounds shares the VM's minute, and the medians are printed last.
"""
import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests/reliability"))
import load  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--quire", action="append", default=[], metavar="NAME=BIN",
                        help="a build to time (repeatable); default: QUIRE_BIN or target/release")
    parser.add_argument("--tool", default="vault_read_note", choices=["vault_read_note", "vault_search"])
    args = parser.parse_args()
    builds = [tuple(spec.split("=", 1)) for spec in args.quire] or [("quire", str(load.quire_bin()))]
    work = Path(tempfile.mkdtemp(prefix="quire-reads-"))
    servers = {}
    try:
        for name, binary in builds:
            home = work / name
            home.mkdir()
            shutil.copytree(load.vault_source(10000), home / "vault", symlinks=True)
            servers[name] = (load.Server(Path(binary), home / "vault", home), home)
        for name, (server, _) in servers.items():
            load.wait_ready(server)
            load.wait_idle(server)
            print(f"{name} ({dict(builds)[name]}): resident at rest {server.sample()['rss_kb'] // 1024} MB",
                  flush=True)
        calls = load.workload(work / builds[0][0] / "vault", random.Random(24))[args.tool]
        bodies = [load.stateless_body(args.tool, call) for call in calls]
        figures = {name: [] for name in servers}
        for _ in range(args.rounds):
            for name, (server, home) in servers.items():
                load.wait_idle(server)
                before = cpu_seconds(server)
                figure = load.wrk(server, home, bodies, 32, args.seconds)
                used = cpu_seconds(server) - before
                per_call = 1e6 * used / (figure["rps"] * args.seconds)
                figures[name].append((figure["rps"], per_call))
                print(f"  {name}: {figure['rps']:.0f} calls/s, p50 {figure['p50']:.2f} / p99 {figure['p99']:.2f} ms, "
                      f"{per_call:.0f} us of server CPU per call, {figure['errors']} errors", flush=True)
        for name, (server, _) in servers.items():
            rates = [rate for rate, _ in figures[name]]
            costs = [cost for _, cost in figures[name]]
            print(f"{name}: median {statistics.median(rates):.0f} calls/s (range {min(rates):.0f}-{max(rates):.0f}), "
                  f"median {statistics.median(costs):.0f} us per call; resident after {server.sample()['rss_kb'] // 1024} MB")
    finally:
        for server, _ in servers.values():
            server.stop()
        shutil.rmtree(work, ignore_errors=True)


def cpu_seconds(server: load.Server) -> float:
    fields = Path(f"/proc/{server.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


if __name__ == "__main__":
    main()
