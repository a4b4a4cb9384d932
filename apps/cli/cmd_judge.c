/* numoracle judge: the four-judgment matrix of a contract (numoracle/contract.h) for
 * one operator or the whole catalog: forward and gradient accuracy (the certified oracle
 * under the contract's plan) and invariance (bitwise across batch compositions), per
 * dtype, under one backend profile, for one candidate per operator.
 * Exit: 0 every required cell PASS; 1 a required cell FAIL or REJECTED; 3 none of those
 * but a required cell INCONCLUSIVE or SKIPPED; 2 usage, input or contract errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "nmo_gpu.h"
#include "nmo_runner.h"

static const char judge_epilog[] =
    "The contract (contracts/README.md) states, per operator class x dtype x backend profile,\n"
    "which judgments are required and how: accuracy under a named plan (numoracle plans),\n"
    "invariance bitwise across named batch compositions (sizes, chunks:K, reverse, rotate:K,\n"
    "pad:P, stride:S, repeat; batch-summed outputs such as dw only across repeat and\n"
    "stride:S). Cells may be N/A with the contract's reason.\n"
    "\n"
    "candidates (--candidate [OP=]C, repeatable; OP= applies C to that operator only):\n"
    "  cpu            each operator's default correct CPU candidate (the default)\n"
    "  cpu:NAME       a CPU candidate by name (see numoracle candidates --op OP)\n"
    "  hip[:NAME]     a HIP kernel of this build (-Dgpu=cuda|hip)\n"
    "  plugin:PATH[:NAME]  a kernel of a plugin shared library\n"
    "A candidate whose run disagrees with the profile (backend, TF32, reduced-precision\n"
    "reduction, deterministic algorithms) is REJECTED before anything is judged.\n"
    "\n"
    "exit: 0 every required cell PASS, 1 a required cell FAIL or REJECTED, 3 otherwise a\n"
    "required cell INCONCLUSIVE or SKIPPED, 2 usage, input or contract error\n";

/* ---- candidates ------------------------------------------------------------------------ */

typedef struct {
    char spec[1100];
    char label[1400];
    const nmo_cand *cpu;
    int is_kernel;
    nmo_kernel_set ks;
    const nmo_plugin_kernel *k;
    nmo_fmt kin;            /* dtype the kernel was selected for */
    nmo_judge_cand jc;
} jcand;

typedef struct {
    nmo_plugin *plugin;
    char path[1024];
} jplugin;

/* Run a HIP or plugin kernel on c and copy its outputs into out (the harness's layout). */
static nmo_status run_kernel_cb(void *ctx, const nmo_case *c, nmo_tensor *out, nmo_err *err)
{
    jcand *jc = ctx;
    nmo_tensor got[NMO_MAX_TENSORS];
    memset(got, 0, sizeof got);
    nmo_run_info info;
    memset(&info, 0, sizeof info);
    nmo_status s = nmo_run_kernel(got, &info, jc->k, &jc->ks, c, err);
    free(info.provenance_json);
    if (s != NMO_OK) return s;
    if (info.skipped) return nmo_err_set(err, NMO_ERR_UNSUPPORTED, "%s", info.why);
    for (int k = 0; k < c->n_out; k++) {
        int64_t n = nmo_tensor_numel(&out[k]);
        for (int64_t i = 0; i < n; i++) nmo_tensor_set_bits(&out[k], i, nmo_tensor_get_bits(&got[k], i));
        nmo_tensor_free(&got[k]);
    }
    return NMO_OK;
}

/* The spec for op: "OP=C" for that op, else the last unqualified one, else "cpu". */
static const char *spec_for(cli_opt *co, const char *op)
{
    const char *any = "cpu";
    for (int i = 0; i < co->nvals; i++) {
        const char *v = co->vals[i], *eq = strchr(v, '=');
        if (eq && strncmp(v, op, (size_t)(eq - v)) == 0 && strlen(op) == (size_t)(eq - v)) return eq + 1;
        if (!eq) any = v;
    }
    return any;
}

