/* numoracle: golden bundles — the graph JSON: reading hipDNN graphs into an nmo_graph
 * bound to a registry operator, and writing ours (DESIGN §8, RFC 0011 "The Bundle").
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
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "bundle_priv.h"

int nmo__is_graph_json(const cJSON *j)
{
    return cJSON_IsObject(j) &&
           (cJSON_GetObjectItemCaseSensitive(j, "tensors") || cJSON_GetObjectItemCaseSensitive(j, "nodes"));
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
        if (!ts[i].is_virtual && is_channels_last(&ts[i]) && !nmo__is_rowmajor(&ts[i]))
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
    const char *nm = nmo__jstr(o, "name");
    snprintf(t->name, sizeof t->name, "%s", nm ? nm : "");
    char lab[120];
    snprintf(lab, sizeof lab, "uid %lld%s%s%s", (long long)t->uid, t->name[0] ? " (" : "", t->name,
             t->name[0] ? ")" : "");
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(o, "data_type");
    if (!d) return nmo_err_set(err, NMO_ERR_DATA, "%s: %s: missing data_type", src, lab);
    if (!cJSON_IsString(d) || nmo_dt_parse(&t->dt, d->valuestring) != NMO_OK)
        return nmo_err_set(err, NMO_ERR_UNKNOWN_DTYPE, "%s: %s: unknown data_type '%s' (known: %s)", src,
                           lab, cJSON_IsString(d) ? d->valuestring : "?", nmo__dt_known_list());
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
    /* hipDNN's scalar tensors (epsilon) carry their value in the graph: no file */
    const cJSON *val = cJSON_GetObjectItemCaseSensitive(o, "value");
    if (val && !cJSON_IsNull(val)) {
        if (!cJSON_IsNumber(val) || !isfinite(val->valuedouble))
            return nmo_err_set(err, NMO_ERR_DATA, "%s: %s: value must be a finite number", src, lab);
        if (numel != 1)
            return nmo_err_set(err, NMO_ERR_SHAPE, "%s: %s: a value tensor must hold one element", src, lab);
        t->has_value = 1;
        t->value = val->valuedouble;
    }
    return NMO_OK;
}

/* hipDNN's older graphs name the graph's types io_type, compute_type, intermediate_type. */
static const char *dt_alias(const char *key)
{
    return strcmp(key, "io_data_type") == 0 ? "io_type"
           : strcmp(key, "compute_data_type") == 0 ? "compute_type"
           : strcmp(key, "intermediate_data_type") == 0 ? "intermediate_type" : NULL;
}

static int parse_dt_field(int *dt, const cJSON *o, const char *key, const char *src, nmo_err *err,
                          nmo_status *st)
{
    *dt = -1;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v && dt_alias(key)) v = cJSON_GetObjectItemCaseSensitive(o, key = dt_alias(key));
    if (!v || cJSON_IsNull(v)) return 1;
    /* hipDNN serializes an unset compute type as "unset": absent */
    if (cJSON_IsString(v) && strcasecmp(v->valuestring, "unset") == 0) return 1;
    if (!cJSON_IsString(v) || nmo_dt_parse(dt, v->valuestring) != NMO_OK) {
        *st = nmo_err_set(err, NMO_ERR_UNKNOWN_DTYPE, "%s: %s: unknown data_type '%s' (known: %s)", src,
                          key, cJSON_IsString(v) ? v->valuestring : "?", nmo__dt_known_list());
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

/* Every tensor of the graph is used by the node (virtual ones aside). */
static nmo_status graph_finish(nmo_graph *g, const int *used, const char *src, nmo_err *err)
{
    nmo_op_operation(g->operation, sizeof g->operation, g->op);
    for (int i = 0; i < g->n_tensors; i++)
        if (!used[i] && !g->t[i].is_virtual)
            return nmo_err_set(err, NMO_ERR_DATA, "%s: uid %lld%s%s%s: not used by node '%s'", src,
                               (long long)g->t[i].uid, g->t[i].name[0] ? " (" : "", g->t[i].name,
                               g->t[i].name[0] ? ")" : "", g->node_name);
    return NMO_OK;
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
    const char *gn = nmo__jstr(j, "name");
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
    const char *nname = nmo__jstr(node, "name"), *ntype = nmo__jstr(node, "type");
    if (!ntype) ntype = nmo__jstr(node, "attributes_type");
    snprintf(g->node_name, sizeof g->node_name, "%s", nname ? nname : "");
    snprintf(g->node_type, sizeof g->node_type, "%s", ntype ? ntype : "");
    if (!parse_dt_field(&g->node_compute_dt, node, "compute_data_type", src, err, &st)) return st;

    /* the operator: the hint, our node type, hipDNN's node type (its own wiring and
     * semantics checks), then the node name */
    int used[NMO_GRAPH_MAX_TENSORS] = {0}, hd = 0;
    if (nmo__hipdnn_type(ntype, node) || (!nmo__op_lookup(hint) && !nmo__op_lookup(ntype))) {
        /* a hipDNN node type is bound by its own keys even when metadata names the op */
        NMO_RETURN_IF_ERR(nmo__hipdnn_bind(g, node, used, src, &hd, err));
        const nmo_op *want = nmo__op_lookup(hint);
        if (hd && want && want != g->op)
            return nmo_err_set(err, NMO_ERR_DATA, "%s: node '%s': type %s binds operator %s, the metadata says %s", src,
                               g->node_name, g->node_type, g->op->name, want->name);
        if (hd) return graph_finish(g, used, src, err);
    }
    g->op = nmo__op_lookup(hint);
    if (!g->op) g->op = nmo__op_lookup(ntype);
    if (!g->op) g->op = nmo__op_lookup(nname);
    if (!g->op)
        return nmo_err_set(err, NMO_ERR_UNKNOWN_OP,
                           "%s: node '%s': unsupported operation '%s' (no registry operator; see numoracle ops)", src,
                           g->node_name, g->node_type);
    const nmo_op *op = g->op;

    /* wiring: every operator tensor names a distinct graph tensor */
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
    return graph_finish(g, used, src, err);
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
        const char *ty = nmo__jstr(node, "type");
        if (!ty) ty = nmo__jstr(node, "attributes_type");
        const nmo_op *o = nmo__op_lookup(ty);
        if (!o) o = nmo__hipdnn_op(ty, node);
        if (!o) o = nmo__op_lookup(nmo__jstr(node, "name"));
        if (o) nmo_op_operation(op, nop, o);
        else if (ty && *ty) {
            size_t l = strlen(ty);
            if (l > 10 && strcmp(ty + l - 10, "Attributes") == 0) l -= 10;
            snprintf(op, nop, "%.*s", (int)l, ty);
        }
    }
    int dt;
    const char *io = nmo__jstr(j, "io_data_type");
    if (!io) io = nmo__jstr(j, "io_type");
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

cJSON *nmo__int_array(int n, const int64_t *v)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber((double)v[i]));
    return a;
}

