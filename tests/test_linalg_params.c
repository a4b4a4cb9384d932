/* Parameter sweeps and targeted inputs for the linear-algebra / attention operators
 * (numoracle issue 3). The registry-driven tests run every operator with its default
 * parameters; this file covers the rest:
 *  - reduction kinds 1 (mean) and 2 (max): correct variants never FAIL; kind-specific
 *    bugs (mean divided by N-1, max initialised with 0) FAIL;
 *  - sdpa: no causal mask, an explicit scale; the online-softmax model against online
 *    candidates with a rescale at every key (monotonically increasing scores), large
 *    steps and tiny steps; a FlashAttention-2 style kernel that feeds bf16 P to P.V
 *    passes under inter=bf16 and FAILs under the fused fp32 plan (the negative control);
 *  - sdpa_bwd: no causal mask; bf16 dS passes under inter=bf16;
 *  - conv2d: stride, padding, dilation, NHWC and groups; stride/dilation/layout/group bugs FAIL. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cand_util.h"
#include "harness.h"
#include "numoracle/numoracle.h"

typedef void (*fill_fn)(nmo_case *c, void *arg);
typedef nmo_status (*cand_fn)(const nmo_cand_args *a, nmo_err *err);

/* One case: op, candidate, plan, family (or a custom fill applied after it), params. */
static nmo_status run_case(nmo_report *rep, const char *opname, cand_fn cand, const nmo_plan *plan,
                           int fam, uint64_t seed, const char *shape, const double *param,
                           uint32_t pmask, fill_fn fill, void *arg)
{
    const nmo_op *op = nmo_op_find(opname);
    cr_assert(op, "no op %s", opname);
    nmo_err err = {{0}};
    int ns;
    int64_t sh[NMO_MAX_DIMS];
    cr_assert_eq(nmo_shape_parse(&ns, sh, shape, &err), NMO_OK);
    nmo_case c;
    int set[NMO_MAX_PARAMS] = {0};
    for (int k = 0; k < NMO_MAX_PARAMS; k++) set[k] = (pmask >> k) & 1u;
    nmo_status s = nmo_case_init_params(&c, op, plan, ns, sh, param, set, &err);
    cr_assert_eq(s, NMO_OK, "%s: %s", opname, err.msg);
    nmo_case_fill(&c, fam, seed);
    if (fill) {
        fill(&c, arg);
        if (op->derive) op->derive(&c);
    }
    nmo_tensor out[NMO_MAX_TENSORS];
    memset(out, 0, sizeof out);
    cr_assert_eq(nmo_case_alloc_outputs(&c, out, 0, &err), NMO_OK, "%s", err.msg);
    nmo_cand_args a = {c.in, c.n_in, out, c.n_out, c.param, op->n_param, &c.plan};
    s = cand(&a, &err);
    cr_assert_eq(s, NMO_OK, "%s candidate: %s", opname, err.msg);
    s = nmo_check(rep, &c, out, NULL, &err);
    cr_assert_eq(s, NMO_OK, "%s check: %s", opname, err.msg);
    for (int k = 0; k < c.n_out; k++) nmo_tensor_free(&out[k]);
    nmo_case_free(&c);
    return s;
}

static const nmo_fmt dts[3] = {NMO_FP32, NMO_BF16, NMO_FP16};

/* Every correct registry candidate of op: never FAIL over families x dtypes x seeds. */
static void sweep_correct(const char *opname, const char *const *shapes, int nshapes,
                          const double *param, uint32_t pmask, int seeds, const char *what)
{
    long runs = 0, inconc = 0;
    for (int ci = 0; ci < nmo_cand_count(); ci++) {
        const nmo_cand *cd = nmo_cand_at(ci);
        if (strcmp(cd->op, opname) != 0 || !cd->correct) continue;
        for (int d = 0; d < 3; d++)
            for (int f = 0; f < NMO_FAM_COUNT; f++)
                for (int s = 0; s < seeds; s++)
                    for (int h = 0; h < nshapes; h++) {
                        nmo_plan p;
                        nmo_plan_default(&p, dts[d]);
                        nmo_report rep;
                        run_case(&rep, opname, cd->run, &p, f, (uint64_t)s + 11, shapes[h], param, pmask, NULL,
                                 NULL);
                        runs++;
                        inconc += rep.verdict == NMO_INCONCLUSIVE;
                        cr_expect(rep.verdict != NMO_FAIL,
                                  "FALSE ALARM %s/%s (%s) dtype=%s family=%s seed=%d shape=%s: %lld fails, "
                                  "worst idx %lld cand %.9g R=[%.9g, %.9g]",
                                  opname, cd->name, what, nmo_fmt_name(dts[d]), nmo_family_name(f), s, shapes[h],
                                  (long long)rep.n_fail, (long long)rep.worst.index, rep.worst.cand, rep.worst.rlo,
                                  rep.worst.rhi);
                        nmo_report_free(&rep);
                    }
    }
    printf("%s %s: %ld runs of correct variants, %ld INCONCLUSIVE, none FAIL\n", opname, what, runs, inconc);
}

