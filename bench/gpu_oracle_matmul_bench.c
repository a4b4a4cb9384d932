/* nmo_gpu_oracle_matmul_bench: matmul on the GPU tier against a device-to-device copy of
 * the same bytes, against cuBLAS's own GEMM of the same shape and against the CPU
 * checker, side by side in one process (DESIGN §11).
 *
 *   bytes   = A + B + candidate + one verdict byte per element of C;
 *   copy    = nmo_gpu_d2d of `bytes`, median of --iters (host clock around a synchronized copy);
 *   gpu     = nmo_gpu_check wall time (the kernels, their transfers, the elements sent
 *             back to the CPU checker, the worst element's details), inputs and candidate
 *             in device memory, verdicts left there, median of --iters;
 *   cublas  = cublasGemmEx bf16 x bf16 -> bf16, fp32 compute (CUBLAS_COMPUTE_32F), the same
 *             M, N, K, median of --iters (only in a build with -Dcublas_bench=enabled; its
 *             output is then the candidate, else the registry's CPU candidate is);
 *   cpu     = nmo_check on the host copies (NMO_THREADS or every CPU), once, on the first
 *             --cpu-rows rows of C, scaled by M / cpu-rows when fewer: an upper estimate,
 *             since the per-check costs that do not grow with the rows (B widened to
 *             binary64, its zero scan) are scaled too; --cpu-rows M measures it whole.
 * Prints
 *   op=matmul gpu_oracle_over_copy=X gpu_over_cpu_oracle=Y gpu_over_cublas=Z dtype=.. shape=MxNxK (details)
 * with X = copy / gpu, Y = cpu / gpu, Z = gpu / cublas (the target: Z <= 3), and
 * checks that the CPU checker's counts on its rows equal the GPU tier's on the same rows
 * (exit 1 otherwise).
 *
 * usage: nmo_gpu_oracle_matmul_bench [--iters N] [--shape MxNxK] [--dtype bf16|fp32] [--cpu-rows R] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "numoracle/numoracle.h"
#include "numoracle/cand.h"
#include "nmo_gpu.h"
#include "nmo_gpu_oracle.h"
#if NMO_HAVE_CUBLAS
#include <cublas_v2.h>
#endif

static void die(const char *what, const nmo_err *e)
{
    fprintf(stderr, "nmo_gpu_oracle_matmul_bench: %s: %s\n", what, e->msg);
    exit(2);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e3 * (double)ts.tv_sec + 1e-6 * (double)ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return v[n / 2];
}

int main(int argc, char **argv)
{
    int iters = 5;
    long long M = 4096, N = 4096, K = 4096, cpu_rows = -1;
    nmo_fmt dt = NMO_BF16;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--iters")) iters = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--shape")) sscanf(argv[i + 1], "%lldx%lldx%lld", &M, &N, &K);
        else if (!strcmp(argv[i], "--dtype")) dt = !strcmp(argv[i + 1], "fp32") ? NMO_FP32 : NMO_BF16;
        else if (!strcmp(argv[i], "--cpu-rows")) cpu_rows = atoll(argv[i + 1]);
    }
    if (iters < 1 || iters > 100) iters = 5;
    if (cpu_rows <= 0 || cpu_rows > M) cpu_rows = M;
    nmo_err err = {{0}};
    if (nmo_gpu_init(&err) != NMO_OK) die("device", &err);
    const nmo_op *op = nmo_op_find("matmul");
    const nmo_cand *cd = nmo_cand_find("matmul", NULL);
    nmo_plan p;
    if (nmo_cand_plan(&p, cd, dt, &err) != NMO_OK) die("plan", &err);
    int64_t shape[3] = {M, N, K};
    nmo_case c;
    if (nmo_case_init(&c, op, &p, 3, shape, &err) != NMO_OK) die("case", &err);
    const char *why = NULL;
    if (!nmo_gpu_check_supported(&c, &why)) {
        printf("op=matmul gpu_oracle_over_copy=NA gpu_over_cpu_oracle=NA (%s)\n", why);
        return 0;
    }
    nmo_case_fill(&c, NMO_FAM_GAUSSIAN, 1);
    const size_t ies = nmo_fmt_bytes(dt), oes = nmo_fmt_bytes(dt);
    const size_t ab = (size_t)(M * K) * ies, bb = (size_t)(K * N) * ies, cb = (size_t)(M * N) * oes;
    void *dA, *dB, *dC, *dcp;
    if (nmo_gpu_alloc(&dA, ab, &err) || nmo_gpu_alloc(&dB, bb, &err) || nmo_gpu_alloc(&dC, cb, &err) ||
        nmo_gpu_alloc(&dcp, ab + bb + cb + (size_t)(M * N), &err))
        die("alloc", &err);
    if (nmo_gpu_h2d(dA, c.in[0].data, ab, &err) || nmo_gpu_h2d(dB, c.in[1].data, bb, &err)) die("upload", &err);
    nmo_tensor out = c.out[0];
    out.data = NULL, out.own = 0;
    if (nmo_tensor_alloc(&out, &err) != NMO_OK) die("alloc", &err);
    double cublas_ms = -1;
    const char *cand = cd->name;
#if NMO_HAVE_CUBLAS
    if (dt == NMO_BF16) {
        cublasHandle_t h;
        if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
            fprintf(stderr, "nmo_gpu_oracle_matmul_bench: cublasCreate failed\n");
            return 2;
        }
        cublasSetStream(h, (cudaStream_t)nmo_gpu_stream());
        const float one = 1, zero = 0;
        double t[100];
        for (int it = -1; it < iters; it++) { /* row-major C = A B as column-major C^T = B^T A^T */
            double t0 = now_ms();
            cublasStatus_t st = cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)N, (int)M, (int)K, &one, dB,
                                             CUDA_R_16BF, (int)N, dA, CUDA_R_16BF, (int)K, &zero, dC, CUDA_R_16BF,
                                             (int)N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
            if (st != CUBLAS_STATUS_SUCCESS || nmo_gpu_sync_check("cublasGemmEx", &err)) {
                fprintf(stderr, "nmo_gpu_oracle_matmul_bench: cublasGemmEx failed (%d)\n", (int)st);
                return 2;
            }
            if (it >= 0) t[it] = now_ms() - t0;
        }
        cublas_ms = median(t, iters);
        cublasDestroy(h);
        if (nmo_gpu_d2h(out.data, dC, cb, &err)) die("download", &err);
        cand = "cublasGemmEx";
    }
