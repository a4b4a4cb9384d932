/* numoracle: CPU candidates for cross_entropy — emulations of fused cross-entropy forward
 * kernels (Liger-style: one program per row, the whole row in one block) and of PyTorch's
 * composite (log_softmax, nll_loss, smoothing term reduced separately).
 *
 *   in  x[M, V]       logits, dtype plan->in
 *       labels[M]     fp32 integer values; ignore_index rows give 0 and do not count
 *   param ignore_index, label_smoothing, reduction (0 none, 1 mean, 2 sum)
 *   out loss[M] (none) or loss[1], dtype plan->out
 *
 * Liger (default): m, e_j = expf(x_j - m) summed in a block tree, lse = m + logf(s),
 *   loss = lse - x_y; ls > 0: eps = ls/V, S = sum(-eps*x_j), smooth = fmaf(ls, lse, S),
 *   loss = fmaf(loss, 1-ls, smooth); mean: loss /= n per row; rows summed pairwise
 *   (torch.sum).
 * PyTorch: nll = (m - x_y) + l, sm = -sum_j ((x_j - m) - l); the nll and sm rows are
 *   reduced separately (sequentially), divided by n, combined as (1-ls)*N + S*(ls/V)
 *   with the constants rounded from double.
 * Mutants: the Liger kernel with one realistic bug each. */
#include "smx_util.h"

typedef struct {
    nmo_cu_red red;     /* reduction of the row sums */
    nmo_sf_fn exp, log;
    int torch;          /* PyTorch composite instead of the fused Liger kernel */
    int fma;            /* Liger: the two a*b+c steps contracted */
    int recip_n;        /* per-row x * (1/n) instead of x / n */
    int rows_seq;       /* rows summed sequentially instead of pairwise */
    /* mutant knobs */
    int acc16;          /* sum of exponentials in a bf16 running accumulator */
    int skip_last;      /* exp sum loop bound V-1 */
    int lse_no_m;       /* lse = logf(s): the max is never added back */
    int label_off1;     /* x[(y+1) mod V] read as the target logit */
    int mean_all_rows;  /* mean divides by M (ignored rows counted) */
    int ignore_clamp;   /* ignore_index not handled: the label is clamped into [0, V) */
} ce_cfg;

static float ce_pairwise(const float *v, int64_t n) {
    if (n <= 0) return 0.0f;
    if (n == 1) return v[0];
    return ce_pairwise(v, n / 2) + ce_pairwise(v + n / 2, n - n / 2);
}

