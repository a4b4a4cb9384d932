/* numoracle: fast enclosure engine, linear algebra and attention: dot_ed, widen, gemm_elem_t.
 * Part of engine/enc_fast.h, which includes the family headers in order (each uses
 * the ones before it); include engine/enc_fast.h, never this file. The certified
 * mirror of each primitive: linalg_cert.c. */
#ifndef NUMORACLE_LINALG_FAST_H
#define NUMORACLE_LINALG_FAST_H
#ifndef NUMORACLE_ENC_FAST_H
#error "include engine/enc_fast.h"
#endif

/* ---- linear algebra and attention (numoracle issue 3) ------------------------------- */

/* Dot product of an enclosure vector x (computed values: softmax weights, dS) with a
 * point vector y (inputs), any order and tree, FMA or not, in acc. Model error
 * k u sum_i max|x_i y_i| + (ftz ? 2 : 1) max(k, n) eta: with k = n this is Jeannerod &
 * Rump 2013, Thm 4.2 (n u sum|x y|, for every point of the x intervals, so for the
 * interval too); a caller that folds further roundings into the sum (rescaling
 * multiplies of online softmax) passes k >= gamma_h / u, gamma_h = h u / (1 - h u) for h
 * roundings on any term's path (Higham, ASNA 2nd ed., Lemma 3.1). Terms that are exactly
 * zero (x = [0,0] or y = 0) pass every operation exactly: k is reduced by their count
 * (for k = gamma_h/u that is still >= gamma_{h - zeros}/u). The exact products of
 * lattice values (p <= 26) are exact in binary64. A NaN operand: NaN; an infinite
 * endpoint or input: anything. */
static inline void nmo_fenc_dot_ed(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *x, const double *y,
                                   int64_t n, double k)
{
    uint32_t fl = 0;
    int nan = 0, inf = 0;
    for (int64_t i = 0; i < n; i++) {
        fl |= x[i].flags;
        nan |= nmo_fenc_is_nan(&x[i]) | (y[i] != y[i]);
        inf |= isinf(x[i].lo) | isinf(x[i].hi) | isinf(y[i]);
    }
    if (nan) { nmo_fenc_set_nan(r, fl); return; }
    if (inf) { nmo_fenc_set_all(r, fl); return; }
    double slo = 0, shi = 0, a = 0, mg = 0;
    int64_t z = 0; /* exactly zero terms: dropped, k reduced by their count */
    for (int64_t i = 0; i < n; i++) {
        double p1 = x[i].lo * y[i], p2 = x[i].hi * y[i];
        slo += fmin(p1, p2);
        shi += fmax(p1, p2);
        a += fmax(fabs(p1), fabs(p2));
        z += (x[i].lo == 0 && x[i].hi == 0) || y[i] == 0;
        double ay = fabs(y[i]);
        mg += nmo_mag_mul(x[i].mag, nmo_mag_abs(x[i].lo, x[i].hi), ay, ay);
    }
    double keta = (c->ftz ? 2.0 : 1.0) * fmax(k, (double)n) * c->etaa;
    if (c->ftz) { /* subnormal points y_i read as 0 (max |x_i| of the enclosures) */
        double d = 0;
        for (int64_t i = 0; i < n; i++)
            d = nmo_fe_daz_add(d, c->minnorm_c, fmax(fabs(x[i].lo), fabs(x[i].hi)), y[i]);
        keta += nmo_fe_daz_finish(d, n);
    }
    nmo_fe_red_finish(c, r, slo, shi, a, fmax(k - (double)z, 0), keta, (double)n * 0x1p-53 * a, fl);
    r->mag = nmo_mag_fin(r, mg);
}

/* A model quantity (not a kernel value) known to lie within relative rel and absolute
 * abs of a: [lo - rel|lo| - abs, hi + rel|hi| + abs], snapped OUTWARD to the compute
 * lattice (RD, RU). The caller derives rel/abs from a bound it states (e.g. the extra
 * roundings of online softmax). Infinite endpoints stay, and so does an endpoint when the
 * widening rel |x| + abs is exactly 0. binary64 radius 2^-50: choose rel/abs that do not put endpoints on lattice
 * points (exact multiples of u do), or the fast engine escalates. */
static inline void nmo_fenc_widen(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *a, double rel, double abs)
{
    uint32_t fl = a->flags;
    if (nmo_fenc_is_nan(a)) { *r = *a; return; }
    double lo = a->lo, hi = a->hi;
    if (isfinite(lo)) {
        /* a widening d > 0 smaller than the lattice step below lo snaps to that neighbour
         * exactly (binary64 cannot resolve lo - d itself when d << ulp(lo)) */
        double d = rel * fabs(lo) + abs, nb = c->ftz ? NAN : nmo_fmt_next_down(c->cf, lo);
        if (d == 0) { /* rel |lo| = 0 exactly: lo stays */
        } else if (isfinite(nb) && d * (1 + 0x1p-50) < lo - nb) lo = nb;
        else lo = nmo_fe_snap(c, c->cf, NMO_RD, lo - d, (fabs(lo) * (1 + rel) + abs) * 0x1p-50, &fl);
    }
    if (isfinite(hi)) {
        double d = rel * fabs(hi) + abs, nb = c->ftz ? NAN : nmo_fmt_next_up(c->cf, hi);
        if (d == 0) {
        } else if (isfinite(nb) && d * (1 + 0x1p-50) < nb - hi) hi = nb;
        else hi = nmo_fe_snap(c, c->cf, NMO_RU, hi + d, (fabs(hi) * (1 + rel) + abs) * 0x1p-50, &fl);
    }
    double m = a->mag;
    r->lo = lo;
    r->hi = hi;
    r->flags = fl | c->force_unc;
    r->mag = nmo_mag_fin(r, m);
}

/* Element (i, j) of op(X) op(Y), op = transpose when tx / ty: X is [m,kk] (tx = 0) or
 * [kk,m] (tx = 1), Y is [kk,n] (ty = 0) or [n,kk] (ty = 1); a dot product in acc over kk
 * (nmo_fenc_dot_d's model). Batched like nmo_fenc_gemm_elem: the first call for a given
 * (X, tx, Y, ty) computes op(X)op(Y) and |op(X)||op(Y)| in binary64 (BLAS dgemm with
 * transpose flags; error <= kk 2^-53 |X||Y|, Jeannerod & Rump 2013 in binary64); a few
 * products are cached at once (a backward pass needs two or three). */
void nmo_fenc_gemm_elem_t(nmo_fctx *c, nmo_fenc *r, const nmo_tensor *X, int tx,
                          const nmo_tensor *Y, int ty, int64_t i, int64_t j);

#endif
