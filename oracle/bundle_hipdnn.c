/* numoracle: hipDNN's own node types read as registry operators (issue 20).
 *
 * hipDNN writes a node as {"type": "LayernormAttributes", "inputs": {"x_tensor_uid": 1,
 * ...}, "outputs": {...}, "attributes": {...}}, absent tensors as null, and scalar
 * parameters (epsilon) as tensors carrying "value". A node type binds to an operator only
 * where the two compute the same function; every other form is refused with the reason as
 * "unsupported operation ..." (NMO_ERR_UNKNOWN_OP), which the runner reports as a SKIP of
 * that case, never a failure of the run.
 *
 * Rules (the semantics of hipDNN's reference executors, read from its graphs and the
 * attribute names it serializes):
 *  - Any *_tensor_uid key that is not null and that the binding does not consume is an
 *    input or output numoracle does not model: unsupported, naming the key.
 *  - A tensor whose squeezed dims (size-1 dims dropped) equal the operator's is the same
 *    row-major sequence: [2,3,1] is the reduction's [2,3], [1,N] the norm's weight [N].
 *  - Norms: the scale (and bias) must run along x's last dim only (statistics per row of
 *    the last dim, numoracle's layer_norm/rms_norm); saved statistics outputs (mean,
 *    inv_variance, inv_rms of forward_phase TRAINING) are not modelled.
 *  - Batchnorm inference in hipDNN takes mean and inv_variance (no epsilon): the operator
 *    batchnorm_invvar_inference; its VarianceExt form (variance + epsilon under a root) is
 *    batchnorm_inference. Statistics, scale and bias one per channel, in x's dtype.
 *  - SDPA: causal and the diagonal band (left_bound/right_bound) top-left, or bottom-right
 *    when S_q = S_kv (the two coincide); scale from attn_scale_value, a scalar scale
 *    tensor, or the default 1/sqrt(D); no additive mask, dropout, paging, sinks, stats or
 *    fp8 scales. */
/* Messages are truncated to their fixed buffers on purpose. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "bundle_priv.h"

typedef struct hd_map hd_map;

enum { HD_KEYS = 10 }; /* tensor keys of one node type (sdpa backward: 9) */

/* 0: bound (params and shape set); else why says what is not modelled. */
typedef int (*hd_fn)(nmo_graph *g, const cJSON *node, const hd_map *m, char *why, size_t n);

struct hd_map {
    const char *type; /* hipDNN node type */
    const char *op;   /* registry operator; NULL: not modelled (why) */
    const char *keys[HD_KEYS][2]; /* hipDNN tensor key (no _tensor_uid) -> operator tensor */
    const char *scalar[2][2]; /* hipDNN scalar-tensor key -> operator parameter */
    hd_fn attrs;
    const char *why;
};

/* A key of the node: inputs, outputs or attributes (hipDNN puts "operation" of a
 * pointwise node among its inputs). NULL for absent and null. */
static const cJSON *hd_item(const cJSON *node, const char *key)
{
    static const char *const sec[] = {"inputs", "outputs", "attributes"};
    for (int s = 0; s < 3; s++) {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(node, sec[s]);
        const cJSON *v = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
        if (v && !cJSON_IsNull(v)) return v;
    }
    return NULL;
}

static int hd_true(const cJSON *node, const char *key) { return cJSON_IsTrue(hd_item(node, key)); }

static int squeeze(const nmo_gtensor *t, int64_t *d)
{
    int m = 0;
    for (int k = 0; k < t->ndims; k++)
        if (t->dims[k] != 1) d[m++] = t->dims[k];
    return m;
}

/* Does tensor t run along the last dim of x only (squeezed dims [x's last dim])? */
static int along_last(const nmo_gtensor *t, const nmo_gtensor *x)
{
    int64_t d[NMO_MAX_DIMS];
    int m = squeeze(t, d);
    int64_t last = x->dims[x->ndims - 1];
    return (m == 1 && d[0] == last) || (m == 0 && last == 1);
}

static const nmo_gtensor *op_tensor(const nmo_graph *g, int io, int k) { return &g->t[io ? g->out_t[k] : g->in_t[k]]; }

static int param_index(const nmo_op *op, const char *name)
{
    for (int k = 0; k < op->n_param; k++)
        if (strcmp(op->param[k].name, name) == 0) return k;
    return -1;
}

static void set_param(nmo_graph *g, const char *name, double v)
{
    int k = param_index(g->op, name);
    if (k >= 0) g->param[k] = v, g->param_set[k] = 1;
}

static int norm_attrs(nmo_graph *g, const cJSON *node, const hd_map *m, char *why, size_t n, const char *stats)
{
    (void)m;
    const nmo_gtensor *x = op_tensor(g, 0, 0);
    for (int k = 1; k < g->op->n_in; k++)
        if (!along_last(op_tensor(g, 0, k), x)) {
            snprintf(why, n, "%s runs along dims other than x's last (numoracle normalizes rows of the last dim)",
                     g->op->in[k].name);
            return 1;
        }
    char key[64];
    for (const char *s = stats; *s;) {
        size_t l = strcspn(s, " ");
        snprintf(key, sizeof key, "%.*s_tensor_uid", (int)l, s);
        if (hd_item(node, key)) {
            snprintf(why, n, "the saved statistics output %.*s (forward_phase TRAINING) is not modelled", (int)l, s);
            return 1;
        }
        s += l;
        if (*s) s++;
    }
    return 0;
}

