/* numoracle check: build the case, obtain the candidate's outputs (a CPU candidate run
 * here, or files produced elsewhere), judge every element, print the report.
 * Exit code = verdict: 0 PASS, 1 FAIL, 3 INCONCLUSIVE; 2 on usage or input errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"

static const char check_epilog[] =
    "candidates:\n"
    "  cpu            the operator's default correct CPU candidate\n"
    "  cpu:NAME       a CPU candidate by name (see numoracle candidates --op OP)\n"
    "  file:OUT.bin   an output produced elsewhere: raw little-endian, dtype plan.out,\n"
    "                 dims of the output; several outputs: file:A.bin,B.bin in output order\n"
    "\n"
    "The plan starts from the dtype's default (numoracle ops) and --plan text overrides\n"
    "fields, e.g. --plan 'fn=ulp:2 round=rz'. Inputs not given with --input are generated\n"
    "from --family and --seed; given ones are raw little-endian files of dtype plan.in.\n"
    "\n"
    "exit: 0 PASS, 1 FAIL, 3 INCONCLUSIVE, 2 usage or input error\n";

static int load_candidate(cli_problem *pb, const char *spec, nmo_tensor *out, char *name,
                          size_t namelen, int *nread)
{
    const nmo_case *c = &pb->c;
    const nmo_op *op = pb->op;
    nmo_err err = {{0}};
    *nread = 0;
    if (strncmp(spec, "file:", 5) == 0) {
        snprintf(name, namelen, "%s", spec);
        const char *p = spec + 5;
        char *list = strdup(p);
        if (!list) return cli_error("out of memory");
        char *files[NMO_MAX_TENSORS + 1];
        int n = 0;
        for (char *s = list;;) {
            char *comma = strchr(s, ',');
            if (comma) *comma = '\0';
            if (n <= NMO_MAX_TENSORS) files[n] = s;
            n++;
            if (!comma) break;
            s = comma + 1;
        }
        int bad = 0;
        for (int i = 0; i < n && i <= NMO_MAX_TENSORS; i++) bad |= files[i][0] == '\0';
        if (bad || n != c->n_out) {
            char outs[256];
            size_t off = 0;
            for (int k = 0; k < c->n_out; k++)
                off += (size_t)snprintf(outs + off, sizeof outs - off, k ? ",%s" : "%s",
                                        op->out[k].name);
            free(list);
            return cli_error("candidate '%s': op %s has %d output%s (%s): give file:%s", spec,
                             op->name, c->n_out, c->n_out == 1 ? "" : "s", outs,
                             c->n_out == 1 ? "OUT.bin" : "A.bin,B.bin,... in that order");
        }
        for (int k = 0; k < c->n_out; k++) {
            if (nmo_tensor_init(&out[k], c->plan.out, c->out[k].ndims, c->out[k].dims, &err) !=
                    NMO_OK ||
                nmo_tensor_read_bin(&out[k], files[k], &err) != NMO_OK) {
                free(list);
                return cli_error("%s", err.msg);
            }
            (*nread)++;
        }
        free(list);
        return 0;
    }

    const nmo_cand *cand = NULL;
    if (strcmp(spec, "cpu") == 0) cand = nmo_cand_find(op->name, NULL);
    else if (strncmp(spec, "cpu:", 4) == 0 && spec[4]) cand = nmo_cand_find(op->name, spec + 4);
    if (!cand)
        return cli_error("unknown candidate '%s' for op %s (see numoracle candidates --op %s)",
                         spec, op->name, op->name);
    snprintf(name, namelen, "cpu:%s", cand->name);
    for (int k = 0; k < c->n_out; k++) {
        out[k] = c->out[k];
        out[k].data = NULL;
        out[k].own = 0;
        if (nmo_tensor_alloc(&out[k], &err) != NMO_OK) return cli_error("%s", err.msg);
        (*nread)++;
    }
    nmo_cand_args a = {
        .in = c->in, .n_in = c->n_in, .out = out, .n_out = c->n_out,
        .param = c->param, .n_param = op->n_param, .plan = &c->plan,
    };
    if (cand->run(&a, &err) != NMO_OK) return cli_error("candidate %s: %s", name, err.msg);
    return 0;
}

/* The library's JSON report, plus how the inputs were obtained and the command line. */
static char *check_json(const nmo_report *rep, const cli_problem *pb, const char *name,
                        int argc, char **argv)
{
    char *base = nmo_report_json(rep, &pb->c, name, nmo_family_name(pb->family), pb->seed);
    if (!base) return NULL;
    cJSON *o = cJSON_Parse(base);
    if (!o) return base;
    free(base);
    cJSON *in = cli_inputs_json(pb);
    if (in) cJSON_AddItemToObject(o, "inputs", in);
    char *cmd = cli_command_line(argc, argv);
    if (cmd) cJSON_AddStringToObject(o, "command", cmd);
    free(cmd);
    char *s = cJSON_Print(o);
    cJSON_Delete(o);
    return s;
}

