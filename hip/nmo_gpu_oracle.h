/* numoracle GPU tier (issue 22): the device kernels of the fast engine's hot paths and
 * the checker that puts them behind the check API (no GPU header here).
 *
 * nmo_gpu_check is nmo_check (oracle/check.c) with the O(elements) work on the device,
 * for the cases nmo_gpu_check_supported accepts (rms_norm and swiglu, fused plans, fp32
 * compute): the device evaluates each element's enclosure as the fast engine does (the
 * same binary64 operations; rms_norm's row statistic r on the device for fp32 acc with
 * correctly rounded sqrt and division, else the host's fast engine:
 * refs/rms_norm.c nmo_ref_rms_norm_rstd_fast), snaps it to the compute lattice, rounds
 * it into R and judges the candidate, which stays in device memory. A unit (an rms_norm
 * row, a swiglu element) the device cannot decide (a non-finite value, R wider than
 * max_ulps, a flagged statistic) goes to the CPU checker (fast engine and escalation:
 * nmo__check_units); an rms_norm element whose snap alone is undecided goes to the
 * certified engine alone, from the row's r (the device's, which is the certified one:
 * refs/rms_norm.c nmo_ref_rms_norm_elems_cert), judged by the checker's rules
 * (nmo__judge_elems). So the verdicts are the certified engine's, element for element
 * (hip/gpu_oracle_test.c checks it). Implemented by hip/gpu_oracle.c over
 * hip/gpu_oracle.hip; with -Dgpu=none every call fails with NMO_ERR_UNSUPPORTED. */
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
     * metric (FAIL: distance, PASS: width; 32 bits, saturated) << 30 | (2^30 - 1 - element) */
    unsigned long long worst;
    unsigned long long n_redo;      /* rows the device left to the host (listed in redo) */
    /* filled by the gather kernel after the judge: the worst element's row statistics
     * (s, m, r_lo, r_hi as rstat) and its candidate's bits */
    double w_stat[4];
    unsigned long long w_cand;
    unsigned long long n_eredo;     /* rms_norm, layer_norm: single elements left to the host (eredo) */
    unsigned long long n_scaled;    /* PASS/FAIL decided by the scale rule (matmul, layer_norm) */
    unsigned long long n_comp;      /* softmax, rms_norm: rows whose sum was redone compensated (k_smx, k_rms_rows) */
} nmo_go_acc;

/* The per-case constants of rms_norm's r on the device (nmo_gpu_oracle.c rstd_consts
 * computes them with the fast engine's own code: one copy of the k rule and roundings). */
typedef struct {
    const double *ktab;  /* k of nmo_fe_dot_k for m = 0..n nonzero terms (device) */
    double ua, keta;     /* unit roundoff of acc; n eta_acc */
    double en, rel;      /* n 2^-53 (the binary64 sum's error factor); en * 1.01 */
    double maxfin_a;     /* largest finite acc value */
    double dn, rcpn;     /* RN(N), RN(1/RN(N)) in compute */
    double epsc;         /* RN(eps) in compute */
    int nrsqrt;          /* fn_ulps[RSQRT] */
} nmo_go_rstd_consts;

typedef struct {
    const void *x, *w, *cand; /* x [rows, n], w [n] (in format), cand [rows, n] (out) */
    int in_bf16, out_bf16;    /* else fp32 */
    int64_t rows, n;
    const double *rrow;       /* NULL: r on the device (rc); else per row r_lo, r_hi, max |r| */
    nmo_go_rstd_consts rc;
    const uint8_t *skip;      /* NULL, or per row: 1 = the host checks it (no device work) */
    int64_t max_ulps;
    double uc, etac;          /* unit roundoff and underflow term of compute */
    uint8_t *verd;            /* per element NMO_PASS / NMO_FAIL (rows decided here) */
    double *rlo, *rhi;        /* NULL, or per element R (the report's keep_bounds) */
    double *rstat;            /* per row: s, m, r_lo, r_hi (r: 0 when the host computes it;
                               * m < 0: -(m + 1) nonzero terms and s a compensated sum) */
    int64_t *redo;            /* rows the device cannot decide (acc->n_redo of them) */
    nmo_go_acc *acc;          /* counts of the rows decided here */
    /* elements of rows decided here whose snap neither the fast path nor the exact ends
     * decide (acc->n_eredo; the first eredo_cap listed): the host escalates them alone */
    int64_t *eredo;
    int64_t eredo_cap;
    int64_t elem_every;       /* testing: > 0 lists every elem_every-th element too */
    int vec4;                 /* 1: n % 4 == 0 and x, w, cand 16-byte aligned (vector loads) */
    int comp_all;             /* testing: every row summed again compensated (nmo_gpu_check_comp_all) */
} nmo_go_rms_args;

