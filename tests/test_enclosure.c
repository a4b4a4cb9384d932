/* Enclosure soundness of the engine primitives.
 *
 * 1. Exhaustive evaluation orders: for n <= 6 terms, every summation tree (every order
 *    of pairwise combination) and, for dot products, every choice of FMA contraction
 *    vs a rounded product, in a low-precision accumulator (bf16, fp16) where the model
 *    bounds are tight enough to be caught if wrong. Every result must lie in the fast
 *    and in the certified enclosure. The largest observed error over the bound is
 *    printed: a test whose inputs never come near the bound could not fail.
 * 2. Sampled points for every scalar primitive: every legitimate implementation's
 *    result on points of the input intervals lies in the enclosure, and the fast
 *    engine equals the certified one wherever it does not flag UNC. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/enc_cert.h"
#include "engine/enc_fast.h"
#include "numoracle/numoracle.h"

/* ---------------------------------------------------------------- exact rounding */

static nmo_fmt g_acc;

/* RN into g_acc of the exact value hi + lo (|lo| <= ulp(hi)/2, an exact pair). */
static double rn_pair(double hi, double lo)
{
    double d = nmo_fmt_round(g_acc, hi, NMO_RD, 0), u = nmo_fmt_round(g_acc, hi, NMO_RU, 0);
    if (d != u && hi == d + (u - d) / 2 && lo != 0) return lo > 0 ? u : d;
    return nmo_fmt_round(g_acc, hi, NMO_RNE, 0);
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

/* ---------------------------------------------------------------- exhaustive orders */

typedef struct {
    int prod;    /* 1: pending exact product a*b (not yet rounded) */
    double a, b; /* product factors */
    double v;    /* value (when !prod) */
} item;

static double g_lo, g_hi, g_exact, g_worst_ratio, g_bound;
static int g_nan_ok;
static long g_evals, g_outside;

static void check_result(double r)
{
    g_evals++;
    if (!(r >= g_lo && r <= g_hi) && !(r != r && g_nan_ok)) {
        g_outside++;
        if (g_outside < 5)
            cr_log_error("result %a outside enclosure [%a, %a] (exact %a)", r, g_lo, g_hi, g_exact);
    }
    if (g_bound > 0 && isfinite(r)) {
        double ratio = fabs(r - g_exact) / g_bound;
        if (ratio > g_worst_ratio) g_worst_ratio = ratio;
    }
}

static double item_value(const item *x) { return x->prod ? nmo_fmt_round(g_acc, x->a * x->b, NMO_RNE, 0) : x->v; }

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
            /* the options for combining it[i] and it[j] */
            double opts[3];
            int no = 0;
            const item *x = &save[i], *y = &save[j];
            if (x->prod && y->prod) {
                opts[no++] = rn_add(item_value(x), item_value(y));
                opts[no++] = rn_add(x->a * x->b, item_value(y)); /* fma(x, rounded y) */
                opts[no++] = rn_add(y->a * y->b, item_value(x));
            } else if (x->prod || y->prod) {
                const item *p = x->prod ? x : y, *v = x->prod ? y : x;
                opts[no++] = rn_add(p->a * p->b, v->v);      /* fma */
                opts[no++] = rn_add(item_value(p), v->v);    /* rounded product, add */
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
                m++;
                enumerate(nx, m);
            }
        }
}

static double rand_val(uint64_t seed, uint64_t i, int kind)
{
    double g = nmo_gen_normal(seed, 77, i);
    double u = nmo_gen_uniform01(seed, 78, i);
    switch (kind) {
    case 0: return g;                                   /* plain */
    case 1: return (i & 1 ? -1 : 1) * (1 + u / 64);     /* cancellation: +-(1 + small) */
    case 2: return ldexp(g, (int)(u * 24) - 12);         /* wide exponents */
    default: return 1 + u / 16;                          /* same sign: errors align */
    }
}

