/* layer_norm (forward): y[i,j] = (x[i,j] - mean_i) * rstd_i * w[j] + b[j],
 * mean_i = mean_j x[i,j], rstd_i = 1/sqrt(mean_j (x[i,j] - mean_i)^2 + eps).
 *
 * Rounding points (compute, RNE, unless said otherwise), two-pass statistics
 * (refs/norm_common.h, norm_two_pass):
 *   sum  = sum_j x_j         any order and tree, in `acc` (summation model)
 *   mean = sum / N           or sum * RN(1/N)                     (hull)
 *   d_j  = x_j - mean
 *   ss   = sum_j d_j^2       any order and tree, FMA or not, in `acc` (dot model)
 *   var  = ss / N            or ss * RN(1/N)
 *   rstd = rsqrt(var + eps)  plan accuracy, or RN(1/RN(sqrt))      (hull)
 *   y    = d * rstd * w + b  any association, last product FMA'd into +b or not;
 *          or (d / sqrt(var+eps)) * w + b; or the fused scale/shift form
 *          a = w*rstd, sh = b - mean*a, y = x*a + sh (FMA or not)  (hull of all)
 *   store y into `out`       (checker: plan round)
 * Covered: the two-pass kernels (Triton tutorial, Liger-Kernel, Apex-style two-pass).
 * Not covered: Welford's online mean/M2 (PyTorch's native CUDA kernel, Apex's
 * cuWelford), kernels that divide each x by N before summing, and E[x^2] - mean^2
 * (not a correct implementation: it cancels catastrophically on rows with a large
 * mean; a mutant here). */
#include "engine/ref.h"
#include "refs/norm_common.h"

void NMO_REF(nmo_ref_layer_norm_eval)(E_CTX *ctx, const nmo_case *c, int64_t u, nmo_fenc **out)
{
    int64_t n = c->in[1].dims[0];
    double *x = enc_dvec(ctx, 0, n);
    double *w = enc_dvec(ctx, 1, n);
    double *b = enc_dvec(ctx, 2, n);
    nmo_tensor_load_f64(x, &c->in[0], u * n, n, 1);
    nmo_tensor_load_f64(w, &c->in[1], 0, n, 1);
    nmo_tensor_load_f64(b, &c->in[2], 0, n, 1);
    E *xe = enc_evec(ctx, 0, n);
    E *d = enc_evec(ctx, 1, n);
    E mean, rstd, s, we, be, y;
    enc_init(ctx, &mean), enc_init(ctx, &rstd), enc_init(ctx, &s), enc_init(ctx, &we);
    enc_init(ctx, &be), enc_init(ctx, &y);
    norm_tmp t;
    norm_tmp_init(ctx, &t);

    norm_two_pass(ctx, x, xe, d, n, c->param[0], &mean, &rstd, &s);
    for (int64_t j = 0; j < n; j++) {
        enc_set_d(ctx, &we, w[j]);
        enc_set_d(ctx, &be, b[j]);
        norm_affine(ctx, &t, &y, &xe[j], &d[j], &mean, &rstd, &s, &we, &be);
        enc_export(ctx, &out[0][j], &y);
    }

    norm_tmp_clear(ctx, &t);
    enc_clear(ctx, &mean), enc_clear(ctx, &rstd), enc_clear(ctx, &s), enc_clear(ctx, &we);
    enc_clear(ctx, &be), enc_clear(ctx, &y);
}

/* Row u's statistics as nmo_ref_layer_norm_eval computes them: norm_two_pass (mean_only:
 * norm_mean, r and s not written). Scratch slots 0-1, as the evaluation. */
static void ln_row_stats(E_CTX *ctx, const nmo_case *c, int64_t u, int mean_only, E *m, E *r, E *sd)
{
    int64_t n = c->in[1].dims[0];
    double *x = enc_dvec(ctx, 0, n);
    nmo_tensor_load_f64(x, &c->in[0], u * n, n, 1);
    E *xe = enc_evec(ctx, 0, n), *d = enc_evec(ctx, 1, n);
    if (mean_only) norm_mean(ctx, x, xe, n, m);
    else norm_two_pass(ctx, x, xe, d, n, c->param[0], m, r, sd);
}

/* Row u's statistics as nmo_ref_layer_norm_eval computes them (norm_two_pass), exported:
 * the GPU tier takes a row's from the certified engine where its own closing of a row sum
 * is flagged (hip/gpu_oracle_rows_host.h). mean_only: the mean alone (norm_mean; rstd and
 * s are not written). Scratch slots 0-1, as the evaluation. */
void NMO_REF(nmo_ref_layer_norm_stats)(E_CTX *ctx, const nmo_case *c, int64_t u, int mean_only, nmo_fenc *mean,
                                       nmo_fenc *rstd, nmo_fenc *s);
