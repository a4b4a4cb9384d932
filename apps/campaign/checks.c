/* numoracle campaign: baseline checks (see checks.h).
 *
 * Sources of each rule (read in the projects' code; no code copied):
 *  - torch: torch.testing.assert_close defaults (rtol, atol): fp32 (1.3e-6, 1e-5), bf16
 *    (1.6e-2, 1e-5), fp16 (1e-3, 1e-5), fp64 (1e-7, 1e-7); isclose semantics
 *    |a-e| <= atol + rtol|e|, equal infinities close, NaN never close (equal_nan=False);
 *    compared in float64.
 *  - vllm: torch.testing.assert_close(out, ref, atol=1e-2, rtol=1e-2), the flat rule of
 *    vLLM's kernel tests.
 *  - hipdnn: hipdnn_test_sdk/utilities/TestTolerances.hpp, per operation namespace and
 *    dtype (the library's default tolerance table, oracle/tolerance.c); used as CpuFpReferenceValidation(tol, tol).allClose: NaN/Inf must agree in
 *    kind (both non-finite passes), else |a-e| <= tol + tol|e|.
 *  - te: TransformerEngine tests/cpp/test_common.cu compareResults: an element
 *    mismatches when |t-r| > atol AND (r == 0 OR |(t-r)/r| > rtol), and for non-fp32
 *    outputs a mismatch where rounding the mean (t+r)/2 nudged by 1e-6 up and down gives
 *    exactly min(t,r) and max(t,r) is forgiven (a rounding tie); getTolerances (atol,
 *    rtol): fp32 (1e-6, 5e-6), fp16 (1e-5, 1e-3), bf16 (1e-5, 1e-2). NaN compares false,
 *    so a NaN candidate passes this rule (reproduced as written).
 *  - higham: hipdnn_test_sdk DynamicTolerances.hpp style: gamma_k from computeGamma
 *    (machine epsilon of compute); matmul: gamma_K ||A||_inf ||B||_inf + eps_out
 *    ||A|| ||B||; norms (LayerNorm/RMSNorm derivation): gamma/2 max|w| + 5 eps max|w| +
 *    eps max|b| + eps_out (max|w| + max|b|); other operators (our extension in the same
 *    style): (gamma_n + 8 eps) max|ref| + eps_out max|ref|, n the reduction row length.
 *    Used as allClose(tol, tol).
 *  - p999: hipDNN RFC 0011 "empirical_p99.9": absolute = p99.9 of |a-e| over all
 *    elements and calibration runs, relative = p99.9 of |a-e|/|e|; allClose(abs, rel). */
#include "campaign/checks.h"
#include "nmo_internal.h" /* nmo__tol_hipdnn: the hipDNN table (oracle/tolerance.c) */

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const ck_names[NMO_CK_COUNT] = {"numoracle", "torch", "vllm", "hipdnn",
                                                   "te", "higham", "p999"};
static const char *const ck_labels[NMO_CK_COUNT] = {
    "numoracle", "torch assert_close", "vLLM 1e-2", "hipDNN fixed", "TransformerEngine",
    "Higham dynamic", "calibrated p99.9"};
static const char *const ck_rules[NMO_CK_COUNT] = {
    "certified reachable sets of the plan; FAIL if any element outside, INCONCLUSIVE never passes",
    "|a-e| <= atol + rtol|e|; fp32 1e-5/1.3e-6, bf16 1e-5/1.6e-2, fp16 1e-5/1e-3 (atol/rtol)",
    "|a-e| <= 1e-2 + 1e-2|e| (torch semantics)",
    "allClose(tol, tol), tol from TestTolerances.hpp per operation and dtype",
    "mismatch iff |a-e| > atol and |a-e|/|e| > rtol (rounding ties forgiven); fp32 1e-6/5e-6, bf16 1e-5/1e-2, fp16 1e-5/1e-3",
    "allClose(tol, tol), tol = gamma_n(u) * sum|terms| per tensor (DynamicTolerances style)",
    "allClose(p99.9 |a-e|, p99.9 |a-e|/|e|) calibrated on correct variants, calibration seeds, main families",
};

