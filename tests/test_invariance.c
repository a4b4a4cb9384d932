/* numoracle tests: invariance judgments (numoracle/invariance.h) and the four-judgment
 * contract (numoracle/contract.h).
 *
 *  - every correct CPU candidate (bv_* excepted) is bitwise invariant across every
 *    composition of the default contract, forward and gradient, fp32 and bf16;
 *  - the bv_* candidates are accurate (nmo_check PASS) and NOT invariant in fp32, and a
 *    mutant is inaccurate and invariant: the two judgments are independent;
 *  - every composition can fail: sizes/chunks (bv_*), reverse/rotate/pad (stochastic
 *    rounding, whose store depends on the element's index), stride (a test kernel that
 *    ignores strides), repeat (a test kernel whose dw order changes per launch, as
 *    atomics do);
 *  - batch-summed outputs are judged only across order-keeping compositions;
 *  - the contract loader rejects every malformed field, naming it; provenance that
 *    disagrees with the profile is REJECTED. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include <math.h>
#include "numoracle/numoracle.h"
#include "harness.h" /* NMO_OPS */

static const char *all_cfgs[] = {"sizes", "chunks:3", "reverse", "rotate:3", "pad:2", "stride:5", "repeat"};
#define NCFG ((int)(sizeof all_cfgs / sizeof all_cfgs[0]))

static void parse_all(nmo_inv_config *cfg)
{
    for (int i = 0; i < NCFG; i++) cr_assert_eq(nmo_inv_config_parse(&cfg[i], all_cfgs[i], NULL), NMO_OK);
}

static char *src_path(const char *rel)
{
    const char *root = getenv("NMO_SRC");
    cr_assert(root, "NMO_SRC not set");
    char *p = malloc(strlen(root) + strlen(rel) + 2);
    sprintf(p, "%s/%s", root, rel);
    return p;
}

static nmo_contract *load_default(void)
{
    char *p = src_path("contracts/default.json");
    nmo_contract *ct;
    nmo_err err = {{0}};
    cr_assert_eq(nmo_contract_load(&ct, p, &err), NMO_OK, "%s", err.msg);
    free(p);
    return ct;
}

/* Build the case a contract operator's forward (grad 0) or gradient (grad 1) cells use. */
static void contract_case(nmo_case *c, const nmo_contract_op *co, int grad, nmo_fmt dt, const char *plan_text,
                          uint64_t seed)
{
    nmo_plan plan;
    nmo_plan_default(&plan, dt);
    nmo_err err = {{0}};
    const nmo_op *op = grad ? co->grad : co->op;
    if (plan_text) cr_assert_eq(nmo_plan_parse(&plan, plan_text, &err), NMO_OK, "%s", err.msg);
    cr_assert_eq(nmo_case_init_params(c, op, &plan, grad ? co->gnshape : co->nshape, grad ? co->gshape : co->shape,
                                      grad ? co->gparam : co->param, grad ? co->gpset : co->pset, &err),
                 NMO_OK, "%s: %s", op->name, err.msg);
    nmo_case_fill(c, NMO_FAM_GAUSSIAN, seed);
}

/* Judge cand on c across every composition (summed outputs across repeat and stride). */
static void judge_all(nmo_inv_report *r, const nmo_case *c, nmo_inv_run_fn run, void *ctx)
{
    nmo_inv_config cfg[NCFG], sum[2];
    parse_all(cfg);
    nmo_inv_config_parse(&sum[0], "repeat", NULL);
    nmo_inv_config_parse(&sum[1], "stride:5", NULL);
    nmo_inv_layout lay;
    nmo_err err = {{0}};
    cr_assert_eq(nmo_inv_layout_find(&lay, c, &err), NMO_OK, "%s", err.msg);
    cr_assert_eq(nmo_inv_judge(r, c, cfg, lay.n_row_out ? NCFG : 0, sum, lay.n_sum_out ? 2 : 0, run, ctx,
                               NMO_FAM_GAUSSIAN, 77, &err),
                 NMO_OK, "%s: %s", c->op->name, err.msg);
}

static int accurate(const nmo_case *c, const nmo_cand *cd)
{
    nmo_tensor out[NMO_MAX_TENSORS];
    nmo_err err = {{0}};
    cr_assert_eq(nmo_case_alloc_outputs(c, out, 0, &err), NMO_OK, "%s", err.msg);
    cr_assert_eq(nmo_inv_run_cand((void *)cd, c, out, &err), NMO_OK, "%s", err.msg);
    nmo_report rep;
    cr_assert_eq(nmo_check(&rep, c, out, NULL, &err), NMO_OK, "%s", err.msg);
    int pass = rep.verdict == NMO_PASS;
    nmo_report_free(&rep);
    for (int k = 0; k < c->n_out; k++) nmo_tensor_free(&out[k]);
    return pass;
}

/* ---- configurations and layouts ----------------------------------------------------------- */

Test(inv_config, parse_and_name)
{
    nmo_inv_config c;
    char nb[32];
    for (int i = 0; i < NCFG; i++) {
        cr_assert_eq(nmo_inv_config_parse(&c, all_cfgs[i], NULL), NMO_OK, "%s", all_cfgs[i]);
        cr_expect_str_eq(nmo_inv_config_name(&c, nb, sizeof nb), all_cfgs[i]);
    }
    static const char *bad[] = {"chunks", "chunks:0", "chunks:x", "pad:4097", "reverse:1", "shuffle", "", "stride:"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        nmo_err err = {{0}};
        cr_expect_eq(nmo_inv_config_parse(&c, bad[i], &err), NMO_ERR_PARSE, "'%s' accepted", bad[i]);
        cr_expect(strstr(err.msg, bad[i]) != NULL, "'%s': message does not name it: %s", bad[i], err.msg);
    }
    nmo_inv_config_parse(&c, "repeat", NULL);
    cr_expect(nmo_inv_config_keeps_order(&c));
    nmo_inv_config_parse(&c, "stride:2", NULL);
    cr_expect(nmo_inv_config_keeps_order(&c));
    nmo_inv_config_parse(&c, "pad:1", NULL);
    cr_expect(!nmo_inv_config_keeps_order(&c));
}

