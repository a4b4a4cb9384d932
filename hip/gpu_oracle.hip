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
 * no exp/log on the device (the row's rsqrt is the host's fast engine).
 *
 * One block per row (grid-stride), shared-memory trees only (no shuffles or ballots:
 * the same code on 32- and 64-lane hardware and in the simulator). Counts go to global
 * memory by atomics once per row, and only for rows the device decided. */
#include <stdint.h>

#include "nmo_hip.h"
#include "nmo_gpu.h"
#include "nmo_gpu_oracle.h"

#if defined(__clang__) && !defined(NMO_HIP_SIM)
#pragma clang fp contract(off)
#endif

namespace {

constexpr int BLK = 256;

#if defined(NMO_HIP_NVIDIA) && defined(__CUDA_ARCH__)
NMO_D double dmul(double a, double b) { return __dmul_rn(a, b); }
NMO_D double dadd(double a, double b) { return __dadd_rn(a, b); }
NMO_D double dsub(double a, double b) { return __dsub_rn(a, b); }
#else
NMO_D double dmul(double a, double b) { return a * b; }
NMO_D double dadd(double a, double b) { return a + b; }
NMO_D double dsub(double a, double b) { return a - b; }
#endif

#if defined(NMO_HIP_SIM)
/* the simulator runs a block's fibers one at a time, switching only at barriers */
NMO_D void at_add(unsigned long long *p, unsigned long long v) { *p += v; }
NMO_D void at_add32(unsigned *p, unsigned v) { *p += v; }
NMO_D void at_max(unsigned long long *p, unsigned long long v) { *p = v > *p ? v : *p; }
#elif defined(NMO_HIP_NVIDIA)
NMO_D void at_add(unsigned long long *p, unsigned long long v) { atomicAdd(p, v); }
NMO_D void at_add32(unsigned *p, unsigned v) { atomicAdd(p, v); }
NMO_D void at_max(unsigned long long *p, unsigned long long v) { atomicMax(p, v); }
#else /* hipcc and the bare device-only clang check: clang's builtins */
NMO_D void at_add(unsigned long long *p, unsigned long long v) { __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
NMO_D void at_add32(unsigned *p, unsigned v) { __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
NMO_D void at_max(unsigned long long *p, unsigned long long v) { __atomic_fetch_max(p, v, __ATOMIC_RELAXED); }
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

/* ordinal of an fp32 / bf16 bit pattern (sign-magnitude to a signed integer) */
NMO_D int64_t ord_bits(uint32_t u, int bf16)
{
    if (bf16) {
        int64_t m = (int64_t)(u & 0x7fffu);
        return (u & 0x8000u) ? -m : m;
    }
    int64_t m = (int64_t)(u & 0x7fffffffu);
    return (u >> 31) ? -m : m;
}

__global__ void __launch_bounds__(BLK) k_rms_judge(nmo_go_rms_args a)
{
    __shared__ int s_redo;
    __shared__ unsigned long long s_pass, s_fail, s_wmax, s_worst;
    __shared__ unsigned s_hist[NMO_GO_HIST + 1]; /* 16 KB */
    const int t = (int)threadIdx.x;
    const int64_t n = a.n;
    for (int64_t row = blockIdx.x; row < a.rows; row += gridDim.x) {
        if (a.skip[row]) continue; /* uniform over the block */
        if (t == 0) s_redo = 0, s_pass = s_fail = s_wmax = s_worst = 0;
        for (int i = t; i <= NMO_GO_HIST; i += BLK) s_hist[i] = 0;
        __syncthreads();
        const double rl = a.rrow[3 * row], rh = a.rrow[3 * row + 1], rm = a.rrow[3 * row + 2];
        int redo = 0;
        unsigned long long pass = 0, fail = 0, wmax = 0, worst = 0;
        for (int64_t j = t; j < n; j += BLK) {
            const int64_t i = row * n + j;
            /* nmo_fe_mul3_row_kernel, operation for operation */
            double xv = load_in(a.x, a.in_bf16, i), wv = load_in(a.w, a.in_bf16, j);
            double ad = dmul(xv, wv); /* exact */
            double p1 = dmul(ad, rl), p2 = dmul(ad, rh);
            double plo = p1 < p2 ? p1 : p2, phi = p1 < p2 ? p2 : p1;
            double ax = dabs(xv), aw = dabs(wv);
            double m = ax > rm ? ax : rm;
            m = m > aw ? m : aw;
            double eta = dmul(a.etac, m);
            double vlo = dsub(dsub(plo, dmul(dabs(plo), a.uc)), eta);
            double vhi = dadd(dadd(phi, dmul(dabs(phi), a.uc)), eta);
            double elo = dadd(dmul(dabs(vlo), 0x1p-50), dmul(eta, 0x1p-50));
            double ehi = dadd(dmul(dabs(vhi), 0x1p-50), dmul(eta, 0x1p-50));
            double l, h;
            int ok = rn32_try(vlo, dadd(dadd(elo, dmul(dabs(vlo), 0x1p-50)), 0x1p-1060), &l);
            ok &= rn32_try(vhi, dadd(dadd(ehi, dmul(dabs(vhi), 0x1p-50)), 0x1p-1060), &h);
            ok &= (dabs(xv) <= 0x1p1000) & (dabs(wv) <= 0x1p1000);
            /* check.c judge_class_bf16 / judge_class_fp32 on the fp32 endpoints l, h */
            uint32_t ul = f2u((float)l), uh = f2u((float)h);
            int spec = ((ul & 0x7fffffffu) > 0x7f7fffffu) | ((uh & 0x7fffffffu) > 0x7f7fffffu);
            uint32_t cb;
            if (a.out_bf16) {
                ul = (ul + 0x7fffu + ((ul >> 16) & 1u)) >> 16; /* RNE into bf16 */
                uh = (uh + 0x7fffu + ((uh >> 16) & 1u)) >> 16;
                spec |= ((ul & 0x7fffu) >= 0x7f80u) | ((uh & 0x7fffu) >= 0x7f80u); /* overflow */
                cb = ((const uint16_t *)a.cand)[i];
            } else {
                cb = ((const uint32_t *)a.cand)[i];
            }
            int64_t ol = ord_bits(ul, a.out_bf16), oh = ord_bits(uh, a.out_bf16);
            int64_t oc = ord_bits(cb, a.out_bf16);
            int64_t mc = oc < 0 ? -oc : oc;
            int cnan = a.out_bf16 ? mc > 0x7f80 : mc > 0x7f800000;
            int fl = cnan | (oc < ol) | (oc > oh);
            int64_t wd = oh - ol;
            /* the general judge's cases (NaN flags, non-finite R, wide R: the scale rule)
             * and undecided snaps go to the host with the whole row */
            redo |= !ok | spec | (wd + 1 > a.max_ulps);
            if (redo) continue;
            a.verd[i] = (uint8_t)(fl ? NMO_FAIL : NMO_PASS);
            if (a.rlo) {
                a.rlo[i] = a.out_bf16 ? (double)u2f(ul << 16) : (double)u2f(ul);
                a.rhi[i] = a.out_bf16 ? (double)u2f(uh << 16) : (double)u2f(uh);
            }
            /* judge_core's distance outside R in ordinals (+-inf one step beyond the
             * largest finite value: the bit patterns' own ordinals; NaN: the maximum) */
            unsigned long long metric;
            if (fl) {
                fail++;
                int64_t d = cnan ? INT64_MAX : oc > oh ? oc - oh : ol - oc;
                metric = d > 0xffffffffLL ? 0xffffffffull : (unsigned long long)d;
                metric |= 2ull << 32;
            } else {
                pass++;
                metric = (unsigned long long)wd;
            }
            worst = metric > worst ? metric : worst;
            wmax = (unsigned long long)wd > wmax ? (unsigned long long)wd : wmax;
            at_add32(&s_hist[wd < NMO_GO_HIST ? wd : NMO_GO_HIST], 1); /* shared memory */
        }
        if (redo) s_redo = 1; /* benign race: every writer stores 1 */
        at_add(&s_pass, pass);
        at_add(&s_fail, fail);
        at_max(&s_wmax, wmax);
        at_max(&s_worst, worst);
        __syncthreads();
        if (t == 0) a.redo[row] = (uint8_t)s_redo;
        if (!s_redo) {
            if (t == 0) {
                at_add(&a.acc->n_pass, s_pass);
                at_add(&a.acc->n_fail, s_fail);
                at_max(&a.acc->wmax, s_wmax);
                unsigned long long rank = s_worst >> 32, metric = s_worst & 0xffffffffull;
                at_max(&a.acc->worst, rank << 62 | metric << 30 |
                                          (unsigned long long)(0x3fffffffLL - row));
            }
            for (int i = t; i <= NMO_GO_HIST; i += BLK)
                if (s_hist[i]) at_add(&a.acc->hist[i], s_hist[i]);
        }
        __syncthreads();
    }
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

extern "C" nmo_status nmo_go_rms_judge(const nmo_go_rms_args *a, nmo_err *err)
{
    NMO_RETURN_IF_ERR(nmo_gpu_init(err));
    hipStream_t st = (hipStream_t)nmo_gpu_stream();
    nmo_launch(k_rms_judge, dim3(grid_for(a->rows)), dim3(BLK), 0, st, *a);
    return nmo_gpu_sync_check("gpu oracle: k_rms_judge", err);
}
