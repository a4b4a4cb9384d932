/* numoracle benchmark (DESIGN §11: performance claims are ratios printed by a benchmark
 * that runs both sides in one process).
 *
 * For each operator at a realistic size (rms_norm and softmax 4096x4096 bf16, matmul
 * 1024x1024x1024 bf16; --quick: 512x1024 and 256x256x256) it times, in this process,
 * interleaved and repeated (best of --reps, default 5; a side slower than SLOW_S once is
 * not repeated), the order of the sides rotating every repetition so that machine noise
 * hits every side:
 *   fp64    a plain binary64 reference with no bounds, what a user would write: decode
 *           the bf16 inputs, compute in double, write a double output array (matmul:
 *           one cblas_dgemm on double copies of A and B, the conversions included);
 *   oracle  nmo_check in escalate mode (fast engine, certified engine for the units the
 *           fast engine cannot certify, judging) on the output of the operator's default
 *           correct CPU candidate (computed once, not timed), with nmo_check's default
 *           threads (NMO_THREADS, else the online CPUs);
 *   oracle1 the same with NMO_THREADS=1 (one checker thread; OpenBLAS keeps its own
 *           threads for matmul's preparation, as it does for the fp64 side's dgemm), so
 *           that the ratio can be stated per checker thread too;
 *   diag    diagnostic, to split the oracle's time: nmo_check's loop without the judging,
 *           as two passes: op->eval_fast on every unit; then eval_fast + the NMO_EF_UNC
 *           scan + op->eval_cert on escalated units (a few timed, the rest extrapolated);
 *           whatever remains of the oracle's time is the unit loop and the judging;
 * and then the certified engine alone (nmo_check in NMO_MODE_CERT) on a case holding a
 * few sampled rows (matmul: rows of A with the full B), timed per element and
 * extrapolated to the full size. On the sample it also checks that escalate mode and
 * certified mode give the same enclosure and verdict for every element.
 *
 * The last lines of the output, one per operator, are exactly
 *   op=NAME oracle_over_fp64=X.XX certified_over_oracle=Y.Y escalated=Z.ZZZZZZ
 * with oracle_over_fp64 = oracle/fp64, certified_over_oracle = extrapolated certified /
 * oracle, escalated = n_escalated / n of the oracle run; before them, one line per
 * operator op=NAME threads=T oracle1_over_fp64=X.XX (the oracle1 side over fp64). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nmo_config.h"
#include "numoracle/numoracle.h"
#include "engine/enc_fast.h"
#include "engine/enc_cert.h"

#if NMO_HAVE_BLAS
#include <cblas.h>
#endif

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void die(const char *what, nmo_status s, const nmo_err *err)
{
    fprintf(stderr, "nmo_bench: %s: %s%s%s\n", what, nmo_strerror(s), err && err->msg[0] ? ": " : "",
            err ? err->msg : "");
    exit(2);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "nmo_bench: out of memory (%zu bytes)\n", n);
        exit(2);
    }
    return p;
}

/* Keeps the fp64 references' results observable. */
static volatile double sink;

/* ---- side 1: plain binary64 references ---------------------------------------------- */

static void fp64_rms_norm(const nmo_case *c, double *y)
{
    int64_t N = c->shape[c->nshape - 1], M = nmo_tensor_numel(&c->in[0]) / N;
    double eps = c->param[0];
    double *x = xmalloc((size_t)N * sizeof(double)), *w = xmalloc((size_t)N * sizeof(double));
    nmo_tensor_load_f64(w, &c->in[1], 0, N, 1);
    for (int64_t i = 0; i < M; i++) {
        nmo_tensor_load_f64(x, &c->in[0], i * N, N, 1);
        double ss = 0;
        for (int64_t j = 0; j < N; j++) ss += x[j] * x[j];
        double r = 1.0 / sqrt(ss / (double)N + eps);
        double *yr = y + i * N;
        for (int64_t j = 0; j < N; j++) yr[j] = x[j] * r * w[j];
    }
    free(x);
    free(w);
}

