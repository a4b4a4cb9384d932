/* Enclosure soundness of the primitives the softmax family added or changed:
 *
 *  - enc_sum_sharp: every evaluation order and tree shape (sampled: random trees, the
 *    sequential orders largest-first and smallest-first) of every choice of points in the
 *    term enclosures, rounded RN in acc, lies in the fast and the certified enclosure;
 *    fast == certified unless the fast one flags UNC. Term sets include a dominant term
 *    with many tiny ones just below half an ulp of it (the worst case of the dominant-term
 *    bound: every addition rounds the tiny term away), exact zeros, mixed signs, and
 *    terms that align their errors. The largest observed |error| / model bound is printed
 *    and must come near 1 (a test whose data never approaches the bound could not fail).
 *  - enc_dot_sharp_d: the same for dot products with a random FMA-or-not choice at every
 *    multiply-add, for products exact in acc (bf16 inputs, fp32 acc) and not (fp32
 *    inputs; bf16 inputs with a bf16 accumulator).
 *  - enc_fma (fast engine: exact RN(v + err) on fp32 plans): fused and unfused results at
 *    exact fp32 midpoints, at midpoints perturbed by a term binary64 cannot hold, and on
 *    random operands, lie in both enclosures; fast == certified and never UNC there. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/enc_cert.h"
#include "engine/enc_fast.h"
#include "numoracle/numoracle.h"

/* RN into f of the exact value s + e (s = RN64(s + e) of a TwoSum; |e| <= ulp64(s)/2). */
static double rn_pair(nmo_fmt f, double s, double e)
{
    double a = nmo_fmt_round(f, s, NMO_RNE, 0);
    if (e == 0 || a == s) return a;
    double d = nmo_fmt_round(f, s, NMO_RD, 0), u = nmo_fmt_round(f, s, NMO_RU, 0);
    if (d != u && s - d == u - s) return e > 0 ? u : d;
    return a;
}

static double two_sum(double a, double b, double *e)
{
    double s = a + b, bb = s - a;
    *e = (a - (s - bb)) + (b - bb);
    return s;
}

/* RN_f(p + c), p exact in binary64 (a product of <= 26-bit values), c an f value. */
static double rn_add(nmo_fmt f, double p, double c)
{
    double e, s = two_sum(p, c, &e);
    return rn_pair(f, s, e);
}

