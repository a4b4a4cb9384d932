/* numoracle GPU layer: the device runtime behind hip/nmo_gpu.h (built with -Dgpu=cuda
 * through nvcc, or -Dgpu=hip through hipcc). Every runtime call is checked; the
 * provenance of every report (device, architecture, driver and runtime versions,
 * compiler, architectures built for) is collected here once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nmo_hip.h"
#include "nmo_gpu.h"

#ifndef NMO_GPU_ARCH
#define NMO_GPU_ARCH "default"
#endif
#define NMO_STR_(x) #x
#define NMO_STR(x) NMO_STR_(x)

namespace {
struct gpu_state {
    int inited;
    int failed;
    int device;
    hipStream_t stream;
    hipEvent_t ev0, ev1;
    hipDeviceProp_t prop;
    int warp;
    char prov[2048];
    char why[512];
};
gpu_state g;

nmo_status fail(nmo_err *err, const char *what, hipError_t e)
{
    return nmo_err_set(err, NMO_ERR_GENERIC, "%s: %s: %s", what, hipGetErrorName(e),
                       hipGetErrorString(e));
}
#define TRY(call, what)                                                                  \
    do {                                                                                 \
        hipError_t e_ = (call);                                                          \
        if (e_ != hipSuccess) return fail(err, what, e_);                                \
    } while (0)

/* JSON string body with quotes/backslashes/control characters escaped. */
void json_escape(char *dst, size_t n, const char *s)
{
    size_t o = 0;
    for (; *s && o + 7 < n; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') {
            dst[o++] = '\\';
            dst[o++] = (char)ch;
        } else if (ch < 0x20) {
            o += (size_t)snprintf(dst + o, n - o, "\\u%04x", ch);
        } else {
            dst[o++] = (char)ch;
        }
    }
    dst[o] = '\0';
}

const char *compiler_text(void)
{
#if defined(NMO_HIP_NVIDIA)
    return "nvcc " NMO_STR(__CUDACC_VER_MAJOR__) "." NMO_STR(__CUDACC_VER_MINOR__) "." NMO_STR(
        __CUDACC_VER_BUILD__) " (host " __VERSION__ ")";
#elif defined(__clang__)
#if defined(HIP_VERSION_MAJOR)
    return "hip-clang " __clang_version__ " (HIP " NMO_STR(HIP_VERSION_MAJOR) "." NMO_STR(
        HIP_VERSION_MINOR) "." NMO_STR(HIP_VERSION_PATCH) ")";
#else
    return "hip-clang " __clang_version__;
#endif
#elif defined(__GNUC__)
    return "g++ " __VERSION__;
#else
    return "unknown";
#endif
}

void make_provenance(void)
{
    char name[600], arch[600];
    json_escape(name, sizeof name, g.prop.name);
#if defined(NMO_HIP_NVIDIA)
    snprintf(arch, sizeof arch, "sm_%d%d", g.prop.major, g.prop.minor);
#else
    json_escape(arch, sizeof arch, g.prop.gcnArchName);
#endif
    int drv = 0, rt = 0;
    if (hipDriverGetVersion(&drv) != hipSuccess) drv = -1;
    if (hipRuntimeGetVersion(&rt) != hipSuccess) rt = -1;
    char drvs[64], rts[64];
#if defined(NMO_HIP_NVIDIA)
    snprintf(drvs, sizeof drvs, "%d.%d", drv / 1000, (drv % 1000) / 10);
    snprintf(rts, sizeof rts, "%d.%d", rt / 1000, (rt % 1000) / 10);
#else
    snprintf(drvs, sizeof drvs, "%d", drv);
    snprintf(rts, sizeof rts, "%d", rt);
#endif
    char comp[600];
    json_escape(comp, sizeof comp, compiler_text());
    snprintf(g.prov, sizeof g.prov,
             "{\"platform\":\"%s\",\"device\":{\"index\":%d,\"name\":\"%s\",\"arch\":\"%s\","
             "\"multiprocessors\":%d,\"memory_bytes\":%llu,\"warp_size\":%d,\"l2_bytes\":%d},"
             "\"driver_version\":\"%s\",\"runtime_version\":\"%s\",\"driver_version_raw\":%d,"
             "\"runtime_version_raw\":%d,\"compiler\":\"%s\",\"built_for\":\"%s\"}",
             NMO_PLATFORM_NAME, g.device, name, arch, g.prop.multiProcessorCount,
             (unsigned long long)g.prop.totalGlobalMem, g.prop.warpSize, g.prop.l2CacheSize, drvs,
             rts, drv, rt, comp, NMO_GPU_ARCH);
}

