/* Tests for oracle/plan.c: defaults, text parse / canonical print round trip, pinned
 * error messages, function-accuracy presets, max_ulps defaults, JSON form. */
#include <criterion/criterion.h>
#include <string.h>

#include "numoracle/plan.h"
#include "nmo_internal.h"

static void plan_expect_eq(const nmo_plan *a, const nmo_plan *b, const char *ctx)
{
    cr_expect_eq(a->in, b->in, "%s: in", ctx);
    cr_expect_eq(a->out, b->out, "%s: out", ctx);
    cr_expect_eq(a->compute, b->compute, "%s: compute", ctx);
    cr_expect_eq(a->acc, b->acc, "%s: acc", ctx);
    cr_expect_eq(a->inter, b->inter, "%s: inter", ctx);
    cr_expect_eq(a->sum, b->sum, "%s: sum", ctx);
    cr_expect_eq(a->mma_k, b->mma_k, "%s: mma_k", ctx);
    cr_expect_str_eq(a->fn_name, b->fn_name, "%s: fn_name", ctx);
    for (int i = 0; i < NMO_FN_COUNT; i++)
        cr_expect_eq(a->fn_ulps[i], b->fn_ulps[i], "%s: fn_ulps[%s]", ctx,
                     nmo_fn_name((nmo_fn)i));
    cr_expect_eq(a->round, b->round, "%s: round", ctx);
    cr_expect_eq(a->round_sr, b->round_sr, "%s: round_sr", ctx);
    cr_expect_eq(a->ftz, b->ftz, "%s: ftz", ctx);
    cr_expect_eq(a->max_ulps, b->max_ulps, "%s: max_ulps", ctx);
}

/* ---- defaults ---------------------------------------------------------------------- */

Test(plan_default, fp32)
{
    nmo_plan p;
    nmo_plan_default(&p, NMO_FP32);
    cr_expect_eq(p.in, NMO_FP32);
    cr_expect_eq(p.out, NMO_FP32);
    cr_expect_eq(p.compute, NMO_FP32);
    cr_expect_eq(p.acc, NMO_FP32);
    cr_expect_eq(p.inter, NMO_FP32);
    cr_expect_eq(p.sum, NMO_SUM_ANY);
    cr_expect_str_eq(p.fn_name, "cuda");
    cr_expect_eq(p.round, NMO_RNE);
    cr_expect_eq(p.round_sr, 0);
    cr_expect_eq(p.ftz, 0);
    cr_expect_eq(p.max_ulps, 0);
}

Test(plan_default, fp64_all_fp64)
{
    nmo_plan p;
    nmo_plan_default(&p, NMO_FP64);
    cr_expect_eq(p.in, NMO_FP64);
    cr_expect_eq(p.out, NMO_FP64);
    cr_expect_eq(p.compute, NMO_FP64);
    cr_expect_eq(p.acc, NMO_FP64);
    cr_expect_eq(p.inter, NMO_FP64);
}

Test(plan_default, narrow_formats_compute_in_fp32)
{
    const nmo_fmt fs[] = {NMO_TF32, NMO_BF16, NMO_FP16, NMO_FP8_E4M3, NMO_FP8_E5M2,
                          NMO_FP8_E4M3FNUZ, NMO_FP8_E5M2FNUZ};
    for (size_t k = 0; k < sizeof fs / sizeof fs[0]; k++) {
        nmo_plan p;
        nmo_plan_default(&p, fs[k]);
        cr_expect_eq(p.in, fs[k], "%s", nmo_fmt_name(fs[k]));
        cr_expect_eq(p.out, fs[k], "%s", nmo_fmt_name(fs[k]));
        cr_expect_eq(p.compute, NMO_FP32, "%s", nmo_fmt_name(fs[k]));
        cr_expect_eq(p.acc, NMO_FP32, "%s", nmo_fmt_name(fs[k]));
        cr_expect_eq(p.inter, NMO_FP32, "%s", nmo_fmt_name(fs[k]));
        cr_expect_eq(p.sum, NMO_SUM_ANY);
        cr_expect_str_eq(p.fn_name, "cuda");
        cr_expect_eq(p.fn_ulps[NMO_FN_EXP], 2);
        cr_expect_eq(p.round, NMO_RNE);
        cr_expect_eq(p.ftz, 0);
        cr_expect_eq(p.max_ulps, 0);
    }
}

