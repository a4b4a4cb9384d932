/* numoracle HIP kernels: rms_norm_bwd and layer_norm_bwd, given the forward's saved
 * statistics (fp32 per row).
 *
 *   rms_norm_bwd    in dy[..., N], x[..., N], w[N] (T), rstd[rows] (fp32)
 *                   out dx[..., N], dw[N] (T)
 *   layer_norm_bwd  in dy, x, w (T), mean[rows], rstd[rows] (fp32)
 *                   out dx[..., N], dw[N], db[N] (T)
 *
 * Plan honoured (every variant): the dtype's default (fused: inter = compute; sum=any),
 * the forms refs/rms_norm_bwd.c and refs/layer_norm_bwd.c enclose:
 *   rms_norm_bwd: m = RN(dy*w); S = sum m*x (or m*xh, xh = RN(x*rstd)) in any tree, FMA
 *     or not; dx in Liger's form fmaf(rstd, RN(c3*x), RN(rstd*m)), c3 = ((-(1/N)*rstd)*
 *     rstd)*S, the factored form rstd*fmaf(-x, RN(S*RN(rstd^2))/N, m), or the normalized
 *     form rstd*(m - xh*(S'*RN(1/N)));
 *   layer_norm_bwd: d = x - mean, xh = RN(d*rstd), wdy = RN(w*dy), S1 = sum xh*wdy, S2 =
 *     sum wdy (any tree, FMA or not); dx in Liger's (wdy - fmaf(xh, S1/N, S2/N))*rstd,
 *     Apex's ((wdy - xh*c1) - c2)*rstd or PyTorch's (fmaf(-xh, S1, (N*w)*dy) - S2) *
 *     ((1/N)*rstd) form;
 *   dw = sum_i fmaf(dy, RN(x*rstd) | RN(RN(x - mean)*rstd), acc), db = sum_i dy: per
 *     block fp32 partials over a chunk of rows (8 row lanes per column, then the lanes in
 *     order) into a workspace, then a second kernel adds the chunks in order (sum=any:
 *     any tree over rows; the partials are fp32 = acc, as the references require).
 *
 * Structure: dx by one block (or one warp) per row, grid-stride over rows, 16/8-byte
 * vector loads of dy and x with a scalar head/tail (odd widths), w vectorized when its
 * address allows, fp32 accumulation, warp shuffles + shared memory; two passes over the
 * row (the second pass re-reads dy, x from L2). dw/db: 32 columns x 8 row lanes per
 * block, coalesced along the row, a chunk of rows per block (grid.y).
 *
 * Mutants (names of refs/cand/rms_norm_bwd_cand.c, layer_norm_bwd_cand.c): the default
 * kernel with one realistic bug each. */
#include "kcommon.h"

