/* numoracle HIP kernels: elementwise operators.
 *
 * swiglu (Liger-Kernel / Unsloth forward): y = silu(a) * b, a, b, y of one shape.
 *   Plan honoured: the dtype default with NMO_HIP_FN_PLAN, fused (inter = compute):
 *   refs/swiglu.c encloses sigmoid as 1/(1+expf(-a)), silu = a*sig or a/(1+expf(-a)),
 *   and y = a*sig*b in any association, silu*b, or (a*b)/(1+expf(-a)).
 *   Grid-stride over 16-byte (or 8-byte) vectors of the flattened tensors, scalar tail.
 *
 * rope (forward): x[B,H,S,D], cos[S,D], sin[S,D] -> y[B,H,S,D]; param layout (0: NeoX
 *   rotate_half pairs (j, j+D/2), 1: GPT-J pairs (2i, 2i+1)), param base (unused: the
 *   rotary cache comes in cos/sin).  y[j] = x[j]*cos[s,j] -+ x[p(j)]*sin[s,j].
 *   Plan honoured: the dtype default, fused: refs/rope.c encloses both products rounded
 *   then added, or either product fused into an FMA with the other rounded.
 *   One thread per pair (scalar) or per vector of pairs (NeoX with D/2 a multiple of the
 *   vector width: 16-byte loads of both halves, cos and sin).
 *
 * geglu: y = gelu_tanh(a) * b, the same structure as swiglu (see geglu_f).
 *
 * Mutants are named after realistic bugs of such kernels (argument order, sign, layout,
 * position off by one, truncating store, the vector tail forgotten). */
#include "kcommon.h"

