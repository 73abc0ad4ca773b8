#!/usr/bin/env python3
"""Crash consistency: SIGKILL `quire serve` at random points while a client streams writes.

Each round: start `quire serve` (stdio) on a small vault (a copy of examples/vault plus a task
note), pick one operation (whole-note write, note creation, four kinds of edit, a move that rewrites
links, a task update, a daily append), snapshot every file of the vault, send the call, SIGKILL the
server after a random delay (0..--max-delay-ms), and then check, with the server stopped and again
after a restart:

- every file is byte-identical to its bytes before the operation or to the bytes the same call
  produces on an un-killed server (a replay on a copy of the before-vault; the `HH:MM` of a daily
  append is the one byte range allowed to differ, since the replay runs in a later minute) - never
  torn, never empty, and no file outside the operation changed;
- no temp file of Quire's atomic writes (`.quire-<pid>-<n>.tmp`, src/vault/write.rs) is left after
  the restart (those found right after the kill are counted: they show the kill landed mid-write);
- after a move the note exists at its old or its new path, never both (a move cut short is
  journaled and finished at the restart), and every link resolves exactly as before the move (the
  broken-link list, with the moved note's path mapped, is unchanged);
- `quire index --verify` (the live index against a fresh rebuild) passes: after every kill in
  the long mode, after every 10th with --quick.

Run:
    QUIRE_BIN=target/debug/quire target/py/bin/python tests/reliability/crash.py --quick
    QUIRE_BIN=target/debug/quire target/py/bin/python tests/reliability/crash.py          # >= 1,000 kills
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLE_VAULT = REPO / "examples" / "vault"
TEMP_NAME = re.compile(r"^\.quire-\d+-\d+\.tmp$")
DAILY_DATE = "2026-11-30"
DAILY_PATH = f"Daily/{DAILY_DATE}.md"
TASKS_PATH = "Tasks/Chores.md"
TASKS_NOTE = "# Chores\n\n## Today\n\n" + "".join(
    f"- [ ] chore number {i} 📅 2026-12-{(i % 28) + 1:02d}\n" for i in range(12)
)
# The moved note: links to it live in Welcome.md, the daily notes and a meeting note.
MOVE_NAMES = ("People/Sam Ortiz.md", "People/Samuel Ortiz.md", "Contacts/Sam Ortiz.md")


class Server:
    """`quire serve` over newline-delimited JSON-RPC on stdio."""

    def __init__(self, quire: str, vault: Path, index: Path, env: dict, log: Path):
        self.log = open(log, "ab")
        self.proc = subprocess.Popen(
            [quire, "serve", "--vault", str(vault), "--index", str(index)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            env=env,
        )
        self.next_id = 0
        self.request("initialize", {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "crash.py", "version": "1"},
        })
        self.notify("notifications/initialized")

    def send(self, message: dict) -> None:
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def notify(self, method: str) -> None:
        self.send({"jsonrpc": "2.0", "method": method})

    def start_request(self, method: str, params: dict) -> int:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    def read_response(self, request_id: int) -> dict:
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"quire closed stdout (rc={self.proc.poll()})")
            message = json.loads(line)
            if message.get("id") == request_id:
                return message

    def request(self, method: str, params: dict) -> dict:
        return self.read_response(self.start_request(method, params))

    def call(self, tool: str, arguments: dict) -> dict:
        response = self.request("tools/call", {"name": tool, "arguments": arguments})
        if "error" in response:
            raise RuntimeError(f"{tool} {arguments}: {response['error']}")
        return response["result"]

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self.log.close()

    def stop(self) -> None:
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under root (hidden ones too, the index and state live outside the vault)."""
    files = {}
    for folder, dirs, names in os.walk(root):
        for name in names:
            path = Path(folder) / name
            files[path.relative_to(root).as_posix()] = path.read_bytes()
    return files


def restore(root: Path, files: dict[str, bytes]) -> None:
    root.mkdir(parents=True)
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def temp_files(files: dict[str, bytes]) -> list[str]:
    return sorted(rel for rel in files if TEMP_NAME.match(rel.rsplit("/", 1)[-1]))


