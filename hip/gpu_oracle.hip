/* numoracle GPU tier (issue 22): device kernels of the fast engine's hot paths, behind
 * hip/nmo_gpu_oracle.h.
 *
 * Rigour. The element kernel is oracle/engine/enc_fast.c's nmo_fe_mul3_row_kernel (the
 * fast path of nmo_fenc_mul3_row: Higham's P (1 +- u) +- eta M for x * r * w, snapped
 * by nmo_fe_rn32_try) evaluated with the same binary64 operations in the same order,
 * each correctly rounded to nearest and never contracted (CUDA: the __dmul_rn /
 * __dadd_rn intrinsics, which the compiler never fuses into an FMA, CUDA C Programming
 * Guide, "Intrinsic Functions"; the file is also built with -fmad=false; HIP: clang's
 * fp contract(off) pragma; the simulator: host C++ with -ffp-contract=off). IEEE 754
 * binary64 RN is the same on the device as on the host, so each element's lo/hi and its
 * certainty bit are the CPU's bit for bit: the equality test (hip/gpu_oracle_test.c)
 * would fail otherwise. Directed-rounding intrinsics (__dadd_rd/ru) would give another,
 * also sound, enclosure, but not the CPU's: its snaps would be undecided on other
 * elements, and equality of the reports would hold only through escalation.
 * The row reduction sums the exact squares x_j^2 (fp32 and bf16 values: 48 and 16
 * significant bits, exact in binary64) in a fixed tree; any order is within
 * (n - 1) 2^-53 sum x^2 of the exact sum (Jeannerod & Rump 2013, Thm 4.1), which is the
 * binary64 error nmo_fenc_dot_d_finish (enc_fast.h) allows for its sums. rms_norm needs
 * no exp/log on the device (its r: rstd_dev, correctly rounded sqrt and division);
 * swiglu's exp is the device's, within the fast engine's radii (see k_swiglu).
 *
 * Shared-memory trees only (no shuffles or ballots: the same code on 32- and 64-lane
 * hardware and in the simulator). Counts stay in registers and go to global memory by
 * atomics once a block, and only for rows (elements) the device decided. */
#include <stdint.h>

#include "nmo_hip.h"
#include "nmo_gpu.h"
#include "nmo_gpu_oracle.h"

#if defined(__clang__) && !defined(NMO_HIP_SIM)
#pragma clang fp contract(off)
#endif

