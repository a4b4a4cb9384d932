#!/usr/bin/env bash
# Issue 17 on the GPU: the HIP row kernels (rms_norm, fused_add_rms_norm, layer_norm,
# softmax, log_softmax, cross_entropy, kl_div, jsd) judged under the reduction geometry
# each launch declares (hip/kernels/kcommon.h nmo_k_row_geometry, plugin ABI 2) and under
# `any`: nmo_gpu_test --geometry declared|any (correct kernels: 0 FAIL; mutants caught
# under each), then kl_div / jsd at 4096x4096 (one 16.8M-term reduction) through
# `numoracle check --candidate hip:K` under the declared geometry and under sum=any, side
# by side with the gpu tests. Short tables last; logs in $OUT.
#
#   . .devroot/device-env.sh
#   meson setup build-dev -Dgpu=cuda -Dtests=disabled && ninja -C build-dev
#   OUT=out bash hip/validate/geom3_h200.sh        (B=build-dev SHAPES=odd SHAPE=4096x4096)
#
# On the CPU simulator: B=build-sim SHAPES=small SHAPE=8x1025 JOBS=2.
set -u
OUT=${OUT:-out}; mkdir -p "$OUT"
B=${B:-build-dev}
T=$B/hip/drivers/nmo_gpu_test
N=$B/apps/numoracle
SHAPES=${SHAPES:-odd}
SHAPE=${SHAPE:-4096x4096}
TMO=${TMO:-75}
BUDGET=${BUDGET:-40}
JOBS=${JOBS:-10}
OPS=${OPS:-rms_norm,fused_add_rms_norm,layer_norm,softmax,log_softmax,cross_entropy,kl_div,jsd}
KERNELS=${KERNELS:-"kl_div:block256 kl_div:mut_acc_bf16 jsd:block256 jsd:mut_acc_bf16"}
[ -x "$T" ] && [ -x "$N" ] || { echo "no $T or $N: build first (see the header)"; exit 2; }
t0=$(date +%s)
# the 4096x4096 checks: one process each (a scalar loss is one oracle unit), in the background
for ok in $KERNELS; do
    op=${ok%%:*}; k=${ok#*:}
    for dt in fp32 bf16; do
        for pl in geom any; do
            f=$OUT/chk/${op}_${k}_${dt}_${pl}; mkdir -p "$OUT/chk"
            if [ $pl = any ]; then set -- --plan sum=any; else set --; fi
            ( timeout -s KILL "$TMO" nice "$N" check --op "$op" --dtype "$dt" --shape "$SHAPE" --candidate "hip:$k" \
                  "$@" >"$f.txt" 2>&1; echo "rc=$?" >>"$f.txt" ) &
        done
    done
done
for g in declared any; do
    timeout -s KILL $((BUDGET + 60)) "$T" --ops "$OPS" --shapes "$SHAPES" --seeds 1 --jobs "$JOBS" --geometry $g \
        --time-budget "$BUDGET" --log "$OUT/gpu_$g.csv" >"$OUT/gpu_$g.txt" 2>&1
    echo "rc=$?" >>"$OUT/gpu_$g.txt"
done
wait
echo "== nmo_gpu_test --ops $OPS --shapes $SHAPES --seeds 1 (correct kernels: FAIL = false alarm)"
for g in declared any; do
    echo "-- --geometry $g: $(grep -E '^summary:' "$OUT/gpu_$g.txt") $(grep -E '^geometry:' "$OUT/gpu_$g.txt" | sed 's/^geometry: [a-z]*; //') $(tail -2 "$OUT/gpu_$g.txt" | head -1)"
done
# per mutant: caught under each (the csv: op,kernel,role,dtype,shape,family,seed,verdict,...)
echo "mutants caught only under one of the two:"
for g in declared any; do
    awk -F, '$3=="mutant" && $8=="FAIL" {print $1"/"$2}' "$OUT/gpu_$g.csv" | sort -u >"$OUT/caught_$g.lst"
    awk -F, '$3=="mutant" {print $1"/"$2}' "$OUT/gpu_$g.csv" | sort -u >"$OUT/mut_$g.lst"
done
comm -23 "$OUT/caught_declared.lst" "$OUT/caught_any.lst" | sed 's/^/  declared only: /'
comm -13 "$OUT/caught_declared.lst" "$OUT/caught_any.lst" | sed 's/^/  any only: /'
echo "mutants caught: declared $(wc -l <"$OUT/caught_declared.lst")/$(wc -l <"$OUT/mut_declared.lst"), any $(wc -l <"$OUT/caught_any.lst")/$(wc -l <"$OUT/mut_any.lst")"
echo "correct-kernel FAIL runs: declared $(awk -F, '$3=="correct" && $8=="FAIL"' "$OUT/gpu_declared.csv" | wc -l), any $(awk -F, '$3=="correct" && $8=="FAIL"' "$OUT/gpu_any.csv" | wc -l)"
echo "== numoracle check --shape $SHAPE --candidate hip:K"
printf "%-7s %-13s %-5s %-4s %-26s %-13s %s\n" op kernel dtype plan sum verdict "worst element"
for ok in $KERNELS; do
    op=${ok%%:*}; k=${ok#*:}
    for dt in fp32 bf16; do
        for pl in geom any; do
            f=$OUT/chk/${op}_${k}_${dt}_${pl}.txt
            sum=$(sed -n 's/^plan: .* \(sum=[^ ]*\) .*/\1/p' "$f" | head -1)
            v=$(sed -n 's/^verdict: //p' "$f" | head -1)
            r=$(sed -n 's/.*candidate \([^,]*\), R = \(\[[^]]*\]\).*/\1 in \2/p' "$f" | head -1)
            [ -n "$v" ] || v="ERROR($(sed -n 's/^rc=//p' "$f"))"
            printf "%-7s %-13s %-5s %-4s %-26s %-13s %s\n" "$op" "$k" "$dt" "$pl" "${sum:--}" "$v" "${r:--}"
        done
    done
done
echo "geom3_h200: $(( $(date +%s) - t0 )) s; $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
