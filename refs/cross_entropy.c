/* cross_entropy (forward, Liger-style fused): per row i with label y_i,
 *   loss_i = lse_i - x[i,y_i]                          (label_smoothing ls = 0)
 *   loss_i = (1-ls)(lse_i - x[i,y_i]) + ls lse_i - (ls/V) sum_j x[i,j]   (ls > 0)
 * with lse_i = m_i + log(sum_j exp(x[i,j] - m_i)); rows whose label is ignore_index
 * give 0 and do not count. reduction 0 (none): loss[M]; 1 (mean over the non-ignored
 * rows): loss[1]; 2 (sum): loss[1]. Mean over zero rows: 0 or NaN (both allowed).
 *
 * Inputs: x[M,V] (plan.in), labels[M] stored as fp32 integer values (role LABEL: drawn in
 * [0, V)); derive() sets every row i with i % 7 == 1 to ignore_index so the ignore path
 * is always exercised (labels given as a file are used as given).
 *
 * Rounding points (compute, RNE, unless said otherwise):
 *   m = max_j x_j (exact); e_j = exp(RN(x_j - m)) (fn ulps); s = sum e_j (any order, acc);
 *   l = log(s) (fn ulps); lse = RN(m + l)
 *   nll = RN(lse - x_y)  or  RN(RN(m - x_y) + l)     (= -log_softmax at y: hull)
 *   ls > 0, two formulations (hull):
 *     Liger:   eps = RN(ls)/V; S = sum_j RN(-eps x_j) (any order);
 *              loss = nll*RN(1-ls) + (ls*lse + S)     (each a*b+c fused or not)
 *     PyTorch: lp_j = log-softmax (RN(RN(x_j-m)-l) | RN(x_j-lse)); sm = -sum_j lp_j;
 *              loss = RN(1-ls)*nll + sm*RN(ls/V)      (either product fused)
 *     constants: eps and ls/V as RN(RN(ls)/V) | RN(RN(ls)*RN(1/V)) | RN(ls/V);
 *                1-ls as RN(1 - RN(ls)) | RN(1 - ls)
 *   mean:  sum_i RN(loss_i / n) (Liger: each row divides)  or  RN(sum_i loss_i) / n
 *          (x/n or x*RN(1/n)); with ls > 0 also PyTorch's separate reductions
 *          RN(1-ls)*mean(nll) + mean(sm)*RN(ls/V); sums over rows in any order (acc);
 *   store into `out` (checker: plan round).
 * inter != compute (implementations with stage boundaries stored in `inter`), the hull of:
 *   Liger:   the per-row values RN_inter(loss_i / n) summed (its loss_1d has the input
 *            dtype), and the rows RN_inter(loss_i) summed then / n;
 *   PyTorch eager (log_softmax, then nll_loss, and for ls > 0
 *            cross_entropy_loss_label_smoothing's tensor operations, each stored):
 *            lsm_j = RN_inter(lp_j); nll_i = -lsm_y (mean/sum: RN(sum_i nll_i / n), stored
 *            in inter when ls > 0); ls > 0: sm_i = RN_inter(-sum_j lsm_j) (0 for ignored
 *            rows); S = RN_inter(sum_i sm_i); ret = RN_inter(S / n) (mean; sum: S);
 *            loss = RN_inter(RN(1-ls)*nll) + RN_inter(ret*RN(ls/V)); none: per row
 *            RN_inter(RN(1-ls)*nll_i) + RN_inter(sm_i*RN(ls/V));
 *   torch.compile (Inductor, mean/sum): ls = 0: one fused kernel, the rows in compute
 *            summed then / n (as inter == compute); ls > 0: nll and sm in compute, the
 *            reduced smoothing sum stored in inter: RN_inter(S)/n or RN_inter(S/n), then
 *            the PyTorch combination with either product fused. (So one plan, inter =
 *            the dtype, describes Inductor's cross_entropy for every ls.)
 *   (H200, PyTorch 2.11, 8x1001 and 2x8192, every family, bf16 and fp16: the eager rule
 *   reproduces all 40 mean outputs, ls = 0 and 0.1 (without the roundings of the two
 *   products: 3 differ); the compile rule all 22 ls = 0.1 outputs (without the rounding
 *   of the smoothing sum: the 6 fp16 outputs that overflow to inf differ). An fp16
 *   per-row smoothing sum above 65504 overflows: PyTorch returns inf, Liger a finite loss;
 *   the hull then reaches inf: INCONCLUSIVE.)
 * Not covered: online (multi-block, rescaling) softmax as Liger runs for V > its block
 * size (65536/2), Triton's tl.exp/tl.log (ex2/lg2 approximations: use fn=fast), class
 * weights, z-loss, logit softcapping. */
