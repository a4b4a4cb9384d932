/* numoracle HIP kernels: layer_norm_bwd, dx, dw, db.
 * Kernel templates shared with its sibling operator, and the plan notes: norm_bwd_common.h. */
#include "norm_bwd_common.h"

namespace {

/* ------------------------------------------------------------------ layer_norm_bwd dx */

template <class T, int GROUP, int BLOCK, int VB, int RED, int FORM, bool FMA, unsigned MUT>
__global__ void __launch_bounds__(BLOCK)
    lb_dx_kernel(const T *__restrict__ dy, const T *__restrict__ x, const T *__restrict__ w,
                 const float *__restrict__ mean, const float *__restrict__ rstd, T *__restrict__ dx,
                 int64_t rows, int64_t n, float inv_n)
{
    constexpr int E = VB / (int)sizeof(T);
    constexpr int ACC16 = (MUT & LB_ACC_BF16) ? NMO_ACC_BF16 : NMO_ACC32;
    __shared__ float smem[BLOCK + 1];
    const nmo_rowgeo<GROUP, BLOCK> g;
    const float nf = (float)n;
    for (int64_t row = g.r0; row < rows; row += g.rstep) {
        const T *dyr = dy + row * n, *xr = x + row * n;
        T *dxr = dx + row * n;
        const float mu = mean[row], r = rstd[row];
        float acc1 = 0.0f, acc2 = 0.0f;
        nmo_row_visit<T, VB>(xr, n, g.t, g.nt, [&](int64_t j, int cnt) {
            float a[E], b[E], c[E];
            nmo_ld_chunk<T, VB>(dyr, j, cnt, a);
            nmo_ld_chunk<T, VB>(xr, j, cnt, b);
            nmo_ld_chunk<T, VB>(w, j, cnt, c);
            for (int e = 0; e < cnt; e++) {
                const float d = nmo_sub_rn(b[e], mu);
                if (FORM == F_PYTORCH) { /* PyTorch: g = dy*w; fmaf(g*(x-mean), rstd, acc) */
                    const float gg = nmo_mul_nc(a[e], c[e]);
                    acc1 = nmo_acc_round<ACC16>(nmo_fmaf(nmo_mul_nc(gg, d), r, acc1));
                    acc2 = nmo_add_rn(acc2, gg);
                } else {
                    const float xh = nmo_mul_nc(d, r), wdy = nmo_mul_nc(c[e], a[e]);
                    acc1 = nmo_acc_round<ACC16>(macc(FMA, acc1, xh, (MUT & LB_C1_NO_W) ? a[e] : wdy));
                    acc2 = nmo_add_rn(acc2, wdy);
                }
            }
        });
        const float S1 = nmo_grp_sum<GROUP, BLOCK, RED, ACC16>(acc1, smem);
        float S2 = nmo_grp_sum<GROUP, BLOCK, RED, NMO_ACC32>(acc2, smem);
        if (MUT & LB_NO_C2) S2 = 0.0f;
        const float fr = (MUT & LB_NO_RSTD) ? 1.0f : r;
        const float c1 = FORM == F_LIGER ? S1 / nf : nmo_mul_nc(S1, inv_n);
        const float c2 = FORM == F_LIGER ? S2 / nf : nmo_mul_nc(S2, inv_n);
        const float sc = nmo_mul_nc(inv_n, fr);
        nmo_row_visit<T, VB>(xr, n, g.t, g.nt, [&](int64_t j, int cnt) {
            float a[E], b[E], c[E];
            nmo_ld_chunk<T, VB>(dyr, j, cnt, a);
            nmo_ld_chunk<T, VB>(xr, j, cnt, b);
            nmo_ld_chunk<T, VB>(w, j, cnt, c);
            for (int e = 0; e < cnt; e++) {
                const float xh = nmo_mul_nc(nmo_sub_rn(b[e], mu), r);
                float v;
                if (FORM == F_PYTORCH) {
                    float f = nmo_mul_nc(nmo_mul_nc(nf, c[e]), a[e]);
                    f = nmo_fmaf(-xh, S1, f);
                    f = nmo_sub_rn(f, S2);
                    v = nmo_mul_nc(f, sc);
                } else if (FORM == F_APEX) {
                    const float wdy = nmo_mul_nc(c[e], a[e]);
                    v = nmo_mul_nc(nmo_sub_rn(nmo_sub_rn(wdy, nmo_mul_nc(xh, c1)), c2), fr);
                } else {
                    const float wdy = nmo_mul_nc(c[e], a[e]);
                    v = nmo_mul_nc(nmo_sub_rn(wdy, nmo_fmaf(xh, c1, c2)), fr);
                }
                a[e] = v;
            }
            nmo_st_chunk<T, VB>(dxr, j, cnt, a, false);
        });
    }
}

template <class T, int GROUP, int BLOCK, int VB, int RED, int FORM, bool FMA, unsigned MUT, int CHUNK>
int lb_launch(const nmo_plugin_args *a, char *msg, size_t msglen)
{
    int64_t rows, n;
    nmo_k_rows(&a->in[1], &rows, &n);
    const float *mu = (const float *)a->in[3].data, *rs = (const float *)a->in[4].data;
    nmo_launch(lb_dx_kernel<T, GROUP, BLOCK, VB, RED, FORM, FMA, MUT>, dim3(nmo_k_row_grid<GROUP, BLOCK>(rows)),
               dim3(BLOCK), 0, (hipStream_t)a->stream, (const T *)a->in[0].data, (const T *)a->in[1].data,
               (const T *)a->in[2].data, mu, rs, (T *)a->out[0].data, rows, n, 1.0f / (float)n);
    NMO_HIP_CHECK_LAUNCH("layer_norm_bwd dx");
    return col_reduce<T, 1, MUT, CHUNK>(a, mu, rs, rows, n, msg, msglen);
}

int lb_supports(const nmo_plugin_args *a) { return nb_supports(a, 2, 3); }

#define LB_K(fname, ...)                                                                 \
    int fname(const nmo_plugin_args *a, char *msg, size_t msglen)                        \
    {                                                                                    \
        NMO_K_DISPATCH(lb_launch, __VA_ARGS__)                                           \
    }
LB_K(lb_liger, NMO_G_BLOCK, 256, 16, NMO_RED_SHFL_DOWN, F_LIGER, false, 0u, 64)
LB_K(lb_pytorch, NMO_G_BLOCK, 1024, 16, NMO_RED_SMEM_TREE, F_PYTORCH, true, 0u, 16)
LB_K(lb_apex_warp, NMO_G_WARP, 256, 16, NMO_RED_SHFL_XOR, F_APEX, true, 0u, 32)
LB_K(lb_liger_vec8, NMO_G_BLOCK, 128, 8, NMO_RED_SHFL_XOR, F_LIGER, true, 0u, 128)
#define LB_MUT(fname, m) LB_K(fname, NMO_G_BLOCK, 256, 16, NMO_RED_SHFL_DOWN, F_LIGER, false, m, 64)
LB_MUT(lb_mut_no_c2, LB_NO_C2)
LB_MUT(lb_mut_c1_no_w, LB_C1_NO_W)
LB_MUT(lb_mut_no_rstd, LB_NO_RSTD)
LB_MUT(lb_mut_acc_bf16, LB_ACC_BF16)
LB_MUT(lb_mut_dw_raw_x, LB_DW_RAW_X)
LB_MUT(lb_mut_db_skip_row, LB_DB_SKIP_ROW)

} // namespace

