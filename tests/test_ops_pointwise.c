/* The pointwise operators beyond what the registry-driven tests cover (those run the
 * default plan and default parameters only):
 *
 *  - unfused (eager) plans: the candidates that state a plan of their own (nmo_cand.plan,
 *    read from the registry; today swiglu/geglu `mut_eager`, swiglu_bwd `mut_unsloth`,
 *    geglu_bwd `mut_liger_triton(_v0)`, rope/rope_bwd `mut_eager`, the llama castings of
 *    rms_norm, fused_add_rms_norm and rms_norm_bwd, PyTorch's kl_div) store intermediates in the input
 *    dtype. They are registered as mutants: negative controls of the fused default plan
 *    (hence the mut_ prefix); here they must never FAIL under their plan
 *    (`inter=<input dtype>`, rope also with the GPT-J layout), and must FAIL under the
 *    fused plan for the 16-bit dtypes. What the fused correct candidates do under the
 *    unfused plan is printed (they are not plan-following there; no assertion);
 *  - gelu approximate=1 (tanh) and rope/rope_bwd layout=1 (GPT-J): every correct variant
 *    never FAILs, every mutant FAILs somewhere;
 *  - fast engine + escalation == certified engine for those plans and parameters.
 * NMO_OPS=a,b,c: those operators only (tests/harness.h). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define SEEDS 2

static nmo_status run_cand(nmo_tensor *out, const nmo_case *c, const nmo_cand *cand, nmo_err *err)
{
    NMO_RETURN_IF_ERR(nmo_case_alloc_outputs(c, out, 0, err));
    nmo_cand_args a = {c->in, c->n_in, out, c->n_out, c->param, c->op->n_param, &c->plan};
    return cand->run(&a, err);
}

/* One case with an explicit plan and an optional parameter override (pk < 0: none).
 * mode_diff: instead of a report, the number of elements where fast+escalation and the
 * certified engine differ (verdict, reachable set or enclosure). */
static int64_t run_case(nmo_report *rep, const nmo_op *op, const nmo_cand *cd, const nmo_plan *plan,
                        int pk, double pv, int family, uint64_t seed, const nmo_test_shape *sh,
                        int mode_diff)
{
    nmo_case c;
    nmo_err err = {{0}};
    cr_assert_eq(nmo_case_init(&c, op, plan, sh->nshape, sh->shape, &err), NMO_OK, "%s", err.msg);
    if (pk >= 0) c.param[pk] = pv;
    nmo_case_fill(&c, family, seed);
    nmo_tensor out[NMO_MAX_TENSORS];
    memset(out, 0, sizeof out);
    cr_assert_eq(run_cand(out, &c, cd, &err), NMO_OK, "%s/%s: %s", op->name, cd->name, err.msg);
    int64_t diff = 0;
    if (!mode_diff) {
        cr_assert_eq(nmo_check(rep, &c, out, NULL, &err), NMO_OK, "%s", err.msg);
    } else {
        nmo_report a, b;
        nmo_check_opts o = {.keep_verdicts = 1, .keep_bounds = 1, .keep_enc = 1};
        o.mode = NMO_MODE_ESCALATE;
        cr_assert_eq(nmo_check(&a, &c, out, &o, &err), NMO_OK, "%s", err.msg);
        o.mode = NMO_MODE_CERT;
        cr_assert_eq(nmo_check(&b, &c, out, &o, &err), NMO_OK, "%s", err.msg);
        for (int k = 0; k < c.n_out; k++) {
            int64_t n = nmo_tensor_numel(&c.out[k]);
            for (int64_t i = 0; i < n; i++) {
                const nmo_fenc *ea = &a.enc[k][i], *eb = &b.enc[k][i];
                int same = a.verdicts[k][i] == b.verdicts[k][i] && a.bflags[k][i] == b.bflags[k][i];
                same &= (a.rlo[k][i] == b.rlo[k][i] || (a.rlo[k][i] != a.rlo[k][i] && b.rlo[k][i] != b.rlo[k][i]));
                same &= (a.rhi[k][i] == b.rhi[k][i] || (a.rhi[k][i] != a.rhi[k][i] && b.rhi[k][i] != b.rhi[k][i]));
                same &= (ea->lo == eb->lo || (ea->lo != ea->lo && eb->lo != eb->lo));
                same &= (ea->hi == eb->hi || (ea->hi != ea->hi && eb->hi != eb->hi));
                diff += !same;
            }
        }
        diff += a.verdict != b.verdict;
        nmo_report_free(&a);
        nmo_report_free(&b);
    }
    for (int k = 0; k < c.n_out; k++) nmo_tensor_free(&out[k]);
    nmo_case_free(&c);
    return diff;
}

