#!/usr/bin/env bash
# `witness test`: every black-box method on AC1 (sex) reports consistent counts (exit 10 iff it found a
# discriminatory test), writes a pairs CSV whose every pair replays on the model through `witness
# predict`; the example black-box program (--cmd predict.py) gives the same tests as the native model;
# broken --cmd programs and bad inputs exit with 2 and one clear `error:` line, never a hang; a time
# limit with --budget 0 stops on time; text output; the same --seed gives the same result.
# Budgets are small: this script is labelled fast and also runs under ASan+UBSan.
# Usage: test.sh WITNESS_EXE SOURCE_DIR
set -u
source "$(dirname "$0")/lib.bash"

AC1=$B/models/adult/AC1.h5
AC1_JSON=$B/models/adult/AC1.json  # the same network in mlp-json-v1, which predict.py reads
ADULT=$B/adult.toml
DATA=$B/data/adult.csv
PREDICT="$PY $SRC/examples/blackbox/predict.py"
COMMON=(--schema "$ADULT" --protected sex --seeds "$DATA" --budget 200 --samples 200)

# run_test OUT ARGS...: `witness test ARGS...` (at most 60 s), stdout to OUT, stderr to $T/err; sets rc.
run_test() { run_witness 60 "$1" test "${@:2}"; }

# expect_rc_for JSON NAME: the last run exited with 10 when it found discriminatory tests, else 0.
expect_rc_for() {
  local want=0
  json_check "$1" 'd["discriminatory"] > 0' && want=10
  [[ $rc -eq $want ]]
  ok=$?  # before the message: its $(...) would reset $?
  check "$2: exit $rc (want $want), stderr: $(head -c 300 "$T/err")" $ok
}

# replay_pairs NAME CSV JSON: the pairs CSV has the schema's features, sex', label, label' as header,
# one row per discriminatory test of JSON, unique non-protected parts; and every pair replays on AC1:
# `witness predict` labels x and x' (x with sex'), and the two labels differ and are the CSV's.
replay_pairs() {
  local name=$1 csv=$2 json=$3
  "$PY" -c 'import csv, json, sys, tomllib
names = [f["name"] for f in tomllib.load(open(sys.argv[2], "rb"))["features"]]
with open(sys.argv[1], newline="") as f:
    rows = list(csv.reader(f))
d = json.load(open(sys.argv[3]))
ok = rows[0] == names + ["sex'"'"'", "label", "label'"'"'"] and len(rows) - 1 == d["discriminatory"]
s = names.index("sex")
free = [tuple(r[:s] + r[s + 1:len(names)]) for r in rows[1:]]
ok = ok and len(set(free)) == len(free) and all(len(r) == len(names) + 3 for r in rows[1:])
ok = ok and all(r[s] != r[len(names)] for r in rows[1:])  # sex and sex'"'"' differ
with open(sys.argv[4], "w", newline="") as x, open(sys.argv[5], "w", newline="") as xp:
    wx, wxp = csv.writer(x), csv.writer(xp)
    wx.writerow(names)
    wxp.writerow(names)
    for r in rows[1:]:
        wx.writerow(r[:len(names)])
        wxp.writerow(r[:s] + [r[len(names)]] + r[s + 1:len(names)])
sys.exit(0 if ok else 1)' "$csv" "$ADULT" "$json" "$T/x.csv" "$T/xp.csv" 2>/dev/null
  check "$name: pairs CSV header, one row per discriminatory test, unique non-protected parts" $?
  timeout 60 "$W" predict "$AC1" "$T/x.csv" --schema "$ADULT" --json >"$T/x.json" 2>"$T/err" &&
    timeout 60 "$W" predict "$AC1" "$T/xp.csv" --schema "$ADULT" --json >"$T/xp.json" 2>>"$T/err"
  ok=$?  # before the message: its $(...) would reset $?
  check "$name: witness predict labels x and x' ($(head -c 300 "$T/err"))" $ok
  # The CSV names labels `income-per-year=1`; predict prints class indices: compare the index after '='.
  "$PY" -c 'import csv, json, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))[1:]
lx = json.load(open(sys.argv[2]))["labels"]
lxp = json.load(open(sys.argv[3]))["labels"]
idx = lambda name: int(name.rsplit("=", 1)[-1])
ok = len(lx) == len(lxp) == len(rows)
ok = ok and all(a != b and a == idx(r[-2]) and b == idx(r[-1]) for a, b, r in zip(lx, lxp, rows))
sys.exit(0 if ok else 1)' "$csv" "$T/x.json" "$T/xp.json" 2>/dev/null
  check "$name: every pair replays on AC1 (labels differ and equal label, label')" $?
}

