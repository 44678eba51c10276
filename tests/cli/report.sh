#!/usr/bin/env bash
# HTML reports: fair/test/bias --html write one self-contained file (the run's JSON, the renderer and
# Vega inlined; no <script src>, <link> or @import), --report-json writes the envelope, and `witness report` turns
# the envelope or a plain --json document into the same kind of file. The browser check that every
# chart renders is web/tests/report.mjs (ctest web.report).
# Usage: report.sh WITNESS_EXE SOURCE_DIR
set -u
source "$(dirname "$0")/lib.bash"

AC1=$B/models/adult/AC1.h5
ADULT=$B/adult.toml

# self_contained FILE: an HTML document with the run's data and no reference to the network.
self_contained() {
  grep -q '<script type="application/json" id="witness-run">' "$1" &&
    ! grep -qiE '<script[^>]+src=|<link[^>]+href=|@import' "$1"
}

run_witness 120 "$T/fair.txt" fair "$AC1" --schema "$ADULT" --protected sex --html "$T/fair.html" \
  --report-json "$T/fair.json"
check "fair --html: exit $rc (want 10)" $([[ $rc -eq 10 ]]; echo $?)
self_contained "$T/fair.html"
check "fair --html is self-contained" $?
json_check "$T/fair.json" 'd["kind"] == "fair" and d["result"]["verdict"] == "witness" and d["text"].startswith("witness:") and len(d["pairs"]) >= 1 and d["schema"]["features"][0]["name"] == "age"'
check "fair --report-json: the envelope" $?
# The text in the envelope is what the terminal showed.
"$PY" -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["text"] == open(sys.argv[2]).read() else 1)' \
  "$T/fair.json" "$T/fair.txt"
check "fair --report-json: text equals the terminal output" $?

run_witness 60 "$T/out.txt" report "$T/fair.json" -o "$T/again.html"
check "report from the envelope: exit $rc" $rc
self_contained "$T/again.html"
check "report from the envelope is self-contained" $?

run_witness 120 "$T/test.json" test "$AC1" --schema "$ADULT" --protected sex --method random-pairs --budget 2000 --json \
  --html "$T/test.html"
check "test --html: exit $rc (want 10)" $([[ $rc -eq 10 ]]; echo $?)
self_contained "$T/test.html"
check "test --html is self-contained" $?
run_witness 60 "$T/out.txt" report "$T/test.json" -o "$T/test2.html"
check "report from a plain test --json: exit $rc" $rc

run_witness 120 "$T/bias.txt" bias "$AC1" --schema "$ADULT" --protected sex --samples 20000 --html "$T/bias.html"
check "bias --html: exit $rc" $rc
grep -q '"bias_percent"' "$T/bias.html"
check "bias --html holds the estimate" $?

# A report path that cannot be written: exit 2 naming it.
expect_input_error "fair --html into a missing folder" "no_such_dir/r.html" \
  "$W" fair "$AC1" --schema "$ADULT" --protected sex --html "$T/no_such_dir/r.html"
finish
