/* Recomputed statistics (nmo_case.absent: rms_norm_bwd's rstd, layer_norm_bwd's mean and
 * rstd). The reference encloses every recomputation the plan allows; these tests sample
 * recomputations a kernel really does and check they land inside:
 *
 *  stat: row by row, op->stat_fast (== stat_cert unless UNC) against sampled fp32
 *    implementations: every reduction shape of the CPU candidates (sequential, warp and
 *    block butterflies, float4 lanes, tiles, split-K, pairwise) and random binary trees
 *    (random FMA contraction of the squares), ss/N or ss*RN(1/N), and rstd as the
 *    correctly rounded value moved by up to 2 ulps (within CUDA rsqrtf's 2 ulps), the CUDA rsqrtf
 *    emulation, or 1.0f/sqrtf; every family, bf16/fp16/fp32 inputs, widths 1 to 4097.
 *    The tightest bound one sample reached is printed (it must come within a few ulps of
 *    the enclosure: otherwise the test could not catch a too-narrow one).
 *  end_to_end: every correct CPU candidate fed, row by row, with such sampled
 *    statistics instead of the derived ones, judged with the statistics absent: never FAIL.
 *  negative: statistics computed wrongly (rstd with N-1, rstd without eps, rstd one part
 *    in 2^10 off) make a correct candidate FAIL in the recompute mode on some family: the
 *    enclosure is not vacuous. Mutants still FAIL with the statistics absent. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "norm_cand_util.h"
#include "engine/enc_cert.h"
#include "engine/enc_fast.h"

#define MAXN 4097

/* ---- sampled recomputations --------------------------------------------------------- */

/* a random binary tree over the terms x_j^2 (sq = 1) or x_j (sq = 0): the leaves are kept
 * as pending products that a combination may fuse (fmaf) or round first */
static float tree_sum(const float *x, int64_t n, int sq, uint64_t seed)
{
    static float v[MAXN];
    static int pend[MAXN];
    int64_t m = n;
    for (int64_t j = 0; j < n; j++) v[j] = x[j], pend[j] = sq;
    for (uint64_t k = 0; m > 1; k++) {
        int64_t a = (int64_t)(nmo_gen_u64(seed, 40, k) % (uint64_t)m);
        int64_t b = (int64_t)(nmo_gen_u64(seed, 41, k) % (uint64_t)(m - 1));
        if (b >= a) b++;
        int fuse = (int)(nmo_gen_u64(seed, 42, k) & 1);
        if (pend[a] && (!pend[b] || fuse)) { /* keep the pending one in b */
            int64_t t = a;
            a = b;
            b = t;
        }
        float va = pend[a] ? v[a] * v[a] : v[a], r;
        if (pend[b]) r = fuse ? fmaf(v[b], v[b], va) : va + v[b] * v[b];
        else r = va + v[b];
        v[a] = r, pend[a] = 0;
        v[b] = v[m - 1], pend[b] = pend[m - 1];
        m--;
    }
    return pend[0] ? v[0] * v[0] : v[0];
}

/* the row sum (sq: of squares) by implementation `impl`: 0..6 the candidates' shapes
 * (FMA or not by fma), 7 a random tree */
static float row_sum(const float *x, int64_t n, int sq, int impl, int fma, uint64_t seed)
{
    if (impl == 7) return tree_sum(x, n, sq, seed);
    return nmo_cu_reduce(x, sq ? x : NULL, n, (nmo_cu_red)impl, fma);
}

/* rstd from v = var + eps: a value within CUDA's documented 2 ulps of the exact
 * 1/sqrt(v) (the correctly rounded one moved by up to 2 steps, as far as that stays
 * within 2 ulps), the CUDA emulation, or 1/sqrtf */
static float rstd_of(float v, int how)
{
    if (how < 5) {
        float r = nmo_cu_rsqrtf_cr(v);
        long double ex = 1.0L / sqrtl((long double)v);
        for (int k = 0; k < abs(how - 2); k++) {
            float t = nmo_cu_nudge(r, how < 2 ? -1 : 1);
            if (fabsl((long double)t - ex) > 2.0L * nmo_fmt_ulp(NMO_FP32, (double)ex)) break;
            r = t;
        }
        return r;
    }
    if (how == 5) return nmo_cu_rsqrtf(v);
    return 1.0f / sqrtf(v);
}

