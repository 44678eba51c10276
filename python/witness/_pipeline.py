"""scikit-learn Pipelines and ColumnTransformers -> witness models that read the raw columns.

The preprocessing becomes the model's column encodings (one-hot or ordinal codes, the scalers'
affine maps in the form scikit-learn computes them, the imputers' fill values); the classifier
becomes the model's graph, with the encoders' output columns folded into its first layer or its
trees. A step witness cannot represent exactly is an error naming the step and its position."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ._witness import InputError

_SUPPORTED = ("OneHotEncoder, OrdinalEncoder, StandardScaler, MinMaxScaler, MaxAbsScaler, RobustScaler, "
              "SimpleImputer, ColumnTransformer, Pipeline, 'passthrough', 'drop', FunctionTransformer()")


@dataclass
class _Feature:
    """One transformed feature, in terms of one raw column: the value itself (a number, or an
    ordinal code) after an affine map, or the indicator of a set of the column's categories."""

    raw: int
    kind: str  # "value", "code" or "indicator"
    labels: List[str] = field(default_factory=list)  # indicator: the categories that set it
    norm: Optional[Tuple[str, float, float]] = None  # ("mean_std" | "scale_offset", a, b)


@dataclass
class _RawColumn:
    name: str
    categories: Optional[List[str]] = None
    one_hot: bool = False
    step: str = ""  # the step that encodes it, for messages
    missing: str = ""
    users: List[str] = field(default_factory=list)  # steps that read the column's value directly


def _label(value: Any) -> str:
    """A category as the text a CSV or DataFrame cell holds: 3 and 3.0 -> "3"."""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return str(int(v)) if v.is_integer() else repr(v)
    return str(value)


def _is_missing(value: Any) -> bool:
    if value is None:
        return True
    try:
        return bool(np.isnan(value))
    except (TypeError, ValueError):
        return type(value).__name__ in ("NAType", "NaTType")