/* An elementwise operator (swiglu): y[i] from x0[i], x1[i]. */
typedef struct {
    const void *x0, *x1, *cand;
    int in_bf16, out_bf16;
    int64_t numel;
    int nsig, nexp;           /* fn_ulps[SIGMOID], fn_ulps[EXP] */
    int64_t max_ulps;
    uint8_t *verd;
    double *rlo, *rhi;
    int64_t *redo;            /* elements the device cannot decide (acc->n_redo; the first redo_cap listed) */
    int64_t redo_cap;
    nmo_go_acc *acc;
} nmo_go_ew_args;
nmo_status nmo_go_ew_judge(const nmo_go_ew_args *a, nmo_go_acc *acc_host, nmo_err *err);

/* s[row] = sum x^2 (binary64, any order: a tree), m[row] = nonzero terms, bad[row] = 1
 * when the row holds a non-finite value. Synchronous; errors name the launch. */
nmo_status nmo_go_rowsumsq(const void *x, int in_bf16, int64_t rows, int64_t n, double *s,
                           int64_t *m, uint8_t *bad, nmo_err *err);
/* rms_norm's fused row kernel (sum of squares, r when rrow is NULL, y = x r w, the judge)
 * and the gather of the worst element, then acc copied to *acc_host (synchronous). */
nmo_status nmo_go_rms_judge(const nmo_go_rms_args *a, nmo_go_acc *acc_host, nmo_err *err);
/* Profiling (the bench): when set, nmo_go_rms_judge and nmo_go_ew_judge time their
 * kernels with events (one synchronization each): k1 = k_rms_rows (0 when r is the
 * host's), k2 = k_rms_elems or k_swiglu, in ms. */
extern int nmo_go_time_kernels;
extern double nmo_go_ms_k1, nmo_go_ms_k2;
/* Testing: the device's r (rstd_dev) of count (s, m) pairs: out[4i..] = lo, hi, ok, 0. */
nmo_status nmo_go_rstd_probe(const nmo_go_rstd_consts *rc, int64_t n, const double *s_dev,
                             const double *m_dev, double *out_dev, int64_t count, nmo_err *err);

/* matmul C = A B (hip/gpu_oracle_matmul.inc, host side hip/gpu_oracle_matmul.c): the
 * binary64 GEMM of s, sum|a b| and the nonzero counts with the judging epilogue, the
 * compensated refinement of the undecided elements, the rest listed for the CPU. */
typedef struct {
    unsigned long long n_refine;    /* elements listed for the refinement */
    unsigned long long n_redo_refine; /* of them, left to the CPU checker */
    unsigned long long n_exact;     /* of them, listed for the exact sums (k_mm_exact) */
    unsigned long long n_redo_exact; /* of those, left to the CPU checker */
} nmo_go_mm_ctr;
typedef struct {
    const void *A, *B, *cand;       /* A [M,K], B [K,N] (in format), cand [M,N] (out) */
    void *Bt;                       /* scratch [N,K]: B transposed (k_mm_transpose) */
    int in_bf16, out_bf16;
    int64_t M, N, K;
    const double *ktab;             /* nmo_fe_dot_k(K, m) for m = 0..K (device) */
    double kK;                      /* ktab[K] */
    double ua, keta, maxfin_a;      /* acc's unit roundoff, K eta_acc, acc's largest finite */
    int64_t max_ulps;
    uint8_t *verd;
    double *rlo, *rhi;
    int64_t *refine, refine_cap;    /* ctr->n_refine listed (the first refine_cap) */
    int64_t *exact, exact_cap;      /* ctr->n_exact listed (the first exact_cap) */
    int64_t *redo, redo_cap;        /* acc->n_redo listed for the CPU checker */
    nmo_go_mm_ctr *ctr;
    nmo_go_acc *acc;
    int64_t host_every;             /* testing (nmo_gpu_mm_host_every): every k-th element to the CPU */
} nmo_go_mm_args;
/* zeros of x[0..n) (dev_out: one device counter) */
nmo_status nmo_go_mm_zeros(const void *x, int in_bf16, int64_t n, unsigned long long *dev_out,
                           unsigned long long *host_out, nmo_err *err);
