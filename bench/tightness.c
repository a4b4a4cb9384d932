/* nmo_tightness: how tight the reachable sets are. For every operator (registry-driven),
 * bf16 default plan, the default correct CPU candidate on the operator's large test
 * shape, families gaussian and near_degenerate: median / p99 / max reachable-set width
 * in output ulps (0 = a single value), the INCONCLUSIVE fraction and the verdict. */
#include <stdio.h>
#include <string.h>

#include "numoracle/numoracle.h"

int main(int argc, char **argv)
{
    const char *only = argc > 1 ? argv[1] : NULL;
    const int fams[2] = {NMO_FAM_GAUSSIAN, NMO_FAM_NEAR_DEGENERATE};
    printf("%-22s %-16s %-18s %7s %7s %9s %12s %s\n", "op", "family", "shape", "median", "p99",
           "max", "inconcl.", "verdict");
    for (int oi = 0; oi < nmo_op_count(); oi++) {
        const nmo_op *op = nmo_op_at(oi);
        if (only && strcmp(only, op->name) != 0) continue;
        const nmo_cand *cd = nmo_cand_find(op->name, NULL);
        const char *spec = op->test_shapes_large ? op->test_shapes_large : op->test_shapes;
        char buf[128];
        snprintf(buf, sizeof buf, "%s", spec ? spec : "3x4097");
        char *semi = strchr(buf, ';');
        if (semi) *semi = 0;
        int nsh;
        int64_t sh[NMO_MAX_DIMS];
        nmo_err err;
        if (!cd || nmo_shape_parse(&nsh, sh, buf, &err) != NMO_OK) continue;
        for (int f = 0; f < 2; f++) {
            nmo_plan p;
            nmo_plan_default(&p, NMO_BF16);
            nmo_case c;
            if (nmo_case_init(&c, op, &p, nsh, sh, &err) != NMO_OK) {
                printf("%-22s %s\n", op->name, err.msg);
                break;
            }
            nmo_case_fill(&c, fams[f], 1);
            nmo_tensor out[NMO_MAX_TENSORS];
            memset(out, 0, sizeof out);
            nmo_case_alloc_outputs(&c, out, 0, &err);
            nmo_cand_args a = {c.in, c.n_in, out, c.n_out, c.param, op->n_param, &c.plan};
            nmo_report rep;
            if (cd->run(&a, &err) == NMO_OK && nmo_check(&rep, &c, out, NULL, &err) == NMO_OK) {
                printf("%-22s %-16s %-18s %7g %7g %9lld %12.6f %s\n", op->name,
                       nmo_family_name(fams[f]), buf, nmo_report_width_quantile(&rep, 0.5),
                       nmo_report_width_quantile(&rep, 0.99), (long long)rep.width_max,
                       rep.n ? (double)rep.n_inconc / (double)rep.n : 0.0,
                       nmo_verdict_name(rep.verdict));
                nmo_report_free(&rep);
            } else {
                printf("%-22s %-16s %s\n", op->name, nmo_family_name(fams[f]), err.msg);
            }
            for (int k = 0; k < c.n_out; k++) nmo_tensor_free(&out[k]);
            nmo_case_free(&c);
        }
    }
    return 0;
}
