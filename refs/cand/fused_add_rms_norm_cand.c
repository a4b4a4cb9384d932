/* numoracle: CPU candidates for fused_add_rms_norm — emulations of vLLM-style and
 * FlashInfer-style fused residual-add + RMSNorm kernels.
 *
 *   in  x[..., N], residual[..., N], w[N]   dtype plan->in
 *   out y[..., N], residual_out[..., N]     dtype plan->out
 *   param[0] eps (default 1e-6), as a float; param[1] offset (default 0): the weight is
 *   (offset + w), formed in fp32 (Gemma's fused add + norm: 1).
 *
 * Rounding points (fp32): x + residual (then the store of the new residual into the
 * storage dtype; the norm reads the stored h, or keeps the fp32 sum), the sum of squares
 * in the kernel's tree, the mean, + eps, the root, the products of h*r*w in the kernel's
 * association, the stores. The first correct variant is the default; mutants are the
 * default kernel with one realistic bug each. */
#include "cand_util.h"

typedef struct {
    nmo_cu_red red;
    int fma;
    int mean_recip;
    int rsqrt_emul;
    int assoc;         /* 0: (h*r)*w  1: h*(r*w)  2: (h*w)*r */
    int h_fp32;        /* the norm uses the fp32 sum (FlashInfer), not the stored h */
    /* mutant knobs */
    int acc16;
    int no_eps;
    int residual_stale; /* residual_out = x (the new residual never written) */
    int norm_x;         /* y normalizes x, not h */
    int residual_rz;    /* the new residual stored by truncation */
    int round_hr;       /* h*r rounded to the storage dtype before *w (vLLM; inter plan) */
} far_cfg;

static nmo_status far_run(const nmo_cand_args *a, nmo_err *err, const far_cfg *c) {
    static const char op[] = "fused_add_rms_norm";
    NMO_RETURN_IF_ERR(nmo_cu_check_args(a, op, 3, 2, err));
    const nmo_tensor *x = &a->in[0];
    if (x->ndims < 1 || x->ndims > NMO_MAX_DIMS)
        return nmo_err_set(err, NMO_ERR_USAGE, "fused_add_rms_norm candidate: x has %d dims", x->ndims);
    int64_t N = x->dims[x->ndims - 1];
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(x, op, "x", a->plan->in, x->ndims, x->dims, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->in[1], op, "residual", a->plan->in, x->ndims, x->dims, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->in[2], op, "w", a->plan->in, 1, &N, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->out[0], op, "y", a->plan->out, x->ndims, x->dims, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->out[1], op, "residual_out", a->plan->out, x->ndims, x->dims, err));
    const float eps = (float)(a->n_param >= 1 && a->param ? a->param[0] : 1e-6);
    const float offset = (float)(a->n_param >= 2 && a->param ? a->param[1] : 0);
    int64_t M = nmo_cu_numel(x) / N;
    float *xv = nmo_cu_load(x), *rv = nmo_cu_load(&a->in[1]), *wv = nmo_cu_load(&a->in[2]);
    float *yv = (float *)malloc((size_t)(M * N) * sizeof(float));
    float *hv = (float *)malloc((size_t)(M * N) * sizeof(float));
    float *hn = (float *)malloc((size_t)N * sizeof(float));
    if (!xv || !rv || !wv || !yv || !hv || !hn) {
        free(xv), free(rv), free(wv), free(yv), free(hv), free(hn);
        return nmo_err_set(err, NMO_ERR_NOMEM, "fused_add_rms_norm candidate: out of memory");
    }
    const nmo_fmt st = a->plan->in;
    for (int64_t i = 0; i < M; i++) {
        for (int64_t j = 0; j < N; j++) {
            float s = xv[i * N + j] + rv[i * N + j];
            hv[i * N + j] = s; /* stored below with the store rounding */
            hn[j] = c->norm_x ? xv[i * N + j] : c->h_fp32 ? s : nmo_cu_round_to(st, s);
        }
        float ss = c->acc16 ? nmo_cu_sum_acc16(hn, hn, N, (nmo_fmt)c->acc16, c->fma)
                            : nmo_cu_reduce(hn, hn, N, c->red, c->fma);
        float ms = c->mean_recip ? ss * (1.0f / (float)N) : ss / (float)N;
        float d = c->no_eps ? ms : ms + eps;
        float r = c->rsqrt_emul ? nmo_cu_rsqrtf(d) : 1.0f / sqrtf(d);
        for (int64_t j = 0; j < N; j++) {
            float h = hn[j], wj = offset != 0 ? offset + wv[j] : wv[j], v;
            if (c->round_hr) v = nmo_cu_round_to(st, h * r) * wj;
            else if (c->assoc == 1) v = h * (r * wj);
            else if (c->assoc == 2) v = (h * wj) * r;
            else v = (h * r) * wj;
            yv[i * N + j] = v;
        }
        if (c->residual_stale)
            for (int64_t j = 0; j < N; j++) hv[i * N + j] = xv[i * N + j];
    }
    nmo_cu_store(&a->out[0], yv, nmo_cu_plan_store(a->plan));
    nmo_cu_store(&a->out[1], hv, c->residual_rz ? NMO_CU_ST_RZ : nmo_cu_plan_store(a->plan));
    free(xv), free(rv), free(wv), free(yv), free(hv), free(hn);
    return NMO_OK;
}

