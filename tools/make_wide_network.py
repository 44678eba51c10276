#!/usr/bin/python3
"""Generates a deep, wide ReLU network over a small discrete domain, to benchmark quantitative
fairness verification (counting the unfair inputs) against FairQuant, whose input format is .nnet.

    tools/make_wide_network.py /tmp/wide                           # 10 x 1000, seed 0
    tools/make_wide_network.py /tmp/wide --seed 3 --self-check     # re-read the files, compare
    tools/make_wide_network.py /tmp/small --layers 2 --width 20    # a quick one for tests
    tools/make_wide_network.py /tmp/wide --json                    # also write mlp-json-v1

Run it with Debian's /usr/bin/python3 and python3-numpy (scripts/setup installs it); nothing else.
It writes, into OUTDIR:

  wide.toml             the schema: age [18, 43], sex {female, male} (protected), education [0, 5],
                        employment (4 categories); 26 * 6 * 4 = 624 non-protected points, 1248 in all.
  wide.nnet             the network in .nnet (Kyle Julian's format), reference semantics: means 0
                        and ranges 1, so the normalisation is the identity and the network reads the
                        schema's raw codes (input order = schema feature order; no one-hot, no scaling).
  wide.fairquant.nnet   the same network for FairQuant: identical except that the ranges line holds
                        max - min. FairQuant never normalises its inputs (it defines normalize_input but
                        does not call it) and counts ranges[i] + 1 integer values per feature for its
                        volumes, so with ranges 1 its rates would be wrong. Under the reference semantics
                        ((x - mean) / range) this file is a different network: give it to FairQuant only.
  wide.json             (with --json) the same network as mlp-json-v1.

The network: `--layers` hidden Dense+ReLU layers of `--width` neurons and one output logit (label 1
iff logit > 0). How it is trained, in numpy only and in well under a minute on 2 cores (a full
backpropagation over 10 x 1000 layers costs several seconds a step with Debian's reference BLAS):

  1. Data: every point of the domain (both sexes) gets REPLICATES noisy labels from a simple rule
     (score from age, education and employment, plus a sex term only for age < 30; label 1 iff
     score + logistic noise > 0). The network is meant to be unfair on part of the domain.
  2. Hidden layers: He-initialised weights (N(0, 2 / fan_in)), then normalised per neuron on the
     domain, data-dependent as in LSUV / a folded batch norm: each neuron's weight row is scaled by
     the power of two nearest to 1 / (standard deviation of its pre-activation over the 1248
     points), so that deviation lies in [0.71, 1.41], and its bias is set so that the mean is
     beta_j ~ U(-0.5, 0.5). The first layer's scaling also absorbs the inputs' very different
     ranges. So activations neither vanish nor explode at any depth, and each neuron is active on
     part of the domain. These layers are not trained further.
  3. Output layer: L2-regularised logistic regression on the last hidden layer's features, fitted
     by Newton's method on the replicated labels (soft targets, weight REPLICATES per point).

Every parameter is rounded to the nearest float32 value (a double that a float reads exactly), so
FairQuant, which parses with (float)atof, gets exactly the same parameters; --float64 keeps the full
doubles. All numbers are written with repr(), which reads back as the same double. Each weight row
of the .nnet file is one line; FairQuant reads lines into a 50240-byte buffer, so the script warns
when a line is longer (from about --width 2400 on).

Deterministic for a given seed on a given machine (numpy's PCG64; the per-neuron statistics go
through BLAS, whose rounding may differ between BLAS builds). It prints the training accuracy, the
share of non-protected points whose label changes with sex (unfair points), the smallest |logit| on
the domain and the timings to stderr. --self-check re-reads every file written with a small
independent parser and requires bit-identical parameters, and for wide.nnet, evaluated with the
reference semantics, logits equal to the in-memory network's on every point (max abs diff 0); it
also reports how many labels change when the network is evaluated in float32, as FairQuant does.
"""
import argparse
import itertools
import json
import math
import os
import sys
import time

import numpy as np

