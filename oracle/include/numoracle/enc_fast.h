/* numoracle: the fast enclosure engine (DESIGN §5) — binary64, inline.
 *
 * Semantics shared with the certified engine (enc_cert.h); read this once:
 *
 * An enclosure [lo, hi] holds the value that EVERY implementation following the plan
 * computes at this point of the kernel. After each operation the enclosure is snapped
 * to the lattice of the format the kernel holds the value in (compute, or acc for
 * reductions), so every endpoint is a value of that format — exactly a double.
 *
 * Each primitive is defined as a real-valued formula F of its inputs' endpoints followed
 * by a snap (a rounding into the lattice). The certified engine evaluates F in MPFR
 * (outward, 128 bits); the fast engine evaluates F in binary64 and knows a radius e that
 * bounds its own error (plus the certified engine's). When the snap is constant over
 * [v - e, v + e] both engines produce the same lattice value; when it is not, the fast
 * engine sets NMO_EF_UNC and the checker recomputes that unit with the certified engine.
 * Hence "fast + escalation == certified alone", element for element, by construction.
 * Operations on lattice values that binary64 performs with one correct rounding
 * (+ - * / sqrt of formats with p <= 25: Figueroa 1995, "When is double rounding
 * innocuous?", p' >= 2p + 2) need no radius at all.
 *
 * Special values: lo = hi = NaN with NMO_EF_NAN means "every implementation gives NaN";
 * NMO_EF_NAN on an interval means NaN is also possible; [-inf, +inf] + NMO_EF_NAN is
 * "anything" (a domain edge, an overflow we cannot bound). The checker makes any
 * non-finite reachable set INCONCLUSIVE.
 *
 * With compute = fp64 no radius is ever small enough: every element escalates
 * (force_unc), so fp64 plans are decided by the certified engine alone. */
#ifndef NUMORACLE_ENC_FAST_H
#define NUMORACLE_ENC_FAST_H

#include <math.h>
#include <stdint.h>
#include "numoracle/op.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NMO_SCRATCH 8

typedef struct nmo_fctx {
    nmo_plan plan;
    nmo_fmt cf, af;     /* compute and accumulator formats */
    double uc, ua;      /* unit roundoff 2^-p of compute and accumulator */
    double etac, etaa;  /* absolute error of one rounding in the underflow range:
                           half the subnormal spacing (IEEE), min_normal (ftz) */
    double minnorm_c;   /* smallest normal of compute (ftz input flushing) */
    double maxfin_a;    /* largest finite accumulator value */
    double minsub_c;    /* smallest subnormal of compute */
    int ftz;
    int fp32rn;         /* compute/acc is fp32 without ftz: (float) casts round */
    uint32_t force_unc; /* NMO_EF_UNC when the fast engine cannot certify anything */
    double *dbuf[NMO_SCRATCH];
    int64_t dcap[NMO_SCRATCH];
    nmo_fenc *ebuf[NMO_SCRATCH];
    int64_t ecap[NMO_SCRATCH];
    void *prep;                 /* operator data made by prepare_fast */
    void (*prep_free)(void *);
} nmo_fctx;

nmo_status nmo_fctx_init(nmo_fctx *c, const nmo_plan *p, nmo_err *err);
void nmo_fctx_clear(nmo_fctx *c);
double *nmo_fctx_dvec(nmo_fctx *c, int slot, int64_t n);
nmo_fenc *nmo_fctx_evec(nmo_fctx *c, int slot, int64_t n);

/* ---- rounding into a lattice ------------------------------------------------------ */

static inline double nmo_fe_round(const nmo_fctx *c, nmo_fmt f, double x, nmo_rnd r)
{
    if (f == NMO_FP32 && c->fp32rn) {
        float y = (float)x; /* RN under the default mode */
        double d = y;
        if (r == NMO_RNE || d == x || x != x) return d;
        if (r == NMO_RD || (r == NMO_RZ && x > 0)) return d > x ? (double)nextafterf(y, -INFINITY) : d;
        return d < x ? (double)nextafterf(y, INFINITY) : d; /* RU, or RZ of a negative */
    }
    if (f == NMO_FP64 && !c->ftz) return x; /* x is already a double: exact */
    return nmo_fmt_round(f, x, r, c->ftz);
}

/* Snap a value known only to lie in [v - e, v + e]. The margin covers binary64 rounding
 * of v +- e and the certified engine's own (128-bit) error. */
static inline double nmo_fe_snap(const nmo_fctx *c, nmo_fmt f, nmo_rnd r, double v, double e,
                                 uint32_t *fl)
{
    double a = nmo_fe_round(c, f, v, r);
    double ee = e + fabs(v) * 0x1p-50 + 0x1p-1060;
    if (nmo_fe_round(c, f, v - ee, r) != a || nmo_fe_round(c, f, v + ee, r) != a)
        *fl |= NMO_EF_UNC;
    *fl |= c->force_unc;
    return a;
}

