/* numoracle HIP kernels: jsd, generalized Jensen-Shannon divergence.
 * Kernel templates shared with its sibling operator, and the plan notes: loss_common.h. */
#include "loss_common.h"

namespace {

/* ------------------------------------------------------------------ jsd */

/* FORM 0 (Liger): Q = RN(expf(RN(X - mx))*expf(mx)), P likewise, bP = RN(beta P),
 * oQ = RN((1-beta) Q), M = bP + oQ, l = fmaf(-M, logf(M), fmaf(bP, Y, RN(oQ*X))) * RN(1/rows);
 * FORM 2: Q = expf(X), P = expf(Y), l = (RN(bP*Y) + RN(oQ*X)) - RN(M*logf(M)), the sum
 * times RN(1/rows) at the end. beta 0: P*(Y - X); beta 1: Q*(X - Y). */
template <int FORM, unsigned MUT>
NMO_D float jsd_elem(float x, float y, float mx, float emx, float bf, float ob, float scale)
{
    const float Q = FORM == 0 ? nmo_mul_nc(nmo_expf(nmo_sub_rn(x, mx)), emx) : nmo_expf(x);
    const float P = FORM == 0 ? nmo_mul_nc(nmo_expf(nmo_sub_rn(y, mx)), emx) : nmo_expf(y);
    float v;
    if (bf == 0.0f) v = nmo_mul_nc(P, nmo_sub_rn(y, x));
    else if (bf == 1.0f) v = nmo_mul_nc(Q, nmo_sub_rn(x, y));
    else {
        const float bP = nmo_mul_nc(bf, P), oQ = nmo_mul_nc(ob, Q);
        float Mm;
        if (MUT & JS_GEOMETRIC_M) Mm = nmo_expf(nmo_add_rn(nmo_mul_nc(bf, y), nmo_mul_nc(ob, x)));
        else if (MUT & JS_M_UNWEIGHTED) Mm = nmo_add_rn(P, Q);
        else Mm = nmo_add_rn(bP, oQ);
        const float lM = nmo_logf(Mm);
        if (MUT & JS_P_ONLY) v = nmo_mul_nc(bP, nmo_sub_rn(y, lM));
        else if (FORM == 2)
            v = nmo_sub_rn(nmo_add_rn(nmo_mul_nc(bP, y), nmo_mul_nc(oQ, x)), nmo_mul_nc(Mm, lM));
        else v = nmo_fmaf(-Mm, lM, nmo_fmaf(bP, y, nmo_mul_nc(oQ, x)));
    }
    return (FORM == 0 && !(MUT & JS_NO_SCALE)) ? nmo_mul_nc(v, scale) : v;
}

template <class T, int GROUP, int BLOCK, int VB, int RED, int FORM, unsigned MUT>
__global__ void __launch_bounds__(BLOCK)
    jsd_kernel(const T *__restrict__ X, const T *__restrict__ Y, float *__restrict__ rows_out, int64_t rows,
               int64_t n, float bf, float scale)
{
    constexpr int E = VB / (int)sizeof(T);
    constexpr int ACC16 = (MUT & JS_ACC_BF16) ? NMO_ACC_BF16 : NMO_ACC32;
    __shared__ float smem[BLOCK + 1];
    const nmo_rowgeo<GROUP, BLOCK> g;
    const float ob = 1.0f - bf;
    const int64_t nred = (MUT & JS_SKIP_LAST) ? n - 1 : n;
    for (int64_t row = g.r0; row < rows; row += g.rstep) {
        const T *xr = X + row * n, *yr = Y + row * n;
        float mx = 0.0f, emx = 1.0f;
        if (FORM == 0) {
            const float m1 = row_max<T, GROUP, BLOCK, VB>(xr, n, g.t, g.nt, smem);
            const float m2 = row_max<T, GROUP, BLOCK, VB>(yr, n, g.t, g.nt, smem);
            mx = bf == 0.0f ? m2 : bf == 1.0f ? m1 : (m1 > m2 ? m1 : m2);
            emx = nmo_expf(mx);
        }
        float acc = 0.0f;
        nmo_row_visit<T, VB>(xr, n, g.t, g.nt, [&](int64_t j, int cnt) {
            float a[E], b[E];
            nmo_ld_chunk<T, VB>(xr, j, cnt, a);
            nmo_ld_chunk<T, VB>(yr, j, cnt, b);
            for (int e = 0; e < cnt; e++)
                if (j + e < nred)
                    acc = nmo_acc_round<ACC16>(nmo_add_rn(acc, jsd_elem<FORM, MUT>(a[e], b[e], mx, emx, bf, ob, scale)));
        });
        const float s = nmo_grp_sum<GROUP, BLOCK, RED, ACC16>(acc, smem);
        if (g.t == 0) rows_out[row] = s;
    }
}

template <class T, int GROUP, int BLOCK, int VB, int RED, int FORM, unsigned MUT>
int jsd_launch(const nmo_plugin_args *a, char *msg, size_t msglen)
{
    int64_t rows, n;
    nmo_k_rows(&a->in[0], &rows, &n);
    if ((MUT & JS_SKIP_LAST) && n < 2) return NMO_PLUGIN_UNSUPPORTED;
    const float bf = (float)nmo_k_param(a, 0, 0.5);
    hipStream_t st = (hipStream_t)a->stream;
    float *ws = NULL;
    NMO_HIP_TRY(hipMalloc((void **)&ws, (size_t)rows * sizeof(float)));
    nmo_launch(jsd_kernel<T, GROUP, BLOCK, VB, RED, FORM, MUT>, dim3(nmo_k_row_grid<GROUP, BLOCK>(rows)), dim3(BLOCK),
               0, st, (const T *)a->in[0].data, (const T *)a->in[1].data, ws, rows, n, bf, 1.0f / (float)rows);
    const int post = (FORM == 0 || (MUT & JS_NO_SCALE)) ? 0 : 2;
    return finish_rows<T>(a, ws, (const float *)NULL, rows, n, 0.0f, 0, (float)rows, 0, post, "jsd", msg, msglen);
}

int jsd_supports(const nmo_plugin_args *a)
{
    if (!a || a->n_in < 2 || a->n_out != 1) return 0;
    const int dt = a->in[0].dtype;
    if (!nmo_k_dtype_ok(dt) || !nmo_k_tensor_ok(&a->in[0], dt) || !nmo_k_tensor_ok(&a->in[1], dt) ||
        !nmo_k_tensor_ok(&a->out[0], dt))
        return 0;
    if (!nmo_k_same_dims(&a->in[0], &a->in[1]) || nmo_k_numel(&a->out[0]) != 1) return 0;
    int64_t rows, n;
    nmo_k_rows(&a->in[0], &rows, &n);
    if (n < 1 || rows < 1 || rows > (1 << 24)) return 0;
    return nmo_k_aligned16(a->in[0].data) && nmo_k_aligned16(a->in[1].data);
}

/* jsd: GROUP, BLOCK, VB, RED, FORM, MUT */
LOSS_K(js_block256, jsd_launch, NMO_G_BLOCK, 256, 16, NMO_RED_SHFL_DOWN, 0, 0u)
LOSS_K(js_block1024_direct, jsd_launch, NMO_G_BLOCK, 1024, 16, NMO_RED_SMEM_TREE, 2, 0u)
LOSS_K(js_warp_row, jsd_launch, NMO_G_WARP, 256, 8, NMO_RED_SHFL_XOR, 0, 0u)
#define JS_MUT(fname, m) LOSS_K(fname, jsd_launch, NMO_G_BLOCK, 256, 16, NMO_RED_SHFL_DOWN, 0, m)
JS_MUT(js_mut_no_scale, JS_NO_SCALE)
JS_MUT(js_mut_geometric_m, JS_GEOMETRIC_M)
JS_MUT(js_mut_acc_bf16, JS_ACC_BF16)
JS_MUT(js_mut_p_only, JS_P_ONLY)
JS_MUT(js_mut_skip_last, JS_SKIP_LAST)
JS_MUT(js_mut_m_unweighted, JS_M_UNWEIGHTED)

template <int GROUP, int BLOCK, int VB, int RED> int js_geom(const nmo_plugin_args *a, char *text, size_t len)
{
    return loss_geom_text(a, text, len, GROUP, BLOCK, VB, RED);
}
#define JS_G_BLOCK256 js_geom<NMO_G_BLOCK, 256, 16, NMO_RED_SHFL_DOWN>
#define JS_G_BLOCK1024 js_geom<NMO_G_BLOCK, 1024, 16, NMO_RED_SMEM_TREE>
#define JS_G_WARP js_geom<NMO_G_WARP, 256, 8, NMO_RED_SHFL_XOR>

} // namespace

