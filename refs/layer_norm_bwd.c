/* layer_norm_bwd: the backward of y = (x - mean) * rstd * w + b given the forward's saved
 * mean and rstd (fp32):
 *   xh      = (x - mean) * rstd,  wdy = w * dy
 *   dx[i,j] = rstd_i * (wdy - xh * c1_i - c2_i),  c1 = sum_j xh*wdy / N,  c2 = sum_j wdy / N
 *   dw[j]   = sum_i dy * xh,      db[j] = sum_i dy
 * mean and rstd are optional inputs (NMO_ROLE_DERIVED, NMO_IN_OPTIONAL). Given, they are
 * points; generated cases get them from derive(): RN32 of the exact mean and of
 * 1/sqrt(var + eps) (two-pass, long double) as a forward stores them. Absent
 * (nmo_case.absent, each on its own), the reference encloses them as layer_norm's forward
 * computes them (norm_two_pass: sum any order, sum/N | sum*RN(1/N), d = x - mean,
 * sum d^2 any order, FMA or not, rsqrt of plan accuracy | 1/sqrt), hulled with their
 * fp32 rounding when compute is not fp32, and carries those intervals through the
 * formulas below (mean and rstd as independent intervals: sound, a little wider).
 *
 * Rounding points (compute, RNE, unless said otherwise):
 *   d   = x - mean;  xh = d * rstd;  wdy = w * dy
 *   S1  = sum_j dy w d rstd       any order and tree, FMA or not, in `acc`; each term's
 *                                 four factors in any association (two inner roundings)
 *   S2  = sum_j w dy              any order, FMA or not, in `acc`
 *   dx  = the hull of:
 *     Liger / Triton tutorial:    c1 = S1/N, c2 = S2/N (or * RN(1/N));
 *                                 dx = (wdy - (xh*c1 + c2)) * rstd   (xh*c1 + c2 FMA or not)
 *     Apex order:                 dx = ((wdy - xh*c1) - c2) * rstd   (FMA or not)
 *     PyTorch (layer_norm_grad_input_kernel): f = N*w*dy (any association);
 *                                 f = f - xh*S1 (FMA or not); f = f - S2;
 *                                 dx = f * ((1/N) * rstd)
 *   dw  = sum_i dy d rstd         any order and tree, FMA or not, one inner rounding in
 *                                 any association
 *   db  = sum_i dy                any order and tree
 *   store dx, dw, db into `out`   (checker: plan round)
 * Units: rows write dx; then one unit per column writes dw[j] and db[j].
 * Not covered: the uncentered form dx = a*dy*w + b*x + c of older PyTorch kernels
 * (cancels on rows with a large mean), partial dw/db accumulated in the input dtype
 * (the Triton tutorial's fp16 locks); with the statistics absent, a recomputation
 * outside the two-pass model (Welford's online update: refs/norm_common.h). */
#include "engine/ref.h"
#include "refs/norm_common.h"

#define LB_MEAN 3 /* the optional inputs */
#define LB_RSTD 4

/* stat_fast/stat_cert: mean and rstd of row i as a kernel recomputes them (dvec slot 5,
 * evec slots 4 and 5: ln_bwd_col uses slots 0-3, ln_bwd_row calls it first). */
void NMO_REF(nmo_ref_layer_norm_bwd_stat)(E_CTX *ctx, const nmo_case *c, int64_t i, nmo_fenc *out);
void NMO_REF(nmo_ref_layer_norm_bwd_stat)(E_CTX *ctx, const nmo_case *c, int64_t i, nmo_fenc *out)
{
    int64_t n = c->in[2].dims[0];
    double *x = enc_dvec(ctx, 5, n);
    nmo_tensor_load_f64(x, &c->in[1], i * n, n, 1);
    E *xe = enc_evec(ctx, 4, n), *d = enc_evec(ctx, 5, n);
    E mean, rstd, sd;
    enc_init(ctx, &mean), enc_init(ctx, &rstd), enc_init(ctx, &sd);
    norm_two_pass(ctx, x, xe, d, n, c->param[0], &mean, &rstd, &sd);
    norm_as_saved(ctx, &mean, c->in[LB_MEAN].dtype, c);
    norm_as_saved(ctx, &rstd, c->in[LB_RSTD].dtype, c);
    enc_export(ctx, &out[LB_MEAN], &mean);
    enc_export(ctx, &out[LB_RSTD], &rstd);
    enc_clear(ctx, &mean), enc_clear(ctx, &rstd), enc_clear(ctx, &sd);
}

