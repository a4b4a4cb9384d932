/* numoracle: CPU candidates for swiglu_bwd — emulations of SwiGLU backward kernels.
 *
 *   in  dy[...], a[...], b[...]   dtype plan->in
 *   out da[...], db[...]          dtype plan->out
 *
 * Rounding points (fp32): the sigmoid (1/(1 + expf(-a)) with the CUDA expf emulation,
 * or a library sigmoid), silu = a*sig, 1 - sig, the derivative in the kernel's form
 * (Liger silu*(1-sig) + sig, FMA or not; PyTorch/Unsloth sig*(1 + a*(1-sig))), the
 * products with dy and b in the kernel's association; the stores into plan->out.
 *   liger:       Liger _swiglu_backward_kernel: db = dy*silu,
 *                da = (dy*(silu*(1-sig) + sig))*b, no FMA
 *   liger_fma:   the same with the derivative contracted: fmaf(silu, 1-sig, sig)
 *   inductor:    g = dy*b, da = (g*sig)*fmaf(a, 1-sig, 1), db = (dy*a)*sig, library sigmoid
 *   torch_fused: da = dy*(b*(sig*fmaf(a, 1-sig, 1))), db = dy*(a/(1 + expf(-a)))
 *   mut_unsloth: Unsloth's _DWf_DW_dfg_kernel: f = RN_dt(sig*a), db = dy*f,
 *                dg = RN_dt(dy*b), da = (dg*sig)*(1 + a*(1-sig)). Correct ONLY under an
 *                unfused plan (--plan inter=DT): a negative control of the fused plan. */
#include "pw_cand_util.h"

enum { B_LIGER, B_LIGER_FMA, B_INDUCTOR, B_TORCH_FUSED, B_UNSLOTH, B_M_DSIG, B_M_NO_B, B_M_DB_SIG,
       B_M_SWAP_OUT };

static void swiglu_bwd_elem(int kind, const double *param, const float *in, float *out,
                            nmo_fmt dt) {
    (void)param;
    float dy = in[0], a = in[1], b = in[2], da, db;
    float sig = 1.0f / (1.0f + nmo_cu_expf(-a));
    float silu = a * sig;
    switch (kind) {
    case B_LIGER_FMA:
        db = dy * silu;
        da = (dy * fmaf(silu, 1.0f - sig, sig)) * b;
        break;
    case B_INDUCTOR: {
        float s = pw_sigmoidf(a);
        float g = dy * b;
        da = (g * s) * fmaf(a, 1.0f - s, 1.0f);
        db = (dy * a) * s;
        break;
    }
    case B_TORCH_FUSED:
        da = dy * (b * (sig * fmaf(a, 1.0f - sig, 1.0f)));
        db = dy * (a / (1.0f + nmo_cu_expf(-a)));
        break;
    case B_UNSLOTH: {
        float f = nmo_cu_round_to(dt, sig * a);
        db = dy * f;
        float dg = nmo_cu_round_to(dt, dy * b);
        da = (dg * sig) * (1.0f + a * (1.0f - sig));
        break;
    }
    case B_M_DSIG: /* derivative of the sigmoid, not of silu */
        db = dy * silu;
        da = (dy * (sig * (1.0f - sig))) * b;
        break;
    case B_M_NO_B:
        db = dy * silu;
        da = dy * (silu * (1.0f - sig) + sig);
        break;
    case B_M_DB_SIG:
        db = dy * sig;
        da = (dy * (silu * (1.0f - sig) + sig)) * b;
        break;
    case B_M_SWAP_OUT: /* da and db written to each other's buffer */
        da = dy * silu;
        db = (dy * (silu * (1.0f - sig) + sig)) * b;
        break;
    case B_LIGER:
    default:
        db = dy * silu;
        da = (dy * (silu * (1.0f - sig) + sig)) * b;
        break;
    }
    out[0] = da;
    out[1] = db;
}

#define SWB(fname, kind, rz) PW_CAND(fname, "swiglu_bwd", 3, 2, swiglu_bwd_elem, kind, rz)
SWB(swb_liger, B_LIGER, 0)
SWB(swb_liger_fma, B_LIGER_FMA, 0)
SWB(swb_inductor, B_INDUCTOR, 0)
SWB(swb_torch_fused, B_TORCH_FUSED, 0)
SWB(swb_unsloth, B_UNSLOTH, 0)
SWB(swb_mut_dsig, B_M_DSIG, 0)
SWB(swb_mut_no_b, B_M_NO_B, 0)
SWB(swb_mut_db_sig, B_M_DB_SIG, 0)
SWB(swb_mut_swap_out, B_M_SWAP_OUT, 0)
SWB(swb_mut_store_rz, B_LIGER, 1)

const nmo_cand nmo_cand_swiglu_bwd[] = {
    {"swiglu_bwd", "liger", 1, "Liger: db = dy*silu, da = (dy*(silu*(1-sig)+sig))*b, no FMA", swb_liger, NULL},
    {"swiglu_bwd", "liger_fma", 1, "Liger with the derivative contracted: fmaf(silu, 1-sig, sig)",
     swb_liger_fma, NULL},
    {"swiglu_bwd", "inductor", 1, "g = dy*b; da = (g*sig)*fmaf(a, 1-sig, 1); db = (dy*a)*sig; library sigmoid",
     swb_inductor, NULL},
    {"swiglu_bwd", "torch_fused", 1, "da = dy*(b*(sig*fmaf(a, 1-sig, 1))); db = dy*(a/(1+expf(-a)))",
     swb_torch_fused, NULL},
    {"swiglu_bwd", "mut_unsloth", 0,
     "NEGATIVE CONTROL of the fused plan: Unsloth, f and dy*b rounded to the input dtype; "
     "correct under --plan inter=<dtype>",
     swb_unsloth, "inter={dtype}"},
    {"swiglu_bwd", "mut_dsig", 0, "MUTANT: derivative of the sigmoid sig*(1-sig) instead of silu'",
     swb_mut_dsig, NULL},
    {"swiglu_bwd", "mut_no_b", 0, "MUTANT: da misses the factor b", swb_mut_no_b, NULL},
    {"swiglu_bwd", "mut_db_sig", 0, "MUTANT: db = dy*sigmoid(a) instead of dy*silu(a)", swb_mut_db_sig, NULL},
    {"swiglu_bwd", "mut_swap_out", 0, "MUTANT: da and db stored to each other's buffer", swb_mut_swap_out, NULL},
    {"swiglu_bwd", "mut_store_rz", 0, "MUTANT: final stores truncate (RZ) instead of RNE", swb_mut_store_rz, NULL},
};
const int nmo_cand_swiglu_bwd_n = (int)(sizeof nmo_cand_swiglu_bwd / sizeof nmo_cand_swiglu_bwd[0]);
