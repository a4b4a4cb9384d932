/* sdpa (forward scaled-dot-product attention, grouped-query):
 *   o[b,h,i,:] = sum_j P_ij v[b,g(h),j,:],  P_ij = softmax_j(sc * q[b,h,i,:].k[b,g(h),j,:]),
 *   g(h) = h / (Hq/Hkv), keys j <= i when causal (queries and keys aligned top-left),
 *   sc = the scale parameter, or 1/sqrt(D) when it is 0.
 *
 * Rounding points (compute/acc fp32); every variant listed is enclosed (hull):
 *   sc         RN(scale) when given; for the default, RN(1/sqrt(D)), rsqrtf(D) of plan
 *              accuracy or RN(1/RN(sqrt(D))) (enc_rsqrt)
 *   scores     d_j = q.k_j any order, FMA or not, in acc (dot model), then
 *              (A) s_j = RN(sc d_j), or (B) s_j = dot(RN(q sc), k_j) (q pre-scaled)
 *   argument   a_j = RN(s_j - max_k s_k) for (A) and (B), or
 *              (C) a_j = RN(sc RN(d_j - max_k d_k)) (max over raw dots, scale after).
 *              One implementation's max is one of its own scores and RN is monotone, so
 *              a_j = min(0, RN(s_j - max_{k!=j} s_k)): the key holding the max gets
 *              exactly 0 (no dependency blow-up from subtracting an enclosure of itself)
 *   weights    p_j = exp(a_j) (plan accuracy fn_ulps[EXP])
 *   two-pass   l = sum_j p_j ((n-1) u summation model), n_t = sum_j p_j v_jt (n u dot
 *              model)
 *   online     FlashAttention: keys in blocks of any size, in any block order; running max
 *              m_r; rescale factors alpha_r = exp(RN(m_{r-1} - m_r)) applied to l and to
 *              the accumulators by rounded multiplies; l and acc may use FMA. With n keys,
 *              a key's terms see R <= n-1 rescales after its block. The bound:
 *              - argument: the roundings of s_j - m_b and of every m_{r-1} - m_r add up
 *                to at most u (m - s_j) (the differences have one sign and telescope to
 *                m - s_j); for (C), (2u + u^2) sc (max d - d_j). The two-pass argument is
 *                itself within that of the exact one, so widening a_j by 6u relative
 *                (> 4u + O(u^2)) encloses the online one;
 *              - the R rescale factors are exps of plan accuracy: relative
 *                (1 + eps_f)^R - 1 <= R eps_f (1 + R eps_f), eps_f = 2 n_e u (n_e ulps;
 *                u when correctly rounded); absolute 2 R n_e min_subnormal for subnormal
 *                alphas; an absolute argument error (R+2) eta from subnormal products in
 *                (C) is a relative weight error 2 (R+2) eta: all added to the weights
 *                as rel_w / abs_w (enc_widen after enc_exp);
 *              - accumulation: every term's path has at most n adds or FMAs plus R
 *                rescale multiplies, h = n + R + 1 roundings, so the result is the exact
 *                dot of the widened weights with v, each term scaled by (1 + theta),
 *                |theta| <= gamma_h = h u / (1 - h u) (Higham, ASNA 2nd ed., Lemma 3.1):
 *                enc_dot_ed with k = gamma_h / u, for l (v = 1) and every n_t.
 *              These weights contain p_j and k >= n, so the online enclosure contains the
 *              two-pass one: only it is evaluated. test_linalg_params checks it against
 *              online candidates rescaling at every key (monotonically rising scores).
 *   inter      a kernel that feeds P to the P.V product in a narrower format (FA2 casts P
 *              to bf16 for the tensor-core mma; l from fp32 P or not) is the plan's
 *              `inter`: the weights are widened by u_inter (+ half its subnormal spacing)
 *   output     o_t = n_t / l or n_t * RN(1/l) (hull); store into `out` (checker).
 * Not covered: exp evaluated as exp2(x*log2e) with the scale folded into an FMA
 * (FA2's exp2f(s*scale_log2 - m*scale_log2)) or the ex2.approx / __expf intrinsics (the
 * argument model above does not hold for the FMA fold), tensor-core accumulation of the
 * scores (sum=mma), dropout, additive masks, S_q != S_kv, scores stored in a narrower
 * format; kernels that rescale by exp(0) != 1 over fully masked key blocks.
 * Masks: causal and hipDNN's diagonal band (left_bound/right_bound, CpuFpReferenceSdpa in
 * rocm-libraries projects/hipdnn test_sdk: keys j < i - left and j > i + right masked). */
