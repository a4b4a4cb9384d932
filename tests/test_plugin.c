/* The plugin ABI without a GPU: the CPU example plugin (hip/plugins/example_cpu_plugin.c)
 * loaded through the runner. Its correct kernel never FAILs (families x dtypes x seeds),
 * its mutant FAILs on some family, unsupported cases are skipped (dtype, operator,
 * shape), outputs are poisoned before the launch, and loading errors are reported (bad
 * path, a library that is not a plugin, the expected-plugins list). The plugin's path
 * comes from NMO_CPU_PLUGIN (set by tests/meson.build). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "nmo_runner.h"

static const char *plugin_path(void)
{
    const char *p = getenv("NMO_CPU_PLUGIN");
    cr_assert(p && *p, "NMO_CPU_PLUGIN is not set");
    return p;
}

static nmo_plugin *open_plugin(nmo_kernel_set *ks)
{
    nmo_plugin *pl = NULL;
    nmo_err err = {{0}};
    cr_assert_eq(nmo_plugin_open(&pl, plugin_path(), &err), NMO_OK, "%s", err.msg);
    nmo_kernel_set_plugin(ks, pl);
    return pl;
}

/* Run kernel k on (op, dtype, family, seed, shape). Returns the verdict, or -1 when
 * skipped. */
static int run_case(const nmo_kernel_set *ks, const nmo_plugin_kernel *k, const char *opname,
                    nmo_fmt dt, int fam, uint64_t seed, int nshape, const int64_t *shape)
{
    nmo_plan p;
    nmo_plan_default(&p, dt);
    nmo_case c;
    nmo_err err = {{0}};
    cr_assert_eq(nmo_case_init(&c, nmo_op_find(opname), &p, nshape, shape, &err), NMO_OK, "%s", err.msg);
    nmo_case_fill(&c, fam, seed);
    nmo_tensor out[NMO_MAX_TENSORS];
    memset(out, 0, sizeof out);
    nmo_run_info info;
    cr_assert_eq(nmo_run_kernel(out, &info, k, ks, &c, &err), NMO_OK, "%s", err.msg);
    int v = -1;
    if (!info.skipped) {
        cr_assert(info.provenance_json && strstr(info.provenance_json, "\"example_cpu\""));
        nmo_report rep;
        cr_assert_eq(nmo_check(&rep, &c, out, NULL, &err), NMO_OK, "%s", err.msg);
        v = (int)rep.verdict;
        nmo_report_free(&rep);
        for (int i = 0; i < c.n_out; i++) nmo_tensor_free(&out[i]);
    }
    free(info.provenance_json);
    nmo_case_free(&c);
    return v;
}

Test(plugin, table_is_valid)
{
    nmo_kernel_set ks;
    nmo_plugin *pl = open_plugin(&ks);
    const nmo_plugin_info *in = nmo_plugin_get_info(pl);
    cr_assert_eq(in->abi_version, NMO_PLUGIN_ABI_VERSION);
    cr_assert_eq(in->memory, NMO_PLUGIN_MEM_HOST);
    cr_assert_eq(nmo_kernel_set_count(&ks), 3);
    for (int i = 0; i < nmo_kernel_set_count(&ks); i++)
        cr_assert_not_null(nmo_op_find(nmo_kernel_set_at(&ks, i)->op), "kernel %d names an unknown op", i);
    nmo_plugin_close(pl);
}

