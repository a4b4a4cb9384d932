/* numoracle: the entry point for language bindings (numoracle/bind.h). It builds the
 * problem from plain C values with the checks and messages of the CLI's problem builder
 * (apps' cli_problem_build) for the case "every input given": the shape inferred from the
 * tensors' dims when not given, each tensor's dims and dtype checked against the case, then
 * nmo_check, and the result kept in an object the binding reads through accessors. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "nmo_internal.h"
#include "numoracle/numoracle.h"

struct nmo_bind_result {
    int status;
    char msg[1024];
    char *json;
    int verdict;
    int n;                                   /* tensors described */
    char name[NMO_MAX_TENSORS][64];
    const char *dtype[NMO_MAX_TENSORS];      /* static format names */
    int ndims[NMO_MAX_TENSORS];
    int64_t dims[NMO_MAX_TENSORS][NMO_MAX_DIMS];
    int64_t numel[NMO_MAX_TENSORS];
    void *data[NMO_MAX_TENSORS];             /* gen: the inputs */
    uint8_t *verdicts[NMO_MAX_TENSORS];
    double *rlo[NMO_MAX_TENSORS], *rhi[NMO_MAX_TENSORS];
    uint8_t *flags[NMO_MAX_TENSORS];
    void *lo_bits[NMO_MAX_TENSORS], *hi_bits[NMO_MAX_TENSORS];
};

/* NMO_BIND_DEVICE_OUT's checker (bind.h); set once, before the checks that use it */
static nmo_bind_device_checker device_checker;
NMO_API void nmo_bind_set_device_checker(nmo_bind_device_checker fn) { device_checker = fn; }
NMO_API int nmo_bind_has_device_checker(void) { return device_checker != NULL; }

NMO_API int nmo_bind_api_version(void) { return NMO_API_VERSION; }

static int bfail(nmo_bind_result *r, int s, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bfail(nmo_bind_result *r, int s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->msg, sizeof r->msg, fmt, ap);
    va_end(ap);
    r->status = s;
    return s;
}

static nmo_bind_result *result_new(void)
{
    nmo_bind_result *r = calloc(1, sizeof *r);
    if (r) r->verdict = -1;
    return r;
}

nmo_bind_result *nmo__bind_result_make(int status, const char *msg, char *json, int verdict)
{
    nmo_bind_result *r = result_new();
    if (!r) {
        free(json);
        return NULL;
    }
    r->status = status;
    snprintf(r->msg, sizeof r->msg, "%s", msg ? msg : "");
    r->json = json;
    r->verdict = verdict;
    return r;
}

NMO_API void nmo_bind_free(nmo_bind_result *r)
{
    if (!r) return;
    free(r->json);
    for (int k = 0; k < NMO_MAX_TENSORS; k++) {
        free(r->data[k]);
        free(r->verdicts[k]);
        free(r->rlo[k]);
        free(r->rhi[k]);
        free(r->flags[k]);
        free(r->lo_bits[k]);
        free(r->hi_bits[k]);
    }
    free(r);
}

NMO_API int nmo_bind_status(const nmo_bind_result *r) { return r ? r->status : NMO_ERR_NOMEM; }
NMO_API const char *nmo_bind_message(const nmo_bind_result *r) { return r ? r->msg : "out of memory"; }
NMO_API const char *nmo_bind_json(const nmo_bind_result *r) { return r && r->status == NMO_OK ? r->json : NULL; }
NMO_API int nmo_bind_verdict(const nmo_bind_result *r) { return r && r->status == NMO_OK ? r->verdict : -1; }
NMO_API int nmo_bind_count(const nmo_bind_result *r) { return r && r->status == NMO_OK ? r->n : 0; }

NMO_API int nmo_bind_tensor_at(const nmo_bind_result *r, int k, nmo_bind_tensor *t)
{
    if (!r || r->status != NMO_OK || k < 0 || k >= r->n || !t) return -1;
    t->name = r->name[k];
    t->dtype = r->dtype[k];
    t->ndims = r->ndims[k];
    t->dims = r->dims[k];
    t->data = r->data[k];
    return 0;
}

NMO_API const void *nmo_bind_array(const nmo_bind_result *r, int kind, int k, int64_t *n)
{
    if (n) *n = 0;
    if (!r || r->status != NMO_OK || k < 0 || k >= r->n) return NULL;
    const void *p = NULL;
    switch (kind) {
    case NMO_BIND_A_VERDICTS: p = r->verdicts[k]; break;
    case NMO_BIND_A_RLO: p = r->rlo[k]; break;
    case NMO_BIND_A_RHI: p = r->rhi[k]; break;
    case NMO_BIND_A_FLAGS: p = r->flags[k]; break;
    case NMO_BIND_A_LO_BITS: p = r->lo_bits[k]; break;
    case NMO_BIND_A_HI_BITS: p = r->hi_bits[k]; break;
    default: return NULL;
    }
    if (p && n) *n = r->numel[k];
    return p;
}

/* the one rule (nmo__bound_bits, bundle.c), exported for bindings */
NMO_API uint64_t nmo_bind_bound_bits(nmo_fmt f, double v) { return nmo__bound_bits(f, v); }

/* ---- the problem ------------------------------------------------------------------ */

typedef struct {
    const nmo_op *op;
    nmo_fmt dtype;
    nmo_plan plan;
    double pval[NMO_MAX_PARAMS];
    int pset[NMO_MAX_PARAMS];
    const nmo_bind_tensor *in[NMO_MAX_TENSORS];  /* by the op's index; NULL: not given */
    const nmo_bind_tensor *out[NMO_MAX_TENSORS];
    int nshape;
    int64_t shape[NMO_MAX_DIMS];
    int shape_given;
    nmo_case c;
    int have_case;
} bprob;

