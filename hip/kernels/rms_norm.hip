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

int rms_supports(const nmo_plugin_args *a)
{
    if (!nmo_k_basic_ok(a, 2, 1)) return 0;
    if (nmo_k_param(a, 1, 0) != 0) return 0; /* offset (Gemma's 1 + w): not implemented */
    int64_t rows, n;
    nmo_k_rows(&a->in[0], &rows, &n);
    if (a->in[1].ndims != 1 || a->in[1].dims[0] != n) return 0;
    if (!nmo_k_same_dims(&a->in[0], &a->out[0])) return 0;
    /* x and y rows share their alignment (vector body) */
    if (!nmo_k_aligned16(a->in[0].data) || !nmo_k_aligned16(a->out[0].data)) return 0;
    return n >= 1 && n <= (1 << 24); /* (float)N exact */
}
int fadd_supports(const nmo_plugin_args *a)
{
    if (!nmo_k_basic_ok(a, 3, 2)) return 0;
    if (nmo_k_param(a, 1, 0) != 0) return 0; /* offset: not implemented */
    int64_t rows, n;
    nmo_k_rows(&a->in[0], &rows, &n);
    if (a->in[2].ndims != 1 || a->in[2].dims[0] != n) return 0;
    if (!nmo_k_same_dims(&a->in[0], &a->in[1]) || !nmo_k_same_dims(&a->in[0], &a->out[0]) ||
        !nmo_k_same_dims(&a->in[0], &a->out[1]))
        return 0;
    if (!nmo_k_aligned16(a->in[0].data) || !nmo_k_aligned16(a->in[1].data) ||
        !nmo_k_aligned16(a->out[0].data) || !nmo_k_aligned16(a->out[1].data))
        return 0;
    return n >= 1 && n <= (1 << 24);
}

#define RMS_K(fname, ...)                                                                \
    int fname(const nmo_plugin_args *a, char *msg, size_t msglen)                        \
    {                                                                                    \
        NMO_K_DISPATCH(rms_launch, __VA_ARGS__)                                          \
    }                                                                                \
    NMO_K_ROW_GEO(fname, __VA_ARGS__)

/* correct variants */
RMS_K(k_block256, G_BLOCK, 256, 16, NMO_RED_SHFL_DOWN, 0u, 0u, 4)
RMS_K(k_block1024_tree, G_BLOCK, 1024, 16, NMO_RED_SMEM_TREE, O_MEAN_RECIP | O_ROOT_DIV | O_XRW, 0u, 1)
RMS_K(k_block128_vec8, G_BLOCK, 128, 8, NMO_RED_SHFL_XOR, O_NOFMA | O_XWR, 0u, 8)
RMS_K(k_block512_vec4, G_BLOCK, 512, 4, NMO_RED_SHFL_DOWN, O_ROOT_DIV, 0u, 4)
RMS_K(k_warp_row, G_WARP, 256, 16, NMO_RED_SHFL_XOR, O_MEAN_RECIP | O_XWR, 0u, 4)
/* a whole 4096-wide bf16 row in one warp's registers (16 vectors per lane): no block
 * barrier, 16 loads in flight per lane (the bandwidth variant) */
RMS_K(k_warp_row16, G_WARP, 128, 16, NMO_RED_SHFL_XOR, 0u, 0u, 16)
/* persistent, the next row prefetched during the reduction and the stores */
RMS_K(k_block256_pf, G_BLOCK, 256, 16, NMO_RED_SHFL_XOR, O_MEAN_RECIP, 0u, 2, 0, 4)
RMS_K(k_block512_pf, G_BLOCK, 512, 16, NMO_RED_SHFL_DOWN, O_XWR, 0u, 1, 0, 2)
RMS_K(k_block128_pf, G_BLOCK, 128, 16, NMO_RED_SHFL_XOR, O_XRW, 0u, 4, 0, 8)
#define FADD_K(fname, ...)                                                               \
    int fname(const nmo_plugin_args *a, char *msg, size_t msglen)                        \
    {                                                                                    \
        NMO_K_DISPATCH(rms_launch, __VA_ARGS__, 1)                                       \
    }                                                                                \
    NMO_K_ROW_GEO(fname, __VA_ARGS__)
