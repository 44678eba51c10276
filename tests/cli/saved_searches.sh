#!/usr/bin/env bash
# Saved searches. `witness fair --checkpoint FILE / --resume FILE`: a quantification cut short by
# time limits again and again, each run going on from the last one's checkpoint, ends with the
# uninterrupted run's exact count; so does one killed with SIGKILL mid-way. `--split-into K
# --out-dir D`, `--subproblem`, `witness merge`: the parts solved one by one and merged give the same
# answer. A checkpoint of another question, a damaged one, a missing or doubled part, or a flag that
# cannot apply exit 2 naming what is wrong.
# Usage: saved_searches.sh WITNESS_EXE SOURCE_DIR
set -u
source "$(dirname "$0")/lib.bash"

P=$SRC/tests/fixtures/pipelines
small_domain_rows "$T/rows.csv"  # exact counts need a domain under 2^64 points
ARGS=("$P/rf.onnx" --data "$T/rows.csv" --protected sex --quantify)
field() { "$PY" -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

run_witness 120 "$T/straight.json" fair "${ARGS[@]}" --threads 1 --json
check "straight run: rc=$rc (want 10)" $([[ $rc -eq 10 ]]; echo $?)
want=$(field "$T/straight.json" 'd["domain"]["falsified_points"]')
check "straight run is exact" $(json_check "$T/straight.json" 'd["domain"]["exact"] and d["undecided"] == 0'; echo $?)

# Short time limits (0.1 s, growing by half each round up to 5 s, so that a slow build also ends):
# each run continues the previous run's checkpoint.
resumed=()
limit=0.1
for round in $(seq 1 60); do
  run_witness 120 "$T/round.json" fair "${ARGS[@]}" --threads 2 --time-limit "$limit" --checkpoint "$T/ckpt.json" \
    "${resumed[@]}" --json
  limit=$("$PY" -c "print(min(5.0, $limit * 1.5))")
  resumed=(--resume "$T/ckpt.json")
  [[ $rc -ne 10 && $rc -ne 20 ]] && break
  json_check "$T/round.json" 'd["undecided"] == 0' && break
done
check "rounds of 0.1 s and more: rc=$rc (want 10) after $round rounds" $([[ $rc -eq 10 ]]; echo $?)
check "rounds of 0.1 s and more: the exact count ($(field "$T/round.json" 'd["domain"].get("falsified_points")') vs $want)" \
  $(json_check "$T/round.json" "d['domain']['exact'] and d['domain']['falsified_points'] == $want"; echo $?)
check "the checkpoint is a witness search state" \
  $(json_check "$T/ckpt.json" 'd["format"] == "witness search state" and d["open"] == []'; echo $?)

# Killed with SIGKILL as soon as its first checkpoint (every 0.05 s) is there: it goes on to the
# same count.
rm -f "$T/killed.json"
"$W" fair "${ARGS[@]}" --threads 1 --checkpoint "$T/killed.json" --checkpoint-every 0.05 >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 400); do
  [[ -f $T/killed.json ]] && break
  sleep 0.05
done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
if [[ -f $T/killed.json ]]; then
  run_witness 120 "$T/after_kill.json" fair "${ARGS[@]}" --resume "$T/killed.json" --json
  check "resumed after SIGKILL: rc=$rc, the exact count" \
    $(json_check "$T/after_kill.json" "d['domain']['exact'] and d['domain']['falsified_points'] == $want"; echo $?)
else
  check "no checkpoint within 20 s (every 0.05 s)" 1
fi

# Another question, a damaged file, an engine that cannot save, a folder that does not exist.
expect_input_error "resume with another protected feature" "saved for another" \
  "$W" fair "$P/rf.onnx" --data "$P/adult_600.csv" --protected race --quantify --resume "$T/ckpt.json"
expect_input_error "resume a verdict search from a quantify checkpoint" "saved for another" \
  "$W" fair "$P/rf.onnx" --data "$P/adult_600.csv" --protected sex --resume "$T/ckpt.json"
head -c 300 "$T/ckpt.json" >"$T/cut.json"
expect_input_error "a truncated checkpoint" "cut.json" "$W" fair "${ARGS[@]}" --resume "$T/cut.json"
expect_input_error "a missing checkpoint" "nothing.json" "$W" fair "${ARGS[@]}" --resume "$T/nothing.json"
expect_input_error "--checkpoint with the smt engine" "complete engine" \
  "$W" fair "${ARGS[@]}" --engine smt --checkpoint "$T/smt.json"
expect_input_error "--checkpoint into a missing folder" "no/such" \
  "$W" fair "${ARGS[@]}" --checkpoint "$T/no/such/ckpt.json"
expect_input_error "--checkpoint-every 0" "checkpoint-every" \
  "$W" fair "${ARGS[@]}" --checkpoint "$T/c.json" --checkpoint-every 0