static int layernorm_attrs(nmo_graph *g, const cJSON *node, const hd_map *m, char *why, size_t n)
{
    const cJSON *nd = hd_item(node, "normalized_dim_count");
    if (nd && !(cJSON_IsNumber(nd) && nd->valuedouble == 1)) {
        snprintf(why, n, "normalized_dim_count %g (numoracle's layer_norm normalizes the last dim)",
                 cJSON_IsNumber(nd) ? nd->valuedouble : -1.0);
        return 1;
    }
    return norm_attrs(g, node, m, why, n, "mean inv_variance");
}

/* RMSNorm with or without a bias (rms_norm, rms_norm_bias): hipDNN normalizes the
 * trailing dims where scale's dims equal x's (CpuFpReferenceRMSNorm); numoracle the last
 * dim only, so scale and bias must run along it. */
static int rmsnorm_attrs(nmo_graph *g, const cJSON *node, const hd_map *m, char *why, size_t n)
{
    return norm_attrs(g, node, m, why, n, "inv_rms");
}

static int reduction_attrs(nmo_graph *g, const cJSON *node, const hd_map *m, char *why, size_t n)
{
    (void)m;
    const cJSON *md = hd_item(node, "mode");
    const char *mode = cJSON_IsString(md) ? md->valuestring : "?";
    double kind = strcasecmp(mode, "ADD") == 0 ? 0 : strcasecmp(mode, "AVG") == 0 ? 1 : strcasecmp(mode, "MAX") == 0 ? 2 : -1;
    if (kind < 0) {
        snprintf(why, n, "reduction mode %s (numoracle models ADD, AVG and MAX)", mode);
        return 1;
    }
    const nmo_gtensor *x = op_tensor(g, 0, 0), *y = op_tensor(g, 1, 0);
    int ok = y->ndims == x->ndims || y->ndims == x->ndims - 1;
    for (int k = 0; ok && k < x->ndims - 1; k++) ok = y->dims[k] == x->dims[k];
    if (ok && y->ndims == x->ndims) ok = y->dims[x->ndims - 1] == 1;
    if (!ok) {
        snprintf(why, n, "a reduction over dims other than the last (numoracle reduces rows of the last dim)");
        return 1;
    }
    set_param(g, "kind", kind);
    return 0;
}

static int pointwise_attrs(nmo_graph *g, const cJSON *node, const hd_map *m, char *why, size_t n)
{
    (void)m;
    const nmo_gtensor *a = op_tensor(g, 0, 0), *b = op_tensor(g, 0, 1);
    if (!along_last(b, a)) {
        snprintf(why, n, "pointwise %s of two full tensors (numoracle's %s broadcasts in_1 along in_0's last dim)",
                 g->op->name, g->op->name);
        return 1;
    }
    (void)node;
    return 0;
}

