/* numoracle: fast enclosure engine, row kernels and three-factor products: mul3, mul3_row (norm rows), exp_sub_row,
 * divmul_row (softmax rows).
 * Part of engine/enc_fast.h, which includes the family headers in order (each uses
 * the ones before it); include engine/enc_fast.h, never this file. The certified
 * mirror of each primitive: row_cert.c. */
#ifndef NUMORACLE_ROW_FAST_H
#define NUMORACLE_ROW_FAST_H
#ifndef NUMORACLE_ENC_FAST_H
#error "include engine/enc_fast.h"
#endif

/* ---- softmax rows ------------------------------------------------------------------------ */

void nmo_fe_exp_row_kernel(double *lo, double *hi, int64_t *ok, const double *v, int64_t n, int nulp);
void nmo_fe_divmul_row_kernel(double *lo, double *hi, int64_t *ok, const nmo_fenc *e, int64_t n,
                              double sl, double sh, double rl, double rh);

/* A softmax row's e_j = exp(RN(x_j - m)) for the input points x_j and the row's max m:
 * nmo_fenc_exp(nmo_fenc_sub(set_d(x_j), m)) element by element (same values and flags).
 * The common case (fp32 compute without ftz, m a finite point, an ulp:n exp with n >= 1,
 * d != 0) takes one libm exp per element and the vectorized sides of
 * nmo_fe_exp_row_kernel; any other element goes through the primitives. */
static inline void nmo_fenc_exp_sub_row(nmo_fctx *c, nmo_fenc *ee, const double *x, const nmo_fenc *m,
                                        int64_t n)
{
    int nulp = c->plan.fn_ulps[NMO_FN_EXP];
    /* an argument-dependent exp figure (fn=triton) takes the primitive per element */
    int fast = c->cf == NMO_FP32 && c->fp32rn && !c->ftz && !c->force_unc && m->flags == 0 &&
               m->lo == m->hi && isfinite(m->lo) && nulp >= 1 &&
               (c->exp_flat || nmo_plan_exp_ulps(&c->plan, 0) == nulp);
    int ftzx = nmo_plan_exp_ftz(&c->plan);
    enum { B = 256 };
    double d[B], v[B], lo[B], hi[B];
    int64_t ok[B];
    for (int64_t j0 = 0; j0 < n; j0 += B) {
        int64_t cnt = n - j0 < B ? n - j0 : B;
        if (fast) {
            for (int64_t j = 0; j < cnt; j++) {
                d[j] = (float)(x[j0 + j] + -m->hi); /* nmo_fenc_sub of points: RN32 */
                v[j] = d[j] != 0 && d[j] == d[j] ? exp(d[j]) : 0; /* 0: not the common case */
            }
            nmo_fe_exp_row_kernel(lo, hi, ok, v, cnt, nulp);
        }
        for (int64_t j = 0; j < cnt; j++) {
            nmo_fenc *o = &ee[j0 + j];
            if (fast && ok[j]) {
                /* the mags of nmo_fenc_sub (|x| + mag(m)) and nmo_fenc_exp */
                double md = fabs(x[j0 + j]) + m->mag;
                o->lo = lo[j] < c->minnorm_c && ftzx ? 0 : lo[j]; /* as nmo_fenc_exp */
                o->hi = hi[j];
                o->flags = 0;
                o->mag = nmo_mag_fin(o, hi[j] == 0 ? 0 : nmo_mag_fn(hi[j], hi[j], md));
                continue;
            }
            nmo_fenc xe, dd;
            nmo_fenc_set_d(c, &xe, x[j0 + j]);
            nmo_fenc_sub(c, &dd, &xe, m);
            nmo_fenc_exp(c, o, &dd);
        }
    }
}

/* The mag of hull(e / s, e * rcp) as nmo_fenc_div, nmo_fenc_mul and nmo_fenc_hull form it,
 * for the fast path of nmo_fenc_divmul_row; y1, y2: the quotient's and the product's
 * enclosures as those primitives round them (e, s, rcp non-negative there). */
