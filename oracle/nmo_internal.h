/* numoracle internal helpers shared inside oracle/ (not installed). */
#ifndef NMO_INTERNAL_H
#define NMO_INTERNAL_H

#include <cjson/cJSON.h>
#include "numoracle/plan.h"

/* JSON form of a plan (every field, names as in the text form). */
cJSON *nmo_plan_to_json(const nmo_plan *p);
cJSON *nmo_preset_json(void); /* the preset table (oracle/preset.c) */


/* ---- bundles (bundle.c, sweep.c, discover.c): shared helpers -------------------- */
#include <stdint.h>
#include <stdio.h>
#include <stddef.h>
#include "numoracle/bundle.h"

/* Whole file as a NUL-terminated string (caller frees); *len may be NULL. */
char *nmo__read_text(const char *path, size_t *len, nmo_err *err);
/* Parse JSON text; errors name path and the line/column of the problem. */
cJSON *nmo__parse_json(const char *text, const char *path, nmo_err *err);
/* cJSON_Print (formatted) or _PrintUnformatted, every byte that is not part of valid
 * UTF-8 replaced by U+FFFD (a non-UTF-8 file name keeps the report valid). free() it. */
char *nmo__json_print(const cJSON *j, int formatted);
/* Length of the well-formed UTF-8 sequence at s (n bytes left), 0 when there is none. */
size_t nmo__utf8_len(const unsigned char *s, size_t n);
/* NMO_ERR_PARSE naming the key and path when an object of j repeats a key. */
nmo_status nmo__json_check_keys(const cJSON *j, const char *path, nmo_err *err);
cJSON *nmo__read_json(const char *path, nmo_err *err);
/* An integral JSON number in [lo, hi]. */
int nmo__json_int(const cJSON *v, int64_t lo, int64_t hi, int64_t *out);
/* out = a "/" b (b alone when absolute or a is empty). */
void nmo__join(char *out, size_t n, const char *a, const char *b);
int nmo__exists(const char *path);
int nmo__is_dir(const char *path);
/* 1 when path (which must exist) resolves inside root (symlinks followed). */
int nmo__inside(const char *root, const char *path);
/* "[0, 17]" for logical index idx of dims. */
void nmo__fmt_index(char *buf, size_t n, int ndims, const int64_t *dims, int64_t idx);
/* "[3, 1025]" */
void nmo__fmt_dims(char *buf, size_t n, int ndims, const int64_t *dims);
/* Write a whole file (plain write + fsync; used inside temporary directories). */
nmo_status nmo__write_file(const char *path, const void *data, size_t len, nmo_err *err);
/* Atomic replace of one file (temporary + rename). */
nmo_status nmo__write_file_atomic(const char *path, const void *data, size_t len, nmo_err *err);

/* safe_io.c: a descriptor / stream on a regular file only (FIFOs and devices refused
 * without blocking); -1 / NULL with err set. */
int nmo__open_regular(const char *path, nmo_err *err);
FILE *nmo__fopen_regular(const char *path, nmo_err *err);
/* 1 for "-" (standard output) and existing non-regular, non-directory targets (devices,
 * FIFOs): written directly, never replaced by a renamed temporary. */
int nmo__out_is_direct(const char *path);
nmo_status nmo__write_direct(const char *path, const void *data, size_t len, nmo_err *err);
/* rel with "." components, repeated and trailing slashes removed ("" for the root). */
void nmo__path_norm(char *out, size_t n, const char *rel);
/* 1 when root/rel may lead outside root: absolute, a ".." component, or an existing
 * component that is a symlink resolving outside root or not resolving at all. */
int nmo__path_escapes(const char *root, const char *rel);
/* 1 when dir holds a subdirectory (its name in name): not a bundle's own directory, which
 * holds files only, so never replaced whole. */
int nmo__dir_holds_dir(const char *dir, char *name, size_t n);

/* Graph parse with an operator hint (meta "numoracle.op" or "operation"). */
nmo_status nmo__graph_parse(nmo_graph *g, const cJSON *j, const char *src, const char *hint,
                            nmo_err *err);
/* Load a bundle from a parsed graph: tensors in dir/base.tensor{uid}*.bin, meta in
 * meta_path ("" = none), files must stay inside `root`. Takes ownership of nothing. */
