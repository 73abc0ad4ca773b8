# Loose declarations for the options vm-tests/ nodes set that nixos/module.nix never touches
# (packages, VM sizes, /etc/hosts, the git daemon of the sync test), so the nodes evaluate as
# written. The module's own options are typed in stand-ins.nix; these only need to exist.
{ lib, ... }:
let
  loose = lib.mkOption {
    type = lib.types.attrsOf lib.types.anything;
    default = { };
    description = "Not used by the module: accepted as written.";
  };
in
{
  options = {
    environment.systemPackages = lib.mkOption {
      type = lib.types.listOf lib.types.package;
      default = [ ];
      description = "Packages in the system profile.";
    };
    virtualisation = loose;
    networking.hosts = loose;
    services.gitDaemon = loose;
  };
}