static void names_list(char *buf, size_t n, const nmo_tspec *t, int count)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int i = 0; i < count && off < n; i++)
        off += (size_t)snprintf(buf + off, n - off, i ? " %s" : "%s", t[i].name);
    if (!count) snprintf(buf, n, "none");
}

/* Storage type of a tensor handed in: an nmo_fmt, NMO_DT_INT32/64, or -1. */
static int dt_of(const char *name)
{
    nmo_fmt f;
    if (!name) return -1;
    if (strcmp(name, "int32") == 0) return NMO_DT_INT32;
    if (strcmp(name, "int64") == 0) return NMO_DT_INT64;
    return nmo_fmt_from_name(&f, name) == NMO_OK ? (int)f : -1;
}

static int64_t dims_numel(int nd, const int64_t *d)
{
    int64_t n = 1;
    for (int i = 0; i < nd; i++) n *= d[i];
    return n;
}

/* A tensor's dims match the case's: equal, or a 0-d tensor (a scalar) for one element. */
static int dims_match(const nmo_bind_tensor *t, const nmo_tensor *want)
{
    if (t->ndims == 0) return nmo_tensor_numel(want) == 1;
    if (t->ndims != want->ndims) return 0;
    for (int i = 0; i < t->ndims; i++)
        if (t->dims[i] != want->dims[i]) return 0;
    return 1;
}

static void shape_text(char *buf, size_t n, int ns, const int64_t *s)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int i = 0; i < ns && off < n; i++)
        off += (size_t)snprintf(buf + off, n - off, i ? "x%lld" : "%lld", (long long)s[i]);
}

/* Tensors of the request into p->in / p->out by name or position; each checked for a
 * known dtype, sane dims and data. what: "input" / "output". */
static int map_tensors(nmo_bind_result *r, const nmo_bind_tensor **slot, const nmo_op *op, int is_out,
                       const nmo_bind_tensor *t, int n)
{
    const char *what = is_out ? "output" : "input";
    int count = is_out ? op->n_out : op->n_in;
    const nmo_tspec *spec = is_out ? op->out : op->in;
    char list[256];
    names_list(list, sizeof list, spec, count);
    if (n < 0 || (n > 0 && !t)) return bfail(r, NMO_ERR_USAGE, "bad %s list (%d tensors)", what, n);
    for (int i = 0; i < n; i++) {
        int k = i;
        if (t[i].name && t[i].name[0]) {
            for (k = 0; k < count && strcmp(spec[k].name, t[i].name) != 0; k++) {}
            if (k == count)
                return bfail(r, NMO_ERR_USAGE, "unknown %s '%s' for op %s (%ss: %s)", what, t[i].name, op->name,
                             what, list);
        } else if (i >= count) {
            return bfail(r, NMO_ERR_USAGE, "op %s has %d %s%s (%s); %d given", op->name, count, what,
                         count == 1 ? "" : "s", list, n);
        }
        if (slot[k]) return bfail(r, NMO_ERR_USAGE, "%s %s of op %s given twice", what, spec[k].name, op->name);
        slot[k] = &t[i];
        if (dt_of(t[i].dtype) < 0) {
            char known[256];
            size_t off = 0;
            for (int f = 0; f < NMO_FMT_COUNT; f++)
                off += (size_t)snprintf(known + off, sizeof known - off, "%s ", nmo_fmt_name((nmo_fmt)f));
            return bfail(r, NMO_ERR_UNKNOWN_DTYPE, "%s %s: unknown dtype '%s' (known: %sint32 int64)", what,
                         spec[k].name, t[i].dtype ? t[i].dtype : "(none)", known);
        }
        if (t[i].ndims < 0 || t[i].ndims > NMO_MAX_DIMS || (t[i].ndims && !t[i].dims))
            return bfail(r, NMO_ERR_SHAPE, "%s %s: %d dims (at most %d)", what, spec[k].name, t[i].ndims,
                         NMO_MAX_DIMS);
        for (int d = 0; d < t[i].ndims; d++)
            if (t[i].dims[d] < 1)
                return bfail(r, NMO_ERR_SHAPE, "%s %s: dim %d is %lld (every dim must be >= 1)", what,
                             spec[k].name, d, (long long)t[i].dims[d]);
        if (dims_numel(t[i].ndims, t[i].dims) > NMO_MAX_ELEMS)
            return bfail(r, NMO_ERR_SHAPE, "%s %s: more than %lld elements", what, spec[k].name,
                         (long long)NMO_MAX_ELEMS);
        if (!t[i].data) return bfail(r, NMO_ERR_USAGE, "%s %s: no data", what, spec[k].name);
    }
    return NMO_OK;
}

/* ---- shape inference ----------------------------------------------------------------
 * An operator maps its problem shape onto tensor dims (op->setup); the binding is handed
 * the dims. To invert the map without per-operator code, run setup on a probe shape of
 * distinct values and note where each value lands among the given tensors' dims; read
 * the real shape from those places; then run setup on it and demand that every given
 * tensor's dims match (so a guess is never used unchecked). Setups reject some probes (a
 * filter larger than its input, Hq not a multiple of Hkv, an odd head dim, groups not
 * dividing C), hence three probe patterns: distinct primes; 2*3^(n-1-i) (each a multiple
 * of the next, all even, descending); the same times the integer parameters (groups). */
