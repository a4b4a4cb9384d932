/* swiglu_bwd (Liger-Kernel / Unsloth): for y = silu(a)*b and upstream gradient dy,
 *   da = dy * b * silu'(a),  silu'(a) = sig*(1 + a*(1 - sig)) = silu*(1 - sig) + sig
 *   db = dy * silu(a)
 *
 * Rounding points (compute, RNE):
 *   sig, silu, den             as in swiglu (refs/pw_common.h, pw_silu)
 *   omt = 1 - sig
 *   t1  = 1 + a*omt            FMA or not
 *   fused plan (inter == compute):
 *     d  = sig*t1 (PyTorch/Unsloth) | silu*omt + sig, FMA or not (Liger)   (hull)
 *     da = dy*b*d in any association | (dy*b)*sig*t1 in any association (Inductor)
 *     db = dy*silu | dy*a*sig in any association
 *   unfused plan (inter != compute: eager PyTorch autograd, Unsloth's kernel):
 *     g  = RN_inter(dy*b)        gradient of silu(a), stored in the storage dtype
 *     da = g*sig*t1 in any association | g*(silu*omt + sig)
 *     db = dy*RN_inter(silu)     the saved / rounded activation
 *   store da, db into `out`    (checker: plan round)
 * Not covered: fast-math exp / division (use fn=fast). */
#include "refs/pw_common.h"

void NMO_REF(nmo_ref_swiglu_bwd_eval)(E_CTX *ctx, const nmo_case *c, int64_t u, nmo_fenc **out)
{
    int64_t n = 1; /* one element per unit */
    double *dy = enc_dvec(ctx, 0, n);
    double *a = enc_dvec(ctx, 1, n);
    double *b = enc_dvec(ctx, 2, n);
    nmo_tensor_load_f64(dy, &c->in[0], u * n, n, 1);
    nmo_tensor_load_f64(a, &c->in[1], u * n, n, 1);
    nmo_tensor_load_f64(b, &c->in[2], u * n, n, 1);
    E *v = enc_evec(ctx, 0, 20);
    E *ge = &v[0], *ae = &v[1], *be = &v[2], *silu = &v[3], *sig = &v[4], *den = &v[5],
      *one = &v[6], *omt = &v[7], *t1 = &v[8], *d = &v[9], *d2 = &v[10], *g = &v[11],
      *da = &v[12], *db = &v[13], *p = &v[14], *w = &v[15];
    enc_const(ctx, one, 1.0);
    for (int64_t j = 0; j < n; j++) {
        enc_set_d(ctx, ge, dy[j]);
        enc_set_d(ctx, ae, a[j]);
        enc_set_d(ctx, be, b[j]);
        pw_silu(ctx, silu, sig, den, ae, w);
        enc_sub(ctx, omt, one, sig);
        enc_fma(ctx, t1, ae, omt, one);
        enc_fma(ctx, d2, silu, omt, sig);
        enc_mul(ctx, g, ge, be);
        if (pw_unfused(c)) {
            pw_inter(ctx, c, g);
            pw_mul3x(ctx, da, g, sig, t1, w);
            enc_mul(ctx, p, g, d2);
            enc_hull(ctx, da, da, p);
            pw_inter(ctx, c, silu);
            enc_mul(ctx, db, ge, silu);
        } else {
            enc_mul(ctx, d, sig, t1);
            enc_hull(ctx, d, d, d2);
            pw_mul3x(ctx, da, ge, be, d, w);
            pw_mul3x(ctx, p, g, sig, t1, w);
            enc_hull(ctx, da, da, p);
            pw_mul3x(ctx, db, ge, ae, sig, w);
            enc_mul(ctx, p, ge, silu);
            enc_hull(ctx, db, db, p);
        }
        enc_export(ctx, &out[0][j], da);
        enc_export(ctx, &out[1][j], db);
    }
}

#ifdef NMO_ENGINE_FAST
void NMO_REF_CERT(nmo_ref_swiglu_bwd_eval)(nmo_cctx *ctx, const nmo_case *c, int64_t u,
                                            nmo_fenc **out);

const nmo_op nmo_op_swiglu_bwd = {
    .name = "swiglu_bwd",
    .summary = "SwiGLU backward: da = dy*b*silu'(a), db = dy*silu(a) (Liger-Kernel / Unsloth)",
    .shape_doc = "MxN (or ...xN): dy, a, b, da, db of that shape",
    .rounding_doc = "d=sig*(1+a*(1-sig))|silu*(1-sig)+sig (FMA or not); da=dy*b*d any assoc; "
                    "db=dy*silu; inter!=compute: g=RN_inter(dy*b), da=g*sig*t1, db=dy*RN_inter(silu)",
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
    .eval_fast = NMO_REF_FAST(nmo_ref_swiglu_bwd_eval),
    .eval_cert = NMO_REF_CERT(nmo_ref_swiglu_bwd_eval),
};
#endif