static inline void nmo_fenc_set_nan(nmo_fenc *r, uint32_t fl)
{
    r->lo = r->hi = NAN;
    r->flags = fl | NMO_EF_NAN;
}

static inline void nmo_fenc_set_all(nmo_fenc *r, uint32_t fl)
{
    r->lo = -INFINITY;
    r->hi = INFINITY;
    r->flags = fl | NMO_EF_NAN;
}

static inline int nmo_fenc_is_nan(const nmo_fenc *a) { return a->lo != a->lo; }

/* Finish a result: NaN endpoints (inf - inf, 0 * inf) become "anything". */
static inline void nmo_fe_fix(nmo_fenc *r)
{
    if (r->lo != r->lo || r->hi != r->hi) nmo_fenc_set_all(r, r->flags);
}

/* ---- elementary primitives ---------------------------------------------------------- */

static inline void nmo_fenc_init(nmo_fctx *c, nmo_fenc *x) { (void)c; (void)x; }
static inline void nmo_fenc_clear(nmo_fctx *c, nmo_fenc *x) { (void)c; (void)x; }

static inline void nmo_fenc_set(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *a)
{
    (void)c;
    *r = *a;
}

/* An input element (a value of the input format). Under ftz, a subnormal input may be
 * read as zero (DAZ): the enclosure is the hull of both. */
static inline void nmo_fenc_set_d(nmo_fctx *c, nmo_fenc *r, double v)
{
    if (v != v) {
        nmo_fenc_set_nan(r, 0);
        return;
    }
    r->lo = r->hi = v;
    r->flags = 0;
    if (c->ftz && v != 0 && fabs(v) < c->minnorm_c) {
        if (v < 0) r->hi = 0; else r->lo = 0;
    }
}

/* A real constant the kernel holds in compute (eps, 1/N): rounded RNE once. */
static inline void nmo_fenc_const(nmo_fctx *c, nmo_fenc *r, double v)
{
    r->lo = r->hi = nmo_fe_round(c, c->cf, v, NMO_RNE);
    r->flags = 0;
}

/* Correctly rounded add: [RN(a.lo + b.lo), RN(a.hi + b.hi)]; binary64 then RN is
 * innocuous double rounding (Figueroa), so no radius. */
static inline void nmo_fenc_add(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *a, const nmo_fenc *b)
{
    uint32_t fl = a->flags | b->flags;
    if (nmo_fenc_is_nan(a) || nmo_fenc_is_nan(b)) { nmo_fenc_set_nan(r, fl); return; }
    r->lo = nmo_fe_round(c, c->cf, a->lo + b->lo, NMO_RNE);
    r->hi = nmo_fe_round(c, c->cf, a->hi + b->hi, NMO_RNE);
    r->flags = fl | c->force_unc;
    nmo_fe_fix(r);
}

static inline void nmo_fenc_neg(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *a)
{
    (void)c;
    double lo = -a->hi, hi = -a->lo;
    r->lo = lo;
    r->hi = hi;
    r->flags = a->flags;
}

static inline void nmo_fenc_sub(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *a, const nmo_fenc *b)
{
    nmo_fenc nb;
    nmo_fenc_neg(c, &nb, b);
    nmo_fenc_add(c, r, a, &nb);
}

/* Exact product interval of two intervals (binary64 holds products of p <= 26 formats
 * exactly): min/max of the four endpoint products. */
static inline void nmo_fe_mul_exact(double *lo, double *hi, const nmo_fenc *a, const nmo_fenc *b)
{
    if (a->lo == a->hi && b->lo == b->hi) {
        *lo = *hi = a->lo * b->lo;
        return;
    }
    double p1 = a->lo * b->lo, p2 = a->lo * b->hi, p3 = a->hi * b->lo, p4 = a->hi * b->hi;
    double l = p1, h = p1;
    l = p2 < l ? p2 : l;
    h = p2 > h ? p2 : h;
    l = p3 < l ? p3 : l;
    h = p3 > h ? p3 : h;
    l = p4 < l ? p4 : l;
    h = p4 > h ? p4 : h;
    if (p1 != p1 || p2 != p2 || p3 != p3 || p4 != p4) l = h = NAN;
    *lo = l;
    *hi = h;
}

/* Correctly rounded multiply: [RN(min products), RN(max products)]. */
static inline void nmo_fenc_mul(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *a, const nmo_fenc *b)
{
    uint32_t fl = a->flags | b->flags;
    if (nmo_fenc_is_nan(a) || nmo_fenc_is_nan(b)) { nmo_fenc_set_nan(r, fl); return; }
    double lo, hi;
    nmo_fe_mul_exact(&lo, &hi, a, b);
    r->lo = nmo_fe_round(c, c->cf, lo, NMO_RNE);
    r->hi = nmo_fe_round(c, c->cf, hi, NMO_RNE);
    r->flags = fl | c->force_unc;
    nmo_fe_fix(r);
}

