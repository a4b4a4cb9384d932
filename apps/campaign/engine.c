/* numoracle campaign: execution — jobs, worker processes, the sandboxed mutant runs, the
 * journal and resume.
 *
 * Processes: the parent plans the jobs, owns the journal (the only writer) and hands
 * jobs to W forked workers over pipes; a worker evaluates one input per job (enclosure
 * once, every correct variant in-process, every mutant in a forked child) and sends one
 * JSON line per run back. A run is done when its line is in the journal; the parent
 * writes each line with one write(2) and fsyncs before reading more (group commit), so
 * a SIGKILL loses no finished run and a torn last line is dropped on resume.
 *
 * Mutant children: die with the worker (PR_SET_PDEATHSIG), stop after `timeout` seconds
 * of CPU time (ITIMER_PROF -> SIGPROF: load on the machine does not change which mutants
 * time out; the worker kills at 10x timeout + 5 s of wall time as a backstop), get their inputs and
 * outputs in guard-allocated (PROT_NONE on both sides), poison-filled buffers (compiled
 * mutants), and are run twice
 * with different stack fill: outputs that differ make the run "nondet" (reads of
 * uninitialized memory), excluded from verdicts. ASLR is switched off for the campaign
 * process (personality, re-exec) so that the remaining garbage is reproducible.
 *
 * Backend hip: the correct variants and mutants are the HIP registry's kernels, run in
 * the worker through the runner (a device context does not survive fork; the parent
 * never touches the device); a failed launch ends the worker after its line (exit 7, not
 * counted as a death) so that a faulted context is never reused. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "campaign/campaign.h"
#include "campaign/engine.h"
#include "campaign/journal.h"
#include "nmo_gpu.h"
#include "nmo_gpu_oracle.h"
#include "nmo_runner.h"

#define NMO_HIP_MAXK 64  /* correct HIP kernels per operator */
#define NMO_NGRP 4       /* distinct declared plans among one operator's kernels */
#define NMO_NGEO 8       /* distinct declared geometries on one input (slot 0 unused) */

/* ---------------------------------------------------------------- small helpers */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int nmo_eng_jnum(char *buf, size_t n, double x)
{
    if (isnan(x)) return snprintf(buf, n, "\"nan\"");
    if (isinf(x)) return snprintf(buf, n, x > 0 ? "\"inf\"" : "\"-inf\"");
    return snprintf(buf, n, "%.17g", x);
}

