/* Detection (negative controls, registry-driven): every mutant FAILs on at least one
 * family for some dtype and shape. Prints the family x mutant table. NMO_OPS=a,b,c: those
 * operators only (tests/harness.h). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

Test(detection, every_mutant_fails_somewhere, .timeout = 1200)
{
    for (int oi = 0; oi < nmo_op_count(); oi++) {
        const nmo_op *op = nmo_op_at(oi);
        if (!nmo_test_op_selected(op->name)) continue;
        nmo_test_shape sh[4];
        int nsh = nmo_test_shapes(op, sh, 0);
        int nmut = 0;
        printf("\n%-10s %-20s", op->name, "mutant");
        for (int f = 0; f < NMO_FAM_COUNT; f++) printf(" %-8.8s", nmo_family_name(f));
        printf("\n");
        for (int ci = 0; ci < nmo_cand_count(); ci++) {
            const nmo_cand *cd = nmo_cand_at(ci);
            if (strcmp(cd->op, op->name) != 0 || cd->correct) continue;
            nmut++;
            int caught_any = 0;
            printf("%-10s %-20s", "", cd->name);
            for (int f = 0; f < NMO_FAM_COUNT; f++) {
                int caught = 0;
                for (int d = 0; d < 3 && !caught; d++)
                    for (int h = 0; h < nsh && !caught; h++) {
                        nmo_report rep;
                        nmo_err err = {{0}};
                        nmo_status st = nmo_test_run(&rep, op, cd, nmo_test_dtypes[d], f, 1, &sh[h],
                                                     NULL, &err);
                        cr_assert_eq(st, NMO_OK, "%s/%s: %s", op->name, cd->name, err.msg);
                        caught = rep.verdict == NMO_FAIL;
                        nmo_report_free(&rep);
                    }
                caught_any |= caught;
                printf(" %-8s", caught ? "FAIL" : ".");
            }
            printf("\n");
            cr_expect(caught_any, "mutant %s/%s is never detected", op->name, cd->name);
        }
        cr_expect_geq(nmut, 4, "%s has %d mutants, need >= 4", op->name, nmut);
    }
}
