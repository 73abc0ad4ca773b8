# Through the nginx proxy: 401 with resource metadata for a missing token, per-identity ACL with
# static tokens, and the OAuth 2.1 authorization-code flow (PKCE) done with curl.
{ self, pkgs }:
let
  common = import ./lib/common.nix { inherit self pkgs; };
  claudeToken = "claude-0123456789abcdef0123456789abcdef";
  readerToken = "reader-0123456789abcdef0123456789abcdef";
in
pkgs.testers.runNixOSTest {
  name = "quire-auth";

  nodes.server = {
    imports = [ common.node ];
    networking.firewall.allowedTCPPorts = [ 80 ];
    services.quire = {
      enable = true;
      vault.path = "/srv/notes";
      publicUrl = "http://notes.test";
      # No ACME in a VM without internet: the proxy serves plain HTTP.
      proxy.acme = false;
      identities = {
        claude = { tokenFile = "/run/keys/quire-claude"; write = [ "Inbox/" ]; };
        reader = { tokenFile = "/run/keys/quire-reader"; deny = [ "Private/" ]; };
      };
      acl.alwaysDeny = [ "Secrets/" ];
    };
    systemd.tmpfiles.rules = [
      "d /run/keys 0750 root root -"
      "f /run/keys/quire-claude 0400 root root - ${claudeToken}"
      "f /run/keys/quire-reader 0400 root root - ${readerToken}"
      "f /srv/notes/Private/Diary.md 0660 quire quire - private words"
      "f /srv/notes/Secrets/Keys.md 0660 quire quire - secret words"
      "f /srv/notes/Projects/Plan.md 0660 quire quire - the plan"
    ];
  };

  nodes.client = {
    environment.systemPackages = [ common.mcpCall pkgs.curl pkgs.jq pkgs.openssl ];
    networking.hosts."192.168.1.2" = [ "notes.test" ];
  };

  testScript = ''
    import json

    url = "http://notes.test/mcp"

    start_all()
    server.wait_for_unit("nginx.service")
    server.wait_for_unit("quire.socket")
    client.wait_for_unit("multi-user.target")

    def call(token, tool, arguments, expect_error=False):
        command = f"mcp-call {url} {token} {tool} '{json.dumps(arguments)}'"
        if expect_error:
            return client.fail(command)
        return json.loads(client.succeed(command))

    with subtest("No token: 401 with the resource metadata, never 403"):
        headers = client.succeed(
            "curl -s -o /dev/null -D - -X POST -H 'Content-Type: application/json' -d '{}' " + url
        )
        assert " 401" in headers.splitlines()[0], headers
        assert "resource_metadata=" in headers, headers
        client.succeed("curl -sf http://notes.test/.well-known/oauth-protected-resource | jq -e .resource")

    with subtest("A wrong Host is refused even with a token"):
        client.fail(f"curl -sf -H 'Host: evil.test' -H 'Authorization: Bearer ${claudeToken}' http://192.168.1.2/mcp -d '{{}}'")

    with subtest("claude writes in Inbox/ only"):
        call("${claudeToken}", "vault_write_note", {"path": "Inbox/Idea.md", "body": "an idea\n"})
        call("${claudeToken}", "vault_write_note", {"path": "Projects/New.md", "body": "no\n"}, expect_error=True)
        server.succeed("test -f /srv/notes/Inbox/Idea.md")
        server.fail("test -e /srv/notes/Projects/New.md")

    with subtest("reader reads, never writes, and cannot see denied notes"):
        call("${readerToken}", "vault_read_note", {"path": "Projects/Plan.md"})
        call("${readerToken}", "vault_write_note", {"path": "Inbox/X.md", "body": "no\n"}, expect_error=True)
        denied = call("${readerToken}", "vault_read_note", {"path": "Private/Diary.md"}, expect_error=True)
        assert denied.startswith("not_found"), denied
        listed = call("${readerToken}", "vault_list_notes", {})
        paths = [note["path"] for note in listed["notes"]]
        assert "Private/Diary.md" not in paths and "Secrets/Keys.md" not in paths, paths

    with subtest("always_deny beats every identity's rules"):
        denied = call("${claudeToken}", "vault_read_note", {"path": "Secrets/Keys.md"}, expect_error=True)
        assert denied.startswith("not_found"), denied

    with subtest("OAuth: discovery, registration, authorization code with PKCE, token, MCP call"):
        resource = json.loads(client.succeed("curl -sf http://notes.test/.well-known/oauth-protected-resource/mcp"))
        issuer = resource["authorization_servers"][0]
        metadata = json.loads(client.succeed(f"curl -sf {issuer}/.well-known/oauth-authorization-server"))
        assert "S256" in metadata["code_challenge_methods_supported"], metadata
        # On by default; with identities the module then gives the service outbound network.
        assert metadata["client_id_metadata_document_supported"] is True, metadata
        assert server.succeed("systemctl show quire.service -p PrivateNetwork --value").strip() == "no"
        client_id = json.loads(client.succeed(
            f"curl -sf -X POST -H 'Content-Type: application/json' {metadata['registration_endpoint']} "
            "-d '{\"client_name\":\"vm-test\",\"redirect_uris\":[\"http://127.0.0.1:9/callback\"],"
            "\"token_endpoint_auth_method\":\"none\",\"grant_types\":[\"authorization_code\"]}'"
        ))["client_id"]
        verifier = client.succeed("openssl rand -hex 32").strip()
        challenge = client.succeed(
            f"printf %s {verifier} | openssl dgst -sha256 -binary | openssl base64 -A | tr '+/' '-_' | tr -d '='"
        ).strip()
        # The resource owner approves by presenting an identity's token on the consent form; the
        # authorization then acts as that identity (the JWT's subject).
        location = client.succeed(
            f"curl -s -o /dev/null -w '%{{redirect_url}}' -X POST {metadata['authorization_endpoint']} "
            f"--data-urlencode response_type=code --data-urlencode client_id={client_id} "
            "--data-urlencode redirect_uri=http://127.0.0.1:9/callback "
            f"--data-urlencode code_challenge={challenge} --data-urlencode code_challenge_method=S256 "
            f"--data-urlencode resource=http://notes.test/mcp --data-urlencode state=xyz "
            "--data-urlencode decision=allow --data-urlencode token=${claudeToken}"
        ).strip()
        assert "state=xyz" in location, location
        code = [part.split("=", 1)[1] for part in location.split("?", 1)[1].split("&") if part.startswith("code=")][0]
        access = json.loads(client.succeed(
            f"curl -sf -X POST {metadata['token_endpoint']} --data-urlencode grant_type=authorization_code "
            f"--data-urlencode code={code} --data-urlencode client_id={client_id} "
            f"--data-urlencode code_verifier={verifier} --data-urlencode redirect_uri=http://127.0.0.1:9/callback "
            "--data-urlencode resource=http://notes.test/mcp"
        ))["access_token"]
        call(access, "vault_write_note", {"path": "Inbox/Via-OAuth.md", "body": "hello\n"})
        call(access, "vault_write_note", {"path": "Projects/Via-OAuth.md", "body": "no\n"}, expect_error=True)
  '';
}
