/* jsd: Liger-Kernel's generalized Jensen-Shannon divergence (forward loss). With
 * X = log Q (student, `log_q`), Y = log P (teacher, `log_p`), M = beta P + (1-beta) Q:
 *   JSD_beta = beta KL(P || M) + (1-beta) KL(Q || M)
 *            = sum_j [beta P_j Y_j + (1-beta) Q_j X_j - M_j log M_j]
 * per row, summed over the rows and divided by the row count (batchmean; Liger's
 * n_non_ignore without labels): output loss[1]. As in Liger, beta = 0 is the forward KL
 * sum P (Y - X) and beta = 1 the reverse KL sum Q (X - Y).
 *
 * Inputs: log_q and log_p are NMO_ROLE_DERIVED: log_softmax of z_q and z_p per row
 * (computed exactly, rounded RNE into the storage dtype); z_q, z_p follow the family and
 * are not read. Given as files, log_q and log_p are used as is.
 *
 * Rounding points (compute, RNE, unless said otherwise):
 *   Q = exp(X) | RN(exp(RN(X - mx)) * exp(mx)), mx = max(max X, max Y) over the row
 *       (Liger's compensated form); P likewise (exp: fn ulps)
 *   M = RN(RN(beta P) + RN((1-beta) Q)) | torch.lerp(Q, P, beta): RN(Q + RN(beta RN(P-Q)))
 *       | RN(P - RN(RN(P-Q) (1-beta)));  log M (fn ulps); beta, 1-beta held as RN(beta),
 *       RN(1 - RN(beta)) | RN(1 - beta)
 *   l_j (hull):
 *     Liger:    RN(bP Y + oQ X) - M log M   (bP = RN(beta P), oQ = RN((1-beta) Q); each
 *               a*b + c fused or not, either product of the first sum fused)
 *     two KLs:  RN(beta RN(P RN(Y - lM))) + RN((1-beta) RN(Q RN(X - lM))) (either fused)
 *   loss = sum_j l_j * RN(1/n) (Liger scales each element) | RN(sum_j l_j) / n; sums in
 *   any order (acc); store into `out` (checker: plan round).
 * Not covered: labels / ignore_index (Liger's shift_labels), the reference's per-row
 * weighted sums beta * sum_j KL1 + (1-beta) * sum_j KL2 (a different association of the
 * reduction), temperature scaling, other association orders of the Liger expression. */
#include "smx_ref.h"

#define JSD_P_BETA 0

/* exp(v) | RN(exp(RN(v - mx)) * emx); tmp: scratch */
static void NMO_REF(jsd_prob)(E_CTX *ctx, E *r, const E *v, const E *mx, const E *emx, E *tmp)
{
    enc_exp(ctx, r, v);
    enc_sub(ctx, tmp, v, mx);
    enc_exp(ctx, tmp, tmp);
    enc_mul(ctx, tmp, tmp, emx);
    enc_hull(ctx, r, r, tmp);
}

/* a*b + c*d: RN(RN(a b) + RN(c d)) or either product fused; p, q: scratch. */
static void NMO_REF(jsd_dot2)(E_CTX *ctx, E *r, const E *a, const E *b, const E *c, const E *d, E *p,
                              E *q)
{
    enc_mul(ctx, p, c, d);
    enc_fma(ctx, r, a, b, p);
    enc_mul(ctx, p, a, b);
    enc_fma(ctx, q, c, d, p);
    enc_hull(ctx, r, r, q);
}

/* beta, 1 - beta (both forms), RN(1/rows); one, a: scratch */
static void NMO_REF(jsd_consts)(E_CTX *ctx, E *be, E *ob, E *rn, double beta, int64_t rows, E *one, E *a)
{
    enc_const(ctx, one, 1.0);
    enc_const(ctx, be, beta);
    enc_sub(ctx, ob, one, be);
    enc_const(ctx, a, 1.0 - beta);
    enc_hull(ctx, ob, ob, a);
    enc_const(ctx, a, (double)rows);
    enc_div(ctx, rn, one, a); /* RN(1/n) */
}

