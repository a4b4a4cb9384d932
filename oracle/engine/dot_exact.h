/* numoracle: exact dot products of short-significand values, and the exact snaps of a dot
 * product's enclosure to the fp32 lattice (the certified engine's result, computed with
 * integers).
 *
 * Why: a dot product of bf16, fp16 or fp32 values with small-integer or few-bit data
 * (torch.randint tensors, quantized weights, the test families of a kernel suite) has an
 * exact sum s and sum of magnitudes A with few bits, so the model's endpoints
 * s -+ (k u A + keta) fall exactly next to an fp32 value (s - k u A on the lattice, keta
 * below it). No binary64 radius, compensated or not, separates them from it: the fast
 * engines left these to MPFR (~1 ms an element at K = 4096). Here s and A are exact
 * integers on a fixed binary point, and the endpoints are rounded exactly.
 *
 * Equal to the certified engine (oracle/engine/cert_priv.h ce_dot_d + ce_red_finish):
 * its products are exact (2 WP = 512 bits), its sums slo, shi, A (4 WP = 1024 bits) are
 * exact whenever the terms span fewer than 1024 bits (products of fp32 values span at
 * most 2^-298 .. 2^256, plus 24 bits of carries), and so are em = RU(RU(A k) u) + keta
 * (A k: < 350 bits; u a power of two; keta a binary64 value >= 2^-1074, A k u >= 2^-400)
 * and slo - em, shi + em: every rounding it performs is exact on these inputs, and its
 * lattice roundings are the exact RU (lower end) and RD (upper end) that this file
 * performs. What the fixed point cannot hold (a value outside it, a significand wider
 * than 24 bits, |endpoint| >= 2^126 or below 2^-126, A >= 2^100) is reported, and the
 * caller leaves the element to the certified engine.
 *
 * Plain C on integers (bit patterns in, bit patterns out), no floating point: the one copy
 * for the host and the device (hip/gpu_oracle_matmul.inc includes it with NMO_XD set to its
 * device qualifier). Limbs are int64 holding 32-bit digits of weight 2^(32 i + NMO_XD_BASE);
 * an addition puts < 2^32 into a limb, at most 4 a term, so K < 2^24 terms stay below 2^58
 * before nmo_xacc_norm (carries into 32-bit digits, the top limb signed). */
#ifndef NMO_DOT_EXACT_H
#define NMO_DOT_EXACT_H

#include <stdint.h>

#ifndef NMO_XD
#define NMO_XD static inline
#endif

enum { NMO_XD_NL = 24, NMO_XD_BASE = -448 }; /* 768 bits: 2^-448 .. 2^320 */

typedef struct {
    int64_t l[NMO_XD_NL];
} nmo_xacc;

NMO_XD void nmo_xacc_zero(nmo_xacc *a)
{
    for (int i = 0; i < NMO_XD_NL; i++) a->l[i] = 0;
}

/* x = (-1)^neg m 2^e from binary64 bits; m = 0 for a zero. 0: not finite. */
NMO_XD int nmo_xd_split(uint64_t u, uint64_t *m, int *e, int *neg)
{
    int ex = (int)((u >> 52) & 0x7ff);
    uint64_t f = u & 0xfffffffffffffull;
    if (ex == 0x7ff) return 0;
    *neg = (int)(u >> 63);
    *m = ex ? f | (1ull << 52) : f;
    *e = ex ? ex - 1075 : -1074;
    return 1;
}

/* m odd (trailing zeros into e), m != 0 */
NMO_XD void nmo_xd_odd(uint64_t *m, int *e)
{
    for (int s = 32; s > 0; s >>= 1)
        if ((*m & ((1ull << s) - 1)) == 0) *m >>= s, *e += s;
}