#include <math.h>

#include "engine/ref.h"

typedef struct {
    int64_t B, Hq, Hkv, S, D;
} sdpa_dims;

static sdpa_dims sdpa_get_dims(const nmo_case *c)
{
    sdpa_dims d = {c->shape[0], c->shape[1], c->shape[2], c->shape[3], c->shape[4]};
    return d;
}

void NMO_REF(nmo_ref_sdpa_eval)(E_CTX *ctx, const nmo_case *c, int64_t u, nmo_fenc **out)
{
    /* attention kernels fold exp's argument into an FMA (FA2: exp2f(s*scale_log2 -
     * m*scale_log2)): its error grows with the row max, not with the argument enclosed
     * here, so exp takes the plan's flat figure, never fn=triton's argument-dependent one
     * (nmo_plan_exp_ulps; the flat 112 is 2 + 1.23 * 88.73 ulps) */
    ctx->exp_flat = 1;
    sdpa_dims dm = sdpa_get_dims(c);
    int64_t S = dm.S, D = dm.D;
    int64_t b = u / (dm.Hq * S), h = (u / S) % dm.Hq, i = u % S;
    int64_t hk = h / (dm.Hq / dm.Hkv);
    /* the visible keys j0 <= j < j0 + n: causal (j <= i) and hipDNN's diagonal band
     * (left_bound: j >= i - left, right_bound: j <= i + right; -1 unbounded), queries and
     * keys aligned top-left (S_q = S_kv: bottom-right is the same). Masked keys weigh
     * exactly 0 and leave the running max alone, so the model below sees n keys. */
    int causal = c->param[0] != 0;
    int64_t left = (int64_t)c->param[2], right = (int64_t)c->param[3];
    int64_t j0 = left >= 0 && i - left > 0 ? i - left : 0, j1 = causal ? i + 1 : S;
    if (right >= 0 && i + right + 1 < j1) j1 = i + right + 1;
    int64_t n = j1 - j0;
    const nmo_tensor *tq = &c->in[0], *tk = &c->in[1], *tv = &c->in[2];

    double *q = enc_dvec(ctx, 0, D);
    double *kk = enc_dvec(ctx, 1, n * D);
    double *vv = enc_dvec(ctx, 2, n * D);
    double *col = enc_dvec(ctx, 3, n);
    double *ones = enc_dvec(ctx, 4, n);
    nmo_tensor_load_f64(q, tq, b * tq->strides[0] + h * tq->strides[1] + i * tq->strides[2], D,
                        tq->strides[3]);
    for (int64_t j = 0; j < n; j++) {
        nmo_tensor_load_f64(kk + j * D, tk, b * tk->strides[0] + hk * tk->strides[1] + (j0 + j) * tk->strides[2],
                            D, tk->strides[3]);
        nmo_tensor_load_f64(vv + j * D, tv, b * tv->strides[0] + hk * tv->strides[1] + (j0 + j) * tv->strides[2],
                            D, tv->strides[3]);
        ones[j] = 1.0;
    }

    E *qs = enc_evec(ctx, 0, D + 7 * n); /* RN(q sc) [D], then 7 arrays of n: */
    E *s = qs + D;       /* scores (A) */
    E *sb = s + n;       /* scores (B) */
    E *d = sb + n;       /* raw dots */
    E *a = d + n;        /* arguments (A), then the hull of all three */
    E *ab = a + n;       /* arguments (B) */
    E *ac = ab + n;      /* arguments (C) */
    E *w = ac + n;       /* online weights (they enclose the two-pass weights too) */
    E sc, t, m, dmax, l, rcp, num, o1, o2;
    enc_init(ctx, &sc), enc_init(ctx, &t), enc_init(ctx, &m), enc_init(ctx, &dmax);
    enc_init(ctx, &l), enc_init(ctx, &rcp), enc_init(ctx, &num), enc_init(ctx, &o1), enc_init(ctx, &o2);

    /* the scale */
    if (c->param[1] != 0) {
        enc_const(ctx, &sc, c->param[1]);
    } else {
        enc_set_d(ctx, &t, (double)D);
        enc_rsqrt(ctx, &sc, &t);
        enc_const(ctx, &t, 1.0 / sqrt((double)D));
        enc_hull(ctx, &sc, &sc, &t);
    }
    /* scores: (A) RN(sc d_j), (B) dot(RN(q sc), k_j) */
    for (int64_t x = 0; x < D; x++) {
        enc_set_d(ctx, &t, q[x]);
        enc_mul(ctx, &qs[x], &t, &sc);
    }
    for (int64_t j = 0; j < n; j++) {
        enc_dot_d(ctx, &d[j], q, kk + j * D, D);
        enc_mul(ctx, &s[j], &d[j], &sc);
        enc_dot_ed(ctx, &sb[j], qs, kk + j * D, D, (double)D);
    }
    /* arguments a_j = RN(s_j - max_k s_k) for (A) and (B), RN(sc RN(d_j - max_k d_k)) for
     * (C), each variant separately, then hulled. One implementation computes every s_k
     * the same way and its max is one of its own scores, so (RN being monotone)
     * RN(s_j - max_k s_k) = min(0, RN(s_j - max_{k != j} s_k)): the key holding the max
     * gets exactly 0 (no dependency blow-up from subtracting an enclosure of itself).
     * max_{k != j} comes from prefix and suffix maxima (O(n)). */
    for (int var = 0; var < 3; var++) {
        E *src = var == 0 ? s : var == 1 ? sb : d;
        E *dst = var == 0 ? a : var == 1 ? ab : ac;
        /* suffix maxima into dst: dst[j] = max_{k > j} src[k] (dst[n-1] unused) */
        for (int64_t j = n - 2; j >= 0; j--) {
            if (j == n - 2) enc_set(ctx, &dst[j], &src[n - 1]);
            else enc_max(ctx, &dst[j], &dst[j + 1], &src[j + 1]);
        }
        for (int64_t j = 0; j < n; j++) {
            /* m = max_{k != j} src[k] from the prefix max (in dmax) and the suffix max */
            if (n == 1) {
                enc_const(ctx, &dst[j], 0.0);
                continue;
            }
            if (j == 0) enc_set(ctx, &m, &dst[0]);
            else if (j == n - 1) enc_set(ctx, &m, &dmax);
            else enc_max(ctx, &m, &dmax, &dst[j]);
            if (j == 0) enc_set(ctx, &dmax, &src[0]);
            else enc_max(ctx, &dmax, &dmax, &src[j]);
            enc_sub(ctx, &t, &src[j], &m);
            if (var == 2) enc_mul(ctx, &t, &t, &sc);
            enc_const(ctx, &m, 0.0);
            enc_min(ctx, &dst[j], &t, &m);
        }
    }
    for (int64_t j = 0; j < n; j++) {
        enc_hull(ctx, &a[j], &a[j], &ab[j]);
        enc_hull(ctx, &a[j], &a[j], &ac[j]);
    }
    /* model constants (plain numbers, identical in both engines) */
    const nmo_fmt_info *cfi = nmo_fmt_get(c->plan.compute), *afi = nmo_fmt_get(c->plan.acc);
    const nmo_fmt_info *ifi = nmo_fmt_get(c->plan.inter);
    double uc = ldexp(1.0, -cfi->prec), ua = ldexp(1.0, -afi->prec);
    double etac = c->plan.ftz ? cfi->min_normal : cfi->min_subnormal / 2;
    int ne = c->plan.fn_ulps[NMO_FN_EXP];
    int inter = c->plan.inter != c->plan.compute;
    double R = (double)(n - 1);
    double epsf = ne > 0 ? 2.0 * ne * uc : uc;
    /* an absolute argument error x (subnormal products in (C)) is a relative weight
     * error exp(x) - 1 <= 2x: folded into rel_w, so a zero argument stays exactly 0 */
    double rel_a = 6 * uc;
    double rel_w = R * epsf * (1 + R * epsf) + 2 * (R + 2) * etac;
    double abs_w = 2 * R * (ne > 0 ? ne : 1) * (c->plan.ftz ? cfi->min_normal : cfi->min_subnormal);
    if (inter) {
        double ui = ldexp(1.0, -ifi->prec);
        rel_w = rel_w + ui + rel_w * ui;
        abs_w += c->plan.ftz ? ifi->min_normal : ifi->min_subnormal / 2;
    }
    /* the factor 1 + 2^-7 keeps widened endpoints off the lattice (a widening by an
     * exact multiple of u lands on a lattice point, which the fast engine cannot snap
     * without escalating); it only enlarges the bounds */
    rel_a *= 1 + 0x1p-7, rel_w *= 1 + 0x1p-7, abs_w *= 1 + 0x1p-7;
    double hh = (double)n + R + 1;
    double kon = hh / (1 - hh * ua) * (1 + 0x1p-40);

    /* The online enclosure contains the two-pass computation (w_j contains exp(a_j) and
     * its rounding to inter; k_on >= n covers the n u (dot) and (n-1) u (sum) models),
     * so only it is evaluated. */
    for (int64_t j = 0; j < n; j++) {
        enc_widen(ctx, &t, &a[j], rel_a, 0);
        enc_exp(ctx, &w[j], &t);
        enc_widen(ctx, &w[j], &w[j], rel_w, abs_w);
    }
    enc_dot_ed(ctx, &l, w, ones, n, kon);
    enc_const(ctx, &t, 1.0);
    enc_div(ctx, &rcp, &t, &l);
    for (int64_t x = 0; x < D; x++) {
        for (int64_t j = 0; j < n; j++) col[j] = vv[j * D + x];
        enc_dot_ed(ctx, &num, w, col, n, kon);
        enc_div(ctx, &o1, &num, &l);
        enc_mul(ctx, &o2, &num, &rcp);
        enc_hull(ctx, &o1, &o1, &o2);
        enc_export(ctx, &out[0][x], &o1);
    }

    enc_clear(ctx, &sc), enc_clear(ctx, &t), enc_clear(ctx, &m), enc_clear(ctx, &dmax);
    enc_clear(ctx, &l), enc_clear(ctx, &rcp), enc_clear(ctx, &num), enc_clear(ctx, &o1), enc_clear(ctx, &o2);
}

