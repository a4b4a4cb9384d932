/* numoracle: CPU candidates for cross_entropy_bwd — emulations of the logits gradient of
 * fused cross-entropy kernels.
 *
 *   in  x[M, V]     logits, dtype plan->in
 *       labels[M]   fp32 integer values; ignore_index rows get dx = 0
 *   param ignore_index, label_smoothing, reduction (0 none, 1 mean, 2 sum), grad_output g
 *   out dx[M, V]    dtype plan->out
 *
 * liger (default): p = expf(x - m)/s, q = (p - eps)/n, at the label q += -((1-ls)/n),
 *   then q*g when g != 1 (Liger's second kernel; here in fp32, the fused plan).
 * textbook: p = expf(lp) with lp = (x - m) - l (the log_softmax backward route), then
 *   (p - t)*g/n with t_y = (1-ls) + eps, G = g/n, dx = (p - t)*G.
 * warp32: p = e*(1/s), dx = fmaf(p, G, -(t*G)) (nll backward then log_softmax backward).
 * Mutants: the liger kernel with one realistic bug each.
 *
 * PyTorch eager on a 16-bit dtype (autograd of F.cross_entropy, 2.11 on an H200: ls = 0
 * mean reproduced bit for bit, 0 mismatches of 8008 / 16384 elements per case): every
 * gradient tensor is stored in the input dtype. nll_loss_backward divides the incoming
 * gradient by total_weight, which the forward stored in the input dtype; with ls > 0 the
 * smoothing branch gives -RN(RN(g*RN(ls/V)) / n) to every class and autograd adds the two
 * branches at the label; log_softmax backward then writes G - expf(lsm)*sum(G) from the
 * stored lsm. mut_eager: correct only under a plan with inter=<input dtype> (a negative
 * control of the fused plan); mut_eager_grad_rz (gradient tensors stored by truncation)
 * and mut_eager_lsm_rz (log_softmax stored by truncation) are bugs of that program and
 * FAIL under inter too. */
#include "smx_util.h"

typedef struct {
    nmo_cu_red red;
    nmo_sf_fn exp, log;
    int form;           /* 0 liger, 1 textbook via exp(lp), 2 fmaf(p, G, -t*G) with e*(1/s) */
    /* mutant knobs */
    int acc16;          /* sum of exponentials in a bf16 accumulator */
    int no_onehot;      /* the -(1-ls)/n at the label forgotten */
    int mean_all_rows;  /* mean divides by M (ignored rows counted) */
    int ignore_grad;    /* ignored rows get the softmax gradient instead of 0 */
    int label_off1;     /* the onehot at (y+1) mod V */
    /* PyTorch eager (form 3): the gradient tensors and log_softmax stored in plan->in */
    int grad_rz;        /* eager mutant: gradient tensors stored by truncation */
    int lsm_rz;         /* eager mutant: log_softmax stored by truncation */
} cb_cfg;

static nmo_status cb_run(const nmo_cand_args *a, nmo_err *err, const cb_cfg *c) {
    static const char op[] = "cross_entropy_bwd";
    NMO_RETURN_IF_ERR(nmo_cu_check_args(a, op, 2, 1, err));
    if (!a->param || a->n_param != 4)
        return nmo_err_set(err, NMO_ERR_USAGE, "%s candidate: expected 4 parameters", op);
    int64_t M = 0, V = 0, L = 0, one = 1;
    NMO_RETURN_IF_ERR(nmo_sf_rows(&a->in[0], op, "x", a->plan->in, &M, &V, err));
    NMO_RETURN_IF_ERR(nmo_sf_rows(&a->in[1], op, "labels", NMO_FP32, &one, &L, err));
    if (L * one != M)
        return nmo_err_set(err, NMO_ERR_USAGE, "%s candidate: %lld labels for %lld rows", op,
                           (long long)(L * one), (long long)M);
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->out[0], op, "dx", a->plan->out, a->in[0].ndims,
                                          a->in[0].dims, err));
    const double ignore = a->param[0], ls = a->param[1], gd = a->param[3];
    const int red = (int)a->param[2];
    float *xv = nmo_cu_load(&a->in[0]), *lv = nmo_cu_load(&a->in[1]);
    float *dx = (float *)malloc((size_t)(M * V) * sizeof(float));
    if (!xv || !lv || !dx) {
        free(xv), free(lv), free(dx);
        return nmo_err_set(err, NMO_ERR_NOMEM, "%s candidate: out of memory", op);
    }
    int64_t n = 0;
    for (int64_t i = 0; i < M; i++) n += nmo_sf_label(lv[i], V, ignore) >= 0;
    if (c->mean_all_rows) n = M;
    const float nf = red == 1 ? (float)n : 1.0f, g = (float)gd, G = g / nf;
    const float lsf = (float)ls, eps = lsf / (float)V, omls = 1.0f - lsf, cy = omls / nf;
    const float ty = omls + eps;
    /* eager: the stored gradient of the log-softmax, gy at the label, gs elsewhere */
    const nmo_fmt fi = a->plan->in;