static void exhaustive(nmo_fmt acc, int dot, int nmax, int trials)
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
    long evals = 0;
    for (int n = 2; n <= nmax; n++)
        for (int t = 0; t < trials; t++) {
            int kind = t % 4;
            double x[8], y[8];
            item it[8];
            g_exact = 0;
            double sabs = 0;
            for (int i = 0; i < n; i++) {
                x[i] = nmo_fmt_round(acc, rand_val((uint64_t)t, (uint64_t)(2 * i + 100 * n), kind), NMO_RNE, 0);
                y[i] = dot ? nmo_fmt_round(acc, rand_val((uint64_t)t + 999, (uint64_t)(2 * i + 1), kind % 2 ? 0 : kind), NMO_RNE, 0) : 1.0;
                it[i].prod = dot;
                it[i].a = x[i];
                it[i].b = y[i];
                it[i].v = x[i];
                g_exact += x[i] * y[i]; /* exact enough for the ratio report only */
                sabs += fabs(x[i] * y[i]);
            }
            nmo_fenc ef;
            nmo_cenc ec;
            nmo_cenc_init(&cc, &ec);
            if (dot) {
                nmo_fenc_dot_d(&fc, &ef, x, y, n);
                nmo_cenc_dot_d(&cc, &ec, x, y, n);
                g_bound = n * fc.ua * sabs;
            } else {
                nmo_fenc xs[8];
                nmo_cenc xc[8];
                for (int i = 0; i < n; i++) {
                    nmo_fenc_set_d(&fc, &xs[i], x[i]);
                    nmo_cenc_init(&cc, &xc[i]);
                    nmo_cenc_set_d(&cc, &xc[i], x[i]);
                }
                nmo_fenc_sum(&fc, &ef, xs, n);
                nmo_cenc_sum(&cc, &ec, xc, n);
                for (int i = 0; i < n; i++) nmo_cenc_clear(&cc, &xc[i]);
                g_bound = (n - 1) * fc.ua * sabs;
            }
            nmo_fenc efc;
            nmo_cenc_export(&cc, &efc, &ec);
            nmo_cenc_clear(&cc, &ec);
            if (!(ef.flags & NMO_EF_UNC))
                cr_expect(ef.lo == efc.lo && ef.hi == efc.hi && nmo_mag_same(ef.mag, efc.mag), "fast [%a,%a] != certified [%a,%a]",
                          ef.lo, ef.hi, efc.lo, efc.hi);
            /* the certified enclosure is the definition; the fast one must agree or flag */
            g_lo = efc.lo;
            g_hi = efc.hi;
            g_nan_ok = (efc.flags & NMO_EF_NAN) != 0;
            g_worst_ratio = 0;
            g_evals = g_outside = 0;
            enumerate(it, n);
            cr_expect_eq(g_outside, 0, "%s %s n=%d trial %d: %ld of %ld orders outside",
                         nmo_fmt_name(acc), dot ? "dot" : "sum", n, t, g_outside, g_evals);
            if (g_worst_ratio > worst) worst = g_worst_ratio;
            evals += g_evals;
        }
    printf("exhaustive %s %s n<=%d: %ld evaluations, worst |error|/bound = %.3f\n",
           nmo_fmt_name(acc), dot ? "dot (FMA or not)" : "sum", nmax, evals, worst);
    /* the inputs must come near the bound, or the test could not catch a wrong bound */
    cr_expect_gt(worst, 0.2, "inputs never approach the bound (worst ratio %.3f)", worst);
    nmo_fctx_clear(&fc);
    nmo_cctx_clear(&cc);
}

Test(exhaustive, sum_orders_bf16, .timeout = 600) { exhaustive(NMO_BF16, 0, 6, 200); }
Test(exhaustive, sum_orders_fp16, .timeout = 600) { exhaustive(NMO_FP16, 0, 6, 200); }
Test(exhaustive, dot_orders_fma_bf16, .timeout = 600) { exhaustive(NMO_BF16, 1, 5, 120); }
Test(exhaustive, dot_orders_fma_fp16, .timeout = 600) { exhaustive(NMO_FP16, 1, 5, 120); }
Test(exhaustive, dot_orders_fma_bf16_n6, .timeout = 600) { exhaustive(NMO_BF16, 1, 6, 8); }

/* ---------------------------------------------------------------- sampled primitives */

static nmo_plan g_plan;
static nmo_fctx g_fc;
static nmo_cctx g_cc;

static void ctx_setup(nmo_fmt in)
{
    nmo_plan_default(&g_plan, in);
    nmo_fctx_init(&g_fc, &g_plan, NULL);
    nmo_cctx_init(&g_cc, &g_plan, NULL);
}

static void ctx_done(void)
{
    nmo_fctx_clear(&g_fc);
    nmo_cctx_clear(&g_cc);
}

static double rn32(double x) { return (double)(float)x; }

/* a random fp32 interval: a point, or a few ulps wide, sometimes straddling 0 */
static void rand_iv(uint64_t s, uint64_t i, double *lo, double *hi, int positive)
{
    double g = nmo_gen_normal(s, 5, i) * ldexp(1, (int)(nmo_gen_u64(s, 6, i) % 9) - 4);
    if (positive) g = fabs(g) + 1e-3;
    double a = rn32(g);
    int w = (int)(nmo_gen_u64(s, 7, i) % 4); /* 0: point */
    double b = a;
    for (int k = 0; k < w * 3; k++) b = nmo_fmt_next_up(NMO_FP32, b);
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
    for (int j = 0; j < steps && v < hi; j++) v = nmo_fmt_next_up(NMO_FP32, v);
    return v;
}

