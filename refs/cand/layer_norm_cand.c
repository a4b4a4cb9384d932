/* numoracle: CPU candidates for layer_norm — emulations of two-pass LayerNorm forward
 * kernels.
 *
 *   in  x[..., N], w[N], b[N]   dtype plan->in
 *   out y[..., N]               dtype plan->out
 *   param[0] eps (default 1e-5), converted to float as a kernel receives it.
 *
 * Rounding points (fp32): the sum of x and the sum of squared deviations in the
 * kernel's tree (FMA or not), mean and var (/N or *(1/N)), var + eps, rstd (rsqrtf
 * emulation or 1/sqrtf), the affine step in the kernel's form (norm_cand_util.h), the
 * store into plan->out. The first correct variant (liger) is the default; mutants are
 * the default kernel with one realistic bug each. */
#include "norm_cand_util.h"

static nmo_status ln_run(const nmo_cand_args *a, nmo_err *err, const nmo_nc_cfg *c) {
    static const char op[] = "layer_norm";
    NMO_RETURN_IF_ERR(nmo_cu_check_args(a, op, 3, 1, err));
    const nmo_tensor *x = &a->in[0];
    if (x->ndims < 1 || x->ndims > NMO_MAX_DIMS)
        return nmo_err_set(err, NMO_ERR_USAGE, "layer_norm candidate: x has %d dims", x->ndims);
    int64_t N = x->dims[x->ndims - 1];
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(x, op, "x", a->plan->in, x->ndims, x->dims, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->in[1], op, "w", a->plan->in, 1, &N, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->in[2], op, "b", a->plan->in, 1, &N, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->out[0], op, "y", a->plan->out, x->ndims, x->dims, err));
    if (N < 2) return nmo_err_set(err, NMO_ERR_USAGE, "layer_norm candidate: row length %lld too short", (long long)N);
    const float eps = (float)nmo_nc_param(a, 0, 1e-5);
    int64_t M = nmo_cu_numel(x) / N;
    float *xv = nmo_cu_load(x), *wv = nmo_cu_load(&a->in[1]), *bv = nmo_cu_load(&a->in[2]);
    float *yv = (float *)malloc((size_t)(M * N) * sizeof(float));
    float *d = (float *)malloc((size_t)N * sizeof(float));
    if (!xv || !wv || !bv || !yv || !d) {
        free(xv), free(wv), free(bv), free(yv), free(d);
        return nmo_err_set(err, NMO_ERR_NOMEM, "layer_norm candidate: out of memory");
    }
    for (int64_t i = 0; i < M; i++) nmo_nc_segment(xv + i * N, wv, bv, yv + i * N, d, N, eps, c);
    nmo_cu_store(&a->out[0], yv, nmo_cu_plan_store(a->plan));
    free(xv), free(wv), free(bv), free(yv), free(d);
    return NMO_OK;
}

#define LN_DEFAULT .red = NMO_CU_RED_PAIRWISE, .fma = 0, .mean_recip = 0, .rsqrt_emul = 1, \
                   .form = NMO_NC_DIRECT_FMA

#define LN_CAND(fname, ...)                                                          \
    static nmo_status fname(const nmo_cand_args *a, nmo_err *err) {                  \
        static const nmo_nc_cfg c = {__VA_ARGS__};                                   \
        return ln_run(a, err, &c);                                                   \
    }

LN_CAND(ln_liger, LN_DEFAULT)
LN_CAND(ln_warp32, .red = NMO_CU_RED_WARP32, .fma = 1, .mean_recip = 1, .rsqrt_emul = 1,
        .form = NMO_NC_DIRECT_DW)
LN_CAND(ln_block256_div, .red = NMO_CU_RED_BLOCK256, .fma = 1, .mean_recip = 0, .rsqrt_emul = 0,
        .form = NMO_NC_DIVISION)
LN_CAND(ln_seq_fused, .red = NMO_CU_RED_SEQ, .fma = 0, .mean_recip = 1, .rsqrt_emul = 0,
        .form = NMO_NC_FUSED)
LN_CAND(ln_vec4, .red = NMO_CU_RED_VEC4, .fma = 1, .mean_recip = 0, .rsqrt_emul = 1,
        .form = NMO_NC_DIRECT_FMA)

LN_CAND(ln_mut_naive_var, LN_DEFAULT, .naive_var = 1)
LN_CAND(ln_mut_var_n1, LN_DEFAULT, .var_n1 = 1)
LN_CAND(ln_mut_no_eps, LN_DEFAULT, .no_eps = 1)
LN_CAND(ln_mut_acc_bf16, LN_DEFAULT, .acc16 = NMO_BF16)
LN_CAND(ln_mut_skip_last, LN_DEFAULT, .skip_last = 1)
LN_CAND(ln_mut_no_center, LN_DEFAULT, .no_center = 1)

const nmo_cand nmo_cand_layer_norm[] = {
    {"layer_norm", "liger", 1,
     "Triton two-pass (Liger): tree sums, mean=s/N, var=sum(d*d)/N, rsqrtf, fmaf(d*rstd, w, b)", ln_liger, NULL},
    {"layer_norm", "warp32", 1,
     "one warp per row: strided fmaf partials + xor butterfly, *(1/N), rsqrtf, (d*w)*rstd + b",
     ln_warp32, NULL},
    {"layer_norm", "block256_div", 1,
     "256-thread block, fmaf sum of squares, /N, y = (d / sqrtf(var+eps)) * w + b", ln_block256_div, NULL},
    {"layer_norm", "seq_fused", 1,
     "one thread per row, *(1/N), 1/sqrtf, fused scale/shift: a=w*rstd, sh=fmaf(-mean,a,b), fmaf(x,a,sh)",
     ln_seq_fused, NULL},
    {"layer_norm", "vec4", 1, "float4 loads: 4 accumulators, fmaf, /N, rsqrtf, fmaf(d*rstd, w, b)", ln_vec4, NULL},
    {"layer_norm", "mut_naive_var", 0,
     "MUTANT: one-pass variance E[x^2] - mean^2 (cancels on rows with a large mean)", ln_mut_naive_var, NULL},
    {"layer_norm", "mut_var_n1", 0, "MUTANT: unbiased variance, sum of squares / (N-1)", ln_mut_var_n1, NULL},
    {"layer_norm", "mut_no_eps", 0, "MUTANT: eps dropped, rstd = rsqrtf(var)", ln_mut_no_eps, NULL},
    {"layer_norm", "mut_acc_bf16", 0, "MUTANT: both sums in bf16 accumulators", ln_mut_acc_bf16, NULL},
    {"layer_norm", "mut_skip_last", 0, "MUTANT: both reductions skip the last element (still /N)",
     ln_mut_skip_last, NULL},
    {"layer_norm", "mut_no_center", 0, "MUTANT: affine step uses x instead of x - mean", ln_mut_no_center, NULL},
};
const int nmo_cand_layer_norm_n = (int)(sizeof nmo_cand_layer_norm / sizeof nmo_cand_layer_norm[0]);
