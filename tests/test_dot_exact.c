/* oracle/engine/dot_exact.h (exact fixed-point dot products and their exact fp32 snaps)
 * against the certified engine's dot product (nmo_cenc_dot_d): wherever nmo_xd_dot_snap
 * reports a result, its lower and upper ends and its scale equal the certified ones,
 * exactly. Term sets: small integers and quarter-integers (where s -+ k u A falls next to
 * an fp32 value: the binary64 fast engine cannot decide them), gaussian bf16, fp32 with
 * exponents spread over +-40 binades, fp32 subnormals and huge values (outside the fixed
 * point's guard: must be reported, not decided), zeros (nonzero counts below n); lengths
 * 1 .. 4096; the default plan and a declared summation geometry (another k). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "engine/dot_exact.h"
#include "engine/enc_cert.h"
#include "engine/enc_fast.h"
#include "numoracle/numoracle.h"
#include "numoracle/cand.h"

static uint64_t bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}
static double dbl(uint64_t u)
{
    double d;
    memcpy(&d, &u, 8);
    return d;
}

static double term(int fam, uint64_t seed, uint64_t i)
{
    double g = nmo_gen_normal(seed, 3, i);
    uint64_t r = nmo_gen_u64(seed, 5, i);
    switch (fam) {
    case 0: return (double)((int64_t)(r % 17) - 8);                    /* integers -8 .. 8 */
    case 1: return (double)((int64_t)(r % 33) - 16) / 4;               /* quarters */
    case 2: return nmo_fmt_round(NMO_BF16, g, NMO_RNE, 0);             /* gaussian bf16 */
    case 3: return nmo_fmt_round(NMO_FP32, ldexp(g, (int)(r % 81) - 40), NMO_RNE, 0);
    case 4: return r % 3 == 0 ? 0.0 : nmo_fmt_round(NMO_BF16, g, NMO_RNE, 0); /* zeros */
    case 5: return r % 7 == 0 ? ldexp((double)(r % 255 + 1), -149) : (double)(r % 5) - 2; /* subnormals */
    default: return r % 11 == 0 ? ldexp(g, 120) : nmo_fmt_round(NMO_FP32, g, NMO_RNE, 0); /* huge */
    }
}

Test(dot_exact, equals_certified_dot, .timeout = 900)
{
    const char *plans[2] = {"in=bf16 out=bf16 compute=fp32 acc=fp32",
                            "in=bf16 out=bf16 compute=fp32 acc=fp32 sum=tree:32"};
    const int64_t lens[] = {1, 2, 3, 7, 64, 257, 1031, 4096};
    long sets = 0, decided = 0, mism = 0, fast_unc = 0, outside[7] = {0};
    for (int pi = 0; pi < 2; pi++) {
        nmo_plan p;
        nmo_err err;
        nmo_plan_default(&p, NMO_BF16);
        cr_assert_eq(nmo_plan_parse(&p, plans[pi], &err), NMO_OK, "%s", err.msg);
        nmo_fctx fc;
        nmo_cctx cc;
        cr_assert_eq(nmo_fctx_init(&fc, &p, NULL), NMO_OK);
        cr_assert_eq(nmo_cctx_init(&cc, &p, NULL), NMO_OK);
        for (int fam = 0; fam < 7; fam++)
            for (int li = 0; li < 8; li++)
                for (uint64_t seed = 1; seed <= (lens[li] >= 1031 ? 6u : 40u); seed++) {
                    const int64_t n = lens[li];
                    double *x = malloc((size_t)n * sizeof(double)), *y = malloc((size_t)n * sizeof(double));
                    nmo_xacc S, A;
                    nmo_xacc_zero(&S), nmo_xacc_zero(&A);
                    int64_t m = 0;
                    int ok = 1;
                    for (int64_t i = 0; i < n; i++) {
                        x[i] = term(fam, 1000 * seed + (uint64_t)pi, (uint64_t)i);
                        y[i] = term(fam, 7777 + 1000 * seed + (uint64_t)pi, (uint64_t)i);
                        m += x[i] != 0 && y[i] != 0;
                        ok &= nmo_xacc_add_prod(&S, &A, bits(x[i]), bits(y[i]));
                    }
                    ok = ok && nmo_xacc_norm(&S) && nmo_xacc_norm(&A);
                    double k = nmo_fe_dot_k(&fc, n, m), keta = (double)n * fc.etaa;
                    uint64_t lo, hi, mag;
                    ok = ok && nmo_xd_dot_snap(&S, &A, bits(k), bits(fc.ua), bits(keta), &lo, &hi, &mag);
                    nmo_cenc r;
                    nmo_fenc ex, fe;
                    nmo_cenc_init(&cc, &r);
                    nmo_cenc_dot_d(&cc, &r, x, y, n);
                    nmo_cenc_export(&cc, &ex, &r);
                    nmo_cenc_clear(&cc, &r);
                    nmo_fenc_dot_d(&fc, &fe, x, y, n);
                    sets++;
                    if (!ok) {
                        outside[fam]++;
                    } else {
                        decided++;
                        fast_unc += (fe.flags & NMO_EF_UNC) != 0;
                        int bad = ex.flags != 0 || ex.lo != dbl(lo) || ex.hi != dbl(hi) || ex.mag != dbl(mag);
                        if (bad && mism++ < 5)
                            cr_log_error("plan %d fam %d n %ld seed %lu: exact [%a, %a] mag %a, certified [%a, %a] mag %a flags %u",
                                         pi, fam, (long)n, (unsigned long)seed, dbl(lo), dbl(hi), dbl(mag), ex.lo, ex.hi,
                                         ex.mag, ex.flags);
                    }
                    free(x), free(y);
                }
        nmo_fctx_clear(&fc);
        nmo_cctx_clear(&cc);
    }
    cr_log_info("dot_exact: %ld sets, %ld decided exactly (%ld of them undecided by the binary64 fast engine), "
                "%ld reported outside; by family %ld %ld %ld %ld %ld %ld %ld; mismatches %ld",
                sets, decided, fast_unc, sets - decided, outside[0], outside[1], outside[2], outside[3], outside[4],
                outside[5], outside[6], mism);
    cr_assert_eq(mism, 0, "%ld sets differ from the certified engine", mism);
    cr_assert_gt(fast_unc, 200, "too few sets that only exact arithmetic decides (%ld)", fast_unc);
    cr_assert_gt(outside[6], 0, "no huge set reported outside the fixed point");
    cr_assert_gt(decided, sets / 2);
}