/* Correctly rounded divide. A divisor interval holding 0 gives "anything". */
static inline void nmo_fenc_div(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *a, const nmo_fenc *b)
{
    uint32_t fl = a->flags | b->flags;
    if (nmo_fenc_is_nan(a) || nmo_fenc_is_nan(b)) { nmo_fenc_set_nan(r, fl); return; }
    if (b->lo <= 0 && b->hi >= 0) { nmo_fenc_set_all(r, fl); return; }
    double q1 = a->lo / b->lo, q2 = a->lo / b->hi, q3 = a->hi / b->lo, q4 = a->hi / b->hi;
    double l = fmin(fmin(q1, q2), fmin(q3, q4)), h = fmax(fmax(q1, q2), fmax(q3, q4));
    r->lo = nmo_fe_round(c, c->cf, l, NMO_RNE);
    r->hi = nmo_fe_round(c, c->cf, h, NMO_RNE);
    r->flags = fl | c->force_unc;
    if (q1 != q1 || q2 != q2 || q3 != q3 || q4 != q4) nmo_fenc_set_all(r, fl);
}

/* x / n for a positive integer n, as either x / n (one rounding) or x * RN(1/n) (two):
 * the hull of both. Every step is a correctly rounded binary64 op on lattice values. */
static inline void nmo_fenc_div_si(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *a, int64_t n)
{
    if (nmo_fenc_is_nan(a)) { nmo_fenc_set_nan(r, a->flags); return; }
    double dn = nmo_fe_round(c, c->cf, (double)n, NMO_RNE);
    double rcp = nmo_fe_round(c, c->cf, 1.0 / dn, NMO_RNE);
    double l1 = nmo_fe_round(c, c->cf, a->lo / dn, NMO_RNE);
    double h1 = nmo_fe_round(c, c->cf, a->hi / dn, NMO_RNE);
    double l2 = nmo_fe_round(c, c->cf, a->lo * rcp, NMO_RNE);
    double h2 = nmo_fe_round(c, c->cf, a->hi * rcp, NMO_RNE);
    r->lo = fmin(l1, l2);
    r->hi = fmax(h1, h2);
    r->flags = a->flags | c->force_unc;
    nmo_fe_fix(r);
}

/* a*b + c with or without FMA contraction: hull of RN(ab + c) (one rounding, inexact in
 * binary64: radius) and RN(RN(ab) + c) (two correctly rounded steps). */
static inline void nmo_fenc_fma(nmo_fctx *ctx, nmo_fenc *r, const nmo_fenc *a, const nmo_fenc *b,
                                const nmo_fenc *c)
{
    uint32_t fl = a->flags | b->flags | c->flags;
    if (nmo_fenc_is_nan(a) || nmo_fenc_is_nan(b) || nmo_fenc_is_nan(c)) {
        nmo_fenc_set_nan(r, fl);
        return;
    }
    double plo, phi;
    nmo_fe_mul_exact(&plo, &phi, a, b);
    if (plo != plo) { nmo_fenc_set_all(r, fl); return; }
    double v1 = plo + c->lo, v2 = phi + c->hi;
    double f_lo = nmo_fe_snap(ctx, ctx->cf, NMO_RNE, v1, fabs(v1) * 0x1p-53, &fl);
    double f_hi = nmo_fe_snap(ctx, ctx->cf, NMO_RNE, v2, fabs(v2) * 0x1p-53, &fl);
    double m_lo = nmo_fe_round(ctx, ctx->cf, nmo_fe_round(ctx, ctx->cf, plo, NMO_RNE) + c->lo, NMO_RNE);
    double m_hi = nmo_fe_round(ctx, ctx->cf, nmo_fe_round(ctx, ctx->cf, phi, NMO_RNE) + c->hi, NMO_RNE);
    r->lo = fmin(f_lo, m_lo);
    r->hi = fmax(f_hi, m_hi);
    r->flags = fl | ctx->force_unc;
    nmo_fe_fix(r);
}

/* The interval pushed out by n ulps of the compute format and snapped inward:
 * an ulp:n function result f satisfies |f - y| <= n ulp(y) (ulp in the binade of y), so
 * f >= RU(ylo - n ulp(ylo)) and f <= RD(yhi + n ulp(yhi)); n = 0 means correctly
 * rounded: RN(y). v is y computed with relative error <= 2^-51 (libm). The binade of
 * ylo must be certain too, so the radius check is applied to the ulp as well. */
static inline double nmo_fe_fn_side(nmo_fctx *c, double v, int exact, int n, int upper,
                                    uint32_t *fl)
{
    if (exact) { /* v is the function's exact value (exp(0), log(1), rsqrt(4^k)) */
        if (n == 0) return nmo_fe_round(c, c->cf, v, NMO_RNE);
        double u = nmo_fmt_ulp(c->cf, v);
        return nmo_fe_round(c, c->cf, upper ? v + n * u : v - n * u, upper ? NMO_RD : NMO_RU);
    }
    double e = fabs(v) * 0x1p-51;
    if (n == 0) return nmo_fe_snap(c, c->cf, NMO_RNE, v, e, fl);
    if (!isfinite(v)) return v;
    double u = nmo_fmt_ulp(c->cf, v);
    if (nmo_fmt_ulp(c->cf, v - 2 * e) != u || nmo_fmt_ulp(c->cf, v + 2 * e) != u) *fl |= NMO_EF_UNC;
    double w = upper ? v + n * u : v - n * u;
    return nmo_fe_snap(c, c->cf, upper ? NMO_RD : NMO_RU, w, e + fabs(w) * 0x1p-52, fl);
}