#ifdef NMO_ENGINE_FAST
#include "refs/ref_common.h"

void NMO_REF_CERT(nmo_ref_sdpa_eval)(nmo_cctx *ctx, const nmo_case *c, int64_t u, nmo_fenc **out);

/* Shape BxHqxHkvxSxD: q is [B,Hq,S,D], k and v are [B,Hkv,S,D], o is [B,Hq,S,D]. */
nmo_status nmo_ref_sdpa_setup_common(nmo_case *c, nmo_err *err)
{
    if (c->nshape != 5)
        return nmo_err_set(err, NMO_ERR_SHAPE, "%s: shape must be BxHqxHkvxSxD, got %d dims",
                           c->op->name, c->nshape);
    int64_t B = c->shape[0], Hq = c->shape[1], Hkv = c->shape[2], S = c->shape[3], D = c->shape[4];
    if (Hkv < 1 || Hq < 1 || S < 1 || D < 1)
        return nmo_err_set(err, NMO_ERR_SHAPE, "%s: every dim of BxHqxHkvxSxD must be >= 1",
                           c->op->name);
    if (Hq % Hkv != 0)
        return nmo_err_set(err, NMO_ERR_SHAPE, "%s: Hq (%lld) must be a multiple of Hkv (%lld)",
                           c->op->name, (long long)Hq, (long long)Hkv);
    if (c->param[0] != 0 && c->param[0] != 1)
        return nmo_err_set(err, NMO_ERR_USAGE, "%s: causal must be 0 or 1, got %g", c->op->name,
                           c->param[0]);
    for (int k = 2; k < 4 && k < c->op->n_param; k++)
        if (!(c->param[k] >= -1) || c->param[k] != floor(c->param[k]))
            return nmo_err_set(err, NMO_ERR_USAGE, "%s: %s must be an integer >= -1 (-1: unbounded), got %g",
                               c->op->name, c->op->param[k].name, c->param[k]);
    if (!(c->param[1] >= 0) || !isfinite(c->param[1]))
        return nmo_err_set(err, NMO_ERR_USAGE, "%s: scale must be >= 0 (0: 1/sqrt(D)), got %g",
                           c->op->name, c->param[1]);
    int64_t dq[4] = {B, Hq, S, D}, dk[4] = {B, Hkv, S, D};
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[0], c->plan.in, 4, dq, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[1], c->plan.in, 4, dk, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[2], c->plan.in, 4, dk, err));
    return NMO_OK;
}

