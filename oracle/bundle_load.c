/* numoracle: loading a golden bundle with every integrity check (RFC 0011 "Data
 * Integrity"): metadata, plan and shape inference, tensor files by stride, stored
 * reachable sets screened on ordinals. */
/* Messages and paths are truncated to their fixed buffers on purpose. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bundle_priv.h"
#include "numoracle/gen.h"

static void tlabel(char *buf, size_t n, const nmo_gtensor *t)
{
    snprintf(buf, n, "uid %lld (%s)", (long long)t->uid, t->name);
}

/* Read a raw tensor file for graph tensor t (element size esz, storage dtype name dtn):
 * presence, containment, exact size. Returns the bytes in *buf (caller frees). */
static nmo_status read_raw(unsigned char **buf, const nmo_gtensor *t, size_t esz, const char *dtn,
                           const char *path, const char *root, int64_t *bytes, nmo_err *err)
{
    char lab[120];
    tlabel(lab, sizeof lab, t);
    *buf = NULL;
    struct stat st;
    if (stat(path, &st) != 0) return nmo_err_set(err, NMO_ERR_IO, "%s: %s: missing tensor file", path, lab);
    if (!S_ISREG(st.st_mode)) return nmo_err_set(err, NMO_ERR_IO, "%s: %s: not a regular file", path, lab);
    if (root && !nmo__inside(root, path))
        return nmo_err_set(err, NMO_ERR_DATA, "%s: %s: resolves outside the bundle", path, lab);
    int64_t span = nmo__gspan(t);
    long long want = (long long)span * (long long)esz;
    if ((long long)st.st_size != want)
        return nmo_err_set(err, NMO_ERR_SIZE, "%s: %s: size %lld bytes, expected %lld (%lld elements of %s)", path,
                           lab, (long long)st.st_size, want, (long long)span, dtn);
    unsigned char *p = malloc((size_t)want ? (size_t)want : 1);
    if (!p) return nmo_err_set(err, NMO_ERR_NOMEM, "%s: out of memory", path);
    FILE *f = nmo__fopen_regular(path, NULL); /* never blocks on a FIFO swapped in */
    size_t got = f ? fread(p, 1, (size_t)want, f) : 0;
    if (f) fclose(f);
    if (got != (size_t)want) {
        free(p);
        return nmo_err_set(err, NMO_ERR_IO, "%s: %s: short read", path, lab);
    }
    if (bytes) *bytes += want;
    *buf = p;
    return NMO_OK;
}

/* Repack raw storage of graph tensor t into the packed tensor dst (allocated, same dims). */
static void repack(nmo_tensor *dst, const nmo_gtensor *t, const unsigned char *raw)
{
    int64_t n = nmo__gnumel(t);
    if (t->dt == NMO_DT_INT32 || t->dt == NMO_DT_INT64) {
        for (int64_t i = 0; i < n; i++) {
            double v;
            nmo_raw_get_f64(&v, raw, t->dt, nmo__goffset(t, i));
            nmo_tensor_set(dst, i, v);
        }
        return;
    }
    nmo_tensor src;
    memset(&src, 0, sizeof src);
    src.dtype = (nmo_fmt)t->dt;
    src.ndims = t->ndims;
    memcpy(src.dims, t->dims, sizeof src.dims);
    memcpy(src.strides, t->strides, sizeof src.strides);
    src.data = (void *)raw;
    if (src.dtype == dst->dtype && nmo__is_rowmajor(t)) {
        memcpy(dst->data, raw, (size_t)n * nmo_fmt_bytes(dst->dtype));
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        if (src.dtype == dst->dtype) nmo_tensor_set_bits(dst, i, nmo_tensor_get_bits(&src, i));
        else nmo_tensor_set(dst, i, nmo_tensor_get(&src, i));
    }
}

/* Read graph tensor t's file into the packed tensor dst (dims and dtype set): straight
 * into dst's storage when the file is already packed in dst's dtype (no copy, no
 * zeroing), else through a raw buffer and a repack. */
