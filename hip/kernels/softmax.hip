/* numoracle HIP kernels: softmax, y = exp(x - max) / sum exp(x - max).
 * Kernel templates shared with its sibling operator, and the plan notes: softmax_common.h. */
#include "softmax_common.h"

namespace {

SM_K(k_block256, G_BLOCK, 256, 16, NMO_RED_SHFL_DOWN, 0u, 0u, 4)
SM_K(k_block1024_tree, G_BLOCK, 1024, 16, NMO_RED_SMEM_TREE, O_RECIP, 0u, 1)
SM_K(k_block128_vec8, G_BLOCK, 128, 8, NMO_RED_SHFL_XOR, 0u, 0u, 8)
SM_K(k_block512_vec4, G_BLOCK, 512, 4, NMO_RED_SHFL_DOWN, O_RECIP, 0u, 4)
SM_K(k_warp_row, G_WARP, 256, 16, NMO_RED_SHFL_XOR, O_RECIP, 0u, 4)
/* the row in one warp's registers (16 vectors per lane), no block barrier */
SM_K(k_warp_row16, G_WARP, 128, 16, NMO_RED_SHFL_XOR, 0u, 0u, 16)
/* persistent, next row prefetched (block256/512: exponentials kept in registers) */
SM_K(k_block256_pf, G_BLOCK, 256, 16, NMO_RED_SHFL_XOR, O_RECIP | O_ECACHE, 0u, 2, 0, 4)
SM_K(k_block512_pf, G_BLOCK, 512, 16, NMO_RED_SHFL_XOR, O_RECIP | O_ECACHE, 0u, 1, 0, 2)
SM_K(k_block128_pf, G_BLOCK, 128, 16, NMO_RED_SHFL_DOWN, O_RECIP, 0u, 4, 0, 8)
/* the exponentials in shared memory: registers hold only this row and the next (more
 * rows in flight per SM than the register-kept variants) */
SM_K(k_block128_pf_smem, G_BLOCK, 128, 16, NMO_RED_SHFL_XOR, O_RECIP | O_ESMEM, 0u, 4, 0, 8)
SM_K(k_block256_pf_smem, G_BLOCK, 256, 16, NMO_RED_SHFL_XOR, O_RECIP | O_ESMEM, 0u, 2, 0, 6)
#define SM_MUT(fname, m) SM_K(fname, G_BLOCK, 256, 16, NMO_RED_SHFL_DOWN, 0u, m, 4)
SM_MUT(k_mut_no_max, M_NO_MAX)
SM_MUT(k_mut_warp_max, M_WARP_MAX)
SM_MUT(k_mut_acc_bf16, M_ACC_BF16)
SM_MUT(k_mut_skip_last, M_SKIP_LAST)
SM_MUT(k_mut_store_rz, M_STORE_RZ)
SM_MUT(k_mut_exp_bf16, M_EXP_BF16)

} // namespace

#if !defined(__HIP_DEVICE_COMPILE__)
#define SM_ENTRY(name, correct, desc, fn)                                                \
    {"softmax", name, "fp32 bf16 fp16", NMO_HIP_FN_PLAN, correct, desc, softmax_supports, fn, fn##_geo}

NMO_HIP_TABLE(softmax);
extern "C" const nmo_plugin_kernel nmo_hip_kernels_softmax[] = {
    SM_ENTRY("block256", 1,
             "block per row, 256 threads, 16-byte vectors cached in registers, 3 passes, "
             "shuffle-down sum tree + smem, e/s",
             k_block256),
    SM_ENTRY("block1024_tree", 1,
             "block per row, 1024 threads, 16-byte vectors, shared-memory halving tree, e*(1/s)",
             k_block1024_tree),
    SM_ENTRY("block128_vec8", 1, "block per row, 128 threads, 8-byte vectors, xor butterfly, e/s",
             k_block128_vec8),
    SM_ENTRY("block512_vec4", 1,
             "block per row, 512 threads, 4-byte vectors, shuffle-down tree, e*(1/s)",
             k_block512_vec4),
    SM_ENTRY("warp_row", 1, "one warp per row, 16-byte vectors, xor butterfly, e*(1/s)",
             k_warp_row),
    SM_ENTRY("warp_row16", 1,
             "one warp per row, 4 rows per 128-thread block, 16 16-byte vectors per lane cached, xor butterflies, e/s",
             k_warp_row16),
    SM_ENTRY("block256_pf", 1,
             "persistent (4 blocks per SM), 256 threads per row, 2 16-byte vectors per thread cached, "
             "next row prefetched during the reductions, exponentials kept, xor butterfly, e*(1/s)",
             k_block256_pf),
    SM_ENTRY("block512_pf", 1,
             "persistent (2 blocks per SM), 512 threads per row, 1 16-byte vector per thread cached, "
             "next row prefetched, exponentials kept, xor butterfly, e*(1/s)",
             k_block512_pf),
    SM_ENTRY("block128_pf", 1,
             "persistent (8 blocks per SM), 128 threads per row, 4 16-byte vectors per thread cached, "
             "next row prefetched, exponentials recomputed, shuffle-down tree, e*(1/s)",
             k_block128_pf),
    SM_ENTRY("block128_pf_smem", 1,
             "persistent (8 blocks per SM), 128 threads per row, 4 16-byte vectors cached, next row "
             "prefetched, exponentials kept in shared memory, xor butterfly, e*(1/s)",
             k_block128_pf_smem),
    SM_ENTRY("block256_pf_smem", 1,
             "persistent (6 blocks per SM), 256 threads per row, 2 16-byte vectors cached, next row "
             "prefetched, exponentials kept in shared memory, xor butterfly, e*(1/s)",
             k_block256_pf_smem),
    SM_ENTRY("mut_no_max", 0, "MUTANT: max not subtracted, e = expf(x) (overflows on large inputs)",
             k_mut_no_max),
    SM_ENTRY("mut_warp_max", 0,
             "MUTANT: block max never combined across warps: each warp subtracts its own max",
             k_mut_warp_max),
    SM_ENTRY("mut_acc_bf16", 0, "MUTANT: every addition of the sum of exponentials rounded to bf16",
             k_mut_acc_bf16),
    SM_ENTRY("mut_skip_last", 0, "MUTANT: the sum skips the row's last element", k_mut_skip_last),
    SM_ENTRY("mut_store_rz", 0, "MUTANT: final store truncates (RZ) instead of RNE", k_mut_store_rz),
    SM_ENTRY("mut_exp_bf16", 0, "MUTANT: exponentials kept in bf16 between the passes",
             k_mut_exp_bf16),
};
extern "C" const int nmo_hip_kernels_softmax_n =
    (int)(sizeof nmo_hip_kernels_softmax / sizeof nmo_hip_kernels_softmax[0]);
#endif