static int sdpa_attrs(nmo_graph *g, const cJSON *node, const hd_map *m, char *why, size_t n)
{
    (void)m;
    static const char *const off[] = {"alibi_mask", "padding_mask", "generate_stats"};
    for (int i = 0; i < 3; i++)
        if (hd_true(node, off[i])) {
            snprintf(why, n, "SDPA with %s", off[i]);
            return 1;
        }
    if (hd_item(node, "max_seq_len_kv")) {
        snprintf(why, n, "SDPA with max_seq_len_kv (padded, variable sequence lengths)");
        return 1;
    }
    const cJSON *dp = hd_item(node, "dropout_probability");
    if (dp && !(cJSON_IsNumber(dp) && dp->valuedouble == 0)) {
        snprintf(why, n, "SDPA with dropout");
        return 1;
    }
    const nmo_gtensor *q = op_tensor(g, 0, 0), *k = op_tensor(g, 0, 1), *v = op_tensor(g, 0, 2), *o = op_tensor(g, 1, 0);
    if (q->ndims != 4 || k->ndims != 4 || v->ndims != 4 || o->ndims != 4) {
        snprintf(why, n, "SDPA tensors of rank other than 4 (numoracle: [B,H,S,D])");
        return 1;
    }
    for (int d = 0; d < 4; d++)
        if (k->dims[d] != v->dims[d] || q->dims[d] != o->dims[d] || (d != 1 && q->dims[d] != k->dims[d])) {
            snprintf(why, n, "SDPA with S_q != S_kv, a value head dim != D or batch mismatch (numoracle: self-attention "
                             "shapes)");
            return 1;
        }
    /* hipDNN's masks (CpuFpReferenceSdpa / SdpaFwdPlan): the deprecated causal_mask and
     * causal_mask_bottom_right, or the diagonal band left_bound/right_bound (-1 or null:
     * unbounded; causal is right_bound 0) under diagonal_alignment. Bottom-right and
     * top-left coincide when S_q = S_kv (checked above). */
    int causal = hd_true(node, "causal_mask"), br = hd_true(node, "causal_mask_bottom_right");
    if (causal && br) {
        snprintf(why, n, "SDPA with both causal_mask and causal_mask_bottom_right (hipDNN rejects the pair)");
        return 1;
    }
    double bound[2] = {-1, -1};
    static const char *const bk[2] = {"left_bound", "right_bound"};
    for (int i = 0; i < 2; i++) {
        const cJSON *b = hd_item(node, bk[i]);
        if (!b) continue;
        if (!cJSON_IsNumber(b) || b->valuedouble < -1 || b->valuedouble != floor(b->valuedouble)) {
            snprintf(why, n, "SDPA %s that is not an integer >= -1", bk[i]);
            return 1;
        }
        bound[i] = b->valuedouble;
    }
    if ((causal || br) && (bound[0] >= 0 || bound[1] >= 0)) {
        /* hipDNN's versions differ here: the CPU reference's plan drops the bounds, the
         * plugins' resolveDiagonalBand keeps left_bound */
        snprintf(why, n, "SDPA with a causal flag and left_bound/right_bound together (hipDNN versions read it differently)");
        return 1;
    }
    if ((bound[0] >= 0 || bound[1] > 0) && param_index(g->op, "left_bound") < 0) {
        snprintf(why, n, "%s with a sliding window (left_bound/right_bound; numoracle's %s: causal only)", g->node_type,
                 g->op->name);
        return 1;
    }
    /* causal: right_bound 0 with no left bound, or the deprecated flags */
    int c = causal || br || bound[1] == 0;
    set_param(g, "causal", c);
    set_param(g, "left_bound", bound[0]);
    set_param(g, "right_bound", c ? -1 : bound[1]);
    const cJSON *sc = hd_item(node, "attn_scale_value");
    if (sc) {
        if (!cJSON_IsNumber(sc) || !isfinite(sc->valuedouble) || sc->valuedouble == 0) {
            snprintf(why, n, "SDPA attn_scale_value that is not a finite nonzero number");
            return 1;
        }
        set_param(g, "scale", sc->valuedouble);
    }
    g->shape_n = 5;
    int64_t sh[5] = {q->dims[0], q->dims[1], k->dims[1], q->dims[2], q->dims[3]};
    memcpy(g->shape, sh, sizeof sh);
    return 0;
}

/* Does t hold one value per channel of x (squeezed dims [x's dim 1])? */
static int per_channel(const nmo_gtensor *t, const nmo_gtensor *x)
{
    int64_t d[NMO_MAX_DIMS];
    int m = squeeze(t, d);
    return (m == 1 && d[0] == x->dims[1]) || (m == 0 && x->dims[1] == 1);
}

/* hipDNN's batchnorm inference: mean, inv_variance, scale and bias one per channel, in
 * x's dtype, or all in float under a half/bfloat16 x (hipDNN's mixed types: the
 * operator's stats_fp32 where it has one). */
static int bn_invvar_attrs(nmo_graph *g, const cJSON *node, const hd_map *m, char *why, size_t n)
{
    (void)m, (void)node;
    const nmo_gtensor *x = op_tensor(g, 0, 0);
    if (x->ndims < 2 || x->ndims > 5) {
        snprintf(why, n, "batchnorm of a rank-%d x (numoracle: N,C[,S...], 2 to 5 dims)", x->ndims);
        return 1;
    }
    int mixed = param_index(g->op, "stats_fp32") >= 0 && (x->dt == NMO_BF16 || x->dt == NMO_FP16) &&
                op_tensor(g, 0, 1)->dt == NMO_FP32;
    for (int k = 1; k < g->op->n_in; k++) {
        const nmo_gtensor *t = op_tensor(g, 0, k);
        if (!per_channel(t, x)) {
            snprintf(why, n, "%s is not one value per channel (dim 1 of x)", g->op->in[k].name);
            return 1;
        }
        if (t->dt != (mixed ? NMO_FP32 : x->dt)) {
            snprintf(why, n, "%s in %s under x in %s (numoracle's %s: %s)", g->op->in[k].name, nmo_dt_name(t->dt),
                     nmo_dt_name(x->dt), g->op->name,
                     param_index(g->op, "stats_fp32") >= 0 ? "x's dtype, or float under a half or bfloat16 x" : "x's dtype");
            return 1;
        }
    }
    set_param(g, "stats_fp32", mixed);
    return 0;
}

/* hipDNN's batchnorm inference with variance (VarianceExt): numoracle's
 * batchnorm_inference, NCHW (channels-last data is a strided tensor, read logically). */
static int bn_var_attrs(nmo_graph *g, const cJSON *node, const hd_map *m, char *why, size_t n)
{
    const nmo_gtensor *x = op_tensor(g, 0, 0);
    if (x->ndims != 4) {
        snprintf(why, n, "batchnorm with variance of a rank-%d x (numoracle's batchnorm_inference: N,C,H,W)", x->ndims);
        return 1;
    }
    set_param(g, "layout", 0);
    return bn_invvar_attrs(g, node, m, why, n);
}

