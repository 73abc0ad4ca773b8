"""Daily notes end to end, over stdio and HTTP: vault_get_daily_note and vault_append_daily_note
against the example vault's daily-notes setup (.obsidian/daily-notes.json: folder Daily, template
Templates/Daily), with `[time] timezone` deciding "today". Covers creation from the template with
Obsidian's substitutions, appends under a heading (created when missing), a missing settings file,
weekly notes from the Periodic Notes plugin, conflicts with an external writer (a stale revision,
and a write landing while the append is in progress, timed with the test-faults build), and the
ACL (over HTTP with an identity).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import subprocess
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from conftest import REQUEST_TIMEOUT_S, HttpServer, server_env, write_secret
from vaultlib import error_code, write_files

pytestmark = pytest.mark.anyio

# A zone far from UTC, so a server that ignored the setting would get "today" wrong most hours.
ZONE = "Pacific/Kiritimati"


async def call(session, tool: str, args: dict):
    """(is_error, structured_content, text) of one tool call."""
    res = await session.call_tool(tool, args)
    text = res.content[0].text if res.content and res.content[0].type == "text" else ""
    return bool(res.is_error), res.structured_content, text


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def local_now() -> datetime:
    return datetime.now(ZoneInfo(ZONE))


def config_file(tmp_path: Path, extra: str = "") -> list[str]:
    path = tmp_path / "quire.toml"
    path.write_text(f'[time]\ntimezone = "{ZONE}"\n{extra}')
    return ["--config", str(path)]


@pytest.fixture
async def daily(open_session, vault: Path, tmp_path: Path):
    async with open_session(vault, config_file(tmp_path)) as session:
        yield session


def template_text(vault: Path) -> str:
    return (vault / "Templates" / "Daily.md").read_text()


async def test_get_creates_from_the_template_with_obsidian_variables(daily, vault: Path):
    day = "2031-02-14"  # a Friday, far from any note the example vault has
    is_error, _, text = await call(daily, "vault_get_daily_note", {"date": day})
    assert is_error and error_code(text) == "not_found", text
    assert f"Daily/{day}.md" in text and "create: true" in text, text
    assert not (vault / "Daily" / f"{day}.md").exists()

    is_error, sc, text = await call(daily, "vault_get_daily_note", {"date": day, "create": True})
    assert not is_error, text
    path = vault / "Daily" / f"{day}.md"
    data = path.read_bytes()
    assert sc["path"] == f"Daily/{day}.md" and sc["created"] is True and sc["date"] == day
    assert sc["content"] == data.decode() and sc["revision"] == sha256(data) and sc["bytes"] == len(data)
    assert sc["settings"] == {
        "folder": "Daily",
        "format": "YYYY-MM-DD",
        "template": "Templates/Daily",
        "source": ".obsidian/daily-notes.json",
    }
    assert sc["warnings"] == []
    expected = (
        template_text(vault)
        .replace("{{date:YYYY-MM-DD}}", day)
        .replace("{{date:dddd, MMMM D}}", "Friday, February 14")
    )
    assert sc["content"] == expected

    # Getting it again returns it untouched.
    is_error, again, text = await call(daily, "vault_get_daily_note", {"date": day, "create": True})
    assert not is_error and again["created"] is False and again["revision"] == sc["revision"], text


async def test_title_time_and_offsets(open_session, vault: Path, tmp_path: Path):
    write_files(vault, {"Templates/Daily.md": "# {{title}}\nmade {{time}} · {{date+1d:ddd}} · [[{{yesterday}}]]\n"})
    async with open_session(vault, config_file(tmp_path)) as session:
        before = local_now()
        is_error, sc, text = await call(session, "vault_get_daily_note", {"date": "2030-12-31", "create": True})
        after = local_now()
    assert not is_error, text
    first, second = sc["content"].splitlines()
    assert first == "# 2030-12-31"
    times = {before.strftime("%H:%M"), after.strftime("%H:%M")}
    made = second.split(" · ")[0].removeprefix("made ")
    assert made in times, (made, times)
    assert second.endswith(" · Wed · [[2030-12-30]]"), second


async def test_today_follows_the_configured_time_zone(daily, vault: Path):
    before = local_now().date()
    is_error, sc, text = await call(daily, "vault_get_daily_note", {"create": True})
    after = local_now().date()
    assert not is_error, text
    assert sc["date"] in {before.isoformat(), after.isoformat()}, (sc["date"], before)
    for word, delta in (("yesterday", -1), ("tomorrow", 1), ("TODAY", 0)):
        is_error, other, text = await call(daily, "vault_get_daily_note", {"date": word, "create": True})
        assert not is_error, text
        wanted = {(d + timedelta(days=delta)).isoformat() for d in (before, after)}
        assert other["date"] in wanted, (word, other["date"], wanted)
        assert other["path"] == f"Daily/{other['date']}.md"
    for bad in ("2031-02-30", "14.02.2031", "next friday"):
        is_error, _, text = await call(daily, "vault_get_daily_note", {"date": bad})
        assert is_error and error_code(text) == "invalid_argument" and "YYYY-MM-DD" in text, text


async def test_append_under_a_heading_creating_it_when_missing(daily, vault: Path):
    day = "2031-03-01"
    path = vault / "Daily" / f"{day}.md"
    before = local_now()
    is_error, sc, text = await call(
        daily, "vault_append_daily_note", {"text": "Called the bank", "heading": "Log", "date": day}
    )
    assert not is_error, text
    # The note did not exist: it was made from the template, then the line went under "## Log".
    assert sc["created"] is True and sc["heading_created"] is False
    stamp = sc["appended"][2:7]
    assert stamp in {before.strftime("%H:%M"), local_now().strftime("%H:%M")}, sc["appended"]
    assert sc["appended"] == f"- {stamp} Called the bank"
    content = path.read_text()
    assert sc["revision"] == sha256(path.read_bytes())
    assert f"## Log\n- {stamp} Called the bank\n\n## Notes" in content, content
    lines = content.splitlines()
    assert lines[sc["start_line"] - 1] == sc["appended"] and sc["start_line"] == sc["end_line"]

    is_error, sc, text = await call(
        daily, "vault_append_daily_note", {"text": "Try the new café", "heading": "## Ideas", "date": day}
    )
    assert not is_error and sc["heading_created"] is True and sc["created"] is False, text
    is_error, sc, text = await call(daily, "vault_append_daily_note", {"text": "Second entry", "heading": "log", "date": day})
    assert not is_error and sc["heading_created"] is False, text
    is_error, sc, text = await call(daily, "vault_append_daily_note", {"text": "At the end", "date": day})
    assert not is_error, text
    content = path.read_text()
    assert "## Log\n- " in content and " Called the bank\n- " in content and " Second entry\n\n## Notes" in content, content
    assert content.endswith(" Try the new café\n- " + sc["appended"][2:] + "\n"), content
    assert content.count("## Ideas") == 1
    # Properties from the template are intact.
    assert content.startswith(f'---\ntitle: "{day}"\ntags: daily\ncreated: "{day}"\n---\n'), content

    for args in ({"text": "  ", "date": day}, {"text": "x", "heading": "###", "date": day}, {"text": "x", "date": "soon"}):
        is_error, _, text = await call(daily, "vault_append_daily_note", args)
        assert is_error and error_code(text) == "invalid_argument", (args, text)


async def test_a_stale_revision_is_a_conflict_and_the_external_edit_stays(daily, vault: Path):
    day = "2031-04-01"
    is_error, sc, text = await call(daily, "vault_get_daily_note", {"date": day, "create": True})
    assert not is_error, text
    path = vault / "Daily" / f"{day}.md"
    external = path.read_text() + "Written in Obsidian meanwhile.\n"
    path.write_text(external)
    is_error, _, text = await call(
        daily,
        "vault_append_daily_note",
        {"text": "late", "date": day, "expected_revision": sc["revision"]},
    )
    assert is_error and error_code(text) == "conflict", text
    assert sha256(external.encode()) in text, text
    assert path.read_text() == external
    is_error, sc, text = await call(
        daily,
        "vault_append_daily_note",
        {"text": "on time", "date": day, "expected_revision": sha256(external.encode())},
    )
    assert not is_error, text
    assert path.read_text().startswith(external)


async def test_concurrent_appends_to_a_new_note_each_land_once(daily, vault: Path):
    """Twenty appends at once to a day without a note: one creates it from the template, the
    per-note lock serialises the rest, and every line is there exactly once."""
    day = "2031-09-09"
    texts = [f"entry {n:02d}" for n in range(20)]
    results = await asyncio.gather(
        *(call(daily, "vault_append_daily_note", {"text": text, "heading": "Log", "date": day}) for text in texts)
    )
    errors = [text for is_error, _, text in results if is_error]
    assert not errors, errors
    assert sum(sc["created"] for _, sc, _ in results) == 1
    content = (vault / "Daily" / f"{day}.md").read_text()
    for text in texts:
        assert content.count(f" {text}\n") == 1, text
    assert content.count("## Log") == 1 and content.startswith("---\n"), content


@pytest.fixture
def faults_bin() -> Path:
    path = os.environ.get("QUIRE_FAULTS_BIN")
    if not path or not Path(path).is_file():
        pytest.skip("QUIRE_FAULTS_BIN (a build with --features test-faults) is not set; tests/run builds it")
    return Path(path)


@asynccontextmanager
async def paused_session(faults_bin: Path, vault: Path, tmp_path: Path, xdg_home: Path, transport: str):
    """A session with a server that pauses 600 ms between reading a note and writing it."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

    env = {**server_env(xdg_home), "QUIRE_TEST_FAULT": "pause-before-write:600"}
    args = ["serve", "--vault", str(vault), *config_file(tmp_path)]
    log_path = tmp_path / "quire-stderr.log"
    if transport == "stdio":
        params = StdioServerParameters(command=str(faults_bin), args=args, env=env, cwd=str(tmp_path))
        with open(log_path, "a") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write, read_timeout_seconds=REQUEST_TIMEOUT_S) as session:
                    await session.initialize()
                    yield session
    else:
        server = HttpServer(faults_bin, vault, env, log_path, args[3:])
        try:
            headers = {"Authorization": f"Bearer {server.token}"}
            async with create_mcp_http_client(headers=headers) as http:
                async with streamable_http_client(server.url, http_client=http) as streams:
                    async with ClientSession(streams[0], streams[1], read_timeout_seconds=REQUEST_TIMEOUT_S) as session:
                        await session.initialize()
                        yield session
        finally:
            server.stop()


