"""witness: find unfairness witnesses in classifiers or prove there are none, generate
discriminatory tests, and answer counterfactual queries, with the C++ engines of the CLI.

    import witness
    model = witness.from_sklearn(clf)                       # or witness.load_model("AC1.h5")
    schema = witness.Schema.from_dataframe(X, protected=["sex"])
    r = witness.fair(model, schema, quantify=True, time_limit=10)
    print(r.verdict, r.certified, r.pairs)                  # r.to_dict() == the CLI's --json
    t = witness.test(lambda df: clf.predict(df), schema, budget=1000)
"""

from ._witness import Error, InputError, Model, __version__
from ._witness import load_model as _load_model
from ._witness import options as _options
from ._schema import Feature, Schema
from ._convert import from_sklearn, from_torch
from ._runs import BiasResult, FairResult, QueryResult, TestResult, bias, fair, query, test

__all__ = [
    "Error", "InputError", "Model", "Feature", "Schema", "load_model", "from_sklearn", "from_torch",
    "fair", "test", "bias", "query", "options", "FairResult", "TestResult", "BiasResult", "QueryResult", "__version__",
]


def load_model(path) -> Model:
    """Reads a model file: Keras .h5, ONNX (networks, trees, linear models), .nnet or mlp-json."""
    import os

    return _load_model(os.fspath(path))


def options(job: str):
    """Every option `job` ("fair", "test", "bias" or "query") takes, as the CLI's flags name them:
    a list of dicts with name, type, default, range (numbers), allowed (choices) and help. Pass one
    as a keyword with '_' for '-': witness.fair(..., max_witnesses=3)."""
    return _options(job)


_native_predict = Model.predict


def _predict(self, x, precision: str = "float64"):
    """Class indices of rows: model inputs [n][inputs] (numpy), or a DataFrame of the raw columns
    for a model that carries its preprocessing (a converted Pipeline, a skl2onnx graph)."""
    if hasattr(x, "columns") and hasattr(x, "to_csv"):
        if not self.columns:
            raise InputError(f"predict: {self.source or self.name} reads encoded inputs, not raw columns: give them as a "
                             "numpy array [n][inputs]")
        schema = Schema.from_pipeline(self, x)
        x = schema._native.to_model(schema.encode(x))
    return _native_predict(self, x, precision)


Model.predict = _predict

# pytest collects functions named test*: this one is the library's, not a test.
test.__test__ = False  # type: ignore[attr-defined]