/* hipDNN serializes data types in lower case ("float", "bfloat16"). */
static cJSON *dt_json(int dt)
{
    char b[32];
    const char *n = nmo_dt_name(dt);
    size_t i = 0;
    for (; n && n[i] && i + 1 < sizeof b; i++) b[i] = (char)(n[i] >= 'A' && n[i] <= 'Z' ? n[i] - 'A' + 'a' : n[i]);
    b[i] = '\0';
    return cJSON_CreateString(b);
}

/* The graph in hipDNN's schema: tensors with lower-case data types, the node's tensors
 * under "inputs" and "outputs" as <name>_tensor_uid, its scalar parameters under
 * "attributes" (the loader reads every section, and the older all-"attributes" form). */
cJSON *nmo_graph_to_json(const nmo_graph *g)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", g->name);
    cJSON_AddItemToObject(o, "compute_data_type", dt_json(g->compute_dt));
    cJSON_AddItemToObject(o, "intermediate_data_type", dt_json(g->inter_dt));
    cJSON_AddItemToObject(o, "io_data_type", dt_json(g->io_dt));
    cJSON *ts = cJSON_AddArrayToObject(o, "tensors");
    for (int i = 0; i < g->n_tensors; i++) {
        const nmo_gtensor *t = &g->t[i];
        cJSON *to = cJSON_CreateObject();
        cJSON_AddNumberToObject(to, "uid", (double)t->uid);
        cJSON_AddStringToObject(to, "name", t->name);
        cJSON_AddItemToObject(to, "data_type", dt_json(t->dt));
        cJSON_AddItemToObject(to, "dims", nmo__int_array(t->ndims, t->dims));
        cJSON_AddItemToObject(to, "strides", nmo__int_array(t->ndims, t->strides));
        cJSON_AddBoolToObject(to, "virtual", t->is_virtual);
        cJSON_AddItemToArray(ts, to);
    }
    cJSON *ns = cJSON_AddArrayToObject(o, "nodes");
    /* hipDNN's own node type and keys where its form carries the operator exactly */
    cJSON *hn = nmo__hipdnn_node_json(g, ts);
    if (hn) {
        cJSON_AddItemToArray(ns, hn);
        return o;
    }
    cJSON *n = cJSON_CreateObject();
    cJSON_AddStringToObject(n, "name", g->node_name);
    cJSON_AddStringToObject(n, "type", g->node_type);
    cJSON_AddItemToObject(n, "compute_data_type", dt_json(g->node_compute_dt));
    const nmo_op *op = g->op;
    for (int io = 0; io < 2; io++) {
        cJSON *sec = cJSON_AddObjectToObject(n, io ? "outputs" : "inputs");
        int cnt = io ? op->n_out : op->n_in;
        for (int k = 0; k < cnt; k++) {
            char key[96];
            snprintf(key, sizeof key, "%s_tensor_uid", io ? op->out[k].name : op->in[k].name);
            cJSON_AddNumberToObject(sec, key, (double)g->t[io ? g->out_t[k] : g->in_t[k]].uid);
        }
    }
    cJSON *at = cJSON_AddObjectToObject(n, "attributes");
    for (int k = 0; k < op->n_param; k++) cJSON_AddNumberToObject(at, op->param[k].name, g->param[k]);
    cJSON_AddItemToArray(ns, n);
    return o;
}

/* ---- loading ------------------------------------------------------------------------ */
