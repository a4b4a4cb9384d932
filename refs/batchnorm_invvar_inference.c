/* batchnorm_invvar_inference: hipDNN's batchnorm inference (BatchnormInferenceAttributes:
 * mean and inv_variance given, no epsilon, no root):
 *   y = w[c] * ((x - mean[c]) * inv_variance[c]) + b[c]
 * for every element of x[N, C, S...] (2 to 5 dims), c its channel (dim 1). This is the
 * function of hipDNN's CPU reference (CpuFpReferenceBatchnorm::batchnormFwdInference);
 * channels-last data is a strided graph tensor, read logically by the loader.
 *
 * Rounding points (compute, RNE), per element (no reductions):
 *   d = x - mean[c]
 *   y = d * iv * w + b        the three factors in any association, the last product
 *                             FMA'd into + b or rounded (enc_prodk fused; Higham §3.1)
 *     | scale = w * iv, shift = b - mean * scale, y = x * scale + shift
 *                             (the fused inference form; both products FMA or not, the
 *                              same scale in both: enc_scale_shift, Higham §2.2)
 *   store y into `out`        (checker: plan round)
 * Not covered: scale/shift precomputed in a narrower format than compute. */
#include "engine/ref.h"
#include "refs/norm_common.h"

/* Elements per (n, c) row: the product of the spatial dims (1 for an NxC x). */
static int64_t bni_row(const nmo_case *c)
{
    int64_t s = 1;
    for (int k = 2; k < c->nshape; k++) s *= c->shape[k];
    return s;
}

void NMO_REF(nmo_ref_batchnorm_invvar_inference_eval)(E_CTX *ctx, const nmo_case *c, int64_t u, nmo_fenc **out)
{
    int64_t C = c->shape[1], L = bni_row(c), ch = u % C;
    double *x = enc_dvec(ctx, 0, L);
    double *p = enc_dvec(ctx, 1, 4);
    nmo_tensor_load_f64(x, &c->in[0], u * L, L, 1);
    for (int k = 0; k < 4; k++) nmo_tensor_load_f64(&p[k], &c->in[k + 1], ch, 1, 1);
    E *v = enc_evec(ctx, 0, 9);
    E *xe = &v[0], *me = &v[1], *iv = &v[2], *we = &v[3], *be = &v[4], *d = &v[5], *y1 = &v[6], *a = &v[7],
      *y2 = &v[8];
    enc_set_d(ctx, me, p[0]);
    enc_set_d(ctx, iv, p[1]);
    enc_set_d(ctx, we, p[2]);
    enc_set_d(ctx, be, p[3]);
    enc_mul(ctx, a, we, iv); /* the fused form's scale, one per channel */
    for (int64_t j = 0; j < L; j++) {
        enc_set_d(ctx, xe, x[j]);
        enc_sub(ctx, d, xe, me);
        const E *f3[3] = {d, iv, we};
        enc_prodk(ctx, y1, f3, 3, 1);
        enc_add(ctx, y1, y1, be);
        enc_scale_shift(ctx, y2, xe, a, me, be);
        enc_hull(ctx, y1, y1, y2);
        enc_export(ctx, &out[0][j], y1);
    }
}

#ifdef NMO_ENGINE_FAST
#include "refs/ref_common.h"

void NMO_REF_CERT(nmo_ref_batchnorm_invvar_inference_eval)(nmo_cctx *ctx, const nmo_case *c, int64_t u,
                                                           nmo_fenc **out);

static nmo_status bni_setup(nmo_case *c, nmo_err *err)
{
    if (c->nshape < 2 || c->nshape > 5)
        return nmo_err_set(err, NMO_ERR_SHAPE, "batchnorm_invvar_inference: shape must be NxC[xS...] (2 to 5 dims), got %d",
                           c->nshape);
    double sf = c->param[0];
    if (sf != 0 && sf != 1)
        return nmo_err_set(err, NMO_ERR_SHAPE, "batchnorm_invvar_inference: stats_fp32=%g (0 or 1)", sf);
    int64_t C = c->shape[1];
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[0], c->plan.in, c->nshape, c->shape, err));
    /* hipDNN's mixed types: fp32 statistics, scale and bias under a bf16/fp16 x; their
     * values enter the computation exactly either way */
    nmo_fmt st = sf == 1 ? NMO_FP32 : c->plan.in;
    for (int k = 1; k <= 4; k++) NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[k], st, 1, &C, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->out[0], c->plan.out, c->nshape, c->shape, err));
    return NMO_OK;
}

static int64_t bni_units(const nmo_case *c) { return c->shape[0] * c->shape[1]; }

static void bni_span(const nmo_case *c, int64_t u, int k, int64_t *begin, int64_t *count, int64_t *stride)
{
    (void)k;
    *count = bni_row(c);
    *begin = u * *count;
    *stride = 1;
}

const nmo_op nmo_op_batchnorm_invvar_inference = {
    .name = "batchnorm_invvar_inference",
    .summary = "batch normalization inference from mean and inv_variance (hipDNN's form, no epsilon)",
    .shape_doc = "NxC[xS...] (2 to 5 dims): x and y of that shape, mean, inv_variance, w, b [C]",
    .rounding_doc = "d=x-mean; y=d*iv*w+b any association, FMA or not | x*scale+(b-mean*scale), "
                    "scale=w*iv (FMA or not)",
    .n_in = 5,
    .in = {{"x", NMO_ROLE_DATA, "input [N, C, S...]"},
           {"mean", NMO_ROLE_DATA, "per-channel mean [C]"},
           {"inv_variance", NMO_ROLE_POSITIVE, "per-channel 1/sqrt(var + eps), precomputed [C]"},
           {"w", NMO_ROLE_WEIGHT, "per-channel scale [C]"},
           {"b", NMO_ROLE_BIAS, "per-channel bias [C]"}},
    .n_out = 1,
    .out = {{"y", NMO_ROLE_DATA, "output, the shape of x"}},
    .n_param = 1,
    .param = {{"stats_fp32", 0, "1: mean, inv_variance, w and b stored in fp32 (hipDNN's mixed types), 0: x's dtype"}},
    .dtypes = "fp32 bf16 fp16",
    .test_shapes = "2x6x7x9;3x4x5",
    .test_shapes_large = "4x16x17x19;3x4x5x5",
    /* no reduction; fused kernel only */
    .plan_fields = NMO_PF_COMPUTE,
    .plan_vacuous = NMO_PF_ACC | NMO_PF_FN,
    .setup = bni_setup,
    .row_len = bni_row,
    .units = bni_units,
    .unit_span = bni_span,
    .eval_fast = NMO_REF_FAST(nmo_ref_batchnorm_invvar_inference_eval),
    .eval_cert = NMO_REF_CERT(nmo_ref_batchnorm_invvar_inference_eval),
};
#endif
