"""vault_read_note over stdio: full reads, modes, paging, encodings."""

from __future__ import annotations

import unicodedata

import pytest

from vaultlib import (
    ALPHA,
    ALPHA_OUTLINE,
    ALPHA_PROPERTIES,
    HEX64,
    LONG,
    WELCOME,
    assert_modified_matches,
    error_code,
    sha256_hex,
)

pytestmark = pytest.mark.anyio

LONG_LINES = LONG.splitlines()


async def check(session, args: dict):
    """Call vault_read_note; return (is_error, structured_content, first text content)."""
    res = await session.call_tool("vault_read_note", args)
    text = res.content[0].text if res.content and res.content[0].type == "text" else ""
    return res.is_error, res.structured_content, text


def lines_of(content: str) -> list[str]:
    return content.splitlines()


async def test_full_read_returns_whole_file_and_metadata(session, vault):
    is_error, sc, text = await check(session, {"path": "Projects/Alpha.md"})
    assert not is_error, text
    data = (vault / "Projects/Alpha.md").read_bytes()
    assert sc["path"] == "Projects/Alpha.md"
    assert sc["content"] == ALPHA  # frontmatter included, byte for byte
    assert HEX64.match(sc["revision"]), sc["revision"]
    assert sc["revision"] == sha256_hex(data)
    assert sc["bytes"] == len(data)
    assert sc["total_lines"] == len(ALPHA.splitlines())
    assert_modified_matches(sc["modified"], vault / "Projects/Alpha.md")
    assert "next_start_line" not in sc or sc["next_start_line"] is None
    # The text content carries the note too, so clients without structured output can see it.
    assert "Alpha intro line." in text


async def test_full_read_of_note_without_frontmatter(session, vault):
    is_error, sc, text = await check(session, {"path": "Projects/Beta.md"})
    assert not is_error, text
    assert sc["content"] == "# Beta\n\nBeta body.\n"
    assert sc["total_lines"] == 3
    assert sc["revision"] == sha256_hex(b"# Beta\n\nBeta body.\n")


async def test_revision_changes_with_content(session, vault):
    _, first, _ = await check(session, {"path": "Projects/Beta.md"})
    (vault / "Projects/Beta.md").write_text("# Beta\n\nChanged.\n")
    _, second, _ = await check(session, {"path": "Projects/Beta.md"})
    assert first["revision"] != second["revision"]
    assert second["revision"] == sha256_hex(b"# Beta\n\nChanged.\n")
    assert second["content"] == "# Beta\n\nChanged.\n"


async def test_properties_only(session):
    is_error, sc, text = await check(session, {"path": "Projects/Alpha.md", "properties_only": True})
    assert not is_error, text
    assert sc["properties"] == ALPHA_PROPERTIES
    assert sc.get("content") is None, "properties_only must not return the note content"
    assert HEX64.match(sc["revision"])


async def test_properties_only_without_frontmatter_is_empty_object(session):
    is_error, sc, text = await check(session, {"path": "Projects/Beta.md", "properties_only": True})
    assert not is_error, text
    assert sc["properties"] == {}


async def test_properties_only_block_list_tags(session):
    is_error, sc, text = await check(session, {"path": "Welcome.md", "properties_only": True})
    assert not is_error, text
    assert sc["properties"] == {"title": "Welcome", "tags": ["intro", "start"]}


async def test_outline(session):
    is_error, sc, text = await check(session, {"path": "Projects/Alpha.md", "outline": True})
    assert not is_error, text
    outline = sc["outline"]
    assert [(h["heading"], h["level"], h["line"]) for h in outline] == ALPHA_OUTLINE
    for h in outline:
        assert isinstance(h["bytes"], int) and h["bytes"] > 0, h
    assert sc.get("content") is None, "outline mode must not return the note content"
    assert sc["total_lines"] == len(ALPHA.splitlines())


async def test_outline_of_note_without_headings(session, vault):
    (vault / "Plain.md").write_text("just text\nno headings here\n")
    is_error, sc, text = await check(session, {"path": "Plain.md", "outline": True})
    assert not is_error, text
    assert sc["outline"] == []


@pytest.mark.parametrize(
    "heading,level,expected",
    [
        ("Goals", None, "## Goals\n\nGoal one.\n\n### Sub goal\n\nSub goal text."),
        ("Sub goal", None, "### Sub goal\n\nSub goal text."),
        ("Review", 2, "## Review\n\nAlpha review."),
        ("Review", 1, "# Review\n\nTop-level review."),
        (
            "Alpha",
            None,
            "# Alpha\n\nAlpha intro line.\n\n## Goals\n\nGoal one.\n\n### Sub goal\n\n"
            "Sub goal text.\n\n## Review\n\nAlpha review.",
        ),
    ],
    ids=["with-subsection", "leaf", "level-2", "level-1", "top-section"],
)
async def test_heading_section(session, heading, level, expected):
    args = {"path": "Projects/Alpha.md", "heading": heading}
    if level is not None:
        args["heading_level"] = level
    is_error, sc, text = await check(session, args)
    assert not is_error, text
    assert sc["content"].rstrip("\n") == expected
    assert sc["revision"] == sha256_hex(ALPHA.encode())


