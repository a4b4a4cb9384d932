/* Reduction geometry: sum=tree:D and sum=blocked:B[:D[:P]] (oracle/sum_geom.c, issue 17).
 *
 *  - the plan text: parse, canonical form, round trip, bad values;
 *  - every evaluation tree of depth <= D of n <= 7 terms (every association of every
 *    subset split, FMA or not for dot products), evaluated in the accumulator format, lies
 *    inside both engines' enclosures, and the engines agree;
 *  - sampled blocked evaluations (random runs, trees of depth <= D, chunk partials in a
 *    random order) of thousands of terms lie inside, fp32 and bf16 accumulators;
 *  - negative controls: an order deeper than declared lies OUTSIDE the enclosure of the
 *    declared geometry (the model is not vacuous) — for the primitive, and for a whole
 *    operator (rms_norm's sequential candidate declared as a depth-13 tree FAILs);
 *  - operators: the correct CPU candidates of rms_norm, layer_norm, softmax, kl_div, jsd,
 *    cross_entropy and matmul, each under the geometry of its reduction (a table below,
 *    derived from the emulation in refs/cand/cand_util.h), PASS (no element FAILs) over
 *    families x seeds, and the width table (median, p99 of R in output ulps) against any;
 *  - the issue's three CPU mutants FAIL under the geometry while their correct versions
 *    PASS: eps 10x in an fp32 rms_norm, TF32-rounded products in an fp32 matmul, a
 *    weight-gradient reduction whose row-block partials are stored in bf16. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "engine/enc_cert.h"
#include "engine/enc_fast.h"

/* ---- plan text ---------------------------------------------------------------------- */

static void plan_of(nmo_plan *p, nmo_fmt dt, const char *text)
{
    nmo_err err = {{0}};
    nmo_plan_default(p, dt);
    cr_assert_eq(nmo_plan_parse(p, text, &err), NMO_OK, "%s: %s", text, err.msg);
}

Test(sum_geom, plan_text)
{
    static const struct {
        const char *in, *canon;
        int b, d;
        long long p;
    } ok[] = {
        {"sum=tree:5", "tree:5", 1, 5, 1},
        {"sum=tree:0", "tree:0", 1, 0, 1},
        {"sum=blocked:16", "blocked:16", 16, 0, 0},
        {"sum=blocked:16:8", "blocked:16:8", 16, 8, 1},
        {"sum=blocked:1:8", "tree:8", 1, 8, 1},
        {"sum=blocked:16:8:any", "blocked:16:8:any", 16, 8, 0},
        {"sum=blocked:16:0:any", "blocked:16", 16, 0, 0},
        {"sum=blocked:16:8:4", "blocked:16:8:4", 16, 8, 4},
        {"sum=blocked:1:0:1", "tree:0", 1, 0, 1},
        /* the longest text: the plan's text buffers hold it */
        {"sum=blocked:1073741824:62:1099511627776", "blocked:1073741824:62:1099511627776", 1 << 30, 62,
         1LL << 40},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        nmo_plan p, q;
        plan_of(&p, NMO_FP32, ok[i].in);
        cr_expect_eq(p.sum, NMO_SUM_GEOM, "%s", ok[i].in);
        cr_expect_eq(p.geo_b, ok[i].b, "%s: b", ok[i].in);
        cr_expect_eq(p.geo_d, ok[i].d, "%s: d", ok[i].in);
        cr_expect_eq(p.geo_p, ok[i].p, "%s: p", ok[i].in);
        char buf[512], want[64];
        nmo_plan_to_string(&p, buf, sizeof buf);
        snprintf(want, sizeof want, " sum=%s ", ok[i].canon);
        cr_expect(strstr(buf, want), "%s: text '%s'", ok[i].in, buf);
        plan_of(&q, NMO_FP32, buf); /* round trip */
        cr_expect(q.sum == p.sum && q.geo_b == p.geo_b && q.geo_d == p.geo_d && q.geo_p == p.geo_p,
                  "%s: round trip of '%s'", ok[i].in, buf);
        /* back to any clears the geometry */
        cr_assert_eq(nmo_plan_parse(&q, "sum=any", NULL), NMO_OK);
        cr_expect(q.sum == NMO_SUM_ANY && q.geo_b == 0 && q.geo_d == 0 && q.geo_p == 0, "%s", ok[i].in);
    }
    /* relative run lengths: geo_t threads, geo_b the slack */
    static const struct {
        const char *in, *canon;
        int t, b, d;
        long long p;
    } rel[] = {
        {"sum=blocked:n/256:8", "blocked:n/256:8", 256, 0, 8, 1},
        {"sum=blocked:n/256+0:8", "blocked:n/256:8", 256, 0, 8, 1},
        {"sum=blocked:n/32+12:9:65535", "blocked:n/32+12:9:65535", 32, 12, 9, 65535},
        {"sum=blocked:n/4:0:4", "blocked:n/4:0:4", 4, 0, 0, 4},
        {"sum=blocked:n/4", "blocked:n/4", 4, 0, 0, 0},
        {"sum=blocked:n/32+3:5:any", "blocked:n/32+3:5:any", 32, 3, 5, 0},
        {"sum=blocked:n/1:0", "blocked:n/1:0", 1, 0, 0, 1},
        {"sum=blocked:n/1073741824+1073741824:62:1099511627776", "blocked:n/1073741824+1073741824:62:1099511627776",
         1 << 30, 1 << 30, 62, 1LL << 40},
    };
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        nmo_plan p, q;
        plan_of(&p, NMO_FP32, rel[i].in);
        cr_expect(p.sum == NMO_SUM_GEOM && p.geo_t == rel[i].t && p.geo_b == rel[i].b && p.geo_d == rel[i].d &&
                      p.geo_p == rel[i].p,
                  "%s: t %d b %d d %d p %lld", rel[i].in, p.geo_t, p.geo_b, p.geo_d, (long long)p.geo_p);
        char buf[512], want[80];
        nmo_plan_to_string(&p, buf, sizeof buf);
        snprintf(want, sizeof want, " sum=%s ", rel[i].canon);
        cr_expect(strstr(buf, want), "%s: text '%s'", rel[i].in, buf);
        plan_of(&q, NMO_FP32, buf);
        cr_expect(q.geo_t == p.geo_t && q.geo_b == p.geo_b && q.geo_d == p.geo_d && q.geo_p == p.geo_p,
                  "%s: round trip of '%s'", rel[i].in, buf);
        cr_expect_eq(nmo_plan_geo_capacity(&p), INT64_MAX, "%s: every n fits", rel[i].in);
        cr_assert_eq(nmo_plan_parse(&q, "sum=tree:4", NULL), NMO_OK);
        cr_expect_eq(q.geo_t, 0, "%s: tree:4 after it keeps no relative run", rel[i].in);
    }
    static const char *bad[] = {"sum=blocked:n/0", "sum=blocked:n/", "sum=blocked:n/4+", "sum=blocked:n/+4",
                                "sum=blocked:n/x", "sum=blocked:n/4+x", "sum=blocked:n/1024:2:4",
                                "sum=blocked:n/257:8", "sum=blocked:n/4:0:3", "sum=tree:n/4", "sum=blocked:n4",
                                "sum=tree:", "sum=tree:63", "sum=tree:-1", "sum=tree:3:1", "sum=blocked:",
                                "sum=blocked:0", "sum=blocked:4:", "sum=blocked:4:2:0", "sum=blocked:4:2:x",
                                "sum=blocked:4:2:3:1", "sum=blocked:+4", "sum=tree:05x", "sum=blocked:4:63"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        nmo_plan p;
        nmo_plan_default(&p, NMO_FP32);
        nmo_err err = {{0}};
        cr_expect_eq(nmo_plan_parse(&p, bad[i], &err), NMO_ERR_PARSE, "%s accepted", bad[i]);
        cr_expect_eq(p.sum, NMO_SUM_ANY, "%s changed the plan", bad[i]);
    }
    nmo_plan p;
    plan_of(&p, NMO_FP32, "sum=blocked:16:8:4");
    cr_expect_eq(nmo_plan_geo_capacity(&p), 16 * 256 * 4);
    plan_of(&p, NMO_FP32, "sum=blocked:16:8:any");
    cr_expect_eq(nmo_plan_geo_capacity(&p), INT64_MAX);
}

