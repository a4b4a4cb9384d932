/* numoracle: CPU candidates for softmax_bwd — emulations of GPU softmax backward kernels
 * (last dim; rows = product of the leading dims).
 *
 *   in  y[..., N]   saved softmax output, dtype plan->in
 *       dy[..., N]  output gradient, dtype plan->in
 *       x[..., N]   forward input (not read: it is only the source of y)
 *   out dx[..., N]  dtype plan->out
 *
 * Every kernel here: s = sum y*dy in fp32 in the kernel's reduction tree (fmaf or a
 * rounded product then add), then dx = y*(dy - s) or y*dy - y*s with or without an
 * FMA, then the final store. Mutants are the default kernel with one realistic bug.
 *
 * PyTorch eager (torch._softmax_backward_data on a 16-bit dtype, 2.11 on an H200,
 * reproduced bit for bit): m = y*dy is a separate tensor stored in the input dtype, the
 * kernel sums the stored m in fp32 and writes m - y*s. Correct only under a plan with
 * inter=<input dtype> (mut_eager*: negative controls of the fused plan, as in the
 * pointwise operators); mut_eager_sum_raw and mut_eager_m_rz are bugs of that eager
 * kernel and must FAIL under inter=<input dtype> too. */
#include "smx_util.h"

typedef struct {
    nmo_cu_red red; /* reduction shape of s */
    int fma;        /* s accumulates with fmaf */
    int form;       /* 0: y*(dy-s); 1: y*dy - y*s; 2: fmaf(-y, s, y*dy); 3: fmaf(y, dy, -(y*s)) */
    /* mutant knobs */
    int acc16;      /* s in a bf16 running accumulator */
    int no_sum;     /* dx = y*dy: the correction term forgotten */
    int sum_dy;     /* s = sum dy instead of sum y*dy */
    int skip_last;  /* dot loop bound N-1 */
    int y_row0;     /* y read with row stride 0 (always row 0): wrong broadcast */
    int store_rz;   /* truncating store regardless of the plan */
    /* PyTorch eager: m = y*dy stored in the input dtype, s = sum m, dx = m - y*s */
    int eager;      /* 1: dx = m - y*s; 2: dx = fmaf(-y, s, m) */
    int sum_raw;    /* eager mutant: s over the unrounded products, m - y*s with stored m */
    int m_rz;       /* eager mutant: m stored by truncation (RZ) */
} sb_cfg;

static nmo_status sb_run(const nmo_cand_args *a, nmo_err *err, const sb_cfg *c) {
    static const char op[] = "softmax_bwd";
    NMO_RETURN_IF_ERR(nmo_cu_check_args(a, op, 3, 1, err));
    int64_t M = 0, N = 0;
    const nmo_tensor *yt = &a->in[0];
    NMO_RETURN_IF_ERR(nmo_sf_rows(yt, op, "y", a->plan->in, &M, &N, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->in[1], op, "dy", a->plan->in, yt->ndims, yt->dims, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->out[0], op, "dx", a->plan->out, yt->ndims, yt->dims, err));
    if (c->skip_last && N < 2)
        return nmo_err_set(err, NMO_ERR_USAGE, "%s candidate: row length %lld too short", op, (long long)N);
    float *yv = nmo_cu_load(yt), *gv = nmo_cu_load(&a->in[1]);
    float *dx = (float *)malloc((size_t)(M * N) * sizeof(float));
    float *ones = (float *)malloc((size_t)N * sizeof(float));
    float *m = (float *)malloc((size_t)N * sizeof(float));
    if (!yv || !gv || !dx || !ones || !m) {
        free(yv), free(gv), free(dx), free(ones), free(m);
        return nmo_err_set(err, NMO_ERR_NOMEM, "%s candidate: out of memory", op);
    }
    for (int64_t j = 0; j < N; j++) ones[j] = 1.0f;
    for (int64_t i = 0; i < M; i++) {
        const float *y = yv + (c->y_row0 ? 0 : i * N), *g = gv + i * N;
        int64_t nred = c->skip_last ? N - 1 : N;
        float s;
        if (c->eager) {
            float *o = dx + i * N;
            for (int64_t j = 0; j < N; j++) {
                float p = y[j] * g[j];
                m[j] = c->m_rz ? nmo_sf_trunc_to(a->plan->in, p) : nmo_cu_round_to(a->plan->in, p);
            }
            s = c->sum_raw ? nmo_cu_reduce(y, g, nred, c->red, c->fma) : nmo_cu_reduce(m, NULL, nred, c->red, 0);
            for (int64_t j = 0; j < N; j++) o[j] = c->eager == 2 ? fmaf(-y[j], s, m[j]) : m[j] - y[j] * s;
            continue;
        }
        if (c->sum_dy) s = nmo_cu_reduce(g, ones, nred, c->red, c->fma);
        else if (c->acc16) s = nmo_cu_sum_acc16(y, g, nred, NMO_BF16, c->fma);
        else s = nmo_cu_reduce(y, g, nred, c->red, c->fma);
        float *o = dx + i * N;
        for (int64_t j = 0; j < N; j++) {
            if (c->no_sum) o[j] = y[j] * g[j];
            else if (c->form == 1) o[j] = y[j] * g[j] - y[j] * s;
            else if (c->form == 2) o[j] = fmaf(-y[j], s, y[j] * g[j]);
            else if (c->form == 3) o[j] = fmaf(y[j], g[j], -(y[j] * s));
            else o[j] = y[j] * (g[j] - s);
        }
    }
    nmo_cu_store(&a->out[0], dx, c->store_rz ? NMO_CU_ST_RZ : nmo_cu_plan_store(a->plan));
    free(yv), free(gv), free(dx), free(ones), free(m);
    return NMO_OK;
}

