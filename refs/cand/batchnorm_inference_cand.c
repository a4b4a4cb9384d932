/* numoracle: CPU candidates for batchnorm_inference — emulations of BatchNorm inference
 * kernels (running statistics), NCHW or NHWC.
 *
 *   in  x (layout 0: [N, C, H, W], 1: [N, H, W, C]), running_mean[C], running_var[C],
 *       w[C], b[C]                          dtype plan->in
 *   out y, the layout of x                   dtype plan->out
 *   param[0] eps (default 1e-5, as a float), param[1] layout (0 nchw, 1 nhwc).
 *
 * Rounding points (fp32): var + eps, the root (rsqrtf emulation, or sqrtf then a
 * division), the scale/shift or direct products in the kernel's form (explicit fmaf),
 * the store into plan->out. The first correct variant is the default; mutants are the
 * default kernel with one realistic bug each. */
#include "cand_util.h"

typedef enum {
    BN_FUSED_FMA = 0, /* scale = w*rsqrtf(v); shift = fmaf(-mean, scale, b); fmaf(x, scale, shift) */
    BN_FUSED_PLAIN,   /* scale = w/sqrtf(v); shift = b - mean*scale; x*scale + shift            */
    BN_DIRECT,        /* invstd = 1/sqrtf(v); fmaf(w*(x-mean), invstd, b)       (PyTorch native) */
    BN_DIVISION       /* (x - mean) / sqrtf(v) * w + b                                             */
} bn_form;

typedef struct {
    bn_form form;
    int no_eps;       /* MUTANT: v = var */
    int eps_outside;  /* MUTANT: scale = w / (sqrtf(var) + eps) */
    int no_sqrt;      /* MUTANT: scale = w / (var + eps) */
    int other_layout; /* MUTANT: channel index of the other layout (NHWC indexing of NCHW data) */
    int shift_sign;   /* MUTANT: shift = b + mean*scale */
} bn_cfg;

static nmo_status bn_run(const nmo_cand_args *a, nmo_err *err, const bn_cfg *c) {
    static const char op[] = "batchnorm_inference";
    NMO_RETURN_IF_ERR(nmo_cu_check_args(a, op, 5, 1, err));
    const nmo_tensor *x = &a->in[0];
    if (x->ndims != 4) return nmo_err_set(err, NMO_ERR_USAGE, "batchnorm_inference candidate: x has %d dims", x->ndims);
    const float eps = (float)(a->n_param > 0 && a->param ? a->param[0] : 1e-5);
    int nhwc = a->n_param > 1 && a->param && a->param[1] == 1;
    int64_t C = nhwc ? x->dims[3] : x->dims[1], HW = nhwc ? x->dims[1] * x->dims[2] : x->dims[2] * x->dims[3];
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(x, op, "x", a->plan->in, 4, x->dims, err));
    static const char *const names[5] = {"x", "running_mean", "running_var", "w", "b"};
    for (int k = 1; k < 5; k++) NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->in[k], op, names[k], a->plan->in, 1, &C, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->out[0], op, "y", a->plan->out, 4, x->dims, err));
    int64_t n = nmo_cu_numel(x);
    float *v[5] = {0};
    for (int k = 0; k < 5; k++) v[k] = nmo_cu_load(&a->in[k]);
    float *yv = (float *)malloc((size_t)n * sizeof(float));
    if (!v[0] || !v[1] || !v[2] || !v[3] || !v[4] || !yv) {
        for (int k = 0; k < 5; k++) free(v[k]);
        free(yv);
        return nmo_err_set(err, NMO_ERR_NOMEM, "batchnorm_inference candidate: out of memory");
    }
    const float *xv = v[0], *mu = v[1], *var = v[2], *w = v[3], *b = v[4];
    for (int64_t i = 0; i < n; i++) {
        int idx_nhwc = nhwc != c->other_layout;
        int64_t ch = idx_nhwc ? i % C : (i / HW) % C;
        float vv = c->no_eps ? var[ch] : var[ch] + eps, xi = xv[i], y;
        float root = c->no_sqrt ? vv : sqrtf(vv);
        if (c->eps_outside) root = sqrtf(var[ch]) + eps;
        switch (c->form) {
        case BN_FUSED_PLAIN: {
            float scale = w[ch] / root, shift = b[ch] - mu[ch] * scale;
            y = xi * scale + shift;
            break;
        }
        case BN_DIRECT: {
            float invstd = 1.0f / root;
            y = fmaf(w[ch] * (xi - mu[ch]), invstd, b[ch]);
            break;
        }
        case BN_DIVISION: y = (xi - mu[ch]) / root * w[ch] + b[ch]; break;
        case BN_FUSED_FMA:
        default: {
            float r = (c->no_sqrt || c->eps_outside) ? 1.0f / root : nmo_cu_rsqrtf(vv);
            float scale = w[ch] * r;
            float shift = c->shift_sign ? fmaf(mu[ch], scale, b[ch]) : fmaf(-mu[ch], scale, b[ch]);
            y = fmaf(xi, scale, shift);
        }
        }
        yv[i] = y;
    }
    nmo_cu_store(&a->out[0], yv, nmo_cu_plan_store(a->plan));
    for (int k = 0; k < 5; k++) free(v[k]);
    free(yv);
    return NMO_OK;
}

