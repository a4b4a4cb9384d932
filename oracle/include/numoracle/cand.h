/* numoracle: CPU candidates — C emulations of GPU kernels, bit-faithful to what the
 * kernel computes (fp32 arithmetic with -ffp-contract=off, explicit fmaf where the
 * kernel contracts, the kernel's reduction order, the store rounding to the output
 * dtype). Correct variants must PASS under the operator's default plan; mutants are
 * realistic bugs that must FAIL on some input family. */
#ifndef NUMORACLE_CAND_H
#define NUMORACLE_CAND_H

#include "numoracle/tensor.h"
#include "numoracle/plan.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    const nmo_tensor *in;   /* inputs in the operator's order (see `numoracle ops`) */
    int n_in;
    nmo_tensor *out;        /* outputs: dims/dtype set and storage allocated by caller */
    int n_out;
    const double *param;    /* operator parameters in the operator's order */
    int n_param;
    const nmo_plan *plan;   /* the plan under test (in/out dtypes live here too) */
} nmo_cand_args;

typedef struct {
    const char *op;         /* operator name */
    const char *name;       /* candidate name, unique per operator */
    int correct;            /* 1: correct variant, 0: mutant */
    const char *desc;       /* one line */
    nmo_status (*run)(const nmo_cand_args *a, nmo_err *err);
    /* NULL, or the plan under which this candidate follows the contract although it is a
     * mutant of the default plan (an eager two-kernel form: "inter={dtype}"): text for
     * nmo_plan_parse applied over the dtype's default plan, "{dtype}" standing for the
     * storage dtype (nmo_cand_plan). The field is the only place this is said: the
     * generic tests read it (test_soundness runs the candidate under that plan,
     * test_detection as a mutant of the default one, test_ops_pointwise both and the
     * engine comparison under it); no test names such candidates. */
    const char *plan;
} nmo_cand;

int nmo_cand_count(void);
const nmo_cand *nmo_cand_at(int i);
/* name NULL or "" -> the operator's default correct variant (the first correct one). */
const nmo_cand *nmo_cand_find(const char *op, const char *name);
/* The plan candidate c follows for storage dtype dt: the default plan of dt, with
 * c->plan applied ({dtype} replaced by dt's name). NMO_ERR_PARSE for a bad plan text. */
nmo_status nmo_cand_plan(nmo_plan *p, const nmo_cand *c, nmo_fmt dt, nmo_err *err);

/* The reduction geometry candidate c declares (refs/cand/cand_geom.c): plan text with
 * shape tokens ({L/k}, {R}, {log2L}, {log2RL}), or NULL (sum=any: sequential, or not one
 * geometry). */
const char *nmo_cand_geom(const nmo_cand *c);
int nmo_cand_geom_count(void);
/* geom with its tokens replaced for a case of shape[0..ns) (L = the last dimension, R =
 * the product of the others), into buf. NMO_ERR_PARSE for an unknown token. */
nmo_status nmo_cand_geom_text(char *buf, size_t len, const char *geom, int ns, const int64_t *shape, nmo_err *err);
/* nmo_cand_plan, then the candidate's geometry at that shape (*declared = 0 and the plan
 * unchanged when it declares none). */
nmo_status nmo_cand_geom_plan(nmo_plan *p, const nmo_cand *c, nmo_fmt dt, int ns, const int64_t *shape,
                              int *declared, nmo_err *err);

#ifdef __cplusplus
}
#endif
#endif
