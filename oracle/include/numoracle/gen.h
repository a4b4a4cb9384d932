/* numoracle: input families from a counter-based generator (DESIGN §10).
 * Element i of a tensor depends only on (seed, stream, i) and, for per-row families,
 * the row length: never on threads or on the order of generation. */
#ifndef NUMORACLE_GEN_H
#define NUMORACLE_GEN_H

#include <stdint.h>
#include "numoracle/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    NMO_FAM_GAUSSIAN = 0,  /* randn */
    NMO_FAM_UNIFORM,       /* U(-1, 1) */
    NMO_FAM_SMALL,         /* randn / (2H), H = row length */
    NMO_FAM_LARGE,         /* randn * 300 */
    NMO_FAM_SHIFTED,       /* 2 randn - 1.25 */
    NMO_FAM_NEAR_DEGENERATE, /* c_row + 1e-3 randn, c_row = randn per row */
    NMO_FAM_OUTLIER,       /* randn, one element per row replaced by +-1000 */
    NMO_FAM_COUNT
} nmo_family;

const char *nmo_family_name(nmo_family f);
nmo_status nmo_family_from_name(nmo_family *out, const char *name);

/* Counter-based streams: 64-bit mixing of (seed, stream, i). */
uint64_t nmo_gen_u64(uint64_t seed, uint64_t stream, uint64_t i);
double nmo_gen_uniform01(uint64_t seed, uint64_t stream, uint64_t i); /* in (0,1) */
double nmo_gen_normal(uint64_t seed, uint64_t stream, uint64_t i);    /* N(0,1) */

/* Fill every element of t (logical row-major order) with the family's value for
 * (seed, stream), quantized RNE into t->dtype. row_len is the length of the innermost
 * reduction row (the last dim for most operators). */
void nmo_gen_fill(nmo_tensor *t, nmo_family fam, uint64_t seed, uint64_t stream,
                  int64_t row_len);

#ifdef __cplusplus
}
#endif
#endif
