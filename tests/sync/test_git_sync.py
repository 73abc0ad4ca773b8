"""The git sync backend against local bare repositories, running the real scripts.

Each test builds a remote (a bare repository), a "phone" (a plain clone that commits and pushes
like another device) and a vault synced by nixos/git-sync.sh, installed the way NixOS's
writeShellApplication installs it (bash with errexit, nounset and pipefail, the guard on PATH).

QUIRE_SYNC_SCRIPT / QUIRE_SYNC_GUARD run the suite against other versions of the scripts (for
example the ones before the rewrite, to see which scenarios they fail). QUIRE_SYNC_SOAK_SECONDS
sets the soak test's length (60 by default; 600 for the full run of issue 16).
"""

import errno
import fcntl
import hashlib
import json
import os
import random
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(os.environ.get("QUIRE_SYNC_SCRIPT", ROOT / "nixos/git-sync.sh"))
GUARD = Path(os.environ.get("QUIRE_SYNC_GUARD", ROOT / "nixos/first-sync-guard.sh"))
SOAK_SECONDS = float(os.environ.get("QUIRE_SYNC_SOAK_SECONDS", "60"))
REAL_GIT = shutil.which("git")
HEADER = "#!/usr/bin/env bash\nset -o errexit\nset -o nounset\nset -o pipefail\n"
CONFLICT_RE = re.compile(r" \(conflict testhost \d{4}-\d{2}-\d{2} \d{4}( \d+)?\)")


def git_env(cwd):
    return dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="phone", GIT_AUTHOR_EMAIL="phone@example.org",
                GIT_COMMITTER_NAME="phone", GIT_COMMITTER_EMAIL="phone@example.org", HOME=str(Path(cwd or ".").resolve()))


def git(*args, cwd=None, check=True, input=None):
    result = subprocess.run([REAL_GIT, *args], cwd=cwd, capture_output=True, input=input, env=git_env(cwd))
    if check and result.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {result.stderr.decode(errors='replace')}")
    return result.stdout.decode(errors="surrogateescape")


def note_text(i, size=0):
    body = f"# Note {i}\n\nLine about note {i}.\n"
    if size:
        rng = random.Random(i)
        body += "".join(rng.choice("abcdefghijklmnopqrstuvwxyz \n") for _ in range(size))
    return body


class Phone:
    """Another device: a clone that commits and pushes with plain git."""

    def __init__(self, path, remote):
        self.path = Path(path)
        git("clone", "--quiet", str(remote), str(self.path), cwd=Path(path).parent)
        git("checkout", "--quiet", "-B", "main", cwd=self.path)

    def write(self, rel, text):
        p = self.path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)

    def delete(self, rel):
        (self.path / rel).unlink()

    def commit(self, message="phone edit"):
        git("add", "--all", cwd=self.path)
        git("commit", "--quiet", "--allow-empty", "-m", message, cwd=self.path)

    def push(self, force=False):
        args = ["push", "--quiet", "origin", "HEAD:main"]
        if force:
            args.insert(1, "--force")
        return subprocess.run([REAL_GIT, *args], cwd=self.path, capture_output=True,
                              env=git_env(self.path)).returncode == 0

    def pull(self):
        git("fetch", "--quiet", "origin", cwd=self.path)
        git("reset", "--quiet", "--hard", "origin/main", cwd=self.path)


