#!/usr/bin/env python3
"""Change storms (issue 24, item 4): thousands of files changed at once under a running `quire serve`.

Storms, each applied on disk while the server runs:
  checkout  a `git checkout` of another branch: 70% of the changed files rewritten, 15% deleted,
            15% created (direct writes, as git does);
  download  a sync client's first download: new files in a new folder, each written to a hidden
            temp file and renamed into place (as Syncthing and Nextcloud do);
  rename    a folder renamed in Obsidian: the downloaded folder moved under another name.

Every note carries a `storm` property (s0 at start; the storm's value on each file it writes), so
`vault_list_property_values key=storm` (one cheap indexed query, optionally per folder) tells when
the server's answers reflect the final state. The script measures the time from the first disk
operation until they do, samples the server's VmRSS throughout (peak vs before), then stops it and
checks that (1) `quire index` finds nothing left to catch up (the watcher saw every change: no note
re-read, none removed) and (2) `quire index --verify` finds the index equal to a fresh rebuild.

  quick (CI):  storm.py --quick            5k-note vault, one checkout storm of 5k files
  long:        storm.py                    10k and 100k-note vaults, all three storms of 10k files
Needs ../shared/tools/gen_vault.py (skips with a notice without it unless QUIRE_REQUIRE_SHARED=1).
"""

from __future__ import annotations

import argparse
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rel_stdio import RssSampler, Server, quire_bin, run, wait_until  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
# Memory may grow with a storm (the batch of changed paths, SQLite's page cache, the WAL), but not
# with the vault: a storm of 10k files may add at most this much over the RSS before it.
RSS_GROWTH_LIMIT_KIB = 256 * 1024
FRONTMATTER = re.compile(r"\A---\n")


class Failure(Exception):
    pass


def stamp(root: Path) -> list[Path]:
    """Gives every note `storm: s0`; returns the notes in a stable order."""
    notes = sorted(p for p in root.rglob("*.md") if not any(s.startswith(".") for s in p.relative_to(root).parts))
    for p in notes:
        p.write_text(with_storm(p.read_text(encoding="utf-8"), "s0"), encoding="utf-8")
    return notes


def with_storm(text: str, value: str) -> str:
    text = re.sub(r"\A---\nstorm: \w+\n", "---\n", text)
    if text.startswith("---\n---\n"):
        text = text[len("---\n---\n"):]
    if FRONTMATTER.match(text):
        return f"---\nstorm: {value}\n" + text[4:]
    return f"---\nstorm: {value}\n---\n" + text


def storm_counts(server: Server, folder: str | None = None) -> dict[str, int] | None:
    arguments = {"key": "storm", "limit": 100}
    if folder:
        arguments["folder"] = folder
    result = server.call("vault_list_property_values", arguments, timeout=300)
    if result.is_error and result.code == "not_found" and folder:
        return None  # the folder is gone (as after a rename)
    if result.is_error:
        raise Failure(f"vault_list_property_values failed: {result.text}")
    return {v["value"]: v["count"] for v in result.data["values"]}


def converge(server: Server, expected: dict, timeout: float) -> float:
    """Seconds until every probe (folder → storm value counts) answers as expected."""
    last = {}

    def probe():
        for folder, counts in expected.items():
            last[folder] = storm_counts(server, folder)
            if last[folder] != counts:
                return False
        return True

    ok, seconds = wait_until(probe, timeout, period=0.2)
    if not ok:
        raise Failure(f"no convergence within {timeout:.0f} s: expected {expected}, last answers {last}")
    return seconds


