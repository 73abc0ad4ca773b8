"""Obsidian Bases (issue 50) through the official SDK over stdio and HTTP: a view of a .base file
answers the rows, groups and summaries Obsidian computes over a vault written for it; a note's
```base block resolves `this` to the note; a restricted identity sees rows, backlinks and
summaries over readable files only, and a base in a denied folder is not found; bad input
answers a clear error and writes nothing."""

from __future__ import annotations

import re
import time
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import ClientSession
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

from conftest import REQUEST_TIMEOUT_S, HttpServer, server_env, write_secret
from vaultlib import error_code, write_files

pytestmark = pytest.mark.anyio

READING = """\
filters:
  and:
    - file.hasTag("book")
    - 'file.ext == "md"'
formulas:
  stars: 'rating * 2'
  label: 'file.basename + " by " + author'
properties:
  note.rating:
    displayName: Rating
views:
  - type: table
    name: By author
    order: [file.name, rating, formula.stars, file.backlinks]
    sort:
      - property: file.name
        direction: ASC
    groupBy:
      property: author
      direction: ASC
    summaries:
      rating: Average
  - type: cards
    name: To read
    filters: 'status != "done"'
    order: [file.basename, status, started]
    sort:
      - property: rating
        direction: DESC
      - property: file.name
        direction: ASC
"""

FILES = {
    "Books/Dune.md": "---\nauthor: \"[[Frank Herbert]]\"\nrating: 5\nstatus: done\nstarted: 2024-01-10\ntags: [book, scifi]\n---\n# Dune\n\n![[cover.png]]\n",
    "Books/Emma.md": "---\nauthor: \"[[Jane Austen]]\"\nrating: 4\nstatus: reading\nstarted: 2024-03-02\nowned: \"true\"\ntags: [book]\n---\nSee [[Persuasion]].\n",
    "Books/Persuasion.md": "---\nauthor: \"[[Jane Austen]]\"\nrating: 3\nstatus: todo\ntags: [book/classic]\n---\nAfter [[Emma]].\n",
    "Books/Hyperion.md": "---\nauthor: \"[[Dan Simmons]]\"\nrating: 4\nstatus: todo\ntags: [book, scifi]\n---\n# Hyperion\n",
    "Authors/Jane Austen.md": "---\ntype: author\n---\nWrote [[Emma]].\n\n```base\nfilters: 'author == this'\nviews:\n  - type: table\n    name: Books\n    order: [file.name, rating]\n    sort:\n      - property: file.name\n        direction: ASC\n```\n",
    "Authors/Frank Herbert.md": "---\ntype: author\n---\n# Frank Herbert\n",
    "Private/Review.md": "---\nauthor: \"[[Jane Austen]]\"\nrating: 1\ntags: [book]\n---\nHated [[Emma]] and [[Dune]].\n",
    "Private/Secret.base": "views:\n  - type: table\n    name: All\n",
    "Reading.base": READING,
    ".obsidian/types.json": '{"types": {"owned": "checkbox"}}',
}

READER_TOKEN = "reader-token-0123456789abcdefghijklmnopqrstuvwxyz"

CONFIG = """
[[identity]]
name = "reader"
token_file = "reader.token"
read = ["/"]
deny = ["Private/"]
"""


