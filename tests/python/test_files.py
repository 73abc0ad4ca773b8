"""The file tools through the official MCP SDK, over stdio and HTTP: vault_read_file on real
photographs (EXIF orientation), a transparent PNG, the JSON Canvas spec's sample, a generated
PDF whose text is known, text windows and caps; vault_list_files and vault_stat; the ACL on all
three (HTTP identities); PDF pages rendered by the real pdfium when tests/run provides it."""

from __future__ import annotations

import base64
import os
import shutil
import struct
from pathlib import Path

import pytest

from conftest import REPO
from test_acl import AGENT_TOKEN, VIEWER_TOKEN, acl_server, acl_vault  # noqa: F401 (fixtures)
from vaultlib import HEX64, error_code, sha256_hex

pytestmark = pytest.mark.anyio

DATA = REPO / "tests" / "data"
IMAGES = DATA / "files"
BUDGET = 48 * 1024
SHARED = Path(os.environ.get("QUIRE_SHARED") or REPO.parent / "shared")


# ---------------------------------------------------------------- helpers


async def read(session, args: dict):
    """Calls vault_read_file; returns (is_error, content blocks, text of the first block)."""
    res = await session.call_tool("vault_read_file", args)
    first = res.content[0].text if res.content and res.content[0].type == "text" else ""
    assert res.structured_content is None
    return bool(res.is_error), res.content, first


async def structured(session, tool: str, args: dict) -> dict:
    res = await session.call_tool(tool, args)
    text = res.content[0].text if res.content else ""
    assert not res.is_error, text
    return res.structured_content


def copy(name: str, vault: Path, to: str) -> Path:
    target = vault / to
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(IMAGES / name if (IMAGES / name).exists() else DATA / "pdf" / name, target)
    return target


def image_blocks(content) -> list:
    return [block for block in content if block.type == "image"]


def png_info(data: bytes) -> tuple[int, int, int]:
    """(width, height, colour type) from a PNG's IHDR."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", data[:8]
    assert data[12:16] == b"IHDR"
    width, height, _depth, colour = struct.unpack(">IIBB", data[16:26])
    return width, height, colour


def jpeg_size(data: bytes) -> tuple[int, int]:
    """(width, height) from a JPEG's first start-of-frame segment."""
    assert data[:3] == b"\xff\xd8\xff", data[:4]
    at = 2
    while at < len(data):
        assert data[at] == 0xFF, f"no marker at {at}"
        marker = data[at + 1]
        length = struct.unpack(">H", data[at + 2 : at + 4])[0]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[at + 5 : at + 9])
            return width, height
        at += 2 + length
    raise AssertionError("no SOF segment")


def image_size(data: bytes, mime: str) -> tuple[int, int]:
    if mime == "image/png":
        return png_info(data)[:2]
    assert mime == "image/jpeg", mime
    return jpeg_size(data)


