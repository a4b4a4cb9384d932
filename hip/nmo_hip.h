/* numoracle GPU layer: the project-owned portability header (DESIGN §9).
 *
 * Every .hip file includes this header and nothing else GPU-specific. It selects one of
 * three platforms:
 *
 *   NMO_HIP_NVIDIA  nvcc (`nvcc -x cu`): the HIP runtime subset below is mapped onto the
 *                   CUDA runtime (Debian's HIP 5.2 NVIDIA headers do not build with
 *                   CUDA 13, so we do not use them);
 *   NMO_HIP_AMD     hipcc / clang -x hip with HIP headers: <hip/hip_runtime.h>;
 *   NMO_HIP_BARE    clang -x hip -nogpuinc without any HIP headers (a device-only
 *                   compile check, e.g. clang-19 --offload-arch=gfx942 --cuda-device-only
 *                   -S): the few declarations the kernels need are provided here, on top
 *                   of clang's amdgcn builtins. Selected by -DNMO_HIP_BARE=1 (the CI
 *                   script passes it) or when <hip/hip_runtime.h> cannot be found.
 *
 * Kernels never use raw shuffles, ballots, half/bf16 types or platform math directly:
 *   nmo_shfl_down / nmo_shfl_xor   (float, int; HIP semantics: an out-of-range source
 *                                   lane returns the caller's own value)
 *   nmo_ballot (64-bit lane mask on every platform), nmo_popcount64, nmo_lane_id
 *   NMO_WARP_SIZE                  64 on CDNA (gfx9), 32 on NVIDIA and RDNA; a compile
 *                                  time constant in DEVICE code only. Host code asks the
 *                                  device (nmo_gpu_warp_size() in runtime.hip).
 *   nmo_bf16_to_f / nmo_f_to_bf16_rne / nmo_f_to_bf16_rz, the same for fp16: bit
 *                                  manipulation, numoracle/conv16.h (one copy, shared
 *                                  with the CPU candidates)
 *   nmo_expf, nmo_logf, nmo_rsqrtf, nmo_sqrtf, nmo_fmaf, nmo_tanhf, nmo_erff: the
 *                                  platform library (CUDA libdevice / ROCm OCML); the
 *                                  accuracy a kernel relies on is NMO_HIP_FN_PLAN.
 *   nmo_mma_*                      a 16x16x16 tensor-core tile (bf16/fp16 in, fp32 acc)
 *                                  over mma.sync (sm_80+) or MFMA (gfx90a, gfx94x).
 */
#ifndef NMO_HIP_H
#define NMO_HIP_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ------------------------------------------------------------------ platform choice */

#if defined(NMO_HIP_SIM) && NMO_HIP_SIM
/* the CPU simulator (hip/sim/nmo_sim.cpp): host C++, one fiber per GPU thread */
#undef NMO_HIP_SIM
#define NMO_HIP_SIM 1
#elif defined(__CUDACC__) && !defined(__HIP__)
#define NMO_HIP_NVIDIA 1
#elif defined(NMO_HIP_BARE) && NMO_HIP_BARE
#undef NMO_HIP_BARE
#define NMO_HIP_BARE 1
#define NMO_HIP_AMD 1
#elif defined(__has_include)
#if __has_include(<hip/hip_runtime.h>)
#define NMO_HIP_AMD 1
#else
#define NMO_HIP_AMD 1
#define NMO_HIP_BARE 1
#endif
#else
#define NMO_HIP_AMD 1
#endif

/* Device pass of the compiler (code generated for the GPU). */
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define NMO_DEVICE_PASS 1
#endif

/* ------------------------------------------------------------------ CPU simulator */
#if defined(NMO_HIP_SIM)
#include "nmo_hip_sim.h"
#define NMO_PLATFORM_NAME "sim"

/* ------------------------------------------------------------------ NVIDIA: CUDA */
#elif defined(NMO_HIP_NVIDIA)
#include <cuda_runtime.h>

