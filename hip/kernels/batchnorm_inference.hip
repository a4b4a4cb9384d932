/* numoracle HIP kernels: batchnorm_inference (NCHW or NHWC, per-channel statistics).
 *
/* Mutants are named after realistic bugs of such kernels (argument order, sign, layout,
 * position off by one, truncating store, the vector tail forgotten). */
#include "kcommon.h"

namespace {

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