/* The multiplier: never above the any-order one, equal to the derivation's values. */
Test(sum_geom, multiplier)
{
    nmo_plan p;
    plan_of(&p, NMO_FP32, "sum=tree:3");
    double u = 0x1p-24;
    /* 8 terms, depth 3: gamma_3 / u = 3 (1 + 6u), rounded up onto 2^-10 */
    cr_expect_eq(nmo_plan_red_k(&p, 8, 8, 0), ceil(3 * (1 + 6 * u) * (1 + 0x1p-40) * 1024) / 1024);
    cr_expect_eq(nmo_plan_red_k(&p, 9, 9, 0), INFINITY, "9 terms do not fit a depth-3 tree");
    cr_expect_eq(nmo_plan_red_k(&p, 3, 3, 0), 2, "the any-order bound (n - 1) is smaller");
    plan_of(&p, NMO_FP32, "sum=blocked:16:8:any");
    double k = nmo_plan_red_k(&p, 4096 * 4, 4096 * 4, 1);
    cr_expect(k > 16 + 8 + 3 && k < 16 + 8 + 4 + 0.01, "k = %g", k);
    cr_expect_eq(nmo_plan_red_k(&p, 5, 5, 1), 5, "min with the any-order bound");
    nmo_plan a;
    plan_of(&a, NMO_FP32, "sum=any");
    cr_expect_eq(nmo_plan_red_k(&a, 100, 90, 0), 89);
    cr_expect_eq(nmo_plan_red_k(&a, 100, 90, 1), 90);
    cr_expect_eq(nmo_plan_dot_k2(&p, 4096, 4096), nmo_plan_red_k(&p, 4096, 4096, 1));
    /* a relative run is the absolute run ceil(n/T) + E at each n (sums and products,
     * zeros dropped: m < n) */
    static const int64_t ns[] = {1, 2, 31, 32, 33, 255, 256, 257, 4097, 65537, 1 << 24};
    nmo_plan r, b;
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
        for (int dot = 0; dot < 2; dot++) {
            int64_t n = ns[i], m = n > 4 ? n - 3 : n;
            char t[64];
            plan_of(&r, NMO_FP32, "sum=blocked:n/256+3:8:6");
            snprintf(t, sizeof t, "sum=blocked:%lld:8:6", (long long)((n + 255) / 256 + 3));
            plan_of(&b, NMO_FP32, t);
            cr_expect_eq(nmo_plan_red_k(&r, n, m, dot), nmo_plan_red_k(&b, n, m, dot), "n %lld dot %d", (long long)n,
                         dot);
            cr_expect_eq(nmo_plan_geo_run(&r, n), (n + 255) / 256 + 3);
        }
    /* torch-reduce at 16.8M terms: (*) level by level — runs of 2^19 + 12 (c = r - 1), a
     * depth-9 tree, 65535 partials; 591,890: 28x below the any-order n - 1 */
    plan_of(&r, NMO_FP32, "sum=blocked:n/32+12:9:65535");
    double kt = nmo_plan_red_k(&r, 1 << 24, 1 << 24, 0);
    double k1 = (1 << 19) + 11, k2 = k1 + 9 * (1 + 18 * u) * (1 + k1 * u), k3 = k2 + 65534 * (1 + k2 * u);
    cr_expect(kt >= k3 && kt < k3 + 0.01, "k = %.3f, derivation %.3f", kt, k3);
    cr_expect(kt < (double)((1 << 24) - 1) / 28, "k = %.3f", kt);
}

/* ---- enclosures of both engines ------------------------------------------------------- */

typedef struct {
    nmo_fctx fc;
    nmo_cctx cc;
    nmo_plan p;
} engines;

static void eng_init(engines *e, const nmo_plan *p)
{
    nmo_err err = {{0}};
    e->p = *p;
    cr_assert_eq(nmo_fctx_init(&e->fc, p, &err), NMO_OK, "%s", err.msg);
    cr_assert_eq(nmo_cctx_init(&e->cc, p, &err), NMO_OK, "%s", err.msg);
}

static void eng_clear(engines *e)
{
    nmo_fctx_clear(&e->fc);
    nmo_cctx_clear(&e->cc);
}

/* The plain sum of point terms x (dot = 0) or the dot product x.y (dot = 1) in both
 * engines: the certified enclosure, checked equal to the fast one where that one is sure. */
static nmo_fenc eng_red(engines *e, const double *x, const double *y, int64_t n, int dot, int sharp)
{
    nmo_fenc f, c;
    nmo_cenc r;
    nmo_cenc_init(&e->cc, &r);
    if (dot) {
        if (sharp) {
            nmo_fenc_dot_sharp_d(&e->fc, &f, x, y, n);
            nmo_cenc_dot_sharp_d(&e->cc, &r, x, y, n);
        } else {
            nmo_fenc_dot_d(&e->fc, &f, x, y, n);
            nmo_cenc_dot_d(&e->cc, &r, x, y, n);
        }
    } else {
        nmo_fenc *fx = malloc((size_t)n * sizeof *fx);
        nmo_cenc *cx = malloc((size_t)n * sizeof *cx);
        cr_assert(fx && cx);
        for (int64_t i = 0; i < n; i++) {
            nmo_fenc_set_d(&e->fc, &fx[i], x[i]);
            nmo_cenc_init(&e->cc, &cx[i]);
            nmo_cenc_set_d(&e->cc, &cx[i], x[i]);
        }
        if (sharp) {
            nmo_fenc_sum_sharp(&e->fc, &f, fx, n);
            nmo_cenc_sum_sharp(&e->cc, &r, cx, n);
        } else {
            nmo_fenc_sum(&e->fc, &f, fx, n);
            nmo_cenc_sum(&e->cc, &r, cx, n);
        }
        for (int64_t i = 0; i < n; i++) nmo_cenc_clear(&e->cc, &cx[i]);
        free(fx), free(cx);
    }
    nmo_cenc_export(&e->cc, &c, &r);
    nmo_cenc_clear(&e->cc, &r);
    if (!(f.flags & NMO_EF_UNC))
        cr_expect(f.lo == c.lo && f.hi == c.hi, "fast [%a, %a] != certified [%a, %a] (n %lld)", f.lo, f.hi,
                  c.lo, c.hi, (long long)n);
    return c;
}

