/* Enclosure soundness of the linear-algebra / attention primitives (numoracle issue 3):
 * enc_dot_ed (enclosure . point dot product), enc_widen (model widening) and
 * enc_gemm_elem_t (element of op(X) op(Y) with transposes, BLAS-batched in the fast engine),
 * and the zero-term rule of enc_dot_d / enc_dot_ed (exact zero products are not counted).
 *
 * For each: every legitimate implementation evaluated at sampled points of the input
 * intervals lands inside the certified and the fast enclosure, and the fast engine equals
 * the certified one wherever it does not flag UNC.
 *  - dot_ed: n <= 5 terms, every evaluation tree and every choice of FMA contraction vs a
 *    rounded product, in a bf16 / fp16 accumulator (compute = acc = the narrow format) where
 *    a wrong bound would be caught; the worst |error| / bound ratio is printed and must
 *    come near 1 (a test whose inputs never approach the bound could not fail).
 *  - widen: the exact bound lo - rel|lo| - abs (MPFR) is >= the result's lower end and
 *    < its next lattice value up (outward, and no wider than one snap); likewise above.
 *  - gemm_elem_t: bf16 matrices (one set with ReLU-style zeros), all four transpose
 *    combinations, sequential fmaf
 *    forward and backward, non-FMA pairwise and 4-way split sums in fp32. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/enc_cert.h"
#include "engine/enc_fast.h"
#include "numoracle/numoracle.h"

static nmo_fmt g_acc;

static double rn(double x) { return nmo_fmt_round(g_acc, x, NMO_RNE, 0); }

static double two_sum(double a, double b, double *err)
{
    double s = a + b, bb = s - a;
    *err = (a - (s - bb)) + (b - bb);
    return s;
}

/* RN into g_acc of the exact hi + lo */
static double rn_pair(double hi, double lo)
{
    double d = nmo_fmt_round(g_acc, hi, NMO_RD, 0), u = nmo_fmt_round(g_acc, hi, NMO_RU, 0);
    if (d != u && hi == d + (u - d) / 2 && lo != 0) return lo > 0 ? u : d;
    return rn(hi);
}

static double rn_add(double a, double b)
{
    double e, s = two_sum(a, b, &e);
    return rn_pair(s, e);
}

/* ---------------------------------------------------------------- dot_ed: all trees */

typedef struct {
    int prod;
    double a, b, v;
} item;

static double g_lo, g_hi, g_flo, g_fhi, g_exact, g_bound, g_worst;
static long g_evals, g_out;

static double item_value(const item *x) { return x->prod ? rn(x->a * x->b) : x->v; }

static void check_result(double r)
{
    g_evals++;
    if (!(r >= g_lo && r <= g_hi) || !(r >= g_flo && r <= g_fhi)) {
        g_out++;
        if (g_out < 5) cr_log_error("dot_ed: %a outside [%a, %a] / fast [%a, %a]", r, g_lo, g_hi, g_flo, g_fhi);
    }
    if (g_bound > 0) {
        double q = fabs(r - g_exact) / g_bound;
        if (q > g_worst) g_worst = q;
    }
}

static void enumerate(item *it, int n)
{
    if (n == 1) {
        check_result(item_value(&it[0]));
        return;
    }
    item save[8];
    memcpy(save, it, (size_t)n * sizeof(item));
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            double opts[3];
            int no = 0;
            const item *x = &save[i], *y = &save[j];
            if (x->prod && y->prod) {
                opts[no++] = rn_add(item_value(x), item_value(y));
                opts[no++] = rn_add(x->a * x->b, item_value(y));
                opts[no++] = rn_add(y->a * y->b, item_value(x));
            } else if (x->prod || y->prod) {
                const item *p = x->prod ? x : y, *v = x->prod ? y : x;
                opts[no++] = rn_add(p->a * p->b, v->v);
                opts[no++] = rn_add(item_value(p), v->v);
            } else {
                opts[no++] = rn_add(x->v, y->v);
            }
            for (int o = 0; o < no; o++) {
                item nx[8];
                int m = 0;
                for (int k = 0; k < n; k++)
                    if (k != i && k != j) nx[m++] = save[k];
                nx[m].prod = 0;
                nx[m].v = opts[o];
                enumerate(nx, m + 1);
            }
        }
}

static double rand_val(uint64_t seed, uint64_t i, int kind)
{
    double g = nmo_gen_normal(seed, 77, i);
    double u = nmo_gen_uniform01(seed, 78, i);
    switch (kind) {
    case 0: return g;
    case 1: return (i & 1 ? -1 : 1) * (1 + u / 64);
    case 2: return ldexp(g, (int)(u * 16) - 8);
    default: return 1 + u / 16;
    }
}

