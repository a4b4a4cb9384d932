/* numoracle: certified enclosure engine, linear algebra and attention (dot_ed, widen, gemm_elem_t). Each function mirrors the
 * fast primitive of the same name in engine/linalg_fast.h (the sources of the bounds are
 * there), evaluated in MPFR with outward rounding (enc_cert.c). */
#include "engine/cert_priv.h"

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