static void fp64_softmax(const nmo_case *c, double *y)
{
    int64_t N = c->shape[c->nshape - 1], M = nmo_tensor_numel(&c->in[0]) / N;
    double *x = xmalloc((size_t)N * sizeof(double));
    for (int64_t i = 0; i < M; i++) {
        nmo_tensor_load_f64(x, &c->in[0], i * N, N, 1);
        double m = x[0];
        for (int64_t j = 1; j < N; j++) m = x[j] > m ? x[j] : m;
        double *yr = y + i * N, s = 0;
        for (int64_t j = 0; j < N; j++) {
            yr[j] = exp(x[j] - m);
            s += yr[j];
        }
        for (int64_t j = 0; j < N; j++) yr[j] = yr[j] / s;
    }
    free(x);
}

static void fp64_matmul(const nmo_case *c, double *y)
{
    int64_t M = c->shape[0], N = c->shape[1], K = c->shape[2];
    double *a = xmalloc((size_t)(M * K) * sizeof(double));
    double *b = xmalloc((size_t)(K * N) * sizeof(double));
    nmo_tensor_load_f64(a, &c->in[0], 0, M * K, 1);
    nmo_tensor_load_f64(b, &c->in[1], 0, K * N, 1);
#if NMO_HAVE_BLAS
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)M, (int)N, (int)K, 1.0, a,
                (int)K, b, (int)N, 0.0, y, (int)N);
#else
    memset(y, 0, (size_t)(M * N) * sizeof(double));
    for (int64_t i = 0; i < M; i++)
        for (int64_t k = 0; k < K; k++) {
            double av = a[i * K + k];
            const double *br = b + k * N;
            double *yr = y + i * N;
            for (int64_t j = 0; j < N; j++) yr[j] += av * br[j];
        }
#endif
    free(a);
    free(b);
}

typedef void (*fp64_fn)(const nmo_case *c, double *y);

static double time_fp64(fp64_fn f, const nmo_case *c, double *y, int64_t n)
{
    double t0 = now_s();
    f(c, y);
    double t = now_s() - t0;
    sink += y[0] + y[n / 2] + y[n - 1];
    return t;
}

/* ---- side 2: the oracle ------------------------------------------------------------- */

/* nmo_check's thread count for this run: NMO_THREADS as set outside, or 1 (one_thread) */
static char *g_threads_env; /* the caller's NMO_THREADS (NULL: unset) */

static void set_threads(int one_thread)
{
    if (one_thread) setenv("NMO_THREADS", "1", 1);
    else if (g_threads_env) setenv("NMO_THREADS", g_threads_env, 1);
    else unsetenv("NMO_THREADS");
}

static double time_oracle(const nmo_case *c, const nmo_tensor *cand, nmo_report *keep)
{
    nmo_check_opts o = {0};
    o.mode = NMO_MODE_ESCALATE;
    nmo_report rep;
    nmo_err err = {{0}};
    double t0 = now_s();
    nmo_status s = nmo_check(&rep, c, cand, &o, &err);
    double t = now_s() - t0;
    if (s != NMO_OK) die("nmo_check (escalate)", s, &err);
    *keep = rep; /* counts and scalars only: no per-element arrays were asked for */
    nmo_report_free(&rep);
    return t;
}

/* ---- diagnostic: the check loop without judging ------------------------------------ */

/* The oracle's loop as nmo_check runs it, minus the judging, in two passes (no timer per
 * unit: matmul has one unit per element). Pass A: op->eval_fast on every unit. Pass B:
 * the same plus the scan for NMO_EF_UNC and op->eval_cert on escalated units, of which
 * only the first ESC_TIMED are run, each timed (escalation can be slow: the rest is
 * extrapolated from their mean). scan = B - A - (timed escalation). */
#define ESC_TIMED 4

typedef struct {
    double fast;       /* pass A: eval_fast over every unit (context setup included) */
    double first;      /* the first unit alone (matmul: the two dgemm of the preparation) */
    double scan;       /* the NMO_EF_UNC scan */
    double esc;        /* eval_cert time of the escalated units, extrapolated */
    double passb;      /* pass B without its timed escalation */
    int64_t esc_units; /* units holding an element the fast engine could not certify */
    int esc_timed;
} diag_times;

