/* numoracle run: the generic bundle runner (RFC 0011 "Generic Test Runner", RFC 0006
 * configuration).
 *
 * Discovers every case of the tier cascade (quick ⊂ standard ⊂ comprehensive ⊂ full),
 * runs the engine under test on each case's inputs and judges its outputs twice:
 *   - oracle: against the reachable sets R (the bundle's stored bounds: no MPFR, no
 *     recomputation; recomputed only when the bundle has none or a computed mode runs);
 *   - tolerance: |c - e| <= atol + rtol |e| against the expected output, with (atol,
 *     rtol) from the chain override -> bundle -> default (the report names the level).
 * --acceptance picks the verdict that decides (default oracle; both: either may fail it).
 * Reference source per --verification-mode: golden (bundle data; none -> SKIP), cpu (the
 * certified engine at runtime on inputs regenerated from the bundle's seed), gpu (no GPU
 * reference executor in this build -> SKIP), auto (golden, else gpu, else cpu; nothing ->
 * FAIL: a validation gap). A bad bundle fails its own case; the others still run. The
 * run ends with "N passed, N failed, N skipped" and "N inconclusive".
 * Exit: 0 all passed (skips allowed), 1 any failure, 3 inconclusive without failure,
 * 2 usage, configuration or discovery errors (collisions). */
/* Messages and paths are truncated to their fixed buffers on purpose. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "nmo_gpu.h"
#ifdef NMO_HAVE_TOML
#include "toml_json.h"
#endif
#include "nmo_internal.h"
#include "numoracle/bundle.h"

/* RFC 0011's environment name first, numoracle's older one as an alias; *which gets the
 * name that was read (for messages). Empty values count as unset. */
const char *cli_env2(const char *rfc, const char *alias, const char **which)
{
    const char *v = getenv(rfc);
    if (v && *v) {
        if (which) *which = rfc;
        return v;
    }
    v = getenv(alias);
    if (v && *v) {
        if (which) *which = alias;
        return v;
    }
    return NULL;
}

/* The golden data root: the flag beats HIPDNN_TEST_GOLDEN_DATA_DIR beats
 * NUMORACLE_GOLDEN_DATA_DIR; the default is ./bundles, not the RFC's
 * <exe_dir>/../lib/integration_test_bundles (this tree keeps its bundles at the top). */
const char *cli_data_dir(cli_cmd *cmd)
{
    const char *d = cli_val(cmd, "golden-data-dir");
    if (!d) d = cli_val(cmd, "gd");
    if (!d) d = cli_env2("HIPDNN_TEST_GOLDEN_DATA_DIR", "NUMORACLE_GOLDEN_DATA_DIR", NULL);
    if (!d || !*d) d = "bundles";
    return d;
}

void cli_stderr_diag(void *ctx, nmo_diag_level l, const char *msg)
{
    (void)ctx;
    fprintf(stderr, "numoracle: %s: %s\n", l == NMO_DIAG_ERROR ? "error" : "warning", msg);
}

/* The one --shard parser (run, calibrate, campaign): "I/N", shards numbered from 1,
 * 1 <= I <= N, as the campaign always documented it. *idx is the 0-based index (I - 1).
 * run and calibrate used to number from 0: "0/N" is refused with the conversion, so a
 * 0-based CI matrix fails loudly at its first job instead of skipping a shard. */
int cli_parse_shard(int *idx, int *cnt, const char *s)
{
    *idx = 0;
    *cnt = 1;
    if (!s) return 0;
    char *end;
    long i = strtol(s, &end, 10);
    if (end == s || *end != '/') return cli_error("bad --shard '%s': expected I/N with 1 <= I <= N", s);
    const char *q = end + 1;
    long n = strtol(q, &end, 10);
    if (end == q || *end || n < 1 || n > 1000000) return cli_error("bad --shard '%s': expected I/N with 1 <= I <= N", s);
    if (i == 0)
        return cli_error("bad --shard '%s': shards are numbered from 1 (I/N with 1 <= I <= N); "
                         "the former 0-based '0/%ld' is '1/%ld'", s, n, n);
    if (i < 1 || i > n) return cli_error("bad --shard '%s': expected I/N with 1 <= I <= N", s);
    *idx = (int)(i - 1);
    *cnt = (int)n;
    return 0;
}

/* ---- configuration (RFC 0006 style, JSON) ----------------------------------------------- */

typedef struct {
    char filter[256];
    nmo_tol tol;
    int fixed; /* RFC 0006 method "fixed": the operation's TestTolerances figure, not tol's */
} tol_ov;

typedef struct {
    char glob[128];
    int n_xfail;
    char (*xfail)[320];
    int *xfail_hit;
    int n_ov;
    tol_ov *ov;
} eng_cfg;

typedef struct {
    char path[NMO_BPATH];
    int n;
    eng_cfg e[32];
} run_cfg;

static void cfg_free(run_cfg *c)
{
    for (int i = 0; i < c->n; i++) {
        free(c->e[i].xfail);
        free(c->e[i].xfail_hit);
        free(c->e[i].ov);
    }
    c->n = 0;
}

static int check_keys(const cJSON *o, const char *const *known, int nk, const char *where, const char *path)
{
    for (const cJSON *c = o->child; c; c = c->next) {
        int ok = 0;
        for (int k = 0; k < nk; k++) ok |= strcmp(c->string, known[k]) == 0;
        if (!ok) {
            char list[200] = "";
            size_t off = 0;
            for (int k = 0; k < nk; k++) off += (size_t)snprintf(list + off, sizeof list - off, "%s%s", k ? " " : "", known[k]);
            return cli_error("%s: %s: unknown key '%s' (known: %s)", path, where, c->string, list);
        }
    }
    return 0;
}

static int tol_pair(const cJSON *o, double *atol, double *rtol, const char *where, const char *path)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "atol"), *r = cJSON_GetObjectItemCaseSensitive(o, "rtol");
    if (!a && !r) return cli_error("%s: %s: needs atol and/or rtol", path, where);
    if (a && (!cJSON_IsNumber(a) || !(a->valuedouble >= 0) || isinf(a->valuedouble)))
        return cli_error("%s: %s: atol must be a finite number >= 0", path, where);
    if (r && (!cJSON_IsNumber(r) || !(r->valuedouble >= 0) || isinf(r->valuedouble)))
        return cli_error("%s: %s: rtol must be a finite number >= 0", path, where);
    *atol = a ? a->valuedouble : 0;
    *rtol = r ? r->valuedouble : 0;
    return 0;
}

/* The configuration document: JSON, or TOML (a path ending in .toml) converted to the same
 * JSON tree by toml++ (toml_json.cpp), so one set of rules checks both. */