#include "smx_ref.h"

#define CE_P_IGNORE 0
#define CE_P_LS 1
#define CE_P_RED 2

/* Row i: loss (both formulations when ls > 0), nll and PyTorch's smooth term sm; sme is
 * PyTorch eager's smooth term RN_inter(-sum_j RN_inter(lp_j)) when inter != compute and
 * ls > 0 (else sm). Returns the label status: >= 0 valid, -1 ignored, -2 invalid. Not
 * static: the fast engine calls the certified build of it (row escalation, ce_row_red). */
int64_t NMO_REF(nmo_ref_ce_row)(E_CTX *ctx, const nmo_case *c, int64_t i, E *loss, E *nll, E *sm,
                                E *sme);
NMO_FAST_ONLY(int64_t NMO_REF_CERT(nmo_ref_ce_row)(nmo_cctx *ctx, const nmo_case *c, int64_t i,
                                                   nmo_cenc *loss, nmo_cenc *nll, nmo_cenc *sm,
                                                   nmo_cenc *sme);)

/* The label-smoothing constants: lsc = RN(ls); eps = ls/V as RN(RN(ls)/V) | RN(RN(ls)*RN(1/V))
 * | RN(ls/V); omls = 1-ls as RN(1 - RN(ls)) | RN(1 - ls). */
static void NMO_REF(ce_consts)(E_CTX *ctx, double ls, int64_t V, E *lsc, E *eps, E *omls)
{
    E a, one;
    enc_init(ctx, &a), enc_init(ctx, &one);
    enc_const(ctx, lsc, ls);
    enc_div_si(ctx, eps, lsc, V);
    enc_const(ctx, &a, ls / (double)V);
    enc_hull(ctx, eps, eps, &a);
    enc_const(ctx, &one, 1.0);
    enc_sub(ctx, omls, &one, lsc);
    enc_const(ctx, &a, 1.0 - ls);
    enc_hull(ctx, omls, omls, &a);
    enc_clear(ctx, &a), enc_clear(ctx, &one);
}

