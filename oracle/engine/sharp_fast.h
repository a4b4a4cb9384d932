/* numoracle: fast enclosure engine, sharpened reductions (softmax family): sum_sharp, dot_sharp_d.
 * Part of engine/enc_fast.h, which includes the family headers in order (each uses
 * the ones before it); include engine/enc_fast.h, never this file. The certified
 * mirror of each primitive: sharp_cert.c. */
#ifndef NUMORACLE_SHARP_FAST_H
#define NUMORACLE_SHARP_FAST_H
#ifndef NUMORACLE_ENC_FAST_H
#error "include engine/enc_fast.h"
#endif

/* ---- sharpened reductions (softmax family) ---------------------------------------------
 * Two refinements of the any-order bounds above, both rigorous for RN in acc:
 *  - an addition with an operand that is exactly 0 is exact, so only the k terms whose
 *    enclosure is not [0, 0] count: (k-1) u A (Jeannerod & Rump 2013 on those k terms);
 *  - dominant term: let t* be the term with the largest |bound| and R the sum of the other
 *    |bounds|. An addition on the path from t* to the root adds a float b to a float a
 *    and errs by at most |b| (a itself is a candidate), and the b's are disjoint partial
 *    sums of the other terms; every other addition errs by at most u times a partial sum
 *    of the other terms. Hence |error| <= R (1+u)^(k-2) (1 + (k-2) u) <= R (1 + 4 k u)
 *    for k u <= 1/4 (needs the terms to be acc floats: acc at least as precise as
 *    compute). A sum dominated by one term (a peaked softmax: 1 + tiny terms) is then
 *    nearly exact instead of (k-1) u wide.
 * For dot products whose products are all acc floats the same sum bounds apply; otherwise
 * (products rounded or fused) k u A, or u |p*| + R (1 + 8 k u) for k u <= 1/8 (the first
 * operation on p* errs by u |p*| plus u times a partial sum of the others).
 * The model error em = min(...) + the underflow term; the binary64 value of em has
 * relative error <= (n + 8) 2^-52 (sums of n non-negative terms, a few products). */
/* dom: the R bound was taken and [dlo, dhi] is the dominant term (acc floats), R the
 * others' |bounds|: then slo - em <= dlo <= dhi <= shi + em exactly (em >= R), and
 * slo - em >= dlo - (R + em): when R + em is below the gap to the neighbour the snap is
 * the dominant endpoint itself, decided without a radius (a peaked softmax sums to
 * 1 + tiny: binary64 cannot resolve 1 + tiny, this argument can). */
/* em_rel: the relative error of the binary64 em ((n + 8) 2^-52 for naive sums). */
static inline void nmo_fe_red_finish_em_rel(nmo_fctx *c, nmo_fenc *r, double slo, double shi,
                                            double a_d, double kt, double em, double keta,
                                            double err, int64_t n, uint32_t fl, int dom,
                                            double dlo, double dhi, double R, double em_rel)
{
    if (!(fabs(slo) <= 0x1p1000 && fabs(shi) <= 0x1p1000 && a_d <= 0x1p1000) || !(kt < INFINITY)) {
        nmo_fenc_set_all(r, fl);
        return;
    }
    double e = err + em * em_rel + keta * 0x1p-51;
    em += keta;
    double vlo = slo - em, vhi = shi + em;
    double w = (R + em) * (1 + (double)(n + 16) * 0x1p-52);
    if (e == 0 && em == 0) { /* exact sums (binary64 too): no radius */
        r->lo = nmo_fe_round(c, c->af, vlo, NMO_RU);
        r->hi = nmo_fe_round(c, c->af, vhi, NMO_RD);
        fl |= c->force_unc;
    } else if (dom && !c->ftz && w < dlo - nmo_fmt_next_down(c->af, dlo)) {
        r->lo = dlo;
        fl |= c->force_unc;
    } else {
        r->lo = nmo_fe_snap(c, c->af, NMO_RU, vlo, e, &fl);
    }
    if (e == 0 && em == 0) {
        /* set above */
    } else if (dom && !c->ftz && w < nmo_fmt_next_up(c->af, dhi) - dhi) {
        r->hi = dhi;
        fl |= c->force_unc;
    } else {
        r->hi = nmo_fe_snap(c, c->af, NMO_RD, vhi, e, &fl);
    }
    r->flags = fl;
    nmo_fe_fix(r);
    double top = a_d * (1 + kt * c->ua) + keta;
    if (fabs(top - c->maxfin_a) <= c->maxfin_a * 0x1p-30) r->flags |= NMO_EF_UNC;
    if (top >= c->maxfin_a) nmo_fenc_set_all(r, r->flags);
}

