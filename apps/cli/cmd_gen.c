/* numoracle gen: the generated inputs of a problem as raw tensors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* gen: write the generated inputs of a problem, so a kernel elsewhere (a GPU, PyTorch)
 * runs on exactly the inputs numoracle will later regenerate from (family, seed). */
int cmd_gen(int argc, char **argv)
{
    cli_opt opts[] = {
        CLI_PROBLEM_OPTS,
        {"out-dir", "DIR", 1, 0, "write DIR/<input>.bin for every input (atomically)", NULL, {0}, 0},
    };
    cli_cmd cmd = {
        .verb = "gen",
        .summary = "Write the inputs of a problem as raw little-endian .bin files (dtype plan.in,\n"
                   "or the operator's own dtype for labels and saved statistics), generated from\n"
                   "--family and --seed exactly as check and bounds generate them (inputs named with\n"
                   "--recompute are not written).",
        .usage = "gen --op OP --dtype DT --shape SHAPE --out-dir DIR [options]",
        .epilog = NULL,
        .opts = opts,
        .nopts = (int)(sizeof opts / sizeof opts[0]),
    };
    int rc = cli_parse(&cmd, argc, argv);
    if (rc) return rc < 0 ? 0 : rc;
    const nmo_op *op;
    if ((rc = cli_resolve_op(&op, cli_val(&cmd, "op")))) return rc;
    cli_problem pb;
    if ((rc = cli_problem_build(&pb, &cmd))) return rc;
    const char *dir = cli_val(&cmd, "out-dir");
    cli_stage st = {0};
    for (int k = 0; k < pb.c.n_in && !rc; k++) {
        if (pb.c.absent & (1u << k)) continue; /* --recompute: not an input of the problem */
        const nmo_tensor *t = &pb.c.in[k];
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.bin", dir, op->in[k].name);
        rc = cli_stage_file(&st, path, t->data,
                            (size_t)nmo_tensor_span(t) * nmo_fmt_bytes(t->dtype));
    }
    if (!rc) rc = cli_stage_commit(&st);
    else cli_stage_abort(&st);
    if (!rc)
        for (int k = 0; k < pb.c.n_in; k++)
            if (!(pb.c.absent & (1u << k)))
                printf("%s/%s.bin %s\n", dir, op->in[k].name, nmo_fmt_name(pb.c.in[k].dtype));
    cli_problem_free(&pb);
    return rc;
}
