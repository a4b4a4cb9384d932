/* A plugin that misbehaves on purpose (issue 16.10: plugin isolation). Its kernels all
 * claim rms_norm fp32:
 *   ok        writes every output element (0.0f): runs, and PASS/FAIL is the checker's
 *   crash     dereferences NULL in launch
 *   abort     abort()s
 *   hang      never returns
 *   overflow  writes 16 floats past the end of its output
 *   underflow writes one float before the start of its output
 *   exit      calls exit(3) (the process ends without returning)
 *   badrc     returns 7 (not an NMO_PLUGIN_* value)
 *   failmsg   returns NMO_PLUGIN_ERROR with a message that is not NUL-terminated
 *   inputs    writes into its input (a child's copy: the case's inputs stay intact)
 *   supcrash  crashes in supports()
 * NMO_BAD_PLUGIN (environment) makes the query itself misbehave instead:
 *   crash, hang, kernel_size (1 GiB), n_kernels (1e6), name (no NUL within 1 MiB of
 *   bytes 'A'), op (an unknown operator), dtypes ("fp32 fp33"), plan ("fn=cuda fn=fast"),
 *   dup (two rms_norm kernels named ok), correct (2), control (a kernel name with a newline),
 *   ok_plan (kernel ok declares "fn=ocml max_ulps=7": the CLI's overlay test),
 *   v1 (an ABI version-1 table: serves only version 1, kernel_size without the geometry
 *   field; it must still load), geo_bad (kernel ok's ABI-2 geometry is "sum=blocked:0"),
 *   geo_short (its geometry "sum=tree:2" holds 4 terms: rows of 64 do not fit). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "numoracle/plugin.h"

static int fill(const nmo_plugin_args *a)
{
    const nmo_plugin_tensor *o = &a->out[0];
    int64_t n = 1;
    for (int i = 0; i < o->ndims; i++) n *= o->dims[i];
    memset(o->data, 0, (size_t)n * sizeof(float));
    return (int)n;
}

static int k_ok(const nmo_plugin_args *a, char *msg, size_t n)
{
    (void)msg, (void)n;
    fill(a);
    return NMO_PLUGIN_OK;
}

static int k_crash(const nmo_plugin_args *a, char *msg, size_t n)
{
    (void)a, (void)msg, (void)n;
    volatile int *p = NULL;
    *p = 1;
    return NMO_PLUGIN_OK;
}

static int k_abort(const nmo_plugin_args *a, char *msg, size_t n)
{
    (void)a, (void)msg, (void)n;
    abort();
}

static int k_hang(const nmo_plugin_args *a, char *msg, size_t n)
{
    (void)a, (void)msg, (void)n;
    for (volatile int i = 0;; i++) {}
    return NMO_PLUGIN_OK;
}

static int k_overflow(const nmo_plugin_args *a, char *msg, size_t n)
{
    (void)msg, (void)n;
    int m = fill(a);
    float *f = a->out[0].data;
    for (int i = 0; i < 16; i++) f[m + i] = 1.0f;
    return NMO_PLUGIN_OK;
}

static int k_underflow(const nmo_plugin_args *a, char *msg, size_t n)
{
    (void)msg, (void)n;
    fill(a);
    ((float *)a->out[0].data)[-1] = 1.0f;
    return NMO_PLUGIN_OK;
}

static int k_exit(const nmo_plugin_args *a, char *msg, size_t n)
{
    (void)a, (void)msg, (void)n;
    exit(3);
}

static int k_badrc(const nmo_plugin_args *a, char *msg, size_t n)
{
    (void)msg, (void)n;
    fill(a);
    return 7;
}

static int k_failmsg(const nmo_plugin_args *a, char *msg, size_t n)
{
    (void)a;
    memset(msg, 'x', n); /* no NUL */
    return NMO_PLUGIN_ERROR;
}

static int k_inputs(const nmo_plugin_args *a, char *msg, size_t n)
{
    (void)msg, (void)n;
    fill(a);
    float *x = a->in[0].data; /* const in the ABI: a copy in the child */
    x[0] = 12345.0f;
    return NMO_PLUGIN_OK;
}

