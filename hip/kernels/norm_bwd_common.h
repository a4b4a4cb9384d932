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
#ifndef NMO_K_NORM_BWD_COMMON_H
#define NMO_K_NORM_BWD_COMMON_H
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
} // namespace

#endif
