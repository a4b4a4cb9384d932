/* numoracle: CPU candidates for rms_norm — emulations of GPU RMSNorm forward kernels.
 *
 *   in  x[..., N] (rows = product of leading dims), w[N]   dtype plan->in
 *   out y[..., N]                                          dtype plan->out
 *   param[0] eps (default 1e-6), converted to float as a kernel receives it;
 *   param[1] offset (default 0): the weight is (offset + w), formed in fp32 (Gemma: 1).
 *
 * Rounding points of every kernel here (all fp32): the squares (or their fusion into
 * the running sum), each addition of the sum of squares in the kernel's tree, the mean
 * (ss/N or ss*(1/N)), ms + eps, the reciprocal root (rsqrtf emulation <= 1.5 ulp, or
 * sqrtf then an IEEE division), the two products of x*r*w in the kernel's association,
 * and the final store into plan->out (plan->round: rne by default).
 *
 * Correct variants differ in reduction tree, FMA use, mean, root and association; the
 * first one (block256) is the default. Mutants are the default kernel with one
 * realistic bug each (the acc16 mutants replace the block tree by a sequential 16-bit
 * accumulator).
 *
 * The "llama" casting, y = RN_dt(RN_dt(x*r) * (offset + w)), rounds x*r to the storage
 * dtype before the weight: a mutant of the fused default plan, correct under
 * inter=<dtype> (the candidates' plan field):
 *   mut_round_xr     the default kernel with that rounding;
 *   mut_hf_llama     Hugging Face LlamaRMSNorm eager, three kernels: pow(2) (rounded
 *                    squares), mean (vectorized sum, then * RN(1/N)), rsqrt + x*r + cast,
 *                    then `w * h` (bf16 x bf16 in fp32, rounded at the store);
 *   mut_liger_llama  Liger-Kernel casting_mode="llama": one Triton program per row,
 *                    tl.sum(X*X) (contracted into FMAs, tree), / n_cols, rsqrt, X*rstd,
 *                    cast, X * (offset + W).
 * gemma: HF GemmaRMSNorm / Liger casting_mode="gemma": everything in fp32,
 * (x*r) * (offset + w), one cast: the fused form (correct under the default plan). */
#include "cand_util.h"

typedef struct {
    nmo_cu_red red;   /* reduction shape of sum(x^2) */
    int fma;          /* acc = fmaf(x, x, acc) vs acc + x*x */
    int mean_recip;   /* ms = ss * (1.0f/N) vs ss / N */
    int rsqrt_emul;   /* r = rsqrtf(ms+eps) (emulated CUDA) vs 1.0f / sqrtf(ms+eps) */
    int assoc;        /* 0: (x*r)*w  1: x*(r*w)  2: (x*w)*r */
    /* mutant knobs */
    int acc16;        /* 0: none; NMO_BF16/NMO_FP16: sequential 16-bit running sum (red ignored) */
    int no_eps;       /* r = rsqrt(ms) */
    int eps_outside;  /* r = 1 / (sqrtf(ms) + eps) */
    int mean_n1;      /* ms = ss / (N-1) */
    int skip_last;    /* reduction loop bound N-1 */
    int w_off1;       /* reads w[j+1] (wrapping: the out-of-bounds read emulated) */
    int store_rz;     /* truncating store regardless of the plan */
    int round_xr;     /* x*r rounded to the input dtype before *w (eager two-step) */
    int bv_parts;     /* batch-variant: the row sum in nmo_cu_bv_parts(M) pieces (red each) */
} rms_cfg;

/* The weight factor (offset + w) in fp32 (Gemma's 1 + w; exactly w when offset = 0). */
static inline float rms_wo(float offset, float w) { return offset != 0 ? offset + w : w; }

