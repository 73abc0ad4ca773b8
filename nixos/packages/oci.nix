# An OCI image with quire only: no shell, no package manager, runs as nobody (65534).
# Mount the vault at /vault; derived state (index, owner token) goes to the /state volume.
#
#   docker load < result
#   docker run -p 8787:8787 -v ~/Notes:/vault -v quire-state:/state quire:<version>
#
# Two images from this file. `oci` searches by keyword only: it has neither ONNX Runtime nor a
# model (`docker run --rm -v quire-state:/state quire:<version> model install minilm` puts both
# into the state volume once, where `quire serve` picks them up). `oci-semantic` (given `model`
# and `onnxruntime`, the same pinned packages as the NixOS module's defaults) has them baked in as
# the read-only data directory `quire model install` would have filled, so semantic search works
# from the first start.
#
# The health check fetches /healthz with busybox's wget, the only file besides quire's own closure:
# Docker health checks run a command inside the container, and quire has no HTTP client verb.
{ lib
, dockerTools
, pkgsStatic
, runCommand
, quire
, model ? null
, onnxruntime ? null
}:
let
  port = "8787";
  semantic = model != null && onnxruntime != null;
  # The layout `quire model install minilm` leaves in the data directory (src/embed/install.rs).
  dataDir = runCommand "quire-data" { } ''
    mkdir -p $out/quire/models $out/quire/lib
    ln -s ${model} $out/quire/models/minilm
    ln -s ${lib.getLib onnxruntime}/lib/libonnxruntime.so $out/quire/lib/libonnxruntime.so
  '';
  # Only the wget applet, from a static busybox: nothing else of busybox is reachable by name.
  healthProbe = runCommand "quire-health-probe" { } ''
    mkdir -p $out/bin
    ln -s ${pkgsStatic.busybox}/bin/busybox $out/bin/wget
  '';
in
dockerTools.buildLayeredImage {
  name = if semantic then "quire-semantic" else "quire";
  tag = quire.version;

  contents = [ dockerTools.caCertificates ];

  # The writable folders the image needs, owned by the unprivileged user; everything else is the
  # read-only store.
  fakeRootCommands = ''
    mkdir -p ./vault ./state ./tmp
    chown 65534:65534 ./vault ./state
    chmod 0700 ./state
    chmod 1777 ./tmp
  '';
  enableFakechroot = false;

  config = {
    User = "65534:65534";
    Entrypoint = [ (lib.getExe quire) ];
    # 0.0.0.0 is not loopback, so Quire requires a bearer token: with no identity configured it
    # creates the owner token in /state and prints it once.
    Cmd = [ "serve" "--vault" "/vault" "--http" "0.0.0.0:${port}" ];
    Env = [
      "XDG_STATE_HOME=/state"
      "HOME=/state"
      "QUIRE_LOG=info"
    ] ++ lib.optional semantic "XDG_DATA_HOME=${dataDir}";
    ExposedPorts."${port}/tcp" = { };
    Volumes = {
      "/vault" = { };
      "/state" = { };
    };
    WorkingDir = "/state";
    Healthcheck = {
      Test = [ "CMD" "${healthProbe}/bin/wget" "-q" "-O" "/dev/null" "http://127.0.0.1:${port}/healthz" ];
      # Durations are nanoseconds in the image configuration.
      Interval = 30 * 1000000000;
      Timeout = 5 * 1000000000;
      StartPeriod = 10 * 1000000000;
      Retries = 3;
    };
    Labels = {
      "org.opencontainers.image.title" = "quire";
      "org.opencontainers.image.description" = quire.meta.description;
      "org.opencontainers.image.version" = quire.version;
      "org.opencontainers.image.licenses" = "MIT OR Apache-2.0";
    };
  };
}
