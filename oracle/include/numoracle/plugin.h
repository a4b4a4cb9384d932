/* numoracle: the kernel plugin ABI (DESIGN §9), version 2 (numoracle also loads version 1).
 *
 * A plugin is a shared library that lets numoracle check someone's kernels without
 * changing numoracle. It exports ONE symbol, NMO_PLUGIN_QUERY_SYMBOL:
 *
 *     const nmo_plugin_info *nmo_plugin_query(uint32_t host_abi_version);
 *
 * returning a static capability table: for each kernel the operator it implements (a
 * name from `numoracle ops`), the storage dtypes it accepts, the precision plan it
 * honours, and its launch function. numoracle (`--candidate plugin:PATH[:NAME]`)
 * loads the library with dlopen, picks the kernel for the case's operator and dtype,
 * allocates inputs and outputs (in host memory for NMO_PLUGIN_MEM_HOST plugins, in
 * device memory through the HIP/CUDA runtime for NMO_PLUGIN_MEM_DEVICE ones), poisons
 * the outputs (every byte 0xFF) and calls launch. Cases a plugin does not support
 * (operator, dtype, shape, strides) are reported as SKIPPED, never as PASS.
 *
 * This header is self-contained C (stdint/stddef only): a plugin needs neither MPFR nor
 * any other numoracle header. Compatibility rules:
 *  - NMO_PLUGIN_ABI_VERSION changes when any layout or meaning below changes; numoracle
 *    refuses a plugin whose abi_version it does not speak. Version 2 appended
 *    nmo_plugin_kernel.geometry (the reduction geometry of the kernel's launch at a
 *    shape); numoracle queries a plugin with 2, then with 1, and reads a version-1
 *    table (kernel_size = NMO_PLUGIN_KERNEL_SIZE_V1, no geometry) as before.
 *  - Structs carry their size (struct_size / kernel_size) so that fields may be
 *    appended within a version; readers only look at fields inside the given size.
 *  - Every pointer in the table must stay valid until the library is unloaded.
 *  - numoracle validates the table and runs host kernels in a child process with a
 *    timeout (NMO_PLUGIN_TIMEOUT seconds, default 600): hip/README.md "Isolation".
 *
 * Tensors and arguments, per operator (see `numoracle ops` and refs/<op>.c):
 *  - in[] / out[] follow the operator's tensor order; dims are logical (row-major
 *    order), strides are in ELEMENTS; numoracle passes packed tensors today, but a
 *    kernel must check (or declare unsupported) what it cannot handle.
 *  - param[] are the operator's scalar parameters in its order (doubles; a kernel
 *    converts them the way its real entry point receives them, e.g. (float)eps).
 *  - dtype values are NMO_PLUGIN_DT_*, numerically equal to numoracle's nmo_fmt.
 *  - stream is a hipStream_t / cudaStream_t for device plugins (the kernel must run on
 *    it; numoracle synchronizes and checks the last error after launch returns), NULL
 *    for host plugins. */
#ifndef NUMORACLE_PLUGIN_H
#define NUMORACLE_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NMO_PLUGIN_ABI_VERSION 2u
#define NMO_PLUGIN_ABI_VERSION_MIN 1u /* the oldest version numoracle loads */
#define NMO_PLUGIN_QUERY_SYMBOL "nmo_plugin_query"
#define NMO_PLUGIN_MAX_DIMS 8

#if defined(_WIN32)
#define NMO_PLUGIN_EXPORT __declspec(dllexport)
#else
#define NMO_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* Storage dtypes: the same numbers as nmo_fmt (numoracle/fmt.h). Pinned. */
enum {
    NMO_PLUGIN_DT_FP64 = 0,
    NMO_PLUGIN_DT_FP32 = 1,
    NMO_PLUGIN_DT_TF32 = 2,
    NMO_PLUGIN_DT_BF16 = 3,
    NMO_PLUGIN_DT_FP16 = 4,
    NMO_PLUGIN_DT_FP8_E4M3 = 5,
    NMO_PLUGIN_DT_FP8_E5M2 = 6,
    NMO_PLUGIN_DT_FP8_E4M3FNUZ = 7,
    NMO_PLUGIN_DT_FP8_E5M2FNUZ = 8
};

/* Where tensor data lives. */
enum {
    NMO_PLUGIN_MEM_HOST = 0,   /* plain host pointers (CPU kernels, simulators) */
    NMO_PLUGIN_MEM_DEVICE = 1  /* HIP/CUDA device pointers; needs a -Dgpu= build */
};

