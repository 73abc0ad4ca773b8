# Proves, with builtins only, that the units nixos/module.nix creates are nixos/unit-settings.nix's:
#   - the default instance (quire.socket, quire.service) gets exactly unit-settings.nix's data
#     (how NixOS then writes it, with its own additions, is compared in tests/nix/scenarios.py);
#   - a named instance with its own user differs only in the keys instance-units.nix declares.
# `args` are the arguments the module passes (see `units` in nixos/module.nix).
# Returns { defaultIdentical; named = { key = "section.Key"; same = bool; } list; rendered }.
{ args }:
let
  shared = builtins.removeAttrs args [ "unitName" "user" "group" "supplementaryGroups" "umask" "after" "wants" "requires" ];
  base = import ../../nixos/unit-settings.nix shared;
  defaultInstance = import ../../nixos/instance-units.nix { args = shared; };
  named = import ../../nixos/instance-units.nix {
    args = args // {
      unitName = "quire-work";
      user = "quire-work";
      group = "quire-work";
      umask = "0007";
      after = [ "quire-work-sync.service" ];
    };
  };
  compare = unit: section:
    let
      overridden = named.overridden.${unit}.${section} or [ ];
      keys = builtins.attrNames (base.${unit}.${section} // named.${unit}.${section});
    in
    map
      (key: {
        key = "${unit}.${section}.${key}";
        same = overridden != [ ] && builtins.elem key overridden
          || (base.${unit}.${section}.${key} or null) == (named.${unit}.${section}.${key} or null);
      })
      keys;
in
{
  defaultIdentical = defaultInstance.socket == base.socket && defaultInstance.service == base.service;
  named = compare "socket" "Unit" ++ compare "socket" "Socket" ++ compare "socket" "Install"
    ++ compare "service" "Unit" ++ compare "service" "Service" ++ compare "service" "Install";
  rendered = (import ../../nixos/render-units.nix { args = shared; });
}
