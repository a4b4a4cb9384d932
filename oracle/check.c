/* numoracle: the checker. The fast engine evaluates every unit; units holding an element
 * it could not certify are recomputed by the certified engine (escalation); then each
 * element's enclosure is mapped through the store rounding into the reachable set R and
 * the candidate judged against it (DESIGN §6). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
    /* FAIL beats everything, larger distance first; then widest set */
    if (a->verdict == NMO_FAIL || b->verdict == NMO_FAIL) {
        if (a->verdict != NMO_FAIL) return 0;
        if (b->verdict != NMO_FAIL) return 1;
        return a->dist_ulps > b->dist_ulps;
    }
    if (a->verdict == NMO_INCONCLUSIVE && b->verdict != NMO_INCONCLUSIVE) return 1;
    if (b->verdict == NMO_INCONCLUSIVE && a->verdict != NMO_INCONCLUSIVE) return 0;
    return a->width_ulps > b->width_ulps;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
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

    nmo_fctx fc;
    nmo_cctx cc;
    int cc_ready = 0;
    nmo_status s = nmo_fctx_init(&fc, &c->plan, err);
    if (s != NMO_OK) return s;
    if (o.mode == NMO_MODE_CERT) {
        s = nmo_cctx_init(&cc, &c->plan, err);
        if (s != NMO_OK) { nmo_fctx_clear(&fc); return s; }
        cc_ready = 1;
    }
    if (op->prepare_fast && o.mode != NMO_MODE_CERT) {
        s = op->prepare_fast(&fc, c, err);
        if (s != NMO_OK) { nmo_fctx_clear(&fc); return s; }
    }

    int64_t units = op->units(c);
    rep->units = units;
    nmo_fenc *buf[NMO_MAX_TENSORS] = {0};
    int64_t cap[NMO_MAX_TENSORS] = {0};
    double *cbuf = NULL;
    int64_t ccap = 0;
    nmo_elem_info info, worst;
    int has_worst = 0;
    memset(&worst, 0, sizeof worst);

    for (int64_t u = 0; u < units; u++) {
        int64_t beg[NMO_MAX_TENSORS], cnt[NMO_MAX_TENSORS], str[NMO_MAX_TENSORS];
        for (int k = 0; k < c->n_out; k++) {
            op->unit_span(c, u, k, &beg[k], &cnt[k], &str[k]);
            if (cnt[k] > cap[k]) {
                free(buf[k]);
                buf[k] = malloc((size_t)cnt[k] * sizeof(nmo_fenc));
                cap[k] = buf[k] ? cnt[k] : 0;
                if (!buf[k]) { s = nmo_err_set(err, NMO_ERR_NOMEM, "out of memory"); goto done; }
            }
            if (cnt[k] > ccap) {
                free(cbuf);
                cbuf = malloc((size_t)cnt[k] * sizeof(double));
                ccap = cbuf ? cnt[k] : 0;
                if (!cbuf) { s = nmo_err_set(err, NMO_ERR_NOMEM, "out of memory"); goto done; }
            }
        }
        if (o.mode == NMO_MODE_CERT) {
            op->eval_cert(&cc, c, u, buf);
        } else {
            op->eval_fast(&fc, c, u, buf);
            int64_t unc = 0, tot = 0;
            for (int k = 0; k < c->n_out; k++) {
                tot += cnt[k];
                for (int64_t i = 0; i < cnt[k]; i++) unc += (buf[k][i].flags & NMO_EF_UNC) != 0;
            }
            if (unc) {
                if (!cc_ready) {
                    s = nmo_cctx_init(&cc, &c->plan, err);
                    if (s != NMO_OK) goto done;
                    cc_ready = 1;
                }
                op->eval_cert(&cc, c, u, buf);
                rep->n_unc += unc;
                rep->n_escalated += tot;
                rep->units_escalated++;
            }
        }
        for (int k = 0; k < c->n_out; k++) {
            if (cand) nmo_tensor_load_f64(cbuf, &cand[k], beg[k], cnt[k], str[k]);
            for (int64_t i = 0; i < cnt[k]; i++) {
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
                    int64_t w = info.width_ulps;
                    rep->width_hist[w < NMO_WIDTH_HIST ? w : NMO_WIDTH_HIST]++;
                    if (w > rep->width_max) rep->width_max = w;
                }
                if (!cand) continue;
                if (o.keep_verdicts) rep->verdicts[k][idx] = (uint8_t)vd;
                if (vd == NMO_PASS) rep->n_pass++;
                else if (vd == NMO_FAIL) rep->n_fail++;
                else {
                    rep->n_inconc++;
                    if (bf & NMO_BF_NONFINITE) rep->n_nonfinite++;
                    else if (bf & NMO_BF_WIDE) rep->n_wide++;
                }
                /* the worst element: a PASS only competes by width */
                if (has_worst && vd == NMO_PASS &&
                    (worst.verdict != NMO_PASS || info.width_ulps <= worst.width_ulps))
                    continue;
                info.k = k;
                info.index = idx;
                if (!has_worst || worse(&info, &worst)) {
                    worst = info;
                    has_worst = 1;
                }
            }
        }
    }
    rep->has_worst = has_worst;
    rep->worst = worst;
    if (!cand) rep->verdict = NMO_INCONCLUSIVE;
    else if (rep->n_fail) rep->verdict = NMO_FAIL;
    else if (rep->n_inconc) rep->verdict = NMO_INCONCLUSIVE;
    else rep->verdict = NMO_PASS;
    s = NMO_OK;
done:
    for (int k = 0; k < NMO_MAX_TENSORS; k++) free(buf[k]);
    free(cbuf);
    nmo_fctx_clear(&fc);
    if (cc_ready) nmo_cctx_clear(&cc);
    rep->seconds = now_s() - t0;
    if (s != NMO_OK) nmo_report_free(rep);
    return s;
}
