/* Escalation of single elements of units that share a statistic (op->eval_cert_unc_stat,
 * rms_norm's rows: issue 22). The checker recomputes only the elements the fast engine
 * flagged, from the statistic computed once by the certified engine (and each element
 * first by the fast formula on that statistic). This must give what the certified engine
 * gives for the whole unit, element for element (lo, hi, flags, mag):
 *  1. on every row of the test tensors, with the flags as the fast engine set them, and
 *     with extra elements flagged (every third one, and the whole row: what a flagged
 *     statistic does), with and without the fast context, under the default, ftz,
 *     fp64-compute and eager (inter != compute) plans and offset 0 and 1;
 *  2. through nmo_check on real undecided elements: the fp32 rows of a 4096x4096 gaussian
 *     tensor that hold an element neither engine's fast path decides (checked as units:
 *     escalation and certified-only reports equal, element for element, and fewer
 *     elements escalated than the rows hold). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/enc_cert.h"
#include "engine/enc_fast.h"
#include "nmo_internal.h"
#include "numoracle/numoracle.h"
#include "numoracle/cand.h"
#include "harness.h"

static int same_d(double a, double b) { return a == b || (a != a && b != b); }

static int fenc_differ(const nmo_fenc *a, const nmo_fenc *b)
{
    return !same_d(a->lo, b->lo) || !same_d(a->hi, b->hi) || a->flags != b->flags || !same_d(a->mag, b->mag);
}

/* Every row of case c, under the three flag patterns: elements differing from eval_cert. */
static int64_t rows_differ(const nmo_case *c, int64_t *n_flagged)
{
    const nmo_op *op = c->op;
    nmo_err err = {{0}};
    nmo_fctx fc;
    nmo_cctx cc;
    cr_assert_eq(nmo_fctx_init(&fc, &c->plan, &err), NMO_OK, "%s", err.msg);
    cr_assert_eq(nmo_cctx_init(&cc, &c->plan, &err), NMO_OK, "%s", err.msg);
    int64_t rows = op->units(c), diff = 0;
    for (int64_t u = 0; u < rows; u++) {
        int64_t b, n, st;
        op->unit_span(c, u, 0, &b, &n, &st);
        nmo_fenc *f = malloc((size_t)n * sizeof *f), *e = malloc((size_t)n * sizeof *e),
                 *ce = malloc((size_t)n * sizeof *ce);
        cr_assert(f && e && ce);
        nmo_fenc *of[1] = {f}, *oe[1] = {e}, *oc[1] = {ce};
        op->eval_fast(&fc, c, u, of);
        op->eval_cert(&cc, c, u, oc);
        for (int pat = 0; pat < 3; pat++)
            for (int withfc = 0; withfc < 2; withfc++) {
                memcpy(e, f, (size_t)n * sizeof *e);
                for (int64_t j = 0; j < n; j++) {
                    if (pat == 1 && (j * 7 + u) % 3 == 0) e[j].flags |= NMO_EF_UNC;
                    if (pat == 2) e[j].flags |= NMO_EF_UNC;
                    *n_flagged += (e[j].flags & NMO_EF_UNC) != 0;
                }
                op->eval_cert_unc_stat(withfc ? &fc : NULL, &cc, c, u, oe);
                for (int64_t j = 0; j < n; j++) diff += fenc_differ(&e[j], &ce[j]);
            }
        free(f), free(e), free(ce);
    }
    nmo_fctx_clear(&fc);
    nmo_cctx_clear(&cc);
    return diff;
}

Test(escalate_elems, flagged_elements_equal_certified_rows, .timeout = 900)
{
    long cases = 0;
    int64_t flagged = 0;
    for (int oi = 0; oi < nmo_op_count(); oi++) {
        const nmo_op *op = nmo_op_at(oi);
        if (!op->eval_cert_unc_stat || !nmo_test_op_selected(op->name)) continue;
        nmo_test_shape sh[4];
        int nsh = nmo_test_shapes(op, sh, 0);
        for (int d = 0; d < 3; d++)
            for (int pl = 0; pl < 4; pl++)
                for (int off = 0; off < 2; off++)
                    for (int f = 0; f < NMO_FAM_COUNT; f++)
                        for (int h = 0; h < nsh; h++) {
                            nmo_fmt dt = nmo_test_dtypes[d];
                            nmo_plan p;
                            nmo_plan_default(&p, dt);
                            if (pl == 1) p.ftz = 1;
                            if (pl == 2) p.compute = p.acc = p.inter = NMO_FP64;
                            if (pl == 3) {
                                if (dt == NMO_FP32) continue;
                                p.inter = dt; /* eager: x r stored in the input dtype */
                            }
                            double val[NMO_MAX_PARAMS] = {0};
                            int set[NMO_MAX_PARAMS] = {0};
                            if (op->n_param > 1) val[1] = off, set[1] = 1;
                            else if (off) continue;
                            nmo_case c;
                            nmo_err err = {{0}};
                            nmo_status s = nmo_case_init_params(&c, op, &p, sh[h].nshape, sh[h].shape, val, set, &err);
                            if (s != NMO_OK) continue; /* a plan the op refuses */
                            nmo_case_fill(&c, f, 11 + (uint64_t)h);
                            int64_t diff = rows_differ(&c, &flagged);
                            cr_expect_eq(diff, 0, "%s %s plan#%d offset=%d %s shape#%d: %lld elements differ", op->name,
                                         nmo_fmt_name(dt), pl, off, nmo_family_name(f), h, (long long)diff);
                            nmo_case_free(&c);
                            cases++;
                        }
    }
    printf("escalate_elems: %ld cases, %lld flagged elements recomputed, all equal to the certified rows\n", cases,
           (long long)flagged);
    cr_expect_gt(cases, 100);
}

