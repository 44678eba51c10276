#!/usr/bin/env bash
# Ctrl-C: the run stops as a time limit stops it, prints what it knows, exits 130 and leaves no
# temporary folders. The signal goes to the whole process group, as a terminal sends it.
set -u
source "$(dirname "$0")/lib.bash"

# interrupt DELAY OUT ARGS...: runs `witness ARGS...` in its own process group, sends SIGINT to the
# group after DELAY s; stdout to OUT, stderr to $T/err; sets rc and secs (from the signal to the exit).
interrupt() {
  local delay=$1 out=$2
  shift 2
  local result
  result=$("$PY" - "$delay" "$out" "$T/err" "$W" "$@" <<'PYEOF'
import os, signal, subprocess, sys, time
delay, out, err = float(sys.argv[1]), sys.argv[2], sys.argv[3]
with open(out, "w") as o, open(err, "w") as e:
    p = subprocess.Popen(sys.argv[4:], stdout=o, stderr=e, start_new_session=True)
    time.sleep(delay)
    sent = time.time()
    os.killpg(p.pid, signal.SIGINT)
    try:
        rc = p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = -1
print(rc, round(time.time() - sent, 2))
PYEOF
  )
  rc=${result% *}
  secs=${result#* }
}

# A long --quantify run: stopped within seconds, with the sound shares known so far.
interrupt 2 "$T/q.txt" fair "$B/models/adult/AC4.h5" --schema "$B/adult.toml" --protected sex --quantify --time-limit 120
[[ $rc -eq 130 ]] && grep -q "domain: certified" "$T/q.txt" && grep -q "interrupted" "$T/err" &&
  awk -v s="$secs" 'BEGIN { exit !(s < 15) }'
ok=$?  # before check: the message's $(...) would reset $?
check "fair --quantify interrupted: rc=$rc (want 130) after $secs s; $(head -c 300 "$T/q.txt") $(head -c 300 "$T/err")" $ok

# The same in JSON: one whole document, the shares in it.
interrupt 2 "$T/q.json" fair "$B/models/adult/AC4.h5" --schema "$B/adult.toml" --protected sex --quantify \
  --time-limit 120 --json
[[ $rc -eq 130 ]] && json_check "$T/q.json" 'd["verdict"] != "verified" and "certified" in d'
ok=$?  # before check: the message's $(...) would reset $?
check "fair --quantify --json interrupted: rc=$rc (want 130); $(head -c 300 "$T/q.json")" $ok

# Black-box testing: the pairs found before the signal are printed.
interrupt 2 "$T/t.txt" test "$B/models/adult/AC1.h5" --schema "$B/adult.toml" --protected sex --method random-pairs \
  --time-limit 120
[[ $rc -eq 130 ]] && grep -q "discriminatory" "$T/t.txt"
ok=$?  # before check: the message's $(...) would reset $?
check "test interrupted: rc=$rc (want 130); $(head -c 300 "$T/t.txt") $(head -c 300 "$T/err")" $ok

# A program query: the compiler and the replay get the signal too; no witness-program-* folder is left.
mkdir -p "$T/tmp"
for delay in 0.2 1; do
  TMPDIR=$T/tmp interrupt $delay "$T/p.txt" query "$SRC/examples/soid/car/queries.toml" \
    --program "$SRC/examples/soid/car/agent.c" --function decide
  left=$(find "$T/tmp" -maxdepth 1 -name 'witness-program-*' | wc -l)
  # -2: the signal came before main installed its handler (under the sanitizers start-up is slow);
  # nothing was started then either.
  [[ ($rc -eq 130 || $rc -eq 0 || $rc -eq -2) && $left -eq 0 ]]
  check "query --program interrupted after $delay s: rc=$rc (want 130; 0 when it had finished, -2 before it began), $left temp folders left" $?
done

finish
