/* numoracle: rounding into number formats over MPFR (DESIGN §3).
 *
 * Deliberately independent of fmt.c: the format parameters are derived here from the
 * field layout alone (bits, exponent bits, mantissa bits, bias, special-pattern style),
 * and rounding is MPFR's own (mpfr_check_range + mpfr_subnormalize in the format's
 * exponent range). tests/test_fmt.c checks the two against each other exhaustively for
 * every format of 16 bits or fewer. Overflow, ftz and NaN rules are those documented at
 * the top of fmt.c. */
#include <math.h>
#include <limits.h>
#include <stdint.h>

#include "engine/fmt_mpfr.h"

_Static_assert(ULONG_MAX >= (1ULL << 53), "mpfr_set_ui_2exp must hold a 53-bit significand");

enum { NMO_MK_IEEE, NMO_MK_FN, NMO_MK_FNUZ };

static const struct {
    int bits, ebits, mbits, bias, kind, sshift;
} nmo_mfmt[NMO_FMT_COUNT] = {
    [NMO_FP64] = {64, 11, 52, 1023, NMO_MK_IEEE, 0},
    [NMO_FP32] = {32, 8, 23, 127, NMO_MK_IEEE, 0},
    [NMO_TF32] = {32, 8, 10, 127, NMO_MK_IEEE, 13},
    [NMO_BF16] = {16, 8, 7, 127, NMO_MK_IEEE, 0},
    [NMO_FP16] = {16, 5, 10, 15, NMO_MK_IEEE, 0},
    [NMO_FP8_E4M3] = {8, 4, 3, 7, NMO_MK_FN, 0},
    [NMO_FP8_E5M2] = {8, 5, 2, 15, NMO_MK_IEEE, 0},
    [NMO_FP8_E4M3FNUZ] = {8, 4, 3, 8, NMO_MK_FNUZ, 0},
    [NMO_FP8_E5M2FNUZ] = {8, 5, 2, 16, NMO_MK_FNUZ, 0},
};

static mpfr_rnd_t nmo_mrnd(nmo_rnd r)
{
    switch (r) {
    case NMO_RZ: return MPFR_RNDZ;
    case NMO_RD: return MPFR_RNDD;
    case NMO_RU: return MPFR_RNDU;
    default: return MPFR_RNDN;
    }
}

/* Largest binade exponent: IEEE reserves the all-ones exponent field; FN/FNUZ use it. */
static int nmo_memax(nmo_fmt f)
{
    int top = (1 << nmo_mfmt[f].ebits) - 1;
    return (nmo_mfmt[f].kind == NMO_MK_IEEE ? top - 1 : top) - nmo_mfmt[f].bias;
}

/* max finite = largest usable significand * 2^(emax - mbits); FN loses S.1111.111 to NaN */
static double nmo_mmax(nmo_fmt f)
{
    int m = nmo_mfmt[f].mbits;
    double sig = (double)((2ULL << m) - 1 - (nmo_mfmt[f].kind == NMO_MK_FN));
    return ldexp(sig, nmo_memax(f) - m);
}