int64_t NMO_REF(nmo_ref_ce_row)(E_CTX *ctx, const nmo_case *c, int64_t i, E *loss, E *nll, E *sm,
                                E *sme)
{
    int64_t V = c->in[0].dims[c->in[0].ndims - 1];
    double ls = c->param[CE_P_LS];
    int64_t y = nmo_sf_ref_label(&c->in[1], i, V, c->param[CE_P_IGNORE]);
    if (y == -1) return y;
    if (y == -2) {
        NMO_REF(nmo_sf_anything)(ctx, loss);
        enc_set(ctx, nll, loss);
        enc_set(ctx, sm, loss);
        enc_set(ctx, sme, loss);
        return y;
    }
    double *x = enc_dvec(ctx, 0, V);
    nmo_tensor_load_f64(x, &c->in[0], i * V, V, 1);
    E *xe = enc_evec(ctx, 0, V), *ee = enc_evec(ctx, 1, V), *t = enc_evec(ctx, 2, V);
    E m, s, l, lse, a, b;
    enc_init(ctx, &m), enc_init(ctx, &s), enc_init(ctx, &l), enc_init(ctx, &lse);
    enc_init(ctx, &a), enc_init(ctx, &b);

    NMO_REF(nmo_sf_row_stats)(ctx, x, V, xe, ee, &m, &s, &l, &lse);
    enc_sub(ctx, nll, &lse, &xe[y]);
    enc_sub(ctx, &a, &m, &xe[y]);
    enc_add(ctx, &a, &a, &l);
    enc_hull(ctx, nll, nll, &a);
    if (ls == 0) {
        enc_set(ctx, loss, nll);
        enc_const(ctx, sm, 0.0);
        enc_const(ctx, sme, 0.0);
    } else {
        E lsc, eps, omls, smooth, f1, q;
        enc_init(ctx, &lsc), enc_init(ctx, &eps), enc_init(ctx, &omls);
        enc_init(ctx, &smooth), enc_init(ctx, &f1), enc_init(ctx, &q);
        NMO_REF(ce_consts)(ctx, ls, V, &lsc, &eps, &omls);
        /* Liger: S = sum RN(-eps x_j); loss = nll*(1-ls) + (ls*lse + S) */
        enc_neg(ctx, &a, &eps);
        for (int64_t j = 0; j < V; j++) enc_mul(ctx, &t[j], &a, &xe[j]);
        enc_sum_sharp(ctx, &s, t, V);
        enc_fma(ctx, &smooth, &lsc, &lse, &s);
        enc_fma(ctx, &f1, nll, &omls, &smooth);
        /* PyTorch: sm = -sum lp_j; loss = (1-ls)*nll + sm*(ls/V) */
        for (int64_t j = 0; j < V; j++) NMO_REF(nmo_sf_logprob)(ctx, &t[j], &xe[j], &m, &l, &lse);
        enc_sum_sharp(ctx, &s, t, V);
        enc_neg(ctx, sm, &s);
        enc_mul(ctx, &q, sm, &eps);
        enc_fma(ctx, &a, &omls, nll, &q);
        enc_mul(ctx, &q, &omls, nll);
        enc_fma(ctx, &b, sm, &eps, &q);
        enc_hull(ctx, &a, &a, &b);
        enc_hull(ctx, loss, &f1, &a);
        if (c->plan.inter != c->plan.compute) { /* eager: the stored log-softmax, summed */
            for (int64_t j = 0; j < V; j++) enc_round(ctx, &t[j], &t[j], c->plan.inter, NMO_RNE, 0);
            enc_sum_sharp(ctx, &s, t, V);
            enc_neg(ctx, sme, &s);
            enc_round(ctx, sme, sme, c->plan.inter, NMO_RNE, 0);
        } else {
            enc_set(ctx, sme, sm);
        }
        enc_clear(ctx, &lsc), enc_clear(ctx, &eps), enc_clear(ctx, &omls);
        enc_clear(ctx, &smooth), enc_clear(ctx, &f1), enc_clear(ctx, &q);
    }
    enc_clear(ctx, &m), enc_clear(ctx, &s), enc_clear(ctx, &l), enc_clear(ctx, &lse);
    enc_clear(ctx, &a), enc_clear(ctx, &b);
    return y;
}

/* Row i of a reduction over rows. Term escalation (enc_fast.h) with the row as the term:
 * a row whose values the fast engine leaves uncertain (an undecided exp snap among its V
 * terms, about 2^-25 each) is recomputed by the certified engine, which gives it the
 * lattice values a certified-only evaluation gives it. Without this, one such row among
 * 4096 escalated the whole scalar loss: an MPFR recomputation of every row, > 300 s for
 * one 4096x4096 fp32 case (H200 run 2026-12-01c); with it, a few rows of 4096 terms. */
static int64_t NMO_REF(ce_row_red)(E_CTX *ctx, const nmo_case *c, int64_t i, E *loss, E *nll, E *sm,
                                   E *sme)
{
    int64_t y = NMO_REF(nmo_ref_ce_row)(ctx, c, i, loss, nll, sm, sme);
    NMO_FAST_ONLY({
        nmo_cctx *cc = y != -1 ? nmo_fctx_term_cert(ctx, loss->flags | nll->flags | sm->flags | sme->flags)
                               : NULL;
        if (cc) {
            nmo_cenc a, b, d, e;
            nmo_cenc_init(cc, &a), nmo_cenc_init(cc, &b), nmo_cenc_init(cc, &d), nmo_cenc_init(cc, &e);
            NMO_REF_CERT(nmo_ref_ce_row)(cc, c, i, &a, &b, &d, &e);
            nmo_cenc_export(cc, loss, &a), nmo_cenc_export(cc, nll, &b), nmo_cenc_export(cc, sm, &d);
            nmo_cenc_export(cc, sme, &e);
            nmo_cenc_clear(cc, &a), nmo_cenc_clear(cc, &b), nmo_cenc_clear(cc, &d), nmo_cenc_clear(cc, &e);
        }
    })
    return y;
}

/* PyTorch's combination of the two reductions: RN(1-ls)*nl + sm*RN(ls/V), either product
 * fused into the add (hull); eager (stored): RN_inter(RN(1-ls)*nl) + RN_inter(sm*RN(ls/V)). */
