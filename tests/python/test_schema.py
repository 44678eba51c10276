"""Schema.encode / decode / label_codes: DataFrames of labels, codes and numbers to raw rows and back."""

import numpy as np
import pandas as pd
import pytest

import witness

SCHEMA = """
name = "loans"
label = "ok"
label_classes = ["no", "yes"]
protected = ["group"]

[[features]]
name = "group"
kind = "categorical"
categories = ["a", "b", "c"]

[[features]]
name = "grade"
kind = "categorical"
categories = ["3", "1", "2"]

[[features]]
name = "income"
kind = "real"
min = 0
max = 100
"""


@pytest.fixture
def schema():
    return witness.Schema.from_toml(SCHEMA)


def test_labels_codes_and_numbers_encode_alike(schema):
    n = 3000  # a black box's batch: the labels are looked up once each, not once per row
    rng = np.random.default_rng(0)
    group = rng.choice(["a", "b", "c"], n)
    grade = rng.choice(["3", "1", "2"], n)
    income = rng.uniform(0, 100, n)
    want = np.column_stack([pd.Series(group).map({"a": 0, "b": 1, "c": 2}), pd.Series(grade).map({"3": 0, "1": 1, "2": 2}),
                            income])
    as_text = pd.DataFrame({"group": group, "grade": grade, "income": income})
    as_categoricals = as_text.astype({"group": pd.CategoricalDtype(["c", "b", "a", "unused"]), "grade": "category"})
    # A number in a categorical column is a code, unless a label reads as that number: grade 2 is "2".
    as_numbers = pd.DataFrame({"group": want[:, 0], "grade": grade.astype(int), "income": income})
    for df in (as_text, as_categoricals, as_numbers):
        assert np.array_equal(schema.encode(df), want)
    back = schema.decode(want)
    assert list(back["group"].cat.categories) == ["a", "b", "c"] and back["group"].tolist() == group.tolist()
    assert np.array_equal(schema.encode(back), want)


def test_an_unknown_label_names_its_first_row(schema):
    df = pd.DataFrame({"group": ["a", "b", "martian", "a", "martian"], "grade": ["1"] * 5, "income": [1.0] * 5})
    with pytest.raises(witness.InputError, match=r"row 3: 'martian' is not a category of group \(a, b, c\)"):
        schema.encode(df)
    with pytest.raises(witness.InputError, match=r"row 3: 'martian' is not a category of group"):
        schema.encode(df.astype({"group": "category"}))
    with pytest.raises(witness.InputError, match="income"):
        schema.encode(df.assign(group="a", income=[1.0, 2.0, 300.0, 4.0, 5.0]))


def test_label_codes_from_names_indices_and_numbers(schema):
    assert schema.label_codes(["yes", "no", "yes"]).tolist() == [1, 0, 1]
    assert schema.label_codes(np.array(["no", "yes"] * 2000, dtype=object)).tolist() == [0, 1] * 2000
    assert schema.label_codes(pd.Series([1, 0])).tolist() == [1, 0]
    assert schema.label_codes(np.array([[1.0], [0.0]])).tolist() == [1, 0]
    assert schema.label_codes(["1", "0"]).tolist() == [1, 0]
    with pytest.raises(witness.InputError, match=r"row 4: 'maybe' is not a class \(classes: no, yes\)"):
        schema.label_codes(["no", "yes", "no", "maybe", "maybe"])
    with pytest.raises(witness.InputError, match="class indices or class names"):
        schema.label_codes([0.5, 1.0])
    with pytest.raises(witness.InputError, match="one label per row"):
        schema.label_codes(np.zeros((2, 2)))


def test_from_dataframe_refuses_what_it_cannot_bound():
    cases = [
        (pd.DataFrame([[1, 2]], columns=["a", "a"]), "column names repeat: a"),
        (pd.DataFrame({"when": pd.to_datetime(["2020-01-01", "2021-06-01"])}), "'when' holds datetime64"),
        (pd.DataFrame({"a": pd.Series([], dtype=float)}), "'a' has no rows to take bounds from"),
        (pd.DataFrame({"a": [1.0, np.inf]}), "'a' has infinite values"),
        (pd.DataFrame({"a": [1.0, None]}), "'a' has missing values"),
    ]
    for df, message in cases:
        with pytest.raises(witness.InputError, match=message):
            witness.Schema.from_dataframe(df)
    # What the user says instead: bounds for an empty column, dates as categories.
    assert witness.Schema.from_dataframe(pd.DataFrame({"a": pd.Series([], dtype=float)}), bounds={"a": (0, 1)})
    dates = witness.Schema.from_dataframe(pd.DataFrame({"when": pd.to_datetime(["2020-01-01", "2021-06-01"])}),
                                          kinds={"when": "categorical"})
    assert dates.features[0].categories == ("2020-01-01 00:00:00", "2021-06-01 00:00:00")
