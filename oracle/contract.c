/* numoracle: the four-judgment contract (numoracle/contract.h) — strict loading and the
 * resolution of a cell's specification. Format: contracts/README.md. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "numoracle/contract.h"
#include "numoracle/gen.h"

#define MAX_PROFILES 16
#define MAX_OPS 64
#define MAX_RULES 128
#define MAX_CLASSES 32

typedef struct {
    int stated;
    nmo_jspec js;
} jslot;

typedef struct {
    uint64_t ops;       /* contract operator indices the rule applies to */
    unsigned dtypes;    /* 1u << nmo_fmt */
    uint32_t profiles;  /* profile indices */
    jslot j[NMO_J_COUNT];
} rule;

struct nmo_contract {
    char what[512];
    char name[64];
    int version;
    int nprof, nops, nrules, ncls;
    nmo_contract_profile prof[MAX_PROFILES];
    nmo_contract_op ops[MAX_OPS];
    char cls[MAX_CLASSES][64];
    rule rules[MAX_RULES];
};

static const char *const jnames[NMO_J_COUNT] = {"forward_accuracy", "gradient_accuracy", "forward_invariance",
                                                "gradient_invariance"};

const char *nmo_judgment_name(nmo_judgment j)
{
    return (unsigned)j < NMO_J_COUNT ? jnames[j] : NULL;
}

/* ---- strict JSON helpers ----------------------------------------------------------------- */

#define FAIL(...) nmo_err_set(err, NMO_ERR_PARSE, __VA_ARGS__)

/* Every key of o must be in keys (NULL-terminated). */
static nmo_status only_keys(const cJSON *o, const char *what, const char *path, const char *const *keys,
                            nmo_err *err)
{
    if (!cJSON_IsObject(o)) return FAIL("%s: %s: expected an object", what, path);
    for (const cJSON *it = o->child; it; it = it->next) {
        int ok = 0;
        for (int k = 0; keys[k]; k++) ok |= strcmp(it->string, keys[k]) == 0;
        if (ok) continue;
        char known[256];
        size_t off = 0;
        known[0] = '\0';
        for (int k = 0; keys[k] && off < sizeof known; k++)
            off += (size_t)snprintf(known + off, sizeof known - off, k ? ", %s" : "%s", keys[k]);
        return FAIL("%s: %s.%s: unknown key (known: %s)", what, path, it->string, known);
    }
    return NMO_OK;
}

static nmo_status get_str(const char **out, const cJSON *o, const char *key, int required, const char *what,
                          const char *path, nmo_err *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    *out = NULL;
    if (!v) return required ? FAIL("%s: %s.%s: missing (a string)", what, path, key) : NMO_OK;
    if (!cJSON_IsString(v) || !v->valuestring[0]) return FAIL("%s: %s.%s: expected a non-empty string", what, path, key);
    *out = v->valuestring;
    return NMO_OK;
}

static nmo_status get_bool(int *out, const cJSON *o, const char *key, const char *what, const char *path,
                           nmo_err *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v) return NMO_OK; /* caller's default */
    if (!cJSON_IsBool(v)) return FAIL("%s: %s.%s: expected true or false", what, path, key);
    *out = cJSON_IsTrue(v);
    return NMO_OK;
}

/* A shape string that nmo_shape_parse accepts. */
static nmo_status get_shape(int *n, int64_t *dims, const cJSON *o, const char *key, const char *what,
                            const char *path, nmo_err *err)
{
    const char *s;
    NMO_RETURN_IF_ERR(get_str(&s, o, key, 1, what, path, err));
    nmo_err e2 = {{0}};
    if (nmo_shape_parse(n, dims, s, &e2) != NMO_OK) return FAIL("%s: %s.%s: %s", what, path, key, e2.msg);
    return NMO_OK;
}

/* {"NAME": number} parameters of op. */
static nmo_status get_params(double *param, int *set, const nmo_op *op, const cJSON *o, const char *key,
                             const char *what, const char *path, nmo_err *err)
{
    for (int i = 0; i < NMO_MAX_PARAMS; i++) set[i] = 0, param[i] = 0;
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!p) return NMO_OK;
    if (!cJSON_IsObject(p)) return FAIL("%s: %s.%s: expected an object {NAME: number}", what, path, key);
    for (const cJSON *it = p->child; it; it = it->next) {
        int k = nmo_op_param_index(op, it->string);
        if (k < 0) return FAIL("%s: %s.%s.%s: unknown param of op %s (see numoracle ops)", what, path, key,
                               it->string, op->name);
        if (!cJSON_IsNumber(it)) return FAIL("%s: %s.%s.%s: expected a number", what, path, key, it->string);
        param[k] = it->valuedouble;
        set[k] = 1;
    }
    return NMO_OK;
}

/* settings.cublas_workspace: [":4096:8", ":16:8", "unset"]: the values of
 * CUBLAS_WORKSPACE_CONFIG a run may have, kept ';'-separated. */