double nmo_eng_jget(const cJSON *j)
{
    if (cJSON_IsNumber(j)) return j->valuedouble;
    if (cJSON_IsString(j)) {
        if (strcmp(j->valuestring, "inf") == 0) return INFINITY;
        if (strcmp(j->valuestring, "-inf") == 0) return -INFINITY;
    }
    return NAN;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int read_all_fd(int fd, void *p, size_t n)
{
    char *c = p;
    while (n) {
        ssize_t r = read(fd, c, n);
        if (r < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (r == 0) return -1;
        c += r;
        n -= (size_t)r;
    }
    return 0;
}

/* ---------------------------------------------------------------- done-set (hashes) */

uint64_t nmo_hkey(const char *s)
{
    uint64_t h = nmo_fnv1a(s, strlen(s), NMO_FNV_INIT);
    return h ? h : 1;
}

int nmo_hset_has(const nmo_hset *s, uint64_t k)
{
    if (!s->cap) return 0;
    for (size_t i = k & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
        if (s->h[i] == k) return 1;
        if (!s->h[i]) return 0;
    }
}

int nmo_hset_add(nmo_hset *s, uint64_t k)
{
    if ((s->n + 1) * 2 > s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 1024;
        uint64_t *nh = calloc(nc, sizeof *nh);
        if (!nh) return -1;
        for (size_t i = 0; i < s->cap; i++)
            if (s->h[i])
                for (size_t j = s->h[i] & (nc - 1);; j = (j + 1) & (nc - 1))
                    if (!nh[j]) {
                        nh[j] = s->h[i];
                        break;
                    }
        free(s->h);
        s->h = nh;
        s->cap = nc;
    }
    for (size_t i = k & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
        if (s->h[i] == k) return 0;
        if (!s->h[i]) {
            s->h[i] = k;
            s->n++;
            return 1;
        }
    }
}

/* ---------------------------------------------------------------- jobs and run ids */

typedef struct {
    int phase; /* NMO_PH_* */
    int op, dt, shape, fam;
    uint64_t seed;
    int with_mut;
    int m0, m1; /* probe: mutant index range */
    int retries;
} job_t;

typedef struct {
    nmo_camp_cfg *cfg;
    nmo_camp_mutants *ms;
    job_t *jobs;
    int njobs;
    nmo_hset done;
    int jfd;              /* journal */
    /* per op: alive mutant indices (evaluated) */
    int *alive[NMO_CAMP_MAX_OPS];
    int nalive[NMO_CAMP_MAX_OPS];
    /* calibration tolerances [op][dt][shape][k][2] */
    double *tol;
    int tol_ready;
    /* progress */
    long total_runs, done_runs, started_done, ran_now;
    double t0, last_bar;
    int bar;
    FILE *out;
    /* backend hip: the HIP registry's correct kernels per operator, in registry order */
    int hip;
    nmo_kernel_set ks;
    const nmo_plugin_kernel *hk[NMO_CAMP_MAX_OPS][NMO_HIP_MAXK];
    int nhk[NMO_CAMP_MAX_OPS];
    int oracle_gpu; /* --oracle-device gpu (judge_gpu) */
} ctx_t;

/* Correct variants of operator oi: the CPU candidate registry's, or the HIP kernels. */
static int ncorrect(const ctx_t *x, int oi)
{
    return x->hip ? x->nhk[oi] : nmo_camp_ncorrect(x->cfg->ops[oi]);
}
static const char *correct_name(const ctx_t *x, int oi, int v)
{
    return x->hip ? x->hk[oi][v]->name : nmo_camp_correct(x->cfg->ops[oi], v)->name;
}
/* backend hip: does any correct kernel of oi run storage dtype d? */
static int hip_claims(const ctx_t *x, int oi, nmo_fmt d)
{
    for (int v = 0; v < x->nhk[oi]; v++)
        if (nmo_kernel_claims_dtype(x->hk[oi][v], d, d)) return 1;
    return 0;
}

#define TOL_IDX(x, o, d, s, k) (((((size_t)(o) * NMO_CAMP_MAX_DT + (d)) * NMO_CAMP_MAX_SHAPES + (s)) * NMO_MAX_TENSORS + (k)) * 2)

static const char *phase_name(int p) { return p == NMO_PH_PROBE ? "probe" : p == NMO_PH_CALIB ? "calib" : "eval"; }

static const nmo_camp_mutant *job_mutant(const ctx_t *x, const job_t *j, int r, int *is_mut)
{
    if (j->phase == NMO_PH_PROBE) {
        *is_mut = 1;
        return &x->ms->m[j->m0 + r];
    }
    int nc = ncorrect(x, j->op);
    if (r < nc) {
        *is_mut = 0;
        return NULL;
    }
    *is_mut = 1;
    return &x->ms->m[x->alive[j->op][r - nc]];
}

static int job_nruns(const ctx_t *x, const job_t *j)
{
    if (j->phase == NMO_PH_PROBE) return j->m1 - j->m0;
    int n = ncorrect(x, j->op);
    if (j->phase == NMO_PH_EVAL && j->with_mut) n += x->nalive[j->op];
    return n;
}

/* "e|rms_norm|bf16|3x1025|gaussian|1|block256" */
static void run_id(char *buf, size_t n, const ctx_t *x, const job_t *j, int r)
{
    int is_mut;
    const nmo_camp_mutant *m = job_mutant(x, j, r, &is_mut);
    if (j->phase == NMO_PH_PROBE) {
        snprintf(buf, n, "p|%s", m->id);
        return;
    }
    const nmo_op *op = x->cfg->ops[j->op];
    const char *cand = is_mut ? m->id : correct_name(x, j->op, r);
    snprintf(buf, n, "%c|%s|%s|%s|%s|%llu|%s", j->phase == NMO_PH_CALIB ? 'c' : 'e', op->name,
             nmo_fmt_name(x->cfg->dt[j->dt]), x->cfg->shapes[j->op][j->shape].text, nmo_family_name(j->fam),
             (unsigned long long)j->seed, cand);
}

static int in_list(const uint64_t *v, int n, uint64_t s)
{
    for (int i = 0; i < n; i++)
        if (v[i] == s) return 1;
    return 0;
}

static int push_job(ctx_t *x, const job_t *j)
{
    job_t *nj = realloc(x->jobs, (size_t)(x->njobs + 1) * sizeof *nj);
    if (!nj) return -1;
    x->jobs = nj;
    x->jobs[x->njobs++] = *j;
    return 0;
}

static int plan_jobs(ctx_t *x, const nmo_camp_opts *o)
{
    nmo_camp_cfg *cfg = x->cfg;
    /* probe: chunks of 8 mutants of one operator (not sharded: every shard needs them) */
    for (int oi = 0; oi < cfg->nops; oi++) {
        int start = -1;
        for (int i = 0; i <= x->ms->n; i++) {
            int mine = i < x->ms->n && x->ms->m[i].op == oi && !x->ms->m[i].stillborn;
            if (mine && start < 0) start = i;
            if (start >= 0 && (!mine || i - start == (x->hip ? 1 : 8))) {
                job_t j = {.phase = NMO_PH_PROBE, .op = oi, .m0 = start, .m1 = i};
                if (push_job(x, &j)) return -1;
                start = mine ? i : -1;
            }
        }
    }
    /* calibration (not sharded) */
    if (cfg->check_on[NMO_CK_P999])
        for (int oi = 0; oi < cfg->nops; oi++)
            for (int d = 0; d < cfg->ndt; d++)
                for (int s = 0; s < cfg->nshapes[oi] && (!x->hip || hip_claims(x, oi, cfg->dt[d])); s++)
                    for (int f = 0; f < cfg->ncfam; f++)
                        for (int k = 0; k < cfg->ncseeds; k++) {
                            job_t j = {.phase = NMO_PH_CALIB, .op = oi, .dt = d, .shape = s, .fam = cfg->cfam[f],
                                       .seed = cfg->cseeds[k]};
                            if (push_job(x, &j)) return -1;
                        }
    /* evaluation (sharded by job index) */
    long eidx = 0;
    for (int oi = 0; oi < cfg->nops; oi++)
        for (int d = 0; d < cfg->ndt; d++)
            for (int s = 0; s < cfg->nshapes[oi] && (!x->hip || hip_claims(x, oi, cfg->dt[d])); s++)
                for (int f = 0; f < cfg->nmain + cfg->nshift; f++)
                    for (int k = 0; k < cfg->nseeds; k++, eidx++) {
                        if (o->shard_n > 0 && eidx % o->shard_n != o->shard_i - 1) continue;
                        int fam = f < cfg->nmain ? cfg->fam_main[f] : cfg->fam_shift[f - cfg->nmain];
                        job_t j = {.phase = NMO_PH_EVAL, .op = oi, .dt = d, .shape = s, .fam = fam,
                                   .seed = cfg->seeds[k],
                                   .with_mut = in_list(cfg->mseeds, cfg->nmseeds, cfg->seeds[k])};
                        if (push_job(x, &j)) return -1;
                    }
    return 0;
}

/* ---------------------------------------------------------------- worker: evaluation */

typedef struct {
    ctx_t *x;
    int in_fd, out_fd;
    unsigned char *shm;
    size_t shm_cap;
    char *line;
    size_t line_cap;
    int gpu_bad;        /* backend hip: a launch failed; the worker exits after its line */
    int gpu_noted;      /* backend hip: the device provenance note was sent */
    void *dcand;        /* --oracle-device gpu: the candidate's device copy (judge_gpu) */
    size_t dcand_cap;
} worker_t;

static void emit_line(worker_t *w, const char *s)
{
    size_t n = strlen(s);
    if (write_all(w->out_fd, s, n) != 0) _exit(0); /* parent gone */
}

/* Grow-able string buffer for one record. */
typedef struct {
    char *p;
    size_t n, cap;
} sbuf;

static void sb_add(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_add(sbuf *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
        va_end(ap);
        if (k >= 0 && b->n + (size_t)k < b->cap) {
            b->n += (size_t)k;
            return;
        }
        size_t nc = b->cap ? b->cap * 2 : 1024;
        while (k >= 0 && nc < b->n + (size_t)k + 1) nc *= 2;
        char *np = realloc(b->p, nc);
        if (!np) return;
        b->p = np;
        b->cap = nc;
    }
}

static void sb_json_str(sbuf *b, const char *s)
{
    sb_add(b, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') sb_add(b, "\\%c", c);
        else if (c == '\n') sb_add(b, "\\n");
        else if (c == '\t') sb_add(b, "\\t");
        else if (c < 0x20) sb_add(b, "\\u%04x", c);
        else sb_add(b, "%c", c);
    }
    sb_add(b, "\"");
}

/* per-input state of a job */
typedef struct {
    nmo_case c;
    int have_case;
    int nc;                                  /* correct variants */
    nmo_tensor (*outs)[NMO_MAX_TENSORS];     /* [nc][k] */
    int *ok;                                 /* correct variant ran */
    char (*errmsg)[256];
    nmo_report rep;                          /* enclosures (keep_enc) of the default */
    int have_rep;
    int def;                                 /* the default correct variant (role correct) */
    /* backend hip: kernels declaring another plan than the default kernel are judged by
     * numoracle under their own plan: group g >= 1 (group 0: rep and c.plan) */
    int ng;
    int *grp;                                /* [nc] plan group of each correct variant */
    nmo_plan gplan[NMO_NGRP];
    char gtext[NMO_NGRP][128];
    nmo_report grep[NMO_NGRP];
    /* issue 17: the reduction geometry each correct variant declares, laid over its plan
     * group's plan: geo[v] >= 1 its geometry slot, 0 none declared (`any` only), -1 the
     * declared geometry could not be applied (gerr[v] says why; never judged as `any`) */
    int nge;
    int *geo;
    char (*gerr)[160];
    nmo_plan geplan[NMO_NGEO];
    char getext[NMO_NGEO][128];
    int gegrp[NMO_NGEO];
    nmo_report gerep[NMO_NGEO];
    double *ref[NMO_MAX_TENSORS];
    nmo_ck_tensor ck[NMO_MAX_TENSORS];
    double *dec[NMO_MAX_TENSORS];            /* decode buffer */
    void *din[NMO_MAX_TENSORS];              /* --oracle-device gpu: the inputs on the device */
    int din_state;                           /* 0 not uploaded, 1 uploaded, -1 failed */
} input_t;

static void input_free(input_t *in)
{
    if (in->outs)
        for (int v = 0; v < in->nc; v++)
            for (int k = 0; k < NMO_MAX_TENSORS; k++) nmo_tensor_free(&in->outs[v][k]);
    free(in->outs);
    free(in->ok);
    free(in->errmsg);
    free(in->grp);
    free(in->geo);
    free(in->gerr);
    for (int g = 1; g < in->ng; g++) nmo_report_free(&in->grep[g]);
    for (int g = 1; g < in->nge; g++) nmo_report_free(&in->gerep[g]);
    if (in->have_rep) nmo_report_free(&in->rep);
    for (int k = 0; k < NMO_MAX_TENSORS; k++) free(in->ref[k]), free(in->dec[k]), nmo_gpu_free(in->din[k]);
    if (in->have_case) nmo_case_free(&in->c);
    memset(in, 0, sizeof *in);
}

static nmo_status alloc_outs(nmo_tensor *out, const nmo_case *c, nmo_err *err)
{
    NMO_RETURN_IF_ERR(nmo_case_alloc_outputs(c, out, 0, err));
    return NMO_OK;
}

/* Reference values: midpoint of the pre-store enclosure, rounded into `out`. */
static void make_ref(double *ref, const nmo_fenc *enc, int64_t n, const nmo_plan *p)
{
    for (int64_t i = 0; i < n; i++) {
        const nmo_fenc *e = &enc[i];
        if (e->lo != e->lo) {
            ref[i] = NAN;
            continue;
        }
        double m = e->lo == e->hi ? e->lo : e->lo / 2 + e->hi / 2;
        ref[i] = m != m ? NAN : nmo_fmt_round(p->out, m, NMO_RNE, p->ftz);
    }
}

/* backend hip: one journal note per worker with the device's provenance (id = "n|" +
 * text, the key a resumed journal_open derives for notes: never journaled twice) */
static void hip_note(worker_t *w)
{
    if (w->gpu_noted) return;
    w->gpu_noted = 1;
    const char *pj = nmo_gpu_provenance_json();
    char text[420];
    size_t q = 0;
    q += (size_t)snprintf(text, sizeof text, "backend hip: device ");
    for (const char *c = pj ? pj : "?"; *c && q + 1 < sizeof text; c++) text[q++] = *c == '"' ? '\'' : *c;
    text[q] = '\0';
    sbuf b = {0};
    char id[440];
    snprintf(id, sizeof id, "n|%s", text);
    sb_add(&b, "{\"type\":\"note\",\"id\":");
    sb_json_str(&b, id);
    sb_add(&b, ",\"text\":");
    sb_json_str(&b, text);
    sb_add(&b, "}\n");
    if (b.p) emit_line(w, b.p);
    free(b.p);
}

/* backend hip: run kernel k on the case under plan group g; out[] allocated here when it
 * ran. Returns "ok", "skipped" (the kernel declines the case) or "error" (the runner's
 * checks: launch, last error, synchronize; the worker restarts after it: a device
 * fault leaves the context unusable). */
static const char *hip_exec(worker_t *w, const nmo_plugin_kernel *k, input_t *in, int g, nmo_tensor *out, char *detail,
                            size_t dn)
{
    nmo_case cg = in->c;
    if (g > 0) cg.plan = in->gplan[g];
    nmo_run_info info;
    memset(&info, 0, sizeof info);
    nmo_err e = {{0}};
    detail[0] = '\0';
    nmo_status st = nmo_run_kernel(out, &info, k, &w->x->ks, &cg, &e);
    free(info.provenance_json);
    if (st != NMO_OK) {
        snprintf(detail, dn, "%.250s", e.msg);
        w->gpu_bad = 1;
        return "error";
    }
    if (info.skipped) {
        snprintf(detail, dn, "%.250s", info.why);
        return "skipped";
    }
    hip_note(w);
    return "ok";
}

/* The geometry text correct variant v declares on this input (0: none): the CPU
 * candidate's (refs/cand/cand_geom.c, tokens from the shape), the HIP kernel's (ABI 2's
 * callback, on its plan group's case). */
static int variant_geometry(worker_t *w, input_t *in, const job_t *j, int v, char *text, size_t len, nmo_err *e)
{
    ctx_t *x = w->x;
    if (x->hip) {
        nmo_case cg = in->c;
        if (in->grp[v] > 0) cg.plan = in->gplan[in->grp[v]];
        return nmo_kernel_geometry(&x->ks, x->hk[j->op][v], &cg, text, len);
    }
    const char *g = nmo_cand_geom(nmo_camp_correct(x->cfg->ops[j->op], v));
    if (!g) return 0;
    const nmo_camp_shape *sh = &x->cfg->shapes[j->op][j->shape];
    return nmo_cand_geom_text(text, len, g, sh->nshape, sh->shape, e) == NMO_OK ? 1 : -1;
}

/* Enclosures under every distinct (plan group, declared geometry) of the variants that ran:
 * one extra nmo_check per geometry. A geometry that does not parse or whose enclosure
 * fails marks its variants -1 with the reason (the run is then reported, not judged). */
static void geo_setup(input_t *in, worker_t *w, const job_t *j)
{
    in->nge = 1;
    if (!w->x->cfg->geometry || j->phase != NMO_PH_EVAL) return;
    for (int v = 0; v < in->nc; v++) {
        if (in->ok[v] != 1) continue;
        char text[128];
        nmo_err e = {{0}};
        int d = variant_geometry(w, in, j, v, text, sizeof text, &e);
        if (d == 0) continue;
        in->geo[v] = -1;
        if (d < 0) {
            snprintf(in->gerr[v], sizeof in->gerr[v], "%.150s", e.msg);
            continue;
        }
        int g = 1;
        while (g < in->nge && !(in->gegrp[g] == in->grp[v] && strcmp(in->getext[g], text) == 0)) g++;
        if (g == in->nge) {
            if (g >= NMO_NGEO) {
                snprintf(in->gerr[v], sizeof in->gerr[v], "too many distinct geometries");
                continue;
            }
            nmo_plan p = in->grp[v] > 0 ? in->gplan[in->grp[v]] : in->c.plan;
            nmo_case cg = in->c;
            nmo_check_opts co = {.keep_enc = 1};
            if (nmo_plan_parse(&p, text, &e) != NMO_OK) {
                snprintf(in->gerr[v], sizeof in->gerr[v], "geometry '%.60s': %.80s", text, e.msg);
                continue;
            }
            cg.plan = p;
            if (nmo_check(&in->gerep[g], &cg, NULL, &co, &e) != NMO_OK) {
                snprintf(in->gerr[v], sizeof in->gerr[v], "geometry '%.60s': %.80s", text, e.msg);
                continue;
            }
            in->geplan[g] = p, in->gegrp[g] = in->grp[v], in->nge++;
            snprintf(in->getext[g], sizeof in->getext[g], "%s", text);
        }
        in->geo[v] = g;
    }
}

static nmo_status input_setup(input_t *in, worker_t *w, const job_t *j, nmo_err *err)
{
    ctx_t *x = w->x;
    const nmo_camp_cfg *cfg = x->cfg;
    const nmo_op *op = cfg->ops[j->op];
    memset(in, 0, sizeof *in);
    nmo_plan p;
    nmo_plan_default(&p, cfg->dt[j->dt]);
    int def = 0;
    if (x->hip) { /* the default: the first correct kernel running the dtype; its plan */
        def = -1;
        for (int v = 0; v < x->nhk[j->op] && def < 0; v++)
            if (nmo_kernel_claims_dtype(x->hk[j->op][v], p.in, p.out)) def = v;
        if (def < 0) return nmo_err_set(err, NMO_ERR_UNSUPPORTED, "no HIP kernel of %s runs %s", op->name, nmo_fmt_name(p.in));
        const char *pt = x->hk[j->op][def]->plan;
        if (pt && pt[0] && nmo_plan_parse(&p, pt, err) != NMO_OK) return NMO_ERR_PARSE;
    }
    const nmo_camp_shape *sh = &cfg->shapes[j->op][j->shape];
    nmo_status s = nmo_case_init(&in->c, op, &p, sh->nshape, sh->shape, err);
    if (s != NMO_OK) return s;
    in->have_case = 1;
    nmo_case_fill(&in->c, j->fam, j->seed);
    in->nc = ncorrect(x, j->op);
    in->def = def;
    in->outs = calloc((size_t)in->nc, sizeof *in->outs);
    in->ok = calloc((size_t)in->nc, sizeof *in->ok);
    in->errmsg = calloc((size_t)in->nc, sizeof *in->errmsg);
    in->grp = calloc((size_t)in->nc + 1, sizeof *in->grp);
    in->geo = calloc((size_t)in->nc + 1, sizeof *in->geo);
    in->gerr = calloc((size_t)in->nc + 1, sizeof *in->gerr);
    in->nge = 1;
    if (!in->outs || !in->ok || !in->errmsg || !in->grp || !in->geo || !in->gerr) return nmo_err_set(err, NMO_ERR_NOMEM, "out of memory");
    if (x->hip) {
        in->ng = 1;
        snprintf(in->gtext[0], sizeof in->gtext[0], "%s", x->hk[j->op][def]->plan ? x->hk[j->op][def]->plan : "");
        for (int v = 0; v < in->nc; v++) {
            const nmo_plugin_kernel *k = x->hk[j->op][v];
            if (!nmo_kernel_claims_dtype(k, p.in, p.out)) {
                in->ok[v] = 2; /* skipped: not a run */
                snprintf(in->errmsg[v], 256, "kernel %s does not run %s", k->name, nmo_fmt_name(p.in));
                continue;
            }
            const char *pt = k->plan ? k->plan : "";
            int g = 0;
            while (g < in->ng && strcmp(in->gtext[g], pt) != 0) g++;
            if (g == in->ng) {
                nmo_err e = {{0}};
                nmo_plan_default(&in->gplan[g], cfg->dt[j->dt]);
                if (g >= NMO_NGRP || nmo_plan_parse(&in->gplan[g], pt, &e) != NMO_OK) {
                    snprintf(in->errmsg[v], 256, "kernel %s: plan '%.100s': %.100s", k->name, pt,
                             g >= NMO_NGRP ? "too many distinct plans" : e.msg);
                    continue;
                }
                snprintf(in->gtext[g], sizeof in->gtext[g], "%s", pt);
                in->ng++;
            }
            in->grp[v] = g;
            const char *rs = hip_exec(w, k, in, g, in->outs[v], in->errmsg[v], 256);
            in->ok[v] = strcmp(rs, "ok") == 0 ? 1 : strcmp(rs, "skipped") == 0 ? 2 : 0;
        }
    } else
        for (int v = 0; v < in->nc; v++) {
            nmo_err e = {{0}};
            if (alloc_outs(in->outs[v], &in->c, &e) != NMO_OK) return nmo_err_set(err, NMO_ERR_NOMEM, "%s", e.msg);
            nmo_cand_args a = {in->c.in, in->c.n_in, in->outs[v], in->c.n_out, in->c.param, op->n_param, &in->c.plan};
            const nmo_cand *cd = nmo_camp_correct(op, v);
            in->ok[v] = cd->run(&a, &e) == NMO_OK;
            if (!in->ok[v]) snprintf(in->errmsg[v], 256, "%.250s", e.msg);
        }
    if (in->ok[def] != 1)
        return nmo_err_set(err, NMO_ERR_GENERIC, "default candidate %s failed: %s", correct_name(x, j->op, def), in->errmsg[def]);
    nmo_check_opts co = {.keep_enc = 1};
    s = nmo_check(&in->rep, &in->c, in->outs[def], &co, err);
    if (s != NMO_OK) return s;
    in->have_rep = 1;
    for (int g = 1; g < in->ng; g++) { /* hip: enclosures under the other declared plans */
        nmo_case cg = in->c;
        cg.plan = in->gplan[g];
        s = nmo_check(&in->grep[g], &cg, NULL, &co, err);
        if (s != NMO_OK) {
            in->ng = g;
            return s;
        }
    }
    geo_setup(in, w, j);
    nmo_report rref;
    int have_rref = 0;
    if (cfg->ref_fp64) {
        nmo_case c2 = in->c; /* same tensors, a binary64 plan: the tight real result */
        nmo_plan_parse(&c2.plan, "compute=fp64 acc=fp64 inter=fp64", NULL);
        if (nmo_check(&rref, &c2, NULL, &co, err) == NMO_OK) have_rref = 1;
    }
    for (int k = 0; k < in->c.n_out; k++) {
        int64_t n = nmo_tensor_numel(&in->c.out[k]);
        in->ref[k] = malloc((size_t)n * sizeof(double));
        in->dec[k] = malloc((size_t)n * sizeof(double));
        if (!in->ref[k] || !in->dec[k]) return nmo_err_set(err, NMO_ERR_NOMEM, "out of memory");
        make_ref(in->ref[k], have_rref ? rref.enc[k] : in->rep.enc[k], n, &in->c.plan);
        const double *tol = NULL;
        if (j->phase == NMO_PH_EVAL && x->tol_ready) {
            const double *t = &x->tol[TOL_IDX(x, j->op, j->dt, j->shape, k)];
            if (!isnan(t[0])) tol = t;
        }
        nmo_ck_setup(&in->ck[k], &in->c, k, in->ref[k], tol);
    }
    if (have_rref) nmo_report_free(&rref);
    return NMO_OK;
}

typedef struct {
    char v[NMO_CK_COUNT + 1];
    int64_t pass, fail, inc;
    nmo_ck_stats st;
    int64_t ulp; /* max distance from the reference in output ulps (ordinals) */
    int on_gpu;  /* numoracle's counts from the GPU tier (judge_gpu) */
    char oderr[160]; /* the GPU tier's error on a case it checks (the CPU judged the run) */
} verdicts_t;

#define ULP_HUGE ((int64_t)1 << 40)

static int64_t ulp_dist(nmo_fmt f, double a, double e)
{
    if (a == e || (isnan(a) && isnan(e))) return 0;
    if (!isfinite(a) || !isfinite(e)) return ULP_HUGE;
    int64_t d = nmo_fmt_ordinal(f, a) - nmo_fmt_ordinal(f, e);
    return d < 0 ? -d : d;
}

/* --oracle-device gpu: numoracle's counts for out under plan group g from the GPU tier
 * (nmo_gpu_check: the fast engine's hot paths on the device, what they leave escalated on
 * the host), which gives the certified verdicts element for element, as nmo_judge does on
 * the enclosures input_setup kept (those stay: the reference and the geometry's verdicts
 * come from them). The kernel's output is uploaded again (the runner copied it back for
 * the fixed checks), the inputs once an input. A case the tier does not check (another
 * operator or plan) or a tier error (journaled as "oderr"): 0, and the CPU judges the run
 * as without the option. */
static int judge_gpu(worker_t *w, verdicts_t *r, input_t *in, int g, const nmo_report *rp, nmo_tensor *out)
{
    nmo_case cg = in->c;
    if (g > 0) cg.plan = in->gplan[g];
    const char *why = NULL;
    if (in->c.n_out != 1 || !nmo_gpu_check_supported(&cg, &why) || in->din_state < 0) return 0;
    nmo_err e = {{0}};
    if (in->din_state == 0) {
        in->din_state = -1;
        for (int k = 0; k < in->c.n_in; k++) {
            size_t b = (size_t)nmo_tensor_numel(&in->c.in[k]) * nmo_fmt_bytes(in->c.in[k].dtype);
            if (nmo_gpu_alloc(&in->din[k], b, &e) != NMO_OK || nmo_gpu_h2d(in->din[k], in->c.in[k].data, b, &e) != NMO_OK)
                goto bad;
        }
        in->din_state = 1;
    }
    size_t cb = (size_t)nmo_tensor_numel(&out[0]) * nmo_fmt_bytes(out[0].dtype);
    if (cb > w->dcand_cap) {
        nmo_gpu_free(w->dcand);
        w->dcand = NULL, w->dcand_cap = 0;
        if (nmo_gpu_alloc(&w->dcand, cb, &e) != NMO_OK) goto bad;
        w->dcand_cap = cb;
    }
    if (nmo_gpu_h2d(w->dcand, out[0].data, cb, &e) != NMO_OK) goto bad;
    nmo_check_opts co = {.max_ulps = rp->max_ulps};
    nmo_report gr;
    if (nmo_gpu_check(&gr, &cg, w->dcand, (const void *const *)in->din, &co, NULL, &e) != NMO_OK) goto bad;
    r->pass = gr.n_pass, r->fail = gr.n_fail, r->inc = gr.n_inconc;
    nmo_report_free(&gr);
    r->on_gpu = 1;
    return 1;
bad:
    snprintf(r->oderr, sizeof r->oderr, "%.150s", e.msg);
    return 0;
}

/* numoracle's verdict under plan group g (0: the default's plan; hip kernels declaring
 * another plan: theirs); the baselines use the default plan's reference for every run */
static void judge(worker_t *w, verdicts_t *r, input_t *in, int g, const nmo_camp_cfg *cfg, nmo_tensor *out)
{
    const nmo_report *rp = g > 0 ? &in->grep[g] : &in->rep;
    const nmo_plan *pl = g > 0 ? &in->gplan[g] : &in->c.plan;
    memset(r, 0, sizeof *r);
    for (int c = 0; c < NMO_CK_COUNT; c++) r->v[c] = cfg->check_on[c] ? 'P' : '-';
    r->v[NMO_CK_COUNT] = '\0';
    const int gpu = w->x->oracle_gpu && judge_gpu(w, r, in, g, rp, out);
    for (int k = 0; k < in->c.n_out; k++) {
        int64_t n = nmo_tensor_numel(&out[k]);
        nmo_tensor_load_f64(in->dec[k], &out[k], 0, n, 1);
        for (int64_t i = 0; i < n; i++) {
            if (!gpu) {
                nmo_elem_info info;
                nmo_verdict vd = nmo_judge(&info, &rp->enc[k][i], in->dec[k][i], pl, rp->max_ulps, NULL);
                if (vd == NMO_PASS) r->pass++;
                else if (vd == NMO_FAIL) r->fail++;
                else r->inc++;
            }
            int64_t u = ulp_dist(in->c.plan.out, in->dec[k][i], in->ref[k][i]);
            if (u > r->ulp) r->ulp = u;
        }
        for (int c = 1; c < NMO_CK_COUNT; c++) {
            if (!cfg->check_on[c]) continue;
            char v = nmo_ck_judge(&in->ck[k], (nmo_ck)c, in->dec[k]);
            if (v == 'F' || (v == '-' && r->v[c] != 'F')) r->v[c] = v;
        }
        nmo_ck_stats st;
        nmo_ck_stats_of(&st, in->dec[k], in->ref[k], n);
        if (st.max_abs > r->st.max_abs || isnan(st.max_abs)) r->st.max_abs = st.max_abs;
        if (st.max_rel > r->st.max_rel) r->st.max_rel = st.max_rel;
        if (st.min_eq_tol > r->st.min_eq_tol) r->st.min_eq_tol = st.min_eq_tol;
    }
    r->v[NMO_CK_NUMORACLE] = r->fail ? 'F' : r->inc ? 'I' : 'P';
}

static void record_head(sbuf *b, ctx_t *x, const job_t *j, const char *id, const char *cand, const char *role)
{
    const nmo_camp_cfg *cfg = x->cfg;
    b->n = 0;
    sb_add(b, "{\"type\":\"run\",\"id\":");
    sb_json_str(b, id);
    sb_add(b, ",\"phase\":\"%s\",\"op\":\"%s\",\"dtype\":\"%s\",\"shape\":\"%s\",\"family\":\"%s\",\"seed\":%llu,\"cand\":",
           phase_name(j->phase), cfg->ops[j->op]->name, nmo_fmt_name(cfg->dt[j->dt]), cfg->shapes[j->op][j->shape].text,
           nmo_family_name(j->fam), (unsigned long long)j->seed);
    sb_json_str(b, cand);
    sb_add(b, ",\"role\":\"%s\"", role);
}

static void record_verdicts(sbuf *b, const verdicts_t *r)
{
    char a[40], m[40], t[40];
    nmo_eng_jnum(a, sizeof a, r->st.max_abs);
    nmo_eng_jnum(m, sizeof m, r->st.max_rel);
    nmo_eng_jnum(t, sizeof t, r->st.min_eq_tol);
    sb_add(b, ",\"v\":\"%s\",\"nmo\":[%lld,%lld,%lld],\"mae\":%s,\"mre\":%s,\"teq\":%s,\"ulp\":%lld", r->v,
           (long long)r->pass, (long long)r->fail, (long long)r->inc, a, m, t, (long long)r->ulp);
    if (r->on_gpu) sb_add(b, ",\"od\":\"gpu\""); /* judged by the GPU tier */
    if (r->oderr[0]) {
        sb_add(b, ",\"oderr\":");
        sb_json_str(b, r->oderr);
    }
}

/* issue 17: numoracle's verdict on out under the geometry variant v declares (the variant
 * itself, or the base of a mutant): "vg" (P/F/I) and "gnmo" (pass, fail, inconclusive);
 * "geo" (the text) on the variant's own run; "gerr" when its geometry was not applied. */
static void record_geo(sbuf *b, input_t *in, int v, nmo_tensor *out, int own)
{
    int g = in->geo ? in->geo[v] : 0;
    if (g == 0) return;
    if (g < 0) {
        sb_add(b, ",\"gerr\":");
        sb_json_str(b, in->gerr[v]);
        return;
    }
    const nmo_report *rp = &in->gerep[g];
    int64_t n3[3] = {0, 0, 0};
    for (int k = 0; k < in->c.n_out; k++) {
        int64_t n = nmo_tensor_numel(&out[k]);
        nmo_tensor_load_f64(in->dec[k], &out[k], 0, n, 1);
        for (int64_t i = 0; i < n; i++) {
            nmo_elem_info info;
            nmo_verdict vd = nmo_judge(&info, &rp->enc[k][i], in->dec[k][i], &in->geplan[g], rp->max_ulps, NULL);
            n3[vd == NMO_PASS ? 0 : vd == NMO_FAIL ? 1 : 2]++;
        }
    }
    if (own) {
        sb_add(b, ",\"geo\":");
        sb_json_str(b, in->getext[g]);
    }
    sb_add(b, ",\"vg\":\"%c\",\"gnmo\":[%lld,%lld,%lld]", n3[1] ? 'F' : n3[2] ? 'I' : 'P', (long long)n3[0],
           (long long)n3[1], (long long)n3[2]);
}

/* sparse histograms of |a-e| and |a-e|/|e| for calibration: per output
 * {"abs": [[bin, count], ...], "rel": [...]} */
static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static void record_hist(sbuf *b, input_t *in, nmo_tensor *out)
{
    sb_add(b, ",\"h\":[");
    for (int k = 0; k < in->c.n_out; k++) {
        int64_t n = nmo_tensor_numel(&out[k]);
        nmo_tensor_load_f64(in->dec[k], &out[k], 0, n, 1);
        int *bins = malloc((size_t)(n > 0 ? n : 1) * sizeof *bins);
        sb_add(b, "%s{", k ? "," : "");
        for (int kind = 0; kind < 2; kind++) {
            int64_t nb = 0;
            for (int64_t i = 0; bins && i < n; i++) {
                double a = in->dec[k][i], e = in->ref[k][i], d;
                if (a == e || (isnan(a) && isnan(e))) d = 0;
                else if (!isfinite(a) || !isfinite(e)) d = INFINITY;
                else d = fabs(a - e);
                if (kind == 1) {
                    if (e == 0 || !isfinite(e)) continue;
                    d = d / fabs(e);
                }
                bins[nb++] = nmo_ck_hbin(d);
            }
            if (nb > 1) qsort(bins, (size_t)nb, sizeof *bins, cmp_int);
            sb_add(b, kind == 0 ? "\"abs\":[" : ",\"rel\":[");
            for (int64_t i = 0; i < nb;) {
                int64_t e2 = i;
                while (e2 < nb && bins[e2] == bins[i]) e2++;
                sb_add(b, "%s[%d,%lld]", i ? "," : "", bins[i], (long long)(e2 - i));
                i = e2;
            }
            sb_add(b, "]");
        }
        sb_add(b, "}");
        free(bins);
    }
    sb_add(b, "]");
}

/* ---- the sandbox ---------------------------------------------------------------------- */

static void __attribute__((noinline)) stack_fill(unsigned char v)
{
    volatile unsigned char buf[1 << 16];
    memset((void *)buf, v, sizeof buf);
    __asm__ __volatile__("" : : "r"(buf) : "memory");
}

typedef struct {
    int status; /* 0 ok, 3 candidate error */
    char msg[256];
} shm_head;

static size_t out_bytes(const nmo_case *c, int k) { return (size_t)nmo_tensor_numel(&c->out[k]) * nmo_fmt_bytes(c->plan.out); }

static int ensure_shm(worker_t *w, size_t need)
{
    if (w->shm_cap >= need) return 0;
    if (w->shm) munmap(w->shm, w->shm_cap);
    size_t cap = need < (1u << 20) ? (1u << 20) : need * 2;
    void *p = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        w->shm = NULL;
        w->shm_cap = 0;
        return -1;
    }
    w->shm = p;
    w->shm_cap = cap;
    return 0;
}

static const char *sig_name(int s)
{
    switch (s) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGABRT: return "SIGABRT";
    case SIGILL: return "SIGILL";
    case SIGKILL: return "SIGKILL";
    case SIGTRAP: return "SIGTRAP";
    default: return "signal";
    }
}