static int same_d(double a, double b) { return a == b || (a != a && b != b); }

/* 2: a matmul of small-integer bf16 matrices (torch.randint-style test data) through the
 * checker: the binary64 product leaves about 3% of the elements next to the lattice (s - k u A
 * on it; Dot2 cannot separate them either), the exact path decides them all, nothing goes
 * to the certified engine, and the report equals the certified engine's element for element. */
Test(dot_exact, integer_matmul_through_the_checker, .timeout = 900)
{
    const nmo_op *op = nmo_op_find("matmul");
    const nmo_cand *cd = nmo_cand_find("matmul", NULL);
    nmo_err err = {{0}};
    nmo_plan p;
    cr_assert_eq(nmo_cand_plan(&p, cd, NMO_BF16, &err), NMO_OK, "%s", err.msg);
    int64_t shape[3] = {48, 64, 512};
    nmo_case c;
    cr_assert_eq(nmo_case_init(&c, op, &p, 3, shape, &err), NMO_OK, "%s", err.msg);
    for (int t = 0; t < 2; t++)
        for (int64_t i = 0; i < nmo_tensor_numel(&c.in[t]); i++)
            nmo_tensor_set(&c.in[t], i, (double)((int64_t)(nmo_gen_u64(5 + (uint64_t)t, 1, (uint64_t)i) % 17) - 8));
    nmo_tensor out = c.out[0];
    out.data = NULL, out.own = 0;
    cr_assert_eq(nmo_tensor_alloc(&out, &err), NMO_OK);
    nmo_cand_args ca = {c.in, c.n_in, &out, 1, c.param, op->n_param, &c.plan};
    cr_assert_eq(cd->run(&ca, &err), NMO_OK, "%s", err.msg);
    /* the binary64 engine alone (no exact path): how many it leaves undecided */
    nmo_fctx fc;
    cr_assert_eq(nmo_fctx_init(&fc, &c.plan, &err), NMO_OK);
    int64_t unc = 0, n = shape[0] * shape[1];
    double *x = malloc((size_t)shape[2] * sizeof(double)), *y = malloc((size_t)shape[2] * sizeof(double));
    for (int64_t e = 0; e < n; e++) {
        nmo_tensor_load_f64(x, &c.in[0], (e / shape[1]) * shape[2], shape[2], 1);
        nmo_tensor_load_f64(y, &c.in[1], e % shape[1], shape[2], shape[1]);
        nmo_fenc r;
        nmo_fenc_dot_d(&fc, &r, x, y, shape[2]);
        unc += (r.flags & NMO_EF_UNC) != 0;
    }
    free(x), free(y);
    nmo_fctx_clear(&fc);
    nmo_report a, b;
    nmo_check_opts o = {.mode = NMO_MODE_ESCALATE, .keep_verdicts = 1, .keep_bounds = 1};
    cr_assert_eq(nmo_check(&a, &c, &out, &o, &err), NMO_OK, "%s", err.msg);
    o.mode = NMO_MODE_CERT;
    cr_assert_eq(nmo_check(&b, &c, &out, &o, &err), NMO_OK, "%s", err.msg);
    int64_t diff = 0;
    for (int64_t e = 0; e < n; e++)
        diff += a.verdicts[0][e] != b.verdicts[0][e] || !same_d(a.rlo[0][e], b.rlo[0][e]) ||
                !same_d(a.rhi[0][e], b.rhi[0][e]) || a.bflags[0][e] != b.bflags[0][e];
    cr_log_info("dot_exact: integer matmul %ldx%ldx%ld: %lld of %lld elements undecided in binary64, %lld escalated to "
                "the certified engine with the exact path; %lld differ; %s",
                (long)shape[0], (long)shape[1], (long)shape[2], (long long)unc, (long long)n, (long long)a.n_escalated,
                (long long)diff, nmo_verdict_name(a.verdict));
    cr_expect_eq(diff, 0);
    cr_expect(a.n_pass == b.n_pass && a.n_fail == b.n_fail && a.verdict == b.verdict && a.verdict == NMO_PASS);
    cr_expect_gt(unc, 30, "the data lost its ties (%lld undecided in binary64)", (long long)unc);
    cr_expect_eq(a.n_escalated, 0);
    nmo_report_free(&a), nmo_report_free(&b);
    nmo_tensor_free(&out);
    nmo_case_free(&c);
}
