/* nmo_gpu_test: the GPU acceptance driver (a plain executable; no Criterion on the GPU
 * machine). For every HIP kernel of the registry x dtype (fp32, bf16, fp16) x input
 * family x seed x shape (an odd reduction width, short odd rows, >= 16M elements), run the kernel on
 * the device and judge its output with numoracle; print
 *   - every FALSE ALARM (a correct kernel that FAILs) with its worst element,
 *   - a table of correct kernels: runs, PASS, INCONCLUSIVE, FAIL, skipped per dtype/shape,
 *   - a table of mutants x families: FAIL where some dtype/shape/seed caught it,
 * and exit 0 iff there is no false alarm, every mutant FAILs somewhere and nothing
 * errored.
 *
 * Judging: the enclosures of a case are computed once (nmo_check without a candidate,
 * keep_enc) and every kernel's output is judged against them with nmo_judge. This is
 * exactly what nmo_check does per candidate: escalation to the certified engine depends
 * on the fast engine's uncertainty only, never on the candidate (oracle/check.c). Kernels
 * of one operator that declare different plans get their own enclosures. --direct calls
 * nmo_check per kernel instead (slower; same verdicts).
 *
 * Cases run in parallel on CPU threads (--jobs); the GPU part of a case (staging the
 * inputs once, then poison + launch + checks + copy back for each kernel) holds a lock.
 * Mutants run at the odd and short shapes (they only need to FAIL somewhere); --mutants-large adds
 * them at the large shape. --time-budget SEC starts no case after SEC seconds and ends
 * with RESULT: INCOMPLETE (exit 3) when cases were left (odd shapes run first).
 *
 * --shapes small uses each operator's own two test shapes (refs: "odd;other"), small
 * enough for the CPU simulator (-Dgpu=sim).
 *
 * --geometry declared (the default) judges each kernel under the reduction geometry its
 * launch declares (issue 17: plugin ABI 2's callback, laid over its plan as check
 * --candidate does); --geometry any under its plan alone. A geometry the oracle rejects
 * is an ERROR, never a quiet fall back to `any`.
 *
 * usage: nmo_gpu_test [--shapes odd|large|both|small] [--seeds N] [--ops a,b] [--kernels a,b]
 *                     [--dtypes fp32,bf16,fp16] [--families a,b] [--jobs N] [--direct]
 *                     [--mutants-large] [--time-budget SEC] [--log FILE] [--list]
 *                     [--geometry declared|any] */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nmo_gpu.h"
#include "nmo_runner.h"

#define MAXK 256
#define NDT 3
#define NSH 3

static const nmo_fmt dts[NDT] = {NMO_FP32, NMO_BF16, NMO_FP16};
/* shape classes: 0 odd, 1 large, 2 short (run with odd; listed in this order of index) */
static const char *shape_names[NSH] = {"odd", "large", "short"};

/* Shapes per operator: an odd reduction width (misaligned rows: vector head and tail;
 * an odd element count, so a flat vector loop has a scalar tail), one of >= 16M output
 * elements, and short odd rows. The short rows are where an N vs N-1 divisor (a 1/N
 * relative error) and a one-pass variance show: at N = 4099 the error bound of an fp32
 * sum in any order (about N u relative) is as large as 1/N, so those bugs hide inside the
 * enclosure of a correct kernel; at N = 131 it is 30x smaller. sdpa's large shape is far
 * below 16M outputs: the oracle's cost grows with S^2 D per head. Other operators fall
 * back to their test shapes. */