#define SB_DEFAULT .red = NMO_CU_RED_BLOCK256, .fma = 1, .form = 0

#define SB_CAND(fname, ...)                                                         \
    static nmo_status fname(const nmo_cand_args *a, nmo_err *err) {                  \
        static const sb_cfg c = {__VA_ARGS__};                                        \
        return sb_run(a, err, &c);                                                    \
    }

SB_CAND(sb_block256, SB_DEFAULT)
SB_CAND(sb_seq, .red = NMO_CU_RED_SEQ, .fma = 0, .form = 1)
SB_CAND(sb_warp32, .red = NMO_CU_RED_WARP32, .fma = 1, .form = 2)
SB_CAND(sb_vec4, .red = NMO_CU_RED_VEC4, .fma = 0, .form = 3)
SB_CAND(sb_pairwise, .red = NMO_CU_RED_PAIRWISE, .fma = 0, .form = 0)

SB_CAND(sb_mut_acc_bf16, SB_DEFAULT, .acc16 = 1)
SB_CAND(sb_mut_no_sum, SB_DEFAULT, .no_sum = 1)
SB_CAND(sb_mut_sum_dy, SB_DEFAULT, .sum_dy = 1)
SB_CAND(sb_mut_skip_last, SB_DEFAULT, .skip_last = 1)
SB_CAND(sb_mut_y_row0, SB_DEFAULT, .y_row0 = 1)
SB_CAND(sb_mut_store_rz, SB_DEFAULT, .store_rz = 1)
SB_CAND(sb_mut_eager, .red = NMO_CU_RED_WARP32, .eager = 1)
SB_CAND(sb_mut_eager_fma, .red = NMO_CU_RED_BLOCK256, .eager = 2)
SB_CAND(sb_mut_eager_sum_raw, .red = NMO_CU_RED_WARP32, .fma = 1, .eager = 1, .sum_raw = 1)
SB_CAND(sb_mut_eager_m_rz, .red = NMO_CU_RED_WARP32, .eager = 1, .m_rz = 1)

const nmo_cand nmo_cand_softmax_bwd[] = {
    {"softmax_bwd", "block256", 1,
     "256-thread block: strided fmaf dot y.dy + block tree, dx = y*(dy-s)", sb_block256, NULL},
    {"softmax_bwd", "seq", 1, "one thread per row: sequential y*dy then add, dx = y*dy - y*s", sb_seq, NULL},
    {"softmax_bwd", "warp32", 1, "one warp per row: fmaf dot + xor butterfly, dx = fmaf(-y, s, y*dy)",
     sb_warp32, NULL},
    {"softmax_bwd", "vec4", 1, "float4 loads: 4 partial dots (no FMA), dx = fmaf(y, dy, -(y*s))", sb_vec4, NULL},
    {"softmax_bwd", "pairwise", 1, "pairwise tree over rounded products, dx = y*(dy-s)", sb_pairwise, NULL},
    {"softmax_bwd", "mut_acc_bf16", 0, "MUTANT: dot y.dy in a bf16 running accumulator", sb_mut_acc_bf16, NULL},
    {"softmax_bwd", "mut_no_sum", 0, "MUTANT: correction term forgotten, dx = y*dy", sb_mut_no_sum, NULL},
    {"softmax_bwd", "mut_sum_dy", 0, "MUTANT: s = sum dy instead of sum y*dy", sb_mut_sum_dy, NULL},
    {"softmax_bwd", "mut_skip_last", 0, "MUTANT: dot loop skips the last element of the row",
     sb_mut_skip_last, NULL},
    {"softmax_bwd", "mut_y_row0", 0, "MUTANT: y read with row stride 0 (row 0 broadcast to every row)",
     sb_mut_y_row0, NULL},
    {"softmax_bwd", "mut_store_rz", 0, "MUTANT: final store truncates (RZ) instead of RNE", sb_mut_store_rz, NULL},
    {"softmax_bwd", "mut_eager", 0,
     "MUTANT under the fused plan: PyTorch eager, m = y*dy stored in the input dtype, warp sum of m, "
     "dx = m - y*s (correct under a plan with inter=<input dtype>)",
     sb_mut_eager, "inter={dtype}"},
    {"softmax_bwd", "mut_eager_fma", 0,
     "MUTANT under the fused plan: PyTorch eager form, block sum of the stored m, dx = fmaf(-y, s, m) "
     "(correct under a plan with inter=<input dtype>)",
     sb_mut_eager_fma, "inter={dtype}"},
    {"softmax_bwd", "mut_eager_sum_raw", 0,
     "MUTANT (also under inter=<dtype>): eager kernel summing the unrounded y*dy while subtracting "
     "from the stored m",
     sb_mut_eager_sum_raw, NULL},
    {"softmax_bwd", "mut_eager_m_rz", 0,
     "MUTANT (also under inter=<dtype>): eager kernel storing m = y*dy by truncation (RZ)", sb_mut_eager_m_rz, NULL},
};
const int nmo_cand_softmax_bwd_n = (int)(sizeof nmo_cand_softmax_bwd / sizeof nmo_cand_softmax_bwd[0]);
