/* numoracle campaign: the checks a campaign compares — numoracle itself (oracle mode)
 * and fixed / dynamic / calibrated tolerance baselines against a reference. Each
 * baseline reproduces the comparison rule of the project it is named after (sources in
 * checks.c); every one judges a whole output tensor PASS or FAIL. */
#ifndef NMO_CAMPAIGN_CHECKS_H
#define NMO_CAMPAIGN_CHECKS_H

#include <stdint.h>

#include "numoracle/numoracle.h"

typedef enum {
    NMO_CK_NUMORACLE = 0, /* nmo_check verdicts: INCONCLUSIVE is never a pass */
    NMO_CK_TORCH,         /* torch.testing.assert_close defaults per dtype */
    NMO_CK_VLLM,          /* vLLM kernel tests: assert_close(atol=1e-2, rtol=1e-2) */
    NMO_CK_HIPDNN,        /* hipDNN TestTolerances.hpp per operation, allClose(tol, tol) */
    NMO_CK_TE,            /* TransformerEngine compareResults: atol OR rtol, rounding ties */
    NMO_CK_HIGHAM,        /* hipDNN DynamicTolerances style: gamma_n(u) * sum|terms| */
    NMO_CK_P999,          /* hipDNN RFC 0011 calibrated tolerance: p99.9 abs and rel errors */
    NMO_CK_COUNT
} nmo_ck;

const char *nmo_ck_name(nmo_ck c);
const char *nmo_ck_label(nmo_ck c); /* display name */
const char *nmo_ck_rule(nmo_ck c);  /* one line: the rule */
int nmo_ck_from_name(const char *name); /* -1 if unknown */

/* Per-output-tensor context of the baselines: the reference, tolerances computed once
 * per case. */
typedef struct {
    nmo_fmt out;            /* output storage format */
    nmo_fmt compute;
    int64_t n;
    const double *ref;      /* reference value of every element (NaN: none) */
    double torch_atol, torch_rtol;
    double hipdnn_tol;
    const char *hipdnn_cat; /* the TestTolerances.hpp namespace used */
    double te_atol, te_rtol;
    double higham_tol;
    const char *higham_model;
    int have_p999;
    double p999_atol, p999_rtol;
} nmo_ck_tensor;

/* Fill the tolerances of output k of case c (inputs decoded as needed). ref must stay
 * valid while t is used. p999 (atol, rtol) may be NULL (not calibrated yet). */
void nmo_ck_setup(nmo_ck_tensor *t, const nmo_case *c, int k, const double *ref, const double *p999);

/* Judge one baseline on candidate values cand[0..n-1]: 'P' or 'F' ('-' if the check has
 * no rule for this dtype or no calibration). Not for NMO_CK_NUMORACLE. */
char nmo_ck_judge(const nmo_ck_tensor *t, nmo_ck c, const double *cand);

/* hipDNN's computeGamma (DynamicTolerances.hpp): linear (2ku/(1-2ku)) below 2ku = 0.01,
 * statistical 6 sqrt(2k) u above. */
double nmo_ck_gamma(uint64_t k, double eps);

/* Machine epsilon (2^(1-p)) of a format. */
double nmo_ck_eps(nmo_fmt f);

/* Error statistics of cand against ref: max |a-e|, max |a-e|/|e| (e != 0), and the
 * smallest t with |a-e| <= t + t|e| for every element (equal atol = rtol). Non-finite
 * mismatches give +inf. */
typedef struct {
    double max_abs, max_rel, min_eq_tol;
} nmo_ck_stats;
void nmo_ck_stats_of(nmo_ck_stats *st, const double *cand, const double *ref, int64_t n);

/* Log-binned error histograms for calibration (64 bins per octave, bin 0 = exact). */
#define NMO_CK_HBINS 64
int nmo_ck_hbin(double x);           /* 0 for x == 0; otherwise >= 1 */
double nmo_ck_hbin_upper(int bin);   /* upper edge of a bin (0 for bin 0) */

#endif
