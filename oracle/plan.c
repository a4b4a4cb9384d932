/* numoracle: precision plans (DESIGN §4).
 *
 * Text form: space-separated key=value tokens, e.g.
 *   in=bf16 out=bf16 compute=fp32 acc=fp32 inter=fp32 sum=any fn=cuda round=rne
 *   subnormals=ieee max_ulps=auto
 * Keys: in, out, compute, acc, inter (format names through nmo_fmt_from_name),
 *       sum (any | exact | mma:K[:P] | tree:D | blocked:B[:D[:P|any]]: sum_geom.c), fn (cr | ulp:N | cuda | ocml | fast),
 *       round (rne | rz | sr; rd and ru are accepted too), subnormals (ieee | ftz),
 *       max_ulps (a positive integer, or auto = nmo_plan_max_ulps's default).
 * Errors are NMO_ERR_PARSE with the pinned message "plan: <problem> in '<text>'".
 * Parsing is all-or-nothing: *p is changed only when the whole text is valid.
 * A field given twice in one text is an error ("field 'K' given twice"): a text states
 * each field once. Layering (a kernel's declared plan, then the user's --plan) is an
 * overlay: parse each text separately onto the same plan; a later text overrides the
 * fields it names (issue 16.12).
 * nmo_plan_to_string writes every field in the order above; its output parses back to
 * the same plan (fn_ulps are re-derived from fn, so hand-edited fn_ulps do not survive
 * a text round trip: the fn name is the contract). */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numoracle/plan.h"
#include "nmo_internal.h"

/* ---------------------------------------------------------------------------------- */
/* Function-accuracy presets, in ulps of `compute` (0 = correctly rounded).            */
/* Order: EXP LOG RSQRT SQRT DIV RCP TANH ERF SIGMOID SIN COS (enum nmo_fn).           */
/* The figures are single-precision figures (compute = fp32, the usual case); a plan   */
/* with compute = fp64 that uses a preset gets the same numbers (a superset of the     */
/* documented double-precision errors of both libraries, which are 1-2 ulps).          */
/* Sigmoid is not a library function: kernels compose it as 1/(1+exp(-x)); its figure  */
/* is exp + div + 1 (one extra rounding of the 1+e sum, amplified by at most 1).       */

static const char *const fn_names[NMO_FN_COUNT] = {
    "exp", "log", "rsqrt", "sqrt", "div", "rcp", "tanh", "erf", "sigmoid", "sin", "cos",
};

/* cuda: CUDA C++ Programming Guide, appendix "Mathematical Functions", table
 * "Single-Precision Mathematical Standard Library Functions with Maximum ULP Error"
 * (figures from extensive but not exhaustive NVIDIA testing, as the guide says):
 *   expf 2; logf 1; rsqrtf 2; sqrtf 0 (IEEE, with the default -prec-sqrt=true);
 *   x/y 0 (IEEE, default -prec-div=true); 1/x 0 (same); tanhf 2; erff 2; sinf 2;
 *   cosf 2; sigmoid = expf 2 + div 0 + 1 = 3. */
static const int preset_cuda[NMO_FN_COUNT] = {2, 1, 2, 0, 0, 0, 2, 2, 3, 2, 2};

/* ocml: ROCm Device-Libs "OCML User Guide" (OCML.md), table "Supported functions",
 * column "f32 max err" (max relative error in ulps, "c" = correctly rounded):
 *   exp 3; log 3; rsqrt 2; sqrt "3/c" -> 0: correctly rounded when the
 *   oclc_correctly_rounded_sqrt32 control is on, which is what hipcc/clang select by
 *   default (-fhip-fp32-correctly-rounded-divide-sqrt); a kernel built with that flag
 *   off, or using native/__builtin_amdgcn_sqrtf, needs fn=ulp:3 or fast.
 *   div and rcp 0: plain f32 '/' is IEEE under the same default flag (the table lists
 *   only div_{rm} as "c"; the plain-division figure is our reading of clang's default,
 *   not an OCML table entry — unsure for non-default builds).
 *   tanh 5; erf 16; sin 4; cos 4; sigmoid = exp 3 + div 0 + 1 = 4.
 * Note: these README figures are larger than commonly quoted numbers (exp/log 1 ulp,
 * tanh/erf/sin/cos 2): we take the library's own documented maxima. */