#if !defined(__HIP_DEVICE_COMPILE__)
#define JS_ENTRY(name, correct, desc, fn, geo)                                           \
    {"jsd", name, "fp32 bf16 fp16", NMO_HIP_FN_PLAN, correct, desc, jsd_supports, fn, geo}
NMO_HIP_TABLE(jsd);
extern "C" const nmo_plugin_kernel nmo_hip_kernels_jsd[] = {
    JS_ENTRY("block256", 1,
             "Liger: compensated expf, fmaf(-M, logf(M), fmaf(bP, Y, oQ*X)) * RN(1/rows), block per row (256), "
             "one-block sum over rows",
             js_block256, JS_G_BLOCK256),
    JS_ENTRY("block1024_direct", 1, "direct expf, (bP*Y + oQ*X) - M*logf(M), smem tree, sum*RN(1/rows)",
             js_block1024_direct, JS_G_BLOCK1024),
    JS_ENTRY("warp_row", 1, "Liger's form, warp per row, 8-byte vectors, xor butterfly", js_warp_row, JS_G_WARP),
    JS_ENTRY("mut_no_scale", 0, "MUTANT: the 1/rows scaling forgotten", js_mut_no_scale, JS_G_BLOCK256),
    JS_ENTRY("mut_geometric_m", 0, "MUTANT: M = exp(beta*Y + (1-beta)*X) (geometric mixture)", js_mut_geometric_m, JS_G_BLOCK256),
    JS_ENTRY("mut_acc_bf16", 0, "MUTANT: row sums in a bf16 accumulator", js_mut_acc_bf16, JS_G_BLOCK256),
    JS_ENTRY("mut_p_only", 0, "MUTANT: only the teacher's KL term", js_mut_p_only, JS_G_BLOCK256),
    JS_ENTRY("mut_skip_last", 0, "MUTANT: row sum skips the last element", js_mut_skip_last, JS_G_BLOCK256),
    JS_ENTRY("mut_m_unweighted", 0, "MUTANT: M = P + Q (mixture weights forgotten)", js_mut_m_unweighted, JS_G_BLOCK256),
};
extern "C" const int nmo_hip_kernels_jsd_n = (int)(sizeof nmo_hip_kernels_jsd / sizeof nmo_hip_kernels_jsd[0]);
#endif
