/* cross_entropy_bwd: the gradient of cross_entropy (refs/cross_entropy.c) with respect to
 * the logits, for a scalar grad_output g:
 *   dx[i,j] = (p[i,j] - t[i,j]) * g / n,  p = softmax(x[i,:]),
 *   t[i,j] = (1-ls) [j == y_i] + ls/V,   n = the non-ignored row count (mean) or 1;
 * rows whose label is ignore_index get dx = 0. (For reduction 0 a per-row grad_output
 * would be a tensor; here the one scalar g scales every row.)
 *
 * Inputs and labels as in cross_entropy (labels fp32 integer values; generated rows
 * i % 7 == 1 get ignore_index).
 *
 * Rounding points (compute, RNE, unless said otherwise):
 *   m, e_j = exp(RN(x_j - m)), s = sum e_j (any order, acc), l = log(s), lse = RN(m + l)
 *   p_j = e_j/s | e_j*RN(1/s) | exp(lp_j) with lp_j = RN(RN(x_j-m)-l) | RN(x_j-lse)
 *         (PyTorch's log_softmax backward; lp_j stored in `inter` when inter != compute)
 *   constants: eps = ls/V as RN(RN(ls)/V) | RN(RN(ls)*RN(1/V)) | RN(ls/V); 1-ls as
 *         RN(1-RN(ls)) | RN(1-ls); g = RN(grad_output); G = g/n | g*RN(1/n)
 *   dx_j, hull of:
 *     Liger:    q = RN(RN(p - eps) / n); at y: q = RN(q - RN((1-ls)/n)); q stored in
 *               `inter` when inter != compute; dx = RN(q * g)
 *     textbook: v = RN(p - t_j) with t_y = RN((1-ls) + eps); dx = RN(RN(v/n) * g) |
 *               RN(RN(v*g)/n) | RN(v*G)
 *     PyTorch, fused (inter == compute only): dx = p*G - RN(t_j*G) with or without FMA
 *               (nll backward then log_softmax backward: gl_y = -G, dx = gl + p*G)
 *     PyTorch's autograd graph (every plan; with inter == compute the stores below are
 *               exact and this is PyTorch's fp32 eager backward, whose label-smoothing
 *               gradient sums to S = sum_j G_j, not exactly -G: before this member an
 *               fp32 eager backward with ls > 0 FAILed the fused plan in 17 of 84
 *               sampled fp32 runs, tests/test_eager_plans.c): autograd of log_softmax,
 *               nll_loss and (ls > 0) cross_entropy_loss_label_smoothing's tensor
 *               operations, every gradient tensor stored in `inter`:
 *               gr = RN_inter(g); nll_loss's total_weight is stored in the input dtype
 *               and its backward divides by it: c = RN_inter(gr / RN_inter(n)) (hull
 *               with / n: the count held exactly);
 *               ls = 0:  G_y = -c, G_j = 0 elsewhere;
 *               ls > 0:  gn = RN_inter(gr * RN(1-ls)), c from gn; gs = RN_inter(gr *
 *                        RN(ls/V)), mean: gs = RN_inter(gs / n); G_j = -gs, G_y =
 *                        RN_inter(-c - gs);
 *               S = sum_j G_j (any order, acc); dx_j = G_j - exp(RN_inter(lp_j)) * S, FMA
 *               or not (log_softmax backward reads the stored log-softmax)
 *               (H200, PyTorch 2.11, ls = 0, mean, 8x1001 and 2x8192, every family, bf16
 *               and fp16: 0 mismatches of 8008 / 16384 elements per case; ls > 0 is the
 *               same autograd graph, not checked against real outputs)
 *   store dx into `out` (checker: plan round).
 * Not covered: online (multi-block) softmax, Triton's approximate exp/log (fn=fast),
 * class weights, z-loss, softcapping. */
#include "smx_ref.h"

#define CE_P_IGNORE 0
#define CE_P_LS 1
#define CE_P_RED 2
#define CE_P_GRAD 3

