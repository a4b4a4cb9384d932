/* numoracle check: build the case, obtain the candidate's outputs (a CPU candidate run
 * here, a HIP kernel of this build, a kernel of a plugin, or files produced elsewhere),
 * judge every element, print the report.
 * Exit code = verdict: 0 PASS, 1 FAIL, 3 INCONCLUSIVE; 2 on usage or input errors;
 * 4 SKIPPED: the candidate (a HIP kernel or a plugin) does not support the case, or a
 * plugin that is not on the expected list could not be loaded (RFC 0006: cases an engine
 * does not support are skipped and said so; expected plugins that fail are errors). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "nmo_internal.h"
#include "nmo_gpu.h"
#include "nmo_runner.h"
#include "nmo_gpu_oracle.h"

#define CLI_EXIT_SKIPPED 4

static const char check_epilog[] =
    "candidates:\n"
    "  cpu            the operator's default correct CPU candidate\n"
    "  cpu:NAME       a CPU candidate by name (see numoracle candidates --op OP)\n"
    "  hip            the operator's default correct HIP kernel (builds with -Dgpu=cuda|hip)\n"
    "  hip:NAME       a HIP kernel by name (correct variant or mutant)\n"
    "  plugin:PATH    the first correct kernel of a plugin shared library (numoracle/plugin.h)\n"
    "                 for the op and dtype; plugin:PATH:NAME a kernel by name\n"
    "  file:OUT.bin   an output produced elsewhere: raw little-endian, dtype plan.out,\n"
    "                 dims of the output; several outputs: file:A.bin,B.bin in output order\n"
    "\n"
    "HIP and plugin kernels declare the plan they honour; the check's plan is the dtype's\n"
    "default, then the kernel's plan, then --plan. Their outputs are poisoned (0xFF bytes)\n"
    "before the launch; the JSON report carries a provenance object (kernel, timing, device,\n"
    "architecture, driver, runtime, compiler, plugin). A case the kernel does not support\n"
    "(operator, dtype, shape) is SKIPPED (exit 4), as is a plugin that cannot be loaded,\n"
    "unless it is expected (--expect-plugin, or NMO_EXPECT_PLUGINS=P1:P2): then exit 2.\n"
    "\n"
    "The plan starts from the dtype's default (numoracle ops) and --plan text overrides\n"
    "fields, e.g. --plan 'fn=ulp:2 round=rz'.\n"
    "\n"
    "inputs: --input NAME=FILE reads a raw little-endian file of the input's dtype (plan.in,\n"
    "or the operator's own: fp32 labels and saved statistics; --input-dtype NAME=int32|int64\n"
    "for integer labels, converted exactly). A file: candidate ran on inputs numoracle did\n"
    "not make, so every input it reads must be given, unless --family is given: then the\n"
    "missing ones are generated from --family and --seed, and derived ones (saved\n"
    "statistics) derived from the final inputs. Optional inputs (saved statistics such as\n"
    "rms_norm_bwd's rstd) that are not given, or named with --recompute, are not read: the\n"
    "reference encloses every recomputation the plan allows. The report lists every\n"
    "parameter and where each input came from.\n"
    "\n"
    "exit: 0 PASS, 1 FAIL, 3 INCONCLUSIVE, 4 SKIPPED, 2 usage or input error\n";

/* file:A.bin,B.bin,...: one non-empty name per output of the op (checked before the
 * inputs, so that a bad spec is named first). */