/* An operand interval; its error scale is |.| times a factor 1..8 chosen from the
 * endpoints (both engines get the same one). */
static void set_iv(nmo_fenc *f, nmo_cenc *c, double lo, double hi)
{
    double m = nmo_mag_abs(lo, hi) * (1 + (double)((uint64_t)fabs(lo * 977 + hi * 131) % 8));
    f->lo = lo, f->hi = hi, f->flags = 0, f->mag = m;
    mpfr_set_d(c->lo, lo, MPFR_RNDN);
    mpfr_set_d(c->hi, hi, MPFR_RNDN);
    c->flags = 0, c->mag = m;
}

/* Results of an ulp:n function at x with exact value y (mpfr): the extreme lattice
 * values within n ulps of y (ulp of y's binade), and RN(y) for n = 0. */
static void fn_extremes(mpfr_srcptr y, int n, double *lo, double *hi)
{
    double yd = mpfr_get_d(y, MPFR_RNDZ);
    if (n == 0) {
        *lo = *hi = nmo_fmt_round_mpfr(NMO_FP32, y, NMO_RNE, 0);
        return;
    }
    double u = nmo_fmt_ulp(NMO_FP32, yd);
    mpfr_t t;
    mpfr_init2(t, 256);
    mpfr_sub_d(t, y, n * u, MPFR_RNDN);
    *lo = nmo_fmt_round_mpfr(NMO_FP32, t, NMO_RU, 0);
    mpfr_add_d(t, y, n * u, MPFR_RNDN);
    *hi = nmo_fmt_round_mpfr(NMO_FP32, t, NMO_RD, 0);
    mpfr_clear(t);
}

typedef enum { P_ADD, P_MUL, P_DIV, P_FMA, P_SQRT, P_RSQRT, P_EXP, P_LOG, P_MUL3, P_DIVSI, P_TANH, P_ERF, P_SIGMOID, P_COUNT } prim;
static const char *prim_name[P_COUNT] = {"add", "mul", "div", "fma", "sqrt", "rsqrt", "exp", "log", "mul3", "div_si", "tanh", "erf", "sigmoid"};

static long g_bad, g_mismatch, g_checked, g_alias;
static const int prim_arity[P_COUNT] = {2, 2, 2, 3, 1, 1, 1, 1, 3, 1, 1, 1, 1};

static void fapply(prim p, nmo_fenc *r, const nmo_fenc *a, const nmo_fenc *b, const nmo_fenc *c, int64_t n)
{
    switch (p) {
    case P_ADD: nmo_fenc_add(&g_fc, r, a, b); break;
    case P_MUL: nmo_fenc_mul(&g_fc, r, a, b); break;
    case P_DIV: nmo_fenc_div(&g_fc, r, a, b); break;
    case P_FMA: nmo_fenc_fma(&g_fc, r, a, b, c); break;
    case P_SQRT: nmo_fenc_sqrt(&g_fc, r, a); break;
    case P_RSQRT: nmo_fenc_rsqrt(&g_fc, r, a); break;
    case P_EXP: nmo_fenc_exp(&g_fc, r, a); break;
    case P_LOG: nmo_fenc_log(&g_fc, r, a); break;
    case P_MUL3: nmo_fenc_mul3(&g_fc, r, a, b, c); break;
    case P_DIVSI: nmo_fenc_div_si(&g_fc, r, a, n); break;
    case P_TANH: nmo_fenc_tanh(&g_fc, r, a); break;
    case P_ERF: nmo_fenc_erf(&g_fc, r, a); break;
    case P_SIGMOID: nmo_fenc_sigmoid(&g_fc, r, a); break;
    default: break;
    }
}

static void capply(prim p, nmo_cenc *r, const nmo_cenc *a, const nmo_cenc *b, const nmo_cenc *c, int64_t n)
{
    switch (p) {
    case P_ADD: nmo_cenc_add(&g_cc, r, a, b); break;
    case P_MUL: nmo_cenc_mul(&g_cc, r, a, b); break;
    case P_DIV: nmo_cenc_div(&g_cc, r, a, b); break;
    case P_FMA: nmo_cenc_fma(&g_cc, r, a, b, c); break;
    case P_SQRT: nmo_cenc_sqrt(&g_cc, r, a); break;
    case P_RSQRT: nmo_cenc_rsqrt(&g_cc, r, a); break;
    case P_EXP: nmo_cenc_exp(&g_cc, r, a); break;
    case P_LOG: nmo_cenc_log(&g_cc, r, a); break;
    case P_MUL3: nmo_cenc_mul3(&g_cc, r, a, b, c); break;
    case P_DIVSI: nmo_cenc_div_si(&g_cc, r, a, n); break;
    case P_TANH: nmo_cenc_tanh(&g_cc, r, a); break;
    case P_ERF: nmo_cenc_erf(&g_cc, r, a); break;
    case P_SIGMOID: nmo_cenc_sigmoid(&g_cc, r, a); break;
    default: break;
    }
}

