"""Plain helpers shared by the end-to-end tests (no pytest fixtures here).

The fixtures live in conftest.py; this module holds the on-disk vault content
the tests rely on and small functions for inspecting the vault from outside
the server (hashes, snapshots, the expected note listing).
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from datetime import datetime, timedelta
from pathlib import Path

# Error codes the server may put in front of a failed tool result's text.
ERROR_CODES = (
    "invalid_path",
    "path_forbidden",
    "not_found",
    "already_exists",
    "conflict",
    "revision_required",
    "too_large",
    "unsupported_extension",
    "invalid_argument",
    "invalid_properties",
    "no_match",
    "ambiguous_match",
    "disk_full",
    "read_only",
    "permission_denied",
    "heading_not_found",
    "ambiguous_heading",
    "busy",
    "internal",
)

TOOL_NAMES = (
    "vault_read_note",
    "vault_write_note",
    "vault_list_notes",
    "vault_delete_note",
    "vault_patch_note",
    "vault_replace_in_note",
    "vault_insert_at_anchor",
    "vault_replace_span",
    "vault_delete_span",
    "vault_update_properties",
)

ALPHA = """\
---
title: Alpha
tags: [project, active]
status: active
priority: 3
done: false
---
# Alpha

Alpha intro line.

## Goals

Goal one.

### Sub goal

Sub goal text.

## Review

Alpha review.

# Review

Top-level review.
"""

ALPHA_PROPERTIES = {
    "title": "Alpha",
    "tags": ["project", "active"],
    "status": "active",
    "priority": 3,
    "done": False,
}

# (heading, level, 1-based line) of every heading in ALPHA.
ALPHA_OUTLINE = [
    ("Alpha", 1, 8),
    ("Goals", 2, 12),
    ("Sub goal", 3, 16),
    ("Review", 2, 20),
    ("Review", 1, 24),
]

WELCOME = """\
---
title: Welcome
tags:
  - intro
  - start
---
# Welcome

This is the welcome note.
"""

LONG = "".join(f"Line {i}\n" for i in range(1, 31))  # 30 lines

# Files every test vault contains (on top of examples/vault when it exists).
BASE_FILES: dict[str, str] = {
    "Welcome.md": WELCOME,
    "Projects/Alpha.md": ALPHA,
    "Projects/Beta.md": "# Beta\n\nBeta body.\n",
    "Projects/Sub/Gamma.md": "---\ntags: [deep]\n---\nGamma body.\n",
    "Daily/2024-01-01.md": "# 2024-01-01\n\nFirst day.\n",
    "Daily/2024-01-02.md": "# 2024-01-02\n\nSecond day.\n",
    "Attic/Old/Ancient.md": "Ancient history.\n",
    "Long.md": LONG,
    "notes.txt": "plain text, not a note\n",
    "Board.canvas": '{"nodes":[],"edges":[]}\n',
    ".obsidian/app.json": '{"promptDelete": false}\n',
    ".obsidian/workspace.md": "hidden config note\n",
    ".trash/Gone.md": "already trashed\n",
    ".hidden.md": "hidden dot-file note\n",
    "Projects/.draft.md": "hidden draft\n",
}

SECRET = "# Secret\n\nThis lives outside the vault.\n"

HEX64 = re.compile(r"^[0-9a-f]{64}$")
RFC3339 = re.compile(
    r"^(\d{4}-\d{2}-\d{2})[Tt](\d{2}:\d{2}:\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$"
)


def write_files(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_bytes(content.encode("utf-8"))


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_revision(path: Path) -> str:
    return sha256_hex(path.read_bytes())


def parse_rfc3339(value: str) -> datetime:
    """Parse an RFC 3339 timestamp (any fraction length); raises AssertionError if malformed."""
    m = RFC3339.match(value)
    assert m, f"not an RFC 3339 timestamp: {value!r}"
    date, time, frac, tz = m.groups()
    frac = (frac or ".0")[1:]
    frac = (frac + "000000")[:6]
    tz = "+00:00" if tz in ("Z", "z") else tz
    return datetime.fromisoformat(f"{date}T{time}.{frac}{tz}")


def assert_modified_matches(value: str, path: Path, slack: float = 2.0) -> None:
    got = parse_rfc3339(value)
    mtime = datetime.fromtimestamp(path.stat().st_mtime).astimezone()
    assert abs(got - mtime) <= timedelta(seconds=slack), (value, mtime.isoformat())


def is_hidden(rel: str) -> bool:
    return any(part.startswith(".") for part in rel.split("/"))


def expected_notes(vault: Path) -> list[str]:
    """Vault-relative paths of the .md notes the list tool must return (any order).

    Hidden segments are skipped, and so is anything reached through a symlink
    that resolves outside the vault.
    """
    root = vault.resolve()
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(vault, followlinks=True):
        rel_dir = os.path.relpath(dirpath, vault)
        rel_dir = "" if rel_dir == "." else rel_dir.replace(os.sep, "/")
        keep = []
        for d in dirnames:
            full = Path(dirpath, d)
            if d.startswith("."):
                continue
            if not full.resolve().is_relative_to(root):
                continue
            keep.append(d)
        dirnames[:] = keep
        for f in filenames:
            if f.startswith(".") or not f.endswith(".md"):
                continue
            full = Path(dirpath, f)
            if not full.resolve().is_relative_to(root):
                continue
            if not full.is_file():
                continue
            found.append(f"{rel_dir}/{f}" if rel_dir else f)
    return found


def is_sorted_by_path(paths: list[str]) -> bool:
    """True if `paths` is sorted by plain string order or by path components."""
    return paths == sorted(paths) or paths == sorted(paths, key=lambda p: p.split("/"))


def snapshot(*roots: Path) -> dict[str, tuple]:
    """Everything observable about the trees under `roots`, without following symlinks."""
    snap: dict[str, tuple] = {}
    for root in roots:
        if not root.exists() and not root.is_symlink():
            snap[str(root)] = ("missing",)
            continue
        for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
            for name in dirnames + filenames:
                full = Path(dirpath, name)
                st = full.lstat()
                if stat.S_ISLNK(st.st_mode):
                    snap[str(full)] = ("link", os.readlink(full))
                elif stat.S_ISDIR(st.st_mode):
                    snap[str(full)] = ("dir", stat.S_IMODE(st.st_mode))
                else:
                    snap[str(full)] = ("file", stat.S_IMODE(st.st_mode), full.read_bytes())
    return snap


def _describe(entry: tuple | None):
    if entry is None:
        return None
    if entry[0] == "file":
        return ("file", oct(entry[1]), entry[2][:80])
    return entry


def diff_snapshots(before: dict[str, tuple], after: dict[str, tuple]) -> list[str]:
    """Human-readable list of the entries that differ between two snapshots."""
    return [
        f"{key}: {_describe(before.get(key))} -> {_describe(after.get(key))}"
        for key in sorted(set(before) | set(after))
        if before.get(key) != after.get(key)
    ]


def error_code(text: str) -> str:
    """The stable code in front of an error text ('conflict: ...' -> 'conflict')."""
    return text.split(":", 1)[0].strip() if ":" in text else ""