#define CB_ST(v) (c->grad_rz ? nmo_sf_trunc_to(fi, (v)) : nmo_cu_round_to(fi, (v)))
    float gy = 0.0f, gs = 0.0f;
    if (c->form == 3) {
        const float gr = CB_ST(g), omls_d = (float)(1.0 - ls), c_d = (float)(ls / (double)V);
        const float tw = nmo_cu_round_to(fi, (float)n); /* nll_loss's total_weight */
        float gn = ls > 0 ? CB_ST(gr * omls_d) : gr;
        float cnll = red == 1 ? CB_ST(gn / tw) : gn;
        if (ls > 0) {
            float t = CB_ST(gr * c_d);
            gs = -(red == 1 ? CB_ST(t / (float)n) : t);
            gy = CB_ST(-cnll + gs);
        } else {
            gy = -cnll;
        }
    }
    for (int64_t i = 0; i < M; i++) {
        const float *xr = xv + i * V;
        float *o = dx + i * V;
        int64_t y = nmo_sf_label(lv[i], V, ignore);
        if (y < 0 && !c->ignore_grad) {
            for (int64_t j = 0; j < V; j++) o[j] = 0.0f;
            continue;
        }
        if (c->label_off1 && y >= 0) y = (y + 1) % V;
        float m = nmo_sf_rowmax(xr, V);
        for (int64_t j = 0; j < V; j++) o[j] = nmo_sf_expf(c->exp, xr[j] - m);
        float s = c->acc16 ? nmo_cu_sum_acc16(o, NULL, V, NMO_BF16, 0) : nmo_cu_reduce(o, NULL, V, c->red, 0);
        float l = nmo_sf_logf(c->log, s), inv = 1.0f / s;
        if (c->form == 3) { /* log_softmax backward: G - expf(lsm) * sum G */
            float S = 0.0f;
            if (ls > 0) {
                float part[256] = {0};
                for (int64_t j = 0; j < V; j++) part[j % 256] += j == y ? gy : gs;
                S = nmo_cu_block_sum256(part);
            } else {
                S = gy;
            }
            for (int64_t j = 0; j < V; j++) {
                float d = (xr[j] - m) - l;
                float lsm = c->lsm_rz ? nmo_sf_trunc_to(fi, d) : nmo_cu_round_to(fi, d);
                o[j] = (j == y ? gy : gs) - nmo_sf_expf(c->exp, lsm) * S;
            }
            continue;
        }
        for (int64_t j = 0; j < V; j++) {
            int at = j == y && !c->no_onehot;
            if (c->form == 1) {
                float p = nmo_sf_expf(c->exp, (xr[j] - m) - l);
                o[j] = (p - (at ? ty : eps)) * G;
            } else if (c->form == 2) {
                float p = o[j] * inv;
                o[j] = fmaf(p, G, -((at ? ty : eps) * G));
            } else {
                float q = (o[j] / s - eps) / nf;
                if (at) q += -cy;
                o[j] = g == 1.0f ? q : q * g;
            }
        }
    }
#undef CB_ST
    nmo_cu_store(&a->out[0], dx, nmo_cu_plan_store(a->plan));
    free(xv), free(lv), free(dx);
    return NMO_OK;
}

#define CB_DEFAULT .red = NMO_CU_RED_BLOCK256, .exp = NMO_SF_CUDA, .log = NMO_SF_CUDA, .form = 0

#define CB_CAND(fname, ...)                                                         \
    static nmo_status fname(const nmo_cand_args *a, nmo_err *err) {                  \
        static const cb_cfg c = {__VA_ARGS__};                                        \
        return cb_run(a, err, &c);                                                    \
    }

