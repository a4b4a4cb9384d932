/* Enclosure soundness of the norms group's primitives (nmo_fenc_prodk / nmo_fenc_dotk and
 * their certified twins).
 *
 * prodk: random fp32 (and bf16-compute) factor intervals, some with wide exponents so
 *   that inner products underflow; at sampled points of the intervals, EVERY association
 *   of the k factors (every binary tree over every order), each multiplication rounded
 *   in compute, must land in the enclosure; with fused = 1 also the value whose last
 *   multiplication is left exact (the FMA operand). Fast == certified unless UNC.
 * dotk: in a bf16 compute/acc plan (where the bounds are tight enough to be caught if
 *   wrong), for n <= 5 terms of k <= 4 factors: every association of every term's inner
 *   roundings (sampled), then every summation tree with every choice of FMA contraction
 *   of the last multiplication, must land in the enclosure. The largest observed
 *   |error| / bound is printed and must approach 1 somewhere (else the test could not
 *   fail). Fast == certified unless UNC. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/enc_cert.h"
#include "engine/enc_fast.h"
#include "numoracle/numoracle.h"

static nmo_fmt g_cf; /* compute = acc format of the plan under test */
static int g_ftz;    /* results flushed to zero (ftz plans) */

static double rn(double x) { return nmo_fmt_round(g_cf, x, NMO_RNE, g_ftz); }

/* RN into g_cf of the exact value hi + lo (an exact pair, |lo| <= ulp(hi)/2). */
static double rn_pair(double hi, double lo)
{
    double d = nmo_fmt_round(g_cf, hi, NMO_RD, 0), u = nmo_fmt_round(g_cf, hi, NMO_RU, 0);
    if (d != u && hi == d + (u - d) / 2 && lo != 0) return rn(lo > 0 ? u : d);
    return rn(hi);
}

static double two_sum(double a, double b, double *err)
{
    double s = a + b, bb = s - a;
    *err = (a - (s - bb)) + (b - bb);
    return s;
}

static double rn_add(double a, double b)
{
    double e, s = two_sum(a, b, &e);
    return rn_pair(s, e);
}

static long g_bad, g_mismatch, g_checked;

/* an operand interval; its error scale |.| times 1..8 (the same in both engines) */
static void set_iv(nmo_fenc *f, nmo_cenc *c, double lo, double hi)
{
    double m = nmo_mag_abs(lo, hi) * (1 + (double)((uint64_t)fabs(lo * 977 + hi * 131) % 8));
    f->lo = lo, f->hi = hi, f->flags = 0, f->mag = m;
    mpfr_set_d(c->lo, lo, MPFR_RNDN);
    mpfr_set_d(c->hi, hi, MPFR_RNDN);
    c->flags = 0, c->mag = m;
}

/* a random interval of g_cf values: a point or a few ulps wide, some straddling 0, some
 * with exponents far from 1 (products underflow into the subnormals) */
static void rand_iv(uint64_t s, uint64_t i, double *lo, double *hi, int wide_exp)
{
    int sh = wide_exp ? (int)(nmo_gen_u64(s, 6, i) % 60) - 50 : (int)(nmo_gen_u64(s, 6, i) % 9) - 4;
    double g = nmo_gen_normal(s, 5, i) * ldexp(1, sh);
    if (nmo_gen_u64(s, 12, i) % 17 == 0) g = 0;
    double a = rn(g);
    int w = (int)(nmo_gen_u64(s, 7, i) % 4); /* 0: point */
    if (w == 3 && a != 0 && nmo_gen_u64(s, 13, i) % 3 == 0) a = -nmo_fmt_next_up(g_cf, 0) * 2;
    double b = a;
    for (int k = 0; k < w * 2; k++) b = nmo_fmt_next_up(g_cf, b);
    *lo = a;
    *hi = b;
}

static double sample(uint64_t s, uint64_t i, double lo, double hi)
{
    int k = (int)(nmo_gen_u64(s, 8, i) % 3);
    if (k == 0 || lo == hi) return lo;
    if (k == 1) return hi;
    double v = lo;
    int steps = (int)(nmo_gen_u64(s, 9, i) % 5);
    for (int j = 0; j < steps && v < hi; j++) v = nmo_fmt_next_up(g_cf, v);
    return v;
}

