/* numoracle: certified enclosure engine over MPFR. Each function mirrors the formula of
 * the fast primitive of the same name in enc_fast.h (the comments with the sources of
 * the bounds are there); here every formula is evaluated at NMO_CERT_PREC bits with
 * outward rounding, so its snap is the definition of the enclosure. */
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

static double ce_round(const nmo_cctx *c, nmo_fmt f, mpfr_srcptr x, nmo_rnd r)
{
    return nmo_fmt_round_mpfr(f, x, r, c->ftz);
}

static void ce_set_nan(nmo_cenc *r, uint32_t fl)
{
    mpfr_set_nan(r->lo);
    mpfr_set_nan(r->hi);
    r->flags = fl | NMO_EF_NAN;
    r->mag = 0;
}

static void ce_set_all(nmo_cenc *r, uint32_t fl)
{
    mpfr_set_inf(r->lo, -1);
    mpfr_set_inf(r->hi, 1);
    r->flags = fl | NMO_EF_NAN;
    r->mag = INFINITY;
}

/* The error scale (enc_fast.h, "error scale"): the fast engine's binary64 formulas on the
 * same lattice endpoints, which are doubles here too (mpfr_get_d is exact on them). */
static double ce_lo(const nmo_cenc *a) { return mpfr_get_d(a->lo, MPFR_RNDN); }
static double ce_hi(const nmo_cenc *a) { return mpfr_get_d(a->hi, MPFR_RNDN); }
static double ce_abs(const nmo_cenc *a) { return nmo_mag_abs(ce_lo(a), ce_hi(a)); }

/* m, or +inf for an unbounded result (nmo_mag_fin) */
static void ce_mag(nmo_cenc *r, double m)
{
    r->mag = mpfr_number_p(r->lo) && mpfr_number_p(r->hi) ? m : INFINITY;
}

static int ce_is_nan(const nmo_cenc *a) { return mpfr_nan_p(a->lo); }

static void ce_fix(nmo_cenc *r)
{
    if (mpfr_nan_p(r->lo) || mpfr_nan_p(r->hi)) ce_set_all(r, r->flags);
}

static void ce_setd2(nmo_cenc *r, double lo, double hi, uint32_t fl)
{
    mpfr_set_d(r->lo, lo, MPFR_RNDN);
    mpfr_set_d(r->hi, hi, MPFR_RNDN);
    r->flags = fl;
    ce_fix(r);
}

nmo_status nmo_cctx_init(nmo_cctx *c, const nmo_plan *p, nmo_err *err)
{
    memset(c, 0, sizeof *c);
    c->plan = *p;
    c->cf = p->compute;
    c->af = p->acc;
    c->prec = WP;
    c->ftz = p->ftz;
    const nmo_fmt_info *ci = nmo_fmt_get(c->cf), *ai = nmo_fmt_get(c->af);
    if (!ci || !ai) return nmo_err_set(err, NMO_ERR_UNKNOWN_DTYPE, "plan: bad compute/acc format");
    c->uc = ldexp(1.0, -ci->prec);
    c->ua = ldexp(1.0, -ai->prec);
    c->etac = c->ftz ? ci->min_normal : ci->min_subnormal / 2;
    c->etaa = c->ftz ? ai->min_normal : ai->min_subnormal / 2;
    c->minnorm_c = ci->min_normal;
    c->maxfin_a = ai->max_finite;
    c->minsub_c = ci->min_subnormal;
    c->gemm_partials = -1;
    for (int i = 0; i < 6; i++) mpfr_init2(c->t[i], WP);
    return NMO_OK;
}

void nmo_cctx_clear(nmo_cctx *c)
{
    for (int i = 0; i < 6; i++) mpfr_clear(c->t[i]);
    for (int s = 0; s < NMO_CSCRATCH; s++) {
        free(c->dbuf[s]);
        for (int64_t i = 0; i < c->ecap[s]; i++) nmo_cenc_clear(c, &c->ebuf[s][i]);
        free(c->ebuf[s]);
    }
    free(c->pbuf);
    mpfr_free_cache(); /* DESIGN §10: free MPFR caches per thread */
    memset(c, 0, sizeof *c);
}

double *nmo_cctx_dvec(nmo_cctx *c, int slot, int64_t n)
{
    if (n > c->dcap[slot]) {
        free(c->dbuf[slot]);
        c->dbuf[slot] = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
        c->dcap[slot] = c->dbuf[slot] ? n : 0;
    }
    return c->dbuf[slot];
}

nmo_cenc *nmo_cctx_evec(nmo_cctx *c, int slot, int64_t n)
{
    if (n > c->ecap[slot]) {
        nmo_cenc *b = realloc(c->ebuf[slot], (size_t)n * sizeof(nmo_cenc));
        if (!b) return NULL;
        for (int64_t i = c->ecap[slot]; i < n; i++) nmo_cenc_init(c, &b[i]);
        c->ebuf[slot] = b;
        c->ecap[slot] = n;
    }
    return c->ebuf[slot];
}

static mpfr_ptr *ce_ptrs(nmo_cctx *c, int64_t n)
{
    if (n > c->pcap) {
        free(c->pbuf);
        c->pbuf = malloc((size_t)n * sizeof(mpfr_ptr));
        c->pcap = c->pbuf ? n : 0;
    }
    return c->pbuf;
}

void nmo_cenc_init(nmo_cctx *c, nmo_cenc *x)
{
    (void)c;
    mpfr_init2(x->lo, WP);
    mpfr_init2(x->hi, WP);
    mpfr_set_zero(x->lo, 1);
    mpfr_set_zero(x->hi, 1);
    x->flags = 0;
    x->mag = 0;
}

void nmo_cenc_clear(nmo_cctx *c, nmo_cenc *x)
{
    (void)c;
    mpfr_clear(x->lo);
    mpfr_clear(x->hi);
}

void nmo_cenc_set(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a)
{
    (void)c;
    mpfr_set(r->lo, a->lo, MPFR_RNDN);
    mpfr_set(r->hi, a->hi, MPFR_RNDN);
    r->flags = a->flags;
    r->mag = a->mag;
}

/* nmo_fenc_set_fenc: an exported enclosure back, exactly (doubles are exact at WP). */
void nmo_cenc_set_fenc(nmo_cctx *c, nmo_cenc *r, const nmo_fenc *a)
{
    (void)c;
    uint32_t fl = a->flags & ~NMO_EF_UNC;
    if (a->lo != a->lo) { ce_set_nan(r, fl); r->mag = a->mag; return; }
    ce_setd2(r, a->lo, a->hi, fl);
    r->mag = a->mag;
}

void nmo_cenc_set_d(nmo_cctx *c, nmo_cenc *r, double v)
{
    if (v != v) { ce_set_nan(r, 0); return; }
    double lo = v, hi = v;
    if (c->ftz && v != 0 && fabs(v) < c->minnorm_c) {
        if (v < 0) hi = 0; else lo = 0;
    }
    ce_setd2(r, lo, hi, 0);
    r->mag = isfinite(v) ? fabs(v) : INFINITY;
}

void nmo_cenc_const(nmo_cctx *c, nmo_cenc *r, double v)
{
    mpfr_set_d(c->t[0], v, MPFR_RNDN);
    double x = ce_round(c, c->cf, c->t[0], NMO_RNE);
    ce_setd2(r, x, x, 0);
    r->mag = isfinite(x) ? fabs(x) : INFINITY;
}

void nmo_cenc_add(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a, const nmo_cenc *b)
{
    uint32_t fl = a->flags | b->flags;
    if (ce_is_nan(a) || ce_is_nan(b)) { ce_set_nan(r, fl); return; }
    double m = a->mag + b->mag;
    mpfr_add(c->t[0], a->lo, b->lo, MPFR_RNDN); /* exact at WP for lattice values ... */
    mpfr_add(c->t[1], a->hi, b->hi, MPFR_RNDN); /* ... or innocuously double-rounded */
    double lo = ce_round(c, c->cf, c->t[0], NMO_RNE), hi = ce_round(c, c->cf, c->t[1], NMO_RNE);
    ce_setd2(r, lo, hi, fl);
    ce_mag(r, m);
}

void nmo_cenc_neg(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a)
{
    mpfr_neg(c->t[0], a->hi, MPFR_RNDN);
    mpfr_neg(r->hi, a->lo, MPFR_RNDN);
    mpfr_set(r->lo, c->t[0], MPFR_RNDN);
    r->flags = a->flags;
    r->mag = a->mag;
}

void nmo_cenc_sub(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a, const nmo_cenc *b)
{
    nmo_cenc nb;
    nmo_cenc_init(c, &nb);
    nmo_cenc_neg(c, &nb, b);
    nmo_cenc_add(c, r, a, &nb);
    nmo_cenc_clear(c, &nb);
}

/* Exact product interval: lo/hi get min/max of the four endpoint products, computed at
 * the sum of the operand precisions (exact). lo/hi must be at least that precise.
 * Returns 0 when a product is NaN (0 * inf). */
static int ce_mul_exact(nmo_cctx *c, mpfr_ptr lo, mpfr_ptr hi, mpfr_srcptr alo, mpfr_srcptr ahi,
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

/* inf * 0 inside the operand intervals: NaN possible (as nmo_fe_mul_nan_possible). */
static int ce_mul_nan_possible(const nmo_cenc *a, const nmo_cenc *b)
{
    return ((mpfr_inf_p(a->lo) || mpfr_inf_p(a->hi)) && mpfr_sgn(b->lo) <= 0 && mpfr_sgn(b->hi) >= 0) ||
           ((mpfr_inf_p(b->lo) || mpfr_inf_p(b->hi)) && mpfr_sgn(a->lo) <= 0 && mpfr_sgn(a->hi) >= 0);
}

void nmo_cenc_mul(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a, const nmo_cenc *b)
{
    uint32_t fl = a->flags | b->flags;
    if (ce_is_nan(a) || ce_is_nan(b)) { ce_set_nan(r, fl); return; }
    if (ce_mul_nan_possible(a, b)) fl |= NMO_EF_NAN;
    double m = nmo_mag_mul(a->mag, ce_abs(a), b->mag, ce_abs(b));
    mpfr_t lo, hi;
    mpfr_inits2(2 * WP, lo, hi, (mpfr_ptr)0);
    if (!ce_mul_exact(c, lo, hi, a->lo, a->hi, b->lo, b->hi)) {
        ce_set_all(r, fl);
    } else {
        double l = ce_round(c, c->cf, lo, NMO_RNE), h = ce_round(c, c->cf, hi, NMO_RNE);
        ce_setd2(r, l, h, fl);
        ce_mag(r, m);
    }
    mpfr_clears(lo, hi, (mpfr_ptr)0);
}

typedef int (*ce_fn)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t);

