/* numoracle: CPU candidates for rms_norm_bias — emulations of hipDNN-style RMSNorm
 * forward kernels with a bias (y = w*(x*r) + b).
 *
 *   in  x[..., N], w[N], b[N]   dtype plan->in
 *   out y[..., N]               dtype plan->out
 *   param[0] eps (default 1e-6), converted to float as a kernel receives it.
 *
 * Rounding points (fp32): the sum of squares in the kernel's tree, the mean, ms + eps,
 * the reciprocal root, the products of x*r*w in the kernel's association, the bias add
 * (or one fmaf with the last product), the store into plan->out. The first correct
 * variant is the default; mutants are the default kernel with one realistic bug each. */
#include "cand_util.h"

typedef enum {
    RB_REFERENCE = 0, /* hipDNN's CPU reference: sequential ss, 1/sqrtf, w*(x*r) + b */
    RB_BLOCK_FMA,     /* block256 ss with FMA, rsqrtf, fmaf(x*r, w, b)               */
    RB_WARP_RW,       /* warp32 ss, ss*(1/N), rsqrtf, fmaf(r*w, x, b)                */
    RB_PAIRWISE       /* pairwise ss, 1/sqrtf, (x*w)*r + b                           */
} rb_form;

typedef struct {
    rb_form form;
    int no_bias;      /* MUTANT: the bias dropped (rms_norm) */
    int bias_inside;  /* MUTANT: the bias added before the scale, (x*r + b) * w */
    int bias_in_rms;  /* MUTANT: the statistic taken over x + b */
    int bias_off1;    /* MUTANT: reads b[j+1] (wrapping: a wrong bias index) */
} rb_cfg;

static nmo_status rb_run(const nmo_cand_args *a, nmo_err *err, const rb_cfg *c) {
    static const char op[] = "rms_norm_bias";
    NMO_RETURN_IF_ERR(nmo_cu_check_args(a, op, 3, 1, err));
    const nmo_tensor *x = &a->in[0];
    if (x->ndims < 1 || x->ndims > NMO_MAX_DIMS)
        return nmo_err_set(err, NMO_ERR_USAGE, "%s candidate: x has %d dims", op, x->ndims);
    int64_t N = x->dims[x->ndims - 1];
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(x, op, "x", a->plan->in, x->ndims, x->dims, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->in[1], op, "w", a->plan->in, 1, &N, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->in[2], op, "b", a->plan->in, 1, &N, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->out[0], op, "y", a->plan->out, x->ndims, x->dims, err));
    if (N < 1 || a->n_param < 0 || (a->n_param > 0 && !a->param))
        return nmo_err_set(err, NMO_ERR_USAGE, "%s candidate: bad row length or parameters", op);
    const float eps = (float)(a->n_param >= 1 ? a->param[0] : 1e-6);
    int64_t M = nmo_cu_numel(x) / N;
    float *xv = nmo_cu_load(x), *wv = nmo_cu_load(&a->in[1]), *bv = nmo_cu_load(&a->in[2]);
    float *yv = (float *)malloc((size_t)(M * N) * sizeof(float));
    float *xb = (float *)malloc((size_t)N * sizeof(float));
    if (!xv || !wv || !bv || !yv || !xb) {
        free(xv), free(wv), free(bv), free(yv), free(xb);
        return nmo_err_set(err, NMO_ERR_NOMEM, "%s candidate: out of memory", op);
    }
    static const nmo_cu_red red[4] = {NMO_CU_RED_SEQ, NMO_CU_RED_BLOCK256, NMO_CU_RED_WARP32, NMO_CU_RED_PAIRWISE};
    for (int64_t i = 0; i < M; i++) {
        const float *xr = xv + i * N, *sr = xr;
        if (c->bias_in_rms) {
            for (int64_t j = 0; j < N; j++) xb[j] = xr[j] + bv[j];
            sr = xb;
        }
        float ss = nmo_cu_reduce(sr, sr, N, red[c->form], c->form == RB_BLOCK_FMA);
        float ms = c->form == RB_WARP_RW ? ss * (1.0f / (float)N) : ss / (float)N;
        float r = c->form == RB_BLOCK_FMA || c->form == RB_WARP_RW ? nmo_cu_rsqrtf(ms + eps) : 1.0f / sqrtf(ms + eps);
        for (int64_t j = 0; j < N; j++) {
            float xj = xr[j], wj = wv[j], bj = c->no_bias ? 0.0f : bv[c->bias_off1 ? (j + 1) % N : j], v;
            if (c->bias_inside) v = (xj * r + bj) * wj;
            else if (c->form == RB_BLOCK_FMA) v = fmaf(xj * r, wj, bj);
            else if (c->form == RB_WARP_RW) v = fmaf(r * wj, xj, bj);
            else if (c->form == RB_PAIRWISE) v = (xj * wj) * r + bj;
            else v = wj * (xj * r) + bj;
            yv[i * N + j] = v;
        }
    }
    nmo_cu_store(&a->out[0], yv, nmo_cu_plan_store(a->plan));
    free(xv), free(wv), free(bv), free(yv), free(xb);
    return NMO_OK;
}

