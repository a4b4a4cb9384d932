/* numoracle: golden bundles — hipDNN data-type names, graph JSON read/write, loading with
 * every integrity check, judging a candidate against stored reachable sets, and writing
 * certified bundles (DESIGN §8, RFC 0011 "The Bundle" and "Data Integrity").
 *
 * Decisions (README-level, kept next to the code):
 *  - One graph = one node bound to a registry operator: tensor uids 0.. are the inputs in
 *    the operator's order, then the outputs; the node's "attributes" hold
 *    "<tensor>_tensor_uid" keys and the scalar parameters by name. hipDNN's own layout
 *    ("inputs"/"outputs"/"parameters", lower-case "float") loads too.
 *  - The operator comes from the metadata ("numoracle.op", "operation"), the node type
 *    ("RmsNormFwdAttributes") or the node name ("rms_norm"), in that order.
 *  - The numoracle shape comes from the metadata, else it is inferred: the first
 *    candidate shape (each tensor's dims, out0 dims + in0 last dim, ...) whose setup
 *    reproduces every tensor's dims.
 *  - The plan: .meta.json "plan" when present; else the default plan of io_data_type
 *    with compute/intermediate from the graph and acc from the node's compute type.
 *  - Tensors are read with their strides (dense layouts, RFC v1) and repacked row-major,
 *    which is what the engines and CPU candidates use. */
/* Messages and paths are truncated to their fixed buffers on purpose. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <errno.h>
#include <gmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nmo_config.h"
#include "nmo_internal.h"
#include "numoracle/bundle.h"
#include "engine/enc_cert.h"
#include "numoracle/gen.h"

/* ---- data types --------------------------------------------------------------------- */

static const struct {
    int dt;
    const char *name, *token;
} dt_tab[] = {
    {NMO_FP32, "FLOAT", "fp32"},
    {NMO_FP16, "HALF", "fp16"},
    {NMO_BF16, "BFLOAT16", "bfp16"},
    {NMO_FP64, "DOUBLE", "fp64"},
    {NMO_FP8_E4M3, "FP8_E4M3", "fp8_e4m3"},
    {NMO_FP8_E5M2, "FP8_E5M2", "fp8_e5m2"},
    {NMO_FP8_E4M3FNUZ, "FP8_E4M3_FNUZ", "fp8_e4m3fnuz"},
    {NMO_FP8_E5M2FNUZ, "FP8_E5M2_FNUZ", "fp8_e5m2fnuz"},
    {NMO_DT_INT32, "INT32", "int32"},
    {NMO_DT_INT64, "INT64", "int64"},
};
#define N_DT ((int)(sizeof dt_tab / sizeof dt_tab[0]))

const char *nmo_dt_name(int dt)
{
    for (int i = 0; i < N_DT; i++)
        if (dt_tab[i].dt == dt) return dt_tab[i].name;
    return NULL;
}

const char *nmo_dt_token(int dt)
{
    for (int i = 0; i < N_DT; i++)
        if (dt_tab[i].dt == dt) return dt_tab[i].token;
    return dt == NMO_TF32 ? "tf32" : "unknown";
}

nmo_status nmo_dt_parse(int *dt, const char *name)
{
    if (!name) return NMO_ERR_UNKNOWN_DTYPE;
    for (int i = 0; i < N_DT; i++)
        if (strcasecmp(dt_tab[i].name, name) == 0) {
            *dt = dt_tab[i].dt;
            return NMO_OK;
        }
    return NMO_ERR_UNKNOWN_DTYPE;
}

static int dt_is_float(int dt) { return dt >= 0 && dt < (int)NMO_FMT_COUNT; }

static const char *dt_known_list(void)
{
    return "FLOAT HALF BFLOAT16 DOUBLE FP8_E4M3 FP8_E5M2 FP8_E4M3_FNUZ FP8_E5M2_FNUZ INT32 INT64";
}

/* ---- operators and operation names -------------------------------------------------- */

int nmo_op_is_backward(const nmo_op *op)
{
    size_t n = strlen(op->name);
    return n > 4 && strcmp(op->name + n - 4, "_bwd") == 0;
}

char *nmo_op_operation(char *buf, size_t n, const nmo_op *op)
{
    size_t len = strlen(op->name), off = 0;
    int bwd = nmo_op_is_backward(op);
    if (bwd) len -= 4;
    int up = 1;
    for (size_t i = 0; i < len && off + 1 < n; i++) {
        char ch = op->name[i];
        if (ch == '_') {
            up = 1;
            continue;
        }
        buf[off++] = up && ch >= 'a' && ch <= 'z' ? (char)(ch - 'a' + 'A') : ch;
        up = 0;
    }
    buf[off] = '\0';
    snprintf(buf + off, n - off, "%s", bwd ? "Bwd" : "Fwd");
    return buf;
}

const nmo_op *nmo_op_forward(const nmo_op *op)
{
    if (!nmo_op_is_backward(op)) return NULL;
    char name[128];
    snprintf(name, sizeof name, "%.*s", (int)(strlen(op->name) - 4), op->name);
    return nmo_op_find(name);
}

/* An operator by its name, Operation ("RmsNormFwd") or node type ("RmsNormFwdAttributes"). */
static const nmo_op *op_lookup(const char *s)
{
    if (!s || !*s) return NULL;
    const nmo_op *op = nmo_op_find(s);
    if (op) return op;
    for (int i = 0; i < nmo_op_count(); i++) {
        char b[160], t[180];
        nmo_op_operation(b, sizeof b, nmo_op_at(i));
        snprintf(t, sizeof t, "%sAttributes", b);
        if (strcmp(s, b) == 0 || strcmp(s, t) == 0) return nmo_op_at(i);
    }
    return NULL;
}

/* ---- graph JSON --------------------------------------------------------------------- */

int nmo__is_graph_json(const cJSON *j)
{
    return cJSON_IsObject(j) &&
           (cJSON_GetObjectItemCaseSensitive(j, "tensors") || cJSON_GetObjectItemCaseSensitive(j, "nodes"));
}

