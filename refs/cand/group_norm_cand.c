/* numoracle: CPU candidates for group_norm — emulations of two-pass GroupNorm forward
 * kernels on NCHW input.
 *
 *   in  x[N, C, H, W], w[C], b[C]   dtype plan->in
 *   out y[N, C, H, W]               dtype plan->out
 *   param[0] groups G (default 4), param[1] eps (default 1e-5, as a float).
 *
 * Each (sample, group) block of L = (C/G)*H*W contiguous elements is one segment of
 * norm_cand_util.h (statistics in the kernel's tree, the affine step in the kernel's
 * form with w[c], b[c] of the element's channel). The first correct variant is the
 * default; mutants are the default kernel with one realistic bug each.
 *
 * PyTorch eager on a 16-bit dtype (F.group_norm, 2.11 on an H200: 3 mismatches of 71456
 * elements): native_group_norm stores mean and rstd in the input dtype, its moments
 * kernel takes eps as an argument of that type, and the fused-parameter kernel reads the
 * stored statistics: a = w*rstd, sh = RN(-a*mean) + b, y = fmaf(x, a, sh). mut_eager
 * (two-pass statistics) and mut_eager_welford (PyTorch's per-thread Welford moments,
 * warp / 512-thread combine) are correct only under a plan with inter=<input dtype>
 * (negative controls of the fused plan); mut_eager_stats_rz (statistics stored by
 * truncation) and mut_eager_stats_index (the stored statistics read at n*G + c % G
 * instead of n*G + c / (C/G)) are bugs of that program and FAIL under inter too. */
#include "norm_cand_util.h"

/* f stored into bf16/fp16 by truncation (RZ), read back; fp32 unchanged (mutants). */
static inline float nmo_sf_trunc_to_gn(nmo_fmt fmt, float f) {
    if (fmt == NMO_BF16) return nmo_cu_bf16_to_f(nmo_cu_f_to_bf16_rz(f));
    if (fmt == NMO_FP16) return nmo_cu_fp16_to_f(nmo_cu_f_to_fp16_rz(f));
    return f;
}

typedef struct {
    nmo_nc_cfg nc;
    int w_by_group;  /* MUTANT: w/b indexed by the group g instead of the channel c */
    int per_channel; /* MUTANT: statistics over one channel's H*W instead of the group */
    /* PyTorch eager: mean, rstd (and eps) stored in plan->in; 2: Welford moments */
    int eager;
    int stats_rz;    /* eager mutant: statistics stored by truncation */
    int stats_index; /* eager mutant: statistics of group c % G used for channel c */
} gn_cfg;

/* PyTorch's Welford state (WelfordData: mean, m2, count as float) and its two steps
 * (WelfordOps::reduce and ::combine; m2's multiply-add contracted, as nvcc does). */
typedef struct {
    float mean, m2, nf;
} gn_welford;

static gn_welford gn_wf_reduce(gn_welford a, float x) {
    float nf = a.nf + 1.0f, delta = x - a.mean, mean = a.mean + delta / nf;
    return (gn_welford){mean, fmaf(delta, x - mean, a.m2), nf};
}

static gn_welford gn_wf_combine(gn_welford a, gn_welford b) {
    if (a.nf == 0.0f) return b;
    if (b.nf == 0.0f) return a;
    float delta = b.mean - a.mean, n = a.nf + b.nf, nb = b.nf / n;
    return (gn_welford){fmaf(delta, nb, a.mean), a.m2 + b.m2 + delta * delta * a.nf * nb, n};
}

/* RowwiseMomentsCUDAKernel: T threads (32 when L < 512, else 512) stride over x; warps
 * combine by shfl_down (lane l takes l + o, o = 16 .. 1), warp leaders then in warp 0. */
