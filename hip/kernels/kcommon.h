/* numoracle GPU kernels: shared pieces of the .hip files — argument checks of the
 * plugin ABI, row splitting for 16-byte vector loads, block and warp reductions
 * (shuffle-down, xor butterfly, shared-memory tree), 16-bit accumulator mutants. */
#ifndef NMO_KCOMMON_H
#define NMO_KCOMMON_H

#include "nmo_hip.h"
#include "numoracle/plugin.h"

/* The registry tables each .hip file exports (see hip/hip_registry.c). */
#define NMO_HIP_TABLE(op)                                                                \
    extern "C" const nmo_plugin_kernel nmo_hip_kernels_##op[];                           \
    extern "C" const int nmo_hip_kernels_##op##_n

/* ------------------------------------------------------------------ host helpers */

/* The device's warp size (host side; cached per translation unit). */
static inline int nmo_k_warp_size(void)
{
    static int ws = 0;
    if (!ws) {
        int d = 0;
        hipDeviceProp_t p;
        if (hipGetDevice(&d) == hipSuccess && hipGetDeviceProperties(&p, d) == hipSuccess)
            ws = p.warpSize;
        else
            ws = 32;
    }
    return ws;
}

/* The device's multiprocessor (CU) count (host side; cached per translation unit). */
static inline int nmo_k_sm_count(void)
{
    static int sms = 0;
    if (!sms) {
        int d = 0;
        hipDeviceProp_t p;
        if (hipGetDevice(&d) == hipSuccess && hipGetDeviceProperties(&p, d) == hipSuccess &&
            p.multiProcessorCount > 0)
            sms = p.multiProcessorCount;
        else
            sms = 1;
    }
    return sms;
}
/* Grid of a persistent launch: bps resident blocks per multiprocessor, never more
 * blocks than work items (the kernels grid-stride over the rest). */
static inline unsigned nmo_k_persist_grid(int64_t blocks, int bps)
{
    const int64_t cap = (int64_t)nmo_k_sm_count() * bps;
    return (unsigned)(blocks < 1 ? 1 : blocks > cap ? cap : blocks);
}

static inline int nmo_k_packed(const nmo_plugin_tensor *t)
{
    int64_t s = 1;
    for (int d = t->ndims - 1; d >= 0; d--) {
        if (t->dims[d] != 1 && t->strides[d] != s) return 0;
        s *= t->dims[d];
    }
    return 1;
}
static inline int64_t nmo_k_numel(const nmo_plugin_tensor *t)
{
    int64_t n = 1;
    for (int d = 0; d < t->ndims; d++) n *= t->dims[d];
    return n;
}
static inline int nmo_k_same_dims(const nmo_plugin_tensor *a, const nmo_plugin_tensor *b)
{
    if (a->ndims != b->ndims) return 0;
    for (int d = 0; d < a->ndims; d++)
        if (a->dims[d] != b->dims[d]) return 0;
    return 1;
}
static inline int nmo_k_dtype_ok(int dt)
{
    return dt == NMO_PLUGIN_DT_FP32 || dt == NMO_PLUGIN_DT_BF16 || dt == NMO_PLUGIN_DT_FP16;
}
/* Every tensor packed, all of one dtype among fp32/bf16/fp16, counts as expected. */
static inline int nmo_k_basic_ok(const nmo_plugin_args *a, int n_in, int n_out)
{
    if (!a || a->n_in != n_in || a->n_out != n_out) return 0;
    int dt = a->in[0].dtype;
    if (!nmo_k_dtype_ok(dt)) return 0;
    for (int k = 0; k < n_in; k++)
        if (a->in[k].dtype != dt || !nmo_k_packed(&a->in[k]) || a->in[k].ndims < 1) return 0;
    for (int k = 0; k < n_out; k++)
        if (a->out[k].dtype != dt || !nmo_k_packed(&a->out[k]) || a->out[k].ndims < 1) return 0;
    return 1;
}
static inline int nmo_k_aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }
/* Rows of the last dimension of tensor t. */
static inline void nmo_k_rows(const nmo_plugin_tensor *t, int64_t *rows, int64_t *n)
{
    *n = t->dims[t->ndims - 1];
    *rows = *n > 0 ? nmo_k_numel(t) / *n : 0;
}
static inline unsigned nmo_k_grid(int64_t blocks)
{
    const int64_t cap = (int64_t)1 << 20; /* grid-stride loops cover the rest */
    return (unsigned)(blocks < 1 ? 1 : blocks > cap ? cap : blocks);
}
static inline double nmo_k_param(const nmo_plugin_args *a, int i, double def)
{
    return a->param && i < a->n_param ? a->param[i] : def;
}

