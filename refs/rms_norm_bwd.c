/* rms_norm_bwd: the backward of y = x * rstd * w, rstd = 1/sqrt(mean(x^2) + eps), given
 * the forward's saved rstd (fp32):
 *   dx[i,j] = rstd_i * dy[i,j] * w[j] - rstd_i^3 * x[i,j] * S_i / N,
 *             S_i = sum_j dy[i,j] * w[j] * x[i,j]
 *   dw[j]   = sum_i dy[i,j] * x[i,j] * rstd_i
 * rstd is an optional input (NMO_ROLE_DERIVED, NMO_IN_OPTIONAL). Given, the reference
 * takes it as a point; generated cases get it from derive(), RN32(1/sqrt(mean(x^2) +
 * eps)) as the forward stores it. Absent (nmo_case.absent: a kernel that recomputes rstd,
 * or autograd's own saved value nobody passed on), the reference encloses it as rms_norm's
 * forward computes it (norm_rms_rstd: ss = sum x^2 in any order, FMA or not; ss/N or
 * ss*RN(1/N); rsqrt of plan accuracy or 1/sqrt), hulled with its fp32 rounding (a saved
 * value) when compute is not fp32, and carries that interval through every formula
 * below: each use may see any value of it, so a kernel that recomputes rstd once per
 * row and one that recomputes it per use are both covered.
 *
 * Rounding points (compute, RNE, unless said otherwise):
 *   S   = sum_j dy_j w_j x_j        any order and tree, FMA or not, in `acc`; each term
 *                                   with one inner rounding in any association (enc_dotk)
 *   dx  = the hull of three kernel shapes:
 *     distributed (Liger-Kernel):   dx = rstd*dy*w - x*rstd^3*S/N, each term's factors
 *                                   in any association (Liger: dX = rstd*m, then
 *                                   dX += rstd * (((-(1/N)*rstd)*rstd)*S * x), m = dy*w),
 *                                   either product FMA'd into the subtraction or not
 *     factored:                     c = rstd^2*S/N (any association); dx = rstd*(m - x*c),
 *                                   m = dy*w; the inner products FMA or not
 *     normalized:                   xh = x*rstd; S' = sum m*xh; c' = S'/N;
 *                                   dx = rstd*(m - xh*c') (Apex/Unsloth style)
 *     ATen (PyTorch >= 2.9, CUDA):  S3 = sum ((dy*w)*x)*rstd, the last product FMA'd
 *                                   into the sum or not (2 inner roundings, enc_dotk);
 *                                   f = (N*w)*dy; f -= (x*rstd)*S3 (FMA or not);
 *                                   dx = f * RN(RN(1/N)*rstd). Source:
 *                                   aten/src/ATen/native/cuda/layer_norm_kernel.cu,
 *                                   compute_gI / layer_norm_grad_input_kernel_vectorized
 *                                   with rms_norm = true (what F.rms_norm's autograd
 *                                   calls through _fused_rms_norm_backward); the H200's
 *                                   bits: hip/results/h200-2026-12-02b/
 *                                   1/N is 1/N (a division) or RN(1/N) (a multiplication)
 *   dw  = sum_i dy_i x_i rstd_i     any order and tree (rows split over programs, partials
 *                                   summed later: any tree), FMA or not, one inner
 *                                   rounding in any association
 *   store dx, dw into `out`         (checker: plan round)
 * With a plan whose `inter` differs from compute (Liger's default "llama" casting mode,
 * which multiplies in the input dtype: check it with inter=<input dtype>):
 *   m = RN_inter(dy*w) or dy*w in compute (Liger: W promoted to fp32), in every form
 *   (S = sum m*x, any order; A = rstd*m), and
 *   dw = sum_i RN_inter(dy * RN_inter(x*rstd))   (any order, in acc)
 * Units: rows write dx, then one unit per column writes dw[j].
 * Not covered: dw partials accumulated in a narrower format (older Liger stored per-row
 * dW in the input dtype); with rstd absent, a recomputation outside rms_norm's model
 * (each square divided by N before the sum). */
#include "engine/ref.h"
#include "refs/norm_common.h"

