/* numoracle calibrate: the RFC 0011 tolerance calibration tool. For every selected bundle
 * case it runs the engine N times on the bundle's inputs, collects the element-wise
 * absolute and relative errors against the expected output over all runs, and writes
 * tolerance.absolute = p99.9 of the absolute errors and tolerance.relative = p99.9 of the
 * relative errors (nearest rank; relative errors over elements with expected != 0) into
 * the case's .meta.json with a calibration block (method empirical_p99.9, num_runs,
 * calibrated_on, calibrated_at, engine). deterministic says whether all runs were
 * bitwise identical. Other metadata fields are kept; the file is replaced atomically.
 * A case without .meta.json or golden data is skipped (nothing to calibrate against), and
 * so is an unsupported operation, with the SKIP line run and verify print. */
/* Messages and paths are truncated to their fixed buffers on purpose. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "nmo_internal.h"
#include "numoracle/bundle.h"

/* One calibration: the errors of every run against the expected output. */
typedef struct {
    double *ab, *rl;
    int64_t na, nr;
    int deterministic;
} cal_errs;

typedef enum { CAL_DONE, CAL_FAIL, CAL_SKIP } cal_outcome;

/* Accumulate the errors of output set `out` (run r) into e; the first run's outputs are
 * kept in first[] for the determinism comparison. */
static void cal_add_run(cal_errs *e, const nmo_bundle *b, nmo_tensor *out, nmo_tensor *first, long r)
{
    for (int k = 0; k < b->c.n_out; k++) {
        int64_t m = nmo_tensor_numel(&out[k]);
        size_t bytes = (size_t)m * nmo_fmt_bytes(out[k].dtype);
        if (r == 0) {
            first[k] = out[k];
            out[k].own = 0;
        } else if (memcmp(first[k].data, out[k].data, bytes) != 0) {
            e->deterministic = 0;
        }
        for (int64_t q = 0; q < m; q++) {
            double ev = nmo_tensor_get(&b->golden[k], q), c = nmo_tensor_get(&out[k], q);
            double dv = fabs(c - ev);
            if (dv != dv) dv = INFINITY; /* NaN output: unbounded error */
            e->ab[e->na++] = dv;
            if (ev != 0) e->rl[e->nr++] = dv / fabs(ev);
        }
    }
}

/* Run the engine `runs` times on b's inputs, collecting the errors. */
static cal_outcome cal_collect(cal_errs *e, const cli_eut *eng, const nmo_bundle *b, long runs, const char *name)
{
    int64_t n = 0;
    for (int k = 0; k < b->c.n_out; k++) n += nmo_tensor_numel(&b->c.out[k]);
    e->ab = malloc((size_t)(n * runs) * sizeof(double));
    e->rl = malloc((size_t)(n * runs) * sizeof(double));
    e->na = e->nr = 0;
    e->deterministic = 1;
    if (!e->ab || !e->rl) {
        printf("FAIL %s: out of memory\n", name);
        return CAL_FAIL;
    }
    cal_outcome res = CAL_DONE;
    nmo_tensor first[NMO_MAX_TENSORS];
    memset(first, 0, sizeof first);
    for (long r = 0; r < runs && res == CAL_DONE; r++) {
        nmo_tensor out[NMO_MAX_TENSORS];
        char ew[700];
        nmo_err err;
        int er = cli_engine_exec(out, eng, &b->c, ew, sizeof ew, &err);
        if (er > 0 && r == 0) {
            /* the engine cannot serve the case: nothing to calibrate */
            printf("SKIP %s: %s\n", name, ew);
            res = CAL_SKIP;
        } else if (er != 0) {
            printf("FAIL %s: engine %s: %s\n", name, eng->spec, er > 0 ? ew : err.msg);
            res = CAL_FAIL;
        } else {
            cal_add_run(e, b, out, first, r);
        }
        for (int k = 0; k < NMO_MAX_TENSORS; k++) nmo_tensor_free(&out[k]);
    }
    for (int k = 0; k < NMO_MAX_TENSORS; k++) {
        first[k].own = first[k].data != NULL;
        nmo_tensor_free(&first[k]);
    }
    return res;
}