void NMO_REF(nmo_ref_cross_entropy_bwd_eval)(E_CTX *ctx, const nmo_case *c, int64_t u, nmo_fenc **out)
{
    int64_t V = c->in[0].dims[c->in[0].ndims - 1];
    int64_t rows = nmo_tensor_numel(&c->in[1]);
    double ls = c->param[CE_P_LS];
    int red = (int)c->param[CE_P_RED];
    int64_t y = nmo_sf_ref_label(&c->in[1], u, V, c->param[CE_P_IGNORE]);
    E r, z;
    enc_init(ctx, &r), enc_init(ctx, &z);
    if (y < 0) {
        if (y == -1) enc_const(ctx, &r, 0.0);
        else NMO_REF(nmo_sf_anything)(ctx, &r);
        for (int64_t j = 0; j < V; j++) enc_export(ctx, &out[0][j], &r);
        enc_clear(ctx, &r), enc_clear(ctx, &z);
        return;
    }
    int64_t n = red == 1 ? nmo_sf_ref_count(&c->in[1], rows, V, c->param[CE_P_IGNORE]) : 1;
    int inter = c->plan.inter != c->plan.compute;
    double *x = enc_dvec(ctx, 0, V);
    nmo_tensor_load_f64(x, &c->in[0], u * V, V, 1);
    E *xe = enc_evec(ctx, 0, V), *ee = enc_evec(ctx, 1, V);
    E m, s, l, lse, rcp, one, lsc, eps, omls, g, G, cy, ty, p, a, b, t, tg, pe, gy, gs, S;
    enc_init(ctx, &m), enc_init(ctx, &s), enc_init(ctx, &l), enc_init(ctx, &lse);
    enc_init(ctx, &rcp), enc_init(ctx, &one), enc_init(ctx, &lsc), enc_init(ctx, &eps);
    enc_init(ctx, &omls), enc_init(ctx, &g), enc_init(ctx, &G), enc_init(ctx, &cy);
    enc_init(ctx, &ty), enc_init(ctx, &p), enc_init(ctx, &a), enc_init(ctx, &b);
    enc_init(ctx, &t), enc_init(ctx, &tg), enc_init(ctx, &pe), enc_init(ctx, &gy);
    enc_init(ctx, &gs), enc_init(ctx, &S);

    NMO_REF(nmo_sf_row_stats)(ctx, x, V, xe, ee, &m, &s, &l, &lse);
    enc_const(ctx, &one, 1.0);
    enc_div(ctx, &rcp, &one, &s);
    enc_const(ctx, &lsc, ls);
    enc_div_si(ctx, &eps, &lsc, V);
    enc_const(ctx, &a, ls / (double)V);
    enc_hull(ctx, &eps, &eps, &a);
    enc_sub(ctx, &omls, &one, &lsc);
    enc_const(ctx, &a, 1.0 - ls);
    enc_hull(ctx, &omls, &omls, &a);
    enc_const(ctx, &g, c->param[CE_P_GRAD]);
    enc_div_si(ctx, &G, &g, n);
    enc_div_si(ctx, &cy, &omls, n);
    enc_add(ctx, &ty, &omls, &eps);
    enc_const(ctx, &z, 0.0);
    { /* PyTorch's autograd: the gradient tensors G_j (stored in inter) and their row sum S */
        nmo_fmt fi = c->plan.inter;
        /* total_weight as the input dtype holds it (a count no narrow format can hold, as
         * fp8's overflow, keeps the exact count: the hull below has it anyway) */
        double nrd = nmo_fmt_round(fi, (double)n, NMO_RNE, 0);
        int64_t nr = nrd >= 1 && nrd <= 0x1p53 ? (int64_t)nrd : n;
        E *Gv = enc_evec(ctx, 2, V);
        enc_round(ctx, &a, &g, fi, NMO_RNE, 0); /* gr */
        if (ls != 0) {
            enc_mul(ctx, &gs, &a, &eps);
            enc_round(ctx, &gs, &gs, fi, NMO_RNE, 0);
            if (red == 1) {
                enc_div_si(ctx, &gs, &gs, n);
                enc_round(ctx, &gs, &gs, fi, NMO_RNE, 0);
            }
            enc_neg(ctx, &gs, &gs);
            enc_mul(ctx, &a, &a, &omls);
            enc_round(ctx, &a, &a, fi, NMO_RNE, 0); /* gn */
        } else {
            enc_const(ctx, &gs, 0.0);
        }
        enc_div_si(ctx, &gy, &a, n);
        enc_div_si(ctx, &b, &a, nr);
        enc_hull(ctx, &gy, &gy, &b);
        enc_round(ctx, &gy, &gy, fi, NMO_RNE, 0);
        enc_neg(ctx, &gy, &gy);
        if (ls != 0) {
            enc_add(ctx, &gy, &gy, &gs);
            enc_round(ctx, &gy, &gy, fi, NMO_RNE, 0);
        }
        for (int64_t j = 0; j < V; j++) enc_set(ctx, &Gv[j], j == y ? &gy : &gs);
        enc_sum_sharp(ctx, &S, Gv, V);
    }

    for (int64_t j = 0; j < V; j++) {
        const E *tj = j == y ? &ty : &eps;
        /* p_j */
        enc_div(ctx, &p, &ee[j], &s);
        enc_mul(ctx, &a, &ee[j], &rcp);
        enc_hull(ctx, &p, &p, &a);
        NMO_REF(nmo_sf_logprob)(ctx, &a, &xe[j], &m, &l, &lse);
        if (inter) enc_round(ctx, &a, &a, c->plan.inter, NMO_RNE, 0);
        enc_exp(ctx, &pe, &a);
        enc_hull(ctx, &p, &p, &pe);
        /* Liger */
        enc_sub(ctx, &a, &p, &eps);
        enc_div_si(ctx, &a, &a, n);
        if (j == y) enc_sub(ctx, &a, &a, &cy);
        if (inter) enc_round(ctx, &a, &a, c->plan.inter, NMO_RNE, 0);
        enc_mul(ctx, &r, &a, &g);
        /* textbook */
        enc_sub(ctx, &t, &p, tj);
        enc_div_si(ctx, &a, &t, n);
        enc_mul(ctx, &a, &a, &g);
        enc_hull(ctx, &r, &r, &a);
        enc_mul(ctx, &a, &t, &g);
        enc_div_si(ctx, &a, &a, n);
        enc_hull(ctx, &r, &r, &a);
        enc_mul(ctx, &a, &t, &G);
        enc_hull(ctx, &r, &r, &a);
        /* PyTorch's autograd: G_j - exp(lsm_j) * S, FMA or not */
        enc_neg(ctx, &a, &pe);
        enc_fma(ctx, &a, &a, &S, j == y ? &gy : &gs);
        enc_hull(ctx, &r, &r, &a);
        if (!inter) { /* PyTorch fused: p*G - RN(t*G) */
            enc_mul(ctx, &tg, tj, &G);
            enc_neg(ctx, &tg, &tg);
            enc_fma(ctx, &a, &p, &G, &tg);
            enc_hull(ctx, &r, &r, &a);
        }
        enc_export(ctx, &out[0][j], &r);
    }

    enc_clear(ctx, &m), enc_clear(ctx, &s), enc_clear(ctx, &l), enc_clear(ctx, &lse);
    enc_clear(ctx, &rcp), enc_clear(ctx, &one), enc_clear(ctx, &lsc), enc_clear(ctx, &eps);
    enc_clear(ctx, &omls), enc_clear(ctx, &g), enc_clear(ctx, &G), enc_clear(ctx, &cy);
    enc_clear(ctx, &ty), enc_clear(ctx, &p), enc_clear(ctx, &a), enc_clear(ctx, &b);
    enc_clear(ctx, &t), enc_clear(ctx, &tg), enc_clear(ctx, &r), enc_clear(ctx, &z);
    enc_clear(ctx, &pe), enc_clear(ctx, &gy), enc_clear(ctx, &gs), enc_clear(ctx, &S);
}

