/* numoracle: the operator registry (the list lives in refs/meson.build) and the case
 * helpers shared by every operator. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numoracle/gen.h"
#include "numoracle/op.h"
#include "refs/ref_common.h"

#define NMO_OP(name) extern const nmo_op nmo_op_##name;
#include "nmo_ops.def"
#undef NMO_OP

static const nmo_op *const ops[] = {
#define NMO_OP(name) &nmo_op_##name,
#include "nmo_ops.def"
#undef NMO_OP
};

int nmo_op_count(void) { return (int)(sizeof ops / sizeof ops[0]); }

const nmo_op *nmo_op_at(int i) { return i >= 0 && i < nmo_op_count() ? ops[i] : NULL; }

const nmo_op *nmo_op_find(const char *name)
{
    for (int i = 0; i < nmo_op_count(); i++)
        if (name && strcmp(ops[i]->name, name) == 0) return ops[i];
    return NULL;
}

int nmo_op_input_index(const nmo_op *op, const char *name)
{
    for (int i = 0; i < op->n_in; i++)
        if (strcmp(op->in[i].name, name) == 0) return i;
    return -1;
}

uint32_t nmo_op_optional_mask(const nmo_op *op)
{
    uint32_t m = 0;
    for (int i = 0; i < op->n_in; i++)
        if (op->in[i].flags & NMO_IN_OPTIONAL) m |= 1u << i;
    return m;
}

int nmo_op_dtypes(const nmo_op *op, nmo_fmt *out, int max)
{
    int n = 0;
    for (const char *p = op->dtypes ? op->dtypes : ""; *p && n < max;) {
        while (*p == ' ') p++;
        size_t l = strcspn(p, " ");
        if (!l) break;
        char name[32];
        snprintf(name, sizeof name, "%.*s", (int)l, p);
        p += l;
        nmo_fmt f;
        if (nmo_fmt_from_name(&f, name) == NMO_OK) out[n++] = f;
    }
    return n;
}

int nmo_op_has_dtype(const nmo_op *op, nmo_fmt f)
{
    nmo_fmt l[NMO_FMT_COUNT];
    int n = nmo_op_dtypes(op, l, NMO_FMT_COUNT);
    for (int i = 0; i < n; i++)
        if (l[i] == f) return 1;
    return 0;
}

/* One copy of the label rule (the references' nmo_sf_ref_label treats anything else as
 * an undefined result): an integer in [0, V), or ignore_index. */
nmo_status nmo_case_check_input(const nmo_case *c, int k, const char *what, nmo_err *err)
{
    const nmo_op *op = c->op;
    if (k < 0 || k >= c->n_in || op->in[k].role != NMO_ROLE_LABEL || !c->in[k].data) return NMO_OK;
    int ip = nmo_op_param_index(op, "ignore_index");
    double ignore = ip >= 0 ? c->param[ip] : NAN;
    int64_t V = op->row_len ? op->row_len(c) : 0, n = nmo_tensor_numel(&c->in[k]);
    for (int64_t i = 0; i < n; i++) {
        double v = nmo_tensor_get(&c->in[k], i);
        if (v == ignore || (v >= 0 && v < (double)V && v == floor(v))) continue;
        char iv[64] = "";
        if (ip >= 0) snprintf(iv, sizeof iv, " nor ignore_index %g", ignore);
        return nmo_err_set(err, NMO_ERR_DATA, "%s%sinput %s: element %lld is %.17g, not a class in [0, %lld)%s",
                           what ? what : "", what ? ": " : "", op->in[k].name, (long long)i, v,
                           (long long)V, iv);
    }
    return NMO_OK;
}

int nmo_op_param_index(const nmo_op *op, const char *name)
{
    for (int i = 0; i < op->n_param; i++)
        if (strcmp(op->param[i].name, name) == 0) return i;
    return -1;
}

nmo_status nmo_ref_rows_shape(const nmo_case *c, int64_t *rows, int64_t *n, nmo_err *err)
{
    if (c->nshape < 1)
        return nmo_err_set(err, NMO_ERR_SHAPE, "%s: shape needs at least one dim", c->op->name);
    int64_t r = 1;
    for (int i = 0; i + 1 < c->nshape; i++) r *= c->shape[i];
    *rows = r;
    *n = c->shape[c->nshape - 1];
    return NMO_OK;
}

nmo_status nmo_ref_tensor(nmo_tensor *t, nmo_fmt dtype, int ndims, const int64_t *dims,
                          nmo_err *err)
{
    return nmo_tensor_init(t, dtype, ndims, dims, err);
}

int64_t nmo_ref_row_len_last(const nmo_case *c) { return c->shape[c->nshape - 1]; }

