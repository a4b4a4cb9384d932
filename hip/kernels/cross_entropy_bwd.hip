/* numoracle HIP kernels: cross_entropy_bwd, dx of the loss.
 * Kernel templates shared with its sibling operator, and the plan notes: loss_common.h. */
#include "loss_common.h"

namespace {

/* ------------------------------------------------------------------ cross_entropy_bwd */

/* FORM 0 (Liger): q = RN(RN(p - eps)/n), at y q = RN(q - RN((1-ls)/n)), dx = q*g (g != 1);
 * FORM 1 (textbook): p = expf(RN(RN(x - m) - l)), dx = RN(p - t)*G, G = RN(g/n);
 * FORM 2: p = e*RN(1/s), dx = fmaf(p, G, -RN(t*G)). t = (1-ls)+eps at y, eps elsewhere. */
template <class T, int GROUP, int BLOCK, int VB, int RED, int FORM, unsigned MUT>
__global__ void __launch_bounds__(BLOCK)
    ceb_kernel(const T *__restrict__ x, const float *__restrict__ labels, const float *__restrict__ nfp,
               T *__restrict__ dx, int64_t rows, int64_t V, float ignore, float ls, float g, int red)
{
    constexpr int E = VB / (int)sizeof(T);
    constexpr int ACC16 = (MUT & CE_ACC_BF16) ? NMO_ACC_BF16 : NMO_ACC32;
    __shared__ float smem[BLOCK + 1];
    const nmo_rowgeo<GROUP, BLOCK> gg;
    const float nf = red == 1 ? *nfp : 1.0f, G = g / nf;
    const float eps = ls / (float)V, omls = 1.0f - ls, cy = omls / nf, ty = nmo_add_rn(omls, eps);
    for (int64_t row = gg.r0; row < rows; row += gg.rstep) {
        const T *xr = x + row * V;
        T *dr = dx + row * V;
        int64_t y = nmo_label(labels[row], V, ignore);
        if (y < 0 && !(MUT & CE_IGNORE_GRAD)) {
            nmo_row_visit<T, VB>(xr, V, gg.t, gg.nt, [&](int64_t j, int cnt) {
                float z[E];
                for (int e = 0; e < cnt; e++) z[e] = 0.0f;
                nmo_st_chunk<T, VB>(dr, j, cnt, z, false);
            });
            continue;
        }
        if ((MUT & CE_LABEL_OFF1) && y >= 0) y = (y + 1) % V;
        if (MUT & CE_NO_ONEHOT) y = -1;
        const float m = row_max<T, GROUP, BLOCK, VB>(xr, V, gg.t, gg.nt, smem);
        const float s = row_expsum<T, GROUP, BLOCK, VB, RED, ACC16>(xr, V, V, m, gg.t, gg.nt, smem);
        const float l = nmo_logf(s), inv = 1.0f / s;
        nmo_row_visit<T, VB>(xr, V, gg.t, gg.nt, [&](int64_t j, int cnt) {
            float a[E];
            nmo_ld_chunk<T, VB>(xr, j, cnt, a);
            for (int e = 0; e < cnt; e++) {
                const bool at = j + e == y;
                const float d = nmo_sub_rn(a[e], m), tj = at ? ty : eps;
                float v;
                if (FORM == 1) {
                    v = nmo_mul_nc(nmo_sub_rn(nmo_expf(nmo_sub_rn(d, l)), tj), G);
                } else if (FORM == 2) {
                    v = nmo_fmaf(nmo_mul_nc(nmo_expf(d), inv), G, -nmo_mul_nc(tj, G));
                } else {
                    float q = nmo_sub_rn(nmo_expf(d) / s, eps) / nf;
                    if (at) q = nmo_sub_rn(q, cy);
                    v = g == 1.0f ? q : nmo_mul_nc(q, g);
                }
                a[e] = v;
            }
            nmo_st_chunk<T, VB>(dr, j, cnt, a, false);
        });
    }
}

template <class T, int GROUP, int BLOCK, int VB, int RED, int FORM, unsigned MUT>
int ceb_launch(const nmo_plugin_args *a, char *msg, size_t msglen)
{
    int64_t rows, V;
    nmo_k_rows(&a->in[0], &rows, &V);
    const float ignore = (float)nmo_k_param(a, 0, -100.0), ls = (float)nmo_k_param(a, 1, 0.0);
    const int red = (int)nmo_k_param(a, 2, 1.0);
    const float g = (float)nmo_k_param(a, 3, 1.0);
    hipStream_t st = (hipStream_t)a->stream;
    const float *lab = (const float *)a->in[1].data;
    float *ws = NULL;
    NMO_HIP_TRY(hipMalloc((void **)&ws, sizeof(float)));
    nmo_launch(count_kernel, dim3(1), dim3(256), 0, st, lab, ws, rows, V, ignore,
               (MUT & CE_MEAN_ALL_ROWS) ? 1 : 0);
    hipError_t e = hipGetLastError();
    if (e == hipSuccess) {
        nmo_launch(ceb_kernel<T, GROUP, BLOCK, VB, RED, FORM, MUT>, dim3(nmo_k_row_grid<GROUP, BLOCK>(rows)),
                   dim3(BLOCK), 0, st, (const T *)a->in[0].data, lab, (const float *)ws, (T *)a->out[0].data, rows,
                   V, ignore, ls, g, red);
        e = hipGetLastError();
    }
    if (e == hipSuccess) e = hipStreamSynchronize(st);
    hipFree(ws);
    if (e != hipSuccess) {
        nmo_hip_msg(msg, msglen, "cross_entropy_bwd: %s", hipGetErrorString(e));
        return NMO_PLUGIN_ERROR;
    }
    return NMO_PLUGIN_OK;
}

int ceb_supports(const nmo_plugin_args *a)
{
    if (!ce_common(a, 4)) return 0;
    const int red = (int)nmo_k_param(a, 2, 1.0);
    if (red < 0 || red > 2) return 0;
    return nmo_k_same_dims(&a->in[0], &a->out[0]);
}

/* cross_entropy_bwd: GROUP, BLOCK, VB, RED, FORM, MUT */
LOSS_K(ceb_block256, ceb_launch, NMO_G_BLOCK, 256, 16, NMO_RED_SHFL_DOWN, 0, 0u)
LOSS_K(ceb_block1024_textbook, ceb_launch, NMO_G_BLOCK, 1024, 16, NMO_RED_SMEM_TREE, 1, 0u)
LOSS_K(ceb_warp_row_fma, ceb_launch, NMO_G_WARP, 256, 16, NMO_RED_SHFL_XOR, 2, 0u)
#define CEB_MUT(fname, m) LOSS_K(fname, ceb_launch, NMO_G_BLOCK, 256, 16, NMO_RED_SHFL_DOWN, 0, m)
CEB_MUT(ceb_mut_no_onehot, CE_NO_ONEHOT)
CEB_MUT(ceb_mut_mean_all_rows, CE_MEAN_ALL_ROWS)
CEB_MUT(ceb_mut_ignore_grad, CE_IGNORE_GRAD)
CEB_MUT(ceb_mut_label_off1, CE_LABEL_OFF1)
CEB_MUT(ceb_mut_acc_bf16, CE_ACC_BF16)

/* cross_entropy_bwd: each row's exp-sum as above; P = rows also covers the count of the
 * rows that are not ignored (the mean's n: an integer sum, exact) */
#define CEB_G_BLOCK256 ce_geom<NMO_G_BLOCK, 256, 16, NMO_RED_SHFL_DOWN>
#define CEB_G_BLOCK1024 ce_geom<NMO_G_BLOCK, 1024, 16, NMO_RED_SMEM_TREE>
#define CEB_G_WARP ce_geom<NMO_G_WARP, 256, 16, NMO_RED_SHFL_XOR>

} // namespace

