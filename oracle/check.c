/* numoracle: the checker. The fast engine evaluates every unit; units holding an element
 * it could not certify are recomputed by the certified engine (escalation); then each
 * element's enclosure is mapped through the store rounding into the reachable set R and
 * the candidate judged against it (DESIGN §6). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>
#include <unistd.h>

#include "numoracle/check.h"
#include "numoracle/enc_cert.h"
#include "numoracle/enc_fast.h"

const char *nmo_verdict_name(nmo_verdict v)
{
    switch (v) {
    case NMO_PASS: return "PASS";
    case NMO_FAIL: return "FAIL";
    case NMO_INCONCLUSIVE: return "INCONCLUSIVE";
    }
    return "?";
}

/* ---- store rounding and ordinals, with inline paths for the common formats ---------- */

static inline uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static inline float bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline double out_round(const nmo_plan *p, double x, nmo_rnd r)
{
    if (!p->ftz && r == NMO_RNE && x == x) {
        float f = (float)x;
        if ((double)f == x) { /* x is an fp32 value: exact bit paths */
            if (p->out == NMO_FP32) return f;
            if (p->out == NMO_BF16) {
                uint32_t u = f32_bits(f);
                u += 0x7fffu + ((u >> 16) & 1u);
                return bits_f32(u & 0xffff0000u);
            }
        }
    }
    return nmo_fmt_round(p->out, x, r, p->ftz);
}

static inline int64_t out_ord(nmo_fmt f, double x)
{
    if (f == NMO_BF16 || f == NMO_FP32) {
        uint32_t u = f32_bits((float)x);
        if (f == NMO_BF16) u >>= 16;
        int64_t mag = f == NMO_BF16 ? (int64_t)(u & 0x7fffu) : (int64_t)(u & 0x7fffffffu);
        int neg = f == NMO_BF16 ? (u & 0x8000u) != 0 : (u & 0x80000000u) != 0;
        return neg ? -mag : mag;
    }
    return nmo_fmt_ordinal(f, x);
}

/* Ordinal extended to infinities: one step beyond the largest finite value. */
static int64_t out_ord_ext(nmo_fmt f, double x)
{
    if (isinf(x)) {
        int64_t m = out_ord(f, nmo_fmt_get(f)->max_finite) + 1;
        return x > 0 ? m : -m;
    }
    return out_ord(f, x);
}

static inline nmo_verdict judge_core(nmo_elem_info *in, const nmo_fenc *e, double v,
                                     const nmo_plan *p, long max_ulps, uint32_t *bflags)
{
    uint32_t bf = 0;
    in->enc_lo = e->lo;
    in->enc_hi = e->hi;
    in->cand = v;
    in->dist_ulps = 0;
    in->width_ulps = 0;
    if (e->lo != e->lo) { /* every implementation gives NaN */
        bf = NMO_BF_MUST_NAN | NMO_BF_NAN_OK;
        in->rlo = in->rhi = NAN;
        in->verdict = v != v ? NMO_PASS : NMO_FAIL;
        if (in->verdict == NMO_FAIL) in->dist_ulps = INFINITY;
        if (bflags) *bflags = bf;
        return in->verdict;
    }
    nmo_rnd rl = p->round_sr ? NMO_RD : p->round, rh = p->round_sr ? NMO_RU : p->round;
    double rlo = out_round(p, e->lo, rl), rhi = out_round(p, e->hi, rh);
    if (e->flags & NMO_EF_NAN) bf |= NMO_BF_NAN_OK;
    /* a store that overflows into NaN (formats without inf): unbounded, NaN possible */
    if (rlo != rlo) rlo = -INFINITY, bf |= NMO_BF_NAN_OK;
    if (rhi != rhi) rhi = INFINITY, bf |= NMO_BF_NAN_OK;
    in->rlo = rlo;
    in->rhi = rhi;
    int finite = isfinite(rlo) && isfinite(rhi);
    if (!finite) bf |= NMO_BF_NONFINITE;
    else {
        in->width_ulps = out_ord(p->out, rhi) - out_ord(p->out, rlo);
        if (in->width_ulps + 1 > max_ulps) bf |= NMO_BF_WIDE;
    }
    int inside = v != v ? (bf & NMO_BF_NAN_OK) != 0 : (rlo <= v && v <= rhi);
    if (!inside) {
        in->verdict = NMO_FAIL;
        if (v != v) in->dist_ulps = INFINITY;
        else if (v > rhi) in->dist_ulps = (double)(out_ord_ext(p->out, v) - out_ord_ext(p->out, rhi));
        else in->dist_ulps = (double)(out_ord_ext(p->out, rlo) - out_ord_ext(p->out, v));
    } else if (!finite || (bf & NMO_BF_WIDE) || v != v) {
        in->verdict = NMO_INCONCLUSIVE;
    } else {
        in->verdict = NMO_PASS;
    }
    if (bflags) *bflags = bf;
    return in->verdict;
}