class Vault:
    def __init__(self, root: Path, notes: list[Path], rng: random.Random):
        self.root, self.rng = root, rng
        self.values: dict[Path, str] = {p: "s0" for p in notes}

    def counts(self, under: str | None = None) -> dict[str, int]:
        out: dict[str, int] = {}
        for p, v in self.values.items():
            if under is None or p.relative_to(self.root).as_posix().startswith(under + "/"):
                out[v] = out.get(v, 0) + 1
        return out

    def checkout(self, size: int, value: str):
        notes = sorted(self.values)
        rewrite = self.rng.sample(notes, min(len(notes), size * 70 // 100))
        rest = sorted(set(notes) - set(rewrite))
        delete = self.rng.sample(rest, min(len(rest), size * 15 // 100))
        create = size - len(rewrite) - len(delete)
        for p in rewrite:
            text = with_storm(p.read_text(encoding="utf-8"), value)
            lines = text.splitlines(keepends=True)
            # A diff in the body (links and tasks included), never moving the properties block.
            body = lines.index("---\n", 1) + 1
            tail = lines[max(body, len(lines) - 5):]
            self.rng.shuffle(tail)
            lines[len(lines) - len(tail):] = tail
            p.write_text("".join(lines), encoding="utf-8")
            self.values[p] = value
        for p in delete:
            p.unlink()
            del self.values[p]
        sources = self.rng.sample(sorted(self.values), create)
        for i, src in enumerate(sources):
            dst = src.with_name(f"{src.stem} branch {value} {i}.md")
            dst.write_text(with_storm(src.read_text(encoding="utf-8"), value), encoding="utf-8")
            self.values[dst] = value

    def download(self, size: int, value: str, folder: str):
        sources = self.rng.sample(sorted(self.values), size)
        for i, src in enumerate(sources):
            dst = self.root / folder / src.relative_to(self.root).parent / f"{src.stem} {i}.md"
            dst.parent.mkdir(parents=True, exist_ok=True)
            tmp = dst.with_name(f".syncthing.{dst.name}.tmp")
            tmp.write_text(with_storm(src.read_text(encoding="utf-8"), value), encoding="utf-8")
            os.rename(tmp, dst)
            self.values[dst] = value

    def rename(self, old: str, new: str):
        (self.root / new).parent.mkdir(parents=True, exist_ok=True)
        os.rename(self.root / old, self.root / new)
        old_root = self.root / old
        self.values = {
            (self.root / new / p.relative_to(old_root)) if p.is_relative_to(old_root) else p: v
            for p, v in self.values.items()
        }


def gen_vault(out: Path, notes: int, seed: int):
    subprocess.run(
        # Quire's port of ../shared/tools/gen_vault.py: the same bytes, 100k notes in a minute
        # instead of about an hour.
        [sys.executable, str(REPO / "benches" / "gen_vault.py"), str(out), "--notes", str(notes),
         "--vocab-from", str(SHARED / "vaults" / "tasks-docs"), "--seed", str(seed),
         "--daily", "100", "--canvases", "5"],
        check=True, stdout=subprocess.DEVNULL,
    )


def kib(n: int) -> str:
    return f"{n / 1024:.0f} MiB"


def one_vault(tmp: Path, notes: int, storms: list[str], size: int, seed: int, figures: dict):
    tag = f"{notes // 1000}k"
    root, index, home = tmp / f"vault{tag}", tmp / f"index{tag}.db", tmp / f"home{tag}"
    home.mkdir()
    started = time.monotonic()
    gen_vault(root, notes, seed)
    vault = Vault(root, stamp(root), random.Random(seed))
    figures[f"{tag} vault notes"] = len(vault.values)
    figures[f"{tag} generate s"] = f"{time.monotonic() - started:.1f}"
    started = time.monotonic()
    run([str(quire_bin()), "index", "--vault", str(root), "--index", str(index)], home, check=True, timeout=7200)
    figures[f"{tag} initial index s"] = f"{time.monotonic() - started:.1f}"

    server = Server(root, index, home, tmp / f"serve{tag}.log")
    try:
        converge(server, {None: vault.counts()}, timeout=600)
        # The memory layer's bootstrap writes its starter files now; let the watcher settle them.
        time.sleep(1)
        for number, kind in enumerate(storms, start=1):
            value = f"{kind[0]}{number}"
            before = server.rss_kib() or 0
            sampler = RssSampler(server.pid)
            print(f"{tag}: {kind} storm of {size} files", flush=True)
            t0 = time.monotonic()
            if kind == "checkout":
                vault.checkout(size, value)
                expected = {None: vault.counts()}
            elif kind == "download":
                vault.download(size, value, "Synced")
                expected = {None: vault.counts(), "Synced": vault.counts("Synced")}
            elif kind == "rename":
                moved = vault.counts("Synced")
                vault.rename("Synced", "Inbox/Synced moved")
                expected = {None: vault.counts(), "Inbox/Synced moved": moved, "Synced": None}
            applied = time.monotonic() - t0
            seconds = converge(server, expected, timeout=max(600, notes / 10))
            total = applied + seconds
            peak = sampler.stop()
            figures[f"{tag} {kind} {size} files: converged s"] = f"{total:.1f} (writing {applied:.1f})"
            figures[f"{tag} {kind} RSS before/peak"] = f"{kib(before)} / {kib(peak)}"
            if peak - before > RSS_GROWTH_LIMIT_KIB:
                raise Failure(f"{kind} storm: RSS grew from {kib(before)} to {kib(peak)}, over {kib(RSS_GROWTH_LIMIT_KIB)}")
            if not server.alive():
                raise Failure(f"the server died during the {kind} storm; log {server.log_path}")
    finally:
        code = server.stop()
    if code not in (0, None):
        raise Failure(f"quire serve exited {code}; log {tmp / f'serve{tag}.log'}")

    caught = run([str(quire_bin()), "index", "--vault", str(root), "--index", str(index)], home, check=True, timeout=7200)
    m = re.search(r"(\d+) read and parsed, \d+ unchanged, (\d+) removed", caught.stdout)
    if not m or m.group(1) != "0" or m.group(2) != "0":
        raise Failure(f"the watcher missed changes: a reconcile after the storms still had work: {caught.stdout.strip()}")
    started = time.monotonic()
    verify = run([str(quire_bin()), "index", "--vault", str(root), "--index", str(index), "--verify"], home, timeout=7200)
    if verify.returncode != 0:
        raise Failure(f"index --verify failed:\n{verify.stdout}\n{verify.stderr}")
    figures[f"{tag} catch-up after stop"] = caught.stdout.strip().splitlines()[0]
    figures[f"{tag} verify"] = verify.stdout.strip().splitlines()[-1] + f" ({time.monotonic() - started:.0f} s)"
    shutil.rmtree(root)


def main() -> int:
    # A killed run still unmounts and removes its temp dir (the finally blocks run).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="CI: one checkout storm of 5k files on a 5k-note vault")
    ap.add_argument("--seed", type=int, default=int(time.time()) % 100000)
    ap.add_argument("--size", type=int, help="files per storm (default 10000, 5000 with --quick)")
    ap.add_argument("--notes", type=int, nargs="*", help="vault sizes (default 10000, or 10000 100000 in long mode)")
    a = ap.parse_args()
    print(f"storm.py seed={a.seed} quick={a.quick} binary={quire_bin()}", flush=True)
    if not (SHARED / "tools" / "gen_vault.py").is_file():
        if os.environ.get("QUIRE_REQUIRE_SHARED") == "1":
            print(f"FAIL: {SHARED} is missing and QUIRE_REQUIRE_SHARED=1")
            return 1
        print(f"SKIP storm.py: {SHARED}/tools/gen_vault.py not found")
        return 0
    # 10k files take ~9 minutes in a debug build on 2 busy cores (generate, index, storm, verify),
    # too long for CI, so the quick run halves both.
    sizes = a.notes or ([5000] if a.quick else [10000, 100000])
    size = a.size or (5000 if a.quick else 10000)
    storms = ["checkout"] if a.quick else ["checkout", "download", "rename"]
    figures: dict = {}
    started = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix="quire-storm-"))
    try:
        for notes in sizes:
            one_vault(tmp, notes, storms, size, a.seed, figures)
    except Failure as failure:
        print(f"FAIL (seed {a.seed}): {failure}")
        return 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    figures["wall s"] = f"{time.monotonic() - started:.0f}"
    print("--- storm figures ---")
    for name, value in figures.items():
        print(f"{name}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
