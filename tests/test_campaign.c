/* Campaign building blocks: the mutation engine (every operator on a sample kernel,
 * locations, diffs, the skip rules, determinism) and the baseline rules (each rule's
 * edge cases as the projects define them), on small hand-checked inputs. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "campaign/checks.h"
#include "campaign/mutate.h"
#include "numoracle/bundle.h" /* nmo_tol_default */
#include "harness.h" /* NMO_OPS */

static const char sample[] =
    "#include \"cand_util.h\"\n"                                              /* 1 */
    "typedef struct { int n; } cfg_t;\n"                                       /* 2 */
    "static float kern(const float *x, const float *w, float *y, int64_t M, int64_t N, const cfg_t *c) {\n" /* 3 */
    "    const float eps = 1e-6f;\n"                                           /* 4 */
    "    float *tmp = (float *)malloc(4);\n"                                   /* 5 */
    "    if (!tmp) return nmo_err_set(0, 1, \"x\");\n"                         /* 6 */
    "    for (int64_t i = 0; i < M; i++) {\n"                                  /* 7 */
    "        const float *xr = x + i * N;\n"                                   /* 8 */
    "        float acc = 0.0f;\n"                                              /* 9 */
    "        for (int64_t j = 0; j < N; j++) acc = fmaf(xr[j], xr[j], acc);\n" /* 10 */
    "        float m = xr[0];\n"                                               /* 11 */
    "        for (int o = 16; o >= 1; o >>= 1) acc += m;\n"                    /* 12 */
    "        float r = 1.0f / sqrtf(acc / N + eps);\n"                         /* 13 */
    "        for (int64_t j = 0; j < N; j++) y[i * N + j] = (xr[j] - m) * r * w[j];\n" /* 14 */
    "        nmo_cu_store(y, y, nmo_cu_plan_store(c));\n"                      /* 15 */
    "    }\n"
    "    free(tmp);\n"
    "    return 0.0f;\n"
    "}\n";

static nmo_mutation *gen(nmo_src *s, int *n)
{
    nmo_err err;
    cr_assert_eq(nmo_src_parse(s, "k.c", sample, strlen(sample), &err), NMO_OK);
    nmo_mutation *m;
    cr_assert_eq(nmo_mutate(&m, n, s, nmo_mut_profile_get("c"), NULL, &err), NMO_OK);
    return m;
}

static int find(const nmo_mutation *m, int n, nmo_mop op, int line, const char *desc_part)
{
    for (int i = 0; i < n; i++)
        if (m[i].mop == op && m[i].line == line && strstr(m[i].desc, desc_part)) return i;
    return -1;
}

Test(mutate, tokenizer_functions_and_types)
{
    nmo_src s;
    int n;
    nmo_mutation *m = gen(&s, &n);
    cr_assert_eq(s.nfn, 1);
    cr_assert_str_eq(s.fn[0].name, "kern");
    cr_assert_eq(s.fn[0].line_begin, 3);
    int found = 0;
    for (int i = 0; i < s.ntypes; i++) found |= strcmp(s.types[i], "cfg_t") == 0;
    cr_assert(found, "typedef name collected");
    nmo_mutations_free(m, n);
    nmo_src_free(&s);
}