/* Run mutant m on the input in a child; outputs land in out (tensors with storage).
 * Returns the status string ("ok", "error", "crash", "timeout") and a detail. */
static const char *exec_mutant(worker_t *w, nmo_camp_mutant *m, input_t *in, nmo_tensor *out, unsigned char fillv,
                               char *detail, size_t dn)
{
    const nmo_camp_cfg *cfg = w->x->cfg;
    const nmo_case *c = &in->c;
    detail[0] = '\0';
    size_t total = sizeof(shm_head);
    for (int k = 0; k < c->n_out; k++) total += out_bytes(c, k);
    if (ensure_shm(w, total)) {
        snprintf(detail, dn, "no shared memory");
        return "error";
    }
    shm_head *hd = (shm_head *)w->shm;
    memset(hd, 0, sizeof *hd);
    hd->status = -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(detail, dn, "fork: %s", strerror(errno));
        return "error";
    }
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int dn0 = open("/dev/null", O_WRONLY);
        if (dn0 >= 0) dup2(dn0, 2), close(dn0); /* glibc's "stack smashing detected" etc. */
        signal(SIGALRM, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        /* CPU time, not wall time: a busy machine does not turn slow mutants into hangs */
        signal(SIGPROF, SIG_DFL);
        struct itimerval it = {{0, 0}, {(time_t)cfg->timeout, (suseconds_t)((cfg->timeout - floor(cfg->timeout)) * 1e6)}};
        if (it.it_value.tv_sec == 0 && it.it_value.tv_usec == 0) it.it_value.tv_usec = 1000;
        setitimer(ITIMER_PROF, &it, NULL);
        /* the shared object is loaded here, not in the worker: a lean worker forks fast */
        if (nmo_camp_mutant_load(m, cfg) != 0) {
            const char *de = dlerror();
            snprintf(((shm_head *)w->shm)->msg, sizeof hd->msg, "cannot load %.200s: %.40s", m->so_path,
                     de ? de : "candidate or runtime symbol missing");
            _exit(5);
        }
        stack_fill(fillv);
        int guarded = m->kind != NMO_MUT_HAND;
        if (guarded) m->rt_fill(0xff);
        nmo_tensor ins[NMO_MAX_TENSORS], outs[NMO_MAX_TENSORS];
        for (int k = 0; k < c->n_in; k++) {
            ins[k] = c->in[k];
            ins[k].own = 0;
            size_t bytes = (size_t)nmo_tensor_span(&c->in[k]) * nmo_fmt_bytes(c->in[k].dtype);
            void *p = guarded ? m->rt_alloc(bytes) : malloc(bytes);
            if (!p) _exit(4);
            memcpy(p, c->in[k].data, bytes);
            ins[k].data = p;
        }
        for (int k = 0; k < c->n_out; k++) {
            outs[k] = c->out[k];
            outs[k].own = 0;
            size_t bytes = out_bytes(c, k);
            void *p = guarded ? m->rt_alloc(bytes) : malloc(bytes);
            if (!p) _exit(4);
            memset(p, 0xff, bytes); /* poison: NaN in every float format */
            outs[k].data = p;
        }
        nmo_cand_args a = {ins, c->n_in, outs, c->n_out, c->param, c->op->n_param, &c->plan};
        nmo_err e = {{0}};
        nmo_status st = m->run(&a, &e);
        shm_head *h = (shm_head *)w->shm;
        if (st != NMO_OK) {
            snprintf(h->msg, sizeof h->msg, "%.250s", e.msg);
            h->status = 3;
            _exit(3);
        }
        unsigned char *dst = w->shm + sizeof(shm_head);
        for (int k = 0; k < c->n_out; k++) {
            memcpy(dst, outs[k].data, out_bytes(c, k));
            dst += out_bytes(c, k);
        }
        h->status = 0;
        _exit(0);
    }
    /* wait: SIGCHLD is blocked in the worker; sigtimedwait until the backstop */
    double deadline = now_s() + 10 * cfg->timeout + 5; /* wall-clock backstop (sleeping or blocked children) */
    int st = 0, killed = 0;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    for (;;) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid) break;
        if (r < 0 && errno != EINTR) break;
        double left = deadline - now_s();
        if (left <= 0) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            killed = 1;
            break;
        }
        struct timespec ts = {(time_t)left, (long)((left - floor(left)) * 1e9)};
        if (ts.tv_sec > 1) ts.tv_sec = 1, ts.tv_nsec = 0;
        sigtimedwait(&set, NULL, &ts);
    }
    if (killed || (WIFSIGNALED(st) && (WTERMSIG(st) == SIGPROF || WTERMSIG(st) == SIGALRM))) {
        snprintf(detail, dn, killed ? "no result within %g s of wall time" : "no result within %g s of CPU time",
                 killed ? 10 * cfg->timeout + 5 : cfg->timeout);
        return "timeout";
    }
    if (WIFSIGNALED(st)) {
        snprintf(detail, dn, "%s", sig_name(WTERMSIG(st)));
        return "crash";
    }
    if (WIFEXITED(st) && (WEXITSTATUS(st) == 3 || WEXITSTATUS(st) == 5)) {
        snprintf(detail, dn, "%s", hd->msg);
        return "error";
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || hd->status != 0) {
        snprintf(detail, dn, "exit %d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
        return "crash";
    }
    unsigned char *src = w->shm + sizeof(shm_head);
    for (int k = 0; k < c->n_out; k++) {
        memcpy(out[k].data, src, out_bytes(c, k));
        src += out_bytes(c, k);
    }
    return "ok";
}

