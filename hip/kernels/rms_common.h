/* numoracle HIP kernels: rms_norm forward, y = x * rsqrt(mean(x^2) + eps) * w, and
 * fused_add_rms_norm (vLLM's fused_add_rms_norm): h = x + residual stored as the new
 * residual, y = h * rsqrt(mean(h^2) + eps) * w.
 *
 *   rms_norm            in x[..., N], w[N]               out y[..., N]
 *   fused_add_rms_norm  in x[..., N], residual[..., N], w[N]
 *                       out y[..., N], residual_out[..., N]
 *   (fp32, bf16 or fp16; one dtype)   param eps (float, as a real entry point gets it)
 *
 * fused_add_rms_norm: s = x + r in fp32, h = RN(s) stored into residual_out; the sum of
 * squares from s (block256, warp_row) or from the stored h (block1024_tree), y from h
 * (re-read or cached) - the hull refs/fused_add_rms_norm.c encloses (fused plan).
 *
 * Plan honoured (every variant): the dtype's default plan with the platform's math
 * library accuracy (NMO_HIP_FN_PLAN: fn=cuda under nvcc, fn=ocml under HIP): fp32
 * compute and accumulation, sum of squares in any order (each thread's strided part,
 * then the variant's tree), ss/N or ss*RN(1/N), rsqrtf or 1/sqrtf, x*r*w in any
 * association, one RNE store. Covered by refs/rms_norm.c.
 *
 * Production structure: one block (or one warp) per row, grid-stride over rows; the row
 * is read as VB-byte vectors (scalar head up to the first aligned address, scalar tail
 * for odd widths), kept in registers (CACHE vectors per thread) for the second pass;
 * warp shuffles + shared memory for the block reduction.
 *
 * Correct variants differ in block size, vector width, reduction tree, FMA use, mean,
 * root and association; mutants are the default kernel (block256) with one bug each,
 * named like the CPU emulations in refs/cand/rms_norm_cand.c. */
#ifndef NMO_K_RMS_COMMON_H
#define NMO_K_RMS_COMMON_H
#include "kcommon.h"

