#!/usr/bin/env python3
"""Audit two income classifiers trained on the adult data for unfairness with respect to sex, then
retrain on the discriminatory pairs witness finds and audit again.

    PYTHONPATH=build/python python3 examples/python/audit_adult.py [--time-limit 10]
"""

import argparse
import os
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.neural_network import MLPClassifier

import witness

warnings.filterwarnings("ignore", module="sklearn")  # max_iter is small on purpose: a quick demo

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--time-limit", type=float, default=10.0, help="seconds for each quantification")
parser.add_argument("--budget", type=int, default=2000, help="discriminatory test inputs to generate")
args = parser.parse_args()

# 1. The data: the bundled adult CSV holds category codes; the benchmark's schema names them.
codes = pd.read_csv(os.path.join(ROOT, "benchmarks/fairify/data/adult.csv"))
names = witness.Schema.load(os.path.join(ROOT, "benchmarks/fairify/adult.toml"))
label = "income-per-year"
df = names.decode(codes.drop(columns=[label]).to_numpy(np.float64)).assign(**{label: codes[label]})
print(f"adult: {len(df)} rows; e.g. {df.iloc[0, :5].to_dict()}")

# 2. A schema from the DataFrame: categories from the Categorical columns, bounds from the data.
schema = witness.Schema.from_dataframe(df, label=label, protected=["sex"], name="adult")
X = pd.DataFrame(schema.encode(df), columns=schema.columns)  # codes, as the models read them
y = df[label].to_numpy()


def audit(title, estimator):
    model = witness.from_sklearn(estimator)
    accuracy = (estimator.predict(X) == y).mean()
    verdict = witness.fair(model, schema)
    bias = witness.bias(model, schema, samples=100000, seed=1)
    line = f"{title:<28} accuracy {accuracy:.3f}  fair: {verdict.verdict:<8} Bias% {bias.bias_percent:6.3f}"
    if isinstance(estimator, MLPClassifier):  # (the quantifying engine reads networks, not trees)
        q = witness.fair(model, schema, quantify=True, time_limit=args.time_limit)
        line += f"  quantified: certified {100 * q.certified:.2f}%, falsified {100 * q.falsified:.2g}%"
    print(line)
    return model, verdict


# 3. Two classifiers, audited.
mlp = MLPClassifier((32, 16), max_iter=40, random_state=0).fit(X, y)
gbt = GradientBoostingClassifier(n_estimators=40, max_depth=3, random_state=0).fit(X, y)
for title, est in [("MLP (32, 16)", mlp), ("gradient-boosted trees (40)", gbt)]:
    _, verdict = audit(title, est)
    if verdict.verdict == "witness":
        w = verdict.witness
        print(f"  witness: {w['x_named']} -> {w['label_name']}; with sex={w['x_prime_named']['sex']} -> "
              f"{w['label_prime_name']}")

# 4. Discriminatory pairs for the MLP (SymbGen, seeded from the data), as a DataFrame.
start = time.monotonic()
found = witness.test(mlp, schema, method="symbgen", budget=args.budget, seeds=df, seed=1)
print(f"symbgen: {found.generated} tests, {found.discriminatory} discriminatory "
      f"({100 * found.success_rate:.1f}%) in {time.monotonic() - start:.1f} s")

# 5. Retrain with both members of every pair labelled as the model labels x, so that sex alone no
# longer moves the decision, then audit again.
if not found.discriminatory:
    raise SystemExit("no discriminatory pair found: nothing to retrain on")
pairs = found.pairs
x = pairs[schema.columns]
x_prime = x.assign(sex=pairs["sex'"])
keep = mlp.predict(pd.DataFrame(schema.encode(x), columns=schema.columns))
extra = pd.DataFrame(schema.encode(pd.concat([x, x_prime])), columns=schema.columns)
X2 = pd.concat([X, extra], ignore_index=True)
y2 = np.concatenate([y, keep, keep])
retrained = MLPClassifier((32, 16), max_iter=40, random_state=0).fit(X2, y2)
audit("MLP retrained on the pairs", retrained)