Test(inv_layout, roles_from_two_batch_sizes)
{
    nmo_contract *ct = load_default();
    nmo_case c;
    nmo_inv_layout lay;
    /* rms_norm_bwd: dy, x, rstd per row, w shared; dx per row, dw summed */
    contract_case(&c, nmo_contract_op_at(ct, nmo_contract_op_find(ct, "rms_norm")), 1, NMO_FP32, NULL, 0);
    cr_assert_eq(nmo_inv_layout_find(&lay, &c, NULL), NMO_OK);
    cr_expect_eq(lay.in_role[0], NMO_INV_ROW);
    cr_expect_eq(lay.in_role[1], NMO_INV_ROW);
    cr_expect_eq(lay.in_role[2], NMO_INV_SHARED);
    cr_expect_eq(lay.in_role[3], NMO_INV_ROW);
    cr_expect_eq(lay.out_role[0], NMO_INV_ROW);
    cr_expect_eq(lay.out_role[1], NMO_INV_SUMMED);
    nmo_case_free(&c);
    /* matmul_bwd: dA per row, dB summed over the rows of A */
    contract_case(&c, nmo_contract_op_at(ct, nmo_contract_op_find(ct, "matmul")), 1, NMO_FP32, NULL, 0);
    cr_assert_eq(nmo_inv_layout_find(&lay, &c, NULL), NMO_OK);
    cr_expect_eq(lay.out_role[0], NMO_INV_ROW);
    cr_expect_eq(lay.out_role[1], NMO_INV_SUMMED);
    cr_expect_eq(lay.in_role[1], NMO_INV_SHARED);
    nmo_case_free(&c);
    /* jsd: one loss for the whole batch */
    contract_case(&c, nmo_contract_op_at(ct, nmo_contract_op_find(ct, "jsd")), 0, NMO_FP32, NULL, 0);
    cr_assert_eq(nmo_inv_layout_find(&lay, &c, NULL), NMO_OK);
    cr_expect_eq(lay.n_row_out, 0);
    cr_expect_eq(lay.n_sum_out, 1);
    nmo_case_free(&c);
    nmo_contract_free(ct);
}

Test(inv_judge, summed_outputs_only_across_order_keeping_compositions)
{
    nmo_contract *ct = load_default();
    nmo_case c;
    contract_case(&c, nmo_contract_op_at(ct, nmo_contract_op_find(ct, "rms_norm")), 1, NMO_FP32, NULL, 0);
    nmo_inv_config row, sum;
    nmo_inv_config_parse(&row, "reverse", NULL);
    nmo_inv_config_parse(&sum, "reverse", NULL);
    nmo_inv_report r;
    nmo_err err = {{0}};
    const nmo_cand *cd = nmo_cand_find("rms_norm_bwd", NULL);
    cr_expect_eq(nmo_inv_judge(&r, &c, &row, 1, &sum, 1, nmo_inv_run_cand, (void *)cd, 0, 1, &err), NMO_ERR_USAGE);
    cr_expect(strstr(err.msg, "reverse") && strstr(err.msg, "batch-summed"), "%s", err.msg);
    nmo_case_free(&c);
    /* per-row compositions of an operator without per-row outputs */
    contract_case(&c, nmo_contract_op_at(ct, nmo_contract_op_find(ct, "jsd")), 0, NMO_FP32, NULL, 0);
    cr_expect_eq(nmo_inv_judge(&r, &c, &row, 1, NULL, 0, nmo_inv_run_cand, (void *)nmo_cand_find("jsd", NULL), 0, 1,
                               &err),
                 NMO_ERR_USAGE);
    cr_expect(strstr(err.msg, "no per-row output"), "%s", err.msg);
    nmo_case_free(&c);
    nmo_contract_free(ct);
}

/* ---- correct candidates are invariant; bv_* are not, and stay accurate ---------------------- */

Test(inv_cand, correct_candidates_invariant_bv_not, .timeout = 600)
{
    nmo_contract *ct = load_default();
    static const nmo_fmt dts[] = {NMO_FP32, NMO_BF16};
    int n_judged = 0, n_bv = 0;
    for (int o = 0; o < nmo_contract_op_count(ct); o++) {
        const nmo_contract_op *co = nmo_contract_op_at(ct, o);
        for (int g = 0; g < 2; g++) {
            const nmo_op *op = g ? co->grad : co->op;
            if (!op || !nmo_test_op_selected(op->name)) continue;
            for (int ci = 0; ci < nmo_cand_count(); ci++) {
                const nmo_cand *cd = nmo_cand_at(ci);
                if (strcmp(cd->op, op->name) != 0 || !cd->correct) continue;
                int bv = strncmp(cd->name, "bv_", 3) == 0;
                for (int d = 0; d < 2; d++) {
                    if (!(co->dtypes >> dts[d] & 1u)) continue;
                    nmo_case c;
                    contract_case(&c, co, g, dts[d], NULL, 5);
                    nmo_inv_report r;
                    judge_all(&r, &c, nmo_inv_run_cand, (void *)cd);
                    if (!bv) {
                        for (int i = 0; i < r.n; i++) {
                            char line[512];
                            nmo_inv_result_text(line, sizeof line, &r.res[i], op);
                            cr_expect(r.res[i].identical && !r.res[i].skipped, "%s/%s %s: %s", op->name, cd->name,
                                      nmo_fmt_name(dts[d]), line);
                        }
                        n_judged++;
                    } else if (dts[d] == NMO_FP32) {
                        /* batch-variant and accurate: the judgments are independent */
                        cr_expect(!r.invariant, "%s/%s fp32: judged invariant", op->name, cd->name);
                        int sizes_differ = 0;
                        for (int i = 0; i < r.n; i++)
                            if (r.res[i].cfg.kind == NMO_INV_SIZES) sizes_differ = !r.res[i].identical;
                        cr_expect(sizes_differ, "%s/%s: batch sizes do not change a row", op->name, cd->name);
                        cr_expect(accurate(&c, cd), "%s/%s fp32: not accurate", op->name, cd->name);
                        n_bv++;
                    }
                    nmo_case_free(&c);
                }
            }
        }
    }
    cr_log_info("%d (candidate, dtype) pairs invariant; %d batch-variant ones caught", n_judged, n_bv);
    if (nmo_test_filtered()) {
        cr_expect_gt(n_judged + n_bv, 0, "NMO_OPS selects no operator of the contract with a correct candidate");
    } else {
        cr_expect_geq(n_bv, 4, "bv_ negative controls missing (%d)", n_bv);
        cr_expect_gt(n_judged, 100);
    }
    nmo_contract_free(ct);
}