static double rnd_acc(nmo_fmt af, double v) { return nmo_fmt_round(af, v, NMO_RNE, 0); }

/* xorshift */
static uint64_t rs_next(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}
static double rs_unif(uint64_t *s) { return (double)(rs_next(s) >> 11) * 0x1p-53; }

/* ---- every tree of depth <= D, n <= 7 --------------------------------------------------- */

#define TMAX 7
#define VMAX 4096

typedef struct {
    double v[VMAX];
    int n;
} vset;

static void vset_add(vset *s, double v)
{
    for (int i = 0; i < s->n; i++)
        if (s->v[i] == v) return;
    cr_assert_lt(s->n, VMAX, "value set overflow");
    s->v[s->n++] = v;
}

typedef struct {
    nmo_fmt af;
    int dot;
    const double *x, *y;
    vset *memo[1 << TMAX][TMAX];
} tctx;

/* The values of every tree of depth <= d over the terms in mask: each node RN(a + b) in
 * acc; for dot products a leaf is RN(x y) or, fused into its parent, fma(x, y, other). */
static vset *tree_vals(tctx *t, unsigned mask, int d)
{
    if (t->memo[mask][d]) return t->memo[mask][d];
    vset *s = calloc(1, sizeof *s);
    cr_assert(s);
    t->memo[mask][d] = s;
    if (__builtin_popcount(mask) == 1) {
        int i = __builtin_ctz(mask);
        vset_add(s, t->dot ? rnd_acc(t->af, t->x[i] * t->y[i]) : t->x[i]);
        return s;
    }
    if (d == 0) return s; /* no tree of depth 0 over two terms or more */
    unsigned low = mask & -mask;
    for (unsigned a = (mask - 1) & mask; a; a = (a - 1) & mask) {
        if (!(a & low)) continue; /* each split once */
        unsigned b = mask ^ a;
        vset *sa = tree_vals(t, a, d - 1), *sb = tree_vals(t, b, d - 1);
        for (int i = 0; i < sa->n; i++)
            for (int j = 0; j < sb->n; j++) vset_add(s, rnd_acc(t->af, sa->v[i] + sb->v[j]));
        if (t->dot) { /* a single product fused into this node: fma(x, y, other) */
            if (__builtin_popcount(a) == 1) {
                int i = __builtin_ctz(a);
                for (int j = 0; j < sb->n; j++) vset_add(s, rnd_acc(t->af, fma(t->x[i], t->y[i], sb->v[j])));
            }
            if (__builtin_popcount(b) == 1) {
                int i = __builtin_ctz(b);
                for (int j = 0; j < sa->n; j++) vset_add(s, rnd_acc(t->af, fma(t->x[i], t->y[i], sa->v[j])));
            }
        }
    }
    return s;
}

static void tctx_free(tctx *t)
{
    for (unsigned m = 0; m < (1u << TMAX); m++)
        for (int d = 0; d < TMAX; d++) free(t->memo[m][d]), t->memo[m][d] = NULL;
}

/* Terms of one family: mixed magnitudes and signs (or all positive), exact in acc, with
 * binary64 sums of two exact (moderate exponent range). */
static double term(uint64_t *s, nmo_fmt f, int pos)
{
    double m = ldexp(1 + rs_unif(s), (int)(rs_next(s) % 9) - 4);
    if (!pos && rs_next(s) % 2) m = -m;
    return nmo_fmt_round(f, m, NMO_RNE, 0);
}

Test(sum_geom, every_tree_inside, .timeout = 600)
{
    long trees = 0, narrower = 0;
    static const nmo_fmt accs[2] = {NMO_FP32, NMO_BF16};
    for (int ai = 0; ai < 2; ai++)
        for (int dot = 0; dot < 2; dot++)
            for (int n = 2; n <= TMAX; n++) {
                int dmin = 0;
                while ((1 << dmin) < n) dmin++;
                for (int D = dmin; D < n; D++)
                    for (int seed = 1; seed <= 6; seed++) {
                        uint64_t s = 0x9e3779b97f4a7c15ull * (uint64_t)(seed * 131 + n * 7 + D + 1000 * ai + 77 * dot);
                        double x[TMAX], y[TMAX];
                        nmo_fmt af = accs[ai];
                        /* dot products: fp32 factors (their products are not fp32 values:
                         * rounded and fused leaves differ) */
                        for (int i = 0; i < n; i++) {
                            x[i] = dot ? term(&s, NMO_FP32, seed % 2) : term(&s, af, seed % 2);
                            y[i] = dot ? term(&s, NMO_FP32, 1) : 0;
                        }
                        char text[96];
                        snprintf(text, sizeof text, "acc=%s compute=%s inter=%s sum=tree:%d", nmo_fmt_name(af),
                                 nmo_fmt_name(af), nmo_fmt_name(af), D);
                        nmo_plan p, pa;
                        plan_of(&p, NMO_FP32, text);
                        pa = p;
                        pa.sum = NMO_SUM_ANY;
                        for (int sharp = 0; sharp < 2; sharp++) {
                            engines e, ea;
                            eng_init(&e, &p);
                            eng_init(&ea, &pa);
                            nmo_fenc r = eng_red(&e, x, y, n, dot, sharp);
                            nmo_fenc ra = eng_red(&ea, x, y, n, dot, sharp);
                            cr_expect(r.lo >= ra.lo && r.hi <= ra.hi, "tree:%d wider than any", D);
                            narrower += r.lo > ra.lo || r.hi < ra.hi;
                            tctx t = {.af = af, .dot = dot, .x = x, .y = y};
                            vset *v = tree_vals(&t, (1u << n) - 1, D);
                            cr_assert_gt(v->n, 0);
                            for (int i = 0; i < v->n; i++)
                                cr_expect(v->v[i] >= r.lo && v->v[i] <= r.hi,
                                          "acc %s dot %d sharp %d n %d tree:%d seed %d: a tree gives %a outside "
                                          "[%a, %a]", nmo_fmt_name(af), dot, sharp, n, D, seed, v->v[i], r.lo, r.hi);
                            trees += v->n;
                            tctx_free(&t);
                            eng_clear(&e);
                            eng_clear(&ea);
                        }
                    }
            }
    printf("sum_geom: %ld distinct tree results checked inside; %ld enclosures narrower than any\n", trees,
           narrower);
    cr_expect_gt(narrower, 0, "the geometry never narrowed anything");
}

/* ---- sampled blocked evaluations --------------------------------------------------------- */

