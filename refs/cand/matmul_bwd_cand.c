/* numoracle: CPU candidates for matmul_bwd — emulations of the two GEMMs of a linear
 * layer's backward pass on ordinary cores (fp32 accumulation).
 *
 *   in  A[M,K], B[K,N], dC[M,N]       dtype plan->in
 *   out dA[M,K] = dC B^T, dB[K,N] = A^T dC   dtype plan->out
 *
 * Rounding points of every kernel here (fp32): each fmaf (or product and add) of the
 * kernel's reduction over N (dA) or M (dB), the combination of tiles / split-K partials,
 * and the final store into plan->out. The first correct variant (seq_fma) is the
 * default; mutants are realistic bugs of transposed-operand GEMMs. */
#include "cand_util.h"

typedef struct {
    nmo_cu_red red_a;   /* reduction shape over N for dA */
    nmo_cu_red red_b;   /* reduction shape over M for dB */
    int fma;
    /* mutant knobs */
    int acc16;          /* bf16 running accumulator (both outputs) */
    int da_no_trans;    /* dA reads B as if stored [N,K] (transpose forgotten) */
    int db_race;        /* dB split-K over M = 4 with partial 2 lost */
    int db_tail_skip;   /* dB over M in tiles of 32, the partial last tile dropped */
    int db_store_t;     /* dB written transposed ([N,K] order into the [K,N] buffer) */
    int store_rz;
} mb_cfg;

static float mb_dot(const float *x, const float *y, int64_t n, nmo_cu_red red, const mb_cfg *c) {
    if (c->acc16) return nmo_cu_sum_acc16(x, y, n, NMO_BF16, c->fma);
    return nmo_cu_reduce(x, y, n, red, c->fma);
}

