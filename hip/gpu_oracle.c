/* numoracle GPU tier (issue 22): nmo_check with the element work on the device
 * (hip/nmo_gpu_oracle.h says what is decided where and why the verdicts are the
 * certified engine's). Plain C: the device is reached through nmo_gpu.h and the kernels'
 * C face; the host parts are the library's own fast engine and checker. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>

#include "nmo_gpu.h"
#include "nmo_gpu_oracle.h"
#include "nmo_internal.h"
#include "engine/enc_fast.h"
#include "engine/enc_cert.h"

/* refs/rms_norm.c (fast engine): a row's r from its sum of squares */
void nmo_ref_rms_norm_rstd_fast(nmo_fctx *ctx, const nmo_case *c, double s, int64_t m, double err, nmo_fenc *r);
/* refs/rms_norm.c (certified engine): elements js[0..m) of row u from the row's r */
void nmo_ref_rms_norm_elems_cert(nmo_cctx *ctx, const nmo_case *c, int64_t u, const nmo_cenc *r, const int64_t *js,
                                 int64_t m, nmo_fenc *out);
/* refs/layer_norm.c: the flagged elements of row u's out[0] recomputed as the CPU
 * checker's escalation of single elements does (op->eval_cert_unc_stat) */
void nmo_ref_layer_norm_eval_unc_cert(nmo_fctx *fc, nmo_cctx *ctx, const nmo_case *c, int64_t u, nmo_fenc **out);
/* refs/layer_norm.c (certified engine): row u's mean, rstd, sqrt(var + eps) */
void nmo_ref_layer_norm_stats_cert(nmo_cctx *ctx, const nmo_case *c, int64_t u, int mean_only, nmo_fenc *mean,
                                   nmo_fenc *rstd, nmo_fenc *s);

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e3 * (double)ts.tv_sec + 1e-6 * (double)ts.tv_nsec;
}

int nmo_gpu_check_host_every = 0;
int64_t nmo_gpu_check_elem_every = 0, nmo_gpu_check_elem_cap = 0;
int nmo_go_time_kernels = 0;
double nmo_go_ms_k1 = 0, nmo_go_ms_k2 = 0;
int nmo_gpu_check_scalar = 0;
int nmo_gpu_check_comp_all = 0;
int nmo_gpu_check_ln_plain = 0;

/* softmax and layer_norm: hip/gpu_oracle_rows_host.h, included at the end of this file */
static const char *rows_why(const nmo_case *c);
static nmo_status check_rows(nmo_report *rep, const nmo_case *c, const void *cand_dev,
                             const void *const *in_dev, const nmo_check_opts *opts,
                             nmo_gpu_check_info *info, nmo_err *err);

int nmo_gpu_check_supported(const nmo_case *c, const char **why)
{
    const char *w = NULL;
    const nmo_plan *p = &c->plan;
    const nmo_fmt_info *ai = nmo_fmt_get(p->acc);
    int rms = strcmp(c->op->name, "rms_norm") == 0, swi = strcmp(c->op->name, "swiglu") == 0;
    int rows = strcmp(c->op->name, "softmax") == 0 || strcmp(c->op->name, "layer_norm") == 0;
    if (nmo_gpu_enabled() && strcmp(c->op->name, "matmul") == 0) return nmo_gpu_mm_supported(c, why);
    if (!nmo_gpu_enabled()) w = NMO_GPU_NONE_MSG;
    else if (!rms && !swi && !rows) w = "the GPU tier covers rms_norm, swiglu, softmax, layer_norm and matmul only";
    else if (p->inter != p->compute) w = "unfused plan (inter != compute): not on the device";
    else if (rms && c->param[1] != 0) w = "offset != 0: not on the device";
    else if (p->compute != NMO_FP32 || p->ftz) w = "the device path needs compute=fp32 without ftz";
    else if (rms && (!ai || ai->prec > 25)) w = "acc wider than 25 bits: the fast engine certifies nothing";
    else if (p->round != NMO_RNE || p->round_sr) w = "the device judges RNE stores only";
    else if (p->out != NMO_BF16 && p->out != NMO_FP32) w = "out must be bf16 or fp32";
    else if (p->in != NMO_BF16 && p->in != NMO_FP32) w = "in must be bf16 or fp32";
    /* (this also keeps fn=triton's composed sigmoid, nmo_plan_sigmoid_composed, off the
     * device, whose sigmoid is the hull of the library one and the formula) */
    else if (swi && (p->fn_ulps[NMO_FN_DIV] != 0 || p->fn_ulps[NMO_FN_RCP] != 0))
        w = "swiglu on the device needs correctly rounded division (fn=cuda, ocml, cr)";
    else if (c->absent) w = "absent inputs: not on the device";
    else if (!nmo_tensor_is_packed(&c->in[0]) || !nmo_tensor_is_packed(&c->in[1]))
        w = "inputs must be packed";
    else if (nmo_tensor_numel(&c->out[0]) >= 0x3fffffff) w = "too many elements (2^30 at most)";
    else if (rows) w = rows_why(c); /* hip/gpu_oracle_rows_host.h */
    if (why) *why = w;
    return w == NULL;
}

/* A host tensor like c->out[0] (dtype out, zeroed) for some rows of the candidate. */
static nmo_status cand_alloc(nmo_tensor *t, const nmo_case *c, nmo_err *err)
{
    *t = c->out[0];
    t->dtype = c->plan.out;
    size_t tot = (size_t)nmo_tensor_numel(&c->out[0]) * nmo_fmt_bytes(c->plan.out);
    t->data = calloc(tot ? tot : 1, 1);
    t->own = 1;
    if (!t->data) return nmo_err_set(err, NMO_ERR_NOMEM, "gpu oracle: out of memory for the candidate rows");
    return NMO_OK;
}

/* Copy rows[0..nr) (of n elements) of the device candidate into t. */
static nmo_status cand_rows(nmo_tensor *t, const void *cand_dev, const int64_t *rows, int64_t nr,
                            int64_t n, nmo_err *err)
{
    size_t es = nmo_fmt_bytes(t->dtype);
    if (nr > 64 && nr * n > 4096) { /* many pieces: one copy of everything */
        size_t tot = (size_t)nmo_tensor_numel(t) * es;
        return nmo_gpu_d2h(t->data, cand_dev, tot, err);
    }
    for (int64_t i = 0; i < nr; i++) {
        size_t off = (size_t)(rows[i] * n) * es;
        NMO_RETURN_IF_ERR(nmo_gpu_d2h((char *)t->data + off, (const char *)cand_dev + off, (size_t)n * es, err));
    }
    return NMO_OK;
}

