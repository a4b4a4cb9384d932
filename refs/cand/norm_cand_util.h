/* numoracle: CPU emulation of the two-pass normalization kernels shared by the
 * layer_norm and group_norm candidates (fp32 arithmetic, bit-faithful: explicit fmaf,
 * the kernel's reduction shape, rsqrtf emulation; see cand_util.h).
 *
 * One "segment" is a row of layer_norm or a (sample, group) block of group_norm: the
 * statistics are taken over the segment and the affine step uses per-element weight and
 * bias values (w[c], b[c] of the element's channel for group_norm). */
#ifndef NMO_NORM_CAND_UTIL_H
#define NMO_NORM_CAND_UTIL_H

#include "cand_util.h"

typedef enum {
    NMO_NC_DIRECT_FMA = 0, /* xh = d*rstd; y = fmaf(xh, w, b)              (Triton, Liger) */
    NMO_NC_DIRECT_DW,      /* y = (d*w)*rstd + b, no contraction                           */
    NMO_NC_DIVISION,       /* y = (d / sqrtf(var+eps)) * w + b, no contraction            */
    NMO_NC_FUSED           /* a = w*rstd; sh = fmaf(-mean, a, b); y = fmaf(x, a, sh)     */
} nmo_nc_form;

typedef struct {
    nmo_cu_red red;   /* reduction shape of both passes */
    int fma;          /* sum of squares: acc = fmaf(d, d, acc) vs acc + d*d */
    int mean_recip;   /* mean = sum * (1.0f/N) vs sum / N (the same for var) */
    int rsqrt_emul;   /* rstd = rsqrtf(v) (CUDA emulation) vs 1.0f / sqrtf(v) */
    nmo_nc_form form; /* affine step */
    /* mutant knobs */
    int acc16;        /* NMO_BF16/NMO_FP16: sequential 16-bit accumulators for both sums */
    int naive_var;    /* var = E[x^2] - mean^2 (one pass: sum and sum of squares) */
    int var_n1;       /* var = ss / (N-1) (unbiased) */
    int no_eps;       /* rstd = rsqrt(var) */
    int skip_last;    /* both reductions skip the last element (still / N) */
    int no_center;    /* y = x * rstd * w + b (mean not subtracted in the affine step) */
} nmo_nc_cfg;

static inline float nmo_nc_sum(const float *a, const float *b, int64_t n, const nmo_nc_cfg *c) {
    return c->acc16 ? nmo_cu_sum_acc16(a, b, n, (nmo_fmt)c->acc16, c->fma)
                    : nmo_cu_reduce(a, b, n, c->red, c->fma);
}

/* Statistics of x[0..n-1]; d (scratch, n floats) receives x - mean. */
static inline void nmo_nc_stats(const float *x, float *d, int64_t n, float eps, const nmo_nc_cfg *c,
                                float *mean, float *rstd, float *sdev) {
    const int64_t nr = c->skip_last ? n - 1 : n;
    const float nf = (float)n, inv_n = 1.0f / nf;
    float sum = nmo_nc_sum(x, NULL, nr, c);
    float m = c->mean_recip ? sum * inv_n : sum / nf;
    float var;
    if (c->naive_var) {
        float sq = nmo_nc_sum(x, x, nr, c);
        float ex2 = c->mean_recip ? sq * inv_n : sq / nf;
        var = ex2 - m * m;
    } else {
        for (int64_t j = 0; j < n; j++) d[j] = x[j] - m;
        float ss = nmo_nc_sum(d, d, nr, c);
        var = c->var_n1 ? ss / (float)(n - 1) : c->mean_recip ? ss * inv_n : ss / nf;
    }
    for (int64_t j = 0; j < n; j++) d[j] = x[j] - m;
    float v = c->no_eps ? var : var + eps;
    *mean = m;
    *rstd = c->rsqrt_emul ? nmo_cu_rsqrtf(v) : 1.0f / sqrtf(v);
    *sdev = sqrtf(v);
}

/* y = (x - mean) * rstd * w + b in the configured form. */
static inline float nmo_nc_affine(float x, float d, float mean, float rstd, float sdev, float w,
                                  float b, const nmo_nc_cfg *c) {
    if (c->no_center) d = x;
    switch (c->form) {
    case NMO_NC_DIRECT_DW: return (d * w) * rstd + b;
    case NMO_NC_DIVISION: return (d / sdev) * w + b;
    case NMO_NC_FUSED: {
        float a = w * rstd;
        float sh = fmaf(-(c->no_center ? 0.0f : mean), a, b);
        return fmaf(x, a, sh);
    }
    case NMO_NC_DIRECT_FMA:
    default: return fmaf(d * rstd, w, b);
    }
}

/* Normalize one segment: y[j] for x[j], with per-element weight w[j] and bias b[j].
 * d: scratch of n floats. */
static inline void nmo_nc_segment(const float *x, const float *w, const float *b, float *y, float *d,
                                  int64_t n, float eps, const nmo_nc_cfg *c) {
    float mean, rstd, sdev;
    nmo_nc_stats(x, d, n, eps, c, &mean, &rstd, &sdev);
    for (int64_t j = 0; j < n; j++) y[j] = nmo_nc_affine(x[j], d[j], mean, rstd, sdev, w[j], b[j], c);
}

/* Parameter i of the argument block as a float (def when absent). */
static inline double nmo_nc_param(const nmo_cand_args *a, int i, double def) {
    return a->n_param > i && a->param ? a->param[i] : def;
}

#endif