/* RN(f(x)) by a Ziv loop: evaluate f rounded down and up at growing precision until both
 * round to the same lattice value. */
static double ce_fn_rn(nmo_cctx *c, ce_fn f, mpfr_srcptr x)
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
static double ce_side(nmo_cctx *c, mpfr_ptr d, mpfr_ptr u, int n, int upper)
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
static double ce_fn_side(nmo_cctx *c, ce_fn f, mpfr_srcptr x, int n, int upper)
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

static double ce_pow2_above_d(double v) { return nmo_fe_pow2_above(v); }

/* Mirrors nmo_fe_apx_fix: the power of two inside the range of exact values
 * [ylo, yhi], ylo in [dl, ul], yhi in [dh, uh]. Both powers of two next to an
 * uncertain ylo are tried (only lowers lo: sound). */
static void ce_apx_fix(nmo_cctx *c, double *lo, double *hi, mpfr_srcptr dl, mpfr_srcptr ul, mpfr_srcptr dh,
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

/* ce_apx_fix for f's values at xl (giving ylo) and xh (giving yhi). */
static void ce_fn_fix(nmo_cctx *c, double *lo, double *hi, ce_fn f, mpfr_srcptr xl, mpfr_srcptr xh, int n)
{
    if (n == 0) return;
    mpfr_t dl, ul, dh, uh;
    mpfr_inits2(WP, dl, ul, dh, uh, (mpfr_ptr)0);
    f(dl, xl, MPFR_RNDD), f(ul, xl, MPFR_RNDU);
    f(dh, xh, MPFR_RNDD), f(uh, xh, MPFR_RNDU);
    ce_apx_fix(c, lo, hi, dl, ul, dh, uh, n);
    mpfr_clears(dl, ul, dh, uh, (mpfr_ptr)0);
}

/* Mirrors nmo_fe_apx_ovf. */
static void ce_apx_ovf(const nmo_cctx *c, double *lo, double *hi)
{
    double mf = nmo_fmt_get(c->cf)->max_finite;
    if (*hi >= mf) *hi = INFINITY;
    if (*lo <= -mf) *lo = -INFINITY;
    if (*lo > mf) *lo = mf;
    if (*hi < -mf) *hi = -mf;
}

/* Mirrors nmo_fe_sqrt_sides. */
static void ce_sqrt_sides(nmo_cctx *c, mpfr_srcptr xl, mpfr_srcptr xh, int n, double *lo, double *hi)
{
    if (n == 0) {
        mpfr_sqrt(c->t[0], xl, MPFR_RNDN);
        *lo = ce_round(c, c->cf, c->t[0], NMO_RNE);
        mpfr_sqrt(c->t[0], xh, MPFR_RNDN);
        *hi = ce_round(c, c->cf, c->t[0], NMO_RNE);
        return;
    }
    *lo = ce_fn_side(c, mpfr_sqrt, xl, n, 0);
    *hi = ce_fn_side(c, mpfr_sqrt, xh, n, 1);
    ce_fn_fix(c, lo, hi, mpfr_sqrt, xl, xh, n);
    ce_apx_ovf(c, lo, hi);
    if (*lo < 0) *lo = 0;
}

static int ce_rcp(mpfr_ptr r, mpfr_srcptr x, mpfr_rnd_t rnd) { return mpfr_ui_div(r, 1, x, rnd); }

/* Mirrors nmo_fe_rcp_side: 1/s for a lattice value s > 0. */
static double ce_rcp_side(nmo_cctx *c, double s, int n, int upper)
{
    mpfr_set_d(c->t[4], s, MPFR_RNDN);
    if (n == 0) {
        mpfr_ui_div(c->t[5], 1, c->t[4], MPFR_RNDN);
        return ce_round(c, c->cf, c->t[5], NMO_RNE);
    }
    return ce_fn_side(c, ce_rcp, c->t[4], n, upper);
}

static void ce_div_apx(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a, const nmo_cenc *b, int n, uint32_t fl);

void nmo_cenc_div(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a, const nmo_cenc *b)
{
    uint32_t fl = a->flags | b->flags;
    if (ce_is_nan(a) || ce_is_nan(b)) { ce_set_nan(r, fl); return; }
    if (mpfr_sgn(b->lo) <= 0 && mpfr_sgn(b->hi) >= 0) { ce_set_all(r, fl); return; }
    int n = nmo_fe_div_ulps(&c->plan, mpfr_cmp_ui(a->lo, 1) == 0 && mpfr_cmp_ui(a->hi, 1) == 0);
    if (n) { ce_div_apx(c, r, a, b, n, fl); return; }
    mpfr_srcptr as[2] = {a->lo, a->hi}, bs[2] = {b->lo, b->hi};
    double l = INFINITY, h = -INFINITY;
    int nan = 0;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            mpfr_div(c->t[0], as[i], bs[j], MPFR_RNDN); /* innocuous double rounding */
            if (mpfr_nan_p(c->t[0])) nan = 1;
            double q = ce_round(c, c->cf, c->t[0], NMO_RNE);
            if (q < l) l = q;
            if (q > h) h = q;
        }
    if (nan) { ce_set_all(r, fl); return; }
    double ma = a->mag, mb = b->mag, bl = ce_lo(b), bh = ce_hi(b);
    ce_setd2(r, l, h, fl);
    ce_mag(r, nmo_mag_div(ma, ce_abs(r), mb, bl, bh));
}

/* Mirrors nmo_fe_div_apx. */
static void ce_div_apx(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a, const nmo_cenc *b, int n, uint32_t fl)
{
    if (nmo_fe_div_unbounded(&c->plan, fmax(fabs(ce_lo(b)), fabs(ce_hi(b))))) { ce_set_all(r, fl); return; }
    mpfr_srcptr as[2] = {a->lo, a->hi}, bs[2] = {b->lo, b->hi};
    mpfr_t d, u, dl, ul, dh, uh;
    mpfr_inits2(WP, d, u, dl, ul, dh, uh, (mpfr_ptr)0);
    mpfr_set_inf(dl, 1), mpfr_set_inf(ul, 1), mpfr_set_inf(dh, -1), mpfr_set_inf(uh, -1);
    double l = INFINITY, h = -INFINITY;
    int nan = 0;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            mpfr_div(d, as[i], bs[j], MPFR_RNDD);
            mpfr_div(u, as[i], bs[j], MPFR_RNDU);
            if (mpfr_nan_p(d)) { nan = 1; continue; }
            double lq = ce_side(c, d, u, n, 0), hq = ce_side(c, d, u, n, 1);
            nmo_fe_apx_sign(mpfr_sgn(d), mpfr_sgn(u), &lq, &hq);
            l = fmin(l, lq);
            h = fmax(h, hq);
            if (mpfr_cmp(d, dl) < 0) mpfr_set(dl, d, MPFR_RNDN);
            if (mpfr_cmp(u, ul) < 0) mpfr_set(ul, u, MPFR_RNDN);
            if (mpfr_cmp(d, dh) > 0) mpfr_set(dh, d, MPFR_RNDN);
            if (mpfr_cmp(u, uh) > 0) mpfr_set(uh, u, MPFR_RNDN);
        }
    if (!nan) {
        ce_apx_fix(c, &l, &h, dl, ul, dh, uh, n);
        ce_apx_ovf(c, &l, &h);
    }
    mpfr_clears(d, u, dl, ul, dh, uh, (mpfr_ptr)0);
    if (nan) { ce_set_all(r, fl); return; }
    double ma = a->mag, mb = b->mag, bl = ce_lo(b), bh = ce_hi(b); /* before r (aliasing) */
    ce_setd2(r, l, h, fl);
    ce_mag(r, nmo_mag_div(ma, ce_abs(r), mb, bl, bh));
}

/* Mirrors nmo_fe_div_si_apx. */
static void ce_div_si_apx(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a, double dn, int nd, int nr, double m)
{
    mpfr_t dl, ul, dh, uh;
    mpfr_inits2(WP, dl, ul, dh, uh, (mpfr_ptr)0);
    mpfr_div_d(dl, a->lo, dn, MPFR_RNDD), mpfr_div_d(ul, a->lo, dn, MPFR_RNDU);
    mpfr_div_d(dh, a->hi, dn, MPFR_RNDD), mpfr_div_d(uh, a->hi, dn, MPFR_RNDU);
    double l1, h1;
    if (nd == 0) {
        mpfr_div_d(c->t[0], a->lo, dn, MPFR_RNDN);
        l1 = ce_round(c, c->cf, c->t[0], NMO_RNE);
        mpfr_div_d(c->t[0], a->hi, dn, MPFR_RNDN);
        h1 = ce_round(c, c->cf, c->t[0], NMO_RNE);
    } else {
        l1 = ce_side(c, dl, ul, nd, 0), h1 = ce_side(c, dh, uh, nd, 1);
        ce_apx_fix(c, &l1, &h1, dl, ul, dh, uh, nd);
        nmo_fe_apx_sign(mpfr_sgn(dl), mpfr_sgn(uh), &l1, &h1);
    }
    mpfr_clears(dl, ul, dh, uh, (mpfr_ptr)0);
    double rl = ce_rcp_side(c, dn, nr, 0), rh = ce_rcp_side(c, dn, nr, 1);
    mpfr_srcptr as[2] = {a->lo, a->hi};
    const double rs[2] = {rl, rh};
    double l2 = INFINITY, h2 = -INFINITY;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            mpfr_mul_d(c->t[0], as[i], rs[j], MPFR_RNDN); /* exact at WP */
            double v = ce_round(c, c->cf, c->t[0], NMO_RNE);
            l2 = fmin(l2, v), h2 = fmax(h2, v);
        }
    double l = fmin(l1, l2), h = fmax(h1, h2);
    ce_apx_ovf(c, &l, &h);
    ce_setd2(r, l, h, a->flags);
    ce_mag(r, m);
}