/* backend hip: a mutant kernel in the worker (no fork: the device context is the
 * worker's), outputs copied into out */
static const char *exec_hip_mutant(worker_t *w, nmo_camp_mutant *m, input_t *in, int g, nmo_tensor *out, char *detail,
                                   size_t dn)
{
    nmo_tensor o[NMO_MAX_TENSORS];
    memset(o, 0, sizeof o);
    const char *s = hip_exec(w, m->kern, in, g, o, detail, dn);
    if (strcmp(s, "ok") == 0)
        for (int k = 0; k < in->c.n_out; k++) memcpy(out[k].data, o[k].data, out_bytes(&in->c, k));
    for (int k = 0; k < NMO_MAX_TENSORS; k++) nmo_tensor_free(&o[k]);
    return s;
}

/* exec twice (determinism check); g: the plan group (hip) */
static const char *exec_checked(worker_t *w, nmo_camp_mutant *m, input_t *in, int g, nmo_tensor *out, nmo_tensor *tmp,
                                char *detail, size_t dn)
{
    int hip = w->x->hip;
    const char *s = hip ? exec_hip_mutant(w, m, in, g, out, detail, dn) : exec_mutant(w, m, in, out, 0x00, detail, dn);
    if (strcmp(s, "ok") != 0 || !w->x->cfg->determinism) return s;
    const char *s2 = hip ? exec_hip_mutant(w, m, in, g, tmp, detail, dn) : exec_mutant(w, m, in, tmp, 0xa5, detail, dn);
    if (strcmp(s2, "ok") != 0) {
        snprintf(detail, dn, "second run: %s", s2);
        return "nondet";
    }
    for (int k = 0; k < in->c.n_out; k++)
        if (memcmp(out[k].data, tmp[k].data, out_bytes(&in->c, k)) != 0) {
            snprintf(detail, dn, "outputs differ between two runs (uninitialized or out-of-bounds reads)");
            return "nondet";
        }
    return "ok";
}