static const int preset_ocml[NMO_FN_COUNT] = {3, 3, 2, 0, 0, 0, 5, 16, 4, 4, 4};

/* fast: fast-math intrinsics (nvcc -use_fast_math; CUDA C++ Programming Guide,
 * "Intrinsic Functions", table "Single-Precision Floating-Point Intrinsic Functions").
 * Several of these errors are absolute or input-dependent, so no ulp figure is a
 * guarantee on the whole range; the numbers below are conservative caps, and a plan
 * that needs certainty near the bad spots should state fn=ulp:N itself.
 *   exp: __expf max ulp error 2 + floor(|1.173 x|). Over the range where expf is a
 *        finite normal number (|x| <= 88.73) that is at most 2 + 104 = 106. __expf is
 *        ex2.approx of RN(x * RN(log2 e)): that argument's rounding alone moves the
 *        result by up to (2^-24 + 2^-26.2) |x| relative, 1.23 |x| ulps (1.173 is
 *        NVIDIA's measured slope, not a bound): 2 + 1.23 * 88.73 < 112: use 112.
 *   log: __logf: outside [0.5, 2] 3 ulps; inside, absolute error 2^-21.41, which is at
 *        most 64 ulps only while |log x| >= ~0.047 (x outside [0.955, 1.048]). 64 is a
 *        cap that does not hold arbitrarily close to x = 1.
 *   rsqrt 2 (rsqrtf, unchanged by fast math).
 *   sqrt: -use_fast_math implies -prec-sqrt=false: the guide gives 1 ulp on compute
 *        capability >= 5.2 and 3 on older parts: use 3.
 *   div: __fdividef 2 ulps for |y| in [2^-126, 2^126] (outside that range it returns 0
 *        or NaN: not bounded in ulps).
 *   rcp: 1/x with -prec-div=false: 1 ulp.
 *   tanh: __tanhf / PTX tanh.approx.f32: maximum *relative* error ~2^-10.987; in ulps
 *        of fp32 that is up to 2^-10.987 * 2^24 ~= 8264: use 8300. (Quoting 64 here
 *        would make the preset unsound for kernels that use the approximate tanh.)
 *   erf: 2 (erff is not replaced by an intrinsic under -use_fast_math).
 *   sigmoid = exp 112 + div 2 + 1 = 115.
 *   sin, cos: __sinf/__cosf absolute error 2^-21.41 on [-pi, pi] and larger outside:
 *        64 is a cap that fails near the zeros of sin/cos and for large |x|.
 * The engines apply the sqrt, division and reciprocal figures (enc_fast.h, "n-ulp
 * results"); beyond __fdividef's divisor range a division by this preset is "anything"
 * (nmo_fe_div_unbounded). */
static const int preset_fast[NMO_FN_COUNT] = {112, 64, 2, 3, 2, 1, 8300, 2, 115, 64, 64};

