/* numoracle HIP kernels: geglu_bwd, da and db of y = gelu_tanh(a) * b.
 * Kernel templates shared with its sibling operator, and the plan notes: glu_bwd_common.h. */
#include "glu_bwd_common.h"

namespace {

/* VB, KIND (0 swiglu, 1 geglu), F, MUT */
GB_K(ggb_liger, 16, 1, 0, 0u)
GB_K(ggb_torch_fused_vec8, 8, 1, 1, 0u)
GB_K(ggb_assoc, 16, 1, 2, 0u)
GB_K(ggb_mut_liger_triton, 16, 1, 0, GB_EAGER)
GB_K(ggb_mut_no_term1, 16, 1, 0, GB_NO_TERM1)
GB_K(ggb_mut_omt_linear, 16, 1, 0, GB_OMT_LINEAR)
GB_K(ggb_mut_no3, 16, 1, 0, GB_NO3)
GB_K(ggb_mut_swap_out, 16, 1, 0, GB_SWAP_OUT)
GB_K(ggb_mut_store_rz, 16, 1, 0, GB_STORE_RZ)

} // namespace

#if !defined(__HIP_DEVICE_COMPILE__)
#define GGB_ENTRY(name, correct, desc, fn)                                               \
    {"geglu_bwd", name, "fp32 bf16 fp16", NMO_HIP_FN_PLAN, correct, desc, glu_bwd_supports, fn}
NMO_HIP_TABLE(geglu_bwd);
extern "C" const nmo_plugin_kernel nmo_hip_kernels_geglu_bwd[] = {
    GGB_ENTRY("liger", 1,
              "16-byte vectors, Liger: s = 0.5(1+th) + ((0.5a)(1-th^2))*(beta*(1+(c3*a)*a)), da=(dy*b)*s, db=dy*g",
              ggb_liger),
    GGB_ENTRY("torch_fused_vec8", 1, "8-byte vectors, PyTorch's fmaf chain, da = dy*(b*s)", ggb_torch_fused_vec8),
    GGB_ENTRY("assoc", 1, "(((0.5a)(1-th^2))*beta)*(1 + c3*(a*a)), da = (dy*s)*b, db = (dy*a)*cdf", ggb_assoc),
    GGB_ENTRY("mut_liger_triton", 0,
              "MUTANT under the fused plan: Liger's Triton kernel, g and dy*b rounded to the storage dtype",
              ggb_mut_liger_triton),
    GGB_ENTRY("mut_no_term1", 0, "MUTANT: the cdf term 0.5(1+th) of the derivative dropped", ggb_mut_no_term1),
    GGB_ENTRY("mut_omt_linear", 0, "MUTANT: 1 - th instead of 1 - th^2", ggb_mut_omt_linear),
    GGB_ENTRY("mut_no3", 0, "MUTANT: kappa instead of 3*kappa in the derivative", ggb_mut_no3),
    GGB_ENTRY("mut_swap_out", 0, "MUTANT: da and db written to each other's buffer", ggb_mut_swap_out),
    GGB_ENTRY("mut_store_rz", 0, "MUTANT: final stores truncate (RZ) instead of RNE", ggb_mut_store_rz),
};
extern "C" const int nmo_hip_kernels_geglu_bwd_n =
    (int)(sizeof nmo_hip_kernels_geglu_bwd / sizeof nmo_hip_kernels_geglu_bwd[0]);
#endif
