/* swiglu (forward, Liger-Kernel / Unsloth): y = silu(a) * b, a and b of one shape.
 *
 * Rounding points (compute, RNE):
 *   sig  = sigmoid(a)           library sigmoid of plan accuracy | 1/(1+exp(-a)) steps
 *   silu = a*sig | a/(1+exp(-a))                      (refs/pw_common.h, pw_silu)
 *   fused plan (inter == compute):
 *     y = a*sig*b in any association | silu*b | (a*b)/(1+exp(-a))      (hull)
 *   unfused plan (inter != compute: eager PyTorch `F.silu(a) * b`, Unsloth):
 *     s = RN_inter(silu)          the silu kernel's output in the storage dtype
 *     y = s * b                   the multiply kernel, in compute
 *   store y into `out`            (checker: plan round)
 * The eager form is only correct under an unfused plan (--plan inter=bf16 for bf16
 * tensors): under the fused default plan it is outside the plan (double rounding).
 * Not covered: fast-math exp (Triton tl.exp is ex2.approx: use fn=fast), approximate
 * division. */
#include "refs/pw_common.h"

void NMO_REF(nmo_ref_swiglu_eval)(E_CTX *ctx, const nmo_case *c, int64_t u, nmo_fenc **out)
{
    int64_t n = 1; /* one element per unit */
    double *a = enc_dvec(ctx, 0, n);
    double *b = enc_dvec(ctx, 1, n);
    nmo_tensor_load_f64(a, &c->in[0], u * n, n, 1);
    nmo_tensor_load_f64(b, &c->in[1], u * n, n, 1);
    E *v = enc_evec(ctx, 0, 12);
    E *ae = &v[0], *be = &v[1], *silu = &v[2], *sig = &v[3], *den = &v[4], *y = &v[5],
      *p = &v[6], *w = &v[7];
    for (int64_t j = 0; j < n; j++) {
        enc_set_d(ctx, ae, a[j]);
        enc_set_d(ctx, be, b[j]);
        pw_silu(ctx, silu, sig, den, ae, w);
        if (pw_unfused(c)) {
            pw_inter(ctx, c, silu);
            enc_mul(ctx, y, silu, be);
        } else {
            pw_mul3x(ctx, y, ae, sig, be, w);
            enc_mul(ctx, p, silu, be);
            enc_hull(ctx, y, y, p);
            enc_mul(ctx, p, ae, be);
            enc_div(ctx, p, p, den);
            enc_hull(ctx, y, y, p);
        }
        enc_export(ctx, &out[0][j], y);
    }
}

#ifdef NMO_ENGINE_FAST
void NMO_REF_CERT(nmo_ref_swiglu_eval)(nmo_cctx *ctx, const nmo_case *c, int64_t u, nmo_fenc **out);

const nmo_op nmo_op_swiglu = {
    .name = "swiglu",
    .summary = "SwiGLU gate, y = silu(a)*b (Liger-Kernel / Unsloth)",
    .shape_doc = "MxN (or ...xN): a, b and y of that shape",
    .rounding_doc = "silu=a*sigmoid(a)|a/(1+exp(-a)); fused: y=a*sig*b any assoc|(a*b)/den; "
                    "inter!=compute: y=RN_inter(silu)*b",
    .n_in = 2,
    .in = {{"a", NMO_ROLE_DATA, "gate input [..., N]"}, {"b", NMO_ROLE_DATA, "up input [..., N]"}},
    .n_out = 1,
    .out = {{"y", NMO_ROLE_DATA, "output [..., N]"}},
    .n_param = 0,
    .dtypes = "fp32 bf16 fp16",
    .test_shapes = "2x97;4x32", /* small: the engine-equality test certifies every element */
    .test_shapes_large = "3x4097;8x64",
    /* no reduction */
    .plan_fields = NMO_PF_COMPUTE | NMO_PF_FN | NMO_PF_INTER,
    .plan_vacuous = NMO_PF_ACC,
    .setup = pw_setup_same,
    .row_len = nmo_ref_row_len_last,
    .units = pw_units_elems,
    .unit_span = pw_span_elem,
    .eval_fast = NMO_REF_FAST(nmo_ref_swiglu_eval),
    .eval_cert = NMO_REF_CERT(nmo_ref_swiglu_eval),
    .contract_class = "elementwise",
};
#endif