static uint64_t g_rng;
static uint64_t rnd(void)
{
    g_rng += 0x9e3779b97f4a7c15ULL;
    uint64_t z = g_rng;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static double unif(void) { return ((double)(rnd() >> 11) + 0.5) * 0x1p-53; }
static double gauss(void) { return sqrt(-2 * log(unif())) * cos(6.283185307179586 * unif()); }

/* ------------------------------------------------------------------ shared checking */

typedef struct {
    nmo_fmt acc;
    nmo_plan plan;
    nmo_fctx fc;
    nmo_cctx cc;
    double lo, hi, exact, bound, worst;
    long evals, outside, mismatch, unc;
} ctx_t;

static void ctx_init(ctx_t *t, nmo_fmt in, nmo_fmt compute, nmo_fmt acc)
{
    memset(t, 0, sizeof *t);
    nmo_plan_default(&t->plan, in);
    t->plan.compute = t->plan.inter = compute;
    t->plan.acc = acc;
    t->acc = acc;
    cr_assert_eq(nmo_fctx_init(&t->fc, &t->plan, NULL), NMO_OK);
    cr_assert_eq(nmo_cctx_init(&t->cc, &t->plan, NULL), NMO_OK);
}

static void ctx_done(ctx_t *t)
{
    nmo_fctx_clear(&t->fc);
    nmo_cctx_clear(&t->cc);
}

/* Compare the engines and set the enclosure the results are checked against (the
 * certified one, the definition; the fast one must equal it or flag UNC). */
static void engines(ctx_t *t, const nmo_fenc *ef, nmo_cenc *ec, const char *what)
{
    nmo_fenc e;
    nmo_cenc_export(&t->cc, &e, ec);
    if (ef->flags & NMO_EF_UNC) t->unc++;
    else if (!(ef->lo == e.lo && ef->hi == e.hi)) {
        t->mismatch++;
        if (t->mismatch < 6)
            cr_log_error("%s: fast [%a, %a] != certified [%a, %a]", what, ef->lo, ef->hi, e.lo, e.hi);
    }
    t->lo = e.lo;
    t->hi = e.hi;
}

/* Both engines' nmo_*_sum_sharp of the same terms, compared by engines(). */
static void sum_sharp_engines(ctx_t *t, const nmo_fenc *xf, const nmo_cenc *xc, int64_t n, const char *what)
{
    nmo_fenc rf;
    nmo_cenc rc;
    nmo_cenc_init(&t->cc, &rc);
    nmo_fenc_sum_sharp(&t->fc, &rf, xf, n);
    nmo_cenc_sum_sharp(&t->cc, &rc, xc, n);
    engines(t, &rf, &rc, what);
    nmo_cenc_clear(&t->cc, &rc);
}

static void result(ctx_t *t, double r, const char *what)
{
    t->evals++;
    if (!(r >= t->lo && r <= t->hi)) {
        t->outside++;
        if (t->outside < 6)
            cr_log_error("%s: result %a outside [%a, %a] (exact %a)", what, r, t->lo, t->hi, t->exact);
    }
    if (t->bound > 0 && isfinite(r)) {
        double q = fabs(r - t->exact) / t->bound;
        if (q > t->worst) t->worst = q;
    }
}

/* ------------------------------------------------------------------ term sets */

#define NMAX 96

/* Term set of kind k (values of format f). */
static int make_terms(nmo_fmt f, int kind, double *v)
{
    int n = 2 + (int)(rnd() % (NMAX - 2));
    double ulp1 = nmo_fmt_ulp(f, 1.0);
    for (int i = 0; i < n; i++) {
        double x;
        switch (kind) {
        case 0: /* dominant 1 and tiny same-sign terms just below half an ulp of it */
            x = i == 0 ? 1.0 : ulp1 * (0.40 + 0.09 * unif());
            break;
        case 1: /* dominant and tiny mixed-sign terms of random size */
            x = i == 0 ? 1 + unif() : ldexp(gauss(), -10 - (int)(rnd() % 30));
            break;
        case 2: /* exact zeros among a few terms */
            x = (rnd() % 4) ? 0.0 : gauss();
            break;
        case 3: /* same sign, nearly equal: errors align */
            x = 1 + unif() / 16;
            break;
        case 4: /* mixed signs, wide exponents */
            x = ldexp(gauss(), (int)(rnd() % 16) - 8);
            break;
        default: /* dominant with medium terms */
            x = i == 0 ? 64 * (1 + unif()) : gauss();
            break;
        }
        v[i] = nmo_fmt_round(f, x, NMO_RNE, 0);
    }
    /* shuffle: the dominant term anywhere */
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(rnd() % (uint64_t)(i + 1));
        double s = v[i];
        v[i] = v[j];
        v[j] = s;
    }
    return n;
}

/* ------------------------------------------------------------------ sums */

/* one evaluation: random tree (mode 0), sequential largest-|x|-first (1), smallest-first (2) */
static double eval_sum(nmo_fmt f, const double *x, int n, int mode)
{
    double w[NMAX];
    memcpy(w, x, (size_t)n * sizeof(double));
    if (mode) {
        for (int i = 1; i < n; i++) /* insertion sort by |x| */
            for (int j = i; j > 0 && (mode == 1 ? fabs(w[j]) > fabs(w[j - 1]) : fabs(w[j]) < fabs(w[j - 1])); j--) {
                double s = w[j];
                w[j] = w[j - 1];
                w[j - 1] = s;
            }
        double a = w[0];
        for (int i = 1; i < n; i++) a = rn_add(f, a, w[i]);
        return a;
    }
    int m = n;
    while (m > 1) {
        int i = (int)(rnd() % (uint64_t)m), j = (int)(rnd() % (uint64_t)(m - 1));
        if (j >= i) j++;
        double s = rn_add(f, w[i], w[j]);
        int lo = i < j ? i : j, hi = i < j ? j : i;
        w[lo] = s;
        w[hi] = w[m - 1];
        m--;
    }
    return w[0];
}

