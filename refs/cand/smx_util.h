/* numoracle: helpers shared by the softmax-family candidates (log_softmax, softmax_bwd,
 * cross_entropy, cross_entropy_bwd, kl_div, jsd). Static inline, on top of cand_util.h.
 *
 *   nmo_sf_expf(kind, x) / nmo_sf_logf(kind, x): the exponential and logarithm a kernel
 *     uses: CUDA emulation (expf: correctly rounded +- 1 ulp, <= 1.5 ulp; logf: a faithful
 *     rounding chosen by a hash of the argument, <= 1 ulp, CUDA documents 1 ulp),
 *     correctly rounded, or the host libm (glibc expf/logf, < 1 ulp);
 *   nmo_sf_rowmax(x, n): exact row max (fmaxf; the order does not change the value);
 *   nmo_sf_label(v, V, ignore): a class label stored as an fp32 value, as an index, or -1
 *     when it equals ignore_index (or is out of range: a correct kernel must not read it);
 *   nmo_sf_check_rows: the common argument checks of a rows x N tensor;
 *   nmo_sf_trunc_to(fmt, f): f stored into bf16/fp16 by truncation (RZ; mutants). */
#ifndef NMO_SMX_UTIL_H
#define NMO_SMX_UTIL_H

#include "cand_util.h"

typedef enum { NMO_SF_CUDA = 0, NMO_SF_CR, NMO_SF_LIBM } nmo_sf_fn;

/* CUDA logf emulation: one of the two fp32 values around log(x) (a faithful rounding:
 * error < 1 ulp), picked by a hash of x; exact results (x = 1) stay exact. */
static inline float nmo_sf_logf_cuda(float x) {
    if (isnan(x) || x < 0.0f) return NAN;
    if (x == 0.0f) return -INFINITY;
    if (isinf(x)) return x;
    long double v = logl((long double)x);
    float r = (float)v;
    if ((long double)r == v) return r;
    float o = (long double)r < v ? nextafterf(r, INFINITY) : nextafterf(r, -INFINITY);
    return (nmo_cu_mix32(nmo_cu_f2u(x) ^ 0x4c4f4746U) & 1U) ? o : r;
}

static inline float nmo_sf_expf(nmo_sf_fn k, float x) {
    switch (k) {
    case NMO_SF_CR: return nmo_cu_expf_cr(x);
    case NMO_SF_LIBM: return expf(x);
    default: return nmo_cu_expf(x);
    }
}

static inline float nmo_sf_logf(nmo_sf_fn k, float x) {
    switch (k) {
    case NMO_SF_CR: return isnan(x) ? x : (float)logl((long double)x);
    case NMO_SF_LIBM: return logf(x);
    default: return nmo_sf_logf_cuda(x);
    }
}

static inline float nmo_sf_rowmax(const float *x, int64_t n) {
    float m = -INFINITY;
    for (int64_t j = 0; j < n; j++) m = fmaxf(m, x[j]);
    return m;
}

/* Label value -> class index in [0, V), or -1 for ignore_index / out of range. */
static inline int64_t nmo_sf_label(float v, int64_t V, double ignore) {
    if ((double)v == ignore || !(v >= 0.0f) || v >= (float)V || v != floorf(v)) return -1;
    return (int64_t)v;
}

/* x: rows x N of dtype `want` (any number of leading dims, last dim N). */
static inline nmo_status nmo_sf_rows(const nmo_tensor *t, const char *op, const char *what,
                                     nmo_fmt want, int64_t *M, int64_t *N, nmo_err *err) {
    if (t->ndims < 1 || t->ndims > NMO_MAX_DIMS)
        return nmo_err_set(err, NMO_ERR_USAGE, "%s candidate: %s has %d dims", op, what, t->ndims);
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(t, op, what, want, t->ndims, t->dims, err));
    *N = t->dims[t->ndims - 1];
    if (*N < 1) return nmo_err_set(err, NMO_ERR_USAGE, "%s candidate: %s rows are empty", op, what);
    *M = nmo_cu_numel(t) / *N;
    return NMO_OK;
}

/* f stored into fmt by truncation (RZ), read back; fp32: unchanged (mutant helper). */
static inline float nmo_sf_trunc_to(nmo_fmt fmt, float f) {
    if (fmt == NMO_BF16) return nmo_cu_bf16_to_f(nmo_cu_f_to_bf16_rz(f));
    if (fmt == NMO_FP16) return nmo_cu_fp16_to_f(nmo_cu_f_to_fp16_rz(f));
    return f;
}

#endif
