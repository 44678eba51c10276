"""fair, test, bias and query: the CLI's commands as calls, with their answers as dataclasses whose
to_dict() is the CLI's --json document."""

from __future__ import annotations

import copy
import io
import json
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _witness
from ._convert import as_model
from ._schema import Schema, column_types
from ._witness import InputError

ProgressArg = Union[None, bool, Callable[[Dict[str, Any]], None]]


# --- the answers ----------------------------------------------------------------------------------
@dataclass
class _Answer:
    text: str = field(repr=False)
    _json: Dict[str, Any] = field(repr=False)
    _report: str = field(repr=False)

    def to_dict(self) -> Dict[str, Any]:
        """The CLI's --json document of the same run."""
        return copy.deepcopy(self._json)

    def __str__(self) -> str:
        return self.text

    def write_html(self, path: str) -> None:
        """The self-contained HTML report (as `--html`)."""
        if not self._report:
            raise _witness.Error("this answer has no report")
        _witness.write_html_report(str(path), self._report)


@dataclass
class FairResult(_Answer):
    verdict: str = ""  # "verified", "witness" or "inconclusive"
    witness: Optional[Dict[str, Any]] = None  # the first witness pair, as in the JSON
    pairs: Any = None  # every witness pair found: a DataFrame (x, the protected values of x', labels)
    certified: Optional[float] = None  # quantify: shares of the domain
    falsified: Optional[float] = None
    undecided: Optional[float] = None
    # quantify, when some of the domain is undecided: the falsified share estimated from points drawn
    # in the undecided regions (keys falsified, lo, hi, confidence, samples, unfair_samples, method)
    estimate: Optional[Dict[str, Any]] = None
    regions: Any = None  # quantify: the falsified and undecided regions (a DataFrame)
    # with data: every row that flips (row, group, decision, score, direction, the other group's
    # decision and score, the row's values), as --flips-out writes them (a DataFrame)
    flips: Any = None
    groups: Optional[Dict[str, Any]] = None  # with data: the group tables, as the JSON's "groups"


@dataclass
class TestResult(_Answer):
    generated: int = 0
    discriminatory: int = 0
    success_rate: float = 0.0
    stopped: str = ""
    pairs: Any = None  # every discriminatory pair: a DataFrame


@dataclass
class BiasResult(_Answer):
    bias_percent: float = 0.0
    ci95_percent: List[float] = field(default_factory=list)
    samples: int = 0
    discriminatory: int = 0
    groups: Optional[Dict[str, Any]] = None  # with data: the group tables, as the JSON's "groups"


@dataclass
class QueryResult(_Answer):
    answers: List[Dict[str, Any]] = field(default_factory=list)  # one per query, as in the JSON


# --- arguments ------------------------------------------------------------------------------------
def _schema(schema: Any) -> Schema:
    if isinstance(schema, Schema):
        return schema
    if isinstance(schema, (str, os.PathLike)):
        return Schema.load(os.fspath(schema))
    raise InputError(f"expected a witness Schema or a schema file, got {type(schema).__name__}")


def _is_frame(value: Any) -> bool:
    return hasattr(value, "columns") and hasattr(value, "to_csv")


def _names(value: Any, what: str) -> List[str]:
    """A list of column names from a list or a comma-separated string ("sex,race")."""
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    raise InputError(f"{what}: expected a column name, a comma-separated string or a list of names")


