/* numoracle: pieces shared by the normalization references (layer_norm, group_norm,
 * batchnorm_inference, rms_norm, rms_norm_bwd, layer_norm_bwd). Included by refs/<op>.c after
 * numoracle/ref.h, so it is compiled once per engine with each operator; everything goes
 * through enc_* primitives, as in the reference kernels themselves.
 *
 * Two-pass statistics (norm_two_pass): the only way of computing mean and variance that
 * the norm references cover. Welford's online update (PyTorch's native kernels, Apex)
 * has a different error structure (its M2 depends to first order on the intermediate
 * means' errors) and is not covered; neither is E[x^2] - mean^2, which is not a correct
 * implementation (catastrophic cancellation on rows with a large mean). */
#ifndef NMO_REFS_NORM_COMMON_H
#define NMO_REFS_NORM_COMMON_H

#include <stdlib.h>
#include <string.h>

#include "engine/ref.h"

/* 1/N as a factor of an enc_prodk product: a division by N is a multiplication by the
 * exact 1/N with one rounding, a multiplication by the constant RN(1/N) is another:
 * the factor is the hull of RN_compute(1/N) and the binary64 interval [pred(q), succ(q)],
 * q = RN64(1/N), which holds the exact 1/N. Its endpoints are not compute values: use
 * it only in enc_prodk / enc_dotk (they bound their own binary64 error). */
static inline void norm_inv_n(E_CTX *ctx, E *r, int64_t n)
{
    double q = 1.0 / (double)n;
    E a, b;
    enc_init(ctx, &a), enc_init(ctx, &b);
    enc_const(ctx, r, q);
    enc_set_d(ctx, &a, nextafter(q, 0.0));
    enc_set_d(ctx, &b, nextafter(q, 2.0));
    enc_hull(ctx, &a, &a, &b);
    enc_hull(ctx, r, r, &a);
    enc_clear(ctx, &a), enc_clear(ctx, &b);
}

/* The rms statistic of the points x[0..n-1], as rms_norm's forward computes it (and what
 * rms_norm_bwd encloses when a kernel recomputes it):
 *   ss = sum_j x_j^2      any order and tree, FMA or not, in acc (dot-product model)
 *   ms = ss / N           or ss * RN(1/N)                          (enc_div_si)
 *   v  = ms + eps         eps held as RN(eps)
 *   r  = rsqrt(v)         plan accuracy, or RN(1/RN(sqrt v))       (enc_rsqrt) */
/* The steps after the sum of squares ss of n points (the GPU tier reduces the rows on
 * the device and finishes each row's statistic here: hip/gpu_oracle.c). */
static inline void norm_rms_rstd_ss(E_CTX *ctx, E *r, const E *ss, int64_t n, double eps)
{
    E ms, ep, v;
    enc_init(ctx, &ms), enc_init(ctx, &ep), enc_init(ctx, &v);
    enc_div_si(ctx, &ms, ss, n);
    enc_const(ctx, &ep, eps);
    enc_add(ctx, &v, &ms, &ep);
    enc_rsqrt(ctx, r, &v);
    enc_clear(ctx, &ms), enc_clear(ctx, &ep), enc_clear(ctx, &v);
}

static inline void norm_rms_rstd(E_CTX *ctx, E *r, const double *x, int64_t n, double eps)
{
    E ss;
    enc_init(ctx, &ss);
    enc_sumsq_d(ctx, &ss, x, n);
    norm_rms_rstd_ss(ctx, r, &ss, n, eps);
    enc_clear(ctx, &ss);
}

/* A statistic a backward kernel did not get from the caller: recomputed by the kernel it
 * is held in compute; saved by the framework's own forward (autograd) it was stored in
 * the saved tensor's dtype f (fp32: PyTorch saves rstd and mean in the accumulate
 * type). The hull of both (nothing to do when compute is f). */
static inline void norm_as_saved(E_CTX *ctx, E *r, nmo_fmt f, const nmo_case *c)
{
    if (f == c->plan.compute) return;
    E t;
    enc_init(ctx, &t);
    enc_round(ctx, &t, r, f, NMO_RNE, 0);
    enc_hull(ctx, r, r, &t);
    enc_clear(ctx, &t);
}