static nmo_status read_into(nmo_tensor *dst, const nmo_gtensor *t, const char *path, const char *root, int64_t *bytes,
                            nmo_err *err)
{
    size_t esz = nmo_dt_bytes(t->dt);
    if (t->dt == (int)dst->dtype && nmo__is_rowmajor(t)) {
        char lab[120];
        tlabel(lab, sizeof lab, t);
        struct stat st;
        if (stat(path, &st) != 0) return nmo_err_set(err, NMO_ERR_IO, "%s: %s: missing tensor file", path, lab);
        if (!S_ISREG(st.st_mode)) return nmo_err_set(err, NMO_ERR_IO, "%s: %s: not a regular file", path, lab);
        if (root && !nmo__inside(root, path))
            return nmo_err_set(err, NMO_ERR_DATA, "%s: %s: resolves outside the bundle", path, lab);
        int64_t span = nmo__gspan(t);
        long long want = (long long)span * (long long)esz;
        if ((long long)st.st_size != want)
            return nmo_err_set(err, NMO_ERR_SIZE, "%s: %s: size %lld bytes, expected %lld (%lld elements of %s)", path,
                               lab, (long long)st.st_size, want, (long long)span, nmo_dt_name(t->dt));
        if (!dst->data) {
            dst->data = malloc((size_t)want ? (size_t)want : 1);
            if (!dst->data) return nmo_err_set(err, NMO_ERR_NOMEM, "%s: out of memory", path);
            dst->own = 1;
        }
        FILE *f = nmo__fopen_regular(path, NULL);
        size_t got = f ? fread(dst->data, 1, (size_t)want, f) : 0;
        if (f) fclose(f);
        if (got != (size_t)want) return nmo_err_set(err, NMO_ERR_IO, "%s: %s: short read", path, lab);
        if (bytes) *bytes += want;
        return NMO_OK;
    }
    unsigned char *raw;
    NMO_RETURN_IF_ERR(read_raw(&raw, t, esz, nmo_dt_name(t->dt), path, root, bytes, err));
    nmo_status s = dst->data ? NMO_OK : nmo_tensor_alloc(dst, err);
    if (s == NMO_OK) repack(dst, t, raw);
    free(raw);
    return s;
}

/* The flags file of output t: one byte per element in t's storage order, packed. */
static nmo_status read_flags(uint8_t **out, const nmo_gtensor *t, const char *path, const char *root, int64_t *bytes,
                             nmo_err *err)
{
    unsigned char *raw;
    NMO_RETURN_IF_ERR(read_raw(&raw, t, 1, "UINT8", path, root, bytes, err));
    if (nmo__is_rowmajor(t)) {
        *out = raw;
        return NMO_OK;
    }
    int64_t n = nmo__gnumel(t);
    *out = malloc((size_t)n);
    if (!*out) {
        free(raw);
        return nmo_err_set(err, NMO_ERR_NOMEM, "out of memory");
    }
    for (int64_t q = 0; q < n; q++) (*out)[q] = raw[nmo__goffset(t, q)];
    free(raw);
    return NMO_OK;
}

/* setup only: the case's tensor descriptions, no storage (stored-bounds judging) */
static nmo_status case_describe(nmo_case *c, const nmo_op *op, const nmo_plan *plan, int ns, const int64_t *shape,
                                const double *param, nmo_err *err)
{
    memset(c, 0, sizeof *c);
    c->op = op;
    c->plan = *plan;
    c->nshape = ns;
    memcpy(c->shape, shape, (size_t)ns * sizeof shape[0]);
    c->n_in = op->n_in;
    c->n_out = op->n_out;
    for (int k = 0; k < op->n_param; k++) c->param[k] = param[k];
    return op->setup(c, err);
}

/* First index >= from whose stored set is unusual (flag bits beyond 7, a NaN bound,
 * lo > hi, the expected value e outside [lo, hi]); -1 when none. Chunks are screened by
 * the vectorized kernel; a flagged chunk is searched element by element. */