def payload(rng: random.Random, marker: str) -> str:
    """A body from a few bytes to ~256 KiB, so some writes take long enough to be cut."""
    size = rng.choice([20, 200, 2_000, 20_000, 120_000, 250_000])
    line = f"{marker} " + "lorem ipsum dolor sit amet " * 3 + "\n"
    return "# Body\n\n" + line * max(1, size // len(line))


def text_of(result: dict) -> str:
    return result["content"][0]["text"] if result.get("content") else ""


def structured(result: dict) -> dict:
    return result.get("structuredContent") or json.loads(text_of(result))


def broken_links(server: Server) -> list[tuple[str, str]]:
    result = server.call("vault_find_broken_links", {"limit": 1000})
    return sorted((b["source"], b["link"]) for b in structured(result)["broken"])


class Ops:
    """Builds the next operation (tool, arguments, description) from the vault's current state."""

    def __init__(self, rng: random.Random, vault: Path):
        self.rng = rng
        self.vault = vault
        self.counter = 0

    def marker(self) -> str:
        self.counter += 1
        return f"crash-marker-{self.counter:05d}"

    def next(self, server: Server) -> tuple[str, dict]:
        kind = self.rng.choice(
            ["write", "create", "patch", "replace", "insert", "move", "task", "daily"]
        )
        return getattr(self, "op_" + kind)(server)

    def revision(self, server: Server, path: str) -> str:
        return structured(server.call("vault_read_note", {"path": path}))["revision"]

    def op_write(self, server):
        path = self.rng.choice(["Inbox/Scratch.md", "Inbox/Call the plumber.md"])
        if not (self.vault / path).exists():
            return "vault_write_note", {"path": path, "body": payload(self.rng, self.marker())}
        return "vault_write_note", {
            "path": path,
            "body": payload(self.rng, self.marker()),
            "overwrite": True,
            "expected_revision": self.revision(server, path),
        }

    def op_create(self, server):
        return "vault_write_note", {
            "path": f"Inbox/new/{self.marker()}.md",
            "body": f"# New\n\n{self.counter} " + "x" * self.rng.choice([10, 1_000, 20_000]) + "\n",
        }

    def op_patch(self, server):
        return "vault_patch_note", {
            "path": self.rng.choice(["Projects/Garden Redesign.md", "Reading/Café Notes.md"]),
            "operation": "append",
            "content": f"- {self.marker()}",
        }

    def op_replace(self, server):
        path = "Archive/2025 Retro.md"
        text = (self.vault / path).read_text()
        found = re.findall(r"crash-marker-\d{5}", text)
        if not found:
            return "vault_patch_note", {"path": path, "operation": "append", "content": self.marker()}
        return "vault_replace_in_note", {
            "path": path,
            "old_text": found[0],
            "new_text": self.marker(),
        }

    def op_insert(self, server):
        return "vault_insert_at_anchor", {
            "path": TASKS_PATH,
            "anchor": "## Today",
            "position": "after",
            "content": f"note {self.marker()}",
        }

    def op_move(self, server):
        current = next(name for name in MOVE_NAMES if (self.vault / name).exists())
        target = self.rng.choice([name for name in MOVE_NAMES if name != current])
        return "vault_move_note", {"old_path": current, "new_path": target}

    def op_task(self, server):
        tasks = structured(server.call("vault_list_tasks", {"path": TASKS_PATH, "limit": 100}))
        task = self.rng.choice(tasks["tasks"])
        status = "TODO" if task["status_type"] == "DONE" else "DONE"
        return "vault_update_task", {
            "path": TASKS_PATH,
            "line": task["line"],
            "status": status,
            "on_completion": "keep",
        }

    def op_daily(self, server):
        return "vault_append_daily_note", {
            "date": DAILY_DATE,
            "heading": "Log",
            "text": self.marker(),
        }


DAILY_TIME = re.compile(rb"^- \d\d:\d\d (crash-marker-\d{5})$", re.M)


def same_after(tool: str, got: bytes, want: bytes) -> bool:
    if got == want:
        return True
    if tool == "vault_append_daily_note":
        # The replay ran later: the appended line's HH:MM may name another minute.
        return DAILY_TIME.sub(rb"- HH:MM \1", got) == DAILY_TIME.sub(rb"- HH:MM \1", want)
    return False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="about 100 kills (CI)")
    parser.add_argument("--kills", type=int, help="number of kills (default 1,000; 100 with --quick)")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--max-delay-ms", type=float, default=25.0)
    parser.add_argument("--verify-every", type=int, help="run `quire index --verify` every Nth kill")
    parser.add_argument("--keep", action="store_true", help="keep the temp dir")
    args = parser.parse_args()
    kills = args.kills or (100 if args.quick else 1000)
    verify_every = args.verify_every or (10 if args.quick else 1)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    print(f"seed: {seed}", flush=True)
    rng = random.Random(seed)
    quire = os.environ.get("QUIRE_BIN") or str(REPO / "target" / "debug" / "quire")

    work = Path(tempfile.mkdtemp(prefix="quire-crash-"))
    vault = work / "vault"
    index = work / "index.db"
    shutil.copytree(EXAMPLE_VAULT, vault, symlinks=True)
    (vault / "Tasks").mkdir()
    (vault / TASKS_PATH).write_text(TASKS_NOTE)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "RUST_BACKTRACE": "1"}
    for sub in ("state", "data", "config", "cache"):
        (work / "xdg" / sub).mkdir(parents=True)
        env[f"XDG_{sub.upper()}_HOME"] = str(work / "xdg" / sub)
    log = work / "quire-stderr.log"

    counts = {k: 0 for k in (
        "kills", "landed_before", "landed_after", "landed_partial", "response_before_kill",
        "temp_files_at_kill", "moves_both_copies", "verify_runs", "replays",
    )}
    per_tool: dict[str, list[int]] = {}
    failures: list[str] = []
    started = time.monotonic()
    ops = Ops(rng, vault)

    def fail(round_no: int, message: str) -> None:
        failures.append(f"round {round_no}: {message}")
        print(f"FAIL round {round_no} (seed {seed}): {message}", flush=True)

    def verify(round_no: int) -> None:
        counts["verify_runs"] += 1
        run = subprocess.run(
            [quire, "index", "--vault", str(vault), "--index", str(index), "--verify"],
            env=env, capture_output=True, text=True, timeout=300,
        )
        if run.returncode != 0:
            fail(round_no, f"quire index --verify exit {run.returncode}:\n{run.stdout[-3000:]}{run.stderr[-3000:]}")

    def replay(before: dict[str, bytes], tool: str, arguments: dict) -> dict[str, bytes]:
        counts["replays"] += 1
        copy = work / "replay"
        shutil.rmtree(copy, ignore_errors=True)
        restore(copy / "vault", before)
        server = Server(quire, copy / "vault", copy / "index.db", env, log)
        try:
            result = server.call(tool, arguments)
        finally:
            server.stop()
        if result.get("isError"):
            raise RuntimeError(f"replay of {tool} failed: {text_of(result)}")
        after = snapshot(copy / "vault")
        shutil.rmtree(copy, ignore_errors=True)
        return after

    server = Server(quire, vault, index, env, log)
    broken_before = broken_links(server)
    try:
        for round_no in range(1, kills + 1):
            tool, arguments = ops.next(server)
            before = snapshot(vault)
            links_before = broken_links(server) if tool == "vault_move_note" else None
            request_id = server.start_request("tools/call", {"name": tool, "arguments": arguments})
            # Half the kills within the first 3 ms (most edits finish in a few ms), half spread
            # over the slowest operations' time (moves, large writes).
            # A move writes several files and fsyncs each: its kills spread over four times as long.
            longest = args.max_delay_ms * (4 if tool == "vault_move_note" else 1)
            delay = rng.uniform(0, min(3.0, longest) if rng.random() < 0.5 else longest) / 1000
            time.sleep(delay)
            server.kill()
            counts["kills"] += 1
            # Whatever the server wrote before dying is in the pipe: did it answer?
            answered = False
            try:
                rest = server.proc.stdout.read()
                answered = any(
                    json.loads(line).get("id") == request_id for line in rest.splitlines() if line.strip()
                )
            except (ValueError, OSError):
                pass
            counts["response_before_kill"] += answered
            at_kill = snapshot(vault)
            counts["temp_files_at_kill"] += bool(temp_files(at_kill))
            if round_no % verify_every == 0:
                verify(round_no)
            server = Server(quire, vault, index, env, log)
            # A tool call waits for the index, so the restart's reconcile is done after it.
            now_broken = broken_links(server)
            after = snapshot(vault)
            # The sweep of a killed writer's temp files runs after the startup reconcile, on its own thread.
            deadline = time.monotonic() + 10
            while temp_files(after) and time.monotonic() < deadline:
                time.sleep(0.05)
                after = snapshot(vault)
            description = f"{tool} {json.dumps(arguments, ensure_ascii=False)[:300]} (delay {delay * 1000:.1f} ms)"

            leftovers = temp_files(after)
            if leftovers:
                fail(round_no, f"temp files left after restart: {leftovers} after {description}")
            changed = sorted(rel for rel in set(before) | set(after)
                             if before.get(rel) != after.get(rel) and rel not in leftovers)
            if not changed:
                counts["landed_before"] += 1
                per_tool.setdefault(tool, [0, 0, 0])[0] += 1
                if answered:
                    # It answered, so it finished: that it changed nothing must be what it does.
                    pass
                continue
            expected = replay(before, tool, arguments)
            expected_changed = {rel for rel in set(before) | set(expected) if before.get(rel) != expected.get(rel)}
            n_after = 0
            for rel in changed:
                got = after.get(rel)
                if rel not in expected_changed:
                    fail(round_no, f"{rel} changed but the operation does not touch it; {description}")
                elif got is None:
                    # Gone: only right where the finished operation removes it too.
                    if expected.get(rel) is not None:
                        fail(round_no, f"{rel} vanished; {description}")
                    n_after += 1
                elif got == b"":
                    fail(round_no, f"{rel} is empty; {description}")
                elif expected.get(rel) is not None and same_after(tool, got, expected[rel]):
                    n_after += 1
                else:
                    want = expected.get(rel)
                    fail(round_no, (
                        f"{rel} is neither its before nor its after bytes; {description}\n"
                        f"  got    {len(got)} B: {got[:120]!r} ... {got[-120:]!r}\n"
                        f"  before {len(before.get(rel) or b'')} B: {(before.get(rel) or b'')[:120]!r}\n"
                        f"  after  {len(want or b'')} B: {(want or b'')[:120]!r}"
                    ))
            complete = n_after == len(changed) and set(changed) == expected_changed
            if complete:
                counts["landed_after"] += 1
                per_tool.setdefault(tool, [0, 0, 0])[1] += 1
            else:
                counts["landed_partial"] += 1
                per_tool.setdefault(tool, [0, 0, 0])[2] += 1
            if tool == "vault_move_note":
                old, new = arguments["old_path"], arguments["new_path"]
                at_old, at_new = (vault / old).exists(), (vault / new).exists()
                if not at_old and not at_new:
                    fail(round_no, f"the moved note is at neither {old} nor {new}")
                if at_old and at_new:
                    counts["moves_both_copies"] += 1
                    fail(round_no, f"the moved note is at both {old} and {new} after the restart; {description}")
                # Every link resolves as before: the broken list is the same, the moved note's
                # own links (none of them broken here) counted under whichever path it has.
                mapped = sorted((new if s == old else s, l) for s, l in now_broken)
                want = sorted((new if s == old else s, l) for s, l in links_before)
                if mapped != want:
                    fail(round_no, f"links changed by a cut move: broken before {links_before}, now {now_broken}; {description}")
            elif now_broken != broken_before and tool != "vault_write_note":
                fail(round_no, f"broken links changed: {broken_before} -> {now_broken}; {description}")
            broken_before = now_broken
            if answered and not complete and tool != "vault_move_note":
                fail(round_no, f"the call answered but its result is not on disk; {description}")
            if len(failures) > 20:
                break
    finally:
        server.kill()
    verify(kills + 1)
    wall = time.monotonic() - started

    print("-- crash.py figures --")
    print(f"seed: {seed}")
    print(f"mode: {'quick' if args.quick else 'long'}")
    for key, value in counts.items():
        print(f"{key}: {value}")
    for tool, (b, a, p) in sorted(per_tool.items()):
        print(f"landed {tool}: before {b}, after {a}, partial {p}")
    print(f"max_delay_ms: {args.max_delay_ms}")
    print(f"violations: {len(failures)}")
    print(f"wall_s: {wall:.1f}")
    if args.keep or failures:
        print(f"work dir kept: {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
