/* Fast engine + escalation == certified engine alone, element for element: verdicts,
 * reachable sets, flags and the enclosures themselves, on every test tensor (every
 * candidate, correct or mutant, every family, three dtypes, both shapes). The fp64 plan
 * forces every unit through escalation, so the escalation path is exercised too. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static void run_all(const nmo_plan *(*plan_for)(nmo_fmt, nmo_plan *), int only_default)
{
    long cases = 0, esc = 0;
    for (int oi = 0; oi < nmo_op_count(); oi++) {
        const nmo_op *op = nmo_op_at(oi);
        nmo_test_shape sh[4];
        int nsh = nmo_test_shapes(op, sh, 0);
        for (int h = 0; h < nsh; h++) /* keep the certified engine's work small */
            if (sh[h].nshape == 2 && sh[h].shape[1] > 512) sh[h].shape[1] = 257, sh[h].shape[0] = 2;
        if (!nmo_test_op_selected(op->name)) continue; /* NMO_OPS (tests/harness.h) */
        for (int ci = 0; ci < nmo_cand_count(); ci++) {
            const nmo_cand *cd = nmo_cand_at(ci);
            if (strcmp(cd->op, op->name) != 0) continue;
            if (only_default && cd != nmo_cand_find(op->name, NULL)) continue;
            /* every candidate on bf16; the default one on all three dtypes (NMO_ENGINES_FULL=1:
             * every candidate on every dtype) */
            int full = getenv("NMO_ENGINES_FULL") && *getenv("NMO_ENGINES_FULL") == '1';
            int is_default = cd == nmo_cand_find(op->name, NULL);
            for (int d = 0; d < 3; d++)
                for (int f = 0; f < NMO_FAM_COUNT; f++)
                    for (int h = 0; h < nsh; h++) {
                        if (!full && !is_default && nmo_test_dtypes[d] != NMO_BF16) continue;
                        nmo_plan p;
                        const nmo_plan *pp = plan_for(nmo_test_dtypes[d], &p);
                        if (!pp) continue;
                        nmo_err err = {{0}};
                        int64_t ne = 0;
                        /* optional inputs: also absent (the recomputed statistics' table) */
                        uint32_t opt = nmo_op_optional_mask(op);
                        for (int ab = 0; ab < (opt && is_default ? 2 : 1); ab++) {
                        int64_t diff = nmo_test_engines_differ_absent(op, cd, pp, f, 7, &sh[h], ab ? opt : 0,
                                                                      &ne, &err);
                        cr_assert_geq(diff, 0, "%s/%s: %s", op->name, cd->name, err.msg);
                        cr_expect_eq(diff, 0, "%s/%s dtype=%s family=%s shape#%d%s: %lld elements differ",
                                     op->name, cd->name, nmo_fmt_name(nmo_test_dtypes[d]),
                                     nmo_family_name(f), h, ab ? " (statistics recomputed)" : "",
                                     (long long)diff);
                        cases++;
                        esc += ne;
                        }
                    }
        }
    }
    printf("engines: %ld cases compared, %ld elements escalated\n", cases, esc);
}

static const nmo_plan *plan_default(nmo_fmt dt, nmo_plan *p)
{
    nmo_plan_default(p, dt);
    return p;
}

/* compute=fp64: the fast engine certifies nothing, every unit escalates */
static const nmo_plan *plan_fp64_compute(nmo_fmt dt, nmo_plan *p)
{
    if (dt != NMO_BF16) return NULL;
    nmo_plan_default(p, dt);
    p->compute = p->acc = p->inter = NMO_FP64;
    return p;
}

/* ftz plans exercise the underflow terms on both sides */
static const nmo_plan *plan_ftz(nmo_fmt dt, nmo_plan *p)
{
    nmo_plan_default(p, dt);
    p->ftz = 1;
    return p;
}

/* fn=triton: approximate division and sqrt, the exp overflow edge, the composed sigmoid and
 * the argument-dependent exp figure (nmo_plan_exp_ulps) in both engines */
static const nmo_plan *plan_triton(nmo_fmt dt, nmo_plan *p)
{
    nmo_plan_default(p, dt);
    return nmo_plan_set_fn(p, "triton", NULL) == NMO_OK ? p : NULL;
}

Test(engines, fast_plus_escalation_equals_certified, .timeout = 1200) { run_all(plan_default, 0); }
Test(engines, triton_plans_equal_certified, .timeout = 600) { run_all(plan_triton, 1); }
Test(engines, forced_escalation_equals_certified, .timeout = 600) { run_all(plan_fp64_compute, 1); }
Test(engines, ftz_plans_equal_certified, .timeout = 600) { run_all(plan_ftz, 1); }

/* The checker judges the common case (RNE store into bf16/fp32) on raw bits; keeping
 * bounds forces the general judge. Both must agree on every element, count and the
 * worst element, for correct candidates and mutants. */
Test(engines, raw_bit_judge_equals_general_judge, .timeout = 600)
{
    long cases = 0;
    for (int oi = 0; oi < nmo_op_count(); oi++) {
        const nmo_op *op = nmo_op_at(oi);
        if (!nmo_test_op_selected(op->name)) continue;
        nmo_test_shape sh[4];
        nmo_test_shapes(op, sh, 0);
        for (int ci = 0; ci < nmo_cand_count(); ci++) {
            const nmo_cand *cd = nmo_cand_at(ci);
            if (strcmp(cd->op, op->name) != 0) continue;
            for (int d = 0; d < 2; d++)
                for (int f = 0; f < NMO_FAM_COUNT; f++) {
                    nmo_fmt dt = d ? NMO_BF16 : NMO_FP32;
                    nmo_report a, b;
                    nmo_err err = {{0}};
                    nmo_check_opts oa = {.keep_verdicts = 1}, ob = {.keep_verdicts = 1, .keep_bounds = 1};
                    cr_assert_eq(nmo_test_run(&a, op, cd, dt, f, 3, &sh[0], &oa, &err), NMO_OK, "%s", err.msg);
                    cr_assert_eq(nmo_test_run(&b, op, cd, dt, f, 3, &sh[0], &ob, &err), NMO_OK, "%s", err.msg);
                    int64_t diff = 0;
                    for (int k = 0; k < a.n_out; k++)
                        for (int64_t i = 0; i < a.out_n[k]; i++) diff += a.verdicts[k][i] != b.verdicts[k][i];
                    cr_expect_eq(diff, 0, "%s/%s %s %s: %lld verdicts differ", op->name, cd->name,
                                 nmo_fmt_name(dt), nmo_family_name(f), (long long)diff);
                    cr_expect(a.n_pass == b.n_pass && a.n_fail == b.n_fail && a.n_inconc == b.n_inconc &&
                                  a.width_max == b.width_max && a.verdict == b.verdict,
                              "%s/%s %s %s: counts differ", op->name, cd->name, nmo_fmt_name(dt),
                              nmo_family_name(f));
                    cr_expect(a.has_worst == b.has_worst && a.worst.index == b.worst.index &&
                                  a.worst.k == b.worst.k,
                              "%s/%s %s %s: worst element differs (%lld vs %lld)", op->name, cd->name,
                              nmo_fmt_name(dt), nmo_family_name(f), (long long)a.worst.index,
                              (long long)b.worst.index);
                    for (int i = 0; i <= NMO_WIDTH_HIST; i++)
                        cr_expect_eq(a.width_hist[i], b.width_hist[i]);
                    nmo_report_free(&a);
                    nmo_report_free(&b);
                    cases++;
                }
        }
    }
    printf("raw-bit judge: %ld cases equal to the general judge\n", cases);
}