namespace {

/* ------------------------------------------------------------------ swiglu */

enum : unsigned {
    SW_DIV = 1u,      /* silu = a / (1 + expf(-a)) (else a * sig, sig = 1/(1+expf(-a))) */
    SW_AB_FIRST = 2u, /* y = (a*b) / (1 + expf(-a)) */
};
enum : unsigned {
    SWM_SWAP_AB = 1u << 0,   /* silu(b) * a */
    SWM_SIG_SIGN = 1u << 1,  /* sigmoid(-a): 1/(1+expf(a)) */
    SWM_EAGER = 1u << 2,     /* silu rounded to the storage dtype before * b (unfused) */
    SWM_STORE_RZ = 1u << 3,  /* truncating store */
    SWM_TAIL_SKIP = 1u << 4, /* the scalar tail after the last whole vector is skipped */
};

template <class T, unsigned OPT, unsigned MUT> NMO_D float swiglu_f(float a, float b)
{
    if (MUT & SWM_SWAP_AB) {
        const float t = a;
        a = b;
        b = t;
    }
    const float den = nmo_add_rn(1.0f, nmo_expf((MUT & SWM_SIG_SIGN) ? a : -a));
    if (OPT & SW_AB_FIRST) return nmo_mul_nc(a, b) / den;
    float silu = (OPT & SW_DIV) ? a / den : nmo_mul_nc(a, 1.0f / den);
    if (MUT & SWM_EAGER) silu = nmo_ty<T>::round(silu);
    return nmo_mul_nc(silu, b);
}

template <class T, int VB, unsigned OPT, unsigned MUT>
__global__ void __launch_bounds__(256)
    swiglu_kernel(const T *__restrict__ a, const T *__restrict__ b, T *__restrict__ y, int64_t n)
{
    constexpr int E = VB / (int)sizeof(T);
    constexpr bool RZ = (MUT & SWM_STORE_RZ) != 0;
    const int64_t nvec = n / E, stride = (int64_t)gridDim.x * blockDim.x;
    const int64_t gid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (int64_t v = gid; v < nvec; v += stride) {
        const nmo_vecb<VB> av = nmo_ld<T, VB>(a + v * E), bv = nmo_ld<T, VB>(b + v * E);
        nmo_vecb<VB> yv;
#pragma unroll
        for (int e = 0; e < E; e++)
            nmo_ty<T>::set_lane(yv.w, e, swiglu_f<T, OPT, MUT>(nmo_ty<T>::lane(av.w, e), nmo_ty<T>::lane(bv.w, e)), RZ);
        nmo_st<T, VB>(y + v * E, yv);
    }
    const int64_t tail_end = (MUT & SWM_TAIL_SKIP) ? nvec * E : n; /* the mutant forgets the tail */
    for (int64_t j = nvec * E + gid; j < tail_end; j += stride)
        nmo_stf(y + j, swiglu_f<T, OPT, MUT>(nmo_ldf(a + j), nmo_ldf(b + j)), RZ);
}

template <class T, int VB, unsigned OPT, unsigned MUT>
int swiglu_launch(const nmo_plugin_args *a, char *msg, size_t msglen)
{
    const int64_t n = nmo_k_numel(&a->in[0]);
    constexpr int E = VB / (int)sizeof(T);
    const int64_t work = n / E + 1;
    nmo_launch(swiglu_kernel<T, VB, OPT, MUT>, dim3(nmo_k_grid((work + 255) / 256)), dim3(256), 0,
               (hipStream_t)a->stream, (const T *)a->in[0].data, (const T *)a->in[1].data,
               (T *)a->out[0].data, n);
    NMO_HIP_CHECK_LAUNCH("swiglu");
    return NMO_PLUGIN_OK;
}

int swiglu_supports(const nmo_plugin_args *a)
{
    if (!nmo_k_basic_ok(a, 2, 1)) return 0;
    if (!nmo_k_same_dims(&a->in[0], &a->in[1]) || !nmo_k_same_dims(&a->in[0], &a->out[0])) return 0;
    return nmo_k_aligned16(a->in[0].data) && nmo_k_aligned16(a->in[1].data) &&
           nmo_k_aligned16(a->out[0].data);
}

#define SW_K(fname, ...)                                                                 \
    int fname(const nmo_plugin_args *a, char *msg, size_t msglen)                        \
    {                                                                                    \
        NMO_K_DISPATCH(swiglu_launch, __VA_ARGS__)                                       \
    }
SW_K(sw_vec16, 16, SW_DIV, 0u)
SW_K(sw_vec8_sig, 8, 0u, 0u)
SW_K(sw_vec16_ab, 16, SW_AB_FIRST, 0u)
SW_K(sw_mut_swap_ab, 16, SW_DIV, SWM_SWAP_AB)
SW_K(sw_mut_sig_sign, 16, SW_DIV, SWM_SIG_SIGN)
SW_K(sw_mut_eager, 16, SW_DIV, SWM_EAGER)
SW_K(sw_mut_store_rz, 16, SW_DIV, SWM_STORE_RZ)
SW_K(sw_mut_tail_skip, 16, SW_DIV, SWM_TAIL_SKIP)

/* ------------------------------------------------------------------ geglu */

/* geglu (Liger-Kernel forward): y = gelu_tanh(a) * b, gelu_tanh(x) =
 * 0.5*x*(1 + tanhf(beta*(x + kappa*x^3))), beta = RN(sqrt(2/pi)), kappa = RN(0.044715).
 * refs/geglu.c (refs/pw_common.h pw_gelu_tanh) encloses x3 = (x*x)*x, inner =
 * beta*fma(kappa, x3, x) | beta*x*(1 + kappa*x*x) (factor FMA or not), tanhf of plan
 * accuracy, t = 1 + th, g = 0.5*x*t | x*cdf, y = g*b | a*cdf*b (fused plan). */
enum : unsigned { GG_FACTORED = 1u /* inner = (beta*x)*fma(kappa*x, x, 1), y = (a*cdf)*b */ };
enum : unsigned {
    GGM_NO_CUBIC = 1u << 0, /* inner = beta*x */
    GGM_ERF = 1u << 1,      /* exact gelu 0.5*x*(1+erf(x/sqrt2)) instead of the tanh form */
    GGM_NO_HALF = 1u << 2,  /* the 0.5 factor dropped */
    GGM_STORE_RZ = 1u << 3,
    GGM_SWAP_AB = 1u << 4,
};

template <class T, unsigned OPT, unsigned MUT> NMO_D float geglu_f(float a, float b)
{
    const float beta = 0.7978845608028654f, kappa = 0.044715f;
    if (MUT & GGM_SWAP_AB) {
        const float t = a;
        a = b;
        b = t;
    }
    const float h = (MUT & GGM_NO_HALF) ? 1.0f : 0.5f;
    if (MUT & GGM_ERF) {
        const float t = nmo_add_rn(1.0f, nmo_erff(nmo_mul_nc(a, 0.7071067811865476f)));
        return nmo_mul_nc(nmo_mul_nc(nmo_mul_nc(h, a), t), b);
    }
    float inner;
    if (MUT & GGM_NO_CUBIC) inner = nmo_mul_nc(beta, a);
    else if (OPT & GG_FACTORED) inner = nmo_mul_nc(nmo_mul_nc(beta, a), nmo_fmaf(nmo_mul_nc(kappa, a), a, 1.0f));
    else inner = nmo_mul_nc(beta, nmo_fmaf(kappa, nmo_mul_nc(nmo_mul_nc(a, a), a), a));
    const float t = nmo_add_rn(1.0f, nmo_tanhf(inner));
    if (OPT & GG_FACTORED) {
        const float cdf = nmo_mul_nc(h, t);
        return nmo_mul_nc(nmo_mul_nc(a, cdf), b);
    }
    return nmo_mul_nc(nmo_mul_nc(nmo_mul_nc(h, a), t), b);
}

template <class T, int VB, unsigned OPT, unsigned MUT>
__global__ void __launch_bounds__(256)
    geglu_kernel(const T *__restrict__ a, const T *__restrict__ b, T *__restrict__ y, int64_t n)
{
    constexpr int E = VB / (int)sizeof(T);
    constexpr bool RZ = (MUT & GGM_STORE_RZ) != 0;
    const int64_t nvec = n / E, stride = (int64_t)gridDim.x * blockDim.x;
    const int64_t gid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (int64_t v = gid; v < nvec; v += stride) {
        const nmo_vecb<VB> av = nmo_ld<T, VB>(a + v * E), bv = nmo_ld<T, VB>(b + v * E);
        nmo_vecb<VB> yv;
#pragma unroll
        for (int e = 0; e < E; e++)
            nmo_ty<T>::set_lane(yv.w, e, geglu_f<T, OPT, MUT>(nmo_ty<T>::lane(av.w, e), nmo_ty<T>::lane(bv.w, e)), RZ);
        nmo_st<T, VB>(y + v * E, yv);
    }
    for (int64_t j = nvec * E + gid; j < n; j += stride)
        nmo_stf(y + j, geglu_f<T, OPT, MUT>(nmo_ldf(a + j), nmo_ldf(b + j)), RZ);
}

template <class T, int VB, unsigned OPT, unsigned MUT>
int geglu_launch(const nmo_plugin_args *a, char *msg, size_t msglen)
{
    const int64_t n = nmo_k_numel(&a->in[0]);
    constexpr int E = VB / (int)sizeof(T);
    const int64_t work = n / E + 1;
    nmo_launch(geglu_kernel<T, VB, OPT, MUT>, dim3(nmo_k_grid((work + 255) / 256)), dim3(256), 0,
               (hipStream_t)a->stream, (const T *)a->in[0].data, (const T *)a->in[1].data,
               (T *)a->out[0].data, n);
    NMO_HIP_CHECK_LAUNCH("geglu");
    return NMO_PLUGIN_OK;
}

#define GG_K(fname, ...)                                                                 \
    int fname(const nmo_plugin_args *a, char *msg, size_t msglen)                        \
    {                                                                                    \
        NMO_K_DISPATCH(geglu_launch, __VA_ARGS__)                                        \
    }
GG_K(gg_vec16, 16, 0u, 0u)
GG_K(gg_vec8_factored, 8, GG_FACTORED, 0u)
GG_K(gg_mut_no_cubic, 16, 0u, GGM_NO_CUBIC)
GG_K(gg_mut_erf, 16, 0u, GGM_ERF)
GG_K(gg_mut_no_half, 16, 0u, GGM_NO_HALF)
GG_K(gg_mut_store_rz, 16, 0u, GGM_STORE_RZ)
GG_K(gg_mut_swap_ab, 16, 0u, GGM_SWAP_AB)

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
RO_K(ro_vec16, 1, RO_FMA_A, 0u)
RO_K(ro_pairs, 0, 0u, 0u)
RO_K(ro_pairs_fmab, 0, RO_FMA_B, 0u)
RO_K(ro_mut_sign, 1, RO_FMA_A, ROM_SIGN)
RO_K(ro_mut_layout, 1, RO_FMA_A, ROM_LAYOUT)
RO_K(ro_mut_pos_off1, 1, RO_FMA_A, ROM_POS_OFF1)
RO_K(ro_mut_store_rz, 1, RO_FMA_A, ROM_STORE_RZ)
RO_K(ro_mut_swap_cs, 1, RO_FMA_A, ROM_SWAP_CS)
/* rope_bwd: the same kernels, transposed rotation */
RO_K(rb_vec16, 1, RO_FMA_A, 0u, 1)
RO_K(rb_pairs, 0, 0u, 0u, 1)
RO_K(rb_pairs_fmab, 0, RO_FMA_B, 0u, 1)
RO_K(rb_mut_sign, 1, RO_FMA_A, ROM_SIGN, 1)
RO_K(rb_mut_layout, 1, RO_FMA_A, ROM_LAYOUT, 1)
RO_K(rb_mut_pos_off1, 1, RO_FMA_A, ROM_POS_OFF1, 1)
RO_K(rb_mut_store_rz, 1, RO_FMA_A, ROM_STORE_RZ, 1)
RO_K(rb_mut_swap_cs, 1, RO_FMA_A, ROM_SWAP_CS, 1)

/* ------------------------------------------------------------------ swiglu_bwd, geglu_bwd */

/* swiglu_bwd (refs/swiglu_bwd.c, fused plan): sig = 1/(1 + expf(-a)), silu = a*sig,
 *   F 0 (Liger):       db = dy*silu, da = (dy*(RN(silu*(1-sig)) + sig))*b
 *   F 1 (Liger, FMA):  da = (dy*fmaf(silu, 1-sig, sig))*b
 *   F 2 (PyTorch):     da = dy*(b*(sig*fmaf(a, 1-sig, 1))), db = dy*(a/(1 + expf(-a)))
 * geglu_bwd (refs/geglu_bwd.c): th = tanhf(beta*(a + kappa*a^3)),
 *   F 0 (Liger):       s = 0.5(1+th) + ((0.5a)*(1 - th*th))*(beta*(1 + (c3*a)*a)),
 *                      da = (dy*b)*s, db = dy*((0.5a)*(1+th))
 *   F 1 (PyTorch):     th of beta*fmaf(kappa, a^3, a); s = fmaf((0.5a)*fmaf(-th, th, 1),
 *                      beta*fmaf(3*kappa, a*a, 1), 0.5*(1+th)); da = dy*(b*s), db = dy*((0.5a)*(1+th))
 *   F 2 (assoc):       s = cdf + (((0.5a)*(1 - th*th))*beta)*(1 + c3*(a*a)); da = (dy*s)*b,
 *                      db = (dy*a)*cdf
 * with c3 = RN(3*0.044715) (folded in double) or 3.0f*kappa (both in the hull). */
enum : unsigned {
    GB_DSIG = 1u << 0,      /* swiglu: derivative of the sigmoid, not of silu */
    GB_NO_B = 1u << 1,      /* da misses b */
    GB_DB_SIG = 1u << 2,    /* swiglu: db = dy*sig */
    GB_SWAP_OUT = 1u << 3,  /* da and db exchanged */
    GB_STORE_RZ = 1u << 4,  /* truncating stores */
    GB_EAGER = 1u << 5,     /* activation and dy*b rounded to the storage dtype (unfused) */
    GB_NO_TERM1 = 1u << 6,  /* geglu: s without the cdf term */
    GB_OMT_LINEAR = 1u << 7, /* geglu: 1 - th instead of 1 - th^2 */
    GB_NO3 = 1u << 8,       /* geglu: kappa instead of 3*kappa */
};

template <class T, int KIND, int F, unsigned MUT> NMO_D void glu_bwd_f(float dy, float a, float b, float &da, float &db)
{
    if (KIND == 0) { /* swiglu */
        const float den = nmo_add_rn(1.0f, nmo_expf(-a)), sig = 1.0f / den;
        float silu = nmo_mul_nc(a, sig);
        const float omt = nmo_sub_rn(1.0f, sig);
        if (MUT & GB_EAGER) {
            silu = nmo_ty<T>::round(silu);
            db = nmo_mul_nc(dy, silu);
            const float dg = nmo_ty<T>::round(nmo_mul_nc(dy, b));
            da = nmo_mul_nc(nmo_mul_nc(dg, sig), nmo_add_rn(1.0f, nmo_mul_nc(a, omt)));
            return;
        }
        if (F == 2) {
            da = nmo_mul_nc(dy, nmo_mul_nc(b, nmo_mul_nc(sig, nmo_fmaf(a, omt, 1.0f))));
            db = nmo_mul_nc(dy, a / den);
            return;
        }
        float d;
        if (MUT & GB_DSIG) d = nmo_mul_nc(sig, omt);
        else if (F == 1) d = nmo_fmaf(silu, omt, sig);
        else d = nmo_add_rn(nmo_mul_nc(silu, omt), sig);
        da = (MUT & GB_NO_B) ? nmo_mul_nc(dy, d) : nmo_mul_nc(nmo_mul_nc(dy, d), b);
        db = nmo_mul_nc(dy, (MUT & GB_DB_SIG) ? sig : silu);
    } else { /* geglu */
        const float beta = 0.79788456080286535588f, kappa = 0.044715f;
        const float c3a = (float)(3 * 0.044715), c3b = nmo_mul_nc(3.0f, kappa);
        const float ha = nmo_mul_nc(0.5f, a);
        if (F == 1) {
            const float xsq = nmo_mul_nc(a, a), xc = nmo_mul_nc(xsq, a);
            const float th = nmo_tanhf(nmo_mul_nc(beta, nmo_fmaf(kappa, xc, a)));
            const float right = nmo_add_rn(1.0f, th), left_d = nmo_mul_nc(0.5f, right);
            const float s = nmo_fmaf(nmo_mul_nc(ha, nmo_fmaf(-th, th, 1.0f)), nmo_mul_nc(beta, nmo_fmaf(c3b, xsq, 1.0f)),
                                     left_d);
            da = nmo_mul_nc(dy, nmo_mul_nc(b, s));
            db = nmo_mul_nc(dy, nmo_mul_nc(ha, right));
            return;
        }
        const float a3 = nmo_mul_nc(nmo_mul_nc(a, a), a);
        const float th = nmo_tanhf(nmo_mul_nc(beta, nmo_add_rn(a, nmo_mul_nc(kappa, a3))));
        const float opt = nmo_add_rn(1.0f, th), cdf = nmo_mul_nc(0.5f, opt);
        float g = nmo_mul_nc(ha, opt);
        const float omt = (MUT & GB_OMT_LINEAR) ? nmo_sub_rn(1.0f, th) : nmo_sub_rn(1.0f, nmo_mul_nc(th, th));
        const float c3 = (MUT & GB_NO3) ? kappa : c3a;
        if (F == 2) {
            const float poly = nmo_add_rn(1.0f, nmo_mul_nc(c3, nmo_mul_nc(a, a)));
            const float s = nmo_add_rn(cdf, nmo_mul_nc(nmo_mul_nc(nmo_mul_nc(ha, omt), beta), poly));
            da = nmo_mul_nc(nmo_mul_nc(dy, s), b);
            db = nmo_mul_nc(nmo_mul_nc(dy, a), cdf);
            return;
        }
        const float t2 = nmo_mul_nc(nmo_mul_nc(ha, omt),
                                    nmo_mul_nc(beta, nmo_add_rn(1.0f, nmo_mul_nc(nmo_mul_nc(c3, a), a))));
        const float s = (MUT & GB_NO_TERM1) ? t2 : nmo_add_rn(cdf, t2);
        if (MUT & GB_EAGER) {
            g = nmo_ty<T>::round(g);
            da = nmo_mul_nc(nmo_ty<T>::round(nmo_mul_nc(dy, b)), s);
        } else {
            da = (MUT & GB_NO_B) ? nmo_mul_nc(dy, s) : nmo_mul_nc(nmo_mul_nc(dy, b), s);
        }
        db = nmo_mul_nc(dy, g);
    }
    if (MUT & GB_SWAP_OUT) {
        const float t = da;
        da = db;
        db = t;
    }
}

template <class T, int VB, int KIND, int F, unsigned MUT>
__global__ void __launch_bounds__(256)
    glu_bwd_kernel(const T *__restrict__ dy, const T *__restrict__ a, const T *__restrict__ b, T *__restrict__ da,
                   T *__restrict__ db, int64_t n)
{
    constexpr int E = VB / (int)sizeof(T);
    constexpr bool RZ = (MUT & GB_STORE_RZ) != 0;
    const int64_t nvec = n / E, stride = (int64_t)gridDim.x * blockDim.x;
    const int64_t gid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (int64_t v = gid; v < nvec; v += stride) {
        const nmo_vecb<VB> dv = nmo_ld<T, VB>(dy + v * E), av = nmo_ld<T, VB>(a + v * E), bv = nmo_ld<T, VB>(b + v * E);
        nmo_vecb<VB> ov, pv;
#pragma unroll
        for (int e = 0; e < E; e++) {
            float o, p;
            glu_bwd_f<T, KIND, F, MUT>(nmo_ty<T>::lane(dv.w, e), nmo_ty<T>::lane(av.w, e), nmo_ty<T>::lane(bv.w, e), o, p);
            nmo_ty<T>::set_lane(ov.w, e, o, RZ);
            nmo_ty<T>::set_lane(pv.w, e, p, RZ);
        }
        nmo_st<T, VB>(da + v * E, ov);
        nmo_st<T, VB>(db + v * E, pv);
    }
    for (int64_t j = nvec * E + gid; j < n; j += stride) {
        float o, p;
        glu_bwd_f<T, KIND, F, MUT>(nmo_ldf(dy + j), nmo_ldf(a + j), nmo_ldf(b + j), o, p);
        nmo_stf(da + j, o, RZ);
        nmo_stf(db + j, p, RZ);
    }
}

template <class T, int VB, int KIND, int F, unsigned MUT>
int glu_bwd_launch(const nmo_plugin_args *a, char *msg, size_t msglen)
{
    const int64_t n = nmo_k_numel(&a->in[0]);
    constexpr int E = VB / (int)sizeof(T);
    const int64_t work = n / E + 1;
    nmo_launch(glu_bwd_kernel<T, VB, KIND, F, MUT>, dim3(nmo_k_grid((work + 255) / 256)), dim3(256), 0,
               (hipStream_t)a->stream, (const T *)a->in[0].data, (const T *)a->in[1].data, (const T *)a->in[2].data,
               (T *)a->out[0].data, (T *)a->out[1].data, n);
    NMO_HIP_CHECK_LAUNCH(KIND == 0 ? "swiglu_bwd" : "geglu_bwd");
    return NMO_PLUGIN_OK;
}

int glu_bwd_supports(const nmo_plugin_args *a)
{
    if (!nmo_k_basic_ok(a, 3, 2)) return 0;
    for (int k = 1; k < 3; k++)
        if (!nmo_k_same_dims(&a->in[0], &a->in[k])) return 0;
    for (int k = 0; k < 2; k++)
        if (!nmo_k_same_dims(&a->in[0], &a->out[k]) || !nmo_k_aligned16(a->out[k].data)) return 0;
    for (int k = 0; k < 3; k++)
        if (!nmo_k_aligned16(a->in[k].data)) return 0;
    return 1;
}

#define GB_K(fname, ...)                                                                 \
    int fname(const nmo_plugin_args *a, char *msg, size_t msglen)                        \
    {                                                                                    \
        NMO_K_DISPATCH(glu_bwd_launch, __VA_ARGS__)                                      \
    }
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
GB_K(ggb_liger, 16, 1, 0, 0u)
GB_K(ggb_torch_fused_vec8, 8, 1, 1, 0u)
GB_K(ggb_assoc, 16, 1, 2, 0u)
GB_K(ggb_mut_liger_triton, 16, 1, 0, GB_EAGER)
GB_K(ggb_mut_no_term1, 16, 1, 0, GB_NO_TERM1)
GB_K(ggb_mut_omt_linear, 16, 1, 0, GB_OMT_LINEAR)
GB_K(ggb_mut_no3, 16, 1, 0, GB_NO3)
GB_K(ggb_mut_swap_out, 16, 1, 0, GB_SWAP_OUT)
GB_K(ggb_mut_store_rz, 16, 1, 0, GB_STORE_RZ)

/* ------------------------------------------------------------------ batchnorm_inference */

/* refs/batchnorm_inference.c: v = var + eps;
 *   F 0 (fused, FMA):  scale = w*rsqrtf(v), shift = fmaf(-mean, scale, b), y = fmaf(x, scale, shift)
 *   F 1 (PyTorch):     y = fmaf(RN(w*RN(x - mean)), 1/sqrtf(v), b)
 *   F 2 (division):    y = RN(RN(RN(x - mean)/sqrtf(v))*w) + b
 *   F 3 (fused plain): scale = w/sqrtf(v), shift = b - RN(mean*scale), y = RN(x*scale) + shift
 * Channel of flat element i: (i / HW) % C (NCHW) or i % C (NHWC). */
enum : unsigned {
    BN_NO_EPS = 1u << 0, BN_EPS_OUTSIDE = 1u << 1, BN_NO_SQRT = 1u << 2, BN_OTHER_LAYOUT = 1u << 3,
    BN_SHIFT_SIGN = 1u << 4,
};
template <int F, unsigned MUT>
NMO_D float bn_f(float x, float mu, float var, float w, float b, float eps)
{
    const float v = (MUT & BN_NO_EPS) ? var : nmo_add_rn(var, eps);
    float root = (MUT & BN_NO_SQRT) ? v : nmo_sqrtf(v);
    if (MUT & BN_EPS_OUTSIDE) root = nmo_add_rn(nmo_sqrtf(var), eps);
    if (F == 1) return nmo_fmaf(nmo_mul_nc(w, nmo_sub_rn(x, mu)), 1.0f / root, b);
    if (F == 2) return nmo_add_rn(nmo_mul_nc(nmo_sub_rn(x, mu) / root, w), b);
    if (F == 3) {
        const float scale = w / root, shift = nmo_sub_rn(b, nmo_mul_nc(mu, scale));
        return nmo_add_rn(nmo_mul_nc(x, scale), shift);
    }
    const float r = (MUT & (BN_NO_SQRT | BN_EPS_OUTSIDE)) ? 1.0f / root : nmo_rsqrtf(v);
    const float scale = nmo_mul_nc(w, r);
    const float shift = nmo_fmaf((MUT & BN_SHIFT_SIGN) ? mu : -mu, scale, b);
    return nmo_fmaf(x, scale, shift);
}

template <class T, int VB, int F, unsigned MUT>
__global__ void __launch_bounds__(256)
    bn_kernel(const T *__restrict__ x, const T *__restrict__ mean, const T *__restrict__ var, const T *__restrict__ w,
              const T *__restrict__ b, T *__restrict__ y, int64_t n, int64_t C, int64_t HW, int nhwc, float eps)
{
    constexpr int E = VB / (int)sizeof(T);
    if (MUT & BN_OTHER_LAYOUT) nhwc = !nhwc;
    const int64_t nvec = n / E, stride = (int64_t)gridDim.x * blockDim.x;
    const int64_t gid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (int64_t v = gid; v < nvec; v += stride) {
        const nmo_vecb<VB> xv = nmo_ld<T, VB>(x + v * E);
        nmo_vecb<VB> yv;
#pragma unroll
        for (int e = 0; e < E; e++) {
            const int64_t i = v * E + e, c = nhwc ? i % C : (i / HW) % C;
            nmo_ty<T>::set_lane(yv.w, e,
                                bn_f<F, MUT>(nmo_ty<T>::lane(xv.w, e), nmo_ldf(mean + c), nmo_ldf(var + c),
                                             nmo_ldf(w + c), nmo_ldf(b + c), eps),
                                false);
        }
        nmo_st<T, VB>(y + v * E, yv);
    }
    for (int64_t i = nvec * E + gid; i < n; i += stride) {
        const int64_t c = nhwc ? i % C : (i / HW) % C;
        nmo_stf(y + i, bn_f<F, MUT>(nmo_ldf(x + i), nmo_ldf(mean + c), nmo_ldf(var + c), nmo_ldf(w + c), nmo_ldf(b + c), eps),
                false);
    }
}

template <class T, int VB, int F, unsigned MUT>
int bn_launch(const nmo_plugin_args *a, char *msg, size_t msglen)
{
    const nmo_plugin_tensor *x = &a->in[0];
    const float eps = (float)nmo_k_param(a, 0, 1e-5);
    const int nhwc = nmo_k_param(a, 1, 0.0) == 1.0;
    const int64_t n = nmo_k_numel(x), C = nhwc ? x->dims[3] : x->dims[1];
    const int64_t HW = nhwc ? x->dims[1] * x->dims[2] : x->dims[2] * x->dims[3];
    constexpr int E = VB / (int)sizeof(T);
    const int64_t work = n / E + 1;
    nmo_launch(bn_kernel<T, VB, F, MUT>, dim3(nmo_k_grid((work + 255) / 256)), dim3(256), 0, (hipStream_t)a->stream,
               (const T *)x->data, (const T *)a->in[1].data, (const T *)a->in[2].data, (const T *)a->in[3].data,
               (const T *)a->in[4].data, (T *)a->out[0].data, n, C, HW, nhwc, eps);
    NMO_HIP_CHECK_LAUNCH("batchnorm_inference");
    return NMO_PLUGIN_OK;
}

int bn_supports(const nmo_plugin_args *a)
{
    if (!a || a->n_in != 5 || a->n_out != 1) return 0;
    const int dt = a->in[0].dtype;
    if (!nmo_k_dtype_ok(dt)) return 0;
    const nmo_plugin_tensor *x = &a->in[0];
    if (!nmo_k_tensor_ok(x, dt) || x->ndims != 4 || !nmo_k_tensor_ok(&a->out[0], dt) || !nmo_k_same_dims(x, &a->out[0]))
        return 0;
    const int nhwc = nmo_k_param(a, 1, 0.0) == 1.0;
    const int64_t C = nhwc ? x->dims[3] : x->dims[1];
    for (int k = 1; k < 5; k++)
        if (!nmo_k_tensor_ok(&a->in[k], dt) || nmo_k_numel(&a->in[k]) != C) return 0;
    return C >= 1 && nmo_k_aligned16(x->data) && nmo_k_aligned16(a->out[0].data);
}

#define BN_K(fname, ...)                                                                 \
    int fname(const nmo_plugin_args *a, char *msg, size_t msglen)                        \
    {                                                                                    \
        NMO_K_DISPATCH(bn_launch, __VA_ARGS__)                                           \
    }
BN_K(bn_fused_fma, 16, 0, 0u)
BN_K(bn_direct_vec8, 8, 1, 0u)
BN_K(bn_division, 16, 2, 0u)
BN_K(bn_fused_plain, 16, 3, 0u)
BN_K(bn_mut_no_eps, 16, 0, BN_NO_EPS)
BN_K(bn_mut_eps_outside, 16, 0, BN_EPS_OUTSIDE)
BN_K(bn_mut_no_sqrt, 16, 0, BN_NO_SQRT)
BN_K(bn_mut_other_layout, 16, 0, BN_OTHER_LAYOUT)
BN_K(bn_mut_shift_sign, 16, 0, BN_SHIFT_SIGN)

} // namespace