/* v[0..m) combined in a random association (any order): the result in v[0]. */
static double any_order(nmo_fmt af, double *v, int64_t m, uint64_t *s)
{
    while (m > 1) {
        int64_t i = (int64_t)(rs_next(s) % (uint64_t)m), j = (int64_t)(rs_next(s) % (uint64_t)(m - 1));
        if (j >= i) j++;
        v[i] = rnd_acc(af, v[i] + v[j]);
        v[j] = v[--m];
        if (i == m) i = j;
    }
    return m ? v[0] : 0;
}

/* A tree of depth <= D over v[0..m) (m <= 2^D): D levels of random pairings. */
static double tree_order(nmo_fmt af, double *v, int64_t m, int D, uint64_t *s)
{
    for (int l = 0; l < D && m > 1; l++) {
        /* shuffle, then pair neighbours: ceil(m/2) values remain */
        for (int64_t i = m - 1; i > 0; i--) {
            int64_t j = (int64_t)(rs_next(s) % (uint64_t)(i + 1));
            double t = v[i];
            v[i] = v[j], v[j] = t;
        }
        int64_t k = 0;
        for (int64_t i = 0; i < m; i += 2) v[k++] = i + 1 < m ? rnd_acc(af, v[i] + v[i + 1]) : v[i];
        m = k;
    }
    cr_assert_eq(m, 1, "tree deeper than D");
    return v[0];
}

/* One evaluation the geometry (b, d, p; p = 0: full consecutive chunks) allows of the sum
 * of x (dot: of x*y, products rounded or fused into a run's sequential FMA). */
static double geom_eval(nmo_fmt af, const double *x, const double *y, int64_t n, int b, int d, int64_t p,
                        uint64_t *s)
{
    int64_t cap = (int64_t)b << d, P = p ? p : (n + cap - 1) / cap;
    double *chunkv = malloc((size_t)P * sizeof(double)), *runv = malloc((size_t)((int64_t)1 << d) * sizeof(double));
    double *tmp = malloc((size_t)b * sizeof(double));
    int64_t *perm = malloc((size_t)n * sizeof(int64_t));
    cr_assert(chunkv && runv && tmp && perm);
    for (int64_t i = 0; i < n; i++) perm[i] = i;
    if (p) /* an explicit split: any assignment of terms to chunks */
        for (int64_t i = n - 1; i > 0; i--) {
            int64_t j = (int64_t)(rs_next(s) % (uint64_t)(i + 1)), t = perm[i];
            perm[i] = perm[j], perm[j] = t;
        }
    /* chunk sizes: consecutive full chunks (p = 0), else a random split, each <= cap */
    int64_t pos = 0;
    for (int64_t c = 0; c < P; c++) {
        int64_t left = n - pos, rest = P - c - 1, sz;
        if (!p) sz = left < cap ? left : cap;
        else {
            int64_t lo = left - rest * cap > 0 ? left - rest * cap : 0, hi = left < cap ? left : cap;
            sz = lo + (int64_t)(rs_next(s) % (uint64_t)(hi - lo + 1));
        }
        /* runs of <= b inside the chunk: at most 2^d of them */
        int64_t G = ((int64_t)1 << d), q = 0, used = 0;
        for (int64_t g = 0; g < G && used < sz; g++) {
            int64_t rleft = sz - used, rrest = G - g - 1;
            int64_t lo = rleft - rrest * b > 1 ? rleft - rrest * b : 1, hi = rleft < b ? rleft : b;
            int64_t rl = lo + (int64_t)(rs_next(s) % (uint64_t)(hi - lo + 1));
            const int64_t *ix = perm + pos + used;
            double v;
            if (y && rs_next(s) % 2) { /* sequential FMA accumulation in a random order */
                v = 0;
                for (int64_t i = 0; i < rl; i++) v = rnd_acc(af, fma(x[ix[i]], y[ix[i]], v));
            } else {
                for (int64_t i = 0; i < rl; i++) tmp[i] = y ? rnd_acc(af, x[ix[i]] * y[ix[i]]) : x[ix[i]];
                v = any_order(af, tmp, rl, s);
            }
            runv[q++] = v;
            used += rl;
        }
        cr_assert_eq(used, sz);
        chunkv[c] = q ? tree_order(af, runv, q, d, s) : 0;
        pos += sz;
    }
    cr_assert_eq(pos, n);
    double r = any_order(af, chunkv, P, s);
    free(chunkv), free(runv), free(tmp), free(perm);
    return r;
}

Test(sum_geom, sampled_blocked_inside, .timeout = 900)
{
    static const struct {
        int b, d;
        int64_t p;
        int64_t n;
        int t; /* > 0: the relative form n/t+b (runs of ceil(n/t) + b) */
    } g[] = {{17, 8, 1, 4097, 0}, {16, 8, 1, 4096, 0}, {8, 5, 0, 3000, 0}, {1, 12, 1, 4096, 0},
             {4, 2, 64, 1000, 0}, {32, 0, 0, 2049, 0}, {64, 10, 1, 5000, 0}, {2, 3, 300, 4000, 0},
             /* relative runs: a 256-thread block (n/256:8), a split-K of 4 (n/4:0:4),
              * torch-reduce's n/32+12:9:65535, a warp with a vector slack (n/32+3:5:any) */
             {0, 8, 1, 4097, 256}, {0, 0, 4, 1023, 4}, {12, 9, 65535, 3001, 32}, {3, 5, 0, 2500, 32}};
    static const nmo_fmt accs[2] = {NMO_FP32, NMO_BF16};
    long evals = 0;
    for (size_t gi = 0; gi < sizeof g / sizeof g[0]; gi++)
        for (int ai = 0; ai < 2; ai++)
            for (int dot = 0; dot < 2; dot++)
                for (int seed = 1; seed <= 3; seed++) {
                    nmo_fmt af = accs[ai];
                    int64_t n = g[gi].n;
                    uint64_t s = 0x2545f4914f6cdd1dull * (uint64_t)(seed + 17 * gi + 5 * ai + 3 * dot + 1);
                    double *x = malloc((size_t)n * sizeof(double)), *y = malloc((size_t)n * sizeof(double));
                    for (int64_t i = 0; i < n; i++) {
                        x[i] = dot ? term(&s, NMO_BF16, seed == 1) : term(&s, af, seed == 1);
                        y[i] = term(&s, NMO_BF16, 1);
                    }
                    char text[128], gt[48], bt[24];
                    int b = g[gi].b;
                    if (g[gi].t > 0) {
                        snprintf(bt, sizeof bt, "n/%d+%d", g[gi].t, g[gi].b);
                        b = (int)((n + g[gi].t - 1) / g[gi].t) + g[gi].b; /* the runs the model allows */
                    } else snprintf(bt, sizeof bt, "%d", g[gi].b);
                    if (g[gi].p == 0) snprintf(gt, sizeof gt, "blocked:%s:%d:any", bt, g[gi].d);
                    else snprintf(gt, sizeof gt, "blocked:%s:%d:%lld", bt, g[gi].d, (long long)g[gi].p);
                    snprintf(text, sizeof text, "acc=%s compute=%s inter=%s sum=%s", nmo_fmt_name(af),
                             nmo_fmt_name(af), nmo_fmt_name(af), gt);
                    nmo_plan p;
                    plan_of(&p, NMO_FP32, text);
                    engines e;
                    eng_init(&e, &p);
                    for (int sharp = 0; sharp < 2; sharp++) {
                        nmo_fenc r = eng_red(&e, x, dot ? y : NULL, n, dot, sharp);
                        cr_assert(isfinite(r.lo) && isfinite(r.hi), "%s n %lld: not bounded", text, (long long)n);
                        for (int t = 0; t < 20; t++) {
                            double v = geom_eval(af, x, dot ? y : NULL, n, b, g[gi].d, g[gi].p, &s);
                            cr_expect(v >= r.lo && v <= r.hi, "%s dot %d n %lld seed %d: %a outside [%a, %a]", text,
                                      dot, (long long)n, seed, v, r.lo, r.hi);
                            evals++;
                        }
                    }
                    eng_clear(&e);
                    free(x), free(y);
                }
    printf("sum_geom: %ld sampled blocked evaluations inside\n", evals);
}