/* Norm backward (inputs dy, x, w, statistics...): the scale along x's last dim, every
 * saved statistic one value per row of the last dim (numoracle's rstd/mean [rows]). */
static int norm_bwd_attrs(nmo_graph *g, const cJSON *node, const hd_map *m, char *why, size_t n)
{
    (void)m, (void)node;
    const nmo_gtensor *x = op_tensor(g, 0, 1);
    if (!along_last(op_tensor(g, 0, 2), x)) {
        snprintf(why, n, "the scale runs along dims other than x's last (numoracle normalizes rows of the last dim)");
        return 1;
    }
    int64_t rows[NMO_MAX_DIMS], d[NMO_MAX_DIMS];
    nmo_gtensor xr = *x;
    xr.ndims = x->ndims - 1;
    int nr = squeeze(&xr, rows);
    for (int k = 3; k < g->op->n_in; k++) {
        int nd = squeeze(op_tensor(g, 0, k), d);
        int ok = nd == nr;
        for (int q = 0; ok && q < nd; q++) ok = d[q] == rows[q];
        if (!ok) {
            snprintf(why, n, "the saved statistic %s is not one value per row of x's last dim", g->op->in[k].name);
            return 1;
        }
    }
    return 0;
}

/* An attribute [a, a] (hipDNN's per-spatial-dim lists) read as a: 0 absent, 1 read, -1
 * present but not two equal integers. */
static int pair_attr(const cJSON *node, const char *key, double *v)
{
    const cJSON *a = hd_item(node, key);
    if (!a) return 0;
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != 2) return -1;
    const cJSON *p = cJSON_GetArrayItem(a, 0), *q = cJSON_GetArrayItem(a, 1);
    if (!cJSON_IsNumber(p) || !cJSON_IsNumber(q) || p->valuedouble != q->valuedouble ||
        p->valuedouble != floor(p->valuedouble))
        return -1;
    *v = p->valuedouble;
    return 1;
}

/* Convolution forward as conv2d: 2-D cross-correlation, the same symmetric padding,
 * stride and dilation for H and W, groups from the filter's channel dim. */
static int conv_attrs(nmo_graph *g, const cJSON *node, const hd_map *m, char *why, size_t n)
{
    (void)m;
    const cJSON *md = hd_item(node, "convolution_mode");
    if (cJSON_IsString(md) && strcasecmp(md->valuestring, "CROSS_CORRELATION") != 0) {
        snprintf(why, n, "convolution_mode %s (numoracle's conv2d is a cross-correlation)", md->valuestring);
        return 1;
    }
    const nmo_gtensor *x = op_tensor(g, 0, 0), *w = op_tensor(g, 0, 1);
    if (x->ndims != 4 || w->ndims != 4) {
        snprintf(why, n, "a convolution of rank %d (numoracle's conv2d: 2-D, [N,C,H,W])", x->ndims);
        return 1;
    }
    /* groups as cuDNN and hipDNN give them: the filter's channel dim is C/G, G divides K */
    int64_t G = w->dims[1] > 0 && x->dims[1] % w->dims[1] == 0 ? x->dims[1] / w->dims[1] : 0;
    if (G < 1 || w->dims[0] % G != 0) {
        snprintf(why, n, "filter channels %lld that do not divide input channels %lld into groups of the %lld filters",
                 (long long)w->dims[1], (long long)x->dims[1], (long long)w->dims[0]);
        return 1;
    }
    if (G > 1 && param_index(g->op, "groups") < 0) {
        snprintf(why, n, "a grouped convolution (filter channels %lld, input channels %lld)", (long long)w->dims[1],
                 (long long)x->dims[1]);
        return 1;
    }
    set_param(g, "groups", (double)G);
    static const char *const keys[4] = {"pre_padding", "post_padding", "stride", "dilation"};
    double v[4] = {0, 0, 1, 1};
    for (int k = 0; k < 4; k++)
        if (pair_attr(node, keys[k], &v[k]) < 0) {
            snprintf(why, n, "%s that differs between H and W (numoracle's conv2d takes one value for both)", keys[k]);
            return 1;
        }
    if (v[0] != v[1]) {
        snprintf(why, n, "asymmetric padding (pre %g, post %g)", v[0], v[1]);
        return 1;
    }
    set_param(g, "padding", v[0]);
    set_param(g, "stride", v[2]);
    set_param(g, "dilation", v[3]);
    set_param(g, "layout", 0);
    g->shape_n = 7;
    int64_t sh[7] = {x->dims[0], x->dims[1], x->dims[2], x->dims[3], w->dims[0], w->dims[2], w->dims[3]};
    memcpy(g->shape, sh, sizeof sh);
    return 0;
}