static int file_spec_check(const nmo_op *op, const char *spec)
{
    const char *p = spec + 5;
    int n = 1, bad = !*p;
    for (const char *q = p; *q; q++)
        if (*q == ',') {
            n++;
            bad |= q == p || q[1] == ',' || q[1] == '\0';
        }
    if (!bad && n == op->n_out) return 0;
    char outs[256];
    size_t off = 0;
    for (int k = 0; k < op->n_out; k++)
        off += (size_t)snprintf(outs + off, sizeof outs - off, k ? ",%s" : "%s", op->out[k].name);
    return cli_error("candidate '%s': op %s has %d output%s (%s): give file:%s", spec, op->name, op->n_out,
                     op->n_out == 1 ? "" : "s", outs, op->n_out == 1 ? "OUT.bin" : "A.bin,B.bin,... in that order");
}

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
        if (n != c->n_out) { /* file_spec_check ran first */
            free(list);
            return file_spec_check(op, spec);
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
    if (nmo_case_alloc_outputs(c, out, 0, &err) != NMO_OK) return cli_error("%s", err.msg);
    *nread = c->n_out;
    nmo_cand_args a = {
        .in = c->in, .n_in = c->n_in, .out = out, .n_out = c->n_out,
        .param = c->param, .n_param = op->n_param, .plan = &c->plan,
    };
    if (cand->run(&a, &err) != NMO_OK) return cli_error("candidate %s: %s", name, err.msg);
    return 0;
}

/* ---- HIP and plugin kernels ------------------------------------------------------ */

typedef struct {
    int is_kernel;              /* hip[:NAME] or plugin:PATH[:NAME] */
    nmo_kernel_set ks;
    nmo_plugin *plugin;
    char path[1024];            /* plugin path */
    const char *name;           /* kernel name or NULL */
    char namebuf[256];
    const nmo_plugin_kernel *k; /* selected kernel */
    int skip;                   /* SKIPPED before running: why */
    char why[600];
} kcand;

/* plugin:PATH[:NAME] (cli_plugin_spec, shared with run and calibrate) */
static void parse_plugin_spec(kcand *kc, const char *rest)
{
    cli_plugin_spec(kc->path, sizeof kc->path, kc->namebuf, sizeof kc->namebuf, rest);
    if (kc->namebuf[0]) kc->name = kc->namebuf;
}

static int kernel_geometry(void *ctx, const nmo_case *c, char *text, size_t len)
{
    const kcand *kc = ctx;
    return kc->k ? nmo_kernel_geometry(&kc->ks, kc->k, c, text, len) : 0;
}

/* Resolve a hip or plugin candidate before the problem is built: the kernel's plan
 * enters the case. Returns 0, or CLI_EXIT_USAGE after printing the error. */
static int kernel_prepare(kcand *kc, cli_cmd *cmd, const nmo_op *op, const char *spec)
{
    memset(kc, 0, sizeof *kc);
    nmo_err err = {{0}};
    if (strcmp(spec, "hip") == 0 || strncmp(spec, "hip:", 4) == 0) {
        if (!nmo_gpu_enabled()) return cli_error("%s", NMO_GPU_NONE_MSG);
        kc->is_kernel = 1;
        if (spec[3] == ':') {
            if (!spec[4]) return cli_error("candidate 'hip:': missing kernel name");
            kc->name = spec + 4;
        }
        nmo_kernel_set_hip(&kc->ks);
    } else if (strncmp(spec, "plugin:", 7) == 0) {
        if (!spec[7]) return cli_error("candidate 'plugin:': missing path (plugin:PATH[:NAME])");
        kc->is_kernel = 1;
        double tmo; /* a bad NMO_PLUGIN_TIMEOUT is the user's error, not the plugin's skip */
        if (nmo_plugin_timeout(&tmo, &err) != NMO_OK) return cli_error("%s", err.msg);
        parse_plugin_spec(kc, spec + 7);
        /* expected plugins must all load: an expected plugin that fails is an error */
        cli_opt *eo = cli_get(cmd, "expect-plugin");
        if (nmo_plugin_check_expected(eo->vals, eo->nvals, &err) != NMO_OK)
            return cli_error("%s", err.msg);
        if (nmo_plugin_open(&kc->plugin, kc->path, &err) != NMO_OK) {
            if (nmo_plugin_is_expected(kc->path, eo->vals, eo->nvals)) return cli_error("%s", err.msg);
            kc->skip = 1;
            snprintf(kc->why, sizeof kc->why, "plugin not loaded: %s", err.msg);
            return 0;
        }
        nmo_kernel_set_plugin(&kc->ks, kc->plugin);
    } else {
        return 0;
    }

    /* the plan's storage dtypes select the kernel; bad values are reported later by the
     * problem builder with the usual messages */
    nmo_fmt dt;
    nmo_plan plan;
    const char *ut = cli_val(cmd, "plan");
    if (nmo_fmt_from_name(&dt, cli_val(cmd, "dtype")) != NMO_OK) return 0;
    nmo_plan_default(&plan, dt);
    if (ut && nmo_plan_parse(&plan, ut, NULL) != NMO_OK) return 0;
    int r = nmo_kernel_select(&kc->k, &kc->ks, op->name, plan.in, plan.out, kc->name, kc->why,
                              sizeof kc->why);
    if (r < 0) return cli_error("unknown candidate '%s' for op %s: %s", spec, op->name, kc->why);
    if (r > 0) {
        kc->skip = 1;
        return 0;
    }
    if (kc->k->plan && kc->k->plan[0]) {
        nmo_plan test;
        nmo_plan_default(&test, dt);
        if (nmo_plan_parse(&test, kc->k->plan, &err) != NMO_OK)
            return cli_error("kernel %s declares a bad plan: %s", kc->k->name, err.msg);
        cmd->base_plan = kc->k->plan; /* --plan is laid over it (cli_problem_build) */
    }
    cmd->geometry = kernel_geometry; /* ABI 2: the launch's reduction geometry at the shape */
    cmd->geometry_ctx = kc;
    return 0;
}

