/* numoracle (private): format rounding over MPFR, the certified engine's independent
 * implementation of nmo_fmt_round (numoracle/fmt.h). Not installed: no MPFR type in a
 * public header. Checked against nmo_fmt_round exhaustively for every format of 16 bits
 * or fewer (tests/test_fmt.c). */
#ifndef NMO_ENGINE_FMT_MPFR_H
#define NMO_ENGINE_FMT_MPFR_H

#include <mpfr.h>
#include "numoracle/fmt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Independent implementation over MPFR: round x into f, return the lattice value as a
 * double. Uses mpfr_set_emin/emax + mpfr_subnormalize and restores the exponent range. */
double nmo_fmt_round_mpfr(nmo_fmt f, mpfr_srcptr x, nmo_rnd rnd, int ftz);

/* nmo_fmt_round_mpfr with an explicit overflow behaviour (nmo_fmt_round_mpfr uses the
 * format's default, as nmo_fmt_round does). */
double nmo_fmt_round_mpfr_ovf(nmo_fmt f, mpfr_srcptr x, nmo_rnd rnd, int ftz, nmo_ovf ovf);

/* independent MPFR decoding for tests: the value of bit pattern `bits`, built from its
 * sign/exponent/mantissa fields with mpfr_set_ui_2exp (NaN/inf as nmo_fmt_decode). */
double nmo_fmt_decode_mpfr(nmo_fmt f, uint64_t bits);

#ifdef __cplusplus
}
#endif
#endif