double nmo_fmt_round_mpfr_ovf(nmo_fmt f, mpfr_srcptr x, nmo_rnd rnd, int ftz, nmo_ovf ovf)
{
    int mbits = nmo_mfmt[f].mbits, kind = nmo_mfmt[f].kind;
    int emin = 1 - nmo_mfmt[f].bias, emax = nmo_memax(f);
    int has_inf = kind == NMO_MK_IEEE, has_neg0 = kind != NMO_MK_FNUZ;
    double maxf = nmo_mmax(f);
    int neg = mpfr_signbit(x) != 0;
    mpfr_rnd_t mr = nmo_mrnd(rnd);

    if (mpfr_nan_p(x)) return NAN;
    if (mpfr_inf_p(x)) {
        if (ovf == NMO_OVF_SAT) return neg ? -maxf : maxf;
        return has_inf ? (neg ? -INFINITY : INFINITY) : NAN;
    }

    mpfr_exp_t old_emin = mpfr_get_emin(), old_emax = mpfr_get_emax();
    mpfr_t r;
    mpfr_init2(r, mbits + 1);
    /* Round to the precision in the widest range, then narrow: check_range and
     * subnormalize use the ternary value, so there is no double rounding. */
    mpfr_set_emin(mpfr_get_emin_min());
    mpfr_set_emax(mpfr_get_emax_max());
    int t = mpfr_set(r, x, mr);
    /* MPFR exponents put values in [2^(E-1), 2^E): the smallest subnormal 2^(emin-mbits)
     * has E = emin-mbits+1. emax+2 leaves room for the lattice point above max_finite,
     * so overflow is judged after rounding with the exponent unbounded above. */
    mpfr_set_emin(emin - mbits + 1);
    mpfr_set_emax(emax + 2);
    t = mpfr_check_range(r, t, mr);
    mpfr_subnormalize(r, t, mr);
    mpfr_set_emin(old_emin);
    mpfr_set_emax(old_emax);

    double v = mpfr_get_d(r, MPFR_RNDN); /* exact, or inf when beyond binary64 */
    mpfr_clear(r);
    if (fabs(v) > maxf) {
        int to_max = rnd == NMO_RZ || (rnd == NMO_RD && !neg) || (rnd == NMO_RU && neg);
        if (ovf == NMO_OVF_SAT || (ovf == NMO_OVF_IEEE && to_max)) v = maxf;
        else if (ovf == NMO_OVF_IEEE && has_inf) v = INFINITY;
        else return NAN;
        v = neg ? -v : v;
    }
    if (ftz && fabs(v) < ldexp(1.0, emin)) v = 0.0;
    if (v == 0) v = (neg && has_neg0) ? -0.0 : 0.0;
    return v;
}

double nmo_fmt_round_mpfr(nmo_fmt f, mpfr_srcptr x, nmo_rnd rnd, int ftz)
{
    nmo_ovf ovf = nmo_mfmt[f].kind == NMO_MK_IEEE ? NMO_OVF_IEEE : NMO_OVF_NAN;
    return nmo_fmt_round_mpfr_ovf(f, x, rnd, ftz, ovf);
}

double nmo_fmt_decode_mpfr(nmo_fmt f, uint64_t bits)
{
    int nb = nmo_mfmt[f].bits, eb = nmo_mfmt[f].ebits, mb = nmo_mfmt[f].mbits;
    int kind = nmo_mfmt[f].kind;
    if (nb < 64) bits &= (1ULL << nb) - 1;
    bits >>= nmo_mfmt[f].sshift;
    uint64_t s = bits >> (eb + mb);
    uint64_t field = (bits >> mb) & ((1ULL << eb) - 1);
    uint64_t mant = bits & ((1ULL << mb) - 1);
    uint64_t top = (1ULL << eb) - 1, mtop = (1ULL << mb) - 1;

    if (kind == NMO_MK_FNUZ && s && field == 0 && mant == 0) return NAN;
    if (kind == NMO_MK_FN && field == top && mant == mtop) return NAN;
    if (kind == NMO_MK_IEEE && field == top)
        return mant ? NAN : (s ? -INFINITY : INFINITY);

    /* normal: (2^mb + mant) * 2^(field - bias - mb); subnormal: mant * 2^(1 - bias - mb) */
    uint64_t sig = field ? (1ULL << mb) | mant : mant;
    long e = (field ? (long)field : 1L) - nmo_mfmt[f].bias - mb;
    mpfr_t v;
    mpfr_init2(v, 64);
    mpfr_set_ui_2exp(v, (unsigned long)sig, e, MPFR_RNDN); /* exact: sig < 2^53 */
    if (s) mpfr_neg(v, v, MPFR_RNDN);
    double d = mpfr_get_d(v, MPFR_RNDN);
    mpfr_clear(v);
    return d;
}
