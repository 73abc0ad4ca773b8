#!/usr/bin/env python3
"""Faults under a running `quire serve` (issue 24, item 5), each checked through MCP calls.

  disk_full      the vault's file system (a 4 MiB tmpfs) fills up; an overwrite, an edit and a
                 creation must fail with a clear error, leave the original bytes and no temp file,
                 and succeed once space is freed
  read_only      the vault is remounted read-only (bind mount); writes fail clearly, reads and
                 search go on, writes work again after the remount
  vault_gone     the vault folder is renamed away and back, then deleted and restored; the server
                 stays up, answers clearly meanwhile, and serves (and sees new changes) afterwards
  index_deleted  index.db (and its WAL) deleted while running, then between runs
  index_corrupt  index.db overwritten with garbage while running, then between runs; the index is
                 rebuilt automatically and the vault is untouched
  permission     one note unreadable (the server runs as `nobody`; root ignores modes): that note
                 is reported, the rest served, and it is served once readable again

Each fault needs root (mounts, setpriv); without it the script prints SKIP and exits 0.
  quick (CI):  faults.py --quick     (every fault, small vault)
  long:        faults.py             (the same faults, plus a 2,000-note vault for the index ones)
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rel_stdio import Server, ToolResult, quire_bin, run, server_env, wait_until  # noqa: E402

NOTES = {
    "Welcome.md": "---\ntags: [intro]\n---\n# Welcome\n\nThe welcome note mentions zebrafish.\n",
    "Projects/Alpha.md": "# Alpha\n\nAlpha body about kestrels.\n\n- [ ] a task\n\nSee [[Welcome]].\n",
    "Projects/Beta.md": "# Beta\n\nBeta body about otters.\n",
    "Daily/2024-01-01.md": "# 2024-01-01\n\nFirst day.\n",
}


class Checks:
    def __init__(self, seed: int):
        self.seed = seed
        self.failures: list[str] = []
        self.passed = 0
        self.codes: dict[str, str] = {}

    def expect(self, fault: str, ok: bool, what: str, detail: str = ""):
        if ok:
            self.passed += 1
        else:
            self.failures.append(f"[{fault}] {what}" + (f"\n      {detail}" if detail else ""))
            print(f"  FAIL [{fault}] {what}" + (f": {detail}" if detail else ""), flush=True)

    def error(self, fault: str, result: ToolResult, codes: tuple[str, ...], words: tuple[str, ...], what: str):
        """A failed call with one of `codes` whose message contains one of `words` (case-insensitive)."""
        text = result.text.lower()
        self.codes[f"{fault}: {what}"] = result.text[:200]
        self.expect(
            fault,
            result.is_error and result.code in codes and any(w in text for w in words),
            f"{what}: expected {'/'.join(codes)} naming {words}",
            result.text[:300] if result.is_error else f"the call succeeded: {result.text[:200]}",
        )


def write_notes(root: Path, notes: dict[str, str]):
    for rel, text in notes.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")


def tree_hash(root: Path) -> dict[str, str]:
    """Every visible file's sha256 (hidden ones, like .obsidian/ and the trash, are Quire's too)."""
    out = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root)
        if p.is_file() and not any(s.startswith(".") for s in rel.parts):
            out[rel.as_posix()] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def temp_files(root: Path) -> list[str]:
    return [p.relative_to(root).as_posix() for p in root.rglob(".quire*") if p.is_file()]


def read(server: Server, path: str) -> ToolResult:
    return server.call("vault_read_note", {"path": path})


def search_paths(server: Server, query: str) -> list[str] | None:
    result = server.call("vault_search", {"query": query, "mode": "keyword"})
    if result.is_error:
        return None
    return [r["path"] for r in result.data["results"]]


def serves(checks: Checks, fault: str, server: Server, when: str):
    """The server answers reads and searches of notes the fault did not touch."""
    beta = read(server, "Projects/Beta.md")
    checks.expect(fault, not beta.is_error and "otters" in beta.data.get("content", ""), f"{when}: another note still reads", beta.text[:200])
    hits = search_paths(server, "kestrels")
    checks.expect(fault, hits is not None and "Projects/Alpha.md" in hits, f"{when}: search still answers", str(hits))


def revision_of(server: Server, path: str) -> str:
    result = read(server, path)
    if result.is_error:
        raise RuntimeError(f"cannot read {path}: {result.text}")
    return result.data["revision"]


def mount(*args: str):
    subprocess.run(["mount", *args], check=True)


def umount(path: Path):
    subprocess.run(["umount", str(path)], check=False)


class Case:
    """A fresh vault, state folder and (optionally started) server under `tmp/name`."""

    def __init__(self, tmp: Path, name: str, notes: dict[str, str] = NOTES, vault: Path | None = None):
        self.dir = tmp / name
        self.dir.mkdir()
        self.vault = vault or self.dir / "vault"
        self.vault.mkdir(parents=True, exist_ok=True)
        write_notes(self.vault, notes)
        self.home = self.dir / "home"
        self.home.mkdir()
        self.index = self.home / "index.db"
        self.server: Server | None = None

    def start(self, **kw) -> Server:
        self.server = Server(self.vault, self.index, self.home, self.dir / "serve.log", **kw)
        # Ready: the first tool call waits for the startup reconcile.
        self.server.call("vault_list_notes", {}, timeout=300)
        return self.server

    def stop(self) -> int:
        code = self.server.stop() if self.server else 0
        self.server = None
        return code

    def log(self) -> str:
        try:
            return (self.dir / "serve.log").read_text(errors="replace")
        except OSError:
            return ""


def fault_disk_full(tmp: Path, checks: Checks):
    f = "disk_full"
    mnt = tmp / "full"
    mnt.mkdir()
    mount("-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mnt))
    try:
        case = Case(tmp, f, vault=mnt / "vault")
        server = case.start()
        alpha = case.vault / "Projects/Alpha.md"
        original = alpha.read_bytes()
        revision = revision_of(server, "Projects/Alpha.md")
        filler = mnt / "filler"
        with open(filler, "wb", buffering=0) as out:
            try:
                while True:
                    out.write(b"\0" * 65536)
            except OSError:
                pass
            # Byte-sized leftovers too, so not even a small note fits.
            try:
                while True:
                    out.write(b"\0" * 512)
            except OSError:
                pass
        big = "# Alpha\n\n" + ("A long rewrite that does not fit. " * 4000) + "\n"
        result = server.call("vault_write_note", {"path": "Projects/Alpha.md", "body": big, "overwrite": True, "expected_revision": revision})
        checks.error(f, result, ("disk_full", "storage_full", "no_space"), ("space", "full"), "overwrite on a full disk")
        checks.expect(f, alpha.read_bytes() == original, "the original note is intact after the failed overwrite")
        result = server.call("vault_replace_in_note", {"path": "Projects/Alpha.md", "old_text": "Alpha body about kestrels.", "new_text": "Alpha body about kestrels. " + "More. " * 2000})
        checks.error(f, result, ("disk_full", "storage_full", "no_space"), ("space", "full"), "edit on a full disk")
        checks.expect(f, alpha.read_bytes() == original, "the original note is intact after the failed edit")
        result = server.call("vault_write_note", {"path": "New/Fresh.md", "body": "# Fresh\n\n" + "x" * 20000})
        checks.error(f, result, ("disk_full", "storage_full", "no_space"), ("space", "full"), "creation on a full disk")
        checks.expect(f, not (case.vault / "New/Fresh.md").exists(), "no partial note is left by the failed creation")
        checks.expect(f, temp_files(case.vault) == [], "no temp file is left behind", str(temp_files(case.vault)))
        serves(checks, f, server, "disk full")
        filler.unlink()
        result = server.call("vault_write_note", {"path": "Projects/Alpha.md", "body": big, "overwrite": True, "expected_revision": revision})
        checks.expect(f, not result.is_error and alpha.read_text() == big, "the overwrite succeeds once space is freed", result.text[:200])
        result = server.call("vault_write_note", {"path": "New/Fresh.md", "body": "# Fresh\n\nfreshly made\n"})
        checks.expect(f, not result.is_error, "the creation succeeds once space is freed", result.text[:200])
        checks.expect(f, server.alive(), "the server is still running")
        case.stop()
    finally:
        umount(mnt)


def fault_read_only(tmp: Path, checks: Checks):
    f = "read_only"
    case = Case(tmp, f)
    server = case.start()
    revision = revision_of(server, "Projects/Alpha.md")
    before = tree_hash(case.vault)
    mount("--bind", str(case.vault), str(case.vault))
    try:
        mount("-o", "remount,ro,bind", str(case.vault))
        result = server.call("vault_write_note", {"path": "Projects/Alpha.md", "body": "# Alpha\n\nrewritten\n", "overwrite": True, "expected_revision": revision})
        checks.error(f, result, ("read_only",), ("read-only", "read only"), "overwrite on a read-only file system")
        result = server.call("vault_append_daily_note", {"date": "2024-01-01", "text": "an entry"})
        checks.error(f, result, ("read_only",), ("read-only", "read only"), "daily append on a read-only file system")
        result = server.call("vault_delete_note", {"path": "Projects/Beta.md"})
        checks.error(f, result, ("read_only",), ("read-only", "read only"), "delete on a read-only file system")
        checks.expect(f, tree_hash(case.vault) == before, "the vault is unchanged")
        serves(checks, f, server, "read-only")
    finally:
        umount(case.vault)
    result = server.call("vault_write_note", {"path": "Projects/Alpha.md", "body": "# Alpha\n\nrewritten about kestrels\n", "overwrite": True, "expected_revision": revision})
    checks.expect(f, not result.is_error, "the overwrite succeeds after the remount read-write", result.text[:200])
    checks.expect(f, server.alive(), "the server is still running")
    case.stop()


def sees_new_file(server: Server, vault: Path, word: str, rel: str) -> bool:
    """A file written behind the server's back shows up in search: the watcher is alive."""
    (vault / rel).parent.mkdir(parents=True, exist_ok=True)
    (vault / rel).write_text(f"# Marker\n\nThe word {word} appears here.\n")
    found, _ = wait_until(lambda: rel in (search_paths(server, word) or []), timeout=15, period=0.2)
    return bool(found)


