/* numoracle: CPU candidates for jsd — emulations of Liger's generalized JSD forward
 * (loss only) and of a PyTorch-style reference.
 *
 *   in  log_q[..., N]  student log-probabilities X, dtype plan->in
 *       log_p[..., N]  teacher log-probabilities Y, dtype plan->in
 *       z_q, z_p       (not read)
 *   param beta
 *   out loss[1]        dtype plan->out
 *
 * liger (default): compensated exps Q = expf(X - mx)*expf(mx), P likewise, bP = beta*P,
 *   oQ = (1-beta)*Q, M = bP + oQ, l = fmaf(-M, logf(M), fmaf(bP, Y, oQ*X)), each l
 *   scaled by 1/n, per-row block-tree sums, rows added pairwise.
 * textbook: Q = expf(X), P = expf(Y), M = torch.lerp(Q, P, beta), l = beta*(P*(Y - lM)) +
 *   (1-beta)*(Q*(X - lM)), one sequential sum, / n.
 * warp32: direct exps, the Liger expression without FMA, warp row sums, * (1/n).
 * Mutants: the liger kernel with one realistic bug each. */
#include "smx_util.h"

typedef struct {
    nmo_cu_red red;
    nmo_sf_fn exp, log;
    int form;         /* 0 Liger (fmaf), 1 two KLs with lerp M, 2 Liger without FMA */
    int direct;       /* Q = expf(X) instead of the compensated form */
    int scale_elem;   /* each element * (1/n) (Liger) instead of the total */
    int recip;        /* total * (1/n) instead of total / n */
    /* mutant knobs */
    int no_scale;     /* the 1/n forgotten */
    int geometric_m;  /* M = exp(beta*Y + (1-beta)*X): geometric instead of arithmetic mixture */
    int acc16;        /* per-row sums in a bf16 accumulator */
    int p_only;       /* only beta*KL(P||M): l = bP*(Y - lM) */
    int skip_last;    /* per-row sum loop bound N-1 */
    int m_unweighted; /* M = P + Q: the mixture weights forgotten */
} jsd_cfg;

static float jsd_pairwise(const float *v, int64_t n) {
    if (n <= 0) return 0.0f;
    if (n == 1) return v[0];
    return jsd_pairwise(v, n / 2) + jsd_pairwise(v + n / 2, n - n / 2);
}

static nmo_status jsd_run(const nmo_cand_args *a, nmo_err *err, const jsd_cfg *c) {
    static const char op[] = "jsd";
    NMO_RETURN_IF_ERR(nmo_cu_check_args(a, op, 4, 1, err));
    if (!a->param || a->n_param != 1)
        return nmo_err_set(err, NMO_ERR_USAGE, "%s candidate: expected 1 parameter", op);
    int64_t M = 0, N = 0;
    const nmo_tensor *xt = &a->in[0];
    NMO_RETURN_IF_ERR(nmo_sf_rows(xt, op, "log_q", a->plan->in, &M, &N, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->in[1], op, "log_p", a->plan->in, xt->ndims, xt->dims, err));
    if (nmo_cu_numel(&a->out[0]) != 1 || a->out[0].dtype != a->plan->out)
        return nmo_err_set(err, NMO_ERR_USAGE, "%s candidate: loss must be [1] of the plan's out dtype", op);
    if (c->skip_last && N < 2) return nmo_err_set(err, NMO_ERR_USAGE, "%s candidate: rows too short", op);
    const double beta = a->param[0];
    float *xv = nmo_cu_load(xt), *yv = nmo_cu_load(&a->in[1]);
    float *l = (float *)malloc((size_t)(M * N) * sizeof(float)), *rs = (float *)malloc((size_t)M * sizeof(float));
    if (!xv || !yv || !l || !rs) {
        free(xv), free(yv), free(l), free(rs);
        return nmo_err_set(err, NMO_ERR_NOMEM, "%s candidate: out of memory", op);
    }
    const float bf = (float)beta, ob = 1.0f - bf, scale = 1.0f / (float)M;
    for (int64_t i = 0; i < M; i++) {
        const float *X = xv + i * N, *Y = yv + i * N;
        float mx = beta == 0 ? nmo_sf_rowmax(Y, N) : beta == 1 ? nmo_sf_rowmax(X, N)
                                                                : fmaxf(nmo_sf_rowmax(X, N), nmo_sf_rowmax(Y, N));
        float emx = nmo_sf_expf(c->exp, mx);
        for (int64_t j = 0; j < N; j++) {
            float x = X[j], y = Y[j], v;
            float Q = c->direct ? nmo_sf_expf(c->exp, x) : nmo_sf_expf(c->exp, x - mx) * emx;
            float P = c->direct ? nmo_sf_expf(c->exp, y) : nmo_sf_expf(c->exp, y - mx) * emx;
            if (beta == 0) v = P * (y - x);
            else if (beta == 1) v = Q * (x - y);
            else {
                float bP = bf * P, oQ = ob * Q, Mm;
                if (c->geometric_m) Mm = nmo_sf_expf(c->exp, bf * y + ob * x);
                else if (c->m_unweighted) Mm = P + Q;
                else if (c->form == 1) Mm = bf < 0.5f ? Q + bf * (P - Q) : P - (P - Q) * ob;
                else Mm = bP + oQ;
                float lM = nmo_sf_logf(c->log, Mm);
                if (c->p_only) v = bP * (y - lM);
                else if (c->form == 1) v = bf * (P * (y - lM)) + ob * (Q * (x - lM));
                else if (c->form == 2) v = (bP * y + oQ * x) - Mm * lM;
                else v = fmaf(-Mm, lM, fmaf(bP, y, oQ * x));
            }
            l[i * N + j] = c->scale_elem && !c->no_scale ? v * scale : v;
        }
    }
    float s;
    int64_t nred = c->skip_last ? N - 1 : N;
    if (c->form == 1) {
        s = nmo_cu_reduce(l, NULL, M * N, NMO_CU_RED_SEQ, 0);
    } else {
        for (int64_t i = 0; i < M; i++)
            rs[i] = c->acc16 ? nmo_cu_sum_acc16(l + i * N, NULL, nred, NMO_BF16, 0)
                             : nmo_cu_reduce(l + i * N, NULL, nred, c->red, 0);
        s = jsd_pairwise(rs, M);
    }
    if (!c->scale_elem && !c->no_scale) s = c->recip ? s * (1.0f / (float)M) : s / (float)M;
    nmo_cu_store(&a->out[0], &s, nmo_cu_plan_store(a->plan));
    free(xv), free(yv), free(l), free(rs);
    return NMO_OK;
}

