/* numoracle ops: the operator registry, one operator per block (or the README table). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "nmo_gpu.h"
#include "nmo_runner.h"

/* "  plan:     models compute, acc; no stage for fn, inter; rejects sum=exact, sum=mma"
 * (nmo_op plan_fields / plan_vacuous; in, out, round, subnormals, max_ulps: every op) */
static void print_plan_fields(const nmo_op *op)
{
    static const struct {
        unsigned bit;
        const char *name;
    } f[] = {{NMO_PF_COMPUTE, "compute"}, {NMO_PF_ACC, "acc"},         {NMO_PF_FN, "fn"},
             {NMO_PF_INTER, "inter"},     {NMO_PF_SUM_EXACT, "sum=exact"}, {NMO_PF_SUM_MMA, "sum=mma"},
             {NMO_PF_SUM_GEOM, "sum=tree/blocked"}};
    const char *head[3] = {"models ", "; no stage for ", "; rejects "};
    printf("  plan:     ");
    for (int g = 0; g < 3; g++) {
        int n = 0;
        for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
            unsigned m = g == 0 ? op->plan_fields : g == 1 ? op->plan_vacuous
                                                           : ~(op->plan_fields | op->plan_vacuous);
            if (!(m & f[i].bit)) continue;
            printf("%s%s", n++ ? ", " : head[g], f[i].name);
        }
    }
    printf("\n");
}

/* "  geometry: sum=any unless declared; CPU candidates: block256 sum=blocked:n/256:8, ...;
 * HIP kernels: 9 of 18 declare theirs per shape": the reduction geometry in force (issue
 * 17): the default plan's `any`, what each correct CPU candidate declares (cand_geom.c,
 * tokens from the shape) and how many of this build's HIP kernels declare one (ABI 2). */
static void print_geometry(const nmo_op *op)
{
    printf("  geometry: sum=any unless declared");
    int n = 0;
    for (int i = 0; i < nmo_cand_count(); i++) {
        const nmo_cand *c = nmo_cand_at(i);
        const char *g = strcmp(c->op, op->name) == 0 && c->correct ? nmo_cand_geom(c) : NULL;
        if (g) printf("%s %s %s", n++ ? "," : "; CPU candidates:", c->name, g);
    }
    if (!n) printf("; no CPU candidate declares one");
    if (nmo_gpu_enabled()) {
        nmo_kernel_set ks;
        nmo_kernel_set_hip(&ks);
        int nk = 0, ng = 0;
        for (int i = 0; i < nmo_kernel_set_count(&ks); i++) {
            const nmo_plugin_kernel *k = nmo_kernel_set_at(&ks, i);
            if (strcmp(k->op, op->name) != 0 || !k->correct) continue;
            nk++, ng += k->geometry != NULL;
        }
        if (nk) printf("; HIP kernels: %d of %d correct declare theirs per shape", ng, nk);
    }
    printf("\n");
}

/* The README's operator list (between its "ops:begin" and "ops:end" markers), from the
 * registry: tests/check_readme_ops.sh fails when the README differs. */
static void print_ops_markdown(void)
{
    printf("%d operators, each with fp32/bf16/fp16 plans, a reference in `refs/<op>.c` and CPU\n"
           "candidates (correct variants and mutants) in `refs/cand/<op>_cand.c`:\n\n",
           nmo_op_count());
    printf("| operator | what it computes |\n|---|---|\n");
    for (int i = 0; i < nmo_op_count(); i++) {
        printf("| `%s` | ", nmo_op_at(i)->name);
        for (const char *q = nmo_op_at(i)->summary; *q; q++) printf(*q == '|' ? "\\|" : "%c", *q);
        printf(" |\n");
    }
}

int cmd_ops(int argc, char **argv)
{
    cli_opt opts[] = {
        {"op", "OP", 0, 0, "list only this operator", NULL, {0}, 0},
        {"markdown", NULL, 0, 0, "print the README's operator table (count, name, summary)", NULL, {0}, 0},
    };
    cli_cmd cmd = {
        .verb = "ops",
        .summary = "List the operators: summary, shape, inputs, outputs, parameters, dtypes with\n"
                   "their default plans, and the rounding points the reference encloses.",
        .usage = "ops [--op OP] [--markdown]",
        .opts = opts,
        .nopts = 2,
    };
    int rc = cli_parse(&cmd, argc, argv);
    if (rc) return rc < 0 ? 0 : rc;
    if (cli_val(&cmd, "markdown")) {
        if (cli_val(&cmd, "op")) return cli_error("--markdown lists every operator: drop --op");
        print_ops_markdown();
        return 0;
    }
    const nmo_op *only = NULL;
    if (cli_val(&cmd, "op") && (rc = cli_resolve_op(&only, cli_val(&cmd, "op")))) return rc;

    int first = 1;
    for (int i = 0; i < nmo_op_count(); i++) {
        const nmo_op *op = nmo_op_at(i);
        if (only && op != only) continue;
        if (!first) printf("\n");
        first = 0;
        printf("%s: %s\n", op->name, op->summary);
        printf("  shape:    %s\n", op->shape_doc);
        for (int k = 0; k < op->n_in; k++)
            printf("  %-9s %s: %s\n", k ? "" : "inputs:", op->in[k].name, op->in[k].doc);
        for (int k = 0; k < op->n_out; k++)
            printf("  %-9s %s: %s\n", k ? "" : "outputs:", op->out[k].name, op->out[k].doc);
        if (op->n_param == 0) printf("  params:   none\n");
        for (int k = 0; k < op->n_param; k++)
            printf("  %-9s %s=%g: %s\n", k ? "" : "params:", op->param[k].name, op->param[k].def,
                   op->param[k].doc);
        printf("  dtypes:   %s\n", op->dtypes);
        nmo_fmt fl[NMO_FMT_COUNT];
        for (int d = 0, nd = nmo_op_dtypes(op, fl, NMO_FMT_COUNT); d < nd; d++) {
            nmo_plan plan;
            char text[512];
            nmo_plan_default(&plan, fl[d]);
            printf("    %-12s %s\n", nmo_fmt_name(fl[d]), nmo_plan_to_string(&plan, text, sizeof text));
        }
        printf("  rounding: %s\n", op->rounding_doc);
        print_plan_fields(op);
        print_geometry(op);
    }
    return 0;
}
