/* numoracle HIP kernels: matmul, C[M,N] = A[M,K] B[K,N] (row-major, packed).
 *
 *   in  A[M,K], B[K,N]   out C[M,N]   (one dtype: fp32, bf16 or fp16; tensor-core
 *                                      kernels: bf16 and fp16 only)
 *
 * Ordinary-core kernels (plan: the dtype's default, sum=any: fp32 accumulation in any
 * order, FMA or not, one RNE store; covered by refs/matmul.c):
 *   64x64 block tiles through shared memory, 16x16 threads each computing 4x4 outputs,
 *   fp32 accumulators; the accumulation order per output is the variant's:
 *     seq_fma   one fmaf accumulator, k = 0..K-1 in order (CPU seq_fma)
 *     ktile32   k-tiles of 32: each tile's fmaf partial from 0, added in order (CPU ktile32)
 *     vec4      4 accumulators over k mod 4, product then add (no FMA), (a0+a1)+(a2+a3)
 *     splitk4   4 K-chunks in grid.z, fp32 partials in a workspace, ((p0+p1)+p2)+p3
 *     warp_dot  one warp per output: lane-strided fmaf partials + xor butterfly
 * Tensor-core kernels (plan: sum=mma:16 — products exact, hardware block accumulation
 * into fp32; until the mma model exists the engine checks it as sum=any):
 *     tc_mma       64x64 tiles, 4 warps, 16x16x16 bf16/fp16 MMA (mma.sync on sm_80+,
 *                  MFMA on gfx90a/gfx94x), one fp32 fragment over all of K
 *     tc_kchunk64  the same, a fresh fragment per 64-wide K chunk, added in fp32
 * Mutants are named like refs/cand/matmul_cand.c (tc_mut_* for the tensor-core ones). */
#include "kcommon.h"

namespace {

enum : unsigned {
    M_ACC_BF16 = 1u << 0,    /* accumulator rounded to bf16 after every fmaf */
    M_ACC_FP16 = 1u << 1,    /* ... to fp16 */
    M_TAIL_SKIP = 1u << 2,   /* k-tiles of BK: the partial last tile is never loaded */
    M_SPLITK_RACE = 1u << 3, /* split-K partial 2 lost (plain store race) */
    M_B_LAYOUT = 1u << 4,    /* B read as if stored [N,K] */
    M_STORE_RZ = 1u << 5,    /* truncating store */
};
enum { MODE_SEQ = 0, MODE_KTILE = 1, MODE_VEC4 = 2 };

constexpr int BM = 64, BN = 64, TM = 4, TN = 4, NTHR = (BM / TM) * (BN / TN); /* 256 */

template <class T, unsigned MUT> NMO_D float ld_b(const T *B, int64_t k, int64_t j, int64_t K, int64_t N)
{
    return nmo_ldf(B + ((MUT & M_B_LAYOUT) ? j * K + k : k * N + j));
}
template <unsigned MUT> NMO_D float mm_fma(float a, float b, float acc)
{
    const int ACC16 = (MUT & M_ACC_BF16) ? NMO_ACC_BF16 : (MUT & M_ACC_FP16) ? NMO_ACC_FP16 : NMO_ACC32;
    return nmo_acc_round<ACC16>(nmo_fmaf(a, b, acc));
}

/* Block tile kernel. blockIdx.z = split index (nsplit chunks of K); with nsplit > 1 the
 * fp32 partials go to ws[z][M][N] instead of C. */
template <class T, int BK, int MODE, unsigned MUT>
__global__ void __launch_bounds__(NTHR)
    mm_tile_kernel(const T *__restrict__ A, const T *__restrict__ B, T *__restrict__ C,
                   float *__restrict__ ws, int64_t M, int64_t N, int64_t K, int nsplit)
{
    __shared__ float As[BK][BM + 1];
    __shared__ float Bs[BK][BN + 1];
    const int tid = (int)threadIdx.x, tx = tid % (BN / TN), ty = tid / (BN / TN);
    const int64_t m0 = (int64_t)blockIdx.y * BM, n0 = (int64_t)blockIdx.x * BN;
    const int64_t kc = (K + nsplit - 1) / nsplit;
    const int64_t k_lo = (int64_t)blockIdx.z * kc;
    int64_t k_hi = k_lo + kc < K ? k_lo + kc : K;
    if (MUT & M_TAIL_SKIP) k_hi = k_lo + ((k_hi - k_lo) / BK) * BK;

    float acc[TM][TN], part[TM][TN][MODE == MODE_VEC4 ? 4 : 1];
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) {
            acc[i][j] = 0.0f;
#pragma unroll
            for (int q = 0; q < (MODE == MODE_VEC4 ? 4 : 1); q++) part[i][j][q] = 0.0f;
        }

