/* numoracle HIP kernels: sdpa, forward scaled-dot-product attention (grouped-query,
 * optional top-left causal mask).
 *
 *   in q[B,Hq,S,D], k[B,Hkv,S,D], v[B,Hkv,S,D] (T)   out o[B,Hq,S,D] (T)
 *   params causal (1), scale (0: 1/sqrt(D));  head g(h) = h / (Hq/Hkv)
 *
 * Plan honoured: the dtype default with the platform's math library (NMO_HIP_FN_PLAN),
 * fp32 compute and accumulation, fused (P is never stored narrower). refs/sdpa.c
 * encloses these kernels:
 *   scores   d_j = q.k_j sequential fmaf over D (dot model: any order, FMA or not),
 *            s_j = RN(sc*d_j) (A), or q pre-scaled RN(q*sc) then the dot (B);
 *            sc = RN(scale) or 1/sqrtf(D) (RN(1/RN(sqrt D)));
 *   online   (flash variants) keys in tiles of BK, in order; running max m_r,
 *            alpha = expf(RN(m_{r-1} - m_r)); l = RN(l*alpha) + (tile sum of p, any
 *            tree); acc = fmaf chain over the tile's keys after RN(acc*alpha) — the
 *            reference's online model (blocks of any size, rescales by rounded
 *            multiplies, FMA allowed);
 *   two-pass (twopass) the row max over all keys first, then p = expf(RN(s - m)), l and
 *            acc without rescaling;
 *   output   o = acc/l or acc*RN(1/l), one RNE store.
 *
 * Structure: one block per query row (b, h, i), grid-stride; q cached in shared memory;
 * per tile each of the first BK threads computes one key's score, block max and block
 * sum through warp shuffles + shared memory, p in shared memory, each thread owns
 * output dims t, t+NT, ... (D <= 256). Straightforward, not tiled over queries: the
 * point is the numerics, not the speed.
 *
 * Mutants (refs/cand/sdpa_cand.c names): the default kernel with one bug each. */
#include "kcommon.h"