/* Element term lj and its scaled form sc = lj * RN(1/n); w: 11 scratch enclosures. */
static void NMO_REF(jsd_term)(E_CTX *ctx, E *lj, E *sc, const E *xj, const E *yj, const E *mx,
                              const E *emx, const E *be, const E *ob, const E *rn, double beta, E *w)
{
    E *P = &w[0], *Q = &w[1], *bP = &w[2], *oQ = &w[3], *Mm = &w[4], *lM = &w[5], *a = &w[6],
      *b = &w[7], *s = &w[8], *t1 = &w[9], *t2 = &w[10];
    if (beta == 0) { /* forward KL: P (Y - X) */
        NMO_REF(jsd_prob)(ctx, P, yj, mx, emx, t1);
        enc_sub(ctx, a, yj, xj);
        enc_mul(ctx, lj, P, a);
    } else if (beta == 1) { /* reverse KL: Q (X - Y) */
        NMO_REF(jsd_prob)(ctx, Q, xj, mx, emx, t1);
        enc_sub(ctx, a, xj, yj);
        enc_mul(ctx, lj, Q, a);
    } else {
        NMO_REF(jsd_prob)(ctx, Q, xj, mx, emx, t1);
        NMO_REF(jsd_prob)(ctx, P, yj, mx, emx, t1);
        enc_mul(ctx, bP, be, P);
        enc_mul(ctx, oQ, ob, Q);
        enc_add(ctx, Mm, bP, oQ);
        enc_sub(ctx, a, P, Q); /* lerp forms */
        enc_mul(ctx, b, be, a);
        enc_add(ctx, b, Q, b);
        enc_hull(ctx, Mm, Mm, b);
        enc_mul(ctx, b, a, ob);
        enc_sub(ctx, b, P, b);
        enc_hull(ctx, Mm, Mm, b);
        enc_log(ctx, lM, Mm);
        /* Liger: (bP Y + oQ X) - M log M */
        NMO_REF(jsd_dot2)(ctx, a, bP, yj, oQ, xj, t1, t2);
        enc_neg(ctx, b, Mm);
        enc_fma(ctx, lj, b, lM, a);
        /* two KLs: beta P (Y - lM) + (1-beta) Q (X - lM) */
        enc_sub(ctx, a, yj, lM);
        enc_mul(ctx, a, P, a);
        enc_sub(ctx, b, xj, lM);
        enc_mul(ctx, b, Q, b);
        NMO_REF(jsd_dot2)(ctx, s, be, a, ob, b, t1, t2);
        enc_hull(ctx, lj, lj, s);
    }
    enc_mul(ctx, sc, lj, rn);
}

#ifdef NMO_ENGINE_CERT
/* Term escalation: one element's lj and sc by the certified engine, from the inputs and
 * the row max mx (a point: the max of exact inputs) exactly as nmo_ref_jsd_eval builds
 * them, so the values equal the certified-only evaluation's. */
void nmo_ref_jsd_term_esc(nmo_cctx *ctx, nmo_fenc *lj, nmo_fenc *sc, double X, double Y, double mx,
                          double beta, int64_t rows);
void nmo_ref_jsd_term_esc(nmo_cctx *ctx, nmo_fenc *lj, nmo_fenc *sc, double X, double Y, double mx,
                          double beta, int64_t rows)
{
    E v[18];
    for (int i = 0; i < 18; i++) enc_init(ctx, &v[i]);
    E *xj = &v[0], *yj = &v[1], *m = &v[2], *em = &v[3], *be = &v[4], *ob = &v[5], *rn = &v[6];
    NMO_REF(jsd_consts)(ctx, be, ob, rn, beta, rows, &v[7], &v[8]);
    enc_set_d(ctx, xj, X);
    enc_set_d(ctx, yj, Y);
    enc_set_d(ctx, m, mx);
    enc_exp(ctx, em, m);
    E l, s;
    enc_init(ctx, &l), enc_init(ctx, &s);
    NMO_REF(jsd_term)(ctx, &l, &s, xj, yj, m, em, be, ob, rn, beta, &v[7]);
    enc_export(ctx, lj, &l);
    enc_export(ctx, sc, &s);
    enc_clear(ctx, &l), enc_clear(ctx, &s);
    for (int i = 0; i < 18; i++) enc_clear(ctx, &v[i]);
}
#else
void nmo_ref_jsd_term_esc(nmo_cctx *ctx, nmo_fenc *lj, nmo_fenc *sc, double X, double Y, double mx,
                          double beta, int64_t rows);
