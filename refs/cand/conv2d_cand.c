/* numoracle: CPU candidates for conv2d — emulations of direct and implicit-GEMM
 * convolution kernels (cross-correlation), NCHW or NHWC.
 *
 *   in  x[N,C,H,W] / [N,H,W,C], w[K,C,R,S] / [K,R,S,C]   dtype plan->in
 *   out y[N,K,P,Q] / [N,P,Q,K]                            dtype plan->out
 *   param stride, padding, dilation, layout (0 NCHW, 1 NHWC), groups G (w [K,C/G,R,S]:
 *   output channel k reads input channels k/(K/G)*C/G + c, c < C/G)
 *
 * Rounding points of every kernel here (fp32): each fmaf (or product and add) over the
 * taps in the kernel's order — padded taps are either skipped or fed as zeros (exact no-op
 * adds) — the tile / split partial sums, and the final store into plan->out. The first
 * correct variant (direct_crs) is the default. Mutants are detectable with the default
 * parameters (stride 1, padding 1, dilation 1, NCHW); tests/test_linalg_params.c adds
 * stride/dilation/layout sweeps and their bugs. */
#include "cand_util.h"

typedef enum {
    CV_DIRECT_CRS = 0, /* loops c, r, s (skip padded taps), one fmaf accumulator */
    CV_IGEMM_RSC_KTILE, /* im2col K order (r, s, c) with padded zeros, k-tiles of 32 */
    CV_SPLIT_C2,        /* channels split in two halves, (r,s) inner, no FMA, halves added */
    CV_WARP32           /* taps (c,r,s) flattened, 32 lanes strided, xor butterfly (zeros fed) */
} cv_algo;

typedef struct {
    cv_algo algo;
    /* mutant knobs */
    int flip;           /* true convolution: w[R-1-r][S-1-s] */
    int pad_off1;       /* window offset uses padding - 1 */
    int acc16;          /* bf16 running accumulator */
    int skip_last_c;    /* channel loop bound C-1 */
    int x_as_nhwc;      /* NCHW x read with NHWC indexing */
    int store_rz;
} cv_cfg;

typedef struct {
    int64_t N, C, H, W, K, R, S, P, Q, st, pad, dil;
    int64_t Cw; /* the filter's channels, C/G */
    int layout;
} cv_dims;

static float cv_x(const float *x, const cv_dims *d, const cv_cfg *c, int64_t n, int64_t ch, int64_t h,
                  int64_t w) {
    if (d->layout == 1 || c->x_as_nhwc) return x[((n * d->H + h) * d->W + w) * d->C + ch];
    return x[((n * d->C + ch) * d->H + h) * d->W + w];
}
static float cv_w(const float *wt, const cv_dims *d, int64_t k, int64_t ch, int64_t r, int64_t s) {
    if (d->layout == 1) return wt[((k * d->R + r) * d->S + s) * d->Cw + ch];
    return wt[((k * d->Cw + ch) * d->R + r) * d->S + s];
}