/* Resolve spec for op (dtype dt selects kernels). Returns 0 or CLI_EXIT_USAGE. */
static int resolve_cand(jcand *jc, jplugin *pl, int *npl, const nmo_op *op, nmo_fmt dt, const char *spec)
{
    memset(jc, 0, sizeof *jc);
    snprintf(jc->spec, sizeof jc->spec, "%s", spec);
    jc->jc.tf32 = jc->jc.rpr = jc->jc.deterministic = -1;
    if (strcmp(spec, "cpu") == 0 || (strncmp(spec, "cpu:", 4) == 0 && spec[4])) {
        jc->cpu = nmo_cand_find(op->name, spec[3] ? spec + 4 : NULL);
        if (!jc->cpu)
            return cli_error("unknown candidate '%s' for op %s (see numoracle candidates --op %s; "
                             "--candidate %s=C gives that op its own)",
                             spec, op->name, op->name, op->name);
        snprintf(jc->label, sizeof jc->label, "cpu:%s", jc->cpu->name);
        jc->jc.label = jc->label;
        jc->jc.backend = "cpu";
        jc->jc.run = nmo_inv_run_cand;
        jc->jc.ctx = (void *)jc->cpu;
        /* the CPU emulations: fp32 arithmetic as written, no TF32, no 16-bit partials,
         * deterministic functions of their inputs */
        jc->jc.tf32 = 0;
        jc->jc.rpr = 0;
        jc->jc.deterministic = 1;
        /* one that follows the contract only with its intermediates (split-K partials)
         * stored in the storage dtype is a reduced-precision reduction */
        if (jc->cpu->plan && strstr(jc->cpu->plan, "inter=")) jc->jc.rpr = 1;
        return 0;
    }
    const char *name = NULL;
    char why[600];
    nmo_err err = {{0}};
    if (strcmp(spec, "hip") == 0 || strncmp(spec, "hip:", 4) == 0) {
        if (!nmo_gpu_enabled()) return cli_error("%s", NMO_GPU_NONE_MSG);
        if (spec[3] == ':') name = spec + 4;
        nmo_kernel_set_hip(&jc->ks);
        jc->jc.backend = "hip";
        /* what the runner knows of its own kernels (hip/kernels): fp32 FMA or MMA with fp32
         * accumulation, no TF32, no 16-bit partials, no atomics (profile "hip") */
        jc->jc.tf32 = 0;
        jc->jc.rpr = 0;
        jc->jc.deterministic = 1;
    } else if (strncmp(spec, "plugin:", 7) == 0 && spec[7]) {
        char path[1024];
        snprintf(path, sizeof path, "%s", spec + 7);
        FILE *f = fopen(path, "rb");
        char *colon = strrchr(path, ':');
        if (f) fclose(f);
        else if (colon && colon[1] && !strchr(colon + 1, '/')) {
            *colon = '\0';
            name = spec + 7 + (colon - path) + 1;
        }
        int i = 0;
        while (i < *npl && strcmp(pl[i].path, path) != 0) i++;
        if (i == *npl) {
            if (*npl >= 8) return cli_error("too many plugins");
            snprintf(pl[i].path, sizeof pl[i].path, "%s", path);
            if (nmo_plugin_open(&pl[i].plugin, path, &err) != NMO_OK) return cli_error("%s", err.msg);
            (*npl)++;
        }
        nmo_kernel_set_plugin(&jc->ks, pl[i].plugin);
        jc->jc.backend = "plugin";
    } else {
        return cli_error("unknown candidate '%s' (cpu[:NAME], hip[:NAME] or plugin:PATH[:NAME])", spec);
    }
    int r = nmo_kernel_select(&jc->k, &jc->ks, op->name, dt, dt, name, why, sizeof why);
    if (r < 0) return cli_error("unknown candidate '%s' for op %s: %s", spec, op->name, why);
    jc->is_kernel = 1;
    jc->kin = dt;
    if (r == 0) {
        snprintf(jc->label, sizeof jc->label, "%s:%s", jc->jc.backend, jc->k->name);
        jc->jc.run = run_kernel_cb;
        jc->jc.ctx = jc;
    } else {
        snprintf(jc->label, sizeof jc->label, "%s", why); /* no kernel: the SKIPPED cells say why */
    }
    jc->jc.label = jc->label;
    return 0;
}

/* ---- output ------------------------------------------------------------------------------ */

typedef struct {
    int op;          /* contract operator index */
    nmo_fmt dt;
    nmo_cell cell[NMO_J_COUNT];
    char cand[2][1400]; /* forward, gradient labels */
} jrow;