static inline double nmo_fe_fn_lo(nmo_fctx *c, double v, int exact, int n, uint32_t *fl)
{
    return nmo_fe_fn_side(c, v, exact, n, 0, fl);
}

static inline double nmo_fe_fn_hi(nmo_fctx *c, double v, int exact, int n, uint32_t *fl)
{
    return nmo_fe_fn_side(c, v, exact, n, 1, fl);
}

/* x = 4^k: 1/sqrt(x) = 2^-k exactly (binary64 computes it exactly too). */
static inline int nmo_fe_is_pow4(double x)
{
    int e;
    double m = frexp(x, &e);
    return m == 0.5 && ((e - 1) & 1) == 0;
}

/* sqrt, correctly rounded (IEEE; CUDA's default -prec-sqrt=true). */
static inline void nmo_fenc_sqrt(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *a)
{
    uint32_t fl = a->flags;
    if (nmo_fenc_is_nan(a) || a->hi < 0) { nmo_fenc_set_nan(r, fl); return; }
    if (a->lo < 0) { nmo_fenc_set_all(r, fl); return; }
    r->lo = nmo_fe_round(c, c->cf, sqrt(a->lo), NMO_RNE);
    r->hi = nmo_fe_round(c, c->cf, sqrt(a->hi), NMO_RNE);
    r->flags = fl | c->force_unc;
}

/* 1/sqrt(x) computed either by an rsqrt of plan accuracy (fn_ulps[RSQRT]) or as
 * RN(1/RN(sqrt x)): the hull of both. x <= 0 possible: "anything" (inf or NaN). */
static inline void nmo_fenc_rsqrt(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *a)
{
    uint32_t fl = a->flags;
    if (nmo_fenc_is_nan(a) || a->hi < 0) { nmo_fenc_set_nan(r, fl); return; }
    if (a->lo <= 0) { nmo_fenc_set_all(r, fl); return; }
    int n = c->plan.fn_ulps[NMO_FN_RSQRT];
    double lo1 = nmo_fe_fn_lo(c, 1.0 / sqrt(a->hi), nmo_fe_is_pow4(a->hi), n, &fl);
    double hi1 = nmo_fe_fn_hi(c, 1.0 / sqrt(a->lo), nmo_fe_is_pow4(a->lo), n, &fl);
    double slo = nmo_fe_round(c, c->cf, sqrt(a->lo), NMO_RNE);
    double shi = nmo_fe_round(c, c->cf, sqrt(a->hi), NMO_RNE);
    double lo2 = nmo_fe_round(c, c->cf, 1.0 / shi, NMO_RNE);
    double hi2 = nmo_fe_round(c, c->cf, 1.0 / slo, NMO_RNE);
    r->lo = fmin(lo1, lo2);
    r->hi = fmax(hi1, hi2);
    r->flags = fl | c->force_unc;
}

/* exp with plan accuracy fn_ulps[EXP] (CUDA expf: 2 ulp). Monotone; never negative. */
static inline void nmo_fenc_exp(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *a)
{
    uint32_t fl = a->flags;
    if (nmo_fenc_is_nan(a)) { nmo_fenc_set_nan(r, fl); return; }
    int n = c->plan.fn_ulps[NMO_FN_EXP];
    double vlo = exp(a->lo), vhi = a->hi == a->lo ? vlo : exp(a->hi);
    double tiny = c->minsub_c / 2;
    /* Deep underflow (exp(x) < half the smallest subnormal): a correctly rounded result
     * is 0 and an ulp:n one is in [0, n min_subnormal]; decided exactly, no radius. */
    double lo = vlo * (1 + 0x1p-50) < tiny ? 0 : nmo_fe_fn_lo(c, vlo, a->lo == 0, n, &fl);
    double hi = vhi * (1 + 0x1p-50) < tiny ? nmo_fe_round(c, c->cf, n * c->minsub_c, NMO_RD)
                                           : nmo_fe_fn_hi(c, vhi, a->hi == 0, n, &fl);
    r->lo = lo < 0 ? 0 : lo;
    r->hi = hi;
    r->flags = fl | c->force_unc;
}

/* log with plan accuracy fn_ulps[LOG] (CUDA logf: 1 ulp). */
static inline void nmo_fenc_log(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *a)
{
    uint32_t fl = a->flags;
    if (nmo_fenc_is_nan(a) || a->hi < 0) { nmo_fenc_set_nan(r, fl); return; }
    if (a->lo <= 0) { nmo_fenc_set_all(r, fl); return; }
    int n = c->plan.fn_ulps[NMO_FN_LOG];
    r->lo = nmo_fe_fn_lo(c, log(a->lo), a->lo == 1, n, &fl);
    r->hi = nmo_fe_fn_hi(c, log(a->hi), a->hi == 1, n, &fl);
    r->flags = fl | c->force_unc;
}

