/* numoracle: CPU candidates for matmul — emulations of GPU GEMM kernels (CUDA-core fp32
 * accumulation; no tensor-core block accumulation here).
 *
 *   in  A[M,K], B[K,N]   dtype plan->in (fp32, bf16, fp16, fp8 e4m3/e5m2 and fnuz)
 *   out C[M,N]           dtype plan->out
 *
 * Rounding points of every kernel here (all fp32): each product a*b (none when fused
 * into fmaf; bf16/fp16/fp8 products are exact in fp32 anyway), each addition of the
 * kernel's accumulation order (sequential, k-tiles, split-K partials, lanes, pairwise),
 * and the final store into plan->out.
 *
 * The first correct variant (seq_fma: one fmaf accumulator per output, as a classic
 * register-tiled SGEMM) is the default; mutants are realistic bugs of such kernels. */
#include "cand_util.h"

typedef struct {
    nmo_cu_red red;   /* accumulation shape over k */
    int fma;          /* acc = fmaf(a, b, acc) vs acc + a*b */
    /* mutant knobs */
    int acc16;        /* 0: none; NMO_BF16/NMO_FP16: 16-bit running accumulator */
    int tail_skip;    /* k-tiles of 32: the partial last tile (K mod 32) is never loaded */
    int splitk_race;  /* split-K=4 whose partial 2 is lost (plain store instead of atomicAdd) */
    int partial_out;  /* split-K=4 partials rounded to the output format before the fp32 sum
                         (cuBLAS's reduced-precision reduction: correct under inter=<dtype>) */
    int b_layout;     /* reads B as if stored [N,K] (B^T layout confusion) */
    int store_rz;     /* truncating store regardless of the plan */
    int bv_splitk;    /* batch-variant: split-K factor from the number of 4x32 output tiles
                         (few tiles: more K pieces, as a GEMM heuristic fills the SMs);
                         2: the partials rounded to the output format (rpr) */
} mm_cfg;

/* The bv_splitk factor: tiles of 4 rows x 32 columns; fewer than 8 tiles -> 8/tiles K
 * pieces (at most 4), else 1. M changes it, so a row's bits depend on the batch. */
static int mm_bv_splitk(int64_t M, int64_t N) {
    int64_t tiles = ((M + 3) / 4) * ((N + 31) / 32);
    int64_t s = tiles >= 8 ? 1 : 8 / tiles;
    return (int)(s > 4 ? 4 : s);
}

/* C[i,j] for every output (fp32, before the store). */
NMO_CU_FMA_CLONES
static void mm_compute(const mm_cfg *c, const float *av, const float *bt, float *cv, int64_t M,
                       int64_t N, int64_t K, nmo_fmt pout) {
    const int64_t kc = (K + 3) / 4; /* split-K chunk */
    for (int64_t i = 0; i < M; i++) {
        const float *ar = av + i * K;
        for (int64_t j = 0; j < N; j++) {
            const float *bc = bt + j * K;
            float acc;
            if (c->acc16) acc = nmo_cu_sum_acc16(ar, bc, K, (nmo_fmt)c->acc16, c->fma);
            else if (c->tail_skip) acc = nmo_cu_sum_seq(ar, bc, 0, K - K % 32, 1, c->fma);
            else if (c->splitk_race) {
                acc = 0.0f;
                for (int s = 0; s < 4; s++) {
                    int64_t lo = s * kc, hi = lo + kc < K ? lo + kc : K;
                    float p = nmo_cu_sum_seq(ar, bc, lo, hi, 1, c->fma);
                    if (s != 2) acc = acc + p;
                }
            } else if (c->partial_out) {
                acc = 0.0f;
                for (int s = 0; s < 4; s++) {
                    int64_t lo = s * kc, hi = lo + kc < K ? lo + kc : K;
                    acc = acc + nmo_cu_round_to(pout, nmo_cu_sum_seq(ar, bc, lo, hi, 1, c->fma));
                }
            } else if (c->bv_splitk == 2) {
                /* the heuristic's split-K with cuBLAS's reduced-precision reduction: each
                 * partial rounded to the output format, so the batch variance is 16-bit sized */
                int parts = mm_bv_splitk(M, N);
                if (parts == 1) acc = nmo_cu_sum_seq(ar, bc, 0, K, 1, c->fma);
                else {
                    const int64_t pc = (K + parts - 1) / parts;
                    acc = 0.0f;
                    for (int64_t lo = 0; lo < K; lo += pc)
                        acc = acc + nmo_cu_round_to(pout, nmo_cu_sum_seq(ar, bc, lo, lo + pc < K ? lo + pc : K, 1, c->fma));
                }
            } else if (c->bv_splitk) {
                acc = nmo_cu_reduce_parts(ar, bc, K, mm_bv_splitk(M, N), NMO_CU_RED_SEQ, c->fma);
            } else acc = nmo_cu_reduce(ar, bc, K, c->red, c->fma);
            cv[i * N + j] = acc;
        }
    }
}