def config_file(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "quire-files.toml"
    path.write_text(text)
    return ["--config", str(path)]


# ---------------------------------------------------------------- images


async def test_a_photo_comes_back_as_an_image_block_within_the_budget(session, vault):
    copy("ultrahdr.jpg", vault, "Attachments/phone.jpg")
    is_error, content, text = await read(session, {"path": "Attachments/phone.jpg"})
    assert not is_error, text
    assert [block.type for block in content] == ["text", "image"]
    assert text.startswith("Image: JPEG"), text
    assert "1512x2688" in text, text
    image = image_blocks(content)[0]
    assert image.mime_type == "image/jpeg"
    data = base64.b64decode(image.data, validate=True)
    assert len(data) <= BUDGET, len(data)
    width, height = jpeg_size(data)
    assert max(width, height) <= 1568
    # Portrait stays portrait, aspect ratio kept.
    assert height > width and abs(width / height - 1512 / 2688) < 0.01, (width, height)


async def test_exif_orientation_is_applied_so_dimensions_swap(session, vault):
    copy("flower.jpg", vault, "Attachments/flower.jpg")
    copy("flower_orientation_6.jpg", vault, "Attachments/flower6.jpg")
    _, upright, text = await read(session, {"path": "Attachments/flower.jpg"})
    assert "sent unchanged" in text, text
    plain = base64.b64decode(image_blocks(upright)[0].data)
    assert plain == (IMAGES / "flower.jpg").read_bytes()
    assert jpeg_size(plain) == (480, 360)
    is_error, turned, text = await read(session, {"path": "Attachments/flower6.jpg"})
    assert not is_error, text
    assert "EXIF orientation 6 applied" in text, text
    data = base64.b64decode(image_blocks(turned)[0].data)
    assert len(data) <= BUDGET
    assert jpeg_size(data) == (360, 480)


async def test_a_transparent_png_keeps_its_alpha_when_it_must_shrink(open_session, vault, tmp_path):
    copy("transparent.png", vault, "Attachments/dice.png")
    args = config_file(tmp_path, "[files]\nimage_budget_bytes = 8192\n")
    async with open_session(vault, extra_args=args) as session:
        is_error, content, text = await read(session, {"path": "Attachments/dice.png"})
    assert not is_error, text
    assert "transparency kept" in text, text
    image = image_blocks(content)[0]
    assert image.mime_type == "image/png"
    data = base64.b64decode(image.data)
    assert len(data) <= 8192, len(data)
    width, height, colour = png_info(data)
    assert colour in (4, 6), f"colour type {colour} has no alpha"
    assert abs(width / height - 200 / 150) < 0.05, (width, height)


async def test_an_image_that_is_not_one_is_refused_with_a_code(session, vault):
    (vault / "Attachments").mkdir(exist_ok=True)
    (vault / "Attachments/fake.png").write_bytes(b"not an image at all")
    is_error, _, text = await read(session, {"path": "Attachments/fake.png"})
    assert is_error and error_code(text) == "undecodable_image", text


# ---------------------------------------------------------------- canvas


async def test_the_spec_sample_canvas_renders_as_the_golden_markdown(session, vault):
    sample = SHARED / "oracles" / "jsoncanvas" / "sample.canvas"
    if not sample.is_file():
        if os.environ.get("QUIRE_REQUIRE_SHARED") == "1":
            pytest.fail(f"{sample} is missing and QUIRE_REQUIRE_SHARED=1")
        pytest.skip(f"SKIP: the JSON Canvas sample is not at {sample} (../shared is absent)")
    (vault / "Boards").mkdir(exist_ok=True)
    shutil.copyfile(sample, vault / "Boards/sample.canvas")
    expected = (IMAGES / "canvas" / "sample.md").read_text()
    is_error, content, text = await read(session, {"path": "Boards/sample.canvas"})
    assert not is_error, text
    assert len(content) == 1 and text == expected
    # raw: the JSON exactly as stored.
    is_error, _, text = await read(session, {"path": "Boards/sample.canvas", "raw": True})
    assert not is_error and text == sample.read_text()
    # The rendering pages like any text.
    is_error, _, text = await read(
        session, {"path": "Boards/sample.canvas", "start_line": 3, "limit": 2}
    )
    lines = expected.splitlines(keepends=True)
    assert not is_error, text
    assert text == f"Lines 3-4 of {len(lines)}; next start_line: 5.\n\n" + "".join(lines[2:4])


async def test_a_canvas_that_is_not_json_is_refused(session, vault):
    (vault / "Boards").mkdir(exist_ok=True)
    (vault / "Boards/broken.canvas").write_text('{"nodes": [')
    is_error, _, text = await read(session, {"path": "Boards/broken.canvas"})
    assert is_error and error_code(text) == "invalid_canvas", text


# ---------------------------------------------------------------- PDF


async def test_pdf_headings_and_code_are_recovered(session, vault):
    copy("generated-known.pdf", vault, "Papers/known.pdf")
    is_error, content, text = await read(session, {"path": "Papers/known.pdf"})
    assert not is_error, text
    assert len(content) == 1
    assert text.startswith('---\ntitle: "Quire PDF Fixture"\npages: 2\nlinks: 2\n---\n'), text[:200]
    assert "\n# Getting Started\n" in text
    assert "\n## Installing the Tool\n" in text
    assert "\n### Links and References\n" in text
    assert "Run the command `quire serve` to start the server." in text
    assert "```\nfn main() {\n    let vault = open(\"notes\");\n" in text
    # Windows over the markdown.
    is_error, _, window = await read(session, {"path": "Papers/known.pdf", "limit": 5})
    assert not is_error
    total = len(text.splitlines())
    assert window == f"Lines 1-5 of {total}; next start_line: 6.\n\n" + "".join(
        text.splitlines(keepends=True)[:5]
    )


async def test_a_password_protected_pdf_says_so(session, vault):
    copy("encrypted-user-password.pdf", vault, "Papers/locked.pdf")
    is_error, _, text = await read(session, {"path": "Papers/locked.pdf"})
    assert is_error and error_code(text) == "pdf_encrypted", text


async def test_pdf_pages_without_pdfium_are_unsupported_with_the_install_hint(
    open_session, vault, tmp_path
):
    copy("generated-known.pdf", vault, "Papers/known.pdf")
    args = config_file(tmp_path, f"[files]\npdfium_library = \"{tmp_path / 'no' / 'libpdfium.so'}\"\n")
    async with open_session(vault, extra_args=args) as session:
        is_error, _, text = await read(session, {"path": "Papers/known.pdf", "raw": True})
        assert is_error and error_code(text) == "unsupported", text
        assert "quire pdfium install" in text, text
        # Text still works without the library.
        is_error, _, text = await read(session, {"path": "Papers/known.pdf"})
        assert not is_error and "# Getting Started" in text


def pdfium_library() -> Path | None:
    library = os.environ.get("QUIRE_TEST_PDFIUM")
    if library and Path(library).is_file():
        return Path(library)
    if os.environ.get("QUIRE_REQUIRE_PDFIUM") == "1":
        pytest.fail("QUIRE_REQUIRE_PDFIUM=1 but QUIRE_TEST_PDFIUM names no library")
    pytest.skip("SKIP: QUIRE_TEST_PDFIUM is not set (tests/run downloads pdfium and sets it)")


async def test_pdf_pages_render_as_images_sharing_the_budget(open_session, vault, tmp_path):
    library = pdfium_library()
    copy("tracemonkey.pdf", vault, "Papers/tracemonkey.pdf")
    copy("image-only.pdf", vault, "Papers/scan.pdf")
    args = config_file(tmp_path, f'[files]\npdfium_library = "{library}"\npdf_render_pages = 3\n')
    async with open_session(vault, extra_args=args) as session:
        is_error, content, text = await read(session, {"path": "Papers/tracemonkey.pdf", "raw": True})
        assert not is_error, text
        assert "pages 1-3 of 14" in text and "start_line 4" in text, text
        images = image_blocks(content)
        assert len(images) == 3
        for image in images:
            data = base64.b64decode(image.data)
            assert len(data) <= BUDGET // 3, len(data)
            width, height = image_size(data, image.mime_type)
            assert height > width, (width, height)  # portrait pages
        # start_line is the first page, limit the page count (capped by pdf_render_pages).
        is_error, content, text = await read(
            session, {"path": "Papers/tracemonkey.pdf", "raw": True, "start_line": 13, "limit": 9}
        )
        assert not is_error, text
        assert "pages 13-14 of 14" in text and "Next" not in text, text
        assert len(image_blocks(content)) == 2
        assert all(len(base64.b64decode(i.data)) <= BUDGET // 2 for i in image_blocks(content))
        is_error, _, text = await read(
            session, {"path": "Papers/tracemonkey.pdf", "raw": True, "start_line": 15}
        )
        assert is_error and error_code(text) == "pdf_page_out_of_range", text
        # A scan has no text layer, but its page can be looked at.
        is_error, content, text = await read(session, {"path": "Papers/scan.pdf", "raw": True})
        assert not is_error, text
        assert len(image_blocks(content)) >= 1


# ---------------------------------------------------------------- text formats


async def test_text_windows_are_exact(session, vault):
    lines = [f"row {n},value {n * n}\n" for n in range(1, 11)]
    (vault / "Data").mkdir(exist_ok=True)
    (vault / "Data/table.csv").write_text("".join(lines))
    is_error, _, text = await read(session, {"path": "Data/table.csv", "start_line": 4, "limit": 3})
    assert not is_error, text
    assert text == "Lines 4-6 of 10; next start_line: 7.\n\n" + "".join(lines[3:6])
    is_error, _, text = await read(session, {"path": "Data/table.csv", "start_line": 9, "limit": 5})
    assert text == "Lines 9-10 of 10; end of file.\n\n" + "".join(lines[8:])
    is_error, _, text = await read(session, {"path": "Data/table.csv", "start_line": 11})
    assert is_error and error_code(text) == "invalid_argument", text
    is_error, _, text = await read(session, {"path": "Data/table.csv", "limit": 0})
    assert is_error and error_code(text) == "invalid_argument", text


async def test_an_unpaged_read_is_byte_exact(session, vault):
    raw = "\ufeffkey: value\r\nlist:\r\n  - é\r\n  - 😀\r\nlast: no newline".encode()
    (vault / "Data").mkdir(exist_ok=True)
    (vault / "Data/settings.YAML").write_bytes(raw)
    is_error, content, text = await read(session, {"path": "Data/settings.YAML"})
    assert not is_error, text
    assert len(content) == 1
    assert text.encode() == raw


async def test_text_over_the_cap_is_an_explicit_error(open_session, vault, tmp_path):
    (vault / "Data").mkdir(exist_ok=True)
    (vault / "Data/big.log").write_text("".join(f"line {n:03}\n" for n in range(1, 101)))
    (vault / "Data/binary.txt").write_bytes(b"ok\n\xff\xfe\x00")
    args = config_file(tmp_path, "[files]\nmax_text_bytes = 100\nmax_read_bytes = 2000\n")
    async with open_session(vault, extra_args=args) as session:
        is_error, _, text = await read(session, {"path": "Data/big.log"})
        assert is_error and error_code(text) == "too_large", text
        assert "100-byte cap" in text and "start_line 1 with limit 11" in text, text
        is_error, _, text = await read(session, {"path": "Data/big.log", "limit": 11})
        assert not is_error and text.endswith("line 011\n"), text
        is_error, _, text = await read(session, {"path": "Data/binary.txt"})
        assert is_error and error_code(text) == "not_utf8", text
        # The file cap is checked before reading.
        (vault / "Data/huge.txt").write_text("x" * 2001)
        is_error, _, text = await read(session, {"path": "Data/huge.txt"})
        assert is_error and error_code(text) == "too_large", text
        assert "files.max_read_bytes" in text, text


async def test_notes_and_unknown_kinds_are_refused(session, vault):
    is_error, _, text = await read(session, {"path": "Projects/Alpha.md"})
    assert is_error and error_code(text) == "unsupported_extension", text
    assert "vault_read_note" in text
    (vault / "Data").mkdir(exist_ok=True)
    (vault / "Data/archive.zip").write_bytes(b"PK\x03\x04")
    is_error, _, text = await read(session, {"path": "Data/archive.zip"})
    assert is_error and error_code(text) == "unsupported_extension", text
    assert "images (png, jpg, jpeg, gif, webp)" in text and "pdf (pdf)" in text, text
    is_error, _, text = await read(session, {"path": "Data/missing.csv"})
    assert is_error and error_code(text) == "not_found", text
    assert "vault_list_files" in text
    is_error, _, text = await read(session, {"path": ".obsidian/app.json"})
    assert is_error and error_code(text) == "path_forbidden", text


# ---------------------------------------------------------------- listing and stat


async def test_list_files_counts_pages_and_folders(session, vault):
    box = vault / "Box"
    (box / "Sub" / "Deeper").mkdir(parents=True)
    for name in ("a.png", "b.PNG", "c.pdf", "d.csv", "note.md", "Sub/e.png", "Sub/Deeper/f.txt"):
        (box / name).write_bytes(b"12345")
    listing = await structured(session, "vault_list_files", {"folder": "Box"})
    paths = [f["path"] for f in listing["files"]]
    assert paths == sorted(paths)
    assert set(paths) == {
        "Box/a.png", "Box/b.PNG", "Box/c.pdf", "Box/d.csv", "Box/note.md",
        "Box/Sub/e.png", "Box/Sub/Deeper/f.txt",
    }
    assert listing["total"] == 7
    assert listing["extensions"] == {"png": 3, "pdf": 1, "csv": 1, "md": 1, "txt": 1}
    kinds = {f["path"]: f["kind"] for f in listing["files"]}
    assert kinds["Box/note.md"] == "note" and kinds["Box/a.png"] == "file"
    assert all(f["bytes"] == 5 and f["modified"] for f in listing["files"])
    assert "folders" not in listing

    # The extension filter ignores case and a leading dot; counts cover the filtered set.
    first = await structured(
        session, "vault_list_files", {"folder": "Box", "extensions": [".PNG"], "limit": 2}
    )
    assert [f["path"] for f in first["files"]] == ["Box/Sub/e.png", "Box/a.png"]
    assert first["total"] == 3 and first["extensions"] == {"png": 3}
    second = await structured(
        session,
        "vault_list_files",
        {"folder": "Box", "extensions": ["png"], "limit": 2, "cursor": first["next_cursor"]},
    )
    assert [f["path"] for f in second["files"]] == ["Box/b.PNG"]
    assert "next_cursor" not in second

    flat = await structured(session, "vault_list_files", {"folder": "Box", "recursive": False})
    assert {f["path"] for f in flat["files"]} == {
        "Box/a.png", "Box/b.PNG", "Box/c.pdf", "Box/d.csv", "Box/note.md",
    }
    assert flat["folders"] == ["Box/Sub"]

    res = await session.call_tool("vault_list_files", {"folder": "Nowhere"})
    assert res.is_error and error_code(res.content[0].text) == "not_found"


async def test_stat_answers_for_notes_files_folders_and_missing_paths(session, vault):
    copy("hopper.jpg", vault, "Attachments/hopper.jpg")
    note = await structured(session, "vault_stat", {"path": "Projects/Alpha.md"})
    data = (vault / "Projects/Alpha.md").read_bytes()
    assert note["exists"] and note["kind"] == "note" and note["bytes"] == len(data)
    assert note["revision"] == sha256_hex(data)
    image = await structured(session, "vault_stat", {"path": "Attachments/hopper.jpg"})
    assert image["kind"] == "file" and image["bytes"] == 6412
    assert HEX64.match(image["revision"])
    folder = await structured(session, "vault_stat", {"path": "Projects/"})
    assert folder["exists"] and folder["kind"] == "folder" and "revision" not in folder
    missing = await structured(session, "vault_stat", {"path": "Projects/Nope.md"})
    assert missing == {"path": "Projects/Nope.md", "exists": False}


# ---------------------------------------------------------------- access control


@pytest.mark.parametrize("token", [AGENT_TOKEN, VIEWER_TOKEN], ids=["agent", "viewer"])
async def test_a_denied_folder_is_invisible_to_every_file_tool(acl_server, acl_vault, token):
    shutil.copyfile(IMAGES / "hopper.jpg", acl_vault / "Privé" / "zebracorn.jpg")
    (acl_vault / "Privé" / "falconry.csv").write_text("a,b\n")
    (acl_vault / "Keys" / "keys.txt").write_text("zebracorn\n")
    async with acl_server.session(token) as session:
        for denied, missing in [
            ("Privé/zebracorn.jpg", "Privé/nothing.jpg"),
            ("Privé/falconry.csv", "Privé/nothing.csv"),
            ("Keys/keys.txt", "Keys/nothing.txt"),
        ]:
            is_error, _, text = await read(session, {"path": denied})
            assert is_error and error_code(text) == "not_found", text
            _, _, missing_text = await read(session, {"path": missing})
            assert text.replace(denied, missing) == missing_text
            stat = await structured(session, "vault_stat", {"path": denied})
            assert stat == {"path": denied, "exists": False}
        stat = await structured(session, "vault_stat", {"path": "Privé"})
        assert stat == {"path": "Privé", "exists": False}
        listing = await structured(session, "vault_list_files", {"limit": 1000})
        seen = " ".join(f["path"] for f in listing["files"]) + str(listing["extensions"])
        for word in ("zebracorn", "falconry", "Privé", "Keys/", "jpg", "csv"):
            assert word not in seen, (word, listing)
        flat = await structured(session, "vault_list_files", {"recursive": False})
        assert "Privé" not in (flat.get("folders") or [])
        res = await session.call_tool("vault_list_files", {"folder": "Privé"})
        assert res.is_error and error_code(res.content[0].text) == "not_found"


# ---------------------------------------------------------------- the group switch


async def test_without_the_files_group_no_file_tool_is_served_or_mentioned(open_session, vault, tmp_path):
    args = config_file(
        tmp_path, '[tools]\ngroups = ["notes", "search", "links", "tasks", "daily"]\n'
    )
    async with open_session(vault, extra_args=args) as session:
        tools = (await session.list_tools()).tools
        names = {tool.name for tool in tools}
        assert not names & {"vault_read_file", "vault_list_files", "vault_stat"}
        text = " ".join(tool.description or "" for tool in tools)
        for name in ("vault_read_file", "vault_list_files", "vault_stat"):
            assert name not in text
        res = await session.call_tool("vault_read_file", {"path": "x.png"})
        assert res.is_error and error_code(res.content[0].text) == "invalid_argument"
    async with open_session(vault) as session:
        names = {tool.name for tool in (await session.list_tools()).tools}
        assert {"vault_read_file", "vault_list_files", "vault_stat"} <= names
