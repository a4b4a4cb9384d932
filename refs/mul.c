/* mul (broadcasting): y[..., j] = a[..., j] * b[j], b broadcast along the leading dims.
 * Rounding points: one correctly rounded product in compute, then the store (see
 * refs/bcast_common.h). */
#include "refs/bcast_common.h"

void NMO_REF(nmo_ref_mul_eval)(E_CTX *ctx, const nmo_case *c, int64_t u, nmo_fenc **out)
{
    pw_bcast_eval(ctx, c, u, out, 1);
}

#ifdef NMO_ENGINE_FAST
void NMO_REF_CERT(nmo_ref_mul_eval)(nmo_cctx *ctx, const nmo_case *c, int64_t u, nmo_fenc **out);

const nmo_op nmo_op_mul = {
    .name = "mul",
    .summary = "broadcasting product y = a * b, b [N] broadcast along the leading dims",
    .shape_doc = "MxN (or ...xN): a and y of that shape, b [N]",
    .rounding_doc = "y=a*b (one rounding in compute)",
    .n_in = 2,
    .in = {{"a", NMO_ROLE_DATA, "input [..., N]"}, {"b", NMO_ROLE_DATA, "broadcast operand [N]"}},
    .n_out = 1,
    .out = {{"y", NMO_ROLE_DATA, "output [..., N]"}},
    .n_param = 0,
    .dtypes = "fp32 bf16 fp16",
    .test_shapes = "2x97;4x32", /* small: the engine-equality test certifies every element */
    .test_shapes_large = "3x4097;8x64",
    /* one rounding: no reduction, function or intermediate */
    .plan_fields = NMO_PF_COMPUTE,
    .plan_vacuous = NMO_PF_ACC | NMO_PF_FN | NMO_PF_INTER,
    .setup = pw_cols_setup,
    .row_len = nmo_ref_row_len_last,
    .units = pw_bcast_units,
    .unit_span = pw_bcast_span,
    .eval_fast = NMO_REF_FAST(nmo_ref_mul_eval),
    .eval_cert = NMO_REF_CERT(nmo_ref_mul_eval),
};
#endif
