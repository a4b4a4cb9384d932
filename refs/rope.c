/* rope (forward): y = x*cos + rotate(x)*sin over the head dim, NeoX (rotate_half) or
 * GPT-J (interleaved) pairs. Rounding points, layouts and the rotary cache: see
 * refs/rope_common.h. */
#include "refs/rope_common.h"

void NMO_REF(nmo_ref_rope_eval)(E_CTX *ctx, const nmo_case *c, int64_t u, nmo_fenc **out)
{
    pw_rope_eval(ctx, c, u, out, 0);
}

#ifdef NMO_ENGINE_FAST
void NMO_REF_CERT(nmo_ref_rope_eval)(nmo_cctx *ctx, const nmo_case *c, int64_t u, nmo_fenc **out);

const nmo_op nmo_op_rope = {
    .name = "rope",
    .summary = "rotary position embedding, y = x*cos + rotate(x)*sin (NeoX or GPT-J pairs)",
    .shape_doc = "BxHxSxD: x and y [B,H,S,D], cos and sin [S,D]; D even",
    .rounding_doc = "y=x*cos+-x_p*sin: both products rounded or either fused (FMA); "
                    "inter!=compute: products rounded to inter",
    .n_in = 3,
    .in = {{"x", NMO_ROLE_DATA, "input [B,H,S,D]"},
           {"cos", NMO_ROLE_DERIVED, "cos(s*theta_i) [S,D], rounded to the input dtype"},
           {"sin", NMO_ROLE_DERIVED, "sin(s*theta_i) [S,D], rounded to the input dtype"}},
    .n_out = 1,
    .out = {{"y", NMO_ROLE_DATA, "output [B,H,S,D]"}},
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
    .eval_fast = NMO_REF_FAST(nmo_ref_rope_eval),
    .eval_cert = NMO_REF_CERT(nmo_ref_rope_eval),
};
#endif