static const nmo_cand *cand(const char *op, const char *name)
{
    const nmo_cand *c = nmo_cand_find(op, name);
    cr_assert_not_null(c, "no candidate %s/%s", op, name ? name : "(default)");
    return c;
}

/* The default plan of dt, or the plan candidate `own` states (fp32: inter=fp32, the
 * same as the fused plan). */
static void plan_for(nmo_plan *p, nmo_fmt dt, const nmo_cand *own)
{
    nmo_err err = {{0}};
    cr_assert_eq(nmo_cand_plan(p, own, dt, &err), NMO_OK, "%s", err.msg);
}

static const nmo_cand *any_plan_cand(const char *op)
{
    for (int i = 0; i < nmo_cand_count(); i++)
        if (strcmp(nmo_cand_at(i)->op, op) == 0 && nmo_cand_at(i)->plan) return nmo_cand_at(i);
    return NULL;
}

typedef struct {
    long runs, fail, inconc;
} tally;

/* Every family x seed x test shape (x layouts for rope) of one (op, candidate, dtype,
 * plan): counts of FAIL and INCONCLUSIVE runs. */
static tally sweep(const nmo_op *op, const nmo_cand *cd, nmo_fmt dt, const nmo_cand *own, int pk,
                   double pv)
{
    tally t = {0, 0, 0};
    nmo_test_shape sh[4];
    int nsh = nmo_test_shapes(op, sh, 0);
    nmo_plan p;
    plan_for(&p, dt, own);
    int unfused = own != NULL;
    for (int f = 0; f < NMO_FAM_COUNT; f++)
        for (int s = 0; s < SEEDS; s++)
            for (int h = 0; h < nsh; h++) {
                nmo_report rep;
                run_case(&rep, op, cd, &p, pk, pv, f, (uint64_t)s + 1, &sh[h], 0);
                t.runs++;
                if (rep.verdict == NMO_FAIL) {
                    t.fail++;
                    if (cd->correct != unfused) /* unexpected */
                        printf("  FAIL %s/%s %s%s family=%s seed=%d shape#%d: %lld fails, idx %lld "
                               "cand %.9g R=[%.9g, %.9g]\n",
                               op->name, cd->name, nmo_fmt_name(dt), unfused ? " inter" : "",
                               nmo_family_name(f), s + 1, h, (long long)rep.n_fail,
                               (long long)rep.worst.index, rep.worst.cand, rep.worst.rlo, rep.worst.rhi);
                }
                if (rep.verdict == NMO_INCONCLUSIVE) t.inconc++;
                nmo_report_free(&rep);
            }
    return t;
}

static const nmo_fmt dts[3] = {NMO_FP32, NMO_BF16, NMO_FP16};

