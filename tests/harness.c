/* numoracle tests: shared case runner. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

const nmo_fmt nmo_test_dtypes[3] = {NMO_FP32, NMO_BF16, NMO_FP16};

int nmo_test_shapes(const nmo_op *op, nmo_test_shape *out, int large)
{
    const char *spec = large && op->test_shapes_large ? op->test_shapes_large : op->test_shapes;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", spec ? spec : "3x1025;8x64");
    int n = 0;
    for (char *tok = strtok(buf, ";"); tok && n < 4; tok = strtok(NULL, ";")) {
        nmo_err err;
        if (nmo_shape_parse(&out[n].nshape, out[n].shape, tok, &err) == NMO_OK) n++;
    }
    return n;
}

int nmo_test_op_dtypes(const nmo_op *op, nmo_fmt *out)
{
    int n = 0;
    for (int d = 0; d < 3; d++) out[n++] = nmo_test_dtypes[d];
    static const nmo_fmt fp8[2] = {NMO_FP8_E4M3, NMO_FP8_E5M2};
    for (int d = 0; d < 2; d++)
        if (nmo_op_has_dtype(op, fp8[d])) out[n++] = fp8[d];
    return n;
}

int nmo_test_name_in_list(const char *name, const char *list)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0) return 1;
        if (!e) break;
        p = e + 1;
    }
    return 0;
}

static const char *op_filter(void)
{
    const char *f = getenv("NMO_OPS");
    if (!f || !*f) f = getenv("NMO_ENGINES_OP"); /* test_engines' former spelling */
    return f && *f ? f : NULL;
}

int nmo_test_filtered(void) { return op_filter() != NULL; }

int nmo_test_op_selected(const char *name)
{
    const char *f = op_filter();
    return !f || nmo_test_name_in_list(name, f);
}

static nmo_status run_cand(nmo_tensor *out, const nmo_case *c, const nmo_cand *cand, nmo_err *err)
{
    NMO_RETURN_IF_ERR(nmo_case_alloc_outputs(c, out, 0, err));
    nmo_cand_args a = {c->in, c->n_in, out, c->n_out, c->param, c->op->n_param, &c->plan};
    return cand->run(&a, err);
}

/* The case (op, dtype, family, seed, shape) under the default plan of dtype, with the
 * plan candidate plan_of states on top (NULL: none), the inputs in `absent` recomputed by
 * the reference. */
static nmo_status run_core_g(nmo_report *rep, const nmo_op *op, const nmo_cand *cand, nmo_fmt dtype,
                             const nmo_cand *plan_of, int family, uint64_t seed,
                             const nmo_test_shape *sh, const nmo_check_opts *opts, uint32_t absent,
                             int geom, nmo_err *err)
{
    nmo_plan p;
    nmo_status s0 = geom ? nmo_cand_geom_plan(&p, plan_of, dtype, sh->nshape, sh->shape, NULL, err)
                         : nmo_cand_plan(&p, plan_of, dtype, err);
    if (s0 != NMO_OK) return s0;
    /* fp8 inputs: real fp8 kernels (cuBLASLt fp8 GEMM, FlashAttention-3 fp8) write bf16 */
    if (dtype == NMO_FP8_E4M3 || dtype == NMO_FP8_E5M2) p.out = NMO_BF16;
    nmo_case c;
    nmo_status s = nmo_case_init(&c, op, &p, sh->nshape, sh->shape, err);
    if (s != NMO_OK) return s;
    nmo_case_fill(&c, family, seed);
    nmo_tensor out[NMO_MAX_TENSORS];
    memset(out, 0, sizeof out);
    s = run_cand(out, &c, cand, err);
    c.absent = absent;
    if (s == NMO_OK) s = nmo_check(rep, &c, out, opts, err);
    for (int k = 0; k < c.n_out; k++) nmo_tensor_free(&out[k]);
    nmo_case_free(&c);
    return s;
}

static nmo_status run_core(nmo_report *rep, const nmo_op *op, const nmo_cand *cand, nmo_fmt dtype,
                           const nmo_cand *plan_of, int family, uint64_t seed,
                           const nmo_test_shape *sh, const nmo_check_opts *opts, uint32_t absent,
                           nmo_err *err)
{
    return run_core_g(rep, op, cand, dtype, plan_of, family, seed, sh, opts, absent, 0, err);
}