static void expect_in(prim p, double v, const nmo_fenc *e, double a, double b, double c)
{
    g_checked++;
    if (!(v >= e->lo && v <= e->hi)) {
        g_bad++;
        if (g_bad < 8)
            cr_log_error("%s: value %a outside [%a, %a] at (%a, %a, %a)", prim_name[p], v, e->lo, e->hi, a, b, c);
    }
}

static void check_prim(prim p, int trials)
{
    for (int t = 0; t < trials; t++) {
        uint64_t s = (uint64_t)t * 31 + (uint64_t)p;
        int pos = p == P_SQRT || p == P_RSQRT || p == P_LOG;
        double al, ah, bl, bh, cl, ch;
        rand_iv(s, 1, &al, &ah, pos);
        rand_iv(s, 2, &bl, &bh, 0);
        rand_iv(s, 3, &cl, &ch, 0);
        if (p == P_DIV && bl <= 0 && bh >= 0) bl = bh = 1.5;
        /* every 4th trial: an interval whose results cross a power of two, where an ulp:n
         * result's lower bound is not at the lower end (enc_fast.h "n-ulp results") */
        if (t % 4 == 3) {
            int j = (int)(nmo_gen_u64(s, 12, 0) % 7) - 3;
            double c0 = NAN;
            switch (p) {
            case P_DIV: c0 = ldexp(1.0, j); bl = bh = (t / 4) % 2 ? 1.0 : -1.0; break;
            case P_DIVSI: c0 = ldexp(1.0, j) * (double)(1 + (int64_t)(nmo_gen_u64(s, 11, 0) % 5000)); break;
            case P_SQRT: c0 = ldexp(1.0, 2 * j); break;
            case P_EXP: c0 = rn32(j * 0.6931471805599453); break;
            case P_LOG: c0 = rn32(exp(ldexp(1.0, j < 0 ? -j : j) * ((t / 4) % 2 ? 1 : -1))); break;
            case P_TANH: c0 = rn32(0.5493061443340549); break;
            case P_SIGMOID: c0 = rn32(-1.0986122886681098); break;
            case P_RSQRT: c0 = ldexp(1.0, 2 * j); break;
            default: break;
            }
            if (c0 == c0) {
                if (p == P_DIV && bl < 0) c0 = -c0;
                al = ah = c0;
                for (int k = 0; k < 4; k++) al = nmo_fmt_next_down(NMO_FP32, al), ah = nmo_fmt_next_up(NMO_FP32, ah);
            }
        }
        nmo_fenc fa, fb, fcv, fr;
        nmo_cenc ca, cb, ccv, cr;
        nmo_cenc_init(&g_cc, &ca), nmo_cenc_init(&g_cc, &cb), nmo_cenc_init(&g_cc, &ccv), nmo_cenc_init(&g_cc, &cr);
        set_iv(&fa, &ca, al, ah);
        set_iv(&fb, &cb, bl, bh);
        set_iv(&fcv, &ccv, cl, ch);
        int64_t n = 1 + (int64_t)(nmo_gen_u64(s, 11, 0) % 5000);
        fapply(p, &fr, &fa, &fb, &fcv, n);
        capply(p, &cr, &ca, &cb, &ccv, n);
        nmo_fenc er;
        nmo_cenc_export(&g_cc, &er, &cr);
        /* aliasing: the result written over each operand in turn gives the same result */
        for (int k = 0; k < prim_arity[p]; k++) {
            nmo_fenc f3[3] = {fa, fb, fcv}, fo;
            fapply(p, &f3[k], &f3[0], &f3[1], &f3[2], n);
            fo = f3[k];
            nmo_cenc c3[3], *cs[3] = {&ca, &cb, &ccv};
            for (int q = 0; q < 3; q++) nmo_cenc_init(&g_cc, &c3[q]), nmo_cenc_set(&g_cc, &c3[q], cs[q]);
            capply(p, &c3[k], &c3[0], &c3[1], &c3[2], n);
            nmo_fenc co;
            nmo_cenc_export(&g_cc, &co, &c3[k]);
            for (int q = 0; q < 3; q++) nmo_cenc_clear(&g_cc, &c3[q]);
            int fsame = nmo_mag_same(fo.lo, fr.lo) && nmo_mag_same(fo.hi, fr.hi) && fo.flags == fr.flags &&
                        nmo_mag_same(fo.mag, fr.mag);
            int csame = nmo_mag_same(co.lo, er.lo) && nmo_mag_same(co.hi, er.hi) && co.flags == er.flags &&
                        nmo_mag_same(co.mag, er.mag);
            if (!fsame || !csame) {
                g_alias++;
                if (g_alias < 8)
                    cr_log_error("%s: result over operand %d differs (%s engine)", prim_name[p], k,
                                 fsame ? "certified" : "fast");
            }
        }
        /* the enclosure and the error scale agree (fast + escalation == certified) */
        if (!(fr.flags & NMO_EF_UNC) &&
            !(fr.lo == er.lo && fr.hi == er.hi && nmo_mag_same(fr.mag, er.mag))) {
            g_mismatch++;
            if (g_mismatch < 8)
                cr_log_error("%s: fast [%a, %a] mag %a != certified [%a, %a] mag %a (a=[%a,%a] b=[%a,%a])",
                             prim_name[p], fr.lo, fr.hi, fr.mag, er.lo, er.hi, er.mag, al, ah, bl, bh);
        }
        /* every implementation at sampled points of the inputs */
        for (int k = 0; k < 6; k++) {
            double a = sample(s, 20 + (uint64_t)k, al, ah), b = sample(s, 40 + (uint64_t)k, bl, bh),
                   c = sample(s, 60 + (uint64_t)k, cl, ch);
            mpfr_t y, ma;
            mpfr_init2(y, 256);
            mpfr_init2(ma, 64);
            mpfr_set_d(ma, a, MPFR_RNDN);
            double lo, hi;
            switch (p) {
            case P_ADD: expect_in(p, rn32(a + b), &er, a, b, c); break;
            case P_MUL: expect_in(p, rn32(a * b), &er, a, b, c); break;
            case P_DIV: {
                mpfr_t mb;
                mpfr_init2(mb, 64);
                mpfr_set_d(mb, b, MPFR_RNDN);
                mpfr_div(y, ma, mb, MPFR_RNDZ);
                mpfr_clear(mb);
                fn_extremes(y, nmo_fe_div_ulps(&g_plan, a == 1), &lo, &hi);
                expect_in(p, lo, &er, a, b, c);
                expect_in(p, hi, &er, a, b, c);
                break;
            }
            case P_FMA: {
                double e2, s2 = two_sum(a * b, c, &e2);
                g_acc = NMO_FP32;
                expect_in(p, rn_pair(s2, e2), &er, a, b, c);            /* contracted */
                expect_in(p, rn32(rn32(a * b) + c), &er, a, b, c);     /* not contracted */
                break;
            }
            case P_SQRT:
                mpfr_sqrt(y, ma, MPFR_RNDZ);
                fn_extremes(y, g_plan.fn_ulps[NMO_FN_SQRT], &lo, &hi);
                expect_in(p, lo < 0 ? 0 : lo, &er, a, b, c);
                expect_in(p, hi, &er, a, b, c);
                break;
            case P_RSQRT: {
                /* 1/sqrt(x) in two steps of plan accuracy: both sqrt extremes, then both
                 * reciprocal extremes of each */
                double sx[2];
                mpfr_sqrt(y, ma, MPFR_RNDZ);
                fn_extremes(y, g_plan.fn_ulps[NMO_FN_SQRT], &sx[0], &sx[1]);
                for (int q = 0; q < 2; q++) {
                    if (!(sx[q] > 0)) continue;
                    double rl, rh;
                    mpfr_set_d(y, sx[q], MPFR_RNDN);
                    mpfr_ui_div(y, 1, y, MPFR_RNDZ);
                    fn_extremes(y, nmo_fe_div_ulps(&g_plan, 1), &rl, &rh);
                    expect_in(p, rl, &er, a, b, c);
                    expect_in(p, rh, &er, a, b, c);
                }
            }
                mpfr_rec_sqrt(y, ma, MPFR_RNDZ);
                fn_extremes(y, g_plan.fn_ulps[NMO_FN_RSQRT], &lo, &hi);
                expect_in(p, lo, &er, a, b, c);
                expect_in(p, hi, &er, a, b, c);
                break;
            case P_EXP:
                mpfr_exp(y, ma, MPFR_RNDZ);
                fn_extremes(y, nmo_plan_exp_ulps(&g_plan, fabs(a)), &lo, &hi);
                expect_in(p, lo < 0 ? 0 : lo, &er, a, b, c);
                expect_in(p, hi, &er, a, b, c);
                break;
            case P_LOG:
                mpfr_log(y, ma, MPFR_RNDZ);
                fn_extremes(y, g_plan.fn_ulps[NMO_FN_LOG], &lo, &hi);
                expect_in(p, lo, &er, a, b, c);
                expect_in(p, hi, &er, a, b, c);
                break;
            case P_MUL3: /* every association, two roundings each */
                expect_in(p, rn32(rn32(a * b) * c), &er, a, b, c);
                expect_in(p, rn32(a * rn32(b * c)), &er, a, b, c);
                expect_in(p, rn32(rn32(a * c) * b), &er, a, b, c);
                break;
            case P_TANH:
            case P_ERF:
            case P_SIGMOID: {
                nmo_fn fid = p == P_TANH ? NMO_FN_TANH : p == P_ERF ? NMO_FN_ERF : NMO_FN_SIGMOID;
                /* toward zero keeps y in its true binade (erf(-20) is -1 + 1e-190) */
                if (p == P_TANH) mpfr_tanh(y, ma, MPFR_RNDZ);
                else if (p == P_ERF) mpfr_erf(y, ma, MPFR_RNDZ);
                else { mpfr_neg(y, ma, MPFR_RNDN); mpfr_exp(y, y, MPFR_RNDU); mpfr_add_ui(y, y, 1, MPFR_RNDU); mpfr_ui_div(y, 1, y, MPFR_RNDZ); }
                fn_extremes(y, g_plan.fn_ulps[fid], &lo, &hi);
                double bot = p == P_SIGMOID ? 0 : -1;
                /* a plan whose sigmoid is the formula alone (fn=triton) claims no library
                 * sigmoid of fn_ulps[SIGMOID] */
                if (p != P_SIGMOID || !nmo_plan_sigmoid_composed(&g_plan)) {
                    expect_in(p, lo < bot ? bot : lo, &er, a, b, c);
                    expect_in(p, hi > 1 ? 1 : hi, &er, a, b, c);
                }
                if (p == P_SIGMOID) {
                    /* the usual kernel formula 1/RN(1 + e): e = CUDA expf within 1 ulp, and
                     * e at both ends of the plan's exp accuracy (below the overflow edge of
                     * the plan's exp, nmo_plan_exp_inf_from: above it e = inf and 1/inf = 0) */
                    mpfr_t ex;
                    mpfr_init2(ex, 256);
                    mpfr_set_d(ex, -a, MPFR_RNDN);
                    mpfr_exp(ex, ex, MPFR_RNDN);
                    double el, eh, ev[3];
                    fn_extremes(ex, nmo_plan_exp_ulps(&g_plan, fabs(a)), &el, &eh);
                    ev[0] = rn32(exp(-a)), ev[1] = el, ev[2] = eh;
                    if (-a >= nmo_plan_exp_inf_from(&g_plan)) ev[0] = ev[1] = ev[2] = INFINITY;
                    else if (nmo_plan_exp_inf_from(&g_plan) < INFINITY) ev[2] = fmin(eh, FLT_MAX);
                    for (int k = 0; k < 3; k++) {
                        double dd = rn32(1.0 + ev[k]), rl, rh;
                        if (isinf(dd)) { expect_in(p, 0.0, &er, a, b, c); continue; }
                        mpfr_set_d(y, dd, MPFR_RNDN);
                        mpfr_ui_div(y, 1, y, MPFR_RNDZ);
                        fn_extremes(y, nmo_fe_div_ulps(&g_plan, 1), &rl, &rh);
                        expect_in(p, rl, &er, a, b, c);
                        expect_in(p, rh, &er, a, b, c);
                    }
                    mpfr_clear(ex);
                }
                break;
            }
            case P_DIVSI: {
                double dn = rn32((double)n), rl, rh;
                mpfr_div_d(y, ma, dn, MPFR_RNDZ);
                fn_extremes(y, nmo_fe_div_ulps(&g_plan, 0), &lo, &hi);
                expect_in(p, lo, &er, a, b, c);
                expect_in(p, hi, &er, a, b, c);
                mpfr_set_d(y, dn, MPFR_RNDN);
                mpfr_ui_div(y, 1, y, MPFR_RNDZ);
                fn_extremes(y, nmo_fe_div_ulps(&g_plan, 1), &rl, &rh);
                expect_in(p, rn32(a * rl), &er, a, b, c);
                expect_in(p, rn32(a * rh), &er, a, b, c);
                break;
            }
            default: break;
            }
            mpfr_clear(y);
            mpfr_clear(ma);
        }
        nmo_cenc_clear(&g_cc, &ca), nmo_cenc_clear(&g_cc, &cb), nmo_cenc_clear(&g_cc, &ccv), nmo_cenc_clear(&g_cc, &cr);
    }
}