#define RB_CAND(fname, ...)                                                          \
    static nmo_status fname(const nmo_cand_args *a, nmo_err *err) {                  \
        static const rb_cfg c = {__VA_ARGS__};                                       \
        return rb_run(a, err, &c);                                                   \
    }

RB_CAND(rb_reference, .form = RB_REFERENCE)
RB_CAND(rb_block_fma, .form = RB_BLOCK_FMA)
RB_CAND(rb_warp_rw, .form = RB_WARP_RW)
RB_CAND(rb_pairwise, .form = RB_PAIRWISE)
RB_CAND(rb_mut_no_bias, .form = RB_REFERENCE, .no_bias = 1)
RB_CAND(rb_mut_bias_inside, .form = RB_REFERENCE, .bias_inside = 1)
RB_CAND(rb_mut_bias_in_rms, .form = RB_REFERENCE, .bias_in_rms = 1)
RB_CAND(rb_mut_bias_off1, .form = RB_REFERENCE, .bias_off1 = 1)

const nmo_cand nmo_cand_rms_norm_bias[] = {
    {"rms_norm_bias", "reference", 1, "hipDNN's CPU reference: sequential ss, 1/sqrtf, y = w*(x*r) + b", rb_reference,
     NULL},
    {"rms_norm_bias", "block_fma", 1, "block256 ss (FMA), rsqrtf, y = fmaf(x*r, w, b)", rb_block_fma, NULL},
    {"rms_norm_bias", "warp_rw", 1, "warp32 ss, ss*(1/N), rsqrtf, y = fmaf(r*w, x, b)", rb_warp_rw, NULL},
    {"rms_norm_bias", "pairwise", 1, "pairwise ss, 1/sqrtf, y = (x*w)*r + b", rb_pairwise, NULL},
    {"rms_norm_bias", "mut_no_bias", 0, "MUTANT: the bias dropped", rb_mut_no_bias, NULL},
    {"rms_norm_bias", "mut_bias_inside", 0, "MUTANT: the bias added before the scale, (x*r + b)*w",
     rb_mut_bias_inside, NULL},
    {"rms_norm_bias", "mut_bias_in_rms", 0, "MUTANT: the statistic taken over x + b", rb_mut_bias_in_rms, NULL},
    {"rms_norm_bias", "mut_bias_off1", 0, "MUTANT: reads b[j+1] (a wrong bias index)", rb_mut_bias_off1, NULL},
};
const int nmo_cand_rms_norm_bias_n = (int)(sizeof nmo_cand_rms_norm_bias / sizeof nmo_cand_rms_norm_bias[0]);
