/* numoracle HIP kernels: layer_norm forward, two-pass statistics,
 *   y = (x - mean) * rstd * w + b,  rstd = rsqrt(mean((x - mean)^2) + eps).
 *
 *   in  x[..., N], w[N], b[N]  (fp32, bf16 or fp16; one dtype)   out y[..., N]
 *   param eps (float)
 *
 * Plan honoured (every variant): the dtype's default with the platform's math library
 * (NMO_HIP_FN_PLAN); refs/layer_norm.c encloses the two-pass kernels: sum in any order
 * (fp32), mean = sum/N or sum*RN(1/N), d = x - mean, ss = sum d^2 (any order, FMA or
 * not), var = ss/N or ss*RN(1/N), rstd = rsqrtf(var + eps) or 1/sqrtf, and the output in
 * the direct form (d*rstd*w, any association, last product FMA'd into +b or not) or the
 * fused scale/shift form (a = w*rstd, y = x*a + (b - mean*a), FMA or not). Welford's
 * online statistics are NOT in that plan, nor is E[x^2] - mean^2 (a mutant here).
 *
 * Structure as rms_norm.hip: block (or warp) per row, VB-byte vectors with scalar
 * head/tail, the row cached in registers across the three passes, shuffle/smem trees. */
#include "kcommon.h"

namespace {

enum : unsigned {
    M_ONEPASS_VAR = 1u << 0, /* var = E[x^2] - mean^2 (cancels on rows with a large mean) */
    M_VAR_N1 = 1u << 1,      /* unbiased variance ss / (N-1) */
    M_NO_BIAS = 1u << 2,     /* + b dropped */
    M_ACC_BF16 = 1u << 3,    /* both sums accumulated in bf16 */
    M_STORE_RZ = 1u << 4,    /* truncating store */
    M_EPS_OUTSIDE = 1u << 5, /* rstd = 1 / (sqrt(var) + eps) */
};
enum : unsigned {
    O_RECIP_N = 1u,  /* mean and var as products with RN(1/N) (else divisions) */
    O_ROOT_DIV = 2u, /* rstd = 1/sqrtf (else rsqrtf) */
    O_AFFINE = 4u,   /* y = fma(x, a, fma(-mean, a, b)), a = w*rstd (else direct) */
    O_NOFMA = 8u,    /* direct form without FMA: ((d*rstd)*w) + b; squares rounded */
};
enum { G_BLOCK = 0, G_WARP = 1 };

template <unsigned OPT, unsigned MUT>
NMO_D float ln_out(float x, float mean, float rstd, float w, float b)
{
    const float bb = (MUT & M_NO_BIAS) ? 0.0f : b;
    if (OPT & O_AFFINE) {
        const float a = nmo_mul_nc(w, rstd);
        return nmo_fmaf(x, a, nmo_fmaf(-mean, a, bb));
    }
    const float d = x - mean;
    if (OPT & O_NOFMA) return nmo_madd_nofma(bb, nmo_mul_nc(d, rstd), w);
    return nmo_fmaf(nmo_mul_nc(d, rstd), w, bb);
}

template <class T, int VB, unsigned OPT, unsigned MUT>
NMO_D void ln_store_vec(T *yr, const T *w, const T *b, const nmo_vecb<VB> &xv, int64_t j0, float mean,
                        float rstd, bool wvec)
{
    constexpr int E = VB / (int)sizeof(T);
    nmo_vecb<VB> wv, bv, yv;
    if (wvec) {
        wv = nmo_ld<T, VB>(w + j0);
        bv = nmo_ld<T, VB>(b + j0);
    }
#pragma unroll
    for (int e = 0; e < E; e++) {
        const float we = wvec ? nmo_ty<T>::lane(wv.w, e) : nmo_ldf(w + j0 + e);
        const float be = wvec ? nmo_ty<T>::lane(bv.w, e) : nmo_ldf(b + j0 + e);
        nmo_ty<T>::set_lane(yv.w, e, ln_out<OPT, MUT>(nmo_ty<T>::lane(xv.w, e), mean, rstd, we, be),
                            (MUT & M_STORE_RZ) != 0);
    }
    nmo_st<T, VB>(yr + j0, yv);
}

template <int GROUP, int BLOCK, int RED, int ACC16> NMO_D float row_sum(float v, float *smem)
{
    if (GROUP == G_BLOCK) return nmo_block_sum<BLOCK, RED, ACC16>(v, smem);
    float s = nmo_warp_sum<RED, ACC16>(v);
    return RED == NMO_RED_SHFL_XOR ? s : nmo_shfl(s, 0);
}

template <unsigned OPT, int ACC16> NMO_D float sq_acc(float acc, float d)
{
    return nmo_acc_round<ACC16>((OPT & O_NOFMA) ? nmo_madd_nofma(acc, d, d) : nmo_fmaf(d, d, acc));
}

template <class T, int GROUP, int BLOCK, int VB, int RED, unsigned OPT, unsigned MUT, int CACHE>
__global__ void __launch_bounds__(BLOCK)
    ln_kernel(const T *__restrict__ x, const T *__restrict__ w, const T *__restrict__ b,
              T *__restrict__ y, int64_t rows, int64_t n, float eps, float inv_n)
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