static void dot_ed_orders(nmo_fmt acc, int nmax, int trials)
{
    g_acc = acc;
    nmo_plan p;
    nmo_plan_default(&p, acc);
    p.in = p.out = p.compute = p.acc = p.inter = acc;
    nmo_fctx fc;
    nmo_cctx cc;
    nmo_fctx_init(&fc, &p, NULL);
    nmo_cctx_init(&cc, &p, NULL);
    double worst = 0;
    long evals = 0, mism = 0;
    for (int n = 2; n <= nmax; n++)
        for (int t = 0; t < trials; t++) {
            int kind = t % 4;
            nmo_fenc xf[8];
            nmo_cenc xc[8];
            double y[8], xlo[8], xhi[8];
            for (int i = 0; i < n; i++) {
                double a = rn(rand_val((uint64_t)t, (uint64_t)(2 * i + 100 * n), kind)), b = a;
                int w = (int)(nmo_gen_u64((uint64_t)t, 5, (uint64_t)(i + 10 * n)) % 3);
                for (int k = 0; k < w; k++) b = nmo_fmt_next_up(acc, b);
                xlo[i] = a, xhi[i] = b;
                y[i] = rn(rand_val((uint64_t)t + 999, (uint64_t)(2 * i + 1), kind % 2 ? 0 : kind));
                xf[i].lo = a, xf[i].hi = b, xf[i].flags = 0, xf[i].mag = nmo_mag_abs(a, b);
                nmo_cenc_init(&cc, &xc[i]);
                mpfr_set_d(xc[i].lo, a, MPFR_RNDN);
                mpfr_set_d(xc[i].hi, b, MPFR_RNDN);
                xc[i].flags = 0, xc[i].mag = xf[i].mag;
            }
            nmo_fenc ef, ec;
            nmo_cenc cr;
            nmo_cenc_init(&cc, &cr);
            nmo_fenc_dot_ed(&fc, &ef, xf, y, n, (double)n);
            nmo_cenc_dot_ed(&cc, &cr, xc, y, n, (double)n);
            nmo_cenc_export(&cc, &ec, &cr);
            if (!(ef.flags & NMO_EF_UNC) && !(ef.lo == ec.lo && ef.hi == ec.hi && nmo_mag_same(ef.mag, ec.mag))) {
                mism++;
                cr_log_error("dot_ed fast [%a,%a] != cert [%a,%a]", ef.lo, ef.hi, ec.lo, ec.hi);
            }
            g_lo = ec.lo, g_hi = ec.hi;
            g_flo = ef.flags & NMO_EF_UNC ? -INFINITY : ef.lo;
            g_fhi = ef.flags & NMO_EF_UNC ? INFINITY : ef.hi;
            /* corners and an interior point of the x box */
            for (int s = 0; s < 3; s++) {
                item it[8];
                g_exact = 0;
                double sabs = 0;
                for (int i = 0; i < n; i++) {
                    double xv = s == 0 ? xlo[i] : s == 1 ? xhi[i] : ((i + t) & 1 ? xlo[i] : xhi[i]);
                    it[i].prod = 1, it[i].a = xv, it[i].b = y[i], it[i].v = 0;
                    g_exact += xv * y[i];
                    sabs += fabs(xv * y[i]);
                }
                g_bound = n * fc.ua * sabs;
                enumerate(it, n);
            }
            if (g_worst > worst) worst = g_worst;
            g_worst = 0;
            for (int i = 0; i < n; i++) nmo_cenc_clear(&cc, &xc[i]);
            nmo_cenc_clear(&cc, &cr);
        }
    evals = g_evals;
    printf("dot_ed %s n<=%d: %ld evaluations, %ld outside, %ld fast!=cert, worst |error|/bound = %.3f\n",
           nmo_fmt_name(acc), nmax, evals, g_out, mism, worst);
    cr_expect_eq(g_out, 0);
    cr_expect_eq(mism, 0);
    cr_expect_gt(worst, 0.2, "inputs never approach the bound (worst ratio %.3f)", worst);
    g_evals = g_out = 0;
    nmo_fctx_clear(&fc);
    nmo_cctx_clear(&cc);
}

Test(linalg_enclosure, dot_ed_orders_bf16, .timeout = 600) { dot_ed_orders(NMO_BF16, 5, 100); }
Test(linalg_enclosure, dot_ed_orders_fp16, .timeout = 600) { dot_ed_orders(NMO_FP16, 5, 100); }

