"""Checks the hosts tests/nix/eval.nix evaluated through nixpkgs' module system.

Usage: scenarios.py DIR, where DIR holds meta.json (names, assertionScenarios, vmNodes) and, per
scenario, NAME.json (the evaluated summary) or NAME.err (the evaluation error). Writes every
scenario's units, as NixOS would write them, to DIR/units/NAME/. Exit status 1 on any problem.
"""
import json
import pathlib
import shlex
import sys

out = pathlib.Path(sys.argv[1])
meta = json.loads((out / "meta.json").read_text())
problems = []


def problem(scenario, text):
    problems.append(f"{scenario}: {text}")


def parse_unit(text):
    """A unit file as {section: [(key, value), ...]}, the way systemd reads it."""
    sections, current = {}, None
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            current = sections.setdefault(line.strip("[]"), [])
        else:
            key, _, value = line.partition("=")
            current.append((key, value))
    return sections


def values(unit, section, key):
    return [value for k, value in unit.get(section, []) if k == key]


def environment(unit):
    """Environment= lines unquoted as systemd does: each word one NAME=value assignment."""
    variables = {}
    for line in values(unit, "Service", "Environment"):
        for word in shlex.split(line):
            name, _, value = word.partition("=")
            variables[name] = value
    return variables


results = {}
for name, expect in meta["errorScenarios"].items():
    error = out / f"{name}.err"
    if not error.exists() or expect not in error.read_text():
        problem(name, f"must fail to evaluate with {expect!r}, but " + (error.read_text()[:300] if error.exists() else "it evaluated"))
for name in meta["names"]:
    error = out / f"{name}.err"
    if name in meta["errorScenarios"]:
        continue
    if error.exists():
        lines = [line for line in error.read_text().splitlines() if line.strip()]
        problem(name, "does not evaluate: " + " | ".join(lines[:3]))
        continue
    results[name] = json.loads((out / f"{name}.json").read_text())
    directory = out / "units" / name
    directory.mkdir(parents=True, exist_ok=True)
    for unit, data in results[name]["units"].items():
        (directory / unit).write_text(data["text"])


def units(name):
    return {unit: parse_unit(data["text"]) for unit, data in results[name]["units"].items()}


def expect_clean(name):
    if name in results:
        for failed in results[name]["failed"]:
            problem(name, f"assertion fails: {failed['message']}")


def expect_lines(name, unit_name, lines):
    if name not in results:
        return
    text = results[name]["units"].get(unit_name, {}).get("text")
    if text is None:
        problem(name, f"has no {unit_name}")
        return
    for line in lines:
        if line not in text.splitlines():
            problem(name, f"{unit_name} lacks {line}")


# A host that imports the module but does not enable Quire gets nothing from it.
if "not-enabled" in results:
    host = results["not-enabled"]
    if host["units"] or host["users"] or host["tmpfiles"] or host["failed"] or host["firewall"]:
        problem("not-enabled", f"the module added something to a host without Quire: {host}")

# The default instance: socket-activated, hardened, its vault created.
if "default" in results:
    expect_clean("default")
    host = results["default"]
    if sorted(host["units"]) != ["quire.service", "quire.socket"]:
        problem("default", f"units {sorted(host['units'])}, expected quire.service and quire.socket")
    else:
        if host["units"]["quire.socket"]["wantedBy"] != ["sockets.target"] or host["units"]["quire.service"]["wantedBy"]:
            problem("default", "only the socket may be enabled (Quire starts on the first request)")
    expect_lines("default", "quire.service", [
        "Type=notify", "DynamicUser=true", "ProtectSystem=strict", "PrivateNetwork=true", "IPAddressDeny=any",
        "RestrictAddressFamilies=AF_UNIX", "ReadWritePaths=/var/lib/quire-vaults/quire", "Requires=quire.socket",
        "User=quire", "Group=quire", "WatchdogSec=30",
    ])
    expect_lines("default", "quire.socket", ["ListenStream=127.0.0.1:8787", "FileDescriptorName=http", "Service=quire.service"])
    if host["users"].get("quire") != {"isSystemUser": True, "group": "quire", "extraGroups": []}:
        problem("default", f"user quire is {host['users'].get('quire')}")
    if "/var/lib/quire-vaults/quire" not in host["tmpfiles"].get("10-quire", {}):
        problem("default", "the vault folder is not created")

