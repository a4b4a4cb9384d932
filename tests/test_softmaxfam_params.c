/* Softmax-family operators under non-default parameters (the registry-driven tests use
 * the defaults only): reductions, label smoothing, ignore_index, grad_output, log_target,
 * beta. Every correct variant must never FAIL over every family x fp32/bf16/fp16 x seeds
 * x both test shapes under every parameter set; every mutant must FAIL somewhere; the fast
 * engine plus escalation must equal the certified engine on a sample. Prints, per
 * parameter set, the runs, INCONCLUSIVE count and the mutants caught (a mutant may be
 * equivalent under some parameters: mean_all_rows under reduction=sum, the mixture
 * mutants of jsd at beta = 0 or 1; each must FAIL under one set at least). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

typedef struct {
    const char *op;
    const char *params; /* "name=value name=value" */
} pset;

static const pset SETS[] = {
    {"cross_entropy", "reduction=0"},
    {"cross_entropy", "reduction=2"},
    {"cross_entropy", "reduction=0 label_smoothing=0.1"},
    {"cross_entropy", "reduction=1 label_smoothing=0.1"},
    {"cross_entropy", "reduction=2 label_smoothing=0.25 ignore_index=3"},
    {"cross_entropy_bwd", "reduction=0"},
    {"cross_entropy_bwd", "reduction=2 grad_output=0.37"},
    {"cross_entropy_bwd", "reduction=1 label_smoothing=0.1"},
    {"cross_entropy_bwd", "reduction=1 label_smoothing=0.1 grad_output=-2.5"},
    {"cross_entropy_bwd", "reduction=0 label_smoothing=0.25 ignore_index=3 grad_output=3"},
    {"kl_div", "reduction=0"},
    {"kl_div", "reduction=1"},
    {"kl_div", "reduction=2"},
    {"kl_div", "reduction=0 log_target=1"},
    {"kl_div", "reduction=3 log_target=1"},
    {"jsd", "beta=0"},
    {"jsd", "beta=1"},
    {"jsd", "beta=0.1"},
    {"jsd", "beta=0.9"},
};
#define NSETS ((int)(sizeof SETS / sizeof SETS[0]))

static void parse_params(const nmo_op *op, const char *text, double *val, int *set)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", text);
    for (int k = 0; k < NMO_MAX_PARAMS; k++) set[k] = 0;
    for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
        char *eq = strchr(tok, '=');
        cr_assert_not_null(eq, "bad param text %s", text);
        *eq = 0;
        int k = nmo_op_param_index(op, tok);
        cr_assert_geq(k, 0, "%s: no param %s", op->name, tok);
        val[k] = atof(eq + 1);
        set[k] = 1;
    }
}

static nmo_status run_case(nmo_report *rep, const nmo_op *op, const nmo_cand *cd, const nmo_plan *p,
                           const double *val, const int *set, int fam, uint64_t seed,
                           const nmo_test_shape *sh, const nmo_check_opts *o, nmo_err *err)
{
    nmo_case c;
    nmo_status s = nmo_case_init_params(&c, op, p, sh->nshape, sh->shape, val, set, err);
    if (s != NMO_OK) return s;
    nmo_case_fill(&c, fam, seed);
    nmo_tensor out[NMO_MAX_TENSORS];
    memset(out, 0, sizeof out);
    if (s == NMO_OK) s = nmo_case_alloc_outputs(&c, out, 0, err);
    if (s == NMO_OK) {
        nmo_cand_args a = {c.in, c.n_in, out, c.n_out, c.param, op->n_param, &c.plan};
        s = cd->run(&a, err);
    }
    if (s == NMO_OK) s = nmo_check(rep, &c, out, o, err);
    for (int k = 0; k < c.n_out; k++) nmo_tensor_free(&out[k]);
    nmo_case_free(&c);
    return s;
}

