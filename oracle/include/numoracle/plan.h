/* numoracle: precision plans (DESIGN §4) — what a correct kernel may do. */
#ifndef NUMORACLE_PLAN_H
#define NUMORACLE_PLAN_H

#include <stdio.h>
#include "numoracle/fmt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    NMO_SUM_ANY = 0, /* any association order and tree shape, FMA or not */
    NMO_SUM_MMA,     /* tensor-core block accumulation (GPU issue) */
    NMO_SUM_EXACT,   /* accumulator provably loses nothing */
    NMO_SUM_GEOM     /* a declared reduction geometry: sum=tree:D, sum=blocked:B[:D[:P]]
                        (oracle/sum_geom.c) */
} nmo_sum_model;

/* Transcendental / special functions whose accuracy a plan states. */
typedef enum {
    NMO_FN_EXP = 0, NMO_FN_LOG, NMO_FN_RSQRT, NMO_FN_SQRT, NMO_FN_DIV, NMO_FN_RCP,
    NMO_FN_TANH, NMO_FN_ERF, NMO_FN_SIGMOID, NMO_FN_SIN, NMO_FN_COS,
    NMO_FN_COUNT
} nmo_fn;

typedef struct {
    nmo_fmt in, out;
    nmo_fmt compute;     /* elementwise math */
    nmo_fmt acc;         /* reduction accumulator */
    nmo_fmt inter;       /* intermediates between fused stages (== compute when fused) */
    nmo_sum_model sum;
    int mma_k;           /* block length for sum=mma */
    int mma_p;           /* sum=mma: bits the block accumulator keeps (0: acc's) */
    /* sum=tree / sum=blocked (NMO_SUM_GEOM): runs of at most geo_b terms (any order inside),
     * their partials combined by a tree of depth <= geo_d, the chunk partials so formed
     * (at most geo_b 2^geo_d terms each) combined in any order, geo_p of them (0: as many
     * as n terms need, ceil(n / (geo_b 2^geo_d))). tree:D = 1:D:1.
     * geo_t > 0 (text "n/T" or "n/T+E"): the run length depends on the reduction's n,
     * ceil(n / geo_t) + geo_b (geo_b is then the slack E >= 0): T threads striding over
     * the n terms (nmo_plan_geo_run). */
    int geo_b, geo_d;
    int64_t geo_p;
    int geo_t;
    char fn_name[16];    /* "cr", "ulp:N", "cuda", "ocml", "fast" as written */
    int fn_ulps[NMO_FN_COUNT]; /* max error in ulps of compute for each function;
                                  0 = correctly rounded (RNE); ulp:N sets every function
                                  but sqrt, div and rcp (always 0 but in `fast`) */
    nmo_rnd round;       /* final store rounding: rne, rz, (sr = stochastic: RD or RU) */
    int round_sr;        /* 1: stochastic rounding, the store may give RD or RU */
    int ftz;             /* subnormals: 0 ieee, 1 flushed to zero (inputs and results) */
    long max_ulps;       /* reachable sets wider than this are INCONCLUSIVE; 0: default */
    char preset[24];     /* the named preset the fields came from ("": none; reports) */
} nmo_plan;

/* Default plan for a storage dtype (documented in the README):
 *   fp32: in=out=compute=acc=inter=fp32; bf16/fp16/fp8: in=out=dt, compute=acc=fp32,
 *   inter=fp32 (fused); sum=any; fn=cuda; round=rne; subnormals=ieee; fp64 likewise. */
void nmo_plan_default(nmo_plan *p, nmo_fmt dtype);

/* Parse text like 'in=bf16 out=bf16 compute=fp32 acc=fp32 sum=any fn=ulp:2 round=rne'.
 * Fields not given keep the values already in *p (start from nmo_plan_default). Unknown
 * keys and bad values are NMO_ERR_PARSE with the offending token in err. */
nmo_status nmo_plan_parse(nmo_plan *p, const char *text, nmo_err *err);

/* nmo_plan_parse for one operator, with named presets (oracle/preset.c, `numoracle
 * plans`): a token preset=NAME applies that library's fields for op first, the other
 * fields of text then override them; p->preset records the name. */
nmo_status nmo_plan_parse_op(nmo_plan *p, const char *op, const char *text, nmo_err *err);
int nmo_preset_count(void);
const char *nmo_preset_name(int i);
/* The preset table as text (only: one preset, NULL for all). */
void nmo_preset_print(FILE *f, const char *only);

/* Canonical text form (every field), into buf. Returns buf. */
char *nmo_plan_to_string(const nmo_plan *p, char *buf, size_t n);

/* Default max_ulps for an output format when p->max_ulps == 0:
 * max(4, 2^(prec-5)): a reachable set as wide as 1/16 of the value is not informative. */
long nmo_plan_max_ulps(const nmo_plan *p);

/* 1 when the plan's exp is ex2.approx.ftz.f32 (fn=triton, fn=fast: PTX ISA, ex2 with
 * .ftz; __expf and Triton's tl.exp use it): a result below the smallest normal may be
 * flushed to 0, so every exp enclosure reaching below 2^-126 also holds 0. */