static nmo_status get_workspaces(char *buf, size_t n, const cJSON *o, const char *what, const char *path,
                                 nmo_err *err)
{
    buf[0] = '\0';
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "cublas_workspace");
    if (!v) return NMO_OK;
    if (!cJSON_IsArray(v) || !v->child)
        return FAIL("%s: %s.cublas_workspace: expected a non-empty array of values (\":4096:8\", \"unset\")",
                    what, path);
    size_t off = 0;
    int i = 0;
    for (const cJSON *it = v->child; it; it = it->next, i++) {
        if (!cJSON_IsString(it) || !it->valuestring[0] || strchr(it->valuestring, ';'))
            return FAIL("%s: %s.cublas_workspace[%d]: expected a non-empty string without ';'", what, path, i);
        size_t l = strlen(it->valuestring);
        if (off + l + 2 > n) return FAIL("%s: %s.cublas_workspace: longer than %d characters", what, path, (int)n - 1);
        off += (size_t)snprintf(buf + off, n - off, off ? ";%s" : "%s", it->valuestring);
    }
    return NMO_OK;
}

/* "recomputed": [NAME, ...]: inputs of op that the judged callables do not take but
 * compute themselves (a gradient through autograd uses the forward's own saved rstd, not
 * the value numoracle derives). Only optional inputs (NMO_IN_OPTIONAL, `numoracle ops`)
 * qualify: their reference encloses every recomputation (nmo_case.absent). */
static nmo_status get_recomputed(uint32_t *mask, const nmo_op *op, const cJSON *o, const char *what,
                                 const char *path, nmo_err *err)
{
    *mask = 0;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "recomputed");
    if (!v) return NMO_OK;
    if (!cJSON_IsArray(v)) return FAIL("%s: %s.recomputed: expected an array of input names", what, path);
    int i = 0;
    for (const cJSON *it = v->child; it; it = it->next, i++) {
        int k = -1;
        for (int j = 0; cJSON_IsString(it) && j < op->n_in; j++)
            if (strcmp(op->in[j].name, it->valuestring) == 0) k = j;
        if (k < 0)
            return FAIL("%s: %s.recomputed[%d]: op %s has no input %s", what, path, i, op->name,
                        cJSON_IsString(it) ? it->valuestring : "(not a string)");
        if (!(op->in[k].flags & NMO_IN_OPTIONAL))
            return FAIL("%s: %s.recomputed[%d]: input %s of op %s is not optional: its reference needs it "
                        "(only a saved statistic may be recomputed)",
                        what, path, i, it->valuestring, op->name);
        *mask |= 1u << k;
    }
    return NMO_OK;
}

/* An array of strings (or the string "*" when star is allowed: *all = 1). */
static nmo_status get_names(const cJSON **arr, int *all, const cJSON *o, const char *key, const char *what,
                            const char *path, nmo_err *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    *arr = NULL;
    *all = !v;
    if (!v) return NMO_OK;
    if (cJSON_IsString(v) && strcmp(v->valuestring, "*") == 0) {
        *all = 1;
        return NMO_OK;
    }
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) == 0)
        return FAIL("%s: %s.%s: expected a non-empty array of names or \"*\"", what, path, key);
    int i = 0;
    for (const cJSON *it = v->child; it; it = it->next, i++)
        if (!cJSON_IsString(it)) return FAIL("%s: %s.%s[%d]: expected a string", what, path, key, i);
    *arr = v;
    return NMO_OK;
}

/* ---- judgments ---------------------------------------------------------------------------- */

static nmo_status parse_cfgs(nmo_inv_config *cfg, int *n, int max, const cJSON *o, const char *key,
                             const char *what, const char *path, nmo_err *err)
{
    *n = 0;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v) return NMO_OK;
    if (!cJSON_IsArray(v)) return FAIL("%s: %s.%s: expected an array of configurations", what, path, key);
    int i = 0;
    for (const cJSON *it = v->child; it; it = it->next, i++) {
        if (i >= max) return FAIL("%s: %s.%s: more than %d configurations", what, path, key, max);
        nmo_err e2 = {{0}};
        if (!cJSON_IsString(it) || nmo_inv_config_parse(&cfg[i], it->valuestring, &e2) != NMO_OK)
            return FAIL("%s: %s.%s[%d]: %s", what, path, key, i,
                        cJSON_IsString(it) ? e2.msg : "expected a configuration string");
        (*n)++;
    }
    return NMO_OK;
}

