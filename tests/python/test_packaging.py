"""The packaging a newcomer installs from: the MCP Registry's server.json and the Claude Desktop
bundle (.mcpb).

server.json is checked against the registry's published schema (kept beside it, byte for byte)
and against Cargo.toml. The bundle is built by the same script a release uses
(`examples/mcpb/build`, which runs the bundle format's own `mcpb validate` and `mcpb pack`), then
unpacked and started the way Claude Desktop starts it: the manifest's command and arguments with
`${__dirname}` and `${user_config.vault}` filled in, driven by the official Python MCP SDK.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import stat
import subprocess
import tomllib
import zipfile
from pathlib import Path

import jsonschema
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from conftest import server_env

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[2]
REGISTRY = REPO / "examples" / "registry"


def cargo_package() -> dict:
    return tomllib.loads((REPO / "Cargo.toml").read_text())["package"]


def registry_validator() -> jsonschema.Draft7Validator:
    schema = json.loads((REGISTRY / "server.schema.json").read_text())
    return jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker())


def test_server_json_validates_against_the_registry_schema():
    server = json.loads((REGISTRY / "server.json").read_text())
    assert server["$schema"] == registry_validator().schema["$id"]
    errors = sorted(registry_validator().iter_errors(server), key=str)
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors]


def test_the_schema_refuses_what_the_registry_refuses():
    """The kept schema bites: the registry's own limits fail here too."""
    server = json.loads((REGISTRY / "server.json").read_text())
    too_long = copy.deepcopy(server)
    too_long["description"] = "x" * 101
    no_slash = copy.deepcopy(server)
    no_slash["name"] = "quire"
    latest = copy.deepcopy(server)
    latest["packages"][0]["version"] = "latest"
    for bad in (too_long, no_slash, latest):
        assert list(registry_validator().iter_errors(bad)), bad


def test_server_json_names_this_crate_and_version():
    package = cargo_package()
    server = json.loads((REGISTRY / "server.json").read_text())
    assert server["version"] == package["version"]
    assert server["repository"]["url"] == package["repository"]
    kinds = {p["registryType"]: p for p in server["packages"]}
    assert set(kinds) == {"cargo", "oci"}
    assert kinds["cargo"]["identifier"] == package["name"]
    assert kinds["cargo"]["version"] == package["version"]
    assert kinds["oci"]["identifier"].endswith(f":{package['version']}")
    # Both start the server on a vault: `quire serve --vault <folder>`, the image through its Cmd.
    arguments = kinds["cargo"]["packageArguments"]
    assert arguments[0] == {"type": "positional", "value": "serve"}
    assert arguments[1]["name"] == "--vault" and arguments[1]["isRequired"]


@pytest.fixture(scope="module")
def bundle(quire_bin: Path, tmp_path_factory) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("mcpb") / "quire.mcpb"
    build = subprocess.run(
        [str(REPO / "examples" / "mcpb" / "build"), str(quire_bin), str(out)],
        capture_output=True, text=True, timeout=600,
    )
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    assert "Manifest schema validation passes" in build.stdout
    unpacked = tmp_path_factory.mktemp("unpacked")
    with zipfile.ZipFile(out) as archive:
        archive.extractall(unpacked)
        # extractall drops permission bits; Claude Desktop keeps the ones the archive records.
        for info in archive.infolist():
            mode = info.external_attr >> 16
            if mode:
                os.chmod(unpacked / info.filename, stat.S_IMODE(mode))
    return out, unpacked


def test_bundle_holds_the_manifest_and_an_executable_server(bundle):
    _, unpacked = bundle
    manifest = json.loads((unpacked / "manifest.json").read_text())
    assert manifest["version"] == cargo_package()["version"]
    assert manifest["server"]["type"] == "binary"
    entry = unpacked / manifest["server"]["entry_point"]
    assert entry.is_file() and os.access(entry, os.X_OK)
    assert manifest["user_config"]["vault"]["type"] == "directory"
    assert manifest["user_config"]["vault"]["required"] is True


async def test_bundle_serves_a_vault_as_claude_desktop_starts_it(bundle, tmp_path, xdg_home):
    _, unpacked = bundle
    manifest = json.loads((unpacked / "manifest.json").read_text())
    vault = tmp_path / "My Vault"
    vault.mkdir()
    (vault / "Hello.md").write_text("# Hello\n\nFrom the bundle.\n")
    fill = {"${__dirname}": str(unpacked), "${user_config.vault}": str(vault)}

    def filled(text: str) -> str:
        for key, value in fill.items():
            text = text.replace(key, value)
        return text

    config = manifest["server"]["mcp_config"]
    params = StdioServerParameters(
        command=filled(config["command"]), args=[filled(a) for a in config["args"]],
        env=server_env(xdg_home), cwd=str(tmp_path))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            # The manifest lists exactly the tools the bundled binary serves.
            assert [t.name for t in tools.tools] == [t["name"] for t in manifest["tools"]]
            result = await session.call_tool("vault_read_note", {"path": "Hello.md"})
            assert not result.is_error, result.content
            assert "From the bundle." in result.structured_content["content"]


def cargo() -> str:
    found = shutil.which("cargo")
    if found is None:
        pytest.skip("SKIP: cargo is not on PATH")
    return found


def test_the_crate_ships_the_source_and_nothing_of_the_tests():
    listing = subprocess.run(
        [cargo(), "package", "--locked", "--list", "--allow-dirty"],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )
    assert listing.returncode == 0, listing.stderr[-3000:]
    files = listing.stdout.split()
    assert "Cargo.toml" in files and "Cargo.lock" in files and "README.md" in files
    assert "src/main.rs" in files
    outside = [f for f in files if not f.startswith("src/") and f not in
               ("Cargo.toml", "Cargo.toml.orig", "Cargo.lock", "README.md", ".cargo_vcs_info.json")]
    assert outside == [], outside


async def test_cargo_install_gives_a_quire_that_serves_a_vault(tmp_path, xdg_home):
    """`cargo install --locked --path .` into an empty root: the installed binary, run from a
    folder with nothing of the repository, serves a vault through the SDK. (`--debug` and the
    repository's target folder reuse the test build; the release install is the same crate.)"""
    root = tmp_path / "root"
    install = subprocess.run(
        [cargo(), "install", "--locked", "--path", str(REPO), "--debug", "--root", str(root),
         "--target-dir", str(REPO / "target"), "--offline"],
        capture_output=True, text=True, timeout=1200,
    )
    assert install.returncode == 0, install.stderr[-3000:]
    installed = root / "bin" / "quire"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    vault = elsewhere / "vault"
    vault.mkdir()
    (vault / "Note.md").write_text("---\ntags: [x]\n---\nInstalled.\n")
    params = StdioServerParameters(command=str(installed), args=["serve", "--vault", str(vault)],
                                   env=server_env(xdg_home), cwd=str(elsewhere))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool("vault_read_note", {"path": "Note.md"})
            assert not result.is_error, result.content
            assert "Installed." in result.structured_content["content"]