static nmo_status mb_run(const nmo_cand_args *a, nmo_err *err, const mb_cfg *c) {
    static const char op[] = "matmul_bwd";
    NMO_RETURN_IF_ERR(nmo_cu_check_args(a, op, 3, 2, err));
    const nmo_tensor *A = &a->in[0], *B = &a->in[1], *dC = &a->in[2];
    if (A->ndims != 2 || B->ndims != 2)
        return nmo_err_set(err, NMO_ERR_USAGE, "matmul_bwd candidate: A and B must be 2-D");
    int64_t M = A->dims[0], K = A->dims[1], N = B->dims[1];
    int64_t da[2] = {M, K}, db[2] = {K, N}, dc[2] = {M, N};
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(A, op, "A", a->plan->in, 2, da, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(B, op, "B", a->plan->in, 2, db, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(dC, op, "dC", a->plan->in, 2, dc, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->out[0], op, "dA", a->plan->out, 2, da, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->out[1], op, "dB", a->plan->out, 2, db, err));
    float *av = nmo_cu_load(A), *bv = nmo_cu_load(B), *cv = nmo_cu_load(dC);
    float *dav = (float *)malloc((size_t)(M * K) * sizeof(float));
    float *dbv = (float *)malloc((size_t)(K * N) * sizeof(float));
    int64_t mx = M > N ? M : N;
    float *x = (float *)malloc((size_t)mx * sizeof(float)), *y = (float *)malloc((size_t)mx * sizeof(float));
    if (!av || !bv || !cv || !dav || !dbv || !x || !y) {
        free(av), free(bv), free(cv), free(dav), free(dbv), free(x), free(y);
        return nmo_err_set(err, NMO_ERR_NOMEM, "matmul_bwd candidate: out of memory");
    }
    /* dA[i,k] = sum_j dC[i,j] B[k,j] */
    for (int64_t i = 0; i < M; i++)
        for (int64_t k = 0; k < K; k++) {
            for (int64_t j = 0; j < N; j++) y[j] = c->da_no_trans ? bv[j * K + k] : bv[k * N + j];
            dav[i * K + k] = mb_dot(cv + i * N, y, N, c->red_a, c);
        }
    /* dB[k,j] = sum_i A[i,k] dC[i,j] */
    for (int64_t k = 0; k < K; k++)
        for (int64_t j = 0; j < N; j++) {
            for (int64_t i = 0; i < M; i++) x[i] = av[i * K + k], y[i] = cv[i * N + j];
            float r;
            if (c->db_race) {
                int64_t ch = (M + 3) / 4;
                r = 0.0f;
                for (int s = 0; s < 4; s++) {
                    int64_t lo = s * ch, hi = lo + ch < M ? lo + ch : M;
                    if (s == 2 || lo >= hi) continue;
                    r = r + nmo_cu_sum_seq(x, y, lo, hi, 1, c->fma);
                }
            } else if (c->db_tail_skip) {
                r = 0.0f;
                for (int64_t t = 0; t + 32 <= M; t += 32) r = r + nmo_cu_sum_seq(x, y, t, t + 32, 1, c->fma);
            } else {
                r = mb_dot(x, y, M, c->red_b, c);
            }
            if (c->db_store_t) dbv[(j * K + k) % (K * N)] = r;
            else dbv[k * N + j] = r;
        }
    nmo_cu_store_mode st = c->store_rz ? NMO_CU_ST_RZ : nmo_cu_plan_store(a->plan);
    nmo_cu_store(&a->out[0], dav, st);
    nmo_cu_store(&a->out[1], dbv, st);
    free(av), free(bv), free(cv), free(dav), free(dbv), free(x), free(y);
    return NMO_OK;
}

#define MB_DEFAULT .red_a = NMO_CU_RED_SEQ, .red_b = NMO_CU_RED_SEQ, .fma = 1

#define MB_CAND(fname, ...)                                                         \
    static nmo_status fname(const nmo_cand_args *a, nmo_err *err) {                  \
        static const mb_cfg c = {__VA_ARGS__};                                        \
        return mb_run(a, err, &c);                                                    \
    }

MB_CAND(mb_seq_fma, MB_DEFAULT)
MB_CAND(mb_ktile_splitk, .red_a = NMO_CU_RED_KTILE32, .red_b = NMO_CU_RED_SPLITK4, .fma = 1)
MB_CAND(mb_warp_vec4, .red_a = NMO_CU_RED_WARP32, .red_b = NMO_CU_RED_VEC4, .fma = 0)
MB_CAND(mb_pairwise, .red_a = NMO_CU_RED_PAIRWISE, .red_b = NMO_CU_RED_BLOCK256, .fma = 0)

MB_CAND(mb_mut_acc_bf16, MB_DEFAULT, .acc16 = 1)
MB_CAND(mb_mut_da_no_trans, MB_DEFAULT, .da_no_trans = 1)
MB_CAND(mb_mut_db_race, MB_DEFAULT, .db_race = 1)
MB_CAND(mb_mut_db_tail_skip, MB_DEFAULT, .db_tail_skip = 1)
MB_CAND(mb_mut_db_store_t, MB_DEFAULT, .db_store_t = 1)
MB_CAND(mb_mut_store_rz, MB_DEFAULT, .store_rz = 1)

const nmo_cand nmo_cand_matmul_bwd[] = {
    {"matmul_bwd", "seq_fma", 1, "one fmaf accumulator per output element, reduction index in order",
     mb_seq_fma, NULL},
    {"matmul_bwd", "ktile_splitk", 1,
     "dA: k-tiles of 32 over N (fmaf); dB: split-K = 4 over M, fp32 partials added in order", mb_ktile_splitk, NULL},
    {"matmul_bwd", "warp_vec4", 1, "dA: one warp per element + xor butterfly; dB: float4 over M (no FMA)",
     mb_warp_vec4, NULL},
    {"matmul_bwd", "pairwise", 1, "dA: pairwise tree of rounded products; dB: 256-thread block reduction",
     mb_pairwise, NULL},
    {"matmul_bwd", "mut_acc_bf16", 0, "MUTANT: bf16 running accumulator in both GEMMs", mb_mut_acc_bf16, NULL},
    {"matmul_bwd", "mut_da_no_trans", 0, "MUTANT: dA = dC B with B read as [N,K] (transpose flag forgotten)",
     mb_mut_da_no_trans, NULL},
    {"matmul_bwd", "mut_db_race", 0, "MUTANT: dB split-K = 4 over M with partial 2 lost (store race)",
     mb_mut_db_race, NULL},
    {"matmul_bwd", "mut_db_tail_skip", 0, "MUTANT: dB over M in tiles of 32, the partial last tile skipped",
     mb_mut_db_tail_skip, NULL},
    {"matmul_bwd", "mut_db_store_t", 0, "MUTANT: dB written in [N,K] order into the [K,N] output",
     mb_mut_db_store_t, NULL},
    {"matmul_bwd", "mut_store_rz", 0, "MUTANT: final stores truncate (RZ) instead of RNE", mb_mut_store_rz, NULL},
};
const int nmo_cand_matmul_bwd_n = (int)(sizeof nmo_cand_matmul_bwd / sizeof nmo_cand_matmul_bwd[0]);
