#!/usr/bin/env bash
# The Python package on the H200 (issues 18 and 21), one line for the device machine:
#   . .devroot/device-env.sh; bash hip/validate/python_h200.sh
# builds the library without tests into $BUILD (build-dev), then runs
# python/tests/gpu_check.py (eager, torch.compile, a Liger-style Triton kernel, one negative
# control) and hip/validate/invariance_h200.py (the four-judgment matrices); the second runs
# whatever the first gives. Output under $OUT (gpu_check.txt, invariance_h200.txt, inv/*.json).
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${BUILD:-build-dev}
O=${OUT:-.}
t0=$(date +%s)
[ -f "$B/build.ninja" ] || meson setup "$B" -Dtests=disabled > "$O/meson-setup.txt" 2>&1 || { cat "$O/meson-setup.txt"; exit 2; }
ninja -C "$B" > "$O/ninja.txt" 2>&1 || { tail -30 "$O/ninja.txt"; exit 2; }
echo "python_h200: built $B in $(( $(date +%s) - t0 )) s"
export PYTHONPATH=python NUMORACLE_LIB=$B/oracle/libnumoracle.so
python3 python/tests/gpu_check.py 2>&1 | tee "$O/gpu_check.txt"; rc1=${PIPESTATUS[0]}
python3 hip/validate/invariance_h200.py --out "$O/inv" 2>&1 | tee "$O/invariance_h200.txt"; rc2=${PIPESTATUS[0]}
echo "python_h200: gpu_check rc=$rc1, invariance_h200 rc=$rc2, $(( $(date +%s) - t0 )) s in all"
[ "$rc1" = 0 ] && [ "$rc2" = 0 ]
