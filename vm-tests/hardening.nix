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
            ("CapabilityBoundingSet", ""), ("IPAddressDeny", "::/0 0.0.0.0/0"),
        ]:
            shown = machine.succeed(f"systemctl show quire.service -p {key} --value").strip()
            assert shown == value, f"{key}={shown!r}, expected {value!r}"

    with subtest("Landlock is enforced (sandbox = required started)"):
        machine.succeed("journalctl -u quire.service | grep -i sandbox | grep -iv 'not enforced'")

    with subtest("The service sees nothing outside its paths"):
        pid = machine.succeed("systemctl show quire.service -p MainPID --value").strip()
        machine.succeed(f"nsenter -t {pid} -m test ! -e /home/.")
        machine.fail(f"nsenter -t {pid} -m -n curl -s --max-time 3 http://example.org")
  '';
}