static double diag_pass(diag_times *d, const nmo_case *c, nmo_fenc **buf, const int64_t *cnt,
                        int scan)
{
    const nmo_op *op = c->op;
    nmo_err err = {{0}};
    nmo_cctx cc;
    int cc_ready = 0;
    double t_esc = 0, t0 = now_s();
    int64_t units = op->units(c);
    nmo_fctx fc;
    nmo_status s = nmo_fctx_init(&fc, &c->plan, &err);
    if (s != NMO_OK) die("nmo_fctx_init", s, &err);
    if (op->prepare_fast) {
        s = op->prepare_fast(&fc, c, &err);
        if (s != NMO_OK) die("prepare_fast", s, &err);
    }
    op->eval_fast(&fc, c, 0, buf);
    if (!scan) {
        d->first = now_s() - t0;
        for (int64_t u = 1; u < units; u++) op->eval_fast(&fc, c, u, buf);
    } else {
        for (int64_t u = 0; u < units; u++) {
            if (u) op->eval_fast(&fc, c, u, buf);
            int64_t unc = 0;
            for (int k = 0; k < c->n_out; k++)
                for (int64_t i = 0; i < cnt[k]; i++) unc += (buf[k][i].flags & NMO_EF_UNC) != 0;
            if (!unc) continue;
            d->esc_units++;
            if (d->esc_timed >= ESC_TIMED) continue;
            double te = now_s();
            if (!cc_ready) {
                s = nmo_cctx_init(&cc, &c->plan, &err);
                if (s != NMO_OK) die("nmo_cctx_init", s, &err);
                cc_ready = 1;
            }
            if (op->eval_cert_unc) op->eval_cert_unc(&cc, c, u, buf);
            else op->eval_cert(&cc, c, u, buf);
            t_esc += now_s() - te;
            d->esc_timed++;
        }
    }
    nmo_fctx_clear(&fc);
    if (cc_ready) nmo_cctx_clear(&cc);
    sink += buf[0][0].lo;
    double t = now_s() - t0;
    if (scan) {
        d->esc = d->esc_timed ? t_esc / d->esc_timed * (double)d->esc_units : 0;
        t -= t_esc;
    }
    return t;
}

static diag_times time_diag(const nmo_case *c)
{
    const nmo_op *op = c->op;
    diag_times d;
    memset(&d, 0, sizeof d);
    int64_t cnt[NMO_MAX_TENSORS] = {0};
    nmo_fenc *buf[NMO_MAX_TENSORS] = {0};
    for (int k = 0; k < c->n_out; k++) {
        int64_t b, s;
        op->unit_span(c, 0, k, &b, &cnt[k], &s);
        buf[k] = xmalloc((size_t)cnt[k] * sizeof(nmo_fenc));
    }
    d.fast = diag_pass(&d, c, buf, cnt, 0);
    d.passb = diag_pass(&d, c, buf, cnt, 1);
    for (int k = 0; k < c->n_out; k++) free(buf[k]);
    return d;
}

/* ---- side 3: the certified engine on sampled rows ----------------------------------- */

/* Bytes of one row (the last dim) of a packed 2-D tensor. */
static size_t row_bytes(const nmo_tensor *t)
{
    return (size_t)t->dims[t->ndims - 1] * nmo_fmt_bytes(t->dtype);
}

/* A case holding rows rows[0..R-1] of the first input (rms_norm/softmax: rows of x;
 * matmul: rows of A) and every other input in full, plus the candidate's same rows. */
