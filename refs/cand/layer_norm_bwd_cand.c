/* numoracle: CPU candidates for layer_norm_bwd — emulations of LayerNorm backward kernels
 * given the forward's saved mean and rstd.
 *
 *   in  dy[..., N], x[..., N], w[N]   dtype plan->in;   mean[rows], rstd[rows]  fp32
 *   out dx[..., N], dw[N], db[N]      dtype plan->out
 *
 * Rounding points (fp32): xh = (x - mean)*rstd, wdy = w*dy, the row sums in the kernel's
 * tree (FMA or not), c1, c2 (/N or *(1/N)), the combination in the kernel's order (FMA
 * or not), the column sums of dw and db, the stores. The first correct variant (liger:
 * Liger-Kernel / the Triton tutorial) is the default; mutants are the default kernel
 * with one realistic bug each. */
#include "cand_util.h"

typedef enum {
    LB_LIGER = 0, /* c1 = sum(xh*wdy)/N, c2 = sum(wdy)/N, dx = (wdy - fmaf(xh, c1, c2)) * rstd */
    LB_PYTORCH,   /* f = (N*w)*dy; f = fmaf(-xh, S1, f); f -= S2; dx = f * ((1/N)*rstd)        */
    LB_APEX       /* c = S*(1/N); dx = ((wdy - xh*c1) - c2) * rstd, no contraction              */
} lb_form;

typedef enum {
    LB_COL_PROGRAMS = 0, /* 2 programs of ceil(M/2) rows (fmaf), partials added */
    LB_COL_SEQ,          /* sequential over rows: acc += (dy*d)*rstd */
    LB_COL_PAIRWISE      /* pairwise over rows of dy*xh */
} lb_col;

typedef struct {
    lb_form form;
    nmo_cu_red red;
    int fma;
    lb_col col;
    /* mutant knobs */
    int acc16;        /* S1 in a bf16 accumulator */
    int no_c2;        /* c2 dropped */
    int c1_no_w;      /* c1 = sum(xh*dy)/N */
    int no_rstd;      /* the final * rstd forgotten */
    int dw_raw_x;     /* dw = sum dy*x */
    int db_skip_row;  /* db loop skips the last row */
} lb_cfg;

static float lb_col_sum(const float *a, const float *b, int64_t M, const lb_cfg *c) {
    switch (c->col) {
    case LB_COL_SEQ: return nmo_cu_reduce(a, b, M, NMO_CU_RED_SEQ, 0);
    case LB_COL_PAIRWISE: return nmo_cu_reduce(a, b, M, NMO_CU_RED_PAIRWISE, 0);
    case LB_COL_PROGRAMS:
    default: {
        int64_t per = (M + 1) / 2;
        float p[2] = {0.0f, 0.0f};
        for (int64_t i = 0; i < M; i++) p[i / per] = b ? fmaf(a[i], b[i], p[i / per]) : p[i / per] + a[i];
        return p[0] + p[1];
    }
    }
}