/* Zero terms (ReLU outputs, padding, one-hot vectors): dot_d and dot_ed drop them from
 * the rounding count (m = nonzero terms). Every tree over all n terms, zeros included,
 * must land inside; the worst error is measured against m u sum|x y| (it can exceed 1
 * slightly in fp16 where products underflow: the enclosure adds the underflow term). */
static void dot_zero_terms(nmo_fmt acc, int trials)
{
    g_acc = acc;
    nmo_plan p;
    nmo_plan_default(&p, acc);
    p.in = p.out = p.compute = p.acc = p.inter = acc;
    nmo_fctx fc;
    nmo_cctx cc;
    nmo_fctx_init(&fc, &p, NULL);
    nmo_cctx_init(&cc, &p, NULL);
    double worst = 0;
    long mism = 0;
    for (int n = 3; n <= 6; n++)
        for (int t = 0; t < trials; t++) {
            int kind = t % 4;
            double x[8], y[8];
            nmo_fenc xf[8];
            nmo_cenc xc[8];
            int m = 0;
            for (int i = 0; i < n; i++) {
                int zero = (nmo_gen_u64((uint64_t)t, 9, (uint64_t)(i + 10 * n)) % 3) == 0;
                x[i] = zero && (i & 1) ? 0.0 : rn(rand_val((uint64_t)t, (uint64_t)(2 * i + 100 * n), kind));
                y[i] = zero && !(i & 1) ? 0.0 : rn(rand_val((uint64_t)t + 999, (uint64_t)(2 * i + 1), kind % 2 ? 0 : kind));
                m += x[i] != 0 && y[i] != 0;
                xf[i].lo = xf[i].hi = x[i], xf[i].flags = 0, xf[i].mag = fabs(x[i]);
                nmo_cenc_init(&cc, &xc[i]);
                mpfr_set_d(xc[i].lo, x[i], MPFR_RNDN);
                mpfr_set_d(xc[i].hi, x[i], MPFR_RNDN);
                xc[i].flags = 0, xc[i].mag = xf[i].mag;
            }
            for (int prim = 0; prim < 2; prim++) {
                nmo_fenc ef, ec;
                nmo_cenc cr;
                nmo_cenc_init(&cc, &cr);
                if (prim == 0) {
                    nmo_fenc_dot_d(&fc, &ef, x, y, n);
                    nmo_cenc_dot_d(&cc, &cr, x, y, n);
                } else {
                    nmo_fenc_dot_ed(&fc, &ef, xf, y, n, (double)n);
                    nmo_cenc_dot_ed(&cc, &cr, xc, y, n, (double)n);
                }
                nmo_cenc_export(&cc, &ec, &cr);
                nmo_cenc_clear(&cc, &cr);
                if (!(ef.flags & NMO_EF_UNC) && !(ef.lo == ec.lo && ef.hi == ec.hi && nmo_mag_same(ef.mag, ec.mag))) mism++;
                g_lo = ec.lo, g_hi = ec.hi;
                g_flo = ef.flags & NMO_EF_UNC ? -INFINITY : ef.lo;
                g_fhi = ef.flags & NMO_EF_UNC ? INFINITY : ef.hi;
                item it[8];
                double sabs = 0;
                g_exact = 0;
                for (int i = 0; i < n; i++) {
                    it[i].prod = 1, it[i].a = x[i], it[i].b = y[i], it[i].v = 0;
                    g_exact += x[i] * y[i];
                    sabs += fabs(x[i] * y[i]);
                }
                g_bound = m * fc.ua * sabs;
                g_worst = 0;
                enumerate(it, n);
                if (g_worst > worst) worst = g_worst;
            }
            for (int i = 0; i < n; i++) nmo_cenc_clear(&cc, &xc[i]);
        }
    printf("dot with zero terms %s: %ld evaluations, %ld outside, %ld fast!=cert, worst |error|/(m u sum|xy|) = %.3f\n",
           nmo_fmt_name(acc), g_evals, g_out, mism, worst);
    cr_expect_eq(g_out, 0);
    cr_expect_eq(mism, 0);
    cr_expect_gt(worst, 0.2, "inputs never approach the bound (worst ratio %.3f)", worst);
    g_evals = g_out = 0;
    nmo_fctx_clear(&fc);
    nmo_cctx_clear(&cc);
}

Test(linalg_enclosure, dot_zero_terms_bf16, .timeout = 600) { dot_zero_terms(NMO_BF16, 60); }
Test(linalg_enclosure, dot_zero_terms_fp16, .timeout = 600) { dot_zero_terms(NMO_FP16, 60); }