@pytest.fixture
def books(tmp_path: Path) -> Path:
    root = tmp_path / "books"
    root.mkdir()
    write_files(root, FILES)
    (root / "Attachments").mkdir()
    (root / "Attachments" / "cover.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 24)
    return root


async def call(session, tool: str, args: dict):
    res = await session.call_tool(tool, args)
    text = res.content[0].text if res.content else ""
    return bool(res.is_error), res.structured_content, text


async def ok(session, tool: str, args: dict) -> dict:
    is_error, sc, text = await call(session, tool, args)
    assert not is_error, f"{tool} {args}: {text}"
    return sc


async def refused(session, tool: str, args: dict) -> tuple[str, str]:
    is_error, _, text = await call(session, tool, args)
    assert is_error, f"{tool} {args} should fail"
    return error_code(text), text


def link(display: str, path: str | None) -> dict:
    return {"display": display, "path": path}


BY_AUTHOR_COLUMNS = ["file.name", "rating", "formula.stars", "file.backlinks"]


def backlinks(*paths: str) -> list[dict]:
    return [link(path, path) for path in paths]


async def test_a_base_file_answers_rows_groups_and_summaries(open_session, books):
    async with open_session(books) as session:
        answer = await ok(session, "vault_query_base", {"path": "Reading.base"})
        assert answer["view"] == "By author" and answer["type"] == "table"
        assert answer["columns"] == BY_AUTHOR_COLUMNS
        # Grouped rows come group by group, each group sorted by name; the attachment and the
        # notes without the tag are filtered out, the nested tag book/classic counts.
        assert [row["path"] for row in answer["rows"]] == [
            "Books/Hyperion.md", "Books/Dune.md", "Books/Emma.md", "Books/Persuasion.md",
            "Private/Review.md",
        ]
        emma = answer["rows"][2]["values"]
        assert emma == {
            "file.name": "Emma.md", "rating": 4, "formula.stars": 8,
            "file.backlinks": backlinks(
                "Authors/Jane Austen.md", "Books/Persuasion.md", "Private/Review.md"
            ),
        }
        assert [(g["key"], g["rows"]) for g in answer["groups"]] == [
            (link("Dan Simmons", None), ["Books/Hyperion.md"]),
            (link("Frank Herbert", "Authors/Frank Herbert.md"), ["Books/Dune.md"]),
            (link("Jane Austen", "Authors/Jane Austen.md"),
             ["Books/Emma.md", "Books/Persuasion.md", "Private/Review.md"]),
        ]
        assert [g["summaries"][0]["value"] for g in answer["groups"]] == [4, 5, pytest.approx(8 / 3)]
        assert answer["summaries"] == [{"column": "rating", "name": "Average", "value": 3.4}]
        assert answer["total"] == 5 and "next_cursor" not in answer

        # The second view by index: its own filter, a sort over two keys, dates as ISO text.
        cards = await ok(session, "vault_query_base", {"path": "Reading.base", "view": 1})
        assert cards["view"] == "To read" and cards["type"] == "cards"
        assert "groups" not in cards and "summaries" not in cards
        assert [(r["path"], r["values"]["started"]) for r in cards["rows"]] == [
            ("Books/Emma.md", "2024-03-02"), ("Books/Hyperion.md", None),
            ("Books/Persuasion.md", None), ("Private/Review.md", None),
        ]

        # Pages: the cursor continues where the page stopped, groups show the page's rows.
        first = await ok(session, "vault_query_base", {"path": "Reading.base", "limit": 2})
        assert [r["path"] for r in first["rows"]] == ["Books/Hyperion.md", "Books/Dune.md"]
        assert [g["rows"] for g in first["groups"]] == [["Books/Hyperion.md"], ["Books/Dune.md"]]
        rest = await ok(session, "vault_query_base", {
            "path": "Reading.base", "limit": 2, "cursor": first["next_cursor"],
        })
        assert [r["path"] for r in rest["rows"]] == ["Books/Emma.md", "Books/Persuasion.md"]
        assert rest["total"] == 5 and rest["groups"][0]["summaries"][0]["value"] == pytest.approx(8 / 3)


async def test_attachments_are_rows_with_their_file_facts(open_session, books):
    files = "filters: 'file.inFolder(\"Attachments\") || file.name == \"Dune.md\"'\n" \
        "views:\n  - type: table\n    order: [file.name, file.ext, file.size, file.embeds, file.mtime]\n"
    async with open_session(books) as session:
        answer = await ok(session, "vault_query_base", {"base": files})
    assert [row["path"] for row in answer["rows"]] == ["Attachments/cover.png", "Books/Dune.md"]
    cover, dune = (row["values"] for row in answer["rows"])
    assert (cover["file.ext"], cover["file.size"], cover["file.embeds"]) == ("png", 32, [])
    assert dune["file.embeds"] == [link("cover.png", "Attachments/cover.png")]
    assert dune["file.size"] == (books / "Books" / "Dune.md").stat().st_size
    # Times are the vault's wall clock, as ISO 8601 text without a zone.
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", cover["file.mtime"]), cover


async def test_declared_property_types_decide_values(open_session, books):
    # types.json declares `owned` a checkbox, so the text "true" reads as true, as in Obsidian.
    owned = "filters: 'owned == true'\nviews:\n  - type: table\n    order: [file.name, owned]\n"
    async with open_session(books) as session:
        answer = await ok(session, "vault_query_base", {"base": owned})
    assert [(r["path"], r["values"]["owned"]) for r in answer["rows"]] == [("Books/Emma.md", True)]


async def test_a_base_block_stands_this_for_its_note(open_session, books):
    async with open_session(books) as session:
        block = await ok(session, "vault_query_base", {"path": "Authors/Jane Austen.md"})
        assert [r["path"] for r in block["rows"]] == [
            "Books/Emma.md", "Books/Persuasion.md", "Private/Review.md",
        ]
        other = await ok(session, "vault_query_base", {
            "path": "Authors/Jane Austen.md", "block": 0, "this": "Authors/Frank Herbert.md",
        })
        assert [r["values"] for r in other["rows"]] == [{"file.name": "Dune.md", "rating": 5}]
        # Inline YAML runs without a file; a formula failing on a row fails only that cell.
        inline = await ok(session, "vault_query_base", {
            "base": "filters: 'file.inFolder(\"Books\")'\nformulas:\n  bad: 'rating.nosuch()'\n"
                    "views:\n  - type: table\n    order: [file.basename, formula.bad]\n    limit: 1\n",
        })
        assert inline["total"] == 1
        [row] = inline["rows"]
        assert row["values"]["file.basename"] == "Dune"
        assert "nosuch" in row["values"]["formula.bad"]["error"]
        listed = await ok(session, "vault_list_bases", {})
        assert listed["bases"] == [
            {"path": "Authors/Jane Austen.md", "block": 0, "views": [{"name": "Books", "type": "table"}]},
            {"path": "Private/Secret.base", "views": [{"name": "All", "type": "table"}]},
            {"path": "Reading.base", "views": [
                {"name": "By author", "type": "table"}, {"name": "To read", "type": "cards"},
            ]},
        ]
        assert not listed["timed_out"]
        assert [b["path"] for b in (await ok(session, "vault_list_bases", {"folder": "Authors"}))["bases"]] == [
            "Authors/Jane Austen.md"
        ]


async def test_bad_input_is_a_clear_error_and_writes_nothing(open_session, books):
    async with open_session(books) as session:
        code, text = await refused(session, "vault_query_base", {"path": "Reading.base", "view": "Nope"})
        assert code == "invalid_argument" and '"By author", "To read"' in text
        code, text = await refused(session, "vault_query_base", {"base": "views:\n  - type: table\n  name: [unclosed\n"})
        assert code == "invalid_argument" and "line 3" in text
        cycle = "formulas:\n  a: 'formula.b + 1'\n  b: 'formula.a + 1'\nviews:\n  - type: table\n"
        code, text = await refused(session, "vault_query_base", {"base": cycle})
        assert code == "invalid_argument" and "a, b" in text
        code, text = await refused(session, "vault_query_base", {"path": "Authors/Jane Austen.md", "block": 3})
        assert code == "invalid_argument" and "no block 3" in text
        code, _ = await refused(session, "vault_query_base", {"path": "Books/Missing.base"})
        assert code == "not_found"
        # A bad base is refused with its place and nothing is written.
        code, text = await refused(session, "vault_write_base", {"path": "New.base", "base": cycle})
        assert code == "invalid_argument" and not (books / "New.base").exists()
        code, text = await refused(session, "vault_write_base", {
            "path": "New.base", "base": "views:\n  - type: table\n    filters: 'rating >'\n",
        })
        assert code == "invalid_argument" and "views[0].filters" in text
        assert not (books / "New.base").exists()
        code, _ = await refused(session, "vault_write_base", {"path": "New.md", "base": "views: []\n"})
        assert code == "invalid_argument"
        code, _ = await refused(session, "vault_write_base", {"path": "Big.base", "base": "#" * (2 << 20)})
        assert code == "invalid_argument" and not (books / "Big.base").exists()


async def test_write_base_creates_and_replaces_with_a_revision(open_session, books):
    async with open_session(books) as session:
        first = "views:\n  - type: table\n    name: Scifi\n    filters: file.hasTag(\"scifi\")\n"
        written = await ok(session, "vault_write_base", {"path": "Bases/Scifi.base", "base": first})
        assert written["created"] and written["change_id"].startswith("ch_")
        assert (books / "Bases" / "Scifi.base").read_text() == first
        rows = await ok(session, "vault_query_base", {"path": "Bases/Scifi.base"})
        assert [r["path"] for r in rows["rows"]] == ["Books/Dune.md", "Books/Hyperion.md"]
        code, _ = await refused(session, "vault_write_base", {"path": "Bases/Scifi.base", "base": first})
        assert code == "already_exists"
        second = first.replace("Scifi", "Science fiction")
        replaced = await ok(session, "vault_write_base", {
            "path": "Bases/Scifi.base", "base": second, "expected_revision": written["revision"],
        })
        assert not replaced["created"]
        assert (books / "Bases" / "Scifi.base").read_text() == second


class ReaderServer:
    def __init__(self, quire_bin, vault: Path, root: Path, xdg_home: Path):
        config = root / "quire.toml"
        write_secret(root / "reader.token", READER_TOKEN + "\n")
        config.write_text(CONFIG)
        self.server = HttpServer(
            quire_bin, vault, server_env(xdg_home), root / "quire-stderr.log",
            ["--config", str(config)],
        )

    @asynccontextmanager
    async def session(self):
        headers = {"Authorization": f"Bearer {READER_TOKEN}"}
        async with create_mcp_http_client(headers=headers) as http:
            async with streamable_http_client(self.server.url, http_client=http) as streams:
                async with ClientSession(
                    streams[0], streams[1], read_timeout_seconds=REQUEST_TIMEOUT_S
                ) as session:
                    await session.initialize()
                    yield session


async def test_a_restricted_reader_sees_rows_links_and_summaries_of_readable_files(
    quire_bin, books, tmp_path, xdg_home
):
    reader = ReaderServer(quire_bin, books, tmp_path, xdg_home)
    try:
        async with reader.session() as session:
            answer = await ok(session, "vault_query_base", {"path": "Reading.base"})
            assert [row["path"] for row in answer["rows"]] == [
                "Books/Hyperion.md", "Books/Dune.md", "Books/Emma.md", "Books/Persuasion.md",
            ]
            by_path = {row["path"]: row["values"] for row in answer["rows"]}
            assert by_path["Books/Dune.md"]["file.backlinks"] == []
            assert by_path["Books/Emma.md"]["file.backlinks"] == backlinks(
                "Authors/Jane Austen.md", "Books/Persuasion.md"
            )
            assert answer["groups"][2]["summaries"][0]["value"] == 3.5
            assert answer["summaries"][0]["value"] == 4
            assert answer["total"] == 4
            # A link into the denied folder resolves to nothing, as a missing file would.
            linked = await ok(session, "vault_query_base", {
                "base": "filters: 'file.name == \"Emma.md\"'\nformulas:\n  review: 'link(\"Private/Review\")'\n"
                        "views:\n  - type: table\n    order: [formula.review]\n",
            })
            assert linked["rows"][0]["values"]["formula.review"] == link("Private/Review", None)
            block = await ok(session, "vault_query_base", {"path": "Authors/Jane Austen.md"})
            assert [r["path"] for r in block["rows"]] == ["Books/Emma.md", "Books/Persuasion.md"]
            for args in ({"path": "Private/Secret.base"}, {"path": "Reading.base", "this": "Private/Review.md"}):
                code, text = await refused(session, "vault_query_base", args)
                assert code == "not_found", text
            listed = await ok(session, "vault_list_bases", {})
            assert [b["path"] for b in listed["bases"]] == ["Authors/Jane Austen.md", "Reading.base"]
            code, _ = await refused(session, "vault_list_bases", {"folder": "Private"})
            assert code == "not_found"
    finally:
        reader.server.stop()


NARROWED_FILES = {
    "My_Notes/a.md": "---\nstatus: done\n---\nA\n",
    "MyXNotes/b.md": "---\nstatus: done\n---\nB\n",
    "Books/Sub/Deep.md": "---\ntags: [Book/Scifi]\nrating: \"5\"\nStatus: done\n---\nDeep\n",
    "Loose.md": "---\nrating: 5.0\nstatus: \"done\"\n---\nLoose #book\n",
}

NARROWED_STATEMENTS = [
    'file.inFolder("My_Notes")',
    'file.hasTag("#BOOK")',
    "rating == 5",
    'note["status"] == "done"',
    'file.inFolder("Books") && status == "todo"',
    'file.hasTag("book", "nothing") && file.inFolder("/Books/")',
    '"done" == status && file.inFolder("My_Notes")',
    "rating > 4",
    "4 < rating && file.hasTag(\"book\")",
    "rating <= 5",
    'status != "todo"',
]


async def test_filters_the_index_narrows_keep_every_row_the_evaluator_keeps(open_session, books):
    """Folders, tags and property keys narrow the candidates in SQL; the rows must be those of
    the same statement written where nothing narrows (inside an `or`), LIKE's wildcards, tag case
    and nesting, text holding a number, and comparisons a missing property may pass included."""
    write_files(books, NARROWED_FILES)
    async with open_session(books) as session:
        for statement in NARROWED_STATEMENTS:
            narrowed = await ok(session, "vault_query_base", {
                "base": f"filters: '{statement}'\nviews:\n  - type: table\n",
            })
            whole = await ok(session, "vault_query_base", {
                "base": f"filters:\n  or:\n    - '{statement}'\n    - 'false'\nviews:\n  - type: table\n",
            })
            paths = sorted(row["path"] for row in narrowed["rows"])
            assert paths, statement
            assert paths == sorted(row["path"] for row in whole["rows"]), statement
        folder = await ok(session, "vault_query_base", {"base": (
            "filters: 'file.inFolder(\"My_Notes\")'\n"
            "formulas:\n  other: 'file(\"Authors/Frank Herbert.md\").name'\n"
            "views:\n  - type: table\n    order: [file.name, formula.other]\n")})
    assert [r["path"] for r in folder["rows"]] == ["My_Notes/a.md"]
    # A file the narrowing left out is still there for a formula that asks for it.
    assert folder["rows"][0]["values"]["formula.other"] == "Frank Herbert.md"


# Issue 63: what one query may hold and spend. The server must answer a clear error and stay up.

FLOOD_NOTES = {f"Flood/n{n:02}.md": f"note {n}\n" for n in range(60)}


def flood_base(order: bool) -> str:
    """The red team's base (F1): 100 formulas of 1 MB each over 60 notes, the view's limit 1."""
    names = [f"f{n:02}" for n in range(100)]
    formulas = "".join(f"  {name}: '\"x\".repeat(1000000)'\n" for name in names)
    columns = ", ".join(f"formula.{name}" for name in names) if order else "file.name"
    return (
        f"filters: 'file.inFolder(\"Flood\")'\nformulas:\n{formulas}"
        f"views:\n  - type: table\n    limit: 1\n    order: [{columns}]\n"
    )


def copies_base() -> str:
    """F1's second shape: 1 MB copied by 20 formulas, then a list of 120 copies of them all."""
    formulas = "  a00: '\"x\".repeat(1000000)'\n" + "".join(
        f"  a{n:02}: 'formula.a00'\n" for n in range(1, 21)
    )
    copies = ", ".join(["formula"] * 120)
    return (
        f"filters: 'file.path == \"Flood/n00.md\"'\nformulas:\n{formulas}"
        f"  copies: '[{copies}].length'\n"
        "  format: 'date(\"2024-01-01\").format(\"x\".repeat(100000))'\n"
        "views:\n  - type: table\n    order: [formula.copies, formula.format]\n"
    )


@asynccontextmanager
async def memory_capped_session(quire_bin, vault: Path, xdg_home: Path, tmp_path: Path):
    """A stdio server whose address space is capped at 3 GiB (it reserves about 1.6 GiB idle), so a
    query that tries to hold gigabytes aborts it here instead of filling the test machine."""
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command="prlimit",
        args=[f"--as={3 << 30}", "--", str(quire_bin), "serve", "--vault", str(vault)],
        env=server_env(xdg_home),
        cwd=str(tmp_path),
    )
    with open(tmp_path / "quire-capped.log", "a") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=REQUEST_TIMEOUT_S) as session:
                await session.initialize()
                yield session


