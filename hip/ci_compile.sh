#!/usr/bin/env bash
# CI compile targets for the GPU layer (no GPU needed): every .hip source of hip/ is
# compiled for
#   sm_90   nvcc -x cu -arch=sm_90 (device code compiled to SASS through ptxas)
#   gfx90a  Debian's hipcc, AMD path (--offload-arch=gfx90a; host + device). Debian's
#           HIP 5.2 NVIDIA headers do not build with CUDA 13, so hipcc is only used
#           for AMD targets.
#   gfx942  clang-19 -x hip --offload-arch=gfx942 -nogpulib -nogpuinc --cuda-device-only
#           -S, without any HIP headers: nmo_hip.h's bare mode (NMO_HIP_BARE=1)
#           declares what the kernels need on top of clang's amdgcn builtins.
# plus one check per target that the tensor-core matmul really uses the matrix
# instructions (mma.sync in the sm_90 PTX, v_mfma in the gfx90a/gfx942 assembly).
#
# usage: bash hip/ci_compile.sh [-j N] [--targets sm_90,gfx90a,gfx942] [--keep DIR]
# Prints one line per file and target, then one line per target (OK/FAIL) and exits
# non-zero when any target failed or its compiler is missing.
# Packages (Debian 12): nvcc from the CUDA toolkit (/usr/local/cuda/bin), hipcc and
# clang-19 (`apt-get install -y hipcc clang-19`).
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
NVCC="${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
HIPCC="${HIPCC:-$(command -v hipcc || true)}"
CLANG19="${CLANG19:-$(command -v clang-19 || true)}"
INC=(-I"$root/hip" -I"$root/hip/kernels" -I"$root/oracle/include")

# ---- one compile (called through xargs) -------------------------------------------
if [ "${1:-}" = "--one" ]; then
    target="$2" src="$3" out="$4"
    log="$out.log"
    t0=$(date +%s.%N)
    case "$target" in
    sm_90)
        # the GPU tier with its cuBLAS path (meson -Dcublas) when the toolkit has the header
        blas=()
        if [ "$(basename "$src")" = gpu_oracle.hip ] &&
            [ -f "$(dirname "$(dirname "$NVCC")")/include/cublas_v2.h" ]; then blas=(-DNMO_GPU_CUBLAS=1); fi
        "$NVCC" -x cu -std=c++17 -O3 -arch=sm_90 "${INC[@]}" -DNMO_GPU_ARCH='"sm_90"' "${blas[@]}" \
            -diag-suppress 177 -c "$src" -o "$out.o" >"$log" 2>&1
        rc=$?
        if [ $rc = 0 ] && [ "$(basename "$src")" = matmul.hip ]; then
            "$NVCC" -x cu -std=c++17 -O3 -arch=sm_90 "${INC[@]}" -diag-suppress 177 -ptx "$src" \
                -o "$out.ptx" >>"$log" 2>&1 && grep -q 'mma.sync.aligned.m16n8k16' "$out.ptx" || {
                echo "tensor-core check: no mma.sync.aligned.m16n8k16 in the PTX" >>"$log"
                rc=1
            }
        fi
        ;;
    gfx90a)
        # hipcc's wrapper asks rocm_agent_enumerator for a GPU and prints a traceback
        # when there is none; harmless with --offload-arch, filtered from the log.
        "$HIPCC" -x hip -std=c++17 -O3 --offload-arch=gfx90a "${INC[@]}" -DNMO_GPU_ARCH='"gfx90a"' \
            -c "$src" -o "$out.o" >"$log.raw" 2>&1
        rc=$?
        grep -v -E 'rocm_agent_enumerator|^Traceback|^  File |^    |FileNotFoundError|^ +\^+$' \
            "$log.raw" >"$log" || true
        if [ $rc = 0 ] && [ "$(basename "$src")" = matmul.hip ]; then
            "$HIPCC" -x hip -std=c++17 -O3 --offload-arch=gfx90a "${INC[@]}" --cuda-device-only -S \
                "$src" -o "$out.s" >>"$log.raw" 2>&1 && grep -q 'v_mfma' "$out.s" || {
                echo "tensor-core check: no v_mfma in the gfx90a assembly" >>"$log"
                rc=1
            }
        fi
        ;;
    gfx942)
        "$CLANG19" -x hip -std=c++17 -O3 --offload-arch=gfx942 -nogpulib -nogpuinc \
            --cuda-device-only -S -DNMO_HIP_BARE=1 "${INC[@]}" "$src" -o "$out.s" >"$log" 2>&1
        rc=$?
        if [ $rc = 0 ] && [ "$(basename "$src")" = matmul.hip ] && ! grep -q 'v_mfma' "$out.s"; then
            echo "tensor-core check: no v_mfma in the gfx942 assembly" >>"$log"
            rc=1
        fi
        ;;
    *) echo "unknown target $target" >"$log"; rc=2 ;;
    esac
    t1=$(date +%s.%N)
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')
    rel="${src#"$root"/}"
    if [ $rc = 0 ]; then
        printf 'OK   %-7s %-40s %6s s\n' "$target" "$rel" "$secs"
        echo ok >"$out.status"
    else
        printf 'FAIL %-7s %-40s %6s s\n' "$target" "$rel" "$secs"
        sed 's/^/     | /' "$log" | head -40
        echo fail >"$out.status"
    fi
    exit 0
