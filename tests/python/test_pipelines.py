"""scikit-learn Pipelines over raw string columns: converted with their preprocessing, labelled as
Pipeline.predict labels them, audited with no hand-written schema, every pair replayed through
Pipeline.predict; the same pipelines written as skl2onnx-shaped ONNX give the CLI the same labels."""

import sys

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import (FunctionTransformer, MaxAbsScaler, MinMaxScaler, OneHotEncoder, OrdinalEncoder,
                                   PolynomialFeatures, RobustScaler, StandardScaler)
from sklearn.tree import DecisionTreeClassifier

import witness

from conftest import ROOT

RAW = ROOT / "benchmarks" / "raw" / "adult.csv"
CLASSIFIERS = {
    "lr": lambda: LogisticRegression(max_iter=300),
    "mlp": lambda: MLPClassifier((8,), max_iter=60, random_state=0),
    "dt": lambda: DecisionTreeClassifier(max_depth=5, random_state=0),
    "rf": lambda: RandomForestClassifier(8, max_depth=5, random_state=0),
    "gb": lambda: GradientBoostingClassifier(n_estimators=10, max_depth=2, random_state=0),
}


@pytest.fixture(scope="module")
def adult():
    df = pd.read_csv(RAW).sample(1500, random_state=3).reset_index(drop=True)
    return df.drop(columns=["income"]), df["income"]


def columns(X):
    strings = [c for c in X.columns if X[c].dtype == object]
    numbers = [c for c in X.columns if c not in strings and c != "fnlwgt"]
    return strings, numbers


def pipeline(X, y, clf, encoder=None, scaler=None):
    strings, numbers = columns(X)
    encode = Pipeline([("impute", SimpleImputer(strategy="most_frequent")),
                       ("encode", encoder or OneHotEncoder(handle_unknown="ignore"))])
    pre = ColumnTransformer([("cat", encode, strings), ("num", scaler or StandardScaler(), numbers)])
    return Pipeline([("pre", pre), ("clf", clf)]).fit(X, y)


@pytest.mark.parametrize("name", sorted(CLASSIFIERS))
def test_pipeline_labels_every_row_as_predict_and_its_pairs_replay(adult, name):
    X, y = adult
    pipe = pipeline(X, y, CLASSIFIERS[name]())
    model = witness.from_sklearn(pipe)
    assert [c["name"] for c in model.columns][:3] == ["age", "workclass", "education"]
    schema = witness.Schema.from_pipeline(pipe, X, protected=["sex"])
    ours = np.asarray(model.classes)[model.predict(schema._native.to_model(schema.encode(X)))]
    assert (ours == pipe.predict(X)).all()
    r = witness.fair(pipe, X.assign(income=y), protected=["sex"], time_limit=20, max_witnesses=3, seed=1)
    assert r.verdict in ("witness", "inconclusive", "verified")
    if r.verdict == "witness":
        pairs = r.pairs
        x = pairs[[c for c in X.columns if c in pairs.columns]].astype({"sex": str})
        x_prime = x.assign(sex=pairs["sex'"].astype(str))
        full = lambda df: df.reindex(columns=X.columns, fill_value=0)  # fnlwgt: dropped by the pipeline
        assert (pipe.predict(full(x)) == pairs["label"].astype(str)).all()
        assert (pipe.predict(full(x_prime)) == pairs["label'"].astype(str)).all()
        assert (pairs["label"].astype(str) != pairs["label'"].astype(str)).all()
    assert r.to_dict()["data"]["rows"] == len(X)  # the data's rows measured too


def test_encoders_and_scalers_of_every_kind(adult):
    X, y = adult
    for encoder, scaler in [(OrdinalEncoder(), MinMaxScaler()), (OneHotEncoder(drop="first"), MaxAbsScaler()),
                            (OneHotEncoder(handle_unknown="infrequent_if_exist", min_frequency=40), RobustScaler())]:
        pipe = pipeline(X, y, LogisticRegression(max_iter=300), encoder, scaler)
        model = witness.from_sklearn(pipe)
        schema = witness.Schema.from_pipeline(pipe, X)
        ours = np.asarray(model.classes)[model.predict(schema._native.to_model(schema.encode(X)))]
        assert (ours == pipe.predict(X)).all(), (encoder, scaler)


