#!/usr/bin/env bash
# The H200 run of issue 22's matmul tier (one device call): build, equality, bench.
# usage (repo root of the unpacked tree): bash hip/results_run22m.sh OUTDIR
set -u
O="$1"
S="-Dgpu=cuda -Dtests=disabled -Dtoml=disabled -Dgtest=disabled -Dmpi=disabled"
ls /usr/local/cuda/lib64/libcublas.so* /usr/local/cuda/include/cublas_v2.h >"$O/cublas_files.txt" 2>&1
if ! meson setup build-dev $S -Dcublas_bench=enabled >"$O/setup.log" 2>&1; then
    echo "cuBLAS not found: bench without it" >>"$O/setup.log"
    rm -rf build-dev
    meson setup build-dev $S >>"$O/setup.log" 2>&1 || { tail -20 "$O/setup.log"; exit 1; }
fi
grep -iE "blas|cublas" "$O/setup.log" | head -5
( time ninja -C build-dev hip/drivers/nmo_gpu_oracle_matmul_test hip/drivers/nmo_gpu_oracle_matmul_bench hip/libnumoracle_gpu.so oracle/libnumoracle.so.0.1.0 ) >"$O/ninja.log" 2>&1 || { grep -E "error" "$O/ninja.log" | head -20; exit 1; }
grep real "$O/ninja.log"
T=build-dev/hip/drivers
cuobjdump --dump-resource-usage build-dev/hip/gpu_oracle.o 2>/dev/null | grep -E "Function|REG" | sed -e 's/^ *//' | paste - - | sed -E 's/.*Function ([^ :]*).*REG:([0-9]+).*SHARED:([0-9]+).*/\1 REG=\2 SHARED=\3/' | grep mm >"$O/regs.txt" 2>&1
( time timeout 60 $T/nmo_gpu_oracle_matmul_bench --iters 5 --cpu-rows 16 ) >"$O/bench.txt" 2>&1; echo "rc=$?" >>"$O/bench.txt"
( time timeout 30 $T/nmo_gpu_oracle_matmul_test --quick ) >"$O/test_quick.txt" 2>&1; echo "rc=$?" >>"$O/test_quick.txt"
( time timeout 40 $T/nmo_gpu_oracle_matmul_test --large ) >"$O/test_large.txt" 2>&1; echo "rc=$?" >>"$O/test_large.txt"
( time PYTHONPATH=python NUMORACLE_LIB=build-dev/oracle/libnumoracle.so NUMORACLE_GPU_LIB=build-dev/hip/libnumoracle_gpu.so timeout 50 python3 hip/validate/gpu_dlpack_torch.py ) >"$O/torch.txt" 2>&1; echo "rc=$?" >>"$O/torch.txt"
echo "== bench"; grep -E "^op=|^rc=|^real|error|failed" "$O/bench.txt"
echo "== quick"; grep -E "matmul_test:|RESULT|^rc=|^real|DIFF" "$O/test_quick.txt" | tail -8
echo "== large"; grep -E "matmul_test:|RESULT|^rc=|^real|DIFF" "$O/test_large.txt" | tail -8
echo "== torch"; grep -vE "^(user|sys)" "$O/torch.txt" | tail -12
echo "== regs"; cut -c1-100 "$O/regs.txt"
exit 0