static nmo_status parse_judgment(nmo_jspec *js, nmo_judgment j, const cJSON *o, const char *what,
                                 const char *path, nmo_err *err)
{
    static const char *const acc_keys[] = {"required", "plan", "seeds", "family", "doc", NULL};
    static const char *const inv_keys[] = {"required", "mode", "plan", "configurations", "batch_summed",
                                           "batch_summed_na", "seed", "family", "shape", "doc", NULL};
    static const char *const na_keys[] = {"na", NULL};
    memset(js, 0, sizeof *js);
    snprintf(js->where, sizeof js->where, "%.95s", path);
    js->family = NMO_FAM_GAUSSIAN;
    if (cJSON_GetObjectItemCaseSensitive(o, "na")) {
        NMO_RETURN_IF_ERR(only_keys(o, what, path, na_keys, err));
        const char *r;
        NMO_RETURN_IF_ERR(get_str(&r, o, "na", 1, what, path, err));
        js->na = 1;
        snprintf(js->reason, sizeof js->reason, "%s", r);
        return NMO_OK;
    }
    int acc = j == NMO_J_FWD_ACC || j == NMO_J_GRAD_ACC;
    NMO_RETURN_IF_ERR(only_keys(o, what, path, acc ? acc_keys : inv_keys, err));
    if (!cJSON_GetObjectItemCaseSensitive(o, "required"))
        return FAIL("%s: %s.required: missing (true or false; or give \"na\": REASON instead)", what, path);
    NMO_RETURN_IF_ERR(get_bool(&js->required, o, "required", what, path, err));
    const char *plan, *fam;
    NMO_RETURN_IF_ERR(get_str(&plan, o, "plan", 0, what, path, err));
    if (plan && strcmp(plan, "default") != 0) {
        nmo_plan test;
        nmo_err e2 = {{0}};
        nmo_plan_default(&test, NMO_FP32);
        if (nmo_plan_parse_op(&test, "rms_norm", plan, &e2) != NMO_OK && strstr(e2.msg, "does not model") == NULL)
            return FAIL("%s: %s.plan: %s", what, path, e2.msg);
        snprintf(js->plan, sizeof js->plan, "%s", plan);
    }
    NMO_RETURN_IF_ERR(get_str(&fam, o, "family", 0, what, path, err));
    if (fam) {
        nmo_family f;
        if (nmo_family_from_name(&f, fam) != NMO_OK)
            return FAIL("%s: %s.family: unknown family '%s'", what, path, fam);
        js->family = (int)f;
    }
    if (acc) {
        const cJSON *sd = cJSON_GetObjectItemCaseSensitive(o, "seeds");
        if (!sd) {
            js->nseeds = 1; /* seed 0 */
            return NMO_OK;
        }
        if (!cJSON_IsArray(sd) || cJSON_GetArraySize(sd) < 1 || cJSON_GetArraySize(sd) > NMO_JSPEC_MAX_SEEDS)
            return FAIL("%s: %s.seeds: expected an array of 1 to %d unsigned integers", what, path,
                        NMO_JSPEC_MAX_SEEDS);
        int i = 0;
        for (const cJSON *it = sd->child; it; it = it->next, i++) {
            if (!cJSON_IsNumber(it) || it->valuedouble < 0 || it->valuedouble > 9007199254740992.0 ||
                it->valuedouble != (double)(uint64_t)it->valuedouble)
                return FAIL("%s: %s.seeds[%d]: expected an unsigned integer", what, path, i);
            js->seeds[js->nseeds++] = (uint64_t)it->valuedouble;
        }
        return NMO_OK;
    }
    const char *mode;
    NMO_RETURN_IF_ERR(get_str(&mode, o, "mode", 0, what, path, err));
    if (mode && strcmp(mode, "bitwise") != 0)
        return FAIL("%s: %s.mode: unknown mode '%s' (known: bitwise)", what, path, mode);
    const cJSON *seed = cJSON_GetObjectItemCaseSensitive(o, "seed");
    if (seed) {
        if (!cJSON_IsNumber(seed) || seed->valuedouble < 0 || seed->valuedouble != (double)(uint64_t)seed->valuedouble)
            return FAIL("%s: %s.seed: expected an unsigned integer", what, path);
        js->seeds[0] = (uint64_t)seed->valuedouble;
    }
    js->nseeds = 1;
    /* a cell's own shape: in 16-bit formats an fp32-level batch variance shows only on the
     * elements that lie near a rounding boundary, so those cells need more of them (checked
     * against the operator in check_coverage) */
    if (cJSON_GetObjectItemCaseSensitive(o, "shape"))
        NMO_RETURN_IF_ERR(get_shape(&js->nshape, js->shape, o, "shape", what, path, err));
    if (!cJSON_GetObjectItemCaseSensitive(o, "configurations"))
        return FAIL("%s: %s.configurations: missing (an array; [] when only batch_summed applies)", what, path);
    NMO_RETURN_IF_ERR(parse_cfgs(js->cfg, &js->ncfg, (int)(sizeof js->cfg / sizeof js->cfg[0]), o,
                                 "configurations", what, path, err));
    NMO_RETURN_IF_ERR(parse_cfgs(js->sum_cfg, &js->nsum, NMO_JSPEC_MAX_SUM, o, "batch_summed", what, path, err));
    for (int i = 0; i < js->nsum; i++)
        if (!nmo_inv_config_keeps_order(&js->sum_cfg[i])) {
            char nb[32];
            return FAIL("%s: %s.batch_summed[%d]: %s changes the rows or their order: a batch-summed output "
                        "is judged only across repeat and stride:S",
                        what, path, i, nmo_inv_config_name(&js->sum_cfg[i], nb, sizeof nb));
        }
    const char *sna;
    NMO_RETURN_IF_ERR(get_str(&sna, o, "batch_summed_na", 0, what, path, err));
    if (sna && js->nsum) return FAIL("%s: %s: batch_summed and batch_summed_na both given", what, path);
    if (sna) snprintf(js->sum_na, sizeof js->sum_na, "%s", sna);
    if (js->ncfg == 0 && js->nsum == 0)
        return FAIL("%s: %s: names no configuration (configurations and batch_summed both empty)", what, path);
    return NMO_OK;
}

/* ---- sections ------------------------------------------------------------------------------- */

