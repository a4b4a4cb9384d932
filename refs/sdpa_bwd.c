/* sdpa_bwd (attention backward, FlashAttention-2 formulas, grouped-query):
 *   P_ij  = exp(s_ij - lse_i),  s_ij = sc q_i.k_j      (recomputed from the saved LSE)
 *   dP_ij = dO_i . v_j,   D_i = rowsum(dO_i * O_i),   dS_ij = P_ij (dP_ij - D_i)
 *   dv_j = sum_{h in group, i} P_ij dO_i
 *   dq_i = sc sum_j dS_ij k_j,   dk_j = sc sum_{h in group, i} dS_ij q_i
 * over the keys/queries the (top-left) causal mask keeps. o and lse are saved forward
 * statistics (NMO_ROLE_DERIVED): derive() computes them from q, k, v as a correct forward
 * stores them (o in the input dtype, lse in fp32, both from a long-double forward), and
 * the reference takes them as given points.
 * o is optional (NMO_IN_OPTIONAL): absent, the kernel does not read a stored output and
 * D_i = sum_j P_ij dP_ij from its own P (PyTorch's math SDPA: autograd through softmax's
 * backward, fp32; measured on the H200: 0.5 ulp from an fp64 emulation with this D, 27 to
 * 4,800 ulps with D from the stored bf16 O: hip/validate/probe/sdpa_bwd_probe.py). A
 * kernel that reads a stored O needs it given. D_i is computed once per row, by the stat
 * functions into nmo_check's table (at element (b, h, i, 0) of o; the other elements of
 * the table are not used), and escalated there like rms_norm_bwd's rstd.
 *
 * Rounding points (compute/acc fp32):
 *   sc      as in sdpa: RN(scale), or RN(1/sqrt D) | rsqrtf(D) (plan ulps) | RN(1/RN(sqrt D))
 *   s_ij    (A) RN(sc dot(q_i, k_j)) or (B) dot(RN(q_i sc), k_j) (hull); dots any order,
 *           FMA or not (dot model)
 *   P_ij    exp(RN(s_ij - lse_i)) (fn_ulps[EXP])
 *   dP, D   dot products of inputs (dot model)
 *   dS_ij   RN(P_ij RN(dP_ij - D_i))
 *   inter   a kernel that feeds P (to dV) and dS (to dQ, dK) to the tensor-core products in
 *           a narrower format (FA2: bf16) is the plan's `inter`: P and dS rounded to it or
 *           not (hull: either operand may stay fp32); the P inside dS = P (dP - D) too
 *           (PyTorch's memory-efficient backward reuses the bf16 P it feeds to dV:
 *           dS = RN(RN_bf16(P) (dP - D)), 0.5 ulp from an fp64 emulation on the H200,
 *           240-350 ulps with fp32 P; hip/validate/probe/sdpa_bwd_probe_eff.py)
 *   dv      sum of P dO (dot model with enclosures, enc_dot_ed, k = n)
 *   dq, dk  (X) RN(sc sum dS k) (scale after the product, FA2) or (Y) sum RN(dS sc) k
 *           (scaled dS; with inter the scaled value is rounded to inter) (hull)
 *   GQA     with inter and Hq > Hkv, dk and dv may also be formed per query head, each
 *           rounded to inter, and the heads' values added in acc (PyTorch expands k, v
 *           for the group and sums their gradients in the dtype) (hull)
 *   store into `out` (checker)
 * Not covered: exp2 with the scale folded into an FMA (exp2f(s*scale_log2 - lse_log2)),
 * dS computed as P*dP - P*D, dq accumulated across key blocks in a narrower format (FA2
 * keeps an fp32 dq accumulator: covered, any order), deterministic/non-deterministic
 * split orders are orders of the same sums (covered). */
#include <math.h>

#include "engine/ref.h"

static void NMO_REF(sdpa_bwd_load)(double *dst, const nmo_tensor *t, int64_t b, int64_t h, int64_t i,
                                   int64_t D)
{
    nmo_tensor_load_f64(dst, t, b * t->strides[0] + h * t->strides[1] + i * t->strides[2], D,
                        t->strides[3]);
}

