/* numoracle: the static tolerance chain (DESIGN §7, RFC 0011 "Tolerance Framework").
 *
 * |actual - expected| <= atol + rtol |expected|, with (atol, rtol) from the first level
 * that has them:
 *   1. override: a per-engine entry of the run configuration whose glob matches the test;
 *   2. bundle: the .meta.json "tolerance" block ({"absolute", "relative"}; numoracle
 *      golden writes the certified envelope, numoracle calibrate an empirical p99.9);
 *   3. default: the per-operator, per-dtype table below.
 * The table follows hipDNN's fixed test tolerances (TestTolerances.hpp in
 * rocm-libraries/projects/hipdnn/test_sdk, where one number serves as both atol and
 * rtol: CpuFpReferenceValidation<T>(tol, tol)); operators hipDNN has no entry for take
 * the closest family, and formats it has no figure for are marked as numoracle's own. */
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nmo_internal.h"

const char *nmo_tol_level_name(nmo_tol_level l)
{
    switch (l) {
    case NMO_TOL_OVERRIDE: return "override";
    case NMO_TOL_BUNDLE: return "bundle";
    case NMO_TOL_DEFAULT: return "default";
    }
    return "?";
}

/* One row per operator family: globs over operator names (':'-separated), then
 * atol = rtol for fp64, fp32, fp16, bf16, and the source of the figures. */
typedef struct {
    const char *globs;
    const char *family;
    double fp64, fp32, fp16, bf16;
    const char *source;
} tol_row;

static const tol_row tol_table[] = {
    {"matmul*:*gemm*:linear*:bmm*", "matmul", 1e-7, 1e-5, 1e-2, 1e-2,
     "hipDNN TestTolerances.hpp matmul::getTolerance (fp64: pointwise's 1e-7)"},
    {"conv*", "conv", 1e-7, 1e-5, 1e-1, 1e-1,
     "hipDNN TestTolerances.hpp conv::getToleranceFwd (absolute figure)"},
    {"batch_norm*_bwd:batchnorm*_bwd", "batchnorm backward", 1e-7, 2e-3, 4e-4, 3e-3,
     "hipDNN TestTolerances.hpp batchnorm::getToleranceBackward"},
    /* batchnorm*: the registry's operator is batchnorm_inference (RFC 0011's example
     * "batchnorm inference fp32 = 2e-4"); batch_norm* kept for graph-style names */
    {"batch_norm*:batchnorm*", "batchnorm", 1e-7, 2e-4, 5e-4, 5e-3,
     "hipDNN TestTolerances.hpp batchnorm::getToleranceInference"},
    {"layer_norm*:rms_norm*:group_norm*:instance_norm*:*_norm*", "layernorm", 1e-5, 1e-4, 1e-3, 1e-2,
     "hipDNN TestTolerances.hpp layernorm::getTolerance (rmsnorm's own 4e-3/8e-3 is a relative "
     "RMS-error figure, not elementwise)"},
    {"softmax*:log_softmax*:*attention*:sdpa*:*reduce*:*sum*:*mean*:cross_entropy*:*logsumexp*", "reduction", 1e-7,
     1e-5, 1e-2, 5e-2, "hipDNN TestTolerances.hpp reduction::getTolerance (fp64: pointwise's 1e-7)"},
    {"*", "pointwise", 1e-7, 1e-5, 1e-3, 1e-2, "hipDNN TestTolerances.hpp pointwise::getTolerance"},
};

static int match_globs(const char *globs, const char *name)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", globs);
    for (char *save = NULL, *p = strtok_r(buf, ":", &save); p; p = strtok_r(NULL, ":", &save))
        if (fnmatch(p, name, 0) == 0) return 1;
    return 0;
}

static const tol_row *tol_row_of(const nmo_op *op)
{
    const char *name = op ? op->name : "";
    for (size_t i = 0; i < sizeof tol_table / sizeof tol_table[0]; i++)
        if (match_globs(tol_table[i].globs, name)) return &tol_table[i];
    return &tol_table[sizeof tol_table / sizeof tol_table[0] - 1];
}

/* The one copy of the hipDNN table for the campaign's "hipdnn" baseline too
 * (apps/campaign/checks.c): formats without a hipDNN figure give NAN there. */
const char *nmo__tol_hipdnn(const nmo_op *op, nmo_fmt out, double *tol)
{
    const tol_row *r = tol_row_of(op);
    switch (out) {
    case NMO_FP64: *tol = r->fp64; break;
    case NMO_FP32: *tol = r->fp32; break;
    case NMO_FP16: *tol = r->fp16; break;
    case NMO_BF16: *tol = r->bf16; break;
    default: *tol = NAN; break;
    }
    return r->family;
}

