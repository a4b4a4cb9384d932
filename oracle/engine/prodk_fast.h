/* numoracle: fast enclosure engine, the norms group: products of k factors (prodk), dot products of k-factor terms
 * (dotk), the fused affine form (scale_shift).
 * Part of engine/enc_fast.h, which includes the family headers in order (each uses
 * the ones before it); include engine/enc_fast.h, never this file. The certified
 * mirror of each primitive: prodk_cert.c. */
#ifndef NUMORACLE_PRODK_FAST_H
#define NUMORACLE_PRODK_FAST_H
#ifndef NUMORACLE_ENC_FAST_H
#error "include engine/enc_fast.h"
#endif

/* ---- norms group: products of k factors, dot products of k-factor terms ------------ */

#define NMO_PRODK_MAX 8

/* gamma for r inner roundings: r u (1 + 2 r u) >= (1 + u)^r - 1 whenever r u <= 1/4
 * (Higham, ASNA 2nd ed., Lemma 3.1: (1+u)^r - 1 <= r u / (1 - r u)). Both engines use
 * this same binary64 value. */
static inline double nmo_fe_gamma(double u, int r) { return r * u * (1 + 2 * r * u); }

/* Product of k <= 8 enclosures f[0..k-1] in any association and order, every
 * multiplication correctly rounded in compute. The k-2 inner roundings give
 * T = P (1 +- g) +- eta with P the exact product interval, g = nmo_fe_gamma(u, k-2)
 * (Higham, ASNA 2nd ed., §3.1) and eta = 2 (k-2) eta_c R, R = prod max(1, |f_i|) (each
 * underflowing rounding loses at most eta_c, later multiplied by at most R; Higham §2.1);
 * the last multiplication is the snap RN(T). fused = 1: the last multiplication may also
 * be left unrounded (contracted into a following add, FMA): [RD(T_lo), RU(T_hi)] holds
 * both T and RN(T), and RN(T + c) is monotone in T. A factor exactly [0, 0]: exact 0.
 * binary64 error: k-1 products and 3 more ops, radius (k+3) 2^-52 |v| (0 when every
 * product is exact: k = 2, fma residual 0). */
/* Every partial product of the factors is at most R (1 + g) + eta in magnitude: at or
 * beyond compute's largest finite value some association may overflow (inf, or NaN
 * later), so the result is not bounded. Near the edge the fast engine cannot tell. */
static inline int nmo_fe_partial_ovf(nmo_fctx *c, double top, uint32_t *fl)
{
    double mf = nmo_fmt_get(c->cf)->max_finite;
    if (fabs(top - mf) <= mf * 0x1p-30) *fl |= NMO_EF_UNC;
    return !(top < mf);
}

/* The error scale of a product of k factors f[0][j] .. f[k-1][j]: the largest over i of
 * mag(f_i) times the other factors' |.| (first-order propagation of each factor), in
 * this order in both engines. */
static inline double nmo_mag_prodk(const nmo_fenc *const *f, int k, int64_t j)
{
    double m = 0;
    for (int i = 0; i < k; i++) {
        double t = f[i][j].mag;
        for (int l = 0; l < k; l++)
            if (l != i) t = nmo_mag_prod(t, nmo_mag_abs(f[l][j].lo, f[l][j].hi));
        m = nmo_mag_max(m, t);
    }
    return m;
}