void nmo_cenc_div_si(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a, int64_t n)
{
    if (ce_is_nan(a)) { ce_set_nan(r, a->flags); return; }
    {
        int nd = nmo_fe_div_ulps(&c->plan, 0), nr = nmo_fe_div_ulps(&c->plan, 1);
        if (nd || nr) {
            mpfr_set_si(c->t[0], (long)n, MPFR_RNDN);
            ce_div_si_apx(c, r, a, ce_round(c, c->cf, c->t[0], NMO_RNE), nd, nr, a->mag / (double)n);
            return;
        }
    }
    mpfr_set_si(c->t[0], (long)n, MPFR_RNDN);
    double dn = ce_round(c, c->cf, c->t[0], NMO_RNE);
    mpfr_set_d(c->t[0], dn, MPFR_RNDN);
    mpfr_ui_div(c->t[1], 1, c->t[0], MPFR_RNDN);
    double rcp = ce_round(c, c->cf, c->t[1], NMO_RNE);
    mpfr_div(c->t[2], a->lo, c->t[0], MPFR_RNDN);
    double l1 = ce_round(c, c->cf, c->t[2], NMO_RNE);
    mpfr_div(c->t[2], a->hi, c->t[0], MPFR_RNDN);
    double h1 = ce_round(c, c->cf, c->t[2], NMO_RNE);
    mpfr_mul_d(c->t[2], a->lo, rcp, MPFR_RNDN);
    double l2 = ce_round(c, c->cf, c->t[2], NMO_RNE);
    mpfr_mul_d(c->t[2], a->hi, rcp, MPFR_RNDN);
    double h2 = ce_round(c, c->cf, c->t[2], NMO_RNE);
    double m = a->mag / (double)n;
    ce_setd2(r, fmin(l1, l2), fmax(h1, h2), a->flags);
    ce_mag(r, m);
}

void nmo_cenc_fma(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a, const nmo_cenc *b, const nmo_cenc *d)
{
    uint32_t fl = a->flags | b->flags | d->flags;
    if (ce_is_nan(a) || ce_is_nan(b) || ce_is_nan(d)) { ce_set_nan(r, fl); return; }
    if (ce_mul_nan_possible(a, b)) fl |= NMO_EF_NAN;
    double mg = nmo_mag_mul(a->mag, ce_abs(a), b->mag, ce_abs(b)) + d->mag;
    mpfr_t plo, phi, s;
    mpfr_inits2(2 * WP, plo, phi, (mpfr_ptr)0);
    mpfr_init2(s, 4 * WP);
    if (!ce_mul_exact(c, plo, phi, a->lo, a->hi, b->lo, b->hi)) {
        ce_set_all(r, fl);
    } else {
        mpfr_add(s, plo, d->lo, MPFR_RNDD);
        double f_lo = ce_round(c, c->cf, s, NMO_RNE);
        mpfr_add(s, phi, d->hi, MPFR_RNDU);
        double f_hi = ce_round(c, c->cf, s, NMO_RNE);
        mpfr_set_d(s, ce_round(c, c->cf, plo, NMO_RNE), MPFR_RNDN);
        mpfr_add(s, s, d->lo, MPFR_RNDN);
        double m_lo = ce_round(c, c->cf, s, NMO_RNE);
        mpfr_set_d(s, ce_round(c, c->cf, phi, NMO_RNE), MPFR_RNDN);
        mpfr_add(s, s, d->hi, MPFR_RNDN);
        double m_hi = ce_round(c, c->cf, s, NMO_RNE);
        ce_setd2(r, fmin(f_lo, m_lo), fmax(f_hi, m_hi), fl);
        ce_mag(r, mg);
    }
    mpfr_clears(plo, phi, s, (mpfr_ptr)0);
}

void nmo_cenc_sqrt(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a)
{
    uint32_t fl = a->flags;
    if (ce_is_nan(a) || mpfr_sgn(a->hi) < 0) { ce_set_nan(r, fl); return; }
    if (mpfr_sgn(a->lo) < 0) { ce_set_all(r, fl); return; }
    double al = ce_lo(a), ah = ce_hi(a), ma = a->mag, l, h;
    ce_sqrt_sides(c, a->lo, a->hi, c->plan.fn_ulps[NMO_FN_SQRT], &l, &h);
    ce_setd2(r, l, h, fl);
    ce_mag(r, nmo_mag_edge(al, ah, ma) ? INFINITY : ma == 0 ? h : nmo_mag_fn(h, 0.5 / l, ma));
}

void nmo_cenc_rsqrt(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a)
{
    uint32_t fl = a->flags;
    if (ce_is_nan(a) || mpfr_sgn(a->hi) < 0) { ce_set_nan(r, fl); return; }
    if (mpfr_sgn(a->lo) <= 0) { ce_set_all(r, fl); return; }
    int n = c->plan.fn_ulps[NMO_FN_RSQRT], ns = c->plan.fn_ulps[NMO_FN_SQRT];
    int nr = nmo_fe_div_ulps(&c->plan, 1);
    double lo1 = ce_fn_side(c, mpfr_rec_sqrt, a->hi, n, 0);
    double hi1 = ce_fn_side(c, mpfr_rec_sqrt, a->lo, n, 1);
    ce_fn_fix(c, &lo1, &hi1, mpfr_rec_sqrt, a->hi, a->lo, n);
    double slo, shi;
    ce_sqrt_sides(c, a->lo, a->hi, ns, &slo, &shi);
    if (slo == 0) { ce_set_all(r, fl); return; }
    double lo2 = ce_rcp_side(c, shi, nr, 0);
    double hi2 = ce_rcp_side(c, slo, nr, 1);
    if (nr) {
        mpfr_t sl, sh;
        mpfr_inits2(WP, sl, sh, (mpfr_ptr)0);
        mpfr_set_d(sl, shi, MPFR_RNDN), mpfr_set_d(sh, slo, MPFR_RNDN);
        ce_fn_fix(c, &lo2, &hi2, ce_rcp, sl, sh, nr);
        mpfr_clears(sl, sh, (mpfr_ptr)0);
    }
    double al = ce_lo(a), ah = ce_hi(a), ma = a->mag, rh = fmax(hi1, hi2);
    ce_setd2(r, fmin(lo1, lo2), rh, fl);
    ce_mag(r, nmo_mag_edge(al, ah, ma) ? INFINITY : nmo_mag_fn(rh, rh / (2 * al), ma));
}

void nmo_cenc_exp(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a)
{
    uint32_t fl = a->flags;
    if (ce_is_nan(a)) { ce_set_nan(r, fl); return; }
    int n = c->plan.fn_ulps[NMO_FN_EXP];
    /* deep underflow, as in nmo_fenc_exp */
    double tiny = c->minsub_c / 2;
    mpfr_exp(c->t[0], a->lo, MPFR_RNDU);
    double lo = mpfr_cmp_d(c->t[0], tiny) < 0 ? 0 : ce_fn_side(c, mpfr_exp, a->lo, n, 0);
    /* exp beyond binary64's range (x > 709.78): the ulp of the estimate is not a double
     * and the side above would fall to 0; every implementation overflows to inf (the
     * fast engine's libm exp is inf there too) */
    mpfr_exp(c->t[0], a->lo, MPFR_RNDD);
    if (mpfr_cmp_d(c->t[0], DBL_MAX) > 0) lo = INFINITY;
    mpfr_exp(c->t[0], a->hi, MPFR_RNDU);
    double hi;
    if (mpfr_cmp_d(c->t[0], tiny) < 0) {
        mpfr_set_d(c->t[1], n * c->minsub_c, MPFR_RNDN);
        hi = ce_round(c, c->cf, c->t[1], NMO_RD);
    } else {
        hi = ce_fn_side(c, mpfr_exp, a->hi, n, 1);
    }
    ce_fn_fix(c, &lo, &hi, mpfr_exp, a->lo, a->hi, n);
    /* overflow: inf is possible once the upper bound reaches max finite (as in
     * nmo_fenc_exp) */
    if (hi >= nmo_fmt_get(c->cf)->max_finite) hi = INFINITY;
    double m = hi == 0 ? 0 : a->mag != 0 && !(ce_hi(a) - ce_lo(a) <= 1) ? INFINITY : nmo_mag_fn(hi, hi, a->mag);
    if (lo < c->minnorm_c && nmo_plan_exp_ftz(&c->plan)) lo = 0; /* ex2.approx.ftz, as nmo_fenc_exp */
    ce_setd2(r, lo < 0 ? 0 : lo, hi, fl);
    ce_mag(r, m);
}

void nmo_cenc_log(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a)
{
    uint32_t fl = a->flags;
    if (ce_is_nan(a) || mpfr_sgn(a->hi) < 0) { ce_set_nan(r, fl); return; }
    if (mpfr_sgn(a->lo) <= 0) { ce_set_all(r, fl); return; }
    int n = c->plan.fn_ulps[NMO_FN_LOG];
    double al = ce_lo(a), ah = ce_hi(a), ma = a->mag;
    double lo = ce_fn_side(c, mpfr_log, a->lo, n, 0);
    double hi = ce_fn_side(c, mpfr_log, a->hi, n, 1);
    ce_fn_fix(c, &lo, &hi, mpfr_log, a->lo, a->hi, n);
    ce_setd2(r, lo, hi, fl);
    ce_mag(r, nmo_mag_edge(al, ah, ma) ? INFINITY : nmo_mag_fn(nmo_mag_abs(lo, hi), 1 / al, ma));
}

