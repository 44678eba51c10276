#!/usr/bin/env bash
# `pip install --no-build-isolation .` into a fresh virtualenv (Debian's python3, its site packages
# visible for numpy and pandas) installs a `witness` that imports and answers from outside the tree.
# Usage: pip_install.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
build=$2
venv=$(mktemp -d)/venv
trap 'rm -rf "$(dirname "$venv")"' EXIT
/usr/bin/python3 -m venv --system-site-packages "$venv"
# The build folder the tests run against is the one pip reuses.
(cd "$src" && WITNESS_BUILD_DIR="$build" "$venv/bin/pip" install --no-build-isolation --no-deps -q . )
cd "$(dirname "$venv")"
"$venv/bin/python" - "$src" <<'PY'
import os, sys
import witness
src = sys.argv[1]
assert witness.__file__.startswith(os.path.dirname(os.path.dirname(sys.executable))), witness.__file__
model = witness.load_model(os.path.join(src, "tests/fixtures/pipelines/lr.onnx"))
r = witness.fair(model, os.path.join(src, "tests/fixtures/pipelines/adult_600.csv"), protected=["sex"], time_limit=10)
assert r.verdict in ("witness", "verified", "inconclusive"), r.verdict
print("installed witness", witness.__version__, "at", witness.__file__, "answers", r.verdict)
PY
