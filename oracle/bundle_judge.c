/* numoracle: judging a candidate against a bundle's stored reachable sets, as the
 * checker would with the same R and flags (DESIGN §8). */
/* Messages and paths are truncated to their fixed buffers on purpose. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bundle_priv.h"

static inline int64_t width_at(const void *w, int bits, int64_t i)
{
    switch (bits) {
    case 8: return ((const uint8_t *)w)[i];
    case 16: return ((const uint16_t *)w)[i];
    case 32: return ((const uint32_t *)w)[i];
    default: return (int64_t)((const uint64_t *)w)[i];
    }
}

/* The judging state shared by the chunked fast path and the exact path. */
typedef struct {
    nmo_report *rep;
    const nmo_bundle *b;
    const nmo_tensor *cand;
    unsigned flags;
    nmo__ordfmt o;
    nmo_fmt of;
    /* the checker's "worst" order, kept per class: the farthest FAIL, else the widest
     * INCONCLUSIVE, else the widest PASS (first occurrence of each maximum) */
    nmo_elem_info wf, wi;
    int has_f, has_i;
    int64_t n_pass, width_max;
} judge_st;

/* Element idx of output k (flags f) on exact values, as nmo_judge decides it; *kmax and
 * *kmax_i track the widest PASS of this output. */
static void judge_exact(judge_st *s, int k, int64_t idx, uint32_t f, int64_t *kmax, int64_t *kmax_i)
{
    nmo_report *rep = s->rep;
    const nmo_bundle *b = s->b;
    const nmo__ordfmt *o = &s->o;
    uint64_t lbi = nmo__bits_at(&b->lo[k], idx), hbi = nmo__bits_at(&b->hi[k], idx), cbi = nmo__bits_at(&s->cand[k], idx);
    int64_t ol = nmo__ord_of(o, lbi), oh = nmo__ord_of(o, hbi), oc = nmo__ord_of(o, cbi);
    double v = nmo_fmt_decode(s->of, cbi), rl = nmo_fmt_decode(s->of, lbi), rh = nmo_fmt_decode(s->of, hbi);
    double dist = 0;
    int64_t width = 0;
    nmo_verdict vd = nmo__verdict_in_r(v, rl, rh, f);
    if (f & NMO_BF_MUST_NAN) {
        if (vd == NMO_FAIL) dist = INFINITY;
    } else {
        int finite = !(f & NMO_BF_NONFINITE);
        if (finite) width = oh - ol;
        if (vd == NMO_FAIL) {
            if (v != v) dist = INFINITY;
            else if (v > rh) dist = (double)(oc - oh);
            else dist = (double)(ol - oc);
        }
        if (finite) {
            if (s->flags & NMO_JUDGE_WIDTHS) rep->width_hist[width < NMO_WIDTH_HIST ? width : NMO_WIDTH_HIST]++;
            if (width > s->width_max) s->width_max = width;
        }
    }
    if (rep->verdicts[k]) rep->verdicts[k][idx] = (uint8_t)vd;
    nmo_elem_info info;
    info.k = k;
    info.index = idx;
    info.cand = v;
    info.rlo = (f & NMO_BF_MUST_NAN) ? NAN : rl;
    info.rhi = (f & NMO_BF_MUST_NAN) ? NAN : rh;
    info.enc_lo = info.enc_hi = NAN; /* not stored */
    info.dist_ulps = dist;
    info.width_ulps = width;
    info.scale = info.width_scale = NAN; /* not stored */
    info.verdict = vd;
    if (vd == NMO_PASS) {
        s->n_pass++;
        rep->n_scaled += (f & NMO_BF_SCALED) != 0;
        if (width > *kmax || *kmax_i < 0 || (width == *kmax && idx < *kmax_i)) *kmax = width, *kmax_i = idx;
    } else if (vd == NMO_FAIL) {
        rep->n_fail++;
        if (!s->has_f || dist > s->wf.dist_ulps) s->wf = info, s->has_f = 1;
    } else {
        rep->n_inconc++;
        if (f & NMO_BF_NONFINITE) {
            rep->n_nonfinite++;
            if (rl == -INFINITY && rh == INFINITY) rep->n_unbounded++;
            else rep->n_overflow++;
        } else if (f & NMO_BF_WIDE) {
            rep->n_wide++;
            rep->n_noscale += (f & NMO_BF_NOSCALE) != 0;
        } else {
            rep->n_nan++;
        }
        if (!s->has_i || width > s->wi.width_ulps) s->wi = info, s->has_i = 1;
    }
}

