#!/usr/bin/env python3
"""Runs inside the booted container as root (quire-systemd-test.service) and checks Quire as
systemd runs it with the units NixOS would write: lazy socket activation, the module's user, a read outside the vault refused,
structured journal fields, a watchdog restart when the index writer hangs, a restart when the vault
folder is replaced, and the exposure score
of `systemd-analyze security`. Writes one line per check to /out/result.txt, then powers off."""

import json
import os
import shutil
import subprocess
import time
import traceback
import urllib.request

RESULTS = []
BASE = "http://127.0.0.1:8787"


def record(name, ok, detail=""):
    RESULTS.append(f"{'PASS' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}")


def sh(*args):
    return subprocess.run(args, capture_output=True, text=True).stdout.strip()


def healthz():
    with urllib.request.urlopen(BASE + "/healthz", timeout=15) as response:
        return response.status


def wait_for(predicate, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if predicate():
                return True
        except Exception:
            pass
        time.sleep(0.2)
    return False


def mcp(token, session, payload):
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {token}",
        "MCP-Protocol-Version": "2025-11-25",
    }
    if session:
        headers["Mcp-Session-Id"] = session
    request = urllib.request.Request(BASE + "/mcp", data=json.dumps(payload).encode(), headers=headers)
    with urllib.request.urlopen(request, timeout=30) as response:
        session = response.headers.get("Mcp-Session-Id") or session
        body = response.read().decode()
    messages = [json.loads(line[5:]) for line in body.splitlines() if line.startswith("data:") and line[5:].strip()]
    if not messages and body.strip().startswith("{"):
        messages = [json.loads(body)]
    return session, messages


def call_tool(token, name, arguments):
    session, _ = mcp(token, None, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "nspawn-test", "version": "0"}}})
    mcp(token, session, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    _, messages = mcp(token, session, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                       "params": {"name": name, "arguments": arguments}})
    return [m for m in messages if m.get("id") == 2][0]["result"]


def read_revision(token, path):
    result = call_tool(token, "vault_read_note", {"path": path})
    data = result.get("structuredContent") or json.loads(result["content"][0]["text"])
    return data["revision"]


def git(*args, cwd=None):
    # "Another device": git as the instance's user, which owns the bare repository.
    return subprocess.run(["runuser", "-u", "quire", "--", "env", "HOME=/tmp",
                           "git", "-c", "user.name=Other device", "-c", "user.email=other@test", *args],
                          capture_output=True, text=True, cwd=cwd)


def sync_round():
    subprocess.run(["systemctl", "start", "quire-sync.service"], capture_output=True)
    result = sh("systemctl", "show", "-p", "Result", "--value", "quire-sync.service")
    if result != "success":
        journal = sh("journalctl", "-u", "quire-sync.service", "-n", "8", "-o", "cat", "--no-pager")
        result += " (journal: " + journal.replace("\n", " | ")[-700:] + ")"
    return result