/* sigmoid(x) = 1/(1 + exp(-x)), directed: a lower bound uses exp(-x) rounded up. */
static int ce_sigmoid(mpfr_ptr r, mpfr_srcptr x, mpfr_rnd_t rnd)
{
    mpfr_t t;
    mpfr_init2(t, mpfr_get_prec(r) + 16);
    mpfr_neg(t, x, MPFR_RNDN);
    mpfr_exp(t, t, rnd == MPFR_RNDD ? MPFR_RNDU : MPFR_RNDD);
    mpfr_add_ui(t, t, 1, rnd == MPFR_RNDD ? MPFR_RNDU : MPFR_RNDD);
    int ret = mpfr_ui_div(r, 1, t, rnd);
    mpfr_clear(t);
    return ret;
}

static void ce_incr(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a, nmo_fn fn)
{
    uint32_t fl = a->flags;
    if (ce_is_nan(a)) { ce_set_nan(r, fl); return; }
    ce_fn f = fn == NMO_FN_TANH ? mpfr_tanh : fn == NMO_FN_ERF ? mpfr_erf : ce_sigmoid;
    int n = c->plan.fn_ulps[fn];
    double lo = ce_fn_side(c, f, a->lo, n, 0), hi = ce_fn_side(c, f, a->hi, n, 1);
    ce_fn_fix(c, &lo, &hi, f, a->lo, a->hi, n);
    double bot = fn == NMO_FN_SIGMOID ? 0 : -1;
    double L = nmo_mag_incr_lip(fn, ce_lo(a), ce_hi(a)), ma = a->mag;
    lo = lo < bot ? bot : lo > 1 ? 1 : lo;
    hi = hi > 1 ? 1 : hi < bot ? bot : hi;
    ce_setd2(r, lo, hi, fl);
    r->mag = nmo_mag_fn(nmo_mag_abs(lo, hi), L, ma);
}

void nmo_cenc_tanh(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a) { ce_incr(c, r, a, NMO_FN_TANH); }
void nmo_cenc_erf(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a) { ce_incr(c, r, a, NMO_FN_ERF); }
void nmo_cenc_sigmoid(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a)
{
    nmo_cenc s1, t, one;
    nmo_cenc_init(c, &s1), nmo_cenc_init(c, &t), nmo_cenc_init(c, &one);
    ce_incr(c, &s1, a, NMO_FN_SIGMOID);
    nmo_cenc_neg(c, &t, a);
    nmo_cenc_exp(c, &t, &t);
    nmo_cenc_const(c, &one, 1.0);
    nmo_cenc_add(c, &t, &one, &t);
    nmo_cenc_div(c, &t, &one, &t);
    nmo_cenc_hull(c, r, &s1, &t);
    nmo_cenc_clear(c, &s1), nmo_cenc_clear(c, &t), nmo_cenc_clear(c, &one);
}

void nmo_cenc_max(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a, const nmo_cenc *b)
{
    uint32_t fl = a->flags | b->flags;
    if (ce_is_nan(a)) { nmo_cenc_set(c, r, b); r->flags |= fl | NMO_EF_NAN; return; }
    if (ce_is_nan(b)) { nmo_cenc_set(c, r, a); r->flags |= fl | NMO_EF_NAN; return; }
    double m = nmo_mag_max(a->mag, b->mag);
    mpfr_max(c->t[0], a->lo, b->lo, MPFR_RNDN);
    mpfr_max(r->hi, a->hi, b->hi, MPFR_RNDN);
    mpfr_set(r->lo, c->t[0], MPFR_RNDN);
    r->flags = fl;
    r->mag = m;
}

void nmo_cenc_min(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a, const nmo_cenc *b)
{
    uint32_t fl = a->flags | b->flags;
    if (ce_is_nan(a)) { nmo_cenc_set(c, r, b); r->flags |= fl | NMO_EF_NAN; return; }
    if (ce_is_nan(b)) { nmo_cenc_set(c, r, a); r->flags |= fl | NMO_EF_NAN; return; }
    double m = nmo_mag_max(a->mag, b->mag);
    mpfr_min(c->t[0], a->lo, b->lo, MPFR_RNDN);
    mpfr_min(r->hi, a->hi, b->hi, MPFR_RNDN);
    mpfr_set(r->lo, c->t[0], MPFR_RNDN);
    r->flags = fl;
    r->mag = m;
}

static void ce_absmax(mpfr_ptr m, const nmo_cenc *a)
{
    if (mpfr_cmpabs(a->lo, a->hi) > 0) mpfr_abs(m, a->lo, MPFR_RNDN);
    else mpfr_abs(m, a->hi, MPFR_RNDN);
}

void nmo_cenc_mul3(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a, const nmo_cenc *b, const nmo_cenc *d)
{
    uint32_t fl = a->flags | b->flags | d->flags;
    if (ce_is_nan(a) || ce_is_nan(b) || ce_is_nan(d)) { ce_set_nan(r, fl); return; }
    double mg = nmo_mag_mul3(a->mag, ce_abs(a), b->mag, ce_abs(b), d->mag, ce_abs(d));
    mpfr_t ablo, abhi, plo, phi, m, t;
    mpfr_inits2(2 * WP, ablo, abhi, (mpfr_ptr)0);
    mpfr_inits2(4 * WP, plo, phi, m, t, (mpfr_ptr)0);
    int ok = ce_mul_exact(c, ablo, abhi, a->lo, a->hi, b->lo, b->hi);
    if (ok) ok = ce_mul_exact(c, plo, phi, ablo, abhi, d->lo, d->hi);
    if (!ok || !mpfr_number_p(plo) || !mpfr_number_p(phi)) {
        ce_set_all(r, fl);
    } else {
        ce_absmax(m, a);
        ce_absmax(t, b);
        mpfr_max(m, m, t, MPFR_RNDN);
        ce_absmax(t, d);
        mpfr_max(m, m, t, MPFR_RNDN);
        mpfr_mul_d(m, m, c->etac, MPFR_RNDU); /* eta M */
        /* lower: P_lo - |P_lo| u - eta M */
        mpfr_abs(t, plo, MPFR_RNDN);
        mpfr_mul_d(t, t, c->uc, MPFR_RNDU);
        mpfr_sub(plo, plo, t, MPFR_RNDD);
        mpfr_sub(plo, plo, m, MPFR_RNDD);
        double lo = ce_round(c, c->cf, plo, NMO_RNE);
        mpfr_abs(t, phi, MPFR_RNDN);
        mpfr_mul_d(t, t, c->uc, MPFR_RNDU);
        mpfr_add(phi, phi, t, MPFR_RNDU);
        mpfr_add(phi, phi, m, MPFR_RNDU);
        double hi = ce_round(c, c->cf, phi, NMO_RNE);
        ce_setd2(r, lo, hi, fl);
        ce_mag(r, mg);
    }
    mpfr_clears(ablo, abhi, plo, phi, m, t, (mpfr_ptr)0);
}

void nmo_cenc_gemm_row(nmo_cctx *c, nmo_fenc *out, const nmo_tensor *A, const nmo_tensor *B, int64_t i)
{
    nmo_cenc e;
    nmo_cenc_init(c, &e);
    for (int64_t j = 0; j < B->dims[1]; j++) {
        nmo_cenc_gemm_elem(c, &e, A, B, i, j);
        nmo_cenc_export(c, &out[j], &e);
    }
    nmo_cenc_clear(c, &e);
}

void nmo_cenc_exp_sub_row(nmo_cctx *c, nmo_cenc *ee, const double *x, const nmo_cenc *m, int64_t n)
{
    nmo_cenc xe, d;
    nmo_cenc_init(c, &xe), nmo_cenc_init(c, &d);
    for (int64_t j = 0; j < n; j++) {
        nmo_cenc_set_d(c, &xe, x[j]);
        nmo_cenc_sub(c, &d, &xe, m);
        nmo_cenc_exp(c, &ee[j], &d);
    }
    nmo_cenc_clear(c, &xe), nmo_cenc_clear(c, &d);
}

void nmo_cenc_divmul_row(nmo_cctx *c, nmo_fenc *out, const nmo_cenc *e, const nmo_cenc *s,
                         const nmo_cenc *rcp, int64_t n)
{
    nmo_cenc y1, y2;
    nmo_cenc_init(c, &y1), nmo_cenc_init(c, &y2);
    for (int64_t j = 0; j < n; j++) {
        nmo_cenc_div(c, &y1, &e[j], s);
        nmo_cenc_mul(c, &y2, &e[j], rcp);
        nmo_cenc_hull(c, &y1, &y1, &y2);
        nmo_cenc_export(c, &out[j], &y1);
    }
    nmo_cenc_clear(c, &y1), nmo_cenc_clear(c, &y2);
}

void nmo_cenc_mul3_row(nmo_cctx *c, nmo_fenc *out, const double *x, const nmo_cenc *r,
                       const double *w, int64_t n)
{
    nmo_cenc xe, we, y;
    nmo_cenc_init(c, &xe), nmo_cenc_init(c, &we), nmo_cenc_init(c, &y);
    for (int64_t j = 0; j < n; j++) {
        nmo_cenc_set_d(c, &xe, x[j]);
        nmo_cenc_set_d(c, &we, w[j]);
        nmo_cenc_mul3(c, &y, &xe, r, &we);
        nmo_cenc_export(c, &out[j], &y);
    }
    nmo_cenc_clear(c, &xe), nmo_cenc_clear(c, &we), nmo_cenc_clear(c, &y);
}

void nmo_cenc_round(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a, nmo_fmt f, nmo_rnd rnd, int sr)
{
    if (ce_is_nan(a)) { nmo_cenc_set(c, r, a); return; }
    double lo = ce_round(c, f, a->lo, sr ? NMO_RD : rnd);
    double hi = ce_round(c, f, a->hi, sr ? NMO_RU : rnd);
    double m = a->mag;
    ce_setd2(r, lo, hi, a->flags);
    ce_mag(r, m);
}

/* Mirrors nmo_fe_red_finish: exact-sum bounds slo (rounded down) and shi (up), the
 * absolute-sum bound A (up), k and the underflow term keta. */