nmo_verdict nmo_judge(nmo_elem_info *in, const nmo_fenc *e, double v, const nmo_plan *p,
                      long max_ulps, uint32_t *bflags)
{
    return judge_core(in, e, v, p, max_ulps, bflags);
}

/* ---- the check loop --------------------------------------------------------------------- */

void nmo_report_free(nmo_report *rep)
{
    for (int k = 0; k < NMO_MAX_TENSORS; k++) {
        free(rep->verdicts[k]);
        free(rep->rlo[k]);
        free(rep->rhi[k]);
        free(rep->bflags[k]);
        free(rep->enc[k]);
        rep->verdicts[k] = NULL;
        rep->rlo[k] = rep->rhi[k] = NULL;
        rep->bflags[k] = NULL;
        rep->enc[k] = NULL;
    }
}

double nmo_report_width_quantile(const nmo_report *rep, double q)
{
    int64_t tot = 0;
    for (int i = 0; i <= NMO_WIDTH_HIST; i++) tot += rep->width_hist[i];
    if (tot == 0) return NAN;
    int64_t want = (int64_t)ceil(q * (double)tot);
    if (want < 1) want = 1;
    int64_t acc = 0;
    for (int i = 0; i <= NMO_WIDTH_HIST; i++) {
        acc += rep->width_hist[i];
        if (acc >= want) return i == NMO_WIDTH_HIST ? (double)rep->width_max : (double)i;
    }
    return (double)rep->width_max;
}

static int worse(const nmo_elem_info *a, const nmo_elem_info *b)
{
    /* FAIL beats everything, larger distance first; then INCONCLUSIVE; then the widest
     * set; ties go to the first element (so the report does not depend on threads) */
    int ra = a->verdict == NMO_FAIL ? 2 : a->verdict == NMO_INCONCLUSIVE ? 1 : 0;
    int rb = b->verdict == NMO_FAIL ? 2 : b->verdict == NMO_INCONCLUSIVE ? 1 : 0;
    if (ra != rb) return ra > rb;
    if (ra == 2 && a->dist_ulps != b->dist_ulps) return a->dist_ulps > b->dist_ulps;
    if (ra != 2 && a->width_ulps != b->width_ulps) return a->width_ulps > b->width_ulps;
    if (a->k != b->k) return a->k < b->k;
    return a->index < b->index;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}


/* ---- workers: a contiguous range of units each ------------------------------------- */

#define NMO_MAX_THREADS 16

typedef struct {
    const nmo_case *c;
    const nmo_tensor *cand;
    nmo_check_opts o;
    nmo_report *rep; /* shared: per-element arrays only (disjoint writes) */
    int64_t u0, u1;
    nmo_fctx fc;
    nmo_cctx cc;
    int fc_ready, cc_ready;
    nmo_status status;
    nmo_err err;
    int64_t n_pass, n_fail, n_inconc, n_nonfinite, n_wide, n_unc, n_escalated, units_escalated;
    int64_t width_hist[NMO_WIDTH_HIST + 1];
    int64_t width_max;
    int has_worst;
    nmo_elem_info worst;
} check_worker;

