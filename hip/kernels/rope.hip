/* numoracle HIP kernels: rope, forward rotation.
 * Kernel templates shared with its sibling operator, and the plan notes: rope_common.h. */
#include "rope_common.h"

namespace {

RO_K(ro_vec16, 1, RO_FMA_A, 0u)
RO_K(ro_pairs, 0, 0u, 0u)
RO_K(ro_pairs_fmab, 0, RO_FMA_B, 0u)
RO_K(ro_mut_sign, 1, RO_FMA_A, ROM_SIGN)
RO_K(ro_mut_layout, 1, RO_FMA_A, ROM_LAYOUT)
RO_K(ro_mut_pos_off1, 1, RO_FMA_A, ROM_POS_OFF1)
RO_K(ro_mut_store_rz, 1, RO_FMA_A, ROM_STORE_RZ)
RO_K(ro_mut_swap_cs, 1, RO_FMA_A, ROM_SWAP_CS)
} // namespace

#if !defined(__HIP_DEVICE_COMPILE__)
#define RO_ENTRY(name, correct, desc, fn)                                                \
    {"rope", name, "fp32 bf16 fp16", "", correct, desc, rope_supports, fn}
NMO_HIP_TABLE(rope);
extern "C" const nmo_plugin_kernel nmo_hip_kernels_rope[] = {
    RO_ENTRY("vec16", 1,
             "NeoX: 16-byte vectors of both halves, fma(x1, c, -RN(x2*s)); other shapes/layouts: pairs",
             ro_vec16),
    RO_ENTRY("pairs", 1, "one thread per pair, both products rounded then added", ro_pairs),
    RO_ENTRY("pairs_fmab", 1, "one thread per pair, fma(+-x2, s, RN(x1*c))", ro_pairs_fmab),
    RO_ENTRY("mut_sign", 0, "MUTANT: rotation sign flipped (x*cos + rotate(x)*sin with -rotate)",
             ro_mut_sign),
    RO_ENTRY("mut_layout", 0, "MUTANT: NeoX and GPT-J pairings confused", ro_mut_layout),
    RO_ENTRY("mut_pos_off1", 0, "MUTANT: cos/sin of position s+1", ro_mut_pos_off1),
    RO_ENTRY("mut_store_rz", 0, "MUTANT: final store truncates (RZ) instead of RNE", ro_mut_store_rz),
    RO_ENTRY("mut_swap_cs", 0, "MUTANT: cos and sin exchanged", ro_mut_swap_cs),
};
extern "C" const int nmo_hip_kernels_rope_n =
    (int)(sizeof nmo_hip_kernels_rope / sizeof nmo_hip_kernels_rope[0]);
#endif