typedef cudaError_t hipError_t;
typedef cudaStream_t hipStream_t;
typedef cudaEvent_t hipEvent_t;
typedef cudaDeviceProp hipDeviceProp_t;
typedef cudaMemcpyKind hipMemcpyKind;
#define hipSuccess cudaSuccess
#define hipErrorNotSupported cudaErrorNotSupported
#define hipErrorInvalidValue cudaErrorInvalidValue
#define hipErrorOutOfMemory cudaErrorMemoryAllocation
#define hipMemcpyHostToDevice cudaMemcpyHostToDevice
#define hipMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define hipMemcpyDeviceToDevice cudaMemcpyDeviceToDevice
#define hipGetErrorString cudaGetErrorString
#define hipGetErrorName cudaGetErrorName
#define hipGetLastError cudaGetLastError
#define hipPeekAtLastError cudaPeekAtLastError
#define hipDeviceSynchronize cudaDeviceSynchronize
#define hipGetDevice cudaGetDevice
#define hipSetDevice cudaSetDevice
#define hipGetDeviceCount cudaGetDeviceCount
#define hipGetDeviceProperties cudaGetDeviceProperties
#define hipDriverGetVersion cudaDriverGetVersion
#define hipRuntimeGetVersion cudaRuntimeGetVersion
#define hipMalloc cudaMalloc
#define hipFree cudaFree
#define hipMemcpy cudaMemcpy
#define hipMemcpyAsync cudaMemcpyAsync
#define hipMemset cudaMemset
#define hipMemsetAsync cudaMemsetAsync
#define hipStreamCreate cudaStreamCreate
#define hipStreamDestroy cudaStreamDestroy
#define hipStreamSynchronize cudaStreamSynchronize
#define hipEventCreate cudaEventCreate
#define hipEventDestroy cudaEventDestroy
#define hipEventRecord cudaEventRecord
#define hipEventSynchronize cudaEventSynchronize
#define hipEventElapsedTime cudaEventElapsedTime
#define hipFuncSetAttribute(f, a, v) cudaFuncSetAttribute((const void *)(f), (a), (v))
#define hipFuncAttributeMaxDynamicSharedMemorySize cudaFuncAttributeMaxDynamicSharedMemorySize
#define NMO_PLATFORM_NAME "cuda"

/* ------------------------------------------------------------------ AMD: HIP headers */
#elif !defined(NMO_HIP_BARE)
#include <hip/hip_runtime.h>
#define NMO_PLATFORM_NAME "hip"

/* ------------------------------------------------------------------ AMD: bare clang */
#else
/* No HIP headers: clang -x hip -nogpuinc. Enough for the kernels and their host-side
 * launch code to be parsed; the host runtime functions are declared, never defined. */
#ifndef __host__
#define __host__ __attribute__((host))
#endif
#ifndef __device__
#define __device__ __attribute__((device))
#endif
#ifndef __global__
#define __global__ __attribute__((global))
#endif
#ifndef __shared__
#define __shared__ __attribute__((shared))
#endif
#ifndef __constant__
#define __constant__ __attribute__((constant))
#endif
#ifndef __launch_bounds__
#define __launch_bounds__(t, ...) __attribute__((amdgpu_flat_work_group_size(1, t)))
#endif
#define NMO_PLATFORM_NAME "hip-bare"

typedef int hipError_t;
typedef struct ihipStream_t *hipStream_t;
typedef struct ihipEvent_t *hipEvent_t;
typedef enum {
    hipMemcpyHostToHost = 0, hipMemcpyHostToDevice = 1, hipMemcpyDeviceToHost = 2,
    hipMemcpyDeviceToDevice = 3
} hipMemcpyKind;
#define hipSuccess 0
#define hipErrorInvalidValue 1
#define hipErrorOutOfMemory 2
#define hipErrorNotSupported 801
typedef struct {
    char name[256];
    size_t totalGlobalMem;
    int warpSize, major, minor, multiProcessorCount, l2CacheSize;
    char gcnArchName[256];
} hipDeviceProp_t;
struct dim3 {
    unsigned x, y, z;
    __host__ __device__ constexpr dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1)
        : x(a), y(b), z(c) {}
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
/* what clang lowers kernel<<<g, b, shm, stream>>>(...) to */
unsigned __hipPushCallConfiguration(dim3 g, dim3 b, size_t shm, hipStream_t s);
hipError_t __hipPopCallConfiguration(dim3 *g, dim3 *b, size_t *shm, hipStream_t *s);
hipError_t hipLaunchKernel(const void *f, dim3 g, dim3 b, void **args, size_t shm,
                           hipStream_t s);
}
struct nmo_bare_u3 {
    unsigned x, y, z;
};
#define threadIdx                                                                        \
    (nmo_bare_u3{__builtin_amdgcn_workitem_id_x(), __builtin_amdgcn_workitem_id_y(),     \
                 __builtin_amdgcn_workitem_id_z()})