static cJSON *read_config(const char *path, nmo_err *err)
{
    size_t l = strlen(path);
    if (l < 5 || strcmp(path + l - 5, ".toml") != 0) return nmo__read_json(path, err);
#ifdef NMO_HAVE_TOML
    char *text = nmo__read_text(path, NULL, err);
    if (!text) return NULL;
    cJSON *doc = cli_toml_parse(text, path, err->msg, sizeof err->msg);
    free(text);
    return doc;
#else
    nmo_err_set(err, NMO_ERR_UNSUPPORTED, "%s: TOML configurations need a build with toml++ (libtomlplusplus-dev)", path);
    return NULL;
#endif
}

/* RFC 0006 expected plugins: the builtin CPU engine is always loaded; any other plugin
 * library named must load (the one under test is loaded already). */
static int cfg_plugins(const cJSON *doc, const char *path, const cli_eut *eng)
{
    static const char *const plug_keys[] = {"path", "engines"};
    int rc = 0;
    const cJSON *pl = cJSON_GetObjectItemCaseSensitive(doc, "plugins");
    if (pl && !cJSON_IsObject(pl)) {
        return cli_error("%s: plugins must be an object of plugin entries", path);
    }
    /* expected plugins: the builtin CPU engine is always loaded; nothing else can be in
     * this build, and an expected plugin that is not loaded is an error (RFC 0006) */
    for (const cJSON *p = pl ? pl->child : NULL; p && !rc; p = p->next) {
        char where[160];
        snprintf(where, sizeof where, "plugins.%s", p->string);
        if (!cJSON_IsObject(p)) {
            rc = cli_error("%s: %s must be an object", path, where);
            break;
        }
        if ((rc = check_keys(p, plug_keys, 2, where, path))) break;
        const cJSON *pp = cJSON_GetObjectItemCaseSensitive(p, "path");
        const cJSON *pe = cJSON_GetObjectItemCaseSensitive(p, "engines");
        if (!cJSON_IsString(pp)) {
            rc = cli_error("%s: %s: path must be a string", path, where);
            break;
        }
        if (pe && !cJSON_IsArray(pe)) {
            rc = cli_error("%s: %s: engines must be an array of engine names", path, where);
            break;
        }
        if (strcmp(pp->valuestring, "builtin") != 0) {
            /* a plugin library: it must load (RFC 0006 expected plugins); the one under
             * test is already loaded, any other is opened and closed here */
            if (eng->plugin && strcmp(eng->path, pp->valuestring) == 0) continue;
            nmo_plugin *pg = NULL;
            nmo_err pe2;
            if (nmo_plugin_open(&pg, pp->valuestring, &pe2) != NMO_OK) {
                rc = cli_error("%s: expected plugin '%s' (%s) is not loaded: %s", path, p->string, pp->valuestring, pe2.msg);
                break;
            }
            nmo_plugin_close(pg);
            continue;
        }
        for (const cJSON *x = pe ? pe->child : NULL; x && !rc; x = x->next)
            if (!cJSON_IsString(x) || strcmp(x->valuestring, "cpu") != 0)
                rc = cli_error("%s: %s: the builtin plugin provides engine 'cpu' only", path, where);
    }
    return rc;
}

/* One engine entry: its expected failures, its tolerance overrides and its tolerance
 * (atol/rtol, or RFC 0006's method "default" or "fixed"). */
static int cfg_engine_entry(const cJSON *e, const char *where, const char *path, eng_cfg *ec)
{
    static const char *const ov_keys[] = {"filter", "atol", "rtol"};
    int rc = 0;
    const cJSON *xf = cJSON_GetObjectItemCaseSensitive(e, "expected_failures");
    if (xf) {
        if (!cJSON_IsArray(xf)) return cli_error("%s: %s: expected_failures must be an array of test names", path, where);
        ec->n_xfail = cJSON_GetArraySize(xf);
        ec->xfail = calloc((size_t)ec->n_xfail + 1, sizeof *ec->xfail);
        ec->xfail_hit = calloc((size_t)ec->n_xfail + 1, sizeof *ec->xfail_hit);
        int i = 0;
        for (const cJSON *x = xf->child; x; x = x->next, i++) {
            if (!cJSON_IsString(x) || !x->valuestring[0]) {
                rc = cli_error("%s: %s: expected_failures[%d] must be a test name", path, where, i);
                break;
            }
            snprintf(ec->xfail[i], sizeof ec->xfail[i], "%s", x->valuestring);
        }
    }
    const cJSON *ov = cJSON_GetObjectItemCaseSensitive(e, "tolerance_overrides");
    const cJSON *tl = cJSON_GetObjectItemCaseSensitive(e, "tolerance");
    if (!rc && ov && !cJSON_IsArray(ov)) rc = cli_error("%s: %s: tolerance_overrides must be an array", path, where);
    /* RFC 0006 names a tolerance method: "default" is the three-level chain (no
     * override), "fixed" the operation's TestTolerances figure whatever a bundle says */
    int fixed = 0;
    if (!rc && cJSON_IsString(tl)) {
        if (strcmp(tl->valuestring, "fixed") == 0) fixed = 1;
        else if (strcmp(tl->valuestring, "default") != 0)
            rc = cli_error("%s: %s.tolerance: tolerance method '%s' is not supported (default or fixed)", path, where,
                           tl->valuestring);
        if (!fixed) tl = NULL;
    }
    if (!rc && tl && !fixed && !cJSON_IsObject(tl))
        rc = cli_error("%s: %s: tolerance must be an object with atol/rtol, \"default\" or \"fixed\"", path, where);
    if (!rc) {
        int n = (ov ? cJSON_GetArraySize(ov) : 0) + (tl ? 1 : 0);
        ec->ov = calloc((size_t)n + 1, sizeof *ec->ov);
        int i = 0;
        for (const cJSON *o = ov ? ov->child : NULL; o && !rc; o = o->next, i++) {
            char w2[260];
            snprintf(w2, sizeof w2, "%s%stolerance_overrides[%d]", where, where[0] ? "." : "", i);
            const cJSON *f = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, "filter") : NULL;
            if (!cJSON_IsObject(o)) rc = cli_error("%s: %s must be an object", path, w2);
            else if ((rc = check_keys(o, ov_keys, 3, w2, path))) break;
            else if (!cJSON_IsString(f) || !f->valuestring[0]) rc = cli_error("%s: %s: missing filter (a test-name glob)", path, w2);
            else if (!(rc = tol_pair(o, &ec->ov[ec->n_ov].tol.atol, &ec->ov[ec->n_ov].tol.rtol, w2, path))) {
                snprintf(ec->ov[ec->n_ov].filter, sizeof ec->ov[ec->n_ov].filter, "%s", f->valuestring);
                snprintf(ec->ov[ec->n_ov].tol.source, sizeof ec->ov[ec->n_ov].tol.source, "%s %s (filter '%s')", path, w2,
                         f->valuestring);
                ec->n_ov++;
            }
        }
        if (!rc && fixed) {
            tol_ov *f = &ec->ov[ec->n_ov++];
            f->fixed = 1;
            snprintf(f->filter, sizeof f->filter, "*");
            snprintf(f->tol.source, sizeof f->tol.source, "%s %s.tolerance (fixed: the operation's TestTolerances figure)",
                     path, where);
        } else if (!rc && tl) {
            char w2[260];
            snprintf(w2, sizeof w2, "%s.tolerance", where);
            static const char *const tk[] = {"atol", "rtol"};
            if (!(rc = check_keys(tl, tk, 2, w2, path)) &&
                !(rc = tol_pair(tl, &ec->ov[ec->n_ov].tol.atol, &ec->ov[ec->n_ov].tol.rtol, w2, path))) {
                snprintf(ec->ov[ec->n_ov].filter, sizeof ec->ov[ec->n_ov].filter, "*");
                snprintf(ec->ov[ec->n_ov].tol.source, sizeof ec->ov[ec->n_ov].tol.source, "%s %s", path, w2);
                ec->n_ov++;
            }
        }
    }
    return rc;
}

