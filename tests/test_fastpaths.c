/* The fast engine's shortcut paths (numoracle issue 2, performance) against what they
 * replace, so that a wrong shortcut fails here directly and not only through a whole
 * operator:
 *  1. nmo_fe_snap's fp32 fast paths (nmo_fe_rn32_try for RNE, the nearest-value test for
 *     RD/RU/RZ): whenever the result carries no UNC flag it must equal the exact rounding
 *     (MPFR) of every point within e of v (the snap's contract), and of every point
 *     within its full margin ee where the general check alone would be uncertain; and it
 *     must be exactly as decisive as the general check it short-cuts (same value, no UNC,
 *     wherever the general check is certain). Values sit on fp32 values, on midpoints,
 *     and at distances around the radius from both, in every binade class (subnormal,
 *     smallest normal, powers of two, near FLT_MAX).
 *  2. nmo_fenc_mul3_row (the vectorized row kernel) equals nmo_fenc_mul3 element by
 *     element (value and flags), on rows holding zeros, NaN, infinities, subnormals and
 *     huge values, under the default and the ftz plans, and equals the certified
 *     engine's row wherever it does not flag UNC.
 *  3. nmo_fe_sum_exact64 (a sum of exact point terms closed with no binary64 summation
 *     radius): wherever it holds, the binary64 sum in every order tried (index order,
 *     reversed, shuffles, a pairwise tree) and the sum of magnitudes are exact (MPFR);
 *     sets just above its bound sum|t| < 2^53 Q must show an inexact order somewhere, so
 *     a looser bound fails here. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/enc_cert.h"
#include "engine/enc_fast.h"
#include "numoracle/numoracle.h"

/* The general check of nmo_fe_snap (what the fast paths short-cut), verbatim. */
static double snap_general(const nmo_fctx *c, nmo_fmt f, nmo_rnd r, double v, double e, uint32_t *fl)
{
    double ee = e + fabs(v) * 0x1p-50 + 0x1p-1060;
    double a = nmo_fe_round(c, f, v, r);
    if (nmo_fe_round(c, f, v - ee, r) != a || nmo_fe_round(c, f, v + ee, r) != a) *fl |= NMO_EF_UNC;
    *fl |= c->force_unc;
    return a;
}

static const nmo_rnd rmodes[4] = {NMO_RNE, NMO_RD, NMO_RU, NMO_RZ};

