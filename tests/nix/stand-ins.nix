# Typed stand-ins for the NixOS options nixos/module.nix sets or reads, declared as nixpkgs 25.11
# declares them (nixos/lib/systemd-unit-options.nix, systemd-lib.nix, the tmpfiles, users, nginx,
# caddy, syncthing, acme and firewall modules), so that lib.evalModules checks the module's
# definitions with the same types and merges a NixOS host would: a list-valued unit setting
# defined twice is concatenated, a scalar defined twice with different values is a conflict, a
# wrong type is an error. Only what the module touches is declared; nothing is built.
#
# The `config` part adds what NixOS itself adds to every service (a PATH made from `path`,
# X-Restart-Triggers), so the units rendered by tests/nix/render-nixos.nix are the files NixOS
# would write. `pkgs` is tests/nix/pkgs.nix, fake derivations with store-like paths.
{ lib, config, pkgs, ... }:
let
  inherit (lib) mkOption types;

  # nixpkgs' `unitOption`: list definitions concatenate (repeatable settings such as
  # ReadWritePaths=), scalars must agree, and a mix of the two is an error.
  unitOption = lib.mkOptionType {
    name = "systemd option";
    description = "systemd option";
    merge = loc: defs:
      let
        defs' = lib.filterOverrides defs;
      in
      if lib.isList (lib.head defs').value then
        lib.concatMap
          (def:
            if lib.isList def.value then def.value
            else throw "The definitions for systemd unit options should be either all lists or all non-lists, but for ${lib.showOption loc} they are a mix ${lib.options.showDefs defs'}")
          defs'
      else lib.mergeEqualOption loc defs';
  };
  # systemd-lib's checkUnitConfig: every value is a bool, int, string, path or a list of those.
  settingValue = value:
    lib.isBool value || lib.isInt value || lib.isString value || lib.isPath value
    || lib.isStringLike value || lib.isList value && lib.all settingValue value;
  # The check runs on each definition before merging, so mkDefault/mkIf wrappers are unwrapped
  # first, as checkUnitConfig does.
  unwrap = value: if lib.elem (value._type or "") [ "override" "if" ] then unwrap value.content else value;
  checkSection = section: attrs:
    let
      wrong = lib.filter (name: !settingValue (unwrap attrs.${name})) (lib.attrNames attrs);
    in
    wrong == [ ] || throw "${section} has values that are not bool, int, string or list: ${toString wrong}";
  sectionOption = section: mkOption {
    default = { };
    type = types.addCheck (types.attrsOf unitOption) (checkSection section);
    description = "Settings of the [${section}] section.";
  };
  serviceTypes = [ "exec" "simple" "forking" "oneshot" "dbus" "notify" "notify-reload" "idle" ];

  unitNames = mkOption { default = [ ]; type = types.listOf types.str; description = "Unit names."; };

  commonUnit = { name, config, options, ... }: {
    options = {
      enable = mkOption { type = types.bool; default = true; description = "Install the unit."; };
      description = mkOption { type = types.singleLineStr; default = ""; description = "Description=."; };
      documentation = mkOption { type = types.listOf types.str; default = [ ]; description = "Documentation=."; };
      wantedBy = unitNames;
      requiredBy = unitNames;
      requires = unitNames;
      wants = unitNames;
      after = unitNames;
      before = unitNames;
      bindsTo = unitNames;
      partOf = unitNames;
      conflicts = unitNames;
      requisite = unitNames;
      onFailure = unitNames;
      onSuccess = unitNames;
      upholds = unitNames;
      unitConfig = sectionOption "Unit";
      restartTriggers = mkOption { type = types.listOf types.unspecified; default = [ ]; description = "Restart when these change."; };
      reloadTriggers = mkOption { type = types.listOf unitOption; default = [ ]; description = "Reload when these change."; };
      startLimitBurst = mkOption { type = types.int; description = "StartLimitBurst=."; };
      startLimitIntervalSec = mkOption { type = types.int; description = "StartLimitIntervalSec=."; };
    };
    # systemd-lib's unitConfig: the list options become one space-separated [Unit] setting each,
    # so a module that sets both `after` and unitConfig.After gets a conflict, as on NixOS.
    config.unitConfig =
      let
        listed = option: key: lib.optionalAttrs (config.${option} != [ ]) { ${key} = toString config.${option}; };
      in
      listed "requires" "Requires" // listed "wants" "Wants" // listed "upholds" "Upholds"
      // listed "after" "After" // listed "before" "Before" // listed "bindsTo" "BindsTo"
      // listed "partOf" "PartOf" // listed "conflicts" "Conflicts" // listed "requisite" "Requisite"
      // listed "documentation" "Documentation" // listed "onFailure" "OnFailure" // listed "onSuccess" "OnSuccess"
      // lib.optionalAttrs (config.description != "") { Description = config.description; }
      // lib.optionalAttrs options.startLimitIntervalSec.isDefined { StartLimitIntervalSec = toString config.startLimitIntervalSec; }
      // lib.optionalAttrs options.startLimitBurst.isDefined { StartLimitBurst = toString config.startLimitBurst; }
      # nixos/modules/system/boot/systemd.nix: a hash of restartTriggers, so a change restarts the unit.
      // lib.optionalAttrs (config.restartTriggers != [ ]) {
        X-Restart-Triggers = "/nix/store/${builtins.substring 0 32 (builtins.hashString "sha256" (toString config.restartTriggers))}-X-Restart-Triggers-${name}";
      };
  };

  serviceUnit = { config, ... }: {
    imports = [ commonUnit ];
    options = {
      environment = mkOption {
        type = types.attrsOf (types.nullOr (types.oneOf [ types.str types.path types.package ]));
        default = { };
        description = "Environment variables (one quoted Environment= line each).";
      };
      path = mkOption {
        type = types.listOf (types.oneOf [ types.package types.str ]);
        default = [ ];
        description = "Packages whose bin/ and sbin/ go on PATH.";
      };
      serviceConfig = mkOption {
        default = { };
        type = types.addCheck (types.attrsOf unitOption) (attrs:
          checkSection "Service" attrs
          && (!(attrs ? Type) || lib.elem (unwrap attrs.Type) serviceTypes || throw "Type=${unwrap attrs.Type} is not a service type")
          && (!(attrs ? Restart) || lib.elem (unwrap attrs.Restart) [ "no" "on-success" "on-failure" "on-abnormal" "on-abort" "on-watchdog" "always" ]
          || throw "Restart=${unwrap attrs.Restart} is not a restart policy"));
        description = "Settings of the [Service] section.";
      };
      script = mkOption { type = types.lines; default = ""; description = "Main process as a script."; };
      preStart = mkOption { type = types.lines; default = ""; description = "ExecStartPre= as a script."; };
      startAt = mkOption {
        type = types.either types.str (types.listOf types.str);
        default = [ ];
        apply = value: if lib.isList value then value else [ value ];
        description = "OnCalendar= of a timer NixOS adds.";
      };
      restartIfChanged = mkOption { type = types.bool; default = true; description = "Restart on switch."; };
      reloadIfChanged = mkOption { type = types.bool; default = false; description = "Reload on switch."; };
      stopIfChanged = mkOption { type = types.bool; default = true; description = "Stop, then start on switch."; };
    };
    # What nixos/modules/system/boot/systemd.nix adds to every service.
    config = {
      path = lib.mkAfter (map (name: pkgs.${name}) [ "coreutils" "findutils" "gnugrep" "gnused" "systemd" ]);
      environment.PATH = "${lib.makeBinPath config.path}:${lib.makeSearchPathOutput "bin" "sbin" config.path}";
    };
  };

  socketUnit = {
    imports = [ commonUnit ];
    options = {
      listenStreams = mkOption { type = types.listOf types.str; default = [ ]; description = "ListenStream= entries."; };
      listenDatagrams = mkOption { type = types.listOf types.str; default = [ ]; description = "ListenDatagram= entries."; };
      socketConfig = sectionOption "Socket";
    };
  };

  timerUnit = {
    imports = [ commonUnit ];
    options.timerConfig = sectionOption "Timer";
  };

  tmpfilesEntry = { name, ... }: {
    options = {
      type = mkOption { type = types.str; default = name; description = "The tmpfiles type (d, f, L, ...)."; };
      mode = mkOption { type = types.str; default = "-"; description = "Mode."; };
      user = mkOption { type = types.str; default = "-"; description = "Owner."; };
      group = mkOption { type = types.str; default = "-"; description = "Group."; };
      age = mkOption { type = types.str; default = "-"; description = "Age."; };
      argument = mkOption { type = types.str; default = ""; description = "Argument."; };
    };
  };

  user = { name, ... }: {
    options = {
      name = mkOption { type = types.passwdEntry types.str; default = name; description = "User name."; };
      isSystemUser = mkOption { type = types.bool; default = false; description = "A system user."; };
      isNormalUser = mkOption { type = types.bool; default = false; description = "A normal user."; };
      group = mkOption { type = types.str; default = ""; description = "Primary group."; };
      extraGroups = mkOption { type = types.listOf types.str; default = [ ]; description = "Further groups."; };
      description = mkOption { type = types.passwdEntry types.str; default = ""; description = "GECOS."; };
      home = mkOption { type = types.passwdEntry types.path; default = "/var/empty"; description = "Home directory."; };
      createHome = mkOption { type = types.bool; default = false; description = "Create the home directory."; };
      uid = mkOption { type = types.nullOr types.int; default = null; description = "UID."; };
    };
  };

  nginxLocation = {
    options = {
      proxyPass = mkOption { type = types.nullOr types.str; default = null; description = "proxy_pass."; };
      proxyWebsockets = mkOption { type = types.bool; default = false; description = "WebSocket headers."; };
      recommendedProxySettings = mkOption { type = types.bool; default = config.services.nginx.recommendedProxySettings; description = "Proxy headers."; };
      extraConfig = mkOption { type = types.lines; default = ""; description = "Location directives."; };
      return = mkOption { type = types.nullOr (types.oneOf [ types.str types.int ]); default = null; description = "return."; };
    };
  };
  nginxVirtualHost = {
    options = {
      forceSSL = mkOption { type = types.bool; default = false; description = "Redirect to https."; };
      addSSL = mkOption { type = types.bool; default = false; description = "Also serve https."; };
      enableACME = mkOption { type = types.bool; default = false; description = "Certificate from ACME."; };
      useACMEHost = mkOption { type = types.nullOr types.str; default = null; description = "Another host's certificate."; };
      serverAliases = mkOption { type = types.listOf types.str; default = [ ]; description = "Aliases."; };
      locations = mkOption { type = types.attrsOf (types.submodule nginxLocation); default = { }; description = "Locations."; };
      extraConfig = mkOption { type = types.lines; default = ""; description = "Server directives."; };
    };
  };
  caddyVirtualHost = { name, ... }: {
    options = {
      hostName = mkOption { type = types.str; default = name; description = "Site address."; };
      serverAliases = mkOption { type = types.listOf types.str; default = [ ]; description = "Aliases."; };
      extraConfig = mkOption { type = types.lines; default = ""; description = "Site directives."; };
      logFormat = mkOption { type = types.lines; default = ""; description = "Log directive."; };
    };
  };

  # services.syncthing.settings is freeform JSON-like data with typed folders and devices.
  jsonValue = types.nullOr (types.oneOf [ types.bool types.int types.float types.str types.path (types.attrsOf jsonValue) (types.listOf jsonValue) ]) // {
    description = "JSON value";
  };
  syncthingFolder = { name, ... }: {
    freeformType = types.attrsOf jsonValue;
    options = {
      enable = mkOption { type = types.bool; default = true; description = "Share the folder."; };
      path = mkOption { type = types.str; default = name; description = "Folder path."; };
      id = mkOption { type = types.str; default = name; description = "Folder ID."; };
      label = mkOption { type = types.str; default = name; description = "Label."; };
      type = mkOption { type = types.enum [ "sendreceive" "sendonly" "receiveonly" "receiveencrypted" ]; default = "sendreceive"; description = "Folder type."; };
      devices = mkOption { type = types.listOf types.str; default = [ ]; description = "Device names."; };
      versioning = mkOption {
        type = types.nullOr (types.submodule {
          freeformType = types.attrsOf jsonValue;
          options.type = mkOption { type = types.enum [ "external" "simple" "staggered" "trashcan" ]; description = "Versioning type."; };
        });
        default = null;
        description = "File versioning.";
      };
      copyOwnershipFromParent = mkOption { type = types.bool; default = false; description = "Copy owner from parent."; };
    };
  };