typedef struct {
    int impl, fma, recip, how;
    /* wrong recomputations (negative controls) */
    int n1, no_eps;
    float scale;
} stat_impl;

static stat_impl draw_impl(uint64_t seed, uint64_t i)
{
    uint64_t h = nmo_gen_u64(seed, 50, i);
    stat_impl s = {(int)(h % 8), (int)((h >> 3) & 1), (int)((h >> 4) & 1), (int)((h >> 5) % 7), 0, 0, 1.0f};
    return s;
}

/* rms_norm: rstd = rsqrt(sum x^2 / N + eps) */
static float rms_rstd(const float *x, int64_t n, float eps, const stat_impl *s, uint64_t seed)
{
    float ss = row_sum(x, n, 1, s->impl, s->fma, seed);
    float nf = (float)(s->n1 && n > 1 ? n - 1 : n);
    float ms = s->recip ? ss * (1.0f / nf) : ss / nf;
    float v = s->no_eps ? ms : ms + eps;
    return rstd_of(v, s->how) * s->scale;
}

/* layer_norm two-pass: mean, then rstd of the deviations */
static void ln_stats(const float *x, int64_t n, float eps, const stat_impl *s, uint64_t seed, float *mean,
                     float *rstd)
{
    static float d[MAXN];
    float nf = (float)n, sum = row_sum(x, n, 0, s->impl, s->fma, seed);
    float m = s->recip ? sum * (1.0f / nf) : sum / nf;
    for (int64_t j = 0; j < n; j++) d[j] = x[j] - m;
    float ss = row_sum(d, n, 1, s->impl, s->fma, seed ^ 0x9e37);
    float vn = (float)(s->n1 && n > 1 ? n - 1 : n);
    float var = s->recip ? ss * (1.0f / vn) : ss / vn;
    float v = s->no_eps ? var : var + eps;
    *mean = m;
    *rstd = rstd_of(v, s->how) * s->scale;
}

/* the statistics of row i of case c by s: into the optional inputs (in[3], in[4]) */
static void put_stats(nmo_case *c, int64_t i, const stat_impl *s, uint64_t seed)
{
    static float x[MAXN];
    int64_t n = c->in[2].dims[0];
    for (int64_t j = 0; j < n; j++) x[j] = (float)nmo_tensor_get(&c->in[1], i * n + j);
    float eps = (float)c->param[0];
    if (strcmp(c->op->name, "rms_norm_bwd") == 0) {
        nmo_tensor_set(&c->in[3], i, rms_rstd(x, n, eps, s, seed));
    } else {
        float m, r;
        ln_stats(x, n, eps, s, seed, &m, &r);
        nmo_tensor_set(&c->in[3], i, m);
        nmo_tensor_set(&c->in[4], i, r);
    }
}

static const char *const stat_ops[2] = {"rms_norm_bwd", "layer_norm_bwd"};

/* ---- stat: samples inside the enclosures -------------------------------------------- */