/* NaN / inf operands: both engines decide alike */
Test(linalg_enclosure, dot_ed_special_values)
{
    nmo_plan p;
    nmo_plan_default(&p, NMO_BF16);
    nmo_fctx fc;
    nmo_cctx cc;
    nmo_fctx_init(&fc, &p, NULL);
    nmo_cctx_init(&cc, &p, NULL);
    double ys[4] = {1.0, NAN, INFINITY, 0.0};
    double xs[4][2] = {{1, 2}, {-INFINITY, 1}, {NAN, NAN}, {0, 0}};
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++) {
            nmo_fenc xf[2];
            nmo_cenc xc[2];
            double y[2] = {0.5, ys[b]};
            for (int i = 0; i < 2; i++) {
                double lo = i ? xs[a][0] : 1, hi = i ? xs[a][1] : 1;
                xf[i].lo = lo, xf[i].hi = hi, xf[i].flags = 0, xf[i].mag = nmo_mag_abs(lo, hi);
                nmo_cenc_init(&cc, &xc[i]);
                mpfr_set_d(xc[i].lo, lo, MPFR_RNDN);
                mpfr_set_d(xc[i].hi, hi, MPFR_RNDN);
                xc[i].flags = 0, xc[i].mag = xf[i].mag;
            }
            nmo_fenc ef, ec;
            nmo_cenc cr;
            nmo_cenc_init(&cc, &cr);
            nmo_fenc_dot_ed(&fc, &ef, xf, y, 2, 2);
            nmo_cenc_dot_ed(&cc, &cr, xc, y, 2, 2);
            nmo_cenc_export(&cc, &ec, &cr);
            int same = (ef.lo == ec.lo || (ef.lo != ef.lo && ec.lo != ec.lo)) &&
                       (ef.hi == ec.hi || (ef.hi != ef.hi && ec.hi != ec.hi)) &&
                       (ef.flags & ~NMO_EF_UNC) == ec.flags;
            cr_expect(same, "case %d/%d: fast [%a,%a] %x cert [%a,%a] %x", a, b, ef.lo, ef.hi, ef.flags,
                      ec.lo, ec.hi, ec.flags);
            for (int i = 0; i < 2; i++) nmo_cenc_clear(&cc, &xc[i]);
            nmo_cenc_clear(&cc, &cr);
        }
    nmo_fctx_clear(&fc);
    nmo_cctx_clear(&cc);
}

/* ---------------------------------------------------------------- widen */

Test(linalg_enclosure, widen_outward_and_tight)
{
    nmo_plan p;
    nmo_plan_default(&p, NMO_BF16);
    nmo_fctx fc;
    nmo_cctx cc;
    nmo_fctx_init(&fc, &p, NULL);
    nmo_cctx_init(&cc, &p, NULL);
    long bad = 0, mism = 0, unc = 0, n = 0;
    mpfr_t v, t;
    mpfr_inits2(512, v, t, (mpfr_ptr)0);
    for (int s = 0; s < 4000; s++) {
        double g = nmo_gen_normal(5, 1, (uint64_t)s) * ldexp(1, (int)(nmo_gen_u64(5, 2, (uint64_t)s) % 40) - 20);
        double lo = (float)g, hi = lo;
        for (int k = 0; k < (int)(nmo_gen_u64(5, 3, (uint64_t)s) % 4); k++) hi = nmo_fmt_next_up(NMO_FP32, hi);
        if (s % 17 == 0) hi = fabs(hi), lo = 0;
        if (s % 23 == 0) lo = hi = ldexp(1, -140); /* subnormal range */
        double rel = (s % 3) * 0x1p-22 * (1 + 0x1p-7) * (double)(1 + s % 11);
        /* off the fp32 lattice (an exact lattice widening is ambiguous for the fast engine) */
        double abs = s % 5 == 0 ? 0 : ldexp(1.0 + s % 7, -150 + (int)(s % 30)) * (1 + 0x1p-30);
        nmo_fenc a = {lo, hi, 0, nmo_mag_abs(lo, hi)}, rf, rc;
        nmo_cenc ca, cr;
        nmo_cenc_init(&cc, &ca), nmo_cenc_init(&cc, &cr);
        mpfr_set_d(ca.lo, lo, MPFR_RNDN);
        mpfr_set_d(ca.hi, hi, MPFR_RNDN);
        ca.flags = 0, ca.mag = a.mag;
        nmo_fenc_widen(&fc, &rf, &a, rel, abs);
        nmo_cenc_widen(&cc, &cr, &ca, rel, abs);
        nmo_cenc_export(&cc, &rc, &cr);
        n++;
        if (rf.flags & NMO_EF_UNC) unc++;
        else if (rf.lo != rc.lo || rf.hi != rc.hi || !nmo_mag_same(rf.mag, rc.mag)) mism++;
        /* exact bounds */
        mpfr_set_d(v, fabs(lo), MPFR_RNDN);
        mpfr_mul_d(v, v, rel, MPFR_RNDN);
        mpfr_d_sub(v, lo, v, MPFR_RNDN);
        mpfr_sub_d(v, v, abs, MPFR_RNDN); /* exact at 512 bits */
        int ok_lo = mpfr_cmp_d(v, rc.lo) >= 0 && mpfr_cmp_d(v, nmo_fmt_next_up(NMO_FP32, rc.lo)) < 0;
        mpfr_set_d(t, fabs(hi), MPFR_RNDN);
        mpfr_mul_d(t, t, rel, MPFR_RNDN);
        mpfr_add_d(t, t, hi, MPFR_RNDN);
        mpfr_add_d(t, t, abs, MPFR_RNDN);
        int ok_hi = mpfr_cmp_d(t, rc.hi) <= 0 && mpfr_cmp_d(t, nmo_fmt_next_down(NMO_FP32, rc.hi)) > 0;
        if ((lo == 0 || rel == 0) && abs == 0) ok_lo = rc.lo == lo;
        if ((hi == 0 || rel == 0) && abs == 0) ok_hi = rc.hi == hi;
        if (!ok_lo || !ok_hi) {
            bad++;
            if (bad < 5) cr_log_error("widen [%a,%a] rel %a abs %a -> [%a,%a]", lo, hi, rel, abs, rc.lo, rc.hi);
        }
        nmo_cenc_clear(&cc, &ca), nmo_cenc_clear(&cc, &cr);
    }
    mpfr_clears(v, t, (mpfr_ptr)0);
    printf("widen: %ld cases, %ld wrong, %ld fast!=cert, %ld escalated\n", n, bad, mism, unc);
    cr_expect_eq(bad, 0);
    cr_expect_eq(mism, 0);
    cr_expect_lt(unc, n / 10, "fast engine escalates too often (%ld of %ld)", unc, n);
    nmo_fctx_clear(&fc);
    nmo_cctx_clear(&cc);
}