class SyncTest(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="quire-sync-test-"))
        self.bin = self.tmp / "bin"
        self.bin.mkdir()
        self.install("quire-git-sync", SCRIPT)
        self.install("first-sync-guard", GUARD)
        self.remote = self.tmp / "remote.git"
        git("init", "--quiet", "--bare", "--initial-branch", "main", str(self.remote), cwd=self.tmp)
        self.vault = self.tmp / "vault"
        self.vault.mkdir()
        self.state = self.tmp / "state"
        self.state.mkdir()
        self.home = self.tmp / "home"
        self.home.mkdir()
        self.lock = self.state / "vault.lock"
        self.lock.touch()
        self.extra_env = {}

    def tearDown(self):
        subprocess.run(["umount", "-l", str(self.tmp / "fs")], capture_output=True)
        shutil.rmtree(self.tmp, ignore_errors=True)

    def install(self, name, source):
        target = self.bin / name
        target.write_text(HEADER + Path(source).read_text())
        target.chmod(0o755)

    # --- running the sync -------------------------------------------------------------------

    def env(self, **extra):
        env = {
            "PATH": f"{self.bin}:{os.environ['PATH']}",
            "HOME": str(self.home),
            "GIT_CONFIG_NOSYSTEM": "1",
            "VAULT": str(self.vault),
            "REMOTE": str(self.remote),
            "BRANCH": "main",
            "AUTHOR_NAME": "Quire",
            "AUTHOR_EMAIL": "quire@testhost",
            "STATE_DIRECTORY": str(self.state),
            "QUIRE_SYNC_HOST": "testhost",
            "QUIRE_SYNC_LOCK": str(self.lock),
            "QUIRE_SYNC_TIMEOUT": "20",
        }
        env.update(self.extra_env)
        env.update({k: str(v) for k, v in extra.items()})
        return env

    def sync(self, *args, timeout=120, **extra):
        """One run of the script; returns (exit status, stderr). A hang counts as a failure."""
        try:
            result = subprocess.run([str(self.bin / "quire-git-sync"), *args], env=self.env(**extra),
                                    capture_output=True, timeout=timeout, start_new_session=True)
        except subprocess.TimeoutExpired as e:
            return 124, f"timed out after {timeout}s: {e.stderr!r}"
        return result.returncode, result.stderr.decode(errors="replace")

    def sync_ok(self, *args, **extra):
        rc, err = self.sync(*args, **extra)
        self.assertEqual(rc, 0, f"sync failed:\n{err}")
        return err

    # --- looking at the result ----------------------------------------------------------------

    def remote_files(self, ref="main"):
        out = git("--git-dir", str(self.remote), "ls-tree", "-r", "-z", ref, cwd=self.tmp, check=False)
        files = {}
        for rec in out.split("\0"):
            if not rec:
                continue
            meta, path = rec.split("\t", 1)
            oid = meta.split()[2]
            files[path] = subprocess.run([REAL_GIT, "--git-dir", str(self.remote), "cat-file", "blob", oid],
                                         capture_output=True).stdout
        return files

    def vault_files(self, hidden=True):
        files = {}
        for dirpath, dirnames, filenames in os.walk(self.vault):
            rel_dir = os.path.relpath(dirpath, self.vault)
            dirnames[:] = [d for d in dirnames if d != ".git" and (hidden or not d.startswith("."))]
            for name in filenames:
                rel = os.path.normpath(os.path.join(rel_dir, name))
                if not hidden and name.startswith("."):
                    continue
                if name.startswith(".quire-"):
                    continue
                files[rel] = (Path(dirpath) / name).read_bytes()
        return files

    def status(self):
        return json.loads((self.state / "status.json").read_text())

    def assert_no_markers(self, files):
        for path, data in files.items():
            self.assertNotIn(b"<<<<<<<", data, f"conflict markers in {path}")
            self.assertNotIn(b">>>>>>>", data, f"conflict markers in {path}")

    def seed_remote(self, count=10, size=0, extra=None):
        phone = Phone(self.tmp / "seed", self.remote)
        for i in range(count):
            phone.write(f"Notes/Note {i}.md", note_text(i, size))
        for rel, text in (extra or {}).items():
            phone.write(rel, text)
        phone.commit("seed")
        self.assertTrue(phone.push())
        return self.remote_files()

    def phone(self, name="phone"):
        return Phone(self.tmp / name, self.remote)

    def install_killer(self):
        """A git on PATH that counts the script's git commands and kills the whole run (SIGKILL to
        its process group) right after command number KILL_AT."""
        wrapper = self.bin / "git"
        wrapper.write_text(
            "#!/usr/bin/env bash\n"
            f'"{REAL_GIT}" "$@"\nrc=$?\n'
            'n=$(( $(cat "$COUNT_FILE" 2>/dev/null || echo 0) + 1 ))\necho "$n" >"$COUNT_FILE"\n'
            'if [ "${KILL_AT:-0}" = "$n" ]; then\n'
            '  read -r _ _ _ _ _ sid _ </proc/$$/stat\n'
            '  kill -KILL -- "-$sid"\n  exit 137\nfi\nexit $rc\n')
        wrapper.chmod(0o755)
        self.extra_env = {"COUNT_FILE": str(self.tmp / "count")}

    def kill_at_every_step(self, check):
        """Runs the sync once whole to count its git commands; then, from a copy of the starting
        state each time, kills it after each command, runs it once more and calls check()."""
        base = self.tmp
        for name in ("remote.git", "vault", "state"):
            shutil.copytree(base / name, base / f"pristine-{name}", symlinks=True)
        (base / "count").unlink(missing_ok=True)
        self.sync_ok()
        steps = int((base / "count").read_text())
        failures = []
        for kill_at in range(1, steps + 1):
            for name in ("remote.git", "vault", "state"):
                shutil.rmtree(base / name)
                shutil.copytree(base / f"pristine-{name}", base / name, symlinks=True)
            (base / "count").unlink(missing_ok=True)
            self.sync(KILL_AT=kill_at)
            (base / "count").unlink(missing_ok=True)
            rc, err = self.sync()
            try:
                self.assertEqual(rc, 0, err)
                check()
            except AssertionError as e:
                failures.append(f"killed after git command {kill_at}: {str(e).splitlines()[0]}")
        print(f"\n  {self.id()}: killed after each of {steps} git commands, {len(failures)} lost data",
              file=sys.stderr)
        self.assertFalse(failures, f"{len(failures)} of {steps} interruptions lost data:\n" + "\n".join(failures))


