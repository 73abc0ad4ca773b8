# pdfium (build 8149) as a shared library, from the same pypdfium2 5.15.2 wheels
# `quire pdfium install` takes and pins (src/files/pdf/pdfium.rs; these are PyPI's published
# sha256): the library the page-rendering tests run against. Quire binds it at run time
# (pdfium-render, bindings for build 8125, which 8149 extends); point QUIRE_PDFIUM_LIBRARY (or
# the configuration) at $out/lib/libpdfium.so. The library needs only glibc and libgcc_s, which
# autoPatchelfHook points at the store.
{ lib
, stdenv
, fetchurl
, unzip
, autoPatchelfHook
}:
let
  version = "5.15.2";
  wheels = {
    x86_64-linux = fetchurl {
      url = "https://files.pythonhosted.org/packages/c8/e5/2e668bc1bc6fe22f9006694b5571a2dd2c9b874d6a21d16ee839c8f7f6ea/pypdfium2-5.15.2-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl";
      sha256 = "dc31aea5b0fb9fefc9b537a65f4113980b2c40798445736a7e6565bc85161e37";
    };
    aarch64-linux = fetchurl {
      url = "https://files.pythonhosted.org/packages/03/1f/7a18e64c50049dce8512239bcdb9f8469d0a0c352dd42ae85b6b01d143f8/pypdfium2-5.15.2-py3-none-manylinux_2_17_aarch64.manylinux2014_aarch64.whl";
      sha256 = "dd46e93c0c3a73f6cea8489baff6d77a5d0759dd53fbbce0aeb49c91830176fc";
    };
  };
in
stdenv.mkDerivation {
  pname = "pdfium-library";
  inherit version;
  src = wheels.${stdenv.hostPlatform.system} or (throw "pdfium-wheel.nix: no wheel for ${stdenv.hostPlatform.system}");

  nativeBuildInputs = [ unzip autoPatchelfHook ];
  buildInputs = [ stdenv.cc.cc.lib ];

  unpackPhase = ''
    unzip -q $src 'pypdfium2_raw/libpdfium.so' 'pypdfium2-${version}.dist-info/licenses/*' -d .
  '';
  installPhase = ''
    install -Dm0555 pypdfium2_raw/libpdfium.so $out/lib/libpdfium.so
    mkdir -p $out/share/licenses/pdfium
    cp -r pypdfium2-${version}.dist-info/licenses/. $out/share/licenses/pdfium/
  '';

  meta = {
    description = "pdfium (build 8149) shared library, from the pypdfium2 ${version} wheel";
    homepage = "https://pdfium.googlesource.com/pdfium/";
    # pdfium is BSD-3-Clause with Apache-2.0 parts; the bundled libraries' licences are in
    # share/licenses/pdfium.
    license = [ lib.licenses.bsd3 lib.licenses.asl20 ];
    sourceProvenance = [ lib.sourceTypes.binaryNativeCode ];
    platforms = lib.attrNames wheels;
  };
}