Test(plan_default, canonical_text_pinned)
{
    nmo_plan p;
    char buf[256];
    nmo_plan_default(&p, NMO_BF16);
    cr_expect_str_eq(nmo_plan_to_string(&p, buf, sizeof buf),
                     "in=bf16 out=bf16 compute=fp32 acc=fp32 inter=fp32 sum=any fn=cuda "
                     "round=rne subnormals=ieee max_ulps=auto");
}

/* ---- parse ------------------------------------------------------------------------- */

Test(plan_parse, fields_applied)
{
    nmo_plan p;
    nmo_err e = {{0}};
    nmo_plan_default(&p, NMO_BF16);
    cr_assert_eq(nmo_plan_parse(&p,
                                "in=fp16 out=fp8_e4m3 compute=fp64 acc=fp64 inter=bf16 "
                                "sum=mma:16 fn=ulp:3 round=sr subnormals=ftz max_ulps=12",
                                &e),
                 NMO_OK, "%s", e.msg);
    cr_expect_eq(p.in, NMO_FP16);
    cr_expect_eq(p.out, NMO_FP8_E4M3);
    cr_expect_eq(p.compute, NMO_FP64);
    cr_expect_eq(p.acc, NMO_FP64);
    cr_expect_eq(p.inter, NMO_BF16);
    cr_expect_eq(p.sum, NMO_SUM_MMA);
    cr_expect_eq(p.mma_k, 16);
    cr_expect_str_eq(p.fn_name, "ulp:3");
    for (int i = 0; i < NMO_FN_COUNT; i++)
        cr_expect_eq(p.fn_ulps[i], i == NMO_FN_SQRT || i == NMO_FN_DIV || i == NMO_FN_RCP ? 0 : 3);
    cr_expect_eq(p.round_sr, 1);
    cr_expect_eq(p.ftz, 1);
    cr_expect_eq(p.max_ulps, 12);
    cr_expect_eq(nmo_plan_max_ulps(&p), 12);
}

Test(plan_parse, unspecified_fields_kept_and_aliases)
{
    nmo_plan p;
    nmo_plan_default(&p, NMO_FP16);
    cr_assert_eq(nmo_plan_parse(&p, "  acc=FLOAT\tround=rz\n", NULL), NMO_OK);
    cr_expect_eq(p.acc, NMO_FP32);
    cr_expect_eq(p.round, NMO_RZ);
    cr_expect_eq(p.in, NMO_FP16);
    cr_expect_eq(p.out, NMO_FP16);
    cr_expect_str_eq(p.fn_name, "cuda");
    cr_assert_eq(nmo_plan_parse(&p, "in=bfloat16 out=half", NULL), NMO_OK);
    cr_expect_eq(p.in, NMO_BF16);
    cr_expect_eq(p.out, NMO_FP16);
    cr_assert_eq(nmo_plan_parse(&p, "", NULL), NMO_OK); /* empty text: nothing changes */
    cr_expect_eq(p.in, NMO_BF16);
    cr_assert_eq(nmo_plan_parse(&p, "sum=exact", NULL), NMO_OK);
    cr_expect_eq(p.sum, NMO_SUM_EXACT);
    cr_expect_eq(p.mma_k, 0);
    cr_assert_eq(nmo_plan_parse(&p, "fn=ulp:007", NULL), NMO_OK);
    cr_expect_str_eq(p.fn_name, "ulp:7");
    /* one text states a field once: a repeat is an error naming the field, and the plan
     * is left as it was (issue 16.12) */
    nmo_err e = {{0}};
    cr_assert_eq(nmo_plan_parse(&p, "max_ulps=5 max_ulps=auto", &e), NMO_ERR_PARSE);
    cr_expect_str_eq(e.msg, "plan: field 'max_ulps' given twice in 'max_ulps=5 max_ulps=auto'");
    cr_expect_eq(p.max_ulps, 0);
    cr_assert_eq(nmo_plan_parse(&p, "in=fp16 fn=cr out=fp32 fn=cr", &e), NMO_ERR_PARSE);
    cr_expect_str_eq(e.msg, "plan: field 'fn' given twice in 'in=fp16 fn=cr out=fp32 fn=cr'");
    cr_expect_eq(p.in, NMO_BF16);
    /* layering is an overlay: each text parsed on its own, the later one wins field by
     * field (a kernel's declared plan, then --plan) */
    cr_assert_eq(nmo_plan_parse(&p, "max_ulps=5 fn=ocml", NULL), NMO_OK);
    cr_assert_eq(nmo_plan_parse(&p, "max_ulps=auto", NULL), NMO_OK);
    cr_expect_eq(p.max_ulps, 0);
    cr_expect_str_eq(p.fn_name, "ocml");
}

