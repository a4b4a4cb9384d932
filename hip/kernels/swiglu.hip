/* numoracle HIP kernels: elementwise operators.
 *
 * swiglu (Liger-Kernel / Unsloth forward): y = silu(a) * b, a, b, y of one shape.
 *   Plan honoured: the dtype default with NMO_HIP_FN_PLAN, fused (inter = compute):
 *   refs/swiglu.c encloses sigmoid as 1/(1+expf(-a)), silu = a*sig or a/(1+expf(-a)),
 *   and y = a*sig*b in any association, silu*b, or (a*b)/(1+expf(-a)).
 *   Grid-stride over 16-byte (or 8-byte) vectors of the flattened tensors, scalar tail.
 *
 * Mutants are named after realistic bugs of such kernels (argument order, sign, layout,
 * position off by one, truncating store, the vector tail forgotten). */
#include "glu_common.h"

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
#endif