#endif
    if (cublas_ms < 0) {
        nmo_cand_args ca = {c.in, c.n_in, &out, 1, c.param, op->n_param, &c.plan};
        if (cd->run(&ca, &err) != NMO_OK) die(cd->name, &err);
        if (nmo_gpu_h2d(dC, out.data, cb, &err)) die("upload", &err);
    }
    double tc[100], tg[100];
    for (int it = -1; it < iters; it++) {
        double t0 = now_ms();
        if (nmo_gpu_d2d(dcp, dA, ab, &err) || nmo_gpu_d2d((char *)dcp + ab, dB, bb, &err) ||
            nmo_gpu_d2d((char *)dcp + ab + bb, dC, cb, &err) ||
            nmo_gpu_d2d((char *)dcp + ab + bb + cb, dA, (size_t)(M * N) < ab ? (size_t)(M * N) : ab, &err) ||
            nmo_gpu_sync_check("copy", &err))
            die("copy", &err);
        double t1 = now_ms();
        if (it >= 0) tc[it] = t1 - t0;
    }
    nmo_report g;
    nmo_gpu_check_info info = {0};
    nmo_check_opts o = {.mode = NMO_MODE_ESCALATE};
    const void *ind[2] = {dA, dB};
    for (int it = -1; it < iters; it++) {
        double t0 = now_ms();
        if (nmo_gpu_check(&g, &c, dC, ind, &o, &info, &err) != NMO_OK) die("gpu check", &err);
        double t1 = now_ms();
        if (it >= 0) tg[it] = t1 - t0;
        if (it < iters - 1) nmo_report_free(&g);
    }
    double copy_ms = median(tc, iters), gpu_ms = median(tg, iters);
    /* step 1 both ways (cuBLAS DGEMM when built with it, the tier's own GEMM kernel), timed
     * side by side here, each with its split (kernel timers: one extra check each) */
    double pms[2] = {gpu_ms, -1}, split[2][3] = {{0}};
    int used[2] = {0, 0}, same_counts = 1;
    for (int pth = 0; pth < 2; pth++) {
        nmo_go_mm_blas = pth == 0;
        if (pth == 1) {
            for (int it = -1; it < iters; it++) {
                nmo_report g2;
                double t0 = now_ms();
                if (nmo_gpu_check(&g2, &c, dC, ind, &o, &info, &err) != NMO_OK) die("gpu check (kernel)", &err);
                double t1 = now_ms();
                if (it >= 0) tg[it] = t1 - t0;
                same_counts &= g2.n_pass == g.n_pass && g2.n_fail == g.n_fail && g2.n_inconc == g.n_inconc &&
                               g2.n_scaled == g.n_scaled && g2.verdict == g.verdict;
                nmo_report_free(&g2);
            }
            pms[1] = median(tg, iters);
        }
        nmo_report g3;
        nmo_go_time_kernels = 1;
        if (nmo_gpu_check(&g3, &c, dC, ind, &o, &info, &err) != NMO_OK) die("gpu check (timed)", &err);
        nmo_go_time_kernels = 0;
        split[pth][0] = nmo_go_ms_k1, split[pth][1] = nmo_go_ms_k2, split[pth][2] = info.ms_host_redo;
        used[pth] = nmo_go_mm_used_blas;
        nmo_report_free(&g3);
    }
    nmo_go_mm_blas = 1;
    /* the CPU checker on the first cpu_rows rows, and the GPU tier on the same rows */
    nmo_case cc;
    int64_t sub[3] = {cpu_rows, N, K};
    if (nmo_case_init(&cc, op, &p, 3, sub, &err) != NMO_OK) die("case", &err);
    memcpy(cc.in[0].data, c.in[0].data, (size_t)(cpu_rows * K) * ies);
    memcpy(cc.in[1].data, c.in[1].data, bb);
    nmo_tensor co = cc.out[0];
    co.data = out.data, co.own = 0;
    nmo_report r, gs;
    nmo_check_opts ov = {.mode = NMO_MODE_ESCALATE, .keep_verdicts = 1};
    double t0 = now_ms();
    if (nmo_check(&r, &cc, &co, &ov, &err) != NMO_OK) die("cpu check", &err);
    double cpu_ms = (now_ms() - t0) * (double)M / (double)cpu_rows;
    if (nmo_gpu_check(&gs, &cc, dC, ind, &ov, NULL, &err) != NMO_OK) die("gpu check (rows)", &err);
    int64_t vd = 0, sn = cpu_rows * N;
    for (int64_t i = 0; i < sn; i++) vd += r.verdicts[0][i] != gs.verdicts[0][i];
    int agree = vd == 0 && r.n_pass == gs.n_pass && r.n_fail == gs.n_fail && r.n_inconc == gs.n_inconc;
    printf("op=matmul gpu_oracle_over_copy=%.3f gpu_over_cpu_oracle=%.1f dtype=%s "
           "shape=%lldx%lldx%lld (gpu %.3f ms, copy %.3f ms of %.1f MB, cpu %.1f ms%s; "
           "candidate %s: %s pass=%lld fail=%lld inconclusive=%lld scaled=%lld; elements on the host %lld, "
           "refined so far %lld, exact %lld; of the last check %.3f ms device, %.3f ms host; cpu rows %lld: verdicts %s)\n",
           copy_ms / gpu_ms, cpu_ms / gpu_ms, nmo_fmt_name(dt), M, N, K, gpu_ms, copy_ms,
           (double)(ab + bb + cb + (size_t)(M * N)) / 1e6, cpu_ms,
           cpu_rows < M ? " scaled from fewer rows" : "", cand, nmo_verdict_name(g.verdict), (long long)g.n_pass,
           (long long)g.n_fail, (long long)g.n_inconc, (long long)g.n_scaled, (long long)info.rows_host,
           (long long)nmo_gpu_mm_refined, (long long)nmo_gpu_mm_exact, info.ms_device, info.ms_host_redo, cpu_rows, agree ? "equal" : "DIFFERENT");
    for (int pth = 0; pth < 2; pth++)
        printf("op=matmul step1=%s gpu_ms=%.3f gemm_and_epilogue_ms=%.3f refine_and_exact_ms=%.3f host_ms=%.3f%s\n",
               used[pth] ? "cublas_dgemm" : "gemm_kernel", pms[pth], split[pth][0], split[pth][1], split[pth][2],
               pth == 1 && !same_counts ? " COUNTS DIFFER" : "");
    if (!same_counts) return 1;
    if (cublas_ms > 0)
        printf("op=matmul gpu_over_cublas=%.2f cublas_ms=%.3f gpu_ms=%.3f (target <= 3)\n", gpu_ms / cublas_ms,
               cublas_ms, gpu_ms);
    else
        printf("op=matmul gpu_over_cublas=NA (built without -Dcublas_bench=enabled)\n");
    return agree ? 0 : 1;
}