def fault_vault_gone(tmp: Path, checks: Checks):
    f = "vault_gone"
    case = Case(tmp, f)
    server = case.start()
    backup = case.dir / "backup"
    shutil.copytree(case.vault, backup, symlinks=True)
    away = case.dir / "vault.away"
    for how in ("renamed away", "deleted"):
        if how == "renamed away":
            os.rename(case.vault, away)
        else:
            shutil.rmtree(case.vault)
        time.sleep(0.5)
        result = read(server, "Projects/Beta.md")
        checks.expect(f, result.is_error and result.code != "internal" and "vault" in result.text.lower(),
                      f"vault {how}: a read answers a clear error naming the vault", result.text[:300])
        checks.codes[f"{f}: read while {how}"] = result.text[:200]
        result = server.call("vault_write_note", {"path": "Gone.md", "body": "# Gone\n"})
        checks.expect(f, result.is_error, f"vault {how}: a write fails", result.text[:300])
        checks.codes[f"{f}: write while {how}"] = result.text[:200]
        checks.expect(f, not away.exists() or how != "deleted", "nothing recreated the vault elsewhere")
        checks.expect(f, not case.vault.exists(), f"vault {how}: the write did not recreate the vault folder")
        checks.expect(f, server.alive(), f"vault {how}: the server is still running")
        if how == "renamed away":
            os.rename(away, case.vault)
        else:
            shutil.copytree(backup, case.vault, symlinks=True)
        time.sleep(0.5)
        if how == "deleted":
            # A new folder is a new inode: the landlock sandbox (fixed at start) holds the old one,
            # so only a restart can serve it (under systemd Quire exits for one; run by hand, as
            # here, it cannot). Until then the answer must say so.
            result = read(server, "Projects/Beta.md")
            checks.codes[f"{f}: read after the vault came back as a new folder"] = result.text[:200]
            checks.expect(f, result.is_error and result.code == "permission_denied" and "restart" in result.text,
                          "vault back as a new folder: reads answer permission_denied naming a restart", result.text[:300])
            # The watch guard looks once a second (its heartbeat): give it that long to say so.
            wait_until(lambda: "replaced by a new one" in case.log(), timeout=5, period=0.2)
            case.stop()
            server = case.start()
        serves(checks, f, server, f"vault back after being {how}")
        word = "quokka" + ("r" if how == "renamed away" else "d")
        checks.expect(f, sees_new_file(server, case.vault, word, f"Back/{word}.md"),
                      f"vault back after being {how}: a file written outside Quire is seen (the watch recovered)")
    case.stop()
    checks.expect(f, "replaced by a new one" in case.log(), "the log names the replaced vault folder and the restart it needs")

    # Without the sandbox the process can reach the new folder: the watch guard watches it and
    # catches the index up, with no restart.
    case = Case(tmp, f + "_unconfined")
    config = case.home / "quire.toml"
    config.write_text('sandbox = "off"\n')
    server = case.start(extra=("--config", str(config)))
    backup = case.dir / "backup"
    shutil.copytree(case.vault, backup, symlinks=True)
    shutil.rmtree(case.vault)
    time.sleep(0.5)
    (backup / "Restored.md").write_text("# Restored\n\nA note about narwhals, only in the backup.\n")
    shutil.copytree(backup, case.vault, symlinks=True)
    found, _ = wait_until(lambda: "Restored.md" in (search_paths(server, "narwhals") or []), timeout=15, period=0.2)
    checks.expect(f, bool(found), "unconfined, vault back as a new folder: what it held is searchable without a restart")
    serves(checks, f, server, "unconfined, vault back as a new folder")
    checks.expect(f, sees_new_file(server, case.vault, "quokkau", "Back/quokkau.md"),
                  "unconfined, vault back as a new folder: a later file written outside Quire is seen")
    checks.expect(f, server.alive(), "unconfined: the server is still running")
    case.stop()