/* A candidate must FAIL on at least one family (any dtype). */
static void expect_caught(const char *opname, const char *name, cand_fn cand, const char *shape,
                          const double *param, uint32_t pmask, const nmo_plan *plan0)
{
    char row[256];
    int n = snprintf(row, sizeof row, "  %-10s %-22s", opname, name);
    int any = 0;
    for (int f = 0; f < NMO_FAM_COUNT; f++) {
        int caught = 0;
        for (int d = 0; d < 3 && !caught; d++) {
            nmo_plan p;
            if (plan0) p = *plan0;
            else nmo_plan_default(&p, dts[d]);
            if (plan0 && d) break;
            nmo_report rep;
            run_case(&rep, opname, cand, &p, f, 1, shape, param, pmask, NULL, NULL);
            caught = rep.verdict == NMO_FAIL;
            nmo_report_free(&rep);
        }
        any |= caught;
        n += snprintf(row + n, sizeof row - (size_t)n, " %-8s", caught ? "FAIL" : ".");
    }
    printf("%s\n", row);
    cr_expect(any, "%s/%s is never detected", opname, name);
}

static cand_fn reg_cand(const char *op, const char *name)
{
    const nmo_cand *c = nmo_cand_find(op, name);
    cr_assert(c, "no candidate %s/%s", op, name);
    return c->run;
}

/* ================================================================ reduction */

/* kind-specific bugs: sequential fp32 sum; mean over N-1; max started at 0 */
static nmo_status red_local(const nmo_cand_args *a, nmo_err *err, int bug)
{
    (void)err;
    const nmo_tensor *x = &a->in[0];
    int64_t N = x->dims[x->ndims - 1], M = nmo_cu_numel(x) / N;
    int kind = (int)a->param[0];
    float *xv = nmo_cu_load(x), *yv = malloc((size_t)M * sizeof(float));
    for (int64_t i = 0; i < M; i++) {
        float r = kind == 2 ? (bug == 2 ? 0.0f : -INFINITY) : 0.0f;
        for (int64_t j = 0; j < N; j++) r = kind == 2 ? fmaxf(r, xv[i * N + j]) : r + xv[i * N + j];
        if (kind == 1) r = r / (float)(bug == 1 ? N - 1 : N);
        yv[i] = r;
    }
    nmo_cu_store(&a->out[0], yv, nmo_cu_plan_store(a->plan));
    free(xv), free(yv);
    return NMO_OK;
}
static nmo_status red_seq_ok(const nmo_cand_args *a, nmo_err *err) { return red_local(a, err, 0); }
static nmo_status red_mean_n1(const nmo_cand_args *a, nmo_err *err) { return red_local(a, err, 1); }
static nmo_status red_max_init0(const nmo_cand_args *a, nmo_err *err) { return red_local(a, err, 2); }

Test(linalg_params, reduction_mean_and_max, .timeout = 600)
{
    static const char *const shapes[] = {"3x1025", "8x64"};
    for (int kind = 1; kind <= 2; kind++) {
        double par[1] = {kind};
        sweep_correct("reduction", shapes, 2, par, 1, 2, kind == 1 ? "kind=mean" : "kind=max");
        nmo_plan p;
        nmo_plan_default(&p, NMO_BF16);
        for (int f = 0; f < NMO_FAM_COUNT; f++) {
            nmo_report rep;
            run_case(&rep, "reduction", red_seq_ok, &p, f, 3, "5x333", par, 1, NULL, NULL);
            cr_expect(rep.verdict != NMO_FAIL, "local sequential reduction kind %d FAILs on %s", kind,
                      nmo_family_name(f));
            nmo_report_free(&rep);
        }
    }
    printf("  %-10s %-22s", "", "mutant");
    for (int f = 0; f < NMO_FAM_COUNT; f++) printf(" %-8.8s", nmo_family_name(f));
    printf("\n");
    double mean[1] = {1}, mx[1] = {2};
    expect_caught("reduction", "mean_n1 (kind=1)", red_mean_n1, "8x64", mean, 1, NULL);
    expect_caught("reduction", "max_init0 (kind=2)", red_max_init0, "64x16", mx, 1, NULL);
    expect_caught("reduction", "mut_acc_bf16 (kind=1)", reg_cand("reduction", "mut_acc_bf16"), "3x1025", mean, 1, NULL);
    expect_caught("reduction", "mut_skip_last (kind=1)", reg_cand("reduction", "mut_skip_last"), "3x1025", mean, 1, NULL);
}

/* ================================================================ sdpa */

Test(linalg_params, sdpa_no_mask_and_explicit_scale, .timeout = 600)
{
    static const char *const shapes[] = {"1x4x2x33x16", "2x2x1x16x8"};
    double nomask[2] = {0, 0}, scl[2] = {1, 0.3};
    sweep_correct("sdpa", shapes, 2, nomask, 1, 1, "causal=0");
    sweep_correct("sdpa", shapes + 1, 1, scl, 3, 1, "scale=0.3");
    const char *muts[] = {"mut_no_scale", "mut_gqa_mod", "mut_no_max", "mut_pv_acc_bf16", "mut_l_no_rescale"};
    for (int i = 0; i < 5; i++) expect_caught("sdpa", muts[i], reg_cand("sdpa", muts[i]), shapes[0], nomask, 1, NULL);
}

/* q_i = a (1 + noise), k_j = t_j (1 + noise) with t_j increasing: s_ij = sc q.k_j grows with
 * j, so the running max of an online kernel rises at every key (a rescale each time). */
typedef struct {
    double step;  /* score increase per key */
    int decrease; /* scores decreasing instead (no rescale after the first key) */
} ramp_arg;