static const hd_map hd_tab[] = {
    {"LayernormAttributes", "layer_norm", {{"x", "x"}, {"scale", "w"}, {"bias", "b"}, {"y", "y"}},
     {{"epsilon", "eps"}}, layernorm_attrs, NULL},
    {"RMSNormAttributes", "rms_norm", {{"x", "x"}, {"scale", "w"}, {"y", "y"}}, {{"epsilon", "eps"}}, rmsnorm_attrs, NULL},
    /* a variant of a node type (after '+'): chosen by hd_find from the node */
    {"RMSNormAttributes+bias", "rms_norm_bias", {{"x", "x"}, {"scale", "w"}, {"bias", "b"}, {"y", "y"}},
     {{"epsilon", "eps"}}, rmsnorm_attrs, NULL},
    {"ReductionAttributes", "reduction", {{"in", "x"}, {"out", "y"}}, {{0}}, reduction_attrs, NULL},
    {"SdpaAttributes", "sdpa", {{"q", "q"}, {"k", "k"}, {"v", "v"}, {"o", "o"}}, {{"scale", "scale"}}, sdpa_attrs, NULL},
    {"MatmulAttributes", "matmul", {{"a", "A"}, {"b", "B"}, {"c", "C"}}, {{0}}, NULL, NULL},
    /* the pointwise operator comes from the node's "operation" */
    {"PointwiseAttributes:add", "add", {{"in_0", "a"}, {"in_1", "b"}, {"out_0", "y"}}, {{0}}, pointwise_attrs, NULL},
    {"PointwiseAttributes:mul", "mul", {{"in_0", "a"}, {"in_1", "b"}, {"out_0", "y"}}, {{0}}, pointwise_attrs, NULL},
    {"BatchnormInferenceAttributes", "batchnorm_invvar_inference",
     {{"x", "x"}, {"mean", "mean"}, {"inv_variance", "inv_variance"}, {"scale", "w"}, {"bias", "b"}, {"y", "y"}},
     {{0}}, bn_invvar_attrs, NULL},
    {"BatchnormInferenceAttributesVarianceExt", "batchnorm_inference",
     {{"x", "x"}, {"mean", "running_mean"}, {"variance", "running_var"}, {"scale", "w"}, {"bias", "b"}, {"y", "y"}},
     {{"epsilon", "eps"}}, bn_var_attrs, NULL},
    {"BatchnormAttributes", NULL, {{0}}, {{0}}, NULL, "batchnorm training is not modelled"},
    {"BatchnormBackwardAttributes", NULL, {{0}}, {{0}}, NULL, "batchnorm backward is not modelled"},
    {"LayernormBackwardAttributes", "layer_norm_bwd",
     {{"dy", "dy"}, {"x", "x"}, {"scale", "w"}, {"mean", "mean"}, {"inv_variance", "rstd"}, {"dx", "dx"},
      {"dscale", "dw"}, {"dbias", "db"}},
     {{"epsilon", "eps"}}, norm_bwd_attrs, NULL},
    /* the saved statistic: inv_rms (the forward's name) or inv_variance */
    {"RMSNormBackwardAttributes", "rms_norm_bwd",
     {{"dy", "dy"}, {"x", "x"}, {"scale", "w"}, {"inv_rms", "rstd"}, {"inv_variance", "rstd"}, {"dx", "dx"},
      {"dscale", "dw"}},
     {{"epsilon", "eps"}}, norm_bwd_attrs, NULL},
    /* stats: the forward's saved log-sum-exp of the scaled scores (natural log, as cuDNN) */
    {"SdpaBackwardAttributes", "sdpa_bwd",
     {{"q", "q"}, {"k", "k"}, {"v", "v"}, {"o", "o"}, {"do", "dO"}, {"stats", "lse"}, {"dq", "dq"}, {"dk", "dk"},
      {"dv", "dv"}},
     {{"scale", "scale"}}, sdpa_attrs, NULL},
    {"ConvolutionFwdAttributes", "conv2d", {{"x", "x"}, {"w", "w"}, {"y", "y"}}, {{0}}, conv_attrs, NULL},
    {"ConvolutionBwdAttributes", NULL, {{0}}, {{0}}, NULL, "convolution backward-data is not modelled"},
    {"ConvolutionWrwAttributes", NULL, {{0}}, {{0}}, NULL, "convolution weight gradient is not modelled"},
};
#define N_HD ((int)(sizeof hd_tab / sizeof hd_tab[0]))

static const hd_map *hd_find(const char *type, const cJSON *node)
{
    if (!type) return NULL;
    char key[160];
    snprintf(key, sizeof key, "%s", type);
    if (strcmp(type, "PointwiseAttributes") == 0) {
        const cJSON *op = node ? hd_item(node, "operation") : NULL;
        snprintf(key, sizeof key, "PointwiseAttributes:%s", cJSON_IsString(op) ? op->valuestring : "?");
    }
    if (strcmp(type, "RMSNormAttributes") == 0 && node && hd_item(node, "bias_tensor_uid"))
        snprintf(key, sizeof key, "RMSNormAttributes+bias");
    for (int i = 0; i < N_HD; i++)
        if (strcasecmp(hd_tab[i].type, key) == 0) return &hd_tab[i];
    return NULL;
}

const nmo_op *nmo__hipdnn_op(const char *type, const cJSON *node)
{
    const hd_map *m = hd_find(type, node);
    return m && m->op ? nmo_op_find(m->op) : NULL;
}

