/* numoracle: golden bundles (DESIGN §8, hipDNN RFC 0011) — graph JSON + raw .bin tensors
 * + .meta.json, template sweeps, tier discovery and test names, integrity checks, and
 * certified bound tensors that judge a candidate later without MPFR.
 *
 * On disk (single-graph bundle {Name}/):
 *   {Name}.json                 graph, hipDNN field and data-type names
 *   {Name}.tensor{uid}.bin      every non-virtual tensor: inputs, and the expected output
 *                               (the certified enclosure's midpoint rounded to `out`)
 *   {Name}.tensor{uid}.lo.bin   per output uid: the reachable set R = [lo, hi] in the
 *   {Name}.tensor{uid}.hi.bin   output dtype (unbounded ends +-inf, +-max without inf)
 *   {Name}.tensor{uid}.flags.bin   one uint8 of NMO_BF_* per element (check.h)
 *   {Name}.meta.json            provenance, plan, tolerance
 * Template sweep {Operation}/{TopologyName}/: graph.template.json, sweep.json and
 * golden/{CaseId}/ holding {CaseId}.tensor{uid}[.lo|.hi|.flags].bin and {CaseId}.meta.json.
 *
 * Diagnostics name the file and the tensor uid; no global state: messages go to the
 * caller's nmo_err or diagnostic callback. */
#ifndef NUMORACLE_BUNDLE_H
#define NUMORACLE_BUNDLE_H

#include <stdint.h>
#include "numoracle/check.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cJSON;

#define NMO_BUNDLE_FORMAT_VERSION 1
#define NMO_SWEEP_VERSION 1
#define NMO_GRAPH_MAX_TENSORS 32
#define NMO_BPATH 1024

/* ---- data types --------------------------------------------------------------------- */

/* Graph data types: the nmo_fmt values, then the integer types bundles may carry
 * (NMO_DT_INT32, NMO_DT_INT64: numoracle/tensor.h). */
#define NMO_DT_COUNT ((int)NMO_FMT_COUNT + 2)

/* hipDNN name ("FLOAT", "BFLOAT16", ...); NULL for formats hipDNN has no name for (tf32). */
const char *nmo_dt_name(int dt);
/* Case-insensitive hipDNN name ("FLOAT" and the frontend's "float" both load). */
nmo_status nmo_dt_parse(int *dt, const char *name);
/* Folder and test-name token, RFC 0011 style: fp32 fp16 bfp16 fp64 fp8_e4m3 ... int32. */
const char *nmo_dt_token(int dt);

/* ---- graphs ------------------------------------------------------------------------- */

typedef struct {
    int64_t uid;
    char name[64];
    int dt;
    int ndims;
    int64_t dims[NMO_MAX_DIMS];
    int64_t strides[NMO_MAX_DIMS];
    int is_virtual;
    int has_value;   /* a scalar carried by the graph ("value", hipDNN's epsilon) */
    double value;
} nmo_gtensor;

/* A single-node graph bound to a registry operator. */
typedef struct {
    char name[128];
    int io_dt, compute_dt, inter_dt;  /* -1 when absent */
    int n_tensors;
    nmo_gtensor t[NMO_GRAPH_MAX_TENSORS];
    char node_name[128];
    char node_type[128];              /* "RmsNormFwdAttributes" */
    int node_compute_dt;              /* -1 when absent */
    char operation[128];              /* "RmsNormFwd" */
    const nmo_op *op;                 /* NULL: no registry operator matches */
    int in_t[NMO_MAX_TENSORS];        /* index into t[] of op input k */
    int out_t[NMO_MAX_TENSORS];       /* index into t[] of op output k */
    double param[NMO_MAX_PARAMS];
    int param_set[NMO_MAX_PARAMS];
    int shape_n;                      /* > 0: the operator shape the node implies (hipDNN SDPA) */
    int64_t shape[NMO_MAX_DIMS];
} nmo_graph;

/* "rms_norm" -> "RmsNormFwd", "rms_norm_bwd" -> "RmsNormBwd" (RFC: PascalCase plus the
 * direction). Returns buf. */
char *nmo_op_operation(char *buf, size_t n, const nmo_op *op);
/* The forward operator of a backward one ("x_bwd" -> "x"), NULL when op is not a
 * backward operator or its forward is not in the registry. */
const nmo_op *nmo_op_forward(const nmo_op *op);
int nmo_op_is_backward(const nmo_op *op);