static nmo_status lb_run(const nmo_cand_args *a, nmo_err *err, const lb_cfg *c) {
    static const char op[] = "layer_norm_bwd";
    NMO_RETURN_IF_ERR(nmo_cu_check_args(a, op, 5, 3, err));
    const nmo_tensor *x = &a->in[1];
    if (x->ndims < 1 || x->ndims > NMO_MAX_DIMS)
        return nmo_err_set(err, NMO_ERR_USAGE, "layer_norm_bwd candidate: x has %d dims", x->ndims);
    int64_t N = x->dims[x->ndims - 1], M = nmo_cu_numel(x) / N;
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->in[0], op, "dy", a->plan->in, x->ndims, x->dims, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(x, op, "x", a->plan->in, x->ndims, x->dims, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->in[2], op, "w", a->plan->in, 1, &N, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->in[3], op, "mean", NMO_FP32, 1, &M, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->in[4], op, "rstd", NMO_FP32, 1, &M, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->out[0], op, "dx", a->plan->out, x->ndims, x->dims, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->out[1], op, "dw", a->plan->out, 1, &N, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->out[2], op, "db", a->plan->out, 1, &N, err));
    if (M < 1) return nmo_err_set(err, NMO_ERR_USAGE, "layer_norm_bwd candidate: no rows");
    float *dyv = nmo_cu_load(&a->in[0]), *xv = nmo_cu_load(x), *wv = nmo_cu_load(&a->in[2]);
    float *mu = nmo_cu_load(&a->in[3]), *rs = nmo_cu_load(&a->in[4]);
    float *dx = (float *)malloc((size_t)(M * N) * sizeof(float));
    float *dw = (float *)malloc((size_t)N * sizeof(float)), *db = (float *)malloc((size_t)N * sizeof(float));
    int64_t L = M > N ? M : N;
    float *xh = (float *)malloc((size_t)L * sizeof(float)), *wdy = (float *)malloc((size_t)L * sizeof(float));
    if (!dyv || !xv || !wv || !mu || !rs || !dx || !dw || !db || !xh || !wdy) {
        free(dyv), free(xv), free(wv), free(mu), free(rs), free(dx), free(dw), free(db), free(xh), free(wdy);
        return nmo_err_set(err, NMO_ERR_NOMEM, "layer_norm_bwd candidate: out of memory");
    }
    const float nf = (float)N, inv_n = 1.0f / nf;
    for (int64_t i = 0; i < M; i++) {
        const float *dyr = dyv + i * N, *xr = xv + i * N, r = rs[i], m = mu[i];
        for (int64_t j = 0; j < N; j++) {
            xh[j] = (xr[j] - m) * r;
            wdy[j] = wv[j] * dyr[j];
        }
        float S1, S2;
        if (c->form == LB_PYTORCH) {
            /* stats_x1 += dy*gamma; stats_x2 += dy*gamma*(x-mean)*rstd, per thread then block */
            float p1[256] = {0}, p2[256] = {0};
            for (int t = 0; t < 256; t++)
                for (int64_t j = t; j < N; j += 256) {
                    float g = dyr[j] * wv[j];
                    p1[t] = p1[t] + g;
                    p2[t] = fmaf(g * (xr[j] - m), r, p2[t]);
                }
            S1 = nmo_cu_block_sum256(p2);
            S2 = nmo_cu_block_sum256(p1);
            if (c->acc16) S1 = nmo_cu_sum_acc16(xh, wdy, N, (nmo_fmt)c->acc16, 1);
        } else {
            const float *b1 = c->c1_no_w ? dyr : wdy;
            S1 = c->acc16 ? nmo_cu_sum_acc16(xh, b1, N, (nmo_fmt)c->acc16, c->fma) : nmo_cu_reduce(xh, b1, N, c->red, c->fma);
            S2 = nmo_cu_reduce(wdy, NULL, N, c->red, c->fma);
        }
        if (c->no_c2) S2 = 0.0f;
        const float fr = c->no_rstd ? 1.0f : r;
        for (int64_t j = 0; j < N; j++) {
            float v;
            switch (c->form) {
            case LB_PYTORCH: {
                float f = (nf * wv[j]) * dyr[j];
                f = fmaf(-xh[j], S1, f);
                f = f - S2;
                v = f * (inv_n * fr);
                break;
            }
            case LB_APEX: {
                float c1 = S1 * inv_n, c2 = S2 * inv_n;
                v = ((wdy[j] - xh[j] * c1) - c2) * fr;
                break;
            }
            case LB_LIGER:
            default: {
                float c1 = S1 / nf, c2 = S2 / nf;
                v = (wdy[j] - fmaf(xh[j], c1, c2)) * fr;
            }
            }
            dx[i * N + j] = v;
        }
    }
    for (int64_t j = 0; j < N; j++) {
        for (int64_t i = 0; i < M; i++) {
            wdy[i] = dyv[i * N + j];
            xh[i] = c->dw_raw_x ? xv[i * N + j] : (xv[i * N + j] - mu[i]) * rs[i];
        }
        if (c->col == LB_COL_SEQ) {
            float acc = 0.0f;
            for (int64_t i = 0; i < M; i++)
                acc = acc + (c->dw_raw_x ? wdy[i] * xh[i] : (wdy[i] * (xv[i * N + j] - mu[i])) * rs[i]);
            dw[j] = acc;
        } else {
            dw[j] = lb_col_sum(wdy, xh, M, c);
        }
        db[j] = lb_col_sum(wdy, NULL, c->db_skip_row ? M - 1 : M, c);
    }
    nmo_cu_store(&a->out[0], dx, nmo_cu_plan_store(a->plan));
    nmo_cu_store(&a->out[1], dw, nmo_cu_plan_store(a->plan));
    nmo_cu_store(&a->out[2], db, nmo_cu_plan_store(a->plan));
    free(dyv), free(xv), free(wv), free(mu), free(rs), free(dx), free(dw), free(db), free(xh), free(wdy);
    return NMO_OK;
}