/* The score scale sc (see the top); t is scratch. */
static void NMO_REF(sdpa_bwd_scale)(E_CTX *ctx, const nmo_case *c, E *sc, E *t)
{
    if (c->param[1] != 0) {
        enc_const(ctx, sc, c->param[1]);
    } else {
        enc_set_d(ctx, t, (double)c->shape[4]);
        enc_rsqrt(ctx, sc, t);
        enc_const(ctx, t, 1.0 / sqrt((double)c->shape[4]));
        enc_hull(ctx, sc, sc, t);
    }
}

/* P and dS of one (query row, key) pair. t1, t2 are scratch. */
static void NMO_REF(sdpa_bwd_pair)(E_CTX *ctx, E *P, E *dS, const double *q, const E *qs,
                                   const double *k, const double *v, const double *dO,
                                   const E *Dd, double lse, const E *sc, int64_t D, E *t1, E *t2,
                                   const nmo_fmt *inter)
{
    enc_dot_d(ctx, t1, q, k, D);
    enc_mul(ctx, t1, t1, sc);           /* (A) */
    enc_dot_ed(ctx, t2, qs, k, D, (double)D); /* (B) */
    enc_hull(ctx, t1, t1, t2);
    enc_set_d(ctx, t2, lse);
    enc_sub(ctx, t1, t1, t2);
    enc_exp(ctx, P, t1);
    enc_dot_d(ctx, t1, dO, v, D);
    enc_sub(ctx, t1, t1, Dd);
    if (inter) { /* the P of dS fed in inter, or not: hull */
        enc_round(ctx, t2, P, *inter, NMO_RNE, 0);
        enc_hull(ctx, t2, t2, P);
        enc_mul(ctx, dS, t2, t1);
    } else {
        enc_mul(ctx, dS, P, t1);
    }
}

/* D_i of query row (b, h, i) when o is absent: sum_j P_ij dP_ij from the kernel's own P
 * (see the top), P_ij as in sdpa_bwd_pair, the dot any order, FMA or not (nmo_fenc_dotk).
 * Scratch: dvec 7 and evec 5, 6 (the callers use lower slots). */
static void NMO_REF(sdpa_bwd_dself)(E_CTX *ctx, const nmo_case *c, int64_t b, int64_t h, int64_t i,
                                    const double *q, const E *qs, const double *dO, double lse,
                                    const E *sc, E *Dd, E *t1, E *t2)
{
    int64_t Hq = c->shape[1], Hkv = c->shape[2], S = c->shape[3], D = c->shape[4];
    int64_t hk = h / (Hq / Hkv), n = c->param[0] != 0 ? i + 1 : S;
    double *kv = enc_dvec(ctx, 7, D);
    E *Pw = enc_evec(ctx, 5, n), *dPw = enc_evec(ctx, 6, n);
    for (int64_t j = 0; j < n; j++) {
        NMO_REF(sdpa_bwd_load)(kv, &c->in[1], b, hk, j, D);
        enc_dot_d(ctx, t1, q, kv, D);
        enc_mul(ctx, t1, t1, sc);           /* (A) */
        enc_dot_ed(ctx, t2, qs, kv, D, (double)D); /* (B) */
        enc_hull(ctx, t1, t1, t2);
        enc_set_d(ctx, t2, lse);
        enc_sub(ctx, t1, t1, t2);
        enc_exp(ctx, &Pw[j], t1);
        NMO_REF(sdpa_bwd_load)(kv, &c->in[2], b, hk, j, D);
        enc_dot_d(ctx, &dPw[j], dO, kv, D);
    }
    const E *f[2] = {Pw, dPw};
    enc_dotk(ctx, Dd, f, 2, n, 0);
}

/* The table entry for element u of o (nmo_op.stat_fast): D_i of row u / D at the row's
 * first element (the units read only those), 0 elsewhere. */
