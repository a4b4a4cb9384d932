/* nmo_gpu_oracle_matmul_test: matmul on the GPU tier (nmo_gpu_check: the binary64 GEMM,
 * its judging epilogue, the compensated refinement, the CPU checker on what is left)
 * against the CPU checker (nmo_check, fast engine + escalation) and, on cases of at most
 * 4200 elements, the certified engine alone: element for element the same verdicts, R
 * and flags, and the same tensor verdict, counts and worst element.
 *
 * Cases: every matmul candidate of the registry (correct and mutants, run on the CPU,
 * outputs uploaded), every input family and small integers (-8 .. 8: ties for k_mm_exact),
 * fp32 and bf16, seeds 7 (tests/test_engines.c's)
 * and 1; shapes: matmul's test shapes (6x33x257, 4x64x64, 6x33x1025), hip/nmo_gpu_test.c's
 * odd and short ones (67x61x1031, 5x7x131), tiny and tile-edge ones (1x1x1, 3x5x7,
 * 65x130x300), with --large also 256x256x4096 (gaussian and outlier) and with --huge 4096x4096x4096 too (bf16,
 * the default candidate and the mutants, seed 7; 4096^3 gaussian only). A run in which the device decided nothing, no
 * element went through the refinement or the exact sums, or no mutant FAILed, is a failure too.
 * Every other case sends every 7th element to the CPU checker too (nmo_gpu_mm_host_every).
 * NMO_GO_TEST_CORRUPT=1 moves one R endpoint of every GPU report (the negative control);
 * NMO_GO_MM_KERNEL=1 runs step 1 on the k_mm_gemm kernel in a build with cuBLAS.
 * Then the soundness probe of step 1's radius (blas_probe): cuBLAS DGEMM's s and |A||B| on
 * adversarial products against the exact sums, within mm_epi's rel1 a; in a build without
 * cuBLAS the same check runs on host binary64 dot products in several orders only.
 *
 * usage: nmo_gpu_oracle_matmul_test [--quick | --large | --huge (also 4096^3)]   exit 0: all equal; 1: a difference; 2: error */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numoracle/numoracle.h"
#include "numoracle/cand.h"
#include "nmo_gpu.h"
#include "nmo_gpu_oracle.h"
#include "../oracle/engine/dot_exact.h"

static int same_d(double a, double b) { return a == b || (a != a && b != b); }

static void die(const char *what, const nmo_err *e)
{
    fprintf(stderr, "nmo_gpu_oracle_matmul_test: %s: %s\n", what, e->msg);
    exit(2);
}

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
    int64_t ha = 0, hb = 0;
    for (int i = 0; i <= NMO_WIDTH_HIST; i++) ha += a->width_hist[i] != b->width_hist[i], hb += 0;
    return a->verdict == b->verdict && a->n_pass == b->n_pass && a->n_fail == b->n_fail &&
           a->n_inconc == b->n_inconc && a->n_scaled == b->n_scaled && a->n_wide == b->n_wide &&
           a->n_nonfinite == b->n_nonfinite && a->width_max == b->width_max && ha == 0 &&
           a->has_worst == b->has_worst &&
           (!a->has_worst || (a->worst.index == b->worst.index && a->worst.verdict == b->worst.verdict &&
                              same_d(a->worst.dist_ulps, b->worst.dist_ulps) &&
                              a->worst.width_ulps == b->worst.width_ulps));
}

/* ---- the soundness probe of step 1 by cuBLAS (hip/gpu_oracle_matmul.inc mm_step1_blas) ----
 * mm_epi assumes |s - exact s| <= rel1 a and |a - exact a| <= rel1 a, rel1 = 2 kd (1 + 2 kd),
 * kd = K 2^-53: twice Jeannerod & Rump's (K - 1) 2^-53 sum|x y| (SIMAX 2013, any order of
 * summation), so it holds for any blocking, split-K or faithful rounding of the partials.
 * Here cuBLAS's s and a (nmo_go_mm_blas_probe: step 1's handle and mm_dgemm) on products
 * built to hurt (cancellation, one huge term, alternating magnitudes, gaussian bf16, full fp32
 * significands over wide exponents), K in {33, 257, 1024, 4096}, 16 x 16 outputs, against the
 * exact sums (oracle/engine/dot_exact.h; bf16 and fp32 products are exact). The same check
 * always runs on host binary64 dot products (fma in several orders), so that the exact side
 * and the control are exercised without cuBLAS too. Control: the radius / 2^D, D =
 * ceil(log2 K) + 1, is at most 2^-53 a (1 + 2 kd): one rounding at a's scale, the radius of a
 * GEMM that rounded like a single operation; sums with many roundings must break it. A
 * second control feeds the real radius a broken accumulator (pr_broken_dot): it must be caught. */
