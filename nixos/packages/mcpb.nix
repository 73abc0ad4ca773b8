# Quire's Claude Desktop bundle, quire-<version>.mcpb: manifest.json written by
# examples/mcpb/manifest.py (its tools asked of this build's binary) and the binary as
# server/quire, zipped as `mcpb pack` lays it out. examples/mcpb/build makes the same bundle with
# the format's own CLI, which also validates it; the tests run that script.
{ lib
, runCommand
, python3
, zip
, quire
}:
runCommand "quire-${quire.version}.mcpb" { nativeBuildInputs = [ python3 zip ]; } ''
  mkdir -p stage/server
  install -m 0755 ${lib.getExe quire} stage/server/quire
  python3 ${../../examples/mcpb/manifest.py} stage/server/quire >stage/manifest.json
  cd stage
  zip -X -r $out manifest.json server
''
