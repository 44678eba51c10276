"""from_sklearn and from_torch against the frameworks' own predictions."""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier
from sklearn.tree import DecisionTreeClassifier

import witness
from conftest import DATASETS, load_data


def estimators():
    return [
        LogisticRegression(max_iter=200),
        MLPClassifier((16, 8), max_iter=30, random_state=0),
        DecisionTreeClassifier(max_depth=10, random_state=0),
        RandomForestClassifier(n_estimators=15, max_depth=8, random_state=0),
        GradientBoostingClassifier(n_estimators=15, max_depth=3, random_state=0),
    ]


def agree(model, estimator, X):
    ours = model.predict(np.asarray(X, dtype=np.float64))
    theirs = np.searchsorted(estimator.classes_, estimator.predict(X))
    return int((ours != theirs).sum())


@pytest.mark.parametrize("data", sorted(DATASETS))
def test_every_estimator_agrees_with_predict_on_every_row(data):
    X, y = load_data(data)
    for est in estimators():
        est.fit(X, y)
        model = witness.from_sklearn(est)
        assert model.input_names == list(X.columns)
        assert model.classes == [str(c) for c in est.classes_]
        assert agree(model, est, X) == 0, (data, type(est).__name__)


def test_tree_estimators_with_their_default_settings_agree_on_every_adult_row():
    # Fully grown trees: a forest of 100 trees holds over a million nodes here.
    X, y = load_data("adult")
    for est in (DecisionTreeClassifier(random_state=0), RandomForestClassifier(random_state=0, n_jobs=2),
                GradientBoostingClassifier(random_state=0)):
        est.fit(X, y)
        assert agree(witness.from_sklearn(est), est, X) == 0, type(est).__name__


def test_multiclass_and_real_features_at_float32_boundaries():
    # Real features whose values sit on and around float32 rounding points of the thresholds:
    # sklearn compares float32(x) <= t, and the converted trees must send every double the same way.
    rng = np.random.default_rng(7)
    X = pd.DataFrame({"a": rng.normal(size=3000), "b": rng.uniform(-5, 5, 3000), "c": rng.integers(0, 4, 3000)})
    y = np.where(X.a + 0.3 * X.b > 0.5, "high", np.where(X.c > 1, "mid", "low"))
    for est in estimators():
        est.fit(X, y)
        model = witness.from_sklearn(est)
        probes = [X]
        if hasattr(est, "tree_") or hasattr(est, "estimators_"):
            trees = [est] if hasattr(est, "tree_") else np.ravel(est.estimators_)
            t = np.concatenate([tr.tree_.threshold[tr.tree_.children_left != -1] for tr in trees])
            near = np.concatenate([t, np.nextafter(t, np.inf), np.nextafter(t, -np.inf),
                                   t.astype(np.float32).astype(np.float64),
                                   np.nextafter(t.astype(np.float32), np.float32(np.inf)).astype(np.float64)])
            grid = pd.DataFrame({c: np.resize(near, len(near)) for c in X.columns})
            probes.append(grid)
        for rows in probes:
            assert agree(model, est, rows) == 0, type(est).__name__


def test_torch_sequential_networks_agree_with_the_module():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    X = torch.randn(2000, 6)
    for net, classes in [
        (torch.nn.Sequential(torch.nn.Linear(6, 12), torch.nn.ReLU(), torch.nn.Linear(12, 1)), 2),
        (torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 8), torch.nn.LeakyReLU(0.1),
                             torch.nn.Linear(8, 3), torch.nn.Softmax(dim=1)), 3),
        (torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.Sigmoid(), torch.nn.Linear(5, 1), torch.nn.Sigmoid()), 2),
        (torch.nn.Sequential(torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.BatchNorm1d(8), torch.nn.ReLU()),
                             torch.nn.BatchNorm1d(8, affine=False), torch.nn.Linear(8, 2)), 2),
    ]:
        # Running statistics away from 0 and 1: a few batches through the module in training mode.
        net.train()
        with torch.no_grad():
            for k in range(3):
                net(X[k * 100:(k + 1) * 100] * 3 + 1)
        net.eval()
        net = net.double()
        model = witness.from_torch(net, X[:4].double())
        with torch.no_grad():
            out = net(X.double())
        expected = (out[:, 0] > (0.5 if isinstance(net[-1], torch.nn.Sigmoid) else 0.0)).long() if out.shape[1] == 1 \
            else out.argmax(dim=1)
        assert model.output_width == out.shape[1]
        assert (model.predict(X.double().numpy()) == expected.numpy()).all()
        assert len(model.classes) == classes


