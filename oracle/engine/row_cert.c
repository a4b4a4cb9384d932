/* numoracle: certified enclosure engine, three-factor products and row kernels (mul3, mul3_row, exp_sub_row, divmul_row). Each function mirrors the
 * fast primitive of the same name in engine/row_fast.h (the sources of the bounds are
 * there), evaluated in MPFR with outward rounding (enc_cert.c). */
#include "engine/cert_priv.h"

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