/* NMO_THREADS, else the online CPUs; at most one thread per 64 units. */
static int nmo_check_threads(int64_t units)
{
    const char *e = getenv("NMO_THREADS");
    long n = e && *e ? atol(e) : sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) n = 1;
    if (n > NMO_MAX_THREADS) n = NMO_MAX_THREADS;
    if (units / 64 < n) n = units / 64 > 0 ? units / 64 : 1;
    return (int)n;
}

static nmo_status worker_init(check_worker *w, check_worker *share)
{
    nmo_status s = nmo_fctx_init(&w->fc, &w->c->plan, &w->err);
    if (s != NMO_OK) return w->status = s;
    w->fc_ready = 1;
    if (w->o.mode == NMO_MODE_CERT) {
        s = nmo_cctx_init(&w->cc, &w->c->plan, &w->err);
        if (s != NMO_OK) return w->status = s;
        w->cc_ready = 1;
    } else if (!share) {
        if (w->c->op->prepare_fast) {
            s = w->c->op->prepare_fast(&w->fc, w->c, &w->err);
            if (s != NMO_OK) return w->status = s;
        }
        /* evaluate the first unit once so lazily batched work is built here */
        if (w->u0 < w->u1 && w->c->op->units(w->c) > 1) {
            nmo_fenc *tmp[NMO_MAX_TENSORS] = {0};
            int ok = 1;
            for (int k = 0; k < w->c->n_out; k++) {
                int64_t b, n, st;
                w->c->op->unit_span(w->c, w->u0, k, &b, &n, &st);
                tmp[k] = malloc((size_t)(n > 0 ? n : 1) * sizeof(nmo_fenc));
                ok &= tmp[k] != NULL;
            }
            if (ok) w->c->op->eval_fast(&w->fc, w->c, w->u0, tmp);
            for (int k = 0; k < w->c->n_out; k++) free(tmp[k]);
        }
    } else {
        w->fc.prep = share->fc.prep; /* read-only, owned by the first worker */
        w->fc.prep_free = NULL;
    }
    return w->status = NMO_OK;
}

static void worker_clear(check_worker *w)
{
    if (w->fc_ready) nmo_fctx_clear(&w->fc);
    if (w->cc_ready) nmo_cctx_clear(&w->cc);
    w->fc_ready = w->cc_ready = 0;
}


static inline int64_t ord_bits(uint32_t b, int bf16)
{
    uint32_t sign = bf16 ? 0x8000u : 0x80000000u;
    int64_t mag = (int64_t)(b & (sign - 1));
    return (b & sign) ? -mag : mag;
}

/* Judge elements [0, n) of one unit's output k on raw bits while they stay in the
 * common case (finite fp32-lattice enclosure, no NaN flag, finite R); returns the index
 * of the first element that needs the general judge (n when none). Same verdicts as
 * judge_core: R = [RNE(lo), RNE(hi)] compared by ordinals. */
