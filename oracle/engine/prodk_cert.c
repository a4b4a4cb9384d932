/* numoracle: certified enclosure engine, the norms group (prodk, dotk, scale_shift). Each function mirrors the
 * fast primitive of the same name in engine/prodk_fast.h (the sources of the bounds are
 * there), evaluated in MPFR with outward rounding (enc_cert.c). */
#include "engine/cert_priv.h"

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
        if (pts && nmo_fe_sum_exact_core(c->cf, c->af, c->ftz, k, a, b, n, &sx, NULL)) {
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