def _subject(model: Any, schema: Any, data: Any, what: str = "data",
             label: Optional[str] = None) -> Tuple[Any, Schema, Any]:
    """The witness Model, the Schema (a pipeline's own, read off the data, when none is given) and the
    data rows. A DataFrame (or a .csv path) in the schema's place is the data. A converted scikit-learn Pipeline is
    checked against its own predict on the data rows."""
    if _is_frame(schema) or (isinstance(schema, (str, os.PathLike)) and os.fspath(schema).lower().endswith(".csv")):
        if data is not None:
            raise InputError("give the data once: as the second argument or as data=..., not both")
        schema, data = None, schema
    m = as_model(model)
    if schema is None:
        if not m.columns:
            raise InputError(f"{m.source or m.name} reads encoded inputs, not raw columns: give a schema "
                             "(Schema.from_dataframe, Schema.load)")
        if data is None:
            raise InputError(f"{m.source or m.name} carries its preprocessing: give the data ({what}=DataFrame or "
                             "a CSV path) to read its schema off, or a schema")
        s = Schema.from_pipeline(m, data, label=label)
    else:
        s = _schema(schema)
        _witness.check_schema(s._native, m)
    if m.columns and _is_frame(data) and not isinstance(model, (_witness.Model, str, os.PathLike)):
        _check_conversion(model, m, s, data)
    return m, s, data


def _check_conversion(estimator: Any, m: Any, s: Schema, df: Any) -> None:
    """Refuses a converted model whose labels differ from the estimator's own on the data rows."""
    mine = np.asarray(m.classes, dtype=object)[m.predict(s._native.to_model(s.encode(df)))].astype(str)
    theirs = np.asarray(estimator.predict(df[[c for c in df.columns if c != s.label]])).astype(str)
    differ = np.flatnonzero(mine != theirs)
    if len(differ):
        i = int(differ[0])
        raise InputError(f"the converted {m.name} labels {len(differ)} of {len(df)} data rows differently from "
                         f"{type(estimator).__name__}.predict (first: row {i + 1}, '{mine[i]}' vs '{theirs[i]}'); "
                         "please report this with the pipeline")


def _option_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


def _options(options: Mapping[str, Any]) -> Dict[str, str]:
    """Keyword arguments -> the CLI's flag names and texts (max_regions=10 -> max-regions "10")."""
    return {k.replace("_", "-"): _option_text(v) for k, v in options.items() if v is not None}


def _rows(rows: Any, what: str) -> Any:
    """Rows for the C++ side: a CSV path, a DataFrame as CSV text (read through the schema exactly as
    the CLI reads a file: every column, so that the answer names those it did not read), or raw
    values [n][features] in schema order."""
    if rows is None:
        return None
    if isinstance(rows, (str, os.PathLike)):
        return {"path": os.fspath(rows), "name": os.fspath(rows)}
    if _is_frame(rows):
        # answers name a row by its index label (df.loc[label]), not by a count of rows
        return {"text": rows.to_csv(index=False), "name": what, "row_labels": [str(i) for i in rows.index]}
    return {"raw": np.ascontiguousarray(rows, dtype=np.float64), "name": what}


def _call_line(name: str, args: Sequence[str], options: Mapping[str, Any]) -> str:
    def shown(v: Any) -> str:
        if _is_frame(v):
            return f"<DataFrame {len(v)} rows x {len(v.columns)} columns>"
        if isinstance(v, os.PathLike):
            return repr(os.fspath(v))
        return repr(v)

    parts = list(args) + [f"{k}={shown(v)}" for k, v in options.items() if v is not None]
    return f"witness.{name}({', '.join(parts)})"


def _write_outputs(outputs: Mapping[str, Optional[Any]], texts: Mapping[str, str]) -> None:
    """The CLI's --witnesses-out, --regions-out and --flips-out as keywords: each text written to
    its path, atomically (a temporary file renamed)."""
    for key, path in outputs.items():
        if path is None:
            continue
        target = os.fspath(path)
        tmp = target + ".witness-tmp"
        with open(tmp, "w", encoding="utf-8", newline="") as f:
            f.write(texts[key])
        os.replace(tmp, target)


def _pairs(csv: str, schema: Schema) -> Any:
    import pandas as pd

    if not csv:
        return None
    df = pd.read_csv(io.StringIO(csv), dtype=str, keep_default_na=False)
    return column_types(df, schema)


