/* batchnorm_inference: y = (x - running_mean[c]) * rsqrt(running_var[c] + eps) * w[c] + b[c]
 * for every element of x[N, C, H, W], c its channel. param layout: 0 = NCHW (x and y
 * stored [N, C, H, W]), 1 = NHWC (stored [N, H, W, C]); --shape is NxCxHxW either way.
 *
 * Rounding points (compute, RNE, unless said otherwise), per element (no reductions):
 *   d    = x - mean[c]
 *   v    = var[c] + eps           eps held as RN(eps)
 *   rstd = rsqrt(v)               plan accuracy, or RN(1/RN(sqrt v))       (hull)
 *   y    = d * rstd * w + b       any association, last product FMA'd into + b or not
 *        | (d / sqrt(v)) * w + b  (division form)
 *        | scale = w * rstd | w / sqrt(v), shift = b - mean * scale,
 *          y = x * scale + shift  (the fused form of cuDNN and most inference engines;
 *                                  both products FMA or not, the same scale in both)
 *   store y into `out`            (checker: plan round)
 * Not covered: scale/shift precomputed in a narrower format than compute (folded into
 * bf16 weights), a shift computed from a differently rounded scale. */
#include "engine/ref.h"
#include "refs/norm_common.h"

/* Channel of logical element i of x (layout 0: [N,C,H,W], 1: [N,H,W,C]). */
static int64_t bn_channel(const nmo_case *c, int64_t i)
{
    int64_t C = c->shape[1], HW = c->shape[2] * c->shape[3];
    return c->param[1] == 1 ? i % C : (i / HW) % C;
}

void NMO_REF(nmo_ref_batchnorm_inference_eval)(E_CTX *ctx, const nmo_case *c, int64_t u,
                                               nmo_fenc **out)
{
    int64_t C = c->shape[1];
    int64_t L = c->in[0].dims[c->in[0].ndims - 1];
    double *x = enc_dvec(ctx, 0, L);
    double *mu = enc_dvec(ctx, 1, C);
    double *var = enc_dvec(ctx, 2, C);
    double *w = enc_dvec(ctx, 3, C);
    double *b = enc_dvec(ctx, 4, C);
    nmo_tensor_load_f64(x, &c->in[0], u * L, L, 1);
    nmo_tensor_load_f64(mu, &c->in[1], 0, C, 1);
    nmo_tensor_load_f64(var, &c->in[2], 0, C, 1);
    nmo_tensor_load_f64(w, &c->in[3], 0, C, 1);
    nmo_tensor_load_f64(b, &c->in[4], 0, C, 1);
    E xe, me, ve, we, be, ep, v, rstd, s, d, y;
    enc_init(ctx, &xe), enc_init(ctx, &me), enc_init(ctx, &ve), enc_init(ctx, &we);
    enc_init(ctx, &be), enc_init(ctx, &ep), enc_init(ctx, &v), enc_init(ctx, &rstd);
    enc_init(ctx, &s), enc_init(ctx, &d), enc_init(ctx, &y);
    norm_tmp t;
    norm_tmp_init(ctx, &t);

    enc_const(ctx, &ep, c->param[0]);
    for (int64_t j = 0; j < L; j++) {
        int64_t ch = bn_channel(c, u * L + j);
        enc_set_d(ctx, &xe, x[j]);
        enc_set_d(ctx, &me, mu[ch]);
        enc_set_d(ctx, &ve, var[ch]);
        enc_set_d(ctx, &we, w[ch]);
        enc_set_d(ctx, &be, b[ch]);
        enc_add(ctx, &v, &ve, &ep);
        enc_rsqrt(ctx, &rstd, &v);
        enc_sqrt(ctx, &s, &v);
        enc_sub(ctx, &d, &xe, &me);
        norm_affine(ctx, &t, &y, &xe, &d, &me, &rstd, &s, &we, &be);
        enc_export(ctx, &out[0][j], &y);
    }

    norm_tmp_clear(ctx, &t);
    enc_clear(ctx, &xe), enc_clear(ctx, &me), enc_clear(ctx, &ve), enc_clear(ctx, &we);
    enc_clear(ctx, &be), enc_clear(ctx, &ep), enc_clear(ctx, &v), enc_clear(ctx, &rstd);
    enc_clear(ctx, &s), enc_clear(ctx, &d), enc_clear(ctx, &y);
}

