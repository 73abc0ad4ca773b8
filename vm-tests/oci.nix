# The OCI image loads into Docker, runs as an unprivileged user, answers /healthz, and Docker's
# own health check (the one baked into the image) reports healthy.
{ self, pkgs }:
let
  image = self.packages.${pkgs.stdenv.hostPlatform.system}.oci;
in
pkgs.testers.runNixOSTest {
  name = "quire-oci";

  nodes.machine = {
    virtualisation.docker.enable = true;
    virtualisation.diskSize = 4096;
    virtualisation.memorySize = 1024;
    environment.systemPackages = [ pkgs.curl pkgs.jq ];
  };

  testScript = ''
    machine.wait_for_unit("docker.service")
    machine.succeed("docker load < ${image}")
    machine.succeed("mkdir -p /srv/notes && echo 'hello' > /srv/notes/Hello.md && chown -R 65534:65534 /srv/notes")
    machine.succeed(
        "docker run -d --name quire -p 127.0.0.1:8787:8787 -v /srv/notes:/vault ${image.imageName}:${image.imageTag}"
    )

    with subtest("/healthz answers"):
        machine.wait_until_succeeds("curl -sf http://127.0.0.1:8787/healthz | jq -e '.status == \"ok\"'", timeout=60)

    with subtest("Docker's health check passes"):
        machine.wait_until_succeeds("docker inspect -f '{{.State.Health.Status}}' quire | grep -x healthy", timeout=120)

    with subtest("Not root, and quire only"):
        user = machine.succeed("docker inspect -f '{{.Config.User}}' quire").strip()
        assert user == "65534:65534", user
        machine.fail("docker exec quire sh -c true")

    with subtest("A token is required off loopback"):
        machine.succeed(
            "curl -s -o /dev/null -w '%{http_code}' -X POST http://127.0.0.1:8787/mcp -d '{}' | grep -x 401"
        )
  '';
}