static void ramp_fill(nmo_case *c, void *arg)
{
    const ramp_arg *r = arg;
    int64_t S = c->shape[3], D = c->shape[4];
    double sc = 1 / sqrt((double)D);
    nmo_tensor *q = &c->in[0], *k = &c->in[1];
    int64_t nq = nmo_tensor_numel(q), nk = nmo_tensor_numel(k);
    for (int64_t e = 0; e < nq; e++) nmo_tensor_set(q, e, 1 + 0.01 * nmo_gen_normal(99, 1, (uint64_t)e));
    for (int64_t e = 0; e < nk; e++) {
        int64_t j = (e / D) % S;
        double t = r->step * (double)(r->decrease ? S - j : j) / (sc * (double)D);
        nmo_tensor_set(k, e, t * (1 + 0.01 * nmo_gen_normal(99, 2, (uint64_t)e)));
    }
}

Test(linalg_params, sdpa_online_rescale_at_every_key, .timeout = 600)
{
    /* 64 keys: online1 rescales up to 63 times, flash16 up to 3 */
    const char *shape = "1x2x1x64x16";
    ramp_arg ramps[] = {{0.5, 0}, {0.05, 0}, {4.0, 0}, {0.5, 1}};
    long runs = 0;
    for (int ri = 0; ri < 4; ri++)
        for (int causal = 0; causal <= 1; causal++)
            for (int ci = 0; ci < nmo_cand_count(); ci++) {
                const nmo_cand *cd = nmo_cand_at(ci);
                if (strcmp(cd->op, "sdpa") != 0 || !cd->correct) continue;
                for (int d = 0; d < 3; d++) {
                    nmo_plan p;
                    nmo_plan_default(&p, dts[d]);
                    double par[2] = {causal, 0};
                    nmo_report rep;
                    run_case(&rep, "sdpa", cd->run, &p, NMO_FAM_GAUSSIAN, 5, shape, par, 1, ramp_fill, &ramps[ri]);
                    runs++;
                    cr_expect(rep.verdict != NMO_FAIL,
                              "FALSE ALARM sdpa/%s ramp step %g%s causal=%d dtype=%s: worst idx %lld cand %.9g "
                              "R=[%.9g, %.9g]",
                              cd->name, ramps[ri].step, ramps[ri].decrease ? " (decreasing)" : "", causal,
                              nmo_fmt_name(dts[d]), (long long)rep.worst.index, rep.worst.cand, rep.worst.rlo,
                              rep.worst.rhi);
                    if (d == 0 && causal == 0 && strcmp(cd->name, "online1_prescaled") == 0)
                        printf("sdpa ramp step %g%s, fp32, online1_prescaled: width (fp32 ulps) median %g p99 %g "
                               "max %lld, %lld inconclusive\n",
                               ramps[ri].step, ramps[ri].decrease ? " decreasing" : "",
                               nmo_report_width_quantile(&rep, 0.5), nmo_report_width_quantile(&rep, 0.99),
                               (long long)rep.width_max, (long long)rep.n_inconc);
                    nmo_report_free(&rep);
                }
            }
    printf("sdpa online-rescale ramps: %ld runs of correct variants, none FAIL\n", runs);
}

/* Exact scores: q_i = (1, 0, ..., 0), k_j = (t_j, noise...), explicit scale 1/4: every
 * s_ij = t_j / 4 is computed exactly by every kernel, so the enclosure width comes only
 * from exp, the rescales and the accumulation: the online terms are a large part of it. */
static void exact_ramp_fill(nmo_case *c, void *arg)
{
    const ramp_arg *r = arg;
    int64_t S = c->shape[3], D = c->shape[4];
    nmo_tensor *q = &c->in[0], *k = &c->in[1];
    int64_t nq = nmo_tensor_numel(q), nk = nmo_tensor_numel(k);
    for (int64_t e = 0; e < nq; e++) nmo_tensor_set(q, e, e % D == 0 ? 1.0 : 0.0);
    for (int64_t e = 0; e < nk; e++) {
        int64_t j = (e / D) % S;
        double t = 4 * r->step * (double)(r->decrease ? S - j : j);
        nmo_tensor_set(k, e, e % D == 0 ? t : nmo_gen_normal(98, 2, (uint64_t)e));
    }
}

Test(linalg_params, sdpa_online_exact_scores, .timeout = 600)
{
    const char *shape = "1x2x1x64x16";
    ramp_arg ramps[] = {{0.5, 0}, {0.125, 0}, {2.0, 0}, {0.5, 1}};
    for (int ri = 0; ri < 4; ri++)
        for (int ci = 0; ci < nmo_cand_count(); ci++) {
            const nmo_cand *cd = nmo_cand_at(ci);
            if (strcmp(cd->op, "sdpa") != 0 || !cd->correct) continue;
            for (int d = 0; d < 3; d++)
                for (int causal = 0; causal <= 1; causal++) {
                    nmo_plan p;
                    nmo_plan_default(&p, dts[d]);
                    double par[2] = {causal, 0.25};
                    nmo_report rep;
                    run_case(&rep, "sdpa", cd->run, &p, NMO_FAM_GAUSSIAN, 6, shape, par, 3, exact_ramp_fill,
                             &ramps[ri]);
                    cr_expect(rep.verdict != NMO_FAIL,
                              "FALSE ALARM sdpa/%s exact ramp step %g%s causal=%d dtype=%s: worst idx %lld cand "
                              "%.9g R=[%.9g, %.9g]",
                              cd->name, ramps[ri].step, ramps[ri].decrease ? " (decreasing)" : "", causal,
                              nmo_fmt_name(dts[d]), (long long)rep.worst.index, rep.worst.cand, rep.worst.rlo,
                              rep.worst.rhi);
                    if (d == 0 && causal == 0 && strcmp(cd->name, "online1_prescaled") == 0)
                        printf("sdpa exact-score ramp step %g%s, fp32: width (fp32 ulps) median %g p99 %g max %lld\n",
                               ramps[ri].step, ramps[ri].decrease ? " decreasing" : "",
                               nmo_report_width_quantile(&rep, 0.5), nmo_report_width_quantile(&rep, 0.99),
                               (long long)rep.width_max);
                    nmo_report_free(&rep);
                }
        }
}

