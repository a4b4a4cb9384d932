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
 * Mutants: the Liger kernel with one realistic bug each.
 *
 * PyTorch eager on a 16-bit dtype (2.11 on an H200: all 40 mean outputs reproduced, ls 0
 * and 0.1): log_softmax stored in the input dtype; nll_loss sums -lsm_y in fp32 and
 * divides by the count; with ls > 0 cross_entropy_loss_label_smoothing stores every
 * tensor it makes: nll, the per-row smoothing sums (0 for ignored rows), their sum, the
 * quotient by the count, (1-ls)*nll and sum*(ls/V), then adds the two. mut_eager* are
 * correct only under a plan with inter=<input dtype> (negative controls of the fused
 * plan); mut_eager_smooth_unmasked (ignored rows left in the smoothing sum: the
 * masked_fill forgotten) and mut_eager_lsm_rz (log_softmax stored by truncation) are
 * bugs of that program and FAIL under inter too. */
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
    /* PyTorch eager: log_softmax and every label-smoothing tensor stored in plan->in */
    int eager;
    int unmasked;       /* eager mutant: ignored rows' smoothing sums not zeroed */
    int lsm_rz;         /* eager mutant: log_softmax stored by truncation */
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
    const nmo_fmt fi = a->plan->in;
    if (c->eager) { /* rl: -lsm_y (0 ignored), rs: RN(-sum lsm) (0 ignored unless unmasked) */
        for (int64_t i = 0; i < M; i++) {
            int64_t y = nmo_sf_label(lv[i], V, ignore);
            const float *xr = xv + i * V;
            float m = nmo_sf_rowmax(xr, V);
            for (int64_t j = 0; j < V; j++) e[j] = nmo_sf_expf(c->exp, xr[j] - m);
            float l = nmo_sf_logf(c->log, nmo_cu_reduce(e, NULL, V, c->red, 0));
            for (int64_t j = 0; j < V; j++)
                e[j] = c->lsm_rz ? nmo_sf_trunc_to(fi, (xr[j] - m) - l) : nmo_cu_round_to(fi, (xr[j] - m) - l);
            rl[i] = y < 0 ? 0.0f : -e[y];
            rs[i] = y < 0 && !c->unmasked ? 0.0f : nmo_cu_round_to(fi, -nmo_cu_reduce(e, NULL, V, c->red, 0));
            n += y >= 0;
        }
    }
    for (int64_t i = 0; i < M && !c->eager; i++) {
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
    if (c->eager) {
        if (red == 0) {
            for (int64_t i = 0; i < M; i++)
                out[i] = ls > 0 ? nmo_cu_round_to(fi, omls_d * rl[i]) + nmo_cu_round_to(fi, rs[i] * c_d) : rl[i];
        } else {
            /* nll_loss: 32 strided partial sums, then in order; / the count */
            float part[32] = {0};
            for (int64_t i = 0; i < M; i++) part[i % 32] += rl[i];
            float nl = nmo_cu_reduce(part, NULL, 32, NMO_CU_RED_SEQ, 0);
            float nf = red == 2 ? 1.0f : (float)n;
            nl = red == 2 ? nl : nl / nf;
            out[0] = nl;
            if (ls > 0) {
                float S = nmo_cu_round_to(fi, nmo_cu_reduce(rs, NULL, M, c->red, 0));
                float ret = red == 2 ? S : nmo_cu_round_to(fi, S / nf);
                nl = nmo_cu_round_to(fi, nl);
                out[0] = nmo_cu_round_to(fi, omls_d * nl) + nmo_cu_round_to(fi, ret * c_d);
            }
        }
    } else if (red == 0) {
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
CE_CAND(ce_mut_eager, .red = NMO_CU_RED_BLOCK256, .exp = NMO_SF_CUDA, .log = NMO_SF_CUDA, .eager = 1)
CE_CAND(ce_mut_eager_smooth_unmasked, .red = NMO_CU_RED_BLOCK256, .exp = NMO_SF_CUDA, .log = NMO_SF_CUDA,
        .eager = 1, .unmasked = 1)
CE_CAND(ce_mut_eager_lsm_rz, .red = NMO_CU_RED_BLOCK256, .exp = NMO_SF_CUDA, .log = NMO_SF_CUDA, .eager = 1,
        .lsm_rz = 1)

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
    {"cross_entropy", "mut_eager", 0,
     "MUTANT under the fused plan: PyTorch eager, log_softmax and every smoothing tensor stored in the input "
     "dtype (correct under a plan with inter=<input dtype>)",
     ce_mut_eager, "inter={dtype}"},
    {"cross_entropy", "mut_eager_smooth_unmasked", 0,
     "MUTANT (also under inter=<dtype>): eager smoothing sum keeps the ignored rows (masked_fill forgotten)",
     ce_mut_eager_smooth_unmasked, NULL},
    {"cross_entropy", "mut_eager_lsm_rz", 0,
     "MUTANT (also under inter=<dtype>): eager log_softmax stored by truncation (RZ)", ce_mut_eager_lsm_rz, NULL},
};
const int nmo_cand_cross_entropy_n = (int)(sizeof nmo_cand_cross_entropy / sizeof nmo_cand_cross_entropy[0]);
