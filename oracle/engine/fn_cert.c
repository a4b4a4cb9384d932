/* numoracle: certified enclosure engine, n-ulp functions (sqrt, rsqrt, exp, log, tanh, erf, sigmoid). Each function mirrors the
 * fast primitive of the same name in engine/fn_fast.h (the sources of the bounds are
 * there), evaluated in MPFR with outward rounding (enc_cert.c). */
#include "engine/cert_priv.h"

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
    /* the argument-dependent figure, as in nmo_fenc_exp (|endpoints| rounded up) */
    int n = c->exp_flat ? c->plan.fn_ulps[NMO_FN_EXP]
                        : nmo_plan_exp_ulps(&c->plan, fmax(fabs(mpfr_get_d(a->lo, MPFR_RNDA)),
                                                           fabs(mpfr_get_d(a->hi, MPFR_RNDA))));
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
    /* a measured overflow edge, as in nmo_fenc_exp */
    double tinf = c->cf == NMO_FP32 ? nmo_plan_exp_inf_from(&c->plan) : INFINITY;
    if (tinf < INFINITY && mpfr_cmp_d(a->lo, tinf) >= 0) lo = INFINITY;
    else if (tinf < INFINITY && mpfr_cmp_d(a->hi, tinf) < 0 && hi == INFINITY)
        hi = nmo_fmt_get(c->cf)->max_finite;
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
    nmo_cenc_neg(c, &t, a);
    nmo_cenc_exp(c, &t, &t);
    nmo_cenc_const(c, &one, 1.0);
    nmo_cenc_add(c, &t, &one, &t);
    nmo_cenc_div(c, &t, &one, &t);
    if (nmo_plan_sigmoid_composed(&c->plan)) { /* the formula only, as nmo_fenc_sigmoid */
        nmo_cenc_set(c, r, &t);
    } else {
        ce_incr(c, &s1, a, NMO_FN_SIGMOID);
        nmo_cenc_hull(c, r, &s1, &t);
    }
    nmo_cenc_clear(c, &s1), nmo_cenc_clear(c, &t), nmo_cenc_clear(c, &one);
}
