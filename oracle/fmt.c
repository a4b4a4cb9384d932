/* numoracle: number formats by bit manipulation on binary64 (DESIGN §3).
 *
 * Every format value is a double, so rounding x into a format is clearing low bits of
 * x's binary64 significand: the encoding of non-negative doubles is monotone, so
 * "truncate, then add one quantum" carries into the exponent field by itself. No MPFR
 * here; fmt_mpfr.c is the independent check (tests/test_fmt.c compares them).
 *
 * Decisions (also in the README's format section):
 *  - Overflow means "the value rounded with an unbounded exponent range exceeds
 *    max_finite". For E4M3FN the lattice point above 448 is 480, so under RNE
 *    (448, 464] -> 448 and (464, ...) overflows (same as OCP / PyTorch).
 *  - NMO_OVF_IEEE: RNE and rounding away from zero give +-inf; rounding toward zero gives
 *    +-max. In a format without inf the "inf" outcome is NaN.
 *  - NMO_OVF_SAT: +-max, also for +-inf input (OCP saturating conversion).
 *  - NMO_OVF_NAN: every overflow is NaN; +-inf input stays inf where the format has inf.
 *  - ftz: round to the format (subnormals included), then results whose magnitude is
 *    below min_normal become zero. Inputs are not flushed here.
 *  - NaN input gives the format's canonical (positive, quiet) NaN; -0 into fnuz gives +0.
 *  - tf32 decode ignores the low 13 bits (as tensor cores do). */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "numoracle/fmt.h"

#define NMO_SIGN 0x8000000000000000ULL
#define NMO_EXPM 0x7ff0000000000000ULL /* exponent field: +inf bits */
#define NMO_FRAC 0x000fffffffffffffULL

enum { NMO_K_IEEE, NMO_K_FN, NMO_K_FNUZ }; /* how a format spends its special patterns */

/* Per-format constants the fast path needs besides the public info. */
typedef struct {
    int kind;
    int sshift;          /* storage shift: tf32 keeps its 19 bits at the top of 32 */
    double inv_min_sub;  /* 1 / min_subnormal (exact power of two) */
    uint64_t nan_bits;   /* canonical NaN pattern (storage layout) */
} nmo_fmt_aux;

static const nmo_fmt_info nmo_fmt_tab[NMO_FMT_COUNT] = {
    [NMO_FP64] = {"fp64", "DOUBLE", 64, 11, 52, 53, 1023, -1022, 1023, 0x1.fffffffffffffp1023,
                  0x1p-1022, 0x1p-1074, 1, 1, NMO_OVF_IEEE},
    [NMO_FP32] = {"fp32", "FLOAT", 32, 8, 23, 24, 127, -126, 127, 0x1.fffffep127, 0x1p-126,
                  0x1p-149, 1, 1, NMO_OVF_IEEE},
    [NMO_TF32] = {"tf32", "", 32, 8, 10, 11, 127, -126, 127, 0x1.ffcp127, 0x1p-126, 0x1p-136, 1,
                  1, NMO_OVF_IEEE},
    [NMO_BF16] = {"bf16", "BFLOAT16", 16, 8, 7, 8, 127, -126, 127, 0x1.fep127, 0x1p-126,
                  0x1p-133, 1, 1, NMO_OVF_IEEE},
    [NMO_FP16] = {"fp16", "HALF", 16, 5, 10, 11, 15, -14, 15, 0x1.ffcp15, 0x1p-14, 0x1p-24, 1, 1,
                  NMO_OVF_IEEE},
    [NMO_FP8_E4M3] = {"fp8_e4m3", "FP8_E4M3", 8, 4, 3, 4, 7, -6, 8, 448.0, 0x1p-6, 0x1p-9, 0, 1,
                      NMO_OVF_NAN},
    [NMO_FP8_E5M2] = {"fp8_e5m2", "FP8_E5M2", 8, 5, 2, 3, 15, -14, 15, 57344.0, 0x1p-14, 0x1p-16,
                      1, 1, NMO_OVF_IEEE},
    [NMO_FP8_E4M3FNUZ] = {"fp8_e4m3fnuz", "FP8_E4M3_FNUZ", 8, 4, 3, 4, 8, -7, 7, 240.0, 0x1p-7,
                          0x1p-10, 0, 0, NMO_OVF_NAN},
    [NMO_FP8_E5M2FNUZ] = {"fp8_e5m2fnuz", "FP8_E5M2_FNUZ", 8, 5, 2, 3, 16, -15, 15, 57344.0,
                          0x1p-15, 0x1p-17, 0, 0, NMO_OVF_NAN},
};

