/* numoracle: certified enclosure engine, elementary primitives (set, constants, + - * /, fma, max/min, hull, round, export). Each function mirrors the
 * fast primitive of the same name in engine/elem_fast.h (the sources of the bounds are
 * there), evaluated in MPFR with outward rounding (enc_cert.c). */
#include "engine/cert_priv.h"

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

void nmo_cenc_round(nmo_cctx *c, nmo_cenc *r, const nmo_cenc *a, nmo_fmt f, nmo_rnd rnd, int sr)
{
    if (ce_is_nan(a)) { nmo_cenc_set(c, r, a); return; }
    double lo = ce_round(c, f, a->lo, sr ? NMO_RD : rnd);
    double hi = ce_round(c, f, a->hi, sr ? NMO_RU : rnd);
    double m = a->mag;
    ce_setd2(r, lo, hi, a->flags);
    ce_mag(r, m);
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