static const char *jstr(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int dense(int nd, const int64_t *dims, const int64_t *strides)
{
    int idx[NMO_MAX_DIMS], m = 0;
    for (int k = 0; k < nd; k++) {
        if (strides[k] < 0) return 0;
        if (dims[k] > 1) idx[m++] = k;
    }
    for (int a = 1; a < m; a++) /* insertion sort by stride */
        for (int b = a; b > 0 && strides[idx[b]] < strides[idx[b - 1]]; b--) {
            int t = idx[b];
            idx[b] = idx[b - 1];
            idx[b - 1] = t;
        }
    int64_t expect = 1;
    for (int a = 0; a < m; a++) {
        if (strides[idx[a]] != expect) return 0;
        expect *= dims[idx[a]];
    }
    return 1;
}

static int is_rowmajor(const nmo_gtensor *t)
{
    int64_t s = 1;
    for (int k = t->ndims - 1; k >= 0; k--) {
        if (t->dims[k] != 1 && t->strides[k] != s) return 0;
        s *= t->dims[k];
    }
    return 1;
}

static void channels_last(int nd, const int64_t *dims, int64_t *strides)
{
    /* [N, C, S1..Sk] stored N, S1..Sk, C: C innermost */
    strides[1] = 1;
    int64_t s = dims[1];
    for (int k = nd - 1; k >= 2; k--) {
        strides[k] = s;
        s *= dims[k];
    }
    strides[0] = s;
}

static int is_channels_last(const nmo_gtensor *t)
{
    if (t->ndims < 3) return 0;
    int64_t st[NMO_MAX_DIMS];
    channels_last(t->ndims, t->dims, st);
    for (int k = 0; k < t->ndims; k++)
        if (t->dims[k] != 1 && t->strides[k] != st[k]) return 0;
    return 1;
}

static const char *layout_of(const nmo_gtensor *ts, int n)
{
    int rank5 = n > 0 && ts[0].ndims == 5;
    for (int i = 0; i < n; i++)
        if (!ts[i].is_virtual && is_channels_last(&ts[i]) && !is_rowmajor(&ts[i]))
            return ts[i].ndims == 5 ? "ndhwc" : "nhwc";
    return rank5 ? "ncdhw" : "nchw";
}

const char *nmo_graph_layout(const nmo_graph *g) { return layout_of(g->t, g->n_tensors); }

const char *nmo_graph_dtype_token(const nmo_graph *g)
{
    if (g->io_dt >= 0) return nmo_dt_token(g->io_dt);
    if (g->op && g->op->n_in > 0) return nmo_dt_token(g->t[g->in_t[0]].dt);
    return g->n_tensors ? nmo_dt_token(g->t[0].dt) : "unknown";
}

/* Parse one tensor object; label names it in messages ("uid 2 (y)" or "tensors[3]"). */
static nmo_status parse_tensor(nmo_gtensor *t, const cJSON *o, int i, const char *src, nmo_err *err)
{
    memset(t, 0, sizeof *t);
    if (!cJSON_IsObject(o)) return nmo_err_set(err, NMO_ERR_DATA, "%s: tensors[%d] is not an object", src, i);
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(o, "uid");
    if (!u) return nmo_err_set(err, NMO_ERR_DATA, "%s: tensors[%d]: missing uid", src, i);
    if (!nmo__json_int(u, 0, INT64_MAX / 2, &t->uid))
        return nmo_err_set(err, NMO_ERR_DATA, "%s: tensors[%d]: uid must be a non-negative integer", src, i);
    const char *nm = jstr(o, "name");
    snprintf(t->name, sizeof t->name, "%s", nm ? nm : "");
    char lab[120];
    snprintf(lab, sizeof lab, "uid %lld%s%s%s", (long long)t->uid, t->name[0] ? " (" : "", t->name,
             t->name[0] ? ")" : "");
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(o, "data_type");
    if (!d) return nmo_err_set(err, NMO_ERR_DATA, "%s: %s: missing data_type", src, lab);
    if (!cJSON_IsString(d) || nmo_dt_parse(&t->dt, d->valuestring) != NMO_OK)
        return nmo_err_set(err, NMO_ERR_UNKNOWN_DTYPE, "%s: %s: unknown data_type '%s' (known: %s)", src,
                           lab, cJSON_IsString(d) ? d->valuestring : "?", dt_known_list());
    const cJSON *dims = cJSON_GetObjectItemCaseSensitive(o, "dims");
    const cJSON *str = cJSON_GetObjectItemCaseSensitive(o, "strides");
    if (!cJSON_IsArray(dims)) return nmo_err_set(err, NMO_ERR_DATA, "%s: %s: missing dims", src, lab);
    int nd = cJSON_GetArraySize(dims);
    if (nd < 1 || nd > NMO_MAX_DIMS)
        return nmo_err_set(err, NMO_ERR_SHAPE, "%s: %s: %d dims (expected 1 to %d)", src, lab, nd, NMO_MAX_DIMS);
    t->ndims = nd;
    int64_t numel = 1;
    for (int k = 0; k < nd; k++) {
        if (!nmo__json_int(cJSON_GetArrayItem(dims, k), INT64_MIN / 2, INT64_MAX / 2, &t->dims[k]))
            return nmo_err_set(err, NMO_ERR_DATA, "%s: %s: dims[%d] is not an integer", src, lab, k);
        if (t->dims[k] < 1)
            return nmo_err_set(err, NMO_ERR_SHAPE, "%s: %s: dims[%d] = %lld (must be >= 1)", src, lab, k,
                               (long long)t->dims[k]);
        if (t->dims[k] > NMO_MAX_ELEMS || numel > NMO_MAX_ELEMS / t->dims[k])
            return nmo_err_set(err, NMO_ERR_SHAPE, "%s: %s: more than %lld elements", src, lab,
                               (long long)NMO_MAX_ELEMS);
        numel *= t->dims[k];
    }
    if (!str) {
        /* strides are optional in hipDNN graphs: packed row-major */
        int64_t s = 1;
        for (int k = nd - 1; k >= 0; k--) t->strides[k] = s, s *= t->dims[k];
    } else {
        if (!cJSON_IsArray(str)) return nmo_err_set(err, NMO_ERR_DATA, "%s: %s: strides is not an array", src, lab);
        int ns = cJSON_GetArraySize(str);
        if (ns != nd)
            return nmo_err_set(err, NMO_ERR_SHAPE, "%s: %s: %d dims but %d strides", src, lab, nd, ns);
        for (int k = 0; k < nd; k++)
            if (!nmo__json_int(cJSON_GetArrayItem(str, k), INT64_MIN / 2, INT64_MAX / 2, &t->strides[k]))
                return nmo_err_set(err, NMO_ERR_DATA, "%s: %s: strides[%d] is not an integer", src, lab, k);
        if (!dense(nd, t->dims, t->strides)) {
            char a[128], b[128];
            nmo__fmt_dims(a, sizeof a, nd, t->strides);
            nmo__fmt_dims(b, sizeof b, nd, t->dims);
            return nmo_err_set(err, NMO_ERR_SHAPE,
                               "%s: %s: strides %s do not describe a dense layout of dims %s "
                               "(v1 bundles are dense)", src, lab, a, b);
        }
    }
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "virtual");
    if (!v) v = cJSON_GetObjectItemCaseSensitive(o, "is_virtual");
    t->is_virtual = cJSON_IsTrue(v);
    return NMO_OK;
}

static int parse_dt_field(int *dt, const cJSON *o, const char *key, const char *src, nmo_err *err,
                          nmo_status *st)
{
    *dt = -1;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v || cJSON_IsNull(v)) return 1;
    /* hipDNN serializes an unset compute type as "unset": absent */
    if (cJSON_IsString(v) && strcasecmp(v->valuestring, "unset") == 0) return 1;
    if (!cJSON_IsString(v) || nmo_dt_parse(dt, v->valuestring) != NMO_OK) {
        *st = nmo_err_set(err, NMO_ERR_UNKNOWN_DTYPE, "%s: %s: unknown data_type '%s' (known: %s)", src,
                          key, cJSON_IsString(v) ? v->valuestring : "?", dt_known_list());
        return 0;
    }
    return 1;
}

static int graph_find_uid(const nmo_graph *g, int64_t uid)
{
    for (int i = 0; i < g->n_tensors; i++)
        if (g->t[i].uid == uid) return i;
    return -1;
}