Test(mutate, every_operator_fires_where_expected)
{
    nmo_src s;
    int n;
    nmo_mutation *m = gen(&s, &n);
    cr_assert_geq(find(m, n, NMO_MOP_AOR, 13, "'/' -> '*'"), 0);
    cr_assert_geq(find(m, n, NMO_MOP_LB, 7, "'<' -> '<='"), 0);
    cr_assert_geq(find(m, n, NMO_MOP_LB, 10, "(N) - 1"), 0);
    cr_assert_geq(find(m, n, NMO_MOP_ROR, 12, "'>=' -> '>'") < 0 ? find(m, n, NMO_MOP_LB, 12, "'>=' -> '>'") : 0, 0);
    cr_assert_geq(find(m, n, NMO_MOP_CP, 4, "named constant eps"), 0, "eps perturbed as a named constant");
    cr_assert_geq(find(m, n, NMO_MOP_CP, 9, "0.0f -> 1.0f"), 0);
    cr_assert_geq(find(m, n, NMO_MOP_CP, 13, "1.0f -> 0.5f"), 0);
    cr_assert_geq(find(m, n, NMO_MOP_RWC, 12, "16 -> 8"), 0, "reduction width halved");
    cr_assert_geq(find(m, n, NMO_MOP_ACC, 10, "bf16"), 0, "fmaf accumulation narrowed");
    cr_assert_geq(find(m, n, NMO_MOP_ACC, 12, "fp16"), 0, "compound accumulation narrowed");
    cr_assert_geq(find(m, n, NMO_MOP_RND, 15, "NMO_CU_ST_RZ"), 0, "RN store -> truncation");
    cr_assert_geq(find(m, n, NMO_MOP_TERM, 13, "drop term '+ eps'"), 0, "drop eps");
    cr_assert_geq(find(m, n, NMO_MOP_TERM, 14, "drop term '- m'"), 0, "drop the max subtraction");
    cr_assert_geq(find(m, n, NMO_MOP_SDL, 10, "delete statement"), 0);
    cr_assert_geq(find(m, n, NMO_MOP_IDX, 14, "[j + 1]"), 0);
    cr_assert_geq(find(m, n, NMO_MOP_BCAST, 14, "[j] -> [i]"), 0, "broadcast index swapped");
    cr_assert_geq(find(m, n, NMO_MOP_BCAST, 8, "i * N"), 0, "row stride dropped");
    nmo_mutations_free(m, n);
    nmo_src_free(&s);
}

Test(mutate, skip_rules)
{
    nmo_src s;
    int n;
    nmo_mutation *m = gen(&s, &n);
    for (int i = 0; i < n; i++) {
        cr_assert_neq(m[i].line, 5, "malloc statement mutated: %s", m[i].desc);
        cr_assert_neq(m[i].line, 6, "error path mutated: %s", m[i].desc);
        cr_assert_neq(m[i].line, 2, "file-scope typedef mutated: %s", m[i].desc);
        /* a zero loop step only hangs */
        cr_assert(!(m[i].line == 12 && strstr(m[i].desc, "constant 1 -> 0") && m[i].col > 35), "zero step: %s", m[i].desc);
        /* pointer declarators are not products */
        cr_assert(!(m[i].mop == NMO_MOP_AOR && m[i].line == 8 && m[i].col < 22), "declarator mutated: %s", m[i].desc);
    }
    nmo_mutations_free(m, n);
    nmo_src_free(&s);
}

Test(mutate, apply_and_diff)
{
    nmo_src s;
    int n;
    nmo_mutation *m = gen(&s, &n);
    int k = find(m, n, NMO_MOP_TERM, 13, "drop term '+ eps'");
    cr_assert_geq(k, 0);
    char *t = nmo_mutation_apply(&s, &m[k]);
    cr_assert(strstr(t, "float r = 1.0f / sqrtf(acc / N );"), "applied: %s", t);
    char *d = nmo_mutation_diff(&s, &m[k], "refs/cand/k.c");
    cr_assert(strstr(d, "--- a/refs/cand/k.c\n+++ b/refs/cand/k.c\n@@ -10,7 +10,7 @@\n"), "diff header: %s", d);
    cr_assert(strstr(d, "\n-        float r = 1.0f / sqrtf(acc / N + eps);\n+        float r = 1.0f / sqrtf(acc / N );\n"),
              "diff body: %s", d);
    free(t);
    free(d);
    nmo_mutations_free(m, n);
    nmo_src_free(&s);
}

Test(mutate, deterministic_and_filtered)
{
    nmo_src s;
    int n1, n2;
    nmo_mutation *a = gen(&s, &n1);
    nmo_mutation *b;
    nmo_err err;
    cr_assert_eq(nmo_mutate(&b, &n2, &s, nmo_mut_profile_get("c"), NULL, &err), NMO_OK);
    cr_assert_eq(n1, n2);
    for (int i = 0; i < n1; i++) {
        cr_assert_eq(a[i].off, b[i].off);
        cr_assert_str_eq(a[i].repl, b[i].repl);
    }
    /* line filter: only line 13 */
    unsigned char cov[32] = {0};
    cov[13] = 1;
    int on[NMO_MOP_COUNT] = {0};
    on[NMO_MOP_AOR] = 1;
    nmo_mut_filter f = {on, NULL, 0, cov, 32};
    nmo_mutation *c;
    int n3;
    cr_assert_eq(nmo_mutate(&c, &n3, &s, nmo_mut_profile_get("c"), &f, &err), NMO_OK);
    cr_assert_gt(n3, 0);
    for (int i = 0; i < n3; i++) {
        cr_assert_eq(c[i].line, 13);
        cr_assert_eq(c[i].mop, NMO_MOP_AOR);
    }
    nmo_mutations_free(a, n1);
    nmo_mutations_free(b, n2);
    nmo_mutations_free(c, n3);
    nmo_src_free(&s);
}

