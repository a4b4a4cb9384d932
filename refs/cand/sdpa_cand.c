/* numoracle: CPU candidates for sdpa — emulations of attention forward kernels:
 * FlashAttention-style online softmax (blocks of keys, running max, rescaled
 * accumulators) and the naive two-pass (scores, max, exp, sum, P.V) kernel.
 *
 *   in  q[B,Hq,S,D], k[B,Hkv,S,D], v[B,Hkv,S,D]   dtype plan->in
 *   out o[B,Hq,S,D]                               dtype plan->out
 *   param[0] causal (0/1), param[1] scale (0: 1/sqrt(D)), param[2] left_bound, param[3]
 *   right_bound (hipDNN's diagonal band; -1: unbounded)
 *
 * Rounding points of every kernel here (all fp32): the score dot products (the kernel's
 * reduction over D, fmaf or not), the scale multiply (on the dot, on q beforehand, or on
 * the max-subtracted difference), the subtraction of the (running) max, expf (CUDA
 * emulation <= 1.5 ulp, or correctly rounded), for online kernels the rescale factor
 * alpha = expf(m_old - m_new) and the rescaling multiplies of l and of the accumulator,
 * each add / fmaf of l and of P.V, the final division (or reciprocal multiply) and the
 * store into plan->out. The first correct variant (flash16) is the default. */
#include "cand_util.h"

typedef enum { SD_SCORE_A = 0, SD_SCORE_B, SD_SCORE_C } sd_score;

typedef struct {
    int online;         /* 0: two-pass; 1: online softmax */
    int bs;             /* online block size (keys) */
    int reverse;        /* online: blocks from last to first (FA2 causal order) */
    sd_score score;     /* A: RN(sc*dot); B: dot(RN(q*sc), k); C: raw dot, scale after max */
    nmo_cu_red red;     /* score reduction over D */
    int fma;            /* fmaf in the score dot */
    int l_fma;          /* online: l = fmaf(l, alpha, rowsum) */
    int recip;          /* o = acc * (1/l) */
    int rsqrt;          /* default scale as rsqrtf(D) (emulated) vs 1/sqrtf(D) */
    int exp_cr;         /* correctly rounded expf instead of the CUDA emulation */
    nmo_cu_red red_l;   /* two-pass: reduction of l */
    /* mutant knobs */
    int no_scale, causal_off1, gqa_mod, no_max, acc_bf16, l_no_rescale;
    int band_strict; /* MUTANT: masks as hipDNN's band (causal = right_bound 0) tested strictly,
                      * i - left < j < i + right: the band's edge keys (and causal's diagonal) lost */
} sd_cfg;

static float sd_exp(const sd_cfg *c, float x) { return c->exp_cr ? nmo_cu_expf_cr(x) : nmo_cu_expf(x); }

/* exponent argument of score s against max m */
static float sd_arg(const sd_cfg *c, float s, float m, float sc) {
    if (c->no_max) return c->score == SD_SCORE_C ? s * sc : s;
    return c->score == SD_SCORE_C ? (s - m) * sc : s - m;
}