static void NMO_REF(ce_combine)(E_CTX *ctx, E *r, const E *nl, const E *sm, const E *omls,
                                const E *eps, int stored, nmo_fmt inter)
{
    E a, b, q;
    enc_init(ctx, &a), enc_init(ctx, &b), enc_init(ctx, &q);
    if (stored) {
        enc_mul(ctx, &a, omls, nl);
        enc_round(ctx, &a, &a, inter, NMO_RNE, 0);
        enc_mul(ctx, &b, sm, eps);
        enc_round(ctx, &b, &b, inter, NMO_RNE, 0);
        enc_add(ctx, r, &a, &b);
    } else {
        enc_mul(ctx, &q, sm, eps);
        enc_fma(ctx, &a, omls, nl, &q);
        enc_mul(ctx, &q, omls, nl);
        enc_fma(ctx, &b, sm, eps, &q);
        enc_hull(ctx, r, &a, &b);
    }
    enc_clear(ctx, &a), enc_clear(ctx, &b), enc_clear(ctx, &q);
}

void NMO_REF(nmo_ref_cross_entropy_eval)(E_CTX *ctx, const nmo_case *c, int64_t u, nmo_fenc **out)
{
    int red = (int)c->param[CE_P_RED];
    double ls = c->param[CE_P_LS];
    int inter = c->plan.inter != c->plan.compute;
    nmo_fmt fi = c->plan.inter;
    int64_t V = c->in[0].dims[c->in[0].ndims - 1];
    E loss, nll, sm, sme, tot, t2, a, b, eps, omls, lsc;
    enc_init(ctx, &loss), enc_init(ctx, &nll), enc_init(ctx, &sm), enc_init(ctx, &sme);
    enc_init(ctx, &tot), enc_init(ctx, &t2), enc_init(ctx, &a), enc_init(ctx, &b);
    enc_init(ctx, &eps), enc_init(ctx, &omls), enc_init(ctx, &lsc);
    if (ls != 0) NMO_REF(ce_consts)(ctx, ls, V, &lsc, &eps, &omls);
    if (red == 0) {
        int64_t y = NMO_REF(nmo_ref_ce_row)(ctx, c, u, &loss, &nll, &sm, &sme);
        if (y == -1) {
            enc_const(ctx, &loss, 0.0);
        } else if (inter && y >= 0) { /* eager: nll_loss(none) copies the stored -lsm_y */
            enc_round(ctx, &nll, &nll, fi, NMO_RNE, 0);
            if (ls == 0) enc_set(ctx, &t2, &nll);
            else NMO_REF(ce_combine)(ctx, &t2, &nll, &sme, &omls, &eps, 1, fi);
            enc_hull(ctx, &loss, &loss, &t2);
        }
        enc_export(ctx, &out[0][0], &loss);
        goto done;
    }
    int64_t rows = nmo_tensor_numel(&c->in[1]);
    int64_t n = red == 1 ? nmo_sf_ref_count(&c->in[1], rows, V, c->param[CE_P_IGNORE]) : 1;
    E *rl = enc_evec(ctx, 3, rows), *rn = enc_evec(ctx, 4, rows), *rs = enc_evec(ctx, 5, rows);
    E *re = enc_evec(ctx, 7, rows);
    int64_t k = 0;
    for (int64_t i = 0; i < rows; i++) {
        if (NMO_REF(ce_row_red)(ctx, c, i, &rl[k], &rn[k], &rs[k], &re[k]) == -1) continue;
        k++;
    }
    if (n == 0) { /* mean over no rows: 0 (a kernel that skips every row) or 0/0 */
        enc_const(ctx, &tot, 0.0);
        tot.flags |= NMO_EF_NAN;
    } else {
        /* Liger: every row divides by n, the per-row values are summed */
        E *rd = enc_evec(ctx, 6, k);
        for (int64_t i = 0; i < k; i++) {
            enc_div_si(ctx, &rd[i], &rl[i], n);
            if (inter) enc_round(ctx, &rd[i], &rd[i], fi, NMO_RNE, 0);
        }
        enc_sum_sharp(ctx, &tot, rd, k);
        /* sum of the rows (stored in inter), then / n; torch.compile (inter, ls = 0): the
         * rows in compute, then / n */
        if (inter && ls == 0) {
            enc_sum_sharp(ctx, &t2, rl, k);
            enc_div_si(ctx, &t2, &t2, n);
            enc_hull(ctx, &tot, &tot, &t2);
        }
        if (inter)
            for (int64_t i = 0; i < k; i++) enc_round(ctx, &rl[i], &rl[i], fi, NMO_RNE, 0);
        enc_sum_sharp(ctx, &t2, rl, k);
        enc_div_si(ctx, &t2, &t2, n);
        enc_hull(ctx, &tot, &tot, &t2);
        if (ls != 0) {
            /* PyTorch fused: (1-ls)*reduce(nll) + reduce(sm)*(ls/V); torch.compile (inter):
             * the same with the reduced smoothing sum stored in inter */
            enc_sum_sharp(ctx, &a, rn, k);
            enc_div_si(ctx, &a, &a, n);
            enc_sum_sharp(ctx, &b, rs, k);
            if (inter) {
                enc_round(ctx, &t2, &b, fi, NMO_RNE, 0);
                enc_div_si(ctx, &t2, &t2, n);
                enc_div_si(ctx, &b, &b, n);
                enc_round(ctx, &b, &b, fi, NMO_RNE, 0);
                enc_hull(ctx, &b, &b, &t2);
            } else {
                enc_div_si(ctx, &b, &b, n);
            }
            NMO_REF(ce_combine)(ctx, &t2, &a, &b, &omls, &eps, 0, fi);
            enc_hull(ctx, &tot, &tot, &t2);
            if (inter) { /* PyTorch eager: every reduction and product stored in inter */
                for (int64_t i = 0; i < k; i++) enc_round(ctx, &rn[i], &rn[i], fi, NMO_RNE, 0);
                enc_sum_sharp(ctx, &a, rn, k);
                enc_div_si(ctx, &a, &a, n);
                enc_round(ctx, &a, &a, fi, NMO_RNE, 0);
                enc_sum_sharp(ctx, &b, re, k);
                enc_round(ctx, &b, &b, fi, NMO_RNE, 0);
                enc_div_si(ctx, &b, &b, n);
                enc_round(ctx, &b, &b, fi, NMO_RNE, 0);
                NMO_REF(ce_combine)(ctx, &t2, &a, &b, &omls, &eps, 1, fi);
                enc_hull(ctx, &tot, &tot, &t2);
            }
        }
    }
    enc_export(ctx, &out[0][0], &tot);
done:
    enc_clear(ctx, &loss), enc_clear(ctx, &nll), enc_clear(ctx, &sm), enc_clear(ctx, &sme);
    enc_clear(ctx, &tot), enc_clear(ctx, &t2), enc_clear(ctx, &a), enc_clear(ctx, &b);
    enc_clear(ctx, &eps), enc_clear(ctx, &omls), enc_clear(ctx, &lsc);
}

