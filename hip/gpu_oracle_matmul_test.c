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
    int ok = bad_cases == 0 && cases > 0 && dev > 0 && nmo_gpu_mm_refined > 0 && nmo_gpu_mm_exact > 0 && mutant_fail > 0;
    printf("RESULT %s\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