async def test_an_external_write_during_the_append_is_a_conflict(faults_bin, vault, tmp_path, xdg_home, transport):
    """The server reads the note, then (test fault) waits before writing; a sync client writes the
    note in that gap. The append must answer conflict and leave the other writer's bytes."""
    probe = subprocess.run(
        [str(faults_bin), "check-config", "--vault", str(vault), *config_file(tmp_path)],
        capture_output=True, text=True, timeout=30, env=server_env(xdg_home),
    )
    if probe.returncode != 0:
        pytest.skip(f"{faults_bin} predates this branch (check-config: {probe.stderr.strip()[:200]}); rebuild it with --features test-faults")
    async with paused_session(faults_bin, vault, tmp_path, xdg_home, transport) as session:
        for day, exists in (("2031-05-01", True), ("2031-05-02", False)):
            path = vault / "Daily" / f"{day}.md"
            if exists:
                path.write_text("# Before\n")
            append = asyncio.create_task(
                call(session, "vault_append_daily_note", {"text": "from the agent", "date": day})
            )
            await asyncio.sleep(0.3)  # the server has read the note (or found none) and is waiting
            external = "# Written by the sync client\n"
            temp = path.with_name(f".sync-{day}.tmp")
            temp.write_text(external)
            os.replace(temp, path)
            is_error, _, text = await append
            log = (tmp_path / "quire-stderr.log").read_text() if (tmp_path / "quire-stderr.log").exists() else ""
            if not is_error and "pausing before the write" not in log:
                pytest.skip(f"{faults_bin} predates the pause-before-write fault; rebuild it with --features test-faults")
            assert is_error and error_code(text) == "conflict", (day, text)
            assert sha256(external.encode()) in text, text
            assert path.read_text() == external, day
            # Retried, it lands on top of the other writer's version.
            is_error, sc, text = await call(session, "vault_append_daily_note", {"text": "retried", "date": day})
            assert not is_error, text
            assert path.read_text() == external + sc["appended"] + "\n"