/* ---------------------------------------------------------------- prodk */

static double g_lo, g_hi;
static int g_nan_ok;

static void expect_in(const char *what, double v)
{
    g_checked++;
    if (!(v >= g_lo && v <= g_hi) && !(v != v && g_nan_ok)) {
        g_bad++;
        if (g_bad < 8) cr_log_error("%s: value %a outside [%a, %a]", what, v, g_lo, g_hi);
    }
}

/* Every association of v[0..n-1] (combine any two, RN each; the last combination: RN,
 * and with fused also exact). fp32 x fp32 products are exact in binary64. */
static void assoc(const double *v, int n, int fused)
{
    if (n == 1) {
        expect_in("prodk", v[0]);
        return;
    }
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            double nx[8];
            int m = 0;
            for (int q = 0; q < n; q++)
                if (q != i && q != j) nx[m++] = v[q];
            double p = v[i] * v[j]; /* exact */
            if (n == 2 && fused) expect_in("prodk fused (exact last product)", p);
            nx[m] = rn(p);
            assoc(nx, m + 1, fused);
        }
}

static void check_prodk(nmo_fmt cf, int trials, int ftz)
{
    nmo_plan p;
    nmo_plan_default(&p, NMO_FP32);
    p.compute = p.acc = p.inter = cf;
    p.ftz = ftz;
    g_cf = cf;
    g_ftz = ftz;
    nmo_fctx fc;
    nmo_cctx cc;
    nmo_fctx_init(&fc, &p, NULL);
    nmo_cctx_init(&cc, &p, NULL);
    g_bad = g_mismatch = g_checked = 0;
    for (int t = 0; t < trials; t++) {
        uint64_t s = (uint64_t)t * 7919 + 3;
        int k = 1 + (int)(nmo_gen_u64(s, 1, 0) % 6), fused = (int)(nmo_gen_u64(s, 2, 0) & 1);
        int wide = t % 3 == 0;
        nmo_fenc fa[8], fr;
        nmo_cenc ca[8], cr;
        const nmo_fenc *fp[8];
        const nmo_cenc *cp[8];
        double lo[8], hi[8];
        for (int i = 0; i < k; i++) {
            nmo_cenc_init(&cc, &ca[i]);
            rand_iv(s, (uint64_t)i, &lo[i], &hi[i], wide);
            set_iv(&fa[i], &ca[i], lo[i], hi[i]);
            fp[i] = &fa[i];
            cp[i] = &ca[i];
        }
        nmo_cenc_init(&cc, &cr);
        nmo_fenc_prodk(&fc, &fr, fp, k, fused);
        nmo_cenc_prodk(&cc, &cr, cp, k, fused);
        nmo_fenc er;
        nmo_cenc_export(&cc, &er, &cr);
        if (!(fr.flags & NMO_EF_UNC) && !(fr.lo == er.lo && fr.hi == er.hi && nmo_mag_same(fr.mag, er.mag))) {
            g_mismatch++;
            if (g_mismatch < 8)
                cr_log_error("prodk k=%d fused=%d: fast [%a, %a] != certified [%a, %a]", k, fused,
                             fr.lo, fr.hi, er.lo, er.hi);
        }
        g_lo = er.lo;
        g_hi = er.hi;
        g_nan_ok = (er.flags & NMO_EF_NAN) != 0;
        for (int q = 0; q < 4; q++) {
            double v[8];
            for (int i = 0; i < k; i++) v[i] = sample(s, (uint64_t)(40 + 8 * q + i), lo[i], hi[i]);
            if (k == 1) expect_in("prodk k=1", v[0]);
            else assoc(v, k, fused);
        }
        for (int i = 0; i < k; i++) nmo_cenc_clear(&cc, &ca[i]);
        nmo_cenc_clear(&cc, &cr);
    }
    printf("prodk compute=%s%s: %ld association results checked, %ld outside, %ld fast!=cert\n",
           nmo_fmt_name(cf), ftz ? " (ftz)" : "", g_checked, g_bad, g_mismatch);
    g_ftz = 0;
    cr_expect_eq(g_bad, 0);
    cr_expect_eq(g_mismatch, 0);
    cr_expect_gt(g_checked, 1000);
    nmo_fctx_clear(&fc);
    nmo_cctx_clear(&cc);
}