# 1, 2. Every method on AC1: exit code, JSON fields, budget, rate, phases adding up; pairs CSV replays.
for m in symbgen themis aequitas adf random-pairs; do
  case $m in
    symbgen) phases='["seed", "directed", "undirected"]' ;;
    aequitas | adf) phases='["global", "local"]' ;;
    *) phases='["random"]' ;;
  esac
  run_test "$T/$m.json" "$AC1" "${COMMON[@]}" --method "$m" --json --out "$T/$m.csv"
  expect_rc_for "$T/$m.json" "test --method $m"
  json_check "$T/$m.json" 'all(k in d for k in ("method", "generated", "discriminatory", "success_rate", "per_phase",
    "seconds", "tests_per_second", "discriminatory_per_second")) and d["method"] == "'"$m"'"'
  check "$m: JSON fields, method" $?
  json_check "$T/$m.json" 'd["generated"] == 200 and d["budget"] == 200 and d["stopped"] == "budget" and
    0 <= d["discriminatory"] <= d["generated"] and
    abs(d["success_rate"] - d["discriminatory"] / d["generated"]) < 1e-12'
  check "$m: generated == budget 200, stopped budget, success_rate == discriminatory/generated" $?
  json_check "$T/$m.json" 'sorted(d["per_phase"]) == sorted('"$phases"') and
    sum(p["generated"] for p in d["per_phase"].values()) == d["generated"] and
    sum(p["discriminatory"] for p in d["per_phase"].values()) == d["discriminatory"] and
    all(0 <= p["discriminatory"] <= p["generated"] for p in d["per_phase"].values())'
  check "$m: per_phase $phases adds up to the totals" $?
  json_check "$T/$m.json" 'd["seconds"] >= 0 and d["tests_per_second"] >= 0 and d["discriminatory_per_second"] >= 0 and
    (d["seconds"] == 0 or abs(d["tests_per_second"] * d["seconds"] - d["generated"]) < 1e-6 * d["generated"])'
  check "$m: seconds, tests_per_second, discriminatory_per_second" $?
  # The example is a pair that differs only in sex and changes the label (none without a discriminatory test).
  json_check "$T/$m.json" '(d["example"] is None) == (d["discriminatory"] == 0) and (d["example"] is None or
    ([k for k in d["example"]["x"] if d["example"]["x"][k] != d["example"]["x_prime"][k]] == ["sex"] and
     d["example"]["label"] != d["example"]["label_prime"]))'
  check "$m: example differs only in sex and changes the label" $?
  replay_pairs "$m --out" "$T/$m.csv" "$T/$m.json"
done

# 3. The example program behind --cmd asks the same questions of the same network (AC1.json), so with
# the same seed it finds the same tests and writes the same pairs, which replay on the native model.
for m in themis aequitas; do
  run_test "$T/native-$m.json" "$AC1_JSON" "${COMMON[@]}" --method "$m" --seed 1 --json --out "$T/native-$m.csv"
  expect_rc_for "$T/native-$m.json" "test AC1.json --method $m"
  run_test "$T/cmd-$m.json" --cmd "$PREDICT" "${COMMON[@]}" --method "$m" --seed 1 --json --out "$T/cmd-$m.csv"
  expect_rc_for "$T/cmd-$m.json" "test --cmd predict.py --method $m --json"
  json_check "$T/cmd-$m.json" 'd["command"].endswith("predict.py") and d["model"] is None and d["generated"] == 200'
  check "--cmd $m: JSON command, no model, generated 200" $?
  "$PY" -c 'import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
sys.exit(0 if all(a[k] == b[k] for k in ("generated", "discriminatory", "per_phase", "queries")) else 1)' \
    "$T/native-$m.json" "$T/cmd-$m.json" 2>/dev/null
  check "--cmd $m: same generated, discriminatory, per_phase, queries as the native AC1.json" $?
  cmp -s "$T/native-$m.csv" "$T/cmd-$m.csv"
  check "--cmd $m: the same pairs CSV as the native run" $?
  replay_pairs "--cmd $m --out" "$T/cmd-$m.csv" "$T/cmd-$m.json"
done
# Text output through --cmd names the program.
run_test "$T/cmd.txt" --cmd "$PREDICT" "${COMMON[@]}" --method aequitas
expect_rc_for "$T/native-aequitas.json" "test --cmd predict.py --method aequitas (text)"
grep -q "^aequitas on '.*predict.py', protected sex" "$T/cmd.txt" && grep -q "unique tests" "$T/cmd.txt"
check "--cmd text output: first line names the program" $?

