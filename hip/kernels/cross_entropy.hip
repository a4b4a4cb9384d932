/* numoracle HIP kernels: cross_entropy, the loss of each row or their mean/sum.
 * Kernel templates shared with its sibling operator, and the plan notes: loss_common.h. */
#include "loss_common.h"

namespace {

/* ------------------------------------------------------------------ cross_entropy */

/* Liger: loss = lse - x_y; ls > 0: S = sum RN(-eps*x_j), smooth = ls*lse + S, loss =
 * loss*(1-ls) + smooth (each a*b+c fused when FMA). Per-row fp32 loss into rowl. */
template <class T, int GROUP, int BLOCK, int VB, int RED, bool FMA, unsigned MUT>
__global__ void __launch_bounds__(BLOCK)
    ce_kernel(const T *__restrict__ x, const float *__restrict__ labels, float *__restrict__ rowl,
              T *__restrict__ out_none, int64_t rows, int64_t V, float ignore, float ls)
{
    constexpr int E = VB / (int)sizeof(T);
    constexpr int ACC16 = (MUT & CE_ACC_BF16) ? NMO_ACC_BF16 : NMO_ACC32;
    __shared__ float smem[BLOCK + 1];
    const nmo_rowgeo<GROUP, BLOCK> g;
    const float eps = ls / (float)V, omls = 1.0f - ls;
    for (int64_t row = g.r0; row < rows; row += g.rstep) {
        const T *xr = x + row * V;
        int64_t y = nmo_label(labels[row], V, ignore);
        if ((MUT & CE_IGNORE_CLAMP) && y < 0) y = 0;
        if (y < 0) {
            if (g.t == 0) {
                if (rowl) rowl[row] = 0.0f;
                if (out_none) nmo_stf(out_none + row, 0.0f, false);
            }
            continue;
        }
        if (MUT & CE_LABEL_OFF1) y = (y + 1) % V;
        const float m = row_max<T, GROUP, BLOCK, VB>(xr, V, g.t, g.nt, smem);
        const float s = row_expsum<T, GROUP, BLOCK, VB, RED, ACC16>(xr, V, (MUT & CE_SKIP_LAST) ? V - 1 : V, m, g.t,
                                                                     g.nt, smem);
        const float l = nmo_logf(s);
        const float lse = (MUT & CE_LSE_NO_M) ? l : nmo_add_rn(m, l);
        float loss = nmo_sub_rn(lse, nmo_ldf(xr + y));
        if (ls > 0.0f) {
            float acc = 0.0f;
            nmo_row_visit<T, VB>(xr, V, g.t, g.nt, [&](int64_t j, int cnt) {
                float a[E];
                nmo_ld_chunk<T, VB>(xr, j, cnt, a);
                for (int e = 0; e < cnt; e++) acc = nmo_add_rn(acc, nmo_mul_nc(-eps, a[e]));
            });
            const float S = nmo_grp_sum<GROUP, BLOCK, RED, NMO_ACC32>(acc, smem);
            const float smooth = FMA ? nmo_fmaf(ls, lse, S) : nmo_add_rn(S, nmo_mul_nc(ls, lse));
            loss = FMA ? nmo_fmaf(loss, omls, smooth) : nmo_add_rn(nmo_mul_nc(loss, omls), smooth);
        }
        if (g.t == 0) {
            if (rowl) rowl[row] = loss;
            if (out_none) nmo_stf(out_none + row, loss, false);
        }
    }
}

template <class T, int GROUP, int BLOCK, int VB, int RED, bool FMA, bool RECIP, unsigned MUT>
int ce_launch(const nmo_plugin_args *a, char *msg, size_t msglen)
{
    int64_t rows, V;
    nmo_k_rows(&a->in[0], &rows, &V);
    if ((MUT & CE_SKIP_LAST) && V < 2) return NMO_PLUGIN_UNSUPPORTED;
    const float ignore = (float)nmo_k_param(a, 0, -100.0), ls = (float)nmo_k_param(a, 1, 0.0);
    const int red = (int)nmo_k_param(a, 2, 1.0);
    hipStream_t st = (hipStream_t)a->stream;
    const float *lab = (const float *)a->in[1].data;
    float *ws = NULL;
    if (red != 0) NMO_HIP_TRY(hipMalloc((void **)&ws, (size_t)rows * sizeof(float)));
    nmo_launch(ce_kernel<T, GROUP, BLOCK, VB, RED, FMA, MUT>, dim3(nmo_k_row_grid<GROUP, BLOCK>(rows)), dim3(BLOCK),
               0, st, (const T *)a->in[0].data, lab, ws, red == 0 ? (T *)a->out[0].data : (T *)NULL, rows, V,
               ignore, ls);
    if (red == 0) {
        NMO_HIP_CHECK_LAUNCH("cross_entropy");
        return NMO_PLUGIN_OK;
    }
    /* Liger: each row's loss divided by n (or times RN(1/n)), then the rows summed */
    const int count = red == 2 ? 0 : (MUT & (CE_MEAN_ALL_ROWS | CE_IGNORE_CLAMP)) ? 2 : 1;
    return finish_rows<T>(a, ws, lab, rows, V, ignore, count, 1.0f, RECIP ? 2 : 1, 0, "cross_entropy", msg, msglen);
}

int ce_supports(const nmo_plugin_args *a)
{
    if (!ce_common(a, 3)) return 0;
    int64_t rows, V;
    nmo_k_rows(&a->in[0], &rows, &V);
    const int red = (int)nmo_k_param(a, 2, 1.0);
    if (red < 0 || red > 2) return 0;
    return nmo_k_numel(&a->out[0]) == (red == 0 ? rows : 1);
}

/* cross_entropy: GROUP, BLOCK, VB, RED, FMA, RECIP, MUT */
LOSS_K(ce_block256, ce_launch, NMO_G_BLOCK, 256, 16, NMO_RED_SHFL_DOWN, true, false, 0u)
LOSS_K(ce_block1024_tree, ce_launch, NMO_G_BLOCK, 1024, 16, NMO_RED_SMEM_TREE, false, true, 0u)
LOSS_K(ce_warp_row, ce_launch, NMO_G_WARP, 256, 16, NMO_RED_SHFL_XOR, false, true, 0u)
LOSS_K(ce_block128_vec8, ce_launch, NMO_G_BLOCK, 128, 8, NMO_RED_SHFL_XOR, true, false, 0u)
#define CE_MUT(fname, m) LOSS_K(fname, ce_launch, NMO_G_BLOCK, 256, 16, NMO_RED_SHFL_DOWN, true, false, m)
CE_MUT(ce_mut_mean_all_rows, CE_MEAN_ALL_ROWS)
CE_MUT(ce_mut_lse_no_m, CE_LSE_NO_M)
CE_MUT(ce_mut_acc_bf16, CE_ACC_BF16)
CE_MUT(ce_mut_label_off1, CE_LABEL_OFF1)
CE_MUT(ce_mut_skip_last, CE_SKIP_LAST)
CE_MUT(ce_mut_ignore_clamp, CE_IGNORE_CLAMP)

/* the launches' (GROUP, BLOCK, VB, RED), as in the LOSS_K lines above */
#define CE_G_BLOCK256 ce_geom<NMO_G_BLOCK, 256, 16, NMO_RED_SHFL_DOWN>
#define CE_G_BLOCK1024 ce_geom<NMO_G_BLOCK, 1024, 16, NMO_RED_SMEM_TREE>
#define CE_G_WARP ce_geom<NMO_G_WARP, 256, 16, NMO_RED_SHFL_XOR>
#define CE_G_BLOCK128 ce_geom<NMO_G_BLOCK, 128, 8, NMO_RED_SHFL_XOR>

} // namespace