    for (int64_t row = r0; row < rows; row += rstep) {
        const T *xr = x + row * n;
        T *yr = y + row * n;
        int64_t head, nvec;
        nmo_row_split<T, VB>(xr, n, &head, &nvec);
        const int64_t body_end = head + nvec * E;

        /* pass 1: sum (and, for the one-pass mutant, the sum of squares) */
        nmo_vecb<VB> cache[CACHE];
        float acc = 0.0f, acc2 = 0.0f;
        if (t < head) {
            const float v = nmo_ldf(xr + t);
            acc = nmo_acc_round<ACC16>(acc + v);
            if (MUT & M_ONEPASS_VAR) acc2 = sq_acc<OPT, ACC16>(acc2, v);
        }
#pragma unroll
        for (int i = 0; i < CACHE; i++) {
            const int64_t v = t + (int64_t)i * NT;
            if (v < nvec) {
                cache[i] = nmo_ld<T, VB>(xr + head + v * E);
#pragma unroll
                for (int e = 0; e < E; e++) {
                    const float q = nmo_ty<T>::lane(cache[i].w, e);
                    acc = nmo_acc_round<ACC16>(acc + q);
                    if (MUT & M_ONEPASS_VAR) acc2 = sq_acc<OPT, ACC16>(acc2, q);
                }
            }
        }
        for (int64_t v = t + (int64_t)CACHE * NT; v < nvec; v += NT) {
            const nmo_vecb<VB> qv = nmo_ld<T, VB>(xr + head + v * E);
#pragma unroll
            for (int e = 0; e < E; e++) {
                const float q = nmo_ty<T>::lane(qv.w, e);
                acc = nmo_acc_round<ACC16>(acc + q);
                if (MUT & M_ONEPASS_VAR) acc2 = sq_acc<OPT, ACC16>(acc2, q);
            }
        }
        for (int64_t j = body_end + t; j < n; j += NT) {
            const float v = nmo_ldf(xr + j);
            acc = nmo_acc_round<ACC16>(acc + v);
            if (MUT & M_ONEPASS_VAR) acc2 = sq_acc<OPT, ACC16>(acc2, v);
        }
        const float sum = row_sum<GROUP, BLOCK, RED, ACC16>(acc, smem);
        const float mean = (OPT & O_RECIP_N) ? nmo_mul_nc(sum, inv_n) : sum / (float)n;

        /* pass 2: sum of squared deviations */
        float ss;
        if (MUT & M_ONEPASS_VAR) {
            const float s2 = row_sum<GROUP, BLOCK, RED, ACC16>(acc2, smem);
            ss = s2 - (float)n * (mean * mean);
        } else {
            float a2 = 0.0f;
            if (t < head) a2 = sq_acc<OPT, ACC16>(a2, nmo_ldf(xr + t) - mean);
#pragma unroll
            for (int i = 0; i < CACHE; i++) {
                const int64_t v = t + (int64_t)i * NT;
                if (v < nvec) {
#pragma unroll
                    for (int e = 0; e < E; e++) a2 = sq_acc<OPT, ACC16>(a2, nmo_ty<T>::lane(cache[i].w, e) - mean);
                }
            }
            for (int64_t v = t + (int64_t)CACHE * NT; v < nvec; v += NT) {
                const nmo_vecb<VB> qv = nmo_ld<T, VB>(xr + head + v * E);
#pragma unroll
                for (int e = 0; e < E; e++) a2 = sq_acc<OPT, ACC16>(a2, nmo_ty<T>::lane(qv.w, e) - mean);
            }
            for (int64_t j = body_end + t; j < n; j += NT) a2 = sq_acc<OPT, ACC16>(a2, nmo_ldf(xr + j) - mean);
            ss = row_sum<GROUP, BLOCK, RED, ACC16>(a2, smem);
        }
        const float var = (MUT & M_VAR_N1) ? ss / (float)(n - 1) : (OPT & O_RECIP_N) ? nmo_mul_nc(ss, inv_n) : ss / (float)n;
        float rstd;
        if (MUT & M_EPS_OUTSIDE) rstd = 1.0f / (nmo_sqrtf(var) + eps);
        else rstd = (OPT & O_ROOT_DIV) ? 1.0f / nmo_sqrtf(var + eps) : nmo_rsqrtf(var + eps);

        /* pass 3: y */
        const bool wvec = ((uintptr_t)(w + head) % (uintptr_t)VB) == 0 && ((uintptr_t)(b + head) % (uintptr_t)VB) == 0;
        if (t < head) nmo_stf(yr + t, ln_out<OPT, MUT>(nmo_ldf(xr + t), mean, rstd, nmo_ldf(w + t), nmo_ldf(b + t)), RZ);
#pragma unroll
        for (int i = 0; i < CACHE; i++) {
            const int64_t v = t + (int64_t)i * NT;
            if (v < nvec) ln_store_vec<T, VB, OPT, MUT>(yr, w, b, cache[i], head + v * E, mean, rstd, wvec);
        }
        for (int64_t v = t + (int64_t)CACHE * NT; v < nvec; v += NT)
            ln_store_vec<T, VB, OPT, MUT>(yr, w, b, nmo_ld<T, VB>(xr + head + v * E), head + v * E, mean, rstd, wvec);
        for (int64_t j = body_end + t; j < n; j += NT)
            nmo_stf(yr + j, ln_out<OPT, MUT>(nmo_ldf(xr + j), mean, rstd, nmo_ldf(w + j), nmo_ldf(b + j)), RZ);
    }
}

