/* Enclosure fragments shared by the pointwise operators (silu, gelu, swiglu, geglu and
 * their backward passes). Included by refs/<op>.c after numoracle/ref.h, so it is
 * compiled into both engines exactly like the references themselves.
 *
 * The fragments are static: each translation unit is compiled for one engine only, so
 * plain names do not clash. Every fragment works on enclosures of points or of earlier results, writes its
 * results into caller-provided enclosures and uses the scratch array w (from enc_evec)
 * of the size it states; results must not lie inside w.
 *
 * Constants are held in compute (enc_const: RN of the real constant). Where common
 * kernels hold a constant in two different ways (3*kappa folded in double, or 3.0f times
 * the float kappa) both values are hulled. */
#ifndef NMO_REFS_PW_COMMON_H
#define NMO_REFS_PW_COMMON_H

#include "engine/ref.h"

#define PW_SQRT1_2 0.70710678118654752440      /* 1/sqrt(2) */
#define PW_SQRT2 1.41421356237309504880        /* sqrt(2) */
#define PW_SQRT_2_OVER_PI 0.79788456080286535588 /* sqrt(2/pi); 0.79788456 is the same float */
#define PW_KAPPA 0.044715                      /* tanh-gelu cubic coefficient */

/* The plan stores intermediates between stages in a narrower format (eager kernels). */
static inline int pw_unfused(const nmo_case *c) { return c->plan.inter != c->plan.compute; }

/* A stage boundary: an unfused plan rounds the value into `inter` (RNE). */
static inline void pw_inter(E_CTX *ctx, const nmo_case *c, E *v)
{
    if (pw_unfused(c)) enc_round(ctx, v, v, c->plan.inter, NMO_RNE, 0);
}

/* a*b*c in any association, every product correctly rounded: the hull of (ab)c, a(bc)
 * and (ac)b. Tighter than enc_mul3 (no extra ulp); exact on the lattice. Scratch 2. */
static inline void pw_mul3x(E_CTX *ctx, E *r, const E *a, const E *b, const E *c, E *w)
{
    enc_mul(ctx, &w[0], a, b);
    enc_mul(ctx, &w[1], &w[0], c);
    enc_mul(ctx, &w[0], b, c);
    enc_mul(ctx, &w[0], a, &w[0]);
    enc_hull(ctx, &w[1], &w[1], &w[0]);
    enc_mul(ctx, &w[0], a, c);
    enc_mul(ctx, &w[0], &w[0], b);
    enc_hull(ctx, r, &w[1], &w[0]);
}

/* silu of x:
 *   sig  = sigmoid(x)       enc_sigmoid: a library sigmoid of plan accuracy, or
 *                           1/(1 + exp(-x)) step by step (hull)
 *   den  = 1 + exp(-x)      exp of plan accuracy, one rounded add
 *   silu = x*sig  |  x/den  (hull: Liger x*sigmoid(x), PyTorch x/(1+exp(-x)))
 * Scratch 2. */
static inline void pw_silu(E_CTX *ctx, E *silu, E *sig, E *den, const E *x, E *w)
{
    E *one = &w[0], *q = &w[1];
    enc_sigmoid(ctx, sig, x);
    enc_neg(ctx, den, x);
    enc_exp(ctx, den, den);
    enc_const(ctx, one, 1.0);
    enc_add(ctx, den, one, den);
    enc_mul(ctx, silu, x, sig);
    enc_div(ctx, q, x, den);
    enc_hull(ctx, silu, silu, q);
}

/* Exact gelu of x: 0.5*x*(1 + erf(x/sqrt2)).
 *   z = x*RN(1/sqrt2) | x/RN(sqrt2)          (hull)
 *   e = erf(z)                                plan accuracy fn_ulps[ERF]
 *   t = 1 + e
 *   y = (0.5x)t | 0.5(xt) | x(0.5t)          0.5*x*t in any association
 * The "x*cdf" form x*(0.5 + 0.5e), FMA or not, is x(0.5t) exactly: 0.5e is exact and
 * scaling by 2 commutes with rounding (0.5 + 0.5e >= 2^-25 unless it is 0), so
 * RN(0.5e + 0.5) = 0.5 RN(e + 1). (Modelling it through enc_fma would only add
 * escalations: the fused sum is often a tie the fast engine cannot decide.)
 * Scratch 6. */