static nmo_status parse_profiles(nmo_contract *ct, const cJSON *root, nmo_err *err)
{
    static const char *const keys[] = {"backend", "device", "device_name", "doc", "settings", NULL};
    static const char *const skeys[] = {"tf32", "reduced_precision_reduction", "deterministic",
                                        "cublas_workspace", NULL};
    const char *what = ct->what;
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(root, "profiles");
    if (!cJSON_IsObject(p) || !p->child) return FAIL("%s: profiles: missing (an object of profiles)", what);
    for (const cJSON *it = p->child; it; it = it->next) {
        if (ct->nprof >= MAX_PROFILES) return FAIL("%s: profiles: more than %d", what, MAX_PROFILES);
        char path[128];
        snprintf(path, sizeof path, "profiles.%s", it->string);
        NMO_RETURN_IF_ERR(only_keys(it, what, path, keys, err));
        nmo_contract_profile *pr = &ct->prof[ct->nprof];
        memset(pr, 0, sizeof *pr);
        pr->tf32 = pr->rpr = pr->deterministic = -1;
        snprintf(pr->name, sizeof pr->name, "%s", it->string);
        const char *b, *doc;
        NMO_RETURN_IF_ERR(get_str(&b, it, "backend", 1, what, path, err));
        if (strcmp(b, "cpu") && strcmp(b, "hip") && strcmp(b, "plugin") && strcmp(b, "python"))
            return FAIL("%s: %s.backend: unknown backend '%s' (known: cpu, hip, plugin, python)", what, path, b);
        snprintf(pr->backend, sizeof pr->backend, "%s", b);
        const char *dev;
        NMO_RETURN_IF_ERR(get_str(&dev, it, "device", 0, what, path, err));
        if (dev && strcmp(dev, "cpu") && strcmp(dev, "cuda"))
            return FAIL("%s: %s.device: unknown device kind '%s' (known: cpu, cuda)", what, path, dev);
        if (dev) snprintf(pr->device, sizeof pr->device, "%s", dev);
        const char *dn;
        NMO_RETURN_IF_ERR(get_str(&dn, it, "device_name", 0, what, path, err));
        if (dn && (!dn[0] || strlen(dn) >= sizeof pr->device_name))
            return FAIL("%s: %s.device_name: expected a non-empty name under %d characters", what, path,
                        (int)sizeof pr->device_name);
        if (dn) snprintf(pr->device_name, sizeof pr->device_name, "%s", dn);
        NMO_RETURN_IF_ERR(get_str(&doc, it, "doc", 0, what, path, err));
        if (doc) snprintf(pr->doc, sizeof pr->doc, "%s", doc);
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(it, "settings");
        if (st) {
            char sp[160];
            snprintf(sp, sizeof sp, "%s.settings", path);
            NMO_RETURN_IF_ERR(only_keys(st, what, sp, skeys, err));
            NMO_RETURN_IF_ERR(get_bool(&pr->tf32, st, "tf32", what, sp, err));
            NMO_RETURN_IF_ERR(get_bool(&pr->rpr, st, "reduced_precision_reduction", what, sp, err));
            NMO_RETURN_IF_ERR(get_bool(&pr->deterministic, st, "deterministic", what, sp, err));
            NMO_RETURN_IF_ERR(get_workspaces(pr->cublas_ws, sizeof pr->cublas_ws, st, what, sp, err));
        }
        ct->nprof++;
    }
    return NMO_OK;
}

static int class_find(const nmo_contract *ct, const char *name)
{
    for (int i = 0; i < ct->ncls; i++)
        if (strcmp(ct->cls[i], name) == 0) return i;
    return -1;
}

static nmo_status parse_classes(nmo_contract *ct, const cJSON *root, nmo_err *err)
{
    static const char *const keys[] = {"doc", NULL};
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(root, "classes");
    if (!cJSON_IsObject(c) || !c->child) return FAIL("%s: classes: missing (an object of operator classes)", ct->what);
    for (const cJSON *it = c->child; it; it = it->next) {
        if (ct->ncls >= MAX_CLASSES) return FAIL("%s: classes: more than %d", ct->what, MAX_CLASSES);
        char path[128];
        snprintf(path, sizeof path, "classes.%s", it->string);
        NMO_RETURN_IF_ERR(only_keys(it, ct->what, path, keys, err));
        snprintf(ct->cls[ct->ncls++], sizeof ct->cls[0], "%s", it->string);
    }
    return NMO_OK;
}

