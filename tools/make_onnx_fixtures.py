#!/usr/bin/python3
"""Writes the ONNX test fixtures into tests/fixtures/onnx/ (run with Debian's /usr/bin/python3,
which has python3-onnx and python3-torch).

Each valid model gets a <name>.json next to it: {"inputs": rows, "outputs": rows, "labels": [...]}
with outputs computed independently of witness (torch, a python tree walk, numpy), so the C++
tests check our loader and evaluator against them. Everything is seeded: reruns give the same files.
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "onnx")
ML = helper.make_opsetid("ai.onnx.ml", 3)
CORE = helper.make_opsetid("", 13)


def f32(values):
    """Rounds to float32 and back: the exact values a float attribute or tensor stores."""
    return np.asarray(values, dtype=np.float32).astype(np.float64)


def save(model, name, expected=None, check=True):
    if check:  # onnx 1.12's checker does not know ai.onnx.ml 5 (TreeEnsemble)
        onnx.checker.check_model(model)
    path = os.path.join(OUT, name + ".onnx")
    data = model.SerializeToString()
    with open(path, "wb") as f:
        f.write(data)
    if expected is not None:
        with open(os.path.join(OUT, name + ".json"), "w") as f:
            json.dump(expected, f, indent=1)
            f.write("\n")
    assert len(data) < 50_000, name
    return data


def rows(a):
    return [[float(v) for v in r] for r in np.asarray(a, dtype=np.float64)]


# --- (a) torch MLPs -------------------------------------------------------------------------------

def torch_mlps():
    import torch

    torch.manual_seed(7)
    x = torch.rand(8, 4) * 4 - 2  # float32 inputs, written exactly
    for name, sigmoid in (("mlp_torch", False), ("mlp_torch_sigmoid", True)):
        layers = [torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1 if sigmoid else 3)]
        logits_net = torch.nn.Sequential(*layers)
        net = torch.nn.Sequential(*layers, torch.nn.Sigmoid()) if sigmoid else logits_net
        net.eval()
        path = os.path.join(OUT, name + ".onnx")
        torch.onnx.export(net, x[:1], path, input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": {0: "N"}, "y": {0: "N"}}, opset_version=13)
        with torch.no_grad():
            y = net(x).numpy()
            z = logits_net(x).numpy()
        # Labels by the decision rule: argmax, or logit > 0 (sigmoid > 0.5) for one output.
        labels = [int(v > 0) for v in z[:, 0]] if sigmoid else [int(v) for v in np.argmax(z, axis=1)]
        with open(os.path.join(OUT, name + ".json"), "w") as f:
            json.dump({"inputs": rows(x.numpy()), "outputs": rows(y), "labels": labels, "float32": True}, f, indent=1)
            f.write("\n")
        assert os.path.getsize(path) < 50_000


# --- (b) trees ------------------------------------------------------------------------------------

# A tree is a list of nodes (mode, feature, threshold, true_id, false_id) with node id = position;
# leaves carry {class or target: weight}.
def walk(tree, x):
    i = 0
    while True:
        mode, feat, thr, t, f = tree["nodes"][i][:5]
        if mode == "LEAF":
            return i
        v = x[feat]
        thr = f32(thr)
        go = {"BRANCH_LEQ": v <= thr, "BRANCH_LT": v < thr, "BRANCH_GTE": v >= thr, "BRANCH_GT": v > thr,
              "BRANCH_EQ": v == thr, "BRANCH_NEQ": v != thr}[mode]
        i = t if go else f


def tree_attrs(trees, prefix):
    a = {k: [] for k in ("nodes_treeids", "nodes_nodeids", "nodes_featureids", "nodes_modes", "nodes_values",
                         "nodes_truenodeids", "nodes_falsenodeids")}
    w = {prefix + k: [] for k in ("treeids", "nodeids", "ids", "weights")}
    for t, tree in enumerate(trees):
        for i, (mode, feat, thr, tr, fa) in enumerate(tree["nodes"]):
            a["nodes_treeids"].append(t)
            a["nodes_nodeids"].append(i)
            a["nodes_featureids"].append(feat)
            a["nodes_modes"].append(mode)
            a["nodes_values"].append(thr)
            a["nodes_truenodeids"].append(tr)
            a["nodes_falsenodeids"].append(fa)
        for node, weights in tree["leaves"].items():
            for target, weight in weights.items():
                w[prefix + "treeids"].append(t)
                w[prefix + "nodeids"].append(node)
                w[prefix + "ids"].append(target)
                w[prefix + "weights"].append(weight)
    a.update(w)
    return a


def tree_scores(trees, x, n_out, aggregate="SUM", base=None):
    out = []
    for row in f32(x):
        acc = [0.0] * n_out
        seen = [False] * n_out
        for tree in trees:
            leaf = walk(tree, row)
            for target, weight in tree["leaves"].get(leaf, {}).items():
                w = float(f32(weight))
                if aggregate in ("MIN", "MAX"):
                    acc[target] = w if not seen[target] else (min if aggregate == "MIN" else max)(acc[target], w)
                else:
                    acc[target] += w
                seen[target] = True
        if aggregate == "AVERAGE":
            acc = [a / len(trees) for a in acc]
        if base is not None:
            acc = [a + float(f32(b)) for a, b in zip(acc, base)]
        out.append(acc)
    return np.array(out)


L, LEQ, LT, GTE, GT, EQ = "LEAF", "BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ"


def tree_inputs(rng, n_features, n_rows, thresholds):
    x = f32(rng.uniform(-2, 2, size=(n_rows, n_features)))
    # Some rows sit exactly on thresholds, to pin down <= versus <.
    for r in range(min(len(thresholds), n_rows)):
        feat, thr = thresholds[r]
        x[r, feat] = f32(thr)
    return x


def tree_models():
    rng = np.random.default_rng(11)
    # Classifier: 3 classes, labels 10/20/30, two trees of depth 2-3, node ids listed out of order
    # in the second tree (parents after children) to exercise renumbering.
    trees = [
        {"nodes": [(LEQ, 0, 0.5, 1, 2), (LT, 1, -0.25, 3, 4), (GTE, 2, 1.0, 5, 6), (L, 0, 0, 0, 0), (L, 0, 0, 0, 0),
                   (L, 0, 0, 0, 0), (L, 0, 0, 0, 0)],
         "leaves": {3: {0: 0.7, 1: 0.2, 2: 0.1}, 4: {0: 0.1, 1: 0.8, 2: 0.1}, 5: {2: 0.9, 0: 0.1},
                    6: {1: 0.5, 2: 0.5}}},
        {"nodes": [(GT, 3, 0.0, 1, 2), (L, 0, 0, 0, 0), (EQ, 0, 1.5, 3, 4), (L, 0, 0, 0, 0), (LEQ, 1, 1.25, 5, 6),
                   (L, 0, 0, 0, 0), (L, 0, 0, 0, 0)],
         "leaves": {1: {0: 0.3}, 3: {1: 1.0}, 5: {2: 0.6, 1: 0.4}, 6: {0: 0.25, 2: 0.75}}},
    ]
    base = [0.05, -0.1, 0.0]
    attrs = tree_attrs(trees, "class_")
    x = tree_inputs(rng, 4, 12, [(0, 0.5), (1, -0.25), (2, 1.0), (3, 0.0), (0, 1.5), (1, 1.25)])
    x[6, 3] = 1.0
    x[6, 0] = 1.5  # reaches the EQ branch
    scores = tree_scores(trees, x, 3, base=base)
    node = helper.make_node("TreeEnsembleClassifier", ["X"], ["label", "probabilities"], name="forest",
                            domain="ai.onnx.ml", classlabels_int64s=[10, 20, 30], base_values=base,
                            post_transform="NONE", **attrs)
    graph = helper.make_graph(
        [node], "tree_classifier", [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("label", TensorProto.INT64, ["N"]),
         helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, ["N", 3])])
    save(helper.make_model(graph, opset_imports=[CORE, ML]), "tree_classifier",
         {"inputs": rows(x), "outputs": rows(scores), "labels": [int(v) for v in np.argmax(scores, axis=1)],
          "class_labels": ["10", "20", "30"]})

    # Binary classifier with one score (class_ids all 0, margins, LOGISTIC), as gradient boosting
    # exports write it: scores [sigmoid(-s), sigmoid(s)], label 1 iff s > 0.
    btrees = [
        {"nodes": [(LEQ, 1, 0.0, 1, 2), (L, 0, 0, 0, 0), (LEQ, 0, -1.0, 3, 4), (L, 0, 0, 0, 0), (L, 0, 0, 0, 0)],
         "leaves": {1: {0: -0.8}, 3: {0: 0.4}, 4: {0: 1.1}}},
        {"nodes": [(GT, 2, 0.75, 1, 2), (L, 0, 0, 0, 0), (L, 0, 0, 0, 0)], "leaves": {1: {0: 0.6}, 2: {0: -0.3}}},
    ]
    battrs = tree_attrs(btrees, "class_")
    bx = tree_inputs(rng, 3, 10, [(1, 0.0), (0, -1.0), (2, 0.75)])
    s = tree_scores(btrees, bx, 1, base=[0.2])[:, 0]
    bscores = np.stack([1 / (1 + np.exp(s)), 1 / (1 + np.exp(-s))], axis=1)
    node = helper.make_node("TreeEnsembleClassifier", ["X"], ["label", "probabilities"], name="gbm",
                            domain="ai.onnx.ml", classlabels_strings=["no", "yes"], base_values=[0.2],
                            post_transform="LOGISTIC", **battrs)
    graph = helper.make_graph(
        [node], "tree_binary", [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", 3])],
        [helper.make_tensor_value_info("label", TensorProto.STRING, ["N"]),
         helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, ["N", 2])])
    save(helper.make_model(graph, opset_imports=[CORE, ML]), "tree_binary",
         {"inputs": rows(bx), "outputs": rows(bscores), "labels": [int(v > 0) for v in s],
          "class_labels": ["no", "yes"]})

    # Regressor: 2 targets, 3 trees, AVERAGE, base values.
    rtrees = [
        {"nodes": [(LEQ, 0, 0.0, 1, 2), (LEQ, 1, 0.5, 3, 4), (L, 0, 0, 0, 0), (L, 0, 0, 0, 0), (L, 0, 0, 0, 0)],
         "leaves": {2: {0: 1.5, 1: -0.5}, 3: {0: -1.0}, 4: {1: 2.0}}},
        {"nodes": [(LT, 2, -0.5, 1, 2), (L, 0, 0, 0, 0), (GTE, 0, 1.0, 3, 4), (L, 0, 0, 0, 0), (L, 0, 0, 0, 0)],
         "leaves": {1: {0: 0.25, 1: 0.25}, 3: {0: 3.0}, 4: {1: -1.75}}},
        {"nodes": [(GT, 1, -1.0, 1, 2), (L, 0, 0, 0, 0), (L, 0, 0, 0, 0)], "leaves": {1: {0: 0.1}, 2: {1: 0.2}}},
    ]
    rattrs = tree_attrs(rtrees, "target_")
    rx = tree_inputs(rng, 3, 12, [(0, 0.0), (1, 0.5), (2, -0.5), (0, 1.0), (1, -1.0)])
    rbase = [0.5, -0.25]
    ry = tree_scores(rtrees, rx, 2, aggregate="AVERAGE", base=rbase)
    node = helper.make_node("TreeEnsembleRegressor", ["X"], ["Y"], name="regressor", domain="ai.onnx.ml",
                            n_targets=2, aggregate_function="AVERAGE", base_values=rbase, **rattrs)
    graph = helper.make_graph([node], "tree_regressor",
                              [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", 3])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["N", 2])])
    save(helper.make_model(graph, opset_imports=[CORE, ML]), "tree_regressor",
         {"inputs": rows(rx), "outputs": rows(ry), "labels": [int(v) for v in np.argmax(ry, axis=1)]})


# --- (b2) ai.onnx.ml 5 TreeEnsemble --------------------------------------------------------------

ML5 = helper.make_opsetid("ai.onnx.ml", 5)
V5_LEQ, V5_LT, V5_GTE, V5_GT, V5_EQ, V5_NEQ, V5_MEMBER = range(7)


def v5_node(attrs, name, dtype=np.float32):
    """A TreeEnsemble node from plain lists: the tensor attributes are made here (onnx 1.12's
    make_node does not know the op, so nothing checks them)."""
    a = dict(attrs)
    a["nodes_splits"] = numpy_helper.from_array(np.asarray(a["nodes_splits"], dtype=dtype), "nodes_splits")
    a["nodes_modes"] = numpy_helper.from_array(np.asarray(a["nodes_modes"], dtype=np.uint8), "nodes_modes")
    a["leaf_weights"] = numpy_helper.from_array(np.asarray(a["leaf_weights"], dtype=dtype), "leaf_weights")
    if "membership_values" in a:
        a["membership_values"] = numpy_helper.from_array(np.asarray(a["membership_values"], dtype=dtype),
                                                         "membership_values")
    return helper.make_node("TreeEnsemble", ["X"], ["Y"], name=name, domain="ai.onnx.ml", **a)


def v5_model(attrs, name, n_features, n_targets, dtype=np.float32, ml=ML5):
    elem = TensorProto.FLOAT if dtype == np.float32 else TensorProto.DOUBLE
    graph = helper.make_graph([v5_node(attrs, name, dtype)], name,
                              [helper.make_tensor_value_info("X", elem, ["N", n_features])],
                              [helper.make_tensor_value_info("Y", elem, ["N", n_targets])])
    return helper.make_model(graph, opset_imports=[CORE, ml])


def v5_save(attrs, name, x, n_targets, dtype=np.float32, labels=None):
    import onnx_numpy_eval as ev

    model = v5_model(attrs, name, x.shape[1], n_targets, dtype)
    y = ev.run(model, {"X": x.astype(dtype)})["Y"]
    if labels is None:
        labels = [int(v) for v in np.argmax(y, axis=1)]
    # NaN inputs are written as null (JSON has no NaN).
    inputs = [[None if np.isnan(v) else float(v) for v in r] for r in np.asarray(x, dtype=np.float64)]
    save(model, name, {"inputs": inputs, "outputs": rows(y), "labels": labels}, check=False)


def tree_ensemble_v5_models():
    rng = np.random.default_rng(23)
    # Four trees over 4 features (feature 2 categorical 0..5), interior nodes stored out of order:
    #   tree 0, root 3: 2 in {1, 3, 4} (NaN true) ? (0 <= 0.25 ? leaf 0 : leaf 1) : leaf 2
    #   tree 1, root 1: 3 > -0.5 (NaN true) ? (1 != 0.5 ? leaf 3 : leaf 4)
    #                                       : (2 in {0, 5} ? leaf 5 : (0 >= -1 ? leaf 6 : leaf 7))
    #   tree 2, root 6: one leaf (both branches to leaf 8)
    #   tree 3, root 7: 2 == 2 ? leaf 9 : (3 < 1 ? leaf 10 : leaf 11)
    # The sets are listed in node order (node 2's first), unsorted, with a repeat, no final NaN.
    attrs = {
        "tree_roots": [3, 1, 6, 7],
        "nodes_featureids": [0, 3, 2, 2, 1, 0, 1, 2, 3],
        "nodes_splits": [0.25, -0.5, 0.0, 0.0, 0.5, -1.0, 0.0, 2.0, 1.0],
        "nodes_modes": [V5_LEQ, V5_GT, V5_MEMBER, V5_MEMBER, V5_NEQ, V5_GTE, V5_LT, V5_EQ, V5_LT],
        "nodes_truenodeids": [0, 4, 5, 0, 3, 6, 8, 9, 10],
        "nodes_trueleafs": [1, 0, 1, 0, 1, 1, 1, 1, 1],
        "nodes_falsenodeids": [1, 2, 5, 2, 4, 7, 8, 8, 11],
        "nodes_falseleafs": [1, 0, 0, 1, 1, 1, 1, 0, 1],
        "nodes_missing_value_tracks_true": [0, 1, 0, 1, 0, 0, 0, 0, 0],
        "membership_values": [5.0, 0.0, np.nan, 4.0, 1.0, 3.0, 1.0],
        "leaf_targetids": [0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2],
        "leaf_weights": [0.5, 1.25, -0.75, 0.3, -0.2, 1.9, 0.45, -0.6, 0.05, 0.15, 0.7, -0.35],
        "n_targets": 3,
        "aggregate_function": 1,
        "post_transform": 0,
    }
    n = 48
    x = np.column_stack([rng.uniform(-2, 2, n), rng.uniform(-1, 2, n), rng.integers(0, 7, n),
                         rng.uniform(-2, 2, n)])
    x[:8, 0] = [0.25, -1.0, 0.25, -1.0, 0.0, 1.0, -2.0, 0.3]  # on the splits
    x[8:12, 1] = 0.5
    x[12:16, 3] = [-0.5, 1.0, -0.5, 1.0]
    for r, c in [(16, 0), (17, 1), (18, 2), (19, 3), (20, 2), (20, 3), (21, 0), (21, 2), (22, 3), (23, 2)]:
        x[r, c] = np.nan
    x = f32(x)
    v5_save(attrs, "tree_ensemble_v5", x, 3)
    v5_save(dict(attrs, aggregate_function=2), "tree_ensemble_v5_min", x, 3)

    # One target in double, AVERAGE of two trees, LOGISTIC: label 1 iff the average > 0. The
    # membership list ends with a NaN; a set holds a non-integer value.
    battrs = {
        "tree_roots": [0, 2],
        "nodes_featureids": [1, 0, 2],
        "nodes_splits": [0.0, 0.1, 0.0],
        "nodes_modes": [V5_MEMBER, V5_LEQ, V5_MEMBER],
        "nodes_truenodeids": [0, 1, 3],
        "nodes_trueleafs": [1, 1, 1],
        "nodes_falsenodeids": [1, 2, 4],
        "nodes_falseleafs": [0, 1, 1],
        "nodes_missing_value_tracks_true": [1, 0, 0],
        "membership_values": [2.0, 7.0, 0.5, np.nan, 1.0, np.nan],
        "leaf_targetids": [0, 0, 0, 0, 0],
        "leaf_weights": [1.5, -0.4, 0.6, -1.1, 0.35],
        "n_targets": 1,
        "aggregate_function": 0,
        "post_transform": 2,
    }
    bx = np.column_stack([rng.integers(0, 9, 30) * 0.5, rng.uniform(-1, 1, 30), rng.integers(0, 3, 30)])
    bx[:3, 0] = 0.1
    bx[3, 1] = np.nan
    bx[4, 2] = np.nan
    bx[5, 1] = 0.5
    import onnx_numpy_eval as ev

    raw = ev.run(v5_model(dict(battrs, post_transform=0), "raw", 3, 1, np.float64), {"X": bx})["Y"][:, 0]
    v5_save(battrs, "tree_ensemble_v5_binary", bx, 1, np.float64, labels=[int(v > 0) for v in raw])

    # Malformed variants of the first model: each must be an InputError naming what is wrong.
    def bad(name, ml=ML5, **changes):
        a = dict(attrs)
        for k, v in changes.items():
            a[k] = v
        model = v5_model(a, "tree_ensemble_v5_bad_" + name, 4, 3, ml=ml)
        save(model, "tree_ensemble_v5_bad_" + name, check=False)

    def edit(key, i, v):
        out = list(attrs[key])
        out[i] = v
        return out

    bad("child", nodes_truenodeids=edit("nodes_truenodeids", 1, 99))
    bad("leaf", nodes_falsenodeids=edit("nodes_falsenodeids", 0, 12))
    bad("two_parents", nodes_truenodeids=edit("nodes_truenodeids", 5, 4), nodes_trueleafs=edit("nodes_trueleafs", 5, 0))
    bad("cycle", nodes_truenodeids=edit("nodes_truenodeids", 4, 1), nodes_trueleafs=edit("nodes_trueleafs", 4, 0))
    bad("nan_split", nodes_splits=edit("nodes_splits", 0, np.nan))
    bad("mode", nodes_modes=edit("nodes_modes", 0, 7))
    bad("sets", membership_values=[5.0, 0.0])
    bad("target", leaf_targetids=edit("leaf_targetids", 2, 3))
    bad("sizes", nodes_falseleafs=attrs["nodes_falseleafs"][:-1])
    bad("root", tree_roots=[3, 1, 6, 7, 42])
    bad("feature", nodes_featureids=edit("nodes_featureids", 4, 4))
    bad("unreached", tree_roots=[3, 1, 6])
    bad("opset", ml=ML)


# --- (c) linear classifiers -----------------------------------------------------------------------

def softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def linear_models():
    rng = np.random.default_rng(5)
    w = rng.normal(size=(3, 4))
    b = rng.normal(size=3)
    x = f32(rng.uniform(-2, 2, size=(10, 4)))
    z = x @ f32(w).T + f32(b)
    node = helper.make_node("LinearClassifier", ["X"], ["label", "probabilities"], name="linear",
                            domain="ai.onnx.ml", coefficients=w.flatten().tolist(), intercepts=b.tolist(),
                            classlabels_strings=["low", "mid", "high"], post_transform="SOFTMAX", multi_class=1)
    graph = helper.make_graph(
        [node], "linear_classifier", [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("label", TensorProto.STRING, ["N"]),
         helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, ["N", 3])])
    save(helper.make_model(graph, opset_imports=[CORE, ML]), "linear_classifier",
         {"inputs": rows(x), "outputs": rows(softmax(z)), "labels": [int(v) for v in np.argmax(z, axis=1)],
          "class_labels": ["low", "mid", "high"]})

    # Binary with one coefficient row, no post_transform: onnxruntime reports [1 - s, s] and the
    # label is 1 iff s > 0.
    w1 = rng.normal(size=4)
    b1 = 0.125
    s = x @ f32(w1) + float(f32(b1))
    node = helper.make_node("LinearClassifier", ["X"], ["label", "probabilities"], name="linear_binary",
                            domain="ai.onnx.ml", coefficients=w1.tolist(), intercepts=[b1],
                            classlabels_ints=[0, 1], post_transform="NONE")
    graph = helper.make_graph(
        [node], "linear_binary", [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("label", TensorProto.INT64, ["N"]),
         helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, ["N", 2])])
    save(helper.make_model(graph, opset_imports=[CORE, ML]), "linear_binary",
         {"inputs": rows(x), "outputs": rows(np.stack([1 - s, s], axis=1)), "labels": [int(v > 0) for v in s],
          "class_labels": ["0", "1"]})


# --- (d) ops --------------------------------------------------------------------------------------

def ops_model():
    rng = np.random.default_rng(3)
    table = f32(rng.normal(size=(5, 2)))
    c = f32([0.25, -0.5])

    def const(name, values, dtype=np.float32):
        return numpy_helper.from_array(np.asarray(values, dtype=dtype), name)

    def i64(name, values):
        return const(name, values, np.int64)

    inits = [const("table", table), const("c", c), const("two", [2.0]), const("half", [0.5]),
             i64("s0", [0]), i64("e1", [1]), i64("s1", [1]), i64("e3", [3]), i64("e4", [4]), i64("s3", [3]),
             i64("e2", [2]), i64("ax1", [1]), i64("pick", [4, 0, 2])]
    n = helper.make_node
    nodes = [
        n("Slice", ["x", "s0", "e1", "ax1"], ["x0"], name="slice_x0"),                 # [N, 1]
        n("Squeeze", ["x0", "ax1"], ["x0s"], name="squeeze"),                         # [N]
        n("Cast", ["x0s"], ["idx"], name="to_index", to=TensorProto.INT64),
        n("Gather", ["table", "idx"], ["row"], name="lookup", axis=0),               # [N, 2]
        n("Slice", ["x", "s1", "e3", "ax1"], ["x12"], name="slice_x12"),              # [N, 2]
        n("Slice", ["x", "s3", "e4", "ax1"], ["x3"], name="slice_x3"),                # [N, 1]
        n("Slice", ["x", "s1", "e2", "ax1"], ["x1"], name="slice_x1"),
        n("Slice", ["x", "e2", "s3", "ax1"], ["x2"], name="slice_x2"),
        n("Sub", ["x12", "c"], ["a"], name="sub"),
        n("Mul", ["a", "x3"], ["b"], name="mul"),
        n("Div", ["b", "two"], ["d"], name="div"),
        n("Less", ["x1", "x2"], ["cond"], name="less"),
        n("LeakyRelu", ["d"], ["leaky"], name="leaky", alpha=0.2),
        n("Where", ["cond", "d", "leaky"], ["w"], name="where"),
        n("Tanh", ["w"], ["t"], name="tanh"),
        n("Greater", ["x3", "half"], ["g"], name="greater"),
        n("Cast", ["g"], ["gf"], name="g_float", to=TensorProto.FLOAT),
        n("Concat", ["row", "t", "gf"], ["cat"], name="concat", axis=1),              # [N, 5]
        n("Gather", ["cat", "pick"], ["sel"], name="select", axis=1),                  # [N, 3]
        n("ArgMax", ["cat"], ["am"], name="argmax", axis=1, keepdims=1),              # [N, 1]
        n("Cast", ["am"], ["amf"], name="am_float", to=TensorProto.FLOAT),
        n("Concat", ["sel", "amf"], ["y"], name="out", axis=-1),                      # [N, 4]
    ]
    graph = helper.make_graph(nodes, "ops", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])], initializer=inits)
    x = f32(rng.uniform(-2, 2, size=(12, 4)))
    x[:, 0] = rng.integers(0, 5, size=12)  # table rows
    x[3, 2] = x[3, 1]                       # Less ties
    x[4, 3] = 0.5                           # Greater ties
    row = table[x[:, 0].astype(int)]
    d = (x[:, 1:3] - c) * x[:, 3:4] / 2.0
    leaky = np.where(d > 0, d, float(f32(0.2)) * d)
    t = np.tanh(np.where(x[:, 1:2] < x[:, 2:3], d, leaky))
    cat = np.concatenate([row, t, (x[:, 3:4] > 0.5).astype(np.float64)], axis=1)
    y = np.concatenate([cat[:, [4, 0, 2]], np.argmax(cat, axis=1)[:, None].astype(np.float64)], axis=1)
    save(helper.make_model(graph, opset_imports=[CORE]), "ops",
         {"inputs": rows(x), "outputs": rows(y), "labels": [int(v) for v in np.argmax(y, axis=1)]})


# --- (e) malformed --------------------------------------------------------------------------------

def malformed(valid_bytes):
    n = helper.make_node
    # A Conv node: well-formed ONNX that witness does not support.
    w = numpy_helper.from_array(np.ones((2, 1, 3, 3), dtype=np.float32), "w")
    graph = helper.make_graph(
        [n("Conv", ["x", "w"], ["y"], name="conv_1")], "unsupported",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 1, 5, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 2, 3, 3])], initializer=[w])
    save(helper.make_model(graph, opset_imports=[CORE]), "unsupported_op")

    # Gemm whose B has 5 rows for 4 input columns.
    b = numpy_helper.from_array(np.ones((5, 3), dtype=np.float32), "B")
    graph = helper.make_graph(
        [n("Gemm", ["x", "B"], ["y"], name="gemm_bad")], "bad_shape",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])], initializer=[b])
    save(helper.make_model(graph, opset_imports=[CORE]), "bad_shape")

    wn = np.ones((3, 4), dtype=np.float32)
    wn[1, 2] = np.nan
    graph = helper.make_graph(
        [n("Gemm", ["x", "W"], ["y"], name="gemm_nan", transB=1)], "nan_weight",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])],
        initializer=[numpy_helper.from_array(wn, "W")])
    save(helper.make_model(graph, opset_imports=[CORE]), "nan_weight")

    with open(os.path.join(OUT, "truncated.onnx"), "wb") as f:
        f.write(valid_bytes[: len(valid_bytes) // 2])
    with open(os.path.join(OUT, "garbage.onnx"), "wb") as f:
        f.write(np.random.default_rng(1).integers(0, 256, size=1000, dtype=np.uint8).tobytes())


def main():
    os.makedirs(OUT, exist_ok=True)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # onnx_numpy_eval
    if sys.argv[1:] == ["tree_ensemble_v5"]:  # only these: the others need torch
        tree_ensemble_v5_models()
        return 0
    torch_mlps()
    tree_models()
    tree_ensemble_v5_models()
    linear_models()
    ops_model()
    with open(os.path.join(OUT, "mlp_torch.onnx"), "rb") as f:
        malformed(f.read())
    for name in sorted(os.listdir(OUT)):
        size = os.path.getsize(os.path.join(OUT, name))
        assert size < 50_000, name
        print(f"{size:7d}  {name}")


if __name__ == "__main__":
    sys.exit(main())
