/* numoracle: the four-judgment contract — which judgments an operator must pass, per
 * operator class x dtype x backend profile, and how: forward and gradient accuracy (the
 * certified oracle under a named plan), forward and gradient invariance (bitwise, across
 * named batch compositions: numoracle/invariance.h). Cells may be N/A with a reason.
 *
 *   nmo_contract *ct;  nmo_contract_load(&ct, "contracts/default.json", &err);
 *   nmo_jspec js;      nmo_contract_resolve(&js, ct, op_index, NMO_BF16, profile, NMO_J_FWD_INV, &err);
 *   nmo_cell cell;     nmo_judge_cell(&cell, ct, op_index, NMO_BF16, profile, NMO_J_FWD_INV, &cand, &err);
 *
 * The file format (version 1) is documented in contracts/README.md; the loader is strict:
 * an unknown key, operator, class, profile, dtype, judgment, configuration or plan is
 * NMO_ERR_PARSE naming the file and the field ("contracts/x.json: rules[2].dtypes[0]:
 * unknown dtype 'bf32'"), as is a cell that no rule states. */
#ifndef NUMORACLE_CONTRACT_H
#define NUMORACLE_CONTRACT_H

#include <stdint.h>

#include "numoracle/check.h"
#include "numoracle/invariance.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NMO_CONTRACT_VERSION 1

typedef enum {
    NMO_J_FWD_ACC = 0, /* forward_accuracy: the forward operator's outputs, nmo_check */
    NMO_J_GRAD_ACC,    /* gradient_accuracy: the gradient operator's, decided on its own */
    NMO_J_FWD_INV,     /* forward_invariance: bitwise across batch compositions */
    NMO_J_GRAD_INV,    /* gradient_invariance: the same for the gradient operator */
    NMO_J_COUNT
} nmo_judgment;

/* "forward_accuracy", ...; NULL out of range. */
const char *nmo_judgment_name(nmo_judgment j);

typedef struct nmo_contract nmo_contract;

/* Read and validate a contract file (strict; errors name the file and the field). */
nmo_status nmo_contract_load(nmo_contract **ct, const char *path, nmo_err *err);
/* The same from text; `what` names it in messages (a path). */
nmo_status nmo_contract_parse(nmo_contract **ct, const char *text, const char *what, nmo_err *err);
void nmo_contract_free(nmo_contract *ct);

const char *nmo_contract_name(const nmo_contract *ct);
/* The path (or name) it was read from, as errors name it. */
const char *nmo_contract_what(const nmo_contract *ct);
int nmo_contract_version(const nmo_contract *ct);

/* Profiles: a backend ("cpu", "hip", "plugin", "python"), optionally the device kind the
 * run must record ("cpu", "cuda": a fallback to another device is a provenance mismatch),
 * and the settings a candidate run must record before any PASS (-1: not stated). */
typedef struct {
    char name[64];
    char backend[16];
    char doc[256];
    int tf32;          /* TF32 matrix products allowed */
    int rpr;           /* reduced-precision reductions (split-K partials in 16 bits) */
    int deterministic; /* deterministic algorithms */
    char device[32];   /* "" = not stated */
    char device_name[64]; /* "" = not stated; else the run's device name must begin with it
                             ("NVIDIA H200"): another GPU model is another rounding machine */
    char cublas_ws[64];   /* "" = not stated; else the CUBLAS_WORKSPACE_CONFIG values allowed,
                             ';'-separated (":4096:8;:16:8", "unset" for no variable): cuBLAS
                             is deterministic only with a fixed workspace (CUDA docs, cuBLAS
                             "Results reproducibility") */
} nmo_contract_profile;

int nmo_contract_profile_count(const nmo_contract *ct);
const nmo_contract_profile *nmo_contract_profile_at(const nmo_contract *ct, int i);
int nmo_contract_profile_find(const nmo_contract *ct, const char *name); /* -1: none */

/* Operators (forward operators of the catalog; the gradient is another operator). */
typedef struct {
    const nmo_op *op;
    char cls[64];
    unsigned dtypes;           /* bit (1u << nmo_fmt) per dtype the contract covers */
    int nshape;
    int64_t shape[NMO_MAX_DIMS];
    double param[NMO_MAX_PARAMS];
    int pset[NMO_MAX_PARAMS];
    const nmo_op *grad;        /* NULL: no gradient operator (grad_na says why) */
    char grad_na[256];
    int gnshape;
    int64_t gshape[NMO_MAX_DIMS];
    double gparam[NMO_MAX_PARAMS];
    int gpset[NMO_MAX_PARAMS];
    uint32_t gabsent;          /* gradient inputs the callables recompute themselves
                                  ("recomputed": autograd keeps its own rstd): nmo_case.absent
                                  of every gradient cell, so the reference encloses every
                                  recomputation instead of trusting a derived value the kernel
                                  never saw */
} nmo_contract_op;

