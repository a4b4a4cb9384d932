/* numoracle: the certified engine's private helpers, shared by its family files
 * (enc_cert.c and the *_cert.c next to each *_fast.h): working precision, snapping MPFR
 * values to a lattice, the error scale, Ziv loops and n-ulp sides, the reduction finish.
 * Static inline: each family file compiles the ones it uses. */
#ifndef NUMORACLE_CERT_PRIV_H
#define NUMORACLE_CERT_PRIV_H

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/enc_cert.h"
#include "engine/enc_fast.h"


/* Products of three binary64 values need 159 bits; 256 holds every product and sum of
 * two lattice values we form exactly. */
#define WP 256

static inline double ce_round(const nmo_cctx *c, nmo_fmt f, mpfr_srcptr x, nmo_rnd r)
{
    return nmo_fmt_round_mpfr(f, x, r, c->ftz);
}

static inline void ce_set_nan(nmo_cenc *r, uint32_t fl)
{
    mpfr_set_nan(r->lo);
    mpfr_set_nan(r->hi);
    r->flags = fl | NMO_EF_NAN;
    r->mag = 0;
}

static inline void ce_set_all(nmo_cenc *r, uint32_t fl)
{
    mpfr_set_inf(r->lo, -1);
    mpfr_set_inf(r->hi, 1);
    r->flags = fl | NMO_EF_NAN;
    r->mag = INFINITY;
}

/* The error scale (enc_fast.h, "error scale"): the fast engine's binary64 formulas on the
 * same lattice endpoints, which are doubles here too (mpfr_get_d is exact on them). */
static inline double ce_lo(const nmo_cenc *a) { return mpfr_get_d(a->lo, MPFR_RNDN); }
static inline double ce_hi(const nmo_cenc *a) { return mpfr_get_d(a->hi, MPFR_RNDN); }
static inline double ce_abs(const nmo_cenc *a) { return nmo_mag_abs(ce_lo(a), ce_hi(a)); }

/* m, or +inf for an unbounded result (nmo_mag_fin) */
static inline void ce_mag(nmo_cenc *r, double m)
{
    r->mag = mpfr_number_p(r->lo) && mpfr_number_p(r->hi) ? m : INFINITY;
}

static inline int ce_is_nan(const nmo_cenc *a) { return mpfr_nan_p(a->lo); }

static inline void ce_fix(nmo_cenc *r)
{
    if (mpfr_nan_p(r->lo) || mpfr_nan_p(r->hi)) ce_set_all(r, r->flags);
}

static inline void ce_setd2(nmo_cenc *r, double lo, double hi, uint32_t fl)
{
    mpfr_set_d(r->lo, lo, MPFR_RNDN);
    mpfr_set_d(r->hi, hi, MPFR_RNDN);
    r->flags = fl;
    ce_fix(r);
}

static inline mpfr_ptr *ce_ptrs(nmo_cctx *c, int64_t n)
{
    if (n > c->pcap) {
        free(c->pbuf);
        c->pbuf = malloc((size_t)n * sizeof(mpfr_ptr));
        c->pcap = c->pbuf ? n : 0;
    }
    return c->pbuf;
}

/* Exact product interval: lo/hi get min/max of the four endpoint products, computed at
 * the sum of the operand precisions (exact). lo/hi must be at least that precise.
 * Returns 0 when a product is NaN (0 * inf). */
static inline int ce_mul_exact(nmo_cctx *c, mpfr_ptr lo, mpfr_ptr hi, mpfr_srcptr alo, mpfr_srcptr ahi,
                        mpfr_srcptr blo, mpfr_srcptr bhi)
{
    (void)c;
    mpfr_t p;
    mpfr_init2(p, mpfr_get_prec(alo) + mpfr_get_prec(blo));
    mpfr_srcptr as[2] = {alo, ahi}, bs[2] = {blo, bhi};
    int ok = 1, first = 1;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            mpfr_set_prec(p, mpfr_get_prec(as[i]) + mpfr_get_prec(bs[j]));
            mpfr_mul(p, as[i], bs[j], MPFR_RNDN);
            if (mpfr_nan_p(p)) ok = 0;
            if (first || mpfr_less_p(p, lo)) mpfr_set(lo, p, MPFR_RNDD);
            if (first || mpfr_greater_p(p, hi)) mpfr_set(hi, p, MPFR_RNDU);
            first = 0;
        }
    mpfr_clear(p);
    return ok;
}

