/* numoracle: fast enclosure engine, reductions and matrix-product elements: sum, dot_d, sumsq_d, max_v, gemm_partials,
 * gemm_elem, gemm_row (the products themselves are in enc_fast.c).
 * Part of engine/enc_fast.h, which includes the family headers in order (each uses
 * the ones before it); include engine/enc_fast.h, never this file. The certified
 * mirror of each primitive: sum_cert.c. */
#ifndef NUMORACLE_SUM_FAST_H
#define NUMORACLE_SUM_FAST_H
#ifndef NUMORACLE_ENC_FAST_H
#error "include engine/enc_fast.h"
#endif

/* ---- reductions ---------------------------------------------------------------------- */

/* The plan's reduction multiplier (nmo_plan_red_k, nmo_plan_dot_k2: the sum model and
 * its geometry); a reduction longer than the geometry holds (INFINITY: "anything") is
 * counted so that nmo_check can report the plan as not fitting the shape. */
static inline double nmo_fe_geo_note(int64_t *over, double k, int64_t n)
{
    if (!(k < INFINITY) && n > *over) *over = n;
    return k;
}
static inline double nmo_fe_red_k(nmo_fctx *c, int64_t n, int64_t m, int dot)
{
    return nmo_fe_geo_note(&c->geo_over, nmo_plan_red_k(&c->plan, n, m, dot), n);
}
static inline double nmo_fe_dot_k(nmo_fctx *c, int64_t n, int64_t m)
{
    return nmo_fe_geo_note(&c->geo_over, nmo_plan_dot_k2(&c->plan, n, m), n);
}

/* Close a reduction: the exact sum lies in [slo, shi] (binary64 values with error
 * <= err each), the model error is k * ua * A + k * eta with A = sum |terms| (a_d its
 * binary64 value, error <= err too). The result is an acc value, so the bound snaps
 * inward: RU(lower), RD(upper). */
static inline void nmo_fe_red_finish(nmo_fctx *c, nmo_fenc *r, double slo, double shi,
                                     double a_d, double k, double keta, double err,
                                     uint32_t fl)
{
    if (!(fabs(slo) <= 0x1p1000 && fabs(shi) <= 0x1p1000 && a_d <= 0x1p1000) || !(k < INFINITY)) {
        nmo_fenc_set_all(r, fl);
        return;
    }
    double em = k * c->ua * a_d + keta;
    double e = err * (1 + k * c->ua) + em * 0x1p-51;
    double vlo = slo - em, vhi = shi + em;
    r->lo = nmo_fe_snap(c, c->af, NMO_RU, vlo, e, &fl);
    r->hi = nmo_fe_snap(c, c->af, NMO_RD, vhi, e, &fl);
    r->flags = fl;
    nmo_fe_fix(r);
    /* A partial sum is bounded by A (1 + k u): beyond the accumulator's range some order
     * overflows, so the result is not bounded. */
    double top = a_d * (1 + k * c->ua) + keta;
    if (fabs(top - c->maxfin_a) <= c->maxfin_a * 0x1p-30) fl |= NMO_EF_UNC;
    if (top >= c->maxfin_a) nmo_fenc_set_all(r, fl);
}

/* Sum of n enclosures in any order and tree shape, in acc:
 * |fl(sum) - sum| <= (n-1) u sum|x_i| (Jeannerod & Rump 2013, SIMAX 34(2), Thm 4.1:
 * any order, RN, no condition on n). Gradual underflow adds nothing (additions are
 * exact in the subnormal range); under ftz each addition may flush: + (n-1) min_normal. */
/* The error scale of a sum of enclosures: the sum of their mags, in index order (both
 * engines). */
static inline double nmo_mag_sum(const nmo_fenc *x, int64_t n)
{
    double m = 0;
    for (int64_t i = 0; i < n; i++) m += x[i].mag;
    return m;
}

static inline void nmo_fenc_sum(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *x, int64_t n)
{
    double slo = 0, shi = 0, a = 0;
    uint32_t fl = 0;
    int mustnan = 0;
    for (int64_t i = 0; i < n; i++) {
        slo += x[i].lo;
        shi += x[i].hi;
        a += fmax(fabs(x[i].lo), fabs(x[i].hi));
        fl |= x[i].flags;
        mustnan |= x[i].lo != x[i].lo;
    }
    if (mustnan) { nmo_fenc_set_nan(r, fl); return; }
    double k = nmo_fe_red_k(c, n, n, 0); /* n - 1 for sum=any */
    double keta = c->ftz && n > 1 ? (double)(n - 1) * c->etaa : 0; /* n - 1 additions */
    double m = nmo_mag_sum(x, n);
    nmo_fe_red_finish(c, r, slo, shi, a, k, keta, (double)n * 0x1p-53 * a, fl);
    r->mag = nmo_mag_fin(r, m);
}

/* The error scale of a dot product of input points: the binade of sum |x y| (exact in
 * both engines: see "error scale"), from its binary64 estimate a of relative error rel;
 * an estimate too near a power of two flags the element for the certified engine. */
