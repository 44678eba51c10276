"""Schemas: named, typed, bounded features (docs/schema.md), from TOML or from a pandas DataFrame."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from . import _witness
from ._witness import InputError


@dataclass(frozen=True)
class Feature:
    name: str
    kind: str  # "integer", "real", "categorical", "boolean"
    min: float
    max: float
    categories: Tuple[str, ...]
    one_hot: bool
    missing: str = ""  # what a missing value (NaN) is read as: a category label or a number; "": an error


def _toml_string(text: str) -> str:
    # JSON's escapes (\" \\ \n \uXXXX) are TOML basic-string escapes too.
    return json.dumps(text, ensure_ascii=False)


def _toml_number(value: float, integral: bool) -> str:
    if integral:
        return str(int(value))
    if not math.isfinite(value):
        raise InputError(f"bound {value} is not finite")
    text = repr(float(value))
    return text if any(c in text for c in ".en") else text + ".0"


class Schema:
    """The inputs of a model: which features, in which order, what values each may take.

    >>> s = witness.Schema.load("benchmarks/fairify/adult.toml")
    >>> s = witness.Schema.from_dataframe(df, label="income", protected=["sex"])
    """

    def __init__(self, native: "_witness.Schema", toml: Optional[str] = None):
        self._native = native
        self._toml = toml

    # --- construction -------------------------------------------------------------------------
    @classmethod
    def load(cls, path: str, box: Optional[str] = None) -> "Schema":
        """Reads a TOML schema file (InputError naming the file, line and feature when malformed)."""
        native = _witness.Schema.load(str(path))
        if box:
            native = native.with_box(box)
        with open(path, encoding="utf-8") as f:
            return cls(native, f.read())

    @classmethod
    def from_toml(cls, text: str, source: str = "<schema>") -> "Schema":
        return cls(_witness.Schema.parse(text, source), text)

    @classmethod
    def from_dataframe(
        cls,
        df: Any,
        label: Optional[str] = None,
        protected: Sequence[str] = (),
        name: str = "dataframe",
        bounds: Optional[Mapping[str, Tuple[float, float]]] = None,
        kinds: Optional[Mapping[str, str]] = None,
        categories: Optional[Mapping[str, Sequence[Any]]] = None,
    ) -> "Schema":
        """A schema with one feature per column of `df` (but the label), in column order.

        Rules (those of `witness schema infer`): a boolean column is `boolean`; a pandas
        Categorical column is `categorical` with its categories in order; any other non-numeric
        column is `categorical` with its distinct values sorted; a numeric column is `integer`
        when every value is integral, else `real`, with the data's min and max as bounds.
        `bounds`, `kinds` and `categories` override the guess per column.
        """
        import pandas as pd

        if not isinstance(df, pd.DataFrame):
            raise InputError("from_dataframe: expected a pandas DataFrame")
        bounds, kinds, categories = dict(bounds or {}), dict(kinds or {}), dict(categories or {})
        columns = [str(c) for c in df.columns]
        repeated = sorted({c for c in columns if columns.count(c) > 1})
        if repeated:
            raise InputError(f"from_dataframe: column names repeat: {', '.join(repeated)}")
        for what, given in (("bounds", bounds), ("kinds", kinds), ("categories", categories)):
            for c in given:
                if c not in columns:
                    raise InputError(f"from_dataframe: {what} names '{c}', which is not a column")
        if label is not None and label not in columns:
            raise InputError(f"from_dataframe: label '{label}' is not a column (columns: {', '.join(columns)})")
        lines = [f"name = {_toml_string(name)}"]
        if label is not None:
            lines.append(f"label = {_toml_string(label)}")
            classes = _label_classes(df[label])
            if classes is not None:
                lines.append("label_classes = [" + ", ".join(_toml_string(c) for c in classes) + "]")
        if protected:
            lines.append("protected = [" + ", ".join(_toml_string(p) for p in protected) + "]")
        for column, c in zip(df.columns, columns):
            if c == label:
                continue
            lines += ["", "[[features]]", f"name = {_toml_string(c)}"]
            lines += _feature_lines(df[column], c, kinds.get(c), bounds.get(c), categories.get(c))
        return cls.from_toml("\n".join(lines) + "\n", f"<dataframe {name}>")

    @classmethod
    def from_pipeline(
        cls,
        model: Any,
        df: Any,
        label: Optional[str] = None,
        protected: Sequence[str] = (),
        name: str = "dataframe",
    ) -> "Schema":
        """The schema of a scikit-learn Pipeline (or a converted Model that carries its
        preprocessing) over the rows of `df`: the model's columns with their categories, one-hot
        or ordinal encodings, scalers and imputed values, the classifier's class names, and the
        data's kinds and ranges of numbers (those of `witness schema infer MODEL --data D.csv`).
        `label` names the true-label column of `df` (default: none; never guessed)."""
        import pandas as pd

        from ._convert import as_model

        import os

        if isinstance(df, (str, os.PathLike)):
            with open(os.fspath(df), encoding="utf-8") as f:
                text, name = f.read(), os.fspath(df)
        elif isinstance(df, pd.DataFrame):
            text = df.to_csv(index=False)
        else:
            raise InputError("from_pipeline: expected a pandas DataFrame (or a CSV path) of the raw columns")
        m = as_model(model)
        if not m.columns:
            raise InputError(f"from_pipeline: {m.source or m.name} carries no preprocessing (no raw columns); use "
                             "Schema.from_dataframe or a schema file")
        toml = _witness.infer_schema(text, name, label or "", m)
        if protected:
            listed = "protected = [" + ", ".join(_toml_string(p) for p in protected) + "]"
            toml = toml.replace("\nprotected = []\n", "\n" + listed + "\n", 1)
        return cls.from_toml(toml, f"<schema of {m.name}>")

    # --- what it holds ------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._native.name

    @property
    def source(self) -> str:
        return self._native.source

    @property
    def label(self) -> str:
        return self._native.label

    @property
    def label_classes(self) -> List[str]:
        return list(self._native.label_classes)

    @property
    def protected(self) -> List[str]:
        return list(self._native.protected)

    @property
    def features(self) -> List[Feature]:
        return [
            Feature(f["name"], f["kind"], f["min"], f["max"], tuple(f["categories"]), f["one_hot"], f["missing"])
            for f in self._native.features
        ]

    @property
    def columns(self) -> List[str]:
        return [f.name for f in self.features]

    @property
    def boxes(self) -> List[str]:
        return list(self._native.boxes)

    def with_box(self, box: str) -> "Schema":
        return Schema(self._native.with_box(box), self._toml)

    def to_toml(self) -> str:
        if self._toml is None:
            raise InputError("this schema has no TOML text")
        return self._toml

    def save(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.to_toml())

    def __repr__(self) -> str:
        return f"Schema({self.name!r}, {len(self.features)} features, protected={self.protected})"

    # --- rows ---------------------------------------------------------------------------------
    def encode(self, df: Any, what: str = "data") -> np.ndarray:
        """Raw values [n][features] (category codes, 0/1 for booleans) of a DataFrame's columns,
        checked against the bounds (InputError naming the row)."""
        import pandas as pd

        if not isinstance(df, pd.DataFrame):
            raise InputError(f"{what}: expected a pandas DataFrame")
        missing = [f.name for f in self.features if f.name not in df.columns]
        if missing:
            raise InputError(f"{what}: no column for feature(s) {', '.join(missing)}")
        raw = np.empty((len(df), len(self.features)), dtype=np.float64)
        for j, f in enumerate(self.features):
            raw[:, j] = _encode_column(df[f.name], f, what)
        self._native.check_rows(raw, what)
        return raw

    def decode(self, raw: np.ndarray) -> Any:
        """A DataFrame of raw rows [n][features]: categories as pandas Categoricals of their labels."""
        import pandas as pd

        raw = np.asarray(raw, dtype=np.float64)
        columns = {}
        for j, f in enumerate(self.features):
            columns[f.name] = _decode_column(raw[:, j], f)
        return pd.DataFrame(columns)

    def label_codes(self, labels: Any, what: str = "labels") -> np.ndarray:
        """Class indices of labels given as class names (the schema's label_classes) or indices."""
        import pandas as pd

        values = np.asarray(labels)
        if values.ndim == 2 and values.shape[1] == 1:
            values = values[:, 0]
        if values.ndim != 1:
            raise InputError(f"{what}: expected one label per row, got shape {values.shape}")
        classes = self.label_classes
        if values.dtype.kind in "biu":
            return values.astype(np.int64)
        if values.dtype.kind == "f":
            if not np.all(np.isfinite(values)) or not np.all(values == np.round(values)):
                raise InputError(f"{what}: labels must be class indices or class names, got {values[:3]}")
            return values.astype(np.int64)
        index = {c: i for i, c in enumerate(classes)}
        codes, uniques = pd.factorize(pd.Series(values, copy=False).astype(str))  # each name looked up once
        table = np.empty(len(uniques), dtype=np.int64)
        for k, key in enumerate(uniques):
            if key in index:
                table[k] = index[key]
                continue
            try:
                table[k] = int(key)
            except ValueError:
                i = int(np.flatnonzero(codes == k)[0])
                known = ", ".join(classes) if classes else "none: give the schema label_classes"
                raise InputError(f"{what}: row {i + 1}: '{key}' is not a class (classes: {known})") from None
        return table[codes]


def _label_classes(column: Any) -> Optional[List[str]]:
    import pandas as pd

    if isinstance(column.dtype, pd.CategoricalDtype):
        return [str(c) for c in column.dtype.categories]
    if column.dtype.kind in "biuf":
        return None
    return sorted({str(v) for v in column})


def _numeric(column: Any) -> bool:
    return column.dtype.kind in "iuf"


def _feature_lines(column: Any, name: str, kind: Optional[str], bounds: Any, cats: Any) -> List[str]:
    import pandas as pd

    if column.isna().any():
        raise InputError(f"from_dataframe: column '{name}' has missing values (schemas have none)")
    if column.dtype.kind in "mMc" and kind != "categorical":
        # Dates, durations and complex numbers have no order a schema can bound: the user says what they mean.
        raise InputError(f"from_dataframe: column '{name}' holds {column.dtype} values: convert them to numbers, "
                         f"or give kinds={{'{name}': 'categorical'}}")
    if kind is None:
        if column.dtype.kind == "b":
            kind = "boolean"
        elif isinstance(column.dtype, pd.CategoricalDtype) or not _numeric(column) or cats is not None:
            kind = "categorical"
        elif np.all(np.isfinite(values := column.to_numpy(dtype=np.float64))) and np.all(np.mod(values, 1.0) == 0.0):
            kind = "integer"
        else:
            kind = "real"
    lines = [f'kind = "{kind}"']
    if kind == "categorical":
        if cats is None:
            if isinstance(column.dtype, pd.CategoricalDtype):
                cats = list(column.dtype.categories)
            elif _numeric(column):
                values = column.to_numpy()
                cats = [str(int(v)) if float(v).is_integer() else str(v) for v in sorted(set(values.tolist()))]
            else:
                cats = sorted({str(v) for v in column})
        lines.append("categories = [" + ", ".join(_toml_string(str(c)) for c in cats) + "]")
        if bounds is not None:
            raise InputError(f"from_dataframe: '{name}' is categorical: restrict it with a box, not bounds")
    elif kind in ("integer", "real"):
        if bounds is None:
            values = column.to_numpy(dtype=np.float64)
            if not len(values):
                raise InputError(f"from_dataframe: column '{name}' has no rows to take bounds from: give bounds")
            if not np.all(np.isfinite(values)):
                raise InputError(f"from_dataframe: column '{name}' has infinite values: give finite bounds")
            bounds = (values.min(), values.max())
        lo, hi = bounds
        lines += [f"min = {_toml_number(lo, kind == 'integer')}", f"max = {_toml_number(hi, kind == 'integer')}"]
    elif kind != "boolean":
        raise InputError(f"from_dataframe: '{name}': unknown kind '{kind}' (integer, real, categorical, boolean)")
    return lines


def _encode_column(column: Any, f: Feature, what: str) -> np.ndarray:
    import pandas as pd

    if column.dtype == object and f.missing:
        column = column.replace("", np.nan)  # an empty cell is a missing value, as in a CSV file
    if column.isna().any():
        if not f.missing:
            raise InputError(f"{what}: column '{f.name}' has missing values (and the schema gives no 'missing' value)")
        if isinstance(column.dtype, pd.CategoricalDtype) and f.missing not in column.cat.categories:
            column = column.cat.add_categories([f.missing])
        column = column.fillna(f.missing if f.kind == "categorical" and not _numeric(column) else float(f.missing))
    if f.kind == "categorical":
        if isinstance(column.dtype, pd.CategoricalDtype) or not _numeric(column):
            # Each distinct label is looked up once: batches of a black box hold thousands of rows.
            if isinstance(column.dtype, pd.CategoricalDtype):
                codes, labels = column.cat.codes.to_numpy(), [str(c) for c in column.cat.categories]
            else:
                codes, uniques = pd.factorize(column.astype(str))
                labels = [str(c) for c in uniques]
            index = {c: i for i, c in enumerate(f.categories)}
            table = np.empty(len(labels), dtype=np.float64)
            known = np.ones(len(labels), dtype=bool)
            for k, label in enumerate(labels):
                if label in index:
                    table[k] = index[label]
                elif _is_number(label):
                    table[k] = float(label)
                else:
                    known[k] = False
            if not known[codes].all():
                i = int(np.flatnonzero(~known[codes])[0])
                raise InputError(
                    f"{what}: row {i + 1}: '{labels[codes[i]]}' is not a category of {f.name} ({', '.join(f.categories)})"
                )
            return table[codes]
        # A number is a code, but a label that reads as the same number wins (as the CLI reads CSV).
        numeric_labels: Dict[float, int] = {}
        for i, c in enumerate(f.categories):
            if _is_number(c):
                numeric_labels.setdefault(float(c), i)
        values = column.to_numpy(dtype=np.float64)
        out = values.copy()
        for number, code in numeric_labels.items():
            out[values == number] = code
        return out
    if f.kind == "boolean":
        return column.astype(bool).to_numpy(dtype=np.float64) if column.dtype.kind == "b" else column.to_numpy(np.float64)
    return column.to_numpy(dtype=np.float64)


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def _decode_column(values: np.ndarray, f: Feature) -> Any:
    import pandas as pd

    if f.kind == "categorical":
        codes = values.astype(np.int64)
        if len(codes) and (codes.min() < 0 or codes.max() >= len(f.categories)):
            return codes  # a box beyond the labels: codes without a name
        return pd.Categorical.from_codes(codes, categories=list(f.categories))
    if f.kind == "boolean":
        return values != 0.0
    if f.kind == "integer":
        return values.astype(np.int64)
    return values


def column_types(df: Any, schema: Schema) -> Any:
    """A pairs CSV read as strings, with the schema's types: categories, integers, booleans."""
    import pandas as pd

    features = {f.name: f for f in schema.features}
    for column in df.columns:
        f = features.get(column) or features.get(column.rstrip("'"))
        if f is None:
            continue
        text = df[column].astype(str)
        if f.kind == "categorical":
            df[column] = pd.Categorical(text, categories=list(f.categories))
        elif f.kind == "boolean":
            df[column] = text == "true"
        elif f.kind == "integer":
            df[column] = text.astype(np.int64)
        else:
            df[column] = text.astype(np.float64)
    return df