class Adoption(SyncTest):
    def local_start(self, conflicting=True):
        """A vault that already holds files when the first sync starts."""
        if conflicting:
            (self.vault / "Daily").mkdir()
            (self.vault / "Daily/2026-11-30.md").write_text("written by Quire before the first sync\n")
        (self.vault / "Notes").mkdir()
        (self.vault / "Notes/Note 3.md").write_text(note_text(3))
        (self.vault / "Local only.md").write_text("only here\n")

    def check_adopted(self, remote_before, conflicting=True):
        remote = self.remote_files()
        for path, data in remote_before.items():
            self.assertEqual(remote.get(path), data, f"remote {path} lost or changed")
        vault = self.vault_files()
        for path, data in remote_before.items():
            self.assertEqual(vault.get(path), data, f"vault {path} missing or differs")
        self.assertEqual(vault.get("Local only.md"), b"only here\n")
        self.assertEqual(remote.get("Local only.md"), b"only here\n")
        if conflicting:
            kept = [p for p, d in vault.items() if d == b"written by Quire before the first sync\n"]
            self.assertEqual(len(kept), 1, f"the local daily note must survive as one conflict copy: {sorted(vault)}")
            self.assertRegex(kept[0], CONFLICT_RE)
            self.assertIn(kept[0], remote)
        self.assertFalse([p for p, d in vault.items() if not d], "empty files in the vault")
        self.assert_no_markers(vault)

    def test_adoption_keeps_both_versions(self):
        before = self.seed_remote(extra={"Daily/2026-11-30.md": "the phone's daily note\n"})
        self.local_start()
        self.sync_ok()
        self.check_adopted(before)
        self.assertTrue((self.state / "first-sync-done").exists(), "no first-sync marker")
        conflicts = self.status()["conflicts"]
        self.assertEqual([c["path"] for c in conflicts], ["Daily/2026-11-30.md"])

    def test_resumed_adoption_reuses_an_older_copy(self):
        """A copy saved by a round killed a minute earlier (another time in its name) is reused."""
        before = self.seed_remote(extra={"Daily/2026-11-30.md": "the phone's daily note\n"})
        self.local_start()
        (self.vault / "Daily/2026-11-30 (conflict testhost 2026-11-30 2359).md").write_text(
            "written by Quire before the first sync\n")
        self.sync_ok()
        self.check_adopted(before)

    def test_interrupted_adoption_at_every_step(self):
        """Kill the first sync after each git command it runs, then let it run again."""
        self.install_killer()
        before = self.seed_remote()
        self.local_start(conflicting=False)
        self.kill_at_every_step(lambda: self.check_adopted(before, conflicting=False))

    def test_interrupted_adoption_with_conflict_at_every_step(self):
        self.install_killer()
        before = self.seed_remote(count=4, extra={"Daily/2026-11-30.md": "the phone's daily note\n"})
        self.local_start()
        self.kill_at_every_step(lambda: self.check_adopted(before))

    def test_full_disk_during_first_checkout(self):
        if os.geteuid() != 0:
            self.skipTest("needs root to mount a small tmpfs (skipped)")
        fs = self.tmp / "fs"
        fs.mkdir()
        before = self.seed_remote(count=40, size=6000)
        # Calibrate: what the repository alone takes, then leave room for a third of the notes.
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(fs)], capture_output=True).returncode:
            self.skipTest("cannot mount a tmpfs here (skipped)")
        probe = fs / "probe"
        git("clone", "--quiet", "--bare", str(self.remote), str(probe), cwd=self.tmp)
        used = shutil.disk_usage(fs).used
        subprocess.run(["umount", str(fs)], check=True)
        size_kb = (used + 14 * 8192) // 1024 + 64
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kb}k", "tmpfs", str(fs)], check=True)
        self.vault = fs / "vault"
        self.vault.mkdir()
        (self.vault / "Local only.md").write_text("only here\n")
        rc, err = self.sync()
        self.assertNotEqual(rc, 0, "the disk was meant to fill up during the first sync")
        # Everything still on the remote, nothing pushed as deleted or empty.
        self.assertEqual(self.remote_files(), before)
        for path, data in self.vault_files().items():
            self.assertTrue(data, f"{path} is empty in the vault after the full disk")
        # The disk fills up again on the next run (still full): still nothing lost.
        self.sync()
        self.assertEqual({k: v for k, v in self.remote_files().items() if k in before}, before)
        subprocess.run(["mount", "-o", "remount,size=64m", str(fs)], check=True)
        self.sync_ok()
        self.sync_ok()
        remote = self.remote_files()
        vault = self.vault_files()
        for path, data in before.items():
            self.assertEqual(remote.get(path), data, f"remote {path} lost or changed")
            self.assertEqual(vault.get(path), data, f"vault {path} missing or differs")
        self.assertEqual(remote.get("Local only.md"), b"only here\n")