typedef int (*ce_fn)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t);

/* RN(f(x)) by a Ziv loop: evaluate f rounded down and up at growing precision until both
 * round to the same lattice value. */
static inline double ce_fn_rn(nmo_cctx *c, ce_fn f, mpfr_srcptr x)
{
    double a = 0;
    for (mpfr_prec_t p = WP; p <= 8 * WP; p *= 2) {
        mpfr_t d, u;
        mpfr_inits2(p, d, u, (mpfr_ptr)0);
        f(d, x, MPFR_RNDD);
        f(u, x, MPFR_RNDU);
        a = ce_round(c, c->cf, d, NMO_RNE);
        double b = ce_round(c, c->cf, u, NMO_RNE);
        mpfr_clears(d, u, (mpfr_ptr)0);
        if (a == b) break;
    }
    return a;
}

/* Mirrors nmo_fe_fn_side: y -+ n ulp(y) snapped inward, y known to lie in [d, u] (n >= 1).
 * The ulp is that of the larger magnitude M = max(|d|, |u|), read toward zero so that
 * it stays in its binade; when d != u, y is strictly inside (it is not a WP-bit number),
 * so |y| <= nextbelow(M): erf(20) = 1 - 5e-176 has the ulp of 0.75 although u = 1.
 * Where the estimates straddle a binade this is the larger ulp (sound), and the fast
 * engine is uncertain. */
static inline double ce_side(nmo_cctx *c, mpfr_ptr d, mpfr_ptr u, int n, int upper)
{
    if (!mpfr_number_p(d) || !mpfr_number_p(u)) return mpfr_get_d(upper ? u : d, MPFR_RNDN);
    mpfr_t t;
    mpfr_init2(t, mpfr_get_prec(d) + 64);
    if (mpfr_cmpabs(d, u) > 0) mpfr_abs(t, d, MPFR_RNDN);
    else mpfr_abs(t, u, MPFR_RNDN);
    if (mpfr_cmp(d, u) != 0) mpfr_nextbelow(t);
    double ulp = nmo_fmt_ulp(c->cf, mpfr_get_d(t, MPFR_RNDZ));
    mpfr_set_d(t, ulp, MPFR_RNDN);
    mpfr_mul_si(t, t, n, MPFR_RNDU);
    double res;
    if (upper) {
        mpfr_add(t, u, t, MPFR_RNDU);
        res = ce_round(c, c->cf, t, NMO_RD);
    } else {
        mpfr_sub(t, d, t, MPFR_RNDD);
        res = ce_round(c, c->cf, t, NMO_RU);
    }
    mpfr_clear(t);
    return res;
}

/* f(x) -+ n ulp(f(x)), snapped inward (n = 0: RN by the Ziv loop). */
static inline double ce_fn_side(nmo_cctx *c, ce_fn f, mpfr_srcptr x, int n, int upper)
{
    if (n == 0) return ce_fn_rn(c, f, x);
    mpfr_t d, u;
    mpfr_inits2(WP, d, u, (mpfr_ptr)0);
    f(d, x, MPFR_RNDD);
    f(u, x, MPFR_RNDU);
    double res = ce_side(c, d, u, n, upper);
    mpfr_clears(d, u, (mpfr_ptr)0);
    return res;
}

static inline double ce_pow2_above_d(double v) { return nmo_fe_pow2_above(v); }

/* Mirrors nmo_fe_apx_fix: the power of two inside the range of exact values
 * [ylo, yhi], ylo in [dl, ul], yhi in [dh, uh]. Both powers of two next to an
 * uncertain ylo are tried (only lowers lo: sound). */