static int load_config(run_cfg *cfg, const char *path, const cli_eut *eng)
{
    memset(cfg, 0, sizeof *cfg);
    snprintf(cfg->path, sizeof cfg->path, "%s", path);
    nmo_err err;
    cJSON *doc = read_config(path, &err);
    if (!doc) return cli_error("%s", err.msg);
    int rc = 0;
    static const char *const top_keys[] = {"plugins", "engines", "tolerance_overrides"};
    static const char *const eng_keys[] = {"expected_failures", "tolerance_overrides", "tolerance"};
    if (!cJSON_IsObject(doc)) {
        rc = cli_error("%s: the configuration must be a JSON object", path);
        goto out;
    }
    if ((rc = check_keys(doc, top_keys, 3, "top level", path))) goto out;
    if ((rc = cfg_plugins(doc, path, eng))) goto out;
    cJSON *en = cJSON_GetObjectItemCaseSensitive(doc, "engines");
    if (en && !cJSON_IsObject(en)) {
        rc = cli_error("%s: engines must be an object keyed by engine (glob)", path);
        goto out;
    }
    /* RFC 0011: an engine's own file (MIOPEN_ENGINE.toml) declares [[tolerance_overrides]]
     * at its top level: they apply to whatever engine runs with that file, as an engine
     * entry "*" would (its messages name the top-level key) */
    cJSON *top_ov = cJSON_DetachItemFromObjectCaseSensitive(doc, "tolerance_overrides");
    const cJSON *top_e = NULL;
    if (top_ov) {
        if (!en) en = cJSON_AddObjectToObject(doc, "engines");
        cJSON *te = cJSON_CreateObject();
        cJSON_AddItemToObject(te, "tolerance_overrides", top_ov);
        cJSON_AddItemToObject(en, "*", te);
        top_e = te;
    }
    for (const cJSON *e = en ? en->child : NULL; e && !rc; e = e->next) {
        char where[200];
        if (e == top_e) where[0] = '\0';
        else snprintf(where, sizeof where, "engines.%s", e->string);
        if (!cJSON_IsObject(e)) {
            rc = cli_error("%s: %s must be an object", path, where);
            break;
        }
        if ((rc = check_keys(e, eng_keys, 3, where, path))) break;
        if (cfg->n >= 32) {
            rc = cli_error("%s: more than 32 engine entries", path);
            break;
        }
        /* entries whose glob does not match the engine under test are validated, then dropped */
        eng_cfg ec;
        memset(&ec, 0, sizeof ec);
        snprintf(ec.glob, sizeof ec.glob, "%s", e->string);
        rc = cfg_engine_entry(e, where, path, &ec);
        if (rc || fnmatch(ec.glob, eng->spec, 0) != 0) {
            free(ec.xfail);
            free(ec.xfail_hit);
            free(ec.ov);
            continue;
        }
        cfg->e[cfg->n++] = ec;
    }
out:
    cJSON_Delete(doc);
    if (rc) cfg_free(cfg);
    return rc;
}

static const tol_ov *cfg_override(const run_cfg *cfg, const char *test)
{
    for (int i = 0; i < cfg->n; i++)
        for (int k = 0; k < cfg->e[i].n_ov; k++)
            if (fnmatch(cfg->e[i].ov[k].filter, test, 0) == 0) return &cfg->e[i].ov[k];
    return NULL;
}

static int cfg_xfail(run_cfg *cfg, const char *test)
{
    int hit = 0;
    for (int i = 0; i < cfg->n; i++)
        for (int k = 0; k < cfg->e[i].n_xfail; k++)
            if (fnmatch(cfg->e[i].xfail[k], test, 0) == 0) cfg->e[i].xfail_hit[k] = hit = 1;
    return hit;
}

/* ---- one case ------------------------------------------------------------------------ */

typedef enum { OUT_PASS, OUT_FAIL, OUT_SKIP, OUT_INCONC, OUT_XFAIL, OUT_XPASS } outcome;

typedef enum { ACC_ORACLE, ACC_TOL, ACC_BOTH } acceptance;
typedef enum { VM_AUTO, VM_GOLDEN, VM_GPU, VM_CPU } vmode;

typedef struct {
    const cli_eut *eng;
    acceptance acc;
    vmode vm;
    run_cfg *cfg;
    cJSON *jcases;
} runner;

static const char *acc_name(acceptance a) { return a == ACC_TOL ? "tolerance" : a == ACC_BOTH ? "both" : "oracle"; }

static void fmt_val(char *buf, size_t n, double v)
{
    if (v != v) snprintf(buf, n, "nan");
    else if (isinf(v)) snprintf(buf, n, v > 0 ? "inf" : "-inf");
    else snprintf(buf, n, "%.6g", v);
}

static cJSON *jnum(double v)
{
    return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateString(v != v ? "nan" : v > 0 ? "inf" : "-inf");
}

/* R at element i of output k: stored bounds, or the report's recomputed ones */
static void r_at(const nmo_bundle *b, const nmo_report *rep, int stored, int k, int64_t i, double *lo, double *hi)
{
    if (stored) {
        *lo = nmo_tensor_get(&b->lo[k], i);
        *hi = nmo_tensor_get(&b->hi[k], i);
    } else {
        *lo = rep->rlo[k] ? rep->rlo[k][i] : NAN;
        *hi = rep->rhi[k] ? rep->rhi[k][i] : NAN;
    }
}

