/* numoracle: invariance judgments — is each batch row's output bitwise the same whatever
 * the batch around it (its size, the row's position, chunking, padding rows, strides)?
 *
 * Separate from accuracy: an output may lie in its reachable set and still change with
 * the batch composition (a reduction whose blocking depends on the number of rows), and
 * an invariant kernel may be inaccurate. The harness runs one candidate on the same rows
 * in several compositions and compares raw output bits with the reference composition
 * (the whole batch, packed, in order).
 *
 *   nmo_inv_config cfg[2];  nmo_inv_config_parse(&cfg[0], "chunks:3", &err); ...
 *   nmo_inv_report r;  nmo_inv_judge(&r, &c, cfg, 2, NULL, 0, nmo_inv_run_cand, cand, &err);
 *   r.invariant, r.res[i].identical, r.res[i].row / .elem (first difference)
 *
 * Batch rows are slices along the leading dimension of the shape (shape[0]: M rows of a
 * norm, M of a matrix product, N images of a convolution, B of attention). Each tensor's
 * role is found by building the case at two batch sizes: an input whose leading dim
 * follows shape[0] is per-row, one that does not change is shared (weights); an output
 * that follows shape[0] is per-row, one that does not change is batch-summed (dw, a mean
 * loss). Batch-summed outputs are judged only across configurations that keep the rows
 * and their order (repeat, stride): any other composition changes what is summed. */
#ifndef NUMORACLE_INVARIANCE_H
#define NUMORACLE_INVARIANCE_H

#include <stddef.h>
#include <stdint.h>

#include "numoracle/cand.h"
#include "numoracle/op.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Batch compositions (the text form is what contracts and the CLI name). */
typedef enum {
    NMO_INV_SIZES = 0, /* "sizes": batches of 1, 2, ..., B rows (prefixes of the batch) */
    NMO_INV_CHUNKS,    /* "chunks:K": the batch split into calls of K rows (K=1: each alone) */
    NMO_INV_REVERSE,   /* "reverse": the rows in reverse order */
    NMO_INV_ROTATE,    /* "rotate:K": row i at position (i - K) mod B */
    NMO_INV_PAD,       /* "pad:P": P other rows before and P after the batch */
    NMO_INV_STRIDE,    /* "stride:S": per-row tensors with S unused elements after each row */
    NMO_INV_REPEAT,    /* "repeat": the reference composition run again (run-to-run) */
    NMO_INV_KIND_COUNT
} nmo_inv_kind;

typedef struct {
    nmo_inv_kind kind;
    int arg; /* K, P or S (>= 1); 0 for sizes, reverse, repeat */
} nmo_inv_config;

/* Parse "sizes", "chunks:K", "reverse", "rotate:K", "pad:P", "stride:S", "repeat" (K, P,
 * S integers in [1, 4096]). NMO_ERR_PARSE naming the text and the known forms. */
nmo_status nmo_inv_config_parse(nmo_inv_config *cfg, const char *text, nmo_err *err);
/* The text form (at least 24 bytes). */
char *nmo_inv_config_name(const nmo_inv_config *cfg, char *buf, size_t n);
/* 1 when the configuration keeps the batch's rows and their order (repeat, stride): the
 * only ones a batch-summed output is judged across. */
int nmo_inv_config_keeps_order(const nmo_inv_config *cfg);

/* Run a candidate on case c: fill out[0..c->n_out-1], which the harness allocated with
 * c->out[k]'s dims, dtype and strides (poisoned with 0xFF bytes). */
typedef nmo_status (*nmo_inv_run_fn)(void *ctx, const nmo_case *c, nmo_tensor *out, nmo_err *err);
/* nmo_inv_run_fn for a CPU candidate (ctx: const nmo_cand *). */
nmo_status nmo_inv_run_cand(void *ctx, const nmo_case *c, nmo_tensor *out, nmo_err *err);

/* Roles found for a case's tensors. */
#define NMO_INV_SHARED 0 /* input: the same for every row (weights, cos/sin tables) */
#define NMO_INV_ROW 1    /* leading dim is the batch: one slice per row */
#define NMO_INV_SUMMED 2 /* output: does not follow the batch (a sum or mean over rows) */

typedef struct {
    int in_role[NMO_MAX_TENSORS], out_role[NMO_MAX_TENSORS];
    int n_row_out, n_sum_out;
} nmo_inv_layout;

/* Classify c's tensors (c->shape[0] is the batch). NMO_ERR_UNSUPPORTED when a tensor
 * neither follows the batch along its leading dim nor stays the same. */
nmo_status nmo_inv_layout_find(nmo_inv_layout *lay, const nmo_case *c, nmo_err *err);

/* One configuration's outcome. */
typedef struct {
    nmo_inv_config cfg;
    int summed;      /* 1: judged on the batch-summed outputs, 0: on the per-row ones */
    int identical;   /* every compared element bitwise equal to the reference */
    int skipped;     /* the candidate declined a call (NMO_ERR_UNSUPPORTED): why says so */
    char why[256];
    int64_t calls;   /* candidate launches of this configuration */
    int64_t compared; /* elements compared */
    /* first difference (identical == 0): output k, batch row (-1 for a summed output),
     * element index within the row's slice (or the output), values and raw bits */
    int k;
    int64_t row, elem;
    double ref, got;
    uint64_t ref_bits, got_bits;
} nmo_inv_result;

#define NMO_INV_MAX_CONFIGS 32

typedef struct {
    int invariant;   /* no configuration differs (see n_skipped: not judged) */
    int n_skipped;   /* configurations the candidate declined */
    int64_t batch;   /* rows of the reference composition */
    nmo_inv_layout layout;
    int n;
    nmo_inv_result res[NMO_INV_MAX_CONFIGS];
} nmo_inv_report;

/* Judge candidate `run` on case c (inputs filled; c->shape[0] the batch, >= 1). row_cfg:
 * configurations for the per-row outputs; sum_cfg: for the batch-summed outputs, each of
 * which must keep the order (nmo_inv_config_keeps_order). n_sum = 0 leaves summed outputs
 * unjudged (the caller says why). NMO_ERR_USAGE for a sum configuration that does not
 * keep the order, for row configurations of an op without per-row outputs, and for sum
 * configurations of one without batch-summed outputs. Padding rows (pad:P) come from
 * family/pad_seed. A call the candidate declines (run returns NMO_ERR_UNSUPPORTED) marks
 * the configuration skipped; other candidate errors are returned as they are. */
nmo_status nmo_inv_judge(nmo_inv_report *rep, const nmo_case *c, const nmo_inv_config *row_cfg,
                         int n_row, const nmo_inv_config *sum_cfg, int n_sum, nmo_inv_run_fn run,
                         void *ctx, int family, uint64_t pad_seed, nmo_err *err);

/* One line for a result: "chunks:3: identical (4 calls, 512 elements)" or
 * "chunks:3: differs at y row 2 element 17: 0x3f80 (1) vs reference 0x3f81 (1.0078125)". */
void nmo_inv_result_text(char *buf, size_t n, const nmo_inv_result *r, const nmo_op *op);

#ifdef __cplusplus
}
#endif
#endif