static nmo_status cv_run(const nmo_cand_args *a, nmo_err *err, const cv_cfg *c) {
    static const char op[] = "conv2d";
    NMO_RETURN_IF_ERR(nmo_cu_check_args(a, op, 2, 1, err));
    if (a->n_param < 4 || !a->param)
        return nmo_err_set(err, NMO_ERR_USAGE, "conv2d candidate: needs stride, padding, dilation, layout");
    cv_dims d;
    d.st = (int64_t)a->param[0], d.pad = (int64_t)a->param[1], d.dil = (int64_t)a->param[2];
    d.layout = (int)a->param[3];
    const nmo_tensor *tx = &a->in[0], *tw = &a->in[1];
    if (tx->ndims != 4 || tw->ndims != 4 || d.st < 1 || d.dil < 1 || d.pad < 0)
        return nmo_err_set(err, NMO_ERR_USAGE, "conv2d candidate: bad tensors or parameters");
    d.N = tx->dims[0], d.K = tw->dims[0];
    if (d.layout == 0) d.C = tx->dims[1], d.H = tx->dims[2], d.W = tx->dims[3], d.R = tw->dims[2], d.S = tw->dims[3];
    else d.H = tx->dims[1], d.W = tx->dims[2], d.C = tx->dims[3], d.R = tw->dims[1], d.S = tw->dims[2];
    int64_t G = a->n_param >= 5 ? (int64_t)a->param[4] : 1;
    if (G < 1 || d.C % G || d.K % G) return nmo_err_set(err, NMO_ERR_USAGE, "conv2d candidate: bad groups");
    d.Cw = d.C / G;
    d.P = (d.H + 2 * d.pad - d.dil * (d.R - 1) - 1) / d.st + 1;
    d.Q = (d.W + 2 * d.pad - d.dil * (d.S - 1) - 1) / d.st + 1;
    int64_t dx[4], dw[4], dy[4];
    if (d.layout == 0) {
        int64_t a1[4] = {d.N, d.C, d.H, d.W}, a2[4] = {d.K, d.Cw, d.R, d.S}, a3[4] = {d.N, d.K, d.P, d.Q};
        memcpy(dx, a1, sizeof dx), memcpy(dw, a2, sizeof dw), memcpy(dy, a3, sizeof dy);
    } else {
        int64_t a1[4] = {d.N, d.H, d.W, d.C}, a2[4] = {d.K, d.R, d.S, d.Cw}, a3[4] = {d.N, d.P, d.Q, d.K};
        memcpy(dx, a1, sizeof dx), memcpy(dw, a2, sizeof dw), memcpy(dy, a3, sizeof dy);
    }
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(tx, op, "x", a->plan->in, 4, dx, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(tw, op, "w", a->plan->in, 4, dw, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->out[0], op, "y", a->plan->out, 4, dy, err));

    float *xv = nmo_cu_load(tx), *wv = nmo_cu_load(tw);
    int64_t ny = d.N * d.K * d.P * d.Q, taps = d.Cw * d.R * d.S;
    float *yv = (float *)malloc((size_t)ny * sizeof(float));
    float *ta = (float *)malloc((size_t)taps * sizeof(float)), *tb = (float *)malloc((size_t)taps * sizeof(float));
    if (!xv || !wv || !yv || !ta || !tb) {
        free(xv), free(wv), free(yv), free(ta), free(tb);
        return nmo_err_set(err, NMO_ERR_NOMEM, "conv2d candidate: out of memory");
    }
    int64_t cmax = c->skip_last_c ? d.Cw - 1 : d.Cw;
    int64_t poff = c->pad_off1 ? d.pad - 1 : d.pad;
    for (int64_t n = 0; n < d.N; n++)
        for (int64_t k = 0; k < d.K; k++)
            for (int64_t p = 0; p < d.P; p++)
                for (int64_t q = 0; q < d.Q; q++) {
                    /* gather the taps in the kernel's K order; padded taps are 0; the
                     * group's input channels start at c0 */
                    int64_t m = 0, c0 = k / (d.K / G) * d.Cw;
                    int rsc = c->algo == CV_IGEMM_RSC_KTILE || c->algo == CV_SPLIT_C2;
                    for (int64_t i0 = 0; i0 < (rsc ? d.R * d.S : cmax); i0++)
                        for (int64_t i1 = 0; i1 < (rsc ? cmax : d.R * d.S); i1++) {
                            int64_t ch = rsc ? i1 : i0, rs = rsc ? i0 : i1, r = rs / d.S, s = rs % d.S;
                            int64_t ih = p * d.st - poff + r * d.dil, iw = q * d.st - poff + s * d.dil;
                            int inb = ih >= 0 && ih < d.H && iw >= 0 && iw < d.W;
                            if (!inb && c->algo == CV_DIRECT_CRS) continue; /* skipped */
                            ta[m] = inb ? cv_x(xv, &d, c, n, c0 + ch, ih, iw) : 0.0f;
                            tb[m] = c->flip ? cv_w(wv, &d, k, ch, d.R - 1 - r, d.S - 1 - s)
                                            : cv_w(wv, &d, k, ch, r, s);
                            m++;
                        }
                    float acc;
                    if (c->acc16) acc = nmo_cu_sum_acc16(ta, tb, m, NMO_BF16, 1);
                    else if (c->algo == CV_IGEMM_RSC_KTILE) acc = nmo_cu_reduce(ta, tb, m, NMO_CU_RED_KTILE32, 1);
                    else if (c->algo == CV_WARP32) acc = nmo_cu_reduce(ta, tb, m, NMO_CU_RED_WARP32, 1);
                    else if (c->algo == CV_SPLIT_C2) {
                        /* taps ordered (r,s) outer, c inner: split channels c < C/2 and the rest */
                        float h0 = 0.0f, h1 = 0.0f;
                        int64_t half = cmax / 2;
                        for (int64_t j = 0; j < m; j++) {
                            float t = ta[j] * tb[j];
                            if (j % cmax < half) h0 = h0 + t;
                            else h1 = h1 + t;
                        }
                        acc = h0 + h1;
                    } else acc = nmo_cu_sum_seq(ta, tb, 0, m, 1, 1);
                    int64_t yi = d.layout == 0 ? ((n * d.K + k) * d.P + p) * d.Q + q
                                               : ((n * d.P + p) * d.Q + q) * d.K + k;
                    yv[yi] = acc;
                }
    nmo_cu_store(&a->out[0], yv, c->store_rz ? NMO_CU_ST_RZ : nmo_cu_plan_store(a->plan));
    free(xv), free(wv), free(yv), free(ta), free(tb);
    return NMO_OK;
}