/* A mutant: inaccurate, yet invariant (a bf16 accumulator is the same for every batch). */
Test(inv_cand, mutant_inaccurate_but_invariant)
{
    nmo_contract *ct = load_default();
    nmo_case c;
    contract_case(&c, nmo_contract_op_at(ct, nmo_contract_op_find(ct, "rms_norm")), 0, NMO_BF16, NULL, 0);
    const nmo_cand *cd = nmo_cand_find("rms_norm", "mut_acc_bf16");
    nmo_inv_report r;
    judge_all(&r, &c, nmo_inv_run_cand, (void *)cd);
    cr_expect(r.invariant);
    cr_expect(!accurate(&c, cd));
    nmo_case_free(&c);
    nmo_contract_free(ct);
}

/* Stochastic rounding chooses RD or RU from the element's index: the position of a row
 * changes its bits (reverse, rotate, pad, chunks; not sizes, whose prefixes keep every
 * row where it was) while the output stays in R. */
Test(inv_cand, stochastic_rounding_position_dependent)
{
    nmo_contract *ct = load_default();
    nmo_case c;
    contract_case(&c, nmo_contract_op_at(ct, nmo_contract_op_find(ct, "rms_norm")), 0, NMO_BF16, "round=sr", 0);
    const nmo_cand *cd = nmo_cand_find("rms_norm", NULL);
    nmo_inv_report r;
    judge_all(&r, &c, nmo_inv_run_cand, (void *)cd);
    for (int i = 0; i < r.n; i++) {
        nmo_inv_kind k = r.res[i].cfg.kind;
        /* sizes are prefixes: every row keeps its position there */
        int moves = k == NMO_INV_REVERSE || k == NMO_INV_ROTATE || k == NMO_INV_PAD || k == NMO_INV_CHUNKS;
        char nb[32];
        cr_expect_eq(!r.res[i].identical, moves, "%s: identical=%d", nmo_inv_config_name(&r.res[i].cfg, nb, 32),
                     r.res[i].identical);
    }
    cr_expect(accurate(&c, cd));
    nmo_case_free(&c);
    nmo_contract_free(ct);
}

/* Test kernels for the compositions no catalog candidate breaks. */

/* rms_norm that reads x as if packed (ignores the row stride). */
static nmo_status packed_only_rms(void *ctx, const nmo_case *c, nmo_tensor *out, nmo_err *err)
{
    (void)ctx;
    nmo_tensor x = c->in[0];
    int64_t N = x.dims[x.ndims - 1];
    for (int d = x.ndims - 1, s = 1; d >= 0; d--) x.strides[d] = s, s *= (int)x.dims[d];
    (void)N;
    nmo_case c2 = *c;
    c2.in[0] = x;
    return nmo_inv_run_cand((void *)nmo_cand_find("rms_norm", NULL), &c2, out, err);
}

/* rms_norm_bwd whose dw sums the rows in an order that alternates per launch (the
 * arrival order of atomicAdd); dx is the default kernel's. */
static atomic_uint launches;
static nmo_status atomic_dw_rms_bwd(void *ctx, const nmo_case *c, nmo_tensor *out, nmo_err *err)
{
    (void)ctx;
    NMO_RETURN_IF_ERR(nmo_inv_run_cand((void *)nmo_cand_find("rms_norm_bwd", NULL), c, out, err));
    unsigned l = atomic_fetch_add(&launches, 1);
    const nmo_tensor *dy = &c->in[0], *x = &c->in[1], *rs = &c->in[3];
    int64_t N = x->dims[x->ndims - 1], M = nmo_tensor_numel(x) / N;
    for (int64_t j = 0; j < N; j++) {
        float acc = 0.0f;
        for (int64_t q = 0; q < M; q++) {
            int64_t i = l & 1u ? M - 1 - q : q;
            acc = fmaf((float)nmo_tensor_get(dy, i * N + j),
                       (float)nmo_tensor_get(x, i * N + j) * (float)nmo_tensor_get(rs, i), acc);
        }
        nmo_tensor_set(&out[1], j, acc);
    }
    return NMO_OK;
}

