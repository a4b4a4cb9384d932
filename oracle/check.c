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
#include "nmo_internal.h"
#include "engine/enc_cert.h"
#include "engine/enc_fast.h"

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

/* The width of a finite R = [rlo, rhi] in ulps of `out` at the element's error scale m
 * (the spacing of out's p-bit significands in m's binade, extended beyond the largest
 * finite value: a dot product whose terms sum beyond fp16's range can still cancel into
 * it, and its precision is relative to that sum); NAN when there is no scale (m not
 * finite and positive: a domain edge, or an exact zero). The scale rule (DESIGN §6): R
 * is informative when this is at most max_ulps. */
static inline double width_at_scale(const nmo_plan *p, double rlo, double rhi, double m)
{
    if (!(m > 0) || !isfinite(m)) return NAN;
    return (rhi - rlo) / nmo_fmt_ulp(p->out, m);
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
    in->scale = e->mag;
    in->width_scale = NAN;
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
    /* R exactly {+inf} or {-inf} (every implementation overflows the same way) decides
     * like a finite set of one value */
    int one_inf = isinf(rlo) && rlo == rhi && !(bf & NMO_BF_NAN_OK);
    int finite = (isfinite(rlo) && isfinite(rhi)) || one_inf;
    if (!finite) bf |= NMO_BF_NONFINITE;
    else if (!one_inf) {
        in->width_ulps = out_ord(p->out, rhi) - out_ord(p->out, rlo);
        in->width_scale = width_at_scale(p, rlo, rhi, e->mag);
        if (in->width_ulps + 1 > max_ulps) {
            if (in->width_scale <= (double)max_ulps) bf |= NMO_BF_SCALED;
            else bf |= NMO_BF_WIDE | (in->width_scale == in->width_scale ? 0 : NMO_BF_NOSCALE);
        }
    }
    in->verdict = nmo__verdict_in_r(v, rlo, rhi, bf);
    if (in->verdict == NMO_FAIL) {
        if (v != v) in->dist_ulps = INFINITY;
        else if (v > rhi) in->dist_ulps = (double)(out_ord_ext(p->out, v) - out_ord_ext(p->out, rhi));
        else in->dist_ulps = (double)(out_ord_ext(p->out, rlo) - out_ord_ext(p->out, v));
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

int nmo__elem_worse(const nmo_elem_info *a, const nmo_elem_info *b)
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
    int64_t u0, u1;  /* positions in ulist, or units when ulist is NULL */
    const int64_t *ulist;
    nmo_fctx fc;
    nmo_cctx cc;
    int fc_ready, cc_ready;
    nmo_status status;
    nmo_err err;
    int64_t n_pass, n_fail, n_inconc, n_nonfinite, n_wide, n_unc, n_escalated, units_escalated;
    int64_t n_overflow, n_unbounded, n_noscale, n_nan, n_scaled;
    int64_t n_term_esc, n_sum_cert;
    int64_t geo_over; /* the longest reduction beyond the plan's geometry (0: none) */
    int64_t width_hist[NMO_WIDTH_HIST + 1];
    int64_t width_max;
    int has_worst;
    nmo_elem_info worst;
} check_worker;

/* NMO_THREADS, else the online CPUs, at most NMO_MAX_THREADS (above) */
int nmo__threads(void)
{
    const char *e = getenv("NMO_THREADS");
    long n = e && *e ? atol(e) : sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) n = 1;
    if (n > NMO_MAX_THREADS) n = NMO_MAX_THREADS;
    return (int)n;
}

/* nmo__threads, at most one thread per 64 units. */
static int nmo_check_threads(int64_t units)
{
    int n = nmo__threads();
    if (units / 64 < n) n = units / 64 > 0 ? (int)(units / 64) : 1;
    return n;
}