static int64_t bounds_suspect(const nmo_tensor *lo, const nmo_tensor *hi, const nmo_tensor *e, const uint8_t *fl,
                              int64_t from, int64_t n, const nmo__ordfmt *o)
{
    if (o->tf32) return from < n ? from : -1; /* tf32: every element on the exact path */
    size_t eb = (size_t)o->bits / 8;
    enum { CH = 4096 };
    for (int64_t b0 = from; b0 < n; b0 += CH) {
        int64_t m = n - b0 < CH ? n - b0 : CH;
        const char *pl = (const char *)lo->data + b0 * eb, *ph = (const char *)hi->data + b0 * eb;
        const char *pe = e ? (const char *)e->data + b0 * eb : NULL;
        if (!nmo__bounds_bad(o->bits, pl, ph, pe, fl + b0, m, o->nan_above, o->fnuz)) continue;
        for (int64_t i = b0; i < b0 + m; i++) {
            uint64_t l = nmo__bits_at(lo, i), h = nmo__bits_at(hi, i);
            int64_t ol = nmo__ord_of(o, l), oh = nmo__ord_of(o, h);
            int bad = (fl[i] & ~0x07u) || ol > oh || nmo__is_nan_bits(o, l) || nmo__is_nan_bits(o, h);
            if (!bad && e) {
                uint64_t x = nmo__bits_at(e, i);
                int64_t ox = nmo__ord_of(o, x);
                bad = ox < ol || ox > oh || nmo__is_nan_bits(o, x);
            }
            if (bad) return i;
        }
    }
    return -1;
}

static nmo_status check_format_version(const cJSON *m, const char *path, nmo_err *err)
{
    if (!cJSON_IsObject(m)) return nmo_err_set(err, NMO_ERR_DATA, "%s: not a JSON object", path);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, "format_version");
    int64_t fv;
    if (!v) return nmo_err_set(err, NMO_ERR_DATA, "%s: missing format_version (this reader supports %d)", path,
                               NMO_BUNDLE_FORMAT_VERSION);
    if (!nmo__json_int(v, INT32_MIN, INT32_MAX, &fv))
        return nmo_err_set(err, NMO_ERR_DATA, "%s: format_version must be an integer (this reader supports %d)", path,
                           NMO_BUNDLE_FORMAT_VERSION);
    if (fv != NMO_BUNDLE_FORMAT_VERSION)
        return nmo_err_set(err, NMO_ERR_UNSUPPORTED, "%s: format_version %lld is not supported (this reader supports %d)",
                           path, (long long)fv, NMO_BUNDLE_FORMAT_VERSION);
    return NMO_OK;
}

static const cJSON *meta_get(const cJSON *meta, const cJSON *case_meta, const char *key)
{
    const cJSON *v = meta ? cJSON_GetObjectItemCaseSensitive(meta, key) : NULL;
    if (!v && case_meta) v = cJSON_GetObjectItemCaseSensitive(case_meta, key);
    return v;
}

static const cJSON *nmo_block(const cJSON *meta, const cJSON *case_meta)
{
    const cJSON *v = meta_get(meta, case_meta, "numoracle");
    return cJSON_IsObject(v) ? v : NULL;
}

/* setup only (no allocation): do the dims of case (op, plan, shape) equal the graph's? */
static int shape_fits(const nmo_graph *g, const nmo_plan *plan, int ns, const int64_t *shape)
{
    nmo_case c;
    memset(&c, 0, sizeof c);
    c.op = g->op;
    c.plan = *plan;
    c.nshape = ns;
    memcpy(c.shape, shape, (size_t)ns * sizeof shape[0]);
    c.n_in = g->op->n_in;
    c.n_out = g->op->n_out;
    for (int k = 0; k < g->op->n_param; k++) c.param[k] = g->param[k];
    nmo_err e;
    if (g->op->setup(&c, &e) != NMO_OK) return 0;
    for (int io = 0; io < 2; io++) {
        int n = io ? c.n_out : c.n_in;
        for (int k = 0; k < n; k++) {
            const nmo_tensor *ct = io ? &c.out[k] : &c.in[k];
            const nmo_gtensor *gt = &g->t[io ? g->out_t[k] : g->in_t[k]];
            /* size-1 dims do not change the row-major sequence: [2,3,1] is [2,3] */
            int64_t a[NMO_MAX_DIMS], b[NMO_MAX_DIMS];
            int na = 0, nb = 0;
            for (int d = 0; d < ct->ndims; d++)
                if (ct->dims[d] != 1) a[na++] = ct->dims[d];
            for (int d = 0; d < gt->ndims; d++)
                if (gt->dims[d] != 1) b[nb++] = gt->dims[d];
            /* a vector of the op (rstd [rows]) is any tensor of that many elements in
             * logical row-major order (hipDNN's statistics [B, S, 1]) */
            if (na == 1 && nb > 1) {
                int64_t m = 1;
                for (int d = 0; d < nb; d++) m *= b[d];
                if (m == a[0]) continue;
            }
            if (na != nb) return 0;
            for (int d = 0; d < na; d++)
                if (a[d] != b[d]) return 0;
        }
    }
    return 1;
}