/* Hull of two enclosures of the same value (two legitimate ways to compute it). */
static inline void nmo_fenc_hull(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *a, const nmo_fenc *b)
{
    (void)c;
    uint32_t fl = a->flags | b->flags;
    if (nmo_fenc_is_nan(a) && nmo_fenc_is_nan(b)) { nmo_fenc_set_nan(r, fl); return; }
    if (nmo_fenc_is_nan(a)) { *r = *b; r->flags = fl; return; }
    if (nmo_fenc_is_nan(b)) { *r = *a; r->flags = fl; return; }
    r->lo = fmin(a->lo, b->lo);
    r->hi = fmax(a->hi, b->hi);
    r->flags = fl;
}

/* Increasing functions of plan accuracy (tanh, erf, sigmoid): [f(lo), f(hi)] pushed
 * out by fn_ulps of compute and snapped inward, as for exp. libm's tanh/erf are within
 * a few binary64 ulps (glibc's published maxima are 2-3 ulp): radius 2^-48 |v|. f is
 * exact at 0 (tanh, erf) and sigmoid(0) = 1/2. */
static inline double nmo_fe_sigmoid_d(double x) { return 1.0 / (1.0 + exp(-x)); }

static inline double nmo_fe_incr_side(nmo_fctx *c, double v, int exact, int n, int upper,
                                      uint32_t *fl)
{
    if (exact || !isfinite(v)) return nmo_fe_fn_side(c, v, 1, n, upper, fl);
    /* the radius the fn_side snap uses (2^-51) is for libm exp/log; widen it */
    double e = fabs(v) * 0x1p-48;
    if (n == 0) return nmo_fe_snap(c, c->cf, NMO_RNE, v, e, fl);
    double u = nmo_fmt_ulp(c->cf, v);
    if (nmo_fmt_ulp(c->cf, v - 2 * e) != u || nmo_fmt_ulp(c->cf, v + 2 * e) != u) *fl |= NMO_EF_UNC;
    double w = upper ? v + n * u : v - n * u;
    return nmo_fe_snap(c, c->cf, upper ? NMO_RD : NMO_RU, w, e + fabs(w) * 0x1p-52, fl);
}

static inline void nmo_fe_incr(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *a, nmo_fn fn)
{
    uint32_t fl = a->flags;
    if (nmo_fenc_is_nan(a)) { nmo_fenc_set_nan(r, fl); return; }
    int n = c->plan.fn_ulps[fn];
    double vl, vh;
    int el, eh;
    switch (fn) {
    case NMO_FN_TANH: vl = tanh(a->lo), vh = tanh(a->hi), el = a->lo == 0, eh = a->hi == 0; break;
    case NMO_FN_ERF: vl = erf(a->lo), vh = erf(a->hi), el = a->lo == 0, eh = a->hi == 0; break;
    default: vl = nmo_fe_sigmoid_d(a->lo), vh = nmo_fe_sigmoid_d(a->hi), el = a->lo == 0, eh = a->hi == 0;
    }
    double lo = nmo_fe_incr_side(c, vl, el, n, 0, &fl);
    double hi = nmo_fe_incr_side(c, vh, eh, n, 1, &fl);
    /* the ranges: tanh, erf in [-1, 1], sigmoid in [0, 1] */
    double bot = fn == NMO_FN_SIGMOID ? 0 : -1;
    r->lo = lo < bot ? bot : lo > 1 ? 1 : lo;
    r->hi = hi > 1 ? 1 : hi < bot ? bot : hi;
    r->flags = fl | c->force_unc;
}

static inline void nmo_fenc_tanh(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *a) { nmo_fe_incr(c, r, a, NMO_FN_TANH); }
static inline void nmo_fenc_erf(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *a) { nmo_fe_incr(c, r, a, NMO_FN_ERF); }
/* sigmoid: a library sigmoid of plan accuracy fn_ulps[SIGMOID], or the usual kernel
 * formula 1/(1 + exp(-x)) with exp of plan accuracy and two correctly rounded steps:
 * the hull of both (the formula can be ~6 ulp off the true value: it is not covered
 * by a small ulp figure, so it is modelled step by step). */
static inline void nmo_fenc_sigmoid(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *a)
{
    nmo_fenc s1, t, one;
    nmo_fe_incr(c, &s1, a, NMO_FN_SIGMOID);
    nmo_fenc_neg(c, &t, a);
    nmo_fenc_exp(c, &t, &t);
    nmo_fenc_const(c, &one, 1.0);
    nmo_fenc_add(c, &t, &one, &t);
    nmo_fenc_div(c, &t, &one, &t);
    nmo_fenc_hull(c, r, &s1, &t);
}

/* max/min are exact. fmaxf ignores a NaN operand while a compare-select may return it:
 * a NaN operand gives the other operand's interval plus "NaN possible". */
