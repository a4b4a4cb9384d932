#!/usr/bin/env bash
# Soundness sweep over every registered operator, one process per operator (so a long
# operator cannot hit the test's timeout and the output says where time goes).
#   bash tests/soundness_sweep.sh [BUILD] [SEEDS] [LARGE]    (defaults: build 10 1)
# Prints the per-operator lines of test_soundness, then a total. Exit 1 on any FAIL or
# on an operator whose run did not finish (crash, error).
#   OPS="a b" bash tests/soundness_sweep.sh ...   restricts the sweep to those operators.
set -u
B=${1:-build}; SEEDS=${2:-10}; LARGE=${3:-1}
ops=${OPS:-$("$B/apps/numoracle" ops | awk '/^[a-z0-9_]+: /{sub(":","",$1); print $1}')}
total=0; fail=0; inc=0; status=0; errors=0; fams=""
for op in $ops; do
    t0=$(date +%s)
    out=$(NMO_OPS=$op NMO_SEEDS=$SEEDS NMO_LARGE=$LARGE "$B/tests/test_soundness" --timeout 14400 2>&1) || status=1
    line=$(grep '^soundness-op:' <<<"$out")
    [ -n "$line" ] || { echo "$op: no summary line"; echo "$out" | tail -5; status=1; errors=$((errors + 1)); continue; }
    echo "$line secs=$(( $(date +%s) - t0 ))"
    grep -q 'FALSE ALARM' <<<"$out" && grep 'FALSE ALARM' <<<"$out" | head -5
    r=$(sed -n 's/.*runs=\([0-9]*\).*/\1/p' <<<"$line"); f=$(sed -n 's/.*FAIL=\([0-9]*\).*/\1/p' <<<"$line")
    i=$(sed -n 's/.*INCONCLUSIVE=\([0-9]*\).*/\1/p' <<<"$line")
    total=$((total + r)); fail=$((fail + f)); inc=$((inc + i))
    fams="$fams $(sed -n 's/.*inc_by_family=\([^ ]*\).*/\1/p' <<<"$line")"
done
echo "soundness sweep: $total runs, $fail FAIL, $inc INCONCLUSIVE, $errors operators without a result (seeds=$SEEDS large=$LARGE)"
# INCONCLUSIVE runs per input family over all operators (each family is 1/7 of the runs)
tr ' ,' '\n\n' <<<"$fams" | awk -F: -v t="$total" 'NF == 2 {n[$1] += $2} END {
    printf "inconclusive by family:"; for (k in n) printf " %s %d (%.2f%%)", k, n[k], 700 * n[k] / (t ? t : 1); printf "\n" }'
[ "$fail" -eq 0 ] && exit $status || exit 1