static nmo_status infer_shape(const nmo_graph *g, const nmo_plan *plan, const cJSON *nb, int *ns,
                              int64_t *shape, const char *src, nmo_err *err)
{
    const nmo_op *op = g->op;
    const cJSON *ms = nb ? cJSON_GetObjectItemCaseSensitive(nb, "shape") : NULL;
    if (ms) {
        int n = cJSON_IsArray(ms) ? cJSON_GetArraySize(ms) : 0;
        if (n < 1 || n > NMO_MAX_DIMS)
            return nmo_err_set(err, NMO_ERR_DATA, "%s: metadata numoracle.shape is not an array of 1 to %d dims", src,
                               NMO_MAX_DIMS);
        for (int k = 0; k < n; k++)
            if (!nmo__json_int(cJSON_GetArrayItem(ms, k), 1, NMO_MAX_ELEMS, &shape[k]))
                return nmo_err_set(err, NMO_ERR_DATA, "%s: metadata numoracle.shape[%d] is not a positive integer", src, k);
        *ns = n;
        if (!shape_fits(g, plan, n, shape)) {
            char sh[128];
            nmo__fmt_dims(sh, sizeof sh, n, shape);
            return nmo_err_set(err, NMO_ERR_SHAPE, "%s: tensor dims do not match op %s with shape %s from the metadata",
                               src, op->name, sh);
        }
        return NMO_OK;
    }
    /* candidates: the shape the node implies (hipDNN SDPA), each tensor's dims; out0
     * dims + in0's last dim (MxNxK products) */
    int64_t cand[2 * NMO_MAX_TENSORS + 3][NMO_MAX_DIMS];
    int cn[2 * NMO_MAX_TENSORS + 3], nc = 0;
    if (g->shape_n > 0) {
        memcpy(cand[nc], g->shape, sizeof cand[nc]);
        cn[nc++] = g->shape_n;
    }
    for (int io = 0; io < 2; io++) {
        int n = io ? op->n_out : op->n_in;
        for (int k = 0; k < n; k++) {
            const nmo_gtensor *t = &g->t[io ? g->out_t[k] : g->in_t[k]];
            memcpy(cand[nc], t->dims, sizeof cand[nc]);
            cn[nc++] = t->ndims;
        }
    }
    if (op->n_out > 0 && op->n_in > 0) {
        const nmo_gtensor *o0 = &g->t[g->out_t[0]], *i0 = &g->t[g->in_t[0]];
        if (o0->ndims < NMO_MAX_DIMS) {
            memcpy(cand[nc], o0->dims, sizeof cand[nc]);
            cand[nc][o0->ndims] = i0->dims[i0->ndims - 1];
            cn[nc++] = o0->ndims + 1;
        }
        if (i0->ndims < NMO_MAX_DIMS) {
            memcpy(cand[nc], i0->dims, sizeof cand[nc]);
            cand[nc][i0->ndims] = o0->dims[o0->ndims - 1];
            cn[nc++] = i0->ndims + 1;
        }
    }
    for (int q = 0; q < nc; q++)
        if (shape_fits(g, plan, cn[q], cand[q])) {
            *ns = cn[q];
            memcpy(shape, cand[q], (size_t)cn[q] * sizeof shape[0]);
            return NMO_OK;
        }
    return nmo_err_set(err, NMO_ERR_SHAPE, "%s: no shape of op %s fits the tensor dims (see numoracle ops --op %s)", src,
                       op->name, op->name);
}

