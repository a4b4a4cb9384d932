/* numoracle: the engine under test (eut.h). Usage errors go through the CLI's cli_error
 * (cli/cli_error.c): one line "numoracle: error: ..." on stderr, return 2. */
/* Messages and paths are truncated to their fixed buffers on purpose. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "eut.h"
#include "nmo_gpu.h"
#include "numoracle/cand.h"

void cli_plugin_spec(char *path, size_t np, char *name, size_t nn, const char *rest)
{
    snprintf(path, np, "%s", rest);
    name[0] = '\0';
    struct stat pst; /* stat, not fopen: a FIFO must not block the parse */
    if (stat(path, &pst) == 0) return;
    char *colon = strrchr(path, ':');
    if (colon && colon[1] && !strchr(colon + 1, '/')) {
        snprintf(name, nn, "%s", colon + 1);
        *colon = '\0';
    }
}

int cli_engine_spec(cli_eut *e, const char *spec, const char *const *expect, int n_expect)
{
    memset(e, 0, sizeof *e);
    snprintf(e->spec, sizeof e->spec, "%s", spec ? spec : "cpu");
    const char *s = e->spec;
    nmo_err err = {{0}};
    if (strcmp(s, "cpu") == 0) return 0;
    if (strncmp(s, "cpu:", 4) == 0 && s[4]) {
        snprintf(e->cand, sizeof e->cand, "%s", s + 4);
        for (int i = 0; i < nmo_cand_count(); i++)
            if (strcmp(nmo_cand_at(i)->name, e->cand) == 0) return 0;
        return cli_error("unknown CPU candidate '%s' (see numoracle candidates --op OP)", e->cand);
    }
    if (strcmp(s, "hip") == 0 || (strncmp(s, "hip:", 4) == 0 && s[4])) {
        if (!nmo_gpu_enabled()) return cli_error("engine '%s': %s", s, NMO_GPU_NONE_MSG);
        e->is_kernel = 1;
        if (s[3] == ':') snprintf(e->kname, sizeof e->kname, "%s", s + 4);
        nmo_kernel_set_hip(&e->ks);
        return 0;
    }
    if (strncmp(s, "plugin:", 7) == 0 && s[7]) {
        e->is_kernel = 1;
        double tmo; /* a bad NMO_PLUGIN_TIMEOUT is the user's error, not the plugin's skip */
        if (nmo_plugin_timeout(&tmo, &err) != NMO_OK) return cli_error("%s", err.msg);
        cli_plugin_spec(e->path, sizeof e->path, e->kname, sizeof e->kname, s + 7);
        if (nmo_plugin_check_expected(expect, n_expect, &err) != NMO_OK) return cli_error("%s", err.msg);
        if (nmo_plugin_open(&e->plugin, e->path, &err) != NMO_OK) {
            if (nmo_plugin_is_expected(e->path, expect, n_expect)) return cli_error("%s", err.msg);
            snprintf(e->load_why, sizeof e->load_why, "plugin not loaded: %s", err.msg);
            return 0;
        }
        nmo_kernel_set_plugin(&e->ks, e->plugin);
        return 0;
    }
    return cli_error("bad --engine '%s': expected cpu, cpu:NAME, hip[:NAME] or plugin:PATH[:NAME]", s);
}

void cli_engine_release(cli_eut *e)
{
    nmo_plugin_close(e->plugin);
    e->plugin = NULL;
}

static nmo_status cpu_run(nmo_tensor *out, const nmo_cand *cd, const nmo_case *c, nmo_err *err)
{
    memset(out, 0, sizeof(nmo_tensor) * NMO_MAX_TENSORS);
    NMO_RETURN_IF_ERR(nmo_case_alloc_outputs(c, out, 0, err));
    nmo_cand_args a = {c->in, c->n_in, out, c->n_out, c->param, c->op->n_param, &c->plan};
    return cd->run(&a, err);
}

int cli_engine_exec(nmo_tensor *out, const cli_eut *e, const nmo_case *c, char *why, size_t wn, nmo_err *err)
{
    memset(out, 0, sizeof(nmo_tensor) * NMO_MAX_TENSORS);
    if (!e->is_kernel) {
        const nmo_cand *cd = nmo_cand_find(c->op->name, e->cand[0] ? e->cand : NULL);
        if (!cd) {
            snprintf(why, wn, "engine %s does not support op %s", e->spec, c->op->name);
            return 1;
        }
        nmo_status s = cpu_run(out, cd, c, err);
        if (s == NMO_OK) return 0;
        for (int k = 0; k < NMO_MAX_TENSORS; k++) nmo_tensor_free(&out[k]);
        /* an engine that cannot serve the case (a dtype it lacks) skips it (RFC 0011) */
        if (s != NMO_ERR_UNSUPPORTED) return -1;
        snprintf(why, wn, "engine %s: %s", e->spec, err->msg);
        return 1;
    }
    if (e->load_why[0]) {
        snprintf(why, wn, "%s", e->load_why);
        return 1;
    }
    const nmo_plugin_kernel *k = NULL;
    char kw[400] = "";
    int r = nmo_kernel_select(&k, &e->ks, c->op->name, c->plan.in, c->plan.out, e->kname[0] ? e->kname : NULL, kw,
                              sizeof kw);
    if (r != 0) {
        /* a kernel name the set lacks is named, but only this case is left untested */
        snprintf(why, wn, "engine %s: %s", e->spec, kw);
        return 1;
    }
    /* the stored reachable sets are the bundle plan's: a kernel that declares another
     * plan is judged against the wrong sets, and a correct kernel could FAIL */
    if (k->plan && k->plan[0]) {
        nmo_plan kp = c->plan;
        char a[512], b[512];
        nmo_err pe;
        if (nmo_plan_parse(&kp, k->plan, &pe) != NMO_OK) {
            snprintf(why, wn, "engine %s: kernel %s declares a bad plan: %s", e->spec, k->name, pe.msg);
            return 1;
        }
        nmo_plan_to_string(&kp, a, sizeof a);
        nmo_plan_to_string(&c->plan, b, sizeof b);
        if (strcmp(a, b) != 0) {
            snprintf(why, wn, "engine %s: kernel %s follows plan '%s', the bundle's is '%s'", e->spec, k->name, a, b);
            return 1;
        }
    }
    nmo_run_info info;
    memset(&info, 0, sizeof info);
    if (nmo_run_kernel(out, &info, k, &e->ks, c, err) != NMO_OK) {
        free(info.provenance_json);
        return -1;
    }
    free(info.provenance_json);
    if (info.skipped) {
        snprintf(why, wn, "engine %s: kernel %s: %s", e->spec, k->name, info.why);
        return 1;
    }
    return 0;
}