static void sum_case(ctx_t *t, int kind, int intervals)
{
    double v[NMAX], lo[NMAX], hi[NMAX];
    int n = make_terms(t->acc, kind, v);
    nmo_fenc xf[NMAX];
    nmo_cenc xc[NMAX];
    double sabs = 0, big = 0, exact = 0;
    int k = 0;
    for (int i = 0; i < n; i++) {
        lo[i] = hi[i] = v[i];
        if (intervals && v[i] != 0 && rnd() % 2)
            for (int s = (int)(rnd() % 3); s >= 0; s--) hi[i] = nmo_fmt_next_up(t->acc, hi[i]);
        xf[i].lo = lo[i], xf[i].hi = hi[i], xf[i].flags = 0, xf[i].mag = nmo_mag_abs(lo[i], hi[i]);
        nmo_cenc_init(&t->cc, &xc[i]);
        mpfr_set_d(xc[i].lo, lo[i], MPFR_RNDN);
        mpfr_set_d(xc[i].hi, hi[i], MPFR_RNDN);
        xc[i].flags = 0, xc[i].mag = xf[i].mag;
        double m = fmax(fabs(lo[i]), fabs(hi[i]));
        sabs += m, big = fmax(big, m);
        k += lo[i] != 0 || hi[i] != 0;
    }
    sum_sharp_engines(t, xf, xc, n, "sum_sharp");
    double R = sabs - big, ua = t->fc.ua;
    double bj = (k > 1 ? k - 1 : 0) * ua * sabs, br = R * (1 + 4 * k * ua);
    t->bound = fmin(bj, br);
    for (int rep = 0; rep < 40; rep++) {
        double pt[NMAX];
        exact = 0;
        for (int i = 0; i < n; i++) {
            pt[i] = lo[i];
            if (hi[i] != lo[i] && rnd() % 2) pt[i] = hi[i];
            exact += pt[i]; /* for the ratio report only */
        }
        t->exact = exact;
        result(t, eval_sum(t->acc, pt, n, rep < 3 ? rep : 0), "sum_sharp");
    }
    for (int i = 0; i < n; i++) nmo_cenc_clear(&t->cc, &xc[i]);
}

static void sum_suite(nmo_fmt acc, int trials)
{
    ctx_t t;
    ctx_init(&t, acc, acc, acc);
    g_rng = 12345 + (uint64_t)acc;
    for (int tr = 0; tr < trials; tr++) sum_case(&t, tr % 6, tr % 3 == 2);
    printf("sum_sharp %s: %ld results, %ld outside, %ld fast!=cert, %ld UNC, worst |error|/bound = %.3f\n",
           nmo_fmt_name(acc), t.evals, t.outside, t.mismatch, t.unc, t.worst);
    cr_expect_eq(t.outside, 0);
    cr_expect_eq(t.mismatch, 0);
    cr_expect_gt(t.worst, 0.5, "the data never approaches the bound (worst ratio %.3f)", t.worst);
    ctx_done(&t);
}

Test(sum_sharp, bf16) { sum_suite(NMO_BF16, 600); }
Test(sum_sharp, fp16) { sum_suite(NMO_FP16, 600); }
Test(sum_sharp, fp32) { sum_suite(NMO_FP32, 600); }

/* dst = the certified enclosure [f.lo, f.hi] (dst initialised) */
static void cenc_of(ctx_t *t, nmo_cenc *dst, const nmo_fenc *f)
{
    nmo_cenc_set_d(&t->cc, dst, f->lo);
    if (f->hi != f->lo) {
        nmo_cenc tmp;
        nmo_cenc_init(&t->cc, &tmp);
        nmo_cenc_set_d(&t->cc, &tmp, f->hi);
        nmo_cenc_hull(&t->cc, dst, dst, &tmp);
        nmo_cenc_clear(&t->cc, &tmp);
    }
}