#define blockIdx                                                                         \
    (nmo_bare_u3{__builtin_amdgcn_workgroup_id_x(), __builtin_amdgcn_workgroup_id_y(),   \
                 __builtin_amdgcn_workgroup_id_z()})
#define blockDim                                                                         \
    (nmo_bare_u3{(unsigned)__builtin_amdgcn_workgroup_size_x(),                          \
                 (unsigned)__builtin_amdgcn_workgroup_size_y(),                          \
                 (unsigned)__builtin_amdgcn_workgroup_size_z()})
#define gridDim                                                                          \
    (nmo_bare_u3{__builtin_amdgcn_grid_size_x() / (unsigned)__builtin_amdgcn_workgroup_size_x(), \
                 __builtin_amdgcn_grid_size_y() / (unsigned)__builtin_amdgcn_workgroup_size_y(), \
                 __builtin_amdgcn_grid_size_z() / (unsigned)__builtin_amdgcn_workgroup_size_z()})
__device__ static inline void __syncthreads(void)
{
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}
/* OCML (ROCm device libraries): resolved at link time; -nogpulib leaves the calls. */
extern "C" {
__device__ float __ocml_exp_f32(float);
__device__ float __ocml_log_f32(float);
__device__ float __ocml_rsqrt_f32(float);
__device__ float __ocml_sqrt_f32(float);
__device__ float __ocml_fma_f32(float, float, float);
__device__ float __ocml_tanh_f32(float);
__device__ float __ocml_erf_f32(float);
__device__ float __ocml_sin_f32(float);
__device__ float __ocml_cos_f32(float);
}
#endif

/* ------------------------------------------------------------------ common helpers */

#if defined(NMO_HIP_SIM)
#define NMO_HD inline
#define NMO_D inline
#elif defined(NMO_HIP_NVIDIA)
#define NMO_HD __host__ __device__ __forceinline__
#define NMO_D __device__ __forceinline__
#else
#define NMO_HD __host__ __device__ inline __attribute__((always_inline))
#define NMO_D __device__ inline __attribute__((always_inline))
#endif

/* Warp (wavefront) size, device code only. */
#if defined(NMO_HIP_SIM)
#define NMO_WARP_SIZE NMO_SIM_WARP
#elif defined(NMO_HIP_NVIDIA)
#define NMO_WARP_SIZE 32
#elif defined(__AMDGCN_WAVEFRONT_SIZE)
#define NMO_WARP_SIZE __AMDGCN_WAVEFRONT_SIZE
#elif defined(__GFX9__)
#define NMO_WARP_SIZE 64
#elif defined(__HIP_DEVICE_COMPILE__)
#define NMO_WARP_SIZE 32
#else
/* host pass of a HIP compile: the device is not known here (use the runtime value) */
#define NMO_WARP_SIZE 64
#endif

/* The function accuracies a kernel of this platform relies on (plan text). */
#if defined(NMO_HIP_NVIDIA) || defined(NMO_HIP_SIM) /* SIM: glibc, within CUDA's figures */
#define NMO_HIP_FN_PLAN "fn=cuda"
#else
#define NMO_HIP_FN_PLAN "fn=ocml"
#endif

/* ------------------------------------------------------------------ bf16 / fp16 */
/* bit casts and the 16-bit conversions: the one copy the CPU candidates use too
 * (numoracle/conv16.h), host + device here */
#define NMO_CONV_FN static NMO_HD
#include "numoracle/conv16.h"

/* Storage element types of the kernels: float, and two 16-bit tags holding raw bits.
 * Kernels see data only through nmo_ty<T>: load to float, store from float (RNE, or RZ
 * for mutants), and the lanes of 32-bit words of a vector load. */
struct nmo_bf16 {
    uint16_t bits;
};
struct nmo_fp16 {
    uint16_t bits;
};

