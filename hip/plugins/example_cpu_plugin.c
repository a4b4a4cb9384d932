/* numoracle: an example plugin with HOST kernels (numoracle/plugin.h, ABI version 2).
 *
 * Built in every configuration (also -Dgpu=none) so that CI exercises the plugin ABI
 * without a GPU:
 *   numoracle check --op rms_norm --dtype bf16 --shape 4x64 \
 *       --candidate plugin:build/hip/plugins/libnmo_example_cpu_plugin.so          PASS
 *   ... --candidate plugin:PATH:mut_mean_n1                                        FAIL
 *   ... --op softmax --dtype bf16 (this plugin's softmax is fp32 only)             SKIPPED
 *   ... --op matmul (no kernel)                                                    SKIPPED
 *   ... --op rms_norm --shape 2x8192 (supports() says rows longer than 4096 no)    SKIPPED
 *
 * A plugin includes only numoracle/plugin.h: it needs neither MPFR nor numoracle's
 * library. It exports one symbol, nmo_plugin_query. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "numoracle/plugin.h"

/* ---- bf16 storage (round to nearest even; NaN kept) ---- */
static float bf16_to_f(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static uint16_t f_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}
static float ld(const nmo_plugin_tensor *t, int64_t i)
{
    if (t->dtype == NMO_PLUGIN_DT_BF16) return bf16_to_f(((const uint16_t *)t->data)[i]);
    return ((const float *)t->data)[i];
}
static void st(const nmo_plugin_tensor *t, int64_t i, float v)
{
    if (t->dtype == NMO_PLUGIN_DT_BF16) ((uint16_t *)t->data)[i] = f_to_bf16(v);
    else ((float *)t->data)[i] = v;
}

static int packed(const nmo_plugin_tensor *t)
{
    int64_t s = 1;
    for (int d = t->ndims - 1; d >= 0; d--) {
        if (t->dims[d] != 1 && t->strides[d] != s) return 0;
        s *= t->dims[d];
    }
    return 1;
}
static int64_t numel(const nmo_plugin_tensor *t)
{
    int64_t n = 1;
    for (int d = 0; d < t->ndims; d++) n *= t->dims[d];
    return n;
}

/* ---- rms_norm: x[..., N], w[N] -> y; param eps ---- */
static int rms_supports(const nmo_plugin_args *a)
{
    if (a->n_in != 2 || a->n_out != 1) return 0;
    if (!packed(&a->in[0]) || !packed(&a->in[1]) || !packed(&a->out[0])) return 0;
    /* a parameter the kernel does not implement is declined, not ignored: the offset
     * (param 1, Gemma's 1 + w) */
    if (a->n_param > 1 && a->param[1] != 0) return 0;
    /* an example of a shape limit: rows longer than 4096 are not supported */
    return a->in[0].ndims >= 1 && a->in[0].dims[a->in[0].ndims - 1] <= 4096;
}
static int rms_run(const nmo_plugin_args *a, int mean_n1)
{
    const nmo_plugin_tensor *x = &a->in[0], *w = &a->in[1], *y = &a->out[0];
    const int64_t n = x->dims[x->ndims - 1], rows = numel(x) / n;
    const float eps = (float)(a->n_param > 0 ? a->param[0] : 1e-6);
    if (mean_n1 && n < 2) return NMO_PLUGIN_UNSUPPORTED;
    for (int64_t r = 0; r < rows; r++) {
        float ss = 0.0f;
        for (int64_t j = 0; j < n; j++) {
            float v = ld(x, r * n + j);
            ss = fmaf(v, v, ss);
        }
        float ms = ss / (float)(mean_n1 ? n - 1 : n);
        float rr = 1.0f / sqrtf(ms + eps);
        for (int64_t j = 0; j < n; j++) st(y, r * n + j, (ld(x, r * n + j) * rr) * ld(w, j));
    }
    return NMO_PLUGIN_OK;
}
static int rms_seq(const nmo_plugin_args *a, char *msg, size_t n)
{
    (void)msg, (void)n;
    return rms_run(a, 0);
}
static int rms_mut_mean_n1(const nmo_plugin_args *a, char *msg, size_t n)
{
    (void)msg, (void)n;
    return rms_run(a, 1);
}