Test(stat, sampled_recomputations_inside, .timeout = 900)
{
    static const int64_t widths[] = {1, 2, 3, 5, 7, 64, 1025, 4097};
    long checked = 0, bad = 0, mismatch = 0;
    double closest = INFINITY; /* ulps between a sample and the nearer bound, over all */
    for (int oi = 0; oi < 2; oi++) {
        const nmo_op *op = nmo_op_find(stat_ops[oi]);
        cr_assert(op && op->stat_fast && op->stat_cert);
        uint32_t opt = nmo_op_optional_mask(op);
        for (int d = 0; d < 3; d++)
            for (int f = 0; f < NMO_FAM_COUNT; f++)
                for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++) {
                    nmo_plan p;
                    nmo_plan_default(&p, nmo_test_dtypes[d]);
                    int64_t rows = widths[wi] > 1000 ? 3 : 8, shape[2] = {rows, widths[wi]};
                    nmo_case c;
                    nmo_err err = {{0}};
                    cr_assert_eq(nmo_case_init(&c, op, &p, 2, shape, &err), NMO_OK, "%s", err.msg);
                    nmo_case_fill(&c, f, 11 + (uint64_t)wi);
                    nmo_fctx fc;
                    nmo_cctx cc;
                    nmo_fctx_init(&fc, &c.plan, NULL);
                    nmo_cctx_init(&cc, &c.plan, NULL);
                    for (int64_t i = 0; i < rows; i++) {
                        nmo_fenc ef[NMO_MAX_TENSORS], ec[NMO_MAX_TENSORS];
                        op->stat_fast(&fc, &c, i, ef);
                        op->stat_cert(&cc, &c, i, ec);
                        for (int k = 0; k < c.n_in; k++) {
                            if (!(opt & (1u << k)) || (ef[k].flags & NMO_EF_UNC)) continue;
                            if (ef[k].lo != ec[k].lo || ef[k].hi != ec[k].hi) mismatch++;
                        }
                        for (int t = 0; t < 48; t++) {
                            uint64_t sd = (uint64_t)(((oi * 3 + d) * 7 + f) * 16 + (int)wi) * 1000 + (uint64_t)i * 64 + (uint64_t)t;
                            stat_impl s = draw_impl(sd, 0);
                            if (t < 8) s.impl = t; /* every shape on every row */
                            put_stats(&c, i, &s, sd);
                            for (int k = 0; k < c.n_in; k++) {
                                if (!(opt & (1u << k))) continue;
                                double v = nmo_tensor_get(&c.in[k], i);
                                checked++;
                                if (!(v >= ec[k].lo && v <= ec[k].hi)) {
                                    bad++;
                                    if (bad < 10)
                                        cr_log_error("%s %s %s n=%lld row %lld input %s: impl %d fma %d recip %d "
                                                     "rsqrt %d gives %a outside [%a, %a]",
                                                     op->name, nmo_fmt_name(nmo_test_dtypes[d]), nmo_family_name(f),
                                                     (long long)widths[wi], (long long)i, op->in[k].name, s.impl,
                                                     s.fma, s.recip, s.how, v, ec[k].lo, ec[k].hi);
                                    continue;
                                }
                                double u = nmo_fmt_ulp(NMO_FP32, v);
                                double gap = fmin(v - ec[k].lo, ec[k].hi - v) / u;
                                if (gap < closest) closest = gap;
                            }
                        }
                    }
                    nmo_fctx_clear(&fc);
                    nmo_cctx_clear(&cc);
                    nmo_case_free(&c);
                }
    }
    printf("stat: %ld sampled statistics, %ld outside, %ld fast/certified mismatches; closest to a bound: "
           "%g ulps\n", checked, bad, mismatch, closest);
    cr_expect_eq(bad, 0);
    cr_expect_eq(mismatch, 0);
    cr_expect_leq(closest, 1.0, "no sample came within 1 ulp of a bound: the test could not fail");
}

/* ---- end to end --------------------------------------------------------------------- */

/* Run candidate cd on case (op, dtype, family, seed, shape) whose statistics rows come
 * from `mk` (NULL: derived), judge it with the optional inputs absent. */
static nmo_verdict run_with_stats(const nmo_op *op, const nmo_cand *cd, nmo_fmt dt, int f, uint64_t seed,
                                  const nmo_test_shape *sh, const stat_impl *fixed, nmo_report *rep_out)
{
    nmo_plan p;
    nmo_plan_default(&p, dt);
    nmo_case c;
    nmo_err err = {{0}};
    cr_assert_eq(nmo_case_init(&c, op, &p, sh->nshape, sh->shape, &err), NMO_OK, "%s", err.msg);
    nmo_case_fill(&c, f, seed);
    int64_t rows = c.in[3].dims[0];
    for (int64_t i = 0; i < rows; i++) {
        stat_impl s = fixed ? *fixed : draw_impl(seed * 131 + (uint64_t)f, (uint64_t)i);
        put_stats(&c, i, &s, seed * 7919 + (uint64_t)i);
    }
    nmo_tensor out[NMO_MAX_TENSORS];
    memset(out, 0, sizeof out);
    cr_assert_eq(nmo_case_alloc_outputs(&c, out, 0, &err), NMO_OK, "%s", err.msg);
    nmo_cand_args a = {c.in, c.n_in, out, c.n_out, c.param, op->n_param, &c.plan};
    cr_assert_eq(cd->run(&a, &err), NMO_OK, "%s", err.msg);
    c.absent = nmo_op_optional_mask(op);
    nmo_report rep;
    cr_assert_eq(nmo_check(&rep, &c, out, NULL, &err), NMO_OK, "%s", err.msg);
    nmo_verdict v = rep.verdict;
    if (rep_out) *rep_out = rep;
    else nmo_report_free(&rep);
    for (int k = 0; k < c.n_out; k++) nmo_tensor_free(&out[k]);
    nmo_case_free(&c);
    return v;
}

