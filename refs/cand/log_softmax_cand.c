/* numoracle: CPU candidates for log_softmax — emulations of GPU log-softmax forward
 * kernels (last dim; rows = product of the leading dims).
 *
 *   in  x[..., N]   dtype plan->in
 *   out y[..., N]   dtype plan->out
 *
 * Every kernel here works in fp32: exact row max m, d_j = x_j - m, e_j = expf(d_j), the
 * sum s in the kernel's reduction tree, l = logf(s), then y_j = (x_j - m) - l (PyTorch's
 * epilogue) or y_j = x_j - (m + l) (lse stored first), and the final store.
 * Mutants are the default kernel (block256) with one realistic bug each. */
#include "smx_util.h"

typedef struct {
    nmo_cu_red red;  /* reduction shape of the sum */
    nmo_sf_fn exp;   /* exponential */
    nmo_sf_fn log;   /* logarithm */
    int lse_first;   /* y = x - (m + l) instead of (x - m) - l */
    /* mutant knobs */
    int no_max;      /* e = exp(x), lse = log(sum exp(x)): overflows */
    int lse_no_m;    /* lse = log(s): the max is never added back */
    int acc16;       /* sum in a bf16 running accumulator */
    int skip_last;   /* sum loop bound N-1 */
    int log_of_sm;   /* y = log(e / s): log of the softmax (underflows to -inf) */
    int store_rz;    /* truncating store regardless of the plan */
} ls_cfg;

static nmo_status ls_run(const nmo_cand_args *a, nmo_err *err, const ls_cfg *c) {
    static const char op[] = "log_softmax";
    NMO_RETURN_IF_ERR(nmo_cu_check_args(a, op, 1, 1, err));
    int64_t M = 0, N = 0;
    NMO_RETURN_IF_ERR(nmo_sf_rows(&a->in[0], op, "x", a->plan->in, &M, &N, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->out[0], op, "y", a->plan->out, a->in[0].ndims,
                                          a->in[0].dims, err));
    if (c->skip_last && N < 2)
        return nmo_err_set(err, NMO_ERR_USAGE, "%s candidate: row length %lld too short", op, (long long)N);
    float *xv = nmo_cu_load(&a->in[0]);
    float *yv = (float *)malloc((size_t)(M * N) * sizeof(float));
    if (!xv || !yv) {
        free(xv), free(yv);
        return nmo_err_set(err, NMO_ERR_NOMEM, "%s candidate: out of memory", op);
    }
    for (int64_t i = 0; i < M; i++) {
        const float *xr = xv + i * N;
        float *e = yv + i * N; /* e_j kept in place of y */
        float m = c->no_max ? 0.0f : nmo_sf_rowmax(xr, N);
        for (int64_t j = 0; j < N; j++) e[j] = nmo_sf_expf(c->exp, xr[j] - m);
        int64_t nred = c->skip_last ? N - 1 : N;
        float s = c->acc16 ? nmo_cu_sum_acc16(e, NULL, nred, NMO_BF16, 0)
                           : nmo_cu_reduce(e, NULL, nred, c->red, 0);
        float l = nmo_sf_logf(c->log, s);
        float lse = c->lse_no_m ? l : m + l;
        for (int64_t j = 0; j < N; j++) {
            if (c->log_of_sm) e[j] = nmo_sf_logf(c->log, e[j] / s);
            else if (c->lse_first || c->lse_no_m) e[j] = xr[j] - lse;
            else e[j] = (xr[j] - m) - l;
        }
    }
    nmo_cu_store(&a->out[0], yv, c->store_rz ? NMO_CU_ST_RZ : nmo_cu_plan_store(a->plan));
    free(xv), free(yv);
    return NMO_OK;
}

#define LS_DEFAULT .red = NMO_CU_RED_BLOCK256, .exp = NMO_SF_CUDA, .log = NMO_SF_CUDA, .lse_first = 0

#define LS_CAND(fname, ...)                                                         \
    static nmo_status fname(const nmo_cand_args *a, nmo_err *err) {                  \
        static const ls_cfg c = {__VA_ARGS__};                                        \
        return ls_run(a, err, &c);                                                    \
    }

LS_CAND(ls_block256, LS_DEFAULT)
LS_CAND(ls_seq, .red = NMO_CU_RED_SEQ, .exp = NMO_SF_CR, .log = NMO_SF_CR, .lse_first = 1)
LS_CAND(ls_warp32, .red = NMO_CU_RED_WARP32, .exp = NMO_SF_LIBM, .log = NMO_SF_CUDA, .lse_first = 1)
LS_CAND(ls_vec4, .red = NMO_CU_RED_VEC4, .exp = NMO_SF_CUDA, .log = NMO_SF_LIBM, .lse_first = 0)
LS_CAND(ls_pairwise, .red = NMO_CU_RED_PAIRWISE, .exp = NMO_SF_CR, .log = NMO_SF_CUDA, .lse_first = 1)

LS_CAND(ls_mut_no_max, LS_DEFAULT, .no_max = 1)
LS_CAND(ls_mut_lse_no_m, LS_DEFAULT, .lse_no_m = 1)
LS_CAND(ls_mut_acc_bf16, LS_DEFAULT, .acc16 = 1)
LS_CAND(ls_mut_skip_last, LS_DEFAULT, .skip_last = 1)
LS_CAND(ls_mut_log_of_softmax, LS_DEFAULT, .log_of_sm = 1)
LS_CAND(ls_mut_store_rz, LS_DEFAULT, .store_rz = 1)

const nmo_cand nmo_cand_log_softmax[] = {
    {"log_softmax", "block256", 1,
     "256-thread block: max, expf (CUDA emulation) + block-tree sum, logf (CUDA emulation), (x-m)-l",
     ls_block256, NULL},
    {"log_softmax", "seq", 1,
     "one thread per row: sequential sum, correctly rounded expf/logf, x-(m+l)", ls_seq, NULL},
    {"log_softmax", "warp32", 1,
     "one warp per row: lane-strided sums + xor butterfly, libm expf, CUDA logf, x-(m+l)", ls_warp32, NULL},
    {"log_softmax", "vec4", 1, "float4 loads: 4 partial sums, CUDA expf, libm logf, (x-m)-l", ls_vec4, NULL},
    {"log_softmax", "pairwise", 1, "pairwise tree sum, correctly rounded expf, CUDA logf, x-(m+l)",
     ls_pairwise, NULL},
    {"log_softmax", "mut_no_max", 0, "MUTANT: max not subtracted, lse = log(sum expf(x)) (overflows)",
     ls_mut_no_max, NULL},
    {"log_softmax", "mut_lse_no_m", 0, "MUTANT: lse = log(s) without adding the max back: y = x - log(s)",
     ls_mut_lse_no_m, NULL},
    {"log_softmax", "mut_acc_bf16", 0, "MUTANT: sum of exponentials in a bf16 accumulator",
     ls_mut_acc_bf16, NULL},
    {"log_softmax", "mut_skip_last", 0, "MUTANT: sum loop skips the last element of the row",
     ls_mut_skip_last, NULL},
    {"log_softmax", "mut_log_of_softmax", 0,
     "MUTANT: y = logf(e/s), the log of the softmax (tiny probabilities underflow to -inf)",
     ls_mut_log_of_softmax, NULL},
    {"log_softmax", "mut_store_rz", 0, "MUTANT: final store truncates (RZ) instead of RNE",
     ls_mut_store_rz, NULL},
};
const int nmo_cand_log_softmax_n = (int)(sizeof nmo_cand_log_softmax / sizeof nmo_cand_log_softmax[0]);
