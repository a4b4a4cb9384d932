/* The error scale and the informativeness rule (DESIGN §6, README "What a verdict means"):
 * the scale each reference carries is the magnitude its last reduction or cancelling
 * addition combined (checked against an independent evaluation for the dot products of
 * matmul and the last step of rms_norm and layer_norm), and the checker's verdicts follow
 * the rule on synthesized enclosures: more than max_ulps values but within max_ulps ulps
 * of the scale is PASS (flagged SCALED), beyond is INCONCLUSIVE (WIDE), no scale (+inf)
 * leaves only the count rule (NOSCALE), R exactly {+inf} or {-inf} decides. */
#include <criterion/criterion.h>
#include <math.h>
#include <mpfr.h>
#include <string.h>

#include "harness.h"
#include "engine/enc_fast.h"
#include "numoracle/numoracle.h"

/* check a CPU candidate's output keeping the enclosures (and so the scales) */
static void run_keep(nmo_report *rep, nmo_case *c, const char *op, const char *cand, nmo_fmt dt,
                     int nshape, const int64_t *shape, int fam, nmo_tensor *out)
{
    nmo_err err = {{0}};
    nmo_plan p;
    nmo_plan_default(&p, dt);
    cr_assert_eq(nmo_case_init(c, nmo_op_find(op), &p, nshape, shape, &err), NMO_OK, "%s", err.msg);
    nmo_case_fill(c, fam, 7);
    const nmo_cand *cd = nmo_cand_find(op, cand);
    cr_assert(cd != NULL, "candidate %s/%s", op, cand);
    cr_assert_eq(nmo_case_alloc_outputs(c, out, 0, &err), NMO_OK, "%s", err.msg);
    nmo_cand_args a = {c->in, c->n_in, out, c->n_out, c->param, c->op->n_param, &c->plan};
    cr_assert_eq(cd->run(&a, &err), NMO_OK, "%s", err.msg);
    nmo_check_opts o = {.keep_enc = 1, .keep_verdicts = 1};
    cr_assert_eq(nmo_check(rep, c, out, &o, &err), NMO_OK, "%s", err.msg);
}

/* matmul: the scale of C[i,j] is the binade of sum_k |a_ik b_kj|, exactly (both engines
 * keep only the binade of that sum: enc_fast.h, "error scale"), in every family */
Test(scale, matmul_is_the_binade_of_sum_abs_products)
{
    int64_t shape[3] = {9, 13, 1031};
    long checked = 0, wrong = 0;
    for (int fam = 0; fam < NMO_FAM_COUNT; fam++) {
        nmo_case c;
        nmo_report rep;
        nmo_tensor out[NMO_MAX_TENSORS];
        run_keep(&rep, &c, "matmul", "seq_fma", NMO_BF16, 3, shape, fam, out);
        mpfr_t s, t;
        mpfr_inits2(512, s, t, (mpfr_ptr)0);
        for (int64_t i = 0; i < shape[0]; i++)
            for (int64_t j = 0; j < shape[1]; j++) {
                mpfr_set_zero(s, 1);
                for (int64_t k = 0; k < shape[2]; k++) {
                    mpfr_set_d(t, nmo_tensor_get(&c.in[0], i * shape[2] + k), MPFR_RNDN);
                    mpfr_mul_d(t, t, nmo_tensor_get(&c.in[1], k * shape[1] + j), MPFR_RNDN);
                    mpfr_abs(t, t, MPFR_RNDN);
                    mpfr_add(s, s, t, MPFR_RNDN); /* exact at 512 bits for bf16 products */
                }
                long e;
                double want = mpfr_zero_p(s) ? 0 : (mpfr_get_d_2exp(&e, s, MPFR_RNDZ), ldexp(1.0, (int)e - 1));
                double got = rep.enc[0][i * shape[1] + j].mag;
                checked++;
                if (got != want) {
                    wrong++;
                    if (wrong < 5) cr_log_error("%s C[%lld,%lld]: scale %a, want %a", nmo_family_name(fam),
                                                (long long)i, (long long)j, got, want);
                }
            }
        mpfr_clears(s, t, (mpfr_ptr)0);
        nmo_report_free(&rep);
        for (int k = 0; k < c.n_out; k++) nmo_tensor_free(&out[k]);
        nmo_case_free(&c);
    }
    printf("matmul scales: %ld elements, %ld differ from the binade of sum|a b|\n", checked, wrong);
    cr_expect_eq(wrong, 0);
}