const char *nmo_ck_name(nmo_ck c) { return (unsigned)c < NMO_CK_COUNT ? ck_names[c] : "?"; }
const char *nmo_ck_label(nmo_ck c) { return (unsigned)c < NMO_CK_COUNT ? ck_labels[c] : "?"; }
const char *nmo_ck_rule(nmo_ck c) { return (unsigned)c < NMO_CK_COUNT ? ck_rules[c] : "?"; }

int nmo_ck_from_name(const char *name)
{
    for (int i = 0; i < NMO_CK_COUNT; i++)
        if (name && strcmp(name, ck_names[i]) == 0) return i;
    return -1;
}

double nmo_ck_eps(nmo_fmt f)
{
    const nmo_fmt_info *fi = nmo_fmt_get(f);
    return fi ? ldexp(1.0, 1 - fi->prec) : 0x1p-23;
}

double nmo_ck_gamma(uint64_t k, double eps)
{
    double nu = 2.0 * (double)k * eps;
    if (nu < 0.01) return nu / (1.0 - nu);
    return 6.0 * sqrt(2.0 * (double)k) * eps;
}

/* ---- operator categories (by name; operators come from the registry) ---------------- */

static int has(const char *s, const char *sub) { return strstr(s, sub) != NULL; }

static int is_matmul(const char *op)
{
    return has(op, "matmul") || has(op, "gemm") || has(op, "linear") || has(op, "bmm");
}

static int is_norm_fwd(const char *op)
{
    return (has(op, "norm")) && !has(op, "bwd") && !has(op, "backward") && !has(op, "grad");
}


/* max over rows (all dims but the last) of sum |x| along the last dim */
static double inf_norm(const nmo_tensor *t)
{
    int64_t n = nmo_tensor_numel(t), cols = t->dims[t->ndims - 1];
    double best = 0, row = 0;
    for (int64_t i = 0; i < n; i++) {
        row += fabs(nmo_tensor_get(t, i));
        if ((i + 1) % cols == 0) {
            if (row > best) best = row;
            row = 0;
        }
    }
    return best;
}

static double max_abs_tensor(const nmo_tensor *t)
{
    int64_t n = nmo_tensor_numel(t);
    double m = 0;
    for (int64_t i = 0; i < n; i++) {
        double v = fabs(nmo_tensor_get(t, i));
        if (v > m && isfinite(v)) m = v;
    }
    return m;
}