static double ce_red_k(nmo_cctx *c, int64_t n, int64_t m, int dot)
{
    return nmo_fe_geo_note(&c->geo_over, nmo_plan_red_k(&c->plan, n, m, dot), n);
}
static double ce_dot_k(nmo_cctx *c, int64_t n, int64_t m)
{
    return nmo_fe_geo_note(&c->geo_over, nmo_plan_dot_k2(&c->plan, n, m), n);
}

static void ce_red_finish(nmo_cctx *c, nmo_cenc *r, mpfr_ptr slo, mpfr_ptr shi, mpfr_ptr A,
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

void nmo_cenc_sum(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *x, int64_t n)
{
    uint32_t fl = 0;
    for (int64_t i = 0; i < n; i++) fl |= x[i].flags;
    for (int64_t i = 0; i < n; i++)
        if (ce_is_nan(&x[i])) { ce_set_nan(r, fl); return; }
    mpfr_ptr *p = ce_ptrs(c, n > 0 ? n : 1);
    mpfr_t slo, shi, A;
    mpfr_inits2(4 * WP, slo, shi, A, (mpfr_ptr)0);
    for (int64_t i = 0; i < n; i++) p[i] = (mpfr_ptr)x[i].lo;
    mpfr_sum(slo, p, (unsigned long)n, MPFR_RNDD);
    for (int64_t i = 0; i < n; i++) p[i] = (mpfr_ptr)x[i].hi;
    mpfr_sum(shi, p, (unsigned long)n, MPFR_RNDU);
    mpfr_t *ab = malloc((size_t)(n > 0 ? n : 1) * sizeof(mpfr_t));
    for (int64_t i = 0; i < n; i++) {
        mpfr_init2(ab[i], WP);
        ce_absmax(ab[i], &x[i]);
        p[i] = ab[i];
    }
    mpfr_sum(A, p, (unsigned long)n, MPFR_RNDU);
    for (int64_t i = 0; i < n; i++) mpfr_clear(ab[i]);
    free(ab);
    double k = ce_red_k(c, n, n, 0); /* n - 1 for sum=any */
    double mg = 0;
    for (int64_t i = 0; i < n; i++) mg += x[i].mag; /* nmo_mag_sum's order */
    ce_red_finish(c, r, slo, shi, A, k, c->ftz && n > 1 ? (double)(n - 1) * c->etaa : 0, fl);
    ce_mag(r, mg);
    mpfr_clears(slo, shi, A, (mpfr_ptr)0);
}

/* The scale of a dot product of input points (nmo_fe_dot_mag): the binade of the exact
 * sum of the n exact |products| p[], from its value rounded down (correctly rounded, so
 * it lies in the binade of the exact sum). */
static double ce_dot_mag(mpfr_ptr *p, int64_t n)
{
    mpfr_t s;
    mpfr_init2(s, 64);
    mpfr_sum(s, p, (unsigned long)n, MPFR_RNDD);
    double m = nmo_mag_pow2(mpfr_get_d(s, MPFR_RNDD));
    mpfr_clear(s);
    return m;
}

void nmo_cenc_gemm_partials(nmo_cctx *c, int pf) { c->gemm_partials = pf; }

/* nmo_cenc_dot_d, with split-K partials stored in format pf (< 0: none) */
static void ce_dot_d(nmo_cctx *c, nmo_cenc *r, const double *x, const double *y, int64_t n, int pf);

void nmo_cenc_dot_d(nmo_cctx *c, nmo_cenc *r, const double *x, const double *y, int64_t n)
{
    ce_dot_d(c, r, x, y, n, -1);
}

static void ce_dot_d(nmo_cctx *c, nmo_cenc *r, const double *x, const double *y, int64_t n, int pf)
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

void nmo_cenc_sumsq_d(nmo_cctx *c, nmo_cenc *r, const double *x, int64_t n)
{
    nmo_cenc_dot_d(c, r, x, x, n);
}

void nmo_cenc_max_v(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *x, int64_t n)
{
    nmo_cenc_set(c, r, &x[0]);
    for (int64_t i = 1; i < n; i++) nmo_cenc_max(c, r, r, &x[i]);
}

void nmo_cenc_export(nmo_cctx *c, nmo_fenc *dst, const nmo_cenc *src)
{
    (void)c;
    dst->lo = mpfr_get_d(src->lo, MPFR_RNDD);
    dst->hi = mpfr_get_d(src->hi, MPFR_RNDU);
    dst->flags = src->flags & ~NMO_EF_UNC;
    dst->mag = src->mag;
}

void nmo_cenc_hull(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a, const nmo_cenc *b)
{
    uint32_t fl = a->flags | b->flags;
    if (ce_is_nan(a) && ce_is_nan(b)) { ce_set_nan(r, fl); return; }
    if (ce_is_nan(a)) { nmo_cenc_set(c, r, b); r->flags = fl; return; }
    if (ce_is_nan(b)) { nmo_cenc_set(c, r, a); r->flags = fl; return; }
    double m = nmo_mag_max(a->mag, b->mag);
    mpfr_min(c->t[0], a->lo, b->lo, MPFR_RNDN);
    mpfr_max(r->hi, a->hi, b->hi, MPFR_RNDN);
    mpfr_set(r->lo, c->t[0], MPFR_RNDN);
    r->flags = fl;
    r->mag = m;
}

void nmo_cenc_gemm_elem(nmo_cctx *c, nmo_cenc *r, const nmo_tensor *A, const nmo_tensor *B,
                        int64_t i, int64_t j)
{
    int64_t K = A->dims[1];
    double *a = nmo_cctx_dvec(c, NMO_CSCRATCH - 1, K);
    double *b = nmo_cctx_dvec(c, NMO_CSCRATCH - 2, K);
    nmo_tensor_load_f64(a, A, i * A->strides[0], K, A->strides[1]);
    nmo_tensor_load_f64(b, B, j * B->strides[1], K, B->strides[0]);
    ce_dot_d(c, r, a, b, K, c->gemm_partials);
}

/* ---- norms group: products of k factors, dot products of k-factor terms ------------ */

/* |a| max over the enclosure, at least 1 (the R factor of the underflow terms) */
static void ce_absmax1(mpfr_ptr m, const nmo_cenc *a)
{
    ce_absmax(m, a);
    if (mpfr_cmp_ui(m, 1) < 0) mpfr_set_ui(m, 1, MPFR_RNDN);
}

/* Exact interval product of f[0][j] .. f[k-1][j] into lo/hi (precision >= 64 (k+1): the
 * endpoints are doubles, so every product is exact), and R = prod max(1, |f|). Returns 0
 * on NaN (0 * inf). */
static int ce_prod_iv(nmo_cctx *c, mpfr_ptr lo, mpfr_ptr hi, mpfr_ptr R, const nmo_cenc *const *f,
                      int k, int64_t j)
{
    mpfr_prec_t pr = (mpfr_prec_t)(k + 1) * 64; /* endpoints are doubles: k of them multiply exactly */
    mpfr_t l2, h2, m;
    mpfr_inits2(pr, l2, h2, m, (mpfr_ptr)0);
    mpfr_set(lo, f[0][j].lo, MPFR_RNDN);
    mpfr_set(hi, f[0][j].hi, MPFR_RNDN);
    ce_absmax1(R, &f[0][j]);
    int ok = 1;
    for (int i = 1; i < k && ok; i++) {
        ok = ce_mul_exact(c, l2, h2, lo, hi, f[i][j].lo, f[i][j].hi);
        mpfr_set(lo, l2, MPFR_RNDD);
        mpfr_set(hi, h2, MPFR_RNDU);
        ce_absmax1(m, &f[i][j]);
        mpfr_mul(R, R, m, MPFR_RNDU);
    }
    mpfr_clears(l2, h2, m, (mpfr_ptr)0);
    return ok;
}

/* Mirrors nmo_fe_partial_ovf: R (1 + g) + eta >= max finite of compute (t: scratch). */
static int ce_partial_ovf(nmo_cctx *c, mpfr_ptr t, mpfr_srcptr R, double g, mpfr_srcptr eta)
{
    mpfr_mul_d(t, R, 1 + g, MPFR_RNDU);
    mpfr_add(t, t, eta, MPFR_RNDU);
    return !mpfr_number_p(t) || mpfr_cmp_d(t, nmo_fmt_get(c->cf)->max_finite) >= 0;
}

/* nmo_mag_prodk on certified enclosures (the same loop) */
static double ce_mag_prodk(const nmo_cenc *const *f, int k, int64_t j)
{
    double m = 0;
    for (int i = 0; i < k; i++) {
        double t = f[i][j].mag;
        for (int l = 0; l < k; l++)
            if (l != i) t = nmo_mag_prod(t, ce_abs(&f[l][j]));
        m = nmo_mag_max(m, t);
    }
    return m;
}

/* Mirrors nmo_fenc_prodk (the bound and its source are there). */
void nmo_cenc_prodk(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *const *f, int k, int fused)
{
    double mg = ce_mag_prodk(f, k, 0);
    uint32_t fl = 0;
    int zero = 0, nonfin = 0;
    for (int i = 0; i < k; i++) {
        fl |= f[i]->flags;
        if (ce_is_nan(f[i])) { ce_set_nan(r, fl); return; }
        zero |= mpfr_zero_p(f[i]->lo) && mpfr_zero_p(f[i]->hi);
        nonfin |= !mpfr_number_p(f[i]->lo) || !mpfr_number_p(f[i]->hi);
    }
    if (zero) { ce_setd2(r, 0, 0, fl); r->mag = 0; return; }
    if (nonfin) { ce_set_all(r, fl); return; }
    if (k == 1) {
        nmo_cenc_set(c, r, f[0]);
        r->flags = fl;
        return;
    }
    mpfr_prec_t pr = (mpfr_prec_t)(k + 1) * 64; /* endpoints are doubles: k of them multiply exactly */
    mpfr_t lo, hi, R, t, e;
    mpfr_inits2(pr + WP, lo, hi, R, t, e, (mpfr_ptr)0);
    if (!ce_prod_iv(c, lo, hi, R, f, k, 0)) {
        ce_set_all(r, fl);
    } else {
        int nr = k > 2 ? k - 2 : 0;
        double g = nmo_fe_gamma(c->uc, nr);
        mpfr_mul_d(e, R, 2.0 * nr * c->etac, MPFR_RNDU);
        if (ce_partial_ovf(c, t, R, g, e)) {
            ce_set_all(r, fl);
            mpfr_clears(lo, hi, R, t, e, (mpfr_ptr)0);
            return;
        }
        mpfr_abs(t, lo, MPFR_RNDN);
        mpfr_mul_d(t, t, g, MPFR_RNDU);
        mpfr_sub(lo, lo, t, MPFR_RNDD);
        mpfr_sub(lo, lo, e, MPFR_RNDD);
        mpfr_abs(t, hi, MPFR_RNDN);
        mpfr_mul_d(t, t, g, MPFR_RNDU);
        mpfr_add(hi, hi, t, MPFR_RNDU);
        mpfr_add(hi, hi, e, MPFR_RNDU);
        int ftz = fused ? 0 : c->ftz; /* an unrounded (fused) value is never flushed */
        double l = nmo_fmt_round_mpfr(c->cf, lo, fused ? NMO_RD : NMO_RNE, ftz);
        double h = nmo_fmt_round_mpfr(c->cf, hi, fused ? NMO_RU : NMO_RNE, ftz);
        ce_setd2(r, l, h, fl);
        ce_mag(r, mg);
    }
    mpfr_clears(lo, hi, R, t, e, (mpfr_ptr)0);
}

/* Mirrors nmo_fenc_dotk (the bound and its sources are there) and, for the closing
 * snap, nmo_fe_red_finish. */
void nmo_cenc_dotk(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *const *f, int k, int64_t n, int rounds)
{
    double mg = 0;
    for (int64_t j = 0; j < n; j++) mg += ce_mag_prodk(f, k, j);
    uint32_t fl = 0;
    int mustnan = 0, nonfin = 0;
    for (int64_t j = 0; j < n; j++)
        for (int i = 0; i < k; i++) {
            fl |= f[i][j].flags;
            mustnan |= ce_is_nan(&f[i][j]);
            nonfin |= !mpfr_number_p(f[i][j].lo) || !mpfr_number_p(f[i][j].hi);
        }
    if (mustnan) { ce_set_nan(r, fl); return; }
    if (nonfin) { ce_set_all(r, fl); return; }
    int64_t nn = n > 0 ? n : 1;
    if (k == 1 || (k == 2 && rounds == 0)) { /* the exact case (nmo_fe_sum_exact_core) */
        double *a = nmo_cctx_dvec(c, NMO_CSCRATCH - 1, nn), *b = nmo_cctx_dvec(c, NMO_CSCRATCH - 2, nn);
        int pts = a && b;
        for (int64_t j = 0; j < n && pts; j++) {
            pts = mpfr_equal_p(f[0][j].lo, f[0][j].hi) && (k == 1 || mpfr_equal_p(f[1][j].lo, f[1][j].hi));
            a[j] = mpfr_get_d(f[0][j].lo, MPFR_RNDN); /* endpoints are doubles: exact */
            b[j] = k == 2 ? mpfr_get_d(f[1][j].lo, MPFR_RNDN) : 0;
        }
        double sx;
        if (pts && nmo_fe_sum_exact_core(c->cf, c->af, c->ftz, k, a, b, n, &sx)) {
            ce_setd2(r, sx, sx, fl);
            r->mag = mg;
            return;
        }
    }
    mpfr_prec_t pr = (mpfr_prec_t)(k + 1) * 64; /* endpoints are doubles: k of them multiply exactly */
    mpfr_t *v = malloc((size_t)nn * 4 * sizeof(mpfr_t));
    mpfr_t Rmax;
    mpfr_init2(Rmax, pr + WP);
    mpfr_set_ui(Rmax, 0, MPFR_RNDN);
    mpfr_ptr *p = ce_ptrs(c, nn);
    int ok = 1;
    for (int64_t j = 0; j < n; j++) {
        for (int q = 0; q < 4; q++) mpfr_init2(v[4 * j + q], pr + WP);
        ok &= ce_prod_iv(c, v[4 * j], v[4 * j + 1], v[4 * j + 3], f, k, j);
        if (mpfr_cmpabs(v[4 * j], v[4 * j + 1]) > 0) mpfr_abs(v[4 * j + 2], v[4 * j], MPFR_RNDN);
        else mpfr_abs(v[4 * j + 2], v[4 * j + 1], MPFR_RNDN);
        mpfr_max(Rmax, Rmax, v[4 * j + 3], MPFR_RNDU);
    }
    mpfr_t slo, shi, A, SR, a2, keta, em, top, t;
    mpfr_inits2(4 * WP, slo, shi, A, SR, a2, keta, em, top, t, (mpfr_ptr)0);
    for (int q = 0; q < 4; q++) {
        for (int64_t j = 0; j < n; j++) p[j] = v[4 * j + q];
        mpfr_ptr dst = q == 0 ? slo : q == 1 ? shi : q == 2 ? A : SR;
        mpfr_sum(dst, p, (unsigned long)n, q == 0 ? MPFR_RNDD : MPFR_RNDU);
    }
    for (int64_t j = 0; j < 4 * n; j++) mpfr_clear(v[j]);
    free(v);
    double g = nmo_fe_gamma(c->uc, rounds);
    if (rounds > 0) {
        mpfr_mul_d(t, Rmax, 2.0 * rounds * c->etac, MPFR_RNDU);
        mpfr_set(em, t, MPFR_RNDU);
        if (ce_partial_ovf(c, t, Rmax, g, em)) ok = 0;
    }
    mpfr_clear(Rmax);
    double K = ce_red_k(c, n, n, k != 1), keta_a; /* n - 1 or n for sum=any */
    if (k == 1) keta_a = c->ftz && n > 1 ? (double)(n - 1) * c->etaa : 0;
    else keta_a = (c->ftz ? 2.0 : 1.0) * (double)n * c->etaa;
    if (!(K < INFINITY)) ok = 0; /* beyond the geometry: anything */
    /* eta_in = 2 rounds eta_c SR (kept in SR); a2 = A (1 + g) + eta_in; keta = g A + eta_in + keta_a */
    mpfr_mul_d(SR, SR, 2.0 * rounds * c->etac, MPFR_RNDU);
    mpfr_mul_d(a2, A, 1 + g, MPFR_RNDU);
    mpfr_add(a2, a2, SR, MPFR_RNDU);
    mpfr_mul_d(keta, A, g, MPFR_RNDU);
    mpfr_add(keta, keta, SR, MPFR_RNDU);
    mpfr_add_d(keta, keta, keta_a, MPFR_RNDU);
    /* overflow of some partial sum: a2 (1 + K u) + keta >= max finite */
    mpfr_mul_d(top, a2, 1 + K * c->ua, MPFR_RNDU);
    mpfr_add(top, top, keta, MPFR_RNDU);
    if (!ok || !mpfr_number_p(slo) || !mpfr_number_p(shi) || !mpfr_number_p(top) ||
        mpfr_cmp_d(top, c->maxfin_a) >= 0) {
        ce_set_all(r, fl);
    } else {
        mpfr_mul_d(em, a2, K, MPFR_RNDU);
        mpfr_mul_d(em, em, c->ua, MPFR_RNDU);
        mpfr_add(em, em, keta, MPFR_RNDU);
        mpfr_sub(slo, slo, em, MPFR_RNDD);
        mpfr_add(shi, shi, em, MPFR_RNDU);
        double lo = ce_round(c, c->af, slo, NMO_RU);
        double hi = ce_round(c, c->af, shi, NMO_RD);
        ce_setd2(r, lo, hi, fl);
        ce_mag(r, mg);
    }
    mpfr_clears(slo, shi, A, SR, a2, keta, em, top, t, (mpfr_ptr)0);
}

/* Mirrors nmo_fenc_scale_shift (the bound and its source are there). */
void nmo_cenc_scale_shift(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *x, const nmo_cenc *a,
                          const nmo_cenc *m, const nmo_cenc *b)
{
    uint32_t fl = x->flags | a->flags | m->flags | b->flags;
    if (ce_is_nan(x) || ce_is_nan(a) || ce_is_nan(m) || ce_is_nan(b)) { ce_set_nan(r, fl); return; }
    if (!mpfr_number_p(x->lo) || !mpfr_number_p(x->hi) || !mpfr_number_p(a->lo) ||
        !mpfr_number_p(a->hi) || !mpfr_number_p(m->lo) || !mpfr_number_p(m->hi) ||
        !mpfr_number_p(b->lo) || !mpfr_number_p(b->hi)) {
        ce_set_all(r, fl);
        return;
    }
    double am = ce_abs(a);
    double mg = nmo_mag_mul(x->mag, ce_abs(x), a->mag, am) + nmo_mag_mul(m->mag, ce_abs(m), a->mag, am) + b->mag;
    mpfr_t dl, dh, lo, hi, e0, t, u;
    mpfr_inits2(4 * WP, dl, dh, lo, hi, e0, t, u, (mpfr_ptr)0);
    mpfr_sub(dl, x->lo, m->hi, MPFR_RNDN); /* exact at 4 WP */
    mpfr_sub(dh, x->hi, m->lo, MPFR_RNDN);
    ce_mul_exact(c, lo, hi, dl, dh, a->lo, a->hi);
    mpfr_add(lo, lo, b->lo, MPFR_RNDD);
    mpfr_add(hi, hi, b->hi, MPFR_RNDU);
    /* e0 = u (1 + 2u) (X A + B + 2 M A) + 4 eta_c */
    ce_absmax(t, a);   /* A */
    ce_absmax(u, x);   /* X */
    mpfr_mul(e0, u, t, MPFR_RNDU);
    ce_absmax(u, m);   /* M */
    mpfr_mul(u, u, t, MPFR_RNDU);
    mpfr_mul_ui(u, u, 2, MPFR_RNDU);
    mpfr_add(e0, e0, u, MPFR_RNDU);
    ce_absmax(u, b);   /* B */
    mpfr_add(e0, e0, u, MPFR_RNDU);
    mpfr_mul_d(e0, e0, c->uc * (1 + 2 * c->uc), MPFR_RNDU);
    mpfr_add_d(e0, e0, 4 * c->etac, MPFR_RNDU);
    mpfr_sub(lo, lo, e0, MPFR_RNDD);
    mpfr_add(hi, hi, e0, MPFR_RNDU);
    double l = ce_round(c, c->cf, lo, NMO_RNE), h = ce_round(c, c->cf, hi, NMO_RNE);
    ce_setd2(r, l, h, fl);
    ce_mag(r, mg);
    mpfr_clears(dl, dh, lo, hi, e0, t, u, (mpfr_ptr)0);
}

/* ---- sharpened reductions (softmax family): mirror nmo_fenc_sum_sharp / dot_sharp_d --- */

/* em = min(emj, emr) + keta (emr < 0: none); the overflow test and the snap as in
 * ce_red_finish with k = kt. */
static void ce_red_finish_em(nmo_cctx *c, nmo_cenc *r, mpfr_ptr slo, mpfr_ptr shi, mpfr_ptr A,
                             double kt, mpfr_ptr emj, mpfr_ptr emr, int use_r, double keta,
                             uint32_t fl)
{
    if (!(kt < INFINITY)) { ce_set_all(r, fl); return; } /* beyond the geometry */
    mpfr_t top;
    mpfr_init2(top, 4 * WP);
    mpfr_mul_d(top, A, 1 + kt * c->ua, MPFR_RNDU);
    mpfr_add_d(top, top, keta, MPFR_RNDU);
    if (!mpfr_number_p(slo) || !mpfr_number_p(shi) || !mpfr_number_p(top) ||
        mpfr_cmp_d(top, c->maxfin_a) >= 0) {
        ce_set_all(r, fl);
    } else {
        if (use_r && mpfr_cmp(emr, emj) < 0) mpfr_set(emj, emr, MPFR_RNDU);
        mpfr_add_d(emj, emj, keta, MPFR_RNDU);
        mpfr_sub(slo, slo, emj, MPFR_RNDD);
        mpfr_add(shi, shi, emj, MPFR_RNDU);
        double lo = ce_round(c, c->af, slo, NMO_RU);
        double hi = ce_round(c, c->af, shi, NMO_RD);
        ce_setd2(r, lo, hi, fl);
    }
    mpfr_clear(top);
}

/* The sharpened sum's bound from its four sums (slo = sum lo RNDD, shi = sum hi RNDU,
 * A = sum |bounds| RNDU, R = the same without the largest, RNDU) and k nonzero terms:
 * em = min((k-1) u A, R (1 + 4 k u)) (+ the ftz term), then the snap. */
static void ce_sum_sharp_finish(nmo_cctx *c, nmo_cenc *r, mpfr_ptr slo, mpfr_ptr shi, mpfr_ptr A,
                                mpfr_ptr R, int64_t k, int64_t n, uint32_t fl)
{
    mpfr_t emj, emr;
    mpfr_inits2(4 * WP, emj, emr, (mpfr_ptr)0);
    double kj = ce_red_k(c, n, k, 0); /* k - 1 for sum=any */
    mpfr_mul_d(emj, A, kj, MPFR_RNDU);
    mpfr_mul_d(emj, emj, c->ua, MPFR_RNDU);
    int use_r = c->ua <= c->uc && (double)k * c->ua <= 0.25;
    mpfr_mul_d(emr, R, 1 + 4 * (double)k * c->ua, MPFR_RNDU);
    double keta = c->ftz && n > 1 ? (double)(n - 1) * c->etaa : 0;
    ce_red_finish_em(c, r, slo, shi, A, kj, emj, emr, use_r, keta, fl);
    mpfr_clears(emj, emr, (mpfr_ptr)0);
}

void nmo_cenc_sum_sharp(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *x, int64_t n)
{
    uint32_t fl = 0;
    for (int64_t i = 0; i < n; i++) fl |= x[i].flags;
    for (int64_t i = 0; i < n; i++)
        if (ce_is_nan(&x[i])) { ce_set_nan(r, fl); return; }
    mpfr_ptr *p = ce_ptrs(c, n > 0 ? n : 1);
    mpfr_t slo, shi, A, R;
    mpfr_inits2(4 * WP, slo, shi, A, R, (mpfr_ptr)0);
    for (int64_t i = 0; i < n; i++) p[i] = (mpfr_ptr)x[i].lo;
    mpfr_sum(slo, p, (unsigned long)n, MPFR_RNDD);
    for (int64_t i = 0; i < n; i++) p[i] = (mpfr_ptr)x[i].hi;
    mpfr_sum(shi, p, (unsigned long)n, MPFR_RNDU);
    /* endpoints are lattice values: |bounds| as doubles pick the same t* as the fast engine */
    mpfr_t *ab = malloc((size_t)(n > 0 ? n : 1) * sizeof(mpfr_t));
    double big = -1;
    int64_t ib = -1, k = 0;
    for (int64_t i = 0; i < n; i++) {
        mpfr_init2(ab[i], WP);
        ce_absmax(ab[i], &x[i]);
        double m = mpfr_get_d(ab[i], MPFR_RNDN);
        if (m > big) big = m, ib = i;
        k += !mpfr_zero_p(x[i].lo) || !mpfr_zero_p(x[i].hi);
        p[i] = ab[i];
    }
    mpfr_sum(A, p, (unsigned long)n, MPFR_RNDU);
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++)
        if (i != ib) p[m++] = ab[i];
    mpfr_sum(R, p, (unsigned long)m, MPFR_RNDU);
    for (int64_t i = 0; i < n; i++) mpfr_clear(ab[i]);
    free(ab);
    double mg = 0;
    for (int64_t i = 0; i < n; i++) mg += x[i].mag; /* nmo_mag_sum's order */
    ce_sum_sharp_finish(c, r, slo, shi, A, R, k, n, fl);
    ce_mag(r, mg);
    mpfr_clears(slo, shi, A, R, (mpfr_ptr)0);
}