int cmd_check(int argc, char **argv)
{
    cli_opt opts[] = {
        CLI_PROBLEM_OPTS,
        {"candidate", "C", 1, 0, "cpu, cpu:NAME or file:OUT.bin[,OUT2.bin...]", NULL, {0}, 0},
        {"json", "FILE", 0, 0, "also write the JSON report to FILE (atomically)", NULL, {0}, 0},
    };
    cli_cmd cmd = {
        .verb = "check",
        .summary = "Judge a candidate's outputs against the certified reachable sets of the plan.",
        .usage = "check --op OP --dtype DT --shape SHAPE --candidate C [options]",
        .epilog = check_epilog,
        .opts = opts,
        .nopts = (int)(sizeof opts / sizeof opts[0]),
    };
    int rc = cli_parse(&cmd, argc, argv);
    if (rc) return rc < 0 ? 0 : rc;

    /* cheap checks first: the op, the candidate name and the engine */
    const nmo_op *op;
    if ((rc = cli_resolve_op(&op, cli_val(&cmd, "op")))) return rc;
    const char *spec = cli_val(&cmd, "candidate");
    if (strncmp(spec, "file:", 5) != 0) {
        const nmo_cand *cd = NULL;
        if (strcmp(spec, "cpu") == 0) cd = nmo_cand_find(op->name, NULL);
        else if (strncmp(spec, "cpu:", 4) == 0 && spec[4]) cd = nmo_cand_find(op->name, spec + 4);
        if (!cd)
            return cli_error("unknown candidate '%s' for op %s (see numoracle candidates --op %s)",
                             spec, op->name, op->name);
    }
    nmo_check_opts co = {0};
    if ((rc = cli_engine(&co, cli_val(&cmd, "engine")))) return rc;

    cli_problem pb;
    if ((rc = cli_problem_build(&pb, &cmd))) return rc;

    nmo_tensor out[NMO_MAX_TENSORS];
    memset(out, 0, sizeof out);
    char name[1100];
    int nout = 0;
    rc = load_candidate(&pb, spec, out, name, sizeof name, &nout);
    nmo_report rep;
    memset(&rep, 0, sizeof rep);
    nmo_err err = {{0}};
    if (!rc && nmo_check(&rep, &pb.c, out, &co, &err) != NMO_OK) rc = cli_error("%s", err.msg);

    const char *jpath = cli_val(&cmd, "json");
    if (!rc && jpath) {
        char *js = check_json(&rep, &pb, name, argc, argv);
        cli_stage st = {0};
        if (!js) rc = cli_error("out of memory");
        else if (!(rc = cli_stage_file(&st, jpath, js, strlen(js))))
            rc = cli_stage_commit(&st);
        free(js);
    }
    if (!rc) {
        nmo_report_print(stdout, &rep, &pb.c, name);
        fflush(stdout);
        rc = (int)rep.verdict;
    }
    nmo_report_free(&rep);
    for (int k = 0; k < nout; k++) nmo_tensor_free(&out[k]);
    cli_problem_free(&pb);
    return rc;
}