def index_files(index: Path) -> list[Path]:
    return [Path(str(index) + s) for s in ("", "-wal", "-shm")]


def big_notes(count: int, rng: random.Random) -> dict[str, str]:
    words = ["alpha", "beta", "gamma", "delta", "kestrel", "otter", "heron", "lynx", "marten", "vole"]
    notes = dict(NOTES)
    for i in range(count):
        body = " ".join(rng.choice(words) for _ in range(60))
        notes[f"Bulk/{i % 20}/Note {i}.md"] = f"# Note {i}\n\n{body}\n\n[[Note {rng.randrange(count)}]]\n"
    return notes


def fault_index(tmp: Path, checks: Checks, mode: str, bulk: int, rng: random.Random):
    f = f"index_{mode}"
    case = Case(tmp, f, notes=big_notes(bulk, rng))
    server = case.start()
    before = tree_hash(case.vault)
    if mode == "deleted":
        for p in index_files(case.index):
            p.unlink(missing_ok=True)
    else:
        size = case.index.stat().st_size
        with open(case.index, "r+b") as db:
            # Keep the header (so SQLite still opens it) and smash the pages after it.
            db.seek(4096)
            db.write(os.urandom(max(4096, size - 4096)))
    # Several calls at once, so new read connections are opened on the damaged path.
    import concurrent.futures as cf

    with cf.ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda q: server.call("vault_search", {"query": q, "mode": "keyword"}), ["kestrels", "otters", "zebrafish", "kestrel", "otter", "heron", "lynx", "vole"] * 2))
    failed = [r.text[:200] for r in results if r.is_error]
    checks.codes[f"{f}: search while running"] = failed[0] if failed else "answered"
    checks.expect(f, not failed, f"index {mode} while running: searches still answer", "; ".join(failed[:2]))
    serves(checks, f, server, f"index {mode} while running")
    result = server.call("vault_write_note", {"path": "After.md", "body": "# After\n\nwritten after the damage, about wombats\n"})
    checks.expect(f, not result.is_error, f"index {mode} while running: a write still works", result.text[:200])
    hits, _ = wait_until(lambda: "After.md" in (search_paths(server, "wombats") or []), timeout=15)
    checks.expect(f, bool(hits), f"index {mode} while running: the new note is searchable")
    checks.expect(f, server.alive(), f"index {mode} while running: the server is still running")
    case.stop()
    before["After.md"] = tree_hash(case.vault).get("After.md", "")
    # Between runs.
    if mode == "deleted":
        for p in index_files(case.index):
            p.unlink(missing_ok=True)
    else:
        for p in index_files(case.index)[1:]:
            p.unlink(missing_ok=True)
        case.index.write_bytes(os.urandom(64 * 1024))
    server = case.start()
    hits = search_paths(server, "wombats")
    checks.expect(f, hits is not None and "After.md" in hits, f"index {mode} between runs: rebuilt at start, search answers", str(hits))
    serves(checks, f, server, f"index {mode} between runs")
    case.stop()
    after = tree_hash(case.vault)
    # The memory layer's starter files are the server's own; everything else must be byte-identical.
    changed = [p for p in set(before) | set(after) if before.get(p) != after.get(p) and not p.startswith("About Me/")]
    checks.expect(f, changed == [], f"index {mode}: the vault is untouched", str(changed[:5]))
    verify = run([str(quire_bin()), "index", "--vault", str(case.vault), "--index", str(case.index), "--verify"], case.home)
    checks.expect(f, verify.returncode == 0, f"index {mode}: --verify agrees afterwards", verify.stdout[-300:] + verify.stderr[-300:])


