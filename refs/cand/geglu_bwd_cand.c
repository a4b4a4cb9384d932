/* numoracle: CPU candidates for geglu_bwd — emulations of GEGLU (tanh gelu) backward
 * kernels.
 *
 *   in  dy[...], a[...], b[...]   dtype plan->in
 *   out da[...], db[...]          dtype plan->out
 *
 * Rounding points (fp32, constants as float): the forward recomputation (a^3, inner,
 * tanhf emulation <= 1.5 ulp, 1 + th, g), term1 = 0.5*(1 + th), 1 - th*th (FMA or
 * not), 1 + 3*kappa*a*a (3*kappa folded in double or as 3.0f*kappa; FMA or not), the
 * products 0.5*a*(1-th^2)*beta*poly in the kernel's association, term1 + term2 (FMA or
 * not), the products with dy and b; the stores into plan->out.
 *   liger:        Liger _geglu_tanh_backward_kernel with every product in fp32, no FMA:
 *                 term2 = ((0.5*a)*(1 - th*th))*(beta*(1 + ((3*0.044715)*a)*a)),
 *                 da = (dy*b)*(term1 + term2), db = dy*g
 *   torch_fused:  PyTorch GeluBackwardCUDAKernelImpl (tanh) as nvcc contracts it, then
 *                 da = dy*(b*s): inner_d = kBeta*fmaf(3.0f*kKappa, x*x, 1),
 *                 s = fmaf((0.5x)*fmaf(-th, th, 1), inner_d, 0.5*(1 + th))
 *   assoc:        term2 = (((0.5*a)*(1 - th*th))*beta)*poly, no FMA, da = (dy*s)*b,
 *                 db = (dy*a)*cdf
 *   mut_liger_triton: Liger's current kernel as Triton types it: geglu_a rounded to the
 *                 input dtype (geglu_a.to(dc.dtype)) before db = dc*geglu_a; dc*b of two
 *                 16-bit tensors computed in that dtype (one rounding RN_dt); the rest in
 *                 fp32 with Triton's mul+add contraction. Correct ONLY under an unfused
 *                 plan (--plan inter=DT): a negative control of the fused plan.
 *   mut_liger_triton_v0: the earlier Liger kernel (before the cast): db = dc*geglu_a in
 *                 fp32, dc*b still in the 16-bit dtype. Also only under inter=DT (the
 *                 reference hulls db over the rounded and the fp32 activation). */
#include "pw_cand_util.h"

enum { GB_LIGER, GB_TORCH_FUSED, GB_ASSOC, GB_LIGER_TRITON, GB_LIGER_TRITON_V0, GB_M_NO_TERM1, GB_M_OMT_LINEAR,
       GB_M_NO3, GB_M_SWAP_OUT };

static const float gb_beta = 0.79788456080286535588f, gb_kappa = 0.044715f;
static const float gb_c3a = (float)(3 * 0.044715); /* folded in double (Python/Triton) */

static void geglu_bwd_elem(int kind, const double *param, const float *in, float *out,
                           nmo_fmt dt) {
    (void)param;
    float dy = in[0], a = in[1], b = in[2], da, db;
    switch (kind) {
    case GB_TORCH_FUSED: {
        const float c3b = 3.0f * gb_kappa;
        float x_sq = a * a, x_cube = x_sq * a;
        float th = pw_tanhf(gb_beta * fmaf(gb_kappa, x_cube, a));
        float left = 0.5f * a, right = 1.0f + th;
        float left_d = 0.5f * right;
        float tanh_d = fmaf(-th, th, 1.0f);
        float inner_d = gb_beta * fmaf(c3b, x_sq, 1.0f);
        float s = fmaf(left * tanh_d, inner_d, left_d);
        da = dy * (b * s);
        db = dy * (left * right);
        break;
    }
    case GB_ASSOC: {
        float a3 = a * a * a;
        float th = pw_tanhf(gb_beta * (a + gb_kappa * a3));
        float cdf = 0.5f * (1.0f + th);
        float poly = 1.0f + gb_c3a * (a * a);
        float term2 = (((0.5f * a) * (1.0f - th * th)) * gb_beta) * poly;
        float s = cdf + term2;
        da = (dy * s) * b;
        db = (dy * a) * cdf;
        break;
    }
    case GB_LIGER_TRITON:
    case GB_LIGER_TRITON_V0: {
        float a3 = a * a * a;
        float th = pw_tanhf(gb_beta * fmaf(gb_kappa, a3, a));
        float g = 0.5f * a * (1.0f + th);
        if (kind == GB_LIGER_TRITON) g = nmo_cu_round_to(dt, g); /* geglu_a.to(dc.dtype) */
        db = dy * g;
        float term1 = 0.5f * (1.0f + th);
        float omt = fmaf(-th, th, 1.0f);
        float bp = gb_beta * fmaf(gb_c3a * a, a, 1.0f);
        float s = fmaf((0.5f * a) * omt, bp, term1);
        da = nmo_cu_round_to(dt, dy * b) * s;
        break;
    }
    default: { /* liger and its mutants */
        float a3 = a * a * a;
        float th = pw_tanhf(gb_beta * (a + gb_kappa * a3));
        float g = 0.5f * a * (1.0f + th);
        float term1 = 0.5f * (1.0f + th);
        float tanh_sq = th * th;
        float c3 = kind == GB_M_NO3 ? gb_kappa : gb_c3a;
        float omt = kind == GB_M_OMT_LINEAR ? 1.0f - th : 1.0f - tanh_sq;
        float term2 = 0.5f * a * omt * (gb_beta * (1.0f + c3 * a * a));
        float s = kind == GB_M_NO_TERM1 ? term2 : term1 + term2;
        da = dy * b * s;
        db = dy * g;
        if (kind == GB_M_SWAP_OUT) {
            float t = da;
            da = db;
            db = t;
        }
        break;
    }
    }
    out[0] = da;
    out[1] = db;
}

