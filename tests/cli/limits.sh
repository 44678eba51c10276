#!/usr/bin/env bash
# Every limit holds on a wide network, where one batch, one gradient or one solver call is long:
# `test` (each method), `fair` (each engine) and `bias` end by --time-limit + 10% + 2 s. Timed, so
# it runs in the Release pass only (label plain): under the sanitizers loading the network alone
# takes most of the limit.
set -u
source "$(dirname "$0")/lib.bash"

/usr/bin/python3 "$SRC/tools/make_wide_network.py" "$T/wide" --layers 6 --width 600 >/dev/null 2>&1

# --time-limit holds on a wide network, where one batch or one gradient is long (SymbGen ran 75 s
# and 12.5 GB, ADF 29 s on a 10 x 1000 network with --time-limit 5): the end within 10% + 2 s.
for m in symbgen adf aequitas themis; do
  start=$EPOCHREALTIME
  run_witness 60 "$T/w.json" test "$T/wide/wide.nnet" --schema "$T/wide/wide.toml" --method "$m" --time-limit 4 --json
  secs=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
  [[ $rc -eq 0 || $rc -eq 10 ]] && json_check "$T/w.json" 'd["stopped"] in ("time limit", "exhausted")' &&
    awk -v s="$secs" 'BEGIN { exit !(s <= 4 * 1.1 + 2) }'
  check "$m --time-limit 4 on a 6 x 600 network: rc=$rc, $secs s, $(head -c 200 "$T/w.json") $(head -c 200 "$T/err")" $?
done
# And `fair`: every engine answers by the limit + 10% + 1 s (Z3 may ignore its interrupt while it
# takes in a wide network's encoding: the command then prints what it knows and ends, exit 20).
for e in concolic dual smt complete; do
  start=$EPOCHREALTIME
  run_witness 60 "$T/f.json" fair "$T/wide/wide.nnet" --schema "$T/wide/wide.toml" --engine "$e" --time-limit 4 --json
  secs=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
  [[ $rc -eq 10 || $rc -eq 20 ]] && json_check "$T/f.json" 'd["verdict"] in ("witness", "inconclusive")' &&
    awk -v s="$secs" 'BEGIN { exit !(s <= 4 * 1.1 + 2) }'
  check "fair --engine $e --time-limit 4 on a 6 x 600 network: rc=$rc, $secs s, $(head -c 200 "$T/f.json")" $?
done

# And `bias` (10 million samples would take minutes here): stopped by the limit, on the samples drawn.
start=$EPOCHREALTIME
run_witness 60 "$T/b.json" bias "$T/wide/wide.nnet" --schema "$T/wide/wide.toml" --samples 10000000 --time-limit 4 --json
secs=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
[[ $rc -eq 0 ]] && json_check "$T/b.json" 'd["stopped"] and 0 < d["samples"] < 10000000' &&
  awk -v s="$secs" 'BEGIN { exit !(s <= 4 * 1.1 + 2) }'
check "bias --time-limit 4 on a 6 x 600 network: rc=$rc, $secs s, $(head -c 300 "$T/b.json")" $?

finish
