# The quire binary, built from this repository's Cargo.lock (every crate is fetched by hash).
# SQLite is compiled in (rusqlite's `bundled` feature), so there is no system library to link.
# ONNX Runtime is loaded at run time (ort's `load-dynamic`) through ORT_DYLIB_PATH, from
# onnxruntime-wheel.nix by default (the library `quire model install` fetches); Quire asks for the
# C API version 17, so nixpkgs' onnxruntime (1.22 in nixos-25.11) works as well. Without a
# library semantic search degrades to keyword search.
{ lib
, callPackage
, rustPlatform
, makeBinaryWrapper
  # Not named `onnxruntime`: callPackage would fill that with nixpkgs' own, which is too old.
, onnxruntimeLibrary ? callPackage ./onnxruntime-wheel.nix { }
, withOnnxruntime ? true
}:
let
  cargoToml = lib.importTOML ../../Cargo.toml;
in
rustPlatform.buildRustPackage {
  pname = "quire";
  inherit (cargoToml.package) version;

  src = lib.fileset.toSource {
    root = ../../.;
    fileset = lib.fileset.unions [
      ../../Cargo.toml
      ../../Cargo.lock
      ../../src
      ../../benches
      ../../examples
      # The integration tests read the architecture doc (the tidy test) and run in checks.tests.
      ../../tests/it
      ../../docs
    ];
  };

  cargoLock.lockFile = ../../Cargo.lock;

  nativeBuildInputs = lib.optional withOnnxruntime makeBinaryWrapper;

  # The test suite runs in the flake's checks.tests, not on every package build.
  doCheck = false;
  preCheck = ''
    export HOME=$TMPDIR
  '';

  # A binary wrapper (no shell in the closure): it only sets a default the user can override.
  postInstall = lib.optionalString withOnnxruntime ''
    wrapProgram $out/bin/quire \
      --set-default ORT_DYLIB_PATH ${lib.getLib onnxruntimeLibrary}/lib/libonnxruntime.so
  '';

  passthru.onnxruntime = onnxruntimeLibrary;

  meta = {
    description = "MCP server that turns an Obsidian vault into a safe, searchable appliance for AI agents";
    homepage = "https://github.com/quire-mcp/quire";
    license = with lib.licenses; [ mit asl20 ];
    mainProgram = "quire";
    platforms = lib.platforms.linux;
  };
}