namespace {

enum : unsigned {
    M_NO_EPS = 1u << 0,      /* r = rsqrt(ms) */
    M_EPS_OUTSIDE = 1u << 1, /* r = 1 / (sqrt(ms) + eps) */
    M_MEAN_N1 = 1u << 2,     /* ms = ss / (N-1) */
    M_SKIP_LAST = 1u << 3,   /* the reduction skips the row's last element */
    M_W_OFF1 = 1u << 4,      /* w[(j+1) mod N] */
    M_STORE_RZ = 1u << 5,    /* truncating store */
    M_ROUND_XR = 1u << 6,    /* x*r rounded to the storage dtype before *w */
    M_ACC_BF16 = 1u << 7,    /* every accumulation step rounded to bf16 */
    M_ACC_FP16 = 1u << 8,    /* ... to fp16 */
    /* fused_add_rms_norm */
    M_NORM_X = 1u << 9,          /* the norm reads x instead of x + residual */
    M_RESID_RZ = 1u << 10,       /* the new residual stored truncated (RZ) */
    M_NO_RESID_STORE = 1u << 11, /* the new residual never written */
};
enum : unsigned {
    O_MEAN_RECIP = 1u, /* ms = ss * RN(1/N) (else ss / N) */
    O_ROOT_DIV = 2u,   /* r = 1 / sqrtf(d) (else rsqrtf(d)) */
    O_XRW = 4u,        /* x * (r * w) */
    O_XWR = 8u,        /* (x * w) * r   (neither: (x * r) * w) */
    O_NOFMA = 16u,     /* squares rounded before the add (else fmaf) */
    O_SS_H = 32u,      /* fused_add: squares of the stored h (else of the fp32 sum s) */
};
enum { G_BLOCK = 0, G_WARP = 1 };

template <unsigned OPT, int ACC16> NMO_D float sq_acc(float acc, float v)
{
    float r = (OPT & O_NOFMA) ? nmo_madd_nofma(acc, v, v) : nmo_fmaf(v, v, acc);
    return nmo_acc_round<ACC16>(r);
}

template <class T, unsigned OPT, unsigned MUT> NMO_D float rms_out(float x, float r, float w)
{
    if (MUT & M_ROUND_XR) return nmo_mul_nc(nmo_ty<T>::round(nmo_mul_nc(x, r)), w);
    if (OPT & O_XRW) return nmo_mul_nc(x, nmo_mul_nc(r, w));
    if (OPT & O_XWR) return nmo_mul_nc(nmo_mul_nc(x, w), r);
    return nmo_mul_nc(nmo_mul_nc(x, r), w);
}

template <class T, unsigned MUT> NMO_D float w_at(const T *w, int64_t j, int64_t n)
{
    return nmo_ldf(w + ((MUT & M_W_OFF1) ? (j + 1) % n : j));
}

/* Pass 1 on one vector at element j0: the values the norm uses (x, or h = RN(x + r)
 * with the new residual stored), their squares accumulated (elements below nred). */
template <class T, int VB, unsigned OPT, unsigned MUT, int RESID, int ACC16>
NMO_D nmo_vecb<VB> p1_vec(const T *xr, const T *rr, T *ror, int64_t j0, int64_t nred, float &acc)
{
    constexpr int E = VB / (int)sizeof(T);
    nmo_vecb<VB> xv = nmo_ld<T, VB>(xr + j0);
    if (!RESID) {
#pragma unroll
        for (int e = 0; e < E; e++)
            if (j0 + e < nred) acc = sq_acc<OPT, ACC16>(acc, nmo_ty<T>::lane(xv.w, e));
        return xv;
    }
    nmo_vecb<VB> rv = nmo_ld<T, VB>(rr + j0), hv;
#pragma unroll
    for (int e = 0; e < E; e++) {
        const float sm = nmo_ty<T>::lane(xv.w, e) + nmo_ty<T>::lane(rv.w, e);
        nmo_ty<T>::set_lane(hv.w, e, sm, (MUT & M_RESID_RZ) != 0);
        float q = (OPT & O_SS_H) ? nmo_ty<T>::lane(hv.w, e) : sm;
        if (MUT & M_NORM_X) q = nmo_ty<T>::lane(xv.w, e);
        if (j0 + e < nred) acc = sq_acc<OPT, ACC16>(acc, q);
    }
    if (!(MUT & M_NO_RESID_STORE)) nmo_st<T, VB>(ror + j0, hv);
    return (MUT & M_NORM_X) ? xv : hv;
}
/* The same for one element; returns the value the norm uses. */
template <class T, unsigned OPT, unsigned MUT, int RESID, int ACC16>
NMO_D float p1_one(const T *xr, const T *rr, T *ror, int64_t j, int64_t nred, float &acc)
{
    const float xv = nmo_ldf(xr + j);
    if (!RESID) {
        if (j < nred) acc = sq_acc<OPT, ACC16>(acc, xv);
        return xv;
    }
    const float sm = xv + nmo_ldf(rr + j);
    const T h = nmo_ty<T>::store(sm, (MUT & M_RESID_RZ) != 0);
    const float hf = nmo_ty<T>::to_f(h);
    float q = (OPT & O_SS_H) ? hf : sm;
    if (MUT & M_NORM_X) q = xv;
    if (j < nred) acc = sq_acc<OPT, ACC16>(acc, q);
    if (!(MUT & M_NO_RESID_STORE)) ror[j] = h;
    return (MUT & M_NORM_X) ? xv : hf;
}
/* Pass 2 re-reads what pass 1 left (the thread's own writes): x, or the stored h; the
 * mutant that never stored h recomputes it. */
template <class T, int VB, unsigned MUT, int RESID>
NMO_D nmo_vecb<VB> p2_vec(const T *xr, const T *rr, const T *ror, int64_t j0)
{
    constexpr int E = VB / (int)sizeof(T);
    if (!RESID || (MUT & M_NORM_X)) return nmo_ld<T, VB>(xr + j0);
    if (!(MUT & M_NO_RESID_STORE)) return nmo_ld<T, VB>(ror + j0);
    nmo_vecb<VB> xv = nmo_ld<T, VB>(xr + j0), rv = nmo_ld<T, VB>(rr + j0), hv;
#pragma unroll
    for (int e = 0; e < E; e++)
        nmo_ty<T>::set_lane(hv.w, e, nmo_ty<T>::lane(xv.w, e) + nmo_ty<T>::lane(rv.w, e), false);
    return hv;
}
template <class T, unsigned MUT, int RESID>
NMO_D float p2_one(const T *xr, const T *rr, const T *ror, int64_t j)
{
    if (!RESID || (MUT & M_NORM_X)) return nmo_ldf(xr + j);
    if (!(MUT & M_NO_RESID_STORE)) return nmo_ldf(ror + j);
    return nmo_ty<T>::to_f(nmo_ty<T>::store(nmo_ldf(xr + j) + nmo_ldf(rr + j), false));
}

/* y for one vector of x starting at element j0 of the row. */
template <class T, int VB, unsigned OPT, unsigned MUT>
NMO_D void rms_store_vec(T *yr, const T *w, const nmo_vecb<VB> &xv, int64_t j0, int64_t n, float r,
                         bool wvec)
{
    constexpr int E = VB / (int)sizeof(T);
    constexpr bool RZ = (MUT & M_STORE_RZ) != 0;
    nmo_vecb<VB> wv, yv;
    if (wvec) wv = nmo_ld<T, VB>(w + j0);
#pragma unroll
    for (int e = 0; e < E; e++) {
        float we = wvec ? nmo_ty<T>::lane(wv.w, e) : w_at<T, MUT>(w, j0 + e, n);
        nmo_ty<T>::set_lane(yv.w, e, rms_out<T, OPT, MUT>(nmo_ty<T>::lane(xv.w, e), r, we), RZ);
    }
    nmo_st<T, VB>(yr + j0, yv);
}

/* PF > 0 (rms_norm only): persistent launch, PF blocks per multiprocessor, grid-stride
 * over the rows; the next row's cached vectors are loaded right after this row's sum of
 * squares, so that they are in flight during the block reduction and the stores. */
template <class T, int GROUP, int BLOCK, int VB, int RED, unsigned OPT, unsigned MUT, int CACHE, int RESID, int PF>
__global__ void __launch_bounds__(BLOCK, PF > 0 ? PF : 1)
    rms_kernel(const T *__restrict__ x, const T *__restrict__ res, const T *__restrict__ w,
               T *__restrict__ y, T *__restrict__ rout, int64_t rows, int64_t n, float eps, float inv_n)
{
    constexpr int E = VB / (int)sizeof(T);
    constexpr int ACC16 = (MUT & M_ACC_BF16) ? NMO_ACC_BF16 : (MUT & M_ACC_FP16) ? NMO_ACC_FP16 : NMO_ACC32;
    constexpr bool RZ = (MUT & M_STORE_RZ) != 0;
    __shared__ float smem[BLOCK + 1];
    const int NT = GROUP == G_BLOCK ? BLOCK : NMO_WARP_SIZE; /* threads per row */
    const int t = GROUP == G_BLOCK ? (int)threadIdx.x : (int)threadIdx.x % NMO_WARP_SIZE;
    const int64_t rpb = GROUP == G_BLOCK ? 1 : BLOCK / NMO_WARP_SIZE; /* rows per block */
    const int64_t r0 = (int64_t)blockIdx.x * rpb + (GROUP == G_BLOCK ? 0 : (int)threadIdx.x / NMO_WARP_SIZE);
    const int64_t rstep = (int64_t)gridDim.x * rpb;
    static_assert(!(PF && RESID), "prefetch: rms_norm only (fused_add writes in pass 1)");

    nmo_vecb<VB> cache[CACHE];
    if (PF && r0 < rows) nmo_ld_row_cache<T, VB, CACHE>(x + r0 * n, n, t, NT, cache);
    for (int64_t row = r0; row < rows; row += rstep) {
        const T *xr = x + row * n;
        const T *rr = RESID ? res + row * n : xr;
        T *ror = RESID ? rout + row * n : y + row * n;
        T *yr = y + row * n;
        int64_t head, nvec;
        nmo_row_split<T, VB>(xr, n, &head, &nvec);
        const int64_t body_end = head + nvec * E;
        const int64_t nred = (MUT & M_SKIP_LAST) ? n - 1 : n;

        /* pass 1: sum of squares (the norm's input vectors kept in registers) */
        float acc = 0.0f;
        if (t < head) (void)p1_one<T, OPT, MUT, RESID, ACC16>(xr, rr, ror, t, nred, acc);
#pragma unroll
        for (int i = 0; i < CACHE; i++) {
            const int64_t v = t + (int64_t)i * NT;
            if (v < nvec) {
                if (PF) { /* loaded one row earlier */
#pragma unroll
                    for (int e = 0; e < E; e++)
                        if (head + v * E + e < nred) acc = sq_acc<OPT, ACC16>(acc, nmo_ty<T>::lane(cache[i].w, e));
                } else {
                    cache[i] = p1_vec<T, VB, OPT, MUT, RESID, ACC16>(xr, rr, ror, head + v * E, nred, acc);
                }
            }
        }
        for (int64_t v = t + (int64_t)CACHE * NT; v < nvec; v += NT)
            (void)p1_vec<T, VB, OPT, MUT, RESID, ACC16>(xr, rr, ror, head + v * E, nred, acc);
        for (int64_t j = body_end + t; j < n; j += NT) (void)p1_one<T, OPT, MUT, RESID, ACC16>(xr, rr, ror, j, nred, acc);
        nmo_vecb<VB> nxt[PF ? CACHE : 1];
        if (PF && row + rstep < rows) nmo_ld_row_cache<T, VB, CACHE>(xr + rstep * n, n, t, NT, nxt);

        float ss;
        if (GROUP == G_BLOCK) {
            ss = nmo_block_sum<BLOCK, RED, ACC16>(acc, smem);
        } else {
            ss = nmo_warp_sum<RED, ACC16>(acc);
            if (RED != NMO_RED_SHFL_XOR) ss = nmo_shfl(ss, 0);
        }

        /* the reciprocal root */
        float ms = (MUT & M_MEAN_N1) ? ss / (float)(n - 1) : (OPT & O_MEAN_RECIP) ? nmo_mul_nc(ss, inv_n) : ss / (float)n;
        float r;
        if (MUT & M_EPS_OUTSIDE) {
            r = 1.0f / (nmo_sqrtf(ms) + eps);
        } else {
            const float d = (MUT & M_NO_EPS) ? ms : ms + eps;
            r = (OPT & O_ROOT_DIV) ? 1.0f / nmo_sqrtf(d) : nmo_rsqrtf(d);
        }

        /* pass 2: y = x * r * w (x: the norm's input; h for fused_add) */
        const bool wvec = !(MUT & M_W_OFF1) && ((uintptr_t)(w + head) % (uintptr_t)VB) == 0;
        if (t < head)
            nmo_stf(yr + t, rms_out<T, OPT, MUT>(p2_one<T, MUT, RESID>(xr, rr, ror, t), r, w_at<T, MUT>(w, t, n)), RZ);
#pragma unroll
        for (int i = 0; i < CACHE; i++) {
            const int64_t v = t + (int64_t)i * NT;
            if (v < nvec) rms_store_vec<T, VB, OPT, MUT>(yr, w, cache[i], head + v * E, n, r, wvec);
        }
        for (int64_t v = t + (int64_t)CACHE * NT; v < nvec; v += NT)
            rms_store_vec<T, VB, OPT, MUT>(yr, w, p2_vec<T, VB, MUT, RESID>(xr, rr, ror, head + v * E),
                                           head + v * E, n, r, wvec);
        for (int64_t j = body_end + t; j < n; j += NT)
            nmo_stf(yr + j, rms_out<T, OPT, MUT>(p2_one<T, MUT, RESID>(xr, rr, ror, j), r, w_at<T, MUT>(w, j, n)), RZ);
        if (PF) {
#pragma unroll
            for (int i = 0; i < CACHE; i++) cache[i] = nxt[PF ? i : 0];
        }
    }
}

template <class T, int GROUP, int BLOCK, int VB, int RED, unsigned OPT, unsigned MUT, int CACHE,
          int RESID = 0, int PF = 0>
int rms_launch(const nmo_plugin_args *a, char *msg, size_t msglen)
{
    int64_t rows, n;
    nmo_k_rows(&a->in[0], &rows, &n);
    if ((MUT & M_MEAN_N1) && n < 2) return NMO_PLUGIN_UNSUPPORTED;
    const float eps = (float)nmo_k_param(a, 0, 1e-6);
    const float inv_n = 1.0f / (float)n;
    int64_t blocks = rows;
    if (GROUP == G_WARP) {
        const int64_t rpb = BLOCK / nmo_k_warp_size();
        blocks = (rows + rpb - 1) / rpb;
    }
    const T *xp = (const T *)a->in[0].data;
    const T *rp = RESID ? (const T *)a->in[1].data : (const T *)NULL;
    const T *wp = (const T *)a->in[RESID ? 2 : 1].data;
    T *rop = RESID ? (T *)a->out[1].data : (T *)NULL;
    nmo_launch(rms_kernel<T, GROUP, BLOCK, VB, RED, OPT, MUT, CACHE, RESID, PF>,
               dim3(PF ? nmo_k_persist_grid(blocks, PF) : nmo_k_grid(blocks)),
               dim3(BLOCK), 0, (hipStream_t)a->stream, xp, rp, wp, (T *)a->out[0].data, rop, rows, n,
               eps, inv_n);
    NMO_HIP_CHECK_LAUNCH(RESID ? "fused_add_rms_norm" : "rms_norm");
    return NMO_PLUGIN_OK;
}

} // namespace

#endif
