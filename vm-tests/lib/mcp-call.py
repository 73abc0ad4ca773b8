"""mcp-call: one MCP tool call over Streamable HTTP, for the VM tests.

Usage: mcp-call URL TOKEN TOOL [JSON_ARGUMENTS]
Initializes a session, calls TOOL, prints the result's structuredContent as JSON.
Exits 1 when the call is a tool error (isError), printing its text; 2 on an HTTP error.
"""
import json
import sys
import urllib.error
import urllib.request


def post(url, token, message, session=None):
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-11-25",
    }
    if token:
        headers["Authorization"] = "Bearer " + token
    if session:
        headers["Mcp-Session-Id"] = session
    request = urllib.request.Request(
        url, data=json.dumps(message).encode(), headers=headers, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            body = response.read().decode()
            session = response.headers.get("Mcp-Session-Id", session)
            kind = response.headers.get("Content-Type", "")
    except urllib.error.HTTPError as error:
        print(f"HTTP {error.code}: {error.read().decode()}", file=sys.stderr)
        sys.exit(2)
    if "id" not in message or not body.strip():
        return None, session
    if kind.startswith("text/event-stream"):
        for line in body.splitlines():
            if line.startswith("data:") and line[5:].strip():
                reply = json.loads(line[5:])
                if reply.get("id") == message["id"]:
                    return reply, session
        raise SystemExit("no reply in the event stream: " + body)
    return json.loads(body), session


def main():
    url, token, tool = sys.argv[1], sys.argv[2], sys.argv[3]
    arguments = json.loads(sys.argv[4]) if len(sys.argv) > 4 else {}
    _, session = post(url, token, {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "mcp-call", "version": "1"},
        },
    })
    post(url, token, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    reply, _ = post(url, token, {
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }, session)
    if "error" in reply:
        print(json.dumps(reply["error"]), file=sys.stderr)
        sys.exit(2)
    result = reply["result"]
    if result.get("isError"):
        print(result["content"][0]["text"])
        sys.exit(1)
    print(json.dumps(result.get("structuredContent", result)))


main()