FADD_K(f_block256, G_BLOCK, 256, 16, NMO_RED_SHFL_DOWN, 0u, 0u, 4)
FADD_K(f_block1024_tree, G_BLOCK, 1024, 16, NMO_RED_SMEM_TREE, O_SS_H | O_MEAN_RECIP | O_ROOT_DIV | O_XRW, 0u, 1)
FADD_K(f_warp_row, G_WARP, 256, 16, NMO_RED_SHFL_XOR, O_MEAN_RECIP | O_XWR, 0u, 4)
#define FADD_MUT(fname, m) FADD_K(fname, G_BLOCK, 256, 16, NMO_RED_SHFL_DOWN, 0u, m, 4)
FADD_MUT(f_mut_norm_x, M_NORM_X)
FADD_MUT(f_mut_resid_rz, M_RESID_RZ)
FADD_MUT(f_mut_no_resid_store, M_NO_RESID_STORE)
FADD_MUT(f_mut_round_hr, M_ROUND_XR)
FADD_MUT(f_mut_acc_bf16, M_ACC_BF16)
FADD_MUT(f_mut_w_off1, M_W_OFF1)

/* mutants: block256 with one bug */
#define RMS_MUT(fname, m) RMS_K(fname, G_BLOCK, 256, 16, NMO_RED_SHFL_DOWN, 0u, m, 4)
RMS_MUT(k_mut_acc_bf16, M_ACC_BF16)
RMS_MUT(k_mut_acc_fp16, M_ACC_FP16)
RMS_MUT(k_mut_no_eps, M_NO_EPS)
RMS_MUT(k_mut_eps_outside, M_EPS_OUTSIDE)
RMS_MUT(k_mut_mean_n1, M_MEAN_N1)
RMS_MUT(k_mut_skip_last, M_SKIP_LAST)
RMS_MUT(k_mut_w_off1, M_W_OFF1)
RMS_MUT(k_mut_store_rz, M_STORE_RZ)
RMS_MUT(k_mut_round_xr, M_ROUND_XR)

} // namespace

/* The table is host data: the device pass of a HIP compile must not see it (clang makes
 * namespace-scope const objects __constant__ and would emit host function pointers). */