namespace {

enum : unsigned {
    /* rms_norm_bwd */
    RB_ACC_BF16 = 1u << 0,    /* S accumulated in bf16 */
    RB_RSTD2 = 1u << 1,       /* correction with rstd^2 instead of rstd^3 */
    RB_SIGN = 1u << 2,        /* correction added */
    RB_S_NO_W = 1u << 3,      /* S = sum dy*x */
    RB_DW_NO_RSTD = 1u << 4,  /* dw = sum dy*x */
    RB_DW_SKIP_ROW = 1u << 5, /* dw misses the last row */
    /* layer_norm_bwd */
    LB_NO_C2 = 1u << 6,        /* mean of w*dy not subtracted */
    LB_C1_NO_W = 1u << 7,      /* c1 = sum(xh*dy)/N */
    LB_NO_RSTD = 1u << 8,      /* final * rstd forgotten */
    LB_ACC_BF16 = 1u << 9,     /* S1 accumulated in bf16 */
    LB_DW_RAW_X = 1u << 10,    /* dw = sum dy*x */
    LB_DB_SKIP_ROW = 1u << 11, /* db misses the last row */
};
enum { F_LIGER = 0, F_FACTORED = 1, F_XHAT = 2, F_APEX = 3, F_PYTORCH = 4 };

NMO_D float macc(bool fma, float acc, float a, float b)
{
    return fma ? nmo_fmaf(a, b, acc) : nmo_madd_nofma(acc, a, b);
}

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

/* ------------------------------------------------------------------ dw / db over rows */

/* KIND 0: rms dw = sum_i fmaf(dy, RN(x*rstd), acc); KIND 1: layer_norm dw (x - mean) and
 * db. 256 threads: 32 columns x 8 row lanes; block (bx, by) covers columns 32*bx.. and
 * rows [by*chunk, (by+1)*chunk); partial sums -> part[plane][by][j] (fp32). */
template <class T, int KIND, unsigned MUT>
__global__ void __launch_bounds__(256)
    col_partial_kernel(const T *__restrict__ dy, const T *__restrict__ x, const float *__restrict__ mean,
                       const float *__restrict__ rstd, float *__restrict__ part, int64_t M, int64_t N,
                       int64_t chunk)
{
    __shared__ float s0[8][33];
    __shared__ float s1[8][33];
    const int cx = (int)threadIdx.x % 32, ry = (int)threadIdx.x / 32;
    const int64_t j = (int64_t)blockIdx.x * 32 + cx, rb = blockIdx.y, nrb = gridDim.y;
    const int64_t lo = rb * chunk, hi = lo + chunk < M ? lo + chunk : M;
    const int64_t hi_w = (MUT & RB_DW_SKIP_ROW) && hi > M - 1 ? M - 1 : hi;
    const int64_t hi_b = (MUT & LB_DB_SKIP_ROW) && hi > M - 1 ? M - 1 : hi;
    float a0 = 0.0f, a1 = 0.0f;
    if (j < N) {
        for (int64_t i = lo + ry; i < hi; i += 8) {
            const float d = nmo_ldf(dy + i * N + j), xv = nmo_ldf(x + i * N + j);
            if (KIND == 0) {
                if (i < hi_w) a0 = nmo_fmaf(d, (MUT & RB_DW_NO_RSTD) ? xv : nmo_mul_nc(xv, rstd[i]), a0);
            } else {
                const float xh = (MUT & LB_DW_RAW_X) ? xv : nmo_mul_nc(nmo_sub_rn(xv, mean[i]), rstd[i]);
                a0 = nmo_fmaf(d, xh, a0);
                if (i < hi_b) a1 = nmo_add_rn(a1, d);
            }
        }
    }
    s0[ry][cx] = a0;
    s1[ry][cx] = a1;
    __syncthreads();
    if (ry == 0 && j < N) {
        float p0 = s0[0][cx], p1 = s1[0][cx];
        for (int k = 1; k < 8; k++) {
            p0 = nmo_add_rn(p0, s0[k][cx]);
            p1 = nmo_add_rn(p1, s1[k][cx]);
        }
        part[rb * N + j] = p0;
        if (KIND == 1) part[(nrb + rb) * N + j] = p1;
    }
}

/* out_p[j] = sum over the nrb chunks of part[p][.][j], in chunk order, one RNE store. */
template <class T, int NOUT>
__global__ void __launch_bounds__(256)
    col_final_kernel(const float *__restrict__ part, T *__restrict__ o0, T *__restrict__ o1, int64_t N,
                     int64_t nrb)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; j < N; j += stride) {
        float p = 0.0f, q = 0.0f;
        for (int64_t rb = 0; rb < nrb; rb++) {
            p = nmo_add_rn(p, part[rb * N + j]);
            if (NOUT == 2) q = nmo_add_rn(q, part[(nrb + rb) * N + j]);
        }
        nmo_stf(o0 + j, p, false);
        if (NOUT == 2) nmo_stf(o1 + j, q, false);
    }
}

