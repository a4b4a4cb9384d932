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
        /* NMO_ENGINES_OP limits the run to one operator (while developing one) */
        const char *only = getenv("NMO_ENGINES_OP");
        if (only && *only && strcmp(only, op->name) != 0) continue;
        for (int ci = 0; ci < nmo_cand_count(); ci++) {
            const nmo_cand *cd = nmo_cand_at(ci);
            if (strcmp(cd->op, op->name) != 0) continue;
            if (only_default && cd != nmo_cand_find(op->name, NULL)) continue;
            for (int d = 0; d < 3; d++)
                for (int f = 0; f < NMO_FAM_COUNT; f++)
                    for (int h = 0; h < nsh; h++) {
                        nmo_plan p;
                        const nmo_plan *pp = plan_for(nmo_test_dtypes[d], &p);
                        if (!pp) continue;
                        nmo_err err = {{0}};
                        int64_t ne = 0;
                        int64_t diff = nmo_test_engines_differ(op, cd, pp, f, 7, &sh[h], &ne, &err);
                        cr_assert_geq(diff, 0, "%s/%s: %s", op->name, cd->name, err.msg);
                        cr_expect_eq(diff, 0, "%s/%s dtype=%s family=%s shape#%d: %lld elements differ",
                                     op->name, cd->name, nmo_fmt_name(nmo_test_dtypes[d]),
                                     nmo_family_name(f), h, (long long)diff);
                        cases++;
                        esc += ne;
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

Test(engines, fast_plus_escalation_equals_certified, .timeout = 1200) { run_all(plan_default, 0); }
Test(engines, forced_escalation_equals_certified, .timeout = 600) { run_all(plan_fp64_compute, 1); }
Test(engines, ftz_plans_equal_certified, .timeout = 600) { run_all(plan_ftz, 1); }
