/* numoracle GPU layer: the runner — runs a plugin-ABI kernel (a HIP kernel of this
 * build's registry, or a kernel of a plugin loaded with dlopen) on a numoracle case.
 *
 *   nmo_kernel_set ks;  nmo_kernel_set_hip(&ks);          (or _plugin after open)
 *   nmo_kernel_select(&k, &ks, op, plan.in, plan.out, name, why, sizeof why);
 *   nmo_run_kernel(out, &info, k, &ks, &c, &err);  -> host outputs, or info.skipped
 *
 * Every launch: inputs copied to fresh device buffers (device kernels), outputs poisoned
 * (0xFF bytes) right before the launch, the launch's return code checked, then the last
 * error, a stream synchronize and the last error again; event timing around the launch;
 * provenance (device, arch, driver/runtime, compiler, kernel, plugin) as JSON.
 * Plain C: no GPU header. */
#ifndef NMO_RUNNER_H
#define NMO_RUNNER_H

#include "numoracle/numoracle.h"
#include "numoracle/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ plugins */

typedef struct nmo_plugin nmo_plugin;

/* dlopen PATH, resolve NMO_PLUGIN_QUERY_SYMBOL, query it and validate the table (ABI
 * version, sizes, every kernel's op/name/dtypes/launch present). Errors name the path
 * and the reason (dlerror text, missing symbol, version mismatch ...). */
nmo_status nmo_plugin_open(nmo_plugin **pl, const char *path, nmo_err *err);
void nmo_plugin_close(nmo_plugin *pl);
const nmo_plugin_info *nmo_plugin_get_info(const nmo_plugin *pl);
const char *nmo_plugin_path(const nmo_plugin *pl);

/* Expected plugins (RFC 0006): paths from `--expect-plugin` and from the environment
 * variable NMO_EXPECT_PLUGINS (paths separated by ':'). Each must load; the first
 * failure is returned (NMO_ERR_UNSUPPORTED, "expected plugin 'P' failed to load: ..."). */
nmo_status nmo_plugin_check_expected(const char *const *paths, int n, nmo_err *err);
/* 1 when path is in the expected list (the given paths or NMO_EXPECT_PLUGINS). */
int nmo_plugin_is_expected(const char *path, const char *const *paths, int n);

/* ------------------------------------------------------------------ kernel sets */

typedef struct {
    const char *label;          /* "hip" or "plugin:PATH" */
    int memory;                 /* NMO_PLUGIN_MEM_HOST or NMO_PLUGIN_MEM_DEVICE */
    const nmo_plugin *plugin;   /* NULL for the HIP registry */
} nmo_kernel_set;

void nmo_kernel_set_hip(nmo_kernel_set *s);
void nmo_kernel_set_plugin(nmo_kernel_set *s, const nmo_plugin *pl);
int nmo_kernel_set_count(const nmo_kernel_set *s);
const nmo_plugin_kernel *nmo_kernel_set_at(const nmo_kernel_set *s, int i);

/* The plugin's table for the newest ABI version it serves (2, then 1), or NULL. */
const nmo_plugin_info *nmo_plugin_query_any(nmo_plugin_query_fn q);

/* The reduction geometry kernel k of set s declares for case c (ABI 2's
 * nmo_plugin_kernel.geometry, called on metadata): 1 with plan text in text, 0 for none
 * (no callback, a version-1 plugin, or the kernel has none at this case). */
int nmo_kernel_geometry(const nmo_kernel_set *s, const nmo_plugin_kernel *k, const nmo_case *c, char *text,
                        size_t len);

/* Does kernel k claim storage dtypes (in, out)? ("bf16" = in=out=bf16; "bf16>fp32"). */
int nmo_kernel_claims_dtype(const nmo_plugin_kernel *k, nmo_fmt in, nmo_fmt out);

/* Select a kernel for (op, in, out): name NULL/"" -> the first correct kernel claiming
 * them. Returns 0 (found), 1 (unsupported: why says which capability is missing) or -1
 * (no kernel called `name` in the set at all: a usage error). */
int nmo_kernel_select(const nmo_plugin_kernel **k, const nmo_kernel_set *s, const char *op,
                      nmo_fmt in, nmo_fmt out, const char *name, char *why, size_t whylen);

/* ------------------------------------------------------------------ running */

typedef struct {
    int skipped;            /* the kernel does not support this case: why says so */
    char why[512];
    double kernel_ms;       /* event-timed launch (device) or wall clock (host) */
    char *provenance_json;  /* malloc'd JSON object (caller frees); NULL if skipped early */
} nmo_run_info;