/* Long sums (a scalar loss over a whole tensor): the naive binary64 radius n 2^-53 A
 * leaves the snap of slo - em undecided in a few percent of sums of 50k terms; the
 * compensated redo (nmo_fenc_sum_sharp) must decide every one, equal to the certified
 * engine. The test also counts the sums the naive radius alone would have left undecided:
 * if none, the data never exercised the redo and the test says so. */
Test(sum_sharp, long_sums_decided, .timeout = 600)
{
    enum { N = 50000, TRIALS = 60 };
    ctx_t t;
    ctx_init(&t, NMO_FP32, NMO_FP32, NMO_FP32);
    g_rng = 777;
    nmo_fenc *xf = malloc(N * sizeof *xf);
    nmo_cenc *xc = malloc(N * sizeof *xc);
    for (int i = 0; i < N; i++) nmo_cenc_init(&t.cc, &xc[i]);
    long naive_amb = 0;
    for (int tr = 0; tr < TRIALS; tr++) {
        double slo = 0, shi = 0, a = 0;
        for (int i = 0; i < N; i++) {
            /* mixed signs, point and interval terms (a KL sum: terms of both signs) */
            double v = nmo_fmt_round(NMO_FP32, gauss() * ldexp(1, (int)(rnd() % 8)), NMO_RNE, 0);
            double w = (rnd() % 2) ? nmo_fmt_next_up(NMO_FP32, v) : v;
            xf[i] = (nmo_fenc){v, w, 0, nmo_mag_abs(v, w)};
            cenc_of(&t, &xc[i], &xf[i]);
            slo += v, shi += w, a += fmax(fabs(v), fabs(w));
        }
        /* the naive radius of the lower endpoint (no dominant term here: em = (k-1) u A) */
        double em = (double)(N - 1) * t.fc.ua * a;
        double e = (double)N * 0x1p-53 * a + em * (double)(N + 8) * 0x1p-52;
        double vlo = slo - em, vhi = shi + em;
        naive_amb += nmo_fmt_round(NMO_FP32, vlo - e, NMO_RU, 0) != nmo_fmt_round(NMO_FP32, vlo + e, NMO_RU, 0) ||
                     nmo_fmt_round(NMO_FP32, vhi - e, NMO_RD, 0) != nmo_fmt_round(NMO_FP32, vhi + e, NMO_RD, 0);
        sum_sharp_engines(&t, xf, xc, N, "long sum");
    }
    printf("sum_sharp long sums: %d sums of %d fp32 terms, %ld undecided by the naive radius, "
           "%ld UNC after the compensated redo, %ld fast!=cert\n", TRIALS, N, naive_amb, t.unc, t.mismatch);
    cr_expect_eq(t.mismatch, 0);
    cr_expect_eq(t.unc, 0, "%ld long sums still undecided", t.unc);
    cr_expect_gt(naive_amb, 0, "no sum needed the compensated redo: the data does not test it");
    for (int i = 0; i < N; i++) nmo_cenc_clear(&t.cc, &xc[i]);
    free(xf);
    free(xc);
    ctx_done(&t);
}

/* Sums whose bound endpoint lies exactly on the acc lattice (equal terms: a near-uniform
 * kl_div over 16M elements sums 16M copies of one fp32 value, every binary64 sum is exact
 * and slo - em is itself an fp32 value): no binary64 radius decides that snap, so
 * nmo_fenc_sum_sharp finishes such sums in the certified engine from the same terms
 * (nmo_cenc_sum_sharp_fenc). The result must equal nmo_cenc_sum_sharp exactly, and the
 * finish must be what decided them (n_sum_cert counts it; if 0 the data never reached
 * it). Second part: the finish itself against nmo_cenc_sum_sharp on random sums. */
