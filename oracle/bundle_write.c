/* numoracle: writing certified golden bundles: the graph, inputs, expected outputs,
 * reachable sets and flags, and the RFC 0011 metadata with a static tolerance. */
/* Messages and paths are truncated to their fixed buffers on purpose. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <gmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nmo_config.h"
#include "bundle_priv.h"
#include "engine/enc_cert.h"

/* R's ends in the output format: unbounded ends +-inf (saturated to +-max in formats
 * without inf; the NONFINITE flag says so), NaN as the canonical NaN (nmo_internal.h:
 * bundles and `numoracle bounds` store R this one way). */
uint64_t nmo__bound_bits(nmo_fmt f, double v)
{
    const nmo_fmt_info *fi = nmo_fmt_get(f);
    return nmo_fmt_encode(f, v, NMO_RNE, 0, fi->has_inf ? NMO_OVF_IEEE : NMO_OVF_SAT);
}

/* Lay logical values out in graph tensor gt's storage order. */
static nmo_status store_tensor(const char *path, const nmo_gtensor *gt, const nmo_tensor *packed, nmo_err *err)
{
    nmo_tensor st;
    memset(&st, 0, sizeof st);
    st.dtype = packed->dtype;
    st.ndims = gt->ndims;
    memcpy(st.dims, gt->dims, sizeof st.dims);
    memcpy(st.strides, gt->strides, sizeof st.strides);
    size_t bytes = (size_t)nmo__gspan(gt) * nmo_fmt_bytes(st.dtype);
    if (nmo__is_rowmajor(gt)) return nmo__write_file(path, packed->data, bytes, err);
    NMO_RETURN_IF_ERR(nmo_tensor_alloc(&st, err));
    int64_t n = nmo__gnumel(gt);
    for (int64_t i = 0; i < n; i++) nmo_tensor_set_bits(&st, i, nmo_tensor_get_bits(packed, i));
    nmo_status s = nmo__write_file(path, st.data, bytes, err);
    nmo_tensor_free(&st);
    return s;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* What the write accumulates over the outputs: expected values and R's ends in the
 * output format, |e| and the envelope deviation per element, and the counts. */
typedef struct {
    nmo_tensor ex[NMO_MAX_TENSORS], tl[NMO_MAX_TENSORS], th[NMO_MAX_TENSORS];
    double *absv, *devv;
    int64_t ntot, n_inf, n_wide, n_nanok, payload;
} wstate;

static void wstate_free(wstate *w)
{
    free(w->absv);
    free(w->devv);
    for (int k = 0; k < NMO_MAX_TENSORS; k++) {
        nmo_tensor_free(&w->ex[k]);
        nmo_tensor_free(&w->tl[k]);
        nmo_tensor_free(&w->th[k]);
    }
}

/* Refuse a bundle with wide sets when the caller asked for an informative one. */
static nmo_status check_informative(const nmo_case *c, const nmo_report *rep, int64_t ntot, nmo_err *err)
{
    if (rep->width_max <= 0) return NMO_OK;
    int64_t wide = 0;
    for (int k = 0; k < c->n_out; k++) {
        int64_t n = nmo_tensor_numel(&c->out[k]);
        for (int64_t i = 0; i < n; i++) wide += (rep->bflags[k][i] & NMO_BF_WIDE) != 0;
    }
    if (!wide) return NMO_OK;
    return nmo_err_set(err, NMO_ERR_DATA,
                       "%lld of %lld output elements have reachable sets wider than max_ulps (%ld): INCONCLUSIVE for "
                       "every candidate; choose another seed or family",
                       (long long)wide, (long long)ntot, rep->max_ulps);
}

/* The expected outputs and R's ends from the certified report; NaN/Inf goldens refused. */
static nmo_status fill_outputs(wstate *w, const nmo_case *c, const nmo_graph *g, const nmo_report *rep, nmo_err *err)
{
    const nmo_op *op = c->op;
    int64_t q = 0;
    for (int k = 0; k < c->n_out; k++) {
        nmo_tensor *ts[3] = {&w->ex[k], &w->tl[k], &w->th[k]};
        for (int t = 0; t < 3; t++) {
            *ts[t] = c->out[k];
            ts[t]->data = NULL;
            ts[t]->own = 0;
            NMO_RETURN_IF_ERR(nmo_tensor_alloc(ts[t], err));
        }
        const nmo_gtensor *gt = &g->t[g->out_t[k]];
        int64_t n = nmo_tensor_numel(&c->out[k]);
        for (int64_t i = 0; i < n; i++) {
            uint8_t f = rep->bflags[k][i];
            double rl = rep->rlo[k][i], rh = rep->rhi[k][i];
            const nmo_fenc *e = &rep->enc[k][i];
            if ((f & (NMO_BF_NONFINITE | NMO_BF_MUST_NAN)) || !isfinite(e->lo) || !isfinite(e->hi)) {
                char ix[160];
                nmo__fmt_index(ix, sizeof ix, gt->ndims, gt->dims, i);
                return nmo_err_set(err, NMO_ERR_DATA,
                                   "golden output %s (uid %lld) at index %s: the certified enclosure [%g, %g] is not finite; "
                                   "NaN/Inf goldens are rejected (choose another family or seed)",
                                   op->out[k].name, (long long)gt->uid, ix, e->lo, e->hi);
            }
            /* expected value: the enclosure's midpoint rounded to out, kept inside R */
            double mid = e->lo + 0.5 * (e->hi - e->lo);
            double v = nmo_fmt_round(c->plan.out, mid, NMO_RNE, c->plan.ftz);
            if (v < rl) v = rl;
            if (v > rh) v = rh;
            nmo_tensor_set_bits(&w->ex[k], i, nmo__bound_bits(c->plan.out, v));
            nmo_tensor_set_bits(&w->tl[k], i, nmo__bound_bits(c->plan.out, rl));
            nmo_tensor_set_bits(&w->th[k], i, nmo__bound_bits(c->plan.out, rh));
            w->absv[q] = fabs(v);
            w->devv[q] = fmax(v - rl, rh - v);
            q++;
            w->n_wide += (f & NMO_BF_WIDE) != 0;
            w->n_nanok += (f & NMO_BF_NAN_OK) != 0;
            w->n_inf += !(f & NMO_BF_WIDE);
        }
    }
    return NMO_OK;
}

/* The graph file (unless o->no_graph_file) and the inputs' tensor files. */
static nmo_status write_graph_inputs(wstate *w, const char *dir, const nmo_case *c, const nmo_graph *g,
                                     const nmo_bundle_wopts *o, nmo_err *err)
{
    char path[NMO_BPATH + 400], leaf[400];
    cJSON *gj = nmo_graph_to_json(g);
    char *text = nmo__json_print(gj, 1);
    cJSON_Delete(gj);
    if (!text) return nmo_err_set(err, NMO_ERR_NOMEM, "out of memory");
    snprintf(leaf, sizeof leaf, "%s.json", o->name);
    nmo__join(path, sizeof path, dir, leaf);
    nmo_status s = o->no_graph_file ? NMO_OK : nmo__write_file(path, text, strlen(text), err);
    free(text);
    for (int k = 0; k < c->n_in && s == NMO_OK; k++) {
        const nmo_gtensor *gt = &g->t[g->in_t[k]];
        nmo__file_path(path, sizeof path, dir, o->name, gt->uid, "");
        s = store_tensor(path, gt, &c->in[k], err);
        w->payload += nmo__gspan(gt) * (int64_t)nmo_dt_bytes(gt->dt);
    }
    return s;
}

/* Each output's expected, lo, hi and flags files; *outs gets their metadata entries. */
static nmo_status write_outputs(wstate *w, cJSON **outs, const char *dir, const nmo_case *c, const nmo_graph *g,
                                const nmo_report *rep, const nmo_bundle_wopts *o, nmo_err *err)
{
    char path[NMO_BPATH + 400];
    nmo_status s = NMO_OK;
    *outs = cJSON_CreateArray();
    for (int k = 0; k < c->n_out; k++) {
        const nmo_gtensor *gt = &g->t[g->out_t[k]];
        static const char *const sfx[3] = {"", ".lo", ".hi"};
        nmo_tensor *ts[3] = {&w->ex[k], &w->tl[k], &w->th[k]};
        cJSON *oo = cJSON_CreateObject();
        cJSON_AddNumberToObject(oo, "uid", (double)gt->uid);
        cJSON_AddStringToObject(oo, "name", gt->name);
        for (int t = 0; t < 3; t++) {
            nmo__file_path(path, sizeof path, dir, o->name, gt->uid, sfx[t]);
            if (s == NMO_OK) s = store_tensor(path, gt, ts[t], err);
            w->payload += nmo__gspan(gt) * (int64_t)nmo_dt_bytes(gt->dt);
        }
        /* flags, one byte per element in the output's storage order */
        int64_t span = nmo__gspan(gt), n = nmo__gnumel(gt);
        uint8_t *fb = calloc((size_t)span, 1);
        if (!fb && s == NMO_OK) s = nmo_err_set(err, NMO_ERR_NOMEM, "out of memory");
        if (fb) {
            for (int64_t i = 0; i < n; i++) fb[nmo__goffset(gt, i)] = rep->bflags[k][i];
            nmo__file_path(path, sizeof path, dir, o->name, gt->uid, ".flags");
            if (s == NMO_OK) s = nmo__write_file(path, fb, (size_t)span, err);
            free(fb);
        }
        w->payload += span;
        char lf[400];
        snprintf(lf, sizeof lf, "%s.tensor%lld.lo.bin", o->name, (long long)gt->uid);
        cJSON_AddStringToObject(oo, "lo", lf);
        snprintf(lf, sizeof lf, "%s.tensor%lld.hi.bin", o->name, (long long)gt->uid);
        cJSON_AddStringToObject(oo, "hi", lf);
        snprintf(lf, sizeof lf, "%s.tensor%lld.flags.bin", o->name, (long long)gt->uid);
        cJSON_AddStringToObject(oo, "flags", lf);
        cJSON_AddNumberToObject(oo, "elements", (double)n);
        cJSON_AddItemToArray(*outs, oo);
    }
    if (s != NMO_OK) {
        cJSON_Delete(*outs);
        *outs = NULL;
    }
    return s;
}

/* The metadata: RFC fields, then what a later judge needs (plan, op, shape); takes outs. */
static cJSON *build_meta(const wstate *w, const nmo_case *c, const nmo_report *rep, const nmo_bundle_wopts *o,
                         nmo_mode mode, cJSON *outs)
{
    const nmo_op *op = c->op;
    char plan_text[512], ref[256], opn[160];
    nmo_plan_to_string(&c->plan, plan_text, sizeof plan_text);
    snprintf(ref, sizeof ref, "numoracle %s certified interval engine (MPFR %s, GMP %s)", NMO_VERSION,
             mpfr_get_version(), gmp_version);
    cJSON *meta = cJSON_CreateObject();
    cJSON_AddNumberToObject(meta, "format_version", NMO_BUNDLE_FORMAT_VERSION);
    cJSON_AddStringToObject(meta, "generator", "numoracle golden");
    cJSON_AddStringToObject(meta, "generator_version", NMO_VERSION);
    cJSON_AddStringToObject(meta, "generated_at", o->generated_at ? o->generated_at : "");
    cJSON_AddStringToObject(meta, "reference_source", ref);
    cJSON_AddStringToObject(meta, "reference_source_hash", NMO_VERSION);
    cJSON_AddStringToObject(meta, "reference_strategy", "certified_interval");
    if (o->command) cJSON_AddStringToObject(meta, "generation_command", o->command);
    cJSON_AddStringToObject(meta, "notes",
                            "expected outputs are the certified enclosure's midpoint rounded to the output format; "
                            "tensor{uid}.lo/.hi.bin hold the reachable set R of every output element and "
                            "tensor{uid}.flags.bin one uint8 of flags (1 NaN possible, 2 R unbounded, 4 R wider "
                            "than max_ulps, 8 every implementation gives NaN)");
    cJSON_AddNumberToObject(meta, "seed", (double)o->seed);
    cJSON_AddStringToObject(meta, "operation", nmo_op_operation(opn, sizeof opn, op));
    cJSON_AddStringToObject(meta, "plan", plan_text);
    cJSON_AddStringToObject(meta, "oracle_version", NMO_VERSION);
    cJSON_AddStringToObject(meta, "mpfr_version", mpfr_get_version());
    cJSON_AddStringToObject(meta, "gmp_version", gmp_version);
    cJSON_AddNumberToObject(meta, "working_precision", NMO_CERT_PREC);
    cJSON *nb = cJSON_AddObjectToObject(meta, "numoracle");
    cJSON_AddStringToObject(nb, "op", op->name);
    int64_t sh[NMO_MAX_DIMS];
    memcpy(sh, c->shape, sizeof sh);
    cJSON_AddItemToObject(nb, "shape", nmo__int_array(c->nshape, sh));
    cJSON_AddStringToObject(nb, "family", o->family ? o->family : "gaussian");
    if (o->inputs) cJSON_AddItemToObject(nb, "inputs", cJSON_Duplicate(o->inputs, 1));
    cJSON *pa = cJSON_AddObjectToObject(nb, "params");
    for (int k = 0; k < op->n_param; k++) cJSON_AddNumberToObject(pa, op->param[k].name, c->param[k]);
    cJSON_AddItemToObject(nb, "plan_json", nmo_plan_to_json(&c->plan));
    cJSON_AddStringToObject(nb, "engine", mode == NMO_MODE_CERT ? "certified" : "fast+escalation");
    cJSON_AddNumberToObject(nb, "max_ulps", (double)rep->max_ulps);
    cJSON_AddNumberToObject(nb, "escalated_elements", (double)rep->n_escalated);
    cJSON_AddNumberToObject(nb, "width_ulps_median", nmo_report_width_quantile(rep, 0.5));
    cJSON_AddNumberToObject(nb, "width_ulps_max", (double)rep->width_max);
    cJSON_AddNumberToObject(nb, "elements", (double)w->ntot);
    cJSON_AddNumberToObject(nb, "informative", (double)w->n_inf);
    cJSON_AddNumberToObject(nb, "wide", (double)w->n_wide);
    cJSON_AddNumberToObject(nb, "nan_possible", (double)w->n_nanok);
    if (o->tier) cJSON_AddStringToObject(nb, "tier", o->tier);
    cJSON_AddItemToObject(nb, "outputs", outs);
    if (o->forward_source) cJSON_AddItemToObject(meta, "forward_source", cJSON_Duplicate(o->forward_source, 1));
    return meta;
}

/* The certified envelope as a static tolerance: every plan-following value c lies in R,
 * and so does e, hence |c - e| <= max(e - lo, hi - e) =: dev. Elements below the 10th
 * percentile of |e| (and zeros) are covered by atol, the rest by rtol; both are widened
 * by 2^-40 relative so that the comparison's own rounding cannot bite. */
static nmo_status add_tolerance(cJSON *meta, const wstate *w, const char *generated_at, nmo_err *err)
{
    double *sorted = malloc((size_t)w->ntot * sizeof(double));
    if (!sorted) return nmo_err_set(err, NMO_ERR_NOMEM, "out of memory");
    memcpy(sorted, w->absv, (size_t)w->ntot * sizeof(double));
    qsort(sorted, (size_t)w->ntot, sizeof(double), cmp_dbl);
    double thr = sorted[(size_t)((double)(w->ntot - 1) * 0.1)];
    free(sorted);
    double atol = 0, rtol = 0;
    for (int64_t i = 0; i < w->ntot; i++) {
        if (w->absv[i] == 0 || w->absv[i] < thr) atol = fmax(atol, w->devv[i]);
        else rtol = fmax(rtol, w->devv[i] / w->absv[i]);
    }
    atol *= 1 + 0x1p-40;
    rtol *= 1 + 0x1p-40;
    cJSON *tol = cJSON_AddObjectToObject(meta, "tolerance");
    cJSON_AddNumberToObject(tol, "absolute", atol);
    cJSON_AddNumberToObject(tol, "relative", rtol);
    cJSON_AddBoolToObject(tol, "deterministic", 1);
    cJSON *cal = cJSON_AddObjectToObject(tol, "calibration");
    cJSON_AddStringToObject(cal, "method", "certified_envelope");
    cJSON_AddStringToObject(cal, "note",
                            "every plan-following implementation is within absolute + relative*|expected| "
                            "of the expected value (derived from the certified reachable sets)");
    cJSON_AddStringToObject(cal, "calibrated_at", generated_at ? generated_at : "");
    return NMO_OK;
}

nmo_status nmo_bundle_write(const char *dir, const nmo_case *c, const nmo_bundle_wopts *o, nmo_mode mode,
                            char *info, size_t info_len, nmo_err *err)
{
    const nmo_op *op = c->op;
    nmo_graph g;
    if (o->graph) {
        g = *o->graph;
        if (g.op != op)
            return nmo_err_set(err, NMO_ERR_USAGE, "graph operator %s differs from the case's %s",
                               g.op ? g.op->name : "?", op->name);
    } else {
        NMO_RETURN_IF_ERR(nmo_graph_from_case(&g, c, o->name, o->layout, err));
    }
    nmo_check_opts co = {0};
    co.mode = mode;
    co.keep_bounds = 1;
    co.keep_enc = 1;
    nmo_report rep;
    NMO_RETURN_IF_ERR(nmo_check(&rep, c, NULL, &co, err));

    nmo_status s = NMO_OK;
    wstate w;
    memset(&w, 0, sizeof w);
    cJSON *meta = NULL, *outs = NULL;
    char *text = NULL;
    for (int k = 0; k < c->n_out; k++) w.ntot += nmo_tensor_numel(&c->out[k]);
    w.absv = malloc((size_t)w.ntot * sizeof(double));
    w.devv = malloc((size_t)w.ntot * sizeof(double));
    if (!w.absv || !w.devv) {
        s = nmo_err_set(err, NMO_ERR_NOMEM, "out of memory");
        goto done;
    }
    if (o->informative && (s = check_informative(c, &rep, w.ntot, err)) != NMO_OK) goto done;
    if ((s = fill_outputs(&w, c, &g, &rep, err)) != NMO_OK) goto done;
    /* files: graph, inputs, expected outputs and bounds */
    if ((s = write_graph_inputs(&w, dir, c, &g, o, err)) != NMO_OK) goto done;
    if ((s = write_outputs(&w, &outs, dir, c, &g, &rep, o, err)) != NMO_OK) goto done;
    meta = build_meta(&w, c, &rep, o, mode, outs);
    if (!o->no_tolerance && (s = add_tolerance(meta, &w, o->generated_at, err)) != NMO_OK) goto done;
    char path[NMO_BPATH + 400], leaf[400];
    text = nmo__json_print(meta, 1);
    snprintf(leaf, sizeof leaf, "%s.meta.json", o->name);
    nmo__join(path, sizeof path, dir, leaf);
    if (!text) s = nmo_err_set(err, NMO_ERR_NOMEM, "out of memory");
    else s = nmo__write_file(path, text, strlen(text), err);
    if (s == NMO_OK && info)
        snprintf(info, info_len,
                 "elements=%lld informative=%lld wide=%lld width_ulps_median=%g width_ulps_max=%lld "
                 "escalated=%lld payload=%lld",
                 (long long)w.ntot, (long long)w.n_inf, (long long)w.n_wide, nmo_report_width_quantile(&rep, 0.5),
                 (long long)rep.width_max, (long long)rep.n_escalated, (long long)w.payload);
done:
    free(text);
    cJSON_Delete(meta);
    wstate_free(&w);
    nmo_report_free(&rep);
    return s;
}