/* a += (-1)^neg v 2^(pos + NMO_XD_BASE), v < 2^64, in 16-bit pieces. 0: outside. */
NMO_XD int nmo_xacc_add_bits(nmo_xacc *a, uint64_t v, int pos, int neg)
{
    for (int q = 0; q < 4; q++) {
        uint64_t c = (v >> (16 * q)) & 0xffff;
        if (!c) continue;
        int p = pos + 16 * q;
        if (p < 0 || (p >> 5) + 1 >= NMO_XD_NL) return 0;
        uint64_t w = c << (p & 31); /* < 2^47 */
        int64_t lo = (int64_t)(w & 0xffffffffull), hi = (int64_t)(w >> 32);
        if (neg) lo = -lo, hi = -hi;
        a->l[p >> 5] += lo;
        a->l[(p >> 5) + 1] += hi;
    }
    return 1;
}

/* s += x y, a += |x y| for x, y with binary64 bits ux, uy whose significands fit in 24
 * bits (every bf16, fp16 and fp32 value): the product is exact (48 bits). 0: otherwise. */
NMO_XD int nmo_xacc_add_prod(nmo_xacc *s, nmo_xacc *a, uint64_t ux, uint64_t uy)
{
    uint64_t mx, my;
    int ex, ey, nx, ny;
    if (!nmo_xd_split(ux, &mx, &ex, &nx) || !nmo_xd_split(uy, &my, &ey, &ny)) return 0;
    if (mx == 0 || my == 0) return 1;
    const uint64_t low29 = (1ull << 29) - 1;
    if ((mx & low29) || (my & low29)) return 0;
    uint64_t p = (mx >> 29) * (my >> 29);
    int pos = ex + ey + 58 - NMO_XD_BASE;
    return nmo_xacc_add_bits(s, p, pos, nx ^ ny) && nmo_xacc_add_bits(a, p, pos, 0);
}

NMO_XD void nmo_xacc_addto(nmo_xacc *a, const nmo_xacc *b)
{
    for (int i = 0; i < NMO_XD_NL; i++) a->l[i] += b->l[i];
}

/* carries: digits 0..NL-2 into [0, 2^32), the top limb signed. 0: the top limb left
 * +-2^31 (the value is outside the fixed point). */
NMO_XD int nmo_xacc_norm(nmo_xacc *a)
{
    for (int i = 0; i + 1 < NMO_XD_NL; i++) {
        int64_t low = (int64_t)((uint64_t)a->l[i] & 0xffffffffull);
        int64_t c = (a->l[i] - low) / 4294967296; /* exact: a multiple of 2^32 */
        a->l[i] = low;
        a->l[i + 1] += c;
    }
    int64_t t = a->l[NMO_XD_NL - 1];
    return t < 2147483648LL && t >= -2147483648LL;
}

/* of a normalized a: 1 when negative; |a| into m (normalized) */
NMO_XD int nmo_xacc_abs(nmo_xacc *m, const nmo_xacc *a)
{
    int neg = a->l[NMO_XD_NL - 1] < 0;
    for (int i = 0; i < NMO_XD_NL; i++) m->l[i] = neg ? -a->l[i] : a->l[i];
    if (neg) nmo_xacc_norm(m);
    return neg;
}

/* of a normalized nonnegative m: the position of its top bit (its value lies in
 * [2^(p + BASE), 2^(p + BASE + 1))), -1 for zero */
NMO_XD int nmo_xacc_top(const nmo_xacc *m)
{
    for (int i = NMO_XD_NL - 1; i >= 0; i--) {
        uint64_t d = (uint64_t)m->l[i];
        if (!d) continue;
        int b = 0;
        for (int s = 32; s > 0; s >>= 1)
            if (d >> (b + s)) b += s;
        return 32 * i + b;
    }
    return -1;
}

/* bits [p, p + 25) of a normalized nonnegative m (p >= 0), and whether any bit below p is set */
NMO_XD uint64_t nmo_xacc_bits(const nmo_xacc *m, int p, int *below)
{
    int d = p >> 5, r = p & 31;
    uint64_t w = (uint64_t)m->l[d] >> r;
    if (d + 1 < NMO_XD_NL) w |= (uint64_t)m->l[d + 1] << (32 - r);
    *below = (r && ((uint64_t)m->l[d] & ((1ull << r) - 1))) != 0;
    for (int i = 0; i < d && !*below; i++) *below = m->l[i] != 0;
    return w & ((1ull << 25) - 1);
}

