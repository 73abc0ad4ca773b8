"""vault_list_notes over stdio: ordering, paging, filters, hidden and escaping paths."""

from __future__ import annotations

from pathlib import Path

import pytest

from vaultlib import assert_modified_matches, expected_notes, is_hidden, is_sorted_by_path

pytestmark = pytest.mark.anyio

BULK = 60  # more than the default page size of 50


@pytest.fixture
def vault(vault: Path, add_escape_links) -> Path:
    """The base vault plus 60 bulk notes, hidden files and symlinks out of the vault."""
    bulk = vault / "Bulk"
    bulk.mkdir()
    for i in range(1, BULK + 1):
        (bulk / f"Note {i:03d}.md").write_text(f"bulk note {i}\n")
    (vault / "Empty Folder").mkdir()
    (vault / ".trash/Deep").mkdir(parents=True)
    (vault / ".trash/Deep/Buried.md").write_text("buried\n")
    (vault / ".obsidian/plugins/x").mkdir(parents=True)
    (vault / ".obsidian/plugins/x/readme.md").write_text("plugin readme\n")
    (vault / "Projects/notes.MD.txt").write_text("not a note\n")
    add_escape_links(vault)
    return vault


async def check(session, args: dict):
    """Call vault_list_notes; return (is_error, structured_content, first text content)."""
    res = await session.call_tool("vault_list_notes", args)
    text = res.content[0].text if res.content and res.content[0].type == "text" else ""
    return res.is_error, res.structured_content, text


def orderings(paths: list[str]) -> list[list[str]]:
    """The two acceptable 'sorted by path' orders."""
    return [sorted(paths), sorted(paths, key=lambda p: p.split("/"))]


async def list_all(session, **args) -> list[dict]:
    notes: list[dict] = []
    cursor = None
    for _ in range(1000):
        call = dict(args)
        if cursor is not None:
            call["cursor"] = cursor
        is_error, sc, text = await check(session, call)
        assert not is_error, text
        notes.extend(sc["notes"])
        cursor = sc.get("next_cursor")
        if cursor is None:
            return notes
    raise AssertionError("paging never ended")


def assert_never_listed(paths: list[str]) -> None:
    for p in paths:
        assert not is_hidden(p), f"hidden path listed: {p}"
        assert p != "Escape.md" and not p.startswith("EscapeDir/"), f"symlink escape listed: {p}"
        assert p.endswith(".md"), f"non-note listed: {p}"


async def test_default_page_is_50_sorted_with_cursor(session, vault):
    expected = expected_notes(vault)
    assert len(expected) > 50
    is_error, sc, text = await check(session, {})
    assert not is_error, text
    paths = [n["path"] for n in sc["notes"]]
    assert len(paths) == 50
    assert any(paths == order[:50] for order in orderings(expected)), paths
    assert sc.get("next_cursor"), "a cut-off listing must return next_cursor"


