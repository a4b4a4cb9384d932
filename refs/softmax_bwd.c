/* softmax backward over the last dim: dx[i,j] = y[i,j] * (dy[i,j] - s_i),
 * s_i = sum_k y[i,k] dy[i,k], where y is the saved forward output.
 *
 * Inputs: y (NMO_ROLE_DERIVED: the softmax of the extra input x, computed exactly and
 * rounded RNE into the storage dtype, as a forward kernel stores it), dy, and x (only
 * the source of y; the operator does not read it). A y given as a file is used as is.
 *
 * Rounding points (compute, RNE, unless said otherwise), fused (inter == compute):
 *   s    = sum_k y_k dy_k   any order and tree, FMA or not, in `acc` (dot-product model)
 *   dx_j = y_j * RN(dy_j - s)               (PyTorch, Liger: y * (dy - s))
 *       or RN(y_j dy_j) - RN(y_j s)          (expanded; either product fused into an FMA:
 *                                             fma(-y, s, RN(y dy)), fma(y, dy, -RN(y s)))
 *                                             hull of all of them
 * Eager (inter != compute), PyTorch's torch._softmax_backward_data for a 16-bit dtype:
 * the product y*dy is a separate tensor stored in `inter`, the kernel then reduces and
 * subtracts with the stored products (H200, PyTorch 2.11: 0 mismatches of 8008 elements
 * per 8x1001 case, every family, bf16 and fp16; without the rounding of m, 1300-7000):
 *   m_j  = RN_inter(RN(y_j dy_j))
 *   s    = sum_k m_k        any order and tree, in `acc`
 *   dx_j = m_j - y_j s      FMA or not: RN(m - RN(y s)) | fma(-y, s, m)
 *   store dx into `out`       (checker: plan round)
 * Not covered: y recomputed from x inside the backward kernel; kernels that keep y*dy
 * in a narrower format but use the unrounded products in the subtraction or the sum
 * (a mix of the two forms above). */
#include "engine/ref.h"

void NMO_REF(nmo_ref_softmax_bwd_eval)(E_CTX *ctx, const nmo_case *c, int64_t u, nmo_fenc **out)
{
    int64_t n = c->shape[c->nshape - 1];
    double *y = enc_dvec(ctx, 0, n);
    double *dy = enc_dvec(ctx, 1, n);
    nmo_tensor_load_f64(y, &c->in[0], u * n, n, 1);
    nmo_tensor_load_f64(dy, &c->in[1], u * n, n, 1);
    E s, ye, dye, a, r1, r2, p, q, nq, ny;
    enc_init(ctx, &s), enc_init(ctx, &ye), enc_init(ctx, &dye), enc_init(ctx, &a);
    enc_init(ctx, &r1), enc_init(ctx, &r2), enc_init(ctx, &p), enc_init(ctx, &q);
    enc_init(ctx, &nq), enc_init(ctx, &ny);

    if (c->plan.inter != c->plan.compute) { /* eager: m = y*dy stored in inter */
        E *m = enc_evec(ctx, 0, n);
        for (int64_t j = 0; j < n; j++) {
            enc_set_d(ctx, &ye, y[j]);
            enc_set_d(ctx, &dye, dy[j]);
            enc_mul(ctx, &m[j], &ye, &dye);
            enc_round(ctx, &m[j], &m[j], c->plan.inter, NMO_RNE, 0);
        }
        enc_sum_sharp(ctx, &s, m, n);
        for (int64_t j = 0; j < n; j++) {
            enc_set_d(ctx, &ye, y[j]);
            enc_neg(ctx, &ny, &ye);
            enc_fma(ctx, &r1, &ny, &s, &m[j]); /* RN(m - RN(y s)) | fma(-y, s, m) */
            enc_export(ctx, &out[0][j], &r1);
        }
        goto done;
    }
    enc_dot_sharp_d(ctx, &s, y, dy, n);
    for (int64_t j = 0; j < n; j++) {
        enc_set_d(ctx, &ye, y[j]);
        enc_set_d(ctx, &dye, dy[j]);
        enc_sub(ctx, &a, &dye, &s);
        enc_mul(ctx, &r1, &ye, &a);            /* y * (dy - s) */
        enc_mul(ctx, &p, &ye, &dye);           /* RN(y dy) */
        enc_neg(ctx, &ny, &ye);
        enc_fma(ctx, &r2, &ny, &s, &p);        /* fma(-y, s, RN(y dy)) | RN(RN(y dy) - RN(y s)) */
        enc_hull(ctx, &r1, &r1, &r2);
        enc_mul(ctx, &q, &ye, &s);             /* RN(y s) */
        enc_neg(ctx, &nq, &q);
        enc_fma(ctx, &r2, &ye, &dye, &nq);     /* fma(y, dy, -RN(y s)) */
        enc_hull(ctx, &r1, &r1, &r2);
        enc_export(ctx, &out[0][j], &r1);
    }

done:
    enc_clear(ctx, &s), enc_clear(ctx, &ye), enc_clear(ctx, &dye), enc_clear(ctx, &a);
    enc_clear(ctx, &r1), enc_clear(ctx, &r2), enc_clear(ctx, &p), enc_clear(ctx, &q);
    enc_clear(ctx, &nq), enc_clear(ctx, &ny);
}

