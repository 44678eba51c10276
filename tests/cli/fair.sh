#!/usr/bin/env bash
# `witness fair`: AC1 is unfair for race (exit 10, a JSON witness pair that differs only in race, a
# CSV of it); AC9 with its sex weights zeroed is verified exhaustively (exit 0) by the dual, complete,
# and default (auto) engines, and --check re-proves the complete engine's closures with Z3; auto
# finds AC1's sex witness; the concolic engine from adult.csv finds a witness.
# Usage: fair.sh WITNESS_EXE SOURCE_DIR
set -u
source "$(dirname "$0")/lib.bash"

AC1=$B/models/adult/AC1.h5
ADULT=$B/adult.toml

# fair_json OUT ARGS...: `witness fair ARGS... --json --time-limit 100` (at most 120 s), the JSON to
# OUT and stderr to $T/err; sets rc to its exit code.
fair_json() {
  local out=$1
  shift
  timeout 120 "$W" fair "$@" --json --time-limit 100 >"$out" 2>"$T/err"
  rc=$?
}

# expect_rc WANT NAME: the last run exited with WANT (else the check shows its stderr).
expect_rc() {
  [[ $rc -eq $1 ]]
  ok=$?  # before the message: its $(...) would reset $?
  check "$2: exit $rc (want $1), stderr: $(head -c 300 "$T/err")" $ok
}

# The dual engine on AC1, race: a witness.
fair_json "$T/ac1.json" "$AC1" --schema "$ADULT" --protected race --engine dual --witnesses-out "$T/w.csv"
expect_rc 10 "fair AC1 --protected race --engine dual"
json_check "$T/ac1.json" 'd["verdict"] == "witness" and d["engine"] == "dual" and d["protected"] == ["race"]'
check "AC1 race: verdict witness, engine dual, protected [race]" $?
json_check "$T/ac1.json" 'd["model"].endswith("AC1.h5") and d["exhaustive"] in (True, False) and d["witnesses_found"] == 1'
check "AC1 race: model, exhaustive, witnesses_found" $?
json_check "$T/ac1.json" 'all(k in d["witness"] for k in ("x", "x_prime", "x_named", "x_prime_named", "label",
  "label_prime", "output", "output_prime", "float32_witness")) and d["witness"]["float32_witness"] in (True, False)'
check "AC1 race: witness fields" $?
json_check "$T/ac1.json" 'all(isinstance(d["stats"][k], int) and d["stats"][k] >= 0 for k in ("frontier", "tests", "sat",
  "unsat")) and d["stats"]["seconds"] >= 0 and d["stats"]["tests"] == 1 + d["stats"]["sat"] and d["stats"]["frontier"] > 0'
check "AC1 race: stats frontier/tests/sat/unsat/seconds, tests = 1 + sat" $?
json_check "$T/ac1.json" 'd["witness"]["label"] != d["witness"]["label_prime"] and len(d["witness"]["x"]) == 13 and
  len(d["witness"]["x_prime"]) == 13 and len(d["witness"]["output"]) == 1 and len(d["witness"]["output_prime"]) == 1'
check "AC1 race: labels differ, 13 model inputs, one output" $?
json_check "$T/ac1.json" '[k for k in d["witness"]["x_named"] if d["witness"]["x_named"][k] !=
  d["witness"]["x_prime_named"][k]] == ["race"] and len(d["witness"]["x_named"]) == 13'
check "AC1 race: x_named and x_prime_named differ only in race" $?
race=$(head -1 "$B/data/adult.csv" | tr ',' '\n' | grep -n '^race$' | cut -d: -f1)
json_check "$T/ac1.json" "[i for i in range(13) if d['witness']['x'][i] != d['witness']['x_prime'][i]] == [$race - 1]"
check "AC1 race: x and x_prime differ only in the race input" $?
[[ $(wc -l <"$T/w.csv") -eq 2 ]]
check "--witnesses-out: a header and one row" $?
head -1 "$T/w.csv" | grep -q "^age,workclass,.*,native-country,race',label,label'$"
check "--witnesses-out header: the features, race', label, label'" $?
"$PY" -c 'import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
w = json.load(open(sys.argv[2]))["witness"]
r = rows[0]
ok = len(rows) == 1 and all(r[k] == str(v) for k, v in w["x_named"].items())
ok = ok and r["race'"'"'"] == w["x_prime_named"]["race"] and r["label"] != r["label'"'"'"]
sys.exit(0 if ok else 1)' "$T/w.csv" "$T/ac1.json" 2>/dev/null
check "--witnesses-out row: x, race', different labels (as in the JSON)" $?