static nmo_status sd_run(const nmo_cand_args *a, nmo_err *err, const sd_cfg *c) {
    static const char op[] = "sdpa";
    NMO_RETURN_IF_ERR(nmo_cu_check_args(a, op, 3, 1, err));
    const nmo_tensor *tq = &a->in[0], *tk = &a->in[1], *tv = &a->in[2];
    if (tq->ndims != 4 || tk->ndims != 4)
        return nmo_err_set(err, NMO_ERR_USAGE, "sdpa candidate: q and k must be 4-D");
    int64_t B = tq->dims[0], Hq = tq->dims[1], S = tq->dims[2], D = tq->dims[3], Hkv = tk->dims[1];
    if (Hkv < 1 || Hq % Hkv != 0)
        return nmo_err_set(err, NMO_ERR_USAGE, "sdpa candidate: Hq must be a multiple of Hkv");
    int64_t dq[4] = {B, Hq, S, D}, dk[4] = {B, Hkv, S, D};
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(tq, op, "q", a->plan->in, 4, dq, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(tk, op, "k", a->plan->in, 4, dk, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(tv, op, "v", a->plan->in, 4, dk, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->out[0], op, "o", a->plan->out, 4, dq, err));
    int causal = a->n_param >= 1 && a->param ? a->param[0] != 0 : 1;
    double scale_p = a->n_param >= 2 && a->param ? a->param[1] : 0;
    /* hipDNN's diagonal band: keys j < i - left and j > i + right masked (-1: none) */
    int64_t left = a->n_param >= 3 && a->param ? (int64_t)a->param[2] : -1;
    int64_t right = a->n_param >= 4 && a->param ? (int64_t)a->param[3] : -1;
    float sc = scale_p != 0 ? (float)scale_p
               : c->rsqrt  ? nmo_cu_rsqrtf((float)D)
                           : 1.0f / sqrtf((float)D);
    if (c->no_scale) sc = 1.0f;

    float *qv = nmo_cu_load(tq), *kv = nmo_cu_load(tk), *vv = nmo_cu_load(tv);
    float *ov = (float *)malloc((size_t)(B * Hq * S * D) * sizeof(float));
    float *qs = (float *)malloc((size_t)D * sizeof(float));
    float *s = (float *)malloc((size_t)S * sizeof(float));
    float *p = (float *)malloc((size_t)S * sizeof(float));
    float *acc = (float *)malloc((size_t)D * sizeof(float));
    if (!qv || !kv || !vv || !ov || !qs || !s || !p || !acc) {
        free(qv), free(kv), free(vv), free(ov), free(qs), free(s), free(p), free(acc);
        return nmo_err_set(err, NMO_ERR_NOMEM, "sdpa candidate: out of memory");
    }
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < Hq; h++) {
            int64_t hk = c->gqa_mod ? h % Hkv : h / (Hq / Hkv);
            const float *K0 = kv + (b * Hkv + hk) * S * D, *V0 = vv + (b * Hkv + hk) * S * D;
            for (int64_t i = 0; i < S; i++) {
                const float *qr = qv + ((b * Hq + h) * S + i) * D;
                float *o = ov + ((b * Hq + h) * S + i) * D;
                int64_t j1 = !causal ? S : c->causal_off1 ? (i + 2 < S ? i + 2 : S) : i + 1;
                if (right >= 0 && i + right + 1 < j1) j1 = i + right + 1;
                int64_t j0 = left < 0 ? 0 : i - left;
                if (c->band_strict) {
                    int64_t r = causal ? 0 : right;
                    if (r >= 0) j1 = i + r < S ? i + r : S;
                    if (left >= 0) j0 = i - left + 1;
                }
                if (j0 < 0) j0 = 0;
                if (j1 < j0) j1 = j0; /* no visible key: 0/0 */
                int64_t n = j1 - j0; /* the visible keys j0..j1-1 */
                const float *K = K0 + j0 * D, *V = V0 + j0 * D;
                const float *qq = qr;
                if (c->score == SD_SCORE_B) {
                    for (int64_t x = 0; x < D; x++) qs[x] = qr[x] * sc;
                    qq = qs;
                }
                for (int64_t j = 0; j < n; j++) {
                    float d = nmo_cu_reduce(qq, K + j * D, D, c->red, c->fma);
                    s[j] = c->score == SD_SCORE_A ? d * sc : d;
                }
                if (!c->online) {
                    float m = -INFINITY;
                    for (int64_t j = 0; j < n; j++) m = fmaxf(m, s[j]);
                    for (int64_t j = 0; j < n; j++) p[j] = sd_exp(c, sd_arg(c, s[j], m, sc));
                    float l = nmo_cu_reduce(p, NULL, n, c->red_l, 0);
                    float inv = 1.0f / l;
                    for (int64_t x = 0; x < D; x++) {
                        float t = 0.0f;
                        for (int64_t j = 0; j < n; j++) {
                            t = fmaf(p[j], V[j * D + x], t);
                            if (c->acc_bf16) t = nmo_cu_round_bf16(t);
                        }
                        o[x] = c->recip ? t * inv : t / l;
                    }
                    continue;
                }
                float m = -INFINITY, l = 0.0f;
                for (int64_t x = 0; x < D; x++) acc[x] = 0.0f;
                int64_t nb = (n + c->bs - 1) / c->bs;
                for (int64_t bi = 0; bi < nb; bi++) {
                    int64_t blk = c->reverse ? nb - 1 - bi : bi;
                    int64_t lo = blk * c->bs, hi = lo + c->bs < n ? lo + c->bs : n;
                    float mn = m;
                    if (!c->no_max)
                        for (int64_t j = lo; j < hi; j++) mn = fmaxf(mn, s[j]);
                    float alpha = c->no_max ? 1.0f : sd_exp(c, sd_arg(c, m, mn, sc));
                    float rs = 0.0f;
                    for (int64_t j = lo; j < hi; j++) {
                        p[j] = sd_exp(c, sd_arg(c, s[j], mn, sc));
                        rs = rs + p[j];
                    }
                    if (c->l_no_rescale) l = l + rs;
                    else l = c->l_fma ? fmaf(l, alpha, rs) : l * alpha + rs;
                    for (int64_t x = 0; x < D; x++) {
                        float t = acc[x] * alpha;
                        for (int64_t j = lo; j < hi; j++) {
                            t = fmaf(p[j], V[j * D + x], t);
                            if (c->acc_bf16) t = nmo_cu_round_bf16(t);
                        }
                        acc[x] = t;
                    }
                    m = mn;
                }
                float inv = 1.0f / l;
                for (int64_t x = 0; x < D; x++) o[x] = c->recip ? acc[x] * inv : acc[x] / l;
            }
        }
    nmo_cu_store(&a->out[0], ov, nmo_cu_plan_store(a->plan));
    free(qv), free(kv), free(vv), free(ov), free(qs), free(s), free(p), free(acc);
    return NMO_OK;
}