int64_t nmo_ref_units_rows(const nmo_case *c)
{
    int64_t r = 1;
    for (int i = 0; i + 1 < c->nshape; i++) r *= c->shape[i];
    return r;
}

void nmo_ref_unit_span_rows(const nmo_case *c, int64_t u, int k, int64_t *begin, int64_t *count,
                            int64_t *stride)
{
    (void)k;
    int64_t n = c->shape[c->nshape - 1];
    *begin = u * n;
    *count = n;
    *stride = 1;
}

unsigned nmo_plan_fields_set(const nmo_plan *p)
{
    unsigned f = 0;
    if (p->inter != p->compute) f |= NMO_PF_INTER;
    if (p->sum == NMO_SUM_EXACT) f |= NMO_PF_SUM_EXACT;
    if (p->sum == NMO_SUM_MMA) f |= NMO_PF_SUM_MMA;
    if (p->sum == NMO_SUM_GEOM) f |= NMO_PF_SUM_GEOM;
    return f;
}

/* The plan's text for one field, as nmo_plan_to_string writes it ("inter=bf16"). */
static void field_text(char *buf, size_t n, const nmo_plan *p, const char *key)
{
    char text[512];
    nmo_plan_to_string(p, text, sizeof text);
    size_t kl = strlen(key);
    for (const char *t = text; *t;) {
        size_t l = strcspn(t, " ");
        if (l > kl && strncmp(t, key, kl) == 0 && t[kl] == '=') {
            snprintf(buf, n, "%.*s", (int)l, t);
            return;
        }
        t += l;
        while (*t == ' ') t++;
    }
    snprintf(buf, n, "%s", key);
}

/* "inter, sum=exact": the set-able fields op accepts (modelled or vacuous), "" if none. */
static void models_text(char *buf, size_t n, const nmo_op *op)
{
    static const struct {
        unsigned bit;
        const char *name;
    } opt[] = {{NMO_PF_INTER, "inter"},
               {NMO_PF_SUM_EXACT, "sum=exact"},
               {NMO_PF_SUM_MMA, "sum=mma"},
               {NMO_PF_SUM_GEOM, "sum=tree/blocked"}};
    size_t used = 0;
    buf[0] = 0;
    for (size_t i = 0; i < sizeof opt / sizeof opt[0]; i++)
        if ((op->plan_fields | op->plan_vacuous) & opt[i].bit)
            used += (size_t)snprintf(buf + used, used < n ? n - used : 0, "%s%s", used ? ", " : "",
                                     opt[i].name);
}

nmo_status nmo_op_check_plan(const nmo_op *op, const nmo_plan *p, nmo_err *err)
{
    char f[64], m[96];
    unsigned bad = nmo_plan_fields_set(p) & ~(op->plan_fields | op->plan_vacuous);
    if (!bad) return NMO_OK;
    /* no reduction at all: acc has no stage either */
    int noreduce = (op->plan_vacuous & NMO_PF_ACC) != 0;
    const char *why;
    if (bad & NMO_PF_INTER) {
        field_text(f, sizeof f, p, "inter");
        why = "the reference is the fused kernel: no stage stores an intermediate in inter";
    } else if (bad & NMO_PF_SUM_EXACT) {
        field_text(f, sizeof f, p, "sum");
        why = noreduce ? "no reduction"
                       : "its reductions use the any-order bound, not the plan's dot-product model";
    } else if (bad & NMO_PF_SUM_MMA) {
        field_text(f, sizeof f, p, "sum");
        why = noreduce ? "no reduction" : "no tensor-core matrix product";
    } else {
        field_text(f, sizeof f, p, "sum");
        why = noreduce ? "no reduction"
                       : "a reduction folds further roundings into its bound (online softmax "
                         "rescaling), which the geometry's bound does not cover";
    }
    models_text(m, sizeof m, op);
    return nmo_err_set(err, NMO_ERR_UNSUPPORTED,
                       "%s does not model plan field '%s' (%s); %s accepts %s%s (see numoracle "
                       "ops --op %s)",
                       op->name, f, why, op->name, m[0] ? m : "none of inter, sum=exact, sum=mma, sum=tree/blocked",
                       m[0] ? " beyond the common fields" : "", op->name);
}

nmo_status nmo_case_init(nmo_case *c, const nmo_op *op, const nmo_plan *plan, int nshape,
                         const int64_t *shape, nmo_err *err)
{
    return nmo_case_init_params(c, op, plan, nshape, shape, NULL, NULL, err);
}