# Text output: same verdict and exit code (the concolic engine, which is quicker here).
timeout 120 "$W" fair "$AC1" --schema "$ADULT" --protected race --engine concolic --seeds "$B/data/adult.csv" \
  --time-limit 100 >"$T/ac1.txt" 2>&1
rc=$?
[[ $rc -eq 10 ]] && grep -q "^witness: " "$T/ac1.txt" && grep -q "differ only in race" "$T/ac1.txt"
check "fair AC1 text: exit $rc (want 10), 'witness:' line" $?

# Zeroed sex in AC9 (a 3-3-3-3 network): no label can depend on sex, and the dual search proves it.
"$W" transform "$B/models/adult/AC9.h5" --schema "$ADULT" --zero-inputs sex -o "$T/ac9.onnx" >"$T/out" 2>&1
check "transform AC9 --zero-inputs sex" $?
fair_json "$T/ac9.json" "$T/ac9.onnx" --schema "$ADULT" --protected sex --engine dual
expect_rc 0 "fair zeroed AC9 --protected sex --engine dual"
json_check "$T/ac9.json" 'd["verdict"] == "verified" and d["exhaustive"] is True and d["witness"] is None and
  d["witnesses_found"] == 0 and d["stats"]["unknown"] == 0 and d["protected"] == ["sex"] and d["engine"] == "dual"'
check "zeroed AC9: verdict verified, exhaustive, no witness" $?
json_check "$T/ac9.json" '"certified" not in d and "phase" not in d'
check "zeroed AC9 dual: no domain shares, no phase" $?
json_check "$T/ac9.json" 'd["stats"]["queued"] == d["stats"]["sat"] + d["stats"]["unsat"] and
  d["stats"]["tests"] == 1 + d["stats"]["sat"] and d["stats"]["paths"] <= d["stats"]["tests"]'
check "zeroed AC9: every queued item was solved, tests = 1 + sat, paths <= tests" $?

# The complete engine on the zeroed AC9: the difference bound is exactly 0, the root closes.
fair_json "$T/ac9c.json" "$T/ac9.onnx" --schema "$ADULT" --protected sex --engine complete
expect_rc 0 "fair zeroed AC9 --engine complete"
json_check "$T/ac9c.json" 'd["verdict"] == "verified" and d["engine"] == "complete" and d["exhaustive"] is True and
  d["certified"] == 1 and d["falsified"] == 0 and d["undecided"] == 0 and d["witness"] is None'
check "zeroed AC9 complete: verified, certified 1, falsified 0, undecided 0" $?
json_check "$T/ac9c.json" 'all(isinstance(d["stats"][k], int) for k in ("regions", "leaves", "checked")) and
  d["stats"]["regions"] >= 1 and 1 <= d["stats"]["leaves"] <= d["stats"]["regions"] and d["stats"]["checked"] == 0'
check "zeroed AC9 complete: stats regions, leaves, checked 0 without --check" $?

# --check: every closure is re-proved by Z3 (and the text answer says so).
fair_json "$T/ac9k.json" "$T/ac9.onnx" --schema "$ADULT" --protected sex --engine complete --check --split widest \
  --threads 2
[[ $rc -eq 0 ]] && json_check "$T/ac9k.json" 'd["verdict"] == "verified" and d["stats"]["checked"] >= 1'
check "fair zeroed AC9 --engine complete --check --split widest --threads 2: exit $rc (want 0), checked >= 1" $?
timeout 120 "$W" fair "$T/ac9.onnx" --schema "$ADULT" --protected sex --engine complete --check --quantify \
  --time-limit 100 >"$T/ac9k.txt" 2>&1