static const struct {
    const char *op, *odd, *large, *shrt;
} shape_tab[] = {
    {"rms_norm", "64x4099", "4096x4096", "1023x131"},
    {"softmax", "64x4099", "4096x4096", "1023x131"},
    {"log_softmax", "64x4099", "4096x4096", "1023x131"},
    {"layer_norm", "64x4099", "4096x4096", "1023x131"},
    {"fused_add_rms_norm", "64x4099", "4096x4096", "1023x131"},
    {"rms_norm_bwd", "64x4099", "4096x4096", "1023x131"},
    {"layer_norm_bwd", "64x4099", "4096x4096", "1023x131"},
    {"cross_entropy", "64x4099", "4096x4096", "1023x131"},
    {"cross_entropy_bwd", "64x4099", "4096x4096", "1023x131"},
    {"kl_div", "64x4099", "4096x4096", "1023x131"},
    {"jsd", "64x4099", "4096x4096", "1023x131"},
    {"swiglu", "63x4099", "4096x4096", "1023x131"},
    {"geglu", "63x4099", "4096x4096", "1023x131"},
    {"swiglu_bwd", "63x4099", "4096x4096", "1023x131"},
    {"geglu_bwd", "63x4099", "4096x4096", "1023x131"},
    {"batchnorm_inference", "3x7x33x35", "64x64x64x64", "2x3x5x7"},
    {"matmul", "67x61x1031", "4096x4096x256", "5x7x131"},
    {"rope", "4x8x33x66", "8x32x512x128", "3x5x7x34"},
    {"rope_bwd", "4x8x33x66", "8x32x512x128", "3x5x7x34"},
    {"sdpa", "1x4x2x129x64", "1x8x2x512x64", "2x4x1x33x16"},
};

typedef struct {
    long runs, pass, inconc, fail, skipped;
} counts;

static struct {
    int nk;
    const nmo_plugin_kernel *k[MAXK];
    int use_dt[NDT], use_sh[NSH], use_fam[NMO_FAM_COUNT];
    int seeds, jobs, direct, mutants_large;
    int geometry;   /* 1: --geometry declared */
    long geo_runs;  /* kernel runs judged under a declared geometry */
    nmo_kernel_set ks;
    double budget;  /* --time-budget: no new case starts after this many seconds */
    long skipped_cases;
    counts cnt[MAXK][NDT][NSH][NMO_FAM_COUNT];
    long errors, false_alarms;
    FILE *log;
    pthread_mutex_t mu, gpu;
    long next, ncases, done;
    /* case list */
    struct tcase {
        const nmo_op *op;
        int dt, sh, fam, seed;
    } *cases;
    double t0;
} G;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

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

static int small_shapes; /* --shapes small: the operator's own test shapes (simulator) */

static int op_shape(const nmo_op *op, int sh, int *nshape, int64_t *shape)
{
    nmo_err err;
    if (small_shapes) {
        char buf[128];
        snprintf(buf, sizeof buf, "%s", op->test_shapes ? op->test_shapes : "3x1025;8x64");
        char *semi = strchr(buf, ';');
        const char *pick = buf;
        if (semi) {
            *semi = '\0';
            if (sh) pick = semi + 1;
        }
        return nmo_shape_parse(nshape, shape, pick, &err) == NMO_OK;
    }
    for (size_t i = 0; i < sizeof shape_tab / sizeof shape_tab[0]; i++)
        if (strcmp(shape_tab[i].op, op->name) == 0)
            return nmo_shape_parse(nshape, shape,
                                   sh == 1 ? shape_tab[i].large : sh == 2 ? shape_tab[i].shrt : shape_tab[i].odd,
                                   &err) == NMO_OK;
    const char *spec = sh == 1 && op->test_shapes_large ? op->test_shapes_large : op->test_shapes;
    if (sh == 2) return 0; /* no short shape for this operator */
    char buf[128];
    snprintf(buf, sizeof buf, "%s", spec ? spec : "3x1025");
    char *semi = strchr(buf, ';');
    if (semi) *semi = '\0';
    return nmo_shape_parse(nshape, shape, buf, &err) == NMO_OK;
}

static void shape_text(char *b, size_t n, int nshape, const int64_t *shape)
{
    size_t o = 0;
    b[0] = '\0';
    for (int i = 0; i < nshape && o < n; i++)
        o += (size_t)snprintf(b + o, n - o, i ? "x%lld" : "%lld", (long long)shape[i]);
}

/* Plan of kernel k for dtype dt: default, then the kernel's text. */
static int kernel_plan(nmo_plan *p, const nmo_plugin_kernel *k, nmo_fmt dt)
{
    nmo_plan_default(p, dt);
    nmo_err err;
    if (k->plan && k->plan[0] && nmo_plan_parse(p, k->plan, &err) != NMO_OK) return 0;
    return p->in == dt && p->out == dt;
}

