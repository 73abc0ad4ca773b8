# Renders nixos/unit-settings.nix into systemd unit files with builtins only (no nixpkgs), for the
# offline tests:
#   nix-instantiate --eval --strict --json nixos/render-units.nix --arg args '{ execStart = "..."; }'
# returns { "quire.socket" = "<text>"; "quire.service" = "<text>"; }.
{ args }:
let
  settings = import ./unit-settings.nix args;
  render = value:
    if builtins.isBool value then (if value then "yes" else "no")
    else if builtins.isInt value then toString value
    else value;
  # A list becomes one line per element, as systemd reads repeated keys; an empty list or an empty
  # string is left out.
  renderKey = key: value:
    if builtins.isList value then map (item: "${key}=${render item}") value
    else if value == "" && key != "CapabilityBoundingSet" && key != "AmbientCapabilities" then [ ]
    else [ "${key}=${render value}" ];
  renderSection = name: keys:
    "[${name}]\n"
    + builtins.concatStringsSep "" (map (line: line + "\n")
        (builtins.concatLists (map (key: renderKey key keys.${key}) (builtins.attrNames keys))));
  # As NixOS does (systemd-lib.nix): one Environment= line per variable, the whole NAME=value
  # JSON-quoted, which systemd unquotes as one assignment even when the value has spaces.
  renderEnvironment = environment:
    builtins.concatStringsSep "" (map (name: "Environment=${builtins.toJSON "${name}=${environment.${name}}"}\n")
      (builtins.attrNames environment));
  renderUnit = unit:
    builtins.concatStringsSep "\n" (map
      (section: if section == "Service" && unit ? environment
        then builtins.replaceStrings [ "[Service]\n" ] [ "[Service]\n${renderEnvironment unit.environment}" ] (renderSection section unit.${section})
        else renderSection section unit.${section})
      (builtins.filter (s: builtins.hasAttr s unit) [ "Unit" "Socket" "Service" "Install" ]));
in
{
  "quire.socket" = renderUnit settings.socket;
  "quire.service" = renderUnit settings.service;
}
