/* numoracle GPU layer: the C face of the device runtime (no GPU header here).
 *
 * Implemented by hip/gpu_runtime.hip (built with -Dgpu=cuda or -Dgpu=hip) or by
 * hip/gpu_none.c (-Dgpu=none: every call fails with NMO_ERR_UNSUPPORTED and the message
 * NMO_GPU_NONE_MSG). Plain C callers (the runner, the CLI, the test driver and the
 * benchmark) use only this header and numoracle/plugin.h. Every runtime call is checked;
 * errors come back as a status and a one-line message naming the call. */
#ifndef NMO_GPU_H
#define NMO_GPU_H

#include <stddef.h>

#include "numoracle/plugin.h"
#include "numoracle/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NMO_GPU_NONE_MSG "hip candidates need a build with -Dgpu=cuda or -Dgpu=hip"

/* 1 when this build has a GPU layer (-Dgpu=cuda|hip), 0 otherwise. */
int nmo_gpu_enabled(void);
/* "cuda", "hip" or "none". */
const char *nmo_gpu_platform(void);

/* Select the device (env NMO_GPU_DEVICE, default 0), create the stream and the timing
 * events. Idempotent; every other call below calls it first. */
nmo_status nmo_gpu_init(nmo_err *err);
void *nmo_gpu_stream(void); /* hipStream_t / cudaStream_t */
int nmo_gpu_warp_size(void);

nmo_status nmo_gpu_alloc(void **p, size_t bytes, nmo_err *err);
void nmo_gpu_free(void *p);
/* Fill with 0xFF bytes (NaN in every float format we store; on the stream, synced). */
nmo_status nmo_gpu_poison(void *p, size_t bytes, nmo_err *err);
/* Fill with a byte on the stream, without waiting (the benchmark's L2 flush). */
nmo_status nmo_gpu_fill_async(void *p, int byte, size_t bytes, nmo_err *err);
nmo_status nmo_gpu_h2d(void *dst, const void *src, size_t bytes, nmo_err *err);
nmo_status nmo_gpu_d2h(void *dst, const void *src, size_t bytes, nmo_err *err);
/* Device-to-device copy on the stream (the benchmark's reference); not synced. */
nmo_status nmo_gpu_d2d(void *dst, const void *src, size_t bytes, nmo_err *err);

/* Event timing on the stream: start records, stop records, synchronizes, checks the
 * last error and returns the elapsed milliseconds. */
nmo_status nmo_gpu_timer_start(nmo_err *err);
nmo_status nmo_gpu_timer_stop(double *ms, nmo_err *err);
/* After a launch: hipGetLastError, hipStreamSynchronize, hipGetLastError again; any
 * error is reported as "<what>: <error name>: <error string>". */
nmo_status nmo_gpu_sync_check(const char *what, nmo_err *err);

/* JSON object text (static): platform, device name, architecture, multiprocessors,
 * memory, warp size, driver and runtime versions, compiler, architectures built for.
 * "{}" when no device could be initialized. */
const char *nmo_gpu_provenance_json(void);
/* The kernels' RNE store conversions (instructions on NVIDIA) against their integer
 * versions over all 2^32 fp32 inputs: the number of differing results for bf16 and fp16
 * (both 0 on a correct platform). A device kernel; minutes in the simulator. */
nmo_status nmo_gpu_conv_selftest(int64_t *bad_bf16, int64_t *bad_fp16, nmo_err *err);

/* The HIP kernel registry (hip/kernels/<op>.hip, list in hip/meson.build). Empty with
 * -Dgpu=none. Every entry follows the plugin ABI with device memory. */
int nmo_hip_kernel_count(void);
const nmo_plugin_kernel *nmo_hip_kernel_at(int i);

#ifdef __cplusplus
}
#endif
#endif