static inline void nmo_fenc_prodk(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *const *f, int k,
                                  int fused)
{
    double mg = nmo_mag_prodk(f, k, 0);
    uint32_t fl = 0;
    int zero = 0, nonfin = 0;
    for (int i = 0; i < k; i++) {
        fl |= f[i]->flags;
        if (nmo_fenc_is_nan(f[i])) { nmo_fenc_set_nan(r, fl); return; }
        zero |= f[i]->lo == 0 && f[i]->hi == 0;
        nonfin |= !isfinite(f[i]->lo) || !isfinite(f[i]->hi);
    }
    if (zero) { r->lo = r->hi = 0; r->flags = fl | c->force_unc; r->mag = 0; return; }
    if (nonfin) { nmo_fenc_set_all(r, fl); return; }
    if (k == 1) { /* the factor itself */
        *r = *f[0];
        r->flags = fl | c->force_unc;
        return;
    }
    double lo = f[0]->lo, hi = f[0]->hi, R = fmax(1, fmax(fabs(lo), fabs(hi)));
    int exact = 1;
    for (int i = 1; i < k; i++) {
        double bl = f[i]->lo, bh = f[i]->hi;
        double p1 = lo * bl, p2 = lo * bh, p3 = hi * bl, p4 = hi * bh;
        if (exact)
            exact = fma(lo, bl, -p1) == 0 && fma(lo, bh, -p2) == 0 && fma(hi, bl, -p3) == 0 &&
                    fma(hi, bh, -p4) == 0;
        lo = fmin(fmin(p1, p2), fmin(p3, p4));
        hi = fmax(fmax(p1, p2), fmax(p3, p4));
        R *= fmax(1, fmax(fabs(bl), fabs(bh)));
    }
    int nr = k > 2 ? k - 2 : 0;
    double g = nmo_fe_gamma(c->uc, nr), eta = 2.0 * nr * c->etac * R;
    if (nmo_fe_partial_ovf(c, R * (1 + g) + eta, &fl)) { nmo_fenc_set_all(r, fl); return; }
    double vlo = lo - fabs(lo) * g - eta, vhi = hi + fabs(hi) * g + eta;
    if (!isfinite(vlo) || !isfinite(vhi)) { nmo_fenc_set_all(r, fl); return; }
    /* the unrounded (fused) value is not flushed under ftz: its bounds are directed
     * roundings without flushing (a following RN(T + c) flushes) */
    nmo_fctx nf;
    const nmo_fctx *cs = c;
    if (fused && c->ftz) {
        nf = *c;
        nf.ftz = 0;
        nf.fp32rn = 1;
        cs = &nf;
    }
    if (exact && nr == 0) { /* the exact product: round it, no radius */
        r->lo = nmo_fe_round(cs, c->cf, vlo, fused ? NMO_RD : NMO_RNE);
        r->hi = nmo_fe_round(cs, c->cf, vhi, fused ? NMO_RU : NMO_RNE);
        r->flags = fl | c->force_unc;
        r->mag = nmo_mag_fin(r, mg);
        nmo_fe_fix(r);
        return;
    }
    double el = (fabs(vlo) + eta) * (k + 3) * 0x1p-52, eh = (fabs(vhi) + eta) * (k + 3) * 0x1p-52;
    r->lo = nmo_fe_snap(cs, c->cf, fused ? NMO_RD : NMO_RNE, vlo, el, &fl);
    r->hi = nmo_fe_snap(cs, c->cf, fused ? NMO_RU : NMO_RNE, vhi, eh, &fl);
    r->flags = fl;
    r->mag = nmo_mag_fin(r, mg);
    nmo_fe_fix(r);
}

/* The weight of the last set bit of a nonzero finite double: v = m 2^e with m odd -> 2^e. */
static inline double nmo_fe_lowbit(double v)
{
    int e;
    double m = frexp(fabs(v), &e);
    uint64_t b = (uint64_t)ldexp(m, 53);
    return ldexp(1.0, e - 53 + __builtin_ctzll(b));
}

/* The exact case of nmo_fenc_dotk (k = 1, or k = 2 with no inner rounding): every term is
 * a point t_j (the factor, or the product of the two factors) exactly representable in
 * compute and in acc; Q = the smallest lowbit(t_j) over the nonzero terms. When
 * sum |t_j| < 2^p_acc Q (and, under ftz, Q >= the smallest normal of acc), every partial
 * sum of every tree is a multiple of Q smaller than 2^p_acc Q in magnitude: exactly
 * representable, so every addition and every FMA is exact and the result is the exact
 * sum (DESIGN §4's `exact`: the accumulator provably loses nothing; e.g. 16-bit inputs of
 * bounded dynamic range summed in fp32). Under that condition the binary64 sum below is
 * exact too (multiples of Q below 2^53 Q), so both engines decide and compute it with
 * these same double operations. term(j, &a, &b) gives the point factors (0: not points). */
/* The closing condition of nmo_fe_sum_exact_core from Q (INFINITY: no nonzero term) and
 * A = sum |t_j| (the GPU tier forms both on the device: hip/gpu_oracle_rows_host.h). */