    for (int64_t k0 = k_lo; k0 < k_hi; k0 += BK) {
        for (int i = tid; i < BM * BK; i += NTHR) {
            const int mm = i / BK, kk = i % BK;
            const int64_t gm = m0 + mm, gk = k0 + kk;
            As[kk][mm] = (gm < M && gk < k_hi) ? nmo_ldf(A + gm * K + gk) : 0.0f;
        }
        for (int i = tid; i < BK * BN; i += NTHR) {
            const int kk = i / BN, nn = i % BN;
            const int64_t gk = k0 + kk, gn = n0 + nn;
            Bs[kk][nn] = (gk < k_hi && gn < N) ? ld_b<T, MUT>(B, gk, gn, K, N) : 0.0f;
        }
        __syncthreads();
        float tacc[TM][TN];
#pragma unroll
        for (int i = 0; i < TM; i++)
#pragma unroll
            for (int j = 0; j < TN; j++) tacc[i][j] = 0.0f;
#pragma unroll 4
        for (int kk = 0; kk < BK; kk++) {
            float a[TM], b[TN];
#pragma unroll
            for (int i = 0; i < TM; i++) a[i] = As[kk][ty * TM + i];
#pragma unroll
            for (int j = 0; j < TN; j++) b[j] = Bs[kk][tx * TN + j];
#pragma unroll
            for (int i = 0; i < TM; i++)
#pragma unroll
                for (int j = 0; j < TN; j++) {
                    if (MODE == MODE_SEQ) acc[i][j] = mm_fma<MUT>(a[i], b[j], acc[i][j]);
                    else if (MODE == MODE_KTILE) tacc[i][j] = mm_fma<MUT>(a[i], b[j], tacc[i][j]);
                    else { /* VEC4: k mod 4 (tiles start at multiples of 4) */
                        const int q = kk & 3;
#pragma unroll
                        for (int p = 0; p < 4; p++)
                            if (p == q) part[i][j][p] = nmo_madd_nofma(part[i][j][p], a[i], b[j]);
                    }
                }
        }
        if (MODE == MODE_KTILE) {
#pragma unroll
            for (int i = 0; i < TM; i++)
#pragma unroll
                for (int j = 0; j < TN; j++) acc[i][j] = acc[i][j] + tacc[i][j];
        }
        __syncthreads();
    }
    if (MODE == MODE_VEC4) {
#pragma unroll
        for (int i = 0; i < TM; i++)
#pragma unroll
            for (int j = 0; j < TN; j++)
                acc[i][j] = (part[i][j][0] + part[i][j][1]) + (part[i][j][2] + part[i][j][3]);
    }
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) {
            const int64_t gm = m0 + ty * TM + i, gn = n0 + tx * TN + j;
            if (gm >= M || gn >= N) continue;
            if (nsplit > 1) ws[(int64_t)blockIdx.z * M * N + gm * N + gn] = acc[i][j];
            else nmo_stf(C + gm * N + gn, acc[i][j], (MUT & M_STORE_RZ) != 0);
        }
}