async def test_heading_not_found(session):
    is_error, _, text = await check(session, {"path": "Projects/Alpha.md", "heading": "Nope"})
    assert is_error
    assert error_code(text) == "heading_not_found", text
    # The message lists the headings that do exist, so a model can pick one.
    assert '"Goals"' in text and "level 2" in text, text


async def test_paging_first_page(session):
    is_error, sc, text = await check(session, {"path": "Long.md", "limit": 10})
    assert not is_error, text
    assert lines_of(sc["content"]) == LONG_LINES[:10]
    assert sc["total_lines"] == 30
    assert sc.get("start_line") == 1
    assert sc["end_line"] == 10
    assert sc["next_start_line"] == 11


async def test_paging_middle_page(session):
    is_error, sc, text = await check(session, {"path": "Long.md", "start_line": 5, "limit": 3})
    assert not is_error, text
    assert lines_of(sc["content"]) == ["Line 5", "Line 6", "Line 7"]
    assert sc["start_line"] == 5
    assert sc["end_line"] == 7
    assert sc["next_start_line"] == 8
    # Revision is of the whole file, not the page.
    assert sc["revision"] == sha256_hex(LONG.encode())
    assert sc["bytes"] == len(LONG.encode())


async def test_paging_last_page_has_no_next(session):
    is_error, sc, text = await check(session, {"path": "Long.md", "start_line": 25, "limit": 10})
    assert not is_error, text
    assert lines_of(sc["content"]) == LONG_LINES[24:]
    assert sc["start_line"] == 25
    assert sc["end_line"] == 30
    assert sc.get("next_start_line") is None


async def test_start_line_without_limit_reads_to_end(session):
    is_error, sc, text = await check(session, {"path": "Long.md", "start_line": 28})
    assert not is_error, text
    assert lines_of(sc["content"]) == ["Line 28", "Line 29", "Line 30"]
    assert sc.get("next_start_line") is None


async def test_paging_through_whole_file(session):
    collected: list[str] = []
    start = 1
    for _ in range(40):
        is_error, sc, text = await check(session, {"path": "Long.md", "start_line": start, "limit": 7})
        assert not is_error, text
        page = lines_of(sc["content"])
        assert len(page) <= 7
        collected.extend(page)
        nxt = sc.get("next_start_line")
        if nxt is None:
            break
        assert nxt == start + len(page)
        start = nxt
    assert collected == LONG_LINES


async def test_paging_counts_frontmatter_lines(session):
    is_error, sc, text = await check(session, {"path": "Projects/Alpha.md", "start_line": 1, "limit": 2})
    assert not is_error, text
    assert lines_of(sc["content"]) == ["---", "title: Alpha"]


@pytest.mark.parametrize(
    "extra",
    [
        {"properties_only": True, "outline": True},
        {"properties_only": True, "heading": "Goals"},
        {"outline": True, "heading": "Goals"},
        {"properties_only": True, "outline": True, "heading": "Goals"},
        {"properties_only": True, "start_line": 2},
        {"properties_only": True, "limit": 2},
        # An outline pages by start_line alone (issue 47, F4).
        {"outline": True, "limit": 5},
        {"outline": True, "start_line": 2, "limit": 5},
        {"heading": "Goals", "start_line": 2},
        {"heading": "Goals", "limit": 2},
    ],
    ids=lambda e: "+".join(sorted(e)),
)
async def test_incompatible_modes_are_invalid_argument(session, extra):
    is_error, _, text = await check(session, {"path": "Projects/Alpha.md", **extra})
    assert is_error, f"{extra} should be rejected"
    assert text.startswith("invalid_argument:"), text


async def test_missing_note_is_not_found(session):
    is_error, _, text = await check(session, {"path": "Projects/Nope.md"})
    assert is_error
    assert text.startswith("not_found:"), text


async def test_missing_folder_is_not_found(session):
    is_error, _, text = await check(session, {"path": "Nowhere/Nope.md"})
    assert is_error
    assert text.startswith("not_found:"), text


async def test_non_utf8_note_is_invalid_argument(session, vault):
    (vault / "Latin1.md").write_bytes(b"caf\xe9\n")
    is_error, _, text = await check(session, {"path": "Latin1.md"})
    assert is_error
    assert text.startswith("invalid_argument:"), text
    assert "utf-8" in text.lower() or "utf8" in text.lower(), text
    # The file is left alone.
    assert (vault / "Latin1.md").read_bytes() == b"caf\xe9\n"


async def test_a_fifo_named_like_a_note_is_refused_without_blocking(session, vault):
    import os

    os.mkfifo(vault / "Pipe.md")
    # Were the FIFO opened, the read would block until a writer appeared: the call would hang.
    is_error, _, text = await check(session, {"path": "Pipe.md"})
    assert is_error
    assert text.startswith("invalid_argument:"), text
    assert "regular file" in text, text
    # Searching and listing keep working and never show it.
    listed = await session.call_tool("vault_list_notes", {})
    assert "Pipe.md" not in str(listed.structured_content)


