/* numoracle HIP kernels: swiglu_bwd and geglu_bwd (swiglu_bwd.hip, geglu_bwd.hip): one
 * kernel template, KIND 0 swiglu, 1 geglu. */
#ifndef NMO_K_GLU_BWD_COMMON_H
#define NMO_K_GLU_BWD_COMMON_H
#include "kcommon.h"

namespace {

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
} // namespace

#endif
