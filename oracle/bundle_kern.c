/* numoracle: the inner loops of stored-bounds judging and bound-tensor validation,
 * written as straight-line passes that the compiler vectorizes (this file is built with
 * -O3, like the fast engine). They run over every element of every bundle a runner
 * loads, which is what makes checking against stored bounds cheaper than recomputing.
 *
 * Every supported format orders its non-NaN values by sign-magnitude, with +-inf one
 * step beyond +-max and -0 equal to +0. NaN: a magnitude above nan_above (inf's, or
 * max's in formats without inf), or the fnuz NaN, the sign bit alone. tf32 is not
 * handled here (its callers take the exact path). */
#include <stdint.h>
#include <string.h>

#include "nmo_internal.h"

/* Order keys in the storage type itself, so that every operation stays in one lane
 * width and vectorizes: key(x) = SB - mag for negative x, SB + mag otherwise. Keys are
 * monotone in value, key(-0) = key(+0) = SB, and key differences are ordinal
 * differences (ulps), which fit the type (at most 2^BITS - 2). */
#define NMO_KEY(T, x) (((x) & SB) ? (T)(SB - ((x) & MK)) : (T)(SB + ((x) & MK)))

/* pass: ok[i] = flags clear, candidate no NaN and inside [lo, hi]; w[i] = hi - lo in
 * ulps (meaningful where ok). Returns the number of ok elements and, in *wmax, their
 * largest width (-1 when none). fz is the fnuz NaN pattern (the sign bit alone), or the
 * all-ones pattern for other formats, where it is a NaN that the magnitude test already
 * rejects: the loop stays branch-free. */
#define NMO_KERN(SUF, T, BITS)                                                                         \
    static int64_t pass_##SUF(const T *restrict lo, const T *restrict hi, const T *restrict cv,          \
                              const uint8_t *restrict fl, int64_t m, T na, T fz, uint8_t *restrict ok,  \
                              T *restrict w, int64_t *wmax)                                            \
    {                                                                                                  \
        const T SB = (T)((T)1 << (BITS - 1)), MK = (T)(SB - 1);                                        \
        T mx = 0;                                                                                      \
        for (int64_t i = 0; i < m; i++) {                                                              \
            T l = lo[i], h = hi[i], c = cv[i];                                                         \
            T kl = NMO_KEY(T, l), kh = NMO_KEY(T, h), kc = NMO_KEY(T, c);                              \
            T f = fl[i];                                                                               \
            T g = (T)((f == 0) & (kl <= kc) & (kc <= kh) & ((T)(c & MK) <= na) & (c != fz));           \
            T wi = (T)(kh - kl);                                                                       \
            ok[i] = (uint8_t)g;                                                                        \
            w[i] = wi;                                                                                 \
            T cw = (T)(wi & (T)-g);                                                                    \
            mx = cw > mx ? cw : mx;                                                                    \
        }                                                                                              \
        uint32_t cnt = 0;                                                                              \
        for (int64_t i = 0; i < m; i++) cnt += ok[i];                                                  \
        *wmax = cnt ? (int64_t)mx : -1;                                                                \
        return (int64_t)cnt;                                                                           \
    }                                                                                                  \
    static int bad_##SUF(const T *restrict lo, const T *restrict hi, const T *restrict e,               \
                         const uint8_t *restrict fl, int64_t m, T na, T fz)                            \
    {                                                                                                  \
        const T SB = (T)((T)1 << (BITS - 1)), MK = (T)(SB - 1);                                        \
        T acc = 0;                                                                                     \
        for (int64_t i = 0; i < m; i++) {                                                              \
            T l = lo[i], h = hi[i];                                                                    \
            T kl = NMO_KEY(T, l), kh = NMO_KEY(T, h);                                                  \
            T f = fl[i];                                                                               \
            acc |= (T)((f > 7) | (kl > kh) | ((T)(l & MK) > na) | ((T)(h & MK) > na) | (l == fz) |     \
                       (h == fz));                                                                     \
        }                                                                                              \
        if (e)                                                                                         \
            for (int64_t i = 0; i < m; i++) {                                                          \
                T l = lo[i], h = hi[i], x = e[i];                                                      \
                T kl = NMO_KEY(T, l), kh = NMO_KEY(T, h), kx = NMO_KEY(T, x);                          \
                acc |= (T)((kx < kl) | (kx > kh) | ((T)(x & MK) > na) | (x == fz));                    \
            }                                                                                          \
        return acc != 0;                                                                               \
    }

NMO_KERN(8, uint8_t, 8)
NMO_KERN(16, uint16_t, 16)
NMO_KERN(32, uint32_t, 32)
NMO_KERN(64, uint64_t, 64)

int64_t nmo__judge_pass(int bits, const void *lo, const void *hi, const void *cv, const uint8_t *fl, int64_t m,
                        uint64_t nan_above, int fnuz, uint8_t *ok, void *w, int64_t *wmax)
{
    switch (bits) {
    case 8: return pass_8(lo, hi, cv, fl, m, (uint8_t)nan_above, fnuz ? 0x80u : 0xffu, ok, w, wmax);
    case 16: return pass_16(lo, hi, cv, fl, m, (uint16_t)nan_above, fnuz ? 0x8000u : 0xffffu, ok, w, wmax);
    case 32: return pass_32(lo, hi, cv, fl, m, (uint32_t)nan_above, fnuz ? 0x80000000u : 0xffffffffu, ok, w, wmax);
    default: return pass_64(lo, hi, cv, fl, m, nan_above, fnuz ? 1ull << 63 : ~0ull, ok, w, wmax);
    }
}

int nmo__bounds_bad(int bits, const void *lo, const void *hi, const void *e, const uint8_t *fl, int64_t m,
                    uint64_t nan_above, int fnuz)
{
    switch (bits) {
    case 8: return bad_8(lo, hi, e, fl, m, (uint8_t)nan_above, fnuz ? 0x80u : 0xffu);
    case 16: return bad_16(lo, hi, e, fl, m, (uint16_t)nan_above, fnuz ? 0x8000u : 0xffffu);
    case 32: return bad_32(lo, hi, e, fl, m, (uint32_t)nan_above, fnuz ? 0x80000000u : 0xffffffffu);
    default: return bad_64(lo, hi, e, fl, m, nan_above, fnuz ? 1ull << 63 : ~0ull);
    }
}
