# The systemd units of a Quire service, as plain data. The NixOS module (nixos/module.nix) and the
# offline systemd tests (tests/systemd/) both build their units from this one function, so the
# hardening the tests prove is the hardening NixOS users run.
#
# Arguments are strings and lists only; no nixpkgs is needed to evaluate this file.
{
  execStart,            # the full command line, e.g. "/usr/bin/quire serve --config /etc/quire/quire.toml"
  listen ? "127.0.0.1:8787",
  readWritePaths ? [ ],  # the vault (the state directory comes from StateDirectory=)
  readOnlyPaths ? [ ],
  credentials ? [ ],     # LoadCredential= entries, "name:/path/to/secret"
  outboundNetwork ? false, # Client ID Metadata Documents fetch https:// URLs
  watchdogSec ? 30,
  environment ? { },     # variable name to value; each becomes one quoted Environment= line
}:
{
  socket = {
    Unit = {
      Description = "Quire MCP server (socket)";
    };
    Socket = {
      ListenStream = listen;
      FileDescriptorName = "http";
      Service = "quire.service";
      NoDelay = true;
      ReusePort = false;
    };
    Install = {
      WantedBy = [ "sockets.target" ];
    };
  };

  service = {
    # Not a section: NixOS writes these through the unit's `environment` option and
    # render-units.nix the same way, one JSON-quoted Environment="NAME=value" line each, so a
    # value with spaces stays one variable.
    inherit environment;
    Unit = {
      Description = "Quire MCP server for an Obsidian vault";
      Documentation = [ "https://github.com/quire-mcp/quire" ];
      Requires = [ "quire.socket" ];
      After = [ "quire.socket" "network.target" ];
    };
    Service = {
      Type = "notify";
      NotifyAccess = "main";
      ExecStart = execStart;
      WatchdogSec = watchdogSec;
      Restart = "on-failure";
      RestartSec = "2s";
      TimeoutStopSec = "20s";

      DynamicUser = true;
      StateDirectory = "quire";
      StateDirectoryMode = "0700";
      ReadWritePaths = readWritePaths;
      ReadOnlyPaths = readOnlyPaths;
      LoadCredential = credentials;
      UMask = "0077";

      # The hardening block: everything Quire does not need is taken away.
      CapabilityBoundingSet = "";
      AmbientCapabilities = "";
      NoNewPrivileges = true;
      ProtectSystem = "strict";
      ProtectHome = true;
      PrivateTmp = true;
      PrivateDevices = true;
      PrivateUsers = true;
      PrivateIPC = true;
      PrivateNetwork = !outboundNetwork;
      ProtectHostname = true;
      ProtectClock = true;
      ProtectKernelTunables = true;
      ProtectKernelModules = true;
      ProtectKernelLogs = true;
      ProtectControlGroups = true;
      ProtectProc = "invisible";
      ProcSubset = "pid";
      KeyringMode = "private";
      # The listening socket is inherited; Quire itself only opens AF_UNIX sockets (journald,
      # sd-notify) and, with outbound network, AF_INET/AF_INET6 for https.
      RestrictAddressFamilies = if outboundNetwork then [ "AF_UNIX" "AF_INET" "AF_INET6" ] else [ "AF_UNIX" ];
      RestrictNamespaces = true;
      RestrictRealtime = true;
      RestrictSUIDSGID = true;
      RemoveIPC = true;
      LockPersonality = true;
      MemoryDenyWriteExecute = true;
      DevicePolicy = "closed";
      SystemCallArchitectures = "native";
      # Quire applies landlock to itself; older systemd (252) lists those syscalls in no group
      # that @system-service includes, so they are allowed by name.
      SystemCallFilter = [
        "@system-service"
        "landlock_create_ruleset landlock_add_rule landlock_restrict_self"
        "~@privileged @resources @mount @swap @reboot @raw-io @module @obsolete @cpu-emulation @debug"
      ];
      SystemCallErrorNumber = "EPERM";
      IPAddressDeny = if outboundNetwork then "" else "any";
    };
    Install = {
      WantedBy = [ "multi-user.target" ];
    };
  };
}