class Conflicts(SyncTest):
    def synced(self, count=5, extra=None):
        self.seed_remote(count=count, extra=extra)
        self.sync_ok()
        return self.phone()

    def test_both_sides_edit(self):
        phone = self.synced()
        (self.vault / "Notes/Note 1.md").write_text("# Note 1\n\nedited on the server\n")
        phone.write("Notes/Note 1.md", "# Note 1\n\nedited on the phone\n")
        # Edits to different lines of the same note merge without a conflict.
        (self.vault / "Notes/Note 2.md").write_text("# Note 2 (server title)\n\nLine about note 2.\n")
        phone.write("Notes/Note 2.md", "# Note 2\n\nLine about note 2.\n\nphone's addition\n")
        phone.commit()
        self.assertTrue(phone.push())
        self.sync_ok()
        vault = self.vault_files()
        self.assertEqual(vault["Notes/Note 1.md"], b"# Note 1\n\nedited on the phone\n")
        copies = [p for p in vault if CONFLICT_RE.search(p)]
        self.assertEqual(len(copies), 1, sorted(vault))
        self.assertTrue(copies[0].startswith("Notes/Note 1 (conflict testhost "), copies[0])
        self.assertTrue(copies[0].endswith(").md"), copies[0])
        self.assertEqual(vault[copies[0]], b"# Note 1\n\nedited on the server\n")
        self.assertEqual(vault["Notes/Note 2.md"], b"# Note 2 (server title)\n\nLine about note 2.\n\nphone's addition\n")
        self.assert_no_markers(vault)
        self.assertEqual(self.remote_files(), self.vault_files())
        status = self.status()
        self.assertTrue(status["ok"])
        self.assertEqual([(c["path"], c["saved_as"]) for c in status["conflicts"]], [("Notes/Note 1.md", copies[0])])
        # Sync keeps going in both directions.
        phone.pull()
        phone.write("After.md", "after the conflict\n")
        phone.commit()
        self.assertTrue(phone.push())
        (self.vault / "Server after.md").write_text("server after the conflict\n")
        self.sync_ok()
        self.assertEqual(self.vault_files()["After.md"], b"after the conflict\n")
        self.assertEqual(self.remote_files()["Server after.md"], b"server after the conflict\n")
        # Resolving the conflict (deleting the copy) drops it from the status.
        (self.vault / copies[0]).unlink()
        self.sync_ok()
        self.assertEqual(self.status()["conflicts"], [])

    def test_interrupted_round_at_every_step(self):
        """A round with local edits, remote edits and a conflict, killed after each git command."""
        phone = self.synced()
        self.install_killer()
        (self.vault / "Notes/Note 1.md").write_text("# Note 1\n\nedited on the server\n")
        (self.vault / "Server.md").write_text("new on the server\n")
        phone.write("Notes/Note 1.md", "# Note 1\n\nedited on the phone\n")
        phone.write("Notes/Note 2.md", "# Note 2\n\nedited on the phone only\n")
        phone.commit()
        self.assertTrue(phone.push())

        def check():
            vault = self.vault_files()
            remote = self.remote_files()
            self.assert_no_markers(vault)
            self.assertEqual(vault, remote)
            self.assertEqual(vault.get("Notes/Note 1.md"), b"# Note 1\n\nedited on the phone\n")
            self.assertEqual(vault.get("Notes/Note 2.md"), b"# Note 2\n\nedited on the phone only\n")
            self.assertEqual(vault.get("Server.md"), b"new on the server\n")
            self.assertIn(b"# Note 1\n\nedited on the server\n", vault.values())
        self.kill_at_every_step(check)

    def test_delete_vs_edit(self):
        phone = self.synced()
        # Deleted here (moved to .trash/ as Quire does), edited on the phone.
        (self.vault / ".trash").mkdir()
        os.rename(self.vault / "Notes/Note 1.md", self.vault / ".trash/Note 1.md")
        phone.write("Notes/Note 1.md", "# Note 1\n\nthe phone's edit\n")
        # Edited here, deleted on the phone.
        (self.vault / "Notes/Note 2.md").write_text("# Note 2\n\nthe server's edit\n")
        phone.delete("Notes/Note 2.md")
        phone.commit()
        self.assertTrue(phone.push())
        self.sync_ok()
        vault = self.vault_files()
        self.assertEqual(vault.get("Notes/Note 1.md"), b"# Note 1\n\nthe phone's edit\n")
        self.assertEqual(vault.get("Notes/Note 2.md"), b"# Note 2\n\nthe server's edit\n")
        self.assert_no_markers(vault)
        self.assertEqual(self.remote_files(), vault)
        paths = sorted(c["path"] for c in self.status()["conflicts"])
        self.assertEqual(paths, ["Notes/Note 1.md", "Notes/Note 2.md"])
        # And the next round is clean.
        phone.pull()
        phone.write("Next.md", "next\n")
        phone.commit()
        self.assertTrue(phone.push())
        self.sync_ok()
        self.assertIn("Next.md", self.vault_files())

    def test_force_push(self):
        phone = self.synced()
        phone.write("Secret.md", "a password, pushed by mistake\n")
        phone.commit("oops")
        self.assertTrue(phone.push())
        self.sync_ok()
        self.assertIn("Secret.md", self.vault_files())
        # The phone removes the commit and force-pushes; the server has an unpushed edit meanwhile.
        git("reset", "--quiet", "--hard", "HEAD~1", cwd=phone.path)
        phone.write("Notes/Note 0.md", "# Note 0\n\nrewritten history\n")
        phone.commit("rewrite")
        self.assertTrue(phone.push(force=True))
        (self.vault / "Notes/Note 4.md").write_text("# Note 4\n\nserver edit during the force-push\n")
        self.sync_ok()
        remote = self.remote_files()
        self.assertNotIn("Secret.md", remote, "the force-push was undone (a removed commit was pushed back)")
        log = git("--git-dir", str(self.remote), "log", "--format=%s", "main", cwd=self.tmp)
        self.assertNotIn("oops", log, "the removed commit is back on the remote")
        self.assertEqual(remote["Notes/Note 4.md"], b"# Note 4\n\nserver edit during the force-push\n")
        self.assertEqual(remote["Notes/Note 0.md"], b"# Note 0\n\nrewritten history\n")
        self.assertEqual(self.vault_files(), remote)
        self.sync_ok()

    def test_foreign_clone_is_refused(self):
        other = self.tmp / "other.git"
        git("init", "--quiet", "--bare", "--initial-branch", "main", str(other), cwd=self.tmp)
        self.seed_remote()
        ph = Phone(self.tmp / "other-phone", other)
        ph.write("Other.md", "from another repository\n")
        ph.commit()
        self.assertTrue(ph.push())
        shutil.rmtree(self.vault)
        git("clone", "--quiet", str(other), str(self.vault), cwd=self.tmp)
        remote_before = self.remote_files()
        rc, err = self.sync()
        self.assertNotEqual(rc, 0, "a clone of another remote was synced")
        self.assertEqual(self.remote_files(), remote_before)
        self.assertEqual(git("config", "--get", "remote.origin.url", cwd=self.vault).strip(), str(other))
        self.assertEqual(set(self.vault_files(hidden=False)), {"Other.md"})
        self.assertFalse((self.state / "first-sync-done").exists())

    def test_hung_remote_times_out(self):
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        port = server.getsockname()[1]
        held = []
        stop = threading.Event()

        def accept():
            server.settimeout(0.2)
            while not stop.is_set():
                try:
                    held.append(server.accept()[0])
                except OSError:
                    pass
        thread = threading.Thread(target=accept, daemon=True)
        thread.start()
        try:
            (self.vault / "Note.md").write_text("waiting for the network\n")
            started = time.monotonic()
            rc, err = self.sync(timeout=45, REMOTE=f"git://127.0.0.1:{port}/notes.git", QUIRE_SYNC_TIMEOUT=3)
            elapsed = time.monotonic() - started
            self.assertNotEqual(rc, 124, "the sync hung on a silent remote")
            self.assertNotEqual(rc, 0)
            self.assertLess(elapsed, 30)
            self.assertFalse(self.status()["ok"])
            self.assertIsNone(self.status()["last_success"])
            self.assertEqual((self.vault / "Note.md").read_text(), "waiting for the network\n")
        finally:
            stop.set()
            thread.join()
            server.close()
            for c in held:
                c.close()

    def test_stale_index_lock_and_temp_files(self):
        phone = self.synced()
        lock = self.vault / ".git/index.lock"
        lock.write_text("")
        (self.vault / "Notes/.quire-123.tmp").write_text("half a write\n")
        (self.vault / "New.md").write_text("after the kill\n")
        # A fresh lock may be someone's git at work: this round waits for the next one.
        rc, err = self.sync()
        self.assertEqual(rc, 1, err)
        self.assertIn("git is busy", self.status()["message"])
        # Left by a killed round (older than a minute): removed, and the round goes on.
        old = time.time() - 300
        os.utime(lock, (old, old))
        self.sync_ok()
        self.assertFalse(lock.exists())
        remote = self.remote_files()
        self.assertEqual(remote.get("New.md"), b"after the kill\n")
        self.assertFalse([p for p in remote if ".quire-" in p], "Quire's temp files were pushed")
        del phone

    def test_dubious_ownership(self):
        if os.geteuid() != 0:
            self.skipTest("needs root to give the vault to another user (skipped)")
        self.synced()
        for dirpath, dirnames, filenames in os.walk(self.vault):
            for name in dirnames + filenames:
                os.lchown(os.path.join(dirpath, name), 4321, 4321)
        os.chown(self.vault, 4321, 4321)
        (self.vault / "New.md").write_text("root wrote this\n")
        self.sync_ok()
        self.assertEqual(self.remote_files().get("New.md"), b"root wrote this\n")

    def test_rejected_file_does_not_block_forever(self):
        phone = self.synced()
        hook = self.remote / "hooks/pre-receive"
        hook.write_text(
            "#!/usr/bin/env bash\nwhile read -r old new ref; do\n"
            "  if git rev-list --objects \"$new\" --not --all | grep -q ' huge.bin$'; then\n"
            "    echo 'huge.bin is too large' >&2; exit 1\n  fi\ndone\n")
        hook.chmod(0o755)
        (self.vault / "huge.bin").write_bytes(b"x" * 1000)
        (self.vault / "Notes/Note 1.md").write_text("# Note 1\n\nan edit that must arrive\n")
        rc, err = self.sync()
        self.assertNotEqual(rc, 0)
        failed_status = (self.state / "status.json").exists() and self.status()
        (self.vault / "huge.bin").unlink()
        self.sync_ok()
        remote = self.remote_files()
        self.assertNotIn("huge.bin", remote)
        self.assertEqual(remote["Notes/Note 1.md"], b"# Note 1\n\nan edit that must arrive\n")
        self.assertTrue(failed_status and not failed_status["ok"] and "huge.bin is too large" in failed_status["message"],
                        f"the rejected push must show in the status file: {failed_status}")
        del phone