static void sample_case(nmo_case *sc, nmo_tensor *scand, const nmo_case *c, const nmo_tensor *cand,
                        const int64_t *rows, int R)
{
    nmo_err err = {{0}};
    int64_t shape[NMO_MAX_DIMS];
    memcpy(shape, c->shape, sizeof shape);
    shape[0] = R; /* rows ops: R x N; matmul: R x N x K */
    nmo_status s = nmo_case_init(sc, c->op, &c->plan, c->nshape, shape, &err);
    if (s != NMO_OK) die("nmo_case_init (sample)", s, &err);
    memcpy(sc->param, c->param, sizeof sc->param);
    size_t rb = row_bytes(&c->in[0]);
    for (int r = 0; r < R; r++)
        memcpy((char *)sc->in[0].data + (size_t)r * rb, (const char *)c->in[0].data + (size_t)rows[r] * rb, rb);
    for (int k = 1; k < c->n_in; k++)
        memcpy(sc->in[k].data, c->in[k].data,
               (size_t)nmo_tensor_span(&c->in[k]) * nmo_fmt_bytes(c->in[k].dtype));
    *scand = sc->out[0];
    scand->data = NULL;
    scand->own = 0;
    s = nmo_tensor_alloc(scand, &err);
    if (s != NMO_OK) die("nmo_tensor_alloc (sample candidate)", s, &err);
    size_t ob = row_bytes(&cand[0]);
    for (int r = 0; r < R; r++)
        memcpy((char *)scand->data + (size_t)r * ob, (const char *)cand[0].data + (size_t)rows[r] * ob, ob);
}

typedef struct {
    double seconds;       /* certified engine on the sample */
    int64_t n;            /* elements in the sample */
    int64_t enc_diff;     /* sample elements whose enclosure differs: escalate vs cert */
    int64_t verdict_diff; /* ... whose verdict differs */
    int64_t sample_esc;   /* elements escalated in the sample's escalate run */
    nmo_verdict verdict;  /* certified verdict on the sample */
} cert_result;

static int same_double(double a, double b)
{
    return (a != a && b != b) || a == b; /* by value: -0 == +0, NaN == NaN */
}

static cert_result run_cert_sample(const nmo_case *c, const nmo_tensor *cand, int R, int reps)
{
    int64_t M = c->shape[0];
    if (R > M) R = (int)M;
    int64_t rows[16];
    for (int r = 0; r < R; r++) rows[r] = R > 1 ? (int64_t)r * (M - 1) / (R - 1) : M / 2;
    nmo_case sc;
    nmo_tensor scand;
    sample_case(&sc, &scand, c, cand, rows, R);

    cert_result cr = {0};
    nmo_err err = {{0}};
    nmo_check_opts oc = {0};
    oc.mode = NMO_MODE_CERT;
    oc.keep_enc = 1;
    oc.keep_verdicts = 1;
    nmo_report rc, re;
    cr.seconds = INFINITY;
    for (int i = 0; i < reps; i++) {
        double t0 = now_s();
        nmo_status s = nmo_check(&rc, &sc, &scand, &oc, &err);
        double t = now_s() - t0;
        if (s != NMO_OK) die("nmo_check (certified)", s, &err);
        if (t < cr.seconds) cr.seconds = t;
        if (i + 1 < reps) nmo_report_free(&rc);
    }
    nmo_check_opts oe = oc;
    oe.mode = NMO_MODE_ESCALATE;
    nmo_status s = nmo_check(&re, &sc, &scand, &oe, &err);
    if (s != NMO_OK) die("nmo_check (sample, escalate)", s, &err);
    cr.n = rc.n;
    cr.verdict = rc.verdict;
    cr.sample_esc = re.n_escalated;
    for (int k = 0; k < sc.n_out; k++) {
        int64_t n = nmo_tensor_numel(&sc.out[k]);
        for (int64_t i = 0; i < n; i++) {
            const nmo_fenc *a = &rc.enc[k][i], *b = &re.enc[k][i];
            if (!same_double(a->lo, b->lo) || !same_double(a->hi, b->hi) ||
                ((a->flags ^ b->flags) & NMO_EF_NAN))
                cr.enc_diff++;
            if (rc.verdicts[k][i] != re.verdicts[k][i]) cr.verdict_diff++;
        }
    }
    nmo_report_free(&rc);
    nmo_report_free(&re);
    nmo_tensor_free(&scand);
    nmo_case_free(&sc);
    return cr;
}

/* ---- one operator ----------------------------------------------------------------------- */

typedef struct {
    const char *op;
    int nshape;
    int64_t shape[3];
    fp64_fn fp64;
    int cert_rows;
} bench_spec;