static int find_uid(const nmo_graph *g, int64_t uid)
{
    for (int i = 0; i < g->n_tensors; i++)
        if (g->t[i].uid == uid) return i;
    return -1;
}

/* A uid-valued key of the node: its tensor index, or -1 with *st set. */
static int key_tensor(const nmo_graph *g, const cJSON *v, const char *key, const char *src, nmo_err *err, nmo_status *st)
{
    int64_t uid;
    if (!nmo__json_int(v, 0, INT64_MAX / 2, &uid)) {
        *st = nmo_err_set(err, NMO_ERR_DATA, "%s: node '%s': %s must be a non-negative integer or null", src, g->node_name, key);
        return -1;
    }
    int ti = find_uid(g, uid);
    if (ti < 0)
        *st = nmo_err_set(err, NMO_ERR_DATA, "%s: node '%s': %s %lld is not a tensor of the graph", src, g->node_name, key,
                          (long long)uid);
    return ti;
}

static nmo_status unsupported(const nmo_graph *g, const char *src, const char *type, const char *why, nmo_err *err)
{
    return nmo_err_set(err, NMO_ERR_UNKNOWN_OP, "%s: node '%s': unsupported operation %s: %s", src, g->node_name, type, why);
}

/* Wire every non-null *_tensor_uid key of the node; used[] marks the tensors taken. */
static nmo_status hd_wire(nmo_graph *g, const cJSON *node, const hd_map *m, int *used, const char *src, nmo_err *err)
{
    const nmo_op *op = g->op;
    nmo_status st = NMO_OK;
    static const char *const sec[] = {"inputs", "outputs", "attributes"};
    for (int s = 0; s < 3; s++) {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(node, sec[s]);
        for (const cJSON *v = cJSON_IsObject(o) ? o->child : NULL; v; v = v->next) {
            size_t l = strlen(v->string);
            if (l < 11 || strcmp(v->string + l - 11, "_tensor_uid") != 0 || cJSON_IsNull(v)) continue;
            char base[96];
            snprintf(base, sizeof base, "%.*s", (int)(l - 11), v->string);
            const char *tn = NULL, *pn = NULL;
            for (int k = 0; k < HD_KEYS && m->keys[k][0]; k++)
                if (strcmp(m->keys[k][0], base) == 0) tn = m->keys[k][1];
            for (int k = 0; k < 2 && m->scalar[k][0]; k++)
                if (strcmp(m->scalar[k][0], base) == 0) pn = m->scalar[k][1];
            if (!tn && !pn) {
                char why[160];
                snprintf(why, sizeof why, "%s %s is not modelled", s == 1 ? "output" : "input", v->string);
                return unsupported(g, src, g->node_type, why, err);
            }
            int ti = key_tensor(g, v, v->string, src, err, &st);
            if (ti < 0) return st;
            if (used[ti])
                return nmo_err_set(err, NMO_ERR_DATA, "%s: node '%s': tensor uid %lld is wired twice", src, g->node_name,
                                   (long long)g->t[ti].uid);
            used[ti] = 1;
            if (pn) {
                /* a scalar parameter: a tensor carrying its value; a runtime scalar is
                 * data numoracle's operator takes as a constant */
                if (!g->t[ti].has_value) {
                    char why[200];
                    snprintf(why, sizeof why, "%s is a runtime tensor, not a value (numoracle takes %s as a constant)",
                             v->string, pn);
                    return unsupported(g, src, g->node_type, why, err);
                }
                set_param(g, pn, g->t[ti].value);
                continue;
            }
            int found = 0;
            for (int io = 0; io < 2 && !found; io++) {
                int cnt = io ? op->n_out : op->n_in;
                for (int k = 0; k < cnt; k++)
                    if (strcmp(io ? op->out[k].name : op->in[k].name, tn) == 0) {
                        if (g->t[ti].is_virtual || g->t[ti].has_value)
                            return nmo_err_set(err, NMO_ERR_DATA, "%s: uid %lld (%s): %s, but the node's %s", src,
                                               (long long)g->t[ti].uid, tn, g->t[ti].is_virtual ? "virtual" : "a scalar value",
                                               io ? "output" : "input");
                        if (io) g->out_t[k] = ti;
                        else g->in_t[k] = ti;
                        if (!g->t[ti].name[0]) snprintf(g->t[ti].name, sizeof g->t[ti].name, "%s", tn);
                        found = 1;
                        break;
                    }
            }
        }
    }
    /* every operator tensor present */
    for (int io = 0; io < 2; io++) {
        int cnt = io ? op->n_out : op->n_in;
        for (int k = 0; k < cnt; k++) {
            const char *tn = io ? op->out[k].name : op->in[k].name;
            if ((io ? g->out_t[k] : g->in_t[k]) < 0) {
                const char *hk = tn;
                for (int q = 0; q < HD_KEYS && m->keys[q][0]; q++)
                    if (strcmp(m->keys[q][1], tn) == 0) hk = m->keys[q][0];
                /* an optional input left null (statistics a kernel recomputes): the
                 * operator models it, a bundle cannot carry an absent tensor */
                if (!io && (nmo_op_optional_mask(op) >> k & 1u)) {
                    char why[200];
                    snprintf(why, sizeof why, "input %s_tensor_uid is null (a recomputed %s; bundles carry every input)", hk,
                             tn);
                    return unsupported(g, src, g->node_type, why, err);
                }
                return nmo_err_set(err, NMO_ERR_DATA, "%s: node '%s': missing %s '%s_tensor_uid'", src, g->node_name,
                                   io ? "output" : "input", hk);
            }
        }
    }
    return NMO_OK;
}