#if !defined(__HIP_DEVICE_COMPILE__)
#define SW_ENTRY(name, correct, desc, fn)                                                \
    {"swiglu", name, "fp32 bf16 fp16", NMO_HIP_FN_PLAN, correct, desc, swiglu_supports, fn}
NMO_HIP_TABLE(swiglu);
extern "C" const nmo_plugin_kernel nmo_hip_kernels_swiglu[] = {
    SW_ENTRY("vec16", 1, "grid-stride 16-byte vectors, silu = a/(1+expf(-a)), silu*b", sw_vec16),
    SW_ENTRY("vec8_sig", 1, "8-byte vectors, sig = 1/(1+expf(-a)), (a*sig)*b", sw_vec8_sig),
    SW_ENTRY("vec16_ab", 1, "16-byte vectors, (a*b)/(1+expf(-a))", sw_vec16_ab),
    SW_ENTRY("mut_swap_ab", 0, "MUTANT: silu(b)*a (gate and up swapped)", sw_mut_swap_ab),
    SW_ENTRY("mut_sig_sign", 0, "MUTANT: sigmoid of -a (1/(1+expf(a)))", sw_mut_sig_sign),
    SW_ENTRY("mut_eager", 0, "MUTANT: silu rounded to the storage dtype before *b (fused plan)",
             sw_mut_eager),
    SW_ENTRY("mut_store_rz", 0, "MUTANT: final store truncates (RZ) instead of RNE", sw_mut_store_rz),
    SW_ENTRY("mut_tail_skip", 0, "MUTANT: the elements after the last whole vector are never written",
             sw_mut_tail_skip),
};
extern "C" const int nmo_hip_kernels_swiglu_n =
    (int)(sizeof nmo_hip_kernels_swiglu / sizeof nmo_hip_kernels_swiglu[0]);

