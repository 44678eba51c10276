#!/usr/bin/python3
"""Writes tests/fixtures/trees/: small seeded XGBoost 1.7 models (JSON and UBJSON) trained on rows
of benchmarks/fairify/data/german.csv with XGBoost's own margins and labels for every data row, and
LightGBM text models written here from those trees (LightGBM is not installed) with the labels of an
independent evaluator of LightGBM's prediction semantics. Plus malformed files for the error tests.

Run with Debian's Python (numpy, pandas, xgboost 1.7): /usr/bin/python3 tools/make_tree_fixtures.py

Each <model>.csv holds the feature columns, then m0.. (margins: XGBoost's float32 output_margin, or
the LightGBM raw score) and label. Rows include NaNs, zeros, values in LightGBM's zero band, and for
XGBoost each split threshold t with the float32 values beside it and the double midpoints between
them (+- 1 ulp), where rounding to float32 decides the branch.
"""
import json
import os
import re
import sys

import numpy as np
import pandas as pd
import xgboost as xgb

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fixtures", "trees")
KZERO = float(np.float32(1e-35))  # LightGBM's kZeroThreshold (a float literal widened to double)


def load_rows(n=300):
    d = pd.read_csv(os.path.join(ROOT, "benchmarks", "fairify", "data", "german.csv")).head(n)
    x = d.drop(columns=["credit"]).astype(np.float64)
    # Non-integer features, so that thresholds are not all halves of integers.
    x["credit_amount"] = x["credit_amount"] * 1.37 / 1000.0
    x["month"] = x["month"] / 7.0
    rng = np.random.default_rng(7)
    x = x.mask(rng.random(x.shape) < 0.05)  # 5% missing: default directions get used
    return x, d["credit"].to_numpy(), d["housing"].to_numpy()


def boundary_rows(x, booster, limit=40):
    """Copies of data rows with a split's feature set to t, the float32s beside it, and the double
    midpoints between those (and 1 ulp either side)."""
    names = list(x.columns)
    splits = []
    for tree in json.loads(booster.save_raw("json"))["learner"]["gradient_booster"]["model"]["trees"]:
        for i, left in enumerate(tree["left_children"]):
            if left != -1 and tree.get("split_type", [0] * len(tree["left_children"]))[i] == 0:
                splits.append((tree["split_indices"][i], np.float32(tree["split_conditions"][i])))
    splits = sorted(set((int(f), float(t)) for f, t in splits))[:limit]
    rows = []
    for k, (f, t) in enumerate(splits):
        t32 = np.float32(t)
        below = np.nextafter(t32, np.float32(-np.inf))
        above = np.nextafter(t32, np.float32(np.inf))
        for lo, hi in ((below, t32), (t32, above)):
            m = (float(lo) + float(hi)) / 2.0  # exact in a double
            for v in (m, np.nextafter(m, -np.inf), np.nextafter(m, np.inf)):
                row = x.iloc[k % len(x)].copy()
                row.iloc[f] = v
                rows.append(row)
        for v in (float(below), float(t32), float(above)):
            row = x.iloc[(k + 1) % len(x)].copy()
            row.iloc[f] = v
            rows.append(row)
    extra = pd.DataFrame(rows, columns=names)
    extra.iloc[:5] = np.nan  # all missing
    return pd.concat([x, extra], ignore_index=True)


def write_csv(name, x, margins, labels):
    table = x.copy()
    margins = np.asarray(margins, dtype=np.float64).reshape(len(x), -1)
    for k in range(margins.shape[1]):
        table[f"m{k}"] = margins[:, k]
    table["label"] = np.asarray(labels, dtype=np.int64)
    with open(os.path.join(OUT, name + ".csv"), "w") as f:
        f.write(",".join(table.columns) + "\n")
        for row in table.itertuples(index=False):
            f.write(",".join("nan" if isinstance(v, float) and np.isnan(v) else repr(v) for v in row) + "\n")


# --- XGBoost -------------------------------------------------------------------------------------