template <class T> struct nmo_ty;
template <> struct nmo_ty<float> {
    static constexpr int bytes = 4;
    static constexpr bool is_bf16 = false;
    static NMO_HD float to_f(float v) { return v; }
    static NMO_HD float store(float v, bool rz) { (void)rz; return v; } /* fp32 out */
    static NMO_HD float round(float v) { return v; }
    /* element i of a vector held as 32-bit words */
    static NMO_HD float lane(const uint32_t *w, int i) { return nmo_u2f(w[i]); }
    static NMO_HD void set_lane(uint32_t *w, int i, float x, bool rz)
    {
        (void)rz;
        w[i] = nmo_f2u(x);
    }
};
template <> struct nmo_ty<nmo_bf16> {
    static constexpr int bytes = 2;
    static constexpr bool is_bf16 = true;
    static NMO_HD float to_f(nmo_bf16 v) { return nmo_bf16_to_f(v.bits); }
    static NMO_HD nmo_bf16 store(float v, bool rz)
    {
        return nmo_bf16{rz ? nmo_f_to_bf16_rz(v) : nmo_f_to_bf16_rne(v)};
    }
    static NMO_HD float round(float v) { return nmo_round_bf16(v); }
    static NMO_HD float lane(const uint32_t *w, int i)
    {
        return nmo_bf16_to_f((uint16_t)(w[i >> 1] >> ((i & 1) * 16)));
    }
    static NMO_HD void set_lane(uint32_t *w, int i, float x, bool rz)
    {
        uint32_t b = rz ? nmo_f_to_bf16_rz(x) : nmo_f_to_bf16_rne(x), sh = (uint32_t)(i & 1) * 16u;
        w[i >> 1] = (w[i >> 1] & ~(0xffffu << sh)) | (b << sh);
    }
};
template <> struct nmo_ty<nmo_fp16> {
    static constexpr int bytes = 2;
    static constexpr bool is_bf16 = false;
    static NMO_HD float to_f(nmo_fp16 v) { return nmo_fp16_to_f(v.bits); }
    static NMO_HD nmo_fp16 store(float v, bool rz)
    {
        return nmo_fp16{rz ? nmo_f_to_fp16_rz(v) : nmo_f_to_fp16_rne(v)};
    }
    static NMO_HD float round(float v) { return nmo_round_fp16(v); }
    static NMO_HD float lane(const uint32_t *w, int i)
    {
        return nmo_fp16_to_f((uint16_t)(w[i >> 1] >> ((i & 1) * 16)));
    }
    static NMO_HD void set_lane(uint32_t *w, int i, float x, bool rz)
    {
        uint32_t b = rz ? nmo_f_to_fp16_rz(x) : nmo_f_to_fp16_rne(x), sh = (uint32_t)(i & 1) * 16u;
        w[i >> 1] = (w[i >> 1] & ~(0xffffu << sh)) | (b << sh);
    }
};

/* A VB-byte vector (VB = 4, 8 or 16), the unit of a kernel's global loads/stores. */
template <int VB> struct __attribute__((aligned(VB))) nmo_vecb {
    uint32_t w[VB / 4];
};

/* ------------------------------------------------------------------ math */