/* Look a key up in the node: "attributes" (DESIGN §8) or hipDNN's sections. */
static const cJSON *node_item(const cJSON *node, const char *key)
{
    static const char *const sec[] = {"attributes", "inputs", "outputs", "parameters"};
    for (int s = 0; s < 4; s++) {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(node, sec[s]);
        const cJSON *v = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
        if (v && !cJSON_IsNull(v)) return v;
    }
    return NULL;
}

nmo_status nmo__graph_parse(nmo_graph *g, const cJSON *j, const char *src, const char *hint, nmo_err *err)
{
    memset(g, 0, sizeof *g);
    g->io_dt = g->compute_dt = g->inter_dt = g->node_compute_dt = -1;
    nmo_status st = NMO_OK;
    if (!cJSON_IsObject(j)) return nmo_err_set(err, NMO_ERR_DATA, "%s: not a JSON object", src);
    const cJSON *ts = cJSON_GetObjectItemCaseSensitive(j, "tensors");
    const cJSON *ns = cJSON_GetObjectItemCaseSensitive(j, "nodes");
    if (!cJSON_IsArray(ts)) return nmo_err_set(err, NMO_ERR_DATA, "%s: not a graph (no \"tensors\" array)", src);
    if (!cJSON_IsArray(ns)) return nmo_err_set(err, NMO_ERR_DATA, "%s: not a graph (no \"nodes\" array)", src);
    const char *gn = jstr(j, "name");
    snprintf(g->name, sizeof g->name, "%s", gn ? gn : "");
    if (!parse_dt_field(&g->io_dt, j, "io_data_type", src, err, &st) ||
        !parse_dt_field(&g->compute_dt, j, "compute_data_type", src, err, &st) ||
        !parse_dt_field(&g->inter_dt, j, "intermediate_data_type", src, err, &st))
        return st;

    int nt = cJSON_GetArraySize(ts);
    if (nt > NMO_GRAPH_MAX_TENSORS)
        return nmo_err_set(err, NMO_ERR_DATA, "%s: %d tensors (at most %d)", src, nt, NMO_GRAPH_MAX_TENSORS);
    for (int i = 0; i < nt; i++) {
        NMO_RETURN_IF_ERR(parse_tensor(&g->t[i], cJSON_GetArrayItem(ts, i), i, src, err));
        for (int k = 0; k < i; k++)
            if (g->t[k].uid == g->t[i].uid)
                return nmo_err_set(err, NMO_ERR_DATA, "%s: duplicate tensor uid %lld (tensors[%d] and tensors[%d])",
                                   src, (long long)g->t[i].uid, k, i);
        g->n_tensors = i + 1;
    }

    int nn = cJSON_GetArraySize(ns);
    if (nn == 0) return nmo_err_set(err, NMO_ERR_DATA, "%s: no nodes", src);
    if (nn > 1)
        return nmo_err_set(err, NMO_ERR_UNSUPPORTED, "%s: %d nodes (numoracle evaluates single-node graphs)", src, nn);
    const cJSON *node = cJSON_GetArrayItem(ns, 0);
    if (!cJSON_IsObject(node)) return nmo_err_set(err, NMO_ERR_DATA, "%s: nodes[0] is not an object", src);
    const char *nname = jstr(node, "name"), *ntype = jstr(node, "type");
    if (!ntype) ntype = jstr(node, "attributes_type");
    snprintf(g->node_name, sizeof g->node_name, "%s", nname ? nname : "");
    snprintf(g->node_type, sizeof g->node_type, "%s", ntype ? ntype : "");
    if (!parse_dt_field(&g->node_compute_dt, node, "compute_data_type", src, err, &st)) return st;

    g->op = op_lookup(hint);
    if (!g->op) g->op = op_lookup(ntype);
    if (!g->op) g->op = op_lookup(nname);
    if (!g->op)
        return nmo_err_set(err, NMO_ERR_UNKNOWN_OP, "%s: node '%s': unknown operation (type '%s'; see numoracle ops)",
                           src, g->node_name, g->node_type);
    const nmo_op *op = g->op;
    nmo_op_operation(g->operation, sizeof g->operation, op);

    /* wiring: every operator tensor names a distinct graph tensor */
    int used[NMO_GRAPH_MAX_TENSORS] = {0};
    for (int io = 0; io < 2; io++) {
        int n = io ? op->n_out : op->n_in;
        for (int k = 0; k < n; k++) {
            const char *tn = io ? op->out[k].name : op->in[k].name;
            char key[96];
            snprintf(key, sizeof key, "%s_tensor_uid", tn);
            const cJSON *v = node_item(node, key);
            int64_t uid;
            if (!v) return nmo_err_set(err, NMO_ERR_DATA, "%s: node '%s': missing attribute '%s'", src, g->node_name, key);
            if (!nmo__json_int(v, 0, INT64_MAX / 2, &uid))
                return nmo_err_set(err, NMO_ERR_DATA, "%s: node '%s': %s must be a non-negative integer", src,
                                   g->node_name, key);
            int ti = graph_find_uid(g, uid);
            if (ti < 0)
                return nmo_err_set(err, NMO_ERR_DATA, "%s: node '%s': %s %lld is not a tensor of the graph", src,
                                   g->node_name, key, (long long)uid);
            if (used[ti])
                return nmo_err_set(err, NMO_ERR_DATA, "%s: node '%s': tensor uid %lld is wired twice", src,
                                   g->node_name, (long long)uid);
            if (g->t[ti].is_virtual)
                return nmo_err_set(err, NMO_ERR_DATA, "%s: uid %lld (%s): virtual, but the node's %s", src,
                                   (long long)uid, tn, io ? "output" : "input");
            used[ti] = 1;
            if (!g->t[ti].name[0]) snprintf(g->t[ti].name, sizeof g->t[ti].name, "%s", tn);
            if (io) g->out_t[k] = ti;
            else g->in_t[k] = ti;
        }
    }
    for (int i = 0; i < g->n_tensors; i++)
        if (!used[i] && !g->t[i].is_virtual)
            return nmo_err_set(err, NMO_ERR_DATA, "%s: uid %lld%s%s%s: not used by node '%s'", src,
                               (long long)g->t[i].uid, g->t[i].name[0] ? " (" : "", g->t[i].name,
                               g->t[i].name[0] ? ")" : "", g->node_name);
    for (int k = 0; k < op->n_param; k++) {
        const cJSON *v = node_item(node, op->param[k].name);
        g->param[k] = op->param[k].def;
        if (!v) continue;
        if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
            return nmo_err_set(err, NMO_ERR_DATA, "%s: node '%s': attribute '%s' must be a finite number", src,
                               g->node_name, op->param[k].name);
        g->param[k] = v->valuedouble;
        g->param_set[k] = 1;
    }
    return NMO_OK;
}

nmo_status nmo_graph_parse(nmo_graph *g, const cJSON *j, const char *src, nmo_err *err)
{
    return nmo__graph_parse(g, j, src, NULL, err);
}

nmo_status nmo_graph_read(nmo_graph *g, const char *path, nmo_err *err)
{
    cJSON *j = nmo__read_json(path, err);
    if (!j) return NMO_ERR_PARSE;
    nmo_status s = nmo_graph_parse(g, j, path, err);
    cJSON_Delete(j);
    return s;
}