/* The host's r of a row from the device's statistics q = rstat[4 row ..] (s, m, r_lo,
 * r_hi): a plain binary64 sum of squares, or (m < 0: -(m + 1) terms) the compensated sum
 * k_rms_rows took where the plain one left r undecided, within rms_comp_err of the exact
 * sum: gpu_oracle.hip's smx_comp_err((double)n + 32, s), the same operations. */
double nmo_go_comp_err(double T, double va) { return (T * T * 0x1.02p-106 + 0x1p-52) * va; }

static double rms_comp_err(int64_t n, double va) { return nmo_go_comp_err((double)n + 32, va); }

static void rms_r_of_stat(nmo_fctx *fc, const nmo_case *c, const double *q, nmo_fenc *r)
{
    const int64_t n = c->in[1].dims[0];
    if (q[1] < 0) nmo_ref_rms_norm_rstd_fast(fc, c, q[0], (int64_t)(-q[1]) - 1, rms_comp_err(n, q[0]), r);
    else nmo_ref_rms_norm_rstd_fast(fc, c, q[0], (int64_t)q[1], -1, r);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* More single elements than the device's list holds: the CPU checker on the whole tensor
 * (rep is then its report alone). */
static nmo_status check_all_host(nmo_report *rep, const nmo_case *c, const void *cand_dev, nmo_tensor *hc,
                                 const nmo_check_opts *o, nmo_err *err)
{
    NMO_RETURN_IF_ERR(cand_alloc(hc, c, err));
    size_t tot = (size_t)nmo_tensor_numel(&c->out[0]) * nmo_fmt_bytes(c->plan.out);
    NMO_RETURN_IF_ERR(nmo_gpu_d2h(hc->data, cand_dev, tot, err));
    return nmo__check_units(rep, c, hc, o, NULL, -1, err);
}

/* The ne single elements the device listed (at eredo_dev), sorted, into *el, with room for
 * their enclosures (*een) and candidate values (*ev); the caller frees the three. */
static nmo_status elems_fetch(const void *eredo_dev, int64_t ne, int64_t **el, nmo_fenc **een, double **ev,
                              nmo_err *err)
{
    *el = malloc((size_t)ne * sizeof(int64_t)), *een = malloc((size_t)ne * sizeof(nmo_fenc));
    *ev = malloc((size_t)ne * sizeof(double));
    if (!*el || !*een || !*ev)
        return nmo_err_set(err, NMO_ERR_NOMEM, "gpu oracle: out of memory for %lld elements", (long long)ne);
    NMO_RETURN_IF_ERR(nmo_gpu_d2h(*el, eredo_dev, (size_t)ne * sizeof(int64_t), err));
    qsort(*el, (size_t)ne, sizeof(int64_t), cmp_i64);
    return NMO_OK;
}

/* The candidate values ev[i] of elements el[0..nk), through the host copy hc (allocated
 * here when it is not yet). */
static nmo_status elems_cand(nmo_tensor *hc, const nmo_case *c, const void *cand_dev, const int64_t *el, int64_t nk,
                             double *ev, nmo_err *err)
{
    if (!hc->data) NMO_RETURN_IF_ERR(cand_alloc(hc, c, err));
    NMO_RETURN_IF_ERR(cand_rows(hc, cand_dev, el, nk, 1, err));
    for (int64_t i = 0; i < nk; i++) ev[i] = nmo_tensor_get(hc, el[i]);
    return NMO_OK;
}

/* The single elements (enclosures een) judged into the merged report by the checker's
 * rules, counted as nmo_check counts escalated elements (ngroups units). */
static void elems_judge(nmo_report *rep, const nmo_case *c, const nmo_fenc *een, const int64_t *el, int64_t nk,
                        const double *ev, int64_t ngroups, const nmo_check_opts *o)
{
    if (nk == 0) return;
    nmo__judge_elems(rep, c, 0, een, el, nk, ev, o);
    rep->n_unc += nk, rep->n_escalated += nk, rep->units_escalated += ngroups;
    rep->verdict = rep->n_fail ? NMO_FAIL : rep->n_inconc ? NMO_INCONCLUSIVE : NMO_PASS;
}

/* Device scratch, kept between checks and grown when a case needs more (cudaMalloc and
 * cudaFree cost more than a whole check of 16M elements); one check at a time. */
enum { B_X, B_W, B_VERD, B_RLO, B_RHI, B_S, B_M, B_BAD, B_RROW, B_SKIP, B_REDO, B_ACC, B_RSTAT, B_KTAB,
       B_PS, B_PM, B_PO, B_EREDO, B_N };
static struct {
    pthread_mutex_t mu;
    void *p[B_N];
    size_t cap[B_N];
    double *ktab_host;  /* the k table last uploaded to B_KTAB (skip the upload when equal) */
    int64_t ktab_n;
    nmo_plan ktab_plan; /* the plan it was built for, and the geometry overrun it noted */
    int64_t ktab_geo;
} scratch = {PTHREAD_MUTEX_INITIALIZER, {0}, {0}, NULL, -1, {0}, 0};

static nmo_status dev_get(void **out, int k, size_t bytes, nmo_err *err)
{
    if (bytes == 0) bytes = 1;
    if (scratch.cap[k] < bytes) {
        nmo_gpu_free(scratch.p[k]);
        scratch.p[k] = NULL;
        scratch.cap[k] = 0;
        NMO_RETURN_IF_ERR(nmo_gpu_alloc(&scratch.p[k], bytes, err));
        scratch.cap[k] = bytes;
        if (k == B_KTAB) scratch.ktab_n = -1;
    }
    *out = scratch.p[k];
    return NMO_OK;
}

/* r on the device (hip/gpu_oracle.hip rstd_dev) for plans whose r steps it transcribes:
 * fp32 acc and compute without ftz (checked by nmo_gpu_check_supported), sqrt, division
 * and reciprocal correctly rounded (fn=cuda, ocml, cr: any rsqrt accuracy). Other plans
 * (fn=fast, triton) get r from the host, one fast-engine call per row. */
static int r_on_device(const nmo_plan *p)
{
    return p->acc == NMO_FP32 && p->fn_ulps[NMO_FN_SQRT] == 0 && p->fn_ulps[NMO_FN_DIV] == 0 &&
           p->fn_ulps[NMO_FN_RCP] == 0;
}

int nmo_gpu_check_verify_r = 0, nmo_gpu_check_host_r = 0;
int64_t nmo_gpu_check_r_compared = 0, nmo_gpu_check_r_differ = 0;

/* The per-case constants of rstd_dev, by the fast engine's own code (the k rule of
 * nmo_fe_dot_k, the roundings of nmo_fenc_const / nmo_fenc_div_si / nmo_fenc_dot_d_finish);
 * the k table is uploaded to *ktab_dev unless the last upload was the same. */
static nmo_status rstd_consts(nmo_go_rstd_consts *rc, nmo_fctx *fc, const nmo_case *c, int64_t n,
                              nmo_err *err)
{
    void *kd;
    NMO_RETURN_IF_ERR(dev_get(&kd, B_KTAB, (size_t)(n + 1) * sizeof(double), err));
    /* the table is a function of the plan and n: the same plan (byte for byte) and n as the
     * last upload reuse it (and its geometry note) */
    if (scratch.ktab_n == n && memcmp(&scratch.ktab_plan, &c->plan, sizeof c->plan) == 0) {
        if (scratch.ktab_geo > fc->geo_over) fc->geo_over = scratch.ktab_geo;
        goto consts;
    }
    double *kt = malloc((size_t)(n + 1) * sizeof(double));
    if (!kt) return nmo_err_set(err, NMO_ERR_NOMEM, "gpu oracle: out of memory for the k table");
    int64_t g0 = fc->geo_over;
    fc->geo_over = 0;
    for (int64_t m = 0; m <= n; m++) kt[m] = nmo_fe_dot_k(fc, n, m);
    int64_t geo = fc->geo_over;
    if (g0 > fc->geo_over) fc->geo_over = g0;
    if (scratch.ktab_n == n && memcmp(kt, scratch.ktab_host, (size_t)(n + 1) * sizeof(double)) == 0) {
        free(kt);
        memcpy(&scratch.ktab_plan, &c->plan, sizeof c->plan);
        scratch.ktab_geo = geo;
    } else {
        nmo_status s = nmo_gpu_h2d(kd, kt, (size_t)(n + 1) * sizeof(double), err);
        free(scratch.ktab_host);
        scratch.ktab_host = kt;
        scratch.ktab_n = s == NMO_OK ? n : -1;
        memcpy(&scratch.ktab_plan, &c->plan, sizeof c->plan);
        scratch.ktab_geo = geo;
        NMO_RETURN_IF_ERR(s);
    }
consts:
    rc->ktab = kd;
    rc->ua = fc->ua;
    rc->keta = (fc->ftz ? 2.0 : 1.0) * (double)n * fc->etaa; /* nmo_fenc_dot_d_finish, daz 0 */
    rc->en = (double)n * 0x1p-53;
    rc->rel = (double)n * 0x1p-53 * 1.01;
    rc->maxfin_a = fc->maxfin_a;
    rc->dn = nmo_fe_round(fc, fc->cf, (double)n, NMO_RNE);
    rc->rcpn = nmo_fe_round(fc, fc->cf, 1.0 / rc->dn, NMO_RNE);
    nmo_fenc ep;
    nmo_fenc_const(fc, &ep, c->param[0]);
    rc->epsc = ep.lo;
    rc->nrsqrt = c->plan.fn_ulps[NMO_FN_RSQRT];
    return NMO_OK;
}

nmo_status nmo_gpu_ln_probe(const nmo_case *c, const double *in, double *out, int64_t count, nmo_err *err)
{
    nmo_fctx fc;
    NMO_RETURN_IF_ERR(nmo_fctx_init(&fc, &c->plan, err));
    void *din, *dout;
    pthread_mutex_lock(&scratch.mu);
    nmo_status st = dev_get(&din, B_PS, (size_t)count * NMO_GO_LN_PROBE_IN * sizeof(double), err);
    if (st == NMO_OK) st = dev_get(&dout, B_PO, (size_t)count * 4 * sizeof(double), err);
    if (st == NMO_OK) st = nmo_gpu_h2d(din, in, (size_t)count * NMO_GO_LN_PROBE_IN * sizeof(double), err);
    if (st == NMO_OK) st = nmo_go_ln_probe(din, dout, count, fc.uc, fc.etac, err);
    if (st == NMO_OK) st = nmo_gpu_d2h(out, dout, (size_t)count * 4 * sizeof(double), err);
    pthread_mutex_unlock(&scratch.mu);
    nmo_fctx_clear(&fc);
    return st;
}

nmo_status nmo_gpu_rstd_probe(const nmo_case *c, const double *s, const int64_t *m, int64_t count,
                              int64_t *both, int64_t *neither, int64_t *differ, nmo_err *err)
{
    *both = *neither = *differ = 0;
    if (!r_on_device(&c->plan)) return nmo_err_set(err, NMO_ERR_UNSUPPORTED, "gpu oracle: r on the host for this plan");
    const int64_t n = c->in[1].dims[0];
    nmo_fctx fc;
    NMO_RETURN_IF_ERR(nmo_fctx_init(&fc, &c->plan, err));
    nmo_status st = NMO_OK;
    double *md = malloc((size_t)count * sizeof(double)), *out = malloc((size_t)count * 4 * sizeof(double));
    void *ds, *dm, *dout;
    nmo_go_rstd_consts rc;
    pthread_mutex_lock(&scratch.mu);
    if (!md || !out) st = nmo_err_set(err, NMO_ERR_NOMEM, "gpu oracle: out of memory (probe)");
    for (int64_t i = 0; st == NMO_OK && i < count; i++) md[i] = (double)m[i];
    if (st == NMO_OK) st = rstd_consts(&rc, &fc, c, n, err);
    if (st == NMO_OK) st = dev_get(&ds, B_PS, (size_t)count * sizeof(double), err);
    if (st == NMO_OK) st = dev_get(&dm, B_PM, (size_t)count * sizeof(double), err);
    if (st == NMO_OK) st = dev_get(&dout, B_PO, (size_t)count * 4 * sizeof(double), err);
    if (st == NMO_OK) st = nmo_gpu_h2d(ds, s, (size_t)count * sizeof(double), err);
    if (st == NMO_OK) st = nmo_gpu_h2d(dm, md, (size_t)count * sizeof(double), err);
    if (st == NMO_OK) st = nmo_go_rstd_probe(&rc, n, ds, dm, dout, count, err);
    if (st == NMO_OK) st = nmo_gpu_d2h(out, dout, (size_t)count * 4 * sizeof(double), err);
    pthread_mutex_unlock(&scratch.mu);
    for (int64_t i = 0; st == NMO_OK && i < count; i++) {
        nmo_fenc e;
        nmo_ref_rms_norm_rstd_fast(&fc, c, s[i], m[i], -1, &e);
        int hok = e.flags == 0 && isfinite(e.lo) && isfinite(e.hi), dok = out[4 * i + 2] != 0;
        if (hok && dok) {
            (*both)++;
            if (e.lo != out[4 * i] || e.hi != out[4 * i + 1]) (*differ)++;
        } else if (dok) {
            (*differ)++; /* the device kept an r the host flags */
        } else {
            (*neither) += !hok;
            (*differ) += 0;
        }
    }
    nmo_fctx_clear(&fc);
    free(md), free(out);
    return st;
}

/* the ordinal of a value of out (bf16 or fp32) among its format's values, -0 = +0 */
static int64_t out_ord(double v, int bf16)
{
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, 4);
    if (bf16) u >>= 16;
    int64_t m = bf16 ? (int64_t)(u & 0x7fffu) : (int64_t)(u & 0x7fffffffu);
    int neg = bf16 ? (u & 0x8000u) != 0 : (u >> 31) != 0;
    return neg ? -m : m;
}

