/* numoracle: CPU candidates for hardswish — y = x * relu6(x + 3) / 6.
 *
 *   in  x[...]   dtype plan->in;   out y[...]   dtype plan->out
 *
 * Rounding points (fp32): x + 3, the exact clamps, then (x*c)/6 (PyTorch), x*c*(1/6f),
 * x*(c/6), or XNNPACK's x * clamp(x*(1/6f) + 0.5f, 0, 1) fused or not; the store into
 * plan->out. Mutants: a clamp dropped, the shift dropped, the Keras hard sigmoid. */
#include "pw_cand_util.h"

enum { H_TORCH, H_RCP, H_INNER, H_XNN_FMA, H_XNN, H_M_NO_HI, H_M_NO_LO, H_M_NO_SHIFT, H_M_KERAS };

static float hs_clamp(float v, float lo, float hi) { return fminf(fmaxf(v, lo), hi); }

static void hardswish_elem(int kind, const double *param, const float *in, float *out, nmo_fmt dt) {
    (void)param, (void)dt;
    float x = in[0], c = hs_clamp(x + 3.0f, 0.0f, 6.0f);
    switch (kind) {
    case H_RCP: out[0] = x * c * (1.0f / 6.0f); break;
    case H_INNER: out[0] = x * (c / 6.0f); break;
    case H_XNN_FMA: out[0] = x * hs_clamp(fmaf(x, 1.0f / 6.0f, 0.5f), 0.0f, 1.0f); break;
    case H_XNN: out[0] = x * hs_clamp(x * (1.0f / 6.0f) + 0.5f, 0.0f, 1.0f); break;
    case H_M_NO_HI: out[0] = x * fmaxf(x + 3.0f, 0.0f) / 6.0f; break;
    case H_M_NO_LO: out[0] = x * fminf(x + 3.0f, 6.0f) / 6.0f; break;
    case H_M_NO_SHIFT: out[0] = x * hs_clamp(x, 0.0f, 6.0f) / 6.0f; break;
    case H_M_KERAS: out[0] = x * hs_clamp(0.2f * x + 0.5f, 0.0f, 1.0f); break;
    case H_TORCH:
    default: out[0] = x * c / 6.0f; break;
    }
}

#define HS(fname, kind, rz) PW_CAND(fname, "hardswish", 1, 1, hardswish_elem, kind, rz)
HS(hs_torch, H_TORCH, 0)
HS(hs_rcp, H_RCP, 0)
HS(hs_inner, H_INNER, 0)
HS(hs_xnn_fma, H_XNN_FMA, 0)
HS(hs_xnn, H_XNN, 0)
HS(hs_mut_no_hi, H_M_NO_HI, 0)
HS(hs_mut_no_lo, H_M_NO_LO, 0)
HS(hs_mut_no_shift, H_M_NO_SHIFT, 0)
HS(hs_mut_keras, H_M_KERAS, 0)
HS(hs_mut_store_rz, H_TORCH, 1)

const nmo_cand nmo_cand_hardswish[] = {
    {"hardswish", "torch", 1, "PyTorch: x * min(max(x + 3, 0), 6) / 6", hs_torch, NULL},
    {"hardswish", "rcp", 1, "x * clamp(x + 3, 0, 6) * (1/6f)", hs_rcp, NULL},
    {"hardswish", "inner", 1, "x * (clamp(x + 3, 0, 6) / 6)", hs_inner, NULL},
    {"hardswish", "xnn_fma", 1, "XNNPACK: x * clamp(fmaf(x, 1/6f, 0.5f), 0, 1)", hs_xnn_fma, NULL},
    {"hardswish", "xnn", 1, "XNNPACK without FMA: x * clamp(x*(1/6f) + 0.5f, 0, 1)", hs_xnn, NULL},
    {"hardswish", "mut_no_hi", 0, "MUTANT: upper clamp at 6 dropped", hs_mut_no_hi, NULL},
    {"hardswish", "mut_no_lo", 0, "MUTANT: lower clamp at 0 dropped", hs_mut_no_lo, NULL},
    {"hardswish", "mut_no_shift", 0, "MUTANT: x * relu6(x) / 6 (the +3 dropped)", hs_mut_no_shift, NULL},
    {"hardswish", "mut_keras", 0, "MUTANT: Keras hard sigmoid, x * clamp(0.2x + 0.5, 0, 1)", hs_mut_keras, NULL},
    {"hardswish", "mut_store_rz", 0, "MUTANT: final store truncates (RZ) instead of RNE", hs_mut_store_rz, NULL},
};
const int nmo_cand_hardswish_n = (int)(sizeof nmo_cand_hardswish / sizeof nmo_cand_hardswish[0]);