static inline double nmo_mag_divmul(const nmo_fenc *e, const nmo_fenc *s, const nmo_fenc *rcp,
                                    double ylo, double yhi)
{
    (void)ylo, (void)yhi;
    /* div: |y1| max = RN(e_hi / s_lo); mul: |y2| max = RN(e_hi rcp_hi); each primitive's
     * mag is +inf when its result is not finite (nmo_mag_fin) */
    double q = (double)(float)(e->hi / s->lo), p = (double)(float)(e->hi * rcp->hi);
    double m1 = isfinite(q) ? nmo_mag_div(e->mag, q, s->mag, s->lo, s->hi) : INFINITY;
    double m2 = isfinite(p) ? nmo_mag_mul(e->mag, nmo_mag_abs(e->lo, e->hi), rcp->mag,
                                          nmo_mag_abs(rcp->lo, rcp->hi))
                            : INFINITY;
    return nmo_mag_max(m1, m2);
}

/* A softmax row's outputs y_j = hull(e_j / s, e_j * rcp) (nmo_fenc_div, nmo_fenc_mul,
 * nmo_fenc_hull, exported): the same values and flags; the common case (fp32 compute
 * without ftz, s and rcp finite, positive and unflagged, 0 <= e_j finite) through the
 * vectorized nmo_fe_divmul_row_kernel, any other element through the primitives. */
static inline void nmo_fenc_divmul_row(nmo_fctx *c, nmo_fenc *out, const nmo_fenc *e, const nmo_fenc *s,
                                       const nmo_fenc *rcp, int64_t n)
{
    int fast = c->cf == NMO_FP32 && c->fp32rn && !c->ftz && !c->force_unc && s->flags == 0 &&
               !c->plan.fn_ulps[NMO_FN_DIV] && /* the kernel: RN quotients */
               rcp->flags == 0 && s->lo > 0 && s->hi <= 0x1p1000 && rcp->lo > 0 && rcp->hi <= 0x1p1000;
    enum { B = 256 };
    double lo[B], hi[B];
    int64_t ok[B];
    for (int64_t j0 = 0; j0 < n; j0 += B) {
        int64_t cnt = n - j0 < B ? n - j0 : B;
        if (fast) nmo_fe_divmul_row_kernel(lo, hi, ok, e + j0, cnt, s->lo, s->hi, rcp->lo, rcp->hi);
        for (int64_t j = 0; j < cnt; j++) {
            nmo_fenc *o = &out[j0 + j];
            if (fast && ok[j]) {
                o->lo = lo[j];
                o->hi = hi[j];
                o->flags = e[j0 + j].flags;
                o->mag = nmo_mag_divmul(&e[j0 + j], s, rcp, lo[j], hi[j]);
                continue;
            }
            nmo_fenc y1, y2;
            nmo_fenc_div(c, &y1, &e[j0 + j], s);
            nmo_fenc_mul(c, &y2, &e[j0 + j], rcp);
            nmo_fenc_hull(c, o, &y1, &y2);
        }
    }
}

/* Product of three factors in any association, two roundings in compute.
 * fl(fl(ab)c) = ab(1+d1)c rounded, |d1| <= u, plus an absolute underflow term eta*|c|
 * (Higham, ASNA 2nd ed., §2.2 with gradual underflow): so the result is
 * RN(P (1 +- u) +- eta M), M = max factor magnitude, P the exact product interval. The
 * last rounding is the snap itself. binary64 error of the formula: radius 2^-50 |v|. */
static inline double nmo_fe_absmax(const nmo_fenc *a)
{
    double l = fabs(a->lo), h = fabs(a->hi);
    return l > h ? l : h;
}

/* RN32 of the exact real t + err + g (fp32rn plans), given t = RN64(t + err) (a TwoSum
 * pair: |err| <= ulp64(t)/2) and |g| < ulp64(t)/4: no fp32 rounding boundary (midpoint)
 * lies strictly between t and the exact value unless t is itself a midpoint (any other
 * double is at least ulp64(t) from one), so the result is RN32(t), except at a midpoint,
 * where the sign of err + g (compared exactly: err against -g) picks the side (zero:
 * the tie rule, RN32(t) itself). Returns 0 (undecided) for a non-finite RN32(t). */
static inline int nmo_fe_rn32_pair_g(double t, double err, double g, double *res)
{
    float y = (float)t;
    double a = y;
    if (!(fabsf(y) <= 0x1.fffffep127f)) return 0;
    *res = a;
    if (a == t || (err == -g)) return 1;
    double o = a > t ? nmo_fe_f32_step(y, 0) : nmo_fe_f32_step(y, 1); /* the other neighbour */
    if (!(fabs(o) <= 0x1.fffffep127f) || a - t != t - o) return 1; /* not a midpoint */
    *res = err > -g ? fmax(a, o) : fmin(a, o);
    return 1;
}

