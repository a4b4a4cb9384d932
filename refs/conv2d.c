/* conv2d (forward, cross-correlation as in every DNN library):
 *   y[n,k,p,q] = sum_{c,r,s} x[n,g(k) C/G + c,p*st - pad + r*dil, q*st - pad + s*dil] w[k,c,r,s]
 * over c < C/G, g(k) = k / (K/G), G the groups (1: a dense convolution; grouped as cuDNN
 * and hipDNN give it, by the filter's channel dim C/G);
 * layout 0 (NCHW): x[N,C,H,W], w[K,C/G,R,S], y[N,K,P,Q];
 * layout 1 (NHWC): x[N,H,W,C], w[K,R,S,C/G], y[N,P,Q,K];
 * P = (H + 2 pad - dil (R-1) - 1) / st + 1, Q likewise with W and S.
 *
 * Rounding points:
 *   y      one dot product over the in-bounds (c, r, s) taps, any order and tree, FMA or
 *          not, in `acc` (dot-product model, n u sum|x w|, n = number of in-bounds taps).
 *          Zero padding contributes exact zeros: adding 0 or fma(0, w, acc) leaves every
 *          partial sum unchanged, so direct loops, implicit GEMM (im2col in any K order,
 *          k-tiles, split-K over channels) are all orders of this sum.
 *   store y into `out` (checker: plan round)
 * Not covered: Winograd and FFT convolutions (they transform x and w: different roundings),
 * tensor-core accumulation (sum=mma), split-K partials stored in a narrower format. */
#include "engine/ref.h"

typedef struct {
    int64_t N, C, H, W, K, R, S, P, Q;
    int64_t st, pad, dil, G;
    int layout;
} conv_dims;

static int conv_get_dims(const nmo_case *c, conv_dims *d)
{
    d->N = c->shape[0], d->C = c->shape[1], d->H = c->shape[2], d->W = c->shape[3];
    d->K = c->shape[4], d->R = c->shape[5], d->S = c->shape[6];
    d->st = (int64_t)c->param[0], d->pad = (int64_t)c->param[1], d->dil = (int64_t)c->param[2];
    d->layout = (int)c->param[3];
    d->G = (int64_t)c->param[4];
    d->P = d->Q = 0;
    if (d->st < 1 || d->dil < 1 || d->pad < 0 || d->G < 1 || d->C % d->G || d->K % d->G) return 0;
    int64_t eh = d->H + 2 * d->pad - d->dil * (d->R - 1) - 1;
    int64_t ew = d->W + 2 * d->pad - d->dil * (d->S - 1) - 1;
    if (eh < 0 || ew < 0) return 0;
    d->P = eh / d->st + 1;
    d->Q = ew / d->st + 1;
    return 1;
}

void NMO_REF(nmo_ref_conv2d_eval)(E_CTX *ctx, const nmo_case *c, int64_t u, nmo_fenc **out)
{
    conv_dims d;
    conv_get_dims(c, &d);
    int64_t n, k, p, q;
    if (d.layout == 0) {
        q = u % d.Q, p = (u / d.Q) % d.P, k = (u / (d.Q * d.P)) % d.K, n = u / (d.Q * d.P * d.K);
    } else {
        k = u % d.K, q = (u / d.K) % d.Q, p = (u / (d.K * d.Q)) % d.P, n = u / (d.K * d.Q * d.P);
    }
    const nmo_tensor *tx = &c->in[0], *tw = &c->in[1];
    int64_t Cg = d.C / d.G, c0 = k / (d.K / d.G) * Cg; /* the group's first input channel */
    int64_t taps = Cg * d.R * d.S;
    double *xv = enc_dvec(ctx, 0, taps);
    double *wv = enc_dvec(ctx, 1, taps);
    /* storage strides of the logical (c, h, w) / (c, r, s) axes */
    int64_t xc, xh, xw, wc, wr, ws;
    if (d.layout == 0) {
        xc = tx->strides[1], xh = tx->strides[2], xw = tx->strides[3];
        wc = tw->strides[1], wr = tw->strides[2], ws = tw->strides[3];
    } else {
        xh = tx->strides[1], xw = tx->strides[2], xc = tx->strides[3];
        wr = tw->strides[1], ws = tw->strides[2], wc = tw->strides[3];
    }
    int64_t m = 0;
    for (int64_t r = 0; r < d.R; r++) {
        int64_t ih = p * d.st - d.pad + r * d.dil;
        if (ih < 0 || ih >= d.H) continue;
        for (int64_t s = 0; s < d.S; s++) {
            int64_t iw = q * d.st - d.pad + s * d.dil;
            if (iw < 0 || iw >= d.W) continue;
            nmo_tensor_load_f64(xv + m, tx, n * tx->strides[0] + c0 * xc + ih * xh + iw * xw, Cg, xc);
            nmo_tensor_load_f64(wv + m, tw, k * tw->strides[0] + r * wr + s * ws, Cg, wc);
            m += Cg;
        }
    }
    E *e = enc_evec(ctx, 0, 1);
    if (m == 0) enc_const(ctx, e, 0.0); /* every tap in the padding: exactly 0 */
    else enc_dot_d(ctx, e, xv, wv, m);
    enc_export(ctx, &out[0][0], e);
}

