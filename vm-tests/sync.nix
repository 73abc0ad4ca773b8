# The git backend between two Quire nodes through a git server: Quire waits for the first sync
# (and writes no memory templates before it), a note written on one node is searchable on the
# other after both sync, and the deletion guard stops a sync from an emptied vault before it can
# delete the notes everywhere.
{ self, pkgs }:
let
  common = import ./lib/common.nix { inherit self pkgs; };
  quireNode = {
    imports = [ common.node ];
    environment.systemPackages = [ common.mcpCall pkgs.git ];
    services.quire = {
      enable = true;
      vault.path = "/srv/notes";
      sync = {
        backend = "git";
        git.remote = "git://gitserver/notes.git";
        # The test triggers each sync by hand.
        git.interval = "1h";
      };
    };
  };
in
pkgs.testers.runNixOSTest {
  name = "quire-sync";

  nodes = {
    gitserver = {
      networking.firewall.allowedTCPPorts = [ 9418 ];
      services.gitDaemon = {
        enable = true;
        basePath = "/srv/git";
        exportAll = true;
        options = "--enable=receive-pack";
      };
      environment.systemPackages = [ pkgs.git ];
    };
    alpha = quireNode;
    beta = quireNode;
  };

  testScript = ''
    import json

    url = "http://127.0.0.1:8787/mcp"

    start_all()
    gitserver.wait_for_unit("git-daemon.service")

    for node in [alpha, beta]:
        node.wait_for_unit("quire.socket")

    with subtest("No memory templates land on a vault whose first sync has not completed"):
        # The remote does not exist yet, so the first sync keeps retrying; Quire, asked to start,
        # waits for it and writes nothing (its memory bootstrap runs only after the first sync).
        for node in [alpha, beta]:
            node.succeed("systemctl start --no-block quire.service")
        alpha.sleep(10)
        for node in [alpha, beta]:
            node.fail("test -e /var/lib/quire-sync/first-sync-done")
            node.succeed("test ! -e '/srv/notes/About Me'")

    gitserver.succeed(
        "mkdir -p /srv/git && git init --quiet --bare --initial-branch main /srv/git/notes.git && chown -R git /srv/git"
    )

    def call(node, tool, arguments):
        node.succeed("curl -sf http://127.0.0.1:8787/healthz")
        token = node.succeed("cat /var/lib/quire/owner-token").strip()
        return json.loads(node.succeed(f"mcp-call {url} {token} {tool} '{json.dumps(arguments)}'"))

    with subtest("Quire waits for the first sync, which completes once the remote exists"):
        for node in [alpha, beta]:
            assert "quire-first-sync.service" in node.succeed("systemctl show quire.service -p Requires --value")
            # The first sync retries while the remote is missing (it was created after boot).
            node.wait_for_unit("quire-first-sync.service", timeout=180)
            node.succeed("test -e /var/lib/quire-sync/first-sync-done")

    with subtest("A note written on alpha is searchable on beta"):
        call(alpha, "vault_write_note", {"path": "Harbour.md", "body": "The ferry leaves at noon.\n"})
        # Serving after the first sync, alpha's Quire created the memory layer's starter files.
        alpha.succeed("test -f '/srv/notes/About Me/Agents.md'")
        alpha.succeed("systemctl start quire-sync.service")
        gitserver.succeed("git -C /srv/git/notes.git log --oneline main | grep -q 'Quire sync from alpha'")
        beta.succeed("systemctl start quire-sync.service")
        beta.succeed("test -f /srv/notes/Harbour.md")
        beta.wait_until_succeeds(
            "mcp-call " + url + " $(cat /var/lib/quire/owner-token) vault_search '{\"query\": \"ferry noon\"}'"
            " | jq -e 'any(.results[]; .path == \"Harbour.md\")'"
        )

    with subtest("Both directions: beta's edit reaches alpha"):
        call(beta, "vault_write_note", {"path": "Tides.md", "body": "High water at six.\n"})
        beta.succeed("systemctl start quire-sync.service")
        alpha.succeed("systemctl start quire-sync.service")
        alpha.succeed("grep -q 'High water' /srv/notes/Tides.md")

    with subtest("The first-sync guard refuses to push an emptied vault"):
        alpha.succeed("find /srv/notes -mindepth 1 -maxdepth 1 -not -name '.*' -exec rm -rf {} +")
        alpha.fail("systemctl start quire-sync.service")
        alpha.succeed("journalctl -u quire-sync.service | grep -q 'first-sync guard: refusing to sync'")
        gitserver.succeed("git -C /srv/git/notes.git show main:Harbour.md | grep -q ferry")
  '';
}
