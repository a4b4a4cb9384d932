/* numoracle HIP kernels: kl_div, Kullback-Leibler divergence.
 * Kernel templates shared with its sibling operator, and the plan notes: loss_common.h. */
#include "loss_common.h"

namespace {

/* ------------------------------------------------------------------ kl_div */

/* FORM 0 (Liger): t*RN(RN(logf t) - x); 1 (PyTorch): RN(t*lt) - RN(t*x); 2: fmaf(t, lt,
 * -RN(t*x)); 0 where t == 0. log_target: RN(expf(t))*RN(t - x). */
template <unsigned MUT, int FORM> NMO_D float kl_elem(float x, float t, int logt)
{
    if (MUT & KL_SWAPPED) {
        const float lt = logt ? t : nmo_logf(t);
        return nmo_mul_nc(nmo_expf(x), nmo_sub_rn(x, lt));
    }
    if (logt) {
        const float e = (MUT & KL_NO_LOG) ? t : nmo_expf(t);
        return nmo_mul_nc(e, nmo_sub_rn(t, x));
    }
    if (t == 0.0f) return 0.0f;
    const float lt = (MUT & KL_NO_LOG) ? t : nmo_logf(t);
    if (FORM == 1) return nmo_sub_rn(nmo_mul_nc(t, lt), nmo_mul_nc(t, x));
    if (FORM == 2) return nmo_fmaf(t, lt, -nmo_mul_nc(t, x));
    return nmo_mul_nc(t, nmo_sub_rn(lt, x));
}

template <class T, int GROUP, int BLOCK, int VB, int RED, int FORM, unsigned MUT>
__global__ void __launch_bounds__(BLOCK)
    kl_kernel(const T *__restrict__ x, const T *__restrict__ tg, float *__restrict__ rows_out,
              T *__restrict__ out_none, int64_t rows, int64_t n, int logt)
{
    constexpr int E = VB / (int)sizeof(T);
    constexpr int ACC16 = (MUT & KL_ACC_BF16) ? NMO_ACC_BF16 : NMO_ACC32;
    __shared__ float smem[BLOCK + 1];
    const nmo_rowgeo<GROUP, BLOCK> g;
    const int64_t nred = (MUT & KL_SKIP_LAST) ? n - 1 : n;
    for (int64_t row = g.r0; row < rows; row += g.rstep) {
        const T *xr = x + row * n, *tr = tg + row * n;
        float acc = 0.0f;
        nmo_row_visit<T, VB>(xr, n, g.t, g.nt, [&](int64_t j, int cnt) {
            float a[E], b[E];
            nmo_ld_chunk<T, VB>(xr, j, cnt, a);
            nmo_ld_chunk<T, VB>(tr, j, cnt, b);
            for (int e = 0; e < cnt; e++) {
                a[e] = kl_elem<MUT, FORM>(a[e], b[e], logt);
                if (j + e < nred) acc = nmo_acc_round<ACC16>(nmo_add_rn(acc, a[e]));
            }
            if (out_none) nmo_st_chunk<T, VB>(out_none + row * n, j, cnt, a, false);
        });
        if (!out_none) {
            const float s = nmo_grp_sum<GROUP, BLOCK, RED, ACC16>(acc, smem);
            if (g.t == 0) rows_out[row] = s;
        }
    }
}

template <class T, int GROUP, int BLOCK, int VB, int RED, int FORM, bool RECIP, unsigned MUT>
int kl_launch(const nmo_plugin_args *a, char *msg, size_t msglen)
{
    int64_t rows, n;
    nmo_k_rows(&a->in[0], &rows, &n);
    if ((MUT & KL_SKIP_LAST) && n < 2) return NMO_PLUGIN_UNSUPPORTED;
    const int red = (int)nmo_k_param(a, 0, 3.0), logt = nmo_k_param(a, 1, 0.0) != 0.0;
    hipStream_t st = (hipStream_t)a->stream;
    float *ws = NULL;
    if (red != 0) NMO_HIP_TRY(hipMalloc((void **)&ws, (size_t)rows * sizeof(float)));
    nmo_launch(kl_kernel<T, GROUP, BLOCK, VB, RED, FORM, MUT>, dim3(nmo_k_row_grid<GROUP, BLOCK>(rows)), dim3(BLOCK), 0,
               st, (const T *)a->in[0].data, (const T *)a->in[1].data, ws, red == 0 ? (T *)a->out[0].data : (T *)NULL,
               rows, n, logt);
    if (red == 0) {
        NMO_HIP_CHECK_LAUNCH("kl_div");
        return NMO_PLUGIN_OK;
    }
    const float numel = (float)(rows * n), batch = (float)a->in[0].dims[0];
    const float div = red == 1 || (red == 3 && (MUT & KL_AS_MEAN)) ? numel : red == 3 ? batch : 1.0f;
    return finish_rows<T>(a, ws, (const float *)NULL, rows, n, 0.0f, 0, div, 0, RECIP ? 2 : 1, "kl_div", msg, msglen);
}

/* two data inputs of one shape (+ two unread logits tensors), out [..] or [1] */
int kl_supports(const nmo_plugin_args *a)
{
    if (!a || a->n_in < 2 || a->n_out != 1) return 0;
    const int dt = a->in[0].dtype;
    if (!nmo_k_dtype_ok(dt) || !nmo_k_tensor_ok(&a->in[0], dt) || !nmo_k_tensor_ok(&a->in[1], dt) ||
        !nmo_k_tensor_ok(&a->out[0], dt))
        return 0;
    if (!nmo_k_same_dims(&a->in[0], &a->in[1])) return 0;
    int64_t rows, n;
    nmo_k_rows(&a->in[0], &rows, &n);
    if (n < 1 || rows < 1 || rows * n > (1 << 24)) return 0; /* numel as an exact float divisor */
    const int red = (int)nmo_k_param(a, 0, 3.0);
    if (red < 0 || red > 3) return 0;
    if (nmo_k_numel(&a->out[0]) != (red == 0 ? rows * n : 1)) return 0;
    return nmo_k_aligned16(a->in[0].data) && nmo_k_aligned16(a->in[1].data) && nmo_k_aligned16(a->out[0].data);
}

/* kl_div: GROUP, BLOCK, VB, RED, FORM, RECIP, MUT */
LOSS_K(kl_block256, kl_launch, NMO_G_BLOCK, 256, 16, NMO_RED_SHFL_DOWN, 0, false, 0u)
LOSS_K(kl_block1024_torch, kl_launch, NMO_G_BLOCK, 1024, 16, NMO_RED_SMEM_TREE, 1, false, 0u)
LOSS_K(kl_warp_row_fma, kl_launch, NMO_G_WARP, 256, 8, NMO_RED_SHFL_XOR, 2, true, 0u)
#define KL_MUT(fname, m) LOSS_K(fname, kl_launch, NMO_G_BLOCK, 256, 16, NMO_RED_SHFL_DOWN, 0, false, m)
KL_MUT(kl_mut_batchmean_as_mean, KL_AS_MEAN)
KL_MUT(kl_mut_no_log, KL_NO_LOG)
KL_MUT(kl_mut_acc_bf16, KL_ACC_BF16)
KL_MUT(kl_mut_swapped, KL_SWAPPED)
KL_MUT(kl_mut_skip_last, KL_SKIP_LAST)

/* kl_div with reduction 'none' (param 0 == 0) has no reduction: no geometry */
template <int GROUP, int BLOCK, int VB, int RED> int kl_geom(const nmo_plugin_args *a, char *text, size_t len)
{
    if ((int)nmo_k_param(a, 0, 3.0) == 0) return 0;
    return loss_geom_text(a, text, len, GROUP, BLOCK, VB, RED);
}
/* the launches' (GROUP, BLOCK, VB, RED), as in the LOSS_K lines above */
#define KL_G_BLOCK256 kl_geom<NMO_G_BLOCK, 256, 16, NMO_RED_SHFL_DOWN>
#define KL_G_BLOCK1024 kl_geom<NMO_G_BLOCK, 1024, 16, NMO_RED_SMEM_TREE>
#define KL_G_WARP kl_geom<NMO_G_WARP, 256, 8, NMO_RED_SHFL_XOR>

} // namespace

