# Lazy start on the first request, search, a write that is searchable when the call returns, and
# the journal carrying the tool call.
{ self, pkgs }:
let
  common = import ./lib/common.nix { inherit self pkgs; };
in
pkgs.testers.runNixOSTest {
  name = "quire-basic";

  nodes.machine = {
    imports = [ common.node ];
    environment.systemPackages = [ common.mcpCall ];
    services.quire = {
      enable = true;
      vault.path = "/srv/notes";
    };
    systemd.tmpfiles.rules = [
      "f /srv/notes/Lighthouse.md 0660 quire quire - The keeper trims the lamp at dusk."
    ];
  };

  testScript = ''
    import json

    url = "http://127.0.0.1:8787/mcp"

    machine.wait_for_unit("multi-user.target")
    machine.wait_for_unit("quire.socket")

    with subtest("Quire is not running until the socket is hit"):
        machine.fail("systemctl is-active --quiet quire.service")
        machine.succeed("curl -sf http://127.0.0.1:8787/healthz | jq -e '.status == \"ok\"'")
        machine.wait_for_unit("quire.service")
        machine.succeed("systemctl show quire.service -p Type | grep -x Type=notify")

    token = machine.succeed("cat /var/lib/quire/owner-token").strip()

    def call(tool, arguments):
        return json.loads(machine.succeed(f"mcp-call {url} {token} {tool} '{json.dumps(arguments)}'"))

    with subtest("Search finds a note that was there at start"):
        found = call("vault_search", {"query": "lamp keeper"})
        assert [hit["path"] for hit in found["results"]] == ["Lighthouse.md"], found

    with subtest("A write is searchable when the call returns"):
        call("vault_write_note", {"path": "Inbox/Tides.md", "body": "Spring tides follow the new moon.\n"})
        found = call("vault_search", {"query": "spring tides"})
        assert "Inbox/Tides.md" in [hit["path"] for hit in found["results"]], found
        machine.succeed("test -f /srv/notes/Inbox/Tides.md")

    with subtest("The state stays outside the vault"):
        machine.succeed("test -f /var/lib/quire/index.db")
        machine.fail("find /srv/notes -name 'index.db*' | grep .")

    with subtest("The journal has the tool call with native fields"):
        machine.wait_until_succeeds(
            "journalctl -u quire.service TOOL=vault_write_note -o json | jq -e 'select(.PATH == \"Inbox/Tides.md\")'"
        )
        machine.fail("journalctl -u quire.service | grep -F 'Spring tides'")
  '';
}