/* Dispatch a templated launch on the dtype of in[0]. */
#define NMO_K_DISPATCH(fn, ...)                                                          \
    switch (a->in[0].dtype) {                                                            \
    case NMO_PLUGIN_DT_FP32: return fn<float, __VA_ARGS__>(a, msg, msglen);              \
    case NMO_PLUGIN_DT_BF16: return fn<nmo_bf16, __VA_ARGS__>(a, msg, msglen);           \
    case NMO_PLUGIN_DT_FP16: return fn<nmo_fp16, __VA_ARGS__>(a, msg, msglen);           \
    default: return NMO_PLUGIN_UNSUPPORTED;                                              \
    }

/* ------------------------------------------------------------------ device helpers */

/* 16-bit accumulator mutants: the running value rounded after every step. */
enum { NMO_ACC32 = 0, NMO_ACC_BF16 = 3, NMO_ACC_FP16 = 4 };
template <int ACC16> NMO_D float nmo_acc_round(float v)
{
    if (ACC16 == NMO_ACC_BF16) return nmo_round_bf16(v);
    if (ACC16 == NMO_ACC_FP16) return nmo_round_fp16(v);
    return v;
}

/* Reduction trees of a block. */
enum {
    NMO_RED_SHFL_DOWN = 0, /* warp shuffle-down tree, warp partials in shared memory, warp 0 */
    NMO_RED_SHFL_XOR = 1,  /* xor butterfly, then the same cross-warp step */
    NMO_RED_SMEM_TREE = 2  /* classic shared-memory halving tree over all threads */
};

template <int RED, int ACC16> NMO_D float nmo_warp_sum(float v)
{
    for (int o = NMO_WARP_SIZE / 2; o >= 1; o >>= 1) {
        float u = RED == NMO_RED_SHFL_XOR ? nmo_shfl_xor(v, o) : nmo_shfl_down(v, o);
        v = nmo_acc_round<ACC16>(v + u);
    }
    return v; /* lane 0 holds the total (every lane for the butterfly) */
}

/* Sum over the BLOCK threads of a block; every thread gets the total. smem holds at
 * least BLOCK + 1 floats. ACC16 rounds every addition (mutants). */
template <int BLOCK, int RED, int ACC16> NMO_D float nmo_block_sum(float v, float *smem)
{
    const int t = (int)threadIdx.x;
    if (RED == NMO_RED_SMEM_TREE) {
        smem[t] = v;
        __syncthreads();
        for (int s = BLOCK / 2; s > 0; s >>= 1) {
            if (t < s) smem[t] = nmo_acc_round<ACC16>(smem[t] + smem[t + s]);
            __syncthreads();
        }
        float r = smem[0];
        __syncthreads();
        return r;
    }
    constexpr int NW = BLOCK / NMO_WARP_SIZE > 0 ? BLOCK / NMO_WARP_SIZE : 1;
    const int lane = t % NMO_WARP_SIZE, w = t / NMO_WARP_SIZE;
    v = nmo_warp_sum<RED, ACC16>(v);
    if (lane == 0) smem[w] = v;
    __syncthreads();
    if (w == 0) {
        float p = lane < NW ? smem[lane] : 0.0f;
        p = nmo_warp_sum<RED, ACC16>(p);
        if (lane == 0) smem[BLOCK] = p;
    }
    __syncthreads();
    float r = smem[BLOCK];
    __syncthreads();
    return r;
}