Test(prodk, associations_fp32, .timeout = 600) { check_prodk(NMO_FP32, 1500, 0); }
Test(prodk, associations_fp32_ftz, .timeout = 600) { check_prodk(NMO_FP32, 1500, 1); }
Test(prodk, associations_bf16_compute, .timeout = 600) { check_prodk(NMO_BF16, 1500, 0); }

/* ---------------------------------------------------------------- dotk */

typedef struct {
    int prod;    /* 1: pending product a*b (the last multiplication, not yet rounded) */
    double a, b;
    double v;
} item;

static double g_exact, g_bound, g_worst;
static long g_evals;

static void check_result(double r)
{
    g_evals++;
    expect_in("dotk", r);
    if (g_bound > 0 && isfinite(r)) {
        double ratio = fabs(r - g_exact) / g_bound;
        if (ratio > g_worst) g_worst = ratio;
    }
}

static double item_value(const item *x) { return x->prod ? rn(x->a * x->b) : x->v; }

/* every summation tree, every FMA choice (as tests/test_enclosure.c) */
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
                for (int q = 0; q < n; q++)
                    if (q != i && q != j) nx[m++] = save[q];
                nx[m].prod = 0;
                nx[m].v = opts[o];
                enumerate(nx, m + 1);
            }
        }
}

/* One association of a term's k factors with inner roundings, chosen by h: returns the
 * two operands of the last multiplication (k >= 2). */
static void term_ops(const double *f, int k, uint64_t h, double *a, double *b)
{
    double v[8];
    int n = k;
    memcpy(v, f, (size_t)k * sizeof(double));
    while (n > 2) {
        int i = (int)(h % (uint64_t)n);
        h /= (uint64_t)n;
        int j = (int)(h % (uint64_t)(n - 1));
        h /= (uint64_t)(n - 1);
        if (j >= i) j++;
        double p = rn(v[i] * v[j]);
        int lo = i < j ? i : j, hi = i < j ? j : i;
        v[lo] = p;
        v[hi] = v[n - 1];
        n--;
    }
    *a = v[0];
    *b = v[1];
}

static double vals_kind(uint64_t s, uint64_t i, int kind)
{
    double g = nmo_gen_normal(s, 77, i), u = nmo_gen_uniform01(s, 78, i);
    switch (kind) {
    case 0: return g;
    case 1: return (i & 1 ? -1 : 1) * (1 + u / 64); /* cancellation */
    case 2: return ldexp(g, (int)(u * 24) - 12);     /* wide exponents */
    default: return 1 + u / 16;                      /* same sign: errors align */
    }
}