Test(sum_sharp, lattice_endpoints_certified, .timeout = 600)
{
    ctx_t t;
    ctx_init(&t, NMO_FP32, NMO_FP32, NMO_FP32);
    g_rng = 4242;
    enum { NBIG = 70000 };
    static const int ns[] = {2, 3, 17, 256, 4096, 65536}; /* second part */
    nmo_fenc *xf = malloc(NBIG * sizeof *xf);
    nmo_cenc *xc = malloc(NBIG * sizeof *xc);
    for (int i = 0; i < NBIG; i++) nmo_cenc_init(&t.cc, &xc[i]);
    long sums = 0;
    /* equal terms of few significant bits, some negated, point or one-ulp intervals, in
     * random counts: search until enough sums land an endpoint on the lattice */
    for (int tr = 0; tr < 200000 && t.fc.n_sum_cert < 40; tr++) {
        int n = 2 + (int)(rnd() % 400);
        int bits = 1 + (int)(rnd() % 10);
        double v = ldexp((double)(1 + rnd() % ((1u << bits) - 1 + 1)), (int)(rnd() % 40) - 30);
        if (rnd() % 2) v = -v;
        double w = rnd() % 2 ? nmo_fmt_next_up(NMO_FP32, v) : v;
        int negk = (int)(rnd() % 4) ? 0 : 2 + (int)(rnd() % 7);
        for (int i = 0; i < n; i++) {
            int neg = negk && i % negk == 1;
            xf[i] = neg ? (nmo_fenc){-w, -v, 0, nmo_mag_abs(v, w)} : (nmo_fenc){v, w, 0, nmo_mag_abs(v, w)};
            cenc_of(&t, &xc[i], &xf[i]);
        }
        sum_sharp_engines(&t, xf, xc, n, "equal-term sum");
        sums++;
    }
    long finished = (long)t.fc.n_sum_cert;
    printf("sum_sharp lattice endpoints: %ld equal-term sums, %ld finished certified, %ld UNC, "
           "%ld fast!=cert\n", sums, finished, t.unc, t.mismatch);
    cr_expect_eq(t.mismatch, 0);
    cr_expect_eq(t.unc, 0, "%ld sums left undecided", t.unc);
    cr_expect_gt(finished, 0, "no sum reached the certified finish: the data does not test it");

    /* the finish alone == nmo_cenc_sum_sharp, random mixed sums of every size above */
    long diff = 0;
    for (int ni = 0; ni < (int)(sizeof ns / sizeof ns[0]); ni++)
        for (int tr = 0; tr < 4; tr++) {
            int n = ns[ni];
            for (int i = 0; i < n; i++) {
                double v = nmo_fmt_round(NMO_FP32, gauss() * ldexp(1, (int)(rnd() % 40) - 20), NMO_RNE, 0);
                double w = (rnd() % 2) ? nmo_fmt_next_up(NMO_FP32, v) : v;
                if (rnd() % 5 == 0) v = w = 0;
                xf[i] = (nmo_fenc){v, w, 0, nmo_mag_abs(v, w)};
                cenc_of(&t, &xc[i], &xf[i]);
            }
            nmo_fenc rf, e;
            nmo_cenc rc;
            nmo_cenc_init(&t.cc, &rc);
            cr_assert_eq(nmo_cenc_sum_sharp_fenc(&t.cc, &rf, xf, n), 0);
            nmo_cenc_sum_sharp(&t.cc, &rc, xc, n);
            nmo_cenc_export(&t.cc, &e, &rc);
            if (!(rf.lo == e.lo && rf.hi == e.hi && rf.flags == e.flags && nmo_mag_same(rf.mag, e.mag))) {
                diff++;
                cr_log_error("n %d: finish [%a, %a] != certified [%a, %a]", n, rf.lo, rf.hi, e.lo, e.hi);
            }
            nmo_cenc_clear(&t.cc, &rc);
        }
    cr_expect_eq(diff, 0);
    for (int i = 0; i < NBIG; i++) nmo_cenc_clear(&t.cc, &xc[i]);
    free(xf);
    free(xc);
    ctx_done(&t);
}

/* Term escalation (kl_div, jsd; cross_entropy's reductions over rows, a row being the
 * term): with every term recomputed by the certified engine (escalate_terms), fast +
 * escalation still equals the certified engine alone on every family and parameter
 * value, and the report counts the recomputed terms (want). A second parameter pi2 = pv2
 * is set when pi2 >= 0. */
