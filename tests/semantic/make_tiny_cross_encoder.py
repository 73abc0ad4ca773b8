"""Writes a tiny random-weight cross-encoder model folder for Quire's reranker tests.

Usage: make_tiny_cross_encoder.py OUT_DIR TOKENIZER_JSON

The graph has the inputs and output of a BERT cross-encoder (input_ids, attention_mask,
token_type_ids -> logits [batch, 1]) but only an embedding sum, tanh and one linear layer, with
fixed random weights. Its scores mean nothing: the tests that use it check the reranker's
plumbing (pair encoding, shapes, batching, blending), never ranking quality. It needs only
`onnx` and `numpy` from PyPI.
"""

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HIDDEN = 8


def main() -> None:
    out, tokenizer = Path(sys.argv[1]), Path(sys.argv[2])
    vocab = len(json.loads(tokenizer.read_text())["model"]["vocab"])
    rng = np.random.default_rng(20261130)
    weights = [
        numpy_helper.from_array(rng.normal(0, 0.5, (vocab, HIDDEN)).astype(np.float32), "word"),
        numpy_helper.from_array(rng.normal(0, 0.5, (2, HIDDEN)).astype(np.float32), "type"),
        numpy_helper.from_array(rng.normal(0, 0.5, (HIDDEN, 1)).astype(np.float32), "w"),
        numpy_helper.from_array(np.array([0.1], dtype=np.float32), "b"),
        numpy_helper.from_array(np.array([-1], dtype=np.int64), "last"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "tokens"),
    ]
    nodes = [
        helper.make_node("Gather", ["word", "input_ids"], ["words"]),
        helper.make_node("Gather", ["type", "token_type_ids"], ["types"]),
        helper.make_node("Add", ["words", "types"], ["summed"]),
        helper.make_node("Cast", ["attention_mask"], ["mask"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["mask", "last"], ["mask3"]),
        helper.make_node("Mul", ["summed", "mask3"], ["masked"]),
        helper.make_node("ReduceSum", ["masked", "tokens"], ["pooled"], keepdims=0),
        helper.make_node("Tanh", ["pooled"], ["hidden"]),
        helper.make_node("MatMul", ["hidden", "w"], ["projected"]),
        helper.make_node("Add", ["projected", "b"], ["logits"]),
    ]
    ids = lambda name: helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "tokens"])
    graph = helper.make_graph(
        nodes,
        "tiny-cross-encoder",
        [ids("input_ids"), ids("attention_mask"), ids("token_type_ids")],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])],
        weights,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    out.mkdir(parents=True, exist_ok=True)
    onnx.save(model, out / "model.onnx")
    shutil.copyfile(tokenizer, out / "tokenizer.json")
    (out / "quire-model.json").write_text(
        json.dumps(
            {
                "name": "tiny-random-cross-encoder",
                "kind": "cross-encoder",
                "max_tokens": 128,
                "source": "tests/semantic/make_tiny_cross_encoder.py (random weights; scores are meaningless)",
            },
            indent=2,
        )
        + "\n"
    )
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
