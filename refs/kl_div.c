/* kl_div (PyTorch semantics, F.kl_div(input, target)): per element
 *   log_target = 0:  l = target * (log(target) - input)   (0 where target == 0)
 *   log_target = 1:  l = exp(target) * (target - input)
 * input holds log-probabilities. reduction 0 none ([M,N]), 1 mean (sum / numel),
 * 2 sum, 3 batchmean (sum / shape[0], the default; PyTorch divides by input.size(0)).
 *
 * Inputs: input and target are NMO_ROLE_DERIVED: input = log_softmax(z_input) and target
 * = softmax(z_target) (log_softmax when log_target = 1) per row, computed exactly and
 * rounded RNE into the storage dtype; z_input and z_target follow the input family and
 * are not read by the operator. Given as files, input and target are used as is.
 *
 * Rounding points (compute, RNE, unless said otherwise):
 *   log_target = 0 (hull):
 *     Liger:   RN(t * RN(RN(log t) - x))                           (log: fn ulps)
 *     PyTorch: xlogy(t, t) - t*x = RN(t*RN(log t)) - RN(t*x), either product fused
 *   log_target = 1: RN(RN(exp t) * RN(t - x)) (PyTorch and Liger both factor it; the
 *     expanded e*t - e*x, with an FMA, would be nonzero where t == x: not covered)
 *   t == 0 exactly: 0 (both). Reductions: sum over all elements in any order (acc), then
 *   / numel or / shape[0] as x/n or x*RN(1/n); store into `out` (checker: plan round).
 * Unfused plan (inter != compute): PyTorch eager, whose torch.kl_div is composed of
 * elementwise kernels, each storing its result in the tensor dtype (inter), then a sum
 * kernel and, for batchmean, F.kl_div's `reduced / input.size(0)`:
 *   log_target = 0:  l = RN_i(RN_i(RN(t*RN(log t))) - RN_i(RN(t*x)))   (xlogy; t*x; -)
 *   log_target = 1:  l = RN_i(RN(RN_i(RN(exp t)) * RN_i(RN(t - x))))
 *   none: l (stored); mean: sum/numel in one kernel; sum: the sum; batchmean:
 *   RN_i(sum) / shape[0] (x/n or x*RN(1/n)). Liger's fused form is not an eager one.
 * (H200, PyTorch 2.11, batchmean, 8x1001 and 2x8192, every family, bf16 and fp16: all 22
 * scalar outputs reproduced; the fused forms give 0.0 where eager gives -0.00206, etc.)
 * Not covered: Liger's `target > eps (1e-10)` cut-off (it drops elements with tiny
 * targets: a different definition), per-row partial sums stored in a narrower format. */
#include "smx_ref.h"

#define KL_P_RED 0
#define KL_P_LOGT 1

/* Not static: the fast engine calls the certified build of it (term escalation).
 * inter: the unfused plan's format, or NMO_FMT_COUNT for a fused plan. */
void NMO_REF(nmo_ref_kl_term)(E_CTX *ctx, E *r, double t, double x, int logt, nmo_fmt inter);
NMO_FAST_ONLY(void NMO_REF_CERT(nmo_ref_kl_term)(nmo_cctx *ctx, nmo_cenc *r, double t, double x, int logt,
                                                 nmo_fmt inter);)

void NMO_REF(nmo_ref_kl_term)(E_CTX *ctx, E *r, double t, double x, int logt, nmo_fmt inter)
{
    E te, xe, a, b, q;
    enc_init(ctx, &te), enc_init(ctx, &xe), enc_init(ctx, &a), enc_init(ctx, &b), enc_init(ctx, &q);
    enc_set_d(ctx, &te, t);
    enc_set_d(ctx, &xe, x);
    if (inter != NMO_FMT_COUNT) { /* PyTorch eager: each kernel stores in inter */
        if (!logt && t == 0) {
            enc_const(ctx, r, 0.0); /* xlogy(0, 0) = 0, 0 * x = 0 */
        } else if (!logt) {
            enc_log(ctx, &a, &te);
            enc_mul(ctx, &a, &te, &a); /* xlogy(t, t) */
            enc_round(ctx, &a, &a, inter, NMO_RNE, 0);
            enc_mul(ctx, &b, &te, &xe); /* t * input */
            enc_round(ctx, &b, &b, inter, NMO_RNE, 0);
            enc_sub(ctx, r, &a, &b);
            enc_round(ctx, r, r, inter, NMO_RNE, 0);
        } else {
            enc_exp(ctx, &a, &te);
            enc_round(ctx, &a, &a, inter, NMO_RNE, 0);
            enc_sub(ctx, &b, &te, &xe);
            enc_round(ctx, &b, &b, inter, NMO_RNE, 0);
            enc_mul(ctx, r, &a, &b);
            enc_round(ctx, r, r, inter, NMO_RNE, 0);
        }
    } else if (!logt) {
        if (t == 0) {
            enc_const(ctx, r, 0.0);
        } else {
            enc_log(ctx, &a, &te);           /* log t */
            enc_sub(ctx, &b, &a, &xe);
            enc_mul(ctx, r, &te, &b);        /* Liger */
            enc_mul(ctx, &q, &te, &xe);
            enc_neg(ctx, &q, &q);
            enc_fma(ctx, &b, &te, &a, &q);   /* t*log t - RN(t x) */
            enc_hull(ctx, r, r, &b);
            enc_mul(ctx, &q, &te, &a);
            enc_neg(ctx, &b, &te);
            enc_fma(ctx, &b, &b, &xe, &q);   /* -t*x + RN(t log t) */
            enc_hull(ctx, r, r, &b);
        }
    } else {
        enc_exp(ctx, &a, &te);               /* exp(t) * (t - x): PyTorch and Liger */
        enc_sub(ctx, &b, &te, &xe);
        enc_mul(ctx, r, &a, &b);
    }
    enc_clear(ctx, &te), enc_clear(ctx, &xe), enc_clear(ctx, &a), enc_clear(ctx, &b), enc_clear(ctx, &q);
}

