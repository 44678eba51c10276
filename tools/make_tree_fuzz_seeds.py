#!/usr/bin/python3
"""Writes the hand-made seeds of the tree-reader fuzz targets (fuzz/README.md):

    fuzz/corpus/xgboost_json/seed_*.json   XGBoost 1.7 Booster.save_model JSON
    fuzz/corpus/xgboost_ubj/seed_*.ubj     the same documents as XGBoost writes UBJSON
    fuzz/corpus/lightgbm_text/seed_*.txt   LightGBM model.txt

Small models, one feature of the readers each: every objective witness reads, numeric and
categorical splits, default directions, LightGBM's three missing-value types, a one-leaf tree,
average_output. XGBoost's UBJSON is mimicked as it writes it: keys and strings with int64 ('L')
lengths, float32 ('$d'), int32 ('$l') and uint8 ('$U') typed arrays, other arrays counted ('#L').
No XGBoost or LightGBM is needed (neither is packaged here).

    /usr/bin/python3 tools/make_tree_fuzz_seeds.py      # rewrites the seed_* files
"""
import json
import math
import os
import struct

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


class F32(list):
    """A float32 array (UBJSON '[$d#')."""


class I32(list):
    """An int32 array (UBJSON '[$l#')."""


class U8(list):
    """A uint8 array (UBJSON '[$U#')."""


def ubj(v):
    if isinstance(v, dict):
        out = b"{"
        for k, x in v.items():
            kb = k.encode()
            out += b"L" + struct.pack(">q", len(kb)) + kb + ubj(x)
        return out + b"}"
    if isinstance(v, F32):
        return b"[$d#L" + struct.pack(">q", len(v)) + b"".join(struct.pack(">f", x) for x in v)
    if isinstance(v, I32):
        return b"[$l#L" + struct.pack(">q", len(v)) + b"".join(struct.pack(">i", x) for x in v)
    if isinstance(v, U8):
        return b"[$U#L" + struct.pack(">q", len(v)) + bytes(v)
    if isinstance(v, list):
        return b"[#L" + struct.pack(">q", len(v)) + b"".join(ubj(x) for x in v)
    if isinstance(v, bool):
        return b"T" if v else b"F"
    if isinstance(v, int):
        if -128 <= v < 128:
            return b"i" + struct.pack(">b", v)
        if -(2 ** 31) <= v < 2 ** 31:
            return b"l" + struct.pack(">i", v)
        return b"L" + struct.pack(">q", v)
    if isinstance(v, float):
        return b"d" + struct.pack(">f", v)
    if isinstance(v, str):
        b = v.encode()
        return b"SL" + struct.pack(">q", len(b)) + b
    raise TypeError(type(v))