static inline int nmo_fe_sum_exact_ok(nmo_fmt af, int ftz, double Q, double A)
{
    if (Q == INFINITY) return 1;
    const nmo_fmt_info *ai = nmo_fmt_get(af);
    if (ftz && Q < ai->min_normal) return 0;
    return A < ldexp(Q, ai->prec);
}

/* The binary64 counterpart: when sum |t_j| < 2^53 Q, every partial sum of every tree is a
 * multiple of Q below 2^53 Q in magnitude, so binary64 adds the terms exactly in any order
 * (the sum need not be an acc value). A computed A of nonnegative terms is below 2^53 Q
 * exactly when the exact one is (partial sums below the bound are exact; RN is monotone
 * and 2^53 Q is a double), so the test may use the computed A. */
static inline int nmo_fe_sum_exact64(double Q, double A) { return Q == INFINITY || A < ldexp(Q, 53); }

/* *ex64 (may be NULL): set to 1 when the terms are exact points whose binary64 sums are
 * exact (nmo_fe_sum_exact64) even where acc does not hold them (returns 0 then). */
static inline int nmo_fe_sum_exact_core(nmo_fmt cf, nmo_fmt af, int ftz, int k,
                                        const double *a, const double *b, int64_t n, double *s, int *ex64)
{
    double Q = INFINITY, A = 0, S = 0;
    int lat = 1; /* every term a compute and acc value */
    if (ex64) *ex64 = 0;
    for (int64_t j = 0; j < n; j++) {
        double t = k == 1 ? a[j] : a[j] * b[j];
        if (k == 2 && fma(a[j], b[j], -t) != 0) return 0;
        if (t == 0) continue;
        if (nmo_fmt_round(cf, t, NMO_RNE, ftz) != t || nmo_fmt_round(af, t, NMO_RNE, ftz) != t) {
            lat = 0;
            if (!ex64) return 0;
        }
        double q = nmo_fe_lowbit(t);
        Q = q < Q ? q : Q;
        A += fabs(t);
        S += t;
    }
    if (!lat || !nmo_fe_sum_exact_ok(af, ftz, Q, A)) {
        if (ex64) *ex64 = isfinite(A) && nmo_fe_sum_exact64(Q, A);
        return 0;
    }
    *s = Q == INFINITY ? 0 : S;
    return 1;
}

static inline int nmo_fe_dotk_exact(nmo_fctx *c, const nmo_fenc *const *f, int k, int64_t n,
                                    double *s, int *ex64)
{
    double *a = nmo_fctx_dvec(c, 6, n > 0 ? n : 1), *b = k == 2 ? nmo_fctx_dvec(c, 7, n > 0 ? n : 1) : NULL;
    if (ex64) *ex64 = 0;
    if (!a || (k == 2 && !b)) return 0;
    for (int64_t j = 0; j < n; j++) {
        if (f[0][j].lo != f[0][j].hi || (k == 2 && f[1][j].lo != f[1][j].hi)) return 0;
        a[j] = f[0][j].lo;
        if (k == 2) b[j] = f[1][j].lo;
    }
    return nmo_fe_sum_exact_core(c->cf, c->af, c->ftz, k, a, b, n, s, ex64);
}

/* Sum over j < n of the product of k <= 8 factors f[0][j] .. f[k-1][j] (enclosures):
 * each term computed in compute with `rounds` inner roundings in any association, the
 * terms accumulated in acc in any order and tree, the last multiplication of each term
 * fused (FMA) or rounded. Term: T_j = P_j (1 +- g) +- eta_j (as nmo_fenc_prodk, g =
 * nmo_fe_gamma(u_c, rounds), eta_j = 2 rounds eta_c R_j); accumulation: the dot-product
 * bound n u_a sum|T_j| + n eta_a (2n min_normal under ftz) (Jeannerod & Rump 2013,
 * Thm 4.2, the last multiplication's operands being floating-point numbers); k = 1 (a
 * plain sum, rounds = 0): (n-1) u_a sum|x_j| (Thm 4.1), + (n-1) min_normal under ftz.
 * Inner products that may overflow (nmo_fe_partial_ovf): "anything". Sums that the
 * accumulator provably holds exactly (nmo_fe_sum_exact_core): the exact sum.
 * Total: [sum P_lo - E, sum P_hi + E], E = K u_a A' + g A + sum eta_j + keta_a with
 * A = sum max|P_j|, A' = A (1 + g) + sum eta_j >= sum |T_j|, K = n or n - 1.
 * binary64 error of sum P and A: (n + k) 2^-53 A, taken as (n + k + 4) 2^-52 A. */
