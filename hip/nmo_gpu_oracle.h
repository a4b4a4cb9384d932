/* numoracle GPU tier (issue 22): the device kernels of the fast engine's hot paths and
 * the checker that puts them behind the check API (no GPU header here).
 *
 * nmo_gpu_check is nmo_check (oracle/check.c) with the O(elements) work on the device:
 * for the cases nmo_gpu_check_supported accepts, a device kernel reduces each row, the
 * host finishes each row's statistic with the fast engine's own code (one copy of the
 * rule: refs/rms_norm.c nmo_ref_rms_norm_rstd_fast), and a second kernel evaluates each
 * element's enclosure exactly as the fast engine's row kernel does (the same binary64
 * operations, bit for bit), snaps it to the compute lattice, rounds it into R and judges
 * the candidate, which stays in device memory. Every row holding an element the device
 * cannot decide (an uncertain snap, a non-finite value, R wider than max_ulps, a store
 * that overflows, an unflagged statistic) goes back to the CPU checker (fast engine and
 * escalation, as today: nmo__check_units), so the verdicts are the certified engine's,
 * element for element (hip/gpu_oracle_test.c checks it). Implemented by hip/gpu_oracle.c
 * over hip/gpu_oracle.hip; with -Dgpu=none every call fails with NMO_ERR_UNSUPPORTED. */
#ifndef NMO_GPU_ORACLE_H
#define NMO_GPU_ORACLE_H

#include <stdint.h>

#include "numoracle/check.h"
#include "numoracle/op.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the C face of the device kernels (device pointers; hip/gpu_oracle.hip) ---------- */

#define NMO_GO_HIST NMO_WIDTH_HIST /* the report's width histogram (check.h), last bin: beyond */

typedef struct {
    unsigned long long n_pass, n_fail;
    unsigned long long hist[NMO_GO_HIST + 1];
    unsigned long long wmax;
    /* worst element over the rows decided on the device: rank (2 FAIL, 0 PASS) << 62 |
     * metric (FAIL: distance, PASS: width; 32 bits, saturated) << 30 | (2^30 - 1 - row) */
    unsigned long long worst;
} nmo_go_acc;

typedef struct {
    const void *x, *w, *cand; /* x [rows, n], w [n] (in format), cand [rows, n] (out) */
    int in_bf16, out_bf16;    /* else fp32 */
    int64_t rows, n;
    const double *rrow;       /* per row: r_lo, r_hi, max |r| (fp32 values) */
    const uint8_t *skip;      /* per row: 1 = the host checks it (no device work) */
    int64_t max_ulps;
    double uc, etac;          /* unit roundoff and underflow term of compute */
    uint8_t *verd;            /* per element NMO_PASS / NMO_FAIL (rows decided here) */
    double *rlo, *rhi;        /* NULL, or per element R (the report's keep_bounds) */
    uint8_t *redo;            /* per row: 1 = an element the device cannot decide */
    nmo_go_acc *acc;          /* counts of the rows decided here */
} nmo_go_rms_args;

/* s[row] = sum x^2 (binary64, any order: a tree), m[row] = nonzero terms, bad[row] = 1
 * when the row holds a non-finite value. Synchronous; errors name the launch. */
nmo_status nmo_go_rowsumsq(const void *x, int in_bf16, int64_t rows, int64_t n, double *s,
                           int64_t *m, uint8_t *bad, nmo_err *err);
/* rms_norm's y = x r w row kernel and the judge (see nmo_go_rms_args). Synchronous. */
nmo_status nmo_go_rms_judge(const nmo_go_rms_args *a, nmo_err *err);

/* ---- the checker -------------------------------------------------------------------- */

typedef struct {
    int64_t rows_device;   /* units decided on the device */
    int64_t rows_host;     /* units the CPU checker redid (fast engine + escalation) */
    double ms_device;      /* wall time of the device kernels and their transfers */
    double ms_host_stats;  /* the host's row statistics */
    double ms_host_redo;   /* the CPU checker on the rows sent back */
} nmo_gpu_check_info;

/* Testing (hip/gpu_oracle_test.c): when k > 0, every k-th row also goes to the CPU
 * checker, so that the merge of device and host rows is exercised on every case. */
extern int nmo_gpu_check_host_every;

/* 1 when the GPU tier checks this case (else 0, and *why says what it lacks). */
int nmo_gpu_check_supported(const nmo_case *c, const char **why);

/* nmo_check of the candidate cand_dev (device memory, packed, the plan's out format) for
 * case c. in_dev: the inputs in device memory (packed, as c->in), or NULL to upload
 * c->in; c->in is read on the host in either case (for the rows sent back to the CPU
 * checker and the worst row). The report is nmo_check's (verdicts, bounds and bflags when opts ask for them;
 * keep_enc is refused). info may be NULL. */
nmo_status nmo_gpu_check(nmo_report *rep, const nmo_case *c, const void *cand_dev,
                         const void *const *in_dev, const nmo_check_opts *opts,
                         nmo_gpu_check_info *info, nmo_err *err);

#ifdef __cplusplus
}
#endif
#endif