nmo_status init_impl(nmo_err *err)
{
    int n = 0;
    TRY(hipGetDeviceCount(&n), "hipGetDeviceCount");
    if (n < 1) return nmo_err_set(err, NMO_ERR_UNSUPPORTED, "no GPU device found");
    const char *ev = getenv("NMO_GPU_DEVICE");
    g.device = ev && *ev ? atoi(ev) : 0;
    if (g.device < 0 || g.device >= n)
        return nmo_err_set(err, NMO_ERR_USAGE, "NMO_GPU_DEVICE=%d: only %d device(s)", g.device, n);
    TRY(hipSetDevice(g.device), "hipSetDevice");
    TRY(hipGetDeviceProperties(&g.prop, g.device), "hipGetDeviceProperties");
    g.warp = g.prop.warpSize;
    TRY(hipStreamCreate(&g.stream), "hipStreamCreate");
    TRY(hipEventCreate(&g.ev0), "hipEventCreate");
    TRY(hipEventCreate(&g.ev1), "hipEventCreate");
    make_provenance();
    return NMO_OK;
}
} // namespace

namespace {
/* Every fp32 bit pattern through the store conversions the kernels use and through the
 * integer versions (nmo_hip.h): on NVIDIA the former are cvt instructions. Per-thread
 * counts of differing results (no atomics needed). */
__global__ void conv_selftest_kernel(unsigned *bad)
{
    const uint64_t tid = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const uint64_t nt = (uint64_t)gridDim.x * blockDim.x;
    unsigned nb = 0, nh = 0;
    for (uint64_t i = tid; i < ((uint64_t)1 << 32); i += nt) {
        const float f = nmo_u2f((uint32_t)i);
        nb += nmo_f_to_bf16_rne(f) != nmo_f_to_bf16_rne_int(f);
        nh += nmo_f_to_fp16_rne(f) != nmo_f_to_fp16_rne_int(f);
    }
    bad[2 * tid] = nb;
    bad[2 * tid + 1] = nh;
}
} // namespace

