/* Every operator x every plan field (DESIGN §4: "every operator honours every field of
 * the plan or rejects the plan"; numoracle issue 14 §2).
 *
 * For each operator of the registry and each probe (a plan field set to a value other
 * than the dtype's default), either
 *   - case construction rejects the plan with a message naming the operator and the
 *     field, and the operator does not declare the field (nmo_op plan_fields /
 *     plan_vacuous), or
 *   - the field is honoured: some enclosure or reachable set of some generated input
 *     (families x the operator's default parameters and each parameter moved by one)
 *     differs from the default plan's. A field the operator declares vacuous (no stage
 *     it describes) must instead leave every enclosure and reachable set unchanged.
 * The probe table must name every key that nmo_plan_to_string writes: a field added to
 * the plan without a probe fails `probes_cover_every_plan_field`, and a probe that an
 * operator accepts without any effect fails the walk. max_ulps is the one field that
 * changes no bound (it is the checker's informativeness rule, applied to every element
 * by nmo_judge alone: tests/cli/cases/inconclusive_max_ulps.case). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

typedef struct {
    const char *key;   /* the nmo_plan_to_string key */
    const char *text;  /* applied over the default plan of dt */
    nmo_fmt dt;
    unsigned bit;      /* NMO_PF_* bit, 0: honoured by every operator */
    int subnormal;     /* 1: inject subnormal inputs (inject_subnormals's three patterns) */
} probe;

static const probe probes[] = {
    {"in", "in=fp16", NMO_FP32, 0, 0},
    {"out", "out=bf16", NMO_FP32, 0, 0},
    /* fp32 inputs: the sum or product of two bf16 values is exact in fp32 already */
    {"compute", "compute=fp64 inter=fp64", NMO_FP32, NMO_PF_COMPUTE, 0}, /* inter: still fused */
    {"acc", "acc=fp64", NMO_BF16, NMO_PF_ACC, 0},
    {"inter", "inter=bf16", NMO_BF16, NMO_PF_INTER, 0},
    {"sum", "sum=exact", NMO_BF16, NMO_PF_SUM_EXACT, 0},
    {"sum", "sum=mma:16", NMO_BF16, NMO_PF_SUM_MMA, 0},
    /* runs of 2, a tree of depth 2, chunk partials in any order: narrower than any order */
    {"sum", "sum=blocked:2:2:any", NMO_BF16, NMO_PF_SUM_GEOM, 0},
    {"fn", "fn=ulp:64", NMO_BF16, NMO_PF_FN, 0},
    {"round", "round=rz", NMO_BF16, 0, 0},
    {"round", "round=sr", NMO_BF16, 0, 0},
    {"subnormals", "subnormals=ftz", NMO_FP32, 0, 1},
};
#define NPROBES ((int)(sizeof probes / sizeof probes[0]))

Test(plan_fields, probes_cover_every_plan_field)
{
    nmo_plan p;
    nmo_plan_default(&p, NMO_BF16);
    char text[512];
    nmo_plan_to_string(&p, text, sizeof text);
    int nkeys = 0;
    for (char *tok = strtok(text, " "); tok; tok = strtok(NULL, " ")) {
        char *eq = strchr(tok, '=');
        cr_assert_not_null(eq);
        *eq = 0;
        nkeys++;
        if (strcmp(tok, "max_ulps") == 0) continue; /* checker rule: see the top comment */
        int found = 0;
        for (int i = 0; i < NPROBES; i++) found |= strcmp(probes[i].key, tok) == 0;
        cr_expect(found, "plan field '%s' has no probe in tests/test_plan_fields.c", tok);
    }
    cr_expect_geq(nkeys, 10);
    unsigned bits = 0;
    for (int i = 0; i < NPROBES; i++) bits |= probes[i].bit;
    cr_expect_eq(bits, NMO_PF_ALL, "a NMO_PF_* bit without a probe");
}

/* Every operator declares each bit at most once, and compute, acc, fn (always set by a
 * plan) as modelled or vacuous. */