static nmo_status sdpa_setup(nmo_case *c, nmo_err *err)
{
    NMO_RETURN_IF_ERR(nmo_ref_sdpa_setup_common(c, err));
    int64_t dq[4] = {c->shape[0], c->shape[1], c->shape[3], c->shape[4]};
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->out[0], c->plan.out, 4, dq, err));
    return NMO_OK;
}

/* Per-row families follow the head dimension D (rows of q, k, v). */
static int64_t sdpa_row_len(const nmo_case *c) { return c->shape[4]; }
/* One unit per query row (b, h, i): it writes o[b,h,i,:]. */
static int64_t sdpa_units(const nmo_case *c) { return c->shape[0] * c->shape[1] * c->shape[3]; }

static void sdpa_span(const nmo_case *c, int64_t u, int k, int64_t *begin, int64_t *count,
                      int64_t *stride)
{
    (void)k;
    *begin = u * c->shape[4];
    *count = c->shape[4];
    *stride = 1;
}

const nmo_op nmo_op_sdpa = {
    .name = "sdpa",
    .summary = "scaled-dot-product attention forward (grouped-query, causal option), fp32 softmax",
    .shape_doc = "BxHqxHkvxSxD: q [B,Hq,S,D], k and v [B,Hkv,S,D], o [B,Hq,S,D]; Hq a multiple of Hkv",
    .rounding_doc = "s=RN(sc*q.k)|q.k with q*sc; a=RN(s-max)|RN(sc*RN(d-max d)); p=exp(a) (fn ulps); "
                    "two-pass l=sum p, n=sum p v, or online (any blocks, rescales bounded); o=n/l|n*RN(1/l)",
    .n_in = 3,
    .in = {{"q", NMO_ROLE_DATA, "queries [B,Hq,S,D]"},
           {"k", NMO_ROLE_DATA, "keys [B,Hkv,S,D]"},
           {"v", NMO_ROLE_DATA, "values [B,Hkv,S,D]"}},
    .n_out = 1,
    .out = {{"o", NMO_ROLE_DATA, "output [B,Hq,S,D]"}},
    .n_param = 4,
    .param = {{"causal", 1, "1: key j attends only for j <= i (top-left aligned); 0: no mask"},
              {"scale", 0, "score scale; 0 means 1/sqrt(D)"},
              {"left_bound", -1, "keys j < i - left_bound masked (hipDNN's diagonal band); -1: unbounded"},
              {"right_bound", -1, "keys j > i + right_bound masked (hipDNN's diagonal band); -1: unbounded"}},
    .dtypes = "fp32 bf16 fp16 fp8_e4m3 fp8_e5m2",
    .test_shapes = "1x4x2x33x16;2x2x1x16x8",
    .test_shapes_large = "1x4x2x129x16;2x2x1x16x8",
    /* the pre-scaled and P.V products use the any-order bound */
    .plan_fields = NMO_PF_COMPUTE | NMO_PF_ACC | NMO_PF_FN | NMO_PF_INTER,
    .plan_vacuous = 0,
    .setup = sdpa_setup,
    .row_len = sdpa_row_len,
    .units = sdpa_units,
    .unit_span = sdpa_span,
    .eval_fast = NMO_REF_FAST(nmo_ref_sdpa_eval),
    .eval_cert = NMO_REF_CERT(nmo_ref_sdpa_eval),
};
#endif
