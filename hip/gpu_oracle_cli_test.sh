#!/usr/bin/env bash
# numoracle check --oracle-device gpu (issue 22) against --oracle-device cpu: the same
# report line for line (the timing lines aside) for correct kernels and mutants, HIP
# kernels judged where they wrote their outputs, CPU candidates uploaded; a mutant must
# FAIL both ways (the control: a comparison of two empty reports would say nothing);
# a case the GPU tier does not cover and a bad value exit 2 with the reason.
#   usage: bash hip/gpu_oracle_cli_test.sh path/to/numoracle     (exit 0: all equal)
set -u
NMO="$1"
fail=0 n=0 fails=0
strip() { grep -v -E '^  (time|kernel time|device):'; }
for spec in "rms_norm:hip hip:mut_no_eps hip:mut_w_off1 cpu cpu:mut_store_rz" "swiglu:hip cpu cpu:mut_swap" \
    "softmax:hip hip:mut_skip_last cpu cpu:mut_store_rz" "layer_norm:hip cpu cpu:mut_no_eps"; do
op=${spec%%:*}
for dt in bf16 fp32; do
    for shape in 8x64 3x1025 5x3; do
        for cand in ${spec#*:}; do
            a=$("$NMO" check --op $op --dtype "$dt" --shape "$shape" --family gaussian --seed 3 \
                --candidate "$cand" --oracle-device cpu 2>&1); ra=$?
            b=$("$NMO" check --op $op --dtype "$dt" --shape "$shape" --family gaussian --seed 3 \
                --candidate "$cand" --oracle-device gpu 2>&1); rb=$?
            n=$((n + 1))
            if [ "$ra" != "$rb" ] || [ "$(printf '%s\n' "$a" | strip)" != "$(printf '%s\n' "$b" | strip)" ]; then
                echo "DIFF $op $dt $shape $cand: rc cpu=$ra gpu=$rb"
                diff <(printf '%s\n' "$a" | strip) <(printf '%s\n' "$b" | strip) | head -10
                fail=1
            fi
            case "$cand" in *mut_*) [ "$rb" = 1 ] && fails=$((fails + 1)) ;; esac
        done
    done
done
done
# a mutant's FAIL: at least the mut_no_eps / mut_w_off1 runs on the wider shapes
[ "$fails" -ge 4 ] || { echo "only $fails mutant runs FAIL"; fail=1; }
out=$("$NMO" check --op gelu --dtype bf16 --shape 8x64 --candidate cpu --oracle-device gpu 2>&1); rc=$?
[ "$rc" = 2 ] && printf '%s' "$out" | grep -q 'oracle-device gpu: the GPU tier covers' ||
    { echo "gelu: rc=$rc: $out"; fail=1; }
out=$("$NMO" check --op softmax --dtype fp32 --shape 3x1025 --plan acc=fp64 --candidate cpu --oracle-device gpu 2>&1); rc=$?
[ "$rc" = 2 ] && printf '%s' "$out" | grep -q 'softmax on the device needs acc=fp32' ||
    { echo "softmax acc=fp64: rc=$rc: $out"; fail=1; }
out=$("$NMO" check --op rms_norm --dtype bf16 --shape 8x64 --candidate cpu --oracle-device tpu 2>&1); rc=$?
[ "$rc" = 2 ] && printf '%s' "$out" | grep -q "expected cpu or gpu" || { echo "tpu: rc=$rc: $out"; fail=1; }
# a row longer than the declared geometry holds: refused (exit 2), as the CPU oracle refuses it
out=$("$NMO" check --op softmax --dtype fp32 --shape 3x1025 --plan sum=blocked:2:2 --candidate cpu --oracle-device gpu 2>&1); rc=$?
[ "$rc" = 2 ] && printf '%s' "$out" | grep -q "plan field 'sum' holds fewer terms" || { echo "softmax geometry capacity: rc=$rc: $out"; fail=1; }
out=$("$NMO" check --op rms_norm --dtype fp32 --shape 3x1025 --plan sum=blocked:2:2 --candidate cpu --oracle-device gpu 2>&1); rc=$?
[ "$rc" = 2 ] && printf '%s' "$out" | grep -q "plan field 'sum' holds fewer terms" || { echo "geometry capacity: rc=$rc: $out"; fail=1; }
echo "gpu_oracle_cli_test: $n comparisons, $fails mutant runs FAIL, result $([ $fail = 0 ] && echo PASS || echo FAIL)"
exit $fail
