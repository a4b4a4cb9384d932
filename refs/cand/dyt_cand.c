/* numoracle: CPU candidates for dyt — y[..., j] = w[j] * tanh(alpha * x[..., j]) + b[j].
 *
 *   in  x[..., N], w[N], b[N]   dtype plan->in;   out y[..., N]   dtype plan->out
 *
 * Rounding points (fp32): alpha as a float, z = alpha*x, tanhf(z) (CUDA tanhf emulation
 * <= 1.5 ulp, or correctly rounded), then w*th + b fused (fmaf) or not; the store into
 * plan->out. The runner is pw_cand_cols (pw_cand_util.h): the element function below is
 * all an operator with per-column parameters needs. */
#include "pw_cand_util.h"

enum { D_FMA, D_MULADD, D_TANH_CR, D_M_NO_ALPHA, D_M_SWAP_WB, D_M_TH_BF16 };

static void dyt_elem(int kind, const pw_col_ctx *cx, const float *in, float *out) {
    float x = in[0], w = in[1], b = in[2], alpha = (float)cx->param[0];
    float z = kind == D_M_NO_ALPHA ? x : alpha * x;
    float th = kind == D_TANH_CR ? pw_tanhf_cr(z) : pw_tanhf(z);
    if (kind == D_M_TH_BF16) th = nmo_cu_round_bf16(th);
    switch (kind) {
    case D_MULADD: out[0] = w * th + b; break;
    case D_M_SWAP_WB: out[0] = fmaf(b, th, w); break;
    default: out[0] = fmaf(w, th, b); break;
    }
}

#define DYT(fname, kind, col, rz) PW_COLS_CAND(fname, "dyt", 3, 1, dyt_elem, kind, col, rz)
DYT(dyt_fma, D_FMA, PW_COL_J, 0)
DYT(dyt_muladd, D_MULADD, PW_COL_J, 0)
DYT(dyt_tanh_cr, D_TANH_CR, PW_COL_J, 0)
DYT(dyt_mut_no_alpha, D_M_NO_ALPHA, PW_COL_J, 0)
DYT(dyt_mut_swap_wb, D_M_SWAP_WB, PW_COL_J, 0)
DYT(dyt_mut_bcast_row, D_FMA, PW_COL_ROW, 0)
DYT(dyt_mut_th_bf16, D_M_TH_BF16, PW_COL_J, 0)
DYT(dyt_mut_store_rz, D_FMA, PW_COL_J, 1)

const nmo_cand nmo_cand_dyt[] = {
    {"dyt", "fma", 1, "fmaf(w, tanhf(alpha*x), b), CUDA tanhf (Triton/compiled)", dyt_fma, NULL},
    {"dyt", "muladd", 1, "w * tanhf(alpha*x) + b, two roundings (no contraction)", dyt_muladd, NULL},
    {"dyt", "tanh_cr", 1, "fmaf(w, tanh(alpha*x), b) with a correctly rounded tanhf", dyt_tanh_cr, NULL},
    {"dyt", "mut_no_alpha", 0, "MUTANT: alpha dropped, tanh(x)", dyt_mut_no_alpha, NULL},
    {"dyt", "mut_swap_wb", 0, "MUTANT: weight and bias swapped, b*tanh(alpha*x) + w", dyt_mut_swap_wb, NULL},
    {"dyt", "mut_bcast_row", 0, "MUTANT: wrong broadcast stride, w and b indexed by the row",
     dyt_mut_bcast_row, NULL},
    {"dyt", "mut_th_bf16", 0, "MUTANT: tanh held in bf16 before the multiply", dyt_mut_th_bf16, NULL},
    {"dyt", "mut_store_rz", 0, "MUTANT: final store truncates (RZ) instead of RNE", dyt_mut_store_rz, NULL},
};
const int nmo_cand_dyt_n = (int)(sizeof nmo_cand_dyt / sizeof nmo_cand_dyt[0]);
