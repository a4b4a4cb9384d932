/* reduction over the last axis: y[i] = sum_j x[i,j] (kind 0), mean (kind 1) or max
 * (kind 2), x[M,N] (or ...xN: rows = product of the leading dims).
 *
 * Rounding points (compute/acc fp32 unless the plan says otherwise):
 *   kind 0  s = sum_j x_j        any order and tree, in `acc` (summation model,
 *                                (n-1) u sum|x|, Jeannerod & Rump 2013)
 *   kind 1  m = s / N            or s * RN(1/N)                        (hull), or
 *           m = sum_j t_j        the terms scaled first, t_j = x_j / N or x_j * RN(1/N)
 *                                (a kernel that scales before its block reduction to keep
 *                                partial sums small), any order           (hull of all)
 *   kind 2  m = max_j x_j        exact (any order; fmaxf or compare-select)
 *   store y into `out`           (checker: plan round)
 * Not covered: compensated/Kahan sums are inside the model (more accurate), but a mean
 * computed by Welford's running update (m += (x - m)/k) is not; NaN inputs to max follow
 * the engine's max primitive (fmaxf may drop a NaN: "NaN possible"). */
#include "engine/ref.h"

void NMO_REF(nmo_ref_reduction_eval)(E_CTX *ctx, const nmo_case *c, int64_t u, nmo_fenc **out)
{
    int64_t n = c->shape[c->nshape - 1];
    int kind = (int)c->param[0];
    double *x = enc_dvec(ctx, 0, n);
    nmo_tensor_load_f64(x, &c->in[0], u * n, n, 1);
    E *xe = enc_evec(ctx, 0, n);
    E r, s;
    enc_init(ctx, &r), enc_init(ctx, &s);
    for (int64_t j = 0; j < n; j++) enc_set_d(ctx, &xe[j], x[j]);
    if (kind == 2) {
        enc_max_v(ctx, &r, xe, n);
    } else {
        enc_sum(ctx, &r, xe, n);
        if (kind == 1) {
            enc_div_si(ctx, &r, &r, n);
            /* scaled terms first, then summed */
            for (int64_t j = 0; j < n; j++) enc_div_si(ctx, &xe[j], &xe[j], n);
            enc_sum(ctx, &s, xe, n);
            enc_hull(ctx, &r, &r, &s);
        }
    }
    enc_export(ctx, &out[0][0], &r);
    enc_clear(ctx, &r), enc_clear(ctx, &s);
}

#ifdef NMO_ENGINE_FAST
#include "refs/ref_common.h"

void NMO_REF_CERT(nmo_ref_reduction_eval)(nmo_cctx *ctx, const nmo_case *c, int64_t u, nmo_fenc **out);

static nmo_status reduction_setup(nmo_case *c, nmo_err *err)
{
    int64_t rows, n;
    NMO_RETURN_IF_ERR(nmo_ref_rows_shape(c, &rows, &n, err));
    double kind = c->param[0];
    if (kind != 0 && kind != 1 && kind != 2)
        return nmo_err_set(err, NMO_ERR_USAGE, "reduction: kind must be 0 (sum), 1 (mean) or 2 (max), got %g",
                           kind);
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[0], c->plan.in, c->nshape, c->shape, err));
    if (c->nshape == 1) {
        int64_t one = 1;
        NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->out[0], c->plan.out, 1, &one, err));
    } else {
        NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->out[0], c->plan.out, c->nshape - 1, c->shape, err));
    }
    return NMO_OK;
}

/* One unit per row; it writes one output element. */
static void reduction_span(const nmo_case *c, int64_t u, int k, int64_t *begin, int64_t *count,
                           int64_t *stride)
{
    (void)c;
    (void)k;
    *begin = u;
    *count = 1;
    *stride = 1;
}

const nmo_op nmo_op_reduction = {
    .name = "reduction",
    .summary = "sum, mean or max over the last axis (fp32 accumulation)",
    .shape_doc = "MxN (or ...xN): rows of N reduced to one value each; y has the leading dims",
    .rounding_doc = "kind 0: s=sum x (any order, acc); kind 1: s/N|s*RN(1/N)|sum(x/N) (hull); "
                    "kind 2: max (exact)",
    .n_in = 1,
    .in = {{"x", NMO_ROLE_DATA, "input [..., N]"}},
    .n_out = 1,
    .out = {{"y", NMO_ROLE_DATA, "output [...] (one per row)"}},
    .n_param = 1,
    .param = {{"kind", 0, "0 sum, 1 mean, 2 max"}},
    .dtypes = "fp32 bf16 fp16",
    .test_shapes = "3x1025;8x64",
    .test_shapes_large = "3x4097;8x64",
    /* mean divides in compute; the plain sum ignores sum= */
    .plan_fields = NMO_PF_COMPUTE | NMO_PF_ACC | NMO_PF_SUM_GEOM,
    .plan_vacuous = NMO_PF_FN,
    .setup = reduction_setup,
    .row_len = nmo_ref_row_len_last,
    .units = nmo_ref_units_rows,
    .unit_span = reduction_span,
    .eval_fast = NMO_REF_FAST(nmo_ref_reduction_eval),
    .eval_cert = NMO_REF_CERT(nmo_ref_reduction_eval),
};
#endif