# Identities, a public URL, nginx with ACME.
if "auth-acme" in results:
    expect_clean("auth-acme")
    host = results["auth-acme"]
    expect_lines("auth-acme", "quire.service", [
        "LoadCredential=identity-claude:/run/keys/quire-claude", "LoadCredential=identity-reader:/run/keys/quire-reader",
        "PrivateNetwork=false", "RestrictAddressFamilies=AF_INET", "IPAddressDeny=",
    ])
    vhost = host["nginx"]["virtualHosts"].get("notes.example.org")
    if not host["nginx"]["enable"] or not vhost or not (vhost["forceSSL"] and vhost["enableACME"]) \
            or vhost["locations"]["/"]["proxyPass"] != "http://127.0.0.1:8787":
        problem("auth-acme", f"nginx is {host['nginx']}")
    if sorted(host["firewall"]) != [80, 443]:
        problem("auth-acme", f"firewall opens {host['firewall']}, expected 80 and 443")

# Every sync backend and both proxies at once, with read-only instances.
if "multi" in results:
    expect_clean("multi")
    host = results["multi"]
    expected = {
        "quire.service", "quire.socket", "quire-sync.service", "quire-sync.timer", "quire-first-sync.service",
        "quire-shared.service", "quire-shared.socket", "quire-shared-first-sync.service",
        "quire-archive.service", "quire-archive.socket", "quire-archive-sync.service", "quire-archive-first-sync.service",
        "quire-offline.service", "quire-offline.socket", "syncthing.service",
    }
    if set(host["units"]) != expected:
        problem("multi", f"units {sorted(host['units'])}, expected {sorted(expected)}")
    # Every backend: Quire requires the first sync and starts after it (docs/SYNC.md).
    expect_lines("multi", "quire.service", ["After=quire.socket network.target quire-first-sync.service",
                                            "Requires=quire.socket quire-first-sync.service"])
    expect_lines("multi", "quire-first-sync.service", ["Type=oneshot", "RemainAfterExit=true", "Before=quire.service"])
    expect_lines("multi", "quire-shared-first-sync.service", ["User=syncthing", "ConditionPathExists=!/var/lib/quire-shared-sync/first-sync-done"])
    expect_lines("multi", "quire-archive-first-sync.service", ["ConditionPathExists=!/var/lib/quire-archive-sync/first-sync-done"])
    for name in ("quire-first-sync.service", "quire-shared-first-sync.service", "quire-archive-first-sync.service"):
        if host["units"].get(name, {}).get("wantedBy") != ["multi-user.target"]:
            problem("multi", f"{name} does not run at boot")
    stignore = host["tmpfiles"].get("10-quire-shared", {}).get("/srv/shared/.stignore", {}).get("f+", {})
    if "(?d).quire-*.tmp" not in stignore.get("argument", ""):
        problem("multi", f"the Syncthing vault gets no .stignore for Quire's temp files: {stignore}")
    expect_lines("multi", "quire-sync.service", ["Type=oneshot", "LoadCredential=git-ssh-key:/run/keys/git", "User=quire"])
    expect_lines("multi", "quire-sync.timer", ["OnUnitActiveSec=5min"])
    expect_lines("multi", "quire-shared.service", ["After=quire-shared.socket network.target syncthing.service quire-shared-first-sync.service", "UMask=0007"])
    expect_lines("multi", "quire-archive.service", ["ReadOnlyPaths=/srv/archive", "After=quire-archive.socket network.target quire-archive-first-sync.service"])
    expect_lines("multi", "quire-archive-sync.service", ["LoadCredential=obsidian-auth-token:/run/keys/obsidian"])
    expect_lines("multi", "quire-offline.service", ["ReadOnlyPaths=/srv/offline", "PrivateNetwork=true"])
    expect_lines("multi", "syncthing.service", ["UMask=0007"])
    for name in ("quire-archive.service", "quire-offline.service"):
        if name in host["units"] and "ReadWritePaths=" in host["units"][name]["text"]:
            problem("multi", f"{name} is read-only but has ReadWritePaths=")
    if host["syncthing"] != {"enable": True, "folders": {"quire-shared": {"path": "/srv/shared", "devices": ["laptop"], "versioning": "staggered"}}}:
        problem("multi", f"syncthing is {host['syncthing']}")
    if "quire-shared" not in host["users"].get("syncthing", {}).get("extraGroups", []):
        problem("multi", "the syncthing user is not in the shared vault's group")
    if sorted(host["caddy"]["virtualHosts"]) != ["http://archive.internal", "shared.example.org"]:
        problem("multi", f"caddy serves {sorted(host['caddy']['virtualHosts'])}")
    if sorted(host["nginx"]["virtualHosts"]) != ["notes.example.org"]:
        problem("multi", f"nginx serves {sorted(host['nginx']['virtualHosts'])}")
    if any("quire-disabled" in unit for unit in host["units"]):
        problem("multi", "a disabled instance has units")

