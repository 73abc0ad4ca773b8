# obsidian-headless: Obsidian's own headless Sync client (`ob`), from npm.
# Its licence is UNLICENSED (no rights granted), so it is marked unfree: Nix refuses to build it
# unless the user allows it (nixpkgs.config.allowUnfreePredicate), and the NixOS module uses it
# only when services.quire.sync.backend = "obsidian" and the package is set explicitly.
#
# The npm tarball ships no lock file; package-lock.json beside this file was made with
# `npm install --package-lock-only` for this exact version. npmDepsHash is lib.fakeHash until a
# networked build prints the real one. better-sqlite3 is a native module and builds from source.
{ lib
, buildNpmPackage
, fetchurl
, nodejs_22
, python3
}:
buildNpmPackage rec {
  pname = "obsidian-headless";
  version = "0.0.14";

  src = fetchurl {
    url = "https://registry.npmjs.org/obsidian-headless/-/obsidian-headless-${version}.tgz";
    # The registry's own integrity value for this tarball.
    hash = "sha512-S1d/hxLKvCUG2g5tRyXFkzPqMs3Ntw1tDyzoF2yfHGRuB4B+Mi3X2vgT8LbfQKrkEEi3LfJRdXtYzAVHcbpccw==";
  };
  sourceRoot = "package";

  postPatch = ''
    cp ${./package-lock.json} package-lock.json
  '';

  npmDepsHash = lib.fakeHash;
  nodejs = nodejs_22;
  nativeBuildInputs = [ python3 ];
  dontNpmBuild = true;

  meta = {
    description = "Obsidian's headless Sync client (the `ob` command)";
    homepage = "https://obsidian.md";
    license = lib.licenses.unfree;
    mainProgram = "ob";
    platforms = lib.platforms.linux;
  };
}
