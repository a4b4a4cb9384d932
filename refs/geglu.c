/* geglu (forward, Liger-Kernel): y = gelu_tanh(a) * b, a and b of one shape, with
 * gelu_tanh(a) = 0.5*a*(1 + tanh(sqrt(2/pi)*(a + 0.044715*a^3))).
 *
 * Rounding points (compute, RNE):
 *   g, cdf = 0.5*(1 + th)      the tanh-gelu of a and its cdf factor, every form of
 *                              refs/pw_common.h (pw_gelu_tanh; see refs/gelu.c)
 *   fused plan (inter == compute):
 *     y = g*b | a*cdf*b in any association                                  (hull)
 *   unfused plan (inter != compute: eager `F.gelu(a, approximate="tanh") * b`):
 *     y = RN_inter(g) * b
 *   store y into `out`         (checker: plan round)
 * Not covered: tanh.approx.f32 (use fn=fast), the exact-erf GEGLU variant. */
#include "refs/pw_common.h"

void NMO_REF(nmo_ref_geglu_eval)(E_CTX *ctx, const nmo_case *c, int64_t u, nmo_fenc **out)
{
    int64_t n = 1; /* one element per unit */
    double *a = enc_dvec(ctx, 0, n);
    double *b = enc_dvec(ctx, 1, n);
    nmo_tensor_load_f64(a, &c->in[0], u * n, n, 1);
    nmo_tensor_load_f64(b, &c->in[1], u * n, n, 1);
    E *v = enc_evec(ctx, 0, 20);
    E *ae = &v[0], *be = &v[1], *g = &v[2], *cdf = &v[3], *th = &v[4], *xx = &v[5],
      *y = &v[6], *p = &v[7], *w = &v[8];
    for (int64_t j = 0; j < n; j++) {
        enc_set_d(ctx, ae, a[j]);
        enc_set_d(ctx, be, b[j]);
        pw_gelu_tanh(ctx, g, cdf, th, xx, ae, w);
        if (pw_unfused(c)) {
            pw_inter(ctx, c, g);
            enc_mul(ctx, y, g, be);
        } else {
            enc_mul(ctx, y, g, be);
            pw_mul3x(ctx, p, ae, cdf, be, w);
            enc_hull(ctx, y, y, p);
        }
        enc_export(ctx, &out[0][j], y);
    }
}

#ifdef NMO_ENGINE_FAST
void NMO_REF_CERT(nmo_ref_geglu_eval)(nmo_cctx *ctx, const nmo_case *c, int64_t u, nmo_fenc **out);

const nmo_op nmo_op_geglu = {
    .name = "geglu",
    .summary = "GEGLU gate with tanh-approximated gelu, y = gelu_tanh(a)*b (Liger-Kernel)",
    .shape_doc = "MxN (or ...xN): a, b and y of that shape",
    .rounding_doc = "g=gelu_tanh(a) (forms of gelu approximate=1); fused: y=g*b|a*cdf*b any "
                    "assoc; inter!=compute: y=RN_inter(g)*b",
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
    .eval_fast = NMO_REF_FAST(nmo_ref_geglu_eval),
    .eval_cert = NMO_REF_CERT(nmo_ref_geglu_eval),
};
#endif