static nmo_status parse_ops(nmo_contract *ct, const cJSON *root, nmo_err *err)
{
    static const char *const keys[] = {"class", "dtypes", "shape", "params", "gradient", "doc", NULL};
    static const char *const gkeys[] = {"op", "shape", "params", "recomputed", NULL};
    static const char *const nakeys[] = {"na", NULL};
    const char *what = ct->what;
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, "operators");
    if (!cJSON_IsObject(o) || !o->child) return FAIL("%s: operators: missing (an object of operators)", what);
    for (const cJSON *it = o->child; it; it = it->next) {
        if (ct->nops >= MAX_OPS) return FAIL("%s: operators: more than %d", what, MAX_OPS);
        char path[128];
        snprintf(path, sizeof path, "operators.%s", it->string);
        nmo_contract_op *co = &ct->ops[ct->nops];
        memset(co, 0, sizeof *co);
        co->op = nmo_op_find(it->string);
        if (!co->op) return FAIL("%s: %s: unknown operator (see numoracle ops)", what, path);
        NMO_RETURN_IF_ERR(only_keys(it, what, path, keys, err));
        const char *cls;
        NMO_RETURN_IF_ERR(get_str(&cls, it, "class", 1, what, path, err));
        if (class_find(ct, cls) < 0) return FAIL("%s: %s.class: unknown class '%s' (not in classes)", what, path, cls);
        if (co->op->contract_class && strcmp(co->op->contract_class, cls) != 0)
            return FAIL("%s: %s.class: '%s', but the registry's nmo_op.contract_class of %s is '%s'", what, path, cls,
                        co->op->name, co->op->contract_class);
        snprintf(co->cls, sizeof co->cls, "%s", cls);
        const cJSON *dts;
        int all;
        NMO_RETURN_IF_ERR(get_names(&dts, &all, it, "dtypes", what, path, err));
        if (all) {
            for (int f = 0; f < NMO_FMT_COUNT; f++)
                if (nmo_op_has_dtype(co->op, (nmo_fmt)f)) co->dtypes |= 1u << f;
        } else {
            int i = 0;
            for (const cJSON *d = dts->child; d; d = d->next, i++) {
                nmo_fmt f;
                if (nmo_fmt_from_name(&f, d->valuestring) != NMO_OK || !nmo_op_has_dtype(co->op, f))
                    return FAIL("%s: %s.dtypes[%d]: op %s has no dtype '%s' (dtypes: %s)", what, path, i,
                                co->op->name, d->valuestring, co->op->dtypes);
                co->dtypes |= 1u << f;
            }
        }
        NMO_RETURN_IF_ERR(get_shape(&co->nshape, co->shape, it, "shape", what, path, err));
        NMO_RETURN_IF_ERR(get_params(co->param, co->pset, co->op, it, "params", what, path, err));
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(it, "gradient");
        char gp[160];
        snprintf(gp, sizeof gp, "%s.gradient", path);
        if (!g) return FAIL("%s: %s: missing (the gradient operator, or {\"na\": REASON})", what, gp);
        if (cJSON_GetObjectItemCaseSensitive(g, "na")) {
            NMO_RETURN_IF_ERR(only_keys(g, what, gp, nakeys, err));
            const char *r;
            NMO_RETURN_IF_ERR(get_str(&r, g, "na", 1, what, gp, err));
            snprintf(co->grad_na, sizeof co->grad_na, "%s", r);
        } else {
            NMO_RETURN_IF_ERR(only_keys(g, what, gp, gkeys, err));
            const char *gn;
            NMO_RETURN_IF_ERR(get_str(&gn, g, "op", 1, what, gp, err));
            co->grad = nmo_op_find(gn);
            if (!co->grad) return FAIL("%s: %s.op: unknown operator '%s' (see numoracle ops)", what, gp, gn);
            NMO_RETURN_IF_ERR(get_shape(&co->gnshape, co->gshape, g, "shape", what, gp, err));
            NMO_RETURN_IF_ERR(get_params(co->gparam, co->gpset, co->grad, g, "params", what, gp, err));
            NMO_RETURN_IF_ERR(get_recomputed(&co->gabsent, co->grad, g, what, gp, err));
            for (int f = 0; f < NMO_FMT_COUNT; f++)
                if ((co->dtypes >> f & 1u) && !nmo_op_has_dtype(co->grad, (nmo_fmt)f))
                    return FAIL("%s: %s.op: %s has no dtype %s that %s covers", what, gp, gn,
                                nmo_fmt_name((nmo_fmt)f), co->op->name);
        }
        /* the catalog's own gradient operator must be named or declared absent */
        char bwd[96];
        snprintf(bwd, sizeof bwd, "%s_bwd", co->op->name);
        if (!co->grad && nmo_op_find(bwd))
            return FAIL("%s: %s: the catalog has %s: name it (\"op\") instead of N/A", what, gp, bwd);
        for (int q = 0; q < ct->nops; q++)
            if (ct->ops[q].op == co->op) return FAIL("%s: %s: listed twice", what, path);
        ct->nops++;
    }
    return NMO_OK;
}

/* "registry_operators": {"batch": B}: every registry operator the contract does not list
 * whose descriptor names a contract_class is judged as if listed with that class, every
 * dtype, its first test shape with B rows (shape[0]), default parameters, and OP_bwd as
 * the gradient (its first test shape with B rows) or N/A. Listed entries win. Without the
 * key nothing is derived. */