static inline void nmo_fenc_max(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *a, const nmo_fenc *b)
{
    (void)c;
    uint32_t fl = a->flags | b->flags;
    if (nmo_fenc_is_nan(a)) { *r = *b; r->flags |= fl | NMO_EF_NAN; return; }
    if (nmo_fenc_is_nan(b)) { *r = *a; r->flags |= fl | NMO_EF_NAN; return; }
    r->lo = fmax(a->lo, b->lo);
    r->hi = fmax(a->hi, b->hi);
    r->flags = fl;
}

static inline void nmo_fenc_min(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *a, const nmo_fenc *b)
{
    (void)c;
    uint32_t fl = a->flags | b->flags;
    if (nmo_fenc_is_nan(a)) { *r = *b; r->flags |= fl | NMO_EF_NAN; return; }
    if (nmo_fenc_is_nan(b)) { *r = *a; r->flags |= fl | NMO_EF_NAN; return; }
    r->lo = fmin(a->lo, b->lo);
    r->hi = fmin(a->hi, b->hi);
    r->flags = fl;
}

/* Product of three factors in any association, two roundings in compute.
 * fl(fl(ab)c) = ab(1+d1)c rounded, |d1| <= u, plus an absolute underflow term eta*|c|
 * (Higham, ASNA 2nd ed., §2.2 with gradual underflow): so the result is
 * RN(P (1 +- u) +- eta M), M = max factor magnitude, P the exact product interval. The
 * last rounding is the snap itself. binary64 error of the formula: radius 2^-50 |v|. */
static inline void nmo_fenc_mul3(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *a, const nmo_fenc *b,
                                 const nmo_fenc *d)
{
    uint32_t fl = a->flags | b->flags | d->flags;
    if (nmo_fenc_is_nan(a) || nmo_fenc_is_nan(b) || nmo_fenc_is_nan(d)) {
        nmo_fenc_set_nan(r, fl);
        return;
    }
    nmo_fenc ab;
    nmo_fe_mul_exact(&ab.lo, &ab.hi, a, b);
    double plo, phi;
    nmo_fe_mul_exact(&plo, &phi, &ab, d); /* endpoints rounded once in binary64 */
    if (plo != plo) { nmo_fenc_set_all(r, fl); return; }
    double m = fmax(fmax(fmax(fabs(a->lo), fabs(a->hi)), fmax(fabs(b->lo), fabs(b->hi))),
                    fmax(fabs(d->lo), fabs(d->hi)));
    double eta = c->etac * m;
    double vlo = plo - fabs(plo) * c->uc - eta;
    double vhi = phi + fabs(phi) * c->uc + eta;
    r->lo = nmo_fe_snap(c, c->cf, NMO_RNE, vlo, fabs(vlo) * 0x1p-50 + eta * 0x1p-50, &fl);
    r->hi = nmo_fe_snap(c, c->cf, NMO_RNE, vhi, fabs(vhi) * 0x1p-50 + eta * 0x1p-50, &fl);
    r->flags = fl;
    nmo_fe_fix(r);
}

/* Rounding point: store into format f (an intermediate `inter`, or the final store).
 * Monotone rounding maps [lo, hi] to [rnd(lo), rnd(hi)]; stochastic rounding to
 * [RD(lo), RU(hi)]. Exact on lattice values. */
static inline void nmo_fenc_round(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *a, nmo_fmt f,
                                  nmo_rnd rnd, int sr)
{
    if (nmo_fenc_is_nan(a)) { *r = *a; return; }
    double lo = nmo_fe_round(c, f, a->lo, sr ? NMO_RD : rnd);
    double hi = nmo_fe_round(c, f, a->hi, sr ? NMO_RU : rnd);
    r->flags = a->flags;
    r->lo = lo;
    r->hi = hi;
    nmo_fe_fix(r);
}

/* ---- reductions ---------------------------------------------------------------------- */

/* Close a reduction: the exact sum lies in [slo, shi] (binary64 values with error
 * <= err each), the model error is k * ua * A + k * eta with A = sum |terms| (a_d its
 * binary64 value, error <= err too). The result is an acc value, so the bound snaps
 * inward: RU(lower), RD(upper). */
static inline void nmo_fe_red_finish(nmo_fctx *c, nmo_fenc *r, double slo, double shi,
                                     double a_d, double k, double keta, double err,
                                     uint32_t fl)
{
    if (!(fabs(slo) <= 0x1p1000 && fabs(shi) <= 0x1p1000 && a_d <= 0x1p1000)) {
        nmo_fenc_set_all(r, fl);
        return;
    }
    double em = k * c->ua * a_d + keta;
    double e = err * (1 + k * c->ua) + em * 0x1p-51;
    double vlo = slo - em, vhi = shi + em;
    r->lo = nmo_fe_snap(c, c->af, NMO_RU, vlo, e, &fl);
    r->hi = nmo_fe_snap(c, c->af, NMO_RD, vhi, e, &fl);
    r->flags = fl;
    nmo_fe_fix(r);
    /* A partial sum is bounded by A (1 + k u): beyond the accumulator's range some order
     * overflows, so the result is not bounded. */
    double top = a_d * (1 + k * c->ua) + keta;
    if (fabs(top - c->maxfin_a) <= c->maxfin_a * 0x1p-30) fl |= NMO_EF_UNC;
    if (top >= c->maxfin_a) nmo_fenc_set_all(r, fl);
}