Test(plan_parse, round_trip_many)
{
    static const char *const texts[] = {
        "",
        "in=bf16",
        "in=fp16 out=fp16 compute=fp32 acc=fp32 inter=fp16",
        "sum=mma:8",
        "sum=mma:1 fn=fast",
        "sum=exact fn=cr",
        "fn=ocml round=rz",
        "fn=ulp:0",
        "fn=ulp:1000000",
        "round=sr subnormals=ftz",
        "round=rd",
        "round=ru max_ulps=1",
        "max_ulps=9223372036854775807",
        "in=fp8_e4m3 out=fp8_e5m2 compute=fp32 acc=fp32 inter=bf16",
        "in=fp8_e4m3fnuz out=fp8_e5m2fnuz",
        "in=tf32 out=fp32 compute=fp32 acc=fp32",
        "in=fp64 out=fp64 compute=fp64 acc=fp64 inter=fp64 fn=cr",
        "compute=FLOAT acc=DOUBLE inter=BFLOAT16",
        "in=bf16 out=bf16 compute=fp32 acc=fp32 inter=fp32 sum=any fn=cuda round=rne "
        "subnormals=ieee max_ulps=auto",
    };
    const nmo_fmt bases[] = {NMO_BF16, NMO_FP32, NMO_FP8_E4M3};
    for (size_t b = 0; b < sizeof bases / sizeof bases[0]; b++)
        for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
            nmo_plan p, q;
            nmo_err e = {{0}};
            char s1[512], s2[512];
            nmo_plan_default(&p, bases[b]);
            cr_assert_eq(nmo_plan_parse(&p, texts[k], &e), NMO_OK, "'%s': %s", texts[k], e.msg);
            nmo_plan_to_string(&p, s1, sizeof s1);
            /* parse into a plan that starts elsewhere: every field must be overwritten */
            nmo_plan_default(&q, NMO_FP64);
            nmo_plan_set_fn(&q, "fast", NULL);
            q.round_sr = 1;
            q.ftz = 1;
            q.max_ulps = 77;
            q.sum = NMO_SUM_MMA;
            q.mma_k = 3;
            cr_assert_eq(nmo_plan_parse(&q, s1, &e), NMO_OK, "'%s': %s", s1, e.msg);
            plan_expect_eq(&p, &q, s1);
            cr_expect_str_eq(nmo_plan_to_string(&q, s2, sizeof s2), s1);
        }
}