class _Walk:
    """Follows a fitted transformer over the features it reads, recording what it does to the raw
    columns."""

    def __init__(self, names: Sequence[str]):
        self.columns = [_RawColumn(str(n)) for n in names]

    def fail(self, where: str, what: str) -> None:
        raise InputError(f"from_sklearn: {where}: {what}")

    def transform(self, est: Any, features: List[_Feature], where: str) -> List[_Feature]:
        if est is None or (isinstance(est, str) and est == "passthrough"):
            return features
        kind = type(est).__name__
        if kind == "Pipeline":
            for i, (name, step) in enumerate(est.steps):
                features = self.transform(step, features, f"{where}step {i + 1} '{name}' of a Pipeline > ")
            return features
        here = f"{where}{kind}".rstrip(" >")
        if kind == "ColumnTransformer":
            return self.column_transformer(est, features, where)
        if kind == "FunctionTransformer":
            if est.func is None:
                return features
            self.fail(here, "a FunctionTransformer runs arbitrary code, which witness cannot follow exactly")
        handlers = {
            "SimpleImputer": self.imputer,
            "OneHotEncoder": self.one_hot,
            "OrdinalEncoder": self.ordinal,
            "StandardScaler": self.standard,
            "MinMaxScaler": self.min_max,
            "MaxAbsScaler": self.max_abs,
            "RobustScaler": self.robust,
        }
        if kind not in handlers:
            self.fail(here, f"{kind} is not supported (witness reads {_SUPPORTED})")
        return handlers[kind](est, features, here)

    def column_transformer(self, ct: Any, features: List[_Feature], where: str) -> List[_Feature]:
        indices = getattr(ct, "_transformer_to_input_indices", None)
        if indices is None:
            self.fail(f"{where}ColumnTransformer", "not fitted, or a scikit-learn without _transformer_to_input_indices")
        out: List[_Feature] = []
        for name, trans, _ in ct.transformers_:
            columns = list(indices.get(name, []))
            if (isinstance(trans, str) and trans == "drop") or not columns:
                continue
            picked = [features[i] for i in columns]
            out += self.transform(trans, picked, f"{where}ColumnTransformer '{name}' > ")
        return out

    # --- steps on raw values ---------------------------------------------------------------------
    def raw_values(self, features: List[_Feature], where: str) -> None:
        for f in features:
            if f.kind != "value" or f.norm is not None:
                col = self.columns[f.raw].name
                self.fail(where, f"reads column '{col}' after it was encoded or scaled; witness reads an imputer or "
                                 "encoder on raw values only")

    def imputer(self, imp: Any, features: List[_Feature], where: str) -> List[_Feature]:
        self.raw_values(features, where)
        if getattr(imp, "add_indicator", False):
            self.fail(where, "add_indicator=True adds columns that depend on missingness; not supported")
        if not _is_missing(imp.missing_values) and imp.missing_values != "":
            self.fail(where, f"missing_values={imp.missing_values!r}: only NaN, None and '' (empty cells) are supported")
        stats = list(imp.statistics_)
        if len(stats) != len(features):
            self.fail(where, f"{len(stats)} statistics for {len(features)} columns")
        for f, value in zip(features, stats):
            col = self.columns[f.raw]
            if _is_missing(value):
                self.fail(where, f"column '{col.name}' had no values to impute from (scikit-learn drops it)")
            if col.missing:
                self.fail(where, f"column '{col.name}' is imputed twice")
            col.missing = _label(value)
        return features

    def encoder_input(self, features: List[_Feature], where: str) -> None:
        self.raw_values(features, where)
        for f in features:
            col = self.columns[f.raw]
            if col.categories is not None:
                self.fail(where, f"column '{col.name}' is encoded twice ({col.step} and {where})")

    def categories(self, cats: Any, col: _RawColumn, where: str) -> List[str]:
        labels = []
        for c in cats:
            if _is_missing(c):
                self.fail(where, f"a missing value (NaN) is one of the categories of '{col.name}': put a "
                                 "SimpleImputer before the encoder")
            labels.append(_label(c))
        if len(set(labels)) != len(labels):
            self.fail(where, f"categories of '{col.name}' repeat as text: {labels}")
        if col.missing and col.missing not in labels:
            # An imputer's fill value the encoder never saw (a constant such as 'missing' over a
            # column that had no gaps when fitted): a missing cell would become the encoder's unknown
            # category, which is no category of the schema, so this column gets no missing value
            # (a data row with a gap there is then a clear error, not a wrong category).
            col.missing = ""
        return labels

    def one_hot(self, enc: Any, features: List[_Feature], where: str) -> List[_Feature]:
        self.encoder_input(features, where)
        widths = getattr(enc, "_n_features_outs", None)
        if widths is None:
            self.fail(where, "not fitted, or a scikit-learn without _n_features_outs")
        # Which output column each category sets: found by encoding every category, so drop,
        # infrequent grouping and their interplay are scikit-learn's own.
        n = max(len(c) for c in enc.categories_)
        probe = np.empty((n, len(enc.categories_)), dtype=object)
        for j, cats in enumerate(enc.categories_):
            for r in range(n):
                probe[r, j] = cats[min(r, len(cats) - 1)]
        if hasattr(enc, "feature_names_in_"):
            import pandas as pd

            probe = pd.DataFrame({name: np.asarray(probe[:, j].tolist(), dtype=enc.categories_[j].dtype)
                                  for j, name in enumerate(enc.feature_names_in_)})
        elif all(c.dtype.kind in "iuf" for c in enc.categories_):
            probe = probe.astype(np.float64)
        encoded = enc.transform(probe)
        encoded = encoded.toarray() if hasattr(encoded, "toarray") else np.asarray(encoded)
        out: List[_Feature] = []
        offset = 0
        for j, (f, cats) in enumerate(zip(features, enc.categories_)):
            col = self.columns[f.raw]
            labels = self.categories(cats, col, where)
            col.categories, col.one_hot, col.step = labels, True, where
            block = encoded[:, offset:offset + widths[j]]
            indicators = [_Feature(f.raw, "indicator") for _ in range(widths[j])]
            for r, label in enumerate(labels):
                hot = np.flatnonzero(block[r] != 0.0)
                if len(hot) > 1 or (len(hot) == 1 and block[r, hot[0]] != 1.0):
                    self.fail(where, f"category '{label}' of '{col.name}' is not encoded as one indicator")
                if len(hot) == 1:
                    indicators[hot[0]].labels.append(label)
            out += indicators
            offset += widths[j]
        return out

    def ordinal(self, enc: Any, features: List[_Feature], where: str) -> List[_Feature]:
        self.encoder_input(features, where)
        out = []
        for f, cats in zip(features, enc.categories_):
            col = self.columns[f.raw]
            col.categories, col.one_hot, col.step = self.categories(cats, col, where), False, where
            out.append(_Feature(f.raw, "code"))
        return out

    # --- scalers: one affine map per feature, in scikit-learn's own operations -------------------
    def scaled(self, features: List[_Feature], where: str, maps: List[Tuple[str, float, float]]) -> List[_Feature]:
        out = []
        for f, m in zip(features, maps):
            col = self.columns[f.raw]
            if f.kind == "indicator":
                self.fail(where, f"scales a one-hot column of '{col.name}'; witness reads scalers on numbers and codes")
            if f.norm is not None:
                self.fail(where, f"'{col.name}' is scaled twice; witness reads one scaler per column")
            norm = None if m[0] == "none" else m
            out.append(_Feature(f.raw, f.kind, [], norm))
            if norm is not None:
                col.users.append(where)
        return out

    @staticmethod
    def _per_column(values: Any, n: int, fallback: float) -> np.ndarray:
        if values is None:
            return np.full(n, fallback)
        return np.broadcast_to(np.asarray(values, dtype=np.float64), (n,))

    def standard(self, s: Any, features: List[_Feature], where: str) -> List[_Feature]:
        n = len(features)
        mean = self._per_column(s.mean_ if s.with_mean else None, n, 0.0)
        scale = self._per_column(s.scale_ if s.with_std else None, n, 1.0)
        # X -= mean_; X /= scale_: (x - a) / b with a = 0 or b = 1 where a step is off is the same double.
        maps = [("mean_std", float(a), float(b)) if (s.with_mean or s.with_std) else ("none", 0.0, 1.0)
                for a, b in zip(mean, scale)]
        return self.scaled(features, where, maps)

    def min_max(self, s: Any, features: List[_Feature], where: str) -> List[_Feature]:
        if getattr(s, "clip", False):
            self.fail(where, "clip=True is not an affine map; not supported")
        # X *= scale_; X += min_
        return self.scaled(features, where, [("scale_offset", float(a), float(b)) for a, b in zip(s.scale_, s.min_)])

    def max_abs(self, s: Any, features: List[_Feature], where: str) -> List[_Feature]:
        # X /= scale_
        return self.scaled(features, where, [("mean_std", 0.0, float(b)) for b in s.scale_])

    def robust(self, s: Any, features: List[_Feature], where: str) -> List[_Feature]:
        n = len(features)
        center = self._per_column(s.center_ if s.with_centering else None, n, 0.0)
        scale = self._per_column(s.scale_ if s.with_scaling else None, n, 1.0)
        maps = [("mean_std", float(a), float(b)) if (s.with_centering or s.with_scaling) else ("none", 0.0, 1.0)
                for a, b in zip(center, scale)]
        return self.scaled(features, where, maps)


