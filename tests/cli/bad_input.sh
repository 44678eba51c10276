#!/usr/bin/env bash
# Every malformed input gives exactly one `error:` line naming the file, and exit code 2;
# never a crash (exit >= 128) or a hang (each run is bounded by `timeout`).
# Usage: bad_input.sh WITNESS_EXE SOURCE_DIR
set -u
source "$(dirname "$0")/lib.bash"

# --- models ---------------------------------------------------------------------------------
head -c 1000 "$B/models/adult/AC1.h5" >"$T/trunc.h5"
head -c $(($(stat -c %s "$B/models/adult/AC1.h5") / 2)) "$B/models/adult/AC1.h5" >"$T/half.h5"
head -c 3000 /dev/urandom >"$T/random.h5"
: >"$T/empty.h5"
head -c 500 "$B/models/adult/AC1.json" >"$T/trunc.json"
/usr/bin/python3 - "$B/models/adult/AC1.json" "$T" <<'PY' 2>/dev/null || true
import json, sys
m = json.load(open(sys.argv[1])); t = sys.argv[2]
a = json.loads(json.dumps(m)); a["layers"][1]["weights"][0] = a["layers"][1]["weights"][0][:-1]
json.dump(a, open(t + "/shape.json", "w"))
b = json.loads(json.dumps(m)); b["layers"][0]["bias"][3] = 1e999
open(t + "/inf.json", "w").write(json.dumps(b).replace("Infinity", "1e999"))
open(t + "/nan.json", "w").write(json.dumps(m).replace('"bias": [', '"bias": [NaN, ', 1))
c = json.loads(json.dumps(m)); c["format"] = "mlp-json-v9"
json.dump(c, open(t + "/format.json", "w"))
d = json.loads(json.dumps(m)); d["layers"][0]["activation"] = "swish"
json.dump(d, open(t + "/act.json", "w"))
PY
head -c 200 /dev/urandom >"$T/random.onnx"
# .nnet: cut off after the layer sizes, a NaN weight, random bytes
printf '// 2-3-1\n2,2,1,3,\n2,3,1,\n' >"$T/trunc.nnet"
printf '2,2,1,3,\n2,3,1,\n0,\n0,0,\n1,1,\n0,0,0,\n1,1,1,\n1,nan,\n1,1,\n1,1,\n0,\n0,\n0,\n1,1,1,\n0,\n' >"$T/nan.nnet"
head -c 300 /dev/urandom >"$T/random.nnet"
for f in trunc.h5 half.h5 random.h5 empty.h5 trunc.json nan.json shape.json inf.json format.json act.json random.onnx \
  trunc.nnet nan.nnet random.nnet; do
  expect_input_error "info $f" "$T/$f" "$W" info "$T/$f"
done
# HDF5 itself segfaults on this file; witness must still answer with one clean error.
expect_input_error "hdf5 crash" "corrupt HDF5 file" "$W" info "$SRC/tests/fixtures/h5/crashes_hdf5.h5"
expect_input_error "directory as model" "$T" "$W" info "$T"
expect_input_error "device as model" "/dev/zero" "$W" info /dev/zero
expect_input_error "missing model" "$T/nope.h5" "$W" info "$T/nope.h5"
for f in "$SRC"/tests/fixtures/onnx/{unsupported_op,bad_shape,nan_weight,truncated,garbage}.onnx; do
  [[ -f $f ]] && expect_input_error "info $(basename "$f")" "$f" "$W" info "$f"
done

# Hostile files for `report`, schemas and queries: devices, deep JSON, deep TOML keys and brackets.
expect_input_error "report of a device" "/dev/zero" "$W" report /dev/zero -o "$T/r.html"
"$PY" -c 'print("[" * 100000 + "]" * 100000)' >"$T/deep.json"
expect_input_error "report of 100,000-deep JSON" "nested more than 64 deep" "$W" report "$T/deep.json" -o "$T/r.html"
[[ ! -e $T/r.html ]]
check "report refused: no HTML written" $?
"$PY" -c 'print("a" + ".a" * 40000 + " = 1")' >"$T/deep_key.toml"
expect_input_error "schema with a 40,000-part dotted key" "a dotted key with more than 64 parts" \
  "$W" info "$B/models/adult/AC1.h5" --schema "$T/deep_key.toml"
expect_input_error "query with a 40,000-part dotted key" "line 1: a dotted key" "$W" query "$T/deep_key.toml"
"$PY" -c 'print("x = " + "[" * 40000)' >"$T/deep_array.toml"
expect_input_error "schema with 40,000 nested arrays" "nested more than 64 deep" \
  "$W" info "$B/models/adult/AC1.h5" --schema "$T/deep_array.toml"

# A full disk (/dev/full) under stdout: exit 1 and a message, never a verdict's exit code.
for cmd in "info $B/models/adult/AC1.h5" "predict $B/models/german/GC1.h5 $B/data/german.csv --schema $B/german.toml" \
  "fair $B/models/adult/AC1.h5 --schema $B/adult.toml --protected sex --json --time-limit 30"; do
  # shellcheck disable=SC2086  # the command's words
  timeout 60 "$W" $cmd >/dev/full 2>"$T/err"
  rc=$?
  [[ $rc -eq 1 ]] && grep -q "^error: cannot write the answer to standard output" "$T/err"
  ok=$?  # before check: the message's $(...) would reset $?
  check "${cmd%% *} > /dev/full: exit $rc (want 1), stderr: $(head -c 200 "$T/err")" $ok
done

# Output files are checked before the run: an unwritable one is an input error at once.
expect_input_error "fair --regions-out in a missing folder" "$T/no/such/regions.csv" \
  "$W" fair "$B/models/german/GC1.h5" --schema "$B/german.toml" --protected age --quantify --time-limit 60 \
  --regions-out "$T/no/such/regions.csv"
expect_input_error "bias --html onto a folder" "is a directory" \
  "$W" bias "$B/models/adult/AC1.h5" --schema "$B/adult.toml" --protected sex --html "$T"

# A 100,000-term query expression: refused at once (it was copied over and over, past any time limit).
"$PY" - "$SRC/examples/soid/diabetes/weight.toml" "$T/huge_query.toml" <<'EOF2'
import sys
text = open(sys.argv[1]).read()
huge = 'behavior = "label == 1 && ' + " + ".join(["weight_lb"] * 100000) + ' > 0"'
open(sys.argv[2], "w").write(text.replace('behavior = "label == 1"', huge))
EOF2
cp "$SRC/examples/soid/diabetes/diabetes_agent.onnx" "$T/"
expect_input_error "query with a 100,000-term expression" "more than 2000 operators deep" \
  "$W" query "$T/huge_query.toml" --time-limit 10

# A solver memory limit too small to start Z3: each query is unknown (out of memory), never a crash.
run_witness 60 "$T/mem.txt" query "$SRC/examples/soid/diabetes/weight.toml" --query-memory-limit 1
[[ $rc -eq 20 ]] && grep -q "out of memory" "$T/mem.txt"
ok=$?  # before check: the message's $(...) would reset $?
check "query --query-memory-limit 1: rc=$rc (want 20), $(head -c 300 "$T/mem.txt") $(head -c 200 "$T/err")" $ok

# Malformed schemas, data files and command lines are cases in tests/regress/cases (bad_schema_*,
# bad_data_*, bad_bias_*, bad_unknown_command).

finish
