# The units of one Quire instance: nixos/unit-settings.nix (the shared hardening block) with only
# the per-instance keys changed. nixos/module.nix builds every instance's units through this file,
# and tests/nix/check evaluates it with builtins only to prove that every other key (the whole
# hardening block) is exactly unit-settings.nix's, and (through nixpkgs' module system) that the
# units NixOS writes for the default instance are, setting by setting, the ones render-units.nix
# writes off NixOS, apart from what NixOS adds to every unit.
#
#   nix-instantiate --eval --strict --json nixos/instance-units.nix \
#     --arg args '{ unitName = "quire-work"; execStart = "..."; }'
{ args }:
let
  unitName = args.unitName or "quire";
  # What only the instance decides; everything else goes to unit-settings.nix untouched.
  perInstance = [ "unitName" "user" "group" "supplementaryGroups" "umask" "after" "wants" "requires" ];
  sharedArgs = builtins.removeAttrs args perInstance;
  base = import ./unit-settings.nix sharedArgs;

  optionalAttr = name: value: if value == null || value == [ ] then { } else { ${name} = value; };
  after = args.after or [ ];
  requires = args.requires or [ ];
  wants = args.wants or [ ];
in
{
  # The keys this file may change; the check script compares everything else with unit-settings.nix.
  overridden = {
    socket.Unit = [ "Description" ];
    socket.Socket = [ "Service" ];
    service.Unit = [ "Description" "Requires" "After" "Wants" ];
    service.Service = [ "StateDirectory" "User" "Group" "SupplementaryGroups" "UMask" ];
  };

  socket = base.socket // {
    Unit = base.socket.Unit // {
      Description =
        if unitName == "quire" then base.socket.Unit.Description
        else "Quire MCP server (socket, ${unitName})";
    };
    Socket = base.socket.Socket // { Service = "${unitName}.service"; };
  };

  service = base.service // {
    Unit = base.service.Unit // {
      Description =
        if unitName == "quire" then base.service.Unit.Description
        else "Quire MCP server for an Obsidian vault (${unitName})";
      Requires = [ "${unitName}.socket" ] ++ requires;
      After = [ "${unitName}.socket" ] ++ builtins.filter (unit: unit != "quire.socket") base.service.Unit.After ++ after;
    } // optionalAttr "Wants" wants;
    Service = base.service.Service // {
      StateDirectory = unitName;
    }
      # A static user of this name, when the host defines one, is used instead of a dynamic one
      # (systemd.exec(5), DynamicUser=): that is how the vault can be shared with a sync service.
      // optionalAttr "User" (args.user or null)
      // optionalAttr "Group" (args.group or null)
      // optionalAttr "SupplementaryGroups" (args.supplementaryGroups or [ ])
      // optionalAttr "UMask" (args.umask or null);
  };
}