/* The primitive's negative control: 1 + 7 terms just below u, summed left to right, lose
 * 7 (1 - 2^-10) u (every addition rounds down to 1); a depth-3 tree loses at most ~u. */
Test(sum_geom, deeper_order_outside)
{
    static const nmo_fmt accs[2] = {NMO_FP32, NMO_BF16};
    for (int ai = 0; ai < 2; ai++) {
        nmo_fmt af = accs[ai];
        double u = ldexp(1.0, -nmo_fmt_get(af)->prec);
        double x[8] = {1};
        for (int i = 1; i < 8; i++) x[i] = u * (1 - 0x1p-6);
        char text[96];
        snprintf(text, sizeof text, "acc=%s compute=%s inter=%s sum=tree:3", nmo_fmt_name(af), nmo_fmt_name(af),
                 nmo_fmt_name(af));
        nmo_plan p;
        plan_of(&p, NMO_FP32, text);
        engines e;
        eng_init(&e, &p);
        nmo_fenc r = eng_red(&e, x, NULL, 8, 0, 0);
        double seq = 0;
        for (int i = 0; i < 8; i++) seq = rnd_acc(af, seq + x[i]);
        cr_expect(seq < r.lo, "%s: the sequential sum %a (depth 7) is inside [%a, %a] of tree:3",
                  nmo_fmt_name(af), seq, r.lo, r.hi);
        /* the balanced tree is inside */
        double v[8];
        memcpy(v, x, sizeof v);
        for (int w = 8; w > 1; w /= 2)
            for (int i = 0; i < w / 2; i++) v[i] = rnd_acc(af, v[2 * i] + v[2 * i + 1]);
        cr_expect(v[0] >= r.lo && v[0] <= r.hi, "%s: balanced %a outside", nmo_fmt_name(af), v[0]);
        /* and 9 terms do not fit a depth-3 tree: "anything", counted */
        double x9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
        nmo_fenc r9 = eng_red(&e, x9, NULL, 9, 0, 0);
        cr_expect(r9.lo == -INFINITY && r9.hi == INFINITY && e.fc.geo_over == 9 && e.cc.geo_over == 9,
                  "beyond the capacity: [%a, %a], over %lld/%lld", r9.lo, r9.hi, (long long)e.fc.geo_over,
                  (long long)e.cc.geo_over);
        eng_clear(&e);
    }
}

/* ---- operators ------------------------------------------------------------------------ */

typedef struct {
    const char *op, *cand;
    const char *shape;
} geo_case;

/* Shapes: rows of an odd length; each candidate under the geometry it declares in the
 * registry (refs/cand/cand_geom.c, from its emulation's reduction shape). */
static const geo_case cases[] = {
    {"rms_norm", "block256", "6x4097"},   {"rms_norm", "warp32", "6x4097"},
    {"rms_norm", "vec4", "6x4097"},       {"rms_norm", "pairwise", "6x4097"},
    {"layer_norm", "liger", "6x4097"},    {"layer_norm", "warp32", "6x4097"},
    {"layer_norm", "block256_div", "6x4097"}, {"layer_norm", "vec4", "6x4097"},
    {"softmax", "block256", "6x4097"},    {"softmax", "warp32", "6x4097"},
    {"softmax", "vec4", "6x4097"},        {"softmax", "pairwise", "6x4097"},
    {"kl_div", "liger", "6x1025"},        {"kl_div", "warp32", "6x1025"},
    {"kl_div", "torch", "6x1025"},        {"jsd", "liger", "6x1025"},
    {"jsd", "warp32", "6x1025"},          {"cross_entropy", "liger", "6x1025"},
    {"cross_entropy", "warp32", "6x1025"}, {"cross_entropy", "vec4", "6x1025"},
    {"matmul", "ktile32", "8x16x1023"},   {"matmul", "splitk4", "8x16x1023"},
    {"matmul", "warp32", "8x16x1023"},    {"matmul", "vec4", "8x16x1023"},
    {"matmul", "pairwise", "8x16x1023"},
};

/* The case (op, plan, shape, family, seed), candidate run with its parameters cparam
 * (NULL: the case's) and judged; *w receives the finite widths of R in output ulps. */