rc=$?
[[ $rc -eq 0 ]] && grep -q "^verified: " "$T/ac9k.txt" && grep -q "certified 100%" "$T/ac9k.txt" &&
  grep -q -- "--check" "$T/ac9k.txt"
check "fair zeroed AC9 --check --quantify text: exit $rc (want 0), verified, certified 100%, --check line" $?

# The default engine is auto: on the zeroed AC9 the complete phase decides.
fair_json "$T/ac9a.json" "$T/ac9.onnx" --schema "$ADULT" --protected sex
expect_rc 0 "fair zeroed AC9 (default engine)"
json_check "$T/ac9a.json" 'd["verdict"] == "verified" and d["engine"] == "auto" and d["phase"] == "complete" and
  d["certified"] == 1 and d["exhaustive"] is True'
check "zeroed AC9 default engine: auto, phase complete, certified 1" $?

# auto on AC1, sex: a witness (exit 10) that differs only in sex.
fair_json "$T/ac1s.json" "$AC1" --schema "$ADULT" --protected sex --engine auto
expect_rc 10 "fair AC1 --protected sex --engine auto"
json_check "$T/ac1s.json" 'd["verdict"] == "witness" and d["engine"] == "auto" and
  d["phase"] in ("falsification", "complete") and d["witnesses_found"] >= 1 and
  d["witness"]["label"] != d["witness"]["label_prime"] and d["witness"]["float32_witness"] in (True, False)'
check "AC1 sex auto: witness, engine auto, phase, labels differ" $?
json_check "$T/ac1s.json" '[k for k in d["witness"]["x_named"] if d["witness"]["x_named"][k] !=
  d["witness"]["x_prime_named"][k]] == ["sex"]'
check "AC1 sex auto: the witness differs only in sex" $?
fair_json "$T/ac1c.json" "$AC1" --schema "$ADULT" --protected sex --engine complete --threads 2
[[ $rc -eq 10 ]] && json_check "$T/ac1c.json" 'd["verdict"] == "witness" and d["engine"] == "complete" and
  0 <= d["certified"] <= 1 and abs(d["certified"] + d["falsified"] + d["undecided"] - 1) < 1e-9'
check "fair AC1 --protected sex --engine complete: exit $rc (want 10), shares add up to 1" $?

# The concolic engine from the rows of adult.csv.
fair_json "$T/conc.json" "$AC1" --schema "$ADULT" --protected race --engine concolic --seeds "$B/data/adult.csv"
expect_rc 10 "fair AC1 --engine concolic --seeds adult.csv"
json_check "$T/conc.json" 'd["verdict"] == "witness" and d["engine"] == "concolic" and d["exhaustive"] is False and
  d["stats"]["seeds"] >= 1 and d["stats"]["seeds_exhausted"] == d["stats"]["seeds"] - 1 and
  d["stats"]["tests"] == d["stats"]["seeds"] + d["stats"]["sat"]'
check "concolic: verdict witness, seeds, seeds_exhausted = seeds - 1, tests = seeds + sat" $?
json_check "$T/conc.json" '[k for k in d["witness"]["x_named"] if d["witness"]["x_named"][k] !=
  d["witness"]["x_prime_named"][k]] == ["race"]'
check "concolic: the witness differs only in race" $?
# The concolic witness starts from a data row: x (adult's model inputs are the raw codes) is a row of adult.csv.
"$PY" -c 'import csv, json, sys
x = json.load(open(sys.argv[2]))["witness"]["x"]
rows = csv.reader(open(sys.argv[1]))
next(rows)
sys.exit(0 if any([float(v) for v in r[:13]] == x for r in rows) else 1)' "$B/data/adult.csv" "$T/conc.json" 2>/dev/null
check "concolic: x is a row of adult.csv" $?

# The smt engine on a zeroed GC3, --check, a time limit too small and the bad inputs are cases in
# tests/regress/cases (fair_zeroed_gc3_*, fair_gc5_tiny_time_limit_inconclusive, bad_fair_*, bad_seeds_*).

finish