/* ---------------------------------------------------------------- gemm_elem_t */

static float seqf(const float *x, const float *y, int64_t n, int fma, int rev)
{
    float acc = 0;
    for (int64_t k = 0; k < n; k++) {
        int64_t i = rev ? n - 1 - k : k;
        acc = fma ? fmaf(x[i], y[i], acc) : acc + x[i] * y[i];
    }
    return acc;
}

static float pairf(const float *x, const float *y, int64_t n)
{
    if (n == 1) return x[0] * y[0];
    return pairf(x, y, n / 2) + pairf(x + n / 2, y + n / 2, n - n / 2);
}

Test(linalg_enclosure, gemm_elem_t_transposes, .timeout = 600)
{
    long bad = 0, mism = 0, checked = 0;
    for (int fam = 0; fam < 3; fam++)
        for (int tx = 0; tx < 2; tx++)
            for (int ty = 0; ty < 2; ty++) {
                int64_t m = 7, n = 5, kk = 37 + 64 * fam;
                int64_t dx[2] = {tx ? kk : m, tx ? m : kk}, dy[2] = {ty ? n : kk, ty ? kk : n};
                nmo_tensor X, Y;
                nmo_err err;
                nmo_tensor_init(&X, NMO_BF16, 2, dx, &err);
                nmo_tensor_init(&Y, NMO_BF16, 2, dy, &err);
                nmo_tensor_alloc(&X, &err);
                nmo_tensor_alloc(&Y, &err);
                nmo_gen_fill(&X, fam == 0 ? NMO_FAM_GAUSSIAN : fam == 1 ? NMO_FAM_NEAR_DEGENERATE : NMO_FAM_LARGE,
                             (uint64_t)(tx * 2 + ty + 1), 0, dx[1]);
                nmo_gen_fill(&Y, fam == 2 ? NMO_FAM_OUTLIER : NMO_FAM_SHIFTED, (uint64_t)(tx * 2 + ty + 1), 1, dy[1]);
                if (fam == 0) /* ReLU outputs: exact zeros (the nonzero-term counts) */
                    for (int64_t e = 0; e < dx[0] * dx[1]; e++)
                        if (nmo_tensor_get(&X, e) < 0.5) nmo_tensor_set(&X, e, 0.0);
                nmo_plan p;
                nmo_plan_default(&p, NMO_BF16);
                nmo_fctx fc;
                nmo_cctx cc;
                nmo_fctx_init(&fc, &p, NULL);
                nmo_cctx_init(&cc, &p, NULL);
                float *xr = malloc((size_t)kk * sizeof(float)), *yc = malloc((size_t)kk * sizeof(float));
                for (int64_t i = 0; i < m; i++)
                    for (int64_t j = 0; j < n; j++) {
                        for (int64_t k = 0; k < kk; k++) {
                            xr[k] = (float)nmo_tensor_get(&X, tx ? k * m + i : i * kk + k);
                            yc[k] = (float)nmo_tensor_get(&Y, ty ? j * kk + k : k * n + j);
                        }
                        nmo_fenc ef, ec;
                        nmo_cenc cr;
                        nmo_cenc_init(&cc, &cr);
                        nmo_fenc_gemm_elem_t(&fc, &ef, &X, tx, &Y, ty, i, j);
                        nmo_cenc_gemm_elem_t(&cc, &cr, &X, tx, &Y, ty, i, j);
                        nmo_cenc_export(&cc, &ec, &cr);
                        nmo_cenc_clear(&cc, &cr);
                        if (!(ef.flags & NMO_EF_UNC) && !(ef.lo == ec.lo && ef.hi == ec.hi && nmo_mag_same(ef.mag, ec.mag))) mism++;
                        float vals[6] = {seqf(xr, yc, kk, 1, 0), seqf(xr, yc, kk, 1, 1), seqf(xr, yc, kk, 0, 0),
                                         pairf(xr, yc, kk), 0, 0};
                        float part[4] = {0};
                        for (int64_t k = 0; k < kk; k++) part[k % 4] = fmaf(xr[k], yc[k], part[k % 4]);
                        vals[4] = (part[0] + part[1]) + (part[2] + part[3]);
                        vals[5] = seqf(xr, yc, kk, 0, 1);
                        for (int v = 0; v < 6; v++) {
                            checked++;
                            if (!(vals[v] >= ec.lo && vals[v] <= ec.hi) ||
                                (!(ef.flags & NMO_EF_UNC) && !(vals[v] >= ef.lo && vals[v] <= ef.hi))) {
                                bad++;
                                if (bad < 5)
                                    cr_log_error("gemm_elem_t tx=%d ty=%d (%ld,%ld) impl %d: %a outside [%a,%a]", tx,
                                                 ty, (long)i, (long)j, v, (double)vals[v], ec.lo, ec.hi);
                            }
                        }
                    }
                free(xr), free(yc);
                nmo_fctx_clear(&fc);
                nmo_cctx_clear(&cc);
                nmo_tensor_free(&X);
                nmo_tensor_free(&Y);
            }
    printf("gemm_elem_t: %ld implementation results checked, %ld outside, %ld fast!=cert\n", checked, bad, mism);
    cr_expect_eq(bad, 0);
    cr_expect_eq(mism, 0);
}