/* 2: real undecided elements (fp32 rms_norm, gaussian, seed 1: 4096x4096 holds two such
 * rows, found here by the fast engine) through the checker. */
Test(escalate_elems, undecided_fp32_rows_through_the_checker, .timeout = 900)
{
    if (!nmo_test_op_selected("rms_norm")) return;
    const nmo_op *op = nmo_op_find("rms_norm");
    const nmo_cand *cd = nmo_cand_find("rms_norm", NULL);
    nmo_err err = {{0}};
    nmo_plan p;
    cr_assert_eq(nmo_cand_plan(&p, cd, NMO_FP32, &err), NMO_OK, "%s", err.msg);
    int64_t shape[2] = {4096, 4096};
    nmo_case c;
    cr_assert_eq(nmo_case_init(&c, op, &p, 2, shape, &err), NMO_OK, "%s", err.msg);
    nmo_case_fill(&c, NMO_FAM_GAUSSIAN, 1);
    nmo_tensor out = c.out[0];
    out.data = NULL, out.own = 0;
    cr_assert_eq(nmo_tensor_alloc(&out, &err), NMO_OK);
    nmo_cand_args ca = {c.in, c.n_in, &out, 1, c.param, op->n_param, &c.plan};
    cr_assert_eq(cd->run(&ca, &err), NMO_OK, "%s", err.msg);
    /* the rows the fast engine leaves undecided */
    nmo_fctx fc;
    cr_assert_eq(nmo_fctx_init(&fc, &c.plan, &err), NMO_OK);
    int64_t list[64], nl = 0, unc = 0;
    nmo_fenc *row = malloc(4096 * sizeof *row);
    nmo_fenc *o1[1] = {row};
    for (int64_t u = 0; u < 4096 && nl < 64; u++) {
        op->eval_fast(&fc, &c, u, o1);
        int64_t k = 0;
        for (int64_t j = 0; j < 4096; j++) k += (row[j].flags & NMO_EF_UNC) != 0;
        if (k) list[nl++] = u, unc += k;
    }
    free(row);
    nmo_fctx_clear(&fc);
    cr_assert_gt(nl, 0, "no undecided row: the test lost its subject");
    nmo_report a, b;
    nmo_check_opts o = {.mode = NMO_MODE_ESCALATE, .keep_verdicts = 1, .keep_bounds = 1, .keep_enc = 1};
    cr_assert_eq(nmo__check_units(&a, &c, &out, &o, list, nl, &err), NMO_OK, "%s", err.msg);
    o.mode = NMO_MODE_CERT;
    cr_assert_eq(nmo__check_units(&b, &c, &out, &o, list, nl, &err), NMO_OK, "%s", err.msg);
    int64_t diff = 0;
    for (int64_t i = 0; i < nl; i++)
        for (int64_t j = 0; j < 4096; j++) {
            int64_t x = list[i] * 4096 + j;
            diff += a.verdicts[0][x] != b.verdicts[0][x] || !same_d(a.rlo[0][x], b.rlo[0][x]) ||
                    !same_d(a.rhi[0][x], b.rhi[0][x]) || a.bflags[0][x] != b.bflags[0][x] ||
                    fenc_differ(&a.enc[0][x], &b.enc[0][x]);
        }
    cr_expect_eq(diff, 0, "%lld elements differ", (long long)diff);
    cr_expect(a.n_pass == b.n_pass && a.n_fail == b.n_fail && a.n_inconc == b.n_inconc && a.verdict == b.verdict);
    cr_expect_eq(a.n_escalated, unc, "escalated %lld, flagged %lld", (long long)a.n_escalated, (long long)unc);
    cr_expect_lt(a.n_escalated, nl * 4096);
    printf("escalate_elems: %lld undecided rows, %lld elements escalated (of %lld), reports equal\n", (long long)nl,
           (long long)a.n_escalated, (long long)(nl * 4096));
    nmo_report_free(&a), nmo_report_free(&b);
    nmo_tensor_free(&out);
    nmo_case_free(&c);
}