static nmo_status worker_init(check_worker *w, check_worker *share)
{
    nmo_status s = nmo_fctx_init(&w->fc, &w->c->plan, &w->err);
    if (s != NMO_OK) return w->status = s;
    w->fc_ready = 1;
    w->fc.term_esc_all = w->o.escalate_terms != 0;
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
            int64_t u = w->ulist ? w->ulist[w->u0] : w->u0;
            for (int k = 0; k < w->c->n_out; k++) {
                int64_t b, n, st;
                w->c->op->unit_span(w->c, u, k, &b, &n, &st);
                tmp[k] = malloc((size_t)(n > 0 ? n : 1) * sizeof(nmo_fenc));
                ok &= tmp[k] != NULL;
            }
            if (ok) w->c->op->eval_fast(&w->fc, w->c, u, tmp);
            for (int k = 0; k < w->c->n_out; k++) free(tmp[k]);
        }
    } else {
        /* read-only, owned by the first worker; prep_free is kept so that the batched
         * primitives recognise their data (without it each worker rebuilt its own) */
        w->fc.prep = share->fc.prep;
        w->fc.prep_free = share->fc.prep_free;
        w->fc.prep_borrowed = 1;
    }
    return w->status = NMO_OK;
}

static void worker_clear(check_worker *w)
{
    if (w->fc_ready) nmo_fctx_clear(&w->fc);
    if (w->cc_ready) nmo_cctx_clear(&w->cc);
    w->fc_ready = w->cc_ready = 0;
}



/* ---- the raw-bit judge of the common case ---------------------------------------------
 * A candidate stored by RNE into bf16 or fp32 (no ftz, no stochastic rounding), judged
 * against finite enclosures on the fp32 lattice: R = [RNE(lo), RNE(hi)] compared by
 * ordinals, the same verdicts as judge_core. A first pass (straight-line, vectorized: see
 * the note on enc_fast.c's row kernels for the options) classifies each element of a
 * block: 0 PASS, 1 FAIL, 2 INCONCLUSIVE (wide), 3 not the common case (NaN flag, an
 * endpoint off the fp32 lattice or non-finite, a store that overflows); and its width
 * in ulps. The second pass counts, and hands the few elements that can change the
 * worst element to judge_core. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("O3", "no-trapping-math", "fp-contract=off")
#define NMO_JUDGE_PRAGMA 1
#endif
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__GLIBC__)
#define NMO_JUDGE_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define NMO_JUDGE_CLONES
#endif

/* bf16: RNE of the fp32 endpoint by the carry trick, ordinals of 15-bit magnitudes */
NMO_JUDGE_CLONES
static void judge_class_bf16(uint8_t *restrict code, int64_t *restrict wdv, const nmo_fenc *restrict e,
                             const uint16_t *restrict cand, int64_t n, int64_t max_ulps)
{
    for (int64_t i = 0; i < n; i++) {
        double lo = e[i].lo, hi = e[i].hi;
        float fl = (float)lo, fh = (float)hi;
        uint32_t ul, uh;
        memcpy(&ul, &fl, 4);
        memcpy(&uh, &fh, 4);
        int spec = ((e[i].flags & NMO_EF_NAN) != 0) | ((double)fl != lo) | ((double)fh != hi) |
                   ((ul & 0x7fffffffu) > 0x7f7fffffu) | ((uh & 0x7fffffffu) > 0x7f7fffffu);
        ul = (ul + 0x7fffu + ((ul >> 16) & 1u)) >> 16;
        uh = (uh + 0x7fffu + ((uh >> 16) & 1u)) >> 16;
        spec |= ((ul & 0x7fffu) >= 0x7f80u) | ((uh & 0x7fffu) >= 0x7f80u); /* the store overflows */
        int32_t ml = (int32_t)(ul & 0x7fffu), mh = (int32_t)(uh & 0x7fffu);
        int32_t ol = (ul & 0x8000u) ? -ml : ml, oh = (uh & 0x8000u) ? -mh : mh;
        uint32_t cb = cand[i];
        int32_t mc = (int32_t)(cb & 0x7fffu), oc = (cb & 0x8000u) ? -mc : mc;
        int fail = (mc > 0x7f80) | (oc < ol) | (oc > oh);
        int32_t wd = oh - ol;
        int wide = (int64_t)wd + 1 > max_ulps;
        code[i] = (uint8_t)(spec ? 3 : fail ? 1 : wide ? 2 : 0);
        wdv[i] = wd;
    }
}