static nmo_status mm_run(const nmo_cand_args *a, nmo_err *err, const mm_cfg *c) {
    static const char op[] = "matmul";
    NMO_RETURN_IF_ERR(nmo_cu_check_args(a, op, 2, 1, err));
    const nmo_tensor *A = &a->in[0], *B = &a->in[1];
    nmo_tensor *C = &a->out[0];
    if (A->ndims != 2 || B->ndims != 2)
        return nmo_err_set(err, NMO_ERR_USAGE, "matmul candidate: A and B must be 2-D (got %d and %d dims)",
                           A->ndims, B->ndims);
    const int64_t M = A->dims[0], K = A->dims[1], N = B->dims[1];
    const int64_t da[2] = {M, K}, db[2] = {K, N}, dc[2] = {M, N};
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(A, op, "A", a->plan->in, 2, da, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(B, op, "B", a->plan->in, 2, db, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(C, op, "C", a->plan->out, 2, dc, err));

    float *av = nmo_cu_load(A), *bv = nmo_cu_load(B);
    float *bt = (float *)malloc((size_t)(N * K) * sizeof(float));
    float *cv = (float *)malloc((size_t)(M * N) * sizeof(float));
    if (!av || !bv || !bt || !cv) {
        free(av), free(bv), free(bt), free(cv);
        return nmo_err_set(err, NMO_ERR_NOMEM, "matmul candidate: out of memory");
    }
    /* bt[j*K + k] = B[k, j] (contiguous k for the dot products). The b_layout mutant
     * reads the K*N buffer as [N,K]: its column j is bv[j*K .. j*K+K-1]. */
    for (int64_t j = 0; j < N; j++)
        for (int64_t k = 0; k < K; k++) bt[j * K + k] = c->b_layout ? bv[j * K + k] : bv[k * N + j];

    mm_compute(c, av, bt, cv, M, N, K, a->plan->out);
    nmo_cu_store(C, cv, c->store_rz ? NMO_CU_ST_RZ : nmo_cu_plan_store(a->plan));
    free(av), free(bv), free(bt), free(cv);
    return NMO_OK;
}

#define MM_DEFAULT .red = NMO_CU_RED_SEQ, .fma = 1

#define MM_CAND(fname, ...)                                                         \
    static nmo_status fname(const nmo_cand_args *a, nmo_err *err) {                  \
        static const mm_cfg c = {__VA_ARGS__};                                        \
        return mm_run(a, err, &c);                                                    \
    }

MM_CAND(mm_seq_fma, MM_DEFAULT)
MM_CAND(mm_ktile32, .red = NMO_CU_RED_KTILE32, .fma = 1)
MM_CAND(mm_splitk4, .red = NMO_CU_RED_SPLITK4, .fma = 1)
MM_CAND(mm_warp32, .red = NMO_CU_RED_WARP32, .fma = 1)
MM_CAND(mm_vec4, .red = NMO_CU_RED_VEC4, .fma = 0)
MM_CAND(mm_pairwise, .red = NMO_CU_RED_PAIRWISE, .fma = 0)

MM_CAND(mm_bv_splitk_by_m, MM_DEFAULT, .bv_splitk = 1)
MM_CAND(mm_bv_rpr_splitk_by_m, MM_DEFAULT, .bv_splitk = 2)

MM_CAND(mm_mut_acc_bf16, MM_DEFAULT, .acc16 = NMO_BF16)
MM_CAND(mm_mut_acc_fp16, MM_DEFAULT, .acc16 = NMO_FP16)
MM_CAND(mm_mut_tail_skip, MM_DEFAULT, .tail_skip = 1)
MM_CAND(mm_mut_splitk_race, .red = NMO_CU_RED_SPLITK4, .fma = 1, .splitk_race = 1)
MM_CAND(mm_mut_b_layout, MM_DEFAULT, .b_layout = 1)
MM_CAND(mm_mut_rpr_splitk4, MM_DEFAULT, .partial_out = 1)
MM_CAND(mm_mut_store_rz, MM_DEFAULT, .store_rz = 1)

const nmo_cand nmo_cand_matmul[] = {
    {"matmul", "seq_fma", 1, "one fmaf accumulator per output, k = 0..K-1 in order (register-tiled SGEMM)",
     mm_seq_fma, NULL},
    {"matmul", "ktile32", 1, "k-tiles of 32: each tile's fmaf partial from 0, tile partials added in order",
     mm_ktile32, NULL},
    {"matmul", "splitk4", 1, "split-K = 4 contiguous chunks (fmaf), fp32 partials reduced ((p0+p1)+p2)+p3",
     mm_splitk4, NULL},
    {"matmul", "warp32", 1, "one warp per output: 32 k-strided fmaf partials + xor butterfly", mm_warp32, NULL},
    {"matmul", "vec4", 1, "float4 over k: 4 accumulators, a*b then add (no FMA), (a0+a1)+(a2+a3)", mm_vec4, NULL},
    {"matmul", "pairwise", 1, "rounded products summed by a pairwise tree (no FMA)", mm_pairwise, NULL},
    {"matmul", "bv_splitk_by_m", 1,
     "BATCH-VARIANT (accurate): split-K factor chosen from the number of 4x32 output tiles (M < 8 rows: "
     "more K pieces, fmaf partials added in order): a row's bits depend on M",
     mm_bv_splitk_by_m, NULL},
    {"matmul", "mut_acc_bf16", 0, "MUTANT: accumulator in bf16 (rounded after every fmaf)", mm_mut_acc_bf16, NULL},
    {"matmul", "mut_acc_fp16", 0, "MUTANT: accumulator in fp16 (rounded after every fmaf; overflows)",
     mm_mut_acc_fp16, NULL},
    {"matmul", "mut_tail_skip", 0, "MUTANT: k-tiles of 32, the partial last tile (K mod 32) is skipped",
     mm_mut_tail_skip, NULL},
    {"matmul", "mut_splitk_race", 0, "MUTANT: split-K = 4 with partial 2 lost (store race instead of atomicAdd)",
     mm_mut_splitk_race, NULL},
    {"matmul", "mut_b_layout", 0, "MUTANT: B read as if laid out [N,K] (transposed-layout confusion)",
     mm_mut_b_layout, NULL},
    {"matmul", "mut_store_rz", 0, "MUTANT: final store truncates (RZ) instead of RNE", mm_mut_store_rz, NULL},
    {"matmul", "mut_rpr_splitk4", 0,
     "MUTANT of the fused plan: split-K = 4 partials rounded to the output format, then summed "
     "in fp32 (cuBLAS reduced-precision reduction); correct under --plan inter=<dtype>",
     mm_mut_rpr_splitk4, "inter={dtype}"},
    {"matmul", "bv_rpr_splitk_by_m", 0,
     "BATCH-VARIANT (accurate under --plan inter=<dtype>): bv_splitk_by_m's split-K with each partial rounded "
     "to the output format (cuBLAS reduced-precision reduction): rows differ at 16-bit size with M",
     mm_bv_rpr_splitk_by_m, "inter={dtype}"},
};
const int nmo_cand_matmul_n = (int)(sizeof nmo_cand_matmul / sizeof nmo_cand_matmul[0]);
