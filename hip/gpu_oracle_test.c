/* nmo_gpu_oracle_test: the GPU tier (nmo_gpu_check) against the CPU checker (nmo_check,
 * fast engine + escalation) and, on cases of at most 4200 elements, against the certified engine alone:
 * element for element the same verdicts, reachable sets R and flags, and the same
 * tensor verdict, counts, width histogram and worst element.
 *
 * Operators: rms_norm, swiglu, softmax and layer_norm (a case nmo_gpu_check_supported
 * refuses is counted, with its first reason).
 * Cases: every candidate of the registry for the operator (correct variants and mutants, run on
 * the CPU, their outputs uploaded), every input family, fp32 and bf16 (the dtypes the
 * tier covers), seeds 7 (tests/test_engines.c's) and 1, and the shapes of
 * tests/test_engines.c (3x1025, 8x64, 2x257, 3x4097), hip/nmo_gpu_test.c's odd, short and
 * large shapes for rms_norm (64x4099, 1023x131, 4096x4096: with --large, bf16, the default
 * candidate and the mutants) and tiny ones
 * (1x1, 5x3, 1x4096). A run in which the device decided no row, or no mutant FAILed, is
 * a failure too (the comparison would then say nothing about the device). Every other
 * case sends every third row to the CPU checker too (nmo_gpu_check_host_every), so the
 * merge of device and host rows is compared as well; one case in three sends every 97th
 * element of the rows the device decides to the host's single-element path
 * (nmo_gpu_check_elem_every: the certified engine from the device's r, the path of the
 * elements whose snap the device cannot decide), and a run in which that path redid no
 * element fails.
 *
 * usage: nmo_gpu_oracle_test [--large | --quick]    exit 0: all equal; 1: a difference; 2: error
 * (--quick: the shapes 8x64, 2x257, 1x1, 5x3 and seed 7 only, for the CPU simulator) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numoracle/numoracle.h"
#include "numoracle/cand.h"
#include "nmo_gpu.h"
#include "nmo_gpu_oracle.h"
#include "engine/enc_fast.h"
#include "../oracle/engine/dot_exact.h"

/* Rows of x (fp32 or bf16 bits, n even) as T, -2T, then pairs (v, -v) of the gaussian
 * values: the exact sum is -T, tiny next to sum |x|; T = 2^-100 so that no binary64 sum of
 * the row is exact (nmo_fe_sum_exact64 fails), the case the GPU tier's closing of the mean
 * cannot always decide. */
static void zero_sum_rows(nmo_tensor *x, int64_t rows, int64_t n)
{
    int b16 = x->dtype == NMO_BF16;
    for (int64_t r = 0; r < rows; r++) {
        if (b16) {
            uint16_t *v = (uint16_t *)x->data + r * n;
            v[0] = 0x0d80, v[1] = 0x8e00; /* 2^-100, -2^-99 */
            for (int64_t j = 2; j + 1 < n; j += 2) v[j + 1] = v[j] ^ 0x8000u;
        } else {
            uint32_t *v = (uint32_t *)x->data + r * n;
            v[0] = 0x0d800000u, v[1] = 0x8e000000u;
            for (int64_t j = 2; j + 1 < n; j += 2) v[j + 1] = v[j] ^ 0x80000000u;
        }
    }
}

static void die(const char *what, const nmo_err *e);

/* refs/layer_norm.c (fast engine): row u's statistics; elements js[0..m) from them */
void nmo_ref_layer_norm_stats_fast(nmo_fctx *ctx, const nmo_case *c, int64_t u, int mean_only, nmo_fenc *mean,
                                   nmo_fenc *rstd, nmo_fenc *s);
void nmo_ref_layer_norm_elems_fast(nmo_fctx *ctx, const nmo_case *c, int64_t u, const nmo_fenc *mean,
                                   const nmo_fenc *rstd, const nmo_fenc *s, const int64_t *js, int64_t m,
                                   nmo_fenc *out);

/* layer_norm's error-scale distance (k_ln_judge's rel): the device's statistics' scales differ
 * from the CPU's only by their row sums' order, so each element's device scale from
 * statistics scales moved by the most that order can move them (mean: the two sums of |x|
 * within (n - 1) 2^-53 of the exact one each, plus its division; rstd, s: the mean's
 * distance carried into the terms, two more orders of the second sum, their closing), in
 * every sign combination, must stay within rel of the CPU's element scale (the fast
 * engine's, from the CPU's statistics); the enclosures must be the CPU's. Rows of 64 and
 * 4096, every family, on plan p. *worst: the largest distance seen, in units of the proven
 * bound (rel / 2); *bad: probes outside rel or with another enclosure. */