#define GG_ENTRY(name, correct, desc, fn)                                                \
    {"geglu", name, "fp32 bf16 fp16", NMO_HIP_FN_PLAN, correct, desc, swiglu_supports, fn}
NMO_HIP_TABLE(geglu);
extern "C" const nmo_plugin_kernel nmo_hip_kernels_geglu[] = {
    GG_ENTRY("vec16", 1, "16-byte vectors, inner = beta*fma(kappa, x^3, x), (0.5*a*(1+tanhf))*b", gg_vec16),
    GG_ENTRY("vec8_factored", 1, "8-byte vectors, inner = (beta*a)*fma(kappa*a, a, 1), (a*cdf)*b",
             gg_vec8_factored),
    GG_ENTRY("mut_no_cubic", 0, "MUTANT: the cubic term dropped, tanhf(beta*a)", gg_mut_no_cubic),
    GG_ENTRY("mut_erf", 0, "MUTANT: exact (erf) gelu instead of the tanh approximation", gg_mut_erf),
    GG_ENTRY("mut_no_half", 0, "MUTANT: the 0.5 factor dropped", gg_mut_no_half),
    GG_ENTRY("mut_store_rz", 0, "MUTANT: final store truncates (RZ) instead of RNE", gg_mut_store_rz),
    GG_ENTRY("mut_swap_ab", 0, "MUTANT: gelu(b)*a (gate and up swapped)", gg_mut_swap_ab),
};
extern "C" const int nmo_hip_kernels_geglu_n =
    (int)(sizeof nmo_hip_kernels_geglu / sizeof nmo_hip_kernels_geglu[0]);

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

