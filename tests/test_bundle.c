/* Tests for golden bundles (oracle/bundle*.c, sweep.c, discover.c, tolerance.c) and the
 * CLI verbs that use them.
 *
 *  - stored-bounds judging equals recomputing (nmo_check), element for element, for every
 *    operator x fp32/bf16/fp16 x two families x every CPU candidate (mutants included);
 *    and equals the definition of the verdict on every 8-bit pattern of the four fp8
 *    formats and every 16-bit pattern of bf16/fp16 against hand-made reachable sets
 *    (NaN, +-0, +-inf, unbounded and wide sets, fnuz NaN);
 *  - graphs round-trip through JSON; hipDNN-written graphs (lower-case "float",
 *    inputs/outputs/parameters sections, no strides, no metadata) load;
 *  - template sweeps: typed and spliced placeholders, unused-value warnings;
 *  - discovery: test names, tier cascade, collisions, misspelled tiers, empty tiers;
 *  - the tolerance chain's three levels and its default table's sources;
 *  - atomic directories, and `numoracle golden` killed by SIGKILL midway (before the
 *    rename, and at random moments): no partial bundle, the previous one intact.
 * NMO_BIN (the numoracle binary) and NMO_SRC (the source root) come from meson. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "harness.h" /* NMO_OPS */
#include "numoracle/bundle.h"
#include "numoracle/numoracle.h"

/* ---- helpers ------------------------------------------------------------------------ */

