# Hosts that import nixos/module.nix, evaluated with nixpkgs' own module system (lib.evalModules
# from nixpkgs 25.11's lib/) against the typed stand-ins in stand-ins.nix. tests/nix/check
# evaluates each scenario on its own and checks the result with tests/nix/scenarios.py:
#   nix-instantiate --eval --strict --json tests/nix/eval.nix --arg nixpkgsLib ./target/nix/nixpkgs-lib/lib -A scenarios.default
# `meta` lists the scenarios and says which assertion each assertion scenario must fire.
{ nixpkgsLib, realFiles ? false, module ? ../../nixos/module.nix, documentedHostFile ? null }:
let
  lib = import nixpkgsLib;
  pkgs = import ./pkgs.nix { inherit lib realFiles; };
  renderUnits = import ./render-nixos.nix { inherit lib; };

  evalHost = modules: lib.evalModules {
    modules = [
      module
      ./stand-ins.nix
      ./vm-node-stand-ins.nix
      { _module.args.pkgs = pkgs; }
    ] ++ modules;
  };

  # What a scenario shows: failed assertions (with their positions, for the coverage check),
  # warnings, every unit as NixOS would write it, and the other options the module sets.
  summary = modules:
    let
      inherit (evalHost modules) config;
    in
    {
      assertionCount = lib.length config.assertions;
      failed = lib.concatLists (lib.imap0
        (index: assertion: lib.optional (!assertion.assertion) { inherit index; inherit (assertion) message; })
        config.assertions);
      inherit (config) warnings;
      units = renderUnits config;
      # The TOML text of each instance whose file is not validated at build time (the stand-in
      # for `quire check-config` keeps no text), by unit.
      configs = lib.mapAttrs (_: service: (lib.head service.restartTriggers).text)
        (lib.filterAttrs (_: service: service.restartTriggers != [ ] && (lib.head service.restartTriggers) ? text)
          config.systemd.services);
      # The same units as nixos/render-units.nix writes them off NixOS, from the settings the
      # evaluated module gave the default instance (scenarios.py compares the two).
      plainUnits = lib.optionalAttrs (config.systemd.services ? quire && config.systemd.sockets ? quire)
        (import ../../nixos/render-units.nix {
          args =
            let
              service = config.systemd.services.quire;
              settings = service.serviceConfig;
            in
            {
              execStart = settings.ExecStart;
              listen = config.systemd.sockets.quire.socketConfig.ListenStream;
              readWritePaths = settings.ReadWritePaths or [ ];
              readOnlyPaths = settings.ReadOnlyPaths or [ ];
              credentials = settings.LoadCredential or [ ];
              outboundNetwork = !settings.PrivateNetwork;
              watchdogSec = settings.WatchdogSec;
              environment = removeAttrs service.environment [ "PATH" ];
            };
        });
      users = lib.mapAttrs (_: user: { inherit (user) isSystemUser group extraGroups; }) config.users.users;
      groups = lib.attrNames config.users.groups;
      tmpfiles = config.systemd.tmpfiles.settings;
      firewall = config.networking.firewall.allowedTCPPorts;
      nginx = {
        inherit (config.services.nginx) enable;
        virtualHosts = lib.mapAttrs
          (_: host: {
            inherit (host) forceSSL enableACME;
            locations = lib.mapAttrs (_: location: { inherit (location) proxyPass recommendedProxySettings; }) host.locations;
          })
          config.services.nginx.virtualHosts;
      };
      caddy = {
        inherit (config.services.caddy) enable;
        virtualHosts = lib.mapAttrs (_: host: host.extraConfig) config.services.caddy.virtualHosts;
      };
      syncthing = {
        inherit (config.services.syncthing) enable;
        folders = lib.mapAttrs (_: folder: { inherit (folder) path devices; versioning = folder.versioning.type or null; }) config.services.syncthing.settings.folders;
      };
    };

  token = name: "/run/keys/quire-${name}";
  acme = {
    security.acme.acceptTerms = true;
    security.acme.defaults.email = "admin@example.org";
  };
  obsidianPackage = pkgs.callPackage ../../nixos/packages/obsidian-headless { };

  # The configurations a user writes.
  hosts = {
    not-enabled = [{ networking.hostName = "plain"; }];
    default = [{ services.quire.enable = true; }];
    auth-acme = [
      acme
      {
        services.quire = {
          enable = true;
          vault.path = "/srv/notes";
          publicUrl = "https://notes.example.org";
          identities = {
            claude = { tokenFile = token "claude"; write = [ "Inbox/" ]; };
            reader = { tokenFile = token "reader"; deny = [ "Private/" ]; };
          };
          acl.alwaysDeny = [ "Secrets/" ];
        };
      }
    ];
    # Every sync backend and both proxies at once, with a read-only instance.
    multi = [
      acme
      {
        services.syncthing.settings.devices.laptop.id = "AAAAAAA-BBBBBBB-CCCCCCC-DDDDDDD-EEEEEEE-FFFFFFF-GGGGGGG-HHHHHHH";
        services.quire = {
          enable = true;
          vault.path = "/srv/notes";
          publicUrl = "https://notes.example.org";
          identities.claude.tokenFile = token "claude";
          sync = { backend = "git"; git.remote = "git@git.example.org:me/notes.git"; git.sshKeyFile = "/run/keys/git"; };
          instances = {
            shared = {
              listen = "127.0.0.1:8788";
              vault.path = "/srv/shared";
              publicUrl = "https://shared.example.org";
              proxy.server = "caddy";
              identities.claude.tokenFile = token "shared";
              sync = { backend = "syncthing"; syncthing.devices = [ "laptop" ]; };
            };
            archive = {
              listen = "127.0.0.1:8789";
              vault.path = "/srv/archive";
              publicUrl = "http://archive.internal";
              proxy = { server = "caddy"; acme = false; };
              readOnly = true;
              identities.reader.tokenFile = token "archive";
              sync = { backend = "obsidian"; obsidian = { package = obsidianPackage; authTokenFile = "/run/keys/obsidian"; }; };
            };
            offline = {
              listen = "127.0.0.1:8790";
              vault.path = "/srv/offline";
              readOnly = true;
            };
            disabled = { enable = false; listen = "127.0.0.1:8787"; };
          };
        };
      }
    ];
    # Semantic search with the module's defaults: the MiniLM folder and ONNX Runtime 1.32.0.
    semantic = [{
      services.quire = {
        enable = true;
        search.embeddings = true;
        validateConfig = false;
      };
    }];
    # The git backend's protocol with Quire (docs/SYNC.md): first sync, lock, marker, status.
    git-sync = [{
      networking.hostName = "notes";
      services.quire = {
        enable = true;
        validateConfig = false;
        sync = {
          backend = "git";
          git = { remote = "git@git.example.org:me/notes.git"; knownHosts = "git.example.org ssh-ed25519 AAAAkey"; };
          onFailure = [ "notify-owner@%n.service" ];
        };
      };
    }];
    # A host overriding one of the module's unit settings the NixOS way.
    unit-setting-forced = [{
      services.quire.enable = true;
      systemd.services.quire.serviceConfig.TimeoutStopSec = lib.mkForce "1min";
    }];
    environment-space = [{
      services.quire = {
        enable = true;
        environment = { QUIRE_LOG = "debug"; GREETING = "hello wide world"; };
      };
    }];
  };

  # One host per assertion; each must fire exactly the assertion named by its `expect` (a part
  # of the message) and no other.
  single = settings: [{ services.quire = { enable = true; } // settings; }];
  assertionHosts = {
    listen-not-ip-port = {
      expect = "is not IP:PORT";
      host = single { listen = "localhost:8787"; identities.a.tokenFile = token "a"; };
    };
    listen-open-without-identities = {
      expect = "is reachable from the network, but";
      host = single { listen = "0.0.0.0:8787"; };
    };
    public-url-with-path = {
      expect = "must be http(s)://HOST with no path";
      host = single { publicUrl = "https://notes.example.org/mcp"; proxy.acme = false; };
    };
    proxy-without-public-url = {
      expect = "proxy.enable needs";
      host = single { proxy.enable = true; };
    };
    vault-relative = {
      expect = "must be an absolute path outside the Nix store";
      host = single { vault.path = "notes"; };
    };
    vault-under-home = {
      expect = "is under /home, /root or /run/user";
      host = single { vault.path = "/home/me/notes"; };
    };
    token-in-store = {
      expect = "tokenFile must be an absolute path outside the Nix store";
      host = single { identities.a.tokenFile = "/nix/store/00000000000000000000000000000000-token"; };
    };
    obsidian-without-package = {
      expect = "needs services.quire.sync.obsidian.package";
      host = single { sync.backend = "obsidian"; };
    };
    git-without-remote = {
      expect = "needs services.quire.sync.git.remote";
      host = single { sync.backend = "git"; };
    };
    git-remote-with-password = {
      expect = "has a password in it";
      host = single { sync = { backend = "git"; git.remote = "https://me:secret@git.example.org/notes.git"; }; };
    };
    syncthing-without-devices = {
      expect = "needs services.quire.sync.syncthing.devices";
      host = single { sync.backend = "syncthing"; };
    };
    acme-without-terms = {
      expect = "security.acme.acceptTerms = true";
      host = single { publicUrl = "https://notes.example.org"; };
    };
    embeddings-without-model = {
      expect = "search.embeddings needs";
      host = single { search = { embeddings = true; model = null; }; };
    };
    duplicate-listen = {
      expect = "several instances listen on";
      host = single { instances.two.vault.path = "/srv/two"; };
    };
    duplicate-host = {
      expect = "several instances use the public host";
      host = single {
        publicUrl = "http://notes.example.org";
        proxy.acme = false;
        instances.two = { listen = "127.0.0.1:8788"; vault.path = "/srv/two"; publicUrl = "http://notes.example.org"; proxy.acme = false; };
      };
    };
    duplicate-vault = {
      expect = "several instances serve the vault";
      host = single { vault.path = "/srv/notes"; instances.two = { listen = "127.0.0.1:8788"; vault.path = "/srv/notes"; }; };
    };
  };

  # The node configurations of every vm-tests/*.nix, as the tests declare them.
  self = {
    nixosModules.default = module;
    packages.x86_64-linux = {
      default = pkgs.quire;
      oci = pkgs.callPackage ../../nixos/packages/oci.nix { } // { imageName = "quire"; imageTag = "0.1.0"; };
    };
  };
  vmTestFiles = lib.attrNames (lib.filterAttrs (name: type: type == "regular" && lib.hasSuffix ".nix" name)
    (builtins.readDir ../../vm-tests));
  vmNodes = lib.listToAttrs (lib.concatMap
    (file:
      let
        test = import (../../vm-tests + "/${file}") { inherit self pkgs; };
      in
      lib.mapAttrsToList
        (node: module: lib.nameValuePair "vm-${lib.removeSuffix ".nix" file}-${node}" [ module ])
        test.nodes)
    vmTestFiles);

  # Hosts that must not evaluate, with a part of the error: the stand-ins merge like NixOS, so a
  # host that sets one of the module's scalar unit settings differently gets a conflict, and
  # lib.mkForce is the way to override it.
  errorHosts = {
    unit-setting-conflict = {
      expect = "conflicting definition values";
      host = [{ services.quire.enable = true; systemd.services.quire.serviceConfig.TimeoutStopSec = "1min"; }];
    };
  };

  allHosts = hosts // lib.mapAttrs (_: scenario: scenario.host) (assertionHosts // errorHosts) // vmNodes // {
    systemd-nspawn = [ ../systemd/host.nix ];
  };
in
{
  meta = {
    names = lib.attrNames allHosts;
    assertionScenarios = lib.mapAttrs (_: scenario: scenario.expect) assertionHosts;
    errorScenarios = lib.mapAttrs (_: scenario: scenario.expect) errorHosts;
    vmNodes = lib.attrNames vmNodes;
    # The keys in which an instance's units may differ from unit-settings.nix's.
    inherit ((import ../../nixos/instance-units.nix { args.execStart = ""; })) overridden;
  };
  scenarios = lib.mapAttrs (_: summary) allHosts;

  # The options reference (tests/nix/options-doc renders docs/nixos-options.md from it), as
  # nixosOptionsDoc collects it: every visible option under services.quire.
  options = map
    (option: {
      inherit (option) name description type;
      default = option.default.text or null;
      example = option.example.text or null;
    })
    (lib.filter (option: option.visible && !option.internal)
      (lib.optionAttrSetToDocList (evalHost [ ]).options.services.quire));

  # Host configurations docs/deployment.md shows, which tests/nix/check extracts and evaluates verbatim.
  documented = summary [ documentedHostFile ];

  # What tests/systemd/run boots (evaluate with realFiles = true, so the TOML file exists).
  nspawn =
    let
      inherit (evalHost [ ../systemd/host.nix ]) config;
    in
    {
      units = renderUnits config;
      # The TOML text of each instance whose file is not validated at build time (the stand-in
      # for `quire check-config` keeps no text), by unit.
      configs = lib.mapAttrs (_: service: (lib.head service.restartTriggers).text)
        (lib.filterAttrs (_: service: service.restartTriggers != [ ] && (lib.head service.restartTriggers) ? text)
          config.systemd.services);
      users = lib.mapAttrs (_: user: { inherit (user) group extraGroups description; }) config.users.users;
      groups = lib.attrNames config.users.groups;
      tmpfiles = config.systemd.tmpfiles.settings;
      failed = map (assertion: assertion.message) (lib.filter (assertion: !assertion.assertion) config.assertions);
    };

  # Proof that this harness sees the bug it exists for: a module whose top-level `config` is a
  # list that depends on `config` must not evaluate (tests/nix/check expects infinite recursion).
  canary = (evalHost [
    ({ config, lib, ... }: {
      config = lib.mkMerge (map (name: { warnings = [ name ]; }) (lib.attrNames config.services.quire.instances));
    })
    { services.quire.enable = true; }
  ]).config.warnings;
}