/* The point * interval * point case of nmo_fenc_mul3 decided exactly where the snap could
 * not be (the formula's value on an fp32 midpoint: x w r_lo (1 - u) with x w a power of
 * two, the near_degenerate rows of a norm). With P = ad * b.lo exact in binary64 (checked
 * by fma), q = |P| u exact (a power-of-two scaling of a normal double), the exact value
 * P - q - eta is the TwoSum pair (t, err) of P - q plus g = -eta; likewise P' + q' + eta
 * above. eta = eta_c M is exact (a power of two times a double) and must satisfy
 * |eta| < ulp64(t)/4 (|t| > 2^55 eta). The certified engine evaluates the same exact
 * value (at 1024 bits: exact while |t| / eta < 2^900) and rounds it to nearest,
 * so both engines agree. Returns 1 and sets r->lo, r->hi when both sides are decided. */
static inline int nmo_fe_mul3_exact_ends(nmo_fctx *c, nmo_fenc *r, double ad, const nmo_fenc *b,
                                         double plo, double phi, double eta)
{
    if (c->cf != NMO_FP32 || !c->fp32rn) return 0;
    double p1 = ad * b->lo, p2 = ad * b->hi;
    if (fma(ad, b->lo, -p1) != 0 || fma(ad, b->hi, -p2) != 0) return 0; /* products not exact */
    double res[2];
    for (int side = 0; side < 2; side++) {
        double P = side ? phi : plo;
        /* a zero product (x or w zero: padding, ReLU, integer test data): the exact value
         * is -+eta itself (q = 0), a binary64 number, so the conversion's RNE is its RN32;
         * the certified engine rounds the same exact -+eta */
        if (P == 0 && eta >= 0x1p-1000) {
            res[side] = (double)(float)(side ? eta : -eta);
            continue;
        }
        if (!(fabs(P) >= 0x1p-200 && fabs(P) <= 0x1p200) || !(eta >= 0x1p-1000 || eta == 0)) return 0;
        double q = fabs(P) * c->uc; /* exact */
        double t = side ? P + q : P - q;
        double err = side ? nmo_fe_two_sum_err(P, q, t) : nmo_fe_two_sum_err(P, -q, t);
        /* |eta| < ulp64(t)/4; and |t| / eta < 2^900 so that the certified engine's
         * 1024-bit evaluation of P -+ q -+ eta is exact too */
        if (!(fabs(t) > 0x1p55 * eta) || !(fabs(t) < 0x1p900 * eta || eta == 0)) return 0;
        if (!nmo_fe_rn32_pair_g(t, err, side ? eta : -eta, &res[side])) return 0;
    }
    r->lo = res[0];
    r->hi = res[1];
    return 1;
}

/* The error scale of a product of three: max(mag(a)|b||d|, |a|mag(b)|d|, |a||b|mag(d)),
 * evaluated in this order by every path of both engines (nmo_fe_mul3_row_kernel too). */
static inline double nmo_mag_mul3(double ma, double a, double mb, double b, double md, double d)
{
    double x = nmo_mag_prod(nmo_mag_prod(ma, b), d), y = nmo_mag_prod(nmo_mag_prod(a, mb), d);
    double z = nmo_mag_prod(nmo_mag_prod(a, b), md);
    return nmo_mag_max(nmo_mag_max(x, y), z);
}

