/* nmo_gpu_bench: achieved memory bandwidth of the memory-bound HIP kernels, side by side
 * with a device-to-device copy measured in the same process (DESIGN §11: performance
 * claims are ratios from one run).
 *
 * For each memory-bound operator of the registry (every operator but matmul and sdpa)
 * and each operator's correct kernels (every correct variant is timed; printed: the default,
 * marked default=1, and the fastest, marked best=1; --all prints every variant), at a shape
 * of >= 16M elements (default 4096x4096; rope and batchnorm_inference get the 4-D shapes
 * 16x32x256x128 and 64x64x64x64 of the same element count):
 *   bytes = every input read once + every output written once (the ideal traffic);
 *   time  = median over --iters launches, each timed with events right after an
 *           asynchronous 512 MB memset that evicts the inputs from L2;
 *   the copy: hipMemcpyAsync device-to-device of the largest input's bytes, timed the
 *   same way; its bandwidth counts bytes read + bytes written.
 * One line per kernel:
 *   kernel=rms_norm variant=block256 dtype=bf16 shape=4096x4096 bytes=... ms=... gbps=...
 *   ratio_to_copy=...
 * and the copy line first. Exit 0 unless something failed (ratios are reported, not
 * judged: the acceptance threshold 0.6 is printed next to the minimum).
 *
 * usage: nmo_gpu_bench [--shape MxN] [--dtypes bf16,fp32,fp16] [--iters N] [--all]
 *                      [--ops a,b] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nmo_gpu.h"
#include "nmo_runner.h"

static int in_list(const char *list, const char *name)
{
    if (!list) return 1;
    size_t n = strlen(name);
    for (const char *s = list; *s;) {
        const char *c = strchr(s, ',');
        size_t l = c ? (size_t)(c - s) : strlen(s);
        if (l == n && strncmp(s, name, n) == 0) return 1;
        if (!c) break;
        s = c + 1;
    }
    return 0;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#define FLUSH_BYTES ((size_t)512 << 20)
static void *flush_buf;

static void die(const nmo_err *e)
{
    fprintf(stderr, "nmo_gpu_bench: %s\n", e->msg);
    exit(2);
}

/* median ms of iters timed launches (each after an L2-evicting memset) */
static double time_launch(nmo_staged *st, const nmo_plugin_kernel *k, int iters)
{
    nmo_err err = {{0}};
    double *t = malloc((size_t)iters * sizeof(double));
    char msg[512];
    for (int i = -3; i < iters; i++) { /* 3 warm-ups */
        if (nmo_gpu_fill_async(flush_buf, i & 0xff, FLUSH_BYTES, &err) != NMO_OK) die(&err);
        if (nmo_gpu_timer_start(&err) != NMO_OK) die(&err);
        int rc = k->launch(&st->args, msg, sizeof msg);
        if (rc != NMO_PLUGIN_OK) {
            fprintf(stderr, "nmo_gpu_bench: kernel %s: %s\n", k->name,
                    rc == NMO_PLUGIN_UNSUPPORTED ? "unsupported case" : msg);
            exit(2);
        }
        double ms;
        if (nmo_gpu_timer_stop(&ms, &err) != NMO_OK) die(&err);
        if (nmo_gpu_sync_check(k->name, &err) != NMO_OK) die(&err);
        if (i >= 0) t[i] = ms;
    }
    qsort(t, (size_t)iters, sizeof(double), cmp_d);
    double m = t[iters / 2];
    free(t);
    return m;
}

static double time_copy(void *dst, const void *src, size_t bytes, int iters)
{
    nmo_err err = {{0}};
    double *t = malloc((size_t)iters * sizeof(double));
    for (int i = -3; i < iters; i++) {
        if (nmo_gpu_fill_async(flush_buf, i & 0xff, FLUSH_BYTES, &err) != NMO_OK) die(&err);
        if (nmo_gpu_timer_start(&err) != NMO_OK) die(&err);
        if (nmo_gpu_d2d(dst, src, bytes, &err) != NMO_OK) die(&err);
        double ms;
        if (nmo_gpu_timer_stop(&ms, &err) != NMO_OK) die(&err);
        if (i >= 0) t[i] = ms;
    }
    qsort(t, (size_t)iters, sizeof(double), cmp_d);
    double m = t[iters / 2];
    free(t);
    return m;
}