/* The report's worst element and verdict; (wp_k, wp_i) is the widest PASS, if any. */
static void judge_finish(judge_st *s, int wp_k, int64_t wp_i, int64_t wp_w)
{
    nmo_report *rep = s->rep;
    rep->n_pass = s->n_pass;
    rep->width_max = s->width_max;
    if (s->has_f) rep->worst = s->wf;
    else if (s->has_i) rep->worst = s->wi;
    else if (wp_i >= 0) {
        nmo_elem_info *w = &rep->worst;
        uint64_t lbi = nmo__bits_at(&s->b->lo[wp_k], wp_i), hbi = nmo__bits_at(&s->b->hi[wp_k], wp_i),
                 cbi = nmo__bits_at(&s->cand[wp_k], wp_i);
        w->k = wp_k;
        w->index = wp_i;
        w->cand = nmo_fmt_decode(s->of, cbi);
        w->rlo = nmo_fmt_decode(s->of, lbi);
        w->rhi = nmo_fmt_decode(s->of, hbi);
        w->enc_lo = w->enc_hi = NAN;
        w->dist_ulps = 0;
        w->width_ulps = wp_w;
        w->verdict = NMO_PASS;
    }
    rep->has_worst = s->has_f || s->has_i || wp_i >= 0;
    rep->verdict = rep->n_fail ? NMO_FAIL : rep->n_inconc ? NMO_INCONCLUSIVE : NMO_PASS;
}

nmo_status nmo_bundle_judge(nmo_report *rep, const nmo_bundle *b, const nmo_tensor *cand, unsigned flags,
                            nmo_err *err)
{
    int keep_verdicts = (flags & NMO_JUDGE_VERDICTS) != 0;
    memset(rep, 0, sizeof *rep);
    const nmo_case *c = &b->c;
    if (!b->have_bounds)
        return nmo_err_set(err, NMO_ERR_UNSUPPORTED, "%s: the bundle has no certified bounds", b->graph_path);
    nmo_fmt of = c->plan.out;
    judge_st js;
    memset(&js, 0, sizeof js);
    js.rep = rep, js.b = b, js.cand = cand, js.flags = flags, js.of = of;
    nmo__ordfmt_init(&js.o, of);
    const nmo__ordfmt o = js.o;
    int bytes = (int)nmo_fmt_bytes(of);
    rep->mode = NMO_MODE_ESCALATE;
    rep->max_ulps = nmo_plan_max_ulps(&c->plan);
    rep->n_out = c->n_out;
    enum { CH = 2048 };
    uint8_t ok[CH];
    uint64_t wv[CH]; /* widths in the format's storage type */
    int64_t n_pass = 0, wp_w = 0, wp_i = -1; /* n_pass: the fast path's; the widest PASS */
    int wp_k = 0;
    for (int k = 0; k < c->n_out; k++) {
        int64_t n = nmo_tensor_numel(&c->out[k]);
        if (nmo_tensor_numel(&cand[k]) != n || cand[k].dtype != of || !nmo_tensor_is_packed(&cand[k]))
            return nmo_err_set(err, NMO_ERR_SIZE, "candidate output '%s': expected %lld packed elements of %s",
                               c->op->out[k].name, (long long)n, nmo_fmt_name(of));
        if (keep_verdicts && !(rep->verdicts[k] = calloc((size_t)n, 1))) {
            nmo_report_free(rep);
            return nmo_err_set(err, NMO_ERR_NOMEM, "out of memory");
        }
        rep->n += n;
        const unsigned char *pl = b->lo[k].data, *ph = b->hi[k].data, *pc = cand[k].data;
        int64_t kmax = -1, kmax_i = -1;
        for (int64_t b0 = 0; b0 < n; b0 += CH) {
            int64_t m = n - b0 < CH ? n - b0 : CH;
            const uint8_t *fl = b->flags[k] + b0;
            int64_t np = 0, cmax = -1;
            if (o.tf32) {
                memset(ok, 0, (size_t)m); /* tf32: everything through the exact path */
            } else {
                size_t eb = (size_t)bytes;
                np = nmo__judge_pass(o.bits, pl + b0 * eb, ph + b0 * eb, pc + b0 * eb, fl, m, o.nan_above, o.fnuz, ok,
                                     wv, &cmax);
                /* the common case (an informative R holding the value) is decided; its
                 * widths feed the histogram, and the first widest set may be the worst */
                if (flags & NMO_JUDGE_WIDTHS)
                    for (int64_t i = 0; i < m; i++) {
                        if (!ok[i]) continue;
                        int64_t w = width_at(wv, o.bits, i);
                        rep->width_hist[w < NMO_WIDTH_HIST ? w : NMO_WIDTH_HIST]++;
                    }
                if (cmax > kmax || (np && kmax_i < 0))
                    for (int64_t i = 0; i < m; i++) {
                        int64_t w = width_at(wv, o.bits, i);
                        if (ok[i] && w == cmax) {
                            kmax = w, kmax_i = b0 + i;
                            break;
                        }
                    }
            }
            n_pass += np;
            /* verdicts start as NMO_PASS (0, calloc); the exact path below sets the rest */
            if (np == m) continue;
            /* everything else on exact values, as nmo_judge does */
            for (int64_t i = 0; i < m; i++)
                if (!ok[i]) judge_exact(&js, k, b0 + i, fl[i], &kmax, &kmax_i);
        }
        if (kmax > js.width_max) js.width_max = kmax;
        if (kmax_i >= 0 && (wp_i < 0 || kmax > wp_w)) wp_w = kmax, wp_i = kmax_i, wp_k = k;
    }
    js.n_pass += n_pass;
    judge_finish(&js, wp_k, wp_i, wp_w);
    return NMO_OK;
}