/* triton: Triton 3.x on NVIDIA (the NVIDIA backend's elementwise lowering): tl.exp is
 * ex2.approx.f32 of x*log2(e) — the mechanism of __expf, so the fast figure 112 (2 +
 * 1.23|x| ulps up to the overflow threshold; measured on the H200: a Triton silu at
 * x = -70 is 54 ulps from expf's result) as the cap, and 3 + ceil(1.23|x|) below it
 * (nmo_plan_exp_ulps, from the measurement below). The attention references (sdpa,
 * sdpa_bwd) keep the flat cap (their contexts' exp_flat): FlashAttention evaluates
 * exp2f(s c - RN(m c)) with the scale folded into an FMA, and RN(m c)'s error grows with
 * the row max |m|, not with the argument |s - m| they enclose (slice 4 of issue 19 found
 * the argument-dependent figure unsound there; 112 = 2 + 1.23 * 88.73 covers the fold
 * while |m c| <= 88.7, as before).
 * Measured on every fp32 input (hip/validate/triton_fn_probe.py, Triton 3.6 on the H200,
 * output in papers/sound-oracles/results/triton-h200/triton_fn_probe.txt): tl.exp is
 * ex2.approx.f32 (PTX), at most 63.78 ulps from exp over |x| <= 88.72 (2 + 1.23|x| is
 * exceeded by 0.001 ulp near x = -0.05: a description, not a bound; 112 holds), +inf
 * exactly for every x >= 0x1.62e43p+6 and finite below, subnormal results kept (in
 * this kernel; the preset still allows their flush, nmo_plan_exp_ftz: Liger's
 * cross_entropy_bwd showed it);
 * tl.log is libdevice's __nv_logf (no lg2.approx in the PTX; Triton turned its fast log
 * off, triton-lang/triton#4777), at most 0.86 ulps on every positive input: 1 ulp, the
 * CUDA Math API's logf figure (fast's caveat near x = 1 does not apply to this preset);
 * fp32 '/' div.full.f32, 2 ulps (PTX ISA, div.full); tl.sqrt sqrt.approx.f32 (fast's 3,
 * conservative); tl.rsqrt rsqrt.approx.f32 (2); tanh and erf through libdevice when a
 * kernel calls them (2, as cuda); sin/cos sin.approx / cos.approx (fast's 64).
 * tl.sigmoid is Triton's own formula 1 / (1 + tl.exp(-x)) (PTX: ex2.approx.f32 and
 * div.full.f32, nothing else; measured on every fp32 input, triton_sigmoid_probe.py,
 * results/triton-h200/triton_sigmoid_probe.txt: the division within 0.975 ulps of
 * 1/RN(1 + e), subnormal quotients kept, +0 exactly for every x <= -0x1.62e43p+6): it is
 * modelled step by step (nmo_plan_sigmoid_composed), the 115 below is never used by it. */
static const int preset_triton[NMO_FN_COUNT] = {112, 1, 2, 3, 2, 2, 2, 2, 115, 64, 64};

#define NMO_FN_ULP_MAX (1 << 30)

const char *nmo_fn_name(nmo_fn f)
{
    if ((int)f < 0 || f >= NMO_FN_COUNT) return "?";
    return fn_names[f];
}

/* Strict decimal: digits only, no sign, no spaces; value in [lo, hi]. */
static int parse_long(const char *s, long lo, long hi, long *out)
{
    if (!s || !*s) return 0;
    long v = 0;
    for (const char *c = s; *c; c++) {
        if (*c < '0' || *c > '9') return 0;
        int d = *c - '0';
        if (v > (LONG_MAX - d) / 10) return 0;
        v = v * 10 + d;
    }
    if (v < lo || v > hi) return 0;
    *out = v;
    return 1;
}

/* Resolve an fn spec into name + ulps without touching the plan. */
static int fn_resolve(const char *spec, char name[16], int ulps[NMO_FN_COUNT])
{
    const int *tab = NULL;
    if (strcmp(spec, "cuda") == 0) tab = preset_cuda;
    else if (strcmp(spec, "ocml") == 0) tab = preset_ocml;
    else if (strcmp(spec, "fast") == 0) tab = preset_fast;
    else if (strcmp(spec, "triton") == 0) tab = preset_triton;
    if (tab) {
        snprintf(name, 16, "%s", spec);
        memcpy(ulps, tab, sizeof(int) * NMO_FN_COUNT);
        return 1;
    }
    long n = -1;
    if (strcmp(spec, "cr") == 0) {
        n = 0;
        snprintf(name, 16, "cr");
    } else if (strncmp(spec, "ulp:", 4) == 0 && parse_long(spec + 4, 0, NMO_FN_ULP_MAX, &n)) {
        snprintf(name, 16, "ulp:%ld", n); /* canonical: no leading zeros */
    } else {
        return 0;
    }
    /* ulp:N states the transcendental functions (exp, log, rsqrt, tanh, erf, sigmoid,
     * sin, cos: the README's list); sqrt, division and reciprocal stay correctly rounded
     * (IEEE, CUDA's and HIP's defaults): a kernel with approximate ones names fn=fast or
     * fn=triton. */
    for (int i = 0; i < NMO_FN_COUNT; i++)
        ulps[i] = i == NMO_FN_SQRT || i == NMO_FN_DIV || i == NMO_FN_RCP ? 0 : (int)n;
    return 1;
}