/* Sum of n enclosures in any order and tree shape, in acc:
 * |fl(sum) - sum| <= (n-1) u sum|x_i| (Jeannerod & Rump 2013, SIMAX 34(2), Thm 4.1:
 * any order, RN, no condition on n). Gradual underflow adds nothing (additions are
 * exact in the subnormal range); under ftz each addition may flush: + (n-1) min_normal. */
static inline void nmo_fenc_sum(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *x, int64_t n)
{
    double slo = 0, shi = 0, a = 0;
    uint32_t fl = 0;
    int mustnan = 0;
    for (int64_t i = 0; i < n; i++) {
        slo += x[i].lo;
        shi += x[i].hi;
        a += fmax(fabs(x[i].lo), fabs(x[i].hi));
        fl |= x[i].flags;
        mustnan |= x[i].lo != x[i].lo;
    }
    if (mustnan) { nmo_fenc_set_nan(r, fl); return; }
    double k = n > 1 ? (double)(n - 1) : 0;
    double keta = c->ftz ? k * c->etaa : 0;
    nmo_fe_red_finish(c, r, slo, shi, a, k, keta, (double)n * 0x1p-53 * a, fl);
}

/* Dot product of two point vectors (input values), any order, FMA or not, in acc:
 * |fl(x.y) - x.y| <= m u sum|x_i y_i| (Jeannerod & Rump 2013, Thm 4.2) plus n eta for
 * products that underflow, with m the number of terms whose factors are both nonzero:
 * a zero product passes every add, FMA or tree node exactly (RN(s + 0) = s,
 * fma(0, y, s) = s), so any evaluation over n terms is one over those m terms (ReLU
 * outputs, padding, one-hot vectors). Products of inputs are exact in binary64. */
static inline void nmo_fenc_dot_d(nmo_fctx *c, nmo_fenc *r, const double *x, const double *y,
                                  int64_t n)
{
    double s = 0, a = 0;
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
        double p = x[i] * y[i];
        s += p;
        a += fabs(p);
        m += x[i] != 0 && y[i] != 0;
    }
    if (s != s) {
        int nan_in = 0;
        for (int64_t i = 0; i < n; i++) nan_in |= (x[i] != x[i]) | (y[i] != y[i]);
        if (nan_in) { nmo_fenc_set_nan(r, 0); return; }
        nmo_fenc_set_all(r, 0);
        return;
    }
    /* underflow: each product may lose eta (half the subnormal spacing); under ftz the
     * products and the partial sums may each flush: 2n min_normal. */
    double keta = (c->ftz ? 2.0 : 1.0) * (double)n * c->etaa;
    nmo_fe_red_finish(c, r, s, s, a, (double)m, keta, (double)n * 0x1p-53 * a, 0);
}

/* Sum of squares of a point vector: the dot product of x with itself. */
static inline void nmo_fenc_sumsq_d(nmo_fctx *c, nmo_fenc *r, const double *x, int64_t n)
{
    nmo_fenc_dot_d(c, r, x, x, n);
}

/* Max of n enclosures (exact). */
static inline void nmo_fenc_max_v(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *x, int64_t n)
{
    *r = x[0];
    for (int64_t i = 1; i < n; i++) nmo_fenc_max(c, r, r, &x[i]);
}

/* Element (i, j) of the matrix product A[M,K] * B[K,N] (inputs as stored): a dot
 * product in acc (nmo_fenc_dot_d's model). The first call computes A*B, |A|*|B| and the
 * nonzero-term counts nz(A)*nz(B) for the whole matrices in binary64 (BLAS dgemm when built with it: any order, error
 * <= K 2^-53 |A||B| each, Jeannerod & Rump 2013 in binary64) and keeps them in ctx. */
void nmo_fenc_gemm_elem(nmo_fctx *c, nmo_fenc *r, const nmo_tensor *A, const nmo_tensor *B,
                        int64_t i, int64_t j);

static inline void nmo_fenc_export(nmo_fctx *c, nmo_fenc *dst, const nmo_fenc *src)
{
    (void)c;
    *dst = *src;
}

/* ---- linear algebra and attention (numoracle issue 3) ------------------------------- */