fi

# ---- driver --------------------------------------------------------------------------
jobs="$(nproc 2>/dev/null || echo 2)"
targets="sm_90,gfx90a,gfx942"
keep=""
while [ $# -gt 0 ]; do
    case "$1" in
    -j) jobs="$2"; shift 2 ;;
    -j*) jobs="${1#-j}"; shift ;;
    --targets) targets="$2"; shift 2 ;;
    --keep) keep="$2"; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "ci_compile.sh: bad argument $1" >&2; exit 2 ;;
    esac
done

work="${keep:-$(mktemp -d "${TMPDIR:-/tmp}/nmo-ci-compile.XXXXXX")}"
mkdir -p "$work"
[ -n "$keep" ] || trap 'rm -rf "$work"' EXIT

mapfile -t srcs < <(cd "$root" && ls hip/kernels/*.hip hip/*.hip hip/plugins/*.hip 2>/dev/null)
declare -A missing=()
IFS=',' read -r -a tl <<<"$targets"
for t in "${tl[@]}"; do
    case "$t" in
    sm_90) [ -x "$NVCC" ] || missing[$t]="nvcc not found (CUDA toolkit)" ;;
    gfx90a) [ -n "$HIPCC" ] || missing[$t]="hipcc not found (apt-get install hipcc)" ;;
    gfx942) [ -n "$CLANG19" ] || missing[$t]="clang-19 not found (apt-get install clang-19)" ;;
    *) missing[$t]="unknown target" ;;
    esac
done

start=$(date +%s)
{
    for t in "${tl[@]}"; do
        [ -z "${missing[$t]:-}" ] || continue
        for s in "${srcs[@]}"; do
            printf '%s\0%s\0%s\0' "$t" "$root/$s" "$work/$t.$(echo "$s" | tr '/.' '__')"
        done
    done
} | xargs -0 -n 3 -P "$jobs" bash "$0" --one

fail=0
echo "----"
for t in "${tl[@]}"; do
    if [ -n "${missing[$t]:-}" ]; then
        echo "FAIL $t: ${missing[$t]}"
        fail=1
        continue
    fi
    n=0 bad=0
    for s in "${srcs[@]}"; do
        n=$((n + 1))
        st="$work/$t.$(echo "$s" | tr '/.' '__').status"
        [ "$(cat "$st" 2>/dev/null)" = ok ] || bad=$((bad + 1))
    done
    if [ $bad = 0 ]; then echo "OK   $t ($n files)"; else echo "FAIL $t ($bad of $n files)"; fail=1; fi
done
echo "ci_compile: $(( $(date +%s) - start )) s with -j $jobs"
exit $fail
