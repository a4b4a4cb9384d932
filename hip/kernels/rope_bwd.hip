/* numoracle HIP kernels: rope_bwd, the transposed rotation.
 * Kernel templates shared with its sibling operator, and the plan notes: rope_common.h. */
#include "rope_common.h"

namespace {

/* rope_bwd: the same kernels, transposed rotation */
RO_K(rb_vec16, 1, RO_FMA_A, 0u, 1)
RO_K(rb_pairs, 0, 0u, 0u, 1)
RO_K(rb_pairs_fmab, 0, RO_FMA_B, 0u, 1)
RO_K(rb_mut_sign, 1, RO_FMA_A, ROM_SIGN, 1)
RO_K(rb_mut_layout, 1, RO_FMA_A, ROM_LAYOUT, 1)
RO_K(rb_mut_pos_off1, 1, RO_FMA_A, ROM_POS_OFF1, 1)
RO_K(rb_mut_store_rz, 1, RO_FMA_A, ROM_STORE_RZ, 1)
RO_K(rb_mut_swap_cs, 1, RO_FMA_A, ROM_SWAP_CS, 1)

} // namespace

#if !defined(__HIP_DEVICE_COMPILE__)
#define ROB_ENTRY(name, correct, desc, fn)                                               \
    {"rope_bwd", name, "fp32 bf16 fp16", "", correct, desc, rope_supports, fn}
NMO_HIP_TABLE(rope_bwd);
extern "C" const nmo_plugin_kernel nmo_hip_kernels_rope_bwd[] = {
    ROB_ENTRY("vec16", 1,
              "NeoX: 16-byte vectors of both halves, dx1 = fma(dy1, c, RN(dy2*s)), dx2 = fma(dy2, c, -RN(dy1*s)); "
              "other shapes/layouts: pairs",
              rb_vec16),
    ROB_ENTRY("pairs", 1, "one thread per pair, both products rounded then added", rb_pairs),
    ROB_ENTRY("pairs_fmab", 1, "one thread per pair, the partner's product fused", rb_pairs_fmab),
    ROB_ENTRY("mut_sign", 0, "MUTANT: forward rotation instead of its transpose", rb_mut_sign),
    ROB_ENTRY("mut_layout", 0, "MUTANT: NeoX and GPT-J pairings confused", rb_mut_layout),
    ROB_ENTRY("mut_pos_off1", 0, "MUTANT: cos/sin of position s+1", rb_mut_pos_off1),
    ROB_ENTRY("mut_store_rz", 0, "MUTANT: final store truncates (RZ) instead of RNE", rb_mut_store_rz),
    ROB_ENTRY("mut_swap_cs", 0, "MUTANT: cos and sin exchanged", rb_mut_swap_cs),
};
extern "C" const int nmo_hip_kernels_rope_bwd_n =
    (int)(sizeof nmo_hip_kernels_rope_bwd / sizeof nmo_hip_kernels_rope_bwd[0]);
#endif
