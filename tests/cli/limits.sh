#!/usr/bin/env bash
# Every limit holds on a wide network, where one batch, one gradient or one solver call is long:
# `test` (each method), `fair` (each engine) and `bias` end by --time-limit + 10% + 2 s (a limit
# of 1 s: long enough to load the network and start); and
# --memory-limit stops a run whose tests or regions pile up, at the limit + 10%. Timed, so
# it runs in the Release pass only (label plain): under the sanitizers loading the network alone
# takes most of the limit.
set -u
source "$(dirname "$0")/lib.bash"

/usr/bin/python3 "$SRC/tools/make_wide_network.py" "$T/wide" --layers 6 --width 600 >/dev/null 2>&1

# timed OUT CMD ARGS...: `witness CMD wide.nnet --schema wide.toml ARGS... --time-limit 1 --json`,
# the JSON to OUT; sets rc, secs (wall) and on_time (0 when it ended within 1 s + 10% + 2 s).
timed() {
  local out=$1 cmd=$2
  shift 2
  local start=$EPOCHREALTIME
  run_witness 60 "$out" "$cmd" "$T/wide/wide.nnet" --schema "$T/wide/wide.toml" "$@" --time-limit 1 --json
  secs=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
  awk -v s="$secs" 'BEGIN { exit !(s <= 1 * 1.1 + 2) }'
  on_time=$?
}

# --time-limit holds on a wide network, where one batch or one gradient is long (SymbGen ran 75 s
# and 12.5 GB, ADF 29 s on a 10 x 1000 network with --time-limit 5).
for m in symbgen adf aequitas themis; do
  timed "$T/w.json" test --method "$m"
  [[ $on_time -eq 0 && ($rc -eq 0 || $rc -eq 10) ]] &&
    json_check "$T/w.json" 'd["stopped"] in ("time limit", "exhausted")'
  ok=$?  # before check: the message's $(...) would reset $?
  check "$m --time-limit 1 on a 6 x 600 network: rc=$rc, $secs s, $(head -c 200 "$T/w.json") $(head -c 200 "$T/err")" $ok
done
# And `fair`: every engine answers in time (Z3 may ignore its interrupt while it takes in a wide
# network's encoding: the command then prints what it knows and ends, exit 20).
for e in concolic dual smt complete; do
  timed "$T/f.json" fair --engine "$e"
  [[ $on_time -eq 0 && ($rc -eq 10 || $rc -eq 20) ]] &&
    json_check "$T/f.json" 'd["verdict"] in ("witness", "inconclusive")'
  ok=$?  # before check: the message's $(...) would reset $?
  check "fair --engine $e --time-limit 1 on a 6 x 600 network: rc=$rc, $secs s, $(head -c 200 "$T/f.json")" $ok
done
# And `bias` (10 million samples would take minutes here): stopped by the limit, on the samples drawn.
timed "$T/b.json" bias --samples 10000000
[[ $on_time -eq 0 && $rc -eq 0 ]] && json_check "$T/b.json" 'd["stopped"] and 0 < d["samples"] < 10000000'
ok=$?  # before check: the message's $(...) would reset $?
check "bias --time-limit 1 on a 6 x 600 network: rc=$rc, $secs s, $(head -c 300 "$T/b.json")" $ok

# peak OUT ARGS...: `witness ARGS... --json` (at most 60 s), stdout to OUT; sets rc and mib, the
# largest resident size the process reached (MiB).
peak() {
  local out=$1
  shift
  mib=$(/usr/bin/python3 -c 'import resource, subprocess, sys
r = subprocess.run(sys.argv[2:], stdout=open(sys.argv[1], "w"), stderr=subprocess.DEVNULL, timeout=60)
print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)' "$out" "$W" "$@" --json)
  rc=${mib% *}
  mib=${mib#* }
}
# --memory-limit: without a budget the black-box methods keep every test they ran (themis reached
# 1 GB in 10 s on AC1); with 150 MiB they stop there, within 10%, and report what they found.
for m in themis aequitas adf; do
  peak "$T/m.json" test "$B/models/adult/AC1.h5" --schema "$B/adult.toml" --protected sex --method "$m" \
    --budget 0 --time-limit 50 --memory-limit 150
  [[ $rc -eq 10 && $mib -le 165 ]] && json_check "$T/m.json" 'd["stopped"] == "memory limit" and d["generated"] > 0'
  ok=$?  # before check: the message's $(...) would reset $?
  check "$m --memory-limit 150 on AC1: rc=$rc, peak $mib MiB, $(head -c 200 "$T/m.json")" $ok
done
# And the complete engine's open regions: the search stops at the limit and says so, early enough
# that gathering its open regions into the answer stays within it too (that once peaked at 78 MiB).
peak "$T/q.json" fair "$B/models/adult/AC4.h5" --schema "$B/adult.toml" --protected sex --quantify \
  --time-limit 50 --memory-limit 60
[[ $rc -eq 10 && $mib -le 66 ]] && json_check "$T/q.json" 'd["reason"].startswith("memory limit:") and d["undecided"] > 0'
ok=$?  # before check: the message's $(...) would reset $?
check "fair --quantify --memory-limit 60 on AC4: rc=$rc, peak $mib MiB, $(head -c 200 "$T/q.json")" $ok

finish
