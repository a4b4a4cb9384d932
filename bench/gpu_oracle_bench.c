/* nmo_gpu_oracle_bench: the GPU tier (nmo_gpu_check) against a device-to-device copy of
 * the same bytes and against the CPU checker (nmo_check), side by side in one process
 * (DESIGN §11).
 *
 * Per case (rms_norm, swiglu, softmax; default correct CPU candidate uploaded, gaussian inputs, seed 1):
 *   bytes   = inputs (x, w) + candidate + what the oracle writes (one verdict byte per
 *             element; the per-row arrays are below 0.1% and not counted);
 *   copy    = hipMemcpyAsync device-to-device of `bytes`, median of --iters, event timed;
 *   gpu     = nmo_gpu_check wall time (host clock: the device kernels, their transfers,
 *             the host's row statistics and the rows it sends back), median of --iters,
 *             inputs and candidate already in device memory, verdicts left there;
 *   cpu     = nmo_check on the host copies (NMO_THREADS or every online CPU), one run;
 *   kernels = one more nmo_gpu_check with its kernels event-timed (nmo_go_time_kernels:
 *             k_rms_rows, then k_rms_elems or k_swiglu), in ms.
 * Prints per case
 *   op=rms_norm gpu_oracle_over_copy=X gpu_over_cpu_oracle=Y dtype=... shape=... (details)
 * with X = copy / gpu (the fraction of copy speed) and Y = cpu / gpu, and checks that the
 * two checkers agree on the tensor verdict and counts (exit 1 otherwise).
 *
 * An operator of the list that the GPU tier does not cover yet prints
 *   op=NAME gpu_oracle_over_copy=NA gpu_over_cpu_oracle=NA dtype=... shape=... (reason)
 *
 * usage: nmo_gpu_oracle_bench [--iters N] [--shapes 4096x4096,8192x8192] [--dtypes bf16,fp32]
 *                             [--ops rms_norm,softmax,layer_norm,swiglu] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "numoracle/numoracle.h"
#include "numoracle/cand.h"
#include "nmo_gpu.h"
#include "nmo_gpu_oracle.h"

static void die(const char *what, const nmo_err *e)
{
    fprintf(stderr, "nmo_gpu_oracle_bench: %s: %s\n", what, e->msg);
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

static void bench_case(const char *opname, int64_t rows, int64_t cols, nmo_fmt dt, int iters, int *bad)
{
    nmo_err err = {{0}};
    const nmo_op *op = nmo_op_find(opname);
    const nmo_cand *cd = op ? nmo_cand_find(opname, NULL) : NULL;
    if (!op || !cd) {
        fprintf(stderr, "nmo_gpu_oracle_bench: unknown op '%s'\n", opname);
        exit(2);
    }
    nmo_plan p;
    if (nmo_cand_plan(&p, cd, dt, &err) != NMO_OK) die("plan", &err);
    int64_t shape[2] = {rows, cols};
    nmo_case c;
    if (nmo_case_init(&c, op, &p, 2, shape, &err) != NMO_OK) die("case", &err);
    const char *why = NULL;
    if (!nmo_gpu_check_supported(&c, &why)) {
        printf("op=%s gpu_oracle_over_copy=NA gpu_over_cpu_oracle=NA dtype=%s shape=%lldx%lld (%s)\n", opname,
               nmo_fmt_name(dt), (long long)rows, (long long)cols, why);
        fflush(stdout);
        nmo_case_free(&c);
        return;
    }
    nmo_case_fill(&c, NMO_FAM_GAUSSIAN, 1);
    nmo_tensor out = c.out[0];
    out.data = NULL, out.own = 0;
    if (nmo_tensor_alloc(&out, &err) != NMO_OK) die("alloc", &err);
    nmo_cand_args ca = {c.in, c.n_in, &out, 1, c.param, op->n_param, &c.plan};
    if (cd->run(&ca, &err) != NMO_OK) die(cd->name, &err);
    int64_t n = nmo_tensor_numel(&out);
    /* every input of the operator (softmax: x only; rms_norm, swiglu: two) */
    size_t es = nmo_fmt_bytes(dt), bc = (size_t)n * es, bin = 0;
    void *din[3] = {NULL, NULL, NULL}, *dc;
    for (int k = 0; k < op->n_in && k < 3; k++) {
        size_t bk = (size_t)nmo_tensor_numel(&c.in[k]) * es;
        if (nmo_gpu_alloc(&din[k], bk, &err) || nmo_gpu_h2d(din[k], c.in[k].data, bk, &err)) die("upload", &err);
        bin += bk;
    }
    if (nmo_gpu_alloc(&dc, bc, &err) || nmo_gpu_h2d(dc, out.data, bc, &err)) die("upload", &err);
    const void *ind[3] = {din[0], din[1], din[2]};
    size_t bytes = bin + bc + (size_t)n; /* + one verdict byte per element */
    void *s0, *s1;
    if (nmo_gpu_alloc(&s0, bytes, &err) || nmo_gpu_alloc(&s1, bytes, &err)) die("copy buffers", &err);
    double *tc = malloc((size_t)iters * sizeof(double)), *tg = malloc((size_t)iters * sizeof(double));
    for (int i = -2; i < iters; i++) {
        double ms;
        if (nmo_gpu_timer_start(&err) || nmo_gpu_d2d(s1, s0, bytes, &err) || nmo_gpu_timer_stop(&ms, &err))
            die("copy", &err);
        if (i >= 0) tc[i] = ms;
    }
    nmo_check_opts o = {.mode = NMO_MODE_ESCALATE};
    nmo_report g, r;
    nmo_gpu_check_info info = {0}, inf_med = {0};
    for (int i = -2; i < iters; i++) {
        double t0 = now_ms();
        if (nmo_gpu_check(&g, &c, dc, ind, &o, &info, &err) != NMO_OK) die("gpu check", &err);
        double t1 = now_ms();
        if (i >= 0) tg[i] = t1 - t0;
        if (i == iters / 2) inf_med = info;
        if (i < iters - 1) nmo_report_free(&g);
    }
    /* one more check with its kernels event-timed (one synchronization each) */
    nmo_report tr;
    nmo_go_ms_k1 = nmo_go_ms_k2 = 0; /* ops whose kernels are not event-timed print 0 */
    nmo_go_time_kernels = 1;
    if (nmo_gpu_check(&tr, &c, dc, ind, &o, NULL, &err) != NMO_OK) die("gpu check (timed kernels)", &err);
    nmo_go_time_kernels = 0;
    double k1 = nmo_go_ms_k1, k2 = nmo_go_ms_k2;
    nmo_report_free(&tr);
    double t0 = now_ms();
    if (nmo_check(&r, &c, &out, &o, &err) != NMO_OK) die("cpu check", &err);
    double cpu = now_ms() - t0;
    qsort(tc, (size_t)iters, sizeof(double), cmp_d);
    qsort(tg, (size_t)iters, sizeof(double), cmp_d);
    double copy = tc[iters / 2], gpu = tg[iters / 2];
    int agree = g.verdict == r.verdict && g.n_pass == r.n_pass && g.n_fail == r.n_fail && g.n_inconc == r.n_inconc;
    *bad |= !agree;
    printf("op=%s gpu_oracle_over_copy=%.3f gpu_over_cpu_oracle=%.1f dtype=%s shape=%lldx%lld bytes=%zu "
           "copy_ms=%.4f gpu_ms=%.3f (device %.3f host_stats %.3f host_rows %.3f, rows on host %lld of %lld, "
           "single elements on host %lld, elements decided by the scale rule %lld, rows from certified statistics %lld, "
           "rows summed again compensated %lld; kernels: rows %.4f elements %.4f) "
           "cpu_ms=%.1f verdict=%s pass=%lld agree=%d\n",
           opname, copy / gpu, cpu / gpu, nmo_fmt_name(dt), (long long)rows, (long long)cols, bytes, copy, gpu,
           inf_med.ms_device, inf_med.ms_host_stats, inf_med.ms_host_redo, (long long)inf_med.rows_host,
           (long long)rows, (long long)inf_med.elems_host, (long long)inf_med.elems_scaled, (long long)inf_med.rows_stats_cert,
           (long long)inf_med.rows_comp, k1, k2, cpu, nmo_verdict_name(g.verdict), (long long)g.n_pass, agree);
    fflush(stdout);
    nmo_report_free(&g), nmo_report_free(&r);
    free(tc), free(tg);
    nmo_gpu_free(s0), nmo_gpu_free(s1), nmo_gpu_free(dc);
    for (int k = 0; k < 3; k++) nmo_gpu_free(din[k]);
    nmo_tensor_free(&out);
    nmo_case_free(&c);
}