/* The close of nmo_fenc_dotk (the bound above) from its binary64 sums slo, shi, A, SR and
 * Rmax over the terms, formed in any order: the GPU tier's row reductions
 * (hip/gpu_oracle_rows_dev.h) call it with their own sums, each within the binary64
 * error err allows (Jeannerod & Rump 2013, Thm 4.1, in binary64). r->mag is the caller's.
 * e64: a bound on the binary64 error of slo, shi and A that the caller knows (0: the exact
 * sums of exact point terms, nmo_fe_sum_exact64; the GPU tier's compensated sums), or < 0:
 * the any-order bound (n + k + 4) 2^-52 A (1 + g). The closing operations' own errors
 * (em's 2^-51 |em|, the snap's 2^-50 |v|) are added either way. With the any-order bound a
 * row whose sum is small next to A (a layer_norm row of mean ~0: the endpoints s -+ k u A
 * lie near k u A, where that radius reaches an fp32 spacing) escalated about 1 row in 80. */
static inline void nmo_fenc_dotk_finish(nmo_fctx *c, nmo_fenc *r, double slo, double shi, double A,
                                        double SR, double Rmax, int k, int64_t n, int rounds, uint32_t fl,
                                        double e64)
{
    double g = nmo_fe_gamma(c->uc, rounds), eta_in = 2.0 * rounds * c->etac * SR;
    if (rounds > 0 && nmo_fe_partial_ovf(c, Rmax * (1 + g) + 2.0 * rounds * c->etac * Rmax, &fl)) {
        nmo_fenc_set_all(r, fl);
        return;
    }
    double K = nmo_fe_red_k(c, n, n, k != 1), keta_a; /* n - 1 or n for sum=any */
    if (k == 1) keta_a = c->ftz && n > 1 ? (double)(n - 1) * c->etaa : 0;
    else keta_a = (c->ftz ? 2.0 : 1.0) * (double)n * c->etaa;
    if (!(K < INFINITY)) { nmo_fenc_set_all(r, fl); return; }
    double a2 = A * (1 + g) + eta_in;
    double keta = g * A + eta_in + keta_a;
    double err = (e64 >= 0 ? e64 : (double)(n + k + 4) * 0x1p-52 * A * (1 + g)) + (keta + eta_in) * 0x1p-48;
    nmo_fe_red_finish(c, r, slo, shi, a2, K, keta, err, fl);
}

static inline void nmo_fenc_dotk(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *const *f, int k,
                                 int64_t n, int rounds)
{
    double mg = 0;
    for (int64_t j = 0; j < n; j++) mg += nmo_mag_prodk(f, k, j);
    uint32_t fl = 0;
    int mustnan = 0, nonfin = 0;
    double slo = 0, shi = 0, A = 0, SR = 0, Rmax = 0;
    for (int64_t j = 0; j < n; j++) {
        double lo = f[0][j].lo, hi = f[0][j].hi, R = fmax(1, fmax(fabs(lo), fabs(hi)));
        fl |= f[0][j].flags;
        mustnan |= lo != lo;
        nonfin |= !isfinite(lo) || !isfinite(hi);
        for (int i = 1; i < k; i++) {
            double bl = f[i][j].lo, bh = f[i][j].hi;
            fl |= f[i][j].flags;
            mustnan |= bl != bl;
            nonfin |= !isfinite(bl) || !isfinite(bh);
            double p1 = lo * bl, p2 = lo * bh, p3 = hi * bl, p4 = hi * bh;
            lo = fmin(fmin(p1, p2), fmin(p3, p4));
            hi = fmax(fmax(p1, p2), fmax(p3, p4));
            R *= fmax(1, fmax(fabs(bl), fabs(bh)));
        }
        slo += lo;
        shi += hi;
        A += fmax(fabs(lo), fabs(hi));
        SR += R;
        Rmax = fmax(Rmax, R);
    }
    if (mustnan) { nmo_fenc_set_nan(r, fl); return; }
    if (nonfin || slo != slo || shi != shi) { nmo_fenc_set_all(r, fl); return; }
    double sx;
    int ex64 = 0;
    if ((k == 1 || (k == 2 && rounds == 0)) && nmo_fe_dotk_exact(c, f, k, n, &sx, &ex64)) {
        r->lo = r->hi = sx;
        r->flags = fl | c->force_unc;
        r->mag = mg;
        return;
    }
    nmo_fenc_dotk_finish(c, r, slo, shi, A, SR, Rmax, k, n, rounds, fl, ex64 ? 0 : -1);
    r->mag = nmo_mag_fin(r, mg);
}


