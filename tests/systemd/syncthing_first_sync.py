#!/usr/bin/env python3
"""nixos/syncthing-first-sync.sh against two real Syncthing instances on loopback (Debian's
syncthing; tests/systemd/run installs it and runs this before it boots the container).

Device "laptop" has the notes; device "server" (where Quire runs) shares the same folder and starts
empty. The helper, pointed at the server as the module's <unit>-first-sync.service points it, must
keep waiting while no device of the folder is connected, and must return only once the notes have
arrived. Prints PASS/FAIL lines; exit status 1 on any FAIL.
"""

import json
import os
import pathlib
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

HELPER = pathlib.Path(__file__).resolve().parents[2] / "nixos/syncthing-first-sync.sh"
failures = 0


def record(name, ok, detail=""):
    global failures
    failures += 0 if ok else 1
    print(f"{'PASS' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}", flush=True)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Syncthing:
    def __init__(self, root, name):
        self.home = root / name
        self.gui = f"127.0.0.1:{free_port()}"
        self.listen = f"tcp://127.0.0.1:{free_port()}"
        subprocess.run(["syncthing", "generate", f"--home={self.home}", "--no-default-folder"],
                       check=True, capture_output=True)
        config = (self.home / "config.xml").read_text()
        self.key = re.search(r"<apikey>(.*)</apikey>", config).group(1)
        config = re.sub(r"(<gui [^>]*>\s*<address>)[^<]*", r"\g<1>" + self.gui, config)
        (self.home / "config.xml").write_text(config)
        self.process = subprocess.Popen(
            ["syncthing", "serve", f"--home={self.home}", "--no-browser", "--no-restart", "--no-upgrade",
             f"--logfile={self.home}/log"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env=dict(os.environ, STNODEFAULTFOLDER="1", HOME=str(self.home)))
        for _ in range(100):
            try:
                self.device_id = self.api("system/status")["myID"]
                break
            except Exception:
                time.sleep(0.2)
        # Loopback only: no discovery, relays, NAT or usage reporting.
        self.api("config/options", "PATCH", {
            "listenAddresses": [self.listen], "globalAnnounceEnabled": False, "localAnnounceEnabled": False,
            "relaysEnabled": False, "natEnabled": False, "urAccepted": -1, "crashReportingEnabled": False})

    def api(self, path, method="GET", body=None):
        request = urllib.request.Request(f"http://{self.gui}/rest/{path}", method=method,
                                         data=json.dumps(body).encode() if body is not None else None,
                                         headers={"X-API-Key": self.key, "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as response:
            text = response.read().decode()
        return json.loads(text) if text.strip() else None

    def share(self, folder, path, other):
        self.api("config/devices", "POST", {"deviceID": other.device_id, "name": "other", "addresses": [other.listen]})
        self.api("config/folders", "POST", {"id": folder, "label": folder, "path": str(path), "type": "sendreceive",
                                            "rescanIntervalS": 5, "fsWatcherEnabled": False,
                                            "devices": [{"deviceID": self.device_id}, {"deviceID": other.device_id}]})

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=20)


def helper(instance, folder, devices, seconds):
    environment = dict(os.environ, FOLDER=folder, CONFIG=str(instance.home / "config.xml"), GUI=instance.gui,
                       DEVICES=" ".join(devices), POLL_SECONDS="2")
    try:
        done = subprocess.run(["bash", "-euo", "pipefail", str(HELPER)], env=environment, capture_output=True,
                              text=True, timeout=seconds)
        return done.returncode, done.stdout[-300:]
    except subprocess.TimeoutExpired as expired:
        return None, (expired.stdout or b"").decode()[-300:] if isinstance(expired.stdout, bytes) else str(expired.stdout)[-300:]


def main():
    root = pathlib.Path(tempfile.mkdtemp(prefix="quire-syncthing-"))
    instances = []
    try:
        laptop, server = Syncthing(root, "laptop"), Syncthing(root, "server")
        instances = [laptop, server]
        notes = root / "laptop-vault"
        notes.mkdir()
        for index in range(300):
            (notes / f"Note {index}.md").write_text(f"note {index}\n" * 50)
        (notes / ".stfolder").mkdir()
        vault = root / "server-vault"
        vault.mkdir()
        (vault / ".stfolder").mkdir()

        # The server knows the folder, but the laptop is not connected yet: not ready.
        server.share("quire", vault, laptop)
        code, output = helper(server, "quire", [laptop.device_id], 25)
        record("no first sync while no device of the folder is connected", code is None and not any(vault.glob("*.md")),
               f"exit {code}; {output.strip().splitlines()[-1] if output.strip() else ''}")

        laptop.share("quire", notes, server)
        started = time.monotonic()
        code, output = helper(server, "quire", [laptop.device_id], 180)
        arrived = sorted(path.name for path in vault.glob("*.md"))
        record("the first sync is done only once every note has arrived", code == 0 and len(arrived) == 300,
               f"exit {code} after {time.monotonic() - started:.0f} s, {len(arrived)}/300 notes; {output.strip()[-160:]}")
    finally:
        for instance in instances:
            instance.stop()
        shutil.rmtree(root, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
