/* numoracle HIP kernels: rope and rope_bwd (rope.hip, rope_bwd.hip).
 *
 * rope (forward): x[B,H,S,D], cos[S,D], sin[S,D] -> y[B,H,S,D]; param layout (0: NeoX
 *   rotate_half pairs (j, j+D/2), 1: GPT-J pairs (2i, 2i+1)), param base (unused: the
 *   rotary cache comes in cos/sin).  y[j] = x[j]*cos[s,j] -+ x[p(j)]*sin[s,j].
 *   Plan honoured: the dtype default, fused: refs/rope.c encloses both products rounded
 *   then added, or either product fused into an FMA with the other rounded.
 *   One thread per pair (scalar) or per vector of pairs (NeoX with D/2 a multiple of the
 *   vector width: 16-byte loads of both halves, cos and sin).
 *
/* Mutants are named after realistic bugs of such kernels (argument order, sign, layout,
 * position off by one, truncating store, the vector tail forgotten). */
#ifndef NMO_K_ROPE_COMMON_H
#define NMO_K_ROPE_COMMON_H
#include "kcommon.h"

namespace {

/* ------------------------------------------------------------------ rope */

enum : unsigned {
    RO_FMA_A = 1u, /* y = fma(u, c, RN(B)) (else both products rounded, then added) */
    RO_FMA_B = 2u, /* y = fma(v, s, RN(A)) */
};
enum : unsigned {
    ROM_SIGN = 1u << 0,    /* rotation sign flipped */
    ROM_LAYOUT = 1u << 1,  /* the other pairing (NeoX <-> GPT-J) */
    ROM_POS_OFF1 = 1u << 2, /* cos/sin of position s+1 (mod S) */
    ROM_STORE_RZ = 1u << 3,
    ROM_SWAP_CS = 1u << 4, /* cos and sin exchanged */
};

/* u*c + v*s with the variant's contraction */
template <unsigned OPT> NMO_D float rot(float u, float c, float v, float s)
{
    if (OPT & RO_FMA_A) return nmo_fmaf(u, c, nmo_mul_nc(v, s));
    if (OPT & RO_FMA_B) return nmo_fmaf(v, s, nmo_mul_nc(u, c));
    return nmo_mul_nc(u, c) + nmo_mul_nc(v, s);
}

/* One thread per pair: pairs q of all rows (row = b*H*S + h*S + s). */
template <class T, unsigned OPT, unsigned MUT, int BWD>
__global__ void __launch_bounds__(256)
    rope_pair_kernel(const T *__restrict__ x, const T *__restrict__ cs, const T *__restrict__ sn,
                     T *__restrict__ y, int64_t rows, int64_t S, int64_t D, int gptj)
{
    constexpr bool RZ = (MUT & ROM_STORE_RZ) != 0;
    const int64_t h = D / 2, npairs = rows * h, stride = (int64_t)gridDim.x * blockDim.x;
    if (MUT & ROM_LAYOUT) gptj = !gptj;
    const float sg = (MUT & ROM_SIGN) ? 1.0f : -1.0f;
    for (int64_t q = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; q < npairs; q += stride) {
        const int64_t row = q / h, i = q % h;
        int64_t s = row % S;
        if (MUT & ROM_POS_OFF1) s = (s + 1) % S;
        const int64_t j1 = gptj ? 2 * i : i, j2 = gptj ? 2 * i + 1 : i + h;
        const T *xr = x + row * D;
        const T *cr = (MUT & ROM_SWAP_CS) ? sn : cs, *sr = (MUT & ROM_SWAP_CS) ? cs : sn;
        const float x1 = nmo_ldf(xr + j1), x2 = nmo_ldf(xr + j2);
        const float c1 = nmo_ldf(cr + s * D + j1), s1 = nmo_ldf(sr + s * D + j1);
        const float c2 = nmo_ldf(cr + s * D + j2), s2 = nmo_ldf(sr + s * D + j2);
        if (BWD) { /* the transpose: dx1 = dy1*c1 + dy2*s2, dx2 = dy2*c2 - dy1*s1 */
            nmo_stf(y + row * D + j1, rot<OPT>(x1, c1, -sg * x2, s2), RZ);
            nmo_stf(y + row * D + j2, rot<OPT>(x2, c2, sg * x1, s1), RZ);
        } else {
            nmo_stf(y + row * D + j1, rot<OPT>(x1, c1, sg * x2, s1), RZ);
            nmo_stf(y + row * D + j2, rot<OPT>(x2, c2, -sg * x1, s2), RZ);
        }
    }
}

/* NeoX, one thread per VB-byte vector of the first half (D/2 a multiple of E). */
template <class T, int VB, unsigned OPT, unsigned MUT, int BWD>
__global__ void __launch_bounds__(256)
    rope_vec_kernel(const T *__restrict__ x, const T *__restrict__ cs, const T *__restrict__ sn,
                    T *__restrict__ y, int64_t rows, int64_t S, int64_t D)
{
    constexpr int E = VB / (int)sizeof(T);
    constexpr bool RZ = (MUT & ROM_STORE_RZ) != 0;
    const int64_t h = D / 2, vpr = h / E, nv = rows * vpr, stride = (int64_t)gridDim.x * blockDim.x;
    const float sg = (MUT & ROM_SIGN) ? 1.0f : -1.0f;
    for (int64_t q = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; q < nv; q += stride) {
        const int64_t row = q / vpr, i0 = (q % vpr) * E;
        int64_t s = row % S;
        if (MUT & ROM_POS_OFF1) s = (s + 1) % S;
        const T *cr = (MUT & ROM_SWAP_CS) ? sn : cs, *sr = (MUT & ROM_SWAP_CS) ? cs : sn;
        const nmo_vecb<VB> x1 = nmo_ld<T, VB>(x + row * D + i0), x2 = nmo_ld<T, VB>(x + row * D + i0 + h);
        const nmo_vecb<VB> c1 = nmo_ld<T, VB>(cr + s * D + i0), c2 = nmo_ld<T, VB>(cr + s * D + i0 + h);
        const nmo_vecb<VB> s1 = nmo_ld<T, VB>(sr + s * D + i0), s2 = nmo_ld<T, VB>(sr + s * D + i0 + h);
        nmo_vecb<VB> y1, y2;
#pragma unroll
        for (int e = 0; e < E; e++) {
            const float a = nmo_ty<T>::lane(x1.w, e), b = nmo_ty<T>::lane(x2.w, e);
            const float sa = nmo_ty<T>::lane(s1.w, e), sb = nmo_ty<T>::lane(s2.w, e);
            nmo_ty<T>::set_lane(y1.w, e, rot<OPT>(a, nmo_ty<T>::lane(c1.w, e), BWD ? -sg * b : sg * b, BWD ? sb : sa), RZ);
            nmo_ty<T>::set_lane(y2.w, e, rot<OPT>(b, nmo_ty<T>::lane(c2.w, e), BWD ? sg * a : -sg * a, BWD ? sa : sb), RZ);
        }
        nmo_st<T, VB>(y + row * D + i0, y1);
        nmo_st<T, VB>(y + row * D + i0 + h, y2);
    }
}

/* VEC: 16-byte NeoX path when the shape allows it, else the pair kernel. */
template <class T, int VEC, unsigned OPT, unsigned MUT, int BWD = 0>
int rope_launch(const nmo_plugin_args *a, char *msg, size_t msglen)
{
    const nmo_plugin_tensor *x = &a->in[0];
    const int64_t D = x->dims[3], S = x->dims[2], rows = nmo_k_numel(x) / D;
    const int gptj = nmo_k_param(a, 0, 0.0) != 0.0;
    constexpr int E = 16 / (int)sizeof(T);
    hipStream_t st = (hipStream_t)a->stream;
    if (VEC && !gptj && !(MUT & ROM_LAYOUT) && (D / 2) % E == 0) {
        const int64_t nv = rows * (D / 2 / E);
        nmo_launch(rope_vec_kernel<T, 16, OPT, MUT, BWD>, dim3(nmo_k_grid((nv + 255) / 256)), dim3(256), 0, st,
                   (const T *)x->data, (const T *)a->in[1].data, (const T *)a->in[2].data,
                   (T *)a->out[0].data, rows, S, D);
    } else {
        const int64_t np = rows * (D / 2);
        nmo_launch(rope_pair_kernel<T, OPT, MUT, BWD>, dim3(nmo_k_grid((np + 255) / 256)), dim3(256), 0, st,
                   (const T *)x->data, (const T *)a->in[1].data, (const T *)a->in[2].data,
                   (T *)a->out[0].data, rows, S, D, gptj);
    }
    NMO_HIP_CHECK_LAUNCH(BWD ? "rope_bwd" : "rope");
    return NMO_PLUGIN_OK;
}

int rope_supports(const nmo_plugin_args *a)
{
    if (!nmo_k_basic_ok(a, 3, 1)) return 0;
    const nmo_plugin_tensor *x = &a->in[0];
    if (x->ndims != 4 || x->dims[3] % 2 != 0) return 0;
    for (int k = 1; k < 3; k++)
        if (a->in[k].ndims != 2 || a->in[k].dims[0] != x->dims[2] || a->in[k].dims[1] != x->dims[3]) return 0;
    if (!nmo_k_same_dims(x, &a->out[0])) return 0;
    for (int k = 0; k < 3; k++)
        if (!nmo_k_aligned16(a->in[k].data)) return 0;
    return nmo_k_aligned16(a->out[0].data);
}

#define RO_K(fname, ...)                                                                 \
    int fname(const nmo_plugin_args *a, char *msg, size_t msglen)                        \
    {                                                                                    \
        NMO_K_DISPATCH(rope_launch, __VA_ARGS__)                                         \
    }
} // namespace

#endif