class Guard(SyncTest):
    def synced_vault(self):
        self.seed_remote(count=20, extra={".obsidian/app.json": "{}\n", ".obsidian/workspace.json": "{}\n"})
        self.sync_ok()

    def test_mass_deletion_with_obsidian_folder(self):
        self.synced_vault()
        before = self.remote_files()
        shutil.rmtree(self.vault / "Notes")
        rc, err = self.sync()
        self.assertNotEqual(rc, 0, "deleting every note (with .obsidian/ present) was pushed")
        self.assertIn("first-sync guard: refusing to sync", err)
        self.assertEqual(self.remote_files(), before)
        self.assertFalse(self.status()["ok"])

    def test_most_notes_deleted_or_emptied(self):
        self.synced_vault()
        before = self.remote_files()
        for i in range(19):
            (self.vault / f"Notes/Note {i}.md").unlink()
        rc, err = self.sync()
        self.assertNotEqual(rc, 0, "deleting 19 of 20 notes was pushed")
        self.assertEqual(self.remote_files(), before)
        for i in range(19):
            (self.vault / f"Notes/Note {i}.md").write_text(note_text(i))
        for i in range(10):
            (self.vault / f"Notes/Note {i}.md").write_text("")
        rc, err = self.sync()
        self.assertNotEqual(rc, 0, "emptying 10 of 20 notes was pushed")
        self.assertEqual(self.remote_files(), before)

    def test_trash_and_few_deletions_pass_and_override(self):
        self.synced_vault()
        # Quire's deletes move notes to .trash/: their content is kept, so they are no mass deletion.
        (self.vault / ".trash").mkdir()
        for i in range(12):
            os.rename(self.vault / f"Notes/Note {i}.md", self.vault / f".trash/Note {i}.md")
        (self.vault / "Notes/Note 19.md").unlink()
        self.sync_ok()
        self.assertNotIn("Notes/Note 0.md", self.remote_files())
        # A real mass deletion passes once with the override file, which is then consumed.
        for i in range(12, 19):
            (self.vault / f"Notes/Note {i}.md").unlink()
        self.assertNotEqual(self.sync()[0], 0)
        override = self.state / "allow-mass-deletion"
        override.touch()
        self.sync_ok()
        self.assertFalse(override.exists(), "the override must allow one sync only")
        self.assertFalse([p for p in self.remote_files() if p.startswith("Notes/")])

    def test_incoming_mass_deletion_is_refused(self):
        self.synced_vault()
        phone = self.phone()
        shutil.rmtree(phone.path / "Notes")
        phone.commit("wipe")
        self.assertTrue(phone.push())
        rc, err = self.sync()
        self.assertNotEqual(rc, 0, "a remote mass deletion was applied to the vault")
        self.assertEqual(len([p for p in self.vault_files() if p.startswith("Notes/")]), 20)