namespace {

constexpr int BLK = 256;

/* Every binary64 operation below is IEEE correctly rounded to nearest (0 ulp): CUDA's
 * __dmul_rn/__dadd_rn/__dsub_rn/__ddiv_rn/__dsqrt_rn/__fma_rn (CUDA C Programming Guide,
 * "Intrinsic Functions", and the CUDA Math API, double precision: sqrt 0 ulp, division
 * 0 ulp, fma 0 ulp); the host's libm sqrt, '/' and fma are IEEE too, so the device's r
 * and element enclosures are the CPU fast engine's bit for bit. No exp or log here. */
#if defined(NMO_HIP_NVIDIA) && defined(__CUDA_ARCH__)
NMO_D double dmul(double a, double b) { return __dmul_rn(a, b); }
NMO_D double dadd(double a, double b) { return __dadd_rn(a, b); }
NMO_D double dsub(double a, double b) { return __dsub_rn(a, b); }
NMO_D double ddiv(double a, double b) { return __ddiv_rn(a, b); }
NMO_D double dsqrt(double a) { return __dsqrt_rn(a); }
NMO_D double dfma(double a, double b, double c) { return __fma_rn(a, b, c); }
#elif defined(NMO_HIP_NVIDIA) || defined(NMO_HIP_SIM)
NMO_D double dmul(double a, double b) { return a * b; }
NMO_D double dadd(double a, double b) { return a + b; }
NMO_D double dsub(double a, double b) { return a - b; }
NMO_D double ddiv(double a, double b) { return a / b; }
NMO_D double dsqrt(double a) { return sqrt(a); }
NMO_D double dfma(double a, double b, double c) { return fma(a, b, c); }
#else
NMO_D double dmul(double a, double b) { return a * b; }
NMO_D double dadd(double a, double b) { return a + b; }
NMO_D double dsub(double a, double b) { return a - b; }
NMO_D double ddiv(double a, double b) { return a / b; }
NMO_D double dsqrt(double a) { return __builtin_sqrt(a); }
NMO_D double dfma(double a, double b, double c) { return __builtin_fma(a, b, c); }
#endif

#if defined(NMO_HIP_SIM)
/* the simulator runs a block's fibers one at a time, switching only at barriers */
NMO_D void at_add(unsigned long long *p, unsigned long long v) { *p += v; }
NMO_D void at_add32(unsigned *p, unsigned v) { *p += v; }
NMO_D void at_max(unsigned long long *p, unsigned long long v) { *p = v > *p ? v : *p; }
NMO_D unsigned long long at_inc(unsigned long long *p) { return (*p)++; }
#elif defined(NMO_HIP_NVIDIA)
NMO_D void at_add(unsigned long long *p, unsigned long long v) { atomicAdd(p, v); }
NMO_D void at_add32(unsigned *p, unsigned v) { atomicAdd(p, v); }
NMO_D void at_max(unsigned long long *p, unsigned long long v) { atomicMax(p, v); }
NMO_D unsigned long long at_inc(unsigned long long *p) { return atomicAdd(p, 1ull); }
#else /* hipcc and the bare device-only clang check: clang's builtins */
NMO_D void at_add(unsigned long long *p, unsigned long long v) { __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
NMO_D void at_add32(unsigned *p, unsigned v) { __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
NMO_D void at_max(unsigned long long *p, unsigned long long v) { __atomic_fetch_max(p, v, __ATOMIC_RELAXED); }
NMO_D unsigned long long at_inc(unsigned long long *p) { return __atomic_fetch_add(p, 1ull, __ATOMIC_RELAXED); }
#endif

NMO_D uint32_t f2u(float f) { return nmo_f2u(f); } /* numoracle/conv16.h */
NMO_D float u2f(uint32_t u) { return nmo_u2f(u); }
/* |x| (clang's builtin: the bare device-only check has no math header) */
#if defined(NMO_HIP_NVIDIA)
NMO_D double dabs(double x) { return fabs(x); }
#else
NMO_D double dabs(double x) { return __builtin_fabs(x); }
#endif

/* an input element as a double (bf16: the top half of an fp32) */
NMO_D double load_in(const void *p, int bf16, int64_t i)
{
    if (bf16) return (double)u2f((uint32_t)((const uint16_t *)p)[i] << 16);
    return (double)((const float *)p)[i];
}

/* enc_fast.h NMO_FE_RN32_TRY_BODY: *res = RN32(v), 1 when RN32 is constant on
 * [v - ee, v + ee] (|d - v| + ee below half the smaller fp32 spacing next to y) */
NMO_D int rn32_try(double v, double ee, double *res)
{
    float y = (float)v; /* __double2float_rn */
    double d = y;
    uint32_t ub = f2u(y), eb = ub & 0x7f800000u;
    float P = u2f(eb);
    double h = dmul(dmul((double)P, 0x1p-25), (double)(1 + ((ub & 0x7fffffu) != 0)));
    *res = d;
    return (eb != 0x7f800000u) & (dadd(dabs(dsub(d, v)), ee) < h);
}

__global__ void __launch_bounds__(BLK) k_rowsumsq(const void *x, int bf16, int64_t rows, int64_t n,
                                                  double *s_out, int64_t *m_out, uint8_t *bad_out)
{
    __shared__ double ss[BLK];
    __shared__ long long sm[BLK];
    __shared__ int sb[BLK];
    const int t = (int)threadIdx.x;
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        double s = 0;
        long long m = 0;
        int bad = 0;
        for (int64_t j = t; j < n; j += BLK) {
            double v = load_in(x, bf16, row * n + j);
            s = dadd(s, dmul(v, v)); /* the square is exact */
            m += v != 0;
            bad |= !(dabs(v) <= 0x1p1000); /* inf, NaN */
        }
        ss[t] = s, sm[t] = m, sb[t] = bad;
        __syncthreads();
        for (int h = BLK / 2; h > 0; h >>= 1) {
            if (t < h) ss[t] = dadd(ss[t], ss[t + h]), sm[t] += sm[t + h], sb[t] |= sb[t + h];
            __syncthreads();
        }
        if (t == 0) s_out[row] = ss[0], m_out[row] = sm[0], bad_out[row] = (uint8_t)sb[0];
        __syncthreads();
    }
}

/* ordinal of an fp32 / bf16 bit pattern (sign-magnitude to a signed integer): 32 bits
 * hold every one (|m| <= 2^31 - 1); the judge's integer work is what bounds the element
 * kernels (Nsight Compute: the integer ALU is their busiest pipe), so no 64-bit
 * arithmetic where 32 bits are exact */
NMO_D int32_t ord_bits(uint32_t u, int bf16)
{
    const uint32_t sm = bf16 ? 0x8000u : 0x80000000u;
    const int32_t m = (int32_t)(u & (sm - 1u));
    return (u & sm) ? -m : m;
}


/* ---- rms_norm's r on the device: the fast engine's steps for fp32 acc and compute
 * without ftz, sqrt / division / reciprocal correctly rounded (fn=cuda, ocml, cr; the
 * plans nmo_gpu_oracle.c r_on_device accepts), each a transcription of enc_fast.h in
 * the same operation order. Any step that would flag the CPU's r (NMO_EF_UNC) or leave
 * the paths transcribed here returns 0, and the row goes to the CPU checker: the device
 * may send more rows back than needed, never fewer, and an r it keeps is the CPU's
 * (hip/gpu_oracle_test.c compares every one, nmo_go_rstd_probe adversarial sums). */

/* bit casts as numoracle/conv16.h's nmo_f2u: CUDA's intrinsics, clang's builtin (HIP,
 * also without HIP headers: no device memcpy there), memcpy in the g++ simulator */
#if defined(__CUDA_ARCH__)
NMO_D uint64_t d2u(double d) { return (uint64_t)__double_as_longlong(d); }
NMO_D double u2d(uint64_t u) { return __longlong_as_double((long long)u); }
#elif defined(__clang__)
NMO_D uint64_t d2u(double d) { return __builtin_bit_cast(uint64_t, d); }
NMO_D double u2d(uint64_t u) { return __builtin_bit_cast(double, u); }
#else
NMO_D uint64_t d2u(double d) { uint64_t u; memcpy(&u, &d, 8); return u; }
NMO_D double u2d(uint64_t u) { double d; memcpy(&d, &u, 8); return d; }
#endif
#if defined(NMO_HIP_SIM)
/* the simulator: through a volatile. Debian's g++ 12 at -O2 dropped this conversion in
 * rnd32 where div2 rounds its quotients (the object code stores the binary64 quotient
 * with no cvtsd2ss; fmin/fmax by comparisons did not change that), which made the
 * simulated enclosures narrower than the CPU's: hip/gpu_oracle_test.c caught it on
 * layer_norm (d / s, w / s) */
NMO_D float fcast(double v) { volatile float y = (float)v; return y; }
#else
NMO_D float fcast(double v) { return (float)v; } /* RN (__double2float_rn) */
#endif

/* nmo_fe_f32_step */
NMO_D double f32_step(float y, int up)
{
    if (y == 0) return up ? 0x1p-149 : -0x1p-149;
    uint32_t u = f2u(y);
    if ((u >> 31) ^ (uint32_t)up) u++; else u--;
    return (double)u2f(u);
}

/* nmo_fe_round(fp32, fp32rn): rnd 0 RNE, 1 RD, 2 RU */
NMO_D double rnd32(double x, int rnd)
{
    float y = fcast(x);
    double d = y;
    if (rnd == 0 || d == x || x != x) return d;
    if (rnd == 1) return d > x ? f32_step(y, 0) : d;
    return d < x ? f32_step(y, 1) : d;
}

/* nmo_fe_snap(fp32, fp32rn); *unc |= 1 where the CPU flags NMO_EF_UNC */
NMO_D double snap32(int rnd, double v, double e, int *unc)
{
    double ee = dadd(dadd(e, dmul(dabs(v), 0x1p-50)), 0x1p-1060);
    double d;
    if (rnd == 0) {
        if (rn32_try(v, ee, &d)) return d;
    } else {
        float y = fcast(v);
        d = y;
        if (y != 0 && dabs((double)y) <= 0x1.fffffep127 && dabs(dsub(d, v)) > ee) {
            if (rnd == 2) return d > v ? d : f32_step(y, 1);
            return d < v ? d : f32_step(y, 0);
        }
    }
    double a = rnd32(v, rnd);
    if (rnd32(dsub(v, ee), rnd) != a || rnd32(dadd(v, ee), rnd) != a) *unc = 1;
    return a;
}

/* nmo_fe_ulp(fp32, v) for finite v; 0 (the caller gives up) beyond fp32's binades */
NMO_D double ulp32(double v)
{
    int e = (int)((d2u(v) >> 52) & 0x7ff) - 1023;
    if (e < -126) return 0x1p-149;
    if (e > 127) return 0;
    return u2d((uint64_t)(e - 23 + 1023) << 52);
}

NMO_D int finite_d(double v) { return dabs(v) <= 0x1.fffffffffffffp1023; }

/* nmo_fe_fn_side for fp32 compute; *bad = 1 on a path not transcribed */
NMO_D double fn_side(double v, int exact, int n, int upper, int *unc, int *bad)
{
    if (exact) {
        if (n == 0) return rnd32(v, 0);
        double u = ulp32(v);
        if (u == 0) *bad = 1;
        return rnd32(upper ? dadd(v, dmul((double)n, u)) : dsub(v, dmul((double)n, u)), upper ? 1 : 2);
    }
    double e = dmul(dabs(v), 0x1p-51);
    if (n == 0) return snap32(0, v, e, unc);
    if (!finite_d(v)) { *bad = 1; return v; }
    double u = ulp32(v);
    if (u == 0 || ulp32(dsub(v, dmul(2, e))) == 0 || ulp32(dadd(v, dmul(2, e))) == 0) { *bad = 1; return v; }
    if (ulp32(dsub(v, dmul(2, e))) != u || ulp32(dadd(v, dmul(2, e))) != u) *unc = 1;
    double w = upper ? dadd(v, dmul((double)n, u)) : dsub(v, dmul((double)n, u));
    return snap32(upper ? 1 : 2, w, dadd(e, dmul(dabs(w), 0x1p-52)), unc);
}

/* frexp-based helpers for positive normal doubles (the caller checks the range) */
NMO_D double pow2_above(double v) { return u2d(((d2u(v) >> 52) + 1) << 52); } /* nmo_fe_pow2_above */
NMO_D double pow2_floor(double s) { return u2d((d2u(s) >> 52) << 52); }       /* nmo_mag_pow2 */
NMO_D int normal_pos(double v) { return v >= 0x1p-1022 && v <= 0x1p1000; }
/* nmo_fe_is_pow4 */
NMO_D int is_pow4(double x)
{
    uint64_t u = d2u(x);
    int e = (int)((u >> 52) & 0x7ff) - 1023;
    return (u & 0xfffffffffffffull) == 0 && ((u >> 52) & 0x7ff) != 0 && (e & 1) == 0 && x > 0;
}

/* nmo_fe_apx_fix for a positive range (n >= 1) */
NMO_D void apx_fix_pos(double *lo, double vlo, double vhi, int exh, int n, int *unc, int *bad)
{
    if (!(vlo > 0) || !finite_d(vlo)) return;
    if (!normal_pos(vlo)) { *bad = 1; return; }
    double P = pow2_above(vlo);
    if (P <= 0x1.fffffep127) {
        if (!exh && dabs(dsub(vhi, P)) <= dmul(P, 0x1p-46)) *unc = 1;
        if (vhi >= P) {
            double u = ulp32(P);
            if (u == 0) { *bad = 1; return; }
            double t = rnd32(dsub(P, dmul((double)n, u)), 2);
            *lo = *lo < t ? *lo : t; /* fmin of non-NaN values */
        }
    }
}

/* IEEE minNum/maxNum as fmin/fmax (nmo_fmaxf's pattern: no math header without HIP's) */
#if defined(NMO_HIP_BARE) || defined(NMO_HIP_SIM)
NMO_D double dmin(double a, double b) { return __builtin_fmin(a, b); }
NMO_D double dmax(double a, double b) { return __builtin_fmax(a, b); }
#else
NMO_D double dmin(double a, double b) { return fmin(a, b); }
NMO_D double dmax(double a, double b) { return fmax(a, b); }
#endif

/* refs/rms_norm.c nmo_ref_rms_norm_rstd_fast for those plans: the row's r = [*rl, *rh]
 * from the binary64 sum of squares s (m nonzero terms) within err of the exact sum (< 0:
 * a plain sum in any order, n 2^-53 s). Returns 1 when the CPU's r is unflagged and
 * finite and equal to this one. */
NMO_D int rstd_dev(const nmo_go_rstd_consts &c, double s, int64_t m, double err, double *rl, double *rh)
{
    int unc = 0, bad = 0;
    /* nmo_fenc_dot_d_finish -> nmo_fe_red_finish (slo = shi = a_d = s) */
    double k = c.ktab[m];
    if (!(dabs(s) <= 0x1p1000) || !(k < 0x1p1023)) return 0;
    if (err < 0) err = dmul(c.en, s);
    double kua = dmul(k, c.ua);
    double em = dadd(dmul(kua, s), c.keta);
    double e = dadd(dmul(err, dadd(1, kua)), dmul(em, 0x1p-51));
    double sl = snap32(2, dsub(s, em), e, &unc), sh = snap32(1, dadd(s, em), e, &unc);
    if (sl != sl || sh != sh) return 0;
    double top = dadd(dmul(s, dadd(1, kua)), c.keta);
    if (dabs(dsub(top, c.maxfin_a)) <= dmul(c.maxfin_a, 0x1p-30)) unc = 1;
    if (top >= c.maxfin_a) return 0;
    /* nmo_fe_dot_mag: the binade of s must be certain */
    if (s > 0) {
        double a1 = dmul(s, dsub(1, c.rel)), a2 = dmul(s, dadd(1, c.rel));
        if (!normal_pos(a1) || !normal_pos(a2)) return 0;
        if (pow2_floor(a1) != pow2_floor(a2)) unc = 1;
    }
    /* nmo_fenc_div_si (division and reciprocal correctly rounded) */
    double l1 = rnd32(ddiv(sl, c.dn), 0), h1 = rnd32(ddiv(sh, c.dn), 0);
    double l2 = rnd32(dmul(sl, c.rcpn), 0), h2 = rnd32(dmul(sh, c.rcpn), 0);
    double ml = dmin(l1, l2), mh = dmax(h1, h2);
    if (ml != ml || mh != mh) return 0;
    /* nmo_fenc_add of RN(eps) */
    double vlo = rnd32(dadd(ml, c.epsc), 0), vhi = rnd32(dadd(mh, c.epsc), 0);
    if (vlo != vlo || vhi != vhi) return 0;
    /* nmo_fenc_rsqrt (sqrt and reciprocal correctly rounded) */
    if (vhi < 0 || vlo <= 0 || !finite_d(vhi)) return 0;
    int n = c.nrsqrt;
    double ql = ddiv(1.0, dsqrt(vhi)), qh = ddiv(1.0, dsqrt(vlo));
    int el = is_pow4(vhi), eh = is_pow4(vlo);
    double lo1 = fn_side(ql, el, n, 0, &unc, &bad);
    double hi1 = fn_side(qh, eh, n, 1, &unc, &bad);
    if (n != 0) {
        apx_fix_pos(&lo1, ql, qh, eh, n, &unc, &bad);
        /* the negative branch of nmo_fe_apx_fix never applies: qh > 0 */
    }
    double slo = rnd32(dsqrt(vlo), 0), shi = rnd32(dsqrt(vhi), 0);
    if (slo == 0) return 0;
    double lo2 = rnd32(ddiv(1.0, shi), 0), hi2 = rnd32(ddiv(1.0, slo), 0);
    *rl = dmin(lo1, lo2);
    *rh = dmax(hi1, hi2);
    return !unc && !bad && finite_d(*rl) && finite_d(*rh);
}

/* nmo_fe_rn32_pair_g */
NMO_D int rn32_pair_g(double t, double err, double g, double *res)
{
    float y = fcast(t);
    double a = y;
    if (!(dabs(a) <= 0x1.fffffep127)) return 0;
    *res = a;
    if (a == t || (err == -g)) return 1;
    double o = a > t ? f32_step(y, 0) : f32_step(y, 1);
    if (!(dabs(o) <= 0x1.fffffep127) || dsub(a, t) != dsub(t, o)) return 1;
    *res = err > -g ? dmax(a, o) : dmin(a, o);
    return 1;
}

/* nmo_fe_two_sum_err */
NMO_D double two_sum_err(double a, double b, double s)
{
    double bb = dsub(s, a);
    return dadd(dsub(a, dsub(s, bb)), dsub(b, bb));
}

/* nmo_fe_mul3_exact_ends (fp32rn) */
NMO_D int mul3_exact_ends(double ad, double rl, double rh, double plo, double phi, double eta,
                          double uc, double *lo, double *hi)
{
    double p1 = dmul(ad, rl), p2 = dmul(ad, rh);
    if (dfma(ad, rl, -p1) != 0 || dfma(ad, rh, -p2) != 0) return 0;
    double res[2];
    for (int side = 0; side < 2; side++) {
        double P = side ? phi : plo;
        if (P == 0 && eta >= 0x1p-1000) { /* a zero product: RN32 of -+eta itself (row_fast.h) */
            res[side] = (double)fcast(side ? eta : -eta);
            continue;
        }
        if (!(dabs(P) >= 0x1p-200 && dabs(P) <= 0x1p200) || !(eta >= 0x1p-1000 || eta == 0)) return 0;
        double q = dmul(dabs(P), uc);
        double t = side ? dadd(P, q) : dsub(P, q);
        double err = side ? two_sum_err(P, q, t) : two_sum_err(P, -q, t);
        if (!(dabs(t) > dmul(0x1p55, eta)) || !(dabs(t) < dmul(0x1p900, eta) || eta == 0)) return 0;
        if (!rn32_pair_g(t, err, side ? eta : -eta, &res[side])) return 0;
    }
    *lo = res[0];
    *hi = res[1];
    return 1;
}

/* a candidate's bits (bf16: the 16 low bits) */
NMO_D uint32_t cand_bits(const void *cand, int out_bf16, int64_t i)
{
    return out_bf16 ? (uint32_t)((const uint16_t *)cand)[i] : ((const uint32_t *)cand)[i];
}

/* Four consecutive 16- or 32-bit words p[i..i+3] in one 8- or 16-byte load (the caller
 * checks the alignment: nmo_go_rms_args.vec4); the simulator copies bytes. */
struct alignas(16) nmo_u128 {
    uint64_t a, b;
};
NMO_D void load4_bits(const void *p, int w16, int64_t i, uint32_t *u)
{
    if (w16) {
        uint64_t v;
#if defined(NMO_HIP_SIM)
        memcpy(&v, (const uint16_t *)p + i, 8);
#else
        v = *(const uint64_t *)((const uint16_t *)p + i);
#endif
        for (int q = 0; q < 4; q++) u[q] = (uint32_t)(v >> (16 * q)) & 0xffffu; /* little endian */
    } else {
        nmo_u128 v;
#if defined(NMO_HIP_SIM)
        memcpy(&v, (const uint32_t *)p + i, 16);
#else
        v = *(const nmo_u128 *)((const uint32_t *)p + i);
#endif
        u[0] = (uint32_t)v.a, u[1] = (uint32_t)(v.a >> 32), u[2] = (uint32_t)v.b, u[3] = (uint32_t)(v.b >> 32);
    }
}

/* an input word as a double (bf16: the top half of an fp32) */
NMO_D double in_of_bits(uint32_t u, int bf16) { return (double)u2f(bf16 ? u << 16 : u); }

/* The judge of one element on its compute enclosure [l, h] (check.c judge_class_bf16 /
 * judge_class_fp32): 0 when the host must judge it (non-finite or wide R); else *fail
 * and the key of nmo_go_acc.worst, *wd the width. */
NMO_D int judge_elem(uint32_t cb, int out_bf16, int64_t i, double l, double h, int64_t max_ulps,
                     uint8_t *verd, double *rlo, double *rhi, int *fail, unsigned long long *key, int64_t *wdp)
{
    uint32_t ul = f2u((float)l), uh = f2u((float)h);
    int spec = ((ul & 0x7fffffffu) > 0x7f7fffffu) | ((uh & 0x7fffffffu) > 0x7f7fffffu);
    if (out_bf16) {
        ul = (ul + 0x7fffu + ((ul >> 16) & 1u)) >> 16;
        uh = (uh + 0x7fffu + ((uh >> 16) & 1u)) >> 16;
        spec |= ((ul & 0x7fffu) >= 0x7f80u) | ((uh & 0x7fffu) >= 0x7f80u);
    }
    const int32_t ol = ord_bits(ul, out_bf16), oh = ord_bits(uh, out_bf16), oc = ord_bits(cb, out_bf16);
    const uint32_t mc = (uint32_t)(oc < 0 ? -oc : oc);
    int cnan = out_bf16 ? mc > 0x7f80u : mc > 0x7f800000u;
    int fl = cnan | (oc < ol) | (oc > oh);
    /* oh >= ol (l <= h, rounding is monotone): the difference is exact in 32 unsigned bits;
     * were it not, it wraps to a huge width and the host judges the element */
    const uint32_t wd = (uint32_t)oh - (uint32_t)ol;
    if (spec | ((int64_t)wd + 1 > max_ulps)) return 0;
    if (verd) verd[i] = (uint8_t)(fl ? NMO_FAIL : NMO_PASS);
    if (rlo) {
        rlo[i] = out_bf16 ? (double)u2f(ul << 16) : (double)u2f(ul);
        rhi[i] = out_bf16 ? (double)u2f(uh << 16) : (double)u2f(uh);
    }
    /* FAIL: the distance (saturated at 2^32 - 1, NaN candidates there too); PASS: the width */
    const uint32_t metric = fl ? (cnan ? 0xffffffffu : oc > oh ? (uint32_t)oc - (uint32_t)oh : (uint32_t)ol - (uint32_t)oc)
                               : wd;
    *key = (unsigned long long)(fl ? 2u : 0u) << 62 | (unsigned long long)metric << 30 |
           (unsigned long long)(0x3fffffffLL - i);
    *fail = fl;
    *wdp = wd;
    return 1;
}

/* "no scale" (the CPU's +inf scale; the bare device header has no INFINITY/NAN): any
 * scale beyond 2^128 is refused by scale_width */
#define NO_SCALE 0x1.fffffffffffffp1023

/* nmo_mag_prod, nmo_mag_max (oracle/engine/fast_priv.h) */
NMO_D double mag_prod(double m, double a) { return m == 0 || a == 0 ? 0 : dmul(m, a); }
NMO_D double mag_max(double a, double b) { return a > b ? a : (b == b ? b : a); }

/* The scale rule's width (oracle/check.c width_at_scale): R's width, its ends the enclosure
 * [l, h] rounded to out by RNE (out_round), in ulps of out at the error scale mg, whose
 * binade is all that counts (nmo_fmt_ulp of bf16 / fp32: emin -126, 7 / 23 fraction
 * bits). mg is the CPU's scale within relative rel (0: its binade exactly); NO_SCALE when
 * there is no scale or the binade is not certain (the host decides). */
NMO_D double scale_width(int out_bf16, double l, double h, double mg, double rel)
{
    double m1 = dmul(mg, 1 - rel), m2 = dmul(mg, 1 + rel);
    if (!normal_pos(m1) || !(m2 < 0x1p128) || pow2_floor(m1) != pow2_floor(m2)) return NO_SCALE;
    uint32_t ul = f2u((float)l), uh = f2u((float)h);
    if (out_bf16) {
        ul = ((ul + 0x7fffu + ((ul >> 16) & 1u)) >> 16) << 16;
        uh = ((uh + 0x7fffu + ((uh >> 16) & 1u)) >> 16) << 16;
    }
    int e = (int)((d2u(mg) >> 52) & 0x7ff) - 1023;
    if (e < -126) e = -126;
    double ulp = u2d((uint64_t)(e - (out_bf16 ? 7 : 23) + 1023) << 52);
    return ddiv(dsub((double)u2f(uh), (double)u2f(ul)), ulp);
}

/* s += v with the rounding error added to c (TwoSum: Knuth, TAOCP 2, 4.2.2; exact without
 * overflow): one step of Sum2 (Ogita, Rump & Oishi, SISC 2005) */
NMO_D void sum2_add(double *s, double *c, double v)
{
    double x = dadd(*s, v);
    *c = dadd(*c, two_sum_err(*s, v, x));
    *s = x;
}

/* The binary64 error of v = RN(s + c) for a compensated sum (sum2_add per term, pairs
 * combined by TwoSum with their c added) of nonnegative terms, T >= the number of TwoSums
 * (n terms + the tree's nodes), va >= v the compensated sum of magnitudes: the exact
 * sum is s + (the exact sum of the T TwoSum errors E_i); each |E_i| <= 2^-53 of a
 * computed partial sum, which is at most the final s (nonnegative terms, RN monotone), so
 * sum |E_i| <= T 2^-53 s; c is a binary64 sum of the E_i in some order, within (T - 1)
 * 2^-53 sum |E_i| of it (Jeannerod & Rump 2013, Thm 4.1); RN(s + c) adds 2^-53 |v|. So
 * |v - exact| <= T^2 2^-106 s + 2^-53 v <= (1.01 T^2 2^-106 + 2^-52) va. The host's copy
 * for rms_norm's rows (gpu_oracle.c rms_comp_err) performs the same operations. */
NMO_D double smx_comp_err(double T, double va) { return dmul(dadd(dmul(dmul(T, T), 0x1.02p-106), 0x1p-52), va); }

/* rms_norm in two kernels, one after the other on the stream (no host round trip):
 * k_rms_rows: 8 rows a block, 32 threads a row: the row's sum of squares (binary64 of
 *   exact squares in a fixed tree: within the (n - 1) 2^-53 margin nmo_fenc_dot_d_finish
 *   allows for any order) and r by rstd_dev; rstat[row] = s, m, r_lo, r_hi (r 0: not
 *   kept, the host checks the row). Many rows' r in flight at once: the serial r steps
 *   no longer stall the element pass.
 * k_rms_elems: a block a row (grid-stride): every element as nmo_fe_mul3_row_kernel
 *   computes it, an undecided snap by nmo_fe_snap's general test and
 *   nmo_fe_mul3_exact_ends as nmo_fenc_mul3 does, the store and the judge. An element
 *   still undecided after that goes to the host alone (a list: the certified engine
 *   from the row's r); a row with a non-finite value, a wide or non-finite R goes to
 *   the host whole: one shared flag and one barrier a row decide that, and each thread
 *   keeps its counts in registers until then (one fold a block at the end); widths >= 8
 *   (fp32 outputs: most elements) go to the block's shared histogram at once and are
 *   taken back, recomputed, when the row turns out to be the host's (a second pass over
 *   every row, as before, cost fp32 outputs a third of the kernel). */
constexpr int RPB = 8; /* rows per block in k_rms_rows */

/* A thread's counts of the widths 0..7 in one row, in registers: w[wd]++ with a variable
 * wd puts an array in local memory (ptxas: k_rms_elems' 160-byte stack frame), so the
 * counts go to 21-bit lanes, three a word (widths 0-2, 3-5, 6-7). A lane holds 2^21 - 1
 * counts: a thread sees at most n / 256 + 4 elements of a row and n < 2^30 (the worst
 * element's key holds 30 bits of index), so none overflows. fin() adds them to w. */
struct wpack {
    unsigned long long p0 = 0, p1 = 0, p2 = 0;
    NMO_D void add(int64_t wd) /* 0 <= wd < 8 */
    {
        const int q = (int)wd, k = (q >= 3) + (q >= 6);
        const unsigned long long inc = 1ull << (21 * (q - 3 * k));
        if (k == 0) p0 += inc;
        else if (k == 1) p1 += inc;
        else p2 += inc;
    }
    NMO_D void fin(unsigned *w) const
    {
        const unsigned long long m = (1ull << 21) - 1;
        w[0] += (unsigned)(p0 & m), w[1] += (unsigned)((p0 >> 21) & m), w[2] += (unsigned)((p0 >> 42) & m);
        w[3] += (unsigned)(p1 & m), w[4] += (unsigned)((p1 >> 21) & m), w[5] += (unsigned)((p1 >> 42) & m);
        w[6] += (unsigned)(p2 & m), w[7] += (unsigned)((p2 >> 21) & m);
    }
};

__global__ void __launch_bounds__(BLK) k_rms_rows(nmo_go_rms_args a)
{
    __shared__ double ss[BLK], sc[BLK];
    __shared__ unsigned sm[BLK];
    __shared__ int sb[BLK], s_redo[RPB];
    const int t = (int)threadIdx.x, lane = t % 32, rl8 = t / 32;
    const int64_t n = a.n;
    for (int64_t r0 = (int64_t)blockIdx.x * RPB; r0 < a.rows; r0 += (int64_t)gridDim.x * RPB) {
        const int64_t row = r0 + rl8;
        double s = 0;
        unsigned m = 0;
        int bad = 0;
        if (row < a.rows)
            for (int64_t j0 = (int64_t)lane * 4; j0 < n; j0 += 32 * 4) { /* four words a load where aligned */
                const int cnt = n - j0 < 4 ? (int)(n - j0) : 4;
                uint32_t xb[4] = {0, 0, 0, 0};
                if (a.vec4 && cnt == 4) load4_bits(a.x, a.in_bf16, row * n + j0, xb);
                else
                    for (int q = 0; q < cnt; q++)
                        xb[q] = a.in_bf16 ? ((const uint16_t *)a.x)[row * n + j0 + q] : ((const uint32_t *)a.x)[row * n + j0 + q];
                for (int q = 0; q < cnt; q++) {
                    double v = in_of_bits(xb[q], a.in_bf16);
                    s = dadd(s, dmul(v, v)); /* the square is exact */
                    m += v != 0;
                    bad |= !(dabs(v) <= 0x1p1000); /* inf, NaN */
                }
            }
        ss[t] = s, sm[t] = m, sb[t] = bad;
        __syncthreads();
        for (int h = 16; h > 0; h >>= 1) {
            if (lane < h) ss[t] = dadd(ss[t], ss[t + h]), sm[t] += sm[t + h], sb[t] |= sb[t + h];
            __syncthreads();
        }
        double rl = 0, rh = 0;
        int ok = 0;
        if (lane == 0) {
            ok = row < a.rows && !sb[t] && rstd_dev(a.rc, ss[t], (int64_t)sm[t], -1, &rl, &rh);
            s_redo[rl8] = row < a.rows && !sb[t] && (!ok || a.comp_all);
        }
        __syncthreads();
        int any = 0;
        for (int q = 0; q < RPB; q++) any |= s_redo[q];
        double sv = ss[t - lane];
        if (any) { /* a block-uniform branch, rare: the plain sum left r undecided; the row
                    * again compensated (Sum2 per lane, TwoSum in the tree: T <= n + 32) */
            double cs = 0, cc = 0;
            if (s_redo[rl8])
                for (int64_t j = lane; j < n; j += 32) {
                    double v = load_in(a.x, a.in_bf16, row * n + j);
                    sum2_add(&cs, &cc, dmul(v, v));
                }
            __syncthreads();
            ss[t] = cs, sc[t] = cc;
            __syncthreads();
            for (int h = 16; h > 0; h >>= 1) {
                if (lane < h) {
                    double x = dadd(ss[t], ss[t + h]);
                    sc[t] = dadd(dadd(sc[t], sc[t + h]), two_sum_err(ss[t], ss[t + h], x));
                    ss[t] = x;
                }
                __syncthreads();
            }
            if (lane == 0 && s_redo[rl8]) {
                double v = dadd(ss[t], sc[t]), l2 = 0, h2 = 0;
                int ok2 = rstd_dev(a.rc, v, (int64_t)sm[t], smx_comp_err((double)n + 32, v), &l2, &h2);
                if (ok2 || !ok) ok = ok2, sv = v, rl = l2, rh = h2, s_redo[rl8] = 2;
                if (ok2) at_inc(&a.acc->n_comp);
            }
        }
        if (lane == 0 && row < a.rows) {
            /* m < 0 marks a compensated sum: -(m + 1), its radius smx_comp_err(n + 32, s) */
            a.rstat[4 * row] = sv, a.rstat[4 * row + 1] = ok && s_redo[rl8] == 2 ? -(double)sm[t] - 1 : (double)sm[t];
            a.rstat[4 * row + 2] = ok ? rl : 0, a.rstat[4 * row + 3] = ok ? rh : 0; /* 0: not kept */
        }
        __syncthreads();
    }
}

/* Element i = (row, j) of rms_norm from its input points and the row's r = [rl, rh]
 * (rm = max |r|): nmo_fe_mul3_row_kernel operation for operation, an undecided snap by
 * nmo_fe_snap's general test and nmo_fe_mul3_exact_ends as nmo_fenc_mul3 does. Returns
 * 0 with [*l, *h] (the compute enclosure), 1 when the element goes to the host alone (its
 * snap undecided; testing: every elem_every-th element), 2 when the row goes to the host
 * (a non-finite input). A function of its arguments only: both passes of k_rms_elems
 * see the same answers. */
NMO_D int rms_elem(const nmo_go_rms_args &a, double xv, double wv, double rl, double rh, double rm, int64_t i,
                   double *lp, double *hp)
{
    double ad = dmul(xv, wv); /* exact */
    double p1 = dmul(ad, rl), p2 = dmul(ad, rh);
    double plo = p1 < p2 ? p1 : p2, phi = p1 < p2 ? p2 : p1;
    double ax = dabs(xv), aw = dabs(wv);
    double mm = ax > rm ? ax : rm;
    mm = mm > aw ? mm : aw;
    double eta = dmul(a.etac, mm);
    double vlo = dsub(dsub(plo, dmul(dabs(plo), a.uc)), eta);
    double vhi = dadd(dadd(phi, dmul(dabs(phi), a.uc)), eta);
    double elo = dadd(dmul(dabs(vlo), 0x1p-50), dmul(eta, 0x1p-50));
    double ehi = dadd(dmul(dabs(vhi), 0x1p-50), dmul(eta, 0x1p-50));
    double l, h;
    int okl = rn32_try(vlo, dadd(dadd(elo, dmul(dabs(vlo), 0x1p-50)), 0x1p-1060), &l);
    int okh = rn32_try(vhi, dadd(dadd(ehi, dmul(dabs(vhi), 0x1p-50)), 0x1p-1060), &h);
    int fin = (dabs(xv) <= 0x1p1000) & (dabs(wv) <= 0x1p1000);
    if (!fin) return 2;
    if (!(okl & okh)) { /* nmo_fenc_mul3: nmo_fe_snap's general test, then the exact ends */
        int unc = 0;
        l = snap32(0, vlo, elo, &unc);
        h = snap32(0, vhi, ehi, &unc);
        if (unc && !mul3_exact_ends(ad, rl, rh, plo, phi, eta, a.uc, &l, &h)) return 1;
    }
    if (a.elem_every > 0 && i % a.elem_every == 0) return 1; /* testing: the host's element path */
    *lp = l, *hp = h;
    return 0;
}

/* Four consecutive words of x, w and the candidate at row, j0 (cnt of them): one 8- or
 * 16-byte load each where aligned (vec4), else one word at a time. */
NMO_D void rms_load(const nmo_go_rms_args &a, int64_t row, int64_t j0, int cnt, uint32_t *xb, uint32_t *wb,
                    uint32_t *cb4)
{
    const int64_t n = a.n;
    if (a.vec4 && cnt == 4) {
        load4_bits(a.x, a.in_bf16, row * n + j0, xb);
        load4_bits(a.w, a.in_bf16, j0, wb);
        load4_bits(a.cand, a.out_bf16, row * n + j0, cb4);
        return;
    }
    for (int q = 0; q < cnt; q++) {
        xb[q] = a.in_bf16 ? ((const uint16_t *)a.x)[row * n + j0 + q] : ((const uint32_t *)a.x)[row * n + j0 + q];
        wb[q] = a.in_bf16 ? ((const uint16_t *)a.w)[j0 + q] : ((const uint32_t *)a.w)[j0 + q];
        cb4[q] = cand_bits(a.cand, a.out_bf16, row * n + j0 + q);
    }
}

__global__ void __launch_bounds__(BLK, 3) k_rms_elems(nmo_go_rms_args a)
{
    __shared__ unsigned long long s_pass[BLK], s_fail[BLK], s_wmax[BLK], s_worst[BLK];
    __shared__ unsigned s_w[8][BLK];
    __shared__ int s_flag[3];
    __shared__ unsigned s_hist[NMO_GO_HIST + 1];
    const int t = (int)threadIdx.x;
    const int64_t n = a.n;
    for (int i = t; i <= NMO_GO_HIST; i += BLK) s_hist[i] = 0;
    if (t < 3) s_flag[t] = 0;
    __syncthreads();
    unsigned long long pass = 0, fail = 0, wmax = 0, worst = 0;
    unsigned wc[8] = {0, 0, 0, 0, 0, 0, 0, 0}; /* widths 0..7 */
    int k = 0;
    for (int64_t row = blockIdx.x; row < a.rows; row += gridDim.x) {
        if (a.skip && a.skip[row]) continue; /* uniform over the block */
        double rl, rh;
        if (a.rrow) rl = a.rrow[3 * row], rh = a.rrow[3 * row + 1];
        else rl = a.rstat[4 * row + 2], rh = a.rstat[4 * row + 3];
        if (rl == 0 && rh == 0) { /* r not kept: the host's row (uniform) */
            if (t == 0) a.redo[at_inc(&a.acc->n_redo)] = row;
            continue;
        }
        const double rm = dabs(rl) > dabs(rh) ? dabs(rl) : dabs(rh);
        int redo = 0;
        int64_t istop = INT64_MAX; /* this thread's first element not counted (redo) */
        unsigned long long rpass = 0, rfail = 0, rwmax = 0, rworst = 0;
        wpack rw;
        /* four consecutive elements a thread, BLK * 4 a block pass */
        for (int64_t j0 = (int64_t)t * 4; j0 < n && !redo; j0 += BLK * 4) {
            const int cnt = n - j0 < 4 ? (int)(n - j0) : 4;
            uint32_t xb[4] = {0, 0, 0, 0}, wb[4] = {0, 0, 0, 0}, cb4[4] = {0, 0, 0, 0};
            rms_load(a, row, j0, cnt, xb, wb, cb4);
            for (int q = 0; q < cnt; q++) {
                const int64_t i = row * n + j0 + q;
                double l = 0, h = 0;
                int st = rms_elem(a, in_of_bits(xb[q], a.in_bf16), in_of_bits(wb[q], a.in_bf16), rl, rh, rm, i, &l, &h);
                if (st == 2) { redo = 1, istop = i; break; }
                if (st == 1) { /* to the host alone */
                    unsigned long long slot = at_inc(&a.acc->n_eredo);
                    if (slot < (unsigned long long)a.eredo_cap) a.eredo[slot] = i;
                    continue;
                }
                int fl = 0;
                unsigned long long key = 0;
                int64_t wd = 0;
                if (!judge_elem(cb4[q], a.out_bf16, i, l, h, a.max_ulps, a.verd, a.rlo, a.rhi, &fl, &key, &wd)) {
                    redo = 1, istop = i;
                    break;
                }
                if (fl) rfail++; else rpass++;
                rworst = key > rworst ? key : rworst;
                rwmax = (unsigned long long)wd > rwmax ? (unsigned long long)wd : rwmax;
                if (wd < 8) rw.add(wd);
                else at_add32(&s_hist[wd < NMO_GO_HIST ? wd : NMO_GO_HIST], 1); /* taken back if the row is the host's */
            }
        }
        /* the row's verdict: redo anywhere sends it to the host (one flag, one barrier) */
        if (redo) s_flag[k] = 1;
        if (t == 0) s_flag[(k + 1) % 3] = 0; /* last read two barriers ago */
        __syncthreads();
        const int any = s_flag[k];
        k = (k + 1) % 3;
        if (any) {
            if (t == 0) a.redo[at_inc(&a.acc->n_redo)] = row;
            /* the host's row (rare): the widths >= 8 this thread binned before istop taken
             * back, recomputed (rms_elem and judge_elem are functions of their arguments:
             * the same widths), so that the histogram holds the device's rows alone */
            for (int64_t j0 = (int64_t)t * 4; j0 < n && row * n + j0 < istop; j0 += BLK * 4) {
                const int cnt = n - j0 < 4 ? (int)(n - j0) : 4;
                uint32_t xb[4] = {0, 0, 0, 0}, wb[4] = {0, 0, 0, 0}, cb4[4] = {0, 0, 0, 0};
                rms_load(a, row, j0, cnt, xb, wb, cb4);
                for (int q = 0; q < cnt && row * n + j0 + q < istop; q++) {
                    const int64_t i = row * n + j0 + q;
                    double l = 0, h = 0;
                    if (rms_elem(a, in_of_bits(xb[q], a.in_bf16), in_of_bits(wb[q], a.in_bf16), rl, rh, rm, i, &l, &h) != 0)
                        continue;
                    int fl = 0;
                    unsigned long long key = 0;
                    int64_t wd = 0;
                    judge_elem(cb4[q], a.out_bf16, i, l, h, a.max_ulps, NULL, NULL, NULL, &fl, &key, &wd);
                    if (wd >= 8) at_add32(&s_hist[wd < NMO_GO_HIST ? wd : NMO_GO_HIST], 0xffffffffu); /* -1 */
                }
            }
            continue;
        }
        pass += rpass, fail += rfail;
        wmax = rwmax > wmax ? rwmax : wmax;
        worst = rworst > worst ? rworst : worst;
        rw.fin(wc);
    }
    /* one fold a block */
    s_pass[t] = pass, s_fail[t] = fail, s_wmax[t] = wmax, s_worst[t] = worst;
    for (int q = 0; q < 8; q++) s_w[q][t] = wc[q];
    __syncthreads();
    for (int hh = BLK / 2; hh > 0; hh >>= 1) {
        if (t < hh) {
            s_pass[t] += s_pass[t + hh], s_fail[t] += s_fail[t + hh];
            for (int q = 0; q < 8; q++) s_w[q][t] += s_w[q][t + hh];
            s_wmax[t] = s_wmax[t] > s_wmax[t + hh] ? s_wmax[t] : s_wmax[t + hh];
            s_worst[t] = s_worst[t] > s_worst[t + hh] ? s_worst[t] : s_worst[t + hh];
        }
        __syncthreads();
    }
    if (t == 0) {
        at_add(&a.acc->n_pass, s_pass[0]);
        at_add(&a.acc->n_fail, s_fail[0]);
        for (int q = 0; q < 8; q++)
            if (s_w[q][0]) at_add(&a.acc->hist[q], s_w[q][0]);
        at_max(&a.acc->wmax, s_wmax[0]);
        at_max(&a.acc->worst, s_worst[0]);
    }
    for (int i = t; i <= NMO_GO_HIST; i += BLK)
        if (s_hist[i]) at_add(&a.acc->hist[i], s_hist[i]);
}

/* After the judge: the worst element's row statistics and candidate bits into acc, so
 * that one copy of acc gives the host everything (no second round trip). */
__global__ void k_rms_gather(nmo_go_rms_args a)
{
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    unsigned long long w = a.acc->worst;
    if (w == 0 && a.acc->n_pass + a.acc->n_fail == 0) return;
    int64_t i = 0x3fffffffLL - (int64_t)(w & 0x3fffffffull);
    int64_t row = i / a.n;
    for (int q = 0; q < 4; q++) a.acc->w_stat[q] = a.rstat[4 * row + q];
    a.acc->w_cand = a.out_bf16 ? ((const uint16_t *)a.cand)[i] : ((const uint32_t *)a.cand)[i];
}

__global__ void k_rstd_probe(nmo_go_rstd_consts rc, const double *s, const double *m, double *out,
                             int64_t count)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    double rl = 0, rh = 0;
    int ok = rstd_dev(rc, s[i], (int64_t)m[i], -1, &rl, &rh);
    out[4 * i] = rl, out[4 * i + 1] = rh, out[4 * i + 2] = ok, out[4 * i + 3] = 0;
}

/* ---- swiglu on the device (refs/swiglu.c, fused plan: inter == compute) -----------------
 * Every step is the fast engine's, transcribed as for rms_norm: enclosures [lo, hi] of
 * compute (fp32) lattice values, each operation's binary64 value rounded to the lattice
 * (products and quotients of fp32 values: binary64 RN then RN32, innocuous double
 * rounding), exp and sigmoid snapped with the fast engine's radii (enc_fast.h
 * nmo_fe_fn_side: 2^-51 |v| for exp, nmo_fe_incr_side: 2^-48 |v| for the binary64
 * sigmoid 1/(1 + exp(-x))). The binary64 exp here is the device's: CUDA Math API,
 * "Double Precision Mathematical Functions": exp max 1 ulp (2^-52 relative), inside the
 * 2^-51 radius; the sigmoid's 1/(1 + exp(-x)) adds two correctly rounded steps: at most
 * 3 binary64 ulps, inside 2^-48. (ROCm OCML's f64 exp: 1 ulp, the same margin; the
 * simulator: glibc's exp, < 1 ulp.) So a snap the device decides is the lattice value of
 * the exact one, which is the CPU's whenever the CPU decides too, and the certified
 * engine's where the CPU escalates: fast(GPU) + escalation gives the certified verdicts.
 * A snap the device cannot decide, a non-finite step, a wide or non-finite R: the
 * element goes to the CPU checker (swiglu's units are elements). No error scale here:
 * the scale rule (wide R) is the host's. */
#if defined(NMO_HIP_NVIDIA) || defined(NMO_HIP_SIM) || !defined(NMO_HIP_BARE)
NMO_D double dexp(double x) { return exp(x); } /* CUDA, HIP's headers (OCML), glibc */
#else
/* without HIP's headers (the gfx942 CI compile): OCML's f64 exp, resolved at link time as
 * nmo_hip.h's __ocml_*_f32 (__builtin_exp has no device libcall there) */
extern "C" __device__ double __ocml_exp_f64(double);
NMO_D double dexp(double x) { return __ocml_exp_f64(x); }
#endif

struct ienc {
    double lo, hi;
};

NMO_D int fin2(const ienc &a) { return finite_d(a.lo) & finite_d(a.hi); }
NMO_D ienc hull2(const ienc &a, const ienc &b) { return ienc{dmin(a.lo, b.lo), dmax(a.hi, b.hi)}; }

/* nmo_fenc_mul (correctly rounded; nmo_fe_mul_exact's order of the four products) */
NMO_D ienc mul2(const ienc &a, const ienc &b)
{
    double l, h;
    if (a.lo == a.hi && b.lo == b.hi) {
        l = h = dmul(a.lo, b.lo);
    } else if (a.lo == a.hi || b.lo == b.hi) { /* two of the four products repeat: the same min/max */
        /* nmo_fe_mul_exact's chain with p3 = p1, p4 = p2 (a point) or p2 = p1, p4 = p3
         * (b a point): l = q < p1 ? q : p1 for the other product q, h likewise */
        double p1 = dmul(a.lo, b.lo), q = a.lo == a.hi ? dmul(a.lo, b.hi) : dmul(a.hi, b.lo);
        l = q < p1 ? q : p1;
        h = q > p1 ? q : p1;
    } else {
        double p1 = dmul(a.lo, b.lo), p2 = dmul(a.lo, b.hi), p3 = dmul(a.hi, b.lo), p4 = dmul(a.hi, b.hi);
        l = p1, h = p1;
        l = p2 < l ? p2 : l;
        h = p2 > h ? p2 : h;
        l = p3 < l ? p3 : l;
        h = p3 > h ? p3 : h;
        l = p4 < l ? p4 : l;
        h = p4 > h ? p4 : h;
    }
    return ienc{rnd32(l, 0), rnd32(h, 0)};
}

/* nmo_fenc_div, correctly rounded (the plans the device takes: fn_ulps DIV = RCP = 0);
 * *bad for a divisor holding 0 */
NMO_D ienc div2(const ienc &a, const ienc &b, int *bad)
{
    if (b.lo <= 0 && b.hi >= 0) { *bad = 1; return a; }
    double l, h;
    if (a.lo == a.hi) { /* q3 = q1, q4 = q2: the same min/max */
        double q1 = ddiv(a.lo, b.lo), q2 = ddiv(a.lo, b.hi);
        l = dmin(q1, q2), h = dmax(q1, q2);
    } else {
        double q1 = ddiv(a.lo, b.lo), q2 = ddiv(a.lo, b.hi), q3 = ddiv(a.hi, b.lo), q4 = ddiv(a.hi, b.hi);
        l = dmin(dmin(q1, q2), dmin(q3, q4)), h = dmax(dmax(q1, q2), dmax(q3, q4));
    }
    return ienc{rnd32(l, 0), rnd32(h, 0)};
}

/* nmo_fenc_exp with n = fn_ulps[EXP] of a point argument a whose binary64 exp is ev */
NMO_D ienc exp2e(const ienc &a, double ev, int n, int *unc, int *bad)
{
    double vlo = ev, vhi = ev; /* a.lo == a.hi */
    const double tiny = 0x1p-150; /* half fp32's smallest subnormal */
    double lo = dmul(vlo, 1 + 0x1p-50) < tiny ? 0 : fn_side(vlo, a.lo == 0, n, 0, unc, bad);
    double hi = dmul(vhi, 1 + 0x1p-50) < tiny ? rnd32(dmul((double)n, 0x1p-149), 1)
                                               : fn_side(vhi, a.hi == 0, n, 1, unc, bad);
    if (n != 0) apx_fix_pos(&lo, vlo, vhi, a.hi == 0, n, unc, bad);
    if (hi >= 0x1.fffffep127) *bad = 1; /* the CPU's hi becomes inf: the host's case */
    return ienc{lo < 0 ? 0 : lo, hi};
}

/* nmo_fe_incr_side for the sigmoid (radius 2^-48 |v|) of the point x. One addition,
 * decided exactly where the fast engine's radius cannot: for 2^-40 <= |x| <= 2^-12 the
 * side v* -+ n u lies within |x|^3/48 < 2^-41 of T = 1/2 + x/4 -+ n u (sigmoid(x) =
 * (1 + tanh(x/2))/2 and 0 < x - tanh x <= x^3/3 for x > 0), on the side -sign(x)
 * (tanh x < x for x > 0); when T is an fp32 value (exactly computed: the TwoSum errors
 * are 0) the directed snap of v* -+ n u is T or its neighbour on that side, which is
 * what the certified engine's ce_fn_side gives (exact value, then RU / RD). u is
 * ulp(v*): the binade test above it passed. */
NMO_D double incr_side(double v, double x, int exact, int n, int upper, int *unc, int *bad)
{
    if (exact || !finite_d(v)) return fn_side(v, 1, n, upper, unc, bad);
    double e = dmul(dabs(v), 0x1p-48);
    if (n == 0) return snap32(0, v, e, unc);
    double u = ulp32(v);
    if (u == 0 || ulp32(dsub(v, dmul(2, e))) == 0 || ulp32(dadd(v, dmul(2, e))) == 0) { *bad = 1; return v; }
    if (ulp32(dsub(v, dmul(2, e))) != u || ulp32(dadd(v, dmul(2, e))) != u) { *unc = 1; return v; }
    double w = upper ? dadd(v, dmul((double)n, u)) : dsub(v, dmul((double)n, u));
    int u2 = 0;
    double res = snap32(upper ? 1 : 2, w, dadd(e, dmul(dabs(w), 0x1p-52)), &u2);
    if (!u2) return res;
    double ax = dabs(x);
    if (ax >= 0x1p-40 && ax <= 0x1p-12) {
        double q = dmul(x, 0.25), c = dadd(0.5, q), nu = dmul((double)n, u);
        double T = upper ? dadd(c, nu) : dsub(c, nu);
        double te = upper ? two_sum_err(c, nu, T) : two_sum_err(c, -nu, T);
        if (two_sum_err(0.5, q, c) == 0 && te == 0 && rnd32(T, 0) == T) {
            int below = x > 0; /* v* - c < 0 */
            float tf = fcast(T);
            if (!upper) return below ? T : f32_step(tf, 1); /* RU(T + d) */
            return below ? f32_step(tf, 0) : T;             /* RD(T + d) */
        }
    }
    *unc = 1;
    return res;
}

/* nmo_fe_incr_sat for the sigmoid */
NMO_D int sig_sat(double x, double v, int n, int upper, double *res)
{
    if (x >= 40) {
        *res = upper || n == 0 ? 1.0 : rnd32(dsub(1.0, dmul((double)n, 0x1p-24)), 2);
        return 1;
    }
    if (dmul(v, 1 + 0x1p-40) < 0x1p-151) {
        *res = !upper || n == 0 ? 0.0 : rnd32(dmul((double)n, 0x1p-149), 1);
        return 1;
    }
    return 0;
}

/* nmo_fe_sigmoid_d(x) = 1/(1 + exp(-x)) from em = the binary64 exp(-x) */
NMO_D double sigmoid_d(double em) { return ddiv(1.0, dadd(1.0, em)); }

/* nmo_fenc_sigmoid of a point a: the library sigmoid (fn_ulps[SIGMOID]) hull
 * 1/(1 + exp(-a)); em = the binary64 exp(-a) (one call serves every use: the same
 * argument gives the same value); *den = RN(1 + exp(-a)) */
NMO_D ienc sigmoid2(const ienc &a, double em, int nsig, int nexp, int *unc, int *bad, ienc *den)
{
    double vl = sigmoid_d(em), vh = vl;
    int el = a.lo == 0, eh = a.hi == 0;
    double lo, hi;
    int sl = sig_sat(a.lo, vl, nsig, 0, &lo), sh = sig_sat(a.hi, vh, nsig, 1, &hi);
    if (!sl) lo = incr_side(vl, a.lo, el, nsig, 0, unc, bad);
    if (!sh) hi = incr_side(vh, a.hi, eh, nsig, 1, unc, bad);
    if (sl && dabs(vl) >= 0.5) vl = 1 - 0x1p-53, el = 1; /* vl > 0 */
    if (sh && dabs(vh) >= 0.5) vh = 1 - 0x1p-53, eh = 1;
    if (nsig != 0) apx_fix_pos(&lo, vl, vh, eh, nsig, unc, bad);
    ienc s1{lo < 0 ? 0 : lo > 1 ? 1 : lo, hi > 1 ? 1 : hi < 0 ? 0 : hi};
    ienc t = exp2e(ienc{-a.hi, -a.lo}, em, nexp, unc, bad);
    *den = ienc{rnd32(dadd(1.0, t.lo), 0), rnd32(dadd(1.0, t.hi), 0)};
    ienc q = div2(ienc{1.0, 1.0}, *den, bad);
    return hull2(s1, q);
}

/* swiglu's y for points a, b (refs/swiglu.c, fused): [*l, *h]; 0 when the host must do it */
NMO_D int swiglu_elem(double av, double bv, int nsig, int nexp, double *l, double *h)
{
    int unc = 0, bad = 0;
    ienc a{av, av}, b{bv, bv};
    ienc den;
    /* pw_silu's den = RN(1 + exp(-a)) is the sigmoid's own step, computed once */
    ienc sig = sigmoid2(a, dexp(-av), nsig, nexp, &unc, &bad, &den);
    ienc silu = hull2(mul2(a, sig), div2(a, den, &bad));
    /* pw_mul3x(a, sig, b) */
    ienc w0 = mul2(a, sig), w1 = mul2(w0, b);
    w0 = mul2(sig, b);
    w0 = mul2(a, w0);
    w1 = hull2(w1, w0);
    w0 = mul2(a, b);
    w0 = mul2(w0, sig);
    ienc y = hull2(w1, w0);
    y = hull2(y, mul2(silu, b));
    y = hull2(y, div2(mul2(a, b), den, &bad));
    *l = y.lo, *h = y.hi;
    return !unc && !bad && fin2(y) && fin2(sig) && fin2(den) && fin2(silu);
}

/* Elementwise operators: each thread a grid-stride run of elements; one fold per block. */
__global__ void __launch_bounds__(BLK) k_swiglu(nmo_go_ew_args a)
{
    __shared__ unsigned long long s_pass[BLK], s_fail[BLK], s_wmax[BLK], s_worst[BLK];
    __shared__ unsigned s_h0[BLK], s_h1[BLK];
    __shared__ unsigned s_hist[NMO_GO_HIST + 1];
    const int t = (int)threadIdx.x;
    for (int i = t; i <= NMO_GO_HIST; i += BLK) s_hist[i] = 0;
    __syncthreads();
    unsigned long long pass = 0, fail = 0, wmax = 0, worst = 0;
    unsigned h0 = 0, h1 = 0;
    const int64_t stride = (int64_t)gridDim.x * BLK;
    for (int64_t i = (int64_t)blockIdx.x * BLK + t; i < a.numel; i += stride) {
        double av = load_in(a.x0, a.in_bf16, i), bv = load_in(a.x1, a.in_bf16, i);
        double l = 0, h = 0;
        int ok = (dabs(av) <= 0x1p1000) & (dabs(bv) <= 0x1p1000);
        if (ok) ok = swiglu_elem(av, bv, a.nsig, a.nexp, &l, &h);
        int fl = 0;
        unsigned long long key = 0;
        int64_t wd = 0;
        if (ok) ok = judge_elem(cand_bits(a.cand, a.out_bf16, i), a.out_bf16, i, l, h, a.max_ulps, a.verd, a.rlo, a.rhi,
                                &fl, &key, &wd);
        if (!ok) {
            unsigned long long k = at_inc(&a.acc->n_redo);
            if (k < (unsigned long long)a.redo_cap) a.redo[k] = i;
            continue;
        }
        if (fl) fail++; else pass++;
        worst = key > worst ? key : worst;
        wmax = (unsigned long long)wd > wmax ? (unsigned long long)wd : wmax;
        if (wd == 0) h0++;
        else if (wd == 1) h1++;
        else at_add32(&s_hist[wd < NMO_GO_HIST ? wd : NMO_GO_HIST], 1);
    }
    s_pass[t] = pass, s_fail[t] = fail, s_wmax[t] = wmax, s_worst[t] = worst, s_h0[t] = h0, s_h1[t] = h1;
    __syncthreads();
    for (int hh = BLK / 2; hh > 0; hh >>= 1) {
        if (t < hh) {
            s_pass[t] += s_pass[t + hh], s_fail[t] += s_fail[t + hh];
            s_h0[t] += s_h0[t + hh], s_h1[t] += s_h1[t + hh];
            s_wmax[t] = s_wmax[t] > s_wmax[t + hh] ? s_wmax[t] : s_wmax[t + hh];
            s_worst[t] = s_worst[t] > s_worst[t + hh] ? s_worst[t] : s_worst[t + hh];
        }
        __syncthreads();
    }
    if (t == 0) {
        at_add(&a.acc->n_pass, s_pass[0]);
        at_add(&a.acc->n_fail, s_fail[0]);
        if (s_h0[0]) at_add(&a.acc->hist[0], s_h0[0]);
        if (s_h1[0]) at_add(&a.acc->hist[1], s_h1[0]);
        at_max(&a.acc->wmax, s_wmax[0]);
        at_max(&a.acc->worst, s_worst[0]);
    }
    for (int i = t; i <= NMO_GO_HIST; i += BLK)
        if (s_hist[i]) at_add(&a.acc->hist[i], s_hist[i]);
}

int grid_for(int64_t rows)
{
    int64_t g = rows < 65535 ? rows : 65535;
    return (int)(g > 0 ? g : 1);
}

} // namespace

