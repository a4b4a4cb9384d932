/* numoracle: the entry point for language bindings (the Python package python/numoracle
 * drives it through ctypes). One call judges a kernel's outputs, with everything the CLI's
 * `check` takes spelled as plain C values: operator name, plan text, parameters by name,
 * named tensors with dtype and dims, options. The result is an opaque object read through
 * accessors, so that fields can be added without breaking a binding.
 *
 *   nmo_bind_tensor in[2] = {{"x", "bf16", 2, xdims, x}, {"weight", "bf16", 1, wdims, w}};
 *   nmo_bind_tensor out[1] = {{"y", "bf16", 2, xdims, y}};
 *   nmo_bind_req q = {.api_version = NMO_API_VERSION, .op = "rms_norm",
 *                     .n_in = 2, .in = in, .n_out = 1, .out = out};
 *   nmo_bind_result *r = nmo_bind_check(&q);
 *   if (nmo_bind_status(r) != NMO_OK) puts(nmo_bind_message(r));
 *   else printf("%s\n", nmo_bind_json(r));     // the JSON report of `numoracle check`
 *   nmo_bind_free(r);
 *
 * Stability: NMO_API_VERSION names this contract (the request layout, the accessors and
 * their meaning). It is bumped only when a binding written against the old value would
 * misread the library; nmo_bind_check refuses a request whose api_version differs from the
 * library's, naming both. Every function is thread-safe: distinct requests may run at
 * once from several threads (nothing here has global state; MPFR keeps its state per
 * thread). */
#ifndef NUMORACLE_BIND_H
#define NUMORACLE_BIND_H

#include <stddef.h>
#include <stdint.h>

#include "numoracle/fmt.h"

/* Exported from the shared library even when it is built with -fvisibility=hidden. */
#ifndef NMO_API
#define NMO_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define NMO_API_VERSION 1

/* A tensor handed in (or out, nmo_bind_tensor_at). Data are packed row-major in host byte
 * order (little-endian on every supported machine), numel * bytes-per-element bytes. */
typedef struct {
    const char *name;      /* the operator's tensor name (`numoracle ops`); NULL or "": the
                              k-th of the request's list is the operator's k-th tensor */
    const char *dtype;     /* a format name (nmo_fmt_from_name: fp64 fp32 bf16 fp16 fp8_e4m3
                              ...), or "int32" / "int64" for class labels */
    int ndims;
    const int64_t *dims;
    const void *data;
} nmo_bind_tensor;

/* nmo_bind_req.flags */
#define NMO_BIND_VERDICTS 1u /* keep per-element verdicts (NMO_BIND_A_VERDICTS) */
#define NMO_BIND_BOUNDS 2u   /* keep R and its flags (NMO_BIND_A_RLO ... NMO_BIND_A_HI_BITS) */

typedef struct {
    int api_version;       /* NMO_API_VERSION the caller was written for */
    const char *op;        /* operator name */
    const char *dtype;     /* storage dtype selecting the default plan (`numoracle ops`);
                              NULL: the dtype of the first output given, else of the
                              first data input, else of the first input but labels */
    const char *plan;      /* plan text over the dtype's default ('fn=ulp:2 round=rz',
                              'preset=NAME ...'); NULL: the default */
    int nshape;            /* the problem shape as the CLI's --shape (rms_norm MxN, matmul */
    const int64_t *shape;  /* MxNxK); nshape 0: inferred from the tensors' dims */
    int n_param;           /* operator parameters by name (`numoracle ops`); the others keep */
    const char *const *param_names; /* their defaults */
    const double *param_values;
    int n_in;              /* inputs. Check: every input the reference reads must be given; */
    const nmo_bind_tensor *in; /* optional ones (saved statistics) not given are recomputed */
    int n_out;             /* candidate outputs, every output of the operator; 0: bounds only */
    const nmo_bind_tensor *out;
    long max_ulps;         /* > 0: reachable sets informative up to this (CLI --max-ulps) */
    const char *engine;    /* NULL or "auto" (fast + escalation), "certified" */
    unsigned flags;        /* NMO_BIND_* */
    const char *family;    /* nmo_bind_gen: input family (NULL: gaussian) */
    uint64_t seed;         /* nmo_bind_gen: seed */
    const char *name;      /* the candidate's name in the report (NULL: "given") */
} nmo_bind_req;

typedef struct nmo_bind_result nmo_bind_result;

