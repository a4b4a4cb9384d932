#!/bin/sh
# The device script end to end on this machine with the stand-in (standin/README.md):
# slice 1 cut by its budget, then slice 2 on a "fresh machine" resumed from slice 1's
# journal as brought back from OUT; checks the files under OUT, the resumption, the
# hang and the reports.   sh standin/test_standin.sh BUILD_DIR   (from triton/)
set -eu
T=$(cd "$(dirname "$0")/.." && pwd)
ROOT=$(cd "$T/../../.." && pwd)
B=${1:-$ROOT/build}
export PYTHONPATH="$ROOT/python:$T/standin" NUMORACLE_LIB="$B/oracle/libnumoracle.so"
export NMO_TRITON_ADAPTERS=adapters CFG=standin/campaign_standin.json PY=${PY:-/usr/bin/python3}
W=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT
export RESUME_DIR="$W/resume"
mkdir -p "$RESUME_DIR"
rm -rf "$T/out/standin.jsonl" "$T/out/standin-work"
fail() { echo "FAIL: $*"; cat "$W"/*/summary.txt 2>/dev/null; exit 1; }

# slice 1 is cut by count (MAX_MUTANTS), not only by its 4 s budget: on a fast machine every
# mutant but the hung one finishes inside 4 s, and the cut must not depend on the machine
(cd "$ROOT" && MAX_MUTANTS=3 sh "$T/device_slice3.sh" "$W/1" 4 2 0) > "$W/1.txt" 2>&1 || fail "slice 1 exit $?"
for f in campaign.log journal.jsonl.gz summary.txt report/report.json report/report.md; do
    [ -s "$W/1/$f" ] || fail "slice 1: no $f under OUT"
done
grep -q "reached.*: stopping" "$W/1/campaign.log" || fail "slice 1 was not cut by its budget or mutant limit"
n1=$(gunzip -c "$W/1/journal.jsonl.gz" | grep -c '"t": "mstatus"' || true)

# a fresh machine: no local journal; the journal comes from the committed copy
cp "$W/1/journal.jsonl.gz" "$RESUME_DIR/journal.jsonl.gz"
rm -rf "$T/out/standin.jsonl" "$T/out/standin-work"
(cd "$ROOT" && sh "$T/device_slice3.sh" "$W/2" 300 0 0) > "$W/2.txt" 2>&1 || fail "slice 2 exit $?"
grep -q "^resumed " "$W/2.txt" || fail "slice 2 did not resume from the committed journal"
grep -q "reached.*: stopping" "$W/2/campaign.log" && fail "slice 2 was cut"
n2=$(gunzip -c "$W/2/journal.jsonl.gz" | grep -c '"t": "mstatus"')
[ "$n2" -gt "$n1" ] || fail "slice 2 added no mutant ($n1 -> $n2)"
$PY - "$W/2/report/report.json" "$n1" <<'P' || fail "report"
import json, sys
r = json.load(open(sys.argv[1]))
m, fa = r["mutants"], r["false_alarms"]
assert m["not_run"] == 0, m
assert fa["correct"]["runs_main"] == (2 * 2 + 1) * 4 * 2, fa["correct"]   # (dtype x shape) x seeds x families
assert fa["behaviour_preserving"]["variants"] == 1, fa["behaviour_preserving"]
states = {x["id"]: x["state"] for x in r["mutant_list"]}
assert "hang" in states.values(), "no hang: the timeout was not exercised"
assert all(x["state"] == "null_ok" for x in r["null_controls"]), r["null_controls"]
assert fa["correct"]["numoracle"]["main"] == 0 and fa["correct"]["numoracle"]["shifted"] == 0, fa
print(f"standin: {m['total']} mutants ({m['effective_main']} effective main, {m['stillborn']} stillborn, "
      f"{m['hang']} hung, {m['error']} errors), detected by numoracle {r['detection_main']['detected']['numoracle']}, "
      f"{fa['correct']['runs_main']} + {fa['correct']['runs_shifted']} correct runs, 0 false alarms; resumed after "
      f"{sys.argv[2]} mutants")
P
ls "$W/2" "$W/2/report" | grep -c . > /dev/null

# slice 3: one operator judged again (REJUDGE, as after an engine change only it reaches):
# its records are dropped and rerun, the other operator's kept; the report is unchanged
OP=$($PY -c 'import json, sys; print(json.load(open(sys.argv[1]))["operators"][0]["op"])' "$T/$CFG")
cp "$W/2/journal.jsonl.gz" "$RESUME_DIR/journal.jsonl.gz"
rm -rf "$T/out/standin.jsonl" "$T/out/standin-work"
(cd "$ROOT" && OPS=$OP REJUDGE=1 sh "$T/device_slice3.sh" "$W/3" 300 0 0) > "$W/3.txt" 2>&1 || fail "slice 3 exit $?"
grep -q "^rejudge: dropped [1-9][0-9]* records of $OP" "$W/3/campaign.log" "$W/3.txt" || fail "slice 3 dropped nothing"
$PY - "$W/2/report/report.json" "$W/3/report/report.json" <<'P' || fail "rejudged report differs"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert a["mutants"] == b["mutants"] and a["detection_main"] == b["detection_main"], (a["mutants"], b["mutants"])
assert a["false_alarms"]["correct"] == b["false_alarms"]["correct"]
print("standin: rejudged one operator, the same report")
P
echo "standin device script: ok"