static const char *cell_text(char *buf, size_t n, const nmo_cell *c)
{
    snprintf(buf, n, "%s%s", nmo_cell_verdict_name(c->verdict),
             c->verdict != NMO_CELL_NA && !c->required ? " (opt)" : "");
    return buf;
}

static cJSON *cell_json(const nmo_cell *c, const nmo_op *op)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "verdict", nmo_cell_verdict_name(c->verdict));
    cJSON_AddBoolToObject(o, "required", c->required);
    cJSON_AddStringToObject(o, "stated_by", c->spec.where);
    cJSON_AddStringToObject(o, "detail", c->detail);
    if (c->verdict == NMO_CELL_NA) return o;
    char plan[32];
    snprintf(plan, sizeof plan, "%s", c->spec.plan[0] ? "" : "default");
    cJSON_AddStringToObject(o, "plan", c->spec.plan[0] ? c->spec.plan : plan);
    cJSON_AddStringToObject(o, "family", nmo_family_name((nmo_family)c->spec.family));
    if (c->nseeds) {
        cJSON *sd = cJSON_AddArrayToObject(o, "seeds");
        cJSON *sv = cJSON_AddArrayToObject(o, "seed_verdicts");
        for (int i = 0; i < c->nseeds; i++) {
            cJSON_AddItemToArray(sd, cJSON_CreateNumber((double)c->spec.seeds[i]));
            cJSON_AddItemToArray(sv, cJSON_CreateString(nmo_verdict_name(c->seed_verdict[i])));
        }
        cJSON_AddNumberToObject(o, "elements", (double)c->n_elems);
        cJSON_AddNumberToObject(o, "elements_fail", (double)c->n_fail);
        cJSON_AddNumberToObject(o, "elements_inconclusive", (double)c->n_inconc);
    }
    if (c->have_inv) {
        const nmo_inv_report *r = &c->inv;
        cJSON_AddStringToObject(o, "mode", "bitwise");
        cJSON_AddNumberToObject(o, "batch", (double)r->batch);
        cJSON *outs = cJSON_AddObjectToObject(o, "outputs");
        for (int k = 0; k < op->n_out; k++)
            cJSON_AddStringToObject(outs, op->out[k].name,
                                    r->layout.out_role[k] == NMO_INV_ROW ? "per-row" : "batch-summed");
        if (c->spec.sum_na[0]) cJSON_AddStringToObject(o, "batch_summed_na", c->spec.sum_na);
        cJSON *cf = cJSON_AddArrayToObject(o, "configurations");
        for (int i = 0; i < r->n; i++) {
            const nmo_inv_result *x = &r->res[i];
            cJSON *e = cJSON_CreateObject();
            char nb[32];
            cJSON_AddStringToObject(e, "configuration", nmo_inv_config_name(&x->cfg, nb, sizeof nb));
            cJSON_AddStringToObject(e, "outputs", x->summed ? "batch-summed" : "per-row");
            cJSON_AddStringToObject(e, "result", x->skipped ? "skipped" : x->identical ? "identical" : "differs");
            if (x->skipped) cJSON_AddStringToObject(e, "reason", x->why);
            cJSON_AddNumberToObject(e, "calls", (double)x->calls);
            cJSON_AddNumberToObject(e, "elements", (double)x->compared);
            if (!x->identical) {
                cJSON *d = cJSON_AddObjectToObject(e, "first_difference");
                cJSON_AddStringToObject(d, "output", op->out[x->k].name);
                if (x->row >= 0) cJSON_AddNumberToObject(d, "row", (double)x->row);
                cJSON_AddNumberToObject(d, "element", (double)x->elem);
                cJSON_AddNumberToObject(d, "value", x->got);
                cJSON_AddNumberToObject(d, "reference", x->ref);
                char bits[32];
                snprintf(bits, sizeof bits, "0x%llx", (unsigned long long)x->got_bits);
                cJSON_AddStringToObject(d, "bits", bits);
                snprintf(bits, sizeof bits, "0x%llx", (unsigned long long)x->ref_bits);
                cJSON_AddStringToObject(d, "reference_bits", bits);
            }
            cJSON_AddItemToArray(cf, e);
        }
    }
    return o;
}

/* ---- the verb, step by step ------------------------------------------------------------- */

