"""Property types (issue 50, item 3) through the official SDK: the types a vault declares in
`.obsidian/types.json` are reported by vault_list_property_keys, and vault_update_properties warns
when a value does not fit its key's declared type, or with `strict: true` refuses and writes
nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vaultlib import error_code, write_files

pytestmark = pytest.mark.anyio

TYPES = {"types": {"rating": "number", "Done": "checkbox", "due": "date", "topics": "multitext", "seen": "datetime"}}
FILES = {"Books/a.md": "---\nrating: 4\ndone: false\ndue: 2026-12-06\ntopics: [a]\nother: x\n---\n# A\n"}


@pytest.fixture
def typed(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    write_files(root, FILES)
    (root / ".obsidian").mkdir()
    (root / ".obsidian" / "types.json").write_text(json.dumps(TYPES))
    return root


async def call(session, tool: str, args: dict):
    res = await session.call_tool(tool, args)
    text = res.content[0].text if res.content else ""
    return bool(res.is_error), res.structured_content, text


async def test_keys_report_their_declared_type(open_session, typed):
    async with open_session(typed) as session:
        is_error, sc, text = await call(session, "vault_list_property_keys", {})
        assert not is_error, text
        types = {key["key"]: key.get("type") for key in sc["keys"] if key["key"] in ("rating", "done", "due", "topics", "other")}
        # `Done` is declared in another case: Obsidian gives a name one type whatever its case.
        assert types == {"rating": "number", "done": "checkbox", "due": "date", "topics": "multitext", "other": None}, types


async def test_a_value_that_does_not_fit_warns_or_with_strict_is_refused(open_session, typed):
    async with open_session(typed) as session:
        is_error, sc, text = await call(session, "vault_update_properties", {
            "path": "Books/a.md", "properties": {"rating": "four", "due": "2026-12-07", "seen": "2026-12-06T10:30"},
        })
        assert not is_error, text
        assert sc["warnings"] == [
            "'rating' is declared a number in the vault's property types, but the text \"four\" was given"
        ], sc
        before = (typed / "Books/a.md").read_text()
        is_error, _, text = await call(session, "vault_update_properties", {
            "path": "Books/a.md", "properties": {"done": "yes", "topics": [1]}, "strict": True,
        })
        assert is_error and error_code(text) == "invalid_argument", text
        assert "'done' is declared a checkbox" in text and "'topics' is declared a list" in text, text
        assert (typed / "Books/a.md").read_text() == before, "a refused update writes nothing"
        is_error, sc, text = await call(session, "vault_update_properties", {
            "path": "Books/a.md", "properties": {"done": True, "rating": None}, "strict": True,
        })
        assert not is_error and "warnings" not in sc, text
