/* numoracle: operators — the registry of precision-annotated reference kernels.
 *
 * An operator describes its tensors and parameters, maps a shape onto tensor dims, and
 * splits its outputs into "units": independent pieces of work (a row of a norm, a row
 * of a matrix product) that each engine evaluates on its own. A unit is also the grain
 * of escalation: when the fast engine cannot certify an element, the certified engine
 * recomputes that element's unit. */
#ifndef NUMORACLE_OP_H
#define NUMORACLE_OP_H

#include <stdint.h>
#include "numoracle/tensor.h"
#include "numoracle/plan.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NMO_MAX_TENSORS 8
#define NMO_MAX_PARAMS 8

/* Per-element enclosure as the checker sees it: a closed interval of values that the
 * unrounded-to-`out` result of every plan-following implementation lies in.
 *  - lo, hi are values of the compute lattice (so any double suffices);
 *  - lo = hi = NaN with NMO_EF_NAN: every implementation gives NaN;
 *  - NMO_EF_NAN on a non-empty interval: NaN is possible besides the interval;
 *  - NMO_EF_UNC: the fast engine could not certify this element (escalate);
 *  - mag: the element's error scale (>= 0; +inf: none, a domain edge), the magnitude
 *    of what its computation combined carried to its units (enc_fast.h, "error
 *    scale"); the checker measures the width of the reachable set against it. */
#define NMO_EF_UNC 1u
#define NMO_EF_NAN 2u
typedef struct {
    double lo, hi;
    uint32_t flags;
    double mag;
} nmo_fenc;

typedef enum {
    NMO_ROLE_DATA = 0, /* follows the input family */
    NMO_ROLE_WEIGHT,   /* 1 + 0.1 randn (norm weights) */
    NMO_ROLE_BIAS,     /* 0.1 randn */
    NMO_ROLE_LABEL,    /* integer class labels in [0, row_len) (stored as values) */
    NMO_ROLE_DERIVED,  /* computed from the other inputs by op->derive (saved forward
                          statistics such as rstd, mean, LSE, O: a consistent forward) */
    NMO_ROLE_POSITIVE  /* 0.5 + uniform(0,1): variances, scales */
} nmo_role;

/* Input flags (nmo_tspec.flags). */
#define NMO_IN_OPTIONAL 1u /* may be absent (nmo_case.absent): a saved statistic that a kernel
                              may recompute instead; the reference then encloses every
                              plan-following recomputation (op->stat_fast/stat_cert) */
#define NMO_IN_SOURCE 2u   /* never read by the reference: only the source a derived input is
                              generated from (kl_div's logits); never required */

typedef struct {
    const char *name;
    nmo_role role;
    const char *doc;
    unsigned flags;       /* NMO_IN_* (0: required, read by the reference) */
} nmo_tspec;

/* A parameter's documented domain (nmo_case_init_params refuses values outside it,
 * naming the parameter). Discrete parameters (layout, reduction, ...) are checked by
 * their operator's setup. */
enum { NMO_PDOM_FINITE = 0, NMO_PDOM_NONNEG = 1 /* >= 0 */, NMO_PDOM_POS = 2 /* > 0 */ };

typedef struct {
    const char *name;
    double def;
    const char *doc;
    int domain;           /* NMO_PDOM_* (0: any finite value) */
} nmo_pspec;

/* Plan fields an operator declares (DESIGN §4: every operator honours every field of the
 * plan or rejects the plan). in, out, round, subnormals and max_ulps are honoured for
 * every operator by the setup, the engines and the checker; the fields below depend on
 * what the reference computes, so each operator puts each bit in exactly one of
 *   plan_fields   modelled: the enclosure depends on the field (a test shows it moves);
 *   plan_vacuous  the operator has no stage the field describes (no reduction for acc,
 *                 no intermediate for inter): accepted, and the enclosure does not move;
 *   neither       not modelled: nmo_op_check_plan rejects a plan that sets the field
 *                 (allowed for INTER, SUM_EXACT and SUM_MMA only).
 * "Sets": inter != compute; sum = exact; sum = mma:K; sum = tree/blocked. compute, acc and fn are always set
 * (every plan names them), so they are modelled or vacuous. refs/README.md "Plan fields". */
#define NMO_PF_COMPUTE 0x01u   /* elementwise math rounded in compute */
#define NMO_PF_ACC 0x02u       /* reductions accumulated in acc */
#define NMO_PF_FN 0x04u        /* transcendental functions of plan accuracy (fn_ulps) */
#define NMO_PF_INTER 0x08u     /* the unfused stage boundaries round into inter */
#define NMO_PF_SUM_EXACT 0x10u /* sum=exact: the reductions use the plan's dot model */
#define NMO_PF_SUM_MMA 0x20u   /* sum=mma:K[:P]: tensor-core matrix products */
#define NMO_PF_SUM_GEOM 0x40u  /* sum=tree:D, sum=blocked:B[:D[:P]]: every reduction takes the
                                  geometry's bound (nmo_plan_red_k: enc_sum, enc_sum_sharp,
                                  enc_dotk, enc_dot_d, enc_dot_sharp_d, enc_gemm_*) */