extern "C" nmo_status nmo_go_rowsumsq(const void *x, int in_bf16, int64_t rows, int64_t n, double *s,
                                      int64_t *m, uint8_t *bad, nmo_err *err)
{
    NMO_RETURN_IF_ERR(nmo_gpu_init(err));
    hipStream_t st = (hipStream_t)nmo_gpu_stream();
    nmo_launch(k_rowsumsq, dim3(grid_for(rows)), dim3(BLK), 0, st, x, in_bf16, rows, n, s, m, bad);
    return nmo_gpu_sync_check("gpu oracle: k_rowsumsq", err);
}

extern "C" nmo_status nmo_go_rms_judge(const nmo_go_rms_args *a, nmo_go_acc *acc_host, nmo_err *err)
{
    NMO_RETURN_IF_ERR(nmo_gpu_init(err));
    hipStream_t st = (hipStream_t)nmo_gpu_stream();
    NMO_RETURN_IF_ERR(nmo_gpu_fill_async(a->acc, 0, sizeof(nmo_go_acc), err));
    const int tk = nmo_go_time_kernels;
    nmo_go_ms_k1 = nmo_go_ms_k2 = 0;
    if (tk) NMO_RETURN_IF_ERR(nmo_gpu_timer_start(err));
    if (!a->rrow) {
        int64_t g = (a->rows + RPB - 1) / RPB;
        nmo_launch(k_rms_rows, dim3((int)(g < 65535 ? g : 65535)), dim3(BLK), 0, st, *a);
    }
    if (tk) NMO_RETURN_IF_ERR(nmo_gpu_timer_stop(&nmo_go_ms_k1, err));
    if (tk) NMO_RETURN_IF_ERR(nmo_gpu_timer_start(err));
    /* at most 16 blocks an SM's worth (132 SMs): each block folds its counts once; the
     * simulator takes 3 blocks, so that every block walks several rows (the flag slots) */
#if defined(NMO_HIP_SIM)
    const int64_t gmax = 3;
#else
    const int64_t gmax = 132 * 16;
#endif
    nmo_launch(k_rms_elems, dim3(grid_for(a->rows < gmax ? a->rows : gmax)), dim3(BLK), 0, st, *a);
    if (tk) NMO_RETURN_IF_ERR(nmo_gpu_timer_stop(&nmo_go_ms_k2, err));
    nmo_launch(k_rms_gather, dim3(1), dim3(1), 0, st, *a);
    NMO_RETURN_IF_ERR(nmo_gpu_d2h(acc_host, a->acc, sizeof(nmo_go_acc), err));
    return nmo_gpu_sync_check("gpu oracle: k_rms_rows/k_rms_elems", err);
}