Test(pointwise, eager_candidates_pass_under_unfused_plan, .timeout = 900)
{
    printf("\neager candidates: FAIL runs / runs under each plan\n");
    printf("%-18s %-19s %-6s %-18s %-18s\n", "op", "candidate", "dtype", "fused (default)",
           "own plan");
    int n_eager = 0;
    for (int ci = 0; ci < nmo_cand_count(); ci++) {
        const nmo_cand *cd = nmo_cand_at(ci);
        if (!cd->plan || !nmo_test_op_selected(cd->op)) continue;
        n_eager++;
        const nmo_op *op = nmo_op_find(cd->op);
        cr_assert_not_null(op);
        int nlay = strncmp(op->name, "rope", 4) == 0 ? 2 : 1;
        int fused_fails = 0;
        for (int d = 0; d < 3; d++)
            for (int lay = 0; lay < nlay; lay++) {
                int pk = nlay == 2 ? nmo_op_param_index(op, "layout") : -1;
                tally tu = sweep(op, cd, dts[d], cd, pk, lay);
                tally tf = sweep(op, cd, dts[d], NULL, pk, lay);
                printf("%-18s %-19s %-6s %4ld/%-4ld (inc %3ld) %4ld/%-4ld (inc %3ld)%s\n", op->name,
                       cd->name, nmo_fmt_name(dts[d]), tf.fail, tf.runs, tf.inconc, tu.fail, tu.runs,
                       tu.inconc, nlay == 2 ? (lay ? " gptj" : " neox") : "");
                cr_expect_eq(tu.fail, 0, "%s/%s %s: FAILs under its plan %s", op->name, cd->name,
                             nmo_fmt_name(dts[d]), cd->plan);
                fused_fails += tf.fail > 0; /* eager: 16-bit only; triton: fp32 */
            }
        cr_expect_gt(fused_fails, 0, "%s/%s never FAILs under the default plan", op->name, cd->name);
    }
    /* the registry's count when the field replaced the hand list of operators (swiglu,
     * swiglu_bwd, geglu, geglu_bwd, rope, rope_bwd, rms_norm, fused_add_rms_norm,
     * rms_norm_bwd, kl_div): a candidate losing its plan field shows here */
    if (!nmo_test_filtered()) cr_expect_geq(n_eager, 13);
}

/* Informational: the fused correct variants under the unfused plan (not plan-following
 * there: a FAIL is expected and is not an error). */
Test(pointwise, fused_candidates_under_unfused_plan, .timeout = 600)
{
    printf("\nfused correct candidates under their operator's eager plan (bf16): FAIL runs / runs\n");
    for (int oi = 0; oi < nmo_op_count(); oi++) {
        const nmo_op *op = nmo_op_at(oi);
        const nmo_cand *own = any_plan_cand(op->name);
        if (!own || !nmo_test_op_selected(op->name)) continue;
        for (int ci = 0; ci < nmo_cand_count(); ci++) {
            const nmo_cand *cd = nmo_cand_at(ci);
            if (strcmp(cd->op, op->name) != 0 || !cd->correct) continue;
            tally t = sweep(op, cd, NMO_BF16, own, -1, 0);
            printf("  %-18s %-13s %ld/%ld\n", op->name, cd->name, t.fail, t.runs);
        }
    }
}

/* Non-default parameters: correct variants never FAIL, mutants FAIL somewhere (under the
 * default plan), candidates with a plan of their own never FAIL under it. */