static int64_t judge_fast_run(check_worker *w, int k, const nmo_fenc *e, int64_t beg, int64_t n,
                              int64_t str)
{
    const nmo_case *c = w->c;
    int bf16 = c->plan.out == NMO_BF16;
    long max_ulps = w->rep->max_ulps;
    const uint16_t *c16 = (const uint16_t *)w->cand[k].data;
    const uint32_t *c32 = (const uint32_t *)w->cand[k].data;
    uint32_t inf = bf16 ? 0x7f80u : 0x7f800000u, absm = bf16 ? 0x7fffu : 0x7fffffffu;
    for (int64_t i = 0; i < n; i++) {
        const nmo_fenc *x = &e[i];
        if (x->flags & NMO_EF_NAN) return i;
        float fl = (float)x->lo, fh = (float)x->hi;
        if ((double)fl != x->lo || (double)fh != x->hi || !(fabsf(fl) <= FLT_MAX) ||
            !(fabsf(fh) <= FLT_MAX))
            return i;
        uint32_t ul, uh;
        memcpy(&ul, &fl, 4);
        memcpy(&uh, &fh, 4);
        if (bf16) {
            ul = (ul + 0x7fffu + ((ul >> 16) & 1u)) >> 16;
            uh = (uh + 0x7fffu + ((uh >> 16) & 1u)) >> 16;
        }
        if ((ul & absm) >= inf || (uh & absm) >= inf) return i; /* the store overflows */
        int64_t idx = beg + i * str;
        uint32_t cb = bf16 ? c16[idx] : c32[idx];
        int64_t ol = ord_bits(ul, bf16), oh = ord_bits(uh, bf16), wd = oh - ol;
        w->width_hist[wd < NMO_WIDTH_HIST ? wd : NMO_WIDTH_HIST]++;
        if (wd > w->width_max) w->width_max = wd;
        int cnan = (cb & absm) > inf;
        int64_t oc = ord_bits(cb, bf16);
        nmo_verdict vd;
        if (cnan || oc < ol || oc > oh) vd = NMO_FAIL;
        else if (wd + 1 > max_ulps) vd = NMO_INCONCLUSIVE;
        else vd = NMO_PASS;
        if (w->o.keep_verdicts) w->rep->verdicts[k][idx] = (uint8_t)vd;
        if (vd == NMO_PASS) {
            w->n_pass++;
            if (w->has_worst && (w->worst.verdict != NMO_PASS || wd <= w->worst.width_ulps)) continue;
        } else if (vd == NMO_FAIL) {
            w->n_fail++;
        } else {
            w->n_inconc++;
            w->n_wide++;
        }
        /* a worst-element candidate: fill the details through the general judge */
        nmo_elem_info info;
        double v = nmo_tensor_get(&w->cand[k], idx);
        judge_core(&info, x, v, &c->plan, max_ulps, NULL);
        info.k = k;
        info.index = idx;
        if (!w->has_worst || worse(&info, &w->worst)) {
            w->worst = info;
            w->has_worst = 1;
        }
    }
    return n;
}