static void check_dotk(nmo_fmt cf, int trials)
{
    nmo_plan p;
    nmo_plan_default(&p, cf);
    p.in = p.out = p.compute = p.acc = p.inter = cf;
    g_cf = cf;
    nmo_fctx fc;
    nmo_cctx cc;
    nmo_fctx_init(&fc, &p, NULL);
    nmo_cctx_init(&cc, &p, NULL);
    g_bad = g_mismatch = g_checked = 0;
    double worst = 0;
    for (int t = 0; t < trials; t++) {
        uint64_t s = (uint64_t)t * 104729 + 11;
        int k = 1 + (int)(nmo_gen_u64(s, 1, 0) % 4);
        int n = 2 + (int)(nmo_gen_u64(s, 2, 0) % (k == 1 ? 5 : 4));
        int rounds = k > 2 ? k - 2 : 0;
        int kind = t % 4;
        nmo_fenc fv[4][8];
        nmo_cenc cv[4][8];
        const nmo_fenc *fp[4];
        const nmo_cenc *cp[4];
        double f[4][8];
        for (int i = 0; i < k; i++) {
            for (int j = 0; j < n; j++) {
                f[i][j] = rn(vals_kind(s + (uint64_t)i, (uint64_t)(j + 10 * n), i == 0 ? kind : kind % 2 ? 0 : kind));
                nmo_cenc_init(&cc, &cv[i][j]);
                set_iv(&fv[i][j], &cv[i][j], f[i][j], f[i][j]);
            }
            fp[i] = fv[i];
            cp[i] = cv[i];
        }
        nmo_fenc fr, er;
        nmo_cenc cr;
        nmo_cenc_init(&cc, &cr);
        nmo_fenc_dotk(&fc, &fr, fp, k, n, rounds);
        nmo_cenc_dotk(&cc, &cr, cp, k, n, rounds);
        nmo_cenc_export(&cc, &er, &cr);
        nmo_cenc_clear(&cc, &cr);
        for (int i = 0; i < k; i++)
            for (int j = 0; j < n; j++) nmo_cenc_clear(&cc, &cv[i][j]);
        if (!(fr.flags & NMO_EF_UNC) && !(fr.lo == er.lo && fr.hi == er.hi && nmo_mag_same(fr.mag, er.mag))) {
            g_mismatch++;
            if (g_mismatch < 8)
                cr_log_error("dotk k=%d n=%d: fast [%a, %a] != certified [%a, %a]", k, n, fr.lo,
                             fr.hi, er.lo, er.hi);
        }
        g_lo = er.lo;
        g_hi = er.hi;
        g_nan_ok = (er.flags & NMO_EF_NAN) != 0;
        /* the exact value and the model bound, for the ratio report (binary64 is exact
         * enough for a ratio) */
        double A = 0;
        g_exact = 0;
        for (int j = 0; j < n; j++) {
            double pj = 1;
            for (int i = 0; i < k; i++) pj *= f[i][j];
            g_exact += pj;
            A += fabs(pj);
        }
        double u = fc.ua;
        g_bound = k == 1 ? (n - 1) * u * A : (nmo_fe_gamma(u, rounds) + n * u * (1 + nmo_fe_gamma(u, rounds))) * A;
        g_worst = 0;
        /* the ratio is reported where the model bound is the whole story: finite
         * enclosures and no underflow (kind 2 has wide exponents) */
        if (!isfinite(er.lo) || !isfinite(er.hi) || kind == 2) g_bound = 0;
        for (int q = 0; q < (k > 2 ? 6 : 1); q++) {
            item it[8];
            for (int j = 0; j < n; j++) {
                double col[4];
                for (int i = 0; i < k; i++) col[i] = f[i][j];
                if (k == 1) {
                    it[j].prod = 0;
                    it[j].v = col[0];
                } else {
                    it[j].prod = 1;
                    term_ops(col, k, nmo_gen_u64(s, 30 + (uint64_t)q, (uint64_t)j), &it[j].a, &it[j].b);
                }
            }
            g_evals = 0;
            enumerate(it, n);
        }
        if (g_worst > worst) worst = g_worst;
    }
    printf("dotk compute=acc=%s: %ld results checked, %ld outside, %ld fast!=cert, worst |error|/bound %.3f\n",
           nmo_fmt_name(cf), g_checked, g_bad, g_mismatch, worst);
    cr_expect_eq(g_bad, 0);
    cr_expect_eq(g_mismatch, 0);
    cr_expect_gt(worst, 0.2, "inputs never approach the bound (worst ratio %.3f)", worst);
    nmo_fctx_clear(&fc);
    nmo_cctx_clear(&cc);
}

Test(dotk, orders_fma_associations_bf16, .timeout = 600) { check_dotk(NMO_BF16, 240); }
Test(dotk, orders_fma_associations_fp16, .timeout = 600) { check_dotk(NMO_FP16, 240); }

/* ---------------------------------------------------------------- scale_shift */

/* y = x*a + (b - m*a) with the same a: every FMA choice of both products, at sampled
 * points of the enclosures, fp32 compute. */