/* Dot product of an enclosure vector x (computed values: softmax weights, dS) with a
 * point vector y (inputs), any order and tree, FMA or not, in acc. Model error
 * k u sum_i max|x_i y_i| + (ftz ? 2 : 1) max(k, n) eta: with k = n this is Jeannerod &
 * Rump 2013, Thm 4.2 (n u sum|x y|, for every point of the x intervals, so for the
 * interval too); a caller that folds further roundings into the sum (rescaling
 * multiplies of online softmax) passes k >= gamma_h / u, gamma_h = h u / (1 - h u) for h
 * roundings on any term's path (Higham, ASNA 2nd ed., Lemma 3.1). Terms that are exactly
 * zero (x = [0,0] or y = 0) pass every operation exactly: k is reduced by their count
 * (for k = gamma_h/u that is still >= gamma_{h - zeros}/u). The exact products of
 * lattice values (p <= 26) are exact in binary64. A NaN operand: NaN; an infinite
 * endpoint or input: anything. */
static inline void nmo_fenc_dot_ed(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *x, const double *y,
                                   int64_t n, double k)
{
    uint32_t fl = 0;
    int nan = 0, inf = 0;
    for (int64_t i = 0; i < n; i++) {
        fl |= x[i].flags;
        nan |= nmo_fenc_is_nan(&x[i]) | (y[i] != y[i]);
        inf |= isinf(x[i].lo) | isinf(x[i].hi) | isinf(y[i]);
    }
    if (nan) { nmo_fenc_set_nan(r, fl); return; }
    if (inf) { nmo_fenc_set_all(r, fl); return; }
    double slo = 0, shi = 0, a = 0;
    int64_t z = 0; /* exactly zero terms: dropped, k reduced by their count */
    for (int64_t i = 0; i < n; i++) {
        double p1 = x[i].lo * y[i], p2 = x[i].hi * y[i];
        slo += fmin(p1, p2);
        shi += fmax(p1, p2);
        a += fmax(fabs(p1), fabs(p2));
        z += (x[i].lo == 0 && x[i].hi == 0) || y[i] == 0;
    }
    double keta = (c->ftz ? 2.0 : 1.0) * fmax(k, (double)n) * c->etaa;
    nmo_fe_red_finish(c, r, slo, shi, a, fmax(k - (double)z, 0), keta, (double)n * 0x1p-53 * a, fl);
}

/* A model quantity (not a kernel value) known to lie within relative rel and absolute
 * abs of a: [lo - rel|lo| - abs, hi + rel|hi| + abs], snapped OUTWARD to the compute
 * lattice (RD, RU). The caller derives rel/abs from a bound it states (e.g. the extra
 * roundings of online softmax). Infinite endpoints stay, and so does an endpoint when the
 * widening rel |x| + abs is exactly 0. binary64 radius 2^-50: choose rel/abs that do not put endpoints on lattice
 * points (exact multiples of u do), or the fast engine escalates. */
static inline void nmo_fenc_widen(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *a, double rel, double abs)
{
    uint32_t fl = a->flags;
    if (nmo_fenc_is_nan(a)) { *r = *a; return; }
    double lo = a->lo, hi = a->hi;
    if (isfinite(lo)) {
        /* a widening d > 0 smaller than the lattice step below lo snaps to that neighbour
         * exactly (binary64 cannot resolve lo - d itself when d << ulp(lo)) */
        double d = rel * fabs(lo) + abs, nb = c->ftz ? NAN : nmo_fmt_next_down(c->cf, lo);
        if (d == 0) { /* rel |lo| = 0 exactly: lo stays */
        } else if (isfinite(nb) && d * (1 + 0x1p-50) < lo - nb) lo = nb;
        else lo = nmo_fe_snap(c, c->cf, NMO_RD, lo - d, (fabs(lo) * (1 + rel) + abs) * 0x1p-50, &fl);
    }
    if (isfinite(hi)) {
        double d = rel * fabs(hi) + abs, nb = c->ftz ? NAN : nmo_fmt_next_up(c->cf, hi);
        if (d == 0) {
        } else if (isfinite(nb) && d * (1 + 0x1p-50) < nb - hi) hi = nb;
        else hi = nmo_fe_snap(c, c->cf, NMO_RU, hi + d, (fabs(hi) * (1 + rel) + abs) * 0x1p-50, &fl);
    }
    r->lo = lo;
    r->hi = hi;
    r->flags = fl | c->force_unc;
}

/* Element (i, j) of op(X) op(Y), op = transpose when tx / ty: X is [m,kk] (tx = 0) or
 * [kk,m] (tx = 1), Y is [kk,n] (ty = 0) or [n,kk] (ty = 1); a dot product in acc over kk
 * (nmo_fenc_dot_d's model). Batched like nmo_fenc_gemm_elem: the first call for a given
 * (X, tx, Y, ty) computes op(X)op(Y) and |op(X)||op(Y)| in binary64 (BLAS dgemm with
 * transpose flags; error <= kk 2^-53 |X||Y|, Jeannerod & Rump 2013 in binary64); a few
 * products are cached at once (a backward pass needs two or three). */
void nmo_fenc_gemm_elem_t(nmo_fctx *c, nmo_fenc *r, const nmo_tensor *X, int tx,
                          const nmo_tensor *Y, int ty, int64_t i, int64_t j);

#ifdef __cplusplus
}
#endif
#endif
