/* numoracle campaign: the configuration file (JSON). Unknown keys are errors, so a typo
 * never silently falls back to a default. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "campaign/campaign.h"
#include "nmo_internal.h"

#ifndef NMO_SRCDIR
#define NMO_SRCDIR "."
#endif

/* Kernel-structure helpers of cand_util.h that generated mutants may change (shell
 * patterns: helpers added later under these names are picked up). Not the emulations
 * of hardware or vendor libraries (format conversions, CUDA expf/rsqrtf), which are not
 * kernel code. Only lines the base candidate executes are mutated in any case. */
static const char *const default_util_fns[] = {
    "nmo_cu_warp_*", "nmo_cu_block_*", "nmo_cu_sum_*", "nmo_cu_reduce*", "nmo_cu_madd",
    "nmo_cu_term",   "nmo_cu_load",    "nmo_cu_store", "nmo_cu_encode",  NULL};

static char *slurp(const char *path, nmo_err *err)
{
    FILE *f = nmo__fopen_regular(path, err); /* a directory or FIFO: named, never "out of memory" or a hang */
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)(n > 0 ? n : 0) + 1);
    if (!b) {
        fclose(f);
        nmo_err_set(err, NMO_ERR_NOMEM, "out of memory");
        return NULL;
    }
    size_t r = fread(b, 1, (size_t)(n > 0 ? n : 0), f);
    fclose(f);
    b[r] = '\0';
    return b;
}

static int check_keys(const cJSON *o, const char *const *allowed, const char *where, nmo_err *err)
{
    for (const cJSON *c = o->child; c; c = c->next) {
        int ok = 0;
        for (int i = 0; allowed[i]; i++)
            if (strcmp(c->string, allowed[i]) == 0) ok = 1;
        if (!ok) {
            char list[512];
            size_t off = 0;
            list[0] = '\0';
            for (int i = 0; allowed[i] && off < sizeof list; i++)
                off += (size_t)snprintf(list + off, sizeof list - off, i ? ", %s" : "%s", allowed[i]);
            nmo_err_set(err, NMO_ERR_PARSE, "config: unknown key '%s' in %s (known: %s)", c->string, where, list);
            return -1;
        }
    }
    return 0;
}

/* seeds: [1, 2, 3] or {"first": F, "count": C} */
static int parse_seeds(uint64_t **out, int *n, const cJSON *j, const char *what, nmo_err *err)
{
    free(*out);
    *out = NULL;
    *n = 0;
    if (cJSON_IsArray(j)) {
        int c = cJSON_GetArraySize(j);
        *out = calloc((size_t)(c > 0 ? c : 1), sizeof **out);
        for (const cJSON *e = j->child; e; e = e->next) {
            /* range before the cast (a double beyond uint64_t is undefined to convert);
             * 2^53: the largest range where every JSON integer is exact */
            if (!cJSON_IsNumber(e) || !(e->valuedouble >= 0 && e->valuedouble <= 0x1p53) ||
                e->valuedouble != (double)(uint64_t)e->valuedouble) {
                nmo_err_set(err, NMO_ERR_PARSE, "config: %s: seeds must be integers in [0, 2^53]", what);
                return -1;
            }
            (*out)[(*n)++] = (uint64_t)e->valuedouble;
        }
        return 0;
    }
    if (cJSON_IsObject(j)) {
        static const char *const keys[] = {"first", "count", NULL};
        if (check_keys(j, keys, what, err)) return -1;
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(j, "first");
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(j, "count");
        double first = cJSON_IsNumber(f) ? f->valuedouble : 1, count = cJSON_IsNumber(c) ? c->valuedouble : 1;
        if (!(first >= 0 && first <= 0x1p53) || first != (double)(uint64_t)first || !(count >= 0 && count <= 1e6) ||
            count != (double)(int)count) {
            nmo_err_set(err, NMO_ERR_PARSE, "config: %s: bad first/count", what);
            return -1;
        }
        *out = calloc((size_t)count + 1, sizeof **out);
        for (int i = 0; i < (int)count; i++) (*out)[(*n)++] = (uint64_t)first + (uint64_t)i;
        return 0;
    }
    nmo_err_set(err, NMO_ERR_PARSE, "config: %s: expected an array of seeds or {\"first\", \"count\"}", what);
    return -1;
}

static int parse_families(int *out, int *n, const cJSON *j, const char *what, nmo_err *err)
{
    if (!cJSON_IsArray(j)) {
        nmo_err_set(err, NMO_ERR_PARSE, "config: %s: expected an array of family names", what);
        return -1;
    }
    *n = 0;
    for (const cJSON *e = j->child; e; e = e->next) {
        nmo_family f;
        if (!cJSON_IsString(e) || nmo_family_from_name(&f, e->valuestring) != NMO_OK) {
            nmo_err_set(err, NMO_ERR_UNKNOWN_FAMILY, "config: %s: unknown family '%s'", what,
                        cJSON_IsString(e) ? e->valuestring : "?");
            return -1;
        }
        if (*n >= NMO_CAMP_MAX_FAM) {
            nmo_err_set(err, NMO_ERR_PARSE, "config: %s: too many families", what);
            return -1;
        }
        out[(*n)++] = (int)f;
    }
    return 0;
}