def test_bias_and_test_take_a_pipeline_and_a_dataframe(adult):
    X, y = adult
    pipe = pipeline(X, y, LogisticRegression(max_iter=300))
    b = witness.bias(pipe, X, protected=["race"], samples=2000, seed=1)
    assert 0 <= b.bias_percent <= 100 and b.samples == 2000
    t = witness.test(pipe, protected=["sex"], seeds=X, budget=200, seed=1)
    assert t.generated > 0
    if t.discriminatory:
        pairs = t.pairs
        x = pairs[[c for c in X.columns if c in pairs.columns]].reindex(columns=X.columns, fill_value=0)
        assert (pipe.predict(x.astype({"sex": str})) == pairs["label"].astype(str)).all()


def test_a_schema_without_the_scaler_is_refused(adult):
    X, y = adult
    pipe = pipeline(X, y, LogisticRegression(max_iter=300))
    good = witness.Schema.from_pipeline(pipe, X)
    # The same schema with the scaler's keys left out: the same widths, silently wrong answers.
    text = "\n".join(line for line in good.to_toml().splitlines() if not line.startswith(("mean =", "std =")))
    with pytest.raises(witness.InputError, match=r"feature 'age'.*does not match the model's preprocessing"):
        witness.fair(pipe, witness.Schema.from_toml(text), protected=["sex"])


def test_steps_witness_cannot_follow_are_named(adult):
    X, y = adult
    strings, numbers = columns(X)
    for step, needle in [(FunctionTransformer(np.log1p), "FunctionTransformer runs arbitrary code"),
                         (PolynomialFeatures(2), "PolynomialFeatures is not supported"),
                         (MinMaxScaler(clip=True), "clip=True")]:
        pre = ColumnTransformer([("cat", OrdinalEncoder(), strings), ("num", step, numbers)])
        pipe = Pipeline([("pre", pre), ("clf", LogisticRegression(max_iter=50))]).fit(X.fillna("?"), y)
        with pytest.raises(witness.InputError, match=needle) as e:
            witness.from_sklearn(pipe)
        assert "step 1 'pre'" in str(e.value) and "'num'" in str(e.value)


def test_skl2onnx_shaped_onnx_gives_the_cli_the_same_labels_and_verdicts(adult, cli, tmp_path):
    onnx = pytest.importorskip("onnx")
    sys.path.insert(0, str(ROOT / "tools"))
    from skl2onnx_shapes import to_onnx

    X, y = adult
    X = X.fillna("")  # skl2onnx's string imputer reads empty strings as missing
    strings, numbers = columns(X)
    X32 = X.astype({c: np.float32 for c in X.columns if X[c].dtype == np.float64})
    for name in ("lr", "mlp", "dt"):
        encode = Pipeline([("impute", SimpleImputer(strategy="most_frequent", missing_values="")),
                           ("encode", OneHotEncoder(handle_unknown="ignore"))])
        pre = ColumnTransformer([("cat", encode, strings), ("num", StandardScaler(), numbers)])
        pipe = Pipeline([("pre", pre), ("clf", CLASSIFIERS[name]())]).fit(X32, y)
        path, data = tmp_path / f"{name}.onnx", tmp_path / "data.csv"
        to_onnx(pipe, X32, str(path))
        X32.assign(income=y).to_csv(data, index=False)
        labels = cli("predict", path, data).split()
        assert labels == list(pipe.predict(X32)), name
        in_python = witness.fair(pipe, X32, protected=["sex"], time_limit=20, seed=1)
        on_cli = cli("fair", path, "--data", data, "--protected", "sex", "--time-limit", "20", "--seed", "1", "--json")
        assert on_cli["verdict"] == in_python.verdict, name
        assert on_cli["data"]["unfair"] == in_python.to_dict()["data"]["unfair"], name