enum { PR_M = 16, PR_N = 16, PR_KMAX = 4096, PR_FAMS = 5 };

static uint64_t pr_rng = 20131;
static double pr_u(void) /* [0, 1) */
{
    pr_rng = pr_rng * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(pr_rng >> 11) * 0x1p-53;
}
static double pr_sg(void) { return pr_u() < 0.5 ? -1.0 : 1.0; }
static int pr_int(int lo, int hi) { return lo + (int)(pr_u() * (hi - lo)); } /* [lo, hi) */
/* x to bits significant bits, to nearest even (rint, default mode): 8 bf16, 24 fp32 (the
 * exponents here lie far inside both formats' normal ranges) */
static double sig_round(double x, int bits)
{
    int e;
    double m = frexp(x, &e);
    return ldexp(rint(ldexp(m, bits)), e - bits);
}

/* A [PR_M, K], B [K, PR_N] of family fam: (a) cancelling pairs after a tiny term, (b) one
 * huge term among tiny ones, (c) alternating 2^40 / 2^-40 products, (d) gaussian bf16 (its
 * 16-bit products over a few binades sum exactly in binary64 here: any order must give the
 * exact value, the exact side's own check), (e) fp32 significands over 60 binades */
static void pr_fill(int fam, int64_t K, double *A, double *B)
{
    const int64_t M = PR_M, N = PR_N, kh = K / 2;
    for (int64_t k = 0; k < K; k++) {
        /* (a): a tiny term first (and last when K - 1 is odd), then pairs k, k + 1 of equal
         * A and opposite B: x y - x y, the exact sum only the tiny terms */
        int tiny = k == 0 || (k == K - 1 && (K - 1) % 2), second = k % 2 == 0;
        for (int64_t i = 0; i < M; i++) {
            double *x = &A[i * K + k];
            switch (fam) {
            case 0: *x = tiny ? sig_round(pr_sg() * (1 + pr_u()) * 0x1p-30, 8)
                         : second ? A[i * K + k - 1] : sig_round(pr_sg() * ldexp(1 + pr_u(), pr_int(-20, 20)), 8); break;
            case 1: *x = k == kh ? 0x1p20 : sig_round(ldexp(1 + pr_u(), -9), 8); break; /* H = 2^40 */
            case 2: *x = sig_round(pr_sg() * ldexp(1 + pr_u(), k % 2 ? 20 : -20), 8); break;
            case 3: *x = sig_round(sqrt(-2 * log(1 - pr_u())) * cos(6.283185307179586 * pr_u()), 8); break;
            default: *x = sig_round(pr_sg() * ldexp(1 + pr_u(), pr_int(-30, 30)), 24); break;
            }
        }
        for (int64_t j = 0; j < N; j++) {
            double *y = &B[k * N + j];
            switch (fam) {
            case 0: *y = tiny ? sig_round((1 + pr_u()) * 0x1p-30, 8)
                         : second ? -B[(k - 1) * N + j] : sig_round(pr_sg() * ldexp(1 + pr_u(), pr_int(-8, 8)), 8); break;
            /* tiny terms in [2^-58, 2^-56] H: below half an ulp of H even 4 at a time
             * (a DMMA's k = 4), so every one added after H is lost (same sign: j < N/2) */
            case 1: *y = k == kh ? 0x1p20 : (j < N / 2 ? 1 : pr_sg()) * sig_round(ldexp(1 + pr_u(), -9), 8); break;
            case 2: *y = sig_round(pr_sg() * ldexp(1 + pr_u(), k % 2 ? 20 : -20), 8); break;
            case 3: *y = sig_round(sqrt(-2 * log(1 - pr_u())) * cos(6.283185307179586 * pr_u()), 8); break;
            default: *y = sig_round(pr_sg() * ldexp(1 + pr_u(), pr_int(-30, 30)), 24); break;
            }
        }
    }
}