/* dw (and db) through a workspace: CHUNK rows per block. */
template <class T, int KIND, unsigned MUT, int CHUNK>
int col_reduce(const nmo_plugin_args *a, const float *mean, const float *rstd, int64_t M, int64_t N, char *msg,
               size_t msglen)
{
    hipStream_t st = (hipStream_t)a->stream;
    int64_t nrb = (M + CHUNK - 1) / CHUNK;
    if (nrb > 4096) nrb = 4096;
    if (nrb < 1) nrb = 1;
    const int64_t chunk = (M + nrb - 1) / nrb > 0 ? (M + nrb - 1) / nrb : 1;
    const int planes = KIND == 1 ? 2 : 1;
    float *ws = NULL;
    NMO_HIP_TRY(hipMalloc((void **)&ws, (size_t)planes * (size_t)nrb * (size_t)N * sizeof(float)));
    nmo_launch(col_partial_kernel<T, KIND, MUT>, dim3((unsigned)((N + 31) / 32), (unsigned)nrb), dim3(256), 0, st,
               (const T *)a->in[0].data, (const T *)a->in[1].data, mean, rstd, ws, M, N, chunk);
    hipError_t e = hipGetLastError();
    if (e == hipSuccess) {
        T *o1 = KIND == 1 ? (T *)a->out[2].data : (T *)NULL;
        if (KIND == 1)
            nmo_launch(col_final_kernel<T, 2>, dim3(nmo_k_grid((N + 255) / 256)), dim3(256), 0, st,
                       (const float *)ws, (T *)a->out[1].data, o1, N, nrb);
        else
            nmo_launch(col_final_kernel<T, 1>, dim3(nmo_k_grid((N + 255) / 256)), dim3(256), 0, st,
                       (const float *)ws, (T *)a->out[1].data, o1, N, nrb);
        e = hipGetLastError();
    }
    if (e == hipSuccess) e = hipStreamSynchronize(st); /* the workspace is freed below */
    hipFree(ws);
    if (e != hipSuccess) {
        nmo_hip_msg(msg, msglen, "dw/db column reduction: %s", hipGetErrorString(e));
        return NMO_PLUGIN_ERROR;
    }
    return NMO_PLUGIN_OK;
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

/* dy, x (T, same dims), w [N] (T), n_stats fp32 [rows] tensors; dx like x, then [N] outputs. */
int nb_supports(const nmo_plugin_args *a, int n_stats, int n_out)
{
    if (!a || a->n_in != 3 + n_stats || a->n_out != n_out) return 0;
    const int dt = a->in[0].dtype;
    if (!nmo_k_dtype_ok(dt)) return 0;
    for (int k = 0; k < 3; k++)
        if (!nmo_k_tensor_ok(&a->in[k], dt)) return 0;
    for (int k = 0; k < n_out; k++)
        if (!nmo_k_tensor_ok(&a->out[k], dt)) return 0;
    int64_t rows, n;
    nmo_k_rows(&a->in[1], &rows, &n);
    if (n < 1 || n > (1 << 24) || rows < 1) return 0;
    if (!nmo_k_same_dims(&a->in[0], &a->in[1]) || !nmo_k_same_dims(&a->in[1], &a->out[0])) return 0;
    if (nmo_k_numel(&a->in[2]) != n) return 0;
    for (int k = 0; k < n_stats; k++)
        if (!nmo_k_tensor_ok(&a->in[3 + k], NMO_PLUGIN_DT_FP32) || nmo_k_numel(&a->in[3 + k]) != rows) return 0;
    for (int k = 1; k < n_out; k++)
        if (nmo_k_numel(&a->out[k]) != n) return 0;
    /* dy, x and dx rows share their alignment (vector body) */
    return nmo_k_aligned16(a->in[0].data) && nmo_k_aligned16(a->in[1].data) && nmo_k_aligned16(a->out[0].data);
}
int rb_supports(const nmo_plugin_args *a) { return nb_supports(a, 1, 2); }
int lb_supports(const nmo_plugin_args *a) { return nb_supports(a, 2, 3); }

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