def _graph(tmp_path, preprocessing, name, second="size"):
    """A hand-written pipeline graph: inputs color (string) and size (float); `preprocessing` makes
    the features [code_f, second] from them; then a logistic score over the features."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    nodes = preprocessing + [
        helper.make_node("Concat", ["code_f", second], ["features"], axis=1),
        helper.make_node("MatMul", ["features", "W"], ["z0"]),
        helper.make_node("Add", ["z0", "B"], ["z"]),
        helper.make_node("Sigmoid", ["z"], ["probability"]),
    ]
    inits = [numpy_helper.from_array(np.array([[1.5], [-0.75]], dtype=np.float32), "W"),
             numpy_helper.from_array(np.array([0.25], dtype=np.float32), "B")]
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("color", TensorProto.STRING, [None, 1]),
         helper.make_tensor_value_info("size", TensorProto.FLOAT, [None, 1])],
        [helper.make_tensor_value_info("probability", TensorProto.FLOAT, [None, 1])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("ai.onnx.ml", 2)])
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, str(path))
    return path


def test_category_mapper_and_binarizer_graphs(tmp_path, cli):
    from onnx import helper

    mapper = [helper.make_node("CategoryMapper", ["color"], ["code"], domain="ai.onnx.ml",
                               cats_strings=["red", "green", "blue"], cats_int64s=[0, 1, 2], default_int64=-1),
              helper.make_node("Cast", ["code"], ["code_f"], to=1)]
    path = _graph(tmp_path, mapper, "mapper")
    rows = pd.DataFrame({"color": ["red", "green", "blue", "green", "blue"], "size": [0.5, 1.0, 4.5, 2.5, 3.0]})
    data = tmp_path / "rows.csv"
    rows.to_csv(data, index=False)
    codes = rows["color"].map({"red": 0, "green": 1, "blue": 2}).to_numpy(np.float64)
    z = codes * np.float64(np.float32(1.5)) + rows["size"].to_numpy() * np.float64(np.float32(-0.75)) + 0.25
    assert cli("predict", path, data).split() == [str(int(v > 0)) for v in z]
    info = cli("info", path)
    assert "color (3 categories, code)" in info
    binarized = mapper + [helper.make_node("Binarizer", ["size"], ["big"], domain="ai.onnx.ml", threshold=2.0)]
    path = _graph(tmp_path, binarized, "binarizer", second="big")
    import os
    import subprocess

    binary = os.environ.get("WITNESS_BIN", str(ROOT / "build" / "witness"))
    p = subprocess.run([binary, "predict", str(path), str(data)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "Binarizer" in p.stderr, p.stderr  # refused, naming the op


def test_a_constant_fill_value_the_encoder_never_saw_gives_that_column_no_missing_value():
    # SimpleImputer(fill_value='missing') over columns of which only one had gaps: 'missing' is a
    # category there, but not of the gap-free column, whose schema then has no missing value
    # (the schema used to be refused: "'missing': expected a category").
    rng = np.random.default_rng(3)
    n = 300
    X = pd.DataFrame({"job": rng.choice(["a", "b", "c"], n).astype(object), "edu": rng.choice(["x", "y"], n),
                      "age": rng.integers(18, 70, n)})
    X.loc[rng.random(n) < 0.1, "job"] = np.nan
    y = ((X.edu == "x") ^ (X.age > 40)).astype(int)
    cat = Pipeline([("i", SimpleImputer(strategy="constant", fill_value="missing")),
                    ("o", OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1))])
    pipe = Pipeline([("pre", ColumnTransformer([("c", cat, ["job", "edu"]), ("n", "passthrough", ["age"])])),
                     ("clf", DecisionTreeClassifier(max_depth=4, random_state=0))]).fit(X, y)
    schema = witness.Schema.from_pipeline(pipe, X)
    assert 'missing = "missing"' in schema.to_toml().split('name = "edu"')[0].split('name = "job"')[1]
    assert "missing" not in schema.to_toml().split('name = "edu"')[1].split("name =")[0]
    model = witness.from_sklearn(pipe)
    ours = np.asarray(model.classes)[model.predict(schema._native.to_model(schema.encode(X)))]
    assert (ours == pipe.predict(X).astype(str)).all()
