/* numoracle: CPU candidates for rope — emulations of rotary-embedding forward kernels.
 *
 *   in  x[B,H,S,D], cos[S,D], sin[S,D]   dtype plan->in;   out [B,H,S,D]   dtype plan->out
 *
 * Rounding points (fp32): the two products u*cos and (+-x_p)*sin (one of them fused into
 * an fmaf, or both rounded), their sum; the store into plan->out. The kernels are in
 * pw_cand_util.h (pw_rope_run); param layout selects NeoX or GPT-J pairs.
 *   liger: products rounded, then x1*cos - x2*sin; cos/sin of the first element of the
 *          pair (Liger loads the first half of the cache row)
 *   fma_a: fmaf(x, cos, x_p*sin);  fma_b: fmaf(x_p, sin, x*cos)
 *   mut_eager: HF eager `q*cos + rotate_half(q)*sin` in the storage dtype (each product
 *          rounded to it). Correct ONLY under an unfused plan (--plan inter=DT): a
 *          negative control of the fused plan. */
#include "pw_cand_util.h"

PW_ROPE_CAND(rope_liger, "rope", 0, PW_ROPE_LIGER, 0)
PW_ROPE_CAND(rope_fma_a, "rope", 0, PW_ROPE_FMA_A, 0)
PW_ROPE_CAND(rope_fma_b, "rope", 0, PW_ROPE_FMA_B, 0)
PW_ROPE_CAND(rope_eager, "rope", 0, PW_ROPE_EAGER, 0)
PW_ROPE_CAND(rope_mut_layout, "rope", 0, PW_ROPE_M_LAYOUT, 0)
PW_ROPE_CAND(rope_mut_sign, "rope", 0, PW_ROPE_M_SIGN, 0)
PW_ROPE_CAND(rope_mut_cos_head, "rope", 0, PW_ROPE_M_COS_HEAD, 0)
PW_ROPE_CAND(rope_mut_off1, "rope", 0, PW_ROPE_M_OFF1, 0)
PW_ROPE_CAND(rope_mut_store_rz, "rope", 0, PW_ROPE_LIGER, 1)

const nmo_cand nmo_cand_rope[] = {
    {"rope", "liger", 1, "Liger: products rounded, x1*cos - x2*sin, cos/sin of the pair's first element",
     rope_liger, NULL},
    {"rope", "fma_a", 1, "fmaf(x, cos, x_p*sin) (nvcc contraction of the first product)", rope_fma_a, NULL},
    {"rope", "fma_b", 1, "fmaf(x_p, sin, x*cos) (the second product contracted)", rope_fma_b, NULL},
    {"rope", "mut_eager", 0,
     "NEGATIVE CONTROL of the fused plan: HF eager, each product rounded to the input dtype; "
     "correct under --plan inter=<dtype>",
     rope_eager, "inter={dtype}"},
    {"rope", "mut_layout", 0, "MUTANT: the other pairing (GPT-J pairs for NeoX and vice versa)",
     rope_mut_layout, NULL},
    {"rope", "mut_sign", 0, "MUTANT: rotation by -theta (sign of the rotate term flipped)", rope_mut_sign, NULL},
    {"rope", "mut_cos_head", 0, "MUTANT: wrong broadcast stride: cos/sin row indexed by head, not position",
     rope_mut_cos_head, NULL},
    {"rope", "mut_off1", 0, "MUTANT: partner index off by one", rope_mut_off1, NULL},
    {"rope", "mut_store_rz", 0, "MUTANT: final store truncates (RZ) instead of RNE", rope_mut_store_rz, NULL},
};
const int nmo_cand_rope_n = (int)(sizeof nmo_cand_rope / sizeof nmo_cand_rope[0]);