static int probe_shape(int64_t *v, int ns, int pattern, const double *param, int nparam)
{
    static const int64_t primes[NMO_MAX_DIMS] = {2, 3, 5, 7, 11, 13, 17, 19};
    int64_t mul = 1;
    if (pattern == 2) {
        for (int i = 0; i < nparam; i++)
            if (param[i] >= 2 && param[i] <= 64 && param[i] == floor(param[i]) && mul * (int64_t)param[i] <= 4096)
                mul *= (int64_t)param[i];
        if (mul == 1) return 0;
    }
    for (int i = 0; i < ns; i++) {
        if (pattern == 0) {
            v[i] = primes[i];
        } else {
            int64_t p = 2;
            for (int j = 0; j < ns - 1 - i; j++) p *= 3;
            v[i] = p * mul;
        }
    }
    return 1;
}

/* setup alone on a shape (dims only, no storage: nothing to free); 0 when the op
 * accepts it. */
static int setup_on(nmo_case *c, const bprob *p, int ns, const int64_t *shape, nmo_err *err)
{
    memset(c, 0, sizeof *c);
    c->op = p->op;
    c->plan = p->plan;
    c->nshape = ns;
    memcpy(c->shape, shape, (size_t)ns * sizeof shape[0]);
    c->n_in = p->op->n_in;
    c->n_out = p->op->n_out;
    for (int i = 0; i < p->op->n_param; i++) c->param[i] = p->pset[i] ? p->pval[i] : p->op->param[i].def;
    return p->op->setup(c, err) != NMO_OK;
}

/* The first given tensor whose dims differ from the case's: 0 when none, else a message. */
static int dims_mismatch(char *msg, size_t n, const bprob *p, const nmo_case *c, const char *from)
{
    for (int io = 0; io < 2; io++) {
        int count = io ? c->n_out : c->n_in;
        for (int k = 0; k < count; k++) {
            const nmo_bind_tensor *t = io ? p->out[k] : p->in[k];
            const nmo_tensor *want = io ? &c->out[k] : &c->in[k];
            if (!t || dims_match(t, want)) continue;
            char got[160], exp[160], sh[128];
            nmo__fmt_dims(got, sizeof got, t->ndims, t->dims);
            nmo__fmt_dims(exp, sizeof exp, want->ndims, want->dims);
            shape_text(sh, sizeof sh, c->nshape, c->shape);
            snprintf(msg, n, "%s %s: dims %s, but op %s at shape %s%s expects %s (shape: %s)", io ? "output" : "input",
                     io ? p->op->out[k].name : p->op->in[k].name, got, p->op->name, sh, from, exp,
                     p->op->shape_doc);
            return 1;
        }
    }
    return 0;
}

static int infer_shape(nmo_bind_result *r, bprob *p)
{
    const nmo_op *op = p->op;
    char first_msg[700] = "";
    double par[NMO_MAX_PARAMS];
    for (int i = 0; i < op->n_param; i++) par[i] = p->pset[i] ? p->pval[i] : op->param[i].def;
    for (int ns = 1; ns <= NMO_MAX_DIMS; ns++) {
        for (int pat = 0; pat < 3; pat++) {
            int64_t v[NMO_MAX_DIMS];
            nmo_case c;
            if (!probe_shape(v, ns, pat, par, op->n_param) || setup_on(&c, p, ns, v, NULL)) continue;
            /* where each probe value lands in the given tensors */
            int64_t shape[NMO_MAX_DIMS];
            int found[NMO_MAX_DIMS] = {0}, ok = 1;
            char from[NMO_MAX_DIMS][64];
            for (int io = 0; io < 2 && ok; io++) {
                int count = io ? c.n_out : c.n_in;
                for (int k = 0; k < count && ok; k++) {
                    const nmo_bind_tensor *t = io ? p->out[k] : p->in[k];
                    const nmo_tensor *pt = io ? &c.out[k] : &c.in[k];
                    if (!t) continue;
                    if (t->ndims != pt->ndims && !(t->ndims == 0 && nmo_tensor_numel(pt) == 1)) {
                        ok = 0;
                        break;
                    }
                    for (int d = 0; d < t->ndims; d++)
                        for (int i = 0; i < ns; i++)
                            if (!found[i] && pt->dims[d] == v[i]) {
                                found[i] = 1;
                                shape[i] = t->dims[d];
                                snprintf(from[i], sizeof from[i], "%s", io ? op->out[k].name : op->in[k].name);
                            }
                }
            }
            for (int i = 0; i < ns && ok; i++) ok = found[i];
            if (!ok) break; /* this rank does not fit the tensors: the next one */
            nmo_case real;
            char sh[128];
            shape_text(sh, sizeof sh, ns, shape);
            nmo_err e = {{0}};
            if (setup_on(&real, p, ns, shape, &e)) {
                if (!first_msg[0])
                    snprintf(first_msg, sizeof first_msg, "shape %s (from the tensors' dims): %s", sh, e.msg);
                break;
            }
            char why[700];
            char fromtxt[200];
            snprintf(fromtxt, sizeof fromtxt, " (from %s's dims)", from[0]);
            if (dims_mismatch(why, sizeof why, p, &real, fromtxt)) {
                if (!first_msg[0]) snprintf(first_msg, sizeof first_msg, "%s", why);
                break;
            }
            p->nshape = ns;
            memcpy(p->shape, shape, sizeof shape);
            return NMO_OK;
        }
    }
    if (first_msg[0]) return bfail(r, NMO_ERR_SHAPE, "%s", first_msg);
    char dims[600] = "";
    size_t off = 0;
    for (int io = 0; io < 2; io++)
        for (int k = 0; k < (io ? op->n_out : op->n_in); k++) {
            const nmo_bind_tensor *t = io ? p->out[k] : p->in[k];
            if (!t || off >= sizeof dims) continue;
            char d[160];
            nmo__fmt_dims(d, sizeof d, t->ndims, t->dims);
            off += (size_t)snprintf(dims + off, sizeof dims - off, "%s%s %s", off ? ", " : "",
                                    io ? op->out[k].name : op->in[k].name, d);
        }
    return bfail(r, NMO_ERR_SHAPE, "cannot infer the shape of op %s from the tensors given (%s): shape is %s; "
                 "give the shape", op->name, off ? dims : "none", op->shape_doc);
}

