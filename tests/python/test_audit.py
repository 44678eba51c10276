"""The auditor's answer from Python (issue 46): the label is named, never guessed; who flips in
which direction equals flipping every row by hand with the pipeline's own predict; the group rates
and impact ratios equal a pandas reference; an unaware model is verified with its group table; the
keywords the CLI has (protected as a string, regions_out, flips_out) and the smaller defects."""

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

import witness

from conftest import ROOT

PIPES = ROOT / "tests" / "fixtures" / "pipelines"


@pytest.fixture(scope="module")
def audit_frame():
    # The label first (not last), an extra 0/1 column last that must never be taken for the label,
    # and a protected column the model does not read.
    df = pd.read_csv(PIPES / "adult_600.csv", keep_default_na=False)
    df.insert(0, "deny", np.where(df["income"] == ">50K", ">50K", "<=50K"))
    df = df.drop(columns=["income"])
    df["reviewed"] = np.arange(len(df)) % 2
    return df


@pytest.fixture(scope="module")
def pipe(audit_frame):
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    import skl2onnx_shapes as s2o

    X = audit_frame.drop(columns=["deny", "reviewed"])
    return s2o.standard_pipeline(LogisticRegression(max_iter=1000)).fit(X, audit_frame["deny"])


def test_no_label_is_guessed_and_the_named_one_is_used(pipe, audit_frame):
    r = witness.fair(pipe, audit_frame, protected="sex")
    doc = r.to_dict()
    assert doc["groups"]["label"] is None and doc["groups"]["no_true_labels"]
    assert set(doc["unread_columns"]) == {"deny", "reviewed"}
    r = witness.fair(pipe, audit_frame, protected="sex", label="deny", favorable=">50K")
    table = r.groups["tables"][0]
    X = audit_frame.drop(columns=["deny", "reviewed"])
    decided = pipe.predict(X)
    for g in table["groups"]:
        rows = audit_frame["sex"] == g["values"][0]
        truth = audit_frame["deny"][rows] == ">50K"
        pos = decided[rows] == ">50K"
        assert g["rows"] == int(rows.sum())
        assert g["favorable_rate"]["rate"] == pytest.approx(pos.mean(), abs=1e-12)
        assert g["true_positive_rate"]["rate"] == pytest.approx(pos[truth].mean(), abs=1e-12)
        assert g["false_positive_rate"]["rate"] == pytest.approx(pos[~truth].mean(), abs=1e-12)
    best = max(g["favorable_rate"]["rate"] for g in table["groups"])
    for g in table["groups"]:
        assert g["impact_ratio"] == pytest.approx(g["favorable_rate"]["rate"] / best, abs=1e-12)
    with pytest.raises(witness.InputError, match="no column 'nothere'"):
        witness.fair(pipe, audit_frame, protected="sex", label="nothere")


def test_flips_by_group_and_direction_equal_flipping_every_row_by_hand(pipe, audit_frame, tmp_path):
    r = witness.fair(pipe, audit_frame, protected=["sex"], favorable=">50K", flips_out=tmp_path / "flips.csv")
    X = audit_frame.drop(columns=["deny", "reviewed"])
    own = pipe.predict(X)
    other = X.copy()
    other["sex"] = np.where(X["sex"] == "Male", "Female", "Male")
    twin = pipe.predict(other)
    flipped = own != twin
    by_group = {g["group"]: g for g in r.to_dict()["data"]["by_group"]}
    for sex in ("Female", "Male"):
        rows = (X["sex"] == sex).to_numpy()
        to_fav = int((rows & flipped & (own != ">50K")).sum())
        to_unfav = int((rows & flipped & (own == ">50K")).sum())
        g = by_group[f"sex={sex}"]
        assert (g["to_favorable"]["k"], g["to_unfavorable"]["k"]) == (to_fav, to_unfav)
    assert r.flips is not None and sorted(r.flips["row"]) == sorted((np.flatnonzero(flipped) + 1).tolist())
    written = pd.read_csv(tmp_path / "flips.csv", keep_default_na=False)
    assert written["row"].tolist() == r.flips["row"].tolist() and len(written.columns) == len(r.flips.columns)
    assert r.verdict == "witness" and r.witness["nearest_row"]["differs"] == []  # a real row first


def test_an_unaware_model_is_verified_with_its_group_table(audit_frame):
    X = audit_frame.drop(columns=["deny", "reviewed", "sex", "race"])
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    import skl2onnx_shapes as s2o

    strings = [c for c in s2o.STRING_COLS if c in X.columns]
    blind = s2o.standard_pipeline(LogisticRegression(max_iter=1000), string_cols=strings).fit(X, audit_frame["deny"])
    r = witness.fair(blind, audit_frame, protected="sex", groups="sex,race", label="deny", favorable=">50K")
    assert r.verdict == "verified" and r.to_dict()["unread_protected"] == ["sex"]
    assert [t["columns"] for t in r.groups["tables"]] == [["sex"], ["race"], ["sex", "race"]]
    b = witness.bias(blind, audit_frame, protected="sex", label="deny")
    assert b.bias_percent == 0.0 and b.groups["tables"][0]["columns"] == ["sex"]