void NMO_REF(nmo_ref_layer_norm_stats)(E_CTX *ctx, const nmo_case *c, int64_t u, int mean_only, nmo_fenc *mean,
                                       nmo_fenc *rstd, nmo_fenc *s)
{
    E m, r, sd;
    enc_init(ctx, &m), enc_init(ctx, &r), enc_init(ctx, &sd);
    ln_row_stats(ctx, c, u, mean_only, &m, &r, &sd);
    if (!mean_only) enc_export(ctx, rstd, &r), enc_export(ctx, s, &sd);
    enc_export(ctx, mean, &m);
    enc_clear(ctx, &m), enc_clear(ctx, &r), enc_clear(ctx, &sd);
}

/* Elements js[0..m) (increasing) of row u from the row's statistics mean, rstd, s (as
 * norm_two_pass computes them), out[i] for element js[i]: nmo_ref_layer_norm_eval's
 * formulas element by element (d_j = x_j - mean, norm_affine: each element from x_j,
 * w_j, b_j and the statistics alone), so out[i] is what that function writes for element
 * js[i] given the same statistics. Escalation of single elements
 * (nmo_ref_layer_norm_eval_unc_cert). Scratch slots 2-4. */
void NMO_REF(nmo_ref_layer_norm_elems)(E_CTX *ctx, const nmo_case *c, int64_t u, const E *mean, const E *rstd,
                                       const E *s, const int64_t *js, int64_t m, nmo_fenc *out);
void NMO_REF(nmo_ref_layer_norm_elems)(E_CTX *ctx, const nmo_case *c, int64_t u, const E *mean, const E *rstd,
                                       const E *s, const int64_t *js, int64_t m, nmo_fenc *out)
{
    int64_t n = c->in[1].dims[0];
    double *x = enc_dvec(ctx, 2, n), *w = enc_dvec(ctx, 3, n), *b = enc_dvec(ctx, 4, n);
    nmo_tensor_load_f64(x, &c->in[0], u * n, n, 1);
    nmo_tensor_load_f64(w, &c->in[1], 0, n, 1);
    nmo_tensor_load_f64(b, &c->in[2], 0, n, 1);
    E xe, d, we, be, y;
    enc_init(ctx, &xe), enc_init(ctx, &d), enc_init(ctx, &we), enc_init(ctx, &be), enc_init(ctx, &y);
    norm_tmp t;
    norm_tmp_init(ctx, &t);
    for (int64_t i = 0; i < m; i++) {
        int64_t j = js[i];
        enc_set_d(ctx, &xe, x[j]);
        enc_sub(ctx, &d, &xe, mean); /* norm_two_pass's d_j */
        enc_set_d(ctx, &we, w[j]);
        enc_set_d(ctx, &be, b[j]);
        norm_affine(ctx, &t, &y, &xe, &d, mean, rstd, s, &we, &be);
        enc_export(ctx, &out[i], &y);
    }
    norm_tmp_clear(ctx, &t);
    enc_clear(ctx, &xe), enc_clear(ctx, &d), enc_clear(ctx, &we), enc_clear(ctx, &be), enc_clear(ctx, &y);
}

#ifdef NMO_ENGINE_CERT
void nmo_ref_layer_norm_elems_fast(struct nmo_fctx *ctx, const nmo_case *c, int64_t u, const nmo_fenc *mean,
                                   const nmo_fenc *rstd, const nmo_fenc *s, const int64_t *js, int64_t m,
                                   nmo_fenc *out);
void nmo_ref_layer_norm_eval_unc_cert(struct nmo_fctx *fc, nmo_cctx *ctx, const nmo_case *c, int64_t u,
                                      nmo_fenc **out);
void nmo_ref_layer_norm_stats_fast(struct nmo_fctx *ctx, const nmo_case *c, int64_t u, int mean_only, nmo_fenc *mean,
                                   nmo_fenc *rstd, nmo_fenc *s);

/* Escalation of row u's flagged elements only (op->eval_cert_unc_stat), as rms_norm's
 * (refs/rms_norm.c nmo_ref_rms_norm_eval_unc_cert, which says why it is the certified
 * row): the statistics by the fast engine where it decides them all (a decided snap is
 * the certified engine's value, flags and scale for the same operands: DESIGN section 5),
 * else by the certified engine (norm_two_pass), then each flagged element
 * by the fast formula from them where they are exactly the binary64 pairs they export
 * and the fast formula decides, else by the certified engine. A row escalated for a
 * flagged statistic (every element flagged) then costs one certified pass over the row
 * instead of the certified norm_affine of every element. */