static void kernel_release(kcand *kc)
{
    nmo_plugin_close(kc->plugin);
    kc->plugin = NULL;
}

static void kernel_label(char *name, size_t n, const kcand *kc, const char *spec)
{
    if (!kc->k) snprintf(name, n, "%s", spec);
    else if (kc->plugin) snprintf(name, n, "plugin:%s:%s", kc->path, kc->k->name);
    else snprintf(name, n, "hip:%s", kc->k->name);
}

/* SKIPPED: the report's head, the verdict and the reason; JSON when asked. */
static int report_skipped(const cli_problem *pb, const char *name, const char *why,
                          const char *jpath, int argc, char **argv)
{
    char shape[128], plan[512];
    cli_shape_text(shape, sizeof shape, &pb->c);
    nmo_plan_to_string(&pb->c.plan, plan, sizeof plan);
    if (jpath) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "numoracle_version", nmo_version());
        cJSON_AddStringToObject(o, "op", pb->op->name);
        cJSON *sh = cJSON_AddArrayToObject(o, "shape");
        for (int i = 0; i < pb->c.nshape; i++)
            cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)pb->c.shape[i]));
        cJSON_AddStringToObject(o, "family", nmo_family_name(pb->family));
        cJSON_AddNumberToObject(o, "seed", (double)pb->seed);
        cJSON_AddStringToObject(o, "candidate", name);
        cJSON_AddStringToObject(o, "plan_text", plan);
        cJSON_AddStringToObject(o, "verdict", "SKIPPED");
        cJSON_AddStringToObject(o, "reason", why);
        char *cmdl = cli_command_line(argc, argv);
        if (cmdl) cJSON_AddStringToObject(o, "command", cmdl);
        free(cmdl);
        char *js = nmo__json_print(o, 1);
        cJSON_Delete(o);
        cli_stage st = {0};
        int rc;
        if (!js) rc = cli_error("out of memory");
        else if (!(rc = cli_stage_file(&st, jpath, js, strlen(js)))) rc = cli_stage_commit(&st);
        free(js);
        if (rc) return rc;
    }
    printf("numoracle check: op=%s shape=%s candidate=%s\n", pb->op->name, shape, name);
    printf("plan: %s\n", plan);
    nmo_report_print_case(stdout, &pb->c);
    printf("verdict: SKIPPED\n");
    printf("  reason: %s\n", why);
    fflush(stdout);
    return CLI_EXIT_SKIPPED;
}

static const char *sv(const cJSON *o, const char *key)
{
    const char *v = cJSON_GetStringValue(cJSON_GetObjectItem(o, key));
    return v ? v : "?";
}