namespace {

enum : unsigned {
    SD_NO_SCALE = 1u << 0,     /* scale forgotten */
    SD_CAUSAL_OFF1 = 1u << 1,  /* causal mask admits key i+1 */
    SD_GQA_MOD = 1u << 2,      /* kv head h % Hkv instead of h / (Hq/Hkv) */
    SD_NO_MAX = 1u << 3,       /* no max subtraction (alpha = 1, p = expf(s)) */
    SD_ACC_BF16 = 1u << 4,     /* P.V accumulator rounded to bf16 after every step */
    SD_L_NO_RESCALE = 1u << 5, /* l never rescaled by alpha */
};
constexpr int SD_MAXD = 256;

template <class T, int NT, int BK, int SCORE, bool ONLINE, bool RECIP, unsigned MUT>
__global__ void __launch_bounds__(NT)
    sdpa_kernel(const T *__restrict__ q, const T *__restrict__ k, const T *__restrict__ v, T *__restrict__ o,
                int64_t B, int64_t Hq, int64_t Hkv, int64_t S, int64_t D, int causal, float sc)
{
    static_assert(BK <= NT, "one thread per key of a tile");
    constexpr int ND = SD_MAXD / NT > 0 ? SD_MAXD / NT : 1;
    __shared__ float qs[SD_MAXD];
    __shared__ float p[BK];
    __shared__ float smem[NT + 1];
    const int t = (int)threadIdx.x;
    const float ninf = nmo_u2f(0xff800000u);
    const int64_t nrows = B * Hq * S;
    for (int64_t row = blockIdx.x; row < nrows; row += gridDim.x) {
        const int64_t i = row % S, h = (row / S) % Hq, b = row / (S * Hq);
        const int64_t hk = (MUT & SD_GQA_MOD) ? h % Hkv : h / (Hq / Hkv);
        const T *qr = q + row * D, *K = k + (b * Hkv + hk) * S * D, *Vh = v + (b * Hkv + hk) * S * D;
        for (int64_t d = t; d < D; d += NT) qs[d] = SCORE == 1 ? nmo_mul_nc(nmo_ldf(qr + d), sc) : nmo_ldf(qr + d);
        __syncthreads();
        const int64_t n = !causal ? S : (MUT & SD_CAUSAL_OFF1) ? (i + 2 < S ? i + 2 : S) : i + 1;
        /* score of key j (thread t of the tile starting at lo) */
        auto score = [&](int64_t j) {
            float dot = 0.0f;
            const T *kr = K + j * D;
            for (int64_t d = 0; d < D; d++) dot = nmo_fmaf(qs[d], nmo_ldf(kr + d), dot);
            return SCORE == 1 ? dot : nmo_mul_nc(dot, sc);
        };
        float m = ninf, l = 0.0f, acc[ND];
        for (int c = 0; c < ND; c++) acc[c] = 0.0f;
        if (!ONLINE) { /* two-pass: the row max first */
            float mt = ninf;
            for (int64_t j = t; j < n; j += NT) {
                const float s = score(j);
                mt = s > mt ? s : mt;
            }
            m = nmo_block_max<NT, 0>(mt, smem);
        }
        for (int64_t lo = 0; lo < n; lo += BK) {
            const int64_t j = lo + t;
            const bool have = t < BK && j < n;
            const float s = have ? score(j) : ninf;
            float mn = m, alpha = 1.0f;
            if (ONLINE && !(MUT & SD_NO_MAX)) {
                const float mt = nmo_block_max<NT, 0>(s, smem);
                mn = mt > m ? mt : m;
                alpha = nmo_expf(nmo_sub_rn(m, mn)); /* 0 on the first tile */
            }
            const float pj = !have ? 0.0f : (MUT & SD_NO_MAX) ? nmo_expf(s) : nmo_expf(nmo_sub_rn(s, mn));
            if (t < BK) p[t] = pj;
            const float rs = nmo_block_sum<NT, NMO_RED_SHFL_DOWN, NMO_ACC32>(pj, smem); /* syncs: p visible */
            l = ((MUT & SD_L_NO_RESCALE) || !ONLINE) ? nmo_add_rn(l, rs) : nmo_madd_nofma(rs, l, alpha);
            const int64_t cnt = n - lo < BK ? n - lo : BK;
            for (int c = 0; c < ND; c++) {
                const int64_t d = t + (int64_t)c * NT;
                if (d >= D) break;
                float a = ONLINE ? nmo_mul_nc(acc[c], alpha) : acc[c];
                for (int64_t jj = 0; jj < cnt; jj++) {
                    a = nmo_fmaf(p[jj], nmo_ldf(Vh + (lo + jj) * D + d), a);
                    if (MUT & SD_ACC_BF16) a = nmo_round_bf16(a);
                }
                acc[c] = a;
            }
            m = mn;
            __syncthreads(); /* p is rewritten by the next tile */
        }
        const float inv = 1.0f / l;
        for (int c = 0; c < ND; c++) {
            const int64_t d = t + (int64_t)c * NT;
            if (d < D) nmo_stf(o + row * D + d, RECIP ? nmo_mul_nc(acc[c], inv) : acc[c] / l, false);
        }
        __syncthreads(); /* qs is rewritten by the next row */
    }
}

template <class T, int NT, int BK, int SCORE, bool ONLINE, bool RECIP, unsigned MUT>
int sdpa_launch(const nmo_plugin_args *a, char *msg, size_t msglen)
{
    const nmo_plugin_tensor *tq = &a->in[0], *tk = &a->in[1];
    const int64_t B = tq->dims[0], Hq = tq->dims[1], S = tq->dims[2], D = tq->dims[3], Hkv = tk->dims[1];
    const int causal = nmo_k_param(a, 0, 1.0) != 0.0;
    const double scale = nmo_k_param(a, 1, 0.0);
    float sc = scale != 0.0 ? (float)scale : 1.0f / __builtin_sqrtf((float)D); /* RN(1/RN(sqrt D)) */
    if (MUT & SD_NO_SCALE) sc = 1.0f;
    nmo_launch(sdpa_kernel<T, NT, BK, SCORE, ONLINE, RECIP, MUT>, dim3(nmo_k_grid(B * Hq * S)), dim3(NT), 0,
               (hipStream_t)a->stream, (const T *)tq->data, (const T *)tk->data, (const T *)a->in[2].data,
               (T *)a->out[0].data, B, Hq, Hkv, S, D, causal, sc);
    NMO_HIP_CHECK_LAUNCH("sdpa");
    return NMO_PLUGIN_OK;
}

int sdpa_supports(const nmo_plugin_args *a)
{
    if (!a || a->n_in != 3 || a->n_out != 1) return 0;
    const int dt = a->in[0].dtype;
    if (!nmo_k_dtype_ok(dt)) return 0;
    const nmo_plugin_tensor *tq = &a->in[0], *tk = &a->in[1], *tv = &a->in[2];
    if (!nmo_k_tensor_ok(tq, dt) || !nmo_k_tensor_ok(tk, dt) || !nmo_k_tensor_ok(tv, dt) ||
        !nmo_k_tensor_ok(&a->out[0], dt))
        return 0;
    if (tq->ndims != 4 || tk->ndims != 4 || !nmo_k_same_dims(tk, tv) || !nmo_k_same_dims(tq, &a->out[0])) return 0;
    if (tk->dims[0] != tq->dims[0] || tk->dims[2] != tq->dims[2] || tk->dims[3] != tq->dims[3]) return 0;
    /* the kernel masks causally only: a diagonal band (left_bound/right_bound, params 2
     * and 3, hipDNN's sliding window) is declined, so such a case is a SKIP, not a FAIL */
    if (nmo_k_param(a, 2, -1.0) != -1.0 || nmo_k_param(a, 3, -1.0) != -1.0) return 0;
    const int64_t Hq = tq->dims[1], Hkv = tk->dims[1];
    return Hkv >= 1 && Hq % Hkv == 0 && tq->dims[3] >= 1 && tq->dims[3] <= SD_MAXD;
}

#define SD_K(fname, ...)                                                                 \
    int fname(const nmo_plugin_args *a, char *msg, size_t msglen)                        \
    {                                                                                    \
        NMO_K_DISPATCH(sdpa_launch, __VA_ARGS__)                                         \
    }
/* NT, BK, SCORE (0: RN(sc*dot), 1: q pre-scaled), ONLINE, RECIP, MUT */
SD_K(sd_flash16, 64, 16, 0, true, false, 0u)
SD_K(sd_flash128_prescaled, 128, 128, 1, true, true, 0u)
SD_K(sd_flash32_recip, 64, 32, 0, true, true, 0u)
SD_K(sd_twopass, 128, 128, 0, false, true, 0u)
#define SD_MUT(fname, m) SD_K(fname, 64, 16, 0, true, false, m)
SD_MUT(sd_mut_no_scale, SD_NO_SCALE)
SD_MUT(sd_mut_causal_off1, SD_CAUSAL_OFF1)
SD_MUT(sd_mut_gqa_mod, SD_GQA_MOD)
SD_MUT(sd_mut_no_max, SD_NO_MAX)
SD_MUT(sd_mut_acc_bf16, SD_ACC_BF16)
SD_MUT(sd_mut_l_no_rescale, SD_L_NO_RESCALE)

} // namespace