/* Testing and the bench: nmo_go_mm_blas = 0 makes step 1 the k_mm_gemm kernel even in a
 * build with cuBLAS; nmo_go_mm_used_blas tells which one the last check ran. With
 * nmo_go_time_kernels: nmo_go_ms_k1 = step 1 (GEMM and epilogue), k2 = refinement + exact. */
extern int nmo_go_mm_blas, nmo_go_mm_used_blas;
/* the kernels (count: nonzero counts kept; else every count is K), acc and ctr back */
nmo_status nmo_go_mm_judge(const nmo_go_mm_args *a, int count, nmo_go_acc *acc_host,
                           nmo_go_mm_ctr *ctr_host, nmo_err *err);
/* Testing: the soundness probe of step 1 by cuBLAS. A [M,K] and B [K,N] (row-major binary64
 * on the host, every value bf16- or fp32-representable, so every product is exact) through
 * the very cublasDgemm path of step 1 (the same handle, CUBLAS_PEDANTIC_MATH): s = A B and
 * a = |A| |B| into s_host, a_host [M,N] (row-major). The caller checks them against the
 * exact sums and the epilogue's radius rel1 = 2 kd (1 + 2 kd), kd = K 2^-53. Synchronous;
 * not thread-safe (the cuBLAS handle is step 1's: the caller serializes it with
 * nmo_gpu_check). NMO_ERR_UNSUPPORTED in a build without cuBLAS (the simulator, HIP). */
nmo_status nmo_go_mm_blas_probe(const double *A_host, const double *B_host, int64_t M, int64_t N,
                                int64_t K, double *s_host, double *a_host, nmo_err *err);

/* ---- the checker -------------------------------------------------------------------- */

typedef struct {
    int64_t rows_device;   /* units decided on the device */
    int64_t rows_host;     /* units the CPU checker redid (fast engine + escalation) */
    double ms_device;      /* wall time of the device kernels and their transfers */
    double ms_host_stats;  /* the host's row statistics */
    double ms_host_redo;   /* the CPU checker on the rows sent back */
    int64_t elems_host;    /* rms_norm: single elements the certified engine redid */
    int64_t elems_scaled;  /* elements the device decided by the scale rule (matmul, layer_norm) */
    int64_t rows_stats_cert; /* layer_norm: rows judged on the device from the certified statistics */
    int64_t rows_comp;     /* softmax, rms_norm: rows whose sum the device redid compensated (Sum2) */
} nmo_gpu_check_info;

/* Testing (hip/gpu_oracle_test.c): when k > 0, every k-th row also goes to the CPU
 * checker, so that the merge of device and host rows is exercised on every case. */
extern int nmo_gpu_check_host_every;
/* Testing: when k > 0, every k-th element of the rows decided on the device also goes to
 * the host's single-element path (the certified engine from the row's r). */
extern int64_t nmo_gpu_check_elem_every;
/* Testing: when > 0, the length of that list (beyond it: the CPU checker on everything). */
extern int64_t nmo_gpu_check_elem_cap;
/* Testing: 1 = element loads one word at a time even where 16-byte loads could be used. */
extern int nmo_gpu_check_scalar;
/* Testing: 1 = softmax sums every row's terms compensated too (k_smx's second pass, which
 * otherwise runs only where the plain binary64 sums leave the snap of s undecided). */
extern int nmo_gpu_check_comp_all;
/* Testing: 1 = layer_norm closes its row sums from the plain binary64 sums with the
 * any-order radius, not from the compensated ones (the certified statistics' path then
 * takes the rows that radius cannot decide). */