Test(plugin, correct_kernel_never_fails, .timeout = 300)
{
    nmo_kernel_set ks;
    nmo_plugin *pl = open_plugin(&ks);
    const nmo_plugin_kernel *k;
    char why[256];
    const nmo_fmt dts[2] = {NMO_FP32, NMO_BF16};
    const int64_t shapes[2][2] = {{3, 1025}, {8, 64}};
    int runs = 0;
    for (int d = 0; d < 2; d++) {
        cr_assert_eq(nmo_kernel_select(&k, &ks, "rms_norm", dts[d], dts[d], NULL, why, sizeof why), 0, "%s", why);
        cr_assert_str_eq(k->name, "seq");
        for (int f = 0; f < NMO_FAM_COUNT; f++)
            for (uint64_t s = 1; s <= 3; s++)
                for (int h = 0; h < 2; h++) {
                    int v = run_case(&ks, k, "rms_norm", dts[d], f, s, 2, shapes[h]);
                    cr_expect_neq(v, NMO_FAIL, "false alarm: dtype %s family %s seed %d shape %d",
                                  nmo_fmt_name(dts[d]), nmo_family_name(f), (int)s, h);
                    cr_expect_neq(v, -1, "skipped unexpectedly");
                    runs++;
                }
    }
    cr_assert_eq(nmo_kernel_select(&k, &ks, "softmax", NMO_FP32, NMO_FP32, NULL, why, sizeof why), 0);
    for (int f = 0; f < NMO_FAM_COUNT; f++)
        cr_expect_neq(run_case(&ks, k, "softmax", NMO_FP32, f, 1, 2, shapes[0]), NMO_FAIL,
                      "softmax false alarm on %s", nmo_family_name(f));
    printf("plugin: %d rms_norm runs, no false alarm\n", runs);
    nmo_plugin_close(pl);
}

Test(plugin, mutant_fails_somewhere)
{
    nmo_kernel_set ks;
    nmo_plugin *pl = open_plugin(&ks);
    const nmo_plugin_kernel *k;
    char why[256];
    cr_assert_eq(nmo_kernel_select(&k, &ks, "rms_norm", NMO_BF16, NMO_BF16, "mut_mean_n1", why, sizeof why), 0,
                 "%s", why);
    cr_assert_eq(k->correct, 0);
    const int64_t shape[2] = {4, 64};
    int caught = 0;
    for (int f = 0; f < NMO_FAM_COUNT; f++) caught += run_case(&ks, k, "rms_norm", NMO_BF16, f, 1, 2, shape) == NMO_FAIL;
    cr_assert_gt(caught, 0, "mutant never caught");
    nmo_plugin_close(pl);
}

Test(plugin, unsupported_cases_are_skipped)
{
    nmo_kernel_set ks;
    nmo_plugin *pl = open_plugin(&ks);
    const nmo_plugin_kernel *k;
    char why[256];
    /* dtype: rms_norm has no fp16 kernel; softmax is fp32 only */
    cr_assert_eq(nmo_kernel_select(&k, &ks, "rms_norm", NMO_FP16, NMO_FP16, NULL, why, sizeof why), 1);
    cr_assert_eq(nmo_kernel_select(&k, &ks, "softmax", NMO_BF16, NMO_BF16, "seq", why, sizeof why), 1);
    cr_assert(strstr(why, "no dtype bf16"), "%s", why);
    /* operator */
    cr_assert_eq(nmo_kernel_select(&k, &ks, "matmul", NMO_BF16, NMO_BF16, NULL, why, sizeof why), 1);
    /* the name exists, for another operator: skipped; an unknown name: an error */
    cr_assert_eq(nmo_kernel_select(&k, &ks, "matmul", NMO_FP32, NMO_FP32, "seq", why, sizeof why), 1);
    cr_assert_eq(nmo_kernel_select(&k, &ks, "rms_norm", NMO_FP32, NMO_FP32, "nosuch", why, sizeof why), -1);
    /* shape: supports() declines rows longer than 4096 */
    cr_assert_eq(nmo_kernel_select(&k, &ks, "rms_norm", NMO_FP32, NMO_FP32, NULL, why, sizeof why), 0);
    const int64_t big[2] = {2, 8192};
    cr_assert_eq(run_case(&ks, k, "rms_norm", NMO_FP32, 0, 1, 2, big), -1);
    nmo_plugin_close(pl);
}

