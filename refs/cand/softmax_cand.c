/* numoracle: CPU candidates for softmax — emulations of GPU softmax forward kernels
 * (softmax over the last dim; rows = product of the leading dims).
 *
 *   in  x[..., N]   dtype plan->in
 *   out y[..., N]   dtype plan->out
 *
 * Rounding points of every kernel here (all fp32; the row max is exact): d_i = x_i - m,
 * e_i = exp(d_i) (correctly rounded, glibc expf, or the CUDA expf emulation within
 * 1.5 ulp), each addition of s = sum e_i in the kernel's tree, then y_i = e_i / s (IEEE
 * division) or y_i = e_i * (1/s) (two roundings), and the final store into plan->out.
 * Three-pass kernels (max, sum, normalize) recompute or keep e_i: the value is the same.
 * Online (single-pass rescaling) softmax is NOT in the plan and is not provided here.
 *
 * The first correct variant (block256) is the default; mutants are the default kernel
 * with one realistic bug each (mut_acc_bf16 uses a sequential bf16 accumulator).
 * Deliberately absent: "max over all but the last element" and fast-math __expf. The
 * first is shift-invariant, so it only differs by exp overflow when the last element is
 * the row max (probability 1/N per row); the second's error (~|x-m|/2 fp32 ulps) is of
 * the order of the x-m subtraction error the oracle must allow: both are practically
 * equivalent mutants, which a sound oracle cannot and should not flag. */
#include "cand_util.h"

typedef enum { SM_EXP_CUDA = 0, SM_EXP_CR, SM_EXP_LIBM } sm_exp;

typedef struct {
    nmo_cu_red red;     /* reduction shape of the sum (the max uses the same lanes) */
    sm_exp exp;         /* exponential */
    int recip;          /* y = e * (1.0f/s) vs e / s */
    /* mutant knobs */
    int acc16;          /* 0: none; NMO_BF16/NMO_FP16: sequential 16-bit running sum */
    int no_max;         /* e_i = exp(x_i): no max subtraction */
    int warp_max;       /* block max stops at the warp level: warp w uses its own max */
    int exp_bf16;       /* e_i kept in a bf16 buffer between the passes */
    int skip_last;      /* sum loop bound N-1 */
    int store_rz;       /* truncating store regardless of the plan */
    int bv_parts;       /* batch-variant: the sum in nmo_cu_bv_parts(M) pieces (red each) */
} sm_cfg;

static float sm_exp_eval(sm_exp k, float d) {
    switch (k) {
    case SM_EXP_CR: return nmo_cu_expf_cr(d);
    case SM_EXP_LIBM: return expf(d);
    case SM_EXP_CUDA:
    default: return nmo_cu_expf(d);
    }
}

/* Row max with the kernel's lane structure (fmaxf: order does not matter for the value). */
static float sm_max(const float *x, int64_t n, nmo_cu_red red) {
    int lanes = red == NMO_CU_RED_BLOCK256 ? 256 : red == NMO_CU_RED_WARP32 ? 32 :
                red == NMO_CU_RED_VEC4 ? 4 : 1;
    float v[256] = {0};
    for (int l = 0; l < lanes; l++) {
        v[l] = -INFINITY;
        for (int64_t j = l; j < n; j += lanes) v[l] = fmaxf(v[l], x[j]);
    }
    if (lanes == 256) {
        float p[32];
        for (int w = 0; w < 8; w++) p[w] = nmo_cu_warp_max32(v + 32 * w);
        for (int w = 8; w < 32; w++) p[w] = -INFINITY;
        return nmo_cu_warp_max32(p);
    }
    if (lanes == 32) return nmo_cu_warp_max32(v);
    float m = v[0];
    for (int l = 1; l < lanes; l++) m = fmaxf(m, v[l]);
    return m;
}

static nmo_status sm_run(const nmo_cand_args *a, nmo_err *err, const sm_cfg *c) {
    static const char op[] = "softmax";
    NMO_RETURN_IF_ERR(nmo_cu_check_args(a, op, 1, 1, err));
    const nmo_tensor *x = &a->in[0];
    nmo_tensor *y = &a->out[0];
    if (x->ndims < 1 || x->ndims > NMO_MAX_DIMS)
        return nmo_err_set(err, NMO_ERR_USAGE, "softmax candidate: x has %d dims", x->ndims);
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(x, op, "x", a->plan->in, x->ndims, x->dims, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(y, op, "y", a->plan->out, x->ndims, x->dims, err));
    int64_t N = x->dims[x->ndims - 1];
    if (N < 1 || (c->skip_last && N < 2))
        return nmo_err_set(err, NMO_ERR_USAGE, "softmax candidate: row length %lld too short", (long long)N);
    int64_t M = nmo_cu_numel(x) / N;

    float *xv = nmo_cu_load(x);
    float *yv = (float *)malloc((size_t)(M * N) * sizeof(float));
    if (!xv || !yv) {
        free(xv), free(yv);
        return nmo_err_set(err, NMO_ERR_NOMEM, "softmax candidate: out of memory");
    }
    for (int64_t i = 0; i < M; i++) {
        const float *xr = xv + i * N;
        float *e = yv + i * N; /* e_i kept in fp32 in place of y (fused kernel) */
        float m = c->no_max ? 0.0f : sm_max(xr, N, c->red);
        if (c->warp_max) { /* 256 threads strided: element j is thread j%256, warp (j%256)/32 */
            float wm[8];
            for (int w = 0; w < 8; w++) {
                wm[w] = -INFINITY;
                for (int64_t b = 32 * w; b < N; b += 256)
                    for (int64_t j = b; j < b + 32 && j < N; j++) wm[w] = fmaxf(wm[w], xr[j]);
            }
            for (int64_t j = 0; j < N; j++) e[j] = sm_exp_eval(c->exp, xr[j] - wm[(j % 256) / 32]);
        } else {
            for (int64_t j = 0; j < N; j++) e[j] = sm_exp_eval(c->exp, c->no_max ? xr[j] : xr[j] - m);
        }
        if (c->exp_bf16)
            for (int64_t j = 0; j < N; j++) e[j] = nmo_cu_round_bf16(e[j]);
        int64_t nred = c->skip_last ? N - 1 : N;
        float s = c->acc16      ? nmo_cu_sum_acc16(e, NULL, nred, (nmo_fmt)c->acc16, 0)
                  : c->bv_parts ? nmo_cu_reduce_parts(e, NULL, nred, nmo_cu_bv_parts(M), c->red, 0)
                                : nmo_cu_reduce(e, NULL, nred, c->red, 0);
        if (c->recip) {
            float inv = 1.0f / s;
            for (int64_t j = 0; j < N; j++) e[j] = e[j] * inv;
        } else {
            for (int64_t j = 0; j < N; j++) e[j] = e[j] / s;
        }
    }
    nmo_cu_store(y, yv, c->store_rz ? NMO_CU_ST_RZ : nmo_cu_plan_store(a->plan));
    free(xv), free(yv);
    return NMO_OK;
}