/* Max over the block (order does not change a max). WARP_ONLY (a mutant): the
 * cross-warp step is skipped and each thread gets its own warp's max. */
template <int BLOCK, int WARP_ONLY> NMO_D float nmo_block_max(float v, float *smem)
{
    const int t = (int)threadIdx.x;
    constexpr int NW = BLOCK / NMO_WARP_SIZE > 0 ? BLOCK / NMO_WARP_SIZE : 1;
    const int lane = t % NMO_WARP_SIZE, w = t / NMO_WARP_SIZE;
    v = nmo_warp_max_xor(v);
    if (WARP_ONLY) return v;
    if (lane == 0) smem[w] = v;
    __syncthreads();
    if (w == 0) {
        float p = lane < NW ? smem[lane] : nmo_u2f(0xff800000u);
        p = nmo_warp_max_xor(p);
        if (lane == 0) smem[BLOCK] = p;
    }
    __syncthreads();
    float r = smem[BLOCK];
    __syncthreads();
    return r;
}

/* A row of `len` elements at p split for VB-byte vector access: `head` scalar elements
 * up to the first VB-aligned address, `nvec` whole vectors, then a scalar tail of
 * len - head - nvec*E elements (E = VB / sizeof(T)). */
template <class T, int VB> NMO_D void nmo_row_split(const T *p, int64_t len, int64_t *head,
                                                    int64_t *nvec)
{
    constexpr int E = VB / (int)sizeof(T);
    const uintptr_t a = (uintptr_t)p;
    int64_t h = (int64_t)(((uintptr_t)VB - (a % (uintptr_t)VB)) % (uintptr_t)VB) / (int64_t)sizeof(T);
    if (h > len) h = len;
    *head = h;
    *nvec = (len - h) / E;
}
template <class T, int VB> NMO_D nmo_vecb<VB> nmo_ld(const T *p)
{
    return *reinterpret_cast<const nmo_vecb<VB> *>(p);
}
template <class T, int VB> NMO_D void nmo_st(T *p, const nmo_vecb<VB> &v)
{
    *reinterpret_cast<nmo_vecb<VB> *>(p) = v;
}
template <class T> NMO_D float nmo_ldf(const T *p) { return nmo_ty<T>::to_f(*p); }
template <class T> NMO_D void nmo_stf(T *p, float v, bool rz) { *p = nmo_ty<T>::store(v, rz); }

/* ------------------------------------------------------------------ row helpers (new ops) */

/* Row groups: one block per row (G_BLOCK) or one warp per row (G_WARP). */
enum { NMO_G_BLOCK = 0, NMO_G_WARP = 1 };

/* Sum / max over the threads of a row group; every thread of the group gets the result. */
template <int GROUP, int BLOCK, int RED, int ACC16> NMO_D float nmo_grp_sum(float v, float *smem)
{
    if (GROUP == NMO_G_BLOCK) return nmo_block_sum<BLOCK, RED, ACC16>(v, smem);
    float s = nmo_warp_sum<RED, ACC16>(v);
    return RED == NMO_RED_SHFL_XOR ? s : nmo_shfl(s, 0);
}
template <int GROUP, int BLOCK> NMO_D float nmo_grp_max(float v, float *smem)
{
    if (GROUP == NMO_G_BLOCK) return nmo_block_max<BLOCK, 0>(v, smem);
    return nmo_warp_max_xor(v);
}

/* Visit the part of a row [0, n) at p that thread t of NT handles: a scalar head up to
 * the first VB-aligned address of p, whole VB-byte vectors, a scalar tail. f(j, cnt):
 * cnt == E (VB / sizeof(T)) elements starting at j (p + j VB-aligned), or cnt == 1. */