def git_sync(token):
    """The git backend of the module against the local bare repository /srv/remote.git."""
    marker, remote, other = "/var/lib/quire-sync/first-sync-done", "/srv/remote.git", "/tmp/other"
    record("the first sync ran at boot and wrote the marker",
           sh("systemctl", "is-active", "quire-first-sync.service") == "active" and os.path.exists(marker),
           sh("systemctl", "status", "--no-pager", "-n", "5", "quire-first-sync.service")[-400:])
    requires = sh("systemctl", "show", "-p", "Requires", "--value", "quire.service").split()
    record("Quire requires the first sync", "quire-first-sync.service" in requires, " ".join(requires))
    record("the sync timer is active", sh("systemctl", "is-active", "quire-sync.timer") == "active")
    record("the first sync adopted the remote's note and pushed the vault",
           os.path.exists("/srv/vault/From-Remote.md")
           and git("--git-dir", remote, "cat-file", "-e", "main:Welcome.md").returncode == 0)

    cloned = git("clone", "--quiet", remote, other)
    if cloned.returncode != 0:
        record("another device clones the remote", False, cloned.stderr[-300:])
        return
    with open(f"{other}/Tides.md", "w") as note:
        note.write("High water at six.\n")
    git("add", "Tides.md", cwd=other)
    git("commit", "--quiet", "-m", "tides from another device", cwd=other)
    git("push", "--quiet", "origin", "HEAD:main", cwd=other)
    result = sync_round()
    pulled = call_tool(token, "vault_read_note", {"path": "Tides.md"})
    record("a round pulls another device's note, and Quire serves it", result == "success" and not pulled.get("isError"),
           f"Result={result} {str(pulled)[:160]}")

    call_tool(token, "vault_write_note", {"path": "Inbox/From-Quire.md", "body": "written through Quire\n"})
    result = sync_round()
    record("a round pushes what Quire wrote",
           git("--git-dir", remote, "cat-file", "-e", "main:Inbox/From-Quire.md").returncode == 0, f"Result={result}")

    # Both sides edit Tides.md: the remote version stays at the path, this device's is saved beside it.
    if pulled.get("isError"):
        record("a conflicting edit is resolved the documented way", False, "skipped: the pull did not work")
        return
    git("pull", "--quiet", "origin", "main", cwd=other)
    with open(f"{other}/Tides.md", "w") as note:
        note.write("High water at seven (remote).\n")
    git("commit", "--quiet", "-am", "remote edit", cwd=other)
    git("push", "--quiet", "origin", "HEAD:main", cwd=other)
    call_tool(token, "vault_write_note", {"path": "Tides.md", "body": "High water at five (local).\n",
                                          "overwrite": True, "expected_revision": read_revision(token, "Tides.md")})
    result = sync_round()
    copies = [name for name in os.listdir("/srv/vault") if name.startswith("Tides (conflict nspawn ")]
    at_path = open("/srv/vault/Tides.md").read()
    local = open(f"/srv/vault/{copies[0]}").read() if copies else ""
    status = json.load(open("/var/lib/quire-sync/status.json")) if os.path.exists("/var/lib/quire-sync/status.json") else {}
    record("a conflicting edit keeps the remote version at the path and the local one beside it",
           "remote" in at_path and "local" in local and any(c.get("path") == "Tides.md" for c in status.get("conflicts", [])),
           f"Result={result} copies={copies} status={str(status)[:200]}")

    # A vault that never completed a first sync is never served: without the marker and with the
    # remote gone, the first sync fails and so does every start of Quire.
    sh("systemctl", "stop", "quire.service", "quire-first-sync.service")
    os.remove(marker)
    os.rename(remote, remote + ".away")
    os.makedirs("/run/systemd/system/quire-first-sync.service.d", exist_ok=True)
    with open("/run/systemd/system/quire-first-sync.service.d/once.conf", "w") as dropin:
        dropin.write("[Service]\nEnvironment=QUIRE_SYNC_FIRST_ATTEMPTS=1\n")
    sh("systemctl", "daemon-reload")
    try:
        served = healthz() == 200
    except Exception:
        served = False
    time.sleep(2)
    record("without a completed first sync Quire does not serve",
           not served and sh("systemctl", "is-active", "quire.service") != "active" and not os.path.exists(marker),
           f"served={served} quire={sh('systemctl', 'is-active', 'quire.service')} "
           f"first-sync={sh('systemctl', 'is-active', 'quire-first-sync.service')}")
    os.rename(remote + ".away", remote)
    os.remove("/run/systemd/system/quire-first-sync.service.d/once.conf")
    sh("systemctl", "daemon-reload")
    sh("systemctl", "reset-failed", "quire.socket", "quire.service", "quire-first-sync.service")
    sh("systemctl", "start", "quire.socket")
    record("once the first sync completes, Quire serves again",
           wait_for(lambda: healthz() == 200, 60) and os.path.exists(marker))


def vault_replaced(token):
    """The vault folder deleted and restored from a copy (a new inode, which neither the landlock
    rules nor the service's mount namespace reach): Quire exits for systemd to start it again on the
    new folder, and serves what the copy holds."""
    before = int(sh("systemctl", "show", "-p", "NRestarts", "--value", "quire.service") or 0)
    subprocess.run(["cp", "-a", "/srv/vault", "/srv/vault.copy"], check=True)
    with open("/srv/vault.copy/Restored.md", "w") as note:
        note.write("# Restored\n\nonly in the copy\n")
    subprocess.run(["chown", "--reference=/srv/vault.copy/Welcome.md", "/srv/vault.copy/Restored.md"], check=True)
    shutil.rmtree("/srv/vault")
    time.sleep(1)
    os.rename("/srv/vault.copy", "/srv/vault")
    restarted = wait_for(lambda: int(sh("systemctl", "show", "-p", "NRestarts", "--value", "quire.service") or 0) > before, 30)
    log = sh("journalctl", "-u", "quire.service", "--no-pager", "-o", "cat")
    record("a vault folder replaced by a new one makes Quire exit for systemd to restart it",
           restarted and "replaced by a new" in log,
           f"NRestarts {before} -> {sh('systemctl', 'show', '-p', 'NRestarts', '--value', 'quire.service')}")
    served = wait_for(lambda: not call_tool(token, "vault_read_note", {"path": "Restored.md"}).get("isError"), 30)
    record("after the restart the new vault folder is served", served,
           str(call_tool(token, "vault_read_note", {"path": "Restored.md"}))[:200])


