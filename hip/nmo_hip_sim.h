/* numoracle GPU layer: the CPU simulator's declarations (included by nmo_hip.h when the
 * .hip sources are compiled as host C++ with -DNMO_HIP_SIM=1, i.e. -Dgpu=sim).
 *
 * The simulator runs a kernel launch block by block; every GPU thread of a block is a
 * fiber (ucontext) with its own stack, so registers are the fiber's locals, __shared__
 * arrays are function-local statics (blocks run one after another), __syncthreads is a
 * block barrier and the warp primitives are exchanges among the fibers of one warp
 * (NMO_SIM_WARP lanes: 32, or 64 to exercise the wave64 code paths). A barrier or a warp
 * exchange that can never complete (divergent __syncthreads) aborts with a message.
 * Device memory is host memory; events read the wall clock. Purpose: run every kernel's
 * indexing, tails, reductions and mutants through the oracle in CI without a GPU; it
 * says nothing about speed, and math functions are glibc's (within the fn=cuda plan). */
#ifndef NMO_HIP_SIM_H
#define NMO_HIP_SIM_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include <functional>

#ifndef NMO_SIM_WARP
#define NMO_SIM_WARP 32
#endif

#define __host__
#define __device__
#define __global__
#define __forceinline__ inline
#define __shared__ static
#define __constant__ static
#define __launch_bounds__(...)

typedef int hipError_t;
typedef struct nmo_sim_stream *hipStream_t;
typedef struct nmo_sim_event *hipEvent_t;
typedef enum {
    hipMemcpyHostToHost = 0, hipMemcpyHostToDevice = 1, hipMemcpyDeviceToHost = 2,
    hipMemcpyDeviceToDevice = 3
} hipMemcpyKind;
#define hipSuccess 0
#define hipErrorInvalidValue 1
#define hipErrorOutOfMemory 2
#define hipErrorInvalidConfiguration 9
#define hipErrorLaunchFailure 719
#define hipErrorNotSupported 801
typedef struct {
    char name[256];
    size_t totalGlobalMem;
    int warpSize, major, minor, multiProcessorCount, l2CacheSize;
    char gcnArchName[256];
} hipDeviceProp_t;

struct dim3 {
    unsigned x, y, z;
    constexpr dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
struct nmo_sim_u3 {
    unsigned x, y, z;
};

extern "C" {
hipError_t hipMalloc(void **p, size_t n);
hipError_t hipFree(void *p);
hipError_t hipMemcpy(void *d, const void *s, size_t n, hipMemcpyKind k);
hipError_t hipMemcpyAsync(void *d, const void *s, size_t n, hipMemcpyKind k, hipStream_t st);
hipError_t hipMemset(void *p, int v, size_t n);
hipError_t hipMemsetAsync(void *p, int v, size_t n, hipStream_t st);
hipError_t hipGetLastError(void);
hipError_t hipPeekAtLastError(void);
const char *hipGetErrorString(hipError_t e);
const char *hipGetErrorName(hipError_t e);
hipError_t hipDeviceSynchronize(void);
hipError_t hipGetDevice(int *d);
hipError_t hipSetDevice(int d);
hipError_t hipGetDeviceCount(int *n);
hipError_t hipGetDeviceProperties(hipDeviceProp_t *p, int d);
hipError_t hipDriverGetVersion(int *v);
hipError_t hipRuntimeGetVersion(int *v);
hipError_t hipStreamCreate(hipStream_t *s);
hipError_t hipStreamDestroy(hipStream_t s);
hipError_t hipStreamSynchronize(hipStream_t s);
hipError_t hipEventCreate(hipEvent_t *e);
hipError_t hipEventDestroy(hipEvent_t e);
hipError_t hipEventRecord(hipEvent_t e, hipStream_t s);
hipError_t hipEventSynchronize(hipEvent_t e);
hipError_t hipEventElapsedTime(float *ms, hipEvent_t a, hipEvent_t b);
}

/* the running fiber's coordinates */
struct nmo_sim_thread {
    nmo_sim_u3 tid;
    int linear, lane, warp;
    unsigned xgen; /* warp exchanges done */
};
extern thread_local nmo_sim_thread *nmo_sim_cur;
extern thread_local nmo_sim_u3 nmo_sim_bid, nmo_sim_bdim, nmo_sim_gdim;
#define threadIdx (nmo_sim_cur->tid)
#define blockIdx nmo_sim_bid
#define blockDim nmo_sim_bdim
#define gridDim nmo_sim_gdim

void __syncthreads(void);
/* Every lane of the warp deposits v; returns the value deposited by lane src. */
uint32_t nmo_sim_xchg(uint32_t v, int src);
uint64_t nmo_sim_ballot(int pred);
inline int nmo_sim_lane(void) { return nmo_sim_cur->lane; }
/* Run body for every thread of every block (sets hipGetLastError on a bad launch). */
void nmo_sim_launch(dim3 grid, dim3 block, const std::function<void()> &body);

#endif