/* One line of provenance under the report (the JSON report has all of it). */
static void print_provenance(const char *prov)
{
    cJSON *o = prov ? cJSON_Parse(prov) : NULL;
    if (!o) return;
    cJSON *ms = cJSON_GetObjectItem(o, "kernel_ms");
    cJSON *gpu = cJSON_GetObjectItem(o, "gpu");
    printf("  kernel time: %.4f ms (%s memory, outputs poisoned before the launch)\n",
           cJSON_IsNumber(ms) ? ms->valuedouble : 0.0,
           sv(o, "memory"));
    if (gpu) {
        cJSON *dev = cJSON_GetObjectItem(gpu, "device");
        printf("  device: %s (%s), driver %s, runtime %s, %s\n", sv(dev, "name"), sv(dev, "arch"),
               sv(gpu, "driver_version"), sv(gpu, "runtime_version"), sv(gpu, "compiler"));
    }
    cJSON_Delete(o);
}

/* The library's JSON report (inputs and their sources included), plus the command line. */
static char *check_json(const nmo_report *rep, const cli_problem *pb, const char *name,
                        const char *prov, int argc, char **argv)
{
    char *base = nmo_report_json_prov(rep, &pb->c, name, nmo_family_name(pb->family), pb->seed, prov);
    if (!base) return NULL;
    cJSON *o = cJSON_Parse(base);
    if (!o) return base;
    free(base);
    char *cmd = cli_command_line(argc, argv);
    if (cmd) cJSON_AddStringToObject(o, "command", cmd);
    free(cmd);
    char *s = nmo__json_print(o, 1);
    cJSON_Delete(o);
    return s;
}