typedef struct {
    const char *op;
    char shape[64];
    double t_fp64, t_oracle, t_oracle1;
    int r_fp64, r_oracle, r_diag, r_oracle1; /* repetitions actually run */
    diag_times dg;
    double t_cert_sample, t_cert_full;
    int64_t cert_n;
    nmo_report rep;
    cert_result cr;
    const char *cand_name;
} bench_result;

/* A side slower than this once is not repeated (keeps a run bounded when escalation is
 * heavy; the table says how many repetitions each side got). */
#define SLOW_S 20.0

static void run_op(bench_result *br, const bench_spec *sp, int reps, int cert_reps, int diag)
{
    nmo_err err = {{0}};
    const nmo_op *op = nmo_op_find(sp->op);
    if (!op) {
        fprintf(stderr, "nmo_bench: unknown operator %s\n", sp->op);
        exit(2);
    }
    memset(br, 0, sizeof *br);
    br->op = sp->op;
    int pos = 0;
    for (int i = 0; i < sp->nshape; i++)
        pos += snprintf(br->shape + pos, sizeof br->shape - (size_t)pos, "%s%lld", i ? "x" : "",
                        (long long)sp->shape[i]);

    nmo_plan plan;
    nmo_plan_default(&plan, NMO_BF16);
    nmo_case c;
    nmo_status s = nmo_case_init(&c, op, &plan, sp->nshape, sp->shape, &err);
    if (s != NMO_OK) die("nmo_case_init", s, &err);
    nmo_case_fill(&c, NMO_FAM_GAUSSIAN, 1);

    /* the candidate output: the operator's default correct CPU candidate, not timed */
    const nmo_cand *cd = nmo_cand_find(sp->op, NULL);
    if (!cd) {
        fprintf(stderr, "nmo_bench: no default candidate for %s\n", sp->op);
        exit(2);
    }
    br->cand_name = cd->name;
    nmo_tensor cand[NMO_MAX_TENSORS];
    s = nmo_case_alloc_outputs(&c, cand, 0, &err);
    if (s != NMO_OK) die("nmo_case_alloc_outputs (candidate)", s, &err);
    nmo_cand_args ca = {c.in, c.n_in, cand, c.n_out, c.param, op->n_param, &c.plan};
    s = cd->run(&ca, &err);
    if (s != NMO_OK) die("candidate run", s, &err);

    int64_t nout = nmo_tensor_numel(&c.out[0]);
    double *y = xmalloc((size_t)nout * sizeof(double));
    memset(y, 0, (size_t)nout * sizeof(double)); /* fault the pages in, outside the timing */

    br->t_fp64 = br->t_oracle = br->t_oracle1 = INFINITY;
    int nsides = diag ? 4 : 3, slow[4] = {0, 0, 0, 0};
    for (int r = 0; r < reps; r++) {
        for (int i = 0; i < nsides; i++) {
            int side = (i + r) % nsides; /* rotate the order every repetition */
            if (slow[side]) continue;
            double t;
            if (side == 3 || (!diag && side == 2)) { /* oracle1: one checker thread */
                nmo_report rep;
                set_threads(1);
                t = time_oracle(&c, cand, &rep);
                set_threads(0);
                if (t < br->t_oracle1) br->t_oracle1 = t;
                br->r_oracle1++;
            } else if (side == 0) {
                t = time_fp64(sp->fp64, &c, y, nout);
                if (t < br->t_fp64) br->t_fp64 = t;
                br->r_fp64++;
            } else if (side == 1) {
                nmo_report rep;
                t = time_oracle(&c, cand, &rep);
                if (t < br->t_oracle) br->t_oracle = t;
                br->rep = rep;
                br->r_oracle++;
            } else {
                double t0 = now_s();
                diag_times dg = time_diag(&c);
                t = now_s() - t0;
                /* each component's best over the repetitions */
                if (br->r_diag == 0) br->dg = dg;
                if (dg.fast < br->dg.fast) br->dg.fast = dg.fast;
                if (dg.first < br->dg.first) br->dg.first = dg.first;
                if (dg.passb < br->dg.passb) br->dg.passb = dg.passb;
                if (dg.esc < br->dg.esc) br->dg.esc = dg.esc;
                br->dg.scan = br->dg.passb > br->dg.fast ? br->dg.passb - br->dg.fast : 0;
                br->r_diag++;
            }
            if (t > SLOW_S) slow[side] = 1;
        }
    }

    br->cr = run_cert_sample(&c, cand, sp->cert_rows, cert_reps);
    br->t_cert_sample = br->cr.seconds;
    br->cert_n = br->cr.n;
    br->t_cert_full = br->cr.seconds / (double)br->cr.n * (double)br->rep.n;

    free(y);
    for (int k = 0; k < c.n_out; k++) nmo_tensor_free(&cand[k]);
    nmo_case_free(&c);
}

