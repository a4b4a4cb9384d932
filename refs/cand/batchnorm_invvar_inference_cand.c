/* numoracle: CPU candidates for batchnorm_invvar_inference — emulations of hipDNN-style
 * batchnorm inference kernels that take mean and inv_variance (no epsilon, no root).
 *
 *   in  x [N, C, S...] (2 to 5 dims), mean[C], inv_variance[C], w[C], b[C]  dtype plan->in
 *       (param[0] stats_fp32 = 1: the four per-channel tensors in fp32)
 *   out y, the shape of x                                                     dtype plan->out
 *
 * Rounding points (fp32): the products and sums of the kernel's form (explicit fmaf
 * where the kernel contracts), the store into plan->out. The first correct variant is the
 * default; mutants are the default kernel with one realistic bug each. */
#include "cand_util.h"

typedef enum {
    BNI_FUSED_FMA = 0, /* scale = w*iv; shift = fmaf(-mean, scale, b); fmaf(x, scale, shift)          */
    BNI_REFERENCE,     /* w*((x-mean)*iv) + b, no contraction (hipDNN's CPU reference, -ffp-contract=off) */
    BNI_DIRECT_FMA,    /* fmaf((x-mean)*iv, w, b)                                                      */
    BNI_FUSED_PLAIN    /* scale = w*iv; shift = b - mean*scale; x*scale + shift                        */
} bni_form;

typedef struct {
    bni_form form;
    int as_variance;   /* MUTANT: inv_variance read as a variance: scale = w * rsqrt(iv) */
    int no_bias;       /* MUTANT: + b dropped */
    int swap_wb;       /* MUTANT: scale and bias swapped */
    int plus_mean;     /* MUTANT: x + mean */
    int channels_last; /* MUTANT: channel index i mod C (NHWC indexing of NCHW data) */
} bni_cfg;

static nmo_status bni_run(const nmo_cand_args *a, nmo_err *err, const bni_cfg *c) {
    static const char op[] = "batchnorm_invvar_inference";
    NMO_RETURN_IF_ERR(nmo_cu_check_args(a, op, 5, 1, err));
    const nmo_tensor *x = &a->in[0];
    if (x->ndims < 2 || x->ndims > 5)
        return nmo_err_set(err, NMO_ERR_USAGE, "%s candidate: x has %d dims (2 to 5)", op, x->ndims);
    int64_t C = x->dims[1], S = 1;
    for (int k = 2; k < x->ndims; k++) S *= x->dims[k];
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(x, op, "x", a->plan->in, x->ndims, x->dims, err));
    static const char *const names[5] = {"x", "mean", "inv_variance", "w", "b"};
    /* param[0] stats_fp32: the per-channel tensors in fp32 (hipDNN's mixed types) */
    nmo_fmt st = a->n_param > 0 && a->param && a->param[0] == 1 ? NMO_FP32 : a->plan->in;
    for (int k = 1; k < 5; k++) NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->in[k], op, names[k], st, 1, &C, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->out[0], op, "y", a->plan->out, x->ndims, x->dims, err));
    int64_t n = nmo_cu_numel(x);
    float *v[5] = {0};
    for (int k = 0; k < 5; k++) v[k] = nmo_cu_load(&a->in[k]);
    float *yv = (float *)malloc((size_t)n * sizeof(float));
    if (!v[0] || !v[1] || !v[2] || !v[3] || !v[4] || !yv) {
        for (int k = 0; k < 5; k++) free(v[k]);
        free(yv);
        return nmo_err_set(err, NMO_ERR_NOMEM, "%s candidate: out of memory", op);
    }
    const float *xv = v[0], *mu = v[1], *iv = v[2];
    const float *w = c->swap_wb ? v[4] : v[3], *b = c->swap_wb ? v[3] : v[4];
    for (int64_t i = 0; i < n; i++) {
        int64_t ch = c->channels_last ? i % C : (i / S) % C;
        float r = c->as_variance ? nmo_cu_rsqrtf(iv[ch]) : iv[ch];
        float bb = c->no_bias ? 0.0f : b[ch], xi = xv[i], y;
        float d = c->plus_mean ? xi + mu[ch] : xi - mu[ch];
        switch (c->form) {
        case BNI_REFERENCE: y = w[ch] * (d * r) + bb; break;
        case BNI_DIRECT_FMA: y = fmaf(d * r, w[ch], bb); break;
        case BNI_FUSED_PLAIN: {
            float scale = w[ch] * r, shift = bb - mu[ch] * scale;
            y = xi * scale + shift;
            break;
        }
        case BNI_FUSED_FMA:
        default: {
            float scale = w[ch] * r;
            float m = c->plus_mean ? -mu[ch] : mu[ch];
            y = fmaf(xi, scale, fmaf(-m, scale, bb));
        }
        }
        yv[i] = y;
    }
    nmo_cu_store(&a->out[0], yv, nmo_cu_plan_store(a->plan));
    for (int k = 0; k < 5; k++) free(v[k]);
    free(yv);
    return NMO_OK;
}

