"""One list of options per job (witness.options, the run layer's job_options): the CLI's flags, the
Python keywords and the web forms' fields all name options of it, with the same types, defaults and
choices. What is not an option (the files a job reads and writes, its columns, output formats) is
listed here by name, so that a new flag or keyword outside the list is added on purpose."""

import inspect
import os
import re
import subprocess
from pathlib import Path

import pytest
import witness

ROOT = Path(__file__).resolve().parents[2]
BINARY = os.environ.get("WITNESS_BIN", str(ROOT / "build" / "witness"))
JOBS = ["fair", "test", "bias", "query"]

# CLI flags that are not options: inputs, outputs and how the answer is printed.
CLI_ONLY = {
    "fair": {"help", "schema", "box", "protected", "seeds", "witnesses-out", "regions-out", "data", "label", "groups",
             "flips-out", "checkpoint", "checkpoint-every", "resume", "split-into", "out-dir", "subproblem", "json",
             "html", "report-json"},
    # test: --cmd runs a program as the model; how it is fed (batch-*, category-names, classes) is
    # the CLI's (Python passes a callable instead, the server runs no programs).
    "test": {"help", "schema", "box", "protected", "cmd", "seeds", "out", "json", "html", "report-json", "batch-rows",
             "batch-timeout", "category-names", "classes"},
    "bias": {"help", "schema", "box", "protected", "data", "label", "groups", "json", "html", "report-json"},
    "query": {"help", "model", "program", "function", "json"},
}
# Python keywords that are not options: the subject (model, schema, rows, columns), the output files
# (named as the CLI's flags), the progress callback, and **options itself.
PYTHON_ONLY = {
    "fair": {"model", "schema", "protected", "data", "seeds", "label", "groups", "progress", "witnesses_out",
             "regions_out", "flips_out", "options"},
    "test": {"model", "schema", "protected", "seeds", "codes", "progress", "options"},
    "bias": {"model", "schema", "protected", "data", "label", "groups"},
    "query": {"query", "model", "options"},
}
# The CLI's word for each option type in --help.
CLI_TYPE = {"int": "INT", "real": "NUMBER", "bool": "", "string": "TEXT"}


def cli_flags(job):
    """--help's flags: name -> (type word, default text or None)."""
    text = subprocess.run([BINARY, job, "--help"], capture_output=True, text=True, check=True).stdout
    flags = {}
    for line in text.splitlines():
        m = re.match(r"^  (?:-\w,)?--([a-z0-9-]+)(?: ([A-Z]+))?\s+(.*)$", line)
        if m:
            default = re.search(r"\[default ([^\]]*)\]$", m.group(3))
            flags[m.group(1)] = (m.group(2) or "", default.group(1) if default else None)
    return flags


def web_fields(job):
    """The option names a web form sends for the job (`options.x = `, `options["x"] = `, a list of
    [name, field] pairs, an object literal), and the top-level request fields that set options."""
    source = {"fair": "fairness_workspace.ts", "test": "testing_workspace.ts", "bias": "fairness_workspace.ts",
              "query": "query_workspace.ts"}[job]
    text = (ROOT / "web" / "src" / source).read_text()
    if job in ("fair", "bias"):  # one form starts both: the bias call is the line that names it
        lines = text.splitlines()
        text = "\n".join(line for line in lines if ('kind: "bias"' in line) == (job == "bias"))
    names = set(re.findall(r'options\.([a-z_]+)\s*=', text))
    names |= set(re.findall(r'options\["([a-z-]+)"\]\s*=', text))
    names |= set(re.findall(r'\["([a-z-]+)", this\.\w+\]', text))
    names |= set(re.findall(r'options: Record<string, string> = \{ ([a-z]+):', text))
    names |= set(re.findall(r'options: \w+ \? \{ ([a-z]+) \}', text))
    if job == "fair" and re.search(r'kind: "fair".*engine:', text):
        names.add("engine")  # the request's `engine` field (server/job_runs.cpp)
    return names


