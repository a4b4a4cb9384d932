/* rms_norm_bias (forward, hipDNN's RMSNorm with a bias):
 *   y[i,j] = w[j] * (x[i,j] * r_i) + b[j],   r_i = rsqrt(mean_j(x[i,j]^2) + eps)
 * Source: hipDNN's CPU reference (rocm-libraries projects/hipdnn, test_sdk
 * CpuFpReferenceRMSNorm::forward: `yVal = scale * (x * invRms); yVal += bias`, the
 * normalized axes the trailing dims where scale's dims equal x's). numoracle normalizes
 * rows of the last dim (the binding checks that scale and bias run along it).
 *
 * Rounding points (compute, RNE):
 *   r                  as rms_norm (norm_rms_rstd: the one copy of the statistic)
 *   p = x * r * w      as rms_norm's scale stage (norm_rms_scale: any association, or the
 *                      llama casting under inter != compute)
 *   y = RN(p + b)      or a fused multiply-add of the last product with the bias:
 *                      fma(RN(x*r), w, b), fma(RN(x*w), r, b), fma(RN(r*w), x, b)
 *                      (fused plan), fma(RN_inter(RN(x*r)), w, b) (unfused): the hull
 *   store y into out   (checker: plan round)
 * Not covered: the bias added before the scale, arithmetic in the storage dtype. */
#include "refs/norm_common.h"

void NMO_REF(nmo_ref_rms_norm_bias_eval)(E_CTX *ctx, const nmo_case *c, int64_t u, nmo_fenc **out)
{
    int64_t n = c->in[1].dims[0];
    double *x = enc_dvec(ctx, 0, n);
    double *w = enc_dvec(ctx, 1, n);
    double *b = enc_dvec(ctx, 2, n);
    nmo_tensor_load_f64(x, &c->in[0], u * n, n, 1);
    nmo_tensor_load_f64(w, &c->in[1], 0, n, 1);
    nmo_tensor_load_f64(b, &c->in[2], 0, n, 1);
    E r, xe, we, be, p, y, t, f, off, wo;
    enc_init(ctx, &r), enc_init(ctx, &xe), enc_init(ctx, &we), enc_init(ctx, &be), enc_init(ctx, &p);
    enc_init(ctx, &y), enc_init(ctx, &t), enc_init(ctx, &f), enc_init(ctx, &off), enc_init(ctx, &wo);
    norm_rms_rstd(ctx, &r, x, n, c->param[0]);
    enc_const(ctx, &off, 0.0);
    int fused = c->plan.inter == c->plan.compute;
    for (int64_t j = 0; j < n; j++) {
        enc_set_d(ctx, &xe, x[j]);
        enc_set_d(ctx, &we, w[j]);
        enc_set_d(ctx, &be, b[j]);
        norm_rms_scale(ctx, c, &p, &xe, &r, w[j], 0.0, &off, &wo);
        enc_add(ctx, &y, &p, &be);
        /* the last product fused with the bias: fma(t, f, b) for each split of x*r*w */
        for (int s = 0; s < (fused ? 3 : 1); s++) {
            if (s == 0) enc_mul(ctx, &t, &xe, &r), enc_set(ctx, &f, &we);
            else if (s == 1) enc_mul(ctx, &t, &xe, &we), enc_set(ctx, &f, &r);
            else enc_mul(ctx, &t, &r, &we), enc_set(ctx, &f, &xe);
            if (!fused) enc_round(ctx, &t, &t, c->plan.inter, NMO_RNE, 0);
            enc_fma(ctx, &p, &t, &f, &be);
            enc_hull(ctx, &y, &y, &p);
        }
        enc_export(ctx, &out[0][j], &y);
    }
    enc_clear(ctx, &r), enc_clear(ctx, &xe), enc_clear(ctx, &we), enc_clear(ctx, &be), enc_clear(ctx, &p);
    enc_clear(ctx, &y), enc_clear(ctx, &t), enc_clear(ctx, &f), enc_clear(ctx, &off), enc_clear(ctx, &wo);
}

#ifdef NMO_ENGINE_FAST
#include "refs/ref_common.h"

void NMO_REF_CERT(nmo_ref_rms_norm_bias_eval)(nmo_cctx *ctx, const nmo_case *c, int64_t u, nmo_fenc **out);

static nmo_status rms_norm_bias_setup(nmo_case *c, nmo_err *err)
{
    int64_t rows, n;
    NMO_RETURN_IF_ERR(nmo_ref_rows_shape(c, &rows, &n, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[0], c->plan.in, c->nshape, c->shape, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[1], c->plan.in, 1, &n, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[2], c->plan.in, 1, &n, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->out[0], c->plan.out, c->nshape, c->shape, err));
    return NMO_OK;
}

const nmo_op nmo_op_rms_norm_bias = {
    .name = "rms_norm_bias",
    .summary = "RMS normalization over the last dim, times a weight, plus a bias (hipDNN's RMSNorm with bias)",
    .shape_doc = "MxN (or ...xN): rows of N",
    .rounding_doc = "r as rms_norm; p=x*r*w any association (inter != compute: RN_inter(x*r)*w); "
                    "y=RN(p+b)|fma(last product, b)",
    .n_in = 3,
    .in = {{"x", NMO_ROLE_DATA, "input [..., N]"},
           {"w", NMO_ROLE_WEIGHT, "weight [N]"},
           {"b", NMO_ROLE_WEIGHT, "bias [N]"}},
    .n_out = 1,
    .out = {{"y", NMO_ROLE_DATA, "output [..., N]"}},
    .n_param = 1,
    .param = {{"eps", 1e-6, "added to the mean square inside the root", NMO_PDOM_NONNEG}},
    .dtypes = "fp32 bf16 fp16",
    .test_shapes = "3x1025;8x64",
    .test_shapes_large = "3x4097;8x64",
    .plan_fields = NMO_PF_COMPUTE | NMO_PF_ACC | NMO_PF_FN | NMO_PF_INTER | NMO_PF_SUM_EXACT | NMO_PF_SUM_GEOM,
    .plan_vacuous = 0,
    .setup = rms_norm_bias_setup,
    .row_len = nmo_ref_row_len_last,
    .units = nmo_ref_units_rows,
    .unit_span = nmo_ref_unit_span_rows,
    .eval_fast = NMO_REF_FAST(nmo_ref_rms_norm_bias_eval),
    .eval_cert = NMO_REF_CERT(nmo_ref_rms_norm_bias_eval),
    .contract_class = "norm",
};
#endif
