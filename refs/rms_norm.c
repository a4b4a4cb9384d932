/* rms_norm (forward): y[i,j] = x[i,j] * rsqrt(mean_j(x[i,j]^2) + eps) * (offset + w[j])
 * (offset 0: LLaMA; 1: Gemma's (1 + w)).
 *
 * Rounding points (every one in `compute`, RNE, unless said otherwise):
 *   ss  = sum_j x_j^2      any order and tree, FMA or not, in `acc` (dot-product model;
 *                          sum=exact: the plan asserts it exact)
 *   ms  = ss / N           or ss * RN(1/N)          (hull of both)
 *   v   = ms + eps         eps held as RN(eps) in compute
 *   r   = rsqrt(v)         plan accuracy fn_ulps[RSQRT], or RN(1/RN(sqrt(v))) (hull)
 *   wo  = offset + w       RN(RN(offset) + w) (w itself when offset = 0)
 *   fused plan (inter == compute):
 *     y = x * r * wo       any association of the three factors (two roundings)
 *   unfused plan (inter != compute: the "llama" casting of Hugging Face LlamaRMSNorm,
 *   `w * (x.float() * rsqrt(...)).to(x.dtype)`, and of Liger-Kernel casting_mode="llama"):
 *     t = RN_inter(x * r)  x*r in compute, then stored in `inter`
 *     y = t * wo           in compute (bf16 x bf16 is exact in fp32: one rounding, the store)
 *   store y into `out`     (checker: plan round)
 * Liger's "gemma" casting (everything in fp32, one cast at the end) and HF GemmaRMSNorm
 * are the fused form with offset = 1. torch.compile of the llama form is fused too
 * (Inductor does not keep the intermediate cast): judge it under the fused plan.
 * Not covered: kernels that divide each square by N before summing, the offset
 * distributed over the product, arithmetic in the storage dtype (Liger "none"). */
#include <stdlib.h>
#include <string.h>

#include "refs/norm_common.h"

void NMO_REF(nmo_ref_rms_norm_eval)(E_CTX *ctx, const nmo_case *c, int64_t u, nmo_fenc **out)
{
    int64_t n = c->in[1].dims[0];
    double *x = enc_dvec(ctx, 0, n);
    double *w = enc_dvec(ctx, 1, n);
    nmo_tensor_load_f64(x, &c->in[0], u * n, n, 1);
    nmo_tensor_load_f64(w, &c->in[1], 0, n, 1);
    E r;
    enc_init(ctx, &r);
    norm_rms_rstd(ctx, &r, x, n, c->param[0]);
    double offset = c->param[1];
    if (c->plan.inter == c->plan.compute && offset == 0) {
        /* y_j = x_j * r * w_j for the whole row (enc_mul3 element by element) */
        enc_mul3_row(ctx, out[0], x, &r, w, n);
    } else {
        E xe, y, off, wo;
        enc_init(ctx, &xe), enc_init(ctx, &y), enc_init(ctx, &off), enc_init(ctx, &wo);
        enc_const(ctx, &off, offset);
        for (int64_t j = 0; j < n; j++) {
            enc_set_d(ctx, &xe, x[j]);
            norm_rms_scale(ctx, c, &y, &xe, &r, w[j], offset, &off, &wo);
            enc_export(ctx, &out[0][j], &y);
        }
        enc_clear(ctx, &xe), enc_clear(ctx, &y), enc_clear(ctx, &off), enc_clear(ctx, &wo);
    }
    enc_clear(ctx, &r);
}

/* Elements js[0..m) (increasing) of row u from the row's r, out[i] for element js[i]:
 * nmo_ref_rms_norm_eval's formulas element by element (enc_mul3_row and norm_rms_scale
 * compute each element from x_j, r and w_j alone), so each out[i] is what that function
 * writes for element js[i] given the same r. Escalation of single elements
 * (nmo_ref_rms_norm_eval_unc_cert). Scratch slots 2-5. */
void NMO_REF(nmo_ref_rms_norm_elems)(E_CTX *ctx, const nmo_case *c, int64_t u, const E *r, const int64_t *js,
                                     int64_t m, nmo_fenc *out);