#define RB_RSTD 3 /* the optional input */

/* stat_fast/stat_cert: rstd of row i as a kernel recomputes it (dvec slot 5 only, so a
 * unit can call it between its own loads). */
void NMO_REF(nmo_ref_rms_norm_bwd_stat)(E_CTX *ctx, const nmo_case *c, int64_t i, nmo_fenc *out);
void NMO_REF(nmo_ref_rms_norm_bwd_stat)(E_CTX *ctx, const nmo_case *c, int64_t i, nmo_fenc *out)
{
    int64_t n = c->in[2].dims[0];
    double *x = enc_dvec(ctx, 5, n);
    nmo_tensor_load_f64(x, &c->in[1], i * n, n, 1);
    E r;
    enc_init(ctx, &r);
    norm_rms_rstd(ctx, &r, x, n, c->param[0]);
    norm_as_saved(ctx, &r, c->in[RB_RSTD].dtype, c);
    enc_export(ctx, &out[RB_RSTD], &r);
    enc_clear(ctx, &r);
}

/* rstd of row i: the given point, or the recomputation's enclosure (nmo_check's table;
 * without one, recomputed here: the same lattice values). */
static void NMO_REF(rms_bwd_rstd)(E_CTX *ctx, const nmo_case *c, int64_t i, E *r)
{
    if (!(c->absent & (1u << RB_RSTD))) {
        enc_set_d(ctx, r, nmo_tensor_get(&c->in[RB_RSTD], i));
    } else if (c->stat[RB_RSTD]) {
        enc_set_fenc(ctx, r, &c->stat[RB_RSTD][i]);
    } else {
        nmo_fenc st[NMO_MAX_TENSORS];
        NMO_REF(nmo_ref_rms_norm_bwd_stat)(ctx, c, i, st);
        enc_set_fenc(ctx, r, &st[RB_RSTD]);
    }
}