void nmo_ref_layer_norm_eval_unc_cert(struct nmo_fctx *fc, nmo_cctx *ctx, const nmo_case *c, int64_t u,
                                      nmo_fenc **out)
{
    norm_unc q;
    int st = norm_unc_begin(&q, out[0], c->in[1].dims[0]);
    if (st == 0) return;
    if (st < 0) {
        nmo_ref_layer_norm_eval_cert(ctx, c, u, out);
        return;
    }
    E sc[3];
    for (int k = 0; k < 3; k++) enc_init(ctx, &sc[k]);
    nmo_fenc sf[3];
    int exact = fc != NULL;
    if (fc) { /* the fast engine's statistics: decided, they are the certified ones */
        nmo_ref_layer_norm_stats_fast(fc, c, u, 0, &sf[0], &sf[1], &sf[2]);
        for (int k = 0; k < 3; k++) exact &= sf[k].flags == 0 && isfinite(sf[k].lo) && isfinite(sf[k].hi);
    }
    if (exact) { /* an element was flagged, not a statistic: no certified pass over the row */
        for (int k = 0; k < 3; k++) nmo_cenc_set_fenc(ctx, &sc[k], &sf[k]);
    } else {
        ln_row_stats(ctx, c, u, 0, &sc[0], &sc[1], &sc[2]);
        exact = 1;
        for (int k = 0; k < 3; k++) {
            enc_export(ctx, &sf[k], &sc[k]);
            exact &= sf[k].flags == 0 && isfinite(sf[k].lo) && isfinite(sf[k].hi) &&
                     mpfr_cmp_d(sc[k].lo, sf[k].lo) == 0 && mpfr_cmp_d(sc[k].hi, sf[k].hi) == 0;
        }
    }
    if (fc && exact) {
        nmo_ref_layer_norm_elems_fast(fc, c, u, &sf[0], &sf[1], &sf[2], q.js, q.m, q.t);
        norm_unc_keep_fast(&q, out[0]);
    }
    if (q.m2 > 0) nmo_ref_layer_norm_elems_cert(ctx, c, u, &sc[0], &sc[1], &sc[2], q.js2, q.m2, q.t);
    norm_unc_end(&q, out[0]);
    for (int k = 0; k < 3; k++) enc_clear(ctx, &sc[k]);
}
#endif

#ifdef NMO_ENGINE_FAST
#include "refs/ref_common.h"

void NMO_REF_CERT(nmo_ref_layer_norm_eval)(nmo_cctx *ctx, const nmo_case *c, int64_t u, nmo_fenc **out);
void nmo_ref_layer_norm_eval_unc_cert(struct nmo_fctx *fc, nmo_cctx *ctx, const nmo_case *c, int64_t u,
                                      nmo_fenc **out);

static nmo_status layer_norm_setup(nmo_case *c, nmo_err *err)
{
    int64_t rows, n;
    NMO_RETURN_IF_ERR(nmo_ref_rows_shape(c, &rows, &n, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[0], c->plan.in, c->nshape, c->shape, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[1], c->plan.in, 1, &n, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[2], c->plan.in, 1, &n, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->out[0], c->plan.out, c->nshape, c->shape, err));
    return NMO_OK;
}

const nmo_op nmo_op_layer_norm = {
    .name = "layer_norm",
    .summary = "layer normalization over the last dim (two-pass statistics), times w plus b",
    .shape_doc = "MxN (or ...xN): rows of N",
    .rounding_doc = "mean=sum x/N (any order, acc); d=x-mean; var=sum d^2/N (any order, acc); "
                    "rstd=rsqrt(var+eps)|1/sqrt; y=d*rstd*w+b any association, FMA or not "
                    "| d/sqrt(var+eps)*w+b | x*a+(b-mean*a), a=w*rstd|w/sqrt; two-pass only",
    .n_in = 3,
    .in = {{"x", NMO_ROLE_DATA, "input [..., N]"},
           {"w", NMO_ROLE_WEIGHT, "weight [N]"},
           {"b", NMO_ROLE_BIAS, "bias [N]"}},
    .n_out = 1,
    .out = {{"y", NMO_ROLE_DATA, "output [..., N]"}},
    .n_param = 1,
    .param = {{"eps", 1e-5, "added to the variance inside the root", NMO_PDOM_NONNEG}},
    .dtypes = "fp32 bf16 fp16",
    .test_shapes = "3x1025;8x64",
    .test_shapes_large = "3x4097;8x64",
    /* fused kernel only; dotk sums ignore sum= */
    .plan_fields = NMO_PF_COMPUTE | NMO_PF_ACC | NMO_PF_FN | NMO_PF_SUM_GEOM,
    .plan_vacuous = 0,
    .setup = layer_norm_setup,
    .row_len = nmo_ref_row_len_last,
    .units = nmo_ref_units_rows,
    .unit_span = nmo_ref_unit_span_rows,
    .eval_fast = NMO_REF_FAST(nmo_ref_layer_norm_eval),
    .eval_cert = NMO_REF_CERT(nmo_ref_layer_norm_eval),
    .eval_cert_unc_stat = nmo_ref_layer_norm_eval_unc_cert,
};
#endif
