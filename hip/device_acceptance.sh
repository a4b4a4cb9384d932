#!/usr/bin/env bash
# The H200 acceptance run (device tool), in stages so each fits one 10-minute command:
#   bash hip/device_acceptance.sh build            configure + build build-gpu (sm_90)
#   bash hip/device_acceptance.sh odd [OPS]        every kernel x fp32/bf16/fp16 x 7 families x 5 seeds, odd + short shapes
#                                                 (NMO_TB=SEC: start no case after SEC seconds)
#   bash hip/device_acceptance.sh small [OPS]      the same at the small (simulator) shapes
#   bash hip/device_acceptance.sh bench            bandwidth vs device-to-device copy, every correct variant
#   bash hip/device_acceptance.sh large SEC [OPS]  >= 16M-element shapes, bf16 (NMO_DT=fp32,fp16: others), 5 seeds,
#                                                 stop starting cases after SEC
#   bash hip/device_acceptance.sh groups END G1 G2 ...  `large` for each group of ops (a,b,c) in turn
#                                                 (cheap groups first), each killed at END seconds after
#                                                 the stage began; one large.csv and one
#                                                 gpu_test_large.txt for all (the device tool returns 8 files)
# Logs go to $OUT (or ./out). Source .devroot/device-env.sh first (see hip/README.md).
set -u
OUT=${OUT:-out}; mkdir -p "$OUT"
B=build-gpu
stage=$1; shift
case $stage in
build)
    [ -f $B/build.ninja ] || meson setup $B -Dgpu=cuda -Dtests=disabled -Dblas=disabled >"$OUT/setup.log" 2>&1 \
        || { tail -30 "$OUT/setup.log"; exit 2; }
    ninja -C $B >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 2; } ;;
odd|small)
    ops=${1:-}; f="$OUT/gpu_test_$stage${ops:+_part}.txt"
    $B/hip/drivers/nmo_gpu_test --shapes $stage --seeds 5 ${ops:+--ops "$ops"} ${NMO_TB:+--time-budget $NMO_TB} \
        --log "$OUT/$stage.csv" >"$f" 2>&1
    rc=$?; grep -E "^summary|^RESULT|FALSE|NO$" "$f" | head -30; echo "$stage rc=$rc" ;;
bench)
    $B/hip/drivers/nmo_gpu_bench --dtypes bf16 --all >"$OUT/gpu_bench.txt" 2>&1
    rc=$?; grep -E "copy_d2d|default=1|best=1" "$OUT/gpu_bench.txt"; echo "bench rc=$rc" ;;
large)
    sec=$1; ops=${2:-}
    $B/hip/drivers/nmo_gpu_test --shapes large --seeds 5 --dtypes ${NMO_DT:-bf16} --time-budget "$sec" \
        ${ops:+--ops "$ops"} --log "$OUT/large.csv" >"$OUT/gpu_test_large${ops:+_part}.txt" 2>&1
    rc=$?; grep -E "^summary|^RESULT|FALSE|cases" "$OUT/gpu_test_large${ops:+_part}.txt" | tail -8; echo "large rc=$rc" ;;
groups)
    end=$1; shift; t0=$(date +%s); : >"$OUT/gpu_test_large.txt"; first=1
    for g in "$@"; do
        left=$(( end - ($(date +%s) - t0) )); [ $left -lt 30 ] && { echo "== $g: no time left"; continue; }
        d=$(mktemp -d); echo "== $g (at $(( $(date +%s) - t0 )) s, $left s left)" | tee -a "$OUT/gpu_test_large.txt"
        OUT=$d timeout -s KILL $left bash "$0" large $(( left - 30 )) "$g"
        cat "$d"/gpu_test_large_part.txt >>"$OUT/gpu_test_large.txt" 2>/dev/null
        if [ -f "$d/large.csv" ]; then
            # a group killed at END can leave half a line: drop a last line without its
            # newline, keep records with as many fields as the header (a cut line must not
            # swallow the next group's first line)
            [ -n "$(tail -c 1 "$d/large.csv")" ] && sed -i '$d' "$d/large.csv"
            awk -F, -v first=$first 'NR == 1 { nf = NF; if (first == 1) print; next } NF == nf' \
                "$d/large.csv" >>"$OUT/large.csv"; first=0
        fi
        rm -rf "$d"
    done ;;
esac