void NMO_REF(nmo_ref_sdpa_bwd_stat)(E_CTX *ctx, const nmo_case *c, int64_t u, nmo_fenc *out);
void NMO_REF(nmo_ref_sdpa_bwd_stat)(E_CTX *ctx, const nmo_case *c, int64_t u, nmo_fenc *out)
{
    ctx->exp_flat = 1; /* as in sdpa.c */
    int64_t Hq = c->shape[1], S = c->shape[3], D = c->shape[4];
    E r, t1, t2, sc;
    enc_init(ctx, &r), enc_init(ctx, &t1), enc_init(ctx, &t2), enc_init(ctx, &sc);
    enc_set_d(ctx, &r, 0.0);
    if (u % D == 0) {
        int64_t row = u / D, b = row / (Hq * S), h = (row / S) % Hq, i = row % S;
        const nmo_tensor *tl = &c->in[5];
        double *q = enc_dvec(ctx, 0, D), *dO = enc_dvec(ctx, 1, D), lse;
        E *qs = enc_evec(ctx, 0, D);
        NMO_REF(sdpa_bwd_scale)(ctx, c, &sc, &t1);
        NMO_REF(sdpa_bwd_load)(q, &c->in[0], b, h, i, D);
        NMO_REF(sdpa_bwd_load)(dO, &c->in[4], b, h, i, D);
        nmo_tensor_load_f64(&lse, tl, b * tl->strides[0] + h * tl->strides[1] + i * tl->strides[2], 1, 1);
        for (int64_t x = 0; x < D; x++) {
            enc_set_d(ctx, &t1, q[x]);
            enc_mul(ctx, &qs[x], &t1, &sc);
        }
        NMO_REF(sdpa_bwd_dself)(ctx, c, b, h, i, q, qs, dO, lse, &sc, &r, &t1, &t2);
    }
    enc_export(ctx, &out[3], &r);
    enc_clear(ctx, &r), enc_clear(ctx, &t1), enc_clear(ctx, &t2), enc_clear(ctx, &sc);
}

/* D_i with o absent: the table's entry, or (no table: a caller outside nmo_check) the
 * same computation here */
static void NMO_REF(sdpa_bwd_dabs)(E_CTX *ctx, const nmo_case *c, int64_t b, int64_t h, int64_t i,
                                   const double *q, const E *qs, const double *dO, double lse,
                                   const E *sc, E *Dd, E *t1, E *t2)
{
    int64_t Hq = c->shape[1], S = c->shape[3], D = c->shape[4];
    if (c->stat[3]) enc_set_fenc(ctx, Dd, &c->stat[3][((b * Hq + h) * S + i) * D]);
    else NMO_REF(sdpa_bwd_dself)(ctx, c, b, h, i, q, qs, dO, lse, sc, Dd, t1, t2);
}