#define GGB(fname, kind, rz) PW_CAND(fname, "geglu_bwd", 3, 2, geglu_bwd_elem, kind, rz)
GGB(ggb_liger, GB_LIGER, 0)
GGB(ggb_torch_fused, GB_TORCH_FUSED, 0)
GGB(ggb_assoc, GB_ASSOC, 0)
GGB(ggb_liger_triton, GB_LIGER_TRITON, 0)
GGB(ggb_liger_triton_v0, GB_LIGER_TRITON_V0, 0)
GGB(ggb_mut_no_term1, GB_M_NO_TERM1, 0)
GGB(ggb_mut_omt_linear, GB_M_OMT_LINEAR, 0)
GGB(ggb_mut_no3, GB_M_NO3, 0)
GGB(ggb_mut_swap_out, GB_M_SWAP_OUT, 0)
GGB(ggb_mut_store_rz, GB_LIGER, 1)

const nmo_cand nmo_cand_geglu_bwd[] = {
    {"geglu_bwd", "liger", 1, "Liger's formula in fp32, no FMA: da = (dy*b)*(term1 + term2), db = dy*g",
     ggb_liger, NULL},
    {"geglu_bwd", "torch_fused", 1,
     "PyTorch gelu_backward (tanh) with nvcc contraction, 3.0f*kKappa; da = dy*(b*s)", ggb_torch_fused, NULL},
    {"geglu_bwd", "assoc", 1, "term2 = (((0.5a)(1-th^2))beta)poly, no FMA; da = (dy*s)*b; db = (dy*a)*cdf",
     ggb_assoc, NULL},
    {"geglu_bwd", "mut_liger_triton", 0,
     "NEGATIVE CONTROL of the fused plan: current Liger as Triton types it, geglu_a and dc*b in "
     "the 16-bit dtype; correct under --plan inter=<dtype>",
     ggb_liger_triton, "inter={dtype}"},
    {"geglu_bwd", "mut_liger_triton_v0", 0,
     "NEGATIVE CONTROL of the fused plan: earlier Liger (fp32 geglu_a), dc*b in the 16-bit "
     "dtype; correct under --plan inter=<dtype>",
     ggb_liger_triton_v0, "inter={dtype}"},
    {"geglu_bwd", "mut_no_term1", 0, "MUTANT: da misses term1 = 0.5*(1 + tanh)", ggb_mut_no_term1, NULL},
    {"geglu_bwd", "mut_omt_linear", 0, "MUTANT: 1 - tanh instead of 1 - tanh^2", ggb_mut_omt_linear, NULL},
    {"geglu_bwd", "mut_no3", 0, "MUTANT: kappa instead of 3*kappa in the inner derivative", ggb_mut_no3, NULL},
    {"geglu_bwd", "mut_swap_out", 0, "MUTANT: da and db stored to each other's buffer", ggb_mut_swap_out, NULL},
    {"geglu_bwd", "mut_store_rz", 0, "MUTANT: final stores truncate (RZ) instead of RNE", ggb_mut_store_rz, NULL},
};
const int nmo_cand_geglu_bwd_n = (int)(sizeof nmo_cand_geglu_bwd / sizeof nmo_cand_geglu_bwd[0]);