static inline void nmo_fe_red_finish_em(nmo_fctx *c, nmo_fenc *r, double slo, double shi,
                                        double a_d, double kt, double em, double keta, double err,
                                        int64_t n, uint32_t fl, int dom, double dlo, double dhi,
                                        double R)
{
    nmo_fe_red_finish_em_rel(c, r, slo, shi, a_d, kt, em, keta, err, n, fl, dom, dlo, dhi, R,
                             (double)(n + 8) * 0x1p-52);
}

/* s += p with its rounding error added to comp (TwoSum, Knuth): one step of Sum2. */
#define NMO_FE_TWOSUM_ACC(s, comp, p)                                                      \
    do {                                                                                   \
        double t_ = (s) + (p), z_ = t_ - (s);                                              \
        (comp) += ((s) - (t_ - z_)) + ((p) - z_);                                          \
        (s) = t_;                                                                          \
    } while (0)

/* Sum of n enclosures in any order and tree shape, in acc, with the sharpened bound:
 * min((k-1) u A, R (1 + 4 k u)) (+ (n-1) min_normal under ftz). */
static inline void nmo_fenc_sum_sharp(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *x, int64_t n)
{
    double slo = 0, shi = 0, a = 0, big = -1, R = 0;
    int64_t ib = -1, k = 0;
    uint32_t fl = 0;
    int mustnan = 0;
    for (int64_t i = 0; i < n; i++) {
        slo += x[i].lo;
        shi += x[i].hi;
        double m = fmax(fabs(x[i].lo), fabs(x[i].hi));
        a += m;
        if (m > big) big = m, ib = i;
        k += x[i].lo != 0 || x[i].hi != 0;
        fl |= x[i].flags;
        mustnan |= x[i].lo != x[i].lo;
    }
    if (mustnan) { nmo_fenc_set_nan(r, fl); return; }
    for (int64_t i = 0; i < n; i++)
        if (i != ib) R += fmax(fabs(x[i].lo), fabs(x[i].hi));
    double kj = nmo_fe_red_k(c, n, k, 0); /* k - 1 for sum=any */
    double em = kj * c->ua * a;
    int dom = 0;
    if (c->ua <= c->uc && (double)k * c->ua <= 0.25) {
        double er = R * (1 + 4 * (double)k * c->ua);
        if (er < em) em = er, dom = ib >= 0;
    }
    double keta = c->ftz && n > 1 ? (double)(n - 1) * c->etaa : 0;
    double mg = nmo_mag_sum(x, n);
    nmo_fe_red_finish_em(c, r, slo, shi, a, kj, em, keta, (double)n * 0x1p-53 * a, n, fl, dom,
                         dom ? x[ib].lo : 0, dom ? x[ib].hi : 0, R);
    r->mag = nmo_mag_fin(r, mg);
    if (!(r->flags & NMO_EF_UNC) || (fl & NMO_EF_UNC) || c->force_unc || n < 2) return;
    /* The naive binary64 sums err by up to n 2^-53 A: over millions of terms (a scalar loss
     * over a whole tensor) that radius leaves the snap undecided about one time in ten and
     * the unit escalated (500 s for a 4096x4096 kl_div). Redo the four sums compensated:
     * Sum2 (Ogita, Rump & Oishi 2005, Prop. 4.5): |res - s| <= 2^-53 |s| + g^2 sum|p|,
     * g = gamma_{n-1} = (n-1) 2^-53 / (1 - (n-1) 2^-53); the same bound, a tighter radius. */
    double s1 = 0, c1 = 0, s2 = 0, c2 = 0, s3 = 0, c3 = 0, s4 = 0, c4 = 0;
    for (int64_t i = 0; i < n; i++) {
        double m = fmax(fabs(x[i].lo), fabs(x[i].hi));
        NMO_FE_TWOSUM_ACC(s1, c1, x[i].lo);
        NMO_FE_TWOSUM_ACC(s2, c2, x[i].hi);
        NMO_FE_TWOSUM_ACC(s3, c3, m);
        if (i != ib) NMO_FE_TWOSUM_ACC(s4, c4, m);
    }
    slo = s1 + c1, shi = s2 + c2, a = s3 + c3, R = s4 + c4;
    if (!isfinite(slo) || !isfinite(shi) || !isfinite(a) || !(a <= 0x1p1000)) return;
    double g = (double)n * 0x1p-53 * 1.01, gg = g * g;
    em = kj * c->ua * a;
    dom = 0;
    if (c->ua <= c->uc && (double)k * c->ua <= 0.25) {
        double er = R * (1 + 4 * (double)k * c->ua);
        if (er < em) em = er, dom = ib >= 0;
    }
    /* a and R err by <= (2^-53 + g^2) relative, em and er add up to two roundings more */
    double err = 0x1p-52 * fmax(fabs(slo), fabs(shi)) + 2 * gg * a;
    nmo_fe_red_finish_em_rel(c, r, slo, shi, a, kj, em, keta, err, n, fl, dom,
                             dom ? x[ib].lo : 0, dom ? x[ib].hi : 0, R, 0x1p-50 + 2 * gg);
    r->mag = nmo_mag_fin(r, mg);
    if (!(r->flags & NMO_EF_UNC)) return;
    /* Still undecided: an endpoint of the bound lies on the lattice itself or within the
     * radius of it (terms that are exact multiples of one another, e.g. a near-uniform
     * kl_div over 16M elements whose terms are all equal: every sum is exact and the
     * endpoint is an fp32 value). Finish the sum in the certified engine from these
     * same terms (exact sums, one rounding: nmo_cenc_sum_sharp_fenc) instead of
     * escalating the unit, which recomputes every term in MPFR (550 s at 16M terms). */
    struct nmo_cctx *cc = nmo_fctx_cert(c);
    if (cc && nmo_cenc_sum_sharp_fenc(cc, r, x, n) == 0) c->n_sum_cert++;
}


