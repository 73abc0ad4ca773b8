# The bge-small-en-v1.5 embedding model (BAAI, MIT licence, 384 dimensions) as a Quire model folder:
# model.onnx, tokenizer.json and quire-model.json (the small manifest Quire reads).
# Semantic search is upcoming: this package exists so a NixOS host can pin the model today.
#
# The hashes cannot be computed on the offline machine where this file was written: they are
# lib.fakeHash, and the first build on a networked machine fails with "got: sha256-…", the real
# hash to paste here. Pin `rev` to a commit of the upstream repository at the same time.
{ lib
, fetchurl
, runCommand
, writeText
}:
let
  repository = "https://huggingface.co/BAAI/bge-small-en-v1.5";
  rev = "main";
  model = fetchurl {
    name = "bge-small-en-v1.5-model.onnx";
    url = "${repository}/resolve/${rev}/onnx/model.onnx";
    hash = lib.fakeHash;
  };
  tokenizer = fetchurl {
    name = "bge-small-en-v1.5-tokenizer.json";
    url = "${repository}/resolve/${rev}/tokenizer.json";
    hash = lib.fakeHash;
  };
  manifest = writeText "quire-model.json" (builtins.toJSON {
    name = "bge-small-en-v1.5";
    dimensions = 384;
    # bge models embed with the [CLS] token, then L2-normalise.
    pooling = "cls";
    normalize = true;
    max_tokens = 512;
    source = repository;
  });
in
runCommand "quire-model-bge-small-en-v1.5"
{
  meta = {
    description = "bge-small-en-v1.5 sentence embeddings (ONNX) for Quire's semantic search";
    homepage = repository;
    license = lib.licenses.mit;
  };
} ''
  mkdir -p $out
  ln -s ${model} $out/model.onnx
  ln -s ${tokenizer} $out/tokenizer.json
  ln -s ${manifest} $out/quire-model.json
''