def xgb_json(v):
    """As XGBoost writes JSON: compact, floats with an exponent, non-finite floats as bare words."""
    if isinstance(v, dict):
        return "{" + ",".join(json.dumps(k) + ":" + xgb_json(x) for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ",".join(xgb_json(x) for x in v) + "]"
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        return ("%.8E" % v).replace("E+00", "E0").replace("E+0", "E").replace("E-0", "E-")
    return json.dumps(v)


def tree(i, left, right, feature, cond, default_left, cats=None):
    """One XGBoost tree; `cats` maps a categorical node to its categories."""
    n = len(left)
    cats = cats or {}
    nodes = sorted(cats)
    flat, segments, sizes = [], [], []
    for k in nodes:
        segments.append(len(flat))
        sizes.append(len(cats[k]))
        flat.extend(cats[k])
    parents = [2147483647] + [0] * (n - 1)
    for p in range(n):
        for c in (left[p], right[p]):
            if c >= 0:
                parents[c] = p
    return {
        "base_weights": F32([0.0] * n),
        "categories": I32(flat),
        "categories_nodes": I32(nodes),
        "categories_segments": [int(s) for s in segments],
        "categories_sizes": [int(s) for s in sizes],
        "default_left": U8(default_left),
        "id": i,
        "left_children": I32(left),
        "loss_changes": F32([0.0] * n),
        "parents": I32(parents),
        "right_children": I32(right),
        "split_conditions": F32(cond),
        "split_indices": I32(feature),
        "split_type": U8([1 if k in cats else 0 for k in range(n)]),
        "sum_hessian": F32([1.0] * n),
        "tree_param": {"num_deleted": "0", "num_feature": str(max(feature) + 1), "num_nodes": str(n),
                       "size_leaf_vector": "0"},
    }


def learner(trees, tree_info, objective, n_features, num_class=0, base_score="5E-1", names=True):
    doc = {
        "learner": {
            "attributes": {},
            "feature_names": ["f%d" % i for i in range(n_features)] if names else [],
            "feature_types": ["float"] * n_features if names else [],
            "gradient_booster": {
                "model": {
                    "gbtree_model_param": {"num_parallel_tree": "1", "num_trees": str(len(trees)),
                                           "size_leaf_vector": "0"},
                    "tree_info": tree_info,
                    "trees": trees,
                },
                "name": "gbtree",
            },
            "learner_model_param": {"base_score": base_score, "num_class": str(num_class),
                                    "num_feature": str(n_features), "num_target": "1"},
            "objective": {"name": objective},
        },
        "version": [1, 7, 4],
    }
    if objective.startswith("multi:"):
        doc["learner"]["objective"]["softmax_multiclass_param"] = {"num_class": str(num_class)}
    else:
        doc["learner"]["objective"]["reg_loss_param"] = {"scale_pos_weight": "1"}
    return doc


def xgboost_seeds():
    nan = float("nan")
    two = [tree(0, [1, 3, -1, -1, -1], [2, 4, -1, -1, -1], [0, 1, 0, 0, 0], [0.5, -1.25, 0.3, -0.4, 0.1],
                [1, 0, 0, 0, 0]),
           tree(1, [1, -1, -1], [2, -1, -1], [1, 0, 0], [2.0, 0.2, -0.2], [0, 0, 0])]
    multi = [tree(k, [1, -1, -1], [2, -1, -1], [k % 2, 0, 0], [0.5 * k, 0.1 * k, -0.1], [k % 2, 0, 0])
             for k in range(3)]
    cat = [tree(0, [1, -1, 3, -1, -1], [2, -1, 4, -1, -1], [0, 0, 1, 0, 0], [nan, -0.5, 1.5, 0.25, 0.75],
                [1, 0, 0, 0, 0], cats={0: [1, 3, 4]})]
    leaf = [tree(0, [-1], [-1], [0], [0.125], [0])]
    return {
        "binary_logistic": learner(two, [0, 0], "binary:logistic", 2),
        "multi_softprob": learner(multi, [0, 1, 2], "multi:softprob", 2, num_class=3),
        "multi_softmax": learner(multi, [0, 1, 2], "multi:softmax", 2, num_class=3, names=False),
        "categorical": learner(cat, [0], "binary:logistic", 2, base_score="2.5E-1"),
        "logitraw": learner(two, [0, 0], "binary:logitraw", 2, base_score="0E0"),
        "hinge_leaf": learner(leaf, [0], "binary:hinge", 1, base_score="1E0"),
        "reg_logistic": learner(two + leaf, [0, 0, 0], "reg:logistic", 2, base_score="7.5E-1"),
    }


LGB_HEAD = ("tree\nversion=v4\nnum_class={nc}\nnum_tree_per_iteration={per}\nlabel_index=0\n"
            "max_feature_idx={mf}\nobjective={obj}\nfeature_names={names}\nfeature_infos={infos}\n"
            "tree_sizes={sizes}\n{extra}\n")


def lgb_tree(i, leaves, split_feature=(), threshold=(), decision_type=(), left=(), right=(), values=(),
             cat_boundaries=None, cat_threshold=None):
    lines = ["Tree=%d" % i, "num_leaves=%d" % leaves, "num_cat=%d" % (len(cat_boundaries) - 1 if cat_boundaries else 0)]
    if leaves > 1:
        lines += ["split_feature=" + " ".join(map(str, split_feature)),
                  "split_gain=" + " ".join("1" for _ in split_feature),
                  "threshold=" + " ".join(map(repr, threshold)),
                  "decision_type=" + " ".join(map(str, decision_type)),
                  "left_child=" + " ".join(map(str, left)),
                  "right_child=" + " ".join(map(str, right))]
    lines += ["leaf_value=" + " ".join(map(repr, values)),
              "leaf_weight=" + " ".join("1" for _ in values),
              "leaf_count=" + " ".join("1" for _ in values)]
    if leaves > 1:
        lines += ["internal_value=" + " ".join("0" for _ in split_feature),
                  "internal_weight=" + " ".join("0" for _ in split_feature),
                  "internal_count=" + " ".join("1" for _ in split_feature)]
    if cat_boundaries:
        lines += ["cat_boundaries=" + " ".join(map(str, cat_boundaries)),
                  "cat_threshold=" + " ".join(map(str, cat_threshold))]
    lines += ["is_linear=0", "shrinkage=0.1", ""]
    return "\n".join(lines) + "\n"


def lgb_model(trees, obj, n_features, nc=1, per=1, extra=""):
    names = " ".join("f%d" % i for i in range(n_features))
    infos = " ".join("[-10:10]" for _ in range(n_features))
    sizes = " ".join(str(len(t)) for t in trees)
    head = LGB_HEAD.format(nc=nc, per=per, mf=n_features - 1, obj=obj, names=names, infos=infos, sizes=sizes,
                           extra=extra)
    return head + "".join(trees) + "end of trees\n\nfeature_importances:\nf0=1\n\nparameters:\n[boosting: gbdt]\n" \
        "end of parameters\n\npandas_categorical:null\n"


def lightgbm_seeds():
    # decision_type: bit 0 categorical, bit 1 default left, bits 2-3 missing type None/Zero/NaN.
    missing = lgb_tree(0, 4, [0, 1, 0], [0.5, 1.0000000180025095e-35, -2.5], [2, 4, 10], [1, -1, -2], [2, -3, -4],
                       [0.1, -0.2, 0.3, -0.4])
    zero_band = lgb_tree(1, 3, [1, 0], [-1e-36, 0.0], [6, 8], [-1, -2], [1, -3], [0.05, -0.05, 0.15])
    cat = lgb_tree(0, 3, [0, 1], [0, 1], [1, 9], [-1, -2], [1, -3], [0.2, -0.3, 0.4], [0, 1, 3],
                   [0b10110, 1, 2 ** 31])
    leaf = lgb_tree(1, 1, values=[0.25])
    per_class = [lgb_tree(k, 2, [k % 2], [0.5 * k], [2], [-1], [-2], [0.1 * k, -0.1 * k]) for k in range(6)]
    return {
        "binary_missing": lgb_model([missing, zero_band], "binary sigmoid:1", 2),
        "binary_categorical": lgb_model([cat, leaf], "binary sigmoid:2.5", 2),
        "cross_entropy": lgb_model([missing, leaf], "cross_entropy", 2),
        "multiclass": lgb_model(per_class, "multiclass num_class:3", 2, nc=3, per=3),
        "multiclassova": lgb_model(per_class, "multiclassova num_class:3 sigmoid:1.5", 2, nc=3, per=3),
        "average_output": lgb_model([missing, zero_band], "binary sigmoid:1", 2, extra="average_output\n"),
    }


def main():
    xgb = xgboost_seeds()
    for name, doc in xgb.items():
        with open(os.path.join(ROOT, "fuzz/corpus/xgboost_json/seed_%s.json" % name), "w") as f:
            f.write(xgb_json(doc))
        with open(os.path.join(ROOT, "fuzz/corpus/xgboost_ubj/seed_%s.ubj" % name), "wb") as f:
            f.write(ubj(doc))
    for name, text in lightgbm_seeds().items():
        with open(os.path.join(ROOT, "fuzz/corpus/lightgbm_text/seed_%s.txt" % name), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
