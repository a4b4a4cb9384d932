/* silu (forward): y = x * sigmoid(x).
 *
 * Rounding points (compute, RNE, unless said otherwise):
 *   sig = sigmoid(x)       a library sigmoid of plan accuracy fn_ulps[SIGMOID], or
 *                          1/(1 + exp(-x)) step by step (exp of plan accuracy) (hull)
 *   y   = x * sig          Liger/Triton x*sigmoid(x), x*(1/(1+exp(-x)))
 *       | x / (1+exp(-x))  PyTorch's kernel (hull)
 *   store y into `out`     (checker: plan round)
 * Not covered: exp as exp2(x*log2e) with ex2.approx (Triton's tl.exp, nvcc fast math:
 * use fn=fast), approximate division (div.full.f32), tanh-based sigmoid
 * 0.5 + 0.5*tanh(x/2). */
#include "refs/pw_common.h"

void NMO_REF(nmo_ref_silu_eval)(E_CTX *ctx, const nmo_case *c, int64_t u, nmo_fenc **out)
{
    int64_t n = 1; /* one element per unit */
    double *x = enc_dvec(ctx, 0, n);
    nmo_tensor_load_f64(x, &c->in[0], u * n, n, 1);
    E *v = enc_evec(ctx, 0, 8);
    for (int64_t j = 0; j < n; j++) {
        enc_set_d(ctx, &v[0], x[j]);
        pw_silu(ctx, &v[1], &v[2], &v[3], &v[0], &v[4]);
        enc_export(ctx, &out[0][j], &v[1]);
    }
}

#ifdef NMO_ENGINE_FAST

void NMO_REF_CERT(nmo_ref_silu_eval)(nmo_cctx *ctx, const nmo_case *c, int64_t u, nmo_fenc **out);

const nmo_op nmo_op_silu = {
    .name = "silu",
    .summary = "SiLU / swish activation, y = x*sigmoid(x)",
    .shape_doc = "MxN (or ...xN): any shape",
    .rounding_doc = "sig=sigmoid(x) (fn ulps)|1/(1+exp(-x)); y=x*sig|x/(1+exp(-x))",
    .n_in = 1,
    .in = {{"x", NMO_ROLE_DATA, "input [..., N]"}},
    .n_out = 1,
    .out = {{"y", NMO_ROLE_DATA, "output [..., N]"}},
    .n_param = 0,
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
    .eval_fast = NMO_REF_FAST(nmo_ref_silu_eval),
    .eval_cert = NMO_REF_CERT(nmo_ref_silu_eval),
};
#endif
