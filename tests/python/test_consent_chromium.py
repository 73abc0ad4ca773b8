"""The consent page in a real browser: Debian's headless Chromium, driven over the Chrome DevTools
Protocol, opens the authorize URL, types an identity token into the form, presses Allow, and
follows Quire's redirect to the client's callback, which must carry the code, `iss` and `state`.
A scripted client cannot catch what only a browser enforces (the page's Content-Security-Policy,
form submission with the pressed button, redirects after a POST).

Runs only with QUIRE_CHROMIUM=1 (tests/chromium/run installs Chromium and sets it); without the
flag it is skipped with a notice. With the flag, a missing Chromium is a failure."""

from __future__ import annotations

import itertools
import json
import os
import queue
import shutil
import subprocess
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlparse

import pytest

from test_acl import AGENT_TOKEN, AclServer, acl_vault  # noqa: F401
from test_oauth import pkce

if os.environ.get("QUIRE_CHROMIUM") != "1":
    pytest.skip(
        "the headless Chromium consent test runs with QUIRE_CHROMIUM=1 (tests/chromium/run installs Chromium and sets it)",
        allow_module_level=True,
    )

websockets_sync = pytest.importorskip("websockets.sync.client")

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


class Callback:
    """The OAuth client's redirect target: records the query of every request it gets."""

    def __init__(self):
        self.queries: queue.Queue[str] = queue.Queue()
        callback = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (the standard library's name)
                callback.queries.put(urlparse(self.path).query)
                body = b"<!doctype html><title>done</title>connected"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/callback"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


class DevTools:
    """A minimal Chrome DevTools Protocol client over one page's websocket."""

    def __init__(self, websocket_url: str):
        self.ws = websockets_sync.connect(websocket_url, max_size=None)
        self.ws.__enter__()
        self.ids = itertools.count(1)
        self.events: list[dict] = []

    def call(self, method: str, **params) -> dict:
        call_id = next(self.ids)
        self.ws.send(json.dumps({"id": call_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv(timeout=30))
            if message.get("id") == call_id:
                assert "error" not in message, (method, message["error"])
                return message.get("result", {})
            self.events.append(message)

    def wait_for(self, method: str, timeout: float = 30) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            for index, event in enumerate(self.events):
                if event.get("method") == method:
                    return self.events.pop(index)
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"no {method} within {timeout} s"
            self.events.append(json.loads(self.ws.recv(timeout=remaining)))

    def evaluate(self, expression: str):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        assert "exceptionDetails" not in result, result
        return result["result"].get("value")

    def console(self) -> list[str]:
        """What the page logged so far (CSP violations land here), for failure messages."""
        while True:
            try:
                self.events.append(json.loads(self.ws.recv(timeout=0.5)))
            except TimeoutError:
                break
        return [e["params"]["entry"]["text"] for e in self.events if e.get("method") == "Log.entryAdded"]

    def close(self):
        self.ws.__exit__(None, None, None)


def chromium_binary() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.fail("QUIRE_CHROMIUM=1 but no chromium binary is on PATH; run tests/chromium/run (apt-get install chromium)")


@pytest.fixture
def browser(tmp_path):
    profile = tmp_path / "chromium-profile"
    log = open(tmp_path / "chromium.log", "w")
    proc = subprocess.Popen(
        [chromium_binary(), *CHROMIUM_FLAGS, "--remote-debugging-port=0", f"--user-data-dir={profile}",
         "--no-first-run", "--no-default-browser-check", "about:blank"],
        stdout=log, stderr=subprocess.STDOUT,
    )
    try:
        # Chromium writes the port it chose into the profile once DevTools listens.
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not (port_file.exists() and port_file.read_text().strip()):
            assert proc.poll() is None, f"chromium exited; see {tmp_path / 'chromium.log'}"
            assert time.monotonic() < deadline, "chromium did not open its DevTools port"
            time.sleep(0.1)
        port = int(port_file.read_text().splitlines()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as res:
            pages = [t for t in json.load(res) if t["type"] == "page"]
        devtools = DevTools(pages[0]["webSocketDebuggerUrl"])
        yield devtools
        devtools.close()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@pytest.fixture
def quire(quire_bin, acl_vault, tmp_path, xdg_home):  # noqa: F811
    server = AclServer(quire_bin, acl_vault, tmp_path, xdg_home)
    yield server
    server.server.stop()


def post_json(url: str, body: dict) -> dict:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as res:
        return json.load(res)


def test_the_consent_page_works_in_headless_chromium(quire, browser):
    base = quire.url.removesuffix("/mcp")
    callback = Callback()
    try:
        client_id = post_json(f"{base}/oauth/register", {"redirect_uris": [callback.url], "client_name": "Browser client"})["client_id"]
        verifier, challenge = pkce()
        authorize = f"{base}/oauth/authorize?" + urlencode({
            "response_type": "code", "client_id": client_id, "redirect_uri": callback.url,
            "code_challenge": challenge, "code_challenge_method": "S256", "state": "browser-state",
            "resource": f"{base}/mcp", "scope": "vault",
        })
        browser.call("Page.enable")
        browser.call("Log.enable")
        browser.call("Page.navigate", url=authorize)
        browser.wait_for("Page.loadEventFired")
        assert "Browser client" in browser.evaluate("document.body.innerText")

        # Type the token as a person would: focus the field, insert text, press Allow.
        browser.evaluate("document.getElementById('token').focus()")
        browser.call("Input.insertText", text=AGENT_TOKEN)
        assert browser.evaluate("document.getElementById('token').value.length") == len(AGENT_TOKEN)
        box = browser.evaluate(
            "(() => { const r = document.querySelector('button[value=allow]').getBoundingClientRect();"
            " return [r.x + r.width / 2, r.y + r.height / 2]; })()"
        )
        for kind in ("mousePressed", "mouseReleased"):
            browser.call("Input.dispatchMouseEvent", type=kind, x=box[0], y=box[1], button="left", clickCount=1)

        try:
            query = parse_qs(callback.queries.get(timeout=20))
        except queue.Empty:
            pytest.fail(f"the browser never reached the callback; its console: {browser.console()}")
        assert query["state"] == ["browser-state"] and query["iss"] == [base], query
        [code] = query["code"]
        # The browser landed on the callback page.
        browser.wait_for("Page.loadEventFired")
        assert browser.evaluate("location.href").startswith(callback.url)

        # The code the browser carried is good for tokens.
        request = urllib.request.Request(
            f"{base}/oauth/token",
            data=urlencode({"grant_type": "authorization_code", "code": code, "redirect_uri": callback.url,
                            "client_id": client_id, "code_verifier": verifier}).encode(),
        )
        with urllib.request.urlopen(request, timeout=10) as res:
            assert json.load(res)["token_type"] == "Bearer"
    finally:
        callback.stop()
