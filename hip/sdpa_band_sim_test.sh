#!/usr/bin/env bash
# With -Dgpu=sim: the HIP sdpa kernels mask causally only, so they decline hipDNN's
# diagonal band (left_bound/right_bound, refs/sdpa.c): such a case is a SKIP, never a FAIL
# of a correct kernel (sdpa_supports in hip/kernels/sdpa.hip).
set -u
N="$1"
S='--op sdpa --dtype fp32 --shape 2x2x1x16x8'
v=$("$N" check $S --candidate hip | grep '^verdict:')
[ "$v" = "verdict: PASS" ] || { echo "sdpa_band_sim: no band: $v"; exit 1; }
for p in left_bound=4 right_bound=0; do
    v=$("$N" check $S --param "$p" --candidate hip | grep '^verdict:')
    [ "$v" = "verdict: SKIPPED" ] || { echo "sdpa_band_sim: $p: $v (want SKIPPED)"; exit 1; }
done
echo "sdpa_band_sim: ok"