void nmo_go_mark_scaled(nmo_report *rep, int out_bf16, const int64_t *list, int64_t nl, int64_t n)
{
    if (!rep->rlo[0] || !rep->rhi[0] || !rep->bflags[0]) return;
    const int64_t numel = rep->out_n[0];
    for (int64_t e = 0, a = 0; e < numel; e++) {
        while (a < nl && list[a] < e / n) a++;
        if (a < nl && list[a] == e / n) continue;
        if (out_ord(rep->rhi[0][e], out_bf16) - out_ord(rep->rlo[0][e], out_bf16) + 1 > rep->max_ulps)
            rep->bflags[0][e] = NMO_BF_SCALED;
    }
}

/* The report: the device's counts plus the host's (hrep: the units in list, each of
 * ulen elements), the worst of both, and the per-element arrays when asked. */
nmo_status nmo_go_merge_report(nmo_report *rep, const nmo_check_opts *op, const nmo_go_acc *accp,
                               const nmo_report *hp, const nmo_elem_info *wip, const int64_t *list, int64_t nl,
                               int64_t n, int64_t numel, const void *dverd, const void *drlo, const void *drhi,
                               nmo_err *err)
{
    const nmo_check_opts o = *op;
    const nmo_go_acc acc = *accp;
    nmo_status s = NMO_OK;
#define TRY(x) do { if ((s = (x)) != NMO_OK) return s; } while (0)
    rep->n_pass = (int64_t)acc.n_pass;
    rep->n_fail = (int64_t)acc.n_fail;
    rep->n_scaled = (int64_t)acc.n_scaled;
    for (int i = 0; i <= NMO_GO_HIST; i++) rep->width_hist[i] = (int64_t)acc.hist[i];
    rep->width_max = (int64_t)acc.wmax;
    if (hp) {
        const nmo_report hrep = *hp;
        rep->n_pass += hrep.n_pass, rep->n_fail += hrep.n_fail, rep->n_inconc += hrep.n_inconc;
        rep->n_nonfinite += hrep.n_nonfinite, rep->n_wide += hrep.n_wide;
        rep->n_overflow += hrep.n_overflow, rep->n_unbounded += hrep.n_unbounded;
        rep->n_noscale += hrep.n_noscale, rep->n_nan += hrep.n_nan, rep->n_scaled += hrep.n_scaled;
        rep->n_unc += hrep.n_unc, rep->n_escalated += hrep.n_escalated;
        rep->units_escalated += hrep.units_escalated;
        rep->n_term_esc += hrep.n_term_esc, rep->n_sum_cert += hrep.n_sum_cert;
        for (int i = 0; i <= NMO_WIDTH_HIST; i++) rep->width_hist[i] += hrep.width_hist[i];
        if (hrep.width_max > rep->width_max) rep->width_max = hrep.width_max;
        if (hrep.has_worst) rep->worst = hrep.worst, rep->has_worst = 1;
    }
    if (wip && (!rep->has_worst || nmo__elem_worse(wip, &rep->worst)))
        rep->worst = *wip, rep->has_worst = 1;
    if (o.keep_verdicts) {
        if (!(rep->verdicts[0] = malloc((size_t)numel))) {
            return nmo_err_set(err, NMO_ERR_NOMEM, "gpu oracle: out of memory for the verdicts");
        }
        TRY(nmo_gpu_d2h(rep->verdicts[0], dverd, (size_t)numel, err));
    }
    if (o.keep_bounds) {
        rep->rlo[0] = malloc((size_t)numel * sizeof(double));
        rep->rhi[0] = malloc((size_t)numel * sizeof(double));
        rep->bflags[0] = calloc((size_t)numel, 1); /* a row decided on the device: no flag */
        if (!rep->rlo[0] || !rep->rhi[0] || !rep->bflags[0]) {
            return nmo_err_set(err, NMO_ERR_NOMEM, "gpu oracle: out of memory for the bounds");
        }
        TRY(nmo_gpu_d2h(rep->rlo[0], drlo, (size_t)numel * sizeof(double), err));
        TRY(nmo_gpu_d2h(rep->rhi[0], drhi, (size_t)numel * sizeof(double), err));
    }
    for (int64_t i = 0; i < nl && hp; i++) {
        const nmo_report hrep = *hp;
        size_t off = (size_t)(list[i] * n);
        if (o.keep_verdicts) memcpy(rep->verdicts[0] + off, hrep.verdicts[0] + off, (size_t)n);
        if (o.keep_bounds) {
            memcpy(rep->rlo[0] + off, hrep.rlo[0] + off, (size_t)n * sizeof(double));
            memcpy(rep->rhi[0] + off, hrep.rhi[0] + off, (size_t)n * sizeof(double));
            memcpy(rep->bflags[0] + off, hrep.bflags[0] + off, (size_t)n);
        }
    }
    rep->verdict = rep->n_fail ? NMO_FAIL : rep->n_inconc ? NMO_INCONCLUSIVE : NMO_PASS;
#undef TRY
    return s;
}

