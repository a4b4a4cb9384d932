#!/usr/bin/env bash
# A campaign killed with SIGKILL midway and restarted ends with the same report as an
# uninterrupted run, with no duplicated and no lost runs.
#
#   usage: bash tests/campaign/kill_resume.sh path/to/numoracle
#
# 1. run the campaign uninterrupted (journal A);
# 2. start it again on journal B, SIGKILL the campaign process once a third of A's lines
#    are in B, check that its workers and mutant children died with it;
# 3. restart on journal B until it finishes;
# 4. report.json of A and B must be byte-identical; the run ids of B must be unique and
#    exactly those of A; the restart must have run the missing runs (not zero).
set -u
if [ $# -lt 1 ] || [ ! -x "$1" ]; then
    echo "usage: bash tests/campaign/kill_resume.sh path/to/numoracle" >&2
    exit 2
fi
NMO="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
work="$(mktemp -d "${TMPDIR:-/tmp}/nmo-kill-resume.XXXXXX")"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

cat >"$work/c.json" <<EOF
{
  "name": "kill-resume",
  "operators": "all",
  "dtypes": ["bf16"],
  "families": {"main": ["gaussian", "small"], "shifted": ["large", "near_degenerate"]},
  "seeds": [1, 2],
  "mutant_seeds": [1],
  "mutants": {"max_per_op": 6},
  "calibration": {"seeds": [1001, 1002]},
  "timeout": 5,
  "workers": 2,
  "work_dir": "$work/wd"
}
EOF

cd "$work" || exit 2
echo "== uninterrupted run (journal A)"
"$NMO" campaign --config c.json --journal A.jsonl --out A --progress off >A.log 2>&1 || { cat A.log; fail "uninterrupted run"; }
total=$(wc -l <A.jsonl)
runs_a=$(grep -c '"type":"run"' A.jsonl)
echo "   $total journal lines, $runs_a runs"

echo "== interrupted run (journal B): SIGKILL after a third of the lines"
"$NMO" campaign --config c.json --journal "$work/B.jsonl" --out B --progress off >B1.log 2>&1 &
pid=$!
target=$((total / 3))
for _ in $(seq 1 6000); do
    n=$(cat B.jsonl 2>/dev/null | wc -l)
    [ "$n" -ge "$target" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.02
done
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
at_kill=$(wc -l <B.jsonl)
echo "   killed pid $pid with $at_kill of $total lines journaled"
[ "$at_kill" -lt "$total" ] || fail "the campaign finished before it could be killed (test too small?)"
# workers and mutant children die with the campaign (PR_SET_PDEATHSIG)
for _ in $(seq 1 100); do
    left=$(pgrep -f -- "--journal $work/B.jsonl" | wc -l)
    [ "$left" -eq 0 ] && break
    sleep 0.05
done
[ "$left" -eq 0 ] || fail "$left processes of the killed campaign still running"

echo "== restart on journal B"
"$NMO" campaign --config c.json --journal "$work/B.jsonl" --out B --progress off >B2.log 2>&1 || { cat B2.log; fail "restart"; }
grep -E '^campaign: [0-9]+ runs planned' B2.log
ran=$(sed -n 's/.* already journaled, \([0-9]*\) run now.*/\1/p' B2.log)
[ -n "$ran" ] && [ "$ran" -gt 0 ] || fail "the restart ran nothing"

echo "== compare"
ids() { grep -E '"type":"(run|probe)"' "$1" | sed 's/^{"type":"[a-z]*","id":"\([^"]*\)".*/\1/' | sort; }
ids A.jsonl >ids.A
ids B.jsonl >ids.B
dups=$(uniq -d ids.B | wc -l)
[ "$dups" -eq 0 ] || fail "$dups run ids journaled twice in B: $(uniq -d ids.B | head -3)"
cmp -s ids.A ids.B || fail "run ids differ: $(diff ids.A ids.B | head -5)"
cmp -s A/report.json B/report.json || { diff A/report.json B/report.json | head -20; fail "report.json differs"; }
cmp -s A/report.md B/report.md || fail "report.md differs"
echo "ok: $(wc -l <ids.B) runs, none lost, none duplicated, identical reports"
