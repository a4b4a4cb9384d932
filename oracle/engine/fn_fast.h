/* numoracle: fast enclosure engine, n-ulp results over an enclosure: sqrt, rsqrt, exp, log, tanh, erf, sigmoid, and
 * the n-ulp division helpers (nmo_fe_div_apx, nmo_fe_div_si_apx) enc_div uses.
 * Part of engine/enc_fast.h, which includes the family headers in order (each uses
 * the ones before it); include engine/enc_fast.h, never this file. The certified
 * mirror of each primitive: fn_cert.c. */
#ifndef NUMORACLE_FN_FAST_H
#define NUMORACLE_FN_FAST_H
#ifndef NUMORACLE_ENC_FAST_H
#error "include engine/enc_fast.h"
#endif

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
    double amax = fmax(fabs(a->lo), fabs(a->hi));
    int n = c->exp_flat ? c->plan.fn_ulps[NMO_FN_EXP] : nmo_plan_exp_ulps(&c->plan, amax);
    /* near a step of an argument-dependent figure the certified engine's amax (its own
     * endpoints) may fall on the other side: leave it to that engine */
    if (n != c->plan.fn_ulps[NMO_FN_EXP] && (nmo_plan_exp_ulps(&c->plan, amax * (1 + 0x1p-40)) != n ||
                                             nmo_plan_exp_ulps(&c->plan, amax * (1 - 0x1p-40)) != n))
        fl |= NMO_EF_UNC;
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
    /* a measured overflow edge (nmo_plan_exp_inf_from, fn=triton: ex2.approx): +inf
     * exactly at and above it, finite below */
    double tinf = c->cf == NMO_FP32 ? nmo_plan_exp_inf_from(&c->plan) : INFINITY;
    if (tinf < INFINITY && a->lo >= tinf) lo = INFINITY;
    else if (tinf < INFINITY && a->hi < tinf && hi == INFINITY) hi = nmo_fmt_get(c->cf)->max_finite;
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
 * by a small ulp figure, so it is modelled step by step). A plan whose sigmoid is the
 * formula (nmo_plan_sigmoid_composed: Triton's tl.sigmoid) takes the formula alone. */
static inline void nmo_fenc_sigmoid(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *a)
{
    nmo_fenc s1, t, one;
    nmo_fenc_neg(c, &t, a);
    nmo_fenc_exp(c, &t, &t);
    nmo_fenc_const(c, &one, 1.0);
    nmo_fenc_add(c, &t, &one, &t);
    nmo_fenc_div(c, &t, &one, &t);
    if (nmo_plan_sigmoid_composed(&c->plan)) { *r = t; return; } /* the formula only */
    nmo_fe_incr(c, &s1, a, NMO_FN_SIGMOID);
    nmo_fenc_hull(c, r, &s1, &t);
}

#endif
