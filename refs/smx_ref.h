/* numoracle: pieces shared by the softmax-family reference kernels (cross_entropy,
 * cross_entropy_bwd, kl_div, jsd). Included by a refs/<op>.c after numoracle/ref.h, so it
 * is compiled once per engine: engine-dependent helpers are named through NMO_REF(). */
#ifndef NMO_SMX_REF_H
#define NMO_SMX_REF_H

#include <math.h>
#include "engine/ref.h"

/* Class label of row i (stored as an fp32 value): its index in [0, V), -1 when it is
 * ignore_index, -2 when it is not a valid class (a correct kernel's result is undefined). */
static inline int64_t nmo_sf_ref_label(const nmo_tensor *labels, int64_t i, int64_t V, double ignore)
{
    double v = nmo_tensor_get(labels, i);
    if (v == ignore) return -1;
    if (!(v >= 0) || v >= (double)V || v != floor(v)) return -2;
    return (int64_t)v;
}

/* Number of rows whose label is not ignore_index (the divisor of a mean reduction). */
static inline int64_t nmo_sf_ref_count(const nmo_tensor *labels, int64_t rows, int64_t V, double ignore)
{
    int64_t n = 0;
    for (int64_t i = 0; i < rows; i++) n += nmo_sf_ref_label(labels, i, V, ignore) != -1;
    return n;
}

/* Engine-dependent helpers (each translation unit is compiled for one engine). */

/* "Anything": the value of an undefined computation (a division by an enclosure of 0). */
static inline void NMO_REF(nmo_sf_anything)(E_CTX *ctx, E *r)
{
    E one, zero;
    enc_init(ctx, &one), enc_init(ctx, &zero);
    enc_const(ctx, &one, 1.0);
    enc_const(ctx, &zero, 0.0);
    enc_div(ctx, r, &one, &zero);
    enc_clear(ctx, &one), enc_clear(ctx, &zero);
}

/* Row statistics of a softmax over x[0..n): xe[j] = x_j (points), ee[j] = exp(x_j - m)
 * (RN subtraction, exp of plan accuracy), m = max (exact), s = sum ee (any order, acc),
 * l = log(s) (plan accuracy), lse = RN(m + l). */
static inline void NMO_REF(nmo_sf_row_stats)(E_CTX *ctx, const double *x, int64_t n, E *xe, E *ee,
                                             E *m, E *s, E *l, E *lse)
{
    E d;
    enc_init(ctx, &d);
    for (int64_t j = 0; j < n; j++) enc_set_d(ctx, &xe[j], x[j]);
    enc_max_v(ctx, m, xe, n);
    for (int64_t j = 0; j < n; j++) {
        enc_sub(ctx, &d, &xe[j], m);
        enc_exp(ctx, &ee[j], &d);
    }
    enc_sum_sharp(ctx, s, ee, n);
    enc_log(ctx, l, s);
    enc_add(ctx, lse, m, l);
    enc_clear(ctx, &d);
}

/* log-softmax value of element j: RN(RN(x_j - m) - l) or RN(x_j - lse) (hull). */
static inline void NMO_REF(nmo_sf_logprob)(E_CTX *ctx, E *r, const E *xj, const E *m, const E *l,
                                           const E *lse)
{
    E a;
    enc_init(ctx, &a);
    enc_sub(ctx, &a, xj, m);
    enc_sub(ctx, &a, &a, l);
    enc_sub(ctx, r, xj, lse);
    enc_hull(ctx, r, r, &a);
    enc_clear(ctx, &a);
}

#endif
