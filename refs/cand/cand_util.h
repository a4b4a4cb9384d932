/* numoracle: small inline helpers for the CPU candidates (refs/cand/).
 *
 * Everything here emulates what a GPU kernel computes, bit for bit, in fp32 (`float`,
 * SSE2, -ffp-contract=off): storage decode/encode of the supported formats, the
 * reduction trees kernels use (32-lane xor butterfly, 256-thread blocks of 8 warps,
 * 4-wide vectors, k-tiles, split-K, pairwise), and emulations of CUDA's non-correctly
 * rounded rsqrtf/expf. Nothing here depends on liboracle (only the public headers for
 * the types); errors go through nmo_err_set.
 *
 * Conventions: `nmo_cu_` prefix; all helpers are static inline so each candidate file
 * is self-contained. Outputs are deterministic: perturbations are hashes of input bits. */
#ifndef NMO_CAND_UTIL_H
#define NMO_CAND_UTIL_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "numoracle/cand.h"
#include "numoracle/conv16.h"
#include "numoracle/status.h"
#include "numoracle/tensor.h"

/* Hot loops that call fmaf may be cloned for x86 FMA hardware (runtime dispatch through
 * an ifunc; flatten inlines the helpers into each clone). Bit-identical: fmaf is one
 * exact rounding either way; without the clone it is a libm call (matmul loops about
 * 2.7x slower). GCC only: clang refuses target_clones together with flatten. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__ELF__) && \
    defined(__has_attribute)
#if __has_attribute(target_clones) && !defined(NMO_CU_NO_CLONES)
#define NMO_CU_FMA_CLONES __attribute__((target_clones("fma", "default"), flatten))
#endif
#endif
#ifndef NMO_CU_FMA_CLONES
#define NMO_CU_FMA_CLONES
#endif

/* ---------------------------------------------------------------- bit casts, hash */