async def test_r63_a_query_over_its_bytes_answers_a_clear_error_and_the_server_stays_up(
    quire_bin, books, xdg_home, tmp_path
):
    if not Path("/usr/bin/prlimit").exists():
        pytest.skip("prlimit (util-linux) caps the server's memory for this test")
    write_files(books, FLOOD_NOTES)
    async with memory_capped_session(quire_bin, books, xdg_home, tmp_path) as session:
        # Cells only for the page's columns: with none of the formulas shown, none is computed.
        plain = await ok(session, "vault_query_base", {"base": flood_base(order=False)})
        assert plain["total"] == 1 and plain["columns"] == ["file.name"]
        for _ in range(2):
            code, text = await refused(session, "vault_query_base", {"base": flood_base(order=True)})
            assert code == "over_budget", text
            assert "67108864 bytes" in text and "`formula.f" in text and "Flood/n00.md" in text, text
        shown = await ok(session, "vault_query_base", {"base": copies_base()})
        values = shown["rows"][0]["values"]
        assert "steps" in values["formula.copies"]["error"], values["formula.copies"]
        assert "too large" in values["formula.format"]["error"], values["formula.format"]
        # Still up, and still answering.
        after = await ok(session, "vault_query_base", {"path": "Reading.base"})
        assert after["total"] == 5