# The domain, in model input order. "integer" features take min..max, "categorical" the codes
# 0..k-1 of their categories. The protected feature must be binary (FairQuant's convention: its
# min is one group, its max the other).
FEATURES = [
    {"name": "age", "kind": "integer", "min": 18, "max": 43},
    {"name": "sex", "kind": "categorical", "categories": ["female", "male"]},
    {"name": "education", "kind": "integer", "min": 0, "max": 5},
    {"name": "employment", "kind": "categorical",
     "categories": ["unemployed", "part-time", "full-time", "self-employed"]},
]
PROTECTED = "sex"
NAME = "wide"
REPLICATES = 8          # noisy labels per domain point
NOISE_SCALE = 0.35      # scale of the logistic label noise
SEX_EFFECT = 0.9        # +- this for male/female, only for age < YOUNG
YOUNG = 30
L2 = 1.0                # ridge penalty of the output layer (on the sum of per-sample losses)
FAIRQUANT_LINE_LIMIT = 50240 - 2  # FairQuant's fgets buffer, less the newline and the NUL


def bounds(feature):
    """(min, max) of a feature's raw values."""
    if feature["kind"] == "categorical":
        return 0, len(feature["categories"]) - 1
    return feature["min"], feature["max"]


def domain():
    """All points of the domain as an (n, inputs) float64 array, in itertools.product order."""
    ranges = [range(lo, hi + 1) for lo, hi in map(bounds, FEATURES)]
    return np.array(list(itertools.product(*ranges)), dtype=np.float64)


def schema_toml(args):
    """The schema of the domain, in witness's TOML format (docs/schema.md)."""
    lines = [
        f"# Synthetic domain of the wide benchmark network, written by tools/make_wide_network.py --seed {args.seed}",
        f"# --layers {args.layers} --width {args.width}. The network reads these raw values (category codes and",
        "# integers, no one-hot, no scaling) in this order.",
        f'name = "{NAME}"',
        'label = "approved"',
        'label_classes = ["no", "yes"]',
        f'protected = ["{PROTECTED}"]',
    ]
    for f in FEATURES:
        lines += ["", "[[features]]", f'name = "{f["name"]}"', f'kind = "{f["kind"]}"']
        if f["kind"] == "categorical":
            lines.append("categories = [" + ", ".join(f'"{c}"' for c in f["categories"]) + "]")
        else:
            lines += [f"min = {f['min']}", f"max = {f['max']}"]
    return "\n".join(lines) + "\n"


def labels(X, rng):
    """Soft targets (share of REPLICATES noisy labels that are 1) and the noise-free rule's labels."""
    col = {f["name"]: X[:, i] for i, f in enumerate(FEATURES)}
    employment = np.array([-1.0, -0.2, 0.5, 0.3])[col["employment"].astype(int)]
    score = 0.12 * (col["age"] - YOUNG) + 0.55 * (col["education"] - 2.5) + employment
    score += np.where(col["age"] < YOUNG, SEX_EFFECT * (2.0 * col["sex"] - 1.0), 0.0)
    noise = rng.logistic(0.0, NOISE_SCALE, size=(REPLICATES, len(X)))
    return ((score + noise) > 0).mean(axis=0), (score > 0).astype(float)


def round_params(a, float64):
    """The parameters as they will be stored: float32-rounded unless float64, C-contiguous."""
    if not float64:
        a = a.astype(np.float32).astype(np.float64)
    return np.ascontiguousarray(a)


def hidden_layers(X, args, rng):
    """He-initialised hidden layers, normalised per neuron on the domain X (see the header).
    Returns the list of (W, b) and the last hidden layer's activations on X.

    The scale is a power of two, so scaling a weight row scales its products and sums exactly:
    h @ (s * W).T equals s * (h @ W.T) bit for bit, and the activations computed here from one
    product per layer are exactly what a forward pass with the stored parameters gives."""
    layers, h = [], X
    for _ in range(args.layers):
        fan_in = h.shape[1]
        W = round_params(rng.normal(0.0, math.sqrt(2.0 / fan_in), size=(args.width, fan_in)), args.float64)
        z = h @ W.T
        mu, sd = z.mean(axis=0), z.std(axis=0)
        sd[sd < 1e-12] = 1.0                     # a neuron constant on the domain: leave it alone
        scale = np.exp2(-np.round(np.log2(sd)))  # 1 / sd, to the nearest power of two
        beta = rng.uniform(-0.5, 0.5, size=args.width)
        W = np.ascontiguousarray(W * scale[:, None])
        b = round_params(beta - mu * scale, args.float64)
        layers.append((W, b))
        h = np.maximum(z * scale + b, 0.0)       # == np.maximum(h @ W.T + b, 0.0), exactly
    return layers, h