void nmo_ck_setup(nmo_ck_tensor *t, const nmo_case *c, int k, const double *ref, const double *p999)
{
    memset(t, 0, sizeof *t);
    const char *op = c->op->name;
    t->out = c->plan.out;
    t->compute = c->plan.compute;
    t->n = nmo_tensor_numel(&c->out[k]);
    t->ref = ref;
    switch (t->out) {
    case NMO_FP32: t->torch_rtol = 1.3e-6, t->torch_atol = 1e-5; break;
    case NMO_BF16: t->torch_rtol = 1.6e-2, t->torch_atol = 1e-5; break;
    case NMO_FP16: t->torch_rtol = 1e-3, t->torch_atol = 1e-5; break;
    case NMO_FP64: t->torch_rtol = 1e-7, t->torch_atol = 1e-7; break;
    default: t->torch_rtol = t->torch_atol = NAN; break;
    }
    /* hipDNN's fixed table: one copy, the library's default tolerance (oracle/tolerance.c) */
    t->hipdnn_cat = nmo__tol_hipdnn(c->op, t->out, &t->hipdnn_tol);
    switch (t->out) {
    case NMO_FP32: t->te_atol = 1e-6, t->te_rtol = 5e-6; break;
    case NMO_FP16: t->te_atol = 1e-5, t->te_rtol = 1e-3; break;
    case NMO_BF16: t->te_atol = 1e-5, t->te_rtol = 1e-2; break;
    case NMO_FP8_E4M3:
    case NMO_FP8_E5M2: t->te_atol = 1e-2, t->te_rtol = 1e-2; break;
    default: t->te_atol = t->te_rtol = NAN; break;
    }

    /* Higham-style dynamic tolerance */
    double ec = nmo_ck_eps(c->plan.compute), eo = nmo_ck_eps(c->plan.out);
    double cast = eo > ec ? eo : 0.0;
    int64_t rl = c->op->row_len ? c->op->row_len(c) : 1;
    if (rl < 1) rl = 1;
    if (is_matmul(op) && c->n_in >= 2 && c->in[0].ndims >= 2 && c->in[1].ndims >= 2) {
        int64_t K = c->in[0].dims[c->in[0].ndims - 1];
        double na = inf_norm(&c->in[0]), nb = inf_norm(&c->in[1]);
        t->higham_tol = nmo_ck_gamma((uint64_t)K, ec) * na * nb + cast * na * nb;
        t->higham_model = "matmul: gamma_K ||A||inf ||B||inf (+ eps_out ||A|| ||B||)";
    } else if (is_norm_fwd(op)) {
        int layer = has(op, "layer");
        double S = 0, B = 0;
        int haveS = 0;
        for (int i = 0; i < c->n_in; i++) {
            if (c->op->in[i].role == NMO_ROLE_WEIGHT) {
                double m = max_abs_tensor(&c->in[i]);
                S = m > S ? m : S;
                haveS = 1;
            }
            if (c->op->in[i].role == NMO_ROLE_BIAS) {
                double m = max_abs_tensor(&c->in[i]);
                B = m > B ? m : B;
            }
        }
        if (!haveS) S = 1;
        uint64_t nacc = (uint64_t)rl * (layer ? 2u : 1u);
        double g = nmo_ck_gamma(nacc, ec);
        t->higham_tol = g / 2 * S + 5 * ec * S + B * ec + cast * (S + B);
        t->higham_model = layer ? "layernorm: gamma_2M/2 max|w| + 5u max|w| + u max|b| + u_out (max|w|+max|b|)"
                                : "rmsnorm: gamma_M/2 max|w| + 5u max|w| + u_out max|w|";
    } else {
        double scale = 0;
        for (int64_t i = 0; i < t->n; i++)
            if (isfinite(ref[i]) && fabs(ref[i]) > scale) scale = fabs(ref[i]);
        t->higham_tol = (nmo_ck_gamma((uint64_t)rl, ec) + 8 * ec) * scale + cast * scale;
        t->higham_model = "generic: (gamma_n + 8u) max|ref| + u_out max|ref|, n = row length";
    }
    if (p999) {
        t->have_p999 = 1;
        t->p999_atol = p999[0];
        t->p999_rtol = p999[1];
    }
}

/* torch.isclose(a, e, rtol, atol, equal_nan=False) */
static int torch_close(double a, double e, double atol, double rtol)
{
    if (a == e) return 1;
    if (isnan(a) || isnan(e)) return 0;
    if (!isfinite(a) || !isfinite(e)) return 0;
    return fabs(a - e) <= atol + rtol * fabs(e);
}

/* hipDNN CpuFpReferenceValidation::allClose element rule */
static int hipdnn_close(double a, double e, double atol, double rtol)
{
    int bad_e = isnan(e) || isinf(e), bad_a = isnan(a) || isinf(a);
    if (bad_e != bad_a) return 0;
    if (bad_e && bad_a) return 1;
    return fabs(a - e) <= atol + rtol * fabs(e);
}