Test(plan_fields, declarations_are_consistent)
{
    for (int oi = 0; oi < nmo_op_count(); oi++) {
        const nmo_op *op = nmo_op_at(oi);
        cr_expect_eq(op->plan_fields & op->plan_vacuous, 0u, "%s: a field both modelled and vacuous",
                     op->name);
        cr_expect_eq((op->plan_fields | op->plan_vacuous) & ~NMO_PF_ALL, 0u, "%s: unknown bits", op->name);
        unsigned always = NMO_PF_COMPUTE | NMO_PF_ACC | NMO_PF_FN;
        cr_expect_eq((op->plan_fields | op->plan_vacuous) & always, always,
                     "%s: compute, acc and fn must be modelled or vacuous", op->name);
    }
}

/* Subnormal inputs (read as 0 under ftz: DAZ), and inputs whose results underflow
 * (flushed under ftz), in the data, weight, bias and positive inputs; pattern
 *   1: every 5th element a subnormal of fp32, every 5th + 2 near -90 (exp of it, after a
 *      row max is subtracted, is subnormal);
 *   2: the first half of the even-numbered inputs subnormal (a whole row of subnormals
 *      against normal partners: a matrix product's row, a norm's row);
 *   3: the same for the odd-numbered inputs.
 * Derived inputs are recomputed from the new data. */
static void inject_subnormals(nmo_case *c, int pattern)
{
    for (int k = 0; k < c->n_in; k++) {
        nmo_role role = c->op->in[k].role;
        if (role == NMO_ROLE_LABEL || role == NMO_ROLE_DERIVED) continue;
        int64_t n = nmo_tensor_numel(&c->in[k]);
        for (int64_t j = 0; j < n; j++) {
            double sub = (j % 2 ? -1 : 1) * ldexp((double)(j % 7 + 1), -130);
            if (role == NMO_ROLE_POSITIVE) sub = fabs(sub);
            if (pattern == 1 && j % 5 == 0) nmo_tensor_set(&c->in[k], j, sub);
            if (pattern == 1 && j % 5 == 2 && role == NMO_ROLE_DATA) nmo_tensor_set(&c->in[k], j, -90.0 - (double)(j % 3));
            if (pattern >= 2 && k % 2 == pattern - 2 && j < n / 2) nmo_tensor_set(&c->in[k], j, sub);
        }
    }
    if (c->op->derive) c->op->derive(c);
}

typedef struct {
    int ok;            /* the case was built and checked */
    nmo_status st;     /* case construction status */
    char msg[512];
    nmo_report rep;
} run;

/* Bounds and enclosures of (op, plan, params, family, seed 3, the first test shape). */
static void run_bounds(run *r, const nmo_op *op, const nmo_plan *plan, const double *param,
                       const int *set, int family, int subnormal)
{
    nmo_test_shape sh[4];
    nmo_test_shapes(op, sh, 0);
    nmo_case c;
    nmo_err err = {{0}};
    memset(r, 0, sizeof *r);
    r->st = nmo_case_init_params(&c, op, plan, sh[0].nshape, sh[0].shape, param, set, &err);
    snprintf(r->msg, sizeof r->msg, "%s", err.msg);
    if (r->st != NMO_OK) return;
    nmo_case_fill(&c, family, 3);
    if (subnormal) inject_subnormals(&c, subnormal);
    nmo_check_opts o = {.keep_bounds = 1, .keep_enc = 1};
    nmo_status s = nmo_check(&r->rep, &c, NULL, &o, &err);
    cr_assert_eq(s, NMO_OK, "%s: %s", op->name, err.msg);
    r->ok = 1;
    nmo_case_free(&c);
}

static int same_d(double a, double b) { return a == b || (a != a && b != b); }

/* Elements whose enclosure or reachable set differ (-1: different output sizes). */
static int64_t n_differ(const nmo_report *a, const nmo_report *b)
{
    int64_t d = 0;
    for (int k = 0; k < a->n_out; k++) {
        if (a->out_n[k] != b->out_n[k]) return -1;
        for (int64_t i = 0; i < a->out_n[k]; i++)
            d += !same_d(a->enc[k][i].lo, b->enc[k][i].lo) || !same_d(a->enc[k][i].hi, b->enc[k][i].hi) ||
                 !same_d(a->rlo[k][i], b->rlo[k][i]) || !same_d(a->rhi[k][i], b->rhi[k][i]);
    }
    return d;
}

