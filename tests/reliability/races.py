#!/usr/bin/env python3
"""Agent edits racing an external writer that rewrites the same notes as Obsidian and sync clients do.

One `quire serve` (stdio); two agent threads send edits over it, each adding one unique marker line
(`agent-A000123`): vault_patch_note append with the revision just read, vault_patch_note and
vault_insert_at_anchor without one, vault_append_daily_note. Meanwhile an external writer thread
rewrites the same few notes, each rewrite adding one unique marker line (`ext-E000045`), in one of
three ways: in place (open with O_TRUNC, write), by rename (a hidden temp file renamed over the
note, as Syncthing does), or by delete-and-create. Like an editor, the external writer reads the
note, builds its new text, and reads again just before writing (retrying when it changed).

At the end, with everything stopped, the notes must show:
- zero lost updates: every external marker whose write completed is in its note;
- zero duplicates: no marker appears more than once;
- an agent edit answered `conflict` (or any other error) wrote nothing: its marker is absent;
- an agent edit answered with success appears exactly once, unless an external rewrite that read
  the note before that edit and wrote after it began replaced it (the external writer's own
  read-modify-write window, not Quire's; counted and printed as `agent_overwritten_by_external`);
- no temp file of Quire's (`.quire-*.tmp`) is left.

Run:
    QUIRE_BIN=target/debug/quire target/py/bin/python tests/reliability/races.py --quick   # 1,200 edits, one seed
    QUIRE_BIN=target/debug/quire target/py/bin/python tests/reliability/races.py           # 1,200 edits
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DAILY_DATE = "2026-12-05"
NOTES = ["Race/R0.md", "Race/R1.md", "Race/R2.md", f"Daily/{DAILY_DATE}.md"]
AGENT = re.compile(r"agent-A(\d{6})\b")
EXTERNAL = re.compile(r"ext-E(\d{6})\b")


class Client:
    """Concurrent JSON-RPC requests over one `quire serve` stdio pipe."""

    def __init__(self, quire: str, vault: Path, index: Path, env: dict, log: Path):
        self.log = open(log, "ab")
        self.proc = subprocess.Popen(
            [quire, "serve", "--vault", str(vault), "--index", str(index)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, env=env,
        )
        self.lock = threading.Lock()
        self.waiting: dict[int, queue.Queue] = {}
        self.next_id = 0
        threading.Thread(target=self.reader, daemon=True).start()
        self.request("initialize", {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "races.py", "version": "1"},
        })
        with self.lock:
            self.proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
            self.proc.stdin.flush()

    def reader(self) -> None:
        for line in self.proc.stdout:
            message = json.loads(line)
            box = self.waiting.pop(message.get("id"), None)
            if box is not None:
                box.put(message)

    def request(self, method: str, params: dict) -> dict:
        box: queue.Queue = queue.Queue()
        with self.lock:
            self.next_id += 1
            self.waiting[self.next_id] = box
            self.proc.stdin.write((json.dumps(
                {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
            ) + "\n").encode())
            self.proc.stdin.flush()
        return box.get(timeout=120)

    def call(self, tool: str, arguments: dict) -> tuple[bool, str, dict]:
        response = self.request("tools/call", {"name": tool, "arguments": arguments})
        if "error" in response:
            return False, f"protocol error {response['error']}", {}
        result = response["result"]
        text = result["content"][0]["text"] if result.get("content") else ""
        return not result.get("isError"), text, result.get("structuredContent") or {}

    def stop(self) -> None:
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


class External:
    """Rewrites notes from outside Quire, each rewrite adding one marker line."""

    def __init__(self, vault: Path, rng: random.Random, modes: list[str]):
        self.vault = vault
        self.rng = rng
        self.stop = threading.Event()
        self.writes: list[dict] = []  # completed: marker, note, mode, base, read_t, write_t
        self.modes = {mode: 0 for mode in modes}
        self.retries = 0
        self.error: str | None = None

    def run(self) -> None:
        try:
            number = 0
            while not self.stop.is_set():
                note = self.rng.choice(NOTES)
                mode = self.rng.choice(list(self.modes))
                path = self.vault / note
                read_t = time.monotonic()
                try:
                    base = path.read_bytes()
                except FileNotFoundError:
                    continue
                number += 1
                marker = f"ext-E{number:06d}"
                new = base + f"- {marker}\n".encode()
                # An editor writes what it holds; it re-reads first only to notice a change.
                try:
                    if path.read_bytes() != base:
                        self.retries += 1
                        continue
                except FileNotFoundError:
                    continue
                if mode == "in_place":
                    with open(path, "wb") as f:
                        f.write(new)
                elif mode == "rename":
                    temp = path.with_name(f".syncthing.{path.name}.tmp")
                    temp.write_bytes(new)
                    os.replace(temp, path)
                else:
                    path.unlink()
                    with open(path, "wb") as f:
                        f.write(new)
                self.modes[mode] += 1
                self.writes.append({
                    "marker": marker, "note": note, "mode": mode, "base": base,
                    "read_t": read_t, "write_t": time.monotonic(),
                })
                time.sleep(self.rng.uniform(0, 0.004))
        except Exception as error:  # noqa: BLE001 - reported as a failure of the run
            self.error = repr(error)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="the CI variant: 1,200 edits (about 15 s; 200 never met the torn-read wipe)")
    parser.add_argument("--edits", type=int, help="agent edits (default 1,200)")
    parser.add_argument("--agents", type=int, default=2, help="agent threads")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--keep", action="store_true", help="keep the temp dir (server log included)")
    parser.add_argument("--modes", default="in_place,rename,delete_create",
                        help="the external writer's ways of writing (comma-separated)")
    parser.add_argument("--kinds", default="patch_revision,patch,insert,daily",
                        help="the agent's edits (comma-separated)")
    args = parser.parse_args()
    edits = args.edits or 1200
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    print(f"seed: {seed}", flush=True)
    rng = random.Random(seed)
    quire = os.environ.get("QUIRE_BIN") or str(REPO / "target" / "debug" / "quire")

    work = Path(tempfile.mkdtemp(prefix="quire-races-"))
    vault = work / "vault"
    (vault / "Race").mkdir(parents=True)
    (vault / "Daily").mkdir()
    (vault / ".obsidian").mkdir()
    (vault / ".obsidian" / "daily-notes.json").write_text('{"folder": "Daily", "format": "YYYY-MM-DD"}')
    for note in NOTES:
        (vault / note).write_text(f"# {Path(note).stem}\n\n## Log\n\n")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "RUST_BACKTRACE": "1"}
    for sub in ("state", "data", "config", "cache"):
        (work / "xdg" / sub).mkdir(parents=True)
        env[f"XDG_{sub.upper()}_HOME"] = str(work / "xdg" / sub)
    started = time.monotonic()
    client = Client(quire, vault, work / "index.db", env, work / "quire-stderr.log")

    external = External(vault, random.Random(rng.randrange(2**32)), args.modes.split(","))
    kinds = args.kinds.split(",")
    agent_rngs = [random.Random(rng.randrange(2**32)) for _ in range(args.agents)]
    results: list[dict] = []
    results_lock = threading.Lock()
    numbers = iter(range(1, edits + 1))
    numbers_lock = threading.Lock()

    def agent(arng: random.Random) -> None:
        while True:
            with numbers_lock:
                number = next(numbers, None)
            if number is None:
                return
            marker = f"agent-A{number:06d}"
            kind = arng.choice(kinds)
            note = arng.choice(NOTES[:3])
            start = time.monotonic()
            if kind == "patch_revision":
                ok, text, data = client.call("vault_read_note", {"path": note})
                arguments = {"path": note, "operation": "append", "content": f"- {marker}"}
                if ok:
                    arguments["expected_revision"] = data["revision"]
                    ok, text, data = client.call("vault_patch_note", arguments)
            elif kind == "patch":
                ok, text, data = client.call(
                    "vault_patch_note", {"path": note, "operation": "append", "content": f"- {marker}"})
            elif kind == "insert":
                ok, text, data = client.call("vault_insert_at_anchor", {
                    "path": note, "anchor": "## Log", "position": "after", "content": f"- {marker}"})
            else:
                note = NOTES[3]
                ok, text, data = client.call(
                    "vault_append_daily_note", {"date": DAILY_DATE, "text": marker})
                if ok and data.get("path") != note:
                    raise RuntimeError(f"the daily note is {data.get('path')}, not {note}")
            with results_lock:
                results.append({
                    "marker": marker, "note": note, "kind": kind, "ok": ok,
                    "code": "ok" if ok else text.split(":", 1)[0], "text": text,
                    "start": start, "end": time.monotonic(),
                })

    ext_thread = threading.Thread(target=external.run)
    ext_thread.start()
    agents = [threading.Thread(target=agent, args=(r,)) for r in agent_rngs]
    for t in agents:
        t.start()
    for t in agents:
        t.join()
    external.stop.set()
    ext_thread.join()
    client.stop()
    wall = time.monotonic() - started

    failures: list[str] = []
    if external.error:
        failures.append(f"the external writer failed: {external.error}")
    final = {note: (vault / note).read_text() for note in NOTES}
    # A write Quire could neither keep in place nor drop (it reached Quire's bytes while they
    # were briefly in place) is kept beside the note as a conflict copy: it survives there.
    copies = {
        str(p.relative_to(vault)): p.read_text()
        for p in vault.rglob("* (conflict quire *).md")
    }
    agent_counts: dict[str, int] = {}
    ext_counts: dict[str, int] = {}
    for note, text in final.items():
        for number in AGENT.findall(text):
            agent_counts[f"agent-A{number}"] = agent_counts.get(f"agent-A{number}", 0) + 1
        for number in EXTERNAL.findall(text):
            ext_counts[f"ext-E{number}"] = ext_counts.get(f"ext-E{number}", 0) + 1
    in_copies = {f"ext-E{n}" for text in copies.values() for n in EXTERNAL.findall(text)}

    duplicates = sorted(m for m, n in {**agent_counts, **ext_counts}.items() if n > 1)
    for marker in duplicates:
        failures.append(f"duplicate: {marker} appears {max(agent_counts.get(marker, 0), ext_counts.get(marker, 0))} times")
    lost = [w for w in external.writes
            if ext_counts.get(w["marker"], 0) == 0 and w["marker"] not in in_copies]
    kept_in_copies = sum(
        1 for w in external.writes if ext_counts.get(w["marker"], 0) == 0 and w["marker"] in in_copies
    )
    # A conflict copy keeps the external writes that reached Quire's old file between its last
    # check and its swap: normally one, several only when they all landed while one agent edit of
    # that note was in flight (the server descheduled there, as on a loaded CI machine). Markers
    # kept only in a copy beyond that mean a note lost history (a torn read of an in-place save
    # that an edit was based on).
    by_marker = {w["marker"]: w for w in external.writes}
    for name, text in sorted(copies.items()):
        only_here = [by_marker[f"ext-E{n}"] for n in EXTERNAL.findall(text)
                     if ext_counts.get(f"ext-E{n}", 0) == 0 and f"ext-E{n}" in by_marker]
        if len(only_here) <= 1:
            continue
        note = name.split(" (conflict quire ")[0] + ".md"
        first = min(w["write_t"] for w in only_here)
        last = max(w["write_t"] for w in only_here)
        during_one_edit = any(
            r["note"] == note and r["ok"] and r["start"] < first and r["end"] > last for r in results)
        if not during_one_edit:
            failures.append(
                f"{len(only_here)} external writes survive only in {name}, written over "
                f"{(last - first) * 1000:.1f} ms outside any one agent edit of {note}: "
                "a note lost history that a copy still holds")
    for w in lost:
        overlapping = [r for r in results if r["note"] == w["note"] and r["ok"] and r["end"] > w["write_t"]]
        failures.append(
            f"lost update: {w['marker']} ({w['mode']}) written to {w['note']} is gone; "
            f"agent successes on that note after it: {[r['marker'] + ' ' + r['kind'] for r in overlapping][:5]}")
    overwritten = 0
    codes: dict[str, int] = {}
    for r in results:
        codes[r["code"]] = codes.get(r["code"], 0) + 1
        count = agent_counts.get(r["marker"], 0)
        if not r["ok"]:
            # A write whose bytes were ever visible answers success (a late change to the old file
            # is kept as a conflict copy, never swapped back), so an error means nothing was written.
            if count:
                failures.append(f"{r['marker']} ({r['kind']} on {r['note']}) answered `{r['text'][:200]}` but was written")
            continue
        if count == 0:
            explained = any(
                w["note"] == r["note"] and w["read_t"] < r["end"] and w["write_t"] > r["start"]
                and r["marker"].encode() not in w["base"]
                for w in external.writes
            )
            if explained:
                overwritten += 1
            else:
                failures.append(f"{r['marker']} ({r['kind']} on {r['note']}) succeeded but is not in the note, and no external rewrite explains it")
    leftovers = sorted(
        str(p.relative_to(vault)) for p in vault.rglob(".*")
        if p.is_file() and ".obsidian" not in p.parts
    )
    if leftovers:
        failures.append(f"hidden files left in the vault: {leftovers}")

    for message in failures[:30]:
        print(f"FAIL (seed {seed}): {message}")
    print("-- races.py figures --")
    print(f"seed: {seed}")
    print(f"mode: {'quick' if args.quick else 'long'}")
    print(f"agent_edits: {len(results)}")
    for code, n in sorted(codes.items()):
        print(f"agent_{code}: {n}")
    for kind in ("patch_revision", "patch", "insert", "daily"):
        mine = [r for r in results if r["kind"] == kind]
        print(f"agent_{kind}: {len(mine)} (conflict {sum(r['code'] == 'conflict' for r in mine)})")
    print(f"external_writes: {len(external.writes)}")
    for mode, n in external.modes.items():
        print(f"external_{mode}: {n}")
    print(f"external_reread_retries: {external.retries}")
    print(f"lost_updates: {len(lost)}")
    print(f"duplicates: {len(duplicates)}")
    print(f"agent_overwritten_by_external: {overwritten}")
    print(f"conflict_copies: {len(copies)} (external writes kept only there: {kept_in_copies})")
    print(f"violations: {len(failures)}")
    print(f"wall_s: {wall:.1f}")
    if failures or args.keep:
        print(f"work dir kept: {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
