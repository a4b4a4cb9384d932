/* rope_bwd: dx = dy*cos - rotate(dy*sin), the transpose of rope, NeoX (rotate_half) or
 * GPT-J (interleaved) pairs. Rounding points, layouts and the rotary cache: see
 * refs/rope_common.h. */
#include "refs/rope_common.h"

void NMO_REF(nmo_ref_rope_bwd_eval)(E_CTX *ctx, const nmo_case *c, int64_t u, nmo_fenc **out)
{
    pw_rope_eval(ctx, c, u, out, 1);
}

#ifdef NMO_ENGINE_FAST
void NMO_REF_CERT(nmo_ref_rope_bwd_eval)(nmo_cctx *ctx, const nmo_case *c, int64_t u, nmo_fenc **out);

const nmo_op nmo_op_rope_bwd = {
    .name = "rope_bwd",
    .summary = "rotary embedding backward, dx = dy*cos - rotate(dy*sin) (the transpose rotation)",
    .shape_doc = "BxHxSxD: dy and dx [B,H,S,D], cos and sin [S,D]; D even",
    .rounding_doc = "dx=dy*cos-+dy_p*sin_p: both products rounded or either fused (FMA); "
                    "inter!=compute: products rounded to inter",
    .n_in = 3,
    .in = {{"dy", NMO_ROLE_DATA, "upstream gradient [B,H,S,D]"},
           {"cos", NMO_ROLE_DERIVED, "cos(s*theta_i) [S,D], rounded to the input dtype"},
           {"sin", NMO_ROLE_DERIVED, "sin(s*theta_i) [S,D], rounded to the input dtype"}},
    .n_out = 1,
    .out = {{"dx", NMO_ROLE_DATA, "gradient of x [B,H,S,D]"}},
    .n_param = 2,
    .param = {{"layout", 0, "0: NeoX rotate_half pairs (j, j+D/2); 1: GPT-J pairs (2i, 2i+1)"},
              {"base", 10000, "rotary base: theta_i = base^(-2i/D)", NMO_PDOM_POS}},
    .dtypes = "fp32 bf16 fp16",
    .test_shapes = "1x3x5x34;1x2x4x64",
    .test_shapes_large = "2x8x64x130;1x4x256x128",
    /* no reduction; cos/sin are inputs */
    .plan_fields = NMO_PF_COMPUTE | NMO_PF_INTER,
    .plan_vacuous = NMO_PF_ACC | NMO_PF_FN,
    .setup = pw_rope_setup,
    .row_len = nmo_ref_row_len_last,
    .units = pw_units_elems,
    .unit_span = pw_span_elem,
    .derive = pw_rope_derive,
    .eval_fast = NMO_REF_FAST(nmo_ref_rope_bwd_eval),
    .eval_cert = NMO_REF_CERT(nmo_ref_rope_bwd_eval),
};
#endif