int nmo_plan_exp_ftz(const nmo_plan *p);

/* The fp32 argument from which the plan's exp is +inf exactly and below which it is
 * finite (fn=triton: 0x1.62e43p+6, measured on the H200, plan.c), or +inf when the plan
 * states no such edge (an exp near overflow may then be the largest finite value or inf).
 * Applies to fp32 compute only. */
double nmo_plan_exp_inf_from(const nmo_plan *p);

/* The plan's exp accuracy in ulps for arguments of magnitude at most amax: fn_ulps[EXP],
 * or less where the plan states an argument-dependent figure (fn=triton: 3 + ceil(1.23
 * amax) for amax <= 87, measured on the H200, plan.c). Never more than fn_ulps[EXP]. */
int nmo_plan_exp_ulps(const nmo_plan *p, double amax);

/* 1 when the plan's sigmoid is the formula 1/(1 + exp(-x)) with the plan's exp and
 * division and no library sigmoid (fn=triton: Triton's tl.sigmoid); 0 when a library
 * sigmoid of fn_ulps[SIGMOID] may be used as well (the enclosure is their hull). */
int nmo_plan_sigmoid_composed(const nmo_plan *p);

/* Set fn_ulps from a preset or ulp:N. Presets and their sources are in plan.c. */
nmo_status nmo_plan_set_fn(nmo_plan *p, const char *spec, nmo_err *err);

/* Short name of a function ("exp", "rsqrt", ...), as used in the JSON form. */
const char *nmo_fn_name(nmo_fn f);

/* Multiplier k of the dot-product model error k * u_acc * sum|x_i y_i| for n terms:
 *  any:   n (Jeannerod & Rump 2013: any order, FMA or not, RN);
 *  exact: 0 (the plan asserts the accumulator loses nothing);
 *  mma:K[:P]: tensor-core blocks of K exact products aligned to the block's largest
 *         term and truncated to P bits (Fasi, Higham, Mikaitis & Pranesh 2021,
 *         "Numerical behavior of NVIDIA tensor cores", PeerJ CS 7:e330): each of the
 *         n terms and each of the ceil(n/K) block normalizations errs by less than one
 *         unit in the P-th bit of a partial sum <= sum|x y|: 2 * 2^-P per event,
 *         expressed in units of u_acc. */
double nmo_plan_dot_k(const nmo_plan *p, int64_t n);
/* The same for n terms of which only m are nonzero (an exactly zero product adds nothing:
 * padding, masks). sum=tree/blocked: nmo_plan_red_k(p, n, m, 1). */
double nmo_plan_dot_k2(const nmo_plan *p, int64_t n, int64_t m);

/* Reduction geometry (oracle/sum_geom.c; the bound and its sources are there). The
 * multiplier k of the model error k u_acc sum|t| of a reduction of n terms t (m of them
 * not exactly 0) that the plan's sum model allows:
 *   dot = 0: the terms are acc floats (a plain sum): any order (m - 1);
 *   dot = 1: each term is a product, rounded or fused into its first addition: any order m;
 *   sum=tree/blocked: the smaller of that and the geometry's bound; INFINITY when n
 *   exceeds the geometry's capacity (no evaluation of that shape exists: callers make the
 *   result "anything" and count it, nmo_check reports it as an error).
 * Other models (exact, mma: operators that use the plain sums reject them): any order. */
double nmo_plan_red_k(const nmo_plan *p, int64_t n, int64_t m, int dot);
/* The chunk level of the geometry alone (runs and tree, without the combination of the
 * chunk partials; its binary64 value, to be rounded up by the caller's final k) and the
 * number of chunk partials (at most m): for split-K partials
 * stored in a narrower format (nmo_gemm_partials_k). Returns 0 when the plan has no
 * geometry or n exceeds its capacity. */
int nmo_plan_geo_chunk(const nmo_plan *p, int64_t n, int64_t m, int dot, double *kchunk, int64_t *parts);
/* The run length B of the geometry for a reduction of n terms: geo_b, or with geo_t,
 * ceil(n / geo_t) + geo_b. */
int64_t nmo_plan_geo_run(const nmo_plan *p, int64_t n);
/* Terms one reduction may hold under the geometry: geo_b 2^geo_d geo_p, INT64_MAX for
 * unbounded (geo_p = 0, a relative run length, or no geometry). */
int64_t nmo_plan_geo_capacity(const nmo_plan *p);
/* Text of the sum=tree/blocked value ("tree:5", "blocked:16:8:any"), into buf. */
char *nmo_plan_geo_text(const nmo_plan *p, char *buf, size_t n);
/* Parse a sum value of the tree/blocked forms into q (1), a bad value (0), or not one of
 * those forms (-1). */
int nmo_plan_geo_parse(nmo_plan *q, const char *val);

#ifdef __cplusplus
}
#endif
#endif
