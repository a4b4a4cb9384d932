/* numoracle: CPU candidates for gelu — emulations of GPU GELU kernels, both forms
 * (param approximate: 0 erf, 1 tanh).
 *
 *   in  x[...]   dtype plan->in;   out y[...]   dtype plan->out
 *
 * Rounding points (fp32; constants as float): erf form: x*RN(1/sqrt2) or x/RN(sqrt2),
 * erff (emulation <= 1.5 ulp), 1 + e, the products with 0.5 and x (or x*fmaf(0.5, e,
 * 0.5)); tanh form: x*x*x, x + kappa*x^3 (fmaf as nvcc contracts it, or not) or the
 * factored 1 + kappa*x*x, the products with beta, tanhf (emulation <= 1.5 ulp), 1 + th,
 * the products with 0.5 and x; the store into plan->out.
 *   torch: PyTorch GeluCUDAKernelImpl (x*0.5f)*(1+erff(x*kAlpha));
 *          tanh: kBeta*fmaf(kKappa, x^3, x), 0.5f*x*(1+tanhf(inner)).
 *   jax:   erf: (x*(erff(x/sqrt2f)+1))/2; tanh: vLLM gelu_fast
 *          0.79788456f*x*(1+0.044715f*x*x) without FMA.
 *   fma:   erf: x*fmaf(0.5f, e, 0.5f); tanh: x*(kBeta*fmaf(kKappa, x*x, 1)),
 *          x*fmaf(0.5f, th, 0.5f).
 *   liger: erf: 0.5f*x*(1+erff(x*kAlpha)) left to right; tanh: Liger's
 *          sqrt_2_over_pi*(a + 0.044715*a^3) without FMA, 0.5*a*(1+th). */
#include "pw_cand_util.h"

enum { G_TORCH, G_JAX, G_FMA, G_LIGER, G_M_SWAP, G_M_CONST, G_M_NO_HALF };

static const float g_alpha = 0.70710678118654752440f, g_sqrt2 = 1.41421356237309504880f,
                   g_beta = 0.79788456080286535588f, g_kappa = 0.044715f;

static float gelu_erf(int kind, float x) {
    switch (kind) {
    case G_JAX: return (x * (pw_erff(x / g_sqrt2) + 1.0f)) / 2.0f;
    case G_FMA: return x * fmaf(0.5f, pw_erff(x * g_alpha), 0.5f);
    case G_LIGER: return 0.5f * x * (1.0f + pw_erff(x * g_alpha));
    case G_M_CONST: return (x * 0.5f) * (1.0f + pw_erff(x * g_sqrt2));
    case G_M_NO_HALF: return x * (1.0f + pw_erff(x * g_alpha));
    case G_TORCH:
    default: return (x * 0.5f) * (1.0f + pw_erff(x * g_alpha));
    }
}

static float gelu_tanh(int kind, float x) {
    switch (kind) {
    case G_JAX: {
        float t = 1.0f + 0.044715f * x * x;
        return 0.5f * x * (1.0f + pw_tanhf(0.79788456f * x * t));
    }
    case G_FMA: {
        float inner = x * (g_beta * fmaf(g_kappa, x * x, 1.0f));
        return x * fmaf(0.5f, pw_tanhf(inner), 0.5f);
    }
    case G_LIGER: {
        float a3 = x * x * x;
        float arg = g_beta * (x + g_kappa * a3);
        return 0.5f * x * (1.0f + pw_tanhf(arg));
    }
    case G_M_CONST: { /* beta = 2/pi: the square root forgotten */
        float inner = 0.63661977236758134308f * fmaf(g_kappa, x * x * x, x);
        return 0.5f * x * (1.0f + pw_tanhf(inner));
    }
    case G_M_NO_HALF: {
        float inner = g_beta * fmaf(g_kappa, x * x * x, x);
        return x * (1.0f + pw_tanhf(inner));
    }
    case G_TORCH:
    default: {
        float x3 = x * x * x;
        float inner = g_beta * fmaf(g_kappa, x3, x);
        return 0.5f * x * (1.0f + pw_tanhf(inner));
    }
    }
}

static void gelu_elem(int kind, const double *param, const float *in, float *out, nmo_fmt dt) {
    (void)dt;
    int approx = param[0] != 0;
    if (kind == G_M_SWAP) approx = !approx, kind = G_TORCH;
    out[0] = approx ? gelu_tanh(kind, in[0]) : gelu_erf(kind, in[0]);
}

#define GELU(fname, kind, rz) PW_CAND(fname, "gelu", 1, 1, gelu_elem, kind, rz)
GELU(gelu_torch, G_TORCH, 0)
GELU(gelu_jax, G_JAX, 0)
GELU(gelu_fma, G_FMA, 0)
GELU(gelu_liger, G_LIGER, 0)
GELU(gelu_mut_swap, G_M_SWAP, 0)
GELU(gelu_mut_const, G_M_CONST, 0)
GELU(gelu_mut_no_half, G_M_NO_HALF, 0)
GELU(gelu_mut_store_rz, G_TORCH, 1)

const nmo_cand nmo_cand_gelu[] = {
    {"gelu", "torch", 1,
     "PyTorch: erf (x*0.5)*(1+erff(x*RN(1/sqrt2))); tanh kBeta*fmaf(kKappa, x^3, x)", gelu_torch, NULL},
    {"gelu", "jax", 1,
     "erf (x*(erff(x/sqrt2)+1))/2; tanh vLLM gelu_fast 0.79788456*x*(1+0.044715*x*x), no FMA",
     gelu_jax, NULL},
    {"gelu", "fma", 1, "erf x*fmaf(0.5, e, 0.5); tanh x*(beta*fmaf(kappa, x*x, 1)), x*fmaf(0.5, th, 0.5)",
     gelu_fma, NULL},
    {"gelu", "liger", 1, "0.5*x*(1+f) left to right; tanh Liger beta*(a + kappa*a^3) without FMA",
     gelu_liger, NULL},
    {"gelu", "mut_swap", 0, "MUTANT: the other form (tanh for approximate=0, erf for 1)", gelu_mut_swap, NULL},
    {"gelu", "mut_const", 0, "MUTANT: wrong constant: erf(x*sqrt2) / tanh(2/pi*(...))", gelu_mut_const, NULL},
    {"gelu", "mut_no_half", 0, "MUTANT: the factor 0.5 dropped", gelu_mut_no_half, NULL},
    {"gelu", "mut_store_rz", 0, "MUTANT: final store truncates (RZ) instead of RNE", gelu_mut_store_rz, NULL},
};
const int nmo_cand_gelu_n = (int)(sizeof nmo_cand_gelu / sizeof nmo_cand_gelu[0]);
