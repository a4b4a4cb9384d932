/* numoracle: fast enclosure engine, elementary primitives: set, constants, + - * /, fma, max/min, hull, the rounding
 * points (enc_round) and export.
 * Part of engine/enc_fast.h, which includes the family headers in order (each uses
 * the ones before it); include engine/enc_fast.h, never this file. The certified
 * mirror of each primitive: elem_cert.c. */
#ifndef NUMORACLE_ELEM_FAST_H
#define NUMORACLE_ELEM_FAST_H
#ifndef NUMORACLE_ENC_FAST_H
#error "include engine/enc_fast.h"
#endif

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

static inline void nmo_fenc_export(nmo_fctx *c, nmo_fenc *dst, const nmo_fenc *src)
{
    (void)c;
    *dst = *src;
}

#endif