#ifdef NMO_ENGINE_FAST
#include "refs/ref_common.h"

void NMO_REF_CERT(nmo_ref_cross_entropy_eval)(nmo_cctx *ctx, const nmo_case *c, int64_t u,
                                              nmo_fenc **out);

/* Shared by cross_entropy and cross_entropy_bwd (see refs/cross_entropy_bwd.c). */
nmo_status nmo_ref_ce_check(const nmo_case *c, nmo_err *err);
nmo_status nmo_ref_ce_check(const nmo_case *c, nmo_err *err)
{
    double ig = c->param[CE_P_IGNORE], ls = c->param[CE_P_LS], red = c->param[CE_P_RED];
    if (c->nshape < 1 || c->shape[c->nshape - 1] < 1)
        return nmo_err_set(err, NMO_ERR_SHAPE, "%s: shape must be MxV", c->op->name);
    if (ig != floor(ig) || fabs(ig) > 0x1p24)
        return nmo_err_set(err, NMO_ERR_USAGE, "%s: ignore_index must be an integer (|v| <= 2^24)",
                           c->op->name);
    if (!(ls >= 0 && ls <= 1))
        return nmo_err_set(err, NMO_ERR_USAGE, "%s: label_smoothing must be in [0, 1]", c->op->name);
    if (red != 0 && red != 1 && red != 2)
        return nmo_err_set(err, NMO_ERR_USAGE, "%s: reduction must be 0 (none), 1 (mean) or 2 (sum)",
                           c->op->name);
    if (c->shape[c->nshape - 1] > (1 << 24))
        return nmo_err_set(err, NMO_ERR_SHAPE, "%s: V > 2^24 (labels are fp32 values)", c->op->name);
    return NMO_OK;
}