Test(plugin, outputs_are_poisoned_before_launch)
{
    /* a staged launch of a kernel that declines writes nothing: the host output still
     * holds the 0xFF poison, i.e. NaN in every element */
    nmo_kernel_set ks;
    nmo_plugin *pl = open_plugin(&ks);
    const nmo_plugin_kernel *k;
    char why[256];
    cr_assert_eq(nmo_kernel_select(&k, &ks, "rms_norm", NMO_BF16, NMO_BF16, "mut_mean_n1", why, sizeof why), 0);
    nmo_plan p;
    nmo_plan_default(&p, NMO_BF16);
    nmo_case c;
    nmo_err err = {{0}};
    const int64_t shape[2] = {3, 1}; /* N = 1: the N-1 mutant declines (NMO_PLUGIN_UNSUPPORTED) */
    cr_assert_eq(nmo_case_init(&c, nmo_op_find("rms_norm"), &p, 2, shape, &err), NMO_OK, "%s", err.msg);
    nmo_case_fill(&c, 0, 1);
    nmo_staged st;
    cr_assert_eq(nmo_stage_case(&st, &c, NMO_PLUGIN_MEM_HOST, &err), NMO_OK);
    memset(st.host_out[0], 0, st.bytes_out[0]);
    nmo_run_info info;
    cr_assert_eq(nmo_staged_launch(&st, k, &info, &err), NMO_OK, "%s", err.msg);
    cr_assert(info.skipped);
    cr_assert(strstr(info.why, "declined"), "%s", info.why);
    for (size_t i = 0; i < st.bytes_out[0]; i++) cr_assert_eq(((unsigned char *)st.host_out[0])[i], 0xFF);
    nmo_staged_free(&st);
    nmo_case_free(&c);
    nmo_plugin_close(pl);
}

Test(plugin, load_errors)
{
    nmo_plugin *pl = NULL;
    nmo_err err = {{0}};
    cr_assert_neq(nmo_plugin_open(&pl, "./no/such/plugin.so", &err), NMO_OK);
    cr_assert(strstr(err.msg, "no/such/plugin.so"), "%s", err.msg);
    cr_assert_null(pl);
    /* a shared library without the query symbol (tests/not_a_plugin.c) */
    const char *lib = getenv("NMO_NOT_A_PLUGIN");
    if (lib && *lib) {
        cr_assert_neq(nmo_plugin_open(&pl, lib, &err), NMO_OK);
        cr_assert(strstr(err.msg, "no symbol nmo_plugin_query"), "%s", err.msg);
    }
    /* the expected list: given paths and NMO_EXPECT_PLUGINS */
    const char *ok[1] = {plugin_path()};
    cr_assert_eq(nmo_plugin_check_expected(ok, 1, &err), NMO_OK, "%s", err.msg);
    const char *bad[2] = {plugin_path(), "./missing_plugin.so"};
    cr_assert_neq(nmo_plugin_check_expected(bad, 2, &err), NMO_OK);
    cr_assert(strstr(err.msg, "expected plugin './missing_plugin.so' failed to load"), "%s", err.msg);
    setenv("NMO_EXPECT_PLUGINS", "./missing_env.so", 1);
    cr_assert_neq(nmo_plugin_check_expected(NULL, 0, &err), NMO_OK);
    cr_assert(nmo_plugin_is_expected("./missing_env.so", NULL, 0));
    cr_assert(!nmo_plugin_is_expected("./other.so", NULL, 0));
    unsetenv("NMO_EXPECT_PLUGINS");
}

/* ---- isolation (issue 16.10): tests/bad_plugin.c ------------------------------------ */

static const nmo_plugin_kernel *bad_kernel(const nmo_kernel_set *ks, const char *name)
{
    const nmo_plugin_kernel *k = NULL;
    char why[512];
    cr_assert_eq(nmo_kernel_select(&k, ks, "rms_norm", NMO_FP32, NMO_FP32, name, why, sizeof why), 0, "%s", why);
    return k;
}

/* One process runs a crashing, an aborting, a hanging, an overrunning, an exiting and a
 * lying kernel, each a clear error of its own case; a good kernel called after every one
 * of them still runs, its outputs written and its case's inputs intact. */