Test(inv_cand, stride_and_repeat_can_fail)
{
    nmo_contract *ct = load_default();
    const nmo_contract_op *co = nmo_contract_op_at(ct, nmo_contract_op_find(ct, "rms_norm"));
    nmo_case c;
    nmo_inv_report r;
    contract_case(&c, co, 0, NMO_FP32, NULL, 0);
    judge_all(&r, &c, packed_only_rms, NULL);
    for (int i = 0; i < r.n; i++)
        cr_expect_eq(!r.res[i].identical, r.res[i].cfg.kind == NMO_INV_STRIDE, "config %d", i);
    nmo_case_free(&c);

    contract_case(&c, co, 1, NMO_FP32, NULL, 0);
    judge_all(&r, &c, atomic_dw_rms_bwd, NULL);
    for (int i = 0; i < r.n; i++)
        if (!r.res[i].summed) cr_expect(r.res[i].identical, "dx config %d", i); /* per-row dx stays invariant */
    /* the summed dw differs between two launches in a row (each composition judged alone) */
    static const char *sums[] = {"repeat", "stride:5"};
    for (int i = 0; i < 2; i++) {
        nmo_inv_config sc;
        nmo_inv_config_parse(&sc, sums[i], NULL);
        nmo_err err = {{0}};
        cr_assert_eq(nmo_inv_judge(&r, &c, NULL, 0, &sc, 1, atomic_dw_rms_bwd, NULL, 0, 1, &err), NMO_OK, "%s", err.msg);
        cr_expect(!r.res[0].identical, "%s: dw identical", sums[i]);
        cr_expect_eq(r.res[0].k, 1);
        cr_expect_eq(r.res[0].row, -1);
    }
    nmo_case_free(&c);
    nmo_contract_free(ct);
}

/* ---- the contract --------------------------------------------------------------------------- */

static char *default_text(void)
{
    char *p = src_path("contracts/default.json");
    FILE *f = fopen(p, "rb");
    cr_assert(f, "%s", p);
    free(p);
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return buf;
}

typedef void (*mutate_fn)(cJSON *root);
static void m_top_key(cJSON *r) { cJSON_AddNumberToObject(r, "verison", 1); }
static void m_version(cJSON *r) { cJSON_ReplaceItemInObject(r, "version", cJSON_CreateNumber(2)); }
static void m_format(cJSON *r) { cJSON_ReplaceItemInObject(r, "format", cJSON_CreateString("tolerances")); }
static void m_unknown_op(cJSON *r)
{
    cJSON_AddItemToObject(cJSON_GetObjectItem(r, "operators"), "rmsnorm",
                          cJSON_Duplicate(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "operators"), "rms_norm"), 1));
}
static cJSON *rule(cJSON *r, int i) { return cJSON_GetArrayItem(cJSON_GetObjectItem(r, "rules"), i); }
static void m_judgment(cJSON *r) { cJSON_AddItemToObject(rule(r, 0), "backward_accuracy", cJSON_CreateObject()); }
static void m_dtype(cJSON *r)
{
    cJSON *a = cJSON_CreateArray();
    cJSON_AddItemToArray(a, cJSON_CreateString("bf32"));
    cJSON_ReplaceItemInObject(rule(r, 0), "dtypes", a);
}
static void m_config(cJSON *r)
{
    cJSON *inv = cJSON_GetObjectItem(rule(r, 0), "forward_invariance");
    cJSON_AddItemToArray(cJSON_GetObjectItem(inv, "configurations"), cJSON_CreateString("shuffle"));
}
static void m_summed_reverse(cJSON *r)
{
    cJSON *inv = cJSON_GetObjectItem(rule(r, 1), "gradient_invariance");
    cJSON_AddItemToArray(cJSON_GetObjectItem(inv, "batch_summed"), cJSON_CreateString("reverse"));
}
static void m_coverage(cJSON *r) { cJSON_DeleteItemFromObject(rule(r, 0), "forward_accuracy"); }
static void m_grad_na(cJSON *r)
{
    cJSON *op = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "operators"), "softmax");
    cJSON *na = cJSON_CreateObject();
    cJSON_AddStringToObject(na, "na", "none");
    cJSON_ReplaceItemInObject(op, "gradient", na);
}
static void m_profile(cJSON *r)
{
    cJSON *a = cJSON_CreateArray();
    cJSON_AddItemToArray(a, cJSON_CreateString("gpu"));
    cJSON_ReplaceItemInObject(rule(r, 0), "profiles", a);
}
static void m_plan(cJSON *r)
{
    /* softmax rejects inter: a plan no operator of the rule can honour */
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(rule(r, 0), "forward_accuracy"), "plan",
                              cJSON_CreateString("inter=fp16"));
}
static cJSON *profile_of(cJSON *r, const char *name)
{
    return cJSON_GetObjectItem(cJSON_GetObjectItem(r, "profiles"), name);
}
static void m_device(cJSON *r) { cJSON_ReplaceItemInObject(profile_of(r, "python-host"), "device", cJSON_CreateString("tpu")); }
static void m_backend(cJSON *r) { cJSON_ReplaceItemInObject(profile_of(r, "torch-cuda"), "backend", cJSON_CreateString("gpu")); }
static void m_shape_text(cJSON *r)
{
    cJSON_AddStringToObject(cJSON_GetObjectItem(rule(r, 0), "forward_invariance"), "shape", "8x");
}
static void m_shape_op(cJSON *r)
{
    /* rule 0 covers every operator: conv2d cannot take a 2-D shape */
    cJSON_AddStringToObject(cJSON_GetObjectItem(rule(r, 0), "forward_invariance"), "shape", "8x64");
}
static void m_required(cJSON *r) { cJSON_DeleteItemFromObject(cJSON_GetObjectItem(rule(r, 0), "forward_accuracy"), "required"); }
static void m_param(cJSON *r)
{
    cJSON *p = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "operators"), "cross_entropy"), "params");
    cJSON_AddNumberToObject(p, "reductoin", 0);
}