void NMO_REF(nmo_ref_sdpa_bwd_eval)(E_CTX *ctx, const nmo_case *c, int64_t u, nmo_fenc **out)
{
    ctx->exp_flat = 1; /* as in sdpa.c: the kernels fold exp's argument */
    int64_t B = c->shape[0], Hq = c->shape[1], Hkv = c->shape[2], S = c->shape[3], D = c->shape[4];
    int64_t G = Hq / Hkv, nq_units = B * Hq * S;
    int causal = c->param[0] != 0, inter = c->plan.inter != c->plan.compute;
    int o_absent = (c->absent >> 3) & 1u;
    const nmo_fmt *pin = inter ? &c->plan.inter : NULL;
    const nmo_tensor *tq = &c->in[0], *tk = &c->in[1], *tv = &c->in[2], *to = &c->in[3];
    const nmo_tensor *tdo = &c->in[4], *tl = &c->in[5];
    E sc, t1, t2, Dd, P, dS, x1, x2;
    enc_init(ctx, &sc), enc_init(ctx, &t1), enc_init(ctx, &t2), enc_init(ctx, &Dd);
    enc_init(ctx, &P), enc_init(ctx, &dS), enc_init(ctx, &x1), enc_init(ctx, &x2);
    NMO_REF(sdpa_bwd_scale)(ctx, c, &sc, &t1);
    double lse;
    if (u < nq_units) { /* dq row (b, h, i) */
        int64_t b = u / (Hq * S), h = (u / S) % Hq, i = u % S, hk = h / G;
        int64_t n = causal ? i + 1 : S;
        double *q = enc_dvec(ctx, 0, D), *dO = enc_dvec(ctx, 1, D), *o = enc_dvec(ctx, 2, D);
        double *kk = enc_dvec(ctx, 3, n * D), *v = enc_dvec(ctx, 4, D), *col = enc_dvec(ctx, 5, n);
        E *qs = enc_evec(ctx, 0, D), *dSv = enc_evec(ctx, 1, n), *ysc = enc_evec(ctx, 2, n);
        NMO_REF(sdpa_bwd_load)(q, tq, b, h, i, D);
        NMO_REF(sdpa_bwd_load)(dO, tdo, b, h, i, D);
        nmo_tensor_load_f64(&lse, tl, b * tl->strides[0] + h * tl->strides[1] + i * tl->strides[2], 1, 1);
        for (int64_t x = 0; x < D; x++) {
            enc_set_d(ctx, &t1, q[x]);
            enc_mul(ctx, &qs[x], &t1, &sc);
        }
        if (o_absent) {
            NMO_REF(sdpa_bwd_dabs)(ctx, c, b, h, i, q, qs, dO, lse, &sc, &Dd, &t1, &t2);
        } else {
            NMO_REF(sdpa_bwd_load)(o, to, b, h, i, D);
            enc_dot_d(ctx, &Dd, dO, o, D);
        }
        for (int64_t j = 0; j < n; j++) {
            NMO_REF(sdpa_bwd_load)(kk + j * D, tk, b, hk, j, D);
            NMO_REF(sdpa_bwd_load)(v, tv, b, hk, j, D);
            NMO_REF(sdpa_bwd_pair)(ctx, &P, &dS, q, qs, kk + j * D, v, dO, &Dd, lse, &sc, D, &t1, &t2, pin);
            enc_mul(ctx, &ysc[j], &dS, &sc);
            if (inter) { /* fed in inter, or not: hull */
                enc_round(ctx, &t1, &dS, c->plan.inter, NMO_RNE, 0);
                enc_hull(ctx, &dSv[j], &dS, &t1);
                enc_round(ctx, &t1, &ysc[j], c->plan.inter, NMO_RNE, 0);
                enc_hull(ctx, &ysc[j], &ysc[j], &t1);
            } else {
                enc_set(ctx, &dSv[j], &dS);
            }
        }
        for (int64_t x = 0; x < D; x++) {
            for (int64_t j = 0; j < n; j++) col[j] = kk[j * D + x];
            enc_dot_ed(ctx, &x1, dSv, col, n, (double)n);
            enc_mul(ctx, &x1, &x1, &sc);
            enc_dot_ed(ctx, &x2, ysc, col, n, (double)n);
            enc_hull(ctx, &x1, &x1, &x2);
            enc_export(ctx, &out[0][x], &x1);
        }
    } else { /* dk, dv row (b, hk, j): queries of the heads of group hk */
        int64_t w = u - nq_units;
        int64_t b = w / (Hkv * S), hk = (w / S) % Hkv, j = w % S;
        int64_t i0 = causal ? j : 0, ni = S - i0, nq = G * ni;
        double *k = enc_dvec(ctx, 0, D), *v = enc_dvec(ctx, 1, D), *qq = enc_dvec(ctx, 2, nq * D);
        double *dd = enc_dvec(ctx, 3, nq * D), *o = enc_dvec(ctx, 4, D), *col = enc_dvec(ctx, 5, nq);
        E *qs = enc_evec(ctx, 0, D), *Pv = enc_evec(ctx, 1, nq), *dSv = enc_evec(ctx, 2, nq);
        E *ysc = enc_evec(ctx, 3, nq);
        NMO_REF(sdpa_bwd_load)(k, tk, b, hk, j, D);
        NMO_REF(sdpa_bwd_load)(v, tv, b, hk, j, D);
        for (int64_t g = 0; g < G; g++)
            for (int64_t ii = 0; ii < ni; ii++) {
                int64_t h = hk * G + g, i = i0 + ii, r = g * ni + ii;
                double *q = qq + r * D, *dO = dd + r * D;
                NMO_REF(sdpa_bwd_load)(q, tq, b, h, i, D);
                NMO_REF(sdpa_bwd_load)(dO, tdo, b, h, i, D);
                nmo_tensor_load_f64(&lse, tl, b * tl->strides[0] + h * tl->strides[1] + i * tl->strides[2],
                                    1, 1);
                for (int64_t x = 0; x < D; x++) {
                    enc_set_d(ctx, &t1, q[x]);
                    enc_mul(ctx, &qs[x], &t1, &sc);
                }
                if (o_absent) {
                    NMO_REF(sdpa_bwd_dabs)(ctx, c, b, h, i, q, qs, dO, lse, &sc, &Dd, &t1, &t2);
                } else {
                    NMO_REF(sdpa_bwd_load)(o, to, b, h, i, D);
                    enc_dot_d(ctx, &Dd, dO, o, D);
                }
                NMO_REF(sdpa_bwd_pair)(ctx, &P, &dS, q, qs, k, v, dO, &Dd, lse, &sc, D, &t1, &t2, pin);
                enc_mul(ctx, &ysc[r], &dS, &sc);
                if (inter) { /* fed in inter, or not: hull */
                    enc_round(ctx, &t1, &P, c->plan.inter, NMO_RNE, 0);
                    enc_hull(ctx, &Pv[r], &P, &t1);
                    enc_round(ctx, &t1, &dS, c->plan.inter, NMO_RNE, 0);
                    enc_hull(ctx, &dSv[r], &dS, &t1);
                    enc_round(ctx, &t1, &ysc[r], c->plan.inter, NMO_RNE, 0);
                    enc_hull(ctx, &ysc[r], &ysc[r], &t1);
                } else {
                    enc_set(ctx, &Pv[r], &P);
                    enc_set(ctx, &dSv[r], &dS);
                }
            }
        /* GQA with inter (PyTorch expands k, v over the group and sums their gradients in
         * the dtype): each query head's dv, dk rounded to inter, then the G of them added
         * in acc (any order); a native GQA kernel adds everything in acc: hull */
        int split = inter && G > 1;
        E *part = split ? enc_evec(ctx, 4, G) : NULL;
        for (int64_t x = 0; x < D; x++) {
            for (int64_t r = 0; r < nq; r++) col[r] = dd[r * D + x];
            enc_dot_ed(ctx, &x1, Pv, col, nq, (double)nq);
            if (split) {
                for (int64_t g = 0; g < G; g++) {
                    enc_dot_ed(ctx, &part[g], Pv + g * ni, col + g * ni, ni, (double)ni);
                    enc_round(ctx, &part[g], &part[g], c->plan.inter, NMO_RNE, 0);
                }
                enc_sum(ctx, &x2, part, G);
                enc_hull(ctx, &x1, &x1, &x2);
            }
            enc_export(ctx, &out[2][x], &x1);
            for (int64_t r = 0; r < nq; r++) col[r] = qq[r * D + x];
            enc_dot_ed(ctx, &x1, dSv, col, nq, (double)nq);
            enc_mul(ctx, &x1, &x1, &sc);
            enc_dot_ed(ctx, &x2, ysc, col, nq, (double)nq);
            enc_hull(ctx, &x1, &x1, &x2);
            if (split) {
                for (int64_t g = 0; g < G; g++) { /* (X) or (Y) for this head, rounded */
                    enc_dot_ed(ctx, &part[g], dSv + g * ni, col + g * ni, ni, (double)ni);
                    enc_mul(ctx, &part[g], &part[g], &sc);
                    enc_dot_ed(ctx, &x2, ysc + g * ni, col + g * ni, ni, (double)ni);
                    enc_hull(ctx, &part[g], &part[g], &x2);
                    enc_round(ctx, &part[g], &part[g], c->plan.inter, NMO_RNE, 0);
                }
                enc_sum(ctx, &x2, part, G);
                enc_hull(ctx, &x1, &x1, &x2);
            }
            enc_export(ctx, &out[1][x], &x1);
        }
    }
    enc_clear(ctx, &sc), enc_clear(ctx, &t1), enc_clear(ctx, &t2), enc_clear(ctx, &Dd);
    enc_clear(ctx, &P), enc_clear(ctx, &dS), enc_clear(ctx, &x1), enc_clear(ctx, &x2);
}

