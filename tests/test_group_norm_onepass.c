/* group_norm onepass=1 (refs/group_norm.c gn_one_pass): the variance as E[x^2] - mean^2,
 * Liger-Kernel's _group_norm_forward_kernel.
 *  - the one-pass CPU candidate (mut_naive_var: a MUTANT of the two-pass model) never
 *    FAILs under onepass=1 over every family x fp32/bf16 x seeds x test shapes, and FAILs
 *    under the two-pass model (onepass=0) somewhere: the param changes the model;
 *  - the other bugs (w/b by group, per-channel statistics, L-1, bf16 accumulators) still
 *    FAIL under onepass=1;
 *  - fast + escalation == certified under onepass=1, element for element;
 *  - onepass=2 and onepass=1 under an eager plan (inter != compute) are refused. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

#define SEEDS 3

static nmo_status run_gn(nmo_report *rep, const nmo_cand *cd, nmo_fmt dt, double onepass, int fam,
                         uint64_t seed, const nmo_test_shape *sh, const nmo_check_opts *o, nmo_err *err)
{
    const nmo_op *op = nmo_op_find("group_norm");
    double val[NMO_MAX_PARAMS] = {0};
    int set[NMO_MAX_PARAMS] = {0};
    val[2] = onepass, set[2] = 1;
    nmo_plan p;
    nmo_plan_default(&p, dt);
    nmo_case c;
    nmo_status s = nmo_case_init_params(&c, op, &p, sh->nshape, sh->shape, val, set, err);
    if (s != NMO_OK) return s;
    nmo_case_fill(&c, fam, seed);
    nmo_tensor out = c.out[0];
    out.data = NULL;
    out.own = 0;
    s = nmo_tensor_alloc(&out, err);
    if (s == NMO_OK) {
        nmo_cand_args a = {c.in, c.n_in, &out, 1, c.param, op->n_param, &c.plan};
        s = cd->run(&a, err);
    }
    if (s == NMO_OK) s = nmo_check(rep, &c, &out, o, err);
    nmo_tensor_free(&out);
    nmo_case_free(&c);
    return s;
}

/* FAIL runs of candidate `name` under onepass over the grid; *runs: runs made. */
static long fails_of(const char *name, double onepass, long *runs)
{
    const nmo_op *op = nmo_op_find("group_norm");
    const nmo_cand *cd = nmo_cand_find("group_norm", name);
    cr_assert_not_null(cd, "no candidate %s", name);
    nmo_test_shape sh[4];
    int ns = nmo_test_shapes(op, sh, 0);
    long f = 0;
    *runs = 0;
    const nmo_fmt dts[2] = {NMO_FP32, NMO_BF16};
    for (int d = 0; d < 2; d++)
        for (int s = 0; s < ns; s++)
            for (int fam = 0; fam < NMO_FAM_COUNT; fam++)
                for (uint64_t seed = 1; seed <= SEEDS; seed++) {
                    nmo_report r;
                    nmo_err err = {{0}};
                    nmo_check_opts o = {0};
                    cr_assert_eq(run_gn(&r, cd, dts[d], onepass, fam, seed, &sh[s], &o, &err), NMO_OK, "%s",
                                 err.msg);
                    f += r.verdict == NMO_FAIL;
                    (*runs)++;
                    nmo_report_free(&r);
                }
    return f;
}

Test(group_norm_onepass, one_pass_candidate_passes_only_under_onepass, .timeout = 600)
{
    long n1, n0;
    long f1 = fails_of("mut_naive_var", 1, &n1), f0 = fails_of("mut_naive_var", 0, &n0);
    printf("mut_naive_var: %ld FAIL of %ld under onepass=1, %ld FAIL of %ld under two-pass\n", f1, n1, f0, n0);
    cr_expect_eq(f1, 0);
    cr_expect_gt(f0, 0);
}

Test(group_norm_onepass, other_bugs_still_fail, .timeout = 600)
{
    const char *bugs[] = {"mut_w_by_group", "mut_per_channel", "mut_var_n1", "mut_acc_bf16"};
    for (int i = 0; i < 4; i++) {
        long n, f = fails_of(bugs[i], 1, &n);
        printf("%s under onepass=1: %ld FAIL of %ld\n", bugs[i], f, n);
        cr_expect_gt(f, 0, "%s never FAILs under onepass=1", bugs[i]);
    }
}

Test(group_norm_onepass, engines_agree, .timeout = 600)
{
    const nmo_op *op = nmo_op_find("group_norm");
    const nmo_cand *cd = nmo_cand_find("group_norm", "mut_naive_var");
    nmo_test_shape sh[4];
    nmo_test_shapes(op, sh, 0);
    long diff = 0;
    for (int d = 0; d < 2; d++)
        for (int fam = 0; fam < NMO_FAM_COUNT; fam++) {
            nmo_report a, b;
            nmo_err err = {{0}};
            nmo_check_opts o = {.keep_verdicts = 1, .keep_enc = 1};
            o.mode = NMO_MODE_ESCALATE;
            cr_assert_eq(run_gn(&a, cd, d ? NMO_FP32 : NMO_BF16, 1, fam, 7, &sh[1], &o, &err), NMO_OK, "%s",
                         err.msg);
            o.mode = NMO_MODE_CERT;
            cr_assert_eq(run_gn(&b, cd, d ? NMO_FP32 : NMO_BF16, 1, fam, 7, &sh[1], &o, &err), NMO_OK, "%s",
                         err.msg);
            diff += a.verdict != b.verdict;
            for (int64_t i = 0; i < a.n; i++) {
                const nmo_fenc *x = &a.enc[0][i], *y = &b.enc[0][i];
                int same_lo = x->lo == y->lo || (x->lo != x->lo && y->lo != y->lo);
                int same_hi = x->hi == y->hi || (x->hi != x->hi && y->hi != y->hi);
                diff += !same_lo || !same_hi || a.verdicts[0][i] != b.verdicts[0][i];
            }
            nmo_report_free(&a);
            nmo_report_free(&b);
        }
    cr_expect_eq(diff, 0, "%ld elements differ between the engines", diff);
}

Test(group_norm_onepass, rejects)
{
    const nmo_op *op = nmo_op_find("group_norm");
    nmo_test_shape sh[4];
    nmo_test_shapes(op, sh, 0);
    double val[NMO_MAX_PARAMS] = {0};
    int set[NMO_MAX_PARAMS] = {0};
    nmo_plan p;
    nmo_case c;
    nmo_err err = {{0}};
    val[2] = 2, set[2] = 1;
    nmo_plan_default(&p, NMO_FP32);
    cr_expect_neq(nmo_case_init_params(&c, op, &p, sh[0].nshape, sh[0].shape, val, set, &err), NMO_OK);
    cr_expect(strstr(err.msg, "onepass") != NULL, "%s", err.msg);
    val[2] = 1;
    nmo_plan_default(&p, NMO_BF16);
    cr_assert_eq(nmo_plan_parse(&p, "inter=bf16", &err), NMO_OK, "%s", err.msg);
    memset(&err, 0, sizeof err);
    cr_expect_neq(nmo_case_init_params(&c, op, &p, sh[0].nshape, sh[0].shape, val, set, &err), NMO_OK);
    cr_expect(strstr(err.msg, "onepass") != NULL, "%s", err.msg);
}