static int64_t count_diff(const nmo_case *c, nmo_tensor *a, nmo_tensor *b)
{
    int64_t nd = 0;
    for (int k = 0; k < c->n_out; k++) {
        int64_t n = nmo_tensor_numel(&a[k]);
        size_t eb = nmo_fmt_bytes(c->plan.out);
        const unsigned char *p = a[k].data, *q = b[k].data;
        for (int64_t i = 0; i < n; i++) nd += memcmp(p + (size_t)i * eb, q + (size_t)i * eb, eb) != 0;
    }
    return nd;
}

/* The mutant's base among the input's correct variants (one that ran; else the default). */
static int base_index(const ctx_t *x, int oi, const input_t *in, const char *name)
{
    for (int v = 0; v < ncorrect(x, oi); v++)
        if (strcmp(correct_name(x, oi, v), name) == 0) return in->ok && in->ok[v] == 1 ? v : in->def;
    return in->def;
}

static void do_job(worker_t *w, const job_t *j, const char *done)
{
    ctx_t *x = w->x;
    const nmo_camp_cfg *cfg = x->cfg;
    int nr = job_nruns(x, j);
    input_t in;
    nmo_err err = {{0}};
    sbuf b = {0};
    char id[512], detail[300];
    job_t pj = *j;
    if (j->phase == NMO_PH_PROBE) { /* the probe input */
        pj.dt = 0, pj.shape = 0, pj.fam = cfg->fam_main[0], pj.seed = cfg->nmseeds ? cfg->mseeds[0] : cfg->seeds[0];
        if (x->hip) /* hip probes one mutant per job: a dtype it and a correct kernel run */
            for (int d = cfg->ndt - 1; d >= 0; d--)
                if (nmo_kernel_claims_dtype(x->ms->m[j->m0].kern, cfg->dt[d], cfg->dt[d]) &&
                    hip_claims(x, j->op, cfg->dt[d]))
                    pj.dt = d;
    }
    nmo_status st = input_setup(&in, w, &pj, &err);
    nmo_tensor mo[NMO_MAX_TENSORS], tmp[NMO_MAX_TENSORS];
    memset(mo, 0, sizeof mo);
    memset(tmp, 0, sizeof tmp);
    if (st == NMO_OK) {
        nmo_err e2;
        if (alloc_outs(mo, &in.c, &e2) != NMO_OK || alloc_outs(tmp, &in.c, &e2) != NMO_OK) st = NMO_ERR_NOMEM;
    }
    for (int r = 0; r < nr; r++) {
        if (done[r]) continue;
        run_id(id, sizeof id, x, j, r);
        int is_mut;
        nmo_camp_mutant *m = (nmo_camp_mutant *)job_mutant(x, j, r, &is_mut);
        if (j->phase == NMO_PH_PROBE) {
            b.n = 0;
            sb_add(&b, "{\"type\":\"probe\",\"id\":");
            sb_json_str(&b, id);
            sb_add(&b, ",\"mutant\":");
            sb_json_str(&b, m->id);
            if (st != NMO_OK) {
                sb_add(&b, ",\"status\":\"error\",\"detail\":");
                sb_json_str(&b, err.msg);
            } else {
                int bi = base_index(x, j->op, &in, m->base);
                const char *s = exec_checked(w, m, &in, in.grp[bi], mo, tmp, detail, sizeof detail);
                sb_add(&b, ",\"status\":\"%s\",\"detail\":", s);
                sb_json_str(&b, detail);
                if (strcmp(s, "ok") == 0) {
                    sb_add(&b, ",\"eff\":%d", count_diff(&in.c, mo, in.outs[bi]) > 0);
                }
            }
            sb_add(&b, "}\n");
            emit_line(w, b.p);
            if (w->gpu_bad) _exit(7); /* a fresh worker (device context) takes over */
            continue;
        }
        if (!is_mut) {
            record_head(&b, x, j, id, correct_name(x, j->op, r), r == in.def ? "correct" : "bp");
            if (st == NMO_OK && in.ok[r] == 2) { /* hip: the kernel does not run this case */
                sb_add(&b, ",\"status\":\"skipped\",\"detail\":");
                sb_json_str(&b, in.errmsg[r]);
            } else if (st != NMO_OK || !in.ok[r]) {
                sb_add(&b, ",\"status\":\"error\",\"detail\":");
                sb_json_str(&b, st != NMO_OK ? err.msg : in.errmsg[r]);
            } else {
                verdicts_t v;
                judge(w, &v, &in, in.grp[r], cfg, in.outs[r]);
                sb_add(&b, ",\"status\":\"ok\"");
                record_verdicts(&b, &v);
                record_geo(&b, &in, r, in.outs[r], 1);
                if (j->phase == NMO_PH_CALIB) record_hist(&b, &in, in.outs[r]);
            }
        } else {
            record_head(&b, x, j, id, m->id, m->kind == NMO_MUT_NULL ? "null" : "mutant");
            int bi = st == NMO_OK ? base_index(x, j->op, &in, m->base) : 0;
            sb_add(&b, ",\"base\":"); /* the variant it is compared with on this input */
            sb_json_str(&b, st == NMO_OK ? correct_name(x, j->op, bi) : m->base);
            if (st != NMO_OK) {
                sb_add(&b, ",\"status\":\"error\",\"detail\":");
                sb_json_str(&b, err.msg);
            } else {
                const char *s = exec_checked(w, m, &in, in.grp[bi], mo, tmp, detail, sizeof detail);
                sb_add(&b, ",\"status\":\"%s\"", s);
                if (strcmp(s, "ok") == 0) {
                    int64_t nd = count_diff(&in.c, mo, in.outs[bi]);
                    verdicts_t v;
                    judge(w, &v, &in, in.grp[bi], cfg, mo);
                    sb_add(&b, ",\"eff\":%d,\"ndiff\":%lld", nd > 0, (long long)nd);
                    record_verdicts(&b, &v);
                    record_geo(&b, &in, bi, mo, 0);
                } else {
                    sb_add(&b, ",\"detail\":");
                    sb_json_str(&b, detail);
                }
            }
        }
        sb_add(&b, "}\n");
        emit_line(w, b.p);
        if (w->gpu_bad) _exit(7); /* a fresh worker (device context) takes over */
    }
    for (int k = 0; k < NMO_MAX_TENSORS; k++) nmo_tensor_free(&mo[k]), nmo_tensor_free(&tmp[k]);
    input_free(&in);
    free(b.p);
}