/* ---------------------------------------------------------------- gemm_elem */

/* nmo_fenc_gemm_elem's batched preparation keeps no count array when neither matrix has
 * a zero (every count is K) and otherwise counts nonzero terms with an exact binary32
 * product of 0/1 matrices. Either way the fast enclosure must equal the certified one
 * (which counts term by term) wherever it does not flag UNC: zeros in A only, in B only,
 * in both, none; the `any` plan and an mma plan (both use the count, mma also its blocks).
 * A wrong count moves em = k u |A||B| and the snap with it on many elements. */
Test(linalg_enclosure, gemm_elem_counts_fast_equals_cert, .timeout = 600)
{
    long mism = 0, checked = 0, unc = 0;
    for (int zc = 0; zc < 4; zc++)
        for (int pl = 0; pl < 2; pl++) {
            int64_t M = 9, N = 11, K = 300;
            int64_t da[2] = {M, K}, db[2] = {K, N};
            nmo_tensor A, B;
            nmo_err err;
            nmo_tensor_init(&A, NMO_BF16, 2, da, &err);
            nmo_tensor_init(&B, NMO_BF16, 2, db, &err);
            nmo_tensor_alloc(&A, &err);
            nmo_tensor_alloc(&B, &err);
            nmo_gen_fill(&A, NMO_FAM_GAUSSIAN, (uint64_t)(zc + 1), 0, K);
            nmo_gen_fill(&B, NMO_FAM_SHIFTED, (uint64_t)(zc + 1), 1, N);
            if (zc & 1) /* ReLU-style zeros in A */
                for (int64_t e = 0; e < M * K; e++)
                    if (nmo_tensor_get(&A, e) < 0.3) nmo_tensor_set(&A, e, 0.0);
            if (zc & 2) /* sparse zeros in B */
                for (int64_t e = 0; e < K * N; e++)
                    if (e % 7 == 3) nmo_tensor_set(&B, e, 0.0);
            nmo_plan p;
            nmo_plan_default(&p, NMO_BF16);
            if (pl) cr_assert_eq(nmo_plan_parse(&p, "in=bf16 out=bf16 compute=fp32 acc=fp32 sum=mma:16", &err), NMO_OK);
            nmo_fctx fc;
            nmo_cctx cc;
            nmo_fctx_init(&fc, &p, NULL);
            nmo_cctx_init(&cc, &p, NULL);
            for (int64_t i = 0; i < M; i++)
                for (int64_t j = 0; j < N; j++) {
                    nmo_fenc ef, ec;
                    nmo_cenc cr;
                    nmo_cenc_init(&cc, &cr);
                    nmo_fenc_gemm_elem(&fc, &ef, &A, &B, i, j);
                    nmo_cenc_gemm_elem(&cc, &cr, &A, &B, i, j);
                    nmo_cenc_export(&cc, &ec, &cr);
                    nmo_cenc_clear(&cc, &cr);
                    checked++;
                    if (ef.flags & NMO_EF_UNC) unc++;
                    else if (!(ef.lo == ec.lo && ef.hi == ec.hi && nmo_mag_same(ef.mag, ec.mag))) {
                        mism++;
                        if (mism < 5)
                            cr_log_error("gemm_elem zeros=%d plan=%d (%ld,%ld): fast [%a,%a] cert [%a,%a]", zc, pl,
                                         (long)i, (long)j, ef.lo, ef.hi, ec.lo, ec.hi);
                    }
                }
            nmo_fctx_clear(&fc);
            nmo_cctx_clear(&cc);
            nmo_tensor_free(&A);
            nmo_tensor_free(&B);
        }
    printf("gemm_elem counts: %ld elements, %ld fast!=cert, %ld UNC\n", checked, mism, unc);
    cr_expect_eq(mism, 0);
    cr_expect(unc < checked / 10, "too many UNC: the test would not compare anything");
}