static cJSON *ops_of(cJSON *r) { return cJSON_GetObjectItem(r, "operators"); }
static void m_ro_batch(cJSON *r) { cJSON_ReplaceItemInObject(cJSON_GetObjectItem(r, "registry_operators"), "batch", cJSON_CreateNumber(0)); }
static void m_ro_key(cJSON *r) { cJSON_AddNumberToObject(cJSON_GetObjectItem(r, "registry_operators"), "rows", 8); }
static void m_ro_class(cJSON *r)
{
    /* dyt's descriptor says elementwise: a listed entry must agree */
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(ops_of(r), "dyt"), "class", cJSON_CreateString("norm"));
}
static void m_ro_noclass(cJSON *r)
{
    /* no class elementwise and no operator of it listed: the registry's ones cannot be derived */
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(r, "classes"), "elementwise");
    static const char *const ew[] = {"silu", "gelu", "swiglu", "geglu", "add", "mul", "dyt"};
    for (int i = 0; i < 7; i++) cJSON_DeleteItemFromObject(ops_of(r), ew[i]);
}
static void m_ro_type(cJSON *r) { cJSON_ReplaceItemInObject(r, "registry_operators", cJSON_CreateNumber(8)); }

static nmo_contract *parse_mutated(void (*f)(cJSON *, const char *), const char *arg)
{
    cJSON *root = cJSON_Parse(default_text());
    cr_assert(root);
    f(root, arg);
    char *t = cJSON_Print(root);
    cJSON_Delete(root);
    nmo_contract *ct = NULL;
    nmo_err err = {{0}};
    cr_assert_eq(nmo_contract_parse(&ct, t, "x.json", &err), NMO_OK, "%s", err.msg);
    free(t);
    return ct;
}
static void drop_op(cJSON *r, const char *op) { cJSON_DeleteItemFromObject(ops_of(r), op); }
static void drop_op_and_key(cJSON *r, const char *op)
{
    drop_op(r, op);
    cJSON_DeleteItemFromObject(r, "registry_operators");
}

/* An operator with nmo_op.contract_class and no entry gets the entry a person would write
 * (dyt: no backward, N/A; swiglu: swiglu_bwd), every cell resolving as the written one. */
Test(contract, registry_operators_derived)
{
    nmo_contract *ex = load_default();
    static const char *const ops[] = {"dyt", "swiglu"};
    for (int k = 0; k < 2; k++) {
        nmo_contract *dv = parse_mutated(drop_op, ops[k]);
        int ie = nmo_contract_op_find(ex, ops[k]), id = nmo_contract_op_find(dv, ops[k]);
        cr_assert_geq(ie, 0);
        cr_assert_geq(id, 0, "%s not derived", ops[k]);
        cr_expect_eq(nmo_contract_op_count(dv), nmo_contract_op_count(ex));
        const nmo_contract_op *a = nmo_contract_op_at(ex, ie), *b = nmo_contract_op_at(dv, id);
        cr_expect_str_eq(b->cls, a->cls);
        cr_expect_eq(b->dtypes, a->dtypes);
        cr_expect_eq(b->nshape, a->nshape);
        cr_expect_arr_eq(b->shape, a->shape, sizeof a->shape, "%s shape", ops[k]);
        cr_expect_arr_eq(b->pset, a->pset, sizeof a->pset);
        cr_expect_eq(b->grad, a->grad, "%s gradient", ops[k]);
        cr_expect_str_eq(b->grad_na, a->grad_na);
        cr_expect_eq(b->gnshape, a->gnshape);
        cr_expect_arr_eq(b->gshape, a->gshape, sizeof a->gshape, "%s gradient shape", ops[k]);
        cr_expect_eq(b->gabsent, a->gabsent);
        int cells = 0;
        for (int f = 0; f < NMO_FMT_COUNT; f++) {
            if (!(a->dtypes >> f & 1u)) continue;
            for (int p = 0; p < nmo_contract_profile_count(ex); p++)
                for (int j = 0; j < NMO_J_COUNT; j++) {
                    nmo_jspec x, y;
                    nmo_err err = {{0}};
                    cr_assert_eq(nmo_contract_resolve(&x, ex, ie, (nmo_fmt)f, p, (nmo_judgment)j, &err), NMO_OK);
                    cr_assert_eq(nmo_contract_resolve(&y, dv, id, (nmo_fmt)f, p, (nmo_judgment)j, &err), NMO_OK);
                    cr_expect(x.na == y.na && x.required == y.required && strcmp(x.where, y.where) == 0 &&
                                  strcmp(x.plan, y.plan) == 0 && strcmp(x.reason, y.reason) == 0 &&
                                  x.nseeds == y.nseeds && x.ncfg == y.ncfg && x.nsum == y.nsum,
                              "%s %s profile %d judgment %d differs", ops[k], nmo_fmt_name((nmo_fmt)f), p, j);
                    cells++;
                }
        }
        cr_expect_gt(cells, 0);
        nmo_contract_free(dv);
        /* without the key nothing is derived */
        dv = parse_mutated(drop_op_and_key, ops[k]);
        cr_expect_lt(nmo_contract_op_find(dv, ops[k]), 0, "%s derived without registry_operators", ops[k]);
        cJSON *root = cJSON_Parse(default_text());
        int listed = cJSON_GetArraySize(ops_of(root));
        cJSON_Delete(root);
        cr_expect_eq(nmo_contract_op_count(dv), listed - 1, "operators derived without registry_operators");
        nmo_contract_free(dv);
    }
    nmo_contract_free(ex);
}