Test(mutate, hip_profile_swaps_intrinsics)
{
    static const char hip[] = "__global__ void k(float *y, const float *x, int n) {\n"
                              "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                              "    float acc = 0.0f;\n"
                              "    for (int o = WARP_SIZE / 2; o > 0; o >>= 1) acc += __shfl_xor(acc, o);\n"
                              "    if (i < n) y[i] = __float2bfloat16_rn(x[i] * acc);\n"
                              "}\n";
    nmo_src s;
    nmo_err err;
    cr_assert_eq(nmo_src_parse(&s, "k.hip", hip, strlen(hip), &err), NMO_OK);
    nmo_mutation *m;
    int n;
    cr_assert_eq(nmo_mutate(&m, &n, &s, nmo_mut_profile_get("hip"), NULL, &err), NMO_OK);
    cr_assert_geq(find(m, n, NMO_MOP_RND, 5, "__float2bfloat16_rz"), 0);
    cr_assert_geq(find(m, n, NMO_MOP_ACC, 4, "bf16"), 0);
    cr_assert_geq(find(m, n, NMO_MOP_ROR, 5, "'<' -> '<='"), 0);
    nmo_mutations_free(m, n);
    nmo_src_free(&s);
}

/* ---- baselines ------------------------------------------------------------------------ */

static nmo_ck_tensor tens(nmo_fmt out, const double *ref, int64_t n)
{
    nmo_ck_tensor t;
    memset(&t, 0, sizeof t);
    t.out = out;
    t.compute = NMO_FP32;
    t.n = n;
    t.ref = ref;
    t.torch_atol = out == NMO_BF16 ? 1e-5 : 1e-5;
    t.torch_rtol = out == NMO_BF16 ? 1.6e-2 : 1.3e-6;
    t.te_atol = out == NMO_BF16 ? 1e-5 : 1e-6;
    t.te_rtol = out == NMO_BF16 ? 1e-2 : 5e-6;
    t.hipdnn_tol = 1e-2;
    t.higham_tol = 1e-3;
    return t;
}

Test(checks, torch_and_vllm_rules)
{
    double ref[2] = {1.0, INFINITY}, a[2] = {1.015, INFINITY};
    nmo_ck_tensor t = tens(NMO_BF16, ref, 2);
    cr_assert_eq(nmo_ck_judge(&t, NMO_CK_TORCH, a), 'P', "1.015 within 1e-5 + 1.6e-2");
    a[0] = 1.019;
    cr_assert_eq(nmo_ck_judge(&t, NMO_CK_TORCH, a), 'F');
    cr_assert_eq(nmo_ck_judge(&t, NMO_CK_VLLM, a), 'P', "vLLM: 0.019 <= 1e-2 + 1e-2");
    a[0] = 1.021;
    cr_assert_eq(nmo_ck_judge(&t, NMO_CK_VLLM, a), 'F');
    a[0] = 1.0, a[1] = -INFINITY;
    cr_assert_eq(nmo_ck_judge(&t, NMO_CK_TORCH, a), 'F', "infinities must match");
    a[1] = NAN;
    cr_assert_eq(nmo_ck_judge(&t, NMO_CK_TORCH, a), 'F', "NaN never close");
}

Test(checks, hipdnn_nan_inf_kind)
{
    double ref[1] = {INFINITY}, a[1] = {NAN};
    nmo_ck_tensor t = tens(NMO_BF16, ref, 1);
    cr_assert_eq(nmo_ck_judge(&t, NMO_CK_HIPDNN, a), 'P', "both non-finite passes (allClose)");
    ref[0] = 1;
    cr_assert_eq(nmo_ck_judge(&t, NMO_CK_HIPDNN, a), 'F');
}

