/* numoracle: CPU candidates for rms_norm_bwd — emulations of RMSNorm backward kernels
 * given the forward's saved rstd.
 *
 *   in  dy[..., N], x[..., N], w[N]   dtype plan->in;   rstd[rows]  fp32
 *   out dx[..., N], dw[N]             dtype plan->out
 *
 * Rounding points (fp32): m = dy*w, the row sum S in the kernel's tree (FMA or not), the
 * correction's products in the kernel's association, the final combination (FMA or
 * not), the dw partial sums over rows (per program, then the partials), the stores.
 * The first correct variant (liger: Liger-Kernel's _rms_norm_backward_kernel, casting
 * mode "none") is the default; mutants are the default kernel with one realistic bug. */
#include "cand_util.h"

typedef enum {
    RB_LIGER = 0,  /* dX = rstd*m; dX = fmaf(rstd, (((-(1/N))*rstd)*rstd)*S * x, dX)        */
    RB_FACTORED,   /* c = (S*(rstd*rstd))/N; dx = rstd * fmaf(-x, c, m)                     */
    RB_XHAT,       /* xh = x*rstd; S' = sum m*xh; c = S'*(1/N); dx = rstd*(m - xh*c)         */
    RB_DISTRIB,    /* B = ((x*rstd)*(rstd*rstd))*(S/N); dx = rstd*m - B                      */
    RB_ATEN        /* PyTorch's CUDA kernel (layer_norm_kernel.cu compute_gI, rms_norm=true):
                      S = sum fmaf((dy*w)*x, rstd, acc); f = (N*w)*dy;
                      f = fmaf(-(x*rstd), S, f); dx = f * ((1/N)*rstd)                         */
} rb_form;

typedef enum {
    RB_DW_PROGRAMS = 0, /* 2 programs of ceil(M/2) rows: acc = fmaf(dy, x*rstd, acc); p0 + p1 */
    RB_DW_SEQ,          /* acc += (dy*x)*rstd, no contraction                                  */
    RB_DW_PAIRWISE,     /* pairwise over rows of dy*(x*rstd)                                    */
    RB_DW_KTILE         /* tiles of 32 rows, fmaf(dy, x*rstd, acc)                              */
} rb_dw;

typedef struct {
    rb_form form;
    nmo_cu_red red;
    int fma;
    rb_dw dw;
    /* mutant knobs */
    int acc16;        /* S in a 16-bit accumulator */
    int rstd2;        /* correction with rstd^2 instead of rstd^3 */
    int sign;         /* correction added instead of subtracted */
    int dw_no_rstd;   /* dw = sum dy*x */
    int dw_skip_row;  /* dw skips the last row */
    int s_no_w;       /* S = sum dy*x (w left out of the correction sum) */
    int aten_xr;      /* ATen form: the correction's x not multiplied by rstd */
    int llama;        /* Liger's llama casting mode: m = dy*w and dy*(x*rstd) in the input
                         dtype (correct under a plan with inter=<input dtype>) */
    int bv_parts;     /* batch-variant: S in nmo_cu_bv_parts(M) pieces (red each) */
    nmo_fmt st;       /* (set at run time) the input dtype */
} rb_cfg;

static float rb_dw_col(const float *dy, const float *x, const float *rs, int64_t M, int64_t N, int64_t j,
                       const rb_cfg *c, float *t0, float *t1) {
    int64_t Mr = c->dw_skip_row ? M - 1 : M;
    for (int64_t i = 0; i < Mr; i++) {
        t0[i] = dy[i * N + j];
        t1[i] = c->dw_no_rstd ? x[i * N + j] : x[i * N + j] * rs[i];
    }
    switch (c->dw) {
    case RB_DW_SEQ: {
        float acc = 0.0f;
        for (int64_t i = 0; i < Mr; i++)
            acc = acc + (c->dw_no_rstd ? t0[i] * x[i * N + j] : (t0[i] * x[i * N + j]) * rs[i]);
        return acc;
    }
    case RB_DW_PAIRWISE: return nmo_cu_reduce(t0, t1, Mr, NMO_CU_RED_PAIRWISE, 0);
    case RB_DW_KTILE: return nmo_cu_reduce(t0, t1, Mr, NMO_CU_RED_KTILE32, 1);
    case RB_DW_PROGRAMS:
    default: {
        int64_t per = (M + 1) / 2;
        float p[2] = {0.0f, 0.0f};
        for (int64_t i = 0; i < Mr; i++)
            p[i / per] = c->llama ? p[i / per] + nmo_cu_round_to(c->st, t0[i] * nmo_cu_round_to(c->st, t1[i]))
                                  : fmaf(t0[i], t1[i], p[i / per]);
        return p[0] + p[1];
    }
    }
}