@pytest.mark.parametrize("job", JOBS)
def test_every_option_is_a_cli_flag_of_its_type_and_default(job):
    flags = cli_flags(job)
    for o in witness.options(job):
        assert o["name"] in flags, f"witness {job} has no --{o['name']}"
        word, default = flags[o["name"]]
        expected = "CHOICE" if o.get("allowed") else CLI_TYPE[o["type"]]
        assert word == expected, f"--{o['name']}: --help says {word or 'a switch'}, the option is {o['type']}"
        if o["type"] != "bool":
            assert default == o["default"], f"--{o['name']}: --help's default {default}, the option's {o['default']}"


@pytest.mark.parametrize("job", JOBS)
def test_every_cli_flag_is_an_option_or_listed(job):
    names = {o["name"] for o in witness.options(job)}
    stray = set(cli_flags(job)) - names - CLI_ONLY[job]
    assert not stray, f"witness {job} flags that are no option and not listed as inputs/outputs: {sorted(stray)}"
    gone = CLI_ONLY[job] - set(cli_flags(job))
    assert not gone, f"listed flags witness {job} no longer has: {sorted(gone)}"


@pytest.mark.parametrize("job", JOBS)
def test_python_keywords_are_options_or_cli_inputs(job):
    names = {o["name"] for o in witness.options(job)}
    flags = set(cli_flags(job))
    for name in inspect.signature(getattr(witness, job)).parameters:
        if name in PYTHON_ONLY[job]:
            # Output files and columns are named as the CLI's flags are.
            if name.endswith("_out") or name in {"label", "groups", "seeds", "data", "schema", "protected"}:
                assert name.replace("_", "-") in flags, f"witness.{job}({name}=...) has no --{name.replace('_', '-')}"
            continue
        assert name.replace("_", "-") in names, f"witness.{job}({name}=...) is not an option of {job}"


@pytest.mark.parametrize("job", ["fair", "test", "bias"])
def test_web_form_fields_are_options(job):
    names = {o["name"] for o in witness.options(job)}
    fields = web_fields(job)
    assert fields, f"no option fields found in the {job} form (has the form changed shape?)"
    assert fields <= names, f"the {job} form sends fields that are no option: {sorted(fields - names)}"


def test_web_choice_lists_are_the_options_choices():
    for job, option, source, constant in [("fair", "engine", "fairness_workspace.ts", "ENGINES"),
                                          ("test", "method", "testing_workspace.ts", "METHODS")]:
        text = (ROOT / "web" / "src" / source).read_text()
        listed = re.findall(r'"([a-z-]+)"', re.search(rf"const {constant} = \[([^\]]*)\]", text).group(1))
        spec = next(o for o in witness.options(job) if o["name"] == option)
        assert listed == spec["allowed"], f"{source}'s {constant} {listed} against --{option}'s {spec['allowed']}"


def test_a_python_keyword_reaches_the_option():
    # An option passed as a keyword is checked against its declared range, naming the flag.
    with pytest.raises(witness.InputError, match="--max-witnesses"):
        witness.fair(str(ROOT / "benchmarks/fairify/models/german/GC1.h5"),
                     str(ROOT / "benchmarks/fairify/german.toml"), protected="age", max_witnesses=0)
    with pytest.raises(witness.InputError, match="unknown option 'no-such-option'"):
        witness.fair(str(ROOT / "benchmarks/fairify/models/german/GC1.h5"),
                     str(ROOT / "benchmarks/fairify/german.toml"), protected="age", no_such_option=1)


def test_unknown_job_is_an_input_error():
    with pytest.raises(witness.InputError, match="unknown job 'fare'"):
        witness.options("fare")


def test_the_budget_rule_is_one_for_every_front_end():
    # time_limit=0 means no limit, so the default budget applies: this once failed, naming a
    # --budget 0 the caller never gave. A time limit without a budget runs until the limit.
    gc1, german = str(ROOT / "benchmarks/fairify/models/german/GC1.h5"), str(ROOT / "benchmarks/fairify/german.toml")
    default = next(o for o in witness.options("test") if o["name"] == "budget")["default"]
    # random-pairs: the rule is the method's budget, not the method (symbgen takes 8 s for 1000 tests)
    r = witness.test(gc1, german, protected="age", time_limit=0, method="random-pairs")
    assert r.to_dict()["budget"] == int(default)
    r = witness.test(gc1, german, protected="age", time_limit=0.5, method="random-pairs")
    assert r.to_dict()["budget"] == 0