extern int nmo_gpu_check_ln_plain;
/* Testing: nmo_go_ln_probe for case c's plan, in host memory (count probes) */
nmo_status nmo_gpu_ln_probe(const nmo_case *c, const double *in, double *out, int64_t count, nmo_err *err);
/* Testing: when set, every r the device kept is compared with the host fast engine's r
 * from the same sum (nmo_ref_rms_norm_rstd_fast); the counts accumulate here. */
extern int nmo_gpu_check_verify_r;
extern int nmo_gpu_check_host_r; /* testing: r from the host even where the device could */
extern int64_t nmo_gpu_check_r_compared, nmo_gpu_check_r_differ;
/* Testing: rstd_dev on count arbitrary (s, m) pairs for case c's plan and N against the
 * host's r: both = both kept an r, neither = neither did, differ = both kept different
 * r, or the device kept one the host flags. NMO_ERR_UNSUPPORTED when r is on the host. */
nmo_status nmo_gpu_rstd_probe(const nmo_case *c, const double *s, const int64_t *m, int64_t count,
                              int64_t *both, int64_t *neither, int64_t *differ, nmo_err *err);

/* matmul's checker (hip/gpu_oracle_matmul.c): nmo_gpu_check and nmo_gpu_check_supported
 * hand matmul cases to these. */
int nmo_gpu_mm_supported(const nmo_case *c, const char **why);
nmo_status nmo_gpu_check_matmul(nmo_report *rep, const nmo_case *c, const void *cand_dev,
                                const void *const *in_dev, const nmo_check_opts *opts,
                                nmo_gpu_check_info *info, nmo_err *err);
/* The host's copy of gpu_oracle.hip's smx_comp_err (the same operations): the radius of a
 * tree-Sum2 sum of nonnegative terms with T TwoSums, va >= its value. */
double nmo_go_comp_err(double T, double va);
/* layer_norm's row sums (signed terms, k_ln_sums' block tree): the radius of s + c with
 * va the compensated sum of magnitudes (gpu_oracle_rows_host.h, where the proof is) */
double nmo_go_ln_comp_err(int64_t n, double va);
/* testing: elements the refinement and the exact sums decided (accumulate over checks) */
extern int64_t nmo_gpu_mm_refined, nmo_gpu_mm_exact;
/* testing: when k > 0, every k-th element of C goes to the CPU checker too */
extern int64_t nmo_gpu_mm_host_every;
/* gpu_oracle.c's merge of the device's counts (acc) and the CPU checker's report on the
 * units in list (each of n elements, at their own offsets in hp's arrays). */
nmo_status nmo_go_merge_report(nmo_report *rep, const nmo_check_opts *op, const nmo_go_acc *accp,
                               const nmo_report *hp, const nmo_elem_info *wip, const int64_t *list,
                               int64_t nl, int64_t n, int64_t numel, const void *dverd, const void *drlo,
                               const void *drhi, nmo_err *err);

/* After the merge (keep_bounds): NMO_BF_SCALED on the device's elements whose R holds more
 * than max_ulps values (the scale rule decided them; check.c sets the same flag); the
 * units in list (sorted, n elements each) are the host's, their flags already set. */
void nmo_go_mark_scaled(nmo_report *rep, int out_bf16, const int64_t *list, int64_t nl, int64_t n);

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


#define NMO_GO_LN_PART 12 /* doubles a row in nmo_go_ln_args.part */
/* layer_norm's bound on the relative distance of the device's element error scale from the
 * CPU's, in units of 2^-53, for rows of n (k_ln_judge says why; twice the proven distance) */
#define NMO_GO_LN_REL_U(n) (8.0 * (double)(n) + 96.0)
/* Testing: k_ln_judge's element function on count probes of NMO_GO_LN_PROBE_IN doubles
 * (x, w, b, mean lo, hi, mag, rstd lo, hi, mag, s lo, hi, mag) into 4 (lo, hi, scale, ok) */
#define NMO_GO_LN_PROBE_IN 12
nmo_status nmo_go_ln_probe(const double *in_dev, double *out_dev, int64_t count, double uc, double etac,
                           nmo_err *err);