/* The host's binary64 dot product of row i and column j, fma on exact products, in order
 * v: 0 forward, 1 backward, 2 four contiguous slices added pairwise (split-K), 3 stride 7
 * (a permutation: 7 is prime to every K here) */
static void pr_host_dot(const double *A, const double *B, int64_t K, int64_t i, int64_t j, int v, double *s,
                        double *a)
{
    const int64_t N = PR_N;
    double ps[4] = {0, 0, 0, 0}, pa[4] = {0, 0, 0, 0};
    for (int64_t q = 0; q < K; q++) {
        int64_t k = v == 1 ? K - 1 - q : v == 3 ? (q * 7) % K : q;
        int sl = v == 2 ? (int)(q * 4 / K) : 0;
        double x = A[i * K + k], y = B[k * N + j];
        ps[sl] = fma(x, y, ps[sl]);
        pa[sl] = fma(fabs(x), fabs(y), pa[sl]);
    }
    *s = (ps[0] + ps[1]) + (ps[2] + ps[3]);
    *a = (pa[0] + pa[1]) + (pa[2] + pa[3]);
}

/* The second control: a broken binary64 accumulator, every partial truncated to 50 bits
 * (an error < 2^-49 of it: three bits short of a faithful rounding), forward order. The
 * real radius must catch it (a faithful 52-bit truncation stays inside: the bound's factor 2). */
static double pr_trunc50(double x)
{
    int e;
    double m = frexp(x, &e);
    return ldexp(trunc(ldexp(m, 50)), e - 50);
}
static void pr_broken_dot(const double *A, const double *B, int64_t K, int64_t i, int64_t j, double *s, double *a)
{
    double ps = 0, pa = 0;
    for (int64_t k = 0; k < K; k++) {
        double x = A[i * K + k], y = B[k * PR_N + j];
        ps = pr_trunc50(fma(x, y, ps));
        pa = pr_trunc50(fma(fabs(x), fabs(y), pa));
    }
    *s = ps, *a = pa;
}

/* lo <= |X - v| <= hi for X exact and normalized (dot_exact.h) and binary64 v: the top
 * 96 bits of the difference, as exact_dist in hip/gpu_oracle_test.c. 0: v not finite or
 * the difference outside the fixed point. */
static int pr_dist(const nmo_xacc *X, double v, double *lo, double *hi)
{
    nmo_xacc S = *X, m;
    uint64_t vb, mv;
    int ev, nv;
    memcpy(&vb, &v, 8);
    if (!nmo_xd_split(vb, &mv, &ev, &nv)) return 0;
    if (mv && !nmo_xacc_add_bits(&S, mv, ev - NMO_XD_BASE, !nv)) return 0;
    if (!nmo_xacc_norm(&S)) return 0;
    nmo_xacc_abs(&m, &S);
    int p = nmo_xacc_top(&m);
    double d = 0;
    for (int i = p / 32; i >= 0 && i >= p / 32 - 2; i--) d += ldexp((double)m.l[i], 32 * i + NMO_XD_BASE);
    *lo = d * (1 - 0x1p-50); /* d: the top digits (>= 64 bits) rounded, within 2^-51 */
    *hi = p < 0 ? 0 : d * (1 + 0x1p-50) + ldexp(1.0, 32 * (p / 32 - 2) + NMO_XD_BASE);
    return 1;
}

typedef struct {
    int64_t elems, out, bad, ctl, ctl_fam[PR_FAMS];
    double worst_s, worst_a;
} pr_stats;

