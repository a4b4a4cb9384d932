/* numoracle HIP kernels: rms_norm_bwd, dx, dw.
 * Kernel templates shared with its sibling operator, and the plan notes: norm_bwd_common.h. */
#include "norm_bwd_common.h"

namespace {

/* ------------------------------------------------------------------ rms_norm_bwd dx */

template <class T, int GROUP, int BLOCK, int VB, int RED, int FORM, bool FMA, unsigned MUT>
__global__ void __launch_bounds__(BLOCK)
    rb_dx_kernel(const T *__restrict__ dy, const T *__restrict__ x, const T *__restrict__ w,
                 const float *__restrict__ rstd, T *__restrict__ dx, int64_t rows, int64_t n, float inv_n)
{
    constexpr int E = VB / (int)sizeof(T);
    constexpr int ACC16 = (MUT & RB_ACC_BF16) ? NMO_ACC_BF16 : NMO_ACC32;
    __shared__ float smem[BLOCK + 1];
    const nmo_rowgeo<GROUP, BLOCK> g;
    const float nf = (float)n;
    for (int64_t row = g.r0; row < rows; row += g.rstep) {
        const T *dyr = dy + row * n, *xr = x + row * n;
        T *dxr = dx + row * n;
        const float r = rstd[row];
        float acc = 0.0f;
        nmo_row_visit<T, VB>(xr, n, g.t, g.nt, [&](int64_t j, int cnt) {
            float a[E], b[E], c[E];
            nmo_ld_chunk<T, VB>(dyr, j, cnt, a);
            nmo_ld_chunk<T, VB>(xr, j, cnt, b);
            nmo_ld_chunk<T, VB>(w, j, cnt, c);
            for (int e = 0; e < cnt; e++) {
                const float m = (MUT & RB_S_NO_W) ? a[e] : nmo_mul_nc(a[e], c[e]);
                const float xs = FORM == F_XHAT ? nmo_mul_nc(b[e], r) : b[e];
                acc = nmo_acc_round<ACC16>(macc(FMA, acc, m, xs));
            }
        });
        const float S = nmo_grp_sum<GROUP, BLOCK, RED, ACC16>(acc, smem);
        const float r3 = (MUT & RB_RSTD2) ? 1.0f : r;
        float k = 0.0f;
        if (FORM == F_LIGER) {
            k = nmo_mul_nc(nmo_mul_nc(nmo_mul_nc(-inv_n, r), r3), S);
            if (MUT & RB_SIGN) k = -k;
        } else if (FORM == F_FACTORED) {
            k = nmo_mul_nc(S, nmo_mul_nc(r, r3)) / nf;
        } else {
            k = nmo_mul_nc(S, inv_n);
        }
        nmo_row_visit<T, VB>(xr, n, g.t, g.nt, [&](int64_t j, int cnt) {
            float a[E], b[E], c[E];
            nmo_ld_chunk<T, VB>(dyr, j, cnt, a);
            nmo_ld_chunk<T, VB>(xr, j, cnt, b);
            nmo_ld_chunk<T, VB>(w, j, cnt, c);
            for (int e = 0; e < cnt; e++) {
                const float m = nmo_mul_nc(a[e], c[e]);
                float v;
                if (FORM == F_LIGER) {
                    v = nmo_fmaf(r, nmo_mul_nc(k, b[e]), nmo_mul_nc(r, m));
                } else if (FORM == F_FACTORED) {
                    v = nmo_mul_nc(r, nmo_fmaf((MUT & RB_SIGN) ? b[e] : -b[e], k, m));
                } else {
                    const float xh = nmo_mul_nc(b[e], r), q = nmo_mul_nc(xh, k);
                    v = nmo_mul_nc(r, (MUT & RB_SIGN) ? nmo_add_rn(m, q) : nmo_sub_rn(m, q));
                }
                a[e] = v;
            }
            nmo_st_chunk<T, VB>(dxr, j, cnt, a, false);
        });
    }
}

template <class T, int GROUP, int BLOCK, int VB, int RED, int FORM, bool FMA, unsigned MUT, int CHUNK>
int rb_launch(const nmo_plugin_args *a, char *msg, size_t msglen)
{
    int64_t rows, n;
    nmo_k_rows(&a->in[1], &rows, &n);
    const float *rs = (const float *)a->in[3].data;
    nmo_launch(rb_dx_kernel<T, GROUP, BLOCK, VB, RED, FORM, FMA, MUT>, dim3(nmo_k_row_grid<GROUP, BLOCK>(rows)),
               dim3(BLOCK), 0, (hipStream_t)a->stream, (const T *)a->in[0].data, (const T *)a->in[1].data,
               (const T *)a->in[2].data, rs, (T *)a->out[0].data, rows, n, 1.0f / (float)n);
    NMO_HIP_CHECK_LAUNCH("rms_norm_bwd dx");
    return col_reduce<T, 0, MUT, CHUNK>(a, (const float *)NULL, rs, rows, n, msg, msglen);
}

int rb_supports(const nmo_plugin_args *a) { return nb_supports(a, 1, 2); }

#define RB_K(fname, ...)                                                                 \
    int fname(const nmo_plugin_args *a, char *msg, size_t msglen)                        \
    {                                                                                    \
        NMO_K_DISPATCH(rb_launch, __VA_ARGS__)                                           \
    }
RB_K(rb_liger, NMO_G_BLOCK, 256, 16, NMO_RED_SHFL_DOWN, F_LIGER, false, 0u, 64)
RB_K(rb_factored, NMO_G_BLOCK, 1024, 16, NMO_RED_SMEM_TREE, F_FACTORED, true, 0u, 16)
RB_K(rb_xhat_warp, NMO_G_WARP, 256, 16, NMO_RED_SHFL_XOR, F_XHAT, false, 0u, 32)
RB_K(rb_liger_vec8, NMO_G_BLOCK, 128, 8, NMO_RED_SHFL_XOR, F_LIGER, true, 0u, 128)
#define RB_MUT(fname, m) RB_K(fname, NMO_G_BLOCK, 256, 16, NMO_RED_SHFL_DOWN, F_LIGER, false, m, 64)
RB_MUT(rb_mut_acc_bf16, RB_ACC_BF16)
RB_MUT(rb_mut_rstd2, RB_RSTD2)
RB_MUT(rb_mut_sign, RB_SIGN)
RB_MUT(rb_mut_s_no_w, RB_S_NO_W)
RB_MUT(rb_mut_dw_no_rstd, RB_DW_NO_RSTD)
RB_MUT(rb_mut_dw_skip_row, RB_DW_SKIP_ROW)

} // namespace

