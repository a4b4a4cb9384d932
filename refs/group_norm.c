/* group_norm (forward): x[N, C, H, W] (NCHW, packed), w[C], b[C]; G = groups divides C.
 * For sample n and group g the statistics are taken over the L = (C/G)*H*W contiguous
 * elements of channels g*C/G .. (g+1)*C/G - 1:
 *   y = (x - mean_ng) * rstd_ng * w[c] + b[c],  rstd_ng = 1/sqrt(var_ng + eps).
 *
 * Rounding points (compute, RNE, unless said otherwise), as layer_norm over each group
 * (refs/norm_common.h), fused (inter == compute):
 *   sum  = sum x over the group      any order and tree, in `acc`
 *   mean = sum / L                   or sum * RN(1/L)
 *   d    = x - mean
 *   ss   = sum d^2                   any order and tree, FMA or not, in `acc`
 *   var  = ss / L                    or ss * RN(1/L)
 *   rstd = rsqrt(var + eps)          plan accuracy, or RN(1/RN(sqrt))
 *   y    = d * rstd * w[c] + b[c]    any association, FMA or not; or
 *          (d / sqrt(var+eps)) * w[c] + b[c]; or the fused per-(n, c) scale/shift
 *          a = w[c]*rstd, y = x*a + (b[c] - mean*a) (PyTorch, cuDNN; FMA or not)
 * Eager (inter != compute): PyTorch's native_group_norm returns mean and rstd in the
 * input dtype and its kernels read them back from there, and its moments kernel takes
 * eps as a kernel argument of the input type (RowwiseMomentsCUDAKernel<T>(N, T eps, ..)):
 *   eps  held as RN(eps) or RN_inter(RN(eps))              (hull)
 *   mean_r = RN_inter(mean), rstd_r = RN_inter(rstd)       (the same statistics as above)
 *   a    = RN(w[c] * rstd_r); y = x*a + (b[c] - mean_r*a)  (ComputeFusedParams + the
 *          elementwise kernel, FMA or not), or d_r * rstd_r * w[c] + b[c] with
 *          d_r = RN(x - mean_r) (GroupNorm1dForward, HxW == 1; any association, FMA)
 *   (H200, PyTorch 2.11, F.group_norm bf16/fp16, 2x8x7x9 and 1x16x16x16, every family:
 *   3 mismatches of 71456 elements with rounded statistics and eps, 5811 with rounded
 *   statistics and an fp32 eps, 30273 with neither)
 *   store y into `out`               (checker: plan round)
 * onepass=1 (param): the variance in one pass, as Liger-Kernel's _group_norm_forward_kernel
 * (squared_sum / L - m * m; fused plans only):
 *   sum = sum x, sq = sum x^2   any order and tree, FMA or not, in `acc`
 *   mean = sum / L; var = sq / L - mean*mean   (mean*mean rounded, or one FMA)
 *   rstd, y as above.
 * Covered: two-pass statistics, and one-pass ones under onepass=1. Not covered: Welford
 * statistics (PyTorch's native RowwiseMoments), channels-last layouts, eager programs that
 * store more than the statistics (x - mean, the variance). */
#include "engine/ref.h"
#include "refs/norm_common.h"

/* Eager statistics (see the top): mean and rstd rounded into inter, eps held as RN(eps)
 * or RN_inter(RN(eps)). The same two-pass sums as norm_two_pass. */
static void NMO_REF(gn_eager_stats)(E_CTX *ctx, const double *x, E *xe, E *d, int64_t n, double eps,
                                    nmo_fmt inter, E *mean, E *rstd)
{
    E sum, ss, var, ep, ep2, v;
    enc_init(ctx, &sum), enc_init(ctx, &ss), enc_init(ctx, &var), enc_init(ctx, &ep);
    enc_init(ctx, &ep2), enc_init(ctx, &v);
    for (int64_t j = 0; j < n; j++) enc_set_d(ctx, &xe[j], x[j]);
    const E *fx[1] = {xe};
    enc_dotk(ctx, &sum, fx, 1, n, 0);
    enc_div_si(ctx, mean, &sum, n);
    for (int64_t j = 0; j < n; j++) enc_sub(ctx, &d[j], &xe[j], mean);
    const E *f[2] = {d, d};
    enc_dotk(ctx, &ss, f, 2, n, 0);
    enc_div_si(ctx, &var, &ss, n);
    enc_const(ctx, &ep, eps);
    enc_round(ctx, &ep2, &ep, inter, NMO_RNE, 0);
    enc_hull(ctx, &ep, &ep, &ep2);
    enc_add(ctx, &v, &var, &ep);
    enc_rsqrt(ctx, rstd, &v);
    enc_round(ctx, rstd, rstd, inter, NMO_RNE, 0);
    enc_round(ctx, mean, mean, inter, NMO_RNE, 0);
    enc_clear(ctx, &sum), enc_clear(ctx, &ss), enc_clear(ctx, &var), enc_clear(ctx, &ep);
    enc_clear(ctx, &ep2), enc_clear(ctx, &v);
}

