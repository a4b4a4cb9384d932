/* Soundness (registry-driven): every correct CPU variant of every operator PASSes or is
 * INCONCLUSIVE — never FAILs — over every family x fp32/bf16/fp16 (and the fp8 inputs an
 * operator lists: matmul, sdpa; default plans; a candidate that states its own plan,
 * nmo_cand.plan such as the eager inter=<dtype> forms, under that plan) x seeds x two shapes
 * (one with an odd reduction width); operators with optional inputs (saved statistics)
 * once with them given and once with them absent (recomputed by the reference; the
 * candidate reads the derived values: tests/test_recompute.c samples other
 * recomputations). A correct variant that declares its reduction geometry
 * (refs/cand/cand_geom.c) runs once more under it (statistics given). NMO_SEEDS sets the seed count (default 3 here;
 * `make soundness` runs 20 at the large shapes), NMO_LARGE=1 the large test shapes,
 * NMO_OPS=a,b,c restricts the run to those operators (the filter every registry-driven
 * test takes, tests/harness.h; tests/soundness_sweep.sh runs one process per operator). One summary line per operator is printed. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static int env_int(const char *name, int def)
{
    const char *s = getenv(name);
    return s && *s ? atoi(s) : def;
}

Test(soundness, correct_variants_never_fail, .timeout = 1200)
{
    int seeds = env_int("NMO_SEEDS", 3), large = env_int("NMO_LARGE", 0);
    long runs = 0, fails = 0, inconc = 0;
    for (int oi = 0; oi < nmo_op_count(); oi++) {
        const nmo_op *op = nmo_op_at(oi);
        if (!nmo_test_op_selected(op->name)) continue;
        long op_runs = runs, op_fails = fails, op_inconc = inconc, inc_fam[NMO_FAM_COUNT] = {0}, geo_runs = 0;
        nmo_test_shape sh[4];
        int nsh = nmo_test_shapes(op, sh, large);
        uint32_t opt = nmo_op_optional_mask(op);
        int ncorrect = 0, nplan = 0;
        for (int ci = 0; ci < nmo_cand_count(); ci++) {
            const nmo_cand *cd = nmo_cand_at(ci);
            if (strcmp(cd->op, op->name) != 0 || !(cd->correct || cd->plan)) continue;
            ncorrect += cd->correct;
            nplan += !cd->correct;
            nmo_fmt dts[5];
            int ndt = nmo_test_op_dtypes(op, dts);
            for (int d = 0; d < ndt; d++)
                for (int f = 0; f < NMO_FAM_COUNT; f++)
                    for (int s = 0; s < seeds; s++)
                        for (int h = 0; h < nsh; h++) {
                            /* ops with optional inputs: also with all of them absent
                             * (the reference recomputes what the candidate was given) */
                            /* absent meaning "never read" (nmo_op.absent_reads_none):
                             * the table's candidates read them; test_recompute runs
                             * the o-less sdpa_bwd candidate */
                            uint32_t abm = op->absent_reads_none ? 0 : opt;
                            for (int ab = 0; ab < (abm ? 2 : 1); ab++) {
                            nmo_report rep;
                            nmo_err err = {{0}};
                            nmo_status st = nmo_test_run_absent(&rep, op, cd, dts[d], f, (uint64_t)s + 1,
                                                                &sh[h], NULL, ab ? abm : 0, &err);
                            cr_assert_eq(st, NMO_OK, "%s/%s: %s", op->name, cd->name, err.msg);
                            runs++;
                            if (rep.verdict == NMO_INCONCLUSIVE) inconc++, inc_fam[f]++;
                            if (rep.verdict == NMO_FAIL) {
                                fails++;
                                cr_expect(0,
                                          "FALSE ALARM %s/%s%s%s dtype=%s family=%s seed=%d shape#%d%s: "
                                          "%lld fails, worst idx %lld cand %.9g R=[%.9g, %.9g]",
                                          op->name, cd->name, cd->plan ? " plan " : "",
                                          cd->plan ? cd->plan : "", nmo_fmt_name(dts[d]),
                                          nmo_family_name(f), s + 1, h, ab ? " (statistics recomputed)" : "",
                                          (long long)rep.n_fail, (long long)rep.worst.index,
                                          rep.worst.cand, rep.worst.rlo, rep.worst.rhi);
                            }
                            nmo_report_free(&rep);
                            }
                            /* under the reduction geometry the candidate declares
                             * (refs/cand/cand_geom.c): a narrower model, still 0 FAIL */
                            if (!nmo_cand_geom(cd) || !cd->correct) continue;
                            nmo_report rep;
                            nmo_err err = {{0}};
                            nmo_status st = nmo_test_run_geom(&rep, op, cd, dts[d], f, (uint64_t)s + 1, &sh[h],
                                                              NULL, &err);
                            cr_assert_eq(st, NMO_OK, "%s/%s geometry: %s", op->name, cd->name, err.msg);
                            runs++, geo_runs++;
                            if (rep.verdict == NMO_INCONCLUSIVE) inconc++, inc_fam[f]++;
                            if (rep.verdict == NMO_FAIL) {
                                fails++;
                                cr_expect(0,
                                          "FALSE ALARM %s/%s geometry %s dtype=%s family=%s seed=%d shape#%d: "
                                          "%lld fails, worst idx %lld cand %.9g R=[%.9g, %.9g]",
                                          op->name, cd->name, nmo_cand_geom(cd), nmo_fmt_name(dts[d]),
                                          nmo_family_name(f), s + 1, h, (long long)rep.n_fail,
                                          (long long)rep.worst.index, rep.worst.cand, rep.worst.rlo,
                                          rep.worst.rhi);
                            }
                            nmo_report_free(&rep);
                        }
        }
        cr_expect_geq(ncorrect, 3, "%s has %d correct variants, need >= 3", op->name, ncorrect);
        printf("soundness-op: %-22s variants=%d (+%d under their own plan) geometry_runs=%ld runs=%ld FAIL=%ld "
               "INCONCLUSIVE=%ld inc_by_family=", op->name, ncorrect, nplan, geo_runs, runs - op_runs,
               fails - op_fails, inconc - op_inconc);
        for (int f = 0; f < NMO_FAM_COUNT; f++) printf("%s%s:%ld", f ? "," : "", nmo_family_name(f), inc_fam[f]);
        printf("\n");
        fflush(stdout);
    }
    printf("soundness: %ld runs, %ld FAIL, %ld INCONCLUSIVE (seeds=%d)\n", runs, fails, inconc,
           seeds);
    cr_assert_eq(fails, 0);
}