static nmo_status rb_run(const nmo_cand_args *a, nmo_err *err, const rb_cfg *cfg) {
    static const char op[] = "rms_norm_bwd";
    rb_cfg cc = *cfg;
    const rb_cfg *c = &cc;
    if (!a || !a->plan) return nmo_err_set(err, NMO_ERR_USAGE, "rms_norm_bwd candidate: missing arguments");
    cc.st = a->plan->in;
    NMO_RETURN_IF_ERR(nmo_cu_check_args(a, op, 4, 2, err));
    const nmo_tensor *x = &a->in[1];
    if (x->ndims < 1 || x->ndims > NMO_MAX_DIMS)
        return nmo_err_set(err, NMO_ERR_USAGE, "rms_norm_bwd candidate: x has %d dims", x->ndims);
    int64_t N = x->dims[x->ndims - 1], M = nmo_cu_numel(x) / N;
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->in[0], op, "dy", a->plan->in, x->ndims, x->dims, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(x, op, "x", a->plan->in, x->ndims, x->dims, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->in[2], op, "w", a->plan->in, 1, &N, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->in[3], op, "rstd", NMO_FP32, 1, &M, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->out[0], op, "dx", a->plan->out, x->ndims, x->dims, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->out[1], op, "dw", a->plan->out, 1, &N, err));
    if (M < 1) return nmo_err_set(err, NMO_ERR_USAGE, "rms_norm_bwd candidate: no rows");
    float *dyv = nmo_cu_load(&a->in[0]), *xv = nmo_cu_load(x), *wv = nmo_cu_load(&a->in[2]);
    float *rs = nmo_cu_load(&a->in[3]);
    float *dx = (float *)malloc((size_t)(M * N) * sizeof(float));
    float *dw = (float *)malloc((size_t)N * sizeof(float));
    int64_t L = M > N ? M : N;
    float *m = (float *)malloc((size_t)L * sizeof(float)), *t = (float *)malloc((size_t)L * sizeof(float));
    float *rv = (float *)malloc((size_t)N * sizeof(float));
    if (!dyv || !xv || !wv || !rs || !dx || !dw || !m || !t || !rv) {
        free(dyv), free(xv), free(wv), free(rs), free(dx), free(dw), free(m), free(t), free(rv);
        return nmo_err_set(err, NMO_ERR_NOMEM, "rms_norm_bwd candidate: out of memory");
    }
    const float nf = (float)N, inv_n = 1.0f / nf;
    for (int64_t i = 0; i < M; i++) {
        const float *dyr = dyv + i * N, *xr = xv + i * N;
        const float r = rs[i];
        for (int64_t j = 0; j < N; j++) m[j] = c->s_no_w ? dyr[j] : dyr[j] * wv[j];
        if (c->llama)
            for (int64_t j = 0; j < N; j++) m[j] = nmo_cu_round_to(c->st, m[j]);
        if (c->form == RB_XHAT)
            for (int64_t j = 0; j < N; j++) t[j] = xr[j] * r;
        if (c->form == RB_ATEN) /* the terms (dy*w)*x, each FMA'd by rstd into the sum */
            for (int64_t j = 0; j < N; j++) t[j] = m[j] * xr[j], rv[j] = r;
        const float *sa = c->form == RB_ATEN ? t : m;
        const float *sx = c->form == RB_XHAT ? t : c->form == RB_ATEN ? rv : xr;
        float S = c->acc16      ? nmo_cu_sum_acc16(m, sx, N, (nmo_fmt)c->acc16, c->fma)
                  : c->bv_parts ? nmo_cu_reduce_parts(sa, sx, N, nmo_cu_bv_parts(M), c->red, c->fma)
                                : nmo_cu_reduce(sa, sx, N, c->red, c->fma);
        if (c->s_no_w)
            for (int64_t j = 0; j < N; j++) m[j] = dyr[j] * wv[j];
        const float r3 = c->rstd2 ? 1.0f : r; /* the rstd factor a buggy kernel forgets */
        for (int64_t j = 0; j < N; j++) {
            float v;
            switch (c->form) {
            case RB_FACTORED: {
                float cc = (S * (r * r3)) / nf;
                v = r * fmaf(c->sign ? xr[j] : -xr[j], cc, m[j]);
                break;
            }
            case RB_XHAT: {
                float cc = S * inv_n;
                float q = c->sign ? m[j] + t[j] * cc : m[j] - t[j] * cc;
                v = r * q;
                break;
            }
            case RB_ATEN: {
                const float term1 = (1.0f / nf) * r;
                float f = (nf * wv[j]) * dyr[j];
                f = fmaf(-(c->aten_xr ? xr[j] : xr[j] * r), S, f);
                v = f * term1;
                break;
            }
            case RB_DISTRIB: {
                float B = ((xr[j] * r) * (r * r3)) * (S / nf);
                v = c->sign ? r * m[j] + B : r * m[j] - B;
                break;
            }
            case RB_LIGER:
            default: {
                float c3 = ((-inv_n * r) * r3) * S;
                if (c->sign) c3 = -c3;
                v = fmaf(r, c3 * xr[j], r * m[j]);
            }
            }
            dx[i * N + j] = v;
        }
    }
    for (int64_t j = 0; j < N; j++) dw[j] = rb_dw_col(dyv, xv, rs, M, N, j, c, m, t);
    nmo_cu_store(&a->out[0], dx, nmo_cu_plan_store(a->plan));
    nmo_cu_store(&a->out[1], dw, nmo_cu_plan_store(a->plan));
    free(dyv), free(xv), free(wv), free(rs), free(dx), free(dw), free(m), free(t), free(rv);
    return NMO_OK;
}