static inline void pw_gelu_erf(E_CTX *ctx, E *y, const E *x, E *w)
{
    E *k = &w[0], *z = &w[1], *z2 = &w[2], *t = &w[3], *h = &w[4], *p = &w[5];
    enc_const(ctx, k, PW_SQRT1_2);
    enc_mul(ctx, z, x, k);
    enc_const(ctx, k, PW_SQRT2);
    enc_div(ctx, z2, x, k);
    enc_hull(ctx, z, z, z2);
    enc_erf(ctx, z2, z); /* z2 = e */
    enc_const(ctx, k, 1.0);
    enc_add(ctx, t, k, z2);
    enc_const(ctx, h, 0.5);
    enc_mul(ctx, p, h, x);
    enc_mul(ctx, y, p, t);
    enc_mul(ctx, p, x, t);
    enc_mul(ctx, p, h, p);
    enc_hull(ctx, y, y, p);
    enc_mul(ctx, p, h, t);
    enc_mul(ctx, p, x, p);
    enc_hull(ctx, y, y, p);
}

/* tanh-approximated gelu of x: 0.5*x*(1 + tanh(beta*(x + kappa*x^3))),
 * beta = RN(sqrt(2/pi)), kappa = RN(0.044715).
 *   x3    = (x*x)*x                              (x*(x*x) is the same rounding)
 *   inner = beta*(x + kappa*x3)                  the x + kappa*x3 step FMA or not
 *         | beta*x*(1 + kappa*x*x) in any association of beta, x and the factor,
 *           the factor as (kappa*x)*x + 1 or kappa*(x*x) + 1, FMA or not (vLLM gelu_fast)
 *   th    = tanh(inner)                          plan accuracy fn_ulps[TANH]
 *   t     = 1 + th
 *   cdf   = 0.5*t (= 0.5*th + 0.5, FMA or not, exactly: see pw_gelu_erf)
 *   y     = 0.5*x*t in any association | x*cdf
 * Outputs y (may be NULL), cdf, th, x*x (xx). Scratch 8. */
static inline void pw_gelu_tanh(E_CTX *ctx, E *y, E *cdf, E *th, E *xx, const E *x, E *w)
{
    E *one = &w[0], *h = &w[1], *kap = &w[2], *beta = &w[3], *p = &w[4], *q = &w[5],
      *in = &w[6], *r = &w[7];
    enc_const(ctx, one, 1.0);
    enc_const(ctx, h, 0.5);
    enc_const(ctx, kap, PW_KAPPA);
    enc_const(ctx, beta, PW_SQRT_2_OVER_PI);
    enc_mul(ctx, xx, x, x);
    enc_mul(ctx, p, xx, x);
    enc_fma(ctx, p, kap, p, x);
    enc_mul(ctx, in, beta, p);
    /* factored form */
    enc_mul(ctx, q, kap, x);
    enc_fma(ctx, q, q, x, one);
    enc_fma(ctx, p, kap, xx, one);
    enc_hull(ctx, q, q, p);
    enc_mul(ctx, p, beta, x);
    enc_mul(ctx, r, p, q);
    enc_hull(ctx, in, in, r);
    enc_mul(ctx, p, x, q);
    enc_mul(ctx, r, beta, p);
    enc_hull(ctx, in, in, r);
    enc_mul(ctx, p, beta, q);
    enc_mul(ctx, r, x, p);
    enc_hull(ctx, in, in, r);
    enc_tanh(ctx, th, in);
    enc_add(ctx, q, one, th); /* q = t */
    enc_mul(ctx, cdf, h, q);  /* = RN(0.5 th + 0.5), FMA or not (see pw_gelu_erf) */
    if (!y) return;
    enc_mul(ctx, p, h, x);
    enc_mul(ctx, y, p, q);
    enc_mul(ctx, p, x, q);
    enc_mul(ctx, p, h, p);
    enc_hull(ctx, y, y, p);
    enc_mul(ctx, p, x, cdf);
    enc_hull(ctx, y, y, p);
}

#ifdef NMO_ENGINE_FAST
#include "refs/ref_common.h"

/* One unit per output element (every output has the problem shape): escalation then
 * recomputes single elements, which keeps the certified engine's share small. */
static inline int64_t pw_units_elems(const nmo_case *c)
{
    int64_t n = 1;
    for (int i = 0; i < c->nshape; i++) n *= c->shape[i];
    return n;
}

static inline void pw_span_elem(const nmo_case *c, int64_t u, int k, int64_t *begin,
                                int64_t *count, int64_t *stride)
{
    (void)c, (void)k;
    *begin = u;
    *count = 1;
    *stride = 1;
}

/* Setup of an operator whose inputs and outputs all have the problem shape. */
static inline nmo_status pw_setup_same(nmo_case *c, nmo_err *err)
{
    int64_t rows, n;
    NMO_RETURN_IF_ERR(nmo_ref_rows_shape(c, &rows, &n, err));
    for (int k = 0; k < c->n_in; k++)
        NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[k], c->plan.in, c->nshape, c->shape, err));
    for (int k = 0; k < c->n_out; k++)
        NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->out[k], c->plan.out, c->nshape, c->shape, err));
    return NMO_OK;
}
#endif

#endif