#define LB_DEFAULT .form = LB_LIGER, .red = NMO_CU_RED_PAIRWISE, .fma = 0, .col = LB_COL_PROGRAMS

#define LB_CAND(fname, ...)                                                          \
    static nmo_status fname(const nmo_cand_args *a, nmo_err *err) {                  \
        static const lb_cfg c = {__VA_ARGS__};                                       \
        return lb_run(a, err, &c);                                                   \
    }

LB_CAND(lb_liger, LB_DEFAULT)
LB_CAND(lb_pytorch, .form = LB_PYTORCH, .red = NMO_CU_RED_BLOCK256, .fma = 1, .col = LB_COL_SEQ)
LB_CAND(lb_apex, .form = LB_APEX, .red = NMO_CU_RED_WARP32, .fma = 1, .col = LB_COL_PAIRWISE)
LB_CAND(lb_vec4, .form = LB_LIGER, .red = NMO_CU_RED_VEC4, .fma = 1, .col = LB_COL_PAIRWISE)

LB_CAND(lb_mut_no_c2, LB_DEFAULT, .no_c2 = 1)
LB_CAND(lb_mut_c1_no_w, LB_DEFAULT, .c1_no_w = 1)
LB_CAND(lb_mut_no_rstd, LB_DEFAULT, .no_rstd = 1)
LB_CAND(lb_mut_acc_bf16, LB_DEFAULT, .acc16 = NMO_BF16)
LB_CAND(lb_mut_dw_raw_x, LB_DEFAULT, .dw_raw_x = 1)
LB_CAND(lb_mut_db_skip_row, LB_DEFAULT, .db_skip_row = 1)

const nmo_cand nmo_cand_layer_norm_bwd[] = {
    {"layer_norm_bwd", "liger", 1,
     "Liger/Triton: xh, wdy, c1=sum(xh*wdy)/N, c2=sum(wdy)/N, dx=(wdy-fmaf(xh,c1,c2))*rstd; dw, db per program",
     lb_liger, NULL},
    {"layer_norm_bwd", "pytorch", 1,
     "PyTorch layer_norm_grad_input: block sums of dy*w and dy*w*(x-mean)*rstd, f=N*w*dy, fmaf(-xh,S1,f)-S2, "
     "*(rstd/N); dw sequential",
     lb_pytorch, NULL},
    {"layer_norm_bwd", "apex", 1, "warp32 sums, c=S*(1/N), dx=((wdy-xh*c1)-c2)*rstd; dw, db pairwise", lb_apex, NULL},
    {"layer_norm_bwd", "vec4", 1, "float4 loads, fmaf sums, Liger's combination; dw, db pairwise", lb_vec4, NULL},
    {"layer_norm_bwd", "mut_no_c2", 0, "MUTANT: the mean of w*dy (c2) is not subtracted", lb_mut_no_c2, NULL},
    {"layer_norm_bwd", "mut_c1_no_w", 0, "MUTANT: c1 = sum(xh*dy)/N (w left out)", lb_mut_c1_no_w, NULL},
    {"layer_norm_bwd", "mut_no_rstd", 0, "MUTANT: the final * rstd is forgotten", lb_mut_no_rstd, NULL},
    {"layer_norm_bwd", "mut_acc_bf16", 0, "MUTANT: sum(xh*wdy) accumulated in bf16", lb_mut_acc_bf16, NULL},
    {"layer_norm_bwd", "mut_dw_raw_x", 0, "MUTANT: dw = sum dy*x (x not normalized)", lb_mut_dw_raw_x, NULL},
    {"layer_norm_bwd", "mut_db_skip_row", 0, "MUTANT: db loop skips the last row", lb_mut_db_skip_row, NULL},
};
const int nmo_cand_layer_norm_bwd_n = (int)(sizeof nmo_cand_layer_norm_bwd / sizeof nmo_cand_layer_norm_bwd[0]);