Test(fastpaths, snap_fp32_equals_exact_rounding, .timeout = 600)
{
    nmo_plan p;
    nmo_plan_default(&p, NMO_BF16);
    nmo_fctx fc;
    nmo_fctx_init(&fc, &p, NULL);
    cr_assert(fc.fp32rn);
    mpfr_t x;
    mpfr_init2(x, 2200);
    long checked = 0, bad = 0, lessdec = 0, decided = 0;
    /* base fp32 values: every binade class */
    double bases[] = {0x1p-149, 0x3p-149, 0x1p-127, 0x1.fffffcp-127, 0x1p-126, 0x1.000002p-126,
                      0x1p-100, 1.0, 0x1.000002p0, 0x1.fffffep0, 2.0, 3.0, 0x1.234568p10, 0x1p24,
                      0x1.fffffcp127, 0x1.fffffep127, 0x1p127, 0.1f, 1e-3f, 65504.0};
    int nb = (int)(sizeof bases / sizeof bases[0]);
    for (int bi = 0; bi < nb; bi++)
        for (int sg = 0; sg < 2; sg++) {
            double b = sg ? -bases[bi] : bases[bi];
            double up = nmo_fmt_next_up(NMO_FP32, b), dn = nmo_fmt_next_down(NMO_FP32, b);
            /* anchors: the value, both midpoints, and points between */
            double anchors[7] = {b, (b + up) / 2, (b + dn) / 2, b + (up - b) / 4, b + (dn - b) / 4,
                                 b + 3 * (up - b) / 8, b + (up - b) * 0.49};
            for (int ai = 0; ai < 7; ai++) {
                double a = anchors[ai];
                if (!isfinite(a)) continue;
                double scale = fabs(a) > 0 ? fabs(a) : 0x1p-149;
                double offs[] = {0, 0x1p-60, -0x1p-60, 0x1p-51, -0x1p-51, 0x1p-49, -0x1p-49, 0x1p-45, -0x1p-45, 0x1p-30};
                double errs[] = {0, 0x1p-53, 0x1p-50, 0x1p-47, 0x1p-40, 0x1p-26, 0x1p-20};
                for (size_t oi = 0; oi < sizeof offs / sizeof offs[0]; oi++)
                    for (size_t ei = 0; ei < sizeof errs / sizeof errs[0]; ei++)
                        for (int ri = 0; ri < 4; ri++) {
                            double v = a + offs[oi] * scale, e = errs[ei] * scale;
                            if (!isfinite(v)) continue;
                            nmo_rnd r = rmodes[ri];
                            uint32_t ff = 0, fg = 0;
                            double rf = nmo_fe_snap(&fc, NMO_FP32, r, v, e, &ff);
                            double rg = snap_general(&fc, NMO_FP32, r, v, e, &fg);
                            checked++;
                            if (!(fg & NMO_EF_UNC) && ((ff & NMO_EF_UNC) || rf != rg)) {
                                lessdec++;
                                if (lessdec < 5)
                                    cr_log_error("snap r=%d v=%a e=%a: fast %a (unc %d), general %a certain", (int)r, v, e,
                                                 rf, !!(ff & NMO_EF_UNC), rg);
                            }
                            if (ff & NMO_EF_UNC) continue;
                            decided++;
                            /* every point of [v - e, v + e] rounds to rf (the contract: the
                             * value snapped lies within e of v). Where only the fast path is
                             * certain, its own claim is checked: the whole exact interval
                             * [v - ee, v + ee] (the general check evaluates v +- ee in
                             * binary64, which the margin in ee is there to absorb). */
                            double ee = e + fabs(v) * 0x1p-50 + 0x1p-1060;
                            double rad = (fg & NMO_EF_UNC) ? ee : e;
                            for (int side = -1; side <= 1; side++) {
                                mpfr_set_d(x, v, MPFR_RNDN);
                                if (side < 0) mpfr_sub_d(x, x, rad, MPFR_RNDN);
                                if (side > 0) mpfr_add_d(x, x, rad, MPFR_RNDN);
                                double want = nmo_fmt_round_mpfr(NMO_FP32, x, r, 0);
                                if (want != rf) {
                                    bad++;
                                    if (bad < 5)
                                        cr_log_error("snap r=%d v=%a e=%a side %d: %a, exact rounding %a", (int)r, v,
                                                     e, side, rf, want);
                                }
                            }
                        }
            }
        }
    mpfr_clear(x);
    nmo_fctx_clear(&fc);
    printf("snap fast paths: %ld cases, %ld decided, %ld wrong, %ld less decisive than the general check\n",
           checked, decided, bad, lessdec);
    cr_expect_eq(bad, 0);
    cr_expect_eq(lessdec, 0);
    cr_expect(decided > checked / 4, "the fast paths decided too few cases to be tested");
}

/* a row of inputs with the special values a kernel can meet */
static double row_val(int64_t j, int which)
{
    double g = nmo_gen_normal(11 + (uint64_t)which, 3, (uint64_t)j);
    double v = nmo_fmt_round(NMO_BF16, g * ldexp(1, (int)(nmo_gen_u64(5, (uint64_t)which, (uint64_t)j) % 7) - 3), NMO_RNE, 0);
    switch (j % 37) {
    case 3: return 0.0;
    case 5: return -0.0;
    case 7: return which ? 0x1p-130 : -0x1p-133; /* subnormal in fp32 */
    case 11: return 0x1p-140;
    case 13: return which ? 3e38 : -2e38;
    case 17: return j % 74 == 17 ? NAN : v;
    case 19: return which ? INFINITY : v;
    case 23: return 1.0;
    case 29: return 0x1p-126;
    default: return v;
    }
}

static int g_pow2_rows; /* 1: rows of powers of two: the formula lands on fp32 midpoints; 2: zeros */
static long g_zero_unc, g_zero_dec; /* zero products (no ftz) left undecided / decided */