void NMO_REF(nmo_ref_rms_norm_elems)(E_CTX *ctx, const nmo_case *c, int64_t u, const E *r, const int64_t *js,
                                     int64_t m, nmo_fenc *out)
{
    int64_t n = c->in[1].dims[0];
    double *xr = enc_dvec(ctx, 2, n), *wr = enc_dvec(ctx, 3, n);
    double *x = enc_dvec(ctx, 4, m > 0 ? m : 1), *w = enc_dvec(ctx, 5, m > 0 ? m : 1);
    nmo_tensor_load_f64(xr, &c->in[0], u * n, n, 1);
    nmo_tensor_load_f64(wr, &c->in[1], 0, n, 1);
    for (int64_t i = 0; i < m; i++) x[i] = xr[js[i]], w[i] = wr[js[i]];
    double offset = c->param[1];
    if (c->plan.inter == c->plan.compute && offset == 0) {
        enc_mul3_row(ctx, out, x, r, w, m);
    } else {
        E xe, y, off, wo;
        enc_init(ctx, &xe), enc_init(ctx, &y), enc_init(ctx, &off), enc_init(ctx, &wo);
        enc_const(ctx, &off, offset);
        for (int64_t i = 0; i < m; i++) {
            enc_set_d(ctx, &xe, x[i]);
            norm_rms_scale(ctx, c, &y, &xe, r, w[i], offset, &off, &wo);
            enc_export(ctx, &out[i], &y);
        }
        enc_clear(ctx, &xe), enc_clear(ctx, &y), enc_clear(ctx, &off), enc_clear(ctx, &wo);
    }
}

#ifdef NMO_ENGINE_CERT
void nmo_ref_rms_norm_elems_fast(struct nmo_fctx *ctx, const nmo_case *c, int64_t u, const nmo_fenc *r,
                                 const int64_t *js, int64_t m, nmo_fenc *out);
void nmo_ref_rms_norm_eval_unc_cert(struct nmo_fctx *fc, nmo_cctx *ctx, const nmo_case *c, int64_t u,
                                    nmo_fenc **out);

/* Escalation of row u's flagged elements only (op->eval_cert_unc_stat): out[0] holds the
 * fast engine's row. The row's r by the certified engine (as nmo_ref_rms_norm_eval_cert
 * computes it), then each element flagged NMO_EF_UNC from that r: first by the fast
 * engine's element formula (fc given, the certified r unflagged, finite and exactly the
 * binary64 pair it exports), whose decided results are the certified engine's for the
 * same inputs (the fast engine's contract, primitive by primitive: DESIGN section 5,
 * tested by tests/test_engines.c), then by the certified engine where that one is unsure.
 * The unflagged elements already are the certified ones: the fast r they came from was
 * decided, so it is the certified r (a flagged r flags every element of the row). */
void nmo_ref_rms_norm_eval_unc_cert(struct nmo_fctx *fc, nmo_cctx *ctx, const nmo_case *c, int64_t u,
                                    nmo_fenc **out)
{
    int64_t n = c->in[1].dims[0];
    norm_unc q;
    int st = norm_unc_begin(&q, out[0], n);
    if (st == 0) return;
    if (st < 0) {
        nmo_ref_rms_norm_eval_cert(ctx, c, u, out);
        return;
    }
    double *x = enc_dvec(ctx, 0, n);
    nmo_tensor_load_f64(x, &c->in[0], u * n, n, 1);
    E r;
    enc_init(ctx, &r);
    norm_rms_rstd(ctx, &r, x, n, c->param[0]);
    nmo_fenc rf;
    enc_export(ctx, &rf, &r);
    int exact = rf.flags == 0 && isfinite(rf.lo) && isfinite(rf.hi) && mpfr_cmp_d(r.lo, rf.lo) == 0 &&
                mpfr_cmp_d(r.hi, rf.hi) == 0;
    if (fc && exact) {
        nmo_ref_rms_norm_elems_fast(fc, c, u, &rf, q.js, q.m, q.t);
        norm_unc_keep_fast(&q, out[0]);
    }
    if (q.m2 > 0) nmo_ref_rms_norm_elems_cert(ctx, c, u, &r, q.js2, q.m2, q.t);
    norm_unc_end(&q, out[0]);
    enc_clear(ctx, &r);
}
#endif

