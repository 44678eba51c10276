#!/usr/bin/env python3
"""Runs one regression case of tests/regress/cases (format: tests/regress/README.md).

usage: run.py WITNESS SOURCE_DIR CASE_FILE
Exit 0 when every expectation holds; otherwise prints each that failed and exits 1.
"""
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

KEYS = ("COMMAND", "EXIT", "JSON", "STDOUT", "STDERR", "NOT-STDOUT", "TIMEOUT")
OPS = ("==", "!=", "<=", ">=", "<", ">", "contains")


def parse(path):
    spec = {k: [] for k in KEYS}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.startswith("#"):
                break
            m = re.match(r"#\s*([A-Z-]+):\s?(.*)$", line.rstrip("\n"))
            if m and m.group(1) in KEYS:
                spec[m.group(1)].append((number, m.group(2).strip()))
    if not spec["COMMAND"]:
        sys.exit(f"{path}: no '# COMMAND:' line")
    return spec


def expand(text, env):
    """$NAME and ${NAME} from the case's variables (B, SRC, T, FILES) only."""
    return re.sub(r"\$(?:\{(\w+)\}|(\w+))", lambda m: env.get(m.group(1) or m.group(2), m.group(0)), text)


def lookup(doc, path):
    for part in path.split("."):
        if isinstance(doc, list):
            doc = doc[int(part)]
        elif isinstance(doc, dict):
            doc = doc[part]
        else:
            raise KeyError(part)
    return doc


def check_json(doc, expr):
    for op in OPS:
        left, sep, right = expr.partition(f" {op} ")
        if sep:
            break
    else:
        return f"cannot read '{expr}' (want: PATH OP JSON-VALUE, OP one of {', '.join(OPS)})"
    try:
        actual = lookup(doc, left.strip())
    except (KeyError, IndexError, ValueError):
        return f"{left.strip()} is not in the JSON document"
    want = json.loads(right)
    ok = {
        "==": lambda: actual == want,
        "!=": lambda: actual != want,
        "<": lambda: actual < want,
        "<=": lambda: actual <= want,
        ">": lambda: actual > want,
        ">=": lambda: actual >= want,
        "contains": lambda: want in actual,
    }[op]()
    return None if ok else f"{expr}: actual {json.dumps(actual)[:200]}"


def main():
    witness, source, case = sys.argv[1:4]
    spec = parse(case)
    timeout = float(spec["TIMEOUT"][-1][1]) if spec["TIMEOUT"] else 60.0
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, B=os.path.join(source, "benchmarks/fairify"), SRC=source, T=tmp,
                   FILES=os.path.join(source, "tests/regress/files"))
        result = None
        for i, (line, command) in enumerate(spec["COMMAND"]):
            args = [expand(a, env) for a in shlex.split(command)]
            try:
                result = subprocess.run([witness] + args, cwd=source, env=env, capture_output=True, text=True,
                                        timeout=timeout)
            except subprocess.TimeoutExpired:
                print(f"{case}:{line}: did not finish within {timeout:g} s: witness {command}")
                return 1
            last = i == len(spec["COMMAND"]) - 1
            if not last and result.returncode != 0:
                print(f"{case}:{line}: a setup command exited {result.returncode}: {result.stderr.strip()[:300]}")
                return 1
        # "EXIT: 10 | 20": a run whose verdict rests on the machine's speed (a time limit) may end either way.
        want_exits = [int(e) for e in spec["EXIT"][-1][1].split("|")] if spec["EXIT"] else [0]
        want_exit = want_exits[0] if len(want_exits) == 1 else None
        if result.returncode not in want_exits:
            failures.append(f"exit code {result.returncode}, want {' or '.join(map(str, want_exits))}")
        errors = [l for l in result.stderr.splitlines() if l.startswith("error:")]
        if want_exit == 2 and len(errors) != 1:
            failures.append(f"bad input must give exactly one 'error:' line, got {len(errors)}")
        if result.returncode < 0 or "AddressSanitizer" in result.stderr or "runtime error:" in result.stderr:
            failures.append("crashed or a sanitizer reported an error")
        for line, text in spec["STDOUT"]:
            if expand(text, env) not in result.stdout:
                failures.append(f"line {line}: stdout lacks '{text}'")
        for line, text in spec["NOT-STDOUT"]:
            if text in result.stdout:
                failures.append(f"line {line}: stdout has '{text}'")
        for line, text in spec["STDERR"]:
            if text not in result.stderr:
                failures.append(f"line {line}: stderr lacks '{text}'")
        if spec["JSON"]:
            try:
                doc = json.loads(result.stdout)
            except json.JSONDecodeError as e:
                doc = None
                failures.append(f"stdout is not JSON ({e})")
            if doc is not None:
                for line, expr in spec["JSON"]:
                    why = check_json(doc, expr)
                    if why:
                        failures.append(f"line {line}: {why}")
    for f in failures:
        print(f"{case}: {f}")
    if failures:
        print(f"stdout: {result.stdout[:1500]}\nstderr: {result.stderr[:1500]}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