Test(contract, default_loads)
{
    nmo_contract *ct = load_default();
    cr_expect_str_eq(nmo_contract_name(ct), "default");
    cr_expect_eq(nmo_contract_version(ct), NMO_CONTRACT_VERSION);
    /* every forward operator of the catalog is in it */
    int fwd = 0;
    for (int i = 0; i < nmo_op_count(); i++) {
        const char *n = nmo_op_at(i)->name;
        size_t l = strlen(n);
        if (l > 4 && strcmp(n + l - 4, "_bwd") == 0) continue;
        fwd++;
        cr_expect_geq(nmo_contract_op_find(ct, n), 0, "%s not in the default contract", n);
    }
    cr_expect_eq(nmo_contract_op_count(ct), fwd);
    nmo_contract_free(ct);
}

Test(contract, strict_fields_named)
{
    static const struct {
        mutate_fn f;
        const char *needle;
    } cases[] = {
        {m_top_key, "verison: unknown key"},
        {m_version, "version: 2 is not supported"},
        {m_format, "format: 'tolerances'"},
        {m_unknown_op, "operators.rmsnorm: unknown operator"},
        {m_judgment, "rules[0].backward_accuracy: unknown key"},
        {m_dtype, "rules[0].dtypes[0]: unknown dtype 'bf32'"},
        {m_config, "rules[0].forward_invariance.configurations[7]: unknown invariance configuration 'shuffle'"},
        {m_summed_reverse, "rules[1].gradient_invariance.batch_summed[2]: reverse changes the rows"},
        {m_coverage, "forward_accuracy is stated by no rule"},
        {m_grad_na, "operators.softmax.gradient: the catalog has softmax_bwd"},
        {m_profile, "rules[0].profiles[0]: unknown profile 'gpu'"},
        {m_plan, "rules[0].forward_accuracy.plan (for"},
        {m_required, "rules[0].forward_accuracy.required: missing"},
        {m_param, "operators.cross_entropy.params.reductoin: unknown param"},
        {m_device, "profiles.python-host.device: unknown device kind 'tpu' (known: cpu, cuda)"},
        {m_backend, "profiles.torch-cuda.backend: unknown backend 'gpu' (known: cpu, hip, plugin, python)"},
        {m_shape_text, "rules[0].forward_invariance.shape: "},
        {m_shape_op, "rules[0].forward_invariance.shape (for "},
        {m_ro_batch, "registry_operators.batch: expected an integer in 1..4096"},
        {m_ro_key, "registry_operators.rows: unknown key"},
        {m_ro_class, "operators.dyt.class: 'norm', but the registry's nmo_op.contract_class of dyt is 'elementwise'"},
        {m_ro_type, "registry_operators: expected an object"},
        {m_ro_noclass, "registry_operators: operator swiglu: its nmo_op.contract_class 'elementwise' is not in classes"},
    };
    const char *text = default_text();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cJSON *root = cJSON_Parse(text);
        cr_assert(root);
        cases[i].f(root);
        char *t = cJSON_Print(root);
        cJSON_Delete(root);
        nmo_contract *ct = NULL;
        nmo_err err = {{0}};
        cr_expect_eq(nmo_contract_parse(&ct, t, "x.json", &err), NMO_ERR_PARSE, "case %zu accepted", i);
        cr_expect(strstr(err.msg, cases[i].needle) != NULL, "case %zu: '%s' not in: %s", i, cases[i].needle, err.msg);
        cr_expect(strncmp(err.msg, "x.json: ", 8) == 0, "case %zu: file not named: %s", i, err.msg);
        cr_expect_null(ct);
        free(t);
    }
}

/* Provenance: another backend, or a setting the profile forbids, is REJECTED unjudged. */
Test(contract, provenance_rejected_before_pass)
{
    nmo_contract *ct = load_default();
    int o = nmo_contract_op_find(ct, "rms_norm"), p = nmo_contract_profile_find(ct, "cpu-emulated");
    const nmo_cand *cd = nmo_cand_find("rms_norm", NULL);
    nmo_judge_cand jc = {"cpu:block256", "cpu", nmo_inv_run_cand, (void *)cd, 0, 0, 1, NULL, NULL, NULL};
    nmo_cell cell;
    cr_assert_eq(nmo_judge_cell(&cell, ct, o, NMO_BF16, p, NMO_J_FWD_ACC, &jc, NULL), NMO_OK);
    cr_expect_eq(cell.verdict, NMO_CELL_PASS);
    jc.backend = "plugin"; /* a fallback to another backend */
    cr_assert_eq(nmo_judge_cell(&cell, ct, o, NMO_BF16, p, NMO_J_FWD_ACC, &jc, NULL), NMO_OK);
    cr_expect_eq(cell.verdict, NMO_CELL_REJECTED, "%s", cell.detail);
    jc.backend = "cpu";
    jc.tf32 = 1;
    cr_assert_eq(nmo_judge_cell(&cell, ct, o, NMO_BF16, p, NMO_J_FWD_INV, &jc, NULL), NMO_OK);
    cr_expect_eq(cell.verdict, NMO_CELL_REJECTED);
    cr_expect(strstr(cell.detail, "tf32") != NULL, "%s", cell.detail);
    jc.tf32 = -1; /* not recorded */
    cr_assert_eq(nmo_judge_cell(&cell, ct, o, NMO_BF16, p, NMO_J_FWD_INV, &jc, NULL), NMO_OK);
    cr_expect_eq(cell.verdict, NMO_CELL_REJECTED);
    /* N/A cells carry the contract's reason */
    int g = nmo_contract_op_find(ct, "gelu");
    cr_assert_eq(nmo_judge_cell(&cell, ct, g, NMO_BF16, p, NMO_J_GRAD_ACC, &jc, NULL), NMO_OK);
    cr_expect_eq(cell.verdict, NMO_CELL_NA);
    cr_expect(strstr(cell.detail, "no gelu backward") != NULL, "%s", cell.detail);
    nmo_contract_free(ct);
}

