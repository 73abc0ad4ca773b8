# The NixOS host configuration tests/systemd/run boots in systemd-nspawn: its units, users and
# tmpfiles come from nixos/module.nix evaluated through nixpkgs' module system (tests/nix/eval.nix,
# attribute `nspawn`), rendered as NixOS writes them. tests/nix/check evaluates it too.
{
  services.quire = {
    enable = true;
    vault.path = "/srv/vault";
    sandbox = "required";
    # Short, so the watchdog test does not wait long.
    watchdogSec = 3;
    # The build step that runs `quire check-config` cannot run without nixpkgs; tests/systemd/run
    # runs the same check on the generated file before it boots.
    validateConfig = false;
    environment.QUIRE_TEST_GREETING = "hello wide world";
  };
}
