/* numoracle: CPU candidates for geglu — emulations of GEGLU (tanh gelu) forward kernels.
 *
 *   in  a[...], b[...]   dtype plan->in;   out y[...]   dtype plan->out
 *
 * Rounding points (fp32, constants as float): a*a*a or the factored 1 + kappa*a*a
 * (FMA or not), the products with beta, tanhf (emulation <= 1.5 ulp), 1 + th, the
 * products with 0.5, a and b in the kernel's association; the store into plan->out.
 *   liger:     Liger _geglu_tanh_forward_kernel before its cast to b's dtype: a3 = a*a*a,
 *              tanh_arg = sqrt_2_over_pi*(a + 0.044715*a3), 0.5*a*(1 + th) * b, no FMA
 *   vllm:      vLLM gelu_fast factored form 0.79788456f*a*fmaf(0.044715f*a, a, 1),
 *              (a*(0.5f*(1 + th)))*b
 *   torch_fma: kBeta*fmaf(kKappa, a^3, a), (a*b)*fmaf(0.5f, th, 0.5f)
 *   mut_eager: PyTorch `F.gelu(a, approximate="tanh") * b`: the gelu stored in the input
 *              dtype, then the multiply; numerically also Liger's current forward kernel
 *              (geglu_a.cast(b.dtype) * b, a 16-bit product). Correct ONLY under an
 *              unfused plan (--plan inter=DT): a negative control of the fused plan. */
#include "pw_cand_util.h"

enum { E_LIGER, E_VLLM, E_TORCH_FMA, E_EAGER, E_M_SQUARE, E_M_ERF, E_M_NO_HALF, E_M_BETA };

static const float e_beta = 0.79788456080286535588f, e_kappa = 0.044715f;

static void geglu_elem(int kind, const double *param, const float *in, float *out, nmo_fmt dt) {
    (void)param;
    float a = in[0], b = in[1], y;
    switch (kind) {
    case E_VLLM: {
        float t = fmaf(0.044715f * a, a, 1.0f);
        float th = pw_tanhf((0.79788456f * a) * t);
        y = (a * (0.5f * (1.0f + th))) * b;
        break;
    }
    case E_TORCH_FMA: {
        float th = pw_tanhf(e_beta * fmaf(e_kappa, a * a * a, a));
        y = (a * b) * fmaf(0.5f, th, 0.5f);
        break;
    }
    case E_EAGER: {
        float th = pw_tanhf(e_beta * fmaf(e_kappa, a * a * a, a));
        y = nmo_cu_round_to(dt, 0.5f * a * (1.0f + th)) * b;
        break;
    }
    case E_M_SQUARE: { /* a*a where a^3 belongs */
        float th = pw_tanhf(e_beta * (a + e_kappa * (a * a)));
        y = 0.5f * a * (1.0f + th) * b;
        break;
    }
    case E_M_ERF: /* the exact-erf gelu in a tanh-gelu op */
        y = 0.5f * a * (1.0f + pw_erff(a * 0.70710678118654752440f)) * b;
        break;
    case E_M_NO_HALF: {
        float th = pw_tanhf(e_beta * (a + e_kappa * (a * a * a)));
        y = a * (1.0f + th) * b;
        break;
    }
    case E_M_BETA: { /* sqrt(2/pi) typed as 2/pi */
        float th = pw_tanhf(0.63661977236758134308f * (a + e_kappa * (a * a * a)));
        y = 0.5f * a * (1.0f + th) * b;
        break;
    }
    case E_LIGER:
    default: {
        float a3 = a * a * a;
        float th = pw_tanhf(e_beta * (a + e_kappa * a3));
        float g = 0.5f * a * (1.0f + th);
        y = g * b;
        break;
    }
    }
    out[0] = y;
}

#define GEGLU(fname, kind, rz) PW_CAND(fname, "geglu", 2, 1, geglu_elem, kind, rz)
GEGLU(geglu_liger, E_LIGER, 0)
GEGLU(geglu_vllm, E_VLLM, 0)
GEGLU(geglu_torch_fma, E_TORCH_FMA, 0)
GEGLU(geglu_eager, E_EAGER, 0)
GEGLU(geglu_mut_square, E_M_SQUARE, 0)
GEGLU(geglu_mut_erf, E_M_ERF, 0)
GEGLU(geglu_mut_no_half, E_M_NO_HALF, 0)
GEGLU(geglu_mut_beta, E_M_BETA, 0)
GEGLU(geglu_mut_store_rz, E_LIGER, 1)

const nmo_cand nmo_cand_geglu[] = {
    {"geglu", "liger", 1, "Liger: beta*(a + kappa*a^3), 0.5*a*(1+tanh)*b, no FMA", geglu_liger, NULL},
    {"geglu", "vllm", 1, "vLLM gelu_fast: 0.79788456*a*fmaf(0.044715*a, a, 1), (a*cdf)*b", geglu_vllm, NULL},
    {"geglu", "torch_fma", 1, "kBeta*fmaf(kKappa, a^3, a), (a*b)*fmaf(0.5, th, 0.5)", geglu_torch_fma, NULL},
    {"geglu", "mut_eager", 0,
     "NEGATIVE CONTROL of the fused plan: eager F.gelu(a, 'tanh')*b (and current Liger), gelu "
     "stored in the input dtype; correct under --plan inter=<dtype>",
     geglu_eager, "inter={dtype}"},
    {"geglu", "mut_square", 0, "MUTANT: a*a instead of a^3 inside the tanh", geglu_mut_square, NULL},
    {"geglu", "mut_erf", 0, "MUTANT: exact-erf gelu in the tanh-gelu op", geglu_mut_erf, NULL},
    {"geglu", "mut_no_half", 0, "MUTANT: the factor 0.5 dropped", geglu_mut_no_half, NULL},
    {"geglu", "mut_beta", 0, "MUTANT: beta = 2/pi (square root forgotten)", geglu_mut_beta, NULL},
    {"geglu", "mut_store_rz", 0, "MUTANT: final store truncates (RZ) instead of RNE", geglu_mut_store_rz, NULL},
};
const int nmo_cand_geglu_n = (int)(sizeof nmo_cand_geglu / sizeof nmo_cand_geglu[0]);