static int64_t ulps_outside(nmo_fmt f, double v, double lo, double hi)
{
    if (v != v || lo != lo) return -1;
    if (v > hi) return nmo_fmt_ordinal(f, v) - nmo_fmt_ordinal(f, hi);
    if (v < lo) return nmo_fmt_ordinal(f, lo) - nmo_fmt_ordinal(f, v);
    return 0;
}

static void print_tensor_block(const nmo_bundle *b, const nmo_report *rep, int stored, int k, const nmo_tensor *exp,
                               const nmo_tensor *out, const nmo_tol *tol, const nmo_tol_result *tr)
{
    const nmo_case *c = &b->c;
    const nmo_gtensor *gt = &b->g.t[b->g.out_t[k]];
    char dims[160], ix[160], ev[40], av[40], lo_s[40], hi_s[40];
    nmo__fmt_dims(dims, sizeof dims, gt->ndims, gt->dims);
    int64_t n = nmo_tensor_numel(out), nf = 0, ni = 0;
    for (int64_t i = 0; i < n; i++) {
        nf += rep->verdicts[k][i] == NMO_FAIL;
        ni += rep->verdicts[k][i] == NMO_INCONCLUSIVE;
    }
    printf("  Tensor: %s (UID %lld, output)\n", gt->name, (long long)gt->uid);
    printf("  Shape:  %s  %s\n", dims, nmo_fmt_name(c->plan.out));
    printf("  Oracle: %s  %lld of %lld elements outside the reachable set R, %lld inconclusive\n",
           nf ? "FAIL" : ni ? "INCONCLUSIVE" : "PASS", (long long)nf, (long long)n, (long long)ni);
    printf("  Max absolute error: %.2e  (tolerance: %.3g, %s)\n", tr->max_abs, tol->atol, nmo_tol_level_name(tol->level));
    printf("  Max relative error: %.2e  (tolerance: %.3g)\n", tr->max_rel, tol->rtol);
    /* worst element: the oracle's worst when it lies in this tensor, else the largest
     * excess over the tolerance */
    int64_t w = tr->worst;
    if (rep->has_worst && rep->worst.k == k && (rep->worst.verdict != NMO_PASS || tr->n_mismatch == 0)) w = rep->worst.index;
    if (w >= 0) {
        double e = nmo_tensor_get(exp, w), a = nmo_tensor_get(out, w), lo, hi;
        r_at(b, rep, stored, k, w, &lo, &hi);
        nmo__fmt_index(ix, sizeof ix, gt->ndims, gt->dims, w);
        fmt_val(ev, sizeof ev, e), fmt_val(av, sizeof av, a), fmt_val(lo_s, sizeof lo_s, lo), fmt_val(hi_s, sizeof hi_s, hi);
        printf("  Worst element: index %s  expected: %s  actual: %s  R = [%s, %s]", ix, ev, av, lo_s, hi_s);
        int64_t u = ulps_outside(c->plan.out, a, lo, hi);
        if (rep->verdicts[k][w] == NMO_FAIL) {
            if (u < 0) printf(", outside (NaN or not representable)");
            else printf(", outside by %lld ulp%s", (long long)u, u == 1 ? "" : "s");
        }
        printf("\n");
    }
    printf("  Mismatched elements: %lld / %lld (%.2f%%)\n", (long long)tr->n_mismatch, (long long)tr->n,
           tr->n ? 100.0 * (double)tr->n_mismatch / (double)tr->n : 0.0);
}

/* One case's state from loading to the report. */
typedef struct {
    const nmo_disc_case *dc;
    const char *name;
    cJSON *jc;
    outcome res;
    char reason[1200];
    nmo_bundle b;
    nmo_tensor out[NMO_MAX_TENSORS], exp[NMO_MAX_TENSORS];
    nmo_report rep;
    int loaded, stored, computed;
    const char *ref;
    nmo_tol tol;
    nmo_tol_result tr[NMO_MAX_TENSORS];
    nmo_verdict ov, tv;
} run_case;

/* Load the bundle and run the engine: 0 ran, 1 an early outcome in x->res (SKIP or a
 * FAIL with x->reason). */
static int rc_load_exec(const runner *R, const nmo_disc *d, int i, run_case *x)
{
    nmo_err err = {{0}};
    if (R->vm == VM_GPU) {
        x->res = OUT_SKIP;
        snprintf(x->reason, sizeof x->reason, "no GPU reference executor in this build");
        return 1;
    }
    /* golden-capable modes load everything; cpu ignores the golden data entirely */
    nmo_status ls = nmo_disc_load(&x->b, d, i, R->vm == VM_CPU ? NMO_BL_GRAPH_ONLY : 0, &err);
    if (ls != NMO_OK) {
        /* an operation numoracle does not model (a hipDNN node type or form it cannot
         * bind) has no reference here: SKIP, as RFC 0011 has an unavailable reference */
        x->res = ls == NMO_ERR_UNKNOWN_OP ? OUT_SKIP : OUT_FAIL;
        snprintf(x->reason, sizeof x->reason, "%s", err.msg);
        return 1;
    }
    x->loaded = 1;
    /* RFC arch guard: reference data from a GPU tool is valid on its architecture only;
     * the engines of this build run on no GPU */
    const cJSON *arch = x->b.meta ? cJSON_GetObjectItemCaseSensitive(x->b.meta, "gpu_architecture") : NULL;
    if (cJSON_IsString(arch) && arch->valuestring[0] && R->vm != VM_CPU) {
        x->res = OUT_SKIP;
        snprintf(x->reason, sizeof x->reason,
                 "golden data is specific to gpu_architecture %s (arch guard); engine %s runs on no GPU", arch->valuestring,
                 R->eng->spec);
        return 1;
    }
    if (x->b.have_golden) x->computed = 0;
    else if (R->vm == VM_GOLDEN) {
        x->res = OUT_SKIP;
        snprintf(x->reason, sizeof x->reason, "bundle has no golden data (graph-only)");
        return 1;
    } else x->computed = 1; /* cpu mode, or auto without golden data (no GPU reference) */
    if (x->computed) nmo_bundle_generate_inputs(&x->b);
    int er = cli_engine_exec(x->out, R->eng, &x->b.c, x->reason, sizeof x->reason, &err);
    if (er != 0) {
        x->res = er > 0 ? OUT_SKIP : OUT_FAIL;
        if (er < 0) snprintf(x->reason, sizeof x->reason, "engine %s: %s", R->eng->spec, err.msg);
        return 1;
    }
    return 0;
}

