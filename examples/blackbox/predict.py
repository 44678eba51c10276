#!/usr/bin/python3
"""A black-box classifier for `witness test --cmd`: a Fairify adult-income network (AC1 by default)
evaluated with numpy, speaking witness's batch protocol (docs/blackbox.md).

    witness test --cmd "python3 examples/blackbox/predict.py" --schema benchmarks/fairify/adult.toml \
        --protected sex --method aequitas

Protocol: the first stdin line is the CSV header (the schema's feature names); then come batches
of CSV rows (raw values, category codes), each batch ended by an empty line. For every row we print
one label (0 or 1) and flush after the batch. End of input ends the program.

Usage: predict.py [MODEL.json]   (an mlp-json-v1 network; default: the bundled AC1)
Needs only Debian's python3 and python3-numpy.
"""
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_MODEL = os.path.join(HERE, "..", "..", "benchmarks", "fairify", "models", "adult", "AC1.json")


def load(path):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    layers = [(np.array(l["weights"], dtype=np.float64), np.array(l["bias"], dtype=np.float64),
               l.get("activation", "linear")) for l in doc["layers"]]
    return doc.get("input_names"), layers


def labels(layers, x):
    for i, (w, b, act) in enumerate(layers):
        x = x @ w.T + b
        last = i == len(layers) - 1
        if last:
            break  # decide on the last layer's logits, as witness does (sigmoid 0.5 = logit 0)
        if act == "relu":
            x = np.maximum(x, 0.0)
        elif act == "tanh":
            x = np.tanh(x)
        elif act == "sigmoid":
            x = 1.0 / (1.0 + np.exp(-x))
    if x.shape[1] == 1:
        return (x[:, 0] > 0.0).astype(int)
    return np.argmax(x, axis=1)  # first maximum on ties, as witness does


def main():
    names, layers = load(sys.argv[1] if len(sys.argv) > 1 else DEFAULT_MODEL)
    stdin = sys.stdin.buffer
    header = stdin.readline().decode().strip().split(",")
    order = [header.index(n) for n in names] if names else list(range(len(header)))
    rows = []
    for line in stdin:
        line = line.strip()
        if line:
            rows.append(line.decode())
            continue
        x = np.array(",".join(rows).split(","), dtype=np.float64).reshape(len(rows), len(header))
        out = labels(layers, x[:, order])
        sys.stdout.write("\n".join(map(str, out.tolist())) + "\n")
        sys.stdout.flush()
        rows = []


if __name__ == "__main__":
    main()