#if !defined(__HIP_DEVICE_COMPILE__)
#define KL_ENTRY(name, correct, desc, fn, geo)                                           \
    {"kl_div", name, "fp32 bf16 fp16", NMO_HIP_FN_PLAN, correct, desc, kl_supports, fn, geo}
NMO_HIP_TABLE(kl_div);
extern "C" const nmo_plugin_kernel nmo_hip_kernels_kl_div[] = {
    KL_ENTRY("block256", 1,
             "Liger-style t*(logf(t)-x), block per row (256), 16-byte vectors, row sums, one-block sum, /divisor",
             kl_block256, KL_G_BLOCK256),
    KL_ENTRY("block1024_torch", 1, "PyTorch xlogy(t,t) - t*x, block per row (1024), smem tree", kl_block1024_torch, KL_G_BLOCK1024),
    KL_ENTRY("warp_row_fma", 1, "fmaf(t, logf(t), -(t*x)), warp per row, 8-byte vectors, *RN(1/divisor)",
             kl_warp_row_fma, KL_G_WARP),
    KL_ENTRY("mut_batchmean_as_mean", 0, "MUTANT: batchmean divides by numel instead of the batch",
             kl_mut_batchmean_as_mean, KL_G_BLOCK256),
    KL_ENTRY("mut_no_log", 0, "MUTANT: log of the target forgotten: t*(t - x)", kl_mut_no_log, KL_G_BLOCK256),
    KL_ENTRY("mut_acc_bf16", 0, "MUTANT: row sums in a bf16 accumulator", kl_mut_acc_bf16, KL_G_BLOCK256),
    KL_ENTRY("mut_swapped", 0, "MUTANT: arguments swapped: exp(x)*(x - log t)", kl_mut_swapped, KL_G_BLOCK256),
    KL_ENTRY("mut_skip_last", 0, "MUTANT: row sum skips the last element", kl_mut_skip_last, KL_G_BLOCK256),
};
extern "C" const int nmo_hip_kernels_kl_div_n = (int)(sizeof nmo_hip_kernels_kl_div / sizeof nmo_hip_kernels_kl_div[0]);

#endif
