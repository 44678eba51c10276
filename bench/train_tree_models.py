#!/usr/bin/env python3
"""Train the seeded XGBoost models used by the tree-ensemble benchmarks.

Writes (XGBoost JSON, Booster.save_model):
  bench/models/german_xgb_12x6.json   German credit, 12 trees of depth 6
  bench/models/german_xgb_100x6.json  German credit, 100 trees of depth 6
  bench/models/adult_xgb_100x6.json   Adult, 100 trees of depth 6

Data: benchmarks/fairify/data/{german,adult}.csv (integer-coded columns, as described by
benchmarks/fairify/{german,adult}.toml). The label is the column named `credit` (German) and the
last column (Adult, `income-per-year`); every other column is a feature, in file order, so the
model's feature i is the schema's feature i.

Training: objective binary:logistic, tree_method exact, max_depth 6, learning_rate 0.5
(the value of Veritas's fairness example), all rows, nthread 1, seed 73. Deterministic: rerunning
gives byte-identical files with the same XGBoost version (written with 1.7.4, Debian bookworm's
python3-xgboost).

Usage (from the repository root):
    /usr/bin/python3 bench/train_tree_models.py [--out-dir bench/models]
"""

import argparse
import csv
import os
import sys

import numpy as np
import xgboost as xgb

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "benchmarks", "fairify", "data")

SEED = 73
PARAMS = {
    "objective": "binary:logistic",
    "tree_method": "exact",
    "max_depth": 6,
    "eta": 0.5,
    "seed": SEED,
    "nthread": 1,
    "eval_metric": "error",
}

# (output name, csv, label column (None = last), number of trees)
MODELS = [
    ("german_xgb_12x6.json", "german.csv", "credit", 12),
    ("german_xgb_100x6.json", "german.csv", "credit", 100),
    ("adult_xgb_100x6.json", "adult.csv", None, 100),
]


def load(csv_name, label):
    with open(os.path.join(DATA, csv_name), newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    li = len(header) - 1 if label is None else header.index(label)
    data = np.array([[float(v) for v in r] for r in body], dtype=np.float32)
    y = data[:, li]
    X = np.delete(data, li, axis=1)
    names = [h for i, h in enumerate(header) if i != li]
    return X, y, names


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out-dir", default=os.path.join(ROOT, "bench", "models"))
    args = ap.parse_args(argv)
    os.makedirs(args.out_dir, exist_ok=True)
    for out, csv_name, label, n_trees in MODELS:
        X, y, names = load(csv_name, label)
        dtrain = xgb.DMatrix(X, label=y, feature_names=names)
        bst = xgb.train(PARAMS, dtrain, num_boost_round=n_trees)
        acc = float(np.mean((bst.predict(dtrain) > 0.5) == (y > 0.5)))
        path = os.path.join(args.out_dir, out)
        bst.save_model(path)
        print(f"{path}: {n_trees} trees, depth {PARAMS['max_depth']}, {X.shape[0]} rows, "
              f"{X.shape[1]} features, train accuracy {acc:.4f} (xgboost {xgb.__version__})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
