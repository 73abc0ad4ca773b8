"""The embedding floor: the same model through ONNX Runtime's own Python API and the `tokenizers`
package, on the chunks `cargo bench --bench embed` wrote, so Quire's embedding speed has something
to be measured against in the same run. Not a test; `benches/embed.rs` runs it.

    python benches/embed_floor.py CHUNKS.json MODEL_DIR --batch 8 --threads 2 --out VECTORS.f32

CHUNKS.json is a list of strings (the exact texts Quire embeds). The model folder holds
`model.onnx`, `tokenizer.json` and `quire-model.json`. Prints one JSON line: chunks, seconds,
chunks_per_s. With --out, writes the unit vectors in input order as little-endian float32.
"""

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("chunks")
    parser.add_argument("model_dir")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--model-file", default="model.onnx")
    parser.add_argument("--out")
    args = parser.parse_args()

    texts = json.loads(Path(args.chunks).read_text())
    model_dir = Path(args.model_dir)
    manifest = json.loads((model_dir / "quire-model.json").read_text())
    prefix = manifest.get("document_prefix", "")
    max_tokens = int(manifest.get("max_tokens", 256))

    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.enable_padding()  # to the longest of each batch
    tokenizer.enable_truncation(max_tokens)

    options = ort.SessionOptions()
    options.intra_op_num_threads = args.threads
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(
        str(model_dir / args.model_file), options, providers=["CPUExecutionProvider"]
    )
    wanted = [i.name for i in session.get_inputs()]

    # The best a plain script does: the whole set sorted by length once, so a batch pads little.
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    vectors = np.zeros((len(texts), int(manifest.get("dimensions", 384))), dtype=np.float32)
    started = time.perf_counter()
    for at in range(0, len(order), args.batch):
        run = order[at : at + args.batch]
        encodings = tokenizer.encode_batch([prefix + texts[i] for i in run])
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        types = np.array([e.type_ids for e in encodings], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        tokens = session.run(None, {name: feed[name] for name in wanted})[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (tokens * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
        pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        vectors[run] = pooled
    seconds = time.perf_counter() - started
    if args.out:
        vectors.astype("<f4").tofile(args.out)
    print(
        json.dumps(
            {
                "chunks": len(texts),
                "seconds": round(seconds, 3),
                "chunks_per_s": round(len(texts) / seconds, 2),
                "batch": args.batch,
                "threads": args.threads,
                "onnxruntime": ort.__version__,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
