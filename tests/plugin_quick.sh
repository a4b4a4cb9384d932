#!/usr/bin/env bash
# A real engine over the shipped quick tier, as CI runs it (issue 20):
#   1. `numoracle run --engine plugin:PLUGIN` over the quick tier: a case passes exactly
#      when the plugin's capability table offers a correct kernel for its operator and
#      dtype, every other case is a capability SKIP, nothing fails (plugin_offers.py,
#      computed from the table, not pinned); the plugin's mutant kernel fails its case;
#   2. with GTEST (the numoracle_gtest binary): the same engine passes exactly as many
#      GoogleTests as run's PASS lines, fails none, and the mutant fails under --gtest_filter.
#   usage: bash tests/plugin_quick.sh NUMORACLE PLUGIN BUNDLES [GTEST]
set -u
NMO="$1" P="$2" B="$3" G="${4:-}"
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
bad=0
say() { echo "plugin_quick: $*"; }

"$NMO" run --gd "$B" --tier quick --engine "plugin:$P" --json "$work/r.json" >"$work/run.txt" 2>&1
rc=$?
tail -2 "$work/run.txt"
[ $rc = 0 ] || { say "run exited $rc"; bad=1; }
/usr/bin/python3 "$here/cli/plugin_offers.py" "$NMO" "$P" "$work/r.json" || bad=1
"$NMO" run --gd "$B" --engine "plugin:$P:mut_mean_n1" --filter 'RmsNormFwd_nchw_fp32.small' >"$work/mut.txt" 2>&1
grep -qx '0 passed, 1 failed, 0 skipped' "$work/mut.txt" || { say "the plugin's mutant did not fail"; cat "$work/mut.txt"; bad=1; }

if [ -n "$G" ]; then
    n_run="$(grep -c '^PASS ' "$work/run.txt")"
    "$G" --golden-data-dir "$B" --tier quick --engine "plugin:$P" >"$work/g.txt" 2>&1
    grc=$?
    grep -E '^\[  (PASSED|FAILED)  \]' "$work/g.txt" | head -3
    grep -qx "\[  PASSED  \] $n_run tests\." "$work/g.txt" || { say "gtest passed count is not run's $n_run"; bad=1; }
    if [ $grc != 0 ] || grep -q '^\[  FAILED  \]' "$work/g.txt"; then say "gtest failed (exit $grc)"; bad=1; fi
    "$G" --golden-data-dir "$B" --engine "plugin:$P:mut_mean_n1" --gtest_filter=RmsNormFwd_nchw_fp32.small >"$work/gm.txt" 2>&1
    [ $? = 1 ] && grep -q '^\[  FAILED  \] RmsNormFwd_nchw_fp32.small' "$work/gm.txt" ||
        { say "the plugin's mutant did not fail under gtest"; cat "$work/gm.txt"; bad=1; }
fi
[ $bad = 0 ] && say "OK"
exit $bad