def test_predict_in_float32_is_the_clis_predict_in_float32(cli, tmp_path):
    torch = pytest.importorskip("torch")
    torch.manual_seed(1)
    X = torch.randn(3000, 6)
    net = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))  # float32
    model = witness.from_torch(net, X[:4], input_names=list("abcdef"))
    with torch.no_grad():
        theirs = net(X).argmax(dim=1).numpy()
    rows = X.double().numpy()
    ours32 = model.predict(rows, precision="float32")
    assert (ours32 != theirs).mean() < 0.001  # torch sums in its own order: rounding may differ
    onnx, data, schema = tmp_path / "net.onnx", tmp_path / "x.csv", tmp_path / "s.toml"
    model.save_onnx(str(onnx))
    pd.DataFrame(rows, columns=list("abcdef")).to_csv(data, index=False, float_format="%.17g")
    schema.write_text("".join(f'[[features]]\nname = "{c}"\nkind = "real"\nmin = -10\nmax = 10\n' for c in "abcdef"))
    cli_labels = cli("predict", onnx, data, "--schema", schema, "--precision", "float32", "--json")["labels"]
    assert [model.classes[i] for i in ours32] == cli_labels
    assert np.allclose(model.outputs(rows, precision="float32"), model.outputs(rows), atol=1e-4)
    with pytest.raises(witness.InputError, match="precision"):
        model.predict(rows, precision="half")


def test_unsupported_models_are_input_errors():
    from sklearn.svm import SVC

    X, y = load_data("german")
    with pytest.raises(witness.InputError, match="SVC is not supported"):
        witness.from_sklearn(SVC().fit(X[:200], y[:200]))
    with pytest.raises(witness.InputError, match="init=LogisticRegression"):
        witness.from_sklearn(GradientBoostingClassifier(init=LogisticRegression(), n_estimators=3).fit(X, y))
    for init in ("zero", None):
        est = GradientBoostingClassifier(init=init, n_estimators=10).fit(X, y)
        assert agree(witness.from_sklearn(est), est, X) == 0, init
    with pytest.raises(witness.InputError, match="not a fitted classifier"):
        witness.from_sklearn(LogisticRegression())
    torch = pytest.importorskip("torch")
    with pytest.raises(witness.InputError, match="not supported"):
        witness.from_torch(torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Dropout1d(), torch.nn.Conv1d(1, 1, 1)),
                           torch.zeros(1, 3))
    with pytest.raises(witness.InputError, match="Sequential"):
        witness.from_torch(torch.nn.Linear(3, 1), torch.zeros(1, 3))


def test_a_converted_model_saved_as_onnx_reads_back_the_same(tmp_path):
    X, y = load_data("german")
    for est in estimators():
        est.fit(X, y)
        model = witness.from_sklearn(est)
        path = tmp_path / f"{type(est).__name__}.onnx"
        model.save_onnx(str(path))
        back = witness.load_model(path)
        assert (back.predict(X.to_numpy(np.float64)) == model.predict(X.to_numpy(np.float64))).all()


# --- HistGradientBoostingClassifier ---------------------------------------------------------------

def hist_fit(est, X, y):
    # One OpenMP thread: on a busy machine sklearn's default team is 40 times slower on these sizes.
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1, user_api="openmp"):
        return est.fit(X, y)


def hist_agree(X, y, **params):
    from sklearn.ensemble import HistGradientBoostingClassifier

    est = hist_fit(HistGradientBoostingClassifier(random_state=0, **params), X, y)
    model = witness.from_sklearn(est)
    assert model.classes == [str(c) for c in est.classes_]
    nodes = np.concatenate([p.nodes for it in est._predictors for p in it])
    split = nodes[nodes["is_leaf"] == 0]
    # Every row, and probes on and beside every numeric threshold (splits compare x <= t in double).
    t = split["num_threshold"][split["is_categorical"] == 0]
    probe = np.concatenate([t, np.nextafter(t, np.inf), np.nextafter(t, -np.inf)])
    grid = np.tile(np.asarray(X, dtype=np.float64)[:1], (len(probe), 1))
    numeric = [j for j in range(grid.shape[1]) if est.is_categorical_ is None or not est.is_categorical_[j]]
    for j in numeric:
        grid[:, j] = probe
    for rows in (X, grid):
        assert agree(model, est, rows) == 0
    return est, split


def test_hist_gradient_boosting_binary_numeric_agrees_on_every_row():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 4))
    y = (X[:, 0] + 0.5 * X[:, 1] * X[:, 2] - 0.3 * X[:, 3] + rng.normal(scale=0.5, size=400) > 0).astype(int)
    hist_agree(X, y, max_iter=30)


def test_hist_gradient_boosting_categorical_and_missing_values_agree_on_every_row():
    rng = np.random.default_rng(5)
    n = 500
    cat = rng.integers(0, 8, n).astype(float)
    a, b = rng.normal(size=n), rng.normal(size=n)
    y = np.isin(cat, [1, 4, 6]) ^ (a > 0.7)
    cat[rng.random(n) < 0.15] = np.nan
    y = np.where(np.isnan(cat), rng.random(n) < 0.8, y).astype(int)  # missing categories lean to class 1
    a[rng.random(n) < 0.1] = np.nan
    X = pd.DataFrame({"cat": cat, "a": a, "b": b})
    est, split = hist_agree(X, y, max_iter=40, categorical_features=[0])
    assert split["is_categorical"].any()
    # Unknown categories, negative values and NaN go the missing way in both.
    model = witness.from_sklearn(est)
    odd = pd.DataFrame({"cat": [8, 9, 100, 255, -1, -3, np.nan, 0, 7] * 3,
                        "a": np.repeat([-1.0, np.nan, 2.0], 9), "b": 0.1})
    assert agree(model, est, odd) == 0


