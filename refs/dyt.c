/* dyt (Dynamic Tanh, Zhu et al. 2025, the normalization-free replacement of LayerNorm):
 *   y[..., j] = w[j] * tanh(alpha * x[..., j]) + b[j]
 * x of the problem shape, the weight w and bias b [N] (per column), alpha a scalar
 * parameter (the paper's initial value 0.5).
 *
 * Rounding points (compute, RNE): alpha held in compute (RN(alpha)); z = alpha*x one
 * rounding; th = tanh(z) (fn_ulps[TANH]); y = w*th + b with or without FMA (enc_fma:
 * hull of fused and unfused); the store into `out` (checker: plan round). Not covered:
 * eager kernels storing z or th in the input dtype (inter is rejected), tanh through
 * tanh.approx.f32 or 2*sigmoid(2z) - 1 (use fn=fast). */
#include "refs/bcast_common.h"

void NMO_REF(nmo_ref_dyt_eval)(E_CTX *ctx, const nmo_case *c, int64_t u, nmo_fenc **out)
{
    int64_t n = c->shape[c->nshape - 1];
    double *d = enc_dvec(ctx, 0, 3);
    nmo_tensor_load_f64(&d[0], &c->in[0], u, 1, 1);
    nmo_tensor_load_f64(&d[1], &c->in[1], u % n, 1, 1);
    nmo_tensor_load_f64(&d[2], &c->in[2], u % n, 1, 1);
    E *v = enc_evec(ctx, 0, 5);
    enc_set_d(ctx, &v[0], d[0]);
    enc_set_d(ctx, &v[1], d[1]);
    enc_set_d(ctx, &v[2], d[2]);
    enc_const(ctx, &v[3], c->param[0]);
    enc_mul(ctx, &v[4], &v[3], &v[0]);
    enc_tanh(ctx, &v[4], &v[4]);
    enc_fma(ctx, &v[4], &v[1], &v[4], &v[2]);
    enc_export(ctx, &out[0][0], &v[4]);
}

#ifdef NMO_ENGINE_FAST
void NMO_REF_CERT(nmo_ref_dyt_eval)(nmo_cctx *ctx, const nmo_case *c, int64_t u, nmo_fenc **out);

const nmo_op nmo_op_dyt = {
    .name = "dyt",
    .summary = "Dynamic Tanh y = w * tanh(alpha * x) + b, w and b [N] per column",
    .shape_doc = "MxN (or ...xN): x and y of that shape, w and b [N]",
    .rounding_doc = "z=RN(alpha)*x; th=tanh(z) (fn ulps); y=w*th+b FMA or not",
    .n_in = 3,
    .in = {{"x", NMO_ROLE_DATA, "input [..., N]"},
           {"w", NMO_ROLE_WEIGHT, "per-column weight [N]"},
           {"b", NMO_ROLE_BIAS, "per-column bias [N]"}},
    .n_out = 1,
    .out = {{"y", NMO_ROLE_DATA, "output [..., N]"}},
    .n_param = 1,
    .param = {{"alpha", 0.5, "the scalar inside tanh (learned; 0.5 at initialization)"}},
    .dtypes = "fp32 bf16 fp16",
    .test_shapes = "2x97;4x32", /* small: the engine-equality test certifies every element */
    .test_shapes_large = "3x4097;8x64",
    /* no reduction; one kernel (no stage stores an intermediate: inter rejected) */
    .plan_fields = NMO_PF_COMPUTE | NMO_PF_FN,
    .plan_vacuous = NMO_PF_ACC,
    .setup = pw_cols_setup,
    .row_len = nmo_ref_row_len_last,
    .units = pw_bcast_units,
    .unit_span = pw_bcast_span,
    .eval_fast = NMO_REF_FAST(nmo_ref_dyt_eval),
    .eval_cert = NMO_REF_CERT(nmo_ref_dyt_eval),
    .contract_class = "elementwise",
};
#endif