static nmo_status bundle_plan(nmo_plan *p, const nmo_graph *g, const cJSON *meta, const cJSON *case_meta,
                              const char *src, nmo_err *err)
{
    int io = g->io_dt >= 0 ? g->io_dt : g->t[g->in_t[0]].dt;
    if (!nmo__dt_is_float(io))
        return nmo_err_set(err, NMO_ERR_DATA, "%s: io_data_type %s is not a floating-point format", src, nmo_dt_name(io));
    nmo_plan_default(p, (nmo_fmt)io);
    const cJSON *pl = meta_get(meta, case_meta, "plan");
    const char *text = cJSON_IsString(pl) ? pl->valuestring : NULL;
    if (!text && cJSON_IsObject(pl)) text = nmo__jstr(pl, "text");
    if (text) {
        nmo_err e;
        if (nmo_plan_parse(p, text, &e) != NMO_OK)
            return nmo_err_set(err, NMO_ERR_DATA, "%s: metadata plan: %s", src, e.msg);
        return NMO_OK;
    }
    if (g->compute_dt >= 0 && nmo__dt_is_float(g->compute_dt)) p->compute = p->acc = (nmo_fmt)g->compute_dt;
    if (g->node_compute_dt >= 0 && nmo__dt_is_float(g->node_compute_dt)) p->acc = (nmo_fmt)g->node_compute_dt;
    if (g->inter_dt >= 0 && nmo__dt_is_float(g->inter_dt)) p->inter = (nmo_fmt)g->inter_dt;
    if (g->op->n_out > 0 && nmo__dt_is_float(g->t[g->out_t[0]].dt)) p->out = (nmo_fmt)g->t[g->out_t[0]].dt;
    return NMO_OK;
}

/* Output k's files: the expected output (unless bounds-only; NaN/Inf refused) and the
 * certified bounds (lo, hi and flags together, screened for integrity). *have_bounds
 * says whether this output has bounds. On error the caller frees b. */