/* Return values of launch (and of supports: 1 yes, 0 no). */
enum {
    NMO_PLUGIN_OK = 0,
    NMO_PLUGIN_UNSUPPORTED = 1, /* this case is not supported: reported as SKIPPED */
    NMO_PLUGIN_ERROR = 2        /* the launch failed: msg says why; an error, exit 2 */
};

typedef struct nmo_plugin_tensor {
    void *data;                                /* host or device, per info->memory */
    int32_t dtype;                             /* NMO_PLUGIN_DT_* */
    int32_t ndims;
    int64_t dims[NMO_PLUGIN_MAX_DIMS];
    int64_t strides[NMO_PLUGIN_MAX_DIMS];      /* elements */
} nmo_plugin_tensor;

typedef struct nmo_plugin_args {
    uint32_t struct_size;      /* sizeof(nmo_plugin_args) as numoracle compiled it */
    uint32_t abi_version;      /* NMO_PLUGIN_ABI_VERSION */
    const char *op;            /* operator name */
    int32_t n_in, n_out, n_param;
    const nmo_plugin_tensor *in;
    nmo_plugin_tensor *out;
    const double *param;
    const char *plan;          /* the plan of the check, canonical text (informative) */
    void *stream;              /* hipStream_t / cudaStream_t, or NULL */
} nmo_plugin_args;

typedef struct nmo_plugin_kernel {
    const char *op;            /* operator name as `numoracle ops` lists it */
    const char *name;          /* unique within the plugin */
    /* Storage dtypes, space separated: "fp32 bf16 fp16" (in = out = that dtype), or
     * "IN>OUT" tokens for mixed kernels ("bf16>fp32"). */
    const char *dtypes;
    /* The plan the kernel honours, as plan text over the dtype's default plan ("" = the
     * default), e.g. "fn=ocml" or "sum=mma:16". The check uses: dtype default, then this
     * text, then the user's --plan. */
    const char *plan;
    int32_t correct;           /* 1: a correct implementation; 0: a deliberate mutant
                                  (negative control; expected to FAIL somewhere) */
    const char *desc;          /* one line */
    /* Optional (NULL = supports every shape and stride of its dtypes): 1 when the kernel
     * can run args (device pointers may be NULL here: decide on metadata only). */
    int (*supports)(const nmo_plugin_args *args);
    /* Run the kernel: read in[], write every element of out[]. Return NMO_PLUGIN_OK,
     * NMO_PLUGIN_UNSUPPORTED (-> SKIPPED) or NMO_PLUGIN_ERROR with a one-line message in
     * msg (msglen bytes, NUL-terminated). Device plugins launch on args->stream and may
     * return before the kernel finished. */
    int (*launch)(const nmo_plugin_args *args, char *msg, size_t msglen);
    /* ABI 2. Optional (NULL: sum=any, or whatever `plan` says): the reduction geometry the
     * kernel's launch has for args (metadata only, data pointers NULL), as plan text — a
     * sum=tree:D / sum=blocked:B[:D[:P]] field (README "Reduction geometry"), e.g. a block
     * of 256 threads per row of N, row partials then added: "sum=blocked:16:12:4096".
     * Write it NUL-terminated into text (len bytes) and return 1; return 0 for none at
     * this case. The check's plan: dtype default, `plan`, this text, then the user's
     * --plan. A geometry the kernel does not have makes a correct kernel FAIL. */
    int (*geometry)(const nmo_plugin_args *args, char *text, size_t len);
} nmo_plugin_kernel;

/* sizeof(nmo_plugin_kernel) of ABI version 1 (no geometry) */
#define NMO_PLUGIN_KERNEL_SIZE_V1 (offsetof(nmo_plugin_kernel, geometry))

typedef struct nmo_plugin_info {
    uint32_t abi_version;      /* NMO_PLUGIN_ABI_VERSION the plugin was built against */
    uint32_t struct_size;      /* sizeof(nmo_plugin_info) */
    uint32_t kernel_size;      /* sizeof(nmo_plugin_kernel): stride of kernels[] */
    int32_t memory;            /* NMO_PLUGIN_MEM_HOST or NMO_PLUGIN_MEM_DEVICE */
    const char *name;          /* plugin name */
    const char *version;       /* plugin version text */
    int32_t n_kernels;
    const nmo_plugin_kernel *kernels;
    /* Optional JSON object text merged into every report's "provenance" (compiler,
     * library versions, ...); NULL for none. */
    const char *provenance_json;
} nmo_plugin_info;

/* The symbol a plugin exports. host_abi_version is numoracle's NMO_PLUGIN_ABI_VERSION;
 * a plugin may return NULL when it cannot serve that version. */
typedef const nmo_plugin_info *(*nmo_plugin_query_fn)(uint32_t host_abi_version);

#ifdef __cplusplus
}
#endif
#endif