/* FlashAttention-2 style: blocks of 16 keys, P rounded to bf16 for P.V, l from fp32 P */
static nmo_status fa2_bf16p(const nmo_cand_args *a, nmo_err *err)
{
    (void)err;
    const nmo_tensor *tq = &a->in[0], *tk = &a->in[1], *tv = &a->in[2];
    int64_t B = tq->dims[0], Hq = tq->dims[1], S = tq->dims[2], D = tq->dims[3], Hkv = tk->dims[1];
    int causal = a->param[0] != 0;
    float sc = 1.0f / sqrtf((float)D);
    float *qv = nmo_cu_load(tq), *kv = nmo_cu_load(tk), *vv = nmo_cu_load(tv);
    float *ov = malloc((size_t)(B * Hq * S * D) * sizeof(float)), s[4096], acc[256];
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < Hq; h++)
            for (int64_t i = 0; i < S; i++) {
                const float *K = kv + (b * Hkv + h / (Hq / Hkv)) * S * D, *V = vv + (b * Hkv + h / (Hq / Hkv)) * S * D;
                const float *qr = qv + ((b * Hq + h) * S + i) * D;
                int64_t n = causal ? i + 1 : S;
                for (int64_t j = 0; j < n; j++) s[j] = nmo_cu_sum_seq(qr, K + j * D, 0, D, 1, 1) * sc;
                float m = -INFINITY, l = 0;
                for (int64_t x = 0; x < D; x++) acc[x] = 0;
                for (int64_t lo = 0; lo < n; lo += 16) {
                    int64_t hi = lo + 16 < n ? lo + 16 : n;
                    float mn = m;
                    for (int64_t j = lo; j < hi; j++) mn = fmaxf(mn, s[j]);
                    float al = nmo_cu_expf(m - mn), rs = 0, p[16];
                    for (int64_t j = lo; j < hi; j++) rs += (p[j - lo] = nmo_cu_expf(s[j] - mn));
                    l = l * al + rs;
                    for (int64_t x = 0; x < D; x++) {
                        float t = acc[x] * al;
                        for (int64_t j = lo; j < hi; j++) t = fmaf(nmo_cu_round_bf16(p[j - lo]), V[j * D + x], t);
                        acc[x] = t;
                    }
                    m = mn;
                }
                for (int64_t x = 0; x < D; x++) ov[((b * Hq + h) * S + i) * D + x] = acc[x] / l;
            }
    nmo_cu_store(&a->out[0], ov, nmo_cu_plan_store(a->plan));
    free(qv), free(kv), free(vv), free(ov);
    return NMO_OK;
}

Test(linalg_params, sdpa_bf16_p_needs_inter_bf16, .timeout = 600)
{
    const char *shape = "1x4x2x33x16";
    double par[2] = {1, 0};
    long pass_runs = 0;
    for (int d = 0; d < 3; d++)
        for (int f = 0; f < NMO_FAM_COUNT; f++) {
            nmo_plan p;
            nmo_plan_default(&p, dts[d]);
            p.inter = NMO_BF16;
            nmo_report rep;
            run_case(&rep, "sdpa", fa2_bf16p, &p, f, 2, shape, par, 1, NULL, NULL);
            cr_expect(rep.verdict != NMO_FAIL, "bf16-P kernel FAILs under inter=bf16: dtype %s family %s",
                      nmo_fmt_name(dts[d]), nmo_family_name(f));
            pass_runs++;
            nmo_report_free(&rep);
        }
    /* and the same kernel under the fused fp32 plan: caught */
    nmo_plan p;
    nmo_plan_default(&p, NMO_FP32);
    expect_caught("sdpa", "fa2_bf16p (inter=fp32)", fa2_bf16p, shape, par, 1, &p);
    printf("sdpa bf16-P kernel: %ld runs under inter=bf16, none FAIL\n", pass_runs);
}

/* ================================================================ matmul split-K partials */

/* cuBLAS's reduced-precision reduction: split-K partials rounded to the output format
 * before the fp32 sum. Under inter=<dtype> (the cublas-rpr preset) the emulation never
 * FAILs on any family, seed or K (the bound of nmo_gemm_partials_k holds); under the
 * default plan it is caught (the partials' rounding is not a legitimate variation
 * there), so the plan field is honoured, not ignored. */
