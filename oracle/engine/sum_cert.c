/* numoracle: certified enclosure engine, reductions and matrix-product elements (sum, dot_d, sumsq_d, max_v, gemm_*). Each function mirrors the
 * fast primitive of the same name in engine/sum_fast.h (the sources of the bounds are
 * there), evaluated in MPFR with outward rounding (enc_cert.c). */
#include "engine/cert_priv.h"

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

void nmo_cenc_gemm_partials(nmo_cctx *c, int pf) { c->gemm_partials = pf; }

void nmo_cenc_dot_d(nmo_cctx *c, nmo_cenc *r, const double *x, const double *y, int64_t n)
{
    ce_dot_d(c, r, x, y, n, -1);
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