/* labels[rows]: leading dims of the shape (a 1-dim shape V is one row). */
nmo_status nmo_ref_ce_labels(nmo_case *c, nmo_err *err);
nmo_status nmo_ref_ce_labels(nmo_case *c, nmo_err *err)
{
    int64_t one = 1;
    if (c->nshape == 1) return nmo_ref_tensor(&c->in[1], NMO_FP32, 1, &one, err);
    return nmo_ref_tensor(&c->in[1], NMO_FP32, c->nshape - 1, c->shape, err);
}

/* Every 7th row (i % 7 == 1) gets ignore_index. */
void nmo_ref_ce_derive(nmo_case *c);
void nmo_ref_ce_derive(nmo_case *c)
{
    int64_t rows = nmo_tensor_numel(&c->in[1]);
    for (int64_t i = 0; i < rows; i++)
        if (i % 7 == 1) nmo_tensor_set(&c->in[1], i, c->param[CE_P_IGNORE]);
}

static nmo_status cross_entropy_setup(nmo_case *c, nmo_err *err)
{
    NMO_RETURN_IF_ERR(nmo_ref_ce_check(c, err));
    int64_t one = 1;
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[0], c->plan.in, c->nshape, c->shape, err));
    NMO_RETURN_IF_ERR(nmo_ref_ce_labels(c, err));
    if (c->param[CE_P_RED] == 0)
        return nmo_ref_tensor(&c->out[0], c->plan.out, c->in[1].ndims, c->in[1].dims, err);
    return nmo_ref_tensor(&c->out[0], c->plan.out, 1, &one, err);
}

static int64_t cross_entropy_units(const nmo_case *c)
{
    return c->param[CE_P_RED] == 0 ? nmo_tensor_numel(&c->in[1]) : 1;
}

static void cross_entropy_span(const nmo_case *c, int64_t u, int k, int64_t *begin, int64_t *count,
                               int64_t *stride)
{
    (void)c, (void)k;
    *begin = u;
    *count = 1;
    *stride = 1;
}

const nmo_op nmo_op_cross_entropy = {
    .name = "cross_entropy",
    .summary = "cross-entropy loss of logits against class labels (Liger-style fused forward)",
    .shape_doc = "MxV: M rows of V logits; labels [M] as fp32 integer values",
    .rounding_doc = "lse=m+log(sum exp(x-m)) (fn ulps, any order); nll=lse-x_y|(m-x_y)+l; "
                    "smoothing Liger|PyTorch; mean sum_i loss_i/n|sum/n",
    .n_in = 2,
    .in = {{"x", NMO_ROLE_DATA, "logits [M, V]"},
           {"labels", NMO_ROLE_LABEL,
            "class labels [M], fp32 integer values in [0, V) or ignore_index (rows i%7==1 get "
            "ignore_index when generated)"}},
    .n_out = 1,
    .out = {{"loss", NMO_ROLE_DATA, "loss: [M] (reduction 0) or [1] (mean, sum)"}},
    .n_param = 3,
    .param = {{"ignore_index", -100, "label value whose rows give 0 and do not count"},
              {"label_smoothing", 0, "ls in [0, 1]: target (1-ls) onehot + ls/V"},
              {"reduction", 1, "0 none ([M]), 1 mean over non-ignored rows, 2 sum ([1])"}},
    .dtypes = "fp32 bf16 fp16",
    .test_shapes = "3x1025;8x64",
    .test_shapes_large = "3x4097;8x64",
    /* sum= narrows the sharpened sums' k u A term (nmo_plan_red_k); their dominant-term bound holds in every order */
    .plan_fields = NMO_PF_COMPUTE | NMO_PF_ACC | NMO_PF_FN | NMO_PF_INTER | NMO_PF_SUM_GEOM,
    .plan_vacuous = 0,
    .setup = cross_entropy_setup,
    .row_len = nmo_ref_row_len_last,
    .units = cross_entropy_units,
    .unit_span = cross_entropy_span,
    .derive = nmo_ref_ce_derive,
    .eval_fast = NMO_REF_FAST(nmo_ref_cross_entropy_eval),
    .eval_cert = NMO_REF_CERT(nmo_ref_cross_entropy_eval),
};
#endif