nmo_status nmo_plan_set_fn(nmo_plan *p, const char *spec, nmo_err *err)
{
    char name[16];
    int ulps[NMO_FN_COUNT];
    if (!p || !spec || !fn_resolve(spec, name, ulps))
        return nmo_err_set(err, NMO_ERR_PARSE,
                           "fn: bad value '%s' (expected cr, ulp:N, cuda, ocml, fast or triton)",
                           spec ? spec : "(null)");
    memcpy(p->fn_name, name, sizeof p->fn_name);
    memcpy(p->fn_ulps, ulps, sizeof p->fn_ulps);
    return NMO_OK;
}

void nmo_plan_default(nmo_plan *p, nmo_fmt dtype)
{
    if (!p) return;
    memset(p, 0, sizeof *p);
    if ((int)dtype < 0 || dtype >= NMO_FMT_COUNT) dtype = NMO_FP32;
    p->in = p->out = dtype;
    switch (dtype) {
    case NMO_FP64: p->compute = p->acc = p->inter = NMO_FP64; break;
    /* fp32 and every narrower storage format (tf32 included: tf32 is a storage/input
     * format of tensor cores, the math around it is fp32) compute in fp32. */
    default: p->compute = p->acc = p->inter = NMO_FP32; break;
    }
    p->sum = NMO_SUM_ANY;
    p->mma_k = 0;
    p->mma_p = 0;
    nmo_plan_set_fn(p, "cuda", NULL);
    p->round = NMO_RNE;
    p->round_sr = 0;
    p->ftz = 0;
    p->max_ulps = 0;
}

int nmo_plan_exp_ftz(const nmo_plan *p)
{
    return strcmp(p->fn_name, "triton") == 0 || strcmp(p->fn_name, "fast") == 0;
}

/* Measured for tl.exp only (triton_fn_probe.txt: every fp32 x >= 0x1.62e43p+6 gives +inf,
 * every smaller x a finite value); __expf (fn=fast) shares the mechanism but was not
 * measured, so it keeps the generic overflow side. */
double nmo_plan_exp_inf_from(const nmo_plan *p)
{
    return strcmp(p->fn_name, "triton") == 0 ? 0x1.62e43p+6 : INFINITY;
}

/* tl.exp's error grows with |x|: ex2.approx's own 2 ulps plus the rounding of its
 * argument RN(x * RN(log2 e)), (2^-24 + 2^-26.2)|x| relative = 1.23|x| ulps (preset_fast's
 * derivation; the CUDA guide's __expf figure 2 + floor(|1.173 x|) is of the same form).
 * Measured on every fp32 input on the H200 (triton_fn_probe.txt): at most 2.001 + 1.23|x|
 * ulps for normal results, 63.78 at most. fn=triton's figure is 3 + ceil(1.23|x|) (one ulp
 * of margin), the flat fn_ulps[EXP] beyond |x| = 87 (subnormal results, where only the
 * flat figure is stated) and for every other plan (fn=fast's __expf has the same
 * mechanism: left flat until measured). */
int nmo_plan_exp_ulps(const nmo_plan *p, double amax)
{
    int n = p->fn_ulps[NMO_FN_EXP];
    if (strcmp(p->fn_name, "triton") != 0 || !(amax <= 87)) return n;
    int m = 3 + (int)ceil(1.23 * amax);
    return m < n ? m : n;
}

int nmo_plan_sigmoid_composed(const nmo_plan *p)
{
    return strcmp(p->fn_name, "triton") == 0;
}

