/* numoracle: number formats (DESIGN §3).
 *
 * Every format of at most 32 bits (and fp64) is a set of values that binary64 holds
 * exactly, so the fast path represents format values as doubles ("lattice values") and
 * rounds doubles into formats by bit manipulation. An independent MPFR-based rounding
 * (nmo_fmt_round_mpfr, private: oracle/engine/fmt_mpfr.h) serves the certified
 * engine; the two are checked against each
 * other exhaustively for every format of 16 bits or fewer (tests/test_fmt.c). */
#ifndef NUMORACLE_FMT_H
#define NUMORACLE_FMT_H

#include <stdint.h>
#include "numoracle/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    NMO_FP64 = 0,
    NMO_FP32,
    NMO_TF32,          /* 1-8-10 stored in 32 bits (low 13 mantissa bits zero) */
    NMO_BF16,
    NMO_FP16,
    NMO_FP8_E4M3,      /* OCP E4M3FN: no inf, NaN = S.1111.111, max 448 */
    NMO_FP8_E5M2,      /* OCP E5M2: IEEE-like, inf and NaNs, max 57344 */
    NMO_FP8_E4M3FNUZ,  /* no inf, no -0, NaN = 0x80, bias 8, max 240 */
    NMO_FP8_E5M2FNUZ,  /* no inf, no -0, NaN = 0x80, bias 16, max 57344 */
    NMO_FMT_COUNT
} nmo_fmt;

/* Rounding directions (MPFR argument order: rounding travels as an argument). */
typedef enum {
    NMO_RNE = 0,  /* to nearest, ties to even */
    NMO_RZ,       /* toward zero */
    NMO_RD,       /* toward -inf */
    NMO_RU,       /* toward +inf */
    NMO_RND_COUNT
} nmo_rnd;

/* What happens to a finite value beyond the largest finite one. */
typedef enum {
    NMO_OVF_IEEE = 0, /* IEEE: RNE/away -> inf, toward-zero directions -> max finite */
    NMO_OVF_SAT,      /* saturate to +-max finite in every rounding */
    NMO_OVF_NAN       /* becomes NaN (formats without inf, non-saturating convert) */
} nmo_ovf;

typedef struct {
    const char *name;     /* "bf16" */
    const char *hipdnn;   /* hipDNN data type name: "BFLOAT16" ("" when none) */
    int bits;             /* storage bits */
    int ebits, mbits;     /* exponent and stored mantissa bits */
    int prec;             /* precision p = mbits + 1 */
    int bias;
    int emin;             /* exponent of the smallest normal: 2^emin */
    int emax;             /* exponent of the largest binade */
    double max_finite;
    double min_normal;
    double min_subnormal;
    int has_inf;
    int has_neg_zero;
    nmo_ovf ovf_default;  /* the format's own conversion behaviour */
} nmo_fmt_info;

const nmo_fmt_info *nmo_fmt_get(nmo_fmt f);
/* Accepts our names (fp32, bf16, fp8_e4m3, ...), common aliases (float32, float,
 * bfloat16, half, e4m3, ...) and hipDNN names (FLOAT, BFLOAT16, ...). */
nmo_status nmo_fmt_from_name(nmo_fmt *out, const char *name);
const char *nmo_fmt_name(nmo_fmt f);
const char *nmo_rnd_name(nmo_rnd r);
/* "rne", "rz", "rd", "ru" (case-insensitive); anything else is NMO_ERR_USAGE. Names
 * that are not found leave *out untouched (nmo_fmt_from_name too). */
nmo_status nmo_rnd_from_name(nmo_rnd *out, const char *name);

/* Decode a bit pattern (low `bits` bits of b) to its exact value; NaN patterns give NaN,
 * -0 gives -0.0. fp64 reinterprets. */
double nmo_fmt_decode(nmo_fmt f, uint64_t b);

/* Round x (any double, +-inf, NaN) into f. Returns the bit pattern. ftz != 0: x is
 * rounded into f (subnormals included) and a result whose magnitude is below min_normal
 * becomes zero (signed where the format has -0). ovf selects the overflow behaviour;
 * overflow = the result rounded with an unbounded exponent exceeds max_finite (rules at
 * the top of fmt.c). NaN gives the format's canonical NaN; -0 into fnuz gives +0. */
uint64_t nmo_fmt_encode(nmo_fmt f, double x, nmo_rnd rnd, int ftz, nmo_ovf ovf);

/* Round x into f and return the value as a double (the lattice value): the same as
 * nmo_fmt_decode(f, nmo_fmt_encode(f, x, rnd, ftz, f's default overflow)). */
double nmo_fmt_round(nmo_fmt f, double x, nmo_rnd rnd, int ftz);

/* Next representable value above / below x in f (x need not be representable: returns
 * the smallest value > x / largest < x). Saturates at +-inf (or +-max for formats
 * without inf: then next_up(max) = +inf is returned as a marker of "no value"). */
double nmo_fmt_next_up(nmo_fmt f, double x);
double nmo_fmt_next_down(nmo_fmt f, double x);

/* ulp of x in f: spacing of f in the binade of |x| (the spacing above |x|); for |x| below
 * min_normal the subnormal spacing. ulp(+-inf) = inf, ulp(NaN) = NaN. */
double nmo_fmt_ulp(nmo_fmt f, double x);

/* Monotone ordinal of a representable finite value x: ord(next_up(x)) = ord(x)+1,
 * ord(+0) = ord(-0) = 0. Distances in ulps are differences of ordinals. A value not in f
 * gets the ordinal of x rounded toward zero; |x| > max (and inf) gives +-(ord(max) + 1);
 * NaN gives INT64_MIN. */
int64_t nmo_fmt_ordinal(nmo_fmt f, double x);

/* Is x exactly representable in f (finite values; NaN/inf by the format's rules)?
 * Compares values: -0 counts as representable in fnuz formats (zero is). */
int nmo_fmt_is_repr(nmo_fmt f, double x);

#ifdef __cplusplus
}
#endif
#endif