void nmo__graph_name_tokens(const cJSON *j, char *op, size_t nop, char *layout, size_t nl, char *dtype,
                            size_t nd)
{
    snprintf(op, nop, "unknown");
    snprintf(layout, nl, "unknown");
    snprintf(dtype, nd, "unknown");
    const cJSON *ns = cJSON_GetObjectItemCaseSensitive(j, "nodes");
    const cJSON *node = cJSON_IsArray(ns) ? cJSON_GetArrayItem(ns, 0) : NULL;
    if (node) {
        const char *ty = jstr(node, "type");
        if (!ty) ty = jstr(node, "attributes_type");
        const nmo_op *o = op_lookup(ty);
        if (!o) o = op_lookup(jstr(node, "name"));
        if (o) nmo_op_operation(op, nop, o);
        else if (ty && *ty) {
            size_t l = strlen(ty);
            if (l > 10 && strcmp(ty + l - 10, "Attributes") == 0) l -= 10;
            snprintf(op, nop, "%.*s", (int)l, ty);
        }
    }
    int dt;
    const char *io = jstr(j, "io_data_type");
    const cJSON *ts = cJSON_GetObjectItemCaseSensitive(j, "tensors");
    if (io && nmo_dt_parse(&dt, io) == NMO_OK) snprintf(dtype, nd, "%s", nmo_dt_token(dt));
    if (cJSON_IsArray(ts)) {
        nmo_gtensor t[NMO_GRAPH_MAX_TENSORS];
        int n = 0;
        for (int i = 0; i < cJSON_GetArraySize(ts) && n < NMO_GRAPH_MAX_TENSORS; i++) {
            nmo_err e;
            if (parse_tensor(&t[n], cJSON_GetArrayItem(ts, i), i, "", &e) == NMO_OK) n++;
        }
        if (n) {
            snprintf(layout, nl, "%s", layout_of(t, n));
            if (strcmp(dtype, "unknown") == 0) snprintf(dtype, nd, "%s", nmo_dt_token(t[0].dt));
        }
    }
}

nmo_status nmo_graph_from_case(nmo_graph *g, const nmo_case *c, const char *name, nmo_layout layout,
                               nmo_err *err)
{
    const nmo_op *op = c->op;
    memset(g, 0, sizeof *g);
    snprintf(g->name, sizeof g->name, "%s", name ? name : "");
    g->op = op;
    nmo_op_operation(g->operation, sizeof g->operation, op);
    snprintf(g->node_name, sizeof g->node_name, "%s", op->name);
    snprintf(g->node_type, sizeof g->node_type, "%sAttributes", g->operation);
    g->io_dt = (int)c->plan.in;
    g->compute_dt = (int)c->plan.compute;
    g->inter_dt = (int)c->plan.inter;
    g->node_compute_dt = (int)c->plan.acc;
    int rank3 = 0;
    for (int io = 0; io < 2; io++) {
        int n = io ? c->n_out : c->n_in;
        for (int k = 0; k < n; k++) {
            const nmo_tensor *src = io ? &c->out[k] : &c->in[k];
            const char *tn = io ? op->out[k].name : op->in[k].name;
            for (int q = 0; q < g->n_tensors; q++)
                if (strcmp(g->t[q].name, tn) == 0)
                    return nmo_err_set(err, NMO_ERR_UNSUPPORTED, "op %s: tensor name '%s' used twice", op->name, tn);
            nmo_gtensor *t = &g->t[g->n_tensors];
            t->uid = g->n_tensors;
            snprintf(t->name, sizeof t->name, "%s", tn);
            t->dt = (int)src->dtype;
            if (!nmo_dt_name(t->dt))
                return nmo_err_set(err, NMO_ERR_UNSUPPORTED, "op %s: tensor %s has dtype %s, which hipDNN graphs cannot name",
                                   op->name, tn, nmo_fmt_name(src->dtype));
            t->ndims = src->ndims;
            memcpy(t->dims, src->dims, sizeof t->dims);
            memcpy(t->strides, src->strides, sizeof t->strides);
            if (layout == NMO_LAYOUT_CHANNELS_LAST && t->ndims >= 3) {
                channels_last(t->ndims, t->dims, t->strides);
                rank3 = 1;
            }
            if (io) g->out_t[k] = g->n_tensors;
            else g->in_t[k] = g->n_tensors;
            g->n_tensors++;
        }
    }
    if (layout == NMO_LAYOUT_CHANNELS_LAST && !rank3)
        return nmo_err_set(err, NMO_ERR_SHAPE, "layout nhwc: op %s has no tensor of rank >= 3 in this shape", op->name);
    for (int k = 0; k < op->n_param; k++) g->param[k] = c->param[k], g->param_set[k] = 1;
    if (!nmo_dt_name(g->io_dt) || !nmo_dt_name(g->compute_dt) || !nmo_dt_name(g->inter_dt) ||
        !nmo_dt_name(g->node_compute_dt))
        return nmo_err_set(err, NMO_ERR_UNSUPPORTED, "op %s: the plan uses a format hipDNN graphs cannot name (tf32)",
                           op->name);
    return NMO_OK;
}

static cJSON *int_array(int n, const int64_t *v)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber((double)v[i]));
    return a;
}

cJSON *nmo_graph_to_json(const nmo_graph *g)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", g->name);
    cJSON_AddStringToObject(o, "compute_data_type", nmo_dt_name(g->compute_dt));
    cJSON_AddStringToObject(o, "intermediate_data_type", nmo_dt_name(g->inter_dt));
    cJSON_AddStringToObject(o, "io_data_type", nmo_dt_name(g->io_dt));
    cJSON *ts = cJSON_AddArrayToObject(o, "tensors");
    for (int i = 0; i < g->n_tensors; i++) {
        const nmo_gtensor *t = &g->t[i];
        cJSON *to = cJSON_CreateObject();
        cJSON_AddNumberToObject(to, "uid", (double)t->uid);
        cJSON_AddStringToObject(to, "name", t->name);
        cJSON_AddStringToObject(to, "data_type", nmo_dt_name(t->dt));
        cJSON_AddItemToObject(to, "dims", int_array(t->ndims, t->dims));
        cJSON_AddItemToObject(to, "strides", int_array(t->ndims, t->strides));
        cJSON_AddBoolToObject(to, "virtual", t->is_virtual);
        cJSON_AddItemToArray(ts, to);
    }
    cJSON *ns = cJSON_AddArrayToObject(o, "nodes");
    cJSON *n = cJSON_CreateObject();
    cJSON_AddStringToObject(n, "name", g->node_name);
    cJSON_AddStringToObject(n, "type", g->node_type);
    cJSON_AddStringToObject(n, "compute_data_type", nmo_dt_name(g->node_compute_dt));
    cJSON *at = cJSON_AddObjectToObject(n, "attributes");
    const nmo_op *op = g->op;
    for (int io = 0; io < 2; io++) {
        int cnt = io ? op->n_out : op->n_in;
        for (int k = 0; k < cnt; k++) {
            char key[96];
            snprintf(key, sizeof key, "%s_tensor_uid", io ? op->out[k].name : op->in[k].name);
            cJSON_AddNumberToObject(at, key, (double)g->t[io ? g->out_t[k] : g->in_t[k]].uid);
        }
    }
    for (int k = 0; k < op->n_param; k++) cJSON_AddNumberToObject(at, op->param[k].name, g->param[k]);
    cJSON_AddItemToArray(ns, n);
    return o;
}