#if !defined(__HIP_DEVICE_COMPILE__)
#define RB_ENTRY(name, correct, desc, fn)                                                \
    {"rms_norm_bwd", name, "fp32 bf16 fp16", "", correct, desc, rb_supports, fn}
NMO_HIP_TABLE(rms_norm_bwd);
extern "C" const nmo_plugin_kernel nmo_hip_kernels_rms_norm_bwd[] = {
    RB_ENTRY("liger", 1,
             "block per row (256), 16-byte vectors, m=dy*w, S=sum m*x (no FMA, shuffle-down), "
             "dx=fmaf(rstd, c3*x, rstd*m); dw: 64-row chunks, fp32 partials, second kernel",
             rb_liger),
    RB_ENTRY("factored", 1,
             "block per row (1024), smem tree, fmaf sum, c=(S*rstd^2)/N, dx=rstd*fmaf(-x,c,m); dw: 16-row chunks",
             rb_factored),
    RB_ENTRY("xhat_warp", 1,
             "warp per row, xor butterfly, xh=x*rstd, S'=sum m*xh, dx=rstd*(m - xh*(S'*RN(1/N))); dw: 32-row chunks",
             rb_xhat_warp),
    RB_ENTRY("liger_vec8", 1, "block per row (128), 8-byte vectors, fmaf sum, Liger's dx; dw: 128-row chunks",
             rb_liger_vec8),
    RB_ENTRY("mut_acc_bf16", 0, "MUTANT: S accumulated in bf16", rb_mut_acc_bf16),
    RB_ENTRY("mut_rstd2", 0, "MUTANT: correction term with rstd^2 instead of rstd^3", rb_mut_rstd2),
    RB_ENTRY("mut_sign", 0, "MUTANT: correction term added instead of subtracted", rb_mut_sign),
    RB_ENTRY("mut_s_no_w", 0, "MUTANT: S = sum dy*x (w left out of the correction sum)", rb_mut_s_no_w),
    RB_ENTRY("mut_dw_no_rstd", 0, "MUTANT: dw = sum dy*x (rstd forgotten)", rb_mut_dw_no_rstd),
    RB_ENTRY("mut_dw_skip_row", 0, "MUTANT: the dw reduction skips the last row", rb_mut_dw_skip_row),
};
extern "C" const int nmo_hip_kernels_rms_norm_bwd_n =
    (int)(sizeof nmo_hip_kernels_rms_norm_bwd / sizeof nmo_hip_kernels_rms_norm_bwd[0]);

#endif
