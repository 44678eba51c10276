"""Shared fixtures: the repository, the CLI built beside the module, the bundled data."""

import json
import os
import subprocess
import warnings
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks" / "fairify"
DATASETS = {"adult": "income-per-year", "bank": "y", "german": "credit"}


@pytest.fixture(autouse=True)
def _quiet_sklearn():
    # Small max_iter on purpose (fast tests): sklearn's convergence warnings say nothing here.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.fixture(scope="session")
def cli():
    binary = os.environ.get("WITNESS_BIN", str(ROOT / "build" / "witness"))

    def run(*args, expect=(0, 10, 20)):
        p = subprocess.run([binary, *map(str, args)], cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert p.returncode in expect, p.stderr
        return json.loads(p.stdout) if "--json" in args else p.stdout

    return run


def load_data(name):
    df = pd.read_csv(BENCH / "data" / f"{name}.csv")
    label = DATASETS[name]
    return df.drop(columns=[label]), df[label]


def without_times(doc):
    """A --json document without what differs between two runs of the same job: times, rates per
    second and the counters of the solvers' time; and of its provenance, when it ran and how it was
    called (a Python call and a command line)."""
    if isinstance(doc, dict):
        if "files" in doc and "created" in doc and "command" in doc:  # a provenance block
            doc = {k: v for k, v in doc.items() if k not in ("created", "command")}
        return {
            k: without_times(v)
            for k, v in doc.items()
            if k not in ("seconds", "tests_per_second", "discriminatory_per_second") and not k.endswith(".seconds")
        }
    if isinstance(doc, list):
        return [without_times(v) for v in doc]
    return doc
