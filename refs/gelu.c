/* gelu (forward), param approximate: 0 = exact (erf), 1 = tanh approximation.
 *   approximate=0: y = 0.5*x*(1 + erf(x/sqrt2))
 *   approximate=1: y = 0.5*x*(1 + tanh(sqrt(2/pi)*(x + 0.044715*x^3)))
 *
 * Rounding points (compute, RNE; constants RN into compute):
 *   erf:  z = x*RN(1/sqrt2) | x/RN(sqrt2); e = erf(z) (fn_ulps[ERF]); t = 1 + e;
 *         y = 0.5*x*t in any association | x*(0.5 + 0.5e) (FMA or not)
 *   tanh: x3 = x*x*x; inner = beta*(x + kappa*x3) (FMA or not)
 *         | beta*x*(1 + kappa*x*x) (any association, FMA or not: vLLM gelu_fast);
 *         th = tanh(inner) (fn_ulps[TANH]); t = 1 + th;
 *         y = 0.5*x*t in any association | x*(0.5*t | 0.5 + 0.5*th)
 *   store y into `out`     (checker: plan round)
 * The fragments are in refs/pw_common.h. Not covered: erfc-based forms
 * (0.5*x*erfc(-x/sqrt2)), tanh through tanh.approx.f32 or 2*sigmoid(2z) - 1 (use
 * fn=fast), the sigmoid form x*sigmoid(2*inner), x^3 as powf, eager kernels storing
 * intermediates in the input dtype. */
#include "refs/pw_common.h"

void NMO_REF(nmo_ref_gelu_eval)(E_CTX *ctx, const nmo_case *c, int64_t u, nmo_fenc **out)
{
    int64_t n = 1; /* one element per unit */
    int approx = c->param[0] != 0;
    double *x = enc_dvec(ctx, 0, n);
    nmo_tensor_load_f64(x, &c->in[0], u * n, n, 1);
    E *v = enc_evec(ctx, 0, 16);
    for (int64_t j = 0; j < n; j++) {
        enc_set_d(ctx, &v[0], x[j]);
        if (approx) pw_gelu_tanh(ctx, &v[1], &v[2], &v[3], &v[4], &v[0], &v[5]);
        else pw_gelu_erf(ctx, &v[1], &v[0], &v[5]);
        enc_export(ctx, &out[0][j], &v[1]);
    }
}

#ifdef NMO_ENGINE_FAST
void NMO_REF_CERT(nmo_ref_gelu_eval)(nmo_cctx *ctx, const nmo_case *c, int64_t u, nmo_fenc **out);

const nmo_op nmo_op_gelu = {
    .name = "gelu",
    .summary = "GELU activation, exact (erf) or tanh-approximated",
    .shape_doc = "MxN (or ...xN): any shape",
    .rounding_doc = "erf: z=x*RN(1/sqrt2)|x/RN(sqrt2); t=1+erf(z) (fn ulps); y=0.5*x*t any "
                    "assoc; tanh: inner=beta*(x+kappa*x^3)|beta*x*(1+kappa*x^2), FMA or not",
    .n_in = 1,
    .in = {{"x", NMO_ROLE_DATA, "input [..., N]"}},
    .n_out = 1,
    .out = {{"y", NMO_ROLE_DATA, "output [..., N]"}},
    .n_param = 1,
    .param = {{"approximate", 0, "0: exact erf form; 1: tanh approximation"}},
    .dtypes = "fp32 bf16 fp16",
    .test_shapes = "2x97;4x32", /* small: the engine-equality test certifies every element */
    .test_shapes_large = "3x4097;8x64",
    /* no reduction; one kernel */
    .plan_fields = NMO_PF_COMPUTE | NMO_PF_FN,
    .plan_vacuous = NMO_PF_ACC,
    .setup = pw_setup_same,
    .row_len = nmo_ref_row_len_last,
    .units = pw_units_elems,
    .unit_span = pw_span_elem,
    .eval_fast = NMO_REF_FAST(nmo_ref_gelu_eval),
    .eval_cert = NMO_REF_CERT(nmo_ref_gelu_eval),
};
#endif
