#!/usr/bin/env bash
# The shipped golden data (bundles/), as `make test` checks it:
#   1. `numoracle verify bundles` is clean (exit 0, 0 errors);
#   2. `numoracle run --golden-data-dir bundles --tier quick --engine cpu` passes every
#      quick bundle: exit 0, no FAIL, no SKIP, no INCONCLUSIVE; every operator of
#      `numoracle ops` has one (or, undecidable at quick sizes, bundles in comprehensive/);
#   3. the same with a CPU mutant (cpu:mut_acc_bf16, a bf16 accumulator) fails the
#      affected cases with the RFC failure block (bundle, tensor, shape, max abs/rel
#      error with tolerance, worst element with its reachable set, mismatched count).
#   An operator with no committed quick bundle gets them generated here (gen_quick).
#
#   usage: bash tests/bundles_quick.sh path/to/numoracle path/to/bundles
set -u
NMO="$1"
B="$2"
out="$(mktemp)"
gout="$(mktemp)"
trap 'rm -f "$out" "$gout"' EXIT
bad=0
say() { echo "bundles_quick: $*"; }

# An operator registered after bundles/ was generated (no quick bundle committed): its
# quick bundles are generated here with generate.sh's command (each dtype, the first
# test shape, the first informative family) into a temporary root; they must verify and
# PASS with the correct CPU engine, and a mutant (mut_store_rz, else the first mutant
# without a plan of its own) must FAIL them. Adding an operator stays its three files;
# committing the bundles (bash bundles/generate.sh) is still asked for.
gen_quick() {
    local op=$1 root dt fs n=0 rc mut
    root="$(mktemp -d)"
    for dt in $("$NMO" ops --op "$op" | sed -n 's/^  dtypes: *//p'); do
        for fs in "gaussian 1" "shifted 1" "uniform 1"; do
            SOURCE_DATE_EPOCH=1767225600 "$NMO" golden --root "$root" --informative --op "$op" --dtype "$dt" \
                --shape test --name small --tier quick --family "${fs% *}" --seed "${fs#* }" >/dev/null 2>&1 &&
                { n=$((n + 1)); break; }
        done
    done
    "$NMO" verify "$root" >"$gout" 2>&1
    rc=$?
    if [ "$n" = 0 ] || [ $rc != 0 ] || ! tail -1 "$gout" | grep -q '; 0 errors, '; then
        say "op $op: no quick bundle committed, and $n generated here do not verify (exit $rc)"
        tail -5 "$gout"; rm -rf "$root"; return 1
    fi
    "$NMO" run --golden-data-dir "$root" --tier quick --engine cpu >"$gout" 2>&1
    rc=$?
    if [ $rc != 0 ] || [ "$(tail -2 "$gout" | head -1)" != "$n passed, 0 failed, 0 skipped" ] ||
        [ "$(tail -1 "$gout")" != "0 inconclusive" ]; then
        say "op $op: the $n quick bundles generated here do not pass with the CPU engine (exit $rc)"
        grep -v '^PASS ' "$gout" | head -20; rm -rf "$root"; return 1
    fi
    mut="$("$NMO" candidates --op "$op" | awk '$2 == "mutant" && $3 !~ /^plan=/ {print $1}')"
    printf '%s\n' "$mut" | grep -qx mut_store_rz && mut=mut_store_rz || mut="$(printf '%s\n' "$mut" | head -1)"
    "$NMO" run --golden-data-dir "$root" --tier quick --engine "cpu:$mut" >"$gout" 2>&1
    rc=$?
    if [ -z "$mut" ] || [ $rc != 1 ] || ! grep -q '^FAIL: ' "$gout"; then
        say "op $op: the negative control cpu:${mut:-(no mutant)} did not FAIL the generated bundles (exit $rc)"
        tail -3 "$gout"; rm -rf "$root"; return 1
    fi
    say "note: op $op has no committed quick bundle: $n generated here passed, cpu:$mut failed $(grep -c '^FAIL: ' "$gout") (commit them: bash bundles/generate.sh)"
    rm -rf "$root"
}

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
    elif [ -d "$B/quick/$operation" ]; then
        say "no passing quick bundle for op $op ($operation)"; bad=1
    else
        gen_quick "$op" || bad=1
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
