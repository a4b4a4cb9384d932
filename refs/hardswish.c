/* hardswish (MobileNetV3, Howard et al. 2019): y = x * relu6(x + 3) / 6.
 *
 * Rounding points (compute, RNE), the hull of the forms libraries ship:
 *   c = min(max(x + 3, 0), 6)   one rounding (x + 3); the clamps are exact
 *   y = (x * c) / 6             PyTorch's CPU and CUDA kernels, left to right
 *     | x * (c / 6)             the division first
 *   (each /6 also as *RN(1/6): enc_div_si)
 *   s = clamp(x * RN(1/6) + 1/2, 0, 1), fused or not, or clamp(x/6 + 1/2, 0, 1)
 *   y = x * s                   XNNPACK's hard-sigmoid form
 *   store y into `out`          (checker: plan round)
 * Not covered: kernels that store x + 3 or the clamp in the input dtype (inter is
 * rejected); the Keras hard sigmoid 0.2 x + 0.5 (another function). */
#include "refs/pw_common.h"

void NMO_REF(nmo_ref_hardswish_eval)(E_CTX *ctx, const nmo_case *c, int64_t u, nmo_fenc **out)
{
    double *x = enc_dvec(ctx, 0, 1);
    nmo_tensor_load_f64(x, &c->in[0], u, 1, 1);
    E *v = enc_evec(ctx, 0, 8);
    enc_set_d(ctx, &v[0], x[0]);
    enc_const(ctx, &v[1], 3.0);
    enc_const(ctx, &v[2], 0.0);
    enc_const(ctx, &v[3], 6.0);
    enc_add(ctx, &v[4], &v[0], &v[1]); /* c = clamp(x + 3, 0, 6) */
    enc_max(ctx, &v[4], &v[4], &v[2]);
    enc_min(ctx, &v[4], &v[4], &v[3]);
    enc_mul(ctx, &v[5], &v[0], &v[4]); /* (x * c) / 6 */
    enc_div_si(ctx, &v[5], &v[5], 6);
    enc_div_si(ctx, &v[6], &v[4], 6); /* x * (c / 6) */
    enc_mul(ctx, &v[6], &v[0], &v[6]);
    enc_hull(ctx, &v[5], &v[5], &v[6]);
    enc_const(ctx, &v[1], 1.0 / 6.0); /* s = x * RN(1/6) + 1/2, FMA or not */
    enc_const(ctx, &v[3], 0.5);
    enc_fma(ctx, &v[6], &v[0], &v[1], &v[3]);
    enc_div_si(ctx, &v[7], &v[0], 6); /* s = x / 6 + 1/2 */
    enc_add(ctx, &v[7], &v[7], &v[3]);
    enc_hull(ctx, &v[6], &v[6], &v[7]);
    enc_const(ctx, &v[3], 1.0);
    enc_max(ctx, &v[6], &v[6], &v[2]);
    enc_min(ctx, &v[6], &v[6], &v[3]);
    enc_mul(ctx, &v[6], &v[0], &v[6]); /* y = x * s */
    enc_hull(ctx, &v[5], &v[5], &v[6]);
    enc_export(ctx, &out[0][0], &v[5]);
}

#ifdef NMO_ENGINE_FAST
void NMO_REF_CERT(nmo_ref_hardswish_eval)(nmo_cctx *ctx, const nmo_case *c, int64_t u, nmo_fenc **out);

const nmo_op nmo_op_hardswish = {
    .name = "hardswish",
    .summary = "hard swish y = x * relu6(x + 3) / 6 (MobileNetV3)",
    .shape_doc = "MxN (or ...xN): any shape",
    .rounding_doc = "c=clamp(x+3,0,6); y=(x*c)/6|x*(c/6) (/6 or *RN(1/6))|x*clamp(x/6+1/2,0,1)",
    .n_in = 1,
    .in = {{"x", NMO_ROLE_DATA, "input [..., N]"}},
    .n_out = 1,
    .out = {{"y", NMO_ROLE_DATA, "output [..., N]"}},
    .n_param = 0,
    .dtypes = "fp32 bf16 fp16",
    .test_shapes = "2x97;4x32", /* small: the engine-equality test certifies every element */
    .test_shapes_large = "3x4097;8x64",
    /* no reduction, no transcendental function; one kernel (inter rejected) */
    .plan_fields = NMO_PF_COMPUTE,
    .plan_vacuous = NMO_PF_ACC | NMO_PF_FN,
    .setup = pw_setup_same,
    .row_len = nmo_ref_row_len_last,
    .units = pw_units_elems,
    .unit_span = pw_span_elem,
    .eval_fast = NMO_REF_FAST(nmo_ref_hardswish_eval),
    .eval_cert = NMO_REF_CERT(nmo_ref_hardswish_eval),
    .contract_class = "elementwise",
};
#endif