#define ROB_ENTRY(name, correct, desc, fn)                                               \
    {"rope_bwd", name, "fp32 bf16 fp16", "", correct, desc, rope_supports, fn}
NMO_HIP_TABLE(rope_bwd);
extern "C" const nmo_plugin_kernel nmo_hip_kernels_rope_bwd[] = {
    ROB_ENTRY("vec16", 1,
              "NeoX: 16-byte vectors of both halves, dx1 = fma(dy1, c, RN(dy2*s)), dx2 = fma(dy2, c, -RN(dy1*s)); "
              "other shapes/layouts: pairs",
              rb_vec16),
    ROB_ENTRY("pairs", 1, "one thread per pair, both products rounded then added", rb_pairs),
    ROB_ENTRY("pairs_fmab", 1, "one thread per pair, the partner's product fused", rb_pairs_fmab),
    ROB_ENTRY("mut_sign", 0, "MUTANT: forward rotation instead of its transpose", rb_mut_sign),
    ROB_ENTRY("mut_layout", 0, "MUTANT: NeoX and GPT-J pairings confused", rb_mut_layout),
    ROB_ENTRY("mut_pos_off1", 0, "MUTANT: cos/sin of position s+1", rb_mut_pos_off1),
    ROB_ENTRY("mut_store_rz", 0, "MUTANT: final store truncates (RZ) instead of RNE", rb_mut_store_rz),
    ROB_ENTRY("mut_swap_cs", 0, "MUTANT: cos and sin exchanged", rb_mut_swap_cs),
};
extern "C" const int nmo_hip_kernels_rope_bwd_n =
    (int)(sizeof nmo_hip_kernels_rope_bwd / sizeof nmo_hip_kernels_rope_bwd[0]);

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

