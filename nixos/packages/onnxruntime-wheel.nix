# ONNX Runtime 1.32.0's shared library, from the same PyPI wheels `quire model install` fetches and
# verifies (src/embed/install.rs; these are PyPI's published sha256): the release the real-model
# tests run against first, so the default is what CI proves. Quire asks for the C API version 17
# and so also loads nixpkgs' onnxruntime (1.22 in nixos-25.11; CI runs the same tests against
# 1.22.1's wheel). The library is self-contained apart from libstdc++ and glibc, which
# autoPatchelfHook points at the store.
{ lib
, stdenv
, fetchurl
, unzip
, autoPatchelfHook
}:
let
  version = "1.32.0";
  wheels = {
    x86_64-linux = fetchurl {
      url = "https://files.pythonhosted.org/packages/a3/81/55845186c20cba59f614991f4065dea148e48eeb9749893768c85ce64327/onnxruntime-1.32.0-cp312-cp312-manylinux_2_28_x86_64.whl";
      sha256 = "99e1074c4b2197accd5073052a465361be17b89c093b8ffb6e6bd8f986c52df8";
    };
    aarch64-linux = fetchurl {
      url = "https://files.pythonhosted.org/packages/4a/8f/1e43fb994513c7c7a9c6965272ef89d963c1bd4080993a6267bf913701d1/onnxruntime-1.32.0-cp312-cp312-manylinux_2_28_aarch64.whl";
      sha256 = "e36c187006e7a7c8b8d6d57f1a209dd63f52430dca6c282b177718ad6b841054";
    };
  };
in
stdenv.mkDerivation {
  pname = "onnxruntime-library";
  inherit version;
  src = wheels.${stdenv.hostPlatform.system} or (throw "onnxruntime-wheel.nix: no wheel for ${stdenv.hostPlatform.system}");

  nativeBuildInputs = [ unzip autoPatchelfHook ];
  buildInputs = [ stdenv.cc.cc.lib ];

  unpackPhase = ''
    unzip -q -j $src 'onnxruntime/capi/libonnxruntime.so.${version}' -d .
  '';
  installPhase = ''
    install -Dm0555 libonnxruntime.so.${version} $out/lib/libonnxruntime.so.${version}
    ln -s libonnxruntime.so.${version} $out/lib/libonnxruntime.so
    ln -s libonnxruntime.so.${version} $out/lib/libonnxruntime.so.1
  '';

  meta = {
    description = "ONNX Runtime ${version} shared library (CPU), from the PyPI wheel";
    homepage = "https://onnxruntime.ai";
    license = lib.licenses.mit;
    sourceProvenance = [ lib.sourceTypes.binaryNativeCode ];
    platforms = lib.attrNames wheels;
  };
}