/* Operators: every one of the contract (--all) or those --op names; a usage error names
 * an operator that is only a gradient, unknown, or not in the contract. */
static int select_ops(int *sel, int *nsel, const nmo_contract *ct, const cli_opt *oo, int all, const char *cpath)
{
    int rc = 0;
    *nsel = 0;
    if (all)
        for (int i = 0; i < nmo_contract_op_count(ct); i++) sel[(*nsel)++] = i;
    for (int i = 0; i < oo->nvals; i++) {
        int k = nmo_contract_op_find(ct, oo->vals[i]);
        if (k < 0) {
            const nmo_op *op = nmo_op_find(oo->vals[i]);
            int asgrad = -1;
            for (int q = 0; op && q < nmo_contract_op_count(ct); q++)
                if (nmo_contract_op_at(ct, q)->grad == op) asgrad = q;
            if (asgrad >= 0)
                rc = cli_error("op %s is the gradient of %s in %s: give --op %s", oo->vals[i],
                               nmo_contract_op_at(ct, asgrad)->op->name, cpath,
                               nmo_contract_op_at(ct, asgrad)->op->name);
            else if (!op) rc = cli_error("unknown op '%s' (see numoracle ops)", oo->vals[i]);
            else rc = cli_error("op %s is not in contract %s", oo->vals[i], cpath);
            return rc;
        }
        sel[(*nsel)++] = k;
    }
    return 0;
}

/* Dtypes (--dtype; none: every one), and candidate specs whose OP= names an operator. */
static int select_dtypes_cands(unsigned *dmask, const cli_opt *dto, const cli_opt *co)
{
    *dmask = 0;
    for (int i = 0; i < dto->nvals; i++) {
        nmo_fmt f;
        if (nmo_fmt_from_name(&f, dto->vals[i]) != NMO_OK) return cli_error("unknown dtype '%s'", dto->vals[i]);
        *dmask |= 1u << f;
    }
    if (!*dmask) *dmask = ~0u;
    for (int i = 0; i < co->nvals; i++) {
        const char *v = co->vals[i], *eq = strchr(v, '=');
        if (!eq) continue;
        char on[96];
        snprintf(on, sizeof on, "%.*s", (int)(eq - v), v);
        if (!nmo_op_find(on)) return cli_error("--candidate %s: unknown op '%s' (see numoracle ops)", v, on);
    }
    return 0;
}

/* The profile: named, or the first of the unqualified candidate's backend. */
static int select_profile(int *prof, const nmo_contract *ct, const char *pname, cli_opt *co, const char *cpath)
{
    if (pname) {
        *prof = nmo_contract_profile_find(ct, pname);
        if (*prof < 0) return cli_error("unknown profile '%s' in %s", pname, cpath);
        return 0;
    }
    const char *s0 = spec_for(co, "");
    const char *be = strncmp(s0, "plugin:", 7) == 0 ? "plugin" : strncmp(s0, "hip", 3) == 0 ? "hip" : "cpu";
    *prof = -1;
    for (int i = 0; i < nmo_contract_profile_count(ct) && *prof < 0; i++)
        if (strcmp(nmo_contract_profile_at(ct, i)->backend, be) == 0) *prof = i;
    if (*prof < 0) return cli_error("%s has no profile of backend %s: give --profile", cpath, be);
    return 0;
}

/* Rows: operator x dtype, every cell judged (before anything is printed). *rows is the
 * caller's to free, also on error; plugins opened go into pl. */
