/* numoracle: float <-> bf16 / fp16 conversions as GPU kernels perform them, the one copy
 * used by the CPU candidates (refs/cand/cand_util.h) and the GPU kernels (hip/nmo_hip.h).
 *
 * Header only (static inline), plain C17 and C++ host code, and CUDA/HIP device code: a
 * GPU translation unit defines NMO_CONV_FN (hip/nmo_hip.h: host + device, forced inline)
 * before including it. Bit manipulation on the float's pattern, independent of the FPU
 * rounding mode:
 *   bf16: RNE, NaN quieted with its sign and top payload bits kept, overflow to inf;
 *         RZ by truncation (never overflows to inf);
 *   fp16: RNE with IEEE subnormals, >= 65520 to inf, NaN quieted with its payload's top
 *         bits; RZ = RNE then one step toward zero when RNE moved away from zero.
 * On NVIDIA devices the non-NaN RNE conversions use the cvt instructions (IEEE RNE,
 * subnormals kept, overflow to inf; PTX ISA "cvt"): the same bits, fewer instructions in
 * every store; nmo_gpu_conv_selftest (hip/gpu_runtime.hip) compares them with the
 * integer versions on all 2^32 inputs.
 *
 * Not the oracle's rounding: oracle/fmt.c (nmo_fmt_encode, every format and rounding
 * direction, from double) is an independent implementation, checked against MPFR, and
 * tests/test_cand.c checks these conversions against it, so the two must stay apart. */
#ifndef NUMORACLE_CONV16_H
#define NUMORACLE_CONV16_H

#include <stdint.h>
#include <string.h>

#ifndef NMO_CONV_FN
#define NMO_CONV_FN static inline
#endif

#if defined(__CUDACC__) && !defined(__HIP__) && defined(__CUDA_ARCH__)
#define NMO_CONV_NV_DEVICE __CUDA_ARCH__
#endif

NMO_CONV_FN uint32_t nmo_f2u(float f)
{
#if defined(__CUDA_ARCH__)
    return __float_as_uint(f);
#elif defined(__cplusplus) && defined(__clang__)
    return __builtin_bit_cast(uint32_t, f);
#else
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
#endif
}
NMO_CONV_FN float nmo_u2f(uint32_t u)
{
#if defined(__CUDA_ARCH__)
    return __uint_as_float(u);
#elif defined(__cplusplus) && defined(__clang__)
    return __builtin_bit_cast(float, u);
#else
    float f;
    memcpy(&f, &u, 4);
    return f;
#endif
}

/* ------------------------------------------------------------------ bf16 */

/* exact: bf16 is the top half of a float */
NMO_CONV_FN float nmo_bf16_to_f(uint16_t b) { return nmo_u2f((uint32_t)b << 16); }