extern "C" {

int nmo_gpu_enabled(void) { return 1; }
const char *nmo_gpu_platform(void) { return NMO_PLATFORM_NAME; }

nmo_status nmo_gpu_init(nmo_err *err)
{
    if (g.inited) return NMO_OK;
    if (g.failed) return nmo_err_set(err, NMO_ERR_UNSUPPORTED, "%s", g.why);
    nmo_err e = {{0}};
    nmo_status s = init_impl(&e);
    if (s != NMO_OK) {
        g.failed = 1;
        snprintf(g.why, sizeof g.why, "GPU init: %s", e.msg);
        return nmo_err_set(err, s, "%s", g.why);
    }
    g.inited = 1;
    return NMO_OK;
}

void *nmo_gpu_stream(void) { return g.inited ? (void *)g.stream : NULL; }
int nmo_gpu_warp_size(void) { return g.inited ? g.warp : 0; }

nmo_status nmo_gpu_alloc(void **p, size_t bytes, nmo_err *err)
{
    *p = NULL;
    NMO_RETURN_IF_ERR(nmo_gpu_init(err));
    hipError_t e = hipMalloc(p, bytes ? bytes : 1);
    if (e == hipErrorOutOfMemory) { /* not sticky: cleared, so that the next check sees no error */
        (void)hipGetLastError();
        *p = NULL;
        return nmo_err_set(err, NMO_ERR_NOMEM, "hipMalloc: out of device memory for %zu bytes", bytes);
    }
    TRY(e, "hipMalloc");
    return NMO_OK;
}

void nmo_gpu_free(void *p)
{
    if (p) (void)hipFree(p);
}

nmo_status nmo_gpu_poison(void *p, size_t bytes, nmo_err *err)
{
    NMO_RETURN_IF_ERR(nmo_gpu_init(err));
    TRY(hipMemsetAsync(p, 0xFF, bytes, g.stream), "hipMemsetAsync (poison)");
    TRY(hipStreamSynchronize(g.stream), "hipStreamSynchronize (poison)");
    return NMO_OK;
}

nmo_status nmo_gpu_fill_async(void *p, int byte, size_t bytes, nmo_err *err)
{
    NMO_RETURN_IF_ERR(nmo_gpu_init(err));
    TRY(hipMemsetAsync(p, byte, bytes, g.stream), "hipMemsetAsync");
    return NMO_OK;
}

nmo_status nmo_gpu_h2d(void *dst, const void *src, size_t bytes, nmo_err *err)
{
    NMO_RETURN_IF_ERR(nmo_gpu_init(err));
    TRY(hipMemcpy(dst, src, bytes, hipMemcpyHostToDevice), "hipMemcpy (host to device)");
    return NMO_OK;
}

nmo_status nmo_gpu_d2h(void *dst, const void *src, size_t bytes, nmo_err *err)
{
    NMO_RETURN_IF_ERR(nmo_gpu_init(err));
    TRY(hipStreamSynchronize(g.stream), "hipStreamSynchronize");
    TRY(hipMemcpy(dst, src, bytes, hipMemcpyDeviceToHost), "hipMemcpy (device to host)");
    return NMO_OK;
}

nmo_status nmo_gpu_d2d(void *dst, const void *src, size_t bytes, nmo_err *err)
{
    NMO_RETURN_IF_ERR(nmo_gpu_init(err));
    TRY(hipMemcpyAsync(dst, src, bytes, hipMemcpyDeviceToDevice, g.stream),
        "hipMemcpyAsync (device to device)");
    return NMO_OK;
}

nmo_status nmo_gpu_timer_start(nmo_err *err)
{
    NMO_RETURN_IF_ERR(nmo_gpu_init(err));
    TRY(hipEventRecord(g.ev0, g.stream), "hipEventRecord");
    return NMO_OK;
}

nmo_status nmo_gpu_timer_stop(double *ms, nmo_err *err)
{
    NMO_RETURN_IF_ERR(nmo_gpu_init(err));
    TRY(hipEventRecord(g.ev1, g.stream), "hipEventRecord");
    TRY(hipEventSynchronize(g.ev1), "hipEventSynchronize");
    TRY(hipGetLastError(), "hipGetLastError");
    float f = 0.0f;
    TRY(hipEventElapsedTime(&f, g.ev0, g.ev1), "hipEventElapsedTime");
    *ms = (double)f;
    return NMO_OK;
}

nmo_status nmo_gpu_sync_check(const char *what, nmo_err *err)
{
    NMO_RETURN_IF_ERR(nmo_gpu_init(err));
    hipError_t e = hipGetLastError();
    if (e == hipSuccess) e = hipStreamSynchronize(g.stream);
    if (e == hipSuccess) e = hipGetLastError();
    if (e != hipSuccess) return fail(err, what, e);
    return NMO_OK;
}

const char *nmo_gpu_provenance_json(void)
{
    if (!g.inited && nmo_gpu_init(NULL) != NMO_OK) return "{}";
    return g.prov;
}

nmo_status nmo_gpu_conv_selftest(int64_t *bad_bf16, int64_t *bad_fp16, nmo_err *err)
{
    enum { GRID = 1024, BLOCK = 256 };
    *bad_bf16 = *bad_fp16 = -1;
    unsigned *d = NULL;
    NMO_RETURN_IF_ERR(nmo_gpu_alloc((void **)&d, 2u * GRID * BLOCK * sizeof(unsigned), err));
    unsigned *h = (unsigned *)malloc(2u * GRID * BLOCK * sizeof(unsigned));
    nmo_status s = NMO_OK;
    if (!h) s = nmo_err_set(err, NMO_ERR_NOMEM, "out of memory");
    if (s == NMO_OK) {
        nmo_launch(conv_selftest_kernel, dim3(GRID), dim3(BLOCK), 0, g.stream, d);
        s = nmo_gpu_sync_check("conversion self-test", err);
    }
    if (s == NMO_OK) s = nmo_gpu_d2h(h, d, 2u * GRID * BLOCK * sizeof(unsigned), err);
    if (s == NMO_OK) {
        *bad_bf16 = *bad_fp16 = 0;
        for (int i = 0; i < GRID * BLOCK; i++) *bad_bf16 += h[2 * i], *bad_fp16 += h[2 * i + 1];
    }
    free(h);
    nmo_gpu_free(d);
    return s;
}

} // extern "C"