static nmo_status run_op(nmo_report *rep, const nmo_op *op, const nmo_cand *cand, const nmo_plan *p,
                         const char *shape, int fam, uint64_t seed, const double *cparam,
                         nmo_status (*run)(const nmo_cand_args *, nmo_err *), nmo_err *err)
{
    int ns;
    int64_t sh[NMO_MAX_DIMS];
    NMO_RETURN_IF_ERR(nmo_shape_parse(&ns, sh, shape, err));
    nmo_case c;
    NMO_RETURN_IF_ERR(nmo_case_init(&c, op, p, ns, sh, err));
    nmo_case_fill(&c, fam, seed);
    nmo_tensor out[NMO_MAX_TENSORS];
    memset(out, 0, sizeof out);
    nmo_status s = nmo_case_alloc_outputs(&c, out, 0, err);
    nmo_cand_args a = {c.in, c.n_in, out, c.n_out, cparam ? cparam : c.param, op->n_param, &c.plan};
    if (s == NMO_OK) s = run ? run(&a, err) : cand->run(&a, err);
    nmo_check_opts o = {.keep_bounds = 1};
    if (s == NMO_OK) s = nmo_check(rep, &c, out, &o, err);
    for (int k = 0; k < c.n_out; k++) nmo_tensor_free(&out[k]);
    nmo_case_free(&c);
    return s;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* widths of finite R (output ulps) appended to *w */
static void widths(const nmo_report *rep, nmo_fmt out, double **w, int64_t *nw, int64_t *cap)
{
    for (int k = 0; k < rep->n_out; k++)
        for (int64_t i = 0; i < rep->out_n[k]; i++) {
            double lo = rep->rlo[k][i], hi = rep->rhi[k][i];
            if (!isfinite(lo) || !isfinite(hi)) continue;
            if (*nw == *cap) {
                *cap = *cap ? 2 * *cap : 4096;
                *w = realloc(*w, (size_t)*cap * sizeof(double));
                cr_assert(*w);
            }
            (*w)[(*nw)++] = (double)(nmo_fmt_ordinal(out, hi) - nmo_fmt_ordinal(out, lo));
        }
}

static void quantiles(double *w, int64_t n, double *med, double *p99)
{
    if (n == 0) { *med = *p99 = NAN; return; }
    qsort(w, (size_t)n, sizeof(double), cmp_d);
    *med = w[n / 2];
    *p99 = w[(int64_t)((double)(n - 1) * 0.99)];
}

static const int op_fams[] = {NMO_FAM_GAUSSIAN, NMO_FAM_UNIFORM, NMO_FAM_SMALL, NMO_FAM_LARGE,
                              NMO_FAM_SHIFTED, NMO_FAM_OUTLIER};

/* Every correct candidate of the table PASSes under its geometry (no element FAILs),
 * fp32 and bf16, over families x seeds; the width table against any. */
Test(sum_geom, candidates_pass_under_their_geometry, .timeout = 1800)
{
    printf("%-14s %-13s %-5s %-22s %9s %9s %9s %9s\n", "op", "candidate", "dtype", "geometry", "any:med",
           "any:p99", "geo:med", "geo:p99");
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const geo_case *gc = &cases[ci];
        const nmo_op *op = nmo_op_find(gc->op);
        const nmo_cand *cand = nmo_cand_find(gc->op, gc->cand);
        cr_assert(op && cand, "%s/%s", gc->op, gc->cand);
        cr_assert(cand->correct);
        cr_assert(nmo_cand_geom(cand), "%s/%s declares no geometry", gc->op, gc->cand);
        for (int di = 0; di < 2; di++) {
            nmo_fmt dt = di ? NMO_BF16 : NMO_FP32;
            nmo_plan pa, pg;
            nmo_err err = {{0}};
            cr_assert_eq(nmo_cand_plan(&pa, cand, dt, &err), NMO_OK);
            nmo_test_shape ts0;
            cr_assert_eq(nmo_shape_parse(&ts0.nshape, ts0.shape, gc->shape, &err), NMO_OK);
            cr_assert_eq(nmo_cand_geom_plan(&pg, cand, dt, ts0.nshape, ts0.shape, NULL, &err), NMO_OK, "%s", err.msg);
            char g[64] = "sum=";
            nmo_plan_geo_text(&pg, g + 4, sizeof g - 4);
            double *wa = NULL, *wg = NULL;
            int64_t na = 0, ng = 0, ca = 0, cg = 0, fails = 0, inconc = 0;
            for (size_t f = 0; f < sizeof op_fams / sizeof op_fams[0]; f++)
                for (uint64_t seed = 1; seed <= 2; seed++) {
                    nmo_report ra, rg;
                    cr_assert_eq(run_op(&ra, op, cand, &pa, gc->shape, op_fams[f], seed, NULL, NULL, &err), NMO_OK,
                                 "%s/%s any: %s", gc->op, gc->cand, err.msg);
                    cr_assert_eq(run_op(&rg, op, cand, &pg, gc->shape, op_fams[f], seed, NULL, NULL, &err), NMO_OK,
                                 "%s/%s %s: %s", gc->op, gc->cand, g, err.msg);
                    cr_expect_eq(rg.n_fail, 0, "%s/%s %s %s family %s seed %llu: %lld FAIL (worst %a not in [%a, %a])",
                                 gc->op, gc->cand, nmo_fmt_name(dt), g, nmo_family_name(op_fams[f]),
                                 (unsigned long long)seed, (long long)rg.n_fail, rg.worst.cand, rg.worst.rlo,
                                 rg.worst.rhi);
                    fails += rg.n_fail;
                    inconc += rg.n_inconc;
                    widths(&ra, pa.out, &wa, &na, &ca);
                    widths(&rg, pg.out, &wg, &ng, &cg);
                    nmo_report_free(&ra);
                    nmo_report_free(&rg);
                }
            /* fast + escalation == certified under the geometry (one family) */
            nmo_test_shape ts;
            cr_assert_eq(nmo_shape_parse(&ts.nshape, ts.shape, gc->shape, &err), NMO_OK);
            int64_t nesc = 0;
            int64_t dif = nmo_test_engines_differ(op, cand, &pg, NMO_FAM_GAUSSIAN, 1, &ts, &nesc, &err);
            cr_expect_eq(dif, 0, "%s/%s %s %s: %lld elements differ between the engines (%s)", gc->op, gc->cand,
                         nmo_fmt_name(dt), g, (long long)dif, err.msg);
            double am, ap, gm, gp;
            quantiles(wa, na, &am, &ap);
            quantiles(wg, ng, &gm, &gp);
            printf("%-14s %-13s %-5s %-22s %9.0f %9.0f %9.0f %9.0f%s\n", gc->op, gc->cand, nmo_fmt_name(dt), g + 4,
                   am, ap, gm, gp, fails ? "  FAIL" : "");
            cr_expect(gp <= ap && gm <= am, "%s/%s: the geometry widened R", gc->op, gc->cand);
            free(wa), free(wg);
        }
    }
}

/* A candidate whose real order is deeper than it declares FAILs somewhere: rms_norm's
 * sequential sum of squares (4096 rounded additions in a row) declared as a depth-13
 * tree. The same candidate under its true geometry (one run) PASSes. */
Test(sum_geom, deeper_candidate_fails, .timeout = 600)
{
    const nmo_op *op = nmo_op_find("rms_norm");
    const nmo_cand *cand = nmo_cand_find("rms_norm", "seq");
    cr_assert(op && cand);
    nmo_plan p;
    plan_of(&p, NMO_FP32, "sum=tree:13");
    int64_t fails = 0;
    nmo_err err = {{0}};
    for (size_t f = 0; f < sizeof op_fams / sizeof op_fams[0]; f++) {
        nmo_report r;
        cr_assert_eq(run_op(&r, op, cand, &p, "16x8192", op_fams[f], 1, NULL, NULL, &err), NMO_OK, "%s", err.msg);
        fails += r.n_fail;
        nmo_report_free(&r);
    }
    printf("sum_geom: rms_norm seq declared tree:13: %lld elements FAIL\n", (long long)fails);
    cr_expect_gt(fails, 0, "a sequential sum declared as a depth-13 tree never FAILs: the model is vacuous");
    /* the same with a relative run: declared as a 256-thread block (blocked:n/256:8, the
     * block256 candidate's registry geometry) */
    plan_of(&p, NMO_FP32, "sum=blocked:n/256:8");
    int64_t fails_rel = 0;
    for (size_t f = 0; f < sizeof op_fams / sizeof op_fams[0]; f++) {
        nmo_report r;
        cr_assert_eq(run_op(&r, op, cand, &p, "16x8192", op_fams[f], 1, NULL, NULL, &err), NMO_OK, "%s", err.msg);
        fails_rel += r.n_fail;
        nmo_report_free(&r);
    }
    printf("sum_geom: rms_norm seq declared blocked:n/256:8: %lld elements FAIL\n", (long long)fails_rel);
    cr_expect_gt(fails_rel, 0, "a sequential sum declared as a 256-thread block never FAILs");
    /* a reduction longer than the geometry holds is an error, not a verdict */
    nmo_report r;
    plan_of(&p, NMO_FP32, "sum=tree:12");
    nmo_status s = run_op(&r, op, cand, &p, "2x8193", NMO_FAM_GAUSSIAN, 1, NULL, NULL, &err);
    cr_expect_eq(s, NMO_ERR_UNSUPPORTED, "a row of 8193 under tree:12 gave %d", s);
    cr_expect(strstr(err.msg, "plan field 'sum=tree:12' holds at most 4096 terms in one reduction; rms_norm reduces "
                              "8193 terms") == err.msg, "message: %s", err.msg);
}