typedef struct {
    void *x, *w, *verd, *rlo, *rhi, *s, *m, *bad, *rrow, *skip, *redo, *acc, *rstat, *eredo;
} dev_bufs;

static nmo_status check_ew(nmo_report *rep, const nmo_case *c, const void *cand_dev,
                           const void *const *in_dev, const nmo_check_opts *opts,
                           nmo_gpu_check_info *info, nmo_err *err);

/* rms_norm on the device. One function on purpose (~190 lines): its phases (inputs up,
 * r on the device or the host, the fused judging kernel, the rows sent back to the CPU
 * checker, the r self-check, the worst element, the merge) share a dozen scratch buffers
 * held under scratch.mu and one cleanup path; split, they would pass all of them around. */
nmo_status nmo_gpu_check(nmo_report *rep, const nmo_case *c, const void *cand_dev,
                         const void *const *in_dev, const nmo_check_opts *opts,
                         nmo_gpu_check_info *info, nmo_err *err)
{
    if (strcmp(c->op->name, "matmul") == 0) return nmo_gpu_check_matmul(rep, c, cand_dev, in_dev, opts, info, err);
    if (strcmp(c->op->name, "swiglu") == 0) return check_ew(rep, c, cand_dev, in_dev, opts, info, err);
    if (strcmp(c->op->name, "softmax") == 0 || strcmp(c->op->name, "layer_norm") == 0)
        return check_rows(rep, c, cand_dev, in_dev, opts, info, err);
    nmo_check_opts o = {0};
    if (opts) o = *opts;
    memset(rep, 0, sizeof *rep);
    nmo_gpu_check_info inf = {0};
    const char *why = NULL;
    if (!nmo_gpu_check_supported(c, &why))
        return nmo_err_set(err, NMO_ERR_UNSUPPORTED, "gpu oracle: %s", why);
    if (o.mode == NMO_MODE_CERT || o.keep_enc)
        return nmo_err_set(err, NMO_ERR_UNSUPPORTED,
                           "gpu oracle: the device tier is the fast engine (no certified-only mode, no enclosures kept)");
    NMO_RETURN_IF_ERR(nmo_op_check_plan(c->op, &c->plan, err));
    double t0 = now_ms();
    const int64_t n = c->in[1].dims[0], rows = c->op->units(c), numel = rows * n;
    if (nmo_tensor_numel(&c->in[0]) != numel || nmo_tensor_numel(&c->out[0]) != numel)
        return nmo_err_set(err, NMO_ERR_SIZE, "gpu oracle: rms_norm shape mismatch");
    const int in_bf16 = c->plan.in == NMO_BF16, out_bf16 = c->plan.out == NMO_BF16;
    const size_t ies = nmo_fmt_bytes(c->plan.in);
    const int rdev = r_on_device(&c->plan) && !nmo_gpu_check_host_r;
    rep->mode = NMO_MODE_ESCALATE;
    rep->max_ulps = o.max_ulps > 0 ? o.max_ulps : nmo_plan_max_ulps(&c->plan);
    rep->n_out = 1;
    rep->out_n[0] = numel;
    rep->n = numel;
    rep->units = rows;

    dev_bufs d = {0};
    nmo_status s = NMO_OK;
    pthread_mutex_lock(&scratch.mu);
    double *hs = NULL, *hr = NULL, *hstat = NULL, *ev = NULL;
    int64_t *el = NULL, *js = NULL, nk = 0, ngroups = 0;
    nmo_fenc *een = NULL;
    nmo_cctx cc;
    int cc_ok = 0;
    int64_t *hm = NULL, *list = malloc((size_t)rows * sizeof(int64_t));
    uint8_t *hbad = NULL, *hskip = NULL;
    nmo_go_acc acc;
    nmo_tensor hc = {0};
    nmo_report hrep;
    int hrep_ok = 0;
    memset(&hrep, 0, sizeof hrep);
    nmo_fctx fc;
    int fc_ok = 0;
    double t1 = t0, t2 = t0;
#define TRY(x) do { if ((s = (x)) != NMO_OK) goto done; } while (0)
    if (!list) {
        s = nmo_err_set(err, NMO_ERR_NOMEM, "gpu oracle: out of memory for %lld rows", (long long)rows);
        goto done;
    }
    if (in_dev) {
        d.x = (void *)in_dev[0], d.w = (void *)in_dev[1];
    } else {
        TRY(dev_get(&d.x, B_X, (size_t)numel * ies, err));
        TRY(dev_get(&d.w, B_W, (size_t)n * ies, err));
        TRY(nmo_gpu_h2d(d.x, c->in[0].data, (size_t)numel * ies, err));
        TRY(nmo_gpu_h2d(d.w, c->in[1].data, (size_t)n * ies, err));
    }
    TRY(dev_get(&d.verd, B_VERD, (size_t)numel, err));
    if (o.keep_bounds) {
        TRY(dev_get(&d.rlo, B_RLO, (size_t)numel * sizeof(double), err));
        TRY(dev_get(&d.rhi, B_RHI, (size_t)numel * sizeof(double), err));
    }
    TRY(dev_get(&d.redo, B_REDO, (size_t)rows * sizeof(int64_t), err));
    TRY(dev_get(&d.acc, B_ACC, sizeof(nmo_go_acc), err));
    TRY(dev_get(&d.rstat, B_RSTAT, (size_t)rows * 4 * sizeof(double), err));
    TRY(nmo_fctx_init(&fc, &c->plan, err));
    fc_ok = 1;
    const int64_t ecap = nmo_gpu_check_elem_cap > 0 ? nmo_gpu_check_elem_cap : numel / 64 + 4096;
    TRY(dev_get(&d.eredo, B_EREDO, (size_t)ecap * sizeof(int64_t), err));
    nmo_go_rms_args ga = {d.x, d.w, cand_dev, in_bf16, out_bf16, rows, n, NULL, {0}, NULL,
                          rep->max_ulps, fc.uc, fc.etac, d.verd, d.rlo, d.rhi, d.rstat, d.redo, d.acc,
                          d.eredo, ecap, nmo_gpu_check_elem_every, 0, 0};
    ga.vec4 = n % 4 == 0 && ((uintptr_t)d.x | (uintptr_t)d.w | (uintptr_t)cand_dev) % 16 == 0 && !nmo_gpu_check_scalar;
    ga.comp_all = nmo_gpu_check_comp_all;
    if (rdev) {
        TRY(rstd_consts(&ga.rc, &fc, c, n, err));
    } else {
        /* r from the host: the rows' sums of squares on the device, each row's r by the
         * fast engine's code; rows outside nmo_fenc_mul3_row's fast path (a non-finite
         * input, r flagged or unbounded) go to the host */
        hs = malloc((size_t)rows * sizeof(double));
        hr = malloc((size_t)rows * 3 * sizeof(double));
        hm = malloc((size_t)rows * sizeof(int64_t));
        hbad = malloc((size_t)rows);
        hskip = malloc((size_t)rows);
        if (!hs || !hr || !hm || !hbad || !hskip) {
            s = nmo_err_set(err, NMO_ERR_NOMEM, "gpu oracle: out of memory for %lld rows", (long long)rows);
            goto done;
        }
        TRY(dev_get(&d.s, B_S, (size_t)rows * sizeof(double), err));
        TRY(dev_get(&d.m, B_M, (size_t)rows * sizeof(int64_t), err));
        TRY(dev_get(&d.bad, B_BAD, (size_t)rows, err));
        TRY(dev_get(&d.rrow, B_RROW, (size_t)rows * 3 * sizeof(double), err));
        TRY(nmo_go_rowsumsq(d.x, in_bf16, rows, n, d.s, d.m, d.bad, err));
        TRY(nmo_gpu_d2h(hs, d.s, (size_t)rows * sizeof(double), err));
        TRY(nmo_gpu_d2h(hm, d.m, (size_t)rows * sizeof(int64_t), err));
        TRY(nmo_gpu_d2h(hbad, d.bad, (size_t)rows, err));
        t1 = now_ms();
        for (int64_t r = 0; r < rows; r++) {
            hskip[r] = 1;
            hr[3 * r] = hr[3 * r + 1] = hr[3 * r + 2] = 0;
            if (hbad[r] || fc.force_unc) continue;
            nmo_fenc e;
            nmo_ref_rms_norm_rstd_fast(&fc, c, hs[r], hm[r], -1, &e);
            if (e.flags != 0 || !isfinite(e.lo) || !isfinite(e.hi)) continue;
            hskip[r] = 0;
            hr[3 * r] = e.lo, hr[3 * r + 1] = e.hi;
            hr[3 * r + 2] = fabs(e.lo) > fabs(e.hi) ? fabs(e.lo) : fabs(e.hi);
        }
        t2 = now_ms();
        TRY(nmo_gpu_h2d(d.rrow, hr, (size_t)rows * 3 * sizeof(double), err));
        ga.rrow = d.rrow;
    }
    /* A declared reduction geometry (sum=tree/blocked, issue 17; the HIP kernels declare
     * theirs) reaches the device through the k table, which nmo_fe_dot_k builds from the
     * plan (nmo_plan_dot_k2), and through the host's r; a row longer than the geometry
     * holds is refused, as nmo_check refuses it (its geo_error names the plan field). */
    if (fc.geo_over) {
        s = nmo_err_set(err, NMO_ERR_UNSUPPORTED,
                        "gpu oracle: plan field 'sum' holds fewer terms than rms_norm reduces at this "
                        "shape (%lld); the CPU oracle names the geometry to declare",
                        (long long)fc.geo_over);
        goto done;
    }
    /* testing (nmo_gpu_check_host_every): every k-th row to the host too */
    if (nmo_gpu_check_host_every > 0 || hskip) {
        if (!hskip && !(hskip = calloc((size_t)rows, 1))) {
            s = nmo_err_set(err, NMO_ERR_NOMEM, "gpu oracle: out of memory for %lld rows", (long long)rows);
            goto done;
        }
        if (nmo_gpu_check_host_every > 0)
            for (int64_t r = 0; r < rows; r += nmo_gpu_check_host_every) hskip[r] = 1;
        TRY(dev_get(&d.skip, B_SKIP, (size_t)rows, err));
        TRY(nmo_gpu_h2d(d.skip, hskip, (size_t)rows, err));
        ga.skip = d.skip;
    }
    /* the fused kernel, the gather and one copy of the counts */
    TRY(nmo_go_rms_judge(&ga, &acc, err));
    if (!rdev && acc.n_pass + acc.n_fail > 0) { /* the worst row's statistics are the host's here */
        int64_t wr = (0x3fffffff - (int64_t)(acc.worst & 0x3fffffffull)) / n;
        acc.w_stat[0] = hs[wr], acc.w_stat[1] = (double)hm[wr], acc.w_stat[2] = hr[3 * wr], acc.w_stat[3] = hr[3 * wr + 1];
    }
    double t3 = now_ms();

    /* the rows the device left: the CPU checker, as nmo_check runs them */
    int64_t nl = (int64_t)acc.n_redo;
    if (nl > rows) {
        s = nmo_err_set(err, NMO_ERR_GENERIC, "gpu oracle: %lld rows sent back of %lld", (long long)nl, (long long)rows);
        goto done;
    }
    if (nl > 0) TRY(nmo_gpu_d2h(list, d.redo, (size_t)nl * sizeof(int64_t), err));
    if (hskip)
        for (int64_t r = 0; r < rows; r++)
            if (hskip[r]) list[nl++] = r;
    qsort(list, (size_t)nl, sizeof(int64_t), cmp_i64);
    int64_t ne = (int64_t)acc.n_eredo;
    if (ne > ecap) { /* more single elements than the list holds: the CPU checker on everything */
        TRY(check_all_host(rep, c, cand_dev, &hc, &o, err));
        inf.rows_host = rows;
        goto done;
    }
    inf.rows_host = nl;
    inf.rows_device = rows - nl;
    /* the single elements the device left, in rows it decided (a row sent whole may have
     * listed some before its verdict: dropped, the CPU checker redoes it): each by the
     * certified engine from the row's r. That r is the device's, checked equal to the
     * host fast engine's from the same sum (unflagged, so the certified r: DESIGN
     * section 5); its scale (mag) is the host's. */
    if (ne > 0) {
        TRY(elems_fetch(d.eredo, ne, &el, &een, &ev, err));
        if (!(js = malloc((size_t)ne * sizeof(int64_t)))) {
            s = nmo_err_set(err, NMO_ERR_NOMEM, "gpu oracle: out of memory for %lld elements", (long long)ne);
            goto done;
        }
        for (int64_t i = 0; i < ne; i++) {
            int64_t row = el[i] / n;
            if (!bsearch(&row, list, (size_t)nl, sizeof(int64_t), cmp_i64)) el[nk++] = el[i];
        }
    }
    if (nk > 0) {
        TRY(elems_cand(&hc, c, cand_dev, el, nk, ev, err));
        TRY(nmo_cctx_init(&cc, &c->plan, err));
        cc_ok = 1;
        for (int64_t g0 = 0, g1; g0 < nk; g0 = g1) {
            const int64_t row = el[g0] / n;
            for (g1 = g0; g1 < nk && el[g1] / n == row; g1++) js[g1] = el[g1] % n;
            double rs[4];
            if (rdev) TRY(nmo_gpu_d2h(rs, (const double *)d.rstat + 4 * row, sizeof rs, err));
            else rs[0] = hs[row], rs[1] = (double)hm[row], rs[2] = hr[3 * row], rs[3] = hr[3 * row + 1];
            nmo_fenc rf;
            rms_r_of_stat(&fc, c, rs, &rf);
            if (rf.flags != 0 || rf.lo != rs[2] || rf.hi != rs[3]) {
                s = nmo_err_set(err, NMO_ERR_GENERIC, "gpu oracle: the device's r of row %lld is not the host's",
                                (long long)row);
                goto done;
            }
            nmo_cenc rc;
            nmo_cenc_init(&cc, &rc);
            nmo_cenc_set_fenc(&cc, &rc, &rf);
            nmo_ref_rms_norm_elems_cert(&cc, c, row, &rc, js + g0, g1 - g0, een + g0);
            nmo_cenc_clear(&cc, &rc);
            ngroups++;
        }
    }
    inf.elems_host = nk;
    inf.rows_comp = (int64_t)acc.n_comp;
    if (nl > 0) {
        if (!hc.data) TRY(cand_alloc(&hc, c, err));
        TRY(cand_rows(&hc, cand_dev, list, nl, n, err));
        TRY(nmo__check_units(&hrep, c, &hc, &o, list, nl, err));
        hrep_ok = 1;
    }
    /* testing: every device r against the host engine's from the same sum */
    if (nmo_gpu_check_verify_r && rdev) {
        if (!(hstat = malloc((size_t)rows * 4 * sizeof(double)))) {
            s = nmo_err_set(err, NMO_ERR_NOMEM, "gpu oracle: out of memory (verify r)");
            goto done;
        }
        TRY(nmo_gpu_d2h(hstat, d.rstat, (size_t)rows * 4 * sizeof(double), err));
        for (int64_t r = 0; r < rows; r++) {
            if (hskip && hskip[r]) continue;
            double *q = hstat + 4 * r;
            if (q[2] == 0 && q[3] == 0) continue; /* not kept (a non-finite input or flagged) */
            nmo_fenc e;
            rms_r_of_stat(&fc, c, q, &e);
            nmo_gpu_check_r_compared++;
            nmo_gpu_check_r_differ += e.flags != 0 || e.lo != q[2] || e.hi != q[3];
        }
    }
    /* the worst element of the device's rows: its details by the fast engine's own code
     * on that one element (the row's r from the device's sum, which gives the CPU's r:
     * the device kept it, so neither is flagged) */
    nmo_elem_info wi;
    int has_wi = 0;
    if (acc.n_pass + acc.n_fail > 0) {
        int64_t idx = 0x3fffffff - (int64_t)(acc.worst & 0x3fffffffull);
        int64_t j = idx % n;
        nmo_fenc r, e;
        rms_r_of_stat(&fc, c, acc.w_stat, &r);
        if (r.flags != 0 || r.lo != acc.w_stat[2] || r.hi != acc.w_stat[3]) {
            s = nmo_err_set(err, NMO_ERR_GENERIC, "gpu oracle: the device's r of row %lld is not the host's",
                            (long long)(idx / n));
            goto done;
        }
        double xv = nmo_tensor_get(&c->in[0], idx), wv = nmo_tensor_get(&c->in[1], j);
        nmo_fenc_mul3_row(&fc, &e, &xv, &r, &wv, 1);
        uint32_t cbits = (uint32_t)acc.w_cand;
        if (out_bf16) cbits <<= 16;
        float cf;
        memcpy(&cf, &cbits, 4);
        nmo_judge(&wi, &e, (double)cf, &c->plan, rep->max_ulps, NULL);
        wi.k = 0;
        wi.index = idx;
        has_wi = 1;
    }
    double t4 = now_ms();

    TRY(nmo_go_merge_report(rep, &o, &acc, hrep_ok ? &hrep : NULL, has_wi ? &wi : NULL, list, nl, n, numel, d.verd,
                     d.rlo, d.rhi, err));
    elems_judge(rep, c, een, el, nk, ev, ngroups, &o);
    inf.ms_device = (t1 - t0) + (t3 - t2);
    inf.ms_host_stats = t2 - t1;
    inf.ms_host_redo = t4 - t3;
    rep->seconds = (now_ms() - t0) * 1e-3;
done:
#undef TRY
    if (fc_ok) nmo_fctx_clear(&fc);
    if (cc_ok) nmo_cctx_clear(&cc);
    if (hrep_ok) nmo_report_free(&hrep);
    nmo_tensor_free(&hc);
    pthread_mutex_unlock(&scratch.mu);
    free(hs), free(hr), free(hm), free(list), free(hbad), free(hskip), free(hstat);
    free(el), free(js), free(een), free(ev);
    if (s != NMO_OK) nmo_report_free(rep);
    if (info) *info = inf;
    return s;
}