Test(end_to_end, correct_candidates_on_sampled_statistics, .timeout = 900)
{
    long runs = 0, fails = 0, inconc = 0;
    for (int oi = 0; oi < 2; oi++) {
        const nmo_op *op = nmo_op_find(stat_ops[oi]);
        nmo_test_shape sh[4];
        int nsh = nmo_test_shapes(op, sh, 0);
        for (int ci = 0; ci < nmo_cand_count(); ci++) {
            const nmo_cand *cd = nmo_cand_at(ci);
            if (strcmp(cd->op, op->name) != 0 || !cd->correct) continue;
            for (int d = 0; d < 3; d++)
                for (int f = 0; f < NMO_FAM_COUNT; f++)
                    for (uint64_t s = 1; s <= 3; s++)
                        for (int h = 0; h < nsh; h++) {
                            nmo_report rep;
                            nmo_verdict v = run_with_stats(op, cd, nmo_test_dtypes[d], f, s, &sh[h], NULL, &rep);
                            runs++;
                            inconc += v == NMO_INCONCLUSIVE;
                            if (v == NMO_FAIL) {
                                fails++;
                                cr_expect(0, "FALSE ALARM %s/%s %s %s seed %d shape#%d: %lld fails, worst %lld "
                                             "cand %.9g R=[%.9g, %.9g]",
                                          op->name, cd->name, nmo_fmt_name(nmo_test_dtypes[d]), nmo_family_name(f),
                                          (int)s, h, (long long)rep.n_fail, (long long)rep.worst.index,
                                          rep.worst.cand, rep.worst.rlo, rep.worst.rhi);
                            }
                            nmo_report_free(&rep);
                        }
        }
    }
    printf("end_to_end: %ld runs on sampled statistics, %ld FAIL, %ld INCONCLUSIVE\n", runs, fails, inconc);
    cr_expect_eq(fails, 0);
}

/* ---- negative controls -------------------------------------------------------------- */

static int fails_somewhere(const nmo_op *op, const nmo_cand *cd, nmo_fmt dt, const stat_impl *wrong)
{
    nmo_test_shape sh[4];
    int nsh = nmo_test_shapes(op, sh, 0);
    for (int f = 0; f < NMO_FAM_COUNT; f++)
        for (int h = 0; h < nsh; h++)
            if (run_with_stats(op, cd, dt, f, 5, &sh[h], wrong, NULL) == NMO_FAIL) return 1;
    return 0;
}

Test(negative, wrong_statistics_fail, .timeout = 900)
{
    for (int oi = 0; oi < 2; oi++) {
        const nmo_op *op = nmo_op_find(stat_ops[oi]);
        const nmo_cand *cd = nmo_cand_find(op->name, NULL);
        stat_impl n1 = {0, 0, 0, 2, 1, 0, 1.0f}, noeps = {0, 0, 0, 2, 0, 1, 1.0f};
        stat_impl off = {0, 0, 0, 2, 0, 0, 1.0f + 0x1p-10f};
        cr_expect(fails_somewhere(op, cd, NMO_BF16, &n1), "%s: rstd with N-1 passes", op->name);
        cr_expect(fails_somewhere(op, cd, NMO_FP32, &noeps), "%s: rstd without eps passes", op->name);
        cr_expect(fails_somewhere(op, cd, NMO_FP32, &off), "%s: rstd 2^-10 off passes", op->name);
    }
}

