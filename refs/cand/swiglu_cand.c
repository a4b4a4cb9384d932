/* numoracle: CPU candidates for swiglu — emulations of fused SwiGLU kernels and of the
 * eager two-kernel PyTorch form.
 *
 *   in  a[...], b[...]   dtype plan->in;   out y[...]   dtype plan->out
 *
 * Rounding points (fp32): exp(-a) (CUDA expf emulation), 1 + e, the sigmoid (1/(1+e),
 * or a library sigmoid), then the kernel's products/division in its association; the
 * store into plan->out.
 *   liger:    Liger _swiglu_forward_kernel: (a * sigmoid(a)) * b
 *   inductor: (a / (1 + expf(-a))) * b
 *   ab_first: (a * b) * sigmoidf(a), library sigmoid
 *   mut_eager: PyTorch `F.silu(a) * b`: silu stored in the input dtype (RNE), then the
 *             multiply kernel. Correct ONLY under an unfused plan (--plan inter=DT with
 *             DT the input dtype); under the fused default plan it is outside the plan
 *             (registered as a negative control: tests/test_ops_pointwise.c runs it
 *             under inter=DT). */
#include "pw_cand_util.h"

enum { W_LIGER, W_INDUCTOR, W_AB_FIRST, W_EAGER, W_M_SWAP, W_M_NO_SIG, W_M_SIG_ONLY };

static inline float sw_sig(float a) { return 1.0f / (1.0f + nmo_cu_expf(-a)); }

static void swiglu_elem(int kind, const double *param, const float *in, float *out, nmo_fmt dt) {
    (void)param;
    float a = in[0], b = in[1], y;
    switch (kind) {
    case W_INDUCTOR: y = (a / (1.0f + nmo_cu_expf(-a))) * b; break;
    case W_AB_FIRST: y = (a * b) * pw_sigmoidf(a); break;
    case W_EAGER: y = nmo_cu_round_to(dt, a / (1.0f + nmo_cu_expf(-a))) * b; break;
    case W_M_SWAP: y = (b * sw_sig(b)) * a; break;
    case W_M_NO_SIG: y = a * b; break;
    case W_M_SIG_ONLY: y = sw_sig(a) * b; break;
    case W_LIGER:
    default: y = (a * sw_sig(a)) * b; break;
    }
    out[0] = y;
}

#define SWIGLU(fname, kind, rz) PW_CAND(fname, "swiglu", 2, 1, swiglu_elem, kind, rz)
SWIGLU(swiglu_liger, W_LIGER, 0)
SWIGLU(swiglu_inductor, W_INDUCTOR, 0)
SWIGLU(swiglu_ab_first, W_AB_FIRST, 0)
SWIGLU(swiglu_eager, W_EAGER, 0)
SWIGLU(swiglu_mut_swap, W_M_SWAP, 0)
SWIGLU(swiglu_mut_no_sig, W_M_NO_SIG, 0)
SWIGLU(swiglu_mut_sig_only, W_M_SIG_ONLY, 0)
SWIGLU(swiglu_mut_store_rz, W_LIGER, 1)

const nmo_cand nmo_cand_swiglu[] = {
    {"swiglu", "liger", 1, "Liger: (a * sigmoid(a)) * b, sigmoid = 1/(1 + expf(-a))", swiglu_liger, NULL},
    {"swiglu", "inductor", 1, "(a / (1 + expf(-a))) * b", swiglu_inductor, NULL},
    {"swiglu", "ab_first", 1, "(a * b) * sigmoidf(a), library sigmoid within 1.5 ulp", swiglu_ab_first, NULL},
    {"swiglu", "mut_eager", 0,
     "NEGATIVE CONTROL of the fused plan: eager F.silu(a)*b, silu stored in the input dtype; "
     "correct under --plan inter=<dtype>",
     swiglu_eager, "inter={dtype}"},
    {"swiglu", "mut_swap", 0, "MUTANT: gate and up swapped, silu(b) * a", swiglu_mut_swap, NULL},
    {"swiglu", "mut_no_sig", 0, "MUTANT: sigmoid dropped, a * b", swiglu_mut_no_sig, NULL},
    {"swiglu", "mut_sig_only", 0, "MUTANT: sigmoid(a) * b (the factor a dropped)", swiglu_mut_sig_only, NULL},
    {"swiglu", "mut_store_rz", 0, "MUTANT: final store truncates (RZ) instead of RNE", swiglu_mut_store_rz, NULL},
};
const int nmo_cand_swiglu_n = (int)(sizeof nmo_cand_swiglu / sizeof nmo_cand_swiglu[0]);
