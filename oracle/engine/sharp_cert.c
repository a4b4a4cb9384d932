/* numoracle: certified enclosure engine, sharpened reductions (sum_sharp, dot_sharp_d, sum_sharp_fenc). Each function mirrors the
 * fast primitive of the same name in engine/sharp_fast.h (the sources of the bounds are
 * there), evaluated in MPFR with outward rounding (enc_cert.c). */
#include "engine/cert_priv.h"

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
