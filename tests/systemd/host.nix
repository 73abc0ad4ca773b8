# The NixOS host configuration tests/systemd/run boots in systemd-nspawn: its units, users and
# tmpfiles come from nixos/module.nix evaluated through nixpkgs' module system (tests/nix/eval.nix,
# attribute `nspawn`), rendered as NixOS writes them. tests/nix/check evaluates it too.
{
  networking.hostName = "nspawn";
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
    # The git backend against a local bare repository (tests/systemd/run creates it empty); the
    # test triggers rounds by hand.
    sync = {
      backend = "git";
      git.remote = "/srv/remote.git";
      git.interval = "1h";
    };
  };
  # The "remote" is a local folder, which the sync units' sandbox must let them write; the lists
  # add to the module's ReadWritePaths (systemd list settings merge).
  systemd.services.quire-first-sync.serviceConfig.ReadWritePaths = [ "/srv/remote.git" ];
  systemd.services.quire-sync.serviceConfig.ReadWritePaths = [ "/srv/remote.git" ];
}
