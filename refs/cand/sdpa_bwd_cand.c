/* numoracle: CPU candidates for sdpa_bwd — emulations of FlashAttention-2-style attention
 * backward kernels (P recomputed from the saved LSE, D_i = rowsum(dO*O), dS = P (dP - D)).
 *
 *   in  q[B,Hq,S,D], k[B,Hkv,S,D], v[B,Hkv,S,D], o[B,Hq,S,D], dO[B,Hq,S,D]  dtype plan->in
 *       lse[B,Hq,S] fp32
 *   out dq[B,Hq,S,D], dk[B,Hkv,S,D], dv[B,Hkv,S,D]                      dtype plan->out
 *   param[0] causal (0/1), param[1] scale (0: 1/sqrt(D))
 *
 * Rounding points of every kernel here (fp32): the score dot (q pre-scaled or the dot
 * scaled), s - lse, expf (CUDA emulation or correctly rounded), the dP and D_i dots,
 * dP - D_i and the product with P, each fmaf of the dq/dk/dv accumulations (dq per key
 * block with partials added, as atomicAdd of per-block partials does, or one running
 * accumulator), the final scale multiply (or dS scaled before the products), and the
 * store into plan->out. The first correct variant (fa2) is the default. */
#include "cand_util.h"

typedef struct {
    int prescale_q;     /* s = dot(q*sc, k) vs RN(sc*dot(q, k)) */
    nmo_cu_red red;     /* reduction over D of the score, dP and D_i dots */
    int fma;
    int ds_scaled;      /* dq, dk = sum (dS*sc) k  vs  sc * sum dS k */
    int exp_cr;
    int dq_blocks;      /* dq: per key block of 16 a partial from 0, partials added last-first */
    /* mutant knobs */
    int no_D, dk_no_scale, gqa_last_head, p_no_scale, causal_off1, ds_bf16;
    int p_inter;        /* P rounded to the storage dtype before dV and inside dS =
                           RN(P_dt (dP - D)), dS rounded before dQ/dK: PyTorch's
                           memory-efficient backward (correct under inter=<dtype>) */
    int d_self;         /* D_i = sum_j P_ij dP_ij in fp32 (fmaf, in key order) from its own P,
                           o never read: PyTorch's math SDPA backward (correct with o absent) */
    int gqa_heads_out;  /* dk, dv per query head (scaled), each rounded to the output
                           format, then the heads added in fp32 (PyTorch's GQA expand and
                           sum: correct under inter=<dtype>) */
} sb_cfg;