async def test_missing_settings_fall_back_to_defaults_with_a_warning(open_session, vault: Path, tmp_path: Path):
    (vault / ".obsidian" / "daily-notes.json").unlink()
    async with open_session(vault, config_file(tmp_path)) as session:
        is_error, sc, text = await call(session, "vault_append_daily_note", {"text": "hello", "date": "2031-06-01"})
    assert not is_error, text
    assert sc["path"] == "2031-06-01.md" and sc["created"] is True
    assert sc["settings"]["source"] == "Obsidian's defaults"
    assert any("daily-notes.json" in warning for warning in sc["warnings"]), sc["warnings"]
    assert (vault / "2031-06-01.md").read_text() == f"- {sc['appended'][2:]}\n"
    log = (tmp_path / "quire-stderr.log").read_text()
    assert "WARN" in log and "daily-notes.json" in log, log[-2000:]


async def test_config_overrides_and_weekly_notes(open_session, vault: Path, tmp_path: Path):
    write_files(
        vault,
        {
            ".obsidian/plugins/periodic-notes/data.json": '{"weekly": {"enabled": true, "folder": "Weekly", "format": "GGGG-[W]WW", "template": "Templates/Week"}}',
            "Templates/Week.md": "# {{title}}\nFrom {{monday:D MMM}} to {{sunday:D MMM}}\n",
        },
    )
    extra = '[daily_notes]\nfolder = "Journal"\nformat = "YYYY/MM/DD"\n'
    async with open_session(vault, config_file(tmp_path, extra)) as session:
        is_error, sc, text = await call(session, "vault_get_daily_note", {"date": "2031-07-04", "create": True})
        assert not is_error, text
        assert sc["path"] == "Journal/2031/07/04.md", sc
        assert sc["settings"]["template"] == "Templates/Daily"
        is_error, week, text = await call(
            session, "vault_get_daily_note", {"date": "2031-07-04", "period": "weekly", "create": True}
        )
        assert not is_error, text
        # 2031-07-04 is a Friday in ISO week 27 (Monday 30 June to Sunday 6 July).
        assert week["path"] == "Weekly/2031-W27.md" and week["date"] == "2031-06-30", week
        assert week["content"] == "# 2031-W27\nFrom 30 Jun to 6 Jul\n", week["content"]
        is_error, _, text = await call(session, "vault_get_daily_note", {"period": "monthly"})
        assert is_error and error_code(text) == "invalid_argument" and "Periodic Notes" in text, text
        is_error, _, text = await call(session, "vault_get_daily_note", {"period": "fortnightly"})
        assert is_error and error_code(text) == "invalid_argument", text