int main(int argc, char **argv)
{
    int iters = 10;
    const char *shapes = "4096x4096,8192x8192", *dtypes = "bf16,fp32", *ops = "rms_norm,softmax,layer_norm,swiglu";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--shapes") && i + 1 < argc) shapes = argv[++i];
        else if (!strcmp(argv[i], "--dtypes") && i + 1 < argc) dtypes = argv[++i];
        else if (!strcmp(argv[i], "--ops") && i + 1 < argc) ops = argv[++i];
        else {
            fprintf(stderr, "usage: nmo_gpu_oracle_bench [--iters N] [--shapes AxB,...] [--dtypes bf16,fp32] [--ops A,B]\n");
            return 2;
        }
    }
    if (iters < 1) iters = 1;
    nmo_err err = {{0}};
    if (nmo_gpu_init(&err) != NMO_OK) die("device", &err);
    printf("# %s\n", nmo_gpu_provenance_json());
    int bad = 0;
    for (const char *o = ops; *o;) {
    char opname[64];
    size_t ol = strcspn(o, ",");
    snprintf(opname, sizeof opname, "%.*s", (int)(ol < 63 ? ol : 63), o);
    for (const char *d = dtypes; *d;) {
        nmo_fmt dt = strncmp(d, "fp32", 4) == 0 ? NMO_FP32 : NMO_BF16;
        for (const char *s = shapes; *s;) {
            long long a, b;
            if (sscanf(s, "%lldx%lld", &a, &b) != 2) {
                fprintf(stderr, "nmo_gpu_oracle_bench: bad shape '%s'\n", s);
                return 2;
            }
            bench_case(opname, a, b, dt, iters, &bad);
            s = strchr(s, ',');
            if (!s) break;
            s++;
        }
        d = strchr(d, ',');
        if (!d) break;
        d++;
    }
    o += ol;
    if (!*o) break;
    o++;
    }
    return bad;
}
