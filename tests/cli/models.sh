#!/usr/bin/env bash
# All 25 bundled networks load from .h5 and .json; `predict` gives identical labels for the .h5,
# the .json and an ONNX export of the same network on every row of its data set, in float64, and
# the float32 forward pass agrees too (the networks were trained and saved in float32).
# Usage: models.sh WITNESS_EXE SOURCE_DIR
set -u
source "$(dirname "$0")/lib.bash"

for h5 in "$B"/models/*/*.h5; do
  name=$(basename "$h5" .h5)
  dir=$(dirname "$h5")
  family=$(basename "$dir")
  json=$dir/$name.json
  "$W" info "$h5" >"$T/info_h5" 2>&1
  check "info $name.h5" $?
  "$W" info "$json" >"$T/info_json" 2>&1
  check "info $name.json" $?
  grep -q "^parameters" "$T/info_h5"
  check "info $name.h5 prints parameters" $?
  "$W" convert "$h5" -o "$T/$name.onnx" 2>&1
  check "convert $name to onnx" $?
  args=(--schema "$B/$family.toml")
  "$W" predict "$h5" "$B/data/$family.csv" "${args[@]}" >"$T/h5.labels"
  check "predict $name.h5" $?
  "$W" predict "$json" "$B/data/$family.csv" "${args[@]}" >"$T/json.labels"
  check "predict $name.json" $?
  "$W" predict "$T/$name.onnx" "$B/data/$family.csv" "${args[@]}" >"$T/onnx.labels"
  check "predict $name.onnx" $?
  "$W" predict "$h5" "$B/data/$family.csv" "${args[@]}" --precision float32 >"$T/f32.labels"
  check "predict $name.h5 float32" $?
  rows=$(($(wc -l <"$B/data/$family.csv") - 1))
  [[ $(wc -l <"$T/h5.labels") -eq $rows ]]
  check "$name: one label per row ($rows)" $?
  cmp -s "$T/h5.labels" "$T/json.labels"
  check "$name: .h5 and .json labels identical" $?
  cmp -s "$T/h5.labels" "$T/onnx.labels"
  check "$name: .h5 and .onnx labels identical" $?
  cmp -s "$T/h5.labels" "$T/f32.labels"
  check "$name: float64 and float32 labels identical" $?
done

# .nnet: info shows the declared input bounds; convert applies the file's normalisation (Sub, Div
# nodes: ONNX yes, mlp-json-v1 no) unless --nnet-raw.
printf '// 2-3-1\n2,2,1,3,\n2,3,1,\n0,\n0,-1,\n10,1,\n1,0.5,0,\n2,4,1,\n1,2,\n-1,0.5,\n0.25,0.25,\n0,\n1,\n-1,\n1,-1,1,\n0.5,\n' \
  >"$T/net.nnet"
"$W" info "$T/net.nnet" >"$T/info_nnet" 2>&1
check "info .nnet" $?
grep -q '^bounds .*x0 \[0, 10\], x1 \[-1, 1\]' "$T/info_nnet"
check "info .nnet prints the input bounds" $?
"$W" convert "$T/net.nnet" -o "$T/net.onnx" && grep -q 'Div' <("$W" info "$T/net.onnx")
check "convert .nnet to onnx keeps the normalisation" $?
"$W" convert "$T/net.nnet" -o "$T/net.json" 2>"$T/err"
[[ $? -eq 2 ]] && grep -q '^error: .*mlp-json-v1' "$T/err"
check "convert normalised .nnet to mlp-json-v1: clear error" $?
"$W" convert --nnet-raw "$T/net.nnet" -o "$T/raw.json" && ! grep -q 'Div' <("$W" info "$T/raw.json")
check "convert --nnet-raw" $?
# XGBoost JSON/UBJSON and LightGBM text models (tests/fixtures/trees): info, and a label per row.
for m in xgb_binary.json xgb_binary.ubj xgb_multi.json lgb_cat.txt; do
  "$W" info "$SRC/tests/fixtures/trees/$m" >/dev/null &&
    [[ $("$W" predict "$SRC/tests/fixtures/trees/$m" "$B/data/german.csv" --schema "$B/german.toml" | wc -l) -eq 1000 ]]
  check "info and predict $m" $?
done
finish