/* TransformerEngine compareResults element rule (t: test, r: reference) */
static int te_close(double t, double r, double atol, double rtol, nmo_fmt out)
{
    int mismatch = fabs(t - r) > atol && (r == 0 || fabs((t - r) / r) > rtol);
    if (!mismatch) return 1;
    if (out == NMO_FP32) return 0;
    double mean = (t + r) / 2;
    double mp = mean >= 0 ? mean * (1 + 1e-6) : mean * (1 - 1e-6);
    double mm = mean >= 0 ? mean * (1 - 1e-6) : mean * (1 + 1e-6);
    double cp = nmo_fmt_round(out, mp, NMO_RNE, 0), cm = nmo_fmt_round(out, mm, NMO_RNE, 0);
    double lo = t < r ? t : r, hi = t < r ? r : t;
    return cm == lo && cp == hi;
}

char nmo_ck_judge(const nmo_ck_tensor *t, nmo_ck c, const double *cand)
{
    double atol, rtol;
    int (*rule)(double, double, double, double) = NULL;
    switch (c) {
    case NMO_CK_TORCH: atol = t->torch_atol, rtol = t->torch_rtol, rule = torch_close; break;
    case NMO_CK_VLLM: atol = 1e-2, rtol = 1e-2, rule = torch_close; break;
    case NMO_CK_HIPDNN: atol = rtol = t->hipdnn_tol, rule = hipdnn_close; break;
    case NMO_CK_HIGHAM: atol = rtol = t->higham_tol, rule = hipdnn_close; break;
    case NMO_CK_P999:
        if (!t->have_p999) return '-';
        atol = t->p999_atol, rtol = t->p999_rtol, rule = hipdnn_close;
        break;
    case NMO_CK_TE:
        if (isnan(t->te_atol)) return '-';
        for (int64_t i = 0; i < t->n; i++)
            if (!te_close(cand[i], t->ref[i], t->te_atol, t->te_rtol, t->out)) return 'F';
        return 'P';
    default: return '-';
    }
    if (isnan(atol) || isnan(rtol)) return '-';
    for (int64_t i = 0; i < t->n; i++)
        if (!rule(cand[i], t->ref[i], atol, rtol)) return 'F';
    return 'P';
}

void nmo_ck_stats_of(nmo_ck_stats *st, const double *cand, const double *ref, int64_t n)
{
    st->max_abs = st->max_rel = st->min_eq_tol = 0;
    for (int64_t i = 0; i < n; i++) {
        double a = cand[i], e = ref[i];
        if (a == e || (isnan(a) && isnan(e))) continue;
        if (!isfinite(a) || !isfinite(e)) {
            st->max_abs = st->max_rel = st->min_eq_tol = INFINITY;
            continue;
        }
        double d = fabs(a - e);
        if (d > st->max_abs) st->max_abs = d;
        if (e != 0 && d / fabs(e) > st->max_rel) st->max_rel = d / fabs(e);
        double t = d / (1 + fabs(e));
        /* t + t|e| computed in double may round below d: step up until it covers */
        while (t + t * fabs(e) < d) t = nextafter(t, INFINITY);
        if (t > st->min_eq_tol) st->min_eq_tol = t;
    }
}

/* bins: 0 exact; for x > 0, 1 + (floor(64 log2 x) + 64*1100); +inf in the last bin */
#define HB_OFF (64 * 1100)
int nmo_ck_hbin(double x)
{
    if (!(x > 0)) return 0;
    if (!isfinite(x)) return 1 + HB_OFF + 64 * 1100;
    int e;
    double m = frexp(x, &e); /* x = m 2^e, m in [0.5, 1) */
    int sub = (int)floor(log2(m * 2) * NMO_CK_HBINS); /* 0..63 */
    if (sub > NMO_CK_HBINS - 1) sub = NMO_CK_HBINS - 1;
    if (sub < 0) sub = 0;
    return 1 + HB_OFF + (e - 1) * NMO_CK_HBINS + sub;
}

double nmo_ck_hbin_upper(int bin)
{
    if (bin <= 0) return 0;
    if (bin >= 1 + HB_OFF + 64 * 1100) return INFINITY;
    int b = bin - 1 - HB_OFF;
    return exp2((double)(b + 1) / NMO_CK_HBINS);
}
