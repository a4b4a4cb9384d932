/* numoracle HIP kernels: rms_norm, y = x * rsqrt(mean(x^2) + eps) * w.
 * Kernel templates shared with its sibling operator, and the plan notes: rms_common.h. */
#include "rms_common.h"

namespace {

int rms_supports(const nmo_plugin_args *a)
{
    if (!nmo_k_basic_ok(a, 2, 1)) return 0;
    if (nmo_k_param(a, 1, 0) != 0) return 0; /* offset (Gemma's 1 + w): not implemented */
    int64_t rows, n;
    nmo_k_rows(&a->in[0], &rows, &n);
    if (a->in[1].ndims != 1 || a->in[1].dims[0] != n) return 0;
    if (!nmo_k_same_dims(&a->in[0], &a->out[0])) return 0;
    /* x and y rows share their alignment (vector body) */
    if (!nmo_k_aligned16(a->in[0].data) || !nmo_k_aligned16(a->out[0].data)) return 0;
    return n >= 1 && n <= (1 << 24); /* (float)N exact */
}

#define RMS_K(fname, ...)                                                                \
    int fname(const nmo_plugin_args *a, char *msg, size_t msglen)                        \
    {                                                                                    \
        NMO_K_DISPATCH(rms_launch, __VA_ARGS__)                                          \
    }                                                                                \
    NMO_K_ROW_GEO(fname, __VA_ARGS__)

/* correct variants */
RMS_K(k_block256, G_BLOCK, 256, 16, NMO_RED_SHFL_DOWN, 0u, 0u, 4)
RMS_K(k_block1024_tree, G_BLOCK, 1024, 16, NMO_RED_SMEM_TREE, O_MEAN_RECIP | O_ROOT_DIV | O_XRW, 0u, 1)
RMS_K(k_block128_vec8, G_BLOCK, 128, 8, NMO_RED_SHFL_XOR, O_NOFMA | O_XWR, 0u, 8)
RMS_K(k_block512_vec4, G_BLOCK, 512, 4, NMO_RED_SHFL_DOWN, O_ROOT_DIV, 0u, 4)
RMS_K(k_warp_row, G_WARP, 256, 16, NMO_RED_SHFL_XOR, O_MEAN_RECIP | O_XWR, 0u, 4)
/* a whole 4096-wide bf16 row in one warp's registers (16 vectors per lane): no block
 * barrier, 16 loads in flight per lane (the bandwidth variant) */
RMS_K(k_warp_row16, G_WARP, 128, 16, NMO_RED_SHFL_XOR, 0u, 0u, 16)
/* persistent, the next row prefetched during the reduction and the stores */
RMS_K(k_block256_pf, G_BLOCK, 256, 16, NMO_RED_SHFL_XOR, O_MEAN_RECIP, 0u, 2, 0, 4)
RMS_K(k_block512_pf, G_BLOCK, 512, 16, NMO_RED_SHFL_DOWN, O_XWR, 0u, 1, 0, 2)
RMS_K(k_block128_pf, G_BLOCK, 128, 16, NMO_RED_SHFL_XOR, O_XRW, 0u, 4, 0, 8)

/* mutants: block256 with one bug */
#define RMS_MUT(fname, m) RMS_K(fname, G_BLOCK, 256, 16, NMO_RED_SHFL_DOWN, 0u, m, 4)
RMS_MUT(k_mut_acc_bf16, M_ACC_BF16)
RMS_MUT(k_mut_acc_fp16, M_ACC_FP16)
RMS_MUT(k_mut_no_eps, M_NO_EPS)
RMS_MUT(k_mut_eps_outside, M_EPS_OUTSIDE)
RMS_MUT(k_mut_mean_n1, M_MEAN_N1)
RMS_MUT(k_mut_skip_last, M_SKIP_LAST)
RMS_MUT(k_mut_w_off1, M_W_OFF1)
RMS_MUT(k_mut_store_rz, M_STORE_RZ)
RMS_MUT(k_mut_round_xr, M_ROUND_XR)

} // namespace

#if !defined(__HIP_DEVICE_COMPILE__)
/* The table is host data: the device pass of a HIP compile must not see it (clang makes
 * namespace-scope const objects __constant__ and would emit host function pointers). */