#if defined(NMO_HIP_NVIDIA) || defined(NMO_HIP_SIM) || !defined(NMO_HIP_BARE)
#if defined(NMO_HIP_SIM)
NMO_D float rsqrtf(float x) { return 1.0f / sqrtf(x); }
#endif
NMO_D float nmo_expf(float x) { return expf(x); }
NMO_D float nmo_logf(float x) { return logf(x); }
NMO_D float nmo_rsqrtf(float x) { return rsqrtf(x); }
NMO_D float nmo_sqrtf(float x) { return sqrtf(x); }
NMO_D float nmo_fmaf(float a, float b, float c) { return fmaf(a, b, c); }
NMO_D float nmo_tanhf(float x) { return tanhf(x); }
NMO_D float nmo_erff(float x) { return erff(x); }
NMO_D float nmo_sinf(float x) { return sinf(x); }
NMO_D float nmo_cosf(float x) { return cosf(x); }
#else
NMO_D float nmo_expf(float x) { return __ocml_exp_f32(x); }
NMO_D float nmo_logf(float x) { return __ocml_log_f32(x); }
NMO_D float nmo_rsqrtf(float x) { return __ocml_rsqrt_f32(x); }
NMO_D float nmo_sqrtf(float x) { return __ocml_sqrt_f32(x); }
NMO_D float nmo_fmaf(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
NMO_D float nmo_tanhf(float x) { return __ocml_tanh_f32(x); }
NMO_D float nmo_erff(float x) { return __ocml_erf_f32(x); }
NMO_D float nmo_sinf(float x) { return __ocml_sin_f32(x); }
NMO_D float nmo_cosf(float x) { return __ocml_cos_f32(x); }
#endif
/* acc + a*b with the product rounded first: never contracted into an FMA, whatever
 * the compiler's contraction default (nvcc --fmad=true, hipcc -ffp-contract=fast). */
/* nmo_mul_nc / nmo_add_rn / nmo_sub_rn: one correctly rounded operation that the
 * compiler never fuses with a neighbour (a product feeding an add, or an add fed by a
 * library function whose last step is a product). Kernels use them wherever the plan
 * has a rounding point between a multiply and an add (mean = sum * RN(1/N) before
 * x - mean, ms * ... + eps, 1 + expf(-a), m + logf(s), acc + expf(d)). */
#if defined(NMO_HIP_NVIDIA)
NMO_D float nmo_madd_nofma(float acc, float a, float b) { return __fadd_rn(acc, __fmul_rn(a, b)); }
NMO_D float nmo_mul_nc(float a, float b) { return __fmul_rn(a, b); }
NMO_D float nmo_add_rn(float a, float b) { return __fadd_rn(a, b); }
NMO_D float nmo_sub_rn(float a, float b) { return __fsub_rn(a, b); }
#elif defined(__clang__)
NMO_D float nmo_madd_nofma(float acc, float a, float b)
{
#pragma clang fp contract(off)
    return acc + a * b;
}
NMO_D float nmo_mul_nc(float a, float b)
{
#pragma clang fp contract(off)
    return a * b;
}
NMO_D float nmo_add_rn(float a, float b)
{
#pragma clang fp contract(off)
    return a + b;
}
NMO_D float nmo_sub_rn(float a, float b)
{
#pragma clang fp contract(off)
    return a - b;
}
#else /* g++ (the simulator): built with -ffp-contract=off */
NMO_D float nmo_madd_nofma(float acc, float a, float b) { return acc + a * b; }
NMO_D float nmo_mul_nc(float a, float b) { return a * b; }
NMO_D float nmo_add_rn(float a, float b) { return a + b; }
NMO_D float nmo_sub_rn(float a, float b) { return a - b; }
#endif
/* IEEE max that ignores NaN like fmaxf (the kernels' row max). */
#if defined(NMO_HIP_BARE) || defined(NMO_HIP_SIM)
NMO_D float nmo_fmaxf(float a, float b) { return __builtin_fmaxf(a, b); }
#else
NMO_D float nmo_fmaxf(float a, float b) { return fmaxf(a, b); }
#endif

/* ------------------------------------------------------------------ warp primitives */

NMO_D int nmo_lane_id(void)
{
#if defined(NMO_HIP_SIM)
    return nmo_sim_lane();
#elif defined(NMO_HIP_NVIDIA)
    return (int)(threadIdx.x & 31u);
#else
    return (int)__builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u));
#endif
}