#define CV_CAND(fname, ...)                                                         \
    static nmo_status fname(const nmo_cand_args *a, nmo_err *err) {                  \
        static const cv_cfg c = {__VA_ARGS__};                                        \
        return cv_run(a, err, &c);                                                    \
    }

CV_CAND(cv_direct_crs, .algo = CV_DIRECT_CRS)
CV_CAND(cv_igemm_ktile, .algo = CV_IGEMM_RSC_KTILE)
CV_CAND(cv_split_c2, .algo = CV_SPLIT_C2)
CV_CAND(cv_warp32, .algo = CV_WARP32)

CV_CAND(cv_mut_flip, .algo = CV_DIRECT_CRS, .flip = 1)
CV_CAND(cv_mut_pad_off1, .algo = CV_DIRECT_CRS, .pad_off1 = 1)
CV_CAND(cv_mut_acc_bf16, .algo = CV_DIRECT_CRS, .acc16 = 1)
CV_CAND(cv_mut_skip_last_c, .algo = CV_DIRECT_CRS, .skip_last_c = 1)
CV_CAND(cv_mut_x_as_nhwc, .algo = CV_DIRECT_CRS, .x_as_nhwc = 1)
CV_CAND(cv_mut_store_rz, .algo = CV_DIRECT_CRS, .store_rz = 1)

const nmo_cand nmo_cand_conv2d[] = {
    {"conv2d", "direct_crs", 1, "direct: one fmaf accumulator per output over c, r, s; padded taps skipped",
     cv_direct_crs, NULL},
    {"conv2d", "igemm_ktile", 1,
     "implicit GEMM: im2col K order (r, s, c), padded taps fed as zeros, k-tiles of 32 (fmaf)", cv_igemm_ktile, NULL},
    {"conv2d", "split_c2", 1, "channels split in two halves (split-K), products rounded then added, halves summed",
     cv_split_c2, NULL},
    {"conv2d", "warp32", 1, "taps (c, r, s) over 32 lanes strided (zeros fed) + xor butterfly", cv_warp32, NULL},
    {"conv2d", "mut_flip", 0, "MUTANT: true convolution (filter flipped) instead of cross-correlation",
     cv_mut_flip, NULL},
    {"conv2d", "mut_pad_off1", 0, "MUTANT: input window offset by padding-1 (off-by-one halo)", cv_mut_pad_off1, NULL},
    {"conv2d", "mut_acc_bf16", 0, "MUTANT: bf16 running accumulator", cv_mut_acc_bf16, NULL},
    {"conv2d", "mut_skip_last_c", 0, "MUTANT: channel loop bound C-1", cv_mut_skip_last_c, NULL},
    {"conv2d", "mut_x_as_nhwc", 0, "MUTANT: x indexed as NHWC while laid out NCHW (layout confusion)",
     cv_mut_x_as_nhwc, NULL},
    {"conv2d", "mut_store_rz", 0, "MUTANT: final store truncates (RZ) instead of RNE", cv_mut_store_rz, NULL},
};
const int nmo_cand_conv2d_n = (int)(sizeof nmo_cand_conv2d / sizeof nmo_cand_conv2d[0]);
