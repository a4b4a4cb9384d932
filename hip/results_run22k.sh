#!/usr/bin/env bash
# The H200 run of issue 22's softmax/layer_norm step (session 6, helper 22k; one device
# call): build, the GPU-tier equality test (--quick: all four operators), the bench (all
# four operators at 4096x4096 and 8192x8192, bf16 and fp32). The CLI comparison runs in
# the simulator (gpu_oracle_cli_sim), not here, to keep the call short.
# usage (repo root of the unpacked tree): bash hip/results_run22k.sh OUTDIR
set -u
O="$1"
meson setup build-dev -Dgpu=cuda -Dtests=disabled -Dtoml=disabled -Dgtest=disabled -Dmpi=disabled >"$O/setup.log" 2>&1 || { tail -20 "$O/setup.log"; exit 1; }
( time ninja -C build-dev hip/drivers/nmo_gpu_oracle_test hip/drivers/nmo_gpu_oracle_bench ) >"$O/ninja.log" 2>&1 || { grep -E "error" "$O/ninja.log" | head -20; exit 1; }
T=build-dev/hip/drivers
cuobjdump --dump-resource-usage build-dev/hip/gpu_oracle.o 2>/dev/null | grep -E "Function|REG" | sed -e 's/^ *//' | paste - - | sed -E 's/.*Function ([^ :]*).*REG:([0-9]+).*SHARED:([0-9]+).*/\1 REG=\2 SHARED=\3/' >"$O/regs.txt" 2>&1
( time timeout 90 $T/nmo_gpu_oracle_test --quick ) >"$O/test_quick.txt" 2>&1; echo "rc=$?" >>"$O/test_quick.txt"
( time timeout 150 $T/nmo_gpu_oracle_bench --iters 5 ) >"$O/bench.txt" 2>&1; echo "rc=$?" >>"$O/bench.txt"
echo "== build"; grep real "$O/ninja.log"
echo "== quick"; grep -E "op=|RESULT|^rc=|^real|DIFF" "$O/test_quick.txt" | head -24
echo "== regs"; cut -c1-100 "$O/regs.txt" | grep -E "smx|ln_" 
echo "== bench"; grep -E "^op=|^rc=|^real|error" "$O/bench.txt" | cut -c1-330
exit 0
