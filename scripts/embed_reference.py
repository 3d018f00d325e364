#!/usr/bin/env python3
"""The embedding reference of issue #43: ONNX Runtime alone, on the texts `mem index` embeds.

It runs the graph `mem` loads (the optimised graph that `mem` keeps under the model folder's
`optimized/<key>/graph.onnx` with its `weights.bin`, else `model.onnx`), the same tokenizer
(`tokenizer.json`, cut at 256 tokens, padded to the longest text of a batch), mean pooling
over the attention mask and unit length; ONNX Runtime's own 2 intra-op threads; batches of 32
texts sorted by length. It prints the texts per second of the embedding loop (tokenization and
inference, after the session is built) and of the whole script.

The texts are one JSON string per line, as `examples/embed_texts.rs` writes them from a root:

    cargo run --release --example embed_texts -- ROOT > /tmp/texts.jsonl

Install (a virtual environment, not the system's Python):

    python3 -m venv /tmp/embed-ref-venv
    /tmp/embed-ref-venv/bin/pip install onnxruntime tokenizers numpy

Run:

    /tmp/embed-ref-venv/bin/python scripts/embed_reference.py MODEL_DIR /tmp/texts.jsonl \
        [--threads 2] [--batch 32] [--out vectors.npy]
"""

import argparse
import glob
import json
import os
import sys
import time

START = time.perf_counter()

import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402
from tokenizers import Tokenizer  # noqa: E402

MAX_TOKENS = 256


def graph_path(model_dir):
    """The graph mem loads: its optimised copy if there is exactly one, else model.onnx."""
    optimized = sorted(glob.glob(os.path.join(model_dir, "optimized", "*", "graph.onnx")))
    if len(optimized) == 1:
        return optimized[0]
    return os.path.join(model_dir, "model.onnx")


def tokenizer(model_dir):
    tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    with open(os.path.join(model_dir, "tokenizer_config.json")) as f:
        config = json.load(f)
    pad = config["pad_token"]
    pad = pad if isinstance(pad, str) else pad["content"]
    max_len = min(MAX_TOKENS, int(float(config.get("model_max_length", MAX_TOKENS))))
    tok.enable_truncation(max_length=max_len)
    tok.enable_padding(pad_id=tok.token_to_id(pad), pad_token=pad)
    return tok


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model_dir")
    ap.add_argument("texts", help="JSONL file: one JSON string per line")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--out", help="write the vectors (in input order) to this .npy file")
    args = ap.parse_args()

    with open(args.texts) as f:
        texts = [json.loads(line) for line in f if line.strip()]
    graph = graph_path(args.model_dir)
    options = ort.SessionOptions()
    options.intra_op_num_threads = args.threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(graph, options, providers=["CPUExecutionProvider"])
    names = {i.name for i in session.get_inputs()}
    tok = tokenizer(args.model_dir)

    begin = time.perf_counter()
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    vectors = np.zeros((len(texts), 0), dtype=np.float32)
    out = [None] * len(texts)
    for start in range(0, len(order), args.batch):
        chunk = order[start : start + args.batch]
        enc = tok.encode_batch([texts[i] for i in chunk])
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in names:
            feeds["token_type_ids"] = np.array([e.type_ids for e in enc], dtype=np.int64)
        hidden = session.run(None, feeds)[0]
        m = mask[:, :, None].astype(np.float32)
        pooled = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
        pooled /= np.linalg.norm(pooled, axis=1, keepdims=True)
        for i, v in zip(chunk, pooled):
            out[i] = v
    elapsed = time.perf_counter() - begin
    vectors = np.stack(out) if out else vectors
    whole = time.perf_counter() - START
    if args.out:
        np.save(args.out, vectors)
    n = len(texts)
    print(
        f"reference: {n} texts, graph {os.path.relpath(graph, args.model_dir)}, "
        f"{args.threads} threads, batches of {args.batch} sorted by length: "
        f"embedding {elapsed:.2f} s = {n / elapsed:.1f} texts/s; "
        f"whole script {whole:.2f} s = {n / whole:.1f} texts/s"
    )


if __name__ == "__main__":
    sys.exit(main())