/* The plan kernel k is judged under on case c: its plan, then (--geometry declared) the
 * geometry its launch declares at c's shape. 0: ok (*geo: one was applied), else why. */
static int judge_plan(nmo_plan *p, const nmo_plugin_kernel *k, nmo_fmt dt, nmo_case *c, int *geo, char *why,
                      size_t wn)
{
    *geo = 0;
    if (!kernel_plan(p, k, dt)) return snprintf(why, wn, "kernel declares a bad plan '%s'", k->plan), 1;
    if (!G.geometry) return 0;
    char text[256];
    c->plan = *p;
    if (!nmo_kernel_geometry(&G.ks, k, c, text, sizeof text)) return 0;
    nmo_err e = {{0}};
    if (nmo_plan_parse(p, text, &e) != NMO_OK)
        return snprintf(why, wn, "declared geometry '%.200s' rejected: %.250s", text, e.msg), 1;
    *geo = 1;
    return 0;
}

/* Judge out[] against the enclosures of bounds (same plan): nmo_check's loop. */
static void judge(nmo_report *r, const nmo_case *c, const nmo_report *bounds, const nmo_tensor *out)
{
    memset(r, 0, sizeof *r);
    r->max_ulps = bounds->max_ulps;
    enum { CH = 1 << 16 };
    double *v = malloc(CH * sizeof(double));
    for (int k = 0; k < c->n_out && v; k++) {
        int64_t n = nmo_tensor_numel(&c->out[k]);
        for (int64_t b = 0; b < n; b += CH) {
            int64_t m = n - b < CH ? n - b : CH;
            nmo_tensor_load_f64(v, &out[k], b, m, 1);
            for (int64_t i = 0; i < m; i++) {
                nmo_elem_info info;
                uint32_t bf;
                nmo_verdict vd = nmo_judge(&info, &bounds->enc[k][b + i], v[i], &c->plan, r->max_ulps, &bf);
                r->n++;
                if (vd == NMO_PASS) r->n_pass++;
                else if (vd == NMO_FAIL) r->n_fail++;
                else r->n_inconc++;
                info.k = k;
                info.index = b + i;
                if (vd == NMO_FAIL && (!r->has_worst || info.dist_ulps > r->worst.dist_ulps)) {
                    r->worst = info;
                    r->has_worst = 1;
                }
            }
        }
    }
    free(v);
    r->verdict = r->n_fail ? NMO_FAIL : r->n_inconc ? NMO_INCONCLUSIVE : NMO_PASS;
}

static void record(int ki, const struct tcase *tc, int skipped, const nmo_report *r,
                   const char *shape, const char *err)
{
    pthread_mutex_lock(&G.mu);
    counts *ct = &G.cnt[ki][tc->dt][tc->sh][tc->fam];
    const nmo_plugin_kernel *k = G.k[ki];
    const char *v = err ? "ERROR" : skipped ? "SKIPPED" : nmo_verdict_name(r->verdict);
    if (err) {
        G.errors++;
        printf("ERROR %s/%s dtype=%s family=%s seed=%d shape=%s: %s\n", k->op, k->name,
               nmo_fmt_name(dts[tc->dt]), nmo_family_name(tc->fam), tc->seed, shape, err);
    } else if (skipped) {
        ct->skipped++;
    } else {
        ct->runs++;
        if (r->verdict == NMO_PASS) ct->pass++;
        else if (r->verdict == NMO_INCONCLUSIVE) ct->inconc++;
        else ct->fail++;
        if (r->verdict == NMO_FAIL && k->correct) {
            G.false_alarms++;
            printf("FALSE ALARM %s/%s dtype=%s family=%s seed=%d shape=%s: %lld of %lld elements "
                   "fail; worst index %lld candidate %.9g R=[%.9g, %.9g] outside by %.0f ulps\n",
                   k->op, k->name, nmo_fmt_name(dts[tc->dt]), nmo_family_name(tc->fam), tc->seed,
                   shape, (long long)r->n_fail, (long long)r->n, (long long)r->worst.index,
                   r->worst.cand, r->worst.rlo, r->worst.rhi, r->worst.dist_ulps);
        }
    }
    if (G.log)
        fprintf(G.log, "%s,%s,%s,%s,%s,%s,%d,%s,%lld,%lld,%lld\n", k->op, k->name,
                k->correct ? "correct" : "mutant", nmo_fmt_name(dts[tc->dt]), shape,
                nmo_family_name(tc->fam), tc->seed, v, r ? (long long)r->n_pass : 0LL,
                r ? (long long)r->n_fail : 0LL, r ? (long long)r->n_inconc : 0LL);
    fflush(stdout);
    pthread_mutex_unlock(&G.mu);
}

