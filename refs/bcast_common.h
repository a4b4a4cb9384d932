/* Broadcasting pointwise binary operators, shared by refs/add.c and refs/mul.c:
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

#include "numoracle/ref.h"

static inline void pw_bcast_eval(E_CTX *ctx, const nmo_case *c, int64_t u, nmo_fenc **out,
                                 int mul)
{
    int64_t n = c->shape[c->nshape - 1];
    double *a = enc_dvec(ctx, 0, n);
    double *b = enc_dvec(ctx, 1, n);
    nmo_tensor_load_f64(a, &c->in[0], u * n, n, 1);
    nmo_tensor_load_f64(b, &c->in[1], 0, n, 1);
    E *v = enc_evec(ctx, 0, 3);
    for (int64_t j = 0; j < n; j++) {
        enc_set_d(ctx, &v[0], a[j]);
        enc_set_d(ctx, &v[1], b[j]);
        if (mul) enc_mul(ctx, &v[2], &v[0], &v[1]);
        else enc_add(ctx, &v[2], &v[0], &v[1]);
        enc_export(ctx, &out[0][j], &v[2]);
    }
}

#ifdef NMO_ENGINE_FAST
#include "refs/ref_common.h"

/* a and y of the problem shape, b [N] (the last dim). */
static inline nmo_status pw_bcast_setup(nmo_case *c, nmo_err *err)
{
    int64_t rows, n;
    NMO_RETURN_IF_ERR(nmo_ref_rows_shape(c, &rows, &n, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[0], c->plan.in, c->nshape, c->shape, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[1], c->plan.in, 1, &n, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->out[0], c->plan.out, c->nshape, c->shape, err));
    return NMO_OK;
}
#endif

#endif