/* The oracle verdict and the expected values (the golden outputs, or the enclosure
 * midpoint in computed mode): 0, or 1 with a FAIL reason. */
static int rc_oracle(run_case *x)
{
    nmo_err err = {{0}};
    nmo_check_opts co = {0};
    co.keep_verdicts = 1;
    co.keep_bounds = 1;
    co.keep_enc = x->computed;
    nmo_status st;
    if (!x->computed && x->b.have_bounds) {
        x->stored = 1;
        x->ref = "golden (stored certified bounds)";
        st = nmo_bundle_judge(&x->rep, &x->b, x->out, NMO_JUDGE_VERDICTS | NMO_JUDGE_WIDTHS, &err);
    } else {
        x->ref = x->computed ? "cpu (certified engine at runtime, inputs from the seed)"
                             : "golden (bounds recomputed: the bundle stores none)";
        st = nmo_check(&x->rep, &x->b.c, x->out, &co, &err);
    }
    if (st != NMO_OK) {
        x->res = OUT_FAIL;
        snprintf(x->reason, sizeof x->reason, "%s", err.msg);
        return 1;
    }
    const nmo_case *c = &x->b.c;
    for (int k = 0; k < c->n_out; k++) {
        if (!x->computed) {
            x->exp[k] = x->b.golden[k];
            x->exp[k].own = 0;
            continue;
        }
        x->exp[k] = c->out[k];
        x->exp[k].data = NULL;
        x->exp[k].own = 0;
        nmo_tensor_alloc(&x->exp[k], &err);
        int64_t n = nmo_tensor_numel(&x->exp[k]);
        for (int64_t q = 0; q < n; q++) {
            const nmo_fenc *e = &x->rep.enc[k][q];
            double v = nmo_fmt_round(c->plan.out, e->lo + 0.5 * (e->hi - e->lo), NMO_RNE, c->plan.ftz);
            if (v < x->rep.rlo[k][q]) v = x->rep.rlo[k][q];
            if (v > x->rep.rhi[k][q]) v = x->rep.rhi[k][q];
            nmo_tensor_set(&x->exp[k], q, v);
        }
    }
    return 0;
}

/* The tolerance verdict (RFC 0006's method "fixed": the operation's TestTolerances
 * figure at level override) and the deciding outcome: 0, or 1 with a FAIL reason. */
static int rc_verdict(const runner *R, run_case *x)
{
    nmo_err err = {{0}};
    const tol_ov *ov = cfg_override(R->cfg, x->name);
    nmo_tol fixed;
    const nmo_tol *o = ov ? &ov->tol : NULL;
    if (ov && ov->fixed) {
        nmo_tol_default(&fixed, x->b.g.op, x->b.c.plan.out);
        snprintf(fixed.source, sizeof fixed.source, "%s", ov->tol.source);
        o = &fixed;
    }
    if (nmo_tol_resolve(&x->tol, o, &x->b, &err) != NMO_OK) {
        x->res = OUT_FAIL;
        snprintf(x->reason, sizeof x->reason, "%s", err.msg);
        return 1;
    }
    x->tv = NMO_PASS;
    for (int k = 0; k < x->b.c.n_out; k++) {
        nmo_tol_compare(&x->tr[k], &x->tol, &x->exp[k], &x->out[k]);
        if (x->tr[k].verdict == NMO_FAIL) x->tv = NMO_FAIL;
    }
    x->ov = x->rep.verdict;
    nmo_verdict fv;
    if (R->acc == ACC_TOL) fv = x->tv;
    else if (R->acc == ACC_ORACLE) fv = x->ov;
    else fv = (x->ov == NMO_FAIL || x->tv == NMO_FAIL) ? NMO_FAIL : x->ov;
    x->res = fv == NMO_PASS ? OUT_PASS : fv == NMO_FAIL ? OUT_FAIL : OUT_INCONC;
    int xf = cfg_xfail(R->cfg, x->name);
    if (xf && x->res == OUT_FAIL) x->res = OUT_XFAIL;
    else if (xf && x->res == OUT_PASS) x->res = OUT_XPASS;
    return 0;
}

/* The judged case: its line (or the RFC failure block) and its JSON record. */
static void rc_report_judged(const runner *R, run_case *x)
{
    outcome res = x->res;
    const nmo_case *c = &x->b.c;
    const char *label = res == OUT_PASS     ? "PASS"
                        : res == OUT_INCONC ? "INCONCLUSIVE"
                        : res == OUT_XFAIL  ? "XFAIL"
                        : res == OUT_XPASS  ? "XPASS"
                                            : "FAIL";
    if (res == OUT_PASS) {
        printf("PASS %s  oracle %s (%lld/%lld), tolerance %s (%s)\n", x->name, nmo_verdict_name(x->ov),
               (long long)x->rep.n_pass, (long long)x->rep.n, nmo_verdict_name(x->tv), nmo_tol_level_name(x->tol.level));
    } else {
        printf("%s: %s%s\n", label, x->name,
               res == OUT_XFAIL   ? " (expected failure)"
               : res == OUT_XPASS ? " (listed in expected_failures but passed: remove it)"
                                  : "");
        printf("  Bundle: %s\n", x->dc->src);
        printf("  Engine: %s  reference: %s  acceptance: %s\n", R->eng->spec, x->ref, acc_name(R->acc));
        for (int k = 0; k < c->n_out; k++) {
            int64_t n = nmo_tensor_numel(&x->out[k]), bad = 0;
            for (int64_t q = 0; q < n; q++) bad += x->rep.verdicts[k][q] != NMO_PASS;
            if (res == OUT_XPASS || bad || x->tr[k].verdict == NMO_FAIL || c->n_out == 1)
                print_tensor_block(&x->b, &x->rep, x->stored, k, &x->exp[k], &x->out[k], &x->tol, &x->tr[k]);
        }
        printf("  Verdicts: oracle %s, tolerance %s (level %s: %s)\n", nmo_verdict_name(x->ov), nmo_verdict_name(x->tv),
               nmo_tol_level_name(x->tol.level), x->tol.source);
    }
    cJSON *jc = x->jc;
    cJSON_AddStringToObject(jc, "status", label);
    cJSON_AddStringToObject(jc, "reference", x->ref);
    cJSON *jo = cJSON_AddObjectToObject(jc, "oracle");
    cJSON_AddStringToObject(jo, "verdict", nmo_verdict_name(x->ov));
    cJSON_AddNumberToObject(jo, "elements", (double)x->rep.n);
    cJSON_AddNumberToObject(jo, "pass", (double)x->rep.n_pass);
    cJSON_AddNumberToObject(jo, "fail", (double)x->rep.n_fail);
    cJSON_AddNumberToObject(jo, "inconclusive", (double)x->rep.n_inconc);
    cJSON_AddStringToObject(jo, "bounds", x->stored ? "stored" : "recomputed");
    cJSON *jt = cJSON_AddObjectToObject(jc, "tolerance");
    cJSON_AddStringToObject(jt, "verdict", nmo_verdict_name(x->tv));
    cJSON_AddStringToObject(jt, "level", nmo_tol_level_name(x->tol.level));
    cJSON_AddStringToObject(jt, "source", x->tol.source);
    cJSON_AddItemToObject(jt, "atol", jnum(x->tol.atol));
    cJSON_AddItemToObject(jt, "rtol", jnum(x->tol.rtol));
    cJSON *ja = cJSON_AddArrayToObject(jt, "outputs");
    for (int k = 0; k < c->n_out; k++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "tensor", x->b.g.t[x->b.g.out_t[k]].name);
        cJSON_AddNumberToObject(o, "uid", (double)x->b.g.t[x->b.g.out_t[k]].uid);
        cJSON_AddItemToObject(o, "max_abs", jnum(x->tr[k].max_abs));
        cJSON_AddItemToObject(o, "max_rel", jnum(x->tr[k].max_rel));
        cJSON_AddNumberToObject(o, "mismatched", (double)x->tr[k].n_mismatch);
        cJSON_AddItemToArray(ja, o);
    }
}