/* Every bad input: NMO_ERR_PARSE, pinned message, and the plan left untouched. */
Test(plan_parse, bad_inputs_pinned_messages)
{
    static const struct {
        const char *text, *msg;
    } cases[] = {
        {"in=bf16 acum=fp32", "plan: unknown key 'acum' in 'in=bf16 acum=fp32'"},
        /* earlier valid tokens must not be applied when a later one fails */
        {"in=fp16 out=fp16 acum=fp32", "plan: unknown key 'acum' in 'in=fp16 out=fp16 acum=fp32'"},
        {"fn=fast sum=mma:8 round=rn", "plan: bad value 'rn' for 'round' in 'fn=fast sum=mma:8 round=rn'"},
        {"compute=fp33", "plan: bad value 'fp33' for 'compute' in 'compute=fp33'"},
        {"in=", "plan: bad value '' for 'in' in 'in='"},
        {"out=int8", "plan: bad value 'int8' for 'out' in 'out=int8'"},
        {"acc=fp32 inter=xx", "plan: bad value 'xx' for 'inter' in 'acc=fp32 inter=xx'"},
        {"bf16", "plan: expected key=value, got 'bf16' in 'bf16'"},
        {"=bf16", "plan: expected key=value, got '=bf16' in '=bf16'"},
        {"in=bf16=fp32", "plan: bad value 'bf16=fp32' for 'in' in 'in=bf16=fp32'"},
        {"sum=tree", "plan: bad value 'tree' for 'sum' in 'sum=tree'"},
        {"sum=mma:", "plan: bad value 'mma:' for 'sum' in 'sum=mma:'"},
        {"sum=mma:0", "plan: bad value 'mma:0' for 'sum' in 'sum=mma:0'"},
        {"sum=mma:-4", "plan: bad value 'mma:-4' for 'sum' in 'sum=mma:-4'"},
        {"sum=mma:4x", "plan: bad value 'mma:4x' for 'sum' in 'sum=mma:4x'"},
        {"fn=libm", "plan: bad value 'libm' for 'fn' in 'fn=libm'"},
        {"fn=ulp:", "plan: bad value 'ulp:' for 'fn' in 'fn=ulp:'"},
        {"fn=ulp:-1", "plan: bad value 'ulp:-1' for 'fn' in 'fn=ulp:-1'"},
        {"fn=ulp:1.5", "plan: bad value 'ulp:1.5' for 'fn' in 'fn=ulp:1.5'"},
        {"fn=ulp:99999999999", "plan: bad value 'ulp:99999999999' for 'fn' in 'fn=ulp:99999999999'"},
        {"fn=CUDA", "plan: bad value 'CUDA' for 'fn' in 'fn=CUDA'"},
        {"round=rn", "plan: bad value 'rn' for 'round' in 'round=rn'"},
        {"round=", "plan: bad value '' for 'round' in 'round='"},
        {"subnormals=daz", "plan: bad value 'daz' for 'subnormals' in 'subnormals=daz'"},
        {"max_ulps=0", "plan: bad value '0' for 'max_ulps' in 'max_ulps=0'"},
        {"max_ulps=-5", "plan: bad value '-5' for 'max_ulps' in 'max_ulps=-5'"},
        {"max_ulps=+5", "plan: bad value '+5' for 'max_ulps' in 'max_ulps=+5'"},
        {"max_ulps=abc", "plan: bad value 'abc' for 'max_ulps' in 'max_ulps=abc'"},
        {"max_ulps=99999999999999999999",
         "plan: bad value '99999999999999999999' for 'max_ulps' in 'max_ulps=99999999999999999999'"},
        {"IN=bf16", "plan: unknown key 'IN' in 'IN=bf16'"},
        {"in=bf16, out=bf16", "plan: bad value 'bf16,' for 'in' in 'in=bf16, out=bf16'"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        nmo_plan p, ref;
        nmo_err e = {{0}};
        nmo_plan_default(&p, NMO_BF16);
        ref = p;
        cr_expect_eq(nmo_plan_parse(&p, cases[k].text, &e), NMO_ERR_PARSE, "'%s'", cases[k].text);
        cr_expect_str_eq(e.msg, cases[k].msg);
        plan_expect_eq(&p, &ref, cases[k].text);
    }
}

Test(plan_parse, null_err_is_fine)
{
    nmo_plan p;
    nmo_plan_default(&p, NMO_BF16);
    cr_expect_eq(nmo_plan_parse(&p, "nope=1", NULL), NMO_ERR_PARSE);
}

/* ---- presets ----------------------------------------------------------------------- */

static void expect_fn(const nmo_plan *p, const int *want)
{
    for (int i = 0; i < NMO_FN_COUNT; i++)
        cr_expect_eq(p->fn_ulps[i], want[i], "%s: %s", p->fn_name, nmo_fn_name((nmo_fn)i));
}

Test(plan_fn, presets)
{
    nmo_plan p;
    nmo_err e = {{0}};
    nmo_plan_default(&p, NMO_FP32);
    /*                        exp log rsqrt sqrt div rcp tanh erf sigm sin cos */
    static const int cuda[] = {2, 1, 2, 0, 0, 0, 2, 2, 3, 2, 2};
    static const int ocml[] = {3, 3, 2, 0, 0, 0, 5, 16, 4, 4, 4};
    static const int fast[] = {112, 64, 2, 3, 2, 1, 8300, 2, 115, 64, 64};
    static const int cr[] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    /* ulp:N: the transcendental functions; sqrt, div, rcp stay correctly rounded */
    static const int u5[] = {5, 5, 5, 0, 0, 0, 5, 5, 5, 5, 5};
    cr_assert_eq(nmo_plan_set_fn(&p, "cuda", &e), NMO_OK);
    expect_fn(&p, cuda);
    cr_assert_eq(nmo_plan_set_fn(&p, "ocml", &e), NMO_OK);
    cr_expect_str_eq(p.fn_name, "ocml");
    expect_fn(&p, ocml);
    cr_assert_eq(nmo_plan_set_fn(&p, "fast", &e), NMO_OK);
    expect_fn(&p, fast);
    cr_assert_eq(nmo_plan_set_fn(&p, "cr", &e), NMO_OK);
    cr_expect_str_eq(p.fn_name, "cr");
    expect_fn(&p, cr);
    cr_assert_eq(nmo_plan_set_fn(&p, "ulp:5", &e), NMO_OK);
    cr_expect_str_eq(p.fn_name, "ulp:5");
    expect_fn(&p, u5);
    /* sigmoid is composed: exp + div + 1 in every preset */
    const char *ps[] = {"cuda", "ocml", "fast"};
    for (int k = 0; k < 3; k++) {
        nmo_plan_set_fn(&p, ps[k], NULL);
        cr_expect_eq(p.fn_ulps[NMO_FN_SIGMOID], p.fn_ulps[NMO_FN_EXP] + p.fn_ulps[NMO_FN_DIV] + 1,
                     "%s", ps[k]);
    }
}

Test(plan_fn, bad_spec_leaves_plan)
{
    nmo_plan p;
    nmo_err e = {{0}};
    nmo_plan_default(&p, NMO_FP32);
    cr_expect_eq(nmo_plan_set_fn(&p, "ulp:x", &e), NMO_ERR_PARSE);
    cr_expect_str_eq(e.msg, "fn: bad value 'ulp:x' (expected cr, ulp:N, cuda, ocml, fast or triton)");
    cr_expect_str_eq(p.fn_name, "cuda");
    cr_expect_eq(p.fn_ulps[NMO_FN_EXP], 2);
}

Test(plan_fn, names)
{
    cr_expect_str_eq(nmo_fn_name(NMO_FN_EXP), "exp");
    cr_expect_str_eq(nmo_fn_name(NMO_FN_SIGMOID), "sigmoid");
    cr_expect_str_eq(nmo_fn_name(NMO_FN_COS), "cos");
    cr_expect_str_eq(nmo_fn_name(NMO_FN_COUNT), "?");
}

/* ---- max_ulps ---------------------------------------------------------------------- */

Test(plan_max_ulps, defaults_by_out_format)
{
    nmo_plan p;
    struct {
        nmo_fmt f;
        long want;
    } cases[] = {
        {NMO_BF16, 8},        {NMO_FP16, 64},        {NMO_FP32, 1L << 19},
        {NMO_FP8_E4M3, 4},    {NMO_FP8_E5M2, 4},     {NMO_FP8_E4M3FNUZ, 4},
        {NMO_FP8_E5M2FNUZ, 4}, {NMO_TF32, 64},       {NMO_FP64, 1L << 48},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        nmo_plan_default(&p, cases[k].f);
        cr_expect_eq(nmo_plan_max_ulps(&p), cases[k].want, "%s", nmo_fmt_name(cases[k].f));
    }
    nmo_plan_default(&p, NMO_BF16);
    p.out = NMO_FP16; /* the default follows out, not in */
    cr_expect_eq(nmo_plan_max_ulps(&p), 64);
    p.max_ulps = 3;
    cr_expect_eq(nmo_plan_max_ulps(&p), 3);
}

/* ---- JSON -------------------------------------------------------------------------- */

Test(plan_json, every_field)
{
    nmo_plan p;
    nmo_plan_default(&p, NMO_BF16);
    cr_assert_eq(nmo_plan_parse(&p, "sum=mma:32 fn=ocml round=sr subnormals=ftz", NULL), NMO_OK);
    cJSON *j = nmo_plan_to_json(&p);
    cr_assert_not_null(j);
    cr_expect_str_eq(cJSON_GetObjectItem(j, "in")->valuestring, "bf16");
    cr_expect_str_eq(cJSON_GetObjectItem(j, "out")->valuestring, "bf16");
    cr_expect_str_eq(cJSON_GetObjectItem(j, "compute")->valuestring, "fp32");
    cr_expect_str_eq(cJSON_GetObjectItem(j, "acc")->valuestring, "fp32");
    cr_expect_str_eq(cJSON_GetObjectItem(j, "inter")->valuestring, "fp32");
    cr_expect_str_eq(cJSON_GetObjectItem(j, "sum")->valuestring, "mma:32");
    cr_expect_eq(cJSON_GetObjectItem(j, "mma_k")->valueint, 32);
    cr_expect_str_eq(cJSON_GetObjectItem(j, "fn")->valuestring, "ocml");
    cJSON *fu = cJSON_GetObjectItem(j, "fn_ulps");
    cr_assert(cJSON_IsObject(fu));
    cr_expect_eq(cJSON_GetArraySize(fu), NMO_FN_COUNT);
    for (int i = 0; i < NMO_FN_COUNT; i++)
        cr_expect_eq(cJSON_GetObjectItem(fu, nmo_fn_name((nmo_fn)i))->valueint, p.fn_ulps[i]);
    cr_expect_str_eq(cJSON_GetObjectItem(j, "round")->valuestring, "sr");
    cr_expect_str_eq(cJSON_GetObjectItem(j, "subnormals")->valuestring, "ftz");
    cr_expect_eq(cJSON_GetObjectItem(j, "max_ulps")->valuedouble, 8.0);
    cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(j, "max_ulps_auto")));
    char buf[512];
    cr_expect_str_eq(cJSON_GetObjectItem(j, "text")->valuestring,
                     nmo_plan_to_string(&p, buf, sizeof buf));
    cJSON_Delete(j);
}