CB_CAND(cb_liger, CB_DEFAULT)
CB_CAND(cb_textbook, .red = NMO_CU_RED_SEQ, .exp = NMO_SF_CR, .log = NMO_SF_CR, .form = 1)
CB_CAND(cb_warp32, .red = NMO_CU_RED_WARP32, .exp = NMO_SF_LIBM, .log = NMO_SF_CUDA, .form = 2)
CB_CAND(cb_vec4, .red = NMO_CU_RED_VEC4, .exp = NMO_SF_CUDA, .log = NMO_SF_LIBM, .form = 1)

CB_CAND(cb_mut_no_onehot, CB_DEFAULT, .no_onehot = 1)
CB_CAND(cb_mut_mean_all_rows, CB_DEFAULT, .mean_all_rows = 1)
CB_CAND(cb_mut_ignore_grad, CB_DEFAULT, .ignore_grad = 1)
CB_CAND(cb_mut_label_off1, CB_DEFAULT, .label_off1 = 1)
CB_CAND(cb_mut_acc_bf16, CB_DEFAULT, .acc16 = 1)
CB_CAND(cb_mut_eager, .red = NMO_CU_RED_BLOCK256, .exp = NMO_SF_CUDA, .log = NMO_SF_CUDA, .form = 3)
CB_CAND(cb_mut_eager_grad_rz, .red = NMO_CU_RED_BLOCK256, .exp = NMO_SF_CUDA, .log = NMO_SF_CUDA, .form = 3,
        .grad_rz = 1)
CB_CAND(cb_mut_eager_lsm_rz, .red = NMO_CU_RED_BLOCK256, .exp = NMO_SF_CUDA, .log = NMO_SF_CUDA, .form = 3,
        .lsm_rz = 1)

const nmo_cand nmo_cand_cross_entropy_bwd[] = {
    {"cross_entropy_bwd", "liger", 1,
     "Liger-style: block-tree sum, CUDA expf, (e/s - eps)/n, label adds -(1-ls)/n, then *g", cb_liger, NULL},
    {"cross_entropy_bwd", "textbook", 1,
     "log_softmax route: p = expf((x-m)-l) (correctly rounded), (p - t) * (g/n)", cb_textbook, NULL},
    {"cross_entropy_bwd", "warp32", 1, "warp butterfly sum, libm expf, p = e*(1/s), fmaf(p, G, -(t*G))",
     cb_warp32, NULL},
    {"cross_entropy_bwd", "vec4", 1, "float4 partial sums, CUDA expf, libm logf, p = expf(lp), (p - t)*G",
     cb_vec4, NULL},
    {"cross_entropy_bwd", "mut_no_onehot", 0, "MUTANT: the -(1-ls) at the label is forgotten (dx = p*g/n)",
     cb_mut_no_onehot, NULL},
    {"cross_entropy_bwd", "mut_mean_all_rows", 0, "MUTANT: mean divides by M (ignored rows counted)",
     cb_mut_mean_all_rows, NULL},
    {"cross_entropy_bwd", "mut_ignore_grad", 0, "MUTANT: ignored rows get the softmax gradient instead of 0",
     cb_mut_ignore_grad, NULL},
    {"cross_entropy_bwd", "mut_label_off1", 0, "MUTANT: onehot placed at (y+1) mod V", cb_mut_label_off1, NULL},
    {"cross_entropy_bwd", "mut_eager", 0,
     "MUTANT under the fused plan: PyTorch eager autograd, gradient tensors and log_softmax stored in the "
     "input dtype, G - expf(lsm)*sum G (correct under a plan with inter=<input dtype>)",
     cb_mut_eager, "inter={dtype}"},
    {"cross_entropy_bwd", "mut_eager_grad_rz", 0,
     "MUTANT (also under inter=<dtype>): eager gradient tensors stored by truncation (RZ)", cb_mut_eager_grad_rz, NULL},
    {"cross_entropy_bwd", "mut_eager_lsm_rz", 0,
     "MUTANT (also under inter=<dtype>): eager log_softmax stored by truncation (RZ)", cb_mut_eager_lsm_rz, NULL},
    {"cross_entropy_bwd", "mut_acc_bf16", 0, "MUTANT: sum of exponentials in a bf16 accumulator",
     cb_mut_acc_bf16, NULL},
};
const int nmo_cand_cross_entropy_bwd_n = (int)(sizeof nmo_cand_cross_entropy_bwd / sizeof nmo_cand_cross_entropy_bwd[0]);