static void gn_welford_moments(const float *x, int64_t L, float *mean, float *var) {
    int T = L < 512 ? 32 : 512;
    gn_welford t[512];
    for (int i = 0; i < T; i++) {
        t[i] = (gn_welford){0.0f, 0.0f, 0.0f};
        for (int64_t j = i; j < L; j += T) t[i] = gn_wf_reduce(t[i], x[j]);
    }
    gn_welford w[16];
    int nw = T / 32;
    for (int k = 0; k < nw; k++) {
        gn_welford *l = t + 32 * k;
        for (int o = 16; o >= 1; o >>= 1)
            for (int i = 0; i + o < 32; i++) l[i] = gn_wf_combine(l[i], l[i + o]);
        w[k] = l[0];
    }
    gn_welford r = w[0];
    if (nw > 1) {
        gn_welford l[32];
        for (int i = 0; i < 32; i++) l[i] = i < nw ? w[i] : (gn_welford){0.0f, 0.0f, 0.0f};
        for (int o = 16; o >= 1; o >>= 1)
            for (int i = 0; i + o < 32; i++) l[i] = gn_wf_combine(l[i], l[i + o]);
        r = l[0];
    }
    *mean = r.mean;
    *var = r.m2 / r.nf;
}

static nmo_status gn_run(const nmo_cand_args *a, nmo_err *err, const gn_cfg *c) {
    static const char op[] = "group_norm";
    NMO_RETURN_IF_ERR(nmo_cu_check_args(a, op, 3, 1, err));
    const nmo_tensor *x = &a->in[0];
    if (x->ndims != 4) return nmo_err_set(err, NMO_ERR_USAGE, "group_norm candidate: x has %d dims", x->ndims);
    int64_t N = x->dims[0], C = x->dims[1], HW = x->dims[2] * x->dims[3];
    double gd = nmo_nc_param(a, 0, 4);
    if (!(gd >= 1) || gd != floor(gd) || C % (int64_t)gd != 0)
        return nmo_err_set(err, NMO_ERR_USAGE, "group_norm candidate: groups=%g does not divide C", gd);
    int64_t G = (int64_t)gd, cg = C / G, L = cg * HW;
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(x, op, "x", a->plan->in, 4, x->dims, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->in[1], op, "w", a->plan->in, 1, &C, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->in[2], op, "b", a->plan->in, 1, &C, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->out[0], op, "y", a->plan->out, 4, x->dims, err));
    if (L < 2) return nmo_err_set(err, NMO_ERR_USAGE, "group_norm candidate: group of %lld elements", (long long)L);
    const float eps = (float)nmo_nc_param(a, 1, 1e-5);
    float *xv = nmo_cu_load(x), *wv = nmo_cu_load(&a->in[1]), *bv = nmo_cu_load(&a->in[2]);
    float *yv = (float *)malloc((size_t)(N * C * HW) * sizeof(float));
    float *d = (float *)malloc((size_t)L * sizeof(float));
    float *ws = (float *)malloc((size_t)L * sizeof(float));
    float *bs = (float *)malloc((size_t)L * sizeof(float));
    if (!xv || !wv || !bv || !yv || !d || !ws || !bs) {
        free(xv), free(wv), free(bv), free(yv), free(d), free(ws), free(bs);
        return nmo_err_set(err, NMO_ERR_NOMEM, "group_norm candidate: out of memory");
    }
    if (c->eager) { /* stored statistics, then the fused-parameter elementwise kernel */
        const nmo_fmt fi = a->plan->in;
        float *st = (float *)malloc((size_t)(2 * N * G) * sizeof(float));
        if (!st) {
            free(xv), free(wv), free(bv), free(yv), free(d), free(ws), free(bs);
            return nmo_err_set(err, NMO_ERR_NOMEM, "group_norm candidate: out of memory");
        }
        const float eps_t = nmo_cu_round_to(fi, eps);
        for (int64_t ng = 0; ng < N * G; ng++) {
            float mean, rstd, sdev, var;
            if (c->eager == 2) {
                gn_welford_moments(xv + ng * L, L, &mean, &var);
                rstd = nmo_cu_rsqrtf((var > 0.0f ? var : 0.0f) + eps_t);
            } else {
                nmo_nc_stats(xv + ng * L, d, L, eps_t, &c->nc, &mean, &rstd, &sdev);
            }
            st[2 * ng] = c->stats_rz ? nmo_sf_trunc_to_gn(fi, mean) : nmo_cu_round_to(fi, mean);
            st[2 * ng + 1] = c->stats_rz ? nmo_sf_trunc_to_gn(fi, rstd) : nmo_cu_round_to(fi, rstd);
        }
        for (int64_t n = 0; n < N; n++)
            for (int64_t ch = 0; ch < C; ch++) {
                int64_t ng = n * G + (c->stats_index ? ch % G : ch / cg);
                float sa = wv[ch] * st[2 * ng + 1];
                float sh = -sa * st[2 * ng] + bv[ch];
                for (int64_t j = 0; j < HW; j++) {
                    int64_t i = (n * C + ch) * HW + j;
                    yv[i] = fmaf(xv[i], sa, sh);
                }
            }
        free(st);
        G = 0; /* the loop below does nothing */
    }
    for (int64_t n = 0; n < N; n++)
        for (int64_t g = 0; g < G; g++) {
            int64_t off = (n * G + g) * L;
            for (int64_t j = 0; j < L; j++) {
                int64_t ch = c->w_by_group ? g : g * cg + j / HW;
                ws[j] = wv[ch];
                bs[j] = bv[ch];
            }
            if (c->per_channel) /* each channel of the group normalized on its own */
                for (int64_t q = 0; q < cg; q++)
                    nmo_nc_segment(xv + off + q * HW, ws + q * HW, bs + q * HW, yv + off + q * HW, d,
                                   HW, eps, &c->nc);
            else
                nmo_nc_segment(xv + off, ws, bs, yv + off, d, L, eps, &c->nc);
        }
    nmo_cu_store(&a->out[0], yv, nmo_cu_plan_store(a->plan));
    free(xv), free(wv), free(bv), free(yv), free(d), free(ws), free(bs);
    return NMO_OK;
}