/* s, a [PR_M, PR_N] against the exact sums of A B and |A||B| */
static void pr_check(const double *A, const double *B, int64_t K, int fam, const double *s, const double *a,
                     pr_stats *st)
{
    const double kd = (double)K * 0x1p-53, rel1 = (2 * kd) * (1 + 2 * kd); /* mm_epi's, same operations */
    int D = 1;
    while ((INT64_C(1) << (D - 1)) < K) D++;
    for (int64_t i = 0; i < PR_M; i++)
        for (int64_t j = 0; j < PR_N; j++) {
            nmo_xacc S, X;
            nmo_xacc_zero(&S), nmo_xacc_zero(&X);
            int ok = 1;
            for (int64_t k = 0; k < K; k++) {
                uint64_t ux, uy;
                memcpy(&ux, &A[i * K + k], 8), memcpy(&uy, &B[k * PR_N + j], 8);
                ok &= nmo_xacc_add_prod(&S, &X, ux, uy);
            }
            const double sv = s[i * PR_N + j], av = a[i * PR_N + j], rad = rel1 * av, rc = ldexp(rad, -D);
            double sl, sh, al, ah;
            ok = ok && nmo_xacc_norm(&S) && nmo_xacc_norm(&X) && pr_dist(&S, sv, &sl, &sh) && pr_dist(&X, av, &al, &ah);
            st->elems++;
            if (!ok) {
                st->bad++;
                continue;
            }
            st->out += (sh > rad) + (ah > rad); /* hi: inside is proven */
            int c = sl > rc || al > rc;          /* lo: outside is proven */
            st->ctl += c, st->ctl_fam[fam] += c;
            if (rad > 0) {
                st->worst_s = sh / rad > st->worst_s ? sh / rad : st->worst_s;
                st->worst_a = ah / rad > st->worst_a ? ah / rad : st->worst_a;
            }
        }
}

static void pr_print(const char *what, const pr_stats *st)
{
    printf("gpu_oracle_matmul_test: %s: elements=%lld outside rel1 a (s or a)=%lld not evaluated=%lld, largest "
           "|s - exact| = %.3g of the radius, |a - exact| = %.3g; with the radius / 2^(ceil(log2 K) + 1): %lld "
           "of %lld outside (the probe's control; by family: cancel %lld, huge+tiny %lld, 2^+-40 %lld, "
           "gaussian %lld, fp32 %lld)\n",
           what, (long long)st->elems, (long long)st->out, (long long)st->bad, st->worst_s, st->worst_a,
           (long long)st->ctl, (long long)st->elems, (long long)st->ctl_fam[0], (long long)st->ctl_fam[1],
           (long long)st->ctl_fam[2], (long long)st->ctl_fam[3], (long long)st->ctl_fam[4]);
}

/* 1: PASS (nothing outside and the radius / 2^D control caught something, for the host
 * orders and, in a build with cuBLAS, for cuBLAS; the broken accumulator caught) */
static int blas_probe(int corrupt)
{
    const int64_t ks[4] = {33, 257, 1024, 4096};
    static double A[PR_M * PR_KMAX], B[PR_KMAX * PR_N], s[PR_M * PR_N], a[PR_M * PR_N];
    pr_stats sh = {0}, sb = {0}, sx = {0};
    int blas = 1;
    nmo_err err = {{0}};
    for (int ki = 0; ki < 4; ki++)
        for (int fam = 0; fam < PR_FAMS; fam++) {
            const int64_t K = ks[ki];
            pr_fill(fam, K, A, B);
            for (int64_t i = 0; i < PR_M; i++)
                for (int64_t j = 0; j < PR_N; j++)
                    pr_host_dot(A, B, K, i, j, (int)((i + 3 * j) % 4), &s[i * PR_N + j], &a[i * PR_N + j]);
            pr_check(A, B, K, fam, s, a, &sh);
            for (int64_t i = 0; i < PR_M; i++)
                for (int64_t j = 0; j < PR_N; j++) pr_broken_dot(A, B, K, i, j, &s[i * PR_N + j], &a[i * PR_N + j]);
            pr_check(A, B, K, fam, s, a, &sx);
            if (!blas) continue;
            nmo_status r = nmo_go_mm_blas_probe(A, B, PR_M, PR_N, K, s, a, &err);
            if (r == NMO_ERR_UNSUPPORTED) {
                blas = 0;
                printf("gpu_oracle_matmul_test: blas probe: skipped (no cuBLAS in this build)\n");
                continue;
            }
            if (r != NMO_OK) die("blas probe", &err);
            pr_check(A, B, K, fam, s, a, &sb);
        }
    if (corrupt) sh.out++;
    pr_print("radius probe, host binary64 orders", &sh);
    if (blas) pr_print("radius probe, cuBLAS DGEMM (step 1's handle)", &sb);
    printf("gpu_oracle_matmul_test: radius probe's second control, a binary64 sum with its partials truncated to 50 "
           "bits: %lld of %lld outside rel1 a, largest |s - exact| = %.3g of the radius, |a - exact| = %.3g\n",
           (long long)sx.out, (long long)sx.elems, sx.worst_s, sx.worst_a);
    int ok = sh.elems > 0 && sh.out == 0 && sh.bad == 0 && sh.ctl > 0 && sx.out > 0;
    /* cuBLAS's own count under the tightened radius is reported, not required: the probe's
     * power is shown by the host controls on the same data, and a DGEMM more accurate than
     * 2^-53 a on these products is no fault */
    if (blas) ok &= sb.elems > 0 && sb.out == 0 && sb.bad == 0;
    return ok;
}