static nmo_status ce_run(const nmo_cand_args *a, nmo_err *err, const ce_cfg *c) {
    static const char op[] = "cross_entropy";
    NMO_RETURN_IF_ERR(nmo_cu_check_args(a, op, 2, 1, err));
    if (!a->param || a->n_param != 3)
        return nmo_err_set(err, NMO_ERR_USAGE, "%s candidate: expected 3 parameters", op);
    int64_t M = 0, V = 0, L = 0, one = 1;
    NMO_RETURN_IF_ERR(nmo_sf_rows(&a->in[0], op, "x", a->plan->in, &M, &V, err));
    NMO_RETURN_IF_ERR(nmo_sf_rows(&a->in[1], op, "labels", NMO_FP32, &one, &L, err));
    if (L * one != M)
        return nmo_err_set(err, NMO_ERR_USAGE, "%s candidate: %lld labels for %lld rows", op,
                           (long long)(L * one), (long long)M);
    const double ignore = a->param[0], ls = a->param[1];
    const int red = (int)a->param[2];
    if (red < 0 || red > 2) return nmo_err_set(err, NMO_ERR_USAGE, "%s candidate: bad reduction", op);
    int64_t on = red == 0 ? M : 1;
    if (nmo_cu_numel(&a->out[0]) != on || a->out[0].dtype != a->plan->out)
        return nmo_err_set(err, NMO_ERR_USAGE, "%s candidate: loss must be [%lld] of the plan's out dtype",
                           op, (long long)on);
    if (c->skip_last && V < 2)
        return nmo_err_set(err, NMO_ERR_USAGE, "%s candidate: row length too short", op);
    float *xv = nmo_cu_load(&a->in[0]), *lv = nmo_cu_load(&a->in[1]);
    float *rl = (float *)malloc((size_t)M * sizeof(float)), *rn = (float *)malloc((size_t)M * sizeof(float));
    float *rs = (float *)malloc((size_t)M * sizeof(float)), *e = (float *)malloc((size_t)V * sizeof(float));
    if (!xv || !lv || !rl || !rn || !rs || !e) {
        free(xv), free(lv), free(rl), free(rn), free(rs), free(e);
        return nmo_err_set(err, NMO_ERR_NOMEM, "%s candidate: out of memory", op);
    }
    const float lsf = (float)ls, epsf = lsf / (float)V, omls_f = 1.0f - lsf;
    const float omls_d = (float)(1.0 - ls), c_d = (float)(ls / (double)V);
    int64_t n = 0, k = 0;
    for (int64_t i = 0; i < M; i++) {
        int64_t y = nmo_sf_label(lv[i], V, ignore);
        if (c->ignore_clamp && y < 0) y = 0;
        rl[i] = 0.0f;
        if (y < 0) continue;
        n++;
        if (c->label_off1) y = (y + 1) % V;
        const float *xr = xv + i * V;
        float m = nmo_sf_rowmax(xr, V);
        for (int64_t j = 0; j < V; j++) e[j] = nmo_sf_expf(c->exp, xr[j] - m);
        int64_t nred = c->skip_last ? V - 1 : V;
        float s = c->acc16 ? nmo_cu_sum_acc16(e, NULL, nred, NMO_BF16, 0) : nmo_cu_reduce(e, NULL, nred, c->red, 0);
        float l = nmo_sf_logf(c->log, s);
        float lse = c->lse_no_m ? l : m + l;
        if (c->torch) {
            rn[k] = c->lse_no_m ? lse - xr[y] : (m - xr[y]) + l;
            for (int64_t j = 0; j < V; j++) e[j] = (xr[j] - m) - l;
            rs[k] = -nmo_cu_reduce(e, NULL, V, NMO_CU_RED_SEQ, 0);
            rl[i] = omls_d * rn[k] + rs[k] * c_d;
            k++;
            continue;
        }
        float loss = lse - xr[y];
        if (ls > 0) {
            for (int64_t j = 0; j < V; j++) e[j] = -epsf * xr[j];
            float S = nmo_cu_reduce(e, NULL, V, c->red, 0);
            float smooth = c->fma ? fmaf(lsf, lse, S) : S + lsf * lse;
            loss = c->fma ? fmaf(loss, omls_f, smooth) : loss * omls_f + smooth;
        }
        rl[i] = loss;
    }
    float *out = (float *)malloc((size_t)on * sizeof(float));
    if (!out) {
        free(xv), free(lv), free(rl), free(rn), free(rs), free(e);
        return nmo_err_set(err, NMO_ERR_NOMEM, "%s candidate: out of memory", op);
    }
    if (red == 0) {
        memcpy(out, rl, (size_t)M * sizeof(float));
    } else {
        float nf = (float)(c->mean_all_rows ? M : n);
        if (red == 2) nf = 1.0f;
        if (c->torch) {
            float N = nmo_cu_reduce(rn, NULL, k, NMO_CU_RED_SEQ, 0), S = nmo_cu_reduce(rs, NULL, k, NMO_CU_RED_SEQ, 0);
            out[0] = omls_d * (N / nf) + (S / nf) * c_d;
        } else {
            /* Liger: each row divides by n before torch.sum over the rows */
            float inv = 1.0f / nf;
            for (int64_t i = 0; i < M; i++) rl[i] = c->recip_n ? rl[i] * inv : rl[i] / nf;
            out[0] = c->rows_seq ? nmo_cu_reduce(rl, NULL, M, NMO_CU_RED_SEQ, 0) : ce_pairwise(rl, M);
        }
    }
    nmo_cu_store(&a->out[0], out, nmo_cu_plan_store(a->plan));
    free(xv), free(lv), free(rl), free(rn), free(rs), free(e), free(out);
    return NMO_OK;
}