#define RB_DEFAULT .form = RB_LIGER, .red = NMO_CU_RED_PAIRWISE, .fma = 0, .dw = RB_DW_PROGRAMS

#define RB_CAND(fname, ...)                                                          \
    static nmo_status fname(const nmo_cand_args *a, nmo_err *err) {                  \
        static const rb_cfg c = {__VA_ARGS__};                                       \
        return rb_run(a, err, &c);                                                   \
    }

RB_CAND(rb_liger, RB_DEFAULT)
RB_CAND(rb_factored, .form = RB_FACTORED, .red = NMO_CU_RED_BLOCK256, .fma = 1, .dw = RB_DW_SEQ)
RB_CAND(rb_xhat, .form = RB_XHAT, .red = NMO_CU_RED_WARP32, .fma = 0, .dw = RB_DW_PAIRWISE)
RB_CAND(rb_distrib, .form = RB_DISTRIB, .red = NMO_CU_RED_VEC4, .fma = 1, .dw = RB_DW_KTILE)
/* ATen: 256 threads over the row (BlockReduceSum's warp butterflies), the dw columns summed
 * row after row as GammaBetaBackwardSimpleCUDAKernel does */
RB_CAND(rb_aten, .form = RB_ATEN, .red = NMO_CU_RED_BLOCK256, .fma = 1, .dw = RB_DW_SEQ)
RB_CAND(rb_mut_aten_xr, .form = RB_ATEN, .red = NMO_CU_RED_BLOCK256, .fma = 1, .dw = RB_DW_SEQ, .aten_xr = 1)

RB_CAND(rb_bv_split_rows, .form = RB_LIGER, .red = NMO_CU_RED_WARP32, .fma = 0, .dw = RB_DW_SEQ, .bv_parts = 1)