static void term_esc_case(const char *name, int pi, double pv, int pi2, double pv2, int64_t want,
                          int f, long *cases)
{
    const nmo_op *op = nmo_op_find(name);
    cr_assert_not_null(op);
    int64_t shape[2] = {3, 257};
    nmo_plan p;
    nmo_plan_default(&p, NMO_BF16);
    nmo_case c;
    nmo_err err = {{0}};
    double val[NMO_MAX_PARAMS] = {0};
    int set[NMO_MAX_PARAMS] = {0};
    val[pi] = pv, set[pi] = 1;
    if (pi2 >= 0) val[pi2] = pv2, set[pi2] = 1;
    cr_assert_eq(nmo_case_init_params(&c, op, &p, 2, shape, val, set, &err), NMO_OK, "%s", err.msg);
    nmo_case_fill(&c, f, 11);
    nmo_report a, b;
    nmo_check_opts o = {.keep_enc = 1, .escalate_terms = 1};
    o.mode = NMO_MODE_ESCALATE;
    cr_assert_eq(nmo_check(&a, &c, NULL, &o, &err), NMO_OK, "%s", err.msg);
    o.mode = NMO_MODE_CERT;
    cr_assert_eq(nmo_check(&b, &c, NULL, &o, &err), NMO_OK, "%s", err.msg);
    cr_expect_eq(a.n_term_esc, want, "%s param %g %s: %lld terms recomputed", name, pv,
                 nmo_family_name(f), (long long)a.n_term_esc);
    const nmo_fenc *x = &a.enc[0][0], *y = &b.enc[0][0];
    cr_expect((x->lo == y->lo || (x->lo != x->lo && y->lo != y->lo)) &&
                  (x->hi == y->hi || (x->hi != x->hi && y->hi != y->hi)) && x->flags == y->flags,
              "%s param %g %s: fast [%a, %a] != certified [%a, %a]", name, pv, nmo_family_name(f),
              x->lo, x->hi, y->lo, y->hi);
    nmo_report_free(&a);
    nmo_report_free(&b);
    nmo_case_free(&c);
    (*cases)++;
}

Test(term_escalation, all_terms, .timeout = 600)
{
    long cases = 0;
    for (int f = 0; f < NMO_FAM_COUNT; f++) {
        /* every term, plus jsd's per-row exp(max) */
        for (int red = 1; red <= 3; red++) term_esc_case("kl_div", 0, red, -1, 0, 3 * 257, f, &cases);
        static const double betas[] = {0, 0.5, 1, 0.3};
        for (int k = 0; k < 4; k++) term_esc_case("jsd", 0, betas[k], -1, 0, 3 * 257 + 3, f, &cases);
        /* rows 0 and 2 (row 1 has ignore_index), each evaluated once */
        static const double ls[] = {0, 0.1};
        for (int red = 1; red <= 2; red++)
            for (int k = 0; k < 2; k++) term_esc_case("cross_entropy", 2, red, 1, ls[k], 2, f, &cases);
    }
    printf("term escalation kl_div, jsd, cross_entropy: %ld cases, every term recomputed certified, "
           "fast == certified\n", cases);
}

/* ------------------------------------------------------------------ dot products */

static double eval_dot(nmo_fmt f, const double *x, const double *y, int n, int mode)
{
    /* items: pending product (not yet rounded) or a value */
    double a[NMAX], b[NMAX], v[NMAX];
    int prod[NMAX];
    int idx[NMAX];
    for (int i = 0; i < n; i++) a[i] = x[i], b[i] = y[i], prod[i] = 1, idx[i] = i;
    if (mode) { /* sequential in index order (mode 1) or reversed (2), FMA at random */
        double acc = 0;
        for (int s = 0; s < n; s++) {
            int i = mode == 1 ? s : n - 1 - s;
            double p = x[i] * y[i];
            acc = rnd() % 2 ? rn_add(f, p, acc) : rn_add(f, nmo_fmt_round(f, p, NMO_RNE, 0), acc);
        }
        return acc;
    }
    int m = n;
    (void)idx;
    while (m > 1) {
        int i = (int)(rnd() % (uint64_t)m), j = (int)(rnd() % (uint64_t)(m - 1));
        if (j >= i) j++;
        double r;
        double vi = prod[i] ? nmo_fmt_round(f, a[i] * b[i], NMO_RNE, 0) : v[i];
        double vj = prod[j] ? nmo_fmt_round(f, a[j] * b[j], NMO_RNE, 0) : v[j];
        if (prod[i] && rnd() % 2) r = rn_add(f, a[i] * b[i], vj);       /* fma(a_i, b_i, vj) */
        else if (prod[j] && rnd() % 2) r = rn_add(f, a[j] * b[j], vi);  /* fma(a_j, b_j, vi) */
        else r = rn_add(f, vi, vj);
        int lo = i < j ? i : j, hi = i < j ? j : i;
        prod[lo] = 0, v[lo] = r;
        a[hi] = a[m - 1], b[hi] = b[m - 1], v[hi] = v[m - 1], prod[hi] = prod[m - 1];
        m--;
    }
    return prod[0] ? nmo_fmt_round(f, a[0] * b[0], NMO_RNE, 0) : v[0];
}