static void check_scale_shift(int trials, int ftz)
{
    nmo_plan p;
    nmo_plan_default(&p, NMO_FP32);
    p.ftz = ftz;
    g_cf = NMO_FP32;
    g_ftz = ftz;
    nmo_fctx fc;
    nmo_cctx cc;
    nmo_fctx_init(&fc, &p, NULL);
    nmo_cctx_init(&cc, &p, NULL);
    g_bad = g_mismatch = g_checked = 0;
    for (int t = 0; t < trials; t++) {
        uint64_t s = (uint64_t)t * 6007 + 5;
        double lo[4], hi[4];
        nmo_fenc fv[4], fr, er;
        nmo_cenc cv[4], cr;
        for (int i = 0; i < 4; i++) {
            rand_iv(s, (uint64_t)i, &lo[i], &hi[i], t % 5 == 0);
            if (i == 2 && t % 3 == 0) { /* a mean near x: the cancelling case */
                lo[2] = rn(lo[0] * (1 + 1e-3 * nmo_gen_normal(s, 14, 0)));
                hi[2] = lo[2];
                for (int k = 0; k < (int)(nmo_gen_u64(s, 15, 0) % 40); k++) hi[2] = nmo_fmt_next_up(NMO_FP32, hi[2]);
            }
            nmo_cenc_init(&cc, &cv[i]);
            set_iv(&fv[i], &cv[i], lo[i], hi[i]);
        }
        nmo_cenc_init(&cc, &cr);
        nmo_fenc_scale_shift(&fc, &fr, &fv[0], &fv[1], &fv[2], &fv[3]);
        nmo_cenc_scale_shift(&cc, &cr, &cv[0], &cv[1], &cv[2], &cv[3]);
        nmo_cenc_export(&cc, &er, &cr);
        if (!(fr.flags & NMO_EF_UNC) && !(fr.lo == er.lo && fr.hi == er.hi && nmo_mag_same(fr.mag, er.mag))) {
            g_mismatch++;
            if (g_mismatch < 8)
                cr_log_error("scale_shift: fast [%a, %a] != certified [%a, %a]", fr.lo, fr.hi, er.lo, er.hi);
        }
        g_lo = er.lo;
        g_hi = er.hi;
        g_nan_ok = (er.flags & NMO_EF_NAN) != 0;
        for (int q = 0; q < 6; q++) {
            double v[4];
            for (int i = 0; i < 4; i++) v[i] = sample(s, (uint64_t)(50 + 8 * q + i), lo[i], hi[i]);
            if (ftz) /* DAZ: a subnormal input may read as zero */
                for (int i = 0; i < 4; i++)
                    if (fabs(v[i]) < 0x1p-126 && nmo_gen_u64(s, 16, (uint64_t)(q * 4 + i)) & 1) v[i] = 0;
            double x = v[0], a = v[1], m = v[2], b = v[3];
            double sh1 = rn(b - rn(m * a)), sh2 = rn_add(b, -(m * a)); /* rounded / fma */
            double shs[2] = {sh1, sh2};
            for (int k = 0; k < 2; k++) {
                expect_in("scale_shift (x*a rounded)", rn(rn(x * a) + shs[k]));
                expect_in("scale_shift (fma)", rn_add(x * a, shs[k]));
            }
        }
        for (int i = 0; i < 4; i++) nmo_cenc_clear(&cc, &cv[i]);
        nmo_cenc_clear(&cc, &cr);
    }
    printf("scale_shift%s: %ld implementation results checked, %ld outside, %ld fast!=cert\n",
           ftz ? " (ftz)" : "", g_checked, g_bad, g_mismatch);
    cr_expect_eq(g_bad, 0);
    cr_expect_eq(g_mismatch, 0);
    nmo_fctx_clear(&fc);
    nmo_cctx_clear(&cc);
    g_ftz = 0;
}

Test(scale_shift, fma_choices_fp32, .timeout = 600) { check_scale_shift(20000, 0); }
Test(scale_shift, fma_choices_fp32_ftz, .timeout = 600) { check_scale_shift(5000, 1); }

/* ---------------------------------------------------------------- dotk: the exact case */

/* Sums (k = 1) and dot products (k = 2, no inner rounding) of points on a coarse grid, in
 * a bf16 compute/acc plan: where sum |t| < 2^8 Q the enclosure is the exact sum (a
 * point) and every order and FMA choice must give exactly it; at and beyond the edge the
 * model bound applies. Both cases must occur, and every evaluation must be inside. */