def fit_output(H, target, float64):
    """L2-regularised logistic regression of the soft targets on features H by Newton's method.
    Returns (w as a [1][d] matrix, bias as a 1-vector), rounded like the other parameters."""
    n, d = H.shape
    A = np.hstack([H, np.ones((n, 1))])
    reg = np.full(d + 1, L2)
    reg[-1] = 0.0                                # the intercept is not penalised
    theta = np.zeros(d + 1)

    def loss(t):
        z = A @ t
        return REPLICATES * np.sum(np.logaddexp(0.0, z) - target * z) + 0.5 * np.sum(reg * t * t)

    current = loss(theta)
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-(A @ theta)))
        grad = REPLICATES * (A.T @ (p - target)) + reg * theta
        B = A * np.sqrt(REPLICATES * p * (1.0 - p))[:, None]
        hess = B.T @ B + np.diag(reg + 1e-9)     # B.T @ B: numpy uses the symmetric product
        step = np.linalg.solve(hess, grad)
        t = 1.0
        while loss(theta - t * step) > current and t > 1e-6:
            t *= 0.5
        theta -= t * step
        new = loss(theta)
        done = current - new <= 1e-9 * max(1.0, abs(current))
        current = new
        if done:
            break
    return round_params(theta[None, :d], float64), round_params(theta[d:], float64)


def fairness(X, logits):
    """(unfair share, number unfair, number of non-protected points): a non-protected point is
    unfair when its label differs between the two values of the protected feature."""
    p = [f["name"] for f in FEATURES].index(PROTECTED)
    others = np.delete(X, p, axis=1)
    keys = {}
    for key, label in zip(map(tuple, others), logits > 0):
        keys.setdefault(key, set()).add(bool(label))
    unfair = sum(1 for s in keys.values() if len(s) == 2)
    return unfair / len(keys), unfair, len(keys)


def fmt(values):
    """A comma-separated line of exact doubles, with the usual trailing comma."""
    return ",".join(map(repr, values)) + ","


def nnet_body(layers):
    """The .nnet lines after the header: per layer its weight rows, then its biases."""
    out = []
    for W, b in layers:
        out += [fmt(row) for row in W.tolist()]
        out += [fmt([v]) for v in b.tolist()]
    return "\n".join(out) + "\n"


def nnet_header(layers, args, fairquant):
    """The .nnet comments and header lines; `fairquant` writes ranges = max - min (see above)."""
    sizes = [len(FEATURES)] + [W.shape[0] for W, _ in layers]
    lo, hi = zip(*map(bounds, FEATURES))
    ranges = [float(h - l) for l, h in zip(lo, hi)] if fairquant else [1.0] * len(FEATURES)
    names = ", ".join(f["name"] for f in FEATURES)
    out = [
        f"// {NAME}: {args.layers} hidden ReLU layers of {args.width}, 1 output logit (label 1 iff > 0),",
        f"// generated by tools/make_wide_network.py --seed {args.seed} --layers {args.layers} "
        f"--width {args.width}{' --float64' if args.float64 else ''}; schema {NAME}.toml.",
        f"// Inputs (raw schema codes, in this order): {names}. Protected: {PROTECTED}.",
    ]
    if fairquant:
        out += ["// FairQuant variant: ranges = max - min (FairQuant's value counts); FairQuant does not",
                "// normalise. Under the reference (x - mean) / range semantics use wide.nnet instead."]
    else:
        out += ["// Means 0 and ranges 1: the normalisation is the identity."]
    out += [
        f"{len(layers)},{sizes[0]},{sizes[-1]},{max(sizes)},",
        fmt(sizes),
        "0,",
        fmt(map(float, lo)),
        fmt(map(float, hi)),
        fmt([0.0] * (len(FEATURES) + 1)),
        fmt(ranges + [1.0]),
    ]
    return "\n".join(out) + "\n"