Test(linalg_params, matmul_split_k_partials_in_inter, .timeout = 600)
{
    const nmo_cand *cd = nmo_cand_find("matmul", "mut_rpr_splitk4");
    cr_assert(cd);
    const char *shapes[] = {"5x9x257", "3x7x2049", "2x3x31"};
    long runs = 0, inc = 0;
    for (int d = 0; d < 3; d++)
        for (int f = 0; f < NMO_FAM_COUNT; f++)
            for (int si = 0; si < 3; si++)
                for (uint64_t seed = 1; seed <= 3; seed++) {
                    nmo_plan p;
                    nmo_plan_default(&p, dts[d]);
                    p.inter = dts[d] == NMO_FP32 ? NMO_BF16 : dts[d]; /* fp32 out: bf16 partials */
                    nmo_report rep;
                    run_case(&rep, "matmul", cd->run, &p, f, seed, shapes[si], NULL, 0, NULL, NULL);
                    cr_expect(rep.verdict != NMO_FAIL, "split-K partials FAIL under inter=%s: %s %s %s seed %llu",
                              nmo_fmt_name(p.inter), nmo_fmt_name(dts[d]), nmo_family_name(f), shapes[si],
                              (unsigned long long)seed);
                    runs++;
                    inc += rep.verdict == NMO_INCONCLUSIVE;
                    nmo_report_free(&rep);
                }
    nmo_plan p;
    nmo_plan_default(&p, NMO_BF16);
    expect_caught("matmul", "mut_rpr_splitk4 (inter=fp32)", cd->run, "5x9x257", NULL, 0, &p);
    /* both engines agree under the partials plan (verdicts, R, enclosures and scales) */
    p.inter = NMO_BF16;
    nmo_test_shape sh = {3, {5, 9, 257}};
    for (int f = 0; f < NMO_FAM_COUNT; f++) {
        nmo_err err = {{0}};
        int64_t esc = 0, diff = nmo_test_engines_differ(nmo_op_find("matmul"), cd, &p, f, 1, &sh, &esc, &err);
        cr_expect_eq(diff, 0, "matmul inter=bf16 %s: %lld elements differ between the engines (%s)",
                     nmo_family_name(f), (long long)diff, err.msg);
    }
    printf("matmul split-K partials in inter: %ld runs, 0 FAIL, %ld INCONCLUSIVE\n", runs, inc);
}

/* ================================================================ sdpa_bwd */

Test(linalg_params, sdpa_bwd_no_mask_and_inter, .timeout = 600)
{
    static const char *const shapes[] = {"1x4x2x19x16", "2x2x1x16x8"};
    double nomask[2] = {0, 0};
    sweep_correct("sdpa_bwd", shapes, 2, nomask, 1, 1, "causal=0");
    const char *muts[] = {"mut_no_delta", "mut_dk_no_scale", "mut_gqa_last_head", "mut_p_no_scale"};
    for (int i = 0; i < 4; i++)
        expect_caught("sdpa_bwd", muts[i], reg_cand("sdpa_bwd", muts[i]), shapes[0], nomask, 1, NULL);
    /* dS fed in bf16 is what FA2 does: allowed by inter=bf16 */
    cand_fn ds = reg_cand("sdpa_bwd", "mut_ds_bf16");
    for (int d = 0; d < 3; d++)
        for (int f = 0; f < NMO_FAM_COUNT; f++) {
            nmo_plan p;
            nmo_plan_default(&p, dts[d]);
            p.inter = NMO_BF16;
            nmo_report rep;
            double par[2] = {1, 0};
            run_case(&rep, "sdpa_bwd", ds, &p, f, 4, shapes[0], par, 0, NULL, NULL);
            cr_expect(rep.verdict != NMO_FAIL, "bf16-dS kernel FAILs under inter=bf16: dtype %s family %s",
                      nmo_fmt_name(dts[d]), nmo_family_name(f));
            nmo_report_free(&rep);
        }
    /* GQA gradients summed over the query heads in the dtype (PyTorch's expand and sum):
     * allowed by inter=<dtype>, caught by the fused plan; causal and not, two group sizes */
    cand_fn gh = reg_cand("sdpa_bwd", "mut_gqa_heads_out");
    static const char *const gqa[] = {"1x4x2x19x16", "1x6x2x12x8"};
    for (int d = 1; d < 3; d++)
        for (int f = 0; f < NMO_FAM_COUNT; f++)
            for (int si = 0; si < 2; si++)
                for (int cz = 0; cz < 2; cz++) {
                    nmo_plan p;
                    nmo_plan_default(&p, dts[d]);
                    p.inter = dts[d];
                    nmo_report rep;
                    double par[2] = {cz, 0};
                    run_case(&rep, "sdpa_bwd", gh, &p, f, 3, gqa[si], par, 1, NULL, NULL);
                    cr_expect(rep.verdict != NMO_FAIL, "per-head GQA gradients FAIL under inter=%s: %s %s causal %d",
                              nmo_fmt_name(dts[d]), nmo_family_name(f), gqa[si], cz);
                    nmo_report_free(&rep);
                }
    nmo_plan pb;
    nmo_plan_default(&pb, NMO_BF16);
    expect_caught("sdpa_bwd", "mut_gqa_heads_out (inter=fp32)", gh, gqa[0], NULL, 0, &pb);
}

/* ================================================================ conv2d */

/* direct conv with bugs: 1 dilation ignored in the input index, 2 stride ignored,
 * 3 NHWC filter read in KCRS order */
