/* numoracle: reports — human text and JSON. Every report carries the plan. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nmo_config.h"
#include "nmo_internal.h"
#include "numoracle/check.h"

static void fmt_index(char *buf, size_t n, const nmo_tensor *t, int64_t idx)
{
    int64_t co[NMO_MAX_DIMS];
    int64_t r = idx;
    for (int d = t->ndims - 1; d >= 0; d--) {
        co[d] = r % t->dims[d];
        r /= t->dims[d];
    }
    size_t off = 0;
    off += (size_t)snprintf(buf + off, n - off, "[");
    for (int d = 0; d < t->ndims && off < n; d++)
        off += (size_t)snprintf(buf + off, n - off, d ? ", %lld" : "%lld", (long long)co[d]);
    if (off < n) snprintf(buf + off, n - off, "]");
}

/* Shortest %g form that reads back as v (parameters are shown as given). */
static void fmt_param(char *buf, size_t n, double v)
{
    for (int p = 6; p <= 17; p++) {
        snprintf(buf, n, "%.*g", p, v);
        if (strtod(buf, NULL) == v) return;
    }
}

/* What the report says about input k's origin (JSON value; text adds a gloss). */
static const char *in_source(const nmo_case *c, int k)
{
    if (c->absent & (1u << k)) return "recomputed";
    return c->in_src[k] ? c->in_src[k] : "given";
}

void nmo_report_print_case(FILE *f, const nmo_case *c)
{
    const nmo_op *op = c->op;
    fprintf(f, "params:");
    for (int i = 0; i < op->n_param; i++) {
        char v[40];
        fmt_param(v, sizeof v, c->param[i]);
        fprintf(f, " %s=%s", op->param[i].name, v);
    }
    fprintf(f, "%s\n", op->n_param ? "" : " none");
    for (int k = 0; k < c->n_in; k++) {
        const char *src = in_source(c, k);
        const char *gloss = "";
        if ((c->absent & (1u << k)) && op->absent_reads_none) src = "absent";
        if ((c->absent & (1u << k)) && op->absent_reads_none)
            gloss = " (not given: a kernel that never reads it; see `numoracle ops`)";
        else if (c->absent & (1u << k))
            gloss = " by the reference (not given: every plan-following recomputation enclosed)";
        else if (strcmp(src, "derived") == 0)
            gloss = " from the other inputs (as a correct forward stores it)";
        else if (strcmp(src, "unused") == 0)
            gloss = " (not read by the reference)";
        fprintf(f, "input %s: %s%s\n", op->in[k].name, src, gloss);
    }
}