static inline void nmo_fe_dot_mag(nmo_fctx *c, nmo_fenc *r, double a, double rel)
{
    double m = nmo_mag_pow2_of(a, rel);
    if (m < 0) {
        r->flags |= NMO_EF_UNC;
        m = nmo_mag_pow2(a);
    }
    if (c->force_unc) r->flags |= NMO_EF_UNC;
    r->mag = nmo_mag_fin(r, m);
}

/* Under ftz an input factor below the smallest normal of compute may be read as 0 (DAZ,
 * as nmo_fenc_set_d allows), which drops its whole product x_i y_i, however large y_i
 * is: the 2n min_normal underflow term covers that only for |y_i| <= 2n. The dot
 * products of point inputs add this bound of the dropped products to their absolute
 * term: sum over i with a nonzero subnormal factor of |x_i| |y_i| (|x_i| the max of an
 * enclosure in nmo_fenc_dot_ed), as an upper bound: the binary64 products are exact
 * (lattice values) and the sum errs by < n 2^-53 of itself. The certified engine calls
 * the same function on the same doubles, so both add the same value. 0 without ftz. */
static inline double nmo_fe_daz_add(double d, double minnorm, double a, double b)
{
    a = fabs(a), b = fabs(b);
    return (a != 0 && a < minnorm) || (b != 0 && b < minnorm) ? d + a * b : d;
}
static inline double nmo_fe_daz_finish(double d, int64_t n) { return d * (1 + (double)(n + 2) * 0x1p-52); }
static inline double nmo_fe_daz_term(int ftz, double minnorm, const double *x, const double *y,
                                     int64_t n)
{
    if (!ftz) return 0;
    double d = 0;
    for (int64_t i = 0; i < n; i++) d = nmo_fe_daz_add(d, minnorm, x[i], y[i]);
    return nmo_fe_daz_finish(d, n);
}

/* The close of nmo_fenc_dot_d from its binary64 sums of the n exact products x_i y_i
 * of input points, formed in any order (the GPU tier's row reductions, hip/gpu_oracle.hip,
 * call it with their own sums): s = sum x_i y_i and a = sum |x_i y_i| each within
 * (n - 1) 2^-53 a of the exact sums (Jeannerod & Rump 2013, Thm 4.1, in binary64), m the
 * terms with both factors nonzero, daz nmo_fe_daz_term's bound (0 without ftz). Finite
 * s only (the caller handles NaN and infinities). */
static inline void nmo_fenc_dot_d_finish_e(nmo_fctx *c, nmo_fenc *r, double s, double a, int64_t m,
                                           int64_t n, double daz, double err)
{
    /* underflow: each product may lose eta (half the subnormal spacing); under ftz the
     * products and the partial sums may each flush: 2n min_normal. */
    double keta = (c->ftz ? 2.0 : 1.0) * (double)n * c->etaa + daz;
    nmo_fe_red_finish(c, r, s, s, a, nmo_fe_dot_k(c, n, m), keta, err, 0);
    nmo_fe_dot_mag(c, r, a, (double)n * 0x1p-53 * 1.01);
}
static inline void nmo_fenc_dot_d_finish(nmo_fctx *c, nmo_fenc *r, double s, double a, int64_t m,
                                         int64_t n, double daz)
{
    nmo_fenc_dot_d_finish_e(c, r, s, a, m, n, daz, (double)n * 0x1p-53 * a);
}

/* Dot product of two point vectors (input values), any order, FMA or not, in acc:
 * |fl(x.y) - x.y| <= m u sum|x_i y_i| (Jeannerod & Rump 2013, Thm 4.2) plus n eta for
 * products that underflow, with m the number of terms whose factors are both nonzero:
 * a zero product passes every add, FMA or tree node exactly (RN(s + 0) = s,
 * fma(0, y, s) = s), so any evaluation over n terms is one over those m terms (ReLU
 * outputs, padding, one-hot vectors). Products of inputs are exact in binary64. */
static inline void nmo_fenc_dot_d(nmo_fctx *c, nmo_fenc *r, const double *x, const double *y,
                                  int64_t n)
{
    double s = 0, a = 0;
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
        double p = x[i] * y[i];
        s += p;
        a += fabs(p);
        m += x[i] != 0 && y[i] != 0;
    }
    if (s != s) {
        int nan_in = 0;
        for (int64_t i = 0; i < n; i++) nan_in |= (x[i] != x[i]) | (y[i] != y[i]);
        if (nan_in) { nmo_fenc_set_nan(r, 0); return; }
        nmo_fenc_set_all(r, 0);
        return;
    }
    nmo_fenc_dot_d_finish(c, r, s, a, m, n, nmo_fe_daz_term(c->ftz, c->minnorm_c, x, y, n));
}

/* Sum of squares of a point vector: the dot product of x with itself. */
static inline void nmo_fenc_sumsq_d(nmo_fctx *c, nmo_fenc *r, const double *x, int64_t n)
{
    nmo_fenc_dot_d(c, r, x, x, n);
}

