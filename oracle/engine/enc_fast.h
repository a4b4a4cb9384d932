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
#include <string.h>
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
    void (*prep_free)(void *);  /* its destructor; also tells what kind of data it is */
    int prep_borrowed;          /* prep belongs to another context (a checker worker
                                   sharing the first one's): read it, never free or
                                   modify it */
    struct nmo_cctx *cert;      /* made on first use by nmo_fctx_cert (term escalation) */
    int64_t n_term_esc;         /* reduction terms recomputed by the certified engine */
    int64_t n_sum_cert;         /* sums of fast terms finished by the certified engine */
    int gemm_partials;          /* nmo_fmt split-K partials are stored in, -1: none
                                   (nmo_fenc_gemm_partials; matrix products only) */
    int term_esc_all;           /* testing: recompute every term (nmo_check_opts) */
    int64_t geo_over;           /* the longest reduction beyond the plan's geometry
                                   (nmo_plan_red_k: INFINITY; nmo_check: an error), 0 */
} nmo_fctx;

nmo_status nmo_fctx_init(nmo_fctx *c, const nmo_plan *p, nmo_err *err);
void nmo_fctx_clear(nmo_fctx *c);
/* A certified context on the same plan, made on first use and owned by c (NULL when it
 * cannot be made: the caller then leaves the term flagged and the unit escalates). */
struct nmo_cctx *nmo_fctx_cert(nmo_fctx *c);
/* The certified engine's sharpened sum of these (finite) fast enclosures, exported
 * (oracle/engine/enc_cert.c); -1 when an endpoint is not finite. */
int nmo_cenc_sum_sharp_fenc(struct nmo_cctx *c, nmo_fenc *r, const nmo_fenc *x, int64_t n);

/* Term escalation. A unit that reduces many terms (a scalar loss over a whole tensor)
 * escalates as a whole when any one term's snap is uncertain; a snap is ambiguous with
 * probability about 2^-25 (radius 2^-50 relative against an fp32 ulp), so at 16M terms
 * nearly every such unit escalated, and the certified engine took 500 s for one
 * 4096x4096 kl_div. Instead a reference recomputes the one flagged term with the
 * certified engine (the same term function, compiled for it): that gives the lattice
 * values the certified-only evaluation gives the term, so the reduction sees the same
 * terms either way and "fast + escalation == certified" (DESIGN §5) still holds. Returns
 * the certified context when the term with these flags should be recomputed (and counts
 * the recomputation in n_term_esc), else NULL. */
static inline struct nmo_cctx *nmo_fctx_term_cert(nmo_fctx *c, uint32_t flags)
{
    if (!((flags & NMO_EF_UNC) || c->term_esc_all) || c->force_unc) return NULL;
    struct nmo_cctx *cc = nmo_fctx_cert(c);
    c->n_term_esc += cc != NULL;
    return cc;
}
double *nmo_fctx_dvec(nmo_fctx *c, int slot, int64_t n);
nmo_fenc *nmo_fctx_evec(nmo_fctx *c, int slot, int64_t n);

/* ---- rounding into a lattice ------------------------------------------------------ */

/* One fp32 step up or down from a float (bit increment; zeros and infinities handled). */
static inline double nmo_fe_f32_step(float y, int up)
{
    if (y == 0) return up ? 0x1p-149 : -0x1p-149;
    uint32_t u;
    memcpy(&u, &y, 4);
    if ((u >> 31) ^ (uint32_t)up) u++; else u--;
    float z;
    memcpy(&z, &u, 4);
    return z;
}

static inline double nmo_fe_round(const nmo_fctx *c, nmo_fmt f, double x, nmo_rnd r)
{
    if (f == NMO_FP32 && c->fp32rn) {
        float y = (float)x; /* RN under the default mode */
        double d = y;
        if (r == NMO_RNE || d == x || x != x) return d;
        if (r == NMO_RD || (r == NMO_RZ && x > 0)) return d > x ? nmo_fe_f32_step(y, 0) : d;
        return d < x ? nmo_fe_f32_step(y, 1) : d; /* RU, or RZ of a negative */
    }
    if (f == NMO_FP64 && !c->ftz) return x; /* x is already a double: exact */
    return nmo_fmt_round(f, x, r, c->ftz);
}

/* ulp of v in format f (the spacing in v's binade), inline for fp32. */
static inline double nmo_fe_ulp(const nmo_fctx *c, nmo_fmt f, double v)
{
    (void)c;
    if (f == NMO_FP32 && isfinite(v)) {
        uint64_t b;
        memcpy(&b, &v, 8);
        int e = (int)((b >> 52) & 0x7ff) - 1023; /* binade of |v| (subnormal doubles: tiny) */
        if (e < -126) return 0x1p-149;
        if (e > 127) return nmo_fmt_ulp(f, v);
        uint64_t ub = (uint64_t)(e - 23 + 1023) << 52;
        double u;
        memcpy(&u, &ub, 8);
        return u;
    }
    return nmo_fmt_ulp(f, v);
}

/* The certainty test of nmo_fe_snap for RN into fp32 (fp32rn plans), decided from
 * y = RN32(v) alone: *res = y, and 1 when RN32 is y on all of [v - ee, v + ee]. With
 * h = half the fp32 spacing next to y (the smaller side: below a power of two the spacing
 * is half an ulp), |d - v| + ee < h means every x in the interval is nearer to y than to
 * either neighbour (no midpoint between), so RN32(x) = y. d - v is exact (Sterbenz: y is
 * v's nearest fp32 value); the computed sum can only round up to h if the exact one
 * reaches it. A subnormal, zero or non-finite y fails the test (h = 0, or excluded).
 * Branch-free, so that row loops vectorize. */
#define NMO_FE_RN32_TRY_BODY                                                               \
    float y = (float)v;                                                                    \
    double d = y;                                                                          \
    uint32_t ub, eb;                                                                       \
    memcpy(&ub, &y, 4);                                                                    \
    eb = ub & 0x7f800000u;                                                                 \
    float P; /* 2^e, the power of two at the bottom of y's binade (0 for subnormals) */    \
    memcpy(&P, &eb, 4);                                                                    \
    double h = (double)P * 0x1p-25 * (double)(1 + ((ub & 0x7fffffu) != 0));                \
    *res = d;                                                                              \
    return (eb != 0x7f800000u) & (fabs(d - v) + ee < h);
static inline int nmo_fe_rn32_try(double v, double ee, double *res) { NMO_FE_RN32_TRY_BODY }

/* Snap a value known only to lie in [v - e, v + e]. The margin covers binary64 rounding
 * of v +- e and the certified engine's own (128-bit) error. */
static inline double nmo_fe_snap(const nmo_fctx *c, nmo_fmt f, nmo_rnd r, double v, double e,
                                 uint32_t *fl)
{
    double ee = e + fabs(v) * 0x1p-50 + 0x1p-1060;
    if (f == NMO_FP32 && c->fp32rn) {
        /* Fast paths; when their test fails the general check below runs, so the result
         * and flags are those of the general code whenever that one is certain.
         *  - RNE: nmo_fe_rn32_try;
         *  - directed: y = RN32(v) finite and nonzero, |d - v| > ee (exact, Sterbenz):
         *    y is the fp32 value nearest to v, so none lies in [v - ee, v + ee] and
         *    RD/RU/RZ are constant there: y or its neighbour on the side of v. */
        double d;
        if (r == NMO_RNE) {
            if (nmo_fe_rn32_try(v, ee, &d)) { *fl |= c->force_unc; return d; }
        } else {
            float y = (float)v;
            d = y;
            if (y != 0 && fabsf(y) <= 0x1.fffffep127f && fabs(d - v) > ee) {
                int up = r == NMO_RU || (r == NMO_RZ && v < 0);
                *fl |= c->force_unc;
                if (up) return d > v ? d : nmo_fe_f32_step(y, 1);
                return d < v ? d : nmo_fe_f32_step(y, 0);
            }
        }
    }
    double a = nmo_fe_round(c, f, v, r);
    if (nmo_fe_round(c, f, v - ee, r) != a || nmo_fe_round(c, f, v + ee, r) != a)
        *fl |= NMO_EF_UNC;
    *fl |= c->force_unc;
    return a;
}

/* ---- error scale -------------------------------------------------------------------
 * Every enclosure carries mag >= 0, the element's error scale (README "What a verdict
 * means"; the checker accepts a reachable set as informative when its width is at most
 * max_ulps ulps of `out` at this magnitude). It is the magnitude of what the value's
 * computation combined, carried to the value's units through the later operations by
 * first-order propagation (a rounding of relative size u anywhere upstream moves the
 * value by at most about u * mag):
 *   an input or constant v        |v|
 *   a +- b, a sum of terms        the sum of the operands' mags (a dot product of inputs:
 *                                 sum |x y|, the design's "magnitude combined")
 *   a * b                         max(mag(a) |b|, |a| mag(b))        (|.|: enclosure max)
 *   a / b                         max(mag(a), |a/b| mag(b)) / min|b|
 *   f(a)                          max(|f(a)|, L mag(a)), L = sup |f'| over a's enclosure
 *   a store, max, min, hull       the operands' largest mag
 * +inf means "no scale": a domain edge, where first-order propagation says nothing (a
 * divisor, or the argument of sqrt, rsqrt or log, known only to within a factor of 2;
 * exp of an argument wider than 1; an unbounded enclosure). The checker then counts
 * values only.
 * The scale is not a bound (soundness never rests on it: a FAIL does not depend on it);
 * it must be the same in both engines so that "fast + escalation == certified" holds for
 * the verdicts too. Both engines therefore evaluate these binary64 formulas on the same
 * lattice endpoints and operand mags, term by term in index order. The one sum the
 * engines form differently, sum |x y| of input points (BLAS or sequential binary64 in the
 * fast engine, MPFR in the certified one), keeps only its binade, which is exact in both
 * (nmo_mag_pow2): the ulp of the scale, all the checker uses, depends on nothing else. */

/* max |v| over an enclosure's endpoints (NaN endpoints: 0) */
static inline double nmo_mag_abs(double lo, double hi)
{
    double l = fabs(lo), h = fabs(hi);
    return l > h ? l : (h == h ? h : 0);
}

/* Two scales are the same (NaN equal to NaN: a NaN result's scale is never read). */
static inline int nmo_mag_same(double a, double b) { return a == b || (a != a && b != b); }

/* m * a where an exactly zero factor wins (an unbounded scale times an exact 0 is 0) */
static inline double nmo_mag_prod(double m, double a) { return m == 0 || a == 0 ? 0 : m * a; }

static inline double nmo_mag_max(double a, double b) { return a > b ? a : (b == b ? b : a); }

/* a * b: max(mag(a) |b|, |a| mag(b)) */
static inline double nmo_mag_mul(double ma, double a, double mb, double b)
{
    return nmo_mag_max(nmo_mag_prod(ma, b), nmo_mag_prod(a, mb));
}

/* a / b for a divisor enclosure [bl, bh] not holding 0; q = |a/b| max */
static inline double nmo_mag_div(double ma, double q, double mb, double bl, double bh)
{
    double bmin = fmin(fabs(bl), fabs(bh)), bmax = fmax(fabs(bl), fabs(bh));
    if (!(bmax <= 2 * bmin)) return INFINITY; /* a domain edge */
    double num = nmo_mag_max(ma, nmo_mag_prod(q, mb));
    return num == 0 ? 0 : num / bmin;
}

/* f(a) with |f'| <= L over a's enclosure: max(|f(a)|, L mag(a)) */
static inline double nmo_mag_fn(double fa, double L, double ma)
{
    return nmo_mag_max(fa, nmo_mag_prod(L, ma));
}

/* The argument [lo, hi] (lo > 0) of sqrt, rsqrt or log known only to within a factor of
 * 2: the derivative varies too much over it for first-order propagation to mean
 * anything (a domain edge). An exact argument (mag 0) has nothing to propagate. */
static inline int nmo_mag_edge(double lo, double hi, double ma)
{
    return ma != 0 && !(hi <= 2 * lo);
}

/* The largest power of two <= s (s > 0 finite), 0 for s = 0, s itself otherwise. */
static inline double nmo_mag_pow2(double s)
{
    if (!(s > 0) || !isfinite(s)) return s;
    int e;
    (void)frexp(s, &e);
    return ldexp(1.0, e - 1);
}

/* The binade of a binary64 estimate s of a non-negative sum, known to within relative
 * error rel: nmo_mag_pow2 of the exact sum, or -1 when s is too near a power of two for
 * the estimate to tell (the caller flags the element: the certified engine decides). */
static inline double nmo_mag_pow2_of(double s, double rel)
{
    if (!(s > 0) || !isfinite(s)) return s;
    double a = nmo_mag_pow2(s * (1 - rel)), b = nmo_mag_pow2(s * (1 + rel));
    return a == b ? a : -1;
}

static inline void nmo_fenc_set_nan(nmo_fenc *r, uint32_t fl)
{
    r->lo = r->hi = NAN;
    r->flags = fl | NMO_EF_NAN;
    r->mag = 0;
}

static inline void nmo_fenc_set_all(nmo_fenc *r, uint32_t fl)
{
    r->lo = -INFINITY;
    r->hi = INFINITY;
    r->flags = fl | NMO_EF_NAN;
    r->mag = INFINITY;
}

static inline int nmo_fenc_is_nan(const nmo_fenc *a) { return a->lo != a->lo; }