static int judge_rows(jrow **rowsp, int *nrowp, jplugin *pl, int *npl, const nmo_contract *ct, const int *sel,
                      int nsel, unsigned dmask, int prof, cli_opt *co)
{
    int rc = 0, nrow = 0, cap = 0;
    jrow *rows = NULL;
    nmo_err err = {{0}};
    for (int s = 0; s < nsel && !rc; s++) {
        const nmo_contract_op *cop = nmo_contract_op_at(ct, sel[s]);
        for (int f = 0; f < NMO_FMT_COUNT && !rc; f++) {
            if (!(cop->dtypes >> f & 1u) || !(dmask >> f & 1u)) continue;
            if (nrow == cap) {
                cap = cap ? 2 * cap : 32;
                jrow *nr = realloc(rows, (size_t)cap * sizeof *rows);
                if (!nr) {
                    rc = cli_error("out of memory");
                    break;
                }
                rows = nr;
            }
            jrow *r = &rows[nrow];
            memset(r, 0, sizeof *r);
            r->op = sel[s];
            r->dt = (nmo_fmt)f;
            jcand cf, cg;
            if ((rc = resolve_cand(&cf, pl, npl, cop->op, r->dt, spec_for(co, cop->op->name)))) break;
            memset(&cg, 0, sizeof cg);
            if (cop->grad && (rc = resolve_cand(&cg, pl, npl, cop->grad, r->dt, spec_for(co, cop->grad->name))))
                break;
            snprintf(r->cand[0], sizeof r->cand[0], "%s", cf.jc.run ? cf.label : "");
            snprintf(r->cand[1], sizeof r->cand[1], "%s", cop->grad && cg.jc.run ? cg.label : "");
            for (int j = 0; j < NMO_J_COUNT && !rc; j++) {
                int grad = j == NMO_J_GRAD_ACC || j == NMO_J_GRAD_INV;
                if (nmo_judge_cell(&r->cell[j], ct, r->op, r->dt, prof, (nmo_judgment)j, grad ? &cg.jc : &cf.jc,
                                   &err) != NMO_OK)
                    rc = cli_error("%s %s %s: %s", cop->op->name, nmo_fmt_name(r->dt),
                                   nmo_judgment_name((nmo_judgment)j), err.msg);
            }
            nrow++;
        }
    }
    *rowsp = rows;
    *nrowp = nrow;
    return rc;
}

/* Counts per verdict; required cells that fail (FAIL, REJECTED) or are not decided. */
static void summarize(const jrow *rows, int nrow, int counts[6], int *n_fail, int *n_inc)
{
    *n_fail = *n_inc = 0;
    for (int i = 0; i < nrow; i++)
        for (int j = 0; j < NMO_J_COUNT; j++) {
            const nmo_cell *c = &rows[i].cell[j];
            counts[c->verdict]++;
            if (!c->required) continue;
            *n_fail += c->verdict == NMO_CELL_FAIL || c->verdict == NMO_CELL_REJECTED;
            *n_inc += c->verdict == NMO_CELL_INCONCLUSIVE || c->verdict == NMO_CELL_SKIPPED;
        }
}

static int write_json(const char *jpath, const nmo_contract *ct, const char *cpath,
                      const nmo_contract_profile *pr, const jrow *rows, int nrow, const int counts[6], int n_fail,
                      int n_inc, const char *verdict, int argc, char **argv)
{
    int rc;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "numoracle_version", nmo_version());
    cJSON *cj = cJSON_AddObjectToObject(o, "contract");
    cJSON_AddStringToObject(cj, "name", nmo_contract_name(ct));
    cJSON_AddNumberToObject(cj, "version", nmo_contract_version(ct));
    cJSON_AddStringToObject(cj, "path", cpath);
    cJSON *pj = cJSON_AddObjectToObject(o, "profile");
    cJSON_AddStringToObject(pj, "name", pr->name);
    cJSON_AddStringToObject(pj, "backend", pr->backend);
    if (pr->device[0]) cJSON_AddStringToObject(pj, "device", pr->device);
    cJSON *cells = cJSON_AddArrayToObject(o, "rows");
    for (int i = 0; i < nrow; i++) {
        const nmo_contract_op *cop = nmo_contract_op_at(ct, rows[i].op);
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "op", cop->op->name);
        cJSON_AddStringToObject(e, "class", cop->cls);
        if (cop->grad) cJSON_AddStringToObject(e, "gradient_op", cop->grad->name);
        cJSON_AddStringToObject(e, "dtype", nmo_fmt_name(rows[i].dt));
        cJSON_AddStringToObject(e, "candidate", rows[i].cand[0]);
        if (cop->grad) cJSON_AddStringToObject(e, "gradient_candidate", rows[i].cand[1]);
        for (int j = 0; j < NMO_J_COUNT; j++)
            cJSON_AddItemToObject(e, nmo_judgment_name((nmo_judgment)j),
                                  cell_json(&rows[i].cell[j], j == NMO_J_GRAD_ACC || j == NMO_J_GRAD_INV
                                                                    ? cop->grad
                                                                    : cop->op));
        cJSON_AddItemToArray(cells, e);
    }
    cJSON *sm = cJSON_AddObjectToObject(o, "summary");
    for (int v = 0; v < 6; v++) cJSON_AddNumberToObject(sm, nmo_cell_verdict_name((nmo_cell_verdict)v), counts[v]);
    cJSON_AddNumberToObject(sm, "required_failing", n_fail);
    cJSON_AddNumberToObject(sm, "required_not_decided", n_inc);
    cJSON_AddStringToObject(o, "verdict", verdict);
    char *cmdl = cli_command_line(argc, argv);
    if (cmdl) cJSON_AddStringToObject(o, "command", cmdl);
    free(cmdl);
    char *js = cJSON_Print(o);
    cJSON_Delete(o);
    cli_stage st = {0};
    if (!js) rc = cli_error("out of memory");
    else if (!(rc = cli_stage_file(&st, jpath, js, strlen(js)))) rc = cli_stage_commit(&st);
    free(js);
    return rc;
}