static nmo_status conv_local(const nmo_cand_args *a, int bug)
{
    int64_t st = (int64_t)a->param[0], pad = (int64_t)a->param[1], dil = (int64_t)a->param[2];
    int lay = (int)a->param[3];
    const nmo_tensor *tx = &a->in[0], *tw = &a->in[1];
    int64_t N = tx->dims[0], K = tw->dims[0], C, H, W, R, S;
    if (lay == 0) C = tx->dims[1], H = tx->dims[2], W = tx->dims[3], R = tw->dims[2], S = tw->dims[3];
    else H = tx->dims[1], W = tx->dims[2], C = tx->dims[3], R = tw->dims[1], S = tw->dims[2];
    const nmo_tensor *ty = &a->out[0];
    int64_t P = lay == 0 ? ty->dims[2] : ty->dims[1], Q = lay == 0 ? ty->dims[3] : ty->dims[2];
    float *xv = nmo_cu_load(tx), *wv = nmo_cu_load(tw), *yv = malloc((size_t)nmo_cu_numel(ty) * sizeof(float));
    int64_t d_eff = bug == 1 ? 1 : dil, s_eff = bug == 2 ? 1 : st;
    for (int64_t n = 0; n < N; n++)
        for (int64_t k = 0; k < K; k++)
            for (int64_t p = 0; p < P; p++)
                for (int64_t q = 0; q < Q; q++) {
                    float acc = 0;
                    for (int64_t c = 0; c < C; c++)
                        for (int64_t r = 0; r < R; r++)
                            for (int64_t s = 0; s < S; s++) {
                                int64_t ih = p * s_eff - pad + r * d_eff, iw = q * s_eff - pad + s * d_eff;
                                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                                float xx = lay == 0 ? xv[((n * C + c) * H + ih) * W + iw] : xv[((n * H + ih) * W + iw) * C + c];
                                float ww = lay == 0 || bug == 3 ? wv[((k * C + c) * R + r) * S + s]
                                                                 : wv[((k * R + r) * S + s) * C + c];
                                acc = fmaf(xx, ww, acc);
                            }
                    yv[lay == 0 ? ((n * K + k) * P + p) * Q + q : ((n * P + p) * Q + q) * K + k] = acc;
                }
    nmo_cu_store(&a->out[0], yv, nmo_cu_plan_store(a->plan));
    free(xv), free(wv), free(yv);
    return NMO_OK;
}
static nmo_status conv_ok(const nmo_cand_args *a, nmo_err *e) { (void)e; return conv_local(a, 0); }
static nmo_status conv_no_dil(const nmo_cand_args *a, nmo_err *e) { (void)e; return conv_local(a, 1); }
static nmo_status conv_no_stride(const nmo_cand_args *a, nmo_err *e) { (void)e; return conv_local(a, 2); }
static nmo_status conv_w_kcrs(const nmo_cand_args *a, nmo_err *e) { (void)e; return conv_local(a, 3); }

/* grouped direct conv (NCHW) with bugs: 1 every group reads group 0's input channels,
 * 2 output channel k in group k % G (interleaved instead of blocked) */
static nmo_status conv_grp_local(const nmo_cand_args *a, int bug)
{
    int64_t st = (int64_t)a->param[0], pad = (int64_t)a->param[1], dil = (int64_t)a->param[2];
    int64_t G = (int64_t)a->param[4];
    const nmo_tensor *tx = &a->in[0], *tw = &a->in[1], *ty = &a->out[0];
    int64_t N = tx->dims[0], C = tx->dims[1], H = tx->dims[2], W = tx->dims[3];
    int64_t K = tw->dims[0], Cg = tw->dims[1], R = tw->dims[2], S = tw->dims[3], P = ty->dims[2], Q = ty->dims[3];
    float *xv = nmo_cu_load(tx), *wv = nmo_cu_load(tw), *yv = malloc((size_t)nmo_cu_numel(ty) * sizeof(float));
    for (int64_t n = 0; n < N; n++)
        for (int64_t k = 0; k < K; k++) {
            int64_t g = bug == 2 ? k % G : k / (K / G), c0 = bug == 1 ? 0 : g * Cg;
            for (int64_t p = 0; p < P; p++)
                for (int64_t q = 0; q < Q; q++) {
                    float acc = 0;
                    for (int64_t c = 0; c < Cg; c++)
                        for (int64_t r = 0; r < R; r++)
                            for (int64_t s2 = 0; s2 < S; s2++) {
                                int64_t ih = p * st - pad + r * dil, iw = q * st - pad + s2 * dil;
                                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                                acc = fmaf(xv[((n * C + c0 + c) * H + ih) * W + iw], wv[((k * Cg + c) * R + r) * S + s2], acc);
                            }
                    yv[((n * K + k) * P + p) * Q + q] = acc;
                }
        }
    nmo_cu_store(&a->out[0], yv, nmo_cu_plan_store(a->plan));
    free(xv), free(wv), free(yv);
    return NMO_OK;
}
static nmo_status conv_grp_ok(const nmo_cand_args *a, nmo_err *e) { (void)e; return conv_grp_local(a, 0); }
static nmo_status conv_grp_c0(const nmo_cand_args *a, nmo_err *e) { (void)e; return conv_grp_local(a, 1); }
static nmo_status conv_grp_mod(const nmo_cand_args *a, nmo_err *e) { (void)e; return conv_grp_local(a, 2); }

/* Grouped convolution (hipDNN/cuDNN: w [K, C/G, R, S]): the registry's correct variants
 * and a local direct kernel never FAIL; group-indexing bugs do. */