static void param_sweep(const char *opname, const char *param, double value)
{
    const nmo_op *op = nmo_op_find(opname);
    cr_assert_not_null(op);
    int pk = nmo_op_param_index(op, param);
    cr_assert_geq(pk, 0);
    if (!nmo_test_op_selected(opname)) return;
    printf("\n%s %s=%g\n", opname, param, value);
    for (int ci = 0; ci < nmo_cand_count(); ci++) {
        const nmo_cand *cd = nmo_cand_at(ci);
        if (strcmp(cd->op, op->name) != 0) continue;
        long fail = 0, runs = 0, inconc = 0;
        for (int d = 0; d < 3; d++) {
            tally t = sweep(op, cd, dts[d], NULL, pk, value);
            fail += t.fail, runs += t.runs, inconc += t.inconc;
        }
        printf("  %-16s %-8s FAIL %3ld / %3ld runs (INCONCLUSIVE %ld)\n", cd->name,
               cd->correct ? "correct" : "mutant", fail, runs, inconc);
        if (cd->correct) cr_expect_eq(fail, 0, "%s/%s FAILs with %s=%g", opname, cd->name, param, value);
        else cr_expect_gt(fail, 0, "%s/%s never FAILs with %s=%g", opname, cd->name, param, value);
        if (!cd->plan) continue;
        /* an eager form under its own plan follows the contract with the parameter too */
        long pfail = 0, pruns = 0;
        for (int d = 0; d < 3; d++) {
            tally t = sweep(op, cd, dts[d], cd, pk, value);
            pfail += t.fail, pruns += t.runs;
        }
        printf("  %-16s %-8s FAIL %3ld / %3ld runs under its plan %s\n", cd->name, "", pfail, pruns,
               cd->plan);
        cr_expect_eq(pfail, 0, "%s/%s FAILs with %s=%g under %s", opname, cd->name, param, value, cd->plan);
    }
}

Test(pointwise, gelu_tanh_param, .timeout = 600) { param_sweep("gelu", "approximate", 1); }
Test(pointwise, rope_gptj_layout, .timeout = 600) { param_sweep("rope", "layout", 1); }
Test(pointwise, rope_bwd_gptj_layout, .timeout = 600) { param_sweep("rope_bwd", "layout", 1); }
/* Gemma's (1 + w): every rms_norm candidate forms offset + w in fp32 */
Test(pointwise, rms_norm_gemma_offset, .timeout = 600) { param_sweep("rms_norm", "offset", 1); }
Test(pointwise, fused_add_rms_norm_gemma_offset, .timeout = 600)
{
    param_sweep("fused_add_rms_norm", "offset", 1);
}

/* The non-default parameters the sweeps above (and the engine comparison below) run. */
static const struct {
    const char *op, *param;
    double value;
} params[] = {
    {"gelu", "approximate", 1}, {"rope", "layout", 1},     {"rope_bwd", "layout", 1},
    {"rms_norm", "offset", 1},  {"fused_add_rms_norm", "offset", 1}, {"kl_div", "log_target", 1},
};

/* One engine comparison: fast+escalation vs certified on bf16 and fp16, every family, the
 * first (small) test shape; plan_cand: run under that candidate's own plan. */
static long engines_equal(const nmo_op *op, const nmo_cand *cd, int pk, double pv, const nmo_cand *plan_cand)
{
    long compared = 0;
    nmo_test_shape sh[4];
    int nsh = nmo_test_shapes(op, sh, 0);
    for (int h = 0; h < nsh; h++) /* keep the certified engine's work small */
        if (sh[h].nshape == 2 && sh[h].shape[1] > 512) sh[h].shape[1] = 257, sh[h].shape[0] = 2;
    for (int d = 1; d < 3; d++)
        for (int f = 0; f < NMO_FAM_COUNT; f++) {
            nmo_plan p;
            plan_for(&p, dts[d], plan_cand);
            int64_t diff = run_case(NULL, op, cd, &p, pk, pv, f, 7, &sh[0], 1);
            cr_expect_eq(diff, 0, "%s/%s %s family=%s%s%s: %lld elements differ", op->name, cd->name,
                         nmo_fmt_name(dts[d]), nmo_family_name(f), plan_cand ? " plan " : "",
                         plan_cand ? plan_cand->plan : "", (long long)diff);
            compared++;
        }
    return compared;
}

/* Fast engine + escalation == certified engine on the plans and parameters above, from
 * the registry: every candidate that states a plan of its own, under it (default
 * parameters); for each non-default parameter, the operator's default candidate and its
 * candidates with a plan of their own under that plan. Small shapes. */