static nmo_status derive_registry_ops(nmo_contract *ct, const cJSON *root, nmo_err *err)
{
    static const char *const keys[] = {"batch", "doc", NULL};
    const char *what = ct->what, *path = "registry_operators";
    const cJSON *ro = cJSON_GetObjectItemCaseSensitive(root, path);
    if (!ro) return NMO_OK;
    if (!cJSON_IsObject(ro)) return FAIL("%s: %s: expected an object {\"batch\": N}", what, path);
    NMO_RETURN_IF_ERR(only_keys(ro, what, path, keys, err));
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(ro, "batch");
    if (!b) return FAIL("%s: %s.batch: missing (the rows of a derived operator's problem)", what, path);
    if (!cJSON_IsNumber(b) || b->valuedouble < 1 || b->valuedouble > 4096 || b->valuedouble != (double)(int)b->valuedouble)
        return FAIL("%s: %s.batch: expected an integer in 1..4096", what, path);
    int64_t batch = (int64_t)b->valuedouble;
    for (int i = 0; i < nmo_op_count(); i++) {
        const nmo_op *op = nmo_op_at(i);
        if (!op->contract_class || nmo_contract_op_find(ct, op->name) >= 0) continue;
        if (class_find(ct, op->contract_class) < 0)
            return FAIL("%s: %s: operator %s: its nmo_op.contract_class '%s' is not in classes", what, path, op->name,
                        op->contract_class);
        if (ct->nops >= MAX_OPS) return FAIL("%s: operators: more than %d (with %s)", what, MAX_OPS, path);
        nmo_contract_op *co = &ct->ops[ct->nops];
        memset(co, 0, sizeof *co);
        co->op = op;
        snprintf(co->cls, sizeof co->cls, "%s", op->contract_class);
        for (int f = 0; f < NMO_FMT_COUNT; f++)
            if (nmo_op_has_dtype(op, (nmo_fmt)f)) co->dtypes |= 1u << f;
        char bwd[96], sh[128];
        snprintf(bwd, sizeof bwd, "%s_bwd", op->name);
        co->grad = nmo_op_find(bwd);
        for (int g = 0; g < (co->grad ? 2 : 1); g++) {
            const nmo_op *o = g ? co->grad : op;
            int *n = g ? &co->gnshape : &co->nshape;
            int64_t *dims = g ? co->gshape : co->shape;
            nmo_err e2 = {{0}};
            snprintf(sh, sizeof sh, "%s", o->test_shapes ? o->test_shapes : "");
            sh[strcspn(sh, ";")] = '\0';
            if (nmo_shape_parse(n, dims, sh, &e2) != NMO_OK)
                return FAIL("%s: %s: operator %s: test_shapes: %s", what, path, o->name, e2.msg);
            dims[0] = batch;
        }
        if (!co->grad) snprintf(co->grad_na, sizeof co->grad_na, "no %s backward operator in the catalog", op->name);
        for (int f = 0; f < NMO_FMT_COUNT; f++)
            if ((co->dtypes >> f & 1u) && co->grad && !nmo_op_has_dtype(co->grad, (nmo_fmt)f))
                return FAIL("%s: %s: operator %s: %s has no dtype %s", what, path, op->name, bwd, nmo_fmt_name((nmo_fmt)f));
        ct->nops++;
    }
    return NMO_OK;
}

static nmo_status parse_rules(nmo_contract *ct, const cJSON *root, nmo_err *err)
{
    static const char *const keys[] = {"doc", "classes", "operators", "dtypes", "profiles", "forward_accuracy",
                                       "gradient_accuracy", "forward_invariance", "gradient_invariance", NULL};
    const char *what = ct->what;
    const cJSON *rs = cJSON_GetObjectItemCaseSensitive(root, "rules");
    if (!cJSON_IsArray(rs) || !rs->child) return FAIL("%s: rules: missing (an array of rules)", what);
    int ri = 0;
    for (const cJSON *it = rs->child; it; it = it->next, ri++) {
        if (ct->nrules >= MAX_RULES) return FAIL("%s: rules: more than %d", what, MAX_RULES);
        char path[64];
        snprintf(path, sizeof path, "rules[%d]", ri);
        NMO_RETURN_IF_ERR(only_keys(it, what, path, keys, err));
        rule *r = &ct->rules[ct->nrules];
        memset(r, 0, sizeof *r);
        const cJSON *arr;
        int all;
        /* operators: by class or by name (not both) */
        const cJSON *cl = cJSON_GetObjectItemCaseSensitive(it, "classes");
        const cJSON *op = cJSON_GetObjectItemCaseSensitive(it, "operators");
        if (cl && op) return FAIL("%s: %s: give classes or operators, not both", what, path);
        NMO_RETURN_IF_ERR(get_names(&arr, &all, it, op ? "operators" : "classes", what, path, err));
        if (all) {
            r->ops = ct->nops >= 64 ? ~0ull : (1ull << ct->nops) - 1;
        } else {
            int i = 0;
            for (const cJSON *n = arr->child; n; n = n->next, i++) {
                int hit = 0;
                if (op) {
                    int k = nmo_contract_op_find(ct, n->valuestring);
                    if (k < 0)
                        return FAIL("%s: %s.operators[%d]: unknown operator '%s' (not in operators)", what, path, i,
                                    n->valuestring);
                    r->ops |= 1ull << k;
                    continue;
                }
                if (class_find(ct, n->valuestring) < 0)
                    return FAIL("%s: %s.classes[%d]: unknown class '%s' (not in classes)", what, path, i,
                                n->valuestring);
                for (int k = 0; k < ct->nops; k++)
                    if (strcmp(ct->ops[k].cls, n->valuestring) == 0) r->ops |= 1ull << k, hit = 1;
                (void)hit;
            }
        }
        NMO_RETURN_IF_ERR(get_names(&arr, &all, it, "dtypes", what, path, err));
        if (all) r->dtypes = ~0u;
        else {
            int i = 0;
            for (const cJSON *n = arr->child; n; n = n->next, i++) {
                nmo_fmt f;
                if (nmo_fmt_from_name(&f, n->valuestring) != NMO_OK)
                    return FAIL("%s: %s.dtypes[%d]: unknown dtype '%s'", what, path, i, n->valuestring);
                r->dtypes |= 1u << f;
            }
        }
        NMO_RETURN_IF_ERR(get_names(&arr, &all, it, "profiles", what, path, err));
        if (all) r->profiles = ~0u;
        else {
            int i = 0;
            for (const cJSON *n = arr->child; n; n = n->next, i++) {
                int k = nmo_contract_profile_find(ct, n->valuestring);
                if (k < 0)
                    return FAIL("%s: %s.profiles[%d]: unknown profile '%s' (not in profiles)", what, path, i,
                                n->valuestring);
                r->profiles |= 1u << k;
            }
        }
        int any = 0;
        for (int j = 0; j < NMO_J_COUNT; j++) {
            const cJSON *jo = cJSON_GetObjectItemCaseSensitive(it, jnames[j]);
            if (!jo) continue;
            char jp[128];
            snprintf(jp, sizeof jp, "%s.%s", path, jnames[j]);
            NMO_RETURN_IF_ERR(parse_judgment(&r->j[j].js, (nmo_judgment)j, jo, what, jp, err));
            r->j[j].stated = 1;
            any = 1;
        }
        if (!any)
            return FAIL("%s: %s: states no judgment (forward_accuracy, gradient_accuracy, forward_invariance, "
                        "gradient_invariance)",
                        what, path);
        ct->nrules++;
    }
    return NMO_OK;
}