static void ln_scale_probe(const nmo_plan *p, int64_t *probes, int64_t *bad, double *worst)
{
    const nmo_op *op = nmo_op_find("layer_norm");
    const int64_t shp[2][2] = {{16, 64}, {2, 4096}};
    nmo_err err = {{0}};
    nmo_fctx fc;
    if (nmo_fctx_init(&fc, p, &err) != NMO_OK) die("fctx", &err);
    for (int hi = 0; hi < 2; hi++)
        for (int f = 0; f < NMO_FAM_COUNT; f++) {
            nmo_case c;
            if (nmo_case_init(&c, op, p, 2, shp[hi], &err) != NMO_OK) die("case", &err);
            nmo_case_fill(&c, f, 3);
            const int64_t rows = shp[hi][0], n = shp[hi][1];
            const double u = 0x1p-53, d1 = (2.0 * (double)(n - 1) + 4) * u, d2 = d1 + (2.0 * (double)(n - 1) + 16) * u;
            const double rel = NMO_GO_LN_REL_U(n) * u;
            int64_t *js = malloc((size_t)n * sizeof(int64_t));
            nmo_fenc *e = malloc((size_t)n * sizeof(nmo_fenc));
            double *in = malloc((size_t)n * 9 * NMO_GO_LN_PROBE_IN * sizeof(double)), *out = malloc((size_t)n * 9 * 4 * sizeof(double));
            if (!js || !e || !in || !out) die("probe", &err);
            for (int64_t j = 0; j < n; j++) js[j] = j;
            for (int64_t r = 0; r < rows; r++) {
                nmo_fenc mu, rs, sd;
                nmo_ref_layer_norm_stats_fast(&fc, &c, r, 0, &mu, &rs, &sd);
                if ((mu.flags | rs.flags | sd.flags) != 0 || !isfinite(mu.mag) || !isfinite(rs.mag) || !isfinite(sd.mag))
                    continue;
                nmo_ref_layer_norm_elems_fast(&fc, &c, r, &mu, &rs, &sd, js, n, e);
                int64_t k = 0;
                for (int64_t j = 0; j < n; j++)
                    for (int sg = 0; sg < 9; sg++, k++) { /* sg 8: unperturbed */
                        double s1 = sg == 8 ? 0 : (sg & 1) ? 1 : -1, s2 = sg == 8 ? 0 : (sg & 2) ? 1 : -1,
                               s3 = sg == 8 ? 0 : (sg & 4) ? 1 : -1;
                        double *q = in + NMO_GO_LN_PROBE_IN * k;
                        q[0] = nmo_tensor_get(&c.in[0], r * n + j), q[1] = nmo_tensor_get(&c.in[1], j);
                        q[2] = nmo_tensor_get(&c.in[2], j);
                        q[3] = mu.lo, q[4] = mu.hi, q[5] = mu.mag * (1 + s1 * d1);
                        q[6] = rs.lo, q[7] = rs.hi, q[8] = rs.mag * (1 + s2 * d2);
                        q[9] = sd.lo, q[10] = sd.hi, q[11] = sd.mag * (1 + s3 * d2);
                    }
                if (nmo_gpu_ln_probe(&c, in, out, k, &err) != NMO_OK) die("ln probe", &err);
                for (int64_t i = 0; i < k; i++) {
                    const nmo_fenc *ce = &e[i / 9];
                    const double *o = out + 4 * i;
                    if (o[3] == 0 || ce->flags != 0 || !isfinite(ce->mag) || ce->mag <= 0) continue; /* the host's */
                    (*probes)++;
                    double dist = fabs(o[2] - ce->mag) / ce->mag;
                    if (dist / (rel / 2) > *worst) *worst = dist / (rel / 2);
                    *bad += !(dist <= rel) || o[0] != ce->lo || o[1] != ce->hi;
                }
            }
            free(js), free(e), free(in), free(out);
            nmo_case_free(&c);
        }
    nmo_fctx_clear(&fc);
}

static int same_d(double a, double b) { return a == b || (a != a && b != b); }

static void die(const char *what, const nmo_err *e)
{
    fprintf(stderr, "nmo_gpu_oracle_test: %s: %s\n", what, e->msg);
    exit(2);
}

/* elements of a and b (full reports) that differ in verdict, R or flags */
static int64_t diff_reports(const nmo_report *a, const nmo_report *b, int64_t n, int64_t *first)
{
    int64_t d = 0;
    for (int64_t i = 0; i < n; i++) {
        int x = a->verdicts[0][i] != b->verdicts[0][i] || !same_d(a->rlo[0][i], b->rlo[0][i]) ||
                !same_d(a->rhi[0][i], b->rhi[0][i]) || a->bflags[0][i] != b->bflags[0][i];
        if (x && d == 0) *first = i;
        d += x;
    }
    return d;
}

