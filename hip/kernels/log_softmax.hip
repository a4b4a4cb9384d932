/* numoracle HIP kernels: log_softmax, y = (x - max) - log(sum exp(x - max)).
 * Kernel templates shared with its sibling operator, and the plan notes: softmax_common.h. */
#include "softmax_common.h"

namespace {

#define LSM_K(fname, ...)                                                                \
    int fname(const nmo_plugin_args *a, char *msg, size_t msglen)                        \
    {                                                                                    \
        NMO_K_DISPATCH(softmax_launch, __VA_ARGS__, 1)                                   \
    }                                                                                \
    NMO_K_ROW_GEO(fname, __VA_ARGS__)
LSM_K(l_block256, G_BLOCK, 256, 16, NMO_RED_SHFL_DOWN, 0u, 0u, 4)
LSM_K(l_block1024_tree, G_BLOCK, 1024, 16, NMO_RED_SMEM_TREE, O_LSE, 0u, 1)
LSM_K(l_warp_row, G_WARP, 256, 16, NMO_RED_SHFL_XOR, O_LSE, 0u, 4)
LSM_K(l_warp_row16, G_WARP, 128, 16, NMO_RED_SHFL_XOR, 0u, 0u, 16)
LSM_K(l_block128_vec8, G_BLOCK, 128, 8, NMO_RED_SHFL_XOR, 0u, 0u, 8)
SM_K(l_block256_pf, G_BLOCK, 256, 16, NMO_RED_SHFL_XOR, O_LSE, 0u, 2, 1, 4)
SM_K(l_block512_pf, G_BLOCK, 512, 16, NMO_RED_SHFL_XOR, 0u, 0u, 1, 1, 2)
#define LSM_MUT(fname, m) LSM_K(fname, G_BLOCK, 256, 16, NMO_RED_SHFL_DOWN, 0u, m, 4)
LSM_MUT(l_mut_no_max, M_NO_MAX)
LSM_MUT(l_mut_warp_max, M_WARP_MAX)
LSM_MUT(l_mut_acc_bf16, M_ACC_BF16)
LSM_MUT(l_mut_skip_last, M_SKIP_LAST)
LSM_MUT(l_mut_store_rz, M_STORE_RZ)
LSM_MUT(l_mut_log_of_softmax, M_LOG_OF_SM)

} // namespace

#if !defined(__HIP_DEVICE_COMPILE__)
#define LSM_ENTRY(name, correct, desc, fn)                                               \
    {"log_softmax", name, "fp32 bf16 fp16", NMO_HIP_FN_PLAN, correct, desc, softmax_supports, fn, fn##_geo}

NMO_HIP_TABLE(log_softmax);
extern "C" const nmo_plugin_kernel nmo_hip_kernels_log_softmax[] = {
    LSM_ENTRY("block256", 1,
              "block per row, 256 threads, 16-byte vectors cached, shuffle-down tree, (x-m)-logf(s)",
              l_block256),
    LSM_ENTRY("block1024_tree", 1, "block per row, 1024 threads, smem tree, x - RN(m + logf(s))",
              l_block1024_tree),
    LSM_ENTRY("warp_row", 1, "one warp per row, xor butterfly, x - RN(m + logf(s))", l_warp_row),
    LSM_ENTRY("warp_row16", 1, "one warp per row, 4 rows per 128-thread block, 16 16-byte vectors per lane cached, (x-m)-logf(s)",
              l_warp_row16),
    LSM_ENTRY("block128_vec8", 1, "block per row, 128 threads, 8-byte vectors, (x-m)-logf(s)",
              l_block128_vec8),
    LSM_ENTRY("block256_pf", 1,
              "persistent (4 blocks per SM), 256 threads per row, 2 16-byte vectors cached, next row "
              "prefetched during the reductions, x - RN(m + logf(s))",
              l_block256_pf),
    LSM_ENTRY("block512_pf", 1,
              "persistent (2 blocks per SM), 512 threads per row, 1 16-byte vector cached, next row "
              "prefetched, (x-m)-logf(s)",
              l_block512_pf),
    LSM_ENTRY("mut_no_max", 0, "MUTANT: max not subtracted (exp overflows on large inputs)",
              l_mut_no_max),
    LSM_ENTRY("mut_warp_max", 0, "MUTANT: block max never combined across warps", l_mut_warp_max),
    LSM_ENTRY("mut_acc_bf16", 0, "MUTANT: every addition of the sum of exponentials rounded to bf16",
              l_mut_acc_bf16),
    LSM_ENTRY("mut_skip_last", 0, "MUTANT: the sum skips the row's last element", l_mut_skip_last),
    LSM_ENTRY("mut_store_rz", 0, "MUTANT: final store truncates (RZ) instead of RNE", l_mut_store_rz),
    LSM_ENTRY("mut_log_of_softmax", 0, "MUTANT: logf(e/s) instead of (x-m)-logf(s) (underflows)",
              l_mut_log_of_softmax),
};
extern "C" const int nmo_hip_kernels_log_softmax_n =
    (int)(sizeof nmo_hip_kernels_log_softmax / sizeof nmo_hip_kernels_log_softmax[0]);
#endif