#endif

void NMO_REF(nmo_ref_jsd_eval)(E_CTX *ctx, const nmo_case *c, int64_t u, nmo_fenc **out)
{
    (void)u;
    double beta = c->param[JSD_P_BETA];
    int64_t n = c->shape[c->nshape - 1], total = nmo_tensor_numel(&c->in[0]), rows = total / n;
    double *X = enc_dvec(ctx, 0, n), *Y = enc_dvec(ctx, 1, n);
    E *terms = enc_evec(ctx, 0, total), *scaled = enc_evec(ctx, 1, total), *xe = enc_evec(ctx, 2, n),
      *ye = enc_evec(ctx, 3, n), *w = enc_evec(ctx, 4, 11); /* evec: initialized, owned by ctx */
    E mx, my, emx, be, ob, one, a, rn, s, s2;
    enc_init(ctx, &mx), enc_init(ctx, &my), enc_init(ctx, &emx), enc_init(ctx, &be);
    enc_init(ctx, &ob), enc_init(ctx, &one), enc_init(ctx, &a), enc_init(ctx, &rn);
    enc_init(ctx, &s), enc_init(ctx, &s2);
    NMO_REF(jsd_consts)(ctx, &be, &ob, &rn, beta, rows, &one, &a);
    for (int64_t i = 0; i < rows; i++) {
        nmo_tensor_load_f64(X, &c->in[0], i * n, n, 1);
        nmo_tensor_load_f64(Y, &c->in[1], i * n, n, 1);
        for (int64_t j = 0; j < n; j++) enc_set_d(ctx, &xe[j], X[j]), enc_set_d(ctx, &ye[j], Y[j]);
        /* the compensation max of the branch Liger takes */
        if (beta == 0) enc_max_v(ctx, &mx, ye, n);
        else if (beta == 1) enc_max_v(ctx, &mx, xe, n);
        else {
            enc_max_v(ctx, &mx, xe, n);
            enc_max_v(ctx, &my, ye, n);
            enc_max(ctx, &mx, &mx, &my);
        }
        enc_exp(ctx, &emx, &mx);
        /* term escalation (enc_fast.h) rebuilds a term from mx: only when it is a point */
        NMO_FAST_ONLY(const int mx_point = mx.lo == mx.hi && isfinite(mx.lo) && !mx.flags;)
        NMO_FAST_ONLY({ /* exp(mx) for a row max just below 0 sits on the binade edge at 1:
                           undecided, it would send every term of the row to the certified
                           engine; recompute it alone */
            nmo_cctx *cc = mx_point ? nmo_fctx_term_cert(ctx, emx.flags) : NULL;
            if (cc) {
                nmo_cenc cm, ce;
                nmo_cenc_init(cc, &cm), nmo_cenc_init(cc, &ce);
                nmo_cenc_set_d(cc, &cm, mx.lo);
                nmo_cenc_exp(cc, &ce, &cm);
                nmo_cenc_export(cc, &emx, &ce);
                nmo_cenc_clear(cc, &cm), nmo_cenc_clear(cc, &ce);
            }
        })
        for (int64_t j = 0; j < n; j++) {
            E *lj = &terms[i * n + j], *sc = &scaled[i * n + j];
            NMO_REF(jsd_term)(ctx, lj, sc, &xe[j], &ye[j], &mx, &emx, &be, &ob, &rn, beta, w);
            NMO_FAST_ONLY({
                nmo_cctx *cc = mx_point ? nmo_fctx_term_cert(ctx, lj->flags | sc->flags) : NULL;
                if (cc) nmo_ref_jsd_term_esc(cc, lj, sc, X[j], Y[j], mx.lo, beta, rows);
            })
        }
    }
    enc_sum_sharp(ctx, &s, scaled, total);
    enc_sum_sharp(ctx, &s2, terms, total);
    enc_div_si(ctx, &s2, &s2, rows);
    enc_hull(ctx, &s, &s, &s2);
    enc_export(ctx, &out[0][0], &s);

    enc_clear(ctx, &mx), enc_clear(ctx, &my), enc_clear(ctx, &emx), enc_clear(ctx, &be);
    enc_clear(ctx, &ob), enc_clear(ctx, &one), enc_clear(ctx, &a), enc_clear(ctx, &rn);
    enc_clear(ctx, &s), enc_clear(ctx, &s2);
}

