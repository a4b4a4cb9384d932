/* numoracle HIP kernels:
 *
 * geglu: y = gelu_tanh(a) * b, the same structure as swiglu (see geglu_f).
 *
/* Mutants are named after realistic bugs of such kernels (argument order, sign, layout,
 * position off by one, truncating store, the vector tail forgotten). */
#include "glu_common.h"

namespace {

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

} // namespace

#if !defined(__HIP_DEVICE_COMPILE__)
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
#endif