/* Everything but the inputs' values: op, dtype, plan, params, tensors by name, shape,
 * the case (inputs allocated). gen: no tensors, shape required. */
static int problem_build(nmo_bind_result *r, bprob *p, const nmo_bind_req *q, int gen)
{
    memset(p, 0, sizeof *p);
    nmo_err err = {{0}};
    if (!q) return bfail(r, NMO_ERR_USAGE, "no request");
    if (q->api_version != NMO_API_VERSION)
        return bfail(r, NMO_ERR_USAGE, "request for binding API version %d; this library (numoracle %s) has version %d",
                     q->api_version, nmo_version(), NMO_API_VERSION);
    if (!q->op || !(p->op = nmo_op_find(q->op)))
        return bfail(r, NMO_ERR_UNKNOWN_OP, "unknown op '%s' (see numoracle ops)", q->op ? q->op : "(none)");
    const nmo_op *op = p->op;
    if (!gen) {
        int s = map_tensors(r, p->in, op, 0, q->in, q->n_in);
        if (s == NMO_OK) s = map_tensors(r, p->out, op, 1, q->out, q->n_out);
        if (s != NMO_OK) return s;
    }

    /* dtype: given, or the first output's, or the first data input's */
    const char *dt = q->dtype && q->dtype[0] ? q->dtype : NULL;
    for (int k = 0; !dt && k < op->n_out; k++)
        if (p->out[k] && dt_of(p->out[k]->dtype) < NMO_FMT_COUNT) dt = p->out[k]->dtype;
    for (int pass = 0; pass < 2; pass++) /* data inputs first; then any but labels (kl_div) */
        for (int k = 0; !dt && k < op->n_in; k++)
            if (p->in[k] && (pass ? op->in[k].role != NMO_ROLE_LABEL : op->in[k].role == NMO_ROLE_DATA) &&
                dt_of(p->in[k]->dtype) < NMO_FMT_COUNT)
                dt = p->in[k]->dtype;
    if (!dt) return bfail(r, NMO_ERR_USAGE, "op %s: give the dtype (dtypes: %s)", op->name, op->dtypes);
    if (nmo_fmt_from_name(&p->dtype, dt) != NMO_OK) {
        char known[256];
        size_t off = 0;
        for (int f = 0; f < NMO_FMT_COUNT; f++)
            off += (size_t)snprintf(known + off, sizeof known - off, f ? " %s" : "%s", nmo_fmt_name((nmo_fmt)f));
        return bfail(r, NMO_ERR_UNKNOWN_DTYPE, "unknown dtype '%s' (known: %s)", dt, known);
    }
    if (!nmo_op_has_dtype(op, p->dtype))
        return bfail(r, NMO_ERR_UNSUPPORTED, "op %s has no dtype %s (dtypes: %s; see numoracle ops)", op->name,
                     nmo_fmt_name(p->dtype), op->dtypes);

    /* plan: the dtype's default, the text over it, then max_ulps */
    nmo_plan_default(&p->plan, p->dtype);
    if (q->plan && q->plan[0] && nmo_plan_parse_op(&p->plan, op->name, q->plan, &err) != NMO_OK)
        return bfail(r, NMO_ERR_PARSE, "%s", err.msg);
    if (q->max_ulps < 0 || q->max_ulps > (long)1 << 40)
        return bfail(r, NMO_ERR_USAGE, "bad max_ulps %ld: expected a positive integer", q->max_ulps);
    if (q->max_ulps > 0) p->plan.max_ulps = q->max_ulps;

    /* parameters by name */
    if (q->n_param < 0 || (q->n_param > 0 && (!q->param_names || !q->param_values)))
        return bfail(r, NMO_ERR_USAGE, "bad parameter list (%d)", q->n_param);
    for (int i = 0; i < q->n_param; i++) {
        const char *name = q->param_names[i];
        int k = name ? nmo_op_param_index(op, name) : -1;
        if (k < 0) {
            char list[256] = "";
            size_t off = 0;
            for (int j = 0; j < op->n_param; j++)
                off += (size_t)snprintf(list + off, sizeof list - off, j ? " %s" : "%s", op->param[j].name);
            return bfail(r, NMO_ERR_USAGE, "unknown param '%s' for op %s (params: %s)", name ? name : "(none)",
                         op->name, op->n_param ? list : "none");
        }
        double v = q->param_values[i];
        if (!isfinite(v))
            return bfail(r, NMO_ERR_USAGE, "bad value %g for param %s of op %s (expected a finite number)", v, name,
                         op->name);
        if (p->pset[k]) return bfail(r, NMO_ERR_USAGE, "param %s of op %s given twice", name, op->name);
        p->pval[k] = v;
        p->pset[k] = 1;
    }

    /* shape: given, or inferred from the tensors */
    if (q->nshape < 0 || q->nshape > NMO_MAX_DIMS || (q->nshape > 0 && !q->shape))
        return bfail(r, NMO_ERR_SHAPE, "%s: shape has %d dims", op->name, q->nshape);
    if (q->nshape > 0) {
        p->nshape = q->nshape;
        p->shape_given = 1;
        for (int i = 0; i < q->nshape; i++) {
            if (q->shape[i] < 1)
                return bfail(r, NMO_ERR_SHAPE, "%s: shape dim %d is %lld (every dim must be >= 1)", op->name, i,
                             (long long)q->shape[i]);
            p->shape[i] = q->shape[i];
        }
    } else if (gen) {
        return bfail(r, NMO_ERR_SHAPE, "op %s: give the shape (%s)", op->name, op->shape_doc);
    } else {
        int s = infer_shape(r, p);
        if (s != NMO_OK) return s;
    }

    nmo_status s = nmo_case_init_params(&p->c, op, &p->plan, p->nshape, p->shape, p->pval, p->pset, &err);
    if (s != NMO_OK) return bfail(r, s, "%s", err.msg);
    p->have_case = 1;
    char why[700];
    if (!gen && dims_mismatch(why, sizeof why, p, &p->c, ""))
        return bfail(r, NMO_ERR_SHAPE, "%s", why);
    return NMO_OK;
}