/* Statistic k (LB_MEAN, LB_RSTD) of row i: the given point, or the recomputation's
 * enclosure (nmo_check's table; without one, recomputed here: the same lattice values). */
static void NMO_REF(ln_bwd_stat_of)(E_CTX *ctx, const nmo_case *c, int k, int64_t i, E *r)
{
    if (!(c->absent & (1u << k))) {
        enc_set_d(ctx, r, nmo_tensor_get(&c->in[k], i));
    } else if (c->stat[k]) {
        enc_set_fenc(ctx, r, &c->stat[k][i]);
    } else {
        nmo_fenc st[NMO_MAX_TENSORS];
        NMO_REF(nmo_ref_layer_norm_bwd_stat)(ctx, c, i, st);
        enc_set_fenc(ctx, r, &st[k]);
    }
}

static void NMO_REF(ln_bwd_row)(E_CTX *ctx, const nmo_case *c, int64_t u, nmo_fenc **out)
{
    int64_t n = c->in[2].dims[0];
    double *dy = enc_dvec(ctx, 0, n);
    double *x = enc_dvec(ctx, 1, n);
    double *w = enc_dvec(ctx, 2, n);
    nmo_tensor_load_f64(dy, &c->in[0], u * n, n, 1);
    nmo_tensor_load_f64(x, &c->in[1], u * n, n, 1);
    nmo_tensor_load_f64(w, &c->in[2], 0, n, 1);
    E me, r;
    enc_init(ctx, &me), enc_init(ctx, &r);
    /* the statistics first: a recomputation uses evec slots 4 and 5 */
    NMO_REF(ln_bwd_stat_of)(ctx, c, LB_MEAN, u, &me);
    NMO_REF(ln_bwd_stat_of)(ctx, c, LB_RSTD, u, &r);
    E *dye = enc_evec(ctx, 0, n), *we = enc_evec(ctx, 1, n), *d = enc_evec(ctx, 2, n);
    E *rv = enc_evec(ctx, 3, n), *xh = enc_evec(ctx, 4, n);
    E xe, invn, S1, S2, c1, c2, wdy, nxh, t, q, dxa, dxb, nc, f, t1;
    enc_init(ctx, &xe), enc_init(ctx, &invn);
    enc_init(ctx, &S1), enc_init(ctx, &S2), enc_init(ctx, &c1), enc_init(ctx, &c2);
    enc_init(ctx, &wdy), enc_init(ctx, &nxh), enc_init(ctx, &t), enc_init(ctx, &q);
    enc_init(ctx, &dxa), enc_init(ctx, &dxb), enc_init(ctx, &nc), enc_init(ctx, &f), enc_init(ctx, &t1);

    norm_inv_n(ctx, &invn, n);
    enc_const(ctx, &nc, (double)n);
    for (int64_t j = 0; j < n; j++) {
        enc_set_d(ctx, &dye[j], dy[j]);
        enc_set_d(ctx, &we[j], w[j]);
        enc_set_d(ctx, &xe, x[j]);
        enc_sub(ctx, &d[j], &xe, &me);
        enc_set(ctx, &rv[j], &r);
        enc_mul(ctx, &xh[j], &d[j], &r);
    }
    const E *f1[4] = {dye, we, d, rv};
    enc_dotk(ctx, &S1, f1, 4, n, 2);
    const E *f2[2] = {we, dye};
    enc_dotk(ctx, &S2, f2, 2, n, 0);
    const E *fc1[2] = {&S1, &invn};
    enc_prodk(ctx, &c1, fc1, 2, 0);
    const E *fc2[2] = {&S2, &invn};
    enc_prodk(ctx, &c2, fc2, 2, 0);
    const E *ft1[2] = {&invn, &r};
    enc_prodk(ctx, &t1, ft1, 2, 0);                /* PyTorch's term1 = (1/N) * rstd */
    for (int64_t j = 0; j < n; j++) {
        enc_mul(ctx, &wdy, &we[j], &dye[j]);
        enc_neg(ctx, &nxh, &xh[j]);
        /* Liger: (wdy - (xh*c1 + c2)) * rstd */
        enc_fma(ctx, &t, &xh[j], &c1, &c2);
        enc_sub(ctx, &q, &wdy, &t);
        enc_mul(ctx, &dxa, &q, &r);
        /* Apex order: ((wdy - xh*c1) - c2) * rstd */
        enc_fma(ctx, &t, &nxh, &c1, &wdy);
        enc_sub(ctx, &q, &t, &c2);
        enc_mul(ctx, &dxb, &q, &r);
        enc_hull(ctx, &dxa, &dxa, &dxb);
        /* PyTorch: f = N*w*dy; f -= xh*S1; f -= S2; dx = f * term1 */
        const E *fn[3] = {&nc, &we[j], &dye[j]};
        enc_prodk(ctx, &f, fn, 3, 0);
        enc_fma(ctx, &t, &nxh, &S1, &f);
        enc_sub(ctx, &q, &t, &S2);
        enc_mul(ctx, &dxb, &q, &t1);
        enc_hull(ctx, &dxa, &dxa, &dxb);
        enc_export(ctx, &out[0][j], &dxa);
    }

    enc_clear(ctx, &me), enc_clear(ctx, &r), enc_clear(ctx, &xe), enc_clear(ctx, &invn);
    enc_clear(ctx, &S1), enc_clear(ctx, &S2), enc_clear(ctx, &c1), enc_clear(ctx, &c2);
    enc_clear(ctx, &wdy), enc_clear(ctx, &nxh), enc_clear(ctx, &t), enc_clear(ctx, &q);
    enc_clear(ctx, &dxa), enc_clear(ctx, &dxb), enc_clear(ctx, &nc), enc_clear(ctx, &f), enc_clear(ctx, &t1);
}