static void mul3_row_case(int ftz, double rl, double rh, long *mism, long *cmism, long *n_unc, long *n_all)
{
    nmo_plan p;
    nmo_plan_default(&p, NMO_BF16);
    p.ftz = ftz;
    nmo_fctx fc;
    nmo_cctx cc;
    nmo_fctx_init(&fc, &p, NULL);
    nmo_cctx_init(&cc, &p, NULL);
    enum { N = 1500 };
    double x[N], w[N];
    for (int64_t j = 0; j < N; j++) x[j] = row_val(j, 0), w[j] = row_val(j * 7 + 1, 1);
    if (g_pow2_rows == 2) /* small integers with zeros: x w = 0 leaves -+eta M, a midpoint when M is odd */
        for (int64_t j = 0; j < N; j++) {
            x[j] = j % 4 == 0 ? 0.0 : (double)((int64_t)(j % 17) - 8);
            w[j] = j % 5 == 0 ? 0.0 : (double)((int64_t)((j * 7) % 13) - 6);
        }
    else if (g_pow2_rows)
        for (int64_t j = 0; j < N; j++) {
            x[j] = ldexp(j % 3 ? 1.0 : -1.0, (int)(j % 11) - 5);
            w[j] = j % 5 == 0 ? 1.5 : ldexp(1.0, (int)(j % 7) - 3);
        }
    nmo_fenc r = {rl, rh, 0, nmo_mag_abs(rl, rh)}, row[N], rc[N];
    nmo_fenc_mul3_row(&fc, row, x, &r, w, N);
    nmo_cenc cr;
    nmo_cenc_init(&cc, &cr);
    mpfr_set_d(cr.lo, rl, MPFR_RNDN);
    mpfr_set_d(cr.hi, rh, MPFR_RNDN);
    cr.flags = 0, cr.mag = r.mag;
    nmo_cenc_mul3_row(&cc, rc, x, &cr, w, N);
    nmo_cenc_clear(&cc, &cr);
    for (int64_t j = 0; j < N; j++) {
        nmo_fenc xe, we, y;
        nmo_fenc_set_d(&fc, &xe, x[j]);
        nmo_fenc_set_d(&fc, &we, w[j]);
        nmo_fenc_mul3(&fc, &y, &xe, &r, &we);
        int same = ((y.lo == row[j].lo) || (y.lo != y.lo && row[j].lo != row[j].lo)) &&
                   ((y.hi == row[j].hi) || (y.hi != y.hi && row[j].hi != row[j].hi)) && y.flags == row[j].flags &&
                   nmo_mag_same(y.mag, row[j].mag);
        if (!same) {
            (*mism)++;
            if (*mism < 5)
                cr_log_error("mul3_row ftz=%d j=%ld x=%a w=%a: row [%a,%a] %u, mul3 [%a,%a] %u", ftz, (long)j, x[j], w[j],
                             row[j].lo, row[j].hi, row[j].flags, y.lo, y.hi, y.flags);
        }
        (*n_all)++;
        if (row[j].flags & NMO_EF_UNC) {
            (*n_unc)++;
            g_zero_unc += !ftz && x[j] * w[j] == 0;
            continue;
        }
        g_zero_dec += !ftz && x[j] * w[j] == 0;
        int csame = ((rc[j].lo == row[j].lo) || (rc[j].lo != rc[j].lo && row[j].lo != row[j].lo)) &&
                    ((rc[j].hi == row[j].hi) || (rc[j].hi != rc[j].hi && row[j].hi != row[j].hi)) &&
                    nmo_mag_same(rc[j].mag, row[j].mag);
        if (!csame) {
            (*cmism)++;
            if (*cmism < 5)
                cr_log_error("mul3_row ftz=%d j=%ld x=%a w=%a: fast [%a,%a], certified [%a,%a]", ftz, (long)j, x[j],
                             w[j], row[j].lo, row[j].hi, rc[j].lo, rc[j].hi);
        }
    }
    nmo_fctx_clear(&fc);
    nmo_cctx_clear(&cc);
}

