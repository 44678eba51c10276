#!/usr/bin/python3
"""Writes tests/fixtures/pipelines/unaware_lr.onnx and .labels: the standard logistic-regression
pipeline of tools/make_pipeline_fixtures.py fitted on adult_600.csv WITHOUT the sex and race
columns (an "unaware" model, the regulator's classic case: it cannot read the protected attribute,
yet its decisions may still differ by group). Run with Debian's /usr/bin/python3 (python3-onnx,
python3-sklearn, python3-pandas, numpy); seeded, so a rerun gives the same files. The script
checks the graph against pipe.predict on the 600 rows, as the other fixtures are checked.
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
UNREAD = ["sex", "race"]


def main():
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    warnings.filterwarnings("ignore", category=ConvergenceWarning)
    df = s2o.read_adult(os.path.join(OUT, "adult_600.csv"))
    X = df.drop(columns=["income"] + UNREAD)
    pipe = s2o.standard_pipeline(LogisticRegression(max_iter=1000),
                                 string_cols=[c for c in s2o.STRING_COLS if c not in UNREAD])
    pipe.fit(X, df["income"])
    path = os.path.join(OUT, "unaware_lr.onnx")
    model = s2o.to_onnx(pipe, X, path)
    onnx.checker.check_model(model)
    expected = [str(v) for v in pipe.predict(X)]
    with open(os.path.join(OUT, "unaware_lr.labels"), "w") as f:
        f.write("\n".join(expected) + "\n")
    got = ev.run(model, s2o.feeds_for(model, X))["output_label"]
    differ = sum(1 for a, b in zip(got, expected) if str(a) != b)
    print("unaware_lr.onnx: %d bytes, %d/600 labels differ from pipe.predict" % (os.path.getsize(path), differ))
    if differ:
        raise SystemExit("unaware_lr: the graph disagrees with pipe.predict on %d rows" % differ)


if __name__ == "__main__":
    main()
