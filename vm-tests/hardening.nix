# The sandbox is real: systemd-analyze's exposure score stays under the threshold, the unit carries
# the hardening block from nixos/unit-settings.nix, and landlock is enforced (sandbox = "required"
# refuses to start otherwise). Removing any of them fails this test.
{ self, pkgs }:
let
  common = import ./lib/common.nix { inherit self pkgs; };
  # systemd-analyze security --threshold takes the exposure times ten: 20 means "2.0 OK" or better.
  threshold = 20;
in
pkgs.testers.runNixOSTest {
  name = "quire-hardening";

  nodes.machine = {
    imports = [ common.node ];
    environment.systemPackages = [ common.mcpCall ];
    services.quire = {
      enable = true;
      vault.path = "/srv/notes";
      sandbox = "required";
    };
    systemd.tmpfiles.rules = [ "f /srv/notes/Note.md 0660 quire quire - hello" ];
  };

  testScript = ''
    machine.wait_for_unit("quire.socket")
    machine.succeed("curl -sf http://127.0.0.1:8787/healthz")
    machine.wait_for_unit("quire.service")

    with subtest("Exposure score under the threshold"):
        print(machine.succeed("systemd-analyze security quire.service --no-pager"))
        machine.succeed("systemd-analyze security quire.service --threshold=${toString threshold} --no-pager")

    with subtest("The hardening block is in the running unit"):
        for key, value in [
            ("DynamicUser", "yes"), ("ProtectSystem", "strict"), ("ProtectHome", "yes"),
            ("PrivateNetwork", "yes"), ("NoNewPrivileges", "yes"), ("MemoryDenyWriteExecute", "yes"),
            ("RestrictNamespaces", "yes"), ("PrivateUsers", "yes"), ("UMask", "0077"),
            ("CapabilityBoundingSet", ""),
        ]:
            shown = machine.succeed(f"systemctl show quire.service -p {key} --value").strip()
            assert shown == value, f"{key}={shown!r}, expected {value!r}"

    with subtest("Landlock is enforced: with sandbox = required Quire only runs when it is"):
        machine.succeed("systemctl is-active --quiet quire.service")
        print(machine.succeed("journalctl -u quire.service -o cat | grep -i sandbox"))

    with subtest("The service has no network but its socket"):
        pid = machine.succeed("systemctl show quire.service -p MainPID --value").strip()
        links = machine.succeed(f"nsenter -t {pid} -n ip -o link show").strip().splitlines()
        assert len(links) == 1 and " lo:" in links[0], links
  '';
}