#define SM_DEFAULT .red = NMO_CU_RED_BLOCK256, .exp = SM_EXP_CUDA, .recip = 0

#define SM_CAND(fname, ...)                                                         \
    static nmo_status fname(const nmo_cand_args *a, nmo_err *err) {                  \
        static const sm_cfg c = {__VA_ARGS__};                                        \
        return sm_run(a, err, &c);                                                    \
    }

SM_CAND(sm_block256, SM_DEFAULT)
SM_CAND(sm_seq, .red = NMO_CU_RED_SEQ, .exp = SM_EXP_CR, .recip = 0)
SM_CAND(sm_warp32, .red = NMO_CU_RED_WARP32, .exp = SM_EXP_LIBM, .recip = 1)
SM_CAND(sm_vec4, .red = NMO_CU_RED_VEC4, .exp = SM_EXP_CUDA, .recip = 1)
SM_CAND(sm_pairwise, .red = NMO_CU_RED_PAIRWISE, .exp = SM_EXP_CR, .recip = 1)

SM_CAND(sm_bv_split_rows, .red = NMO_CU_RED_WARP32, .exp = SM_EXP_CUDA, .recip = 0, .bv_parts = 1)

SM_CAND(sm_mut_no_max, SM_DEFAULT, .no_max = 1)
SM_CAND(sm_mut_warp_max, SM_DEFAULT, .warp_max = 1)
SM_CAND(sm_mut_acc_bf16, SM_DEFAULT, .acc16 = NMO_BF16)
SM_CAND(sm_mut_skip_last, SM_DEFAULT, .skip_last = 1)
SM_CAND(sm_mut_store_rz, SM_DEFAULT, .store_rz = 1)
SM_CAND(sm_mut_exp_bf16, SM_DEFAULT, .exp_bf16 = 1)

const nmo_cand nmo_cand_softmax[] = {
    {"softmax", "block256", 1,
     "256-thread block, 3 passes: max, expf (CUDA emulation) + sum by 8 warp xor-butterflies + warp 0, e/s",
     sm_block256, NULL},
    {"softmax", "seq", 1, "one thread per row: sequential max and sum, correctly rounded expf, e/s", sm_seq, NULL},
    {"softmax", "warp32", 1,
     "one warp per row: 32 lane-strided partial sums + xor butterfly, libm expf, e*(1/s)", sm_warp32, NULL},
    {"softmax", "vec4", 1, "float4 loads: 4 partial sums (a0+a1)+(a2+a3), expf (CUDA emulation), e*(1/s)",
     sm_vec4, NULL},
    {"softmax", "pairwise", 1, "pairwise tree sum, correctly rounded expf, e*(1/s)", sm_pairwise, NULL},
    {"softmax", "bv_split_rows", 1,
     "BATCH-VARIANT (accurate): the sum of exponentials split into 8/M warp32 pieces when M < 8 rows, "
     "expf (CUDA emulation), e/s: a row's bits depend on the batch size",
     sm_bv_split_rows, NULL},
    {"softmax", "mut_no_max", 0, "MUTANT: max not subtracted, e = expf(x) (overflows on large inputs)",
     sm_mut_no_max, NULL},
    {"softmax", "mut_warp_max", 0,
     "MUTANT: block max never combined across warps: each warp subtracts its own warp max", sm_mut_warp_max, NULL},
    {"softmax", "mut_acc_bf16", 0, "MUTANT: sum of exponentials in a bf16 accumulator (rounded after every add)",
     sm_mut_acc_bf16, NULL},
    {"softmax", "mut_skip_last", 0, "MUTANT: sum loop skips the last element of the row", sm_mut_skip_last, NULL},
    {"softmax", "mut_store_rz", 0, "MUTANT: final store truncates (RZ) instead of RNE", sm_mut_store_rz, NULL},
    {"softmax", "mut_exp_bf16", 0,
     "MUTANT: exponentials kept in a bf16 shared buffer between passes (sum and y use bf16 e_i)",
     sm_mut_exp_bf16, NULL},
};
const int nmo_cand_softmax_n = (int)(sizeof nmo_cand_softmax / sizeof nmo_cand_softmax[0]);