#define JSD_DEFAULT .red = NMO_CU_RED_BLOCK256, .exp = NMO_SF_CUDA, .log = NMO_SF_CUDA, .form = 0, \
                    .scale_elem = 1

#define JSD_CAND(fname, ...)                                                        \
    static nmo_status fname(const nmo_cand_args *a, nmo_err *err) {                  \
        static const jsd_cfg c = {__VA_ARGS__};                                       \
        return jsd_run(a, err, &c);                                                   \
    }

JSD_CAND(jsd_liger, JSD_DEFAULT)
JSD_CAND(jsd_textbook, .exp = NMO_SF_CR, .log = NMO_SF_CR, .form = 1, .direct = 1)
JSD_CAND(jsd_warp32, .red = NMO_CU_RED_WARP32, .exp = NMO_SF_LIBM, .log = NMO_SF_LIBM, .form = 2, .direct = 1,
         .recip = 1)

JSD_CAND(jsd_mut_no_scale, JSD_DEFAULT, .no_scale = 1)
JSD_CAND(jsd_mut_geometric_m, JSD_DEFAULT, .geometric_m = 1)
JSD_CAND(jsd_mut_acc_bf16, JSD_DEFAULT, .acc16 = 1)
JSD_CAND(jsd_mut_p_only, JSD_DEFAULT, .p_only = 1)
JSD_CAND(jsd_mut_skip_last, JSD_DEFAULT, .skip_last = 1)
JSD_CAND(jsd_mut_m_unweighted, JSD_DEFAULT, .m_unweighted = 1)

const nmo_cand nmo_cand_jsd[] = {
    {"jsd", "liger", 1,
     "Liger: compensated expf, fmaf(-M, logf(M), fmaf(bP, Y, oQ*X)) * (1/n), block-tree row sums, pairwise rows",
     jsd_liger, NULL},
    {"jsd", "textbook", 1,
     "direct expf, M = lerp(Q, P, beta), beta*P*(Y-lM) + (1-beta)*Q*(X-lM), sequential sum, / n", jsd_textbook, NULL},
    {"jsd", "warp32", 1, "direct libm expf/logf, Liger expression without FMA, warp row sums, * (1/n)",
     jsd_warp32, NULL},
    {"jsd", "mut_no_scale", 0, "MUTANT: the 1/n (batchmean) forgotten", jsd_mut_no_scale, NULL},
    {"jsd", "mut_geometric_m", 0, "MUTANT: M = exp(beta*Y + (1-beta)*X), a geometric mixture",
     jsd_mut_geometric_m, NULL},
    {"jsd", "mut_acc_bf16", 0, "MUTANT: per-row sums in a bf16 accumulator", jsd_mut_acc_bf16, NULL},
    {"jsd", "mut_p_only", 0, "MUTANT: only beta*KL(P||M): the (1-beta)*KL(Q||M) term dropped", jsd_mut_p_only, NULL},
    {"jsd", "mut_skip_last", 0, "MUTANT: per-row sum loop skips the last element", jsd_mut_skip_last, NULL},
    {"jsd", "mut_m_unweighted", 0, "MUTANT: M = P + Q (mixture weights forgotten)", jsd_mut_m_unweighted, NULL},
};
const int nmo_cand_jsd_n = (int)(sizeof nmo_cand_jsd / sizeof nmo_cand_jsd[0]);
