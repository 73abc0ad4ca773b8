# A stand-in for the parts of nixpkgs that nixos/module.nix and vm-tests/ use: fake derivations
# whose store paths are stable names (nothing is built), and formats.toml with nixpkgs' type.
# With realFiles = true, generated TOML files are written to the Nix store (builtins.toFile), so
# tests/systemd/run can copy them to the paths the rendered units name.
{ lib, realFiles ? false }:
let
  storeHash = seed: builtins.substring 0 32 (builtins.hashString "sha256" seed);
  fake = name: extra: {
    type = "derivation";
    inherit name;
    outPath = "/nix/store/${storeHash name}-${name}";
    outputs = [ "out" ];
    meta.mainProgram = (builtins.parseDrvName name).name;
  } // extra;

  # TOML as nixpkgs' formats.toml writes it (tables after plain keys, [[arrays]] of tables).
  toTOML = value:
    let
      key = name: if builtins.match "[A-Za-z0-9_-]+" name != null then name else builtins.toJSON name;
      scalar = item:
        if lib.isBool item then lib.boolToString item
        else if lib.isInt item || lib.isFloat item then toString item
        else if lib.isList item then "[" + lib.concatMapStringsSep ", " scalar item + "]"
        else if lib.isAttrs item && !lib.isDerivation item then
          "{ " + lib.concatStringsSep ", " (lib.mapAttrsToList (name: inner: "${key name} = ${scalar inner}") item) + " }"
        else builtins.toJSON (toString item);
      isTable = item: lib.isAttrs item && !lib.isDerivation item;
      isTableArray = item: lib.isList item && item != [ ] && lib.all isTable item;
      body = attrs: lib.concatStrings (lib.mapAttrsToList (name: item: "${key name} = ${scalar item}\n")
        (lib.filterAttrs (_: item: !isTable item && !isTableArray item) attrs));
      section = path: attrs:
        lib.optionalString (path != [ ]) "\n[${lib.concatMapStringsSep "." key path}]\n"
        + body attrs
        + lib.concatStrings (lib.mapAttrsToList (name: item: section (path ++ [ name ]) item)
          (lib.filterAttrs (_: isTable) attrs))
        + lib.concatStrings (lib.mapAttrsToList
          (name: items: lib.concatMapStrings
            (item: "\n[[${lib.concatMapStringsSep "." key (path ++ [ name ])}]]\n" + body item
            + lib.concatStrings (lib.mapAttrsToList (inner: table: "${key inner} = ${scalar table}\n")
              (lib.filterAttrs (_: isTable) item)))
            items)
          (lib.filterAttrs (_: isTableArray) attrs));
    in
    section [ ] value;

  jsonValue = lib.types.nullOr
    (lib.types.oneOf [
      lib.types.bool
      lib.types.int
      lib.types.float
      lib.types.str
      lib.types.path
      (lib.types.attrsOf jsonValue)
      (lib.types.listOf jsonValue)
    ]) // { description = "TOML value"; };

  quire = fake "quire-0.1.0" { meta.mainProgram = "quire"; };
in
{
  inherit quire;
  formats.toml = _: {
    type = lib.types.attrsOf jsonValue;
    generate = name: value:
      let
        text = toTOML value;
      in
      if realFiles then builtins.toFile name text
      else fake name { inherit text; };
  };
  callPackage = path: _:
    let
      file = baseNameOf path;
    in
    if file == "package.nix" then quire
    else if file == "onnxruntime-wheel.nix" then fake "onnxruntime-library-1.32.0" { }
    else if file == "model-minilm.nix" then fake "quire-model-minilm" { }
    else if file == "pdfium-wheel.nix" then fake "pdfium-library-5.15.2" { }
    else fake (lib.removeSuffix ".nix" file) { };
  runCommand = name: _: _: fake name { };
  writeShellScript = name: text: fake name { inherit text; };
  writeText = name: text: fake name { inherit text; };
  writeShellApplication = { name, text, runtimeInputs ? [ ] }: fake name { inherit text runtimeInputs; meta.mainProgram = name; };
  writers.writePython3Bin = name: _: _: fake name { meta.mainProgram = name; };
  testers.runNixOSTest = test: test;
  stdenv.hostPlatform.system = "x86_64-linux";
  onnxruntime = fake "onnxruntime-1.22.2" { };
}
  // lib.genAttrs [ "coreutils" "findutils" "gnugrep" "gnused" "systemd" "git" "openssh" "sqlite" "curl" "jq" "openssl" "rsync" "util-linux" "bash" ]
  (name: fake "${name}-0" { })