def _progress(progress: ProgressArg, kind: str) -> Optional[Callable[[Dict[str, Any]], None]]:
    """progress=True: a tqdm bar when tqdm is installed, else a line on stderr."""
    if progress is None or progress is False:
        return None
    if callable(progress):
        return progress
    try:
        from tqdm.auto import tqdm
    except ImportError:
        tqdm = None
    state: Dict[str, Any] = {}

    def show(p: Dict[str, Any]) -> None:
        if kind == "fair":
            done, total, unit = 100.0 * (p["certified"] + p["falsified"]), 100.0, "% decided"
        else:
            done, total, unit = float(p["generated"]), float(p["budget"] or 0) or None, " tests"
        if tqdm is not None:
            bar = state.get("bar")
            if bar is None:
                bar = state["bar"] = tqdm(total=total, unit=unit.strip(), desc=f"witness {kind}")
            bar.n = done
            bar.refresh()
        else:
            print(f"\rwitness {kind}: {done:.1f}{unit}", end="", file=sys.stderr, flush=True)

    show.close = lambda: state["bar"].close() if "bar" in state else None  # type: ignore[attr-defined]
    return show


def _run(call: Callable[[Any], Dict[str, Any]], progress: ProgressArg, kind: str) -> Dict[str, Any]:
    shown = _progress(progress, kind)
    try:
        return call(shown)
    finally:
        if shown is not None and hasattr(shown, "close"):
            shown.close()


# --- the calls ------------------------------------------------------------------------------------
def fair(
    model: Any,
    schema: Any = None,
    protected: Union[None, str, Sequence[str]] = None,
    engine: str = "auto",
    time_limit: Optional[float] = None,
    quantify: bool = False,
    data: Any = None,
    seeds: Any = None,
    seed: Optional[int] = None,
    threads: Optional[int] = None,
    progress: ProgressArg = None,
    label: Optional[str] = None,
    groups: Union[None, str, Sequence[str]] = None,
    favorable: Optional[str] = None,
    witnesses_out: Any = None,
    regions_out: Any = None,
    flips_out: Any = None,
    **options: Any,
) -> FairResult:
    """Finds an unfairness witness or proves there is none (witness fair). `model` is a witness
    Model, a model file, or a fitted scikit-learn classifier or Pipeline; `schema` a Schema or a
    schema file, or the data itself (a DataFrame): a Pipeline brings its own schema, read off the
    data. With `data` (a DataFrame or CSV), every row is also checked against every protected value
    and the group metrics are computed. `label` names the data's true-label column (never
    guessed), `groups` the columns of the group table (default: the protected ones, read by the
    model or not), `favorable` the class people want. Further options are the CLI's flags:
    max_witnesses=5, max_regions=100, split="widest", query_time_limit=2, ...; witnesses_out,
    regions_out and flips_out write the CSVs the CLI's flags of those names write."""
    protected_names, group_names = _names(protected, "protected"), _names(groups, "groups")
    m, s, data = _subject(model, schema, data, label=label)
    flags = _options({"engine": engine, "seed": seed, "threads": threads, "time-limit": time_limit,
                      "favorable": favorable, **options})
    if quantify:
        flags["quantify"] = "true"
    command = _call_line("fair", [repr(m.source or m.name), repr(s.source)],
                         {"protected": protected, "data": data, "label": label, "groups": groups,
                          "favorable": favorable, "engine": engine, "time_limit": time_limit,
                          "quantify": quantify or None, **options})
    out = _run(
        lambda shown: _witness.fair(m, s._native, protected_names, flags, _rows(data, "data"),
                                    _rows(seeds, "seeds"), command, shown, label, group_names),
        progress,
        "fair",
    )
    _write_outputs({"witnesses": witnesses_out, "regions": regions_out, "flips": flips_out},
                   {"witnesses": out["pairs_csv"], "regions": out["regions_csv"], "flips": out["flips_csv"]})
    doc = json.loads(out["result"])
    return FairResult(
        text=out["text"],
        _json=doc,
        _report=out["report"],
        verdict=doc["verdict"],
        witness=doc.get("witness"),
        pairs=_pairs(out["pairs_csv"], s),
        certified=doc.get("certified"),
        falsified=doc.get("falsified"),
        undecided=doc.get("undecided"),
        estimate=doc.get("estimate"),
        regions=_regions(out["regions_csv"]),
        flips=_regions(out["flips_csv"]),
        groups=doc.get("groups"),
    )


