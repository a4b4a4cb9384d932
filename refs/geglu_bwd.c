/* geglu_bwd (Liger-Kernel): for y = gelu_tanh(a)*b and upstream gradient dy,
 *   da = dy * b * gelu_tanh'(a),  db = dy * gelu_tanh(a)
 *   gelu_tanh'(a) = 0.5*(1 + th) + 0.5*a*(1 - th^2)*beta*(1 + 3*kappa*a^2)
 * with th = tanh(beta*(a + kappa*a^3)), beta = sqrt(2/pi), kappa = 0.044715.
 *
 * Rounding points (compute, RNE):
 *   g, cdf, th, a*a           every form of the forward (refs/pw_common.h, pw_gelu_tanh)
 *   term1 = cdf = 0.5*(1 + th)
 *   omt   = 1 - th*th         FMA or not
 *   c3    = RN(3*0.044715) | RN(3*RN(0.044715))   (folded in double | 3.0f*kappa) hull
 *   poly  = 1 + c3*(a*a) | 1 + (c3*a)*a           FMA or not (PyTorch | Liger)
 *   P1    = (0.5*a)*omt
 *   s     = term1 + P1*beta*poly: the product in any association, its last multiply
 *           fused with the add or not: ((P1*beta)*poly) (PyTorch), P1*(beta*poly) (Liger)
 *   fused plan (inter == compute):
 *     da = dy*b*s in any association;  db = dy*g | dy*a*cdf in any association
 *   unfused plan (inter != compute):
 *     da = RN_inter(dy*b) * s   (eager autograd; Liger's Triton kernel computes dc*b of
 *                                two 16-bit tensors in that dtype: the same rounding)
 *     db = dy*RN_inter(g) (eager: the stored activation; current Liger rounds geglu_a to
 *          the dtype) | dy*g (earlier Liger kept the recomputed g in fp32)      (hull)
 *   store da, db into `out`   (checker: plan round)
 * Not covered: the pre-multiplied constant beta*3*kappa (Megatron's 0.1070322243),
 * tanh.approx.f32 (use fn=fast). */
#include "refs/pw_common.h"

void NMO_REF(nmo_ref_geglu_bwd_eval)(E_CTX *ctx, const nmo_case *c, int64_t u, nmo_fenc **out)
{
    int64_t n = 1; /* one element per unit */
    double *dy = enc_dvec(ctx, 0, n);
    double *a = enc_dvec(ctx, 1, n);
    double *b = enc_dvec(ctx, 2, n);
    nmo_tensor_load_f64(dy, &c->in[0], u * n, n, 1);
    nmo_tensor_load_f64(a, &c->in[1], u * n, n, 1);
    nmo_tensor_load_f64(b, &c->in[2], u * n, n, 1);
    E *v = enc_evec(ctx, 0, 32);
    E *ge = &v[0], *ae = &v[1], *be = &v[2], *g = &v[3], *cdf = &v[4], *th = &v[5],
      *xx = &v[6], *one = &v[7], *h = &v[8], *beta = &v[9], *c3 = &v[10], *omt = &v[11],
      *poly = &v[12], *p1 = &v[13], *s = &v[14], *p = &v[15], *q = &v[16], *da = &v[17],
      *db = &v[18], *w = &v[19];
    enc_const(ctx, one, 1.0);
    enc_const(ctx, h, 0.5);
    enc_const(ctx, beta, PW_SQRT_2_OVER_PI);
    enc_const(ctx, c3, 3 * PW_KAPPA);
    enc_const(ctx, p, 3.0);
    enc_const(ctx, q, PW_KAPPA);
    enc_mul(ctx, p, p, q);
    enc_hull(ctx, c3, c3, p);
    for (int64_t j = 0; j < n; j++) {
        enc_set_d(ctx, ge, dy[j]);
        enc_set_d(ctx, ae, a[j]);
        enc_set_d(ctx, be, b[j]);
        pw_gelu_tanh(ctx, g, cdf, th, xx, ae, w);
        enc_neg(ctx, p, th);
        enc_fma(ctx, omt, p, th, one);
        enc_fma(ctx, poly, c3, xx, one);
        enc_mul(ctx, p, c3, ae);
        enc_fma(ctx, p, p, ae, one);
        enc_hull(ctx, poly, poly, p);
        enc_mul(ctx, p1, h, ae);
        enc_mul(ctx, p1, p1, omt);
        enc_mul(ctx, p, p1, beta);
        enc_fma(ctx, s, p, poly, cdf);
        enc_mul(ctx, p, beta, poly);
        enc_fma(ctx, p, p1, p, cdf);
        enc_hull(ctx, s, s, p);
        pw_mul3x(ctx, p, p1, beta, poly, w);
        enc_add(ctx, p, p, cdf);
        enc_hull(ctx, s, s, p);
        if (pw_unfused(c)) {
            enc_mul(ctx, p, ge, be);
            pw_inter(ctx, c, p);
            enc_mul(ctx, da, p, s);
            enc_mul(ctx, db, ge, g);
            pw_inter(ctx, c, g);
            enc_mul(ctx, p, ge, g);
            enc_hull(ctx, db, db, p);
        } else {
            pw_mul3x(ctx, da, ge, be, s, w);
            enc_mul(ctx, db, ge, g);
            pw_mul3x(ctx, p, ge, ae, cdf, w);
            enc_hull(ctx, db, db, p);
        }
        enc_export(ctx, &out[0][j], da);
        enc_export(ctx, &out[1][j], db);
    }
}

#ifdef NMO_ENGINE_FAST
void NMO_REF_CERT(nmo_ref_geglu_bwd_eval)(nmo_cctx *ctx, const nmo_case *c, int64_t u,
                                           nmo_fenc **out);

const nmo_op nmo_op_geglu_bwd = {
    .name = "geglu_bwd",
    .summary = "GEGLU (tanh gelu) backward: da = dy*b*gelu'(a), db = dy*gelu(a) (Liger-Kernel)",
    .shape_doc = "MxN (or ...xN): dy, a, b, da, db of that shape",
    .rounding_doc = "s=0.5(1+th)+0.5a(1-th^2)*beta*(1+3kappa a^2) (PyTorch|Liger assoc, FMA or "
                    "not); da=dy*b*s any assoc; db=dy*g; inter!=compute: da=RN_inter(dy*b)*s",
    .n_in = 3,
    .in = {{"dy", NMO_ROLE_DATA, "upstream gradient [..., N]"},
           {"a", NMO_ROLE_DATA, "gate input [..., N]"},
           {"b", NMO_ROLE_DATA, "up input [..., N]"}},
    .n_out = 2,
    .out = {{"da", NMO_ROLE_DATA, "gradient of a [..., N]"},
            {"db", NMO_ROLE_DATA, "gradient of b [..., N]"}},
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
    .eval_fast = NMO_REF_FAST(nmo_ref_geglu_bwd_eval),
    .eval_cert = NMO_REF_CERT(nmo_ref_geglu_bwd_eval),
};
#endif