# 4. Broken --cmd programs. expect_cmd_error NAME CMD NEEDLE ARGS...: exit 2 within 10 s, exactly one
# `error:` line that names CMD and contains NEEDLE.
expect_cmd_error() {
  local name=$1 cmd=$2 needle=$3
  shift 3
  local err rc lines start elapsed
  start=$(date +%s%N)
  err=$(timeout 60 "$W" test --cmd "$cmd" --schema "$ADULT" --protected sex --budget 200 --method themis "$@" 2>&1 \
    >/dev/null)
  rc=$?
  elapsed=$((($(date +%s%N) - start) / 1000000))
  lines=$(printf '%s\n' "$err" | grep -c '^error:')
  [[ $rc -eq 2 && $lines -eq 1 && "$err" == *"$cmd"* && "$err" == *"$needle"* && $elapsed -lt 10000 ]]
  ok=$?  # before the message: its $(...) would reset $?
  check "--cmd $name: rc=$rc (want 2), error lines=$lines (want 1), ${elapsed} ms (want < 10 s), stderr: $(
    printf '%s' "$err" | head -c 300)" $ok
}
expect_cmd_error "printing garbage" 'while read -r l; do echo banana; done' "answer line"
# One garbage line, then waiting for more input: it ends at the batch timeout, and the garbage that
# did arrive is what the error names.
expect_cmd_error "printing garbage, then waiting" \
  "$PY -c 'import sys; sys.stdin.readline(); print(\"banana\"); sys.stdout.flush(); sys.stdin.read()'" \
  "got 'banana'" --batch-timeout 2
# A label outside the classes (adult has no label names: 2 classes) and more answers than rows.
expect_cmd_error "label 7 of 2 classes" 'read -r h; while read -r l; do [ -n "$l" ] && echo 7; done' "got '7'"
expect_cmd_error "answering the batch end too" 'while read -r l; do echo 0; done' "more lines than there were rows"
# --classes widens the accepted labels.
timeout 60 "$W" test --cmd 'read -r h; while read -r l; do [ -n "$l" ] && echo 2; done' --schema "$ADULT" \
  --protected sex --budget 50 --method themis --classes 3 >/dev/null 2>&1
check "--classes 3 accepts label 2 (exit 0: every label the same)" $?
# The run's --time-limit also bounds a program that does not answer.
start=$(date +%s%N)
timeout 60 "$W" test --cmd 'sleep 100' --schema "$ADULT" --protected sex --method themis --time-limit 1 --json \
  >"$T/slow.json" 2>/dev/null
rc=$?
elapsed=$((($(date +%s%N) - start) / 1000000))
[[ $rc -eq 0 && $elapsed -lt 5000 ]] && json_check "$T/slow.json" 'd["stopped"] == "time limit" and d["generated"] == 0'
check "--cmd sleep with --time-limit 1: ends in ${elapsed} ms, stopped 'time limit' (rc $rc)" $?
expect_cmd_error "exiting at once" "exit 3" "stopped answering after 0 of"
expect_cmd_error "exiting at once (status)" "exit 3" "exited with status 3"
expect_cmd_error "false" "false" "stopped answering"
expect_cmd_error "too few lines" "echo 0; echo 1" "stopped answering after 2 of"
expect_cmd_error "nonexistent program" "/nonexistent/prog" "exited with status 127"
# A hung program: the batch timeout ends the run, and the program is killed (its pid is recorded first).
expect_cmd_error "hanging" "echo \$\$ >$T/hang.pid; exec sleep 100" "no complete answer within 1 s" --batch-timeout 1
for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$(cat "$T/hang.pid" 2>/dev/null)" 2>/dev/null || break; sleep 0.1; done
! kill -0 "$(cat "$T/hang.pid" 2>/dev/null)" 2>/dev/null
check "--cmd hanging: the program was killed" $?

# Bad inputs.
expect_input_error "both MODEL and --cmd" "either a MODEL file or a non-empty --cmd" \
  "$W" test "$AC1" --cmd "$PREDICT" --schema "$ADULT" --protected sex --budget 200
expect_input_error "neither MODEL nor --cmd" "either a MODEL file or a non-empty --cmd" \
  "$W" test --schema "$ADULT" --protected sex --budget 200
expect_input_error "--method bogus" "bogus" "$W" test "$AC1" --schema "$ADULT" --method bogus
expect_input_error "--method adf with --cmd (needs the weights)" "adf" \
  "$W" test --cmd "$PREDICT" --schema "$ADULT" --protected sex --method adf --budget 200