#ifdef NMO_ENGINE_FAST
#include <stdlib.h>

#include "refs/ref_common.h"

void NMO_REF_CERT(nmo_ref_sdpa_bwd_eval)(nmo_cctx *ctx, const nmo_case *c, int64_t u, nmo_fenc **out);
void NMO_REF_CERT(nmo_ref_sdpa_bwd_stat)(nmo_cctx *ctx, const nmo_case *c, int64_t u, nmo_fenc *out);
nmo_status nmo_ref_sdpa_setup_common(nmo_case *c, nmo_err *err);

static nmo_status sdpa_bwd_setup(nmo_case *c, nmo_err *err)
{
    NMO_RETURN_IF_ERR(nmo_ref_sdpa_setup_common(c, err)); /* q, k, v; checks */
    int64_t B = c->shape[0], Hq = c->shape[1], Hkv = c->shape[2], S = c->shape[3], D = c->shape[4];
    int64_t dq[4] = {B, Hq, S, D}, dk[4] = {B, Hkv, S, D}, dl[3] = {B, Hq, S};
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[3], c->plan.in, 4, dq, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[4], c->plan.in, 4, dq, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->in[5], NMO_FP32, 3, dl, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->out[0], c->plan.out, 4, dq, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->out[1], c->plan.out, 4, dk, err));
    NMO_RETURN_IF_ERR(nmo_ref_tensor(&c->out[2], c->plan.out, 4, dk, err));
    return NMO_OK;
}