static nmo_status rms_run(const nmo_cand_args *a, nmo_err *err, const rms_cfg *c) {
    static const char op[] = "rms_norm";
    NMO_RETURN_IF_ERR(nmo_cu_check_args(a, op, 2, 1, err));
    const nmo_tensor *x = &a->in[0], *w = &a->in[1];
    nmo_tensor *y = &a->out[0];
    if (x->ndims < 1 || x->ndims > NMO_MAX_DIMS)
        return nmo_err_set(err, NMO_ERR_USAGE, "rms_norm candidate: x has %d dims", x->ndims);
    int64_t N = x->dims[x->ndims - 1];
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(x, op, "x", a->plan->in, x->ndims, x->dims, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(w, op, "w", a->plan->in, 1, &N, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(y, op, "y", a->plan->out, x->ndims, x->dims, err));
    if (N < 1 || (c->mean_n1 && N < 2))
        return nmo_err_set(err, NMO_ERR_USAGE, "rms_norm candidate: row length %lld too short", (long long)N);
    if (a->n_param < 0 || (a->n_param > 0 && !a->param))
        return nmo_err_set(err, NMO_ERR_USAGE, "rms_norm candidate: bad parameter block");
    const float eps = (float)(a->n_param >= 1 ? a->param[0] : 1e-6);
    const float offset = (float)(a->n_param >= 2 ? a->param[1] : 0);
    int64_t M = nmo_cu_numel(x) / N;

    float *xv = nmo_cu_load(x), *wv = nmo_cu_load(w);
    float *yv = (float *)malloc((size_t)(M * N) * sizeof(float));
    if (!xv || !wv || !yv) {
        free(xv), free(wv), free(yv);
        return nmo_err_set(err, NMO_ERR_NOMEM, "rms_norm candidate: out of memory");
    }
    const float nf = (float)N, inv_n = 1.0f / nf, nm1 = (float)(N - 1);
    const int64_t nred = c->skip_last ? N - 1 : N;
    for (int64_t i = 0; i < M; i++) {
        const float *xr = xv + i * N;
        float ss = c->acc16      ? nmo_cu_sum_acc16(xr, xr, nred, (nmo_fmt)c->acc16, c->fma)
                   : c->bv_parts ? nmo_cu_reduce_parts(xr, xr, nred, nmo_cu_bv_parts(M), c->red, c->fma)
                                 : nmo_cu_reduce(xr, xr, nred, c->red, c->fma);
        float ms = c->mean_n1 ? ss / nm1 : c->mean_recip ? ss * inv_n : ss / nf;
        float r;
        if (c->eps_outside) r = 1.0f / (sqrtf(ms) + eps);
        else {
            float d = c->no_eps ? ms : ms + eps;
            r = c->rsqrt_emul ? nmo_cu_rsqrtf(d) : 1.0f / sqrtf(d);
        }
        for (int64_t j = 0; j < N; j++) {
            float xj = xr[j], wj = rms_wo(offset, wv[c->w_off1 ? (j + 1) % N : j]), v;
            if (c->round_xr) v = nmo_cu_round_to(a->plan->in, xj * r) * wj;
            else if (c->assoc == 1) v = xj * (r * wj);
            else if (c->assoc == 2) v = (xj * wj) * r;
            else v = (xj * r) * wj;
            yv[i * N + j] = v;
        }
    }
    nmo_cu_store(y, yv, c->store_rz ? NMO_CU_ST_RZ : nmo_cu_plan_store(a->plan));
    free(xv), free(wv), free(yv);
    return NMO_OK;
}

/* Whole-kernel emulations of the eager and Triton forms (see the top comment). */
typedef enum { RMS_HF_LLAMA, RMS_LIGER_LLAMA, RMS_GEMMA } rms_form;

static nmo_status rms_form_run(const nmo_cand_args *a, nmo_err *err, rms_form form) {
    static const char op[] = "rms_norm";
    NMO_RETURN_IF_ERR(nmo_cu_check_args(a, op, 2, 1, err));
    const nmo_tensor *x = &a->in[0], *w = &a->in[1];
    if (x->ndims < 1 || x->ndims > NMO_MAX_DIMS)
        return nmo_err_set(err, NMO_ERR_USAGE, "rms_norm candidate: x has %d dims", x->ndims);
    int64_t N = x->dims[x->ndims - 1];
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(x, op, "x", a->plan->in, x->ndims, x->dims, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(w, op, "w", a->plan->in, 1, &N, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->out[0], op, "y", a->plan->out, x->ndims, x->dims, err));
    if (N < 1 || a->n_param < 0 || (a->n_param > 0 && !a->param))
        return nmo_err_set(err, NMO_ERR_USAGE, "rms_norm candidate: bad row length or parameters");
    const float eps = (float)(a->n_param >= 1 ? a->param[0] : 1e-6);
    const float offset = (float)(a->n_param >= 2 ? a->param[1] : 0);
    int64_t M = nmo_cu_numel(x) / N;
    float *xv = nmo_cu_load(x), *wv = nmo_cu_load(w);
    float *yv = (float *)malloc((size_t)(M * N) * sizeof(float));
    float *sq = (float *)malloc((size_t)N * sizeof(float));
    if (!xv || !wv || !yv || !sq) {
        free(xv), free(wv), free(yv), free(sq);
        return nmo_err_set(err, NMO_ERR_NOMEM, "rms_norm candidate: out of memory");
    }
    const nmo_fmt dt = a->plan->in; /* `.to(x.dtype)`: the storage dtype */
    for (int64_t i = 0; i < M; i++) {
        const float *xr = xv + i * N;
        float ms;
        if (form == RMS_LIGER_LLAMA) {
            /* tl.sum(X*X) / n_cols: the products contracted into the tree's first adds */
            ms = nmo_cu_reduce(xr, xr, N, NMO_CU_RED_WARP32, 1) / (float)N;
        } else {
            /* h.pow(2) is its own kernel (rounded squares), .mean() a vectorized sum times
             * the factor float(1)/N (ATen's MeanOps) */
            for (int64_t j = 0; j < N; j++) sq[j] = xr[j] * xr[j];
            ms = nmo_cu_reduce(sq, NULL, N, NMO_CU_RED_VEC4, 0) * (1.0f / (float)N);
        }
        float r = nmo_cu_rsqrtf(ms + eps);
        for (int64_t j = 0; j < N; j++) {
            float h = xr[j] * r, wo = rms_wo(offset, wv[j]);
            if (form == RMS_GEMMA) yv[i * N + j] = h * wo;
            else yv[i * N + j] = nmo_cu_round_to(dt, h) * wo; /* rounded at the store */
        }
    }
    nmo_cu_store(&a->out[0], yv, nmo_cu_plan_store(a->plan));
    free(xv), free(wv), free(yv), free(sq);
    return NMO_OK;
}

static nmo_status rms_hf_llama(const nmo_cand_args *a, nmo_err *err) { return rms_form_run(a, err, RMS_HF_LLAMA); }
static nmo_status rms_liger_llama(const nmo_cand_args *a, nmo_err *err) { return rms_form_run(a, err, RMS_LIGER_LLAMA); }
static nmo_status rms_gemma(const nmo_cand_args *a, nmo_err *err) { return rms_form_run(a, err, RMS_GEMMA); }

/* Default kernel configuration; mutants start from it. */
#define RMS_DEFAULT .red = NMO_CU_RED_BLOCK256, .fma = 1, .mean_recip = 0, .rsqrt_emul = 1, \
                    .assoc = 0

#define RMS_CAND(fname, ...)                                                        \
    static nmo_status fname(const nmo_cand_args *a, nmo_err *err) {                  \
        static const rms_cfg c = {__VA_ARGS__};                                       \
        return rms_run(a, err, &c);                                                   \
    }

RMS_CAND(rms_block256, RMS_DEFAULT)
RMS_CAND(rms_seq, .red = NMO_CU_RED_SEQ, .fma = 0, .mean_recip = 1, .rsqrt_emul = 0, .assoc = 1)
RMS_CAND(rms_warp32, .red = NMO_CU_RED_WARP32, .fma = 1, .mean_recip = 1, .rsqrt_emul = 0, .assoc = 2)
RMS_CAND(rms_vec4, .red = NMO_CU_RED_VEC4, .fma = 0, .mean_recip = 0, .rsqrt_emul = 1, .assoc = 1)
RMS_CAND(rms_pairwise, .red = NMO_CU_RED_PAIRWISE, .fma = 0, .mean_recip = 1, .rsqrt_emul = 1,
         .assoc = 2)

RMS_CAND(rms_bv_split_rows, .red = NMO_CU_RED_WARP32, .fma = 0, .mean_recip = 0, .rsqrt_emul = 1, .assoc = 0,
         .bv_parts = 1)

RMS_CAND(rms_mut_acc_bf16, RMS_DEFAULT, .acc16 = NMO_BF16)
RMS_CAND(rms_mut_acc_fp16, RMS_DEFAULT, .acc16 = NMO_FP16)
RMS_CAND(rms_mut_no_eps, RMS_DEFAULT, .no_eps = 1)
RMS_CAND(rms_mut_eps_outside, RMS_DEFAULT, .eps_outside = 1)
RMS_CAND(rms_mut_mean_n1, RMS_DEFAULT, .mean_n1 = 1)
RMS_CAND(rms_mut_skip_last, RMS_DEFAULT, .skip_last = 1)
RMS_CAND(rms_mut_w_off1, RMS_DEFAULT, .w_off1 = 1)
RMS_CAND(rms_mut_store_rz, RMS_DEFAULT, .store_rz = 1)
RMS_CAND(rms_mut_round_xr, RMS_DEFAULT, .round_xr = 1)

const nmo_cand nmo_cand_rms_norm[] = {
    {"rms_norm", "block256", 1,
     "256-thread block: strided fmaf sum of squares, 8 warp xor-butterflies + warp 0, ss/N, rsqrtf, (x*r)*w",
     rms_block256, NULL},
    {"rms_norm", "seq", 1,
     "one thread per row: sequential x*x then add (no FMA), ss*(1/N), 1/sqrtf, x*(r*w)", rms_seq, NULL},
    {"rms_norm", "warp32", 1,
     "one warp per row: 32 lane-strided fmaf partials + xor butterfly, ss*(1/N), 1/sqrtf, (x*w)*r",
     rms_warp32, NULL},
    {"rms_norm", "vec4", 1,
     "float4 loads: 4 accumulators (x*x then add), (a0+a1)+(a2+a3), ss/N, rsqrtf, x*(r*w)", rms_vec4, NULL},
    {"rms_norm", "pairwise", 1,
     "pairwise tree over rounded squares, ss*(1/N), rsqrtf, (x*w)*r", rms_pairwise, NULL},
    {"rms_norm", "gemma", 1,
     "HF GemmaRMSNorm / Liger gemma casting: fp32 pow+mean*(1/N), rsqrtf, (x*r)*(offset+w), one cast",
     rms_gemma, NULL},
    {"rms_norm", "bv_split_rows", 1,
     "BATCH-VARIANT (accurate): each row's sum of squares split into 8/M warp32 pieces when M < 8 rows "
     "(fills 8 SMs), ss/N, rsqrtf, (x*r)*w: a row's bits depend on the batch size",
     rms_bv_split_rows, NULL},
    {"rms_norm", "mut_hf_llama", 0,
     "HF LlamaRMSNorm eager: pow, mean*(1/N), rsqrtf, x*r cast to the dtype, then w*h "
     "(correct under inter=<dtype>)",
     rms_hf_llama, "inter={dtype}"},
    {"rms_norm", "mut_liger_llama", 0,
     "Liger casting_mode=llama: tl.sum(X*X)/N, rsqrt, X*rstd cast to the dtype, *(offset+W) "
     "(correct under inter=<dtype>)",
     rms_liger_llama, "inter={dtype}"},
    {"rms_norm", "mut_acc_bf16", 0,
     "MUTANT: sum of squares in a bf16 accumulator (rounded after every fmaf)", rms_mut_acc_bf16, NULL},
    {"rms_norm", "mut_acc_fp16", 0,
     "MUTANT: sum of squares in an fp16 accumulator (rounded after every fmaf; overflows)",
     rms_mut_acc_fp16, NULL},
    {"rms_norm", "mut_no_eps", 0, "MUTANT: eps dropped, r = rsqrtf(ms)", rms_mut_no_eps, NULL},
    {"rms_norm", "mut_eps_outside", 0, "MUTANT: eps moved out of the root, r = 1/(sqrtf(ms)+eps)",
     rms_mut_eps_outside, NULL},
    {"rms_norm", "mut_mean_n1", 0, "MUTANT: mean of squares divided by N-1", rms_mut_mean_n1, NULL},
    {"rms_norm", "mut_skip_last", 0, "MUTANT: reduction loop skips the last element of the row (still /N)",
     rms_mut_skip_last, NULL},
    {"rms_norm", "mut_w_off1", 0, "MUTANT: weight index off by one, w[(j+1) mod N]", rms_mut_w_off1, NULL},
    {"rms_norm", "mut_store_rz", 0, "MUTANT: final store truncates (RZ) instead of RNE", rms_mut_store_rz, NULL},
    {"rms_norm", "mut_round_xr", 0,
     "MUTANT of the fused plan: x*r rounded to the input dtype before *w (eager two-step; "
     "correct under inter=<dtype>)",
     rms_mut_round_xr, "inter={dtype}"},
};
const int nmo_cand_rms_norm_n = (int)(sizeof nmo_cand_rms_norm / sizeof nmo_cand_rms_norm[0]);