/* Parse and validate a graph JSON object (src names the file in messages): tensor
 * fields, unique uids, dims/strides (dense layouts), data types, exactly one node, its
 * operator and tensor wiring ("x_tensor_uid" keys under "attributes", or hipDNN's
 * "inputs"/"outputs"/"parameters"). Unknown fields are ignored. */
nmo_status nmo_graph_parse(nmo_graph *g, const struct cJSON *j, const char *src, nmo_err *err);
/* Read and parse a graph file. */
nmo_status nmo_graph_read(nmo_graph *g, const char *path, nmo_err *err);

typedef enum { NMO_LAYOUT_ROWMAJOR = 0, NMO_LAYOUT_CHANNELS_LAST = 1 } nmo_layout;
/* The graph of case c (uids: inputs 0.., then outputs), tensors of rank >= 3 stored
 * channels-last under NMO_LAYOUT_CHANNELS_LAST. */
nmo_status nmo_graph_from_case(nmo_graph *g, const nmo_case *c, const char *name,
                               nmo_layout layout, nmo_err *err);
struct cJSON *nmo_graph_to_json(const nmo_graph *g);
/* Layout token of the graph: nchw (row-major) | nhwc (channels-last) | ncdhw | ndhwc. */
const char *nmo_graph_layout(const nmo_graph *g);
/* Data-type token of the graph (io_data_type, else the first input's). */
const char *nmo_graph_dtype_token(const nmo_graph *g);

/* ---- loaded bundles ----------------------------------------------------------------- */

typedef enum { NMO_BK_SINGLE = 0, NMO_BK_SWEEP = 1 } nmo_bundle_kind;

typedef struct {
    nmo_bundle_kind kind;
    char dir[NMO_BPATH];         /* directory holding the tensors (sweep: golden/{CaseId}) */
    char base[256];              /* file stem: {Name} or {CaseId} */
    char graph_path[NMO_BPATH];  /* {Name}.json, or the sweep's sweep.json */
    char meta_path[NMO_BPATH];   /* "" when the bundle has no .meta.json */
    nmo_graph g;
    struct cJSON *meta;          /* parsed .meta.json (NULL when none) */
    nmo_case c;                  /* op, plan, shape, params; inputs when have_inputs */
    int have_case;
    int have_inputs, have_golden, have_bounds;
    nmo_tensor golden[NMO_MAX_TENSORS];   /* packed, plan.out */
    nmo_tensor lo[NMO_MAX_TENSORS];       /* packed, plan.out */
    nmo_tensor hi[NMO_MAX_TENSORS];
    uint8_t *flags[NMO_MAX_TENSORS];      /* packed */
    uint64_t seed;
    int family;
    int64_t payload_bytes;       /* bytes of .bin files read */
} nmo_bundle;

/* Load flags. */
#define NMO_BL_GRAPH_ONLY 1u  /* read graph and metadata only (computed verification modes) */
#define NMO_BL_BOUNDS_ONLY 2u /* graph, metadata and bound tensors: all a stored-bounds judge
                                 needs (no inputs, no expected outputs) */

/* Load a single-graph bundle from its graph JSON. Every integrity check applies: file
 * sizes against dims/strides/dtype, NaN/Inf in expected outputs, bound tensors (all of
 * lo/hi/flags, lo <= hi, the expected value inside R), files staying inside the bundle,
 * format_version. A bundle with no .bin at all is graph-only (have_inputs = 0). */
nmo_status nmo_bundle_load(nmo_bundle *b, const char *json_path, unsigned flags, nmo_err *err);
void nmo_bundle_free(nmo_bundle *b);

/* Judge candidate outputs (packed, plan.out, in op output order) against the stored
 * reachable sets, exactly as nmo_check would (same verdicts, counts, width_max and worst
 * element), without MPFR and without recomputing anything. Flags: */
#define NMO_JUDGE_VERDICTS 1u  /* rep.verdicts[k][i] for every element */
#define NMO_JUDGE_WIDTHS 2u    /* rep.width_hist (the width quantiles of the report) */
nmo_status nmo_bundle_judge(nmo_report *rep, const nmo_bundle *b, const nmo_tensor *cand,
                            unsigned flags, nmo_err *err);

/* Fill the bundle's case inputs from its seed and family (graph-only bundles). */
void nmo_bundle_generate_inputs(nmo_bundle *b);

/* ---- writing ------------------------------------------------------------------------ */