Test(fastpaths, mul3_row_equals_mul3, .timeout = 600)
{
    long mism = 0, cmism = 0, unc = 0, all = 0;
    double rs[][2] = {{0x1.6a09e6p-1, 0x1.6a09eap-1}, {1.0, 1.0}, {0x1.8p3, 0x1.800002p3}, {0x1p-20, 0x1.000002p-20},
                      {-0x1.000002p-2, -0x1p-2}, {-1.0, 2.0}, {0x1p100, 0x1p100}};
    for (int pw = 0; pw < 3; pw++)
        for (int ftz = 0; ftz < 2; ftz++)
            for (size_t i = 0; i < sizeof rs / sizeof rs[0]; i++) {
                g_pow2_rows = pw;
                mul3_row_case(ftz, rs[i][0], rs[i][1], &mism, &cmism, &unc, &all);
            }
    printf("mul3_row: %ld elements, %ld differ from mul3, %ld fast != certified, %ld UNC; zero products without "
           "ftz: %ld decided, %ld UNC\n", all, mism, cmism, unc, g_zero_dec, g_zero_unc);
    cr_expect_eq(mism, 0);
    cr_expect_eq(cmism, 0);
    cr_expect(unc < all / 4);
    cr_expect_gt(g_zero_dec, 1000);
    cr_expect_eq(g_zero_unc, 0, "zero products left undecided: %ld", g_zero_unc);
}

static int same_enc(const nmo_fenc *a, const nmo_fenc *b)
{
    return ((a->lo == b->lo) || (a->lo != a->lo && b->lo != b->lo)) &&
           ((a->hi == b->hi) || (a->hi != a->hi && b->hi != b->hi)) && a->flags == b->flags &&
           nmo_mag_same(a->mag, b->mag);
}

/* values and error scale equal (the flags may differ: UNC is the fast engine's alone) */
static int same_vals(const nmo_fenc *a, const nmo_fenc *b)
{
    return ((a->lo == b->lo && a->hi == b->hi) || (a->lo != a->lo && b->lo != b->lo)) &&
           nmo_mag_same(a->mag, b->mag);
}

/* 3. softmax rows: nmo_fenc_exp_sub_row and nmo_fenc_divmul_row equal their primitives
 * element by element (values and flags) and the certified rows wherever not UNC; rows
 * with NaN, infinities, the max itself (d = 0), deep underflow, subnormal results; plans:
 * default (cuda expf, 2 ulp), fn=cr (n = 0: the kernel is not used), ftz. */