#define NMO_PF_ALL 0x7fu

struct nmo_op;
struct nmo_fctx;
struct nmo_cctx;

/* One evaluation problem: operator, plan, tensors (inputs with data; outputs as
 * descriptions), parameters. */
typedef struct nmo_case {
    const struct nmo_op *op;
    nmo_plan plan;
    int nshape;
    int64_t shape[NMO_MAX_DIMS];
    int n_in, n_out;
    nmo_tensor in[NMO_MAX_TENSORS];
    nmo_tensor out[NMO_MAX_TENSORS];
    double param[NMO_MAX_PARAMS];
    /* Bit k set: input k is not given (allowed for NMO_IN_OPTIONAL inputs only; nmo_check
     * rejects any other bit). The reference does not read it: it encloses the value every
     * plan-following kernel recomputes from the other inputs. 0 (nmo_case_init): every
     * input given, as before. c->in[k] keeps its storage (a CPU candidate may still read
     * a derived value there). */
    uint32_t absent;
    /* Optional, for reports: where input k came from ("file:x.bin", "generated:gaussian
     * seed=0", ...); NULL prints "given" (or "recomputed" for an absent input). Not owned. */
    const char *in_src[NMO_MAX_TENSORS];
    /* Set by nmo_check for the duration of a check (callers leave NULL): the enclosures
     * of the absent inputs, one per element, computed once so that units which need
     * every row's statistic (dw columns) do not recompute it. */
    const nmo_fenc *stat[NMO_MAX_TENSORS];
} nmo_case;

typedef struct nmo_op {
    const char *name;
    const char *summary;
    const char *shape_doc;        /* "MxN: M rows of N" */
    const char *rounding_doc;     /* one line: the rounding points */
    int n_in;
    nmo_tspec in[NMO_MAX_TENSORS];
    int n_out;
    nmo_tspec out[NMO_MAX_TENSORS];
    int n_param;
    nmo_pspec param[NMO_MAX_PARAMS];
    const char *dtypes;           /* storage dtypes with default plans: "fp32 bf16 fp16" */
    /* Shapes the generic tests use, "small;other" (the first with an odd reduction
     * width), and the large sweep's "large;other" (NMO_LARGE=1). */
    const char *test_shapes;
    const char *test_shapes_large;
    /* NMO_PF_* bits: modelled fields and fields without a stage (see above) */
    unsigned plan_fields, plan_vacuous;

    /* From c->shape/c->plan/c->param: set dims and dtypes of c->in[] and c->out[]
     * (no data). Reject inconsistent or absurd shapes with NMO_ERR_SHAPE. */
    nmo_status (*setup)(nmo_case *c, nmo_err *err);
    /* Length of the reduction rows (for per-row input families). */
    int64_t (*row_len)(const nmo_case *c);
    int64_t (*units)(const nmo_case *c);
    /* Output elements of output k that unit u writes: begin + i*stride, i < count. */
    void (*unit_span)(const nmo_case *c, int64_t u, int k, int64_t *begin, int64_t *count,
                      int64_t *stride);
    /* Optional: fill NMO_ROLE_DERIVED inputs from the others after generation (a
     * correct forward pass, rounded as the forward kernel would store it). */
    void (*derive)(nmo_case *c);
    /* Engines. prepare/release are optional (batched work such as matrix products).
     * eval writes, for each output k, unit_span's count enclosures into out[k]. */
    nmo_status (*prepare_fast)(struct nmo_fctx *ctx, const nmo_case *c, nmo_err *err);
    void (*eval_fast)(struct nmo_fctx *ctx, const nmo_case *c, int64_t u, nmo_fenc **out);
    void (*eval_cert)(struct nmo_cctx *ctx, const nmo_case *c, int64_t u, nmo_fenc **out);
    /* Optional, for units whose elements are computed independently of each other (a
     * row of a matrix product): out[] holds the fast engine's results for unit u;
     * recompute with the certified engine exactly the elements flagged NMO_EF_UNC, as
     * eval_cert would, and leave the others. The checker then escalates elements, not
     * whole units (a large unit stays cheap to escalate). */
    void (*eval_cert_unc)(struct nmo_cctx *ctx, const nmo_case *c, int64_t u, nmo_fenc **out);
    /* Optional, for units whose elements share one statistic and are otherwise computed
     * independently (a norm's row: r, then x_j r w_j): as eval_cert_unc, the flagged
     * elements only, after the statistic once by the certified engine. fc (the fast
     * engine's context of this check, or NULL) may compute a flagged element from the
     * certified statistic where the fast formula decides it (its decided results are
     * the certified engine's for the same inputs); the rest by the certified engine.
     * Takes precedence over eval_cert_unc. */
    void (*eval_cert_unc_stat)(struct nmo_fctx *fc, struct nmo_cctx *ctx, const nmo_case *c, int64_t u,
                               nmo_fenc **out);
    /* Required when an input is NMO_IN_OPTIONAL: element i (a row) of every optional input
     * k as a kernel recomputes it, enclosed: out[k] (k indexes the op's inputs; the optional
     * inputs have the same number of elements). Both engines, same formulas; the fast one
     * flags NMO_EF_UNC as usual. */
    void (*stat_fast)(struct nmo_fctx *ctx, const nmo_case *c, int64_t i, nmo_fenc *out);
    void (*stat_cert)(struct nmo_cctx *ctx, const nmo_case *c, int64_t i, nmo_fenc *out);
    /* 1: absent optional inputs mean a kernel that never reads them (sdpa_bwd without o:
     * PyTorch's math backward), not one that recomputes them, and the table's candidates
     * read them; the generic tests then run those candidates with the inputs given only
     * (the o-less candidate has a test of its own). The table nmo_check builds may then
     * hold what the units need instead of the input's values (stat_fast documents it). */
    int absent_reads_none;
    /* Optional: the contract class of a forward operator ("elementwise", "norm": a key of a
     * contract's "classes"). A contract with "registry_operators" judges an operator it
     * does not list under this class (contracts/README.md); one it lists must name the
     * same class. NULL: the operator is judged only where a contract lists it. */
    const char *contract_class;
} nmo_op;