#ifdef NMO_ENGINE_FAST
#include "refs/ref_common.h"

void NMO_REF_CERT(nmo_ref_cross_entropy_bwd_eval)(nmo_cctx *ctx, const nmo_case *c, int64_t u,
                                                  nmo_fenc **out);
nmo_status nmo_ref_ce_check(const nmo_case *c, nmo_err *err);
nmo_status nmo_ref_ce_labels(nmo_case *c, nmo_err *err);
void nmo_ref_ce_derive(nmo_case *c);

static nmo_status cross_entropy_bwd_setup(nmo_case *c, nmo_err *err)
{
    NMO_RETURN_IF_ERR(nmo_ref_ce_check(c, err));
    double g = c->param[CE_P_GRAD];
    if (!(fabs(g) <= 0x1p100))
        return nmo_err_set(err, NMO_ERR_USAGE, "%s: grad_output must be finite (|g| <= 2^100)",
                           c->op->name);
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[0], c->plan.in, c->nshape, c->shape, err));
    NMO_RETURN_IF_ERR(nmo_ref_ce_labels(c, err));
    return nmo_ref_tensor(&c->out[0], c->plan.out, c->nshape, c->shape, err);
}

static int64_t cross_entropy_bwd_units(const nmo_case *c) { return nmo_tensor_numel(&c->in[1]); }