static void run_prims(nmo_fmt dt, const char *fn)
{
    ctx_setup(dt);
    if (fn) {
        nmo_plan_set_fn(&g_plan, fn, NULL);
        nmo_fctx_clear(&g_fc);
        nmo_cctx_clear(&g_cc);
        nmo_fctx_init(&g_fc, &g_plan, NULL);
        nmo_cctx_init(&g_cc, &g_plan, NULL);
    }
    g_bad = g_mismatch = g_checked = g_alias = 0;
    for (int p = 0; p < P_COUNT; p++) check_prim((prim)p, 3000);
    printf("primitives %s fn=%s: %ld implementation results checked, %ld outside, %ld fast!=cert, "
           "%ld aliased results differ\n",
           nmo_fmt_name(dt), fn ? fn : "default", g_checked, g_bad, g_mismatch, g_alias);
    cr_expect_eq(g_bad, 0);
    cr_expect_eq(g_mismatch, 0);
    cr_expect_eq(g_alias, 0);
    ctx_done();
}

/* Aliasing of the scalar primitives check_prim does not sample (Arb's rule: a result may
 * be written over any operand): for each primitive family and each operand k, the result
 * written over operand k equals the result into a fresh variable, bit for bit (bounds,
 * flags, error scale), in both engines. Array primitives (enc_sum, the dot products, the
 * row kernels) write a separate output by contract (refs/README.md) and are not aliased. */