static void NMO_REF(ln_bwd_col)(E_CTX *ctx, const nmo_case *c, int64_t j, nmo_fenc **out)
{
    int64_t rows = c->in[3].dims[0], n = c->in[2].dims[0];
    double *dy = enc_dvec(ctx, 0, rows);
    double *x = enc_dvec(ctx, 1, rows);
    nmo_tensor_load_f64(dy, &c->in[0], j, rows, n);
    nmo_tensor_load_f64(x, &c->in[1], j, rows, n);
    E *dye = enc_evec(ctx, 0, rows), *d = enc_evec(ctx, 1, rows), *re = enc_evec(ctx, 2, rows);
    E xe, me, dw, db;
    enc_init(ctx, &xe), enc_init(ctx, &me), enc_init(ctx, &dw), enc_init(ctx, &db);
    for (int64_t i = 0; i < rows; i++) {
        enc_set_d(ctx, &dye[i], dy[i]);
        enc_set_d(ctx, &xe, x[i]);
        NMO_REF(ln_bwd_stat_of)(ctx, c, LB_MEAN, i, &me);
        enc_sub(ctx, &d[i], &xe, &me);
        NMO_REF(ln_bwd_stat_of)(ctx, c, LB_RSTD, i, &re[i]);
    }
    const E *f[3] = {dye, d, re};
    enc_dotk(ctx, &dw, f, 3, rows, 1);
    const E *fb[1] = {dye};
    enc_dotk(ctx, &db, fb, 1, rows, 0);
    enc_export(ctx, &out[1][0], &dw);
    enc_export(ctx, &out[2][0], &db);
    enc_clear(ctx, &xe), enc_clear(ctx, &me), enc_clear(ctx, &dw), enc_clear(ctx, &db);
}

void NMO_REF(nmo_ref_layer_norm_bwd_eval)(E_CTX *ctx, const nmo_case *c, int64_t u, nmo_fenc **out)
{
    int64_t rows = c->in[3].dims[0];
    if (u < rows) NMO_REF(ln_bwd_row)(ctx, c, u, out);
    else NMO_REF(ln_bwd_col)(ctx, c, u - rows, out);
}

#ifdef NMO_ENGINE_FAST
#include <math.h>
#include "refs/ref_common.h"

void NMO_REF_CERT(nmo_ref_layer_norm_bwd_eval)(nmo_cctx *ctx, const nmo_case *c, int64_t u, nmo_fenc **out);
void NMO_REF_CERT(nmo_ref_layer_norm_bwd_stat)(nmo_cctx *ctx, const nmo_case *c, int64_t i, nmo_fenc *out);

static nmo_status layer_norm_bwd_setup(nmo_case *c, nmo_err *err)
{
    int64_t rows, n;
    NMO_RETURN_IF_ERR(nmo_ref_rows_shape(c, &rows, &n, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[0], c->plan.in, c->nshape, c->shape, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[1], c->plan.in, c->nshape, c->shape, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[2], c->plan.in, 1, &n, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[3], NMO_FP32, 1, &rows, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[4], NMO_FP32, 1, &rows, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->out[0], c->plan.out, c->nshape, c->shape, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->out[1], c->plan.out, 1, &n, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->out[2], c->plan.out, 1, &n, err));
    return NMO_OK;
}