static void NMO_REF(rms_bwd_row)(E_CTX *ctx, const nmo_case *c, int64_t u, nmo_fenc **out)
{
    int64_t n = c->in[2].dims[0];
    double *dy = enc_dvec(ctx, 0, n);
    double *x = enc_dvec(ctx, 1, n);
    double *w = enc_dvec(ctx, 2, n);
    nmo_tensor_load_f64(dy, &c->in[0], u * n, n, 1);
    nmo_tensor_load_f64(x, &c->in[1], u * n, n, 1);
    nmo_tensor_load_f64(w, &c->in[2], 0, n, 1);
    E *dye = enc_evec(ctx, 0, n), *xe = enc_evec(ctx, 1, n), *we = enc_evec(ctx, 2, n);
    E *xh = enc_evec(ctx, 3, n), *me = enc_evec(ctx, 4, n);
    int inter = c->plan.inter != c->plan.compute;
    E *rv = enc_evec(ctx, 5, n);
    E r, invn, S, S2, S3, cc, c2, A, B, q, t, d1, d2, nf, t1;
    enc_init(ctx, &r), enc_init(ctx, &invn), enc_init(ctx, &S), enc_init(ctx, &S2), enc_init(ctx, &S3);
    enc_init(ctx, &nf), enc_init(ctx, &t1);
    enc_init(ctx, &cc), enc_init(ctx, &c2), enc_init(ctx, &A);
    enc_init(ctx, &B), enc_init(ctx, &q), enc_init(ctx, &t), enc_init(ctx, &d1), enc_init(ctx, &d2);

    NMO_REF(rms_bwd_rstd)(ctx, c, u, &r);
    norm_inv_n(ctx, &invn, n);
    for (int64_t j = 0; j < n; j++) {
        enc_set_d(ctx, &dye[j], dy[j]);
        enc_set_d(ctx, &xe[j], x[j]);
        enc_set_d(ctx, &we[j], w[j]);
        enc_set(ctx, &rv[j], &r);
        enc_mul(ctx, &xh[j], &xe[j], &r);
        if (inter) {
            /* m = dy*w stored in `inter` (HF Llama's casting), or kept in compute: Liger's
             * llama mode at ead96b61 loads W, adds the fp32 scalar offset (W_row + offset
             * .to(tl.float32): Triton promotes the bf16 row to fp32), so m = dY_row * W_row
             * is an fp32 product (liger_kernel/ops/rms_norm.py, _rms_norm_backward_kernel
             * and _block_rms_norm_backward_kernel); only the dw terms pass through
             * X_dtype. The hull holds both; test_liger_plans.py's llama emulation FAILs
             * dx without it (m exact, ~30,000 ulps through the cancellation). */
            enc_mul(ctx, &me[j], &dye[j], &we[j]);
            enc_round(ctx, &me[j], &me[j], c->plan.inter, NMO_RNE, 0);
            const E *fm[2] = {&dye[j], &we[j]};
            enc_prodk(ctx, &t, fm, 2, 1);
            enc_hull(ctx, &me[j], &me[j], &t);
        } else { /* m = dy*w, rounded or contracted into its use */
            const E *fm[2] = {&dye[j], &we[j]};
            enc_prodk(ctx, &me[j], fm, 2, 1);
        }
    }
    if (inter) {
        const E *fs[2] = {me, xe};
        enc_dotk(ctx, &S, fs, 2, n, 0);
        const E *fs2[2] = {me, xh};
        enc_dotk(ctx, &S2, fs2, 2, n, 0);
    } else {
        const E *fs[3] = {dye, we, xe};
        enc_dotk(ctx, &S, fs, 3, n, 1);
        const E *fs2[3] = {dye, we, xh};
        enc_dotk(ctx, &S2, fs2, 3, n, 1);
    }
    /* ATen: S3 = sum ((m*x)*rstd); m = dy*w as above (rounded in inter, or a factor) */
    if (inter) {
        const E *fs3[3] = {me, xe, rv};
        enc_dotk(ctx, &S3, fs3, 3, n, 1);
    } else {
        const E *fs3[4] = {dye, we, xe, rv};
        enc_dotk(ctx, &S3, fs3, 4, n, 2);
    }
    enc_const(ctx, &nf, (double)n); /* float(N): exact below 2^24 (the row lengths accepted) */
    const E *ft1[2] = {&invn, &r};
    enc_prodk(ctx, &t1, ft1, 2, 0); /* term1 = RN(RN(1/N) * rstd), stored */
    const E *fc[4] = {&r, &r, &S, &invn};
    enc_prodk(ctx, &cc, fc, 4, 0);                 /* factored: c = rstd^2 S / N */
    const E *fc2[2] = {&S2, &invn};
    enc_prodk(ctx, &c2, fc2, 2, 0);                /* normalized: c' = S' / N */
    for (int64_t j = 0; j < n; j++) {
        /* distributed */
        const E *fa[3] = {&dye[j], &we[j], &r}, *fa2[2] = {&me[j], &r};
        if (inter) enc_prodk(ctx, &A, fa2, 2, 1);
        else enc_prodk(ctx, &A, fa, 3, 1);
        const E *fb[6] = {&xe[j], &r, &r, &r, &S, &invn};
        enc_prodk(ctx, &B, fb, 6, 1);
        enc_sub(ctx, &d1, &A, &B);
        /* factored */
        const E *fx[2] = {&xe[j], &cc};
        enc_prodk(ctx, &t, fx, 2, 1);
        enc_sub(ctx, &q, &me[j], &t);
        enc_mul(ctx, &d2, &r, &q);
        enc_hull(ctx, &d1, &d1, &d2);
        /* normalized */
        const E *fh[2] = {&xh[j], &c2};
        enc_prodk(ctx, &t, fh, 2, 1);
        enc_sub(ctx, &q, &me[j], &t);
        enc_mul(ctx, &d2, &r, &q);
        enc_hull(ctx, &d1, &d1, &d2);
        /* ATen: f = (N*w)*dy (the product rounded, or contracted into the subtraction);
         * t = (x*rstd)*S3; dx = term1 * (f - t) */
        if (inter) {
            const E *ff[2] = {&nf, &me[j]};
            enc_prodk(ctx, &A, ff, 2, 1);
        } else {
            const E *ff[3] = {&nf, &we[j], &dye[j]};
            enc_prodk(ctx, &A, ff, 3, 1);
        }
        const E *fx3[3] = {&xe[j], &r, &S3};
        enc_prodk(ctx, &t, fx3, 3, 1);
        enc_sub(ctx, &q, &A, &t);
        enc_mul(ctx, &d2, &t1, &q);
        enc_hull(ctx, &d1, &d1, &d2);
        enc_export(ctx, &out[0][j], &d1);
    }

    enc_clear(ctx, &r), enc_clear(ctx, &invn), enc_clear(ctx, &S), enc_clear(ctx, &S2), enc_clear(ctx, &S3);
    enc_clear(ctx, &nf), enc_clear(ctx, &t1);
    enc_clear(ctx, &cc), enc_clear(ctx, &c2), enc_clear(ctx, &A);
    enc_clear(ctx, &B), enc_clear(ctx, &q), enc_clear(ctx, &t), enc_clear(ctx, &d1), enc_clear(ctx, &d2);
}