void nmo_tol_default(nmo_tol *t, const nmo_op *op, nmo_fmt out)
{
    const tol_row *r = tol_row_of(op);
    t->level = NMO_TOL_DEFAULT;
    double v;
    const char *own = NULL;
    switch (out) {
    case NMO_FP64: v = r->fp64; break;
    case NMO_FP32: v = r->fp32; break;
    case NMO_FP16: v = r->fp16; break;
    case NMO_BF16: v = r->bf16; break;
    case NMO_TF32: v = r->fp16; own = "tf32 (10-bit mantissa like fp16): the fp16 figure"; break;
    default:
        /* hipDNN has no fp8 figure: two ulps at 1.0 of the format (2 * 2^-mbits) */
        v = ldexp(2.0, -nmo_fmt_get(out)->mbits);
        own = "numoracle: 2 ulps at 1.0 of the fp8 format (hipDNN has no fp8 figure)";
        break;
    }
    t->atol = t->rtol = v;
    if (own) snprintf(t->source, sizeof t->source, "%s table, %s", r->family, own);
    else snprintf(t->source, sizeof t->source, "%s table, %s: %s", r->family, nmo_fmt_name(out), r->source);
}

nmo_status nmo_tol_from_meta(nmo_tol *t, int *found, const cJSON *meta, const char *meta_path, nmo_err *err)
{
    *found = 0;
    const cJSON *tb = meta ? cJSON_GetObjectItemCaseSensitive(meta, "tolerance") : NULL;
    if (!tb || cJSON_IsNull(tb)) return NMO_OK;
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(tb, "absolute");
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(tb, "relative");
    if (!cJSON_IsObject(tb) || (!a && !r))
        return nmo_err_set(err, NMO_ERR_DATA, "%s: tolerance needs \"absolute\" and/or \"relative\"", meta_path);
    double av = 0, rv = 0;
    if (a && (!cJSON_IsNumber(a) || !(a->valuedouble >= 0) || isinf(a->valuedouble)))
        return nmo_err_set(err, NMO_ERR_DATA, "%s: tolerance.absolute must be a finite number >= 0", meta_path);
    if (r && (!cJSON_IsNumber(r) || !(r->valuedouble >= 0) || isinf(r->valuedouble)))
        return nmo_err_set(err, NMO_ERR_DATA, "%s: tolerance.relative must be a finite number >= 0", meta_path);
    if (a) av = a->valuedouble;
    if (r) rv = r->valuedouble;
    t->atol = av;
    t->rtol = rv;
    t->level = NMO_TOL_BUNDLE;
    const cJSON *cal = cJSON_GetObjectItemCaseSensitive(tb, "calibration");
    const cJSON *m = cJSON_IsObject(cal) ? cJSON_GetObjectItemCaseSensitive(cal, "method") : NULL;
    snprintf(t->source, sizeof t->source, "%s tolerance%s%s%s", meta_path, cJSON_IsString(m) ? " (" : "",
             cJSON_IsString(m) ? m->valuestring : "", cJSON_IsString(m) ? ")" : "");
    *found = 1;
    return NMO_OK;
}

nmo_status nmo_tol_resolve(nmo_tol *t, const nmo_tol *override, const nmo_bundle *b, nmo_err *err)
{
    if (override) {
        *t = *override;
        t->level = NMO_TOL_OVERRIDE;
        return NMO_OK;
    }
    int found = 0;
    NMO_RETURN_IF_ERR(nmo_tol_from_meta(t, &found, b->meta, b->meta_path, err));
    if (found) return NMO_OK;
    nmo_tol_default(t, b->g.op, b->c.plan.out);
    return NMO_OK;
}

void nmo_tol_compare(nmo_tol_result *r, const nmo_tol *t, const nmo_tensor *expected, const nmo_tensor *actual)
{
    memset(r, 0, sizeof *r);
    r->n = nmo_tensor_numel(expected);
    r->worst = -1;
    double worst_excess = -INFINITY;
    for (int64_t i = 0; i < r->n; i++) {
        double e = nmo_tensor_get(expected, i), c = nmo_tensor_get(actual, i);
        double d = fabs(c - e); /* NaN when c is NaN: never within tolerance */
        double lim = t->atol + t->rtol * fabs(e);
        int ok = d <= lim;
        if (!ok) r->n_mismatch++;
        if (d > r->max_abs || d != d) r->max_abs = d != d ? INFINITY : fmax(r->max_abs, d);
        if (e != 0 && d == d) r->max_rel = fmax(r->max_rel, d / fabs(e));
        double excess = d != d ? INFINITY : d - lim;
        if (r->worst < 0 || excess > worst_excess) {
            worst_excess = excess;
            r->worst = i;
            r->worst_expected = e;
            r->worst_actual = c;
        }
    }
    r->verdict = r->n_mismatch ? NMO_FAIL : NMO_PASS;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double nmo_quantile(double *v, int64_t n, double q)
{
    if (n <= 0) return NAN;
    qsort(v, (size_t)n, sizeof(double), cmp_dbl);
    int64_t k = (int64_t)ceil(q * (double)n) - 1; /* nearest rank */
    if (k < 0) k = 0;
    if (k >= n) k = n - 1;
    return v[k];
}