static inline void ce_apx_fix(nmo_cctx *c, double *lo, double *hi, mpfr_srcptr dl, mpfr_srcptr ul, mpfr_srcptr dh,
                       mpfr_srcptr uh, int n)
{
    if (n == 0) return;
    double mf = nmo_fmt_get(c->cf)->max_finite;
    double vd = mpfr_get_d(dl, MPFR_RNDD), vu = mpfr_get_d(ul, MPFR_RNDU);
    /* y strictly inside (d, u) when d != u: yhi >= P needs uh > P, or uh == P exact */
    int exh = mpfr_equal_p(dh, uh), exl = mpfr_equal_p(dl, ul);
    if (vd > 0 && isfinite(vu)) {
        for (int k = 0; k < 2; k++) {
            double P = ce_pow2_above_d(k ? vu : vd);
            int cmp = mpfr_cmp_d(uh, P);
            if (P <= mf && (cmp > 0 || (cmp == 0 && exh))) {
                double u = nmo_fmt_ulp(c->cf, P);
                *lo = fmin(*lo, nmo_fmt_round(c->cf, P - n * u, NMO_RU, c->ftz));
            }
        }
    }
    vd = mpfr_get_d(dh, MPFR_RNDD), vu = mpfr_get_d(uh, MPFR_RNDU);
    if (vu < 0 && isfinite(vd)) {
        for (int k = 0; k < 2; k++) {
            double P = ce_pow2_above_d(k ? -vd : -vu);
            int cmp = mpfr_cmp_d(dl, -P);
            if (P <= mf && (cmp < 0 || (cmp == 0 && exl))) {
                double u = nmo_fmt_ulp(c->cf, P);
                *hi = fmax(*hi, nmo_fmt_round(c->cf, n * u - P, NMO_RD, c->ftz));
            }
        }
    }
}

/* Mirrors nmo_fe_apx_ovf. */
static inline void ce_apx_ovf(const nmo_cctx *c, double *lo, double *hi)
{
    double mf = nmo_fmt_get(c->cf)->max_finite;
    if (*hi >= mf) *hi = INFINITY;
    if (*lo <= -mf) *lo = -INFINITY;
    if (*lo > mf) *lo = mf;
    if (*hi < -mf) *hi = -mf;
}

static inline int ce_rcp(mpfr_ptr r, mpfr_srcptr x, mpfr_rnd_t rnd) { return mpfr_ui_div(r, 1, x, rnd); }

/* Mirrors nmo_fe_rcp_side: 1/s for a lattice value s > 0. */
static inline double ce_rcp_side(nmo_cctx *c, double s, int n, int upper)
{
    mpfr_set_d(c->t[4], s, MPFR_RNDN);
    if (n == 0) {
        mpfr_ui_div(c->t[5], 1, c->t[4], MPFR_RNDN);
        return ce_round(c, c->cf, c->t[5], NMO_RNE);
    }
    return ce_fn_side(c, ce_rcp, c->t[4], n, upper);
}

static inline void ce_absmax(mpfr_ptr m, const nmo_cenc *a)
{
    if (mpfr_cmpabs(a->lo, a->hi) > 0) mpfr_abs(m, a->lo, MPFR_RNDN);
    else mpfr_abs(m, a->hi, MPFR_RNDN);
}

/* Mirrors nmo_fe_red_finish: exact-sum bounds slo (rounded down) and shi (up), the
 * absolute-sum bound A (up), k and the underflow term keta. */
static inline double ce_red_k(nmo_cctx *c, int64_t n, int64_t m, int dot)
{
    return nmo_fe_geo_note(&c->geo_over, nmo_plan_red_k(&c->plan, n, m, dot), n);
}
static inline double ce_dot_k(nmo_cctx *c, int64_t n, int64_t m)
{
    return nmo_fe_geo_note(&c->geo_over, nmo_plan_dot_k2(&c->plan, n, m), n);
}

static inline void ce_red_finish(nmo_cctx *c, nmo_cenc *r, mpfr_ptr slo, mpfr_ptr shi, mpfr_ptr A,
                          double k, double keta, uint32_t fl)
{
    if (!(k < INFINITY)) { ce_set_all(r, fl); return; } /* beyond the geometry */
    mpfr_t em, top;
    mpfr_inits2(4 * WP, em, top, (mpfr_ptr)0);
    /* overflow of some partial sum: A (1 + k u) + keta >= max finite */
    mpfr_mul_d(top, A, 1 + k * c->ua, MPFR_RNDU); /* 1 + k u is exact in binary64 here */
    mpfr_add_d(top, top, keta, MPFR_RNDU);
    if (!mpfr_number_p(slo) || !mpfr_number_p(shi) || !mpfr_number_p(top) ||
        mpfr_cmp_d(top, c->maxfin_a) >= 0) {
        ce_set_all(r, fl);
    } else {
        mpfr_mul_d(em, A, k, MPFR_RNDU);
        mpfr_mul_d(em, em, c->ua, MPFR_RNDU);
        mpfr_add_d(em, em, keta, MPFR_RNDU);
        mpfr_sub(slo, slo, em, MPFR_RNDD);
        mpfr_add(shi, shi, em, MPFR_RNDU);
        double lo = ce_round(c, c->af, slo, NMO_RU);
        double hi = ce_round(c, c->af, shi, NMO_RD);
        ce_setd2(r, lo, hi, fl);
    }
    mpfr_clears(em, top, (mpfr_ptr)0);
}