/* The device rule: a profile names a device kind; "cuda" takes "cuda" and "cuda:N" only. */
Test(contract, provenance_device_kind)
{
    nmo_contract *ct = load_default();
    const nmo_contract_profile *pr = nmo_contract_profile_at(ct, nmo_contract_profile_find(ct, "torch-cuda"));
    cr_assert(pr);
    cr_expect_str_eq(pr->backend, "python");
    cr_expect_str_eq(pr->device, "cuda");
    char why[256];
    nmo_judge_prov p = {"python", "cuda:1", 0, 0, 1, NULL, NULL};
    cr_expect(nmo_judge_prov_ok(pr, &p, why, sizeof why), "%s", why);
    p.device = "cuda";
    cr_expect(nmo_judge_prov_ok(pr, &p, why, sizeof why), "%s", why);
    static const char *bad[] = {"cpu", "cudax", "cud", NULL};
    for (int i = 0; i < 4; i++) {
        p.device = bad[i];
        cr_expect(!nmo_judge_prov_ok(pr, &p, why, sizeof why), "device %s accepted", bad[i] ? bad[i] : "NULL");
        cr_expect(strstr(why, "device") != NULL, "%s", why);
    }
    p.device = "cuda:0";
    p.deterministic = 0;
    cr_expect(!nmo_judge_prov_ok(pr, &p, why, sizeof why));
    cr_expect_str_eq(why, "the run has deterministic=off; the profile requires deterministic=on");
    p.deterministic = 1;
    p.backend = "cpu";
    cr_expect(!nmo_judge_prov_ok(pr, &p, why, sizeof why));
    cr_expect_str_eq(why, "the run's backend is cpu; profile torch-cuda requires python");
    nmo_contract_free(ct);
}

/* The device-model and cuBLAS-workspace rules (a profile that states them; default.json's
 * torch-cuda does not, so a copy states them here): a prefix of the device name, one of the
 * ';'-separated workspace values exactly; unrecorded disagrees. */
Test(contract, provenance_device_name_and_workspace)
{
    nmo_contract *ct = load_default();
    nmo_contract_profile pr = *nmo_contract_profile_at(ct, nmo_contract_profile_find(ct, "torch-cuda"));
    snprintf(pr.device_name, sizeof pr.device_name, "NVIDIA H200");
    snprintf(pr.cublas_ws, sizeof pr.cublas_ws, ":4096:8;:16:8");
    char why[256];
    nmo_judge_prov p = {"python", "cuda:0", 0, 0, 1, "NVIDIA H200", ":16:8"};
    cr_expect(nmo_judge_prov_ok(&pr, &p, why, sizeof why), "%s", why);
    p.cublas_ws = ":4096:8";
    cr_expect(nmo_judge_prov_ok(&pr, &p, why, sizeof why), "%s", why);
    p.device_name = "NVIDIA H200 NVL"; /* the profile names a model prefix */
    cr_expect(nmo_judge_prov_ok(&pr, &p, why, sizeof why), "%s", why);
    static const char *bad_ws[] = {":4096:", ":16:8;", "unset", ":4096:8;:16:8", NULL};
    for (int i = 0; i < 5; i++) {
        p.cublas_ws = bad_ws[i];
        cr_expect(!nmo_judge_prov_ok(&pr, &p, why, sizeof why), "workspace %s accepted", bad_ws[i] ? bad_ws[i] : "NULL");
        cr_expect(strstr(why, "CUBLAS_WORKSPACE_CONFIG") != NULL, "%s", why);
    }
    p.cublas_ws = ":4096:8";
    static const char *bad_dev[] = {"NVIDIA H100 80GB HBM3", "NVIDIA H20", "cpu", NULL};
    for (int i = 0; i < 4; i++) {
        p.device_name = bad_dev[i];
        cr_expect(!nmo_judge_prov_ok(&pr, &p, why, sizeof why), "device %s accepted", bad_dev[i] ? bad_dev[i] : "NULL");
    }
    cr_expect_str_eq(why, "the run's device name is unrecorded; profile torch-cuda requires NVIDIA H200");
    /* a profile that states neither accepts a run that records neither */
    const nmo_contract_profile *plain = nmo_contract_profile_at(ct, nmo_contract_profile_find(ct, "torch-cuda"));
    nmo_judge_prov q = {"python", "cuda:0", 0, 0, 1, NULL, NULL};
    cr_expect(nmo_judge_prov_ok(plain, &q, why, sizeof why), "%s", why);
    nmo_contract_free(ct);
}

/* bf16/fp16 batch variance: matmul/bv_rpr_splitk_by_m rounds its split-K partials to the
 * storage format (cuBLAS's reduced-precision reduction) with a split chosen from M, so the
 * variance is 16-bit sized: under profile cpu-rpr (accuracy under inter=<dtype>) accuracy
 * PASSes and invariance FAILs in bf16 and fp16; under cpu-emulated (no 16-bit partials) the
 * CLI's record (rpr on) is REJECTED. The fp32-partial bv_splitk_by_m at the same shape is
 * caught in fp16 but not in bf16 (its variance rounds away there: why the rpr control
 * exists); logged, not asserted, as it depends on the data. */