void NMO_REF(nmo_ref_kl_div_eval)(E_CTX *ctx, const nmo_case *c, int64_t u, nmo_fenc **out)
{
    int red = (int)c->param[KL_P_RED], logt = c->param[KL_P_LOGT] != 0;
    int64_t n = c->shape[c->nshape - 1];
    int64_t total = nmo_tensor_numel(&c->in[0]);
    int64_t beg = red == 0 ? u * n : 0, cnt = red == 0 ? n : total;
    double *x = enc_dvec(ctx, 0, cnt), *t = enc_dvec(ctx, 1, cnt);
    nmo_tensor_load_f64(x, &c->in[0], beg, cnt, 1);
    nmo_tensor_load_f64(t, &c->in[1], beg, cnt, 1);
    E *terms = enc_evec(ctx, 0, cnt);
    int unfused = c->plan.inter != c->plan.compute;
    nmo_fmt inter = unfused ? c->plan.inter : NMO_FMT_COUNT;
    for (int64_t j = 0; j < cnt; j++) {
        NMO_REF(nmo_ref_kl_term)(ctx, &terms[j], t[j], x[j], logt, inter);
        NMO_FAST_ONLY({ /* term escalation (enc_fast.h): only when the terms are reduced */
            nmo_cctx *cc = red ? nmo_fctx_term_cert(ctx, terms[j].flags) : NULL;
            if (cc) {
                nmo_cenc ct;
                nmo_cenc_init(cc, &ct);
                NMO_REF_CERT(nmo_ref_kl_term)(cc, &ct, t[j], x[j], logt, inter);
                nmo_cenc_export(cc, &terms[j], &ct);
                nmo_cenc_clear(cc, &ct);
            }
        })
    }
    if (red == 0) {
        for (int64_t j = 0; j < n; j++) enc_export(ctx, &out[0][j], &terms[j]);
        return;
    }
    E s;
    enc_init(ctx, &s);
    enc_sum_sharp(ctx, &s, terms, total);
    if (red == 1) enc_div_si(ctx, &s, &s, total);
    if (red == 3 && unfused) enc_round(ctx, &s, &s, c->plan.inter, NMO_RNE, 0); /* the sum, stored */
    if (red == 3) enc_div_si(ctx, &s, &s, c->shape[0]);
    enc_export(ctx, &out[0][0], &s);
    enc_clear(ctx, &s);
}

#ifdef NMO_ENGINE_FAST
#include "refs/ref_common.h"

void NMO_REF_CERT(nmo_ref_kl_div_eval)(nmo_cctx *ctx, const nmo_case *c, int64_t u, nmo_fenc **out);

/* dst row i = softmax (log = 0) or log_softmax (log = 1) of src row i, in long double,
 * stored RNE in dst's dtype. Shared with refs/jsd.c. */
void nmo_ref_sf_derive_rows(nmo_tensor *dst, const nmo_tensor *src, int64_t n, int log);
void nmo_ref_sf_derive_rows(nmo_tensor *dst, const nmo_tensor *src, int64_t n, int log)
{
    int64_t rows = nmo_tensor_numel(src) / n;
    for (int64_t i = 0; i < rows; i++) {
        long double m = -INFINITY, s = 0;
        for (int64_t j = 0; j < n; j++) {
            long double v = nmo_tensor_get(src, i * n + j);
            if (v > m) m = v;
        }
        for (int64_t j = 0; j < n; j++) s += expl((long double)nmo_tensor_get(src, i * n + j) - m);
        long double ls = logl(s);
        for (int64_t j = 0; j < n; j++) {
            long double d = (long double)nmo_tensor_get(src, i * n + j) - m;
            nmo_tensor_set(dst, i * n + j, (double)(log ? d - ls : expl(d) / s));
        }
    }
}

