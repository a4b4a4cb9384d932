/* log_softmax over the last dim: y[i,j] = x[i,j] - m_i - log(sum_k exp(x[i,k] - m_i)),
 * m_i = max_k x[i,k].
 *
 * Rounding points (compute, RNE, unless said otherwise):
 *   m   = max_k x_k        exact
 *   d_j = x_j - m          correctly rounded
 *   e_j = exp(d_j)         plan accuracy fn_ulps[EXP] (CUDA expf: 2 ulp)
 *   s   = sum_j e_j        any order and tree, in `acc` (summation model)
 *   l   = log(s)           plan accuracy fn_ulps[LOG] (CUDA logf: 1 ulp)
 *   y_j = d_j - l          ((x - m) - lse, PyTorch's epilogue)
 *      or x_j - RN(m + l)  (x - lse with lse = m + log s stored first: hull of both)
 *   store y into `out`     (checker: plan round)
 * Not covered: online (single-pass, rescaling) max/sum, lse computed as
 * m + log2(s) * ln2 or exp as exp2(x*log2e) with fast intrinsics (use a plan with
 * fn=fast), log(softmax) computed as log(e_j / s) (not a correct kernel: it underflows),
 * and e_j stored in a narrower format between passes. */
#include "engine/ref.h"

void NMO_REF(nmo_ref_log_softmax_eval)(E_CTX *ctx, const nmo_case *c, int64_t u, nmo_fenc **out)
{
    int64_t n = c->shape[c->nshape - 1];
    double *x = enc_dvec(ctx, 0, n);
    nmo_tensor_load_f64(x, &c->in[0], u * n, n, 1);
    E *xe = enc_evec(ctx, 0, n);
    E *ee = enc_evec(ctx, 1, n);
    E m, s, l, t, d, y1, y2;
    enc_init(ctx, &m), enc_init(ctx, &s), enc_init(ctx, &l), enc_init(ctx, &t);
    enc_init(ctx, &d), enc_init(ctx, &y1), enc_init(ctx, &y2);

    for (int64_t j = 0; j < n; j++) enc_set_d(ctx, &xe[j], x[j]);
    enc_max_v(ctx, &m, xe, n);
    for (int64_t j = 0; j < n; j++) {
        enc_sub(ctx, &d, &xe[j], &m);
        enc_exp(ctx, &ee[j], &d);
    }
    enc_sum_sharp(ctx, &s, ee, n);
    enc_log(ctx, &l, &s);
    enc_add(ctx, &t, &m, &l); /* lse */
    for (int64_t j = 0; j < n; j++) {
        enc_sub(ctx, &d, &xe[j], &m);
        enc_sub(ctx, &y1, &d, &l);
        enc_sub(ctx, &y2, &xe[j], &t);
        enc_hull(ctx, &y1, &y1, &y2);
        enc_export(ctx, &out[0][j], &y1);
    }

    enc_clear(ctx, &m), enc_clear(ctx, &s), enc_clear(ctx, &l), enc_clear(ctx, &t);
    enc_clear(ctx, &d), enc_clear(ctx, &y1), enc_clear(ctx, &y2);
}

#ifdef NMO_ENGINE_FAST
#include "refs/ref_common.h"

void NMO_REF_CERT(nmo_ref_log_softmax_eval)(nmo_cctx *ctx, const nmo_case *c, int64_t u,
                                            nmo_fenc **out);

static nmo_status log_softmax_setup(nmo_case *c, nmo_err *err)
{
    int64_t rows, n;
    NMO_RETURN_IF_ERR(nmo_ref_rows_shape(c, &rows, &n, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[0], c->plan.in, c->nshape, c->shape, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->out[0], c->plan.out, c->nshape, c->shape, err));
    return NMO_OK;
}

const nmo_op nmo_op_log_softmax = {
    .name = "log_softmax",
    .summary = "log-softmax over the last dim (max subtracted)",
    .shape_doc = "MxN (or ...xN): rows of N",
    .rounding_doc = "m=max (exact); d=x-m; e=exp(d) (fn ulps); s=sum e (any order, acc); "
                    "l=log s (fn ulps); y=d-l|x-RN(m+l)",
    .n_in = 1,
    .in = {{"x", NMO_ROLE_DATA, "input [..., N]"}},
    .n_out = 1,
    .out = {{"y", NMO_ROLE_DATA, "output [..., N]"}},
    .n_param = 0,
    .dtypes = "fp32 bf16 fp16",
    .test_shapes = "3x1025;8x64",
    .test_shapes_large = "3x4097;8x64",
    /* fused kernel only; sum= narrows the sharpened sums' k u A term (nmo_plan_red_k) */
    .plan_fields = NMO_PF_COMPUTE | NMO_PF_ACC | NMO_PF_FN | NMO_PF_SUM_GEOM,
    .plan_vacuous = 0,
    .setup = log_softmax_setup,
    .row_len = nmo_ref_row_len_last,
    .units = nmo_ref_units_rows,
    .unit_span = nmo_ref_unit_span_rows,
    .eval_fast = NMO_REF_FAST(nmo_ref_log_softmax_eval),
    .eval_cert = NMO_REF_CERT(nmo_ref_log_softmax_eval),
};
#endif