#if !defined(__HIP_DEVICE_COMPILE__)
#define CE_ENTRY(name, correct, desc, fn, geo)                                           \
    {"cross_entropy", name, "fp32 bf16 fp16", NMO_HIP_FN_PLAN, correct, desc, ce_supports, fn, geo}
NMO_HIP_TABLE(cross_entropy);
extern "C" const nmo_plugin_kernel nmo_hip_kernels_cross_entropy[] = {
    CE_ENTRY("block256", 1,
             "Liger-style: block per row (256), 16-byte vectors, max, expf sum (shuffle-down), lse=m+logf(s), "
             "lse-x_y, fmaf smoothing; rows: loss/n then a one-block sum",
             ce_block256, CE_G_BLOCK256),
    CE_ENTRY("block1024_tree", 1, "block per row (1024), smem tree, no FMA, loss*RN(1/n) per row", ce_block1024_tree, CE_G_BLOCK1024),
    CE_ENTRY("warp_row", 1, "warp per row, xor butterfly, no FMA, loss*RN(1/n)", ce_warp_row, CE_G_WARP),
    CE_ENTRY("block128_vec8", 1, "block per row (128), 8-byte vectors, xor butterfly, fmaf smoothing",
             ce_block128_vec8, CE_G_BLOCK128),
    CE_ENTRY("mut_mean_all_rows", 0, "MUTANT: mean divides by M (ignored rows counted)", ce_mut_mean_all_rows, CE_G_BLOCK256),
    CE_ENTRY("mut_lse_no_m", 0, "MUTANT: lse = log(s): the row max is never added back", ce_mut_lse_no_m, CE_G_BLOCK256),
    CE_ENTRY("mut_acc_bf16", 0, "MUTANT: sum of exponentials in a bf16 accumulator", ce_mut_acc_bf16, CE_G_BLOCK256),
    CE_ENTRY("mut_label_off1", 0, "MUTANT: target logit read at x[(y+1) mod V]", ce_mut_label_off1, CE_G_BLOCK256),
    CE_ENTRY("mut_skip_last", 0, "MUTANT: exp-sum loop skips the last logit", ce_mut_skip_last, CE_G_BLOCK256),
    CE_ENTRY("mut_ignore_clamp", 0, "MUTANT: ignore_index not handled: label clamped to 0, row counted",
             ce_mut_ignore_clamp, CE_G_BLOCK256),
};
extern "C" const int nmo_hip_kernels_cross_entropy_n =
    (int)(sizeof nmo_hip_kernels_cross_entropy / sizeof nmo_hip_kernels_cross_entropy[0]);

#endif
