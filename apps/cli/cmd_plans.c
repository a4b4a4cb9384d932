/* numoracle plans: the named plan presets. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* numoracle plans: the named presets (oracle/preset.c) and what they set per operator. */
int cmd_plans(int argc, char **argv)
{
    cli_opt opts[] = {
        {"preset", "NAME", 0, 0, "print one preset only", NULL, {0}, 0},
        {"op", "OP", 0, 0, "print the plan each preset gives this operator and dtype", NULL, {0}, 0},
        {"dtype", "DT", 0, 0, "storage dtype for --op (default bf16)", NULL, {0}, 0},
    };
    cli_cmd cmd = {
        .verb = "plans",
        .summary = "List the named plan presets: what the libraries people run do (PyTorch eager and\n"
                   "compiled, Triton and Liger-Kernel, cuBLAS, cuDNN, the SDPA backends), each with\n"
                   "its sources. Use one with --plan 'preset=NAME [field=value ...]'.",
        .usage = "plans [--preset NAME] [--op OP [--dtype DT]]",
        .opts = opts,
        .nopts = 3,
    };
    int rc = cli_parse(&cmd, argc, argv);
    if (rc) return rc < 0 ? 0 : rc;
    const char *only = cli_val(&cmd, "preset"), *opn = cli_val(&cmd, "op");
    if (only) {
        int found = 0;
        for (int i = 0; i < nmo_preset_count(); i++) found |= strcmp(nmo_preset_name(i), only) == 0;
        if (!found) return cli_error("unknown preset '%s' (see numoracle plans)", only);
    }
    if (!opn) {
        nmo_preset_print(stdout, only);
        return 0;
    }
    const nmo_op *op;
    if ((rc = cli_resolve_op(&op, opn))) return rc;
    nmo_fmt dt = NMO_BF16;
    const char *dts = cli_val(&cmd, "dtype");
    if (dts && nmo_fmt_from_name(&dt, dts) != NMO_OK) return cli_error("unknown dtype '%s'", dts);
    for (int i = 0; i < nmo_preset_count(); i++) {
        const char *name = nmo_preset_name(i);
        if (only && strcmp(only, name) != 0) continue;
        nmo_plan p;
        nmo_plan_default(&p, dt);
        char text[64], buf[512];
        snprintf(text, sizeof text, "preset=%s", name);
        nmo_err err = {{0}};
        if (nmo_plan_parse_op(&p, op->name, text, &err) != NMO_OK) return cli_error("%s", err.msg);
        printf("%-24s %s\n", name, nmo_plan_to_string(&p, buf, sizeof buf));
    }
    return 0;
}