#ifdef NMO_ENGINE_FAST
#include "refs/ref_common.h"

void NMO_REF_CERT(nmo_ref_batchnorm_inference_eval)(nmo_cctx *ctx, const nmo_case *c, int64_t u,
                                                    nmo_fenc **out);

static nmo_status batchnorm_inference_setup(nmo_case *c, nmo_err *err)
{
    if (c->nshape != 4)
        return nmo_err_set(err, NMO_ERR_SHAPE,
                           "batchnorm_inference: shape must be NxCxHxW, got %d dims", c->nshape);
    double lay = c->param[1];
    if (lay != 0 && lay != 1)
        return nmo_err_set(err, NMO_ERR_SHAPE, "batchnorm_inference: layout=%g (0 nchw, 1 nhwc)", lay);
    int64_t C = c->shape[1];
    int64_t nhwc[4] = {c->shape[0], c->shape[2], c->shape[3], c->shape[1]};
    const int64_t *xd = lay == 1 ? nhwc : c->shape;
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[0], c->plan.in, 4, xd, err));
    for (int k = 1; k <= 4; k++) NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[k], c->plan.in, 1, &C, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->out[0], c->plan.out, 4, xd, err));
    return NMO_OK;
}

static int64_t bn_row_len(const nmo_case *c) { return c->in[0].dims[3]; }

static int64_t bn_units(const nmo_case *c)
{
    return c->shape[0] * c->shape[1] * c->shape[2] * c->shape[3] / c->in[0].dims[3];
}

static void bn_span(const nmo_case *c, int64_t u, int k, int64_t *begin, int64_t *count,
                    int64_t *stride)
{
    (void)k;
    *begin = u * c->in[0].dims[3];
    *count = c->in[0].dims[3];
    *stride = 1;
}

const nmo_op nmo_op_batchnorm_inference = {
    .name = "batchnorm_inference",
    .summary = "batch normalization with running statistics (inference), NCHW or NHWC",
    .shape_doc = "NxCxHxW (layout=1: x and y stored NHWC)",
    .rounding_doc = "d=x-mean; r=rsqrt(var+eps)|1/sqrt; y=d*r*w+b any association, FMA or not "
                    "| d/sqrt(var+eps)*w+b | x*scale+(b-mean*scale), scale=w*r (FMA or not)",
    .n_in = 5,
    .in = {{"x", NMO_ROLE_DATA, "input [N, C, H, W] (layout=1: [N, H, W, C])"},
           {"running_mean", NMO_ROLE_DATA, "per-channel mean [C]"},
           {"running_var", NMO_ROLE_POSITIVE, "per-channel variance [C]"},
           {"w", NMO_ROLE_WEIGHT, "per-channel weight [C]"},
           {"b", NMO_ROLE_BIAS, "per-channel bias [C]"}},
    .n_out = 1,
    .out = {{"y", NMO_ROLE_DATA, "output, the layout of x"}},
    .n_param = 2,
    .param = {{"eps", 1e-5, "added to the running variance inside the root", NMO_PDOM_NONNEG},
              {"layout", 0, "0: NCHW, 1: NHWC (channels last)"}},
    .dtypes = "fp32 bf16 fp16",
    .test_shapes = "2x6x7x9;3x4x5x5",
    .test_shapes_large = "4x16x17x19;3x4x5x5",
    /* no reduction; fused kernel only */
    .plan_fields = NMO_PF_COMPUTE | NMO_PF_FN,
    .plan_vacuous = NMO_PF_ACC,
    .setup = batchnorm_inference_setup,
    .row_len = bn_row_len,
    .units = bn_units,
    .unit_span = bn_span,
    .eval_fast = NMO_REF_FAST(nmo_ref_batchnorm_inference_eval),
    .eval_cert = NMO_REF_CERT(nmo_ref_batchnorm_inference_eval),
};
#endif