/* ---------------------------------------------------------------- ftz: DAZ in dot products */

/* Under subnormals=ftz a kernel may read a subnormal input as 0 (DAZ) and flush every
 * subnormal result: the product x_i y_i of a subnormal x_i and a huge y_i (2^100..2^126)
 * then vanishes although it is far above the 2n min_normal underflow term. Dot products
 * of points (enc_dot_d, enc_dot_sharp_d, enc_gemm_elem, enc_gemm_elem_t) and enc_dot_ed's
 * point operand must enclose that kernel, the IEEE one, and one that flushes results
 * only; the fast engine equals the certified one wherever it does not flag UNC. Without
 * nmo_fe_daz_term the DAZ kernel's 0 lies outside (tested: it FAILed by 2^-14). */
static float ftz_f(float v) { return fabsf(v) < 0x1p-126f ? 0.0f * v : v; }

/* sequential dot in fp32, FMA or not; daz: flush inputs; ftz: flush every result */
static float dot_ftz(const float *x, const float *y, int n, int fma, int daz, int ftz)
{
    float acc = 0;
    for (int i = 0; i < n; i++) {
        float a = daz ? ftz_f(x[i]) : x[i], b = daz ? ftz_f(y[i]) : y[i];
        if (fma) acc = fmaf(a, b, acc);
        else {
            float p = a * b;
            acc = acc + (ftz ? ftz_f(p) : p);
        }
        if (ftz) acc = ftz_f(acc);
    }
    return acc;
}