#ifdef NMO_ENGINE_FAST
#include <math.h>
#include "refs/ref_common.h"

void NMO_REF_CERT(nmo_ref_softmax_bwd_eval)(nmo_cctx *ctx, const nmo_case *c, int64_t u,
                                            nmo_fenc **out);

static nmo_status softmax_bwd_setup(nmo_case *c, nmo_err *err)
{
    int64_t rows, n;
    NMO_RETURN_IF_ERR(nmo_ref_rows_shape(c, &rows, &n, err));
    for (int k = 0; k < 3; k++)
        NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[k], c->plan.in, c->nshape, c->shape, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->out[0], c->plan.out, c->nshape, c->shape, err));
    return NMO_OK;
}

/* y = softmax(x) per row, in long double, stored RNE in the input dtype. */
static void softmax_bwd_derive(nmo_case *c)
{
    int64_t n = c->shape[c->nshape - 1], rows = nmo_tensor_numel(&c->in[2]) / n;
    for (int64_t i = 0; i < rows; i++) {
        long double m = -INFINITY, s = 0;
        for (int64_t j = 0; j < n; j++) {
            long double v = nmo_tensor_get(&c->in[2], i * n + j);
            if (v > m) m = v;
        }
        for (int64_t j = 0; j < n; j++) s += expl((long double)nmo_tensor_get(&c->in[2], i * n + j) - m);
        for (int64_t j = 0; j < n; j++)
            nmo_tensor_set(&c->in[0], i * n + j,
                           (double)(expl((long double)nmo_tensor_get(&c->in[2], i * n + j) - m) / s));
    }
}

const nmo_op nmo_op_softmax_bwd = {
    .name = "softmax_bwd",
    .summary = "softmax backward over the last dim: dx = y * (dy - sum(y * dy))",
    .shape_doc = "MxN (or ...xN): rows of N",
    .rounding_doc = "s=sum y*dy (any order, FMA or not, acc); dx=y*RN(dy-s)|RN(y*dy)-RN(y*s) "
                    "(either product fused); inter!=compute: m=RN_inter(y*dy), s=sum m, "
                    "dx=m-y*s (FMA or not)",
    .n_in = 3,
    .in = {{"y", NMO_ROLE_DERIVED, "saved softmax output [..., N] (derived: softmax(x) stored in dtype)"},
           {"dy", NMO_ROLE_DATA, "output gradient [..., N]"},
           {"x", NMO_ROLE_DATA, "forward input [..., N] (source of the derived y; not read)", NMO_IN_SOURCE}},
    .n_out = 1,
    .out = {{"dx", NMO_ROLE_DATA, "input gradient [..., N]"}},
    .n_param = 0,
    .dtypes = "fp32 bf16 fp16",
    .test_shapes = "3x1025;8x64",
    .test_shapes_large = "3x4097;8x64",
    /* no function evaluated; the sharpened dot ignores sum= */
    .plan_fields = NMO_PF_COMPUTE | NMO_PF_ACC | NMO_PF_INTER | NMO_PF_SUM_GEOM,
    .plan_vacuous = NMO_PF_FN,
    .setup = softmax_bwd_setup,
    .row_len = nmo_ref_row_len_last,
    .units = nmo_ref_units_rows,
    .unit_span = nmo_ref_unit_span_rows,
    .derive = softmax_bwd_derive,
    .eval_fast = NMO_REF_FAST(nmo_ref_softmax_bwd_eval),
    .eval_cert = NMO_REF_CERT(nmo_ref_softmax_bwd_eval),
};
#endif