/* fp32: the endpoints themselves, ordinals of 31-bit magnitudes (widths need 64 bits) */
NMO_JUDGE_CLONES
static void judge_class_fp32(uint8_t *restrict code, int64_t *restrict wdv, const nmo_fenc *restrict e,
                             const uint32_t *restrict cand, int64_t n, int64_t max_ulps)
{
    for (int64_t i = 0; i < n; i++) {
        double lo = e[i].lo, hi = e[i].hi;
        float fl = (float)lo, fh = (float)hi;
        uint32_t ul, uh;
        memcpy(&ul, &fl, 4);
        memcpy(&uh, &fh, 4);
        int spec = ((e[i].flags & NMO_EF_NAN) != 0) | ((double)fl != lo) | ((double)fh != hi) |
                   ((ul & 0x7fffffffu) > 0x7f7fffffu) | ((uh & 0x7fffffffu) > 0x7f7fffffu);
        int64_t ml = (int64_t)(ul & 0x7fffffffu), mh = (int64_t)(uh & 0x7fffffffu);
        int64_t ol = (ul >> 31) ? -ml : ml, oh = (uh >> 31) ? -mh : mh;
        uint32_t cb = cand[i];
        int64_t mc = (int64_t)(cb & 0x7fffffffu), oc = (cb >> 31) ? -mc : mc;
        int fail = (mc > 0x7f800000) | (oc < ol) | (oc > oh);
        int64_t wd = oh - ol;
        int wide = wd + 1 > max_ulps;
        code[i] = (uint8_t)(spec ? 3 : fail ? 1 : wide ? 2 : 0);
        wdv[i] = wd;
    }
}

#ifdef NMO_JUDGE_PRAGMA
#pragma GCC pop_options
#endif

/* Judge elements [0, n) of one unit's output k (contiguous: str == 1) on raw bits while
 * they stay in the common case; returns the index of the first element that needs the
 * general judge (n when none). Counters live in locals (the verdict array is uint8_t,
 * which may alias anything), and the worst-element bookkeeping only runs for an element
 * that can change it. */
static int64_t judge_fast_run(check_worker *w, int k, const nmo_fenc *e, int64_t beg, int64_t n,
                              int64_t str)
{
    if (str != 1) return 0;
    const nmo_case *c = w->c;
    const int bf16 = c->plan.out == NMO_BF16;
    const int64_t max_ulps = w->rep->max_ulps;
    uint8_t *verd = w->o.keep_verdicts ? w->rep->verdicts[k] + beg : NULL;
    int64_t cnt[4] = {0, 0, 0, 0}, h0 = 0, h1 = 0, wmax = w->width_max, scaled = 0, noscale = 0;
    /* a PASS only competes for the worst element by width: above this one */
    int64_t pass_bar = !w->has_worst ? -1 : w->worst.verdict != NMO_PASS ? INT64_MAX : w->worst.width_ulps;
    enum { B = 512 };
    uint8_t code[B];
    int64_t wdv[B];
    int64_t i = 0;
    for (int64_t i0 = 0; i0 < n; i0 += B) {
        int64_t m = n - i0 < B ? n - i0 : B;
        if (bf16) judge_class_bf16(code, wdv, e + i0, (const uint16_t *)w->cand[k].data + beg + i0, m, max_ulps);
        else judge_class_fp32(code, wdv, e + i0, (const uint32_t *)w->cand[k].data + beg + i0, m, max_ulps);
        int64_t j = 0;
        for (; j < m; j++) {
            int cd = code[j];
            int64_t wd = wdv[j];
            if (cd == 3) break;
            if (cd == 2) { /* more than max_ulps values: the scale rule may still decide */
                const nmo_fenc *ej = &e[i0 + j];
                double ws = width_at_scale(&c->plan, out_round(&c->plan, ej->lo, NMO_RNE),
                                           out_round(&c->plan, ej->hi, NMO_RNE), ej->mag);
                if (ws <= (double)max_ulps) code[j] = (uint8_t)(cd = 0), scaled++;
                else noscale += ws != ws;
            }
            cnt[cd]++;
            h0 += wd == 0;
            h1 += wd == 1;
            if (wd > 1) w->width_hist[wd < NMO_WIDTH_HIST ? wd : NMO_WIDTH_HIST]++;
            wmax = wd > wmax ? wd : wmax;
            if (cd == 0 && wd <= pass_bar) continue;
            /* a worst-element candidate: fill the details through the general judge */
            int64_t idx = beg + i0 + j;
            nmo_elem_info info;
            double v = nmo_tensor_get(&w->cand[k], idx);
            judge_core(&info, &e[i0 + j], v, &c->plan, max_ulps, NULL);
            info.k = k;
            info.index = idx;
            if (!w->has_worst || nmo__elem_worse(&info, &w->worst)) {
                w->worst = info;
                w->has_worst = 1;
                pass_bar = w->worst.verdict != NMO_PASS ? INT64_MAX : w->worst.width_ulps;
            }
        }
        if (verd) /* codes 0, 1, 2 are NMO_PASS, NMO_FAIL and NMO_INCONCLUSIVE - 1 */
            for (int64_t t = 0; t < j; t++)
                verd[i0 + t] = (uint8_t)(code[t] == 2 ? NMO_INCONCLUSIVE : code[t]);
        i = i0 + j;
        if (j < m) break;
    }
    w->n_pass += cnt[0];
    w->n_fail += cnt[1];
    w->n_inconc += cnt[2];
    w->n_wide += cnt[2]; /* finite R here: INCONCLUSIVE means wide */
    w->n_noscale += noscale;
    w->n_scaled += scaled;
    w->width_hist[0] += h0;
    w->width_hist[1] += h1;
    w->width_max = wmax;
    return i;
}

