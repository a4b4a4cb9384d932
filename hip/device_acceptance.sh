#!/usr/bin/env bash
# The H200 acceptance run (device tool), in stages so each fits one 10-minute command:
#   bash hip/device_acceptance.sh build            configure + build build-gpu (sm_90)
#   bash hip/device_acceptance.sh odd [OPS]        every kernel x fp32/bf16/fp16 x 7 families x 5 seeds, odd + short shapes
#   bash hip/device_acceptance.sh small [OPS]      the same at the small (simulator) shapes
#   bash hip/device_acceptance.sh bench            bandwidth vs device-to-device copy, every correct variant
#   bash hip/device_acceptance.sh large SEC [OPS]  >= 16M-element shapes, bf16, 5 seeds, stop starting cases after SEC
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
    $B/hip/drivers/nmo_gpu_test --shapes $stage --seeds 5 ${ops:+--ops "$ops"} --log "$OUT/$stage.csv" >"$f" 2>&1
    rc=$?; grep -E "^summary|^RESULT|FALSE|NO$" "$f" | head -30; echo "$stage rc=$rc" ;;
bench)
    $B/hip/drivers/nmo_gpu_bench --dtypes bf16 --all >"$OUT/gpu_bench.txt" 2>&1
    rc=$?; grep -E "copy_d2d|default=1|best=1" "$OUT/gpu_bench.txt"; echo "bench rc=$rc" ;;
large)
    sec=$1; ops=${2:-}
    $B/hip/drivers/nmo_gpu_test --shapes large --seeds 5 --dtypes bf16 --time-budget "$sec" \
        ${ops:+--ops "$ops"} --log "$OUT/large.csv" >"$OUT/gpu_test_large${ops:+_part}.txt" 2>&1
    rc=$?; grep -E "^summary|^RESULT|FALSE|cases" "$OUT/gpu_test_large${ops:+_part}.txt" | tail -8; echo "large rc=$rc" ;;
esac