/* The fused scale/shift form of an affine normalization, y = x*a + (b - m*a), with the
 * SAME scale a in both products (cuDNN, PyTorch's group_norm / batch_norm fused params):
 * sh = RN(b - RN(m a)) or fma(-m, a, b); y = RN(RN(x a) + sh) or fma(x, a, sh). With
 * |delta| <= u per rounding (Higham, ASNA 2nd ed., §2.2):
 *   t1 + sh = a (x - m) + b + e,  |e| <= u (1 + 2u) (|x a| + |b| + 2 |m a|) + 4 eta_c
 * (four roundings that may underflow, or flush under ftz), and y = RN(t1 + sh): the
 * snap of [C_lo - E0, C_hi + E0], C = a (x - m) + b evaluated exactly over the
 * enclosures (x - m exact, not rounded): the correlation of the two products is kept,
 * which evaluating the steps as independent intervals would lose (a rows-long mean
 * times a wide scale cancels in the exact expression, not in interval arithmetic).
 * binary64 error: x - m, the corner products and + b, radius (3 |D| A + |b|) 2^-52 +
 * E0 2^-50. */
static inline void nmo_fenc_scale_shift(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *x,
                                        const nmo_fenc *a, const nmo_fenc *m, const nmo_fenc *b)
{
    uint32_t fl = x->flags | a->flags | m->flags | b->flags;
    if (nmo_fenc_is_nan(x) || nmo_fenc_is_nan(a) || nmo_fenc_is_nan(m) || nmo_fenc_is_nan(b)) {
        nmo_fenc_set_nan(r, fl);
        return;
    }
    if (!isfinite(x->lo) || !isfinite(x->hi) || !isfinite(a->lo) || !isfinite(a->hi) ||
        !isfinite(m->lo) || !isfinite(m->hi) || !isfinite(b->lo) || !isfinite(b->hi)) {
        nmo_fenc_set_all(r, fl);
        return;
    }
    double dl = x->lo - m->hi, dh = x->hi - m->lo;
    /* scale: x*a and m*a combined with b */
    double am = nmo_mag_abs(a->lo, a->hi);
    double mg = nmo_mag_mul(x->mag, nmo_mag_abs(x->lo, x->hi), a->mag, am) +
                nmo_mag_mul(m->mag, nmo_mag_abs(m->lo, m->hi), a->mag, am) + b->mag;
    double p1 = dl * a->lo, p2 = dl * a->hi, p3 = dh * a->lo, p4 = dh * a->hi;
    double clo = fmin(fmin(p1, p2), fmin(p3, p4)) + b->lo;
    double chi = fmax(fmax(p1, p2), fmax(p3, p4)) + b->hi;
    double A = fmax(fabs(a->lo), fabs(a->hi)), X = fmax(fabs(x->lo), fabs(x->hi));
    double Mv = fmax(fabs(m->lo), fabs(m->hi)), B = fmax(fabs(b->lo), fabs(b->hi));
    double e0 = c->uc * (1 + 2 * c->uc) * (X * A + B + 2 * Mv * A) + 4 * c->etac;
    double vlo = clo - e0, vhi = chi + e0;
    if (!isfinite(vlo) || !isfinite(vhi)) { nmo_fenc_set_all(r, fl); return; }
    double e = (3 * fmax(fabs(dl), fabs(dh)) * A + B) * 0x1p-52 + e0 * 0x1p-50;
    r->lo = nmo_fe_snap(c, c->cf, NMO_RNE, vlo, e, &fl);
    r->hi = nmo_fe_snap(c, c->cf, NMO_RNE, vhi, e, &fl);
    r->flags = fl;
    r->mag = nmo_mag_fin(r, mg);
    nmo_fe_fix(r);
}

#endif