nmo_status nmo_case_init_params(nmo_case *c, const nmo_op *op, const nmo_plan *plan, int nshape,
                                const int64_t *shape, const double *param, const int *set,
                                nmo_err *err)
{
    memset(c, 0, sizeof *c);
    NMO_RETURN_IF_ERR(nmo_op_check_plan(op, plan, err));
    c->op = op;
    c->plan = *plan;
    if (nshape < 1 || nshape > NMO_MAX_DIMS)
        return nmo_err_set(err, NMO_ERR_SHAPE, "%s: shape has %d dims", op->name, nshape);
    c->nshape = nshape;
    memcpy(c->shape, shape, (size_t)nshape * sizeof shape[0]);
    c->n_in = op->n_in;
    c->n_out = op->n_out;
    for (int i = 0; i < op->n_param; i++) {
        double v = param && (!set || set[i]) ? param[i] : op->param[i].def;
        int dom = op->param[i].domain;
        /* v - v != 0: inf and NaN; a negative eps takes the root of a negative number */
        if (v - v != 0 || (dom == NMO_PDOM_NONNEG && !(v >= 0)) || (dom == NMO_PDOM_POS && !(v > 0)))
            return nmo_err_set(err, NMO_ERR_USAGE, "%s: param %s = %g is outside its domain (%s)", op->name,
                               op->param[i].name, v,
                               dom == NMO_PDOM_NONNEG ? "a finite number >= 0"
                               : dom == NMO_PDOM_POS  ? "a finite number > 0"
                                                      : "a finite number");
        c->param[i] = v;
    }
    nmo_status s = op->setup(c, err);
    if (s != NMO_OK) return s;
    for (int i = 0; i < c->n_in; i++) {
        s = nmo_tensor_alloc(&c->in[i], err);
        if (s != NMO_OK) {
            nmo_case_free(c);
            return s;
        }
    }
    return NMO_OK;
}

void nmo_case_free(nmo_case *c)
{
    for (int i = 0; i < NMO_MAX_TENSORS; i++) {
        nmo_tensor_free(&c->in[i]);
        nmo_tensor_free(&c->out[i]);
    }
}

nmo_status nmo_case_alloc_outputs(const nmo_case *c, nmo_tensor *out, int poison, nmo_err *err)
{
    for (int k = 0; k < c->n_out; k++) {
        out[k] = c->out[k];
        out[k].data = NULL;
        out[k].own = 0;
        nmo_status s = nmo_tensor_alloc(&out[k], err);
        if (s != NMO_OK) {
            for (int j = 0; j < k; j++) nmo_tensor_free(&out[j]);
            return s;
        }
        if (poison) memset(out[k].data, 0xFF, (size_t)nmo_tensor_span(&out[k]) * nmo_fmt_bytes(out[k].dtype));
    }
    return NMO_OK;
}

void nmo_case_free_outputs(const nmo_case *c, nmo_tensor *out)
{
    for (int k = 0; k < c->n_out; k++) nmo_tensor_free(&out[k]);
}

void nmo_case_fill(nmo_case *c, int family, uint64_t seed)
{
    int64_t row_len = c->op->row_len ? c->op->row_len(c) : 1;
    for (int i = 0; i < c->n_in; i++) {
        nmo_tensor *t = &c->in[i];
        switch (c->op->in[i].role) {
        case NMO_ROLE_DATA:
            nmo_gen_fill(t, (nmo_family)family, seed, (uint64_t)i, row_len);
            break;
        case NMO_ROLE_WEIGHT:
        case NMO_ROLE_BIAS: {
            /* weights 1 + 0.1 randn, biases 0.1 randn: independent of the family */
            int64_t n = nmo_tensor_numel(t);
            for (int64_t j = 0; j < n; j++) {
                double g = 0.1 * nmo_gen_normal(seed, 1000 + (uint64_t)i, (uint64_t)j);
                nmo_tensor_set(t, j, c->op->in[i].role == NMO_ROLE_WEIGHT ? 1 + g : g);
            }
            break;
        }
        case NMO_ROLE_DERIVED:
            break;
        case NMO_ROLE_POSITIVE: {
            int64_t n = nmo_tensor_numel(t);
            for (int64_t j = 0; j < n; j++)
                nmo_tensor_set(t, j, 0.5 + nmo_gen_uniform01(seed, 3000 + (uint64_t)i, (uint64_t)j));
            break;
        }
        case NMO_ROLE_LABEL: {
            int64_t n = nmo_tensor_numel(t);
            for (int64_t j = 0; j < n; j++)
                nmo_tensor_set(t, j, (double)(nmo_gen_u64(seed, 2000 + (uint64_t)i, (uint64_t)j) %
                                              (uint64_t)row_len));
            break;
        }
        }
    }
    if (c->op->derive) c->op->derive(c);
}