/* The library's NMO_API_VERSION. */
NMO_API int nmo_bind_api_version(void);

/* Judge req->out against the reachable sets of the plan (req->n_out == 0: compute the
 * reachable sets only, as `numoracle bounds`; NMO_BIND_BOUNDS is implied). Validates as the
 * CLI does, with its messages: unknown op, dtype, parameter or tensor name; a tensor given
 * twice; a missing input or output; dims that do not match the problem shape (each named);
 * a dtype other than the one the plan stores (labels: fp32 values, or int32/int64 that
 * convert exactly). Returns NULL only when out of memory; otherwise read the status. */
NMO_API nmo_bind_result *nmo_bind_check(const nmo_bind_req *req);

/* The inputs `numoracle gen` writes for (op, dtype, plan, shape, params, family, seed):
 * generated exactly as check and bounds generate them. req->shape is required. Read them
 * with nmo_bind_count / nmo_bind_tensor_at. */
NMO_API nmo_bind_result *nmo_bind_gen(const nmo_bind_req *req);

/* Registry listings as JSON (nmo_bind_json): what = "ops" (every operator: tensors with
 * roles, parameters with defaults, dtypes with their default plans, shape and rounding
 * docs, the generic tests' small shapes), "candidates" (op's CPU candidates), "plans" (the presets; with op: the plan each
 * preset gives op at dtype, NULL dtype: bf16). */
NMO_API nmo_bind_result *nmo_bind_list(const char *what, const char *op, const char *dtype);

/* NMO_OK, or the nmo_status of the failure; message: one line naming the field, tensor
 * or value at fault ("" on success). */
NMO_API int nmo_bind_status(const nmo_bind_result *r);
NMO_API const char *nmo_bind_message(const nmo_bind_result *r);
/* Check: the JSON report of `numoracle check --json` (plus "plan_text", "dtype",
 * "api_version" and the worst element's "coords"); bounds: the same less verdict, counts
 * and worst; list: the listing. NULL on failure. Owned by r. */
NMO_API const char *nmo_bind_json(const nmo_bind_result *r);
/* NMO_PASS / NMO_FAIL / NMO_INCONCLUSIVE (check.h); -1 without a verdict. */
NMO_API int nmo_bind_verdict(const nmo_bind_result *r);

/* The tensors of a result: check and bounds, the outputs (data NULL); gen, the inputs
 * written (data: their values). Returns 0, or -1 when k is out of range. The strings and
 * arrays stay valid until nmo_bind_free. */
NMO_API int nmo_bind_count(const nmo_bind_result *r);
NMO_API int nmo_bind_tensor_at(const nmo_bind_result *r, int k, nmo_bind_tensor *t);

/* Per-element arrays of output k, in logical row-major order (*n elements):
 *   NMO_BIND_A_VERDICTS  uint8 nmo_verdict values (NMO_BIND_VERDICTS)
 *   NMO_BIND_A_RLO, _RHI double: the ends of R, values of plan.out; NaN when every
 *                        implementation gives NaN; +-inf when unbounded (NMO_BIND_BOUNDS)
 *   NMO_BIND_A_FLAGS     uint8 NMO_BF_* flags (check.h) (NMO_BIND_BOUNDS)
 *   NMO_BIND_A_LO_BITS, _HI_BITS: the ends of R encoded in plan.out, as `numoracle bounds`
 *                        writes them (an unbounded end saturates to +-max in formats
 *                        without inf) (NMO_BIND_BOUNDS)
 * NULL when the array was not kept. */
#define NMO_BIND_A_VERDICTS 0
#define NMO_BIND_A_RLO 1
#define NMO_BIND_A_RHI 2
#define NMO_BIND_A_FLAGS 3
#define NMO_BIND_A_LO_BITS 4
#define NMO_BIND_A_HI_BITS 5
NMO_API const void *nmo_bind_array(const nmo_bind_result *r, int kind, int k, int64_t *n);

NMO_API void nmo_bind_free(nmo_bind_result *r);

/* The bit pattern of R's end v in format f, as reachable-set files store it: finite ends
 * are values of f; an unbounded end is +-inf, saturated to +-max in formats without inf;
 * NaN (every implementation gives NaN) is the canonical NaN. */
NMO_API uint64_t nmo_bind_bound_bits(nmo_fmt f, double v);

#ifdef __cplusplus
}
#endif
#endif