/* ---- loading ------------------------------------------------------------------------ */

static void tlabel(char *buf, size_t n, const nmo_gtensor *t)
{
    snprintf(buf, n, "uid %lld (%s)", (long long)t->uid, t->name);
}

static int64_t gspan(const nmo_gtensor *t)
{
    int64_t s = 1;
    for (int k = 0; k < t->ndims; k++) s += (t->dims[k] - 1) * t->strides[k];
    return s;
}

static int64_t goffset(const nmo_gtensor *t, int64_t i)
{
    int64_t off = 0;
    for (int k = t->ndims - 1; k >= 0; k--) {
        off += (i % t->dims[k]) * t->strides[k];
        i /= t->dims[k];
    }
    return off;
}

static int64_t gnumel(const nmo_gtensor *t)
{
    int64_t n = 1;
    for (int k = 0; k < t->ndims; k++) n *= t->dims[k];
    return n;
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
    int64_t span = gspan(t);
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
    int64_t n = gnumel(t);
    if (t->dt == NMO_DT_INT32 || t->dt == NMO_DT_INT64) {
        for (int64_t i = 0; i < n; i++) {
            double v;
            nmo_raw_get_f64(&v, raw, t->dt, goffset(t, i));
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
    if (src.dtype == dst->dtype && is_rowmajor(t)) {
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
    if (t->dt == (int)dst->dtype && is_rowmajor(t)) {
        char lab[120];
        tlabel(lab, sizeof lab, t);
        struct stat st;
        if (stat(path, &st) != 0) return nmo_err_set(err, NMO_ERR_IO, "%s: %s: missing tensor file", path, lab);
        if (!S_ISREG(st.st_mode)) return nmo_err_set(err, NMO_ERR_IO, "%s: %s: not a regular file", path, lab);
        if (root && !nmo__inside(root, path))
            return nmo_err_set(err, NMO_ERR_DATA, "%s: %s: resolves outside the bundle", path, lab);
        int64_t span = gspan(t);
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
    if (is_rowmajor(t)) {
        *out = raw;
        return NMO_OK;
    }
    int64_t n = gnumel(t);
    *out = malloc((size_t)n);
    if (!*out) {
        free(raw);
        return nmo_err_set(err, NMO_ERR_NOMEM, "out of memory");
    }
    for (int64_t q = 0; q < n; q++) (*out)[q] = raw[goffset(t, q)];
    free(raw);
    return NMO_OK;
}

/* setup only: the case's tensor descriptions, no storage (stored-bounds judging) */
static nmo_status case_describe(nmo_case *c, const nmo_op *op, const nmo_plan *plan, int ns, const int64_t *shape,
                                nmo_err *err)
{
    memset(c, 0, sizeof *c);
    c->op = op;
    c->plan = *plan;
    c->nshape = ns;
    memcpy(c->shape, shape, (size_t)ns * sizeof shape[0]);
    c->n_in = op->n_in;
    c->n_out = op->n_out;
    for (int k = 0; k < op->n_param; k++) c->param[k] = op->param[k].def;
    return op->setup(c, err);
}

/* Ordinals from bit patterns: every supported format orders its non-NaN values by
 * sign-magnitude, with +-inf one step beyond +-max (the checker's extended ordinal) and
 * -0, +0 both at 0; tf32 ignores its 13 low bits. NaN: a magnitude above inf's (or
 * above max's in formats without inf), or the fnuz NaN 0x80 (sign bit alone). */
typedef struct {
    int bits, tf32, fnuz;
    uint64_t mask, signbit, nan_above;
} ordfmt;

static void ordfmt_init(ordfmt *o, nmo_fmt f)
{
    const nmo_fmt_info *fi = nmo_fmt_get(f);
    o->bits = (int)nmo_fmt_bytes(f) * 8;
    o->tf32 = f == NMO_TF32;
    o->fnuz = !fi->has_neg_zero;
    o->signbit = 1ull << (o->bits - 1);
    o->mask = o->signbit - 1;
    uint64_t top = fi->has_inf ? nmo_fmt_encode(f, INFINITY, NMO_RNE, 0, NMO_OVF_IEEE)
                               : nmo_fmt_encode(f, fi->max_finite, NMO_RNE, 0, NMO_OVF_SAT);
    o->nan_above = top & o->mask;
}

static inline int64_t ord_of(const ordfmt *o, uint64_t b)
{
    int64_t mag = (int64_t)(b & o->mask);
    if (o->tf32) mag >>= 13;
    return (b & o->signbit) ? -mag : mag;
}

static inline int is_nan_bits(const ordfmt *o, uint64_t b)
{
    return (b & o->mask) > o->nan_above || (o->fnuz && b == o->signbit);
}

/* Raw bit pattern of element i of a packed tensor. */
static inline uint64_t bits_at_packed(const nmo_tensor *t, int64_t i)
{
    const unsigned char *p = t->data;
    switch (nmo_fmt_bytes(t->dtype)) {
    case 1: return p[i];
    case 2: { uint16_t v; memcpy(&v, p + 2 * i, 2); return v; }
    case 4: { uint32_t v; memcpy(&v, p + 4 * i, 4); return v; }
    default: { uint64_t v; memcpy(&v, p + 8 * i, 8); return v; }
    }
}

/* First index >= from whose stored set is unusual (flag bits beyond 7, a NaN bound,
 * lo > hi, the expected value e outside [lo, hi]); -1 when none. Chunks are screened by
 * the vectorized kernel; a flagged chunk is searched element by element. */
static int64_t bounds_suspect(const nmo_tensor *lo, const nmo_tensor *hi, const nmo_tensor *e, const uint8_t *fl,
                              int64_t from, int64_t n, const ordfmt *o)
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
            uint64_t l = bits_at_packed(lo, i), h = bits_at_packed(hi, i);
            int64_t ol = ord_of(o, l), oh = ord_of(o, h);
            int bad = (fl[i] & ~0x07u) || ol > oh || is_nan_bits(o, l) || is_nan_bits(o, h);
            if (!bad && e) {
                uint64_t x = bits_at_packed(e, i);
                int64_t ox = ord_of(o, x);
                bad = ox < ol || ox > oh || is_nan_bits(o, x);
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
            if (ct->ndims != gt->ndims) return 0;
            for (int d = 0; d < ct->ndims; d++)
                if (ct->dims[d] != gt->dims[d]) return 0;
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
    /* candidates: each tensor's dims; out0 dims + in0's last dim (MxNxK products) */
    int64_t cand[2 * NMO_MAX_TENSORS + 2][NMO_MAX_DIMS];
    int cn[2 * NMO_MAX_TENSORS + 2], nc = 0;
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
    if (!dt_is_float(io))
        return nmo_err_set(err, NMO_ERR_DATA, "%s: io_data_type %s is not a floating-point format", src, nmo_dt_name(io));
    nmo_plan_default(p, (nmo_fmt)io);
    const cJSON *pl = meta_get(meta, case_meta, "plan");
    const char *text = cJSON_IsString(pl) ? pl->valuestring : NULL;
    if (!text && cJSON_IsObject(pl)) text = jstr(pl, "text");
    if (text) {
        nmo_err e;
        if (nmo_plan_parse(p, text, &e) != NMO_OK)
            return nmo_err_set(err, NMO_ERR_DATA, "%s: metadata plan: %s", src, e.msg);
        return NMO_OK;
    }
    if (g->compute_dt >= 0 && dt_is_float(g->compute_dt)) p->compute = p->acc = (nmo_fmt)g->compute_dt;
    if (g->node_compute_dt >= 0 && dt_is_float(g->node_compute_dt)) p->acc = (nmo_fmt)g->node_compute_dt;
    if (g->inter_dt >= 0 && dt_is_float(g->inter_dt)) p->inter = (nmo_fmt)g->inter_dt;
    if (g->op->n_out > 0 && dt_is_float(g->t[g->out_t[0]].dt)) p->out = (nmo_fmt)g->t[g->out_t[0]].dt;
    return NMO_OK;
}

static void file_path(char *out, size_t n, const char *dir, const char *base, int64_t uid, const char *suffix)
{
    char leaf[400];
    snprintf(leaf, sizeof leaf, "%s.tensor%lld%s.bin", base, (long long)uid, suffix);
    nmo__join(out, n, dir, leaf);
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
    const char *hint = nb ? jstr(nb, "op") : NULL;
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
    s = (flags & NMO_BL_BOUNDS_ONLY) ? case_describe(&b->c, op, &plan, ns, shape, &e2)
                                     : nmo_case_init(&b->c, op, &plan, ns, shape, &e2);
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
            int ok = dt_is_float(gt->dt) ? gt->dt == (int)ct->dtype
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
    const char *fam = nb ? jstr(nb, "family") : NULL;
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
        if (g->t[i].is_virtual) continue;
        file_path(path, sizeof path, dir, base, g->t[i].uid, "");
        present += nmo__exists(path);
    }
    if (!present) return NMO_OK;

    for (int k = 0; k < op->n_in && !(flags & NMO_BL_BOUNDS_ONLY); k++) {
        const nmo_gtensor *gt = &g->t[g->in_t[k]];
        file_path(path, sizeof path, dir, base, gt->uid, "");
        if ((s = read_into(&b->c.in[k], gt, path, root, &b->payload_bytes, err)) != NMO_OK) goto fail;
        if ((s = nmo_case_check_input(&b->c, k, path, err)) != NMO_OK) goto fail; /* labels */
    }
    b->have_inputs = !(flags & NMO_BL_BOUNDS_ONLY);

    int nb_have = 0;
    for (int k = 0; k < op->n_out; k++) {
        const nmo_gtensor *gt = &g->t[g->out_t[k]];
        char lab[120];
        tlabel(lab, sizeof lab, gt);
        int with_golden = !(flags & NMO_BL_BOUNDS_ONLY);
        int64_t n = nmo_tensor_numel(&b->c.out[k]);
        enum { CH = 1024 };
        double ev[CH];
        file_path(path, sizeof path, dir, base, gt->uid, "");
        if (!with_golden) goto bounds;
        b->golden[k] = b->c.out[k];
        b->golden[k].data = NULL;
        b->golden[k].own = 0;
        if ((s = read_into(&b->golden[k], gt, path, root, &b->payload_bytes, err)) != NMO_OK) goto fail;
        for (int64_t b0 = 0; b0 < n; b0 += CH) {
            int64_t m = n - b0 < CH ? n - b0 : CH;
            nmo_tensor_load_f64(ev, &b->golden[k], b0, m, 1);
            for (int64_t i = 0; i < m; i++) {
                if (isfinite(ev[i])) continue;
                char ix[160];
                nmo__fmt_index(ix, sizeof ix, gt->ndims, gt->dims, b0 + i);
                s = nmo_err_set(err, NMO_ERR_DATA, "%s: %s: expected output holds %s at index %s (NaN/Inf golden data is rejected)",
                                path, lab, ev[i] != ev[i] ? "NaN" : "Inf", ix);
                goto fail;
            }
        }
    bounds:; /* a label labels a statement, not a declaration (C17 6.8.1) */
        /* certified bounds: lo, hi and flags come together */
        static const char *const sfx[3] = {".lo", ".hi", ".flags"};
        char bp[3][NMO_BPATH + 400];
        int have = 0;
        for (int q = 0; q < 3; q++) {
            file_path(bp[q], sizeof bp[q], dir, base, gt->uid, sfx[q]);
            have += nmo__exists(bp[q]);
        }
        if (have == 0) continue;
        for (int q = 0; q < 3; q++)
            if (!nmo__exists(bp[q])) {
                s = nmo_err_set(err, NMO_ERR_IO, "%s: %s: missing bound tensor (lo, hi and flags come together)", bp[q], lab);
                goto fail;
            }
        nmo_tensor *bt[2] = {&b->lo[k], &b->hi[k]};
        for (int q = 0; q < 2; q++) {
            *bt[q] = b->c.out[k];
            bt[q]->data = NULL;
            bt[q]->own = 0;
            if ((s = read_into(bt[q], gt, bp[q], root, &b->payload_bytes, err)) != NMO_OK) goto fail;
        }
        if ((s = read_flags(&b->flags[k], gt, bp[2], root, &b->payload_bytes, err)) != NMO_OK) goto fail;
        {
            /* integrity of the stored sets, on ordinals; anything unusual is re-examined
             * on exact values for its message */
            ordfmt o;
            ordfmt_init(&o, b->c.out[k].dtype);
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
                goto fail;
            }
        }
        nb_have++;
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

static inline int64_t width_at(const void *w, int bits, int64_t i)
{
    switch (bits) {
    case 8: return ((const uint8_t *)w)[i];
    case 16: return ((const uint16_t *)w)[i];
    case 32: return ((const uint32_t *)w)[i];
    default: return (int64_t)((const uint64_t *)w)[i];
    }
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
    ordfmt o;
    ordfmt_init(&o, of);
    int bytes = (int)nmo_fmt_bytes(of);
    rep->mode = NMO_MODE_ESCALATE;
    rep->max_ulps = nmo_plan_max_ulps(&c->plan);
    rep->n_out = c->n_out;
    enum { CH = 2048 };
    uint8_t ok[CH];
    uint64_t wv[CH]; /* widths in the format's storage type */
    /* the checker's "worst" order, kept per class: the farthest FAIL, else the widest
     * INCONCLUSIVE, else the widest PASS (first occurrence of each maximum) */
    nmo_elem_info wf, wi;
    int has_f = 0, has_i = 0;
    int64_t n_pass = 0, width_max = 0, wp_w = 0, wp_i = -1;
    int wp_k = 0;
    memset(&wf, 0, sizeof wf);
    memset(&wi, 0, sizeof wi);
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
            for (int64_t i = 0; i < m; i++) {
                if (ok[i]) continue;
                int64_t idx = b0 + i;
                uint64_t lbi = bits_at_packed(&b->lo[k], idx), hbi = bits_at_packed(&b->hi[k], idx),
                         cbi = bits_at_packed(&cand[k], idx);
                int64_t ol = ord_of(&o, lbi), oh = ord_of(&o, hbi), oc = ord_of(&o, cbi);
                double v = nmo_fmt_decode(of, cbi), rl = nmo_fmt_decode(of, lbi), rh = nmo_fmt_decode(of, hbi);
                uint32_t f = fl[i];
                nmo_verdict vd;
                double dist = 0;
                int64_t width = 0;
                vd = nmo__verdict_in_r(v, rl, rh, f);
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
                        if (flags & NMO_JUDGE_WIDTHS) rep->width_hist[width < NMO_WIDTH_HIST ? width : NMO_WIDTH_HIST]++;
                        if (width > width_max) width_max = width;
                    }
                }
                if (keep_verdicts) rep->verdicts[k][idx] = (uint8_t)vd;
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
                    n_pass++;
                    rep->n_scaled += (f & NMO_BF_SCALED) != 0;
                    if (width > kmax || kmax_i < 0 || (width == kmax && idx < kmax_i)) kmax = width, kmax_i = idx;
                } else if (vd == NMO_FAIL) {
                    rep->n_fail++;
                    if (!has_f || dist > wf.dist_ulps) wf = info, has_f = 1;
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
                    if (!has_i || width > wi.width_ulps) wi = info, has_i = 1;
                }
            }
        }
        if (kmax > width_max) width_max = kmax;
        if (kmax_i >= 0 && (wp_i < 0 || kmax > wp_w)) wp_w = kmax, wp_i = kmax_i, wp_k = k;
    }
    rep->n_pass = n_pass;
    rep->width_max = width_max;
    if (has_f) rep->worst = wf;
    else if (has_i) rep->worst = wi;
    else if (wp_i >= 0) {
        nmo_elem_info *w = &rep->worst;
        uint64_t lbi = bits_at_packed(&b->lo[wp_k], wp_i), hbi = bits_at_packed(&b->hi[wp_k], wp_i),
                 cbi = bits_at_packed(&cand[wp_k], wp_i);
        w->k = wp_k;
        w->index = wp_i;
        w->cand = nmo_fmt_decode(of, cbi);
        w->rlo = nmo_fmt_decode(of, lbi);
        w->rhi = nmo_fmt_decode(of, hbi);
        w->enc_lo = w->enc_hi = NAN;
        w->dist_ulps = 0;
        w->width_ulps = wp_w;
        w->verdict = NMO_PASS;
    }
    rep->has_worst = has_f || has_i || wp_i >= 0;
    rep->verdict = rep->n_fail ? NMO_FAIL : rep->n_inconc ? NMO_INCONCLUSIVE : NMO_PASS;
    return NMO_OK;
}