Test(linalg_params, conv2d_groups, .timeout = 600)
{
    static const char *const shapes[] = {"2x6x9x9x4x3x3", "1x8x7x7x8x1x1"};
    static const double cfgs[][5] = {{1, 1, 1, 0, 2}, {2, 1, 1, 1, 2}, {1, 0, 2, 0, 2}};
    for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++) {
        char what[80];
        snprintf(what, sizeof what, "groups=2 stride=%d pad=%d dil=%d layout=%d", (int)cfgs[i][0], (int)cfgs[i][1],
                 (int)cfgs[i][2], (int)cfgs[i][3]);
        sweep_correct("conv2d", shapes, 2, cfgs[i], 31, 1, what);
    }
    static const char *const dw[] = {"1x4x6x6x4x3x3"}; /* depthwise: G = C = K */
    double dwp[5] = {1, 1, 1, 0, 4};
    sweep_correct("conv2d", dw, 1, dwp, 31, 1, "depthwise groups=4");
    nmo_plan p;
    nmo_plan_default(&p, NMO_FP32);
    nmo_report rep;
    run_case(&rep, "conv2d", conv_grp_ok, &p, NMO_FAM_GAUSSIAN, 2, shapes[0], cfgs[0], 31, NULL, NULL);
    cr_expect(rep.verdict == NMO_PASS, "local grouped conv does not PASS");
    nmo_report_free(&rep);
    expect_caught("conv2d", "grp_c0 (groups=2)", conv_grp_c0, shapes[0], cfgs[0], 31, NULL);
    expect_caught("conv2d", "grp_mod (groups=2)", conv_grp_mod, shapes[0], cfgs[0], 31, NULL);
}

Test(linalg_params, conv2d_stride_padding_dilation_layout, .timeout = 600)
{
    static const char *const shapes[] = {"2x5x11x9x3x3x3", "1x8x7x7x4x1x1"};
    static const double cfgs[][4] = {
        {2, 0, 1, 0}, {1, 2, 2, 0}, {2, 1, 2, 1}, {1, 1, 1, 1}, {3, 2, 1, 1}, {1, 0, 1, 0},
    };
    for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++) {
        char what[64];
        snprintf(what, sizeof what, "stride=%d pad=%d dil=%d layout=%d", (int)cfgs[i][0], (int)cfgs[i][1],
                 (int)cfgs[i][2], (int)cfgs[i][3]);
        sweep_correct("conv2d", shapes, 2, cfgs[i], 15, 1, what);
        nmo_plan p;
        nmo_plan_default(&p, NMO_BF16);
        nmo_report rep;
        run_case(&rep, "conv2d", conv_ok, &p, NMO_FAM_GAUSSIAN, 2, shapes[0], cfgs[i], 15, NULL, NULL);
        cr_expect(rep.verdict != NMO_FAIL, "local direct conv FAILs (%s)", what);
        nmo_report_free(&rep);
    }
    double dil2[4] = {1, 2, 2, 1}, st2[4] = {2, 1, 1, 0}, nhwc[4] = {1, 1, 1, 1};
    expect_caught("conv2d", "no_dilation (dil=2)", conv_no_dil, shapes[0], dil2, 15, NULL);
    expect_caught("conv2d", "no_stride (stride=2)", conv_no_stride, shapes[0], st2, 15, NULL);
    expect_caught("conv2d", "w_kcrs (NHWC)", conv_w_kcrs, shapes[0], nhwc, 15, NULL);
    expect_caught("conv2d", "mut_flip (NHWC)", reg_cand("conv2d", "mut_flip"), shapes[0], nhwc, 15, NULL);
    expect_caught("conv2d", "mut_pad_off1 (stride 2)", reg_cand("conv2d", "mut_pad_off1"), shapes[0], st2, 15, NULL);
}

/* ================================================================ candidate hygiene */

/* Run cand on a generated case with outputs poisoned with byte `poison`; returns the
 * outputs (caller frees). */
static void run_raw(const char *opname, const nmo_cand *cd, nmo_fmt dt, int fam, const char *shape, int poison,
                    nmo_tensor *out, int *n_out)
{
    const nmo_op *op = nmo_op_find(opname);
    nmo_err err = {{0}};
    int ns;
    int64_t sh[NMO_MAX_DIMS];
    nmo_shape_parse(&ns, sh, shape, &err);
    nmo_plan p;
    nmo_plan_default(&p, dt);
    nmo_case c;
    cr_assert_eq(nmo_case_init(&c, op, &p, ns, sh, &err), NMO_OK);
    nmo_case_fill(&c, fam, 3);
    for (int k = 0; k < c.n_out; k++) {
        out[k] = c.out[k];
        out[k].data = NULL;
        out[k].own = 0;
        cr_assert_eq(nmo_tensor_alloc(&out[k], &err), NMO_OK);
        memset(out[k].data, poison, (size_t)nmo_tensor_numel(&out[k]) * nmo_fmt_bytes(dt));
    }
    *n_out = c.n_out;
    nmo_cand_args a = {c.in, c.n_in, out, c.n_out, c.param, op->n_param, &c.plan};
    cr_assert_eq(cd->run(&a, &err), NMO_OK, "%s/%s: %s", opname, cd->name, err.msg);
    nmo_case_free(&c);
}

static int same_outputs(const nmo_tensor *a, const nmo_tensor *b, int n)
{
    for (int k = 0; k < n; k++)
        if (memcmp(a[k].data, b[k].data, (size_t)nmo_tensor_numel(&a[k]) * nmo_fmt_bytes(a[k].dtype)) != 0)
            return 0;
    return 1;
}