SLOW_BASE = (
    "filters: 'file.inFolder(\"Flood\")'\n"
    "formulas:\n  slow: '\"x\".repeat(200000).split(\"\").map(value).length'\n"
    "views:\n  - type: table\n    order: [formula.slow]\n"
)


async def test_r63_a_cancelled_query_stops_and_the_next_call_answers(open_session, books, tmp_path):
    """F4: 60 cells of 1.3 M steps each used to run to their end (tens of seconds in a debug
    build) whatever the client did; a cancelled call now stops within a second or two."""
    import anyio

    write_files(books, FLOOD_NOTES)
    log = tmp_path / "quire-stderr.log"
    async with open_session(books) as session:
        with anyio.move_on_after(1.0) as scope:
            await session.call_tool("vault_query_base", {"base": SLOW_BASE, "limit": 60})
        assert scope.cancelled_caught, "the slow query answered within a second"
        cancelled_at = time.monotonic()
        # Bounded: well before the query's own 10 s deadline would end it as over_budget.
        while time.monotonic() - cancelled_at < 6:
            text = log.read_text(errors="replace") if log.exists() else ""
            if "tool=vault_query_base" in text and "outcome=cancelled" in text:
                break
            await anyio.sleep(0.1)
        else:
            pytest.fail("the cancelled query did not stop within 6 s:\n" + log.read_text(errors="replace")[-3000:])
        after = await ok(session, "vault_query_base", {"path": "Reading.base"})
        assert after["total"] == 5