def test_hist_gradient_boosting_with_categories_saved_as_onnx_reads_back_the_same(tmp_path):
    # Set-membership splits are written as ai.onnx.ml 5 TreeEnsemble (binary and multi-class).
    rng = np.random.default_rng(6)
    n = 400
    cat = rng.integers(0, 8, n).astype(float)
    a = rng.normal(size=n)
    X = pd.DataFrame({"cat": cat, "a": a})
    for classes in (2, 3):
        y = (np.isin(cat, [1, 4, 6]).astype(int) + (a > 0.5)) % classes
        est, split = hist_agree(X, y, max_iter=20, categorical_features=[0])
        assert split["is_categorical"].any()
        model = witness.from_sklearn(est)
        path = tmp_path / f"hist_{classes}.onnx"
        model.save_onnx(str(path))
        back = witness.load_model(path)
        probe = pd.DataFrame({"cat": [0, 1, 2, 3, 4, 5, 6, 7, 9, -1, np.nan] * 3,
                              "a": np.repeat([-1.0, 0.6, np.nan], 11)})
        for rows in (X, probe):
            assert agree(back, est, rows) == 0


def test_hist_gradient_boosting_multiclass_agrees_on_every_row():
    rng = np.random.default_rng(9)
    n = 450
    X = pd.DataFrame({"x": rng.normal(size=n), "c": rng.integers(0, 5, n).astype(float), "z": rng.uniform(-3, 3, n)})
    y = np.where(X.x + 0.4 * X.z > 0.8, "high", np.where(X.c.isin([0, 3]), "mid", "low"))
    X.loc[rng.random(n) < 0.1, "z"] = np.nan
    hist_agree(X, y, max_iter=15, categorical_features=[1])


def test_hist_gradient_boosting_in_a_pipeline_reads_the_encoded_categories():
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OrdinalEncoder

    rng = np.random.default_rng(2)
    n = 400
    X = pd.DataFrame({"color": rng.choice(["red", "green", "blue", "grey"], n), "age": rng.integers(18, 80, n),
                      "income": rng.normal(50, 15, n)})
    y = np.where((X.color.isin(["red", "grey"])) ^ (X.income > 55), "yes", "no")
    pre = ColumnTransformer([("cat", OrdinalEncoder(), ["color"]), ("num", "passthrough", ["age", "income"])])
    clf = HistGradientBoostingClassifier(max_iter=20, categorical_features=[0], random_state=0)
    pipe = hist_fit(Pipeline([("pre", pre), ("clf", clf)]), X, y)
    model = witness.from_sklearn(pipe)
    schema = witness.Schema.from_pipeline(pipe, X)
    ours = np.asarray(model.classes)[model.predict(schema._native.to_model(schema.encode(X)))]
    assert (ours == pipe.predict(X)).all()


def test_hist_gradient_boosting_is_counted_exactly_by_the_tree_engine():
    # A pipeline over a small raw domain (4 colours x 63 ages x 2 sexes): the tree engine's exact
    # share of people whose label changes with sex equals the pipeline's own predictions on every one.
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OrdinalEncoder

    rng = np.random.default_rng(4)
    n = 600
    X = pd.DataFrame({"color": rng.choice(["red", "green", "blue", "grey"], n), "age": rng.integers(18, 81, n),
                      "sex": rng.choice(["f", "m"], n)})
    y = np.where((X.age > 40) ^ (X.color == "red") ^ ((X.sex == "m") & (X.age % 7 == 0)), "yes", "no")
    pre = ColumnTransformer([("cat", OrdinalEncoder(), ["color", "sex"]), ("num", "passthrough", ["age"])])
    clf = HistGradientBoostingClassifier(max_iter=30, categorical_features=[0, 1], random_state=0)
    pipe = hist_fit(Pipeline([("pre", pre), ("clf", clf)]), X, y)
    schema = witness.Schema.from_pipeline(pipe, X, protected=["sex"])
    r = witness.fair(pipe, schema, quantify=True, time_limit=60)
    colors, ages = ["blue", "green", "grey", "red"], range(18, 81)
    grid = pd.DataFrame([(c, a) for c in colors for a in ages], columns=["color", "age"])
    f = pipe.predict(grid.assign(sex="f")[X.columns])
    m = pipe.predict(grid.assign(sex="m")[X.columns])
    assert r.undecided == 0
    assert r.falsified == pytest.approx(np.mean(f != m), abs=1e-12)
    assert r.verdict == ("witness" if (f != m).any() else "verified")