static int set_str(char *dst, size_t n, const cJSON *j, const char *what, nmo_err *err)
{
    if (!cJSON_IsString(j)) {
        nmo_err_set(err, NMO_ERR_PARSE, "config: %s: expected a string", what);
        return -1;
    }
    if (strlen(j->valuestring) >= n) {
        nmo_err_set(err, NMO_ERR_PARSE, "config: %s: too long", what);
        return -1;
    }
    snprintf(dst, n, "%s", j->valuestring);
    return 0;
}

static int op_shapes_default(nmo_camp_cfg *cfg, int i, int large, nmo_err *err)
{
    const nmo_op *op = cfg->ops[i];
    const char *spec = large && op->test_shapes_large ? op->test_shapes_large : op->test_shapes;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", spec ? spec : "3x1025;8x64");
    cfg->nshapes[i] = 0;
    char *save = NULL;
    for (char *t = strtok_r(buf, ";", &save); t && cfg->nshapes[i] < NMO_CAMP_MAX_SHAPES; t = strtok_r(NULL, ";", &save)) {
        nmo_camp_shape *s = &cfg->shapes[i][cfg->nshapes[i]];
        if (nmo_shape_parse(&s->nshape, s->shape, t, err) != NMO_OK) return -1;
        snprintf(s->text, sizeof s->text, "%s", t);
        cfg->nshapes[i]++;
    }
    return 0;
}

