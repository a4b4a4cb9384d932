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

/* Row u's statistics as nmo_ref_layer_norm_eval computes them (norm_two_pass), exported:
 * the GPU tier takes a row's from the certified engine where its own closing of a row sum
 * is flagged (hip/gpu_oracle_rows_host.h). mean_only: the mean alone (norm_mean; rstd and
 * s are not written). Scratch slots 0-1, as the evaluation. */
void NMO_REF(nmo_ref_layer_norm_stats)(E_CTX *ctx, const nmo_case *c, int64_t u, int mean_only, nmo_fenc *mean,
                                       nmo_fenc *rstd, nmo_fenc *s);
void NMO_REF(nmo_ref_layer_norm_stats)(E_CTX *ctx, const nmo_case *c, int64_t u, int mean_only, nmo_fenc *mean,
                                       nmo_fenc *rstd, nmo_fenc *s)
{
    int64_t n = c->in[1].dims[0];
    double *x = enc_dvec(ctx, 0, n);
    nmo_tensor_load_f64(x, &c->in[0], u * n, n, 1);
    E *xe = enc_evec(ctx, 0, n), *d = enc_evec(ctx, 1, n);
    E m, r, sd;
    enc_init(ctx, &m), enc_init(ctx, &r), enc_init(ctx, &sd);
    if (mean_only) {
        norm_mean(ctx, x, xe, n, &m);
    } else {
        norm_two_pass(ctx, x, xe, d, n, c->param[0], &m, &r, &sd);
        enc_export(ctx, rstd, &r), enc_export(ctx, s, &sd);
    }
    enc_export(ctx, mean, &m);
    enc_clear(ctx, &m), enc_clear(ctx, &r), enc_clear(ctx, &sd);
}

#ifdef NMO_ENGINE_FAST
#include "refs/ref_common.h"

void NMO_REF_CERT(nmo_ref_layer_norm_eval)(nmo_cctx *ctx, const nmo_case *c, int64_t u, nmo_fenc **out);

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
};
#endif