/* The forward a correct kernel saves: o = softmax(sc q k^T) v stored in o's dtype (RNE),
 * lse = log sum_j exp(s_ij) stored in fp32, sc = the fp32 scale, all in long double. */
static void sdpa_bwd_derive(nmo_case *c)
{
    int64_t B = c->shape[0], Hq = c->shape[1], Hkv = c->shape[2], S = c->shape[3], D = c->shape[4];
    int64_t G = Hq / Hkv;
    int causal = c->param[0] != 0;
    long double sc = c->param[1] != 0 ? (float)c->param[1] : (float)(1.0 / sqrt((double)D));
    long double *s = malloc((size_t)S * sizeof(long double));
    if (!s) abort();
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < Hq; h++) {
            int64_t hk = h / G;
            for (int64_t i = 0; i < S; i++) {
                int64_t n = causal ? i + 1 : S;
                int64_t qo = ((b * Hq + h) * S + i) * D;
                long double m = -INFINITY, l = 0;
                for (int64_t j = 0; j < n; j++) {
                    int64_t ko = ((b * Hkv + hk) * S + j) * D;
                    long double d = 0;
                    for (int64_t x = 0; x < D; x++)
                        d += (long double)nmo_tensor_get(&c->in[0], qo + x) * nmo_tensor_get(&c->in[1], ko + x);
                    s[j] = sc * d;
                    if (s[j] > m) m = s[j];
                }
                for (int64_t j = 0; j < n; j++) {
                    s[j] = expl(s[j] - m);
                    l += s[j];
                }
                nmo_tensor_set(&c->in[5], (b * Hq + h) * S + i, (double)(m + logl(l)));
                for (int64_t x = 0; x < D; x++) {
                    long double acc = 0;
                    for (int64_t j = 0; j < n; j++)
                        acc += s[j] * nmo_tensor_get(&c->in[2], ((b * Hkv + hk) * S + j) * D + x);
                    nmo_tensor_set(&c->in[3], qo + x, (double)(acc / l));
                }
            }
        }
    free(s);
}