# Sub-problems: split in 5, each solved on its own (one with a time limit first, then resumed), merged.
run_witness 120 "$T/split.out" fair "${ARGS[@]}" --split-into 5 --out-dir "$T/parts"
check "--split-into 5: rc=$rc, 5 files" $([[ $rc -eq 0 && -f $T/parts/part-004.json && ! -f $T/parts/part-005.json ]]; echo $?)
for k in 0 1 2 3 4; do
  run_witness 120 "$T/part$k.out" fair --subproblem "$T/parts/part-00$k.json" --threads $((k % 2 + 1))
  check "part $k: rc=$rc (want 0, 10 or 20)" $([[ $rc -eq 0 || $rc -eq 10 || $rc -eq 20 ]]; echo $?)
done
run_witness 120 "$T/merged.json" merge "$T"/parts/part-*.result.json --json
check "merge: rc=$rc (want 10), the exact count" \
  $([[ $rc -eq 10 ]] && json_check "$T/merged.json" "d['domain']['exact'] and d['domain']['falsified_points'] == $want"; echo $?)
check "merge: every region once" \
  $(json_check "$T/merged.json" "d['stats']['regions'] == $(field "$T/straight.json" 'd["stats"]["regions"]')"; echo $?)
expect_input_error "merge without part 3" "4 of 5 parts" "$W" merge "$T"/parts/part-00[0124].result.json
expect_input_error "merge with part 1 twice" "part 1 is given twice" \
  "$W" merge "$T"/parts/part-*.result.json "$T/parts/part-001.result.json"
expect_input_error "merge a sub-problem of another split" "another split" \
  "$W" merge "$T/parts/part-000.result.json" "$T/ckpt.json"
# The probe's saved states (issue 45): each tampered or mismatched file is exit 2, naming the part.
# Two runs of the same split command deal other regions under the same question: never mixed.
run_witness 120 "$T/split2.out" fair "${ARGS[@]}" --split-into 5 --out-dir "$T/parts2" --threads 2
for k in 0 1 2 3 4; do run_witness 120 "$T/p2$k.out" fair --subproblem "$T/parts2/part-00$k.json"; done
expect_input_error "parts of two runs of one split command" "another split" \
  "$W" merge "$T/parts/part-000.result.json" "$T"/parts2/part-00[1234].result.json
tamper() {  # tamper NAME FILE PYTHON-STATEMENT: FILE's JSON `d` changed, written to $T/parts3
  rm -rf "$T/parts3" && cp -r "$T/parts" "$T/parts3"
  "$PY" - "$T/parts3/$2" "$3" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[2])
json.dump(d, open(sys.argv[1], "w"))
PYEOF
}
tamper digit part-002.result.json 't = d["tally"]; t["falsified"] = t["falsified"][:-1] + ("1" if t["falsified"][-1] != "1" else "2") if t["falsified"] != "0x0p+0" else "0x1p+0"'
expect_input_error "one digit of falsified changed" "part 2" "$W" merge "$T"/parts3/part-*.result.json
tamper relabel part-002.result.json 'd["part"] = 3'
expect_input_error "a part relabelled" "given twice" "$W" merge "$T"/parts3/part-*.result.json
tamper parts part-002.result.json 'd["parts"] = 4'
expect_input_error "the part count edited" "split into" "$W" merge "$T"/parts3/part-*.result.json
tamper certified part-000.result.json 'd["tally"]["certified"] = d["tally"]["scope"]'
expect_input_error "certified = scope" "more points closed" "$W" merge "$T"/parts3/part-*.result.json
tamper invalid part-000.result.json 't = d["tally"]; f = float.fromhex(t["falsified"]); t["invalid"] = float(f).hex(); t["falsified"] = "0x0p+0"'
expect_input_error "falsified points moved to invalid" "no rules" "$W" merge "$T"/parts3/part-*.result.json
cp -r "$T/parts" "$T/parts4"
"$PY" - "$T/parts4" <<'PYEOF'
import json, sys
# An unfinished part (a time limit) with open regions: delete one, duplicate one, widen one.
p = sys.argv[1] + "/part-001.json"
d = json.load(open(p))
assert len(d["open"]) >= 1
for name, change in [("deleted", lambda o: o[1:]), ("duplicated", lambda o: o + [o[0]])]:
    e = dict(d); e["open"] = change(list(d["open"])); json.dump(e, open(sys.argv[1] + f"/{name}.json", "w"))
e = json.loads(json.dumps(d)); e["open"][0]["lo"] = [0 for _ in e["open"][0]["lo"]]
json.dump(e, open(sys.argv[1] + "/widened.json", "w"))
PYEOF
for name in deleted duplicated widened; do
  expect_input_error "a sub-problem with an open region $name" "$name.json" "$W" fair --subproblem "$T/parts4/$name.json"
