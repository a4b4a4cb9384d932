/* numoracle: the engine under test, shared by `numoracle run`, `numoracle calibrate`
 * and the GoogleTest integration (apps/gtest): cpu[:NAME] (a registry CPU candidate),
 * hip[:NAME] (the HIP kernel set of a GPU build) and plugin:PATH[:NAME] (the plugin
 * ABI), with the capability query, the declared-plan check and "plugin not loaded"
 * deciding SKIP. One copy of these rules; plain C, callable from C++. */
#ifndef NMO_EUT_H
#define NMO_EUT_H

#include <stddef.h>

#include "numoracle/numoracle.h"
#include "nmo_runner.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    char spec[256];       /* as given: "cpu", "cpu:mut_acc_bf16" */
    char cand[128];       /* CPU candidate name; "" = each operator's default */
    int is_kernel;        /* hip[:NAME] or plugin:PATH[:NAME] */
    nmo_kernel_set ks;
    nmo_plugin *plugin;   /* plugin: the loaded library (NULL: not loaded, load_why) */
    char path[1024];      /* plugin path */
    char kname[256];      /* kernel name; "" = the first that claims the case */
    char load_why[600];   /* a plugin that did not load (and is not expected): every case SKIPs */
} cli_eut;

/* Parse --engine: cpu, cpu:NAME, hip[:NAME] (a GPU build), plugin:PATH[:NAME]. A plugin
 * is loaded here; one that fails to load is an error when expected (the paths given, or
 * NMO_EXPECT_PLUGINS), else every case is skipped with the reason. */
int cli_engine_spec(cli_eut *e, const char *spec, const char *const *expect, int n_expect);
void cli_engine_release(cli_eut *e);
/* plugin:PATH[:NAME]: PATH is taken whole when such a file exists; otherwise the text
 * after the last ':' is the kernel name. */
void cli_plugin_spec(char *path, size_t np, char *name, size_t nn, const char *rest);
/* Run the engine on case c: 0 ran (out allocated like c->out), 1 skipped (why: the
 * engine lacks the operator or dtype, the capability query declined, the kernel's
 * declared plan is not the case's), -1 error (err). */
int cli_engine_exec(nmo_tensor *out, const cli_eut *e, const nmo_case *c, char *why, size_t wn, nmo_err *err);

#ifdef __cplusplus
}
#endif

#endif
