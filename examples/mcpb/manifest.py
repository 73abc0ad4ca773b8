#!/usr/bin/env python3
"""Writes the manifest.json of Quire's Claude Desktop bundle (MCPB 0.3) for one `quire` binary.

The tool list comes from the binary itself: it is started over stdio on an empty vault and asked
for `tools/list`, so the bundle names exactly the tools that binary serves. The version is the
binary's own (`initialize`'s serverInfo), the platform the one it was built for.

    python3 examples/mcpb/manifest.py BINARY > manifest.json
"""

from __future__ import annotations

import json
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

PLATFORMS = {"Linux": "linux", "Darwin": "darwin"}


def ask(binary: str) -> tuple[dict, list[dict]]:
    """`initialize` and `tools/list` from `binary serve` on an empty vault."""
    with tempfile.TemporaryDirectory() as work:
        vault = Path(work) / "vault"
        vault.mkdir()
        requests = [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "quire-mcpb-manifest", "version": "1"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
        ]
        env = {"PATH": "/usr/bin:/bin", "HOME": work, "XDG_STATE_HOME": f"{work}/state",
               "XDG_CONFIG_HOME": f"{work}/config", "XDG_DATA_HOME": f"{work}/data"}
        server = subprocess.Popen(
            [binary, "serve", "--vault", str(vault)], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True)
        answers: dict[int, dict] = {}
        try:
            for request in requests:
                server.stdin.write(json.dumps(request) + "\n")
                server.stdin.flush()
                if "id" in request:
                    while request["id"] not in answers:
                        line = server.stdout.readline()
                        if not line:
                            sys.exit(f"{binary} closed stdout before answering {request['method']}")
                        message = json.loads(line)
                        if "id" in message:
                            answers[message["id"]] = message
        finally:
            server.stdin.close()
            server.wait(timeout=30)
    for number, answer in answers.items():
        if "error" in answer:
            sys.exit(f"{binary} answered request {number} with {answer['error']}")
    return answers[1]["result"]["serverInfo"], answers[2]["result"]["tools"]


def manifest(binary: str) -> dict:
    info, tools = ask(binary)
    system = platform.system()
    if system not in PLATFORMS:
        sys.exit(f"no bundle platform for {system}: Claude Desktop runs on macOS and Linux builds here")
    return {
        "manifest_version": "0.3",
        "name": "quire",
        "display_name": "Quire",
        "version": info["version"],
        "description": "Read, search and safely edit your Obsidian vault: links, tags, tasks, Bases, history and undo.",
        "long_description": (
            "Quire serves an Obsidian vault (a folder of markdown notes) to Claude. Every write is atomic "
            "and checked against the note's revision, every change can be seen and undone, and search runs "
            "over a local index that lives outside the vault."),
        "author": {"name": "The Quire developers", "url": "https://github.com/quire-mcp/quire"},
        "repository": {"type": "git", "url": "https://github.com/quire-mcp/quire"},
        "homepage": "https://github.com/quire-mcp/quire",
        "documentation": "https://github.com/quire-mcp/quire#readme",
        "license": "MIT OR Apache-2.0",
        "keywords": ["obsidian", "markdown", "notes", "search", "knowledge base"],
        "server": {
            "type": "binary",
            "entry_point": "server/quire",
            "mcp_config": {
                "command": "${__dirname}/server/quire",
                "args": ["serve", "--vault", "${user_config.vault}"],
            },
        },
        "user_config": {
            "vault": {
                "type": "directory",
                "title": "Obsidian vault",
                "description": "The vault folder: the one holding your notes and its .obsidian folder.",
                "required": True,
            },
        },
        "tools": [{"name": tool["name"], "description": tool.get("description", "")} for tool in tools],
        "tools_generated": False,
        "compatibility": {"platforms": [PLATFORMS[system]]},
    }


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[-1].strip())
    json.dump(manifest(sys.argv[1]), sys.stdout, indent=2)
    sys.stdout.write("\n")