def main():
    record("socket listening before any request", sh("systemctl", "is-active", "quire.socket") == "active")
    record("service inactive until the first request", sh("systemctl", "is-active", "quire.service") == "inactive",
           sh("systemctl", "is-active", "quire.service"))
    record("first request answered through the socket", healthz() == 200)
    record("service active after the first request",
           wait_for(lambda: sh("systemctl", "is-active", "quire.service") == "active", 10))

    pid = sh("systemctl", "show", "-p", "MainPID", "--value", "quire.service")
    uid = None
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("Uid:"):
                uid = int(line.split()[1])
    # The module declares a system user of the instance's name, which DynamicUser= then uses.
    quire_uid = sh("id", "-u", "quire")
    record("runs as the host's quire user, not root", uid is not None and uid != 0 and str(uid) == quire_uid,
           f"uid {uid}, quire is {quire_uid}")
    with open(f"/proc/{pid}/environ", "rb") as environ:
        variables = environ.read().split(b"\0")
    record("an environment value with spaces arrives as one variable",
           b"QUIRE_TEST_GREETING=hello wide world" in variables, str([v for v in variables if b"GREETING" in v]))
    vault = os.stat("/srv/vault")
    record("the vault folder has the module's owner and mode (tmpfiles)",
           oct(vault.st_mode & 0o7777) == "0o2770" and str(vault.st_uid) == quire_uid, oct(vault.st_mode & 0o7777))

    token = open("/var/lib/private/quire/owner-token").read().strip()
    inside = call_tool(token, "vault_read_note", {"path": "Welcome.md"})
    record("a note inside the vault is readable", not inside.get("isError"), str(inside)[:200])
    outside = call_tool(token, "vault_read_note", {"path": "Escape.md"})
    text = outside["content"][0]["text"]
    record("a read outside the vault fails", outside.get("isError") is True and text.startswith("path_forbidden"), text[:160])
    doctor = sh("/usr/local/bin/quire", "doctor", "--config", "/etc/quire/quire.toml")
    RESULTS.append("INFO doctor: " + " | ".join(doctor.splitlines()))

    time.sleep(1)
    journal = [json.loads(line) for line in sh("journalctl", "-u", "quire.service", "-o", "json", "--no-pager").splitlines() if line]
    tool_entries = [e for e in journal if e.get("TOOL") == "vault_read_note"]
    record("journald holds structured fields", bool(tool_entries) and all("PATH" in e and "OUTCOME" in e for e in tool_entries),
           json.dumps({k: v for k, v in (tool_entries[:1] or [{}])[0].items() if k in ("TOOL", "PATH", "OUTCOME", "IDENTITY")}))
    leaked = [e for e in journal if token in json.dumps(e)]
    record("no token in the journal", not leaked)

    # A hung index writer: the fault switch freezes it on its next command, which a file change
    # sends; the watchdog then has systemd restart the service.
    os.makedirs("/run/systemd/system/quire.service.d", exist_ok=True)
    with open("/run/systemd/system/quire.service.d/fault.conf", "w") as dropin:
        dropin.write("[Service]\nEnvironment=QUIRE_TEST_FAULT=hang-writer\n")
    sh("systemctl", "daemon-reload")
    sh("systemctl", "restart", "quire.service")
    wait_for(lambda: healthz() == 200, 20)
    before = int(sh("systemctl", "show", "-p", "NRestarts", "--value", "quire.service") or 0)
    with open("/srv/vault/Inbox/trigger.md", "w") as note:
        note.write("wake the writer\n")
    restarted = wait_for(lambda: int(sh("systemctl", "show", "-p", "NRestarts", "--value", "quire.service") or 0) > before, 30)
    log = sh("journalctl", "-u", "quire.service", "--no-pager")
    record("a hung index writer makes the watchdog restart the service",
           restarted and "watchdog timeout" in log.lower(), f"NRestarts {before} -> {sh('systemctl', 'show', '-p', 'NRestarts', '--value', 'quire.service')}")
    os.remove("/run/systemd/system/quire.service.d/fault.conf")
    sh("systemctl", "daemon-reload")
    # The process the watchdog restarted still has the fault switch in its environment.
    sh("systemctl", "restart", "quire.service")
    wait_for(lambda: healthz() == 200, 20)

    git_sync(token)
    vault_replaced(token)

    security = subprocess.run(["systemd-analyze", "security", "--no-pager", "quire.service"], capture_output=True, text=True).stdout
    RESULTS.append("TABLE\n" + security)
    exposure = None
    for line in security.splitlines():
        if "Overall exposure level" in line:
            exposure = float(line.split(":")[1].split()[0])
    record("systemd-analyze security exposure <= 2.0", exposure is not None and exposure <= 2.0, f"exposure {exposure}")


try:
    main()
except Exception as error:  # the host must always get a result file
    record("the in-container test ran to the end", False, repr(error) + " " + traceback.format_exc().replace("\n", " | ")[-600:])
    for unit in ("quire.service", "quire-first-sync.service"):
        journal = sh("journalctl", "-u", unit, "-n", "40", "-o", "cat", "--no-pager")
        RESULTS.append(f"INFO journal of {unit}: " + journal.replace("\n", " | ")[-4000:])
finally:
    with open("/out/result.txt", "w") as out:
        out.write("\n".join(RESULTS) + "\n")
    subprocess.run(["systemctl", "poweroff", "--no-block"])