typedef struct {
    const char *name;
    int arity;
    void (*f)(nmo_fenc *r, nmo_fenc *o);
    void (*c)(nmo_cenc *r, nmo_cenc *o);
} alias_prim;

static void fa_set(nmo_fenc *r, nmo_fenc *o) { nmo_fenc_set(&g_fc, r, &o[0]); }
static void ca_set(nmo_cenc *r, nmo_cenc *o) { nmo_cenc_set(&g_cc, r, &o[0]); }
static void fa_neg(nmo_fenc *r, nmo_fenc *o) { nmo_fenc_neg(&g_fc, r, &o[0]); }
static void ca_neg(nmo_cenc *r, nmo_cenc *o) { nmo_cenc_neg(&g_cc, r, &o[0]); }
static void fa_sub(nmo_fenc *r, nmo_fenc *o) { nmo_fenc_sub(&g_fc, r, &o[0], &o[1]); }
static void ca_sub(nmo_cenc *r, nmo_cenc *o) { nmo_cenc_sub(&g_cc, r, &o[0], &o[1]); }
static void fa_max(nmo_fenc *r, nmo_fenc *o) { nmo_fenc_max(&g_fc, r, &o[0], &o[1]); }
static void ca_max(nmo_cenc *r, nmo_cenc *o) { nmo_cenc_max(&g_cc, r, &o[0], &o[1]); }
static void fa_min(nmo_fenc *r, nmo_fenc *o) { nmo_fenc_min(&g_fc, r, &o[0], &o[1]); }
static void ca_min(nmo_cenc *r, nmo_cenc *o) { nmo_cenc_min(&g_cc, r, &o[0], &o[1]); }
static void fa_hull(nmo_fenc *r, nmo_fenc *o) { nmo_fenc_hull(&g_fc, r, &o[0], &o[1]); }
static void ca_hull(nmo_cenc *r, nmo_cenc *o) { nmo_cenc_hull(&g_cc, r, &o[0], &o[1]); }
static void fa_rbf16(nmo_fenc *r, nmo_fenc *o) { nmo_fenc_round(&g_fc, r, &o[0], NMO_BF16, NMO_RNE, 0); }
static void ca_rbf16(nmo_cenc *r, nmo_cenc *o) { nmo_cenc_round(&g_cc, r, &o[0], NMO_BF16, NMO_RNE, 0); }
static void fa_rfp16(nmo_fenc *r, nmo_fenc *o) { nmo_fenc_round(&g_fc, r, &o[0], NMO_FP16, NMO_RZ, 0); }
static void ca_rfp16(nmo_cenc *r, nmo_cenc *o) { nmo_cenc_round(&g_cc, r, &o[0], NMO_FP16, NMO_RZ, 0); }
static void fa_widen(nmo_fenc *r, nmo_fenc *o) { nmo_fenc_widen(&g_fc, r, &o[0], 0x1p-10, 0x1p-20); }
static void ca_widen(nmo_cenc *r, nmo_cenc *o) { nmo_cenc_widen(&g_cc, r, &o[0], 0x1p-10, 0x1p-20); }
static void fa_sshift(nmo_fenc *r, nmo_fenc *o) { nmo_fenc_scale_shift(&g_fc, r, &o[0], &o[1], &o[2], &o[3]); }
static void ca_sshift(nmo_cenc *r, nmo_cenc *o) { nmo_cenc_scale_shift(&g_cc, r, &o[0], &o[1], &o[2], &o[3]); }