nmo_status nmo__hipdnn_bind(nmo_graph *g, const cJSON *node, int *used, const char *src, int *bound, nmo_err *err)
{
    *bound = 0;
    const hd_map *m = hd_find(g->node_type, node);
    if (!m && strcmp(g->node_type, "PointwiseAttributes") == 0) {
        *bound = 1;
        const cJSON *op = hd_item(node, "operation");
        char why[160];
        snprintf(why, sizeof why, "pointwise operation '%s' (numoracle binds add and mul)",
                 cJSON_IsString(op) ? op->valuestring : "?");
        return unsupported(g, src, g->node_type, why, err);
    }
    if (!m) return NMO_OK;
    *bound = 1;
    if (!m->op) return unsupported(g, src, g->node_type, m->why, err);
    g->op = nmo_op_find(m->op);
    if (!g->op) return unsupported(g, src, g->node_type, "its operator is not in this build", err);
    for (int k = 0; k < g->op->n_param; k++) g->param[k] = g->op->param[k].def;
    for (int k = 0; k < NMO_MAX_TENSORS; k++) g->in_t[k] = g->out_t[k] = -1;
    NMO_RETURN_IF_ERR(hd_wire(g, node, m, used, src, err));
    char why[240] = "";
    if (m->attrs && m->attrs(g, node, m, why, sizeof why)) return unsupported(g, src, g->node_type, why, err);
    return NMO_OK;
}

/* ---- writing: the node in hipDNN's own vocabulary ------------------------------------- */

int nmo__hipdnn_type(const char *type, const cJSON *node) { return hd_find(type, node) != NULL; }

/* hipDNN's reduction modes for the reduction operator's kind. */
static const char *const red_mode[3] = {"ADD", "AVG", "MAX"};

/* The node as hipDNN writes it, for an operator bound above whose every parameter
 * hipDNN's form can carry (rms_norm's offset only at 0); a value tensor for epsilon is
 * appended to ts with the next free uid. NULL: not expressible (the caller writes
 * numoracle's node type instead). The reader binds it back (nmo__hipdnn_bind). */