Test(checks, transformer_engine_rule)
{
    double ref[1] = {1.0}, a[1] = {1.009};
    nmo_ck_tensor t = tens(NMO_BF16, ref, 1);
    cr_assert_eq(nmo_ck_judge(&t, NMO_CK_TE, a), 'P', "within rtol 1e-2");
    a[0] = NAN;
    cr_assert_eq(nmo_ck_judge(&t, NMO_CK_TE, a), 'P', "TE's comparison lets NaN through");
    /* a bf16 rounding tie: 1 and 1 + 2^-7 around a real value in between */
    ref[0] = 256.0;
    a[0] = 258.0; /* next bf16 above 256 */
    nmo_ck_tensor t2 = tens(NMO_BF16, ref, 1);
    t2.te_rtol = 1e-3;
    cr_assert_eq(nmo_ck_judge(&t2, NMO_CK_TE, a), 'P', "adjacent bf16 values forgiven as a rounding tie");
    a[0] = 260.0;
    cr_assert_eq(nmo_ck_judge(&t2, NMO_CK_TE, a), 'F');
}

Test(checks, gamma_and_stats)
{
    double u = 0x1p-23;
    cr_assert_float_eq(nmo_ck_gamma(10, u), 20 * u / (1 - 20 * u), 1e-20);
    double k = 1e6;
    cr_assert_float_eq(nmo_ck_gamma((uint64_t)k, u), 6 * sqrt(2 * k) * u, 1e-15);
    double ref[3] = {1, -2, 0}, a[3] = {1.5, -2, 0.25};
    nmo_ck_stats st;
    nmo_ck_stats_of(&st, a, ref, 3);
    cr_assert_float_eq(st.max_abs, 0.5, 0);
    cr_assert_float_eq(st.max_rel, 0.5, 0);
    cr_assert_float_eq(st.min_eq_tol, 0.25, 1e-16, "max(0.5/2, 0.25/1)");
    cr_assert_eq(nmo_ck_hbin(0), 0);
    for (double x = 1e-30; x < 1e30; x *= 7.3) {
        int b = nmo_ck_hbin(x);
        cr_assert_geq(nmo_ck_hbin_upper(b), x, "upper edge covers %g", x);
        cr_assert_leq(nmo_ck_hbin_upper(b), x * 1.0111, "bins of 1/64 octave: %g", x);
    }
}

/* The campaign's "hipdnn" baseline reads the library's default tolerance table (one copy,
 * oracle/tolerance.c): the same figure as nmo_tol_default for every operator, including
 * the rows the two copies used to disagree on (rms_norm, group_norm, batchnorm_inference). */
Test(checks, hipdnn_is_the_library_table)
{
    const nmo_fmt fmts[] = {NMO_FP32, NMO_FP16, NMO_BF16};
    int ncmp = 0;
    for (int i = 0; i < nmo_op_count(); i++) {
        const nmo_op *op = nmo_op_at(i);
        if (!nmo_test_op_selected(op->name)) continue;
        char shp[128];
        snprintf(shp, sizeof shp, "%s", op->test_shapes);
        *strchrnul(shp, ';') = 0;
        int nd;
        int64_t dims[8];
        nmo_err err;
        cr_assert_eq(nmo_shape_parse(&nd, dims, shp, &err), NMO_OK, "%s: %s", op->name, shp);
        for (int f = 0; f < 3; f++) {
            nmo_plan plan;
            nmo_plan_default(&plan, fmts[f]);
            nmo_case c;
            if (nmo_case_init(&c, op, &plan, nd, dims, &err) != NMO_OK) continue; /* dtype not offered */
            int64_t n = nmo_tensor_numel(&c.out[0]);
            double *ref = calloc((size_t)n, sizeof *ref);
            nmo_ck_tensor t;
            nmo_ck_setup(&t, &c, 0, ref, NULL);
            nmo_tol d;
            nmo_tol_default(&d, op, fmts[f]);
            cr_expect_eq(t.hipdnn_tol, d.atol, "%s %s: campaign %g, library %g", op->name,
                         nmo_fmt_name(fmts[f]), t.hipdnn_tol, d.atol);
            ncmp++;
            free(ref);
            nmo_case_free(&c);
        }
    }
    cr_expect_gt(ncmp, 0, "NMO_OPS selects no operator");
    if (!nmo_test_filtered()) cr_expect_geq(ncmp, 3 * 20, "only %d (operator, dtype) rows compared", ncmp);
    nmo_tol d;
    nmo_tol_default(&d, nmo_op_find("batchnorm_inference"), NMO_FP32);
    cr_expect_eq(d.atol, 2e-4, "RFC 0011: batchnorm inference fp32 = 2e-4");
}