#define BNI_CAND(fname, ...)                                                         \
    static nmo_status fname(const nmo_cand_args *a, nmo_err *err) {                  \
        static const bni_cfg c = {__VA_ARGS__};                                      \
        return bni_run(a, err, &c);                                                  \
    }

BNI_CAND(bni_fused_fma, .form = BNI_FUSED_FMA)
BNI_CAND(bni_reference, .form = BNI_REFERENCE)
BNI_CAND(bni_direct_fma, .form = BNI_DIRECT_FMA)
BNI_CAND(bni_fused_plain, .form = BNI_FUSED_PLAIN)
BNI_CAND(bni_mut_as_variance, .form = BNI_FUSED_FMA, .as_variance = 1)
BNI_CAND(bni_mut_no_bias, .form = BNI_FUSED_FMA, .no_bias = 1)
BNI_CAND(bni_mut_swap_wb, .form = BNI_FUSED_FMA, .swap_wb = 1)
BNI_CAND(bni_mut_plus_mean, .form = BNI_FUSED_FMA, .plus_mean = 1)
BNI_CAND(bni_mut_channels_last, .form = BNI_FUSED_FMA, .channels_last = 1)

const nmo_cand nmo_cand_batchnorm_invvar_inference[] = {
    {"batchnorm_invvar_inference", "fused_fma", 1,
     "scale=w*iv, shift=fmaf(-mean,scale,b), y=fmaf(x,scale,shift)", bni_fused_fma, NULL},
    {"batchnorm_invvar_inference", "reference", 1,
     "hipDNN's CPU reference: y = w*((x-mean)*iv) + b, no contraction", bni_reference, NULL},
    {"batchnorm_invvar_inference", "direct_fma", 1, "y = fmaf((x-mean)*iv, w, b)", bni_direct_fma, NULL},
    {"batchnorm_invvar_inference", "fused_plain", 1,
     "scale=w*iv, shift=b-mean*scale, y=x*scale+shift, no contraction", bni_fused_plain, NULL},
    {"batchnorm_invvar_inference", "mut_as_variance", 0, "MUTANT: inv_variance read as a variance, rsqrtf(iv)",
     bni_mut_as_variance, NULL},
    {"batchnorm_invvar_inference", "mut_no_bias", 0, "MUTANT: the bias dropped", bni_mut_no_bias, NULL},
    {"batchnorm_invvar_inference", "mut_swap_wb", 0, "MUTANT: scale and bias swapped", bni_mut_swap_wb, NULL},
    {"batchnorm_invvar_inference", "mut_plus_mean", 0, "MUTANT: x + mean", bni_mut_plus_mean, NULL},
    {"batchnorm_invvar_inference", "mut_channels_last", 0,
     "MUTANT: channel index i mod C on NCHW data (wrong broadcast stride)", bni_mut_channels_last, NULL},
};
const int nmo_cand_batchnorm_invvar_inference_n =
    (int)(sizeof nmo_cand_batchnorm_invvar_inference / sizeof nmo_cand_batchnorm_invvar_inference[0]);