/* The general judge of one element (enclosure e, candidate value v; NAN without a
 * candidate) into the worker's counts, histogram, worst element and the report's
 * per-element arrays: the one copy of the counting rules (worker_main, nmo__judge_elems). */
static void judge_general(check_worker *w, int k, int64_t idx, const nmo_fenc *e, double v)
{
    const nmo_check_opts o = w->o;
    nmo_report *rep = w->rep;
    nmo_elem_info info;
    uint32_t bf;
    nmo_verdict vd = judge_core(&info, e, v, &w->c->plan, rep->max_ulps, &bf);
    if (o.keep_bounds) {
        rep->rlo[k][idx] = info.rlo;
        rep->rhi[k][idx] = info.rhi;
        rep->bflags[k][idx] = (uint8_t)bf;
    }
    if (o.keep_enc) rep->enc[k][idx] = *e;
    if (!(bf & (NMO_BF_NONFINITE | NMO_BF_MUST_NAN))) {
        int64_t wd = info.width_ulps;
        w->width_hist[wd < NMO_WIDTH_HIST ? wd : NMO_WIDTH_HIST]++;
        if (wd > w->width_max) w->width_max = wd;
    }
    if (!w->cand) return;
    if (o.keep_verdicts) rep->verdicts[k][idx] = (uint8_t)vd;
    if (vd == NMO_PASS) {
        w->n_pass++;
        w->n_scaled += (bf & NMO_BF_SCALED) != 0;
    } else if (vd == NMO_FAIL) {
        w->n_fail++;
    } else {
        w->n_inconc++;
        if (bf & NMO_BF_NONFINITE) {
            w->n_nonfinite++;
            if (info.rlo == -INFINITY && info.rhi == INFINITY) w->n_unbounded++;
            else w->n_overflow++;
        } else if (bf & NMO_BF_WIDE) {
            w->n_wide++;
            w->n_noscale += (bf & NMO_BF_NOSCALE) != 0;
        } else {
            w->n_nan++; /* a NaN candidate where NaN is possible, not certain */
        }
    }
    /* the worst element: a PASS only competes by width */
    if (w->has_worst && vd == NMO_PASS && (w->worst.verdict != NMO_PASS || info.width_ulps <= w->worst.width_ulps))
        return;
    info.k = k;
    info.index = idx;
    if (!w->has_worst || nmo__elem_worse(&info, &w->worst)) {
        w->worst = info;
        w->has_worst = 1;
    }
}

