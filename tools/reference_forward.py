#!/usr/bin/python3
"""An independent forward pass for krc weights files, written from README's "Weights file
format" section alone: it reads the safetensors file itself (header, dense and sparse tensors,
metadata) and runs the network densely in float64 with numpy (--float32: every tensor and
every operation in float32, as a plain float32 framework would run it).

Usage: reference_forward.py FILE [--attention softmax|hard] [--float32] [LETTER ...]
The letters are separate arguments or one string split on spaces or commas. Without letters,
words are read from stdin, one per line. Prints one JSON object per word:
{"letters": [...], "states": [the argmax state after each prefix, <bos> first]}."""
import json
import struct
import sys

import numpy as np

DTYPES = {"F32": "<f4", "F64": "<f8", "I32": "<i4", "I64": "<i8"}


def load(path, dtype):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n].decode("utf-8"))
    metadata = header.pop("__metadata__", {})
    body = data[8 + n:]
    raw = {}
    for name, entry in header.items():
        begin, end = entry["data_offsets"]
        raw[name] = np.frombuffer(body[begin:end], dtype=DTYPES[entry["dtype"]]).reshape(entry["shape"])
    tensors = {}
    for name, shape in json.loads(metadata.get("sparse", "{}")).items():
        dense = np.zeros(shape, dtype=dtype)
        indices, values = raw.pop(name + ".indices"), raw.pop(name + ".values")
        dense[tuple(indices.T.astype(np.int64))] = values
        tensors[name] = dense
    tensors.update({name: t.astype(dtype) for name, t in raw.items()})
    return tensors, metadata


def logits(t, config, tokens, hard):
    n = len(tokens)
    x = t["embed.token"][tokens] + t["embed.position"][:n]
    causal = np.tril(np.ones((n, n), dtype=bool))
    for i, layer in enumerate(config["layers"]):
        p = "layers.%d." % i
        delta = np.zeros_like(x)
        for h, head in enumerate(layer["heads"]):
            q, k, v = (x @ t[p + "attn." + m][h] for m in "qkv")
            s = np.where(causal, x.dtype.type(config["attention"]["scale"]) * (q @ k.T), -np.inf)
            if hard and head["kind"] == "select":
                latest_max = n - 1 - np.argmax(s[:, ::-1], axis=1)  # ties to the latest position
                w = np.eye(n, dtype=x.dtype)[latest_max]
            else:
                w = np.exp(s - s.max(axis=1, keepdims=True))
                w /= w.sum(axis=1, keepdims=True)
            delta += (w @ v) @ t[p + "attn.o"][h]
        x = x + delta
        if layer["mlp_hidden"] is not None:
            hidden = np.maximum(x @ t[p + "mlp.in.weight"].T + t[p + "mlp.in.bias"], x.dtype.type(0))
            x = x + hidden @ t[p + "mlp.out.weight"].T + t[p + "mlp.out.bias"]
    return x @ t["unembed"]


def main(argv):
    args = argv[1:]
    attention = None
    if "--attention" in args:
        at = args.index("--attention")
        attention = args[at + 1]
        del args[at:at + 2]
    dtype = np.float64
    if "--float32" in args:
        args.remove("--float32")
        dtype = np.float32
    if not args:
        sys.exit(__doc__)
    tensors, metadata = load(args[0], dtype)
    config = json.loads(metadata["config"])
    hard = (attention or config["attention"]["kind"]) == "hard"
    vocabulary = config["vocabulary"]
    lines = [" ".join(args[1:])] if len(args) > 1 else sys.stdin.read().splitlines()
    for line in lines:
        letters = line.replace(",", " ").split()
        unknown = [a for a in letters if a not in vocabulary[1:]]
        if unknown or len(letters) > config["max_len"]:
            sys.stderr.write("reference_forward: bad word %r\n" % line)
            sys.exit(2)
        tokens = [0] + [vocabulary.index(a) for a in letters]
        best = np.argmax(logits(tensors, config, tokens, hard), axis=1)
        print(json.dumps({"letters": letters, "states": [config["states"][s] for s in best]}))


if __name__ == "__main__":
    main(sys.argv)