/* The scale stage of an RMS norm, y = h * r * (offset + w), r the row's reciprocal root:
 *   wo = RN(offset + w)        in compute (exactly w when offset = 0; Gemma: 1 + w, HF
 *                              `1.0 + self.weight.float()`, Liger `offset + W_row`)
 *   fused (inter == compute):  h * r * wo in any association, two roundings (enc_mul3)
 *   unfused (inter != compute): t = RN_inter(RN(h * r)), y = RN(t * wo): the "llama"
 *                              casting of Hugging Face (`w * h.to(x.dtype)`) and of
 *                              Liger-Kernel (casting_mode="llama"), vLLM's kernels; the
 *                              checker's store rounds y into out
 * off: RN(offset) (enc_const), read only when offset != 0; wo: scratch.
 * Not covered: the offset distributed (t*w + t, fma(t, w, t)), offset + w rounded in a
 * narrower format than compute, all arithmetic in the storage dtype (Liger "none"). */
static inline void norm_rms_scale(E_CTX *ctx, const nmo_case *c, E *y, const E *h, const E *r,
                                  double w, double offset, const E *off, E *wo)
{
    enc_set_d(ctx, y, w);
    if (offset != 0) enc_add(ctx, wo, off, y);
    else enc_set(ctx, wo, y);
    if (c->plan.inter != c->plan.compute) {
        enc_mul(ctx, y, h, r);
        enc_round(ctx, y, y, c->plan.inter, NMO_RNE, 0);
        enc_mul(ctx, y, y, wo);
    } else {
        enc_mul3(ctx, y, h, r, wo);
    }
}

/* Two-pass statistics of the points x[0..n-1]:
 *   sum  = sum_j x_j          any order and tree, in acc (summation model; the exact sum
 *                             when acc provably holds every partial sum, e.g. 16-bit
 *                             inputs of bounded range: enc_dotk)
 *   mean = sum / N            or sum * RN(1/N)                   (enc_div_si)
 *   d_j  = x_j - mean         correctly rounded (the same computed mean for every j)
 *   ss   = sum_j d_j^2        any order and tree, FMA or not, in acc (dot model)
 *   var  = ss / N             or ss * RN(1/N)
 *   v    = var + eps          eps held as RN(eps)
 *   rstd = rsqrt(v)           plan accuracy, or RN(1/RN(sqrt v))  (enc_rsqrt)
 *   s    = sqrt(v)            for kernels that divide by the standard deviation
 * Fills xe[j] (x_j as enclosures) and d[j]. */
/* Its first pass: xe[j] = x_j and the mean. */
static inline void norm_mean(E_CTX *ctx, const double *x, E *xe, int64_t n, E *mean)
{
    E sum;
    enc_init(ctx, &sum);
    for (int64_t j = 0; j < n; j++) enc_set_d(ctx, &xe[j], x[j]);
    const E *fx[1] = {xe};
    enc_dotk(ctx, &sum, fx, 1, n, 0); /* the summation model; exact when acc holds every partial sum */
    enc_div_si(ctx, mean, &sum, n);
    enc_clear(ctx, &sum);
}

static inline void norm_two_pass(E_CTX *ctx, const double *x, E *xe, E *d, int64_t n, double eps,
                                 E *mean, E *rstd, E *s)
{
    E ss, var, ep, v;
    enc_init(ctx, &ss), enc_init(ctx, &var), enc_init(ctx, &ep);
    enc_init(ctx, &v);
    norm_mean(ctx, x, xe, n, mean);
    for (int64_t j = 0; j < n; j++) enc_sub(ctx, &d[j], &xe[j], mean);
    const E *f[2] = {d, d};
    enc_dotk(ctx, &ss, f, 2, n, 0);
    enc_div_si(ctx, &var, &ss, n);
    enc_const(ctx, &ep, eps);
    enc_add(ctx, &v, &var, &ep);
    enc_rsqrt(ctx, rstd, &v);
    enc_sqrt(ctx, s, &v);
    enc_clear(ctx, &ss), enc_clear(ctx, &var), enc_clear(ctx, &ep);
    enc_clear(ctx, &v);
}

/* Temporaries of norm_affine (MPFR variables in the certified engine: init once). */
typedef struct {
    E p, q, y1, y2, a, a2;
} norm_tmp;

static inline void norm_tmp_init(E_CTX *ctx, norm_tmp *t)
{
    enc_init(ctx, &t->p), enc_init(ctx, &t->q), enc_init(ctx, &t->y1), enc_init(ctx, &t->y2);
    enc_init(ctx, &t->a), enc_init(ctx, &t->a2);
}