Test(inv_cand, bv_rpr_fails_invariance_in_16_bits)
{
    nmo_contract *ct = load_default();
    int o = nmo_contract_op_find(ct, "matmul");
    int rpr = nmo_contract_profile_find(ct, "cpu-rpr"), emu = nmo_contract_profile_find(ct, "cpu-emulated");
    cr_assert(o >= 0 && rpr >= 0 && emu >= 0);
    const nmo_cand *cd = nmo_cand_find("matmul", "bv_rpr_splitk_by_m");
    cr_assert(cd && !cd->correct && cd->plan && strstr(cd->plan, "inter="));
    static const nmo_fmt dts[] = {NMO_BF16, NMO_FP16};
    for (int d = 0; d < 2; d++) {
        nmo_judge_cand jc = {"cpu:bv_rpr_splitk_by_m", "cpu", nmo_inv_run_cand, (void *)cd, 0, 1, 1, NULL, NULL, NULL};
        nmo_cell cell;
        nmo_err err = {{0}};
        cr_assert_eq(nmo_judge_cell(&cell, ct, o, dts[d], rpr, NMO_J_FWD_ACC, &jc, &err), NMO_OK, "%s", err.msg);
        cr_expect_eq(cell.verdict, NMO_CELL_PASS, "%s accuracy: %s", nmo_fmt_name(dts[d]), cell.detail);
        cr_expect(strstr(cell.spec.plan, "inter=") != NULL, "plan %s", cell.spec.plan);
        cr_assert_eq(nmo_judge_cell(&cell, ct, o, dts[d], rpr, NMO_J_FWD_INV, &jc, &err), NMO_OK, "%s", err.msg);
        cr_expect_eq(cell.verdict, NMO_CELL_FAIL, "%s invariance: %s", nmo_fmt_name(dts[d]), cell.detail);
        cr_expect(strncmp(cell.detail, "sizes: differs", 14) == 0, "%s", cell.detail);
        cr_assert_eq(nmo_judge_cell(&cell, ct, o, dts[d], emu, NMO_J_FWD_INV, &jc, &err), NMO_OK);
        cr_expect_eq(cell.verdict, NMO_CELL_REJECTED, "%s", cell.detail);
        /* the fp32-partial variant at the same shape: rounded away in 16 bits */
        const nmo_cand *b32 = nmo_cand_find("matmul", "bv_splitk_by_m");
        nmo_judge_cand j32 = {"cpu:bv_splitk_by_m", "cpu", nmo_inv_run_cand, (void *)b32, 0, 0, 1, NULL, NULL, NULL};
        cr_assert_eq(nmo_judge_cell(&cell, ct, o, dts[d], emu, NMO_J_FWD_INV, &j32, &err), NMO_OK);
        cr_log_info("bv_splitk_by_m %s at the contract's shape: %s", nmo_fmt_name(dts[d]),
                    nmo_cell_verdict_name(cell.verdict));
    }
    nmo_contract_free(ct);
}

/* A cell's own invariance shape is used: rms_norm/bv_split_rows (fp32-sized variance) is
 * caught in fp16 once the cell runs 8x8192 (65536 elements, of which some lie near an fp16
 * rounding boundary), and stays invariant-looking at the operator's 8x64. */
Test(contract, invariance_shape_per_cell, .timeout = 300)
{
    const char *text = default_text();
    cJSON *root = cJSON_Parse(text);
    cr_assert(root);
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "doc", "test");
    cJSON *ops = cJSON_AddArrayToObject(r, "operators");
    cJSON_AddItemToArray(ops, cJSON_CreateString("rms_norm"));
    cJSON *dts = cJSON_AddArrayToObject(r, "dtypes");
    cJSON_AddItemToArray(dts, cJSON_CreateString("fp16"));
    cJSON *fi = cJSON_Duplicate(cJSON_GetObjectItem(rule(root, 0), "forward_invariance"), 1);
    cJSON_AddStringToObject(fi, "shape", "8x8192");
    cJSON_AddItemToObject(r, "forward_invariance", fi);
    cJSON_AddItemToArray(cJSON_GetObjectItem(root, "rules"), r);
    char *t = cJSON_Print(root);
    cJSON_Delete(root);
    nmo_contract *big = NULL, *ct = load_default();
    nmo_err err = {{0}};
    cr_assert_eq(nmo_contract_parse(&big, t, "big.json", &err), NMO_OK, "%s", err.msg);
    free(t);
    int o = nmo_contract_op_find(ct, "rms_norm"), p = nmo_contract_profile_find(ct, "cpu-emulated");
    const nmo_cand *cd = nmo_cand_find("rms_norm", "bv_split_rows");
    cr_assert(cd);
    nmo_judge_cand jc = {"cpu:bv_split_rows", "cpu", nmo_inv_run_cand, (void *)cd, 0, 0, 1, NULL, NULL, NULL};
    nmo_cell cell;
    cr_assert_eq(nmo_judge_cell(&cell, big, o, NMO_FP16, p, NMO_J_FWD_INV, &jc, &err), NMO_OK, "%s", err.msg);
    cr_expect_eq(cell.spec.nshape, 2);
    cr_expect_eq(cell.spec.shape[1], 8192);
    cr_expect_eq(cell.verdict, NMO_CELL_FAIL, "%s", cell.detail);
    cr_expect_eq(cell.inv.batch, 8);
    cr_assert_eq(nmo_judge_cell(&cell, ct, o, NMO_FP16, p, NMO_J_FWD_INV, &jc, &err), NMO_OK, "%s", err.msg);
    cr_expect_eq(cell.verdict, NMO_CELL_PASS, "at 8x64: %s", cell.detail);
    /* a correct candidate stays invariant at the big shape */
    const nmo_cand *ok = nmo_cand_find("rms_norm", NULL);
    nmo_judge_cand jo = {"cpu", "cpu", nmo_inv_run_cand, (void *)ok, 0, 0, 1, NULL, NULL, NULL};
    cr_assert_eq(nmo_judge_cell(&cell, big, o, NMO_FP16, p, NMO_J_FWD_INV, &jo, &err), NMO_OK, "%s", err.msg);
    cr_expect_eq(cell.verdict, NMO_CELL_PASS, "%s", cell.detail);
    nmo_contract_free(big);
    nmo_contract_free(ct);
}