/* A case that ended before a verdict: SKIP with its reason, or FAIL with the error. */
static void rc_report_early(const runner *R, run_case *x)
{
    if (x->res == OUT_SKIP) {
        printf("SKIP %s: %s\n", x->name, x->reason);
        cJSON_AddStringToObject(x->jc, "status", "SKIP");
    } else {
        int xf = cfg_xfail(R->cfg, x->name);
        if (xf) x->res = OUT_XFAIL;
        printf("%s: %s%s\n  Bundle: %s\n  Error: %s\n", xf ? "XFAIL" : "FAIL", x->name, xf ? " (expected failure)" : "",
               x->dc->src, x->reason);
        cJSON_AddStringToObject(x->jc, "status", xf ? "XFAIL" : "FAIL");
    }
    cJSON_AddStringToObject(x->jc, "reason", x->reason);
}

static outcome run_one(runner *R, const nmo_disc *d, int i)
{
    run_case *x = calloc(1, sizeof *x);
    if (!x) {
        printf("FAIL: %s\n  Error: out of memory\n", d->cases[i].name);
        return OUT_FAIL;
    }
    x->dc = &d->cases[i];
    x->name = x->dc->name;
    x->res = OUT_FAIL;
    x->ref = "";
    x->jc = cJSON_CreateObject();
    cJSON_AddStringToObject(x->jc, "name", x->name);
    cJSON_AddStringToObject(x->jc, "bundle", x->dc->src);
    if (rc_load_exec(R, d, i, x) || rc_oracle(x) || rc_verdict(R, x)) rc_report_early(R, x);
    else rc_report_judged(R, x);
    cJSON_AddItemToArray(R->jcases, x->jc);
    fflush(stdout);
    nmo_report_free(&x->rep);
    for (int k = 0; k < NMO_MAX_TENSORS; k++) {
        nmo_tensor_free(&x->out[k]);
        nmo_tensor_free(&x->exp[k]);
    }
    if (x->loaded) nmo_bundle_free(&x->b);
    outcome res = x->res;
    free(x);
    return res;
}

/* ---- JUnit XML ------------------------------------------------------------------------------ */

typedef struct {
    char *s;
    size_t n, cap;
    int oom;
} sbuf;

static void sb_put(sbuf *b, const char *t, size_t l)
{
    if (b->oom) return;
    if (b->n + l + 1 > b->cap) {
        size_t c = b->cap ? b->cap * 2 : 4096;
        while (c < b->n + l + 1) c *= 2;
        char *p = realloc(b->s, c);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->s = p, b->cap = c;
    }
    memcpy(b->s + b->n, t, l);
    b->n += l;
    b->s[b->n] = '\0';
}

static void sb_str(sbuf *b, const char *t) { sb_put(b, t, strlen(t)); }

/* XML attribute text: the five entities, and control characters (not allowed in XML
 * 1.0) as spaces. */
static void sb_xml(sbuf *b, const char *t)
{
    for (; t && *t; t++) {
        unsigned char c = (unsigned char)*t;
        const char *e = c == '&' ? "&amp;" : c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '"' ? "&quot;" : c == '\'' ? "&apos;" : NULL;
        if (e) sb_str(b, e);
        else if (c < 0x20 && c != '\t') sb_put(b, " ", 1);
        else sb_put(b, t, 1);
    }
}