Test(negative, mutants_fail_with_statistics_absent, .timeout = 900)
{
    for (int oi = 0; oi < 2; oi++) {
        const nmo_op *op = nmo_op_find(stat_ops[oi]);
        uint32_t opt = nmo_op_optional_mask(op);
        nmo_test_shape sh[4];
        int nsh = nmo_test_shapes(op, sh, 0);
        for (int ci = 0; ci < nmo_cand_count(); ci++) {
            const nmo_cand *cd = nmo_cand_at(ci);
            /* mutants only: a candidate with a plan of its own follows that plan */
            if (strcmp(cd->op, op->name) != 0 || cd->correct || cd->plan) continue;
            int caught = 0;
            for (int d = 0; d < 3 && !caught; d++)
                for (int f = 0; f < NMO_FAM_COUNT && !caught; f++)
                    for (int h = 0; h < nsh && !caught; h++) {
                        nmo_report rep;
                        nmo_err err = {{0}};
                        cr_assert_eq(nmo_test_run_absent(&rep, op, cd, nmo_test_dtypes[d], f, 1, &sh[h], NULL,
                                                         opt, &err),
                                     NMO_OK, "%s", err.msg);
                        caught = rep.verdict == NMO_FAIL;
                        nmo_report_free(&rep);
                    }
            cr_expect(caught, "%s/%s: the mutant never FAILs with the statistics recomputed", op->name, cd->name);
        }
    }
}

/* ---- sdpa_bwd with o absent ------------------------------------------------------------- */

extern const nmo_cand nmo_cand_sdpa_bwd_math;

/* PyTorch's math SDPA backward (D_i from its own fp32 P, o never read) with o absent: never
 * FAILs, and PASSes in most runs. Negative control: the math candidate judged with the stored
 * bf16 o given FAILs somewhere: the given-o model really differs, so the absent mode is
 * what the math backend needs (on the H200 its bf16 gradients FAILed with o given). */
Test(sdpa_bwd, math_backward_with_o_absent, .timeout = 900)
{
    const nmo_op *op = nmo_op_find("sdpa_bwd");
    cr_assert(op && (nmo_op_optional_mask(op) & (1u << 3)));
    const nmo_cand *cands[1] = {&nmo_cand_sdpa_bwd_math};
    nmo_test_shape sh[4];
    int nsh = nmo_test_shapes(op, sh, 0);
    long runs = 0, fails = 0, pass = 0, given_fail = 0;
    for (int ci = 0; ci < 1; ci++)
        for (int d = 0; d < 3; d++)
            for (int f = 0; f < NMO_FAM_COUNT; f++)
                for (int h = 0; h < nsh; h++) {
                    nmo_report rep;
                    nmo_err err = {{0}};
                    cr_assert_eq(nmo_test_run_absent(&rep, op, cands[ci], nmo_test_dtypes[d], f, 1, &sh[h], NULL,
                                                     1u << 3, &err),
                                 NMO_OK, "%s", err.msg);
                    runs++;
                    fails += rep.verdict == NMO_FAIL;
                    pass += rep.verdict == NMO_PASS;
                    if (rep.verdict == NMO_FAIL)
                        cr_log_error("%s %s family %d shape %d: FAIL with o absent", cands[ci]->name,
                                     nmo_fmt_name(nmo_test_dtypes[d]), f, h);
                    nmo_report_free(&rep);
                    if (ci == 0 && nmo_test_dtypes[d] == NMO_BF16) {
                        cr_assert_eq(nmo_test_run_absent(&rep, op, cands[0], NMO_BF16, f, 1, &sh[h], NULL, 0, &err),
                                     NMO_OK, "%s", err.msg);
                        given_fail += rep.verdict == NMO_FAIL;
                        nmo_report_free(&rep);
                    }
                }
    printf("sdpa_bwd o absent: %ld runs, %ld PASS, %ld FAIL; math candidate with bf16 o given: %ld FAIL\n", runs,
           pass, fails, given_fail);
    cr_expect_eq(fails, 0);
    cr_expect(pass * 10 >= runs * 8, "only %ld of %ld PASS", pass, runs);
    cr_expect(given_fail > 0, "the math candidate never FAILs with o given: the absent mode is untested");
}