/* Max of n enclosures (exact). */
static inline void nmo_fenc_max_v(nmo_fctx *c, nmo_fenc *r, const nmo_fenc *x, int64_t n)
{
    *r = x[0];
    for (int64_t i = 1; i < n; i++) nmo_fenc_max(c, r, r, &x[i]);
}

/* Split-K partial sums stored in format pf (cuBLAS's reduced-precision reduction: the
 * plan's `inter` of matmul and matmul_bwd) before they are added in acc, for the matrix
 * products that follow (pf < 0: none). With disjoint splits S_p (any split, any order
 * inside) of sum|a b| = A: each partial errs by the dot model on its terms, its store
 * RN_pf(s_p) by u_pf |s_p| + eta_pf, and the P <= n stored partials are added in any
 * order (Jeannerod & Rump 2013): (P - 1) u_a sum|RN(s_p)| with
 * sum|RN(s_p)| <= (1 + u_pf)(1 + n u_a) A + P eta_pf. Beyond the dot model that is at
 * most (1 + n u_a)(2^(p_a - p_pf) + 2n) u_a A + 2 n eta_pf (u_pf <= 1/2, n u_a <= 1/4:
 * nmo_gemm_partials_k; larger n: no bound, "anything"). A partial may also overflow pf
 * (it is at most A (1 + n u_a) in magnitude): from there on, "anything". [alo, ahi]
 * holds A (the certified engine: alo = ahi = A rounded up). Returns 0, 1 when a partial
 * may overflow (*k = inf), or 2 when [alo, ahi] straddles that threshold (the fast
 * engine flags the element: the certified engine decides). */
static inline int nmo_gemm_partials_k(const nmo_plan *p, int pf, int64_t n, double ua, double alo,
                                      double ahi, double *k, double *keta)
{
    if (pf < 0) return 0;
    const nmo_fmt_info *fi = nmo_fmt_get((nmo_fmt)pf), *ai = nmo_fmt_get(p->acc);
    double nd = (double)n, thr = fi->max_finite / (1 + nd * ua);
    if (!(nd * ua <= 0.25) || alo >= thr) { *k = INFINITY; return 1; }
    double eta_pf = p->ftz ? fi->min_normal : fi->min_subnormal / 2, st = ldexp(1.0, ai->prec - fi->prec);
    double kg, kc;
    int64_t P;
    /* A declared geometry (sum_geom.c): the chunks are the split, P of them, each errs by
     * the chunk level kc (at most n: Thm 4.2 on its terms); the stored partials are pf
     * floats, so their sum in any order errs by (P - 1) u_a sum|RN(s_p)|, with
     * sum|RN(s_p)| <= (1 + u_pf)(1 + kc u_a) A + P eta_pf: in all
     * kc + (1 + kc u_a)(2^(p_a - p_pf) + (P - 1)(1 + u_pf)), and 2 P eta_pf. Taken (both
     * terms together) when it is below the any-split bound. */
    if (*k < INFINITY && nmo_plan_geo_chunk(p, n, n, 1, &kc, &P)) {
        kc = kc < nd ? kc : nd;
        kg = kc + (1 + kc * ua) * (st + (double)(P - 1) * (1 + ldexp(1.0, -fi->prec)));
        kg = ceil(kg * (1 + 0x1p-40) * 1024) / 1024;
        if (kg < *k + (1 + nd * ua) * (st + 2 * nd)) {
            *k = kg;
            *keta += 2 * (double)P * eta_pf;
            return ahi >= thr ? 2 : 0;
        }
    }
    *k += (1 + nd * ua) * (st + 2 * nd);
    *keta += 2 * nd * eta_pf;
    return ahi >= thr ? 2 : 0;
}

static inline void nmo_fenc_gemm_partials(nmo_fctx *c, int pf) { c->gemm_partials = pf; }

/* Element (i, j) of the matrix product A[M,K] * B[K,N] (inputs as stored): a dot
 * product in acc (nmo_fenc_dot_d's model). The first call computes A*B, |A|*|B| and the
 * nonzero-term counts nz(A)*nz(B) for the whole matrices in binary64 (BLAS dgemm when built with it: any order, error
 * <= K 2^-53 |A||B| each, Jeannerod & Rump 2013 in binary64) and keeps them in ctx. */
void nmo_fenc_gemm_elem(nmo_fctx *c, nmo_fenc *r, const nmo_tensor *A, const nmo_tensor *B,
                        int64_t i, int64_t j);
/* Row i of C = A B: out[j] = nmo_fenc_gemm_elem(i, j) for j < N (same values and flags),
 * the common case through a vectorized kernel over the batched products. */
void nmo_fenc_gemm_row(nmo_fctx *c, nmo_fenc *out, const nmo_tensor *A, const nmo_tensor *B, int64_t i);
void nmo_fe_gemm_row_kernel(double *lo, double *hi, int64_t *ok, const double *mid, const double *absv,
                            const double *cnt, double K, double ua, double keta, double maxfin, int64_t n);

#endif