/* One-pass statistics (onepass=1): E[x^2] - mean^2; fills xe[j] and d[j] = x_j - mean. */
static void NMO_REF(gn_one_pass)(E_CTX *ctx, const double *x, E *xe, E *d, int64_t n, double eps,
                                 E *mean, E *rstd, E *s)
{
    E sum, sq, ex2, mm, var, v2, ep, v;
    enc_init(ctx, &sum), enc_init(ctx, &sq), enc_init(ctx, &ex2), enc_init(ctx, &mm);
    enc_init(ctx, &var), enc_init(ctx, &v2), enc_init(ctx, &ep), enc_init(ctx, &v);
    for (int64_t j = 0; j < n; j++) enc_set_d(ctx, &xe[j], x[j]);
    const E *fx[1] = {xe}, *f2[2] = {xe, xe};
    enc_dotk(ctx, &sum, fx, 1, n, 0);
    enc_dotk(ctx, &sq, f2, 2, n, 0);
    enc_div_si(ctx, mean, &sum, n);
    enc_div_si(ctx, &ex2, &sq, n);
    enc_mul(ctx, &mm, mean, mean);
    enc_sub(ctx, &var, &ex2, &mm);
    enc_neg(ctx, &mm, mean);
    enc_fma(ctx, &v2, &mm, mean, &ex2); /* the contracted form */
    enc_hull(ctx, &var, &var, &v2);
    enc_const(ctx, &ep, eps);
    enc_add(ctx, &v, &var, &ep);
    enc_rsqrt(ctx, rstd, &v);
    enc_sqrt(ctx, s, &v);
    for (int64_t j = 0; j < n; j++) enc_sub(ctx, &d[j], &xe[j], mean);
    enc_clear(ctx, &sum), enc_clear(ctx, &sq), enc_clear(ctx, &ex2), enc_clear(ctx, &mm);
    enc_clear(ctx, &var), enc_clear(ctx, &v2), enc_clear(ctx, &ep), enc_clear(ctx, &v);
}

void NMO_REF(nmo_ref_group_norm_eval)(E_CTX *ctx, const nmo_case *c, int64_t u, nmo_fenc **out)
{
    int64_t C = c->shape[1], HW = c->shape[2] * c->shape[3];
    int64_t G = (int64_t)c->param[0], cg = C / G, L = cg * HW, g = u % G;
    double *x = enc_dvec(ctx, 0, L);
    double *w = enc_dvec(ctx, 1, C);
    double *b = enc_dvec(ctx, 2, C);
    nmo_tensor_load_f64(x, &c->in[0], u * L, L, 1);
    nmo_tensor_load_f64(w, &c->in[1], 0, C, 1);
    nmo_tensor_load_f64(b, &c->in[2], 0, C, 1);
    E *xe = enc_evec(ctx, 0, L);
    E *d = enc_evec(ctx, 1, L);
    E mean, rstd, s, we, be, y;
    enc_init(ctx, &mean), enc_init(ctx, &rstd), enc_init(ctx, &s), enc_init(ctx, &we);
    enc_init(ctx, &be), enc_init(ctx, &y);
    norm_tmp t;
    norm_tmp_init(ctx, &t);

    if (c->plan.inter != c->plan.compute) {
        NMO_REF(gn_eager_stats)(ctx, x, xe, d, L, c->param[1], c->plan.inter, &mean, &rstd);
        for (int64_t j = 0; j < L; j++) {
            int64_t ch = g * cg + j / HW;
            enc_set_d(ctx, &we, w[ch]);
            enc_set_d(ctx, &be, b[ch]);
            enc_mul(ctx, &t.a, &we, &rstd); /* fused params from the stored statistics */
            enc_scale_shift(ctx, &y, &xe[j], &t.a, &mean, &be);
            enc_sub(ctx, &t.q, &xe[j], &mean); /* direct form, d from the stored mean */
            const E *f3[3] = {&t.q, &rstd, &we};
            enc_prodk(ctx, &t.p, f3, 3, 1);
            enc_add(ctx, &t.y1, &t.p, &be);
            enc_hull(ctx, &y, &y, &t.y1);
            enc_export(ctx, &out[0][j], &y);
        }
    } else {
        if (c->param[2] == 1)
            NMO_REF(gn_one_pass)(ctx, x, xe, d, L, c->param[1], &mean, &rstd, &s);
        else
            norm_two_pass(ctx, x, xe, d, L, c->param[1], &mean, &rstd, &s);
        for (int64_t j = 0; j < L; j++) {
            int64_t ch = g * cg + j / HW;
            enc_set_d(ctx, &we, w[ch]);
            enc_set_d(ctx, &be, b[ch]);
            norm_affine(ctx, &t, &y, &xe[j], &d[j], &mean, &rstd, &s, &we, &be);
            enc_export(ctx, &out[0][j], &y);
        }
    }

    norm_tmp_clear(ctx, &t);
    enc_clear(ctx, &mean), enc_clear(ctx, &rstd), enc_clear(ctx, &s), enc_clear(ctx, &we);
    enc_clear(ctx, &be), enc_clear(ctx, &y);
}