static int same_summary(const nmo_report *a, const nmo_report *b)
{
    for (int i = 0; i <= NMO_WIDTH_HIST; i++)
        if (a->width_hist[i] != b->width_hist[i]) return 0;
    return a->verdict == b->verdict && a->n_pass == b->n_pass && a->n_fail == b->n_fail &&
           a->width_max == b->width_max && a->n_wide == b->n_wide && a->n_nonfinite == b->n_nonfinite &&
           a->n_inconc == b->n_inconc && a->has_worst == b->has_worst &&
           (!a->has_worst || (a->worst.index == b->worst.index && a->worst.verdict == b->worst.verdict &&
                              same_d(a->worst.dist_ulps, b->worst.dist_ulps) && same_d(a->worst.rlo, b->worst.rlo) &&
                              same_d(a->worst.rhi, b->worst.rhi) && a->worst.width_ulps == b->worst.width_ulps &&
                              same_d(a->worst.cand, b->worst.cand) && same_d(a->worst.scale, b->worst.scale) &&
                              same_d(a->worst.width_scale, b->worst.width_scale)));
}

/* rstd_dev against the host's r on adversarial row sums (around every power of two,
 * mean squares near 4^k where rsqrt is exact, near the fp32 maximum, 0, tiny, random),
 * for N in {1, 3, 64, 4096, 4099}, eps in {1e-5, 1e-6, 0, 1}, m = N, 1, N/2, on plan p. */
/* |exact - v| for the exact sum of x_j^2 (square) or x_j over j < n (engine/dot_exact.h):
 * *d from its top 96 bits (within 2^-63 relative below it), *dhi >= it */
static void exact_dist(const double *x, int64_t n, int square, double v, double *d, double *dhi)
{
    const uint64_t one = 0x3ff0000000000000ull;
    nmo_xacc S, A, m;
    nmo_xacc_zero(&S), nmo_xacc_zero(&A);
    for (int64_t j = 0; j < n; j++) {
        uint64_t ub;
        memcpy(&ub, &x[j], 8);
        nmo_xacc_add_prod(&S, &A, ub, square ? ub : one);
    }
    uint64_t vb, mv = 0;
    int ev = 0, nv = 0;
    memcpy(&vb, &v, 8);
    if (v != 0 && nmo_xd_split(vb, &mv, &ev, &nv)) nmo_xacc_add_bits(&S, mv, ev - NMO_XD_BASE, !nv);
    nmo_xacc_norm(&S);
    nmo_xacc_abs(&m, &S);
    int p = nmo_xacc_top(&m);
    *d = 0;
    for (int i = p / 32; i >= 0 && i >= p / 32 - 2; i--) *d += ldexp((double)m.l[i], 32 * i + NMO_XD_BASE);
    *dhi = p < 0 ? 0 : *d * (1 + 0x1p-50) + ldexp(1.0, 32 * (p / 32 - 2) + NMO_XD_BASE);
}

/* The compensated sums' radius smx_comp_err (softmax's k_smx: BLK threads, each j = t,
 * t + BLK, ..; rms_norm's k_rms_rows: 32 lanes) on adversarial rows of nonnegative terms:
 * the device's operations in the device's order (Sum2 per thread, TwoSum pairs (t, t + h)
 * in the tree, v = RN(s + c)) evaluated here in binary64, against the exact sum
 * (engine/dot_exact.h, the terms squares of fp32 values); |v - exact| / radius, the worst
 * kept in *worst. div > 1: the radius divided by div (the probe's own control: it must
 * find sets outside). Returns the sets outside. */
static int64_t comp_probe(double div, int64_t *sets, double *worst)
{
    const int64_t ns[4] = {33, 1000, 4096, 8192};
    enum { MAXN = 8192 };
    static double x[MAXN], sv[256], cv[256];
    int64_t out = 0;
    uint64_t rng = 777;
    for (int lay = 0; lay < 2; lay++) {
        const int nt = lay ? 32 : 256; /* rms_norm's warp, softmax's block */
        for (int a = 0; a < 4; a++)
            for (int fam = 0; fam < 5; fam++)
                for (int rep = 0; rep < 40; rep++) {
                    const int64_t n = ns[a];
                    for (int64_t j = 0; j < n; j++) {
                        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
                        double u = (double)(rng >> 11) * 0x1p-53, g = 1 + u;
                        switch (fam) {
                        case 0: x[j] = (float)(g * 3); break;                                    /* full significands */
                        case 1: x[j] = (float)(j == 0 ? 0x1p40 : ldexp(g, -20));  break;         /* one huge, many tiny */
                        case 2: x[j] = (float)ldexp(g, (int)(j % 60) - 30); break;                /* a geometric spread */
                        case 3: x[j] = (float)ldexp(g, (int)((rng >> 5) % 100) - 50); break;      /* random binades */
                        default: x[j] = (float)(j % 2 ? ldexp(g, 30) : ldexp(g, -30)); break;    /* alternating */
                        }
                    }
                    for (int t = 0; t < nt; t++) {
                        double cs = 0, cc = 0;
                        for (int64_t j = t; j < n; j += nt) {
                            double v = x[j] * x[j], y = cs + v, bb = y - cs;
                            cc = cc + ((cs - (y - bb)) + (v - bb)); /* sum2_add: TwoSum's error */
                            cs = y;
                        }
                        sv[t] = cs, cv[t] = cc;
                    }
                    for (int h = nt / 2; h > 0; h >>= 1)
                        for (int t = 0; t < h; t++) {
                            double a1 = sv[t], a2 = sv[t + h], y = a1 + a2, bb = y - a1;
                            cv[t] = (cv[t] + cv[t + h]) + ((a1 - (y - bb)) + (a2 - bb));
                            sv[t] = y;
                        }
                    double v = sv[0] + cv[0];
                    double rad = nmo_go_comp_err((double)n + nt, v) / div;
                    double d, dhi;
                    exact_dist(x, n, 1, v, &d, &dhi);
                    (*sets)++;
                    out += dhi > rad;
                    if (d / rad > *worst) *worst = d / rad;
                }
    }
    return out;
}