#define BN_ENTRY(name, correct, desc, fn)                                                \
    {"batchnorm_inference", name, "fp32 bf16 fp16", NMO_HIP_FN_PLAN, correct, desc, bn_supports, fn}
NMO_HIP_TABLE(batchnorm_inference);
extern "C" const nmo_plugin_kernel nmo_hip_kernels_batchnorm_inference[] = {
    BN_ENTRY("fused_fma", 1, "16-byte vectors, scale = w*rsqrtf(v), shift = fmaf(-mean, scale, b), fmaf(x, scale, shift)",
             bn_fused_fma),
    BN_ENTRY("direct_vec8", 1, "8-byte vectors, PyTorch: fmaf(w*(x-mean), 1/sqrtf(v), b)", bn_direct_vec8),
    BN_ENTRY("division", 1, "(x - mean)/sqrtf(v)*w + b", bn_division),
    BN_ENTRY("fused_plain", 1, "scale = w/sqrtf(v), shift = b - mean*scale, x*scale + shift (no FMA)", bn_fused_plain),
    BN_ENTRY("mut_no_eps", 0, "MUTANT: eps dropped", bn_mut_no_eps),
    BN_ENTRY("mut_eps_outside", 0, "MUTANT: eps outside the root, w/(sqrtf(var) + eps)", bn_mut_eps_outside),
    BN_ENTRY("mut_no_sqrt", 0, "MUTANT: the root forgotten, w/(var + eps)", bn_mut_no_sqrt),
    BN_ENTRY("mut_other_layout", 0, "MUTANT: channel index of the other layout (NHWC for NCHW)", bn_mut_other_layout),
    BN_ENTRY("mut_shift_sign", 0, "MUTANT: shift = b + mean*scale", bn_mut_shift_sign),
};
extern "C" const int nmo_hip_kernels_batchnorm_inference_n =
    (int)(sizeof nmo_hip_kernels_batchnorm_inference / sizeof nmo_hip_kernels_batchnorm_inference[0]);
#endif