Test(plan_string, truncation_is_safe)
{
    nmo_plan p;
    char buf[10];
    nmo_plan_default(&p, NMO_FP32);
    nmo_plan_to_string(&p, buf, sizeof buf);
    cr_expect_eq(strlen(buf), 9);
    cr_expect_str_eq(buf, "in=fp32 o");
}

/* Named presets (oracle/preset.c): a preset's fields for the operator, "inter=io" as the
 * storage dtype, explicit fields on top, one preset at most, unknown names rejected. */
Test(plan, presets_per_operator)
{
    nmo_plan p;
    nmo_err err = {{0}};
    nmo_plan_default(&p, NMO_BF16);
    cr_assert_eq(nmo_plan_parse_op(&p, "swiglu", "preset=torch-eager", &err), NMO_OK, "%s", err.msg);
    cr_expect_eq(p.inter, NMO_BF16);
    cr_expect_str_eq(p.preset, "torch-eager");
    nmo_plan_default(&p, NMO_FP16);
    cr_assert_eq(nmo_plan_parse_op(&p, "softmax", "preset=torch-eager", &err), NMO_OK);
    cr_expect_eq(p.inter, NMO_FP32, "a fused eager kernel keeps fp32 intermediates");
    nmo_plan_default(&p, NMO_FP16);
    cr_assert_eq(nmo_plan_parse_op(&p, "matmul", "max_ulps=9 preset=cublas-rpr", &err), NMO_OK);
    cr_expect_eq(p.inter, NMO_FP16);
    cr_expect_eq(p.sum, NMO_SUM_MMA);
    cr_expect_eq(p.mma_k, 16);
    cr_expect_eq(p.max_ulps, 9, "explicit fields are kept wherever they stand");
    nmo_plan_default(&p, NMO_BF16);
    cr_assert_eq(nmo_plan_parse_op(&p, "sdpa", "preset=flash-attention fn=cuda", &err), NMO_OK);
    cr_expect_str_eq(p.fn_name, "cuda", "the explicit field overrides the preset's");
    cr_expect_eq(p.inter, NMO_BF16);
    nmo_plan q = p;
    cr_expect_eq(nmo_plan_parse_op(&p, "sdpa", "preset=flash", &err), NMO_ERR_PARSE);
    cr_expect(strstr(err.msg, "unknown preset 'flash'") != NULL, "%s", err.msg);
    cr_expect_eq(nmo_plan_parse_op(&p, "sdpa", "preset=triton preset=liger", &err), NMO_ERR_PARSE);
    cr_expect(memcmp(&p, &q, sizeof p) == 0, "a failed parse leaves the plan as it was");
    cr_expect_eq(nmo_plan_parse(&p, "preset=triton", &err), NMO_ERR_PARSE, "no preset without an operator");
    /* every preset parses for every operator and dtype it lists */
    for (int i = 0; i < nmo_preset_count(); i++)
        for (int o = 0; o < nmo_op_count(); o++) {
            char t[64];
            snprintf(t, sizeof t, "preset=%s", nmo_preset_name(i));
            nmo_plan_default(&p, NMO_BF16);
            cr_expect_eq(nmo_plan_parse_op(&p, nmo_op_at(o)->name, t, &err), NMO_OK, "%s %s: %s",
                         nmo_preset_name(i), nmo_op_at(o)->name, err.msg);
        }
}

/* fn=triton: Triton's approximate exp (ex2.approx of x log2 e, __expf's error) */
Test(plan, fn_triton)
{
    nmo_plan p;
    nmo_plan_default(&p, NMO_FP32);
    cr_assert_eq(nmo_plan_parse(&p, "fn=triton", NULL), NMO_OK);
    cr_expect_eq(p.fn_ulps[NMO_FN_EXP], 112);
    cr_expect_eq(p.fn_ulps[NMO_FN_DIV], 2);
    cr_expect_str_eq(p.fn_name, "triton");
}