static void tmpdir(char *out, size_t n)
{
    snprintf(out, n, "%s/nmo_test_bundle.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    cr_assert(mkdtemp(out) != NULL);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert(f, "%s: %s", path, strerror(errno));
    fputs(text, f);
    fclose(f);
}

static void mkdirs(const char *path)
{
    char b[1024];
    snprintf(b, sizeof b, "%s", path);
    for (char *p = b + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            mkdir(b, 0777);
            *p = '/';
        }
    mkdir(b, 0777);
}

static int run_candidate(nmo_tensor *out, const nmo_cand *cd, const nmo_case *c)
{
    nmo_err err;
    memset(out, 0, sizeof(nmo_tensor) * NMO_MAX_TENSORS);
    cr_assert_eq(nmo_case_alloc_outputs(c, out, 0, &err), NMO_OK, "%s", err.msg);
    nmo_cand_args a = {c->in, c->n_in, out, c->n_out, c->param, c->op->n_param, &c->plan};
    return cd->run(&a, &err) == NMO_OK;
}

static const char *bin(void)
{
    const char *b = getenv("NMO_BIN");
    return b ? b : "./build/apps/numoracle";
}

/* ---- data types and names ------------------------------------------------------------- */

Test(bundle_dt, names_round_trip)
{
    static const char *const names[] = {"FLOAT", "HALF", "BFLOAT16", "DOUBLE", "FP8_E4M3", "FP8_E5M2",
                                        "FP8_E4M3_FNUZ", "FP8_E5M2_FNUZ", "INT32", "INT64"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        int dt = -1;
        cr_assert_eq(nmo_dt_parse(&dt, names[i]), NMO_OK, "%s", names[i]);
        cr_expect_str_eq(nmo_dt_name(dt), names[i]);
        char low[32];
        snprintf(low, sizeof low, "%s", names[i]);
        for (char *p = low; *p; p++) *p = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
        int dt2 = -1;
        cr_expect_eq(nmo_dt_parse(&dt2, low), NMO_OK, "hipDNN frontend spelling %s", low);
        cr_expect_eq(dt2, dt);
    }
    int dt;
    cr_expect_eq(nmo_dt_parse(&dt, "bf16"), NMO_ERR_UNKNOWN_DTYPE, "numoracle names are not graph names");
    cr_expect_eq(nmo_dt_parse(&dt, "FLOAT8"), NMO_ERR_UNKNOWN_DTYPE);
    cr_expect_str_eq(nmo_dt_token(NMO_BF16), "bfp16");
    cr_expect_str_eq(nmo_dt_token(NMO_FP32), "fp32");
    cr_expect_eq(nmo_dt_bytes(NMO_DT_INT64), 8);
    cr_expect_null(nmo_dt_name(NMO_TF32), "hipDNN has no tf32 data type");
}

Test(bundle_dt, operation_names)
{
    char b[64];
    cr_expect_str_eq(nmo_op_operation(b, sizeof b, nmo_op_find("rms_norm")), "RmsNormFwd");
    cr_expect_str_eq(nmo_op_operation(b, sizeof b, nmo_op_find("matmul")), "MatmulFwd");
    nmo_op fake = *nmo_op_find("rms_norm");
    fake.name = "layer_norm_bwd";
    cr_expect_str_eq(nmo_op_operation(b, sizeof b, &fake), "LayerNormBwd");
    cr_expect(nmo_op_is_backward(&fake));
    cr_expect(!nmo_op_is_backward(nmo_op_find("rms_norm")));
    char s[64] = "a-b.c/d e";
    nmo_sanitize(s);
    cr_expect_str_eq(s, "a_b_c_d_e");
    cr_expect(nmo_filter_match("*Rms*:*Soft*-*_fp16*", "RmsNormFwd_nchw_bfp16.small"));
    cr_expect(!nmo_filter_match("*Rms*:*Soft*-*_fp16*", "RmsNormFwd_nchw_fp16.small"));
    cr_expect(!nmo_filter_match("*Matmul*", "RmsNormFwd_nchw_fp16.small"));
    cr_expect(nmo_filter_match("-*fp16*", "x.fp32"));
}

/* ---- graphs ---------------------------------------------------------------------------- */

static void small_case(nmo_case *c, const nmo_op *op, nmo_fmt dt, int family, uint64_t seed)
{
    nmo_plan p;
    nmo_plan_default(&p, dt);
    nmo_err err;
    int ns;
    int64_t sh[NMO_MAX_DIMS];
    char first[128];
    snprintf(first, sizeof first, "%.*s", (int)strcspn(op->test_shapes, ";"), op->test_shapes);
    cr_assert_eq(nmo_shape_parse(&ns, sh, first, &err), NMO_OK);
    cr_assert_eq(nmo_case_init(c, op, &p, ns, sh, &err), NMO_OK, "%s: %s", op->name, err.msg);
    nmo_case_fill(c, family, seed);
}

Test(bundle_graph, json_round_trip_every_op)
{
    int nsel = 0;
    for (int i = 0; i < nmo_op_count(); i++) {
        const nmo_op *op = nmo_op_at(i);
        if (!nmo_test_op_selected(op->name)) continue;
        nsel++;
        nmo_case c;
        small_case(&c, op, NMO_BF16, NMO_FAM_GAUSSIAN, 1);
        nmo_graph g, h;
        nmo_err err;
        cr_assert_eq(nmo_graph_from_case(&g, &c, "rt", NMO_LAYOUT_ROWMAJOR, &err), NMO_OK, "%s", err.msg);
        cJSON *j = nmo_graph_to_json(&g);
        cr_assert_eq(nmo_graph_parse(&h, j, "rt.json", &err), NMO_OK, "%s: %s", op->name, err.msg);
        cr_expect_eq(h.op, op);
        /* hipDNN's form carries epsilon as an appended value tensor */
        int nv = 0;
        for (int t = 0; t < h.n_tensors; t++) nv += h.t[t].has_value;
        cr_expect_eq(h.n_tensors - nv, g.n_tensors, "%s", op->name);
        for (int k = 0; k < op->n_param; k++)
            cr_expect_eq(h.param[k], g.param[k], "%s: parameter %s", op->name, op->param[k].name);
        for (int t = 0; t < g.n_tensors; t++) {
            cr_expect_eq(h.t[t].uid, g.t[t].uid);
            cr_expect_eq(h.t[t].dt, g.t[t].dt);
            cr_expect_eq(memcmp(h.t[t].dims, g.t[t].dims, sizeof g.t[t].dims), 0);
            cr_expect_eq(memcmp(h.t[t].strides, g.t[t].strides, sizeof g.t[t].strides), 0);
        }
        cr_expect_str_eq(nmo_graph_layout(&h), "nchw");
        cr_expect_str_eq(nmo_graph_dtype_token(&h), "bfp16");
        cJSON_Delete(j);
        nmo_case_free(&c);
    }
    cr_expect_gt(nsel, 0, "NMO_OPS selects no operator");
}

Test(bundle_graph, pinned_parse_errors)
{
    static const struct {
        const char *json, *msg;
    } bad[] = {
        {"{\"nodes\": []}", "g.json: not a graph (no \"tensors\" array)"},
        {"{\"tensors\": [{\"uid\": 0, \"data_type\": \"FLOAT\", \"dims\": [2], \"strides\": [1]}], \"nodes\": []}",
         "g.json: no nodes"},
        {"{\"tensors\": [{\"uid\": 0, \"name\": \"x\", \"data_type\": \"FLOAT8\", \"dims\": [2], \"strides\": [1]}], \"nodes\": []}",
         "g.json: uid 0 (x): unknown data_type 'FLOAT8' (known: FLOAT HALF BFLOAT16 DOUBLE FP8_E4M3 FP8_E5M2 "
         "FP8_E4M3_FNUZ FP8_E5M2_FNUZ INT32 INT64)"},
        {"{\"tensors\": [{\"uid\": 0, \"name\": \"x\", \"data_type\": \"FLOAT\", \"dims\": [2, 3], \"strides\": [1]}], \"nodes\": []}",
         "g.json: uid 0 (x): 2 dims but 1 strides"},
        {"{\"tensors\": [{\"uid\": 0, \"name\": \"x\", \"data_type\": \"FLOAT\", \"dims\": [2, 3], \"strides\": [2, 1]}], \"nodes\": []}",
         "g.json: uid 0 (x): strides [2, 1] do not describe a dense layout of dims [2, 3] (v1 bundles are dense)"},
        {"{\"tensors\": [{\"uid\": 1, \"data_type\": \"FLOAT\", \"dims\": [2]}, {\"uid\": 1, \"data_type\": \"FLOAT\", \"dims\": [2]}], \"nodes\": []}",
         "g.json: duplicate tensor uid 1 (tensors[0] and tensors[1])"},
        {"{\"tensors\": [{\"uid\": 0, \"data_type\": \"FLOAT\", \"dims\": [0]}], \"nodes\": []}",
         "g.json: uid 0: dims[0] = 0 (must be >= 1)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cJSON *j = cJSON_Parse(bad[i].json);
        cr_assert(j);
        nmo_graph g;
        nmo_err err = {{0}};
        cr_expect_neq(nmo_graph_parse(&g, j, "g.json", &err), NMO_OK);
        cr_expect_str_eq(err.msg, bad[i].msg);
        cJSON_Delete(j);
    }
}

/* A bundle written the way the hipDNN frontend writes graphs: lower-case data types,
 * inputs/outputs/parameters sections, a type name we do not know, no strides, no
 * metadata. The operator comes from the node name, the shape is inferred. */
Test(bundle_graph, hipdnn_style_bundle_loads_and_runs)
{
    char d[512], p[600];
    tmpdir(d, sizeof d);
    snprintf(p, sizeof p, "%s/repro.json", d);
    write_text(p, "{\"nodes\": [{\"inputs\": {\"x_tensor_uid\": 3, \"w_tensor_uid\": 4, \"in_2_tensor_uid\": null},"
                  " \"outputs\": {\"y_tensor_uid\": 5}, \"parameters\": {\"eps\": 1e-5},"
                  " \"type\": \"SomeFutureAttributes\", \"compute_data_type\": \"unset\", \"name\": \"rms_norm\"}],"
                  " \"tensors\": [{\"name\": \"\", \"uid\": 3, \"dims\": [4, 33], \"data_type\": \"float\", \"virtual\": false},"
                  " {\"name\": \"\", \"uid\": 4, \"dims\": [33], \"data_type\": \"float\", \"virtual\": false},"
                  " {\"name\": \"\", \"uid\": 5, \"dims\": [4, 33], \"data_type\": \"float\", \"virtual\": false}],"
                  " \"io_data_type\": \"float\", \"compute_data_type\": \"float\", \"intermediate_data_type\": \"float\","
                  " \"name\": \"\", \"extra_field_from_the_future\": {\"x\": 1}}");
    /* data: a correct candidate's output as the golden (what a framework would ship) */
    nmo_bundle b;
    nmo_err err;
    cr_assert_eq(nmo_bundle_load(&b, p, 0, &err), NMO_OK, "%s", err.msg);
    cr_expect(!b.have_inputs, "graph-only before the tensors exist");
    cr_expect_eq(b.c.shape[0], 4);
    cr_expect_eq(b.c.shape[1], 33);
    cr_expect_eq(b.c.param[0], 1e-5);
    nmo_bundle_generate_inputs(&b);
    nmo_tensor out[NMO_MAX_TENSORS];
    cr_assert(run_candidate(out, nmo_cand_find("rms_norm", NULL), &b.c));
    static const int uids[3] = {3, 4, 5};
    const nmo_tensor *ts[3] = {&b.c.in[0], &b.c.in[1], &out[0]};
    for (int q = 0; q < 3; q++) {
        snprintf(p, sizeof p, "%s/repro.tensor%d.bin", d, uids[q]);
        FILE *f = fopen(p, "wb");
        fwrite(ts[q]->data, 4, (size_t)nmo_tensor_numel(ts[q]), f);
        fclose(f);
    }
    nmo_bundle_free(&b);
    nmo_tensor_free(&out[0]);
    snprintf(p, sizeof p, "%s/repro.json", d);
    cr_assert_eq(nmo_bundle_load(&b, p, 0, &err), NMO_OK, "%s", err.msg);
    cr_expect(b.have_golden && !b.have_bounds);
    cr_assert(run_candidate(out, nmo_cand_find("rms_norm", "seq"), &b.c));
    nmo_report rep;
    cr_assert_eq(nmo_check(&rep, &b.c, out, NULL, &err), NMO_OK, "%s", err.msg);
    cr_expect_eq(rep.verdict, NMO_PASS);
    nmo_tol t;
    cr_assert_eq(nmo_tol_resolve(&t, NULL, &b, &err), NMO_OK);
    cr_expect_eq(t.level, NMO_TOL_DEFAULT, "no metadata: the default table");
    nmo_report_free(&rep);
    nmo_tensor_free(&out[0]);
    nmo_bundle_free(&b);
    nmo_bundle_dir_remove(d);
}

/* ---- stored-bounds judging == recomputing ------------------------------------------------ */

static void same_reports(const nmo_report *a, const nmo_report *b, const char *what)
{
    cr_expect_eq(a->verdict, b->verdict, "%s: verdict", what);
    cr_expect_eq(a->n, b->n, "%s", what);
    cr_expect_eq(a->n_pass, b->n_pass, "%s: pass", what);
    cr_expect_eq(a->n_fail, b->n_fail, "%s: fail", what);
    cr_expect_eq(a->n_inconc, b->n_inconc, "%s: inconclusive", what);
    cr_expect_eq(a->n_nonfinite, b->n_nonfinite, "%s", what);
    cr_expect_eq(a->n_wide, b->n_wide, "%s", what);
    cr_expect_eq(a->width_max, b->width_max, "%s: width_max", what);
    cr_expect_eq(memcmp(a->width_hist, b->width_hist, sizeof a->width_hist), 0, "%s: width histogram", what);
    cr_expect_eq(a->has_worst, b->has_worst, "%s", what);
    cr_expect_eq(a->worst.verdict, b->worst.verdict, "%s: worst verdict", what);
    cr_expect(a->worst.dist_ulps == b->worst.dist_ulps, "%s: worst distance %g vs %g", what, a->worst.dist_ulps,
              b->worst.dist_ulps);
    cr_expect_eq(a->worst.width_ulps, b->worst.width_ulps, "%s: worst width", what);
}

Test(bundle_judge, equals_recomputing_every_op_dtype_family_candidate, .timeout = 600)
{
    static const nmo_fmt dts[3] = {NMO_FP32, NMO_BF16, NMO_FP16};
    static const int fams[2] = {NMO_FAM_GAUSSIAN, NMO_FAM_NEAR_DEGENERATE};
    char d[512];
    tmpdir(d, sizeof d);
    int judged = 0, mutants_failed = 0;
    for (int i = 0; i < nmo_op_count(); i++) {
        const nmo_op *op = nmo_op_at(i);
        if (!nmo_test_op_selected(op->name)) continue;
        for (int q = 0; q < 3; q++) {
            if (!strstr(op->dtypes, nmo_fmt_name(dts[q]))) continue;
            for (int f = 0; f < 2; f++) {
                nmo_case c;
                small_case(&c, op, dts[q], fams[f], 7);
                char sub[700], json[800];
                snprintf(sub, sizeof sub, "%s/%s_%d_%d", d, op->name, q, f);
                mkdirs(sub);
                nmo_bundle_wopts o = {0};
                o.name = "t";
                o.generated_at = "2026-01-01T00:00:00Z";
                nmo_err err;
                if (nmo_bundle_write(sub, &c, &o, NMO_MODE_ESCALATE, NULL, 0, &err) != NMO_OK) {
                    /* a family whose enclosure is not finite cannot make a golden: fine */
                    cr_expect(strstr(err.msg, "not finite") != NULL, "%s: %s", op->name, err.msg);
                    nmo_case_free(&c);
                    continue;
                }
                snprintf(json, sizeof json, "%s/t.json", sub);
                nmo_bundle b, bo;
                cr_assert_eq(nmo_bundle_load(&b, json, 0, &err), NMO_OK, "%s", err.msg);
                cr_assert_eq(nmo_bundle_load(&bo, json, NMO_BL_BOUNDS_ONLY, &err), NMO_OK, "%s", err.msg);
                cr_assert(b.have_bounds && b.have_golden && b.have_inputs);
                cr_assert(bo.have_bounds && !bo.have_golden && !bo.have_inputs);
                /* the loaded inputs are the written ones, bit for bit */
                for (int k = 0; k < c.n_in; k++)
                    cr_expect_eq(memcmp(b.c.in[k].data, c.in[k].data,
                                        (size_t)nmo_tensor_numel(&c.in[k]) * nmo_fmt_bytes(c.in[k].dtype)),
                                 0, "%s input %d", op->name, k);
                for (int ci = 0; ci < nmo_cand_count(); ci++) {
                    const nmo_cand *cd = nmo_cand_at(ci);
                    if (strcmp(cd->op, op->name) != 0) continue;
                    nmo_tensor out[NMO_MAX_TENSORS];
                    if (!run_candidate(out, cd, &c)) {
                        for (int k = 0; k < c.n_out; k++) nmo_tensor_free(&out[k]);
                        continue;
                    }
                    nmo_check_opts co = {0};
                    co.keep_verdicts = 1;
                    nmo_report r1, r2, r3;
                    cr_assert_eq(nmo_check(&r1, &c, out, &co, &err), NMO_OK);
                    cr_assert_eq(nmo_bundle_judge(&r2, &b, out, NMO_JUDGE_VERDICTS | NMO_JUDGE_WIDTHS, &err), NMO_OK);
                    cr_assert_eq(nmo_bundle_judge(&r3, &bo, out, NMO_JUDGE_VERDICTS | NMO_JUDGE_WIDTHS, &err), NMO_OK);
                    char what[256];
                    snprintf(what, sizeof what, "%s %s %s cpu:%s", op->name, nmo_fmt_name(dts[q]),
                             nmo_family_name((nmo_family)fams[f]), cd->name);
                    same_reports(&r1, &r2, what);
                    same_reports(&r1, &r3, what);
                    for (int k = 0; k < c.n_out; k++) {
                        int64_t n = nmo_tensor_numel(&c.out[k]), diff = 0;
                        for (int64_t e = 0; e < n; e++) diff += r1.verdicts[k][e] != r2.verdicts[k][e];
                        cr_expect_eq(diff, 0, "%s: %lld element verdicts differ in output %d", what, (long long)diff, k);
                    }
                    if (!cd->correct && r2.verdict == NMO_FAIL) mutants_failed++;
                    judged++;
                    nmo_report_free(&r1);
                    nmo_report_free(&r2);
                    nmo_report_free(&r3);
                    for (int k = 0; k < c.n_out; k++) nmo_tensor_free(&out[k]);
                }
                nmo_bundle_free(&b);
                nmo_bundle_free(&bo);
                nmo_case_free(&c);
            }
        }
    }
    cr_log_info("bundle judge: %d candidate runs, %d mutants failed", judged, mutants_failed);
    if (nmo_test_filtered()) {
        cr_expect_gt(judged, 0, "NMO_OPS selects no operator with a candidate run");
    } else {
        cr_expect_gt(judged, 30, "judged %d candidate runs", judged);
        cr_expect_gt(mutants_failed, 5, "the comparison saw mutants fail (%d)", mutants_failed);
    }
    nmo_bundle_dir_remove(d);
}

/* The verdict by definition (DESIGN §6) from a stored set and its flags. */
static nmo_verdict by_definition(double v, double lo, double hi, unsigned f)
{
    if (f & NMO_BF_MUST_NAN) return v != v ? NMO_PASS : NMO_FAIL;
    int inside = v != v ? (f & NMO_BF_NAN_OK) != 0 : (lo <= v && v <= hi);
    if (!inside) return NMO_FAIL;
    if ((f & (NMO_BF_NONFINITE | NMO_BF_WIDE)) || v != v) return NMO_INCONCLUSIVE;
    return NMO_PASS;
}

/* A one-output bundle in memory (rms_norm's descriptions, output retyped) holding n
 * stored sets; the judge sees every bit pattern of fmt as the candidate. */
static void exhaustive_format(nmo_fmt fmt)
{
    const nmo_fmt_info *fi = nmo_fmt_get(fmt);
    int bits = fi->bits;
    int64_t np = (int64_t)1 << bits;
    /* stored sets: [lo, hi] pairs (values of fmt), flags */
    double mx = fi->max_finite, mn = fi->min_subnormal;
    struct {
        double lo, hi;
        unsigned f;
    } sets[] = {
        {1.0, 1.0, 0}, {-0.0, 0.0, 0}, {0.0, mn, 0}, {-mn, mn, 0}, {-2.0, 0.5, 0}, {mx, mx, 0},
        {-mx, -mx, 0}, {0.25, 0.5, NMO_BF_NAN_OK}, {1.0, 1.5, NMO_BF_WIDE},
        {fi->has_inf ? -INFINITY : -mx, 4.0, NMO_BF_NONFINITE},
        {1.0, fi->has_inf ? INFINITY : mx, NMO_BF_NONFINITE | NMO_BF_NAN_OK}, {NAN, NAN, NMO_BF_MUST_NAN | NMO_BF_NAN_OK},
    };
    int ns = (int)(sizeof sets / sizeof sets[0]);
    int64_t n = np * ns;
    nmo_bundle b;
    memset(&b, 0, sizeof b);
    b.have_bounds = 1;
    b.c.op = nmo_op_find("rms_norm");
    nmo_plan_default(&b.c.plan, NMO_FP32);
    b.c.plan.out = fmt;
    b.c.n_out = 1;
    nmo_err err;
    int64_t dims[1] = {n};
    cr_assert_eq(nmo_tensor_init(&b.c.out[0], fmt, 1, dims, &err), NMO_OK);
    nmo_tensor cand = b.c.out[0];
    b.lo[0] = b.hi[0] = b.c.out[0];
    cr_assert_eq(nmo_tensor_alloc(&b.lo[0], &err), NMO_OK);
    cr_assert_eq(nmo_tensor_alloc(&b.hi[0], &err), NMO_OK);
    cr_assert_eq(nmo_tensor_alloc(&cand, &err), NMO_OK);
    b.flags[0] = malloc((size_t)n);
    for (int s = 0; s < ns; s++)
        for (int64_t p = 0; p < np; p++) {
            int64_t i = s * np + p;
            nmo_ovf ov = fi->has_inf ? NMO_OVF_IEEE : NMO_OVF_SAT;
            nmo_tensor_set_bits(&b.lo[0], i, nmo_fmt_encode(fmt, sets[s].lo, NMO_RNE, 0, ov));
            nmo_tensor_set_bits(&b.hi[0], i, nmo_fmt_encode(fmt, sets[s].hi, NMO_RNE, 0, ov));
            nmo_tensor_set_bits(&cand, i, (uint64_t)p);
            b.flags[0][i] = (uint8_t)sets[s].f;
        }
    nmo_report r;
    cr_assert_eq(nmo_bundle_judge(&r, &b, &cand, NMO_JUDGE_VERDICTS | NMO_JUDGE_WIDTHS, &err), NMO_OK, "%s", err.msg);
    int64_t bad = 0, fails = 0;
    for (int64_t i = 0; i < n; i++) {
        double v = nmo_tensor_get(&cand, i), lo = nmo_tensor_get(&b.lo[0], i), hi = nmo_tensor_get(&b.hi[0], i);
        nmo_verdict want = by_definition(v, lo, hi, b.flags[0][i]);
        fails += want == NMO_FAIL;
        if (r.verdicts[0][i] != want && bad++ < 5)
            cr_log_error("%s: pattern 0x%llx (%g) in [%g, %g] flags %u: judged %d, definition %d", nmo_fmt_name(fmt),
                         (unsigned long long)nmo_tensor_get_bits(&cand, i), v, lo, hi, b.flags[0][i], r.verdicts[0][i],
                         want);
    }
    cr_expect_eq(bad, 0, "%s: %lld of %lld verdicts differ from the definition", nmo_fmt_name(fmt), (long long)bad,
                 (long long)n);
    cr_expect_eq(r.n_fail, fails, "%s: FAIL count", nmo_fmt_name(fmt));
    nmo_report_free(&r);
    free(b.flags[0]);
    nmo_tensor_free(&b.lo[0]);
    nmo_tensor_free(&b.hi[0]);
    nmo_tensor_free(&cand);
}

Test(bundle_judge, every_fp8_pattern) {
    exhaustive_format(NMO_FP8_E4M3);
    exhaustive_format(NMO_FP8_E5M2);
    exhaustive_format(NMO_FP8_E4M3FNUZ);
    exhaustive_format(NMO_FP8_E5M2FNUZ);
}
Test(bundle_judge, every_16bit_pattern) {
    exhaustive_format(NMO_BF16);
    exhaustive_format(NMO_FP16);
}

/* ---- integrity ------------------------------------------------------------------------- */

static void write_small_bundle(char *json, size_t n, const char *dir, const char *op, nmo_fmt dt)
{
    nmo_case c;
    small_case(&c, nmo_op_find(op), dt, NMO_FAM_GAUSSIAN, 3);
    nmo_bundle_wopts o = {0};
    o.name = "b";
    o.generated_at = "2026-01-01T00:00:00Z";
    nmo_err err;
    cr_assert_eq(nmo_bundle_write(dir, &c, &o, NMO_MODE_ESCALATE, NULL, 0, &err), NMO_OK, "%s", err.msg);
    snprintf(json, n, "%s/b.json", dir);
    nmo_case_free(&c);
}

Test(bundle_integrity, truncated_nan_and_stale_bounds_are_pinned)
{
    char d[512], json[600], p[700];
    tmpdir(d, sizeof d);
    write_small_bundle(json, sizeof json, d, "rms_norm", NMO_BF16);
    nmo_bundle b;
    nmo_err err = {{0}};
    /* truncated input */
    snprintf(p, sizeof p, "%s/b.tensor0.bin", d);
    cr_assert_eq(truncate(p, 10), 0);
    cr_expect_eq(nmo_bundle_load(&b, json, 0, &err), NMO_ERR_SIZE);
    char want[900];
    snprintf(want, sizeof want, "%s: uid 0 (x): size 10 bytes, expected 6150 (3075 elements of BFLOAT16)", p);
    cr_expect_str_eq(err.msg, want);
    nmo_bundle_dir_remove(d);

    /* NaN in the expected output */
    tmpdir(d, sizeof d);
    write_small_bundle(json, sizeof json, d, "rms_norm", NMO_FP32);
    snprintf(p, sizeof p, "%s/b.tensor2.bin", d);
    FILE *f = fopen(p, "r+b");
    float nanv = NAN;
    fseek(f, 4 * 1026, SEEK_SET);
    fwrite(&nanv, 4, 1, f);
    fclose(f);
    cr_expect_eq(nmo_bundle_load(&b, json, 0, &err), NMO_ERR_DATA);
    snprintf(want, sizeof want, "%s: uid 2 (y): expected output holds NaN at index [1, 1] (NaN/Inf golden data is rejected)", p);
    cr_expect_str_eq(err.msg, want);
    /* bounds-only loading does not read the expected output */
    cr_expect_eq(nmo_bundle_load(&b, json, NMO_BL_BOUNDS_ONLY, &err), NMO_OK, "%s", err.msg);
    nmo_bundle_free(&b);
    nmo_bundle_dir_remove(d);

    /* an expected value outside its stored set (stale bounds) */
    tmpdir(d, sizeof d);
    write_small_bundle(json, sizeof json, d, "rms_norm", NMO_FP32);
    snprintf(p, sizeof p, "%s/b.tensor2.lo.bin", d);
    f = fopen(p, "r+b");
    float big = 1e30f;
    fwrite(&big, 4, 1, f);
    fclose(f);
    cr_expect_eq(nmo_bundle_load(&b, json, 0, &err), NMO_ERR_DATA);
    snprintf(want, sizeof want, "%s: uid 2 (y): lo 1.00000002e+30 > hi ", p);
    cr_expect(strncmp(err.msg, want, strlen(want)) == 0, "%s", err.msg);
    nmo_bundle_dir_remove(d);
}

/* ---- tolerance chain -------------------------------------------------------------------- */

Test(tolerance, default_table_names_its_source)
{
    nmo_tol t;
    nmo_tol_default(&t, nmo_op_find("matmul"), NMO_BF16);
    cr_expect_eq(t.atol, 1e-2);
    cr_expect_eq(t.rtol, 1e-2);
    cr_expect_eq(t.level, NMO_TOL_DEFAULT);
    cr_expect(strstr(t.source, "hipDNN TestTolerances.hpp matmul::getTolerance") != NULL, "%s", t.source);
    nmo_tol_default(&t, nmo_op_find("softmax"), NMO_BF16);
    cr_expect_eq(t.atol, 5e-2, "reduction bf16");
    nmo_tol_default(&t, nmo_op_find("rms_norm"), NMO_FP32);
    cr_expect_eq(t.atol, 1e-4, "layernorm family fp32");
    nmo_tol_default(&t, nmo_op_find("rms_norm"), NMO_FP8_E4M3);
    cr_expect_eq(t.atol, 0.25);
    cr_expect(strstr(t.source, "numoracle") != NULL, "%s", t.source);
    cr_expect_str_eq(nmo_tol_level_name(NMO_TOL_OVERRIDE), "override");
    cr_expect_str_eq(nmo_tol_level_name(NMO_TOL_BUNDLE), "bundle");
}

Test(tolerance, chain_levels_and_compare)
{
    nmo_bundle b;
    memset(&b, 0, sizeof b);
    b.g.op = nmo_op_find("rms_norm");
    nmo_plan_default(&b.c.plan, NMO_BF16);
    snprintf(b.meta_path, sizeof b.meta_path, "m.meta.json");
    nmo_tol t;
    nmo_err err = {{0}};
    cr_assert_eq(nmo_tol_resolve(&t, NULL, &b, &err), NMO_OK);
    cr_expect_eq(t.level, NMO_TOL_DEFAULT);
    b.meta = cJSON_Parse("{\"format_version\": 1, \"tolerance\": {\"absolute\": 3.2e-6, \"relative\": 1e-4, "
                         "\"calibration\": {\"method\": \"empirical_p99.9\"}}}");
    cr_assert_eq(nmo_tol_resolve(&t, NULL, &b, &err), NMO_OK);
    cr_expect_eq(t.level, NMO_TOL_BUNDLE);
    cr_expect_eq(t.atol, 3.2e-6);
    cr_expect_str_eq(t.source, "m.meta.json tolerance (empirical_p99.9)");
    nmo_tol ov = {1, 2, NMO_TOL_OVERRIDE, "cfg"};
    cr_assert_eq(nmo_tol_resolve(&t, &ov, &b, &err), NMO_OK);
    cr_expect_eq(t.level, NMO_TOL_OVERRIDE);
    cr_expect_eq(t.rtol, 2);
    cJSON_Delete(b.meta);
    b.meta = cJSON_Parse("{\"tolerance\": {\"absolute\": -1}}");
    cr_expect_eq(nmo_tol_resolve(&t, NULL, &b, &err), NMO_ERR_DATA);
    cr_expect_str_eq(err.msg, "m.meta.json: tolerance.absolute must be a finite number >= 0");
    cJSON_Delete(b.meta);

    /* compare: NaN never passes, -0 equals +0, atol + rtol |e| */
    nmo_tensor e, a;
    int64_t d4[1] = {4};
    nmo_tensor_init(&e, NMO_FP32, 1, d4, &err);
    nmo_tensor_init(&a, NMO_FP32, 1, d4, &err);
    nmo_tensor_alloc(&e, &err);
    nmo_tensor_alloc(&a, &err);
    double ev[4] = {1.0, 0.0, 100.0, 2.0}, av[4] = {1.001, -0.0, 100.5, NAN};
    for (int i = 0; i < 4; i++) nmo_tensor_set(&e, i, ev[i]), nmo_tensor_set(&a, i, av[i]);
    nmo_tol tt = {0.0015, 0.006, NMO_TOL_DEFAULT, ""};
    nmo_tol_result r;
    nmo_tol_compare(&r, &tt, &e, &a);
    cr_expect_eq(r.n_mismatch, 1, "only the NaN fails (0.5 <= 0.0015 + 0.6)");
    cr_expect_eq(r.worst, 3);
    cr_expect_eq(r.verdict, NMO_FAIL);
    nmo_tensor_free(&e);
    nmo_tensor_free(&a);
    double q[5] = {5, 1, 4, 2, 3};
    cr_expect_eq(nmo_quantile(q, 5, 0.999), 5);
    cr_expect_eq(nmo_quantile(q, 5, 0.5), 3);
}

/* ---- sweeps and discovery ------------------------------------------------------------------ */

static int n_warn;
static char last_warn[2048];
static void count_diag(void *ctx, nmo_diag_level l, const char *msg)
{
    (void)ctx;
    if (l == NMO_DIAG_WARN) n_warn++;
    snprintf(last_warn, sizeof last_warn, "%s", msg);
}

Test(sweep, placeholders_typed_and_spliced_unused_values_warn)
{
    char d[512], p[700];
    tmpdir(d, sizeof d);
    char sd[600];
    snprintf(sd, sizeof sd, "%s/quick/SoftmaxFwd/Rows", d);
    mkdirs(sd);
    snprintf(p, sizeof p, "%s/graph.template.json", sd);
    write_text(p, "{\"name\": \"sm_${case.tag}\", \"io_data_type\": \"${case.io}\", \"tensors\": ["
                  "{\"uid\": 0, \"name\": \"x\", \"data_type\": \"${case.io}\", \"dims\": \"${case.tensors.dims}\"},"
                  "{\"uid\": 1, \"name\": \"y\", \"data_type\": \"${case.io}\", \"dims\": \"${case.dims}\"}],"
                  "\"nodes\": [{\"name\": \"softmax\", \"attributes\": {\"x_tensor_uid\": 0, \"y_tensor_uid\": 1}}]}");
    snprintf(p, sizeof p, "%s/sweep.json", sd);
    write_text(p, "{\"version\": 1, \"cases\": [{\"id\": \"a_fp32\", \"values\": {\"io\": \"FLOAT\", \"tag\": 7, "
                  "\"note\": \"descriptive\", \"tensors\": [{\"uid\": 0, \"dims\": [2, 5]}, {\"uid\": 1, \"dims\": [2, 5]}]},"
                  " \"golden\": null}]}");
    nmo_sweep s;
    nmo_err err;
    n_warn = 0;
    cr_assert_eq(nmo_sweep_load(&s, sd, count_diag, NULL, &err), NMO_OK, "%s", err.msg);
    cr_assert_eq(s.n_cases, 1);
    cr_assert_str_empty(s.cases[0].error);
    cJSON *g = s.cases[0].graph;
    cr_expect_str_eq(cJSON_GetObjectItem(g, "name")->valuestring, "sm_7", "spliced into text");
    cJSON *t0 = cJSON_GetArrayItem(cJSON_GetObjectItem(g, "tensors"), 0);
    cr_expect(cJSON_IsArray(cJSON_GetObjectItem(t0, "dims")), "typed substitution keeps the array");
    cr_expect_str_eq(cJSON_GetObjectItem(t0, "data_type")->valuestring, "FLOAT", "the key survives");
    cr_expect_eq(n_warn, 1);
    snprintf(p, sizeof p, "%s/sweep.json: case 'a_fp32': values.note is not used by the template", sd);
    cr_expect_str_eq(last_warn, p);
    cr_expect_str_eq(s.operation, "SoftmaxFwd");
    cr_expect_str_eq(s.topology, "Rows");
    nmo_sweep_free(&s);

    /* discovery over that tree: the sweep's name, and a single-graph bundle next to it */
    char bd[700], json[800];
    snprintf(bd, sizeof bd, "%s/quick/customer_issues/CASE-1/repro", d);
    mkdirs(bd);
    write_small_bundle(json, sizeof json, bd, "rms_norm", NMO_FP16);
    char sd2[700];
    snprintf(sd2, sizeof sd2, "%s/standard/X/y/z/typical", d);
    mkdirs(sd2);
    write_small_bundle(json, sizeof json, sd2, "softmax", NMO_BF16);
    snprintf(p, sizeof p, "%s/quik", d);
    mkdir(p, 0777);
    nmo_disc disc;
    n_warn = 0;
    cr_assert_eq(nmo_discover(&disc, d, 0, 0, count_diag, NULL, &err), NMO_OK, "%s", err.msg);
    cr_assert_eq(disc.n, 2, "quick only: %d", disc.n);
    /* path order: quick/SoftmaxFwd/... sorts before quick/customer_issues/... */
    cr_expect_str_eq(disc.cases[0].name, "SoftmaxFwd_Rows.a_fp32");
    cr_expect_str_eq(disc.cases[1].name, "RmsNormFwd_nchw_fp16.repro", "graph-derived suite, folder test name");
    cr_expect_eq(n_warn, 2, "the misspelled tier and the unused value");
    nmo_disc_free(&disc);
    cr_assert_eq(nmo_discover(&disc, d, 1, 0, NULL, NULL, &err), NMO_OK);
    cr_expect_eq(disc.n, 3, "the cascade adds standard");
    cr_expect_str_eq(disc.cases[2].name, "Standard/SoftmaxFwd_nchw_bfp16.typical");
    nmo_disc_free(&disc);
    cr_assert_eq(nmo_discover(&disc, d, 3, 0, NULL, NULL, &err), NMO_OK, "missing tiers are zero cases");
    cr_expect_eq(disc.n, 3);
    nmo_disc_free(&disc);

    /* a collision: the same suite and test from two folders */
    char bd2[700];
    snprintf(bd2, sizeof bd2, "%s/quick/elsewhere/repro", d);
    mkdirs(bd2);
    write_small_bundle(json, sizeof json, bd2, "rms_norm", NMO_FP16);
    cr_expect_eq(nmo_discover(&disc, d, 0, 0, NULL, NULL, &err), NMO_ERR_DATA);
    cr_expect(strncmp(err.msg, "test name collision: RmsNormFwd_nchw_fp16.repro from ", 53) == 0, "%s", err.msg);
    nmo_disc_free(&disc);
    nmo_bundle_dir_remove(d);
}

/* ---- atomic directories and SIGKILL ---------------------------------------------------------- */

Test(atomic, commit_refuses_then_swaps_with_force)
{
    char d[512], fin[600], tmp[700], p[800];
    tmpdir(d, sizeof d);
    snprintf(fin, sizeof fin, "%s/a/b/bundle", d);
    nmo_err err;
    cr_assert_eq(nmo_bundle_dir_begin(tmp, sizeof tmp, fin, &err), NMO_OK, "%s", err.msg);
    snprintf(p, sizeof p, "%s/one", tmp);
    write_text(p, "1");
    cr_assert_eq(nmo_bundle_dir_commit(tmp, fin, 0, &err), NMO_OK, "%s", err.msg);
    cr_assert_eq(nmo_bundle_dir_begin(tmp, sizeof tmp, fin, &err), NMO_OK);
    snprintf(p, sizeof p, "%s/two", tmp);
    write_text(p, "2");
    cr_expect_eq(nmo_bundle_dir_commit(tmp, fin, 0, &err), NMO_ERR_IO);
    char want[800];
    snprintf(want, sizeof want, "%s exists (use --force to replace it)", fin);
    cr_expect_str_eq(err.msg, want);
    cr_assert_eq(nmo_bundle_dir_commit(tmp, fin, 1, &err), NMO_OK, "%s", err.msg);
    snprintf(p, sizeof p, "%s/two", fin);
    cr_expect(access(p, F_OK) == 0, "replaced");
    snprintf(p, sizeof p, "%s/one", fin);
    cr_expect(access(p, F_OK) != 0, "the old content is gone, not merged");
    nmo_bundle_dir_remove(d);
}

/* Every file of dir, concatenated with names (a snapshot to compare). */
static char *snapshot(const char *dir)
{
    struct dirent **e;
    int n = scandir(dir, &e, NULL, alphasort);
    if (n < 0) return NULL;
    size_t cap = 1 << 20, len = 0;
    char *s = malloc(cap);
    for (int i = 0; i < n; i++) {
        if (e[i]->d_name[0] != '.') {
            char p[1200];
            snprintf(p, sizeof p, "%s/%s", dir, e[i]->d_name);
            FILE *f = fopen(p, "rb");
            len += (size_t)snprintf(s + len, cap - len, "[%s]", e[i]->d_name);
            if (f) {
                size_t got;
                while ((got = fread(s + len, 1, cap - len - 1, f)) > 0) {
                    len += got;
                    if (cap - len < 4096) s = realloc(s, cap *= 2);
                }
                fclose(f);
            }
        }
        free(e[i]);
    }
    free(e);
    s[len] = 0;
    return s;
}

static pid_t spawn_golden(const char *root, const char *seed, int force, const char *stall)
{
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        if (stall) setenv("NUMORACLE_TEST_STALL_BEFORE_COMMIT", stall, 1);
        else unsetenv("NUMORACLE_TEST_STALL_BEFORE_COMMIT");
        int fd = open("/dev/null", O_WRONLY);
        dup2(fd, 1), dup2(fd, 2);
        execl(bin(), bin(), "golden", "--op", "rms_norm", "--dtype", "bf16", "--shape", "64x1031", "--seed", seed,
              "--name", "killme", "--root", root, force ? "--force" : NULL, (char *)NULL);
        _exit(127);
    }
    return pid;
}

/* hidden temporaries of the bundle folder (".killme.tmp-PID-XXXXXX") */
static int count_tmp(const char *parent)
{
    DIR *d = opendir(parent);
    int n = 0;
    if (!d) return 0;
    struct dirent *e;
    while ((e = readdir(d))) n += strncmp(e->d_name, ".killme.tmp-", 12) == 0;
    closedir(d);
    return n;
}

static int tmp_complete(const char *parent)
{
    DIR *d = opendir(parent);
    if (!d) return 0;
    struct dirent *e;
    int full = 0;
    while ((e = readdir(d)))
        if (strncmp(e->d_name, ".killme.tmp-", 12) == 0) {
            char p[1200];
            snprintf(p, sizeof p, "%s/%s/killme.meta.json", parent, e->d_name);
            full |= access(p, F_OK) == 0;
        }
    closedir(d);
    return full;
}

Test(atomic, sigkill_midway_leaves_no_partial_bundle, .timeout = 120)
{
    char d[512], parent[700], fin[800];
    tmpdir(d, sizeof d);
    snprintf(parent, sizeof parent, "%s/quick/RmsNormFwd/nchw/bfp16", d);
    snprintf(fin, sizeof fin, "%s/killme", parent);

    /* 1. a first generation killed after every file is written, before the rename */
    pid_t pid = spawn_golden(d, "1", 0, "30");
    for (int i = 0; i < 3000 && !tmp_complete(parent); i++) usleep(10000);
    cr_assert(tmp_complete(parent), "the run reached the stall point");
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    cr_expect(access(fin, F_OK) != 0, "no bundle appears");
    cr_expect_eq(count_tmp(parent), 1, "only a hidden temporary is left");
    nmo_disc disc;
    nmo_err err;
    cr_assert_eq(nmo_discover(&disc, d, 3, 0, NULL, NULL, &err), NMO_OK);
    cr_expect_eq(disc.n, 0, "discovery ignores temporaries");
    nmo_disc_free(&disc);

    /* 2. a complete generation cleans the stale temporary */
    int st;
    pid = spawn_golden(d, "1", 0, NULL);
    waitpid(pid, &st, 0);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    cr_expect_eq(count_tmp(parent), 0, "the dead writer's temporary was removed");
    char *before = snapshot(fin);
    cr_assert(before && strlen(before) > 100);

    /* 3. a --force regeneration (other seed) killed before the rename: previous intact */
    pid = spawn_golden(d, "2", 1, "30");
    for (int i = 0; i < 3000 && !tmp_complete(parent); i++) usleep(10000);
    cr_assert(tmp_complete(parent));
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    char *after = snapshot(fin);
    cr_expect(after && strcmp(before, after) == 0, "the previous bundle is byte-identical");
    free(after);

    /* 4. killed at random moments: the bundle is always the old one or a complete new one */
    srand(12345);
    for (int round = 0; round < 6; round++) {
        pid = spawn_golden(d, round % 2 ? "2" : "1", 1, NULL);
        usleep((useconds_t)(rand() % 150000));
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        nmo_bundle b;
        char json[900];
        snprintf(json, sizeof json, "%s/killme.json", fin);
        cr_expect_eq(nmo_bundle_load(&b, json, 0, &err), NMO_OK, "round %d: %s", round, err.msg);
        nmo_bundle_free(&b);
    }
    /* 5. without --force an existing bundle is never replaced */
    pid = spawn_golden(d, "3", 0, NULL);
    waitpid(pid, &st, 0);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 2);
    free(before);
    nmo_bundle_dir_remove(d);
}
