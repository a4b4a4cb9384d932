#!/usr/bin/env bash
# The H200 run of issue 22 (one device call): build, GPU-tier equality, CLI test, bench.
# usage (repo root of the unpacked tree): bash hip/results_run22.sh OUTDIR [full-test-seconds]
set -u
O="$1"; FT="${2:-0}"
t0=$(date +%s)
meson setup build-dev -Dgpu=cuda -Dtests=disabled -Dtoml=disabled -Dgtest=disabled -Dmpi=disabled >"$O/setup.log" 2>&1 || { tail -20 "$O/setup.log"; exit 1; }
ninja -C build-dev apps/numoracle hip/drivers/nmo_gpu_oracle_test hip/drivers/nmo_gpu_oracle_bench >"$O/ninja.log" 2>&1 || { grep -E "error" "$O/ninja.log" | head -20; exit 1; }
echo "build_s=$(( $(date +%s) - t0 ))" >"$O/build_time.txt"
T=build-dev/hip/drivers
cuobjdump --dump-resource-usage build-dev/hip/gpu_oracle.o 2>/dev/null | grep -E "Function|REG" | sed -e 's/^ *//' | paste - - | sed -E 's/.*Function ([^ :]*).*REG:([0-9]+).*SHARED:([0-9]+).*/\1 REG=\2 SHARED=\3/' >"$O/regs.txt" 2>&1
( time timeout 60 $T/nmo_gpu_oracle_test --quick ) >"$O/test_quick.txt" 2>&1; echo "rc=$?" >>"$O/test_quick.txt"
# the bench before the CLI test: its numbers are what a short device budget must keep
( time timeout 100 $T/nmo_gpu_oracle_bench --iters 5 ) >"$O/bench.txt" 2>&1; echo "rc=$?" >>"$O/bench.txt"
[ "${CLI:-1}" = 1 ] && { ( time timeout 30 bash hip/gpu_oracle_cli_test.sh build-dev/apps/numoracle ) >"$O/cli.txt" 2>&1; echo "rc=$?" >>"$O/cli.txt"; }
if [ "$FT" -gt 0 ]; then
    ( time timeout "$FT" $T/nmo_gpu_oracle_test ) >"$O/test_full.txt" 2>&1; echo "rc=$?" >>"$O/test_full.txt"
fi
cat "$O/build_time.txt"
echo "== quick"; grep -E "gpu_oracle_test:|RESULT|^rc=|^real" "$O/test_quick.txt" | tail -20
[ -f "$O/cli.txt" ] && { echo "== cli"; head -1 "$O/cli.txt"; }
echo "== regs"; cat "$O/regs.txt" | cut -c1-120
echo "== bench"; grep -E "^op=|^rc=|^real|error" "$O/bench.txt"
[ "$FT" -gt 0 ] && { echo "== full"; grep -E "gpu_oracle_test:|RESULT|^rc=|DIFF|progress" "$O/test_full.txt" | tail -6; }
exit 0