static const int families[] = {NMO_FAM_GAUSSIAN, NMO_FAM_LARGE, NMO_FAM_SMALL};

Test(plan_fields, every_operator_honours_or_rejects_every_field, .timeout = 1800)
{
    long honoured = 0, rejected = 0, vacuous = 0;
    for (int oi = 0; oi < nmo_op_count(); oi++) {
        const nmo_op *op = nmo_op_at(oi);
        if (!nmo_test_op_selected(op->name)) continue; /* NMO_OPS (tests/harness.h) */
        printf("%-20s", op->name);
        for (int pi = 0; pi < NPROBES; pi++) {
            const probe *pr = &probes[pi];
            nmo_plan base, p;
            nmo_plan_default(&base, pr->dt);
            p = base;
            nmo_err err = {{0}};
            cr_assert_eq(nmo_plan_parse(&p, pr->text, &err), NMO_OK, "%s", err.msg);
            nmo_status st = nmo_op_check_plan(op, &p, &err);
            int declared = pr->bit == 0 || ((op->plan_fields | op->plan_vacuous) & pr->bit);
            if (st != NMO_OK) {
                /* rejected: by case construction too, naming the operator and the field */
                run r;
                run_bounds(&r, op, &p, NULL, NULL, NMO_FAM_GAUSSIAN, 0);
                cr_expect_eq(r.st, NMO_ERR_UNSUPPORTED, "%s %s: case init gave %d", op->name, pr->text, r.st);
                char want[96];
                snprintf(want, sizeof want, "%s does not model plan field '%s'", op->name,
                         pr->text);
                cr_expect(strstr(r.msg, want) == r.msg, "%s %s: message '%s'", op->name, pr->text, r.msg);
                cr_expect(!declared, "%s declares %s but rejects it: %s", op->name, pr->text, err.msg);
                printf(" %s:rejected", pr->text);
                rejected++;
                continue;
            }
            cr_expect(declared, "%s accepts %s without declaring it", op->name, pr->text);
            int is_vacuous = pr->bit && (op->plan_vacuous & pr->bit);
            /* variants: default parameters, then each parameter moved by one */
            int64_t diff = 0;
            for (int v = -1; v < op->n_param && (is_vacuous || diff == 0); v++) {
                double param[NMO_MAX_PARAMS] = {0};
                int set[NMO_MAX_PARAMS] = {0};
                if (v >= 0) {
                    param[v] = op->param[v].def + 1;
                    set[v] = 1;
                }
                int nvar = pr->subnormal ? 3 : 1;
                for (size_t f = 0; f < nvar * (sizeof families / sizeof families[0]); f++) {
                    int fam = families[f % (sizeof families / sizeof families[0])];
                    int inj = pr->subnormal ? 1 + (int)(f / (sizeof families / sizeof families[0])) : 0;
                    run a, b;
                    run_bounds(&a, op, &base, param, set, fam, inj);
                    if (!a.ok) break; /* a parameter value the operator does not take */
                    run_bounds(&b, op, &p, param, set, fam, inj);
                    cr_assert(b.ok, "%s %s: %s", op->name, pr->text, b.msg);
                    int64_t d = n_differ(&a.rep, &b.rep);
                    diff += d < 0 ? 1 : d;
                    if (is_vacuous)
                        cr_expect_eq(d, 0, "%s declares no stage for %s, but %lld elements move "
                                     "(family %s, param variant %d)", op->name, pr->text,
                                     (long long)d, nmo_family_name(fam), v);
                    nmo_report_free(&a.rep);
                    nmo_report_free(&b.rep);
                    if (diff && !is_vacuous) break;
                }
            }
            if (is_vacuous) {
                printf(" %s:vacuous", pr->text);
                vacuous++;
            } else {
                cr_expect_gt(diff, 0, "%s accepts %s but no enclosure or reachable set moves: "
                             "the field is ignored", op->name, pr->text);
                printf(" %s:%s", pr->text, diff ? "honoured" : "IGNORED");
                honoured++;
            }
        }
        printf("\n");
        fflush(stdout);
    }
    printf("plan fields: %ld honoured, %ld vacuous, %ld rejected (operator x probe)\n", honoured,
           vacuous, rejected);
}