template <class T, int VB, class F> NMO_D void nmo_row_visit(const T *p, int64_t n, int t, int NT, F &&f)
{
    constexpr int E = VB / (int)sizeof(T);
    int64_t head, nvec;
    nmo_row_split<T, VB>(p, n, &head, &nvec);
    if (t < head) f((int64_t)t, 1);
    for (int64_t v = t; v < nvec; v += NT) f(head + v * E, E);
    for (int64_t j = head + nvec * E + t; j < n; j += NT) f(j, 1);
}
/* The vectors of the row at p that thread t of NT keeps in registers: v = t + i NT for
 * i < CACHE, those below the row's vector count. REG: the caller checked that the row is
 * whole VB-aligned vectors (no scalar head). The row kernels call it one row ahead
 * (prefetch) or at the row itself. */
template <class T, int VB, int CACHE, int REG = 0>
NMO_D void nmo_ld_row_cache(const T *p, int64_t n, int t, int NT, nmo_vecb<VB> *c)
{
    constexpr int E = VB / (int)sizeof(T);
    int64_t head = 0, nvec = n / E;
    if (!REG) nmo_row_split<T, VB>(p, n, &head, &nvec);
#pragma unroll
    for (int i = 0; i < CACHE; i++) {
        const int64_t v = t + (int64_t)i * NT;
        if (v < nvec) c[i] = nmo_ld<T, VB>(p + head + v * E);
    }
}
/* cnt (E or 1) elements of p at j into o[]: one vector load when p + j is VB-aligned,
 * scalar loads otherwise (arrays that do not share the row's alignment, e.g. w[N]). */
template <class T, int VB> NMO_D void nmo_ld_chunk(const T *p, int64_t j, int cnt, float *o)
{
    constexpr int E = VB / (int)sizeof(T);
    if (cnt == E && ((uintptr_t)(p + j) % (uintptr_t)VB) == 0) {
        const nmo_vecb<VB> v = nmo_ld<T, VB>(p + j);
#pragma unroll
        for (int e = 0; e < E; e++) o[e] = nmo_ty<T>::lane(v.w, e);
    } else {
        for (int e = 0; e < cnt; e++) o[e] = nmo_ldf(p + j + e);
    }
}
template <class T, int VB> NMO_D void nmo_st_chunk(T *p, int64_t j, int cnt, const float *o, bool rz)
{
    constexpr int E = VB / (int)sizeof(T);
    if (cnt == E && ((uintptr_t)(p + j) % (uintptr_t)VB) == 0) {
        nmo_vecb<VB> v;
#pragma unroll
        for (int e = 0; e < E; e++) nmo_ty<T>::set_lane(v.w, e, o[e], rz);
        nmo_st<T, VB>(p + j, v);
    } else {
        for (int e = 0; e < cnt; e++) nmo_stf(p + j + e, o[e], rz);
    }
}
/* A class label stored as an fp32 value: its index, or -1 for ignore_index / a value
 * that is not a class of [0, V) (refs/cand/smx_util.h nmo_sf_label). */
NMO_D int64_t nmo_label(float v, int64_t V, float ignore)
{
    if (v == ignore || !(v >= 0.0f) || v >= (float)V) return -1;
    const int64_t y = (int64_t)v; /* in range: the conversion is defined */
    return (float)y == v ? y : -1;
}
/* Row geometry of a launch: threads per row, this thread's index in its row group, the
 * first row and the row step of a grid-stride loop. */