static void check_dotk_exact(int trials)
{
    nmo_plan p;
    nmo_plan_default(&p, NMO_BF16);
    p.in = p.out = p.compute = p.acc = p.inter = NMO_BF16;
    g_cf = NMO_BF16;
    nmo_fctx fc;
    nmo_cctx cc;
    nmo_fctx_init(&fc, &p, NULL);
    nmo_cctx_init(&cc, &p, NULL);
    g_bad = g_mismatch = g_checked = 0;
    long n_exact = 0, n_model = 0;
    for (int t = 0; t < trials; t++) {
        uint64_t s = (uint64_t)t * 7717 + 19;
        int k = 1 + (int)(nmo_gen_u64(s, 1, 0) % 2);
        int n = 2 + (int)(nmo_gen_u64(s, 2, 0) % (k == 1 ? 5 : 4));
        int span = 1 + (int)(nmo_gen_u64(s, 3, 0) % 6); /* dynamic range of the grid */
        nmo_fenc fv[2][8];
        nmo_cenc cv[2][8];
        const nmo_fenc *fp[2];
        const nmo_cenc *cp[2];
        double f[2][8];
        for (int i = 0; i < k; i++) {
            for (int j = 0; j < n; j++) {
                uint64_t h = nmo_gen_u64(s, 10 + (uint64_t)i, (uint64_t)j);
                double m = (double)(1 + 2 * (h % 40));                /* odd, < 80 */
                double v = ldexp(m, (int)((h >> 8) % (uint64_t)span) - 3);
                f[i][j] = rn((h >> 20) & 1 ? -v : v);
                nmo_cenc_init(&cc, &cv[i][j]);
                set_iv(&fv[i][j], &cv[i][j], f[i][j], f[i][j]);
            }
            fp[i] = fv[i];
            cp[i] = cv[i];
        }
        nmo_fenc fr, er;
        nmo_cenc cr;
        nmo_cenc_init(&cc, &cr);
        nmo_fenc_dotk(&fc, &fr, fp, k, n, 0);
        nmo_cenc_dotk(&cc, &cr, cp, k, n, 0);
        nmo_cenc_export(&cc, &er, &cr);
        nmo_cenc_clear(&cc, &cr);
        for (int i = 0; i < k; i++)
            for (int j = 0; j < n; j++) nmo_cenc_clear(&cc, &cv[i][j]);
        if (!(fr.flags & NMO_EF_UNC) && !(fr.lo == er.lo && fr.hi == er.hi && nmo_mag_same(fr.mag, er.mag))) {
            g_mismatch++;
            if (g_mismatch < 8)
                cr_log_error("dotk exact k=%d n=%d: fast [%a, %a] != certified [%a, %a]", k, n, fr.lo, fr.hi,
                             er.lo, er.hi);
        }
        if (er.lo == er.hi) n_exact++;
        else n_model++;
        g_lo = er.lo;
        g_hi = er.hi;
        g_nan_ok = (er.flags & NMO_EF_NAN) != 0;
        g_bound = 0;
        item it[8];
        for (int j = 0; j < n; j++) {
            it[j].prod = k == 2;
            it[j].a = f[0][j];
            it[j].b = k == 2 ? f[1][j] : 1;
            it[j].v = f[0][j];
        }
        enumerate(it, n);
    }
    printf("dotk exact case (bf16): %ld results checked, %ld outside, %ld fast!=cert; %ld exact "
           "enclosures, %ld model ones\n",
           g_checked, g_bad, g_mismatch, n_exact, n_model);
    cr_expect_eq(g_bad, 0);
    cr_expect_eq(g_mismatch, 0);
    cr_expect_gt(n_exact, trials / 10, "the exact case is never taken");
    cr_expect_gt(n_model, trials / 10, "the model case is never taken");
    nmo_fctx_clear(&fc);
    nmo_cctx_clear(&cc);
}

Test(dotk, exact_case_bf16, .timeout = 600) { check_dotk_exact(2000); }