static inline uint32_t nmo_cu_f2u(float f) { return nmo_f2u(f); } /* numoracle/conv16.h */
static inline float nmo_cu_u2f(uint32_t u) { return nmo_u2f(u); }
/* 32-bit integer mixer (lowbias32, C. Wellons): deterministic, input-dependent choice. */
static inline uint32_t nmo_cu_mix32(uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

/* ---------------------------------------------------------------- 16-bit formats */

/* The conversions are numoracle/conv16.h's (one copy, the GPU kernels use it too): bit
 * manipulation, bit-identical to the kernels' stores. The nmo_cu_ names stay because the
 * campaign's mutation profile swaps them (rne -> rz, apps/campaign/mutate.c). */
static inline float nmo_cu_bf16_to_f(uint16_t b) { return nmo_bf16_to_f(b); }
static inline uint16_t nmo_cu_f_to_bf16_rne(float f) { return nmo_f_to_bf16_rne(f); }
static inline uint16_t nmo_cu_f_to_bf16_rz(float f) { return nmo_f_to_bf16_rz(f); }
static inline float nmo_cu_fp16_to_f(uint16_t b) { return nmo_fp16_to_f(b); }
static inline uint16_t nmo_cu_f_to_fp16_rne(float f) { return nmo_f_to_fp16_rne(f); }
static inline uint16_t nmo_cu_f_to_fp16_rz(float f) { return nmo_f_to_fp16_rz(f); }
static inline float nmo_cu_round_bf16(float f) { return nmo_round_bf16(f); }
static inline float nmo_cu_round_fp16(float f) { return nmo_round_fp16(f); }
/* Round f into fmt (fp32: unchanged; bf16/fp16: RNE). */
static inline float nmo_cu_round_to(nmo_fmt fmt, float f) {
    if (fmt == NMO_BF16) return nmo_cu_round_bf16(f);
    if (fmt == NMO_FP16) return nmo_cu_round_fp16(f);
    return f;
}

/* ---------------------------------------------------------------- fp8 decode */

/* Exact decode of the four 8-bit formats (input side only). */
static inline float nmo_cu_fp8_to_f(nmo_fmt fmt, uint8_t b) {
    int ebits, mbits, bias;
    switch (fmt) {
    case NMO_FP8_E4M3: ebits = 4; mbits = 3; bias = 7; break;
    case NMO_FP8_E5M2: ebits = 5; mbits = 2; bias = 15; break;
    case NMO_FP8_E4M3FNUZ: ebits = 4; mbits = 3; bias = 8; break;
    case NMO_FP8_E5M2FNUZ: ebits = 5; mbits = 2; bias = 16; break;
    default: return NAN;
    }
    int s = b >> 7;
    int e = (b >> mbits) & ((1 << ebits) - 1);
    int m = b & ((1 << mbits) - 1);
    int emax_field = (1 << ebits) - 1;
    if (fmt == NMO_FP8_E4M3FNUZ || fmt == NMO_FP8_E5M2FNUZ) {
        if (b == 0x80) return NAN; /* the only NaN; no -0, no inf */
    } else if (fmt == NMO_FP8_E4M3) {
        if (e == emax_field && m == (1 << mbits) - 1) return s ? -NAN : NAN; /* no inf */
    } else { /* E5M2: IEEE-like */
        if (e == emax_field) return m ? (s ? -NAN : NAN) : (s ? -INFINITY : INFINITY);
    }
    float v = e == 0 ? ldexpf((float)m, 1 - bias - mbits)
                     : ldexpf((float)((1 << mbits) | m), e - bias - mbits);
    return s ? -v : v;
}

/* ---------------------------------------------------------------- storage access */

/* Formats a candidate can read (decode exactly to float) and write. tf32 is stored as
 * 32 bits whose low 13 mantissa bits are zero, so it decodes as fp32. */
static inline int nmo_cu_can_read(nmo_fmt f) {
    return f == NMO_FP32 || f == NMO_TF32 || f == NMO_BF16 || f == NMO_FP16 ||
           f == NMO_FP8_E4M3 || f == NMO_FP8_E5M2 || f == NMO_FP8_E4M3FNUZ ||
           f == NMO_FP8_E5M2FNUZ;
}
static inline int nmo_cu_can_write(nmo_fmt f) {
    return f == NMO_FP32 || f == NMO_BF16 || f == NMO_FP16;
}

static inline float nmo_cu_decode(nmo_fmt f, const void *data, int64_t off) {
    switch (f) {
    case NMO_FP32:
    case NMO_TF32: {
        float v;
        memcpy(&v, (const char *)data + off * 4, 4);
        return v;
    }
    case NMO_BF16: {
        uint16_t b;
        memcpy(&b, (const char *)data + off * 2, 2);
        return nmo_cu_bf16_to_f(b);
    }
    case NMO_FP16: {
        uint16_t b;
        memcpy(&b, (const char *)data + off * 2, 2);
        return nmo_cu_fp16_to_f(b);
    }
    default: return nmo_cu_fp8_to_f(f, ((const uint8_t *)data)[off]);
    }
}

/* Store rounding of the final write. RD/RU/SR are derived from RZ and "away". */
typedef enum {
    NMO_CU_ST_RNE = 0,
    NMO_CU_ST_RZ,
    NMO_CU_ST_RD,
    NMO_CU_ST_RU,
    NMO_CU_ST_SR /* per element RD or RU, chosen by a hash of (index, value bits) */
} nmo_cu_store_mode;

/* Bits of v rounded into 16-bit format f (bf16/fp16) under a directed/nearest mode. */
static inline uint16_t nmo_cu_enc16(nmo_fmt f, float v, nmo_cu_store_mode mode, int64_t idx) {
    uint16_t rne = f == NMO_BF16 ? nmo_cu_f_to_bf16_rne(v) : nmo_cu_f_to_fp16_rne(v);
    if (mode == NMO_CU_ST_RNE || isnan(v)) return rne;
    uint16_t rz = f == NMO_BF16 ? nmo_cu_f_to_bf16_rz(v) : nmo_cu_f_to_fp16_rz(v);
    if (mode == NMO_CU_ST_RZ) return rz;
    float back = f == NMO_BF16 ? nmo_cu_bf16_to_f(rz) : nmo_cu_fp16_to_f(rz);
    if (back == v) return rz; /* exact */
    uint16_t away = (uint16_t)(rz + 1); /* next magnitude (max finite + 1 = inf) */
    int down; /* 1: RD */
    if (mode == NMO_CU_ST_SR) {
        uint32_t h = nmo_cu_mix32(nmo_cu_f2u(v) ^ nmo_cu_mix32((uint32_t)idx ^ (uint32_t)(idx >> 32)));
        down = (int)(h & 1U);
    } else {
        down = mode == NMO_CU_ST_RD;
    }
    /* RD: positive -> rz, negative -> away; RU the opposite. */
    int pos = !signbit(v);
    return (down == pos) ? rz : away;
}

static inline void nmo_cu_encode(nmo_fmt f, void *data, int64_t off, float v,
                                 nmo_cu_store_mode mode, int64_t idx) {
    if (f == NMO_FP32) {
        memcpy((char *)data + off * 4, &v, 4);
    } else {
        uint16_t b = nmo_cu_enc16(f, v, mode, idx);
        memcpy((char *)data + off * 2, &b, 2);
    }
}

/* The store rounding a correct kernel uses under plan p (default rne). */
static inline nmo_cu_store_mode nmo_cu_plan_store(const nmo_plan *p) {
    if (p->round_sr) return NMO_CU_ST_SR;
    switch (p->round) {
    case NMO_RZ: return NMO_CU_ST_RZ;
    case NMO_RD: return NMO_CU_ST_RD;
    case NMO_RU: return NMO_CU_ST_RU;
    default: return NMO_CU_ST_RNE;
    }
}

static inline int64_t nmo_cu_numel(const nmo_tensor *t) {
    int64_t n = 1;
    for (int d = 0; d < t->ndims; d++) n *= t->dims[d];
    return n;
}
static inline int nmo_cu_packed(const nmo_tensor *t) {
    int64_t s = 1;
    for (int d = t->ndims - 1; d >= 0; d--) {
        if (t->dims[d] != 1 && t->strides[d] != s) return 0;
        s *= t->dims[d];
    }
    return 1;
}
/* Storage offset (elements) of logical row-major element i. */
static inline int64_t nmo_cu_offset(const nmo_tensor *t, int64_t i) {
    int64_t off = 0;
    for (int d = t->ndims - 1; d >= 0; d--) {
        off += (i % t->dims[d]) * t->strides[d];
        i /= t->dims[d];
    }
    return off;
}

/* Decode a whole tensor to a packed row-major float array (caller frees); NULL on OOM. */
static inline float *nmo_cu_load(const nmo_tensor *t) {
    int64_t n = nmo_cu_numel(t);
    float *v = (float *)malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    if (!v) return NULL;
    if (nmo_cu_packed(t)) {
        for (int64_t i = 0; i < n; i++) v[i] = nmo_cu_decode(t->dtype, t->data, i);
    } else {
        for (int64_t i = 0; i < n; i++) v[i] = nmo_cu_decode(t->dtype, t->data, nmo_cu_offset(t, i));
    }
    return v;
}
/* Write every element of t from packed row-major values, rounding per mode. */
static inline void nmo_cu_store(nmo_tensor *t, const float *v, nmo_cu_store_mode mode) {
    int64_t n = nmo_cu_numel(t);
    int packed = nmo_cu_packed(t);
    for (int64_t i = 0; i < n; i++)
        nmo_cu_encode(t->dtype, t->data, packed ? i : nmo_cu_offset(t, i), v[i], mode, i);
}

/* ---------------------------------------------------------------- argument checks */

static inline const char *nmo_cu_fmt_name(nmo_fmt f) {
    static const char *const names[] = {"fp64", "fp32", "tf32", "bf16", "fp16", "fp8_e4m3",
                                        "fp8_e5m2", "fp8_e4m3fnuz", "fp8_e5m2fnuz"};
    return (unsigned)f < sizeof names / sizeof names[0] ? names[f] : "?";
}

/* Common checks of the argument block: counts, plan, supported dtypes. */
static inline nmo_status nmo_cu_check_args(const nmo_cand_args *a, const char *op, int n_in,
                                           int n_out, nmo_err *err) {
    if (!a || !a->plan || !a->in || !a->out)
        return nmo_err_set(err, NMO_ERR_USAGE, "%s candidate: missing arguments", op);
    if (a->n_in != n_in || a->n_out != n_out)
        return nmo_err_set(err, NMO_ERR_USAGE, "%s candidate: expected %d inputs and %d outputs, got %d and %d",
                           op, n_in, n_out, a->n_in, a->n_out);
    if (!nmo_cu_can_read(a->plan->in))
        return nmo_err_set(err, NMO_ERR_UNSUPPORTED, "%s candidate: input dtype %s not supported",
                           op, nmo_cu_fmt_name(a->plan->in));
    if (!nmo_cu_can_write(a->plan->out))
        return nmo_err_set(err, NMO_ERR_UNSUPPORTED, "%s candidate: output dtype %s not supported",
                           op, nmo_cu_fmt_name(a->plan->out));
    return NMO_OK;
}

/* Check one tensor: storage present, dtype, ndims and dims. */
static inline nmo_status nmo_cu_check_tensor(const nmo_tensor *t, const char *op, const char *what,
                                             nmo_fmt want, int ndims, const int64_t *dims,
                                             nmo_err *err) {
    if (!t->data)
        return nmo_err_set(err, NMO_ERR_USAGE, "%s candidate: tensor %s has no storage", op, what);
    if (t->dtype != want)
        return nmo_err_set(err, NMO_ERR_USAGE, "%s candidate: tensor %s has dtype %s, plan says %s",
                           op, what, nmo_cu_fmt_name(t->dtype), nmo_cu_fmt_name(want));
    if (t->ndims != ndims)
        return nmo_err_set(err, NMO_ERR_USAGE, "%s candidate: tensor %s has %d dims, expected %d",
                           op, what, t->ndims, ndims);
    for (int d = 0; d < ndims; d++)
        if (t->dims[d] != dims[d])
            return nmo_err_set(err, NMO_ERR_USAGE,
                               "%s candidate: tensor %s dim %d is %lld, expected %lld", op, what, d,
                               (long long)t->dims[d], (long long)dims[d]);
    return NMO_OK;
}

/* ---------------------------------------------------------------- CUDA math emulation */

/* One fp32 step up (dir > 0) or down (dir < 0) from finite r. */
static inline float nmo_cu_nudge(float r, int dir) {
    if (dir == 0) return r;
    return nextafterf(r, dir > 0 ? INFINITY : -INFINITY);
}
/* Deterministic direction in {-1, 0, +1} from the argument's bits. */
static inline int nmo_cu_dir(float x, uint32_t salt) {
    return (int)(nmo_cu_mix32(nmo_cu_f2u(x) ^ salt) % 3U) - 1;
}

/* Correctly rounded 1/sqrt(x) (via long double: the exact value is never a float
 * midpoint, and 64-bit intermediate error cannot cross one in practice). */
static inline float nmo_cu_rsqrtf_cr(float x) {
    if (isnan(x)) return x;
    if (x == 0.0f) return copysignf(INFINITY, x);
    if (x < 0.0f) return NAN;
    if (isinf(x)) return 0.0f;
    return (float)(1.0L / sqrtl((long double)x));
}

/* CUDA rsqrtf emulation: NOT correctly rounded. The correctly rounded value moved by
 * 0 or 1 fp32 ulp in a deterministic, input-dependent direction; exact results (x an
 * even power of two) stay exact. Error <= 1.5 ulp; CUDA documents rsqrtf <= 2 ulp. */
static inline float nmo_cu_rsqrtf(float x) {
    float r = nmo_cu_rsqrtf_cr(x);
    if (!(x > 0.0f) || isinf(x)) return r;
    int e;
    float m = frexpf(x, &e); /* x = m 2^e, m in [0.5, 1) */
    if (m == 0.5f && ((e - 1) & 1) == 0) return r;
    return nmo_cu_nudge(r, nmo_cu_dir(x, 0x52535154U));
}

/* Correctly rounded exp in fp32 (via expl; exp(x) of a nonzero float is never a float
 * midpoint). */
static inline float nmo_cu_expf_cr(float x) {
    if (isnan(x)) return x;
    return (float)expl((long double)x);
}

/* CUDA expf emulation: correctly rounded value moved by 0 or 1 ulp (deterministic).
 * Kept unperturbed where it is exact (x = 0), infinite, zero, subnormal or FLT_MAX.
 * Error <= 1.5 ulp; CUDA documents expf <= 2 ulp. */
static inline float nmo_cu_expf(float x) {
    float r = nmo_cu_expf_cr(x);
    if (x == 0.0f || !isfinite(r) || r < FLT_MIN || r == FLT_MAX) return r;
    return nmo_cu_nudge(r, nmo_cu_dir(x, 0x45585046U));
}

/* Triton on NVIDIA (plan fn=triton, oracle/plan.c): tl.exp lowers to ex2.approx.f32 of
 * RN(x * RN(log2 e)); the emulation keeps that argument rounding (the error that grows
 * with |x|) and takes exp2 correctly rounded. fp32 '/' is div.full.f32 (<= 2 ulps):
 * emulated as a * RN(1/b) moved by 0 or 1 ulp (deterministic; <= 2 ulps). */
static inline float nmo_cu_tl_exp(float x) {
    float t = x * 1.44269504088896341f;
    return (float)exp2((double)t);
}

static inline float nmo_cu_div_full(float a, float b) {
    float q = a * (1.0f / b);
    if (!isfinite(q) || q == 0.0f || fabsf(q) < FLT_MIN) return q;
    /* a*RN(1/b) is within 1.5 ulps of a/b: a further step only toward a/b's RN keeps it
     * within 2 (the step is taken when it moves toward the correctly rounded value) */
    float cr = a / b, r = nmo_cu_nudge(q, nmo_cu_dir(a * 0.5f + b, 0x44495646U));
    return fabsf(r - cr) <= fabsf(q - cr) ? r : q;
}

/* ---------------------------------------------------------------- reductions */

/* Warp-level xor butterfly over 32 lanes (__shfl_xor_sync, offsets 16 8 4 2 1): after
 * each step lane l holds v[l] + v[l ^ o]. Overwrites v; returns lane 0's total (all
 * lanes agree, fp addition being commutative). */
static inline float nmo_cu_warp_sum32(float v[32]) {
    for (int o = 16; o >= 1; o >>= 1) {
        float t[32];
        for (int l = 0; l < 32; l++) t[l] = v[l] + v[l ^ o];
        memcpy(v, t, sizeof t);
    }
    return v[0];
}
static inline float nmo_cu_warp_max32(float v[32]) {
    for (int o = 16; o >= 1; o >>= 1) {
        float t[32];
        for (int l = 0; l < 32; l++) t[l] = fmaxf(v[l], v[l ^ o]);
        memcpy(v, t, sizeof t);
    }
    return v[0];
}
/* 256-thread block: 8 warp butterflies, warp totals through shared memory, warp 0
 * loads the 8 partials (lanes 8..31 load 0) and butterflies them. Overwrites v. */
static inline float nmo_cu_block_sum256(float v[256]) {
    float p[32] = {0};
    for (int w = 0; w < 8; w++) p[w] = nmo_cu_warp_sum32(v + 32 * w);
    return nmo_cu_warp_sum32(p);
}

/* Reduction shapes for sum_j a_j*b_j (b == NULL: sum_j a_j). */
typedef enum {
    NMO_CU_RED_SEQ = 0,   /* one thread, j = 0..n-1 */
    NMO_CU_RED_WARP32,    /* 32 lanes, lane l sums j = l, l+32, ...; xor butterfly */
    NMO_CU_RED_BLOCK256,  /* 256 threads strided as above; 8 warp butterflies + warp 0 */
    NMO_CU_RED_VEC4,      /* float4 loads: 4 accumulators (j mod 4), (a0+a1)+(a2+a3) */
    NMO_CU_RED_KTILE32,   /* tiles of 32: each tile summed from 0, tile sums added in order */
    NMO_CU_RED_SPLITK4,   /* 4 contiguous chunks of ceil(n/4), partials ((p0+p1)+p2)+p3 */
    NMO_CU_RED_PAIRWISE   /* rounded terms, recursive halving tree (no FMA) */
} nmo_cu_red;

/* acc + a*b: fused (fmaf) or product rounded then added; b == NULL: acc + a. */
static inline float nmo_cu_madd(float acc, const float *a, const float *b, int64_t j, int fma) {
    if (!b) return acc + a[j];
    return fma ? fmaf(a[j], b[j], acc) : acc + a[j] * b[j];
}
static inline float nmo_cu_term(const float *a, const float *b, int64_t j) {
    return b ? a[j] * b[j] : a[j];
}

/* Sequential sum over j in [lo, hi) with step, starting at 0. */
static inline float nmo_cu_sum_seq(const float *a, const float *b, int64_t lo, int64_t hi,
                                   int64_t step, int fma) {
    float acc = 0.0f;
    for (int64_t j = lo; j < hi; j += step) acc = nmo_cu_madd(acc, a, b, j, fma);
    return acc;
}

static inline float nmo_cu_sum_pairwise(const float *a, const float *b, int64_t lo, int64_t hi) {
    int64_t n = hi - lo;
    if (n <= 0) return 0.0f;
    if (n == 1) return nmo_cu_term(a, b, lo);
    int64_t mid = lo + n / 2;
    return nmo_cu_sum_pairwise(a, b, lo, mid) + nmo_cu_sum_pairwise(a, b, mid, hi);
}

/* sum_{j<n} a_j*b_j (or a_j) with the given reduction shape; fma selects contraction of
 * the multiply-add in the per-thread loops. */
static inline float nmo_cu_reduce(const float *a, const float *b, int64_t n, nmo_cu_red red, int fma) {
    switch (red) {
    case NMO_CU_RED_WARP32: {
        float v[32];
        for (int l = 0; l < 32; l++) v[l] = nmo_cu_sum_seq(a, b, l, n, 32, fma);
        return nmo_cu_warp_sum32(v);
    }
    case NMO_CU_RED_BLOCK256: {
        float v[256];
        for (int t = 0; t < 256; t++) v[t] = nmo_cu_sum_seq(a, b, t, n, 256, fma);
        return nmo_cu_block_sum256(v);
    }
    case NMO_CU_RED_VEC4: {
        float acc[4];
        for (int l = 0; l < 4; l++) acc[l] = nmo_cu_sum_seq(a, b, l, n, 4, fma);
        return (acc[0] + acc[1]) + (acc[2] + acc[3]);
    }
    case NMO_CU_RED_KTILE32: {
        float acc = 0.0f;
        for (int64_t t = 0; t < n; t += 32) {
            int64_t hi = t + 32 < n ? t + 32 : n;
            acc = acc + nmo_cu_sum_seq(a, b, t, hi, 1, fma);
        }
        return acc;
    }
    case NMO_CU_RED_SPLITK4: {
        int64_t c = (n + 3) / 4;
        float acc = 0.0f;
        for (int s = 0; s < 4; s++) {
            int64_t lo = s * c, hi = lo + c < n ? lo + c : n;
            acc = acc + nmo_cu_sum_seq(a, b, lo, hi, 1, fma);
        }
        return acc;
    }
    case NMO_CU_RED_PAIRWISE: return nmo_cu_sum_pairwise(a, b, 0, n);
    case NMO_CU_RED_SEQ:
    default: return nmo_cu_sum_seq(a, b, 0, n, 1, fma);
    }
}

/* Batch-variant kernels (the negative controls of the invariance judgments, bv_*
 * candidates): a launch heuristic that splits each row's reduction into more pieces when
 * there are few rows, to fill a GPU of 8 SMs: 8/M pieces for M < 8 rows, else 1. Every
 * piece count is a correct summation order (accurate), but a row's bits change with the
 * batch it is launched in. */
static inline int nmo_cu_bv_parts(int64_t M) { return M >= 8 ? 1 : (int)(8 / (M > 0 ? M : 1)); }

/* sum_{j<n} a_j*b_j as `parts` contiguous chunks of ceil(n/parts), each reduced with red,
 * the chunk partials added in order. */
static inline float nmo_cu_reduce_parts(const float *a, const float *b, int64_t n, int parts, nmo_cu_red red,
                                        int fma) {
    int64_t c = (n + parts - 1) / parts;
    float acc = 0.0f;
    for (int64_t lo = 0; lo < n; lo += c) {
        int64_t len = lo + c < n ? c : n - lo;
        acc = acc + nmo_cu_reduce(a + lo, b ? b + lo : NULL, len, red, fma);
    }
    return acc;
}

/* MUTANT helper: sequential sum whose running accumulator is a 16-bit value (acc_fmt
 * bf16 or fp16): each step computes acc + a*b in fp32 (fused if fma) and rounds the
 * result RNE back to acc_fmt, as `__nv_bfloat16 acc; acc += x*y;` does. */
static inline float nmo_cu_sum_acc16(const float *a, const float *b, int64_t n, nmo_fmt acc_fmt, int fma) {
    float acc = 0.0f;
    for (int64_t j = 0; j < n; j++) acc = nmo_cu_round_to(acc_fmt, nmo_cu_madd(acc, a, b, j, fma));
    return acc;
}

#endif