Test(softmaxfam_params, correct_never_fail_mutants_caught, .timeout = 1200)
{
    long runs = 0, fails = 0, inconc = 0;
    static int ever[1024];
    memset(ever, 0, sizeof ever);
    for (int si = 0; si < NSETS; si++) {
        const nmo_op *op = nmo_op_find(SETS[si].op);
        cr_assert_not_null(op, "%s not registered", SETS[si].op);
        double val[NMO_MAX_PARAMS];
        int set[NMO_MAX_PARAMS];
        parse_params(op, SETS[si].params, val, set);
        nmo_test_shape sh[4];
        int nsh = nmo_test_shapes(op, sh, 0);
        long sr = 0, si_inc = 0;
        char caught[512] = "";
        for (int ci = 0; ci < nmo_cand_count(); ci++) {
            const nmo_cand *cd = nmo_cand_at(ci);
            if (strcmp(cd->op, op->name) != 0) continue;
            int hit = 0;
            for (int d = 0; d < 3; d++)
                for (int f = 0; f < NMO_FAM_COUNT; f++)
                    for (int s = 0; s < (cd->correct ? 2 : 1); s++)
                        for (int h = 0; h < nsh; h++) {
                            if (!cd->correct && hit) continue;
                            nmo_plan p;
                            nmo_plan_default(&p, nmo_test_dtypes[d]);
                            nmo_report rep;
                            nmo_err err = {{0}};
                            nmo_status st = run_case(&rep, op, cd, &p, val, set, f, (uint64_t)s + 1,
                                                     &sh[h], NULL, &err);
                            cr_assert_eq(st, NMO_OK, "%s/%s [%s]: %s", op->name, cd->name,
                                         SETS[si].params, err.msg);
                            if (cd->correct) {
                                runs++, sr++;
                                if (rep.verdict == NMO_INCONCLUSIVE) inconc++, si_inc++;
                                if (rep.verdict == NMO_FAIL) {
                                    fails++;
                                    cr_expect(0,
                                              "FALSE ALARM %s/%s [%s] dtype=%s family=%s seed=%d "
                                              "shape#%d: %lld fails, worst idx %lld cand %.9g "
                                              "R=[%.9g, %.9g]",
                                              op->name, cd->name, SETS[si].params,
                                              nmo_fmt_name(nmo_test_dtypes[d]), nmo_family_name(f),
                                              s + 1, h, (long long)rep.n_fail,
                                              (long long)rep.worst.index, rep.worst.cand,
                                              rep.worst.rlo, rep.worst.rhi);
                                }
                            } else {
                                hit |= rep.verdict == NMO_FAIL;
                            }
                            nmo_report_free(&rep);
                        }
            if (!cd->correct) {
                size_t l = strlen(caught);
                snprintf(caught + l, sizeof caught - l, " %s%s", cd->name + 4, hit ? "" : "(missed)");
                if (ci < 1024) ever[ci] |= hit;
            }
        }
        printf("%-18s %-52s %4ld runs %3ld inconclusive; mutants:%s\n", op->name, SETS[si].params, sr,
               si_inc, caught);
    }
    for (int ci = 0; ci < nmo_cand_count() && ci < 1024; ci++) {
        const nmo_cand *cd = nmo_cand_at(ci);
        int tested = 0;
        for (int si = 0; si < NSETS; si++) tested |= strcmp(SETS[si].op, cd->op) == 0;
        if (tested && !cd->correct)
            cr_expect(ever[ci], "%s/%s never FAILs under any parameter set", cd->op, cd->name);
    }
    printf("params: %ld runs of correct variants, %ld FAIL, %ld INCONCLUSIVE\n", runs, fails, inconc);
    cr_assert_eq(fails, 0);
}

/* Fast + escalation == certified, element for element, under the parameter sets (default
 * candidate, bf16 and fp32, every family, the small shape). */
Test(softmaxfam_params, engines_agree, .timeout = 1200)
{
    long cases = 0;
    for (int si = 0; si < NSETS; si++) {
        const nmo_op *op = nmo_op_find(SETS[si].op);
        double val[NMO_MAX_PARAMS];
        int set[NMO_MAX_PARAMS];
        parse_params(op, SETS[si].params, val, set);
        nmo_test_shape sh[4];
        nmo_test_shapes(op, sh, 0);
        nmo_test_shape s0 = sh[1]; /* the short-row shape keeps the certified engine quick */
        const nmo_cand *cd = nmo_cand_find(op->name, NULL);
        for (int d = 0; d < 2; d++)
            for (int f = 0; f < NMO_FAM_COUNT; f++) {
                nmo_plan p;
                nmo_plan_default(&p, d ? NMO_FP32 : NMO_BF16);
                nmo_report a, b;
                nmo_err err = {{0}};
                nmo_check_opts o = {.keep_verdicts = 1, .keep_bounds = 1, .keep_enc = 1};
                o.mode = NMO_MODE_ESCALATE;
                cr_assert_eq(run_case(&a, op, cd, &p, val, set, f, 5, &s0, &o, &err), NMO_OK, "%s", err.msg);
                o.mode = NMO_MODE_CERT;
                cr_assert_eq(run_case(&b, op, cd, &p, val, set, f, 5, &s0, &o, &err), NMO_OK, "%s", err.msg);
                int64_t diff = a.verdict != b.verdict;
                for (int k = 0; k < NMO_MAX_TENSORS; k++) {
                    if (!a.enc[k]) continue;
                    int64_t n = a.n; /* one output per op here */
                    for (int64_t i = 0; i < n; i++) {
                        const nmo_fenc *x = &a.enc[k][i], *y = &b.enc[k][i];
                        int same_lo = x->lo == y->lo || (x->lo != x->lo && y->lo != y->lo);
                        int same_hi = x->hi == y->hi || (x->hi != x->hi && y->hi != y->hi);
                        diff += !same_lo || !same_hi || a.verdicts[k][i] != b.verdicts[k][i];
                    }
                }
                cr_expect_eq(diff, 0, "%s [%s] %s %s: %lld elements differ", op->name, SETS[si].params,
                             d ? "fp32" : "bf16", nmo_family_name(f), (long long)diff);
                nmo_report_free(&a);
                nmo_report_free(&b);
                cases++;
            }
    }
    printf("params engines: %ld cases compared\n", cases);
}