static void problem_free(bprob *p)
{
    if (p->have_case) nmo_case_free(&p->c);
    p->have_case = 0;
}

/* Input k's values into the case: the case's dtype, or integers into a label input
 * (converted exactly, as the CLI's --input-dtype). */
static int load_input(nmo_bind_result *r, bprob *p, int k)
{
    const nmo_bind_tensor *t = p->in[k];
    nmo_tensor *dst = &p->c.in[k];
    const nmo_op *op = p->op;
    int dt = dt_of(t->dtype);
    int64_t n = nmo_tensor_numel(dst);
    if (dt == (int)dst->dtype) {
        memcpy(dst->data, t->data, (size_t)n * nmo_fmt_bytes(dst->dtype));
        return NMO_OK;
    }
    if (op->in[k].role == NMO_ROLE_LABEL && (dt == NMO_DT_INT32 || dt == NMO_DT_INT64)) {
        for (int64_t i = 0; i < n; i++) {
            double v;
            if (!nmo_raw_get_f64(&v, t->data, dt, i) || !nmo_fmt_is_repr(dst->dtype, v))
                return bfail(r, NMO_ERR_DATA, "input %s: element %lld (%.17g) is not exactly a %s value", op->in[k].name,
                             (long long)i, v, nmo_fmt_name(dst->dtype));
            nmo_tensor_set(dst, i, v);
        }
        return NMO_OK;
    }
    const char *why = op->in[k].role == NMO_ROLE_LABEL ? " (class labels: fp32 values, or int32/int64)"
                      : dst->dtype == p->plan.in      ? " (the plan's in)"
                                                      : " (the operator stores it so: numoracle ops)";
    return bfail(r, NMO_ERR_USAGE, "input %s: dtype %s, but op %s under this plan takes %s%s", op->in[k].name,
                 t->dtype, op->name, nmo_fmt_name(dst->dtype), why);
}

/* The library's JSON report, with what a binding shows beside it. */
static char *report_json(const nmo_report *rep, const bprob *p, const char *name, int bounds_only)
{
    char *base = nmo_report_json(rep, &p->c, name ? name : "given", NULL, 0);
    cJSON *o = base ? cJSON_Parse(base) : NULL;
    free(base);
    if (!o) return NULL;
    cJSON_DeleteItemFromObject(o, "seed"); /* no generated inputs: the seed means nothing */
    char plan[512];
    nmo_plan_to_string(&p->c.plan, plan, sizeof plan);
    cJSON_AddStringToObject(o, "plan_text", plan);
    cJSON_AddStringToObject(o, "dtype", nmo_fmt_name(p->dtype));
    cJSON_AddNumberToObject(o, "api_version", NMO_API_VERSION);
    cJSON *outs = cJSON_AddObjectToObject(o, "outputs");
    for (int k = 0; k < p->c.n_out; k++) {
        cJSON *d = cJSON_AddArrayToObject(outs, p->op->out[k].name);
        for (int i = 0; i < p->c.out[k].ndims; i++) cJSON_AddItemToArray(d, cJSON_CreateNumber((double)p->c.out[k].dims[i]));
    }
    if (bounds_only) {
        cJSON_DeleteItemFromObject(o, "candidate");
        cJSON_DeleteItemFromObject(o, "verdict");
        cJSON_DeleteItemFromObject(o, "counts");
        cJSON_DeleteItemFromObject(o, "worst");
    } else if (rep->has_worst) {
        cJSON *wo = cJSON_GetObjectItem(o, "worst");
        const nmo_tensor *t = &p->c.out[rep->worst.k];
        int64_t co[NMO_MAX_DIMS], idx = rep->worst.index;
        for (int d = t->ndims - 1; d >= 0; d--) {
            co[d] = idx % t->dims[d];
            idx /= t->dims[d];
        }
        cJSON *ca = cJSON_AddArrayToObject(wo, "coords");
        for (int d = 0; d < t->ndims; d++) cJSON_AddItemToArray(ca, cJSON_CreateNumber((double)co[d]));
    }
    char *s = cJSON_Print(o);
    cJSON_Delete(o);
    return s;
}