#if !defined(__HIP_DEVICE_COMPILE__)
#define CEB_ENTRY(name, correct, desc, fn, geo)                                          \
    {"cross_entropy_bwd", name, "fp32 bf16 fp16", NMO_HIP_FN_PLAN, correct, desc, ceb_supports, fn, geo}
NMO_HIP_TABLE(cross_entropy_bwd);
extern "C" const nmo_plugin_kernel nmo_hip_kernels_cross_entropy_bwd[] = {
    CEB_ENTRY("block256", 1,
              "Liger-style: count kernel (n), block per row (256), max, expf sum, q=(e/s - eps)/n, "
              "label: q - (1-ls)/n, *g",
              ceb_block256, CEB_G_BLOCK256),
    CEB_ENTRY("block1024_textbook", 1, "block per row (1024), smem tree, p=expf((x-m)-l), (p - t)*(g/n)",
              ceb_block1024_textbook, CEB_G_BLOCK1024),
    CEB_ENTRY("warp_row_fma", 1, "warp per row, xor butterfly, p=e*RN(1/s), fmaf(p, G, -(t*G))", ceb_warp_row_fma, CEB_G_WARP),
    CEB_ENTRY("mut_no_onehot", 0, "MUTANT: the -(1-ls) at the label is forgotten", ceb_mut_no_onehot, CEB_G_BLOCK256),
    CEB_ENTRY("mut_mean_all_rows", 0, "MUTANT: mean divides by M (ignored rows counted)", ceb_mut_mean_all_rows, CEB_G_BLOCK256),
    CEB_ENTRY("mut_ignore_grad", 0, "MUTANT: ignored rows get the softmax gradient instead of 0",
              ceb_mut_ignore_grad, CEB_G_BLOCK256),
    CEB_ENTRY("mut_label_off1", 0, "MUTANT: onehot placed at (y+1) mod V", ceb_mut_label_off1, CEB_G_BLOCK256),
    CEB_ENTRY("mut_acc_bf16", 0, "MUTANT: sum of exponentials in a bf16 accumulator", ceb_mut_acc_bf16, CEB_G_BLOCK256),
};
extern "C" const int nmo_hip_kernels_cross_entropy_bwd_n =
    (int)(sizeof nmo_hip_kernels_cross_entropy_bwd / sizeof nmo_hip_kernels_cross_entropy_bwd[0]);

#endif