/* Finish a result: NaN endpoints (inf - inf, 0 * inf) become "anything". */
static inline void nmo_fe_fix(nmo_fenc *r)
{
    if (r->lo != r->lo || r->hi != r->hi) nmo_fenc_set_all(r, r->flags);
}

/* An unbounded result has no scale (both engines test the same endpoints). */
static inline double nmo_mag_fin(const nmo_fenc *r, double m)
{
    return isfinite(r->lo) && isfinite(r->hi) ? m : INFINITY;
}

/* ---- elementary primitives ---------------------------------------------------------- */

static inline void nmo_fenc_init(nmo_fctx *c, nmo_fenc *x) { (void)c; (void)x; }
static inline void nmo_fenc_clear(nmo_fctx *c, nmo_fenc *x) { (void)c; (void)x; }

static inline void nmo_fenc_set(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *a)
{
    (void)c;
    *r = *a;
}

/* An enclosure exported earlier (nmo_check's table of recomputed statistics): its
 * endpoints are lattice values and are taken as they are (no DAZ: a result, not an
 * input). Exact: no bound to state. */
static inline void nmo_fenc_set_fenc(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *a)
{
    *r = *a;
    r->flags |= c->force_unc;
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
    r->mag = isfinite(v) ? fabs(v) : INFINITY;
    if (c->ftz && v != 0 && fabs(v) < c->minnorm_c) {
        if (v < 0) r->hi = 0; else r->lo = 0;
    }
}

/* A real constant the kernel holds in compute (eps, 1/N): rounded RNE once. */
static inline void nmo_fenc_const(nmo_fctx *c, nmo_fenc *r, double v)
{
    r->lo = r->hi = nmo_fe_round(c, c->cf, v, NMO_RNE);
    r->flags = 0;
    r->mag = isfinite(r->lo) ? fabs(r->lo) : INFINITY;
}

/* Correctly rounded add: [RN(a.lo + b.lo), RN(a.hi + b.hi)]; binary64 then RN is
 * innocuous double rounding (Figueroa), so no radius. */
static inline void nmo_fenc_add(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *a, const nmo_fenc *b)
{
    uint32_t fl = a->flags | b->flags;
    if (nmo_fenc_is_nan(a) || nmo_fenc_is_nan(b)) { nmo_fenc_set_nan(r, fl); return; }
    double m = a->mag + b->mag;
    r->lo = nmo_fe_round(c, c->cf, a->lo + b->lo, NMO_RNE);
    r->hi = nmo_fe_round(c, c->cf, a->hi + b->hi, NMO_RNE);
    r->flags = fl | c->force_unc;
    r->mag = nmo_mag_fin(r, m);
    nmo_fe_fix(r);
}

