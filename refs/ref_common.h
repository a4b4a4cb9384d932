/* numoracle: helpers shared by reference kernels (defined in refs/registry.c). */
#ifndef NMO_REF_COMMON_H
#define NMO_REF_COMMON_H

#include "numoracle/op.h"

/* Shape MxN or d0x...xN: rows = product of all but the last dim, n = the last. */
nmo_status nmo_ref_rows_shape(const nmo_case *c, int64_t *rows, int64_t *n, nmo_err *err);
/* Describe a packed tensor. */
nmo_status nmo_ref_tensor(nmo_tensor *t, nmo_fmt dtype, int ndims, const int64_t *dims,
                          nmo_err *err);
int64_t nmo_ref_row_len_last(const nmo_case *c);
int64_t nmo_ref_units_rows(const nmo_case *c);
/* Unit u = row u of every output (outputs shaped like the rows). */
void nmo_ref_unit_span_rows(const nmo_case *c, int64_t u, int k, int64_t *begin, int64_t *count,
                            int64_t *stride);

#endif