static void worker_main(worker_t *w)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1) _exit(0);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigprocmask(SIG_BLOCK, &set, NULL);
    for (;;) {
        int32_t hdr[2];
        if (read_all_fd(w->in_fd, hdr, sizeof hdr) != 0) _exit(0);
        char *done = malloc((size_t)hdr[1] + 1);
        if (!done || read_all_fd(w->in_fd, done, (size_t)hdr[1]) != 0) _exit(0);
        do_job(w, &w->x->jobs[hdr[0]], done);
        free(done);
        emit_line(w, "D\n");
    }
}

/* ---------------------------------------------------------------- parent */

typedef struct {
    pid_t pid;
    int to_w, from_w;
    int job;        /* -1 idle */
    double last;
    char *buf;
    size_t n, cap;
} wslot;

static void progress(ctx_t *x, const char *phase, int force)
{
    if (!x->bar) return;
    double t = now_s();
    if (!force && t - x->last_bar < 0.2) return;
    x->last_bar = t;
    double frac = x->total_runs ? (double)x->done_runs / (double)x->total_runs : 1;
    int width = 30, fill = (int)(frac * width + 0.5);
    char bar[64];
    for (int i = 0; i < width; i++) bar[i] = i < fill ? '#' : '.';
    bar[width] = '\0';
    double el = t - x->t0, rate = x->ran_now > 0 ? (double)x->ran_now / el : 0;
    double eta = rate > 0 ? (double)(x->total_runs - x->done_runs) / rate : 0;
    fprintf(stderr, "\r[%s] %ld/%ld runs %5.1f%%  %-5s %4.0f s, ETA %4.0f s ", bar, x->done_runs, x->total_runs,
            100 * frac, phase, el, eta);
    if (force) fprintf(stderr, "\n");
    fflush(stderr);
}

static int spawn_worker(ctx_t *x, wslot *s, wslot *all, int nall)
{
    int a[2], b[2];
    if (pipe(a) != 0) return -1;
    if (pipe(b) != 0) {
        close(a[0]), close(a[1]);
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        close(a[1]);
        close(b[0]);
        if (x->jfd >= 0) close(x->jfd);
        for (int i = 0; i < nall; i++) /* the other workers' pipes */
            if (&all[i] != s && all[i].pid > 0) close(all[i].to_w), close(all[i].from_w);
        worker_t w = {.x = x, .in_fd = a[0], .out_fd = b[1]};
        worker_main(&w);
        _exit(0);
    }
    close(a[0]);
    close(b[1]);
    memset(s, 0, sizeof *s);
    s->pid = pid;
    s->to_w = a[1];
    s->from_w = b[0];
    s->job = -1;
    s->last = now_s();
    return 0;
}

/* Extract "id":"..." from a record line (our own format: the id is the second key). */
static int line_id(const char *line, char *id, size_t n)
{
    const char *p = strstr(line, "\"id\":\"");
    if (!p) return -1;
    p += 6;
    size_t k = 0;
    while (*p && *p != '"' && k + 1 < n) {
        if (*p == '\\' && p[1]) p++;
        id[k++] = *p++;
    }
    id[k] = '\0';
    return 0;
}

static int journal_line(ctx_t *x, const char *line, size_t len)
{
    if (write_all(x->jfd, line, len) != 0) return -1;
    return 0;
}

static void handle_probe_line(ctx_t *x, const char *line)
{
    char mid[64];
    const char *p = strstr(line, "\"mutant\":\"");
    const char *s = strstr(line, "\"status\":\"");
    if (!p || !s) return;
    p += 10, s += 10;
    size_t k = 0;
    while (*p && *p != '"' && k + 1 < sizeof mid) mid[k++] = *p++;
    mid[k] = '\0';
    for (int i = 0; i < x->ms->n; i++)
        if (strcmp(x->ms->m[i].id, mid) == 0) {
            x->ms->m[i].probed = 1;
            size_t q = 0;
            while (s[q] && s[q] != '"' && q + 1 < sizeof x->ms->m[i].probe_status) {
                x->ms->m[i].probe_status[q] = s[q];
                q++;
            }
            x->ms->m[i].probe_status[q] = '\0';
        }
}

/* Error lines for the remaining runs of a job whose worker keeps dying. */
static void give_up_job(ctx_t *x, const job_t *j)
{
    int nr = job_nruns(x, j);
    char id[512];
    for (int r = 0; r < nr; r++) {
        run_id(id, sizeof id, x, j, r);
        uint64_t h = nmo_hkey(id);
        if (nmo_hset_has(&x->done, h)) continue;
        char line[800];
        int n = snprintf(line, sizeof line, "{\"type\":\"%s\",\"id\":\"%s\",\"phase\":\"%s\",\"status\":\"error\",\"detail\":\"worker died 3 times on this job\"}\n",
                         j->phase == NMO_PH_PROBE ? "probe" : "run", id, phase_name(j->phase));
        journal_line(x, line, (size_t)n);
        nmo_hset_add(&x->done, h);
        x->done_runs++;
    }
}

/* The jobs of a phase with a run not yet journaled (malloc'd; *nq of them). */
static int *phase_queue(ctx_t *x, int phase, int *nq)
{
    int *queue = malloc((size_t)(x->njobs + 1) * sizeof *queue);
    char id[512];
    *nq = 0;
    if (!queue) return NULL;
    for (int i = 0; i < x->njobs; i++) {
        if (x->jobs[i].phase != phase) continue;
        int nr = job_nruns(x, &x->jobs[i]), todo = 0;
        for (int r = 0; r < nr && !todo; r++) {
            run_id(id, sizeof id, x, &x->jobs[i], r);
            todo = !nmo_hset_has(&x->done, nmo_hkey(id));
        }
        if (todo) queue[(*nq)++] = i;
    }
    return queue;
}

/* Send job ji to idle worker s: its index, run count and which runs are done. Returns 0
 * (sent), 1 (the worker is dead: the caller puts the job back) or -1 (out of memory). */
static int hand_out(ctx_t *x, wslot *s, int ji)
{
    const job_t *j = &x->jobs[ji];
    int nr = job_nruns(x, j);
    char id[512], *msg = malloc(8 + (size_t)nr);
    if (!msg) return -1;
    int32_t hdr[2] = {ji, nr};
    memcpy(msg, hdr, 8);
    for (int r = 0; r < nr; r++) {
        run_id(id, sizeof id, x, j, r);
        msg[8 + r] = (char)nmo_hset_has(&x->done, nmo_hkey(id));
    }
    int dead = write_all(s->to_w, msg, 8 + (size_t)nr) != 0;
    free(msg);
    if (dead) return 1;
    s->job = ji;
    s->last = now_s();
    return 0;
}

/* One complete line from worker s: "D" (job done) or a run line, journaled once. */
static int worker_line(ctx_t *x, wslot *s, char *line, size_t len, int *busy, int *wrote)
{
    if (len == 2 && line[0] == 'D') {
        if (s->job >= 0) (*busy)--;
        s->job = -1;
        return 0;
    }
    if (len <= 1) return 0;
    char saved = line[len - 1], rid[512];
    line[len - 1] = '\0';
    int rc = 0;
    if (line_id(line, rid, sizeof rid) == 0) {
        uint64_t h = nmo_hkey(rid);
        if (!nmo_hset_has(&x->done, h)) {
            if (strncmp(line, "{\"type\":\"probe\"", 15) == 0) handle_probe_line(x, line);
            int is_note = strncmp(line, "{\"type\":\"note\"", 14) == 0;
            line[len - 1] = saved;
            if (journal_line(x, line, len) != 0) rc = -1;
            else {
                nmo_hset_add(&x->done, h);
                if (!is_note) x->done_runs++, x->ran_now++;
                *wrote = 1;
            }
        }
    }
    line[len - 1] = saved;
    return rc;
}