def split_pipeline(pipe: Any) -> Tuple[List[Tuple[str, Any]], Any]:
    """The transformer steps and the final classifier of a Pipeline (nested final Pipelines too)."""
    steps = list(pipe.steps)
    if not steps:
        raise InputError("from_sklearn: the Pipeline has no steps")
    name, last = steps[-1]
    if type(last).__name__ == "Pipeline":
        inner_steps, clf = split_pipeline(last)
        return steps[:-1] + inner_steps, clf
    if last is None or isinstance(last, str) or not hasattr(last, "classes_"):
        raise InputError(f"from_sklearn: the Pipeline's last step '{name}' is not a fitted classifier")
    return steps[:-1], last


def encode_pipeline(pipe: Any) -> Tuple[List[Dict[str, Any]], List[List[int]], Any]:
    """The raw columns (as the C++ side takes them), the sources of each transformed feature, and
    the classifier."""
    names = getattr(pipe, "feature_names_in_", None)
    steps, clf = split_pipeline(pipe)
    if names is None:
        n = steps[0][1].n_features_in_ if steps and hasattr(steps[0][1], "n_features_in_") else clf.n_features_in_
        names = [f"x{i}" for i in range(int(n))]
    walk = _Walk(names)
    features = [_Feature(i, "value") for i in range(len(walk.columns))]
    for i, (name, step) in enumerate(steps):
        features = walk.transform(step, features, f"step {i + 1} '{name}' > ")
    width = int(clf.n_features_in_)
    if len(features) != width:
        raise InputError(f"from_sklearn: the preprocessing gives {len(features)} features, the classifier reads {width}")
    # Every raw column a feature reads, in the table's order; each read one way.
    used = sorted({f.raw for f in features})
    norms: Dict[int, Optional[Tuple[str, float, float]]] = {}
    for f in features:
        col = walk.columns[f.raw]
        if f.kind == "indicator":
            continue
        if f.raw in norms:
            raise InputError(f"from_sklearn: column '{col.name}' is read by two transformers; witness reads one "
                             "encoding per column")
        norms[f.raw] = f.norm
    columns: List[Dict[str, Any]] = []
    offsets: Dict[int, int] = {}
    at = 0
    for r in used:
        col = walk.columns[r]
        norm = norms.get(r)
        if col.one_hot and r in norms:
            raise InputError(f"from_sklearn: column '{col.name}' is one-hot encoded and also read as a value")
        if col.categories is None and any(f.raw == r and f.kind == "indicator" for f in features):
            raise InputError(f"from_sklearn: column '{col.name}': indicators without categories")
        columns.append({
            "name": col.name,
            "categorical": col.categories is not None,
            "categories": list(col.categories or []),
            "one_hot": col.one_hot,
            "norm": list(norm) if norm is not None else ["none", 0.0, 1.0],
            "missing": col.missing,
            "step": col.step or ", ".join(col.users),
        })
        offsets[r] = at
        at += len(col.categories) if col.one_hot else 1
    sources: List[List[int]] = []
    for f in features:
        base = offsets[f.raw]
        if f.kind == "indicator":
            cats = walk.columns[f.raw].categories or []
            sources.append([base + cats.index(label) for label in f.labels])
        else:
            sources.append([base])
    return columns, sources, clf