template <class T, int GROUP, int BLOCK, int VB, int RED, unsigned OPT, unsigned MUT, int CACHE>
int ln_launch(const nmo_plugin_args *a, char *msg, size_t msglen)
{
    int64_t rows, n;
    nmo_k_rows(&a->in[0], &rows, &n);
    if ((MUT & M_VAR_N1) && n < 2) return NMO_PLUGIN_UNSUPPORTED;
    const float eps = (float)nmo_k_param(a, 0, 1e-5);
    const float inv_n = 1.0f / (float)n;
    int64_t blocks = rows;
    if (GROUP == G_WARP) {
        const int64_t rpb = BLOCK / nmo_k_warp_size();
        blocks = (rows + rpb - 1) / rpb;
    }
    nmo_launch(ln_kernel<T, GROUP, BLOCK, VB, RED, OPT, MUT, CACHE>, dim3(nmo_k_grid(blocks)),
               dim3(BLOCK), 0, (hipStream_t)a->stream, (const T *)a->in[0].data,
               (const T *)a->in[1].data, (const T *)a->in[2].data, (T *)a->out[0].data, rows, n,
               eps, inv_n);
    NMO_HIP_CHECK_LAUNCH("layer_norm");
    return NMO_PLUGIN_OK;
}

int ln_supports(const nmo_plugin_args *a)
{
    if (!nmo_k_basic_ok(a, 3, 1)) return 0;
    int64_t rows, n;
    nmo_k_rows(&a->in[0], &rows, &n);
    for (int k = 1; k < 3; k++)
        if (a->in[k].ndims != 1 || a->in[k].dims[0] != n) return 0;
    if (!nmo_k_same_dims(&a->in[0], &a->out[0])) return 0;
    if (!nmo_k_aligned16(a->in[0].data) || !nmo_k_aligned16(a->out[0].data)) return 0;
    return n >= 1 && n <= (1 << 24);
}