in
{
  options = {
    assertions = mkOption {
      type = types.listOf types.unspecified;
      internal = true;
      default = [ ];
      description = "Conditions that must hold, each { assertion; message; }.";
    };
    warnings = mkOption {
      type = types.listOf types.str;
      internal = true;
      default = [ ];
      description = "Messages shown at build time.";
    };

    networking.hostName = mkOption { type = types.strMatching "^$|^[[:alnum:]]([[:alnum:]_-]{0,61}[[:alnum:]])?$"; default = "nixos"; description = "Host name."; };
    networking.firewall = {
      enable = mkOption { type = types.bool; default = true; description = "The firewall."; };
      allowedTCPPorts = mkOption { type = types.listOf types.port; default = [ ]; apply = lib.unique; description = "Open TCP ports."; };
      allowedUDPPorts = mkOption { type = types.listOf types.port; default = [ ]; apply = lib.unique; description = "Open UDP ports."; };
    };

    systemd.services = mkOption { type = types.attrsOf (types.submodule serviceUnit); default = { }; description = "Services."; };
    systemd.sockets = mkOption { type = types.attrsOf (types.submodule socketUnit); default = { }; description = "Sockets."; };
    systemd.timers = mkOption { type = types.attrsOf (types.submodule timerUnit); default = { }; description = "Timers."; };
    systemd.tmpfiles.rules = mkOption { type = types.listOf types.str; default = [ ]; description = "tmpfiles.d lines."; };
    systemd.tmpfiles.settings = mkOption {
      type = types.attrsOf (types.attrsOf (types.attrsOf (types.submodule tmpfilesEntry)));
      default = { };
      description = "tmpfiles.d entries: file name, path, type.";
    };

    users.users = mkOption { type = types.attrsOf (types.submodule user); default = { }; description = "Users."; };
    users.groups = mkOption {
      type = types.attrsOf (types.submodule ({ name, ... }: {
        options.name = mkOption { type = types.passwdEntry types.str; default = name; description = "Group name."; };
        options.gid = mkOption { type = types.nullOr types.int; default = null; description = "GID."; };
        options.members = mkOption { type = types.listOf (types.passwdEntry types.str); default = [ ]; description = "Members."; };
      }));
      default = { };
      description = "Groups.";
    };

    services.nginx = {
      enable = mkOption { type = types.bool; default = false; description = "nginx."; };
      recommendedTlsSettings = mkOption { type = types.bool; default = false; description = "TLS settings."; };
      recommendedGzipSettings = mkOption { type = types.bool; default = false; description = "gzip settings."; };
      recommendedProxySettings = mkOption { type = types.bool; default = false; description = "Proxy settings."; };
      virtualHosts = mkOption { type = types.attrsOf (types.submodule nginxVirtualHost); default = { }; description = "Virtual hosts."; };
    };
    services.caddy = {
      enable = mkOption { type = types.bool; default = false; description = "Caddy."; };
      email = mkOption { type = types.nullOr types.str; default = null; description = "ACME account e-mail."; };
      virtualHosts = mkOption { type = types.attrsOf (types.submodule caddyVirtualHost); default = { }; description = "Sites."; };
    };
    services.syncthing = {
      enable = mkOption { type = types.bool; default = false; description = "Syncthing."; };
      user = mkOption { type = types.str; default = "syncthing"; description = "Syncthing's user."; };
      group = mkOption { type = types.str; default = "syncthing"; description = "Syncthing's group."; };
      dataDir = mkOption { type = types.path; default = "/var/lib/syncthing"; description = "Data directory."; };
      configDir = mkOption { type = types.path; default = "${config.services.syncthing.dataDir}/.config/syncthing"; description = "Where config.xml is."; };
      guiAddress = mkOption { type = types.str; default = "127.0.0.1:8384"; description = "The GUI and REST API address."; };
      settings = mkOption {
        type = types.submodule {
          freeformType = types.attrsOf jsonValue;
          options.folders = mkOption { type = types.attrsOf (types.submodule syncthingFolder); default = { }; description = "Folders."; };
          options.devices = mkOption {
            type = types.attrsOf (types.submodule {
              freeformType = types.attrsOf jsonValue;
              options.id = mkOption { type = types.str; description = "Device ID."; };
            });
            default = { };
            description = "Devices.";
          };
        };
        default = { };
        description = "Syncthing's settings.";
      };
    };

    security.acme = {
      acceptTerms = mkOption { type = types.bool; default = false; description = "Accept the CA's terms."; };
      defaults.email = mkOption { type = types.nullOr types.str; default = null; description = "ACME account e-mail."; };
      certs = mkOption { type = types.attrsOf (types.attrsOf types.anything); default = { }; description = "Certificates."; };
    };
  };
}