/* An elementwise operator (swiglu): one kernel over the elements, the ones it cannot
 * decide (a list) and the worst element's unit rechecked by the CPU checker. */
static nmo_status check_ew(nmo_report *rep, const nmo_case *c, const void *cand_dev,
                           const void *const *in_dev, const nmo_check_opts *opts,
                           nmo_gpu_check_info *info, nmo_err *err)
{
    nmo_check_opts o = {0};
    if (opts) o = *opts;
    memset(rep, 0, sizeof *rep);
    nmo_gpu_check_info inf = {0};
    const char *why = NULL;
    if (!nmo_gpu_check_supported(c, &why)) return nmo_err_set(err, NMO_ERR_UNSUPPORTED, "gpu oracle: %s", why);
    if (o.mode == NMO_MODE_CERT || o.keep_enc)
        return nmo_err_set(err, NMO_ERR_UNSUPPORTED,
                           "gpu oracle: the device tier is the fast engine (no certified-only mode, no enclosures kept)");
    NMO_RETURN_IF_ERR(nmo_op_check_plan(c->op, &c->plan, err));
    double t0 = now_ms();
    const int64_t numel = nmo_tensor_numel(&c->out[0]);
    if (nmo_tensor_numel(&c->in[0]) != numel || nmo_tensor_numel(&c->in[1]) != numel || c->op->units(c) != numel)
        return nmo_err_set(err, NMO_ERR_SIZE, "gpu oracle: %s shape mismatch", c->op->name);
    const size_t ies = nmo_fmt_bytes(c->plan.in);
    rep->mode = NMO_MODE_ESCALATE;
    rep->max_ulps = o.max_ulps > 0 ? o.max_ulps : nmo_plan_max_ulps(&c->plan);
    rep->n_out = 1;
    rep->out_n[0] = numel;
    rep->n = numel;
    rep->units = numel;
    nmo_status s = NMO_OK;
    void *x0, *x1, *verd, *rlo = NULL, *rhi = NULL, *redo, *accd;
    const int64_t cap = numel / 16 + 4096;
    int64_t *list = NULL;
    nmo_tensor hc = {0};
    nmo_report hrep, wrep;
    int hrep_ok = 0, wrep_ok = 0;
    memset(&hrep, 0, sizeof hrep);
    memset(&wrep, 0, sizeof wrep);
    nmo_go_acc acc;
    pthread_mutex_lock(&scratch.mu);
#define TRY(x) do { if ((s = (x)) != NMO_OK) goto done; } while (0)
    if (in_dev) {
        x0 = (void *)in_dev[0], x1 = (void *)in_dev[1];
    } else {
        TRY(dev_get(&x0, B_X, (size_t)numel * ies, err));
        TRY(dev_get(&x1, B_W, (size_t)numel * ies, err));
        TRY(nmo_gpu_h2d(x0, c->in[0].data, (size_t)numel * ies, err));
        TRY(nmo_gpu_h2d(x1, c->in[1].data, (size_t)numel * ies, err));
    }
    TRY(dev_get(&verd, B_VERD, (size_t)numel, err));
    if (o.keep_bounds) {
        TRY(dev_get(&rlo, B_RLO, (size_t)numel * sizeof(double), err));
        TRY(dev_get(&rhi, B_RHI, (size_t)numel * sizeof(double), err));
    }
    TRY(dev_get(&redo, B_REDO, (size_t)cap * sizeof(int64_t), err));
    TRY(dev_get(&accd, B_ACC, sizeof(nmo_go_acc), err));
    nmo_go_ew_args ga = {x0, x1, cand_dev, c->plan.in == NMO_BF16, c->plan.out == NMO_BF16, numel,
                         c->plan.fn_ulps[NMO_FN_SIGMOID], c->plan.fn_ulps[NMO_FN_EXP], rep->max_ulps, verd,
                         rlo, rhi, redo, cap, accd};
    TRY(nmo_go_ew_judge(&ga, &acc, err));
    double t1 = now_ms();
    int64_t nl = (int64_t)acc.n_redo;
    if (nl > cap) { /* too many for the list: the CPU checker on everything */
        TRY(cand_alloc(&hc, c, err));
        TRY(nmo_gpu_d2h(hc.data, cand_dev, (size_t)numel * nmo_fmt_bytes(c->plan.out), err));
        pthread_mutex_unlock(&scratch.mu);
        s = nmo_check(rep, c, &hc, &o, err);
        nmo_tensor_free(&hc);
        inf.rows_host = numel;
        if (info) *info = inf;
        return s;
    }
    if (!(list = malloc((size_t)(nl + 1) * sizeof(int64_t)))) {
        s = nmo_err_set(err, NMO_ERR_NOMEM, "gpu oracle: out of memory for the list");
        goto done;
    }
    if (nl > 0) TRY(nmo_gpu_d2h(list, redo, (size_t)nl * sizeof(int64_t), err));
    qsort(list, (size_t)nl, sizeof(int64_t), cmp_i64);
    inf.rows_host = nl;
    inf.rows_device = numel - nl;
    int64_t widx = -1;
    if (acc.n_pass + acc.n_fail > 0) widx = 0x3fffffff - (int64_t)(acc.worst & 0x3fffffffull);
    if (nl > 0 || widx >= 0) {
        TRY(cand_alloc(&hc, c, err));
        TRY(cand_rows(&hc, cand_dev, list, nl, 1, err));
        if (widx >= 0) TRY(cand_rows(&hc, cand_dev, &widx, 1, 1, err));
    }
    if (nl > 0) {
        TRY(nmo__check_units(&hrep, c, &hc, &o, list, nl, err));
        hrep_ok = 1;
    }
    if (widx >= 0) { /* the worst element's details: its unit by the CPU checker */
        nmo_check_opts wo = {0};
        wo.mode = NMO_MODE_ESCALATE;
        wo.max_ulps = o.max_ulps;
        TRY(nmo__check_units(&wrep, c, &hc, &wo, &widx, 1, err));
        wrep_ok = 1;
    }
    double t2 = now_ms();
    TRY(nmo_go_merge_report(rep, &o, &acc, hrep_ok ? &hrep : NULL, wrep_ok && wrep.has_worst ? &wrep.worst : NULL, list,
                     nl, 1, numel, verd, rlo, rhi, err));
    inf.ms_device = t1 - t0;
    inf.ms_host_redo = t2 - t1;
    rep->seconds = (now_ms() - t0) * 1e-3;
done:
#undef TRY
    if (hrep_ok) nmo_report_free(&hrep);
    if (wrep_ok) nmo_report_free(&wrep);
    nmo_tensor_free(&hc);
    pthread_mutex_unlock(&scratch.mu);
    free(list);
    if (s != NMO_OK) nmo_report_free(rep);
    if (info) *info = inf;
    return s;
}

#include "gpu_oracle_rows_host.h" /* softmax and layer_norm */