static void run_case(const struct tcase *tc)
{
    int nshape;
    int64_t shape[NMO_MAX_DIMS];
    char sh[64];
    if (!op_shape(tc->op, tc->sh, &nshape, shape)) return;
    shape_text(sh, sizeof sh, nshape, shape);
    const nmo_fmt dt = dts[tc->dt];

    /* the kernels of this op claiming dt, grouped by plan */
    int ks[MAXK], nks = 0;
    for (int i = 0; i < G.nk; i++) {
        if (strcmp(G.k[i]->op, tc->op->name) != 0) continue;
        if (!nmo_kernel_claims_dtype(G.k[i], dt, dt)) continue;
        if (tc->sh == 1 && !G.k[i]->correct && !G.mutants_large && !small_shapes) continue;
        ks[nks++] = i;
    }
    if (!nks) return;

    nmo_plan base;
    nmo_plan_default(&base, dt);
    nmo_case c;
    nmo_err err = {{0}};
    if (nmo_case_init(&c, tc->op, &base, nshape, shape, &err) != NMO_OK) {
        for (int j = 0; j < nks; j++) record(ks[j], tc, 0, NULL, sh, err.msg);
        return;
    }
    nmo_case_fill(&c, tc->fam, (uint64_t)tc->seed);

    /* GPU: stage once, then each kernel (poison, launch, checks, copy back) */
    nmo_tensor *outs = calloc((size_t)nks * NMO_MAX_TENSORS, sizeof(nmo_tensor));
    int *state = calloc((size_t)nks, sizeof(int)); /* 0 ran, 1 skipped, 2 error */
    char (*msgs)[512] = calloc((size_t)nks, 512);
    if (!outs || !state || !msgs) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    pthread_mutex_lock(&G.gpu);
    nmo_staged st;
    nmo_status s = nmo_stage_case(&st, &c, NMO_PLUGIN_MEM_DEVICE, &err);
    for (int j = 0; j < nks; j++) {
        if (s != NMO_OK) {
            state[j] = 2;
            snprintf(msgs[j], 512, "%s", err.msg);
            continue;
        }
        nmo_plan kp;
        if (!kernel_plan(&kp, G.k[ks[j]], dt)) {
            state[j] = 2;
            snprintf(msgs[j], 512, "kernel declares a bad plan '%s'", G.k[ks[j]]->plan);
            continue;
        }
        nmo_plan_to_string(&kp, st.plan_text, sizeof st.plan_text);
        nmo_run_info info;
        nmo_err e2 = {{0}};
        if (nmo_staged_launch(&st, G.k[ks[j]], &info, &e2) != NMO_OK) {
            state[j] = 2;
            snprintf(msgs[j], 512, "%s", e2.msg);
        } else if (info.skipped) {
            state[j] = 1;
        } else if (nmo_staged_fetch(outs + (size_t)j * NMO_MAX_TENSORS, &st, &e2) != NMO_OK) {
            state[j] = 2;
            snprintf(msgs[j], 512, "%s", e2.msg);
        }
    }
    if (s == NMO_OK) nmo_staged_free(&st);
    pthread_mutex_unlock(&G.gpu);

    /* judge: enclosures once per distinct plan */
    nmo_report bounds;
    char cur_plan[512] = "";
    int have_bounds = 0;
    for (int j = 0; j < nks; j++) {
        if (state[j] == 1) {
            record(ks[j], tc, 1, NULL, sh, NULL);
            continue;
        }
        if (state[j] == 2) {
            record(ks[j], tc, 0, NULL, sh, msgs[j]);
            continue;
        }
        nmo_plan kp;
        int geo;
        char why[512];
        if (judge_plan(&kp, G.k[ks[j]], dt, &c, &geo, why, sizeof why)) {
            record(ks[j], tc, 0, NULL, sh, why);
            for (int q = 0; q < c.n_out; q++) nmo_tensor_free(&outs[(size_t)j * NMO_MAX_TENSORS + q]);
            continue;
        }
        if (geo) {
            pthread_mutex_lock(&G.mu);
            G.geo_runs++;
            pthread_mutex_unlock(&G.mu);
        }
        char ptxt[512];
        nmo_plan_to_string(&kp, ptxt, sizeof ptxt);
        c.plan = kp;
        nmo_tensor *o = outs + (size_t)j * NMO_MAX_TENSORS;
        nmo_report r;
        nmo_err e3 = {{0}};
        if (G.direct) {
            if (nmo_check(&r, &c, o, NULL, &e3) != NMO_OK) record(ks[j], tc, 0, NULL, sh, e3.msg);
            else record(ks[j], tc, 0, &r, sh, NULL);
            nmo_report_free(&r);
        } else {
            if (!have_bounds || strcmp(ptxt, cur_plan) != 0) {
                if (have_bounds) nmo_report_free(&bounds);
                have_bounds = 0;
                nmo_check_opts bo = {.keep_enc = 1};
                if (nmo_check(&bounds, &c, NULL, &bo, &e3) != NMO_OK) {
                    record(ks[j], tc, 0, NULL, sh, e3.msg);
                    for (int q = 0; q < c.n_out; q++) nmo_tensor_free(&o[q]);
                    continue;
                }
                have_bounds = 1;
                snprintf(cur_plan, sizeof cur_plan, "%s", ptxt);
            }
            judge(&r, &c, &bounds, o);
            record(ks[j], tc, 0, &r, sh, NULL);
        }
        for (int q = 0; q < c.n_out; q++) nmo_tensor_free(&o[q]);
    }
    if (have_bounds) nmo_report_free(&bounds);
    free(outs);
    free(state);
    free(msgs);
    nmo_case_free(&c);
}