static void kl_div_derive(nmo_case *c)
{
    int64_t n = c->shape[c->nshape - 1];
    nmo_ref_sf_derive_rows(&c->in[0], &c->in[2], n, 1);
    nmo_ref_sf_derive_rows(&c->in[1], &c->in[3], n, c->param[KL_P_LOGT] != 0);
}

static nmo_status kl_div_setup(nmo_case *c, nmo_err *err)
{
    int64_t rows, n, one = 1;
    double red = c->param[KL_P_RED], lt = c->param[KL_P_LOGT];
    if (red != 0 && red != 1 && red != 2 && red != 3)
        return nmo_err_set(err, NMO_ERR_USAGE,
                           "kl_div: reduction must be 0 (none), 1 (mean), 2 (sum) or 3 (batchmean)");
    if (lt != 0 && lt != 1) return nmo_err_set(err, NMO_ERR_USAGE, "kl_div: log_target must be 0 or 1");
    NMO_RETURN_IF_ERR(nmo_ref_rows_shape(c, &rows, &n, err));
    for (int k = 0; k < 4; k++)
        NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[k], c->plan.in, c->nshape, c->shape, err));
    if (red == 0) return nmo_ref_tensor(&c->out[0], c->plan.out, c->nshape, c->shape, err);
    return nmo_ref_tensor(&c->out[0], c->plan.out, 1, &one, err);
}

static int64_t kl_div_units(const nmo_case *c)
{
    return c->param[KL_P_RED] == 0 ? nmo_ref_units_rows(c) : 1;
}

static void kl_div_span(const nmo_case *c, int64_t u, int k, int64_t *begin, int64_t *count,
                        int64_t *stride)
{
    if (c->param[KL_P_RED] == 0) {
        nmo_ref_unit_span_rows(c, u, k, begin, count, stride);
        return;
    }
    *begin = 0;
    *count = 1;
    *stride = 1;
}

const nmo_op nmo_op_kl_div = {
    .name = "kl_div",
    .summary = "KL divergence loss, PyTorch semantics: target * (log target - input)",
    .shape_doc = "MxN (or ...xN): rows of N log-probabilities",
    .rounding_doc = "t*RN(log t - x) | RN(t*log t) - RN(t*x) (either fused); log_target: "
                    "exp(t)*RN(t-x); sum any order; /numel | /shape[0]; inter != compute: "
                    "PyTorch eager, every kernel's result in inter",
    .n_in = 4,
    .in = {{"input", NMO_ROLE_DERIVED, "log-probabilities [..., N] (derived: log_softmax(z_input))"},
           {"target", NMO_ROLE_DERIVED,
            "probabilities [..., N] (derived: softmax(z_target); log_softmax if log_target)"},
           {"z_input", NMO_ROLE_DATA, "logits the input is derived from (not read)", NMO_IN_SOURCE},
           {"z_target", NMO_ROLE_DATA, "logits the target is derived from (not read)", NMO_IN_SOURCE}},
    .n_out = 1,
    .out = {{"loss", NMO_ROLE_DATA, "loss: [..., N] (reduction 0) or [1]"}},
    .n_param = 2,
    .param = {{"reduction", 3, "0 none, 1 mean (/numel), 2 sum, 3 batchmean (/shape[0])"},
              {"log_target", 0, "1: target holds log-probabilities"}},
    .dtypes = "fp32 bf16 fp16",
    .test_shapes = "3x1025;8x64",
    .test_shapes_large = "3x4097;8x64",
    /* sum= narrows the sharpened sums' k u A term (nmo_plan_red_k); their dominant-term bound holds in every order */
    .plan_fields = NMO_PF_COMPUTE | NMO_PF_ACC | NMO_PF_FN | NMO_PF_INTER | NMO_PF_SUM_GEOM,
    .plan_vacuous = 0,
    .setup = kl_div_setup,
    .row_len = nmo_ref_row_len_last,
    .units = kl_div_units,
    .unit_span = kl_div_span,
    .derive = kl_div_derive,
    .eval_fast = NMO_REF_FAST(nmo_ref_kl_div_eval),
    .eval_cert = NMO_REF_CERT(nmo_ref_kl_div_eval),
};
#endif