Test(pointwise, engines_equal_on_unfused_plans_and_params, .timeout = 900)
{
    long compared = 0;
    for (int ci = 0; ci < nmo_cand_count(); ci++) {
        const nmo_cand *cd = nmo_cand_at(ci);
        if (!cd->plan || !nmo_test_op_selected(cd->op)) continue;
        compared += engines_equal(nmo_op_find(cd->op), cd, -1, 0, cd);
    }
    for (size_t i = 0; i < sizeof params / sizeof params[0]; i++) {
        const nmo_op *op = nmo_op_find(params[i].op);
        cr_assert_not_null(op);
        int pk = nmo_op_param_index(op, params[i].param);
        cr_assert_geq(pk, 0, "%s has no param %s", params[i].op, params[i].param);
        if (!nmo_test_op_selected(op->name)) continue;
        compared += engines_equal(op, cand(op->name, NULL), pk, params[i].value, NULL);
        for (int ci = 0; ci < nmo_cand_count(); ci++) {
            const nmo_cand *cd = nmo_cand_at(ci);
            if (cd->plan && strcmp(cd->op, op->name) == 0) compared += engines_equal(op, cd, pk, params[i].value, cd);
        }
    }
    printf("\nengines (unfused plans, params): %ld cases compared\n", compared);
}

/* Negative control of the offset: a kernel that ignores it (h*r*w where the case asks for
 * h*r*(1 + w)) FAILs on every family and dtype, for both RMS norms. */
Test(pointwise, rms_norm_offset_ignored_fails, .timeout = 300)
{
    static const char *const ops[] = {"rms_norm", "fused_add_rms_norm"};
    for (int oi = 0; oi < 2; oi++) {
        const nmo_op *op = nmo_op_find(ops[oi]);
        if (!nmo_test_op_selected(ops[oi])) continue;
        const nmo_cand *cd = nmo_cand_find(op->name, NULL);
        int pk = nmo_op_param_index(op, "offset");
        cr_assert_geq(pk, 0);
        nmo_test_shape sh[4];
        nmo_test_shapes(op, sh, 0);
        long runs = 0, fails = 0;
        for (int d = 0; d < 3; d++)
            for (int f = 0; f < NMO_FAM_COUNT; f++) {
                nmo_plan p;
                plan_for(&p, dts[d], NULL);
                nmo_case c;
                nmo_err err = {{0}};
                double param[NMO_MAX_PARAMS] = {0};
                int set[NMO_MAX_PARAMS] = {0};
                param[pk] = 1, set[pk] = 1;
                cr_assert_eq(nmo_case_init_params(&c, op, &p, sh[0].nshape, sh[0].shape, param, set, &err),
                             NMO_OK, "%s", err.msg);
                nmo_case_fill(&c, f, 5);
                nmo_tensor out[NMO_MAX_TENSORS];
                memset(out, 0, sizeof out);
                cr_assert_eq(nmo_case_alloc_outputs(&c, out, 0, &err), NMO_OK, "%s", err.msg);
                double kparam[NMO_MAX_PARAMS];
                memcpy(kparam, c.param, sizeof kparam);
                kparam[pk] = 0; /* the kernel's bug */
                nmo_cand_args a = {c.in, c.n_in, out, c.n_out, kparam, op->n_param, &c.plan};
                cr_assert_eq(cd->run(&a, &err), NMO_OK, "%s", err.msg);
                nmo_report rep;
                cr_assert_eq(nmo_check(&rep, &c, out, NULL, &err), NMO_OK, "%s", err.msg);
                runs++;
                fails += rep.verdict == NMO_FAIL;
                nmo_report_free(&rep);
                for (int k = 0; k < c.n_out; k++) nmo_tensor_free(&out[k]);
                nmo_case_free(&c);
            }
        printf("\n%s offset=1, kernel ignoring it: %ld of %ld runs FAIL\n", op->name, fails, runs);
        cr_expect_eq(fails, runs, "%s", op->name);
    }
}