#if defined(NMO_HIP_SIM)
NMO_D int nmo_shfl_down(int v, int d)
{
    int l = nmo_lane_id(), s = l + d;
    return (int)nmo_sim_xchg((uint32_t)v, s < NMO_WARP_SIZE ? s : l);
}
NMO_D float nmo_shfl_down(float v, int d) { return nmo_u2f((uint32_t)nmo_shfl_down((int)nmo_f2u(v), d)); }
NMO_D int nmo_shfl_xor(int v, int m)
{
    int l = nmo_lane_id(), s = l ^ m;
    return (int)nmo_sim_xchg((uint32_t)v, s < NMO_WARP_SIZE ? s : l);
}
NMO_D float nmo_shfl_xor(float v, int m) { return nmo_u2f((uint32_t)nmo_shfl_xor((int)nmo_f2u(v), m)); }
NMO_D float nmo_shfl(float v, int src) { return nmo_u2f(nmo_sim_xchg(nmo_f2u(v), src)); }
NMO_D uint64_t nmo_ballot(int pred) { return nmo_sim_ballot(pred); }
NMO_D int nmo_popcount64(uint64_t m) { return __builtin_popcountll(m); }
#elif defined(NMO_HIP_NVIDIA)
NMO_D float nmo_shfl_down(float v, int d) { return __shfl_down_sync(0xffffffffu, v, (unsigned)d); }
NMO_D int nmo_shfl_down(int v, int d) { return __shfl_down_sync(0xffffffffu, v, (unsigned)d); }
NMO_D float nmo_shfl_xor(float v, int m) { return __shfl_xor_sync(0xffffffffu, v, m); }
NMO_D int nmo_shfl_xor(int v, int m) { return __shfl_xor_sync(0xffffffffu, v, m); }
NMO_D float nmo_shfl(float v, int src) { return __shfl_sync(0xffffffffu, v, src); }
NMO_D uint64_t nmo_ballot(int pred) { return (uint64_t)__ballot_sync(0xffffffffu, pred); }
NMO_D int nmo_popcount64(uint64_t m) { return __popcll((unsigned long long)m); }
#elif !defined(NMO_HIP_BARE)
NMO_D float nmo_shfl_down(float v, int d) { return __shfl_down(v, (unsigned)d); }
NMO_D int nmo_shfl_down(int v, int d) { return __shfl_down(v, (unsigned)d); }
NMO_D float nmo_shfl_xor(float v, int m) { return __shfl_xor(v, m); }
NMO_D int nmo_shfl_xor(int v, int m) { return __shfl_xor(v, m); }
NMO_D float nmo_shfl(float v, int src) { return __shfl(v, src); }
NMO_D uint64_t nmo_ballot(int pred) { return (uint64_t)__ballot(pred); }
NMO_D int nmo_popcount64(uint64_t m) { return __popcll((unsigned long long)m); }
#else
/* ds_bpermute: lane l reads the value of lane (addr >> 2); out-of-range sources are
 * redirected to the caller itself (HIP's __shfl_down/__shfl_xor semantics). */
NMO_D int nmo_bperm_(int v, int src)
{
    return __builtin_amdgcn_ds_bpermute(src << 2, v);
}
NMO_D int nmo_shfl_down(int v, int d)
{
    int l = nmo_lane_id(), s = l + d;
    return nmo_bperm_(v, s < NMO_WARP_SIZE ? s : l);
}
NMO_D float nmo_shfl_down(float v, int d) { return nmo_u2f((uint32_t)nmo_shfl_down((int)nmo_f2u(v), d)); }
NMO_D int nmo_shfl_xor(int v, int m)
{
    int l = nmo_lane_id(), s = l ^ m;
    return nmo_bperm_(v, s < NMO_WARP_SIZE ? s : l);
}
NMO_D float nmo_shfl_xor(float v, int m) { return nmo_u2f((uint32_t)nmo_shfl_xor((int)nmo_f2u(v), m)); }
NMO_D float nmo_shfl(float v, int src) { return nmo_u2f((uint32_t)nmo_bperm_((int)nmo_f2u(v), src)); }
#if NMO_WARP_SIZE == 64
NMO_D uint64_t nmo_ballot(int pred) { return __builtin_amdgcn_ballot_w64(pred != 0); }
#else
NMO_D uint64_t nmo_ballot(int pred) { return (uint64_t)__builtin_amdgcn_ballot_w32(pred != 0); }
#endif
NMO_D int nmo_popcount64(uint64_t m) { return __builtin_popcountll(m); }
#endif

/* Warp reductions over all NMO_WARP_SIZE lanes. */
NMO_D float nmo_warp_sum_xor(float v)
{
    for (int o = NMO_WARP_SIZE / 2; o >= 1; o >>= 1) v += nmo_shfl_xor(v, o);
    return v; /* every lane holds the total */
}
NMO_D float nmo_warp_sum_down(float v)
{
    for (int o = NMO_WARP_SIZE / 2; o >= 1; o >>= 1) v += nmo_shfl_down(v, o);
    return v; /* lane 0 holds the total */
}
NMO_D float nmo_warp_max_xor(float v)
{
    for (int o = NMO_WARP_SIZE / 2; o >= 1; o >>= 1) v = nmo_fmaxf(v, nmo_shfl_xor(v, o));
    return v;
}

