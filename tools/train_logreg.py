#!/usr/bin/python3
"""Trains the logistic-regression benchmark models in benchmarks/logreg/ (run with Debian's
/usr/bin/python3, which has python3-sklearn; a pyenv/venv python3 may not see it).

    python3 tools/train_logreg.py                          # write the models and README.md
    python3 tools/train_logreg.py --witness build/witness  # also check witness's labels on every row

For each of the bundled Fairify data sets (adult, german, bank) this fits scikit-learn's
LogisticRegression with its default configuration (lbfgs, C=1.0, L2), as SymbGen did, except
max_iter=5000 so that lbfgs converges on the unscaled inputs. It trains on the whole CSV. The model
reads the schema's raw values (category codes and integers, no one-hot, no scaling) in the order of the
schema's [[features]], exactly like the Fairify networks. Each model is written as mlp-json-v1: one
dense layer with 1 output and activation "sigmoid", weights as [out][in], every number a full double
(Python's shortest round-trip repr). witness labels 1 iff the logit is > 0, which is sklearn's predict().

Deterministic (lbfgs has no randomness; random_state is fixed anyway) and takes a few seconds.
With --witness, the script also runs `witness predict --json` on every CSV and counts the rows where
witness's label equals sklearn's predict(); the counts go into README.md.
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tomllib
import warnings

import numpy as np
import sklearn
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
FAIRIFY = os.path.join("benchmarks", "fairify")
OUT = os.path.join("benchmarks", "logreg")
DATASETS = ["adult", "german", "bank"]
MAX_ITER = 5000
SEED = 0


def load(name):
    """Returns (schema path, csv path, feature names, X, y) with X in schema feature order."""
    schema_path = os.path.join(FAIRIFY, name + ".toml")
    csv_path = os.path.join(FAIRIFY, "data", name + ".csv")
    with open(os.path.join(ROOT, schema_path), "rb") as f:
        schema = tomllib.load(f)
    features = schema["features"]
    names = [f["name"] for f in features]
    label = schema["label"]
    with open(os.path.join(ROOT, csv_path), newline="") as f:
        rows = list(csv.DictReader(f))
    missing = [c for c in names + [label] if c not in rows[0]]
    if missing:
        sys.exit(f"{csv_path}: missing columns {missing}")

    def value(feature, cell):
        # A categorical cell may hold the category label or its code; the model reads the code.
        cats = feature.get("categories")
        if cats is not None and cell in cats:
            return float(cats.index(cell))
        return float(int(cell))

    X = np.array([[value(f, row[f["name"]]) for f in features] for row in rows], dtype=np.float64)
    y = np.array([int(row[label]) for row in rows], dtype=np.int64)
    if set(np.unique(y)) - {0, 1}:
        sys.exit(f"{csv_path}: label {label} is not 0/1")
    return schema_path, csv_path, names, X, y


def train(X, y):
    model = LogisticRegression(max_iter=MAX_ITER, random_state=SEED)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model.fit(X, y)
    assert list(model.classes_) == [0, 1]
    return model


def mlp_json(name, source, names, model):
    w = [float(v) for v in model.coef_[0]]
    b = float(model.intercept_[0])
    return {
        "format": "mlp-json-v1",
        "name": name,
        "source": source,
        "input_dim": len(names),
        "input_names": names,
        "layer_sizes": [len(names), 1],
        "layers": [{"activation": "sigmoid", "weights": [w], "bias": [b]}],
    }


def witness_labels(witness, model_path, csv_path, schema_path):
    out = subprocess.run([witness, "predict", "--json", "--schema", schema_path, model_path, csv_path],
                         cwd=ROOT, check=True, capture_output=True, text=True).stdout
    return np.array(json.loads(out)["labels"], dtype=np.int64)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--witness", help="path to the witness binary: check its labels against sklearn's")
    args = ap.parse_args()
    witness = os.path.abspath(args.witness) if args.witness else None
    os.makedirs(os.path.join(ROOT, OUT), exist_ok=True)

    results = []
    for name in DATASETS:
        schema_path, csv_path, names, X, y = load(name)
        model = train(X, y)
        pred = model.predict(X)
        logit = model.decision_function(X)
        r = {
            "name": name, "schema": schema_path, "csv": csv_path, "rows": len(y), "inputs": len(names),
            "n_iter": int(model.n_iter_[0]), "accuracy": float(np.mean(pred == y)),
            "positive_rate": float(np.mean(pred == 1)), "base_rate": float(np.mean(y == 1)),
            "min_abs_logit": float(np.min(np.abs(logit))),
        }
        model_path = os.path.join(OUT, f"{name}_lr.json")
        source = (f"tools/train_logreg.py: sklearn {sklearn.__version__} "
                  f"LogisticRegression(max_iter={MAX_ITER}) on {csv_path}")
        with open(os.path.join(ROOT, model_path), "w") as f:
            f.write(json.dumps(mlp_json(f"{name}_lr", source, names, model)) + "\n")
        r["model"] = model_path
        print(f"{model_path}: {r['rows']} rows, {r['inputs']} inputs, lbfgs {r['n_iter']} iterations, "
              f"training accuracy {r['accuracy']:.4f}, positive rate {r['positive_rate']:.4f} "
              f"(data {r['base_rate']:.4f}), min |logit| {r['min_abs_logit']:.3g}")
        if witness:
            labels = witness_labels(witness, model_path, csv_path, schema_path)
            if len(labels) != len(pred):
                sys.exit(f"witness labelled {len(labels)} rows, expected {len(pred)}")
            differ = np.nonzero(labels != pred)[0]
            r["agree"] = len(pred) - len(differ)
            print(f"  witness predict agrees with sklearn predict() on {r['agree']}/{len(pred)} rows")
            for i in differ:
                print(f"  row {i + 1}: witness {labels[i]}, sklearn {pred[i]}, logit {logit[i]!r}")
        results.append(r)

    write_readme(results, checked=witness is not None)


def write_readme(results, checked):
    lines = [
        "# Logistic-regression benchmark models",
        "",
        "Three logistic-regression classifiers on the bundled Fairify data, the model kind SymbGen evaluates",
        "(scikit-learn `LogisticRegression`, default configuration). Generated; do not edit by hand.",
        "",
        f"- Script: `tools/train_logreg.py`; command: `python3 tools/train_logreg.py"
        f"{' --witness build/witness' if checked else ''}` (Debian's `/usr/bin/python3` with python3-sklearn).",
        f"- scikit-learn {sklearn.__version__} (Debian python3-sklearn), numpy {np.__version__}.",
        f"- `LogisticRegression(max_iter={MAX_ITER}, random_state={SEED})`: defaults otherwise (lbfgs, L2, C=1.0,",
        "  with intercept); max_iter is raised only so that lbfgs converges on the unscaled inputs (the script",
        "  fails on a ConvergenceWarning). Trained on the whole CSV; accuracy below is training accuracy.",
        "- Inputs: the schema's raw values (category codes as in the CSVs, integers as they are; no one-hot, no",
        "  scaling) in the order of the Fairify schemas' `[[features]]`, the same inputs as the Fairify networks.",
        "  Use the models with `--schema benchmarks/fairify/<name>.toml`.",
        "- Format: `mlp-json-v1`, one dense layer (1 x inputs) with activation `sigmoid`; weights and bias are",
        "  the fitted `coef_` and `intercept_` as full doubles. witness labels 1 iff the logit is > 0, which",
        "  is sklearn's `predict()`.",
        "",
        "| model | data | schema | rows | inputs | lbfgs iterations | training accuracy | positive rate (model) | positive rate (data) |"
        + (" witness = sklearn |" if checked else ""),
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |" + (" --- |" if checked else ""),
    ]
    for r in results:
        line = (f"| `{r['model']}` | `{r['csv']}` | `{r['schema']}` | {r['rows']} | {r['inputs']} | {r['n_iter']} | "
                f"{r['accuracy']:.4f} | {r['positive_rate']:.4f} | {r['base_rate']:.4f} |")
        if checked:
            line += f" {r['agree']}/{r['rows']} |"
        lines.append(line)
    if checked:
        lines += [
            "",
            "The last column counts the rows where `witness predict --json --schema <schema> <model> <csv>` gives",
            "the same label as sklearn's `predict()`.",
        ]
    with open(os.path.join(ROOT, OUT, "README.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