/* ---- the issue's three mutants ----------------------------------------------------------- */

/* TF32 products: A and B rounded to tf32 (RNE, as cuBLAS's TF32 mode converts), then
 * ktile32's fmaf accumulation; the correct version keeps fp32 factors. */
static int tf32_inputs;
static nmo_status mm_ktile32_tf32(const nmo_cand_args *a, nmo_err *err)
{
    const nmo_tensor *A = &a->in[0], *B = &a->in[1];
    int64_t M = A->dims[0], K = A->dims[1], N = B->dims[1];
    (void)err;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            float acc = 0;
            for (int64_t t = 0; t < K; t += 32) {
                float part = 0;
                for (int64_t k = t; k < K && k < t + 32; k++) {
                    double x = nmo_tensor_get(A, i * K + k), y = nmo_tensor_get(B, k * N + j);
                    if (tf32_inputs) x = nmo_fmt_round(NMO_TF32, x, NMO_RNE, 0), y = nmo_fmt_round(NMO_TF32, y, NMO_RNE, 0);
                    part = fmaf((float)x, (float)y, part);
                }
                acc = acc + part;
            }
            nmo_tensor_set(&a->out[0], i * N + j, nmo_fmt_round(a->plan->out, acc, NMO_RNE, 0));
        }
    return NMO_OK;
}

/* rms_norm_bwd's weight gradient over many rows: the default candidate's dx, and dw
 * recomputed as Liger does it: programs of R consecutive rows accumulate dw in fp32
 * (fmaf of RN(dy*x) and rstd, any order inside being allowed), their partials then added
 * in order; the mutant stores each program's partial in bf16 first. */
static int dw_bf16_blocks;
#define DW_R 256
static nmo_status rmsb_blocked(const nmo_cand_args *a, nmo_err *err)
{
    const nmo_cand *def = nmo_cand_find("rms_norm_bwd", NULL);
    NMO_RETURN_IF_ERR(def->run(a, err));
    const nmo_tensor *dy = &a->in[0], *x = &a->in[1], *rstd = &a->in[3];
    int64_t N = x->dims[x->ndims - 1], M = nmo_tensor_numel(x) / N;
    for (int64_t j = 0; j < N; j++) {
        float acc = 0;
        for (int64_t i0 = 0; i0 < M; i0 += DW_R) {
            float part = 0;
            for (int64_t i = i0; i < M && i < i0 + DW_R; i++) {
                float t = (float)nmo_tensor_get(dy, i * N + j) * (float)nmo_tensor_get(x, i * N + j);
                part = fmaf(t, (float)nmo_tensor_get(rstd, i), part);
            }
            if (dw_bf16_blocks) part = (float)nmo_fmt_round(NMO_BF16, part, NMO_RNE, 0);
            acc = acc + part;
        }
        nmo_tensor_set(&a->out[1], j, nmo_fmt_round(a->plan->out, acc, NMO_RNE, 0));
    }
    return NMO_OK;
}

/* verdict counts over families, seed 1 */
static void verdicts(const char *opn, const char *candn, const char *plan_text, const char *shape,
                     const double *cparam, nmo_status (*run)(const nmo_cand_args *, nmo_err *),
                     int64_t *fail, int64_t *inconc, int64_t *n)
{
    const nmo_op *op = nmo_op_find(opn);
    const nmo_cand *cand = candn ? nmo_cand_find(opn, candn) : NULL;
    nmo_plan p;
    plan_of(&p, NMO_FP32, plan_text);
    *fail = *inconc = *n = 0;
    nmo_err err = {{0}};
    for (size_t f = 0; f < 3; f++) {
        nmo_report r;
        cr_assert_eq(run_op(&r, op, cand, &p, shape, op_fams[f], 1, cparam, run, &err), NMO_OK, "%s %s: %s", opn,
                     plan_text, err.msg);
        *fail += r.n_fail, *inconc += r.n_inconc, *n += r.n;
        nmo_report_free(&r);
    }
}

Test(sum_geom, issue_mutants_fail_under_geometry, .timeout = 1800)
{
    int64_t f, i, n;
    /* eps 1e-5 where 1e-6 is declared, fp32 rms_norm, 256-thread block tree */
    double eps10[2] = {1e-5, 0};
    verdicts("rms_norm", "block256", "sum=any", "16x4096", eps10, NULL, &f, &i, &n);
    printf("rms_norm eps x10, any:            %lld FAIL %lld INCONCLUSIVE of %lld\n", (long long)f, (long long)i,
           (long long)n);
    verdicts("rms_norm", "block256", "sum=blocked:16:8", "16x4096", eps10, NULL, &f, &i, &n);
    printf("rms_norm eps x10, blocked:16:8:   %lld FAIL %lld INCONCLUSIVE of %lld\n", (long long)f, (long long)i,
           (long long)n);
    cr_expect_gt(f, 0, "eps 10x not detected under the geometry");
    verdicts("rms_norm", "block256", "sum=blocked:16:8", "16x4096", NULL, NULL, &f, &i, &n);
    cr_expect_eq(f, 0, "the correct rms_norm FAILs under blocked:16:8");
    cr_expect_eq(i, 0, "the correct rms_norm is INCONCLUSIVE under blocked:16:8");

    /* TF32 products in an fp32 matmul, K = 1024 */
    tf32_inputs = 1;
    verdicts("matmul", NULL, "sum=any", "16x16x1024", NULL, mm_ktile32_tf32, &f, &i, &n);
    printf("matmul tf32 products, any:        %lld FAIL %lld INCONCLUSIVE of %lld\n", (long long)f, (long long)i,
           (long long)n);
    verdicts("matmul", NULL, "sum=blocked:32", "16x16x1024", NULL, mm_ktile32_tf32, &f, &i, &n);
    printf("matmul tf32 products, blocked:32: %lld FAIL %lld INCONCLUSIVE of %lld\n", (long long)f, (long long)i,
           (long long)n);
    cr_expect_gt(f, 0, "TF32 products not detected under the geometry");
    tf32_inputs = 0;
    verdicts("matmul", NULL, "sum=blocked:32", "16x16x1024", NULL, mm_ktile32_tf32, &f, &i, &n);
    cr_expect_eq(f, 0, "the fp32 ktile32 matmul FAILs under blocked:32");

    /* dw partials of 256-row programs stored in bf16, 32768 rows */
    dw_bf16_blocks = 1;
    verdicts("rms_norm_bwd", NULL, "sum=any", "32768x64", NULL, rmsb_blocked, &f, &i, &n);
    printf("rms_norm_bwd dw bf16 blocks, any: %lld FAIL %lld INCONCLUSIVE of %lld\n", (long long)f, (long long)i,
           (long long)n);
    verdicts("rms_norm_bwd", NULL, "sum=blocked:256", "32768x64", NULL, rmsb_blocked, &f, &i, &n);
    printf("rms_norm_bwd dw bf16 blocks, blocked:256: %lld FAIL %lld INCONCLUSIVE of %lld\n", (long long)f,
           (long long)i, (long long)n);
    cr_expect_gt(f, 0, "bf16 dw partials not detected under the geometry");
    dw_bf16_blocks = 0;
    verdicts("rms_norm_bwd", NULL, "sum=blocked:256", "32768x64", NULL, rmsb_blocked, &f, &i, &n);
    cr_expect_eq(f, 0, "the fp32 blocked dw FAILs under blocked:256");
}