Test(linalg_enclosure, ftz_daz_dot_products, .timeout = 300)
{
    nmo_plan p;
    nmo_plan_default(&p, NMO_FP32);
    p.ftz = 1;
    nmo_fctx fc;
    nmo_cctx cc;
    nmo_fctx_init(&fc, &p, NULL);
    nmo_cctx_init(&cc, &p, NULL);
    long checked = 0, bad = 0, mism = 0;
    enum { N = 6 };
    for (int t = 0; t < 200; t++) {
        float x[N], y[N];
        double xd[N], yd[N];
        for (int i = 0; i < N; i++) {
            double g = nmo_gen_normal((uint64_t)t, 1, (uint64_t)i), h = nmo_gen_normal((uint64_t)t, 2, (uint64_t)i);
            if (i < 2) { /* subnormal times huge: the products that DAZ drops */
                x[i] = (float)ldexp(1 + fabs(g), -140 + (int)(t % 8));
                y[i] = (float)ldexp(h, 100 + (int)(t % 27));
                if ((t >> 3) & 1) { float s = x[i]; x[i] = y[i]; y[i] = s; } /* either side */
            } else { /* small normal terms */
                x[i] = (float)(1e-3 * g), y[i] = (float)(1e-3 * h);
            }
            xd[i] = x[i], yd[i] = y[i];
        }
        float impl[4] = {dot_ftz(x, y, N, 1, 1, 1), dot_ftz(x, y, N, 0, 1, 1), dot_ftz(x, y, N, 0, 0, 0),
                         dot_ftz(x, y, N, 0, 0, 1)};
        /* the point forms and their tensor forms */
        nmo_fenc ef[4], ec[4];
        nmo_cenc cr;
        nmo_cenc_init(&cc, &cr);
        nmo_fenc_dot_d(&fc, &ef[0], xd, yd, N);
        nmo_cenc_dot_d(&cc, &cr, xd, yd, N);
        nmo_cenc_export(&cc, &ec[0], &cr);
        nmo_fenc_dot_sharp_d(&fc, &ef[1], xd, yd, N);
        nmo_cenc_dot_sharp_d(&cc, &cr, xd, yd, N);
        nmo_cenc_export(&cc, &ec[1], &cr);
        /* enc_dot_ed: x as enclosures (DAZ by set_d), y as points */
        nmo_fenc xf[N];
        nmo_cenc xc[N];
        for (int i = 0; i < N; i++) {
            nmo_fenc_set_d(&fc, &xf[i], xd[i]);
            nmo_cenc_init(&cc, &xc[i]);
            nmo_cenc_set_d(&cc, &xc[i], xd[i]);
        }
        nmo_fenc_dot_ed(&fc, &ef[2], xf, yd, N, N);
        nmo_cenc_dot_ed(&cc, &cr, xc, yd, N, N);
        nmo_cenc_export(&cc, &ec[2], &cr);
        /* gemm: A [1,N] x B [N,1] (and transposed: X^T Y with X [N,1]) */
        int64_t da[2] = {1, N}, db[2] = {N, 1};
        nmo_tensor A, B;
        nmo_err err;
        nmo_tensor_init(&A, NMO_FP32, 2, da, &err), nmo_tensor_alloc(&A, &err);
        nmo_tensor_init(&B, NMO_FP32, 2, db, &err), nmo_tensor_alloc(&B, &err);
        for (int i = 0; i < N; i++) nmo_tensor_set(&A, i, xd[i]), nmo_tensor_set(&B, i, yd[i]);
        nmo_fctx fg;
        nmo_fctx_init(&fg, &p, NULL); /* a fresh context per matrix pair: gemm caches */
        nmo_fenc_gemm_elem(&fg, &ef[3], &A, &B, 0, 0);
        nmo_cenc_gemm_elem(&cc, &cr, &A, &B, 0, 0);
        nmo_cenc_export(&cc, &ec[3], &cr);
        nmo_fenc gt, gct;
        nmo_fctx_clear(&fg);
        nmo_fctx_init(&fg, &p, NULL);
        nmo_fenc_gemm_elem_t(&fg, &gt, &B, 1, &B, 0, 0, 0); /* y.y: subnormals on both sides */
        nmo_cenc_gemm_elem_t(&cc, &cr, &B, 1, &B, 0, 0, 0);
        nmo_cenc_export(&cc, &gct, &cr);
        nmo_fctx_clear(&fg);
        if (!(gt.flags & NMO_EF_UNC) && !(gt.lo == gct.lo && gt.hi == gct.hi)) mism++;
        float yy[2] = {dot_ftz(y, y, N, 1, 1, 1), dot_ftz(y, y, N, 0, 0, 0)};
        for (int v = 0; v < 2; v++) {
            checked++;
            if (!(yy[v] >= gct.lo && yy[v] <= gct.hi)) bad++;
        }
        for (int f = 0; f < 4; f++) {
            if (!(ef[f].flags & NMO_EF_UNC) && !(ef[f].lo == ec[f].lo && ef[f].hi == ec[f].hi)) mism++;
            for (int v = 0; v < 4; v++) {
                checked++;
                if (!(impl[v] >= ec[f].lo && impl[v] <= ec[f].hi)) {
                    bad++;
                    if (bad < 5)
                        cr_log_error("ftz form %d impl %d: %a outside [%a, %a]", f, v, (double)impl[v],
                                     ec[f].lo, ec[f].hi);
                }
            }
        }
        for (int i = 0; i < N; i++) nmo_cenc_clear(&cc, &xc[i]);
        nmo_cenc_clear(&cc, &cr);
        nmo_tensor_free(&A);
        nmo_tensor_free(&B);
    }
    printf("ftz DAZ dot products: %ld implementation results checked, %ld outside, %ld fast!=cert\n",
           checked, bad, mism);
    cr_expect_eq(bad, 0);
    cr_expect_eq(mism, 0);
    nmo_fctx_clear(&fc);
    nmo_cctx_clear(&cc);
}
