#!/usr/bin/env bash
# Issue 22's whole H200 evidence in one device call (the earlier results_run22{,k,m}.sh did
# one part each): one build (cuBLAS for the matmul bench when present), then the GPU tier's
# equality tests (rows quick, matmul quick + large), the CLI test, both benchmarks and the
# Python DLPack path. Logs go to OUTDIR; a short table is printed last.
# usage (repo root): bash hip/results_run22all.sh OUTDIR
# PARTS=a,b,...: only those runs (test_quick, bench, mm_bench, mm_quick, mm_quick_kernel, mm_large, cli,
# torch);
# BENCH_OPS: the bench's operators (default all four)
set -u
PARTS=${PARTS:-all}
O="$1"; mkdir -p "$O"
t0=$(date +%s)
S="-Dgpu=cuda -Dtests=disabled -Dtoml=disabled -Dgtest=disabled -Dmpi=disabled"
if ! meson setup build-dev $S -Dcublas_bench=enabled >"$O/setup.log" 2>&1; then
    echo "cuBLAS not found: bench without it" >>"$O/setup.log"
    rm -rf build-dev
    meson setup build-dev $S >>"$O/setup.log" 2>&1 || { tail -20 "$O/setup.log"; exit 1; }
fi
( time ninja -C build-dev apps/numoracle hip/drivers/nmo_gpu_oracle_test hip/drivers/nmo_gpu_oracle_bench \
    hip/drivers/nmo_gpu_oracle_matmul_test hip/drivers/nmo_gpu_oracle_matmul_bench hip/libnumoracle_gpu.so \
    oracle/libnumoracle.so.0.1.0 ) >"$O/ninja.log" 2>&1 || { grep -E "error" "$O/ninja.log" | head -20; exit 1; }
echo "build_s=$(( $(date +%s) - t0 ))" >"$O/build_time.txt"
T=build-dev/hip/drivers
cuobjdump --dump-resource-usage build-dev/hip/gpu_oracle.o 2>/dev/null | grep -E "Function|REG" | sed -e 's/^ *//' | paste - - |
    sed -E 's/.*Function ([^ :]*).*REG:([0-9]+).*SHARED:([0-9]+).*/\1 REG=\2 SHARED=\3/' >"$O/regs.txt" 2>&1
run() { # name timeout command...
    local n=$1 t=$2; shift 2
    case ",$PARTS," in ,all,|*",$n,"*) ;; *) return 0 ;; esac
    ( time timeout "$t" "$@" ) >"$O/$n.txt" 2>&1; echo "rc=$?" >>"$O/$n.txt"
}
run test_quick 90 $T/nmo_gpu_oracle_test --quick
# layer_norm last: while its rows go to the host it takes most of the cap
run bench 150 $T/nmo_gpu_oracle_bench --iters 5 --ops ${BENCH_OPS:-rms_norm,softmax,swiglu,layer_norm}
run mm_bench 60 $T/nmo_gpu_oracle_matmul_bench --iters 5 --cpu-rows 16
run mm_quick 30 $T/nmo_gpu_oracle_matmul_test --quick
run mm_quick_kernel 30 env NMO_GO_MM_KERNEL=1 $T/nmo_gpu_oracle_matmul_test --quick
run mm_large 120 $T/nmo_gpu_oracle_matmul_test --large
# 168 numoracle processes, 84 of them creating a CUDA context: 30 s was too short on the H200
run cli 150 bash hip/gpu_oracle_cli_test.sh build-dev/apps/numoracle
run torch 50 env PYTHONPATH=python NUMORACLE_LIB=build-dev/oracle/libnumoracle.so \
    NUMORACLE_GPU_LIB=build-dev/hip/libnumoracle_gpu.so python3 hip/validate/gpu_dlpack_torch.py
cat "$O/build_time.txt"
for n in test_quick mm_quick mm_quick_kernel mm_large; do
    [ -f "$O/$n.txt" ] && { echo "== $n"; grep -E "_test:|RESULT|^rc=|^real|DIFF" "$O/$n.txt" | tail -14; }
done
[ -f "$O/cli.txt" ] && { echo "== cli"; head -1 "$O/cli.txt"; tail -1 "$O/cli.txt"; }
[ -f "$O/torch.txt" ] && { echo "== torch"; grep -vE "^(user|sys)" "$O/torch.txt" | tail -8; }
echo "== bench"; grep -E "^op=|^rc=|^real|error|failed" "$O"/bench.txt "$O"/mm_bench.txt 2>/dev/null | cut -c1-330
exit 0