#define FAR_DEFAULT .red = NMO_CU_RED_BLOCK256, .fma = 1, .mean_recip = 0, .rsqrt_emul = 1, .assoc = 0

#define FAR_CAND(fname, ...)                                                         \
    static nmo_status fname(const nmo_cand_args *a, nmo_err *err) {                  \
        static const far_cfg c = {__VA_ARGS__};                                      \
        return far_run(a, err, &c);                                                  \
    }

FAR_CAND(far_block256, FAR_DEFAULT)
FAR_CAND(far_flashinfer, .red = NMO_CU_RED_WARP32, .fma = 1, .mean_recip = 1, .rsqrt_emul = 1, .assoc = 0,
         .h_fp32 = 1)
FAR_CAND(far_seq, .red = NMO_CU_RED_SEQ, .fma = 0, .mean_recip = 1, .rsqrt_emul = 0, .assoc = 1)
FAR_CAND(far_vec4, .red = NMO_CU_RED_VEC4, .fma = 0, .mean_recip = 0, .rsqrt_emul = 1, .assoc = 2)

FAR_CAND(far_mut_residual_stale, FAR_DEFAULT, .residual_stale = 1)
FAR_CAND(far_mut_norm_x, FAR_DEFAULT, .norm_x = 1)
FAR_CAND(far_mut_residual_rz, FAR_DEFAULT, .residual_rz = 1)
FAR_CAND(far_mut_acc_bf16, FAR_DEFAULT, .acc16 = NMO_BF16)
FAR_CAND(far_mut_no_eps, FAR_DEFAULT, .no_eps = 1)
FAR_CAND(far_mut_round_hr, FAR_DEFAULT, .round_hr = 1)

const nmo_cand nmo_cand_fused_add_rms_norm[] = {
    {"fused_add_rms_norm", "block256", 1,
     "vLLM-style block: h = stored x+residual, fmaf sum of squares, 8 warp butterflies, ss/N, rsqrtf, (h*r)*w",
     far_block256, NULL},
    {"fused_add_rms_norm", "flashinfer", 1,
     "FlashInfer-style: the norm of the fp32 sum (not the stored h), warp32, ss*(1/N), rsqrtf, (h*r)*w",
     far_flashinfer, NULL},
    {"fused_add_rms_norm", "seq", 1, "one thread per row, x*x then add, ss*(1/N), 1/sqrtf, h*(r*w)", far_seq, NULL},
    {"fused_add_rms_norm", "vec4", 1, "float4 loads: 4 accumulators, ss/N, rsqrtf, (h*w)*r", far_vec4, NULL},
    {"fused_add_rms_norm", "mut_residual_stale", 0, "MUTANT: the new residual is never written (residual_out = x)",
     far_mut_residual_stale, NULL},
    {"fused_add_rms_norm", "mut_norm_x", 0, "MUTANT: y normalizes x, not x + residual", far_mut_norm_x, NULL},
    {"fused_add_rms_norm", "mut_residual_rz", 0, "MUTANT: the new residual is stored by truncation (RZ)",
     far_mut_residual_rz, NULL},
    {"fused_add_rms_norm", "mut_acc_bf16", 0, "MUTANT: sum of squares in a bf16 accumulator", far_mut_acc_bf16, NULL},
    {"fused_add_rms_norm", "mut_no_eps", 0, "MUTANT: eps dropped, r = rsqrtf(ms)", far_mut_no_eps, NULL},
    {"fused_add_rms_norm", "mut_round_hr", 0,
     "MUTANT under the fused plan: h*r rounded to the storage dtype before *w (vLLM's kernels; "
     "correct under a plan with inter=<storage dtype>)",
     far_mut_round_hr, "inter={dtype}"},
};
const int nmo_cand_fused_add_rms_norm_n =
    (int)(sizeof nmo_cand_fused_add_rms_norm / sizeof nmo_cand_fused_add_rms_norm[0]);