static void *worker_main(void *arg)
{
    check_worker *w = arg;
    if (w->status != NMO_OK) return NULL;
    const nmo_case *c = w->c;
    const nmo_op *op = c->op;
    const nmo_check_opts o = w->o;
    const nmo_tensor *cand = w->cand;
    nmo_status s = NMO_OK;
    nmo_fenc *buf[NMO_MAX_TENSORS] = {0};
    int64_t cap[NMO_MAX_TENSORS] = {0};
    double *cbuf = NULL;
    int64_t ccap = 0;
    /* the common case judged on raw bits: a candidate, RNE store into bf16 or fp32 */
    int fastj = cand && !o.keep_bounds && !o.keep_enc && !c->plan.ftz && !c->plan.round_sr &&
                c->plan.round == NMO_RNE && (c->plan.out == NMO_BF16 || c->plan.out == NMO_FP32);

    for (int64_t ui = w->u0; ui < w->u1; ui++) {
        int64_t u = w->ulist ? w->ulist[ui] : ui;
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
                if (op->eval_cert_unc_stat) { /* the unit's statistic, then the flagged elements */
                    op->eval_cert_unc_stat(&w->fc, &w->cc, c, u, buf);
                    w->n_escalated += unc;
                } else if (op->eval_cert_unc) { /* independent elements: only the flagged ones */
                    op->eval_cert_unc(&w->cc, c, u, buf);
                    w->n_escalated += unc;
                } else {
                    op->eval_cert(&w->cc, c, u, buf);
                    w->n_escalated += tot;
                }
                w->n_unc += unc;
                w->units_escalated++;
            }
        }
        for (int k = 0; k < c->n_out; k++) {
            int64_t i0 = 0;
            if (fastj) i0 = judge_fast_run(w, k, buf[k], beg[k], cnt[k], str[k]);
            if (i0 >= cnt[k]) continue;
            if (cand && cnt[k]) nmo_tensor_load_f64(cbuf, &cand[k], beg[k], cnt[k], str[k]);
            for (int64_t i = i0; i < cnt[k]; i++)
                judge_general(w, k, beg[k] + i * str[k], &buf[k][i], cand ? cbuf[i] : NAN);
        }
    }
done:
    for (int k = 0; k < NMO_MAX_TENSORS; k++) free(buf[k]);
    free(cbuf);
    w->n_term_esc = w->fc.n_term_esc;
    w->n_sum_cert = w->fc.n_sum_cert;
    w->geo_over = w->fc.geo_over > w->cc.geo_over ? w->fc.geo_over : w->cc.geo_over;
    w->status = s;
    mpfr_free_cache(); /* MPFR's caches are per thread: a worker's die with it otherwise (leaked) */
    return NULL;
}

/* A worker's counts, histogram and worst element added to the report's. */
static void worker_merge(nmo_report *rep, const check_worker *x)
{
    rep->n_pass += x->n_pass, rep->n_fail += x->n_fail, rep->n_inconc += x->n_inconc;
    rep->n_nonfinite += x->n_nonfinite, rep->n_wide += x->n_wide;
    rep->n_overflow += x->n_overflow, rep->n_unbounded += x->n_unbounded;
    rep->n_noscale += x->n_noscale, rep->n_nan += x->n_nan, rep->n_scaled += x->n_scaled;
    rep->n_unc += x->n_unc, rep->n_escalated += x->n_escalated;
    rep->units_escalated += x->units_escalated;
    rep->n_term_esc += x->n_term_esc;
    rep->n_sum_cert += x->n_sum_cert;
    for (int i = 0; i <= NMO_WIDTH_HIST; i++) rep->width_hist[i] += x->width_hist[i];
    if (x->width_max > rep->width_max) rep->width_max = x->width_max;
    if (x->has_worst && (!rep->has_worst || nmo__elem_worse(&x->worst, &rep->worst))) {
        rep->worst = x->worst;
        rep->has_worst = 1;
    }
}

/* Elements idx[0..m) of output k, with enclosures e[] (computed by the caller: the GPU
 * tier's single escalated elements) and candidate values v[] (NULL: no candidate),
 * judged and counted into rep as nmo_check counts them (rep set up by the caller: its
 * max_ulps and the per-element arrays opts asks for; rep->verdict is left to it). */
void nmo__judge_elems(nmo_report *rep, const nmo_case *c, int k, const nmo_fenc *e, const int64_t *idx,
                      int64_t m, const double *v, const nmo_check_opts *opts)
{
    check_worker w;
    memset(&w, 0, sizeof w);
    w.c = c;
    w.o = *opts;
    w.rep = rep;
    w.cand = v ? c->out : NULL; /* only tested for presence by judge_general */
    for (int64_t i = 0; i < m; i++) judge_general(&w, k, idx[i], &e[i], v ? v[i] : NAN);
    worker_merge(rep, &w);
}