static void describe_outputs(nmo_bind_result *r, const bprob *p)
{
    r->n = p->c.n_out;
    for (int k = 0; k < p->c.n_out; k++) {
        snprintf(r->name[k], sizeof r->name[k], "%s", p->op->out[k].name);
        r->dtype[k] = nmo_fmt_name(p->c.out[k].dtype);
        r->ndims[k] = p->c.out[k].ndims;
        memcpy(r->dims[k], p->c.out[k].dims, sizeof r->dims[k]);
        r->numel[k] = nmo_tensor_numel(&p->c.out[k]);
    }
}

static int run_check(nmo_bind_result *r, bprob *p, const nmo_bind_req *q)
{
    const nmo_op *op = p->op;
    nmo_err err = {{0}};
    int bounds_only = q->n_out == 0;

    /* every input the reference reads, and every output, must be given */
    char miss[256] = "";
    size_t off = 0;
    int nmiss = 0;
    for (int k = 0; k < op->n_in; k++) {
        if (p->in[k] || (op->in[k].flags & NMO_IN_SOURCE)) continue;
        if (op->in[k].flags & NMO_IN_OPTIONAL) {
            p->c.absent |= 1u << k; /* a saved statistic: the reference encloses its recomputation */
            continue;
        }
        off += (size_t)snprintf(miss + off, off < sizeof miss ? sizeof miss - off : 0, nmiss ? ", %s" : "%s",
                                op->in[k].name);
        nmiss++;
    }
    char list[256];
    if (nmiss) {
        names_list(list, sizeof list, op->in, op->n_in);
        return bfail(r, NMO_ERR_USAGE, "input%s %s of op %s not given (inputs: %s): outputs are judged on the inputs "
                     "they were computed from", nmiss > 1 ? "s" : "", miss, op->name, list);
    }
    for (int k = 0; k < op->n_out && !bounds_only; k++)
        if (!p->out[k]) {
            names_list(list, sizeof list, op->out, op->n_out);
            return bfail(r, NMO_ERR_USAGE, "output %s of op %s not given (outputs: %s)", op->out[k].name, op->name, list);
        }
    for (int k = 0; k < op->n_in; k++) {
        if (p->in[k]) {
            int s = load_input(r, p, k);
            if (s != NMO_OK) return s;
            if (nmo_case_check_input(&p->c, k, NULL, &err) != NMO_OK) return bfail(r, NMO_ERR_DATA, "%s", err.msg);
        } else if (!(p->c.absent & (1u << k))) {
            p->c.in_src[k] = "unused";
        }
    }
    nmo_tensor cand[NMO_MAX_TENSORS];
    memset(cand, 0, sizeof cand);
    for (int k = 0; k < op->n_out && !bounds_only; k++) {
        const nmo_bind_tensor *t = p->out[k];
        if (dt_of(t->dtype) != (int)p->plan.out) {
            char pl[512];
            return bfail(r, NMO_ERR_USAGE, "output %s: dtype %s, but the plan stores outputs as %s (plan: %s)",
                         op->out[k].name, t->dtype, nmo_fmt_name(p->plan.out),
                         nmo_plan_to_string(&p->plan, pl, sizeof pl));
        }
        cand[k] = p->c.out[k];
        cand[k].data = (void *)t->data; /* read only: nmo_check never writes a candidate */
        cand[k].own = 0;
    }

    nmo_check_opts co = {0};
    if (!q->engine || !q->engine[0] || strcmp(q->engine, "auto") == 0) co.mode = NMO_MODE_ESCALATE;
    else if (strcmp(q->engine, "certified") == 0) co.mode = NMO_MODE_CERT;
    else return bfail(r, NMO_ERR_USAGE, "bad engine '%s': expected auto or certified", q->engine);
    co.keep_verdicts = !bounds_only && (q->flags & NMO_BIND_VERDICTS);
    co.keep_bounds = bounds_only || (q->flags & NMO_BIND_BOUNDS);
    nmo_report rep;
    if (q->flags & NMO_BIND_DEVICE_OUT) { /* outputs in device memory: the GPU tier judges them */
        nmo_bind_device_checker dc = device_checker;
        if (bounds_only || op->n_out != 1)
            return bfail(r, NMO_ERR_USAGE, "outputs in device memory: one output of op %s to judge", op->name);
        if (!dc)
            return bfail(r, NMO_ERR_UNSUPPORTED, "outputs in device memory, but no device checker is installed "
                         "(libnumoracle_gpu.so of a -Dgpu=cuda|hip|sim build: nmo_bind_set_device_checker)");
        int s = dc(&rep, &p->c, cand[0].data, &co, &err);
        if (s != NMO_OK) return bfail(r, s, "%s", err.msg);
    } else if (nmo_check(&rep, &p->c, bounds_only ? NULL : cand, &co, &err) != NMO_OK) {
        return bfail(r, NMO_ERR_USAGE, "%s", err.msg);
    }

    describe_outputs(r, p);
    for (int k = 0; k < op->n_out; k++) {
        r->verdicts[k] = rep.verdicts[k];
        r->rlo[k] = rep.rlo[k];
        r->rhi[k] = rep.rhi[k];
        r->flags[k] = rep.bflags[k];
        rep.verdicts[k] = NULL;
        rep.rlo[k] = rep.rhi[k] = NULL;
        rep.bflags[k] = NULL;
        if (!co.keep_bounds) continue;
        nmo_tensor lo = p->c.out[k], hi = p->c.out[k];
        lo.data = hi.data = NULL;
        lo.own = hi.own = 0;
        if (nmo_tensor_alloc(&lo, &err) != NMO_OK || nmo_tensor_alloc(&hi, &err) != NMO_OK) {
            nmo_tensor_free(&lo);
            nmo_report_free(&rep);
            return bfail(r, NMO_ERR_NOMEM, "%s", err.msg);
        }
        for (int64_t i = 0; i < r->numel[k]; i++) {
            nmo_tensor_set_bits(&lo, i, nmo_bind_bound_bits(p->plan.out, r->rlo[k][i]));
            nmo_tensor_set_bits(&hi, i, nmo_bind_bound_bits(p->plan.out, r->rhi[k][i]));
        }
        r->lo_bits[k] = lo.data;
        r->hi_bits[k] = hi.data;
    }
    r->json = report_json(&rep, p, q->name, bounds_only);
    r->verdict = bounds_only ? -1 : (int)rep.verdict;
    nmo_report_free(&rep);
    if (!r->json) return bfail(r, NMO_ERR_NOMEM, "out of memory");
    return NMO_OK;
}