static const char *jstr_of(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* One <testcase> per case: classname the suite part of the RFC name, name the test part;
 * FAIL and XPASS are failures, INCONCLUSIVE a failure of type inconclusive (never a
 * pass), SKIP and XFAIL skipped. */
static char *junit_xml(const cJSON *cases, int n_pass, int n_fail, int n_skip, int n_inc)
{
    sbuf b = {0};
    char hdr[256];
    int total = cJSON_GetArraySize(cases);
    sb_str(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    snprintf(hdr, sizeof hdr, "<testsuites tests=\"%d\" failures=\"%d\" skipped=\"%d\">\n", total, n_fail + n_inc, n_skip);
    sb_str(&b, hdr);
    snprintf(hdr, sizeof hdr, "  <testsuite name=\"numoracle run\" tests=\"%d\" failures=\"%d\" skipped=\"%d\">\n", total,
             n_fail + n_inc, n_skip);
    sb_str(&b, hdr);
    (void)n_pass;
    for (const cJSON *c = cases ? cases->child : NULL; c; c = c->next) {
        const char *name = jstr_of(c, "name"), *st = jstr_of(c, "status"), *why = jstr_of(c, "reason");
        const char *dot = strrchr(name, '.');
        char cls[600];
        snprintf(cls, sizeof cls, "%.*s", dot ? (int)(dot - name) : (int)strlen(name), name);
        sb_str(&b, "    <testcase classname=\"");
        sb_xml(&b, cls);
        sb_str(&b, "\" name=\"");
        sb_xml(&b, dot ? dot + 1 : name);
        sb_str(&b, "\"");
        int fail = strcmp(st, "FAIL") == 0 || strcmp(st, "XPASS") == 0, inc = strcmp(st, "INCONCLUSIVE") == 0;
        int skip = strcmp(st, "SKIP") == 0 || strcmp(st, "XFAIL") == 0;
        if (!fail && !inc && !skip) {
            sb_str(&b, "/>\n");
            continue;
        }
        sb_str(&b, ">\n      <");
        sb_str(&b, skip ? "skipped" : "failure");
        if (inc) sb_str(&b, " type=\"inconclusive\"");
        /* judged cases carry no reason: their two verdicts say it */
        char msg[300];
        const cJSON *jo = cJSON_GetObjectItemCaseSensitive(c, "oracle"), *jt = cJSON_GetObjectItemCaseSensitive(c, "tolerance");
        if (!why[0] && jo)
            snprintf(msg, sizeof msg, "%soracle %s, tolerance %s",
                     strcmp(st, "XFAIL") == 0 ? "expected failure: " : strcmp(st, "XPASS") == 0 ? "listed in expected_failures but passed: " : "",
                     jstr_of(jo, "verdict"), jstr_of(jt, "verdict"));
        else snprintf(msg, sizeof msg, "%s", why[0] ? why : st);
        sb_str(&b, " message=\"");
        sb_xml(&b, msg);
        sb_str(&b, "\"/>\n    </testcase>\n");
    }
    sb_str(&b, "  </testsuite>\n</testsuites>\n");
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

/* ---- the verb ----------------------------------------------------------------------------- */

/* --junit and --json: both staged together, so one path named twice is refused and
 * neither file replaces anything until both are written. n: passed, failed, skipped,
 * inconclusive, expected failures. Returns 0 or the exit status of an error. */
static int write_reports(cli_cmd *cmd, runner *R, const char *root, const char *tier_s, const char *vm_s,
                         const char *acc_s, const int *n)
{
    /* both reports staged together: one path named twice is refused, and neither file
     * replaces anything until both are written */
    cli_stage st = {0};
    int wrc = 0;
    const char *xpath = cli_val(cmd, "junit");
    if (xpath) {
        char *xs = junit_xml(R->jcases, n[0], n[1], n[2], n[3]);
        wrc = !xs ? cli_error("out of memory") : cli_stage_file(&st, xpath, xs, strlen(xs));
        free(xs);
    }
    const char *jpath = wrc ? NULL : cli_val(cmd, "json");
    if (jpath) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "numoracle_version", nmo_version());
        cJSON_AddStringToObject(o, "golden_data_dir", root);
        cJSON_AddStringToObject(o, "tier", tier_s);
        cJSON_AddStringToObject(o, "engine", R->eng->spec);
        cJSON_AddStringToObject(o, "verification_mode", vm_s);
        cJSON_AddStringToObject(o, "acceptance", acc_s);
        if (cli_val(cmd, "filter")) cJSON_AddStringToObject(o, "filter", cli_val(cmd, "filter"));
        if (cli_val(cmd, "shard")) cJSON_AddStringToObject(o, "shard", cli_val(cmd, "shard"));
        cJSON *s = cJSON_AddObjectToObject(o, "summary");
        cJSON_AddNumberToObject(s, "passed", n[0]);
        cJSON_AddNumberToObject(s, "failed", n[1]);
        cJSON_AddNumberToObject(s, "skipped", n[2]);
        cJSON_AddNumberToObject(s, "expected_failures", n[4]);
        cJSON_AddNumberToObject(s, "inconclusive", n[3]);
        cJSON_AddItemToObject(o, "cases", R->jcases);
        R->jcases = NULL;
        char *js = nmo__json_print(o, 1);
        cJSON_Delete(o);
        wrc = !js ? cli_error("out of memory") : cli_stage_file(&st, jpath, js, strlen(js));
        free(js);
    }
    if (!wrc && (xpath || jpath)) wrc = cli_stage_commit(&st);
    return wrc;
}

int cmd_run(int argc, char **argv)
{
    cli_opt opts[] = {
        {"golden-data-dir", "DIR", 0, 0, "golden data root (env HIPDNN_TEST_GOLDEN_DATA_DIR or NUMORACLE_GOLDEN_DATA_DIR; default ./bundles)", NULL, {0}, 0},
        {"gd", "DIR", 0, 0, "short for --golden-data-dir", NULL, {0}, 0},
        {"tier", "TIER", 0, 0, "quick (default), standard, comprehensive or full (each includes the ones before)", NULL, {0}, 0},
        {"engine", "E", 0, 0, "engine under test: cpu (default), cpu:NAME, hip[:NAME], plugin:PATH", NULL, {0}, 0},
        {"verification-mode", "M", 0, 0, "auto (default), golden, gpu or cpu (env HIPDNN_TEST_VERIFICATION_MODE or NUMORACLE_VERIFICATION_MODE)", NULL, {0}, 0},
        {"vm", "M", 0, 0, "short for --verification-mode", NULL, {0}, 0},
        {"acceptance", "A", 0, 0, "oracle (default), tolerance or both: the verdict that decides", NULL, {0}, 0},
        {"config", "FILE", 0, 0, "JSON or TOML (.toml): expected plugins, expected failures, tolerance overrides", NULL, {0}, 0},
        {"filter", "GLOB", 0, 0, "run tests matching POS[:POS...][-NEG[:NEG...]] (gtest style)", NULL, {0}, 0},
        {"shard", "I/N", 0, 0, "run only shard I of N (1 <= I <= N, after the filter)", NULL, {0}, 0},
        {"json", "FILE", 0, 0, "also write a JSON report to FILE (atomically)", NULL, {0}, 0},
        {"junit", "FILE", 0, 0, "also write a JUnit XML report to FILE (atomically)", NULL, {0}, 0},
        {"list", NULL, 0, 0, "list the selected test names and exit", NULL, {0}, 0},
        {"expect-plugin", "PATH", 0, 1, "a plugin that must load: failing to is an error, not a skip (also NMO_EXPECT_PLUGINS)", NULL, {0}, 0},
        {"strict", NULL, 0, 0, "exit 1 when a case is skipped (not an expected failure)", NULL, {0}, 0},
    };
    cli_cmd cmd = {
        .verb = "run",
        .summary = "Run an engine on every golden bundle of a tier cascade and judge each output with\n"
                   "both verdicts: the certified reachable sets (oracle) and the tolerance chain.",
        .usage = "run [--golden-data-dir DIR] [--tier TIER] [--engine E] [options]",
        .epilog = "Test names: single-graph bundles {Operation}_{layout}_{dtype}.{BundleDir}, sweeps\n"
                  "{Operation}_{TopologyName}.{case_id}; standard/comprehensive/full add the prefix\n"
                  "Standard/, Comprehensive/, Full/. Configuration (JSON):\n"
                  "  {\"plugins\": {\"cpu\": {\"path\": \"builtin\", \"engines\": [\"cpu\"]}},\n"
                  "   \"engines\": {\"cpu*\": {\"expected_failures\": [\"TEST\", ...],\n"
                  "                          \"tolerance_overrides\": [{\"filter\": \"GLOB\", \"atol\": A, \"rtol\": R}],\n"
                  "                          \"tolerance\": {\"atol\": A, \"rtol\": R}}}}\n"
                  "Engine keys are globs over the --engine value. A .toml file holds the same keys\n"
                  "(RFC 0006: [plugins.NAME], [engines.\"GLOB\"]); a top-level [[tolerance_overrides]]\n"
                  "(an engine's own file) applies to the engine under test. A plugin entry whose path\n"
                  "is not \"builtin\" must load. An expected failure that fails is\n"
                  "XFAIL (counted as skipped); one that passes is XPASS (counted as failed).\n"
                  "\n"
                  "exit: 0 all passed, 1 a failure (--strict: or a skip), 3 inconclusive (no failure),\n"
                  "2 usage/config errors\n",
        .opts = opts,
        .nopts = (int)(sizeof opts / sizeof opts[0]),
    };
    int rc = cli_parse(&cmd, argc, argv);
    if (rc) return rc < 0 ? 0 : rc;

    const char *root = cli_data_dir(&cmd);
    const char *tier_s = cli_val(&cmd, "tier") ? cli_val(&cmd, "tier") : "quick";
    int tier = nmo_tier_parse(tier_s);
    if (tier < 0) return cli_error("bad --tier '%s': expected quick, standard, comprehensive or full", tier_s);
    const char *vm_s = cli_val(&cmd, "verification-mode");
    if (!vm_s) vm_s = cli_val(&cmd, "vm");
    const char *vm_env = NULL;
    if (!vm_s) vm_s = cli_env2("HIPDNN_TEST_VERIFICATION_MODE", "NUMORACLE_VERIFICATION_MODE", &vm_env);
    if (!vm_s) vm_s = "auto";
    vmode vm;
    if (strcmp(vm_s, "auto") == 0) vm = VM_AUTO;
    else if (strcmp(vm_s, "golden") == 0) vm = VM_GOLDEN;
    else if (strcmp(vm_s, "gpu") == 0) vm = VM_GPU;
    else if (strcmp(vm_s, "cpu") == 0) vm = VM_CPU;
    else return cli_error("bad %s '%s': expected auto, golden, gpu or cpu", vm_env ? vm_env : "--verification-mode", vm_s);
    const char *acc_s = cli_val(&cmd, "acceptance") ? cli_val(&cmd, "acceptance") : "oracle";
    acceptance acc;
    if (strcmp(acc_s, "oracle") == 0) acc = ACC_ORACLE;
    else if (strcmp(acc_s, "tolerance") == 0) acc = ACC_TOL;
    else if (strcmp(acc_s, "both") == 0) acc = ACC_BOTH;
    else return cli_error("bad --acceptance '%s': expected tolerance, oracle or both", acc_s);
    int sh_i, sh_n;
    if ((rc = cli_parse_shard(&sh_i, &sh_n, cli_val(&cmd, "shard")))) return rc;
    cli_eut eng;
    cli_opt *eo = cli_get(&cmd, "expect-plugin");
    if ((rc = cli_engine_spec(&eng, cli_val(&cmd, "engine"), (const char *const *)eo->vals, eo->nvals))) return rc;
    run_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    if (cli_val(&cmd, "config") && (rc = load_config(&cfg, cli_val(&cmd, "config"), &eng))) {
        cli_engine_release(&eng);
        return rc;
    }

    nmo_disc d;
    nmo_err err;
    if (nmo_discover(&d, root, tier, 0, cli_stderr_diag, NULL, &err) != NMO_OK) {
        cfg_free(&cfg);
        cli_engine_release(&eng);
        if (err.msg[0] && strstr(err.msg, "collision")) {
            nmo_disc_free(&d);
            return cli_error("%s", err.msg);
        }
        return cli_error("%s", err.msg);
    }
    const char *filter = cli_val(&cmd, "filter");
    int *sel = malloc((size_t)(d.n ? d.n : 1) * sizeof(int)), nsel = 0, nf = 0;
    for (int i = 0; i < d.n; i++) {
        if (!nmo_filter_match(filter, d.cases[i].name)) continue;
        if (nf++ % sh_n == sh_i) sel[nsel++] = i;
    }
    if (cli_val(&cmd, "list")) {
        for (int q = 0; q < nsel; q++) printf("%s\n", d.cases[sel[q]].name);
        free(sel);
        nmo_disc_free(&d);
        cfg_free(&cfg);
        cli_engine_release(&eng);
        return 0;
    }
    /* expected failures naming no discovered test are stale configuration */
    for (int e = 0; e < cfg.n; e++)
        for (int k = 0; k < cfg.e[e].n_xfail; k++) {
            int any = 0;
            for (int i = 0; i < d.n && !any; i++) any = fnmatch(cfg.e[e].xfail[k], d.cases[i].name, 0) == 0;
            if (!any)
                fprintf(stderr, "numoracle: warning: %s: engines.%s: expected failure '%s' matches no discovered test\n", cfg.path,
                        cfg.e[e].glob, cfg.e[e].xfail[k]);
        }

    runner R = {&eng, acc, vm, &cfg, cJSON_CreateArray()};
    int n_pass = 0, n_fail = 0, n_skip = 0, n_inc = 0, n_xfail = 0;
    for (int q = 0; q < nsel; q++) {
        outcome o = run_one(&R, &d, sel[q]);
        switch (o) {
        case OUT_PASS: n_pass++; break;
        case OUT_FAIL: case OUT_XPASS: n_fail++; break;
        case OUT_SKIP: n_skip++; break;
        case OUT_XFAIL: n_skip++, n_xfail++; break;
        case OUT_INCONC: n_inc++; break;
        }
    }
    int n[5] = {n_pass, n_fail, n_skip, n_inc, n_xfail};
    printf("%d passed, %d failed, %d skipped\n", n_pass, n_fail, n_skip);
    printf("%d inconclusive\n", n_inc);
    fflush(stdout);
    rc = n_fail || (cli_val(&cmd, "strict") && n_skip > n_xfail) ? 1 : n_inc ? 3 : 0;
    int wrc = write_reports(&cmd, &R, root, tier_s, vm_s, acc_s, n);
    if (wrc) rc = wrc;
    cJSON_Delete(R.jcases);
    free(sel);
    nmo_disc_free(&d);
    cfg_free(&cfg);
    cli_engine_release(&eng);
    return rc;
}
