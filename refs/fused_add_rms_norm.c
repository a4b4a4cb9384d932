/* fused_add_rms_norm (vLLM's fused_add_rms_norm, FlashInfer's fused_add_rmsnorm):
 *   h            = x + residual, stored into the storage format: residual_out = h
 *   y[i,j]       = h[i,j] * rsqrt(mean_j(h[i,j]^2) + eps) * w[j]
 *
 * Rounding points (compute, RNE, unless said otherwise):
 *   s   = x + residual      correctly rounded in compute
 *   h   = RN_in(s)          the new residual as stored (vLLM re-reads it for the norm;
 *                           with round=rz/sr plans the stored value is rounded so);
 *                           FlashInfer keeps s (compute) for the norm: h is the hull
 *   residual_out = s        (checker: the final store rounds it into `out`)
 *   ss  = sum_j h_j^2       any order and tree, FMA or not, in `acc` (dot-product model)
 *   ms  = ss / N            or ss * RN(1/N)                    (hull)
 *   r   = rsqrt(ms + eps)   plan accuracy, or RN(1/RN(sqrt))   (hull)
 *   wo  = offset + w        RN(RN(offset) + w) (w itself when offset = 0; Gemma: 1)
 *   y   = h * r * wo        any association (two roundings); with a plan whose `inter`
 *                           differs from compute, h*r is stored in `inter` first and then
 *                           multiplied by wo (what vLLM's kernels and Hugging Face's eager
 *                           `x + residual` then LlamaRMSNorm do: inter=<storage dtype>);
 *                           the rule is refs/norm_common.h's norm_rms_scale, as rms_norm's
 *   store y into `out`      (checker: plan round)
 * Not covered: kernels that divide each square by N before summing. */
#include "refs/norm_common.h"

void NMO_REF(nmo_ref_fused_add_rms_norm_eval)(E_CTX *ctx, const nmo_case *c, int64_t u,
                                             nmo_fenc **out)
{
    int64_t n = c->in[2].dims[0];
    double *x = enc_dvec(ctx, 0, n);
    double *rs = enc_dvec(ctx, 1, n);
    double *w = enc_dvec(ctx, 2, n);
    nmo_tensor_load_f64(x, &c->in[0], u * n, n, 1);
    nmo_tensor_load_f64(rs, &c->in[1], u * n, n, 1);
    nmo_tensor_load_f64(w, &c->in[2], 0, n, 1);
    E *h = enc_evec(ctx, 0, n);
    E xe, re, s, hr, ss, ms, eps, v, r, we, y, off;
    enc_init(ctx, &xe), enc_init(ctx, &re), enc_init(ctx, &s), enc_init(ctx, &hr);
    enc_init(ctx, &ss), enc_init(ctx, &ms), enc_init(ctx, &eps), enc_init(ctx, &v);
    enc_init(ctx, &r), enc_init(ctx, &we), enc_init(ctx, &y), enc_init(ctx, &off);

    for (int64_t j = 0; j < n; j++) {
        enc_set_d(ctx, &xe, x[j]);
        enc_set_d(ctx, &re, rs[j]);
        enc_add(ctx, &s, &xe, &re);
        enc_export(ctx, &out[1][j], &s);
        enc_round(ctx, &hr, &s, c->plan.in, NMO_RNE, 0);
        enc_hull(ctx, &h[j], &hr, &s);
        /* a kernel that re-reads its stored residual sees the plan's store rounding */
        enc_round(ctx, &hr, &s, c->plan.in, c->plan.round, c->plan.round_sr);
        enc_hull(ctx, &h[j], &h[j], &hr);
    }
    const E *f[2] = {h, h};
    enc_dotk(ctx, &ss, f, 2, n, 0);
    enc_div_si(ctx, &ms, &ss, n);
    enc_const(ctx, &eps, c->param[0]);
    enc_add(ctx, &v, &ms, &eps);
    enc_rsqrt(ctx, &r, &v);
    double offset = c->param[1];
    enc_const(ctx, &off, offset);
    for (int64_t j = 0; j < n; j++) {
        norm_rms_scale(ctx, c, &y, &h[j], &r, w[j], offset, &off, &we);
        enc_export(ctx, &out[0][j], &y);
    }

    enc_clear(ctx, &xe), enc_clear(ctx, &re), enc_clear(ctx, &s), enc_clear(ctx, &hr);
    enc_clear(ctx, &ss), enc_clear(ctx, &ms), enc_clear(ctx, &eps), enc_clear(ctx, &v);
    enc_clear(ctx, &r), enc_clear(ctx, &we), enc_clear(ctx, &y), enc_clear(ctx, &off);
}

#ifdef NMO_ENGINE_FAST
#include "refs/ref_common.h"

void NMO_REF_CERT(nmo_ref_fused_add_rms_norm_eval)(nmo_cctx *ctx, const nmo_case *c, int64_t u,
                                                  nmo_fenc **out);

static nmo_status fused_add_rms_norm_setup(nmo_case *c, nmo_err *err)
{
    int64_t rows, n;
    NMO_RETURN_IF_ERR(nmo_ref_rows_shape(c, &rows, &n, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[0], c->plan.in, c->nshape, c->shape, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[1], c->plan.in, c->nshape, c->shape, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[2], c->plan.in, 1, &n, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->out[0], c->plan.out, c->nshape, c->shape, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->out[1], c->plan.out, c->nshape, c->shape, err));
    return NMO_OK;
}

const nmo_op nmo_op_fused_add_rms_norm = {
    .name = "fused_add_rms_norm",
    .summary = "residual add then RMS normalization (vLLM fused_add_rms_norm): y and the new residual",
    .shape_doc = "MxN (or ...xN): rows of N",
    .rounding_doc = "h=RN_in(x+residual) (or kept in compute); residual_out=h; ss=sum h^2 (any "
                    "order, acc); ms=ss/N|ss*RN(1/N); r=rsqrt(ms+eps)|1/sqrt; wo=RN(offset+w); "
                    "y=h*r*wo any association (inter != compute: RN_inter(h*r)*wo)",
    .n_in = 3,
    .in = {{"x", NMO_ROLE_DATA, "input [..., N]"},
           {"residual", NMO_ROLE_DATA, "residual [..., N]"},
           {"w", NMO_ROLE_WEIGHT, "weight [N]"}},
    .n_out = 2,
    .out = {{"y", NMO_ROLE_DATA, "normalized output [..., N]"},
            {"residual_out", NMO_ROLE_DATA, "new residual x + residual [..., N]"}},
    .n_param = 2,
    .param = {{"eps", 1e-6, "added to the mean square inside the root", NMO_PDOM_NONNEG},
              {"offset", 0, "added to the weight, y = h*r*(offset + w) (Gemma: 1)"}},
    .dtypes = "fp32 bf16 fp16",
    .test_shapes = "3x1025;8x64",
    .test_shapes_large = "3x4097;8x64",
    /* dotk sum of squares ignores sum= */
    .plan_fields = NMO_PF_COMPUTE | NMO_PF_ACC | NMO_PF_FN | NMO_PF_INTER | NMO_PF_SUM_GEOM,
    .plan_vacuous = 0,
    .setup = fused_add_rms_norm_setup,
    .row_len = nmo_ref_row_len_last,
    .units = nmo_ref_units_rows,
    .unit_span = nmo_ref_unit_span_rows,
    .eval_fast = NMO_REF_FAST(nmo_ref_fused_add_rms_norm_eval),
    .eval_cert = NMO_REF_CERT(nmo_ref_fused_add_rms_norm_eval),
};
#endif