#define BN_CAND(fname, ...)                                                          \
    static nmo_status fname(const nmo_cand_args *a, nmo_err *err) {                  \
        static const bn_cfg c = {__VA_ARGS__};                                       \
        return bn_run(a, err, &c);                                                   \
    }

BN_CAND(bn_fused_fma, .form = BN_FUSED_FMA)
BN_CAND(bn_direct, .form = BN_DIRECT)
BN_CAND(bn_division, .form = BN_DIVISION)
BN_CAND(bn_fused_plain, .form = BN_FUSED_PLAIN)
BN_CAND(bn_mut_no_eps, .form = BN_FUSED_FMA, .no_eps = 1)
BN_CAND(bn_mut_eps_outside, .form = BN_FUSED_FMA, .eps_outside = 1)
BN_CAND(bn_mut_no_sqrt, .form = BN_FUSED_FMA, .no_sqrt = 1)
BN_CAND(bn_mut_other_layout, .form = BN_FUSED_FMA, .other_layout = 1)
BN_CAND(bn_mut_shift_sign, .form = BN_FUSED_FMA, .shift_sign = 1)

const nmo_cand nmo_cand_batchnorm_inference[] = {
    {"batchnorm_inference", "fused_fma", 1,
     "cuDNN-style: scale=w*rsqrtf(var+eps), shift=fmaf(-mean,scale,b), y=fmaf(x,scale,shift)", bn_fused_fma, NULL},
    {"batchnorm_inference", "direct", 1,
     "PyTorch native: invstd=1/sqrtf(var+eps), y=fmaf(w*(x-mean), invstd, b)", bn_direct, NULL},
    {"batchnorm_inference", "division", 1, "y = (x-mean)/sqrtf(var+eps)*w + b, no contraction", bn_division, NULL},
    {"batchnorm_inference", "fused_plain", 1,
     "scale=w/sqrtf(var+eps), shift=b-mean*scale, y=x*scale+shift, no contraction", bn_fused_plain, NULL},
    {"batchnorm_inference", "mut_no_eps", 0, "MUTANT: eps dropped, rsqrtf(var)", bn_mut_no_eps, NULL},
    {"batchnorm_inference", "mut_eps_outside", 0, "MUTANT: eps outside the root, 1/(sqrtf(var)+eps)",
     bn_mut_eps_outside, NULL},
    {"batchnorm_inference", "mut_no_sqrt", 0, "MUTANT: scale = w/(var+eps), the root forgotten", bn_mut_no_sqrt, NULL},
    {"batchnorm_inference", "mut_other_layout", 0,
     "MUTANT: channel index of the other layout (i mod C on NCHW data: wrong broadcast stride)",
     bn_mut_other_layout, NULL},
    {"batchnorm_inference", "mut_shift_sign", 0, "MUTANT: shift = b + mean*scale", bn_mut_shift_sign, NULL},
};
const int nmo_cand_batchnorm_inference_n =
    (int)(sizeof nmo_cand_batchnorm_inference / sizeof nmo_cand_batchnorm_inference[0]);