def xgboost_models():
    x, credit, housing = load_rows()
    params = dict(max_depth=3, eta=0.3, seed=1, tree_method="hist")
    binary = xgb.train(dict(params, objective="binary:logistic", base_score=0.3), xgb.DMatrix(x, credit), 12)
    data = boundary_rows(x, binary)
    dm = xgb.DMatrix(data)
    write_csv("xgb_binary", data, binary.predict(dm, output_margin=True), binary.predict(dm) > 0.5)
    binary.save_model(os.path.join(OUT, "xgb_binary.json"))
    binary.save_model(os.path.join(OUT, "xgb_binary.ubj"))

    multi = xgb.train(dict(params, objective="multi:softprob", num_class=3), xgb.DMatrix(x, housing), 6)
    data = boundary_rows(x, multi, limit=20)
    dm = xgb.DMatrix(data)
    write_csv("xgb_multi", data, multi.predict(dm, output_margin=True), np.argmax(multi.predict(dm), axis=1))
    multi.save_model(os.path.join(OUT, "xgb_multi.json"))

    # Categorical splits (partitions, not one-hot): purpose and property as categories. Predicted
    # through numpy with feature_types, so that codes such as 2.7, -0.2 and 1e9 can be fed too.
    xc = x.copy()
    types = ["c" if c in ("purpose", "property") else "q" for c in xc.columns]
    cat = xgb.train(
        dict(params, objective="binary:logitraw", max_cat_to_onehot=1, max_depth=4),
        xgb.DMatrix(xc.to_numpy(), credit, feature_types=types, feature_names=list(xc.columns), enable_categorical=True),
        10,
    )
    extra = []
    for k, v in enumerate([0.0, -0.0, 0.5, 0.99999999, 1.0, 2.7, 3.5, 9.0, 9.99, -0.2, -1.0, 10.0, 1e9, 16777214.0]):
        for col in ("purpose", "property"):
            row = xc.iloc[k].copy()
            row[col] = v
            extra.append(row)
    data = pd.concat([xc, pd.DataFrame(extra, columns=xc.columns)], ignore_index=True)
    dm = xgb.DMatrix(data.to_numpy(), feature_types=types, feature_names=list(xc.columns), enable_categorical=True)
    margins = cat.predict(dm, output_margin=True)
    write_csv("xgb_cat", data, margins, margins > 0)
    cat.save_model(os.path.join(OUT, "xgb_cat.json"))
    return (binary, boundary_rows(x, binary)), (multi, boundary_rows(x, multi, limit=20)), (cat, data)



# --- LightGBM text, written from the XGBoost trees -----------------------------------------------


