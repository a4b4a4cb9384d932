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
int ce_supports(const nmo_plugin_args *a)
{
    if (!ce_common(a, 3)) return 0;
    int64_t rows, V;
    nmo_k_rows(&a->in[0], &rows, &V);
    const int red = (int)nmo_k_param(a, 2, 1.0);
    if (red < 0 || red > 2) return 0;
    return nmo_k_numel(&a->out[0]) == (red == 0 ? rows : 1);
}
int ceb_supports(const nmo_plugin_args *a)
{
    if (!ce_common(a, 4)) return 0;
    const int red = (int)nmo_k_param(a, 2, 1.0);
    if (red < 0 || red > 2) return 0;
    return nmo_k_same_dims(&a->in[0], &a->out[0]);
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

#define LOSS_K(fname, launch, ...)                                                       \
    int fname(const nmo_plugin_args *a, char *msg, size_t msglen)                        \
    {                                                                                    \
        NMO_K_DISPATCH(launch, __VA_ARGS__)                                              \
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
/* kl_div with reduction 'none' (param 0 == 0) has no reduction: no geometry */
template <int GROUP, int BLOCK, int VB, int RED> int kl_geom(const nmo_plugin_args *a, char *text, size_t len)
{
    if ((int)nmo_k_param(a, 0, 3.0) == 0) return 0;
    return loss_geom_text(a, text, len, GROUP, BLOCK, VB, RED);
}
template <int GROUP, int BLOCK, int VB, int RED> int js_geom(const nmo_plugin_args *a, char *text, size_t len)
{
    return loss_geom_text(a, text, len, GROUP, BLOCK, VB, RED);
}
/* cross_entropy: the row's exp-sum over V as above, then the rows' losses (P = rows) */
template <int GROUP, int BLOCK, int VB, int RED> int ce_geom(const nmo_plugin_args *a, char *text, size_t len)
{
    return loss_geom_text(a, text, len, GROUP, BLOCK, VB, RED);
}
/* the launches' (GROUP, BLOCK, VB, RED), as in the LOSS_K lines above */
#define KL_G_BLOCK256 kl_geom<NMO_G_BLOCK, 256, 16, NMO_RED_SHFL_DOWN>
#define KL_G_BLOCK1024 kl_geom<NMO_G_BLOCK, 1024, 16, NMO_RED_SMEM_TREE>
#define KL_G_WARP kl_geom<NMO_G_WARP, 256, 8, NMO_RED_SHFL_XOR>
#define JS_G_BLOCK256 js_geom<NMO_G_BLOCK, 256, 16, NMO_RED_SHFL_DOWN>
#define JS_G_BLOCK1024 js_geom<NMO_G_BLOCK, 1024, 16, NMO_RED_SMEM_TREE>
#define JS_G_WARP js_geom<NMO_G_WARP, 256, 8, NMO_RED_SHFL_XOR>
#define CE_G_BLOCK256 ce_geom<NMO_G_BLOCK, 256, 16, NMO_RED_SHFL_DOWN>
#define CE_G_BLOCK1024 ce_geom<NMO_G_BLOCK, 1024, 16, NMO_RED_SMEM_TREE>
#define CE_G_WARP ce_geom<NMO_G_WARP, 256, 16, NMO_RED_SHFL_XOR>
#define CE_G_BLOCK128 ce_geom<NMO_G_BLOCK, 128, 8, NMO_RED_SHFL_XOR>
/* cross_entropy_bwd: each row's exp-sum as above; P = rows also covers the count of the
 * rows that are not ignored (the mean's n: an integer sum, exact) */
#define CEB_G_BLOCK256 ce_geom<NMO_G_BLOCK, 256, 16, NMO_RED_SHFL_DOWN>
#define CEB_G_BLOCK1024 ce_geom<NMO_G_BLOCK, 1024, 16, NMO_RED_SMEM_TREE>
#define CEB_G_WARP ce_geom<NMO_G_WARP, 256, 16, NMO_RED_SHFL_XOR>

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