static void *worker(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&G.mu);
        long i = G.next++;
        pthread_mutex_unlock(&G.mu);
        if (i >= G.ncases) break;
        if (G.budget > 0 && now_s() - G.t0 > G.budget) {
            pthread_mutex_lock(&G.mu);
            G.skipped_cases++;
            pthread_mutex_unlock(&G.mu);
            continue;
        }
        run_case(&G.cases[i]);
        pthread_mutex_lock(&G.mu);
        G.done++;
        if (G.done % 50 == 0 || G.done == G.ncases) {
            fprintf(stderr, "[%ld/%ld cases, %.0f s]\n", G.done, G.ncases, now_s() - G.t0);
        }
        pthread_mutex_unlock(&G.mu);
    }
    return NULL;
}

static void usage(void)
{
    printf("usage: nmo_gpu_test [--shapes odd|large|both|small] [--seeds N] [--ops a,b] [--kernels a,b]\n"
           "                    [--dtypes fp32,bf16,fp16] [--families a,b] [--jobs N] [--direct]\n"
           "                    [--mutants-large] [--time-budget SEC] [--log FILE.csv] [--list]\n"
           "                    [--geometry declared|any]\n"
           "Runs every HIP kernel x dtype x family x seed x shape, judges it with numoracle,\n"
           "prints false alarms and the tables; exit 0 iff no false alarm, every mutant\n"
           "caught, no error (3: --time-budget cut the run short). Defaults: both shapes, 5 seeds,\n"
           "all ops/kernels/dtypes/families, jobs = online CPUs; mutants run at the odd shape only\n"
           "unless --mutants-large; judged under each kernel's declared reduction geometry unless\n"
           "--geometry any.\n");
}

/* The command line (main's options; the rest goes into G). */
typedef struct {
    const char *ops, *kern, *dtl, *faml, *shapes, *logp, *geometry;
    int list;
} cli_opts;