/* The scale of a dot product of input points (nmo_fe_dot_mag): the binade of the exact
 * sum of the n exact |products| p[], from its value rounded down (correctly rounded, so
 * it lies in the binade of the exact sum). */
static inline double ce_dot_mag(mpfr_ptr *p, int64_t n)
{
    mpfr_t s;
    mpfr_init2(s, 64);
    mpfr_sum(s, p, (unsigned long)n, MPFR_RNDD);
    double m = nmo_mag_pow2(mpfr_get_d(s, MPFR_RNDD));
    mpfr_clear(s);
    return m;
}

/* nmo_cenc_dot_d, with split-K partials stored in format pf (< 0: none) */
static inline void ce_dot_d(nmo_cctx *c, nmo_cenc *r, const double *x, const double *y, int64_t n, int pf);

static inline void ce_dot_d(nmo_cctx *c, nmo_cenc *r, const double *x, const double *y, int64_t n, int pf)
{
    int nan_in = 0, inf_in = 0;
    for (int64_t i = 0; i < n; i++) {
        nan_in |= (x[i] != x[i]) | (y[i] != y[i]);
        inf_in |= isinf(x[i]) | isinf(y[i]);
    }
    if (nan_in) { ce_set_nan(r, 0); return; }
    if (inf_in) { ce_set_all(r, 0); return; }
    mpfr_t *pr = malloc((size_t)(n > 0 ? n : 1) * 2 * sizeof(mpfr_t));
    mpfr_ptr *p = ce_ptrs(c, n > 0 ? n : 1);
    int64_t m = 0; /* terms with both factors nonzero (see nmo_fenc_dot_d) */
    for (int64_t i = 0; i < n; i++) m += x[i] != 0 && y[i] != 0;
    for (int64_t i = 0; i < n; i++) {
        mpfr_init2(pr[i], 2 * WP);
        mpfr_set_d(pr[i], x[i], MPFR_RNDN);
        mpfr_mul_d(pr[i], pr[i], y[i], MPFR_RNDN); /* exact */
        mpfr_init2(pr[n + i], 2 * WP);
        mpfr_abs(pr[n + i], pr[i], MPFR_RNDN);
    }
    mpfr_t slo, shi, A;
    mpfr_inits2(4 * WP, slo, shi, A, (mpfr_ptr)0);
    for (int64_t i = 0; i < n; i++) p[i] = pr[i];
    mpfr_sum(slo, p, (unsigned long)n, MPFR_RNDD);
    mpfr_sum(shi, p, (unsigned long)n, MPFR_RNDU);
    for (int64_t i = 0; i < n; i++) p[i] = pr[n + i];
    mpfr_sum(A, p, (unsigned long)n, MPFR_RNDU);
    double mg = ce_dot_mag(p, n);
    for (int64_t i = 0; i < 2 * n; i++) mpfr_clear(pr[i]);
    free(pr);
    double keta = (c->ftz ? 2.0 : 1.0) * (double)n * c->etaa +
                  nmo_fe_daz_term(c->ftz, c->minnorm_c, x, y, n); /* DAZ: as the fast engine */
    double k = ce_dot_k(c, n, (int64_t)m), au = mpfr_get_d(A, MPFR_RNDU);
    if (nmo_gemm_partials_k(&c->plan, pf, n, c->ua, au, au, &k, &keta) == 1) ce_set_all(r, 0);
    else ce_red_finish(c, r, slo, shi, A, k, keta, 0);
    ce_mag(r, mg);
    mpfr_clears(slo, shi, A, (mpfr_ptr)0);
}

#endif