static const alias_prim alias_prims[] = {
    {"set", 1, fa_set, ca_set},       {"neg", 1, fa_neg, ca_neg},          {"sub", 2, fa_sub, ca_sub},
    {"max", 2, fa_max, ca_max},       {"min", 2, fa_min, ca_min},          {"hull", 2, fa_hull, ca_hull},
    {"round bf16 rne", 1, fa_rbf16, ca_rbf16}, {"round fp16 rz", 1, fa_rfp16, ca_rfp16},
    {"widen", 1, fa_widen, ca_widen}, {"scale_shift", 4, fa_sshift, ca_sshift},
};

static int fenc_same(const nmo_fenc *x, const nmo_fenc *y)
{
    return nmo_mag_same(x->lo, y->lo) && nmo_mag_same(x->hi, y->hi) && x->flags == y->flags &&
           nmo_mag_same(x->mag, y->mag);
}

Test(primitives, aliasing_other_scalar_primitives)
{
    ctx_setup(NMO_FP32);
    long checked = 0, differ = 0;
    for (size_t p = 0; p < sizeof alias_prims / sizeof alias_prims[0]; p++) {
        const alias_prim *ap = &alias_prims[p];
        for (int t = 0; t < 500; t++) {
            uint64_t s = (uint64_t)t * 37 + 1000 * (uint64_t)(p + 1);
            nmo_fenc fo[4], fr;
            nmo_cenc co[4], cr;
            nmo_cenc_init(&g_cc, &cr);
            for (int q = 0; q < 4; q++) {
                double lo, hi;
                rand_iv(s, (uint64_t)q + 1, &lo, &hi, 0);
                nmo_cenc_init(&g_cc, &co[q]);
                set_iv(&fo[q], &co[q], lo, hi);
            }
            ap->f(&fr, fo);
            ap->c(&cr, co);
            nmo_fenc er;
            nmo_cenc_export(&g_cc, &er, &cr);
            for (int k = 0; k < ap->arity; k++) {
                nmo_fenc f4[4];
                memcpy(f4, fo, sizeof f4);
                ap->f(&f4[k], f4);
                nmo_cenc c4[4];
                for (int q = 0; q < 4; q++) nmo_cenc_init(&g_cc, &c4[q]), nmo_cenc_set(&g_cc, &c4[q], &co[q]);
                ap->c(&c4[k], c4);
                nmo_fenc ce;
                nmo_cenc_export(&g_cc, &ce, &c4[k]);
                for (int q = 0; q < 4; q++) nmo_cenc_clear(&g_cc, &c4[q]);
                checked++;
                if (!fenc_same(&f4[k], &fr) || !fenc_same(&ce, &er)) {
                    differ++;
                    if (differ < 8)
                        cr_log_error("%s: result over operand %d differs (%s engine)", ap->name, k,
                                     fenc_same(&f4[k], &fr) ? "certified" : "fast");
                }
            }
            for (int q = 0; q < 4; q++) nmo_cenc_clear(&g_cc, &co[q]);
            nmo_cenc_clear(&g_cc, &cr);
        }
    }
    printf("aliasing (set, neg, sub, max, min, hull, round, widen, scale_shift): %ld aliased results, %ld differ\n",
           checked, differ);
    cr_expect_gt(checked, 0);
    cr_expect_eq(differ, 0);
    ctx_done();
}

Test(primitives, sampled_fp32_default_fn) { run_prims(NMO_FP32, NULL); }
Test(primitives, sampled_fp32_correctly_rounded_fn) { run_prims(NMO_FP32, "cr"); }
Test(primitives, sampled_fp32_ulp4_fn) { run_prims(NMO_FP32, "ulp:4"); }
/* approximate sqrt, division and reciprocal (sqrt.approx, div.full, __fdividef) */
Test(primitives, sampled_fp32_triton_fn) { run_prims(NMO_FP32, "triton"); }
Test(primitives, sampled_fp32_fast_fn) { run_prims(NMO_FP32, "fast"); }