NMO_API nmo_bind_result *nmo_bind_check(const nmo_bind_req *req)
{
    nmo_bind_result *r = result_new();
    if (!r) return NULL;
    bprob *p = malloc(sizeof *p);
    if (!p) {
        bfail(r, NMO_ERR_NOMEM, "out of memory");
        return r;
    }
    if (problem_build(r, p, req, 0) == NMO_OK) run_check(r, p, req);
    problem_free(p);
    free(p);
    if (r->status != NMO_OK) {
        /* nothing but the message is read from a failed result */
        for (int k = 0; k < NMO_MAX_TENSORS; k++) {
            free(r->verdicts[k]), free(r->rlo[k]), free(r->rhi[k]), free(r->flags[k]);
            free(r->lo_bits[k]), free(r->hi_bits[k]);
            r->verdicts[k] = NULL, r->rlo[k] = r->rhi[k] = NULL, r->flags[k] = NULL;
            r->lo_bits[k] = r->hi_bits[k] = NULL;
        }
        r->n = 0;
    }
    return r;
}

NMO_API nmo_bind_result *nmo_bind_gen(const nmo_bind_req *req)
{
    nmo_bind_result *r = result_new();
    if (!r) return NULL;
    bprob *p = malloc(sizeof *p);
    if (!p) {
        bfail(r, NMO_ERR_NOMEM, "out of memory");
        return r;
    }
    nmo_family fam = NMO_FAM_GAUSSIAN;
    if (problem_build(r, p, req, 1) == NMO_OK) {
        if (req->family && req->family[0] && nmo_family_from_name(&fam, req->family) != NMO_OK) {
            char known[256] = "";
            size_t off = 0;
            for (int f = 0; f < NMO_FAM_COUNT; f++)
                off += (size_t)snprintf(known + off, sizeof known - off, f ? " %s" : "%s",
                                        nmo_family_name((nmo_family)f));
            bfail(r, NMO_ERR_UNKNOWN_FAMILY, "unknown family '%s' (known: %s)", req->family, known);
        } else {
            /* as the CLI's gen: the family's values, derived inputs from them */
            nmo_case_fill(&p->c, (int)fam, req->seed);
            r->n = p->c.n_in;
            for (int k = 0; k < p->c.n_in; k++) {
                const nmo_tensor *t = &p->c.in[k];
                snprintf(r->name[k], sizeof r->name[k], "%s", p->op->in[k].name);
                r->dtype[k] = nmo_fmt_name(t->dtype);
                r->ndims[k] = t->ndims;
                memcpy(r->dims[k], t->dims, sizeof r->dims[k]);
                r->numel[k] = nmo_tensor_numel(t);
                r->data[k] = t->data; /* the case's packed storage, handed over */
                p->c.in[k].data = NULL;
                p->c.in[k].own = 0;
            }
            cJSON *o = cJSON_CreateObject();
            char plan[512];
            cJSON_AddStringToObject(o, "op", p->op->name);
            cJSON *sh = cJSON_AddArrayToObject(o, "shape");
            for (int i = 0; i < p->c.nshape; i++) cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)p->c.shape[i]));
            cJSON_AddStringToObject(o, "family", nmo_family_name(fam));
            cJSON_AddNumberToObject(o, "seed", (double)req->seed);
            cJSON_AddStringToObject(o, "plan_text", nmo_plan_to_string(&p->c.plan, plan, sizeof plan));
            r->json = cJSON_Print(o);
            cJSON_Delete(o);
            if (!r->json) bfail(r, NMO_ERR_NOMEM, "out of memory");
        }
    }
    problem_free(p);
    free(p);
    if (r->status != NMO_OK) {
        for (int k = 0; k < NMO_MAX_TENSORS; k++) free(r->data[k]), r->data[k] = NULL;
        r->n = 0;
    }
    return r;
}

/* ---- listings -------------------------------------------------------------------- */

static const char *role_name(nmo_role r)
{
    switch (r) {
    case NMO_ROLE_DATA: return "data";
    case NMO_ROLE_WEIGHT: return "weight";
    case NMO_ROLE_BIAS: return "bias";
    case NMO_ROLE_LABEL: return "label";
    case NMO_ROLE_DERIVED: return "derived";
    case NMO_ROLE_POSITIVE: return "positive";
    }
    return "?";
}

