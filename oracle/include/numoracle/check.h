/* numoracle: the checker (DESIGN §6) — reachable sets, per-element and tensor verdicts. */
#ifndef NUMORACLE_CHECK_H
#define NUMORACLE_CHECK_H

#include <stdio.h>
#include "numoracle/op.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Values double as CLI exit codes. */
typedef enum { NMO_PASS = 0, NMO_FAIL = 1, NMO_INCONCLUSIVE = 3 } nmo_verdict;

typedef enum {
    NMO_MODE_ESCALATE = 0, /* fast engine, certified engine for units it cannot certify */
    NMO_MODE_CERT          /* certified engine alone (the definition; slow) */
} nmo_mode;

typedef struct {
    nmo_mode mode;
    long max_ulps;      /* 0: the plan's (nmo_plan_max_ulps) */
    int keep_verdicts;  /* report.verdicts[k][i] for every element */
    int keep_bounds;    /* report.rlo/rhi[k][i]: the reachable set R, values of `out` */
    int keep_enc;       /* report.enc[k][i]: the enclosure before the store */
    int escalate_terms; /* testing: recompute every reduction term that supports term
                           escalation with the certified engine (enc_fast.h) */
} nmo_check_opts;

/* Per-element flags in bound tensors (bundles) and reports. */
#define NMO_BF_NAN_OK 1u     /* NaN is a possible result */
#define NMO_BF_NONFINITE 2u  /* R is not finite (and not exactly {+inf} or {-inf}):
                                INCONCLUSIVE unless outside */
#define NMO_BF_WIDE 4u       /* R is informative by neither rule (DESIGN §6: more than
                                max_ulps values and wider than max_ulps ulps of out at
                                the element's error scale): INCONCLUSIVE */
#define NMO_BF_MUST_NAN 8u   /* every implementation gives NaN */
#define NMO_BF_SCALED 16u    /* informative by the scale rule only: R holds more than
                                max_ulps values, within max_ulps ulps of the scale */
#define NMO_BF_NOSCALE 32u   /* the error scale is unbounded (a domain edge of the
                                computation): only the count rule applies */

typedef struct {
    int k;              /* output index */
    int64_t index;      /* logical element index in that output */
    double cand;        /* candidate value */
    double rlo, rhi;    /* reachable set */
    double enc_lo, enc_hi;
    double dist_ulps;   /* outside R by this many output ulps (FAIL), 0 inside */
    int64_t width_ulps; /* ulps spanned by R */
    double scale;       /* the element's error scale (op.h: nmo_fenc.mag) */
    double width_scale; /* R's width in ulps of out at the scale (NAN: no scale) */
    nmo_verdict verdict;
} nmo_elem_info;

#define NMO_WIDTH_HIST 4096

typedef struct {
    nmo_verdict verdict;
    nmo_mode mode;
    long max_ulps;
    int64_t n, n_pass, n_fail, n_inconc;
    int64_t n_nonfinite, n_wide;     /* INCONCLUSIVE reasons: R not finite (n_overflow +
                                        n_unbounded), R too wide (n_noscale of them
                                        without an error scale: a domain edge) */
    int64_t n_overflow;              /* R reaches past the largest finite value */
    int64_t n_unbounded;             /* R = [-inf, inf]: division by an interval holding
                                        0, a domain edge, an overflow not bounded */
    int64_t n_noscale;               /* too wide, and the error scale is unbounded */
    int64_t n_nan;                   /* candidate NaN where NaN is possible, not certain */
    int64_t n_scaled;                /* PASS by the scale rule only (more than max_ulps
                                        values, within max_ulps ulps of the scale) */
    int64_t n_unc;                   /* elements the fast engine could not certify */
    int64_t n_escalated;             /* elements recomputed by the certified engine */
    int64_t units, units_escalated;
    int64_t n_term_esc;              /* reduction terms recomputed by the certified engine
                                        (term escalation: enc_fast.h) */
    int64_t n_sum_cert;              /* sums of fast-engine terms the certified engine
                                        finished (nmo_fenc_sum_sharp) */
    int64_t n_stat;                  /* elements of absent inputs enclosed (recomputed
                                        statistics: nmo_case.absent) */
    int64_t n_stat_cert;             /* of those, computed by the certified engine */
    int has_worst;
    nmo_elem_info worst;             /* worst FAIL, else widest INCONCLUSIVE/PASS */
    int64_t width_hist[NMO_WIDTH_HIST + 1]; /* finite R widths in ulps; last = beyond */
    int64_t width_max;
    double seconds;
    int n_out;
    int64_t out_n[NMO_MAX_TENSORS]; /* elements of each output */
    uint8_t *verdicts[NMO_MAX_TENSORS];
    double *rlo[NMO_MAX_TENSORS], *rhi[NMO_MAX_TENSORS];
    uint8_t *bflags[NMO_MAX_TENSORS];
    nmo_fenc *enc[NMO_MAX_TENSORS];
} nmo_report;

/* Judge candidate outputs cand[0..c->n_out-1] (dtype plan.out, dims of c->out[k]) for
 * case c. cand may be NULL: then only bounds are computed (keep_bounds). */
nmo_status nmo_check(nmo_report *rep, const nmo_case *c, const nmo_tensor *cand,
                     const nmo_check_opts *opts, nmo_err *err);
void nmo_report_free(nmo_report *rep);

/* Width quantile (q in [0,1]) of finite reachable sets, in output ulps. */
double nmo_report_width_quantile(const nmo_report *rep, double q);

/* Judge one element: enclosure e, candidate value v, output format and plan. Fills
 * info's rlo/rhi/dist/width/scale/verdict. */
nmo_verdict nmo_judge(nmo_elem_info *info, const nmo_fenc *e, double v, const nmo_plan *plan,
                      long max_ulps, uint32_t *bflags);

const char *nmo_verdict_name(nmo_verdict v);

/* Reports: human text, and JSON (every report carries the plan). name: candidate. */
void nmo_report_print(FILE *f, const nmo_report *rep, const nmo_case *c, const char *name);
/* The case's lines of it: "params: NAME=VALUE ..." (every parameter, as used) and one
 * "input NAME: SOURCE" per input: c->in_src[k] ("file:PATH", "generated:FAMILY seed=S",
 * "derived", "unused"), "given" when NULL, "recomputed" for an absent input. The JSON
 * report has the same sources under "inputs". */
void nmo_report_print_case(FILE *f, const nmo_case *c);
/* malloc'd JSON text. */
char *nmo_report_json(const nmo_report *rep, const nmo_case *c, const char *name,
                      const char *family, uint64_t seed);
/* The same, plus provenance_json (a JSON object's text: device, architecture, driver
 * and runtime versions, compiler, kernel timing...; may be NULL) under "provenance".
 * Text that does not parse as JSON is kept as a string. */
char *nmo_report_json_prov(const nmo_report *rep, const nmo_case *c, const char *name,
                           const char *family, uint64_t seed, const char *provenance_json);

#ifdef __cplusplus
}
#endif
#endif