#ifdef NMO_ENGINE_FAST
#include "refs/ref_common.h"

void NMO_REF_CERT(nmo_ref_group_norm_eval)(nmo_cctx *ctx, const nmo_case *c, int64_t u, nmo_fenc **out);

static nmo_status group_norm_setup(nmo_case *c, nmo_err *err)
{
    if (c->nshape != 4)
        return nmo_err_set(err, NMO_ERR_SHAPE, "group_norm: shape must be NxCxHxW, got %d dims",
                           c->nshape);
    double g = c->param[0];
    if (!(g >= 1) || g != floor(g) || g > (double)c->shape[1] || c->shape[1] % (int64_t)g != 0)
        return nmo_err_set(err, NMO_ERR_SHAPE,
                           "group_norm: groups=%g must be a positive integer dividing C=%lld", g,
                           (long long)c->shape[1]);
    if (c->param[2] != 0 && c->param[2] != 1)
        return nmo_err_set(err, NMO_ERR_SHAPE, "group_norm: onepass=%g must be 0 or 1", c->param[2]);
    if (c->param[2] == 1 && c->plan.inter != c->plan.compute)
        return nmo_err_set(err, NMO_ERR_SHAPE,
                           "group_norm: onepass=1 models a fused kernel only: the plan's inter must "
                           "equal compute");
    int64_t C = c->shape[1];
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[0], c->plan.in, 4, c->shape, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[1], c->plan.in, 1, &C, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[2], c->plan.in, 1, &C, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->out[0], c->plan.out, 4, c->shape, err));
    return NMO_OK;
}

/* The statistics' extent: one (sample, group) block of (C/G)*H*W elements. */
static int64_t group_norm_row_len(const nmo_case *c)
{
    return c->shape[1] / (int64_t)c->param[0] * c->shape[2] * c->shape[3];
}

static int64_t group_norm_units(const nmo_case *c) { return c->shape[0] * (int64_t)c->param[0]; }

static void group_norm_span(const nmo_case *c, int64_t u, int k, int64_t *begin, int64_t *count,
                            int64_t *stride)
{
    (void)k;
    int64_t L = group_norm_row_len(c);
    *begin = u * L;
    *count = L;
    *stride = 1;
}

const nmo_op nmo_op_group_norm = {
    .name = "group_norm",
    .summary = "group normalization of NCHW input over (C/G)*H*W per group, times w[c] plus b[c]",
    .shape_doc = "NxCxHxW (NCHW); groups must divide C",
    .rounding_doc = "per group: mean=sum x/L (any order, acc); d=x-mean; var=sum d^2/L (any "
                    "order, acc); rstd=rsqrt(var+eps)|1/sqrt; y=d*rstd*w+b any association, FMA "
                    "or not | d/sqrt*w+b | x*a+(b-mean*a), a=w*rstd; two-pass, or onepass=1: "
                    "var=sum x^2/L-mean*mean (FMA or not); "
                    "inter!=compute: mean, rstd (and eps) stored in inter (PyTorch eager)",
    .n_in = 3,
    .in = {{"x", NMO_ROLE_DATA, "input [N, C, H, W]"},
           {"w", NMO_ROLE_WEIGHT, "per-channel weight [C]"},
           {"b", NMO_ROLE_BIAS, "per-channel bias [C]"}},
    .n_out = 1,
    .out = {{"y", NMO_ROLE_DATA, "output [N, C, H, W]"}},
    .n_param = 3,
    .param = {{"groups", 4, "number of groups G (divides C)"},
              {"eps", 1e-5, "added to the variance inside the root", NMO_PDOM_NONNEG},
              {"onepass", 0, "1: variance E[x^2]-mean^2 in one pass (Liger-Kernel)", NMO_PDOM_NONNEG}},
    .dtypes = "fp32 bf16 fp16",
    .test_shapes = "2x12x5x21;4x8x4x4",
    .test_shapes_large = "2x12x33x41;4x8x4x4",
    /* fused kernel only; dotk sums ignore sum= */
    .plan_fields = NMO_PF_COMPUTE | NMO_PF_ACC | NMO_PF_FN | NMO_PF_INTER | NMO_PF_SUM_GEOM,
    .plan_vacuous = 0,
    .setup = group_norm_setup,
    .row_len = group_norm_row_len,
    .units = group_norm_units,
    .unit_span = group_norm_span,
    .eval_fast = NMO_REF_FAST(nmo_ref_group_norm_eval),
    .eval_cert = NMO_REF_CERT(nmo_ref_group_norm_eval),
};
#endif