static inline void nmo_fenc_mul3(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *a, const nmo_fenc *b,
                                 const nmo_fenc *d)
{
    uint32_t fl = a->flags | b->flags | d->flags;
    if (nmo_fenc_is_nan(a) || nmo_fenc_is_nan(b) || nmo_fenc_is_nan(d)) {
        nmo_fenc_set_nan(r, fl);
        return;
    }
    double plo, phi;
    if (a->lo == a->hi && d->lo == d->hi) {
        /* point * interval * point (a norm's x * r * w): one binary64 product pair */
        double ad = a->lo * d->lo; /* exact */
        double p1 = ad * b->lo, p2 = ad * b->hi;
        plo = p1 < p2 ? p1 : p2;
        phi = p1 < p2 ? p2 : p1;
        if (p1 != p1 || p2 != p2) plo = phi = NAN;
    } else {
        nmo_fenc ab;
        nmo_fe_mul_exact(&ab.lo, &ab.hi, a, b);
        nmo_fe_mul_exact(&plo, &phi, &ab, d); /* endpoints rounded once in binary64 */
    }
    if (plo != plo) { nmo_fenc_set_all(r, fl); return; }
    double m = nmo_fe_absmax(a), mb = nmo_fe_absmax(b), md = nmo_fe_absmax(d);
    double mg = nmo_mag_mul3(a->mag, m, b->mag, mb, d->mag, md);
    m = m > mb ? m : mb;
    m = m > md ? m : md;
    double eta = c->etac * m;
    double vlo = plo - fabs(plo) * c->uc - eta;
    double vhi = phi + fabs(phi) * c->uc + eta;
    uint32_t f0 = fl;
    r->lo = nmo_fe_snap(c, c->cf, NMO_RNE, vlo, fabs(vlo) * 0x1p-50 + eta * 0x1p-50, &fl);
    r->hi = nmo_fe_snap(c, c->cf, NMO_RNE, vhi, fabs(vhi) * 0x1p-50 + eta * 0x1p-50, &fl);
    if ((fl & NMO_EF_UNC) && !(f0 & NMO_EF_UNC) && !c->force_unc && a->lo == a->hi && d->lo == d->hi &&
        nmo_fe_mul3_exact_ends(c, r, a->lo * d->lo, b, plo, phi, eta))
        fl = f0;
    r->flags = fl;
    r->mag = nmo_mag_fin(r, mg);
    nmo_fe_fix(r);
}

/* A row of a norm's y_j = x_j * r * w_j: out[j] = nmo_fenc_mul3(x_j, r, w_j) for the
 * input points x_j, w_j (nmo_fenc_set_d) and one enclosure r shared by the row, exported
 * (the same formula, values and flags as that call, element by element: Higham's
 * P (1 +- u) +- eta M, see nmo_fenc_mul3). The loop below evaluates the formula exactly
 * as nmo_fenc_mul3 does and decides the snaps with nmo_fe_rn32_try (fp32 compute without
 * ftz, r finite and unflagged); an element whose snap it cannot decide, or whose inputs
 * are not finite, goes through nmo_fenc_mul3 itself. */
/* The common case of nmo_fenc_mul3_row over j < n (enc_fast.c; a loop the compiler
 * vectorizes): lo/hi[j] as nmo_fenc_mul3 computes them for the points x_j, w_j and
 * r = [rl, rh] (finite; rm = max(|rl|, |rh|)), ok[j] = 1 when both snaps are decided by
 * nmo_fe_rn32_try and x_j, w_j are finite (0: redo the element with nmo_fenc_mul3). */
void nmo_fe_mul3_row_kernel(double *lo, double *hi, int64_t *ok, const double *x, const double *w,
                            double rl, double rh, double rm, double uc, double etac, int64_t n);

static inline void nmo_fenc_mul3_row(nmo_fctx *c, nmo_fenc *out, const double *x, const nmo_fenc *r,
                                     const double *w, int64_t n)
{
    int fast = c->cf == NMO_FP32 && c->fp32rn && !c->ftz && !c->force_unc && r->flags == 0 &&
               isfinite(r->lo) && isfinite(r->hi);
    enum { B = 256 };
    double lo[B], hi[B];
    int64_t ok[B];
    for (int64_t j0 = 0; j0 < n; j0 += B) {
        int64_t m = n - j0 < B ? n - j0 : B;
        if (fast)
            nmo_fe_mul3_row_kernel(lo, hi, ok, x + j0, w + j0, r->lo, r->hi, nmo_fe_absmax(r), c->uc,
                                   c->etac, m);
        for (int64_t j = 0; j < m; j++) {
            nmo_fenc *o = &out[j0 + j];
            if (fast && ok[j]) {
                double ax = fabs(x[j0 + j]), aw = fabs(w[j0 + j]);
                o->lo = lo[j];
                o->hi = hi[j];
                o->flags = 0;
                o->mag = nmo_mag_fin(o, nmo_mag_mul3(ax, ax, r->mag, nmo_fe_absmax(r), aw, aw));
                continue;
            }
            nmo_fenc xe, we;
            nmo_fenc_set_d(c, &xe, x[j0 + j]);
            nmo_fenc_set_d(c, &we, w[j0 + j]);
            nmo_fenc_mul3(c, o, &xe, r, &we);
        }
    }
}

#endif