static inline void nmo_fenc_neg(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *a)
{
    (void)c;
    double lo = -a->hi, hi = -a->lo;
    r->lo = lo;
    r->hi = hi;
    r->flags = a->flags;
    r->mag = a->mag;
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

/* inf * 0 inside the operand intervals (an infinite endpoint on one side, 0 in the
 * other interval, not necessarily at an endpoint): NaN is a possible product, which the
 * endpoint products alone do not show ([inf, inf] * [-1, 1] = [-inf, inf]). */
static inline int nmo_fe_mul_nan_possible(const nmo_fenc *a, const nmo_fenc *b)
{
    return ((isinf(a->lo) || isinf(a->hi)) && b->lo <= 0 && b->hi >= 0) ||
           ((isinf(b->lo) || isinf(b->hi)) && a->lo <= 0 && a->hi >= 0);
}

/* Correctly rounded multiply: [RN(min products), RN(max products)]. */
static inline void nmo_fenc_mul(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *a, const nmo_fenc *b)
{
    uint32_t fl = a->flags | b->flags;
    if (nmo_fenc_is_nan(a) || nmo_fenc_is_nan(b)) { nmo_fenc_set_nan(r, fl); return; }
    if (nmo_fe_mul_nan_possible(a, b)) fl |= NMO_EF_NAN;
    double lo, hi;
    nmo_fe_mul_exact(&lo, &hi, a, b);
    double m = nmo_mag_mul(a->mag, nmo_mag_abs(a->lo, a->hi), b->mag, nmo_mag_abs(b->lo, b->hi));
    r->lo = nmo_fe_round(c, c->cf, lo, NMO_RNE);
    r->hi = nmo_fe_round(c, c->cf, hi, NMO_RNE);
    r->flags = fl | c->force_unc;
    r->mag = nmo_mag_fin(r, m);
    nmo_fe_fix(r);
}

/* The accuracy of a division, fn_ulps[DIV], or for a reciprocal (numerator exactly 1:
 * 1/x may be a '/' or an rcp) the larger of DIV and RCP. */
static inline int nmo_fe_div_ulps(const nmo_plan *p, int num_is_one)
{
    int d = p->fn_ulps[NMO_FN_DIV], r = p->fn_ulps[NMO_FN_RCP];
    return num_is_one && r > d ? r : d;
}

/* fn=fast's __fdividef returns 0 for divisors of magnitude in (2^126, 2^128) (CUDA
 * Programming Guide, intrinsic functions): no ulp bound there. */
static inline int nmo_fe_div_unbounded(const nmo_plan *p, double bmax)
{
    return strcmp(p->fn_name, "fast") == 0 && bmax > 0x1p126;
}

static inline void nmo_fe_div_apx(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *a, const nmo_fenc *b, int n,
                                  uint32_t fl);

/* Divide, correctly rounded, or with the plan's n-ulp division (nmo_fe_div_ulps). A
 * divisor interval holding 0 gives "anything". */
static inline void nmo_fenc_div(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *a, const nmo_fenc *b)
{
    uint32_t fl = a->flags | b->flags;
    if (nmo_fenc_is_nan(a) || nmo_fenc_is_nan(b)) { nmo_fenc_set_nan(r, fl); return; }
    if (b->lo <= 0 && b->hi >= 0) { nmo_fenc_set_all(r, fl); return; }
    int n = nmo_fe_div_ulps(&c->plan, a->lo == 1 && a->hi == 1);
    if (n) { nmo_fe_div_apx(c, r, a, b, n, fl); return; }
    double q1 = a->lo / b->lo, q2 = a->lo / b->hi, q3 = a->hi / b->lo, q4 = a->hi / b->hi;
    double l = fmin(fmin(q1, q2), fmin(q3, q4)), h = fmax(fmax(q1, q2), fmax(q3, q4));
    double ma = a->mag, mb = b->mag, bl = b->lo, bh = b->hi;
    r->lo = nmo_fe_round(c, c->cf, l, NMO_RNE);
    r->hi = nmo_fe_round(c, c->cf, h, NMO_RNE);
    r->flags = fl | c->force_unc;
    r->mag = nmo_mag_fin(r, nmo_mag_div(ma, nmo_mag_abs(r->lo, r->hi), mb, bl, bh));
    if (q1 != q1 || q2 != q2 || q3 != q3 || q4 != q4) nmo_fenc_set_all(r, fl);
}

/* x / n for a positive integer n, as either x / n (one rounding) or x * RN(1/n) (two):
 * the hull of both. Every step is a correctly rounded binary64 op on lattice values. */
static inline void nmo_fe_div_si_apx(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *a, double dn, int nd,
                                     int nr, double m);

static inline void nmo_fenc_div_si(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *a, int64_t n)
{
    if (nmo_fenc_is_nan(a)) { nmo_fenc_set_nan(r, a->flags); return; }
    double dn = nmo_fe_round(c, c->cf, (double)n, NMO_RNE);
    int nd = nmo_fe_div_ulps(&c->plan, 0), nr = nmo_fe_div_ulps(&c->plan, 1);
    if (nd || nr) { nmo_fe_div_si_apx(c, r, a, dn, nd, nr, a->mag / (double)n); return; }
    double rcp = nmo_fe_round(c, c->cf, 1.0 / dn, NMO_RNE);
    double l1 = nmo_fe_round(c, c->cf, a->lo / dn, NMO_RNE);
    double h1 = nmo_fe_round(c, c->cf, a->hi / dn, NMO_RNE);
    double l2 = nmo_fe_round(c, c->cf, a->lo * rcp, NMO_RNE);
    double h2 = nmo_fe_round(c, c->cf, a->hi * rcp, NMO_RNE);
    double m = a->mag / (double)n;
    r->lo = fmin(l1, l2);
    r->hi = fmax(h1, h2);
    r->flags = a->flags | c->force_unc;
    r->mag = nmo_mag_fin(r, m);
    nmo_fe_fix(r);
}

/* Knuth's TwoSum: for s = RN64(a + b) (finite), a + b = s + err exactly. */
static inline double nmo_fe_two_sum_err(double a, double b, double s)
{
    double bb = s - a;
    return (a - (s - bb)) + (b - bb);
}

/* RN into fp32 (fp32rn plans) of the exact value v + err, |err| <= ulp64(v)/2: RN(v)
 * unless v is an fp32 midpoint, where the sign of err decides (err = 0: the tie rule).
 * Overflow (a non-finite RN) is left to the snap. */
static inline double nmo_fe_rn_pair(nmo_fctx *c, double v, double err, uint32_t *fl)
{
    double a = nmo_fe_round(c, NMO_FP32, v, NMO_RNE);
    if (!isfinite(a)) return nmo_fe_snap(c, NMO_FP32, NMO_RNE, v, fabs(v) * 0x1p-53, fl);
    if (err == 0 || a == v) return a;
    double o = nmo_fe_round(c, NMO_FP32, v, a > v ? NMO_RD : NMO_RU);
    if (!isfinite(o) || a - v != v - o) return a; /* not a midpoint */
    return err > 0 ? fmax(a, o) : fmin(a, o);
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
    if (nmo_fe_mul_nan_possible(a, b)) fl |= NMO_EF_NAN;
    double plo, phi;
    nmo_fe_mul_exact(&plo, &phi, a, b);
    if (plo != plo) { nmo_fenc_set_all(r, fl); return; }
    double v1 = plo + c->lo, v2 = phi + c->hi;
    /* The products of lattice values are exact, so v + TwoSum error is the exact fused
     * value and (fp32 plans) its RN is decided exactly, ties included: no radius. An
     * infinite operand gives +-inf or NaN, exactly as the certified engine does. */
    double f_lo = !isfinite(v1) ? v1
                  : ctx->fp32rn && ctx->cf == NMO_FP32 ? nmo_fe_rn_pair(ctx, v1, nmo_fe_two_sum_err(plo, c->lo, v1), &fl)
                  : nmo_fe_two_sum_err(plo, c->lo, v1) == 0
                      ? nmo_fe_round(ctx, ctx->cf, v1, NMO_RNE)
                      : nmo_fe_snap(ctx, ctx->cf, NMO_RNE, v1, fabs(v1) * 0x1p-53, &fl);
    double f_hi = !isfinite(v2) ? v2
                  : ctx->fp32rn && ctx->cf == NMO_FP32 ? nmo_fe_rn_pair(ctx, v2, nmo_fe_two_sum_err(phi, c->hi, v2), &fl)
                  : nmo_fe_two_sum_err(phi, c->hi, v2) == 0
                      ? nmo_fe_round(ctx, ctx->cf, v2, NMO_RNE)
                      : nmo_fe_snap(ctx, ctx->cf, NMO_RNE, v2, fabs(v2) * 0x1p-53, &fl);
    double m_lo = nmo_fe_round(ctx, ctx->cf, nmo_fe_round(ctx, ctx->cf, plo, NMO_RNE) + c->lo, NMO_RNE);
    double m_hi = nmo_fe_round(ctx, ctx->cf, nmo_fe_round(ctx, ctx->cf, phi, NMO_RNE) + c->hi, NMO_RNE);
    double m = nmo_mag_mul(a->mag, nmo_mag_abs(a->lo, a->hi), b->mag, nmo_mag_abs(b->lo, b->hi)) + c->mag;
    r->lo = fmin(f_lo, m_lo);
    r->hi = fmax(f_hi, m_hi);
    r->flags = fl | ctx->force_unc;
    r->mag = nmo_mag_fin(r, m);
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
        double u = nmo_fe_ulp(c, c->cf, v);
        return nmo_fe_round(c, c->cf, upper ? v + n * u : v - n * u, upper ? NMO_RD : NMO_RU);
    }
    double e = fabs(v) * 0x1p-51;
    if (n == 0) return nmo_fe_snap(c, c->cf, NMO_RNE, v, e, fl);
    if (!isfinite(v)) return v;
    double u = nmo_fe_ulp(c, c->cf, v);
    if (nmo_fe_ulp(c, c->cf, v - 2 * e) != u || nmo_fe_ulp(c, c->cf, v + 2 * e) != u) *fl |= NMO_EF_UNC;
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

/* ---- n-ulp results over an enclosure -----------------------------------------------
 * An n-ulp result f of the exact value y has |f - y| <= n ulp(y), ulp(y) the spacing in
 * y's binade (at a power of two the larger one, above it). Over exact values in
 * [ylo, yhi] the least f is not always at ylo: y - n ulp(y) drops where y enters the
 * binade of a power of two P (the ulp doubles), so for ylo > 0 the lower bound is
 * min(side(ylo), RU(P - n ulp(P))), P the first power of two above ylo, whenever
 * P <= yhi; mirrored for the upper bound of a negative range. nmo_fe_apx_fix applies
 * that to sides lo, hi made by nmo_fe_fn_side from estimates vlo, vhi (exl, exh: the
 * estimate is the exact value); an estimate too near P to tell flags the element.
 * ce_apx_fix (enc_cert.c) is the certified engine's copy. */
static inline double nmo_fe_pow2_above(double v)
{
    int e;
    (void)frexp(v, &e);
    return ldexp(1.0, e);
}

static inline void nmo_fe_apx_fix(nmo_fctx *c, double *lo, double *hi, double vlo, int exl, double vhi,
                                  int exh, int n, uint32_t *fl)
{
    if (n == 0) return;
    double mf = nmo_fmt_get(c->cf)->max_finite;
    if (vlo > 0 && isfinite(vlo)) {
        double P = nmo_fe_pow2_above(vlo);
        if (P <= mf) {
            if (!exh && fabs(vhi - P) <= P * 0x1p-46) *fl |= NMO_EF_UNC;
            if (vhi >= P) *lo = fmin(*lo, nmo_fe_round(c, c->cf, P - n * nmo_fe_ulp(c, c->cf, P), NMO_RU));
        }
    }
    if (vhi < 0 && isfinite(vhi)) {
        double P = nmo_fe_pow2_above(-vhi);
        if (P <= mf) {
            if (!exl && fabs(-vlo - P) <= P * 0x1p-46) *fl |= NMO_EF_UNC;
            if (-vlo >= P) *hi = fmax(*hi, nmo_fe_round(c, c->cf, n * nmo_fe_ulp(c, c->cf, P) - P, NMO_RD));
        }
    }
}

/* Overflow of an n-ulp result: an upper side at max finite may be inf (the exact value
 * within n ulps of it rounds up), a lower side beyond max finite is max finite at least
 * (the exact value overflows; the approximation may not). Mirrored for negatives. */
static inline void nmo_fe_apx_ovf(const nmo_fctx *c, double *lo, double *hi)
{
    double mf = nmo_fmt_get(c->cf)->max_finite;
    if (*hi >= mf) *hi = INFINITY;
    if (*lo <= -mf) *lo = -INFINITY;
    if (*lo > mf) *lo = mf;
    if (*hi < -mf) *hi = -mf;
}

/* An approximate quotient has the exact one's sign (and is 0 when that is 0): the sides
 * of exact values in [ql, qh] (estimates of their signs are exact) do not cross 0. */
static inline void nmo_fe_apx_sign(double ql, double qh, double *lo, double *hi)
{
    if (ql >= 0 && *lo < 0) *lo = 0;
    if (qh <= 0 && *hi > 0) *hi = 0;
}

/* binary64 q = a / b (or sqrt) is exact: the residual is zero (FMA; no underflow for
 * operands in the range of the 16/32-bit lattices: a nonzero quotient of them is at least
 * 2^-277) */
static inline int nmo_fe_quot_exact(double q, double a, double b)
{
    return q == 0 || isinf(q) ? 1 /* a zero numerator or an infinite operand: exact */
                              : fma(q, b, -a) == 0;
}
static inline int nmo_fe_sqrt_exact(double s, double x) { return isfinite(s) && fma(s, s, -x) == 0; }

/* An approximate sqrt (fn_ulps[SQRT] = n >= 1) of [xlo, xhi] (0 <= xlo): its sides, never
 * negative (every sqrt of a non-negative number is). n = 0: RN (innocuous double rounding). */
static inline void nmo_fe_sqrt_sides(nmo_fctx *c, double xlo, double xhi, int n, double *lo, double *hi,
                                     uint32_t *fl)
{
    double sl = sqrt(xlo), sh = sqrt(xhi);
    if (n == 0) {
        *lo = nmo_fe_round(c, c->cf, sl, NMO_RNE);
        *hi = nmo_fe_round(c, c->cf, sh, NMO_RNE);
        return;
    }
    int el = nmo_fe_sqrt_exact(sl, xlo), eh = nmo_fe_sqrt_exact(sh, xhi);
    *lo = nmo_fe_fn_side(c, sl, el, n, 0, fl);
    *hi = nmo_fe_fn_side(c, sh, eh, n, 1, fl);
    nmo_fe_apx_fix(c, lo, hi, sl, el, sh, eh, n, fl);
    nmo_fe_apx_ovf(c, lo, hi);
    if (*lo < 0) *lo = 0;
}

/* 1/s for a lattice value s > 0 with n ulps (n = 0: RN), side `upper`; no fix needed for
 * a point. */
static inline double nmo_fe_rcp_side(nmo_fctx *c, double s, int n, int upper, uint32_t *fl)
{
    double q = 1.0 / s;
    if (n == 0) return nmo_fe_round(c, c->cf, q, NMO_RNE);
    return nmo_fe_fn_side(c, q, nmo_fe_quot_exact(q, 1.0, s), n, upper, fl);
}

/* nmo_fenc_div with an n-ulp division: every corner quotient's sides, the power-of-two
 * fix over the range, overflow. fn=fast: "anything" beyond __fdividef's range. */
static inline void nmo_fe_div_apx(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *a, const nmo_fenc *b, int n,
                                  uint32_t fl)
{
    if (nmo_fe_div_unbounded(&c->plan, fmax(fabs(b->lo), fabs(b->hi)))) { nmo_fenc_set_all(r, fl); return; }
    const double av[4] = {a->lo, a->lo, a->hi, a->hi}, bv[4] = {b->lo, b->hi, b->lo, b->hi};
    double l = INFINITY, h = -INFINITY, vl = INFINITY, vh = -INFINITY;
    int exl = 0, exh = 0;
    for (int i = 0; i < 4; i++) {
        double q = av[i] / bv[i];
        if (q != q) { nmo_fenc_set_all(r, fl); return; }
        int ex = nmo_fe_quot_exact(q, av[i], bv[i]);
        double lq = nmo_fe_fn_side(c, q, ex, n, 0, &fl), hq = nmo_fe_fn_side(c, q, ex, n, 1, &fl);
        nmo_fe_apx_sign(q, q, &lq, &hq);
        l = fmin(l, lq);
        h = fmax(h, hq);
        if (q < vl) vl = q, exl = ex; else if (q == vl) exl &= ex;
        if (q > vh) vh = q, exh = ex; else if (q == vh) exh &= ex;
    }
    nmo_fe_apx_fix(c, &l, &h, vl, exl, vh, exh, n, &fl);
    nmo_fe_apx_ovf(c, &l, &h);
    double m = nmo_mag_div(a->mag, nmo_mag_abs(l, h), b->mag, b->lo, b->hi); /* before r (aliasing) */
    r->lo = l;
    r->hi = h;
    r->flags = fl | c->force_unc;
    r->mag = nmo_mag_fin(r, m);
    nmo_fe_fix(r);
}

/* nmo_fenc_div_si with n-ulp division (x / n: nd ulps) and reciprocal (x * (1/n), the
 * reciprocal nr ulps, the product correctly rounded). */
static inline void nmo_fe_div_si_apx(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *a, double dn, int nd,
                                     int nr, double m)
{
    uint32_t fl = a->flags;
    double ql = a->lo / dn, qh = a->hi / dn;
    int el = nmo_fe_quot_exact(ql, a->lo, dn), eh = nmo_fe_quot_exact(qh, a->hi, dn);
    double l1, h1;
    if (nd == 0) {
        l1 = nmo_fe_round(c, c->cf, ql, NMO_RNE), h1 = nmo_fe_round(c, c->cf, qh, NMO_RNE);
    } else {
        l1 = nmo_fe_fn_side(c, ql, el, nd, 0, &fl), h1 = nmo_fe_fn_side(c, qh, eh, nd, 1, &fl);
        nmo_fe_apx_fix(c, &l1, &h1, ql, el, qh, eh, nd, &fl);
        nmo_fe_apx_sign(ql, qh, &l1, &h1);
    }
    double rl = nmo_fe_rcp_side(c, dn, nr, 0, &fl), rh = nmo_fe_rcp_side(c, dn, nr, 1, &fl);
    /* products of lattice values: exact in binary64, one rounding */
    double p[4] = {a->lo * rl, a->lo * rh, a->hi * rl, a->hi * rh};
    double l2 = INFINITY, h2 = -INFINITY;
    for (int i = 0; i < 4; i++) {
        double v = nmo_fe_round(c, c->cf, p[i], NMO_RNE);
        l2 = fmin(l2, v), h2 = fmax(h2, v);
    }
    double l = fmin(l1, l2), h = fmax(h1, h2);
    nmo_fe_apx_ovf(c, &l, &h);
    r->lo = l;
    r->hi = h;
    r->flags = fl | c->force_unc;
    r->mag = nmo_mag_fin(r, m);
    nmo_fe_fix(r);
}

/* x = 4^k: 1/sqrt(x) = 2^-k exactly (binary64 computes it exactly too). */
static inline int nmo_fe_is_pow4(double x)
{
    int e;
    double m = frexp(x, &e);
    return m == 0.5 && ((e - 1) & 1) == 0;
}

/* sqrt, correctly rounded (IEEE; CUDA's default -prec-sqrt=true) or of the plan's
 * fn_ulps[SQRT] (sqrt.approx: fn=fast, triton). */
static inline void nmo_fenc_sqrt(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *a)
{
    uint32_t fl = a->flags;
    if (nmo_fenc_is_nan(a) || a->hi < 0) { nmo_fenc_set_nan(r, fl); return; }
    if (a->lo < 0) { nmo_fenc_set_all(r, fl); return; }
    double al = a->lo, ah = a->hi, ma = a->mag;
    nmo_fe_sqrt_sides(c, a->lo, a->hi, c->plan.fn_ulps[NMO_FN_SQRT], &r->lo, &r->hi, &fl);
    r->flags = fl | c->force_unc;
    /* sqrt' = 1/(2 sqrt) */
    r->mag = nmo_mag_fin(r, nmo_mag_edge(al, ah, ma) ? INFINITY
                            : ma == 0 ? r->hi : nmo_mag_fn(r->hi, 0.5 / r->lo, ma));
}

/* 1/sqrt(x) computed either by an rsqrt of plan accuracy (fn_ulps[RSQRT]) or as
 * 1/sqrt(x) in two steps (RN(1/RN(sqrt x)), or the plan's sqrt and division accuracy):
 * the hull of both. x <= 0 possible: "anything" (inf or NaN). */
static inline void nmo_fenc_rsqrt(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *a)
{
    uint32_t fl = a->flags;
    if (nmo_fenc_is_nan(a) || a->hi < 0) { nmo_fenc_set_nan(r, fl); return; }
    if (a->lo <= 0) { nmo_fenc_set_all(r, fl); return; }
    int n = c->plan.fn_ulps[NMO_FN_RSQRT], ns = c->plan.fn_ulps[NMO_FN_SQRT];
    int nr = nmo_fe_div_ulps(&c->plan, 1);
    double vl = 1.0 / sqrt(a->hi), vh = 1.0 / sqrt(a->lo);
    int el = nmo_fe_is_pow4(a->hi), eh = nmo_fe_is_pow4(a->lo);
    double lo1 = nmo_fe_fn_lo(c, vl, el, n, &fl);
    double hi1 = nmo_fe_fn_hi(c, vh, eh, n, &fl);
    nmo_fe_apx_fix(c, &lo1, &hi1, vl, el, vh, eh, n, &fl);
    double slo, shi; /* the sqrt, then its reciprocal (each of plan accuracy) */
    nmo_fe_sqrt_sides(c, a->lo, a->hi, ns, &slo, &shi, &fl);
    if (slo == 0) { nmo_fenc_set_all(r, fl); return; }
    double lo2 = nmo_fe_rcp_side(c, shi, nr, 0, &fl);
    double hi2 = nmo_fe_rcp_side(c, slo, nr, 1, &fl);
    if (nr) nmo_fe_apx_fix(c, &lo2, &hi2, 1.0 / shi, nmo_fe_quot_exact(1.0 / shi, 1.0, shi), 1.0 / slo,
                           nmo_fe_quot_exact(1.0 / slo, 1.0, slo), nr, &fl);
    double al = a->lo, ah = a->hi, ma = a->mag;
    r->lo = fmin(lo1, lo2);
    r->hi = fmax(hi1, hi2);
    r->flags = fl | c->force_unc;
    /* |rsqrt'(x)| = rsqrt(x) / (2x) <= r_hi / (2 x_lo) */
    r->mag = nmo_mag_fin(r, nmo_mag_edge(al, ah, ma) ? INFINITY : nmo_mag_fn(r->hi, r->hi / (2 * al), ma));
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
    /* Overflow: beyond the largest finite compute value the upper snap stops at max
     * finite, but an implementation overflows to inf (expf(500) = inf): the upper bound
     * is inf once it reaches max finite (else lo = inf > hi = max for huge x). */
    nmo_fe_apx_fix(c, &lo, &hi, vlo, a->lo == 0, vhi, a->hi == 0, n, &fl);
    if (hi >= nmo_fmt_get(c->cf)->max_finite) hi = INFINITY;
    /* exp' = exp <= hi over the argument; an argument wider than 1 is a domain edge */
    double m = hi == 0 ? 0 /* exactly 0 (a -inf argument, deep underflow) */
               : a->mag != 0 && !(a->hi - a->lo <= 1) ? INFINITY : nmo_mag_fn(hi, hi, a->mag);
    if (lo < c->minnorm_c && nmo_plan_exp_ftz(&c->plan)) lo = 0; /* ex2.approx.ftz */
    r->lo = lo < 0 ? 0 : lo;
    r->hi = hi;
    r->flags = fl | c->force_unc;
    r->mag = nmo_mag_fin(r, m);
}

/* log with plan accuracy fn_ulps[LOG] (CUDA logf: 1 ulp). */
static inline void nmo_fenc_log(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *a)
{
    uint32_t fl = a->flags;
    if (nmo_fenc_is_nan(a) || a->hi < 0) { nmo_fenc_set_nan(r, fl); return; }
    if (a->lo <= 0) { nmo_fenc_set_all(r, fl); return; }
    int n = c->plan.fn_ulps[NMO_FN_LOG];
    double al = a->lo, ah = a->hi, ma = a->mag;
    double vl = log(a->lo), vh = log(a->hi);
    r->lo = nmo_fe_fn_lo(c, vl, a->lo == 1, n, &fl);
    r->hi = nmo_fe_fn_hi(c, vh, a->hi == 1, n, &fl);
    nmo_fe_apx_fix(c, &r->lo, &r->hi, vl, a->lo == 1, vh, a->hi == 1, n, &fl);
    r->flags = fl | c->force_unc;
    /* log' = 1/x <= 1/x_lo */
    r->mag = nmo_mag_fin(r, nmo_mag_edge(al, ah, ma) ? INFINITY
                            : nmo_mag_fn(nmo_mag_abs(r->lo, r->hi), 1 / al, ma));
}

/* Hull of two enclosures of the same value (two legitimate ways to compute it). */
static inline void nmo_fenc_hull(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *a, const nmo_fenc *b)
{
    (void)c;
    uint32_t fl = a->flags | b->flags;
    if (nmo_fenc_is_nan(a) && nmo_fenc_is_nan(b)) { nmo_fenc_set_nan(r, fl); return; }
    if (nmo_fenc_is_nan(a)) { *r = *b; r->flags = fl; return; }
    if (nmo_fenc_is_nan(b)) { *r = *a; r->flags = fl; return; }
    double m = nmo_mag_max(a->mag, b->mag);
    r->lo = fmin(a->lo, b->lo);
    r->hi = fmax(a->hi, b->hi);
    r->flags = fl;
    r->mag = m;
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
    double u = nmo_fe_ulp(c, c->cf, v);
    if (nmo_fe_ulp(c, c->cf, v - 2 * e) != u || nmo_fe_ulp(c, c->cf, v + 2 * e) != u) *fl |= NMO_EF_UNC;
    double w = upper ? v + n * u : v - n * u;
    return nmo_fe_snap(c, c->cf, upper ? NMO_RD : NMO_RU, w, e + fabs(w) * 0x1p-52, fl);
}

/* Saturated and deep-underflow arguments, decided without a radius. Beyond the
 * thresholds below 1 - |f(x)| < 2^-56 (tanh x >= 20, erf x >= 6.5, sigmoid x >= 40) or
 * sigmoid(x) < min_subnormal/4 (checked on the libm value with margin), and the
 * certified engine's sides are known exactly: +1 side [RU(1 - n ulp(0.75)), 1], -1 side
 * [-1, RD(-1 + n ulp(0.75))] (|f| < 1: the ulp of 1's lower binade), underflow side
 * [0, RD(n min_subnormal)]; n = 0 (RN) gives +-1 and 0. Returns 1 when it applies (this
 * only saves escalations: the results equal the certified engine's). */
static inline int nmo_fe_incr_sat(nmo_fctx *c, double x, double v, nmo_fn fn, int n, int upper,
                                  double *res)
{
    double t = fn == NMO_FN_TANH ? 20 : fn == NMO_FN_ERF ? 6.5 : 40;
    if (x >= t) {
        *res = upper || n == 0 ? 1.0 : nmo_fe_round(c, c->cf, 1.0 - n * nmo_fmt_ulp(c->cf, 0.75), NMO_RU);
        return 1;
    }
    if (fn != NMO_FN_SIGMOID && x <= -t) {
        *res = !upper || n == 0 ? -1.0
                                : nmo_fe_round(c, c->cf, -1.0 + n * nmo_fmt_ulp(c->cf, 0.75), NMO_RD);
        return 1;
    }
    if (fn == NMO_FN_SIGMOID && v * (1 + 0x1p-40) < c->minsub_c / 4) {
        *res = !upper || n == 0 ? 0.0 : nmo_fe_round(c, c->cf, n * c->minsub_c, NMO_RD);
        return 1;
    }
    return 0;
}

/* sup |f'| over [lo, hi] for tanh, erf, sigmoid: each derivative is even and falls with
 * |x|, so the sup is at the point of the interval nearest 0 (tanh' = 1 - tanh^2,
 * erf' = 2/sqrt(pi) exp(-x^2), sigmoid' = 1 / (4 cosh^2(x/2))). A global constant (1/4
 * for sigmoid) would put the scale of sigmoid(-70) at 17 mag(a) instead of 4e-31 mag(a).
 * Shared by both engines (the same libm calls on the same doubles). */
static inline double nmo_mag_incr_lip(nmo_fn fn, double lo, double hi)
{
    double m = lo <= 0 && hi >= 0 ? 0 : fmin(fabs(lo), fabs(hi));
    if (m != m) return INFINITY;
    double L = fn == NMO_FN_TANH ? 1 - tanh(m) * tanh(m)
               : fn == NMO_FN_ERF ? 1.1283791670955126 * exp(-m * m)
                                  : 0.25 / (cosh(m / 2) * cosh(m / 2));
    return L * (1 + 0x1p-40); /* libm's few-ulp errors, upward */
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
    double lo, hi;
    int sl = nmo_fe_incr_sat(c, a->lo, vl, fn, n, 0, &lo), sh = nmo_fe_incr_sat(c, a->hi, vh, fn, n, 1, &hi);
    if (!sl) lo = nmo_fe_incr_side(c, vl, el, n, 0, &fl);
    if (!sh) hi = nmo_fe_incr_side(c, vh, eh, n, 1, &fl);
    /* a saturated value is +-(1 - tiny), in 1's lower binade, although libm returns +-1:
     * what the power-of-two fix needs to know (known exactly: no band) */
    if (sl && fabs(vl) >= 0.5) vl = copysign(1 - 0x1p-53, vl), el = 1;
    if (sh && fabs(vh) >= 0.5) vh = copysign(1 - 0x1p-53, vh), eh = 1;
    nmo_fe_apx_fix(c, &lo, &hi, vl, el, vh, eh, n, &fl);
    /* the ranges: tanh, erf in [-1, 1], sigmoid in [0, 1] */
    double bot = fn == NMO_FN_SIGMOID ? 0 : -1;
    double L = nmo_mag_incr_lip(fn, a->lo, a->hi), ma = a->mag;
    r->lo = lo < bot ? bot : lo > 1 ? 1 : lo;
    r->hi = hi > 1 ? 1 : hi < bot ? bot : hi;
    r->flags = fl | c->force_unc;
    r->mag = nmo_mag_fn(nmo_mag_abs(r->lo, r->hi), L, ma);
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

/* ---- softmax rows ------------------------------------------------------------------------ */

void nmo_fe_exp_row_kernel(double *lo, double *hi, int64_t *ok, const double *v, int64_t n, int nulp);
void nmo_fe_divmul_row_kernel(double *lo, double *hi, int64_t *ok, const nmo_fenc *e, int64_t n,
                              double sl, double sh, double rl, double rh);

/* A softmax row's e_j = exp(RN(x_j - m)) for the input points x_j and the row's max m:
 * nmo_fenc_exp(nmo_fenc_sub(set_d(x_j), m)) element by element (same values and flags).
 * The common case (fp32 compute without ftz, m a finite point, an ulp:n exp with n >= 1,
 * d != 0) takes one libm exp per element and the vectorized sides of
 * nmo_fe_exp_row_kernel; any other element goes through the primitives. */
static inline void nmo_fenc_exp_sub_row(nmo_fctx *c, nmo_fenc *ee, const double *x, const nmo_fenc *m,
                                        int64_t n)
{
    int nulp = c->plan.fn_ulps[NMO_FN_EXP];
    int fast = c->cf == NMO_FP32 && c->fp32rn && !c->ftz && !c->force_unc && m->flags == 0 &&
               m->lo == m->hi && isfinite(m->lo) && nulp >= 1;
    int ftzx = nmo_plan_exp_ftz(&c->plan);
    enum { B = 256 };
    double d[B], v[B], lo[B], hi[B];
    int64_t ok[B];
    for (int64_t j0 = 0; j0 < n; j0 += B) {
        int64_t cnt = n - j0 < B ? n - j0 : B;
        if (fast) {
            for (int64_t j = 0; j < cnt; j++) {
                d[j] = (float)(x[j0 + j] + -m->hi); /* nmo_fenc_sub of points: RN32 */
                v[j] = d[j] != 0 && d[j] == d[j] ? exp(d[j]) : 0; /* 0: not the common case */
            }
            nmo_fe_exp_row_kernel(lo, hi, ok, v, cnt, nulp);
        }
        for (int64_t j = 0; j < cnt; j++) {
            nmo_fenc *o = &ee[j0 + j];
            if (fast && ok[j]) {
                /* the mags of nmo_fenc_sub (|x| + mag(m)) and nmo_fenc_exp */
                double md = fabs(x[j0 + j]) + m->mag;
                o->lo = lo[j] < c->minnorm_c && ftzx ? 0 : lo[j]; /* as nmo_fenc_exp */
                o->hi = hi[j];
                o->flags = 0;
                o->mag = nmo_mag_fin(o, hi[j] == 0 ? 0 : nmo_mag_fn(hi[j], hi[j], md));
                continue;
            }
            nmo_fenc xe, dd;
            nmo_fenc_set_d(c, &xe, x[j0 + j]);
            nmo_fenc_sub(c, &dd, &xe, m);
            nmo_fenc_exp(c, o, &dd);
        }
    }
}

/* The mag of hull(e / s, e * rcp) as nmo_fenc_div, nmo_fenc_mul and nmo_fenc_hull form it,
 * for the fast path of nmo_fenc_divmul_row; y1, y2: the quotient's and the product's
 * enclosures as those primitives round them (e, s, rcp non-negative there). */
static inline double nmo_mag_divmul(const nmo_fenc *e, const nmo_fenc *s, const nmo_fenc *rcp,
                                    double ylo, double yhi)
{
    (void)ylo, (void)yhi;
    /* div: |y1| max = RN(e_hi / s_lo); mul: |y2| max = RN(e_hi rcp_hi); each primitive's
     * mag is +inf when its result is not finite (nmo_mag_fin) */
    double q = (double)(float)(e->hi / s->lo), p = (double)(float)(e->hi * rcp->hi);
    double m1 = isfinite(q) ? nmo_mag_div(e->mag, q, s->mag, s->lo, s->hi) : INFINITY;
    double m2 = isfinite(p) ? nmo_mag_mul(e->mag, nmo_mag_abs(e->lo, e->hi), rcp->mag,
                                          nmo_mag_abs(rcp->lo, rcp->hi))
                            : INFINITY;
    return nmo_mag_max(m1, m2);
}

/* A softmax row's outputs y_j = hull(e_j / s, e_j * rcp) (nmo_fenc_div, nmo_fenc_mul,
 * nmo_fenc_hull, exported): the same values and flags; the common case (fp32 compute
 * without ftz, s and rcp finite, positive and unflagged, 0 <= e_j finite) through the
 * vectorized nmo_fe_divmul_row_kernel, any other element through the primitives. */
static inline void nmo_fenc_divmul_row(nmo_fctx *c, nmo_fenc *out, const nmo_fenc *e, const nmo_fenc *s,
                                       const nmo_fenc *rcp, int64_t n)
{
    int fast = c->cf == NMO_FP32 && c->fp32rn && !c->ftz && !c->force_unc && s->flags == 0 &&
               !c->plan.fn_ulps[NMO_FN_DIV] && /* the kernel: RN quotients */
               rcp->flags == 0 && s->lo > 0 && s->hi <= 0x1p1000 && rcp->lo > 0 && rcp->hi <= 0x1p1000;
    enum { B = 256 };
    double lo[B], hi[B];
    int64_t ok[B];
    for (int64_t j0 = 0; j0 < n; j0 += B) {
        int64_t cnt = n - j0 < B ? n - j0 : B;
        if (fast) nmo_fe_divmul_row_kernel(lo, hi, ok, e + j0, cnt, s->lo, s->hi, rcp->lo, rcp->hi);
        for (int64_t j = 0; j < cnt; j++) {
            nmo_fenc *o = &out[j0 + j];
            if (fast && ok[j]) {
                o->lo = lo[j];
                o->hi = hi[j];
                o->flags = e[j0 + j].flags;
                o->mag = nmo_mag_divmul(&e[j0 + j], s, rcp, lo[j], hi[j]);
                continue;
            }
            nmo_fenc y1, y2;
            nmo_fenc_div(c, &y1, &e[j0 + j], s);
            nmo_fenc_mul(c, &y2, &e[j0 + j], rcp);
            nmo_fenc_hull(c, o, &y1, &y2);
        }
    }
}

/* max/min are exact. fmaxf ignores a NaN operand while a compare-select may return it:
 * a NaN operand gives the other operand's interval plus "NaN possible". */
static inline void nmo_fenc_max(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *a, const nmo_fenc *b)
{
    (void)c;
    uint32_t fl = a->flags | b->flags;
    if (nmo_fenc_is_nan(a)) { *r = *b; r->flags |= fl | NMO_EF_NAN; return; }
    if (nmo_fenc_is_nan(b)) { *r = *a; r->flags |= fl | NMO_EF_NAN; return; }
    double m = nmo_mag_max(a->mag, b->mag);
    r->lo = fmax(a->lo, b->lo);
    r->hi = fmax(a->hi, b->hi);
    r->flags = fl;
    r->mag = m;
}

static inline void nmo_fenc_min(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *a, const nmo_fenc *b)
{
    (void)c;
    uint32_t fl = a->flags | b->flags;
    if (nmo_fenc_is_nan(a)) { *r = *b; r->flags |= fl | NMO_EF_NAN; return; }
    if (nmo_fenc_is_nan(b)) { *r = *a; r->flags |= fl | NMO_EF_NAN; return; }
    double m = nmo_mag_max(a->mag, b->mag);
    r->lo = fmin(a->lo, b->lo);
    r->hi = fmin(a->hi, b->hi);
    r->flags = fl;
    r->mag = m;
}

/* Product of three factors in any association, two roundings in compute.
 * fl(fl(ab)c) = ab(1+d1)c rounded, |d1| <= u, plus an absolute underflow term eta*|c|
 * (Higham, ASNA 2nd ed., §2.2 with gradual underflow): so the result is
 * RN(P (1 +- u) +- eta M), M = max factor magnitude, P the exact product interval. The
 * last rounding is the snap itself. binary64 error of the formula: radius 2^-50 |v|. */
static inline double nmo_fe_absmax(const nmo_fenc *a)
{
    double l = fabs(a->lo), h = fabs(a->hi);
    return l > h ? l : h;
}

/* RN32 of the exact real t + err + g (fp32rn plans), given t = RN64(t + err) (a TwoSum
 * pair: |err| <= ulp64(t)/2) and |g| < ulp64(t)/4: no fp32 rounding boundary (midpoint)
 * lies strictly between t and the exact value unless t is itself a midpoint (any other
 * double is at least ulp64(t) from one), so the result is RN32(t), except at a midpoint,
 * where the sign of err + g (compared exactly: err against -g) picks the side (zero:
 * the tie rule, RN32(t) itself). Returns 0 (undecided) for a non-finite RN32(t). */
static inline int nmo_fe_rn32_pair_g(double t, double err, double g, double *res)
{
    float y = (float)t;
    double a = y;
    if (!(fabsf(y) <= 0x1.fffffep127f)) return 0;
    *res = a;
    if (a == t || (err == -g)) return 1;
    double o = a > t ? nmo_fe_f32_step(y, 0) : nmo_fe_f32_step(y, 1); /* the other neighbour */
    if (!(fabs(o) <= 0x1.fffffep127f) || a - t != t - o) return 1; /* not a midpoint */
    *res = err > -g ? fmax(a, o) : fmin(a, o);
    return 1;
}

/* The point * interval * point case of nmo_fenc_mul3 decided exactly where the snap could
 * not be (the formula's value on an fp32 midpoint: x w r_lo (1 - u) with x w a power of
 * two, the near_degenerate rows of a norm). With P = ad * b.lo exact in binary64 (checked
 * by fma), q = |P| u exact (a power-of-two scaling of a normal double), the exact value
 * P - q - eta is the TwoSum pair (t, err) of P - q plus g = -eta; likewise P' + q' + eta
 * above. eta = eta_c M is exact (a power of two times a double) and must satisfy
 * |eta| < ulp64(t)/4 (|t| > 2^55 eta). The certified engine evaluates the same exact
 * value (at 1024 bits: exact while |t| / eta < 2^900) and rounds it to nearest,
 * so both engines agree. Returns 1 and sets r->lo, r->hi when both sides are decided. */
static inline int nmo_fe_mul3_exact_ends(nmo_fctx *c, nmo_fenc *r, double ad, const nmo_fenc *b,
                                         double plo, double phi, double eta)
{
    if (c->cf != NMO_FP32 || !c->fp32rn) return 0;
    double p1 = ad * b->lo, p2 = ad * b->hi;
    if (fma(ad, b->lo, -p1) != 0 || fma(ad, b->hi, -p2) != 0) return 0; /* products not exact */
    double res[2];
    for (int side = 0; side < 2; side++) {
        double P = side ? phi : plo;
        if (!(fabs(P) >= 0x1p-200 && fabs(P) <= 0x1p200) || !(eta >= 0x1p-1000 || eta == 0)) return 0;
        double q = fabs(P) * c->uc; /* exact */
        double t = side ? P + q : P - q;
        double err = side ? nmo_fe_two_sum_err(P, q, t) : nmo_fe_two_sum_err(P, -q, t);
        /* |eta| < ulp64(t)/4; and |t| / eta < 2^900 so that the certified engine's
         * 1024-bit evaluation of P -+ q -+ eta is exact too */
        if (!(fabs(t) > 0x1p55 * eta) || !(fabs(t) < 0x1p900 * eta || eta == 0)) return 0;
        if (!nmo_fe_rn32_pair_g(t, err, side ? eta : -eta, &res[side])) return 0;
    }
    r->lo = res[0];
    r->hi = res[1];
    return 1;
}

/* The error scale of a product of three: max(mag(a)|b||d|, |a|mag(b)|d|, |a||b|mag(d)),
 * evaluated in this order by every path of both engines (nmo_fe_mul3_row_kernel too). */
static inline double nmo_mag_mul3(double ma, double a, double mb, double b, double md, double d)
{
    double x = nmo_mag_prod(nmo_mag_prod(ma, b), d), y = nmo_mag_prod(nmo_mag_prod(a, mb), d);
    double z = nmo_mag_prod(nmo_mag_prod(a, b), md);
    return nmo_mag_max(nmo_mag_max(x, y), z);
}

static inline void nmo_fenc_mul3(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *a, const nmo_fenc *b,
                                 const nmo_fenc *d)
{
    uint32_t fl = a->flags | b->flags | d->flags;
    if (nmo_fenc_is_nan(a) || nmo_fenc_is_nan(b) || nmo_fenc_is_nan(d)) {
        nmo_fenc_set_nan(r, fl);
        return;
    }
    double plo, phi;
    if (a->lo == a->hi && d->lo == d->hi) {
        /* point * interval * point (a norm's x * r * w): one binary64 product pair */
        double ad = a->lo * d->lo; /* exact */
        double p1 = ad * b->lo, p2 = ad * b->hi;
        plo = p1 < p2 ? p1 : p2;
        phi = p1 < p2 ? p2 : p1;
        if (p1 != p1 || p2 != p2) plo = phi = NAN;
    } else {
        nmo_fenc ab;
        nmo_fe_mul_exact(&ab.lo, &ab.hi, a, b);
        nmo_fe_mul_exact(&plo, &phi, &ab, d); /* endpoints rounded once in binary64 */
    }
    if (plo != plo) { nmo_fenc_set_all(r, fl); return; }
    double m = nmo_fe_absmax(a), mb = nmo_fe_absmax(b), md = nmo_fe_absmax(d);
    double mg = nmo_mag_mul3(a->mag, m, b->mag, mb, d->mag, md);
    m = m > mb ? m : mb;
    m = m > md ? m : md;
    double eta = c->etac * m;
    double vlo = plo - fabs(plo) * c->uc - eta;
    double vhi = phi + fabs(phi) * c->uc + eta;
    uint32_t f0 = fl;
    r->lo = nmo_fe_snap(c, c->cf, NMO_RNE, vlo, fabs(vlo) * 0x1p-50 + eta * 0x1p-50, &fl);
    r->hi = nmo_fe_snap(c, c->cf, NMO_RNE, vhi, fabs(vhi) * 0x1p-50 + eta * 0x1p-50, &fl);
    if ((fl & NMO_EF_UNC) && !(f0 & NMO_EF_UNC) && !c->force_unc && a->lo == a->hi && d->lo == d->hi &&
        nmo_fe_mul3_exact_ends(c, r, a->lo * d->lo, b, plo, phi, eta))
        fl = f0;
    r->flags = fl;
    r->mag = nmo_mag_fin(r, mg);
    nmo_fe_fix(r);
}

/* A row of a norm's y_j = x_j * r * w_j: out[j] = nmo_fenc_mul3(x_j, r, w_j) for the
 * input points x_j, w_j (nmo_fenc_set_d) and one enclosure r shared by the row, exported
 * (the same formula, values and flags as that call, element by element: Higham's
 * P (1 +- u) +- eta M, see nmo_fenc_mul3). The loop below evaluates the formula exactly
 * as nmo_fenc_mul3 does and decides the snaps with nmo_fe_rn32_try (fp32 compute without
 * ftz, r finite and unflagged); an element whose snap it cannot decide, or whose inputs
 * are not finite, goes through nmo_fenc_mul3 itself. */
/* The common case of nmo_fenc_mul3_row over j < n (enc_fast.c; a loop the compiler
 * vectorizes): lo/hi[j] as nmo_fenc_mul3 computes them for the points x_j, w_j and
 * r = [rl, rh] (finite; rm = max(|rl|, |rh|)), ok[j] = 1 when both snaps are decided by
 * nmo_fe_rn32_try and x_j, w_j are finite (0: redo the element with nmo_fenc_mul3). */
void nmo_fe_mul3_row_kernel(double *lo, double *hi, int64_t *ok, const double *x, const double *w,
                            double rl, double rh, double rm, double uc, double etac, int64_t n);

static inline void nmo_fenc_mul3_row(nmo_fctx *c, nmo_fenc *out, const double *x, const nmo_fenc *r,
                                     const double *w, int64_t n)
{
    int fast = c->cf == NMO_FP32 && c->fp32rn && !c->ftz && !c->force_unc && r->flags == 0 &&
               isfinite(r->lo) && isfinite(r->hi);
    enum { B = 256 };
    double lo[B], hi[B];
    int64_t ok[B];
    for (int64_t j0 = 0; j0 < n; j0 += B) {
        int64_t m = n - j0 < B ? n - j0 : B;
        if (fast)
            nmo_fe_mul3_row_kernel(lo, hi, ok, x + j0, w + j0, r->lo, r->hi, nmo_fe_absmax(r), c->uc,
                                   c->etac, m);
        for (int64_t j = 0; j < m; j++) {
            nmo_fenc *o = &out[j0 + j];
            if (fast && ok[j]) {
                double ax = fabs(x[j0 + j]), aw = fabs(w[j0 + j]);
                o->lo = lo[j];
                o->hi = hi[j];
                o->flags = 0;
                o->mag = nmo_mag_fin(o, nmo_mag_mul3(ax, ax, r->mag, nmo_fe_absmax(r), aw, aw));
                continue;
            }
            nmo_fenc xe, we;
            nmo_fenc_set_d(c, &xe, x[j0 + j]);
            nmo_fenc_set_d(c, &we, w[j0 + j]);
            nmo_fenc_mul3(c, o, &xe, r, &we);
        }
    }
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
    double m = a->mag;
    r->flags = a->flags;
    r->lo = lo;
    r->hi = hi;
    r->mag = nmo_mag_fin(r, m);
    nmo_fe_fix(r);
}

/* ---- reductions ---------------------------------------------------------------------- */

/* The plan's reduction multiplier (nmo_plan_red_k, nmo_plan_dot_k2: the sum model and
 * its geometry); a reduction longer than the geometry holds (INFINITY: "anything") is
 * counted so that nmo_check can report the plan as not fitting the shape. */
static inline double nmo_fe_geo_note(int64_t *over, double k, int64_t n)
{
    if (!(k < INFINITY) && n > *over) *over = n;
    return k;
}
static inline double nmo_fe_red_k(nmo_fctx *c, int64_t n, int64_t m, int dot)
{
    return nmo_fe_geo_note(&c->geo_over, nmo_plan_red_k(&c->plan, n, m, dot), n);
}
static inline double nmo_fe_dot_k(nmo_fctx *c, int64_t n, int64_t m)
{
    return nmo_fe_geo_note(&c->geo_over, nmo_plan_dot_k2(&c->plan, n, m), n);
}

/* Close a reduction: the exact sum lies in [slo, shi] (binary64 values with error
 * <= err each), the model error is k * ua * A + k * eta with A = sum |terms| (a_d its
 * binary64 value, error <= err too). The result is an acc value, so the bound snaps
 * inward: RU(lower), RD(upper). */
static inline void nmo_fe_red_finish(nmo_fctx *c, nmo_fenc *r, double slo, double shi,
                                     double a_d, double k, double keta, double err,
                                     uint32_t fl)
{
    if (!(fabs(slo) <= 0x1p1000 && fabs(shi) <= 0x1p1000 && a_d <= 0x1p1000) || !(k < INFINITY)) {
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
/* The error scale of a sum of enclosures: the sum of their mags, in index order (both
 * engines). */
static inline double nmo_mag_sum(const nmo_fenc *x, int64_t n)
{
    double m = 0;
    for (int64_t i = 0; i < n; i++) m += x[i].mag;
    return m;
}

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
    double k = nmo_fe_red_k(c, n, n, 0); /* n - 1 for sum=any */
    double keta = c->ftz && n > 1 ? (double)(n - 1) * c->etaa : 0; /* n - 1 additions */
    double m = nmo_mag_sum(x, n);
    nmo_fe_red_finish(c, r, slo, shi, a, k, keta, (double)n * 0x1p-53 * a, fl);
    r->mag = nmo_mag_fin(r, m);
}

/* The error scale of a dot product of input points: the binade of sum |x y| (exact in
 * both engines: see "error scale"), from its binary64 estimate a of relative error rel;
 * an estimate too near a power of two flags the element for the certified engine. */
static inline void nmo_fe_dot_mag(nmo_fctx *c, nmo_fenc *r, double a, double rel)
{
    double m = nmo_mag_pow2_of(a, rel);
    if (m < 0) {
        r->flags |= NMO_EF_UNC;
        m = nmo_mag_pow2(a);
    }
    if (c->force_unc) r->flags |= NMO_EF_UNC;
    r->mag = nmo_mag_fin(r, m);
}

/* Under ftz an input factor below the smallest normal of compute may be read as 0 (DAZ,
 * as nmo_fenc_set_d allows), which drops its whole product x_i y_i, however large y_i
 * is: the 2n min_normal underflow term covers that only for |y_i| <= 2n. The dot
 * products of point inputs add this bound of the dropped products to their absolute
 * term: sum over i with a nonzero subnormal factor of |x_i| |y_i| (|x_i| the max of an
 * enclosure in nmo_fenc_dot_ed), as an upper bound: the binary64 products are exact
 * (lattice values) and the sum errs by < n 2^-53 of itself. The certified engine calls
 * the same function on the same doubles, so both add the same value. 0 without ftz. */
static inline double nmo_fe_daz_add(double d, double minnorm, double a, double b)
{
    a = fabs(a), b = fabs(b);
    return (a != 0 && a < minnorm) || (b != 0 && b < minnorm) ? d + a * b : d;
}
static inline double nmo_fe_daz_finish(double d, int64_t n) { return d * (1 + (double)(n + 2) * 0x1p-52); }
static inline double nmo_fe_daz_term(int ftz, double minnorm, const double *x, const double *y,
                                     int64_t n)
{
    if (!ftz) return 0;
    double d = 0;
    for (int64_t i = 0; i < n; i++) d = nmo_fe_daz_add(d, minnorm, x[i], y[i]);
    return nmo_fe_daz_finish(d, n);
}

/* The close of nmo_fenc_dot_d from its binary64 sums of the n exact products x_i y_i
 * of input points, formed in any order (the GPU tier's row reductions, hip/gpu_oracle.hip,
 * call it with their own sums): s = sum x_i y_i and a = sum |x_i y_i| each within
 * (n - 1) 2^-53 a of the exact sums (Jeannerod & Rump 2013, Thm 4.1, in binary64), m the
 * terms with both factors nonzero, daz nmo_fe_daz_term's bound (0 without ftz). Finite
 * s only (the caller handles NaN and infinities). */
static inline void nmo_fenc_dot_d_finish(nmo_fctx *c, nmo_fenc *r, double s, double a, int64_t m,
                                         int64_t n, double daz)
{
    /* underflow: each product may lose eta (half the subnormal spacing); under ftz the
     * products and the partial sums may each flush: 2n min_normal. */
    double keta = (c->ftz ? 2.0 : 1.0) * (double)n * c->etaa + daz;
    nmo_fe_red_finish(c, r, s, s, a, nmo_fe_dot_k(c, n, m), keta, (double)n * 0x1p-53 * a, 0);
    nmo_fe_dot_mag(c, r, a, (double)n * 0x1p-53 * 1.01);
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
    nmo_fenc_dot_d_finish(c, r, s, a, m, n, nmo_fe_daz_term(c->ftz, c->minnorm_c, x, y, n));
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

/* Split-K partial sums stored in format pf (cuBLAS's reduced-precision reduction: the
 * plan's `inter` of matmul and matmul_bwd) before they are added in acc, for the matrix
 * products that follow (pf < 0: none). With disjoint splits S_p (any split, any order
 * inside) of sum|a b| = A: each partial errs by the dot model on its terms, its store
 * RN_pf(s_p) by u_pf |s_p| + eta_pf, and the P <= n stored partials are added in any
 * order (Jeannerod & Rump 2013): (P - 1) u_a sum|RN(s_p)| with
 * sum|RN(s_p)| <= (1 + u_pf)(1 + n u_a) A + P eta_pf. Beyond the dot model that is at
 * most (1 + n u_a)(2^(p_a - p_pf) + 2n) u_a A + 2 n eta_pf (u_pf <= 1/2, n u_a <= 1/4:
 * nmo_gemm_partials_k; larger n: no bound, "anything"). A partial may also overflow pf
 * (it is at most A (1 + n u_a) in magnitude): from there on, "anything". [alo, ahi]
 * holds A (the certified engine: alo = ahi = A rounded up). Returns 0, 1 when a partial
 * may overflow (*k = inf), or 2 when [alo, ahi] straddles that threshold (the fast
 * engine flags the element: the certified engine decides). */
static inline int nmo_gemm_partials_k(const nmo_plan *p, int pf, int64_t n, double ua, double alo,
                                      double ahi, double *k, double *keta)
{
    if (pf < 0) return 0;
    const nmo_fmt_info *fi = nmo_fmt_get((nmo_fmt)pf), *ai = nmo_fmt_get(p->acc);
    double nd = (double)n, thr = fi->max_finite / (1 + nd * ua);
    if (!(nd * ua <= 0.25) || alo >= thr) { *k = INFINITY; return 1; }
    double eta_pf = p->ftz ? fi->min_normal : fi->min_subnormal / 2, st = ldexp(1.0, ai->prec - fi->prec);
    double kg, kc;
    int64_t P;
    /* A declared geometry (sum_geom.c): the chunks are the split, P of them, each errs by
     * the chunk level kc (at most n: Thm 4.2 on its terms); the stored partials are pf
     * floats, so their sum in any order errs by (P - 1) u_a sum|RN(s_p)|, with
     * sum|RN(s_p)| <= (1 + u_pf)(1 + kc u_a) A + P eta_pf: in all
     * kc + (1 + kc u_a)(2^(p_a - p_pf) + (P - 1)(1 + u_pf)), and 2 P eta_pf. Taken (both
     * terms together) when it is below the any-split bound. */
    if (*k < INFINITY && nmo_plan_geo_chunk(p, n, n, 1, &kc, &P)) {
        kc = kc < nd ? kc : nd;
        kg = kc + (1 + kc * ua) * (st + (double)(P - 1) * (1 + ldexp(1.0, -fi->prec)));
        kg = ceil(kg * (1 + 0x1p-40) * 1024) / 1024;
        if (kg < *k + (1 + nd * ua) * (st + 2 * nd)) {
            *k = kg;
            *keta += 2 * (double)P * eta_pf;
            return ahi >= thr ? 2 : 0;
        }
    }
    *k += (1 + nd * ua) * (st + 2 * nd);
    *keta += 2 * nd * eta_pf;
    return ahi >= thr ? 2 : 0;
}

static inline void nmo_fenc_gemm_partials(nmo_fctx *c, int pf) { c->gemm_partials = pf; }

/* Element (i, j) of the matrix product A[M,K] * B[K,N] (inputs as stored): a dot
 * product in acc (nmo_fenc_dot_d's model). The first call computes A*B, |A|*|B| and the
 * nonzero-term counts nz(A)*nz(B) for the whole matrices in binary64 (BLAS dgemm when built with it: any order, error
 * <= K 2^-53 |A||B| each, Jeannerod & Rump 2013 in binary64) and keeps them in ctx. */
void nmo_fenc_gemm_elem(nmo_fctx *c, nmo_fenc *r, const nmo_tensor *A, const nmo_tensor *B,
                        int64_t i, int64_t j);
/* Row i of C = A B: out[j] = nmo_fenc_gemm_elem(i, j) for j < N (same values and flags),
 * the common case through a vectorized kernel over the batched products. */
void nmo_fenc_gemm_row(nmo_fctx *c, nmo_fenc *out, const nmo_tensor *A, const nmo_tensor *B, int64_t i);
void nmo_fe_gemm_row_kernel(double *lo, double *hi, int64_t *ok, const double *mid, const double *absv,
                            const double *cnt, double K, double ua, double keta, double maxfin, int64_t n);

static inline void nmo_fenc_export(nmo_fctx *c, nmo_fenc *dst, const nmo_fenc *src)
{
    (void)c;
    *dst = *src;
}


/* ---- norms group: products of k factors, dot products of k-factor terms ------------ */

#define NMO_PRODK_MAX 8

/* gamma for r inner roundings: r u (1 + 2 r u) >= (1 + u)^r - 1 whenever r u <= 1/4
 * (Higham, ASNA 2nd ed., Lemma 3.1: (1+u)^r - 1 <= r u / (1 - r u)). Both engines use
 * this same binary64 value. */
static inline double nmo_fe_gamma(double u, int r) { return r * u * (1 + 2 * r * u); }

/* Product of k <= 8 enclosures f[0..k-1] in any association and order, every
 * multiplication correctly rounded in compute. The k-2 inner roundings give
 * T = P (1 +- g) +- eta with P the exact product interval, g = nmo_fe_gamma(u, k-2)
 * (Higham, ASNA 2nd ed., §3.1) and eta = 2 (k-2) eta_c R, R = prod max(1, |f_i|) (each
 * underflowing rounding loses at most eta_c, later multiplied by at most R; Higham §2.1);
 * the last multiplication is the snap RN(T). fused = 1: the last multiplication may also
 * be left unrounded (contracted into a following add, FMA): [RD(T_lo), RU(T_hi)] holds
 * both T and RN(T), and RN(T + c) is monotone in T. A factor exactly [0, 0]: exact 0.
 * binary64 error: k-1 products and 3 more ops, radius (k+3) 2^-52 |v| (0 when every
 * product is exact: k = 2, fma residual 0). */
/* Every partial product of the factors is at most R (1 + g) + eta in magnitude: at or
 * beyond compute's largest finite value some association may overflow (inf, or NaN
 * later), so the result is not bounded. Near the edge the fast engine cannot tell. */
static inline int nmo_fe_partial_ovf(nmo_fctx *c, double top, uint32_t *fl)
{
    double mf = nmo_fmt_get(c->cf)->max_finite;
    if (fabs(top - mf) <= mf * 0x1p-30) *fl |= NMO_EF_UNC;
    return !(top < mf);
}

/* The error scale of a product of k factors f[0][j] .. f[k-1][j]: the largest over i of
 * mag(f_i) times the other factors' |.| (first-order propagation of each factor), in
 * this order in both engines. */
static inline double nmo_mag_prodk(const nmo_fenc *const *f, int k, int64_t j)
{
    double m = 0;
    for (int i = 0; i < k; i++) {
        double t = f[i][j].mag;
        for (int l = 0; l < k; l++)
            if (l != i) t = nmo_mag_prod(t, nmo_mag_abs(f[l][j].lo, f[l][j].hi));
        m = nmo_mag_max(m, t);
    }
    return m;
}

static inline void nmo_fenc_prodk(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *const *f, int k,
                                  int fused)
{
    double mg = nmo_mag_prodk(f, k, 0);
    uint32_t fl = 0;
    int zero = 0, nonfin = 0;
    for (int i = 0; i < k; i++) {
        fl |= f[i]->flags;
        if (nmo_fenc_is_nan(f[i])) { nmo_fenc_set_nan(r, fl); return; }
        zero |= f[i]->lo == 0 && f[i]->hi == 0;
        nonfin |= !isfinite(f[i]->lo) || !isfinite(f[i]->hi);
    }
    if (zero) { r->lo = r->hi = 0; r->flags = fl | c->force_unc; r->mag = 0; return; }
    if (nonfin) { nmo_fenc_set_all(r, fl); return; }
    if (k == 1) { /* the factor itself */
        *r = *f[0];
        r->flags = fl | c->force_unc;
        return;
    }
    double lo = f[0]->lo, hi = f[0]->hi, R = fmax(1, fmax(fabs(lo), fabs(hi)));
    int exact = 1;
    for (int i = 1; i < k; i++) {
        double bl = f[i]->lo, bh = f[i]->hi;
        double p1 = lo * bl, p2 = lo * bh, p3 = hi * bl, p4 = hi * bh;
        if (exact)
            exact = fma(lo, bl, -p1) == 0 && fma(lo, bh, -p2) == 0 && fma(hi, bl, -p3) == 0 &&
                    fma(hi, bh, -p4) == 0;
        lo = fmin(fmin(p1, p2), fmin(p3, p4));
        hi = fmax(fmax(p1, p2), fmax(p3, p4));
        R *= fmax(1, fmax(fabs(bl), fabs(bh)));
    }
    int nr = k > 2 ? k - 2 : 0;
    double g = nmo_fe_gamma(c->uc, nr), eta = 2.0 * nr * c->etac * R;
    if (nmo_fe_partial_ovf(c, R * (1 + g) + eta, &fl)) { nmo_fenc_set_all(r, fl); return; }
    double vlo = lo - fabs(lo) * g - eta, vhi = hi + fabs(hi) * g + eta;
    if (!isfinite(vlo) || !isfinite(vhi)) { nmo_fenc_set_all(r, fl); return; }
    /* the unrounded (fused) value is not flushed under ftz: its bounds are directed
     * roundings without flushing (a following RN(T + c) flushes) */
    nmo_fctx nf;
    const nmo_fctx *cs = c;
    if (fused && c->ftz) {
        nf = *c;
        nf.ftz = 0;
        nf.fp32rn = 1;
        cs = &nf;
    }
    if (exact && nr == 0) { /* the exact product: round it, no radius */
        r->lo = nmo_fe_round(cs, c->cf, vlo, fused ? NMO_RD : NMO_RNE);
        r->hi = nmo_fe_round(cs, c->cf, vhi, fused ? NMO_RU : NMO_RNE);
        r->flags = fl | c->force_unc;
        r->mag = nmo_mag_fin(r, mg);
        nmo_fe_fix(r);
        return;
    }
    double el = (fabs(vlo) + eta) * (k + 3) * 0x1p-52, eh = (fabs(vhi) + eta) * (k + 3) * 0x1p-52;
    r->lo = nmo_fe_snap(cs, c->cf, fused ? NMO_RD : NMO_RNE, vlo, el, &fl);
    r->hi = nmo_fe_snap(cs, c->cf, fused ? NMO_RU : NMO_RNE, vhi, eh, &fl);
    r->flags = fl;
    r->mag = nmo_mag_fin(r, mg);
    nmo_fe_fix(r);
}

/* The weight of the last set bit of a nonzero finite double: v = m 2^e with m odd -> 2^e. */
static inline double nmo_fe_lowbit(double v)
{
    int e;
    double m = frexp(fabs(v), &e);
    uint64_t b = (uint64_t)ldexp(m, 53);
    return ldexp(1.0, e - 53 + __builtin_ctzll(b));
}

/* The exact case of nmo_fenc_dotk (k = 1, or k = 2 with no inner rounding): every term is
 * a point t_j (the factor, or the product of the two factors) exactly representable in
 * compute and in acc; Q = the smallest lowbit(t_j) over the nonzero terms. When
 * sum |t_j| < 2^p_acc Q (and, under ftz, Q >= the smallest normal of acc), every partial
 * sum of every tree is a multiple of Q smaller than 2^p_acc Q in magnitude: exactly
 * representable, so every addition and every FMA is exact and the result is the exact
 * sum (DESIGN §4's `exact`: the accumulator provably loses nothing; e.g. 16-bit inputs of
 * bounded dynamic range summed in fp32). Under that condition the binary64 sum below is
 * exact too (multiples of Q below 2^53 Q), so both engines decide and compute it with
 * these same double operations. term(j, &a, &b) gives the point factors (0: not points). */
static inline int nmo_fe_sum_exact_core(nmo_fmt cf, nmo_fmt af, int ftz, int k,
                                        const double *a, const double *b, int64_t n, double *s)
{
    double Q = INFINITY, A = 0, S = 0;
    for (int64_t j = 0; j < n; j++) {
        double t = k == 1 ? a[j] : a[j] * b[j];
        if (k == 2 && fma(a[j], b[j], -t) != 0) return 0;
        if (t == 0) continue;
        if (nmo_fmt_round(cf, t, NMO_RNE, ftz) != t || nmo_fmt_round(af, t, NMO_RNE, ftz) != t) return 0;
        double q = nmo_fe_lowbit(t);
        Q = q < Q ? q : Q;
        A += fabs(t);
        S += t;
    }
    if (Q == INFINITY) { *s = 0; return 1; }
    const nmo_fmt_info *ai = nmo_fmt_get(af);
    if (ftz && Q < ai->min_normal) return 0;
    if (!(A < ldexp(Q, ai->prec))) return 0;
    *s = S;
    return 1;
}

static inline int nmo_fe_dotk_exact(nmo_fctx *c, const nmo_fenc *const *f, int k, int64_t n,
                                    double *s)
{
    double *a = nmo_fctx_dvec(c, 6, n > 0 ? n : 1), *b = k == 2 ? nmo_fctx_dvec(c, 7, n > 0 ? n : 1) : NULL;
    if (!a || (k == 2 && !b)) return 0;
    for (int64_t j = 0; j < n; j++) {
        if (f[0][j].lo != f[0][j].hi || (k == 2 && f[1][j].lo != f[1][j].hi)) return 0;
        a[j] = f[0][j].lo;
        if (k == 2) b[j] = f[1][j].lo;
    }
    return nmo_fe_sum_exact_core(c->cf, c->af, c->ftz, k, a, b, n, s);
}

/* Sum over j < n of the product of k <= 8 factors f[0][j] .. f[k-1][j] (enclosures):
 * each term computed in compute with `rounds` inner roundings in any association, the
 * terms accumulated in acc in any order and tree, the last multiplication of each term
 * fused (FMA) or rounded. Term: T_j = P_j (1 +- g) +- eta_j (as nmo_fenc_prodk, g =
 * nmo_fe_gamma(u_c, rounds), eta_j = 2 rounds eta_c R_j); accumulation: the dot-product
 * bound n u_a sum|T_j| + n eta_a (2n min_normal under ftz) (Jeannerod & Rump 2013,
 * Thm 4.2, the last multiplication's operands being floating-point numbers); k = 1 (a
 * plain sum, rounds = 0): (n-1) u_a sum|x_j| (Thm 4.1), + (n-1) min_normal under ftz.
 * Inner products that may overflow (nmo_fe_partial_ovf): "anything". Sums that the
 * accumulator provably holds exactly (nmo_fe_sum_exact_core): the exact sum.
 * Total: [sum P_lo - E, sum P_hi + E], E = K u_a A' + g A + sum eta_j + keta_a with
 * A = sum max|P_j|, A' = A (1 + g) + sum eta_j >= sum |T_j|, K = n or n - 1.
 * binary64 error of sum P and A: (n + k) 2^-53 A, taken as (n + k + 4) 2^-52 A. */
static inline void nmo_fenc_dotk(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *const *f, int k,
                                 int64_t n, int rounds)
{
    double mg = 0;
    for (int64_t j = 0; j < n; j++) mg += nmo_mag_prodk(f, k, j);
    uint32_t fl = 0;
    int mustnan = 0, nonfin = 0;
    double slo = 0, shi = 0, A = 0, SR = 0, Rmax = 0;
    for (int64_t j = 0; j < n; j++) {
        double lo = f[0][j].lo, hi = f[0][j].hi, R = fmax(1, fmax(fabs(lo), fabs(hi)));
        fl |= f[0][j].flags;
        mustnan |= lo != lo;
        nonfin |= !isfinite(lo) || !isfinite(hi);
        for (int i = 1; i < k; i++) {
            double bl = f[i][j].lo, bh = f[i][j].hi;
            fl |= f[i][j].flags;
            mustnan |= bl != bl;
            nonfin |= !isfinite(bl) || !isfinite(bh);
            double p1 = lo * bl, p2 = lo * bh, p3 = hi * bl, p4 = hi * bh;
            lo = fmin(fmin(p1, p2), fmin(p3, p4));
            hi = fmax(fmax(p1, p2), fmax(p3, p4));
            R *= fmax(1, fmax(fabs(bl), fabs(bh)));
        }
        slo += lo;
        shi += hi;
        A += fmax(fabs(lo), fabs(hi));
        SR += R;
        Rmax = fmax(Rmax, R);
    }
    if (mustnan) { nmo_fenc_set_nan(r, fl); return; }
    if (nonfin || slo != slo || shi != shi) { nmo_fenc_set_all(r, fl); return; }
    double sx;
    if ((k == 1 || (k == 2 && rounds == 0)) && nmo_fe_dotk_exact(c, f, k, n, &sx)) {
        r->lo = r->hi = sx;
        r->flags = fl | c->force_unc;
        r->mag = mg;
        return;
    }
    double g = nmo_fe_gamma(c->uc, rounds), eta_in = 2.0 * rounds * c->etac * SR;
    if (rounds > 0 && nmo_fe_partial_ovf(c, Rmax * (1 + g) + 2.0 * rounds * c->etac * Rmax, &fl)) {
        nmo_fenc_set_all(r, fl);
        return;
    }
    double K = nmo_fe_red_k(c, n, n, k != 1), keta_a; /* n - 1 or n for sum=any */
    if (k == 1) keta_a = c->ftz && n > 1 ? (double)(n - 1) * c->etaa : 0;
    else keta_a = (c->ftz ? 2.0 : 1.0) * (double)n * c->etaa;
    if (!(K < INFINITY)) { nmo_fenc_set_all(r, fl); return; }
    double a2 = A * (1 + g) + eta_in;
    double keta = g * A + eta_in + keta_a;
    double err = (double)(n + k + 4) * 0x1p-52 * A * (1 + g) + (keta + eta_in) * 0x1p-48;
    nmo_fe_red_finish(c, r, slo, shi, a2, K, keta, err, fl);
    r->mag = nmo_mag_fin(r, mg);
}


/* The fused scale/shift form of an affine normalization, y = x*a + (b - m*a), with the
 * SAME scale a in both products (cuDNN, PyTorch's group_norm / batch_norm fused params):
 * sh = RN(b - RN(m a)) or fma(-m, a, b); y = RN(RN(x a) + sh) or fma(x, a, sh). With
 * |delta| <= u per rounding (Higham, ASNA 2nd ed., §2.2):
 *   t1 + sh = a (x - m) + b + e,  |e| <= u (1 + 2u) (|x a| + |b| + 2 |m a|) + 4 eta_c
 * (four roundings that may underflow, or flush under ftz), and y = RN(t1 + sh): the
 * snap of [C_lo - E0, C_hi + E0], C = a (x - m) + b evaluated exactly over the
 * enclosures (x - m exact, not rounded): the correlation of the two products is kept,
 * which evaluating the steps as independent intervals would lose (a rows-long mean
 * times a wide scale cancels in the exact expression, not in interval arithmetic).
 * binary64 error: x - m, the corner products and + b, radius (3 |D| A + |b|) 2^-52 +
 * E0 2^-50. */
static inline void nmo_fenc_scale_shift(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *x,
                                        const nmo_fenc *a, const nmo_fenc *m, const nmo_fenc *b)
{
    uint32_t fl = x->flags | a->flags | m->flags | b->flags;
    if (nmo_fenc_is_nan(x) || nmo_fenc_is_nan(a) || nmo_fenc_is_nan(m) || nmo_fenc_is_nan(b)) {
        nmo_fenc_set_nan(r, fl);
        return;
    }
    if (!isfinite(x->lo) || !isfinite(x->hi) || !isfinite(a->lo) || !isfinite(a->hi) ||
        !isfinite(m->lo) || !isfinite(m->hi) || !isfinite(b->lo) || !isfinite(b->hi)) {
        nmo_fenc_set_all(r, fl);
        return;
    }
    double dl = x->lo - m->hi, dh = x->hi - m->lo;
    /* scale: x*a and m*a combined with b */
    double am = nmo_mag_abs(a->lo, a->hi);
    double mg = nmo_mag_mul(x->mag, nmo_mag_abs(x->lo, x->hi), a->mag, am) +
                nmo_mag_mul(m->mag, nmo_mag_abs(m->lo, m->hi), a->mag, am) + b->mag;
    double p1 = dl * a->lo, p2 = dl * a->hi, p3 = dh * a->lo, p4 = dh * a->hi;
    double clo = fmin(fmin(p1, p2), fmin(p3, p4)) + b->lo;
    double chi = fmax(fmax(p1, p2), fmax(p3, p4)) + b->hi;
    double A = fmax(fabs(a->lo), fabs(a->hi)), X = fmax(fabs(x->lo), fabs(x->hi));
    double Mv = fmax(fabs(m->lo), fabs(m->hi)), B = fmax(fabs(b->lo), fabs(b->hi));
    double e0 = c->uc * (1 + 2 * c->uc) * (X * A + B + 2 * Mv * A) + 4 * c->etac;
    double vlo = clo - e0, vhi = chi + e0;
    if (!isfinite(vlo) || !isfinite(vhi)) { nmo_fenc_set_all(r, fl); return; }
    double e = (3 * fmax(fabs(dl), fabs(dh)) * A + B) * 0x1p-52 + e0 * 0x1p-50;
    r->lo = nmo_fe_snap(c, c->cf, NMO_RNE, vlo, e, &fl);
    r->hi = nmo_fe_snap(c, c->cf, NMO_RNE, vhi, e, &fl);
    r->flags = fl;
    r->mag = nmo_mag_fin(r, mg);
    nmo_fe_fix(r);
}

/* ---- sharpened reductions (softmax family) ---------------------------------------------
 * Two refinements of the any-order bounds above, both rigorous for RN in acc:
 *  - an addition with an operand that is exactly 0 is exact, so only the k terms whose
 *    enclosure is not [0, 0] count: (k-1) u A (Jeannerod & Rump 2013 on those k terms);
 *  - dominant term: let t* be the term with the largest |bound| and R the sum of the other
 *    |bounds|. An addition on the path from t* to the root adds a float b to a float a
 *    and errs by at most |b| (a itself is a candidate), and the b's are disjoint partial
 *    sums of the other terms; every other addition errs by at most u times a partial sum
 *    of the other terms. Hence |error| <= R (1+u)^(k-2) (1 + (k-2) u) <= R (1 + 4 k u)
 *    for k u <= 1/4 (needs the terms to be acc floats: acc at least as precise as
 *    compute). A sum dominated by one term (a peaked softmax: 1 + tiny terms) is then
 *    nearly exact instead of (k-1) u wide.
 * For dot products whose products are all acc floats the same sum bounds apply; otherwise
 * (products rounded or fused) k u A, or u |p*| + R (1 + 8 k u) for k u <= 1/8 (the first
 * operation on p* errs by u |p*| plus u times a partial sum of the others).
 * The model error em = min(...) + the underflow term; the binary64 value of em has
 * relative error <= (n + 8) 2^-52 (sums of n non-negative terms, a few products). */
/* dom: the R bound was taken and [dlo, dhi] is the dominant term (acc floats), R the
 * others' |bounds|: then slo - em <= dlo <= dhi <= shi + em exactly (em >= R), and
 * slo - em >= dlo - (R + em): when R + em is below the gap to the neighbour the snap is
 * the dominant endpoint itself, decided without a radius (a peaked softmax sums to
 * 1 + tiny: binary64 cannot resolve 1 + tiny, this argument can). */
/* em_rel: the relative error of the binary64 em ((n + 8) 2^-52 for naive sums). */
static inline void nmo_fe_red_finish_em_rel(nmo_fctx *c, nmo_fenc *r, double slo, double shi,
                                            double a_d, double kt, double em, double keta,
                                            double err, int64_t n, uint32_t fl, int dom,
                                            double dlo, double dhi, double R, double em_rel)
{
    if (!(fabs(slo) <= 0x1p1000 && fabs(shi) <= 0x1p1000 && a_d <= 0x1p1000) || !(kt < INFINITY)) {
        nmo_fenc_set_all(r, fl);
        return;
    }
    double e = err + em * em_rel + keta * 0x1p-51;
    em += keta;
    double vlo = slo - em, vhi = shi + em;
    double w = (R + em) * (1 + (double)(n + 16) * 0x1p-52);
    if (e == 0 && em == 0) { /* exact sums (binary64 too): no radius */
        r->lo = nmo_fe_round(c, c->af, vlo, NMO_RU);
        r->hi = nmo_fe_round(c, c->af, vhi, NMO_RD);
        fl |= c->force_unc;
    } else if (dom && !c->ftz && w < dlo - nmo_fmt_next_down(c->af, dlo)) {
        r->lo = dlo;
        fl |= c->force_unc;
    } else {
        r->lo = nmo_fe_snap(c, c->af, NMO_RU, vlo, e, &fl);
    }
    if (e == 0 && em == 0) {
        /* set above */
    } else if (dom && !c->ftz && w < nmo_fmt_next_up(c->af, dhi) - dhi) {
        r->hi = dhi;
        fl |= c->force_unc;
    } else {
        r->hi = nmo_fe_snap(c, c->af, NMO_RD, vhi, e, &fl);
    }
    r->flags = fl;
    nmo_fe_fix(r);
    double top = a_d * (1 + kt * c->ua) + keta;
    if (fabs(top - c->maxfin_a) <= c->maxfin_a * 0x1p-30) r->flags |= NMO_EF_UNC;
    if (top >= c->maxfin_a) nmo_fenc_set_all(r, r->flags);
}

static inline void nmo_fe_red_finish_em(nmo_fctx *c, nmo_fenc *r, double slo, double shi,
                                        double a_d, double kt, double em, double keta, double err,
                                        int64_t n, uint32_t fl, int dom, double dlo, double dhi,
                                        double R)
{
    nmo_fe_red_finish_em_rel(c, r, slo, shi, a_d, kt, em, keta, err, n, fl, dom, dlo, dhi, R,
                             (double)(n + 8) * 0x1p-52);
}

/* s += p with its rounding error added to comp (TwoSum, Knuth): one step of Sum2. */
#define NMO_FE_TWOSUM_ACC(s, comp, p)                                                      \
    do {                                                                                   \
        double t_ = (s) + (p), z_ = t_ - (s);                                              \
        (comp) += ((s) - (t_ - z_)) + ((p) - z_);                                          \
        (s) = t_;                                                                          \
    } while (0)

/* Sum of n enclosures in any order and tree shape, in acc, with the sharpened bound:
 * min((k-1) u A, R (1 + 4 k u)) (+ (n-1) min_normal under ftz). */
static inline void nmo_fenc_sum_sharp(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *x, int64_t n)
{
    double slo = 0, shi = 0, a = 0, big = -1, R = 0;
    int64_t ib = -1, k = 0;
    uint32_t fl = 0;
    int mustnan = 0;
    for (int64_t i = 0; i < n; i++) {
        slo += x[i].lo;
        shi += x[i].hi;
        double m = fmax(fabs(x[i].lo), fabs(x[i].hi));
        a += m;
        if (m > big) big = m, ib = i;
        k += x[i].lo != 0 || x[i].hi != 0;
        fl |= x[i].flags;
        mustnan |= x[i].lo != x[i].lo;
    }
    if (mustnan) { nmo_fenc_set_nan(r, fl); return; }
    for (int64_t i = 0; i < n; i++)
        if (i != ib) R += fmax(fabs(x[i].lo), fabs(x[i].hi));
    double kj = nmo_fe_red_k(c, n, k, 0); /* k - 1 for sum=any */
    double em = kj * c->ua * a;
    int dom = 0;
    if (c->ua <= c->uc && (double)k * c->ua <= 0.25) {
        double er = R * (1 + 4 * (double)k * c->ua);
        if (er < em) em = er, dom = ib >= 0;
    }
    double keta = c->ftz && n > 1 ? (double)(n - 1) * c->etaa : 0;
    double mg = nmo_mag_sum(x, n);
    nmo_fe_red_finish_em(c, r, slo, shi, a, kj, em, keta, (double)n * 0x1p-53 * a, n, fl, dom,
                         dom ? x[ib].lo : 0, dom ? x[ib].hi : 0, R);
    r->mag = nmo_mag_fin(r, mg);
    if (!(r->flags & NMO_EF_UNC) || (fl & NMO_EF_UNC) || c->force_unc || n < 2) return;
    /* The naive binary64 sums err by up to n 2^-53 A: over millions of terms (a scalar loss
     * over a whole tensor) that radius leaves the snap undecided about one time in ten and
     * the unit escalated (500 s for a 4096x4096 kl_div). Redo the four sums compensated:
     * Sum2 (Ogita, Rump & Oishi 2005, Prop. 4.5): |res - s| <= 2^-53 |s| + g^2 sum|p|,
     * g = gamma_{n-1} = (n-1) 2^-53 / (1 - (n-1) 2^-53); the same bound, a tighter radius. */
    double s1 = 0, c1 = 0, s2 = 0, c2 = 0, s3 = 0, c3 = 0, s4 = 0, c4 = 0;
    for (int64_t i = 0; i < n; i++) {
        double m = fmax(fabs(x[i].lo), fabs(x[i].hi));
        NMO_FE_TWOSUM_ACC(s1, c1, x[i].lo);
        NMO_FE_TWOSUM_ACC(s2, c2, x[i].hi);
        NMO_FE_TWOSUM_ACC(s3, c3, m);
        if (i != ib) NMO_FE_TWOSUM_ACC(s4, c4, m);
    }
    slo = s1 + c1, shi = s2 + c2, a = s3 + c3, R = s4 + c4;
    if (!isfinite(slo) || !isfinite(shi) || !isfinite(a) || !(a <= 0x1p1000)) return;
    double g = (double)n * 0x1p-53 * 1.01, gg = g * g;
    em = kj * c->ua * a;
    dom = 0;
    if (c->ua <= c->uc && (double)k * c->ua <= 0.25) {
        double er = R * (1 + 4 * (double)k * c->ua);
        if (er < em) em = er, dom = ib >= 0;
    }
    /* a and R err by <= (2^-53 + g^2) relative, em and er add up to two roundings more */
    double err = 0x1p-52 * fmax(fabs(slo), fabs(shi)) + 2 * gg * a;
    nmo_fe_red_finish_em_rel(c, r, slo, shi, a, kj, em, keta, err, n, fl, dom,
                             dom ? x[ib].lo : 0, dom ? x[ib].hi : 0, R, 0x1p-50 + 2 * gg);
    r->mag = nmo_mag_fin(r, mg);
    if (!(r->flags & NMO_EF_UNC)) return;
    /* Still undecided: an endpoint of the bound lies on the lattice itself or within the
     * radius of it (terms that are exact multiples of one another, e.g. a near-uniform
     * kl_div over 16M elements whose terms are all equal: every sum is exact and the
     * endpoint is an fp32 value). Finish the sum in the certified engine from these
     * same terms (exact sums, one rounding: nmo_cenc_sum_sharp_fenc) instead of
     * escalating the unit, which recomputes every term in MPFR (550 s at 16M terms). */
    struct nmo_cctx *cc = nmo_fctx_cert(c);
    if (cc && nmo_cenc_sum_sharp_fenc(cc, r, x, n) == 0) c->n_sum_cert++;
}


/* Dot product of two point vectors (input values) in any order, FMA or not, in acc, with
 * the sharpened bounds (exact products: as nmo_fenc_sum_sharp; else min(k u A,
 * u |p*| + R (1 + 8 k u))) plus the underflow term. Exact products that are all
 * multiples of a quantum q with A < q / u (gradual underflow): every partial sum is a
 * multiple of q below q 2^p in magnitude, hence an acc float: every order is exact. */
static inline void nmo_fenc_dot_sharp_d(nmo_fctx *c, nmo_fenc *r, const double *x, const double *y,
                                        int64_t n)
{
    double s = 0, a = 0, big = -1, R = 0;
    int64_t ib = -1, k = 0;
    int exact = 1;
    for (int64_t i = 0; i < n; i++) {
        double p = x[i] * y[i], ap = fabs(p);
        s += p;
        a += ap;
        if (ap > big) big = ap, ib = i;
        k += p != 0;
        if (exact && p != 0 && nmo_fmt_round(c->af, p, NMO_RNE, c->ftz) != p) exact = 0;
    }
    if (s != s || !(a <= INFINITY)) {
        int nan_in = 0;
        for (int64_t i = 0; i < n; i++) nan_in |= (x[i] != x[i]) | (y[i] != y[i]);
        if (nan_in) { nmo_fenc_set_nan(r, 0); return; }
        nmo_fenc_set_all(r, 0);
        return;
    }
    for (int64_t i = 0; i < n; i++)
        if (i != ib) R += fabs(x[i] * y[i]);
    double kd = (double)k, em, kt, keta;
    int dom = 0;
    double q = INFINITY;
    if (exact && !c->ftz)
        for (int64_t i = 0; i < n; i++) {
            double p = x[i] * y[i];
            if (p != 0) q = fmin(q, nmo_fe_lowbit(p));
        }
    if (exact && !c->ftz && k > 0 && a < q / c->ua) {
        kt = nmo_fe_red_k(c, n, k, 0);
        em = 0; /* a is exact here, and so is s */
        keta = 0;
    } else if (exact) {
        kt = nmo_fe_red_k(c, n, k, 0); /* k - 1 for sum=any */
        em = kt * c->ua * a;
        if (kd * c->ua <= 0.25) {
            double er = R * (1 + 4 * kd * c->ua);
            if (er < em) em = er, dom = ib >= 0;
        }
        keta = c->ftz ? 2.0 * (double)n * c->etaa : 0;
    } else {
        kt = nmo_fe_red_k(c, n, k, 1); /* k for sum=any */
        em = kt * c->ua * a;
        if (kd * c->ua <= 0.125) {
            double er = c->ua * big + R * (1 + 8 * kd * c->ua);
            if (er < em) em = er;
        }
        keta = (c->ftz ? 2.0 : 1.0) * (double)n * c->etaa;
    }
    keta += nmo_fe_daz_term(c->ftz, c->minnorm_c, x, y, n);
    double pd = dom ? x[ib] * y[ib] : 0;
    double err = em == 0 && keta == 0 && exact ? 0 : (double)n * 0x1p-53 * a;
    nmo_fe_red_finish_em(c, r, s, s, a, kt, em, keta, err, n, 0, dom, pd, pd, R);
    nmo_fe_dot_mag(c, r, a, (double)n * 0x1p-53 * 1.01);
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
    double slo = 0, shi = 0, a = 0, mg = 0;
    int64_t z = 0; /* exactly zero terms: dropped, k reduced by their count */
    for (int64_t i = 0; i < n; i++) {
        double p1 = x[i].lo * y[i], p2 = x[i].hi * y[i];
        slo += fmin(p1, p2);
        shi += fmax(p1, p2);
        a += fmax(fabs(p1), fabs(p2));
        z += (x[i].lo == 0 && x[i].hi == 0) || y[i] == 0;
        double ay = fabs(y[i]);
        mg += nmo_mag_mul(x[i].mag, nmo_mag_abs(x[i].lo, x[i].hi), ay, ay);
    }
    double keta = (c->ftz ? 2.0 : 1.0) * fmax(k, (double)n) * c->etaa;
    if (c->ftz) { /* subnormal points y_i read as 0 (max |x_i| of the enclosures) */
        double d = 0;
        for (int64_t i = 0; i < n; i++)
            d = nmo_fe_daz_add(d, c->minnorm_c, fmax(fabs(x[i].lo), fabs(x[i].hi)), y[i]);
        keta += nmo_fe_daz_finish(d, n);
    }
    nmo_fe_red_finish(c, r, slo, shi, a, fmax(k - (double)z, 0), keta, (double)n * 0x1p-53 * a, fl);
    r->mag = nmo_mag_fin(r, mg);
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
    double m = a->mag;
    r->lo = lo;
    r->hi = hi;
    r->flags = fl | c->force_unc;
    r->mag = nmo_mag_fin(r, m);
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