def _regions(csv: str) -> Any:
    import pandas as pd

    return pd.read_csv(io.StringIO(csv), keep_default_na=False) if csv else None


def test(
    model: Any,
    schema: Any = None,
    protected: Union[None, str, Sequence[str]] = None,
    method: str = "symbgen",
    budget: Optional[int] = None,
    time_limit: Optional[float] = None,
    seeds: Any = None,
    seed: Optional[int] = None,
    threads: Optional[int] = None,
    codes: bool = False,
    progress: ProgressArg = None,
    **options: Any,
) -> TestResult:
    """Generates discriminatory test inputs (witness test). `model` may be any Python callable on a
    DataFrame of the schema's columns (categories as pandas Categoricals; raw codes with
    codes=True) returning one label per row (class names or indices); it is called with batches.
    A fitted estimator or Pipeline is converted (from_sklearn), a model file loaded; a Pipeline
    brings its own schema, read off `seeds` (a DataFrame) when no schema is given."""
    flags = _options({"method": method, "budget": budget, "seed": seed, "threads": threads, "time-limit": time_limit,
                      **options})
    oracle: Any
    name = ""
    if isinstance(model, (_witness.Model, str, os.PathLike)) or type(model).__name__ == "Pipeline" or (
            hasattr(model, "classes_") and hasattr(model, "predict")):
        oracle, s, seeds = _subject(model, schema, seeds, "seeds")
        shown_name = oracle.source or oracle.name
        classes = 0
    elif callable(model):
        if schema is None:
            raise InputError("test: a Python callable needs a schema")
        s = _schema(schema)
        function = model
        name = f"python:{getattr(function, '__qualname__', type(function).__name__)}"
        shown_name = name
        classes = max(len(s.label_classes), 2)

        def oracle(raw: np.ndarray) -> np.ndarray:
            rows = s.decode(raw)
            if codes:
                for f in s.features:
                    if f.kind == "categorical" and hasattr(rows[f.name], "cat"):
                        rows[f.name] = rows[f.name].cat.codes.astype(np.int64)
            return s.label_codes(function(rows), name)

    else:
        raise InputError(f"test: expected a model or a callable, got {type(model).__name__}")
    command = _call_line("test", [shown_name, s.source], {"protected": protected, "method": method, "budget": budget,
                                                          "time_limit": time_limit, **options})
    out = _run(
        lambda shown: _witness.test(oracle, s._native, _names(protected, "protected"), flags, _rows(seeds, "seeds"),
                                    command,
                                    name, classes, shown),
        progress,
        "test",
    )
    doc = json.loads(out["result"])
    return TestResult(
        text=out["text"],
        _json=doc,
        _report=out["report"],
        generated=doc["generated"],
        discriminatory=doc["discriminatory"],
        success_rate=doc["success_rate"],
        stopped=doc["stopped"],
        pairs=_pairs(out["pairs_csv"], s),
    )


def bias(
    model: Any,
    schema: Any = None,
    protected: Union[None, str, Sequence[str]] = None,
    samples: int = 100000,
    data: Any = None,
    seed: Optional[int] = None,
    threads: Optional[int] = None,
    label: Optional[str] = None,
    groups: Union[None, str, Sequence[str]] = None,
    favorable: Optional[str] = None,
) -> BiasResult:
    """Estimates Bias%: the share of inputs whose label changes with the protected attributes
    (witness bias); drawn uniformly from the domain, or from the rows of `data` (a DataFrame or CSV).
    A DataFrame in the schema's place is the data (a Pipeline's schema is read off it)."""
    protected_names, group_names = _names(protected, "protected"), _names(groups, "groups")
    m, s, data = _subject(model, schema, data, label=label)
    command = _call_line("bias", [repr(m.source or m.name), repr(s.source)],
                         {"protected": protected, "data": data, "label": label, "groups": groups,
                          "favorable": favorable, "samples": samples})
    out = _witness.bias(m, s._native, protected_names,
                        _options({"samples": samples, "seed": seed, "threads": threads, "favorable": favorable}),
                        _rows(data, "data"), command, label, group_names)
    doc = json.loads(out["result"])
    return BiasResult(
        text=out["text"],
        _json=doc,
        _report=out["report"],
        bias_percent=doc["bias_percent"],
        ci95_percent=list(doc.get("ci95_percent", [0.0, 0.0])),
        samples=doc.get("samples", 0),
        discriminatory=doc.get("discriminatory", 0),
        groups=doc.get("groups"),
    )