void nmo_report_print(FILE *f, const nmo_report *rep, const nmo_case *c, const char *name)
{
    char plan[512];
    nmo_plan_to_string(&c->plan, plan, sizeof plan);
    char shape[128] = "";
    size_t off = 0;
    for (int i = 0; i < c->nshape; i++)
        off += (size_t)snprintf(shape + off, sizeof shape - off, i ? "x%lld" : "%lld",
                                (long long)c->shape[i]);
    fprintf(f, "numoracle check: op=%s shape=%s candidate=%s\n", c->op->name, shape,
            name ? name : "-");
    if (c->plan.preset[0])
        fprintf(f, "plan: %s (preset %s; max_ulps in effect: %ld)\n", plan, c->plan.preset, rep->max_ulps);
    else
        fprintf(f, "plan: %s (max_ulps in effect: %ld)\n", plan, rep->max_ulps);
    if (c->plan.sum == NMO_SUM_GEOM) { /* the reduction geometry in force (sum_geom.c) */
        const nmo_plan *p = &c->plan;
        int64_t cap = nmo_plan_geo_capacity(p);
        char pb[160], rb[64];
        if (p->geo_t > 0) snprintf(rb, sizeof rb, "ceil(n/%d)+%d", p->geo_t, p->geo_b);
        else snprintf(rb, sizeof rb, "%d", p->geo_b);
        if (p->geo_p) snprintf(pb, sizeof pb, "the chunk partials (at most %lld)", (long long)p->geo_p);
        else if (p->geo_t > 0) snprintf(pb, sizeof pb, "the partials of chunks of %s * %.0f consecutive terms", rb, ldexp(1.0, p->geo_d));
        else snprintf(pb, sizeof pb, "the partials of chunks of %.0f consecutive terms", ldexp((double)p->geo_b, p->geo_d));
        fprintf(f, "reduction geometry: runs of <= %s terms (any order), a tree of depth <= %d over them, "
                "%s added in any order; ", rb, p->geo_d, pb);
        if (cap < INT64_MAX) fprintf(f, "at most %lld terms per reduction\n", (long long)cap);
        else fprintf(f, "any number of terms\n");
    }
    nmo_report_print_case(f, c);
    fprintf(f, "verdict: %s\n", nmo_verdict_name(rep->verdict));
    fprintf(f, "  elements: %lld  pass %lld  fail %lld  inconclusive %lld\n", (long long)rep->n,
            (long long)rep->n_pass, (long long)rep->n_fail, (long long)rep->n_inconc);
    if (rep->n_scaled)
        fprintf(f, "  decided by the error scale: %lld passes hold more than max_ulps values, "
                   "within max_ulps ulps of the output at the element's error scale\n",
                (long long)rep->n_scaled);
    if (rep->n_inconc)
        fprintf(f, "  inconclusive: wider than max_ulps %lld (%lld without an error scale), "
                   "overflow %lld, unbounded %lld, NaN possible %lld\n",
                (long long)rep->n_wide, (long long)rep->n_noscale, (long long)rep->n_overflow,
                (long long)rep->n_unbounded, (long long)rep->n_nan);
    fprintf(f, "  engine: %s; escalated %lld elements (%lld of %lld units), fast engine "
               "uncertain on %lld",
            rep->mode == NMO_MODE_CERT ? "certified only" : "fast + escalation",
            (long long)rep->n_escalated, (long long)rep->units_escalated, (long long)rep->units,
            (long long)rep->n_unc);
    if (rep->n_term_esc) fprintf(f, "; %lld reduction terms recomputed certified", (long long)rep->n_term_esc);
    if (rep->n_sum_cert) fprintf(f, "; %lld sums finished certified", (long long)rep->n_sum_cert);
    if (rep->n_stat)
        fprintf(f, "; statistics recomputed for %lld rows (%lld by the certified engine)",
                (long long)rep->n_stat, (long long)rep->n_stat_cert);
    fputc('\n', f);
    fprintf(f, "  reachable-set width (output ulps): median %g  p99 %g  max %lld\n",
            nmo_report_width_quantile(rep, 0.5), nmo_report_width_quantile(rep, 0.99),
            (long long)rep->width_max);
    if (rep->has_worst) {
        const nmo_elem_info *w = &rep->worst;
        char ix[160];
        fmt_index(ix, sizeof ix, &c->out[w->k], w->index);
        fprintf(f, "  worst element: %s%s (index %lld): candidate %.9g, R = [%.9g, %.9g]",
                c->op->out[w->k].name, ix, (long long)w->index, w->cand, w->rlo, w->rhi);
        if (isfinite(w->rlo) && isfinite(w->rhi)) {
            fprintf(f, " (%lld value%s", (long long)w->width_ulps + 1, w->width_ulps ? "s" : "");
            if (w->width_scale == w->width_scale)
                fprintf(f, "; %.3g ulps at the error scale %.3g", w->width_scale, w->scale);
            else if (w->width_ulps)
                fprintf(f, "; no error scale");
            fputc(')', f);
        }
        if (w->verdict == NMO_FAIL) {
            if (isinf(w->dist_ulps)) fprintf(f, ", outside (NaN or not representable)");
            else fprintf(f, ", outside by %.0f ulp%s", w->dist_ulps, w->dist_ulps == 1 ? "" : "s");
        }
        fprintf(f, ", %s\n", nmo_verdict_name(w->verdict));
    }
    /* what the user can do about each kind of INCONCLUSIVE element */
    if (rep->n_wide > rep->n_noscale)
        fprintf(f, "  hint: %lld reachable sets are wider than max_ulps ulps of the output at "
                   "their error scale: the plan allows more than that (a long any-order "
                   "reduction, a loose fn accuracy, intermediates stored narrow); state what "
                   "the kernel does (sum=, fn=, inter=, a preset), check a smaller shape, or "
                   "accept wider sets with --max-ulps N\n",
                (long long)(rep->n_wide - rep->n_noscale));
    if (rep->n_noscale)
        fprintf(f, "  hint: %lld elements cross a domain edge (a divisor, or the argument of "
                   "sqrt, rsqrt or log, known only to within a factor of 2): their error scale "
                   "is unbounded, so only the count of values (--max-ulps) can decide them\n",
                (long long)rep->n_noscale);
    if (rep->n_overflow)
        fprintf(f, "  hint: %lld reachable sets reach past the largest finite output value: "
                   "some implementation overflows; scale the inputs down or store a wider "
                   "format\n", (long long)rep->n_overflow);
    if (rep->n_unbounded)
        fprintf(f, "  hint: %lld enclosures are unbounded (a division by an interval holding 0, "
                   "an overflow inside the computation): the inputs sit at a singularity of "
                   "the operator under this plan\n", (long long)rep->n_unbounded);
    if (rep->n_nan)
        fprintf(f, "  hint: %lld candidates are NaN where some implementations give NaN and "
                   "others do not\n", (long long)rep->n_nan);
    fprintf(f, "  time: %.3f s\n", rep->seconds);
}