#define LN_K(fname, ...)                                                                 \
    int fname(const nmo_plugin_args *a, char *msg, size_t msglen)                        \
    {                                                                                    \
        NMO_K_DISPATCH(ln_launch, __VA_ARGS__)                                           \
    }                                                                                \
    NMO_K_ROW_GEO(fname, __VA_ARGS__)

LN_K(k_block256, G_BLOCK, 256, 16, NMO_RED_SHFL_DOWN, 0u, 0u, 4)
LN_K(k_block1024_tree, G_BLOCK, 1024, 16, NMO_RED_SMEM_TREE, O_RECIP_N | O_ROOT_DIV | O_NOFMA, 0u, 1)
LN_K(k_warp_row, G_WARP, 256, 16, NMO_RED_SHFL_XOR, O_AFFINE, 0u, 4)
LN_K(k_block128_vec8, G_BLOCK, 128, 8, NMO_RED_SHFL_XOR, O_RECIP_N | O_AFFINE, 0u, 8)
/* the row in one warp's registers (16 vectors per lane), no block barrier */
LN_K(k_warp_row16, G_WARP, 128, 16, NMO_RED_SHFL_XOR, 0u, 0u, 16)
#define LN_MUT(fname, m) LN_K(fname, G_BLOCK, 256, 16, NMO_RED_SHFL_DOWN, 0u, m, 4)
LN_MUT(k_mut_onepass_var, M_ONEPASS_VAR)
LN_MUT(k_mut_var_n1, M_VAR_N1)
LN_MUT(k_mut_no_bias, M_NO_BIAS)
LN_MUT(k_mut_acc_bf16, M_ACC_BF16)
LN_MUT(k_mut_store_rz, M_STORE_RZ)
LN_MUT(k_mut_eps_outside, M_EPS_OUTSIDE)

} // namespace

#if !defined(__HIP_DEVICE_COMPILE__)
#define LN_ENTRY(name, correct, desc, fn)                                                \
    {"layer_norm", name, "fp32 bf16 fp16", NMO_HIP_FN_PLAN, correct, desc, ln_supports, fn, fn##_geo}

NMO_HIP_TABLE(layer_norm);
extern "C" const nmo_plugin_kernel nmo_hip_kernels_layer_norm[] = {
    LN_ENTRY("block256", 1,
             "block per row, 256 threads, 16-byte vectors cached, two-pass sums by shuffle-down "
             "trees, /N, rsqrtf, fma(d*rstd, w, b)",
             k_block256),
    LN_ENTRY("block1024_tree", 1,
             "block per row, 1024 threads, smem trees, *RN(1/N), 1/sqrtf, ((d*rstd)*w)+b without FMA",
             k_block1024_tree),
    LN_ENTRY("warp_row", 1, "one warp per row, xor butterflies, scale/shift: fma(x, a, fma(-mean, a, b))",
             k_warp_row),
    LN_ENTRY("block128_vec8", 1, "block per row, 128 threads, 8-byte vectors, *RN(1/N), scale/shift",
             k_block128_vec8),
    LN_ENTRY("warp_row16", 1,
             "one warp per row, 4 rows per 128-thread block, 16 16-byte vectors per lane cached, "
             "two-pass sums by xor butterflies, /N, rsqrtf, fma(d*rstd, w, b)",
             k_warp_row16),
    LN_ENTRY("mut_onepass_var", 0, "MUTANT: var = E[x^2] - mean^2 (cancels on shifted rows)",
             k_mut_onepass_var),
    LN_ENTRY("mut_var_n1", 0, "MUTANT: unbiased variance ss/(N-1)", k_mut_var_n1),
    LN_ENTRY("mut_no_bias", 0, "MUTANT: the bias is never added", k_mut_no_bias),
    LN_ENTRY("mut_acc_bf16", 0, "MUTANT: sums accumulated in bf16", k_mut_acc_bf16),
    LN_ENTRY("mut_store_rz", 0, "MUTANT: final store truncates (RZ) instead of RNE", k_mut_store_rz),
    LN_ENTRY("mut_eps_outside", 0, "MUTANT: rstd = 1/(sqrtf(var)+eps)", k_mut_eps_outside),
};
extern "C" const int nmo_hip_kernels_layer_norm_n =
    (int)(sizeof nmo_hip_kernels_layer_norm / sizeof nmo_hip_kernels_layer_norm[0]);
#endif
