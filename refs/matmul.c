/* matmul: C[M,N] = A[M,K] * B[K,N] on ordinary cores (the tensor-core `mma` model comes
 * with the GPU layer).
 *
 * Rounding points:
 *   c_ij = sum_k a_ik b_kj   any order and tree, FMA or not, in `acc` (dot-product
 *                            model: n u sum|a b| + underflow term)
 *   inter != compute          split-K partial sums stored in `inter` before they are
 *                            added in acc, any split (cuBLAS with
 *                            allow_{bf16,fp16}_reduced_precision_reduction:
 *                            nmo_gemm_partials_k in enc_fast.h has the bound)
 *   store c into `out`       (checker: plan round)
 * A unit is a row of C; the elements are independent, so escalation recomputes only the
 * flagged dot products.
 * Inputs may be fp32, bf16, fp16 or fp8: products of these are exact in binary64. */
#include "engine/ref.h"

/* Split-K partials stored in `inter` (cuBLAS's reduced-precision reduction) when the
 * plan says so: nmo_gemm_partials_k. */
#define MATMUL_PARTIALS(c) ((c)->plan.inter != (c)->plan.compute ? (int)(c)->plan.inter : -1)

/* Unit u: row u of C (its elements are independent dot products). */
void NMO_REF(nmo_ref_matmul_eval)(E_CTX *ctx, const nmo_case *c, int64_t u, nmo_fenc **out)
{
    enc_gemm_partials(ctx, MATMUL_PARTIALS(c));
    enc_gemm_row(ctx, out[0], &c->in[0], &c->in[1], u); /* enc_gemm_elem for j < N, exported */
}

#ifdef NMO_ENGINE_CERT
/* Escalation of single elements: recompute only the dot products the fast engine could
 * not certify (op->eval_cert_unc). */
void nmo_ref_matmul_eval_unc_cert(nmo_cctx *ctx, const nmo_case *c, int64_t u, nmo_fenc **out)
{
    int64_t n = c->in[1].dims[1];
    E *e = enc_evec(ctx, 0, 1);
    enc_gemm_partials(ctx, MATMUL_PARTIALS(c));
    for (int64_t j = 0; j < n; j++) {
        if (!(out[0][j].flags & NMO_EF_UNC)) continue;
        enc_gemm_elem(ctx, e, &c->in[0], &c->in[1], u, j);
        enc_export(ctx, &out[0][j], e);
    }
}
#endif

#ifdef NMO_ENGINE_FAST
#include "refs/ref_common.h"

void NMO_REF_CERT(nmo_ref_matmul_eval)(nmo_cctx *ctx, const nmo_case *c, int64_t u, nmo_fenc **out);
void nmo_ref_matmul_eval_unc_cert(nmo_cctx *ctx, const nmo_case *c, int64_t u, nmo_fenc **out);

/* Shape MxNxK (the CLI's --shape MxN[xK]): A is MxK, B is KxN, C is MxN. */
static nmo_status matmul_setup(nmo_case *c, nmo_err *err)
{
    if (c->nshape != 3)
        return nmo_err_set(err, NMO_ERR_SHAPE, "matmul: shape must be MxNxK, got %d dims",
                           c->nshape);
    int64_t M = c->shape[0], N = c->shape[1], K = c->shape[2];
    int64_t da[2] = {M, K}, db[2] = {K, N}, dc[2] = {M, N};
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[0], c->plan.in, 2, da, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[1], c->plan.in, 2, db, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->out[0], c->plan.out, 2, dc, err));
    return NMO_OK;
}

static int64_t matmul_row_len(const nmo_case *c) { return c->shape[2]; }
/* One unit per row of C (the per-unit work of the checker is paid once per row);
 * escalation still recomputes single dot products (eval_cert_unc). */
static int64_t matmul_units(const nmo_case *c) { return c->shape[0]; }

static void matmul_span(const nmo_case *c, int64_t u, int k, int64_t *begin, int64_t *count,
                        int64_t *stride)
{
    (void)k;
    *begin = u * c->shape[1];
    *count = c->shape[1];
    *stride = 1;
}

const nmo_op nmo_op_matmul = {
    .name = "matmul",
    .summary = "C = A B with fp32 accumulation on ordinary cores",
    .shape_doc = "MxNxK: A is MxK, B is KxN, C is MxN",
    .rounding_doc = "c=sum_k a*b (any order, FMA or not, acc); inter!=compute: split-K partials "
                    "stored in inter",
    .n_in = 2,
    .in = {{"A", NMO_ROLE_DATA, "left [M,K]"}, {"B", NMO_ROLE_DATA, "right [K,N]"}},
    .n_out = 1,
    .out = {{"C", NMO_ROLE_DATA, "product [M,N]"}},
    .n_param = 0,
    .dtypes = "fp32 bf16 fp16 fp8_e4m3 fp8_e5m2",
    .test_shapes = "6x33x257;4x64x64",
    .test_shapes_large = "6x33x1025;4x64x64",
    /* one dot product per element: no elementwise math, no stage */
    .plan_fields = NMO_PF_ACC | NMO_PF_SUM_EXACT | NMO_PF_SUM_MMA | NMO_PF_INTER | NMO_PF_SUM_GEOM, /* inter: split-K partials */
    .plan_vacuous = NMO_PF_COMPUTE | NMO_PF_FN,
    .setup = matmul_setup,
    .row_len = matmul_row_len,
    .units = matmul_units,
    .unit_span = matmul_span,
    .eval_fast = NMO_REF_FAST(nmo_ref_matmul_eval),
    .eval_cert = NMO_REF_CERT(nmo_ref_matmul_eval),
    .eval_cert_unc = nmo_ref_matmul_eval_unc_cert,
};
#endif
