/* numoracle HIP kernels: losses over rows — cross_entropy (forward), cross_entropy_bwd,
 * kl_div, jsd.
 *
 *   cross_entropy      in x[M, V] (T), labels[M] (fp32 integer values)  out loss [M] | [1]
 *                      params ignore_index, label_smoothing, reduction (0 none, 1 mean, 2 sum)
 *   cross_entropy_bwd  the same inputs, out dx[M, V]; + param grad_output
 *   kl_div             in input, target [..., N] (T; z_input, z_target not read)
 *                      out loss [..., N] | [1]; params reduction (0 none, 1 mean, 2 sum,
 *                      3 batchmean), log_target
 *   jsd                in log_q, log_p [..., N] (T; z_q, z_p not read)  out loss [1]; param beta
 *
 * Plans honoured: the dtype default with the platform's math library (NMO_HIP_FN_PLAN),
 * fused (inter = compute), sum=any. The forms are those refs/cross_entropy.c,
 * cross_entropy_bwd.c, kl_div.c and jsd.c enclose (see each kernel): exact row max,
 * e = expf(RN(x - m)), s = sum e in any tree (fp32), l = logf(s), lse = RN(m + l); the
 * Liger, PyTorch and textbook combinations; per-row values kept in fp32 (acc) and summed
 * over rows by a second single-block kernel (any order).
 *
 * Structure: one block (or one warp) per row, grid-stride over rows, 16/8-byte vector
 * loads with a scalar head/tail (odd widths), warp shuffles + shared memory; the
 * exponentials are recomputed in the second pass (the same values); the row reductions
 * of the scalar losses go through an fp32 workspace and a one-block final kernel.
 * The softmax of a row is two-pass over the whole row in one block (the references do
 * not model the online, multi-block softmax Liger runs for very large V).
 *
 * Mutants: names of refs/cand/<op>_cand.c, the default kernel with one bug each. */
#ifndef NMO_K_LOSS_COMMON_H
#define NMO_K_LOSS_COMMON_H
#include <cstdio>

#include "kcommon.h"