def lgb_trees(booster, zero_tree=False):
    """LightGBM trees with XGBoost's structure: thresholds t as doubles (x <= t goes left), the
    missing types cycling None/Zero/NaN; categorical sets as bitsets (in the set goes LEFT in
    LightGBM, so the children swap)."""
    out = []
    for t in json.loads(booster.save_raw("json"))["learner"]["gradient_booster"]["model"]["trees"]:
        n = len(t["left_children"])
        cats = {node: t["categories"][s : s + z] for node, s, z in zip(
            t.get("categories_nodes", []), t.get("categories_segments", []), t.get("categories_sizes", []))}
        inner = [i for i in range(n) if t["left_children"][i] != -1]
        leaves = [i for i in range(n) if t["left_children"][i] == -1]
        idx = {node: k for k, node in enumerate(inner)}
        ref = lambda node: idx[node] if node in idx else ~leaves.index(node)  # noqa: E731
        tree = dict(feature=[], threshold=[], dtype=[], left=[], right=[], bitsets=[],
                    leaf=[float(np.float32(t["split_conditions"][i])) for i in leaves])
        for k, i in enumerate(inner):
            tree["feature"].append(t["split_indices"][i])
            dl = t["default_left"][i]
            if i in cats:
                words = [0] * (max(cats[i]) // 32 + 1)
                for c in cats[i]:
                    words[c // 32] |= 1 << (c % 32)
                tree["threshold"].append(len(tree["bitsets"]))
                tree["bitsets"].append(words)
                tree["dtype"].append(1 | (2 if dl else 0) | (((k % 3)) << 2))
                tree["left"].append(ref(t["right_children"][i]))
                tree["right"].append(ref(t["left_children"][i]))
                continue
            thr = float(np.float32(t["split_conditions"][i]))
            if zero_tree and k < 3:
                thr = [0.0, -5e-36, KZERO][k]  # thresholds in and at the zero band
            tree["threshold"].append(thr)
            tree["dtype"].append((2 if dl else 0) | ((k % 3) << 2))
            tree["left"].append(ref(t["left_children"][i]))
            tree["right"].append(ref(t["right_children"][i]))
        out.append(tree)
    return out


def lgb_text(trees, names, objective, num_class, average=False):
    ntpi = 1 if num_class == 1 else num_class
    lines = ["tree", "version=v4", f"num_class={num_class}", f"num_tree_per_iteration={ntpi}", "label_index=0",
             f"max_feature_idx={len(names) - 1}", f"objective={objective}"]
    if average:
        lines.append("average_output")
    lines += ["feature_names=" + " ".join(names), "feature_infos=" + " ".join(["none"] * len(names)), ""]
    for k, t in enumerate(trees):
        nl = len(t["leaf"])
        lines += [f"Tree={k}", f"num_leaves={nl}", f"num_cat={len(t['bitsets'])}"]
        if nl > 1:
            lines += ["split_feature=" + " ".join(map(str, t["feature"])),
                      "split_gain=" + " ".join(["1"] * (nl - 1)),
                      "threshold=" + " ".join(repr(float(v)) for v in t["threshold"]),
                      "decision_type=" + " ".join(map(str, t["dtype"])),
                      "left_child=" + " ".join(map(str, t["left"])),
                      "right_child=" + " ".join(map(str, t["right"]))]
        lines += ["leaf_value=" + " ".join(repr(v) for v in t["leaf"])]
        if t["bitsets"]:
            bounds = np.cumsum([0] + [len(b) for b in t["bitsets"]]).tolist()
            lines += ["cat_boundaries=" + " ".join(map(str, bounds)),
                      "cat_threshold=" + " ".join(str(w) for b in t["bitsets"] for w in b)]
        lines += ["is_linear=0", "shrinkage=1", "", ""]
    lines += ["end of trees", "", "feature_importances:", "", "parameters:", "end of parameters", ""]
    return "\n".join(lines)


def lgb_leaf(t, row):
    """LightGBM's Tree::GetLeaf on a dense row (|x| <= kZeroThreshold already read as 0)."""
    if len(t["leaf"]) == 1:
        return 0
    node = 0
    while node >= 0:
        v, dt = row[t["feature"][node]], t["dtype"][node]
        if dt & 1:
            go_left = False
            if not np.isnan(v) and int(v) >= 0:  # int() truncates toward zero, as C++ does
                c, words = int(v), t["bitsets"][int(t["threshold"][node])]
                go_left = c // 32 < len(words) and (words[c // 32] >> (c % 32)) & 1 == 1
        else:
            missing = (dt >> 2) & 3
            if np.isnan(v) and missing != 2:
                v = 0.0
            if (missing == 1 and -KZERO <= v <= KZERO) or (missing == 2 and np.isnan(v)):
                go_left = bool(dt & 2)
            else:
                go_left = v <= t["threshold"][node]
        node = t["left"][node] if go_left else t["right"][node]
    return ~node


def lgb_predict(trees, x, num_class, average=False):
    ntpi = 1 if num_class == 1 else num_class
    raw = np.zeros((len(x), ntpi))
    for r, row in enumerate(x.to_numpy(dtype=np.float64)):
        row = np.where(np.abs(row) <= KZERO, 0.0, row)  # LightGBM's dense rows drop tiny values
        for k, t in enumerate(trees):
            raw[r, k % ntpi] += t["leaf"][lgb_leaf(t, row)]
    if average:
        raw /= len(trees) // ntpi
    labels = (raw[:, 0] > 0).astype(int) if ntpi == 1 else np.argmax(raw, axis=1)
    return raw, labels


def lightgbm_models(binary, multi, cat):
    (bst, data), (mst, mdata), (cst, cdata) = binary, multi, cat
    names = list(data.columns)
    zeros = data.head(40).copy()
    for k in range(40):  # the zero band: 0, -0, tiny values, its edges and just beyond
        zeros.iloc[k, k % 3] = [0.0, -0.0, 5e-36, -5e-36, KZERO, -KZERO, 2e-35, -2e-35, np.nan, 1e-300][k % 10]
    data = pd.concat([data, zeros], ignore_index=True)
    for name, trees, x, obj, nc, avg in [
        ("lgb_binary", lgb_trees(bst, zero_tree=True), data, "binary sigmoid:1", 1, False),
        ("lgb_average", lgb_trees(bst), data, "binary sigmoid:2", 1, True),
        ("lgb_multi", lgb_trees(mst), mdata, "multiclass num_class:3", 3, False),
        ("lgb_ova", lgb_trees(mst), mdata, "multiclassova num_class:3 sigmoid:1", 3, False),
        ("lgb_cat", lgb_trees(cst), cdata, "binary sigmoid:1", 1, False),
    ]:
        with open(os.path.join(OUT, name + ".txt"), "w") as f:
            f.write(lgb_text(trees, names, obj, nc, avg))
        raw, labels = lgb_predict(trees, x, nc, avg)
        write_csv(name, x, raw, labels)
    return names


# --- Malformed files ------------------------------------------------------------------------------


def malformed(names):
    bad = os.path.join(OUT, "bad")
    os.makedirs(bad, exist_ok=True)
    good_x = open(os.path.join(OUT, "xgb_binary.json")).read()
    good_l = open(os.path.join(OUT, "lgb_binary.txt")).read()
    doc = json.loads(good_x)
    tree0 = doc["learner"]["gradient_booster"]["model"]["trees"][0]

    def xgb_variant(name, edit):
        d = json.loads(good_x)
        edit(d["learner"], d["learner"]["gradient_booster"]["model"]["trees"][0])
        with open(os.path.join(bad, name), "w") as f:
            json.dump(d, f)

    files = {
        "xgb_truncated.json": good_x[: len(good_x) // 2],
        "xgb_deep.json": '{"learner": ' + "[" * 10000 + "]" * 10000 + "}",
        "lgb_truncated.txt": good_l[: len(good_l) // 2],
        "lgb_huge_leaves.txt": re.sub(r"num_leaves=\d+", "num_leaves=99999999999", good_l, count=1),
        "lgb_nan_threshold.txt": re.sub(r"\nthreshold=[^ ]+", "\nthreshold=nan", good_l, count=1),
        "lgb_child_cycle.txt": re.sub(r"left_child=\d+", "left_child=0", good_l, count=1),
        "lgb_child_range.txt": re.sub(r"left_child=\d+", "left_child=77", good_l, count=1),
        "lgb_no_trees.txt": good_l[: good_l.index("Tree=0")],
        "lgb_bad_decision_type.txt": good_l.replace("decision_type=", "decision_type=14 ", 1),
    }
    cat_l = open(os.path.join(OUT, "lgb_cat.txt")).read()
    k = cat_l.index("cat_boundaries=")
    files["lgb_bitset_range.txt"] = cat_l[:k] + cat_l[k:].replace("cat_boundaries=0", "cat_boundaries=5", 1)
    for name, text in files.items():
        with open(os.path.join(bad, name), "w") as f:
            f.write(text)
    left = tree0["left_children"]
    first_inner = next(i for i, v in enumerate(left) if v != -1)
    xgb_variant("xgb_child_cycle.json", lambda _, t: t["left_children"].__setitem__(first_inner, 0))
    xgb_variant("xgb_child_range.json", lambda _, t: t["right_children"].__setitem__(first_inner, 10**6))
    xgb_variant("xgb_nan_split.json", lambda _, t: t["split_conditions"].__setitem__(first_inner, "NaN"))
    xgb_variant("xgb_feature_range.json", lambda _, t: t["split_indices"].__setitem__(first_inner, 999))
    xgb_variant("xgb_sizes.json", lambda _, t: t["right_children"].pop())
    xgb_variant("xgb_objective.json", lambda lr, _: lr["objective"].__setitem__("name", "rank:pairwise"))
    xgb_variant("xgb_tree_info.json", lambda lr, _: lr["gradient_booster"]["model"]["tree_info"].__setitem__(0, 5))


def main():
    os.makedirs(OUT, exist_ok=True)
    binary, multi, cat = xgboost_models()
    names = lightgbm_models(binary, multi, cat)
    malformed(names)
    total = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(OUT) for f in fs)
    print(f"wrote {OUT} ({total // 1024} KiB)", file=sys.stderr)


if __name__ == "__main__":
    main()