static nmo_status load_output(nmo_bundle *b, int k, const char *dir, const char *base, const char *root,
                              unsigned flags, int *have_bounds, nmo_err *err)
{
    const nmo_graph *g = &b->g;
    char path[NMO_BPATH + 400];
    nmo_status s;
    *have_bounds = 0;
    const nmo_gtensor *gt = &g->t[g->out_t[k]];
    char lab[120];
    tlabel(lab, sizeof lab, gt);
    int with_golden = !(flags & NMO_BL_BOUNDS_ONLY);
    int64_t n = nmo_tensor_numel(&b->c.out[k]);
    enum { CH = 1024 };
    double ev[CH];
    nmo__file_path(path, sizeof path, dir, base, gt->uid, "");
    if (!with_golden) goto bounds;
    b->golden[k] = b->c.out[k];
    b->golden[k].data = NULL;
    b->golden[k].own = 0;
    if ((s = read_into(&b->golden[k], gt, path, root, &b->payload_bytes, err)) != NMO_OK) return s;
    for (int64_t b0 = 0; b0 < n; b0 += CH) {
        int64_t m = n - b0 < CH ? n - b0 : CH;
        nmo_tensor_load_f64(ev, &b->golden[k], b0, m, 1);
        for (int64_t i = 0; i < m; i++) {
            if (isfinite(ev[i])) continue;
            char ix[160];
            nmo__fmt_index(ix, sizeof ix, gt->ndims, gt->dims, b0 + i);
            s = nmo_err_set(err, NMO_ERR_DATA, "%s: %s: expected output holds %s at index %s (NaN/Inf golden data is rejected)",
                            path, lab, ev[i] != ev[i] ? "NaN" : "Inf", ix);
            return s;
        }
    }
bounds:; /* a label labels a statement, not a declaration (C17 6.8.1) */
    /* certified bounds: lo, hi and flags come together */
    static const char *const sfx[3] = {".lo", ".hi", ".flags"};
    char bp[3][NMO_BPATH + 400];
    int have = 0;
    for (int q = 0; q < 3; q++) {
        nmo__file_path(bp[q], sizeof bp[q], dir, base, gt->uid, sfx[q]);
        have += nmo__exists(bp[q]);
    }
    if (have == 0) return NMO_OK;
    for (int q = 0; q < 3; q++)
        if (!nmo__exists(bp[q])) {
            s = nmo_err_set(err, NMO_ERR_IO, "%s: %s: missing bound tensor (lo, hi and flags come together)", bp[q], lab);
            return s;
        }
    nmo_tensor *bt[2] = {&b->lo[k], &b->hi[k]};
    for (int q = 0; q < 2; q++) {
        *bt[q] = b->c.out[k];
        bt[q]->data = NULL;
        bt[q]->own = 0;
        if ((s = read_into(bt[q], gt, bp[q], root, &b->payload_bytes, err)) != NMO_OK) return s;
    }
    if ((s = read_flags(&b->flags[k], gt, bp[2], root, &b->payload_bytes, err)) != NMO_OK) return s;
    {
        /* integrity of the stored sets, on ordinals; anything unusual is re-examined
         * on exact values for its message */
        nmo__ordfmt o;
        nmo__ordfmt_init(&o, b->c.out[k].dtype);
        int64_t from = 0;
        while ((from = bounds_suspect(&b->lo[k], &b->hi[k], with_golden ? &b->golden[k] : NULL, b->flags[k], from, n, &o)) >= 0) {
            int64_t i = from++;
            uint8_t fl = b->flags[k][i];
            double lo = nmo_tensor_get(&b->lo[k], i), hi = nmo_tensor_get(&b->hi[k], i);
            double e = with_golden ? nmo_tensor_get(&b->golden[k], i) : lo;
            char ix[160];
            nmo__fmt_index(ix, sizeof ix, gt->ndims, gt->dims, i);
            if (fl & ~0x3fu) /* NMO_BF_* (check.h): six bits */
                s = nmo_err_set(err, NMO_ERR_DATA, "%s: %s: invalid flag bits 0x%02x at index %s", bp[2], lab, fl, ix);
            else if ((fl & NMO_BF_MUST_NAN) && with_golden)
                s = nmo_err_set(err, NMO_ERR_DATA,
                                "%s: %s: every implementation gives NaN at index %s, but the expected output is %g", bp[2],
                                lab, ix, e);
            else if (fl & NMO_BF_MUST_NAN)
                continue;
            else if (lo != lo || hi != hi)
                s = nmo_err_set(err, NMO_ERR_DATA, "%s: %s: NaN bound at index %s without the MUST_NAN flag", bp[0], lab, ix);
            else if (lo > hi)
                s = nmo_err_set(err, NMO_ERR_DATA, "%s: %s: lo %.9g > hi %.9g at index %s", bp[0], lab, lo, hi, ix);
            else if (e < lo || e > hi)
                s = nmo_err_set(err, NMO_ERR_DATA,
                                "%s: %s: expected value %.9g at index %s lies outside its certified reachable set [%.9g, %.9g] "
                                "(stale or edited bounds)", path, lab, e, ix, lo, hi);
            else
                continue;
            return s;
        }
    }
    *have_bounds = 1;
    return NMO_OK;
}

