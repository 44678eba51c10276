#!/usr/bin/env bash
# `witness dual` writes PyFair's dual network as ONNX, and predicting with it on rows (x, sex') gives 1
# exactly where AC1's labels on x and on x with sex flipped differ; `witness transform` zeroes the
# first-layer weights of a feature, after which Bias% for it is exactly 0; errors exit with 2.
# Usage: dual_transform.sh WITNESS_EXE SOURCE_DIR
set -u
source "$(dirname "$0")/lib.bash"

AC1=$B/models/adult/AC1.h5
ADULT=$B/adult.toml

# The dual of AC1 for sex: 14 inputs (x, sex'), 3 outputs.
"$W" dual "$AC1" --schema "$ADULT" -o "$T/dual.onnx" >"$T/out" 2>&1
check "dual AC1" $?
[[ -s $T/dual.onnx ]]
check "dual AC1 writes dual.onnx" $?
"$W" info "$T/dual.onnx" >"$T/info" 2>&1
check "info dual.onnx" $?
grep -q "^inputs  *14: age, workclass, \.\.\., sex'" "$T/info"
check "dual.onnx has the 13 inputs then sex'" $?
grep -q "^outputs  *3: y0, y0', differ" "$T/info"
check "dual.onnx outputs y0, y0', differ" $?
"$W" dual "$AC1" --schema "$ADULT" --protected sex,race --duplicate -o "$T/dual2.onnx" >"$T/out" 2>&1
check "dual AC1 --protected sex,race --duplicate" $?
"$W" info "$T/dual2.onnx" >"$T/info2" 2>&1
grep -q "^inputs  *15: .*sex'" "$T/info2"
check "dual2.onnx has 15 inputs" $?

# Predict with the dual on (x, sex' = 1 - sex) for every row of adult.csv: a schema with sex' added.
{
  cat "$ADULT"
  printf '\n[[features]]\nname = "sex'"'"'"\nkind = "categorical"\ncategories = ["Female", "Male"]\n'
} >"$T/dual.toml"
sex=$(head -1 "$B/data/adult.csv" | tr ',' '\n' | grep -n '^sex$' | cut -d: -f1)
awk -F, -v c="$sex" 'BEGIN { OFS = "," } NR == 1 { print $0 ",sex'"'"'"; next } { print $0 "," (1 - $c) }' \
  "$B/data/adult.csv" >"$T/dual.csv"
awk -F, -v c="$sex" 'BEGIN { OFS = "," } NR == 1 { print; next } { $c = 1 - $c; print }' \
  "$B/data/adult.csv" >"$T/flip.csv"
"$W" predict "$AC1" "$B/data/adult.csv" --schema "$ADULT" >"$T/l1"
check "predict AC1" $?
"$W" predict "$AC1" "$T/flip.csv" --schema "$ADULT" >"$T/l2"
check "predict AC1 with sex flipped" $?
paste -d' ' "$T/l1" "$T/l2" | awk '{ print ($1 != $2) ? 1 : 0 }' >"$T/expected"
"$W" predict "$T/dual.onnx" "$T/dual.csv" --schema "$T/dual.toml" >"$T/differ"
check "predict dual.onnx" $?
cmp -s "$T/differ" "$T/expected"
check "dual label = (AC1(x) != AC1(x with sex flipped)) on every row" $?
grep -q '^1$' "$T/differ"
check "some row of adult.csv is discriminatory for AC1" $?

expect_input_error "dual to .json" "ONNX" "$W" dual "$AC1" --schema "$ADULT" -o "$T/dual.json"
expect_input_error "dual with an unknown protected feature" "gender" \
  "$W" dual "$AC1" --schema "$ADULT" --protected gender -o "$T/x.onnx"
expect_input_error "dual with a schema of another width" "model inputs" \
  "$W" dual "$AC1" --schema "$B/german.toml" -o "$T/x.onnx"

# transform: zeroed sex -> Bias% 0 exactly, in both formats; the dual of it never says 1.
"$W" transform "$AC1" --schema "$ADULT" --zero-inputs sex -o "$T/fair.onnx" >"$T/out" 2>&1
check "transform --zero-inputs sex -o .onnx" $?
"$W" transform "$AC1" --schema "$ADULT" --zero-inputs sex -o "$T/fair.json" >"$T/out" 2>&1
check "transform --zero-inputs sex -o .json" $?
for f in fair.onnx fair.json; do
  "$W" bias "$T/$f" --schema "$ADULT" --protected sex --samples 20000 >"$T/bias" 2>&1
  check "bias $f" $?
  grep -q "for sex: 0.000% " "$T/bias"
  check "bias of $f for sex is 0.000%" $?
done
"$W" bias "$AC1" --schema "$ADULT" --protected sex --samples 20000 >"$T/bias" 2>&1
! grep -q "for sex: 0.000% " "$T/bias"
check "bias of AC1 itself for sex is not 0" $?
"$W" dual "$T/fair.onnx" --schema "$ADULT" -o "$T/fair_dual.onnx" >"$T/out" 2>&1
check "dual of the zeroed model" $?
"$W" predict "$T/fair_dual.onnx" "$T/dual.csv" --schema "$T/dual.toml" >"$T/differ"
! grep -q '^1$' "$T/differ"
check "the dual of the zeroed model never says 1" $?
"$W" transform "$B/models/german/GC1.h5" --schema "$B/german.toml" --zero-inputs age,sex -o "$T/gc1.onnx" >"$T/out" 2>&1
check "transform GC1 --zero-inputs age,sex" $?
"$W" bias "$T/gc1.onnx" --schema "$B/german.toml" --protected age,sex --samples 20000 >"$T/bias" 2>&1
grep -q "for age,sex: 0.000% " "$T/bias"
check "bias of zeroed GC1 for age,sex is 0.000%" $?
"$W" transform "$AC1" --schema "$ADULT" --scale-inputs sex,race --factor 1e-3 -o "$T/near.json" >"$T/out" 2>&1
check "transform --scale-inputs sex,race --factor 1e-3" $?
"$W" bias "$T/near.json" --schema "$ADULT" --protected sex --samples 2000 >"$T/out" 2>&1
check "bias of the scaled model" $?

expect_input_error "transform without a feature list" "zero-inputs" "$W" transform "$AC1" --schema "$ADULT" -o "$T/x.onnx"
expect_input_error "transform with both lists" "zero-inputs" \
  "$W" transform "$AC1" --schema "$ADULT" --zero-inputs sex --scale-inputs race --factor 2 -o "$T/x.onnx"
expect_input_error "transform --scale-inputs without --factor" "factor" \
  "$W" transform "$AC1" --schema "$ADULT" --scale-inputs sex -o "$T/x.onnx"
expect_input_error "transform --factor inf" "factor" \
  "$W" transform "$AC1" --schema "$ADULT" --scale-inputs sex --factor inf -o "$T/x.onnx"
expect_input_error "transform an unknown feature" "sexx" \
  "$W" transform "$AC1" --schema "$ADULT" --zero-inputs sexx -o "$T/x.onnx"
expect_input_error "transform to an unknown format" "x.txt" \
  "$W" transform "$AC1" --schema "$ADULT" --zero-inputs sex -o "$T/x.txt"

finish