/* layer_norm's first-pass row sum (k_ln_sums: signed point terms x_j, Sum2 per thread j = t,
 * t + BLK, .., TwoSum in the block tree, for the value and for the magnitudes) against
 * nmo_go_ln_comp_err, on rows that cancel: pairs +-v after a tiny term, zero-sum rows with
 * spread binades, alternating huge terms, gaussian; exact sums by dot_exact.h (x_j * 1).
 * Returns the rows outside the radius divided by div, the worst |v - exact| / radius in *worst. */
static int64_t ln_comp_probe(double div, int64_t *sets, double *worst)
{
    const int64_t ns[4] = {33, 1000, 4096, 8192};
    enum { MAXN = 8192, NT = 256 };
    static double x[MAXN], sv[NT], cv[NT], av[NT], ac[NT];
    int64_t out = 0;
    uint64_t rng = 4242;
    for (int a = 0; a < 4; a++)
        for (int fam = 0; fam < 4; fam++)
            for (int rep = 0; rep < 50; rep++) {
                const int64_t n = ns[a];
                for (int64_t j = 0; j < n; j++) {
                    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
                    double u = (double)(rng >> 11) * 0x1p-53, g = 1 + u;
                    int sg = (rng >> 7) & 1 ? 1 : -1;
                    switch (fam) {
                    case 0: x[j] = j == 0 ? 0x1p-100 : (float)(j % 2 ? ldexp(g, (int)(j % 40) - 20) : -x[j - 1]); break;
                    case 1: x[j] = (float)(sg * ldexp(g, (int)((rng >> 9) % 80) - 40)); break;
                    case 2: x[j] = (float)(j % 2 ? ldexp(g, 60) : -ldexp(g, 60)) + (j % 7 == 0 ? 1.0f : 0.0f); break;
                    default: x[j] = (float)(sg * g * 2); break;
                    }
                }
                for (int t = 0; t < NT; t++) {
                    double cs = 0, cc = 0, as = 0, acc2 = 0;
                    for (int64_t j = t; j < n; j += NT) {
                        double v = x[j], y = cs + v, bb = y - cs;
                        cc = cc + ((cs - (y - bb)) + (v - bb));
                        cs = y;
                        double w = fabs(v), z = as + w, b2 = z - as;
                        acc2 = acc2 + ((as - (z - b2)) + (w - b2));
                        as = z;
                    }
                    sv[t] = cs, cv[t] = cc, av[t] = as, ac[t] = acc2;
                }
                for (int h = NT / 2; h > 0; h >>= 1)
                    for (int t = 0; t < h; t++) {
                        double a1 = sv[t], a2 = sv[t + h], y = a1 + a2, bb = y - a1;
                        cv[t] = (cv[t] + cv[t + h]) + ((a1 - (y - bb)) + (a2 - bb));
                        sv[t] = y;
                        a1 = av[t], a2 = av[t + h], y = a1 + a2, bb = y - a1;
                        ac[t] = (ac[t] + ac[t + h]) + ((a1 - (y - bb)) + (a2 - bb));
                        av[t] = y;
                    }
                double v = sv[0] + cv[0], va = av[0] + ac[0];
                double rad = nmo_go_ln_comp_err(n, va) / div;
                double d, dhi;
                exact_dist(x, n, 0, v, &d, &dhi);
                (*sets)++;
                out += dhi > rad;
                if (rad > 0 && d / rad > *worst) *worst = d / rad;
            }
    return out;
}