nmo_status nmo_test_run_geom(nmo_report *rep, const nmo_op *op, const nmo_cand *cand, nmo_fmt dtype,
                             int family, uint64_t seed, const nmo_test_shape *sh,
                             const nmo_check_opts *opts, nmo_err *err)
{
    return run_core_g(rep, op, cand, dtype, cand, family, seed, sh, opts, 0, 1, err);
}

nmo_status nmo_test_run_absent(nmo_report *rep, const nmo_op *op, const nmo_cand *cand, nmo_fmt dtype,
                               int family, uint64_t seed, const nmo_test_shape *sh,
                               const nmo_check_opts *opts, uint32_t absent, nmo_err *err)
{
    return run_core(rep, op, cand, dtype, cand, family, seed, sh, opts, absent, err);
}

nmo_status nmo_test_run(nmo_report *rep, const nmo_op *op, const nmo_cand *cand, nmo_fmt dtype,
                        int family, uint64_t seed, const nmo_test_shape *sh,
                        const nmo_check_opts *opts, nmo_err *err)
{
    return run_core(rep, op, cand, dtype, NULL, family, seed, sh, opts, 0, err);
}

nmo_status nmo_test_run_cand_plan(nmo_report *rep, const nmo_op *op, const nmo_cand *cand,
                                  nmo_fmt dtype, int family, uint64_t seed,
                                  const nmo_test_shape *sh, const nmo_check_opts *opts,
                                  nmo_err *err)
{
    return run_core(rep, op, cand, dtype, cand, family, seed, sh, opts, 0, err);
}

static int same_d(double a, double b)
{
    return (a != a && b != b) || a == b;
}

int64_t nmo_test_engines_differ(const nmo_op *op, const nmo_cand *cand, const nmo_plan *plan,
                                int family, uint64_t seed, const nmo_test_shape *sh,
                                int64_t *n_escalated, nmo_err *err)
{
    return nmo_test_engines_differ_absent(op, cand, plan, family, seed, sh, 0, n_escalated, err);
}

int64_t nmo_test_engines_differ_absent(const nmo_op *op, const nmo_cand *cand, const nmo_plan *plan,
                                       int family, uint64_t seed, const nmo_test_shape *sh,
                                       uint32_t absent, int64_t *n_escalated, nmo_err *err)
{
    nmo_case c;
    if (nmo_case_init(&c, op, plan, sh->nshape, sh->shape, err) != NMO_OK) return -1;
    nmo_case_fill(&c, family, seed);
    nmo_tensor out[NMO_MAX_TENSORS];
    memset(out, 0, sizeof out);
    int64_t diff = -1;
    nmo_report a, b;
    nmo_check_opts o = {.keep_verdicts = 1, .keep_bounds = 1, .keep_enc = 1};
    if (run_cand(out, &c, cand, err) != NMO_OK) goto done;
    c.absent = absent;
    o.mode = NMO_MODE_ESCALATE;
    if (nmo_check(&a, &c, out, &o, err) != NMO_OK) goto done;
    o.mode = NMO_MODE_CERT;
    if (nmo_check(&b, &c, out, &o, err) != NMO_OK) {
        nmo_report_free(&a);
        goto done;
    }
    diff = 0;
    for (int k = 0; k < c.n_out; k++) {
        int64_t n = nmo_tensor_numel(&c.out[k]);
        for (int64_t i = 0; i < n; i++) {
            int d = a.verdicts[k][i] != b.verdicts[k][i] || !same_d(a.rlo[k][i], b.rlo[k][i]) ||
                    !same_d(a.rhi[k][i], b.rhi[k][i]) || a.bflags[k][i] != b.bflags[k][i] ||
                    !same_d(a.enc[k][i].lo, b.enc[k][i].lo) ||
                    !same_d(a.enc[k][i].hi, b.enc[k][i].hi) ||
                    !same_d(a.enc[k][i].mag, b.enc[k][i].mag);
            diff += d;
        }
    }
    if (a.verdict != b.verdict) diff++;
    if (n_escalated) *n_escalated = a.n_escalated;
    nmo_report_free(&a);
    nmo_report_free(&b);
done:
    for (int k = 0; k < c.n_out; k++) nmo_tensor_free(&out[k]);
    nmo_case_free(&c);
    return diff;
}