class GuardScript(SyncTest):
    """first-sync-guard.sh alone: the Obsidian mode and the git mode the VM test uses."""

    def guard(self, *args, **env):
        result = subprocess.run([str(self.bin / "first-sync-guard"), *args], capture_output=True,
                                env=self.env(**env))
        return result.returncode, result.stderr.decode()

    def obsidian_state(self, paths, with_path_column=True):
        import sqlite3
        db_dir = self.state / "obsidian-headless/sync/vault-id"
        db_dir.mkdir(parents=True)
        db = sqlite3.connect(db_dir / "state.db")
        if with_path_column:
            db.execute("CREATE TABLE local_files (path TEXT PRIMARY KEY, hash TEXT)")
            db.executemany("INSERT INTO local_files VALUES (?, '')", [(p,) for p in paths])
        else:
            db.execute("CREATE TABLE local_files (id INTEGER PRIMARY KEY, hash TEXT)")
            db.executemany("INSERT INTO local_files (hash) VALUES (?)", [("",) for _ in paths])
        db.commit()
        db.close()

    def test_obsidian_mode_counts_notes_not_hidden_files(self):
        if not shutil.which("sqlite3"):
            self.skipTest("sqlite3 is not installed (skipped)")
        vault = self.tmp / ".dot" / "notes"
        (vault / ".obsidian").mkdir(parents=True)
        (vault / ".obsidian/app.json").write_text("{}\n")
        paths = [f"Note {i}.md" for i in range(10)] + [".obsidian/app.json"]
        for p in paths[:10]:
            (vault / p).write_text("text\n")
        self.obsidian_state(paths)
        override = self.state / "allow-mass-deletion"
        # A vault under a dot-path, all there: allowed.
        self.assertEqual(self.guard("obsidian", str(vault), str(self.state))[0], 0)
        # Three of ten gone: allowed (below 5); one more emptied and four more gone: refused.
        for i in range(3):
            (vault / f"Note {i}.md").unlink()
        self.assertEqual(self.guard("obsidian", str(vault), str(self.state))[0], 0)
        (vault / "Note 3.md").write_text("")
        for i in range(4, 8):
            (vault / f"Note {i}.md").unlink()
        rc, err = self.guard("obsidian", str(vault), str(self.state))
        self.assertEqual(rc, 1)
        self.assertIn("first-sync guard: refusing to sync", err)
        self.assertIn(str(override), err)
        override.touch()
        self.assertEqual(self.guard("obsidian", str(vault), str(self.state))[0], 0)
        self.assertFalse(override.exists())

    def test_obsidian_mode_without_path_column(self):
        if not shutil.which("sqlite3"):
            self.skipTest("sqlite3 is not installed (skipped)")
        (self.vault / ".obsidian").mkdir()
        (self.vault / ".obsidian/app.json").write_text("{}\n")
        self.obsidian_state(["a.md", "b.md"], with_path_column=False)
        self.assertEqual(self.guard("obsidian", str(self.vault), str(self.state))[0], 1)
        (self.vault / "a.md").write_text("back\n")
        self.assertEqual(self.guard("obsidian", str(self.vault), str(self.state))[0], 0)

    def test_git_mode_default_trees(self):
        self.seed_remote(count=4, extra={".obsidian/app.json": "{}\n"})
        self.sync_ok()
        self.assertEqual(self.guard("git", str(self.vault))[0], 0)
        shutil.rmtree(self.vault / "Notes")
        rc, err = self.guard("git", str(self.vault))
        self.assertEqual(rc, 1, err)
        self.assertIn("would delete or empty 4 of 4", err)
        self.assertEqual(self.guard("git", str(self.tmp / "missing"))[0], 1)


