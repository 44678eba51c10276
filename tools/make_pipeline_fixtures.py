#!/usr/bin/python3
"""Writes the scikit-learn pipeline fixtures into tests/fixtures/pipelines/ (run with Debian's
/usr/bin/python3: python3-onnx, python3-sklearn, python3-pandas, numpy).

    adult_600.csv        a seeded 600-row sample of benchmarks/raw/adult.csv, same columns and
                         format (empty cells stay empty: they are the missing values)
    <name>.onnx          the fitted pipeline as skl2onnx 1.16 writes it (tools/skl2onnx_shapes.py)
    <name>.labels        pipe.predict for every data row of adult_600.csv, one class name a line
    README.md            how they were made

Everything is seeded: reruns give the same files. The script also evaluates every graph with
tools/onnx_numpy_eval.py on the 600 rows and fails if a label differs from pipe.predict.
"""
import os
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import onnx  # noqa: E402

import onnx_numpy_eval as ev  # noqa: E402
import skl2onnx_shapes as s2o  # noqa: E402

OUT = os.path.join(HERE, "..", "tests", "fixtures", "pipelines")
SEED = 0
MAX_BYTES = 200_000


def pipelines():
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import MinMaxScaler, OrdinalEncoder
    from sklearn.tree import DecisionTreeClassifier

    std = s2o.standard_pipeline
    ordinal = Pipeline([
        ("prep", ColumnTransformer([
            ("cat", Pipeline([("impute", SimpleImputer(strategy="most_frequent", missing_values="")),
                              ("ordinal", OrdinalEncoder())]), s2o.STRING_COLS),
            ("num", MinMaxScaler(), s2o.NUMERIC_COLS)], remainder="drop")),
        ("clf", LogisticRegression(max_iter=1000))])
    return [
        ("lr", std(LogisticRegression(max_iter=1000))),
        ("mlp", std(MLPClassifier(hidden_layer_sizes=(8,), max_iter=300, random_state=SEED))),
        ("dt", std(DecisionTreeClassifier(max_depth=4, random_state=SEED))),
        ("rf", std(RandomForestClassifier(n_estimators=5, max_depth=4, random_state=SEED))),
        ("gb", std(GradientBoostingClassifier(n_estimators=10, max_depth=2, random_state=SEED))),
        ("ordinal_minmax_lr", ordinal),
        ("drop_first_lr", std(LogisticRegression(max_iter=1000), drop="first")),
    ]


README = """# scikit-learn pipeline fixtures

Written by `tools/make_pipeline_fixtures.py` (run it with Debian's `/usr/bin/python3`; it needs
python3-onnx, python3-sklearn, python3-pandas and numpy, no network). Everything is seeded
(random_state={seed}); a rerun gives the same files.

* `adult_600.csv`: `benchmarks/raw/adult.csv` read with pandas (`keep_default_na=False`, so empty
  cells stay empty strings), `DataFrame.sample(n=600, random_state={seed})`, written back with the
  same columns, header and format. Empty cells are the missing values (workclass, occupation,
  native-country).
* `<name>.onnx`: the pipeline below fitted on those 600 rows (features: every column but
  `income`; target: `income`) and written by `tools/skl2onnx_shapes.py`, which emits the graph
  skl2onnx 1.16 produces for `skl2onnx.to_onnx(pipe, X[:1])` with onnx 1.12 (default opset 17,
  ai.onnx.ml up to 3, ZipMap on): one graph input per CSV column, in CSV order, named like the
  column with `-` replaced by `_` (`education-num` -> `education_num`), shape `[None, 1]`,
  `tensor(string)` for the text columns and `tensor(int64)` for the numeric ones. Missing
  values are fed as empty strings `""`. Outputs: `output_label` (`tensor(string)`, `[None]`)
  and `output_probability` (`seq(map(string, tensor(float)))`, from ZipMap).
* `<name>.labels`: `pipe.predict(X)` for the 600 data rows, in CSV order, one class name a line
  (`<=50K` or `>50K`).

The standard pipeline is

    Pipeline([("prep", ColumnTransformer([
                  ("cat", Pipeline([("impute", SimpleImputer(strategy="most_frequent", missing_values="")),
                                    ("onehot", OneHotEncoder(handle_unknown="ignore"))]), string_columns),
                  ("num", StandardScaler(), numeric_columns)], remainder="drop")),
              ("clf", classifier)])

string_columns = {strings}
numeric_columns = {numbers}

(`missing_values=""`: skl2onnx refuses a SimpleImputer with the default `missing_values=np.nan`
on string columns, so the CSV is read with empty cells as empty strings.)

| file | classifier / variant | bytes | labels the ONNX graph gives differently from pipe.predict (numpy evaluator, float32) |
| --- | --- | --- | --- |
{table}

`ordinal_minmax_lr`: `OrdinalEncoder()` instead of `OneHotEncoder` and `MinMaxScaler()` instead
of `StandardScaler` (MinMaxScaler is written as Cast/Mul/Add, not as the ML Scaler op).
`drop_first_lr`: `OneHotEncoder(handle_unknown="ignore", drop="first")` (a Gather after each
OneHotEncoder node keeps categories 1..K-1).
"""


def main():
    from sklearn.exceptions import ConvergenceWarning

    warnings.filterwarnings("ignore", category=ConvergenceWarning)
    os.makedirs(OUT, exist_ok=True)
    df = s2o.read_adult().sample(n=600, random_state=SEED).reset_index(drop=True)
    csv_path = os.path.join(OUT, "adult_600.csv")
    df.to_csv(csv_path, index=False, lineterminator="\n")
    back = s2o.read_adult(csv_path)
    assert back.equals(df), "adult_600.csv does not read back identically"
    X = df.drop(columns=["income"])
    y = df["income"]
    rows = []
    for name, pipe in pipelines():
        pipe.fit(X, y)
        path = os.path.join(OUT, name + ".onnx")
        model = s2o.to_onnx(pipe, X, path)
        onnx.checker.check_model(model)
        size = os.path.getsize(path)
        assert size < MAX_BYTES, (name, size)
        expected = [str(v) for v in pipe.predict(X)]
        with open(os.path.join(OUT, name + ".labels"), "w") as f:
            f.write("\n".join(expected) + "\n")
        got = ev.run(model, s2o.feeds_for(model, X))["output_label"]
        differ = int(sum(1 for a, b in zip(got, expected) if str(a) != b))
        clf = pipe.steps[-1][1]
        rows.append("| `%s.onnx` | %s | %d | %d of 600 |" % (name, _describe(clf), size, differ))
        print("%-20s %7d bytes, %d/600 labels differ" % (name, size, differ))
        if differ:
            raise SystemExit("%s: the graph disagrees with pipe.predict on %d rows" % (name, differ))
    with open(os.path.join(OUT, "README.md"), "w") as f:
        f.write(README.format(seed=SEED, strings=s2o.STRING_COLS, numbers=s2o.NUMERIC_COLS,
                              table="\n".join(rows)))


def _describe(clf):
    params = clf.get_params()
    keys = [k for k in ("hidden_layer_sizes", "n_estimators", "max_depth", "max_iter")
            if k in params and params[k] is not None]
    return "%s(%s)" % (type(clf).__name__, ", ".join("%s=%r" % (k, params[k]) for k in keys))


if __name__ == "__main__":
    main()