/* dst = the exact sum of n doubles (dst's precision is set here so that every addition
 * is exact: the sum spans 2^(emin-53) .. 2^(emax+64)). */
static void ce_exact_sum_d(mpfr_ptr dst, const nmo_fenc *x, int64_t n, int which, int64_t skip)
{
    int emin = INT_MAX, emax = INT_MIN;
    for (int64_t i = 0; i < n; i++) {
        double v = which == 0 ? x[i].lo : which == 1 ? x[i].hi : fmax(fabs(x[i].lo), fabs(x[i].hi));
        if (v == 0 || i == skip) continue;
        int e;
        (void)frexp(v, &e);
        if (e < emin) emin = e;
        if (e > emax) emax = e;
    }
    mpfr_set_prec(dst, emin > emax ? 64 : (mpfr_prec_t)(emax - emin + 53 + 64 + 2));
    mpfr_set_zero(dst, 1);
    for (int64_t i = 0; i < n; i++) {
        double v = which == 0 ? x[i].lo : which == 1 ? x[i].hi : fmax(fabs(x[i].lo), fabs(x[i].hi));
        if (v != 0 && i != skip) mpfr_add_d(dst, dst, v, MPFR_RNDN); /* exact */
    }
}

/* nmo_cenc_sum_sharp on fast-engine enclosures (finite doubles, the terms the certified
 * engine would see: lattice values), exported. The four sums are formed exactly and then
 * rounded once in the direction mpfr_sum rounds them there (mpfr_sum is correctly
 * rounded, so the values are the same), then the same finish: the result is what the
 * certified engine computes from these terms, without n MPFR enclosures or recomputing
 * the terms. Returns 0, or -1 (nothing written) for a NaN or infinite endpoint. */
