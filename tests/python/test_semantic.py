"""Semantic search through the real binary and the official SDK, over stdio and HTTP: every
response says which mode answered (`search_mode`, `reranked`); without a model, or with a library
that does not load, search is keyword-only with a notice and `quire doctor` warns; with the real
MiniLM model (installed by tests/run into target/quire-models) under a required landlock sandbox,
`auto` becomes hybrid once the background pass has embedded the vault and finds notes by meaning.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[2]
MODELS = Path(os.environ.get("QUIRE_TEST_MODELS", REPO / "target" / "quire-models"))
LIBRARY = MODELS / "lib" / "libonnxruntime.so"
MINILM = MODELS / "models" / "minilm"
# The background pass embeds the example vault in a few seconds on 2 cores (debug build).
HYBRID_WAIT_S = 90


def require_model() -> None:
    if LIBRARY.is_file() and (MINILM / "quire-model.json").is_file():
        return
    if os.environ.get("QUIRE_REQUIRE_MODEL") == "1":
        pytest.fail(f"QUIRE_REQUIRE_MODEL=1 but no model in {MODELS}")
    pytest.skip(f"no real model in {MODELS} (quire model install minilm --data-dir {MODELS})")


async def search(session, query: str, **args) -> dict:
    res = await session.call_tool("vault_search", {"query": query, **args})
    text = res.content[0].text if res.content else ""
    assert not res.is_error, text
    return res.structured_content


def write_config(tmp_path: Path, search: str, sandbox: str = "best-effort") -> Path:
    path = tmp_path / "quire.toml"
    path.write_text(f'sandbox = "{sandbox}"\n[search]\n{search}')
    return path


async def test_without_a_model_every_mode_answers_by_keyword(open_session, vault: Path):
    async with open_session(vault) as session:
        for mode in ("auto", "keyword", "semantic", "hybrid"):
            found = await search(session, "launch", mode=mode)
            assert found["search_mode"] == "keyword", mode
            assert found["reranked"] is False
            assert found["results"], mode
            if mode in ("semantic", "hybrid"):
                assert "quire model install" in found["notice"], found
            else:
                assert "notice" not in found, found


async def test_a_library_that_does_not_load_degrades_to_keyword(
    open_session, vault: Path, tmp_path: Path, quire_bin: Path
):
    fake_library = tmp_path / "libonnxruntime.so"
    fake_library.write_text("not a shared library\n")
    model = tmp_path / "model"
    model.mkdir()
    (model / "model.onnx").write_bytes(b"not onnx")
    (model / "tokenizer.json").write_text("{}")
    (model / "quire-model.json").write_text('{"name": "broken", "dimensions": 4, "max_tokens": 64}')
    config = write_config(
        tmp_path, f'model_dir = "{model}"\nonnxruntime = "{fake_library}"\n'
    )
    async with open_session(vault, extra_args=["--config", str(config)]) as session:
        # Give the loader time to fail; the server must keep answering.
        await asyncio.sleep(1.0)
        found = await search(session, "launch", mode="hybrid")
        assert found["search_mode"] == "keyword"
        assert "not available" in found["notice"], found
        assert found["results"]
    doctor = subprocess.run(
        [str(quire_bin), "doctor", "--vault", str(vault), "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "XDG_STATE_HOME": str(tmp_path / "doctor-state")},
    )
    assert doctor.returncode == 0, doctor.stderr
    assert "WARNING" in doctor.stdout and "keyword-only" in doctor.stdout, doctor.stdout


async def test_the_real_model_makes_auto_hybrid_under_the_sandbox(
    open_session, vault: Path, tmp_path: Path
):
    require_model()
    (vault / "Pets").mkdir(exist_ok=True)
    (vault / "Pets" / "Whiskers.md").write_text(
        "# Whiskers\nOur kitten sleeps on the sofa and purrs all afternoon.\n"
    )
    config = write_config(
        tmp_path,
        f'model_dir = "{MINILM}"\nonnxruntime = "{LIBRARY}"\n',
        sandbox="required",
    )
    async with open_session(vault, extra_args=["--config", str(config)]) as session:
        deadline = time.monotonic() + HYBRID_WAIT_S
        found = await search(session, "feline companion")
        while found["search_mode"] != "hybrid" and time.monotonic() < deadline:
            await asyncio.sleep(0.5)
            found = await search(session, "feline companion")
        assert found["search_mode"] == "hybrid", found
        assert found["reranked"] is False
        assert found["results"][0]["path"] == "Pets/Whiskers.md", found["results"][:3]
        # No note has the words: keyword mode finds nothing, semantic mode finds the cat.
        keyword = await search(session, "feline companion", mode="keyword")
        assert keyword["search_mode"] == "keyword" and keyword["results"] == []
        semantic = await search(session, "feline companion", mode="semantic")
        assert semantic["search_mode"] == "semantic"
        assert semantic["results"][0]["path"] == "Pets/Whiskers.md"
        # A write is searchable by meaning once the background pass has embedded it; the keyword
        # leg finds it at once.
        res = await session.call_tool(
            "vault_write_note",
            {"path": "Inbox/Pasta.md", "body": "Boil the spaghetti for nine minutes.\n"},
        )
        assert not res.is_error, res.content
        found = await search(session, "spaghetti")
        assert "Inbox/Pasta.md" in [hit["path"] for hit in found["results"]]
        deadline = time.monotonic() + HYBRID_WAIT_S
        while time.monotonic() < deadline:
            found = await search(session, "cooking noodles", mode="semantic")
            if found["results"] and found["results"][0]["path"] == "Inbox/Pasta.md":
                break
            await asyncio.sleep(0.5)
        assert found["results"][0]["path"] == "Inbox/Pasta.md", found["results"][:3]


@pytest.mark.parametrize("leave_after_s", [0.2, 0.5, 0.9])
def test_a_client_leaving_while_the_model_loads_leaves_no_alarming_log(
    quire_bin: Path, vault: Path, tmp_path: Path, xdg_home: Path, leave_after_s: float
):
    require_model()
    config = write_config(tmp_path, f'model_dir = "{MINILM}"\nonnxruntime = "{LIBRARY}"\n')
    env = {**os.environ, "XDG_STATE_HOME": str(xdg_home / "state"), "XDG_DATA_HOME": str(xdg_home / "data")}
    proc = subprocess.Popen(
        [str(quire_bin), "serve", "--vault", str(vault), "--config", str(config)],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
    )
    assert proc.stdin is not None and proc.stderr is not None
    proc.stdin.write(
        b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
        b'"capabilities":{},"clientInfo":{"name":"leaver","version":"1"}}}\n'
    )
    proc.stdin.flush()
    time.sleep(leave_after_s)
    proc.stdin.close()  # the client goes away while the model may still be loading
    log = proc.stderr.read().decode(errors="replace")
    assert proc.wait(timeout=30) == 0, log
    for alarming in ("Exception", "GetElementType", "embedding failed", "ERROR", "\x1b[1;31m"):
        assert alarming not in log, log


async def test_the_real_model_finds_files_by_meaning(open_session, vault: Path, tmp_path: Path):
    """A CSV and a canvas with no word of the query come back by meaning, as `kind: "file"`."""
    require_model()
    (vault / "Data").mkdir(exist_ok=True)
    (vault / "Data" / "groceries.csv").write_text(
        "item,quantity\nspaghetti,2\nparmesan,1\nbasil,1\n"
    )
    (vault / "Data" / "Trip.canvas").write_text(
        '{"nodes":[{"id":"a","type":"text","text":"Flights to Lisbon and a hotel by the sea",'
        '"x":0,"y":0,"width":300,"height":80}],"edges":[]}'
    )
    config = write_config(tmp_path, f'model_dir = "{MINILM}"\nonnxruntime = "{LIBRARY}"\n')
    async with open_session(vault, extra_args=["--config", str(config)]) as session:
        deadline = time.monotonic() + HYBRID_WAIT_S
        found = await search(session, "italian cooking ingredients", mode="semantic")
        while found["search_mode"] != "semantic" and time.monotonic() < deadline:
            await asyncio.sleep(0.5)
            found = await search(session, "italian cooking ingredients", mode="semantic")
        # The pass may still be on its way to the files: wait for it.
        while time.monotonic() < deadline and "Data/groceries.csv" not in [
            hit["path"] for hit in found["results"][:3]
        ]:
            await asyncio.sleep(0.5)
            found = await search(session, "italian cooking ingredients", mode="semantic")
        top = {hit["path"]: hit for hit in found["results"][:3]}
        assert "Data/groceries.csv" in top, found["results"][:5]
        assert top["Data/groceries.csv"]["kind"] == "file"
        travel = await search(session, "holiday in Portugal", mode="semantic")
        assert travel["results"][0]["path"] == "Data/Trip.canvas", travel["results"][:3]
        assert travel["results"][0]["kind"] == "file"