/* rms_norm y = x r w: the scale is at least |y| (no cancellation: the count rule and the
 * scale rule agree up to a binade); layer_norm y = d r w + b: at least the larger of
 * |d r w| and |b| (the design's example for the last step), with d = x - mean exactly */
Test(scale, norms_last_step)
{
    long checked = 0, low = 0;
    int64_t shape[2] = {6, 513};
    for (int fam = 0; fam < NMO_FAM_COUNT; fam++)
        for (int which = 0; which < 2; which++) {
            nmo_case c;
            nmo_report rep;
            nmo_tensor out[NMO_MAX_TENSORS];
            const char *op = which ? "layer_norm" : "rms_norm";
            run_keep(&rep, &c, op, nmo_cand_find(op, NULL)->name, NMO_FP32, 2, shape, fam, out);
            int64_t n = shape[1];
            for (int64_t i = 0; i < shape[0]; i++) {
                double mean = 0, ms = 0;
                for (int64_t j = 0; j < n; j++) mean += nmo_tensor_get(&c.in[0], i * n + j) / (double)n;
                for (int64_t j = 0; j < n; j++) {
                    double x = nmo_tensor_get(&c.in[0], i * n + j);
                    ms += (which ? (x - mean) * (x - mean) : x * x) / (double)n;
                }
                double r = 1 / sqrt(ms + c.param[0]); /* param 0: eps in both */
                for (int64_t j = 0; j < n; j++) {
                    double x = nmo_tensor_get(&c.in[0], i * n + j), w = nmo_tensor_get(&c.in[1], j);
                    double b = which ? nmo_tensor_get(&c.in[2], j) : 0;
                    double want = fmax(fabs((which ? x - mean : x) * r * w), fabs(b));
                    const nmo_fenc *e = &rep.enc[0][i * n + j];
                    checked++;
                    if (!(e->mag >= want * (1 - 0x1p-10))) {
                        low++;
                        if (low < 5) cr_log_error("%s %s [%lld,%lld]: scale %a below %a", op, nmo_family_name(fam),
                                                  (long long)i, (long long)j, e->mag, want);
                    }
                }
            }
            nmo_report_free(&rep);
            for (int k = 0; k < c.n_out; k++) nmo_tensor_free(&out[k]);
            nmo_case_free(&c);
        }
    printf("norm scales: %ld elements, %ld below the last step's magnitude\n", checked, low);
    cr_expect_eq(low, 0);
}