/* Read what worker s sent; on its death requeue (or give up) its job and respawn one.
 * Returns -1 on a fatal error. */
static int worker_read(ctx_t *x, wslot *s, wslot *ws, int nw, int *queue, int *qh, int nq, int *busy, int *wrote)
{
    if (s->cap - s->n < 65536) {
        size_t nc = s->cap ? s->cap * 2 : 131072;
        char *nb = realloc(s->buf, nc);
        if (!nb) return -1;
        s->buf = nb;
        s->cap = nc;
    }
    ssize_t r = read(s->from_w, s->buf + s->n, s->cap - s->n - 1);
    if (r > 0) {
        s->n += (size_t)r;
        s->last = now_s();
        size_t start = 0; /* complete lines */
        for (size_t k = 0; k < s->n; k++) {
            if (s->buf[k] != '\n') continue;
            if (worker_line(x, s, s->buf + start, k + 1 - start, busy, wrote) != 0) return -1;
            start = k + 1;
        }
        memmove(s->buf, s->buf + start, s->n - start);
        s->n -= start;
        return 0;
    }
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) return 0;
    /* the worker died */
    close(s->from_w);
    close(s->to_w);
    int st;
    waitpid(s->pid, &st, 0);
    s->pid = 0;
    s->n = 0;
    /* exit 7: a hip worker restarting after a failed launch, its line journaled */
    int restart = WIFEXITED(st) && WEXITSTATUS(st) == 7;
    if (s->job >= 0) {
        (*busy)--;
        job_t *j = &x->jobs[s->job];
        if (!restart && ++j->retries >= 3) give_up_job(x, j);
        else queue[--(*qh)] = s->job; /* run it again, done runs are skipped */
        s->job = -1;
    }
    if (*qh < nq && spawn_worker(x, s, ws, nw) != 0) return -1;
    return 0;
}