/* Absent inputs (nmo_case.absent): only NMO_IN_OPTIONAL ones, of an op that encloses
 * their recomputation. */
static nmo_status absent_valid(const nmo_case *c, nmo_err *err)
{
    const nmo_op *op = c->op;
    uint32_t opt = nmo_op_optional_mask(op), bad = c->absent & ~opt;
    if (!bad) return (op->stat_fast && op->stat_cert) ? NMO_OK
                     : nmo_err_set(err, NMO_ERR_USAGE, "op %s: optional inputs without stat_fast/stat_cert", op->name);
    int k = 0;
    while (!(bad & (1u << k))) k++;
    char list[256] = "";
    size_t off = 0;
    for (int i = 0; i < op->n_in; i++)
        if (opt & (1u << i))
            off += (size_t)snprintf(list + off, sizeof list - off, off ? ", %s" : "%s", op->in[i].name);
    if (k >= op->n_in)
        return nmo_err_set(err, NMO_ERR_USAGE, "absent input %d: op %s has %d inputs", k, op->name, op->n_in);
    return nmo_err_set(err, NMO_ERR_USAGE, "input %s of op %s must be given (optional inputs: %s)",
                       op->in[k].name, op->name, off ? list : "none");
}

/* The enclosures of the absent inputs, element by element, once per check: the fast
 * engine, the certified one where the fast one is unsure (the certified engine alone in
 * NMO_MODE_CERT). Both give the certified lattice values, so the units that read this
 * table see the same statistics in either mode, and "fast + escalation == certified"
 * holds as before. */
static nmo_status stats_build(nmo_fenc **tab, const nmo_case *c, nmo_mode mode, nmo_report *rep,
                              int64_t *geo_over, nmo_err *err)
{
    const nmo_op *op = c->op;
    int64_t n = -1;
    for (int k = 0; k < c->n_in; k++) {
        if (!(c->absent & (1u << k))) continue;
        int64_t m = nmo_tensor_numel(&c->in[k]);
        if (n >= 0 && m != n)
            return nmo_err_set(err, NMO_ERR_USAGE, "op %s: optional inputs of different sizes", op->name);
        n = m;
        tab[k] = malloc((size_t)(m > 0 ? m : 1) * sizeof(nmo_fenc));
        if (!tab[k]) return nmo_err_set(err, NMO_ERR_NOMEM, "out of memory for %lld statistics", (long long)m);
    }
    nmo_fctx fc;
    nmo_cctx cc;
    int fc_ready = 0, cc_ready = 0;
    nmo_status s = NMO_OK;
    if (mode != NMO_MODE_CERT) {
        if ((s = nmo_fctx_init(&fc, &c->plan, err)) != NMO_OK) return s;
        fc_ready = 1;
    }
    for (int64_t i = 0; i < n && s == NMO_OK; i++) {
        nmo_fenc st[NMO_MAX_TENSORS];
        int unc = mode == NMO_MODE_CERT;
        if (!unc) {
            op->stat_fast(&fc, c, i, st);
            for (int k = 0; k < c->n_in; k++)
                if ((c->absent & (1u << k)) && (st[k].flags & NMO_EF_UNC)) unc = 1;
        }
        if (unc) {
            if (!cc_ready) {
                if ((s = nmo_cctx_init(&cc, &c->plan, err)) != NMO_OK) break;
                cc_ready = 1;
            }
            op->stat_cert(&cc, c, i, st);
            rep->n_stat_cert++;
        }
        for (int k = 0; k < c->n_in; k++)
            if (c->absent & (1u << k)) tab[k][i] = st[k];
        rep->n_stat++;
    }
    if (fc_ready && fc.geo_over > *geo_over) *geo_over = fc.geo_over;
    if (cc_ready && cc.geo_over > *geo_over) *geo_over = cc.geo_over;
    if (fc_ready) nmo_fctx_clear(&fc);
    if (cc_ready) nmo_cctx_clear(&cc);
    return s;
}

/* A reduction longer than the plan's geometry holds (sum=tree/blocked: no evaluation of
 * that shape exists, so the plan does not describe this kernel at this shape). */