#if !defined(__HIP_DEVICE_COMPILE__)
#define LB_ENTRY(name, correct, desc, fn)                                                \
    {"layer_norm_bwd", name, "fp32 bf16 fp16", "", correct, desc, lb_supports, fn}
NMO_HIP_TABLE(layer_norm_bwd);
extern "C" const nmo_plugin_kernel nmo_hip_kernels_layer_norm_bwd[] = {
    LB_ENTRY("liger", 1,
             "block per row (256), 16-byte vectors, S1=sum xh*wdy, S2=sum wdy (no FMA), "
             "dx=(wdy - fmaf(xh, S1/N, S2/N))*rstd; dw, db: 64-row chunks, fp32 partials",
             lb_liger),
    LB_ENTRY("pytorch", 1,
             "block per row (1024), smem tree, PyTorch's fmaf(g*(x-mean), rstd, acc), "
             "f=fmaf(-xh, S1, (N*w)*dy) - S2, dx=f*((1/N)*rstd); 16-row chunks",
             lb_pytorch),
    LB_ENTRY("apex_warp", 1, "warp per row, xor butterfly, fmaf sums, dx=((wdy - xh*c1) - c2)*rstd", lb_apex_warp),
    LB_ENTRY("liger_vec8", 1, "block per row (128), 8-byte vectors, fmaf sums, Liger's dx; 128-row chunks",
             lb_liger_vec8),
    LB_ENTRY("mut_no_c2", 0, "MUTANT: the mean of w*dy (c2) is not subtracted", lb_mut_no_c2),
    LB_ENTRY("mut_c1_no_w", 0, "MUTANT: c1 = sum(xh*dy)/N (w left out)", lb_mut_c1_no_w),
    LB_ENTRY("mut_no_rstd", 0, "MUTANT: the final * rstd is forgotten", lb_mut_no_rstd),
    LB_ENTRY("mut_acc_bf16", 0, "MUTANT: sum(xh*wdy) accumulated in bf16", lb_mut_acc_bf16),
    LB_ENTRY("mut_dw_raw_x", 0, "MUTANT: dw = sum dy*x (x not normalized)", lb_mut_dw_raw_x),
    LB_ENTRY("mut_db_skip_row", 0, "MUTANT: the db reduction skips the last row", lb_mut_db_skip_row),
};
extern "C" const int nmo_hip_kernels_layer_norm_bwd_n =
    (int)(sizeof nmo_hip_kernels_layer_norm_bwd / sizeof nmo_hip_kernels_layer_norm_bwd[0]);
#endif