static inline void norm_tmp_clear(E_CTX *ctx, norm_tmp *t)
{
    enc_clear(ctx, &t->p), enc_clear(ctx, &t->q), enc_clear(ctx, &t->y1), enc_clear(ctx, &t->y2);
    enc_clear(ctx, &t->a), enc_clear(ctx, &t->a2);
}

/* The affine normalization y = (x - mean) * rstd * w + b, in every form kernels use
 * (the hull of):
 *   direct:   y = d * rstd * w + b      d = x - mean; the three factors in any
 *                                        association, the last product FMA'd into + b
 *                                        or rounded (enc_prodk fused)
 *   division: y = (d / s) * w + b       s = sqrt(v); last product FMA or not
 *   fused:    a  = w * rstd  |  w / s    (the scale)
 *             y  = x * a + (b - mean * a)   both products FMA or not, the same a in
 *                                           both (enc_scale_shift)
 * x is the input point, d its deviation enclosure, s = sqrt(var + eps).
 * Not covered: a shift computed from a differently rounded scale (b - (mean*rstd)*w
 * next to x*RN(w*rstd)). */
static inline void norm_affine(E_CTX *ctx, norm_tmp *t, E *y, const E *x, const E *d,
                               const E *mean, const E *rstd, const E *s, const E *w, const E *b)
{
    /* direct */
    const E *f3[3] = {d, rstd, w};
    enc_prodk(ctx, &t->p, f3, 3, 1);
    enc_add(ctx, &t->y1, &t->p, b);
    /* division */
    enc_div(ctx, &t->q, d, s);
    const E *f2[2] = {&t->q, w};
    enc_prodk(ctx, &t->p, f2, 2, 1);
    enc_add(ctx, &t->y2, &t->p, b);
    enc_hull(ctx, &t->y1, &t->y1, &t->y2);
    /* fused scale and shift */
    enc_mul(ctx, &t->a, w, rstd);
    enc_div(ctx, &t->a2, w, s);
    enc_hull(ctx, &t->a, &t->a, &t->a2);
    enc_scale_shift(ctx, &t->y2, x, &t->a, mean, b);
    enc_hull(ctx, y, &t->y1, &t->y2);
}

#ifdef NMO_ENGINE_CERT
/* Escalation of a row's flagged elements (op->eval_cert_unc_stat: rms_norm, layer_norm):
 * js[0..m) the elements of out flagged NMO_EF_UNC (increasing), t scratch for their
 * results, js2[0..m2) those still to be computed by the certified engine (all of them
 * until norm_unc_keep_fast). */
typedef struct {
    int64_t *js, *js2, m, m2;
    nmo_fenc *t;
} norm_unc;

/* 1: the lists are built; 0: nothing flagged; -1: no memory (the caller escalates the
 * whole row, as eval_cert) */
static inline int norm_unc_begin(norm_unc *q, const nmo_fenc *out, int64_t n)
{
    int64_t m = 0;
    for (int64_t j = 0; j < n; j++) m += (out[j].flags & NMO_EF_UNC) != 0;
    *q = (norm_unc){0};
    if (m == 0) return 0;
    q->js = malloc((size_t)m * 2 * sizeof(int64_t));
    q->t = malloc((size_t)m * sizeof(nmo_fenc));
    if (!q->js || !q->t) {
        free(q->js), free(q->t);
        *q = (norm_unc){0};
        return -1;
    }
    for (int64_t j = 0, i = 0; j < n; j++)
        if (out[j].flags & NMO_EF_UNC) q->js[i++] = j;
    q->m = q->m2 = m;
    q->js2 = q->js + m;
    memcpy(q->js2, q->js, (size_t)m * sizeof(int64_t));
    return 1;
}

/* t[0..m) holds the fast formula's results for js: the decided ones go to out, the others
 * stay listed in js2 for the certified engine */
static inline void norm_unc_keep_fast(norm_unc *q, nmo_fenc *out)
{
    q->m2 = 0;
    for (int64_t i = 0; i < q->m; i++) {
        if (q->t[i].flags & NMO_EF_UNC) q->js2[q->m2++] = q->js[i];
        else out[q->js[i]] = q->t[i];
    }
}

/* t[0..m2) holds the certified results for js2: into out, and the lists freed */
static inline void norm_unc_end(norm_unc *q, nmo_fenc *out)
{
    for (int64_t i = 0; i < q->m2; i++) out[q->js2[i]] = q->t[i];
    free(q->js), free(q->t);
}
#endif

#endif