/* Every cell of every operator x covered dtype x profile must be stated. */
static nmo_status check_coverage(const nmo_contract *ct, nmo_err *err)
{
    for (int o = 0; o < ct->nops; o++)
        for (int f = 0; f < NMO_FMT_COUNT; f++) {
            if (!(ct->ops[o].dtypes >> f & 1u)) continue;
            for (int p = 0; p < ct->nprof; p++)
                for (int j = 0; j < NMO_J_COUNT; j++) {
                    nmo_jspec js;
                    nmo_err e2 = {{0}};
                    if (nmo_contract_resolve(&js, ct, o, (nmo_fmt)f, p, (nmo_judgment)j, &e2) != NMO_OK)
                        return nmo_err_set(err, NMO_ERR_PARSE, "%s", e2.msg);
                    if (js.na) continue;
                    const nmo_op *op = j == NMO_J_GRAD_ACC || j == NMO_J_GRAD_INV ? ct->ops[o].grad : ct->ops[o].op;
                    if (js.nshape) {
                        /* a cell's own shape must be one the operator accepts */
                        nmo_plan pl;
                        nmo_case c;
                        int g = j == NMO_J_GRAD_INV;
                        nmo_plan_default(&pl, (nmo_fmt)f);
                        if (nmo_case_init_params(&c, op, &pl, js.nshape, js.shape, g ? ct->ops[o].gparam : ct->ops[o].param,
                                                 g ? ct->ops[o].gpset : ct->ops[o].pset, &e2) != NMO_OK)
                            return nmo_err_set(err, NMO_ERR_PARSE, "%s: %s.shape (for %s %s): %s", ct->what, js.where,
                                               op->name, nmo_fmt_name((nmo_fmt)f), e2.msg);
                        nmo_case_free(&c);
                    }
                    if (!js.plan[0]) continue;
                    /* the plan must apply to the operator the cell runs (presets included) */
                    nmo_plan pl;
                    nmo_plan_default(&pl, (nmo_fmt)f);
                    if (nmo_plan_parse_op(&pl, op->name, js.plan, &e2) != NMO_OK ||
                        nmo_op_check_plan(op, &pl, &e2) != NMO_OK)
                        return nmo_err_set(err, NMO_ERR_PARSE, "%s: %s.plan (for %s %s): %s", ct->what, js.where,
                                           op->name, nmo_fmt_name((nmo_fmt)f), e2.msg);
                }
        }
    return NMO_OK;
}

nmo_status nmo_contract_parse(nmo_contract **out, const char *text, const char *what, nmo_err *err)
{
    static const char *const keys[] = {"format", "version", "name", "doc", "profiles", "classes", "operators",
                                       "rules", "registry_operators", NULL};
    *out = NULL;
    nmo_contract *ct = calloc(1, sizeof *ct);
    if (!ct) return nmo_err_set(err, NMO_ERR_NOMEM, "contract: out of memory");
    snprintf(ct->what, sizeof ct->what, "%s", what ? what : "contract");
    cJSON *root = cJSON_Parse(text);
    nmo_status s = NMO_OK;
    if (!root) {
        const char *at = cJSON_GetErrorPtr();
        s = FAIL("%s: not JSON (near byte %ld)", ct->what, at ? (long)(at - text) : -1L);
    }
    const char *fmt, *name;
    if (s == NMO_OK) s = only_keys(root, ct->what, "(top level)", keys, err);
    if (s == NMO_OK && (s = get_str(&fmt, root, "format", 1, ct->what, "(top level)", err)) == NMO_OK &&
        strcmp(fmt, "numoracle-contract") != 0)
        s = FAIL("%s: format: '%s' is not a numoracle contract (expected \"numoracle-contract\")", ct->what, fmt);
    if (s == NMO_OK) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "version");
        if (!cJSON_IsNumber(v)) s = FAIL("%s: version: missing (the integer %d)", ct->what, NMO_CONTRACT_VERSION);
        else if (v->valuedouble != NMO_CONTRACT_VERSION)
            s = FAIL("%s: version: %g is not supported (this numoracle reads version %d)", ct->what, v->valuedouble,
                     NMO_CONTRACT_VERSION);
        else ct->version = NMO_CONTRACT_VERSION;
    }
    if (s == NMO_OK && (s = get_str(&name, root, "name", 1, ct->what, "(top level)", err)) == NMO_OK)
        snprintf(ct->name, sizeof ct->name, "%s", name);
    if (s == NMO_OK) s = parse_profiles(ct, root, err);
    if (s == NMO_OK) s = parse_classes(ct, root, err);
    if (s == NMO_OK) s = parse_ops(ct, root, err);
    if (s == NMO_OK) s = derive_registry_ops(ct, root, err);
    if (s == NMO_OK) s = parse_rules(ct, root, err);
    if (s == NMO_OK) s = check_coverage(ct, err);
    cJSON_Delete(root);
    if (s != NMO_OK) {
        free(ct);
        return s;
    }
    *out = ct;
    return NMO_OK;
}

