/* numoracle: CPU candidates for silu — emulations of GPU SiLU kernels.
 *
 *   in  x[...]   dtype plan->in;   out y[...]   dtype plan->out
 *
 * Rounding points (fp32): exp(-x) (CUDA expf emulation <= 1.5 ulp, or correctly
 * rounded), 1 + e, then x/(1+e) (PyTorch) or 1/(1+e) and x*s (Liger/Triton
 * x*sigmoid(x)), or a library sigmoid (<= 1.5 ulp) times x; the store into plan->out.
 * The first correct variant (torch) is the default; mutants are the default kernel with
 * one bug each. mut_triton is Liger's silu as Triton compiles it (tl.exp = ex2.approx of
 * RN(-x log2 e), '/' = div.full): its exp error grows with |x| (54 ulps at x = -70 on the
 * H200), so it is a mutant of the default plan and correct under fn=triton. */
#include "pw_cand_util.h"

enum { S_TORCH, S_LIGER, S_LIBSIG, S_TORCH_CR, S_M_SIGN, S_M_NO_X, S_M_TANH, S_M_SIG16, S_TRITON };

static void silu_elem(int kind, const double *param, const float *in, float *out, nmo_fmt dt) {
    (void)param, (void)dt;
    float x = in[0], y;
    switch (kind) {
    case S_LIGER: y = x * (1.0f / (1.0f + nmo_cu_expf(-x))); break;
    case S_LIBSIG: y = x * pw_sigmoidf(x); break;
    case S_TORCH_CR: y = x / (1.0f + nmo_cu_expf_cr(-x)); break;
    case S_M_SIGN: y = x / (1.0f + nmo_cu_expf(x)); break;
    case S_M_NO_X: y = 1.0f / (1.0f + nmo_cu_expf(-x)); break;
    case S_M_TANH: y = x * (0.5f * (1.0f + pw_tanhf(x))); break;
    case S_M_SIG16: y = x * nmo_cu_round_bf16(1.0f / (1.0f + nmo_cu_expf(-x))); break;
    case S_TRITON: y = x * nmo_cu_div_full(1.0f, 1.0f + nmo_cu_tl_exp(-x)); break;
    case S_TORCH:
    default: y = x / (1.0f + nmo_cu_expf(-x)); break;
    }
    out[0] = y;
}

#define SILU(fname, kind, rz) PW_CAND(fname, "silu", 1, 1, silu_elem, kind, rz)
SILU(silu_torch, S_TORCH, 0)
SILU(silu_liger, S_LIGER, 0)
SILU(silu_libsig, S_LIBSIG, 0)
SILU(silu_torch_cr, S_TORCH_CR, 0)
SILU(silu_mut_sign, S_M_SIGN, 0)
SILU(silu_mut_no_x, S_M_NO_X, 0)
SILU(silu_mut_tanh, S_M_TANH, 0)
SILU(silu_mut_sig_bf16, S_M_SIG16, 0)
SILU(silu_mut_store_rz, S_TORCH, 1)
SILU(silu_mut_triton, S_TRITON, 0)

const nmo_cand nmo_cand_silu[] = {
    {"silu", "torch", 1, "PyTorch: x / (1 + expf(-x)), CUDA expf", silu_torch, NULL},
    {"silu", "liger", 1, "Liger/Triton: x * sigmoid(x), sigmoid = 1/(1 + expf(-x))", silu_liger, NULL},
    {"silu", "libsig", 1, "x * sigmoidf(x) with a library sigmoid within 1.5 ulp", silu_libsig, NULL},
    {"silu", "torch_cr", 1, "x / (1 + exp(-x)) with a correctly rounded expf", silu_torch_cr, NULL},
    {"silu", "mut_sign", 0, "MUTANT: sign error, x / (1 + expf(x))", silu_mut_sign, NULL},
    {"silu", "mut_no_x", 0, "MUTANT: returns sigmoid(x) (the factor x dropped)", silu_mut_no_x, NULL},
    {"silu", "mut_tanh", 0, "MUTANT: sigmoid as 0.5*(1 + tanh(x)) (should be tanh(x/2))",
     silu_mut_tanh, NULL},
    {"silu", "mut_sig_bf16", 0, "MUTANT: sigmoid held in bf16 before the multiply",
     silu_mut_sig_bf16, NULL},
    {"silu", "mut_store_rz", 0, "MUTANT: final store truncates (RZ) instead of RNE", silu_mut_store_rz, NULL},
    {"silu", "mut_triton", 0,
     "Liger/Triton as compiled: x * div.full(1, 1 + ex2.approx(RN(-x log2 e))) (correct under fn=triton)",
     silu_mut_triton, "fn=triton"},
};
const int nmo_cand_silu_n = (int)(sizeof nmo_cand_silu / sizeof nmo_cand_silu[0]);