/* ---- writing certified bundles -------------------------------------------------------- */

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
    size_t bytes = (size_t)gspan(gt) * nmo_fmt_bytes(st.dtype);
    if (is_rowmajor(gt)) return nmo__write_file(path, packed->data, bytes, err);
    NMO_RETURN_IF_ERR(nmo_tensor_alloc(&st, err));
    int64_t n = gnumel(gt);
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
    nmo_tensor ex[NMO_MAX_TENSORS], tl[NMO_MAX_TENSORS], th[NMO_MAX_TENSORS];
    memset(ex, 0, sizeof ex), memset(tl, 0, sizeof tl), memset(th, 0, sizeof th);
    cJSON *meta = NULL;
    char *text = NULL;
    double *absv = NULL, *devv = NULL;
    int64_t ntot = 0, n_inf = 0, n_wide = 0, n_nanok = 0;
    for (int k = 0; k < c->n_out; k++) ntot += nmo_tensor_numel(&c->out[k]);
    absv = malloc((size_t)ntot * sizeof(double));
    devv = malloc((size_t)ntot * sizeof(double));
    if (!absv || !devv) {
        s = nmo_err_set(err, NMO_ERR_NOMEM, "out of memory");
        goto done;
    }
    if (o->informative && rep.width_max > 0) {
        int64_t wide = 0;
        for (int k = 0; k < c->n_out; k++) {
            int64_t n = nmo_tensor_numel(&c->out[k]);
            for (int64_t i = 0; i < n; i++) wide += (rep.bflags[k][i] & NMO_BF_WIDE) != 0;
        }
        if (wide) {
            s = nmo_err_set(err, NMO_ERR_DATA,
                            "%lld of %lld output elements have reachable sets wider than max_ulps (%ld): INCONCLUSIVE for "
                            "every candidate; choose another seed or family",
                            (long long)wide, (long long)ntot, rep.max_ulps);
            goto done;
        }
    }
    int64_t q = 0;
    for (int k = 0; k < c->n_out && s == NMO_OK; k++) {
        nmo_tensor *ts[3] = {&ex[k], &tl[k], &th[k]};
        for (int t = 0; t < 3; t++) {
            *ts[t] = c->out[k];
            ts[t]->data = NULL;
            ts[t]->own = 0;
            if ((s = nmo_tensor_alloc(ts[t], err)) != NMO_OK) goto done;
        }
        const nmo_gtensor *gt = &g.t[g.out_t[k]];
        int64_t n = nmo_tensor_numel(&c->out[k]);
        for (int64_t i = 0; i < n; i++) {
            uint8_t f = rep.bflags[k][i];
            double rl = rep.rlo[k][i], rh = rep.rhi[k][i];
            const nmo_fenc *e = &rep.enc[k][i];
            if ((f & (NMO_BF_NONFINITE | NMO_BF_MUST_NAN)) || !isfinite(e->lo) || !isfinite(e->hi)) {
                char ix[160];
                nmo__fmt_index(ix, sizeof ix, gt->ndims, gt->dims, i);
                s = nmo_err_set(err, NMO_ERR_DATA,
                                "golden output %s (uid %lld) at index %s: the certified enclosure [%g, %g] is not finite; "
                                "NaN/Inf goldens are rejected (choose another family or seed)",
                                op->out[k].name, (long long)gt->uid, ix, e->lo, e->hi);
                goto done;
            }
            /* expected value: the enclosure's midpoint rounded to out, kept inside R */
            double mid = e->lo + 0.5 * (e->hi - e->lo);
            double v = nmo_fmt_round(c->plan.out, mid, NMO_RNE, c->plan.ftz);
            if (v < rl) v = rl;
            if (v > rh) v = rh;
            nmo_tensor_set_bits(&ex[k], i, nmo__bound_bits(c->plan.out, v));
            nmo_tensor_set_bits(&tl[k], i, nmo__bound_bits(c->plan.out, rl));
            nmo_tensor_set_bits(&th[k], i, nmo__bound_bits(c->plan.out, rh));
            absv[q] = fabs(v);
            devv[q] = fmax(v - rl, rh - v);
            q++;
            n_wide += (f & NMO_BF_WIDE) != 0;
            n_nanok += (f & NMO_BF_NAN_OK) != 0;
            n_inf += !(f & NMO_BF_WIDE);
        }
    }

    /* files: graph, inputs, expected outputs and bounds */
    char path[NMO_BPATH + 400], leaf[400];
    cJSON *gj = nmo_graph_to_json(&g);
    text = nmo__json_print(gj, 1);
    cJSON_Delete(gj);
    snprintf(leaf, sizeof leaf, "%s.json", o->name);
    nmo__join(path, sizeof path, dir, leaf);
    if (!text || (!o->no_graph_file && (s = nmo__write_file(path, text, strlen(text), err)) != NMO_OK)) {
        if (!text) s = nmo_err_set(err, NMO_ERR_NOMEM, "out of memory");
        goto done;
    }
    free(text);
    text = NULL;
    int64_t payload = 0;
    for (int k = 0; k < c->n_in; k++) {
        const nmo_gtensor *gt = &g.t[g.in_t[k]];
        file_path(path, sizeof path, dir, o->name, gt->uid, "");
        if ((s = store_tensor(path, gt, &c->in[k], err)) != NMO_OK) goto done;
        payload += gspan(gt) * (int64_t)nmo_dt_bytes(gt->dt);
    }
    cJSON *outs = cJSON_CreateArray();
    for (int k = 0; k < c->n_out; k++) {
        const nmo_gtensor *gt = &g.t[g.out_t[k]];
        static const char *const sfx[3] = {"", ".lo", ".hi"};
        nmo_tensor *ts[3] = {&ex[k], &tl[k], &th[k]};
        cJSON *oo = cJSON_CreateObject();
        cJSON_AddNumberToObject(oo, "uid", (double)gt->uid);
        cJSON_AddStringToObject(oo, "name", gt->name);
        for (int t = 0; t < 3; t++) {
            file_path(path, sizeof path, dir, o->name, gt->uid, sfx[t]);
            if (s == NMO_OK) s = store_tensor(path, gt, ts[t], err);
            payload += gspan(gt) * (int64_t)nmo_dt_bytes(gt->dt);
        }
        /* flags, one byte per element in the output's storage order */
        int64_t span = gspan(gt), n = gnumel(gt);
        uint8_t *fb = calloc((size_t)span, 1);
        if (!fb && s == NMO_OK) s = nmo_err_set(err, NMO_ERR_NOMEM, "out of memory");
        if (fb) {
            for (int64_t i = 0; i < n; i++) fb[goffset(gt, i)] = rep.bflags[k][i];
            file_path(path, sizeof path, dir, o->name, gt->uid, ".flags");
            if (s == NMO_OK) s = nmo__write_file(path, fb, (size_t)span, err);
            free(fb);
        }
        payload += span;
        char lf[400];
        snprintf(lf, sizeof lf, "%s.tensor%lld.lo.bin", o->name, (long long)gt->uid);
        cJSON_AddStringToObject(oo, "lo", lf);
        snprintf(lf, sizeof lf, "%s.tensor%lld.hi.bin", o->name, (long long)gt->uid);
        cJSON_AddStringToObject(oo, "hi", lf);
        snprintf(lf, sizeof lf, "%s.tensor%lld.flags.bin", o->name, (long long)gt->uid);
        cJSON_AddStringToObject(oo, "flags", lf);
        cJSON_AddNumberToObject(oo, "elements", (double)n);
        cJSON_AddItemToArray(outs, oo);
    }
    if (s != NMO_OK) {
        cJSON_Delete(outs);
        goto done;
    }

    /* metadata: RFC fields, then what a later judge needs (plan, op, shape) */
    char plan_text[512], ref[256], opn[160];
    nmo_plan_to_string(&c->plan, plan_text, sizeof plan_text);
    snprintf(ref, sizeof ref, "numoracle %s certified interval engine (MPFR %s, GMP %s)", NMO_VERSION,
             mpfr_get_version(), gmp_version);
    meta = cJSON_CreateObject();
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
    cJSON_AddItemToObject(nb, "shape", int_array(c->nshape, sh));
    cJSON_AddStringToObject(nb, "family", o->family ? o->family : "gaussian");
    if (o->inputs) cJSON_AddItemToObject(nb, "inputs", cJSON_Duplicate(o->inputs, 1));
    cJSON *pa = cJSON_AddObjectToObject(nb, "params");
    for (int k = 0; k < op->n_param; k++) cJSON_AddNumberToObject(pa, op->param[k].name, c->param[k]);
    cJSON_AddItemToObject(nb, "plan_json", nmo_plan_to_json(&c->plan));
    cJSON_AddStringToObject(nb, "engine", mode == NMO_MODE_CERT ? "certified" : "fast+escalation");
    cJSON_AddNumberToObject(nb, "max_ulps", (double)rep.max_ulps);
    cJSON_AddNumberToObject(nb, "escalated_elements", (double)rep.n_escalated);
    cJSON_AddNumberToObject(nb, "width_ulps_median", nmo_report_width_quantile(&rep, 0.5));
    cJSON_AddNumberToObject(nb, "width_ulps_max", (double)rep.width_max);
    cJSON_AddNumberToObject(nb, "elements", (double)ntot);
    cJSON_AddNumberToObject(nb, "informative", (double)n_inf);
    cJSON_AddNumberToObject(nb, "wide", (double)n_wide);
    cJSON_AddNumberToObject(nb, "nan_possible", (double)n_nanok);
    if (o->tier) cJSON_AddStringToObject(nb, "tier", o->tier);
    cJSON_AddItemToObject(nb, "outputs", outs);
    if (o->forward_source) cJSON_AddItemToObject(meta, "forward_source", cJSON_Duplicate(o->forward_source, 1));

    if (!o->no_tolerance) {
        /* The certified envelope as a static tolerance: every plan-following value c lies in
         * R, and so does e, hence |c - e| <= max(e - lo, hi - e) =: dev. Elements below the
         * 10th percentile of |e| (and zeros) are covered by atol, the rest by rtol; both are
         * widened by 2^-40 relative so that the comparison's own rounding cannot bite. */
        double *sorted = malloc((size_t)ntot * sizeof(double));
        if (!sorted) {
            s = nmo_err_set(err, NMO_ERR_NOMEM, "out of memory");
            goto done;
        }
        memcpy(sorted, absv, (size_t)ntot * sizeof(double));
        qsort(sorted, (size_t)ntot, sizeof(double), cmp_dbl);
        double thr = sorted[(size_t)((double)(ntot - 1) * 0.1)];
        free(sorted);
        double atol = 0, rtol = 0;
        for (int64_t i = 0; i < ntot; i++) {
            if (absv[i] == 0 || absv[i] < thr) atol = fmax(atol, devv[i]);
            else rtol = fmax(rtol, devv[i] / absv[i]);
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
        cJSON_AddStringToObject(cal, "calibrated_at", o->generated_at ? o->generated_at : "");
    }
    text = nmo__json_print(meta, 1);
    snprintf(leaf, sizeof leaf, "%s.meta.json", o->name);
    nmo__join(path, sizeof path, dir, leaf);
    if (!text) s = nmo_err_set(err, NMO_ERR_NOMEM, "out of memory");
    else s = nmo__write_file(path, text, strlen(text), err);
    if (s == NMO_OK && info)
        snprintf(info, info_len,
                 "elements=%lld informative=%lld wide=%lld width_ulps_median=%g width_ulps_max=%lld "
                 "escalated=%lld payload=%lld",
                 (long long)ntot, (long long)n_inf, (long long)n_wide, nmo_report_width_quantile(&rep, 0.5),
                 (long long)rep.width_max, (long long)rep.n_escalated, (long long)payload);
done:
    free(text);
    free(absv);
    free(devv);
    cJSON_Delete(meta);
    for (int k = 0; k < NMO_MAX_TENSORS; k++) {
        nmo_tensor_free(&ex[k]);
        nmo_tensor_free(&tl[k]);
        nmo_tensor_free(&th[k]);
    }
    nmo_report_free(&rep);
    return s;
}
