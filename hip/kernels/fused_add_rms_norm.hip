/* numoracle HIP kernels: fused_add_rms_norm, h = x + residual stored, y = rms_norm(h).
 * Kernel templates shared with its sibling operator, and the plan notes: rms_common.h. */
#include "rms_common.h"

namespace {

int fadd_supports(const nmo_plugin_args *a)
{
    if (!nmo_k_basic_ok(a, 3, 2)) return 0;
    if (nmo_k_param(a, 1, 0) != 0) return 0; /* offset: not implemented */
    int64_t rows, n;
    nmo_k_rows(&a->in[0], &rows, &n);
    if (a->in[2].ndims != 1 || a->in[2].dims[0] != n) return 0;
    if (!nmo_k_same_dims(&a->in[0], &a->in[1]) || !nmo_k_same_dims(&a->in[0], &a->out[0]) ||
        !nmo_k_same_dims(&a->in[0], &a->out[1]))
        return 0;
    if (!nmo_k_aligned16(a->in[0].data) || !nmo_k_aligned16(a->in[1].data) ||
        !nmo_k_aligned16(a->out[0].data) || !nmo_k_aligned16(a->out[1].data))
        return 0;
    return n >= 1 && n <= (1 << 24);
}

#define FADD_K(fname, ...)                                                               \
    int fname(const nmo_plugin_args *a, char *msg, size_t msglen)                        \
    {                                                                                    \
        NMO_K_DISPATCH(rms_launch, __VA_ARGS__, 1)                                       \
    }                                                                                \
    NMO_K_ROW_GEO(fname, __VA_ARGS__)
FADD_K(f_block256, G_BLOCK, 256, 16, NMO_RED_SHFL_DOWN, 0u, 0u, 4)
FADD_K(f_block1024_tree, G_BLOCK, 1024, 16, NMO_RED_SMEM_TREE, O_SS_H | O_MEAN_RECIP | O_ROOT_DIV | O_XRW, 0u, 1)
FADD_K(f_warp_row, G_WARP, 256, 16, NMO_RED_SHFL_XOR, O_MEAN_RECIP | O_XWR, 0u, 4)
#define FADD_MUT(fname, m) FADD_K(fname, G_BLOCK, 256, 16, NMO_RED_SHFL_DOWN, 0u, m, 4)
FADD_MUT(f_mut_norm_x, M_NORM_X)
FADD_MUT(f_mut_resid_rz, M_RESID_RZ)
FADD_MUT(f_mut_no_resid_store, M_NO_RESID_STORE)
FADD_MUT(f_mut_round_hr, M_ROUND_XR)
FADD_MUT(f_mut_acc_bf16, M_ACC_BF16)
FADD_MUT(f_mut_w_off1, M_W_OFF1)

} // namespace

#if !defined(__HIP_DEVICE_COMPILE__)
#define FADD_ENTRY(name, correct, desc, fn)                                              \
    {"fused_add_rms_norm", name, "fp32 bf16 fp16", NMO_HIP_FN_PLAN, correct, desc, fadd_supports, fn, fn##_geo}

NMO_HIP_TABLE(fused_add_rms_norm);
extern "C" const nmo_plugin_kernel nmo_hip_kernels_fused_add_rms_norm[] = {
    FADD_ENTRY("block256", 1,
               "block per row, 256 threads, 16-byte vectors: s=x+r in fp32, h=RN(s) stored, "
               "squares of s, h cached for y=(h*r)*w",
               f_block256),
    FADD_ENTRY("block1024_tree", 1,
               "block per row, 1024 threads, smem tree over squares of the stored h, ss*RN(1/N), "
               "1/sqrtf, h*(r*w)",
               f_block1024_tree),
    FADD_ENTRY("warp_row", 1, "one warp per row, xor butterfly, ss*RN(1/N), rsqrtf, (h*w)*r", f_warp_row),
    FADD_ENTRY("mut_norm_x", 0, "MUTANT: the norm reads x, not x + residual (the residual is stored)",
               f_mut_norm_x),
    FADD_ENTRY("mut_resid_rz", 0, "MUTANT: the new residual stored truncated (RZ)", f_mut_resid_rz),
    FADD_ENTRY("mut_no_resid_store", 0, "MUTANT: the new residual is never written back",
               f_mut_no_resid_store),
    FADD_ENTRY("mut_round_hr", 0, "MUTANT: h*r rounded to the storage dtype before *w (fused plan)",
               f_mut_round_hr),
    FADD_ENTRY("mut_acc_bf16", 0, "MUTANT: every accumulation step of sum(h^2) rounded to bf16",
               f_mut_acc_bf16),
    FADD_ENTRY("mut_w_off1", 0, "MUTANT: weight index off by one, w[(j+1) mod N]", f_mut_w_off1),
};
extern "C" const int nmo_hip_kernels_fused_add_rms_norm_n =
    (int)(sizeof nmo_hip_kernels_fused_add_rms_norm / sizeof nmo_hip_kernels_fused_add_rms_norm[0]);
#endif