static void *worker_main(void *arg)
{
    check_worker *w = arg;
    if (w->status != NMO_OK) return NULL;
    const nmo_case *c = w->c;
    const nmo_op *op = c->op;
    nmo_report *rep = w->rep;
    const nmo_check_opts o = w->o;
    const nmo_tensor *cand = w->cand;
    nmo_status s = NMO_OK;
    nmo_fenc *buf[NMO_MAX_TENSORS] = {0};
    int64_t cap[NMO_MAX_TENSORS] = {0};
    double *cbuf = NULL;
    int64_t ccap = 0;
    nmo_elem_info info;
    /* the common case judged on raw bits: a candidate, RNE store into bf16 or fp32 */
    int fastj = cand && !o.keep_bounds && !o.keep_enc && !c->plan.ftz && !c->plan.round_sr &&
                c->plan.round == NMO_RNE && (c->plan.out == NMO_BF16 || c->plan.out == NMO_FP32);

    for (int64_t u = w->u0; u < w->u1; u++) {
        int64_t beg[NMO_MAX_TENSORS], cnt[NMO_MAX_TENSORS], str[NMO_MAX_TENSORS];
        for (int k = 0; k < c->n_out; k++) {
            op->unit_span(c, u, k, &beg[k], &cnt[k], &str[k]);
            if (cnt[k] > cap[k]) {
                free(buf[k]);
                buf[k] = malloc((size_t)cnt[k] * sizeof(nmo_fenc));
                cap[k] = buf[k] ? cnt[k] : 0;
                if (!buf[k]) { s = nmo_err_set(&w->err, NMO_ERR_NOMEM, "out of memory"); goto done; }
            }
            if (cnt[k] > ccap) {
                free(cbuf);
                cbuf = malloc((size_t)cnt[k] * sizeof(double));
                ccap = cbuf ? cnt[k] : 0;
                if (!cbuf) { s = nmo_err_set(&w->err, NMO_ERR_NOMEM, "out of memory"); goto done; }
            }
        }
        if (o.mode == NMO_MODE_CERT) {
            op->eval_cert(&w->cc, c, u, buf);
        } else {
            op->eval_fast(&w->fc, c, u, buf);
            int64_t unc = 0, tot = 0;
            for (int k = 0; k < c->n_out; k++) {
                tot += cnt[k];
                for (int64_t i = 0; i < cnt[k]; i++) unc += (buf[k][i].flags & NMO_EF_UNC) != 0;
            }
            if (unc) {
                if (!w->cc_ready) {
                    s = nmo_cctx_init(&w->cc, &c->plan, &w->err);
                    if (s != NMO_OK) goto done;
                    w->cc_ready = 1;
                }
                op->eval_cert(&w->cc, c, u, buf);
                w->n_unc += unc;
                w->n_escalated += tot;
                w->units_escalated++;
            }
        }
        for (int k = 0; k < c->n_out; k++) {
            int64_t i0 = 0;
            if (fastj) i0 = judge_fast_run(w, k, buf[k], beg[k], cnt[k], str[k]);
            if (i0 >= cnt[k]) continue;
            if (cand && cnt[k]) nmo_tensor_load_f64(cbuf, &cand[k], beg[k], cnt[k], str[k]);
            for (int64_t i = i0; i < cnt[k]; i++) {
                int64_t idx = beg[k] + i * str[k];
                uint32_t bf;
                double v = cand ? cbuf[i] : NAN;
                nmo_verdict vd = judge_core(&info, &buf[k][i], v, &c->plan, rep->max_ulps, &bf);
                if (o.keep_bounds) {
                    rep->rlo[k][idx] = info.rlo;
                    rep->rhi[k][idx] = info.rhi;
                    rep->bflags[k][idx] = (uint8_t)bf;
                }
                if (o.keep_enc) rep->enc[k][idx] = buf[k][i];
                if (!(bf & (NMO_BF_NONFINITE | NMO_BF_MUST_NAN))) {
                    int64_t wd = info.width_ulps;
                    w->width_hist[wd < NMO_WIDTH_HIST ? wd : NMO_WIDTH_HIST]++;
                    if (wd > w->width_max) w->width_max = wd;
                }
                if (!cand) continue;
                if (o.keep_verdicts) rep->verdicts[k][idx] = (uint8_t)vd;
                if (vd == NMO_PASS) w->n_pass++;
                else if (vd == NMO_FAIL) w->n_fail++;
                else {
                    w->n_inconc++;
                    if (bf & NMO_BF_NONFINITE) w->n_nonfinite++;
                    else if (bf & NMO_BF_WIDE) w->n_wide++;
                }
                /* the worst element: a PASS only competes by width */
                if (w->has_worst && vd == NMO_PASS &&
                    (w->worst.verdict != NMO_PASS || info.width_ulps <= w->worst.width_ulps))
                    continue;
                info.k = k;
                info.index = idx;
                if (!w->has_worst || worse(&info, &w->worst)) {
                    w->worst = info;
                    w->has_worst = 1;
                }
            }
        }
    }
done:
    for (int k = 0; k < NMO_MAX_TENSORS; k++) free(buf[k]);
    free(cbuf);
    w->status = s;
    return NULL;
}