static void rstd_probe(const nmo_plan *p, int64_t *both, int64_t *neither, int64_t *differ)
{
    nmo_err err = {{0}};
    const nmo_op *op = nmo_op_find("rms_norm");
    const int64_t ns[5] = {1, 3, 64, 4096, 4099};
    const double eps[4] = {1e-5, 1e-6, 0, 1};
    enum { CAP = 40000 };
    double *s = malloc(CAP * sizeof(double));
    int64_t *m = malloc(CAP * sizeof(int64_t));
    uint64_t rng = 12345;
    for (int a = 0; a < 5; a++)
        for (int b = 0; b < 4; b++) {
            int64_t shape[2] = {1, ns[a]}, N = ns[a], cnt = 0;
            nmo_case c;
            if (nmo_case_init(&c, op, p, 2, shape, &err) != NMO_OK) die("probe case", &err);
            c.param[0] = eps[b];
            int64_t ms[3] = {N, 1, N / 2 > 0 ? N / 2 : 1};
            for (int k = -140; k <= 140 && cnt < CAP - 64; k++)
                for (int q = -3; q <= 3; q++)
                    for (int mi = 0; mi < 3; mi++) {
                        double base = ldexp(1.0, k);
                        s[cnt] = base * (1 + q * 0x1p-52), m[cnt++] = ms[mi];
                        s[cnt] = (double)N * ldexp(1.0, 2 * (k / 2)) * (1 + q * 0x1p-40), m[cnt++] = ms[mi];
                    }
            for (int q = 0; q < 32 && cnt < CAP - 8; q++) {
                s[cnt] = 0x1.fffffep127 * (double)N * (1 - q * 0x1p-30), m[cnt++] = N;
                s[cnt] = q == 0 ? 0 : ldexp(1.0, -280 + q), m[cnt++] = q == 0 ? 0 : 1;
            }
            while (cnt < CAP) {
                rng = rng * 6364136223846793005ull + 1442695040888963407ull;
                double u = (double)(rng >> 11) * 0x1p-53;
                s[cnt] = ldexp(1 + u, (int)((rng >> 3) % 120) - 60), m[cnt++] = ms[(rng >> 7) % 3];
            }
            int64_t bo, ne, di;
            if (nmo_gpu_rstd_probe(&c, s, m, cnt, &bo, &ne, &di, &err) != NMO_OK) die("probe", &err);
            *both += bo, *neither += ne, *differ += di;
            nmo_case_free(&c);
        }
    free(s), free(m);
}