nmo_status nmo__bundle_load_core(nmo_bundle *b, const cJSON *graph, const char *src, const char *dir,
                                 const char *base, const char *meta_path, const char *root,
                                 const cJSON *case_meta, unsigned flags, nmo_err *err)
{
    memset(b, 0, sizeof *b);
    snprintf(b->dir, sizeof b->dir, "%s", dir);
    snprintf(b->base, sizeof b->base, "%s", base);
    snprintf(b->graph_path, sizeof b->graph_path, "%s", src);
    nmo_status s;
    if (meta_path && *meta_path && nmo__exists(meta_path)) {
        snprintf(b->meta_path, sizeof b->meta_path, "%s", meta_path);
        if (root && !nmo__inside(root, meta_path))
            return nmo_err_set(err, NMO_ERR_DATA, "%s: resolves outside the bundle", meta_path);
        b->meta = nmo__read_json(meta_path, err);
        if (!b->meta) return NMO_ERR_PARSE;
        if ((s = check_format_version(b->meta, meta_path, err)) != NMO_OK) goto fail;
    }
    const cJSON *nb = nmo_block(b->meta, case_meta);
    const char *hint = nb ? nmo__jstr(nb, "op") : NULL;
    if (!hint) {
        const cJSON *ov = meta_get(b->meta, case_meta, "operation");
        hint = cJSON_IsString(ov) ? ov->valuestring : NULL;
    }
    if ((s = nmo__graph_parse(&b->g, graph, src, hint, err)) != NMO_OK) goto fail;
    const nmo_graph *g = &b->g;
    const nmo_op *op = g->op;

    nmo_plan plan;
    int ns = 0;
    int64_t shape[NMO_MAX_DIMS];
    if ((s = bundle_plan(&plan, g, b->meta, case_meta, src, err)) != NMO_OK) goto fail;
    if ((s = infer_shape(g, &plan, nb, &ns, shape, src, err)) != NMO_OK) goto fail;
    nmo_err e2;
    /* the graph's parameters before setup: a parameter may decide a tensor's shape
     * (conv2d padding, stride, dilation; a layout) */
    int pset[NMO_MAX_PARAMS];
    for (int k = 0; k < op->n_param; k++) pset[k] = 1;
    s = (flags & NMO_BL_BOUNDS_ONLY) ? case_describe(&b->c, op, &plan, ns, shape, g->param, &e2)
                                     : nmo_case_init_params(&b->c, op, &plan, ns, shape, g->param, pset, &e2);
    if (s != NMO_OK) {
        s = nmo_err_set(err, s, "%s: %s", src, e2.msg);
        goto fail;
    }
    b->have_case = 1;
    for (int k = 0; k < op->n_param; k++) b->c.param[k] = g->param[k];
    /* dtypes: the op (under the plan) is the authority; labels may come as integers */
    for (int io = 0; io < 2; io++) {
        int n = io ? op->n_out : op->n_in;
        for (int k = 0; k < n; k++) {
            const nmo_tensor *ct = io ? &b->c.out[k] : &b->c.in[k];
            const nmo_gtensor *gt = &g->t[io ? g->out_t[k] : g->in_t[k]];
            int ok = nmo__dt_is_float(gt->dt) ? gt->dt == (int)ct->dtype
                                         : (!io && op->in[k].role == NMO_ROLE_LABEL);
            if (!ok) {
                char lab[120];
                tlabel(lab, sizeof lab, gt);
                s = nmo_err_set(err, NMO_ERR_DATA, "%s: %s: data_type %s, but op %s under plan in=%s out=%s stores %s",
                                src, lab, nmo_dt_name(gt->dt), op->name, nmo_fmt_name(plan.in),
                                nmo_fmt_name(plan.out), nmo_dt_name((int)ct->dtype));
                goto fail;
            }
        }
    }

    /* seed and family (graph-only bundles regenerate their inputs from them) */
    const cJSON *sv = meta_get(b->meta, case_meta, "seed");
    int64_t seed = 0;
    if (sv && !nmo__json_int(sv, 0, INT64_MAX, &seed)) {
        s = nmo_err_set(err, NMO_ERR_DATA, "%s: seed must be a non-negative integer", b->meta_path[0] ? b->meta_path : src);
        goto fail;
    }
    b->seed = (uint64_t)seed;
    const char *fam = nb ? nmo__jstr(nb, "family") : NULL;
    if (!fam) {
        const cJSON *fv = meta_get(b->meta, case_meta, "family");
        fam = cJSON_IsString(fv) ? fv->valuestring : NULL;
    }
    nmo_family f = NMO_FAM_GAUSSIAN;
    if (fam && nmo_family_from_name(&f, fam) != NMO_OK) {
        s = nmo_err_set(err, NMO_ERR_DATA, "%s: unknown input family '%s'", b->meta_path[0] ? b->meta_path : src, fam);
        goto fail;
    }
    b->family = (int)f;
    if (flags & NMO_BL_GRAPH_ONLY) return NMO_OK;

    /* graph-only when no tensor file exists at all; otherwise every tensor needs one */
    char path[NMO_BPATH + 400];
    int present = 0;
    for (int i = 0; i < g->n_tensors; i++) {
        if (g->t[i].is_virtual || g->t[i].has_value) continue;
        nmo__file_path(path, sizeof path, dir, base, g->t[i].uid, "");
        present += nmo__exists(path);
    }
    if (!present) return NMO_OK;

    for (int k = 0; k < op->n_in && !(flags & NMO_BL_BOUNDS_ONLY); k++) {
        const nmo_gtensor *gt = &g->t[g->in_t[k]];
        nmo__file_path(path, sizeof path, dir, base, gt->uid, "");
        if ((s = read_into(&b->c.in[k], gt, path, root, &b->payload_bytes, err)) != NMO_OK) goto fail;
        if ((s = nmo_case_check_input(&b->c, k, path, err)) != NMO_OK) goto fail; /* labels */
    }
    b->have_inputs = !(flags & NMO_BL_BOUNDS_ONLY);

    int nb_have = 0;
    for (int k = 0; k < op->n_out; k++) {
        int hb;
        if ((s = load_output(b, k, dir, base, root, flags, &hb, err)) != NMO_OK) goto fail;
        nb_have += hb;
    }
    if (nb_have && nb_have != op->n_out) {
        s = nmo_err_set(err, NMO_ERR_DATA, "%s: some outputs have bound tensors and others not", src);
        goto fail;
    }
    b->have_golden = !(flags & NMO_BL_BOUNDS_ONLY);
    b->have_bounds = nb_have > 0;
    return NMO_OK;
fail:
    nmo_bundle_free(b);
    return s;
}