def fault_permission(tmp: Path, checks: Checks):
    f = "permission"
    case = Case(tmp, f)
    secret = case.vault / "Projects/Secret.md"
    secret.write_text("# Secret\n\nOnly root reads this, about pangolins.\n")
    for d in (case.dir, case.vault, case.home):
        d.chmod(0o755)
    subprocess.run(["chown", "-R", "nobody:nogroup", str(case.vault), str(case.home)], check=True)
    os.chown(secret, 0, 0)
    secret.chmod(0o600)
    # tmp itself must be traversable by nobody.
    for parent in (tmp, case.dir):
        parent.chmod(0o755)
    env = server_env(case.home)
    server = case.start(wrapper=("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"), env=env)
    result = read(server, "Projects/Secret.md")
    checks.error(f, result, ("permission_denied", "path_forbidden", "not_readable"), ("permission",), "reading the unreadable note")
    serves(checks, f, server, "one note unreadable")
    log = case.log()
    checks.expect(f, any("cannot be read" in line and "Projects/Secret.md" in line for line in log.splitlines()),
                  "the server log names the note the index had to leave out")
    listing = server.call("vault_list_notes", {"folder": "Projects"})
    paths = [n["path"] for n in (listing.data or {}).get("notes", [])] if not listing.is_error else []
    checks.expect(f, "Projects/Alpha.md" in paths, "listing still works", listing.text[:200])
    checks.codes[f"{f}: listed"] = "Secret.md listed" if "Projects/Secret.md" in paths else "Secret.md not listed"
    result = server.call("vault_write_note", {"path": "Projects/Gamma.md", "body": "# Gamma\n\nwritten by nobody\n"})
    checks.expect(f, not result.is_error, "writing another note works", result.text[:200])
    os.chown(secret, 65534, 65534)
    secret.chmod(0o644)
    result = read(server, "Projects/Secret.md")
    checks.expect(f, not result.is_error and "pangolins" in result.data.get("content", ""), "the note reads once permitted", result.text[:200])
    hits, _ = wait_until(lambda: "Projects/Secret.md" in (search_paths(server, "pangolins") or []), timeout=15)
    checks.expect(f, bool(hits), "the note is searchable once permitted (without a restart)")
    checks.expect(f, server.alive(), "the server is still running")
    case.stop()