def mlp_json_text(layers, args):
    """The network as mlp-json-v1 (weights [out][in]; the last layer's activation is sigmoid, so
    witness labels 1 iff its logit > 0)."""
    sizes = [len(FEATURES)] + [W.shape[0] for W, _ in layers]
    doc = {
        "format": "mlp-json-v1",
        "name": NAME,
        "source": f"tools/make_wide_network.py --seed {args.seed} --layers {args.layers} --width {args.width}",
        "input_dim": sizes[0],
        "layer_sizes": sizes,
        "layers": [{"activation": "relu" if k + 1 < len(layers) else "sigmoid",
                    "weights": W.tolist(), "bias": b.tolist()} for k, (W, b) in enumerate(layers)],
    }
    return json.dumps(doc, separators=(",", ":")) + "\n"


def read_nnet(path):
    """An independent minimal .nnet reader: (layers, mins, maxes, means, ranges), reference layout."""
    with open(path) as f:
        lines = [ln.strip() for ln in f if ln.strip() and not ln.lstrip().startswith("//")]

    def numbers(line):
        return [float(t) for t in line.split(",") if t.strip()]

    n_layers, n_in, n_out, _ = (int(v) for v in numbers(lines[0]))
    sizes = [int(v) for v in numbers(lines[1])]
    assert len(sizes) == n_layers + 1 and sizes[0] == n_in and sizes[-1] == n_out, "bad header"
    mins, maxes, means, ranges = (np.array(numbers(lines[k])) for k in range(3, 7))
    pos, layers = 7, []
    for k in range(n_layers):
        W = np.array([numbers(lines[pos + i]) for i in range(sizes[k + 1])])
        pos += sizes[k + 1]
        b = np.array([numbers(lines[pos + i])[0] for i in range(sizes[k + 1])])
        pos += sizes[k + 1]
        assert W.shape == (sizes[k + 1], sizes[k]), f"layer {k}: weights {W.shape}"
        layers.append((W, b))
    assert pos == len(lines), "data after the last layer"
    return layers, mins, maxes, means, ranges


def evaluate_read(layers, X, means, ranges):
    """Logits of a network read by read_nnet, with the reference semantics: inputs normalised to
    (x - mean) / range, hidden layers Dense + ReLU, the output de-normalised to y * range + mean."""
    h = (X - means[:-1]) / ranges[:-1]
    for W, b in layers[:-1]:
        h = np.maximum(h @ W.T + b, 0.0)
    W, b = layers[-1]
    return (h @ W.T + b)[:, 0] * ranges[-1] + means[-1]