nmo_status nmo_contract_load(nmo_contract **ct, const char *path, nmo_err *err)
{
    *ct = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return nmo_err_set(err, NMO_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4096 + 1 > cap) {
            cap = cap ? 2 * cap : 65536;
            if (cap > ((size_t)64 << 20)) {
                free(buf), fclose(f);
                return nmo_err_set(err, NMO_ERR_SIZE, "%s: larger than 64 MiB", path);
            }
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf), fclose(f);
                return nmo_err_set(err, NMO_ERR_NOMEM, "%s: out of memory", path);
            }
            buf = nb;
        }
        size_t got = fread(buf + len, 1, cap - len - 1, f);
        len += got;
        if (got == 0) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return nmo_err_set(err, NMO_ERR_IO, "%s: read error", path);
    }
    buf[len] = '\0';
    nmo_status s = nmo_contract_parse(ct, buf, path, err);
    free(buf);
    return s;
}

void nmo_contract_free(nmo_contract *ct) { free(ct); }
const char *nmo_contract_name(const nmo_contract *ct) { return ct->name; }
int nmo_contract_version(const nmo_contract *ct) { return ct->version; }
const char *nmo_contract_what(const nmo_contract *ct) { return ct->what; }
int nmo_contract_profile_count(const nmo_contract *ct) { return ct->nprof; }
const nmo_contract_profile *nmo_contract_profile_at(const nmo_contract *ct, int i)
{
    return i >= 0 && i < ct->nprof ? &ct->prof[i] : NULL;
}
int nmo_contract_profile_find(const nmo_contract *ct, const char *name)
{
    for (int i = 0; i < ct->nprof; i++)
        if (strcmp(ct->prof[i].name, name) == 0) return i;
    return -1;
}
int nmo_contract_op_count(const nmo_contract *ct) { return ct->nops; }
const nmo_contract_op *nmo_contract_op_at(const nmo_contract *ct, int i)
{
    return i >= 0 && i < ct->nops ? &ct->ops[i] : NULL;
}
int nmo_contract_op_find(const nmo_contract *ct, const char *name)
{
    for (int i = 0; i < ct->nops; i++)
        if (strcmp(ct->ops[i].op->name, name) == 0) return i;
    return -1;
}

nmo_status nmo_contract_resolve(nmo_jspec *js, const nmo_contract *ct, int op, nmo_fmt dt, int profile,
                                nmo_judgment j, nmo_err *err)
{
    memset(js, 0, sizeof *js);
    if (op < 0 || op >= ct->nops || profile < 0 || profile >= ct->nprof || (unsigned)j >= NMO_J_COUNT)
        return nmo_err_set(err, NMO_ERR_USAGE, "contract: bad operator, profile or judgment index");
    const nmo_contract_op *co = &ct->ops[op];
    if ((unsigned)dt >= NMO_FMT_COUNT || !(co->dtypes >> dt & 1u))
        return nmo_err_set(err, NMO_ERR_USAGE, "%s: operators.%s does not cover dtype %s", ct->what, co->op->name,
                           nmo_fmt_name(dt));
    int grad = j == NMO_J_GRAD_ACC || j == NMO_J_GRAD_INV;
    if (grad && !co->grad) {
        js->na = 1;
        snprintf(js->reason, sizeof js->reason, "%s", co->grad_na);
        snprintf(js->where, sizeof js->where, "operators.%s.gradient", co->op->name);
        return NMO_OK;
    }
    for (int r = ct->nrules - 1; r >= 0; r--) {
        const rule *ru = &ct->rules[r];
        if (!(ru->ops >> op & 1ull) || !(ru->dtypes >> dt & 1u) || !(ru->profiles >> profile & 1u)) continue;
        if (!ru->j[j].stated) continue;
        *js = ru->j[j].js;
        return NMO_OK;
    }
    return nmo_err_set(err, NMO_ERR_PARSE, "%s: operator %s dtype %s profile %s: %s is stated by no rule",
                       ct->what, co->op->name, nmo_fmt_name(dt), ct->prof[profile].name, jnames[j]);
}