/* The liger-tl-sum preset gives rms_norm and layer_norm Liger's block geometry; a block
 * kernel within it (256 threads, 17 terms each at N = 4097, depth 8) PASSes under it. */
Test(sum_geom, liger_preset, .timeout = 600)
{
    nmo_plan p;
    nmo_err err = {{0}};
    nmo_plan_default(&p, NMO_BF16);
    cr_assert_eq(nmo_plan_parse_op(&p, "rms_norm", "preset=liger-tl-sum", &err), NMO_OK, "%s", err.msg);
    cr_expect(p.sum == NMO_SUM_GEOM && p.geo_b == 64 && p.geo_d == 10 && p.geo_p == 1);
    cr_expect_eq(p.inter, NMO_BF16);
    nmo_plan_default(&p, NMO_BF16);
    cr_assert_eq(nmo_plan_parse_op(&p, "softmax", "preset=liger-tl-sum", &err), NMO_OK, "%s", err.msg);
    cr_expect_eq(p.sum, NMO_SUM_ANY, "softmax's Liger kernels are not all single-block: no geometry");
    const nmo_op *op = nmo_op_find("rms_norm");
    const nmo_cand *cand = nmo_cand_find("rms_norm", "block256");
    cr_assert(op && cand);
    for (int di = 0; di < 2; di++) {
        nmo_fmt dt = di ? NMO_FP16 : NMO_BF16;
        nmo_plan_default(&p, dt);
        cr_assert_eq(nmo_plan_parse_op(&p, "rms_norm", "preset=liger-tl-sum fn=cuda inter=fp32", &err), NMO_OK);
        for (size_t f = 0; f < sizeof op_fams / sizeof op_fams[0]; f++) {
            nmo_report r;
            cr_assert_eq(run_op(&r, op, cand, &p, "8x4097", op_fams[f], 1, NULL, NULL, &err), NMO_OK, "%s", err.msg);
            cr_expect_eq(r.n_fail, 0, "block256 rms_norm under preset=liger-tl-sum: %lld FAIL", (long long)r.n_fail);
            nmo_report_free(&r);
        }
    }
}

/* The geometries the CPU candidates declare (refs/cand/cand_geom.c): every entry names a
 * correct candidate of its operator and parses at that operator's test shapes; the shape
 * tokens expand as pinned; a candidate without one keeps its plan. */
Test(sum_geom, cand_geometry_registry)
{
    int listed = 0;
    for (int i = 0; i < nmo_cand_count(); i++) {
        const nmo_cand *c = nmo_cand_at(i);
        const char *g = nmo_cand_geom(c);
        if (!g) continue;
        listed++;
        cr_expect(c->correct, "%s/%s: a mutant declares a geometry", c->op, c->name);
        const nmo_op *op = nmo_op_find(c->op);
        cr_assert(op, "%s", c->op);
        cr_expect(op->plan_fields & NMO_PF_SUM_GEOM, "%s does not model the geometry", c->op);
        nmo_test_shape sh[4];
        int nsh = nmo_test_shapes(op, sh, 0);
        for (int h = 0; h < nsh; h++) {
            nmo_plan p;
            nmo_err err = {{0}};
            int dec = 0;
            cr_expect_eq(nmo_cand_geom_plan(&p, c, NMO_BF16, sh[h].nshape, sh[h].shape, &dec, &err), NMO_OK,
                         "%s/%s '%s': %s", c->op, c->name, g, err.msg);
            cr_expect(dec && p.sum == NMO_SUM_GEOM, "%s/%s", c->op, c->name);
        }
    }
    cr_expect_eq(listed, nmo_cand_geom_count(), "an entry names no candidate (stale or misspelt)");
    static const struct {
        const char *g, *shape, *want;
    } ex[] = {
        {"sum=blocked:{L/256}:8:{R}", "4096x4096", "sum=blocked:16:8:4096"},
        {"sum=blocked:{L/256}:8:{R}", "2x3x1025", "sum=blocked:5:8:6"},
        {"sum=tree:{log2L}", "6x4097", "sum=tree:13"},
        {"sum=tree:{log2L}", "6x4096", "sum=tree:12"},
        {"sum=tree:{log2RL}", "6x1025", "sum=tree:13"},
        {"sum=tree:{log2L}", "5x1", "sum=tree:1"}, /* a geometry of one term at least */
        {"sum=blocked:n/256:8", "6x4097", "sum=blocked:n/256:8"},
    };
    for (size_t i = 0; i < sizeof ex / sizeof ex[0]; i++) {
        int ns;
        int64_t sh[NMO_MAX_DIMS];
        nmo_err err = {{0}};
        cr_assert_eq(nmo_shape_parse(&ns, sh, ex[i].shape, &err), NMO_OK);
        char buf[128];
        cr_expect_eq(nmo_cand_geom_text(buf, sizeof buf, ex[i].g, ns, sh, &err), NMO_OK, "%s", err.msg);
        cr_expect_str_eq(buf, ex[i].want, "%s at %s", ex[i].g, ex[i].shape);
    }
    int ns;
    int64_t sh[NMO_MAX_DIMS];
    nmo_err err = {{0}};
    cr_assert_eq(nmo_shape_parse(&ns, sh, "4x8", &err), NMO_OK);
    char buf[128];
    cr_expect_eq(nmo_cand_geom_text(buf, sizeof buf, "sum=blocked:{N/4}", ns, sh, &err), NMO_ERR_PARSE);
    cr_expect_eq(nmo_cand_geom_text(buf, sizeof buf, "sum=blocked:{L/0}", ns, sh, &err), NMO_ERR_PARSE);
    /* no declaration: the plan stays the candidate's own */
    const nmo_cand *seq = nmo_cand_find("rms_norm", "seq");
    cr_assert(seq && !nmo_cand_geom(seq));
    nmo_plan p;
    int dec = 1;
    cr_expect_eq(nmo_cand_geom_plan(&p, seq, NMO_FP32, ns, sh, &dec, &err), NMO_OK);
    cr_expect(!dec && p.sum == NMO_SUM_ANY);
}
