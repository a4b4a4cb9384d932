/* numoracle ops, candidates, bounds: the registry listings, and the reachable sets of a
 * problem written as raw tensors (lo, hi, flags). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "nmo_internal.h" /* nmo__bound_bits */
#include "nmo_gpu.h"
#include "nmo_runner.h"

/* ---- ops ---------------------------------------------------------------------------- */

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
        for (const char *p = op->dtypes; *p;) {
            while (*p == ' ') p++;
            size_t l = strcspn(p, " ");
            if (!l) break;
            char name[32];
            snprintf(name, sizeof name, "%.*s", (int)l, p);
            p += l;
            nmo_fmt f;
            if (nmo_fmt_from_name(&f, name) != NMO_OK) continue;
            nmo_plan plan;
            char text[512];
            nmo_plan_default(&plan, f);
            printf("    %-12s %s\n", name, nmo_plan_to_string(&plan, text, sizeof text));
        }
        printf("  rounding: %s\n", op->rounding_doc);
        print_plan_fields(op);
    }
    return 0;
}

/* ---- candidates --------------------------------------------------------------------- */

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
            printf("%s %s dtypes=%s plan='%s' %s\n", k->name, k->correct ? "correct" : "mutant", dts,
                   k->plan ? k->plan : "", k->desc ? k->desc : "");
        }
        nmo_plugin_close(pl);
        return 0;
    }
    for (int i = 0; i < nmo_cand_count(); i++) {
        const nmo_cand *c = nmo_cand_at(i);
        if (strcmp(c->op, op->name) != 0) continue;
        if (c->plan) /* a mutant of the default plan that follows this one */
            printf("%s %s plan='%s' %s\n", c->name, c->correct ? "correct" : "mutant", c->plan, c->desc);
        else
            printf("%s %s %s\n", c->name, c->correct ? "correct" : "mutant", c->desc);
    }
    return 0;
}

/* ---- bounds ------------------------------------------------------------------------- */

/* "lo.bin" + "y" -> "lo.y.bin"; no extension: "lo" -> "lo.y". */
static char *suffixed(const char *path, const char *oname)
{
    size_t n = strlen(path) + strlen(oname) + 2;
    char *s = malloc(n);
    if (!s) return NULL;
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(path, '.');
    if (dot && (!slash || dot > slash + 1) && dot != path)
        snprintf(s, n, "%.*s.%s%s", (int)(dot - path), path, oname, dot);
    else snprintf(s, n, "%s.%s", path, oname);
    return s;
}