long nmo_plan_max_ulps(const nmo_plan *p)
{
    if (p->max_ulps > 0) return p->max_ulps;
    const nmo_fmt_info *fi = nmo_fmt_get(p->out);
    int e = (fi ? fi->prec : 24) - 5;
    if (e <= 2) return 4;
    if (e > 62) e = 62;
    return 1L << e;
}

/* ---------------------------------------------------------------------------------- */

static const char *sum_text(const nmo_plan *p, char *buf, size_t n)
{
    switch (p->sum) {
    case NMO_SUM_MMA:
        if (p->mma_p) snprintf(buf, n, "mma:%d:%d", p->mma_k, p->mma_p);
        else snprintf(buf, n, "mma:%d", p->mma_k);
        return buf;
    case NMO_SUM_EXACT: return "exact";
    case NMO_SUM_GEOM: return nmo_plan_geo_text(p, buf, n);
    default: return "any";
    }
}

/* Indexed by nmo_rnd (NMO_RNE, NMO_RZ, NMO_RD, NMO_RU). */
static const char *const rnd_names[NMO_RND_COUNT] = {"rne", "rz", "rd", "ru"};

static const char *round_text(const nmo_plan *p)
{
    if (p->round_sr) return "sr";
    if ((int)p->round < 0 || p->round >= NMO_RND_COUNT) return "rne";
    return rnd_names[p->round];
}

char *nmo_plan_to_string(const nmo_plan *p, char *buf, size_t n)
{
    if (!buf || n == 0) return buf;
    char sb[64], mb[32];
    if (p->max_ulps > 0) snprintf(mb, sizeof mb, "%ld", p->max_ulps);
    else snprintf(mb, sizeof mb, "auto");
    snprintf(buf, n,
             "in=%s out=%s compute=%s acc=%s inter=%s sum=%s fn=%s round=%s "
             "subnormals=%s max_ulps=%s",
             nmo_fmt_name(p->in), nmo_fmt_name(p->out), nmo_fmt_name(p->compute),
             nmo_fmt_name(p->acc), nmo_fmt_name(p->inter), sum_text(p, sb, sizeof sb),
             p->fn_name[0] ? p->fn_name : "cr", round_text(p), p->ftz ? "ftz" : "ieee", mb);
    return buf;
}

/* Apply one key=value to q. Returns 1 on success, 0 for a bad value, -1 for an
 * unknown key. */
static int apply_kv(nmo_plan *q, const char *key, const char *val)
{
    nmo_fmt *fp = NULL;
    if (strcmp(key, "in") == 0) fp = &q->in;
    else if (strcmp(key, "out") == 0) fp = &q->out;
    else if (strcmp(key, "compute") == 0) fp = &q->compute;
    else if (strcmp(key, "acc") == 0) fp = &q->acc;
    else if (strcmp(key, "inter") == 0) fp = &q->inter;
    if (fp) {
        nmo_fmt f;
        if (!*val || nmo_fmt_from_name(&f, val) != NMO_OK) return 0;
        *fp = f;
        return 1;
    }
    if (strcmp(key, "sum") == 0) {
        long k;
        q->geo_b = q->geo_d = 0; /* q is a copy: a bad value leaves *p as it was */
        q->geo_p = 0;
        q->geo_t = 0;
        int g = nmo_plan_geo_parse(q, val); /* tree:D, blocked:B[:D[:P]] (sum_geom.c) */
        if (g >= 0) return g;
        if (strcmp(val, "any") == 0) { q->sum = NMO_SUM_ANY; q->mma_k = q->mma_p = 0; return 1; }
        if (strcmp(val, "exact") == 0) { q->sum = NMO_SUM_EXACT; q->mma_k = q->mma_p = 0; return 1; }
        if (strncmp(val, "mma:", 4) == 0) {
            /* mma:K or mma:K:P (P = bits the block accumulator keeps, default acc's) */
            char kb[32];
            if (strlen(val + 4) >= sizeof kb) return 0; /* truncating would drop the ":P" silently */
            snprintf(kb, sizeof kb, "%s", val + 4);
            char *colon = strchr(kb, ':');
            long pb = 0;
            if (colon) {
                *colon = 0;
                if (!parse_long(colon + 1, 2, 64, &pb)) return 0;
            }
            if (!parse_long(kb, 1, 1 << 20, &k)) return 0;
            q->sum = NMO_SUM_MMA;
            q->mma_k = (int)k;
            q->mma_p = (int)pb;
            return 1;
        }
        return 0;
    }
    if (strcmp(key, "fn") == 0) {
        char name[16];
        int ulps[NMO_FN_COUNT];
        if (!fn_resolve(val, name, ulps)) return 0;
        memcpy(q->fn_name, name, sizeof q->fn_name);
        memcpy(q->fn_ulps, ulps, sizeof q->fn_ulps);
        return 1;
    }
    if (strcmp(key, "round") == 0) {
        if (strcmp(val, "sr") == 0) { q->round = NMO_RNE; q->round_sr = 1; return 1; }
        /* rne, rz, and (beyond the documented set) rd, ru: exact lowercase names. */
        for (int i = 0; i < NMO_RND_COUNT; i++)
            if (strcmp(val, rnd_names[i]) == 0) {
                q->round = (nmo_rnd)i;
                q->round_sr = 0;
                return 1;
            }
        return 0;
    }
    if (strcmp(key, "subnormals") == 0) {
        if (strcmp(val, "ieee") == 0) { q->ftz = 0; return 1; }
        if (strcmp(val, "ftz") == 0) { q->ftz = 1; return 1; }
        return 0;
    }
    if (strcmp(key, "max_ulps") == 0) {
        long v;
        if (strcmp(val, "auto") == 0) { q->max_ulps = 0; return 1; }
        if (!parse_long(val, 1, LONG_MAX, &v)) return 0;
        q->max_ulps = v;
        return 1;
    }
    return -1;
}