/* Every candidate writes every output element (two poisons give the same bits) and is
 * deterministic; every correct variant differs bitwise from the default one somewhere
 * in fp32 (the variants really differ in arithmetic). */
Test(linalg_params, candidates_write_everything_and_differ, .timeout = 600)
{
    static const char *const ops[] = {"reduction", "matmul_bwd", "sdpa", "sdpa_bwd", "conv2d"};
    for (int o = 0; o < 5; o++) {
        const nmo_op *op = nmo_op_find(ops[o]);
        const char *shape = strchr(op->test_shapes, ';') + 1; /* the small one */
        char first[64];
        snprintf(first, sizeof first, "%.*s", (int)(strchr(op->test_shapes, ';') - op->test_shapes),
                 op->test_shapes);
        const nmo_cand *def = nmo_cand_find(ops[o], NULL);
        for (int ci = 0; ci < nmo_cand_count(); ci++) {
            const nmo_cand *cd = nmo_cand_at(ci);
            if (strcmp(cd->op, ops[o]) != 0) continue;
            nmo_tensor a[NMO_MAX_TENSORS], b[NMO_MAX_TENSORS];
            int n;
            run_raw(ops[o], cd, NMO_BF16, NMO_FAM_GAUSSIAN, shape, 0xff, a, &n);
            run_raw(ops[o], cd, NMO_BF16, NMO_FAM_GAUSSIAN, shape, 0x5a, b, &n);
            cr_expect(same_outputs(a, b, n), "%s/%s: not every element written, or not deterministic", ops[o],
                      cd->name);
            for (int k = 0; k < n; k++) nmo_tensor_free(&a[k]), nmo_tensor_free(&b[k]);
            if (!cd->correct || cd == def) continue;
            int differ = 0;
            for (int f = 0; f < NMO_FAM_COUNT && !differ; f++) {
                run_raw(ops[o], def, NMO_FP32, f, first, 0, a, &n);
                run_raw(ops[o], cd, NMO_FP32, f, first, 0, b, &n);
                differ = !same_outputs(a, b, n);
                for (int k = 0; k < n; k++) nmo_tensor_free(&a[k]), nmo_tensor_free(&b[k]);
            }
            cr_expect(differ, "%s/%s is bitwise identical to %s on every family", ops[o], cd->name, def->name);
        }
    }
}

/* The attention references keep fn=triton's flat exp figure (their contexts' exp_flat,
 * refs/sdpa.c: FlashAttention folds the scale into an FMA, an error growing with the row
 * max): R of sdpa and sdpa_bwd under fn=triton equals R under the same ulp table without
 * the argument-dependent figure (the name changed: nmo_plan_exp_ulps is flat for it), in
 * both engines. Control: softmax's R does narrow under fn=triton (the figure is live). */
static void bounds_of(nmo_report *rep, const char *opname, const nmo_plan *p, const char *shape, nmo_mode mode)
{
    const nmo_op *op = nmo_op_find(opname);
    nmo_err err = {{0}};
    int ns;
    int64_t sh[NMO_MAX_DIMS];
    cr_assert_eq(nmo_shape_parse(&ns, sh, shape, &err), NMO_OK);
    nmo_case c;
    cr_assert_eq(nmo_case_init(&c, op, p, ns, sh, &err), NMO_OK, "%s: %s", opname, err.msg);
    nmo_case_fill(&c, NMO_FAM_GAUSSIAN, 3);
    nmo_check_opts o = {.mode = mode, .keep_bounds = 1};
    cr_assert_eq(nmo_check(rep, &c, NULL, &o, &err), NMO_OK, "%s: %s", opname, err.msg);
    nmo_case_free(&c);
}

static int64_t bounds_differ(const char *opname, const char *shape, nmo_mode mode)
{
    nmo_plan t, f;
    nmo_plan_default(&t, NMO_FP32);
    cr_assert_eq(nmo_plan_parse(&t, "fn=triton", NULL), NMO_OK);
    f = t;
    snprintf(f.fn_name, sizeof f.fn_name, "flat"); /* the same table, the flat exp */
    cr_assert_eq(nmo_plan_exp_ulps(&f, 1.0), f.fn_ulps[NMO_FN_EXP]);
    cr_assert_lt(nmo_plan_exp_ulps(&t, 1.0), t.fn_ulps[NMO_FN_EXP]);
    nmo_report a, b;
    bounds_of(&a, opname, &t, shape, mode);
    bounds_of(&b, opname, &f, shape, mode);
    int64_t diff = 0, n = 0;
    for (int k = 0; k < a.n_out; k++)
        for (int64_t i = 0; i < a.out_n[k]; i++, n++)
            diff += a.rlo[k][i] != b.rlo[k][i] || a.rhi[k][i] != b.rhi[k][i];
    cr_assert_gt(n, 0);
    nmo_report_free(&a), nmo_report_free(&b);
    return diff;
}

Test(linalg_params, sdpa_exp_flat_under_triton, .timeout = 600)
{
    for (int m = 0; m < 2; m++) {
        nmo_mode mode = m ? NMO_MODE_CERT : NMO_MODE_ESCALATE;
        cr_expect_eq(bounds_differ("sdpa", "1x2x1x9x4", mode), 0, "sdpa mode %d", m);
        cr_expect_eq(bounds_differ("sdpa_bwd", "1x2x1x9x4", mode), 0, "sdpa_bwd mode %d", m);
        cr_expect_gt(bounds_differ("softmax", "3x17", mode), 0, "softmax mode %d (control)", m);
    }
}