nmo_status nmo_bundle_load(nmo_bundle *b, const char *json_path, unsigned flags, nmo_err *err)
{
    memset(b, 0, sizeof *b);
    char dir[NMO_BPATH], base[256];
    const char *slash = strrchr(json_path, '/');
    if (slash) snprintf(dir, sizeof dir, "%.*s", (int)(slash - json_path), json_path);
    else snprintf(dir, sizeof dir, ".");
    const char *leaf = slash ? slash + 1 : json_path;
    size_t l = strlen(leaf);
    if (l > 5 && strcmp(leaf + l - 5, ".json") == 0) l -= 5;
    snprintf(base, sizeof base, "%.*s", (int)l, leaf);
    cJSON *j = nmo__read_json(json_path, err);
    if (!j) return NMO_ERR_PARSE;
    char meta[NMO_BPATH + 300], leafm[300];
    snprintf(leafm, sizeof leafm, "%s.meta.json", base);
    nmo__join(meta, sizeof meta, dir, leafm);
    nmo_status s = nmo__bundle_load_core(b, j, json_path, dir, base, meta, dir, NULL, flags, err);
    cJSON_Delete(j);
    if (s == NMO_OK) b->kind = NMO_BK_SINGLE;
    return s;
}

void nmo_bundle_free(nmo_bundle *b)
{
    if (b->have_case) nmo_case_free(&b->c);
    for (int k = 0; k < NMO_MAX_TENSORS; k++) {
        nmo_tensor_free(&b->golden[k]);
        nmo_tensor_free(&b->lo[k]);
        nmo_tensor_free(&b->hi[k]);
        free(b->flags[k]);
        b->flags[k] = NULL;
    }
    cJSON_Delete(b->meta);
    b->meta = NULL;
    b->have_case = b->have_inputs = b->have_golden = b->have_bounds = 0;
}

void nmo_bundle_generate_inputs(nmo_bundle *b)
{
    nmo_case_fill(&b->c, b->family, b->seed);
    b->have_inputs = 1;
}

/* ---- judging against stored bounds ---------------------------------------------------- */
