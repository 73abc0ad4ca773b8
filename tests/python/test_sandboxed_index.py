"""The first index of a large vault through `quire serve` under its own landlock sandbox (issue 47,
F12): SQLite's sorter spills a large `CREATE INDEX` to temporary files, which must land in a folder
the sandbox grants, not in /var/tmp or /tmp. At 100k notes that failed and left a server answering
`internal` to every call.

A build with `--features test-faults` and `QUIRE_TEST_FAULT=small-sort-cache` gives the first build
a 256 KiB page cache, so the sorter spills at a few thousand notes as it does at 100k."""

from __future__ import annotations

import random

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from conftest import REQUEST_TIMEOUT_S, server_env

pytestmark = pytest.mark.anyio

NOTES = 2500
LINKS_PER_NOTE = 40


def write_linked_vault(root, rng: random.Random) -> None:
    for folder in range(25):
        (root / f"Area {folder:02}").mkdir(parents=True)
    for number in range(NOTES):
        links = " ".join(f"[[Topic {rng.randrange(20_000):05} of the long tail]]" for _ in range(LINKS_PER_NOTE))
        (root / f"Area {number % 25:02}" / f"Note {number:05}.md").write_text(
            f"---\nstatus: s{number % 7}\nrating: {number % 5}\n---\n# Note {number}\n\nword{number} {links}\n"
        )


async def test_r47_a_sandboxed_first_index_whose_sort_spills_is_built(faults_bin, tmp_path, xdg_home):
    vault = tmp_path / "vault"
    write_linked_vault(vault, random.Random(47))
    # No TMPDIR: SQLite falls back to /var/tmp and /tmp, which the sandbox does not grant.
    env = server_env(xdg_home) | {"QUIRE_TEST_FAULT": "small-sort-cache", "RUST_LOG": "info"}
    params = StdioServerParameters(command=str(faults_bin), args=["serve", "--vault", str(vault)], env=env)
    log = tmp_path / "quire-stderr.log"
    with open(log, "a") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=REQUEST_TIMEOUT_S) as session:
                await session.initialize()
                found = await session.call_tool("vault_search", {"query": "word1234"})
                backlinks = await session.call_tool("vault_get_backlinks", {"path": "Area 09/Note 01234.md"})
                tags = await session.call_tool("vault_list_property_values", {"key": "status"})
    text = log.read_text()
    if "landlock fully enforced" not in text:
        pytest.skip(f"landlock is not fully enforced on this kernel: {text[-400:]}")
    assert "test fault: a first build sorts" in text, text[-2000:]
    assert "could not be brought up to date" not in text, text[-2000:]
    assert not found.is_error, found.content
    assert [hit["path"] for hit in found.structured_content["results"]][:1] == ["Area 09/Note 01234.md"]
    assert not backlinks.is_error and not tags.is_error, (backlinks.content, tags.content)
    assert len(tags.structured_content["values"]) == 7, tags.structured_content
    leftovers = [p for p in (xdg_home / "state").rglob("*") if p.name.startswith("etilqs")]
    assert leftovers == [], leftovers