/* Split-K epilogue: c = ((p0 + p1) + p2) + p3, stored. */
template <class T, unsigned MUT>
__global__ void __launch_bounds__(256)
    mm_splitk_reduce(const float *__restrict__ ws, T *__restrict__ C, int64_t MN)
{
    for (int64_t i = (int64_t)blockIdx.x * 256 + threadIdx.x; i < MN; i += (int64_t)gridDim.x * 256) {
        float c = 0.0f;
        for (int s = 0; s < 4; s++)
            if (!((MUT & M_SPLITK_RACE) && s == 2)) c = c + ws[s * MN + i];
        nmo_stf(C + i, c, (MUT & M_STORE_RZ) != 0);
    }
}

/* One warp per output: lane l sums k = l, l + W, ... with fmaf; xor butterfly. */
template <class T, unsigned MUT>
__global__ void __launch_bounds__(256)
    mm_warp_dot(const T *__restrict__ A, const T *__restrict__ B, T *__restrict__ C, int64_t M,
                int64_t N, int64_t K)
{
    const int lane = (int)threadIdx.x % NMO_WARP_SIZE;
    const int64_t wpb = 256 / NMO_WARP_SIZE;
    for (int64_t o = (int64_t)blockIdx.x * wpb + threadIdx.x / NMO_WARP_SIZE; o < M * N;
         o += (int64_t)gridDim.x * wpb) {
        const int64_t i = o / N, j = o % N;
        float acc = 0.0f;
        for (int64_t k = lane; k < K; k += NMO_WARP_SIZE)
            acc = mm_fma<MUT>(nmo_ldf(A + i * K + k), ld_b<T, MUT>(B, k, j, K, N), acc);
        acc = nmo_warp_sum<NMO_RED_SHFL_XOR, NMO_ACC32>(acc);
        if (lane == 0) nmo_stf(C + o, acc, (MUT & M_STORE_RZ) != 0);
    }
}

template <class T, int BK, int MODE, int NSPLIT, unsigned MUT>
int mm_tile_launch(const nmo_plugin_args *a, char *msg, size_t msglen)
{
    const int64_t M = a->in[0].dims[0], K = a->in[0].dims[1], N = a->in[1].dims[1];
    const T *A = (const T *)a->in[0].data, *B = (const T *)a->in[1].data;
    T *C = (T *)a->out[0].data;
    hipStream_t st = (hipStream_t)a->stream;
    dim3 grid((unsigned)((N + BN - 1) / BN), (unsigned)((M + BM - 1) / BM), (unsigned)NSPLIT);
    if (NSPLIT == 1) {
        nmo_launch(mm_tile_kernel<T, BK, MODE, MUT>, grid, dim3(NTHR), 0, st, A, B, C, (float *)NULL, M, N,
                   K, 1);
        NMO_HIP_CHECK_LAUNCH("matmul tile kernel");
        return NMO_PLUGIN_OK;
    }
    float *ws = NULL;
    NMO_HIP_TRY(hipMalloc((void **)&ws, (size_t)NSPLIT * (size_t)(M * N) * sizeof(float)));
    nmo_launch(mm_tile_kernel<T, BK, MODE, MUT>, grid, dim3(NTHR), 0, st, A, B, C, ws, M, N, K, NSPLIT);
    hipError_t e = hipGetLastError();
    if (e == hipSuccess) {
        nmo_launch(mm_splitk_reduce<T, MUT>, dim3(nmo_k_grid((M * N + 255) / 256)), dim3(256), 0, st,
                   (const float *)ws, C, M * N);
        e = hipGetLastError();
    }
    if (e == hipSuccess) e = hipStreamSynchronize(st); /* the workspace is freed below */
    hipFree(ws);
    if (e != hipSuccess) {
        nmo_hip_msg(msg, msglen, "split-K matmul: %s", hipGetErrorString(e));
        return NMO_PLUGIN_ERROR;
    }
    return NMO_PLUGIN_OK;
}