static int run_phase(ctx_t *x, int phase)
{
    const nmo_camp_cfg *cfg = x->cfg;
    int nq = 0, qh = 0;
    int *queue = phase_queue(x, phase, &nq);
    if (!queue) return -1;
    if (nq == 0) {
        free(queue);
        return 0;
    }
    int nw = cfg->workers < nq ? cfg->workers : nq;
    wslot *ws = calloc((size_t)nw, sizeof *ws);
    if (!ws) return -1;
    for (int i = 0; i < nw; i++)
        if (spawn_worker(x, &ws[i], ws, nw) != 0) {
            free(ws);
            free(queue);
            return -1;
        }
    int busy = 0, rc = 0;
    double watchdog = 4 * cfg->timeout + 60;
    while (qh < nq || busy) {
        for (int i = 0; i < nw && qh < nq; i++) { /* hand out jobs */
            if (ws[i].job >= 0 || ws[i].pid <= 0) continue;
            int h = hand_out(x, &ws[i], queue[qh++]);
            if (h < 0) return -1;
            if (h) qh--; /* worker dead; handled below */
            else busy++;
        }
        struct pollfd pf[256];
        int np = 0;
        for (int i = 0; i < nw; i++) pf[np].fd = ws[i].pid > 0 ? ws[i].from_w : -1, pf[np].events = POLLIN, pf[np].revents = 0, np++;
        int pr = poll(pf, (nfds_t)np, 200);
        if (pr < 0 && errno != EINTR) {
            rc = -1;
            break;
        }
        int wrote = 0;
        for (int i = 0; i < nw && !rc; i++)
            if (ws[i].pid > 0 && (pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
                rc = worker_read(x, &ws[i], ws, nw, queue, &qh, nq, &busy, &wrote);
        if (rc) break;
        if (wrote && cfg->fsync_line) fsync(x->jfd);
        /* watchdog: a worker silent for too long is killed (its job is retried) */
        double t = now_s();
        for (int i = 0; i < nw; i++)
            if (ws[i].pid > 0 && ws[i].job >= 0 && t - ws[i].last > watchdog) kill(ws[i].pid, SIGKILL);
        progress(x, phase_name(phase), 0);
    }
    for (int i = 0; i < nw; i++) {
        if (ws[i].pid <= 0) continue;
        close(ws[i].to_w);
        close(ws[i].from_w);
        int st;
        waitpid(ws[i].pid, &st, 0);
        free(ws[i].buf);
    }
    fsync(x->jfd);
    free(ws);
    free(queue);
    return rc;
}

/* ---------------------------------------------------------------- journal */

/* Read the journal: done run ids, probe outcomes; drop a torn last line. */
static nmo_status journal_open(ctx_t *x, const nmo_camp_opts *o, nmo_err *err)
{
    const nmo_camp_cfg *cfg = x->cfg;
    char dir[1100];
    snprintf(dir, sizeof dir, "%s", cfg->journal);
    char *sl = strrchr(dir, '/');
    if (sl) {
        *sl = '\0';
        if (dir[0] && nmo_camp_mkdirs(dir) != 0) return nmo_err_set(err, NMO_ERR_IO, "%s: cannot create: %s", dir, strerror(errno));
    }
    /* O_APPEND: every record lands at the end whatever else holds the file; the lock:
     * one campaign per journal (a second one is refused, never interleaved) */
    int fd = open(cfg->journal, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
    if (fd < 0) return nmo_err_set(err, NMO_ERR_IO, "%s: cannot open: %s", cfg->journal, strerror(errno));
    if (nmo_camp_journal_lock(fd) != 0) {
        close(fd);
        return nmo_err_set(err, NMO_ERR_USAGE, "%s: the journal is in use by another campaign (locked)", cfg->journal);
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return nmo_err_set(err, NMO_ERR_IO, "%s: not a regular file", cfg->journal);
    }
    size_t n = (size_t)st.st_size;
    char *buf = malloc(n + 1);
    if (!buf) return nmo_err_set(err, NMO_ERR_NOMEM, "out of memory");
    if (n && read_all_fd(fd, buf, n) != 0) {
        free(buf);
        return nmo_err_set(err, NMO_ERR_IO, "%s: read error", cfg->journal);
    }
    buf[n] = '\0';
    size_t good = n;
    while (good > 0 && buf[good - 1] != '\n') good--;
    if (good < n) {
        if (ftruncate(fd, (off_t)good) != 0) {
            free(buf);
            return nmo_err_set(err, NMO_ERR_IO, "%s: cannot drop the torn last line", cfg->journal);
        }
        buf[good] = '\0';
    }
    int have_header = 0;
    char id[512];
    {
        /* every complete line must be a whole record and no run journaled twice: a
         * damaged journal is named, never resumed over */
        char bad[300];
        long ln = nmo_camp_journal_verify(buf, bad, sizeof bad);
        if (ln > 0) {
            free(buf);
            close(fd);
            return nmo_err_set(err, NMO_ERR_PARSE, "%s: line %ld is damaged: %s", cfg->journal, ln, bad);
        }
    }
    for (char *line = buf; *line;) {
        char *nl = strchr(line, '\n');
        if (!nl) break;
        *nl = '\0';
        if (strncmp(line, "{\"type\":\"header\"", 16) == 0) {
            have_header = 1;
            char want[64];
            snprintf(want, sizeof want, "\"config_hash\":\"%s\"", cfg->config_hash);
            if (!strstr(line, want) && !o->force) {
                free(buf);
                close(fd);
                return nmo_err_set(err, NMO_ERR_USAGE,
                                   "%s belongs to a campaign with another configuration (config_hash differs); use another journal or --force",
                                   cfg->journal);
            }
        } else if (line_id(line, id, sizeof id) == 0) {
            if (strncmp(line, "{\"type\":\"note\"", 14) == 0) {
                const char *t = strstr(line, "\"text\":\"");
                if (t) {
                    char k[600], txt[590];
                    size_t q = 0;
                    for (t += 8; *t && *t != '"' && q + 1 < sizeof txt; t++) {
                        if (*t == '\\' && t[1]) t++;
                        txt[q++] = *t;
                    }
                    txt[q] = '\0';
                    snprintf(k, sizeof k, "n|%s", txt);
                    nmo_hset_add(&x->done, nmo_hkey(k));
                }
            } else if (strncmp(line, "{\"type\":\"mutant\"", 16) == 0) {
                char k[600];
                snprintf(k, sizeof k, "m|%s", id);
                nmo_hset_add(&x->done, nmo_hkey(k));
            } else {
                nmo_hset_add(&x->done, nmo_hkey(id));
                if (strncmp(line, "{\"type\":\"probe\"", 15) == 0) handle_probe_line(x, line);
            }
        }
        line = nl + 1;
    }
    free(buf);
    lseek(fd, 0, SEEK_END);
    x->jfd = fd;
    if (!have_header) {
        sbuf b = {0};
        sb_add(&b, "{\"type\":\"header\",\"format\":\"numoracle-campaign-journal/1\",\"config_hash\":\"%s\",\"numoracle\":\"%s\",\"config\":%s}\n",
               cfg->config_hash, nmo_version(), cfg->config_text);
        if (!b.p || journal_line(x, b.p, b.n) != 0) {
            free(b.p);
            return nmo_err_set(err, NMO_ERR_IO, "%s: cannot write", cfg->journal);
        }
        free(b.p);
    }
    return NMO_OK;
}

static nmo_status journal_mutants(ctx_t *x, nmo_err *err)
{
    sbuf b = {0};
    for (int i = 0; i < x->ms->n; i++) {
        const nmo_camp_mutant *m = &x->ms->m[i];
        char k[600];
        snprintf(k, sizeof k, "m|%s", m->id);
        if (nmo_hset_has(&x->done, nmo_hkey(k))) continue;
        static const char *const kinds[] = {"hand", "generated", "null"};
        b.n = 0;
        sb_add(&b, "{\"type\":\"mutant\",\"id\":");
        sb_json_str(&b, m->id);
        sb_add(&b, ",\"op\":\"%s\",\"kind\":\"%s\",\"base\":", x->cfg->ops[m->op]->name, kinds[m->kind]);
        sb_json_str(&b, m->base);
        sb_add(&b, ",\"mutop\":\"%s\",\"file\":", m->mop);
        sb_json_str(&b, m->file);
        sb_add(&b, ",\"func\":");
        sb_json_str(&b, m->func);
        sb_add(&b, ",\"line\":%d,\"col\":%d,\"desc\":", m->line, m->col);
        sb_json_str(&b, m->desc);
        sb_add(&b, ",\"status\":\"%s\"", m->stillborn ? "stillborn" : "compiled");
        if (m->stillborn) {
            sb_add(&b, ",\"cc_error\":");
            sb_json_str(&b, m->cc_error);
        }
        if (m->diff) {
            sb_add(&b, ",\"diff\":");
            sb_json_str(&b, m->diff);
        }
        sb_add(&b, "}\n");
        if (!b.p || journal_line(x, b.p, b.n) != 0) {
            free(b.p);
            return nmo_err_set(err, NMO_ERR_IO, "%s: cannot write", x->cfg->journal);
        }
        nmo_hset_add(&x->done, nmo_hkey(k));
    }
    /* what could not be done while preparing (no gcov, missing sources): into the report */
    char notes[2048];
    snprintf(notes, sizeof notes, "%s", x->ms->notes);
    char *save = NULL;
    for (char *t = strtok_r(notes, "\n", &save); t; t = strtok_r(NULL, "\n", &save)) {
        while (*t == ' ') t++;
        if (!*t) continue;
        char k[600];
        snprintf(k, sizeof k, "n|%s", t);
        uint64_t h = nmo_hkey(k);
        if (nmo_hset_has(&x->done, h)) continue;
        b.n = 0;
        sb_add(&b, "{\"type\":\"note\",\"id\":\"n|%016llx\",\"text\":", (unsigned long long)h);
        sb_json_str(&b, t);
        sb_add(&b, "}\n");
        if (!b.p || journal_line(x, b.p, b.n) != 0) {
            free(b.p);
            return nmo_err_set(err, NMO_ERR_IO, "%s: cannot write", x->cfg->journal);
        }
        nmo_hset_add(&x->done, h);
        if (x->out) fprintf(x->out, "campaign: note: %s\n", t);
    }
    free(b.p);
    if (x->cfg->fsync_line) fsync(x->jfd);
    return NMO_OK;
}

/* After the probe phase: the mutants evaluated per operator. */
static void set_alive(ctx_t *x)
{
    for (int oi = 0; oi < x->cfg->nops; oi++) {
        free(x->alive[oi]);
        x->alive[oi] = malloc((size_t)(x->ms->n + 1) * sizeof(int));
        x->nalive[oi] = 0;
        for (int i = 0; i < x->ms->n; i++) {
            const nmo_camp_mutant *m = &x->ms->m[i];
            if (m->op != oi || m->stillborn) continue;
            if (m->probed && strcmp(m->probe_status, "ok") != 0 && strcmp(m->probe_status, "nondet") != 0) continue;
            x->alive[oi][x->nalive[oi]++] = i;
        }
    }
}

/* Calibration tolerances from the journal's calib records. */
static nmo_status compute_tolerances(ctx_t *x, nmo_err *err)
{
    const nmo_camp_cfg *cfg = x->cfg;
    size_t nt = (size_t)NMO_CAMP_MAX_OPS * NMO_CAMP_MAX_DT * NMO_CAMP_MAX_SHAPES * NMO_MAX_TENSORS * 2;
    x->tol = malloc(nt * sizeof(double));
    if (!x->tol) return nmo_err_set(err, NMO_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < nt; i++) x->tol[i] = NAN;
    nmo_eng_tolset ts;
    const char *js[1] = {cfg->journal};
    nmo_status st = nmo_eng_calibrate(&ts, cfg, js, 1, err);
    if (st != NMO_OK) return st;
    for (int i = 0; i < ts.n; i++) {
        const nmo_eng_tol *t = &ts.t[i];
        double *d = &x->tol[TOL_IDX(x, t->op, t->dt, t->shape, t->k)];
        d[0] = t->atol;
        d[1] = t->rtol;
    }
    free(ts.t);
    x->tol_ready = 1;
    return NMO_OK;
}

/* Switch ASLR off by re-executing ourselves once (reproducible garbage reads). */
void nmo_camp_no_aslr(int argc, char **argv)
{
#ifdef __linux__
    (void)argc;
    if (getenv("NMO_CAMPAIGN_ASLR")) return;
    int cur = personality(0xffffffff);
    if (cur < 0 || (cur & ADDR_NO_RANDOMIZE)) return;
    if (personality((unsigned long)cur | ADDR_NO_RANDOMIZE) < 0) return;
    setenv("NMO_CAMPAIGN_ASLR", "off", 1);
    execv("/proc/self/exe", argv);
    personality((unsigned long)cur); /* exec failed: carry on with ASLR */
#else
    (void)argc, (void)argv;
#endif
}

nmo_status nmo_camp_run(nmo_camp_cfg *cfg, const nmo_camp_opts *o, FILE *out, nmo_err *err)
{
    int hip = strcmp(cfg->backend, "hip") == 0;
    if (hip && cfg->nops == 0)
        return nmo_err_set(err, NMO_ERR_UNSUPPORTED,
                           "backend hip: no HIP kernels for the configured operators in this build (%s: configure with "
                           "-Dgpu=cuda, -Dgpu=hip or -Dgpu=sim; the CPU emulations run with backend cpu)",
                           nmo_gpu_enabled() ? "none registered" : "built with -Dgpu=none");
    if (o->oracle_gpu && !o->report_only && (!hip || !nmo_gpu_enabled()))
        return nmo_err_set(err, NMO_ERR_USAGE, "--oracle-device gpu: %s",
                           !hip ? "only with backend hip (the workers' device context is the kernels')"
                                : "this build has no GPU tier (build with -Dgpu=cuda, hip or sim)");
    if (o->report_only) {
        const char *js[64];
        int nj = o->njournals;
        for (int i = 0; i < nj; i++) js[i] = o->journals[i];
        if (nj == 0) js[nj++] = cfg->journal;
        return nmo_camp_report(cfg, js, nj, cfg->out_dir, out, err);
    }
    signal(SIGPIPE, SIG_IGN);
    ctx_t x;
    memset(&x, 0, sizeof x);
    x.cfg = cfg;
    x.jfd = -1;
    x.out = out;
    x.bar = o->progress < 0 ? isatty(2) : o->progress;
    x.oracle_gpu = o->oracle_gpu;
    if (o->quiet) x.bar = 0;
    if (hip) {
        /* the parent never touches the device: workers are forked and each opens its own
         * context on its first launch */
        x.hip = 1;
        nmo_kernel_set_hip(&x.ks);
        for (int oi = 0; oi < cfg->nops; oi++) {
            x.nhk[oi] = nmo_camp_hip_kernels(x.hk[oi], NMO_HIP_MAXK, cfg->ops[oi]->name, 1);
            if (x.nhk[oi] > NMO_HIP_MAXK) x.nhk[oi] = NMO_HIP_MAXK;
        }
    }
    nmo_camp_mutants ms;
    FILE *log = o->quiet ? NULL : out;
    if (nmo_camp_mkdirs(cfg->work_dir) != 0)
        return nmo_err_set(err, NMO_ERR_IO, "%s: cannot create: %s", cfg->work_dir, strerror(errno));
    nmo_status st = nmo_camp_mutants_prepare(&ms, cfg, log, err);
    if (st != NMO_OK) return st;
    if (hip && cfg->hip_dropped[0]) {
        size_t l = strlen(ms.notes);
        snprintf(ms.notes + l, sizeof ms.notes - l, "backend hip: operators without HIP kernels in this build, not run: %s\n",
                 cfg->hip_dropped);
    }
    x.ms = &ms;
    st = journal_open(&x, o, err);
    if (st == NMO_OK) st = journal_mutants(&x, err);
    if (st == NMO_OK && plan_jobs(&x, o) != 0) st = nmo_err_set(err, NMO_ERR_NOMEM, "out of memory");
    if (st == NMO_OK) {
        x.t0 = now_s();
        /* totals: probe runs + calib runs known now; eval runs after the probe */
        char id[512];
        long total = 0, done = 0;
        for (int i = 0; i < x.njobs; i++) {
            if (x.jobs[i].phase == NMO_PH_EVAL) continue;
            int nr = job_nruns(&x, &x.jobs[i]);
            for (int r = 0; r < nr; r++) {
                run_id(id, sizeof id, &x, &x.jobs[i], r);
                total++;
                done += nmo_hset_has(&x.done, nmo_hkey(id));
            }
        }
        x.total_runs = total;
        x.done_runs = done;
        x.started_done = done;
        if (run_phase(&x, NMO_PH_PROBE) != 0) st = nmo_err_set(err, NMO_ERR_IO, "probe phase failed (journal write?)");
        if (st == NMO_OK) {
            set_alive(&x);
            for (int i = 0; i < x.njobs; i++) {
                if (x.jobs[i].phase != NMO_PH_EVAL) continue;
                int nr = job_nruns(&x, &x.jobs[i]);
                for (int r = 0; r < nr; r++) {
                    run_id(id, sizeof id, &x, &x.jobs[i], r);
                    x.total_runs++;
                    if (nmo_hset_has(&x.done, nmo_hkey(id))) x.done_runs++, x.started_done++;
                }
            }
        }
        if (st == NMO_OK && run_phase(&x, NMO_PH_CALIB) != 0) st = nmo_err_set(err, NMO_ERR_IO, "calibration phase failed");
        if (st == NMO_OK && cfg->check_on[NMO_CK_P999]) st = compute_tolerances(&x, err);
        if (st == NMO_OK && run_phase(&x, NMO_PH_EVAL) != 0) st = nmo_err_set(err, NMO_ERR_IO, "evaluation phase failed");
        progress(&x, "done", 1);
        if (st == NMO_OK && out && !o->quiet)
            fprintf(out, "campaign: %ld runs planned in this shard, %ld already journaled, %ld run now; journal %s\n",
                    x.total_runs, x.started_done, x.ran_now, cfg->journal);
    }
    if (x.jfd >= 0) {
        fsync(x.jfd);
        close(x.jfd);
    }
    for (int i = 0; i < NMO_CAMP_MAX_OPS; i++) free(x.alive[i]);
    free(x.jobs);
    free(x.done.h);
    free(x.tol);
    nmo_camp_mutants_free(&ms);
    if (st != NMO_OK || o->no_report) return st;
    const char *js[1] = {cfg->journal};
    return nmo_camp_report(cfg, js, 1, cfg->out_dir, out, err);
}