/* Parses and validates argv into o and G: -1 to go on, else main's exit code. */
static int parse_args(int argc, char **argv, cli_opts *o)
{
    *o = (cli_opts){.shapes = "both", .geometry = "declared"};
    G.seeds = 5;
    G.jobs = (int)sysconf(_SC_NPROCESSORS_ONLN);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define OPT(name) (strcmp(a, name) == 0 && v && (i++, 1))
        if (OPT("--shapes")) o->shapes = v;
        else if (OPT("--seeds")) G.seeds = atoi(v);
        else if (OPT("--ops")) o->ops = v;
        else if (OPT("--kernels")) o->kern = v;
        else if (OPT("--dtypes")) o->dtl = v;
        else if (OPT("--families")) o->faml = v;
        else if (OPT("--jobs")) G.jobs = atoi(v);
        else if (OPT("--log")) o->logp = v;
        else if (OPT("--time-budget")) G.budget = atof(v);
        else if (OPT("--geometry")) o->geometry = v;
        else if (strcmp(a, "--mutants-large") == 0) G.mutants_large = 1;
        else if (strcmp(a, "--direct") == 0) G.direct = 1;
        else if (strcmp(a, "--list") == 0) o->list = 1;
        else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage();
            return 0;
        } else {
            fprintf(stderr, "nmo_gpu_test: bad argument '%s'\n", a);
            usage();
            return 2;
        }
#undef OPT
    }
    if (G.seeds < 1 || G.jobs < 1) {
        fprintf(stderr, "nmo_gpu_test: --seeds and --jobs must be >= 1\n");
        return 2;
    }
    if (strcmp(o->shapes, "odd") && strcmp(o->shapes, "large") && strcmp(o->shapes, "both") &&
        strcmp(o->shapes, "small")) {
        fprintf(stderr, "nmo_gpu_test: --shapes odd|large|both|small\n");
        return 2;
    }
    if (strcmp(o->geometry, "declared") && strcmp(o->geometry, "any")) {
        fprintf(stderr, "nmo_gpu_test: --geometry declared|any\n");
        return 2;
    }
    G.geometry = strcmp(o->geometry, "declared") == 0;
    nmo_kernel_set_hip(&G.ks);
    small_shapes = strcmp(o->shapes, "small") == 0;
    if (small_shapes) shape_names[1] = "other";
    G.use_sh[0] = strcmp(o->shapes, "large") != 0;
    G.use_sh[1] = strcmp(o->shapes, "odd") != 0;
    G.use_sh[2] = G.use_sh[0] && !small_shapes; /* short odd rows go with the odd shapes */
    for (int d = 0; d < NDT; d++) G.use_dt[d] = in_list(o->dtl, nmo_fmt_name(dts[d]));
    for (int f = 0; f < NMO_FAM_COUNT; f++) G.use_fam[f] = in_list(o->faml, nmo_family_name(f));
    return -1;
}

/* G.k: the registry's kernels of this build's operators that --ops / --kernels select. */
static void select_kernels(const cli_opts *o)
{
    for (int i = 0; i < nmo_hip_kernel_count() && G.nk < MAXK; i++) {
        const nmo_plugin_kernel *k = nmo_hip_kernel_at(i);
        if (!nmo_op_find(k->op)) {
            if (!nmo_op_find(k->op) && (i == 0 || strcmp(nmo_hip_kernel_at(i - 1)->op, k->op) != 0))
                fprintf(stderr, "note: HIP kernels of op %s ignored (not in this build's registry)\n", k->op);
            continue;
        }
        if (in_list(o->ops, k->op) && in_list(o->kern, k->name)) G.k[G.nk++] = k;
    }
}

static void list_kernels(void)
{
    for (int i = 0; i < G.nk; i++)
        printf("%-18s %-18s %-8s %-16s %-12s %s\n", G.k[i]->op, G.k[i]->name,
               G.k[i]->correct ? "correct" : "mutant", G.k[i]->dtypes,
               G.k[i]->plan[0] ? G.k[i]->plan : "(default)", G.k[i]->desc ? G.k[i]->desc : "");
}

/* The device, BLAS, the log and the header lines (and on CUDA the conversion
 * self-test): -1 to go on, else main's exit code. */