Test(fastpaths, softmax_rows_equal_primitives, .timeout = 600)
{
    const char *plans[3] = {NULL, "in=bf16 out=bf16 compute=fp32 acc=fp32 fn=cr", "in=bf16 out=bf16 compute=fp32 acc=fp32 subnormals=ftz"};
    long mism = 0, cmism = 0, unc = 0, all = 0;
    for (int pi = 0; pi < 3; pi++)
        for (int rowk = 0; rowk < 4; rowk++) {
            nmo_plan p;
            nmo_err err;
            nmo_plan_default(&p, NMO_BF16);
            if (plans[pi]) cr_assert_eq(nmo_plan_parse(&p, plans[pi], &err), NMO_OK, "%s", err.msg);
            nmo_fctx fc;
            nmo_cctx cc;
            nmo_fctx_init(&fc, &p, NULL);
            nmo_cctx_init(&cc, &p, NULL);
            enum { N = 700 };
            double x[N];
            for (int64_t j = 0; j < N; j++) {
                double g = nmo_gen_normal(21 + (uint64_t)rowk, 4, (uint64_t)j) * (rowk == 2 ? 40 : 3);
                x[j] = nmo_fmt_round(NMO_BF16, g, NMO_RNE, 0);
                if (rowk == 1 && j % 50 == 7) x[j] = j % 100 == 7 ? NAN : -INFINITY;
                if (rowk == 3 && j % 9 == 4) x[j] = -0x1p-130;
            }
            double mx = -INFINITY;
            for (int64_t j = 0; j < N; j++) mx = x[j] > mx ? x[j] : mx;
            nmo_fenc m = {mx, mx, 0, fabs(mx)}, ef[N], ee1[N], yf[N];
            nmo_fenc_exp_sub_row(&fc, ef, x, &m, N);
            nmo_cenc *ce = malloc(N * sizeof(nmo_cenc));
            nmo_cenc cm, cs, crcp, cone;
            for (int j = 0; j < N; j++) nmo_cenc_init(&cc, &ce[j]);
            nmo_cenc_init(&cc, &cm), nmo_cenc_init(&cc, &cs), nmo_cenc_init(&cc, &crcp), nmo_cenc_init(&cc, &cone);
            nmo_cenc_set_d(&cc, &cm, mx);
            nmo_cenc_exp_sub_row(&cc, ce, x, &cm, N);
            for (int64_t j = 0; j < N; j++) {
                nmo_fenc xe, d;
                nmo_fenc_set_d(&fc, &xe, x[j]);
                nmo_fenc_sub(&fc, &d, &xe, &m);
                nmo_fenc_exp(&fc, &ee1[j], &d);
                all++;
                if (!same_enc(&ee1[j], &ef[j])) {
                    mism++;
                    if (mism < 5)
                        cr_log_error("exp_sub_row plan %d j=%ld x=%a: row [%a,%a] %u, exp [%a,%a] %u", pi, (long)j, x[j],
                                     ef[j].lo, ef[j].hi, ef[j].flags, ee1[j].lo, ee1[j].hi, ee1[j].flags);
                }
                nmo_fenc ex;
                nmo_cenc_export(&cc, &ex, &ce[j]);
                if (ef[j].flags & NMO_EF_UNC) unc++;
                else if (!same_vals(&ex, &ef[j])) cmism++;
            }
            /* the division row, with a sum taken over the (fast) exponentials */
            nmo_fenc s, one, rcp;
            nmo_fenc_sum(&fc, &s, ef, N);
            nmo_fenc_const(&fc, &one, 1.0);
            nmo_fenc_div(&fc, &rcp, &one, &s);
            nmo_fenc_divmul_row(&fc, yf, ef, &s, &rcp, N);
            nmo_cenc_sum(&cc, &cs, ce, N);
            nmo_cenc_const(&cc, &cone, 1.0);
            nmo_cenc_div(&cc, &crcp, &cone, &cs);
            nmo_fenc yc[N];
            nmo_cenc_divmul_row(&cc, yc, ce, &cs, &crcp, N);
            for (int64_t j = 0; j < N; j++) {
                nmo_fenc y1, y2, y;
                nmo_fenc_div(&fc, &y1, &ef[j], &s);
                nmo_fenc_mul(&fc, &y2, &ef[j], &rcp);
                nmo_fenc_hull(&fc, &y, &y1, &y2);
                all++;
                if (!same_enc(&y, &yf[j])) {
                    mism++;
                    if (mism < 5)
                        cr_log_error("divmul_row plan %d j=%ld: row [%a,%a] %u, primitives [%a,%a] %u", pi, (long)j,
                                     yf[j].lo, yf[j].hi, yf[j].flags, y.lo, y.hi, y.flags);
                }
                if (yf[j].flags & NMO_EF_UNC) unc++;
                else if (!same_vals(&yc[j], &yf[j])) {
                    cmism++;
                    if (cmism < 5)
                        cr_log_error("divmul_row plan %d j=%ld: fast [%a,%a], certified [%a,%a]", pi, (long)j, yf[j].lo,
                                     yf[j].hi, yc[j].lo, yc[j].hi);
                }
            }
            for (int j = 0; j < N; j++) nmo_cenc_clear(&cc, &ce[j]);
            free(ce);
            nmo_cenc_clear(&cc, &cm), nmo_cenc_clear(&cc, &cs), nmo_cenc_clear(&cc, &crcp), nmo_cenc_clear(&cc, &cone);
            nmo_fctx_clear(&fc);
            nmo_cctx_clear(&cc);
        }
    printf("softmax rows: %ld elements, %ld differ from the primitives, %ld fast != certified, %ld UNC\n", all, mism,
           cmism, unc);
    cr_expect_eq(mism, 0);
    cr_expect_eq(cmism, 0);
    cr_expect(unc < all / 4);
}