typedef struct {
    const char *name;            /* graph name and file stem */
    nmo_layout layout;
    const char *family;          /* input family name (provenance) */
    uint64_t seed;
    const char *command;         /* generation command line */
    const char *generated_at;    /* ISO 8601 UTC */
    const char *tier;            /* provenance only */
    struct cJSON *forward_source;/* backward bundles: copied into the metadata */
    int no_tolerance;            /* 1: no certified tolerance block */
    const nmo_graph *graph;      /* tensors' uids and strides (template sweeps); NULL:
                                    uids 0.. and the layout above */
    int no_graph_file;           /* 1: no {name}.json (sweep golden directories) */
    struct cJSON *inputs;        /* how each input was obtained (provenance; may be NULL) */
    int informative;             /* 1: refuse any element whose R is wider than max_ulps
                                    (such an element is INCONCLUSIVE for every candidate) */
} nmo_bundle_wopts;

/* Write a certified bundle for case c (inputs filled) into the existing directory dir:
 * computes the bounds (fast engine + escalation, or certified only with mode), refuses
 * any element whose enclosure is not finite (RFC: no NaN/Inf in a golden), writes the
 * graph, the inputs, the expected outputs, lo/hi/flags and the .meta.json. Files are
 * written directly (the caller makes the directory appear atomically: nmo_bundle_dir_*).
 * info (may be NULL) receives a one-line summary. */
nmo_status nmo_bundle_write(const char *dir, const nmo_case *c, const nmo_bundle_wopts *o,
                            nmo_mode mode, char *info, size_t info_len, nmo_err *err);

/* Atomic directories: make a hidden temporary sibling of final (removing stale ones
 * whose writer is dead), and later rename it onto final. Without force an existing
 * final is an error (NMO_ERR_IO, "... exists (use --force to replace it)"); with force
 * the old directory is swapped out atomically (renameat2 RENAME_EXCHANGE) and removed.
 * A process killed in between leaves final untouched. */
nmo_status nmo_bundle_dir_begin(char *tmp, size_t n, const char *final_dir, nmo_err *err);
nmo_status nmo_bundle_dir_commit(const char *tmp, const char *final_dir, int force, nmo_err *err);
/* Remove a directory tree (temporaries). */
void nmo_bundle_dir_remove(const char *dir);

/* ISO 8601 UTC now (SOURCE_DATE_EPOCH when set, for reproducible regeneration). */
void nmo_bundle_timestamp(char *buf, size_t n);

/* ---- template sweeps ---------------------------------------------------------------- */

/* NMO_DIAG_SKIP: a case numoracle cannot judge (an unsupported operation): the message is
 * "<test>: <why>", neither an error nor a warning (verify's summary counts it). */
typedef enum { NMO_DIAG_WARN = 1, NMO_DIAG_ERROR = 2, NMO_DIAG_SKIP = 3 } nmo_diag_level;
typedef void (*nmo_diag_fn)(void *ctx, nmo_diag_level level, const char *msg);

typedef struct {
    char id[128];
    struct cJSON *graph;          /* expanded graph (NULL when the case is invalid) */
    int golden_null;              /* graph-only case */
    char golden_dir[NMO_BPATH];   /* resolved tensor directory */
    const struct cJSON *metadata; /* cases[].metadata (borrowed; may be NULL) */
    char error[512];              /* non-empty: the case fails with this message */
} nmo_sweep_case;

typedef struct {
    char dir[NMO_BPATH];
    char path[NMO_BPATH];         /* .../sweep.json */
    char operation[128];          /* parent folder name */
    char topology[128];           /* folder name */
    struct cJSON *tmpl, *doc;
    int n_cases;
    nmo_sweep_case *cases;
} nmo_sweep;

/* Load dir/graph.template.json and dir/sweep.json, validate every RFC rule, expand each
 * case. Sweep-level problems (missing template, bad JSON, unsupported version, duplicate
 * ids) return an error; case-level problems land in cases[i].error; unused values are
 * warnings through diag. */
nmo_status nmo_sweep_load(nmo_sweep *s, const char *dir, nmo_diag_fn diag, void *ctx,
                          nmo_err *err);
void nmo_sweep_free(nmo_sweep *s);
/* Load one expanded case as a bundle (tensors from its golden directory). */
nmo_status nmo_sweep_case_load(nmo_bundle *b, const nmo_sweep *s, int i, unsigned flags,
                               nmo_err *err);

/* ---- discovery and test names ------------------------------------------------------- */

#define NMO_TIER_COUNT 4
/* "quick", "standard", "comprehensive", "full" */
const char *nmo_tier_name(int tier);
int nmo_tier_parse(const char *name); /* -1 when unknown */

