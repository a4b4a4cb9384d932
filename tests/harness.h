/* numoracle tests: run one (operator, candidate, dtype, family, seed, shape) case. */
#ifndef NMO_TEST_HARNESS_H
#define NMO_TEST_HARNESS_H

#include "numoracle/numoracle.h"

typedef struct {
    int nshape;
    int64_t shape[NMO_MAX_DIMS];
} nmo_test_shape;

/* Two shapes per operator, one with an odd reduction width. */
int nmo_test_shapes(const nmo_op *op, nmo_test_shape *out, int large);

/* 1 when name is one of the comma-separated names of list. */
int nmo_test_name_in_list(const char *name, const char *list);

/* The one operator filter of every registry-driven test: NMO_OPS=a,b,c runs those
 * operators only (unset or empty: all; NMO_ENGINES_OP, test_engines' former spelling, is
 * read when NMO_OPS is unset). nmo_test_filtered: a filter is set, so assertions about
 * the whole registry (counts over every operator) are skipped. */
int nmo_test_op_selected(const char *name);
int nmo_test_filtered(void);

/* Build the case for (op, dtype, family, seed, shape), run candidate `cand`, check it.
 * Returns NMO_OK and fills rep (caller frees with nmo_report_free). */
nmo_status nmo_test_run(nmo_report *rep, const nmo_op *op, const nmo_cand *cand, nmo_fmt dtype,
                        int family, uint64_t seed, const nmo_test_shape *sh,
                        const nmo_check_opts *opts, nmo_err *err);

/* nmo_test_run_cand_plan with the inputs in `absent` (nmo_case.absent) not given to the
 * reference: the candidate still reads their derived values, the reference recomputes
 * them. */
nmo_status nmo_test_run_absent(nmo_report *rep, const nmo_op *op, const nmo_cand *cand, nmo_fmt dtype,
                               int family, uint64_t seed, const nmo_test_shape *sh,
                               const nmo_check_opts *opts, uint32_t absent, nmo_err *err);
/* As nmo_test_run, under the plan that candidate `cand` declares for dtype
 * (nmo_cand_plan: the default plan when cand->plan is NULL). */
nmo_status nmo_test_run_cand_plan(nmo_report *rep, const nmo_op *op, const nmo_cand *cand,
                                  nmo_fmt dtype, int family, uint64_t seed,
                                  const nmo_test_shape *sh, const nmo_check_opts *opts,
                                  nmo_err *err);

/* As nmo_test_run_cand_plan, with the reduction geometry the candidate declares at that
 * shape on top (nmo_cand_geom_plan; unchanged when it declares none). */
nmo_status nmo_test_run_geom(nmo_report *rep, const nmo_op *op, const nmo_cand *cand, nmo_fmt dtype,
                             int family, uint64_t seed, const nmo_test_shape *sh,
                             const nmo_check_opts *opts, nmo_err *err);

/* The same case judged twice (fast+escalation and certified only); returns the number of
 * elements whose verdict, reachable set or enclosure differ. */
int64_t nmo_test_engines_differ(const nmo_op *op, const nmo_cand *cand, const nmo_plan *plan,
                                int family, uint64_t seed, const nmo_test_shape *sh,
                                int64_t *n_escalated, nmo_err *err);
/* The same with the inputs in `absent` recomputed by the reference. */
int64_t nmo_test_engines_differ_absent(const nmo_op *op, const nmo_cand *cand, const nmo_plan *plan,
                                       int family, uint64_t seed, const nmo_test_shape *sh,
                                       uint32_t absent, int64_t *n_escalated, nmo_err *err);

extern const nmo_fmt nmo_test_dtypes[3];

/* fp32, bf16, fp16, then the fp8 formats the operator lists in its dtypes (matmul,
 * sdpa): at most 5. Returns the count. */
int nmo_test_op_dtypes(const nmo_op *op, nmo_fmt *out);

#endif