#define SD_FLASH .online = 1, .bs = 16, .score = SD_SCORE_A, .red = NMO_CU_RED_SEQ, .fma = 1

#define SD_CAND(fname, ...)                                                         \
    static nmo_status fname(const nmo_cand_args *a, nmo_err *err) {                  \
        static const sd_cfg c = {__VA_ARGS__};                                        \
        return sd_run(a, err, &c);                                                    \
    }

SD_CAND(sd_flash16, SD_FLASH)
SD_CAND(sd_naive, .online = 0, .score = SD_SCORE_A, .red = NMO_CU_RED_WARP32, .fma = 0, .recip = 1,
        .rsqrt = 1, .red_l = NMO_CU_RED_PAIRWISE)
SD_CAND(sd_online1_prescaled, .online = 1, .bs = 1, .score = SD_SCORE_B, .red = NMO_CU_RED_VEC4, .fma = 1,
        .l_fma = 1, .recip = 1)
SD_CAND(sd_flash16_rev_late_scale, .online = 1, .bs = 16, .reverse = 1, .score = SD_SCORE_C,
        .red = NMO_CU_RED_SEQ, .fma = 1, .recip = 1, .exp_cr = 1)
SD_CAND(sd_naive_late_scale, .online = 0, .score = SD_SCORE_C, .red = NMO_CU_RED_SEQ, .fma = 1,
        .red_l = NMO_CU_RED_WARP32, .exp_cr = 1)

SD_CAND(sd_mut_no_scale, SD_FLASH, .no_scale = 1)
SD_CAND(sd_mut_causal_off1, SD_FLASH, .causal_off1 = 1)
SD_CAND(sd_mut_band_strict, SD_FLASH, .band_strict = 1)
SD_CAND(sd_mut_gqa_mod, SD_FLASH, .gqa_mod = 1)
SD_CAND(sd_mut_no_max, SD_FLASH, .no_max = 1)
SD_CAND(sd_mut_pv_acc_bf16, SD_FLASH, .acc_bf16 = 1)
SD_CAND(sd_mut_l_no_rescale, SD_FLASH, .l_no_rescale = 1)

const nmo_cand nmo_cand_sdpa[] = {
    {"sdpa", "flash16", 1,
     "online softmax over blocks of 16 keys: RN(sc*dot) (fmaf), running max, alpha=expf(m-m'), "
     "l=l*alpha+rowsum, acc=acc*alpha then fmaf(p,v), o=acc/l",
     sd_flash16, NULL},
    {"sdpa", "naive", 1,
     "two-pass: scores (warp butterfly, no FMA), max, expf, l pairwise, P.V fmaf, o=n*(1/l), rsqrtf scale",
     sd_naive, NULL},
    {"sdpa", "online1_prescaled", 1,
     "online softmax rescaling at every key, q pre-scaled (q*sc), float4 dots, l=fmaf(l,alpha,p), o=acc*(1/l)",
     sd_online1_prescaled, NULL},
    {"sdpa", "flash16_rev_late_scale", 1,
     "online, blocks of 16 from the last to the first, raw-dot max, p=exp((s-m)*sc) correctly rounded, "
     "o=acc*(1/l)",
     sd_flash16_rev_late_scale, NULL},
    {"sdpa", "naive_late_scale", 1, "two-pass with raw-dot max and exp((d-max)*sc), l by warp butterfly",
     sd_naive_late_scale, NULL},
    {"sdpa", "mut_no_scale", 0, "MUTANT: softmax scale omitted (sc = 1)", sd_mut_no_scale, NULL},
    {"sdpa", "mut_causal_off1", 0, "MUTANT: causal mask lets query i see key i+1", sd_mut_causal_off1, NULL},
    {"sdpa", "mut_band_strict", 0, "MUTANT: masks as a band tested strictly (i-left < j < i+right, causal: j < i)",
     sd_mut_band_strict, NULL},
    {"sdpa", "mut_gqa_mod", 0, "MUTANT: grouped-query head mapping h % Hkv instead of h / (Hq/Hkv)",
     sd_mut_gqa_mod, NULL},
    {"sdpa", "mut_no_max", 0, "MUTANT: no max subtraction, p = expf(s) (overflows on large scores)",
     sd_mut_no_max, NULL},
    {"sdpa", "mut_pv_acc_bf16", 0, "MUTANT: P.V accumulator rounded to bf16 after every fmaf",
     sd_mut_pv_acc_bf16, NULL},
    {"sdpa", "mut_l_no_rescale", 0, "MUTANT: online l not rescaled by alpha when the running max grows",
     sd_mut_l_no_rescale, NULL},
};
const int nmo_cand_sdpa_n = (int)(sizeof nmo_cand_sdpa / sizeof nmo_cand_sdpa[0]);