/* The matrix, the candidates, every cell that is not PASS (N/A reasons once per operator
 * and judgment; --verbose: every cell and configuration), the counts and the verdict. */
static void print_matrix(const nmo_contract *ct, const char *cpath, const nmo_contract_profile *pr,
                         const jrow *rows, int nrow, const int counts[6], int n_fail, const char *verdict,
                         int verbose)
{
    printf("numoracle judge: contract %s (version %d, %s), profile %s (backend %s)\n", nmo_contract_name(ct),
           nmo_contract_version(ct), cpath, pr->name, pr->backend);
    printf("%-20s %-5s %-19s %-19s %-19s %s\n", "operator", "dtype", "forward_accuracy", "gradient_accuracy",
           "forward_invariance", "gradient_invariance");
    for (int i = 0; i < nrow; i++) {
        char b[4][48];
        printf("%-20s %-5s %-19s %-19s %-19s %s\n", nmo_contract_op_at(ct, rows[i].op)->op->name,
               nmo_fmt_name(rows[i].dt), cell_text(b[0], 48, &rows[i].cell[0]),
               cell_text(b[1], 48, &rows[i].cell[1]), cell_text(b[2], 48, &rows[i].cell[2]),
               cell_text(b[3], 48, &rows[i].cell[3]));
    }
    printf("candidates:");
    for (int i = 0; i < nrow; i++) /* each distinct label once, in row order */
        for (int g = 0; g < 2; g++) {
            const char *l = rows[i].cand[g];
            int seen = !l[0] || (g == 1 && strcmp(rows[i].cand[0], l) == 0);
            for (int q = 0; q < i && !seen; q++) seen = !strcmp(rows[q].cand[0], l) || !strcmp(rows[q].cand[1], l);
            if (!seen) printf(" %s", l);
        }
    printf("\n");
    for (int i = 0; i < nrow; i++) {
        const nmo_contract_op *cop = nmo_contract_op_at(ct, rows[i].op);
        for (int j = 0; j < NMO_J_COUNT; j++) {
            const nmo_cell *c = &rows[i].cell[j];
            if (c->verdict == NMO_CELL_PASS && !verbose) continue;
            if (c->verdict == NMO_CELL_NA) {
                int dup = 0;
                for (int q = 0; q < i && !dup; q++)
                    dup = rows[q].op == rows[i].op && rows[q].cell[j].verdict == NMO_CELL_NA;
                if (dup) continue;
                printf("  %s %s N/A: %s\n", cop->op->name, nmo_judgment_name((nmo_judgment)j), c->detail);
                continue;
            }
            printf("  %s %s %s %s: %s\n", cop->op->name, nmo_fmt_name(rows[i].dt),
                   nmo_judgment_name((nmo_judgment)j), nmo_cell_verdict_name(c->verdict), c->detail);
            if (verbose && c->have_inv) {
                const nmo_op *op = j == NMO_J_GRAD_INV ? cop->grad : cop->op;
                for (int q = 0; q < c->inv.n; q++) {
                    char line[768];
                    nmo_inv_result_text(line, sizeof line, &c->inv.res[q], op);
                    printf("    %s\n", line);
                }
            }
        }
    }
    printf("cells: %d PASS, %d FAIL, %d INCONCLUSIVE, %d N/A, %d SKIPPED, %d REJECTED; required failing: %d\n",
           counts[NMO_CELL_PASS], counts[NMO_CELL_FAIL], counts[NMO_CELL_INCONCLUSIVE], counts[NMO_CELL_NA],
           counts[NMO_CELL_SKIPPED], counts[NMO_CELL_REJECTED], n_fail);
    printf("verdict: %s\n", verdict);
    fflush(stdout);
}

