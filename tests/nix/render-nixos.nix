# Renders the systemd units of an evaluated host configuration into unit files the way NixOS does
# (nixos/lib/systemd-lib.nix: attrsToSection, serviceToUnit, socketToUnit, timerToUnit): true and
# false as "true"/"false", a list as one line per item, each environment variable as one
# JSON-quoted Environment= line, no [Install] section (NixOS links wantedBy into .wants/ instead).
# Returns { "<name>.<type>" = { text; wantedBy; requiredBy; }; } for every enabled unit.
{ lib }:
config:
let
  toOption = value:
    if value == true then "true"
    else if value == false then "false"
    else toString value;
  attrsToSection = attrs: lib.concatStrings (lib.concatLists (lib.mapAttrsToList
    (name: value: map (item: "${name}=${toOption item}\n") (if lib.isList value then value else [ value ]))
    attrs));
  unitText = def: sections: "[Unit]\n${attrsToSection def.unitConfig}\n" + sections;
  serviceText = name: def:
    let
      environment = lib.filterAttrs (_: value: value != null) def.environment;
    in
    unitText def (''
      [Service]
    ''
    + lib.concatStrings (lib.mapAttrsToList (key: value: "Environment=${builtins.toJSON "${key}=${toString value}"}\n") environment)
    + lib.optionalString def.reloadIfChanged "X-ReloadIfChanged=true\n"
    + lib.optionalString (!def.reloadIfChanged && !def.restartIfChanged) "X-RestartIfChanged=false\n"
    + lib.optionalString (!def.stopIfChanged) "X-StopIfChanged=false\n"
    + attrsToSection def.serviceConfig
    + lib.optionalString (def.script != "" || def.preStart != "" || def.startAt != [ ])
      (throw "render-nixos.nix does not render script, preStart or startAt (service ${name}); add them here first"));
  socketText = _: def: unitText def (''
    [Socket]
  ''
  + attrsToSection def.socketConfig
  + lib.concatMapStrings (stream: "ListenStream=${stream}\n") def.listenStreams
  + lib.concatMapStrings (datagram: "ListenDatagram=${datagram}\n") def.listenDatagrams);
  timerText = _: def: unitText def (''
    [Timer]
  ''
  + attrsToSection def.timerConfig);
  units = suffix: text: defs: lib.mapAttrs'
    (name: def: lib.nameValuePair "${name}.${suffix}" {
      text = text name def;
      inherit (def) wantedBy requiredBy;
    })
    (lib.filterAttrs (_: def: def.enable) defs);
in
units "service" serviceText config.systemd.services
// units "socket" socketText config.systemd.sockets
  // units "timer" timerText config.systemd.timers