async def test_tools_are_listed_with_schemas(daily):
    tools = {tool.name: tool for tool in (await daily.list_tools()).tools}
    for name in ("vault_get_daily_note", "vault_append_daily_note"):
        tool = tools[name]
        assert tool.annotations and tool.annotations.title and tool.output_schema["type"] == "object"
        assert tool.annotations.read_only_hint is False
    assert tools["vault_get_daily_note"].annotations.idempotent_hint is True
    assert set(tools["vault_append_daily_note"].input_schema["required"]) == {"text"}


# --- the ACL (identities need HTTP) ---------------------------------------------------------------

AGENT_TOKEN = "daily-agent-token-0123456789abcdefghijklmnop"
ACL_CONFIG = f"""
[time]
timezone = "{ZONE}"

[[identity]]
name = "agent"
token_file = "agent.token"
read = ["/"]
write = ["Inbox/"]
deny = ["Daily/"]
"""


async def test_a_denied_daily_folder_reveals_nothing(quire_bin, vault: Path, tmp_path: Path, xdg_home: Path):
    from mcp import ClientSession
    from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

    write_secret(tmp_path / "agent.token", AGENT_TOKEN + "\n")
    config = tmp_path / "quire.toml"
    config.write_text(ACL_CONFIG)
    existing = sorted((vault / "Daily").glob("*.md"))[0]
    existing_day = existing.stem
    missing_day = "2031-08-01"
    before = {p.name: p.read_bytes() for p in (vault / "Daily").iterdir()}
    server = HttpServer(quire_bin, vault, server_env(xdg_home), tmp_path / "quire-stderr.log", ["--config", str(config)])
    try:
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {AGENT_TOKEN}"}) as http:
            async with streamable_http_client(server.url, http_client=http) as streams:
                async with ClientSession(streams[0], streams[1]) as session:
                    await session.initialize()
                    names = {tool.name for tool in (await session.list_tools()).tools}
                    assert {"vault_get_daily_note", "vault_append_daily_note"} <= names
                    _, _, on_existing = await call(session, "vault_get_daily_note", {"date": existing_day})
                    _, _, on_missing = await call(session, "vault_get_daily_note", {"date": missing_day})
                    assert error_code(on_existing) == "not_found", on_existing
                    # The same answer whether or not the note exists.
                    assert on_existing.replace(existing_day, missing_day) == on_missing
                    for day in (existing_day, missing_day):
                        for tool, args in (
                            ("vault_get_daily_note", {"date": day, "create": True}),
                            ("vault_append_daily_note", {"date": day, "text": "x"}),
                            ("vault_append_daily_note", {"date": day, "text": "x", "heading": "Log"}),
                        ):
                            is_error, _, text = await call(session, tool, args)
                            assert is_error and error_code(text) == "path_forbidden", (tool, day, text)
                    forbidden = {}
                    for day in (existing_day, missing_day):
                        _, _, forbidden[day] = await call(session, "vault_append_daily_note", {"date": day, "text": "x"})
                    assert forbidden[existing_day].replace(existing_day, missing_day) == forbidden[missing_day]
    finally:
        server.stop()
    after = {p.name: p.read_bytes() for p in (vault / "Daily").iterdir()}
    assert after == before
