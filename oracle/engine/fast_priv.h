/* numoracle: fast enclosure engine, the fast engine's private helpers: rounding into a lattice (snaps, ulps, the fp32 try
 * of a double) and the error scale (mag) every primitive carries.
 * Part of engine/enc_fast.h, which includes the family headers in order (each uses
 * the ones before it); include engine/enc_fast.h, never this file. The certified
 * mirror of each primitive: cert_priv.h. */
#ifndef NUMORACLE_FAST_PRIV_H
#define NUMORACLE_FAST_PRIV_H
#ifndef NUMORACLE_ENC_FAST_H
#error "include engine/enc_fast.h"
#endif

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

#endif