/* 4. matmul rows: nmo_fenc_gemm_row equals nmo_fenc_gemm_elem element by element (values
 * and flags) and the certified row wherever not UNC: A with and without zeros, a NaN and
 * an inf in B's last column, the any plan (vectorized kernel) and an mma plan (the
 * elements themselves). */
Test(fastpaths, gemm_row_equals_gemm_elem, .timeout = 600)
{
    long mism = 0, cmism = 0, unc = 0, all = 0;
    for (int zc = 0; zc < 2; zc++)
        for (int pl = 0; pl < 2; pl++) {
            int64_t M = 5, N = 300, K = 200;
            int64_t da[2] = {M, K}, db[2] = {K, N};
            nmo_tensor A, B;
            nmo_err err;
            nmo_tensor_init(&A, NMO_BF16, 2, da, &err);
            nmo_tensor_init(&B, NMO_BF16, 2, db, &err);
            nmo_tensor_alloc(&A, &err);
            nmo_tensor_alloc(&B, &err);
            nmo_gen_fill(&A, NMO_FAM_GAUSSIAN, (uint64_t)(zc + 3), 0, K);
            nmo_gen_fill(&B, NMO_FAM_NEAR_DEGENERATE, (uint64_t)(zc + 3), 1, N);
            if (zc)
                for (int64_t e = 0; e < M * K; e++)
                    if (nmo_tensor_get(&A, e) < 0) nmo_tensor_set(&A, e, 0.0);
            nmo_tensor_set(&B, 5 * N + N - 1, NAN);
            nmo_tensor_set(&B, 7 * N + N - 2, INFINITY);
            nmo_plan p;
            nmo_plan_default(&p, NMO_BF16);
            if (pl) cr_assert_eq(nmo_plan_parse(&p, "in=bf16 out=bf16 compute=fp32 acc=fp32 sum=mma:16", &err), NMO_OK);
            nmo_fctx fc;
            nmo_cctx cc;
            nmo_fctx_init(&fc, &p, NULL);
            nmo_cctx_init(&cc, &p, NULL);
            nmo_fenc *row = malloc((size_t)N * sizeof(nmo_fenc)), *crow = malloc((size_t)N * sizeof(nmo_fenc));
            for (int64_t i = 0; i < M; i++) {
                nmo_fenc_gemm_row(&fc, row, &A, &B, i);
                nmo_cenc_gemm_row(&cc, crow, &A, &B, i);
                for (int64_t j = 0; j < N; j++) {
                    nmo_fenc ef;
                    nmo_fenc_gemm_elem(&fc, &ef, &A, &B, i, j);
                    all++;
                    if (!same_enc(&ef, &row[j])) {
                        mism++;
                        if (mism < 5)
                            cr_log_error("gemm_row zeros=%d plan=%d (%ld,%ld): row [%a,%a] %u, elem [%a,%a] %u", zc, pl,
                                         (long)i, (long)j, row[j].lo, row[j].hi, row[j].flags, ef.lo, ef.hi, ef.flags);
                    }
                    if (row[j].flags & NMO_EF_UNC) unc++;
                    else if (!same_vals(&crow[j], &row[j]))
                        cmism++;
                }
            }
            free(row), free(crow);
            nmo_fctx_clear(&fc);
            nmo_cctx_clear(&cc);
            nmo_tensor_free(&A);
            nmo_tensor_free(&B);
        }
    printf("gemm_row: %ld elements, %ld differ from gemm_elem, %ld fast != certified, %ld UNC\n", all, mism, cmism, unc);
    cr_expect_eq(mism, 0);
    cr_expect_eq(cmism, 0);
    cr_expect(unc < all / 10);
}

static uint64_t x64_state = 0x9e3779b97f4a7c15ull;
static uint64_t x64(void)
{
    x64_state ^= x64_state << 13, x64_state ^= x64_state >> 7, x64_state ^= x64_state << 17;
    return x64_state;
}

/* binary64 sums of t[0..n) in index order (o = 0), reversed (1), a shuffle (2), a pairwise
 * tree (3); mag: of |t| */