#define GN_DEFAULT .nc = {.red = NMO_CU_RED_PAIRWISE, .fma = 0, .mean_recip = 0, .rsqrt_emul = 1, \
                          .form = NMO_NC_DIRECT_FMA}

#define GN_CAND(fname, ...)                                                          \
    static nmo_status fname(const nmo_cand_args *a, nmo_err *err) {                  \
        static const gn_cfg c = {__VA_ARGS__};                                       \
        return gn_run(a, err, &c);                                                   \
    }

GN_CAND(gn_triton, GN_DEFAULT)
GN_CAND(gn_fused_block256, .nc = {.red = NMO_CU_RED_BLOCK256, .fma = 1, .mean_recip = 0, .rsqrt_emul = 1,
                                  .form = NMO_NC_FUSED})
GN_CAND(gn_warp32_div, .nc = {.red = NMO_CU_RED_WARP32, .fma = 1, .mean_recip = 1, .rsqrt_emul = 0,
                              .form = NMO_NC_DIVISION})
GN_CAND(gn_ktile_dw, .nc = {.red = NMO_CU_RED_KTILE32, .fma = 0, .mean_recip = 1, .rsqrt_emul = 0,
                            .form = NMO_NC_DIRECT_DW})

GN_CAND(gn_mut_naive_var, .nc = {.red = NMO_CU_RED_PAIRWISE, .rsqrt_emul = 1, .form = NMO_NC_DIRECT_FMA,
                                 .naive_var = 1})
GN_CAND(gn_mut_w_by_group, GN_DEFAULT, .w_by_group = 1)
GN_CAND(gn_mut_per_channel, GN_DEFAULT, .per_channel = 1)
GN_CAND(gn_mut_var_n1, .nc = {.red = NMO_CU_RED_PAIRWISE, .rsqrt_emul = 1, .form = NMO_NC_DIRECT_FMA,
                              .var_n1 = 1})