static void NMO_REF(rms_bwd_col)(E_CTX *ctx, const nmo_case *c, int64_t j, nmo_fenc **out)
{
    int64_t rows = c->in[3].dims[0], n = c->in[2].dims[0];
    double *dy = enc_dvec(ctx, 0, rows);
    double *x = enc_dvec(ctx, 1, rows);
    nmo_tensor_load_f64(dy, &c->in[0], j, rows, n);
    nmo_tensor_load_f64(x, &c->in[1], j, rows, n);
    E *dye = enc_evec(ctx, 0, rows), *xe = enc_evec(ctx, 1, rows), *re = enc_evec(ctx, 2, rows);
    E dw;
    enc_init(ctx, &dw);
    for (int64_t i = 0; i < rows; i++) {
        enc_set_d(ctx, &dye[i], dy[i]);
        enc_set_d(ctx, &xe[i], x[i]);
        NMO_REF(rms_bwd_rstd)(ctx, c, i, &re[i]);
    }
    if (c->plan.inter != c->plan.compute) {
        /* Liger's llama casting mode: dy * RN_inter(x*rstd), the product stored in inter,
         * summed in acc (any order) */
        for (int64_t i = 0; i < rows; i++) {
            enc_mul(ctx, &xe[i], &xe[i], &re[i]);
            enc_round(ctx, &xe[i], &xe[i], c->plan.inter, NMO_RNE, 0);
            enc_mul(ctx, &xe[i], &xe[i], &dye[i]);
            enc_round(ctx, &xe[i], &xe[i], c->plan.inter, NMO_RNE, 0);
        }
        enc_sum(ctx, &dw, xe, rows);
    } else {
        const E *f[3] = {dye, xe, re};
        enc_dotk(ctx, &dw, f, 3, rows, 1);
    }
    enc_export(ctx, &out[1][0], &dw);
    enc_clear(ctx, &dw);
}

void NMO_REF(nmo_ref_rms_norm_bwd_eval)(E_CTX *ctx, const nmo_case *c, int64_t u, nmo_fenc **out)
{
    int64_t rows = c->in[3].dims[0];
    if (u < rows) NMO_REF(rms_bwd_row)(ctx, c, u, out);
    else NMO_REF(rms_bwd_col)(ctx, c, u - rows, out);
}

#ifdef NMO_ENGINE_FAST
#include <math.h>
#include "refs/ref_common.h"

void NMO_REF_CERT(nmo_ref_rms_norm_bwd_eval)(nmo_cctx *ctx, const nmo_case *c, int64_t u, nmo_fenc **out);
void NMO_REF_CERT(nmo_ref_rms_norm_bwd_stat)(nmo_cctx *ctx, const nmo_case *c, int64_t i, nmo_fenc *out);

static nmo_status rms_norm_bwd_setup(nmo_case *c, nmo_err *err)
{
    int64_t rows, n;
    NMO_RETURN_IF_ERR(nmo_ref_rows_shape(c, &rows, &n, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[0], c->plan.in, c->nshape, c->shape, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[1], c->plan.in, c->nshape, c->shape, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[2], c->plan.in, 1, &n, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[3], NMO_FP32, 1, &rows, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->out[0], c->plan.out, c->nshape, c->shape, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->out[1], c->plan.out, 1, &n, err));
    return NMO_OK;
}

