# Shared by the CLI test scripts (tests/cli/*.sh): source it after `set -u`.
#   W: the witness executable, SRC: the source tree, B: the bundled Fairify benchmark, T: a temp dir,
#   PY: a python3 with numpy; json_check FILE EXPR tests a JSON document.
# Each script ends with `finish`, which prints the "N passed, M failed" line and sets the exit code.
W=$1
SRC=$2
B=$SRC/benchmarks/fairify
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
passes=0
# Debian's python3: the python3 first on PATH may lack numpy (examples/blackbox/predict.py needs it).
PY=/usr/bin/python3
[[ -x $PY ]] || PY=python3

# json_check FILE EXPR: EXPR (Python, over the parsed document `d`) is true.
json_check() {
  "$PY" -c 'import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if eval("(" + sys.argv[2] + ")") else 1)' "$1" "$2" 2>/dev/null
}

# run_witness LIMIT OUT ARGS...: `witness ARGS...` (at most LIMIT s), stdout to OUT, stderr to
# $T/err; sets rc.
run_witness() {
  local limit=$1 out=$2
  shift 2
  timeout "$limit" "$W" "$@" >"$out" 2>"$T/err"
  rc=$?
}

# small_domain_rows OUT: the rows of the pipelines' adult_600.csv without capital gain or loss. A
# pipeline's schema read off them spans 4.2e17 points, under 2^64, where counts are exact integers
# (the full 600 rows span 1.2e26 points: counted in long double, not exactly).
small_domain_rows() {
  "$PY" - "$SRC/tests/fixtures/pipelines/adult_600.csv" "$1" <<'PYEOF'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
g, l = rows[0].index("capital-gain"), rows[0].index("capital-loss")
with open(sys.argv[2], "w", newline="") as f:
    csv.writer(f, lineterminator="\n").writerows([rows[0]] + [r for r in rows[1:] if r[g] == "0" and r[l] == "0"])
PYEOF
}

check() {  # check NAME EXIT-CODE: passes when EXIT-CODE is 0
  if [[ $2 -eq 0 ]]; then passes=$((passes + 1)); else echo "FAIL $1"; fails=$((fails + 1)); fi
}

# expect_input_error NAME NEEDLE CMD...: exit code 2 and exactly one `error:` line on stderr, which
# contains NEEDLE; never a crash or a hang (each run is bounded by `timeout`).
expect_input_error() {
  local name=$1 needle=$2
  shift 2
  local err rc lines
  err=$(timeout 60 "$@" 2>&1 >/dev/null)
  rc=$?
  lines=$(printf '%s\n' "$err" | grep -c '^error:')
  [[ $rc -eq 2 && $lines -eq 1 && "$err" == *"$needle"* ]]
  ok=$?  # before the message: its $(...) would reset $?
  check "$name: rc=$rc (want 2), error lines=$lines (want 1), stderr: $(printf '%s' "$err" | head -c 300)" $ok
}

finish() {
  echo "$passes passed, $fails failed"
  [[ $fails -eq 0 ]]
}