# Semantic search on with the module's defaults: the MiniLM folder and ONNX Runtime >= 1.31 (the
# package built from the PyPI wheel, not nixpkgs' onnxruntime, which is older than ort's api-31).
if "semantic" in results:
    expect_clean("semantic")
    toml = results["semantic"]["configs"].get("quire", "")
    for line in ("embeddings = true", 'model_dir = "/nix/store/', 'onnxruntime = "/nix/store/'):
        if line not in toml:
            problem("semantic", f"quire.toml lacks {line!r}:\n{toml}")
    if "quire-model-minilm" not in toml or "onnxruntime-library-1.32.0/lib/libonnxruntime.so" not in toml:
        problem("semantic", f"quire.toml does not use the MiniLM package and ONNX Runtime 1.32 by default:\n{toml}")
    # PDF page rendering works out of the box too: pdfium from the pinned wheel, named in [files].
    if 'pdfium_library = "/nix/store/' not in toml or "pdfium-library-5.15.2/lib/libpdfium.so" not in toml:
        problem("semantic", f"quire.toml does not name the pdfium package's library:\n{toml}")

# The git backend's protocol with Quire: the TOML names the three files the script's environment
# names, the first sync runs at boot, OnFailure= and the pinned host keys reach both units.
if "git-sync" in results:
    expect_clean("git-sync")
    host = results["git-sync"]
    toml = host["configs"].get("quire", "")
    for line in ('lock_file = "/var/lib/quire-sync/vault.lock"', 'first_sync_marker = "/var/lib/quire-sync/first-sync-done"',
                 'status_file = "/var/lib/quire-sync/status.json"'):
        if line not in toml:
            problem("git-sync", f"quire.toml lacks {line}:\n{toml}")
    for name in ("quire-first-sync.service", "quire-sync.service"):
        unit = units("git-sync").get(name, {})
        variables = environment(unit)
        for key, value in (("QUIRE_SYNC_LOCK", "/var/lib/quire-sync/vault.lock"), ("QUIRE_SYNC_MARKER", "/var/lib/quire-sync/first-sync-done"),
                           ("QUIRE_SYNC_STATUS", "/var/lib/quire-sync/status.json"), ("QUIRE_SYNC_HOST", "notes")):
            if variables.get(key) != value:
                problem("git-sync", f"{name}: {key}={variables.get(key)!r}, expected {value!r}")
        if "StrictHostKeyChecking=yes" not in variables.get("GIT_SSH_COMMAND", ""):
            problem("git-sync", f"{name}: the pinned host keys are not used: {variables.get('GIT_SSH_COMMAND')!r}")
        expect_lines("git-sync", name, ["OnFailure=notify-owner@%n.service", "StateDirectory=quire-sync"])
    expect_lines("git-sync", "quire-first-sync.service", ["TimeoutStartSec=30min"])
    expect_lines("git-sync", "quire.service", ["ReadWritePaths=-/var/lib/quire-sync/vault.lock"])
    # Quire opens the lock read-only and cannot create it: it must exist before any unit runs.
    if "f" not in host["tmpfiles"].get("10-quire", {}).get("/var/lib/quire-sync/vault.lock", {}):
        problem("git-sync", "the sync lock file is not created at boot (tmpfiles)")
    if not any(line.endswith("/bin/quire-git-sync --first") for line in values(units("git-sync").get("quire-first-sync.service", {}), "Service", "ExecStart")):
        problem("git-sync", "quire-first-sync.service does not run quire-git-sync --first")

if "unit-setting-forced" in results:
    expect_clean("unit-setting-forced")
    expect_lines("unit-setting-forced", "quire.service", ["TimeoutStopSec=1min"])