template <int GROUP, int BLOCK> struct nmo_rowgeo {
    int nt, t;
    int64_t r0, rstep;
    NMO_D nmo_rowgeo()
    {
        nt = GROUP == NMO_G_BLOCK ? BLOCK : NMO_WARP_SIZE;
        t = GROUP == NMO_G_BLOCK ? (int)threadIdx.x : (int)threadIdx.x % NMO_WARP_SIZE;
        const int64_t rpb = GROUP == NMO_G_BLOCK ? 1 : BLOCK / NMO_WARP_SIZE;
        r0 = (int64_t)blockIdx.x * rpb + (GROUP == NMO_G_BLOCK ? 0 : (int)threadIdx.x / NMO_WARP_SIZE);
        rstep = (int64_t)gridDim.x * rpb;
    }
};
/* Blocks of a row-group launch over `rows` rows (host). */
template <int GROUP, int BLOCK> static inline unsigned nmo_k_row_grid(int64_t rows)
{
    if (GROUP == NMO_G_BLOCK) return nmo_k_grid(rows);
    const int64_t rpb = BLOCK / nmo_k_warp_size();
    return nmo_k_grid((rows + rpb - 1) / rpb);
}
/* Tensor k packed with dtype dt and the given dims count (>= 1). */
static inline int nmo_k_tensor_ok(const nmo_plugin_tensor *t, int dt)
{
    return t->dtype == dt && nmo_k_packed(t) && t->ndims >= 1;
}

/* ------------------------------------------------------------------ reduction geometry */

/* The reduction geometry a row-group launch declares (issue 17: plugin ABI 2's geometry
 * callback; the model and its bound: oracle/sum_geom.c). Derived once here for every
 * kernel that reduces a row with nmo_row_visit's order (or the same head / vectors / tail
 * loops) and nmo_grp_sum / nmo_block_sum / nmo_warp_sum: a row of n terms is reduced by
 * one row group of NT threads, a block (NT = BLOCK) or one warp (32 lanes on NVIDIA, 64
 * on CDNA: 32 is the fewer, so the longer runs). Thread t folds in order, in one fp32
 * accumulator, at most one scalar head element, the VB-byte vectors t, t + NT, ... of
 * E = VB / (element size) terms each and at most one scalar tail element: a run of
 * <= E ceil(ceil(n / E) / NT) + 2 terms. The group sum: a warp tree of depth
 * log2(warp) <= 6, then for a block warp 0's tree over the warp partials (<= 6 more):
 * depth <= 12; NMO_RED_SMEM_TREE halves over all BLOCK threads: depth log2(BLOCK). parts
 * > 1: that many row partials added in any order afterwards (a loss over rows). NT <=
 * 2^depth and the run >= n / NT, so every row fits. Returns 1 with the plan text. */
static inline int nmo_k_row_geometry(const nmo_plugin_tensor *x, char *text, size_t len, int group, int block, int vb,
                                     int red, int64_t parts)
{
    int64_t rows, n;
    nmo_k_rows(x, &rows, &n);
    if (rows < 1 || n < 1 || len == 0) return 0;
    const int64_t es = x->dtype == NMO_PLUGIN_DT_FP32 ? 4 : 2;
    const int64_t e = vb / es > 0 ? vb / es : 1;
    const int64_t nt = group == NMO_G_BLOCK ? block : 32;
    const int64_t nv = (n + e - 1) / e;
    const int64_t b = e * ((nv + nt - 1) / nt) + 2;
    int d = 12;
    if (group == NMO_G_WARP) d = 6;
    else if (red == NMO_RED_SMEM_TREE)
        for (d = 0; ((int64_t)1 << d) < block; d++) {}
    if (parts > 1) snprintf(text, len, "sum=blocked:%lld:%d:%lld", (long long)b, d, (long long)parts);
    else snprintf(text, len, "sum=blocked:%lld:%d", (long long)b, d);
    return 1;
}
/* A row kernel's geometry callback: rows are independent (no partials across rows). */
template <int GROUP, int BLOCK, int VB, int RED> int nmo_k_row_geom(const nmo_plugin_args *a, char *text, size_t len)
{
    return nmo_k_row_geometry(&a->in[0], text, len, GROUP, BLOCK, VB, RED, 1);
}
/* fname_geo for a kernel defined by a K macro whose arguments start GROUP, BLOCK, VB, RED */
#define NMO_K_ROW_GEO(fname, group, block, vb, red, ...)                                 \
    __attribute__((unused)) static int fname##_geo(const nmo_plugin_args *a, char *text, size_t len) \
    {                                                                                    \
        return nmo_k_row_geom<group, block, vb, red>(a, text, len);                      \
    }

#endif