#ifdef NMO_ENGINE_FAST
#include "refs/ref_common.h"

void NMO_REF_CERT(nmo_ref_conv2d_eval)(nmo_cctx *ctx, const nmo_case *c, int64_t u, nmo_fenc **out);

static nmo_status conv2d_setup(nmo_case *c, nmo_err *err)
{
    if (c->nshape != 7)
        return nmo_err_set(err, NMO_ERR_SHAPE, "conv2d: shape must be NxCxHxWxKxRxS, got %d dims",
                           c->nshape);
    for (int i = 0; i < 5; i++)
        if (c->param[i] != (double)(int64_t)c->param[i] || c->param[i] < 0 || c->param[i] > 1e6)
            return nmo_err_set(err, NMO_ERR_USAGE, "conv2d: %s must be a small non-negative integer, got %g",
                               c->op->param[i].name, c->param[i]);
    if (c->param[3] != 0 && c->param[3] != 1)
        return nmo_err_set(err, NMO_ERR_USAGE, "conv2d: layout must be 0 (NCHW) or 1 (NHWC), got %g",
                           c->param[3]);
    conv_dims d;
    if (!conv_get_dims(c, &d))
        return nmo_err_set(err, NMO_ERR_SHAPE,
                           "conv2d: stride, dilation and groups must be >= 1, groups must divide C and K, "
                           "and the dilated %lldx%lld filter must fit the padded %lldx%lld input",
                           (long long)c->shape[5], (long long)c->shape[6], (long long)c->shape[2],
                           (long long)c->shape[3]);
    int64_t Cg = d.C / d.G;
    int64_t dx0[4] = {d.N, d.C, d.H, d.W}, dw0[4] = {d.K, Cg, d.R, d.S}, dy0[4] = {d.N, d.K, d.P, d.Q};
    int64_t dx1[4] = {d.N, d.H, d.W, d.C}, dw1[4] = {d.K, d.R, d.S, Cg}, dy1[4] = {d.N, d.P, d.Q, d.K};
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[0], c->plan.in, 4, d.layout ? dx1 : dx0, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[1], c->plan.in, 4, d.layout ? dw1 : dw0, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->out[0], c->plan.out, 4, d.layout ? dy1 : dy0, err));
    return NMO_OK;
}

/* Per-row families follow x's innermost dim. */
static int64_t conv2d_row_len(const nmo_case *c) { return c->in[0].dims[3]; }
/* One unit per output element. */
static int64_t conv2d_units(const nmo_case *c) { return nmo_tensor_numel(&c->out[0]); }

static void conv2d_span(const nmo_case *c, int64_t u, int k, int64_t *begin, int64_t *count,
                        int64_t *stride)
{
    (void)c;
    (void)k;
    *begin = u;
    *count = 1;
    *stride = 1;
}

const nmo_op nmo_op_conv2d = {
    .name = "conv2d",
    .summary = "2-D convolution forward (cross-correlation), NCHW or NHWC, fp32 accumulation",
    .shape_doc = "NxCxHxWxKxRxS: x [N,C,H,W] (NHWC: [N,H,W,C]), w [K,C,R,S] (NHWC: [K,R,S,C]), "
                 "y [N,K,P,Q] (NHWC: [N,P,Q,K])",
    .rounding_doc = "y=sum over in-bounds (c,r,s) of x*w (any order, FMA or not, acc); padding adds "
                    "exact zeros",
    .n_in = 2,
    .in = {{"x", NMO_ROLE_DATA, "input [N,C,H,W] or [N,H,W,C]"},
           {"w", NMO_ROLE_DATA, "filter [K,C,R,S] or [K,R,S,C]"}},
    .n_out = 1,
    .out = {{"y", NMO_ROLE_DATA, "output [N,K,P,Q] or [N,P,Q,K]"}},
    .n_param = 5,
    .param = {{"stride", 1, "stride in H and W"},
              {"padding", 1, "zero padding on each side of H and W"},
              {"dilation", 1, "filter dilation in H and W"},
              {"layout", 0, "0: NCHW / KCRS; 1: NHWC / KRSC"},
              {"groups", 1, "grouped convolution: G groups of C/G input and K/G output channels, w [K,C/G,R,S]"}},
    .dtypes = "fp32 bf16 fp16",
    .test_shapes = "2x7x9x9x4x3x3;1x16x6x6x8x1x1",
    .test_shapes_large = "2x33x17x17x4x3x3;1x16x6x6x8x1x1",
    /* one dot product per element; implicit-GEMM blocks are not the dot model's */
    .plan_fields = NMO_PF_ACC | NMO_PF_SUM_EXACT | NMO_PF_SUM_GEOM,
    .plan_vacuous = NMO_PF_COMPUTE | NMO_PF_FN | NMO_PF_INTER,
    .setup = conv2d_setup,
    .row_len = conv2d_row_len,
    .units = conv2d_units,
    .unit_span = conv2d_span,
    .eval_fast = NMO_REF_FAST(nmo_ref_conv2d_eval),
    .eval_cert = NMO_REF_CERT(nmo_ref_conv2d_eval),
};
#endif