static cJSON *num_or_null(double v)
{
    return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateString(isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
}

char *nmo_report_json(const nmo_report *rep, const nmo_case *c, const char *name,
                      const char *family, uint64_t seed)
{
    return nmo_report_json_prov(rep, c, name, family, seed, NULL);
}

char *nmo_report_json_prov(const nmo_report *rep, const nmo_case *c, const char *name,
                           const char *family, uint64_t seed, const char *provenance_json)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "numoracle_version", NMO_VERSION);
    cJSON_AddStringToObject(o, "op", c->op->name);
    cJSON *sh = cJSON_AddArrayToObject(o, "shape");
    for (int i = 0; i < c->nshape; i++) cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)c->shape[i]));
    if (family) cJSON_AddStringToObject(o, "family", family);
    cJSON_AddNumberToObject(o, "seed", (double)seed);
    cJSON_AddStringToObject(o, "candidate", name ? name : "");
    cJSON_AddItemToObject(o, "plan", nmo_plan_to_json(&c->plan));
    cJSON *pa = cJSON_AddObjectToObject(o, "params");
    for (int i = 0; i < c->op->n_param; i++) cJSON_AddNumberToObject(pa, c->op->param[i].name, c->param[i]);
    cJSON *io = cJSON_AddObjectToObject(o, "inputs");
    for (int k = 0; k < c->n_in; k++) cJSON_AddStringToObject(io, c->op->in[k].name, in_source(c, k));
    cJSON_AddStringToObject(o, "verdict", nmo_verdict_name(rep->verdict));
    cJSON_AddNumberToObject(o, "max_ulps", (double)rep->max_ulps);
    cJSON *cn = cJSON_AddObjectToObject(o, "counts");
    cJSON_AddNumberToObject(cn, "elements", (double)rep->n);
    cJSON_AddNumberToObject(cn, "pass", (double)rep->n_pass);
    cJSON_AddNumberToObject(cn, "fail", (double)rep->n_fail);
    cJSON_AddNumberToObject(cn, "inconclusive", (double)rep->n_inconc);
    cJSON_AddNumberToObject(cn, "inconclusive_not_finite", (double)rep->n_nonfinite);
    cJSON_AddNumberToObject(cn, "inconclusive_wide", (double)rep->n_wide);
    cJSON_AddNumberToObject(cn, "pass_by_scale", (double)rep->n_scaled);
    cJSON *ir = cJSON_AddObjectToObject(o, "inconclusive_reasons");
    cJSON_AddNumberToObject(ir, "wide", (double)(rep->n_wide - rep->n_noscale));
    cJSON_AddNumberToObject(ir, "domain_edge", (double)rep->n_noscale);
    cJSON_AddNumberToObject(ir, "overflow", (double)rep->n_overflow);
    cJSON_AddNumberToObject(ir, "unbounded", (double)rep->n_unbounded);
    cJSON_AddNumberToObject(ir, "nan_possible", (double)rep->n_nan);
    cJSON *en = cJSON_AddObjectToObject(o, "engine");
    cJSON_AddStringToObject(en, "mode", rep->mode == NMO_MODE_CERT ? "certified" : "fast+escalation");
    cJSON_AddNumberToObject(en, "escalated_elements", (double)rep->n_escalated);
    cJSON_AddNumberToObject(en, "escalated_units", (double)rep->units_escalated);
    cJSON_AddNumberToObject(en, "units", (double)rep->units);
    cJSON_AddNumberToObject(en, "uncertain_elements", (double)rep->n_unc);
    cJSON_AddNumberToObject(en, "recomputed_terms", (double)rep->n_term_esc);
    cJSON_AddNumberToObject(en, "certified_sums", (double)rep->n_sum_cert);
    cJSON_AddNumberToObject(en, "recomputed_statistics", (double)rep->n_stat);
    cJSON_AddNumberToObject(en, "recomputed_statistics_certified", (double)rep->n_stat_cert);
    cJSON_AddNumberToObject(en, "escalated_fraction", rep->n ? (double)rep->n_escalated / (double)rep->n : 0.0);
    cJSON *wd = cJSON_AddObjectToObject(o, "width_ulps");
    cJSON_AddItemToObject(wd, "median", num_or_null(nmo_report_width_quantile(rep, 0.5)));
    cJSON_AddItemToObject(wd, "p99", num_or_null(nmo_report_width_quantile(rep, 0.99)));
    cJSON_AddNumberToObject(wd, "max", (double)rep->width_max);
    if (rep->has_worst) {
        const nmo_elem_info *w = &rep->worst;
        cJSON *wo = cJSON_AddObjectToObject(o, "worst");
        cJSON_AddStringToObject(wo, "tensor", c->op->out[w->k].name);
        cJSON_AddNumberToObject(wo, "index", (double)w->index);
        cJSON_AddItemToObject(wo, "candidate", num_or_null(w->cand));
        cJSON_AddItemToObject(wo, "r_lo", num_or_null(w->rlo));
        cJSON_AddItemToObject(wo, "r_hi", num_or_null(w->rhi));
        cJSON_AddItemToObject(wo, "enclosure_lo", num_or_null(w->enc_lo));
        cJSON_AddItemToObject(wo, "enclosure_hi", num_or_null(w->enc_hi));
        cJSON_AddItemToObject(wo, "outside_ulps", num_or_null(w->dist_ulps));
        cJSON_AddNumberToObject(wo, "width_ulps", (double)w->width_ulps);
        cJSON_AddItemToObject(wo, "scale", num_or_null(w->scale));
        cJSON_AddItemToObject(wo, "width_scale_ulps", num_or_null(w->width_scale));
        cJSON_AddStringToObject(wo, "verdict", nmo_verdict_name(w->verdict));
    }
    cJSON_AddNumberToObject(o, "seconds", rep->seconds);
    if (provenance_json) {
        cJSON *pv = cJSON_Parse(provenance_json);
        cJSON_AddItemToObject(o, "provenance", pv ? pv : cJSON_CreateString(provenance_json));
    }
    char *s = nmo__json_print(o, 1);
    cJSON_Delete(o);
    return s;
}