static int64_t sdpa_bwd_row_len(const nmo_case *c) { return c->shape[4]; }
/* Units: one per query row (writes dq[b,h,i,:]), then one per key row (writes
 * dk[b,hk,j,:] and dv[b,hk,j,:]). */
static int64_t sdpa_bwd_units(const nmo_case *c)
{
    return c->shape[0] * (c->shape[1] + c->shape[2]) * c->shape[3];
}

static void sdpa_bwd_span(const nmo_case *c, int64_t u, int k, int64_t *begin, int64_t *count,
                          int64_t *stride)
{
    int64_t nq = c->shape[0] * c->shape[1] * c->shape[3], D = c->shape[4];
    *stride = 1;
    if (u < nq) {
        *begin = k == 0 ? u * D : 0;
        *count = k == 0 ? D : 0;
    } else {
        *begin = k == 0 ? 0 : (u - nq) * D;
        *count = k == 0 ? 0 : D;
    }
}

const nmo_op nmo_op_sdpa_bwd = {
    .name = "sdpa_bwd",
    .summary = "attention backward (FlashAttention-2 formulas, grouped-query, causal option) from saved O, LSE",
    .shape_doc = "BxHqxHkvxSxD as sdpa; o, dO, dq [B,Hq,S,D]; lse [B,Hq,S] fp32; k, v, dk, dv [B,Hkv,S,D]",
    .rounding_doc = "P=exp(RN(s-lse)); dP=dO.v, D=dO.O (dots); dS=P*(dP-D); dv=sum P dO; "
                    "dq,dk=sc*sum dS k|sum RN(dS*sc) k (any order, acc)",
    .n_in = 6,
    .in = {{"q", NMO_ROLE_DATA, "queries [B,Hq,S,D]"},
           {"k", NMO_ROLE_DATA, "keys [B,Hkv,S,D]"},
           {"v", NMO_ROLE_DATA, "values [B,Hkv,S,D]"},
           {"o", NMO_ROLE_DERIVED, "saved forward output [B,Hq,S,D] (input dtype); optional: absent, "
            "a backward that does not read it (math SDPA): D_i from its own P", NMO_IN_OPTIONAL},
           {"dO", NMO_ROLE_DATA, "output gradient [B,Hq,S,D]"},
           {"lse", NMO_ROLE_DERIVED, "saved log-sum-exp of the scaled scores [B,Hq,S] (fp32)"}},
    .n_out = 3,
    .out = {{"dq", NMO_ROLE_DATA, "[B,Hq,S,D]"},
            {"dk", NMO_ROLE_DATA, "[B,Hkv,S,D]"},
            {"dv", NMO_ROLE_DATA, "[B,Hkv,S,D]"}},
    .n_param = 2,
    .param = {{"causal", 1, "1: key j attends only for j <= i (top-left aligned); 0: no mask"},
              {"scale", 0, "score scale; 0 means 1/sqrt(D)"}},
    .dtypes = "fp32 bf16 fp16",
    /* S = 19: two key blocks of 16 (the dq_blocks candidate), and a certified engine
     * cost (pairs ~ S^2) that keeps the registry-driven engine test short */
    .test_shapes = "1x4x2x19x16;2x2x1x16x8",
    .test_shapes_large = "1x4x2x129x16;2x2x1x16x8",
    /* the dS and P products use the any-order bound */
    .plan_fields = NMO_PF_COMPUTE | NMO_PF_ACC | NMO_PF_FN | NMO_PF_INTER,
    .plan_vacuous = 0,
    .setup = sdpa_bwd_setup,
    .row_len = sdpa_bwd_row_len,
    .units = sdpa_bwd_units,
    .unit_span = sdpa_bwd_span,
    .derive = sdpa_bwd_derive,
    .eval_fast = NMO_REF_FAST(nmo_ref_sdpa_bwd_eval),
    .eval_cert = NMO_REF_CERT(nmo_ref_sdpa_bwd_eval),
    .stat_fast = NMO_REF_FAST(nmo_ref_sdpa_bwd_stat),
    .stat_cert = NMO_REF_CERT(nmo_ref_sdpa_bwd_stat),
    .absent_reads_none = 1,
};
#endif