nmo_status nmo_camp_cfg_set_ops(nmo_camp_cfg *cfg, const char *list, nmo_err *err)
{
    cfg->nops = 0;
    if (!list || strcmp(list, "all") == 0) {
        for (int i = 0; i < nmo_op_count() && i < NMO_CAMP_MAX_OPS; i++) cfg->ops[cfg->nops++] = nmo_op_at(i);
    } else {
        char buf[2048];
        snprintf(buf, sizeof buf, "%s", list);
        char *save = NULL;
        for (char *t = strtok_r(buf, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
            const nmo_op *op = nmo_op_find(t);
            if (!op) return nmo_err_set(err, NMO_ERR_UNKNOWN_OP, "unknown op '%s' (see numoracle ops)", t);
            if (cfg->nops >= NMO_CAMP_MAX_OPS) return nmo_err_set(err, NMO_ERR_USAGE, "too many operators");
            cfg->ops[cfg->nops++] = op;
        }
    }
    for (int i = 0; i < cfg->nops; i++)
        if (op_shapes_default(cfg, i, 0, err)) return NMO_ERR_SHAPE;
    return NMO_OK;
}

static void defaults(nmo_camp_cfg *cfg, const char *path)
{
    memset(cfg, 0, sizeof *cfg);
    snprintf(cfg->name, sizeof cfg->name, "campaign");
    snprintf(cfg->backend, sizeof cfg->backend, "cpu");
    cfg->ndt = 3;
    cfg->dt[0] = NMO_FP32, cfg->dt[1] = NMO_BF16, cfg->dt[2] = NMO_FP16;
    cfg->nmain = 2;
    cfg->fam_main[0] = NMO_FAM_GAUSSIAN, cfg->fam_main[1] = NMO_FAM_SMALL;
    cfg->nshift = 4;
    cfg->fam_shift[0] = NMO_FAM_SHIFTED, cfg->fam_shift[1] = NMO_FAM_LARGE;
    cfg->fam_shift[2] = NMO_FAM_NEAR_DEGENERATE, cfg->fam_shift[3] = NMO_FAM_OUTLIER;
    cfg->ncfam = 2;
    cfg->cfam[0] = NMO_FAM_GAUSSIAN, cfg->cfam[1] = NMO_FAM_SMALL;
    cfg->quantile = 0.999;
    cfg->gen = cfg->hand = cfg->null_control = 1;
    for (int i = 0; i < NMO_MOP_COUNT; i++) cfg->mop_on[i] = 1;
    for (int i = 0; default_util_fns[i]; i++) snprintf(cfg->util_fns[cfg->nutil++], 64, "%s", default_util_fns[i]);
    cfg->coverage = 1;
    cfg->determinism = 1;
    for (int i = 0; i < NMO_CK_COUNT; i++) cfg->check_on[i] = 1;
    cfg->workers = 2;
    cfg->timeout = 10;
    cfg->fsync_line = 1;
    cfg->geometry = 1;
    snprintf(cfg->source_root, sizeof cfg->source_root, "%s", NMO_SRCDIR);
    const char *cc = getenv("CC");
    snprintf(cfg->cc, sizeof cfg->cc, "%s", cc && *cc ? cc : "cc");
    /* journal next to the config: foo.json -> foo.jsonl */
    char base[900];
    snprintf(base, sizeof base, "%s", path ? path : "campaign.json");
    size_t l = strlen(base);
    if (l > 5 && strcmp(base + l - 5, ".json") == 0) base[l - 5] = '\0';
    snprintf(cfg->journal, sizeof cfg->journal, "%s.jsonl", base);
}

/* The sections of a campaign config, each checked as it is read (nmo_camp_cfg_load calls
 * them in order; an error names the field). */
#define FAIL(...) return nmo_err_set(err, NMO_ERR_PARSE, __VA_ARGS__)
#define CHECK(x) do { if (x) return NMO_ERR_PARSE; } while (0)

/* operators (or --ops, which replaces the config's list: it may name operators not built yet) */
static nmo_status cfg_operators(nmo_camp_cfg *cfg, const cJSON *root, const char *ops_override, nmo_err *err)
{
    const cJSON *j;
    j = cJSON_GetObjectItemCaseSensitive(root, "operators");
    if (ops_override) { /* --ops: the config's list is replaced (it may name operators not built yet) */
        return nmo_camp_cfg_set_ops(cfg, ops_override, err);
    } else if (!j || (cJSON_IsString(j) && strcmp(j->valuestring, "all") == 0)) {
        return nmo_camp_cfg_set_ops(cfg, "all", err);
    } else if (cJSON_IsArray(j)) {
        char list[2048];
        size_t off = 0;
        list[0] = '\0';
        for (const cJSON *e = j->child; e; e = e->next) {
            if (!cJSON_IsString(e)) FAIL("config: operators: expected names");
            if (off + strlen(e->valuestring) + 2 > sizeof list) FAIL("config: operators: list longer than %zu bytes", sizeof list - 2);
            off += (size_t)snprintf(list + off, sizeof list - off, off ? ",%s" : "%s", e->valuestring);
        }
        return nmo_camp_cfg_set_ops(cfg, off ? list : "all", err);
    } else FAIL("config: operators: expected \"all\" or an array of names");
    return NMO_OK;
}

/* dtypes */
static nmo_status cfg_dtypes(nmo_camp_cfg *cfg, const cJSON *root, nmo_err *err)
{
    const cJSON *j;
    if ((j = cJSON_GetObjectItemCaseSensitive(root, "dtypes"))) {
        if (!cJSON_IsArray(j)) FAIL("config: dtypes: expected an array");
        cfg->ndt = 0;
        for (const cJSON *e = j->child; e; e = e->next) {
            nmo_fmt f;
            if (!cJSON_IsString(e) || nmo_fmt_from_name(&f, e->valuestring) != NMO_OK)
                FAIL("config: dtypes: unknown dtype '%s'", cJSON_IsString(e) ? e->valuestring : "?");
            if (cfg->ndt >= NMO_CAMP_MAX_DT) FAIL("config: dtypes: too many");
            cfg->dt[cfg->ndt++] = f;
        }
    }
    return NMO_OK;
}

/* shapes: "test", "test_large" or {op: [shapes]} */
static nmo_status cfg_shapes(nmo_camp_cfg *cfg, const cJSON *root, nmo_err *err)
{
    const cJSON *j;
    if ((j = cJSON_GetObjectItemCaseSensitive(root, "shapes"))) {
        if (cJSON_IsString(j) && (strcmp(j->valuestring, "test") == 0 || strcmp(j->valuestring, "test_large") == 0)) {
            int large = strcmp(j->valuestring, "test_large") == 0;
            for (int i = 0; i < cfg->nops; i++)
                if (op_shapes_default(cfg, i, large, err)) return NMO_ERR_SHAPE;
        } else if (cJSON_IsObject(j)) {
            for (const cJSON *e = j->child; e; e = e->next) {
                int oi = -1;
                for (int i = 0; i < cfg->nops; i++)
                    if (strcmp(cfg->ops[i]->name, e->string) == 0) oi = i;
                if (oi < 0) continue; /* an operator not selected in this run (or not built) */
                if (!cJSON_IsArray(e)) FAIL("config: shapes.%s: expected an array of shapes", e->string);
                cfg->nshapes[oi] = 0;
                for (const cJSON *s = e->child; s; s = s->next) {
                    if (!cJSON_IsString(s) || cfg->nshapes[oi] >= NMO_CAMP_MAX_SHAPES)
                        FAIL("config: shapes.%s: expected at most %d shape strings", e->string, NMO_CAMP_MAX_SHAPES);
                    nmo_camp_shape *sh = &cfg->shapes[oi][cfg->nshapes[oi]];
                    if (nmo_shape_parse(&sh->nshape, sh->shape, s->valuestring, err) != NMO_OK) return NMO_ERR_SHAPE;
                    snprintf(sh->text, sizeof sh->text, "%s", s->valuestring);
                    cfg->nshapes[oi]++;
                }
            }
        } else FAIL("config: shapes: expected \"test\", \"test_large\" or {op: [shapes]}");
    }
    return NMO_OK;
}

/* mutants: kinds, bases, the cap, mutation operators, util functions */
static nmo_status cfg_mutants(nmo_camp_cfg *cfg, const cJSON *root, nmo_err *err)
{
    const cJSON *j;
    if ((j = cJSON_GetObjectItemCaseSensitive(root, "mutants"))) {
        static const char *const keys[] = {"generated", "hand_written", "null_control", "bases", "operators",
                                           "util_functions", "max_per_op", "coverage", "determinism_check", NULL};
        if (!cJSON_IsObject(j)) FAIL("config: mutants: expected an object");
        CHECK(check_keys(j, keys, "mutants", err));
        const cJSON *x;
        if ((x = cJSON_GetObjectItemCaseSensitive(j, "generated"))) cfg->gen = cJSON_IsTrue(x);
        if ((x = cJSON_GetObjectItemCaseSensitive(j, "hand_written"))) cfg->hand = cJSON_IsTrue(x);
        if ((x = cJSON_GetObjectItemCaseSensitive(j, "null_control"))) cfg->null_control = cJSON_IsTrue(x);
        if ((x = cJSON_GetObjectItemCaseSensitive(j, "coverage"))) cfg->coverage = cJSON_IsTrue(x);
        if ((x = cJSON_GetObjectItemCaseSensitive(j, "determinism_check"))) cfg->determinism = cJSON_IsTrue(x);
        if ((x = cJSON_GetObjectItemCaseSensitive(j, "bases"))) {
            if (!cJSON_IsString(x) || (strcmp(x->valuestring, "default") && strcmp(x->valuestring, "all")))
                FAIL("config: mutants.bases: expected \"default\" or \"all\"");
            cfg->bases_all = strcmp(x->valuestring, "all") == 0;
        }
        if ((x = cJSON_GetObjectItemCaseSensitive(j, "max_per_op"))) {
            /* bounded before the cast to int (out-of-range conversion is undefined) */
            if (!cJSON_IsNumber(x) || !(x->valuedouble >= 0 && x->valuedouble <= 1e6) || x->valuedouble != (double)(int)x->valuedouble)
                FAIL("config: mutants.max_per_op: expected a count in [0, 1000000]");
            cfg->max_per_op = (int)x->valuedouble;
        }
        if ((x = cJSON_GetObjectItemCaseSensitive(j, "operators"))) {
            if (!cJSON_IsArray(x)) FAIL("config: mutants.operators: expected an array");
            for (int i = 0; i < NMO_MOP_COUNT; i++) cfg->mop_on[i] = 0;
            for (const cJSON *e = x->child; e; e = e->next) {
                int m = cJSON_IsString(e) ? nmo_mop_from_name(e->valuestring) : -1;
                if (m < 0) {
                    char list[256];
                    size_t off = 0;
                    for (int i = 0; i < NMO_MOP_COUNT; i++)
                        off += (size_t)snprintf(list + off, sizeof list - off, i ? " %s" : "%s", nmo_mop_name((nmo_mop)i));
                    FAIL("config: mutants.operators: unknown mutation operator '%s' (known: %s)",
                         cJSON_IsString(e) ? e->valuestring : "?", list);
                }
                cfg->mop_on[m] = 1;
            }
        }
        if ((x = cJSON_GetObjectItemCaseSensitive(j, "util_functions"))) {
            if (!cJSON_IsArray(x)) FAIL("config: mutants.util_functions: expected an array");
            cfg->nutil = 0;
            for (const cJSON *e = x->child; e && cfg->nutil < 48; e = e->next) {
                if (!cJSON_IsString(e)) FAIL("config: mutants.util_functions: expected names");
                snprintf(cfg->util_fns[cfg->nutil++], 64, "%s", e->valuestring);
            }
        }
    }
    return NMO_OK;
}

/* checks, calibration */
static nmo_status cfg_checks_calibration(nmo_camp_cfg *cfg, const cJSON *root, nmo_err *err)
{
    const cJSON *j;
    if ((j = cJSON_GetObjectItemCaseSensitive(root, "checks"))) {
        if (!cJSON_IsArray(j)) FAIL("config: checks: expected an array");
        for (int i = 0; i < NMO_CK_COUNT; i++) cfg->check_on[i] = 0;
        for (const cJSON *e = j->child; e; e = e->next) {
            int k = cJSON_IsString(e) ? nmo_ck_from_name(e->valuestring) : -1;
            if (k < 0) FAIL("config: checks: unknown check '%s' (known: numoracle torch vllm hipdnn te higham p999)",
                            cJSON_IsString(e) ? e->valuestring : "?");
            cfg->check_on[k] = 1;
        }
        cfg->check_on[NMO_CK_NUMORACLE] = 1; /* always computed: the enclosure is needed anyway */
    }
    if ((j = cJSON_GetObjectItemCaseSensitive(root, "calibration"))) {
        static const char *const keys[] = {"seeds", "families", "quantile", NULL};
        if (!cJSON_IsObject(j)) FAIL("config: calibration: expected an object");
        CHECK(check_keys(j, keys, "calibration", err));
        const cJSON *x;
        if ((x = cJSON_GetObjectItemCaseSensitive(j, "seeds"))) CHECK(parse_seeds(&cfg->cseeds, &cfg->ncseeds, x, "calibration.seeds", err));
        if ((x = cJSON_GetObjectItemCaseSensitive(j, "families"))) CHECK(parse_families(cfg->cfam, &cfg->ncfam, x, "calibration.families", err));
        if ((x = cJSON_GetObjectItemCaseSensitive(j, "quantile"))) {
            if (!cJSON_IsNumber(x) || !(x->valuedouble > 0 && x->valuedouble <= 1)) FAIL("config: calibration.quantile: expected (0, 1]");
            cfg->quantile = x->valuedouble;
        }
    }
    return NMO_OK;
}

/* reference, workers, timeout, fsync and the paths */
static nmo_status cfg_run(nmo_camp_cfg *cfg, const cJSON *root, nmo_err *err)
{
    const cJSON *j;
    if ((j = cJSON_GetObjectItemCaseSensitive(root, "reference"))) {
        if (!cJSON_IsString(j) || (strcmp(j->valuestring, "midpoint") && strcmp(j->valuestring, "fp64")))
            FAIL("config: reference: expected \"midpoint\" or \"fp64\"");
        cfg->ref_fp64 = strcmp(j->valuestring, "fp64") == 0;
    }
    if ((j = cJSON_GetObjectItemCaseSensitive(root, "workers"))) {
        if (!cJSON_IsNumber(j) || j->valuedouble < 1 || j->valuedouble > 256) FAIL("config: workers: expected 1..256");
        cfg->workers = (int)j->valuedouble;
    }
    if ((j = cJSON_GetObjectItemCaseSensitive(root, "timeout"))) {
        /* at most a day: the itimerval and the 10x wall-clock backstop stay finite */
        if (!cJSON_IsNumber(j) || !(j->valuedouble > 0 && j->valuedouble <= 86400)) FAIL("config: timeout: expected seconds in (0, 86400]");
        cfg->timeout = j->valuedouble;
    }
    if ((j = cJSON_GetObjectItemCaseSensitive(root, "fsync"))) {
        if (!cJSON_IsString(j) || (strcmp(j->valuestring, "line") && strcmp(j->valuestring, "none")))
            FAIL("config: fsync: expected \"line\" or \"none\"");
        cfg->fsync_line = strcmp(j->valuestring, "line") == 0;
    }
    if ((j = cJSON_GetObjectItemCaseSensitive(root, "geometry"))) {
        if (!cJSON_IsBool(j)) FAIL("config: geometry: expected true or false");
        cfg->geometry = cJSON_IsTrue(j);
    }
    if ((j = cJSON_GetObjectItemCaseSensitive(root, "journal"))) CHECK(set_str(cfg->journal, sizeof cfg->journal, j, "journal", err));
    if ((j = cJSON_GetObjectItemCaseSensitive(root, "work_dir"))) {
        CHECK(set_str(cfg->work_dir, sizeof cfg->work_dir, j, "work_dir", err));
        cfg->work_dir_set = 1;
    }
    if ((j = cJSON_GetObjectItemCaseSensitive(root, "out_dir"))) {
        CHECK(set_str(cfg->out_dir, sizeof cfg->out_dir, j, "out_dir", err));
        cfg->out_dir_set = 1;
    }
    if ((j = cJSON_GetObjectItemCaseSensitive(root, "source_root"))) CHECK(set_str(cfg->source_root, sizeof cfg->source_root, j, "source_root", err));
    if ((j = cJSON_GetObjectItemCaseSensitive(root, "cc"))) CHECK(set_str(cfg->cc, sizeof cfg->cc, j, "cc", err));
    return NMO_OK;
}

/* Every operator offers every configured dtype. */
static nmo_status cfg_op_dtypes(const nmo_camp_cfg *cfg, nmo_err *err)
{
    for (int i = 0; i < cfg->nops; i++)
        for (int d = 0; d < cfg->ndt; d++) {
            if (!nmo_op_has_dtype(cfg->ops[i], cfg->dt[d]))
                FAIL("config: op %s has no dtype %s (dtypes: %s)", cfg->ops[i]->name, nmo_fmt_name(cfg->dt[d]),
                     cfg->ops[i]->dtypes);
        }
    return NMO_OK;
}

#undef FAIL
#undef CHECK

nmo_status nmo_camp_cfg_load(nmo_camp_cfg *cfg, const char *path, const char *ops_override, nmo_err *err)
{
    defaults(cfg, path);
    uint64_t d[4] = {1, 2, 3, 4}, c[10];
    for (int i = 0; i < 10; i++) c[i] = 1001 + (uint64_t)i;
    cfg->seeds = malloc(sizeof d), cfg->mseeds = malloc(sizeof d), cfg->cseeds = malloc(sizeof c);
    if (!cfg->seeds || !cfg->mseeds || !cfg->cseeds) return nmo_err_set(err, NMO_ERR_NOMEM, "out of memory");
    memcpy(cfg->seeds, d, sizeof d), memcpy(cfg->mseeds, d, sizeof d), memcpy(cfg->cseeds, c, sizeof c);
    cfg->nseeds = cfg->nmseeds = 4, cfg->ncseeds = 10;
    int mseeds_given = 0;

    char *text = slurp(path, err);
    if (!text) return NMO_ERR_IO;
    cJSON *root = cJSON_Parse(text);
    free(text);
    if (!root || !cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return nmo_err_set(err, NMO_ERR_PARSE, "%s: not a JSON object", path);
    }
    if (nmo__json_check_keys(root, path, err) != NMO_OK) {
        cJSON_Delete(root);
        return NMO_ERR_PARSE;
    }
    static const char *const top[] = {"name", "backend", "operators", "dtypes", "families", "seeds",
                                      "mutant_seeds", "shapes", "mutants", "checks", "calibration",
                                      "reference", "workers", "timeout", "journal", "work_dir",
                                      "out_dir", "source_root", "cc", "fsync", "geometry", "comment", NULL};
    nmo_status st = NMO_OK;
#define FAIL(...) do { st = nmo_err_set(err, NMO_ERR_PARSE, __VA_ARGS__); goto done; } while (0)
#define CHECK(x) do { if (x) { st = NMO_ERR_PARSE; goto done; } } while (0)
#define TRY(x) do { if ((st = (x)) != NMO_OK) goto done; } while (0)
    CHECK(check_keys(root, top, "the config", err));
    const cJSON *j;
    if ((j = cJSON_GetObjectItemCaseSensitive(root, "name"))) CHECK(set_str(cfg->name, sizeof cfg->name, j, "name", err));
    if ((j = cJSON_GetObjectItemCaseSensitive(root, "backend"))) {
        CHECK(set_str(cfg->backend, sizeof cfg->backend, j, "backend", err));
        if (strcmp(cfg->backend, "cpu") && strcmp(cfg->backend, "hip")) FAIL("config: backend '%s': expected cpu or hip", cfg->backend);
    }
    TRY(cfg_operators(cfg, root, ops_override, err));
    TRY(cfg_dtypes(cfg, root, err));
    if ((j = cJSON_GetObjectItemCaseSensitive(root, "families"))) {
        static const char *const keys[] = {"main", "shifted", NULL};
        if (!cJSON_IsObject(j)) FAIL("config: families: expected {\"main\": [...], \"shifted\": [...]}");
        CHECK(check_keys(j, keys, "families", err));
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(j, "main"), *s = cJSON_GetObjectItemCaseSensitive(j, "shifted");
        if (m) CHECK(parse_families(cfg->fam_main, &cfg->nmain, m, "families.main", err));
        if (s) CHECK(parse_families(cfg->fam_shift, &cfg->nshift, s, "families.shifted", err));
    }
    if ((j = cJSON_GetObjectItemCaseSensitive(root, "seeds"))) CHECK(parse_seeds(&cfg->seeds, &cfg->nseeds, j, "seeds", err));
    if ((j = cJSON_GetObjectItemCaseSensitive(root, "mutant_seeds"))) {
        CHECK(parse_seeds(&cfg->mseeds, &cfg->nmseeds, j, "mutant_seeds", err));
        mseeds_given = 1;
    }
    if (!mseeds_given) {
        free(cfg->mseeds);
        cfg->mseeds = malloc((size_t)(cfg->nseeds + 1) * sizeof *cfg->mseeds);
        memcpy(cfg->mseeds, cfg->seeds, (size_t)cfg->nseeds * sizeof *cfg->mseeds);
        cfg->nmseeds = cfg->nseeds;
    }
    TRY(cfg_shapes(cfg, root, err));
    TRY(cfg_mutants(cfg, root, err));
    TRY(cfg_checks_calibration(cfg, root, err));
    TRY(cfg_run(cfg, root, err));
    TRY(cfg_op_dtypes(cfg, err));
    st = nmo_camp_cfg_finish(cfg, err);
done:
#undef FAIL
#undef CHECK
#undef TRY
    cJSON_Delete(root);
    return st;
}

nmo_status nmo_camp_cfg_finish(nmo_camp_cfg *cfg, nmo_err *err)
{
    if (!cfg->work_dir_set) snprintf(cfg->work_dir, sizeof cfg->work_dir, "%.1000s.d", cfg->journal);
    if (!cfg->out_dir_set) {
        char base[1024];
        snprintf(base, sizeof base, "%s", cfg->journal);
        size_t l = strlen(base);
        if (l > 6 && strcmp(base + l - 6, ".jsonl") == 0) base[l - 6] = '\0';
        snprintf(cfg->out_dir, sizeof cfg->out_dir, "%.1000s-report", base);
    }
    /* backend hip: only operators with correct kernels in the HIP registry (this build's:
     * -Dgpu=none has none); the others are listed in hip_dropped */
    if (strcmp(cfg->backend, "hip") == 0) {
        int w = 0;
        size_t dl = strlen(cfg->hip_dropped);
        for (int i = 0; i < cfg->nops; i++) {
            if (nmo_camp_hip_kernels(NULL, 0, cfg->ops[i]->name, 1) > 0) {
                if (w != i) {
                    cfg->ops[w] = cfg->ops[i];
                    cfg->nshapes[w] = cfg->nshapes[i];
                    memcpy(cfg->shapes[w], cfg->shapes[i], sizeof cfg->shapes[i]);
                }
                w++;
            } else if (dl + strlen(cfg->ops[i]->name) + 2 < sizeof cfg->hip_dropped) {
                dl += (size_t)snprintf(cfg->hip_dropped + dl, sizeof cfg->hip_dropped - dl, "%s%s", dl ? " " : "",
                                       cfg->ops[i]->name);
            }
        }
        cfg->nops = w;
    }
    /* canonical effective config: everything that changes results (not workers, paths) */
    cJSON *o = cJSON_CreateObject();
    if (!o) return nmo_err_set(err, NMO_ERR_NOMEM, "out of memory");
    cJSON_AddStringToObject(o, "name", cfg->name);
    cJSON_AddStringToObject(o, "backend", cfg->backend);
    /* bumped whenever mutant generation or run semantics change: old journals are refused */
    cJSON_AddStringToObject(o, "engine", NMO_CAMP_ENGINE_VERSION);
    cJSON *ops = cJSON_AddArrayToObject(o, "operators");
    cJSON *shp = cJSON_AddObjectToObject(o, "shapes");
    for (int i = 0; i < cfg->nops; i++) {
        cJSON_AddItemToArray(ops, cJSON_CreateString(cfg->ops[i]->name));
        cJSON *a = cJSON_AddArrayToObject(shp, cfg->ops[i]->name);
        for (int s = 0; s < cfg->nshapes[i]; s++) cJSON_AddItemToArray(a, cJSON_CreateString(cfg->shapes[i][s].text));
    }
    cJSON *dts = cJSON_AddArrayToObject(o, "dtypes");
    for (int d = 0; d < cfg->ndt; d++) cJSON_AddItemToArray(dts, cJSON_CreateString(nmo_fmt_name(cfg->dt[d])));
    cJSON *fam = cJSON_AddObjectToObject(o, "families");
    cJSON *fm = cJSON_AddArrayToObject(fam, "main"), *fs = cJSON_AddArrayToObject(fam, "shifted");
    for (int i = 0; i < cfg->nmain; i++) cJSON_AddItemToArray(fm, cJSON_CreateString(nmo_family_name(cfg->fam_main[i])));
    for (int i = 0; i < cfg->nshift; i++) cJSON_AddItemToArray(fs, cJSON_CreateString(nmo_family_name(cfg->fam_shift[i])));
    cJSON *se = cJSON_AddArrayToObject(o, "seeds");
    for (int i = 0; i < cfg->nseeds; i++) cJSON_AddItemToArray(se, cJSON_CreateNumber((double)cfg->seeds[i]));
    cJSON *ms = cJSON_AddArrayToObject(o, "mutant_seeds");
    for (int i = 0; i < cfg->nmseeds; i++) cJSON_AddItemToArray(ms, cJSON_CreateNumber((double)cfg->mseeds[i]));
    cJSON *mu = cJSON_AddObjectToObject(o, "mutants");
    cJSON_AddBoolToObject(mu, "generated", cfg->gen);
    cJSON_AddBoolToObject(mu, "hand_written", cfg->hand);
    cJSON_AddBoolToObject(mu, "null_control", cfg->null_control);
    cJSON_AddStringToObject(mu, "bases", cfg->bases_all ? "all" : "default");
    cJSON *mo = cJSON_AddArrayToObject(mu, "operators");
    for (int i = 0; i < NMO_MOP_COUNT; i++)
        if (cfg->mop_on[i]) cJSON_AddItemToArray(mo, cJSON_CreateString(nmo_mop_name((nmo_mop)i)));
    cJSON *uf = cJSON_AddArrayToObject(mu, "util_functions");
    for (int i = 0; i < cfg->nutil; i++) cJSON_AddItemToArray(uf, cJSON_CreateString(cfg->util_fns[i]));
    cJSON_AddNumberToObject(mu, "max_per_op", cfg->max_per_op);
    cJSON_AddBoolToObject(mu, "coverage", cfg->coverage);
    cJSON_AddBoolToObject(mu, "determinism_check", cfg->determinism);
    cJSON *ck = cJSON_AddArrayToObject(o, "checks");
    for (int i = 0; i < NMO_CK_COUNT; i++)
        if (cfg->check_on[i]) cJSON_AddItemToArray(ck, cJSON_CreateString(nmo_ck_name((nmo_ck)i)));
    cJSON *ca = cJSON_AddObjectToObject(o, "calibration");
    cJSON *cs = cJSON_AddArrayToObject(ca, "seeds");
    for (int i = 0; i < cfg->ncseeds; i++) cJSON_AddItemToArray(cs, cJSON_CreateNumber((double)cfg->cseeds[i]));
    cJSON *cf = cJSON_AddArrayToObject(ca, "families");
    for (int i = 0; i < cfg->ncfam; i++) cJSON_AddItemToArray(cf, cJSON_CreateString(nmo_family_name(cfg->cfam[i])));
    cJSON_AddNumberToObject(ca, "quantile", cfg->quantile);
    cJSON_AddStringToObject(o, "reference", cfg->ref_fp64 ? "fp64" : "midpoint");
    cJSON_AddNumberToObject(o, "timeout", cfg->timeout);
    cJSON_AddBoolToObject(o, "geometry", cfg->geometry);
    if (strcmp(cfg->backend, "hip") == 0) { /* the registry's kernels are part of the campaign */
        cJSON *hk = cJSON_AddArrayToObject(o, "hip_kernels");
        for (int i = 0; i < cfg->nops; i++)
            for (int c = 1; c >= 0; c--) {
                const nmo_plugin_kernel *k[256];
                int n = nmo_camp_hip_kernels(k, 256, cfg->ops[i]->name, c);
                for (int q = 0; q < n && q < 256; q++) {
                    char t[256];
                    snprintf(t, sizeof t, "%s:%s:%s:%s", cfg->ops[i]->name, k[q]->name, k[q]->dtypes ? k[q]->dtypes : "",
                             k[q]->plan ? k[q]->plan : "");
                    cJSON_AddItemToArray(hk, cJSON_CreateString(t));
                }
            }
    }
    free(cfg->config_text);
    cfg->config_text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (!cfg->config_text) return nmo_err_set(err, NMO_ERR_NOMEM, "out of memory");
    uint64_t h = nmo_fnv1a(cfg->config_text, strlen(cfg->config_text), NMO_FNV_INIT);
    snprintf(cfg->config_hash, sizeof cfg->config_hash, "%016llx", (unsigned long long)h);
    return NMO_OK;
}

void nmo_camp_cfg_free(nmo_camp_cfg *cfg)
{
    free(cfg->seeds);
    free(cfg->mseeds);
    free(cfg->cseeds);
    free(cfg->config_text);
    cfg->seeds = cfg->mseeds = cfg->cseeds = NULL;
    cfg->config_text = NULL;
}

int nmo_camp_mkdirs(const char *path)
{
    char buf[1100];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
        *p = '/';
    }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
    return 0;
}

nmo_status nmo_camp_write_file(const char *path, const char *data, size_t len, nmo_err *err)
{
    if (nmo__out_is_direct(path)) return nmo__write_direct(path, data, len, err); /* never rename over a device */
    char tmp[1200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) return nmo_err_set(err, NMO_ERR_IO, "%s: cannot create: %s", tmp, strerror(errno));
    size_t w = fwrite(data, 1, len, f);
    int bad = w != len || fflush(f) != 0;
    if (fclose(f) != 0) bad = 1;
    if (bad || rename(tmp, path) != 0) {
        int e = errno;
        remove(tmp);
        return nmo_err_set(err, NMO_ERR_IO, "%s: cannot write: %s", path, strerror(e));
    }
    return NMO_OK;
}