/* The forward's saved statistics: mean = RN32(exact mean), rstd = RN32(1/sqrt(exact
 * variance + RN32(eps))), both from the exact (long double, two-pass) row moments. */
static void layer_norm_bwd_derive(nmo_case *c)
{
    int64_t rows = c->in[3].dims[0], n = c->in[2].dims[0];
    long double eps = (float)c->param[0];
    for (int64_t i = 0; i < rows; i++) {
        long double s = 0, ss = 0;
        for (int64_t j = 0; j < n; j++) s += nmo_tensor_get(&c->in[1], i * n + j);
        long double mu = s / n;
        for (int64_t j = 0; j < n; j++) {
            long double dv = nmo_tensor_get(&c->in[1], i * n + j) - mu;
            ss += dv * dv;
        }
        nmo_tensor_set(&c->in[3], i, (double)(float)mu);
        nmo_tensor_set(&c->in[4], i, (double)(float)(1.0L / sqrtl(ss / n + eps)));
    }
}

static int64_t layer_norm_bwd_units(const nmo_case *c) { return c->in[3].dims[0] + c->in[2].dims[0]; }

/* rows write dx (output 0); then column j writes dw[j] and db[j] (outputs 1 and 2) */
static void layer_norm_bwd_span(const nmo_case *c, int64_t u, int k, int64_t *begin,
                                int64_t *count, int64_t *stride)
{
    int64_t rows = c->in[3].dims[0], n = c->in[2].dims[0];
    *stride = 1;
    if (k == 0) {
        *begin = u < rows ? u * n : 0;
        *count = u < rows ? n : 0;
    } else {
        *begin = u < rows ? 0 : u - rows;
        *count = u < rows ? 0 : 1;
    }
}

const nmo_op nmo_op_layer_norm_bwd = {
    .name = "layer_norm_bwd",
    .summary = "backward of layer_norm (Liger/Triton, Apex and PyTorch forms) with saved mean and rstd or recomputing them",
    .shape_doc = "MxN (or ...xN): rows of N",
    .rounding_doc = "xh=(x-mean)*rstd; S1=sum dy*w*xh, S2=sum w*dy (any order, acc); dx=(wdy-"
                    "(xh*S1/N+S2/N))*rstd | ((wdy-xh*c1)-c2)*rstd | (N*w*dy-xh*S1-S2)*(rstd/N); "
                    "dw=sum_i dy*xh, db=sum_i dy (any order, acc)",
    .n_in = 5,
    .in = {{"dy", NMO_ROLE_DATA, "output gradient [..., N]"},
           {"x", NMO_ROLE_DATA, "forward input [..., N]"},
           {"w", NMO_ROLE_WEIGHT, "weight [N]"},
           {"mean", NMO_ROLE_DERIVED,
            "saved row mean, fp32 [rows]; optional: absent, the reference encloses every "
            "two-pass recomputation", NMO_IN_OPTIONAL},
           {"rstd", NMO_ROLE_DERIVED,
            "saved 1/sqrt(var+eps) per row, fp32 [rows]; optional: absent, the reference "
            "encloses every two-pass recomputation", NMO_IN_OPTIONAL}},
    .n_out = 3,
    .out = {{"dx", NMO_ROLE_DATA, "input gradient [..., N]"},
            {"dw", NMO_ROLE_DATA, "weight gradient [N]"},
            {"db", NMO_ROLE_DATA, "bias gradient [N]"}},
    .n_param = 1,
    .param = {{"eps", 1e-5, "the forward's eps (used to derive or recompute rstd)", NMO_PDOM_NONNEG}},
    .dtypes = "fp32 bf16 fp16",
    .test_shapes = "3x1025;8x64",
    .test_shapes_large = "3x4097;8x64",
    /* saved mean/rstd: no function evaluated; dotk sums ignore sum= */
    .plan_fields = NMO_PF_COMPUTE | NMO_PF_ACC | NMO_PF_SUM_GEOM,
    .plan_vacuous = NMO_PF_FN,
    .setup = layer_norm_bwd_setup,
    .row_len = nmo_ref_row_len_last,
    .units = layer_norm_bwd_units,
    .unit_span = layer_norm_bwd_span,
    .derive = layer_norm_bwd_derive,
    .eval_fast = NMO_REF_FAST(nmo_ref_layer_norm_bwd_eval),
    .eval_cert = NMO_REF_CERT(nmo_ref_layer_norm_bwd_eval),
    .stat_fast = NMO_REF_FAST(nmo_ref_layer_norm_bwd_stat),
    .stat_cert = NMO_REF_CERT(nmo_ref_layer_norm_bwd_stat),
};
#endif