/* ------------------------------------------------------------------ tensor-core tile */
/* One warp computes C(16x16, fp32) += A(16x16) * B(16x16) from 16-bit inputs (bf16 or
 * fp16 bits) held in shared memory: A row-major with leading dimension lda (A[m*lda+k]),
 * B row-major with leading dimension ldb (B[k*ldb+n]). Products are exact in fp32;
 * accumulation is the hardware's (sum=mma). The accumulator fragment has
 * NMO_MMA_ACC_N floats per lane; nmo_mma_acc_rc gives the (row, col) of each.
 *   NVIDIA sm_80+: two mma.sync.m16n8k16 (row.col) per tile;
 *   AMD gfx90a/gfx94x (wave64): one v_mfma_f32_16x16x16{bf16_1k,f16};
 *   anything else: a per-lane scalar fallback with the same fragment layout as AMD
 *   (16x16 tile over 64 lanes) or NVIDIA (over 32 lanes), fp32 fmaf in k order. */
#if defined(NMO_HIP_NVIDIA) || NMO_WARP_SIZE == 32
#define NMO_MMA_ACC_N 8
#else
#define NMO_MMA_ACC_N 4
#endif

/* (row, col) in the 16x16 tile of accumulator element i of lane l. */
NMO_D void nmo_mma_acc_rc(int l, int i, int *r, int *c)
{
#if NMO_MMA_ACC_N == 8
    /* mma.m16n8k16 C fragment, two n-halves: c0,c1 (g, 2t..2t+1), c2,c3 (g+8, ...) */
    int g = l >> 2, t = l & 3, half = i >> 2, j = i & 3;
    *r = g + ((j >> 1) << 3);
    *c = half * 8 + 2 * t + (j & 1);
#else
    /* MFMA 16x16x16 D fragment: lane l holds D[4*(l/16)+i][l%16] */
    *r = 4 * (l >> 4) + i;
    *c = l & 15;
#endif
}

#if defined(NMO_HIP_NVIDIA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define NMO_MMA_HW 1
#elif defined(NMO_HIP_AMD) && (defined(__gfx90a__) || defined(__gfx940__) ||              \
                               defined(__gfx941__) || defined(__gfx942__) || defined(__gfx950__))
#define NMO_MMA_HW 1
#endif