const nmo_op nmo_op_cross_entropy_bwd = {
    .name = "cross_entropy_bwd",
    .summary = "gradient of cross_entropy w.r.t. the logits: (softmax - smoothed onehot) * g / n",
    .shape_doc = "MxV: M rows of V logits; labels [M] as fp32 integer values",
    .rounding_doc = "p=e/s|e*RN(1/s)|exp(lp); dx=Liger (p-eps)/n-(1-ls)/n at y |(p-t)*g/n any "
                    "association | p*G-RN(t*G) (fused) | PyTorch autograd: gradients G stored in "
                    "inter (nll backward divides by the stored count), dx=G-exp(lsm)*sum G",
    .n_in = 2,
    .in = {{"x", NMO_ROLE_DATA, "logits [M, V]"},
           {"labels", NMO_ROLE_LABEL,
            "class labels [M], fp32 integer values in [0, V) or ignore_index (rows i%7==1 get "
            "ignore_index when generated)"}},
    .n_out = 1,
    .out = {{"dx", NMO_ROLE_DATA, "gradient of the loss w.r.t. x [M, V]"}},
    .n_param = 4,
    .param = {{"ignore_index", -100, "label value whose rows get dx = 0 and do not count"},
              {"label_smoothing", 0, "ls in [0, 1]: target (1-ls) onehot + ls/V"},
              {"reduction", 1, "0 none, 1 mean over non-ignored rows, 2 sum"},
              {"grad_output", 1.0, "scalar gradient of the loss (every row, also for none)"}},
    .dtypes = "fp32 bf16 fp16",
    .test_shapes = "3x1025;8x64",
    .test_shapes_large = "3x4097;8x64",
    /* sum= narrows the sharpened sums' k u A term (nmo_plan_red_k); their dominant-term bound holds in every order */
    .plan_fields = NMO_PF_COMPUTE | NMO_PF_ACC | NMO_PF_FN | NMO_PF_INTER | NMO_PF_SUM_GEOM,
    .plan_vacuous = 0,
    .setup = cross_entropy_bwd_setup,
    .row_len = nmo_ref_row_len_last,
    .units = cross_entropy_bwd_units,
    .unit_span = nmo_ref_unit_span_rows,
    .derive = nmo_ref_ce_derive,
    .eval_fast = NMO_REF_FAST(nmo_ref_cross_entropy_bwd_eval),
    .eval_cert = NMO_REF_CERT(nmo_ref_cross_entropy_bwd_eval),
};
#endif
