/* Rotary position embedding, shared by refs/rope.c and refs/rope_bwd.c.
 *
 * x[B,H,S,D] (shape BxHxSxD), cos[S,D], sin[S,D]; param layout: 0 = NeoX rotate_half
 * (element j pairs with j +- D/2), 1 = GPT-J interleaved (2i with 2i+1); param base
 * (10000). cos and sin are inputs (NMO_ROLE_DERIVED): derive() fills them as a model's
 * rotary cache stores them, cos/sin(s * base^(-2i/D)) for position s and frequency
 * index i of element j (NeoX: i = j mod D/2; GPT-J: i = j/2), rounded RNE into the
 * input dtype. The references take them as given points and read cos[s, j] / sin[s, j]
 * at the element's own index (forward) or at its partner's (backward, the exact
 * transpose); kernels that read the first half of the row instead read the same values
 * because the cache repeats each frequency for both elements of a pair.
 *
 * forward:  y[j]  = x[j]*cos[j]  + sg(j)*x[p(j)]*sin[j]
 * backward: dx[j] = dy[j]*cos[j] - sg(j)*dy[p(j)]*sin[p(j)]   (dx = dy*cos - rot(dy*sin))
 * with p(j) the partner and sg(j) = -1 for the first element of a pair, +1 for the
 * second (rotate_half(x) = cat(-x2, x1)).
 *
 * Rounding points (compute, RNE), with A = u*c and B = (+-v)*s the two products:
 *   fused plan (inter == compute): y = A + B with both products rounded, or either one
 *     fused into an FMA with the other rounded: hull(fma(u, c, RN(B)), fma(v, s, RN(A)))
 *     (both orders of `x*cos - x2*sin` as nvcc contracts them)
 *   unfused plan (inter != compute: HF eager `q*cos + rotate_half(q)*sin` in bf16,
 *     Liger's kernel on 16-bit cos/sin, whose Triton arithmetic is 16-bit):
 *     y = RN_inter(A) + RN_inter(B)
 *   store y into `out` (checker: plan round)
 * Not covered: a 16-bit kernel that contracts one product into an FMA (fma.rn.bf16) —
 * modelling it would make every cancelling element of the unfused plan uninformative —,
 * cos/sin computed inside the kernel (sincosf of plan accuracy: no
 * primitive yet), rotation as a complex multiply in another association. */
#ifndef NMO_REFS_ROPE_COMMON_H
#define NMO_REFS_ROPE_COMMON_H

#include "refs/pw_common.h"

/* One output element per unit: u is the logical index into x / y. */
static inline void pw_rope_eval(E_CTX *ctx, const nmo_case *c, int64_t u, nmo_fenc **out,
                                int bwd)
{
    int64_t S = c->shape[2], D = c->shape[3], h = D / 2, j = u % D, s = (u / D) % S, p;
    double sg;
    if (c->param[0] != 0) p = j ^ 1, sg = (j & 1) ? 1.0 : -1.0; /* GPT-J */
    else p = j < h ? j + h : j - h, sg = j < h ? -1.0 : 1.0;   /* NeoX */
    if (bwd) sg = -sg;
    double *d = enc_dvec(ctx, 0, 4);
    nmo_tensor_load_f64(&d[0], &c->in[0], u, 1, 1);             /* x[j] */
    nmo_tensor_load_f64(&d[1], &c->in[0], u - j + p, 1, 1);     /* x[p] */
    nmo_tensor_load_f64(&d[2], &c->in[1], s * D + j, 1, 1);     /* cos[s, j] */
    nmo_tensor_load_f64(&d[3], &c->in[2], s * D + (bwd ? p : j), 1, 1); /* sin */
    E *v = enc_evec(ctx, 0, 8);
    E *ue = &v[0], *ce = &v[1], *ve = &v[2], *se = &v[3], *A = &v[4], *B = &v[5], *y = &v[6],
      *t = &v[7];
    enc_set_d(ctx, ue, d[0]);
    enc_set_d(ctx, ce, d[2]);
    enc_set_d(ctx, ve, sg * d[1]);
    enc_set_d(ctx, se, d[3]);
    enc_mul(ctx, A, ue, ce);
    enc_mul(ctx, B, ve, se);
    if (pw_unfused(c)) {
        pw_inter(ctx, c, A);
        pw_inter(ctx, c, B);
        enc_add(ctx, y, A, B);
    } else {
        enc_fma(ctx, y, ue, ce, B);
        enc_fma(ctx, t, ve, se, A);
        enc_hull(ctx, y, y, t);
    }
    enc_export(ctx, &out[0][0], y);
}

#ifdef NMO_ENGINE_FAST
#include <math.h>

/* x (or dy) [B,H,S,D], cos and sin [S,D], output [B,H,S,D]; D even. */
static inline nmo_status pw_rope_setup(nmo_case *c, nmo_err *err)
{
    if (c->nshape != 4)
        return nmo_err_set(err, NMO_ERR_SHAPE, "%s: shape must be BxHxSxD, got %d dims",
                           c->op->name, c->nshape);
    if (c->shape[3] < 2 || c->shape[3] % 2)
        return nmo_err_set(err, NMO_ERR_SHAPE, "%s: head dim D=%lld must be even", c->op->name,
                           (long long)c->shape[3]);
    int64_t sd[2] = {c->shape[2], c->shape[3]};
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[0], c->plan.in, 4, c->shape, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[1], c->plan.in, 2, sd, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[2], c->plan.in, 2, sd, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->out[0], c->plan.out, 4, c->shape, err));
    return NMO_OK;
}

/* The rotary cache: cos/sin(s * base^(-2i/D)) in long double, rounded RNE into the
 * input dtype (nmo_tensor_set). */
static inline void pw_rope_derive(nmo_case *c)
{
    int64_t S = c->shape[2], D = c->shape[3], h = D / 2;
    int gptj = c->param[0] != 0;
    long double base = c->param[1] > 0 ? (long double)c->param[1] : 10000.0L;
    for (int64_t s = 0; s < S; s++)
        for (int64_t j = 0; j < D; j++) {
            int64_t i = gptj ? j / 2 : j % h;
            long double ang = (long double)s * powl(base, -2.0L * (long double)i / (long double)D);
            nmo_tensor_set(&c->in[1], s * D + j, (double)cosl(ang));
            nmo_tensor_set(&c->in[2], s * D + j, (double)sinl(ang));
        }
}
#endif

#endif
