/* numoracle HIP kernels: swiglu_bwd, da and db of y = silu(a) * b.
 * Kernel templates shared with its sibling operator, and the plan notes: glu_bwd_common.h. */
#include "glu_bwd_common.h"

namespace {

/* VB, KIND (0 swiglu, 1 geglu), F, MUT */
GB_K(swb_liger, 16, 0, 0, 0u)
GB_K(swb_liger_fma_vec8, 8, 0, 1, 0u)
GB_K(swb_torch_fused, 16, 0, 2, 0u)
GB_K(swb_mut_unsloth, 16, 0, 0, GB_EAGER)
GB_K(swb_mut_dsig, 16, 0, 0, GB_DSIG)
GB_K(swb_mut_no_b, 16, 0, 0, GB_NO_B)
GB_K(swb_mut_db_sig, 16, 0, 0, GB_DB_SIG)
GB_K(swb_mut_swap_out, 16, 0, 0, GB_SWAP_OUT)
GB_K(swb_mut_store_rz, 16, 0, 0, GB_STORE_RZ)
} // namespace

#if !defined(__HIP_DEVICE_COMPILE__)
#define SWB_ENTRY(name, correct, desc, fn)                                               \
    {"swiglu_bwd", name, "fp32 bf16 fp16", NMO_HIP_FN_PLAN, correct, desc, glu_bwd_supports, fn}
NMO_HIP_TABLE(swiglu_bwd);
extern "C" const nmo_plugin_kernel nmo_hip_kernels_swiglu_bwd[] = {
    SWB_ENTRY("liger", 1, "16-byte vectors: db = dy*silu, da = (dy*(silu*(1-sig) + sig))*b, no FMA", swb_liger),
    SWB_ENTRY("liger_fma_vec8", 1, "8-byte vectors, derivative fmaf(silu, 1-sig, sig)", swb_liger_fma_vec8),
    SWB_ENTRY("torch_fused", 1, "da = dy*(b*(sig*fmaf(a, 1-sig, 1))), db = dy*(a/(1+expf(-a)))", swb_torch_fused),
    SWB_ENTRY("mut_unsloth", 0,
              "MUTANT under the fused plan: Unsloth's silu and dy*b rounded to the storage dtype "
              "(correct under inter=<dtype>)",
              swb_mut_unsloth),
    SWB_ENTRY("mut_dsig", 0, "MUTANT: derivative of the sigmoid sig*(1-sig) instead of silu'", swb_mut_dsig),
    SWB_ENTRY("mut_no_b", 0, "MUTANT: da misses the factor b", swb_mut_no_b),
    SWB_ENTRY("mut_db_sig", 0, "MUTANT: db = dy*sig instead of dy*silu", swb_mut_db_sig),
    SWB_ENTRY("mut_swap_out", 0, "MUTANT: da and db written to each other's buffer", swb_mut_swap_out),
    SWB_ENTRY("mut_store_rz", 0, "MUTANT: final stores truncate (RZ) instead of RNE", swb_mut_store_rz),
};
extern "C" const int nmo_hip_kernels_swiglu_bwd_n =
    (int)(sizeof nmo_hip_kernels_swiglu_bwd / sizeof nmo_hip_kernels_swiglu_bwd[0]);
#endif