static int start(const cli_opts *o)
{
    nmo_err err = {{0}};
    if (nmo_gpu_init(&err) != NMO_OK) {
        fprintf(stderr, "nmo_gpu_test: %s\n", err.msg);
        return 2;
    }
    /* checker threads do the parallelism: keep BLAS single-threaded */
    void (*obt)(int);
    *(void **)&obt = dlsym(RTLD_DEFAULT, "openblas_set_num_threads");
    if (obt) obt(1);
    if (o->logp) {
        G.log = fopen(o->logp, "w");
        if (!G.log) {
            fprintf(stderr, "nmo_gpu_test: cannot write %s\n", o->logp);
            return 2;
        }
        fprintf(G.log, "op,kernel,kind,dtype,shape,family,seed,verdict,pass,fail,inconclusive\n");
    }
    printf("nmo_gpu_test: %s\n", nmo_gpu_provenance_json());
    printf("kernels %d, seeds %d, shapes %s, jobs %d, judging %s, mutants at the large shape: %s\n",
           G.nk, G.seeds, o->shapes, G.jobs, G.direct ? "nmo_check per kernel" : "shared enclosures + nmo_judge",
           G.mutants_large || small_shapes ? "yes" : "no");
    if (strcmp(nmo_gpu_platform(), "cuda") == 0) {
        /* the store conversions are cvt instructions there: same bits as the integer
         * rounding the CPU emulations use, on every input (an error otherwise) */
        int64_t bb, bh;
        nmo_err ce = {{0}};
        if (nmo_gpu_conv_selftest(&bb, &bh, &ce) != NMO_OK) {
            printf("conversion self-test: ERROR %s\n", ce.msg);
            G.errors++;
        } else {
            printf("conversion self-test: %lld bf16 and %lld fp16 results differ from the integer "
                   "rounding over all 2^32 fp32 inputs\n", (long long)bb, (long long)bh);
            if (bb || bh) G.errors++;
        }
    }
    return -1;
}

/* The case list: ops of the selected kernels x shapes x dtypes x families x seeds;
 * odd shapes first (quick, and where mutants run), then the large ones. */
static void build_cases(void)
{
    const nmo_op *opl[64];
    int nop = 0;
    for (int i = 0; i < G.nk; i++) {
        const nmo_op *op = nmo_op_find(G.k[i]->op);
        int seen = 0;
        for (int j = 0; j < nop; j++) seen |= opl[j] == op;
        if (!seen && nop < 64) opl[nop++] = op;
    }
    G.cases = calloc((size_t)nop * NSH * NDT * NMO_FAM_COUNT * (size_t)G.seeds, sizeof *G.cases);
    static const int sh_order[NSH] = {0, 2, 1}; /* odd, short, then large */
    for (int si = 0; si < NSH; si++)
        for (int o = 0; o < nop; o++)
            for (int d = 0; d < NDT; d++)
                for (int f = 0; f < NMO_FAM_COUNT; f++)
                    for (int s = 1; s <= G.seeds; s++) {
                        const int sh = sh_order[si];
                        if (!G.use_sh[sh] || !G.use_dt[d] || !G.use_fam[f]) continue;
                        G.cases[G.ncases++] = (struct tcase){opl[o], d, sh, f, s};
                    }
}

/* Runs every case on G.jobs worker threads; returns the wall time in seconds. */
static double run_cases(void)
{
    pthread_mutex_init(&G.mu, NULL);
    pthread_mutex_init(&G.gpu, NULL);
    G.t0 = now_s();
    pthread_t th[256];
    int nj = G.jobs < 256 ? G.jobs : 256;
    for (int j = 0; j < nj; j++) pthread_create(&th[j], NULL, worker, NULL);
    for (int j = 0; j < nj; j++) pthread_join(th[j], NULL);
    return now_s() - G.t0;
}