/* The keys of the text form, in nmo_plan_to_string's order; -1 for an unknown key. */
static int key_index(const char *key)
{
    static const char *const keys[] = {"in",  "out", "compute", "acc",        "inter",
                                       "sum", "fn",  "round",   "subnormals", "max_ulps"};
    for (int i = 0; i < (int)(sizeof keys / sizeof keys[0]); i++)
        if (strcmp(key, keys[i]) == 0) return i;
    return -1;
}

nmo_status nmo_plan_parse(nmo_plan *p, const char *text, nmo_err *err)
{
    if (!p || !text) return nmo_err_set(err, NMO_ERR_USAGE, "plan: no plan or text");
    nmo_plan q = *p;
    size_t len = strlen(text);
    char *tok = malloc(len + 1);
    if (!tok) return nmo_err_set(err, NMO_ERR_NOMEM, "plan: out of memory");
    nmo_status st = NMO_OK;
    unsigned seen = 0; /* bit key_index(key): fields this text has set */
    const char *s = text;
    for (;;) {
        while (*s && isspace((unsigned char)*s)) s++;
        if (!*s) break;
        size_t n = 0;
        while (s[n] && !isspace((unsigned char)s[n])) n++;
        memcpy(tok, s, n);
        tok[n] = '\0';
        s += n;
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok) {
            st = nmo_err_set(err, NMO_ERR_PARSE, "plan: expected key=value, got '%s' in '%s'",
                             tok, text);
            break;
        }
        *eq = '\0';
        const char *key = tok, *val = eq + 1;
        int ki = key_index(key);
        if (ki >= 0 && (seen & (1u << ki))) {
            st = nmo_err_set(err, NMO_ERR_PARSE, "plan: field '%s' given twice in '%s'", key, text);
            break;
        }
        if (ki >= 0) seen |= 1u << ki;
        int r = apply_kv(&q, key, val);
        if (r < 0) {
            st = nmo_err_set(err, NMO_ERR_PARSE, "plan: unknown key '%s' in '%s'", key, text);
            break;
        }
        if (r == 0) {
            st = nmo_err_set(err, NMO_ERR_PARSE, "plan: bad value '%s' for '%s' in '%s'", val,
                             key, text);
            break;
        }
    }
    free(tok);
    if (st == NMO_OK) *p = q;
    return st;
}