int cmd_bounds(int argc, char **argv)
{
    cli_opt opts[] = {
        CLI_PROBLEM_OPTS,
        {"lo", "FILE", 1, 0, "write the low ends of R (dtype plan.out)", NULL, {0}, 0},
        {"hi", "FILE", 1, 0, "write the high ends of R (dtype plan.out)", NULL, {0}, 0},
        {"flags", "FILE", 0, 0, "write one uint8 of NMO_BF_* flags per element", NULL, {0}, 0},
        {"json", "FILE", 0, 0, "also write a JSON summary to FILE (atomically)", NULL, {0}, 0},
    };
    cli_cmd cmd = {
        .verb = "bounds",
        .summary = "Write the reachable set R = [lo, hi] of every output element: a value c of\n"
                   "dtype plan.out is one a plan-following kernel can produce iff lo <= c <= hi\n"
                   "(or c is NaN and flags has NAN_OK). Flags per element: 1 NAN_OK (NaN is\n"
                   "possible), 2 NONFINITE (R unbounded: lo/hi are +-inf, +-max in formats\n"
                   "without inf), 4 WIDE (R spans more than max_ulps values), 8 MUST_NAN (every\n"
                   "implementation gives NaN; lo = hi = NaN). Elements flagged 2 or 4 judge\n"
                   "INCONCLUSIVE at best. Ops with several outputs write one file per output,\n"
                   "named by inserting .<output> before the extension (lo.bin -> lo.y.bin).",
        .usage = "bounds --op OP --dtype DT --shape SHAPE --lo FILE --hi FILE [options]",
        .epilog = NULL,
        .opts = opts,
        .nopts = (int)(sizeof opts / sizeof opts[0]),
    };
    int rc = cli_parse(&cmd, argc, argv);
    if (rc) return rc < 0 ? 0 : rc;
    const nmo_op *op;
    if ((rc = cli_resolve_op(&op, cli_val(&cmd, "op")))) return rc;
    nmo_check_opts co = {0};
    co.keep_bounds = 1;
    if ((rc = cli_enclosure(&co, &cmd))) return rc;

    cli_problem pb;
    if ((rc = cli_problem_build(&pb, &cmd))) return rc;
    const nmo_case *c = &pb.c;
    nmo_report rep;
    nmo_err err = {{0}};
    if (nmo_check(&rep, c, NULL, &co, &err) != NMO_OK) {
        cli_problem_free(&pb);
        return cli_error("%s", err.msg);
    }

    const char *plo = cli_val(&cmd, "lo"), *phi = cli_val(&cmd, "hi"),
               *pfl = cli_val(&cmd, "flags"), *pjs = cli_val(&cmd, "json");
    int64_t n_total = 0, n_inf = 0, n_wide = 0, n_nonfin = 0, n_nanok = 0, n_must = 0;
    cli_stage st = {0};
    char files[2048] = "";
    size_t foff = 0;
    cJSON *jfiles = cJSON_CreateObject();
    for (int k = 0; k < c->n_out && !rc; k++) {
        nmo_tensor lo = c->out[k], hi = c->out[k];
        lo.data = hi.data = NULL;
        lo.own = hi.own = 0;
        if (nmo_tensor_alloc(&lo, &err) != NMO_OK || nmo_tensor_alloc(&hi, &err) != NMO_OK) {
            rc = cli_error("%s", err.msg);
            nmo_tensor_free(&lo);
            break;
        }
        int64_t n = nmo_tensor_numel(&c->out[k]);
        for (int64_t i = 0; i < n; i++) {
            nmo_tensor_set_bits(&lo, i, nmo__bound_bits(c->plan.out, rep.rlo[k][i]));
            nmo_tensor_set_bits(&hi, i, nmo__bound_bits(c->plan.out, rep.rhi[k][i]));
            uint8_t f = rep.bflags[k][i];
            n_nanok += (f & NMO_BF_NAN_OK) != 0;
            n_nonfin += (f & NMO_BF_NONFINITE) != 0;
            n_wide += (f & NMO_BF_WIDE) != 0;
            n_must += (f & NMO_BF_MUST_NAN) != 0;
            n_inf += !(f & (NMO_BF_NONFINITE | NMO_BF_WIDE | NMO_BF_MUST_NAN));
        }
        n_total += n;
        size_t bytes = (size_t)n * nmo_fmt_bytes(c->plan.out);
        const char *oname = op->out[k].name;
        char *flo = c->n_out > 1 ? suffixed(plo, oname) : strdup(plo);
        char *fhi = c->n_out > 1 ? suffixed(phi, oname) : strdup(phi);
        char *ffl = pfl ? (c->n_out > 1 ? suffixed(pfl, oname) : strdup(pfl)) : NULL;
        if (!flo || !fhi || (pfl && !ffl)) rc = cli_error("out of memory");
        if (!rc) rc = cli_stage_file(&st, flo, lo.data, bytes);
        if (!rc) rc = cli_stage_file(&st, fhi, hi.data, bytes);
        if (!rc && ffl) rc = cli_stage_file(&st, ffl, rep.bflags[k], (size_t)n);
        if (!rc) {
            foff += (size_t)snprintf(files + foff, foff < sizeof files ? sizeof files - foff : 0,
                                     "%s%s %s%s%s", foff ? " " : "", flo, fhi, ffl ? " " : "",
                                     ffl ? ffl : "");
            cJSON *fo = cJSON_AddObjectToObject(jfiles, oname);
            cJSON_AddStringToObject(fo, "lo", flo);
            cJSON_AddStringToObject(fo, "hi", fhi);
            if (ffl) cJSON_AddStringToObject(fo, "flags", ffl);
        }
        free(flo), free(fhi), free(ffl);
        nmo_tensor_free(&lo);
        nmo_tensor_free(&hi);
    }
    double med = nmo_report_width_quantile(&rep, 0.5);
    if (!rc && pjs) {
        /* the library's report (op, shape, plan, engine, widths) minus the verdict fields,
         * plus the bound counts and the files */
        char *base = nmo_report_json(&rep, c, "", nmo_family_name(pb.family), pb.seed);
        cJSON *o = base ? cJSON_Parse(base) : NULL;
        free(base);
        if (!o) rc = cli_error("out of memory");
        else {
            cJSON_DeleteItemFromObject(o, "candidate");
            cJSON_DeleteItemFromObject(o, "verdict");
            cJSON_DeleteItemFromObject(o, "counts");
            cJSON_DeleteItemFromObject(o, "worst");
            cJSON *b = cJSON_AddObjectToObject(o, "bounds");
            cJSON_AddNumberToObject(b, "elements", (double)n_total);
            cJSON_AddNumberToObject(b, "informative", (double)n_inf);
            cJSON_AddNumberToObject(b, "wide", (double)n_wide);
            cJSON_AddNumberToObject(b, "not_finite", (double)n_nonfin);
            cJSON_AddNumberToObject(b, "nan_possible", (double)n_nanok);
            cJSON_AddNumberToObject(b, "must_nan", (double)n_must);
            cJSON_AddStringToObject(b, "dtype", nmo_fmt_name(c->plan.out));
            cJSON_AddItemToObject(b, "files", jfiles);
            jfiles = NULL;
            char *cl = cli_command_line(argc, argv);
            if (cl) cJSON_AddStringToObject(o, "command", cl);
            free(cl);
            char *js = nmo__json_print(o, 1);
            cJSON_Delete(o);
            if (!js) rc = cli_error("out of memory");
            else rc = cli_stage_file(&st, pjs, js, strlen(js));
            free(js);
        }
    }
    cJSON_Delete(jfiles);
    if (!rc) rc = cli_stage_commit(&st);
    else cli_stage_abort(&st);
    if (!rc) {
        char shape[128];
        cli_shape_text(shape, sizeof shape, c);
        printf("numoracle bounds: op=%s shape=%s out=%s elements=%lld informative=%lld "
               "wide=%lld not_finite=%lld nan_possible=%lld must_nan=%lld "
               "width_ulps_median=%g width_ulps_max=%lld escalated=%lld wrote %s\n",
               op->name, shape, nmo_fmt_name(c->plan.out), (long long)n_total, (long long)n_inf,
               (long long)n_wide, (long long)n_nonfin, (long long)n_nanok, (long long)n_must,
               med, (long long)rep.width_max, (long long)rep.n_escalated, files);
    }
    nmo_report_free(&rep);
    cli_problem_free(&pb);
    return rc;
}

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