/* Table 1: correct kernels per dtype and shape; returns their runs. */
static long print_correct(void)
{
    printf("\ncorrect kernels (runs = kernel x dtype x family x seed; FAIL = false alarm)\n");
    printf("%-18s %-18s %-6s %-6s %7s %7s %7s %7s %7s\n", "op", "kernel", "dtype", "shape", "runs",
           "pass", "inconc", "FAIL", "skipped");
    long runs_correct = 0;
    for (int i = 0; i < G.nk; i++) {
        if (!G.k[i]->correct) continue;
        for (int d = 0; d < NDT; d++)
            for (int sh = 0; sh < NSH; sh++) {
                if (!G.use_dt[d] || !G.use_sh[sh]) continue;
                counts t = {0};
                for (int f = 0; f < NMO_FAM_COUNT; f++) {
                    counts *c = &G.cnt[i][d][sh][f];
                    t.runs += c->runs, t.pass += c->pass, t.inconc += c->inconc, t.fail += c->fail,
                        t.skipped += c->skipped;
                }
                if (!t.runs && !t.skipped) continue;
                runs_correct += t.runs;
                printf("%-18s %-18s %-6s %-6s %7ld %7ld %7ld %7ld %7ld\n", G.k[i]->op, G.k[i]->name,
                       nmo_fmt_name(dts[d]), shape_names[sh], t.runs, t.pass, t.inconc, t.fail, t.skipped);
            }
    }
    return runs_correct;
}

/* Table 2: mutants x families; sets the number of mutants and of those caught. */
static void print_mutants(int *nmut, int *ncaught)
{
    printf("\nmutants x families (FAIL: caught on some dtype/shape/seed; '.': never; '-': not run)\n");
    printf("%-18s %-18s", "op", "mutant");
    for (int f = 0; f < NMO_FAM_COUNT; f++) printf(" %-8.8s", nmo_family_name(f));
    printf(" %s\n", "caught");
    *nmut = *ncaught = 0;
    for (int i = 0; i < G.nk; i++) {
        if (G.k[i]->correct) continue;
        (*nmut)++;
        int any = 0;
        printf("%-18s %-18s", G.k[i]->op, G.k[i]->name);
        for (int f = 0; f < NMO_FAM_COUNT; f++) {
            long fails = 0, runs = 0;
            for (int d = 0; d < NDT; d++)
                for (int sh = 0; sh < NSH; sh++) {
                    fails += G.cnt[i][d][sh][f].fail;
                    runs += G.cnt[i][d][sh][f].runs;
                }
            any |= fails > 0;
            printf(" %-8s", !runs ? "-" : fails ? "FAIL" : ".");
        }
        *ncaught += any;
        printf(" %s\n", any ? "yes" : "NO");
    }
}

/* The summary lines and the exit code: 0 OK, 1 NOT OK, 3 cut short by --time-budget. */
static int summarize(long runs_correct, int nmut, int ncaught, double secs)
{
    printf("\nsummary: %ld runs of correct kernels, %ld false alarms; %d/%d mutants caught; %ld errors; "
           "%.1f s\n",
           runs_correct, G.false_alarms, ncaught, nmut, G.errors, secs);
    printf("geometry: %s; %ld kernel runs judged under a declared reduction geometry\n",
           G.geometry ? "declared" : "any", G.geo_runs);
    if (G.skipped_cases)
        printf("INCOMPLETE: %ld of %ld cases not run (--time-budget %.0f s reached)\n", G.skipped_cases,
               G.ncases, G.budget);
    if (G.log) fclose(G.log);
    int ok = G.false_alarms == 0 && ncaught == nmut && G.errors == 0 && runs_correct > 0;
    if (G.skipped_cases && G.false_alarms == 0 && G.errors == 0) {
        printf("RESULT: INCOMPLETE (no false alarm in what ran)\n");
        return 3;
    }
    printf("%s\n", ok ? "RESULT: OK" : "RESULT: NOT OK");
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    cli_opts o;
    int rc = parse_args(argc, argv, &o);
    if (rc >= 0) return rc;
    select_kernels(&o);
    if (o.list) {
        list_kernels();
        return 0;
    }
    if (!G.nk) {
        fprintf(stderr, "nmo_gpu_test: no kernel selected\n");
        return 2;
    }
    if ((rc = start(&o)) >= 0) return rc;
    build_cases();
    double secs = run_cases();
    long runs_correct = print_correct();
    int nmut, ncaught;
    print_mutants(&nmut, &ncaught);
    return summarize(runs_correct, nmut, ncaught, secs);
}