/* The forward's saved statistic: rstd_i = RN32(1/sqrt(mean_j x^2 + RN32(eps))), the
 * mean taken in long double (exact enough: the value is rounded to fp32 once). */
static void rms_norm_bwd_derive(nmo_case *c)
{
    int64_t rows = c->in[3].dims[0], n = c->in[2].dims[0];
    long double eps = (float)c->param[0];
    for (int64_t i = 0; i < rows; i++) {
        long double ss = 0;
        for (int64_t j = 0; j < n; j++) {
            long double v = nmo_tensor_get(&c->in[1], i * n + j);
            ss += v * v;
        }
        nmo_tensor_set(&c->in[3], i, (double)(float)(1.0L / sqrtl(ss / n + eps)));
    }
}

static int64_t rms_norm_bwd_units(const nmo_case *c) { return c->in[3].dims[0] + c->in[2].dims[0]; }

/* rows write dx (output 0), then columns write dw (output 1) */
static void rms_norm_bwd_span(const nmo_case *c, int64_t u, int k, int64_t *begin, int64_t *count,
                              int64_t *stride)
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

const nmo_op nmo_op_rms_norm_bwd = {
    .name = "rms_norm_bwd",
    .summary = "backward of rms_norm (Liger-Kernel's formula and its variants), with the saved rstd or recomputing it",
    .shape_doc = "MxN (or ...xN): rows of N",
    .rounding_doc = "S=sum dy*w*x (any order, acc); dx=rstd*dy*w - x*rstd^3*S/N (any association, "
                    "FMA or not) | rstd*(dy*w - x*(rstd^2 S/N)) | rstd*(m - xh*sum(m*xh)/N) | "
                    "ATen's ((N*w)*dy - (x*rstd)*sum((m*x)*rstd))*RN(RN(1/N)*rstd); "
                    "dw=sum_i dy*x*rstd (any order, acc); inter plans: m=RN_inter(dy*w) or dy*w "
                    "(Liger: W in fp32), dw terms RN_inter(dy*RN_inter(x*rstd)) (Liger's llama mode)",
    .n_in = 4,
    .in = {{"dy", NMO_ROLE_DATA, "output gradient [..., N]"},
           {"x", NMO_ROLE_DATA, "forward input [..., N]"},
           {"w", NMO_ROLE_WEIGHT, "weight [N]"},
           {"rstd", NMO_ROLE_DERIVED,
            "saved 1/sqrt(mean(x^2)+eps) per row, fp32 [rows]; optional: absent, the reference "
            "encloses every recomputation (rms_norm's forward model)", NMO_IN_OPTIONAL}},
    .n_out = 2,
    .out = {{"dx", NMO_ROLE_DATA, "input gradient [..., N]"},
            {"dw", NMO_ROLE_DATA, "weight gradient [N]"}},
    .n_param = 1,
    .param = {{"eps", 1e-6, "the forward's eps (used to derive or recompute rstd)", NMO_PDOM_NONNEG}},
    .dtypes = "fp32 bf16 fp16",
    .test_shapes = "3x1025;8x64",
    .test_shapes_large = "3x4097;8x64",
    /* saved rstd: no function evaluated; dotk sums ignore sum= */
    .plan_fields = NMO_PF_COMPUTE | NMO_PF_ACC | NMO_PF_INTER | NMO_PF_SUM_GEOM,
    .plan_vacuous = NMO_PF_FN,
    .setup = rms_norm_bwd_setup,
    .row_len = nmo_ref_row_len_last,
    .units = rms_norm_bwd_units,
    .unit_span = rms_norm_bwd_span,
    .derive = rms_norm_bwd_derive,
    .eval_fast = NMO_REF_FAST(nmo_ref_rms_norm_bwd_eval),
    .eval_cert = NMO_REF_CERT(nmo_ref_rms_norm_bwd_eval),
    .stat_fast = NMO_REF_FAST(nmo_ref_rms_norm_bwd_stat),
    .stat_cert = NMO_REF_CERT(nmo_ref_rms_norm_bwd_stat),
};
#endif