#define RMS_ENTRY(name, correct, desc, fn)                                               \
    {"rms_norm", name, "fp32 bf16 fp16", NMO_HIP_FN_PLAN, correct, desc, rms_supports, fn, fn##_geo}

NMO_HIP_TABLE(rms_norm);
extern "C" const nmo_plugin_kernel nmo_hip_kernels_rms_norm[] = {
    RMS_ENTRY("block256", 1,
              "block per row, 256 threads, 16-byte vectors cached in registers, fmaf squares, "
              "shuffle-down tree + smem, ss/N, rsqrtf, (x*r)*w",
              k_block256),
    RMS_ENTRY("block1024_tree", 1,
              "block per row, 1024 threads, 16-byte vectors, shared-memory halving tree, "
              "ss*RN(1/N), 1/sqrtf, x*(r*w)",
              k_block1024_tree),
    RMS_ENTRY("block128_vec8", 1,
              "block per row, 128 threads, 8-byte vectors, x*x then add (no FMA), xor "
              "butterfly + smem, ss/N, rsqrtf, (x*w)*r",
              k_block128_vec8),
    RMS_ENTRY("block512_vec4", 1,
              "block per row, 512 threads, 4-byte vectors, shuffle-down tree, ss/N, 1/sqrtf, "
              "(x*r)*w",
              k_block512_vec4),
    RMS_ENTRY("warp_row", 1,
              "one warp (32 or 64 lanes) per row, 16-byte vectors, xor butterfly, ss*RN(1/N), "
              "rsqrtf, (x*w)*r",
              k_warp_row),
    RMS_ENTRY("warp_row16", 1,
              "one warp per row, 4 rows per 128-thread block, 16 16-byte vectors per lane cached "
              "(a 4096-wide bf16 row read once), xor butterfly, ss/N, rsqrtf, (x*r)*w",
              k_warp_row16),
    RMS_ENTRY("block256_pf", 1,
              "persistent (4 blocks per SM), 256 threads per row, 2 16-byte vectors per thread cached, "
              "next row prefetched during the reduction, xor butterfly, ss*RN(1/N), rsqrtf, (x*r)*w",
              k_block256_pf),
    RMS_ENTRY("block512_pf", 1,
              "persistent (2 blocks per SM), 512 threads per row, 1 16-byte vector cached, next row "
              "prefetched, shuffle-down tree, ss/N, rsqrtf, (x*w)*r",
              k_block512_pf),
    RMS_ENTRY("block128_pf", 1,
              "persistent (8 blocks per SM), 128 threads per row, 4 16-byte vectors cached, next row "
              "prefetched, xor butterfly, ss/N, rsqrtf, x*(r*w)",
              k_block128_pf),
    RMS_ENTRY("mut_acc_bf16", 0, "MUTANT: every accumulation step of sum(x^2) rounded to bf16",
              k_mut_acc_bf16),
    RMS_ENTRY("mut_acc_fp16", 0,
              "MUTANT: every accumulation step of sum(x^2) rounded to fp16 (overflows)",
              k_mut_acc_fp16),
    RMS_ENTRY("mut_no_eps", 0, "MUTANT: eps dropped, r = rsqrtf(ms)", k_mut_no_eps),
    RMS_ENTRY("mut_eps_outside", 0, "MUTANT: eps moved out of the root, r = 1/(sqrtf(ms)+eps)",
              k_mut_eps_outside),
    RMS_ENTRY("mut_mean_n1", 0, "MUTANT: mean of squares divided by N-1", k_mut_mean_n1),
    RMS_ENTRY("mut_skip_last", 0, "MUTANT: the reduction skips the row's last element (still /N)",
              k_mut_skip_last),
    RMS_ENTRY("mut_w_off1", 0, "MUTANT: weight index off by one, w[(j+1) mod N]", k_mut_w_off1),
    RMS_ENTRY("mut_store_rz", 0, "MUTANT: final store truncates (RZ) instead of RNE",
              k_mut_store_rz),
    RMS_ENTRY("mut_round_xr", 0,
              "MUTANT: x*r rounded to the storage dtype before *w (eager two-step, not the fused plan)",
              k_mut_round_xr),
};
extern "C" const int nmo_hip_kernels_rms_norm_n =
    (int)(sizeof nmo_hip_kernels_rms_norm / sizeof nmo_hip_kernels_rms_norm[0]);
#endif