static size_t tbytes(const nmo_tensor *t) { return (size_t)nmo_tensor_span(t) * nmo_fmt_bytes(t->dtype); }

int main(int argc, char **argv)
{
    const char *shape_s = "4096x4096", *dtl = "bf16,fp32", *ops = NULL;
    int iters = 20, all = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--shape") == 0 && v) shape_s = argv[++i];
        else if (strcmp(a, "--dtypes") == 0 && v) dtl = argv[++i];
        else if (strcmp(a, "--iters") == 0 && v) iters = atoi(argv[++i]);
        else if (strcmp(a, "--ops") == 0 && v) ops = argv[++i];
        else if (strcmp(a, "--all") == 0) all = 1;
        else {
            printf("usage: nmo_gpu_bench [--shape MxN] [--dtypes bf16,fp32,fp16] [--iters N] [--all] "
                   "[--ops a,b]\n");
            return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0 ? 0 : 2;
        }
    }
    if (iters < 1) iters = 1;
    nmo_err err = {{0}};
    int nshape;
    int64_t shape[NMO_MAX_DIMS];
    if (nmo_shape_parse(&nshape, shape, shape_s, &err) != NMO_OK) die(&err);
    if (nmo_gpu_init(&err) != NMO_OK) die(&err);
    if (nmo_gpu_alloc(&flush_buf, FLUSH_BYTES, &err) != NMO_OK) die(&err);
    printf("nmo_gpu_bench: %s\n", nmo_gpu_provenance_json());
    printf("method: median of %d event-timed launches, each after a %zu MB memset that evicts L2; "
           "bytes = inputs read once + outputs written once\n",
           iters, FLUSH_BYTES >> 20);

    static const nmo_fmt dts[3] = {NMO_BF16, NMO_FP32, NMO_FP16};
    double min_ratio = 1e300;
    int nlines = 0;
    for (int d = 0; d < 3; d++) {
        if (!in_list(dtl, nmo_fmt_name(dts[d]))) continue;
        /* the copy reference at this dtype: numel(shape) elements */
        int64_t numel = 1;
        for (int i = 0; i < nshape; i++) numel *= shape[i];
        size_t cbytes = (size_t)numel * nmo_fmt_bytes(dts[d]);
        void *ca, *cb;
        if (nmo_gpu_alloc(&ca, cbytes, &err) != NMO_OK || nmo_gpu_alloc(&cb, cbytes, &err) != NMO_OK) die(&err);
        if (nmo_gpu_poison(ca, cbytes, &err) != NMO_OK) die(&err);
        double cms = time_copy(cb, ca, cbytes, iters);
        double copy_gbps = 2.0 * (double)cbytes / (cms * 1e6);
        printf("kernel=copy_d2d dtype=%s shape=%s bytes=%zu ms=%.4f gbps=%.1f ratio_to_copy=1.000\n",
               nmo_fmt_name(dts[d]), shape_s, 2 * cbytes, cms, copy_gbps);
        nmo_gpu_free(ca);
        nmo_gpu_free(cb);

        for (int oi = 0; oi < nmo_op_count(); oi++) {
            const nmo_op *op = nmo_op_at(oi);
            if (strcmp(op->name, "matmul") == 0 || strcmp(op->name, "sdpa") == 0) continue;
            if (!in_list(ops, op->name)) continue;
            /* operators whose shape is not MxN get a 4-D shape of the same element count
             * when the given shape is 4096x4096 (rope: BxHxSxD, batchnorm: NxCxHxW) */
            int onshape = nshape;
            int64_t oshape[NMO_MAX_DIMS];
            const char *oshape_s = shape_s;
            for (int i = 0; i < nshape; i++) oshape[i] = shape[i];
            if (strncmp(op->name, "rope", 4) == 0 || strcmp(op->name, "batchnorm_inference") == 0) {
                if (nshape != 4) {
                    if (numel != 4096LL * 4096LL) continue; /* give --shape BxHxSxD with --ops */
                    oshape_s = op->name[0] == 'r' ? "16x32x256x128" : "64x64x64x64";
                    if (nmo_shape_parse(&onshape, oshape, oshape_s, &err) != NMO_OK) die(&err);
                }
            } else if (nshape != 2 && strcmp(op->name, "conv2d") != 0) {
                /* MxN operators at a 4-D --shape: not meaningful */
            }
            double best_ratio = -1.0;
            char best_line[512] = "";
            nmo_plan plan;
            nmo_plan_default(&plan, dts[d]);
            nmo_case c;
            int staged = 0;
            nmo_staged st;
            for (int ki = 0; ki < nmo_hip_kernel_count(); ki++) {
                const nmo_plugin_kernel *k = nmo_hip_kernel_at(ki);
                if (strcmp(k->op, op->name) != 0 || !k->correct ||
                    !nmo_kernel_claims_dtype(k, dts[d], dts[d]))
                    continue;
                if (!staged) {
                    if (nmo_case_init(&c, op, &plan, onshape, oshape, &err) != NMO_OK) {
                        fprintf(stderr, "nmo_gpu_bench: %s: %s\n", op->name, err.msg);
                        break;
                    }
                    nmo_case_fill(&c, NMO_FAM_GAUSSIAN, 1);
                    if (nmo_stage_case(&st, &c, NMO_PLUGIN_MEM_DEVICE, &err) != NMO_OK) die(&err);
                    staged = 1;
                }
                if (k->supports && !k->supports(&st.args)) continue;
                size_t bytes = 0;
                for (int i = 0; i < c.n_in; i++) /* logits a derived input comes from are not read */
                    if (!(op->in[i].flags & NMO_IN_SOURCE)) bytes += tbytes(&c.in[i]);
                for (int i = 0; i < c.n_out; i++) bytes += tbytes(&c.out[i]);
                for (int i = 0; i < c.n_out; i++)
                    if (nmo_gpu_poison(st.buf_out[i], st.bytes_out[i], &err) != NMO_OK) die(&err);
                double ms = time_launch(&st, k, iters);
                double gbps = (double)bytes / (ms * 1e6);
                double ratio = gbps / copy_gbps;
                char line[512];
                snprintf(line, sizeof line,
                         "kernel=%s variant=%s dtype=%s shape=%s bytes=%zu ms=%.4f gbps=%.1f ratio_to_copy=%.3f",
                         op->name, k->name, nmo_fmt_name(dts[d]), oshape_s, bytes, ms, gbps, ratio);
                /* the default (first correct kernel) always; every variant with --all */
                if (all || best_ratio < 0.0) {
                    printf("%s%s\n", line, best_ratio < 0.0 ? " default=1" : "");
                    fflush(stdout);
                }
                if (ratio > best_ratio) {
                    best_ratio = ratio;
                    snprintf(best_line, sizeof best_line, "%s", line);
                }
            }
            if (best_ratio >= 0.0) {
                /* the best correct variant: what a dispatcher would pick */
                printf("%s best=1\n", best_line);
                if (best_ratio < min_ratio) min_ratio = best_ratio;
                nlines++;
            }
            if (staged) {
                nmo_staged_free(&st);
                nmo_case_free(&c);
            }
        }
    }
    nmo_gpu_free(flush_buf);
    if (nlines)
        printf("minimum ratio_to_copy of the best variant %.3f over %d operator x dtype lines (target: >= 0.6 "
               "for rms_norm, layer_norm, softmax, swiglu, rope)\n",
               min_ratio, nlines);
    return 0;
}