#if !defined(__HIP_DEVICE_COMPILE__)
#define RMS_ENTRY(name, correct, desc, fn)                                               \
    {"rms_norm", name, "fp32 bf16 fp16", NMO_HIP_FN_PLAN, correct, desc, rms_supports, fn, fn##_geo}

NMO_HIP_TABLE(rms_norm);
extern "C" const nmo_plugin_kernel nmo_hip_kernels_rms_norm[] = {
    RMS_ENTRY("block256", 1,
              "block per row, 256 threads, 16-byte vectors cached in registers, fmaf squares, "
              "shuffle-down tree + smem, ss/N, rsqrtf, (x*r)*w",
              k_block256),
    RMS_ENTRY("block1024_tree", 1,
              "block per row, 1024 threads, 16-byte vectors, shared-memory halving tree, "
              "ss*RN(1/N), 1/sqrtf, x*(r*w)",
              k_block1024_tree),
    RMS_ENTRY("block128_vec8", 1,
              "block per row, 128 threads, 8-byte vectors, x*x then add (no FMA), xor "
              "butterfly + smem, ss/N, rsqrtf, (x*w)*r",
              k_block128_vec8),
    RMS_ENTRY("block512_vec4", 1,
              "block per row, 512 threads, 4-byte vectors, shuffle-down tree, ss/N, 1/sqrtf, "
              "(x*r)*w",
              k_block512_vec4),
    RMS_ENTRY("warp_row", 1,
              "one warp (32 or 64 lanes) per row, 16-byte vectors, xor butterfly, ss*RN(1/N), "
              "rsqrtf, (x*w)*r",
              k_warp_row),
    RMS_ENTRY("warp_row16", 1,
              "one warp per row, 4 rows per 128-thread block, 16 16-byte vectors per lane cached "
              "(a 4096-wide bf16 row read once), xor butterfly, ss/N, rsqrtf, (x*r)*w",
              k_warp_row16),
    RMS_ENTRY("block256_pf", 1,
              "persistent (4 blocks per SM), 256 threads per row, 2 16-byte vectors per thread cached, "
              "next row prefetched during the reduction, xor butterfly, ss*RN(1/N), rsqrtf, (x*r)*w",
              k_block256_pf),
    RMS_ENTRY("block512_pf", 1,
              "persistent (2 blocks per SM), 512 threads per row, 1 16-byte vector cached, next row "
              "prefetched, shuffle-down tree, ss/N, rsqrtf, (x*w)*r",
              k_block512_pf),
    RMS_ENTRY("block128_pf", 1,
              "persistent (8 blocks per SM), 128 threads per row, 4 16-byte vectors cached, next row "
              "prefetched, xor butterfly, ss/N, rsqrtf, x*(r*w)",
              k_block128_pf),
    RMS_ENTRY("mut_acc_bf16", 0, "MUTANT: every accumulation step of sum(x^2) rounded to bf16",
              k_mut_acc_bf16),
    RMS_ENTRY("mut_acc_fp16", 0,
              "MUTANT: every accumulation step of sum(x^2) rounded to fp16 (overflows)",
              k_mut_acc_fp16),
    RMS_ENTRY("mut_no_eps", 0, "MUTANT: eps dropped, r = rsqrtf(ms)", k_mut_no_eps),
    RMS_ENTRY("mut_eps_outside", 0, "MUTANT: eps moved out of the root, r = 1/(sqrtf(ms)+eps)",
              k_mut_eps_outside),
    RMS_ENTRY("mut_mean_n1", 0, "MUTANT: mean of squares divided by N-1", k_mut_mean_n1),
    RMS_ENTRY("mut_skip_last", 0, "MUTANT: the reduction skips the row's last element (still /N)",
              k_mut_skip_last),
    RMS_ENTRY("mut_w_off1", 0, "MUTANT: weight index off by one, w[(j+1) mod N]", k_mut_w_off1),
    RMS_ENTRY("mut_store_rz", 0, "MUTANT: final store truncates (RZ) instead of RNE",
              k_mut_store_rz),
    RMS_ENTRY("mut_round_xr", 0,
              "MUTANT: x*r rounded to the storage dtype before *w (eager two-step, not the fused plan)",
              k_mut_round_xr),
};
extern "C" const int nmo_hip_kernels_rms_norm_n =
    (int)(sizeof nmo_hip_kernels_rms_norm / sizeof nmo_hip_kernels_rms_norm[0]);

#define FADD_ENTRY(name, correct, desc, fn)                                              \
    {"fused_add_rms_norm", name, "fp32 bf16 fp16", NMO_HIP_FN_PLAN, correct, desc, fadd_supports, fn, fn##_geo}

NMO_HIP_TABLE(fused_add_rms_norm);
extern "C" const nmo_plugin_kernel nmo_hip_kernels_fused_add_rms_norm[] = {
    FADD_ENTRY("block256", 1,
               "block per row, 256 threads, 16-byte vectors: s=x+r in fp32, h=RN(s) stored, "
               "squares of s, h cached for y=(h*r)*w",
               f_block256),
    FADD_ENTRY("block1024_tree", 1,
               "block per row, 1024 threads, smem tree over squares of the stored h, ss*RN(1/N), "
               "1/sqrtf, h*(r*w)",
               f_block1024_tree),
    FADD_ENTRY("warp_row", 1, "one warp per row, xor butterfly, ss*RN(1/N), rsqrtf, (h*w)*r", f_warp_row),
    FADD_ENTRY("mut_norm_x", 0, "MUTANT: the norm reads x, not x + residual (the residual is stored)",
               f_mut_norm_x),
    FADD_ENTRY("mut_resid_rz", 0, "MUTANT: the new residual stored truncated (RZ)", f_mut_resid_rz),
    FADD_ENTRY("mut_no_resid_store", 0, "MUTANT: the new residual is never written back",
               f_mut_no_resid_store),
    FADD_ENTRY("mut_round_hr", 0, "MUTANT: h*r rounded to the storage dtype before *w (fused plan)",
               f_mut_round_hr),
    FADD_ENTRY("mut_acc_bf16", 0, "MUTANT: every accumulation step of sum(h^2) rounded to bf16",
               f_mut_acc_bf16),
    FADD_ENTRY("mut_w_off1", 0, "MUTANT: weight index off by one, w[(j+1) mod N]", f_mut_w_off1),
};
extern "C" const int nmo_hip_kernels_fused_add_rms_norm_n =
    (int)(sizeof nmo_hip_kernels_fused_add_rms_norm / sizeof nmo_hip_kernels_fused_add_rms_norm[0]);
#endif