cJSON *nmo_plan_to_json(const nmo_plan *p)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    char sb[64], text[512];
    cJSON_AddStringToObject(o, "in", nmo_fmt_name(p->in));
    cJSON_AddStringToObject(o, "out", nmo_fmt_name(p->out));
    cJSON_AddStringToObject(o, "compute", nmo_fmt_name(p->compute));
    cJSON_AddStringToObject(o, "acc", nmo_fmt_name(p->acc));
    cJSON_AddStringToObject(o, "inter", nmo_fmt_name(p->inter));
    cJSON_AddStringToObject(o, "sum", sum_text(p, sb, sizeof sb));
    if (p->sum == NMO_SUM_GEOM) { /* the geometry in force (sum_geom.c) */
        cJSON *g = cJSON_AddObjectToObject(o, "sum_geometry");
        if (g) {
            if (p->geo_t > 0) { /* run = ceil(n / threads) + slack */
                cJSON_AddNumberToObject(g, "run_threads", p->geo_t);
                cJSON_AddNumberToObject(g, "run_slack", p->geo_b);
            } else cJSON_AddNumberToObject(g, "run", p->geo_b);
            cJSON_AddNumberToObject(g, "tree_depth", p->geo_d);
            if (p->geo_p) cJSON_AddNumberToObject(g, "partials", (double)p->geo_p);
            else cJSON_AddStringToObject(g, "partials", "any");
            int64_t cap = nmo_plan_geo_capacity(p);
            if (cap < INT64_MAX) cJSON_AddNumberToObject(g, "capacity", (double)cap);
            else cJSON_AddNullToObject(g, "capacity");
        }
    }
    if (p->sum == NMO_SUM_MMA) {
        cJSON_AddNumberToObject(o, "mma_k", p->mma_k);
        cJSON_AddNumberToObject(o, "mma_p", p->mma_p ? p->mma_p : nmo_fmt_get(p->acc)->prec);
    }
    cJSON_AddStringToObject(o, "fn", p->fn_name[0] ? p->fn_name : "cr");
    cJSON *fu = cJSON_AddObjectToObject(o, "fn_ulps");
    if (fu)
        for (int i = 0; i < NMO_FN_COUNT; i++) cJSON_AddNumberToObject(fu, fn_names[i], p->fn_ulps[i]);
    cJSON_AddStringToObject(o, "round", round_text(p));
    cJSON_AddStringToObject(o, "subnormals", p->ftz ? "ftz" : "ieee");
    /* max_ulps: the effective value; max_ulps_auto says whether it is the default. */
    cJSON_AddNumberToObject(o, "max_ulps", (double)nmo_plan_max_ulps(p));
    cJSON_AddBoolToObject(o, "max_ulps_auto", p->max_ulps <= 0);
    cJSON_AddStringToObject(o, "text", nmo_plan_to_string(p, text, sizeof text));
    if (p->preset[0]) cJSON_AddStringToObject(o, "preset", p->preset);
    return o;
}

double nmo_plan_dot_k2(const nmo_plan *p, int64_t n, int64_t m)
{
    switch (p->sum) {
    case NMO_SUM_EXACT: return 0;
    case NMO_SUM_GEOM: return nmo_plan_red_k(p, n, m, 1);
    case NMO_SUM_MMA: {
        const nmo_fmt_info *ai = nmo_fmt_get(p->acc);
        int bits = p->mma_p ? p->mma_p : ai->prec;
        /* blocks that hold a nonzero term: at most m and at most ceil(n/K) (a block of
         * exact zeros adds nothing) */
        int64_t blocks = (n + p->mma_k - 1) / p->mma_k;
        if (blocks > m) blocks = m;
        /* 2 * 2^-bits per event, in units of u_acc = 2^-prec(acc) */
        return 2.0 * (double)(m + blocks) * ldexp(1.0, ai->prec - bits);
    }
    default: return (double)m;
    }
}

double nmo_plan_dot_k(const nmo_plan *p, int64_t n) { return nmo_plan_dot_k2(p, n, n); }
