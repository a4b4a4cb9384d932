/* numoracle HIP kernels: softmax over the last dim, y = exp(x - max) / sum exp(x - max),
 * and log_softmax, y = (x - max) - log(sum exp(x - max)) (same kernels, LOG = 1).
 *
 *   in  x[..., N] (fp32, bf16 or fp16)    out y[..., N] (same dtype)
 *
 * Plan honoured (every variant): the dtype's default plan with the platform's math
 * library (NMO_HIP_FN_PLAN: expf of CUDA libdevice <= 2 ulp, or OCML <= 3 ulp): exact
 * row max, d = x - m, e = expf(d), s = sum e in any order (fp32), y = e/s or e*RN(1/s),
 * one RNE store. Covered by refs/softmax.c. Three passes over the row (max, sum,
 * normalize), the exponentials recomputed in the third pass (the same value).
 * log_softmax: l = logf(s) (CUDA logf 1 ulp, OCML 3), y = (x - m) - l or x - RN(m + l)
 * (refs/log_softmax.c encloses both).
 *
 * Production structure as in rms_norm.hip: block (or warp) per row, VB-byte vectors with
 * scalar head/tail, row cached in registers, shuffle/shared-memory reductions. Mutants
 * are the default kernel (block256) with one bug each, named like refs/cand/softmax_cand.c. */
#ifndef NMO_K_SOFTMAX_COMMON_H
#define NMO_K_SOFTMAX_COMMON_H
#include "kcommon.h"

