/* numoracle: CPU candidates for kl_div — emulations of KL-divergence loss kernels
 * (PyTorch semantics: target * (log target - input), 0 where target == 0).
 *
 *   in  input[..., N]   log-probabilities, dtype plan->in
 *       target[..., N]  probabilities (log-probabilities when log_target), dtype plan->in
 *       z_input, z_target  (not read)
 *   param reduction (0 none, 1 mean, 2 sum, 3 batchmean), log_target
 *   out loss[..., N] (none) or loss[1], dtype plan->out
 *
 * liger (default): l = t*(logf(t) - x) (exp(t)*(t - x) for log_target), per-row sums in
 *   a 256-thread block tree, the row sums added pairwise (torch.sum), then / divisor.
 * torch: xlogy(t, t) - t*x elementwise, sum over all elements pairwise, then / divisor.
 * warp32: fmaf(t, logf(t), -(t*x)), per-row warp butterfly sums, rows added in order,
 *   then * (1/divisor).
 * With log_target every variant computes exp(t)*(t - x) (its exp and reduction differ).
 * Mutants: the liger kernel with one realistic bug each.
 *
 * PyTorch eager (F.kl_div on a 16-bit dtype, 2.11 on an H200, all 22 batchmean outputs
 * reproduced): one elementwise kernel per operation, each storing in the input dtype:
 * a = xlogy(t, t), b = t*x, l = a - b (log_target: e = exp(t), d = t - x, l = e*d), one
 * reduction, and batchmean divides the stored sum. mut_eager: correct only under a plan
 * with inter=<input dtype> (a negative control of the fused plan); mut_eager_log_nan
 * (t*log(t) without xlogy: NaN where t == 0) and mut_eager_rz (every stored
 * intermediate truncated) are bugs of that eager program and FAIL under inter too. */
#include "smx_util.h"

typedef struct {
    nmo_cu_red red;      /* per-row sum shape (liger, warp32) */
    nmo_sf_fn exp, log;
    int form;            /* 0: t*(lt - x); 1: t*lt - t*x; 2: fmaf(t, lt, -(t*x)) */
    int flat;            /* one pairwise sum over all elements (torch) */
    int recip;           /* s * (1/d) instead of s / d */
    /* mutant knobs */
    int as_mean;         /* batchmean divides by numel instead of shape[0] */
    int no_log;          /* t*(t - x): log of the target forgotten */
    int acc16;           /* per-row sums in a bf16 accumulator */
    int swapped;         /* KL(input || target): exp(x)*(x - log t) */
    int skip_last;       /* per-row sum loop bound N-1 */
    /* PyTorch eager: every elementwise result and batchmean's sum stored in plan->in */
    int eager;
    int log_nan;         /* eager mutant: t*log(t) instead of xlogy (NaN where t == 0) */
    int rz;              /* eager mutant: the stored intermediates truncated (RZ) */
} kl_cfg;

/* An eager intermediate stored in the input dtype (truncated for the rz mutant). */
static float kl_store(const kl_cfg *c, nmo_fmt f, float v) {
    return c->rz ? nmo_sf_trunc_to(f, v) : nmo_cu_round_to(f, v);
}

static float kl_pairwise(const float *v, int64_t n) {
    if (n <= 0) return 0.0f;
    if (n == 1) return v[0];
    return kl_pairwise(v, n / 2) + kl_pairwise(v + n / 2, n - n / 2);
}

