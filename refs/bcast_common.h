/* Per-column operators: x[..., N] of the problem shape, every further input a column
 * vector [N] (a weight, a bias, a broadcast operand), every output of the problem shape,
 * one output element per unit. pw_cols_setup/pw_bcast_units/pw_bcast_span serve any such
 * operator (refs/add.c, refs/mul.c, refs/dyt.c); pw_bcast_eval is the broadcasting
 * binary one of add and mul:
 *   y[..., j] = a[..., j] op b[j]     a of the problem shape, b of its last dim [N]
 *
 * Rounding points: one correctly rounded op in compute, then the store into `out`
 * (checker: plan round). Nothing else varies: with compute = fp32, a product of two
 * 16-bit inputs is exact and a sum is either exact or rounds to the larger operand, so
 * a kernel using native 16-bit arithmetic (one rounding straight into the storage
 * dtype) stores the same value as one computing in fp32 and rounding on store.
 * Not covered: compute formats narrower than the operands. */
#ifndef NMO_REFS_BCAST_COMMON_H
#define NMO_REFS_BCAST_COMMON_H

#include "engine/ref.h"

/* One output element per unit: u is the logical index into a / y. */
static inline void pw_bcast_eval(E_CTX *ctx, const nmo_case *c, int64_t u, nmo_fenc **out,
                                 int mul)
{
    int64_t n = c->shape[c->nshape - 1];
    double *d = enc_dvec(ctx, 0, 2);
    nmo_tensor_load_f64(&d[0], &c->in[0], u, 1, 1);
    nmo_tensor_load_f64(&d[1], &c->in[1], u % n, 1, 1);
    E *v = enc_evec(ctx, 0, 3);
    enc_set_d(ctx, &v[0], d[0]);
    enc_set_d(ctx, &v[1], d[1]);
    if (mul) enc_mul(ctx, &v[2], &v[0], &v[1]);
    else enc_add(ctx, &v[2], &v[0], &v[1]);
    enc_export(ctx, &out[0][0], &v[2]);
}

#ifdef NMO_ENGINE_FAST
#include "refs/ref_common.h"

static inline int64_t pw_bcast_units(const nmo_case *c)
{
    int64_t n = 1;
    for (int i = 0; i < c->nshape; i++) n *= c->shape[i];
    return n;
}

static inline void pw_bcast_span(const nmo_case *c, int64_t u, int k, int64_t *begin,
                                 int64_t *count, int64_t *stride)
{
    (void)c, (void)k;
    *begin = u;
    *count = 1;
    *stride = 1;
}

/* in[0] and every output of the problem shape, in[1..n_in) [N] (the last dim). */
static inline nmo_status pw_cols_setup(nmo_case *c, nmo_err *err)
{
    int64_t rows, n;
    NMO_RETURN_IF_ERR(nmo_ref_rows_shape(c, &rows, &n, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[0], c->plan.in, c->nshape, c->shape, err));
    for (int k = 1; k < c->n_in; k++) NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[k], c->plan.in, 1, &n, err));
    for (int k = 0; k < c->n_out; k++)
        NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->out[k], c->plan.out, c->nshape, c->shape, err));
    return NMO_OK;
}
#endif

#endif