typedef struct {
    const cli_eut *eng;
    long runs;
    int dry;
    char host[128], ts[64];
} cal_run;

/* The tolerance block (p99.9 of the errors and its calibration record) into b's
 * .meta.json, replaced atomically (nothing written on a dry run). */
static cal_outcome cal_write(const cal_run *R, const nmo_bundle *b, const cal_errs *e, const char *name)
{
    double atol = nmo_quantile(e->ab, e->na, 0.999), rtol = e->nr ? nmo_quantile(e->rl, e->nr, 0.999) : 0.0;
    if (!isfinite(atol) || !isfinite(rtol)) {
        printf("FAIL %s: the engine produced NaN/Inf; no finite tolerance covers it\n", name);
        return CAL_FAIL;
    }
    cJSON *meta = cJSON_Duplicate(b->meta, 1);
    cJSON *tol = cJSON_CreateObject();
    cJSON_AddNumberToObject(tol, "absolute", atol);
    cJSON_AddNumberToObject(tol, "relative", rtol);
    cJSON_AddBoolToObject(tol, "deterministic", e->deterministic);
    cJSON *cal = cJSON_AddObjectToObject(tol, "calibration");
    cJSON_AddStringToObject(cal, "method", "empirical_p99.9");
    cJSON_AddNumberToObject(cal, "num_runs", (double)R->runs);
    char on[300];
    snprintf(on, sizeof on, "%s on %s (%s)", R->eng->spec, R->host,
             R->eng->is_kernel ? (R->eng->plugin ? "plugin" : "GPU") : "CPU");
    cJSON_AddStringToObject(cal, "calibrated_on", on);
    cJSON_AddStringToObject(cal, "calibrated_at", R->ts);
    cJSON_AddStringToObject(cal, "engine", R->eng->spec);
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "tolerance");
    cJSON_AddItemToObject(meta, "tolerance", tol);
    char *text = nmo__json_print(meta, 1);
    cJSON_Delete(meta);
    nmo_err err;
    if (!R->dry && (!text || nmo__write_file_atomic(b->meta_path, text, strlen(text), &err) != NMO_OK)) {
        printf("FAIL %s: %s\n", name, text ? err.msg : "out of memory");
        free(text);
        return CAL_FAIL;
    }
    free(text);
    printf("calibrated %s: absolute %.3g relative %.3g (%ld run%s, %s)%s\n", name, atol, rtol, R->runs,
           R->runs == 1 ? "" : "s", e->deterministic ? "deterministic" : "non-deterministic", R->dry ? " [dry run]" : "");
    return CAL_DONE;
}

static cal_outcome calibrate_one(const cal_run *R, const nmo_disc *d, int i)
{
    const char *name = d->cases[i].name;
    nmo_bundle b;
    nmo_err err;
    nmo_status ls = nmo_disc_load(&b, d, i, 0, &err);
    if (ls != NMO_OK) {
        /* an operation numoracle does not model: run's and verify's SKIP line */
        printf("%s %s: %s\n", ls == NMO_ERR_UNKNOWN_OP ? "SKIP" : "FAIL", name, err.msg);
        return ls == NMO_ERR_UNKNOWN_OP ? CAL_SKIP : CAL_FAIL;
    }
    const char *why = !b.have_golden ? "no golden data" : !b.meta ? "no .meta.json to write into" : NULL;
    if (why) {
        printf("SKIP %s: %s\n", name, why);
        nmo_bundle_free(&b);
        return CAL_SKIP;
    }
    cal_errs e;
    cal_outcome res = cal_collect(&e, R->eng, &b, R->runs, name);
    if (res == CAL_DONE) res = cal_write(R, &b, &e, name);
    free(e.ab), free(e.rl);
    nmo_bundle_free(&b);
    return res;
}

