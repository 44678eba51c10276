#!/usr/bin/python3
"""Writes tests/fixtures/trees/adult_xgb_25x4.json: XGBoost 1.7 (binary:logistic), 25 trees of depth 4
trained on benchmarks/fairify/data/adult.csv (seed 73), as bench/trees_table trains its ladder. Its
exact quantification over the whole Adult domain (protected sex) takes about 5 s on one core: long
enough that under `mpirun -n 2` a rank runs dry while the other still holds a part (stealing).

Run with Debian's Python (numpy, xgboost 1.7): /usr/bin/python3 tools/make_adult_xgb.py
Other sizes (bench/scaling_table): tools/make_adult_xgb.py TREES DEPTH OUT.json
"""
import csv
import os
import sys

import numpy as np
import xgboost as xgb

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fixtures", "trees", "adult_xgb_25x4.json")


def main():
    trees, depth, out = (int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]) if len(sys.argv) == 4 else (25, 4, OUT)
    rows = list(csv.reader(open(os.path.join(ROOT, "benchmarks", "fairify", "data", "adult.csv"))))
    data = np.array([[float(v) for v in r] for r in rows[1:]], dtype=np.float32)
    params = {"objective": "binary:logistic", "max_depth": depth, "tree_method": "hist", "seed": 73, "nthread": 2}
    booster = xgb.train(params, xgb.DMatrix(data[:, :-1], label=data[:, -1]), num_boost_round=trees)
    booster.save_model(out)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