static cJSON *tspecs_json(const nmo_tspec *t, int n)
{
    cJSON *a = cJSON_CreateArray();
    for (int k = 0; k < n; k++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", t[k].name);
        cJSON_AddStringToObject(o, "role", role_name(t[k].role));
        cJSON_AddStringToObject(o, "doc", t[k].doc ? t[k].doc : "");
        cJSON_AddBoolToObject(o, "optional", (t[k].flags & NMO_IN_OPTIONAL) != 0);
        cJSON_AddBoolToObject(o, "source_only", (t[k].flags & NMO_IN_SOURCE) != 0);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

static cJSON *ops_json(void)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < nmo_op_count(); i++) {
        const nmo_op *op = nmo_op_at(i);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", op->name);
        cJSON_AddStringToObject(o, "summary", op->summary ? op->summary : "");
        cJSON_AddStringToObject(o, "shape", op->shape_doc ? op->shape_doc : "");
        cJSON_AddItemToObject(o, "inputs", tspecs_json(op->in, op->n_in));
        cJSON_AddItemToObject(o, "outputs", tspecs_json(op->out, op->n_out));
        cJSON *pa = cJSON_AddArrayToObject(o, "params");
        for (int k = 0; k < op->n_param; k++) {
            cJSON *po = cJSON_CreateObject();
            cJSON_AddStringToObject(po, "name", op->param[k].name);
            cJSON_AddNumberToObject(po, "default", op->param[k].def);
            cJSON_AddStringToObject(po, "doc", op->param[k].doc ? op->param[k].doc : "");
            cJSON_AddItemToArray(pa, po);
        }
        cJSON *dts = cJSON_AddObjectToObject(o, "dtypes");
        nmo_fmt fl[NMO_FMT_COUNT];
        for (int d = 0, nd = nmo_op_dtypes(op, fl, NMO_FMT_COUNT); d < nd; d++) {
            nmo_plan plan;
            char text[512];
            nmo_plan_default(&plan, fl[d]);
            cJSON_AddStringToObject(dts, nmo_fmt_name(fl[d]), nmo_plan_to_string(&plan, text, sizeof text));
        }
        cJSON_AddStringToObject(o, "rounding", op->rounding_doc ? op->rounding_doc : "");
        cJSON *ts = cJSON_AddArrayToObject(o, "test_shapes"); /* the generic tests' small shapes */
        for (const char *p = op->test_shapes ? op->test_shapes : ""; *p;) {
            size_t l = strcspn(p, ";");
            char sh[128];
            snprintf(sh, sizeof sh, "%.*s", (int)l, p);
            if (l) cJSON_AddItemToArray(ts, cJSON_CreateString(sh));
            p += l + (p[l] == ';');
        }
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

NMO_API nmo_bind_result *nmo_bind_list(const char *what, const char *opname, const char *dtype)
{
    nmo_bind_result *r = result_new();
    if (!r) return NULL;
    const nmo_op *op = NULL;
    if (opname && opname[0] && !(op = nmo_op_find(opname))) {
        bfail(r, NMO_ERR_UNKNOWN_OP, "unknown op '%s' (see numoracle ops)", opname);
        return r;
    }
    cJSON *o = NULL;
    if (what && strcmp(what, "ops") == 0) {
        o = ops_json();
    } else if (what && strcmp(what, "candidates") == 0) {
        if (!op) {
            bfail(r, NMO_ERR_USAGE, "candidates: give the op");
            return r;
        }
        o = cJSON_CreateArray();
        for (int i = 0; i < nmo_cand_count(); i++) {
            const nmo_cand *c = nmo_cand_at(i);
            if (strcmp(c->op, op->name) != 0) continue;
            cJSON *co = cJSON_CreateObject();
            cJSON_AddStringToObject(co, "name", c->name);
            cJSON_AddBoolToObject(co, "correct", c->correct != 0);
            cJSON_AddStringToObject(co, "desc", c->desc ? c->desc : "");
            if (c->plan) cJSON_AddStringToObject(co, "plan", c->plan);
            else cJSON_AddNullToObject(co, "plan");
            cJSON_AddItemToArray(o, co);
        }
    } else if (what && strcmp(what, "plans") == 0) {
        o = nmo_preset_json();
        if (op) { /* the plan each preset gives op at dtype */
            nmo_fmt dt = NMO_BF16;
            if (dtype && dtype[0] && nmo_fmt_from_name(&dt, dtype) != NMO_OK) {
                cJSON_Delete(o);
                bfail(r, NMO_ERR_UNKNOWN_DTYPE, "unknown dtype '%s'", dtype);
                return r;
            }
            cJSON *it;
            cJSON_ArrayForEach(it, o)
            {
                nmo_plan p;
                char text[80], buf[512];
                nmo_err err = {{0}};
                nmo_plan_default(&p, dt);
                snprintf(text, sizeof text, "preset=%s", cJSON_GetStringValue(cJSON_GetObjectItem(it, "name")));
                if (nmo_plan_parse_op(&p, op->name, text, &err) != NMO_OK) {
                    cJSON_Delete(o);
                    bfail(r, NMO_ERR_PARSE, "%s", err.msg);
                    return r;
                }
                cJSON_AddStringToObject(it, "plan", nmo_plan_to_string(&p, buf, sizeof buf));
            }
        }
    } else {
        bfail(r, NMO_ERR_USAGE, "unknown listing '%s' (ops, candidates, plans)", what ? what : "(none)");
        return r;
    }
    r->json = o ? cJSON_Print(o) : NULL;
    cJSON_Delete(o);
    if (!r->json) bfail(r, NMO_ERR_NOMEM, "out of memory");
    return r;
}
