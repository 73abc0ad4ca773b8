#!/usr/bin/env python3
"""Stateless `vault_read_note` at 32 connections on the 10k synthetic vault, with the server's CPU
time per read (from /proc): a figure that moves less than reads/s when the machine's speed does.

    QUIRE_BIN=target/release/quire target/py/bin/python benches/reads_cpu.py [--seconds 6] [--rounds 2]

Runs `quire serve --http` (sandbox on) on a copy of the vault `tests/reliability/load.py` generates,
waits until the index is built and the server idle, then runs wrk (2 threads, 32 connections) over
200 notes per round, and prints reads/s, p50/p99, CPU per read, and resident memory before and after.
"""
import argparse
import os
import random
import shutil
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
    args = parser.parse_args()
    binary = load.quire_bin()
    work = Path(tempfile.mkdtemp(prefix="quire-reads-"))
    try:
        vault = work / "vault"
        shutil.copytree(load.vault_source(10000), vault, symlinks=True)
        server = load.Server(binary, vault, work)
        try:
            load.wait_ready(server)
            load.wait_idle(server)
            print(f"{binary}: resident at rest {server.sample()['rss_kb'] // 1024} MB", flush=True)
            reads = load.workload(vault, random.Random(24))["vault_read_note"]
            bodies = [load.stateless_body("vault_read_note", read) for read in reads]
            for _ in range(args.rounds):
                load.wait_idle(server)
                before = cpu_seconds(server)
                figure = load.wrk(server, work, bodies, 32, args.seconds)
                used = cpu_seconds(server) - before
                calls = figure["rps"] * args.seconds
                print(f"  {figure['rps']:.0f} reads/s, p50 {figure['p50']:.2f} / p99 {figure['p99']:.2f} ms, "
                      f"{1e6 * used / calls:.0f} us of server CPU per read, {figure['errors']} errors", flush=True)
            print(f"  resident after the reads {server.sample()['rss_kb'] // 1024} MB")
        finally:
            server.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)


def cpu_seconds(server: load.Server) -> float:
    fields = Path(f"/proc/{server.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


if __name__ == "__main__":
    main()