int main(int argc, char **argv)
{
    int large = argc > 1 && strcmp(argv[1], "--large") == 0;
    int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    /* NMO_GO_TEST_CORRUPT=1: move one R endpoint of every GPU report (the comparison's own
     * negative control: the run must then FAIL) */
    int corrupt = getenv("NMO_GO_TEST_CORRUPT") && *getenv("NMO_GO_TEST_CORRUPT") == '1';
    nmo_err err = {{0}};
    if (nmo_gpu_init(&err) != NMO_OK) die("device", &err);
    nmo_gpu_check_verify_r = 1;
    /* the last: layer_norm's default candidate, gaussian, seed 7, every run, each row made
     * of pairs (v, -v) after a tiny T and -2T (zero_sum_rows): sums ~0 whose binary64 sums
     * are not exact (the tiny term's lowbit), where the binary64 radius reaches the fp32
     * spacing next to -+ k u A in about 1 row in 5: the certified statistics' path
     * (ln_stats_cert) */
    int64_t shapes[][2] = {{3, 1025}, {8, 64}, {2, 257}, {3, 4097}, {64, 4099}, {1023, 131},
                           {1, 1},    {5, 3},  {1, 4096}, {4096, 4096}, {256, 4096}};
    int nsh = 11;
    const nmo_fmt dts[2] = {NMO_FP32, NMO_BF16};
    const uint64_t seeds[2] = {7, 1};
    const char *opnames[4] = {"rms_norm", "swiglu", "softmax", "layer_norm"};
    const char *only = getenv("NMO_OPS"); /* a comma list of the four, or all */
    int fails_total = 0;
    for (int oi = 0; oi < 4; oi++) {
    if (only && *only && !strstr(only, opnames[oi])) continue;
    const nmo_op *op = nmo_op_find(opnames[oi]);
    nmo_gpu_check_r_compared = nmo_gpu_check_r_differ = 0;
    long refused = 0;
    const char *refusal = NULL;
    long int_cases = 0; /* cases of small integers (f == NMO_FAM_COUNT) */
    long skipped = 0, cases = 0, cert_cases = 0, bad_cases = 0, mutant_fail = 0, mutants = 0;
    int64_t elems = 0, diffs = 0, cert_diffs = 0, rows_dev = 0, rows_host = 0, esc = 0, elems_host = 0, scaled_dev = 0, stats_cert = 0, rows_comp = 0;
    int64_t long_fp32_dev = 0, fallbacks = 0; /* rows of 4097 fp32 elements (gaussian, default candidate) decided on the device */
    for (int ci = 0; ci < nmo_cand_count(); ci++) {
        const nmo_cand *cd = nmo_cand_at(ci);
        if (strcmp(cd->op, op->name) != 0) continue;
        printf("progress: before %s: cases=%ld differing_elements=%lld cases_differing=%ld\n", cd->name, cases,
               (long long)diffs, bad_cases);
        fflush(stdout);
        for (int di = 0; di < 2; di++)
            for (int h = 0; h < nsh; h++)
                for (int f = 0; f <= NMO_FAM_COUNT; f++) /* NMO_FAM_COUNT: small integers with zeros */
                    for (int si = 0; si < 2; si++) {
                        if (f == NMO_FAM_COUNT && h >= 8) continue;
                        /* the 16M-element shape: one seed, the default candidate and mutants on bf16 */
                        if (h == 9 && (!large || si || di == 0 || (cd->correct && cd != nmo_cand_find(op->name, NULL))))
                            continue;
                        /* --quick: also 3x4097 for the default candidate (16 elements a thread a
                         * row: the fp32 widths >= 8 of whole rows, binned on the device) */
                        int is_def = cd == nmo_cand_find(op->name, NULL);
                        if (h == 10 && (oi != 3 || !is_def || f != NMO_FAM_GAUSSIAN || si)) continue;
                        if (quick && (si || !(h == 1 || h == 2 || h == 6 || h == 7 || h == 10 || (h == 3 && is_def)))) continue;
                        nmo_plan p;
                        if (nmo_cand_plan(&p, cd, dts[di], &err) != NMO_OK) die("plan", &err);
                        nmo_case c;
                        if (nmo_case_init(&c, op, &p, 2, shapes[h], &err) != NMO_OK) die("case", &err);
                        nmo_case_fill(&c, f < NMO_FAM_COUNT ? f : NMO_FAM_GAUSSIAN, seeds[si]);
                        if (h == 10) zero_sum_rows(&c.in[0], shapes[h][0], shapes[h][1]);
                        /* rms_norm fp32 2x257: an infinite weight late in the row sends every row to
                         * the host from k_rms_elems (r is finite), after the device has binned most
                         * of its widths >= 8: they must be taken back */
                        if (oi == 0 && h == 2 && di == 0 && f == NMO_FAM_GAUSSIAN) nmo_tensor_set(&c.in[1], 250, INFINITY);
                        if (f == NMO_FAM_COUNT) /* -8 .. 8: zero products x w = 0 (rms_norm's -+eta ends) */
                            for (int t = 0; t < c.n_in; t++)
                                for (int64_t e = 0; e < nmo_tensor_numel(&c.in[t]); e++)
                                    nmo_tensor_set(&c.in[t], e,
                                                   (double)((int64_t)(nmo_gen_u64(seeds[si] + (uint64_t)t, 9, (uint64_t)e) % 17) - 8));
                        nmo_tensor out = c.out[0];
                        out.data = NULL, out.own = 0;
                        if (nmo_tensor_alloc(&out, &err) != NMO_OK) die("alloc", &err);
                        nmo_cand_args ca = {c.in, c.n_in, &out, 1, c.param, op->n_param, &c.plan};
                        if (cd->run(&ca, &err) != NMO_OK) { /* a mutant that needs N > 1 */
                            skipped++;
                            nmo_tensor_free(&out), nmo_case_free(&c);
                            continue;
                        }
                        const char *why = NULL;
                        if (!nmo_gpu_check_supported(&c, &why)) { /* an unfused plan (eager candidates) */
                            refused++;
                            if (!refusal) refusal = why;
                            nmo_tensor_free(&out), nmo_case_free(&c);
                            continue;
                        }
                        int64_t n = nmo_tensor_numel(&out);
                        size_t bytes = (size_t)n * nmo_fmt_bytes(out.dtype);
                        void *dc = NULL;
                        if (nmo_gpu_alloc(&dc, bytes, &err) != NMO_OK || nmo_gpu_h2d(dc, out.data, bytes, &err) != NMO_OK)
                            die("upload", &err);
                        nmo_check_opts o = {.mode = NMO_MODE_ESCALATE, .keep_verdicts = 1, .keep_bounds = 1};
                        nmo_report g, r, q;
                        nmo_gpu_check_info info;
                        /* the knobs by kc: the integer cases do not shift the other cases' choices */
                        const long kc = cases - int_cases;
                        nmo_gpu_check_host_every = (kc & 1) ? 3 : 0; /* the merge path, every other case */
                        nmo_gpu_check_host_r = (kc & 3) == 2;          /* r from the host, one case in four */
                        nmo_gpu_check_elem_every = kc % 3 == 1 ? 97 : 0; /* the single-element path, one in three */
                        nmo_gpu_check_scalar = kc % 5 == 3;            /* one-word loads where 16-byte ones could be */
                        nmo_gpu_check_comp_all = kc % 4 == 1;          /* softmax: every sum compensated too */
                        nmo_gpu_check_ln_plain = (kc & 1) == 0;        /* layer_norm: the plain sums' closing */
                        nmo_gpu_check_elem_cap = kc % 6 == 4 ? 2 : 0;  /* a list too short: everything on the CPU */
                        if (nmo_gpu_check(&g, &c, dc, NULL, &o, &info, &err) != NMO_OK) die("gpu check", &err);
                        if (nmo_check(&r, &c, &out, &o, &err) != NMO_OK) die("cpu check", &err);
                        if (corrupt) g.rhi[0][n / 2] = nextafter(g.rhi[0][n / 2], INFINITY); /* control */
                        int64_t first = -1, d = diff_reports(&g, &r, n, &first);
                        int bad = d != 0 || !same_summary(&g, &r);
                        if (n <= 4200) { /* the certified engine alone */
                            nmo_check_opts oc = o;
                            oc.mode = NMO_MODE_CERT;
                            if (nmo_check(&q, &c, &out, &oc, &err) != NMO_OK) die("cert check", &err);
                            int64_t f2 = -1, d2 = diff_reports(&g, &q, n, &f2);
                            cert_diffs += d2;
                            cert_cases++;
                            if (d2 || g.verdict != q.verdict) {
                                bad = 1;
                                if (first < 0) first = f2;
                            }
                            nmo_report_free(&q);
                        }
                        if (bad) {
                            bad_cases++;
                            fprintf(stderr,
                                    "DIFF %s %s %lldx%lld %s seed=%llu: %lld elements (first %lld: gpu v=%d R=[%a,%a] "
                                    "bf=%u, cpu v=%d R=[%a,%a] bf=%u); gpu %s pass=%lld fail=%lld inc=%lld, cpu %s "
                                    "pass=%lld fail=%lld inc=%lld\n",
                                    cd->name, nmo_fmt_name(dts[di]), (long long)shapes[h][0], (long long)shapes[h][1],
                                    f < NMO_FAM_COUNT ? nmo_family_name(f) : "integers", (unsigned long long)seeds[si], (long long)d, (long long)first,
                                    first >= 0 ? g.verdicts[0][first] : -1, first >= 0 ? g.rlo[0][first] : 0,
                                    first >= 0 ? g.rhi[0][first] : 0, first >= 0 ? g.bflags[0][first] : 0,
                                    first >= 0 ? r.verdicts[0][first] : -1, first >= 0 ? r.rlo[0][first] : 0,
                                    first >= 0 ? r.rhi[0][first] : 0, first >= 0 ? r.bflags[0][first] : 0,
                                    nmo_verdict_name(g.verdict), (long long)g.n_pass, (long long)g.n_fail,
                                    (long long)g.n_inconc, nmo_verdict_name(r.verdict), (long long)r.n_pass,
                                    (long long)r.n_fail, (long long)r.n_inconc);
                        }
                        if (!cd->correct) {
                            mutants++;
                            mutant_fail += g.verdict == NMO_FAIL;
                        }
                        cases++;
                        int_cases += f == NMO_FAM_COUNT;
                        elems += n;
                        diffs += d;
                        rows_dev += info.rows_device;
                        rows_host += info.rows_host;
                        fallbacks += nmo_gpu_check_elem_cap > 0 && info.rows_host == shapes[h][0] && info.rows_device == 0;
                        elems_host += info.elems_host;
                        scaled_dev += info.elems_scaled;
                        stats_cert += info.rows_stats_cert;
                        rows_comp += info.rows_comp;
                        if (h == 3 && is_def && di == 0 && f == NMO_FAM_GAUSSIAN && !nmo_gpu_check_host_every)
                            long_fp32_dev += info.rows_device;
                        esc += r.n_escalated;
                        nmo_report_free(&g), nmo_report_free(&r);
                        nmo_gpu_free(dc);
                        nmo_tensor_free(&out);
                        nmo_case_free(&c);
                    }
    }
    printf("gpu_oracle_test: op=%s cases=%ld elements=%lld differing_elements=%lld cases_differing=%ld\n",
           op->name, cases, (long long)elems, (long long)diffs, bad_cases);
    printf("gpu_oracle_test: candidate runs refused (shape too short for the candidate)=%ld\n", skipped);
    printf("gpu_oracle_test: certified-only comparisons=%ld differing_elements=%lld\n", cert_cases,
           (long long)cert_diffs);
    printf("gpu_oracle_test: units decided on the device=%lld units sent to the CPU checker=%lld "
           "(cpu elements escalated=%lld)\n",
           (long long)rows_dev, (long long)rows_host, (long long)esc);
    printf("gpu_oracle_test: single elements the certified engine redid from the device's r=%lld\n",
           (long long)elems_host);
    printf("gpu_oracle_test: elements the device decided by the scale rule=%lld\n", (long long)scaled_dev);
    if (oi == 3)
        printf("gpu_oracle_test: rows judged on the device from the certified statistics=%lld\n", (long long)stats_cert);
    if (oi == 2 || oi == 0)
        printf("gpu_oracle_test: rows whose sum the device redid compensated=%lld\n", (long long)rows_comp);
    printf("gpu_oracle_test: checks whose single-element list overflowed (the CPU checker on everything)=%lld\n",
           (long long)fallbacks);
    printf("gpu_oracle_test: fp32 rows of 4097 (gaussian, default candidate) decided on the device=%lld\n",
           (long long)long_fp32_dev);
    printf("gpu_oracle_test: mutant cases=%ld of which FAIL=%ld\n", mutants, mutant_fail);
    printf("gpu_oracle_test: device r compared with the host's=%lld differing=%lld\n",
           (long long)nmo_gpu_check_r_compared, (long long)nmo_gpu_check_r_differ);
    /* the r probe: the default candidate's plans (fn=cuda) in both dtypes */
    int64_t pb = 0, pn = 0, pd = 0;
    int rms = oi == 0;
    for (int di = 0; di < 2 && rms; di++) {
        nmo_plan p;
        if (nmo_cand_plan(&p, nmo_cand_find("rms_norm", NULL), dts[di], &err) != NMO_OK) die("plan", &err);
        rstd_probe(&p, &pb, &pn, &pd); /* fn=cuda: rsqrt 2 ulps */
        if (nmo_plan_set_fn(&p, "cr", &err) != NMO_OK) die("fn=cr", &err);
        rstd_probe(&p, &pb, &pn, &pd); /* every function correctly rounded */
        if (corrupt) pd++;
    }
    if (rms) printf("gpu_oracle_test: r probe entries=%lld kept by both=%lld by neither=%lld differing=%lld\n",
           (long long)(pb + pn + pd), (long long)pb, (long long)pn, (long long)pd);
    /* layer_norm's scale distance: the default candidate's plans in both dtypes */
    int64_t lp = 0, lbad = 0;
    double lworst = 0;
    for (int di = 0; di < 2 && oi == 3; di++) {
        nmo_plan p;
        if (nmo_cand_plan(&p, nmo_cand_find("layer_norm", NULL), dts[di], &err) != NMO_OK) die("plan", &err);
        ln_scale_probe(&p, &lp, &lbad, &lworst);
        if (corrupt) lbad++;
    }
    if (oi == 3)
        printf("gpu_oracle_test: layer_norm scale probes=%lld outside rel or differing=%lld, largest distance=%.3f of "
               "the proven bound (rel/2)\n", (long long)lp, (long long)lbad, lworst);
    int64_t lsets = 0, lout = 0, lsets4 = 0, lout4 = 0;
    double lcw = 0, lcw4 = 0;
    if (oi == 3) {
        lout = ln_comp_probe(1, &lsets, &lcw);
        lout4 = ln_comp_probe(16, &lsets4, &lcw4);
        if (corrupt) lout++;
        printf("gpu_oracle_test: layer_norm compensated-sum radius probes=%lld outside=%lld, largest |v - exact| = %.3f "
               "of the radius; with the radius / 16: %lld of %lld outside (the probe's control)\n",
               (long long)lsets, (long long)lout, lcw, (long long)lout4, (long long)lsets4);
    }
    /* the compensated sums' radius (softmax and rms_norm), and its control */
    int64_t csets = 0, cout = 0, csets4 = 0, cout4 = 0;
    double cworst = 0, cworst4 = 0;
    if (oi == 0 || oi == 2) {
        cout = comp_probe(1, &csets, &cworst);
        cout4 = comp_probe(4, &csets4, &cworst4);
        if (corrupt) cout++;
        printf("gpu_oracle_test: compensated-sum radius probes=%lld outside=%lld, largest |v - exact| = %.3f of the "
               "radius; with the radius / 4: %lld of %lld outside (the probe's control)\n",
               (long long)csets, (long long)cout, cworst, (long long)cout4, (long long)csets4);
    }
    printf("gpu_oracle_test: op=%s cases refused by nmo_gpu_check_supported=%ld (first reason: %s)\n", op->name,
           refused, refusal ? refusal : "-");
    int ok = bad_cases == 0 && cases > 0 && rows_dev > 0 && mutant_fail > 0 && nmo_gpu_check_r_differ == 0 &&
             (!rms || (nmo_gpu_check_r_compared > 0 && pd == 0 && pb > 0 && elems_host > 0 && long_fp32_dev > 0 && fallbacks > 0)) &&
             (oi != 3 || (scaled_dev > 0 && stats_cert > 0 && elems_host > 0 && fallbacks > 0 && lp > 0 && lbad == 0 &&
                          lworst > 0 && lsets > 0 && lout == 0 && lout4 > 0)) && /* the scale rule, the
                                                       * certified statistics, single elements, exercised */
             ((oi != 2 && oi != 0) || (rows_comp > 0 && csets > 0 && cout == 0 && cout4 > 0)); /* softmax's,
                                                       * rms_norm's compensated sums, exercised, their radius probed */
    printf("gpu_oracle_test: op=%s %s\n", op->name, ok ? "PASS" : "FAIL");
    fails_total += !ok;
    }
    printf("RESULT %s\n", fails_total == 0 ? "PASS" : "FAIL");
    return fails_total == 0 ? 0 : 1;
}