/* Dot product of two point vectors (input values) in any order, FMA or not, in acc, with
 * the sharpened bounds (exact products: as nmo_fenc_sum_sharp; else min(k u A,
 * u |p*| + R (1 + 8 k u))) plus the underflow term. Exact products that are all
 * multiples of a quantum q with A < q / u (gradual underflow): every partial sum is a
 * multiple of q below q 2^p in magnitude, hence an acc float: every order is exact. */
static inline void nmo_fenc_dot_sharp_d(nmo_fctx *c, nmo_fenc *r, const double *x, const double *y,
                                        int64_t n)
{
    double s = 0, a = 0, big = -1, R = 0;
    int64_t ib = -1, k = 0;
    int exact = 1;
    for (int64_t i = 0; i < n; i++) {
        double p = x[i] * y[i], ap = fabs(p);
        s += p;
        a += ap;
        if (ap > big) big = ap, ib = i;
        k += p != 0;
        if (exact && p != 0 && nmo_fmt_round(c->af, p, NMO_RNE, c->ftz) != p) exact = 0;
    }
    if (s != s || !(a <= INFINITY)) {
        int nan_in = 0;
        for (int64_t i = 0; i < n; i++) nan_in |= (x[i] != x[i]) | (y[i] != y[i]);
        if (nan_in) { nmo_fenc_set_nan(r, 0); return; }
        nmo_fenc_set_all(r, 0);
        return;
    }
    for (int64_t i = 0; i < n; i++)
        if (i != ib) R += fabs(x[i] * y[i]);
    double kd = (double)k, em, kt, keta;
    int dom = 0;
    double q = INFINITY;
    if (exact && !c->ftz)
        for (int64_t i = 0; i < n; i++) {
            double p = x[i] * y[i];
            if (p != 0) q = fmin(q, nmo_fe_lowbit(p));
        }
    if (exact && !c->ftz && k > 0 && a < q / c->ua) {
        kt = nmo_fe_red_k(c, n, k, 0);
        em = 0; /* a is exact here, and so is s */
        keta = 0;
    } else if (exact) {
        kt = nmo_fe_red_k(c, n, k, 0); /* k - 1 for sum=any */
        em = kt * c->ua * a;
        if (kd * c->ua <= 0.25) {
            double er = R * (1 + 4 * kd * c->ua);
            if (er < em) em = er, dom = ib >= 0;
        }
        keta = c->ftz ? 2.0 * (double)n * c->etaa : 0;
    } else {
        kt = nmo_fe_red_k(c, n, k, 1); /* k for sum=any */
        em = kt * c->ua * a;
        if (kd * c->ua <= 0.125) {
            double er = c->ua * big + R * (1 + 8 * kd * c->ua);
            if (er < em) em = er;
        }
        keta = (c->ftz ? 2.0 : 1.0) * (double)n * c->etaa;
    }
    keta += nmo_fe_daz_term(c->ftz, c->minnorm_c, x, y, n);
    double pd = dom ? x[ib] * y[ib] : 0;
    double err = em == 0 && keta == 0 && exact ? 0 : (double)n * 0x1p-53 * a;
    nmo_fe_red_finish_em(c, r, s, s, a, kt, em, keta, err, n, 0, dom, pd, pd, R);
    nmo_fe_dot_mag(c, r, a, (double)n * 0x1p-53 * 1.01);
}

#endif