static void print_loadavg(const char *when)
{
    FILE *f = fopen("/proc/loadavg", "r");
    char line[128] = "?";
    if (f) {
        if (!fgets(line, sizeof line, f)) strcpy(line, "?");
        fclose(f);
    }
    line[strcspn(line, "\n")] = 0;
    printf("load average %s: %s\n", when, line);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: nmo_bench [--quick] [--reps N] [--op NAME] [--no-diag]\n"
               "  --quick    small sizes (512x1024, matmul 256x256x256), 1 repetition\n"
               "  --reps N   repetitions per side, best kept (default 5; --quick 1)\n"
               "  --op NAME  only this operator (rms_norm, softmax, matmul)\n"
               "  --no-diag  skip the diagnostic side (the split of the oracle's time)\n");
}

int main(int argc, char **argv)
{
    int quick = 0, reps = -1, diag = 1;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--no-diag")) diag = 0;
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--op") && i + 1 < argc) only = argv[++i];
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) { usage(stdout); return 0; }
        else { usage(stderr); return 2; }
    }
    if (reps < 1) reps = quick ? 1 : 5;
    if (getenv("NMO_THREADS")) g_threads_env = strdup(getenv("NMO_THREADS"));

    bench_spec specs[3] = {
        {"rms_norm", 2, {4096, 4096, 0}, fp64_rms_norm, 4},
        {"softmax", 2, {4096, 4096, 0}, fp64_softmax, 4},
        {"matmul", 3, {1024, 1024, 1024}, fp64_matmul, 2},
    };
    if (quick) {
        specs[0].shape[0] = specs[1].shape[0] = 512;
        specs[0].shape[1] = specs[1].shape[1] = 1024;
        specs[2].shape[0] = specs[2].shape[1] = specs[2].shape[2] = 256;
        specs[0].cert_rows = specs[1].cert_rows = 2;
        specs[2].cert_rows = 1;
    }

    printf("numoracle %s benchmark: bf16 default plans, family gaussian, seed 1, best of %d%s\n",
           nmo_version(), reps, quick ? " (quick)" : "");
#if NMO_HAVE_BLAS
    printf("blas: OpenBLAS (cblas_dgemm) for the fp64 matmul and the fast engine's products\n");
#else
    printf("blas: none (naive loops for the fp64 matmul and the fast engine's products)\n");