int cmd_judge(int argc, char **argv)
{
    cli_opt opts[] = {
        {"contract", "FILE", 1, 0, "the contract (JSON, e.g. contracts/default.json)", NULL, {0}, 0},
        {"op", "OP", 0, 1, "an operator of the contract (its gradient comes with it)", NULL, {0}, 0},
        {"all", NULL, 0, 0, "every operator of the contract", NULL, {0}, 0},
        {"dtype", "DT", 0, 1, "only this dtype (default: every dtype the contract covers)", NULL, {0}, 0},
        {"profile", "P", 0, 0, "backend profile (default: the contract's first of the candidate's backend)",
         NULL, {0}, 0},
        {"candidate", "[OP=]C", 0, 1, "cpu (default), cpu:NAME, hip[:NAME], plugin:PATH[:NAME]", NULL, {0}, 0},
        {"json", "FILE", 0, 0, "also write the matrix as JSON to FILE (atomically)", NULL, {0}, 0},
        {"verbose", NULL, 0, 0, "print every cell's detail and every configuration", NULL, {0}, 0},
    };
    cli_cmd cmd = {
        .verb = "judge",
        .summary = "Print the four-judgment matrix (forward/gradient x accuracy/invariance) of a contract.",
        .usage = "judge --contract FILE (--op OP | --all) [options]",
        .epilog = judge_epilog,
        .opts = opts,
        .nopts = (int)(sizeof opts / sizeof opts[0]),
    };
    int rc = cli_parse(&cmd, argc, argv);
    if (rc) return rc < 0 ? 0 : rc;
    cli_opt *oo = cli_get(&cmd, "op"), *dto = cli_get(&cmd, "dtype"), *co = cli_get(&cmd, "candidate");
    int all = cli_val(&cmd, "all") != NULL;
    if (all == (oo->nvals > 0)) return cli_error("give --op OP or --all (not both)");

    nmo_err err = {{0}};
    nmo_contract *ct;
    const char *cpath = cli_val(&cmd, "contract");
    if (nmo_contract_load(&ct, cpath, &err) != NMO_OK) return cli_error("%s", err.msg);
    int nsel = 0, sel[64], prof = -1;
    unsigned dmask = 0;
    if ((rc = select_ops(sel, &nsel, ct, oo, all, cpath)) || (rc = select_dtypes_cands(&dmask, dto, co)) ||
        (rc = select_profile(&prof, ct, cli_val(&cmd, "profile"), co, cpath))) {
        nmo_contract_free(ct);
        return rc;
    }
    const nmo_contract_profile *pr = nmo_contract_profile_at(ct, prof);

    int nrow = 0;
    jrow *rows = NULL;
    jplugin pl[8];
    int npl = 0;
    memset(pl, 0, sizeof pl);
    rc = judge_rows(&rows, &nrow, pl, &npl, ct, sel, nsel, dmask, prof, co);
    if (!rc && nrow == 0) rc = cli_error("no operator of %s covers the dtypes asked for", cpath);

    int n_fail = 0, n_inc = 0, counts[6] = {0};
    if (!rc) summarize(rows, nrow, counts, &n_fail, &n_inc);
    const char *verdict = n_fail ? "FAIL" : n_inc ? "INCONCLUSIVE" : "PASS";
    const char *jpath = cli_val(&cmd, "json");
    if (!rc && jpath) rc = write_json(jpath, ct, cpath, pr, rows, nrow, counts, n_fail, n_inc, verdict, argc, argv);
    if (!rc) {
        print_matrix(ct, cpath, pr, rows, nrow, counts, n_fail, verdict, cli_val(&cmd, "verbose") != NULL);
        rc = n_fail ? 1 : n_inc ? 3 : 0;
    }
    free(rows);
    for (int i = 0; i < npl; i++) nmo_plugin_close(pl[i].plugin);
    nmo_contract_free(ct);
    return rc;
}