Test(plugin_isolation, bad_kernels_are_per_case_errors)
{
    const char *path = getenv("NMO_BAD_PLUGIN_SO");
    cr_assert(path && *path, "NMO_BAD_PLUGIN_SO is not set");
    setenv("NMO_PLUGIN_TIMEOUT", "1", 1);
    nmo_plugin *pl = NULL;
    nmo_err err = {{0}};
    cr_assert_eq(nmo_plugin_open(&pl, path, &err), NMO_OK, "%s", err.msg);
    nmo_kernel_set ks;
    nmo_kernel_set_plugin(&ks, pl);
    nmo_plan p;
    nmo_plan_default(&p, NMO_FP32);
    nmo_case c;
    const int64_t shape[2] = {4, 64};
    cr_assert_eq(nmo_case_init(&c, nmo_op_find("rms_norm"), &p, 2, shape, &err), NMO_OK, "%s", err.msg);
    nmo_case_fill(&c, 0, 1);
    const double x0 = nmo_tensor_get(&c.in[0], 0);
    static const struct {
        const char *name, *msg;
    } bad[] = {
        {"crash", "kernel crash, in launch(): crashed (signal 11"},
        {"abort", "kernel abort, in launch(): crashed (signal 6"},
        {"hang", "kernel hang, in launch(): did not return within 1 s"},
        {"overflow", "kernel overflow, in launch(): crashed (signal 11"},
        {"underflow", "kernel underflow wrote outside output 0 (y): byte -4 of it"},
        {"exit", "kernel exit, in launch(): ended the process (exit status 3)"},
        {"badrc", "kernel badrc returned 7"},
        {"failmsg", "kernel failmsg failed: xxx"},
        {"supcrash", "kernel supcrash, in supports(): crashed (signal 11"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        nmo_tensor out[NMO_MAX_TENSORS];
        memset(out, 0, sizeof out);
        nmo_run_info info;
        nmo_err e = {{0}};
        cr_assert_neq(nmo_run_kernel(out, &info, bad_kernel(&ks, bad[i].name), &ks, &c, &e), NMO_OK, "%s",
                      bad[i].name);
        cr_expect(strstr(e.msg, bad[i].msg), "%s: %s", bad[i].name, e.msg);
        /* the good kernel after it: ran, every element written (0), inputs intact */
        cr_assert_eq(nmo_run_kernel(out, &info, bad_kernel(&ks, i % 2 ? "ok" : "inputs"), &ks, &c, &e), NMO_OK,
                     "after %s: %s", bad[i].name, e.msg);
        cr_assert(!info.skipped);
        for (int64_t j = 0; j < nmo_tensor_numel(&out[0]); j++) cr_assert_eq(nmo_tensor_get(&out[0], j), 0.0);
        cr_assert_eq(nmo_tensor_get(&c.in[0], 0), x0, "a kernel wrote into the case's inputs");
        nmo_tensor_free(&out[0]);
        free(info.provenance_json);
    }
    nmo_case_free(&c);
    nmo_plugin_close(pl);
    unsetenv("NMO_PLUGIN_TIMEOUT");
}

/* Queries that crash, hang or hand back a table that lies are refused with the reason,
 * and numoracle goes on (the query runs in a probe child first). */
Test(plugin_isolation, bad_tables_are_refused)
{
    const char *path = getenv("NMO_BAD_PLUGIN_SO");
    cr_assert(path && *path, "NMO_BAD_PLUGIN_SO is not set");
    setenv("NMO_PLUGIN_TIMEOUT", "1", 1);
    static const struct {
        const char *mode, *msg;
    } bad[] = {
        {"crash", "loading or querying the plugin crashed (signal 11"},
        {"hang", "loading or querying the plugin did not return within 1 s"},
        {"kernel_size", "kernel_size 1073741824"},
        {"n_kernels", "1000000 kernels"},
        {"name", "plugin name longer than numoracle's limit"},
        {"op", "unknown op 'rms_nrom'"},
        {"dtypes", "bad dtype 'fp33'"},
        {"plan", "field 'fn' given twice"},
        {"dup", "kernel name ok appears twice"},
        {"correct", "correct is 2"},
        {"control", "name holds a control character"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("NMO_BAD_PLUGIN", bad[i].mode, 1);
        nmo_plugin *pl = NULL;
        nmo_err e = {{0}};
        cr_assert_neq(nmo_plugin_open(&pl, path, &e), NMO_OK, "%s", bad[i].mode);
        cr_expect(strstr(e.msg, bad[i].msg), "%s: %s", bad[i].mode, e.msg);
        cr_assert_null(pl);
    }
    unsetenv("NMO_BAD_PLUGIN");
    nmo_plugin *pl = NULL;
    nmo_err e = {{0}};
    cr_assert_eq(nmo_plugin_open(&pl, path, &e), NMO_OK, "%s", e.msg);
    nmo_plugin_close(pl);
    unsetenv("NMO_PLUGIN_TIMEOUT");
}