static void dot_suite(nmo_fmt in, nmo_fmt acc, int trials, double want)
{
    ctx_t t;
    ctx_init(&t, in, acc, acc);
    g_rng = 777 + 31 * (uint64_t)in + (uint64_t)acc;
    long n_exact = 0;
    for (int tr = 0; tr < trials; tr++) {
        double x[NMAX], y[NMAX];
        int kind = tr % 6;
        int n = make_terms(in, kind, x);
        for (int i = 0; i < n; i++) {
            double g = kind == 2 || kind == 0 ? 1.0 : 1 + gauss() / 8;
            if (kind == 2 && rnd() % 3 == 0) g = 0;
            y[i] = nmo_fmt_round(in, g, NMO_RNE, 0);
        }
        double sabs = 0, big = 0, exact = 0;
        int k = 0, ex = 1;
        for (int i = 0; i < n; i++) {
            double p = x[i] * y[i];
            sabs += fabs(p), big = fmax(big, fabs(p)), exact += p;
            k += p != 0;
            if (p != 0 && nmo_fmt_round(acc, p, NMO_RNE, 0) != p) ex = 0;
        }
        n_exact += ex;
        nmo_fenc ef;
        nmo_cenc ec;
        nmo_cenc_init(&t.cc, &ec);
        nmo_fenc_dot_sharp_d(&t.fc, &ef, x, y, n);
        nmo_cenc_dot_sharp_d(&t.cc, &ec, x, y, n);
        engines(&t, &ef, &ec, "dot_sharp_d");
        nmo_cenc_clear(&t.cc, &ec);
        double R = sabs - big, ua = t.fc.ua;
        t.bound = ex ? fmin((k > 1 ? k - 1 : 0) * ua * sabs, R * (1 + 4 * k * ua))
                     : fmin(k * ua * sabs, ua * big + R * (1 + 8 * k * ua));
        t.exact = exact;
        for (int rep = 0; rep < 40; rep++) result(&t, eval_dot(acc, x, y, n, rep < 3 ? rep : 0), "dot_sharp_d");
    }
    printf("dot_sharp_d in=%s acc=%s: %ld results (%ld of %d sets with exact products), %ld outside, "
           "%ld fast!=cert, %ld UNC, worst |error|/bound = %.3f\n",
           nmo_fmt_name(in), nmo_fmt_name(acc), t.evals, n_exact, trials, t.outside, t.mismatch, t.unc,
           t.worst);
    cr_expect_eq(t.outside, 0);
    cr_expect_eq(t.mismatch, 0);
    cr_expect_gt(t.worst, want, "the data never approaches the bound (worst ratio %.3f)", t.worst);
    ctx_done(&t);
}

Test(dot_sharp, bf16_in_fp32_acc_exact_products) { dot_suite(NMO_BF16, NMO_FP32, 600, 0.3); }
Test(dot_sharp, bf16_in_bf16_acc) { dot_suite(NMO_BF16, NMO_BF16, 600, 0.3); }
Test(dot_sharp, fp32_in_fp32_acc) { dot_suite(NMO_FP32, NMO_FP32, 600, 0.1); }