RB_CAND(rb_mut_acc_bf16, RB_DEFAULT, .acc16 = NMO_BF16)
RB_CAND(rb_mut_rstd2, RB_DEFAULT, .rstd2 = 1)
RB_CAND(rb_mut_sign, RB_DEFAULT, .sign = 1)
RB_CAND(rb_mut_s_no_w, RB_DEFAULT, .s_no_w = 1)
RB_CAND(rb_mut_dw_no_rstd, RB_DEFAULT, .dw_no_rstd = 1)
RB_CAND(rb_mut_dw_skip_row, RB_DEFAULT, .dw_skip_row = 1)
RB_CAND(rb_mut_liger_llama, RB_DEFAULT, .llama = 1)

const nmo_cand nmo_cand_rms_norm_bwd[] = {
    {"rms_norm_bwd", "liger", 1,
     "Liger-Kernel: m=dy*w, S=tl.sum(m*x), dX=rstd*m, dX=fmaf(rstd, ((-(1/N)*rstd)*rstd)*S*x, dX); "
     "dW per program (fmaf) then summed",
     rb_liger, NULL},
    {"rms_norm_bwd", "factored", 1,
     "256-thread block, fmaf sum, c=(S*(rstd*rstd))/N, dx=rstd*fmaf(-x,c,m); dw sequential (dy*x)*rstd",
     rb_factored, NULL},
    {"rms_norm_bwd", "xhat", 1,
     "warp32: xh=x*rstd, S'=sum m*xh, c=S'*(1/N), dx=rstd*(m - xh*c); dw pairwise over rows", rb_xhat, NULL},
    {"rms_norm_bwd", "distrib", 1,
     "float4 loads, fmaf: dx = rstd*m - ((x*rstd)*(rstd*rstd))*(S/N); dw tiles of 32 rows", rb_distrib, NULL},
    {"rms_norm_bwd", "aten", 1,
     "PyTorch CUDA (layer_norm_kernel.cu, rms_norm=true): S=sum fmaf((dy*w)*x, rstd); "
     "dx=fmaf(-(x*rstd), S, (N*w)*dy) * ((1/N)*rstd); dw sequential",
     rb_aten, NULL},
    {"rms_norm_bwd", "bv_split_rows", 1,
     "BATCH-VARIANT (accurate): Liger's dx with S split into 8/M warp32 pieces when M < 8 rows; dw "
     "sequential over rows: a row's dx bits depend on the batch size",
     rb_bv_split_rows, NULL},
    {"rms_norm_bwd", "mut_acc_bf16", 0, "MUTANT: S accumulated in bf16", rb_mut_acc_bf16, NULL},
    {"rms_norm_bwd", "mut_rstd2", 0, "MUTANT: correction term with rstd^2 instead of rstd^3", rb_mut_rstd2, NULL},
    {"rms_norm_bwd", "mut_sign", 0, "MUTANT: correction term added instead of subtracted", rb_mut_sign, NULL},
    {"rms_norm_bwd", "mut_s_no_w", 0, "MUTANT: S = sum dy*x (w left out of the correction sum)", rb_mut_s_no_w, NULL},
    {"rms_norm_bwd", "mut_dw_no_rstd", 0, "MUTANT: dw = sum dy*x (rstd forgotten)", rb_mut_dw_no_rstd, NULL},
    {"rms_norm_bwd", "mut_dw_skip_row", 0, "MUTANT: dw loop skips the last row", rb_mut_dw_skip_row, NULL},
    {"rms_norm_bwd", "mut_aten_xr", 0, "MUTANT: ATen's form with the correction's x*rstd written x",
     rb_mut_aten_xr, NULL},
    {"rms_norm_bwd", "mut_liger_llama", 0,
     "MUTANT under the fused plan: Liger's llama casting mode, dy*w and dy*(x*rstd) in the input dtype "
     "(correct under a plan with inter=<input dtype>)",
     rb_mut_liger_llama, "inter={dtype}"},
};
const int nmo_cand_rms_norm_bwd_n = (int)(sizeof nmo_cand_rms_norm_bwd / sizeof nmo_cand_rms_norm_bwd[0]);