namespace {

enum : unsigned {
    M_NO_MAX = 1u << 0,    /* e = expf(x): no max subtraction (overflows) */
    M_WARP_MAX = 1u << 1,  /* the block max is never combined across warps */
    M_ACC_BF16 = 1u << 2,  /* every addition of the sum rounded to bf16 */
    M_SKIP_LAST = 1u << 3, /* the sum skips the row's last element */
    M_STORE_RZ = 1u << 4,  /* truncating store */
    M_EXP_BF16 = 1u << 5,  /* e kept in bf16 between the passes */
    M_LOG_OF_SM = 1u << 6, /* log_softmax as logf(e / s): underflows to -inf */
};
enum : unsigned {
    O_RECIP = 1u, /* y = e * RN(1/s) (else e / s) */
    O_LSE = 2u,   /* log_softmax: y = x - RN(m + l) (else (x - m) - l) */
    O_ECACHE = 4u, /* softmax: the exponentials of the cached vectors kept (fp32) for pass 3 */
    O_ESMEM = 8u,  /* ... kept in shared memory instead of registers (each thread its own) */
};
enum { G_BLOCK = 0, G_WARP = 1 };

template <unsigned MUT> NMO_D float sm_exp(float x, float m)
{
    float e = nmo_expf((MUT & M_NO_MAX) ? x : x - m);
    return (MUT & M_EXP_BF16) ? nmo_round_bf16(e) : e;
}
/* Row constants of the epilogue: s, RN(1/s); log_softmax: l = log(s), lse = RN(m + l). */
struct sm_row {
    float m, s, inv, l, lse;
};
template <unsigned OPT, unsigned MUT, int LOG> NMO_D float sm_out(float x, const sm_row &k)
{
    if (!LOG) {
        const float e = sm_exp<MUT>(x, k.m);
        return (OPT & O_RECIP) ? nmo_mul_nc(e, k.inv) : e / k.s;
    }
    if (MUT & M_LOG_OF_SM) return nmo_logf(sm_exp<MUT>(x, k.m) / k.s);
    if (OPT & O_LSE) return x - k.lse;
    return nmo_sub_rn((MUT & M_NO_MAX) ? x : x - k.m, k.l);
}

template <class T, int VB, unsigned OPT, unsigned MUT, int LOG>
NMO_D void sm_store_vec(T *yr, const nmo_vecb<VB> &xv, int64_t j0, const sm_row &k)
{
    constexpr int E = VB / (int)sizeof(T);
    nmo_vecb<VB> yv;
#pragma unroll
    for (int e = 0; e < E; e++)
        nmo_ty<T>::set_lane(yv.w, e, sm_out<OPT, MUT, LOG>(nmo_ty<T>::lane(xv.w, e), k),
                            (MUT & M_STORE_RZ) != 0);
    nmo_st<T, VB>(yr + j0, yv);
}

/* y of one cached vector from its kept exponentials (O_ECACHE): e/s or e*RN(1/s). */
template <class T, int VB, unsigned OPT, unsigned MUT>
NMO_D void sm_store_evec(T *yr, const float *ev, int64_t j0, const sm_row &k)
{
    constexpr int E = VB / (int)sizeof(T);
    nmo_vecb<VB> yv;
#pragma unroll
    for (int e = 0; e < E; e++)
        nmo_ty<T>::set_lane(yv.w, e, (OPT & O_RECIP) ? nmo_mul_nc(ev[e], k.inv) : ev[e] / k.s,
                            (MUT & M_STORE_RZ) != 0);
    nmo_st<T, VB>(yr + j0, yv);
}
/* PF > 0: persistent launch (PF blocks per multiprocessor, grid-stride over the rows)
 * whose next row's cached vectors are loaded right after this row's max pass, so that
 * the loads are in flight during the two block reductions and the stores (software
 * pipelining across rows; the same values are read, only earlier).
 * REG: the launch checked that every row is whole aligned vectors that the cache holds
 * (n a multiple of the vector, rows VB-aligned, n <= CACHE x threads x vector): no scalar
 * head or tail, no uncached vectors; the general code compiled out (fewer registers). */
template <class T, int GROUP, int BLOCK, int VB, int RED, unsigned OPT, unsigned MUT, int CACHE, int LOG, int PF, int REG>
__global__ void __launch_bounds__(BLOCK, PF > 0 ? PF : 1)
    softmax_kernel(const T *__restrict__ x, T *__restrict__ y, int64_t rows, int64_t n)
{
    constexpr int E = VB / (int)sizeof(T);
    constexpr int ACC16 = (MUT & M_ACC_BF16) ? NMO_ACC_BF16 : NMO_ACC32;
    constexpr bool RZ = (MUT & M_STORE_RZ) != 0;
    __shared__ float smem[BLOCK + 1];
    const int NT = GROUP == G_BLOCK ? BLOCK : NMO_WARP_SIZE;
    const int t = GROUP == G_BLOCK ? (int)threadIdx.x : (int)threadIdx.x % NMO_WARP_SIZE;
    const int64_t rpb = GROUP == G_BLOCK ? 1 : BLOCK / NMO_WARP_SIZE;
    const int64_t r0 = (int64_t)blockIdx.x * rpb + (GROUP == G_BLOCK ? 0 : (int)threadIdx.x / NMO_WARP_SIZE);
    const int64_t rstep = (int64_t)gridDim.x * rpb;
    const float ninf = nmo_u2f(0xff800000u);
    constexpr bool EC = (OPT & O_ECACHE) && !LOG;
    constexpr bool ES = (OPT & O_ESMEM) && !LOG && !EC;
    /* [i][e][t]: consecutive threads, consecutive words (no bank conflicts) */
    __shared__ float esm[ES ? CACHE * E * BLOCK : 1];

    nmo_vecb<VB> cache[CACHE];
    if (PF && r0 < rows) nmo_ld_row_cache<T, VB, CACHE, REG>(x + r0 * n, n, t, NT, cache);
    for (int64_t row = r0; row < rows; row += rstep) {
        const T *xr = x + row * n;
        T *yr = y + row * n;
        int64_t head = 0, nvec = n / E;
        if (!REG) nmo_row_split<T, VB>(xr, n, &head, &nvec);
        const int64_t body_end = head + nvec * E;

        /* pass 1: row max */
        if (!PF) nmo_ld_row_cache<T, VB, CACHE, REG>(xr, n, t, NT, cache);
        float m = ninf;
        if (!REG && t < head) m = nmo_fmaxf(m, nmo_ldf(xr + t));
#pragma unroll
        for (int i = 0; i < CACHE; i++) {
            const int64_t v = t + (int64_t)i * NT;
            if (v < nvec) {
#pragma unroll
                for (int e = 0; e < E; e++) m = nmo_fmaxf(m, nmo_ty<T>::lane(cache[i].w, e));
            }
        }
        for (int64_t v = t + (int64_t)CACHE * NT; !REG && v < nvec; v += NT) {
            nmo_vecb<VB> q = nmo_ld<T, VB>(xr + head + v * E);
#pragma unroll
            for (int e = 0; e < E; e++) m = nmo_fmaxf(m, nmo_ty<T>::lane(q.w, e));
        }
        for (int64_t j = body_end + t; !REG && j < n; j += NT) m = nmo_fmaxf(m, nmo_ldf(xr + j));
        nmo_vecb<VB> nxt[PF ? CACHE : 1];
        if (PF && row + rstep < rows) nmo_ld_row_cache<T, VB, CACHE, REG>(xr + rstep * n, n, t, NT, nxt);
        if (GROUP == G_BLOCK) m = nmo_block_max<BLOCK, (MUT & M_WARP_MAX) != 0>(m, smem);
        else m = nmo_warp_max_xor(m);

        /* pass 2: sum of exponentials */
        const int64_t nred = (MUT & M_SKIP_LAST) ? n - 1 : n;
        float acc = 0.0f;
        if (!REG && t < head && t < nred) acc = nmo_acc_round<ACC16>(nmo_add_rn(acc, sm_exp<MUT>(nmo_ldf(xr + t), m)));
        float ec[EC ? CACHE : 1][EC ? E : 1];
#pragma unroll
        for (int i = 0; i < CACHE; i++) {
            const int64_t v = t + (int64_t)i * NT;
            if (v < nvec) {
#pragma unroll
                for (int e = 0; e < E; e++) {
                    const float ex = sm_exp<MUT>(nmo_ty<T>::lane(cache[i].w, e), m);
                    if (EC) ec[EC ? i : 0][EC ? e : 0] = ex;
                    if (ES) esm[ES ? (i * E + e) * BLOCK + (int)threadIdx.x : 0] = ex;
                    if (head + v * E + e < nred) acc = nmo_acc_round<ACC16>(nmo_add_rn(acc, ex));
                }
            }
        }
        for (int64_t v = t + (int64_t)CACHE * NT; !REG && v < nvec; v += NT) {
            nmo_vecb<VB> q = nmo_ld<T, VB>(xr + head + v * E);
#pragma unroll
            for (int e = 0; e < E; e++)
                if (head + v * E + e < nred)
                    acc = nmo_acc_round<ACC16>(nmo_add_rn(acc, sm_exp<MUT>(nmo_ty<T>::lane(q.w, e), m)));
        }
        for (int64_t j = body_end + t; !REG && j < nred; j += NT)
            acc = nmo_acc_round<ACC16>(nmo_add_rn(acc, sm_exp<MUT>(nmo_ldf(xr + j), m)));
        float s;
        if (GROUP == G_BLOCK) {
            s = nmo_block_sum<BLOCK, RED, ACC16>(acc, smem);
        } else {
            s = nmo_warp_sum<RED, ACC16>(acc);
            if (RED != NMO_RED_SHFL_XOR) s = nmo_shfl(s, 0);
        }
        sm_row k;
        k.m = m;
        k.s = s;
        k.inv = 1.0f / s;
        k.l = LOG ? nmo_logf(s) : 0.0f;
        k.lse = LOG ? ((MUT & M_NO_MAX) ? k.l : nmo_add_rn(m, k.l)) : 0.0f;

        /* pass 3: normalize */
        if (!REG && t < head) nmo_stf(yr + t, sm_out<OPT, MUT, LOG>(nmo_ldf(xr + t), k), RZ);
#pragma unroll
        for (int i = 0; i < CACHE; i++) {
            const int64_t v = t + (int64_t)i * NT;
            if (v < nvec) {
                if (EC) {
                    sm_store_evec<T, VB, OPT, MUT>(yr, ec[EC ? i : 0], head + v * E, k);
                } else if (ES) {
                    float ev[E];
#pragma unroll
                    for (int e = 0; e < E; e++) ev[e] = esm[ES ? (i * E + e) * BLOCK + (int)threadIdx.x : 0];
                    sm_store_evec<T, VB, OPT, MUT>(yr, ev, head + v * E, k);
                } else {
                    sm_store_vec<T, VB, OPT, MUT, LOG>(yr, cache[i], head + v * E, k);
                }
            }
        }
        for (int64_t v = t + (int64_t)CACHE * NT; !REG && v < nvec; v += NT)
            sm_store_vec<T, VB, OPT, MUT, LOG>(yr, nmo_ld<T, VB>(xr + head + v * E), head + v * E, k);
        for (int64_t j = body_end + t; !REG && j < n; j += NT)
            nmo_stf(yr + j, sm_out<OPT, MUT, LOG>(nmo_ldf(xr + j), k), RZ);
        if (PF) {
#pragma unroll
            for (int i = 0; i < CACHE; i++) cache[i] = nxt[PF ? i : 0];
        }
    }
}

template <class T, int GROUP, int BLOCK, int VB, int RED, unsigned OPT, unsigned MUT, int CACHE,
          int LOG = 0, int PF = 0>
int softmax_launch(const nmo_plugin_args *a, char *msg, size_t msglen)
{
    int64_t rows, n;
    nmo_k_rows(&a->in[0], &rows, &n);
    if ((MUT & M_SKIP_LAST) && n < 2) return NMO_PLUGIN_UNSUPPORTED;
    int64_t blocks = rows;
    if (GROUP == G_WARP) {
        const int64_t rpb = BLOCK / nmo_k_warp_size();
        blocks = (rows + rpb - 1) / rpb;
    }
    constexpr int E = VB / (int)sizeof(T);
    const dim3 grid(PF ? nmo_k_persist_grid(blocks, PF) : nmo_k_grid(blocks));
    const int nt = GROUP == G_BLOCK ? BLOCK : nmo_k_warp_size();
    /* rows of whole cached vectors (softmax_supports: 16-byte aligned x and y) */
    if (PF && n % E == 0 && n / E <= (int64_t)CACHE * nt)
        nmo_launch(softmax_kernel<T, GROUP, BLOCK, VB, RED, OPT, MUT, CACHE, LOG, PF, PF ? 1 : 0>, grid,
                   dim3(BLOCK), 0, (hipStream_t)a->stream, (const T *)a->in[0].data, (T *)a->out[0].data,
                   rows, n);
    else
        nmo_launch(softmax_kernel<T, GROUP, BLOCK, VB, RED, OPT, MUT, CACHE, LOG, PF, 0>, grid, dim3(BLOCK), 0,
                   (hipStream_t)a->stream, (const T *)a->in[0].data, (T *)a->out[0].data, rows, n);
    NMO_HIP_CHECK_LAUNCH(LOG ? "log_softmax" : "softmax");
    return NMO_PLUGIN_OK;
}

int softmax_supports(const nmo_plugin_args *a)
{
    if (!nmo_k_basic_ok(a, 1, 1)) return 0;
    if (!nmo_k_aligned16(a->in[0].data) || !nmo_k_aligned16(a->out[0].data)) return 0;
    return nmo_k_same_dims(&a->in[0], &a->out[0]);
}

#define SM_K(fname, ...)                                                                 \
    int fname(const nmo_plugin_args *a, char *msg, size_t msglen)                        \
    {                                                                                    \
        NMO_K_DISPATCH(softmax_launch, __VA_ARGS__)                                      \
    }                                                                                \
    NMO_K_ROW_GEO(fname, __VA_ARGS__)

} // namespace

#endif
