{
  description = "Quire: an MCP server for an Obsidian vault, packaged as a hardened NixOS appliance";

  # One input, pinned in flake.lock. Everything else (the Rust toolchain, ONNX Runtime, the test
  # framework) comes from this nixpkgs, so the lock has nothing that cannot be checked by hash.
  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-25.11";

  outputs = { self, nixpkgs }:
    let
      inherit (nixpkgs) lib;
      # Linux only: Quire's sandbox is landlock and its appliance is systemd.
      systems = [ "x86_64-linux" "aarch64-linux" ];
      forAllSystems = f: lib.genAttrs systems (system: f nixpkgs.legacyPackages.${system});

      # Every vm-tests/<name>.nix becomes checks.<system>.vm-<name>; adding a file adds a check.
      vmTestFiles = lib.filterAttrs (name: type: type == "regular" && lib.hasSuffix ".nix" name)
        (builtins.readDir ./vm-tests);
      vmTests = pkgs: lib.mapAttrs'
        (file: _: lib.nameValuePair "vm-${lib.removeSuffix ".nix" file}"
          (import (./vm-tests + "/${file}") { inherit self pkgs; }))
        vmTestFiles;
    in
    {
      overlays.default = final: _prev: {
        quire = final.callPackage ./nixos/packages/package.nix { };
        quire-model-minilm = final.callPackage ./nixos/packages/model-minilm.nix { };
        quire-onnxruntime = final.callPackage ./nixos/packages/onnxruntime-wheel.nix { };
        quire-pdfium = final.callPackage ./nixos/packages/pdfium-wheel.nix { };
        # Unfree (the npm package is UNLICENSED): building it needs allowUnfree or a predicate.
        obsidian-headless = final.callPackage ./nixos/packages/obsidian-headless { };
      };

      packages = forAllSystems (pkgs:
        let
          quire = pkgs.callPackage ./nixos/packages/package.nix { };
        in
        {
          inherit quire;
          default = quire;
          # The embedding model `quire model install minilm` installs, and ONNX Runtime >= 1.31
          # (nixpkgs' is older than Quire's ort API level): the module's defaults for semantic search.
          model-minilm = pkgs.callPackage ./nixos/packages/model-minilm.nix { };
          onnxruntime = pkgs.callPackage ./nixos/packages/onnxruntime-wheel.nix { };
          # pdfium for PDF page rendering: the module's default `files.pdfium`.
          pdfium = pkgs.callPackage ./nixos/packages/pdfium-wheel.nix { };
          oci = pkgs.callPackage ./nixos/packages/oci.nix { inherit quire; };
          # The same image with MiniLM and ONNX Runtime baked in: semantic search from the start.
          oci-semantic = pkgs.callPackage ./nixos/packages/oci.nix {
            inherit quire;
            model = pkgs.callPackage ./nixos/packages/model-minilm.nix { };
            onnxruntime = pkgs.callPackage ./nixos/packages/onnxruntime-wheel.nix { };
          };
          # The Claude Desktop bundle (examples/mcpb/build makes the same outside Nix).
          mcpb = pkgs.callPackage ./nixos/packages/mcpb.nix { inherit quire; };
        });

      nixosModules.default = ./nixos/module.nix;
      nixosModules.quire = self.nixosModules.default;

      checks = forAllSystems (pkgs:
        let
          quire = self.packages.${pkgs.stdenv.hostPlatform.system}.default;
        in
        {
          package = quire;
          # The test suite and clippy reuse the package's vendored crates (cargoLock), so both run
          # offline inside the build sandbox.
          tests = quire.overrideAttrs (_: {
            pname = "quire-tests";
            doCheck = true;
          });
          clippy = quire.overrideAttrs (old: {
            pname = "quire-clippy";
            nativeBuildInputs = old.nativeBuildInputs ++ [ pkgs.clippy ];
            buildPhase = ''
              runHook preBuild
              cargo clippy --locked --offline --all-targets -- --deny warnings
              runHook postBuild
            '';
            doCheck = false;
            installPhase = "touch $out";
            postInstall = "";
          });
        } // vmTests pkgs);

      devShells = forAllSystems (pkgs: {
        default = pkgs.mkShell {
          inputsFrom = [ self.packages.${pkgs.stdenv.hostPlatform.system}.default ];
          packages = [
            pkgs.cargo-nextest
            pkgs.clippy
            pkgs.deadnix
            pkgs.nixpkgs-fmt
            pkgs.nodejs_22
            pkgs.python3
            pkgs.rust-analyzer
            pkgs.rustfmt
            pkgs.sqlite
          ];
          ORT_DYLIB_PATH = "${lib.getLib (pkgs.callPackage ./nixos/packages/onnxruntime-wheel.nix { })}/lib/libonnxruntime.so";
        };
      });

      formatter = forAllSystems (pkgs: pkgs.nixpkgs-fmt);
    };
}