/* ---- softmax's and layer_norm's rows on the device (hip/gpu_oracle_rows_dev.h, hip/gpu_oracle_rows_host.h) ----
 * One block a row: the max, e_j = exp(RN(x_j - m)), their sum s, rcp = RN(1/s) and
 * y_j = hull(e_j / s, e_j rcp) as the fast engine forms them (refs/softmax.c,
 * engine/row_fast.h), snapped and judged on the device; a row with anything undecided
 * goes to the CPU checker. */
typedef struct {
    const void *x, *cand;     /* x [rows, n], cand [rows, n] (out) */
    int in_bf16, out_bf16;
    int64_t rows, n;
    int nexp, ftzx;           /* fn_ulps[EXP]; nmo_plan_exp_ftz */
    double k, ua, en;         /* nmo_fe_red_k(n, n, 0); unit roundoff of acc; n 2^-53 */
    double maxfin_a;          /* largest finite acc value */
    const uint8_t *skip;      /* NULL, or per row: 1 = the host checks it */
    int64_t max_ulps;
    uint8_t *verd;
    double *rlo, *rhi;        /* NULL, or per element R */
    double *rstat;            /* NULL, or per row: m, s_lo, s_hi, rcp_lo (0: the host's row) */
    int64_t *redo;            /* rows the device cannot decide (acc->n_redo of them) */
    nmo_go_acc *acc;
    uint16_t *wid;            /* per element: its width (saturated at NMO_GO_HIST), for the histogram */
    uint8_t *roww;            /* per row: 1 = decided here and holding a width >= 8 */
    int comp_all;             /* testing: every row's sum compensated (nmo_gpu_check_comp_all) */
} nmo_go_smx_args;
nmo_status nmo_go_smx_judge(const nmo_go_smx_args *a, nmo_go_acc *acc_host, nmo_err *err);

/* layer_norm (refs/layer_norm.c, norm_two_pass + norm_affine; fused plans): the row sums
 * on the device (pass 1: the terms x_j; pass 2: d_j^2, d_j = RN(x_j - mean)), each row's
 * statistics closed on the host by the fast engine's own code (nmo_fenc_dotk_finish,
 * nmo_fenc_div_si, nmo_fenc_rsqrt, nmo_fenc_sqrt), then every element's affine forms
 * on the device, snapped and judged. */
typedef struct {
    const void *x, *w, *b, *cand; /* x [rows, n]; w, b [n]; cand [rows, n] */
    int in_bf16, out_bf16;
    int64_t rows, n;
    double uc, etac;              /* unit roundoff and underflow term of compute */
    const double *mean;           /* per row: mean lo, hi and its error scale (pass 2, the judge) */
    const double *stat;           /* per row: rstd lo, hi, sqrt(var + eps) lo, hi, their
                                     error scales (the judge) */
    const uint8_t *skip;          /* per row: 1 = the host checks it (the judge) */
    double *part;                 /* per row, NMO_GO_LN_PART doubles: slo, shi, A (plain binary64
                                     sums), Q, exact-path ok, non-finite, the terms' error
                                     scales summed (pass 2; pass 1: A), 0, then the three
                                     sums' compensations (Sum2), 0 */
    int64_t max_ulps;
    uint8_t *verd;
    double *rlo, *rhi;
    int64_t *redo;
    nmo_go_acc *acc;
    uint16_t *wid;                /* as nmo_go_smx_args */
    uint8_t *roww;
    int64_t *eredo, eredo_cap;    /* the judge: single elements the device cannot decide
                                     (acc->n_eredo; the first eredo_cap listed) */
    int64_t elem_every;           /* testing: every k-th element to the host's element path */
} nmo_go_ln_args;
/* pass 1 or 2 of the row sums into a->part (synchronous) */
nmo_status nmo_go_ln_sums(const nmo_go_ln_args *a, int pass, nmo_err *err);
nmo_status nmo_go_ln_judge(const nmo_go_ln_args *a, nmo_go_acc *acc_host, nmo_err *err);

#ifdef __cplusplus
}
#endif
#endif