template <int IS_BF16>
NMO_D void nmo_mma_16x16x16(float acc[NMO_MMA_ACC_N], const uint16_t *A, int lda,
                            const uint16_t *B, int ldb)
{
    const int l = nmo_lane_id();
#if defined(NMO_HIP_NVIDIA) && defined(NMO_MMA_HW)
    const int g = l >> 2, t = l & 3;
    /* A fragment (16x16 row-major): a0 (g, 2t), a1 (g+8, 2t), a2 (g, 2t+8), a3 (g+8, 2t+8) */
    uint32_t a[4];
    a[0] = (uint32_t)A[g * lda + 2 * t] | ((uint32_t)A[g * lda + 2 * t + 1] << 16);
    a[1] = (uint32_t)A[(g + 8) * lda + 2 * t] | ((uint32_t)A[(g + 8) * lda + 2 * t + 1] << 16);
    a[2] = (uint32_t)A[g * lda + 2 * t + 8] | ((uint32_t)A[g * lda + 2 * t + 9] << 16);
    a[3] = (uint32_t)A[(g + 8) * lda + 2 * t + 8] | ((uint32_t)A[(g + 8) * lda + 2 * t + 9] << 16);
    for (int h = 0; h < 2; h++) {
        const int n = h * 8 + g;
        /* B fragment (16x8, "col"): b0 rows 2t, 2t+1; b1 rows 2t+8, 2t+9; column g */
        uint32_t b0 = (uint32_t)B[(2 * t) * ldb + n] | ((uint32_t)B[(2 * t + 1) * ldb + n] << 16);
        uint32_t b1 = (uint32_t)B[(2 * t + 8) * ldb + n] | ((uint32_t)B[(2 * t + 9) * ldb + n] << 16);
        float *c = acc + 4 * h;
        if (IS_BF16)
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                         "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                         : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                         : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
        else
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                         "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                         : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                         : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
#elif defined(NMO_HIP_AMD) && defined(NMO_MMA_HW)
    /* A: lane l holds A[l%16][4*(l/16) + 0..3]; B: B[4*(l/16) + 0..3][l%16] */
    typedef short s4 __attribute__((ext_vector_type(4)));
    typedef float f4 __attribute__((ext_vector_type(4)));
    const int r = l & 15, k0 = 4 * (l >> 4);
    s4 a, b;
    for (int i = 0; i < 4; i++) {
        a[i] = (short)A[r * lda + k0 + i];
        b[i] = (short)B[(k0 + i) * ldb + r];
    }
    f4 c = {acc[0], acc[1], acc[2], acc[3]};
    if (IS_BF16) {
        c = __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(a, b, c, 0, 0, 0);
    } else {
        typedef _Float16 h4 __attribute__((ext_vector_type(4)));
        h4 ah = __builtin_bit_cast(h4, a), bh = __builtin_bit_cast(h4, b);
        c = __builtin_amdgcn_mfma_f32_16x16x16f16(ah, bh, c, 0, 0, 0);
    }
    for (int i = 0; i < 4; i++) acc[i] = c[i];
#else
    /* portable fallback: the lane's own accumulator elements, fmaf over k in order */
    for (int i = 0; i < NMO_MMA_ACC_N; i++) {
        int r, c;
        nmo_mma_acc_rc(l, i, &r, &c);
        float s = acc[i];
        for (int k = 0; k < 16; k++) {
            float x = IS_BF16 ? nmo_bf16_to_f(A[r * lda + k]) : nmo_fp16_to_f(A[r * lda + k]);
            float y = IS_BF16 ? nmo_bf16_to_f(B[k * ldb + c]) : nmo_fp16_to_f(B[k * ldb + c]);
            s = nmo_fmaf(x, y, s);
        }
        acc[i] = s;
    }
#endif
}

/* ------------------------------------------------------------------ kernel launch */

/* nmo_launch(kernel<...>, grid, block, shmem, stream, args...): kernel<<<...>>>(args)
 * on a GPU (template arguments with commas need no extra parentheses), the fiber
 * scheduler in the simulator. The caller checks hipGetLastError afterwards. */
#if defined(NMO_HIP_SIM)
template <class... P, class... A>
inline void nmo_launch(void (*k)(P...), dim3 g, dim3 b, size_t shm, hipStream_t s, A... a)
{
    (void)shm, (void)s;
    nmo_sim_launch(g, b, [&]() { k(static_cast<P>(a)...); });
}
#else
template <class... P, class... A>
inline void nmo_launch(void (*k)(P...), dim3 g, dim3 b, size_t shm, hipStream_t s, A... a)
{
    k<<<g, b, shm, s>>>(static_cast<P>(a)...);
}
#endif

/* ------------------------------------------------------------------ launch checks */

/* Check a HIP call inside a plugin-ABI launch function (msg/msglen in scope); on error
 * write "what: hipError" into msg and return NMO_PLUGIN_ERROR. */
#define NMO_HIP_TRY(call)                                                                \
    do {                                                                                 \
        hipError_t nmo_e_ = (call);                                                      \
        if (nmo_e_ != hipSuccess) {                                                      \
            nmo_hip_msg(msg, msglen, "%s: %s (%s:%d)", #call, hipGetErrorString(nmo_e_),  \
                        __FILE__, __LINE__);                                             \
            return NMO_PLUGIN_ERROR;                                                     \
        }                                                                                \
    } while (0)

/* After every kernel launch: the launch error (bad configuration, no image for this
 * device) surfaces through hipGetLastError. */
#define NMO_HIP_CHECK_LAUNCH(what)                                                       \
    do {                                                                                 \
        hipError_t nmo_e_ = hipGetLastError();                                           \
        if (nmo_e_ != hipSuccess) {                                                      \
            nmo_hip_msg(msg, msglen, "launch of %s: %s", (what), hipGetErrorString(nmo_e_)); \
            return NMO_PLUGIN_ERROR;                                                     \
        }                                                                                \
    } while (0)

#include <stdarg.h>
#include <stdio.h>
static inline void nmo_hip_msg(char *msg, size_t n, const char *fmt, ...)
{
    if (!msg || !n) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, n, fmt, ap);
    va_end(ap);
}

#endif /* NMO_HIP_H */
