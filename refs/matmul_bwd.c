/* matmul_bwd: the backward pass of C = A B on ordinary cores.
 *   dA[M,K] = dC[M,N] B^T      dA_ik = sum_j dC_ij B_kj   (a dot product over N)
 *   dB[K,N] = A^T dC[M,N]      dB_kj = sum_i A_ik dC_ij   (a dot product over M)
 *
 * Rounding points:
 *   each element   any order and tree, FMA or not, in `acc` (dot-product model:
 *                  n u sum|a b| + underflow term, Jeannerod & Rump 2013); split-K or
 *                  atomics over M (dB) or N (dA) in fp32 are orders of that sum
 *   store into `out` (checker: plan round)
 * The fast engine batches both products in binary64 (BLAS dgemm with transpose flags).
 *   inter != compute: split-K partials stored in `inter` before the final sum (cuBLAS's
 *   reduced-precision reduction; nmo_gemm_partials_k)
 * Not covered: dB accumulated across micro-batches in bf16. */
#include "engine/ref.h"

void NMO_REF(nmo_ref_matmul_bwd_eval)(E_CTX *ctx, const nmo_case *c, int64_t u, nmo_fenc **out)
{
    int64_t M = c->shape[0], N = c->shape[1], K = c->shape[2];
    (void)N;
    E *e = enc_evec(ctx, 0, 1);
    /* split-K partials stored in `inter` (as matmul: nmo_gemm_partials_k) */
    enc_gemm_partials(ctx, c->plan.inter != c->plan.compute ? (int)c->plan.inter : -1);
    if (u < M * K) { /* dA[i,k] = row i of dC . row k of B */
        enc_gemm_elem_t(ctx, e, &c->in[2], 0, &c->in[1], 1, u / K, u % K);
        enc_export(ctx, &out[0][0], e);
    } else { /* dB[k,j] = column k of A . column j of dC */
        int64_t v = u - M * K;
        enc_gemm_elem_t(ctx, e, &c->in[0], 1, &c->in[2], 0, v / N, v % N);
        enc_export(ctx, &out[1][0], e);
    }
}

#ifdef NMO_ENGINE_FAST
#include "refs/ref_common.h"

void NMO_REF_CERT(nmo_ref_matmul_bwd_eval)(nmo_cctx *ctx, const nmo_case *c, int64_t u, nmo_fenc **out);

/* Shape MxNxK as matmul: A is MxK, B is KxN, dC is MxN. */
static nmo_status matmul_bwd_setup(nmo_case *c, nmo_err *err)
{
    if (c->nshape != 3)
        return nmo_err_set(err, NMO_ERR_SHAPE, "matmul_bwd: shape must be MxNxK, got %d dims",
                           c->nshape);
    int64_t M = c->shape[0], N = c->shape[1], K = c->shape[2];
    int64_t da[2] = {M, K}, db[2] = {K, N}, dc[2] = {M, N};
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[0], c->plan.in, 2, da, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[1], c->plan.in, 2, db, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[2], c->plan.in, 2, dc, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->out[0], c->plan.out, 2, da, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->out[1], c->plan.out, 2, db, err));
    return NMO_OK;
}

/* Per-row families follow dC's rows (length N). */
static int64_t matmul_bwd_row_len(const nmo_case *c) { return c->shape[1]; }
/* One unit per output element: M*K units for dA, then K*N for dB. */
static int64_t matmul_bwd_units(const nmo_case *c)
{
    return c->shape[0] * c->shape[2] + c->shape[2] * c->shape[1];
}

static void matmul_bwd_span(const nmo_case *c, int64_t u, int k, int64_t *begin, int64_t *count,
                            int64_t *stride)
{
    int64_t mk = c->shape[0] * c->shape[2];
    *stride = 1;
    if (k == 0) {
        *begin = u;
        *count = u < mk;
    } else {
        *begin = u - mk;
        *count = u >= mk;
    }
    if (!*count) *begin = 0;
}

const nmo_op nmo_op_matmul_bwd = {
    .name = "matmul_bwd",
    .summary = "backward of C = A B: dA = dC B^T, dB = A^T dC (fp32 accumulation)",
    .shape_doc = "MxNxK as matmul: A is MxK, B is KxN, dC is MxN",
    .rounding_doc = "dA=sum_j dC*B (over N), dB=sum_i A*dC (over M): any order, FMA or not, acc",
    .n_in = 3,
    .in = {{"A", NMO_ROLE_DATA, "forward left [M,K]"},
           {"B", NMO_ROLE_DATA, "forward right [K,N]"},
           {"dC", NMO_ROLE_DATA, "output gradient [M,N]"}},
    .n_out = 2,
    .out = {{"dA", NMO_ROLE_DATA, "gradient of A [M,K]"}, {"dB", NMO_ROLE_DATA, "gradient of B [K,N]"}},
    .n_param = 0,
    .dtypes = "fp32 bf16 fp16",
    .test_shapes = "33x257x6;24x40x16",
    .test_shapes_large = "129x1025x8;64x48x40",
    /* one dot product per element: no elementwise math, no stage */
    .plan_fields = NMO_PF_ACC | NMO_PF_SUM_EXACT | NMO_PF_SUM_MMA | NMO_PF_INTER | NMO_PF_SUM_GEOM, /* inter: split-K partials */
    .plan_vacuous = NMO_PF_COMPUTE | NMO_PF_FN,
    .setup = matmul_bwd_setup,
    .row_len = matmul_bwd_row_len,
    .units = matmul_bwd_units,
    .unit_span = matmul_bwd_span,
    .eval_fast = NMO_REF_FAST(nmo_ref_matmul_bwd_eval),
    .eval_cert = NMO_REF_CERT(nmo_ref_matmul_bwd_eval),
};
#endif