expect_input_error "--budget 0 without --time-limit" "time-limit" "$W" test "$AC1" --schema "$ADULT" --budget 0
expect_input_error "--budget -5" "--budget" "$W" test "$AC1" --schema "$ADULT" --budget -5
expect_input_error "unknown --protected feature" "gender" "$W" test "$AC1" --schema "$ADULT" --protected gender
{
  head -2 "$DATA"
  echo "1,2,3"
} >"$T/short_row.csv"
expect_input_error "seeds CSV with a short row" "short_row.csv" \
  "$W" test "$AC1" --schema "$ADULT" --seeds "$T/short_row.csv" --budget 200
{
  head -2 "$DATA"
  head -2 "$DATA" | tail -1 | sed 's/^[^,]*,/old,/'
} >"$T/bad_value.csv"
expect_input_error "seeds CSV with a bad value" "row 2" \
  "$W" test "$AC1" --schema "$ADULT" --seeds "$T/bad_value.csv" --budget 200
printf 'age,workclass\n1,2\n' >"$T/missing_columns.csv"
expect_input_error "seeds CSV without the schema's columns" "missing_columns.csv" \
  "$W" test "$AC1" --schema "$ADULT" --seeds "$T/missing_columns.csv" --budget 200

# 5. No budget, a 1 s time limit: it stops on time, having run many tests.
start=$(date +%s%N)
run_test "$T/timed.json" "$AC1" --schema "$ADULT" --protected sex --method aequitas --budget 0 --time-limit 1 --json
elapsed=$((($(date +%s%N) - start) / 1000000))
expect_rc_for "$T/timed.json" "test --budget 0 --time-limit 1"
json_check "$T/timed.json" 'd["stopped"] == "time limit" and d["budget"] == 0 and 0.8 <= d["seconds"] <= 3 and
  d["generated"] > 1000'
ok=$?  # before the message: its $(...) would reset $?
check "--budget 0 --time-limit 1: stopped 'time limit', about 1 s, many tests ($(tr -d '\n' <"$T/timed.json" |
  head -c 300))" $ok
[[ $elapsed -lt 10000 ]]
check "--budget 0 --time-limit 1: done in ${elapsed} ms (want < 10 s)" $?

# 6. Text output: the counts, the phases and, with a discriminatory test, an example pair.
run_test "$T/symbgen.txt" "$AC1" "${COMMON[@]}" --method symbgen
expect_rc_for "$T/symbgen.json" "test --method symbgen (text)"
grep -q "unique tests" "$T/symbgen.txt" && grep -q "per phase" "$T/symbgen.txt"
check "text output: 'unique tests' and 'per phase' lines" $?
if json_check "$T/symbgen.json" 'd["discriminatory"] > 0'; then
  grep -q "^  example: .*sex=" "$T/symbgen.txt" && grep -q "vs: sex=" "$T/symbgen.txt"
else
  ! grep -q "example:" "$T/symbgen.txt"
fi
check "text output: an example line exactly when there is a discriminatory test" $?
# A seed with which THEMIS finds nothing (at the time of writing): exit 0 and no example line.
run_test "$T/none.json" "$AC1" "${COMMON[@]}" --method themis --seed 3 --json
expect_rc_for "$T/none.json" "test --method themis --seed 3"
run_test "$T/none.txt" "$AC1" "${COMMON[@]}" --method themis --seed 3
if json_check "$T/none.json" 'd["discriminatory"] == 0'; then
  [[ $rc -eq 0 ]] && ! grep -q "example:" "$T/none.txt" && grep -q "unique tests" "$T/none.txt"
else
  grep -q "example:" "$T/none.txt"
fi
check "text output for themis --seed 3: example line iff discriminatory, exit $rc" $?

# 7. Determinism: the same --seed gives the same counts and pairs (also with another thread count).
for m in symbgen aequitas; do
  run_test "$T/d1.json" "$AC1" "${COMMON[@]}" --method "$m" --seed 5 --json --out "$T/d1.csv"
  run_test "$T/d2.json" "$AC1" "${COMMON[@]}" --method "$m" --seed 5 --json --out "$T/d2.csv" --threads 1
  "$PY" -c 'import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
keys = ("generated", "discriminatory", "per_phase", "queries", "duplicates", "rejected", "example")
sys.exit(0 if all(a[k] == b[k] for k in keys) and a["seed"] == b["seed"] == 5 else 1)' \
    "$T/d1.json" "$T/d2.json" 2>/dev/null && cmp -s "$T/d1.csv" "$T/d2.csv"
  check "$m --seed 5 twice: the same counts, example and pairs" $?
done

finish