#ifdef NMO_ENGINE_FAST
#include "refs/ref_common.h"

/* The GPU tier (hip/gpu_oracle.c): row u's r from the device's binary64 sum of squares s
 * of the row (any order, m nonzero terms), the fast engine's steps after enc_sumsq_d
 * (nmo_fenc_dot_d_finish, norm_rms_rstd_ss): the same enclosure and flags as
 * nmo_ref_rms_norm_eval's r whenever neither is flagged. Plans without ftz only (the
 * DAZ term of a subnormal input is 0 there). */
void nmo_ref_rms_norm_rstd_fast(nmo_fctx *ctx, const nmo_case *c, double s, int64_t m, double err, nmo_fenc *r);
void nmo_ref_rms_norm_rstd_fast(nmo_fctx *ctx, const nmo_case *c, double s, int64_t m, double err, nmo_fenc *r)
{
    int64_t n = c->in[1].dims[0];
    nmo_fenc ss;
    if (err < 0) nmo_fenc_dot_d_finish(ctx, &ss, s, s, m, n, 0);
    else nmo_fenc_dot_d_finish_e(ctx, &ss, s, s, m, n, 0, err);
    norm_rms_rstd_ss(ctx, r, &ss, n, c->param[0]);
    if (ctx->ftz) r->flags |= NMO_EF_UNC;
}

void NMO_REF_CERT(nmo_ref_rms_norm_eval)(nmo_cctx *ctx, const nmo_case *c, int64_t u, nmo_fenc **out);
void nmo_ref_rms_norm_eval_unc_cert(struct nmo_fctx *fc, nmo_cctx *ctx, const nmo_case *c, int64_t u,
                                    nmo_fenc **out);

static nmo_status rms_norm_setup(nmo_case *c, nmo_err *err)
{
    int64_t rows, n;
    NMO_RETURN_IF_ERR(nmo_ref_rows_shape(c, &rows, &n, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[0], c->plan.in, c->nshape, c->shape, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[1], c->plan.in, 1, &n, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->out[0], c->plan.out, c->nshape, c->shape, err));
    return NMO_OK;
}

const nmo_op nmo_op_rms_norm = {
    .name = "rms_norm",
    .summary = "RMS normalization over the last dim, times a weight",
    .shape_doc = "MxN (or ...xN): rows of N",
    .rounding_doc = "ss=sum x^2 (any order, acc); ms=ss/N|ss*RN(1/N); r=rsqrt(ms+eps) "
                    "(fn ulps)|1/sqrt; wo=RN(offset+w); y=x*r*wo any association "
                    "(inter != compute: RN_inter(x*r)*wo, the llama casting)",
    .n_in = 2,
    .in = {{"x", NMO_ROLE_DATA, "input [..., N]"}, {"w", NMO_ROLE_WEIGHT, "weight [N]"}},
    .n_out = 1,
    .out = {{"y", NMO_ROLE_DATA, "output [..., N]"}},
    .n_param = 2,
    .param = {{"eps", 1e-6, "added to the mean square inside the root", NMO_PDOM_NONNEG},
              {"offset", 0, "added to the weight, y = x*r*(offset + w) (Gemma: 1)"}},
    .dtypes = "fp32 bf16 fp16",
    .test_shapes = "3x1025;8x64",
    .test_shapes_large = "3x4097;8x64",
    /* sum of squares through the dot model (exact); no tensor-core product */
    .plan_fields = NMO_PF_COMPUTE | NMO_PF_ACC | NMO_PF_FN | NMO_PF_INTER | NMO_PF_SUM_EXACT | NMO_PF_SUM_GEOM,
    .plan_vacuous = 0,
    .setup = rms_norm_setup,
    .row_len = nmo_ref_row_len_last,
    .units = nmo_ref_units_rows,
    .unit_span = nmo_ref_unit_span_rows,
    .eval_fast = NMO_REF_FAST(nmo_ref_rms_norm_eval),
    .eval_cert = NMO_REF_CERT(nmo_ref_rms_norm_eval),
    .eval_cert_unc_stat = nmo_ref_rms_norm_eval_unc_cert,
};
#endif