nmo_status nmo_check(nmo_report *rep, const nmo_case *c, const nmo_tensor *cand,
                     const nmo_check_opts *opts, nmo_err *err)
{
    nmo_check_opts o = {0};
    if (opts) o = *opts;
    memset(rep, 0, sizeof *rep);
    const nmo_op *op = c->op;
    rep->mode = o.mode;
    rep->max_ulps = o.max_ulps > 0 ? o.max_ulps : nmo_plan_max_ulps(&c->plan);
    rep->n_out = c->n_out;
    double t0 = now_s();

    for (int k = 0; k < c->n_out; k++) {
        int64_t n = nmo_tensor_numel(&c->out[k]);
        rep->out_n[k] = n;
        if (cand) {
            if (nmo_tensor_numel(&cand[k]) != n)
                return nmo_err_set(err, NMO_ERR_SIZE,
                                   "candidate output '%s': %lld elements, expected %lld",
                                   op->out[k].name, (long long)nmo_tensor_numel(&cand[k]),
                                   (long long)n);
            if (cand[k].dtype != c->plan.out)
                return nmo_err_set(err, NMO_ERR_USAGE, "candidate output '%s': dtype %s, plan out is %s",
                                   op->out[k].name, nmo_fmt_name(cand[k].dtype),
                                   nmo_fmt_name(c->plan.out));
            if (!nmo_tensor_is_packed(&cand[k]))
                return nmo_err_set(err, NMO_ERR_USAGE, "candidate output '%s' must be packed",
                                   op->out[k].name);
        }
        if (o.keep_verdicts) rep->verdicts[k] = calloc((size_t)n, 1);
        if (o.keep_bounds) {
            rep->rlo[k] = malloc((size_t)n * sizeof(double));
            rep->rhi[k] = malloc((size_t)n * sizeof(double));
            rep->bflags[k] = calloc((size_t)n, 1);
        }
        if (o.keep_enc) rep->enc[k] = malloc((size_t)n * sizeof(nmo_fenc));
        if ((o.keep_verdicts && !rep->verdicts[k]) ||
            (o.keep_bounds && (!rep->rlo[k] || !rep->rhi[k] || !rep->bflags[k])) ||
            (o.keep_enc && !rep->enc[k])) {
            nmo_report_free(rep);
            return nmo_err_set(err, NMO_ERR_NOMEM, "out of memory for %lld-element report",
                               (long long)n);
        }
        rep->n += n;
    }

    nmo_status s = NMO_OK;
    int64_t units = op->units(c);
    rep->units = units;
    int nt = nmo_check_threads(units);
    check_worker w[NMO_MAX_THREADS];
    memset(w, 0, sizeof w);
    for (int t = 0; t < nt; t++) {
        w[t].c = c;
        w[t].cand = cand;
        w[t].o = o;
        w[t].rep = rep;
        w[t].u0 = units * t / nt;
        w[t].u1 = units * (t + 1) / nt;
    }
    /* Batched preparation (matrix products) happens once, in the first worker's
     * context, before the others start: they share it read-only. */
    s = worker_init(&w[0], NULL);
    if (s == NMO_OK && nt > 1) {
        for (int t = 1; t < nt && s == NMO_OK; t++) s = worker_init(&w[t], &w[0]);
        pthread_t th[NMO_MAX_THREADS];
        int started[NMO_MAX_THREADS] = {0};
        for (int t = 1; t < nt && s == NMO_OK; t++)
            started[t] = pthread_create(&th[t], NULL, worker_main, &w[t]) == 0;
        worker_main(&w[0]);
        for (int t = 1; t < nt; t++) {
            if (started[t]) pthread_join(th[t], NULL);
            else if (s == NMO_OK) worker_main(&w[t]); /* could not start: run here */
        }
    } else if (s == NMO_OK) {
        worker_main(&w[0]);
    }
    int has_worst = 0;
    for (int t = 0; t < nt; t++) {
        check_worker *x = &w[t];
        if (s == NMO_OK && x->status != NMO_OK) {
            s = x->status;
            if (err) *err = x->err;
        }
        rep->n_pass += x->n_pass, rep->n_fail += x->n_fail, rep->n_inconc += x->n_inconc;
        rep->n_nonfinite += x->n_nonfinite, rep->n_wide += x->n_wide;
        rep->n_unc += x->n_unc, rep->n_escalated += x->n_escalated;
        rep->units_escalated += x->units_escalated;
        for (int i = 0; i <= NMO_WIDTH_HIST; i++) rep->width_hist[i] += x->width_hist[i];
        if (x->width_max > rep->width_max) rep->width_max = x->width_max;
        if (x->has_worst && (!has_worst || worse(&x->worst, &rep->worst))) {
            rep->worst = x->worst;
            has_worst = 1;
        }
    }
    for (int t = nt - 1; t >= 0; t--) worker_clear(&w[t]);
    rep->has_worst = has_worst;
    if (!cand) rep->verdict = NMO_INCONCLUSIVE;
    else if (rep->n_fail) rep->verdict = NMO_FAIL;
    else if (rep->n_inconc) rep->verdict = NMO_INCONCLUSIVE;
    else rep->verdict = NMO_PASS;
    rep->seconds = now_s() - t0;
    if (s != NMO_OK) nmo_report_free(rep);
    return s;
}