static int s_crash(const nmo_plugin_args *a)
{
    (void)a;
    volatile int *p = NULL;
    return *p;
}

#define K(nm, fn) {"rms_norm", nm, "fp32", "", 1, "misbehaves: " nm, NULL, fn, NULL}
static nmo_plugin_kernel kernels[] = {
    K("ok", k_ok),           K("crash", k_crash),     K("abort", k_abort),   K("hang", k_hang),
    K("overflow", k_overflow), K("underflow", k_underflow), K("exit", k_exit), K("badrc", k_badrc),
    K("failmsg", k_failmsg), K("inputs", k_inputs),   {"rms_norm", "supcrash", "fp32", "", 1, "", s_crash, k_ok, NULL},
};

static nmo_plugin_info info = {
    NMO_PLUGIN_ABI_VERSION, sizeof(nmo_plugin_info), sizeof(nmo_plugin_kernel), NMO_PLUGIN_MEM_HOST, "bad", "1",
    (int32_t)(sizeof kernels / sizeof kernels[0]), kernels, NULL,
};

static char long_name[1 << 20];

/* nmo_plugin_kernel as ABI version 1 laid it out (no geometry) */
typedef struct {
    const char *op, *name, *dtypes, *plan;
    int32_t correct;
    const char *desc;
    int (*supports)(const nmo_plugin_args *args);
    int (*launch)(const nmo_plugin_args *args, char *msg, size_t msglen);
} kernel_v1;
_Static_assert(sizeof(kernel_v1) == NMO_PLUGIN_KERNEL_SIZE_V1, "ABI 1 kernel layout");
static const kernel_v1 kernels_v1[] = {{"rms_norm", "ok", "fp32", "", 1, "a version-1 kernel", NULL, k_ok}};
static nmo_plugin_info info_v1 = {
    1u, sizeof(nmo_plugin_info), sizeof(kernel_v1), NMO_PLUGIN_MEM_HOST, "bad_v1", "1", 1,
    (const nmo_plugin_kernel *)(const void *)kernels_v1, NULL,
};

static int geo_bad(const nmo_plugin_args *a, char *text, size_t len)
{
    (void)a;
    strncpy(text, "sum=blocked:0", len - 1);
    return 1;
}
static int geo_short(const nmo_plugin_args *a, char *text, size_t len)
{
    (void)a;
    strncpy(text, "sum=tree:2", len - 1);
    return 1;
}

NMO_PLUGIN_EXPORT const nmo_plugin_info *nmo_plugin_query(uint32_t v)
{
    (void)v;
    const char *m = getenv("NMO_BAD_PLUGIN");
    if (!m) return &info;
    if (strcmp(m, "crash") == 0) {
        volatile int *p = NULL;
        *p = 1;
    }
    if (strcmp(m, "hang") == 0)
        for (volatile int i = 0;; i++) {}
    if (strcmp(m, "kernel_size") == 0) info.kernel_size = 1u << 30;
    if (strcmp(m, "n_kernels") == 0) info.n_kernels = 1000000;
    if (strcmp(m, "name") == 0) {
        memset(long_name, 'A', sizeof long_name); /* no NUL inside the array */
        info.name = long_name;
    }
    if (strcmp(m, "op") == 0) kernels[0].op = "rms_nrom";
    if (strcmp(m, "dtypes") == 0) kernels[0].dtypes = "fp32 fp33";
    if (strcmp(m, "plan") == 0) kernels[0].plan = "fn=cuda fn=fast";
    if (strcmp(m, "dup") == 0) kernels[1].name = "ok";
    if (strcmp(m, "correct") == 0) kernels[0].correct = 2;
    if (strcmp(m, "control") == 0) kernels[0].name = "o\nk";
    if (strcmp(m, "ok_plan") == 0) kernels[0].plan = "fn=ocml max_ulps=7";
    if (strcmp(m, "v1") == 0) return v == 1 ? &info_v1 : NULL;
    if (strcmp(m, "geo_bad") == 0) kernels[0].geometry = geo_bad;
    if (strcmp(m, "geo_short") == 0) kernels[0].geometry = geo_short;
    return &info;
}