/* RNE, integer version (every platform, NaN included). */
NMO_CONV_FN uint16_t nmo_f_to_bf16_rne_int(float f)
{
    uint32_t u = nmo_f2u(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x0040u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}
/* The same bits; cvt.rn.bf16.f32 on NVIDIA sm_80+ (NaN keeps the integer path: cvt
 * returns the canonical NaN, not the quieted payload). */
NMO_CONV_FN uint16_t nmo_f_to_bf16_rne(float f)
{
#if defined(NMO_CONV_NV_DEVICE) && NMO_CONV_NV_DEVICE >= 800
    if ((nmo_f2u(f) & 0x7fffffffu) > 0x7f800000u) return nmo_f_to_bf16_rne_int(f);
    uint16_t h;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
#else
    return nmo_f_to_bf16_rne_int(f);
#endif
}
/* truncation (round toward zero); never overflows to inf */
NMO_CONV_FN uint16_t nmo_f_to_bf16_rz(float f)
{
    uint32_t u = nmo_f2u(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x0040u);
    return (uint16_t)(u >> 16);
}

/* ------------------------------------------------------------------ fp16 */

NMO_CONV_FN float nmo_fp16_to_f(uint16_t b)
{
    uint32_t s = (uint32_t)(b & 0x8000u) << 16, e = (b >> 10) & 0x1fu, m = b & 0x3ffu;
    if (e == 0x1f) return nmo_u2f(s | 0x7f800000u | (m << 13)); /* inf / NaN */
    if (e == 0) {                                               /* zero / subnormal */
        float v = (float)m * 5.9604644775390625e-8f;            /* m * 2^-24, exact */
        return s ? -v : v;
    }
    return nmo_u2f(s | ((e + 112u) << 23) | (m << 13));
}

/* RNE with IEEE subnormals; >= 65520 rounds to inf; NaN quieted, payload top bits kept. */
NMO_CONV_FN uint16_t nmo_f_to_fp16_rne_int(float f)
{
    uint32_t u = nmo_f2u(f);
    uint16_t s = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return (uint16_t)(s | 0x7e00u | ((a >> 13) & 0x3ffu));
    if (a >= 0x477ff000u) return (uint16_t)(s | 0x7c00u);
    if (a >= 0x38800000u) { /* normal result (a carry may reach the next binade / inf) */
        uint32_t h = (a - 0x38000000u) >> 13, rem = a & 0x1fffu;
        if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++;
        return (uint16_t)(s | h);
    }
    if (a <= 0x33000000u) return s; /* <= 2^-25: rounds to (signed) zero */
    /* subnormal result: units of 2^-24 */
    uint32_t e = a >> 23, m = (a & 0x7fffffu) | 0x800000u;
    uint32_t sh = 126u - e; /* 14 .. 24 */
    uint32_t h = m >> sh, rem = m & ((1u << sh) - 1u), half = 1u << (sh - 1u);
    if (rem > half || (rem == half && (h & 1u))) h++;
    return (uint16_t)(s | h);
}
/* The same bits; cvt.rn.f16.f32 on NVIDIA for every non-NaN input. */
NMO_CONV_FN uint16_t nmo_f_to_fp16_rne(float f)
{
#if defined(NMO_CONV_NV_DEVICE)
    if ((nmo_f2u(f) & 0x7fffffffu) > 0x7f800000u) return nmo_f_to_fp16_rne_int(f);
    uint16_t h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
#else
    return nmo_f_to_fp16_rne_int(f);
#endif
}
/* toward zero: RNE, then one step back when RNE moved away from zero (covers overflow:
 * 65520 -> inf under RNE, 65504 under RZ) */
NMO_CONV_FN uint16_t nmo_f_to_fp16_rz(float f)
{
    uint16_t b = nmo_f_to_fp16_rne(f);
    if ((nmo_f2u(f) & 0x7fffffffu) > 0x7f800000u) return b;
    float back = nmo_fp16_to_f(b);
    float af = f < 0.0f ? -f : f, ab = back < 0.0f ? -back : back;
    if (ab > af) b = (uint16_t)(b - 1u);
    return b;
}

/* value of f after a round trip through bf16 / fp16 (RNE): "accumulator in 16 bits" */
NMO_CONV_FN float nmo_round_bf16(float f) { return nmo_bf16_to_f(nmo_f_to_bf16_rne(f)); }
NMO_CONV_FN float nmo_round_fp16(float f) { return nmo_fp16_to_f(nmo_f_to_fp16_rne(f)); }

/* ------------------------------------------------------------------ from binary64 */
#if !defined(__CUDACC__) && !defined(__HIP__)
#include <math.h>
/* v rounded RNE into bf16 (is_bf16) or fp16 in one step, no intermediate float rounding
 * (native 16-bit arithmetic: the exact result rounded once): significand of p bits,
 * smallest normal 2^emin, overflow to inf as IEEE RNE does. Host code only. */
NMO_CONV_FN double nmo_f64_round16(double v, int is_bf16)
{
    int p = is_bf16 ? 8 : 11, emin = is_bf16 ? -126 : -14;
    double maxf = is_bf16 ? 0x1.fep127 : 65504.0;
    if (v == 0 || !isfinite(v)) return v;
    int ex;
    (void)frexp(v, &ex); /* |v| in [2^(ex-1), 2^ex) */
    int q = (ex - 1 < emin ? emin : ex - 1) - (p - 1); /* exponent of the ulp */
    double r = ldexp(nearbyint(ldexp(v, -q)), q);     /* nearbyint: RNE (default mode) */
    if (fabs(r) > maxf) return copysign(INFINITY, v);
    return r;
}
#endif

#endif