extern "C" nmo_status nmo_go_rstd_probe(const nmo_go_rstd_consts *rc, int64_t n, const double *s_dev,
                                        const double *m_dev, double *out_dev, int64_t count, nmo_err *err)
{
    (void)n;
    NMO_RETURN_IF_ERR(nmo_gpu_init(err));
    hipStream_t st = (hipStream_t)nmo_gpu_stream();
    int64_t g = (count + BLK - 1) / BLK;
    nmo_launch(k_rstd_probe, dim3((int)(g > 0 ? g : 1)), dim3(BLK), 0, st, *rc, s_dev, m_dev, out_dev, count);
    return nmo_gpu_sync_check("gpu oracle: k_rstd_probe", err);
}

extern "C" nmo_status nmo_go_ew_judge(const nmo_go_ew_args *a, nmo_go_acc *acc_host, nmo_err *err)
{
    NMO_RETURN_IF_ERR(nmo_gpu_init(err));
    hipStream_t st = (hipStream_t)nmo_gpu_stream();
    NMO_RETURN_IF_ERR(nmo_gpu_fill_async(a->acc, 0, sizeof(nmo_go_acc), err));
    int64_t g = (a->numel + BLK * 8 - 1) / (BLK * 8); /* 8 elements a thread */
    g = g < 1 ? 1 : g > 65535 ? 65535 : g;
    const int tk = nmo_go_time_kernels;
    nmo_go_ms_k1 = nmo_go_ms_k2 = 0;
    if (tk) NMO_RETURN_IF_ERR(nmo_gpu_timer_start(err));
    nmo_launch(k_swiglu, dim3((int)g), dim3(BLK), 0, st, *a);
    if (tk) NMO_RETURN_IF_ERR(nmo_gpu_timer_stop(&nmo_go_ms_k2, err));
    NMO_RETURN_IF_ERR(nmo_gpu_d2h(acc_host, a->acc, sizeof(nmo_go_acc), err));
    return nmo_gpu_sync_check("gpu oracle: k_swiglu", err);
}

#include "gpu_oracle_rows_dev.h" /* softmax's and layer_norm's rows: the helpers above, one copy */
#include "gpu_oracle_matmul.inc"