#endif
    printf("checker threads (oracle side): %s = %ld; oracle1 side: 1\n",
           g_threads_env ? "NMO_THREADS" : "online CPUs",
           g_threads_env ? atol(g_threads_env) : sysconf(_SC_NPROCESSORS_ONLN));
    print_loadavg("at start");
    printf("\n%-9s %-15s %10s %10s %5s %12s %12s %8s %12s\n", "op", "shape", "fp64[s]",
           "oracle[s]", "reps", "cert-smpl[s]", "cert-full[s]", "smpl-el", "verdict");

    bench_result res[3];
    int nres = 0;
    for (int i = 0; i < 3; i++) {
        if (only && strcmp(only, specs[i].op)) continue;
        bench_result *br = &res[nres++];
        run_op(br, &specs[i], reps, quick ? 1 : 2, diag);
        printf("%-9s %-15s %10.4f %10.4f %2d/%-2d %12.4f %12.2f %8lld %12s\n", br->op, br->shape,
               br->t_fp64, br->t_oracle, br->r_fp64, br->r_oracle, br->t_cert_sample,
               br->t_cert_full, (long long)br->cert_n, nmo_verdict_name(br->rep.verdict));
        fflush(stdout);
    }
    if (nres == 0) {
        fprintf(stderr, "nmo_bench: unknown operator %s\n", only);
        return 2;
    }
    print_loadavg("at end");

    if (diag) {
        printf("\nwhere the oracle's time goes, per output element (fast: op->eval_fast on every unit,\n"
               "of which 1st: the first unit, matmul's dgemm preparation; scan: the UNC flag scan;\n"
               "esc: eval_cert on escalated units, %d timed, the rest extrapolated; judge+: the\n"
               "remainder of nmo_check = unit loop, candidate decode, reachable sets, verdicts, report)\n",
               ESC_TIMED);
        printf("%-9s %9s %9s %9s %9s %11s %11s %7s %7s %7s %7s\n", "op", "fp64[ns]", "oracle",
               "fast", "1st", "scan", "esc", "judge+", "fast%", "esc%", "judge+%");
        for (int i = 0; i < nres; i++) {
            bench_result *br = &res[i];
            double n = (double)br->rep.n, g = 1e9 / n;
            double judge = br->t_oracle - br->dg.fast - br->dg.scan - br->dg.esc;
            printf("%-9s %9.1f %9.1f %9.1f %9.1f %11.1f %11.1f %7.1f %6.1f%% %6.1f%% %6.1f%%\n",
                   br->op, br->t_fp64 * g, br->t_oracle * g, br->dg.fast * g, br->dg.first * g,
                   br->dg.scan * g, br->dg.esc * g, judge * g, 100 * br->dg.fast / br->t_oracle,
                   100 * br->dg.esc / br->t_oracle, 100 * judge / br->t_oracle);
        }
    }

    printf("\ncounts (oracle run, escalate mode) and the certified sample (escalate vs certified alone):\n");
    for (int i = 0; i < nres; i++) {
        bench_result *br = &res[i];
        printf("%-9s cand=%s verdict=%s n=%lld pass=%lld fail=%lld inconclusive=%lld (wide=%lld "
               "nonfinite=%lld) n_unc=%lld n_escalated=%lld units_escalated=%lld/%lld\n",
               br->op, br->cand_name, nmo_verdict_name(br->rep.verdict), (long long)br->rep.n,
               (long long)br->rep.n_pass, (long long)br->rep.n_fail, (long long)br->rep.n_inconc,
               (long long)br->rep.n_wide, (long long)br->rep.n_nonfinite, (long long)br->rep.n_unc,
               (long long)br->rep.n_escalated, (long long)br->rep.units_escalated,
               (long long)br->rep.units);
        printf("%-9s sample: %lld elements, certified verdict=%s, %lld escalated in escalate mode, "
               "enclosure diffs=%lld, verdict diffs=%lld\n",
               "", (long long)br->cr.n, nmo_verdict_name(br->cr.verdict),
               (long long)br->cr.sample_esc, (long long)br->cr.enc_diff,
               (long long)br->cr.verdict_diff);
    }
    printf("\noracle with one checker thread (NMO_THREADS=1; the line above uses %s):\n",
           g_threads_env ? "NMO_THREADS" : "the online CPUs");
    for (int i = 0; i < nres; i++) {
        bench_result *br = &res[i];
        printf("op=%s threads=%d oracle1_over_fp64=%.2f oracle1[s]=%.4f\n", br->op, 1,
               br->t_oracle1 / br->t_fp64, br->t_oracle1);
    }
    printf("\n");
    for (int i = 0; i < nres; i++) {
        bench_result *br = &res[i];
        printf("op=%s oracle_over_fp64=%.2f certified_over_oracle=%.1f escalated=%.6f\n", br->op,
               br->t_oracle / br->t_fp64, br->t_cert_full / br->t_oracle,
               (double)br->rep.n_escalated / (double)br->rep.n);
    }
    return 0;
}