cJSON *nmo__hipdnn_node_json(const nmo_graph *g, cJSON *ts)
{
    const nmo_op *op = g->op;
    const hd_map *m = NULL;
    for (int i = 0; i < N_HD && !m; i++)
        if (hd_tab[i].op && strcmp(hd_tab[i].op, op->name) == 0) m = &hd_tab[i];
    if (!m) return NULL;
    int is_sdpa = strcmp(op->name, "sdpa") == 0 || strcmp(op->name, "sdpa_bwd") == 0;
    int is_conv = strcmp(op->name, "conv2d") == 0;
    /* every parameter: a scalar tensor, an attribute the binding reads, or its default */
    for (int k = 0; k < op->n_param; k++) {
        const char *pn = op->param[k].name;
        int carried = 0;
        for (int q = 0; q < 2 && m->scalar[q][0]; q++) carried |= strcmp(m->scalar[q][1], pn) == 0;
        if (strcmp(op->name, "reduction") == 0 && strcmp(pn, "kind") == 0)
            carried = g->param[k] == 0 || g->param[k] == 1 || g->param[k] == 2;
        if (is_sdpa && strcmp(pn, "causal") == 0) carried = g->param[k] == 0 || g->param[k] == 1;
        /* the band: right_bound only without causal (causal is right_bound 0) */
        if (is_sdpa && strcmp(pn, "left_bound") == 0) carried = 1;
        if (is_sdpa && strcmp(pn, "right_bound") == 0)
            carried = g->param[k] == -1 || (g->param[param_index(op, "causal")] == 0 && g->param[k] != 0);
        if (is_sdpa && strcmp(pn, "scale") == 0) carried = 1; /* attn_scale_value */
        if (is_conv) carried = strcmp(pn, "layout") != 0 || g->param[k] == 0; /* NHWC: strides, not written */
        if (strcmp(op->name, "batchnorm_inference") == 0 && strcmp(pn, "layout") == 0) carried = g->param[k] == 0;
        if (strcmp(pn, "stats_fp32") == 0) carried = 1; /* the tensors' data types */
        if (!carried && g->param[k] != op->param[k].def) return NULL;
    }
    int64_t next = 0;
    for (int i = 0; i < g->n_tensors; i++)
        if (g->t[i].uid >= next) next = g->t[i].uid + 1;
    cJSON *n = cJSON_CreateObject();
    const char *type = m->type;
    char tb[64];
    const char *colon = strchr(type, ':'), *plus = strchr(type, '+');
    if (colon || plus) snprintf(tb, sizeof tb, "%.*s", (int)((colon ? colon : plus) - type), type), type = tb;
    cJSON_AddStringToObject(n, "name", g->node_name);
    cJSON_AddStringToObject(n, "type", type);
    const char *cdt = nmo_dt_name(g->node_compute_dt);
    char lc[32] = "";
    for (size_t i = 0; cdt && cdt[i] && i + 1 < sizeof lc; i++)
        lc[i] = (char)(cdt[i] >= 'A' && cdt[i] <= 'Z' ? cdt[i] - 'A' + 'a' : cdt[i]), lc[i + 1] = '\0';
    cJSON_AddStringToObject(n, "compute_data_type", lc);
    cJSON *in = cJSON_AddObjectToObject(n, "inputs"), *out = cJSON_AddObjectToObject(n, "outputs");
    cJSON *at = cJSON_AddObjectToObject(n, "attributes");
    if (colon) cJSON_AddStringToObject(in, "operation", colon + 1);
    for (int io = 0; io < 2; io++) {
        int cnt = io ? op->n_out : op->n_in;
        for (int k = 0; k < cnt; k++) {
            const char *tn = io ? op->out[k].name : op->in[k].name;
            const char *hk = NULL;
            for (int q = 0; q < HD_KEYS && m->keys[q][0] && !hk; q++) /* the first alias */
                if (strcmp(m->keys[q][1], tn) == 0) hk = m->keys[q][0];
            char key[96];
            snprintf(key, sizeof key, "%s_tensor_uid", hk ? hk : tn);
            cJSON_AddNumberToObject(io ? out : in, key, (double)g->t[io ? g->out_t[k] : g->in_t[k]].uid);
        }
    }
    for (int q = 0; q < 2 && m->scalar[q][0]; q++) {
        int k = param_index(op, m->scalar[q][1]);
        if (k < 0) continue;
        if (is_sdpa) continue; /* the scale goes in attn_scale_value */
        char key[96];
        snprintf(key, sizeof key, "%s_tensor_uid", m->scalar[q][0]);
        cJSON *t = cJSON_CreateObject();
        cJSON_AddNumberToObject(t, "uid", (double)next);
        cJSON_AddStringToObject(t, "name", m->scalar[q][0]);
        cJSON_AddStringToObject(t, "data_type", "double");
        cJSON *d = cJSON_AddArrayToObject(t, "dims"), *s = cJSON_AddArrayToObject(t, "strides");
        cJSON_AddItemToArray(d, cJSON_CreateNumber(1));
        cJSON_AddItemToArray(s, cJSON_CreateNumber(1));
        cJSON_AddBoolToObject(t, "virtual", 0);
        cJSON_AddNumberToObject(t, "value", g->param[k]);
        cJSON_AddStringToObject(t, "value_type", "Float64Value");
        cJSON_AddItemToArray(ts, t);
        cJSON_AddNumberToObject(in, key, (double)next++);
    }
    if (strcmp(op->name, "layer_norm") == 0) cJSON_AddNumberToObject(at, "normalized_dim_count", 1);
    if (strcmp(op->name, "layer_norm") == 0 || strcmp(op->name, "rms_norm") == 0 || strcmp(op->name, "rms_norm_bias") == 0)
        cJSON_AddStringToObject(at, "forward_phase", "INFERENCE");
    if (strcmp(op->name, "reduction") == 0) cJSON_AddStringToObject(at, "mode", red_mode[(int)g->param[param_index(op, "kind")]]);
    if (is_conv) {
        static const char *const ck[4][2] = {
            {"pre_padding", "padding"}, {"post_padding", "padding"}, {"stride", "stride"}, {"dilation", "dilation"}};
        for (int q = 0; q < 4; q++) {
            cJSON *a = cJSON_AddArrayToObject(at, ck[q][0]);
            double v = g->param[param_index(op, ck[q][1])];
            cJSON_AddItemToArray(a, cJSON_CreateNumber(v));
            cJSON_AddItemToArray(a, cJSON_CreateNumber(v));
        }
        cJSON_AddStringToObject(at, "convolution_mode", "CROSS_CORRELATION");
    }
    if (is_sdpa) {
        int kl = param_index(op, "left_bound"), kr = param_index(op, "right_bound");
        double lb = kl >= 0 ? g->param[kl] : -1, rb = kr >= 0 ? g->param[kr] : -1;
        int cm = g->param[param_index(op, "causal")] != 0;
        /* the deprecated flag where it says it all, else the band (causal: right_bound 0) */
        cJSON_AddBoolToObject(at, "causal_mask", cm && lb < 0);
        if (lb >= 0) cJSON_AddNumberToObject(at, "left_bound", lb);
        if (lb >= 0 || rb >= 0) cJSON_AddNumberToObject(at, "right_bound", cm ? 0 : rb);
        double sc = g->param[param_index(op, "scale")];
        if (sc != 0) cJSON_AddNumberToObject(at, "attn_scale_value", sc);
        else cJSON_AddNullToObject(at, "attn_scale_value");
        cJSON_AddStringToObject(at, "diagonal_alignment", "TOP_LEFT");
    }
    return n;
}