int nmo_cenc_sum_sharp_fenc(nmo_cctx *c, nmo_fenc *r, const nmo_fenc *x, int64_t n)
{
    uint32_t fl = 0;
    double big = -1;
    int64_t ib = -1, k = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(x[i].lo) || !isfinite(x[i].hi)) return -1;
        fl |= x[i].flags;
        double m = fmax(fabs(x[i].lo), fabs(x[i].hi));
        if (m > big) big = m, ib = i; /* the first largest, as both engines pick it */
        k += x[i].lo != 0 || x[i].hi != 0;
    }
    mpfr_t ex, slo, shi, A, R;
    mpfr_init2(ex, 64);
    mpfr_inits2(4 * WP, slo, shi, A, R, (mpfr_ptr)0);
    ce_exact_sum_d(ex, x, n, 0, -1);
    mpfr_set(slo, ex, MPFR_RNDD);
    ce_exact_sum_d(ex, x, n, 1, -1);
    mpfr_set(shi, ex, MPFR_RNDU);
    ce_exact_sum_d(ex, x, n, 2, -1);
    mpfr_set(A, ex, MPFR_RNDU);
    ce_exact_sum_d(ex, x, n, 2, ib);
    mpfr_set(R, ex, MPFR_RNDU);
    nmo_cenc res;
    nmo_cenc_init(c, &res);
    ce_sum_sharp_finish(c, &res, slo, shi, A, R, k, n, fl);
    ce_mag(&res, nmo_mag_sum(x, n));
    nmo_cenc_export(c, r, &res);
    nmo_cenc_clear(c, &res);
    mpfr_clears(ex, slo, shi, A, R, (mpfr_ptr)0);
    return 0;
}