async def test_paging_visits_every_note_once(session, vault):
    expected = expected_notes(vault)
    pages = 0
    notes: list[dict] = []
    cursor = None
    while True:
        args = {"limit": 7}
        if cursor:
            args["cursor"] = cursor
        is_error, sc, text = await check(session, args)
        assert not is_error, text
        assert 1 <= len(sc["notes"]) <= 7
        notes.extend(sc["notes"])
        pages += 1
        cursor = sc.get("next_cursor")
        if not cursor:
            break
        assert pages < 100
    paths = [n["path"] for n in notes]
    assert len(paths) == len(set(paths)), "a note was listed twice"
    assert set(paths) == set(expected)
    assert any(paths == order for order in orderings(expected))
    assert pages == -(-len(expected) // 7)
    assert_never_listed(paths)


async def test_limit_1000_returns_everything(session, vault):
    expected = expected_notes(vault)
    is_error, sc, text = await check(session, {"limit": 1000})
    assert not is_error, text
    paths = [n["path"] for n in sc["notes"]]
    assert set(paths) == set(expected)
    assert len(paths) == len(expected)
    assert is_sorted_by_path(paths)
    assert sc.get("next_cursor") is None
    assert_never_listed(paths)


async def test_limit_1(session, vault):
    expected = expected_notes(vault)
    is_error, sc, text = await check(session, {"limit": 1})
    assert not is_error, text
    assert len(sc["notes"]) == 1
    assert sc["notes"][0]["path"] in (orderings(expected)[0][0], orderings(expected)[1][0])
    assert sc.get("next_cursor")


async def test_note_entries(session, vault):
    notes = {n["path"]: n for n in await list_all(session, limit=1000)}
    for path, n in notes.items():
        f = vault / path
        assert n["title"] == Path(path).name[: -len(".md")], n
        assert n["bytes"] == f.stat().st_size, n
        assert_modified_matches(n["modified"], f)
        assert isinstance(n["tags"], list), n
    assert {"project", "active"} <= set(notes["Projects/Alpha.md"]["tags"])
    assert {"intro", "start"} <= set(notes["Welcome.md"]["tags"])
    assert "deep" in notes["Projects/Sub/Gamma.md"]["tags"]
    assert notes["Projects/Beta.md"]["tags"] == []
    assert notes["Daily/2024-01-02.md"]["title"] == "2024-01-02"
    assert notes["Bulk/Note 007.md"]["title"] == "Note 007"


@pytest.mark.parametrize("folder", ["Projects", "Projects/"])
async def test_folder_filter_is_recursive(session, vault, folder):
    expected = [p for p in expected_notes(vault) if p.startswith("Projects/")]
    is_error, sc, text = await check(session, {"folder": folder, "limit": 1000})
    assert not is_error, text
    paths = [n["path"] for n in sc["notes"]]
    assert {"Projects/Alpha.md", "Projects/Beta.md", "Projects/Sub/Gamma.md"} <= set(paths)
    assert sorted(paths) == sorted(expected)
    assert is_sorted_by_path(paths)


async def test_nested_folder_filter(session):
    is_error, sc, text = await check(session, {"folder": "Projects/Sub"})
    assert not is_error, text
    assert [n["path"] for n in sc["notes"]] == ["Projects/Sub/Gamma.md"]


async def test_folder_paging(session):
    notes = await list_all(session, folder="Bulk", limit=25)
    assert [n["path"] for n in notes] == [f"Bulk/Note {i:03d}.md" for i in range(1, BULK + 1)]


async def test_empty_folder(session):
    is_error, sc, text = await check(session, {"folder": "Empty Folder"})
    assert not is_error, text
    assert sc["notes"] == []
    assert sc.get("next_cursor") is None


async def test_missing_folder_is_not_found(session):
    is_error, _, text = await check(session, {"folder": "Does/Not/Exist"})
    assert is_error
    assert text.startswith("not_found:"), text


def _in_dir(path: str, folder: str) -> bool:
    return path.rsplit("/", 1)[0] == folder if "/" in path else folder == ""


GLOBS = {
    "Daily/*.md": lambda p: _in_dir(p, "Daily"),
    "Bulk/Note 00?.md": lambda p: p in {f"Bulk/Note {i:03d}.md" for i in range(1, 10)},
    "**/Gamma.md": lambda p: p.split("/")[-1] == "Gamma.md",
    # A glob without '/' matches the file name at any depth, as in .gitignore.
    "*.md": lambda p: True,
    "Gamma.md": lambda p: p.split("/")[-1] == "Gamma.md",
    "/*.md": lambda p: False,
    "Projects/**/*.md": lambda p: p.startswith("Projects/"),
    "*.txt": lambda p: False,
    "**/*.canvas": lambda p: False,
    "Nothing/**": lambda p: False,
}


@pytest.mark.parametrize("glob", list(GLOBS))
async def test_glob_filter(session, vault, glob):
    expected = [p for p in expected_notes(vault) if GLOBS[glob](p)]
    is_error, sc, text = await check(session, {"glob": glob, "limit": 1000})
    assert not is_error, text
    paths = [n["path"] for n in sc["notes"]]
    assert sorted(paths) == sorted(expected)
    assert is_sorted_by_path(paths)


async def test_glob_sanity_of_fixture(vault):
    """The glob expectations above are not vacuous."""
    notes = expected_notes(vault)
    assert len([p for p in notes if GLOBS["Daily/*.md"](p)]) >= 2
    assert [p for p in notes if GLOBS["**/Gamma.md"](p)] == ["Projects/Sub/Gamma.md"]
    assert "Welcome.md" in [p for p in notes if GLOBS["*.md"](p)]
    assert [p for p in notes if GLOBS["Gamma.md"](p)] == ["Projects/Sub/Gamma.md"]


@pytest.mark.parametrize("folder", ["", "/", "."])
async def test_root_folder_spellings_list_the_whole_vault(session, vault, folder):
    everything = await list_all(session, limit=1000)
    rooted = await list_all(session, folder=folder, limit=1000)
    assert [n["path"] for n in rooted] == [n["path"] for n in everything]


async def test_glob_double_star_matches_all_notes(session, vault):
    expected = expected_notes(vault)
    notes = await list_all(session, glob="**/*.md", limit=1000)
    paths = [n["path"] for n in notes]
    assert set(paths) == set(expected)
    assert_never_listed(paths)


@pytest.mark.parametrize("glob", ["**/*", "**", ".obsidian/**", ".trash/*.md", "**/.*", "Escape*", "EscapeDir/**"])
async def test_glob_never_reveals_hidden_or_escaping_paths(session, glob):
    is_error, sc, text = await check(session, {"glob": glob, "limit": 1000})
    if is_error:
        assert text.split(":", 1)[0] in ("invalid_argument", "path_forbidden"), text
        return
    assert_never_listed([n["path"] for n in sc["notes"]])


async def test_bad_cursor_is_invalid_argument(session):
    for cursor in ["garbage", "eyJvZmZzZXQiOiAtMX0=", "../../etc/passwd"]:
        is_error, _, text = await check(session, {"cursor": cursor})
        assert is_error, f"cursor {cursor!r} accepted"
        assert text.startswith("invalid_argument:"), text


async def test_invalid_glob_is_invalid_argument(session):
    is_error, _, text = await check(session, {"glob": "Daily/[.md"})
    assert is_error
    assert text.startswith("invalid_argument:"), text


async def test_listing_sees_new_notes(session, vault):
    res = await session.call_tool("vault_write_note", {"path": "Fresh/Made.md", "body": "new\n"})
    assert not res.is_error, res.content
    is_error, sc, text = await check(session, {"folder": "Fresh"})
    assert not is_error, text
    assert [n["path"] for n in sc["notes"]] == ["Fresh/Made.md"]
    (vault / "Fresh/External.md").write_text("from outside\n")
    is_error, sc, text = await check(session, {"folder": "Fresh"})
    assert not is_error, text
    assert [n["path"] for n in sc["notes"]] == ["Fresh/External.md", "Fresh/Made.md"]