static nmo_status kl_run(const nmo_cand_args *a, nmo_err *err, const kl_cfg *c) {
    static const char op[] = "kl_div";
    NMO_RETURN_IF_ERR(nmo_cu_check_args(a, op, 4, 1, err));
    if (!a->param || a->n_param != 2)
        return nmo_err_set(err, NMO_ERR_USAGE, "%s candidate: expected 2 parameters", op);
    int64_t M = 0, N = 0;
    const nmo_tensor *xt = &a->in[0];
    NMO_RETURN_IF_ERR(nmo_sf_rows(xt, op, "input", a->plan->in, &M, &N, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->in[1], op, "target", a->plan->in, xt->ndims, xt->dims, err));
    const int red = (int)a->param[0], logt = a->param[1] != 0;
    if (red < 0 || red > 3) return nmo_err_set(err, NMO_ERR_USAGE, "%s candidate: bad reduction", op);
    int64_t on = red == 0 ? M * N : 1;
    if (nmo_cu_numel(&a->out[0]) != on || a->out[0].dtype != a->plan->out)
        return nmo_err_set(err, NMO_ERR_USAGE, "%s candidate: loss must have %lld elements of the plan's out dtype",
                           op, (long long)on);
    if (c->skip_last && N < 2) return nmo_err_set(err, NMO_ERR_USAGE, "%s candidate: rows too short", op);
    float *xv = nmo_cu_load(xt), *tv = nmo_cu_load(&a->in[1]);
    float *l = (float *)malloc((size_t)(M * N) * sizeof(float)), *rs = (float *)malloc((size_t)M * sizeof(float));
    if (!xv || !tv || !l || !rs) {
        free(xv), free(tv), free(l), free(rs);
        return nmo_err_set(err, NMO_ERR_NOMEM, "%s candidate: out of memory", op);
    }
    const nmo_fmt fi = a->plan->in;
    for (int64_t i = 0; i < M * N; i++) {
        float x = xv[i], t = tv[i];
        if (c->eager) {
            if (!logt) {
                float xl = t == 0.0f && !c->log_nan ? 0.0f : t * nmo_sf_logf(c->log, t);
                l[i] = kl_store(c, fi, kl_store(c, fi, xl) - kl_store(c, fi, t * x));
            } else {
                l[i] = kl_store(c, fi, kl_store(c, fi, nmo_sf_expf(c->exp, t)) * kl_store(c, fi, t - x));
            }
            continue;
        }
        if (c->swapped) {
            float lt = logt ? t : nmo_sf_logf(c->log, t);
            l[i] = nmo_sf_expf(c->exp, x) * (x - lt);
            continue;
        }
        if (!logt) {
            if (t == 0.0f) { l[i] = 0.0f; continue; }
            float lt = c->no_log ? t : nmo_sf_logf(c->log, t);
            l[i] = c->form == 1 ? t * lt - t * x : c->form == 2 ? fmaf(t, lt, -(t * x)) : t * (lt - x);
        } else {
            float e = nmo_sf_expf(c->exp, t);
            if (c->no_log) e = t;
            l[i] = e * (t - x);
        }
    }
    float out1 = 0.0f;
    if (red != 0) {
        float s;
        if (c->flat) {
            s = kl_pairwise(l, M * N);
        } else {
            int64_t nred = c->skip_last ? N - 1 : N;
            for (int64_t i = 0; i < M; i++)
                rs[i] = c->acc16 ? nmo_cu_sum_acc16(l + i * N, NULL, nred, NMO_BF16, 0)
                                 : nmo_cu_reduce(l + i * N, NULL, nred, c->red, 0);
            s = c->red == NMO_CU_RED_WARP32 ? nmo_cu_reduce(rs, NULL, M, NMO_CU_RED_SEQ, 0) : kl_pairwise(rs, M);
        }
        float d = red == 1 || (red == 3 && c->as_mean) ? (float)(M * N) : red == 3 ? (float)xt->dims[0] : 1.0f;
        if (c->eager && red == 3) s = kl_store(c, fi, s); /* torch.kl_div(sum), then / size(0) */
        out1 = c->recip ? s * (1.0f / d) : s / d;
    }
    nmo_cu_store(&a->out[0], red == 0 ? l : &out1, nmo_cu_plan_store(a->plan));
    free(xv), free(tv), free(l), free(rs);
    return NMO_OK;
}

#define KL_DEFAULT .red = NMO_CU_RED_BLOCK256, .exp = NMO_SF_CUDA, .log = NMO_SF_CUDA, .form = 0

#define KL_CAND(fname, ...)                                                         \
    static nmo_status fname(const nmo_cand_args *a, nmo_err *err) {                  \
        static const kl_cfg c = {__VA_ARGS__};                                        \
        return kl_run(a, err, &c);                                                    \
    }