/* binary64 bits of (-1)^neg M 2^q, M < 2^26 */
NMO_XD uint64_t nmo_xd_make(int neg, uint64_t M, int q)
{
    if (M == 0) return (uint64_t)neg << 63;
    int t = 0;
    for (int s = 16; s > 0; s >>= 1)
        if (M >> (t + s)) t += s;
    return ((uint64_t)neg << 63) | ((uint64_t)(q + t + 1023) << 52) | ((M << (52 - t)) & 0xfffffffffffffull);
}

/* The fp32 lattice value of x (normalized) rounded up (up = 1) or down: binary64 bits.
 * 0: |x| >= 2^126 or 0 < |x| < 2^-126 (overflow margins and the subnormal range: the
 * certified engine's). */
NMO_XD int nmo_xacc_round_f32(const nmo_xacc *x, int up, uint64_t *out)
{
    nmo_xacc m;
    int neg = nmo_xacc_abs(&m, x), p = nmo_xacc_top(&m);
    if (p < 0) { *out = 0; return 1; } /* +0, as RU and RD of an exact zero */
    int E = p + NMO_XD_BASE;
    if (E >= 126 || E < -126) return 0;
    int q = E - 23, below;
    uint64_t M = nmo_xacc_bits(&m, q - NMO_XD_BASE, &below); /* 2^23 <= M < 2^24 */
    if (below && (up != neg)) M++; /* away from zero: RU of a positive, RD of a negative */
    *out = nmo_xd_make(neg, M, q);
    return 1;
}

/* The certified engine's dot-product enclosure on the fp32 lattice (ce_red_finish):
 * lo = RU(s - em), hi = RD(s + em), em = A k u + keta, for exact normalized s and A >= 0
 * (k, u, keta: binary64 bits, u a power of two), and the scale's binade mag = 2^floor(log2 A)
 * (0 when A = 0; ce_dot_mag). Bits into lo, hi, mag. 0: outside the fixed point. */
NMO_XD int nmo_xd_dot_snap(const nmo_xacc *s, const nmo_xacc *A, uint64_t k, uint64_t u, uint64_t keta,
                           uint64_t *lo, uint64_t *hi, uint64_t *mag)
{
    uint64_t mk, mu, mt;
    int ek, eu, et, nk, nu, nt;
    if (!nmo_xd_split(k, &mk, &ek, &nk) || !nmo_xd_split(u, &mu, &eu, &nu) ||
        !nmo_xd_split(keta, &mt, &et, &nt) || nk || nu || nt || mu == 0)
        return 0;
    nmo_xd_odd(&mu, &eu);
    if (mu != 1 || A->l[NMO_XD_NL - 1] < 0) return 0;
    int pa = nmo_xacc_top(A);
    if (pa + NMO_XD_BASE >= 100) return 0;
    nmo_xacc em;
    nmo_xacc_zero(&em);
    if (mk) {
        nmo_xd_odd(&mk, &ek);
        for (int i = 0; i < NMO_XD_NL; i++) {
            uint64_t d = (uint64_t)A->l[i];
            if (!d) continue;
            for (int q = 0; q < 4; q++) { /* d (< 2^32) times 16 bits of mk, at its place */
                uint64_t c = (mk >> (16 * q)) & 0xffff;
                if (c && !nmo_xacc_add_bits(&em, d * c, 32 * i + 16 * q + ek + eu, 0)) return 0;
            }
        }
    }
    if (mt) {
        nmo_xd_odd(&mt, &et);
        if (!nmo_xacc_add_bits(&em, mt, et - NMO_XD_BASE, 0)) return 0;
    }
    if (!nmo_xacc_norm(&em)) return 0;
    nmo_xacc x = *s;
    for (int i = 0; i < NMO_XD_NL; i++) x.l[i] -= em.l[i];
    if (!nmo_xacc_norm(&x) || !nmo_xacc_round_f32(&x, 1, lo)) return 0;
    x = *s;
    nmo_xacc_addto(&x, &em);
    if (!nmo_xacc_norm(&x) || !nmo_xacc_round_f32(&x, 0, hi)) return 0;
    *mag = pa < 0 ? 0 : (uint64_t)(pa + NMO_XD_BASE + 1023) << 52;
    return 1;
}

#endif