template <class T, unsigned MUT>
int mm_warp_launch(const nmo_plugin_args *a, char *msg, size_t msglen)
{
    const int64_t M = a->in[0].dims[0], K = a->in[0].dims[1], N = a->in[1].dims[1];
    const int64_t wpb = 256 / nmo_k_warp_size();
    nmo_launch(mm_warp_dot<T, MUT>, dim3(nmo_k_grid((M * N + wpb - 1) / wpb)), dim3(256), 0,
               (hipStream_t)a->stream, (const T *)a->in[0].data, (const T *)a->in[1].data,
               (T *)a->out[0].data, M, N, K);
    NMO_HIP_CHECK_LAUNCH("matmul warp_dot");
    return NMO_PLUGIN_OK;
}

/* ------------------------------------------------------------------ tensor cores */

constexpr int TBK = 32; /* K per shared-memory stage: two 16-wide MMA steps */
constexpr int TLDA = TBK + 8, TLDB = 64 + 8; /* padded leading dimensions (bank conflicts) */

/* 64x64 tile per block, 4 warps; warp w owns rows 16w..16w+15 and the four 16x16
 * column sub-tiles. MODE_KTILE: a fresh fragment per 64-wide K chunk (two stages). */
template <class T, int MODE, unsigned MUT>
__global__ void __launch_bounds__(256)
    mm_tc_kernel(const T *__restrict__ A, const T *__restrict__ B, T *__restrict__ C, int64_t M,
                 int64_t N, int64_t K)
{
    __shared__ uint16_t As[64 * TLDA];
    __shared__ uint16_t Bs[TBK * TLDB];
    const int nthr = 4 * NMO_WARP_SIZE;
    const int tid = (int)threadIdx.x, warp = tid / NMO_WARP_SIZE, lane = nmo_lane_id();
    const int64_t m0 = (int64_t)blockIdx.y * 64, n0 = (int64_t)blockIdx.x * 64;
    int64_t k_end = K;
    if (MUT & M_TAIL_SKIP) k_end = (K / TBK) * TBK;
    float acc[4][NMO_MMA_ACC_N], chunk[4][NMO_MMA_ACC_N];
#pragma unroll
    for (int s = 0; s < 4; s++)
#pragma unroll
        for (int i = 0; i < NMO_MMA_ACC_N; i++) acc[s][i] = chunk[s][i] = 0.0f;

    int stage = 0;
    for (int64_t k0 = 0; k0 < k_end; k0 += TBK, stage++) {
        for (int i = tid; i < 64 * TBK; i += nthr) {
            const int mm = i / TBK, kk = i % TBK;
            const int64_t gm = m0 + mm, gk = k0 + kk;
            As[mm * TLDA + kk] = (gm < M && gk < k_end) ? A[gm * K + gk].bits : (uint16_t)0;
        }
        for (int i = tid; i < TBK * 64; i += nthr) {
            const int kk = i / 64, nn = i % 64;
            const int64_t gk = k0 + kk, gn = n0 + nn;
            Bs[kk * TLDB + nn] = (gk < k_end && gn < N) ? B[gk * N + gn].bits : (uint16_t)0;
        }
        __syncthreads();
#pragma unroll
        for (int ks = 0; ks < TBK; ks += 16)
#pragma unroll
            for (int s = 0; s < 4; s++) {
                const uint16_t *at = As + (16 * warp) * TLDA + ks, *bt = Bs + ks * TLDB + 16 * s;
                if (MODE == MODE_KTILE) nmo_mma_16x16x16<nmo_ty<T>::is_bf16>(chunk[s], at, TLDA, bt, TLDB);
                else nmo_mma_16x16x16<nmo_ty<T>::is_bf16>(acc[s], at, TLDA, bt, TLDB);
            }
        if (MODE == MODE_KTILE && ((stage & 1) == 1 || k0 + TBK >= k_end)) {
#pragma unroll
            for (int s = 0; s < 4; s++)
#pragma unroll
                for (int i = 0; i < NMO_MMA_ACC_N; i++) {
                    acc[s][i] = acc[s][i] + chunk[s][i];
                    chunk[s][i] = 0.0f;
                }
        }
        if (MUT & M_ACC_BF16) { /* the running accumulator kept in bf16 between stages */
#pragma unroll
            for (int s = 0; s < 4; s++)
#pragma unroll
                for (int i = 0; i < NMO_MMA_ACC_N; i++) acc[s][i] = nmo_round_bf16(acc[s][i]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int s = 0; s < 4; s++)
#pragma unroll
        for (int i = 0; i < NMO_MMA_ACC_N; i++) {
            int r, c;
            nmo_mma_acc_rc(lane, i, &r, &c);
            const int64_t gm = m0 + 16 * warp + r, gn = n0 + 16 * s + c;
            if (gm < M && gn < N) nmo_stf(C + gm * N + gn, acc[s][i], (MUT & M_STORE_RZ) != 0);
        }
}

template <class T, int MODE, unsigned MUT>
int mm_tc_launch_t(const nmo_plugin_args *a, char *msg, size_t msglen)
{
    const int64_t M = a->in[0].dims[0], K = a->in[0].dims[1], N = a->in[1].dims[1];
    dim3 grid((unsigned)((N + 63) / 64), (unsigned)((M + 63) / 64), 1);
    nmo_launch(mm_tc_kernel<T, MODE, MUT>, grid, dim3(4 * nmo_k_warp_size()), 0, (hipStream_t)a->stream,
               (const T *)a->in[0].data, (const T *)a->in[1].data, (T *)a->out[0].data, M, N, K);
    NMO_HIP_CHECK_LAUNCH("matmul tensor-core kernel");
    return NMO_PLUGIN_OK;
}

int mm_supports(const nmo_plugin_args *a)
{
    if (!nmo_k_basic_ok(a, 2, 1)) return 0;
    const nmo_plugin_tensor *A = &a->in[0], *B = &a->in[1], *C = &a->out[0];
    if (A->ndims != 2 || B->ndims != 2 || C->ndims != 2) return 0;
    if (A->dims[1] != B->dims[0] || C->dims[0] != A->dims[0] || C->dims[1] != B->dims[1]) return 0;
    /* grid.y holds M/64 */
    return A->dims[0] <= (int64_t)65535 * 64;
}
int mm_tc_supports(const nmo_plugin_args *a)
{
    return mm_supports(a) && a->in[0].dtype != NMO_PLUGIN_DT_FP32;
}

#define MM_TILE(fname, BK, MODE, NSPLIT, MUT)                                            \
    int fname(const nmo_plugin_args *a, char *msg, size_t msglen)                        \
    {                                                                                    \
        NMO_K_DISPATCH(mm_tile_launch, BK, MODE, NSPLIT, MUT)                            \
    }
#define MM_WARP(fname, MUT)                                                              \
    int fname(const nmo_plugin_args *a, char *msg, size_t msglen)                        \
    {                                                                                    \
        NMO_K_DISPATCH(mm_warp_launch, MUT)                                              \
    }
#define MM_TC(fname, MODE, MUT)                                                          \
    int fname(const nmo_plugin_args *a, char *msg, size_t msglen)                        \
    {                                                                                    \
        switch (a->in[0].dtype) {                                                        \
        case NMO_PLUGIN_DT_BF16: return mm_tc_launch_t<nmo_bf16, MODE, MUT>(a, msg, msglen); \
        case NMO_PLUGIN_DT_FP16: return mm_tc_launch_t<nmo_fp16, MODE, MUT>(a, msg, msglen); \
        default: return NMO_PLUGIN_UNSUPPORTED;                                          \
        }                                                                                \
    }

MM_TILE(k_seq_fma, 16, MODE_SEQ, 1, 0u)
MM_TILE(k_ktile32, 32, MODE_KTILE, 1, 0u)
MM_TILE(k_vec4, 16, MODE_VEC4, 1, 0u)
MM_TILE(k_splitk4, 16, MODE_SEQ, 4, 0u)
MM_WARP(k_warp_dot, 0u)
MM_TC(k_tc_mma, MODE_SEQ, 0u)
MM_TC(k_tc_kchunk64, MODE_KTILE, 0u)

MM_TILE(k_mut_acc_bf16, 16, MODE_SEQ, 1, M_ACC_BF16)
MM_TILE(k_mut_acc_fp16, 16, MODE_SEQ, 1, M_ACC_FP16)
MM_TILE(k_mut_tail_skip, 32, MODE_KTILE, 1, M_TAIL_SKIP)
MM_TILE(k_mut_splitk_race, 16, MODE_SEQ, 4, M_SPLITK_RACE)
MM_TILE(k_mut_b_layout, 16, MODE_SEQ, 1, M_B_LAYOUT)
MM_TILE(k_mut_store_rz, 16, MODE_SEQ, 1, M_STORE_RZ)
MM_TC(k_tc_mut_acc_bf16, MODE_SEQ, M_ACC_BF16)
MM_TC(k_tc_mut_tail_skip, MODE_SEQ, M_TAIL_SKIP)

} // namespace

#if !defined(__HIP_DEVICE_COMPILE__)
#define MM_ENTRY(name, correct, desc, fn)                                                \
    {"matmul", name, "fp32 bf16 fp16", "", correct, desc, mm_supports, fn}
#define MM_TC_ENTRY(name, correct, desc, fn)                                             \
    {"matmul", name, "bf16 fp16", "sum=mma:16", correct, desc, mm_tc_supports, fn}

NMO_HIP_TABLE(matmul);
extern "C" const nmo_plugin_kernel nmo_hip_kernels_matmul[] = {
    MM_ENTRY("seq_fma", 1,
             "64x64 smem tiles, 4x4 outputs per thread, one fmaf accumulator, k in order", k_seq_fma),
    MM_ENTRY("ktile32", 1, "64x64 tiles, k-tiles of 32: fmaf partial per tile, added in order",
             k_ktile32),
    MM_ENTRY("vec4", 1, "64x64 tiles, 4 accumulators over k mod 4, no FMA, (a0+a1)+(a2+a3)", k_vec4),
    MM_ENTRY("splitk4", 1,
             "split-K = 4 (grid.z), fp32 partials in a workspace, ((p0+p1)+p2)+p3 epilogue",
             k_splitk4),
    MM_ENTRY("warp_dot", 1, "one warp per output, lane-strided fmaf partials, xor butterfly",
             k_warp_dot),
    MM_TC_ENTRY("tc_mma", 1,
                "tensor cores: 16x16x16 bf16/fp16 MMA (mma.sync / MFMA), fp32 fragment over all K",
                k_tc_mma),
    MM_TC_ENTRY("tc_kchunk64", 1,
                "tensor cores: a fresh fp32 fragment per 64-wide K chunk, chunks added in fp32",
                k_tc_kchunk64),
    MM_ENTRY("mut_acc_bf16", 0, "MUTANT: accumulator rounded to bf16 after every fmaf",
             k_mut_acc_bf16),
    MM_ENTRY("mut_acc_fp16", 0, "MUTANT: accumulator rounded to fp16 after every fmaf (overflows)",
             k_mut_acc_fp16),
    MM_ENTRY("mut_tail_skip", 0, "MUTANT: k-tiles of 32, the partial last tile (K mod 32) skipped",
             k_mut_tail_skip),
    MM_ENTRY("mut_splitk_race", 0, "MUTANT: split-K = 4 with partial 2 lost (store race)",
             k_mut_splitk_race),
    MM_ENTRY("mut_b_layout", 0, "MUTANT: B read as if laid out [N,K]", k_mut_b_layout),
    MM_ENTRY("mut_store_rz", 0, "MUTANT: final store truncates (RZ) instead of RNE", k_mut_store_rz),
    MM_TC_ENTRY("tc_mut_acc_bf16", 0,
                "MUTANT: tensor-core accumulator rounded to bf16 after every 32-wide K stage",
                k_tc_mut_acc_bf16),
    MM_TC_ENTRY("tc_mut_tail_skip", 0,
                "MUTANT: tensor-core kernel skips the partial last K stage (K mod 32)",
                k_tc_mut_tail_skip),
};
extern "C" const int nmo_hip_kernels_matmul_n =
    (int)(sizeof nmo_hip_kernels_matmul / sizeof nmo_hip_kernels_matmul[0]);
#endif