static nmo_status geo_error(const nmo_case *c, int64_t over, nmo_err *err)
{
    char g[48];
    nmo_plan_geo_text(&c->plan, g, sizeof g);
    return nmo_err_set(err, NMO_ERR_UNSUPPORTED,
                       "plan field 'sum=%s' holds at most %lld terms in one reduction; %s reduces "
                       "%lld terms at this shape (declare more partials, e.g. sum=blocked:%d:%d:any)",
                       g, (long long)nmo_plan_geo_capacity(&c->plan), c->op->name, (long long)over,
                       c->plan.geo_b, c->plan.geo_d);
}

nmo_status nmo_check(nmo_report *rep, const nmo_case *c, const nmo_tensor *cand,
                     const nmo_check_opts *opts, nmo_err *err)
{
    return nmo__check_units(rep, c, cand, opts, NULL, -1, err);
}

/* nmo_check over the units ulist[0..nlist) only (ulist NULL: every unit). The report's
 * per-element arrays still cover every element (the others stay as allocated: verdicts
 * 0, bounds unset); counts and the worst element are those of the listed units, and
 * rep->units is nlist. The GPU tier (hip/gpu_oracle.c) runs the units it could not
 * decide on the device through here: the fast engine and escalation of today. */
nmo_status nmo__check_units(nmo_report *rep, const nmo_case *c, const nmo_tensor *cand,
                            const nmo_check_opts *opts, const int64_t *ulist, int64_t nlist,
                            nmo_err *err)
{
    nmo_check_opts o = {0};
    if (opts) o = *opts;
    memset(rep, 0, sizeof *rep);
    const nmo_op *op = c->op;
    /* a plan changed after nmo_case_init (campaign groups, bundles) is checked here too */
    NMO_RETURN_IF_ERR(nmo_op_check_plan(op, &c->plan, err));
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
    int64_t geo_over = 0;
    /* absent inputs: the workers read a copy of the case that carries the table */
    nmo_case cs;
    nmo_fenc *tab[NMO_MAX_TENSORS] = {0};
    if (c->absent) {
        s = absent_valid(c, err);
        if (s == NMO_OK) s = stats_build(tab, c, o.mode, rep, &geo_over, err);
        if (s != NMO_OK) {
            for (int k = 0; k < NMO_MAX_TENSORS; k++) free(tab[k]);
            nmo_report_free(rep);
            return s;
        }
        cs = *c;
        for (int k = 0; k < NMO_MAX_TENSORS; k++) cs.stat[k] = tab[k];
        c = &cs;
    }
    int64_t units = ulist ? nlist : op->units(c);
    rep->units = units;
    /* a list (the GPU tier's rows sent back: few, each often escalated) may use one
     * thread per unit; a whole tensor one per 64 units */
    int nt = nmo_check_threads(ulist ? units * 64 : units);
    check_worker w[NMO_MAX_THREADS];
    memset(w, 0, sizeof w);
    for (int t = 0; t < nt; t++) {
        w[t].c = c;
        w[t].cand = cand;
        w[t].o = o;
        w[t].rep = rep;
        w[t].u0 = units * t / nt;
        w[t].u1 = units * (t + 1) / nt;
        w[t].ulist = ulist;
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
    for (int t = 0; t < nt; t++) {
        check_worker *x = &w[t];
        if (s == NMO_OK && x->status != NMO_OK) {
            s = x->status;
            if (err) *err = x->err;
        }
        if (x->geo_over > geo_over) geo_over = x->geo_over;
        worker_merge(rep, x);
    }
    for (int t = nt - 1; t >= 0; t--) worker_clear(&w[t]);
    for (int k = 0; k < NMO_MAX_TENSORS; k++) free(tab[k]);
    if (!cand) rep->verdict = NMO_INCONCLUSIVE;
    else if (rep->n_fail) rep->verdict = NMO_FAIL;
    else if (rep->n_inconc) rep->verdict = NMO_INCONCLUSIVE;
    else rep->verdict = NMO_PASS;
    rep->seconds = now_s() - t0;
    if (s == NMO_OK && geo_over) s = geo_error(c, geo_over, err);
    if (s != NMO_OK) nmo_report_free(rep);
    return s;
}