int nmo_op_count(void);
const nmo_op *nmo_op_at(int i);
const nmo_op *nmo_op_find(const char *name);

/* Build a case: look the shape up, set the plan's dtypes, set params to defaults then
 * override. Inputs get allocated (zeroed) storage; outputs descriptions only. */
nmo_status nmo_case_init(nmo_case *c, const nmo_op *op, const nmo_plan *plan, int nshape,
                         const int64_t *shape, nmo_err *err);
/* As nmo_case_init, with parameters: param[k] replaces the default where set[k] != 0
 * (param or set NULL: defaults). setup sees the final parameters, so an output's shape
 * may depend on one (a loss reduction: [M] for none, [1] for mean/sum). */
nmo_status nmo_case_init_params(nmo_case *c, const nmo_op *op, const nmo_plan *plan, int nshape,
                                const int64_t *shape, const double *param, const int *set,
                                nmo_err *err);
void nmo_case_free(nmo_case *c);
/* Output storage for a run of c: out[k] (k < c->n_out) gets c->out[k]'s description
 * and its own zeroed storage, every byte set to 0xFF when poison (NaN in every format, so
 * an element the candidate never writes cannot pass); entries from c->n_out on are not
 * touched. On failure the outputs allocated so far are freed (data NULL, own 0) and the
 * error is returned. Release with nmo_case_free_outputs. */
nmo_status nmo_case_alloc_outputs(const nmo_case *c, nmo_tensor *out, int poison, nmo_err *err);
void nmo_case_free_outputs(const nmo_case *c, nmo_tensor *out);
/* NMO_OK when op honours every field of plan, else NMO_ERR_UNSUPPORTED with
 * "<op> does not model plan field '<field>' (<why>); ..." (nmo_case_init_params and
 * nmo_check call it: a case whose plan is changed after construction is checked too). */
nmo_status nmo_op_check_plan(const nmo_op *op, const nmo_plan *plan, nmo_err *err);
/* The NMO_PF_* bits a plan sets (NMO_PF_INTER, NMO_PF_SUM_EXACT, NMO_PF_SUM_MMA,
 * NMO_PF_SUM_GEOM). */
unsigned nmo_plan_fields_set(const nmo_plan *plan);
/* Fill the inputs from a family (stream k for input k). */
void nmo_case_fill(nmo_case *c, int family, uint64_t seed);
int nmo_op_input_index(const nmo_op *op, const char *name);
/* Bit mask of op's NMO_IN_OPTIONAL inputs. */
uint32_t nmo_op_optional_mask(const nmo_op *op);
/* The dtypes op offers (its space-separated `dtypes` list), in list order, a name that
 * nmo_fmt_from_name does not know skipped: writes at most max, returns how many. The one
 * reader of that list (the CLI, the binding, the contract, the campaign and the tests). */
int nmo_op_dtypes(const nmo_op *op, nmo_fmt *out, int max);
/* 1 when op offers dtype f (f is in its dtypes list), else 0. */
int nmo_op_has_dtype(const nmo_op *op, nmo_fmt f);
/* Input values the reference cannot give a meaning to: a class label (NMO_ROLE_LABEL)
 * that is neither an integer in [0, row_len) nor the op's ignore_index parameter.
 * Returns NMO_ERR_DATA naming input k, the element and the value (what = the file or
 * other source to name first, may be NULL), else NMO_OK. */
nmo_status nmo_case_check_input(const nmo_case *c, int k, const char *what, nmo_err *err);
int nmo_op_param_index(const nmo_op *op, const char *name);

#ifdef __cplusplus
}
#endif
#endif