int main(int argc, char **argv)
{
    int large = argc > 1 && strcmp(argv[1], "--large") == 0;
    int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    int corrupt = getenv("NMO_GO_TEST_CORRUPT") && *getenv("NMO_GO_TEST_CORRUPT") == '1';
    nmo_err err = {{0}};
    if (nmo_gpu_init(&err) != NMO_OK) die("device", &err);
    int64_t shapes[][3] = {{6, 33, 257}, {4, 64, 64}, {6, 33, 1025}, {67, 61, 1031}, {5, 7, 131},
                           {1, 1, 1},    {3, 5, 7},   {65, 130, 300}, {256, 256, 4096}, {4096, 4096, 4096}};
    int huge = argc > 1 && strcmp(argv[1], "--huge") == 0;
    large |= huge;
    int nsh = huge ? 10 : large ? 9 : 8;
    const nmo_fmt dts[2] = {NMO_FP32, NMO_BF16};
    const uint64_t seeds[2] = {7, 1};
    const nmo_op *op = nmo_op_find("matmul");
    long cases = 0, cert_cases = 0, bad_cases = 0, mutant_fail = 0, mutants = 0, unsupported = 0;
    int64_t elems = 0, diffs = 0, cert_diffs = 0, dev = 0, host = 0, esc = 0;
    nmo_gpu_mm_refined = 0, nmo_gpu_mm_exact = 0;
    if (getenv("NMO_GO_MM_KERNEL") && *getenv("NMO_GO_MM_KERNEL") == '1') nmo_go_mm_blas = 0; /* step 1 by k_mm_gemm */
    int used_blas = 0;
    for (int ci = 0; ci < nmo_cand_count(); ci++) {
        const nmo_cand *cd = nmo_cand_at(ci);
        if (strcmp(cd->op, op->name) != 0) continue;
        for (int di = 0; di < 2; di++)
            for (int h = 0; h < nsh; h++)
                for (int f = 0; f <= NMO_FAM_COUNT; f++) /* NMO_FAM_COUNT: small integers */
                    for (int si = 0; si < 2; si++) {
                        if (h >= 8 && (si || di == 0 || (cd->correct && cd != nmo_cand_find(op->name, NULL)))) continue;
                        if (h == 9 && f != NMO_FAM_GAUSSIAN) continue;
                        if (f == NMO_FAM_COUNT && h >= 8) continue;
                        if (h == 8 && f != NMO_FAM_GAUSSIAN && f != NMO_FAM_OUTLIER) continue;
                        if (quick && (si || h == 2 || h == 3 || h == 7)) continue;
                        nmo_plan p;
                        if (nmo_cand_plan(&p, cd, dts[di], &err) != NMO_OK) die("plan", &err);
                        nmo_case c;
                        if (nmo_case_init(&c, op, &p, 3, shapes[h], &err) != NMO_OK) die("case", &err);
                        if (f < NMO_FAM_COUNT) nmo_case_fill(&c, f, seeds[si]);
                        else /* -8 .. 8: s - k u A on the fp32 lattice for some elements (k_mm_exact) */
                            for (int t = 0; t < 2; t++)
                                for (int64_t e = 0; e < nmo_tensor_numel(&c.in[t]); e++)
                                    nmo_tensor_set(&c.in[t], e,
                                                   (double)((int64_t)(nmo_gen_u64(seeds[si] + (uint64_t)t, 9, (uint64_t)e) % 17) - 8));
                        nmo_tensor out = c.out[0];
                        out.data = NULL, out.own = 0;
                        if (nmo_tensor_alloc(&out, &err) != NMO_OK) die("alloc", &err);
                        nmo_cand_args ca = {c.in, c.n_in, &out, 1, c.param, op->n_param, &c.plan};
                        const char *why = NULL;
                        if (cd->run(&ca, &err) != NMO_OK || !nmo_gpu_check_supported(&c, &why)) {
                            unsupported++;
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
                        nmo_gpu_mm_host_every = (cases & 1) ? 7 : 0; /* the CPU path, every other case */
                        if (nmo_gpu_check(&g, &c, dc, NULL, &o, &info, &err) != NMO_OK) die("gpu check", &err);
                        used_blas |= nmo_go_mm_used_blas;
                        if (nmo_check(&r, &c, &out, &o, &err) != NMO_OK) die("cpu check", &err);
                        if (corrupt) g.rhi[0][n / 2] = nextafter(g.rhi[0][n / 2], INFINITY);
                        int64_t first = -1, d = diff_reports(&g, &r, n, &first);
                        int bad = d != 0 || !same_summary(&g, &r);
                        if (n <= 4200) {
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
                                    "DIFF %s %s %lldx%lldx%lld %s seed=%llu: %lld elements (first %lld: gpu v=%d "
                                    "R=[%a,%a] bf=%u, cpu v=%d R=[%a,%a] bf=%u); gpu %s pass=%lld fail=%lld inc=%lld "
                                    "scaled=%lld, cpu %s pass=%lld fail=%lld inc=%lld scaled=%lld\n",
                                    cd->name, nmo_fmt_name(dts[di]), (long long)shapes[h][0], (long long)shapes[h][1],
                                    (long long)shapes[h][2], f < NMO_FAM_COUNT ? nmo_family_name(f) : "integers", (unsigned long long)seeds[si],
                                    (long long)d, (long long)first, first >= 0 ? g.verdicts[0][first] : -1,
                                    first >= 0 ? g.rlo[0][first] : 0, first >= 0 ? g.rhi[0][first] : 0,
                                    first >= 0 ? g.bflags[0][first] : 0, first >= 0 ? r.verdicts[0][first] : -1,
                                    first >= 0 ? r.rlo[0][first] : 0, first >= 0 ? r.rhi[0][first] : 0,
                                    first >= 0 ? r.bflags[0][first] : 0, nmo_verdict_name(g.verdict),
                                    (long long)g.n_pass, (long long)g.n_fail, (long long)g.n_inconc,
                                    (long long)g.n_scaled, nmo_verdict_name(r.verdict), (long long)r.n_pass,
                                    (long long)r.n_fail, (long long)r.n_inconc, (long long)r.n_scaled);
                        }
                        if (!cd->correct) {
                            mutants++;
                            mutant_fail += g.verdict == NMO_FAIL;
                        }
                        cases++;
                        elems += n;
                        diffs += d;
                        dev += info.rows_device;
                        host += info.rows_host;
                        esc += r.n_escalated;
                        nmo_report_free(&g), nmo_report_free(&r);
                        nmo_gpu_free(dc);
                        nmo_tensor_free(&out);
                        nmo_case_free(&c);
                    }
    }
    printf("gpu_oracle_matmul_test: cases=%ld elements=%lld differing_elements=%lld cases_differing=%ld "
           "(not on the device: %ld)\n",
           cases, (long long)elems, (long long)diffs, bad_cases, unsupported);
    printf("gpu_oracle_matmul_test: certified-only comparisons=%ld differing_elements=%lld\n", cert_cases,
           (long long)cert_diffs);
    printf("gpu_oracle_matmul_test: elements decided on the device=%lld (of them refined=%lld) sent to the CPU "
           "checker=%lld (cpu elements escalated=%lld)\n",
           (long long)dev, (long long)nmo_gpu_mm_refined, (long long)host, (long long)esc);
    printf("gpu_oracle_matmul_test: elements decided by the exact sums=%lld; step 1 by %s\n", (long long)nmo_gpu_mm_exact,
           used_blas ? "cuBLAS DGEMM" : "the k_mm_gemm kernel");
    printf("gpu_oracle_matmul_test: mutant cases=%ld of which FAIL=%ld\n", mutants, mutant_fail);
    int probe_ok = blas_probe(corrupt);
    int ok = bad_cases == 0 && cases > 0 && dev > 0 && nmo_gpu_mm_refined > 0 && nmo_gpu_mm_exact > 0 && mutant_fail > 0 &&
             probe_ok;
    printf("RESULT %s\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