int cmd_check(int argc, char **argv)
{
    cli_opt opts[] = {
        CLI_PROBLEM_OPTS,
        {"candidate", "C", 1, 0, "cpu[:NAME], hip[:NAME], plugin:PATH[:NAME] or file:OUT.bin[,...]",
         NULL, {0}, 0},
        {"json", "FILE", 0, 0, "also write the JSON report to FILE (atomically)", NULL, {0}, 0},
        {"expect-plugin", "PATH", 0, 1,
         "a plugin that must load: failing to is an error, not a skip (also NMO_EXPECT_PLUGINS)",
         NULL, {0}, 0},
        {"oracle-device", "D", 0, 0,
         "cpu (default) or gpu: the GPU tier judges the outputs on the device (a HIP or device "
         "plugin kernel's where it wrote them; builds with -Dgpu=cuda|hip|sim)", NULL, {0}, 0},
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
    kcand kc;
    if ((rc = kernel_prepare(&kc, &cmd, op, spec))) {
        kernel_release(&kc);
        return rc;
    }
    if (strncmp(spec, "file:", 5) == 0 && (rc = file_spec_check(op, spec))) return rc;
    if (!kc.is_kernel && strncmp(spec, "file:", 5) != 0) {
        const nmo_cand *cd = NULL;
        if (strcmp(spec, "cpu") == 0) cd = nmo_cand_find(op->name, NULL);
        else if (strncmp(spec, "cpu:", 4) == 0 && spec[4]) cd = nmo_cand_find(op->name, spec + 4);
        if (!cd)
            return cli_error("unknown candidate '%s' for op %s (see numoracle candidates --op %s)",
                             spec, op->name, op->name);
    }
    nmo_check_opts co = {0};
    if ((rc = cli_enclosure(&co, &cmd))) {
        kernel_release(&kc);
        return rc;
    }
    const char *odev = cli_val(&cmd, "oracle-device");
    int on_gpu = odev && strcmp(odev, "gpu") == 0;
    if (odev && !on_gpu && strcmp(odev, "cpu") != 0) {
        kernel_release(&kc);
        return cli_error("--oracle-device '%s': expected cpu or gpu", odev);
    }
    if (on_gpu && !nmo_gpu_enabled()) {
        kernel_release(&kc);
        return cli_error("--oracle-device gpu: this build has no GPU tier (build with -Dgpu=cuda, hip or sim)");
    }
    if (on_gpu && (co.mode == NMO_MODE_CERT || co.keep_enc)) {
        kernel_release(&kc);
        return cli_error("--oracle-device gpu: the GPU tier is the fast engine with escalation (no --engine cert)");
    }

    cli_problem pb;
    if ((rc = cli_problem_build(&pb, &cmd))) {
        kernel_release(&kc);
        return rc;
    }
    const char *gwhy = NULL;
    if (on_gpu && !nmo_gpu_check_supported(&pb.c, &gwhy)) {
        rc = cli_error("--oracle-device gpu: %s", gwhy);
        cli_problem_free(&pb);
        kernel_release(&kc);
        return rc;
    }
    nmo_staged stg;
    int staged = 0, on_dev = 0;

    nmo_tensor out[NMO_MAX_TENSORS];
    memset(out, 0, sizeof out);
    char name[1400];
    int nout = 0;
    const char *jpath = cli_val(&cmd, "json");
    nmo_run_info info;
    memset(&info, 0, sizeof info);
    if (kc.is_kernel) {
        kernel_label(name, sizeof name, &kc, spec);
        if (kc.skip) {
            rc = report_skipped(&pb, name, kc.why, jpath, argc, argv);
            cli_problem_free(&pb);
            kernel_release(&kc);
            return rc;
        }
        nmo_err kerr = {{0}};
        nmo_status ks = on_gpu ? nmo_run_kernel_staged(&stg, out, &on_dev, &info, kc.k, &kc.ks, &pb.c, &kerr)
                               : nmo_run_kernel(out, &info, kc.k, &kc.ks, &pb.c, &kerr);
        staged = on_gpu && ks == NMO_OK;
        if (ks != NMO_OK) {
            rc = cli_error("candidate %s: %s", name, kerr.msg);
        } else if (info.skipped) {
            rc = report_skipped(&pb, name, info.why, jpath, argc, argv);
            free(info.provenance_json);
            if (staged) nmo_staged_free(&stg);
            cli_problem_free(&pb);
            kernel_release(&kc);
            return rc;
        } else if (!on_dev) {
            nout = pb.c.n_out;
        }
    } else {
        rc = load_candidate(&pb, spec, out, name, sizeof name, &nout);
    }
    nmo_report rep;
    memset(&rep, 0, sizeof rep);
    nmo_err err = {{0}};
    if (!rc && on_gpu) {
        /* the GPU tier: the kernel's outputs where it wrote them, else uploaded */
        void *cdev = on_dev ? stg.buf_out[0] : NULL;
        size_t cb = (size_t)nmo_tensor_numel(&pb.c.out[0]) * nmo_fmt_bytes(pb.c.plan.out);
        if (!on_dev && (nmo_gpu_alloc(&cdev, cb, &err) != NMO_OK || nmo_gpu_h2d(cdev, out[0].data, cb, &err) != NMO_OK))
            rc = cli_error("--oracle-device gpu: %s", err.msg);
        if (!rc && nmo_gpu_check(&rep, &pb.c, cdev, on_dev ? (const void *const *)stg.buf_in : NULL, &co, NULL,
                                 &err) != NMO_OK)
            rc = cli_error("%s", err.msg);
        if (!on_dev) nmo_gpu_free(cdev);
    } else if (!rc && nmo_check(&rep, &pb.c, out, &co, &err) != NMO_OK) {
        rc = cli_error("%s", err.msg);
    }
    if (staged) nmo_staged_free(&stg);

    if (!rc && jpath) {
        char *js = check_json(&rep, &pb, name, info.provenance_json, argc, argv);
        cli_stage st = {0};
        if (!js) rc = cli_error("out of memory");
        else if (!(rc = cli_stage_file(&st, jpath, js, strlen(js))))
            rc = cli_stage_commit(&st);
        free(js);
    }
    if (!rc) {
        nmo_report_print(stdout, &rep, &pb.c, name);
        if (info.provenance_json) print_provenance(info.provenance_json);
        fflush(stdout);
        rc = (int)rep.verdict;
    }
    free(info.provenance_json);
    nmo_report_free(&rep);
    for (int k = 0; k < nout; k++) nmo_tensor_free(&out[k]);
    cli_problem_free(&pb);
    kernel_release(&kc);
    return rc;
}