/* ------------------------------------------------------------------ fma at ties */

static void fma_one(ctx_t *t, double a, double b, double c, long *ties)
{
    nmo_fenc fa = {a, a, 0, fabs(a)}, fb = {b, b, 0, fabs(b)}, fcv = {c, c, 0, fabs(c)}, fr;
    nmo_cenc ca, cb, cc, cr;
    nmo_cenc_init(&t->cc, &ca), nmo_cenc_init(&t->cc, &cb), nmo_cenc_init(&t->cc, &cc), nmo_cenc_init(&t->cc, &cr);
    nmo_cenc_set_d(&t->cc, &ca, a), nmo_cenc_set_d(&t->cc, &cb, b), nmo_cenc_set_d(&t->cc, &cc, c);
    nmo_fenc_fma(&t->fc, &fr, &fa, &fb, &fcv);
    nmo_cenc_fma(&t->cc, &cr, &ca, &cb, &cc);
    engines(t, &fr, &cr, "fma");
    double p = a * b, e, s = two_sum(p, c, &e);
    double d = nmo_fmt_round(NMO_FP32, s, NMO_RD, 0), u = nmo_fmt_round(NMO_FP32, s, NMO_RU, 0);
    if (d != u && s - d == u - s) (*ties)++;
    t->exact = s;
    result(t, rn_add(NMO_FP32, p, c), "fma fused");
    result(t, rn_add(NMO_FP32, nmo_fmt_round(NMO_FP32, p, NMO_RNE, 0), c), "fma unfused");
    nmo_cenc_clear(&t->cc, &ca), nmo_cenc_clear(&t->cc, &cb), nmo_cenc_clear(&t->cc, &cc), nmo_cenc_clear(&t->cc, &cr);
}

Test(fma_exact, ties_and_random)
{
    ctx_t t;
    ctx_init(&t, NMO_BF16, NMO_FP32, NMO_FP32);
    g_rng = 99;
    long ties = 0;
    for (int tr = 0; tr < 20000; tr++) {
        double a, b, c;
        if (tr % 3 == 0) { /* (1 + i 2^-12)(1 + j 2^-12), ij odd: an fp32 midpoint; c tiny or 0 */
            int i = 2 * (int)(rnd() % 512) + 1, j = 2 * (int)(rnd() % 512) + 1;
            a = 1 + i * 0x1p-12, b = 1 + j * 0x1p-12;
            int ec = (int)(rnd() % 40);
            c = ec == 0 ? 0.0 : (rnd() % 2 ? 1 : -1) * ldexp(1 + (double)(rnd() % 8) / 8, -40 - ec);
        } else if (tr % 3 == 1) { /* bf16 a, b and an fp32 c one binade below a*b */
            a = nmo_fmt_round(NMO_BF16, gauss(), NMO_RNE, 0);
            b = nmo_fmt_round(NMO_BF16, gauss(), NMO_RNE, 0);
            c = nmo_fmt_round(NMO_FP32, -a * b * (0.5 + unif() / 2), NMO_RNE, 0);
            if (rnd() % 2) c = -c;
        } else { /* random fp32 */
            a = nmo_fmt_round(NMO_FP32, gauss(), NMO_RNE, 0);
            b = nmo_fmt_round(NMO_FP32, ldexp(gauss(), (int)(rnd() % 20) - 10), NMO_RNE, 0);
            c = nmo_fmt_round(NMO_FP32, ldexp(gauss(), (int)(rnd() % 20) - 10), NMO_RNE, 0);
        }
        fma_one(&t, a, b, c, &ties);
    }
    printf("fma fp32 plan: %ld results, %ld at exact fp32 midpoints, %ld outside, %ld fast!=cert, %ld UNC\n",
           t.evals, ties, t.outside, t.mismatch, t.unc);
    cr_expect_eq(t.outside, 0);
    cr_expect_eq(t.mismatch, 0);
    cr_expect_eq(t.unc, 0, "the fp32 fused value is decided exactly: no UNC");
    cr_expect_gt(ties, 1000, "midpoints must be exercised");
    ctx_done(&t);
}