#if !defined(__HIP_DEVICE_COMPILE__)
#define SD_ENTRY(name, correct, desc, fn)                                                \
    {"sdpa", name, "fp32 bf16 fp16", NMO_HIP_FN_PLAN, correct, desc, sdpa_supports, fn}
NMO_HIP_TABLE(sdpa);
extern "C" const nmo_plugin_kernel nmo_hip_kernels_sdpa[] = {
    SD_ENTRY("flash16", 1,
             "block (64) per query row, online softmax over tiles of 16 keys, s = RN(sc*fmaf-dot), "
             "rescaled l and acc, o = acc/l",
             sd_flash16),
    SD_ENTRY("flash128_prescaled", 1, "block (128) per query, tiles of 128 keys, q pre-scaled, o = acc*RN(1/l)",
             sd_flash128_prescaled),
    SD_ENTRY("flash32_recip", 1, "block (64) per query, tiles of 32 keys, o = acc*RN(1/l)", sd_flash32_recip),
    SD_ENTRY("twopass", 1, "block (128) per query, row max first, then p, l and P.V without rescaling",
             sd_twopass),
    SD_ENTRY("mut_no_scale", 0, "MUTANT: the score scale is forgotten", sd_mut_no_scale),
    SD_ENTRY("mut_causal_off1", 0, "MUTANT: the causal mask admits key i+1", sd_mut_causal_off1),
    SD_ENTRY("mut_gqa_mod", 0, "MUTANT: kv head h % Hkv instead of h / (Hq/Hkv)", sd_mut_gqa_mod),
    SD_ENTRY("mut_no_max", 0, "MUTANT: no max subtraction (overflows on large scores)", sd_mut_no_max),
    SD_ENTRY("mut_acc_bf16", 0, "MUTANT: P.V accumulated in bf16", sd_mut_acc_bf16),
    SD_ENTRY("mut_l_no_rescale", 0, "MUTANT: the running sum l is never rescaled", sd_mut_l_no_rescale),
};
extern "C" const int nmo_hip_kernels_sdpa_n = (int)(sizeof nmo_hip_kernels_sdpa / sizeof nmo_hip_kernels_sdpa[0]);
#endif