def query(query: Union[str, os.PathLike, Mapping[str, Any]], time_limit: float = 0.0, model: Any = None,
          **options: Any) -> QueryResult:
    """Answers might/would counterfactual queries (witness query): a TOML file, TOML text, or a dict
    with the file's keys (paths in it are relative to the current directory). `model` (a witness
    Model, a model file, a fitted classifier or Pipeline) answers every query instead of the
    files' model; a Pipeline's queries name its raw columns, categories by their labels
    (type = "category"). `time_limit` bounds all the queries together; further options are the
    CLI's flags: query_time_limit=5 (each query), query_memory_limit=2048, semantics="float64",
    only="q1,q2"."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        saved = ""
        if model is not None:
            saved = os.path.join(tmp, "model.onnx")
            as_model(model).save_onnx(saved)  # the preprocessing travels in its metadata
        if isinstance(query, Mapping):
            if saved:
                query = {**query, "model": saved}
            text, path = _toml(query), os.path.join(os.getcwd(), "<query>.toml")
        elif isinstance(query, (str, os.PathLike)) and os.path.exists(os.fspath(query)):
            path = os.fspath(query)
            with open(path, encoding="utf-8") as f:
                text = f.read()
        elif isinstance(query, str) and "\n" in query:
            text, path = query, os.path.join(os.getcwd(), "<query>.toml")
        else:
            raise InputError(f"{os.fspath(query)}: no such query file")
        out = _witness.query(text, path, _options({"time-limit": time_limit or None, **options}), saved)
    doc = json.loads(out["result"])
    return QueryResult(text=out["text"], _json=doc, _report="", answers=doc["queries"])


def _toml(value: Mapping[str, Any]) -> str:
    """A dict as TOML: scalars and arrays first, then tables and arrays of tables."""
    lines: List[str] = []

    def scalar(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, np.integer)):
            return str(int(v))
        if isinstance(v, (float, np.floating)):
            text = repr(float(v))
            return text if any(c in text for c in ".ein") else text + ".0"
        if isinstance(v, str):
            return json.dumps(v, ensure_ascii=False)
        if isinstance(v, (list, tuple)):
            return "[" + ", ".join(scalar(x) for x in v) + "]"
        if isinstance(v, Mapping):
            return "{" + ", ".join(f"{json.dumps(str(k))} = {scalar(x)}" for k, x in v.items()) + "}"
        raise InputError(f"query: cannot write {type(v).__name__} as TOML")

    def table(prefix: str, t: Mapping[str, Any]) -> None:
        for k, v in t.items():
            if not isinstance(v, Mapping) and not (isinstance(v, list) and v and all(isinstance(x, Mapping) for x in v)):
                lines.append(f"{json.dumps(str(k))} = {scalar(v)}")
        for k, v in t.items():
            key = f"{prefix}.{json.dumps(str(k))}" if prefix else json.dumps(str(k))
            if isinstance(v, Mapping):
                lines.append(f"\n[{key}]")
                table(key, v)
            elif isinstance(v, list) and v and all(isinstance(x, Mapping) for x in v):
                for item in v:
                    lines.append(f"\n[[{key}]]")
                    table(key, item)

    table("", value)
    return "\n".join(lines) + "\n"