int cmd_calibrate(int argc, char **argv)
{
    cli_opt opts[] = {
        {"golden-data-dir", "DIR", 0, 0, "golden data root (env HIPDNN_TEST_GOLDEN_DATA_DIR or NUMORACLE_GOLDEN_DATA_DIR; default ./bundles)", NULL, {0}, 0},
        {"gd", "DIR", 0, 0, "short for --golden-data-dir", NULL, {0}, 0},
        {"tier", "TIER", 0, 0, "quick (default), standard, comprehensive or full (cascade)", NULL, {0}, 0},
        {"engine", "E", 0, 0, "engine to calibrate: cpu (default), cpu:NAME, hip[:NAME] or plugin:PATH[:NAME]", NULL, {0}, 0},
        {"expect-plugin", "PATH", 0, 1, "a plugin that must load: failing to is an error (also NMO_EXPECT_PLUGINS)", NULL, {0}, 0},
        {"runs", "N", 0, 0, "runs per bundle (default 100)", NULL, {0}, 0},
        {"filter", "GLOB", 0, 0, "calibrate tests matching POS[:POS...][-NEG[:NEG...]]", NULL, {0}, 0},
        {"shard", "I/N", 0, 0, "only shard I of N (1 <= I <= N, after the filter)", NULL, {0}, 0},
        {"dry-run", NULL, 0, 0, "print the calibrated values, write nothing", NULL, {0}, 0},
        {"strict", NULL, 0, 0, "exit 1 when a case is skipped", NULL, {0}, 0},
    };
    cli_cmd cmd = {
        .verb = "calibrate",
        .summary = "Run an engine N times per bundle and write the empirical p99.9 tolerance and its\n"
                   "calibration block into each bundle's .meta.json (RFC 0011 calibration tool).",
        .usage = "calibrate [--golden-data-dir DIR] [--tier TIER] [--engine E] [--runs N] [options]",
        .opts = opts,
        .nopts = (int)(sizeof opts / sizeof opts[0]),
    };
    int rc = cli_parse(&cmd, argc, argv);
    if (rc) return rc < 0 ? 0 : rc;
    const char *root = cli_data_dir(&cmd);
    const char *tier_s = cli_val(&cmd, "tier") ? cli_val(&cmd, "tier") : "quick";
    int tier = nmo_tier_parse(tier_s);
    if (tier < 0) return cli_error("bad --tier '%s': expected quick, standard, comprehensive or full", tier_s);
    cal_run R = {.runs = 100, .dry = cli_val(&cmd, "dry-run") != NULL, .host = "unknown"};
    const char *rs = cli_val(&cmd, "runs");
    if (rs) {
        char *end;
        R.runs = strtol(rs, &end, 10);
        if (!*rs || *end || R.runs < 1 || R.runs > 100000)
            return cli_error("bad --runs '%s': expected an integer from 1 to 100000", rs);
    }
    int sh_i, sh_n;
    if ((rc = cli_parse_shard(&sh_i, &sh_n, cli_val(&cmd, "shard")))) return rc;
    cli_eut eng;
    cli_opt *eo = cli_get(&cmd, "expect-plugin");
    if ((rc = cli_engine_spec(&eng, cli_val(&cmd, "engine"), (const char *const *)eo->vals, eo->nvals))) return rc;
    R.eng = &eng;
    nmo_disc d;
    nmo_err err;
    if (nmo_discover(&d, root, tier, 0, cli_stderr_diag, NULL, &err) != NMO_OK) {
        cli_engine_release(&eng);
        return cli_error("%s", err.msg);
    }
    gethostname(R.host, sizeof R.host);
    nmo_bundle_timestamp(R.ts, sizeof R.ts);
    int n[3] = {0, 0, 0}, nf = 0;
    for (int i = 0; i < d.n; i++) {
        if (!nmo_filter_match(cli_val(&cmd, "filter"), d.cases[i].name)) continue;
        if (nf++ % sh_n != sh_i) continue;
        n[calibrate_one(&R, &d, i)]++;
    }
    printf("%d calibrated, %d failed, %d skipped\n", n[CAL_DONE], n[CAL_FAIL], n[CAL_SKIP]);
    nmo_disc_free(&d);
    cli_engine_release(&eng);
    return n[CAL_FAIL] || (n[CAL_SKIP] && cli_val(&cmd, "strict")) ? 1 : 0;
}