def test_regions_out_the_report_command_and_predict_on_a_dataframe(pipe, audit_frame, tmp_path):
    r = witness.fair(pipe, audit_frame, protected="sex", quantify=True, time_limit=5, regions_out=tmp_path / "r.csv")
    assert (tmp_path / "r.csv").exists()
    envelope = json.loads(r._report)
    assert "data=<DataFrame 600 rows" in envelope["command"]
    X = audit_frame.drop(columns=["deny", "reviewed"])
    model = witness.from_sklearn(pipe)
    labels = np.asarray(model.classes)[model.predict(X)]
    assert (labels == pipe.predict(X)).all()


def test_query_with_a_pipeline_as_the_model(pipe, audit_frame):
    row = audit_frame.drop(columns=["deny", "reviewed"]).iloc[0]
    inputs = {c: {"role": "environment", "type": "category" if isinstance(v, str) else "int", "value": v}
              for c, v in row.items()}
    inputs["age"] = {"role": "environment", "type": "int"}  # free: might another age change the decision?
    r = witness.query({"name": "age", "kind": "might", "behavior": "label == 1", "inputs": inputs}, model=pipe)
    assert r.answers[0]["answer"] in (True, False)


def test_near_data_over_real_valued_rows_visits_every_box():
    # 2,000 applicants with real-valued ratios (the probe's mortgage shape): every row's box is
    # searched within the time limit, each box with its share of the time.
    import sys
    import time

    sys.path.insert(0, str(ROOT / "tools"))
    import skl2onnx_shapes as s2o

    rng = np.random.default_rng(1)
    n = 2000
    dir_ = rng.uniform(0.1, 0.6, n).round(3)
    df = pd.DataFrame({"deny": "", "dir": dir_, "hir": (dir_ * rng.uniform(0.3, 1.0, n)).round(3),
                       "lvr": rng.uniform(0.2, 1.2, n).round(3), "afam": rng.choice(["no", "yes"], n)})
    df["deny"] = np.where(3 * df["dir"] + 0.4 * (df["afam"] == "yes") + rng.normal(0, 0.3, n) > 1.2, "yes", "no")
    X = df.drop(columns=["deny"]).astype({"dir": "float32", "hir": "float32", "lvr": "float32"})
    pipe = s2o.standard_pipeline(LogisticRegression(max_iter=500), string_cols=["afam"],
                                 numeric_cols=["dir", "hir", "lvr"]).fit(X, df["deny"])
    t = time.time()
    r = witness.fair(pipe, df, protected="afam", label="deny", favorable="no", near_data=1, quantify=True,
                     time_limit=20)
    assert time.time() - t < 30
    phase = r.to_dict()["phase"]
    distinct = len(X.drop(columns=["afam"]).drop_duplicates())
    assert f"around {distinct} of {distinct} distinct rows" in phase, phase
    assert r.verdict == "witness" and r.undecided < 0.01


def test_rows_of_a_dataframe_are_named_by_its_index_labels(pipe, audit_frame, tmp_path):
    # A sample keeps the index labels of the frame it came from: answers name a row as df.loc
    # takes it, never by a count of rows that the user would read as a position or a label.
    sample = audit_frame.sample(frac=0.5, random_state=3)
    sample.index = [f"app-{i}" for i in sample.index]
    r = witness.fair(pipe, sample, protected="sex", favorable=">50K", flips_out=tmp_path / "flips.csv")
    assert r.verdict == "witness"
    near = r.witness["nearest_row"]
    assert near["differs"] == [] and near["index"] == sample.index[near["row"] - 1]
    assert f"x is a person of the data: index {near['index']} of data" in r.text
    assert r.flips["index"].tolist() == [sample.index[k - 1] for k in r.flips["row"]]
    assert f"    index {r.flips['index'].iloc[0]}  sex=" in r.text
    assert pd.read_csv(tmp_path / "flips.csv", keep_default_na=False)["index"].tolist() == r.flips["index"].tolist()
    person = sample.loc[near["index"]]
    assert all(str(person[name]) == str(value) for name, value in r.witness["x_named"].items() if name != "sex")


def test_an_index_label_cannot_start_a_line_of_the_answer(pipe, audit_frame):
    # A label holding a line break (or a space, a quote) is quoted and escaped in the text, so no
    # label can print a line that reads as part of the answer; the JSON keeps it as it is.
    frame = audit_frame.copy()
    frame.index = [f'app {i}\nverdict: fair "ok"' for i in range(len(frame))]
    r = witness.fair(pipe, frame, protected="sex", favorable=">50K")
    near = r.witness["nearest_row"]
    assert near["index"] == frame.index[near["row"] - 1]
    assert "\nverdict: fair" not in r.text
    assert f'index "app {near["row"] - 1}\\nverdict: fair \\"ok\\"" of data' in r.text
