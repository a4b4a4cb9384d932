/* numoracle candidates: the CPU candidates of an operator, or the HIP kernels of this build. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "nmo_gpu.h"
#include "nmo_runner.h"

int cmd_candidates(int argc, char **argv)
{
    cli_opt opts[] = {
        {"op", "OP", 1, 0, "operator (see numoracle ops)", NULL, {0}, 0},
        {"hip", NULL, 0, 0, "list this build's HIP kernels instead (-Dgpu=cuda|hip)", NULL, {0}, 0},
        {"plugin", "PATH", 0, 0, "list a plugin's kernels instead", NULL, {0}, 0},
    };
    cli_cmd cmd = {
        .verb = "candidates",
        .summary = "List an operator's CPU candidates, one per line: NAME correct|mutant "
                   "[plan='...'] description\n(plan: a mutant of the default plan that follows "
                   "that one, {dtype} = the dtype).\nThe first correct one is what --candidate cpu "
                   "runs. With --hip or "
                   "--plugin PATH: the\nkernels (NAME correct|mutant dtypes=... plan='...' description) "
                   "that --candidate hip:NAME\nor plugin:PATH:NAME runs.",
        .usage = "candidates --op OP [--hip | --plugin PATH]",
        .opts = opts,
        .nopts = 3,
    };
    int rc = cli_parse(&cmd, argc, argv);
    if (rc) return rc < 0 ? 0 : rc;
    const nmo_op *op;
    if ((rc = cli_resolve_op(&op, cli_val(&cmd, "op")))) return rc;
    const char *ppath = cli_val(&cmd, "plugin");
    if (cli_val(&cmd, "hip") || ppath) {
        if (cli_val(&cmd, "hip") && ppath) return cli_error("give --hip or --plugin, not both");
        nmo_kernel_set ks;
        nmo_plugin *pl = NULL;
        nmo_err err = {{0}};
        if (ppath) {
            if (nmo_plugin_open(&pl, ppath, &err) != NMO_OK) return cli_error("%s", err.msg);
            nmo_kernel_set_plugin(&ks, pl);
        } else {
            if (!nmo_gpu_enabled()) return cli_error("%s", NMO_GPU_NONE_MSG);
            nmo_kernel_set_hip(&ks);
        }
        for (int i = 0; i < nmo_kernel_set_count(&ks); i++) {
            const nmo_plugin_kernel *k = nmo_kernel_set_at(&ks, i);
            if (strcmp(k->op, op->name) != 0) continue;
            char dts[128];
            snprintf(dts, sizeof dts, "%s", k->dtypes);
            for (char *q = dts; *q; q++)
                if (*q == ' ') *q = ',';
            /* ABI 2: a kernel whose launch geometry is declared per shape says so */
            int geo = (!pl || (nmo_plugin_get_info(pl)->abi_version >= 2 &&
                               nmo_plugin_get_info(pl)->kernel_size >= sizeof(nmo_plugin_kernel))) &&
                      k->geometry;
            printf("%s %s dtypes=%s plan='%s'%s %s\n", k->name, k->correct ? "correct" : "mutant", dts,
                   k->plan ? k->plan : "", geo ? " geometry=per-shape" : "", k->desc ? k->desc : "");
        }
        nmo_plugin_close(pl);
        return 0;
    }
    for (int i = 0; i < nmo_cand_count(); i++) {
        const nmo_cand *c = nmo_cand_at(i);
        if (strcmp(c->op, op->name) != 0) continue;
        const char *g = nmo_cand_geom(c); /* the reduction geometry it declares (cand_geom.c) */
        char gb[96] = "";
        if (g) snprintf(gb, sizeof gb, " geometry='%s'", g);
        if (c->plan) /* a mutant of the default plan that follows this one */
            printf("%s %s plan='%s'%s %s\n", c->name, c->correct ? "correct" : "mutant", c->plan, gb, c->desc);
        else
            printf("%s %s%s %s\n", c->name, c->correct ? "correct" : "mutant", gb, c->desc);
    }
    return 0;
}