done
# The model or schema changed after the split: the question's content hashes differ.
cp "$P/rf.onnx" "$T/m.onnx"
run_witness 120 "$T/split5.out" fair "$T/m.onnx" --data "$P/adult_600.csv" --protected sex --quantify \
  --split-into 2 --out-dir "$T/parts5"
for k in 0 1; do run_witness 120 "$T/p5$k.out" fair --subproblem "$T/parts5/part-00$k.json"; done
"$PY" - "$T/m.onnx" <<'PYEOF'
import sys, onnx
m = onnx.load(sys.argv[1])
# One leaf weight of one tree, away from any point a sample would look at.
for node in m.graph.node:
    for a in node.attribute:
        if a.name in ("class_weights", "target_weights"):
            a.floats[len(a.floats) // 2] += 0.25
            break
onnx.save(m, sys.argv[1])
PYEOF
expect_input_error "a model changed between split and merge" "another model" "$W" merge "$T"/parts5/part-*.result.json
expect_input_error "a checkpoint resumed on a changed model" "another model" \
  "$W" fair "$T/m.onnx" --data "$P/adult_600.csv" --protected sex --quantify --resume "$T/ckpt.json"
"$W" schema infer "$P/rf.onnx" --data "$P/adult_600.csv" >"$T/rf.toml" 2>/dev/null
printf '\n[constraints]\nrules = ["age >= 20"]\n' >>"$T/rf.toml"
expect_input_error "a checkpoint without rules resumed under rules" "another schema" \
  "$W" fair "$P/rf.onnx" --schema "$T/rf.toml" --data "$P/adult_600.csv" --protected sex --quantify \
  --resume "$T/ckpt.json"
# A protected feature with a proxy (education-num = map(education, ...)): the parts are states of
# the question the engine searches, proxy included, so they continue and merge (they once were
# written for the question without it, and every part was refused as "another question").
B=$SRC/benchmarks/fairify
PX=("$B/models/adult/AC1.h5" --schema "$B/adult_constrained.toml" --protected education --quantify)
run_witness 120 "$T/split6.out" fair "${PX[@]}" --split-into 2 --out-dir "$T/parts6"
for k in 0 1; do
  run_witness 120 "$T/p6$k.out" fair --subproblem "$T/parts6/part-00$k.json" --time-limit 2
  check "a part of a split with a proxy: rc=$rc (want 10 or 20)" $([[ $rc -eq 10 || $rc -eq 20 ]]; echo $?)
done
run_witness 120 "$T/merged6.json" merge "$T"/parts6/part-*.result.json --json
check "merge of a split with a proxy: rc=$rc (want 10), a witness that moves the proxy" \
  $([[ $rc -eq 10 ]] && json_check "$T/merged6.json" "d['witness']['x_named']['education-num'] != d['witness']['x_prime_named']['education-num']"; echo $?)
# Honest merges say what they trust.
check "merge says what it trusts" $(json_check "$T/merged.json" '"merged from 5 parts" in d["trusted"]'; echo $?)
# Partial files: a split whose files cannot be written leaves none; a temp file a killed
# checkpoint left is gone when the next run starts.
mkdir -p "$T/full"
(ulimit -f 1; "$W" fair "${ARGS[@]}" --split-into 5 --out-dir "$T/full" >/dev/null 2>"$T/full.err")
rc=$?
check "a split that cannot write its parts: rc=$rc (want 2), no part left" \
  $([[ $rc -eq 2 ]] && ! ls "$T/full"/part-* >/dev/null 2>&1 && ! ls -a "$T/full" | grep -q witness-split; echo $?)
echo "partial" >"$T/ckpt2.json.witness-tmp"
run_witness 120 "$T/c2.out" fair "${ARGS[@]}" --checkpoint "$T/ckpt2.json" --time-limit 0.5
check "a stale checkpoint temp is removed on start" $([[ ! -f $T/ckpt2.json.witness-tmp ]]; echo $?)
expect_input_error "--subproblem with a model" "sub-problem file says" \
  "$W" fair "$P/rf.onnx" --subproblem "$T/parts/part-000.json"
expect_input_error "--split-into without --out-dir" "--out-dir" "$W" fair "${ARGS[@]}" --split-into 3
expect_input_error "--split-into with the dual engine" "complete engine" \
  "$W" fair "${ARGS[@]}" --engine dual --split-into 3 --out-dir "$T/dual"
expect_input_error "a checkpoint is no sub-problem" "no sub-problem header" "$W" fair --subproblem "$T/ckpt.json"
"$PY" - "$T/parts/part-001.json" "$T/hostile.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["header"]["options"]["checkpoint"] = "/etc/passwd"
json.dump(d, open(sys.argv[2], "w"))
PYEOF
expect_input_error "a sub-problem asking for a file option" "not an option of witness fair" \
  "$W" fair --subproblem "$T/hostile.json"
finish