nmo_status nmo__bundle_load_core(nmo_bundle *b, const cJSON *graph, const char *src,
                                 const char *dir, const char *base, const char *meta_path,
                                 const char *root, const cJSON *case_meta, unsigned flags,
                                 nmo_err *err);
/* Light look at a graph JSON for test names: operation, layout and dtype tokens (each
 * "unknown" when it cannot be derived). */
void nmo__graph_name_tokens(const cJSON *j, char *op, size_t nop, char *layout, size_t nl,
                            char *dtype, size_t nd);
/* Vectorized kernels (bundle_kern.c, built with -O3) over bit patterns of `bits`-wide
 * formats: ok[i]/w[i] for stored-bounds judging, and a screen for unusual bound sets. */
/* w: widths in ulps, an array of the format's storage type (uint8_t/16/32/64). Returns
 * the count of ok elements; *wmax their largest width (-1: none). */
/* check.c: nmo_check over a list of units (NULL: all), and the report's order of
 * elements (1 when a is worse than b: FAIL by distance, then INCONCLUSIVE, then the
 * widest; ties to the first). */
nmo_status nmo__check_units(nmo_report *rep, const nmo_case *c, const nmo_tensor *cand,
                            const nmo_check_opts *opts, const int64_t *ulist, int64_t nlist,
                            nmo_err *err);
int nmo__elem_worse(const nmo_elem_info *a, const nmo_elem_info *b);
/* check.c: the checker's thread count (NMO_THREADS, else the online CPUs, capped) */
int nmo__threads(void);
/* check.c: elements idx[0..m) of output k judged from the caller's enclosures e[] and
 * candidate values v[] (NULL: none) and counted into rep, as nmo_check counts them. */
void nmo__judge_elems(nmo_report *rep, const nmo_case *c, int k, const nmo_fenc *e, const int64_t *idx,
                      int64_t m, const double *v, const nmo_check_opts *opts);
int64_t nmo__judge_pass(int bits, const void *lo, const void *hi, const void *cv, const uint8_t *fl, int64_t m,
                        uint64_t nan_above, int fnuz, uint8_t *ok, void *w, int64_t *wmax);
int nmo__bounds_bad(int bits, const void *lo, const void *hi, const void *e, const uint8_t *fl, int64_t m,
                    uint64_t nan_above, int fnuz);

/* Encode an end of R into the output format f as bundles and `numoracle bounds` store it:
 * finite ends are values of f; an unbounded end is +-inf, saturated to +-max in formats
 * without infinity (the element's flags say NONFINITE); a NaN end is the canonical NaN. */
uint64_t nmo__bound_bits(nmo_fmt f, double v);

/* The default tolerance table's row for op (tolerance.c): its family name, and in *tol
 * hipDNN's atol = rtol for out (NAN for formats hipDNN gives no figure: tf32, fp8). */
const char *nmo__tol_hipdnn(const nmo_op *op, nmo_fmt out, double *tol);

/* An operator by its name, Operation ("RmsNormFwd", or the older spelling numoracle used
 * before RFC 0011's, "BatchnormInferenceFwd") or node type ("RmsNormFwdAttributes"). */
const nmo_op *nmo__op_lookup(const char *s);
/* Does this parsed JSON look like a graph (an object with "tensors" or "nodes")? */
int nmo__is_graph_json(const cJSON *j);

/* The verdict of candidate v against a reachable set [rlo, rhi] with the element's
 * NMO_BF_* flags (check.h), as the checker decides it: one copy of the rule for the
 * checker (judge_core) and the bundle judge, which has only R and the flags. */
static inline nmo_verdict nmo__verdict_in_r(double v, double rlo, double rhi, uint32_t bf)
{
    if (bf & NMO_BF_MUST_NAN) return v != v ? NMO_PASS : NMO_FAIL;
    int inside = v != v ? (bf & NMO_BF_NAN_OK) != 0 : (rlo <= v && v <= rhi);
    if (!inside) return NMO_FAIL;
    if ((bf & (NMO_BF_NONFINITE | NMO_BF_WIDE)) || v != v) return NMO_INCONCLUSIVE;
    return NMO_PASS;
}

/* A binding result (bind.c) with status, message and JSON (taken over; may be NULL) and
 * verdict: for bind_judge.c, which builds its own report. NULL when out of memory. */
struct nmo_bind_result;
struct nmo_bind_result *nmo__bind_result_make(int status, const char *msg, char *json, int verdict);

#endif