/* A case staged for a kernel: argument block plus host or device buffers. */
typedef struct {
    int memory;
    nmo_plugin_args args;
    nmo_plugin_tensor tin[NMO_MAX_TENSORS], tout[NMO_MAX_TENSORS];
    void *buf_in[NMO_MAX_TENSORS], *buf_out[NMO_MAX_TENSORS]; /* owned device buffers */
    size_t bytes_in[NMO_MAX_TENSORS], bytes_out[NMO_MAX_TENSORS];
    void *host_out[NMO_MAX_TENSORS];                          /* host plugins */
    char plan_text[512];
    const nmo_case *c;
} nmo_staged;

/* Stage c: device buffers for every tensor (inputs copied), or host output buffers. */
nmo_status nmo_stage_case(nmo_staged *s, const nmo_case *c, int memory, nmo_err *err);
/* Poison the outputs, launch k, check everything, time it. info->skipped when the kernel
 * declines (supports() == 0 or launch returned NMO_PLUGIN_UNSUPPORTED). */
nmo_status nmo_staged_launch(nmo_staged *s, const nmo_plugin_kernel *k, nmo_run_info *info,
                             nmo_err *err);
/* Copy the outputs into out[k] (allocated here like c->out[k]; free with nmo_tensor_free). */
nmo_status nmo_staged_fetch(nmo_tensor *out, const nmo_staged *s, nmo_err *err);
void nmo_staged_free(nmo_staged *s);

/* Stage, launch, fetch, free; fills info->provenance_json (runner, kernel, plan, timing,
 * device provenance, plugin). out[] is allocated only when the kernel ran. */
nmo_status nmo_run_kernel(nmo_tensor *out, nmo_run_info *info, const nmo_plugin_kernel *k,
                          const nmo_kernel_set *s, const nmo_case *c, nmo_err *err);

/* nmo_run_kernel for a checker on the device (nmo_gpu_check, issue 22): a device-memory
 * kernel's outputs stay where it wrote them (*on_device = 1: st->buf_out[k], inputs in
 * st->buf_in[k]); a host kernel's are fetched into out as nmo_run_kernel does. On
 * NMO_OK the caller frees st with nmo_staged_free. */
nmo_status nmo_run_kernel_staged(nmo_staged *st, nmo_tensor *out, int *on_device, nmo_run_info *info,
                                 const nmo_plugin_kernel *k, const nmo_kernel_set *s, const nmo_case *c,
                                 nmo_err *err);

/* ------------------------------------------------------------------ isolation */
/* (plugin_guard.c, issue 16.10) A plugin is loaded, queried and validated in a forked
 * child before numoracle loads it (nmo_plugin_open); host kernels run in a forked child
 * per call with a timeout, their outputs in shared memory between guard pages. */

#define NMO_PLUGIN_MAX_KERNELS 4096
#define NMO_PLUGIN_MAX_STRUCT 65536u   /* struct_size, kernel_size */
#define NMO_PLUGIN_MAX_TEXT 4096       /* name, version, dtypes, plan, desc (kernel names: 128) */
#define NMO_PLUGIN_MAX_PROV 65536      /* provenance_json */
#define NMO_PLUGIN_TIMEOUT_DEFAULT 600.0 /* seconds per query or kernel call */

/* Validate every field of a capability table (bounds before reads). 0 when it is good,
 * else 1 with the reason in why. Reads the table's strings: run it where a bad pointer
 * may fault (the probe child) before trusting it in-process. */
int nmo_plugin_table_check(const nmo_plugin_info *in, char *why, size_t n);
/* Load, query and validate PATH in a forked child (timeout NMO_PLUGIN_TIMEOUT). 0 when
 * the child got through (or could not dlopen: the caller reports dlerror), else 1 with
 * the reason ("loading or querying the plugin crashed (signal 11: ...)"). */
int nmo_plugin_probe(const char *path, char *why, size_t n);
/* Seconds allowed per plugin query or kernel call: NMO_PLUGIN_TIMEOUT (in (0, 86400]),
 * default NMO_PLUGIN_TIMEOUT_DEFAULT; a bad value is NMO_ERR_USAGE. */
nmo_status nmo_plugin_timeout(double *sec, nmo_err *err);
/* The host-memory branch of nmo_staged_launch: supports() and launch() in a child. */
nmo_status nmo__host_launch(nmo_staged *s, const nmo_plugin_kernel *k, nmo_run_info *info, nmo_err *err);

#ifdef __cplusplus
}
#endif
#endif