int nmo_contract_op_count(const nmo_contract *ct);
const nmo_contract_op *nmo_contract_op_at(const nmo_contract *ct, int i);
int nmo_contract_op_find(const nmo_contract *ct, const char *name); /* -1: none */

#define NMO_JSPEC_MAX_SEEDS 16
#define NMO_JSPEC_MAX_SUM 8

/* One cell's specification as the rules resolve it. */
typedef struct {
    int na;                 /* N/A: reason says why */
    char reason[256];
    int required;           /* a failing required cell fails the matrix */
    char where[96];         /* the field that stated it: "rules[3].forward_invariance" */
    char plan[256];         /* plan text over the dtype's default ("" = the default) */
    /* accuracy */
    int family;
    int nseeds;
    uint64_t seeds[NMO_JSPEC_MAX_SEEDS];
    /* invariance */
    int ncfg;
    nmo_inv_config cfg[NMO_INV_MAX_CONFIGS - NMO_JSPEC_MAX_SUM];
    int nsum;               /* orderings named for batch-summed outputs */
    nmo_inv_config sum_cfg[NMO_JSPEC_MAX_SUM];
    char sum_na[256];       /* or why batch-summed outputs are not judged ("" = not said) */
    int nshape;             /* invariance: the problem shape of this cell (0: the operator's) */
    int64_t shape[NMO_MAX_DIMS];
} nmo_jspec;

/* The specification of (operator, dtype, profile, judgment): the last rule that matches
 * and states the judgment, or N/A from the operator (no gradient operator). NMO_ERR_USAGE
 * when the dtype is not covered for that operator. */
nmo_status nmo_contract_resolve(nmo_jspec *js, const nmo_contract *ct, int op, nmo_fmt dt, int profile,
                                nmo_judgment j, nmo_err *err);

/* ---- judging ----------------------------------------------------------------------------- */

typedef enum {
    NMO_CELL_PASS = 0,
    NMO_CELL_FAIL,
    NMO_CELL_INCONCLUSIVE, /* accuracy INCONCLUSIVE, or invariance configurations skipped */
    NMO_CELL_NA,
    NMO_CELL_SKIPPED,      /* the candidate does not run this case */
    NMO_CELL_REJECTED      /* the run's provenance disagrees with the profile */
} nmo_cell_verdict;

const char *nmo_cell_verdict_name(nmo_cell_verdict v); /* "PASS", "N/A", ... */

/* A candidate for one operator: how to run it and what the run records. */
typedef struct {
    const char *label;      /* "cpu:block256" */
    const char *backend;    /* "cpu", "hip", "plugin", "python" */
    nmo_inv_run_fn run;     /* NULL: no candidate for this operator (cell SKIPPED) */
    void *ctx;
    int tf32, rpr, deterministic; /* settings of the run (-1: not recorded) */
    const char *device;     /* device kind the run used ("cpu", "cuda"; NULL: not recorded) */
    const char *device_name; /* "NVIDIA H200" (NULL: not recorded) */
    const char *cublas_ws;  /* CUBLAS_WORKSPACE_CONFIG ("unset"; NULL: not recorded) */
} nmo_judge_cand;

/* What one run recorded (a candidate's declaration, or a binding's record of one call). */
typedef struct {
    const char *backend;    /* NULL: not recorded */
    const char *device;     /* NULL: not recorded */
    int tf32, rpr, deterministic; /* -1: not recorded */
    const char *device_name; /* NULL: not recorded */
    const char *cublas_ws;   /* NULL: not recorded; "unset" */
} nmo_judge_prov;

/* The provenance rule, one copy for every caller: 1 when p agrees with profile pr (its
 * backend; its device and each setting the profile states), else 0 with why set to one
 * line naming the first disagreement ("the run has tf32=on; the profile requires
 * tf32=off"). A setting or device the profile states and the run does not record
 * disagrees. */
int nmo_judge_prov_ok(const nmo_contract_profile *pr, const nmo_judge_prov *p, char *why, size_t n);

typedef struct {
    nmo_cell_verdict verdict;
    int required;
    nmo_jspec spec;
    char detail[1024];      /* one line: why (first failing seed, first difference, reason) */
    /* accuracy: per seed */
    int nseeds;
    nmo_verdict seed_verdict[NMO_JSPEC_MAX_SEEDS];
    int64_t n_elems, n_fail, n_inconc;
    /* invariance */
    int have_inv;
    nmo_inv_report inv;
} nmo_cell;

/* Judge one cell with candidate cand (for the forward operator in the forward cells, the
 * gradient operator in the gradient cells). Provenance first: a run whose backend or
 * recorded settings disagree with the profile is REJECTED before anything is judged.
 * Errors (a contract that cannot apply to the operator, a candidate error) are returned
 * with err naming the contract field; verdicts are in cell. */
nmo_status nmo_judge_cell(nmo_cell *cell, const nmo_contract *ct, int op, nmo_fmt dt, int profile,
                          nmo_judgment j, const nmo_judge_cand *cand, nmo_err *err);

#ifdef __cplusplus
}
#endif
#endif