FAULTS = ["disk_full", "read_only", "vault_gone", "index_deleted", "index_corrupt", "permission"]


def main() -> int:
    # A killed run still unmounts and removes its temp dir (the finally blocks run).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seed", type=int, default=int(time.time()) % 100000)
    ap.add_argument("--only", nargs="*", choices=FAULTS)
    ap.add_argument("--keep", action="store_true", help="keep the temp dir (server logs) for debugging")
    a = ap.parse_args()
    print(f"faults.py seed={a.seed} quick={a.quick} binary={quire_bin()}", flush=True)
    if os.geteuid() != 0:
        print("SKIP faults.py: needs root (tmpfs and bind mounts, setpriv to an unprivileged user)")
        return 0
    rng = random.Random(a.seed)
    checks = Checks(a.seed)
    started = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix="quire-faults-"))
    tmp.chmod(0o755)
    timings = {}
    try:
        for fault in a.only or FAULTS:
            t0 = time.monotonic()
            print(f"{fault} ...", flush=True)
            try:
                if fault == "disk_full":
                    fault_disk_full(tmp, checks)
                elif fault == "read_only":
                    fault_read_only(tmp, checks)
                elif fault == "vault_gone":
                    fault_vault_gone(tmp, checks)
                elif fault.startswith("index_"):
                    fault_index(tmp, checks, fault.split("_", 1)[1], 200 if a.quick else 2000, rng)
                elif fault == "permission":
                    fault_permission(tmp, checks)
            except Exception as error:  # a crashed step is a failed property, reported with the rest
                checks.expect(fault, False, "the fault run raised", repr(error)[:500])
            timings[fault] = time.monotonic() - t0
    finally:
        subprocess.run(["umount", "-R", str(tmp / "full")], stderr=subprocess.DEVNULL, check=False)
        if a.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print("--- fault figures ---")
    for fault, seconds in timings.items():
        print(f"{fault} s: {seconds:.1f}")
    for what, text in checks.codes.items():
        print(f"answer {what}: {text}")
    print(f"checks passed: {checks.passed}")
    print(f"checks failed: {len(checks.failures)}")
    print(f"wall s: {time.monotonic() - started:.0f}")
    if checks.failures:
        print(f"FAIL (seed {a.seed}):")
        for failure in checks.failures:
            print(f"  {failure}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