namespace {

enum : unsigned {
    /* cross_entropy / cross_entropy_bwd */
    CE_MEAN_ALL_ROWS = 1u << 0, /* mean divides by M */
    CE_LSE_NO_M = 1u << 1,      /* lse = logf(s) */
    CE_ACC_BF16 = 1u << 2,      /* exp sum in bf16 */
    CE_LABEL_OFF1 = 1u << 3,    /* target at (y+1) mod V */
    CE_SKIP_LAST = 1u << 4,     /* exp sum skips the last logit */
    CE_IGNORE_CLAMP = 1u << 5,  /* ignore_index rows clamped to label 0 and counted */
    CE_NO_ONEHOT = 1u << 6,     /* bwd: -(1-ls) at the label forgotten */
    CE_IGNORE_GRAD = 1u << 7,   /* bwd: ignored rows get the softmax gradient */
    /* kl_div */
    KL_AS_MEAN = 1u << 8,   /* batchmean divides by numel */
    KL_NO_LOG = 1u << 9,    /* t*(t - x) */
    KL_ACC_BF16 = 1u << 10, /* row sums in bf16 */
    KL_SWAPPED = 1u << 11,  /* exp(x)*(x - log t) */
    KL_SKIP_LAST = 1u << 12,
    /* jsd */
    JS_NO_SCALE = 1u << 13,     /* no 1/rows */
    JS_GEOMETRIC_M = 1u << 14,  /* M = exp(beta*Y + (1-beta)*X) */
    JS_ACC_BF16 = 1u << 15,
    JS_P_ONLY = 1u << 16,       /* only the teacher's term */
    JS_SKIP_LAST = 1u << 17,
    JS_M_UNWEIGHTED = 1u << 18, /* M = P + Q */
};

/* ------------------------------------------------------------------ shared row pieces */

/* Row max of p[0, n) over the row group. */
template <class T, int GROUP, int BLOCK, int VB> NMO_D float row_max(const T *p, int64_t n, int t, int nt, float *smem)
{
    constexpr int E = VB / (int)sizeof(T);
    float m = nmo_u2f(0xff800000u);
    nmo_row_visit<T, VB>(p, n, t, nt, [&](int64_t j, int cnt) {
        float a[E];
        nmo_ld_chunk<T, VB>(p, j, cnt, a);
        for (int e = 0; e < cnt; e++) m = a[e] > m ? a[e] : m;
    });
    return nmo_grp_max<GROUP, BLOCK>(m, smem);
}
/* sum_j expf(RN(p_j - m)) over j < nred, accumulator rounded per ACC16. */
template <class T, int GROUP, int BLOCK, int VB, int RED, int ACC16>
NMO_D float row_expsum(const T *p, int64_t n, int64_t nred, float m, int t, int nt, float *smem)
{
    constexpr int E = VB / (int)sizeof(T);
    float acc = 0.0f;
    nmo_row_visit<T, VB>(p, n, t, nt, [&](int64_t j, int cnt) {
        float a[E];
        nmo_ld_chunk<T, VB>(p, j, cnt, a);
        for (int e = 0; e < cnt; e++)
            if (j + e < nred) acc = nmo_acc_round<ACC16>(nmo_add_rn(acc, nmo_expf(nmo_sub_rn(a[e], m))));
    });
    return nmo_grp_sum<GROUP, BLOCK, RED, ACC16>(acc, smem);
}

/* One block: out[0] = sum of the M row values (pre: each divided by nf (1) or times
 * RN(1/nf) (2) first), then post-divided (1) or multiplied by RN(1/nf) (2). nf: div, or
 * (count 1) the rows whose label is a class, or (count 2) M. */
template <class T>
__global__ void __launch_bounds__(256)
    rows_final_kernel(const float *__restrict__ rowv, const float *__restrict__ labels, T *__restrict__ out,
                      int64_t M, int64_t V, float ignore, int count, float div, int pre, int post)
{
    __shared__ float smem[257];
    const int t = (int)threadIdx.x;
    float nf = div;
    if (count == 1) {
        float c = 0.0f;
        for (int64_t i = t; i < M; i += 256) c += nmo_label(labels[i], V, ignore) >= 0 ? 1.0f : 0.0f;
        nf = nmo_block_sum<256, NMO_RED_SHFL_DOWN, NMO_ACC32>(c, smem);
    } else if (count == 2) {
        nf = (float)M;
    }
    const float inv = 1.0f / nf;
    float acc = 0.0f;
    for (int64_t i = t; i < M; i += 256) {
        float v = rowv[i];
        if (pre == 1) v = v / nf;
        else if (pre == 2) v = nmo_mul_nc(v, inv);
        acc = nmo_add_rn(acc, v);
    }
    float s = nmo_block_sum<256, NMO_RED_SHFL_DOWN, NMO_ACC32>(acc, smem);
    if (post == 1) s = s / nf;
    else if (post == 2) s = nmo_mul_nc(s, inv);
    if (t == 0) nmo_stf(out, s, false);
}
/* One block: *nf = number of rows with a class label (or M). */
__global__ void __launch_bounds__(256)
    count_kernel(const float *__restrict__ labels, float *__restrict__ nf, int64_t M, int64_t V, float ignore,
                 int all)
{
    __shared__ float smem[257];
    float c = 0.0f;
    for (int64_t i = threadIdx.x; i < M; i += 256) c += (all || nmo_label(labels[i], V, ignore) >= 0) ? 1.0f : 0.0f;
    c = nmo_block_sum<256, NMO_RED_SHFL_DOWN, NMO_ACC32>(c, smem);
    if (threadIdx.x == 0) *nf = c;
}

/* Launch the final kernel, synchronize, free the workspace. */
template <class T>
int finish_rows(const nmo_plugin_args *a, float *ws, const float *labels, int64_t M, int64_t V, float ignore,
                int count, float div, int pre, int post, const char *what, char *msg, size_t msglen)
{
    hipStream_t st = (hipStream_t)a->stream;
    hipError_t e = hipGetLastError();
    if (e == hipSuccess) {
        nmo_launch(rows_final_kernel<T>, dim3(1), dim3(256), 0, st, (const float *)ws, labels, (T *)a->out[0].data,
                   M, V, ignore, count, div, pre, post);
        e = hipGetLastError();
    }
    if (e == hipSuccess) e = hipStreamSynchronize(st); /* the workspace is freed below */
    hipFree(ws);
    if (e != hipSuccess) {
        nmo_hip_msg(msg, msglen, "%s: %s", what, hipGetErrorString(e));
        return NMO_PLUGIN_ERROR;
    }
    return NMO_PLUGIN_OK;
}

/* ------------------------------------------------------------------ supports */

int ce_common(const nmo_plugin_args *a, int n_param_min)
{
    (void)n_param_min;
    if (!a || a->n_in != 2 || a->n_out != 1) return 0;
    const int dt = a->in[0].dtype;
    if (!nmo_k_dtype_ok(dt) || !nmo_k_tensor_ok(&a->in[0], dt) || !nmo_k_tensor_ok(&a->out[0], dt)) return 0;
    int64_t rows, V;
    nmo_k_rows(&a->in[0], &rows, &V);
    if (V < 1 || rows < 1 || V > (1 << 24)) return 0;
    if (!nmo_k_tensor_ok(&a->in[1], NMO_PLUGIN_DT_FP32) || nmo_k_numel(&a->in[1]) != rows) return 0;
    return nmo_k_aligned16(a->in[0].data) && nmo_k_aligned16(a->out[0].data);
}

#define LOSS_K(fname, launch, ...)                                                       \
    int fname(const nmo_plugin_args *a, char *msg, size_t msglen)                        \
    {                                                                                    \
        NMO_K_DISPATCH(launch, __VA_ARGS__)                                              \
    }
/* ------------------------------------------------------------------ reduction geometry */

/* The reduction geometry of the loss launches: nmo_k_row_geometry (kcommon.h), the row
 * partials (fp32, rows_final_kernel: a 256-thread strided fold and a block tree) added in
 * any order: P = rows. */
static int loss_geom_text(const nmo_plugin_args *a, char *text, size_t len, int group, int block, int vb, int red)
{
    int64_t rows, n;
    nmo_k_rows(&a->in[0], &rows, &n);
    return nmo_k_row_geometry(&a->in[0], text, len, group, block, vb, red, rows);
}
/* cross_entropy: the row's exp-sum over V as above, then the rows' losses (P = rows) */
template <int GROUP, int BLOCK, int VB, int RED> int ce_geom(const nmo_plugin_args *a, char *text, size_t len)
{
    return loss_geom_text(a, text, len, GROUP, BLOCK, VB, RED);
}
} // namespace

#endif