/* ---- softmax (fp32 only): x[..., N] -> y ---- */
static int sm_supports(const nmo_plugin_args *a)
{
    return a->n_in == 1 && a->n_out == 1 && packed(&a->in[0]) && packed(&a->out[0]);
}
static int sm_seq(const nmo_plugin_args *a, char *msg, size_t msglen)
{
    const nmo_plugin_tensor *x = &a->in[0], *y = &a->out[0];
    if (x->dtype != NMO_PLUGIN_DT_FP32) {
        /* never reached through numoracle (the table says fp32), shown for completeness */
        if (msg && msglen) strncpy(msg, "fp32 only", msglen - 1);
        return NMO_PLUGIN_UNSUPPORTED;
    }
    const int64_t n = x->dims[x->ndims - 1], rows = numel(x) / n;
    const float *xv = (const float *)x->data;
    float *yv = (float *)y->data;
    for (int64_t r = 0; r < rows; r++) {
        float m = -INFINITY, s = 0.0f;
        for (int64_t j = 0; j < n; j++) m = fmaxf(m, xv[r * n + j]);
        for (int64_t j = 0; j < n; j++) s += expf(xv[r * n + j] - m);
        for (int64_t j = 0; j < n; j++) yv[r * n + j] = expf(xv[r * n + j] - m) / s;
    }
    return NMO_PLUGIN_OK;
}

/* ABI 2's geometry: rms_seq reduces each row of N in one sequential run (one thread, no
 * tree): sum=blocked:N:0:1, which the check shows (its bound equals any order's). */
static int rms_geometry(const nmo_plugin_args *a, char *text, size_t len)
{
    const nmo_plugin_tensor *x = &a->in[0];
    if (x->ndims < 1 || len < 32) return 0;
    long long n = (long long)x->dims[x->ndims - 1];
    char buf[32];
    int i = 0;
    /* "sum=blocked:" N ":0:1" without stdio (this file needs only libm) */
    const char *pre = "sum=blocked:", *post = ":0:1";
    while (*pre) text[i++] = *pre++;
    int d = 0;
    do buf[d++] = (char)('0' + n % 10), n /= 10; while (n && d < 20);
    while (d) text[i++] = buf[--d];
    while (*post) text[i++] = *post++;
    text[i] = 0;
    return 1;
}

static const nmo_plugin_kernel kernels[] = {
    {"rms_norm", "seq", "fp32 bf16", "", 1,
     "sequential fmaf sum of squares, ss/N, 1/sqrtf, (x*r)*w; rows up to 4096", rms_supports, rms_seq,
     rms_geometry},
    {"rms_norm", "mut_mean_n1", "fp32 bf16", "", 0, "MUTANT: mean of squares divided by N-1",
     rms_supports, rms_mut_mean_n1, rms_geometry},
    {"softmax", "seq", "fp32", "", 1, "sequential max, sum of expf, e/s", sm_supports, sm_seq, NULL},
};

static const nmo_plugin_info info = {
    .abi_version = NMO_PLUGIN_ABI_VERSION,
    .struct_size = sizeof(nmo_plugin_info),
    .kernel_size = sizeof(nmo_plugin_kernel),
    .memory = NMO_PLUGIN_MEM_HOST,
    .name = "example_cpu",
    .version = "1.0",
    .n_kernels = (int32_t)(sizeof kernels / sizeof kernels[0]),
    .kernels = kernels,
    .provenance_json = "{\"example\":true,\"language\":\"C17\"}",
};

NMO_PLUGIN_EXPORT const nmo_plugin_info *nmo_plugin_query(uint32_t host_abi_version)
{
    return host_abi_version == NMO_PLUGIN_ABI_VERSION ? &info : NULL;
}