#ifdef NMO_ENGINE_FAST
#include "refs/ref_common.h"

void NMO_REF_CERT(nmo_ref_jsd_eval)(nmo_cctx *ctx, const nmo_case *c, int64_t u, nmo_fenc **out);
void nmo_ref_sf_derive_rows(nmo_tensor *dst, const nmo_tensor *src, int64_t n, int log);

static void jsd_derive(nmo_case *c)
{
    int64_t n = c->shape[c->nshape - 1];
    nmo_ref_sf_derive_rows(&c->in[0], &c->in[2], n, 1);
    nmo_ref_sf_derive_rows(&c->in[1], &c->in[3], n, 1);
}

static nmo_status jsd_setup(nmo_case *c, nmo_err *err)
{
    int64_t rows, n, one = 1;
    double beta = c->param[JSD_P_BETA];
    if (!(beta >= 0 && beta <= 1)) return nmo_err_set(err, NMO_ERR_USAGE, "jsd: beta must be in [0, 1]");
    NMO_RETURN_IF_ERR(nmo_ref_rows_shape(c, &rows, &n, err));
    for (int k = 0; k < 4; k++)
        NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[k], c->plan.in, c->nshape, c->shape, err));
    return nmo_ref_tensor(&c->out[0], c->plan.out, 1, &one, err);
}

static int64_t jsd_units(const nmo_case *c)
{
    (void)c;
    return 1;
}

static void jsd_span(const nmo_case *c, int64_t u, int k, int64_t *begin, int64_t *count, int64_t *stride)
{
    (void)c, (void)u, (void)k;
    *begin = 0;
    *count = 1;
    *stride = 1;
}

const nmo_op nmo_op_jsd = {
    .name = "jsd",
    .summary = "generalized Jensen-Shannon divergence (Liger): beta KL(P||M) + (1-beta) KL(Q||M), batchmean",
    .shape_doc = "MxN (or ...xN): rows of N log-probabilities",
    .rounding_doc = "P,Q=exp|compensated exp; M=bP+oQ|lerp; l=(bP*Y+oQ*X)-M*logM | two KLs; "
                    "sum l*RN(1/n) | sum/n (any order)",
    .n_in = 4,
    .in = {{"log_q", NMO_ROLE_DERIVED, "student log-probabilities [..., N] (derived: log_softmax(z_q))"},
           {"log_p", NMO_ROLE_DERIVED, "teacher log-probabilities [..., N] (derived: log_softmax(z_p))"},
           {"z_q", NMO_ROLE_DATA, "student logits log_q is derived from (not read)", NMO_IN_SOURCE},
           {"z_p", NMO_ROLE_DATA, "teacher logits log_p is derived from (not read)", NMO_IN_SOURCE}},
    .n_out = 1,
    .out = {{"loss", NMO_ROLE_DATA, "loss [1]: sum over all elements / rows"}},
    .n_param = 1,
    .param = {{"beta", 0.5, "mixture weight of the teacher P in [0, 1] (0: forward KL, 1: reverse KL)"}},
    .dtypes = "fp32 bf16 fp16",
    .test_shapes = "3x1025;8x64",
    .test_shapes_large = "3x4097;8x64",
    /* sum= narrows the sharpened sums' k u A term (nmo_plan_red_k); their dominant-term bound holds in every order */
    .plan_fields = NMO_PF_COMPUTE | NMO_PF_ACC | NMO_PF_FN | NMO_PF_SUM_GEOM,
    .plan_vacuous = 0,
    .setup = jsd_setup,
    .row_len = nmo_ref_row_len_last,
    .units = jsd_units,
    .unit_span = jsd_span,
    .derive = jsd_derive,
    .eval_fast = NMO_REF_FAST(nmo_ref_jsd_eval),
    .eval_cert = NMO_REF_CERT(nmo_ref_jsd_eval),
};
#endif
