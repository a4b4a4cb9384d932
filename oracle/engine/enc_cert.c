/* numoracle: certified enclosure engine over MPFR. Each function mirrors the formula of
 * the fast primitive of the same name in enc_fast.h (the comments with the sources of
 * the bounds are there); here every formula is evaluated at NMO_CERT_PREC bits with
 * outward rounding, so its snap is the definition of the enclosure.
 * This file holds the context (init, clear, scratch vectors); the primitives are in one
 * file per family next to their fast side (elem_cert.c / elem_fast.h, fn, row, sum,
 * prodk, sharp, linalg), the shared static helpers in cert_priv.h. */
#include "engine/cert_priv.h"

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