/* The rule itself, on synthesized enclosures into bf16 (max_ulps 8). */
Test(scale, verdict_rule)
{
    nmo_plan p;
    nmo_plan_default(&p, NMO_BF16);
    nmo_elem_info in;
    uint32_t bf;
    /* R = [-0.05, 0.05]: thousands of bf16 values around 0 */
    nmo_fenc e = {-0.05, 0.05, 0, 0};
    /* scale 64: ulp_bf16(64) = 0.5, width 0.1 = 0.2 ulps: PASS by the scale rule */
    e.mag = 64;
    cr_expect_eq(nmo_judge(&in, &e, 0.001, &p, 8, &bf), NMO_PASS);
    cr_expect(bf & NMO_BF_SCALED);
    cr_expect(fabs(in.width_scale - 0.2) < 1e-3, "width at scale %g", in.width_scale);
    /* scale 0.5: ulp 2^-8, width 0.1 = 25.6 ulps > 8: INCONCLUSIVE (wide) */
    e.mag = 0.5;
    cr_expect_eq(nmo_judge(&in, &e, 0.001, &p, 8, &bf), NMO_INCONCLUSIVE);
    cr_expect((bf & NMO_BF_WIDE) && !(bf & NMO_BF_NOSCALE) && !(bf & NMO_BF_SCALED));
    /* the boundary: width exactly 8 ulps at the scale is informative, just above is not */
    nmo_fenc eb = {1.0, 1.0 + 8 * 0x1p-7, 0, 1.5}; /* ulp_bf16(1.5) = 2^-7 */
    cr_expect_eq(nmo_judge(&in, &eb, 1.0, &p, 8, &bf), NMO_PASS);
    eb.hi = 1.0 + 9 * 0x1p-7;
    cr_expect_eq(nmo_judge(&in, &eb, 1.0, &p, 8, &bf), NMO_INCONCLUSIVE);
    /* no scale (+inf: a domain edge): only the count rule */
    e.mag = INFINITY;
    cr_expect_eq(nmo_judge(&in, &e, 0.001, &p, 8, &bf), NMO_INCONCLUSIVE);
    cr_expect(bf & NMO_BF_NOSCALE);
    /* the scale never changes a FAIL: outside R is outside whatever the scale */
    e.mag = 1e30;
    cr_expect_eq(nmo_judge(&in, &e, 0.0625, &p, 8, &bf), NMO_FAIL);
    /* a narrow R passes by the count rule alone, scale or not */
    nmo_fenc en = {1.0, 1.0078125, 0, INFINITY};
    cr_expect_eq(nmo_judge(&in, &en, 1.0078125, &p, 8, &bf), NMO_PASS);
    cr_expect(!(bf & (NMO_BF_SCALED | NMO_BF_WIDE)));
    /* R exactly {+inf}: every implementation overflows; -inf and NaN possible stay open */
    nmo_fenc ei = {1e39, 1e40, 0, 1e40};
    cr_expect_eq(nmo_judge(&in, &ei, INFINITY, &p, 8, &bf), NMO_PASS);
    cr_expect_eq(nmo_judge(&in, &ei, 3.3895314e38, &p, 8, &bf), NMO_FAIL);
    nmo_fenc en2 = {-1e40, -1e39, 0, 1e40};
    cr_expect_eq(nmo_judge(&in, &en2, -INFINITY, &p, 8, &bf), NMO_PASS);
    cr_expect_eq(nmo_judge(&in, &en2, INFINITY, &p, 8, &bf), NMO_FAIL);
    ei.flags = NMO_EF_NAN; /* NaN possible too: not decided */
    cr_expect_eq(nmo_judge(&in, &ei, INFINITY, &p, 8, &bf), NMO_INCONCLUSIVE);
    /* one side infinite: an overflow some implementations make, others not */
    nmo_fenc eo = {1e38, 1e40, 0, 1e40};
    cr_expect_eq(nmo_judge(&in, &eo, INFINITY, &p, 8, &bf), NMO_INCONCLUSIVE);
    cr_expect(bf & NMO_BF_NONFINITE);
}

/* The scale rule changes no FAIL and no reachable set: a mutant FAILs on the same
 * elements with the scale taken away (mag = +inf everywhere: the count rule alone). */
Test(scale, fails_do_not_depend_on_the_scale)
{
    int64_t shape[3] = {5, 7, 300};
    nmo_case c;
    nmo_report rep;
    nmo_tensor out[NMO_MAX_TENSORS];
    run_keep(&rep, &c, "matmul", "mut_acc_bf16", NMO_BF16, 3, shape, NMO_FAM_GAUSSIAN, out);
    cr_assert_gt(rep.n_fail, 0);
    long diff = 0;
    for (int64_t i = 0; i < rep.out_n[0]; i++) {
        nmo_fenc e = rep.enc[0][i];
        e.mag = INFINITY;
        nmo_elem_info in;
        nmo_verdict v = nmo_judge(&in, &e, nmo_tensor_get(&out[0], i), &c.plan, rep.max_ulps, NULL);
        diff += (v == NMO_FAIL) != (rep.verdicts[0][i] == NMO_FAIL);
    }
    cr_expect_eq(diff, 0);
    nmo_report_free(&rep);
    for (int k = 0; k < c.n_out; k++) nmo_tensor_free(&out[k]);
    nmo_case_free(&c);
}