static const nmo_fmt_aux nmo_fmt_aux_tab[NMO_FMT_COUNT] = {
    [NMO_FP64] = {NMO_K_IEEE, 0, 0.0 /* unused: fp64 takes its own path */, 0x7ff8000000000000ULL},
    [NMO_FP32] = {NMO_K_IEEE, 0, 0x1p149, 0x7fc00000},
    [NMO_TF32] = {NMO_K_IEEE, 13, 0x1p136, 0x7fc00000},
    [NMO_BF16] = {NMO_K_IEEE, 0, 0x1p133, 0x7fc0},
    [NMO_FP16] = {NMO_K_IEEE, 0, 0x1p24, 0x7e00},
    [NMO_FP8_E4M3] = {NMO_K_FN, 0, 0x1p9, 0x7f},
    [NMO_FP8_E5M2] = {NMO_K_IEEE, 0, 0x1p16, 0x7e},
    [NMO_FP8_E4M3FNUZ] = {NMO_K_FNUZ, 0, 0x1p10, 0x80},
    [NMO_FP8_E5M2FNUZ] = {NMO_K_FNUZ, 0, 0x1p17, 0x80},
};

static inline uint64_t nmo_dbits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

static inline double nmo_bitsd(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* 2^k for -1074 <= k <= 1023 without libm. */
static inline double nmo_pow2(int k)
{
    if (k >= -1022) return nmo_bitsd((uint64_t)(k + 1023) << 52);
    return nmo_bitsd(1ULL << (k + 1074));
}

static inline int nmo_fmt_ok(nmo_fmt f) { return (unsigned)f < NMO_FMT_COUNT; }

const nmo_fmt_info *nmo_fmt_get(nmo_fmt f) { return nmo_fmt_ok(f) ? &nmo_fmt_tab[f] : NULL; }

const char *nmo_fmt_name(nmo_fmt f) { return nmo_fmt_ok(f) ? nmo_fmt_tab[f].name : "unknown"; }

/* Aliases besides the canonical and hipDNN names (matched case-insensitively). */
static const struct {
    const char *name;
    nmo_fmt f;
} nmo_fmt_alias[] = {
    {"float64", NMO_FP64},       {"double", NMO_FP64},         {"f64", NMO_FP64},
    {"float32", NMO_FP32},       {"float", NMO_FP32},          {"f32", NMO_FP32},
    {"tensorfloat32", NMO_TF32}, {"bfloat16", NMO_BF16},       {"float16", NMO_FP16},
    {"half", NMO_FP16},          {"f16", NMO_FP16},            {"e4m3", NMO_FP8_E4M3},
    {"e4m3fn", NMO_FP8_E4M3},    {"fp8_e4m3fn", NMO_FP8_E4M3}, {"float8_e4m3fn", NMO_FP8_E4M3},
    {"e5m2", NMO_FP8_E5M2},      {"float8_e5m2", NMO_FP8_E5M2},
    {"e4m3fnuz", NMO_FP8_E4M3FNUZ}, {"float8_e4m3fnuz", NMO_FP8_E4M3FNUZ},
    {"e5m2fnuz", NMO_FP8_E5M2FNUZ}, {"float8_e5m2fnuz", NMO_FP8_E5M2FNUZ},
};

nmo_status nmo_fmt_from_name(nmo_fmt *out, const char *name)
{
    if (!name || !*name) return NMO_ERR_UNKNOWN_DTYPE;
    for (int i = 0; i < NMO_FMT_COUNT; i++) {
        const nmo_fmt_info *fi = &nmo_fmt_tab[i];
        if (!strcasecmp(name, fi->name) || (fi->hipdnn[0] && !strcasecmp(name, fi->hipdnn))) {
            if (out) *out = (nmo_fmt)i;
            return NMO_OK;
        }
    }
    for (size_t i = 0; i < sizeof nmo_fmt_alias / sizeof nmo_fmt_alias[0]; i++) {
        if (!strcasecmp(name, nmo_fmt_alias[i].name)) {
            if (out) *out = nmo_fmt_alias[i].f;
            return NMO_OK;
        }
    }
    return NMO_ERR_UNKNOWN_DTYPE;
}

static const char *const nmo_rnd_names[NMO_RND_COUNT] = {"rne", "rz", "rd", "ru"};

const char *nmo_rnd_name(nmo_rnd r)
{
    return (unsigned)r < NMO_RND_COUNT ? nmo_rnd_names[r] : "unknown";
}

nmo_status nmo_rnd_from_name(nmo_rnd *out, const char *name)
{
    if (!name) return NMO_ERR_USAGE;
    for (int i = 0; i < NMO_RND_COUNT; i++) {
        if (!strcasecmp(name, nmo_rnd_names[i])) {
            if (out) *out = (nmo_rnd)i;
            return NMO_OK;
        }
    }
    return NMO_ERR_USAGE;
}

/* ---- rounding --------------------------------------------------------------------- */

/* Round x into f; the result as a double (NaN for NaN, +-inf only where f has inf). */
static inline double nmo_round_val(nmo_fmt f, double x, nmo_rnd rnd, int ftz, nmo_ovf ovf)
{
    const nmo_fmt_info *fi = &nmo_fmt_tab[f];
    uint64_t xb = nmo_dbits(x), sign = xb & NMO_SIGN, ab = xb ^ sign;
    uint64_t maxb = nmo_dbits(fi->max_finite), rb;
    int neg = sign != 0;

    if (ab >= NMO_EXPM) {
        if (ab > NMO_EXPM) return NAN;
        /* +-inf input is exact, not an overflow; only SAT clamps it */
        if (ovf == NMO_OVF_SAT) return neg ? -fi->max_finite : fi->max_finite;
        return fi->has_inf ? x : NAN;
    }
    if (f == NMO_FP64) { /* every double is an fp64 value; only ftz can change it */
        if (ftz && ab < 0x0010000000000000ULL) return neg ? -0.0 : 0.0;
        return x;
    }
    if (ab == 0) {
        rb = 0;
    } else {
        /* Binade exponent of x (double subnormals give -1023: far below every
         * non-fp64 subnormal range). Drop `shift` low bits of the 53-bit significand. */
        int e = (int)(ab >> 52) - 1023;
        int shift = 52 - fi->mbits + (e < fi->emin ? fi->emin - e : 0);
        if (shift > 52) {
            /* |x| < min_sub: the result is 0 or min_sub. shift == 53 means
             * |x| in [min_sub/2, min_sub): above the tie unless exactly min_sub/2. */
            int up;
            switch (rnd) {
            case NMO_RNE: up = shift == 53 && (ab & NMO_FRAC) != 0; break;
            case NMO_RU: up = !neg; break;
            case NMO_RD: up = neg; break;
            default: up = 0; break;
            }
            rb = up ? nmo_dbits(fi->min_subnormal) : 0;
        } else {
            /* Add, then truncate: the carry out of the dropped bits is the rounding
             * increment, and a carry out of the significand bumps the exponent, which
             * is right. RNE adds half - 1 plus the kept LSB (ties go to even); at
             * shift == 52 the kept significand is the hidden bit alone: odd. */
            uint64_t m = (1ULL << shift) - 1, add;
            if (rnd == NMO_RNE)
                add = (m >> 1) + (shift == 52 ? 1 : (ab >> shift) & 1);
            else
                add = ((rnd == NMO_RU && !neg) || (rnd == NMO_RD && neg)) ? m : 0;
            rb = (ab + add) & ~m;
        }
        if (rb > maxb) {
            switch (ovf) {
            case NMO_OVF_SAT: rb = maxb; break;
            case NMO_OVF_IEEE:
                if (rnd == NMO_RZ || (rnd == NMO_RD && !neg) || (rnd == NMO_RU && neg))
                    rb = maxb;
                else if (fi->has_inf)
                    rb = NMO_EXPM;
                else
                    return NAN;
                break;
            default: return NAN;
            }
        }
        if (ftz && rb < nmo_dbits(fi->min_normal)) rb = 0;
    }
    if (rb == 0 && !fi->has_neg_zero) sign = 0;
    return nmo_bitsd(sign | rb);
}

/* Bit pattern of a value of f (NaN -> canonical NaN). */
static inline uint64_t nmo_val_bits(nmo_fmt f, double v)
{
    const nmo_fmt_info *fi = &nmo_fmt_tab[f];
    const nmo_fmt_aux *ax = &nmo_fmt_aux_tab[f];
    uint64_t vb = nmo_dbits(v), s = vb >> 63, ab = vb & ~NMO_SIGN, mag;

    if (ab > NMO_EXPM) return ax->nan_bits;
    if (f == NMO_FP64) return vb;
    if (ab == NMO_EXPM)
        mag = (((1ULL << fi->ebits) - 1) << fi->mbits);
    else if (ab >= nmo_dbits(fi->min_normal))
        mag = ((uint64_t)((int)(ab >> 52) - 1023 + fi->bias) << fi->mbits) |
              ((ab & NMO_FRAC) >> (52 - fi->mbits));
    else
        mag = (uint64_t)(fabs(v) * ax->inv_min_sub); /* exact: a small integer */
    if (mag == 0 && !fi->has_neg_zero) s = 0;
    return ((s << (fi->ebits + fi->mbits)) | mag) << ax->sshift;
}

uint64_t nmo_fmt_encode(nmo_fmt f, double x, nmo_rnd rnd, int ftz, nmo_ovf ovf)
{
    return nmo_val_bits(f, nmo_round_val(f, x, rnd, ftz, ovf));
}

double nmo_fmt_round(nmo_fmt f, double x, nmo_rnd rnd, int ftz)
{
    return nmo_round_val(f, x, rnd, ftz, nmo_fmt_tab[f].ovf_default);
}

double nmo_fmt_decode(nmo_fmt f, uint64_t b)
{
    const nmo_fmt_info *fi = &nmo_fmt_tab[f];
    const nmo_fmt_aux *ax = &nmo_fmt_aux_tab[f];
    if (f == NMO_FP64) return nmo_bitsd(b);
    b &= (fi->bits == 64 ? ~0ULL : (1ULL << fi->bits) - 1);
    b >>= ax->sshift;
    uint64_t emask = (1ULL << fi->ebits) - 1, mmask = (1ULL << fi->mbits) - 1;
    uint64_t s = (b >> (fi->ebits + fi->mbits)) & 1, field = (b >> fi->mbits) & emask,
             mant = b & mmask;
    double v;
    switch (ax->kind) {
    case NMO_K_FNUZ:
        if (s && field == 0 && mant == 0) return NAN;
        break;
    case NMO_K_FN:
        if (field == emask && mant == mmask) return NAN;
        break;
    default:
        if (field == emask) {
            if (mant) return NAN;
            return s ? -INFINITY : INFINITY;
        }
        break;
    }
    if (field == 0)
        v = (double)mant * fi->min_subnormal;
    else
        v = nmo_bitsd(((uint64_t)((int)field - fi->bias + 1023) << 52) | (mant << (52 - fi->mbits)));
    return s ? -v : v;
}

/* ---- neighbours, ulp, ordinals ---------------------------------------------------- */

double nmo_fmt_ulp(nmo_fmt f, double x)
{
    const nmo_fmt_info *fi = &nmo_fmt_tab[f];
    uint64_t ab = nmo_dbits(x) & ~NMO_SIGN;
    if (ab > NMO_EXPM) return NAN;
    if (ab == NMO_EXPM) return INFINITY;
    int e = (int)(ab >> 52) - 1023; /* zero and double subnormals: -1023 < every emin */
    if (e < fi->emin) e = fi->emin;
    return nmo_pow2(e - fi->mbits);
}

double nmo_fmt_next_up(nmo_fmt f, double x)
{
    const nmo_fmt_info *fi = &nmo_fmt_tab[f];
    if (x != x) return NAN;
    if (x >= fi->max_finite) return INFINITY; /* no value above: marker */
    if (x < -fi->max_finite) return -fi->max_finite;
    if (x == 0) return fi->min_subnormal;
    double r = nmo_round_val(f, x, NMO_RU, 0, NMO_OVF_SAT);
    if (r != x) return r; /* x not representable: its RU is the answer */
    if (x > 0) return x + nmo_fmt_ulp(f, x); /* exact: both on the lattice */
    /* x < 0: step |x| down by the spacing just below |x| */
    double a = -x, u = nmo_fmt_ulp(f, a);
    uint64_t ab = nmo_dbits(a);
    if ((ab & NMO_FRAC) == 0 && (int)(ab >> 52) - 1023 > fi->emin) u *= 0.5;
    double y = -(a - u);
    return (y == 0 && !fi->has_neg_zero) ? 0.0 : y;
}

double nmo_fmt_next_down(nmo_fmt f, double x)
{
    double y = -nmo_fmt_next_up(f, -x);
    return (y == 0 && !nmo_fmt_tab[f].has_neg_zero) ? 0.0 : y;
}

/* Non-representable x get the ordinal of x rounded toward zero (so ord(-x) = -ord(x));
 * beyond max (and +-inf) give +-(ord(max) + 1); NaN gives INT64_MIN. */
int64_t nmo_fmt_ordinal(nmo_fmt f, double x)
{
    const nmo_fmt_info *fi = &nmo_fmt_tab[f];
    uint64_t xb = nmo_dbits(x), ab = xb & ~NMO_SIGN, maxb = nmo_dbits(fi->max_finite);
    int64_t n;
    if (ab > NMO_EXPM) return INT64_MIN;
    if (ab > maxb) ab = maxb, n = 1;
    else n = 0;
    if (f == NMO_FP64)
        n += (int64_t)ab; /* binary64 magnitudes are their own ordinals */
    else if (ab < nmo_dbits(fi->min_normal))
        n += (int64_t)(nmo_bitsd(ab) * nmo_fmt_aux_tab[f].inv_min_sub);
    else
        n += ((int64_t)((int)(ab >> 52) - 1023 - fi->emin + 1) << fi->mbits) +
             (int64_t)((ab & NMO_FRAC) >> (52 - fi->mbits));
    return (xb >> 63) ? -n : n;
}

/* -0 counts as representable in fnuz: its value (zero) is. */
int nmo_fmt_is_repr(nmo_fmt f, double x)
{
    if (x != x) return 1;
    if (isinf(x)) return nmo_fmt_tab[f].has_inf;
    return nmo_round_val(f, x, NMO_RZ, 0, NMO_OVF_SAT) == x;
}
