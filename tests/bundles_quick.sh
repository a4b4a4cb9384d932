#!/usr/bin/env bash
# The shipped golden data (bundles/), as `make test` checks it:
#   1. `numoracle verify bundles` is clean (exit 0, 0 errors);
#   2. `numoracle run --golden-data-dir bundles --tier quick --engine cpu` passes every
#      quick bundle: exit 0, no FAIL, no SKIP, no INCONCLUSIVE; every operator of
#      `numoracle ops` has one (or, undecidable at quick sizes, bundles in comprehensive/);
#   3. the same with a CPU mutant (cpu:mut_acc_bf16, a bf16 accumulator) fails the
#      affected cases with the RFC failure block (bundle, tensor, shape, max abs/rel
#      error with tolerance, worst element with its reachable set, mismatched count).
#
#   usage: bash tests/bundles_quick.sh path/to/numoracle path/to/bundles
set -u
NMO="$1"
B="$2"
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
bad=0
say() { echo "bundles_quick: $*"; }

"$NMO" verify "$B" >"$out" 2>&1
rc=$?
tail -1 "$out"
if [ $rc != 0 ] || ! tail -1 "$out" | grep -q '; 0 errors, '; then say "verify is not clean"; cat "$out"; bad=1; fi

"$NMO" run --golden-data-dir "$B" --tier quick --engine cpu >"$out" 2>&1
rc=$?
tail -2 "$out"
n="$(grep -c '^PASS ' "$out")"
if [ $rc != 0 ] || [ "$(tail -2 "$out" | head -1)" != "$n passed, 0 failed, 0 skipped" ] ||
    [ "$(tail -1 "$out")" != "0 inconclusive" ] || [ "$n" -lt 5 ]; then
    say "the quick tier does not pass with the correct CPU engine (exit $rc)"; grep -v '^PASS ' "$out" | head -40; bad=1
fi
# every operator has quick bundles (numoracle ops lists them)
for op in $("$NMO" ops | sed -n 's/^\([a-z0-9_]*\): .*/\1/p'); do
    # RFC 0011 Operation (nmo_op_operation): direction suffix, the phase after it
    operation="$(printf '%s' "$op" | sed -E 's/_bwd$//; s/_inference$//; s/(^|_)([a-z])/\U\2/g')$(case "$op" in *_bwd) echo Bwd ;; *_inference) echo FwdInference ;; *) echo Fwd ;; esac)"
    grep -q "^PASS ${operation}_" "$out" && continue
    # generate.sh moves bundles that no tried input makes decidable to comprehensive/
    if [ -d "$B/comprehensive/$operation" ]; then
        say "note: op $op has bundles in comprehensive/ only (undecidable at quick sizes)"
    else
        say "no passing quick bundle for op $op ($operation)"; bad=1
    fi
done

"$NMO" run --golden-data-dir "$B" --tier quick --engine cpu:mut_acc_bf16 >"$out" 2>&1
rc=$?
tail -2 "$out"
if [ $rc != 1 ]; then say "the mutant run exited $rc, expected 1"; bad=1; fi
# the block of the rms_norm bf16 bundle, line by line, in order
want=(
    '^FAIL: RmsNormFwd_nchw_bfp16\.small$'
    '^  Bundle: .*/quick/RmsNormFwd/nchw/bfp16/small/small\.json$'
    '^  Engine: cpu:mut_acc_bf16  reference: golden \(stored certified bounds\)  acceptance: oracle$'
    '^  Tensor: y \(UID 2, output\)$'
    '^  Shape:  \[[0-9, ]+\]  bf16$'
    '^  Oracle: FAIL  [1-9][0-9]* of [0-9]+ elements outside the reachable set R, 0 inconclusive$'
    '^  Max absolute error: [0-9.e+-]+  \(tolerance: [0-9.e+-]+, bundle\)$'
    '^  Max relative error: [0-9.e+-]+  \(tolerance: [0-9.e+-]+\)$'
    '^  Worst element: index \[[0-9, ]+\]  expected: [-0-9.e+]+  actual: [-0-9.e+]+  R = \[[-0-9.e+]+, [-0-9.e+]+\], outside by [0-9]+ ulps?$'
    '^  Mismatched elements: [0-9]+ / [0-9]+ \([0-9.]+%\)$'
)
start="$(grep -n '^FAIL: RmsNormFwd_nchw_bfp16\.small$' "$out" | cut -d: -f1)"
if [ -z "$start" ]; then
    say "no failure block for RmsNormFwd_nchw_bfp16.small"; bad=1
else
    for i in "${!want[@]}"; do
        line="$(sed -n "$((start + i))p" "$out")"
        printf '%s\n' "$line" | grep -Eq -- "${want[$i]}" || { say "block line $i: '$line' does not match ${want[$i]}"; bad=1; }
    done
    sed -n "${start},$((start + 10))p" "$out"
fi
nfail="$(grep -c '^FAIL: RmsNormFwd_' "$out")"
[ "$nfail" -ge 3 ] || { say "only $nfail rms_norm cases failed under the mutant"; bad=1; }
[ $bad = 0 ] && say "ok"
exit $bad