def self_check(outdir, layers, X, logits, wrote_json):
    """Re-reads the files written and fails unless parameters and logits are bit-identical."""
    lo, hi = (np.array(v, dtype=float) for v in zip(*map(bounds, FEATURES)))
    for name, fairquant in [("wide.nnet", False), ("wide.fairquant.nnet", True)]:
        read, mins, maxes, means, ranges = read_nnet(os.path.join(outdir, name))
        assert np.array_equal(mins, lo) and np.array_equal(maxes, hi), f"{name}: input bounds"
        assert not means.any(), f"{name}: means"
        if fairquant:
            p = [f["name"] for f in FEATURES].index(PROTECTED)
            count = math.prod(int(r) + 1 for i, r in enumerate(ranges[:-1]) if i != p)
            assert count * 2 == len(X), f"{name}: FairQuant's volume {count}"
        else:
            assert np.all(ranges == 1.0), f"{name}: ranges"
        same = all(np.array_equal(W, W2) and np.array_equal(b, b2) for (W, b), (W2, b2) in zip(layers, read))
        assert same and len(read) == len(layers), f"{name}: parameters differ"
        if fairquant:                            # same parameters, no normalisation: same logits
            print(f"self-check {name}: header as FairQuant reads it, parameters identical", file=sys.stderr)
            continue
        diff = np.max(np.abs(evaluate_read(read, X, means, ranges) - logits))
        print(f"self-check {name}: parameters identical, max |logit diff| on {len(X)} points = {diff}",
              file=sys.stderr)
        assert diff == 0.0, f"{name}: logits differ"
        h = X.astype(np.float32)                 # as FairQuant computes: in float
        for W, b in read[:-1]:
            h = np.maximum(h @ W.astype(np.float32).T + b.astype(np.float32), np.float32(0))
        W, b = read[-1]
        z32 = (h @ W.astype(np.float32).T + b.astype(np.float32))[:, 0]
        print(f"{name} in float32 (as FairQuant computes): max |logit diff| {np.max(np.abs(z32 - logits)):.3g}, "
              f"{np.sum((z32 > 0) != (logits > 0))} labels differ", file=sys.stderr)
    if wrote_json:
        with open(os.path.join(outdir, "wide.json")) as f:
            doc = json.load(f)
        read = [(np.array(l["weights"]), np.array(l["bias"])) for l in doc["layers"]]
        same = all(np.array_equal(W, W2) and np.array_equal(b, b2) for (W, b), (W2, b2) in zip(layers, read))
        assert same and len(read) == len(layers), "wide.json: parameters differ"
        print("self-check wide.json: parameters identical", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--layers", type=int, default=10, help="hidden layers (default 10)")
    ap.add_argument("--width", type=int, default=1000, help="neurons per hidden layer (default 1000)")
    ap.add_argument("--json", action="store_true", help="also write wide.json (mlp-json-v1)")
    ap.add_argument("--float64", action="store_true", help="keep full doubles (no float32 rounding)")
    ap.add_argument("--self-check", action="store_true", help="re-read the files and compare")
    args = ap.parse_args()
    if args.layers < 1 or args.width < 1:
        ap.error("--layers and --width must be at least 1")

    t0 = time.perf_counter()
    rng = np.random.default_rng(args.seed)
    X = domain()
    target, rule = labels(X, rng)
    hidden, H = hidden_layers(X, args, rng)
    t_hidden = time.perf_counter()
    layers = hidden + [fit_output(H, target, args.float64)]
    W, b = layers[-1]
    logits = (H @ W.T + b)[:, 0]                 # exactly a forward pass over the stored parameters
    t_train = time.perf_counter()

    pred = logits > 0
    accuracy = float(np.mean(np.where(pred, target, 1.0 - target)))
    share, unfair, points = fairness(X, logits)
    rule_share, _, _ = fairness(X, rule - 0.5)
    print(f"domain: {len(X)} points ({points} non-protected x 2 values of {PROTECTED}); "
          f"network {len(FEATURES)} -> {args.layers} x {args.width} -> 1, "
          f"{sum(W.size + b.size for W, b in layers)} parameters", file=sys.stderr)
    print(f"training accuracy {accuracy:.4f} on {REPLICATES * len(X)} noisy labels "
          f"(agreement with the noise-free rule {np.mean(pred == (rule > 0)):.4f}); "
          f"positive rate {pred.mean():.3f}", file=sys.stderr)
    print(f"unfair non-protected points: {unfair} / {points} = {share:.4f} "
          f"(noise-free rule: {rule_share:.4f}); smallest |logit| {np.min(np.abs(logits)):.3g}",
          file=sys.stderr)

    os.makedirs(args.outdir, exist_ok=True)
    body = nnet_body(layers)
    files = {"wide.toml": [schema_toml(args)],
             "wide.nnet": [nnet_header(layers, args, fairquant=False), body],
             "wide.fairquant.nnet": [nnet_header(layers, args, fairquant=True), body]}
    if args.json:
        files["wide.json"] = [mlp_json_text(layers, args)]
    longest = max(map(len, body.split("\n")))
    if longest > FAIRQUANT_LINE_LIMIT:
        print(f"warning: a .nnet line has {longest} characters; FairQuant reads lines of at most "
              f"{FAIRQUANT_LINE_LIMIT} and would misparse this file", file=sys.stderr)
    for name, parts in files.items():
        with open(os.path.join(args.outdir, name), "w") as f:
            f.writelines(parts)
    t_write = time.perf_counter()
    sizes = ", ".join(f"{n} {os.path.getsize(os.path.join(args.outdir, n)) / 1e6:.1f} MB" for n in files)
    print(f"wrote {args.outdir}: {sizes}", file=sys.stderr)

    if args.self_check:
        self_check(args.outdir, layers, X, logits, args.json)
    t_end = time.perf_counter()
    print(f"time: hidden layers {t_hidden - t0:.1f} s, output layer {t_train - t_hidden:.1f} s, "
          f"writing {t_write - t_train:.1f} s" + (f", self-check {t_end - t_write:.1f} s" if args.self_check else ""),
          file=sys.stderr)


if __name__ == "__main__":
    main()