GN_CAND(gn_mut_acc_bf16, .nc = {.red = NMO_CU_RED_PAIRWISE, .rsqrt_emul = 1, .form = NMO_NC_DIRECT_FMA,
                                .acc16 = NMO_BF16})
#define GN_EAGER_NC .nc = {.red = NMO_CU_RED_BLOCK256, .fma = 1, .rsqrt_emul = 1}
#define GN_EAGER GN_EAGER_NC, .eager = 1
GN_CAND(gn_mut_eager, GN_EAGER)
GN_CAND(gn_mut_eager_welford, GN_EAGER_NC, .eager = 2)
GN_CAND(gn_mut_eager_stats_rz, GN_EAGER, .stats_rz = 1)
GN_CAND(gn_mut_eager_stats_index, GN_EAGER, .stats_index = 1)

const nmo_cand nmo_cand_group_norm[] = {
    {"group_norm", "triton", 1,
     "one program per (n, g): tree sums, mean=s/L, var=sum(d*d)/L, rsqrtf, fmaf(d*rstd, w[c], b[c])", gn_triton, NULL},
    {"group_norm", "fused_block256", 1,
     "256-thread block two-pass stats, fused per-channel a=w*rstd, sh=fmaf(-mean,a,b), y=fmaf(x,a,sh)",
     gn_fused_block256, NULL},
    {"group_norm", "warp32_div", 1,
     "one warp per group: fmaf partials + xor butterfly, *(1/L), y = (d / sqrtf(var+eps)) * w + b", gn_warp32_div, NULL},
    {"group_norm", "ktile_dw", 1, "tiles of 32 summed in order, *(1/L), 1/sqrtf, (d*w)*rstd + b", gn_ktile_dw, NULL},
    {"group_norm", "mut_naive_var", 0,
     "MUTANT: one-pass variance E[x^2] - mean^2 (as Liger-Kernel's group_norm)", gn_mut_naive_var, NULL},
    {"group_norm", "mut_w_by_group", 0, "MUTANT: w/b indexed by the group instead of the channel",
     gn_mut_w_by_group, NULL},
    {"group_norm", "mut_per_channel", 0, "MUTANT: statistics over each channel's H*W, not the group",
     gn_mut_per_channel, NULL},
    {"group_norm", "mut_var_n1", 0, "MUTANT: unbiased variance, / (L-1)", gn_mut_var_n1, NULL},
    {"group_norm", "mut_acc_bf16", 0, "MUTANT: both sums in bf16 accumulators", gn_mut_acc_bf16, NULL},
    {"group_norm", "mut_eager", 0,
     "MUTANT under the fused plan: PyTorch eager, two-pass mean and rstd (eps in the input dtype) stored in the "
     "input dtype, a=w*rstd, sh=-a*mean+b, y=fmaf(x,a,sh) (correct under a plan with inter=<input dtype>)",
     gn_mut_eager, "inter={dtype}"},
    {"group_norm", "mut_eager_welford", 0,
     "MUTANT under the fused plan: PyTorch eager with its Welford moments kernel (correct under a plan with "
     "inter=<input dtype>)",
     gn_mut_eager_welford, "inter={dtype}"},
    {"group_norm", "mut_eager_stats_rz", 0,
     "MUTANT (also under inter=<dtype>): eager statistics stored by truncation (RZ)", gn_mut_eager_stats_rz, NULL},
    {"group_norm", "mut_eager_stats_index", 0,
     "MUTANT (also under inter=<dtype>): eager stored statistics read at n*G + c%G instead of n*G + c/(C/G)",
     gn_mut_eager_stats_index, NULL},
};
const int nmo_cand_group_norm_n = (int)(sizeof nmo_cand_group_norm / sizeof nmo_cand_group_norm[0]);