KL_CAND(kl_liger, KL_DEFAULT)
KL_CAND(kl_torch, .exp = NMO_SF_CR, .log = NMO_SF_CR, .form = 1, .flat = 1)
KL_CAND(kl_warp32, .red = NMO_CU_RED_WARP32, .exp = NMO_SF_LIBM, .log = NMO_SF_LIBM, .form = 2, .recip = 1)

KL_CAND(kl_mut_torch_eager, .exp = NMO_SF_CUDA, .log = NMO_SF_CUDA, .flat = 1, .recip = 1, .eager = 1)
KL_CAND(kl_mut_batchmean_as_mean, KL_DEFAULT, .as_mean = 1)
KL_CAND(kl_mut_no_log, KL_DEFAULT, .no_log = 1)
KL_CAND(kl_mut_acc_bf16, KL_DEFAULT, .acc16 = 1)
KL_CAND(kl_mut_swapped, KL_DEFAULT, .swapped = 1)
KL_CAND(kl_mut_skip_last, KL_DEFAULT, .skip_last = 1)
KL_CAND(kl_mut_eager, .exp = NMO_SF_CUDA, .log = NMO_SF_CUDA, .flat = 1, .eager = 1)
KL_CAND(kl_mut_eager_log_nan, .exp = NMO_SF_CUDA, .log = NMO_SF_CUDA, .flat = 1, .eager = 1, .log_nan = 1)
KL_CAND(kl_mut_eager_rz, .exp = NMO_SF_CUDA, .log = NMO_SF_CUDA, .flat = 1, .eager = 1, .rz = 1)

const nmo_cand nmo_cand_kl_div[] = {
    {"kl_div", "liger", 1,
     "Liger-style: t*(logf(t)-x) (CUDA logf), block-tree row sums, pairwise over rows, /divisor", kl_liger, NULL},
    {"kl_div", "torch", 1, "PyTorch: xlogy(t,t) - t*x (correctly rounded log), one pairwise sum, /divisor",
     kl_torch, NULL},
    {"kl_div", "warp32", 1, "fmaf(t, logf(t), -(t*x)) (libm), warp row sums, rows in order, *(1/divisor)",
     kl_warp32, NULL},
    {"kl_div", "mut_torch_eager", 0,
     "PyTorch eager in the dtype: xlogy(t,t), t*x and their difference each stored, fp32 sum stored, "
     "*(1/batch) (correct under inter=<dtype>)",
     kl_mut_torch_eager, "inter={dtype}"},
    {"kl_div", "mut_batchmean_as_mean", 0, "MUTANT: batchmean divides by numel (mean) instead of the batch",
     kl_mut_batchmean_as_mean, NULL},
    {"kl_div", "mut_no_log", 0, "MUTANT: log of the target forgotten: t*(t - x)", kl_mut_no_log, NULL},
    {"kl_div", "mut_acc_bf16", 0, "MUTANT: per-row sums in a bf16 accumulator", kl_mut_acc_bf16, NULL},
    {"kl_div", "mut_swapped", 0, "MUTANT: arguments swapped: KL(input || target) = exp(x)*(x - log t)",
     kl_mut_swapped, NULL},
    {"kl_div", "mut_skip_last", 0, "MUTANT: per-row sum loop skips the last element", kl_mut_skip_last, NULL},
    {"kl_div", "mut_eager", 0,
     "MUTANT under the fused plan: PyTorch eager, xlogy, t*x and their difference each stored in the input "
     "dtype, pairwise sum, batchmean of the stored sum (correct under a plan with inter=<input dtype>)",
     kl_mut_eager, "inter={dtype}"},
    {"kl_div", "mut_eager_log_nan", 0,
     "MUTANT (also under inter=<dtype>): eager t*log(t) without xlogy, NaN where t == 0", kl_mut_eager_log_nan, NULL},
    {"kl_div", "mut_eager_rz", 0,
     "MUTANT (also under inter=<dtype>): eager intermediates stored by truncation (RZ)", kl_mut_eager_rz, NULL},
};
const int nmo_cand_kl_div_n = (int)(sizeof nmo_cand_kl_div / sizeof nmo_cand_kl_div[0]);
