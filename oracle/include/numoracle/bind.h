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

/* 2: nmo_bind_prov records the device name and CUBLAS_WORKSPACE_CONFIG; the run callback
 * names the dtype of every input its kernel consumed (nmo_bind_view.got_dtype) */
#define NMO_API_VERSION 2

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
#define NMO_BIND_DEVICE_OUT 4u /* out[].data are device pointers (CUDA/HIP memory of the GPU
                                  tier's device): judged by the device checker that
                                  nmo_bind_set_device_checker installed, never read here */

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

/* The device checker of NMO_BIND_DEVICE_OUT requests (issue 22): the GPU tier lives in
 * hip/, above this library, so a build with -Dgpu=cuda|hip|sim ships it as
 * libnumoracle_gpu.so, whose nmo_gpu_bind_checker() returns this function; a binding
 * installs it here (the Python package does when an output is a CUDA tensor). Its
 * arguments are (nmo_report *rep, const nmo_case *c, const void *cand_dev,
 * const nmo_check_opts *opts, nmo_err *err) of numoracle/check.h and op.h (void here so
 * that this header stays free of them); it returns an nmo_status and fills rep as
 * nmo_check does. NULL uninstalls. Without one, a NMO_BIND_DEVICE_OUT request fails with
 * NMO_ERR_UNSUPPORTED naming what to load. Install it before the checks that use it. */
typedef int (*nmo_bind_device_checker)(void *rep, const void *c, const void *cand_dev, const void *opts,
                                       void *err);
NMO_API void nmo_bind_set_device_checker(nmo_bind_device_checker fn);
/* 1 when a device checker is installed */
NMO_API int nmo_bind_has_device_checker(void);

/* ---- the four-judgment matrix for a binding's callable (numoracle/contract.h) ----------- */

/* A tensor handed to a binding's run callback: strided (element strides, as the harness
 * lays it out: the invariance composition stride:S gives rows S elements apart), `span`
 * elements of storage from data (host memory, little-endian). Inputs are read-only;
 * outputs are poisoned (0xFF bytes) and the callback writes every element, then names the
 * dtype its kernel produced in got_dtype (a dtype other than `dtype` is dtype drift: the
 * run is rejected). data is NULL for an input the reference never reads, or one the
 * contract says the kernel recomputes. For inputs the callback names in got_dtype the dtype
 * its kernel consumed (after any transfer to its device): another dtype, or none recorded,
 * rejects the run as well. */
typedef struct {
    const char *name;
    const char *dtype;
    int ndims;
    const int64_t *dims;
    const int64_t *strides;
    int64_t span;
    void *data;
    char got_dtype[16];
} nmo_bind_view;

/* What one run recorded, filled by the callback at every call (nmo_bind_judge_req.prov is
 * the record taken before the first call). backend "python"; device as the run used it
 * ("cpu", "cuda:0"; "" not recorded); settings 0/1, -1 not recorded; device_name the
 * device's model ("NVIDIA H200", "" not recorded); cublas_ws the value of
 * CUBLAS_WORKSPACE_CONFIG during the run ("unset" without one, "" not recorded). */
typedef struct {
    char backend[16];
    char device[32];
    int tf32, rpr, deterministic;
    char device_name[64];
    char cublas_ws[32];
} nmo_bind_prov;

/* Run the candidate on one composition: fill out[0..n_out-1] and *prov. op: the operator
 * the cell runs (the forward operator, or its gradient operator); params: all of op's, by
 * name. Returns 0, NMO_ERR_UNSUPPORTED (11) to decline the call (the composition is then
 * skipped: INCONCLUSIVE, never PASS), any other value to abort with msg. */
typedef int (*nmo_bind_run_fn)(void *ctx, const char *op, int n_param, const char *const *param_names,
                               const double *param_values, int n_in, nmo_bind_view *in, int n_out,
                               nmo_bind_view *out, nmo_bind_prov *prov, char *msg, int msg_size);

typedef struct {
    int api_version;           /* NMO_API_VERSION */
    const char *contract;      /* contract file (contracts/default.json) */
    const char *op;            /* a forward operator of the contract */
    const char *dtype;         /* a dtype the contract covers for op */
    const char *profile;       /* NULL: the contract's first profile of backend "python" */
    unsigned judgments;        /* bit (1u << nmo_judgment) per cell to judge; 0: all four */
    nmo_bind_run_fn run_fwd;   /* the forward operator's callable (NULL: those cells SKIPPED) */
    nmo_bind_run_fn run_grad;  /* the gradient operator's (NULL: SKIPPED) */
    void *ctx;
    const char *label;         /* the candidate's name in the report */
    nmo_bind_prov prov;        /* recorded before the first call: checked before anything runs */
} nmo_bind_judge_req;

/* Judge the cells of (op, dtype, profile) of a contract for a binding's callables, as
 * `numoracle judge` does for its candidates: provenance first (req->prov, then the record of
 * every call: backend, device, settings, the dtype of every output; the first disagreement
 * with the profile stops the cell, REJECTED), then accuracy (nmo_check on each seed under
 * the contract's plan) or invariance (nmo_inv_judge across the contract's compositions).
 * nmo_bind_json: {"contract", "profile", "op", "dtype", "candidate", "cells": [{"judgment",
 * "operator", "verdict", "required", "detail", "where", "plan", "provenance", "seeds",
 * "configurations": [{"name", "outputs", "identical", "skipped", "calls", "compared",
 * "first_difference": {"output", "row", "element", "reference", "candidate",
 * "reference_bits", "candidate_bits"}}]}], "summary": {"verdict", "required_failing",
 * "exit"}}; exit as the CLI's: 0 every required cell PASS, 1 one FAIL or REJECTED, 3 one
 * INCONCLUSIVE or SKIPPED. A contract error, an unknown op/dtype/profile, or a callback that
 * aborts: the status, with the message naming the file, field or call. */
NMO_API nmo_bind_result *nmo_bind_judge(const nmo_bind_judge_req *req);

/* The bit pattern of R's end v in format f, as reachable-set files store it: finite ends
 * are values of f; an unbounded end is +-inf, saturated to +-max in formats without inf;
 * NaN (every implementation gives NaN) is the canonical NaN. */
NMO_API uint64_t nmo_bind_bound_bits(nmo_fmt f, double v);

#ifdef __cplusplus
}
#endif
#endif