static double sum_order(const double *t, int n, int o, int mag, int *perm)
{
    for (int i = 0; i < n; i++) perm[i] = o == 1 ? n - 1 - i : i;
    if (o == 2)
        for (int i = n - 1; i > 0; i--) {
            int j = (int)(x64() % (uint64_t)(i + 1)), k = perm[i];
            perm[i] = perm[j], perm[j] = k;
        }
    double v[128];
    for (int i = 0; i < n; i++) v[i] = mag ? fabs(t[perm[i]]) : t[perm[i]];
    if (o == 3) {
        for (int w = 1; w < n; w *= 2)
            for (int i = 0; i + w < n; i += 2 * w) v[i] += v[i + w];
        return v[0];
    }
    double s = 0;
    for (int i = 0; i < n; i++) s += v[i];
    return s;
}

Test(fastpaths, sum_exact64_any_order, .timeout = 600)
{
    long held = 0, not_held = 0, above = 0, above_inexact = 0, bad = 0;
    mpfr_t S, M, tv[128];
    mpfr_ptr tp[128];
    mpfr_init2(S, 4096), mpfr_init2(M, 4096);
    for (int i = 0; i < 128; i++) mpfr_init2(tv[i], 64), tp[i] = tv[i];
    int perm[128];
    for (int trial = 0; trial < 40000; trial++) {
        double t[128];
        int n;
        if (trial % 4 == 3) { /* near the bound: a 1 and large integers near 2^52 (Q = 1) */
            n = 2 + (int)(x64() % 4);
            t[0] = 1;
            for (int i = 1; i < n; i++) t[i] = (double)((1ull << 51) + (x64() % (1ull << 51)));
        } else { /* terms of 1-24 significant bits over an exponent spread of 0-70 */
            n = 2 + (int)(x64() % 100);
            int bits = 1 + (int)(x64() % 24), spread = (int)(x64() % 71), base = (int)(x64() % 200) - 100;
            for (int i = 0; i < n; i++) {
                double m = (double)((1ull << (bits - 1)) + (x64() % (1ull << (bits - 1) | 1)));
                t[i] = ldexp(x64() & 1 ? -m : m, base + (int)(x64() % (uint64_t)(spread + 1)) - bits);
                if (x64() % 16 == 0) t[i] = 0;
            }
        }
        double Q = INFINITY, A = 0;
        for (int i = 0; i < n; i++) {
            if (t[i] != 0) Q = fmin(Q, nmo_fe_lowbit(t[i]));
            A += fabs(t[i]);
        }
        for (int i = 0; i < n; i++) mpfr_set_d(tv[i], t[i], MPFR_RNDN);
        mpfr_sum(S, tp, (unsigned long)n, MPFR_RNDN); /* exact: 4096 bits cover every spread here */
        for (int i = 0; i < n; i++) mpfr_abs(tv[i], tv[i], MPFR_RNDN);
        mpfr_sum(M, tp, (unsigned long)n, MPFR_RNDN);
        int exact = 1;
        for (int o = 0; o < 4; o++)
            for (int rep = 0; rep < (o == 2 ? 8 : 1); rep++)
                exact &= mpfr_cmp_d(S, sum_order(t, n, o, 0, perm)) == 0 && mpfr_cmp_d(M, sum_order(t, n, o, 1, perm)) == 0;
        if (nmo_fe_sum_exact64(Q, A)) {
            held++;
            bad += !exact;
        } else {
            not_held++;
            if (Q < INFINITY && A < ldexp(Q, 54)) above++, above_inexact += !exact;
        }
    }
    printf("sum_exact64: %ld sets held (%ld of them not exact in some order), %ld not; %ld just above the bound, "
           "%ld of them inexact in some order\n", held, bad, not_held, above, above_inexact);
    mpfr_clears(S, M, (mpfr_ptr)0);
    for (int i = 0; i < 128; i++) mpfr_clear(tv[i]);
    cr_expect_eq(bad, 0);
    cr_expect_gt(held, 1000);
    cr_expect_gt(above_inexact, 0);
}