static nmo_status sb_run(const nmo_cand_args *a, nmo_err *err, const sb_cfg *c) {
    static const char op[] = "sdpa_bwd";
    NMO_RETURN_IF_ERR(nmo_cu_check_args(a, op, 6, 3, err));
    const nmo_tensor *tq = &a->in[0], *tk = &a->in[1], *tv = &a->in[2], *to = &a->in[3];
    const nmo_tensor *tdo = &a->in[4], *tl = &a->in[5];
    if (tq->ndims != 4 || tk->ndims != 4)
        return nmo_err_set(err, NMO_ERR_USAGE, "sdpa_bwd candidate: q and k must be 4-D");
    int64_t B = tq->dims[0], Hq = tq->dims[1], S = tq->dims[2], D = tq->dims[3], Hkv = tk->dims[1];
    if (Hkv < 1 || Hq % Hkv != 0)
        return nmo_err_set(err, NMO_ERR_USAGE, "sdpa_bwd candidate: Hq must be a multiple of Hkv");
    int64_t G = Hq / Hkv;
    int64_t dq[4] = {B, Hq, S, D}, dk[4] = {B, Hkv, S, D}, dl[3] = {B, Hq, S};
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(tq, op, "q", a->plan->in, 4, dq, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(tk, op, "k", a->plan->in, 4, dk, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(tv, op, "v", a->plan->in, 4, dk, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(to, op, "o", a->plan->in, 4, dq, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(tdo, op, "dO", a->plan->in, 4, dq, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(tl, op, "lse", NMO_FP32, 3, dl, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->out[0], op, "dq", a->plan->out, 4, dq, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->out[1], op, "dk", a->plan->out, 4, dk, err));
    NMO_RETURN_IF_ERR(nmo_cu_check_tensor(&a->out[2], op, "dv", a->plan->out, 4, dk, err));
    int causal = a->n_param >= 1 && a->param ? a->param[0] != 0 : 1;
    double scale_p = a->n_param >= 2 && a->param ? a->param[1] : 0;
    const float sc = scale_p != 0 ? (float)scale_p : 1.0f / sqrtf((float)D);

    float *qv = nmo_cu_load(tq), *kv = nmo_cu_load(tk), *vv = nmo_cu_load(tv), *ov = nmo_cu_load(to);
    float *dov = nmo_cu_load(tdo), *lv = nmo_cu_load(tl);
    int64_t nqd = B * Hq * S * D, nkd = B * Hkv * S * D, nss = B * Hq * S * S;
    float *dqv = (float *)calloc((size_t)nqd, sizeof(float));
    float *dkv = (float *)calloc((size_t)nkd, sizeof(float));
    float *dvv = (float *)calloc((size_t)nkd, sizeof(float));
    float *P = (float *)calloc((size_t)nss, sizeof(float)), *dS = (float *)calloc((size_t)nss, sizeof(float));
    float *qs = (float *)malloc((size_t)D * sizeof(float));
    if (!qv || !kv || !vv || !ov || !dov || !lv || !dqv || !dkv || !dvv || !P || !dS || !qs) {
        free(qv), free(kv), free(vv), free(ov), free(dov), free(lv), free(dqv), free(dkv), free(dvv);
        free(P), free(dS), free(qs);
        return nmo_err_set(err, NMO_ERR_NOMEM, "sdpa_bwd candidate: out of memory");
    }
#define NKEYS(i) (!causal ? S : c->causal_off1 ? ((i) + 2 < S ? (i) + 2 : S) : (i) + 1)
    /* P and dS for every (b, h, i, j) the mask keeps (0 elsewhere) */
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < Hq; h++) {
            int64_t hk = h / G;
            for (int64_t i = 0; i < S; i++) {
                const float *qr = qv + ((b * Hq + h) * S + i) * D, *dor = dov + ((b * Hq + h) * S + i) * D;
                const float *orow = ov + ((b * Hq + h) * S + i) * D;
                float lse = lv[(b * Hq + h) * S + i];
                float Di = c->d_self ? 0.0f : nmo_cu_reduce(dor, orow, D, c->red, c->fma);
                float scs = c->p_no_scale ? 1.0f : sc;
                const float *qq = qr;
                if (c->prescale_q) {
                    for (int64_t x = 0; x < D; x++) qs[x] = qr[x] * scs;
                    qq = qs;
                }
                /* pass 0 (d_self only): D_i from this row's own P and dP; pass 1: dS */
                for (int pass = c->d_self ? 0 : 1; pass < 2; pass++)
                for (int64_t j = 0; j < NKEYS(i); j++) {
                    const float *kr = kv + ((b * Hkv + hk) * S + j) * D, *vr = vv + ((b * Hkv + hk) * S + j) * D;
                    float d = nmo_cu_reduce(qq, kr, D, c->red, c->fma);
                    float s = c->prescale_q ? d : d * scs;
                    float p = c->exp_cr ? nmo_cu_expf_cr(s - lse) : nmo_cu_expf(s - lse);
                    float dp = nmo_cu_reduce(dor, vr, D, c->red, c->fma);
                    if (pass == 0) {
                        Di = fmaf(p, dp, Di);
                        continue;
                    }
                    if (c->p_inter) p = nmo_cu_round_to(a->plan->in, p);
                    float ds = c->no_D ? p * dp : p * (dp - Di);
                    if (c->ds_bf16) ds = nmo_cu_round_bf16(ds);
                    if (c->p_inter) ds = nmo_cu_round_to(a->plan->in, ds);
                    int64_t at = ((b * Hq + h) * S + i) * S + j;
                    P[at] = p;
                    dS[at] = c->ds_scaled ? ds * sc : ds;
                }
            }
        }
    /* dq[b,h,i,x] = sum_j dS k (over the kept keys) */
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < Hq; h++)
            for (int64_t i = 0; i < S; i++)
                for (int64_t x = 0; x < D; x++) {
                    const float *ds = dS + ((b * Hq + h) * S + i) * S;
                    const float *K = kv + (b * Hkv + h / G) * S * D;
                    int64_t n = NKEYS(i);
                    float acc = 0.0f;
                    if (c->dq_blocks) {
                        for (int64_t blk = (n - 1) / 16; blk >= 0; blk--) {
                            float part = 0.0f;
                            for (int64_t j = blk * 16; j < n && j < blk * 16 + 16; j++)
                                part = fmaf(ds[j], K[j * D + x], part);
                            acc = acc + part;
                        }
                    } else {
                        for (int64_t j = 0; j < n; j++) acc = fmaf(ds[j], K[j * D + x], acc);
                    }
                    dqv[((b * Hq + h) * S + i) * D + x] = c->ds_scaled ? acc : acc * sc;
                }
    /* dk[b,hk,j,x] = sum_{g,i} dS q;  dv[b,hk,j,x] = sum_{g,i} P dO */
    for (int64_t b = 0; b < B; b++)
        for (int64_t hk = 0; hk < Hkv; hk++)
            for (int64_t j = 0; j < S; j++)
                for (int64_t x = 0; x < D; x++) {
                    float ak = 0.0f, av = 0.0f, sk = 0.0f, sv = 0.0f;
                    for (int64_t g = c->gqa_last_head ? G - 1 : 0; g < G; g++) {
                        int64_t h = hk * G + g;
                        if (c->gqa_heads_out) ak = av = 0.0f;
                        for (int64_t i = 0; i < S; i++) {
                            if (j >= NKEYS(i)) continue;
                            int64_t at = ((b * Hq + h) * S + i) * S + j, r = ((b * Hq + h) * S + i) * D + x;
                            ak = fmaf(dS[at], qv[r], ak);
                            av = fmaf(P[at], dov[r], av);
                        }
                        if (c->gqa_heads_out) {
                            sk = sk + nmo_cu_round_to(a->plan->out, c->ds_scaled ? ak : ak * sc);
                            sv = sv + nmo_cu_round_to(a->plan->out, av);
                        }
                    }
                    int64_t r = ((b * Hkv + hk) * S + j) * D + x;
                    dkv[r] = c->gqa_heads_out ? sk : c->ds_scaled || c->dk_no_scale ? ak : ak * sc;
                    dvv[r] = c->gqa_heads_out ? sv : av;
                }
#undef NKEYS
    nmo_cu_store_mode st = nmo_cu_plan_store(a->plan);
    nmo_cu_store(&a->out[0], dqv, st);
    nmo_cu_store(&a->out[1], dkv, st);
    nmo_cu_store(&a->out[2], dvv, st);
    free(qv), free(kv), free(vv), free(ov), free(dov), free(lv), free(dqv), free(dkv), free(dvv);
    free(P), free(dS), free(qs);
    return NMO_OK;
}

#define SB_DEFAULT .red = NMO_CU_RED_SEQ, .fma = 1

#define SB_CAND(fname, ...)                                                         \
    static nmo_status fname(const nmo_cand_args *a, nmo_err *err) {                  \
        static const sb_cfg c = {__VA_ARGS__};                                        \
        return sb_run(a, err, &c);                                                    \
    }

SB_CAND(sb_fa2, SB_DEFAULT)
SB_CAND(sb_prescaled, .prescale_q = 1, .red = NMO_CU_RED_VEC4, .fma = 1, .ds_scaled = 1, .exp_cr = 1)
SB_CAND(sb_dq_blocks_warp, .red = NMO_CU_RED_WARP32, .fma = 0, .dq_blocks = 1)

SB_CAND(sb_math, SB_DEFAULT, .d_self = 1)
SB_CAND(sb_efficient, SB_DEFAULT, .p_inter = 1)

SB_CAND(sb_mut_no_delta, SB_DEFAULT, .no_D = 1)
SB_CAND(sb_mut_dk_no_scale, SB_DEFAULT, .dk_no_scale = 1)
SB_CAND(sb_mut_gqa_last_head, SB_DEFAULT, .gqa_last_head = 1)
SB_CAND(sb_mut_p_no_scale, SB_DEFAULT, .p_no_scale = 1)
SB_CAND(sb_mut_causal_off1, SB_DEFAULT, .causal_off1 = 1)
SB_CAND(sb_mut_ds_bf16, SB_DEFAULT, .ds_bf16 = 1)
SB_CAND(sb_mut_gqa_heads_out, SB_DEFAULT, .gqa_heads_out = 1)

const nmo_cand nmo_cand_sdpa_bwd[] = {
    {"sdpa_bwd", "fa2", 1,
     "P=expf(RN(sc*q.k)-lse), D=rowsum(dO*O), dS=P*(dP-D) (fmaf dots); dq,dk,dv one fmaf accumulator, "
     "scale at the end",
     sb_fa2, NULL},
    {"sdpa_bwd", "prescaled", 1,
     "q pre-scaled, float4 dots, correctly rounded expf, dS*sc before the dq/dk products", sb_prescaled, NULL},
    {"sdpa_bwd", "dq_blocks_warp", 1,
     "warp-butterfly dots (no FMA); dq as per-16-key-block partials added last block first (atomics)",
     sb_dq_blocks_warp, NULL},
    {"sdpa_bwd", "efficient", 0,
     "memory-efficient backward: P rounded to the dtype for dV and inside dS, dS rounded before dQ/dK "
     "(correct under inter=<dtype>)", sb_efficient, "inter={dtype}"},
    {"sdpa_bwd", "mut_no_delta", 0, "MUTANT: dS = P*dP (the D_i = rowsum(dO*O) term forgotten)", sb_mut_no_delta, NULL},
    {"sdpa_bwd", "mut_dk_no_scale", 0, "MUTANT: dk not multiplied by the softmax scale", sb_mut_dk_no_scale, NULL},
    {"sdpa_bwd", "mut_gqa_last_head", 0,
     "MUTANT: dk/dv keep only the last query head of the group (store race instead of a sum)",
     sb_mut_gqa_last_head, NULL},
    {"sdpa_bwd", "mut_p_no_scale", 0, "MUTANT: P recomputed from unscaled scores exp(q.k - lse)",
     sb_mut_p_no_scale, NULL},
    {"sdpa_bwd", "mut_causal_off1", 0, "MUTANT: causal mask lets query i see key i+1", sb_mut_causal_off1, NULL},
    {"sdpa_bwd", "mut_ds_bf16", 0, "MUTANT: dS rounded to bf16 before the dq/dk products (plan says fp32)",
     sb_mut_ds_bf16, NULL},
    {"sdpa_bwd", "mut_gqa_heads_out", 0,
     "MUTANT of the fused plan: dk, dv per query head rounded to the output format, then the "
     "heads added (PyTorch's GQA: k, v expanded, gradients summed in the dtype); correct under "
     "--plan inter=<dtype>", sb_mut_gqa_heads_out, "inter={dtype}"},
};
/* Not in the table: correct only with o absent (it reads no stored output), so the
 * generic tests, which also run every correct candidate with o given, cannot take it;
 * tests/test_recompute.c runs it both ways. */
const nmo_cand nmo_cand_sdpa_bwd_math = {
    "sdpa_bwd", "math", 1, "PyTorch math SDPA backward: D_i = sum_j P dP from its own fp32 P, o not read",
    sb_math, NULL};

const int nmo_cand_sdpa_bwd_n = (int)(sizeof nmo_cand_sdpa_bwd / sizeof nmo_cand_sdpa_bwd[0]);