class Coordination(SyncTest):
    def test_status_marker_and_first_mode(self):
        self.seed_remote(count=3)
        rc, err = self.sync("--first", QUIRE_SYNC_FIRST_ATTEMPTS=1)
        self.assertEqual(rc, 0, err)
        marker = self.state / "first-sync-done"
        self.assertTrue(marker.exists())
        status = self.status()
        self.assertEqual(set(status), {"last_attempt", "last_success", "ok", "message", "conflicts"})
        self.assertTrue(status["ok"])
        self.assertRegex(status["last_attempt"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
        # With the marker present, --first returns at once, even with the remote unreachable.
        rc, err = self.sync("--first", REMOTE=str(self.tmp / "missing.git"))
        self.assertEqual(rc, 0, err)
        # A failing normal round keeps last_success.
        last = status["last_success"]
        shutil.move(self.remote, self.tmp / "moved.git")
        rc, err = self.sync()
        self.assertNotEqual(rc, 0)
        self.assertFalse(self.status()["ok"])
        self.assertEqual(self.status()["last_success"], last)

    def test_stopped_by_systemd_writes_status(self):
        """SIGTERM (systemd's stop or TimeoutStartSec) ends the round with a status saying so."""
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        port = server.getsockname()[1]
        try:
            proc = subprocess.Popen([str(self.bin / "quire-git-sync")], start_new_session=True,
                                    env=self.env(REMOTE=f"git://127.0.0.1:{port}/notes.git", QUIRE_SYNC_TIMEOUT=60),
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(1.5)
            # Like systemd stopping the unit: every process of the run (its cgroup; here its session).
            def session():
                pids = []
                for entry in os.listdir("/proc"):
                    try:
                        fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
                        if int(fields[3]) == proc.pid and fields[0] != "Z":
                            pids.append(int(entry))
                    except (OSError, IndexError, ValueError):
                        pass
                return pids
            for pid in session():
                try:
                    os.kill(pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
            self.assertNotEqual(proc.wait(timeout=30), 0)
            deadline = time.monotonic() + 20
            while session() and time.monotonic() < deadline:
                time.sleep(0.1)
        finally:
            server.close()
        status = self.status()
        self.assertFalse(status["ok"])
        self.assertIn("interrupted", status["message"])

    def test_first_mode_without_remote_fails_without_marker(self):
        rc, err = self.sync("--first", REMOTE=str(self.tmp / "missing.git"), QUIRE_SYNC_FIRST_ATTEMPTS=2,
                            QUIRE_SYNC_RETRY_SECONDS=0)
        self.assertNotEqual(rc, 0)
        self.assertFalse((self.state / "first-sync-done").exists())


class QuireWriter:
    """Imitates Quire's writes: shared lock, read, temp file, fsync, revision re-check, rename.
    Every write that returns is acknowledged and must never be lost."""

    def __init__(self, vault, lock, note, interval, use_lock=True):
        self.vault, self.lock, self.note, self.interval, self.use_lock = vault, lock, note, interval, use_lock
        self.acked = []
        self.conflicts = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def write_once(self, line):
        target = self.vault / self.note
        fd = os.open(self.lock, os.O_RDONLY) if self.use_lock else None
        try:
            if fd is not None:
                fcntl.flock(fd, fcntl.LOCK_SH)
            try:
                old = target.read_bytes()
            except FileNotFoundError:
                old = b""
            tmp = target.parent / f".quire-{random.getrandbits(32):08x}.tmp"
            with open(tmp, "wb") as f:
                f.write(old + line.encode() + b"\n")
                f.flush()
                os.fsync(f.fileno())
            try:
                now = target.read_bytes()
            except FileNotFoundError:
                now = b""
            if hashlib.sha256(now).digest() != hashlib.sha256(old).digest():
                tmp.unlink()
                return False
            os.replace(tmp, target)
            return True
        finally:
            if fd is not None:
                os.close(fd)

    def run(self):
        n = 0
        while not self.stop.is_set():
            line = f"agent line {n} {random.getrandbits(40):010x}"
            if self.write_once(line):
                self.acked.append(line)
                n += 1
            else:
                self.conflicts += 1
            time.sleep(self.interval)


def load_test(case, seconds, agent_interval, phone_interval, use_lock=True, shared_every=0):
    """The agent writes, a phone pushes, the server syncs back to back; then everything must be
    present on both sides. Returns figures for the report."""
    case.seed_remote(count=3)
    case.sync_ok()
    case.sync_ok()
    if not use_lock:
        case.extra_env["QUIRE_SYNC_LOCK"] = ""
    agent = QuireWriter(case.vault, case.lock, "Agent log.md", agent_interval, use_lock)
    phone = case.phone()
    phone_lines = []
    stop = threading.Event()

    phone_errors = []

    def phone_loop():
        try:
            phone_steps()
        except Exception as e:  # a dead phone thread must fail the test, not pass it quietly
            phone_errors.append(repr(e))

    def phone_steps():
        n = 0
        while not stop.is_set():
            line = f"phone line {n} {random.getrandbits(40):010x}"
            target = "Phone log.md"
            if shared_every and n % shared_every == shared_every - 1:
                target = "Agent log.md"
            p = phone.path / target

            def append():
                p.write_text((p.read_text() if p.exists() else "") + line + "\n")
                phone.commit(f"phone {n}")
            append()
            # Like a phone's git client: on a rejected push, pull (rebase) and push again at once.
            for _ in range(20):
                if phone.push():
                    phone_lines.append(line)
                    break
                git("fetch", "--quiet", "origin", cwd=phone.path)
                rebase = subprocess.run([REAL_GIT, "rebase", "--quiet", "origin/main"], cwd=phone.path,
                                        capture_output=True, env=git_env(phone.path))
                if rebase.returncode:
                    subprocess.run([REAL_GIT, "rebase", "--abort"], cwd=phone.path, capture_output=True,
                                   env=git_env(phone.path))
                    phone.pull()
                    append()
            n += 1
            time.sleep(phone_interval)

    runs = failures = 0
    errors = []
    agent.thread.start()
    phone_thread = threading.Thread(target=phone_loop, daemon=True)
    phone_thread.start()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        rc, err = case.sync(timeout=60)
        runs += 1
        if rc:
            failures += 1
            errors.append(" | ".join(err.strip().splitlines()[-4:]) if err.strip() else f"exit {rc}")
        time.sleep(0.2)
    agent.stop.set()
    stop.set()
    agent.thread.join()
    phone_thread.join()
    for _ in range(3):
        case.sync(timeout=60)
    rc, err = case.sync(timeout=60)
    vault = case.vault_files()
    remote = case.remote_files()
    phone.pull()
    vault_text = b"\n".join(vault.values()).decode(errors="replace")
    remote_text = b"\n".join(remote.values()).decode(errors="replace")
    lost_agent = [l for l in agent.acked if l not in vault_text or l not in remote_text]
    lost_phone = [l for l in phone_lines if l not in vault_text or l not in remote_text]
    figures = {"seconds": seconds, "sync_runs": runs, "failed_runs": failures,
               "acknowledged_writes": len(agent.acked), "writer_conflicts": agent.conflicts,
               "remote_commits": len(phone_lines), "lost_writes": len(lost_agent),
               "lost_remote_commits": len(lost_phone),
               "writes_missing_in_vault": len([l for l in agent.acked if l not in vault_text]),
               "commits_missing_in_vault": len([l for l in phone_lines if l not in vault_text]),
               "conflict_copies": len([p for p in vault if CONFLICT_RE.search(p)])}
    print(f"\n  {case.id()}: {json.dumps(figures)}", file=sys.stderr)
    case.assertEqual(rc, 0, f"the final sync failed: {err}")
    case.assertFalse(phone_errors, f"the phone stopped: {phone_errors}")
    case.assertFalse(lost_agent, f"acknowledged writes lost: {lost_agent[:5]} ({len(lost_agent)}) {figures}")
    case.assertFalse(lost_phone, f"remote commits lost: {lost_phone[:5]} ({len(lost_phone)}) {figures}")
    case.assert_no_markers(vault)
    case.assertEqual(vault, remote, "the vault and the remote differ at the end")
    return figures, errors


class Load(SyncTest):
    def test_write_during_sync_under_load(self):
        figures, errors = load_test(self, 10, 0.002, 0.5, shared_every=4)
        self.assertLessEqual(figures["failed_runs"], figures["sync_runs"] // 5, f"too many failed runs: {errors[:5]}")

    def test_constant_writer_without_lock(self):
        """Without the lock (a writer that takes none): the agent's constant writes never fail a
        round, and writes racing a merge of the same note lose nothing."""
        figures, errors = load_test(self, 6, 0.002, 0.3, use_lock=False)
        self.assertLessEqual(figures["failed_runs"], figures["sync_runs"] // 5, f"too many failed runs: {errors[:5]}")

    def test_racing_writer_without_lock(self):
        """Without the lock, the phone also edits the note the agent keeps writing: after a few
        passes a round keeps this device's version at the path and saves the remote's beside it,
        so rounds complete and nothing is lost."""
        figures, errors = load_test(self, 6, 0.01, 0.3, use_lock=False, shared_every=3)
        self.assertLessEqual(figures["failed_runs"], figures["sync_runs"] // 3, f"too many failed runs: {errors[:5]}")

    def test_soak(self):
        """Issue 16's soak: the agent writes every 50 ms, a second clone pushes every second."""
        figures, errors = load_test(self, SOAK_SECONDS, 0.05, 1.0, shared_every=10)
        self.assertLessEqual(figures["failed_runs"], figures["sync_runs"] // 5, f"too many failed runs: {errors[:5]}")


if __name__ == "__main__":
    unittest.main(verbosity=2)
