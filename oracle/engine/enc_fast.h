/* numoracle: the fast enclosure engine (DESIGN §5) — binary64, inline.
 *
 * Semantics shared with the certified engine (enc_cert.h); read this once:
 *
 * An enclosure [lo, hi] holds the value that EVERY implementation following the plan
 * computes at this point of the kernel. After each operation the enclosure is snapped
 * to the lattice of the format the kernel holds the value in (compute, or acc for
 * reductions), so every endpoint is a value of that format — exactly a double.
 *
 * Each primitive is defined as a real-valued formula F of its inputs' endpoints followed
 * by a snap (a rounding into the lattice). The certified engine evaluates F in MPFR
 * (outward, 128 bits); the fast engine evaluates F in binary64 and knows a radius e that
 * bounds its own error (plus the certified engine's). When the snap is constant over
 * [v - e, v + e] both engines produce the same lattice value; when it is not, the fast
 * engine sets NMO_EF_UNC and the checker recomputes that unit with the certified engine.
 * Hence "fast + escalation == certified alone", element for element, by construction.
 * Operations on lattice values that binary64 performs with one correct rounding
 * (+ - * / sqrt of formats with p <= 25: Figueroa 1995, "When is double rounding
 * innocuous?", p' >= 2p + 2) need no radius at all.
 *
 * Special values: lo = hi = NaN with NMO_EF_NAN means "every implementation gives NaN";
 * NMO_EF_NAN on an interval means NaN is also possible; [-inf, +inf] + NMO_EF_NAN is
 * "anything" (a domain edge, an overflow we cannot bound). The checker makes any
 * non-finite reachable set INCONCLUSIVE.
 *
 * With compute = fp64 no radius is ever small enough: every element escalates
 * (force_unc), so fp64 plans are decided by the certified engine alone. */
#ifndef NUMORACLE_ENC_FAST_H
#define NUMORACLE_ENC_FAST_H

#include <math.h>
#include <stdint.h>
#include <string.h>
#include "numoracle/op.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NMO_SCRATCH 8

typedef struct nmo_fctx {
    nmo_plan plan;
    nmo_fmt cf, af;     /* compute and accumulator formats */
    double uc, ua;      /* unit roundoff 2^-p of compute and accumulator */
    double etac, etaa;  /* absolute error of one rounding in the underflow range:
                           half the subnormal spacing (IEEE), min_normal (ftz) */
    double minnorm_c;   /* smallest normal of compute (ftz input flushing) */
    double maxfin_a;    /* largest finite accumulator value */
    double minsub_c;    /* smallest subnormal of compute */
    int ftz;
    int fp32rn;         /* compute/acc is fp32 without ftz: (float) casts round */
    uint32_t force_unc; /* NMO_EF_UNC when the fast engine cannot certify anything */
    double *dbuf[NMO_SCRATCH];
    int64_t dcap[NMO_SCRATCH];
    nmo_fenc *ebuf[NMO_SCRATCH];
    int64_t ecap[NMO_SCRATCH];
    void *prep;                 /* operator data made by prepare_fast */
    void (*prep_free)(void *);  /* its destructor; also tells what kind of data it is */
    int prep_borrowed;          /* prep belongs to another context (a checker worker
                                   sharing the first one's): read it, never free or
                                   modify it */
    struct nmo_cctx *cert;      /* made on first use by nmo_fctx_cert (term escalation) */
    int64_t n_term_esc;         /* reduction terms recomputed by the certified engine */
    int64_t n_sum_cert;         /* sums of fast terms finished by the certified engine */
    int gemm_partials;          /* nmo_fmt split-K partials are stored in, -1: none
                                   (nmo_fenc_gemm_partials; matrix products only) */
    int term_esc_all;           /* testing: recompute every term (nmo_check_opts) */
    int64_t geo_over;           /* the longest reduction beyond the plan's geometry
                                   (nmo_plan_red_k: INFINITY; nmo_check: an error), 0 */
    int exp_flat;               /* exp takes the flat fn_ulps[EXP], not nmo_plan_exp_ulps:
                                   set by a reference whose kernels fold exp's argument
                                   into an FMA (sdpa, sdpa_bwd) */
} nmo_fctx;

nmo_status nmo_fctx_init(nmo_fctx *c, const nmo_plan *p, nmo_err *err);
void nmo_fctx_clear(nmo_fctx *c);
/* A certified context on the same plan, made on first use and owned by c (NULL when it
 * cannot be made: the caller then leaves the term flagged and the unit escalates). */
struct nmo_cctx *nmo_fctx_cert(nmo_fctx *c);
/* The certified engine's sharpened sum of these (finite) fast enclosures, exported
 * (oracle/engine/enc_cert.c); -1 when an endpoint is not finite. */
int nmo_cenc_sum_sharp_fenc(struct nmo_cctx *c, nmo_fenc *r, const nmo_fenc *x, int64_t n);

/* Term escalation. A unit that reduces many terms (a scalar loss over a whole tensor)
 * escalates as a whole when any one term's snap is uncertain; a snap is ambiguous with
 * probability about 2^-25 (radius 2^-50 relative against an fp32 ulp), so at 16M terms
 * nearly every such unit escalated, and the certified engine took 500 s for one
 * 4096x4096 kl_div. Instead a reference recomputes the one flagged term with the
 * certified engine (the same term function, compiled for it): that gives the lattice
 * values the certified-only evaluation gives the term, so the reduction sees the same
 * terms either way and "fast + escalation == certified" (DESIGN §5) still holds. Returns
 * the certified context when the term with these flags should be recomputed (and counts
 * the recomputation in n_term_esc), else NULL. */
static inline struct nmo_cctx *nmo_fctx_term_cert(nmo_fctx *c, uint32_t flags)
{
    if (!((flags & NMO_EF_UNC) || c->term_esc_all) || c->force_unc) return NULL;
    struct nmo_cctx *cc = nmo_fctx_cert(c);
    c->n_term_esc += cc != NULL;
    return cc;
}
double *nmo_fctx_dvec(nmo_fctx *c, int slot, int64_t n);
nmo_fenc *nmo_fctx_evec(nmo_fctx *c, int slot, int64_t n);


/* The primitives, one family per file (docs/DESIGN.md, "Layout"), in dependency order. */
#include "engine/fast_priv.h"
#include "engine/elem_fast.h"
#include "engine/fn_fast.h"
#include "engine/row_fast.h"
#include "engine/sum_fast.h"
#include "engine/prodk_fast.h"
#include "engine/sharp_fast.h"
#include "engine/linalg_fast.h"

#ifdef __cplusplus
}
#endif
#endif