void nmo_cenc_dot_sharp_d(nmo_cctx *c, nmo_cenc *r, const double *x, const double *y, int64_t n)
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
    double big = -1;
    int64_t ib = -1, k = 0;
    int exact = 1;
    for (int64_t i = 0; i < n; i++) {
        double pd = x[i] * y[i]; /* exact: inputs have at most 26 significant bits */
        mpfr_init2(pr[i], 2 * WP);
        mpfr_set_d(pr[i], x[i], MPFR_RNDN);
        mpfr_mul_d(pr[i], pr[i], y[i], MPFR_RNDN); /* exact */
        mpfr_init2(pr[n + i], 2 * WP);
        mpfr_abs(pr[n + i], pr[i], MPFR_RNDN);
        if (fabs(pd) > big) big = fabs(pd), ib = i;
        k += pd != 0;
        if (exact && pd != 0 && nmo_fmt_round(c->af, pd, NMO_RNE, c->ftz) != pd) exact = 0;
    }
    mpfr_t slo, shi, A, R, emj, emr;
    mpfr_inits2(4 * WP, slo, shi, A, R, emj, emr, (mpfr_ptr)0);
    for (int64_t i = 0; i < n; i++) p[i] = pr[i];
    mpfr_sum(slo, p, (unsigned long)n, MPFR_RNDD);
    mpfr_sum(shi, p, (unsigned long)n, MPFR_RNDU);
    for (int64_t i = 0; i < n; i++) p[i] = pr[n + i];
    mpfr_sum(A, p, (unsigned long)n, MPFR_RNDU);
    double mg = ce_dot_mag(p, n);
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++)
        if (i != ib) p[m++] = pr[n + i];
    mpfr_sum(R, p, (unsigned long)m, MPFR_RNDU);
    double kd = (double)k, kt, keta;
    int use_r;
    double q = INFINITY;
    if (exact && !c->ftz)
        for (int64_t i = 0; i < n; i++) {
            double pd = x[i] * y[i];
            if (pd != 0) q = fmin(q, nmo_fe_lowbit(pd));
        }
    if (exact && !c->ftz && k > 0 && mpfr_cmp_d(A, q / c->ua) < 0) { /* every order exact */
        kt = ce_red_k(c, n, k, 0);
        mpfr_set_zero(emj, 1);
        ce_red_finish_em(c, r, slo, shi, A, kt, emj, emr, 0, 0, 0);
        ce_mag(r, mg);
        for (int64_t i = 0; i < 2 * n; i++) mpfr_clear(pr[i]);
        free(pr);
        mpfr_clears(slo, shi, A, R, emj, emr, (mpfr_ptr)0);
        return;
    }
    if (exact) {
        kt = ce_red_k(c, n, k, 0); /* k - 1 for sum=any */
        use_r = kd * c->ua <= 0.25;
        mpfr_mul_d(emr, R, 1 + 4 * kd * c->ua, MPFR_RNDU);
        keta = c->ftz ? 2.0 * (double)n * c->etaa : 0;
    } else {
        kt = ce_red_k(c, n, k, 1); /* k for sum=any */
        use_r = kd * c->ua <= 0.125;
        mpfr_mul_d(emr, R, 1 + 8 * kd * c->ua, MPFR_RNDU);
        mpfr_set_d(emj, big, MPFR_RNDN);
        mpfr_mul_d(emj, emj, c->ua, MPFR_RNDU);
        mpfr_add(emr, emr, emj, MPFR_RNDU);
        keta = (c->ftz ? 2.0 : 1.0) * (double)n * c->etaa;
    }
    keta += nmo_fe_daz_term(c->ftz, c->minnorm_c, x, y, n); /* DAZ: as the fast engine */
    mpfr_mul_d(emj, A, kt, MPFR_RNDU);
    mpfr_mul_d(emj, emj, c->ua, MPFR_RNDU);
    ce_red_finish_em(c, r, slo, shi, A, kt, emj, emr, use_r, keta, 0);
    ce_mag(r, mg);
    for (int64_t i = 0; i < 2 * n; i++) mpfr_clear(pr[i]);
    free(pr);
    mpfr_clears(slo, shi, A, R, emj, emr, (mpfr_ptr)0);
}

/* ---- linear algebra and attention (numoracle issue 3): mirrors of enc_fast.h -------- */

void nmo_cenc_dot_ed(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *x, const double *y, int64_t n,
                     double k)
{
    uint32_t fl = 0;
    int nan = 0, inf = 0;
    int64_t z = 0; /* exactly zero terms (see nmo_fenc_dot_ed) */
    for (int64_t i = 0; i < n; i++) {
        fl |= x[i].flags;
        nan |= ce_is_nan(&x[i]) | (y[i] != y[i]);
        inf |= mpfr_inf_p(x[i].lo) | mpfr_inf_p(x[i].hi) | isinf(y[i]);
        z += (mpfr_zero_p(x[i].lo) && mpfr_zero_p(x[i].hi)) || y[i] == 0;
    }
    if (nan) { ce_set_nan(r, fl); return; }
    if (inf) { ce_set_all(r, fl); return; }
    double mg = 0;
    for (int64_t i = 0; i < n; i++) {
        double ay = fabs(y[i]);
        mg += nmo_mag_mul(x[i].mag, ce_abs(&x[i]), ay, ay);
    }
    /* products of lattice values (<= 53 bits each) are exact at 128 bits; one block of
     * custom-allocated significands instead of 3n mpfr_init calls */
    const mpfr_prec_t pp = 128;
    int64_t nn = n > 0 ? n : 1;
    size_t sz = mpfr_custom_get_size(pp);
    sz = (sz + 15) & ~(size_t)15;
    mpfr_t *pr = malloc((size_t)nn * 3 * sizeof(mpfr_t));
    char *mem = malloc((size_t)nn * 3 * sz);
    mpfr_ptr *p = ce_ptrs(c, nn);
    if (!pr || !mem || !p) abort();
    for (int64_t i = 0; i < 3 * n; i++) {
        mpfr_custom_init(mem + (size_t)i * sz, pp);
        mpfr_custom_init_set(pr[i], MPFR_ZERO_KIND, 0, pp, mem + (size_t)i * sz);
    }
    for (int64_t i = 0; i < n; i++) {
        mpfr_mul_d(pr[i], x[i].lo, y[i], MPFR_RNDN);     /* exact */
        mpfr_mul_d(pr[n + i], x[i].hi, y[i], MPFR_RNDN); /* exact */
        if (mpfr_greater_p(pr[i], pr[n + i])) mpfr_swap(pr[i], pr[n + i]);
        if (mpfr_cmpabs(pr[i], pr[n + i]) > 0) mpfr_abs(pr[2 * n + i], pr[i], MPFR_RNDN);
        else mpfr_abs(pr[2 * n + i], pr[n + i], MPFR_RNDN);
    }
    mpfr_t slo, shi, A;
    mpfr_inits2(4 * WP, slo, shi, A, (mpfr_ptr)0);
    for (int64_t i = 0; i < n; i++) p[i] = pr[i];
    mpfr_sum(slo, p, (unsigned long)n, MPFR_RNDD);
    for (int64_t i = 0; i < n; i++) p[i] = pr[n + i];
    mpfr_sum(shi, p, (unsigned long)n, MPFR_RNDU);
    for (int64_t i = 0; i < n; i++) p[i] = pr[2 * n + i];
    mpfr_sum(A, p, (unsigned long)n, MPFR_RNDU);
    free(pr);
    free(mem);
    double keta = (c->ftz ? 2.0 : 1.0) * fmax(k, (double)n) * c->etaa;
    if (c->ftz) { /* DAZ of subnormal y_i, as nmo_fenc_dot_ed (lattice endpoints: exact doubles) */
        double d = 0;
        for (int64_t i = 0; i < n; i++) {
            double xl = mpfr_get_d(x[i].lo, MPFR_RNDN), xh = mpfr_get_d(x[i].hi, MPFR_RNDN);
            d = nmo_fe_daz_add(d, c->minnorm_c, fmax(fabs(xl), fabs(xh)), y[i]);
        }
        keta += nmo_fe_daz_finish(d, n);
    }
    ce_red_finish(c, r, slo, shi, A, fmax(k - (double)z, 0), keta, fl);
    ce_mag(r, mg);
    mpfr_clears(slo, shi, A, (mpfr_ptr)0);
}

void nmo_cenc_widen(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a, double rel, double abs)
{
    if (ce_is_nan(a)) { nmo_cenc_set(c, r, a); return; }
    mpfr_t v, t;
    mpfr_inits2(4 * WP, v, t, (mpfr_ptr)0);
    double lo, hi;
    if (mpfr_number_p(a->lo) && !((mpfr_zero_p(a->lo) || rel == 0) && abs == 0)) {
        mpfr_abs(t, a->lo, MPFR_RNDN);
        mpfr_mul_d(t, t, rel, MPFR_RNDU);
        mpfr_sub(v, a->lo, t, MPFR_RNDD);
        mpfr_sub_d(v, v, abs, MPFR_RNDD);
        lo = ce_round(c, c->cf, v, NMO_RD);
    } else {
        lo = mpfr_get_d(a->lo, MPFR_RNDN);
    }
    if (mpfr_number_p(a->hi) && !((mpfr_zero_p(a->hi) || rel == 0) && abs == 0)) {
        mpfr_abs(t, a->hi, MPFR_RNDN);
        mpfr_mul_d(t, t, rel, MPFR_RNDU);
        mpfr_add(v, a->hi, t, MPFR_RNDU);
        mpfr_add_d(v, v, abs, MPFR_RNDU);
        hi = ce_round(c, c->cf, v, NMO_RU);
    } else {
        hi = mpfr_get_d(a->hi, MPFR_RNDN);
    }
    mpfr_clears(v, t, (mpfr_ptr)0);
    double m = a->mag;
    ce_setd2(r, lo, hi, a->flags);
    ce_mag(r, m);
}

void nmo_cenc_gemm_elem_t(nmo_cctx *c, nmo_cenc *r, const nmo_tensor *X, int tx,
                          const nmo_tensor *Y, int ty, int64_t i, int64_t j)
{
    int64_t kk = tx ? X->dims[0] : X->dims[1];
    int64_t xo = tx ? i * X->strides[1] : i * X->strides[0], xs = tx ? X->strides[0] : X->strides[1];
    int64_t yo = ty ? j * Y->strides[0] : j * Y->strides[1], ys = ty ? Y->strides[1] : Y->strides[0];
    double *a = nmo_cctx_dvec(c, NMO_CSCRATCH - 1, kk);
    double *b = nmo_cctx_dvec(c, NMO_CSCRATCH - 2, kk);
    nmo_tensor_load_f64(a, X, xo, kk, xs);
    nmo_tensor_load_f64(b, Y, yo, kk, ys);
    ce_dot_d(c, r, a, b, kk, c->gemm_partials);
}
