#!/usr/bin/env bash
# Real people first, deterministically (issue 46): with data rows that flip, every mode answers
# `witness` with the same first witness, a real row, run after run and with 1 or 2 threads: plain,
# --quantify, a schema with rules, --near-data, a tree ensemble and a pipeline. The label is never
# guessed: a 0/1 column after the label is not read as one. Usage: audit.sh WITNESS_EXE SOURCE_DIR
# [RUNS] (default 3; bench/audit_table runs 20).
set -u
source "$(dirname "$0")/lib.bash"
RUNS=${3:-3}
P=$SRC/tests/fixtures/pipelines
AC=("$B/models/adult/AC1.h5" --schema "$B/adult_constrained.toml" --data "$B/data/adult.csv" --protected sex)
small_domain_rows "$T/rows.csv"
declare -A modes=(
  [plain]="${AC[*]}"
  [quantify]="${AC[*]} --quantify --time-limit 3"
  [near-data]="${AC[*]} --near-data 1 --time-limit 3"
  [trees]="$P/rf.onnx --data $T/rows.csv --protected sex --quantify"
  [pipeline]="$P/lr.onnx --data $P/adult_600.csv --protected sex,race"
  [constraints-smt]="${AC[*]} --engine smt --time-limit 10"
)
for mode in plain quantify near-data trees pipeline constraints-smt; do
  firsts=()
  verdicts=()
  for run in $(seq 1 "$RUNS"); do
    threads=$((run % 2 + 1))
    # shellcheck disable=SC2086  # the mode's words are separate arguments
    run_witness 120 "$T/a.json" fair ${modes[$mode]} --threads "$threads" --json
    verdicts+=("$rc")
    firsts+=("$("$PY" -c 'import json, sys
d = json.load(open(sys.argv[1])); w = d["witness"]
print(w["nearest_row"]["row"] if w and w["nearest_row"] and not w["nearest_row"]["differs"] else "synthetic")' "$T/a.json" 2>&1)")
  done
  same=$(printf '%s\n' "${firsts[@]}" | sort -u | wc -l)
  check "$mode: $RUNS runs all witness (exit codes ${verdicts[*]}) with one real first row (${firsts[*]})" \
    $([[ "$(printf '%s\n' "${verdicts[@]}" | sort -u)" == "10" && $same -eq 1 && "${firsts[0]}" != "synthetic" ]]; echo $?)
done
# The label is the named column or the schema's, never a guess: a 0/1 column added last is read as
# nothing (and named), the label given first in the file is used when named.
"$PY" - "$P/adult_600.csv" "$T/relabelled.csv" <<'PYEOF'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
i = rows[0].index("income")
with open(sys.argv[2], "w", newline="") as f:
    w = csv.writer(f, lineterminator="\n")
    for k, r in enumerate(rows):
        w.writerow([r[i]] + r[:i] + r[i + 1:] + (["reviewed"] if k == 0 else [str(k % 2)]))
PYEOF
run_witness 60 "$T/g.json" fair "$P/lr.onnx" --data "$T/relabelled.csv" --protected sex --json
check "no --label: no true-label rates, the unread columns named (rc=$rc)" \
  $(json_check "$T/g.json" 'd["groups"]["label"] is None and set(d["unread_columns"]) == {"income", "reviewed"} and d["groups"]["tables"][0]["groups"][0]["true_positive_rate"] is None'; echo $?)
run_witness 60 "$T/g2.json" fair "$P/lr.onnx" --data "$T/relabelled.csv" --protected sex --label income --json
check "--label income: rates from that column (rc=$rc)" \
  $(json_check "$T/g2.json" 'd["groups"]["label"] == "income" and d["groups"]["tables"][0]["groups"][0]["true_positive_rate"]["n"] > 0'; echo $?)
expect_input_error "--label naming a model input" "that column is a model input" \
  "$W" fair "$P/lr.onnx" --data "$T/relabelled.csv" --protected sex --label age
expect_input_error "--favorable naming no class" "not a class of the model" \
  "$W" fair "$P/lr.onnx" --data "$T/relabelled.csv" --protected sex --favorable approved
expect_input_error "--groups naming no column" "unknown group column 'zodiac'" \
  "$W" fair "$P/lr.onnx" --data "$T/relabelled.csv" --protected sex --groups zodiac
finish