# An environment value with a space arrives as one variable.
if "environment-space" in results:
    expect_clean("environment-space")
    service = units("environment-space").get("quire.service", {})
    variables = environment(service)
    if variables.get("GREETING") != "hello wide world" or variables.get("QUIRE_LOG") != "debug" or "wide" in variables:
        problem("environment-space", f"systemd would read the environment as {variables}")

# One scenario per assertion: exactly its assertion fails, and together they cover every
# assertion of a single instance plus the ones across instances.
covered = set()
single = results.get("default", {}).get("assertionCount")
for name, expect in meta["assertionScenarios"].items():
    if name not in results:
        continue
    failed = results[name]["failed"]
    if len(failed) != 1 or expect not in failed[0]["message"]:
        problem(name, f"expected exactly the assertion with {expect!r} to fail, got {[f['message'] for f in failed]}")
        continue
    index, count = failed[0]["index"], results[name]["assertionCount"]
    per_instance = count - single if count != single else None
    # With two instances the list is: first instance's, second instance's, then the global ones.
    if per_instance is not None and index >= 2 * per_instance:
        index -= per_instance
    covered.add(index)
if single is not None and covered != set(range(single)):
    missing = sorted(set(range(single)) - covered)
    problem("assertions", f"no scenario fires the assertion(s) at position {missing} of the default host's list")

# The units NixOS writes for the default instance are the units nixos/render-units.nix writes off
# NixOS for the same settings, compared as systemd parses them. Allowed to differ: what NixOS adds
# to every unit (PATH, X-Restart-Triggers), the service's [Install] (NixOS enables only the
# socket), and the keys instance-units.nix declares per instance (user, group, ordering).
BOOLEANS = {"yes": "true", "true": "true", "no": "false", "false": "false"}
SPLIT = {"After", "Before", "Requires", "Wants", "Documentation", "WantedBy"}


def settings(unit, section, ignore):
    found = {}
    for key, value in unit.get(section, []):
        # An empty assignment resets a setting to its default, which is what leaving it out does;
        # except for the capability sets, where empty means none.
        if key in ignore or value == "" and key not in ("CapabilityBoundingSet", "AmbientCapabilities"):
            continue
        if key == "Environment":
            found.setdefault(key, []).extend(sorted(f"{k}={v}" for k, v in environment({"Service": [(key, value)]}).items() if k != "PATH"))
        elif key in SPLIT:
            found.setdefault(key, []).extend(value.split())
        else:
            found.setdefault(key, []).append(BOOLEANS.get(value, value))
    return found


parity = 0
for name, host in results.items():
    # A host that overrides a unit setting on purpose differs there, as it should.
    if not host["plainUnits"] or name == "unit-setting-forced":
        continue
    parity += 1
    nixos = units(name)
    for unit_name, kind in (("quire.service", "service"), ("quire.socket", "socket")):
        plain = parse_unit(host["plainUnits"][unit_name])
        for section in sorted((set(plain) | set(nixos[unit_name])) - {"Install"}):
            ignore = set(meta["overridden"][kind].get(section, [])) | {"X-Restart-Triggers"}
            left, right = settings(nixos[unit_name], section, ignore), settings(plain, section, ignore)
            for key in sorted(set(left) | set(right)):
                if sorted(left.get(key, [])) != sorted(right.get(key, [])):
                    problem(name, f"{unit_name} [{section}] {key}: NixOS writes {left.get(key)}, render-units.nix {right.get(key)}")
        wanted = [value for _, value in plain.get("Install", []) if _ == "WantedBy"]
        if kind == "socket" and host["units"][unit_name]["wantedBy"] != wanted:
            problem(name, f"quire.socket is wanted by {host['units'][unit_name]['wantedBy']} on NixOS, {wanted} off NixOS")

# Every VM test node evaluates without a failed assertion.
for name in meta["vmNodes"]:
    expect_clean(name)

for line in problems:
    print("  " + line, file=sys.stderr)
print(f"  {len(results)}/{len(meta['names']) - len(meta['errorScenarios'])} hosts evaluated, "
      f"{len(meta['errorScenarios'])} refused as they must be; {len(covered)} assertions, each fired alone; "
      f"{parity} default instances whose units match render-units.nix's; units in {out}/units/")
sys.exit(1 if problems else 0)