async def test_nfd_file_name_is_found_by_nfc_path(session, vault):
    nfd = unicodedata.normalize("NFD", "Café.md")
    nfc = unicodedata.normalize("NFC", "Café.md")
    assert nfd != nfc
    (vault / nfd).write_text("# Café\n\ncrème brûlée\n")
    is_error, sc, text = await check(session, {"path": nfc})
    assert not is_error, text
    assert sc["content"] == "# Café\n\ncrème brûlée\n"
    assert unicodedata.normalize("NFC", sc["path"]) == nfc


async def test_unicode_content_round_trips(session, vault):
    body = "# Ünïcödé 🚀\n\n日本語のテキスト\n"
    (vault / "Unicode.md").write_text(body, encoding="utf-8")
    is_error, sc, text = await check(session, {"path": "Unicode.md"})
    assert not is_error, text
    assert sc["content"] == body
    assert sc["bytes"] == len(body.encode("utf-8"))


async def test_crlf_note_content_is_verbatim(session, vault):
    raw = b"---\r\ntitle: Win\r\n---\r\nline one\r\nline two\r\n"
    (vault / "Windows.md").write_bytes(raw)
    is_error, sc, text = await check(session, {"path": "Windows.md"})
    assert not is_error, text
    assert sc["content"].encode() == raw
    assert sc["revision"] == sha256_hex(raw)
    is_error, sc, text = await check(session, {"path": "Windows.md", "properties_only": True})
    assert not is_error, text
    assert sc["properties"] == {"title": "Win"}


async def test_empty_note(session, vault):
    (vault / "Empty.md").write_bytes(b"")
    is_error, sc, text = await check(session, {"path": "Empty.md"})
    assert not is_error, text
    assert sc["content"] == ""
    assert sc["bytes"] == 0
    assert sc["total_lines"] == 0
    assert sc["revision"] == sha256_hex(b"")


async def test_welcome_fixture_sanity(session):
    is_error, sc, text = await check(session, {"path": "Welcome.md"})
    assert not is_error, text
    assert sc["content"] == WELCOME


async def test_r47_an_outline_of_a_million_headings_pages_in_bounded_memory(quire_bin, tmp_path, xdg_home):
    # Issue 47, F4: a 9.9 MB note of a million headings gave a 123 MB answer and about 1 GB of
    # memory per call; four calls at once peaked at 4 GB. An outline now holds 1,000 headings at
    # most, and pages on with next_start_line.
    import asyncio
    import re
    from pathlib import Path

    from conftest import HttpServer, server_env
    from mcp import ClientSession
    from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

    vault = tmp_path / "vault"
    vault.mkdir()
    headings = 900_000
    note = "".join(f"# h{n}\n" for n in range(headings))
    (vault / "Huge.md").write_text(note)
    server = HttpServer(quire_bin, vault, server_env(xdg_home), tmp_path / "quire-stderr.log")
    try:
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {server.token}"}) as http:
            async with streamable_http_client(server.url, http_client=http) as streams:
                async with ClientSession(streams[0], streams[1]) as session:
                    await session.initialize()
                    # Indexing the note at start has its own peak; measure the calls alone.
                    await session.call_tool("vault_search", {"query": "h1"})
                    status = Path(f"/proc/{server.proc.pid}")
                    (status / "clear_refs").write_text("5")
                    start_kb = int(re.search(r"VmRSS:\s+(\d+)", (status / "status").read_text()).group(1))
                    pages = await asyncio.gather(*(
                        check(session, {"path": "Huge.md", "outline": True}) for _ in range(4)
                    ))
                    for is_error, sc, text in pages:
                        assert not is_error, text
                        assert len(sc["outline"]) == 1000
                        assert sc["outline"][0] == {"heading": "h0", "level": 1, "line": 1, "bytes": 5}
                        assert sc["next_start_line"] == 1001
                    # The next page goes on where the first ended; the last has no next_start_line.
                    is_error, sc, text = await check(
                        session, {"path": "Huge.md", "outline": True, "start_line": 1001}
                    )
                    assert not is_error, text
                    assert [h["heading"] for h in sc["outline"]][:2] == ["h1000", "h1001"]
                    is_error, sc, text = await check(
                        session, {"path": "Huge.md", "outline": True, "start_line": headings - 10}
                    )
                    assert not is_error, text
                    assert len(sc["outline"]) == 11 and "next_start_line" not in sc, sc
        peak_kb = int(re.search(r"VmHWM:\s+(\d+)", (status / "status").read_text()).group(1))
    finally:
        server.stop()
    # Four calls at once on a 9 MB note: within a small multiple of the note per call (the
    # bound docs/RELIABILITY.md states), not the gigabytes of before.
    note_mb = len(note) / 1e6
    grown_mb = (peak_kb - start_kb) / 1024
    print(f"outline: 4 calls at once on a {note_mb:.1f} MB note grew the peak RSS by {grown_mb:.0f} MB")
    assert grown_mb < 4 * 16 * note_mb, f"peak RSS grew {grown_mb:.0f} MB for a {note_mb:.1f} MB note"