#define CE_DEFAULT .red = NMO_CU_RED_BLOCK256, .exp = NMO_SF_CUDA, .log = NMO_SF_CUDA, .fma = 1

#define CE_CAND(fname, ...)                                                         \
    static nmo_status fname(const nmo_cand_args *a, nmo_err *err) {                  \
        static const ce_cfg c = {__VA_ARGS__};                                        \
        return ce_run(a, err, &c);                                                    \
    }

CE_CAND(ce_liger, CE_DEFAULT)
CE_CAND(ce_torch, .red = NMO_CU_RED_SEQ, .exp = NMO_SF_CR, .log = NMO_SF_CR, .torch = 1)
CE_CAND(ce_warp32, .red = NMO_CU_RED_WARP32, .exp = NMO_SF_LIBM, .log = NMO_SF_CUDA, .fma = 0,
        .recip_n = 1, .rows_seq = 1)
CE_CAND(ce_vec4, .red = NMO_CU_RED_VEC4, .exp = NMO_SF_CUDA, .log = NMO_SF_LIBM, .fma = 1,
        .recip_n = 0, .rows_seq = 1)

CE_CAND(ce_mut_mean_all_rows, CE_DEFAULT, .mean_all_rows = 1)
CE_CAND(ce_mut_lse_no_m, CE_DEFAULT, .lse_no_m = 1)
CE_CAND(ce_mut_acc_bf16, CE_DEFAULT, .acc16 = 1)
CE_CAND(ce_mut_label_off1, CE_DEFAULT, .label_off1 = 1)
CE_CAND(ce_mut_skip_last, CE_DEFAULT, .skip_last = 1)
CE_CAND(ce_mut_ignore_clamp, CE_DEFAULT, .ignore_clamp = 1)

const nmo_cand nmo_cand_cross_entropy[] = {
    {"cross_entropy", "liger", 1,
     "Liger-style fused row kernel: block-tree sum, CUDA expf/logf, lse-x_y, fmaf smoothing, loss/n per row, pairwise row sum",
     ce_liger, NULL},
    {"cross_entropy", "torch", 1,
     "PyTorch composite: log_softmax, nll=(m-x_y)+l, smoothing sum reduced separately, sum/n, constants from double",
     ce_torch, NULL},
    {"cross_entropy", "warp32", 1,
     "warp per row: butterfly sum, libm expf, CUDA logf, no FMA, loss*(1/n), sequential row sum", ce_warp32, NULL},
    {"cross_entropy", "vec4", 1, "float4 partial sums, CUDA expf, libm logf, fmaf smoothing, sequential row sum",
     ce_vec4, NULL},
    {"cross_entropy", "mut_mean_all_rows", 0, "MUTANT: mean divides by M (ignored rows counted)",
     ce_mut_mean_all_rows, NULL},
    {"cross_entropy", "mut_lse_no_m", 0, "MUTANT: lse = log(s): the row max is never added back",
     ce_mut_lse_no_m, NULL},
    {"cross_entropy", "mut_acc_bf16", 0, "MUTANT: sum of exponentials in a bf16 accumulator", ce_mut_acc_bf16, NULL},
    {"cross_entropy", "mut_label_off1", 0, "MUTANT: target logit read at x[(y+1) mod V]", ce_mut_label_off1, NULL},
    {"cross_entropy", "mut_skip_last", 0, "MUTANT: exp-sum loop skips the last logit", ce_mut_skip_last, NULL},
    {"cross_entropy", "mut_ignore_clamp", 0,
     "MUTANT: ignore_index not handled: the label is clamped to 0 and the row counted", ce_mut_ignore_clamp, NULL},
};
const int nmo_cand_cross_entropy_n = (int)(sizeof nmo_cand_cross_entropy / sizeof nmo_cand_cross_entropy[0]);