typedef struct {
    int tier;
    char name[320];              /* "Standard/RmsNormFwd_nchw_bfp16.typical" */
    char src[NMO_BPATH];         /* graph JSON, or sweep.json */
    nmo_bundle_kind kind;
    int sweep;                   /* index into nmo_disc.sweeps (sweep cases) */
    int idx;                     /* case index within the sweep */
    char error[512];             /* discovery-time problem: the case fails with it */
} nmo_disc_case;

typedef struct {
    int n, cap;
    nmo_disc_case *cases;
    int n_sweeps, sweeps_cap;
    nmo_sweep *sweeps;
    int n_dirs;                  /* tier folders scanned */
} nmo_disc;

/* Discovery flags. */
#define NMO_DISC_CONTINUE 1u     /* report collisions through diag and go on (verify) */

/* Recursively discover the cases of tiers 0..max_tier under root (the tier cascade).
 * Unknown top-level folders and stray non-graph .json files are warnings; an empty or
 * missing tier is zero cases; hidden entries (temporaries) are skipped. A test-name
 * collision or a duplicate sweep case id is an error naming both sources (NMO_ERR_DATA)
 * unless NMO_DISC_CONTINUE. Cases are in tier order, then path order. */
nmo_status nmo_discover(nmo_disc *d, const char *root, int max_tier, unsigned flags,
                        nmo_diag_fn diag, void *ctx, nmo_err *err);
void nmo_disc_free(nmo_disc *d);
/* Load discovered case i. */
nmo_status nmo_disc_load(nmo_bundle *b, const nmo_disc *d, int i, unsigned flags, nmo_err *err);

/* Keep [A-Za-z0-9_], replace anything else by '_' (gtest identifier rule). */
void nmo_sanitize(char *s);

/* gtest-style filter: "POS1:POS2-NEG1:NEG2", globs with * and ?. */
int nmo_filter_match(const char *filter, const char *name);

/* ---- the pre-commit verifier -------------------------------------------------------- */

typedef struct {
    int64_t case_warn_bytes;     /* default 2 MB */
    int64_t total_fail_bytes;    /* default 800 MB */
} nmo_verify_opts;

typedef struct {
    int bundles, sweeps, cases;
    int errors, warnings;
    int64_t payload;             /* bytes of tensor files */
    int64_t largest;
    char largest_name[320];
    int skipped;                 /* cases of an unsupported operation (NMO_DIAG_SKIP) */
} nmo_verify_summary;

/* The RFC's nine checks over a golden data root (findings through diag). */
void nmo_verify_tree(nmo_verify_summary *sum, const char *root, const nmo_verify_opts *opts,
                     nmo_diag_fn diag, void *ctx);

/* ---- the tolerance chain (tolerance.c) ---------------------------------------------- */

typedef enum { NMO_TOL_OVERRIDE = 1, NMO_TOL_BUNDLE = 2, NMO_TOL_DEFAULT = 3 } nmo_tol_level;

typedef struct {
    double atol, rtol;
    nmo_tol_level level;
    char source[320];            /* where the values came from */
} nmo_tol;

const char *nmo_tol_level_name(nmo_tol_level l); /* "override", "bundle", "default" */

/* Level 3: the per-operator, per-dtype table (each entry names its source). */
void nmo_tol_default(nmo_tol *t, const nmo_op *op, nmo_fmt out);
/* Level 2: meta's "tolerance" block ({"absolute": a, "relative": r, ...}). *found = 0
 * when there is none; a malformed block is NMO_ERR_DATA naming meta_path. */
nmo_status nmo_tol_from_meta(nmo_tol *t, int *found, const struct cJSON *meta,
                             const char *meta_path, nmo_err *err);
/* The chain: override (may be NULL) -> bundle meta -> default. */
nmo_status nmo_tol_resolve(nmo_tol *t, const nmo_tol *override, const nmo_bundle *b,
                           nmo_err *err);

typedef struct {
    int64_t n, n_mismatch;
    double max_abs, max_rel;     /* max_rel over elements with expected != 0 */
    int64_t worst;               /* element with the largest excess over the tolerance */
    double worst_expected, worst_actual;
    nmo_verdict verdict;         /* PASS or FAIL */
} nmo_tol_result;

/* |actual - expected| <= atol + rtol |expected| per element (NaN never passes; -0 == +0). */
void nmo_tol_compare(nmo_tol_result *r, const nmo_tol *t, const nmo_tensor *expected,
                     const nmo_tensor *actual);

/* The q-quantile (nearest rank) of v[0..n-1]; sorts v. NaN when n == 0. */
double nmo_quantile(double *v, int64_t n, double q);

#ifdef __cplusplus
}
#endif
#endif
